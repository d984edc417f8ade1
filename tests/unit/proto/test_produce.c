/*
 * Unit tests for lib/proto/produce.c.  The expected frames are written out
 * byte by byte from the layouts in include/klog/proto/proto.h: they are
 * the specification, not the output of the encoder.
 */
#include "proto/wirecheck.h"

/* PRODUCE, correlation 7, acks 1, timeout 1500 ms,
 * ("ab", 3, "xyz") and ("c", -1, empty set). */
static const uint8_t produce_req[] = {
	0x00, 0x00, 0x00, 0x2c,                   /* size 44 */
	0x00, 0x00,                               /* api PRODUCE */
	0x00, 0x01,                               /* version 1 */
	0x00, 0x00, 0x00, 0x07,                   /* correlation */
	0x00, 0x01,                               /* acks 1 */
	0x00, 0x00, 0x05, 0xdc,                   /* timeout 1500 */
	0x00, 0x00, 0x00, 0x02,                   /* count */
	0x00, 0x02, 'a', 'b',                     /* topic */
	0x00, 0x00, 0x00, 0x03,                   /* partition 3 */
	0x00, 0x00, 0x00, 0x03,                   /* set_size */
	'x', 'y', 'z',
	0x00, 0x01, 'c',
	0xff, 0xff, 0xff, 0xff,                   /* partition -1 */
	0x00, 0x00, 0x00, 0x00,                   /* empty set */
};

static const uint8_t produce_resp[] = {
	0x00, 0x00, 0x00, 0x2d,                   /* size 45 */
	0x00, 0x00, 0x00, 0x07,                   /* correlation */
	0x00, 0x00,                               /* error NONE */
	0x00, 0x00, 0x00, 0x02,                   /* count */
	0x00, 0x02, 'a', 'b',
	0x00, 0x00, 0x00, 0x03,                   /* partition */
	0x00, 0x00,                               /* error */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  /* offset */
	0x00, 0x01, 'c',
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x05,                               /* MESSAGE_TOO_LARGE */
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  /* offset -1 */
};


static int
dec_produce(const uint8_t *p, size_t n)
{
	klog_produce_req_t req;
	klog_produce_part_t parts[MAXN];

	return klog_proto_decode_produce(p, n, &req, parts, MAXN);
}

static int
dec_produce_resp(const uint8_t *p, size_t n)
{
	klog_produce_result_t res[MAXN];
	uint32_t k;

	return klog_proto_decode_produce_resp(p, n, res, MAXN, &k);
}

/* ---- byte-exact encodings and their decodings ---- */

static void
test_produce(void **state)
{
	klog_produce_part_t in[2] = {
		{ STR("ab"), 3, (const uint8_t *)"xyz", 3 },
		{ STR("c"), -1, NULL, 0 },
	};
	klog_produce_req_t req = { KLOG_ACKS_LEADER, 1500, 2, in };
	klog_produce_req_t out;
	klog_produce_part_t parts[2];
	klog_req_header_t h;
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_produce(&b, 7, &req), 0);
	assert_frame(&b, produce_req, sizeof(produce_req));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_req_header(produce_req,
	    sizeof(produce_req), 1000, &h), 0);
	assert_int_equal(h.size, sizeof(produce_req) - 4);
	assert_int_equal(h.api, KLOG_API_PRODUCE);
	assert_int_equal(h.correlation, 7);
	assert_int_equal(klog_proto_decode_produce(REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), &out, parts, 2), 0);
	assert_int_equal(out.acks, 1);
	assert_int_equal(out.timeout_ms, 1500);
	assert_int_equal(out.count, 2);
	assert_ptr_equal(out.parts, parts);
	assert_str(parts[0].topic, "ab");
	assert_ptr_equal(parts[0].topic.p, produce_req + 24);
	assert_int_equal(parts[0].partition, 3);
	assert_int_equal(parts[0].set_len, 3);
	assert_ptr_equal(parts[0].set, produce_req + 34);
	assert_str(parts[1].topic, "c");
	assert_int_equal(parts[1].partition, -1);
	assert_int_equal(parts[1].set_len, 0);
}

static void
test_produce_resp(void **state)
{
	klog_produce_result_t in[2] = {
		{ STR("ab"), 3, KLOG_WIRE_NONE, 0x0102030405060708 },
		{ STR("c"), 0, KLOG_WIRE_MESSAGE_TOO_LARGE, -1 },
	};
	klog_produce_result_t res[2];
	klog_buf_t b;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_produce_resp(&b, 7, in, 2), 0);
	assert_frame(&b, produce_resp, sizeof(produce_resp));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_produce_resp(RESP_BODY(produce_resp),
	    RESP_BODY_LEN(produce_resp), res, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_str(res[0].topic, "ab");
	assert_int_equal(res[0].partition, 3);
	assert_int_equal(res[0].error, 0);
	assert_int_equal(res[0].offset, 0x0102030405060708);
	assert_str(res[1].topic, "c");
	assert_int_equal(res[1].error, KLOG_WIRE_MESSAGE_TOO_LARGE);
	assert_int_equal(res[1].offset, -1);
}

/* A produce with a large set, through a growing buffer and back. */
static void
test_produce_round_trip_large(void **state)
{
	enum { SET = 300000 };
	uint8_t *set = malloc(SET);
	klog_produce_part_t in[1] = { { STR("big"), 0, set, SET } };
	klog_produce_req_t req = { KLOG_ACKS_ALL, 0, 1, in };
	klog_produce_req_t out;
	klog_produce_part_t parts[1];
	klog_req_header_t h;
	klog_buf_t b;

	(void)state;
	assert_non_null(set);
	for (size_t i = 0; i < SET; i++)
		set[i] = (uint8_t)(i * 31);
	klog_buf_init(&b);
	klog_buf_put(&b, "prev", 4);
	assert_int_equal(klog_proto_encode_produce(&b, 1, &req), 0);
	assert_int_equal(klog_proto_req_header(b.data + 4, b.len - 4,
	    KLOG_DEFAULT_MAX_REQUEST, &h), 0);
	assert_int_equal((size_t)h.size, b.len - 8);
	assert_int_equal(klog_proto_decode_produce(b.data + 4 +
	    KLOG_REQ_HEADER_SIZE, b.len - 4 - KLOG_REQ_HEADER_SIZE, &out,
	    parts, 1), 0);
	assert_int_equal(out.acks, KLOG_ACKS_ALL);
	assert_int_equal(parts[0].set_len, SET);
	assert_memory_equal(parts[0].set, set, SET);
	klog_buf_free(&b);
	free(set);
}

/* ---- malformed input ---- */

static const struct body_case cases[] = {
	REQ_CASE(dec_produce, produce_req),
	RESP_CASE(dec_produce_resp, produce_resp),
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
	klog_produce_req_t req;
	klog_produce_result_t pres;
	uint32_t n;

	(void)state;
	assert_int_equal(klog_proto_decode_produce(REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), &req, NULL, 1), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_produce_resp(
	    RESP_BODY(produce_resp), RESP_BODY_LEN(produce_resp), &pres, 1,
	    &n), -KLOG_ETOOBIG);
	/* a huge count is refused before any entry is read */
	assert_int_equal(decode_patched(dec_produce, REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), 6, 0x7fffffff), -KLOG_ETOOBIG);
}

/* Offsets of fields inside the reference bodies (after the header). */
static void
test_negative_fields(void **state)
{
	static const struct field_case neg[] = {
		{ "produce count", dec_produce, REQ_BODY(produce_req),
		    REQ_BODY_LEN(produce_req), 6 },
		{ "produce timeout", dec_produce, REQ_BODY(produce_req),
		    REQ_BODY_LEN(produce_req), 2 },
		{ "produce set_size", dec_produce, REQ_BODY(produce_req),
		    REQ_BODY_LEN(produce_req), 18 },
		{ "last produce set_size", dec_produce, REQ_BODY(produce_req),
		    REQ_BODY_LEN(produce_req), 32 },
		{ "produce_resp count", dec_produce_resp,
		    RESP_BODY(produce_resp), RESP_BODY_LEN(produce_resp), 0 },
	};

	(void)state;
	check_negative_fields(neg, NELEM(neg));
}

static void
test_null_strings(void **state)
{
	(void)state;
	/* topic of the first part, of the second */
	assert_int_equal(decode_patched16(dec_produce, REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), 10, 0xffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched16(dec_produce, REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), 25, 0xffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched16(dec_produce_resp,
	    RESP_BODY(produce_resp), RESP_BODY_LEN(produce_resp), 4, 0x8000),
	    -KLOG_EPROTO);
}

static void
test_bad_values(void **state)
{
	static const uint16_t acks_ok[] = { 0x0000, 0x0001, 0xffff };
	static const uint16_t acks_bad[] = { 0x0002, 0xfffe, 0x7fff, 0x8000 };

	(void)state;
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(decode_patched16(dec_produce,
		    REQ_BODY(produce_req), REQ_BODY_LEN(produce_req), 0,
		    acks_ok[i]), 0);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(decode_patched16(dec_produce,
		    REQ_BODY(produce_req), REQ_BODY_LEN(produce_req), 0,
		    acks_bad[i]), -KLOG_EPROTO);
	/* a set size pointing past the body */
	assert_int_equal(decode_patched(dec_produce, REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), 18, 0x7fffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_produce, REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), 18, 4), -KLOG_EPROTO);
}

/* ---- encoders on bad input ---- */

static void
test_encode_refuses(void **state)
{
	static char big[INT16_MAX + 1];
	klog_produce_part_t part = { { big, INT16_MAX + 1 }, 0, NULL, 0 };
	klog_produce_req_t req = { 1, 0, 1, &part };
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put(&b, "keep", 4);
	assert_int_equal(klog_proto_encode_produce(&b, 1, &req),
	    -KLOG_EINVAL);
	part.topic.len = 3;
	part.set_len = 0x80000000u;
	assert_int_equal(klog_proto_encode_produce(&b, 1, &req),
	    -KLOG_EINVAL);
	assert_false(b.failed);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.data, "keep", 4);
	klog_buf_free(&b);
}

/* ---- decoding into an array that grows, results patched ---- */

static void
test_produce_grow(void **state)
{
	klog_proto_array_t a = { NULL, 0 };
	klog_produce_req_t preq;
	/* A produce body announcing 2^30 parts in 4 bytes: refused before
	 * anything is allocated. */
	static const uint8_t liar[] = { 0, 1, 0, 0, 0, 0, 0x40, 0, 0, 0 };

	(void)state;
	assert_int_equal(klog_proto_decode_produce_grow(REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), &preq, &a), 0);
	assert_int_equal(preq.count, 2);
	assert_ptr_equal(preq.parts, a.p);
	assert_str(preq.parts[1].topic, "c");
	assert_true(a.cap >= 3 * sizeof(klog_produce_part_t));
	free(a.p);

	a = (klog_proto_array_t){ NULL, 0 };
	assert_int_equal(klog_proto_decode_produce_grow(liar, sizeof(liar),
	    &preq, &a), -KLOG_EPROTO);
	assert_null(a.p);
	assert_int_equal(klog_proto_decode_produce_grow(liar, 5, &preq, &a),
	    -KLOG_EPROTO);
	assert_null(a.p);
}

static void
test_produce_result_patch(void **state)
{
	klog_produce_result_t in[2] = {
		{ STR("ab"), 3, KLOG_WIRE_NONE, 0x0102030405060708 },
		{ STR("c"), 0, KLOG_WIRE_MESSAGE_TOO_LARGE, -1 },
	};
	klog_produce_result_t res[2];
	size_t pos[2];
	klog_buf_t b;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put(&b, "prefix", 6);  /* positions are the buffer's */
	assert_int_equal(klog_proto_encode_produce_resp_at(&b, 7, in, 2, pos),
	    0);
	assert_memory_equal(b.data + 6, produce_resp, sizeof(produce_resp));
	assert_int_equal(pos[0], 6 + 14 + 2 + 2 + 4);
	assert_int_equal(pos[1], pos[0] + 2 + 8 + 2 + 1 + 4);
	klog_proto_patch_produce_result(&b, pos[0], KLOG_WIRE_DISK_FULL);
	assert_int_equal(klog_proto_decode_produce_resp(b.data + 6 + 10,
	    b.len - 6 - 10, res, 2, &n), 0);
	assert_int_equal(res[0].error, KLOG_WIRE_DISK_FULL);
	assert_int_equal(res[0].offset, -1);
	assert_int_equal(res[1].error, KLOG_WIRE_MESSAGE_TOO_LARGE);
	/* Positions outside the buffer change nothing. */
	klog_proto_patch_produce_result(&b, b.len - 9, KLOG_WIRE_DISK_FULL);
	klog_proto_patch_produce_result(&b, SIZE_MAX, KLOG_WIRE_DISK_FULL);
	assert_int_equal(klog_proto_decode_produce_resp(b.data + 6 + 10,
	    b.len - 6 - 10, res, 2, &n), 0);
	assert_int_equal(res[1].error, KLOG_WIRE_MESSAGE_TOO_LARGE);
	klog_buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_produce),
		cmocka_unit_test(test_produce_resp),
		cmocka_unit_test(test_produce_round_trip_large),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_counts_over_max),
		cmocka_unit_test(test_negative_fields),
		cmocka_unit_test(test_null_strings),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_produce_grow),
		cmocka_unit_test(test_produce_result_patch),
	};

	return cmocka_run_group_tests_name("produce", tests, NULL, NULL);
}
