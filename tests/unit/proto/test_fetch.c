/*
 * Unit tests for lib/proto/fetch.c: FETCH, REPLICA_FETCH and REPLICA_POS.
 * The expected frames are written out byte by byte from the layouts in
 * include/klog/proto/proto.h: they are the specification, not the output
 * of the encoder.
 */
#include "proto/wirecheck.h"

/* FETCH, correlation 8: wait 100 ms for 1 byte; ("t", 0, 0x1234, 1 MiB). */
static const uint8_t fetch_req[] = {
	0x00, 0x00, 0x00, 0x27,                   /* size 39 */
	0x00, 0x01,                               /* api FETCH */
	0x00, 0x01,
	0x00, 0x00, 0x00, 0x08,
	0x00, 0x00, 0x00, 0x64,                   /* max_wait_ms 100 */
	0x00, 0x00, 0x00, 0x01,                   /* min_bytes 1 */
	0x00, 0x00, 0x00, 0x01,                   /* count */
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x00,                   /* partition */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x34,  /* offset */
	0x00, 0x10, 0x00, 0x00,                   /* max_bytes */
};

static const uint8_t fetch_resp[] = {
	0x00, 0x00, 0x00, 0x47,                   /* size 71 */
	0x00, 0x00, 0x00, 0x09,
	0x00, 0x00,
	0x00, 0x00, 0x00, 0x02,                   /* count */
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x00,                   /* partition 0 */
	0x00, 0x00,                               /* error */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* log_start */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20,  /* log_end */
	0x00, 0x00, 0x00, 0x03,                   /* set_size */
	'a', 'b', 'c',
	0x00, 0x01, 'u',
	0x00, 0x00, 0x00, 0x01,
	0x00, 0x01,                               /* OFFSET_OUT_OF_RANGE */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a,
	0x00, 0x00, 0x00, 0x00,
};

/* REPLICA_FETCH, correlation 11: broker 2 at epoch 7, waiting 500 ms, of
 * ("ab", 3) from 0x0102030405060708, flushed to 0x01020304050606ff, its
 * newest epoch 6, up to 1 MiB. */
static const uint8_t rfetch_req[] = {
	0x00, 0x00, 0x00, 0x34,                   /* size 52 */
	0x00, 0x06,                               /* api REPLICA_FETCH */
	0x00, 0x01,
	0x00, 0x00, 0x00, 0x0b,                   /* correlation */
	0x00, 0x00, 0x00, 0x02,                   /* replica_id */
	0x00, 0x00, 0x00, 0x07,                   /* leader_epoch */
	0x00, 0x00, 0x01, 0xf4,                   /* max_wait_ms 500 */
	0x00, 0x02, 'a', 'b',                     /* topic */
	0x00, 0x00, 0x00, 0x03,                   /* partition */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  /* offset */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x06, 0xff,  /* flushed */
	0x00, 0x00, 0x00, 0x06,                   /* last_epoch */
	0x00, 0x10, 0x00, 0x00,                   /* max_bytes */
};

/* Its answer: epoch 7, HW 0x40, log 0x10..0x50, a 3-byte chunk of epoch
 * 6, no divergence. */
static const uint8_t rfetch_resp[] = {
	0x00, 0x00, 0x00, 0x3b,                   /* size 59 */
	0x00, 0x00, 0x00, 0x0b,                   /* correlation */
	0x00, 0x00,                               /* frame error */
	0x00, 0x00,                               /* error */
	0x00, 0x00, 0x00, 0x07,                   /* leader_epoch */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,  /* hw */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,  /* log_start */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50,  /* log_end */
	0x00, 0x00, 0x00, 0x06,                   /* chunk_epoch */
	0xff, 0xff, 0xff, 0xff,                   /* diverging_epoch -1 */
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  /* diverging_end */
	0x00, 0x00, 0x00, 0x03,                   /* set_size */
	'a', 'b', 'c',
};

static int
dec_fetch(const uint8_t *p, size_t n)
{
	klog_fetch_req_t req;
	klog_fetch_part_t parts[MAXN];

	return klog_proto_decode_fetch(p, n, &req, parts, MAXN);
}

static int
dec_fetch_resp(const uint8_t *p, size_t n)
{
	klog_fetch_result_t res[MAXN];
	uint32_t k;

	return klog_proto_decode_fetch_resp(p, n, res, MAXN, &k);
}

static int
dec_rfetch(const uint8_t *p, size_t n)
{
	klog_rfetch_req_t req;

	return klog_proto_decode_rfetch(p, n, &req);
}

static int
dec_rfetch_resp(const uint8_t *p, size_t n)
{
	klog_rfetch_resp_t r;

	return klog_proto_decode_rfetch_resp(p, n, &r);
}

/* ---- FETCH ---- */

static void
test_fetch(void **state)
{
	klog_fetch_part_t in[1] = { { STR("t"), 0, 0x1234, 1 << 20 } };
	klog_fetch_req_t req = { 100, 1, 1, in };
	klog_fetch_req_t out;
	klog_fetch_part_t parts[1];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_fetch(&b, 8, &req), 0);
	assert_frame(&b, fetch_req, sizeof(fetch_req));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_fetch(REQ_BODY(fetch_req),
	    REQ_BODY_LEN(fetch_req), &out, parts, 1), 0);
	assert_int_equal(out.max_wait_ms, 100);
	assert_int_equal(out.min_bytes, 1);
	assert_int_equal(out.count, 1);
	assert_ptr_equal(out.parts, parts);
	assert_str(parts[0].topic, "t");
	assert_int_equal(parts[0].partition, 0);
	assert_int_equal(parts[0].offset, 0x1234);
	assert_int_equal(parts[0].max_bytes, 1 << 20);
}

/* The broker's way: part headers through the buffer, sets by sendfile, the
 * frame size patched to count both. */
static void
test_fetch_resp(void **state)
{
	klog_fetch_result_t res[2];
	klog_buf_t b;
	size_t start, sent;
	uint8_t *wire;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	start = klog_proto_resp_begin(&b, 9, KLOG_WIRE_NONE);
	klog_buf_put_i32(&b, 2);
	klog_proto_put_fetch_part_header(&b, STR("t"), 0, KLOG_WIRE_NONE, 0,
	    0x20, 3);
	sent = b.len;
	klog_proto_put_fetch_part_header(&b, STR("u"), 1,
	    KLOG_WIRE_OFFSET_OUT_OF_RANGE, 5, 10, 0);
	klog_buf_patch_i32(&b, start, (int32_t)(b.len - start - 4 + 3));
	assert_false(b.failed);
	/* what goes out: buffer up to sent, the 3 file bytes, the rest */
	wire = malloc(b.len + 3);
	assert_non_null(wire);
	memcpy(wire, b.data, sent);
	memcpy(wire + sent, "abc", 3);
	memcpy(wire + sent + 3, b.data + sent, b.len - sent);
	assert_int_equal(b.len + 3, sizeof(fetch_resp));
	assert_memory_equal(wire, fetch_resp, sizeof(fetch_resp));
	free(wire);

	/* the same frame built entirely in the buffer */
	klog_buf_reset(&b);
	start = klog_proto_resp_begin(&b, 9, KLOG_WIRE_NONE);
	klog_buf_put_i32(&b, 2);
	klog_proto_put_fetch_part_header(&b, STR("t"), 0, KLOG_WIRE_NONE, 0,
	    0x20, 3);
	klog_buf_put(&b, "abc", 3);
	klog_proto_put_fetch_part_header(&b, STR("u"), 1,
	    KLOG_WIRE_OFFSET_OUT_OF_RANGE, 5, 10, 0);
	klog_proto_end(&b, start);
	assert_frame(&b, fetch_resp, sizeof(fetch_resp));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_fetch_resp(RESP_BODY(fetch_resp),
	    RESP_BODY_LEN(fetch_resp), res, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_str(res[0].topic, "t");
	assert_int_equal(res[0].error, 0);
	assert_int_equal(res[0].log_start, 0);
	assert_int_equal(res[0].log_end, 0x20);
	assert_int_equal(res[0].set_len, 3);
	assert_memory_equal(res[0].set, "abc", 3);
	assert_ptr_equal(res[0].set, fetch_resp + 43);
	assert_str(res[1].topic, "u");
	assert_int_equal(res[1].partition, 1);
	assert_int_equal(res[1].error, KLOG_WIRE_OFFSET_OUT_OF_RANGE);
	assert_int_equal(res[1].log_start, 5);
	assert_int_equal(res[1].log_end, 10);
	assert_int_equal(res[1].set_len, 0);
}

/* ---- malformed input ---- */

static const struct body_case cases[] = {
	REQ_CASE(dec_fetch, fetch_req),
	RESP_CASE(dec_fetch_resp, fetch_resp),
	REQ_CASE(dec_rfetch, rfetch_req),
	RESP_CASE(dec_rfetch_resp, rfetch_resp),
};

static void
test_truncations(void **state)
{
	(void)state;
	check_truncations(cases, NELEM(cases));
}

static void
test_trailing_bytes(void **state)
{
	(void)state;
	check_trailing_bytes(cases, NELEM(cases));
}

/* A count over the caller's array never touches the array. */
static void
test_counts_over_max(void **state)
{
	klog_fetch_req_t freq;
	uint32_t n;

	(void)state;
	assert_int_equal(klog_proto_decode_fetch(REQ_BODY(fetch_req),
	    REQ_BODY_LEN(fetch_req), &freq, NULL, 0), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_fetch_resp(RESP_BODY(fetch_resp),
	    RESP_BODY_LEN(fetch_resp), NULL, 1, &n), -KLOG_ETOOBIG);
	/* a huge count is refused before any entry is read */
	assert_int_equal(decode_patched(dec_fetch_resp, RESP_BODY(fetch_resp),
	    RESP_BODY_LEN(fetch_resp), 0, 0x10000), -KLOG_ETOOBIG);
}

/* Offsets of fields inside the reference bodies (after the header). */
static void
test_negative_fields(void **state)
{
	static const struct field_case neg[] = {
		{ "fetch max_wait", dec_fetch, REQ_BODY(fetch_req),
		    REQ_BODY_LEN(fetch_req), 0 },
		{ "fetch min_bytes", dec_fetch, REQ_BODY(fetch_req),
		    REQ_BODY_LEN(fetch_req), 4 },
		{ "fetch count", dec_fetch, REQ_BODY(fetch_req),
		    REQ_BODY_LEN(fetch_req), 8 },
		{ "fetch max_bytes", dec_fetch, REQ_BODY(fetch_req),
		    REQ_BODY_LEN(fetch_req), 27 },
		{ "fetch_resp set_size", dec_fetch_resp, RESP_BODY(fetch_resp),
		    RESP_BODY_LEN(fetch_resp), 29 },
	};

	(void)state;
	check_negative_fields(neg, NELEM(neg));
}

static void
test_null_strings(void **state)
{
	(void)state;
	assert_int_equal(decode_patched16(dec_fetch, REQ_BODY(fetch_req),
	    REQ_BODY_LEN(fetch_req), 12, 0xffff), -KLOG_EPROTO);
	/* a string longer than what is left */
	assert_int_equal(decode_patched16(dec_fetch_resp, RESP_BODY(fetch_resp),
	    RESP_BODY_LEN(fetch_resp), 4, 0x7fff), -KLOG_EPROTO);
}

/* ---- decoding into an array that grows ---- */

static void
test_fetch_grow(void **state)
{
	klog_proto_array_t a = { NULL, 0 };
	klog_fetch_req_t freq;

	(void)state;
	assert_int_equal(klog_proto_decode_fetch_grow(REQ_BODY(fetch_req),
	    REQ_BODY_LEN(fetch_req), &freq, &a), 0);
	assert_int_equal(freq.count, 1);
	assert_ptr_equal(freq.parts, a.p);
	assert_int_equal(freq.parts[0].offset, 0x1234);
	free(a.p);
}

/* ---- REPLICA_FETCH ---- */

static const klog_rfetch_req_t rfetch_in = {
	.replica_id = 2, .leader_epoch = 7, .max_wait_ms = 500,
	.topic = STR("ab"), .partition = 3, .offset = 0x0102030405060708,
	.flushed = 0x01020304050606ff, .last_epoch = 6, .max_bytes = 1 << 20,
};

static void
test_rfetch(void **state)
{
	klog_rfetch_req_t q = rfetch_in, out;
	klog_buf_t b;
	static char big[INT16_MAX + 1];

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_rfetch(&b, 11, &q), 0);
	assert_frame(&b, rfetch_req, sizeof(rfetch_req));
	/* a topic too long for the wire: nothing written */
	klog_buf_reset(&b);
	q.topic = (klog_str_t){ big, INT16_MAX + 1 };
	assert_int_equal(klog_proto_encode_rfetch(&b, 11, &q), -KLOG_EINVAL);
	assert_int_equal(b.len, 0);
	klog_buf_free(&b);

	memset(&out, 0x55, sizeof(out));
	assert_int_equal(klog_proto_decode_rfetch(REQ_BODY(rfetch_req),
	    REQ_BODY_LEN(rfetch_req), &out), 0);
	assert_int_equal(out.replica_id, 2);
	assert_int_equal(out.leader_epoch, 7);
	assert_int_equal(out.max_wait_ms, 500);
	assert_str(out.topic, "ab");
	assert_ptr_equal(out.topic.p, rfetch_req + KLOG_REQ_HEADER_SIZE + 14);
	assert_int_equal(out.partition, 3);
	assert_int_equal(out.offset, 0x0102030405060708);
	assert_int_equal(out.flushed, 0x01020304050606ff);
	assert_int_equal(out.last_epoch, 6);
	assert_int_equal(out.max_bytes, 1 << 20);

	/* zeros and the smallest values allowed round-trip too */
	q = (klog_rfetch_req_t){ .topic = STR("t"), .last_epoch = -1 };
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_rfetch(&b, 0, &q), 0);
	assert_int_equal(klog_proto_decode_rfetch(b.data +
	    KLOG_REQ_HEADER_SIZE, b.len - KLOG_REQ_HEADER_SIZE, &out), 0);
	assert_int_equal(out.replica_id, 0);
	assert_int_equal(out.leader_epoch, 0);
	assert_int_equal(out.offset, 0);
	assert_int_equal(out.flushed, 0);
	assert_int_equal(out.last_epoch, -1);
	assert_int_equal(out.max_bytes, 0);
	klog_buf_free(&b);
}

/* REPLICA_POS, byte for byte: header, then replica 2, epoch 7, "ab",
 * partition 3, offset, flushed. */
static const uint8_t rpos_req[] = {
	0, 0, 0, 40, 0, 7, 0, 1, 0, 0, 0, 12,
	0, 0, 0, 2, 0, 0, 0, 7, 0, 2, 'a', 'b', 0, 0, 0, 3,
	1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 6, 0xff,
};

static void
test_rpos(void **state)
{
	klog_rfetch_req_t q = rfetch_in, out;
	const uint8_t *body = rpos_req + KLOG_REQ_HEADER_SIZE;
	size_t len = sizeof(rpos_req) - KLOG_REQ_HEADER_SIZE;
	uint8_t bad[sizeof(rpos_req)];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_rpos(&b, 12, &q), 0);
	assert_int_equal(b.len, sizeof(rpos_req));
	assert_memory_equal(b.data, rpos_req, sizeof(rpos_req));
	klog_buf_free(&b);
	memset(&out, 0x55, sizeof(out));
	assert_int_equal(klog_proto_decode_rpos(body, len, &out), 0);
	assert_int_equal(out.replica_id, 2);
	assert_int_equal(out.leader_epoch, 7);
	assert_str(out.topic, "ab");
	assert_int_equal(out.partition, 3);
	assert_int_equal(out.offset, 0x0102030405060708);
	assert_int_equal(out.flushed, 0x01020304050606ff);
	assert_int_equal(out.last_epoch, -1);
	assert_int_equal(out.max_wait_ms, 0);
	/* short, long, negative */
	for (size_t n = 0; n < len; n++)
		assert_int_equal(klog_proto_decode_rpos(body, n, &out),
		    -KLOG_EPROTO);
	memcpy(bad, rpos_req, sizeof(bad));
	bad[KLOG_REQ_HEADER_SIZE] = 0x80;          /* replica id < 0 */
	assert_int_equal(klog_proto_decode_rpos(bad + KLOG_REQ_HEADER_SIZE,
	    len, &out), -KLOG_EPROTO);
	memcpy(bad, rpos_req, sizeof(bad));
	bad[KLOG_REQ_HEADER_SIZE + 24] = 0x80;     /* flushed < 0 */
	assert_int_equal(klog_proto_decode_rpos(bad + KLOG_REQ_HEADER_SIZE,
	    len, &out), -KLOG_EPROTO);
}

static const klog_rfetch_resp_t rfetch_out = {
	.error = KLOG_WIRE_NONE, .leader_epoch = 7, .hw = 0x40,
	.log_start = 0x10, .log_end = 0x50, .chunk_epoch = 6,
	.diverging_epoch = -1, .diverging_end = -1, .set_len = 3,
};

static void
test_rfetch_resp(void **state)
{
	klog_rfetch_resp_t r = rfetch_out, out;
	klog_buf_t b;
	size_t start;

	(void)state;
	/* The leader's way: the header, the set by sendfile, the size
	 * patched. */
	klog_buf_init(&b);
	start = klog_proto_resp_begin(&b, 11, KLOG_WIRE_NONE);
	klog_proto_put_rfetch_header(&b, &r);
	klog_buf_patch_i32(&b, start, (int32_t)(b.len - start - 4 + 3));
	assert_false(b.failed);
	assert_int_equal(b.len + 3, sizeof(rfetch_resp));
	assert_memory_equal(b.data, rfetch_resp, b.len);
	assert_memory_equal(rfetch_resp + b.len, "abc", 3);
	/* all in the buffer */
	klog_buf_reset(&b);
	start = klog_proto_resp_begin(&b, 11, KLOG_WIRE_NONE);
	klog_proto_put_rfetch_header(&b, &r);
	klog_buf_put(&b, "abc", 3);
	klog_proto_end(&b, start);
	assert_frame(&b, rfetch_resp, sizeof(rfetch_resp));
	/* a set too large for the wire fails the buffer */
	klog_buf_reset(&b);
	r.set_len = (uint32_t)INT32_MAX + 1;
	klog_proto_put_rfetch_header(&b, &r);
	assert_true(b.failed);
	klog_buf_free(&b);

	memset(&out, 0x55, sizeof(out));
	assert_int_equal(klog_proto_decode_rfetch_resp(RESP_BODY(rfetch_resp),
	    RESP_BODY_LEN(rfetch_resp), &out), 0);
	assert_int_equal(out.error, KLOG_WIRE_NONE);
	assert_int_equal(out.leader_epoch, 7);
	assert_int_equal(out.hw, 0x40);
	assert_int_equal(out.log_start, 0x10);
	assert_int_equal(out.log_end, 0x50);
	assert_int_equal(out.chunk_epoch, 6);
	assert_int_equal(out.diverging_epoch, -1);
	assert_int_equal(out.diverging_end, -1);
	assert_int_equal(out.set_len, 3);
	assert_ptr_equal(out.set, rfetch_resp + sizeof(rfetch_resp) - 3);

	/* a divergence and an error answer round-trip */
	r = rfetch_out;
	r.error = KLOG_WIRE_FENCED_LEADER_EPOCH;
	r.diverging_epoch = 5;
	r.diverging_end = 0x123456789;
	r.set_len = 0;
	klog_buf_init(&b);
	klog_proto_put_rfetch_header(&b, &r);
	assert_int_equal(b.len, 50);
	assert_int_equal(klog_proto_decode_rfetch_resp(b.data, b.len, &out),
	    0);
	assert_int_equal(out.error, KLOG_WIRE_FENCED_LEADER_EPOCH);
	assert_int_equal(out.diverging_epoch, 5);
	assert_int_equal(out.diverging_end, 0x123456789);
	assert_int_equal(out.set_len, 0);
	klog_buf_free(&b);
}

/* Body offsets of the REPLICA_FETCH fields (request, response). */
enum {
	RQ_REPLICA = 0, RQ_EPOCH = 4, RQ_WAIT = 8, RQ_PARTITION = 16,
	RQ_OFFSET = 20, RQ_FLUSHED = 28, RQ_LAST_EPOCH = 36, RQ_MAX = 40,
	RS_DIV_EPOCH = 34, RS_DIV_END = 38, RS_SET_SIZE = 46,
};

static void
test_rfetch_refusals(void **state)
{
	const uint8_t *q = REQ_BODY(rfetch_req), *a = RESP_BODY(rfetch_resp);
	size_t qn = REQ_BODY_LEN(rfetch_req), an = RESP_BODY_LEN(rfetch_resp);

	(void)state;
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_REPLICA,
	    0xffffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_EPOCH,
	    0xffffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_WAIT,
	    0x80000000), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_OFFSET,
	    0x80000000), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_FLUSHED,
	    0xffffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_LAST_EPOCH,
	    0xfffffffe), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_LAST_EPOCH,
	    0x80000000), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_MAX,
	    0xffffffff), -KLOG_EPROTO);
	/* the edges that are allowed */
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_LAST_EPOCH,
	    0xffffffff), 0);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_REPLICA, 0), 0);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_EPOCH,
	    0x7fffffff), 0);

	/* a divergence needs an end */
	assert_int_equal(decode_patched(dec_rfetch_resp, a, an, RS_DIV_EPOCH,
	    0), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch_resp, a, an, RS_DIV_EPOCH,
	    5), -KLOG_EPROTO);
	{
		uint8_t buf[128];

		memcpy(buf, a, an);
		put_be32(buf + RS_DIV_EPOCH, 5);
		put_be32(buf + RS_DIV_END, 0);
		put_be32(buf + RS_DIV_END + 4, 0x20);
		assert_int_equal(decode_copy(dec_rfetch_resp, buf, an), 0);
		put_be32(buf + RS_DIV_EPOCH, 0);
		put_be32(buf + RS_DIV_END + 4, 0);
		assert_int_equal(decode_copy(dec_rfetch_resp, buf, an), 0);
	}
	/* a set size that is negative, or longer than what is there */
	assert_int_equal(decode_patched(dec_rfetch_resp, a, an, RS_SET_SIZE,
	    0xffffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch_resp, a, an, RS_SET_SIZE,
	    4), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch_resp, a, an, RS_SET_SIZE,
	    2), -KLOG_EPROTO);
	/* short bodies and leftover bytes: test_truncations and
	 * test_trailing_bytes run these frames too */
	assert_int_equal(decode_copy(dec_rfetch, q, qn - 1), -KLOG_EPROTO);
	assert_int_equal(decode_copy(dec_rfetch_resp, a, an - 1),
	    -KLOG_EPROTO);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fetch),
		cmocka_unit_test(test_fetch_resp),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_counts_over_max),
		cmocka_unit_test(test_negative_fields),
		cmocka_unit_test(test_null_strings),
		cmocka_unit_test(test_fetch_grow),
		cmocka_unit_test(test_rfetch),
		cmocka_unit_test(test_rpos),
		cmocka_unit_test(test_rfetch_resp),
		cmocka_unit_test(test_rfetch_refusals),
	};

	return cmocka_run_group_tests_name("fetch", tests, NULL, NULL);
}
