/*
 * Unit tests for lib/kafka/kwire.c.  Requests are written byte by byte from the
 * Kafka protocol guide's layouts (they are the specification, not the
 * output of an encoder of ours); responses are read back field by field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kwire.h"

static void
test_frame(void **state)
{
	static const uint8_t f[] = {
		0, 0, 0, 12, 0, 3, 0, 1, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff,
	};
	static const uint8_t v3[] = {
		0, 0, 0, 10, 0, 18, 0, 3, 0, 0, 0, 6, 0x00, 0x00,
	};
	klog_kreq_t r;

	(void)state;
	assert_int_equal(klog_kwire_frame(f, 3, 100, &r), -KLOG_EPARTIAL);
	assert_int_equal(klog_kwire_frame(f, 10, 100, &r), -KLOG_EPARTIAL);
	assert_int_equal(r.size, 12);
	assert_int_equal(klog_kwire_frame(f, sizeof(f), 11, &r),
	    -KLOG_ETOOBIG);
	assert_int_equal(klog_kwire_frame(f, sizeof(f), 100, &r), 0);
	assert_int_equal(r.api, KLOG_KAPI_METADATA);
	assert_int_equal(r.version, 1);
	assert_int_equal(r.correlation, 5);
	assert_null(r.client_id.p);          /* a null client id */
	assert_int_equal(r.body_len, 2);
	/* A size that cannot hold a header, a negative one. */
	assert_int_equal(klog_kwire_frame((const uint8_t *)"\0\0\0\3abc", 7,
	    100, &r), -KLOG_EPROTO);
	assert_int_equal(klog_kwire_frame((const uint8_t *)"\xff\xff\xff\xff",
	    4, 100, &r), -KLOG_EPROTO);
	/* An ApiVersions whose flexible header is cut is still taken (it is
	 * answered by its version alone). */
	assert_int_equal(klog_kwire_frame(v3, sizeof(v3), 100, &r), 0);
	assert_int_equal(r.api, KLOG_KAPI_API_VERSIONS);
	assert_int_equal(r.version, 3);
	assert_int_equal(r.correlation, 6);
}

/* Any version above what is listed gets v0's layout and error 35. */
static void
test_api_versions(void **state)
{
	static const klog_kapi_range_t apis[] = {
		{ KLOG_KAPI_PRODUCE, 0, 2 }, { KLOG_KAPI_API_VERSIONS, 0, 2 },
	};
	klog_buf_t b;
	klog_rd_t rd;

	(void)state;
	klog_buf_init(&b);
	klog_kwire_api_versions(&b, 1, 0, KLOG_KERR_UNSUPPORTED_VERSION, apis,
	    2);
	klog_rd_init(&rd, b.data + 4, b.len - 4);
	assert_int_equal(klog_rd_i32(&rd), 1);
	assert_int_equal(klog_rd_i16(&rd), 35);
	assert_int_equal(klog_rd_i32(&rd), 2);
	assert_int_equal(klog_rd_i16(&rd), KLOG_KAPI_PRODUCE);
	assert_int_equal(klog_rd_i16(&rd), 0);
	assert_int_equal(klog_rd_i16(&rd), 2);
	(void)klog_rd_bytes(&rd, 6);
	assert_int_equal(klog_rd_left(&rd), 0);          /* no throttle */
	klog_buf_reset(&b);
	klog_kwire_api_versions(&b, 2, 2, KLOG_KERR_NONE, apis, 2);
	assert_int_equal(b.len, 4 + 4 + 2 + 4 + 12 + 4);
	klog_buf_free(&b);
}

/* The native codes map to Kafka's; a set in a message format the
 * listener cannot take (magic 2) says so, and a codec its version may not
 * carry (zstd before Produce v7) too. */
static void
test_errors(void **state)
{
	(void)state;
	assert_int_equal(klog_kwire_error_from_wire(KLOG_WIRE_NONE), 0);
	assert_int_equal(klog_kwire_error_from_wire(KLOG_WIRE_NOT_LEADER),
	    KLOG_KERR_NOT_LEADER_FOR_PARTITION);
	assert_int_equal(klog_kwire_error_from_wire(KLOG_WIRE_UNKNOWN_TOPIC),
	    KLOG_KERR_UNKNOWN_TOPIC_OR_PARTITION);
	assert_int_equal(klog_kwire_error_from_wire(
	    KLOG_WIRE_UNSUPPORTED_VERSION),
	    KLOG_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT);
	assert_int_equal(klog_kwire_error_from_wire(
	    KLOG_WIRE_UNSUPPORTED_CODEC),
	    KLOG_KERR_UNSUPPORTED_COMPRESSION_TYPE);
	assert_string_equal(klog_kwire_error_name(
	    KLOG_KERR_FETCH_SESSION_ID_NOT_FOUND),
	    "FETCH_SESSION_ID_NOT_FOUND");
	assert_int_equal(klog_kwire_error_from_wire(KLOG_WIRE_DISK_FULL),
	    KLOG_KERR_KAFKA_STORAGE_ERROR);
	assert_int_equal(klog_kwire_error_from_wire(999), KLOG_KERR_UNKNOWN);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame),
		cmocka_unit_test(test_api_versions),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
