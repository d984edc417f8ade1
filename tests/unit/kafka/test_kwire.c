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

#define STR(s) ((klog_str_t){ (s), (uint16_t)(sizeof(s) - 1) })

static int
str_is(klog_str_t s, const char *want)
{
	return s.p != NULL && s.len == strlen(want) &&
	    memcmp(s.p, want, s.len) == 0;
}

/* A request frame: header (api, version, correlation 9, client "kc")
 * and the body built by the caller into b after it. */
static size_t
req_begin(klog_buf_t *b, int16_t api, int16_t version)
{
	size_t start = b->len;

	klog_buf_put_i32(b, 0);
	klog_buf_put_i16(b, api);
	klog_buf_put_i16(b, version);
	klog_buf_put_i32(b, 9);
	klog_buf_put_str(b, "kc", 2);
	return start;
}

static void
req_frame(klog_buf_t *b, size_t start, klog_kreq_t *r)
{
	klog_buf_patch_i32(b, start, (int32_t)(b->len - start - 4));
	assert_false(b->failed);
	assert_int_equal(klog_kwire_frame(b->data + start, b->len - start,
	    1 << 20, r), 0);
}

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

/* A Produce request of version v (v3 with a transactional id first). */
static void
produce_v(int16_t v)
{
	klog_proto_array_t a = { 0 };
	klog_produce_req_t req;
	klog_buf_t b;
	klog_kreq_t r;
	size_t start;

	klog_buf_init(&b);
	start = req_begin(&b, KLOG_KAPI_PRODUCE, v);
	if (v == 3)
		klog_buf_put_str(&b, "tx", 2);   /* transactional id */
	klog_buf_put_i16(&b, -1);            /* acks */
	klog_buf_put_i32(&b, 30000);
	klog_buf_put_i32(&b, 2);             /* topics */
	klog_buf_put_str(&b, "app", 3);
	klog_buf_put_i32(&b, 2);             /* partitions */
	klog_buf_put_i32(&b, 0);
	klog_buf_put_i32(&b, 3);
	klog_buf_put(&b, "xyz", 3);
	klog_buf_put_i32(&b, 5);
	klog_buf_put_i32(&b, 0);
	klog_buf_put_str(&b, "b", 1);
	klog_buf_put_i32(&b, 1);
	klog_buf_put_i32(&b, 1);
	klog_buf_put_i32(&b, 1);
	klog_buf_put(&b, "q", 1);
	req_frame(&b, start, &r);
	assert_int_equal(klog_kwire_produce(&r, &req, &a), 0);
	assert_int_equal(req.acks, -1);
	assert_int_equal(req.timeout_ms, 30000);
	assert_int_equal(req.count, 3);
	assert_true(str_is(req.parts[0].topic, "app"));
	assert_int_equal(req.parts[0].set_len, 3);
	assert_memory_equal(req.parts[0].set, "xyz", 3);
	assert_int_equal(req.parts[1].partition, 5);
	assert_int_equal(req.parts[1].set_len, 0);
	assert_true(str_is(req.parts[2].topic, "b"));
	assert_memory_equal(req.parts[2].set, "q", 1);
	/* Cut anywhere, it does not parse; a set longer than the body
	 * neither. */
	for (size_t cut = 1; cut < r.body_len; cut++) {
		klog_kreq_t c = r;

		c.body_len = cut;
		assert_int_equal(klog_kwire_produce(&c, &req, &a), -KLOG_EPROTO);
	}
	b.data[b.len - 5] = 0x7f;
	assert_int_equal(klog_kwire_produce(&r, &req, &a), -KLOG_EPROTO);
	klog_buf_free(&b);
	free(a.p);
}

static void
test_produce(void **state)
{
	(void)state;
	produce_v(2);
	produce_v(3);
}

static void
test_fetch(void **state)
{
	klog_proto_array_t a = { 0 };
	klog_fetch_req_t req;
	int32_t max;
	klog_buf_t b;
	klog_kreq_t r;
	size_t start;

	(void)state;
	for (int16_t v = 0; v <= 4; v++) {
		klog_buf_init(&b);
		start = req_begin(&b, KLOG_KAPI_FETCH, v);
		klog_buf_put_i32(&b, -1);    /* replica */
		klog_buf_put_i32(&b, 500);
		klog_buf_put_i32(&b, 1);
		if (v >= 3)
			klog_buf_put_i32(&b, 52428800);
		if (v >= 4)
			klog_buf_put_i8(&b, 1);  /* read_committed */
		klog_buf_put_i32(&b, 1);
		klog_buf_put_str(&b, "app", 3);
		klog_buf_put_i32(&b, 1);
		klog_buf_put_i32(&b, 2);
		klog_buf_put_i64(&b, 1234567);
		klog_buf_put_i32(&b, 1048576);
		req_frame(&b, start, &r);
		assert_int_equal(klog_kwire_fetch(&r, &req, &max, &a), 0);
		assert_int_equal(req.max_wait_ms, 500);
		assert_int_equal(req.min_bytes, 1);
		assert_int_equal(max, v >= 3 ? 52428800 : INT32_MAX);
		assert_int_equal(req.count, 1);
		assert_true(str_is(req.parts[0].topic, "app"));
		assert_int_equal(req.parts[0].partition, 2);
		assert_int_equal(req.parts[0].offset, 1234567);
		assert_int_equal(req.parts[0].max_bytes, 1048576);
		klog_buf_free(&b);
	}
	free(a.p);
}

static void
test_metadata(void **state)
{
	klog_proto_array_t a = { 0 };
	klog_str_t *names;
	klog_buf_t b;
	klog_kreq_t r;
	uint32_t n;
	size_t start;
	int all;

	(void)state;
	/* v0: an empty array is every topic. */
	klog_buf_init(&b);
	start = req_begin(&b, KLOG_KAPI_METADATA, 0);
	klog_buf_put_i32(&b, 0);
	req_frame(&b, start, &r);
	assert_int_equal(klog_kwire_metadata(&r, &a, &n, &all), 0);
	assert_true(all);
	assert_int_equal(n, 0);
	klog_buf_free(&b);
	/* v1: a null array is; an empty one is none. */
	klog_buf_init(&b);
	start = req_begin(&b, KLOG_KAPI_METADATA, 1);
	klog_buf_put_i32(&b, -1);
	req_frame(&b, start, &r);
	assert_int_equal(klog_kwire_metadata(&r, &a, &n, &all), 0);
	assert_true(all);
	klog_buf_free(&b);
	klog_buf_init(&b);
	start = req_begin(&b, KLOG_KAPI_METADATA, 1);
	klog_buf_put_i32(&b, 0);
	req_frame(&b, start, &r);
	assert_int_equal(klog_kwire_metadata(&r, &a, &n, &all), 0);
	assert_false(all);
	assert_int_equal(n, 0);
	klog_buf_free(&b);
	klog_buf_init(&b);
	start = req_begin(&b, KLOG_KAPI_METADATA, 1);
	klog_buf_put_i32(&b, 2);
	klog_buf_put_str(&b, "x", 1);
	klog_buf_put_str(&b, "yz", 2);
	req_frame(&b, start, &r);
	assert_int_equal(klog_kwire_metadata(&r, &a, &n, &all), 0);
	names = a.p;
	assert_int_equal(n, 2);
	assert_true(str_is(names[1], "yz"));
	/* A count the body cannot hold is refused before anything grows. */
	b.data[b.len - 10] = 0x7f;
	assert_int_equal(klog_kwire_metadata(&r, &a, &n, &all), -KLOG_EPROTO);
	klog_buf_free(&b);
	free(a.p);
}

static int32_t
rd32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]);
}

/* Parts of one topic in a row share its entry; the response's topic and
 * partition counts are patched in; a result's error is patched to -1. */
static void
test_produce_resp(void **state)
{
	klog_produce_result_t res[3] = {
		{ STR("a"), 0, 0, 100 }, { STR("a"), 1, 0, 200 },
		{ STR("bb"), 0, 3, 0 },
	};
	size_t pos[3];
	klog_buf_t b;
	klog_rd_t rd;

	(void)state;
	klog_buf_init(&b);
	klog_kwire_produce_resp(&b, 77, 2, res, 3, pos);
	assert_int_equal(rd32(b.data), (int32_t)b.len - 4);
	klog_rd_init(&rd, b.data + 4, b.len - 4);
	assert_int_equal(klog_rd_i32(&rd), 77);
	assert_int_equal(klog_rd_i32(&rd), 2);           /* topics */
	assert_int_equal(klog_rd_i16(&rd), 1);
	(void)klog_rd_bytes(&rd, 1);
	assert_int_equal(klog_rd_i32(&rd), 2);           /* partitions */
	assert_int_equal(klog_rd_i32(&rd), 0);
	assert_int_equal(klog_rd_i16(&rd), 0);
	assert_int_equal(klog_rd_i64(&rd), 100);
	assert_int_equal(klog_rd_i64(&rd), -1);          /* append time */
	assert_int_equal(klog_rd_i32(&rd), 1);
	assert_int_equal(klog_rd_i16(&rd), 0);
	assert_int_equal(klog_rd_i64(&rd), 200);
	assert_int_equal(klog_rd_i64(&rd), -1);
	assert_int_equal(klog_rd_i16(&rd), 2);
	(void)klog_rd_bytes(&rd, 2);
	assert_int_equal(klog_rd_i32(&rd), 1);
	assert_int_equal(klog_rd_i32(&rd), 0);
	assert_int_equal(klog_rd_i16(&rd), 3);
	assert_int_equal(klog_rd_i64(&rd), -1);          /* error: no offset */
	assert_int_equal(klog_rd_i64(&rd), -1);
	assert_int_equal(klog_rd_i32(&rd), 0);           /* throttle */
	assert_int_equal(klog_rd_left(&rd), 0);
	klog_kwire_patch_produce(&b, pos[1], KLOG_KERR_KAFKA_STORAGE_ERROR);
	klog_rd_init(&rd, b.data + pos[1], 10);
	assert_int_equal(klog_rd_i16(&rd), KLOG_KERR_KAFKA_STORAGE_ERROR);
	assert_int_equal(klog_rd_i64(&rd), -1);
	klog_buf_free(&b);
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
 * listener cannot take (magic 2) says so. */
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
	assert_int_equal(klog_kwire_error_from_wire(KLOG_WIRE_DISK_FULL),
	    KLOG_KERR_KAFKA_STORAGE_ERROR);
	assert_int_equal(klog_kwire_error_from_wire(999), KLOG_KERR_UNKNOWN);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame),
		cmocka_unit_test(test_produce),
		cmocka_unit_test(test_fetch),
		cmocka_unit_test(test_metadata),
		cmocka_unit_test(test_produce_resp),
		cmocka_unit_test(test_api_versions),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
