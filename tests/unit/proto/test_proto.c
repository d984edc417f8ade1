/*
 * Unit tests for lib/proto/proto.c: framing, the wire error codes, the API
 * names.  Each API's encoders and decoders are tested beside this file
 * (test_produce.c, test_fetch.c, ...).
 */
#include "proto/wirecheck.h"

/* ---- header and framing ---- */

static void
test_req_frame(void **state)
{
	static const uint8_t want[] = {
		0x00, 0x00, 0x00, 0x08,
		0x00, 0x0d,
		0x00, 0x01,
		0xff, 0xff, 0xff, 0xfe,
	};
	klog_buf_t b;
	klog_req_header_t h;
	size_t start;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put(&b, "junk", 4);
	start = klog_proto_req_begin(&b, 13, -2);
	assert_int_equal(start, 4);
	klog_proto_end(&b, start);
	assert_int_equal(b.len, 4 + sizeof(want));
	assert_memory_equal(b.data + 4, want, sizeof(want));
	assert_int_equal(klog_proto_req_header(b.data + 4, sizeof(want), 100,
	    &h), 0);
	assert_int_equal(h.size, 8);
	assert_int_equal(h.api, 13);
	assert_int_equal(h.version, KLOG_PROTO_VERSION);
	assert_int_equal(h.correlation, -2);
	klog_buf_free(&b);
}

static void
test_resp_frame(void **state)
{
	static const uint8_t want[] = {
		0x00, 0x00, 0x00, 0x08,
		0x00, 0x00, 0x01, 0x00,
		0x00, 0x0c,                       /* UNSUPPORTED_VERSION */
		0xab, 0xcd,
	};
	klog_buf_t b;
	klog_resp_header_t h;
	size_t start;

	(void)state;
	klog_buf_init(&b);
	start = klog_proto_resp_begin(&b, 256,
	    KLOG_WIRE_UNSUPPORTED_VERSION);
	klog_buf_put_i16(&b, (int16_t)0xabcd);
	klog_proto_end(&b, start);
	assert_frame(&b, want, sizeof(want));
	assert_int_equal(klog_proto_resp_header(b.data, b.len, 100, &h), 0);
	assert_int_equal(h.size, 8);
	assert_int_equal(h.correlation, 256);
	assert_int_equal(h.error, KLOG_WIRE_UNSUPPORTED_VERSION);
	klog_buf_free(&b);
}

static void
test_req_header_edges(void **state)
{
	uint8_t buf[KLOG_REQ_HEADER_SIZE] = {
		0, 0, 0, 8, 0, 1, 0, 1, 0, 0, 0, 5,
	};
	klog_req_header_t h;

	(void)state;
	for (size_t len = 0; len < 4; len++)
		assert_int_equal(klog_proto_req_header(buf, len, 100, &h),
		    -KLOG_EPARTIAL);
	assert_int_equal(klog_proto_req_header(NULL, 0, 100, &h),
	    -KLOG_EPARTIAL);
	/* a good size with the rest still to come */
	for (size_t len = 4; len < sizeof(buf); len++) {
		h.size = 0;
		assert_int_equal(klog_proto_req_header(buf, len, 100, &h),
		    -KLOG_EPARTIAL);
		assert_int_equal(h.size, 8);
	}
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf), 100, &h), 0);
	assert_int_equal(h.api, KLOG_API_FETCH);
	assert_int_equal(h.correlation, 5);

	/* a size too small for the header is refused from its 4 bytes */
	for (uint32_t s = 0; s < 8; s++) {
		put_be32(buf, s);
		assert_int_equal(klog_proto_req_header(buf, 4, 100, &h),
		    -KLOG_EPROTO);
	}
	put_be32(buf, 0x80000000u);
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf), SIZE_MAX, &h),
	    -KLOG_EPROTO);
	put_be32(buf, 0xffffffffu);
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf), SIZE_MAX, &h),
	    -KLOG_EPROTO);

	/* max_size bounds the size field, inclusive */
	put_be32(buf, 100);
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf), 100, &h), 0);
	assert_int_equal(h.size, 100);
	put_be32(buf, 101);
	assert_int_equal(klog_proto_req_header(buf, 4, 100, &h),
	    -KLOG_ETOOBIG);
	put_be32(buf, 0x7fffffff);
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf),
	    KLOG_DEFAULT_MAX_REQUEST, &h), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf), SIZE_MAX, &h),
	    0);
}

static void
test_resp_header_edges(void **state)
{
	uint8_t buf[KLOG_RESP_HEADER_SIZE] = {
		0, 0, 0, 6, 0, 0, 0, 3, 0xff, 0xff,
	};
	klog_resp_header_t h;

	(void)state;
	for (size_t len = 0; len < 4; len++)
		assert_int_equal(klog_proto_resp_header(buf, len, 100, &h),
		    -KLOG_EPARTIAL);
	for (size_t len = 4; len < sizeof(buf); len++)
		assert_int_equal(klog_proto_resp_header(buf, len, 100, &h),
		    -KLOG_EPARTIAL);
	assert_int_equal(klog_proto_resp_header(buf, sizeof(buf), 100, &h), 0);
	assert_int_equal(h.size, 6);
	assert_int_equal(h.correlation, 3);
	assert_int_equal(h.error, KLOG_WIRE_UNKNOWN);
	put_be32(buf, 5);
	assert_int_equal(klog_proto_resp_header(buf, sizeof(buf), 100, &h),
	    -KLOG_EPROTO);
	put_be32(buf, 0xfffffffau);
	assert_int_equal(klog_proto_resp_header(buf, sizeof(buf), 100, &h),
	    -KLOG_EPROTO);
	put_be32(buf, 101);
	assert_int_equal(klog_proto_resp_header(buf, sizeof(buf), 100, &h),
	    -KLOG_ETOOBIG);
}

static void
test_peek_correlation(void **state)
{
	static const uint8_t req[KLOG_REQ_HEADER_SIZE] = {
		0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 7,
	};

	(void)state;
	assert_int_equal(klog_proto_peek_correlation(req, sizeof(req)), 7);
	assert_int_equal(klog_proto_peek_correlation(req, 11), 0);
}

/* ---- error codes ---- */

static void
test_error_names(void **state)
{
	(void)state;
	for (int c = 0; c < KLOG_WIRE_ERROR_MAX; c++) {
		const char *name = klog_wire_error_name(c);

		assert_non_null(name);
		if (strcmp(name, "UNKNOWN") == 0 || name[0] == '\0')
			fail_msg("wire error %d has no name", c);
		for (int d = 0; d < c; d++)
			assert_string_not_equal(name, klog_wire_error_name(d));
	}
	assert_string_equal(klog_wire_error_name(KLOG_WIRE_NONE), "NONE");
	assert_string_equal(klog_wire_error_name(1), "OFFSET_OUT_OF_RANGE");
	assert_string_equal(klog_wire_error_name(8), "NOT_BOUNDARY");
	assert_string_equal(klog_wire_error_name(16), "PARTIAL_MESSAGE");
	assert_string_equal(klog_wire_error_name(-1), "UNKNOWN");
	assert_string_equal(klog_wire_error_name(-2), "UNKNOWN");
	assert_string_equal(klog_wire_error_name(KLOG_WIRE_ERROR_MAX),
	    "UNKNOWN");
	assert_string_equal(klog_wire_error_name(32767), "UNKNOWN");
}

static void
test_error_mapping(void **state)
{
	/* wire -> klog -> the same wire code */
	static const struct {
		int wire, klog;
	} both[] = {
		{ KLOG_WIRE_NONE, 0 },
		{ KLOG_WIRE_OFFSET_OUT_OF_RANGE, -KLOG_ERANGE },
		{ KLOG_WIRE_INVALID_MESSAGE, -KLOG_ECORRUPT },
		{ KLOG_WIRE_WRONG_PARTITION, -KLOG_ENOPARTITION },
		{ KLOG_WIRE_INVALID_FETCH_SIZE, -KLOG_EINVAL },
		{ KLOG_WIRE_MESSAGE_TOO_LARGE, -KLOG_ETOOBIG },
		{ KLOG_WIRE_INVALID_TOPIC, -KLOG_ETOPIC },
		{ KLOG_WIRE_UNKNOWN_TOPIC, -KLOG_ENOTOPIC },
		{ KLOG_WIRE_NOT_BOUNDARY, -KLOG_ENOTBOUNDARY },
		{ KLOG_WIRE_STORAGE_ERROR, -KLOG_EIO },
		{ KLOG_WIRE_DISK_FULL, -KLOG_ENOSPC },
		{ KLOG_WIRE_INVALID_REQUEST, -KLOG_EPROTO },
		{ KLOG_WIRE_UNSUPPORTED_CODEC, -KLOG_EUNSUPPORTED },
		{ KLOG_WIRE_PARTIAL_MESSAGE, -KLOG_EPARTIAL },
		{ KLOG_WIRE_NOT_LEADER, -KLOG_ENOTLEADER },
		{ KLOG_WIRE_NOT_ENOUGH_REPLICAS, -KLOG_ENOREPLICAS },
		{ KLOG_WIRE_FENCED_LEADER_EPOCH, -KLOG_EFENCED },
		{ KLOG_WIRE_AUTHENTICATION_FAILED, -KLOG_EAUTH },
	};
	/* wire -> klog only: the reverse picks another code */
	static const struct {
		int wire, klog;
	} one[] = {
		{ KLOG_WIRE_UNKNOWN, -KLOG_EBROKER },
		{ KLOG_WIRE_UNSUPPORTED_VERSION, -KLOG_EUNSUPPORTED },
		{ KLOG_WIRE_UNKNOWN_API, -KLOG_EUNSUPPORTED },
		{ KLOG_WIRE_REQUEST_TOO_LARGE, -KLOG_ETOOBIG },
		{ KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND, -KLOG_ENOREPLICAS },
		/* The admin answers' (klog-group words them itself). */
		{ KLOG_WIRE_TOPIC_EXISTS, -KLOG_EEXIST },
		{ KLOG_WIRE_INVALID_PARTITIONS, -KLOG_EINVAL },
		{ KLOG_WIRE_TOPIC_REPLICATED, -KLOG_EBUSY },
		/* SASL's: one failure to the tools, whatever the step. */
		{ KLOG_WIRE_AUTHENTICATION_REQUIRED, -KLOG_EAUTH },
		{ KLOG_WIRE_UNSUPPORTED_MECHANISM, -KLOG_EAUTH },
		{ KLOG_WIRE_ILLEGAL_AUTH_STATE, -KLOG_EAUTH },
		/* The ACLs' refusals: one code to the tools (exit 77). */
		{ KLOG_WIRE_CLUSTER_AUTHORIZATION_FAILED, -KLOG_EDENIED },
		{ KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED, -KLOG_EDENIED },
		/* An idempotent producer's refusals: the broker's word, which
		 * a producer reads by its wire code. */
		{ KLOG_WIRE_OUT_OF_ORDER_SEQUENCE, -KLOG_EBROKER },
		{ KLOG_WIRE_INVALID_PRODUCER_EPOCH, -KLOG_EBROKER },
		{ KLOG_WIRE_UNKNOWN_PRODUCER_ID, -KLOG_EBROKER },
		{ KLOG_WIRE_ERROR_MAX, -KLOG_EBROKER },
		{ 1000, -KLOG_EBROKER },
		{ -7, -KLOG_EBROKER },
	};
	int covered[KLOG_WIRE_ERROR_MAX] = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(both) / sizeof(both[0]); i++) {
		assert_int_equal(klog_wire_error_to_klog(both[i].wire),
		    both[i].klog);
		assert_int_equal(klog_wire_error_from_klog(both[i].klog),
		    both[i].wire);
		/* a positive code means the same */
		assert_int_equal(klog_wire_error_from_klog(-both[i].klog),
		    both[i].wire);
		covered[both[i].wire] = 1;
	}
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		assert_int_equal(klog_wire_error_to_klog(one[i].wire),
		    one[i].klog);
		if (one[i].wire >= 0 && one[i].wire < KLOG_WIRE_ERROR_MAX)
			covered[one[i].wire] = 1;
	}
	for (int c = 0; c < KLOG_WIRE_ERROR_MAX; c++)
		if (!covered[c])
			fail_msg("wire error %d not in the mapping test", c);
	/* every non-zero wire code is an error to the library */
	for (int c = 1; c < KLOG_WIRE_ERROR_MAX; c++)
		assert_true(klog_wire_error_to_klog(c) < 0);
	/* and a person reads the refusals as such */
	assert_string_equal(klog_wire_error_text(
	    KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED),
	    "not authorized (TOPIC_AUTHORIZATION_FAILED)");
	assert_string_equal(klog_wire_error_text(KLOG_WIRE_NOT_LEADER),
	    "NOT_LEADER");
	/* library codes with no wire meaning */
	assert_int_equal(klog_wire_error_from_klog(-KLOG_EBROKER),
	    KLOG_WIRE_UNKNOWN);
	assert_int_equal(klog_wire_error_from_klog(-KLOG_ENOMEM),
	    KLOG_WIRE_UNKNOWN);
	assert_int_equal(klog_wire_error_from_klog(-KLOG_E_MAX),
	    KLOG_WIRE_UNKNOWN);
}

static void
test_api_names(void **state)
{
	(void)state;
	assert_string_equal(klog_proto_api_name(KLOG_API_PRODUCE), "PRODUCE");
	assert_string_equal(klog_proto_api_name(KLOG_API_FETCH), "FETCH");
	assert_string_equal(klog_proto_api_name(KLOG_API_OFFSETS), "OFFSETS");
	assert_string_equal(klog_proto_api_name(KLOG_API_METADATA),
	    "METADATA");
	assert_string_equal(klog_proto_api_name(KLOG_API_REPLICA_FETCH),
	    "REPLICA_FETCH");
	assert_string_equal(klog_proto_api_name(6), "REPLICA_FETCH");
	assert_string_equal(klog_proto_api_name(7), "REPLICA_POS");
	assert_string_equal(klog_proto_api_name(8), "CREATE_TOPIC");
	assert_string_equal(klog_proto_api_name(9), "ALTER_TOPIC");
	assert_string_equal(klog_proto_api_name(10), "DELETE_TOPIC");
	assert_string_equal(klog_proto_api_name(11), "AUTHENTICATE");
	assert_string_equal(klog_proto_api_name(12), "INIT_PRODUCER");
	assert_string_equal(klog_proto_api_name(13), "UNKNOWN");
	assert_string_equal(klog_proto_api_name(2), "UNKNOWN");
	assert_string_equal(klog_proto_api_name(-1), "UNKNOWN");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_frame),
		cmocka_unit_test(test_resp_frame),
		cmocka_unit_test(test_req_header_edges),
		cmocka_unit_test(test_resp_header_edges),
		cmocka_unit_test(test_peek_correlation),
		cmocka_unit_test(test_error_names),
		cmocka_unit_test(test_error_mapping),
		cmocka_unit_test(test_api_names),
	};

	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
