/* Unit tests for lib/storage/format.c: encoding, gzip wrappers, magic-2
 * entries, iteration, validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/codec.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

/* The worked example of the facts file (section 1.4). */
static const uint8_t test_m0[] = {
	0x00, 0x00, 0x00, 0x09, 0x00, 0xd8, 0x7f, 0x7e, 0x0c,
	0x74, 0x65, 0x73, 0x74,
};
static const uint8_t test_m1[] = {
	0x00, 0x00, 0x00, 0x0a, 0x01, 0x00, 0xd8, 0x7f, 0x7e, 0x0c,
	0x74, 0x65, 0x73, 0x74,
};

static void
put_m0(klog_buf_t *b, const void *payload, size_t len)
{
	assert_int_equal(klog_buf_reserve(b, klog_entry_size(len)), 0);
	b->len += klog_entry_encode(b->data + b->len, payload, len);
}

static void
put_m1(klog_buf_t *b, uint8_t attributes, const void *payload, size_t len)
{
	klog_buf_put_i32(b, (int32_t)(len + KLOG_MAGIC1_HEADER));
	klog_buf_put_i8(b, 1);
	klog_buf_put_i8(b, (int8_t)attributes);
	klog_buf_put_i32(b, (int32_t)crc32(0, payload, (uInt)len));
	klog_buf_put(b, payload, len);
	assert_false(b->failed);
}

static void
put_str(klog_buf_t *b, const char *s)
{
	put_m0(b, s, strlen(s));
}

/* Append the gzip wrapper of set[0..len) (non-empty) to b. */
static void
put_wrapper(klog_buf_t *b, const uint8_t *set, size_t len)
{
	uint8_t *w;
	size_t wlen;

	assert_int_equal(klog_gzip_wrap(set, len, 6, &w, &wlen), 0);
	klog_buf_put(b, w, wlen);
	free(w);
	assert_false(b->failed);
}

/* A gzip stream of in[0..len) by zlib itself, independent of klog. */
static uint8_t *
zlib_gzip(const void *in, size_t len, size_t *outlen)
{
	z_stream zs;
	uLong bound;
	uint8_t *out;

	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY), Z_OK);
	bound = deflateBound(&zs, len);
	out = malloc(bound);
	assert_non_null(out);
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)bound;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	*outlen = zs.total_out;
	deflateEnd(&zs);
	return out;
}

static void
assert_payload(const klog_msg_t *m, const char *s)
{
	assert_int_equal(m->payload_len, strlen(s));
	assert_memory_equal(m->payload, s, strlen(s));
}

static uint8_t *
read_fixture(const char *name, size_t *len)
{
	char path[512];
	const char *slash = strrchr(__FILE__, '/');
	int dirlen = slash ? (int)(slash - __FILE__) : 0;
	FILE *f;
	uint8_t *data;

	/* __FILE__ is tests/unit/storage/test_format.c: the fixtures are beside. */
	snprintf(path, sizeof(path), "%.*s/../../data/%s", dirlen, __FILE__,
	    name);
	f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open %s (run from the source root)", path);
	data = malloc(4096);
	assert_non_null(data);
	*len = fread(data, 1, 4096, f);
	assert_true(feof(f));
	fclose(f);
	return data;
}

static void
test_encode_facts(void **state)
{
	uint8_t buf[32];

	(void)state;
	assert_int_equal(klog_entry_size(4), 13);
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(klog_entry_encode(buf, "test", 4), 13);
	assert_memory_equal(buf, test_m0, sizeof(test_m0));
	assert_int_equal(buf[13], 0xaa);
	assert_int_equal(klog_be32(buf + 5), 0xd87f7e0cu);
}

static void
test_decode_facts(void **state)
{
	klog_iter_t it;
	klog_msg_t m;

	(void)state;
	klog_iter_init(&it, test_m0, sizeof(test_m0), 100, 0, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.magic, 0);
	assert_int_equal(m.attributes, 0);
	assert_int_equal(m.length, 9);
	assert_int_equal(m.offset, 100);
	assert_int_equal(m.next_offset, 113);
	assert_true(m.valid);
	assert_payload(&m, "test");
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);

	klog_iter_init(&it, test_m1, sizeof(test_m1), 0,
	    KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.magic, 1);
	assert_int_equal(m.attributes, 0);
	assert_int_equal(m.codec, KLOG_CODEC_NONE);
	assert_int_equal(m.depth, 0);
	assert_int_equal(m.length, 10);
	assert_int_equal(m.offset, 0);
	assert_int_equal(m.next_offset, 14);
	assert_int_equal(m.pos, 0);
	assert_int_equal(m.crc_stored, 0xd87f7e0cu);
	assert_int_equal(m.crc_computed, 0xd87f7e0cu);
	assert_true(m.valid);
	assert_payload(&m, "test");
	assert_int_equal(klog_iter_next(&it, &m), 0);
	assert_int_equal(klog_iter_offset(&it), 14);
	assert_int_equal(klog_iter_error_offset(&it), -1);
	klog_iter_free(&it);
}

static const size_t sizes[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 17, 63, 64, 100, 199, 200, 201,
	255, 256, 1000, 4095, 4096, 65535, 65536, 1 << 20,
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void
fill(uint8_t *p, size_t n, size_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed * 7 + (i >> 8));
}

static void
test_roundtrip_sizes(void **state)
{
	const int64_t base = 1000;
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	uint8_t *payload = malloc(1 << 20);
	int64_t off = base;

	(void)state;
	assert_non_null(payload);
	klog_buf_init(&b);
	for (size_t i = 0; i < NSIZES; i++) {
		fill(payload, sizes[i], i);
		put_m0(&b, payload, sizes[i]);
	}
	klog_iter_init(&it, b.data, b.len, base, 0, 0);
	for (size_t i = 0; i < NSIZES; i++) {
		assert_int_equal(klog_iter_next(&it, &m), 1);
		fill(payload, sizes[i], i);
		assert_int_equal(m.offset, off);
		assert_int_equal(m.pos, off - base);
		assert_int_equal(m.length, sizes[i] + KLOG_MAGIC0_HEADER);
		assert_int_equal(m.payload_len, sizes[i]);
		assert_int_equal(m.next_offset,
		    off + (int64_t)klog_entry_size(sizes[i]));
		assert_true(m.valid);
		assert_int_equal(m.crc_stored, m.crc_computed);
		if (sizes[i] > 0)
			assert_memory_equal(m.payload, payload, sizes[i]);
		off = m.next_offset;
		assert_int_equal(klog_iter_offset(&it), off);
	}
	assert_int_equal(klog_iter_next(&it, &m), 0);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);

	assert_int_equal(klog_msgset_validate(b.data, b.len, KLOG_ITER_DEEP,
	    &info), 0);
	assert_int_equal(info.valid_bytes, b.len);
	assert_int_equal(info.messages, NSIZES);
	assert_int_equal(info.entries, NSIZES);
	assert_int_equal(info.max_payload, 1 << 20);
	assert_int_equal(info.bad_offset, -1);
	klog_buf_free(&b);
	free(payload);
}

static void
test_empty_buffer(void **state)
{
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;

	(void)state;
	klog_iter_init(&it, NULL, 0, 42, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	assert_int_equal(klog_iter_offset(&it), 42);
	klog_iter_free(&it);
	assert_int_equal(klog_msgset_validate(NULL, 0, 0, &info), 0);
	assert_int_equal(info.valid_bytes, 0);
	assert_int_equal(info.messages, 0);
	assert_int_equal(info.bad_offset, -1);
}

static void
test_crc_mismatch(void **state)
{
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;

	(void)state;
	klog_buf_init(&b);
	put_str(&b, "alpha");
	put_str(&b, "bravo");
	put_str(&b, "charlie");
	b.data[14 + 9 + 2] ^= 0x10; /* 'a' of "bravo" */

	klog_iter_init(&it, b.data, b.len, 0, 0, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_true(m.valid);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_false(m.valid);
	assert_int_equal(m.offset, 14);
	assert_int_equal(m.crc_stored, crc32(0, (const Bytef *)"bravo", 5));
	assert_int_not_equal(m.crc_stored, m.crc_computed);
	assert_int_equal(m.crc_computed, crc32(0, (const Bytef *)"brqvo", 5));
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_true(m.valid);
	assert_payload(&m, "charlie");
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);

	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_NOCRC, 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(klog_iter_next(&it, &m), 1);
		assert_true(m.valid);
		assert_int_equal(m.crc_computed, 0);
	}
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);

	assert_int_equal(klog_msgset_validate(b.data, b.len, 0, &info),
	    -KLOG_ECORRUPT);
	assert_int_equal(info.bad_offset, 14);
	assert_int_equal(info.valid_bytes, 14);
	assert_int_equal(info.messages, 1);
	assert_int_equal(info.entries, 1);
	assert_int_equal(klog_msgset_validate(b.data, b.len, KLOG_ITER_NOCRC,
	    &info), 0);
	assert_int_equal(info.messages, 3);
	klog_buf_free(&b);
}

/* A set of mixed entries; bounds[] gets each entry's start, then the end. */
static size_t
mixed_set(klog_buf_t *b, size_t *bounds)
{
	klog_buf_t inner;
	size_t n = 0;

	klog_buf_init(&inner);
	put_str(&inner, "in-one");
	put_m1(&inner, 0, "in-two", 6);
	bounds[n++] = b->len;
	put_str(b, "first");
	bounds[n++] = b->len;
	put_m0(b, "", 0);
	bounds[n++] = b->len;
	put_m1(b, 0, "magic one", 9);
	bounds[n++] = b->len;
	put_wrapper(b, inner.data, inner.len);
	bounds[n++] = b->len;
	put_str(b, "last of the set");
	bounds[n] = b->len;
	klog_buf_free(&inner);
	return n;
}

static void
check_cut(const uint8_t *set, size_t cut, const size_t *bounds, size_t n,
    unsigned flags)
{
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	size_t whole = 0;
	int r, v;

	while (whole < n && bounds[whole + 1] <= cut)
		whole++;
	klog_iter_init(&it, set, cut, 7, flags, 0);
	while ((r = klog_iter_next(&it, &m)) == 1) {
		assert_true(m.valid);
		assert_true(m.next_offset <= 7 + (int64_t)bounds[whole]);
	}
	assert_int_equal(klog_iter_offset(&it), 7 + (int64_t)bounds[whole]);
	v = klog_msgset_validate(set, cut, flags, &info);
	assert_int_equal(info.valid_bytes, bounds[whole]);
	assert_int_equal(info.entries, whole);
	if (cut == bounds[whole]) {
		assert_int_equal(r, 0);
		assert_int_equal(v, 0);
		assert_int_equal(info.bad_offset, -1);
	} else {
		assert_int_equal(r, -KLOG_EPARTIAL);
		assert_int_equal(klog_iter_error_offset(&it),
		    7 + (int64_t)bounds[whole]);
		/* The iterator stays at the cut entry. */
		assert_int_equal(klog_iter_next(&it, &m), -KLOG_EPARTIAL);
		assert_int_equal(klog_iter_offset(&it),
		    7 + (int64_t)bounds[whole]);
		assert_int_equal(v, -KLOG_EPARTIAL);
		assert_int_equal(info.bad_offset, bounds[whole]);
	}
	klog_iter_free(&it);
}

static void
test_partial_tails(void **state)
{
	klog_buf_t b;
	size_t bounds[8], n;

	(void)state;
	klog_buf_init(&b);
	n = mixed_set(&b, bounds);
	for (size_t cut = 0; cut <= b.len; cut++) {
		check_cut(b.data, cut, bounds, n, 0);
		check_cut(b.data, cut, bounds, n, KLOG_ITER_DEEP);
		check_cut(b.data, cut, bounds, n, KLOG_ITER_NOCRC);
	}
	klog_buf_free(&b);
}

/* Iterating set[0..len) gives code at offset bad after good messages. */
static void
expect_error(const uint8_t *set, size_t len, unsigned flags, int good,
    int code, int64_t bad)
{
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;

	klog_iter_init(&it, set, len, 0, flags, 0);
	for (int i = 0; i < good; i++)
		assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(klog_iter_next(&it, &m), code);
	assert_int_equal(klog_iter_error_offset(&it), bad);
	assert_string_not_equal(klog_iter_error(&it), "no error");
	assert_int_equal(klog_iter_offset(&it), bad);
	assert_int_equal(klog_iter_next(&it, &m), code);
	assert_int_equal(klog_iter_offset(&it), bad);
	klog_iter_free(&it);
	assert_int_equal(klog_msgset_validate(set, len, flags, &info), code);
	assert_int_equal(info.bad_offset, bad);
	assert_int_equal(info.valid_bytes, bad);
}

static void
test_bad_length(void **state)
{
	uint8_t e[16];

	(void)state;
	for (uint32_t len = 0; len < KLOG_MAGIC0_HEADER; len++) {
		memset(e, 0, sizeof(e));
		klog_put_be32(e, len);
		expect_error(e, sizeof(e), 0, 0, -KLOG_ECORRUPT, 0);
		/* Too small is corruption even where the buffer ends. */
		expect_error(e, 4, 0, 0, -KLOG_ECORRUPT, 0);
	}
	/* Magic 1 needs 6 header bytes. */
	memcpy(e, test_m1, 10);
	klog_put_be32(e, 5);
	expect_error(e, 9, 0, 0, -KLOG_ECORRUPT, 0);
	klog_put_be32(e, KLOG_MAX_ENTRY_LENGTH + 1);
	expect_error(e, sizeof(e), 0, 0, -KLOG_ECORRUPT, 0);
	klog_put_be32(e, 0xffffffffu);
	expect_error(e, sizeof(e), 0, 0, -KLOG_ECORRUPT, 0);
	klog_put_be32(e, KLOG_MAX_ENTRY_LENGTH);
	expect_error(e, sizeof(e), 0, 0, -KLOG_EPARTIAL, 0);
	/* Fewer than 4 bytes: a cut length field. */
	expect_error(e, 3, 0, 0, -KLOG_EPARTIAL, 0);
}

static void
test_bad_magic_and_codec(void **state)
{
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;

	(void)state;
	klog_buf_init(&b);
	put_str(&b, "alpha");
	put_str(&b, "bravo");
	put_str(&b, "charlie");
	b.data[14 + 4] = 2;
	expect_error(b.data, b.len, 0, 1, -KLOG_ECORRUPT, 14);
	b.data[14 + 4] = 0xff;
	expect_error(b.data, b.len, KLOG_ITER_DEEP, 1, -KLOG_ECORRUPT, 14);
	klog_buf_free(&b);

	klog_buf_init(&b);
	put_str(&b, "alpha");
	put_m1(&b, 3, "bravo", 5);
	expect_error(b.data, b.len, 0, 1, -KLOG_ECORRUPT, 14);
	b.data[14 + 5] = 0x07;
	expect_error(b.data, b.len, 0, 1, -KLOG_ECORRUPT, 14);
	/* Bits above the codec are ignored, as in Kafka 0.7. */
	b.data[14 + 5] = 0x04;
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.attributes, 0x04);
	assert_int_equal(m.codec, KLOG_CODEC_NONE);
	assert_true(m.valid);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);
	klog_buf_free(&b);
}

/* [plain "before"] [gzip wrapper of a, bb, ccc] [plain "after"] */
static void
wrapped_set(klog_buf_t *b, size_t *wpos, size_t *wend)
{
	klog_buf_t inner;

	klog_buf_init(&inner);
	put_str(&inner, "a");
	put_m1(&inner, 0, "bb", 2);
	put_str(&inner, "ccc");
	put_str(b, "before");
	*wpos = b->len;
	put_wrapper(b, inner.data, inner.len);
	*wend = b->len;
	put_str(b, "after");
	klog_buf_free(&inner);
}

static void
test_gzip_wrap_format(void **state)
{
	klog_buf_t inner;
	uint8_t *w, *set;
	size_t wlen, setlen;

	(void)state;
	klog_buf_init(&inner);
	put_str(&inner, "a");
	put_str(&inner, "bb");
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 9, &w, &wlen),
	    0);
	assert_int_equal(klog_be32(w), wlen - 4);
	assert_int_equal(w[4], 1);
	assert_int_equal(w[5], KLOG_CODEC_GZIP);
	assert_int_equal(klog_be32(w + 6), crc32(0, w + 10, (uInt)wlen - 10));
	/* RFC 1952 magic and deflate method. */
	assert_int_equal(w[10], 0x1f);
	assert_int_equal(w[11], 0x8b);
	assert_int_equal(w[12], 8);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_GZIP, w + 10, wlen - 10,
	    1 << 20, &set, &setlen), 0);
	assert_int_equal(setlen, inner.len);
	assert_memory_equal(set, inner.data, setlen);
	free(set);
	free(w);

	assert_int_equal(klog_gzip_wrap(inner.data, 0, 6, &w, &wlen), 0);
	assert_null(w);
	assert_int_equal(wlen, 0);
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 42, &w, &wlen),
	    -KLOG_EINVAL);
	assert_null(w);
	klog_buf_free(&inner);
}

static void
test_gzip_deep(void **state)
{
	const int64_t base = 5000;
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;
	size_t wpos, wend;
	int64_t w, after;

	(void)state;
	klog_buf_init(&b);
	wrapped_set(&b, &wpos, &wend);
	w = base + (int64_t)wpos;
	after = base + (int64_t)wend;

	klog_iter_init(&it, b.data, b.len, base, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "before");
	assert_int_equal(m.next_offset, w);
	assert_int_equal(m.depth, 0);

	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "a");
	assert_int_equal(m.depth, 1);
	assert_int_equal(m.offset, w);
	assert_int_equal(m.next_offset, w);
	assert_int_equal(m.pos, wpos);
	assert_int_equal(m.magic, 0);
	assert_int_equal(m.length, 6);
	assert_true(m.valid);
	assert_int_equal(klog_iter_offset(&it), w);

	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "bb");
	assert_int_equal(m.depth, 1);
	assert_int_equal(m.magic, 1);
	assert_int_equal(m.offset, w);
	assert_int_equal(m.next_offset, w);
	assert_int_equal(klog_iter_offset(&it), w);

	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "ccc");
	assert_int_equal(m.depth, 1);
	assert_int_equal(m.offset, w);
	assert_int_equal(m.next_offset, after);
	assert_int_equal(m.pos, wpos);
	assert_true(m.valid);
	assert_int_equal(klog_iter_offset(&it), after);

	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "after");
	assert_int_equal(m.depth, 0);
	assert_int_equal(m.offset, after);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	assert_int_equal(klog_iter_offset(&it), base + (int64_t)b.len);
	klog_iter_free(&it);
	klog_buf_free(&b);
}

static void
test_gzip_shallow(void **state)
{
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	size_t wpos, wend;

	(void)state;
	klog_buf_init(&b);
	wrapped_set(&b, &wpos, &wend);
	klog_iter_init(&it, b.data, b.len, 0, 0, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "before");
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.depth, 0);
	assert_int_equal(m.magic, 1);
	assert_int_equal(m.codec, KLOG_CODEC_GZIP);
	assert_int_equal(m.offset, wpos);
	assert_int_equal(m.next_offset, wend);
	assert_int_equal(m.payload_len, wend - wpos - 10);
	assert_ptr_equal(m.payload, b.data + wpos + 10);
	assert_true(m.valid);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "after");
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);

	assert_int_equal(klog_msgset_validate(b.data, b.len, 0, &info), 0);
	assert_int_equal(info.messages, 3);
	assert_int_equal(info.entries, 3);
	assert_int_equal(klog_msgset_validate(b.data, b.len, KLOG_ITER_DEEP,
	    &info), 0);
	assert_int_equal(info.messages, 5);
	assert_int_equal(info.entries, 3);
	assert_int_equal(info.valid_bytes, b.len);
	assert_int_equal(info.max_payload, wend - wpos - 10);
	klog_buf_free(&b);
}

/* Stopping after each message and resuming at its next_offset never loses
 * a message (at-least-once): stopping inside the wrapper sees its earlier
 * messages again, stopping after its last one does not. */
static void
test_gzip_resume(void **state)
{
	static const int want[] = { 5, 6, 7, 5, 5 };
	klog_buf_t b;
	klog_iter_t it, it2;
	klog_msg_t m, m2;
	size_t wpos, wend;
	int total = 0, seen;

	(void)state;
	klog_buf_init(&b);
	wrapped_set(&b, &wpos, &wend);
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
	while (klog_iter_next(&it, &m) == 1) {
		total++;
		seen = total;
		klog_iter_init(&it2, b.data + m.next_offset,
		    b.len - (size_t)m.next_offset, m.next_offset,
		    KLOG_ITER_DEEP, 0);
		while (klog_iter_next(&it2, &m2) == 1)
			seen++;
		klog_iter_free(&it2);
		assert_true(total <= 5);
		assert_int_equal(seen, want[total - 1]);
	}
	assert_int_equal(total, 5);
	klog_iter_free(&it);
	klog_buf_free(&b);
}

static void
test_gzip_empty_inner(void **state)
{
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	uint8_t *gz;
	size_t gzlen, after;

	(void)state;
	klog_buf_init(&b);
	put_str(&b, "x");
	gz = zlib_gzip("", 0, &gzlen);
	put_m1(&b, KLOG_CODEC_GZIP, gz, gzlen);
	free(gz);
	after = b.len;
	put_str(&b, "y");

	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "x");
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "y");
	assert_int_equal(m.offset, after);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);

	assert_int_equal(klog_msgset_validate(b.data, b.len, KLOG_ITER_DEEP,
	    &info), 0);
	assert_int_equal(info.messages, 2);
	assert_int_equal(info.entries, 3);
	assert_int_equal(info.valid_bytes, b.len);
	klog_buf_free(&b);
}

static void
test_gzip_nested(void **state)
{
	klog_buf_t in1, in2, b;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;

	(void)state;
	klog_buf_init(&in1);
	klog_buf_init(&in2);
	klog_buf_init(&b);
	put_str(&in1, "deep");
	put_wrapper(&in2, in1.data, in1.len);
	put_str(&in2, "shallow");
	put_wrapper(&b, in2.data, in2.len);

	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.depth, 1);
	assert_int_equal(m.codec, KLOG_CODEC_GZIP);
	assert_int_equal(m.payload_len, in2.len - klog_entry_size(7) - 10);
	assert_true(m.valid);
	assert_int_equal(m.next_offset, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.depth, 1);
	assert_payload(&m, "shallow");
	assert_int_equal(m.next_offset, b.len);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);

	assert_int_equal(klog_msgset_validate(b.data, b.len, KLOG_ITER_DEEP,
	    &info), 0);
	assert_int_equal(info.messages, 2);
	klog_buf_free(&in1);
	klog_buf_free(&in2);
	klog_buf_free(&b);
}

static void
test_snappy(void **state)
{
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;

	(void)state;
	klog_buf_init(&b);
	put_str(&b, "x");
	put_m1(&b, KLOG_CODEC_SNAPPY, "\x82SNAPPY", 8);
	put_str(&b, "y");

	klog_iter_init(&it, b.data, b.len, 0, 0, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.codec, KLOG_CODEC_SNAPPY);
	assert_string_equal(klog_codec_name(m.codec), "snappy");
	assert_true(m.valid);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);
	assert_int_equal(klog_msgset_validate(b.data, b.len, 0, &info), 0);

	expect_error(b.data, b.len, KLOG_ITER_DEEP, 1, -KLOG_EUNSUPPORTED, 10);

	/* A corrupt snappy wrapper is reported, not opened. */
	b.data[10 + 10] ^= 1;
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.codec, KLOG_CODEC_SNAPPY);
	assert_false(m.valid);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "y");
	klog_iter_free(&it);
	klog_buf_free(&b);
}

static void
test_gzip_corrupt(void **state)
{
	klog_buf_t b, inner;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	size_t wpos, wend;

	(void)state;
	/* A wrapper whose compressed bytes were hit: its CRC says so, and
	 * deep iteration reports it without opening it. */
	klog_buf_init(&b);
	wrapped_set(&b, &wpos, &wend);
	b.data[wpos + 20] ^= 0x40;
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.depth, 0);
	assert_int_equal(m.codec, KLOG_CODEC_GZIP);
	assert_false(m.valid);
	assert_int_equal(m.next_offset, wend);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "after");
	klog_iter_free(&it);
	assert_int_equal(klog_msgset_validate(b.data, b.len, KLOG_ITER_DEEP,
	    &info), -KLOG_ECORRUPT);
	assert_int_equal(info.bad_offset, wpos);
	klog_buf_free(&b);

	/* Not gzip at all, with a good CRC. */
	klog_buf_init(&b);
	put_str(&b, "x");
	put_m1(&b, KLOG_CODEC_GZIP, "not gzip data", 13);
	expect_error(b.data, b.len, KLOG_ITER_DEEP, 1, -KLOG_ECORRUPT, 10);
	klog_buf_free(&b);

	/* Inner sets that are not whole entries. */
	klog_buf_init(&inner);
	put_str(&inner, "one");
	put_str(&inner, "two");
	klog_buf_init(&b);
	put_wrapper(&b, inner.data, inner.len - 1);
	expect_error(b.data, b.len, KLOG_ITER_DEEP, 0, -KLOG_ECORRUPT, 0);
	klog_buf_reset(&b);
	inner.data[12 + 4] = 7;
	put_wrapper(&b, inner.data, inner.len);
	expect_error(b.data, b.len, KLOG_ITER_DEEP, 0, -KLOG_ECORRUPT, 0);
	klog_iter_init(&it, b.data, b.len, 0, 0, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_true(m.valid);
	klog_iter_free(&it);
	klog_buf_free(&b);
	klog_buf_free(&inner);
}

static void
test_gzip_inner_crc(void **state)
{
	klog_buf_t b, inner;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;

	(void)state;
	klog_buf_init(&inner);
	put_str(&inner, "one");
	put_str(&inner, "two");
	put_str(&inner, "three");
	inner.data[12 + 9] ^= 1;
	klog_buf_init(&b);
	put_wrapper(&b, inner.data, inner.len);
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_true(m.valid);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_false(m.valid);
	assert_int_equal(m.depth, 1);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_true(m.valid);
	assert_payload(&m, "three");
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);

	assert_int_equal(klog_msgset_validate(b.data, b.len, KLOG_ITER_DEEP,
	    &info), -KLOG_ECORRUPT);
	assert_int_equal(info.bad_offset, 0);
	assert_int_equal(info.messages, 0);
	assert_int_equal(klog_msgset_validate(b.data, b.len, 0, &info), 0);
	assert_int_equal(klog_msgset_validate(b.data, b.len,
	    KLOG_ITER_DEEP | KLOG_ITER_NOCRC, &info), 0);
	assert_int_equal(info.messages, 3);
	klog_buf_free(&b);
	klog_buf_free(&inner);
}

static void
test_gzip_bomb(void **state)
{
	const size_t big = (64u << 20) + 1;
	klog_buf_t inner, b;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	uint8_t *zeros, *gz;
	size_t gzlen;

	(void)state;
	/* One 2 MiB message inside: a limit of exactly its size works, one
	 * byte less does not. */
	zeros = calloc(1, big);
	assert_non_null(zeros);
	klog_buf_init(&inner);
	put_m0(&inner, zeros, 2u << 20);
	klog_buf_init(&b);
	put_wrapper(&b, inner.data, inner.len);
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, inner.len);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.payload_len, 2u << 20);
	assert_true(m.valid);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, inner.len - 1);
	assert_int_equal(klog_iter_next(&it, &m), -KLOG_ETOOBIG);
	assert_int_equal(klog_iter_error_offset(&it), 0);
	klog_iter_free(&it);
	klog_buf_free(&inner);

	/* Past the 64 MiB default. */
	klog_buf_reset(&b);
	gz = zlib_gzip(zeros, big, &gzlen);
	put_m1(&b, KLOG_CODEC_GZIP, gz, gzlen);
	free(gz);
	free(zeros);
	expect_error(b.data, b.len, KLOG_ITER_DEEP, 0, -KLOG_ETOOBIG, 0);
	assert_int_equal(klog_msgset_validate(b.data, b.len, 0, &info), 0);
	klog_buf_free(&b);
}

static void
test_fixture_valid(void **state)
{
	static const char *const want[] = {
		"test", "hello", "", "one", "two", "three", "end",
	};
	static const int64_t next[] = { 13, 28, 37, 37, 37, 104, 116 };
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	uint8_t *data;
	size_t len;

	(void)state;
	data = read_fixture("fmt-valid.bin", &len);
	assert_int_equal(len, 116);
	assert_memory_equal(data, test_m0, sizeof(test_m0));
	klog_iter_init(&it, data, len, 0, KLOG_ITER_DEEP, 0);
	for (size_t i = 0; i < 7; i++) {
		assert_int_equal(klog_iter_next(&it, &m), 1);
		assert_payload(&m, want[i]);
		assert_true(m.valid);
		assert_int_equal(m.next_offset, next[i]);
	}
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);
	assert_int_equal(klog_msgset_validate(data, len, KLOG_ITER_DEEP,
	    &info), 0);
	assert_int_equal(info.messages, 7);
	assert_int_equal(info.entries, 5);
	assert_int_equal(info.max_payload, 67 - 10);
	free(data);
}

static void
test_fixtures_bad(void **state)
{
	klog_iter_t it;
	klog_msg_t m;
	uint8_t *data;
	size_t len;

	(void)state;
	data = read_fixture("fmt-crc.bin", &len);
	klog_iter_init(&it, data, len, 0, 0, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_true(m.valid);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_false(m.valid);
	assert_int_equal(m.offset, 14);
	assert_payload(&m, "cravo");
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_true(m.valid);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);
	free(data);

	data = read_fixture("fmt-truncated.bin", &len);
	assert_int_equal(len, 38);
	expect_error(data, len, 0, 2, -KLOG_EPARTIAL, 28);
	free(data);

	data = read_fixture("fmt-badmagic.bin", &len);
	expect_error(data, len, 0, 1, -KLOG_ECORRUPT, 14);
	free(data);

	data = read_fixture("fmt-gzip-crc.bin", &len);
	klog_iter_init(&it, data, len, 0, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_true(m.valid);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_false(m.valid);
	assert_payload(&m, "uwo");
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_true(m.valid);
	assert_int_equal(m.next_offset, 67);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "end");
	klog_iter_free(&it);
	free(data);
}

/* klog_crc32() is zlib's crc32(), at every length and alignment, and
 * continues a running CRC the same way. */
static void
test_crc32_is_zlibs(void **state)
{
	static uint8_t buf[4096 + 64];
	uint32_t x = 2463534242u;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
	assert_int_equal(klog_crc32(0, buf, 0), 0);
	assert_int_equal(klog_crc32(0, "123456789", 9), 0xcbf43926u);
	for (size_t len = 0; len <= 4096; len += len < 300 ? 1 : 61)
		for (size_t off = 0; off < 16; off += 5)
			assert_int_equal(klog_crc32(0, buf + off, len),
			    (uint32_t)crc32(0, buf + off, (uInt)len));
	for (size_t cut = 0; cut <= 1000; cut += 37)
		assert_int_equal(klog_crc32(klog_crc32(0, buf, cut), buf + cut,
		    1000 - cut), (uint32_t)crc32(0, buf, 1000));
}

/* The header check the resynchronizing readers share, and the whole-entry
 * check built on it. */
static void
test_entry_header_ok(void **state)
{
	uint8_t e[64];
	size_t n = klog_entry_encode(e, "hello", 5);

	(void)state;
	assert_int_equal(klog_entry_header_ok(e, n), n - 4);
	assert_int_equal(klog_entry_valid(e, n), n - 4);
	/* The header alone is enough for the one, not for the other. */
	assert_int_equal(klog_entry_header_ok(e, 5), n - 4);
	assert_int_equal(klog_entry_valid(e, n - 1), 0);
	assert_int_equal(klog_entry_header_ok(e, 4), 0);
	/* A bad CRC: the header still holds. */
	e[n - 1] ^= 1;
	assert_int_equal(klog_entry_header_ok(e, n), n - 4);
	assert_int_equal(klog_entry_valid(e, n), 0);
	e[n - 1] ^= 1;
	e[4] = 2;                                   /* magic */
	assert_int_equal(klog_entry_header_ok(e, n), 0);
	e[4] = 1;                                   /* magic 1 wants 6 */
	klog_put_be32(e, KLOG_MAGIC1_HEADER - 1);
	assert_int_equal(klog_entry_header_ok(e, n), 0);
	klog_put_be32(e, KLOG_MAGIC1_HEADER);
	assert_int_equal(klog_entry_header_ok(e, n), KLOG_MAGIC1_HEADER);
	e[4] = 0;
	klog_put_be32(e, KLOG_MAGIC0_HEADER - 1);   /* magic 0 wants 5 */
	assert_int_equal(klog_entry_header_ok(e, n), 0);
	klog_put_be32(e, KLOG_MAX_ENTRY_LENGTH + 1);
	assert_int_equal(klog_entry_header_ok(e, n), 0);
	klog_put_be32(e, KLOG_MAX_ENTRY_LENGTH);
	assert_int_equal(klog_entry_header_ok(e, n), KLOG_MAX_ENTRY_LENGTH);
	assert_int_equal(klog_entry_valid(e, n), 0);
}

/* ---- magic 2 ---- */

/* The key, value and header of record i of put_batch()'s entries: key
 * "k<i>" for even i, null for odd; value "v<i>", null for i == 1; a
 * header "h" = "<i>" when i % 3 == 0. */
static void
record_i(int i, char *key, char *value, char *hval)
{
	snprintf(key, 16, "k%d", i);
	snprintf(value, 16, "v%d", i);
	snprintf(hval, 16, "%d", i);
}

/* Append one magic-2 entry of n records, record i at first_ts + 10 * i
 * (none when first_ts is KLOG_NO_TIMESTAMP); returns its position. */
static size_t
put_batch(klog_buf_t *b, int n, int64_t first_ts)
{
	klog_batch_builder_t bb;
	size_t at = b->len;
	char key[16], value[16], hval[16];

	klog_batch_begin(&bb, b, first_ts, KLOG_NO_PRODUCER, -1, -1);
	for (int i = 0; i < n; i++) {
		klog_header_t h = { (const uint8_t *)"h", 1,
		    (const uint8_t *)hval, 0 };

		record_i(i, key, value, hval);
		h.value_len = (int32_t)strlen(hval);
		klog_batch_add(&bb, b,
		    &(klog_record_in_t){ i == 1 ? NULL : value,
		    i == 1 ? 0 : strlen(value), i % 2 ? NULL : key, strlen(key),
		    first_ts < 0 ? first_ts : first_ts + 10 * i,
		    i % 3 == 0 ? &h : NULL, i % 3 == 0 });
	}
	assert_int_equal(klog_batch_end(&bb, b), 0);
	return at;
}

/* The last entry of b, at at, with its records compressed with codec, as
 * a producer writes a compressed batch. */
static void
compress_batch(klog_buf_t *b, size_t at, int codec)
{
	const size_t head = KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER +
	    KLOG_BATCH_BODY_HEADER;
	uint8_t *c, *e;
	size_t clen;

	assert_int_equal(klog_codec_deflate(codec, KLOG_CODEC_LEVEL_DEFAULT,
	    b->data + at + head, b->len - at - head, &c, &clen), 0);
	b->len = at + head;
	klog_buf_put(b, c, clen);
	free(c);
	e = b->data + at;
	klog_put_be32(e, (uint32_t)(b->len - at - KLOG_LENGTH_SIZE));
	e[10 + 1] |= (uint8_t)codec;
	klog_batch_seal(e, b->len - at);
}

/* The CRC-32C of the entry at e written as it is, without sealing. */
static void
recrc(uint8_t *e)
{
	klog_put_be32(e + 6, klog_crc32c(0, e + 10, klog_be32(e) - 6));
}

/* What a message that is not a record says of a record's fields. */
static void
assert_no_record(const klog_msg_t *m)
{
	assert_int_equal(m->timestamp, KLOG_NO_TIMESTAMP);
	assert_null(m->key);
	assert_int_equal(m->key_len, -1);
	assert_null(m->headers);
	assert_int_equal(m->headers_len, 0);
	assert_int_equal(m->header_count, 0);
	assert_int_equal(m->delta, 0);
}

/* Record i of put_batch(b, n, first_ts) at w as the deep iterator hands
 * it out. */
static void
assert_record(const klog_msg_t *m, const uint8_t *set, size_t w, int i,
    int n, int64_t first_ts)
{
	uint32_t length = klog_be32(set + w);
	char key[16], value[16], hval[16];
	klog_header_t h;
	size_t pos = 0;

	record_i(i, key, value, hval);
	assert_int_equal(m->offset, (int64_t)w);
	assert_int_equal(m->next_offset, i + 1 < n ? (int64_t)w :
	    (int64_t)(w + 4 + length));
	assert_int_equal(m->pos, (int64_t)w);
	assert_int_equal(m->magic, 2);
	assert_int_equal(m->depth, 1);
	assert_int_equal(m->codec, KLOG_CODEC_NONE);
	assert_true(m->valid);
	assert_int_equal(m->crc_stored, klog_be32(set + w + 6));
	assert_int_equal(m->delta, i);
	assert_ptr_equal(m->batch, set + w + 10);
	assert_int_equal(m->batch_len, length - 6);
	assert_int_equal(m->timestamp, first_ts < 0 ? first_ts : first_ts +
	    10 * i);
	if (i == 1) {
		assert_null(m->payload);
		assert_int_equal(m->payload_len, 0);
	} else {
		assert_payload(m, value);
	}
	if (i % 2) {
		assert_null(m->key);
		assert_int_equal(m->key_len, -1);
	} else {
		assert_int_equal(m->key_len, strlen(key));
		assert_memory_equal(m->key, key, strlen(key));
	}
	assert_int_equal(m->header_count, i % 3 == 0);
	if (i % 3 == 0) {
		assert_int_equal(klog_record_header_next(m->headers,
		    m->headers_len, &pos, &h), 1);
		assert_int_equal(h.key_len, 1);
		assert_memory_equal(h.value, hval, strlen(hval));
	}
	assert_int_equal(klog_record_header_next(m->headers, m->headers_len,
	    &pos, &h), 0);
}

/* Shallow, a magic-2 entry is one message: its body, its CRC-32C, no
 * record fields; the plain entries around it say they have none (even
 * in a message struct full of junk). */
static void
test_magic2_shallow(void **state)
{
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	size_t w, e;

	(void)state;
	klog_buf_init(&b);
	put_str(&b, "before");
	w = put_batch(&b, 3, 1000);
	e = b.len;
	put_str(&b, "after");
	klog_iter_init(&it, b.data, b.len, 0, 0, 0);
	memset(&m, 0xaa, sizeof(m));
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "before");
	assert_no_record(&m);
	assert_null(m.batch);
	memset(&m, 0xaa, sizeof(m));
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.magic, 2);
	assert_int_equal(m.depth, 0);
	assert_int_equal(m.codec, KLOG_CODEC_NONE);
	assert_int_equal(m.attributes, 0);
	assert_int_equal(m.offset, (int64_t)w);
	assert_int_equal(m.next_offset, (int64_t)e);
	assert_int_equal(m.length, e - w - 4);
	assert_ptr_equal(m.payload, b.data + w + 10);
	assert_int_equal(m.payload_len, e - w - 10);
	assert_ptr_equal(m.batch, m.payload);
	assert_int_equal(m.batch_len, m.payload_len);
	assert_true(m.valid);
	assert_int_equal(m.crc_stored, klog_crc32c(0, m.payload,
	    m.payload_len));
	assert_int_equal(m.crc_computed, m.crc_stored);
	assert_no_record(&m);
	memset(&m, 0xaa, sizeof(m));
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "after");
	assert_no_record(&m);
	assert_null(m.batch);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);
	assert_int_equal(klog_msgset_validate(b.data, b.len, 0, &info), 0);
	assert_int_equal(info.entries, 3);
	assert_int_equal(info.messages, 3);
	assert_int_equal(info.max_payload, e - w - 10);
	assert_int_equal(klog_entry_header_ok(b.data + w, b.len - w),
	    e - w - 4);
	assert_int_equal(klog_entry_valid(b.data + w, b.len - w), e - w - 4);
	assert_int_equal(klog_entry_valid(b.data + w, e - w - 1), 0);
	klog_buf_free(&b);
}

/* Deep, its records one by one, as a wrapper's messages: at the entry's
 * offset, the last one's next offset past it; then the next entry says
 * it has no record fields. */
static void
test_magic2_deep(void **state)
{
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	size_t w;

	(void)state;
	klog_buf_init(&b);
	put_str(&b, "before");
	w = put_batch(&b, 4, 1000);
	put_str(&b, "after");
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "before");
	for (int i = 0; i < 4; i++) {
		assert_int_equal(klog_iter_next(&it, &m), 1);
		assert_record(&m, b.data, w, i, 4, 1000);
		assert_int_equal(klog_iter_offset(&it), i < 3 ? (int64_t)w :
		    m.next_offset);
	}
	memset(&m, 0xaa, sizeof(m));
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "after");
	assert_no_record(&m);
	assert_null(m.batch);
	assert_int_equal(m.depth, 0);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);
	assert_int_equal(klog_msgset_validate(b.data, b.len, KLOG_ITER_DEEP,
	    &info), 0);
	assert_int_equal(info.entries, 3);
	assert_int_equal(info.messages, 6);

	/* With KLOG_ITER_NOCRC the records are read all the same. */
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP | KLOG_ITER_NOCRC,
	    0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_record(&m, b.data, w, 0, 4, 1000);
	assert_int_equal(m.crc_computed, 0);
	klog_iter_free(&it);   /* mid-batch: frees what it holds */
	klog_buf_free(&b);
}

/* Every codec's records read as the uncompressed ones; the body handed
 * out is the stored one; a bound below the records' size refuses. */
static void
test_magic2_codecs(void **state)
{
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	size_t w;

	(void)state;
	for (int codec = 1; codec <= KLOG_CODEC_MAX; codec++) {
		klog_buf_init(&b);
		put_str(&b, "x");
		w = put_batch(&b, 50, 1700000000000);
		compress_batch(&b, w, codec);
		klog_iter_init(&it, b.data, b.len, 0, 0, 0);
		assert_int_equal(klog_iter_next(&it, &m), 1);
		assert_int_equal(klog_iter_next(&it, &m), 1);
		assert_int_equal(m.codec, codec);
		assert_int_equal(m.attributes, codec);
		assert_true(m.valid);
		klog_iter_free(&it);
		klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
		assert_int_equal(klog_iter_next(&it, &m), 1);
		for (int i = 0; i < 50; i++) {
			assert_int_equal(klog_iter_next(&it, &m), 1);
			assert_record(&m, b.data, w, i, 50, 1700000000000);
		}
		assert_int_equal(klog_iter_next(&it, &m), 0);
		klog_iter_free(&it);
		assert_int_equal(klog_msgset_validate(b.data, b.len,
		    KLOG_ITER_DEEP, &info), 0);
		assert_int_equal(info.messages, 51);
		/* 50 records take over 500 bytes decompressed. */
		klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 500);
		assert_int_equal(klog_iter_next(&it, &m), 1);
		assert_int_equal(klog_iter_next(&it, &m), -KLOG_ETOOBIG);
		assert_int_equal(klog_iter_error_offset(&it), (int64_t)w);
		klog_iter_free(&it);
		klog_buf_free(&b);
	}
}

/* LogAppendTime: every record has the batch's maxTimestamp; no
 * firstTimestamp: none has one. */
static void
test_magic2_timestamps(void **state)
{
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;
	klog_batch_t bt;
	int n = 0;

	(void)state;
	klog_buf_init(&b);
	put_batch(&b, 3, 1000);
	assert_int_equal(klog_batch_read(b.data + 10, b.len - 10, &bt), 0);
	bt.attributes |= KLOG_BATCH_LOG_APPEND_TIME;
	bt.max_timestamp = 123456789;
	klog_batch_write(b.data + 10, &bt);
	klog_batch_seal(b.data, b.len);
	put_batch(&b, 2, KLOG_NO_TIMESTAMP);
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
	while (klog_iter_next(&it, &m) == 1)
		assert_int_equal(m.timestamp, n++ < 3 ? 123456789 :
		    KLOG_NO_TIMESTAMP);
	assert_int_equal(n, 5);
	klog_iter_free(&it);
	klog_buf_free(&b);
}

/* A bad CRC-32C: a message with valid 0, not opened, as a wrapper's. */
static void
test_magic2_crc(void **state)
{
	klog_buf_t b;
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	size_t w;

	(void)state;
	klog_buf_init(&b);
	put_str(&b, "alpha");
	w = put_batch(&b, 3, 1000);
	put_str(&b, "omega");
	b.data[b.len - 20] ^= 1;     /* a byte of the last record */
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_false(m.valid);
	assert_int_equal(m.depth, 0);
	assert_int_equal(m.offset, (int64_t)w);
	assert_true(m.crc_computed != m.crc_stored);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_payload(&m, "omega");
	klog_iter_free(&it);
	assert_int_equal(klog_msgset_validate(b.data, b.len, 0, &info),
	    -KLOG_ECORRUPT);
	assert_int_equal(info.bad_offset, (int64_t)w);
	assert_int_equal(klog_msgset_validate(b.data, b.len,
	    KLOG_ITER_NOCRC | KLOG_ITER_DEEP, &info), 0);
	assert_int_equal(klog_entry_valid(b.data + w, b.len - w), 0);
	klog_buf_free(&b);
}

/* set[0..len) iterates as n messages and validates, as flags say. */
static void
expect_clean(const uint8_t *set, size_t len, unsigned flags, uint32_t n)
{
	klog_iter_t it;
	klog_msg_t m;
	klog_msgset_info_t info;
	uint32_t got = 0;
	int r;

	klog_iter_init(&it, set, len, 0, flags, 0);
	while ((r = klog_iter_next(&it, &m)) == 1)
		got++;
	assert_int_equal(r, 0);
	assert_int_equal(got, n);
	klog_iter_free(&it);
	assert_int_equal(klog_msgset_validate(set, len, flags, &info), 0);
	assert_int_equal(info.messages, n);
}

/* One entry after "alpha", changed by change and its CRC-32C made good
 * again, fails as code for the reason why, shallow or (when deep_only)
 * deep only. */
static void
expect_bad_batch(void (*change)(uint8_t *e), int code, int deep_only,
    const char *why)
{
	klog_iter_t it;
	klog_msg_t m;
	klog_buf_t b;
	size_t w;

	klog_buf_init(&b);
	put_str(&b, "alpha");
	w = put_batch(&b, 3, 1000);
	put_str(&b, "omega");
	change(b.data + w);
	recrc(b.data + w);
	expect_error(b.data, b.len, KLOG_ITER_DEEP, 1, code, (int64_t)w);
	klog_iter_init(&it, b.data, b.len, 0, KLOG_ITER_DEEP, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(klog_iter_next(&it, &m), code);
	assert_string_equal(klog_iter_error(&it), why);
	klog_iter_free(&it);
	if (deep_only) {
		expect_clean(b.data, b.len, 0, 3);
		assert_true(klog_entry_valid(b.data + w, b.len - w) > 0);
	} else {
		expect_error(b.data, b.len, 0, 1, code, (int64_t)w);
		assert_int_equal(klog_entry_valid(b.data + w, b.len - w), 0);
	}
	klog_buf_free(&b);
}

static void
bump_last_delta(uint8_t *e)
{
	klog_put_be32(e + 12, klog_be32(e + 12) + 1);
}

static void
other_attrs_byte(uint8_t *e)
{
	e[5] = 1;
}

static void
no_record(uint8_t *e)
{
	klog_put_be32(e + 46, 0);
}

static void
count_too_high(uint8_t *e)
{
	klog_put_be32(e + 46, 4);
}

static void
count_too_low(uint8_t *e)
{
	klog_put_be32(e + 46, 2);
}

static void
transactional(uint8_t *e)
{
	e[11] |= KLOG_BATCH_TRANSACTIONAL;
	e[5] = e[11];
}

static void
control(uint8_t *e)
{
	e[11] |= KLOG_BATCH_CONTROL;
	e[5] = e[11];
}

static void
codec_5(uint8_t *e)
{
	e[11] = 5;
	e[5] = 5;
}

static void
records_not_compressed(uint8_t *e)
{
	e[11] = KLOG_CODEC_ZSTD;
	e[5] = e[11];
}

/* The second record's offset delta 1 made 2: the first record is
 * 1 + 10 bytes ("k0", "v0", header h=0), its delta at 3; the second's
 * delta at 2 past its start. */
static void
delta_out_of_order(uint8_t *e)
{
	const uint8_t *rec = e + 50;

	e[50 + (size_t)(rec[0] >> 1) + 1 + 3] = 4;
}

/* Each way a magic-2 entry is not what klog writes: corrupt, or
 * transactional (unsupported), shallow already or only once its records
 * are read. */
static void
test_magic2_bad(void **state)
{
	(void)state;
	expect_bad_batch(bump_last_delta, -KLOG_ECORRUPT, 0,
	    "batch's last offset delta is not its length + 3");
	expect_bad_batch(other_attrs_byte, -KLOG_ECORRUPT, 0,
	    "attributes byte does not match the batch's");
	expect_bad_batch(no_record, -KLOG_ECORRUPT, 0,
	    "batch holds no record");
	expect_bad_batch(transactional, -KLOG_EUNSUPPORTED, 0,
	    "transactional batch not supported");
	expect_bad_batch(control, -KLOG_EUNSUPPORTED, 0,
	    "transactional batch not supported");
	expect_bad_batch(codec_5, -KLOG_ECORRUPT, 0,
	    "unknown compression codec");
	expect_bad_batch(count_too_high, -KLOG_ECORRUPT, 1,
	    "malformed record inside batch");
	expect_bad_batch(count_too_low, -KLOG_ECORRUPT, 1,
	    "records do not match the batch's count");
	expect_bad_batch(records_not_compressed, -KLOG_ECORRUPT, 1,
	    "records do not decompress");
	expect_bad_batch(delta_out_of_order, -KLOG_ECORRUPT, 1,
	    "record offset delta out of order");
}

/*
 * KLOG_ITER_RECORDS_CHECKED: a caller that read a batch's records (the
 * Kafka listener's ingest) has validation take its recordsCount unread.
 * Records made bad after the header's checks pass so, and only so; every
 * check of the entry itself (its CRC, codec, lastOffsetDelta, count of at
 * least one) still holds with the flag.
 */
static void
test_magic2_records_checked(void **state)
{
	const unsigned deep = KLOG_ITER_DEEP | KLOG_ITER_RECORDS_CHECKED;
	klog_msgset_info_t info;
	klog_buf_t b;
	size_t w;

	(void)state;
	klog_buf_init(&b);
	put_str(&b, "alpha");
	w = put_batch(&b, 3, 1000);
	assert_int_equal(klog_msgset_validate(b.data, b.len, deep, &info), 0);
	assert_int_equal(info.messages, 1 + 3);
	delta_out_of_order(b.data + w);
	recrc(b.data + w);
	assert_int_equal(klog_msgset_validate(b.data, b.len, KLOG_ITER_DEEP,
	    &info), -KLOG_ECORRUPT);
	assert_int_equal(klog_msgset_validate(b.data, b.len, deep, &info), 0);
	assert_int_equal(info.messages, 1 + 3);
	b.data[b.len - 1] ^= 1;          /* the CRC is still checked */
	assert_int_equal(klog_msgset_validate(b.data, b.len, deep, &info),
	    -KLOG_ECORRUPT);
	assert_int_equal(info.bad_offset, (int64_t)w);
	recrc(b.data + w);
	bump_last_delta(b.data + w);
	recrc(b.data + w);
	assert_int_equal(klog_msgset_validate(b.data, b.len, deep, &info),
	    -KLOG_ECORRUPT);
	klog_buf_free(&b);
}

/* A magic-2 entry too short for the body's header; a gzip wrapper
 * holding a magic-2 entry (Kafka never nests a batch). */
static void
test_magic2_framing(void **state)
{
	klog_buf_t b, inner;
	uint8_t e[4 + 45];

	(void)state;
	memset(e, 0, sizeof(e));
	klog_put_be32(e, 45);
	e[4] = 2;
	klog_buf_init(&b);
	put_str(&b, "alpha");
	klog_buf_put(&b, e, sizeof(e));
	expect_error(b.data, b.len, 0, 1, -KLOG_ECORRUPT, 14);
	assert_int_equal(klog_entry_header_ok(e, sizeof(e)), 0);
	klog_put_be32(e, 46);
	assert_int_equal(klog_entry_header_ok(e, sizeof(e)), 46);
	klog_buf_free(&b);

	klog_buf_init(&inner);
	put_str(&inner, "one");
	put_batch(&inner, 2, 1000);
	klog_buf_init(&b);
	put_str(&b, "alpha");
	put_wrapper(&b, inner.data, inner.len);
	expect_error(b.data, b.len, KLOG_ITER_DEEP, 1, -KLOG_ECORRUPT, 14);
	expect_clean(b.data, b.len, 0, 2);
	klog_buf_free(&b);
	klog_buf_free(&inner);
}

/* A magic-2 entry cut anywhere is a partial tail, shallow and deep. */
static void
test_magic2_cut(void **state)
{
	klog_buf_t b;
	size_t w;

	(void)state;
	klog_buf_init(&b);
	put_str(&b, "alpha");
	w = put_batch(&b, 3, 1000);
	for (size_t cut = w + 1; cut < b.len; cut++) {
		expect_error(b.data, cut, 0, 1, -KLOG_EPARTIAL, (int64_t)w);
		expect_error(b.data, cut, KLOG_ITER_DEEP, 1, -KLOG_EPARTIAL,
		    (int64_t)w);
		assert_int_equal(klog_entry_valid(b.data + w, cut - w), 0);
	}
	klog_buf_free(&b);
}

/* The segment kept from before magic 2 reads deep exactly as klog-dump
 * printed it then (tests/data/pre30-segment.dump), and says it holds no
 * record fields. */
static void
test_pre30_fixture(void **state)
{
	static const struct {
		int64_t offset, next;
		uint8_t magic, codec, depth;
		uint32_t crc;
		const char *payload;
	} want[] = {
		{ 0, 23, 0, 0, 0, 0xa5754d95, "plain line one" },
		{ 23, 46, 0, 0, 0, 0xced34102, "plain line two" },
		{ 46, 68, 0, 0, 0, 0x1b5ed6a7, "{\"json\":true}" },
		{ 68, 68, 0, 0, 1, 0x71e2884c, "gz a" },
		{ 68, 68, 0, 0, 1, 0xe8ebd9f6, "gz b" },
		{ 68, 130, 0, 0, 1, 0x9fece960, "gz c" },
		{ 130, 156, 0, 0, 0, 0xd3ec94b9, "kafka keyed value" },
		{ 156, 171, 0, 0, 0, 0xb61f1169, "second" },
		{ 171, 185, 0, 0, 0, 0x68c73dc4, "empty" },
		{ 185, 194, 0, 0, 0, 0x00000000, "" },
	};
	klog_iter_t it;
	klog_msg_t m;
	size_t len, i = 0;
	uint8_t *data = read_fixture("pre30-segment.klog", &len);

	(void)state;
	assert_int_equal(len, 194);
	klog_iter_init(&it, data, len, 0, KLOG_ITER_DEEP, 0);
	while (klog_iter_next(&it, &m) == 1) {
		assert_true(i < sizeof(want) / sizeof(want[0]));
		assert_int_equal(m.offset, want[i].offset);
		assert_int_equal(m.next_offset, want[i].next);
		assert_int_equal(m.magic, want[i].magic);
		assert_int_equal(m.codec, want[i].codec);
		assert_int_equal(m.depth, want[i].depth);
		assert_int_equal(m.crc_stored, want[i].crc);
		assert_true(m.valid);
		assert_payload(&m, want[i].payload);
		assert_no_record(&m);
		assert_null(m.batch);
		i++;
	}
	assert_int_equal(i, sizeof(want) / sizeof(want[0]));
	assert_int_equal(klog_iter_offset(&it), 194);
	klog_iter_free(&it);
	free(data);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32_is_zlibs),
		cmocka_unit_test(test_encode_facts),
		cmocka_unit_test(test_decode_facts),
		cmocka_unit_test(test_roundtrip_sizes),
		cmocka_unit_test(test_empty_buffer),
		cmocka_unit_test(test_crc_mismatch),
		cmocka_unit_test(test_partial_tails),
		cmocka_unit_test(test_bad_length),
		cmocka_unit_test(test_bad_magic_and_codec),
		cmocka_unit_test(test_gzip_wrap_format),
		cmocka_unit_test(test_gzip_deep),
		cmocka_unit_test(test_gzip_shallow),
		cmocka_unit_test(test_gzip_resume),
		cmocka_unit_test(test_gzip_empty_inner),
		cmocka_unit_test(test_gzip_nested),
		cmocka_unit_test(test_snappy),
		cmocka_unit_test(test_gzip_corrupt),
		cmocka_unit_test(test_gzip_inner_crc),
		cmocka_unit_test(test_gzip_bomb),
		cmocka_unit_test(test_fixture_valid),
		cmocka_unit_test(test_fixtures_bad),
		cmocka_unit_test(test_entry_header_ok),
		cmocka_unit_test(test_magic2_shallow),
		cmocka_unit_test(test_magic2_deep),
		cmocka_unit_test(test_magic2_codecs),
		cmocka_unit_test(test_magic2_timestamps),
		cmocka_unit_test(test_magic2_crc),
		cmocka_unit_test(test_magic2_bad),
		cmocka_unit_test(test_magic2_records_checked),
		cmocka_unit_test(test_magic2_framing),
		cmocka_unit_test(test_magic2_cut),
		cmocka_unit_test(test_pre30_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
