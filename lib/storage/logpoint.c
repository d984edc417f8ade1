/*
 * A partition log's recovery point, <dir>/recovery-point: every byte of
 * the partition below it was synced.  It is written after a flush that
 * synced a sealed segment whole (about once a segment), so that recovery
 * scans from there, and a failed write-back of a segment sealed before a
 * failure is found, not just one in the last segment (log.h).  The file is
 * never ahead of the disk: a write of it that fails leaves the older one,
 * and recovery scans more.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/parse.h"
#include "klog/storage/names.h"
#include "klog/storage/segment.h"

#include "log_impl.h"

/* The point as the file has it; -1 if there is none or it does not
 * parse. */
int64_t
log_rp_read(const klog_log_t *log)
{
	char path[PATH_MAX], buf[32];
	int64_t v = -1;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/" KLOG_RECOVERY_POINT_FILE, log->dir);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	if (klog_parse_i64(buf, 0, INT64_MAX, &v, NULL) < 0)
		return -1;
	return v;
}

/* Write rp whole (a temporary file, synced, renamed over the old one):
 * 0, or -1 with the old file left as it was.  Under rp_mu. */
static int
rp_write(klog_log_t *log, int64_t rp)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], buf[32];
	int fd, n, ok;

	snprintf(path, sizeof(path), "%s/" KLOG_RECOVERY_POINT_FILE, log->dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	n = snprintf(buf, sizeof(buf), "%lld\n", (long long)rp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) < 0)
		return -1;
	ok = write(fd, buf, (size_t)n) == n && fsync(fd) == 0;
	close(fd);
	if (!ok || rename(tmp, path) < 0) {
		(void)unlink(tmp);
		return -1;
	}
	/* A new name must last: without it recovery scans less. */
	if (log->rp < 0 && klog_segment_sync_dir(log->dir, NULL) < 0)
		return -1;
	log->rp = rp;
	return 0;
}

void
log_rp_advance(klog_log_t *log, int64_t rp, uint64_t cuts)
{
	int go;

	pthread_mutex_lock(&log->rp_mu);
	pthread_mutex_lock(&log->mu);
	go = cuts == log->cuts && rp > log->rp;
	pthread_mutex_unlock(&log->mu);
	if (go)
		(void)rp_write(log, rp);
	pthread_mutex_unlock(&log->rp_mu);
}

/* If it cannot be written, no file is safer than a file ahead. */
void
log_rp_lower(klog_log_t *log, int64_t base)
{
	char path[PATH_MAX];

	if (log->rp <= base)
		return;
	if (rp_write(log, base) == 0)
		return;
	snprintf(path, sizeof(path), "%s/" KLOG_RECOVERY_POINT_FILE, log->dir);
	(void)unlink(path);
	log->rp = -1;
}
