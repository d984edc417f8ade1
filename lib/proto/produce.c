/*
 * PRODUCE on the wire: the request a producer encodes and the broker
 * decodes (into an array that grows to the request's count), and the
 * response, which the broker encodes before its appends are written and
 * whose results it then turns into errors in place where the log refused
 * them (klog_proto_encode_produce_resp_at, klog_proto_patch_produce_result).
 * The request's decoder is the broker's busiest; the readers it loops with
 * are proto_impl.h's inline ones.
 */
#include <stdint.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"

#include "proto_impl.h"

/* ---- PRODUCE ---- */

int
klog_proto_encode_produce(klog_buf_t *b, int32_t correlation,
    const klog_produce_req_t *req)
{
	size_t start;

	if (req->count > INT32_MAX)
		return -KLOG_EINVAL;
	for (uint32_t i = 0; i < req->count; i++)
		if (!str_ok(req->parts[i].topic) ||
		    req->parts[i].set_len > INT32_MAX)
			return -KLOG_EINVAL;
	start = proto_req_begin(b, KLOG_API_PRODUCE, correlation);
	klog_buf_put_i16(b, req->acks);
	klog_buf_put_i32(b, req->timeout_ms);
	klog_buf_put_i32(b, (int32_t)req->count);
	for (uint32_t i = 0; i < req->count; i++) {
		const klog_produce_part_t *p = &req->parts[i];

		put_str(b, p->topic);
		klog_buf_put_i32(b, p->partition);
		klog_buf_put_i32(b, (int32_t)p->set_len);
		klog_buf_put(b, p->set, p->set_len);
	}
	return proto_finish(b, start);
}

int
klog_proto_decode_produce(const uint8_t *body, size_t len,
    klog_produce_req_t *req, klog_produce_part_t *parts, uint32_t max_parts)
{
	klog_rd_t r;
	int16_t acks;
	int32_t timeout_ms;
	uint32_t count;
	int rc;

	klog_rd_init(&r, body, len);
	acks = klog_rd_i16(&r);
	timeout_ms = klog_rd_i32(&r);
	if ((rc = rd_count(&r, max_parts, &count)) < 0)
		return rc;
	if (timeout_ms < 0 || (acks != KLOG_ACKS_NONE &&
	    acks != KLOG_ACKS_LEADER && acks != KLOG_ACKS_ALL))
		return -KLOG_EPROTO;
	for (uint32_t i = 0; i < count && !r.failed; i++) {
		rd_topic(&r, &parts[i].topic);
		parts[i].partition = klog_rd_i32(&r);
		parts[i].set = rd_set(&r, &parts[i].set_len);
	}
	if ((rc = rd_end(&r)) < 0)
		return rc;
	req->acks = acks;
	req->timeout_ms = timeout_ms;
	req->count = count;
	req->parts = parts;
	return 0;
}

/* errpos, if not NULL, gets where each result's error field is. */
static int
encode_produce_resp(klog_buf_t *b, int32_t correlation,
    const klog_produce_result_t *res, uint32_t n, size_t *errpos)
{
	size_t start;

	if (n > INT32_MAX)
		return -KLOG_EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (!str_ok(res[i].topic))
			return -KLOG_EINVAL;
	start = proto_resp_begin(b, correlation, KLOG_WIRE_NONE);
	klog_buf_put_i32(b, (int32_t)n);
	for (uint32_t i = 0; i < n; i++) {
		put_str(b, res[i].topic);
		klog_buf_put_i32(b, res[i].partition);
		if (errpos != NULL)
			errpos[i] = b->len;
		klog_buf_put_i16(b, res[i].error);
		klog_buf_put_i64(b, res[i].offset);
	}
	return proto_finish(b, start);
}

int
klog_proto_encode_produce_resp(klog_buf_t *b, int32_t correlation,
    const klog_produce_result_t *res, uint32_t n)
{
	return encode_produce_resp(b, correlation, res, n, NULL);
}

int
klog_proto_encode_produce_resp_at(klog_buf_t *b, int32_t correlation,
    const klog_produce_result_t *res, uint32_t n, size_t *errpos)
{
	return encode_produce_resp(b, correlation, res, n, errpos);
}

void
klog_proto_patch_produce_result(klog_buf_t *b, size_t pos, int16_t error)
{
	if (pos > b->len || b->len - pos < 10)
		return;
	b->data[pos] = (uint8_t)((uint16_t)error >> 8);
	b->data[pos + 1] = (uint8_t)error;
	memset(b->data + pos + 2, 0xff, 8);  /* offset -1 */
}

int
klog_proto_decode_produce_resp(const uint8_t *body, size_t len,
    klog_produce_result_t *res, uint32_t max, uint32_t *n)
{
	klog_rd_t r;
	uint32_t count;
	int rc;

	klog_rd_init(&r, body, len);
	if ((rc = rd_count(&r, max, &count)) < 0)
		return rc;
	for (uint32_t i = 0; i < count && !r.failed; i++) {
		rd_topic(&r, &res[i].topic);
		res[i].partition = klog_rd_i32(&r);
		res[i].error = klog_rd_i16(&r);
		res[i].offset = klog_rd_i64(&r);
	}
	if ((rc = rd_end(&r)) < 0)
		return rc;
	*n = count;
	return 0;
}

/* ---- decoding into an array that grows ---- */

/*
 * Where the count field is and the fewest bytes one entry takes: after
 * acks (2) and timeout (4), an entry at least topic (2), partition (4) and
 * set size (4).
 */
#define PRODUCE_COUNT_AT 6
#define PRODUCE_ENTRY_MIN 10

int
klog_proto_decode_produce_grow(const uint8_t *body, size_t len,
    klog_produce_req_t *req, klog_proto_array_t *a)
{
	int64_t n = peek_count(body, len, PRODUCE_COUNT_AT, PRODUCE_ENTRY_MIN);
	int rc;

	if ((rc = array_fit(a, n, sizeof(klog_produce_part_t))) < 0)
		return rc;
	return klog_proto_decode_produce(body, len, req, a->p, (uint32_t)n);
}
