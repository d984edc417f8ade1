/*
 * FETCH, and the replicas' REPLICA_FETCH and REPLICA_POS, on the wire.  A
 * broker never encodes a whole fetch response: it writes each partition's
 * header (klog_proto_put_fetch_part_header, klog_proto_put_rfetch_header)
 * and sends the set from the segment file with sendfile, so the set never
 * passes through a buffer; the clients and followers decode whole frames.
 * REPLICA_POS is REPLICA_FETCH's fields without a wait or a limit, so the
 * two share klog_rfetch_req_t.
 */
#include <stdint.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"

#include "proto_impl.h"

/* ---- FETCH ---- */

int
klog_proto_encode_fetch(klog_buf_t *b, int32_t correlation,
    const klog_fetch_req_t *req)
{
	size_t start;

	if (req->count > INT32_MAX)
		return -KLOG_EINVAL;
	for (uint32_t i = 0; i < req->count; i++)
		if (!str_ok(req->parts[i].topic))
			return -KLOG_EINVAL;
	start = proto_req_begin(b, KLOG_API_FETCH, correlation);
	klog_buf_put_i32(b, req->max_wait_ms);
	klog_buf_put_i32(b, req->min_bytes);
	klog_buf_put_i32(b, (int32_t)req->count);
	for (uint32_t i = 0; i < req->count; i++) {
		const klog_fetch_part_t *p = &req->parts[i];

		put_str(b, p->topic);
		klog_buf_put_i32(b, p->partition);
		klog_buf_put_i64(b, p->offset);
		klog_buf_put_i32(b, p->max_bytes);
	}
	return proto_finish(b, start);
}

int
klog_proto_decode_fetch(const uint8_t *body, size_t len,
    klog_fetch_req_t *req, klog_fetch_part_t *parts, uint32_t max_parts)
{
	klog_rd_t r;
	int32_t max_wait_ms, min_bytes;
	uint32_t count;
	int rc;

	klog_rd_init(&r, body, len);
	max_wait_ms = klog_rd_i32(&r);
	min_bytes = klog_rd_i32(&r);
	if ((rc = rd_count(&r, max_parts, &count)) < 0)
		return rc;
	if (max_wait_ms < 0 || min_bytes < 0)
		return -KLOG_EPROTO;
	for (uint32_t i = 0; i < count && !r.failed; i++) {
		rd_topic(&r, &parts[i].topic);
		parts[i].partition = klog_rd_i32(&r);
		parts[i].offset = klog_rd_i64(&r);
		parts[i].max_bytes = (int32_t)rd_size(&r);
	}
	if ((rc = rd_end(&r)) < 0)
		return rc;
	req->max_wait_ms = max_wait_ms;
	req->min_bytes = min_bytes;
	req->count = count;
	req->parts = parts;
	return 0;
}

void
klog_proto_put_fetch_part_header(klog_buf_t *b, klog_str_t topic,
    int32_t partition, int16_t error, int64_t log_start, int64_t log_end,
    uint32_t set_len)
{
	if (set_len > INT32_MAX) {
		b->failed = 1;
		return;
	}
	put_str(b, topic);
	klog_buf_put_i32(b, partition);
	klog_buf_put_i16(b, error);
	klog_buf_put_i64(b, log_start);
	klog_buf_put_i64(b, log_end);
	klog_buf_put_i32(b, (int32_t)set_len);
}

int
klog_proto_decode_fetch_resp(const uint8_t *body, size_t len,
    klog_fetch_result_t *res, uint32_t max, uint32_t *n)
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
		res[i].log_start = klog_rd_i64(&r);
		res[i].log_end = klog_rd_i64(&r);
		res[i].set = rd_set(&r, &res[i].set_len);
	}
	if ((rc = rd_end(&r)) < 0)
		return rc;
	*n = count;
	return 0;
}

/* ---- REPLICA_FETCH ---- */

int
klog_proto_encode_rfetch(klog_buf_t *b, int32_t correlation,
    const klog_rfetch_req_t *req)
{
	size_t start;

	if (!str_ok(req->topic))
		return -KLOG_EINVAL;
	start = proto_req_begin(b, KLOG_API_REPLICA_FETCH, correlation);
	klog_buf_put_i32(b, req->replica_id);
	klog_buf_put_i32(b, req->leader_epoch);
	klog_buf_put_i32(b, req->max_wait_ms);
	put_str(b, req->topic);
	klog_buf_put_i32(b, req->partition);
	klog_buf_put_i64(b, req->offset);
	klog_buf_put_i64(b, req->flushed);
	klog_buf_put_i32(b, req->last_epoch);
	klog_buf_put_i32(b, req->max_bytes);
	return proto_finish(b, start);
}

int
klog_proto_decode_rfetch(const uint8_t *body, size_t len,
    klog_rfetch_req_t *req)
{
	klog_rd_t r;
	int rc;

	klog_rd_init(&r, body, len);
	req->replica_id = klog_rd_i32(&r);
	req->leader_epoch = klog_rd_i32(&r);
	req->max_wait_ms = klog_rd_i32(&r);
	rd_topic(&r, &req->topic);
	req->partition = klog_rd_i32(&r);
	req->offset = klog_rd_i64(&r);
	req->flushed = klog_rd_i64(&r);
	req->last_epoch = klog_rd_i32(&r);
	req->max_bytes = (int32_t)rd_size(&r);
	if ((rc = rd_end(&r)) < 0)
		return rc;
	if (req->replica_id < 0 || req->leader_epoch < 0 ||
	    req->max_wait_ms < 0 || req->offset < 0 || req->flushed < 0 ||
	    req->last_epoch < -1)
		return -KLOG_EPROTO;
	return 0;
}

int
klog_proto_encode_rpos(klog_buf_t *b, int32_t correlation,
    const klog_rfetch_req_t *req)
{
	size_t start;

	if (!str_ok(req->topic))
		return -KLOG_EINVAL;
	start = proto_req_begin(b, KLOG_API_REPLICA_POS, correlation);
	klog_buf_put_i32(b, req->replica_id);
	klog_buf_put_i32(b, req->leader_epoch);
	put_str(b, req->topic);
	klog_buf_put_i32(b, req->partition);
	klog_buf_put_i64(b, req->offset);
	klog_buf_put_i64(b, req->flushed);
	return proto_finish(b, start);
}

int
klog_proto_decode_rpos(const uint8_t *body, size_t len,
    klog_rfetch_req_t *req)
{
	klog_rd_t r;
	int rc;

	memset(req, 0, sizeof(*req));
	klog_rd_init(&r, body, len);
	req->replica_id = klog_rd_i32(&r);
	req->leader_epoch = klog_rd_i32(&r);
	rd_topic(&r, &req->topic);
	req->partition = klog_rd_i32(&r);
	req->offset = klog_rd_i64(&r);
	req->flushed = klog_rd_i64(&r);
	req->last_epoch = -1;
	if ((rc = rd_end(&r)) < 0)
		return rc;
	if (req->replica_id < 0 || req->leader_epoch < 0 || req->offset < 0 ||
	    req->flushed < 0)
		return -KLOG_EPROTO;
	return 0;
}

void
klog_proto_put_rfetch_header(klog_buf_t *b, const klog_rfetch_resp_t *r)
{
	if (r->set_len > INT32_MAX) {
		b->failed = 1;
		return;
	}
	klog_buf_put_i16(b, r->error);
	klog_buf_put_i32(b, r->leader_epoch);
	klog_buf_put_i64(b, r->hw);
	klog_buf_put_i64(b, r->log_start);
	klog_buf_put_i64(b, r->log_end);
	klog_buf_put_i32(b, r->chunk_epoch);
	klog_buf_put_i32(b, r->diverging_epoch);
	klog_buf_put_i64(b, r->diverging_end);
	klog_buf_put_i32(b, (int32_t)r->set_len);
}

int
klog_proto_decode_rfetch_resp(const uint8_t *body, size_t len,
    klog_rfetch_resp_t *out)
{
	klog_rd_t r;
	int rc;

	klog_rd_init(&r, body, len);
	out->error = klog_rd_i16(&r);
	out->leader_epoch = klog_rd_i32(&r);
	out->hw = klog_rd_i64(&r);
	out->log_start = klog_rd_i64(&r);
	out->log_end = klog_rd_i64(&r);
	out->chunk_epoch = klog_rd_i32(&r);
	out->diverging_epoch = klog_rd_i32(&r);
	out->diverging_end = klog_rd_i64(&r);
	out->set = rd_set(&r, &out->set_len);
	if ((rc = rd_end(&r)) < 0)
		return rc;
	if (out->diverging_epoch >= 0 && out->diverging_end < 0)
		return -KLOG_EPROTO;
	return 0;
}

/* ---- decoding into an array that grows ---- */

/*
 * Where the count field is and the fewest bytes one entry takes: after
 * max wait and min bytes (4 + 4), an entry at least topic (2), partition
 * (4), offset (8) and max (4).
 */
#define FETCH_COUNT_AT 8
#define FETCH_ENTRY_MIN 18

int
klog_proto_decode_fetch_grow(const uint8_t *body, size_t len,
    klog_fetch_req_t *req, klog_proto_array_t *a)
{
	int64_t n = peek_count(body, len, FETCH_COUNT_AT, FETCH_ENTRY_MIN);
	int rc;

	if ((rc = array_fit(a, n, sizeof(klog_fetch_part_t))) < 0)
		return rc;
	return klog_proto_decode_fetch(body, len, req, a->p, (uint32_t)n);
}
