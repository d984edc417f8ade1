/*
 * Unit tests for lib/proto/offsets.c.  The expected frames are written out
 * byte by byte from the layouts in include/klog/proto/proto.h: they are
 * the specification, not the output of the encoder.
 */
#include "proto/wirecheck.h"

/* OFFSETS, correlation 10: ("t", 0, latest, 1), ("t", 2, 1300000000000, 10) */
static const uint8_t offsets_req[] = {
	0x00, 0x00, 0x00, 0x32,                   /* size 50 */
	0x00, 0x04,                               /* api OFFSETS */
	0x00, 0x01,
	0x00, 0x00, 0x00, 0x0a,
	0x00, 0x00, 0x00, 0x02,
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  /* time -1 */
	0x00, 0x00, 0x00, 0x01,                   /* max */
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x01, 0x2e, 0xae, 0x09, 0xc8, 0x00,  /* time */
	0x00, 0x00, 0x00, 0x0a,
};

static const uint8_t offsets_resp[] = {
	0x00, 0x00, 0x00, 0x34,                   /* size 52 */
	0x00, 0x00, 0x00, 0x0a,
	0x00, 0x00,
	0x00, 0x00, 0x00, 0x02,
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00,
	0x00, 0x00, 0x00, 0x02,                   /* n */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x02,
	0x00, 0x03,                               /* WRONG_PARTITION */
	0x00, 0x00, 0x00, 0x00,
};

static int
dec_offsets(const uint8_t *p, size_t n)
{
	klog_offsets_part_t parts[MAXN];
	uint32_t k;

	return klog_proto_decode_offsets(p, n, parts, MAXN, &k);
}

static int
dec_offsets_resp(const uint8_t *p, size_t n)
{
	klog_offsets_result_t res[MAXN];
	uint32_t k;

	return klog_proto_decode_offsets_resp(p, n, res, MAXN, &k);
}

/* ---- byte-exact encodings and their decodings ---- */

static void
test_offsets(void **state)
{
	klog_offsets_part_t in[2] = {
		{ STR("t"), 0, KLOG_OFFSET_LATEST, 1 },
		{ STR("t"), 2, 1300000000000, 10 },
	};
	klog_offsets_part_t parts[2];
	klog_buf_t b;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_offsets(&b, 10, in, 2), 0);
	assert_frame(&b, offsets_req, sizeof(offsets_req));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_offsets(REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), parts, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_str(parts[0].topic, "t");
	assert_int_equal(parts[0].time, -1);
	assert_int_equal(parts[0].max, 1);
	assert_int_equal(parts[1].partition, 2);
	assert_int_equal(parts[1].time, 1300000000000);
	assert_int_equal(parts[1].max, 10);
}

/* Version 2: the same frame but for the header's version. */
static void
test_offsets_at(void **state)
{
	klog_offsets_part_t in[2] = {
		{ STR("t"), 0, KLOG_OFFSET_LATEST, 1 },
		{ STR("t"), 2, 1300000000000, 10 },
	};
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_offsets_at(&b, 10, in, 2), 0);
	assert_int_equal(b.len, sizeof(offsets_req));
	assert_memory_equal(b.data, offsets_req, 6);
	assert_int_equal(b.data[6], 0);
	assert_int_equal(b.data[7], KLOG_PROTO_VERSION_OFFSETS_AT);
	assert_memory_equal(b.data + 8, offsets_req + 8,
	    sizeof(offsets_req) - 8);
	/* A bad part leaves the buffer as it was, as encoders do. */
	in[0].topic.len = INT16_MAX + 1;
	assert_int_equal(klog_proto_encode_offsets_at(&b, 10, in, 2),
	    -KLOG_EINVAL);
	assert_int_equal(b.len, sizeof(offsets_req));
	klog_buf_free(&b);
}

static void
test_offsets_resp(void **state)
{
	klog_offsets_part_t parts[2] = {
		{ STR("t"), 0, KLOG_OFFSET_LATEST, 2 },
		{ STR("t"), 2, KLOG_OFFSET_EARLIEST, 1 },
	};
	const int16_t errors[2] = { 0, KLOG_WIRE_WRONG_PARTITION };
	const int64_t offs0[2] = { 0x200, 0 };
	const int64_t *const offsets[2] = { offs0, NULL };
	const int32_t counts[2] = { 2, 0 };
	klog_offsets_result_t res[2];
	klog_buf_t b;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_offsets_resp(&b, 10, parts, errors,
	    offsets, counts, 2), 0);
	assert_frame(&b, offsets_resp, sizeof(offsets_resp));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_offsets_resp(RESP_BODY(offsets_resp),
	    RESP_BODY_LEN(offsets_resp), res, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_str(res[0].topic, "t");
	assert_int_equal(res[0].error, 0);
	assert_int_equal(res[0].count, 2);
	assert_int_equal(klog_proto_offset_at(&res[0], 0), 0x200);
	assert_int_equal(klog_proto_offset_at(&res[0], 1), 0);
	assert_int_equal(klog_proto_offset_at(&res[0], 2), -1);
	assert_int_equal(klog_proto_offset_at(&res[0], -1), -1);
	assert_int_equal(res[1].partition, 2);
	assert_int_equal(res[1].error, KLOG_WIRE_WRONG_PARTITION);
	assert_int_equal(res[1].count, 0);
	assert_int_equal(klog_proto_offset_at(&res[1], 0), -1);
}

/* ---- malformed input ---- */

static const struct body_case cases[] = {
	REQ_CASE(dec_offsets, offsets_req),
	RESP_CASE(dec_offsets_resp, offsets_resp),
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
	uint32_t n;

	(void)state;
	assert_int_equal(klog_proto_decode_offsets(REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), NULL, 1, &n), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_offsets_resp(
	    RESP_BODY(offsets_resp), RESP_BODY_LEN(offsets_resp), NULL, 1,
	    &n), -KLOG_ETOOBIG);
}

/* Offsets of fields inside the reference bodies (after the header). */
static void
test_negative_fields(void **state)
{
	static const struct field_case neg[] = {
		{ "offsets count", dec_offsets, REQ_BODY(offsets_req),
		    REQ_BODY_LEN(offsets_req), 0 },
		{ "offsets max", dec_offsets, REQ_BODY(offsets_req),
		    REQ_BODY_LEN(offsets_req), 19 },
		{ "offsets_resp n", dec_offsets_resp, RESP_BODY(offsets_resp),
		    RESP_BODY_LEN(offsets_resp), 13 },
	};

	(void)state;
	check_negative_fields(neg, NELEM(neg));
}

static void
test_null_strings(void **state)
{
	(void)state;
	assert_int_equal(decode_patched16(dec_offsets, REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), 4, 0xffff), -KLOG_EPROTO);
}

static void
test_bad_values(void **state)
{
	(void)state;
	/* time -2 is earliest; -3 means nothing */
	assert_int_equal(decode_patched(dec_offsets, REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), 15, 0xfffffffe), 0);
	assert_int_equal(decode_patched(dec_offsets, REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), 15, 0xfffffffd), -KLOG_EPROTO);
	/* an offsets count too big for the body must not overflow n * 8 */
	assert_int_equal(decode_patched(dec_offsets_resp,
	    RESP_BODY(offsets_resp), RESP_BODY_LEN(offsets_resp), 13,
	    0x7fffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_offsets_resp,
	    RESP_BODY(offsets_resp), RESP_BODY_LEN(offsets_resp), 13,
	    0x20000000), -KLOG_EPROTO);
}

/* ---- encoders on bad input ---- */

static void
test_encode_refuses(void **state)
{
	klog_offsets_part_t opart = { STR("t"), 0, -1, 1 };
	const int32_t neg = -1;
	const int16_t err = 0;
	const int64_t *offs = NULL;
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put(&b, "keep", 4);
	assert_int_equal(klog_proto_encode_offsets_resp(&b, 1, &opart, &err,
	    &offs, &neg, 1), -KLOG_EINVAL);
	assert_false(b.failed);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.data, "keep", 4);
	klog_buf_free(&b);
}

/* ---- decoding into an array that grows ---- */

static void
test_offsets_grow(void **state)
{
	klog_proto_array_t a = { NULL, 0 };
	klog_offsets_part_t *op;
	uint32_t n;

	(void)state;
	assert_int_equal(klog_proto_decode_offsets_grow(REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), &a, &n), 0);
	op = a.p;
	assert_int_equal(n, 2);
	assert_int_equal(op[1].partition, 2);
	assert_int_equal(op[1].max, 10);
	free(a.p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_offsets_at),
		cmocka_unit_test(test_offsets_resp),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_counts_over_max),
		cmocka_unit_test(test_negative_fields),
		cmocka_unit_test(test_null_strings),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_offsets_grow),
	};

	return cmocka_run_group_tests_name("offsets", tests, NULL, NULL);
}
