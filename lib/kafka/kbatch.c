/*
 * Kafka RecordBatch v2 into klog's 0.7 entries (kbatch.h).
 *
 * A produce from librdkafka carries one batch a partition, its records
 * compressed as one when a codec is set.  Each record is checked against
 * its own length and its value written as a magic-0 entry; nothing of the
 * batch is kept but the values (klog's format has no keys, timestamps or
 * headers), so the batch's own offsets and timestamps need no more than
 * the CRC-32C that covers them.
 */
#include <stdint.h>
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
#define HEADER 61                /* through count:4 */
#define MAGIC_AT 16
#define CRC_AT 17
#define ATTRS_AT 21              /* the CRC covers from here */
#define LAST_DELTA_AT 23
#define PRODUCER_ID_AT 43
#define COUNT_AT 57

#define ATTR_CODEC 0x07
#define ATTR_TRANSACTIONAL 0x10
#define ATTR_CONTROL 0x20
#define CODEC_ZSTD 4

#define VARINT_MAX 5             /* bytes of an int32 varint */
#define VARLONG_MAX 10

/* A zigzag varint of at most max bytes at *p, before end. */
static int
varint(const uint8_t **p, const uint8_t *end, int max, int64_t *v)
{
	uint64_t u = 0;

	for (int i = 0; i < max; i++) {
		uint8_t b;

		if (*p == end)
			return -KLOG_ECORRUPT;
		b = *(*p)++;
		u |= (uint64_t)(b & 0x7f) << (7 * i);
		if ((b & 0x80) == 0) {
			*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
			return 0;
		}
	}
	return -KLOG_ECORRUPT;
}

/* An int32 varint, in range. */
static int
varint32(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	if (varint(p, end, VARINT_MAX, v) < 0 || *v < INT32_MIN ||
	    *v > INT32_MAX)
		return -KLOG_ECORRUPT;
	return 0;
}

/* A length-prefixed field (-1 null: *v NULL) at *p, before end. */
static int
field(const uint8_t **p, const uint8_t *end, int nullable, const uint8_t **v,
    size_t *n)
{
	int64_t len;

	if (varint32(p, end, &len) < 0)
		return -KLOG_ECORRUPT;
	if (len == -1 && nullable) {
		*v = NULL;
		*n = 0;
		return 0;
	}
	if (len < 0 || len > end - *p)
		return -KLOG_ECORRUPT;
	*v = *p;
	*n = (size_t)len;
	*p += len;
	return 0;
}

/* The record at *p (the index-th of its batch), its value into out. */
static int
record(const uint8_t **p, const uint8_t *end, int64_t index,
    size_t max_payload, klog_buf_t *out, klog_kmsg_in_info_t *info)
{
	const uint8_t *q, *rend, *key, *value, *hv;
	int64_t len, ts, delta, headers;
	size_t keylen, vlen, hn;

	if (varint32(p, end, &len) < 0 || len < 0 || len > end - *p)
		return -KLOG_ECORRUPT;
	q = *p;
	rend = q + len;
	if (q == rend)
		return -KLOG_ECORRUPT;
	q++;                             /* attributes: none defined */
	if (varint(&q, rend, VARLONG_MAX, &ts) < 0 ||
	    varint32(&q, rend, &delta) < 0 || delta != index ||
	    field(&q, rend, 1, &key, &keylen) < 0 ||
	    field(&q, rend, 1, &value, &vlen) < 0 ||
	    varint32(&q, rend, &headers) < 0 || headers < 0)
		return -KLOG_ECORRUPT;
	for (int64_t h = 0; h < headers; h++)
		if (field(&q, rend, 0, &hv, &hn) < 0 ||
		    field(&q, rend, 1, &hv, &hn) < 0)
			return -KLOG_ECORRUPT;
	if (q != rend)
		return -KLOG_ECORRUPT;
	*p = rend;
	return klog_kmsg_add(value, vlen, max_payload, out, info);
}

/* The records of a batch, count of them filling rec[0..len) exactly. */
static int
records(const uint8_t *rec, size_t len, int64_t count, size_t max_payload,
    klog_buf_t *out, klog_kmsg_in_info_t *info)
{
	const uint8_t *p = rec, *end = rec + len;
	int r;

	for (int64_t i = 0; i < count; i++)
		if ((r = record(&p, end, i, max_payload, out, info)) < 0)
			return r;
	return p == end ? 0 : -KLOG_ECORRUPT;
}

/* The batch b[0..size): checked, then its records; zstd only if it may
 * carry it. */
static int
batch(const uint8_t *b, size_t size, int zstd, size_t max_payload,
    size_t max_inflate, klog_buf_t *out, klog_kmsg_in_info_t *info)
{
	uint16_t attrs;
	int32_t count;
	uint8_t *plain;
	size_t plain_len;
	int codec, r;

	if (b[MAGIC_AT] != 2)
		return -KLOG_ECORRUPT;
	if (klog_crc32c(0, b + ATTRS_AT, size - ATTRS_AT) !=
	    klog_be32(b + CRC_AT))
		return -KLOG_ECORRUPT;
	attrs = (uint16_t)(b[ATTRS_AT] << 8 | b[ATTRS_AT + 1]);
	codec = attrs & ATTR_CODEC;
	count = (int32_t)klog_be32(b + COUNT_AT);
	if (count <= 0 || (int32_t)klog_be32(b + LAST_DELTA_AT) != count - 1)
		return -KLOG_ECORRUPT;
	if (codec > CODEC_ZSTD)
		return -KLOG_ECORRUPT;
	if ((attrs & (ATTR_TRANSACTIONAL | ATTR_CONTROL)) ||
	    klog_be32(b + PRODUCER_ID_AT) != UINT32_MAX ||
	    klog_be32(b + PRODUCER_ID_AT + 4) != UINT32_MAX)
		return -KLOG_EUNSUPPORTED;
	if (codec == CODEC_ZSTD && !zstd) {
		info->refused_codec = codec;
		return -KLOG_EUNSUPPORTED;
	}
	info->codec = codec;
	if (codec == 0)
		return records(b + HEADER, size - HEADER, count, max_payload,
		    out, info);
	if ((r = klog_codec_inflate(codec, b + HEADER, size - HEADER,
	    max_inflate, &plain, &plain_len)) < 0)
		return r;
	r = records(plain, plain_len, count, max_payload, out, info);
	free(plain);
	return r;
}

static int
ingest(const uint8_t *set, size_t len, int zstd, size_t max_payload,
    size_t max_inflate, klog_buf_t *out, klog_kmsg_in_info_t *info)
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
		if (size < HEADER || size > len - pos) {
			r = -KLOG_ECORRUPT;
			break;
		}
		if ((r = batch(set + pos, size, zstd, max_payload, max_inflate,
		    out, info)) < 0)
			break;
		pos += size;
	}
	if (r < 0) {
		out->len = start;
		out->failed = failed;
	}
	return r;
}

int
klog_kbatch_ingest(const uint8_t *set, size_t len, size_t max_payload,
    size_t max_inflate, klog_buf_t *out, klog_kmsg_in_info_t *info)
{
	return ingest(set, len, 1, max_payload, max_inflate, out, info);
}

int
klog_kbatch_ingest_nozstd(const uint8_t *set, size_t len, size_t max_payload,
    size_t max_inflate, klog_buf_t *out, klog_kmsg_in_info_t *info)
{
	return ingest(set, len, 0, max_payload, max_inflate, out, info);
}
