/*
 * Retention on disk: deleting segments from partition directories.  See
 * retain.h for the model.
 *
 * Choices made here:
 *  - Every name inside the data directory is opened relative to a directory
 *    descriptor with O_NOFOLLOW, and unlinked relative to the partition's
 *    descriptor, so a directory swapped for a link after the listing cannot
 *    lead outside the data directory.
 *  - Partitions are listed by klog_names_parts(), as the broker's store
 *    lists them at open, and segments by klog_names_segments(), as
 *    lib/storage/log.c lists them: both sides see the same partitions and
 *    segments in the same order, and the same contiguity.
 *  - The lock is a separate file from the broker's .lock: klog-retain runs
 *    exclude each other, never the broker.  It is polled with LOCK_NB so the
 *    wait is bounded without signals.
 */
#include <sys/file.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/clock.h"
#include "klog/base/error.h"
#include "klog/storage/names.h"
#include "klog/storage/retain.h"

#define LOCK_POLL_MS 50

struct klog_retain {
	char *data_dir;
	int fd;         /* the data directory */
	int lock_fd;    /* .retain.lock while held, else -1 */
};

/* ---- small helpers ---- */

/* For messages only: a path that does not fit is cut. */
static void
part_path(const klog_retain_t *r, const klog_retain_part_t *p, char *buf,
    size_t len)
{
	(void)klog_names_dir_path(r->data_dir, p->topic, p->partition, buf,
	    len);
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
	deadline = klog_clock_mono_ms() +
	    (wait_ms > INT64_MAX / 2 ? INT64_MAX / 2 : wait_ms);
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

int
klog_retain_parts(klog_retain_t *r, klog_retain_part_t **out, size_t *n,
    klog_err_t *err)
{
	klog_names_part_t *found;
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = klog_names_parts(r->fd, r->data_dir, &found, n, err)) < 0)
		return rc;
	if (*n > 0 && (*out = calloc(*n, sizeof(**out))) == NULL) {
		free(found);
		*n = 0;
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	for (i = 0; i < *n; i++) {
		memcpy((*out)[i].topic, found[i].topic, sizeof(found[i].topic));
		(*out)[i].partition = found[i].partition;
		(*out)[i].fd = -1;
	}
	free(found);
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
check_contiguous(const klog_names_seg_t *f, size_t n, const char *dir,
    klog_err_t *err)
{
	char name[KLOG_NAMES_SEGMENT_MAX];
	int64_t end;

	for (size_t i = 1; i < n; i++) {
		end = f[i - 1].info.base + f[i - 1].info.size;
		if (end == f[i].info.base)
			continue;
		klog_names_segment_format(f[i].info.base, f[i].kafka, name,
		    sizeof(name));
		return klog_err_set(err, -KLOG_ECORRUPT,
		    "%s/%s: %s: the previous segment ends at %lld", dir, name,
		    end < f[i].info.base ? "gap" : "overlap", (long long)end);
	}
	return 0;
}

static int
take_found(klog_retain_part_t *p, const klog_names_seg_t *f, size_t n)
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
	klog_names_seg_t *found = NULL;
	size_t n = 0;
	int rc;

	part_path(r, p, dir, sizeof(dir));
	(void)klog_names_dir_format(p->topic, p->partition, name, sizeof(name));
	p->fd = openat(r->fd, name,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (p->fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			return klog_err_set(err, -KLOG_ECORRUPT,
			    "%s: no longer a directory", dir);
		return klog_err_sys(err, "open", dir);
	}
	if ((rc = klog_names_segments(p->fd, dir, 0, &found, &n, err)) < 0)
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
	char dir[PATH_MAX], name[KLOG_NAMES_SEGMENT_MAX];
	char path[PATH_MAX + KLOG_NAMES_SEGMENT_MAX];

	klog_names_segment_format(p->segs[i].base, p->kafka[i], name,
	    sizeof(name));
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

	int e;

	if (fsync(p->fd) == 0)
		return 0;
	e = errno;
	part_path(r, p, dir, sizeof(dir));
	return klog_err_set(err, -KLOG_ESTORAGE, "fsync %s: %s (the disk may "
	    "not hold the deletions: they can come back after a crash)", dir,
	    strerror(e));
}

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
