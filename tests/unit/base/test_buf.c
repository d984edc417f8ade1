/* Unit tests for lib/base/buf.c: the growing buffer and the sticky reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"

static void
test_put_big_endian(void **state)
{
	static const uint8_t want[] = {
		0x81,
		0x12, 0x34,
		0xde, 0xad, 0xbe, 0xef,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0xff, 0xff, 0xff, 0xff,
		0x00, 0x03, 'a', 'b', 'c',
		0x00, 0x00,
	};
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put_i8(&b, (int8_t)0x81);
	klog_buf_put_i16(&b, 0x1234);
	klog_buf_put_i32(&b, (int32_t)0xdeadbeef);
	klog_buf_put_i64(&b, 0x0102030405060708);
	klog_buf_put_i32(&b, -1);
	klog_buf_put_str(&b, "abc", 3);
	klog_buf_put_str(&b, NULL, 0);
	assert_false(b.failed);
	assert_int_equal(b.len, sizeof(want));
	assert_memory_equal(b.data, want, sizeof(want));
	klog_buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
}

static void
test_growth(void **state)
{
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	for (int i = 0; i < 10000; i++) {
		klog_buf_put_i8(&b, (int8_t)(i * 7));
		assert_true(b.cap >= b.len);
	}
	assert_false(b.failed);
	assert_int_equal(b.len, 10000);
	for (int i = 0; i < 10000; i++)
		assert_int_equal(b.data[i], (uint8_t)(i * 7));
	/* Doubling from 256: 16384 is the first power that holds 10000. */
	assert_int_equal(b.cap, 16384);
	klog_buf_free(&b);
}

static void
test_reserve(void **state)
{
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_buf_reserve(&b, 1000), 0);
	assert_true(b.cap >= 1000);
	assert_int_equal(b.len, 0);
	klog_buf_put(&b, "xyz", 3);
	assert_int_equal(klog_buf_reserve(&b, b.cap - b.len), 0);
	assert_memory_equal(b.data, "xyz", 3);
	klog_buf_free(&b);
}

static void
test_sticky_failure(void **state)
{
	klog_buf_t b;
	size_t len;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put_i32(&b, 7);
	assert_int_equal(klog_buf_reserve(&b, SIZE_MAX), -KLOG_ENOMEM);
	assert_true(b.failed);
	len = b.len;
	klog_buf_put_i32(&b, 8);
	klog_buf_put_str(&b, "x", 1);
	assert_int_equal(b.len, len);
	assert_int_equal(klog_buf_reserve(&b, 1), -KLOG_ENOMEM);
	/* reset starts a fresh message and forgets the failure */
	klog_buf_reset(&b);
	assert_false(b.failed);
	assert_int_equal(b.len, 0);
	klog_buf_put_i16(&b, 1);
	assert_int_equal(b.len, 2);
	klog_buf_free(&b);
}

static void
test_str_too_long(void **state)
{
	static char big[INT16_MAX + 1];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put_str(&b, big, INT16_MAX);
	assert_false(b.failed);
	assert_int_equal(b.len, 2 + INT16_MAX);
	assert_int_equal(b.data[0], 0x7f);
	assert_int_equal(b.data[1], 0xff);
	klog_buf_reset(&b);
	klog_buf_put_str(&b, big, INT16_MAX + 1);
	assert_true(b.failed);
	assert_int_equal(b.len, 0);
	klog_buf_free(&b);
}

static void
test_patch(void **state)
{
	static const uint8_t want[] = {
		0xaa, 0x00, 0x00, 0x01, 0x02, 0xbb,
	};
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put_i8(&b, (int8_t)0xaa);
	klog_buf_put_i32(&b, 0);
	klog_buf_put_i8(&b, (int8_t)0xbb);
	klog_buf_patch_i32(&b, 1, 0x102);
	assert_memory_equal(b.data, want, sizeof(want));
	/* out of range: ignored, nothing written past len */
	klog_buf_patch_i32(&b, 3, -1);
	klog_buf_patch_i32(&b, 6, -1);
	klog_buf_patch_i32(&b, SIZE_MAX - 1, -1);
	klog_buf_patch_i32(&b, SIZE_MAX, -1);
	assert_int_equal(b.len, sizeof(want));
	assert_memory_equal(b.data, want, sizeof(want));
	klog_buf_free(&b);
}

static void
test_consume(void **state)
{
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put(&b, "abcdef", 6);
	klog_buf_consume(&b, 2);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.data, "cdef", 4);
	klog_buf_consume(&b, 0);
	assert_int_equal(b.len, 4);
	klog_buf_consume(&b, 99);
	assert_int_equal(b.len, 0);
	klog_buf_free(&b);
}

static void
test_reader(void **state)
{
	static const uint8_t in[] = {
		0xff,
		0xff, 0xfe,
		0x80, 0x00, 0x00, 0x00,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd,
		0x01, 0x02, 0x03,
	};
	klog_rd_t r;
	const uint8_t *v;

	(void)state;
	klog_rd_init(&r, in, sizeof(in));
	assert_int_equal(klog_rd_i8(&r), -1);
	assert_int_equal(klog_rd_i16(&r), -2);
	assert_int_equal(klog_rd_i32(&r), INT32_MIN);
	assert_int_equal(klog_rd_i64(&r), -3);
	assert_int_equal(klog_rd_left(&r), 3);
	v = klog_rd_bytes(&r, 2);
	assert_ptr_equal(v, in + 15);
	assert_int_equal(klog_rd_left(&r), 1);
	assert_false(r.failed);
	v = klog_rd_bytes(&r, 0);
	assert_ptr_equal(v, in + 17);
	assert_false(r.failed);
}

static void
test_reader_past_end(void **state)
{
	static const uint8_t in[] = { 0x01, 0x02, 0x03 };
	klog_rd_t r;

	(void)state;
	klog_rd_init(&r, in, sizeof(in));
	assert_int_equal(klog_rd_i32(&r), 0);
	assert_true(r.failed);
	assert_int_equal(klog_rd_left(&r), 0);
	/* sticky: bytes remain, but every later read is a no-op */
	assert_int_equal(klog_rd_i8(&r), 0);
	assert_int_equal(klog_rd_i16(&r), 0);
	assert_null(klog_rd_bytes(&r, 0));
	assert_int_equal(r.pos, 0);

	klog_rd_init(&r, in, sizeof(in));
	assert_null(klog_rd_bytes(&r, SIZE_MAX));
	assert_true(r.failed);

	klog_rd_init(&r, NULL, 0);
	assert_int_equal(klog_rd_i64(&r), 0);
	assert_true(r.failed);
}

static void
test_reader_str(void **state)
{
	static const uint8_t in[] = {
		0x00, 0x02, 'h', 'i',
		0x00, 0x00,
		0x00, 0x05, 'x',
	};
	static const uint8_t null_str[] = { 0xff, 0xff, 'a', 'b' };
	klog_rd_t r;
	const char *s;
	uint16_t n;

	(void)state;
	klog_rd_init(&r, in, sizeof(in));
	s = klog_rd_str(&r, &n);
	assert_ptr_equal(s, in + 2);
	assert_int_equal(n, 2);
	s = klog_rd_str(&r, &n);
	assert_non_null(s);
	assert_int_equal(n, 0);
	n = 77;
	s = klog_rd_str(&r, &n);
	assert_null(s);
	assert_int_equal(n, 0);
	assert_true(r.failed);

	/* length -1 (Kafka's null string) is refused, and says so in n */
	klog_rd_init(&r, null_str, sizeof(null_str));
	n = 77;
	s = klog_rd_str(&r, &n);
	assert_null(s);
	assert_int_equal(n, 0);
	assert_true(r.failed);
	assert_int_equal(klog_rd_left(&r), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_big_endian),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_sticky_failure),
		cmocka_unit_test(test_str_too_long),
		cmocka_unit_test(test_patch),
		cmocka_unit_test(test_consume),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_reader_past_end),
		cmocka_unit_test(test_reader_str),
	};

	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
