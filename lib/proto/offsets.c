/*
 * OFFSETS on the wire: the offsets before a time (-1 latest, -2 earliest)
 * of each partition asked about, or at version 2 the first record at or
 * after it.  The response's offsets stay a view of
 * big-endian int64s in the frame, read one at a time by
 * klog_proto_offset_at(), so decoding allocates nothing however many
 * offsets a broker sends.
 */
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"

#include "proto_impl.h"

/* ---- OFFSETS ---- */

int
klog_proto_encode_offsets(klog_buf_t *b, int32_t correlation,
    const klog_offsets_part_t *parts, uint32_t n)
{
	size_t start;

	if (n > INT32_MAX)
		return -KLOG_EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (!str_ok(parts[i].topic))
			return -KLOG_EINVAL;
	start = proto_req_begin(b, KLOG_API_OFFSETS, correlation);
	klog_buf_put_i32(b, (int32_t)n);
	for (uint32_t i = 0; i < n; i++) {
		put_str(b, parts[i].topic);
		klog_buf_put_i32(b, parts[i].partition);
		klog_buf_put_i64(b, parts[i].time);
		klog_buf_put_i32(b, parts[i].max);
	}
	return proto_finish(b, start);
}

int
klog_proto_encode_offsets_at(klog_buf_t *b, int32_t correlation,
    const klog_offsets_part_t *parts, uint32_t n)
{
	size_t start = b->len;
	int rc;

	if ((rc = klog_proto_encode_offsets(b, correlation, parts, n)) < 0)
		return rc;
	/* The header's version: after size and api. */
	b->data[start + 6] = 0;
	b->data[start + 7] = KLOG_PROTO_VERSION_OFFSETS_AT;
	return 0;
}

int
klog_proto_decode_offsets(const uint8_t *body, size_t len,
    klog_offsets_part_t *parts, uint32_t max, uint32_t *n)
{
	klog_rd_t r;
	uint32_t count;
	int rc;

	klog_rd_init(&r, body, len);
	if ((rc = rd_count(&r, max, &count)) < 0)
		return rc;
	for (uint32_t i = 0; i < count && !r.failed; i++) {
		rd_topic(&r, &parts[i].topic);
		parts[i].partition = klog_rd_i32(&r);
		parts[i].time = klog_rd_i64(&r);
		parts[i].max = (int32_t)rd_size(&r);
		/* Below -2 a time is neither a special value nor a date. */
		if (parts[i].time < KLOG_OFFSET_EARLIEST)
			return -KLOG_EPROTO;
	}
	if ((rc = rd_end(&r)) < 0)
		return rc;
	*n = count;
	return 0;
}

int
klog_proto_encode_offsets_resp(klog_buf_t *b, int32_t correlation,
    const klog_offsets_part_t *parts, const int16_t *errors,
    const int64_t *const *offsets, const int32_t *counts, uint32_t n)
{
	size_t start;

	if (n > INT32_MAX)
		return -KLOG_EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (!str_ok(parts[i].topic) || counts[i] < 0)
			return -KLOG_EINVAL;
	start = proto_resp_begin(b, correlation, KLOG_WIRE_NONE);
	klog_buf_put_i32(b, (int32_t)n);
	for (uint32_t i = 0; i < n; i++) {
		put_str(b, parts[i].topic);
		klog_buf_put_i32(b, parts[i].partition);
		klog_buf_put_i16(b, errors[i]);
		klog_buf_put_i32(b, counts[i]);
		for (int32_t j = 0; j < counts[i]; j++)
			klog_buf_put_i64(b, offsets[i][j]);
	}
	return proto_finish(b, start);
}

int
klog_proto_decode_offsets_resp(const uint8_t *body, size_t len,
    klog_offsets_result_t *res, uint32_t max, uint32_t *n)
{
	klog_rd_t r;
	uint32_t count, k;
	int rc;

	klog_rd_init(&r, body, len);
	if ((rc = rd_count(&r, max, &count)) < 0)
		return rc;
	for (uint32_t i = 0; i < count && !r.failed; i++) {
		rd_topic(&r, &res[i].topic);
		res[i].partition = klog_rd_i32(&r);
		res[i].error = klog_rd_i16(&r);
		k = rd_size(&r);
		/* Compare before multiplying: k * 8 could wrap a 32-bit size_t. */
		if (k > klog_rd_left(&r) / 8) {
			r.failed = 1;
			break;
		}
		res[i].count = (int32_t)k;
		res[i].raw = klog_rd_bytes(&r, (size_t)k * 8);
	}
	if ((rc = rd_end(&r)) < 0)
		return rc;
	*n = count;
	return 0;
}

int64_t
klog_proto_offset_at(const klog_offsets_result_t *r, int32_t i)
{
	klog_rd_t rd;

	if (i < 0 || i >= r->count)
		return -1;
	klog_rd_init(&rd, r->raw + (size_t)i * 8, 8);
	return klog_rd_i64(&rd);
}

/* ---- decoding into an array that grows ---- */

/* The count field comes first; an entry takes at least topic (2),
 * partition (4), time (8) and max (4). */
#define OFFSETS_ENTRY_MIN 18

int
klog_proto_decode_offsets_grow(const uint8_t *body, size_t len,
    klog_proto_array_t *a, uint32_t *got)
{
	int64_t n = peek_count(body, len, 0, OFFSETS_ENTRY_MIN);
	int rc;

	if ((rc = array_fit(a, n, sizeof(klog_offsets_part_t))) < 0)
		return rc;
	return klog_proto_decode_offsets(body, len, a->p, (uint32_t)n, got);
}
