/*
 * The leader epoch file of a replica; see epochs.h.  A handful of lines,
 * rewritten whole on every change: changes come with leader changes only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/storage/epochs.h"
#include "klog/storage/segment.h"

#define HEADER "klog-epochs 1\n"
#define MAX_EPOCHS 100000

struct klog_epochs {
	char *dir;
	klog_epoch_t *v;
	size_t n, cap;
	int behind;
};

static int
push(klog_epochs_t *e, int32_t epoch, int64_t start)
{
	klog_epoch_t *v;
	size_t cap;

	if (e->n == e->cap) {
		cap = e->cap ? e->cap * 2 : 8;
		if ((v = realloc(e->v, cap * sizeof(*v))) == NULL)
			return -KLOG_ENOMEM;
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n++] = (klog_epoch_t){ epoch, start };
	return 0;
}

static int
parse(klog_epochs_t *e, FILE *f, const char *path, klog_err_t *err)
{
	char line[64];
	long long epoch, start;
	char extra;

	if (fgets(line, sizeof(line), f) == NULL || strcmp(line, HEADER) != 0)
		return klog_err_set(err, -KLOG_ECORRUPT, "%s: not an epoch "
		    "file", path);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lld %lld%c", &epoch, &start, &extra) != 3 ||
		    extra != '\n' || epoch < 0 || epoch > INT32_MAX ||
		    start < 0 || e->n >= MAX_EPOCHS ||
		    (e->n > 0 && (epoch <= e->v[e->n - 1].epoch ||
		    start < e->v[e->n - 1].start)))
			return klog_err_set(err, -KLOG_ECORRUPT, "%s: line %zu "
			    "is not a later epoch and its start", path,
			    e->n + 2);
		if (push(e, (int32_t)epoch, start) < 0)
			return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	if (ferror(f))
		return klog_err_sys(err, "read", path);
	return 0;
}

int
klog_epochs_open(const char *dir, klog_epochs_t **out, klog_err_t *err)
{
	char path[PATH_MAX];
	klog_epochs_t *e;
	FILE *f;
	int r = 0;

	*out = NULL;
	if (snprintf(path, sizeof(path), "%s/" KLOG_EPOCHS_FILE, dir) >=
	    (int)sizeof(path))
		return klog_err_set(err, -KLOG_ETOOBIG, "%s: path too long",
		    dir);
	if ((e = calloc(1, sizeof(*e))) == NULL ||
	    (e->dir = strdup(dir)) == NULL) {
		free(e);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	snprintf(path, sizeof(path), "%s/" KLOG_EPOCHS_BEHIND_FILE, dir);
	e->behind = access(path, F_OK) == 0;
	snprintf(path, sizeof(path), "%s/" KLOG_EPOCHS_FILE, dir);
	if ((f = fopen(path, "re")) != NULL) {
		r = parse(e, f, path, err);
		fclose(f);
	} else if (errno != ENOENT) {
		r = klog_err_sys(err, "open", path);
	}
	if (r < 0) {
		klog_epochs_free(e);
		return r;
	}
	*out = e;
	return 0;
}

void
klog_epochs_free(klog_epochs_t *e)
{
	if (e == NULL)
		return;
	free(e->v);
	free(e->dir);
	free(e);
}

size_t
klog_epochs_count(const klog_epochs_t *e)
{
	return e->n;
}

klog_epoch_t
klog_epochs_get(const klog_epochs_t *e, size_t i)
{
	return e->v[i];
}

int32_t
klog_epochs_latest(const klog_epochs_t *e)
{
	return e->n ? e->v[e->n - 1].epoch : -1;
}

/* Write the whole file anew: temp file, fsync, rename, fsync the dir. */
static int
save(const klog_epochs_t *e, klog_err_t *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/" KLOG_EPOCHS_FILE, e->dir);
	snprintf(tmp, sizeof(tmp), "%s/" KLOG_EPOCHS_FILE ".tmp", e->dir);
	if ((f = fopen(tmp, "we")) == NULL)
		return klog_err_sys(err, "create", tmp);
	ok = fputs(HEADER, f) >= 0;
	for (size_t i = 0; ok && i < e->n; i++)
		ok = fprintf(f, "%d %lld\n", (int)e->v[i].epoch,
		    (long long)e->v[i].start) > 0;
	ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
	if (fclose(f) != 0 || !ok) {
		int rc = klog_err_sys(err, "write", tmp);

		unlink(tmp);
		return rc;
	}
	if (rename(tmp, path) < 0)
		return klog_err_sys(err, "rename", tmp);
	return klog_segment_sync_dir(e->dir, err);
}

int
klog_epochs_append(klog_epochs_t *e, int32_t epoch, int64_t start,
    klog_err_t *err)
{
	size_t n = e->n;
	klog_epoch_t last = n ? e->v[n - 1] : (klog_epoch_t){ 0, 0 };
	int rc;

	if (epoch < 0 || (e->n > 0 && (epoch <= e->v[e->n - 1].epoch ||
	    start < e->v[e->n - 1].start)))
		return klog_err_set(err, -KLOG_EINVAL, "%s: epoch %d at %lld "
		    "is not after epoch %d at %lld", e->dir, (int)epoch,
		    (long long)start, (int)klog_epochs_latest(e),
		    e->n ? (long long)e->v[e->n - 1].start : -1LL);
	/* An epoch that wrote nothing says nothing about the bytes. */
	if (e->n > 0 && e->v[e->n - 1].start == start)
		e->n--;
	if (push(e, epoch, start) < 0)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	/* Not durable: the epochs stay as they were, so a retry writes it. */
	if ((rc = save(e, err)) < 0) {
		e->n = n;
		if (n > 0)
			e->v[n - 1] = last;
	}
	return rc;
}

int
klog_epochs_truncate(klog_epochs_t *e, int64_t end, klog_err_t *err)
{
	size_t n = e->n;
	int rc;

	while (e->n > 0 && e->v[e->n - 1].start >= end)
		e->n--;
	if (e->n != n && (rc = save(e, err)) < 0) {
		e->n = n;
		return rc;
	}
	return 0;
}

int
klog_epochs_clear(klog_epochs_t *e, klog_err_t *err)
{
	size_t n = e->n;
	int rc;

	if (n == 0)
		return 0;
	e->n = 0;
	if ((rc = save(e, err)) < 0)
		e->n = n;
	return rc;
}

int64_t
klog_epochs_end_of(const klog_epochs_t *e, int32_t epoch, int64_t leo,
    int32_t *found)
{
	size_t i = e->n;

	while (i > 0 && e->v[i - 1].epoch > epoch)
		i--;
	if (i == 0) {
		*found = -1;
		return e->n ? e->v[0].start : leo;
	}
	*found = e->v[i - 1].epoch;
	return i == e->n ? leo : e->v[i].start;
}

int
klog_epochs_behind(const klog_epochs_t *e)
{
	return e->behind;
}

int
klog_epochs_set_behind(klog_epochs_t *e, int behind, klog_err_t *err)
{
	char path[PATH_MAX];
	int fd;

	if (e->behind == behind)
		return 0;
	snprintf(path, sizeof(path), "%s/" KLOG_EPOCHS_BEHIND_FILE, e->dir);
	if (behind) {
		if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
			return klog_err_sys(err, "create", path);
		close(fd);
	} else if (unlink(path) < 0 && errno != ENOENT) {
		return klog_err_sys(err, "unlink", path);
	}
	e->behind = behind;
	return klog_segment_sync_dir(e->dir, err);
}

int32_t
klog_epochs_at(const klog_epochs_t *e, int64_t offset, int64_t *next_start)
{
	size_t i = e->n;

	while (i > 0 && e->v[i - 1].start > offset)
		i--;
	*next_start = i < e->n ? e->v[i].start : INT64_MAX;
	return i == 0 ? -1 : e->v[i - 1].epoch;
}
