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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/clock.h"
#include "klog/base/error.h"
#include "klog/storage/fdcache.h"
#include "klog/storage/log.h"
#include "klog/storage/names.h"
#include "klog/storage/segment.h"
#include "klog/storage/timeindex.h"

#include "log_impl.h"

#define DEFAULT_SEGMENT_BYTES ((int64_t)1 << 30)

/* Directories a flush must fsync because entries were created in them. */
enum { DIRTY_PARTITION = 1, DIRTY_DATA = 2 };

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

/* ---- the recovery point (logpoint.c) ---- */

/* The base of the first segment holding bytes at or past the flushed end
 * (the active one if none): every byte below it is synced.  Walked from
 * the active end, where the flushed end is: a step or two, not one per
 * segment, on every flush.  Under the lock. */
static int64_t
synced_below(const klog_log_t *log)
{
	size_t i = log->nsegs - 1;

	while (i > 0 && log->segs[i - 1]->base + log->segs[i - 1]->size >
	    log->flushed_end)
		i--;
	return log->segs[i]->base;
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
open_rw(klog_log_t *log, klog_segment_t *s, klog_err_t *err)
{
	char path[PATH_MAX];

	if (s->ent.fd >= 0)
		return 0;
	seg_path(log, s->base, s->kafka, path, sizeof(path));
	if ((s->ent.fd = klog_segment_open(path, O_RDWR)) < 0)
		return klog_err_sys(err, "open", path);
	return 0;
}

/* Segments k+1.. set aside whole after a cut in segment k. */
static int
set_aside_after(klog_log_t *log, size_t k, klog_err_t *err)
{
	int r;

	while (log->nsegs > k + 1) {
		klog_segment_t *s = log->segs[log->nsegs - 1];

		if ((r = klog_segment_set_aside(s, log->dir, log->salvaged,
		    sizeof(log->salvaged), err)) < 0)
			return r;
		log->recovered += s->size;
		klog_segment_unref(s);
		log->nsegs--;
	}
	return 0;
}

/*
 * After an unclean stop: scan every segment from the one holding the
 * recovery point rp (the last one if rp < 0: no point) and cut the log at
 * the first entry that is not whole and valid (segment.h keeps what is
 * cut); the segments after it are set aside whole.  A sealed segment is
 * opened read-write for its scan only.
 */
static int
recover_tail(klog_log_t *log, int64_t rp, klog_err_t *err)
{
	size_t i = log->nsegs - 1;
	int64_t cut;
	int r;

	if (rp >= 0 && rp < log->segs[0]->base)
		i = 0;
	else if (rp >= 0 && rp < active(log)->base)
		i = seg_find(log, rp);
	for (; i < log->nsegs; i++) {
		klog_segment_t *s = log->segs[i];

		r = open_rw(log, s, err);
		/* Deleted by klog-retain since the listing: nothing to scan. */
		if (r == -KLOG_ENOENT && s != active(log))
			continue;
		if (r < 0 || (r = klog_segment_recover(s, log->dir, &cut,
		    log->salvaged, sizeof(log->salvaged), err)) < 0)
			return r;
		log->recovered += cut;
		if (cut > 0)
			return set_aside_after(log, i, err);
		if (s != active(log)) {
			close(s->ent.fd);
			s->ent.fd = -1;
		}
	}
	return 0;
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
	pthread_mutex_init(&log->rp_mu, NULL);
	if (cfg->fdcache != NULL) {
		log->cache = cfg->fdcache;
		klog_fdcache_ref(log->cache);
	} else if (klog_fdcache_new(0, &log->cache) < 0) {
		pthread_mutex_destroy(&log->mu);
		pthread_mutex_destroy(&log->rp_mu);
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
	log->rp = log_rp_read(log);
	if (cfg->recover && (r = recover_tail(log, log->rp, err)) < 0)
		goto fail;
	if ((r = open_rw(log, active(log), err)) < 0)
		goto fail;
	/* A cut below the point (damage where it was synced) lowers it. */
	log_rp_lower(log, active(log)->base);
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
	for (size_t i = 0; i < log->nlater; i++)
		close(log->later[i]);
	for (size_t i = 0; i < log->nsegs; i++)
		klog_segment_unref(log->segs[i]);
	klog_fdcache_unref(log->cache);
	free(log->segs);
	free(log->data_dir);
	free(log->dir);
	free(log->topic);
	pthread_mutex_destroy(&log->mu);
	pthread_mutex_destroy(&log->rp_mu);
	free(log);
}

const char *
klog_log_dir(const klog_log_t *log)
{
	return log->dir;
}

void
klog_log_sync_later(klog_log_t *log, int fd)
{
	pthread_mutex_lock(&log->mu);
	if (log->nlater == LOG_LATER_MAX) {
		close(log->later[0]);
		memmove(log->later, log->later + 1,
		    (LOG_LATER_MAX - 1) * sizeof(log->later[0]));
		log->nlater--;
	}
	log->later[log->nlater++] = fd;
	log->dirty |= DIRTY_PARTITION;
	pthread_mutex_unlock(&log->mu);
}

/* The side files taken from the log under its lock: synced and closed. */
static void
sync_later(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		(void)fsync(fds[i]);
		close(fds[i]);
	}
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
int
log_roll(klog_log_t *log, klog_err_t *err)
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
	klog_timeindex_trim(&active(log)->times);
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

/* The answer to a write or a flush of a log whose sync failed.  Under the
 * lock. */
static int
refuse(const klog_log_t *log, klog_err_t *err)
{
	return klog_err_set(err, -KLOG_ESTORAGE, "%s: a sync failed (%s); "
	    "nothing past offset %lld is durable, and the log takes no more "
	    "writes until a restart recovers it", log->dir, log->failed,
	    (long long)log->flushed_end);
}

/* Remember a failed sync for good.  Under the lock. */
static void
fail(klog_log_t *log, int r, const klog_err_t *err)
{
	if (r == -KLOG_ESTORAGE && log->failed[0] == '\0')
		snprintf(log->failed, sizeof(log->failed), "%s",
		    klog_err_text(err, r));
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
	if (log->failed[0] != '\0') {
		r = refuse(log, err);
		goto out;
	}
	if (total > (uint64_t)(INT64_MAX - log->end)) {
		r = klog_err_set(err, -KLOG_ETOOBIG, "%s: log full", log->dir);
		goto out;
	}
	while (i < n) {
		s = active(log);
		if (iov[i].iov_len > 0 && s->size > 0 && (uint64_t)s->size +
		    iov[i].iov_len > (uint64_t)log->segment_bytes) {
			if ((r = log_roll(log, err)) < 0)
				goto out;
			s = active(log);
		}
		j = fit(log, s, iov, i, n, &bytes);
		/* A write starts at an entry: a mark, now and then. */
		klog_segment_mark(s, s->size);
		r = klog_segment_write(s, log->dir, iov + i, j - i, bytes,
		    &kept, &bytes, err);
		klog_timeindex_append(&s->times, s->size, iov + i, kept);
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
 * close them); the fsyncs run without it; the flushed end moves after,
 * and only if every one of them succeeded.
 */
int
klog_log_flush(klog_log_t *log, klog_err_t *err)
{
	klog_segment_t **segs;
	klog_err_t mine;
	size_t n = 0, nlater;
	uint64_t msgs, cuts;
	int64_t end, rp = -1;
	int dirty, r, later[LOG_LATER_MAX];

	if (err == NULL)
		err = &mine;
	pthread_mutex_lock(&log->mu);
	if (log->failed[0] != '\0') {
		r = refuse(log, err);
		pthread_mutex_unlock(&log->mu);
		return r;
	}
	cuts = log->cuts;
	end = log->end;
	msgs = log->unflushed;
	dirty = log->dirty;
	log->dirty = 0;
	nlater = log->nlater;
	memcpy(later, log->later, nlater * sizeof(later[0]));
	log->nlater = 0;
	r = unflushed_segs(log, &segs, &n);
	pthread_mutex_unlock(&log->mu);
	sync_later(later, nlater);
	if (r < 0) {
		r = klog_err_set(err, r, "%s: out of memory", log->dir);
		goto out;
	}
	if ((r = sync_segs(log, segs, n, err)) < 0)
		goto out;
	if ((dirty & DIRTY_PARTITION) && (r = klog_segment_sync_dir(log->dir, err)) < 0)
		goto out;
	if ((dirty & DIRTY_DATA) && (r = klog_segment_sync_dir(log->data_dir, err)) < 0)
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
		rp = synced_below(log);
	} else if (r < 0) {
		log->dirty |= dirty;
		fail(log, r, err);
	}
	pthread_mutex_unlock(&log->mu);
	for (size_t i = 0; i < n; i++) {
		klog_fdcache_unpin(log->cache, &segs[i]->ent);
		klog_segment_unref(segs[i]);
	}
	free(segs);
	if (rp >= 0)
		log_rp_advance(log, rp, cuts);
	return r;
}

/* ---- truncation (a follower's) ---- */

/* fsync the partition directory after a cut; a failure is final. */
static int
sync_partition(klog_log_t *log, klog_err_t *err)
{
	int r = klog_segment_sync_dir(log->dir, err);

	if (r < 0) {
		pthread_mutex_lock(&log->mu);
		fail(log, r, err);
		pthread_mutex_unlock(&log->mu);
	}
	return r;
}

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
static int
cut_at(klog_log_t *log, int64_t offset, int64_t *landed, klog_err_t *err)
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
		fail(log, r, err);
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
	return r == 0 ? sync_partition(log, err) : r;
}

static int
reset_at(klog_log_t *log, int64_t base, klog_err_t *err)
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
	return r == 0 ? sync_partition(log, err) : r;
}

/* After a cut or a reset: the recovery point no higher than the active
 * segment, whose bytes from the cut on are not synced yet.  Under rp_mu. */
static void
rp_after_cut(klog_log_t *log)
{
	int64_t base;

	pthread_mutex_lock(&log->mu);
	base = active(log)->base;
	pthread_mutex_unlock(&log->mu);
	log_rp_lower(log, base);
}

int
klog_log_truncate(klog_log_t *log, int64_t offset, int64_t *landed,
    klog_err_t *err)
{
	int r;

	pthread_mutex_lock(&log->rp_mu);
	if ((r = cut_at(log, offset, landed, err)) == 0)
		rp_after_cut(log);
	pthread_mutex_unlock(&log->rp_mu);
	return r;
}

int
klog_log_reset(klog_log_t *log, int64_t base, klog_err_t *err)
{
	int r;

	pthread_mutex_lock(&log->rp_mu);
	if ((r = reset_at(log, base, err)) == 0)
		rp_after_cut(log);
	pthread_mutex_unlock(&log->rp_mu);
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

int
klog_log_failed(klog_log_t *log)
{
	LOCKED_GET(int, log->failed[0] != '\0');
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
