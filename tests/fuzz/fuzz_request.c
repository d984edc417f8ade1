/*
 * libFuzzer target for the wire protocol (lib/proto/): arbitrary bytes as a
 * request frame, and as a response frame.
 *
 * The header parser sees the input first; then every request decoder gets
 * the bytes after a request header and every response decoder the bytes
 * after a response header, whatever the api field says, with small caller
 * arrays.  Besides not reading out of bounds, it checks that every view lies
 * inside the body and that whatever decodes re-encodes to exactly the same
 * bytes (the encoding has no slack, so a decoder that accepts something the
 * encoder would not write is a bug).  A broken invariant aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAXN 4
#define MAX_SIZE 4096

struct body {
	const uint8_t *p;
	size_t len;
};

static void
check_view(struct body b, const void *p, size_t n)
{
	const uint8_t *v = p;

	if (n == 0)
		return;
	CHECK(v >= b.p && v <= b.p + b.len && n <= (size_t)(b.p + b.len - v));
}

/* The frame in buf from start must carry exactly the body's bytes. */
static void
check_same(klog_buf_t *buf, size_t hdr, struct body b)
{
	CHECK(!buf->failed);
	CHECK(buf->len == hdr + b.len);
	CHECK(b.len == 0 || memcmp(buf->data + hdr, b.p, b.len) == 0);
	klog_buf_reset(buf);
}

static void
check_rc(int rc)
{
	CHECK(rc == 0 || rc == -KLOG_EPROTO || rc == -KLOG_ETOOBIG);
}

static void
header(const uint8_t *data, size_t size)
{
	klog_req_header_t rq;
	klog_resp_header_t rs;
	int rc;

	rc = klog_proto_req_header(data, size, MAX_SIZE, &rq);
	CHECK(rc == 0 || rc == -KLOG_EPARTIAL || rc == -KLOG_EPROTO ||
	    rc == -KLOG_ETOOBIG);
	if (rc == 0)
		CHECK(size >= KLOG_REQ_HEADER_SIZE && rq.size >= 8 &&
		    rq.size <= MAX_SIZE);
	CHECK(rc != -KLOG_EPARTIAL || size < KLOG_REQ_HEADER_SIZE);
	rc = klog_proto_resp_header(data, size, MAX_SIZE, &rs);
	CHECK(rc == 0 || rc == -KLOG_EPARTIAL || rc == -KLOG_EPROTO ||
	    rc == -KLOG_ETOOBIG);
	if (rc == 0)
		CHECK(size >= KLOG_RESP_HEADER_SIZE && rs.size >= 6 &&
		    rs.size <= MAX_SIZE);
}

static void
produce(struct body b, klog_buf_t *buf)
{
	klog_produce_req_t req;
	klog_produce_part_t parts[MAXN];
	int rc = klog_proto_decode_produce(b.p, b.len, &req, parts, MAXN);

	check_rc(rc);
	if (rc < 0)
		return;
	CHECK(req.count <= MAXN && req.parts == parts);
	CHECK(req.acks == 0 || req.acks == 1 || req.acks == -1);
	for (uint32_t i = 0; i < req.count; i++) {
		check_view(b, parts[i].topic.p, parts[i].topic.len);
		check_view(b, parts[i].set, parts[i].set_len);
	}
	CHECK(klog_proto_encode_produce(buf, 0, &req) == 0);
	check_same(buf, KLOG_REQ_HEADER_SIZE, b);
}

static void
fetch(struct body b, klog_buf_t *buf)
{
	klog_fetch_req_t req;
	klog_fetch_part_t parts[MAXN];
	int rc = klog_proto_decode_fetch(b.p, b.len, &req, parts, MAXN);

	check_rc(rc);
	if (rc < 0)
		return;
	CHECK(req.count <= MAXN && req.max_wait_ms >= 0 && req.min_bytes >= 0);
	for (uint32_t i = 0; i < req.count; i++) {
		check_view(b, parts[i].topic.p, parts[i].topic.len);
		CHECK(parts[i].max_bytes >= 0);
	}
	CHECK(klog_proto_encode_fetch(buf, 0, &req) == 0);
	check_same(buf, KLOG_REQ_HEADER_SIZE, b);
}

static void
offsets(struct body b, klog_buf_t *buf)
{
	klog_offsets_part_t parts[MAXN];
	uint32_t n;
	int rc = klog_proto_decode_offsets(b.p, b.len, parts, MAXN, &n);

	check_rc(rc);
	if (rc < 0)
		return;
	CHECK(n <= MAXN);
	for (uint32_t i = 0; i < n; i++) {
		check_view(b, parts[i].topic.p, parts[i].topic.len);
		CHECK(parts[i].max >= 0 && parts[i].time >= -2);
	}
	CHECK(klog_proto_encode_offsets(buf, 0, parts, n) == 0);
	check_same(buf, KLOG_REQ_HEADER_SIZE, b);
}

static void
metadata(struct body b, klog_buf_t *buf)
{
	klog_str_t topics[MAXN];
	uint32_t n;
	int rc = klog_proto_decode_metadata(b.p, b.len, topics, MAXN, &n);

	check_rc(rc);
	if (rc < 0)
		return;
	CHECK(n <= MAXN);
	for (uint32_t i = 0; i < n; i++)
		check_view(b, topics[i].p, topics[i].len);
	CHECK(klog_proto_encode_metadata(buf, 0, topics, n) == 0);
	check_same(buf, KLOG_REQ_HEADER_SIZE, b);
}

static void
produce_resp(struct body b, klog_buf_t *buf)
{
	klog_produce_result_t res[MAXN];
	uint32_t n;
	int rc = klog_proto_decode_produce_resp(b.p, b.len, res, MAXN, &n);

	check_rc(rc);
	if (rc < 0)
		return;
	CHECK(n <= MAXN);
	for (uint32_t i = 0; i < n; i++)
		check_view(b, res[i].topic.p, res[i].topic.len);
	CHECK(klog_proto_encode_produce_resp(buf, 0, res, n) == 0);
	check_same(buf, KLOG_RESP_HEADER_SIZE, b);
}

static void
fetch_resp(struct body b, klog_buf_t *buf)
{
	klog_fetch_result_t res[MAXN];
	uint32_t n;
	size_t start;
	int rc = klog_proto_decode_fetch_resp(b.p, b.len, res, MAXN, &n);

	check_rc(rc);
	if (rc < 0)
		return;
	CHECK(n <= MAXN);
	start = klog_proto_resp_begin(buf, 0, 0);
	klog_buf_put_i32(buf, (int32_t)n);
	for (uint32_t i = 0; i < n; i++) {
		check_view(b, res[i].topic.p, res[i].topic.len);
		check_view(b, res[i].set, res[i].set_len);
		klog_proto_put_fetch_part_header(buf, res[i].topic,
		    res[i].partition, res[i].error, res[i].log_start,
		    res[i].log_end, res[i].set_len);
		klog_buf_put(buf, res[i].set, res[i].set_len);
	}
	klog_proto_end(buf, start);
	check_same(buf, KLOG_RESP_HEADER_SIZE, b);
}

static void
offsets_resp(struct body b, klog_buf_t *buf)
{
	klog_offsets_result_t res[MAXN];
	klog_offsets_part_t parts[MAXN];
	int16_t errors[MAXN];
	int64_t *offs[MAXN] = { NULL };
	int32_t counts[MAXN];
	uint32_t n;
	int rc = klog_proto_decode_offsets_resp(b.p, b.len, res, MAXN, &n);

	check_rc(rc);
	if (rc < 0)
		return;
	CHECK(n <= MAXN);
	for (uint32_t i = 0; i < n; i++) {
		check_view(b, res[i].topic.p, res[i].topic.len);
		CHECK(res[i].count >= 0);
		check_view(b, res[i].raw, (size_t)res[i].count * 8);
		parts[i].topic = res[i].topic;
		parts[i].partition = res[i].partition;
		errors[i] = res[i].error;
		counts[i] = res[i].count;
		offs[i] = malloc((size_t)res[i].count * 8 + 1);
		CHECK(offs[i] != NULL);
		for (int32_t j = 0; j < res[i].count; j++)
			offs[i][j] = klog_proto_offset_at(&res[i], j);
		CHECK(klog_proto_offset_at(&res[i], res[i].count) == -1);
	}
	CHECK(klog_proto_encode_offsets_resp(buf, 0, parts, errors,
	    (const int64_t *const *)offs, counts, n) == 0);
	check_same(buf, KLOG_RESP_HEADER_SIZE, b);
	for (uint32_t i = 0; i < n; i++)
		free(offs[i]);
}

static void
metadata_resp(struct body b, klog_buf_t *buf)
{
	klog_metadata_t md;
	klog_meta_broker_t brokers[MAXN];
	klog_meta_topic_t topics[MAXN];
	int rc = klog_proto_decode_metadata_resp(b.p, b.len, &md, brokers,
	    MAXN, topics, MAXN);

	check_rc(rc);
	if (rc < 0)
		return;
	CHECK(md.nbrokers <= MAXN && md.ntopics <= MAXN);
	for (uint32_t i = 0; i < md.nbrokers; i++)
		check_view(b, brokers[i].host.p, brokers[i].host.len);
	for (uint32_t i = 0; i < md.ntopics; i++) {
		check_view(b, topics[i].topic.p, topics[i].topic.len);
		CHECK(topics[i].partitions >= 0);
	}
	CHECK(klog_proto_encode_metadata_resp(buf, 0, &md) == 0);
	check_same(buf, KLOG_RESP_HEADER_SIZE, b);
}

static void
rfetch(struct body b, klog_buf_t *buf)
{
	klog_rfetch_req_t req;
	int rc = klog_proto_decode_rfetch(b.p, b.len, &req);

	check_rc(rc);
	if (rc < 0)
		return;
	check_view(b, req.topic.p, req.topic.len);
	CHECK(req.replica_id >= 0 && req.leader_epoch >= 0 &&
	    req.offset >= 0 && req.flushed >= 0 && req.last_epoch >= -1 &&
	    req.max_bytes >= 0);
	CHECK(klog_proto_encode_rfetch(buf, 0, &req) == 0);
	check_same(buf, KLOG_REQ_HEADER_SIZE, b);
}

static void
rpos(struct body b, klog_buf_t *buf)
{
	klog_rfetch_req_t req;
	int rc = klog_proto_decode_rpos(b.p, b.len, &req);

	check_rc(rc);
	if (rc < 0)
		return;
	check_view(b, req.topic.p, req.topic.len);
	CHECK(req.offset >= 0 && req.flushed >= 0);
	CHECK(klog_proto_encode_rpos(buf, 0, &req) == 0);
	check_same(buf, KLOG_REQ_HEADER_SIZE, b);
}

/* The three topic admin requests share one decoder, told the api. */
static void
topic_admin(struct body b, klog_buf_t *buf, int16_t api)
{
	klog_topic_admin_t req;
	int rc = klog_proto_decode_topic_admin(api, b.p, b.len, &req);

	check_rc(rc);
	if (rc < 0)
		return;
	check_view(b, req.topic.p, req.topic.len);
	CHECK(req.partitions >= 0);
	CHECK(api != KLOG_API_DELETE_TOPIC || req.partitions == 0);
	CHECK(klog_proto_encode_topic_admin(buf, api, 0, &req) == 0);
	check_same(buf, KLOG_REQ_HEADER_SIZE, b);
}

static void
topic_admin_resp(struct body b, klog_buf_t *buf)
{
	klog_topic_admin_resp_t res;
	int rc = klog_proto_decode_topic_admin_resp(b.p, b.len, &res);

	check_rc(rc);
	if (rc < 0)
		return;
	check_view(b, res.topic.p, res.topic.len);
	CHECK(klog_proto_encode_topic_admin_resp(buf, 0, &res) == 0);
	check_same(buf, KLOG_RESP_HEADER_SIZE, b);
}

static void
rfetch_resp(struct body b)
{
	klog_rfetch_resp_t r;
	int rc = klog_proto_decode_rfetch_resp(b.p, b.len, &r);

	check_rc(rc);
	if (rc < 0)
		return;
	check_view(b, r.set, r.set_len);
	CHECK(r.diverging_epoch < 0 || r.diverging_end >= 0);
}

/* The bytes after a header of hdr bytes, in a heap copy of exactly their
 * length so that ASan catches a read one past the end. */
static struct body
body_after(const uint8_t *data, size_t size, size_t hdr)
{
	struct body b = { NULL, 0 };
	uint8_t *p;

	if (size > hdr)
		b.len = size - hdr;
	p = malloc(b.len + (b.len == 0));
	CHECK(p != NULL);
	if (b.len > 0)
		memcpy(p, data + hdr, b.len);
	b.p = p;
	return b;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	klog_buf_t buf;
	struct body b;

	header(data, size);
	klog_buf_init(&buf);

	b = body_after(data, size, KLOG_REQ_HEADER_SIZE);
	produce(b, &buf);
	fetch(b, &buf);
	offsets(b, &buf);
	metadata(b, &buf);
	rfetch(b, &buf);
	rpos(b, &buf);
	topic_admin(b, &buf, KLOG_API_CREATE_TOPIC);
	topic_admin(b, &buf, KLOG_API_ALTER_TOPIC);
	topic_admin(b, &buf, KLOG_API_DELETE_TOPIC);
	free((void *)b.p);

	b = body_after(data, size, KLOG_RESP_HEADER_SIZE);
	produce_resp(b, &buf);
	fetch_resp(b, &buf);
	offsets_resp(b, &buf);
	metadata_resp(b, &buf);
	rfetch_resp(b);
	topic_admin_resp(b, &buf);
	free((void *)b.p);

	klog_buf_free(&buf);
	return 0;
}
