/*
 * Unit tests for lib/proto/topicadmin.c: CREATE_TOPIC, ALTER_TOPIC and
 * DELETE_TOPIC.  The expected frames are written out byte by byte from the
 * layouts in include/klog/proto/proto.h: they are the specification, not
 * the output of the encoder.
 */
#include "proto/wirecheck.h"

/* CREATE_TOPIC "ab" with 3 partitions, correlation 12, byte for byte;
 * DELETE_TOPIC sends no count. */
static const uint8_t create_req[] = {
	0, 0, 0, 16, 0, 8, 0, 1, 0, 0, 0, 12,
	0, 2, 'a', 'b', 0, 0, 0, 3,
};
static const uint8_t delete_req[] = {
	0, 0, 0, 12, 0, 10, 0, 1, 0, 0, 0, 12,
	0, 2, 'a', 'b',
};

static void
test_topic_admin(void **state)
{
	klog_topic_admin_t q = { STR("ab"), 3 }, out;
	const uint8_t *body = create_req + KLOG_REQ_HEADER_SIZE;
	size_t len = sizeof(create_req) - KLOG_REQ_HEADER_SIZE;
	uint8_t bad[sizeof(create_req)];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_topic_admin(&b,
	    KLOG_API_CREATE_TOPIC, 12, &q), 0);
	assert_int_equal(b.len, sizeof(create_req));
	assert_memory_equal(b.data, create_req, sizeof(create_req));
	klog_buf_reset(&b);
	assert_int_equal(klog_proto_encode_topic_admin(&b,
	    KLOG_API_DELETE_TOPIC, 12, &q), 0);
	assert_int_equal(b.len, sizeof(delete_req));
	assert_memory_equal(b.data, delete_req, sizeof(delete_req));
	klog_buf_reset(&b);
	/* Not an admin api, a negative count: nothing written. */
	assert_int_equal(klog_proto_encode_topic_admin(&b, KLOG_API_FETCH, 1,
	    &q), -KLOG_EINVAL);
	q.partitions = -1;
	assert_int_equal(klog_proto_encode_topic_admin(&b,
	    KLOG_API_ALTER_TOPIC, 1, &q), -KLOG_EINVAL);
	assert_int_equal(b.len, 0);
	klog_buf_free(&b);

	memset(&out, 0x55, sizeof(out));
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_ALTER_TOPIC,
	    body, len, &out), 0);
	assert_str(out.topic, "ab");
	assert_int_equal(out.partitions, 3);
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_DELETE_TOPIC,
	    delete_req + KLOG_REQ_HEADER_SIZE,
	    sizeof(delete_req) - KLOG_REQ_HEADER_SIZE, &out), 0);
	assert_str(out.topic, "ab");
	assert_int_equal(out.partitions, 0);
	/* A delete with a count has a byte left over; short bodies. */
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_DELETE_TOPIC,
	    body, len, &out), -KLOG_EPROTO);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(klog_proto_decode_topic_admin(
		    KLOG_API_CREATE_TOPIC, body, n, &out), -KLOG_EPROTO);
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_PRODUCE, body,
	    len, &out), -KLOG_EINVAL);
	memcpy(bad, create_req, sizeof(bad));
	bad[KLOG_REQ_HEADER_SIZE + 4] = 0x80;      /* partitions < 0 */
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_CREATE_TOPIC,
	    bad + KLOG_REQ_HEADER_SIZE, len, &out), -KLOG_EPROTO);
	memcpy(bad, create_req, sizeof(bad));
	bad[KLOG_REQ_HEADER_SIZE] = 0xff;          /* a null topic */
	bad[KLOG_REQ_HEADER_SIZE + 1] = 0xff;
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_CREATE_TOPIC,
	    bad + KLOG_REQ_HEADER_SIZE, len, &out), -KLOG_EPROTO);
}

/* Its answer: header (correlation 12, no error), "ab", INVALID_PARTITIONS,
 * 4 partitions. */
static const uint8_t admin_resp[] = {
	0, 0, 0, 16, 0, 0, 0, 12, 0, 0,
	0, 2, 'a', 'b', 0, 22, 0, 0, 0, 4,
};

static void
test_topic_admin_resp(void **state)
{
	klog_topic_admin_resp_t r = { STR("ab"),
	    KLOG_WIRE_INVALID_PARTITIONS, 4 }, out;
	const uint8_t *body = admin_resp + KLOG_RESP_HEADER_SIZE;
	size_t len = sizeof(admin_resp) - KLOG_RESP_HEADER_SIZE;
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_topic_admin_resp(&b, 12, &r), 0);
	assert_int_equal(b.len, sizeof(admin_resp));
	assert_memory_equal(b.data, admin_resp, sizeof(admin_resp));
	klog_buf_free(&b);
	memset(&out, 0x55, sizeof(out));
	assert_int_equal(klog_proto_decode_topic_admin_resp(body, len, &out),
	    0);
	assert_str(out.topic, "ab");
	assert_int_equal(out.error, KLOG_WIRE_INVALID_PARTITIONS);
	assert_int_equal(out.partitions, 4);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(klog_proto_decode_topic_admin_resp(body, n,
		    &out), -KLOG_EPROTO);
	assert_string_equal(klog_wire_error_name(KLOG_WIRE_TOPIC_EXISTS),
	    "TOPIC_EXISTS");
	assert_int_equal(klog_wire_error_to_klog(KLOG_WIRE_TOPIC_REPLICATED),
	    -KLOG_EBUSY);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topic_admin),
		cmocka_unit_test(test_topic_admin_resp),
	};

	return cmocka_run_group_tests_name("topicadmin", tests, NULL, NULL);
}
