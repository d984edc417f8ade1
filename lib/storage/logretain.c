/*
 * A partition log's segments seen whole: listed, searched by time for
 * OFFSETS, and retained; see log.h.  Snapshots are taken under the log's
 * lock and stat()ed without it.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/clock.h"
#include "klog/base/error.h"
#include "klog/storage/log.h"
#include "klog/storage/retain.h"
#include "klog/storage/segment.h"

#include "log_impl.h"

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

	if ((r = log_snapshot(log, &sn, &count, NULL)) < 0)
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
	log_snapshot_free(sn, count);
	return r == -KLOG_ENOENT ? 0 : r;
}

struct offset_time {
	int64_t offset, ms;
};

/*
 * Kafka 0.7's Log.getOffsetsBefore, with one difference: a segment that
 * starts past the flushed end (rolled, not yet flushed) is left out, so that
 * no returned offset is beyond what a reader may fetch; but when every
 * segment up to the flushed end was deleted, the first one left is the
 * answer, and the rescan that follows moves the flushed end up to it.
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
	if ((r = log_snapshot(log, &sn, &count, &flushed)) < 0)
		return r;
	if ((ot = malloc((count + 1) * sizeof(*ot))) == NULL) {
		log_snapshot_free(sn, count);
		return -KLOG_ENOMEM;
	}
	/* Past the flushed end only when every segment up to it is gone
	 * (klog-retain beside a producer the flusher lags): the first one
	 * left is then where the log starts and, until the flush, ends. */
	for (size_t i = 0; i < count && (sn[i].base <= flushed || k == 0);
	    i++) {
		if ((r = snap_mtime(log, &sn[i], &ms)) == -KLOG_ENOENT) {
			gone = 1;
			continue;
		}
		if (r < 0)
			goto out;
		ot[k].offset = sn[i].base;
		ot[k++].ms = ms;
		if (sn[i].base > flushed)
			break;
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
	log_snapshot_free(sn, count);
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
		r = log_roll(log, err);
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
	if ((r = log_snapshot(log, &sn, &n, NULL)) < 0)
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
	log_snapshot_free(sn, n);
	return r;
}

int
klog_log_rescan(klog_log_t *log, klog_err_t *err)
{
	struct snap *sn;
	size_t n, k, deleted = 0;
	int64_t ms, bytes = 0;
	int r = 0;

	if ((r = log_snapshot(log, &sn, &n, NULL)) < 0)
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
	log_snapshot_free(sn, n);
	return r;
}
