/* Unit tests for lib/storage/codec.c: Kafka's codecs both ways, bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "klog/base/error.h"
#include "klog/storage/codec.h"

static void
test_codec_name(void **state)
{
	(void)state;
	assert_string_equal(klog_codec_name(0), "none");
	assert_string_equal(klog_codec_name(1), "gzip");
	assert_string_equal(klog_codec_name(2), "snappy");
	assert_string_equal(klog_codec_name(3), "lz4");
	assert_string_equal(klog_codec_name(4), "zstd");
	assert_string_equal(klog_codec_name(5), "invalid");
	assert_string_equal(klog_codec_name(-1), "invalid");
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
test_gunzip(void **state)
{
	static const char text[] = "a gzip stream";
	uint8_t *gz, *two, *out;
	size_t gzlen, outlen, n = strlen(text);

	(void)state;
	gz = zlib_gzip(text, n, &gzlen);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_GZIP, gz, gzlen, n, &out, &outlen), 0);
	assert_int_equal(outlen, n);
	assert_memory_equal(out, text, n);
	free(out);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_GZIP, gz, gzlen, n - 1, &out, &outlen),
	    -KLOG_ETOOBIG);
	assert_null(out);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_GZIP, gz, gzlen - 1, 100, &out, &outlen),
	    -KLOG_ECORRUPT);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_GZIP, gz, 0, 100, &out, &outlen),
	    -KLOG_ECORRUPT);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_GZIP, (const uint8_t *)text, n, 100, &out,
	    &outlen), -KLOG_ECORRUPT);

	/* Two members read as one stream, as gzip(1) does; junk after the
	 * last member is corruption. */
	two = malloc(2 * gzlen + 1);
	assert_non_null(two);
	memcpy(two, gz, gzlen);
	memcpy(two + gzlen, gz, gzlen);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_GZIP, two, 2 * gzlen, 100, &out, &outlen), 0);
	assert_int_equal(outlen, 2 * n);
	assert_memory_equal(out + n, text, n);
	free(out);
	two[gzlen] = 'x';
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_GZIP, two, gzlen + 1, 100, &out, &outlen),
	    -KLOG_ECORRUPT);
	free(two);
	free(gz);

	gz = zlib_gzip("", 0, &gzlen);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_GZIP, gz, gzlen, 0, &out, &outlen), 0);
	assert_int_equal(outlen, 0);
	free(out);
	free(gz);
}

/* in[0..len) as one zstd frame that says its content size or not (as
 * Kafka's Java producer and librdkafka write it, streaming). */
static uint8_t *
zstd_frame(const void *in, size_t len, int with_size, size_t *outlen)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t cap = ZSTD_compressBound(len);
	uint8_t *out;

	assert_non_null(c);
	assert_non_null(out = malloc(cap));
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c,
	    ZSTD_c_contentSizeFlag, with_size)));
	*outlen = ZSTD_compress2(c, out, cap, in, len);
	assert_false(ZSTD_isError(*outlen));
	assert_true(ZSTD_getFrameContentSize(out, *outlen) == (with_size ?
	    (unsigned long long)len : ZSTD_CONTENTSIZE_UNKNOWN));
	ZSTD_freeCCtx(c);
	return out;
}

static int
zstd_inflate_rc(const uint8_t *in, size_t len, size_t max, const void *want,
    size_t want_len)
{
	uint8_t *out;
	size_t n;
	int r = klog_codec_inflate(KLOG_CODEC_ZSTD, in, len, max, &out, &n);

	if (r == 0) {
		assert_int_equal(n, want_len);
		if (n > 0)
			assert_memory_equal(out, want, n);
		free(out);
	} else {
		assert_null(out);
	}
	return r;
}

/* zstd frames with and without a content size, two back to back, bounded
 * exactly; cut (empty too) or junk, corrupt. */
static void
test_inflate_zstd(void **state)
{
	char text[5000];
	uint8_t *a, *b, two[20000];
	size_t alen, blen;

	(void)state;
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 7 + (i % 131 == 0));
	for (int with_size = 0; with_size <= 1; with_size++) {
		a = zstd_frame(text, sizeof(text), with_size, &alen);
		assert_true(alen < sizeof(text) / 4);
		assert_int_equal(zstd_inflate_rc(a, alen, sizeof(text), text,
		    sizeof(text)), 0);
		assert_int_equal(zstd_inflate_rc(a, alen, sizeof(text) - 1,
		    NULL, 0), -KLOG_ETOOBIG);
		for (size_t cut = 0; cut < alen; cut++)
			assert_int_equal(zstd_inflate_rc(a, cut, 1 << 20, NULL,
			    0), -KLOG_ECORRUPT);
		free(a);
	}
	/* Two frames are read as one stream, as zstd(1) reads them. */
	a = zstd_frame(text, 3000, 0, &alen);
	b = zstd_frame(text + 3000, sizeof(text) - 3000, 1, &blen);
	memcpy(two, a, alen);
	memcpy(two + alen, b, blen);
	assert_int_equal(zstd_inflate_rc(two, alen + blen, sizeof(text), text,
	    sizeof(text)), 0);
	/* Junk, alone or after the frame. */
	assert_int_equal(zstd_inflate_rc((const uint8_t *)"junkjunk", 8,
	    1 << 20, NULL, 0), -KLOG_ECORRUPT);
	memcpy(two + alen, "junk", 4);
	assert_int_equal(zstd_inflate_rc(two, alen + 4, 1 << 20, NULL, 0),
	    -KLOG_ECORRUPT);
	free(a);
	free(b);
	/* An empty frame is empty content, within even a bound of 0. */
	a = zstd_frame("", 0, 0, &alen);
	assert_int_equal(zstd_inflate_rc(a, alen, 0, "", 0), 0);
	free(a);
}

/* A zstd bomb: 64 MiB of zeros in a few KiB, with and without a content
 * size, stops at the bound. */
static void
test_inflate_zstd_bomb(void **state)
{
	size_t big = (size_t)64 << 20, clen;
	uint8_t *zeros, *c;

	(void)state;
	assert_non_null(zeros = calloc(1, big));
	for (int with_size = 0; with_size <= 1; with_size++) {
		c = zstd_frame(zeros, big, with_size, &clen);
		assert_true(clen < 8192);
		assert_int_equal(zstd_inflate_rc(c, clen, 64 << 10, NULL, 0),
		    -KLOG_ETOOBIG);
		assert_int_equal(zstd_inflate_rc(c, clen, big - 1, NULL, 0),
		    -KLOG_ETOOBIG);
		free(c);
	}
	free(zeros);
}


/* Text that compresses, as log lines do. */
static void
fill_text(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)("GET /index.html 200 "[i % 20] + (i % 977 == 0));
}

/* in[0..len) decompressed by the codec's own library, not by klog. */
static uint8_t *
library_inflate(int codec, const uint8_t *in, size_t len, size_t n)
{
	uint8_t *out = malloc(n + 1);
	size_t got = n, src = len;
	LZ4F_dctx *d;
	z_stream zs;

	assert_non_null(out);
	switch (codec) {
	case KLOG_CODEC_GZIP:
		memset(&zs, 0, sizeof(zs));
		assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
		zs.next_in = (Bytef *)(uintptr_t)in;
		zs.avail_in = (uInt)len;
		zs.next_out = out;
		zs.avail_out = (uInt)n + 1;
		assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
		got = zs.total_out;
		inflateEnd(&zs);
		break;
	case KLOG_CODEC_SNAPPY:
		assert_int_equal(snappy_uncompress((const char *)in, len,
		    (char *)out, &got), SNAPPY_OK);
		break;
	case KLOG_CODEC_LZ4:
		assert_false(LZ4F_isError(LZ4F_createDecompressionContext(&d,
		    LZ4F_VERSION)));
		got = n + 1;
		assert_int_equal(LZ4F_decompress(d, out, &got, in, &src, NULL),
		    0);
		assert_int_equal(src, len);
		LZ4F_freeDecompressionContext(d);
		break;
	case KLOG_CODEC_ZSTD:
		got = ZSTD_decompress(out, n + 1, in, len);
		assert_false(ZSTD_isError(got));
		break;
	}
	assert_int_equal(got, n);
	return out;
}

/* Every codec at its default and extreme levels, empty input too: what
 * klog compresses, klog and the codec's own library read back, and a
 * bound one byte short is refused. */
static void
test_deflate_roundtrip(void **state)
{
	static const size_t sizes[] = { 0, 1, 200, 70000, 300000 };
	static const int levels[][3] = {
		[KLOG_CODEC_GZIP] = { KLOG_CODEC_LEVEL_DEFAULT, 0, 9 },
		[KLOG_CODEC_SNAPPY] = { KLOG_CODEC_LEVEL_DEFAULT, 1, 99 },
		[KLOG_CODEC_LZ4] = { KLOG_CODEC_LEVEL_DEFAULT, 0, 12 },
		[KLOG_CODEC_ZSTD] = { KLOG_CODEC_LEVEL_DEFAULT, 1, 19 },
	};
	uint8_t *in = malloc(300000), *c, *out;
	size_t clen, outlen;

	(void)state;
	assert_non_null(in);
	fill_text(in, 300000);
	for (int codec = 1; codec <= KLOG_CODEC_MAX; codec++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			for (int l = 0; l < 3; l++) {
				size_t n = sizes[s];

				assert_int_equal(klog_codec_deflate(codec,
				    levels[codec][l], in, n, &c, &clen), 0);
				/* gzip's level 0 stores. */
				if (n >= 70000)
					assert_true(codec == KLOG_CODEC_GZIP &&
					    levels[codec][l] == 0 ? clen > n :
					    clen < n / 4);
				assert_int_equal(klog_codec_inflate(codec, c,
				    clen, n, &out, &outlen), 0);
				assert_int_equal(outlen, n);
				if (n > 0)
					assert_memory_equal(out, in, n);
				free(out);
				out = library_inflate(codec, c, clen, n);
				if (n > 0)
					assert_memory_equal(out, in, n);
				free(out);
				if (n > 0)
					assert_int_equal(klog_codec_inflate(
					    codec, c, clen, n - 1, &out,
					    &outlen), -KLOG_ETOOBIG);
				free(c);
			}
		}
	}
	free(in);
}

/* Kafka's Java reader wants its own LZ4 frame: version 01, independent
 * blocks, no content size, 64 KiB blocks. */
static void
test_deflate_lz4_frame(void **state)
{
	uint8_t in[1000], *c;
	size_t clen;

	(void)state;
	fill_text(in, sizeof(in));
	assert_int_equal(klog_codec_deflate(KLOG_CODEC_LZ4,
	    KLOG_CODEC_LEVEL_DEFAULT, in, sizeof(in), &c, &clen), 0);
	assert_memory_equal(c, "\x04\x22\x4d\x18", 4);
	assert_int_equal(c[4] & 0xc0, 0x40);   /* version 01 */
	assert_int_equal(c[4] & 0x20, 0x20);   /* block independence */
	assert_int_equal(c[4] & 0x08, 0);      /* no content size */
	assert_int_equal((c[5] >> 4) & 7, 4);  /* 64 KiB blocks */
	free(c);
}

static void
test_deflate_refused(void **state)
{
	uint8_t in[10] = "0123456789", *c = (uint8_t *)1;
	size_t clen = 1;

	(void)state;
	assert_int_equal(klog_codec_deflate(KLOG_CODEC_NONE, -1, in, 10, &c,
	    &clen), -KLOG_EINVAL);
	assert_null(c);
	assert_int_equal(clen, 0);
	assert_int_equal(klog_codec_deflate(5, -1, in, 10, &c, &clen),
	    -KLOG_EINVAL);
	assert_int_equal(klog_codec_deflate(KLOG_CODEC_GZIP, 10, in, 10, &c,
	    &clen), -KLOG_EINVAL);
	assert_int_equal(klog_codec_deflate(KLOG_CODEC_GZIP, -2, in, 10, &c,
	    &clen), -KLOG_EINVAL);
	assert_int_equal(klog_codec_deflate(KLOG_CODEC_LZ4, 13, in, 10, &c,
	    &clen), -KLOG_EINVAL);
	assert_int_equal(klog_codec_deflate(KLOG_CODEC_ZSTD, 0, in, 10, &c,
	    &clen), -KLOG_EINVAL);
	assert_int_equal(klog_codec_deflate(KLOG_CODEC_ZSTD, 23, in, 10, &c,
	    &clen), -KLOG_EINVAL);
	assert_null(c);
	/* More than an entry can hold is refused before any work. */
	assert_int_equal(klog_codec_deflate(KLOG_CODEC_SNAPPY, -1, in,
	    ((size_t)1 << 30) + 1, &c, &clen), -KLOG_ETOOBIG);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_NONE, in, 10, 100, &c,
	    &clen), -KLOG_ECORRUPT);
	assert_int_equal(klog_codec_inflate(5, in, 10, 100, &c, &clen),
	    -KLOG_ECORRUPT);
	assert_null(c);
}

/* Snappy as snappy-java frames it (xerial), in blocks, and two streams
 * one after the other; a block cut or junk is corrupt. */
static void
test_inflate_snappy_xerial(void **state)
{
	static const uint8_t head[16] = { 0x82, 'S', 'N', 'A', 'P', 'P', 'Y',
	    0, 0, 0, 0, 1, 0, 0, 0, 1 };
	uint8_t in[3000], x[8000], *out;
	size_t pos = 0, clen, outlen;

	(void)state;
	fill_text(in, sizeof(in));
	memcpy(x, head, 16);
	pos = 16;
	for (size_t off = 0; off < sizeof(in); off += 1000) {
		clen = snappy_max_compressed_length(1000);
		assert_int_equal(snappy_compress((const char *)in + off, 1000,
		    (char *)x + pos + 4, &clen), SNAPPY_OK);
		x[pos] = 0;
		x[pos + 1] = (uint8_t)(clen >> 16);
		x[pos + 2] = (uint8_t)(clen >> 8);
		x[pos + 3] = (uint8_t)clen;
		pos += 4 + clen;
		if (off == 1000) {     /* a second stream's header */
			memcpy(x + pos, head, 16);
			pos += 16;
		}
	}
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_SNAPPY, x, pos,
	    sizeof(in), &out, &outlen), 0);
	assert_int_equal(outlen, sizeof(in));
	assert_memory_equal(out, in, sizeof(in));
	free(out);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_SNAPPY, x, pos,
	    sizeof(in) - 1, &out, &outlen), -KLOG_ETOOBIG);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_SNAPPY, x, pos - 1,
	    sizeof(in), &out, &outlen), -KLOG_ECORRUPT);
	assert_null(out);
	assert_int_equal(klog_codec_inflate(KLOG_CODEC_SNAPPY,
	    (const uint8_t *)"\xff\xff\xff\xff\xff", 5, 100, &out, &outlen),
	    -KLOG_ECORRUPT);
}

/* Every codec refuses data cut anywhere, and empty input. */
static void
test_inflate_cut(void **state)
{
	uint8_t in[500], *c, *out;
	size_t clen, outlen;

	(void)state;
	fill_text(in, sizeof(in));
	for (int codec = 1; codec <= KLOG_CODEC_MAX; codec++) {
		assert_int_equal(klog_codec_deflate(codec,
		    KLOG_CODEC_LEVEL_DEFAULT, in, sizeof(in), &c, &clen), 0);
		for (size_t cut = 0; cut < clen; cut++) {
			int r = klog_codec_inflate(codec, c, cut, 1 << 20, &out,
			    &outlen);

			/* Snappy's raw block has no end mark: a cut one may
			 * still decode, but never to the whole. */
			if (codec == KLOG_CODEC_SNAPPY && r == 0) {
				assert_true(outlen != sizeof(in));
				free(out);
				continue;
			}
			assert_int_equal(r, -KLOG_ECORRUPT);
			assert_null(out);
		}
		free(c);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codec_name),
		cmocka_unit_test(test_gunzip),
		cmocka_unit_test(test_inflate_zstd),
		cmocka_unit_test(test_inflate_zstd_bomb),
		cmocka_unit_test(test_deflate_roundtrip),
		cmocka_unit_test(test_deflate_lz4_frame),
		cmocka_unit_test(test_deflate_refused),
		cmocka_unit_test(test_inflate_snappy_xerial),
		cmocka_unit_test(test_inflate_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
