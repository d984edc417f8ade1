/*
 * A magic-2 body's records, one at a time (batchiter.h).  Apart from the
 * message iterator so that format.c stays the 0.7 framing and this the
 * RecordBatch; it sits between format and record, codec.
 */
#include <stdlib.h>
#include <string.h>

#include "klog/base/error.h"
#include "klog/storage/batchiter.h"
#include "klog/storage/codec.h"
#include "klog/storage/record.h"

static const char *
inflate_why(int r)
{
	return r == -KLOG_ETOOBIG ? "records inflate past the limit" :
	    r == -KLOG_ENOMEM ? "out of memory" : "records do not decompress";
}

int
klog_batchiter_open(klog_batchiter_t *bi, const uint8_t *body, size_t len,
    size_t max_inflate, const char **why)
{
	int codec, r;

	memset(bi, 0, sizeof(*bi));
	if (klog_batch_read(body, len, &bi->batch) < 0) {
		*why = "batch header cut";
		return -KLOG_ECORRUPT;
	}
	codec = bi->batch.attributes & KLOG_BATCH_CODEC_MASK;
	if (codec > KLOG_CODEC_MAX) {
		*why = "unknown compression codec";
		return -KLOG_ECORRUPT;
	}
	if (bi->batch.count < 0) {
		*why = "records do not match the batch's count";
		return -KLOG_ECORRUPT;
	}
	bi->recs = body + KLOG_BATCH_BODY_HEADER;
	bi->len = len - KLOG_BATCH_BODY_HEADER;
	if (codec != KLOG_CODEC_NONE) {
		r = klog_codec_inflate(codec, bi->recs, bi->len, max_inflate,
		    &bi->owned, &bi->len);
		if (r < 0) {
			*why = inflate_why(r);
			return r;
		}
		bi->recs = bi->owned;
	}
	if ((r = klog_record_scan(bi->recs, bi->len, bi->batch.count, why)) < 0)
		klog_batchiter_close(bi);
	return r;
}

static int64_t
timestamp_of(const klog_batch_t *b, int64_t delta)
{
	if (b->attributes & KLOG_BATCH_LOG_APPEND_TIME)
		return b->max_timestamp;
	if (b->first_timestamp == KLOG_NO_TIMESTAMP)
		return KLOG_NO_TIMESTAMP;
	return (int64_t)((uint64_t)b->first_timestamp + (uint64_t)delta);
}

int
klog_batchiter_next(klog_batchiter_t *bi, klog_record_t *r,
    int64_t *timestamp)
{
	if (bi->index >= bi->batch.count)
		return 0;
	/* Cannot fail: open() read every record. */
	if (klog_record_read(bi->recs + bi->pos, bi->len - bi->pos, r) < 0)
		return 0;
	bi->pos += r->size;
	bi->index++;
	*timestamp = timestamp_of(&bi->batch, r->timestamp_delta);
	return 1;
}

void
klog_batchiter_close(klog_batchiter_t *bi)
{
	free(bi->owned);
	bi->owned = NULL;
	bi->recs = NULL;
	bi->len = bi->pos = 0;
	bi->index = bi->batch.count;
}
