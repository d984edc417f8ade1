#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "klog/client/outfmt.h"

static const uint8_t binary[] = { 'a', 0x00, 0xff, '\n', 'b' };

static klog_outfmt_rec_t
rec(const void *payload, size_t len)
{
	klog_outfmt_rec_t r = {
		.topic = "nginx", .topic_len = 5, .partition = 3,
		.offset = 1234567, .next_offset = 1234580,
		.payload = payload, .payload_len = len,
		.key = NULL, .key_len = -1, .timestamp = KLOG_NO_TIMESTAMP,
	};
	return r;
}

/* Render r with fmt and compare with want[0..wantlen). */
static void
check_render(const char *fmt, const klog_outfmt_rec_t *r, const void *want,
    size_t wantlen)
{
	klog_outfmt_t *f = NULL;
	klog_err_t err = { 0 };
	klog_buf_t out;

	klog_buf_init(&out);
	assert_int_equal(klog_outfmt_compile(fmt, &f, &err), 0);
	klog_outfmt_render(f, r, &out);
	assert_false(out.failed);
	assert_int_equal(out.len, wantlen);
	assert_memory_equal(out.data, want, wantlen);
	klog_outfmt_free(f);
	klog_buf_free(&out);
}

#define CHECK(fmt, r, want) check_render(fmt, r, want, sizeof(want) - 1)

static void
check_error(const char *fmt, const char *want)
{
	klog_outfmt_t *f = NULL;
	klog_err_t err = { 0 };

	assert_int_equal(klog_outfmt_compile(fmt, &f, &err), -KLOG_EINVAL);
	assert_null(f);
	assert_string_equal(err.msg, want);
}

static void
test_tokens(void **state)
{
	klog_outfmt_rec_t r = rec("hello", 5);

	(void)state;
	CHECK("%s", &r, "hello");
	CHECK("%S", &r, "5");
	CHECK("%o", &r, "1234567");
	CHECK("%O", &r, "1234580");
	CHECK("%p", &r, "3");
	CHECK("%t", &r, "nginx");
	CHECK("%%", &r, "%");
	CHECK("%R", &r, "\x00\x00\x00\x05");
	CHECK("%t/%p@%o-%O: %s (%S)\n", &r,
	    "nginx/3@1234567-1234580: hello (5)\n");
	CHECK("100%% %s%%", &r, "100% hello%");
}

/* A payload and one byte (the default format and -D's usual one) take a
 * path of their own: their bytes, beside formats that take the general
 * walk, and 5,000 records rendered into one buffer (growing it past its
 * first allocation) the same as each rendered alone. */
static void
test_payload_and_byte(void **state)
{
	static const char *fmts[] = { "%s\n", "%s\\0", "%s|", "%s\n\n",
	    "x%s\n", "%s%s" };
	klog_outfmt_rec_t r = rec(binary, sizeof(binary));
	klog_outfmt_rec_t e = rec("", 0);

	(void)state;
	CHECK("%s\n", &r, "a\0\xff\nb\n");
	CHECK("%s\\0", &r, "a\0\xff\nb\0");
	CHECK("%s\n", &e, "\n");
	CHECK("%s\n\n", &r, "a\0\xff\nb\n\n");
	for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
		klog_outfmt_t *f = NULL;
		klog_err_t err = { 0 };
		klog_buf_t out;

		klog_buf_init(&out);
		assert_int_equal(klog_outfmt_compile(fmts[k], &f, &err), 0);
		klog_outfmt_render(f, &r, &out);
		for (int i = 1; i < 5000; i++)
			klog_outfmt_render(f, i % 7 ? &r : &e, &out);
		assert_false(out.failed);
		for (size_t at = 0, i = 0; i < 5000; i++) {
			klog_buf_t single;

			klog_buf_init(&single);
			klog_outfmt_render(f, i % 7 || i == 0 ? &r : &e,
			    &single);
			assert_memory_equal(out.data + at, single.data,
			    single.len);
			at += single.len;
			if (i + 1 == 5000)
				assert_int_equal(at, out.len);
			klog_buf_free(&single);
		}
		klog_outfmt_free(f);
		klog_buf_free(&out);
	}
}

/* -D: the payload, then the delimiter with its escapes and a literal %. */
static void
test_delimited(void **state)
{
	klog_outfmt_rec_t r = rec("hi", 2);
	klog_outfmt_t *f = NULL;
	klog_err_t err = { 0 };
	klog_buf_t out;

	(void)state;
	klog_buf_init(&out);
	assert_int_equal(klog_outfmt_delimited("%s|\\t%%\\0", &f, &err), 0);
	klog_outfmt_render(f, &r, &out);
	assert_int_equal(out.len, 9);
	assert_memory_equal(out.data, "hi%s|\t%%\0", 9);
	klog_outfmt_free(f);
	klog_buf_free(&out);
	f = NULL;
	assert_int_equal(klog_outfmt_delimited("\\q", &f, &err),
	    -KLOG_EINVAL);
	assert_null(f);
	assert_string_equal(err.msg, "\\q: unknown escape");
}

static void
test_default_and_empty(void **state)
{
	klog_outfmt_rec_t r = rec("x", 1), e = rec("", 0);

	(void)state;
	CHECK("%s\\n", &r, "x\n");
	CHECK("%s\\n", &e, "\n");
	CHECK("%S|%R|", &e, "0|\x00\x00\x00\x00|");
	CHECK("", &r, "");
	CHECK("plain", &r, "plain");
}

static void
test_escapes(void **state)
{
	klog_outfmt_rec_t r = rec("p", 1);

	(void)state;
	CHECK("\\n", &r, "\n");
	CHECK("\\r", &r, "\r");
	CHECK("\\t", &r, "\t");
	CHECK("\\\\", &r, "\\");
	check_render("\\0", &r, "\0", 1);
	CHECK("\\x41\\x7e\\xFf", &r, "A~\xff");
	check_render("%s\\x00%s", &r, "p\0p", 3);
	CHECK("a\\tb%s\\r\\n", &r, "a\tbp\r\n");
}

static void
test_large_values(void **state)
{
	klog_outfmt_rec_t r = rec("", 0);

	(void)state;
	r.offset = INT64_MAX;
	r.next_offset = 0;
	r.partition = 2147483647;
	CHECK("%o %O %p", &r, "9223372036854775807 0 2147483647");
}

static void
test_binary_payload(void **state)
{
	klog_outfmt_rec_t r = rec(binary, sizeof(binary));

	(void)state;
	check_render("%s", &r, binary, sizeof(binary));
	check_render("%R%s", &r, "\x00\x00\x00\x05" "a\x00\xff\nb", 9);
	CHECK("%S\\n", &r, "5\n");
}

static void
test_errors(void **state)
{
	(void)state;
	check_error("%z", "%z: unknown format token");
	check_error("%\x01", "%\\x01: unknown format token");
	check_error("%s%", "ends with a lone '%'");
	check_error("%s\\", "ends with a lone '\\'");
	check_error("\\q", "\\q: unknown escape");
	check_error("\\x4", "\\x: needs two hex digits");
	check_error("\\xZZ", "\\x: needs two hex digits");
	check_error("\\x", "\\x: needs two hex digits");
}

static void
test_unescape(void **state)
{
	klog_err_t err = { 0 };
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_outfmt_unescape("a%s\\0\\x7c|\\n", &b, &err), 0);
	assert_int_equal(b.len, 7);
	assert_memory_equal(b.data, "a%s\0||\n", 7);
	klog_buf_reset(&b);
	assert_int_equal(klog_outfmt_unescape("", &b, &err), 0);
	assert_int_equal(b.len, 0);
	assert_int_equal(klog_outfmt_unescape("\\w", &b, &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, "\\w: unknown escape");
	klog_buf_free(&b);
}

static void
check_json(const klog_outfmt_rec_t *r, const char *want)
{
	klog_outfmt_t *f = NULL;
	klog_buf_t out;

	klog_buf_init(&out);
	assert_int_equal(klog_outfmt_json(&f), 0);
	klog_outfmt_render(f, r, &out);
	assert_false(out.failed);
	assert_int_equal(out.len, strlen(want));
	assert_memory_equal(out.data, want, out.len);
	klog_outfmt_free(f);
	klog_buf_free(&out);
}

static void
test_json(void **state)
{
	klog_outfmt_rec_t text = rec("say \"hi\"\n", 9);
	klog_outfmt_rec_t bin = rec(binary, sizeof(binary));
	klog_outfmt_rec_t empty = rec("", 0);

	(void)state;
	check_json(&text, "{\"topic\":\"nginx\",\"partition\":3,"
	    "\"offset\":1234567,\"next_offset\":1234580,\"size\":9,"
	    "\"payload\":\"say \\\"hi\\\"\\n\"}\n");
	/* 'a' 00 ff '\n' 'b' is not UTF-8 (0xff never is). */
	check_json(&bin, "{\"topic\":\"nginx\",\"partition\":3,"
	    "\"offset\":1234567,\"next_offset\":1234580,\"size\":5,"
	    "\"payload_base64\":\"YQD/CmI=\"}\n");
	check_json(&empty, "{\"topic\":\"nginx\",\"partition\":3,"
	    "\"offset\":1234567,\"next_offset\":1234580,\"size\":0,"
	    "\"payload\":\"\"}\n");
}

/* A record with a key, a timestamp and headers (record.h's bytes). */
static klog_outfmt_rec_t
keyed(klog_buf_t *scratch, const klog_header_t *h, uint32_t n)
{
	klog_outfmt_rec_t r = rec("v", 1);
	klog_record_t rd;

	klog_buf_reset(scratch);
	klog_record_write(scratch, 0, 0, &(klog_record_in_t){ "", 0, NULL, 0, 0,
	    h, n });
	assert_int_equal(klog_record_read(scratch->data, scratch->len, &rd), 0);
	r.key = (const uint8_t *)"user\x00" "1";
	r.key_len = 6;
	r.timestamp = 1700000000123;
	r.headers = rd.headers;
	r.headers_len = rd.headers_len;
	r.header_count = rd.header_count;
	return r;
}

/* kcat's %k %K %T %h, with kcat's meanings. */
static void
test_record_tokens(void **state)
{
	const klog_header_t h[] = {
		{ (const uint8_t *)"a", 1, (const uint8_t *)"1", 1 },
		{ (const uint8_t *)"trace", 5, (const uint8_t *)"x\x00y", 3 },
		{ (const uint8_t *)"n", 1, NULL, -1 },
	};
	klog_outfmt_rec_t plain = rec("p", 1), null = rec(NULL, 0);
	klog_buf_t scratch;
	klog_outfmt_rec_t r;

	(void)state;
	klog_buf_init(&scratch);
	r = keyed(&scratch, h, 3);
	check_render("%k|%K|%T|%h|%s\\n", &r,
	    "user\x00" "1|6|1700000000123|a=1,trace=x\x00y,n=|v\n", 42);
	r = keyed(&scratch, h, 1);
	CHECK("%h %h", &r, "a=1 a=1");
	/* A plain message: no key (-1), no timestamp (-1), no headers. */
	CHECK("[%k][%K][%T][%h]", &plain, "[][-1][-1][]");
	/* An empty key is a key. */
	plain.key = (const uint8_t *)"";
	plain.key_len = 0;
	CHECK("[%k][%K]", &plain, "[][0]");
	/* A null value: kcat's -1 for its size. */
	CHECK("[%s][%S]", &null, "[][-1]");
	check_render("%R", &null, "\xff\xff\xff\xff", 4);
	klog_buf_free(&scratch);
}

/* -J with a record's key, timestamp and headers, base64 where needed. */
static void
test_json_record(void **state)
{
	const klog_header_t h[] = {
		{ (const uint8_t *)"a", 1, (const uint8_t *)"1", 1 },
		{ (const uint8_t *)"\xff", 1, (const uint8_t *)"\x00\x01", 2 },
		{ (const uint8_t *)"n", 1, NULL, -1 },
	};
	klog_outfmt_rec_t r, null = rec(NULL, 0);
	klog_buf_t scratch;

	(void)state;
	klog_buf_init(&scratch);
	r = keyed(&scratch, h, 3);
	check_json(&r, "{\"topic\":\"nginx\",\"partition\":3,"
	    "\"offset\":1234567,\"next_offset\":1234580,\"size\":1,"
	    "\"key\":\"user\\u00001\",\"timestamp\":1700000000123,"
	    "\"headers\":[{\"key\":\"a\",\"value\":\"1\"},"
	    "{\"key_base64\":\"/w==\",\"value\":\"\\u0000\\u0001\"},"
	    "{\"key\":\"n\",\"value\":null}],\"payload\":\"v\"}\n");
	r = keyed(&scratch, h, 0);
	r.key = (const uint8_t *)"k\xff";
	r.key_len = 2;
	check_json(&r, "{\"topic\":\"nginx\",\"partition\":3,"
	    "\"offset\":1234567,\"next_offset\":1234580,\"size\":1,"
	    "\"key_base64\":\"a/8=\",\"timestamp\":1700000000123,"
	    "\"payload\":\"v\"}\n");
	check_json(&null, "{\"topic\":\"nginx\",\"partition\":3,"
	    "\"offset\":1234567,\"next_offset\":1234580,\"size\":0,"
	    "\"payload\":null}\n");
	klog_buf_free(&scratch);
}

static void
test_many_records_one_buffer(void **state)
{
	klog_outfmt_rec_t r = rec("line", 4);
	klog_outfmt_t *f = NULL;
	klog_err_t err = { 0 };
	klog_buf_t out;
	int i;

	(void)state;
	klog_buf_init(&out);
	assert_int_equal(klog_outfmt_compile("%o:%s\\n", &f, &err), 0);
	for (i = 0; i < 10000; i++) {
		r.offset = i;
		klog_outfmt_render(f, &r, &out);
	}
	assert_false(out.failed);
	assert_memory_equal(out.data, "0:line\n1:line\n", 14);
	assert_memory_equal(out.data + out.len - 10, "9999:line\n", 10);
	klog_outfmt_free(f);
	klog_buf_free(&out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_payload_and_byte),
		cmocka_unit_test(test_delimited),
		cmocka_unit_test(test_default_and_empty),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_large_values),
		cmocka_unit_test(test_binary_payload),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_unescape),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_record_tokens),
		cmocka_unit_test(test_json_record),
		cmocka_unit_test(test_many_records_one_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
