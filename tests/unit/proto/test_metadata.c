/*
 * Unit tests for lib/proto/metadata.c.  The expected frames are written out
 * byte by byte from the layouts in include/klog/proto/proto.h: they are
 * the specification, not the output of the encoder.
 */
#include "proto/wirecheck.h"

/* METADATA, correlation 11: topics "a" and "bc". */
static const uint8_t metadata_req[] = {
	0x00, 0x00, 0x00, 0x13,                   /* size 19 */
	0x00, 0x05,                               /* api METADATA */
	0x00, 0x01,
	0x00, 0x00, 0x00, 0x0b,
	0x00, 0x00, 0x00, 0x02,
	0x00, 0x01, 'a',
	0x00, 0x02, 'b', 'c',
};

static const uint8_t metadata_resp[] = {
	0x00, 0x00, 0x00, 0x38,                   /* size 56 */
	0x00, 0x00, 0x00, 0x0b,
	0x00, 0x00,
	0x00, 0x00, 0x00, 0x01,                   /* broker_id */
	0x00, 0x00, 0x00, 0x01,                   /* nbrokers */
	0x00, 0x00, 0x00, 0x01,                   /* id */
	0x00, 0x01, 'h',
	0x00, 0x00, 0x23, 0x84,                   /* port 9092 */
	0x00, 0x00, 0x00, 0x02,                   /* ntopics */
	0x00, 0x00,                               /* error */
	0x00, 0x01, 'a',
	0x00, 0x00, 0x00, 0x02,                   /* partitions */
	0x00, 0x00, 0x00, 0x01,                   /* broker_id */
	0x00, 0x07,                               /* UNKNOWN_TOPIC */
	0x00, 0x02, 'z', 'z',
	0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0xff, 0xff,
};

static int
dec_metadata(const uint8_t *p, size_t n)
{
	klog_str_t topics[MAXN];
	uint32_t k;

	return klog_proto_decode_metadata(p, n, topics, MAXN, &k);
}

static int
dec_metadata_resp(const uint8_t *p, size_t n)
{
	klog_metadata_t md;
	klog_meta_broker_t brokers[MAXN];
	klog_meta_topic_t topics[MAXN];

	return klog_proto_decode_metadata_resp(p, n, &md, brokers, MAXN,
	    topics, MAXN);
}

/* ---- byte-exact encodings and their decodings ---- */

static void
test_metadata(void **state)
{
	static const uint8_t all[] = {
		0x00, 0x00, 0x00, 0x0c,
		0x00, 0x05,
		0x00, 0x01,
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00,           /* no topics: all of them */
	};
	const klog_str_t in[2] = { STR("a"), STR("bc") };
	klog_str_t topics[2];
	klog_buf_t b;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_metadata(&b, 11, in, 2), 0);
	assert_frame(&b, metadata_req, sizeof(metadata_req));
	klog_buf_reset(&b);
	assert_int_equal(klog_proto_encode_metadata(&b, 0, NULL, 0), 0);
	assert_frame(&b, all, sizeof(all));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_metadata(REQ_BODY(metadata_req),
	    REQ_BODY_LEN(metadata_req), topics, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_str(topics[0], "a");
	assert_str(topics[1], "bc");
	assert_int_equal(klog_proto_decode_metadata(REQ_BODY(all),
	    REQ_BODY_LEN(all), NULL, 0, &n), 0);
	assert_int_equal(n, 0);
}

static void
test_metadata_resp(void **state)
{
	klog_meta_broker_t brokers_in[1] = { { 1, STR("h"), 9092 } };
	klog_meta_topic_t topics_in[2] = {
		{ KLOG_WIRE_NONE, STR("a"), 2, 1 },
		{ KLOG_WIRE_UNKNOWN_TOPIC, STR("zz"), 0, -1 },
	};
	klog_metadata_t md = { 1, 1, brokers_in, 2, topics_in };
	klog_metadata_t out;
	klog_meta_broker_t brokers[1];
	klog_meta_topic_t topics[2];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_metadata_resp(&b, 11, &md), 0);
	assert_frame(&b, metadata_resp, sizeof(metadata_resp));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_metadata_resp(
	    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), &out,
	    brokers, 1, topics, 2), 0);
	assert_int_equal(out.broker_id, 1);
	assert_int_equal(out.nbrokers, 1);
	assert_ptr_equal(out.brokers, brokers);
	assert_int_equal(brokers[0].id, 1);
	assert_str(brokers[0].host, "h");
	assert_int_equal(brokers[0].port, 9092);
	assert_int_equal(out.ntopics, 2);
	assert_ptr_equal(out.topics, topics);
	assert_int_equal(topics[0].error, 0);
	assert_str(topics[0].topic, "a");
	assert_int_equal(topics[0].partitions, 2);
	assert_int_equal(topics[0].broker_id, 1);
	assert_int_equal(topics[1].error, KLOG_WIRE_UNKNOWN_TOPIC);
	assert_str(topics[1].topic, "zz");
	assert_int_equal(topics[1].partitions, 0);
	assert_int_equal(topics[1].broker_id, -1);
}

/* ---- malformed input ---- */

static const struct body_case cases[] = {
	REQ_CASE(dec_metadata, metadata_req),
	RESP_CASE(dec_metadata_resp, metadata_resp),
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
	klog_metadata_t md;
	klog_meta_broker_t brokers[1];
	uint32_t n;

	(void)state;
	assert_int_equal(klog_proto_decode_metadata(REQ_BODY(metadata_req),
	    REQ_BODY_LEN(metadata_req), NULL, 1, &n), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_metadata_resp(
	    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), &md,
	    NULL, 0, NULL, 2), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_metadata_resp(
	    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), &md,
	    brokers, 1, NULL, 1), -KLOG_ETOOBIG);
}

/* Offsets of fields inside the reference bodies (after the header). */
static void
test_negative_fields(void **state)
{
	static const struct field_case neg[] = {
		{ "metadata count", dec_metadata, REQ_BODY(metadata_req),
		    REQ_BODY_LEN(metadata_req), 0 },
		{ "metadata_resp nbrokers", dec_metadata_resp,
		    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), 4 },
		{ "metadata_resp ntopics", dec_metadata_resp,
		    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), 19 },
		{ "metadata_resp partitions", dec_metadata_resp,
		    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), 28 },
	};

	(void)state;
	check_negative_fields(neg, NELEM(neg));
}

static void
test_null_strings(void **state)
{
	(void)state;
	/* a topic asked about, a broker host */
	assert_int_equal(decode_patched16(dec_metadata, REQ_BODY(metadata_req),
	    REQ_BODY_LEN(metadata_req), 7, 0xffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched16(dec_metadata_resp,
	    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), 12, 0xffff),
	    -KLOG_EPROTO);
}

/* ---- encoders on bad input ---- */

static void
test_encode_refuses(void **state)
{
	static char big[INT16_MAX + 1];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put(&b, "keep", 4);
	assert_int_equal(klog_proto_encode_metadata(&b, 1,
	    &(klog_str_t){ big, INT16_MAX + 1 }, 1), -KLOG_EINVAL);
	assert_false(b.failed);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.data, "keep", 4);
	/* the longest string is fine */
	assert_int_equal(klog_proto_encode_metadata(&b, 1,
	    &(klog_str_t){ big, INT16_MAX }, 1), 0);
	assert_int_equal(b.len, 4 + KLOG_REQ_HEADER_SIZE + 4 + 2 + INT16_MAX);

	/* an earlier failure is sticky: the encoder reports it */
	klog_buf_reset(&b);
	assert_int_equal(klog_buf_reserve(&b, SIZE_MAX), -KLOG_ENOMEM);
	assert_int_equal(klog_proto_encode_metadata(&b, 1, NULL, 0),
	    -KLOG_ENOMEM);
	assert_int_equal(b.len, 0);
	klog_buf_free(&b);
}

/* ---- decoding into an array that grows ---- */

static void
test_metadata_grow(void **state)
{
	klog_proto_array_t a = { NULL, 0 };
	klog_str_t *names;
	uint32_t n;
	/* A body too short for its count. */
	static const uint8_t cut[] = { 0, 1, 0 };

	(void)state;
	assert_int_equal(klog_proto_decode_metadata_grow(
	    REQ_BODY(metadata_req), REQ_BODY_LEN(metadata_req), &a, &n), 0);
	names = a.p;
	assert_int_equal(n, 2);
	assert_str(names[1], "bc");
	free(a.p);

	a = (klog_proto_array_t){ NULL, 0 };
	assert_int_equal(klog_proto_decode_metadata_grow(cut, sizeof(cut), &a,
	    &n), -KLOG_EPROTO);
	assert_null(a.p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metadata),
		cmocka_unit_test(test_metadata_resp),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_counts_over_max),
		cmocka_unit_test(test_negative_fields),
		cmocka_unit_test(test_null_strings),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_metadata_grow),
	};

	return cmocka_run_group_tests_name("metadata", tests, NULL, NULL);
}
