/*
 * The wire protocol: framing, encoders and decoders for every API.  Layouts
 * are drawn in include/klog/proto.h and man/klog-protocol.7.
 *
 * Decoders read through a sticky klog_rd_t and check it once at the end, so
 * a short body can never be read past.  They run on bytes straight from the
 * network: nothing is allocated (the _grow wrappers at the end size the
 * caller's array first, from a count checked against the body's length),
 * every count is checked against the caller's array before an entry is
 * stored, and results are views into the body.
 * Encoders validate their input before writing, so an -KLOG_EINVAL leaves
 * the buffer as it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"

static const char *const wire_names[KLOG_WIRE_ERROR_MAX] = {
	[KLOG_WIRE_NONE] = "NONE",
	[KLOG_WIRE_OFFSET_OUT_OF_RANGE] = "OFFSET_OUT_OF_RANGE",
	[KLOG_WIRE_INVALID_MESSAGE] = "INVALID_MESSAGE",
	[KLOG_WIRE_WRONG_PARTITION] = "WRONG_PARTITION",
	[KLOG_WIRE_INVALID_FETCH_SIZE] = "INVALID_FETCH_SIZE",
	[KLOG_WIRE_MESSAGE_TOO_LARGE] = "MESSAGE_TOO_LARGE",
	[KLOG_WIRE_INVALID_TOPIC] = "INVALID_TOPIC",
	[KLOG_WIRE_UNKNOWN_TOPIC] = "UNKNOWN_TOPIC",
	[KLOG_WIRE_NOT_BOUNDARY] = "NOT_BOUNDARY",
	[KLOG_WIRE_STORAGE_ERROR] = "STORAGE_ERROR",
	[KLOG_WIRE_DISK_FULL] = "DISK_FULL",
	[KLOG_WIRE_INVALID_REQUEST] = "INVALID_REQUEST",
	[KLOG_WIRE_UNSUPPORTED_VERSION] = "UNSUPPORTED_VERSION",
	[KLOG_WIRE_UNKNOWN_API] = "UNKNOWN_API",
	[KLOG_WIRE_REQUEST_TOO_LARGE] = "REQUEST_TOO_LARGE",
	[KLOG_WIRE_UNSUPPORTED_CODEC] = "UNSUPPORTED_CODEC",
	[KLOG_WIRE_PARTIAL_MESSAGE] = "PARTIAL_MESSAGE",
	[KLOG_WIRE_NOT_LEADER] = "NOT_LEADER",
	[KLOG_WIRE_NOT_ENOUGH_REPLICAS] = "NOT_ENOUGH_REPLICAS",
	[KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND] =
	    "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
	[KLOG_WIRE_FENCED_LEADER_EPOCH] = "FENCED_LEADER_EPOCH",
	[KLOG_WIRE_TOPIC_EXISTS] = "TOPIC_EXISTS",
	[KLOG_WIRE_INVALID_PARTITIONS] = "INVALID_PARTITIONS",
	[KLOG_WIRE_TOPIC_REPLICATED] = "TOPIC_REPLICATED",
};

const char *
klog_wire_error_name(int code)
{
	if (code < 0 || code >= KLOG_WIRE_ERROR_MAX || wire_names[code] == NULL)
		return "UNKNOWN";
	return wire_names[code];
}

int
klog_wire_error_to_klog(int code)
{
	switch (code) {
	case KLOG_WIRE_NONE:
		return 0;
	case KLOG_WIRE_OFFSET_OUT_OF_RANGE:
		return -KLOG_ERANGE;
	case KLOG_WIRE_INVALID_MESSAGE:
		return -KLOG_ECORRUPT;
	case KLOG_WIRE_WRONG_PARTITION:
		return -KLOG_ENOPARTITION;
	case KLOG_WIRE_INVALID_FETCH_SIZE:
		return -KLOG_EINVAL;
	case KLOG_WIRE_MESSAGE_TOO_LARGE:
	case KLOG_WIRE_REQUEST_TOO_LARGE:
		return -KLOG_ETOOBIG;
	case KLOG_WIRE_INVALID_TOPIC:
		return -KLOG_ETOPIC;
	case KLOG_WIRE_UNKNOWN_TOPIC:
		return -KLOG_ENOTOPIC;
	case KLOG_WIRE_NOT_BOUNDARY:
		return -KLOG_ENOTBOUNDARY;
	case KLOG_WIRE_STORAGE_ERROR:
		return -KLOG_EIO;
	case KLOG_WIRE_DISK_FULL:
		return -KLOG_ENOSPC;
	case KLOG_WIRE_INVALID_REQUEST:
		return -KLOG_EPROTO;
	case KLOG_WIRE_UNSUPPORTED_VERSION:
	case KLOG_WIRE_UNKNOWN_API:
	case KLOG_WIRE_UNSUPPORTED_CODEC:
		return -KLOG_EUNSUPPORTED;
	case KLOG_WIRE_PARTIAL_MESSAGE:
		return -KLOG_EPARTIAL;
	case KLOG_WIRE_NOT_LEADER:
		return -KLOG_ENOTLEADER;
	case KLOG_WIRE_NOT_ENOUGH_REPLICAS:
	case KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
		return -KLOG_ENOREPLICAS;
	case KLOG_WIRE_FENCED_LEADER_EPOCH:
		return -KLOG_EFENCED;
	case KLOG_WIRE_TOPIC_EXISTS:
		return -KLOG_EEXIST;
	case KLOG_WIRE_INVALID_PARTITIONS:
		return -KLOG_EINVAL;
	case KLOG_WIRE_TOPIC_REPLICATED:
		return -KLOG_EBUSY;
	default:
		return -KLOG_EBROKER;
	}
}

/*
 * Several wire codes share a library code; the reverse picks the one a
 * broker means when the library returns it from an append or a read (an
 * unsupported API or version is answered from the header, not from here).
 */
int
klog_wire_error_from_klog(int err)
{
	switch (err < 0 ? -err : err) {
	case KLOG_OK:
		return KLOG_WIRE_NONE;
	case KLOG_ERANGE:
		return KLOG_WIRE_OFFSET_OUT_OF_RANGE;
	case KLOG_ECORRUPT:
		return KLOG_WIRE_INVALID_MESSAGE;
	case KLOG_ENOPARTITION:
		return KLOG_WIRE_WRONG_PARTITION;
	case KLOG_EINVAL:
		return KLOG_WIRE_INVALID_FETCH_SIZE;
	case KLOG_ETOOBIG:
		return KLOG_WIRE_MESSAGE_TOO_LARGE;
	case KLOG_ETOPIC:
		return KLOG_WIRE_INVALID_TOPIC;
	case KLOG_ENOTOPIC:
		return KLOG_WIRE_UNKNOWN_TOPIC;
	case KLOG_ENOTBOUNDARY:
		return KLOG_WIRE_NOT_BOUNDARY;
	case KLOG_EIO:
	case KLOG_ESTORAGE:
		return KLOG_WIRE_STORAGE_ERROR;
	case KLOG_ENOSPC:
		return KLOG_WIRE_DISK_FULL;
	case KLOG_EPROTO:
		return KLOG_WIRE_INVALID_REQUEST;
	case KLOG_EUNSUPPORTED:
		return KLOG_WIRE_UNSUPPORTED_CODEC;
	case KLOG_EPARTIAL:
		return KLOG_WIRE_PARTIAL_MESSAGE;
	case KLOG_ENOTLEADER:
		return KLOG_WIRE_NOT_LEADER;
	case KLOG_ENOREPLICAS:
		return KLOG_WIRE_NOT_ENOUGH_REPLICAS;
	case KLOG_EFENCED:
		return KLOG_WIRE_FENCED_LEADER_EPOCH;
	default:
		return KLOG_WIRE_UNKNOWN;
	}
}

const char *
klog_proto_api_name(int api)
{
	switch (api) {
	case KLOG_API_PRODUCE:
		return "PRODUCE";
	case KLOG_API_FETCH:
		return "FETCH";
	case KLOG_API_OFFSETS:
		return "OFFSETS";
	case KLOG_API_METADATA:
		return "METADATA";
	case KLOG_API_REPLICA_FETCH:
		return "REPLICA_FETCH";
	case KLOG_API_REPLICA_POS:
		return "REPLICA_POS";
	case KLOG_API_CREATE_TOPIC:
		return "CREATE_TOPIC";
	case KLOG_API_ALTER_TOPIC:
		return "ALTER_TOPIC";
	case KLOG_API_DELETE_TOPIC:
		return "DELETE_TOPIC";
	default:
		return "UNKNOWN";
	}
}

/* ---- framing ---- */

/*
 * The size field alone decides whether a frame is acceptable, so it is
 * judged as soon as its 4 bytes are in: a peer sending a bad size is not
 * left waiting for the rest of a header.
 */
static int
frame_size(const uint8_t *buf, size_t len, size_t max_size, int32_t min,
    int32_t *size)
{
	klog_rd_t r;
	int32_t s;

	if (len < 4)
		return -KLOG_EPARTIAL;
	klog_rd_init(&r, buf, len);
	s = klog_rd_i32(&r);
	if (s < min)
		return -KLOG_EPROTO;
	if ((uint32_t)s > max_size)
		return -KLOG_ETOOBIG;
	*size = s;
	return 0;
}

int
klog_proto_req_header(const uint8_t *buf, size_t len, size_t max_size,
    klog_req_header_t *h)
{
	klog_rd_t r;
	int rc;

	if ((rc = frame_size(buf, len, max_size, KLOG_REQ_HEADER_SIZE - 4,
	    &h->size)) < 0)
		return rc;
	if (len < KLOG_REQ_HEADER_SIZE)
		return -KLOG_EPARTIAL;
	klog_rd_init(&r, buf + 4, KLOG_REQ_HEADER_SIZE - 4);
	h->api = klog_rd_i16(&r);
	h->version = klog_rd_i16(&r);
	h->correlation = klog_rd_i32(&r);
	return 0;
}

int
klog_proto_resp_header(const uint8_t *buf, size_t len, size_t max_size,
    klog_resp_header_t *h)
{
	klog_rd_t r;
	int rc;

	if ((rc = frame_size(buf, len, max_size, KLOG_RESP_HEADER_SIZE - 4,
	    &h->size)) < 0)
		return rc;
	if (len < KLOG_RESP_HEADER_SIZE)
		return -KLOG_EPARTIAL;
	klog_rd_init(&r, buf + 4, KLOG_RESP_HEADER_SIZE - 4);
	h->correlation = klog_rd_i32(&r);
	h->error = klog_rd_i16(&r);
	return 0;
}

size_t
klog_proto_req_begin(klog_buf_t *b, int16_t api, int32_t correlation)
{
	size_t start = b->len;

	klog_buf_put_i32(b, 0);
	klog_buf_put_i16(b, api);
	klog_buf_put_i16(b, KLOG_PROTO_VERSION);
	klog_buf_put_i32(b, correlation);
	return start;
}

size_t
klog_proto_resp_begin(klog_buf_t *b, int32_t correlation, int16_t error)
{
	size_t start = b->len;

	klog_buf_put_i32(b, 0);
	klog_buf_put_i32(b, correlation);
	klog_buf_put_i16(b, error);
	return start;
}

void
klog_proto_end(klog_buf_t *b, size_t start)
{
	size_t size;

	if (b->failed || start > b->len || b->len - start < 4)
		return;
	size = b->len - start - 4;
	if (size > INT32_MAX) {
		b->failed = 1;
		return;
	}
	klog_buf_patch_i32(b, start, (int32_t)size);
}

/*
 * Close a frame an encoder wrote.  A frame too big for its size field is
 * taken back out of the buffer rather than left half-described.
 */
static int
finish(klog_buf_t *b, size_t start)
{
	if (b->failed)
		return -KLOG_ENOMEM;
	if (b->len - start - 4 > INT32_MAX) {
		b->len = start;
		return -KLOG_ETOOBIG;
	}
	klog_proto_end(b, start);
	return 0;
}

static void
put_str(klog_buf_t *b, klog_str_t s)
{
	klog_buf_put_str(b, s.p, s.len);
}

static int
str_ok(klog_str_t s)
{
	return s.len <= INT16_MAX;
}

/* ---- decoding ---- */

static void
rd_topic(klog_rd_t *r, klog_str_t *s)
{
	s->p = klog_rd_str(r, &s->len);
}

/* A non-negative int32; a negative one marks the reader failed. */
static uint32_t
rd_size(klog_rd_t *r)
{
	int32_t v = klog_rd_i32(r);

	if (v < 0) {
		r->failed = 1;
		return 0;
	}
	return (uint32_t)v;
}

static int
rd_count(klog_rd_t *r, uint32_t max, uint32_t *n)
{
	uint32_t c = rd_size(r);

	if (r->failed)
		return -KLOG_EPROTO;
	if (c > max)
		return -KLOG_ETOOBIG;
	*n = c;
	return 0;
}

/* An int32 length and that many bytes, as a view. */
static const uint8_t *
rd_set(klog_rd_t *r, uint32_t *len)
{
	*len = rd_size(r);
	return klog_rd_bytes(r, *len);
}

/* The whole body must have been read, and nothing more. */
static int
rd_end(const klog_rd_t *r)
{
	if (r->failed || r->pos != r->len)
		return -KLOG_EPROTO;
	return 0;
}

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
	start = klog_proto_req_begin(b, KLOG_API_PRODUCE, correlation);
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
	return finish(b, start);
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
	start = klog_proto_resp_begin(b, correlation, KLOG_WIRE_NONE);
	klog_buf_put_i32(b, (int32_t)n);
	for (uint32_t i = 0; i < n; i++) {
		put_str(b, res[i].topic);
		klog_buf_put_i32(b, res[i].partition);
		if (errpos != NULL)
			errpos[i] = b->len;
		klog_buf_put_i16(b, res[i].error);
		klog_buf_put_i64(b, res[i].offset);
	}
	return finish(b, start);
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
	start = klog_proto_req_begin(b, KLOG_API_FETCH, correlation);
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
	return finish(b, start);
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
	start = klog_proto_req_begin(b, KLOG_API_REPLICA_FETCH, correlation);
	klog_buf_put_i32(b, req->replica_id);
	klog_buf_put_i32(b, req->leader_epoch);
	klog_buf_put_i32(b, req->max_wait_ms);
	put_str(b, req->topic);
	klog_buf_put_i32(b, req->partition);
	klog_buf_put_i64(b, req->offset);
	klog_buf_put_i64(b, req->flushed);
	klog_buf_put_i32(b, req->last_epoch);
	klog_buf_put_i32(b, req->max_bytes);
	return finish(b, start);
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
	start = klog_proto_req_begin(b, KLOG_API_REPLICA_POS, correlation);
	klog_buf_put_i32(b, req->replica_id);
	klog_buf_put_i32(b, req->leader_epoch);
	put_str(b, req->topic);
	klog_buf_put_i32(b, req->partition);
	klog_buf_put_i64(b, req->offset);
	klog_buf_put_i64(b, req->flushed);
	return finish(b, start);
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
	start = klog_proto_req_begin(b, KLOG_API_OFFSETS, correlation);
	klog_buf_put_i32(b, (int32_t)n);
	for (uint32_t i = 0; i < n; i++) {
		put_str(b, parts[i].topic);
		klog_buf_put_i32(b, parts[i].partition);
		klog_buf_put_i64(b, parts[i].time);
		klog_buf_put_i32(b, parts[i].max);
	}
	return finish(b, start);
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
	start = klog_proto_resp_begin(b, correlation, KLOG_WIRE_NONE);
	klog_buf_put_i32(b, (int32_t)n);
	for (uint32_t i = 0; i < n; i++) {
		put_str(b, parts[i].topic);
		klog_buf_put_i32(b, parts[i].partition);
		klog_buf_put_i16(b, errors[i]);
		klog_buf_put_i32(b, counts[i]);
		for (int32_t j = 0; j < counts[i]; j++)
			klog_buf_put_i64(b, offsets[i][j]);
	}
	return finish(b, start);
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

/* ---- METADATA ---- */

int
klog_proto_encode_metadata(klog_buf_t *b, int32_t correlation,
    const klog_str_t *topics, uint32_t n)
{
	size_t start;

	if (n > INT32_MAX)
		return -KLOG_EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (!str_ok(topics[i]))
			return -KLOG_EINVAL;
	start = klog_proto_req_begin(b, KLOG_API_METADATA, correlation);
	klog_buf_put_i32(b, (int32_t)n);
	for (uint32_t i = 0; i < n; i++)
		put_str(b, topics[i]);
	return finish(b, start);
}

int
klog_proto_decode_metadata(const uint8_t *body, size_t len,
    klog_str_t *topics, uint32_t max, uint32_t *n)
{
	klog_rd_t r;
	uint32_t count;
	int rc;

	klog_rd_init(&r, body, len);
	if ((rc = rd_count(&r, max, &count)) < 0)
		return rc;
	for (uint32_t i = 0; i < count && !r.failed; i++)
		rd_topic(&r, &topics[i]);
	if ((rc = rd_end(&r)) < 0)
		return rc;
	*n = count;
	return 0;
}

int
klog_proto_encode_metadata_resp(klog_buf_t *b, int32_t correlation,
    const klog_metadata_t *md)
{
	size_t start;

	if (md->nbrokers > INT32_MAX || md->ntopics > INT32_MAX)
		return -KLOG_EINVAL;
	for (uint32_t i = 0; i < md->nbrokers; i++)
		if (!str_ok(md->brokers[i].host))
			return -KLOG_EINVAL;
	for (uint32_t i = 0; i < md->ntopics; i++)
		if (!str_ok(md->topics[i].topic))
			return -KLOG_EINVAL;
	start = klog_proto_resp_begin(b, correlation, KLOG_WIRE_NONE);
	klog_buf_put_i32(b, md->broker_id);
	klog_buf_put_i32(b, (int32_t)md->nbrokers);
	for (uint32_t i = 0; i < md->nbrokers; i++) {
		klog_buf_put_i32(b, md->brokers[i].id);
		put_str(b, md->brokers[i].host);
		klog_buf_put_i32(b, md->brokers[i].port);
	}
	klog_buf_put_i32(b, (int32_t)md->ntopics);
	for (uint32_t i = 0; i < md->ntopics; i++) {
		klog_buf_put_i16(b, md->topics[i].error);
		put_str(b, md->topics[i].topic);
		klog_buf_put_i32(b, md->topics[i].partitions);
		klog_buf_put_i32(b, md->topics[i].broker_id);
	}
	return finish(b, start);
}

int
klog_proto_decode_metadata_resp(const uint8_t *body, size_t len,
    klog_metadata_t *md, klog_meta_broker_t *brokers, uint32_t max_brokers,
    klog_meta_topic_t *topics, uint32_t max_topics)
{
	klog_rd_t r;
	int32_t broker_id;
	uint32_t nbrokers, ntopics;
	int rc;

	klog_rd_init(&r, body, len);
	broker_id = klog_rd_i32(&r);
	if ((rc = rd_count(&r, max_brokers, &nbrokers)) < 0)
		return rc;
	for (uint32_t i = 0; i < nbrokers && !r.failed; i++) {
		brokers[i].id = klog_rd_i32(&r);
		rd_topic(&r, &brokers[i].host);
		brokers[i].port = klog_rd_i32(&r);
	}
	if ((rc = rd_count(&r, max_topics, &ntopics)) < 0)
		return rc;
	for (uint32_t i = 0; i < ntopics && !r.failed; i++) {
		topics[i].error = klog_rd_i16(&r);
		rd_topic(&r, &topics[i].topic);
		topics[i].partitions = (int32_t)rd_size(&r);
		topics[i].broker_id = klog_rd_i32(&r);
	}
	if ((rc = rd_end(&r)) < 0)
		return rc;
	md->broker_id = broker_id;
	md->nbrokers = nbrokers;
	md->brokers = brokers;
	md->ntopics = ntopics;
	md->topics = topics;
	return 0;
}

/* ---- CREATE_TOPIC, ALTER_TOPIC, DELETE_TOPIC ---- */

static int
admin_api(int16_t api)
{
	return api == KLOG_API_CREATE_TOPIC || api == KLOG_API_ALTER_TOPIC ||
	    api == KLOG_API_DELETE_TOPIC;
}

int
klog_proto_encode_topic_admin(klog_buf_t *b, int16_t api, int32_t correlation,
    const klog_topic_admin_t *req)
{
	size_t start;

	if (!admin_api(api) || !str_ok(req->topic) ||
	    (api != KLOG_API_DELETE_TOPIC && req->partitions < 0))
		return -KLOG_EINVAL;
	start = klog_proto_req_begin(b, api, correlation);
	put_str(b, req->topic);
	if (api != KLOG_API_DELETE_TOPIC)
		klog_buf_put_i32(b, req->partitions);
	return finish(b, start);
}

int
klog_proto_decode_topic_admin(int16_t api, const uint8_t *body, size_t len,
    klog_topic_admin_t *req)
{
	klog_rd_t r;

	memset(req, 0, sizeof(*req));
	if (!admin_api(api))
		return -KLOG_EINVAL;
	klog_rd_init(&r, body, len);
	rd_topic(&r, &req->topic);
	if (api != KLOG_API_DELETE_TOPIC)
		req->partitions = (int32_t)rd_size(&r);
	return rd_end(&r);
}

int
klog_proto_encode_topic_admin_resp(klog_buf_t *b, int32_t correlation,
    const klog_topic_admin_resp_t *res)
{
	size_t start;

	if (!str_ok(res->topic) || res->partitions < 0)
		return -KLOG_EINVAL;
	start = klog_proto_resp_begin(b, correlation, KLOG_WIRE_NONE);
	put_str(b, res->topic);
	klog_buf_put_i16(b, res->error);
	klog_buf_put_i32(b, res->partitions);
	return finish(b, start);
}

int
klog_proto_decode_topic_admin_resp(const uint8_t *body, size_t len,
    klog_topic_admin_resp_t *res)
{
	klog_rd_t r;

	memset(res, 0, sizeof(*res));
	klog_rd_init(&r, body, len);
	rd_topic(&r, &res->topic);
	res->error = klog_rd_i16(&r);
	res->partitions = (int32_t)rd_size(&r);
	return rd_end(&r);
}

/* ---- decoding into arrays that grow ---- */

/*
 * Where each request's count field is and the fewest bytes one entry
 * takes: produce after acks (2) and timeout (4), an entry at least topic
 * (2), partition (4) and set size (4); fetch after max wait and min bytes
 * (4 + 4), an entry at least topic (2), partition (4), offset (8) and max
 * (4); offsets first, entries of topic (2), partition (4), time (8) and
 * max (4); metadata first, entries of a topic (2).
 */
#define PRODUCE_COUNT_AT 6
#define PRODUCE_ENTRY_MIN 10
#define FETCH_COUNT_AT 8
#define FETCH_ENTRY_MIN 18
#define OFFSETS_ENTRY_MIN 18
#define METADATA_ENTRY_MIN 2

/*
 * The count field at off in body, if count entries of at least min bytes
 * each could fit after it; -1 otherwise (the decoder would refuse it).
 */
static int64_t
peek_count(const uint8_t *body, size_t len, size_t off, size_t min)
{
	int32_t n;

	if (len < off + 4)
		return -1;
	n = (int32_t)klog_be32(body + off);
	if (n < 0 || (size_t)n > (len - off - 4) / min)
		return -1;
	return n;
}

/* Room in a for n + 1 entries of elem bytes (one, so 0 allocates). */
static int
array_fit(klog_proto_array_t *a, int64_t n, size_t elem)
{
	if (n < 0)
		return -KLOG_EPROTO;
	return klog_buf_grow(&a->p, &a->cap, (size_t)(n + 1) * elem);
}

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

int
klog_proto_decode_metadata_grow(const uint8_t *body, size_t len,
    klog_proto_array_t *a, uint32_t *got)
{
	int64_t n = peek_count(body, len, 0, METADATA_ENTRY_MIN);
	int rc;

	if ((rc = array_fit(a, n, sizeof(klog_str_t))) < 0)
		return rc;
	return klog_proto_decode_metadata(body, len, a->p, (uint32_t)n, got);
}

int32_t
klog_proto_peek_correlation(const uint8_t *frame, size_t len)
{
	/* After size (4), api (2) and version (2). */
	return len >= KLOG_REQ_HEADER_SIZE ? (int32_t)klog_be32(frame + 8) : 0;
}
