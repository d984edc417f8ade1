/*
 * The store: the data directory's lock, its clean-shutdown marker, and every
 * partition log in it, found by scanning for "<topic>-<n>" directories.
 *
 *   <data-dir>/.lock                  flock(2)ed while a broker runs
 *   <data-dir>/.klog_cleanshutdown    present only between runs
 *   <data-dir>/<topic>-<n>/...        one log each (see log.h)
 *
 * A topic's partition count is its highest n plus one; missing partitions
 * in between are created.  Anything else in the directory (other files,
 * symbolic links, names that do not parse) is left alone.  A partition at
 * or above max_partitions makes open fail rather than hide data.
 *
 * A topic can be deleted (its directories removed) and a partition whose
 * directory went behind the broker's back dropped: their logs are handed
 * to the caller, who knows when the flusher is done with them.  A dropped
 * partition's slot stays NULL until its next use opens it afresh.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/fdcache.h"
#include "klog/storage/log.h"
#include "klog/storage/names.h"
#include "klog/storage/segment.h"
#include "klog/storage/store.h"

#define LOCK_NAME ".lock"
#define DEFAULT_DATA_DIR "klog-data"
#define DEFAULT_MAX_PARTITIONS 1024
#define MARKER_HEADER "klog clean shutdown\n"
#define MARKER_MAX ((off_t)64 << 20)

struct topic {
	char *name;
	int nparts;
	klog_log_t **logs;      /* nparts of them, owned */
};

struct klog_store {
	klog_store_config_t cfg;  /* cfg.data_dir points at data_dir,
	                             cfg.log.fdcache at fdcache */
	klog_fdcache_t *fdcache;  /* referenced here and by every log */
	char *data_dir;
	int lock_fd;
	int clean;                /* open found the clean-shutdown marker */
	int recovered;            /* partitions recovered at open */
	int opening;              /* in klog_store_open(): report progress */
	size_t open_done, open_total;
	int64_t recovered_bytes;
	int check_ends;           /* opening after a clean stop: compare each
	                             log's end with the marker's */
	char *marker;             /* the marker's text (NULL: none, or not
	                             readable) while opening */
	size_t marker_len;
	struct topic *topics;     /* sorted by name */
	size_t ntopics;
	pthread_mutex_t all_mu;   /* all and nall may be read by the flusher */
	klog_log_t **all;         /* every log, in opening order (borrowed) */
	size_t nall, allcap;
	/* Under all_mu: the log another thread holds (klog_store_hold()),
	 * its flag to let go, and the wait of a deletion for its release. */
	klog_log_t *held;
	atomic_int *held_drop;
	pthread_cond_t held_cv;
};

void
klog_store_config_default(klog_store_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->data_dir = DEFAULT_DATA_DIR;
	klog_log_config_default(&cfg->log);
	cfg->default_partitions = 1;
	cfg->auto_create = 1;
	cfg->max_partitions = DEFAULT_MAX_PARTITIONS;
	cfg->max_open_segments = KLOG_STORE_DEFAULT_OPEN_SEGMENTS;
}

static int
join(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -KLOG_ETOOBIG : 0;
}

/* mkdir -p, each new level 0755. */
static int
mkdir_p(const char *path, klog_err_t *err)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return klog_err_set(err, -KLOG_EINVAL, "data directory \"%s\": "
		    "bad path", path);
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return klog_err_sys(err, "mkdir", buf);
		if ((*p = c) == '\0')
			break;
	}
	return 0;
}

/* One broker per directory: an flock held for the store's lifetime. */
static int
take_lock(klog_store_t *s, klog_err_t *err)
{
	char path[PATH_MAX];

	if (join(path, sizeof(path), s->data_dir, LOCK_NAME) < 0)
		return klog_err_set(err, -KLOG_ETOOBIG, "%s: path too long",
		    s->data_dir);
	s->lock_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (s->lock_fd < 0)
		return klog_err_sys(err, "open", path);
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		return klog_err_set(err, -KLOG_EBUSY,
		    "%s: in use by another broker", s->data_dir);
	return klog_err_sys(err, "lock", path);
}

/*
 * The marker lists each partition's end at the clean stop, one line
 * "<topic> <partition> <end>" after a header.  A partition whose last
 * segment no longer ends there (bytes added after the stop, or a marker
 * that says nothing of it) is recovered all the same.  An unreadable marker
 * reads as empty: everything is recovered, which is always safe.
 */
static void
read_marker(klog_store_t *s, const char *path)
{
	struct stat st;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    st.st_size <= MARKER_MAX &&
	    (s->marker = malloc((size_t)st.st_size)) != NULL) {
		n = read(fd, s->marker, (size_t)st.st_size);
		s->marker_len = n > 0 ? (size_t)n : 0;
	}
	close(fd);
}

/* Whether the marker says log ended where it ends now. */
static int
marker_agrees(const klog_store_t *s, klog_log_t *log)
{
	char line[KLOG_TOPIC_MAX + 64];
	int n;

	n = snprintf(line, sizeof(line), "\n%s %d %lld\n", klog_log_topic(log),
	    klog_log_partition(log), (long long)klog_log_end(log));
	return s->marker != NULL && n > 0 && (size_t)n < sizeof(line) &&
	    memmem(s->marker, s->marker_len, line, (size_t)n) != NULL;
}

/*
 * Consume the clean-shutdown marker: s->clean tells whether it was there.  It
 * goes (durably) before any log is opened for writing, so that a crash from
 * here on means recovery at the next start.
 */
static int
take_marker(klog_store_t *s, klog_err_t *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];

	if (join(path, sizeof(path), s->data_dir, KLOG_CLEAN_MARKER) < 0)
		return klog_err_set(err, -KLOG_ETOOBIG, "%s: path too long",
		    s->data_dir);
	read_marker(s, path);
	/* A temporary marker left by a crash mid-write says nothing. */
	if (join(tmp, sizeof(tmp), s->data_dir, KLOG_CLEAN_MARKER ".tmp") == 0)
		(void)unlink(tmp);
	if (unlink(path) < 0) {
		if (errno != ENOENT)
			return klog_err_sys(err, "unlink", path);
		s->clean = 0;
		return 0;
	}
	s->clean = 1;
	return klog_segment_sync_dir(s->data_dir, err);
}

/*
 * Write the marker whole or not at all: into a temporary file, synced, then
 * renamed over the name, so that a full disk leaves no empty or cut marker
 * for the next start to misread.
 */
static int
write_marker(klog_store_t *s, klog_err_t *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	klog_buf_t b;
	int fd, r = 0;

	if (join(path, sizeof(path), s->data_dir, KLOG_CLEAN_MARKER) < 0 ||
	    join(tmp, sizeof(tmp), s->data_dir, KLOG_CLEAN_MARKER ".tmp") < 0)
		return klog_err_set(err, -KLOG_ETOOBIG, "%s: path too long",
		    s->data_dir);
	klog_buf_init(&b);
	klog_buf_put(&b, MARKER_HEADER, strlen(MARKER_HEADER));
	for (size_t i = 0; i < s->nall; i++) {
		char line[KLOG_TOPIC_MAX + 64];
		int n = snprintf(line, sizeof(line), "%s %d %lld\n",
		    klog_log_topic(s->all[i]), klog_log_partition(s->all[i]),
		    (long long)klog_log_end(s->all[i]));

		klog_buf_put(&b, line, (size_t)n);
	}
	if (b.failed) {
		klog_buf_free(&b);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd < 0) {
		klog_buf_free(&b);
		return klog_err_sys(err, "create", tmp);
	}
	if (write(fd, b.data, b.len) != (ssize_t)b.len)
		r = klog_err_sys(err, "write", tmp);
	else if (fsync(fd) < 0)
		r = klog_err_sys(err, "fsync", tmp);
	close(fd);
	klog_buf_free(&b);
	if (r == 0 && rename(tmp, path) < 0)
		r = klog_err_sys(err, "rename", tmp);
	if (r < 0) {
		(void)unlink(tmp);
		return r;
	}
	return klog_segment_sync_dir(s->data_dir, err);
}

/* ---- topics ---- */

/* Index of topic, or -1 with *at its insertion point. */
static long
find_topic(const klog_store_t *s, const char *name, size_t *at)
{
	size_t lo = 0, hi = s->ntopics, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(s->topics[mid].name, name);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at != NULL)
		*at = lo;
	return -1;
}

static struct topic *
insert_topic(klog_store_t *s, const char *name)
{
	struct topic *p, *t;
	size_t at = 0;
	char *copy;

	find_topic(s, name, &at);
	if ((copy = strdup(name)) == NULL)
		return NULL;
	p = realloc(s->topics, (s->ntopics + 1) * sizeof(*p));
	if (p == NULL) {
		free(copy);
		return NULL;
	}
	s->topics = p;
	memmove(p + at + 1, p + at, (s->ntopics - at) * sizeof(*p));
	s->ntopics++;
	t = &p[at];
	t->name = copy;
	t->nparts = 0;
	t->logs = NULL;
	return t;
}

static int
remember(klog_store_t *s, klog_log_t *log)
{
	klog_log_t **p;
	size_t cap;
	int r = 0;

	pthread_mutex_lock(&s->all_mu);
	if (s->nall == s->allcap) {
		cap = s->allcap ? s->allcap * 2 : 16;
		if ((p = realloc(s->all, cap * sizeof(*p))) == NULL) {
			r = -KLOG_ENOMEM;
			goto out;
		}
		s->all = p;
		s->allcap = cap;
	}
	s->all[s->nall++] = log;
out:
	pthread_mutex_unlock(&s->all_mu);
	return r;
}

/* Open partitions t->nparts..n-1 (recovering them if asked). */
static int
grow_topic(klog_store_t *s, struct topic *t, int n, int recover,
    klog_err_t *err)
{
	klog_log_config_t cfg = s->cfg.log;
	klog_log_t **p, *log;
	int r;

	if (n <= t->nparts)
		return 0;
	if ((p = realloc(t->logs, (size_t)n * sizeof(*p))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	t->logs = p;
	while (t->nparts < n) {
		cfg.recover = recover;
		r = klog_log_open(s->data_dir, t->name, t->nparts, &cfg, &log,
		    err);
		if (r == 0 && !recover && s->check_ends &&
		    !marker_agrees(s, log)) {
			klog_log_close(log);
			cfg.recover = 1;
			r = klog_log_open(s->data_dir, t->name, t->nparts, &cfg,
			    &log, err);
		}
		if (r < 0)
			return r;
		s->recovered += cfg.recover;
		if (remember(s, log) < 0) {
			klog_log_close(log);
			return klog_err_set(err, -KLOG_ENOMEM,
			    "out of memory");
		}
		s->recovered_bytes += klog_log_recovered_bytes(log);
		t->logs[t->nparts++] = log;
		if (s->opening && s->cfg.progress != NULL) {
			klog_store_progress_t pr = { ++s->open_done,
			    s->open_total, t->name, t->nparts - 1,
			    cfg.recover, klog_log_recovered_bytes(log) };

			s->cfg.progress(s->cfg.progress_arg, &pr);
		}
	}
	return 0;
}

int
klog_store_check_partitions(const klog_store_t *s, const char *topic,
    int partitions, klog_err_t *err)
{
	if (partitions < 1 || partitions > s->cfg.max_partitions)
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\": %d partitions: not in [1, %d]", topic,
		    partitions, s->cfg.max_partitions);
	return 0;
}

static int
open_topic(klog_store_t *s, const char *name, int partitions, int recover,
    klog_err_t *err)
{
	struct topic *t;
	long i;

	if ((i = find_topic(s, name, NULL)) >= 0)
		t = &s->topics[i];
	else if ((t = insert_topic(s, name)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	return grow_topic(s, t, partitions, recover, err);
}

int
klog_store_create_topic(klog_store_t *s, const char *topic, int partitions,
    klog_err_t *err)
{
	int r;

	if ((r = klog_topic_validate(topic, err)) < 0 ||
	    (r = klog_store_check_partitions(s, topic, partitions,
	    err)) < 0)
		return r;
	return open_topic(s, topic, partitions, 0, err);
}

/* A dropped partition's log, opened again (an empty one, normally). */
static int
reopen_part(klog_store_t *s, struct topic *t, int partition, klog_err_t *err)
{
	klog_log_t *log;
	int r;

	if ((r = klog_log_open(s->data_dir, t->name, partition, &s->cfg.log,
	    &log, err)) < 0)
		return r;
	if (remember(s, log) < 0) {
		klog_log_close(log);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	t->logs[partition] = log;
	return 0;
}

int
klog_store_get(klog_store_t *s, const char *topic, int partition,
    int create, klog_log_t **log, klog_err_t *err)
{
	struct topic *t;
	long i;
	int r;

	*log = NULL;
	if ((r = klog_topic_validate(topic, err)) < 0)
		return r;
	if ((i = find_topic(s, topic, NULL)) < 0) {
		if (!create || !s->cfg.auto_create)
			return klog_err_set(err, -KLOG_ENOTOPIC,
			    "topic \"%s\": unknown topic", topic);
		r = klog_store_create_topic(s, topic,
		    s->cfg.default_partitions, err);
		if (r < 0)
			return r;
		i = find_topic(s, topic, NULL);
	}
	t = &s->topics[i];
	if (partition < 0 || partition >= t->nparts)
		return klog_err_set(err, -KLOG_ENOPARTITION,
		    "topic \"%s\": partition %d: not in [0, %d]", topic,
		    partition, t->nparts - 1);
	if (t->logs[partition] == NULL &&
	    (r = reopen_part(s, t, partition, err)) < 0)
		return r;
	*log = t->logs[partition];
	return 0;
}

/* Take log out of the list of every open log; if another thread holds
 * it, ask it to let go and wait (a chunk of its read). */
static void
forget(klog_store_t *s, const klog_log_t *log)
{
	pthread_mutex_lock(&s->all_mu);
	for (size_t i = 0; i < s->nall; i++) {
		if (s->all[i] != log)
			continue;
		memmove(&s->all[i], &s->all[i + 1],
		    (s->nall - i - 1) * sizeof(*s->all));
		s->nall--;
		break;
	}
	while (log != NULL && s->held == log) {
		atomic_store(s->held_drop, 1);
		pthread_cond_wait(&s->held_cv, &s->all_mu);
	}
	pthread_mutex_unlock(&s->all_mu);
}

/* Drop topics[i] from the array; its logs are the caller's already. */
static void
remove_topic(klog_store_t *s, size_t i)
{
	free(s->topics[i].name);
	memmove(&s->topics[i], &s->topics[i + 1],
	    (s->ntopics - i - 1) * sizeof(*s->topics));
	s->ntopics--;
}

/* rm -r of a partition directory, which holds files only; one that is
 * gone already is fine. */
static int
remove_dir(const char *path, klog_err_t *err)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	if ((d = opendir(path)) == NULL)
		return errno == ENOENT ? 0 : klog_err_sys(err, "opendir", path);
	while ((de = readdir(d)) != NULL && r == 0) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT)
			r = klog_err_set(err, klog_errno_code(errno),
			    "unlink %s/%s: %s", path, de->d_name,
			    strerror(errno));
	}
	closedir(d);
	if (r == 0 && rmdir(path) < 0 && errno != ENOENT)
		r = klog_err_sys(err, "rmdir", path);
	return r;
}

int
klog_store_delete_topic(klog_store_t *s, const char *topic,
    klog_log_t ***logs, int *n, klog_err_t *err)
{
	char dir[PATH_MAX];
	struct topic *t;
	long i;
	int r = 0;

	*logs = NULL;
	*n = 0;
	if ((i = find_topic(s, topic, NULL)) < 0)
		return klog_err_set(err, -KLOG_ENOTOPIC,
		    "topic \"%s\": unknown topic", topic);
	t = &s->topics[i];
	for (int p = 0; p < t->nparts; p++) {
		if (t->logs[p] != NULL)
			forget(s, t->logs[p]);
		if (r == 0 && klog_names_dir_path(s->data_dir, t->name, p, dir,
		    sizeof(dir)) < 0)
			r = klog_err_set(err, -KLOG_ETOOBIG, "%s: path too long",
			    s->data_dir);
		if (r == 0)
			r = remove_dir(dir, err);
	}
	*logs = t->logs;
	*n = t->nparts;
	remove_topic(s, (size_t)i);
	if (r == 0)
		r = klog_segment_sync_dir(s->data_dir, err);
	return r;
}

klog_log_t *
klog_store_drop_partition(klog_store_t *s, const char *topic, int partition)
{
	long i = find_topic(s, topic, NULL);
	klog_log_t *log;
	struct topic *t;
	int left = 0;

	if (i < 0 || partition < 0 || partition >= s->topics[i].nparts)
		return NULL;
	t = &s->topics[i];
	if ((log = t->logs[partition]) != NULL)
		forget(s, log);
	t->logs[partition] = NULL;
	for (int p = 0; p < t->nparts; p++)
		left += t->logs[p] != NULL;
	if (left == 0) {
		free(t->logs);
		remove_topic(s, (size_t)i);
	}
	return log;
}

int
klog_store_partitions(klog_store_t *s, const char *topic)
{
	long i = find_topic(s, topic, NULL);

	return i < 0 ? -KLOG_ENOTOPIC : s->topics[i].nparts;
}

size_t
klog_store_topic_count(klog_store_t *s)
{
	return s->ntopics;
}

const char *
klog_store_topic_name(klog_store_t *s, size_t i)
{
	return i < s->ntopics ? s->topics[i].name : NULL;
}

size_t
klog_store_log_count(klog_store_t *s)
{
	size_t n;

	pthread_mutex_lock(&s->all_mu);
	n = s->nall;
	pthread_mutex_unlock(&s->all_mu);
	return n;
}

klog_log_t *
klog_store_log(klog_store_t *s, size_t i)
{
	klog_log_t *log;

	pthread_mutex_lock(&s->all_mu);
	log = i < s->nall ? s->all[i] : NULL;
	pthread_mutex_unlock(&s->all_mu);
	return log;
}

klog_log_t *
klog_store_hold(klog_store_t *s, size_t i, atomic_int *drop)
{
	klog_log_t *log;

	pthread_mutex_lock(&s->all_mu);
	log = i < s->nall ? s->all[i] : NULL;
	if (log != NULL) {
		s->held = log;
		s->held_drop = drop;
		atomic_store(drop, 0);
	}
	pthread_mutex_unlock(&s->all_mu);
	return log;
}

void
klog_store_release(klog_store_t *s)
{
	pthread_mutex_lock(&s->all_mu);
	s->held = NULL;
	s->held_drop = NULL;
	pthread_cond_broadcast(&s->held_cv);
	pthread_mutex_unlock(&s->all_mu);
}

const char *
klog_store_data_dir(const klog_store_t *s)
{
	return s->data_dir;
}

int
klog_store_clean(const klog_store_t *s)
{
	return s->clean;
}

int
klog_store_recovered(const klog_store_t *s)
{
	return s->recovered;
}

int64_t
klog_store_recovered_bytes(const klog_store_t *s)
{
	return s->recovered_bytes;
}

/* ---- open and close ---- */

/* Every partition directory in the data directory, sorted; each below the
 * maximum. */
static int
scan(klog_store_t *s, klog_names_part_t **out, size_t *n, klog_err_t *err)
{
	int dfd = open(s->data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	*out = NULL;
	*n = 0;
	if (dfd < 0)
		return klog_err_sys(err, "opendir", s->data_dir);
	r = klog_names_parts(dfd, s->data_dir, out, n, err);
	close(dfd);
	for (size_t i = 0; r == 0 && i < *n; i++)
		if ((*out)[i].partition >= s->cfg.max_partitions)
			r = klog_err_set(err, -KLOG_EINVAL,
			    "%s/%s-%d: partition not below the maximum of %d",
			    s->data_dir, (*out)[i].topic, (*out)[i].partition,
			    s->cfg.max_partitions);
	if (r < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return r;
}

static int
open_existing(klog_store_t *s, int recover, klog_err_t *err)
{
	klog_names_part_t *list;
	size_t n, i;
	int r;

	if ((r = scan(s, &list, &n, err)) < 0)
		return r;
	/* A brand new directory has nothing to recover. */
	s->check_ends = !recover;
	for (i = 0; i < n; i++)
		if (i + 1 == n || strcmp(list[i].topic, list[i + 1].topic) != 0)
			s->open_total += (size_t)list[i].partition + 1;
	s->opening = 1;
	for (i = 0; i < n && r == 0; i++) {
		if (i + 1 < n && strcmp(list[i].topic, list[i + 1].topic) == 0)
			continue;  /* the last of a topic has its highest n */
		r = open_topic(s, list[i].topic, list[i].partition + 1, recover,
		    err);
	}
	s->opening = 0;
	free(list);
	return r;
}

static int
check_config(const klog_store_config_t *cfg, klog_err_t *err)
{
	if (cfg->data_dir == NULL || cfg->data_dir[0] == '\0')
		return klog_err_set(err, -KLOG_EINVAL, "no data directory");
	if (cfg->max_partitions < 1)
		return klog_err_set(err, -KLOG_EINVAL,
		    "max partitions %d: not positive", cfg->max_partitions);
	if (cfg->default_partitions < 1 ||
	    cfg->default_partitions > cfg->max_partitions)
		return klog_err_set(err, -KLOG_EINVAL,
		    "default partitions %d: not in [1, %d]",
		    cfg->default_partitions, cfg->max_partitions);
	if (cfg->log.segment_bytes < 1)
		return klog_err_set(err, -KLOG_EINVAL,
		    "segment size %lld: not positive",
		    (long long)cfg->log.segment_bytes);
	return 0;
}

static void
store_free(klog_store_t *s)
{
	for (size_t i = 0; i < s->ntopics; i++) {
		for (int p = 0; p < s->topics[i].nparts; p++)
			klog_log_close(s->topics[i].logs[p]);
		free(s->topics[i].logs);
		free(s->topics[i].name);
	}
	free(s->topics);
	free(s->all);
	free(s->marker);
	klog_fdcache_unref(s->fdcache);
	pthread_mutex_destroy(&s->all_mu);
	pthread_cond_destroy(&s->held_cv);
	if (s->lock_fd >= 0)
		close(s->lock_fd);  /* releases the flock */
	free(s->data_dir);
	free(s);
}

int
klog_store_open(const klog_store_config_t *cfg, klog_store_t **out,
    klog_err_t *err)
{
	klog_store_t *s;
	int r;

	*out = NULL;
	if ((r = check_config(cfg, err)) < 0)
		return r;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	s->lock_fd = -1;
	pthread_mutex_init(&s->all_mu, NULL);
	pthread_cond_init(&s->held_cv, NULL);
	s->cfg = *cfg;
	if ((s->data_dir = strdup(cfg->data_dir)) == NULL) {
		r = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto fail;
	}
	s->cfg.data_dir = s->data_dir;
	if (klog_fdcache_new(cfg->max_open_segments, &s->fdcache) < 0) {
		r = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto fail;
	}
	s->cfg.log.fdcache = s->fdcache;
	if ((r = mkdir_p(s->data_dir, err)) < 0 ||
	    (r = take_lock(s, err)) < 0 ||
	    (r = take_marker(s, err)) < 0 ||
	    (r = open_existing(s, !s->clean, err)) < 0)
		goto fail;
	free(s->marker);
	s->marker = NULL;
	s->check_ends = 0;
	*out = s;
	return 0;
fail:
	store_free(s);
	return r;
}

int
klog_store_close(klog_store_t *s, int clean, klog_err_t *err)
{
	int r = 0, fr;

	if (s == NULL)
		return 0;
	for (size_t i = 0; clean && i < s->nall; i++)
		if ((fr = klog_log_flush(s->all[i], r == 0 ? err : NULL)) < 0 &&
		    r == 0)
			r = fr;
	if (clean && r == 0)
		r = write_marker(s, err);
	store_free(s);
	return r;
}
