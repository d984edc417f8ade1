/*
 * Unit tests for lib/kafka/kprim.c.  The flexible encodings are written
 * byte by byte from KIP-482 and Kafka's protocol guide, not by an encoder
 * of ours.
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
#include "klog/kafka/kprim.h"
#include "klog/kafka/kwire.h"

static int
str_is(klog_str_t s, const char *want)
{
	return s.p != NULL && s.len == strlen(want) &&
	    memcmp(s.p, want, s.len) == 0;
}

static void
test_uvarint(void **state)
{
	static const uint8_t in[] = {
		0x00, 0x7f, 0x80, 0x01, 0xac, 0x02,
		0xff, 0xff, 0xff, 0xff, 0x0f,          /* UINT32_MAX */
	};
	static const uint8_t over[] = { 0xff, 0xff, 0xff, 0xff, 0x1f };
	static const uint8_t cut[] = { 0x80, 0x80 };
	klog_rd_t r;
	klog_buf_t b;

	(void)state;
	klog_rd_init(&r, in, sizeof(in));
	assert_int_equal(klog_kprim_uvarint(&r), 0);
	assert_int_equal(klog_kprim_uvarint(&r), 127);
	assert_int_equal(klog_kprim_uvarint(&r), 128);
	assert_int_equal(klog_kprim_uvarint(&r), 300);
	assert_true(klog_kprim_uvarint(&r) == UINT32_MAX);
	assert_false(r.failed);
	klog_rd_init(&r, over, sizeof(over));
	(void)klog_kprim_uvarint(&r);
	assert_true(r.failed);                  /* past 32 bits */
	klog_rd_init(&r, cut, sizeof(cut));
	(void)klog_kprim_uvarint(&r);
	assert_true(r.failed);
	klog_buf_init(&b);
	klog_kprim_put_uvarint(&b, 0);
	klog_kprim_put_uvarint(&b, 127);
	klog_kprim_put_uvarint(&b, 128);
	klog_kprim_put_uvarint(&b, 300);
	klog_kprim_put_uvarint(&b, UINT32_MAX);
	assert_int_equal(b.len, sizeof(in));
	assert_memory_equal(b.data, in, sizeof(in));
	klog_buf_free(&b);
}

/* A compact string, a null one, an empty one, compact bytes, a compact
 * array of 2, a null array, tagged fields with two entries, in order. */
static void
test_read_flexible(void **state)
{
	static const uint8_t in[] = {
		0x04, 'a', 'b', 'c',    /* "abc" */
		0x00,                   /* null */
		0x01,                   /* "" */
		0x03, 0xde, 0xad,       /* bytes de ad */
		0x03,                   /* array of 2 */
		0x00,                   /* null array */
		0x02, 0x00, 0x01, 0x7a, 0x05, 0x02, 0x01, 0x02, /* 2 tags */
	};
	klog_kprim_rd_t r;
	const uint8_t *p;
	uint32_t n;

	(void)state;
	klog_kprim_rd_init(&r, in, sizeof(in), 1);
	assert_true(str_is(klog_kprim_nstr(&r), "abc"));
	assert_null(klog_kprim_nstr(&r).p);
	assert_true(str_is(klog_kprim_str(&r), ""));
	p = klog_kprim_bytes(&r, &n);
	assert_int_equal(n, 2);
	assert_int_equal(p[0], 0xde);
	assert_int_equal(klog_kprim_count(&r, 0, 0), 2);
	assert_int_equal(klog_kprim_count(&r, 1, 1), -1);
	klog_kprim_tags(&r);
	assert_int_equal(klog_kprim_done(&r), 0);
	assert_int_equal(klog_rd_left(&r.rd), 0);
	/* A null where a string must be, a count the body cannot hold. */
	klog_kprim_rd_init(&r, in + 4, 1, 1);
	(void)klog_kprim_str(&r);
	assert_int_equal(klog_kprim_done(&r), -KLOG_EPROTO);
	klog_kprim_rd_init(&r, (const uint8_t *)"\x05", 1, 1);
	(void)klog_kprim_count(&r, 1, 0);
	assert_int_equal(klog_kprim_done(&r), -KLOG_EPROTO);
	/* A tag whose size runs past the end. */
	klog_kprim_rd_init(&r, (const uint8_t *)"\x01\x00\x09\x00", 4, 1);
	klog_kprim_tags(&r);
	assert_int_equal(klog_kprim_done(&r), -KLOG_EPROTO);
}

/* The classic encoding reads as kwire always did; tags are nothing. */
static void
test_read_classic(void **state)
{
	static const uint8_t in[] = {
		0x00, 0x02, 'h', 'i', 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x07,
	};
	klog_kprim_rd_t r;
	uint32_t n;

	(void)state;
	klog_kprim_rd_init(&r, in, sizeof(in), 0);
	assert_true(str_is(klog_kprim_str(&r), "hi"));
	assert_non_null(klog_kprim_bytes(&r, &n));  /* null bytes */
	assert_int_equal(n, 0);
	klog_kprim_tags(&r);
	assert_int_equal(r.rd.pos, 8);
	assert_int_equal(klog_kprim_count(&r, 1, 1), -1);
	assert_int_equal(klog_kprim_count(&r, 1, 0), 1);
	assert_int_equal(klog_kprim_done(&r), 0);
}

static void
test_write(void **state)
{
	static const uint8_t flex[] = {
		0x03, 'h', 'i', 0x00, 0x03, 0x01, 0x02, 0x00, 0x05, 0x00,
	};
	static const uint8_t classic[] = {
		0x00, 0x02, 'h', 'i', 0xff, 0xff, 0x00, 0x00, 0x00, 0x02,
		0x01, 0x02, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x04,
	};
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	for (int f = 1; f >= 0; f--) {
		klog_buf_reset(&b);
		klog_kprim_put_cstr(&b, "hi", f);
		klog_kprim_put_str(&b, (klog_str_t){ NULL, 0 }, f);
		klog_kprim_put_bytes(&b, "\x01\x02", 2, f);
		klog_kprim_put_bytes(&b, NULL, 0, f);
		klog_kprim_put_count(&b, 4, f);
		klog_kprim_put_tags(&b, f);
		assert_false(b.failed);
		if (f) {
			assert_int_equal(b.len, sizeof(flex));
			assert_memory_equal(b.data, flex, sizeof(flex));
		} else {
			assert_int_equal(b.len, sizeof(classic));
			assert_memory_equal(b.data, classic, sizeof(classic));
		}
	}
	klog_buf_free(&b);
}

/* A count patched after its elements: one byte reserved, moved on when
 * it needs two. */
static void
test_count_patch(void **state)
{
	klog_buf_t b;
	size_t pos;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put_i8(&b, 0x55);
	pos = klog_kprim_count_mark(&b, 1);
	klog_buf_put_i8(&b, 0x66);
	klog_kprim_count_patch(&b, pos, 3, 1);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.data, "\x55\x04\x66", 3);
	klog_buf_reset(&b);
	pos = klog_kprim_count_mark(&b, 1);
	klog_buf_put(&b, "xyz", 3);
	klog_kprim_count_patch(&b, pos, 200, 1);   /* 201: c9 01 */
	assert_int_equal(b.len, 5);
	assert_memory_equal(b.data, "\xc9\x01xyz", 5);
	klog_buf_reset(&b);
	pos = klog_kprim_count_mark(&b, 0);
	klog_buf_put_i8(&b, 1);
	klog_kprim_count_patch(&b, pos, 7, 0);
	assert_memory_equal(b.data, "\0\0\0\7\1", 5);
	klog_buf_free(&b);
}

/* Request header v2 (a flexible request's): client id still a classic
 * string, then tags; ApiVersions v3's body names the client's software,
 * and its answer is flexible under a v0 response header. */
static void
test_flexible_header(void **state)
{
	static const uint8_t v3[] = {
		0, 0, 0, 0x24, 0, 18, 0, 3, 0, 0, 0, 6,
		0, 4, 'r', 'd', 'k', 'a',                 /* client id */
		0x01, 0x00, 0x01, 0x00,                   /* a tag, ignored */
		0x0b, 'l', 'i', 'b', 'r', 'd', 'k', 'a', 'f', 'k', 'a',
		0x06, '2', '.', '0', '.', '2',
		0x00,
	};
	static const klog_kapi_range_t apis[] = {
		{ KLOG_KAPI_PRODUCE, 0, 7 },
	};
	klog_kreq_t r;
	klog_str_t name, version;
	klog_buf_t b;
	klog_rd_t rd;

	(void)state;
	assert_int_equal(sizeof(v3), 0x24 + 4);
	assert_int_equal(klog_kwire_frame(v3, sizeof(v3), 100, &r), 0);
	assert_true(r.flexible);
	assert_true(str_is(r.client_id, "rdka"));
	assert_int_equal(klog_kwire_api_versions_req(&r, &name, &version), 0);
	assert_true(str_is(name, "librdkafka"));
	assert_true(str_is(version, "2.0.2"));
	klog_buf_init(&b);
	klog_kwire_api_versions(&b, 6, 3, KLOG_KERR_NONE, apis, 1);
	klog_rd_init(&rd, b.data, b.len);
	assert_int_equal(klog_rd_i32(&rd), (int32_t)b.len - 4);
	assert_int_equal(klog_rd_i32(&rd), 6);    /* header v0: no tags */
	assert_int_equal(klog_rd_i16(&rd), 0);
	assert_int_equal(*klog_rd_bytes(&rd, 1), 2);   /* 1 api */
	assert_int_equal(klog_rd_i16(&rd), 0);
	assert_int_equal(klog_rd_i16(&rd), 0);
	assert_int_equal(klog_rd_i16(&rd), 7);
	assert_int_equal(*klog_rd_bytes(&rd, 1), 0);   /* its tags */
	assert_int_equal(klog_rd_i32(&rd), 0);         /* throttle */
	assert_int_equal(*klog_rd_bytes(&rd, 1), 0);   /* tags */
	assert_int_equal(klog_rd_left(&rd), 0);
	/* Any other flexible answer's header has tags. */
	klog_buf_reset(&b);
	r.api = KLOG_KAPI_OFFSET_FETCH;
	assert_int_equal(klog_kwire_begin_resp(&b, &r), 0);
	assert_int_equal(b.len, 9);
	klog_buf_free(&b);
	/* Classic below the first flexible version, flexible from it. */
	assert_int_equal(klog_kwire_first_flexible(KLOG_KAPI_OFFSET_FETCH), 6);
	assert_int_equal(klog_kwire_first_flexible(KLOG_KAPI_SASL_HANDSHAKE),
	    INT16_MAX);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uvarint),
		cmocka_unit_test(test_read_flexible),
		cmocka_unit_test(test_read_classic),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_count_patch),
		cmocka_unit_test(test_flexible_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
