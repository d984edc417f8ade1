/* Where a read's bytes are in a partition log; see log.h. */
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
#include "klog/storage/segment.h"

#include "log_impl.h"

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
klog_log_slice_part(const klog_log_slice_t *src, size_t pos, size_t len,
    klog_log_slice_t *out)
{
	klog_segment_t *s = src->seg;

	klog_segment_ref(s);
	klog_segment_repin(s);
	*out = (klog_log_slice_t){ .fd = src->fd,
	    .file_pos = src->file_pos + (int64_t)pos, .len = len,
	    .offset = src->offset + (int64_t)pos, .seg = s };
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

