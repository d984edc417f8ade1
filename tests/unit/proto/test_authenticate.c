/*
 * Unit tests for lib/proto/authenticate.c: AUTHENTICATE (11).  The frames
 * are written out byte by byte from the layout in
 * include/klog/proto/proto.h and man/klog-protocol.7.
 */
#include "proto/wirecheck.h"

/* AUTHENTICATE "PLAIN" with the 5 bytes "\0a\0pw", correlation 7. */
static const uint8_t auth_req[] = {
	0, 0, 0, 24, 0, 11, 0, 1, 0, 0, 0, 7,
	0, 5, 'P', 'L', 'A', 'I', 'N',
	0, 0, 0, 5, 0, 'a', 0, 'p', 'w',
};

/* Its answers: 3 bytes "v=x"; AUTHENTICATION_FAILED with no body. */
static const uint8_t auth_resp[] = {
	0, 0, 0, 13, 0, 0, 0, 7, 0, 0,
	0, 0, 0, 3, 'v', '=', 'x',
};
static const uint8_t auth_fail[] = {
	0, 0, 0, 6, 0, 0, 0, 7, 0, 25,
};

static void
test_auth_req(void **state)
{
	klog_auth_req_t q = { STR("PLAIN"), (const uint8_t *)"\0a\0pw", 5 },
	    out;
	uint8_t bad[sizeof(auth_req)];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_auth(&b, 7, &q), 0);
	assert_frame(&b, auth_req, sizeof(auth_req));
	klog_buf_reset(&b);
	/* No mechanism, one too long, bytes over the limit: nothing. */
	q.mechanism = STR("");
	assert_int_equal(klog_proto_encode_auth(&b, 7, &q), -KLOG_EINVAL);
	q.mechanism = STR("SCRAM-SHA-256-AND-MORE");
	assert_int_equal(klog_proto_encode_auth(&b, 7, &q), -KLOG_EINVAL);
	q.mechanism = STR("PLAIN");
	q.len = KLOG_AUTH_BYTES_MAX + 1;
	assert_int_equal(klog_proto_encode_auth(&b, 7, &q), -KLOG_EINVAL);
	assert_int_equal(b.len, 0);
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_auth(REQ_BODY(auth_req),
	    REQ_BODY_LEN(auth_req), &out), 0);
	assert_str(out.mechanism, "PLAIN");
	assert_int_equal(out.len, 5);
	assert_memory_equal(out.bytes, "\0a\0pw", 5);
	for (size_t n = 0; n < REQ_BODY_LEN(auth_req); n++)
		assert_int_equal(klog_proto_decode_auth(REQ_BODY(auth_req), n,
		    &out), -KLOG_EPROTO);
	memcpy(bad, auth_req, sizeof(bad));
	bad[KLOG_REQ_HEADER_SIZE + 7] = 0x80;      /* a negative size */
	assert_int_equal(klog_proto_decode_auth(REQ_BODY(bad),
	    REQ_BODY_LEN(bad), &out), -KLOG_EPROTO);
	memcpy(bad, auth_req, sizeof(bad));
	bad[KLOG_REQ_HEADER_SIZE + 1] = 0;         /* an empty mechanism: */
	bad[KLOG_REQ_HEADER_SIZE + 2] = 0;         /* "PL" read as a size */
	assert_int_equal(klog_proto_decode_auth(REQ_BODY(bad),
	    REQ_BODY_LEN(bad), &out), -KLOG_EPROTO);
}

static void
test_auth_req_too_big(void **state)
{
	size_t n = 2 + 5 + 4 + KLOG_AUTH_BYTES_MAX + 1;
	uint8_t *body = calloc(1, n);

	(void)state;
	assert_non_null(body);
	memcpy(body, "\0\5PLAIN", 7);
	put_be32(body + 7, KLOG_AUTH_BYTES_MAX + 1);
	klog_auth_req_t out;
	assert_int_equal(klog_proto_decode_auth(body, n, &out), -KLOG_ETOOBIG);
	free(body);
}

static void
test_auth_resp(void **state)
{
	const uint8_t *bytes;
	uint32_t n;
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_auth_resp(&b, 7, KLOG_WIRE_NONE,
	    (const uint8_t *)"v=x", 3), 0);
	assert_frame(&b, auth_resp, sizeof(auth_resp));
	klog_buf_reset(&b);
	assert_int_equal(klog_proto_encode_auth_resp(&b, 7,
	    KLOG_WIRE_AUTHENTICATION_FAILED, (const uint8_t *)"v=x", 3), 0);
	assert_frame(&b, auth_fail, sizeof(auth_fail));
	klog_buf_free(&b);
	assert_int_equal(klog_proto_decode_auth_resp(RESP_BODY(auth_resp),
	    RESP_BODY_LEN(auth_resp), &bytes, &n), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(bytes, "v=x", 3);
	for (size_t k = 0; k < RESP_BODY_LEN(auth_resp); k++)
		assert_int_equal(klog_proto_decode_auth_resp(
		    RESP_BODY(auth_resp), k, &bytes, &n), -KLOG_EPROTO);
}

/* The six codes by name, and what the library makes of them. */
static void
test_auth_errors(void **state)
{
	static const struct { int code; const char *name; int klog; } e[] = {
		{ 24, "AUTHENTICATION_REQUIRED", -KLOG_EAUTH },
		{ 25, "AUTHENTICATION_FAILED", -KLOG_EAUTH },
		{ 26, "UNSUPPORTED_MECHANISM", -KLOG_EAUTH },
		{ 27, "ILLEGAL_AUTH_STATE", -KLOG_EAUTH },
		{ 28, "CLUSTER_AUTHORIZATION_FAILED", -KLOG_EDENIED },
		{ 29, "TOPIC_AUTHORIZATION_FAILED", -KLOG_EDENIED },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(e); i++) {
		assert_string_equal(klog_wire_error_name(e[i].code),
		    e[i].name);
		assert_int_equal(klog_wire_error_to_klog(e[i].code),
		    e[i].klog);
	}
	assert_int_equal(klog_wire_error_from_klog(-KLOG_EAUTH),
	    KLOG_WIRE_AUTHENTICATION_FAILED);
	assert_string_equal(klog_proto_api_name(KLOG_API_AUTHENTICATE),
	    "AUTHENTICATE");
	assert_string_equal(klog_wire_error_name(KLOG_WIRE_ERROR_MAX),
	    "UNKNOWN");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_req),
		cmocka_unit_test(test_auth_req_too_big),
		cmocka_unit_test(test_auth_resp),
		cmocka_unit_test(test_auth_errors),
	};

	return cmocka_run_group_tests_name("authenticate", tests, NULL, NULL);
}
