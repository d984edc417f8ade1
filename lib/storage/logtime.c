/*
 * A partition log searched by time: the first record at or after a time,
 * through each segment's time index (timeindex.h); see log.h.  The
 * indexes are read and extended under the log's lock, the files read
 * without it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "klog/base/error.h"
#include "klog/storage/log.h"
#include "klog/storage/record.h"
#include "klog/storage/segment.h"
#include "klog/storage/timeindex.h"

#include "log_impl.h"

/*
 * Complete s's index up to byte to of its file fd (an entry end): what
 * appends did not note (a segment the broker opened, and what was
 * appended to it before its index reached its end) read from the file.
 * Two lookups never race (the broker makes them on its loop), but an
 * append, a cut or klog_log_time_index() on another thread may come
 * meanwhile: the join keeps what was read only if the index still ends
 * where it started.
 */
static int
complete_index(klog_log_t *log, klog_segment_t *s, int fd, int64_t to)
{
	klog_timeindex_t tail;
	int64_t from;
	int r;

	pthread_mutex_lock(&log->mu);
	from = s->times.built;
	klog_timeindex_tail(&s->times, &tail);
	pthread_mutex_unlock(&log->mu);
	if (from >= to) {
		klog_timeindex_free(&tail);
		return 0;
	}
	if ((r = klog_timeindex_build(&tail, fd, to)) < 0) {
		klog_timeindex_free(&tail);
		return r;
	}
	pthread_mutex_lock(&log->mu);
	(void)klog_timeindex_join(&s->times, &tail, from);
	pthread_mutex_unlock(&log->mu);
	return 0;
}

/* The first record at or after ts in sn below flushed: 1 and *out, 0 if
 * none there (*stamped set if it holds a timestamp at all). */
static int
search(klog_log_t *log, const struct snap *sn, int64_t flushed, int64_t ts,
    klog_log_time_t *out, int *stamped, klog_err_t *err)
{
	klog_timeindex_hit_t hit;
	int64_t max, from, to;
	int fd, r;

	pthread_mutex_lock(&log->mu);
	fd = klog_segment_pin(sn->seg, log->dir, err);
	pthread_mutex_unlock(&log->mu);
	if (fd == -KLOG_ERANGE)   /* deleted by klog-retain: passed over */
		return 0;
	if (fd < 0)
		return fd;
	if ((r = complete_index(log, sn->seg, fd, sn->size)) < 0) {
		r = klog_err_set(err, r, "%s: segment %lld: %s", log->dir,
		    (long long)sn->base, r == -KLOG_ECORRUPT ?
		    "an impossible length" : klog_strerror(r));
		goto out;
	}
	pthread_mutex_lock(&log->mu);
	max = sn->seg->times.max_ts;
	from = klog_timeindex_seek(&sn->seg->times, ts);
	to = min64(sn->seg->times.built, min64(sn->size, flushed - sn->base));
	pthread_mutex_unlock(&log->mu);
	*stamped |= max != KLOG_NO_TIMESTAMP;
	if (max < ts || from >= to)
		goto out;
	if ((r = klog_timeindex_find(fd, from, to, ts, 0, &hit)) < 0)
		r = klog_err_set(err, r, "%s: segment %lld: %s", log->dir,
		    (long long)sn->base, r == -KLOG_ECORRUPT ?
		    "an impossible length" : klog_strerror(r));
	if (r == 1)
		*out = (klog_log_time_t){ KLOG_LOG_TIME_FOUND,
		    sn->base + hit.pos, sn->base + hit.pos + hit.delta,
		    hit.timestamp };
out:
	klog_segment_unpin(sn->seg);
	return r;
}

int
klog_log_find_time(klog_log_t *log, int64_t time_ms, klog_log_time_t *out,
    klog_err_t *err)
{
	struct snap *sn;
	size_t n;
	int64_t flushed;
	int r, stamped = 0;

	*out = (klog_log_time_t){ KLOG_LOG_TIME_UNSTAMPED, -1, -1,
	    KLOG_NO_TIMESTAMP };
	if ((r = log_snapshot(log, &sn, &n, &flushed)) < 0)
		return klog_err_set(err, r, "%s: out of memory", log->dir);
	for (size_t i = 0; i < n && sn[i].base < flushed && r == 0; i++)
		r = search(log, &sn[i], flushed, time_ms, out, &stamped, err);
	log_snapshot_free(sn, n);
	if (r < 0)
		return r;
	if (r == 0 && stamped)
		out->status = KLOG_LOG_TIME_NONE;
	return 0;
}

/* Whether s is still one of log's segments (retention, a cut or a rescan
 * may have dropped it), and then its size; under the lock. */
static int
live_size(const klog_log_t *log, const klog_segment_t *s, int64_t *size)
{
	if (log->nsegs == 0 || s->base < log->segs[0]->base ||
	    log->segs[seg_find(log, s->base)] != s)
		return 0;
	*size = s->size;
	return 1;
}

/*
 * klog_log_time_index()'s work on s, pinned at fd: a chunk at a time,
 * each joined under the lock as complete_index() does, until the index
 * reaches the segment's end (which appends to the active one move on) or
 * the segment leaves the log.
 */
static int
index_segment(klog_log_t *log, klog_segment_t *s, int fd, uint8_t *buf,
    klog_log_pace_fn *pace, void *arg, klog_log_index_stats_t *st)
{
	klog_timeindex_t tail;
	int64_t from, size;
	int r, live;

	for (;;) {
		pthread_mutex_lock(&log->mu);
		live = live_size(log, s, &size);
		from = s->times.built;
		klog_timeindex_tail(&s->times, &tail);
		pthread_mutex_unlock(&log->mu);
		if (!live || from >= size)
			return 0;
		r = klog_timeindex_build_step(&tail, fd, size, buf, &st->cold);
		st->bytes += tail.built - from;
		pthread_mutex_lock(&log->mu);
		(void)klog_timeindex_join(&s->times, &tail, from);
		pthread_mutex_unlock(&log->mu);
		if (r < 0)
			return r;
		if (pace != NULL && pace(arg, st) != 0)
			return -KLOG_ECLOSED;
	}
}

int
klog_log_time_index(klog_log_t *log, klog_log_pace_fn *pace, void *arg,
    klog_log_index_stats_t *st, klog_err_t *err)
{
	struct snap *sn;
	uint8_t *buf = NULL;
	size_t n;
	int r, fd, done;

	if ((r = log_snapshot(log, &sn, &n, NULL)) < 0)
		return klog_err_set(err, r, "%s: out of memory", log->dir);
	for (size_t i = 0; i < n && r == 0; i++) {
		pthread_mutex_lock(&log->mu);
		done = sn[i].seg->times.built >= sn[i].seg->size;
		fd = done ? 0 : klog_segment_pin(sn[i].seg, log->dir, err);
		pthread_mutex_unlock(&log->mu);
		if (done || fd == -KLOG_ERANGE)  /* klog-retain's: passed over */
			continue;
		if (fd < 0) {
			r = fd;
			break;
		}
		if (buf == NULL && (buf = malloc(KLOG_TIMEINDEX_CHUNK)) == NULL)
			r = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		else if ((r = index_segment(log, sn[i].seg, fd, buf, pace, arg,
		    st)) < 0 && r != -KLOG_ECLOSED)
			r = klog_err_set(err, r, "%s: segment %lld: %s",
			    log->dir, (long long)sn[i].base,
			    r == -KLOG_ECORRUPT ? "an impossible length" :
			    klog_strerror(r));
		st->segments++;
		klog_segment_unpin(sn[i].seg);
	}
	free(buf);
	log_snapshot_free(sn, n);
	return r;
}

int64_t
klog_log_time_unindexed(klog_log_t *log)
{
	int64_t bytes = 0;

	pthread_mutex_lock(&log->mu);
	for (size_t i = 0; i < log->nsegs; i++)
		bytes += log->segs[i]->size - log->segs[i]->times.built;
	pthread_mutex_unlock(&log->mu);
	return bytes;
}

size_t
klog_log_time_index_bytes(klog_log_t *log)
{
	size_t bytes = 0;

	pthread_mutex_lock(&log->mu);
	for (size_t i = 0; i < log->nsegs; i++)
		bytes += klog_timeindex_bytes(&log->segs[i]->times);
	pthread_mutex_unlock(&log->mu);
	return bytes;
}
