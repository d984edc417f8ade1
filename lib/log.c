/*
 * The partition log: a sorted array of segments, appended at the end, read by
 * binary search, cut from the front by retention.  See log.h for the model;
 * each segment and the work on its file is segment.h's.
 *
 * Choices made here:
 *  - The array holds one reference on each segment; every slice and every
 *    flush in flight holds one more.  The descriptor is closed with the
 *    last reference, or earlier by the descriptor cache (fdcache.h) while
 *    nobody pins it.
 *  - One mutex per log, held only for bookkeeping and short system calls
 *    (a write into the page cache, an open); never across fsync, never
 *    across the boundary-check read of a read.
 *  - A zero-length segment followed by one of the same base (a stray empty
 *    file) is kept in the array: reads never land in it, and retention
 *    deletes it with its neighbours.
 *  - A .kafka last segment is appended to like a .klog one (same bytes);
 *    segments klog creates are always .klog.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/clock.h"
#include "klog/error.h"
#include "klog/fdcache.h"
#include "klog/log.h"
#include "klog/names.h"
#include "klog/segment.h"

#define DEFAULT_SEGMENT_BYTES ((int64_t)1 << 30)

/* Directories a flush must fsync because entries were created in them. */
enum { DIRTY_PARTITION = 1, DIRTY_DATA = 2 };

struct klog_log {
	pthread_mutex_t mu;
	klog_fdcache_t *cache;  /* referenced; shared with the store's logs */
	char *data_dir;
	char *dir;              /* <data-dir>/<topic>-<partition> */
	char *topic;
	int partition;
	int64_t segment_bytes;
	klog_segment_t **segs;      /* sorted by base; the last one is active */
	size_t nsegs, cap;
	int64_t end;            /* written end */
	int64_t flushed_end;
	int64_t bytes;          /* sum of segment sizes */
	uint64_t unflushed;     /* messages appended since the last flush */
	int64_t last_flush_ms;  /* CLOCK_MONOTONIC */
	int64_t recovered;      /* bytes cut at open */
	char salvaged[PATH_MAX];  /* where they were kept, or "" */
	int dirty;              /* DIRTY_* */
	uint64_t cuts;          /* truncations and resets: a flush begun
	                           before one must not move flushed_end */
};

/* A segment as copied out under the lock, with a reference held. */
struct snap {
	klog_segment_t *seg;
	int64_t base, size;
	int kafka;
};

/* ---- small helpers ---- */

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int
seg_path(const klog_log_t *log, int64_t base, int kafka, char *buf,
    size_t len)
{
	return klog_names_segment_path(log->dir, base, kafka, buf, len);
}

static klog_segment_t *
active(const klog_log_t *log)
{
	return log->segs[log->nsegs - 1];
}

static int
reserve_segs(klog_log_t *log, size_t extra)
{
	size_t cap;
	klog_segment_t **p;

	if (log->nsegs + extra <= log->cap)
		return 0;
	cap = log->cap ? log->cap * 2 : 16;
	while (cap < log->nsegs + extra)
		cap *= 2;
	if ((p = realloc(log->segs, cap * sizeof(*p))) == NULL)
		return -KLOG_ENOMEM;
	log->segs = p;
	log->cap = cap;
	return 0;
}

/* Index of the last segment whose base <= offset; offset >= the first. */
static size_t
seg_find(const klog_log_t *log, int64_t offset)
{
	size_t lo = 0, hi = log->nsegs, mid;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (log->segs[mid]->base <= offset)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* ---- open: load, check, recover ---- */

void
klog_log_config_default(klog_log_config_t *cfg)
{
	cfg->segment_bytes = DEFAULT_SEGMENT_BYTES;
	cfg->recover = 0;
	cfg->fdcache = NULL;
}

/*
 * One readdir and one stat per segment (klog_names_segments()): nothing is
 * read or opened.  A segment klog-retain removed between the listing and
 * its stat is left out: see check_contiguous().
 */
static int
load_segments(klog_log_t *log, klog_err_t *err)
{
	klog_names_seg_t *found = NULL;
	klog_segment_t *s;
	size_t n = 0;
	int dfd, r;

	dfd = open(log->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return klog_err_sys(err, "open", log->dir);
	r = klog_names_segments(dfd, log->dir, 0, &found, &n, err);
	close(dfd);
	if (r < 0)
		return r;
	if (reserve_segs(log, n) < 0)
		r = -KLOG_ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		if ((s = klog_segment_new(log->cache, found[i].info.base,
		    found[i].info.size, found[i].kafka)) == NULL)
			r = -KLOG_ENOMEM;
		else
			log->segs[log->nsegs++] = s;
	}
	free(found);
	if (r < 0)
		return klog_err_set(err, r, "%s: out of memory", log->dir);
	return 0;
}

static int
seg_gone(const klog_log_t *log, const klog_segment_t *s)
{
	char path[PATH_MAX];
	struct stat st;

	seg_path(log, s->base, s->kafka, path, sizeof(path));
	return lstat(path, &st) < 0 && errno == ENOENT;
}

/* Drop segs[0..k) at open. */
static void
drop_loaded(klog_log_t *log, size_t k)
{
	for (size_t i = 0; i < k; i++)
		klog_segment_unref(log->segs[i]);
	memmove(log->segs, log->segs + k,
	    (log->nsegs - k) * sizeof(*log->segs));
	log->nsegs -= k;
}

/*
 * A gap may be klog-retain at work while the directory was listed: it
 * removes segments oldest first, so if one in the gap went, the segment
 * before the gap went before it, and so did all older ones (listed or
 * not, stat'ed or not).  Then the partition just starts after the gap, as
 * after klog_log_rescan().  If the segment before the gap is still there,
 * the gap is real.
 */
static int
check_contiguous(klog_log_t *log, klog_err_t *err)
{
	char path[PATH_MAX];
	klog_segment_t *prev, *next;

	for (size_t i = 1; i < log->nsegs; i++) {
		prev = log->segs[i - 1];
		next = log->segs[i];
		if (prev->base + prev->size == next->base)
			continue;
		if (seg_gone(log, prev)) {
			drop_loaded(log, i);
			i = 0;
			continue;
		}
		seg_path(log, next->base, next->kafka, path, sizeof(path));
		return klog_err_set(err, -KLOG_ECORRUPT,
		    "%s: %s: the previous segment ends at %lld", path,
		    prev->base + prev->size < next->base ? "gap" : "overlap",
		    (long long)(prev->base + prev->size));
	}
	return 0;
}

static int
create_first(klog_log_t *log, klog_err_t *err)
{
	klog_segment_t *s;
	int r;

	if (reserve_segs(log, 1) < 0)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if ((r = klog_segment_create(log->cache, log->dir, 0, &s, err)) < 0)
		return r;
	log->segs[log->nsegs++] = s;
	log->dirty |= DIRTY_PARTITION;
	return 0;
}

static int
open_active(klog_log_t *log, int recover, klog_err_t *err)
{
	klog_segment_t *s = active(log);
	char path[PATH_MAX];

	if (s->ent.fd < 0) {
		seg_path(log, s->base, s->kafka, path, sizeof(path));
		s->ent.fd = klog_segment_open(path, O_RDWR);
		if (s->ent.fd < 0)
			return klog_err_sys(err, "open", path);
	}
	if (!recover)
		return 0;
	return klog_segment_recover(s, log->dir, &log->recovered,
	    log->salvaged, sizeof(log->salvaged), err);
}

/* mkdir the partition directory; note it for the next flush if new. */
static int
make_dir(klog_log_t *log, klog_err_t *err)
{
	if (mkdir(log->dir, 0755) == 0) {
		log->dirty |= DIRTY_DATA;
		return 0;
	}
	if (errno != EEXIST)
		return klog_err_sys(err, "mkdir", log->dir);
	return 0;
}

static int
log_init(klog_log_t *log, const char *data_dir, const char *topic,
    int partition, const klog_log_config_t *cfg, klog_err_t *err)
{
	char dir[PATH_MAX];
	int r;

	if ((r = klog_topic_validate(topic, err)) < 0)
		return r;
	if (partition < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "partition %d: negative", partition);
	if (cfg->segment_bytes < 1)
		return klog_err_set(err, -KLOG_EINVAL,
		    "segment size %lld: not positive",
		    (long long)cfg->segment_bytes);
	/* Room left for "/<segment name>" and then some. */
	if (klog_names_dir_path(data_dir, topic, partition, dir,
	    sizeof(dir) - KLOG_NAMES_SEGMENT_MAX - 4) < 0)
		return klog_err_set(err, -KLOG_ETOOBIG, "%s: path too long",
		    data_dir);
	log->partition = partition;
	log->segment_bytes = cfg->segment_bytes;
	log->data_dir = strdup(data_dir);
	log->dir = strdup(dir);
	log->topic = strdup(topic);
	if (log->data_dir == NULL || log->dir == NULL || log->topic == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	return 0;
}

int
klog_log_open(const char *data_dir, const char *topic, int partition,
    const klog_log_config_t *cfg, klog_log_t **out, klog_err_t *err)
{
	klog_log_config_t def;
	klog_log_t *log;
	int r;

	*out = NULL;
	if (cfg == NULL) {
		klog_log_config_default(&def);
		cfg = &def;
	}
	if ((log = calloc(1, sizeof(*log))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	pthread_mutex_init(&log->mu, NULL);
	if (cfg->fdcache != NULL) {
		log->cache = cfg->fdcache;
		klog_fdcache_ref(log->cache);
	} else if (klog_fdcache_new(0, &log->cache) < 0) {
		pthread_mutex_destroy(&log->mu);
		free(log);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	if ((r = log_init(log, data_dir, topic, partition, cfg, err)) < 0 ||
	    (r = make_dir(log, err)) < 0 ||
	    (r = load_segments(log, err)) < 0)
		goto fail;
	if ((r = check_contiguous(log, err)) < 0)
		goto fail;
	if (log->nsegs == 0 && (r = create_first(log, err)) < 0)
		goto fail;
	if ((r = open_active(log, cfg->recover, err)) < 0)
		goto fail;
	for (size_t i = 0; i < log->nsegs; i++)
		log->bytes += log->segs[i]->size;
	/* Data found on disk is taken as flushed, as in Kafka 0.7. */
	log->end = log->flushed_end = active(log)->base + active(log)->size;
	log->last_flush_ms = klog_clock_mono_ms();
	*out = log;
	return 0;
fail:
	klog_log_close(log);
	return r;
}

void
klog_log_close(klog_log_t *log)
{
	if (log == NULL)
		return;
	for (size_t i = 0; i < log->nsegs; i++)
		klog_segment_unref(log->segs[i]);
	klog_fdcache_unref(log->cache);
	free(log->segs);
	free(log->data_dir);
	free(log->dir);
	free(log->topic);
	pthread_mutex_destroy(&log->mu);
	free(log);
}

const char *
klog_log_dir(const klog_log_t *log)
{
	return log->dir;
}

const char *
klog_log_topic(const klog_log_t *log)
{
	return log->topic;
}

int
klog_log_partition(const klog_log_t *log)
{
	return log->partition;
}

int64_t
klog_log_recovered_bytes(const klog_log_t *log)
{
	return log->recovered;
}

const char *
klog_log_salvage_path(const klog_log_t *log)
{
	return log->salvaged;
}

/* ---- append and flush ---- */

/* Start a new active segment at the written end.  Under the lock. */
static int
roll(klog_log_t *log, klog_err_t *err)
{
	char path[PATH_MAX];
	klog_segment_t *s;
	int r;

	if (seg_path(log, log->end, 0, path, sizeof(path)) < 0)
		return klog_err_set(err, -KLOG_ETOOBIG, "%s: path too long",
		    log->dir);
	if (reserve_segs(log, 1) < 0)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if ((r = klog_segment_create(log->cache, log->dir, log->end, &s,
	    err)) < 0)
		return r;
	/* Sealed with nothing left to sync: no flush will hand it over. */
	if (active(log)->base + active(log)->size <= log->flushed_end)
		klog_fdcache_adopt(log->cache, &active(log)->ent);
	log->segs[log->nsegs++] = s;
	log->dirty |= DIRTY_PARTITION;
	return 0;
}

/* How many of iov[i..n) go into the active segment now, and their bytes:
 * at least one, then as many as keep it within segment_bytes. */
static size_t
fit(const klog_log_t *log, const klog_segment_t *s, const struct iovec *iov,
    size_t i, size_t n, size_t *bytes)
{
	uint64_t size = (uint64_t)s->size + iov[i].iov_len;
	size_t j = i + 1;

	while (j < n && size + iov[j].iov_len <= (uint64_t)log->segment_bytes)
		size += iov[j++].iov_len;
	*bytes = (size_t)(size - (uint64_t)s->size);
	return j;
}

int
klog_log_appendv(klog_log_t *log, const struct iovec *iov, size_t n,
    uint32_t nmsgs, int64_t *first_offset, size_t *appended, klog_err_t *err)
{
	klog_segment_t *s;
	size_t i = 0, j, bytes, kept, total = 0;
	int r = 0;

	for (size_t k = 0; k < n; k++)
		total += iov[k].iov_len;
	pthread_mutex_lock(&log->mu);
	if (first_offset != NULL)
		*first_offset = log->end;
	if (total > (uint64_t)(INT64_MAX - log->end)) {
		r = klog_err_set(err, -KLOG_ETOOBIG, "%s: log full", log->dir);
		goto out;
	}
	while (i < n) {
		s = active(log);
		if (iov[i].iov_len > 0 && s->size > 0 && (uint64_t)s->size +
		    iov[i].iov_len > (uint64_t)log->segment_bytes) {
			if ((r = roll(log, err)) < 0)
				goto out;
			s = active(log);
		}
		j = fit(log, s, iov, i, n, &bytes);
		/* A write starts at an entry: a mark, now and then. */
		klog_segment_mark(s, s->size);
		r = klog_segment_write(s, log->dir, iov + i, j - i, bytes,
		    &kept, &bytes, err);
		s->size += (int64_t)bytes;
		log->end += (int64_t)bytes;
		log->bytes += (int64_t)bytes;
		i += kept;
		if (r < 0)
			goto out;
	}
	log->unflushed += nmsgs;
out:
	if (appended != NULL)
		*appended = i;
	pthread_mutex_unlock(&log->mu);
	return r;
}

int
klog_log_append(klog_log_t *log, const void *set, size_t len,
    uint32_t nmsgs, int64_t *first_offset, klog_err_t *err)
{
	struct iovec v = { .iov_base = (void *)set, .iov_len = len };

	return klog_log_appendv(log, &v, 1, nmsgs, first_offset, NULL, err);
}

int
klog_log_sync_dir(const char *path, klog_err_t *err)
{
	int fd, r = 0;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return klog_err_sys(err, "open", path);
	if (fsync(fd) < 0)
		r = klog_err_sys(err, "fsync", path);
	close(fd);
	return r;
}

/* Segments holding bytes past the flushed end, referenced.  Under the
 * lock. */
static int
unflushed_segs(klog_log_t *log, klog_segment_t ***out, size_t *n)
{
	size_t i = log->nsegs;

	while (i > 0 && log->segs[i - 1]->base + log->segs[i - 1]->size >
	    log->flushed_end)
		i--;
	*n = log->nsegs - i;
	*out = NULL;
	if (*n == 0)
		return 0;
	if ((*out = malloc(*n * sizeof(**out))) == NULL)
		return -KLOG_ENOMEM;
	for (size_t j = 0; j < *n; j++) {
		(*out)[j] = log->segs[i + j];
		klog_segment_ref((*out)[j]);
		/* Never closed by the cache (unsynced, or active): no path. */
		klog_fdcache_pin(log->cache, &(*out)[j]->ent, NULL);
	}
	return 0;
}

static int
sync_segs(klog_log_t *log, klog_segment_t **segs, size_t n, klog_err_t *err)
{
	int r;

	/* Only the active segment must still have a name: retention may
	 * delete a sealed one before it is synced. */
	for (size_t i = 0; i < n; i++)
		if ((r = klog_segment_sync(segs[i], log->dir, i + 1 == n,
		    err)) < 0)
			return r;
	return 0;
}

/* Sealed segments now synced to their end go to the descriptor cache.
 * Under the lock. */
static void
adopt_synced(klog_log_t *log, klog_segment_t **segs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (segs[i] != active(log) &&
		    segs[i]->base + segs[i]->size <= log->flushed_end)
			klog_fdcache_adopt(log->cache, &segs[i]->ent);
}

/*
 * What to sync is captured under the lock (the written end, the segments
 * past the flushed end, with references so a roll or a retention cannot
 * close them); the fsyncs run without it; the flushed end moves after.
 */
int
klog_log_flush(klog_log_t *log, klog_err_t *err)
{
	klog_segment_t **segs;
	size_t n = 0;
	uint64_t msgs, cuts;
	int64_t end;
	int dirty, r;

	pthread_mutex_lock(&log->mu);
	cuts = log->cuts;
	end = log->end;
	msgs = log->unflushed;
	dirty = log->dirty;
	log->dirty = 0;
	r = unflushed_segs(log, &segs, &n);
	pthread_mutex_unlock(&log->mu);
	if (r < 0) {
		r = klog_err_set(err, r, "%s: out of memory", log->dir);
		goto out;
	}
	if ((r = sync_segs(log, segs, n, err)) < 0)
		goto out;
	if ((dirty & DIRTY_PARTITION) && (r = klog_log_sync_dir(log->dir, err)) < 0)
		goto out;
	if ((dirty & DIRTY_DATA) && (r = klog_log_sync_dir(log->data_dir, err)) < 0)
		goto out;
out:
	pthread_mutex_lock(&log->mu);
	/* Unlinked by a cut (a reset), or sealed by a roll since and then
	 * retained away: dropped on purpose, not behind the broker's back. */
	if (r == -KLOG_ENOENT && (cuts != log->cuts ||
	    (n > 0 && segs[n - 1] != active(log))))
		r = 0;
	if (r == 0 && cuts == log->cuts) {
		if (end > log->flushed_end)
			log->flushed_end = end;
		log->unflushed -= msgs < log->unflushed ? msgs : log->unflushed;
		log->last_flush_ms = klog_clock_mono_ms();
		adopt_synced(log, segs, n);
	} else if (r < 0) {
		log->dirty |= dirty;
	}
	pthread_mutex_unlock(&log->mu);
	for (size_t i = 0; i < n; i++) {
		klog_fdcache_unpin(log->cache, &segs[i]->ent);
		klog_segment_unref(segs[i]);
	}
	free(segs);
	return r;
}

/* ---- truncation (a follower's) ---- */

/* Drop segs[k..) from the array, deleting the files of those after
 * keep_file (the index whose file stays, or nsegs for none).  Under the
 * lock. */
static int
drop_tail(klog_log_t *log, size_t k, size_t keep_file, klog_err_t *err)
{
	char path[PATH_MAX];
	int r = 0;

	for (size_t i = k; i < log->nsegs; i++) {
		klog_segment_t *s = log->segs[i];

		log->bytes -= s->size;
		seg_path(log, s->base, s->kafka, path, sizeof(path));
		if (i != keep_file && unlink(path) < 0 && errno != ENOENT &&
		    r == 0)
			r = klog_err_sys(err, "unlink", path);
		klog_segment_unref(s);
	}
	log->nsegs = k;
	log->dirty |= DIRTY_PARTITION;
	log->cuts++;
	return r;
}

/*
 * The fsync of a truncation runs under the lock: it is rare (a follower
 * after a leader change), and the flusher must not sync the segment
 * meanwhile.
 */
int
klog_log_truncate(klog_log_t *log, int64_t offset, int64_t *landed,
    klog_err_t *err)
{
	char path[PATH_MAX];
	klog_segment_t *old, *n = NULL;
	int64_t rel;
	size_t k;
	int fd, r;

	pthread_mutex_lock(&log->mu);
	*landed = log->end;
	if (offset >= log->end) {
		pthread_mutex_unlock(&log->mu);
		return 0;
	}
	if (offset < log->segs[0]->base) {
		pthread_mutex_unlock(&log->mu);
		return klog_err_set(err, -KLOG_ERANGE, "%s: offset %lld is "
		    "before the log start", log->dir, (long long)offset);
	}
	k = seg_find(log, offset);
	old = log->segs[k];
	seg_path(log, old->base, old->kafka, path, sizeof(path));
	if ((fd = klog_segment_open(path, O_RDWR)) < 0) {
		r = klog_err_sys(err, "open", path);
		goto out;
	}
	if ((n = klog_segment_new(log->cache, old->base, old->size,
	    old->kafka)) == NULL) {
		close(fd);
		r = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto out;
	}
	n->ent.fd = fd;
	if ((r = klog_segment_truncate(n, log->dir, offset - old->base, &rel,
	    err)) < 0) {
		klog_segment_unref(n);
		goto out;
	}
	r = drop_tail(log, k, k, err);
	log->segs[log->nsegs++] = n;
	log->bytes += n->size;
	log->end = n->base + n->size;
	if (log->flushed_end > log->end)
		log->flushed_end = log->end;
	/* Bytes kept below the cut but past the flushed end still want a
	 * flush: keep them counted (an overcount only flushes sooner). */
	if (log->flushed_end == log->end)
		log->unflushed = 0;
	*landed = log->end;
out:
	pthread_mutex_unlock(&log->mu);
	if (r == 0)
		r = klog_log_sync_dir(log->dir, err);
	return r;
}

int
klog_log_reset(klog_log_t *log, int64_t base, klog_err_t *err)
{
	char path[PATH_MAX];
	klog_segment_t *s;
	int r = 0;

	pthread_mutex_lock(&log->mu);
	/* The files go first, so that the new segment may take a name of
	 * theirs; the objects only once it exists, so that a failure leaves
	 * the log as it was in memory (and a later reset can try again). */
	for (size_t i = 0; i < log->nsegs; i++) {
		seg_path(log, log->segs[i]->base, log->segs[i]->kafka, path,
		    sizeof(path));
		if (unlink(path) < 0 && errno != ENOENT && r == 0)
			r = klog_err_sys(err, "unlink", path);
	}
	if (r == 0 && (r = klog_segment_create(log->cache, log->dir, base, &s,
	    err)) == 0) {
		for (size_t i = 0; i < log->nsegs; i++)
			klog_segment_unref(log->segs[i]);
		log->segs[0] = s;
		log->nsegs = 1;
		log->dirty |= DIRTY_PARTITION;
		log->cuts++;
		log->bytes = 0;
		log->end = log->flushed_end = base;
		log->unflushed = 0;
	}
	pthread_mutex_unlock(&log->mu);
	if (r == 0)
		r = klog_log_sync_dir(log->dir, err);
	return r;
}

/* ---- getters ---- */

#define LOCKED_GET(type, expr)                                  \
	do {                                                    \
		type v_;                                        \
		pthread_mutex_lock(&log->mu);                   \
		v_ = (expr);                                    \
		pthread_mutex_unlock(&log->mu);                 \
		return v_;                                      \
	} while (0)

int64_t
klog_log_start(klog_log_t *log)
{
	LOCKED_GET(int64_t, log->segs[0]->base);
}

int64_t
klog_log_end(klog_log_t *log)
{
	LOCKED_GET(int64_t, log->end);
}

int64_t
klog_log_flushed_end(klog_log_t *log)
{
	LOCKED_GET(int64_t, log->flushed_end);
}

uint64_t
klog_log_unflushed_messages(klog_log_t *log)
{
	LOCKED_GET(uint64_t, log->unflushed);
}

int64_t
klog_log_last_flush_ms(klog_log_t *log)
{
	LOCKED_GET(int64_t, log->last_flush_ms);
}

size_t
klog_log_segment_count(klog_log_t *log)
{
	LOCKED_GET(size_t, log->nsegs);
}

int64_t
klog_log_size_bytes(klog_log_t *log)
{
	LOCKED_GET(int64_t, log->bytes);
}

/* ---- read ---- */

int
klog_log_read(klog_log_t *log, int64_t offset, size_t max_bytes,
    klog_log_slice_t *out, klog_err_t *err)
{
	klog_segment_t *s;
	int64_t pos, readable, written;
	int fd, r;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	out->offset = offset;
	pthread_mutex_lock(&log->mu);
	if (offset < log->segs[0]->base || offset > log->flushed_end) {
		r = klog_err_set(err, -KLOG_ERANGE,
		    "offset %lld out of range [%lld, %lld]", (long long)offset,
		    (long long)log->segs[0]->base,
		    (long long)log->flushed_end);
		pthread_mutex_unlock(&log->mu);
		return r;
	}
	if (offset == log->flushed_end) {
		pthread_mutex_unlock(&log->mu);
		return 0;
	}
	s = log->segs[seg_find(log, offset)];
	if ((fd = klog_segment_pin(s, log->dir, err)) < 0) {
		pthread_mutex_unlock(&log->mu);
		/* Deleted behind our back (klog-retain, an operator): the start
		 * the reader is told next must already follow the files. */
		if (fd == -KLOG_ERANGE)
			(void)klog_log_rescan(log, NULL);
		return fd;
	}
	pos = offset - s->base;
	written = s->size;
	readable = min64(written, log->flushed_end - s->base);
	klog_segment_ref(s);
	pthread_mutex_unlock(&log->mu);
	if ((r = klog_segment_check_boundary(fd, pos, readable, written,
	    offset, err)) < 0) {
		klog_segment_unpin(s);
		klog_segment_unref(s);
		return r;
	}
	out->fd = fd;
	out->file_pos = pos;
	out->len = (size_t)min64(readable - pos,
	    max_bytes > INT64_MAX ? INT64_MAX : (int64_t)max_bytes);
	out->seg = s;
	return 0;
}

int
klog_log_find_start(klog_log_t *log, int64_t offset, int64_t *start,
    klog_err_t *err)
{
	klog_segment_scan_t scan;
	klog_segment_t *s;
	int64_t from, readable, pos;
	uint64_t cuts;
	int fd, r;

	pthread_mutex_lock(&log->mu);
	if (offset < log->segs[0]->base || offset >= log->flushed_end) {
		pthread_mutex_unlock(&log->mu);
		return klog_err_set(err, -KLOG_ERANGE, "offset %lld out of "
		    "range [%lld, %lld)", (long long)offset,
		    (long long)log->segs[0]->base, (long long)log->flushed_end);
	}
	s = log->segs[seg_find(log, offset)];
	if ((fd = klog_segment_pin(s, log->dir, err)) < 0) {
		pthread_mutex_unlock(&log->mu);
		return fd;
	}
	readable = min64(s->size, log->flushed_end - s->base);
	cuts = log->cuts;
	from = klog_segment_mark_before(s, offset - s->base);
	klog_segment_ref(s);
	pthread_mutex_unlock(&log->mu);
	r = klog_segment_find_start(fd, from, offset - s->base, readable, &pos,
	    &scan, err);
	klog_segment_unpin(s);
	pthread_mutex_lock(&log->mu);
	/* What the scan learned holds unless the log was cut meanwhile. */
	for (size_t i = 0; log->cuts == cuts && i < scan.n; i++)
		klog_segment_mark(s, scan.marks[i]);
	pthread_mutex_unlock(&log->mu);
	if (r == 0)
		*start = s->base + pos;
	klog_segment_unref(s);
	return r;
}

void
klog_log_slice_release(klog_log_slice_t *slice)
{
	klog_segment_t *s;

	if (slice == NULL || slice->seg == NULL)
		return;
	s = slice->seg;
	klog_segment_unpin(s);
	klog_segment_unref(s);
	slice->seg = NULL;
	slice->fd = -1;
	slice->len = 0;
}

/* ---- listing: snapshots taken under the lock, stat'ed without it ---- */

static int
snapshot(klog_log_t *log, struct snap **out, size_t *n, int64_t *flushed)
{
	struct snap *sn;

	pthread_mutex_lock(&log->mu);
	*n = log->nsegs;
	if (flushed != NULL)
		*flushed = log->flushed_end;
	if ((sn = malloc(*n * sizeof(*sn))) == NULL) {
		pthread_mutex_unlock(&log->mu);
		return -KLOG_ENOMEM;
	}
	for (size_t i = 0; i < *n; i++) {
		sn[i].seg = log->segs[i];
		sn[i].base = log->segs[i]->base;
		sn[i].size = log->segs[i]->size;
		sn[i].kafka = log->segs[i]->kafka;
		klog_segment_ref(sn[i].seg);
	}
	pthread_mutex_unlock(&log->mu);
	*out = sn;
	return 0;
}

static void
snapshot_free(struct snap *sn, size_t n)
{
	for (size_t i = 0; i < n; i++)
		klog_segment_unref(sn[i].seg);
	free(sn);
}

/* The segment file's mtime in ms since the epoch; -KLOG_ENOENT if another
 * process removed it. */
static int
snap_mtime(const klog_log_t *log, const struct snap *sn, int64_t *ms)
{
	char path[PATH_MAX];
	struct stat st;

	seg_path(log, sn->base, sn->kafka, path, sizeof(path));
	if (stat(path, &st) < 0)
		return errno == ENOENT ? -KLOG_ENOENT : -KLOG_EIO;
	*ms = klog_clock_ts_ms(&st.st_mtim);
	return 0;
}

int
klog_log_segments(klog_log_t *log, klog_segment_info_t *out, size_t max,
    size_t *n)
{
	struct snap *sn;
	size_t count;
	int64_t ms;
	int r;

	if ((r = snapshot(log, &sn, &count, NULL)) < 0)
		return r;
	*n = count;
	for (size_t i = 0; i < count && i < max; i++) {
		out[i].base = sn[i].base;
		out[i].size = sn[i].size;
		out[i].mtime_ms = 0;  /* stays 0 for a file removed meanwhile */
		if ((r = snap_mtime(log, &sn[i], &ms)) == 0)
			out[i].mtime_ms = ms;
		else if (r != -KLOG_ENOENT)
			break;
	}
	snapshot_free(sn, count);
	return r == -KLOG_ENOENT ? 0 : r;
}

struct offset_time {
	int64_t offset, ms;
};

/*
 * Kafka 0.7's Log.getOffsetsBefore, with one difference: a segment that
 * starts past the flushed end (rolled, not yet flushed) is left out, so that
 * no returned offset is beyond what a reader may fetch.
 */
int
klog_log_offsets_before(klog_log_t *log, int64_t time_ms, int64_t *offsets,
    int max, int *n)
{
	struct offset_time *ot;
	struct snap *sn;
	size_t count, k = 0;
	int64_t flushed, ms;
	long start;
	int r, gone = 0;

	*n = 0;
	if ((r = snapshot(log, &sn, &count, &flushed)) < 0)
		return r;
	if ((ot = malloc((count + 1) * sizeof(*ot))) == NULL) {
		snapshot_free(sn, count);
		return -KLOG_ENOMEM;
	}
	for (size_t i = 0; i < count && sn[i].base <= flushed; i++) {
		if ((r = snap_mtime(log, &sn[i], &ms)) == -KLOG_ENOENT) {
			gone = 1;
			continue;
		}
		if (r < 0)
			goto out;
		ot[k].offset = sn[i].base;
		ot[k++].ms = ms;
	}
	r = 0;
	if (k > 0 && flushed > ot[k - 1].offset) {
		ot[k].offset = flushed;
		ot[k++].ms = klog_clock_wall_ms();
	}
	if (time_ms == -1)
		start = (long)k - 1;
	else if (time_ms == -2)
		start = k > 0 ? 0 : -1;
	else
		for (start = (long)k - 1; start >= 0; start--)
			if (ot[start].ms <= time_ms)
				break;
	for (; start >= 0 && *n < max; start--)
		offsets[(*n)++] = ot[start].offset;
out:
	free(ot);
	snapshot_free(sn, count);
	/* Deleted behind our back, as klog_log_read() finds: the start and
	 * the open descriptors follow the files from now on, so a reader
	 * that asks first and never reads the gone range is not the only
	 * one who knows. */
	if (gone)
		(void)klog_log_rescan(log, NULL);
	return r;
}

/* ---- retention ---- */

/*
 * Drop sn[0..k) from the front of the array if they are still there (never
 * the active segment), then, with unlink_files, delete their files.
 */
static int
drop_prefix(klog_log_t *log, struct snap *sn, size_t k, int unlink_files,
    size_t *deleted, int64_t *bytes, klog_err_t *err)
{
	char path[PATH_MAX];
	size_t i;
	int r = 0;

	pthread_mutex_lock(&log->mu);
	for (i = 0; i < k && i + 1 < log->nsegs; i++)
		if (log->segs[i] != sn[i].seg)
			break;
	k = i;
	for (i = 0; i < k; i++) {
		log->bytes -= sn[i].size;
		/* The snapshot still holds one. */
		klog_segment_unref(log->segs[i]);
	}
	memmove(log->segs, log->segs + k,
	    (log->nsegs - k) * sizeof(*log->segs));
	log->nsegs -= k;
	/* Unflushed bytes of a deleted segment are gone: nothing below the
	 * start can be flushed later. */
	if (log->flushed_end < log->segs[0]->base)
		log->flushed_end = log->segs[0]->base;
	pthread_mutex_unlock(&log->mu);
	for (i = 0; i < k; i++) {
		seg_path(log, sn[i].base, sn[i].kafka, path, sizeof(path));
		if (unlink_files && unlink(path) < 0 && errno != ENOENT) {
			if (r == 0)
				r = klog_err_sys(err, "unlink", path);
			continue;
		}
		*deleted += 1;
		*bytes += sn[i].size;
	}
	return r;
}

/* The shared rule (names.h) over the snapshot.  A file another process
 * removed counts as expired.  mtimes are only stat()ed for the age rule. */
static int
plan_retain(const klog_log_t *log, const struct snap *sn, size_t n,
    int64_t max_age_ms, int64_t max_bytes, int64_t now_ms,
    klog_retain_plan_t *plan)
{
	klog_segment_info_t *info;
	int r = 0;

	if ((info = calloc(n, sizeof(*info))) == NULL)
		return -KLOG_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		info[i].base = sn[i].base;
		info[i].size = sn[i].size;
		if (max_age_ms < 0)
			continue;
		r = snap_mtime(log, &sn[i], &info[i].mtime_ms);
		if (r == -KLOG_ENOENT)
			info[i].mtime_ms = KLOG_RETAIN_GONE;
		else if (r < 0)
			goto out;
	}
	r = 0;
	klog_retain_plan(info, n, max_age_ms, max_bytes, now_ms, plan);
out:
	free(info);
	return r;
}

/*
 * Everything expired.  An empty active segment stays (its mtime refreshed,
 * as Kafka 0.7 does); otherwise roll so the old active one can go.
 * *keep_active is set when the last snapshot entry must not be deleted.
 */
static int
expire_all(klog_log_t *log, struct snap *active_sn, int *keep_active,
    klog_err_t *err)
{
	char path[PATH_MAX];
	int r = 0;

	pthread_mutex_lock(&log->mu);
	/* If it rolled meanwhile, the snapshot's last is no longer active
	 * and may go as it is. */
	*keep_active = active(log) == active_sn->seg &&
	    active_sn->seg->size == 0;
	if (active(log) == active_sn->seg && !*keep_active)
		r = roll(log, err);
	/* Under the lock: only the active segment's descriptor is sure to
	 * be open. */
	if (*keep_active && futimens(active_sn->seg->ent.fd, NULL) < 0) {
		seg_path(log, active_sn->base, active_sn->kafka, path,
		    sizeof(path));
		r = klog_err_sys(err, "touch", path);
	}
	pthread_mutex_unlock(&log->mu);
	return r;
}

int
klog_log_retain(klog_log_t *log, int64_t max_age_ms, int64_t max_bytes,
    int64_t now_ms, size_t *deleted_segments, int64_t *deleted_bytes,
    klog_err_t *err)
{
	klog_retain_plan_t plan;
	struct snap *sn;
	size_t n, k;
	int keep, r;

	*deleted_segments = 0;
	*deleted_bytes = 0;
	if ((r = snapshot(log, &sn, &n, NULL)) < 0)
		return klog_err_set(err, r, "%s: out of memory", log->dir);
	r = plan_retain(log, sn, n, max_age_ms, max_bytes, now_ms, &plan);
	if (r < 0) {
		r = klog_err_set(err, r, "%s: %s", log->dir,
		    r == -KLOG_ENOMEM ? "out of memory" :
		    "cannot stat segments");
		goto out;
	}
	k = plan.count;
	if (plan.newest_expired) {
		if ((r = expire_all(log, &sn[n - 1], &keep, err)) < 0)
			goto out;
		k += (size_t)!keep;
	}
	if (k > 0)
		r = drop_prefix(log, sn, k, 1, deleted_segments,
		    deleted_bytes, err);
out:
	snapshot_free(sn, n);
	return r;
}

int
klog_log_rescan(klog_log_t *log, klog_err_t *err)
{
	struct snap *sn;
	size_t n, k, deleted = 0;
	int64_t ms, bytes = 0;
	int r = 0;

	if ((r = snapshot(log, &sn, &n, NULL)) < 0)
		return klog_err_set(err, r, "%s: out of memory", log->dir);
	for (k = 0; k + 1 < n; k++)
		if ((r = snap_mtime(log, &sn[k], &ms)) != -KLOG_ENOENT)
			break;
	if (r < 0 && r != -KLOG_ENOENT) {
		r = klog_err_set(err, r, "%s: cannot stat segments", log->dir);
		goto out;
	}
	r = k > 0 ? drop_prefix(log, sn, k, 0, &deleted, &bytes, err) : 0;
out:
	snapshot_free(sn, n);
	return r;
}
