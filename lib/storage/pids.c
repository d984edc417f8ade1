/*
 * Producer ids handed out from reserved blocks (pids.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/parse.h"
#include "klog/storage/pids.h"
#include "klog/storage/segment.h"

struct klog_pids {
	char *data_dir;
	int64_t next, end;            /* the block in use: [next, end) */
	klog_pids_block_fn *fn;       /* the source it came from */
	void *arg;
};

int
klog_pids_new(const char *data_dir, klog_pids_t **out)
{
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return -KLOG_ENOMEM;
	if (((*out)->data_dir = strdup(data_dir)) == NULL) {
		free(*out);
		*out = NULL;
		return -KLOG_ENOMEM;
	}
	return 0;
}

void
klog_pids_free(klog_pids_t *p)
{
	if (p == NULL)
		return;
	free(p->data_dir);
	free(p);
}

/* The file's value: 0 and *v (0 when there is no file), or an error. */
static int
read_next(const char *path, int64_t *v, klog_err_t *err)
{
	char buf[32];
	ssize_t n;
	int fd;

	*v = 0;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : klog_err_sys(err, "open", path);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return klog_err_sys(err, "read", path);
	buf[n] = '\0';
	/* Exactly digits and a newline: anything else may hide ids that
	 * were handed out. */
	if (n < 2 || buf[n - 1] != '\n' || strchr(buf, '\n') != buf + n - 1)
		return klog_err_set(err, -KLOG_ECORRUPT, "%s: not one line "
		    "holding a number", path);
	buf[n - 1] = '\0';
	if (klog_parse_i64(buf, 0, INT64_MAX - KLOG_PIDS_BLOCK, v, NULL) < 0)
		return klog_err_set(err, -KLOG_ECORRUPT, "%s: \"%s\" is not a "
		    "producer id", path, buf);
	return 0;
}

int
klog_pids_reserve_file(const char *data_dir, int64_t *start, int64_t *end,
    klog_err_t *err)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], buf[32];
	int64_t v;
	int fd, n, rc, ok;

	snprintf(path, sizeof(path), "%s/" KLOG_PIDS_FILE, data_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((rc = read_next(path, &v, err)) < 0)
		return rc;
	n = snprintf(buf, sizeof(buf), "%lld\n", (long long)(v +
	    KLOG_PIDS_BLOCK));
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) < 0)
		return klog_err_sys(err, "open", tmp);
	ok = write(fd, buf, (size_t)n) == n && fsync(fd) == 0;
	close(fd);
	if (!ok || rename(tmp, path) < 0) {
		rc = klog_err_sys(err, ok ? "rename" : "write", tmp);
		(void)unlink(tmp);
		return rc;
	}
	if ((rc = klog_segment_sync_dir(data_dir, err)) < 0)
		return rc;
	*start = v;
	*end = v + KLOG_PIDS_BLOCK;
	return 0;
}

static int
file_source(void *arg, int64_t *start, int64_t *end, klog_err_t *err)
{
	return klog_pids_reserve_file(arg, start, end, err);
}

int
klog_pids_next(klog_pids_t *p, klog_pids_block_fn *fn, void *arg,
    int64_t *id, klog_err_t *err)
{
	int64_t start, end;
	int rc;

	if (fn == NULL) {
		fn = file_source;
		arg = p->data_dir;
	}
	if (fn != p->fn || arg != p->arg)
		p->next = p->end = 0;
	if (p->next >= p->end) {
		if ((rc = fn(arg, &start, &end, err)) < 0)
			return rc;
		if (start < 0 || end <= start)
			return klog_err_set(err, -KLOG_ECORRUPT, "a block of "
			    "producer ids [%lld, %lld)", (long long)start,
			    (long long)end);
		p->fn = fn;
		p->arg = arg;
		p->next = start;
		p->end = end;
	}
	*id = p->next++;
	return 0;
}
