/* Unit tests for lib/kafka/kmsg.c: Kafka MessageSet v0/v1 in, and out of 0.7 sets. */
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

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kmsg.h"
#include "klog/kafka/kserve.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define MAXP (1u << 20)
#define MAXI (16u << 20)
#define MAX_OUT_MSGS 1024

static const klog_kingest_t opt_all = { MAXP, MAXI, 0, KLOG_NO_TIMESTAMP };

/* ---- Building Kafka sets by hand ---- */

static void
put_be64(uint8_t *p, uint64_t v)
{
	klog_put_be32(p, (uint32_t)(v >> 32));
	klog_put_be32(p + 4, (uint32_t)v);
}

/*
 * Append one Kafka message (offset, size, crc, magic, attributes,
 * [timestamp], key, value) to b; a NULL key or value is written null (-1).
 */
static void
kput(klog_buf_t *b, int64_t offset, int magic, int attrs, const void *key,
    size_t klen, const void *value, size_t vlen)
{
	size_t start, size;
	uint8_t *p;

	size = 4 + 2 + (magic == 1 ? 8 : 0) + 4 + (key ? klen : 0) + 4 +
	    (value ? vlen : 0);
	assert_int_equal(klog_buf_reserve(b, 12 + size), 0);
	start = b->len;
	p = b->data + start;
	put_be64(p, (uint64_t)offset);
	klog_put_be32(p + 8, (uint32_t)size);
	p += 16;
	*p++ = (uint8_t)magic;
	*p++ = (uint8_t)attrs;
	if (magic == 1) {
		put_be64(p, 1700000000000ull);
		p += 8;
	}
	klog_put_be32(p, key ? (uint32_t)klen : UINT32_MAX);
	p += 4;
	if (key && klen) {
		memcpy(p, key, klen);
		p += klen;
	}
	klog_put_be32(p, value ? (uint32_t)vlen : UINT32_MAX);
	p += 4;
	if (value && vlen) {
		memcpy(p, value, vlen);
		p += vlen;
	}
	assert_int_equal((size_t)(p - (b->data + start)), 12 + size);
	klog_put_be32(b->data + start + 12, klog_crc32(0, b->data + start + 16,
	    size - 4));
	b->len += 12 + size;
}

static void
kput_str(klog_buf_t *b, int64_t offset, int magic, const char *s)
{
	kput(b, offset, magic, 0, NULL, 0, s, strlen(s));
}

/* A plain inner set of n messages "m0", "m1", ... */
static void
inner_set(klog_buf_t *b, int magic, int n)
{
	char s[32];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(s, sizeof(s), "m%d", i);
		kput_str(b, i, magic, s);
	}
}

static uint8_t *
zlib_gzip(const void *in, size_t len, size_t *outlen)
{
	z_stream zs;
	uLong bound;
	uint8_t *out;

	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY), Z_OK);
	bound = deflateBound(&zs, len);
	assert_non_null(out = malloc(bound));
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)bound;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	*outlen = zs.total_out;
	deflateEnd(&zs);
	return out;
}

static uint8_t *
snappy_raw(const void *in, size_t len, size_t *outlen)
{
	uint8_t *out;

	*outlen = snappy_max_compressed_length(len);
	assert_non_null(out = malloc(*outlen));
	assert_int_equal(snappy_compress(in, len, (char *)out, outlen),
	    SNAPPY_OK);
	return out;
}

/* xerial framing, in blocks of at most block bytes of input. */
static uint8_t *
snappy_xerial(const void *in, size_t len, size_t block, size_t *outlen)
{
	static const uint8_t hdr[16] = {
		0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
	};
	const uint8_t *p = in;
	klog_buf_t b;
	size_t off, n, clen;
	uint8_t *c;

	klog_buf_init(&b);
	klog_buf_put(&b, hdr, sizeof(hdr));
	for (off = 0; off < len; off += n) {
		n = len - off < block ? len - off : block;
		c = snappy_raw(p + off, n, &clen);
		klog_buf_put_i32(&b, (int32_t)clen);
		klog_buf_put(&b, c, clen);
		free(c);
	}
	assert_false(b.failed);
	*outlen = b.len;
	return b.data;
}

static uint8_t *
lz4_frame(const void *in, size_t len, size_t *outlen)
{
	LZ4F_preferences_t prefs;
	uint8_t *out;
	size_t cap;

	memset(&prefs, 0, sizeof(prefs));
	prefs.frameInfo.blockMode = LZ4F_blockIndependent;
	cap = LZ4F_compressFrameBound(len, &prefs);
	assert_non_null(out = malloc(cap));
	*outlen = LZ4F_compressFrame(out, cap, in, len, &prefs);
	assert_false(LZ4F_isError(*outlen));
	return out;
}

/* Compress in[0..len) with Kafka codec codec (2: raw snappy, 4: xerial
 * framed snappy, 5: xerial in one block). */
static uint8_t *
kcompress(int codec, const void *in, size_t len, size_t *outlen)
{
	switch (codec) {
	case 1:
		return zlib_gzip(in, len, outlen);
	case 2:
		return snappy_raw(in, len, outlen);
	case 4:
		/* Small blocks for small sets, to have several. */
		return snappy_xerial(in, len, len < 4096 ? 40 : 32768,
		    outlen);
	case 5:
		return snappy_xerial(in, len, len, outlen);
	default:
		return lz4_frame(in, len, outlen);
	}
}

/* A wrapper of inner[0..len) appended to b. */
static void
kput_wrapper(klog_buf_t *b, int magic, int codec, const klog_buf_t *inner)
{
	uint8_t *c;
	size_t clen;

	c = kcompress(codec, inner->data, inner->len, &clen);
	kput(b, 0, magic, codec >= 4 ? 2 : codec, NULL, 0, c, clen);
	free(c);
}

/* ---- Reading what came out ---- */

/* The records of the uncompressed magic-2 entry e, as entries_str()
 * shows them, at vals + at; the new end. */
static size_t
records_str(const uint8_t *e, char *vals, size_t at, size_t cap)
{
	size_t body = klog_be32(e) - KLOG_MAGIC2_HEADER, pos = 0, len;
	const uint8_t *rec = e + 10 + KLOG_BATCH_BODY_HEADER;
	klog_batch_t h;
	klog_record_t r;

	assert_int_equal(klog_crc32c(0, e + 10, body), klog_be32(e + 6));
	klog_batch_read(e + 10, body, &h);
	assert_int_equal(h.attributes & 7, 0);
	assert_int_equal(h.last_offset_delta, klog_be32(e) + 3);
	len = body - KLOG_BATCH_BODY_HEADER;
	at += (size_t)snprintf(vals + at, cap - at, "[");
	for (int32_t i = 0; pos < len; i++) {
		assert_int_equal(klog_record_read(rec + pos, len - pos, &r), 0);
		assert_int_equal(r.offset_delta, i);
		at += (size_t)snprintf(vals + at, cap - at, "%s", i ? "," : "");
		if (r.key != NULL)
			at += (size_t)snprintf(vals + at, cap - at, "k=%.*s/",
			    (int)r.key_len, r.key);
		at += (size_t)snprintf(vals + at, cap - at, "%.*s",
		    r.value_len < 0 ? 4 : (int)r.value_len,
		    r.value_len < 0 ? "null" : (const char *)r.value);
		if (h.first_timestamp != KLOG_NO_TIMESTAMP)
			at += (size_t)snprintf(vals + at, cap - at, "@%lld",
			    (long long)(h.first_timestamp + r.timestamp_delta));
		pos += r.size;
		assert_true(at < cap);
	}
	assert_int_equal(pos, len);
	return at + (size_t)snprintf(vals + at, cap - at, "]");
}

/*
 * The set out[from..len) into vals, its messages joined by ",": a magic-0
 * entry's payload; a magic-2 entry's records in brackets, each its value
 * ("null" for a null one), after "k=KEY/" if it has a key, before "@TS"
 * if it has a timestamp.
 */
static void
entries_str(const klog_buf_t *out, size_t from, char *vals, size_t cap)
{
	size_t at = 0, pos = from;

	vals[0] = '\0';
	while (pos < out->len) {
		const uint8_t *e = out->data + pos;
		uint32_t length = klog_be32(e);

		assert_true(out->len - pos >= 4 + (size_t)length);
		if (pos > from)
			at += (size_t)snprintf(vals + at, cap - at, ",");
		if (e[4] == KLOG_MAGIC2) {
			at = records_str(e, vals, at, cap);
		} else {
			assert_int_equal(e[4], 0);
			assert_int_equal(klog_crc32(0, e + 9, length - 5),
			    klog_be32(e + 5));
			at += (size_t)snprintf(vals + at, cap - at, "%.*s",
			    (int)length - 5, e + 9);
		}
		assert_true(at < cap);
		pos += 4 + length;
	}
}

typedef struct kout {
	int n;
	int64_t off[MAX_OUT_MSGS];
	int64_t ts[MAX_OUT_MSGS];   /* magic 1's; -1 for magic 0 */
	uint8_t magic[MAX_OUT_MSGS], attrs[MAX_OUT_MSGS];
	char vals[8192];
	char keys[8192];            /* "-" for a null one */
	int bad_crcs;           /* messages whose CRC does not match */
	int first_bad;          /* the first of them, or -1 */
} kout_t;

/* Check the Kafka set p[0..len) serve() wrote, message by message, as a
 * client does (CRCs counted, not asserted). */
static void
kparse_any(const uint8_t *p, size_t len, kout_t *o)
{
	size_t pos = 0, at = 0, kat = 0, size, h;
	const uint8_t *m;
	uint32_t klen, vlen;

	memset(o, 0, sizeof(*o));
	o->first_bad = -1;
	while (pos < len) {
		assert_true(len - pos >= 26);
		m = p + pos;
		size = klog_be32(m + 8);
		assert_true(size >= 14 && size <= len - pos - 12);
		if (klog_be32(m + 12) != klog_crc32(0, m + 16, size - 4) &&
		    o->bad_crcs++ == 0)
			o->first_bad = o->n;
		assert_true(m[16] <= 1);
		assert_true(o->n < MAX_OUT_MSGS);
		o->magic[o->n] = m[16];
		o->attrs[o->n] = m[17];
		h = m[16] == 1 ? 8 : 0;
		o->ts[o->n] = h ? (int64_t)((uint64_t)klog_be32(m + 18) << 32 |
		    klog_be32(m + 22)) : -1;
		klen = klog_be32(m + 18 + h);
		kat += (size_t)snprintf(o->keys + kat, sizeof(o->keys) - kat,
		    "%s%.*s", o->n ? "," : "", klen == UINT32_MAX ? 1 :
		    (int)klen, klen == UINT32_MAX ? "-" :
		    (const char *)m + 22 + h);
		if (klen == UINT32_MAX)
			klen = 0;
		vlen = klog_be32(m + 22 + h + klen);
		assert_int_equal(vlen == UINT32_MAX ? 0 : vlen,
		    size - 14 - h - klen);
		o->off[o->n++] = (int64_t)((uint64_t)klog_be32(m) << 32 |
		    klog_be32(m + 4));
		at += (size_t)snprintf(o->vals + at, sizeof(o->vals) - at,
		    "%s%.*s", o->n > 1 ? "," : "", vlen == UINT32_MAX ? 4 :
		    (int)vlen, vlen == UINT32_MAX ? "null" :
		    (const char *)m + 26 + h + klen);
		assert_true(at < sizeof(o->vals) && kat < sizeof(o->keys));
		pos += 12 + size;
	}
}

/* The same, every CRC matching. */
static void
kparse(const uint8_t *p, size_t len, kout_t *o)
{
	kparse_any(p, len, o);
	assert_int_equal(o->bad_crcs, 0);
}

static void
put_m0(klog_buf_t *b, const char *s)
{
	size_t n = strlen(s);

	assert_int_equal(klog_buf_reserve(b, klog_entry_size(n)), 0);
	b->len += klog_entry_encode(b->data + b->len, s, n);
}

/* A 0.7 magic-1 entry with attributes attrs around payload. */
static void
put_m1(klog_buf_t *b, int attrs, const void *payload, size_t len)
{
	klog_buf_put_i32(b, (int32_t)(len + KLOG_MAGIC1_HEADER));
	klog_buf_put_i8(b, 1);
	klog_buf_put_i8(b, (int8_t)attrs);
	klog_buf_put_i32(b, (int32_t)klog_crc32(0, payload, len));
	klog_buf_put(b, payload, len);
	assert_false(b->failed);
}

/* A 0.7 set of n magic-0 entries "e0", "e1", ... */
static void
plain07(klog_buf_t *b, int n)
{
	char s[32];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(s, sizeof(s), "e%d", i);
		put_m0(b, s);
	}
}

/* ---- Ingest ---- */

static void
ingest_ok(const klog_buf_t *in, const char *want, uint32_t n, int codec)
{
	klog_kmsg_in_info_t info;
	klog_buf_t out;
	char vals[8192];

	klog_buf_init(&out);
	assert_int_equal(klog_kmsg_ingest(in->data, in->len, &opt_all, &out,
	    &info), 0);
	entries_str(&out, 0, vals, sizeof(vals));
	assert_string_equal(vals, want);
	assert_int_equal(info.messages, n);
	assert_int_equal(info.codec, codec);
	if (n > 0)
		assert_int_equal(info.first_delta, out.data[4] == KLOG_MAGIC2 &&
		    klog_be32(out.data + 10 + KLOG_BATCH_COUNT_AT) > 1 ?
		    0 : 3 + klog_be32(out.data));
	klog_buf_free(&out);
}

static int
ingest_rc(const klog_buf_t *in, size_t max_payload, size_t max_inflate)
{
	klog_kmsg_in_info_t info;
	klog_buf_t out;
	int r;

	klog_buf_init(&out);
	klog_kingest_t o = { max_payload, max_inflate, 0, KLOG_NO_TIMESTAMP };

	r = klog_kmsg_ingest(in->data, in->len, &o, &out, &info);
	if (r < 0)
		assert_int_equal(out.len, 0);
	klog_buf_free(&out);
	return r;
}

static void
test_ingest_v0(void **state)
{
	klog_buf_t in;

	(void)state;
	klog_buf_init(&in);
	kput_str(&in, 0, 0, "hello");
	kput(&in, 1, 0, 0, "k", 1, "world", 5);
	ingest_ok(&in, "hello,[k=k/world]", 2, 0);
	klog_buf_free(&in);
}

static void
test_ingest_v1(void **state)
{
	klog_buf_t in;

	(void)state;
	klog_buf_init(&in);
	kput(&in, 0, 1, 0x08, "key", 3, "one", 3); /* log-append time bit */
	kput_str(&in, 1, 1, "two");
	kput_str(&in, 2, 0, "three");
	/* v1's timestamps are kept, and its LogAppendTime bit ignored (a
	 * producer does not choose). */
	ingest_ok(&in, "[k=key/one@1700000000000,two@1700000000000],three", 3,
	    0);
	klog_buf_free(&in);
}

static void
test_ingest_null_key_value(void **state)
{
	klog_kmsg_in_info_t info;
	klog_buf_t in, out;

	(void)state;
	klog_buf_init(&in);
	klog_buf_init(&out);
	kput(&in, 0, 0, 0, NULL, 0, NULL, 0);
	kput(&in, 0, 1, 0, "", 0, "", 0);
	kput(&in, 0, 1, 0, "k", 1, NULL, 0);
	assert_int_equal(klog_kmsg_ingest(in.data, in.len, &opt_all, &out,
	    &info), 0);
	char vals[256];

	assert_int_equal(info.messages, 3);
	assert_int_equal(info.first_delta, 8);
	/* An empty key is a key; a null value stays null in a record. */
	entries_str(&out, 0, vals, sizeof(vals));
	assert_string_equal(vals,
	    ",[k=/@1700000000000,k=k/null@1700000000000]");
	klog_buf_free(&in);
	klog_buf_free(&out);
}

static void
test_ingest_empty(void **state)
{
	klog_kmsg_in_info_t info;
	klog_buf_t out;

	(void)state;
	klog_buf_init(&out);
	assert_int_equal(klog_kmsg_ingest((const uint8_t *)"", 0, &opt_all,
	    &out, &info), 0);
	assert_int_equal(info.messages, 0);
	assert_int_equal(out.len, 0);
	klog_buf_free(&out);
}

/* Each codec, in a magic-0 and a magic-1 wrapper, between plain ones. */
static void
wrapper_case(int codec)
{
	klog_buf_t in, inner;
	int magic;

	for (magic = 0; magic <= 1; magic++) {
		klog_buf_init(&in);
		klog_buf_init(&inner);
		inner_set(&inner, magic, 5);
		kput_str(&in, 0, magic, "before");
		kput_wrapper(&in, magic, codec, &inner);
		kput_str(&in, 0, magic, "after");
		/* Each wrapper's set on its own: an entry of its own. */
		ingest_ok(&in, magic == 0 ? "before,m0,m1,m2,m3,m4,after" :
		    "[before@1700000000000],[m0@1700000000000,m1@1700000000000,"
		    "m2@1700000000000,m3@1700000000000,m4@1700000000000],"
		    "[after@1700000000000]", 7, codec == 4 ? 2 : codec);
		klog_buf_free(&in);
		klog_buf_free(&inner);
	}
}

static void
test_ingest_gzip(void **state)
{
	(void)state;
	wrapper_case(1);
}

static void
test_ingest_snappy_raw(void **state)
{
	(void)state;
	wrapper_case(2);
}

static void
test_ingest_snappy_xerial(void **state)
{
	klog_buf_t in, inner, two;
	uint8_t *a, *b;
	size_t alen, blen;

	(void)state;
	wrapper_case(4); /* 40-byte blocks: several per wrapper */
	/* Two xerial streams one after the other, as snappy-java reads. */
	klog_buf_init(&in);
	klog_buf_init(&inner);
	klog_buf_init(&two);
	inner_set(&inner, 0, 4);
	a = snappy_xerial(inner.data, 60, 1000, &alen);
	b = snappy_xerial(inner.data + 60, inner.len - 60, 1000, &blen);
	klog_buf_put(&two, a, alen);
	klog_buf_put(&two, b, blen);
	kput(&in, 0, 0, 2, NULL, 0, two.data, two.len);
	ingest_ok(&in, "m0,m1,m2,m3", 4, 2);
	free(a);
	free(b);
	klog_buf_free(&in);
	klog_buf_free(&inner);
	klog_buf_free(&two);
}

static void
test_ingest_lz4(void **state)
{
	(void)state;
	wrapper_case(3);
}

/* KAFKA-3160: a magic-0 lz4 wrapper whose header checksum is wrong. */
static void
test_ingest_lz4_bad_header_checksum(void **state)
{
	klog_buf_t in, inner;
	uint8_t *c;
	size_t clen;

	(void)state;
	klog_buf_init(&in);
	klog_buf_init(&inner);
	inner_set(&inner, 0, 3);
	c = lz4_frame(inner.data, inner.len, &clen);
	c[6] ^= 0x5a; /* FLG, BD, then the checksum byte */
	kput(&in, 0, 0, 3, NULL, 0, c, clen);
	ingest_ok(&in, "m0,m1,m2", 3, 3);
	/* A frame that is bad elsewhere stays corrupt. */
	klog_buf_reset(&in);
	c[clen - 6] ^= 0xff;
	kput(&in, 0, 0, 3, NULL, 0, c, clen);
	assert_int_equal(ingest_rc(&in, MAXP, MAXI), -KLOG_ECORRUPT);
	free(c);
	klog_buf_free(&in);
	klog_buf_free(&inner);
}

static void
test_ingest_bad_crc(void **state)
{
	klog_buf_t in;

	(void)state;
	klog_buf_init(&in);
	kput_str(&in, 0, 0, "good");
	kput_str(&in, 1, 1, "bad");
	in.data[in.len - 1] ^= 1;
	assert_int_equal(ingest_rc(&in, MAXP, MAXI), -KLOG_ECORRUPT);
	klog_buf_reset(&in);
	kput_str(&in, 1, 1, "bad");
	in.data[12] ^= 0x80;  /* the CRC itself */
	assert_int_equal(ingest_rc(&in, MAXP, MAXI), -KLOG_ECORRUPT);
	klog_buf_free(&in);
}

static void
test_ingest_truncated(void **state)
{
	klog_buf_t in;
	size_t cut, first;

	(void)state;
	klog_buf_init(&in);
	kput_str(&in, 0, 0, "first");
	first = in.len;
	kput(&in, 1, 1, 0, "key", 3, "second", 6);
	for (cut = 1; cut < in.len; cut++) {
		klog_buf_t t = { .data = in.data, .len = cut };

		assert_int_equal(ingest_rc(&t, MAXP, MAXI),
		    cut == first ? 0 : -KLOG_ECORRUPT);
	}
	klog_buf_free(&in);
}

static void
test_ingest_bad_fields(void **state)
{
	klog_buf_t in;

	(void)state;
	klog_buf_init(&in);
	/* A key longer than the message. */
	kput(&in, 0, 0, 0, "key", 3, "v", 1);
	klog_put_be32(in.data + 18, 100);
	klog_put_be32(in.data + 12, klog_crc32(0, in.data + 16, in.len - 16));
	assert_int_equal(ingest_rc(&in, MAXP, MAXI), -KLOG_ECORRUPT);
	/* Codec 5 to 7. */
	klog_buf_reset(&in);
	kput(&in, 0, 0, 5, NULL, 0, "v", 1);
	assert_int_equal(ingest_rc(&in, MAXP, MAXI), -KLOG_ECORRUPT);
	/* Magic 3. */
	klog_buf_reset(&in);
	kput(&in, 0, 0, 0, NULL, 0, "v", 1);
	in.data[16] = 3;
	klog_put_be32(in.data + 12, klog_crc32(0, in.data + 16, in.len - 16));
	assert_int_equal(ingest_rc(&in, MAXP, MAXI), -KLOG_ECORRUPT);
	/* A compressed wrapper with a null value, and one that is junk. */
	klog_buf_reset(&in);
	kput(&in, 0, 1, 1, NULL, 0, NULL, 0);
	assert_int_equal(ingest_rc(&in, MAXP, MAXI), -KLOG_ECORRUPT);
	klog_buf_reset(&in);
	kput(&in, 0, 1, 2, NULL, 0, "junkjunk", 8);
	assert_int_equal(ingest_rc(&in, MAXP, MAXI), -KLOG_ECORRUPT);
	klog_buf_free(&in);
}

/* A compressed value cut short (its message's CRC right): corrupt. */
static void
test_ingest_cut_wrapper(void **state)
{
	static const int codecs[] = { 1, 2, 5, 3 };
	klog_buf_t in, inner;
	uint8_t *c;
	size_t clen, i, cut;

	(void)state;
	klog_buf_init(&inner);
	inner_set(&inner, 0, 20);
	for (i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++) {
		c = kcompress(codecs[i], inner.data, inner.len, &clen);
		for (cut = 0; cut < clen; cut++) {
			klog_buf_init(&in);
			kput(&in, 0, 1, codecs[i] == 5 ? 2 : codecs[i], NULL, 0,
			    c, cut);
			/* xerial's header alone is an empty stream. */
			assert_int_equal(ingest_rc(&in, MAXP, MAXI),
			    codecs[i] == 5 && cut == 16 ? 0 : -KLOG_ECORRUPT);
			klog_buf_free(&in);
		}
		/* And bytes after the end of an lz4 frame. */
		if (codecs[i] == 3) {
			klog_buf_init(&in);
			assert_non_null(c = realloc(c, clen + 1));
			c[clen] = 0;
			kput(&in, 0, 1, 3, NULL, 0, c, clen + 1);
			assert_int_equal(ingest_rc(&in, MAXP, MAXI),
			    -KLOG_ECORRUPT);
			klog_buf_free(&in);
		}
		free(c);
	}
	klog_buf_free(&inner);
}

static void
test_ingest_magic2(void **state)
{
	klog_buf_t in;

	(void)state;
	klog_buf_init(&in);
	/* baseOffset:8 batchLength:4 leaderEpoch:4 magic:1 crc:4 ... */
	klog_buf_put_i64(&in, 0);
	klog_buf_put_i32(&in, 49);
	klog_buf_put_i32(&in, 0);
	klog_buf_put_i8(&in, 2);
	klog_buf_put(&in, "\0\0\0\0", 4);
	assert_int_equal(ingest_rc(&in, MAXP, MAXI), -KLOG_EUNSUPPORTED);
	klog_buf_free(&in);
}

static void
test_ingest_nested_wrapper(void **state)
{
	klog_buf_t in, mid, inner;

	(void)state;
	klog_buf_init(&in);
	klog_buf_init(&mid);
	klog_buf_init(&inner);
	inner_set(&inner, 1, 2);
	kput_wrapper(&mid, 1, 1, &inner);
	kput_wrapper(&in, 1, 1, &mid);
	assert_int_equal(ingest_rc(&in, MAXP, MAXI), -KLOG_ECORRUPT);
	/* Nor a truncated or magic-2 set inside a wrapper. */
	klog_buf_reset(&in);
	inner.len--;
	kput_wrapper(&in, 1, 1, &inner);
	assert_int_equal(ingest_rc(&in, MAXP, MAXI), -KLOG_ECORRUPT);
	klog_buf_free(&in);
	klog_buf_free(&mid);
	klog_buf_free(&inner);
}

static void
test_ingest_too_big(void **state)
{
	klog_buf_t in, inner;
	char big[300];

	(void)state;
	memset(big, 'x', sizeof(big));
	klog_buf_init(&in);
	klog_buf_init(&inner);
	kput(&in, 0, 0, 0, NULL, 0, big, 200);
	assert_int_equal(ingest_rc(&in, 200, MAXI), 0);
	assert_int_equal(ingest_rc(&in, 199, MAXI), -KLOG_ETOOBIG);
	/* Inside a wrapper too. */
	klog_buf_reset(&in);
	kput(&inner, 0, 0, 0, NULL, 0, big, sizeof(big));
	kput_wrapper(&in, 1, 1, &inner);
	assert_int_equal(ingest_rc(&in, 299, MAXI), -KLOG_ETOOBIG);
	assert_int_equal(ingest_rc(&in, 300, MAXI), 0);
	klog_buf_free(&in);
	klog_buf_free(&inner);
}

/* A wrapper that inflates to 1 MiB (zeros in one message), each codec. */
static void
test_ingest_inflate_bomb(void **state)
{
	static const int codecs[] = { 1, 2, 4, 3 };
	klog_buf_t in, inner;
	uint8_t *zeros;
	size_t i;

	(void)state;
	assert_non_null(zeros = calloc(1, 1 << 20));
	klog_buf_init(&inner);
	kput(&inner, 0, 0, 0, NULL, 0, zeros, (1 << 20) - 26);
	assert_int_equal(inner.len, 1 << 20);
	for (i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++) {
		klog_buf_init(&in);
		kput_wrapper(&in, 1, codecs[i], &inner);
		assert_true(in.len < inner.len / 8);
		assert_int_equal(ingest_rc(&in, MAXI, (1 << 20) - 1),
		    -KLOG_ETOOBIG);
		assert_int_equal(ingest_rc(&in, MAXI, 64 << 10),
		    -KLOG_ETOOBIG);
		assert_int_equal(ingest_rc(&in, MAXI, 1 << 20), 0);
		klog_buf_free(&in);
	}
	free(zeros);
	klog_buf_free(&inner);
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

/* zstd needs a record batch (Kafka's rule): a magic 0 or 1 zstd wrapper
 * is refused, as such, whatever it holds. */
static void
test_ingest_zstd_refused(void **state)
{
	klog_kmsg_in_info_t info;
	klog_buf_t in, inner, out;
	uint8_t *c;
	size_t clen;

	(void)state;
	klog_buf_init(&inner);
	klog_buf_init(&out);
	klog_buf_put(&out, "kept", 4);
	inner_set(&inner, 0, 3);
	c = zstd_frame(inner.data, inner.len, 0, &clen);
	for (int magic = 0; magic <= 1; magic++) {
		klog_buf_init(&in);
		kput_str(&in, 0, magic, "before");
		kput(&in, 1, magic, 4, NULL, 0, c, clen);
		assert_int_equal(klog_kmsg_ingest(in.data, in.len, &opt_all,
		    &out, &info), -KLOG_EUNSUPPORTED);
		assert_int_equal(info.refused_codec, 4);
		assert_int_equal(out.len, 4);
		klog_buf_free(&in);
	}
	free(c);
	klog_buf_free(&inner);
	klog_buf_free(&out);
}

/* What out held is kept, byte for byte, when a later message fails. */
static void
test_ingest_restores_out(void **state)
{
	klog_kmsg_in_info_t info;
	klog_buf_t in, inner, out;

	(void)state;
	klog_buf_init(&in);
	klog_buf_init(&inner);
	klog_buf_init(&out);
	klog_buf_put(&out, "prefix", 6);
	kput_str(&in, 0, 0, "one");
	inner_set(&inner, 0, 3);
	kput_wrapper(&in, 1, 1, &inner);
	kput_str(&in, 0, 0, "bad");
	in.data[in.len - 1] ^= 1;
	assert_int_equal(klog_kmsg_ingest(in.data, in.len, &opt_all, &out,
	    &info), -KLOG_ECORRUPT);
	assert_int_equal(out.len, 6);
	assert_memory_equal(out.data, "prefix", 6);
	assert_false(out.failed);
	/* And appended after it when all is well. */
	in.data[in.len - 1] ^= 1;
	assert_int_equal(klog_kmsg_ingest(in.data, in.len, &opt_all, &out,
	    &info), 0);
	assert_memory_equal(out.data, "prefix", 6);
	assert_int_equal(info.messages, 5);
	assert_int_equal(info.first_delta, 11);
	assert_int_equal(out.len, 6 + 12 + 3 * 11 + 12);
	klog_buf_free(&in);
	klog_buf_free(&inner);
	klog_buf_free(&out);
}

/*
 * Keyed messages of one set are records of one magic-2 entry, in order;
 * a message with nothing but its value ends it and stays magic 0; a
 * record that would take the entry's body past max_message starts the
 * next one; one that alone would is refused.
 */
static void
test_ingest_keyed_groups(void **state)
{
	klog_kingest_t o = opt_all;
	klog_kmsg_in_info_t info;
	klog_buf_t in, out;
	char vals[1024];
	size_t one;

	(void)state;
	klog_buf_init(&in);
	klog_buf_init(&out);
	kput(&in, 0, 0, 0, "a", 1, "v1", 2);
	kput(&in, 0, 0, 0, "b", 1, "v2", 2);
	kput(&in, 0, 0, 0, NULL, 0, "plain", 5);
	kput(&in, 0, 0, 0, "c", 1, "v3", 2);
	kput(&in, 0, 0, 0, "d", 1, NULL, 0);
	assert_int_equal(klog_kmsg_ingest(in.data, in.len, &o, &out, &info),
	    0);
	assert_int_equal(info.messages, 5);
	assert_int_equal(info.first_delta, 0);
	entries_str(&out, 0, vals, sizeof(vals));
	assert_string_equal(vals, "[k=a/v1,k=b/v2],plain,[k=c/v3,k=d/null]");
	/* A body of 40 + one record (13 bytes here: length 1, attributes 1,
	 * deltas 1 + 1, key 1 + 1, value 1 + 5, headers 1). */
	klog_buf_reset(&in);
	for (int i = 0; i < 5; i++)
		kput(&in, 0, 0, 0, "k", 1, "12345", 5);
	one = 40 + 13;
	o.max_message = one + 13;     /* two records an entry */
	klog_buf_reset(&out);
	assert_int_equal(klog_kmsg_ingest(in.data, in.len, &o, &out, &info),
	    0);
	entries_str(&out, 0, vals, sizeof(vals));
	assert_string_equal(vals, "[k=k/12345,k=k/12345],"
	    "[k=k/12345,k=k/12345],[k=k/12345]");
	o.max_message = one;          /* one an entry */
	klog_buf_reset(&out);
	assert_int_equal(klog_kmsg_ingest(in.data, in.len, &o, &out, &info),
	    0);
	entries_str(&out, 0, vals, sizeof(vals));
	assert_string_equal(vals, "[k=k/12345],[k=k/12345],[k=k/12345],"
	    "[k=k/12345],[k=k/12345]");
	o.max_message = one - 1;      /* the value fits, its entry not */
	klog_buf_reset(&out);
	assert_int_equal(klog_kmsg_ingest(in.data, in.len, &o, &out, &info),
	    -KLOG_ETOOBIG);
	assert_int_equal(out.len, 0);
	klog_buf_free(&in);
	klog_buf_free(&out);
}

/* LogAppendTime: each magic-2 entry the broker's clock, its records'
 * own times kept beneath; magic-0 entries have no time to stamp. */
static void
test_ingest_log_append_time(void **state)
{
	klog_kingest_t o = opt_all;
	klog_kmsg_in_info_t info;
	klog_buf_t in, out;
	klog_batch_t h;
	size_t e;

	(void)state;
	klog_buf_init(&in);
	klog_buf_init(&out);
	kput_str(&in, 0, 0, "plain");
	kput_str(&in, 0, 1, "timed");
	o.append_time = 1765100000000LL;
	assert_int_equal(klog_kmsg_ingest(in.data, in.len, &o, &out, &info),
	    0);
	assert_int_equal(out.data[4], 0);
	e = 4 + klog_be32(out.data);
	assert_int_equal(info.first_delta, e - 1);
	assert_int_equal(out.data[e + 4], KLOG_MAGIC2);
	assert_int_equal(klog_batch_read(out.data + e + 10,
	    klog_be32(out.data + e) - 6, &h), 0);
	assert_int_equal(h.attributes, KLOG_BATCH_LOG_APPEND_TIME);
	assert_int_equal(out.data[e + 5], KLOG_BATCH_LOG_APPEND_TIME);
	assert_int_equal(h.max_timestamp, o.append_time);
	assert_int_equal(h.first_timestamp, 1700000000000LL);
	assert_int_equal(h.producer_id, KLOG_NO_PRODUCER);
	assert_int_equal(klog_be32(out.data + e + 6), klog_crc32c(0,
	    out.data + e + 10, klog_be32(out.data + e) - 6));
	klog_buf_free(&in);
	klog_buf_free(&out);
}

/* ---- Serve ---- */

/* Serve set after 3 bytes already in out, and parse what came after them
 * with parse. */
static void
serve_with(const klog_buf_t *set, int64_t base, int64_t min_offset,
    size_t max_out, kout_t *o, klog_kmsg_out_info_t *info,
    void (*parse)(const uint8_t *, size_t, kout_t *))
{
	klog_buf_t out;

	klog_buf_init(&out);
	klog_buf_put(&out, "pre", 3);
	assert_int_equal(klog_kmsg_serve(set->data, set->len,
	    &(klog_kmsg_serve_opt_t){ .base = base, .min_offset = min_offset,
	    .magic = 0, .max_out = max_out, .max_inflate = MAXI },
	    &out, info), 0);
	assert_memory_equal(out.data, "pre", 3);
	parse(out.data + 3, out.len - 3, o);
	assert_int_equal((uint32_t)o->n, info->messages);
	klog_buf_free(&out);
}

static void
serve(const klog_buf_t *set, int64_t base, int64_t min_offset,
    size_t max_out, kout_t *o, klog_kmsg_out_info_t *info)
{
	serve_with(set, base, min_offset, max_out, o, info, kparse);
}

static void
test_serve_plain(void **state)
{
	klog_kmsg_out_info_t info;
	klog_buf_t set;
	kout_t o;

	(void)state;
	klog_buf_init(&set);
	put_m0(&set, "a");           /* 1000, 10 bytes */
	put_m0(&set, "bcd");         /* 1010, 12 bytes */
	put_m1(&set, 0, "ef", 2);    /* 1022, 12 bytes, magic 1 plain */
	put_m0(&set, "");            /* 1034, 9 bytes */
	serve(&set, 1000, 0, SIZE_MAX, &o, &info);
	assert_int_equal(o.n, 4);
	assert_string_equal(o.vals, "a,bcd,ef,");
	assert_int_equal(o.off[0], 1009);
	assert_int_equal(o.off[1], 1021);
	assert_int_equal(o.off[2], 1033);
	assert_int_equal(o.off[3], 1042);
	assert_int_equal(o.off[3], klog_kmsg_offset(1034, 9));
	assert_int_equal(info.consumed, set.len);
	assert_int_equal(info.bad_offset, -1);
	assert_int_equal(info.stop, KLOG_KSERVE_SERVED);
	assert_int_equal(info.need, 0);
	/* Nothing in, nothing out. */
	set.len = 0;
	serve(&set, 1000, 0, SIZE_MAX, &o, &info);
	assert_int_equal(o.n, 0);
	assert_int_equal(info.consumed, 0);
	klog_buf_free(&set);
}

/* A 0.7 wrapper at W of length N: W + j, the last W + N + 3. */
static void
test_serve_gzip_wrapper(void **state)
{
	klog_kmsg_out_info_t info;
	klog_buf_t set, inner;
	uint8_t *w;
	size_t wlen;
	int64_t W, N;
	kout_t o;

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&inner);
	plain07(&inner, 4);
	put_m0(&set, "x");                       /* 0..9 */
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_put(&set, w, wlen);             /* at 10 */
	put_m0(&set, "y");
	W = 500 + 10;
	N = klog_be32(w);
	serve(&set, 500, 0, SIZE_MAX, &o, &info);
	assert_int_equal(o.n, 6);
	assert_string_equal(o.vals, "x,e0,e1,e2,e3,y");
	assert_int_equal(o.off[0], 509);
	assert_int_equal(o.off[1], W);
	assert_int_equal(o.off[2], W + 1);
	assert_int_equal(o.off[3], W + 2);
	assert_int_equal(o.off[4], W + N + 3);
	assert_int_equal(o.off[5], W + N + 4 + 10 - 1);
	assert_int_equal(info.consumed, set.len);
	free(w);
	klog_buf_free(&set);
	klog_buf_free(&inner);
}

/* More inner messages than the wrapper has bytes: offsets saturate. */
static void
test_serve_wrapper_saturates(void **state)
{
	klog_kmsg_out_info_t info;
	klog_buf_t set, inner;
	uint8_t *w;
	size_t wlen;
	int64_t N;
	kout_t o;
	int i;

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&inner);
	for (i = 0; i < 600; i++)
		put_m0(&inner, "");
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 9, &w, &wlen),
	    0);
	klog_buf_put(&set, w, wlen);
	N = klog_be32(w);
	assert_true(N + 3 < 600);
	serve(&set, 0, 0, SIZE_MAX, &o, &info);
	assert_int_equal(o.n, 600);
	for (i = 0; i < 599; i++)
		assert_int_equal(o.off[i], i < N + 2 ? i : N + 2);
	assert_int_equal(o.off[599], N + 3);
	/* From inside: the first at or past min_offset on. */
	serve(&set, 0, N + 2, SIZE_MAX, &o, &info);
	assert_int_equal(o.n, 600 - (N + 2));
	assert_int_equal(o.off[0], N + 2);
	serve(&set, 0, N + 3, SIZE_MAX, &o, &info);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.off[0], N + 3);
	serve(&set, 0, N + 4, SIZE_MAX, &o, &info);
	assert_int_equal(o.n, 0);
	assert_int_equal(info.consumed, set.len);
	free(w);
	klog_buf_free(&set);
	klog_buf_free(&inner);
}

/* A 0.7 snappy wrapper: snappy-java's framing (and raw, read as it does). */
static void
test_serve_snappy_wrapper(void **state)
{
	klog_kmsg_out_info_t info;
	klog_buf_t set, inner;
	uint8_t *c;
	size_t clen;
	kout_t o;
	int raw;

	(void)state;
	for (raw = 0; raw <= 1; raw++) {
		klog_buf_init(&set);
		klog_buf_init(&inner);
		plain07(&inner, 3);
		c = raw ? snappy_raw(inner.data, inner.len, &clen) :
		    snappy_xerial(inner.data, inner.len, 10, &clen);
		put_m1(&set, KLOG_CODEC_SNAPPY, c, clen);
		serve(&set, 0, 0, SIZE_MAX, &o, &info);
		assert_string_equal(o.vals, "e0,e1,e2");
		assert_int_equal(o.off[2], klog_kmsg_offset(0, (uint32_t)
		    set.len));
		assert_int_equal(info.consumed, set.len);
		free(c);
		klog_buf_free(&set);
		klog_buf_free(&inner);
	}
}

static void
test_serve_min_offset(void **state)
{
	klog_kmsg_out_info_t info;
	klog_buf_t set, inner;
	uint8_t *w;
	size_t wlen;
	kout_t o;

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&inner);
	put_m0(&set, "a");                       /* 0: offset 9 */
	plain07(&inner, 3);
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_put(&set, w, wlen);             /* 10: 10, 11, 10+N+3 */
	serve(&set, 0, 9, SIZE_MAX, &o, &info);
	assert_string_equal(o.vals, "a,e0,e1,e2");
	serve(&set, 0, 10, SIZE_MAX, &o, &info);
	assert_string_equal(o.vals, "e0,e1,e2");
	serve(&set, 0, 11, SIZE_MAX, &o, &info);
	assert_string_equal(o.vals, "e1,e2");
	assert_int_equal(o.off[0], 11);
	serve(&set, 0, 12, SIZE_MAX, &o, &info);
	assert_string_equal(o.vals, "e2");
	serve(&set, 0, (int64_t)set.len, SIZE_MAX, &o, &info);
	assert_int_equal(o.n, 0);
	/* Entries skipped whole still count as consumed. */
	assert_int_equal(info.consumed, set.len);
	free(w);
	klog_buf_free(&set);
	klog_buf_free(&inner);
}

static void
test_serve_max_out(void **state)
{
	klog_kmsg_out_info_t info;
	klog_buf_t set, inner;
	uint8_t *w;
	size_t wlen, one = 26 + 2;
	kout_t o;

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&inner);
	plain07(&set, 5);                        /* 11 bytes each */
	serve(&set, 0, 0, 3 * one, &o, &info);
	assert_string_equal(o.vals, "e0,e1,e2");
	assert_int_equal(info.consumed, 33);
	serve(&set, 0, 0, 3 * one - 1, &o, &info);
	assert_string_equal(o.vals, "e0,e1");
	assert_int_equal(info.consumed, 22);
	/* The first entry whatever its size. */
	serve(&set, 0, 0, 1, &o, &info);
	assert_string_equal(o.vals, "e0");
	assert_int_equal(info.consumed, 11);
	/* The first one written, after skipped ones. */
	serve(&set, 0, 21, 1, &o, &info);
	assert_string_equal(o.vals, "e1");
	assert_int_equal(info.consumed, 22);
	/* A wrapper is whole or not at all. */
	plain07(&inner, 3);
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_put(&set, w, wlen);
	serve(&set, 0, 0, 7 * one, &o, &info);
	assert_string_equal(o.vals, "e0,e1,e2,e3,e4");
	assert_int_equal(info.consumed, 55);
	serve(&set, 0, 0, 8 * one, &o, &info);
	assert_string_equal(o.vals, "e0,e1,e2,e3,e4,e0,e1,e2");
	assert_int_equal(info.consumed, set.len);
	serve(&set, 0, 55, 1, &o, &info);
	assert_string_equal(o.vals, "e0,e1,e2");
	free(w);
	klog_buf_free(&set);
	klog_buf_free(&inner);
}

static void
test_serve_cut(void **state)
{
	klog_kmsg_out_info_t info;
	klog_buf_t set, t;
	kout_t o;
	size_t cut;

	(void)state;
	klog_buf_init(&set);
	put_m0(&set, "first entry");             /* 20 bytes */
	put_m0(&set, "second");                  /* 15 bytes */
	for (cut = 1; cut < 20; cut++) {
		t = set;
		t.len = cut;
		serve(&t, 0, 0, SIZE_MAX, &o, &info);
		assert_int_equal(o.n, 0);
		assert_int_equal(info.consumed, 0);
		assert_int_equal(info.stop, KLOG_KSERVE_CUT);
		assert_int_equal(info.need, cut < 4 ? 4 : 20);
		assert_int_equal(info.bad_offset, -1);
	}
	for (cut = 21; cut < set.len; cut++) {
		t = set;
		t.len = cut;
		serve(&t, 0, 0, SIZE_MAX, &o, &info);
		assert_string_equal(o.vals, "first entry");
		assert_int_equal(info.consumed, 20);
		/* The cut one's size, for a reader to read it whole next. */
		assert_int_equal(info.stop, KLOG_KSERVE_CUT);
		assert_int_equal(info.need, cut < 24 ? 4 : 15);
	}
	/* Nothing served since the first was skipped: need is the cut one's. */
	t = set;
	t.len = 30;
	serve(&t, 0, 100, SIZE_MAX, &o, &info);
	assert_int_equal(info.consumed, 20);
	assert_int_equal(info.need, 15);
	klog_buf_free(&set);
}

static void
test_serve_bad(void **state)
{
	klog_batch_builder_t bb;
	klog_kmsg_out_info_t info;
	klog_buf_t set, inner;
	uint8_t *w;
	size_t wlen;
	kout_t o;

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&inner);
	plain07(&set, 3);
	/* A damaged payload is served (its stored CRC is not checked, as a
	 * Kafka broker does not check), under a CRC that a client checking
	 * CRCs finds wrong: that message's alone. */
	set.data[11 + 10] ^= 1;                  /* e1's payload */
	serve_with(&set, 4000, 0, SIZE_MAX, &o, &info, kparse_any);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.bad_crcs, 1);
	assert_int_equal(o.first_bad, 1);
	assert_int_equal(info.bad_offset, -1);
	assert_int_equal(info.consumed, 33);
	/* Its stored CRC damaged instead: the same. */
	set.data[11 + 10] ^= 1;
	set.data[11 + 5] ^= 0x80;
	serve_with(&set, 4000, 0, SIZE_MAX, &o, &info, kparse_any);
	assert_int_equal(o.bad_crcs, 1);
	assert_int_equal(o.first_bad, 1);
	set.data[11 + 5] ^= 0x80;
	/* A length below the header: corrupt, not cut. */
	klog_put_be32(set.data + 11, 2);
	serve(&set, 4000, 0, SIZE_MAX, &o, &info);
	assert_int_equal(info.bad_offset, 4011);
	/* A wrapper with a bad inner CRC serves none of its messages. */
	klog_buf_reset(&set);
	plain07(&inner, 3);
	inner.data[inner.len - 1] ^= 1;
	put_m0(&set, "ok");
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_put(&set, w, wlen);
	free(w);
	serve(&set, 0, 0, SIZE_MAX, &o, &info);
	assert_string_equal(o.vals, "ok");
	assert_int_equal(info.bad_offset, 11);
	/* Nor one whose stored CRC does not match its (compressed) payload,
	 * which would decompress. */
	inner.data[inner.len - 1] ^= 1;
	klog_buf_reset(&set);
	put_m0(&set, "ok");
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_put(&set, w, wlen);
	free(w);
	serve(&set, 0, 0, SIZE_MAX, &o, &info);
	assert_string_equal(o.vals, "ok,e0,e1,e2");
	set.data[11 + 4 + 2] ^= 1;               /* the wrapper's CRC */
	serve(&set, 0, 0, SIZE_MAX, &o, &info);
	assert_string_equal(o.vals, "ok");
	assert_int_equal(info.bad_offset, 11);
	inner.data[inner.len - 1] ^= 1;
	/* Nor a nested wrapper, nor one that does not decompress. */
	klog_buf_reset(&set);
	inner.data[inner.len - 1] ^= 1;
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_reset(&inner);
	klog_buf_put(&inner, w, wlen);
	free(w);
	put_m0(&inner, "tail");
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_put(&set, w, wlen);
	free(w);
	serve(&set, 0, 0, SIZE_MAX, &o, &info);
	assert_int_equal(o.n, 0);
	assert_int_equal(info.bad_offset, 0);
	klog_buf_reset(&set);
	put_m1(&set, KLOG_CODEC_SNAPPY, "not snappy", 10);
	serve(&set, 0, 0, SIZE_MAX, &o, &info);
	assert_int_equal(info.bad_offset, 0);
	/* Nor one holding a magic-2 entry, which no wrapper may. */
	klog_buf_reset(&inner);
	put_m0(&inner, "one");
	klog_batch_begin(&bb, &inner, 1000, KLOG_NO_PRODUCER, -1, -1);
	klog_batch_add(&bb, &inner, &(klog_record_in_t){ "v", 1, "k", 1, 1000,
	    NULL, 0 });
	assert_int_equal(klog_batch_end(&bb, &inner), 0);
	klog_buf_reset(&set);
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_put(&set, w, wlen);
	free(w);
	serve(&set, 0, 0, SIZE_MAX, &o, &info);
	assert_int_equal(o.n, 0);
	assert_int_equal(info.bad_offset, 0);
	klog_buf_free(&set);
	klog_buf_free(&inner);
}

/* Entries whose framing is damaged stop the serve there, as
 * klog_iter_next() judges them, not as cut ones. */
static void
test_serve_framing(void **state)
{
	static const struct {
		uint32_t length;
		uint8_t magic, attrs;
	} cases[] = {
		{ 7, 2, 0 },                            /* magic 2 */
		{ 7, 1, 3 },                            /* codec 3 */
		{ 5, 1, 0 },                            /* magic 1, length 5 */
		{ KLOG_MAX_ENTRY_LENGTH + 1, 0, 0 },    /* length too large */
	};
	klog_kmsg_out_info_t info;
	klog_buf_t set;
	kout_t o;

	(void)state;
	klog_buf_init(&set);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		klog_buf_reset(&set);
		plain07(&set, 3);               /* 11 bytes each */
		klog_put_be32(set.data + 11, cases[i].length);
		set.data[11 + 4] = cases[i].magic;
		set.data[11 + 5] = cases[i].attrs;
		serve(&set, 0, 0, SIZE_MAX, &o, &info);
		assert_string_equal(o.vals, "e0");
		assert_int_equal(info.bad_offset, 11);
		assert_int_equal(info.consumed, 11);
		assert_int_equal(info.stop, KLOG_KSERVE_BAD);
		assert_int_equal(info.need, 0);
	}
	klog_buf_free(&set);
}

static void
test_serve_inflate_limit(void **state)
{
	klog_kmsg_out_info_t info;
	klog_buf_t set, inner, out;
	uint8_t *w;
	size_t wlen;

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&inner);
	klog_buf_init(&out);
	plain07(&inner, 100);
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_put(&set, w, wlen);
	free(w);
	assert_int_equal(klog_kmsg_serve(set.data, set.len,
	    &(klog_kmsg_serve_opt_t){ .base = 0, .min_offset = 0,
	    .magic = 0, .max_out = SIZE_MAX, .max_inflate = inner.len - 1 },
	    &out, &info), 0);
	assert_int_equal(info.messages, 0);
	assert_int_equal(info.bad_offset, 0);
	assert_int_equal(out.len, 0);
	assert_int_equal(klog_kmsg_serve(set.data, set.len,
	    &(klog_kmsg_serve_opt_t){ .base = 0, .min_offset = 0,
	    .magic = 0, .max_out = SIZE_MAX, .max_inflate = inner.len },
	    &out, &info), 0);
	assert_int_equal(info.messages, 100);
	klog_buf_free(&set);
	klog_buf_free(&inner);
	klog_buf_free(&out);
}

/* serve() then ingest() gives the 0.7 values back; and the other way. */
static void
test_round_trip(void **state)
{
	klog_kmsg_out_info_t oinfo;
	klog_kmsg_in_info_t iinfo;
	klog_buf_t set, inner, kafka, back;
	char want[8192], got[8192];
	uint8_t *w;
	size_t wlen;
	kout_t o;

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&inner);
	klog_buf_init(&kafka);
	klog_buf_init(&back);
	plain07(&set, 20);
	plain07(&inner, 7);
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_put(&set, w, wlen);
	free(w);
	put_m0(&set, "");
	put_m0(&set, "last");
	assert_int_equal(klog_kmsg_serve(set.data, set.len,
	    &(klog_kmsg_serve_opt_t){ .base = 77, .min_offset = 0,
	    .magic = 0, .max_out = SIZE_MAX, .max_inflate = MAXI },
	    &kafka, &oinfo), 0);
	assert_int_equal(oinfo.messages, 29);
	kparse(kafka.data, kafka.len, &o);
	assert_int_equal(klog_kmsg_ingest(kafka.data, kafka.len, &opt_all,
	    &back, &iinfo), 0);
	assert_int_equal(iinfo.messages, 29);
	/* The flat values, in order: the wrapper's inner ones in place. */
	entries_str(&back, 0, got, sizeof(got));
	assert_string_equal(got, o.vals);
	assert_memory_equal(back.data, set.data, 20 * 11);
	/* Kafka -> 0.7 -> Kafka: the values again. */
	klog_buf_reset(&kafka);
	kput_str(&kafka, 0, 1, "k1");
	kput(&kafka, 1, 0, 0, "key", 3, "k2", 2);
	entries_str(&back, 0, want, sizeof(want));
	klog_buf_reset(&back);
	assert_int_equal(klog_kmsg_ingest(kafka.data, kafka.len, &opt_all,
	    &back, &iinfo), 0);
	klog_buf_reset(&set);
	assert_int_equal(klog_kmsg_serve(back.data, back.len,
	    &(klog_kmsg_serve_opt_t){ .base = 0, .min_offset = 0,
	    .magic = 0, .max_out = SIZE_MAX, .max_inflate = MAXI },
	    &set, &oinfo), 0);
	kparse(set.data, set.len, &o);
	assert_string_equal(o.vals, "k1,k2");
	assert_string_equal(o.keys, "-,key");
	/* Two magic-2 entries (one timestamped, one not), a record each: a
	 * MessageSet gives a lone record its entry's last byte, and so does
	 * the produce's base offset. */
	assert_int_equal(iinfo.first_delta, 4 + klog_be32(back.data) - 1);
	assert_int_equal(o.off[0], iinfo.first_delta);
	klog_buf_free(&set);
	klog_buf_free(&inner);
	klog_buf_free(&kafka);
	klog_buf_free(&back);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ingest_v0),
		cmocka_unit_test(test_ingest_v1),
		cmocka_unit_test(test_ingest_null_key_value),
		cmocka_unit_test(test_ingest_empty),
		cmocka_unit_test(test_ingest_keyed_groups),
		cmocka_unit_test(test_ingest_log_append_time),
		cmocka_unit_test(test_ingest_gzip),
		cmocka_unit_test(test_ingest_snappy_raw),
		cmocka_unit_test(test_ingest_snappy_xerial),
		cmocka_unit_test(test_ingest_lz4),
		cmocka_unit_test(test_ingest_lz4_bad_header_checksum),
		cmocka_unit_test(test_ingest_bad_crc),
		cmocka_unit_test(test_ingest_truncated),
		cmocka_unit_test(test_ingest_bad_fields),
		cmocka_unit_test(test_ingest_cut_wrapper),
		cmocka_unit_test(test_ingest_magic2),
		cmocka_unit_test(test_ingest_nested_wrapper),
		cmocka_unit_test(test_ingest_too_big),
		cmocka_unit_test(test_ingest_inflate_bomb),
		cmocka_unit_test(test_ingest_zstd_refused),
		cmocka_unit_test(test_ingest_restores_out),
		cmocka_unit_test(test_serve_plain),
		cmocka_unit_test(test_serve_gzip_wrapper),
		cmocka_unit_test(test_serve_wrapper_saturates),
		cmocka_unit_test(test_serve_snappy_wrapper),
		cmocka_unit_test(test_serve_min_offset),
		cmocka_unit_test(test_serve_max_out),
		cmocka_unit_test(test_serve_cut),
		cmocka_unit_test(test_serve_bad),
		cmocka_unit_test(test_serve_framing),
		cmocka_unit_test(test_serve_inflate_limit),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
