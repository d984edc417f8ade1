/*
 * Kafka RecordBatch v2 into klog's magic-2 entries (kbatch.h).
 *
 * A produce from librdkafka carries one batch a partition, its records
 * compressed as one when a codec is set.  The batch is checked as a Kafka
 * broker checks it (its CRC-32C, its counts, every record's framing after
 * decompression), then its body, from the attributes on, is stored as it
 * came: compressed batches stay compressed, and a fetch at v4 or later
 * serves the body back unread (kmsg.h).  Only lastOffsetDelta is the
 * broker's, for klog's byte offsets (record.h), and, under LogAppendTime,
 * the timestamp type and maxTimestamp; the entry is resealed after.
 */
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kbatch.h"
#include "klog/kafka/kmsg.h"
#include "klog/storage/codec.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define LOG_OVERHEAD 12          /* baseOffset:8 batchLength:4 */
#define MAGIC_AT 16
#define CRC_AT 17
#define BODY_AT 21               /* attributes: the CRC covers from here */
#define HEADER (BODY_AT + KLOG_BATCH_BODY_HEADER)

/* The records rec[0..len) of a batch: count of them, offset deltas 0,
 * 1, ..., filling it exactly. */
static int
records(const uint8_t *rec, size_t len, int32_t count)
{
	klog_record_t r;
	size_t pos = 0;

	for (int32_t i = 0; i < count; i++) {
		if (klog_record_read(rec + pos, len - pos, &r) < 0 ||
		    r.offset_delta != i)
			return -KLOG_ECORRUPT;
		pos += r.size;
	}
	return pos == len ? 0 : -KLOG_ECORRUPT;
}

/* The batch b[0..size) checked, its header into *h. */
static int
check(const uint8_t *b, size_t size, const klog_kingest_t *opt,
    klog_kmsg_in_info_t *info, klog_batch_t *h)
{
	int codec, r;
	uint8_t *plain;
	size_t plain_len;

	if (size > opt->max_message)
		return -KLOG_ETOOBIG;
	if (b[MAGIC_AT] != 2 || klog_crc32c(0, b + BODY_AT, size - BODY_AT) !=
	    klog_be32(b + CRC_AT))
		return -KLOG_ECORRUPT;
	klog_batch_read(b + BODY_AT, size - BODY_AT, h);
	codec = h->attributes & KLOG_BATCH_CODEC_MASK;
	if (h->count <= 0 || h->last_offset_delta != h->count - 1 ||
	    codec > KLOG_CODEC_MAX)
		return -KLOG_ECORRUPT;
	if (h->attributes & (KLOG_BATCH_TRANSACTIONAL | KLOG_BATCH_CONTROL))
		return -KLOG_EUNSUPPORTED;
	if (codec == KLOG_CODEC_ZSTD && !opt->zstd) {
		info->refused_codec = codec;
		return -KLOG_EUNSUPPORTED;
	}
	info->codec = codec;
	if (codec == 0)
		return records(b + HEADER, size - HEADER, h->count);
	if ((r = klog_codec_inflate(codec, b + HEADER, size - HEADER,
	    opt->max_inflate, &plain, &plain_len)) < 0)
		return r;
	r = records(plain, plain_len, h->count);
	free(plain);
	return r;
}

/* The body's timestamp type and maxTimestamp as the broker's: Kafka's
 * LogAppendTime stamps the batch (its records then read maxTimestamp),
 * CreateTime keeps the producer's, and a producer does not choose. */
static void
stamp(uint8_t *body, const klog_batch_t *h, int64_t append_time)
{
	klog_batch_t b = *h;

	if (append_time == KLOG_NO_TIMESTAMP) {
		if (!(b.attributes & KLOG_BATCH_LOG_APPEND_TIME))
			return;
		b.attributes &= (uint16_t)~KLOG_BATCH_LOG_APPEND_TIME;
	} else {
		b.attributes |= KLOG_BATCH_LOG_APPEND_TIME;
		b.max_timestamp = append_time;
	}
	klog_batch_write(body, &b);
}

/* The batch b[0..size), checked, as one magic-2 entry onto out. */
static int
batch(const uint8_t *b, size_t size, const klog_kingest_t *opt,
    klog_buf_t *out, klog_kmsg_in_info_t *info)
{
	size_t body = size - BODY_AT;
	size_t e = KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER + body;
	klog_batch_t h;
	uint8_t *p;
	int r;

	if ((r = check(b, size, opt, info, &h)) < 0)
		return r;
	/* Record i's offset is the entry's plus i, and the last one's at
	 * most its last byte's (record.h): a compressed batch holding more
	 * records than bytes cannot be numbered. */
	if ((size_t)h.count - 1 > KLOG_MAGIC2_HEADER + body + 3)
		return -KLOG_ECORRUPT;
	if (klog_buf_reserve(out, e) < 0)
		return -KLOG_ENOMEM;
	p = out->data + out->len;
	klog_put_be32(p, (uint32_t)(KLOG_MAGIC2_HEADER + body));
	p[KLOG_LENGTH_SIZE] = KLOG_MAGIC2;
	memcpy(p + KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER, b + BODY_AT, body);
	stamp(p + KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER, &h, opt->append_time);
	klog_batch_seal(p, e);
	out->len += e;
	if (info->messages == 0)
		info->first_delta = 0;
	info->messages += (uint32_t)h.count;
	return 0;
}

int
klog_kbatch_ingest(const uint8_t *set, size_t len, const klog_kingest_t *opt,
    klog_buf_t *out, klog_kmsg_in_info_t *info)
{
	size_t start = out->len, pos = 0, size;
	int failed = out->failed, r = 0;

	memset(info, 0, sizeof(*info));
	while (pos < len) {
		if (len - pos < LOG_OVERHEAD) {
			r = -KLOG_ECORRUPT;
			break;
		}
		size = LOG_OVERHEAD + (size_t)klog_be32(set + pos + 8);
		if (size < HEADER || size > len - pos || size - BODY_AT >
		    KLOG_MAX_ENTRY_LENGTH - KLOG_MAGIC2_HEADER) {
			r = -KLOG_ECORRUPT;
			break;
		}
		if ((r = batch(set + pos, size, opt, out, info)) < 0)
			break;
		pos += size;
	}
	if (r < 0) {
		out->len = start;
		out->failed = failed;
	}
	return r;
}
