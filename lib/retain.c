/*
 * Retention: the shared rule, and deleting segments from partition
 * directories on disk.  See retain.h for the model.
 *
 * Choices made here:
 *  - Every name inside the data directory is opened relative to a directory
 *    descriptor with O_NOFOLLOW, and unlinked relative to the partition's
 *    descriptor, so a directory swapped for a link after the listing cannot
 *    lead outside the data directory.
 *  - Segment names are parsed as lib/log.c does (20 digits, .klog or
 *    .kafka) and sorted the same way (at equal bases an empty file first),
 *    so both see the same contiguity.
 *  - The lock is a separate file from the broker's .lock: klog-retain runs
 *    exclude each other, never the broker.  It is polled with LOCK_NB so the
 *    wait is bounded without signals.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/clock.h"
#include "klog/error.h"
#include "klog/log.h"
#include "klog/retain.h"

#define SEG_NAME_MAX 32
#define LOCK_POLL_MS 50

struct klog_retain {
	char *data_dir;
	int fd;         /* the data directory */
	int lock_fd;    /* .retain.lock while held, else -1 */
};

/* A segment file while listing: sorted, then split into the part. */
struct found {
	klog_segment_info_t info;
	int kafka;
};

/* ---- the rule ---- */

static int
expired(const klog_segment_info_t *s, int64_t max_age_ms, int64_t now_ms)
{
	/* now - mtime > max_age without overflow, whatever the values. */
	return s->mtime_ms < now_ms &&
	    (uint64_t)now_ms - (uint64_t)s->mtime_ms > (uint64_t)max_age_ms;
}

void
klog_retain_plan(const klog_segment_info_t *segs, size_t n,
    int64_t max_age_ms, int64_t max_bytes, int64_t now_ms,
    klog_retain_plan_t *plan)
{
	int64_t left = 0;
	size_t k = 0;

	if (max_age_ms >= 0)
		while (k < n && expired(&segs[k], max_age_ms, now_ms))
			k++;
	if (max_bytes >= 0) {
		for (size_t i = k; i < n; i++)
			left += segs[i].size;
		for (; k < n && left - segs[k].size >= max_bytes; k++)
			left -= segs[k].size;
	}
	plan->newest_expired = n > 0 && k == n;
	plan->count = plan->newest_expired ? n - 1 : k;
}

/* ---- small helpers ---- */

static void
part_path(const klog_retain_t *r, const klog_retain_part_t *p, char *buf,
    size_t len)
{
	snprintf(buf, len, "%s/%s-%d", r->data_dir, p->topic, p->partition);
}

static void
seg_name(int64_t base, int kafka, char *buf, size_t len)
{
	snprintf(buf, len, "%020lld%s", (long long)base,
	    kafka ? KLOG_SEGMENT_SUFFIX_KAFKA : KLOG_SEGMENT_SUFFIX);
}

/* ---- the data directory and its lock ---- */

int
klog_retain_open(const char *data_dir, klog_retain_t **out,
    klog_err_t *err)
{
	klog_retain_t *r;

	*out = NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (r->data_dir = strdup(data_dir)) == NULL) {
		free(r);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	r->lock_fd = -1;
	r->fd = open(data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->fd < 0) {
		int rc = klog_err_sys(err, "open", data_dir);

		klog_retain_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

void
klog_retain_close(klog_retain_t *r)
{
	if (r == NULL)
		return;
	if (r->lock_fd >= 0)
		close(r->lock_fd);  /* releases the flock */
	if (r->fd >= 0)
		close(r->fd);
	free(r->data_dir);
	free(r);
}

int
klog_retain_lock(klog_retain_t *r, int64_t wait_ms, klog_err_t *err)
{
	char path[PATH_MAX];
	int64_t deadline, left;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", r->data_dir, KLOG_RETAIN_LOCK);
	fd = openat(r->fd, KLOG_RETAIN_LOCK,
	    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return klog_err_sys(err, "open", path);
	deadline = klog_clock_mono_ms() + (wait_ms > INT64_MAX / 2 ? INT64_MAX / 2 :
	    wait_ms);
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			int rc = klog_err_sys(err, "lock", path);

			close(fd);
			return rc;
		}
		if ((left = deadline - klog_clock_mono_ms()) <= 0) {
			close(fd);
			return klog_err_set(err, -KLOG_EBUSY,
			    "%s: another klog-retain is running", path);
		}
		klog_clock_sleep_ms(left < LOCK_POLL_MS ? left : LOCK_POLL_MS);
	}
	r->lock_fd = fd;
	return 0;
}

/* ---- partitions ---- */

static int
cmp_part(const void *a, const void *b)
{
	const klog_retain_part_t *x = a, *y = b;
	int c = strcmp(x->topic, y->topic);

	if (c != 0)
		return c;
	return (x->partition > y->partition) - (x->partition < y->partition);
}

/* A real directory (not a link) named "<valid topic>-<n>"? */
static int
parse_part(int dfd, const char *name, klog_retain_part_t *p)
{
	struct stat st;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (klog_log_parse_dirname(name, p->topic, sizeof(p->topic),
	    &p->partition) < 0)
		return 0;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	return S_ISDIR(st.st_mode);
}

/* An opendir of the directory dfd refers to, not sharing its offset. */
static DIR *
reopen_dir(int dfd)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return NULL;
	if ((d = fdopendir(fd)) == NULL)
		close(fd);
	return d;
}

int
klog_retain_parts(klog_retain_t *r, klog_retain_part_t **out, size_t *n,
    klog_err_t *err)
{
	klog_retain_part_t f, *list = NULL, *grown;
	struct dirent *de;
	size_t cap = 0;
	DIR *d;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if ((d = reopen_dir(r->fd)) == NULL)
		return klog_err_sys(err, "opendir", r->data_dir);
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (!parse_part(r->fd, de->d_name, &f)) {
			errno = 0;
			continue;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((grown = realloc(list, cap * sizeof(*list))) ==
			    NULL) {
				rc = klog_err_set(err, -KLOG_ENOMEM,
				    "out of memory");
				break;
			}
			list = grown;
		}
		list[(*n)++] = f;
		errno = 0;
	}
	if (rc == 0 && errno != 0)
		rc = klog_err_sys(err, "readdir", r->data_dir);
	closedir(d);
	if (rc < 0) {
		free(list);
		*n = 0;
		return rc;
	}
	if (*n > 1)
		qsort(list, *n, sizeof(*list), cmp_part);
	*out = list;
	return 0;
}

void
klog_retain_parts_free(klog_retain_part_t *parts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		klog_retain_part_close(&parts[i]);
	free(parts);
}

/* ---- segments of one partition ---- */

static int
cmp_found(const void *a, const void *b)
{
	const struct found *x = a, *y = b;

	if (x->info.base != y->info.base)
		return x->info.base < y->info.base ? -1 : 1;
	if (x->info.size != y->info.size)
		return x->info.size < y->info.size ? -1 : 1;
	return x->kafka > y->kafka ? -1 : x->kafka < y->kafka;
}

/* Stat one directory entry into *f: 1 if it is a segment, 0 if it is not
 * ours or is gone, or an error. */
static int
stat_entry(int dfd, const char *dir, const char *name, struct found *f,
    klog_err_t *err)
{
	char path[PATH_MAX + NAME_MAX + 2];
	struct stat st;
	int r;

	if ((r = klog_segment_parse_name(name, &f->info.base, &f->kafka)) ==
	    -KLOG_EINVAL)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (r < 0)
		return klog_err_set(err, -KLOG_ECORRUPT,
		    "%s: base offset too large", path);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : klog_err_sys(err, "stat", path);
	if (!S_ISREG(st.st_mode))
		return klog_err_set(err, -KLOG_ECORRUPT,
		    "%s: not a regular file", path);
	if (st.st_size > INT64_MAX - f->info.base)
		return klog_err_set(err, -KLOG_ECORRUPT,
		    "%s: segment ends past the largest offset", path);
	f->info.size = st.st_size;
	f->info.mtime_ms = klog_clock_ts_ms(&st.st_mtim);
	return 1;
}

static int
list_segments(int dfd, const char *dir, struct found **out, size_t *n,
    klog_err_t *err)
{
	struct found f, *list = NULL, *grown;
	struct dirent *de;
	size_t cap = 0;
	DIR *d;
	int rc = 0;

	*n = 0;
	if ((d = reopen_dir(dfd)) == NULL)
		return klog_err_sys(err, "opendir", dir);
	errno = 0;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if ((rc = stat_entry(dfd, dir, de->d_name, &f, err)) <= 0) {
			errno = 0;
			continue;
		}
		rc = 0;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((grown = realloc(list, cap * sizeof(*list))) ==
			    NULL) {
				rc = klog_err_set(err, -KLOG_ENOMEM,
				    "out of memory");
				break;
			}
			list = grown;
		}
		list[(*n)++] = f;
		errno = 0;
	}
	if (rc == 0 && errno != 0)
		rc = klog_err_sys(err, "readdir", dir);
	closedir(d);
	if (rc < 0) {
		free(list);
		*n = 0;
		return rc;
	}
	if (*n > 1)
		qsort(list, *n, sizeof(*list), cmp_found);
	*out = list;
	return 0;
}

static int
check_contiguous(const struct found *f, size_t n, const char *dir,
    klog_err_t *err)
{
	char name[SEG_NAME_MAX];
	int64_t end;

	for (size_t i = 1; i < n; i++) {
		end = f[i - 1].info.base + f[i - 1].info.size;
		if (end == f[i].info.base)
			continue;
		seg_name(f[i].info.base, f[i].kafka, name, sizeof(name));
		return klog_err_set(err, -KLOG_ECORRUPT,
		    "%s/%s: %s: the previous segment ends at %lld", dir, name,
		    end < f[i].info.base ? "gap" : "overlap", (long long)end);
	}
	return 0;
}

static int
take_found(klog_retain_part_t *p, const struct found *f, size_t n)
{
	if (n == 0)
		return 0;
	p->segs = malloc(n * sizeof(*p->segs));
	p->kafka = malloc(n);
	if (p->segs == NULL || p->kafka == NULL)
		return -KLOG_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		p->segs[i] = f[i].info;
		p->kafka[i] = (unsigned char)f[i].kafka;
	}
	p->nsegs = n;
	return 0;
}

int
klog_retain_part_load(klog_retain_t *r, klog_retain_part_t *p,
    klog_err_t *err)
{
	char dir[PATH_MAX], name[KLOG_TOPIC_MAX + 16];
	struct found *found = NULL;
	size_t n = 0;
	int rc;

	part_path(r, p, dir, sizeof(dir));
	snprintf(name, sizeof(name), "%s-%d", p->topic, p->partition);
	p->fd = openat(r->fd, name,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (p->fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			return klog_err_set(err, -KLOG_ECORRUPT,
			    "%s: no longer a directory", dir);
		return klog_err_sys(err, "open", dir);
	}
	if ((rc = list_segments(p->fd, dir, &found, &n, err)) < 0)
		return rc;
	if ((rc = check_contiguous(found, n, dir, err)) == 0 &&
	    (rc = take_found(p, found, n)) < 0)
		rc = klog_err_set(err, rc, "%s: out of memory", dir);
	free(found);
	return rc;
}

void
klog_retain_part_close(klog_retain_part_t *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	free(p->segs);
	free(p->kafka);
	p->segs = NULL;
	p->kafka = NULL;
	p->nsegs = 0;
}

int
klog_retain_part_unlink(klog_retain_t *r, const klog_retain_part_t *p,
    size_t i, klog_err_t *err)
{
	char dir[PATH_MAX], name[SEG_NAME_MAX], path[PATH_MAX + SEG_NAME_MAX];

	seg_name(p->segs[i].base, p->kafka[i], name, sizeof(name));
	if (unlinkat(p->fd, name, 0) == 0)
		return 0;
	part_path(r, p, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return klog_err_sys(err, "unlink", path);
}

int
klog_retain_part_sync(klog_retain_t *r, const klog_retain_part_t *p,
    klog_err_t *err)
{
	char dir[PATH_MAX];

	if (fsync(p->fd) == 0)
		return 0;
	part_path(r, p, dir, sizeof(dir));
	return klog_err_sys(err, "fsync", dir);
}
