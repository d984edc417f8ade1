/* Unit tests for lib/kafka/kserve.c: magic-2 entries in Kafka fetch
 * answers, through klog_kmsg_serve() as the listener calls it. */
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
#include "klog/kafka/kmsg.h"
#include "klog/kafka/kserve.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define MAXI (16u << 20)
#define BASE 1000
#define T0 1765000000000LL

static int64_t
be64(const uint8_t *p)
{
	return (int64_t)((uint64_t)klog_be32(p) << 32 | klog_be32(p + 4));
}

static void
put_plain(klog_buf_t *b, const char *s)
{
	size_t n = strlen(s);

	assert_int_equal(klog_buf_reserve(b, klog_entry_size(n)), 0);
	b->len += klog_entry_encode(b->data + b->len, s, n);
}

/* A magic-2 entry onto b: records ("a", "x", T0), (null, "y", T0 + 5,
 * two headers), ("c", null value, T0 + 9). */
static void
put_batch(klog_buf_t *b)
{
	klog_header_t hd[2] = {
		{ (const uint8_t *)"h1", 2, (const uint8_t *)"\0\1", 2 },
		{ (const uint8_t *)"h2", 2, NULL, -1 },
	};
	klog_batch_builder_t bb;

	klog_batch_begin(&bb, b, T0, KLOG_NO_PRODUCER, -1, -1);
	klog_batch_add(&bb, b, &(klog_record_in_t){ "x", 1, "a", 1, T0, NULL,
	    0 });
	klog_batch_add(&bb, b, &(klog_record_in_t){ "y", 1, NULL, 0, T0 + 5, hd,
	    2 });
	klog_batch_add(&bb, b, &(klog_record_in_t){ NULL, 0, "c", 1, T0 + 9,
	    NULL, 0 });
	assert_int_equal(klog_batch_end(&bb, b), 0);
}

/* The entry at e (uncompressed) with its records gzipped, resealed. */
static void
gzip_entry(const uint8_t *e, klog_buf_t *out)
{
	uint32_t n = klog_be32(e);
	const uint8_t *rec = e + 10 + 40;
	size_t rlen = n - 6 - 40;
	uLongf clen = compressBound(rlen) + 64;
	uint8_t *c = malloc(clen), *p;
	z_stream zs = { 0 };
	klog_batch_t h;

	assert_non_null(c);
	assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 31, 8,
	    Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)rec;
	zs.avail_in = (uInt)rlen;
	zs.next_out = c;
	zs.avail_out = (uInt)clen;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	clen = zs.total_out;
	deflateEnd(&zs);
	assert_int_equal(klog_buf_reserve(out, 10 + 40 + clen), 0);
	p = out->data + out->len;
	klog_put_be32(p, (uint32_t)(6 + 40 + clen));
	p[4] = 2;
	memcpy(p + 10, e + 10, 40);
	klog_batch_read(p + 10, 40, &h);
	h.attributes |= 1;
	klog_batch_write(p + 10, &h);
	memcpy(p + 50, c, clen);
	klog_batch_seal(p, 10 + 40 + clen);
	out->len += 10 + 40 + clen;
	free(c);
}

/* A MessageSet message as a client reads it. */
typedef struct kmsg {
	int64_t offset, ts;
	int magic, attrs;
	char key[16], value[16];         /* "-" for null */
} kmsg_t;

/* The MessageSet messages of p[0..len) into m (max of them), every CRC
 * checked; their count. */
static int
parse_set(const uint8_t *p, size_t len, kmsg_t *m, int max)
{
	size_t pos = 0;
	int n = 0;

	while (pos < len) {
		const uint8_t *q = p + pos, *f;
		uint32_t size = klog_be32(q + 8), kl, vl;

		assert_true(n < max);
		assert_true(12 + (size_t)size <= len - pos);
		assert_int_equal(klog_be32(q + 12), klog_crc32(0, q + 16,
		    size - 4));
		m[n].offset = be64(q);
		m[n].magic = q[16];
		m[n].attrs = q[17];
		assert_true(m[n].magic <= 1);
		m[n].ts = m[n].magic == 1 ? be64(q + 18) : -1;
		f = q + 18 + (m[n].magic == 1 ? 8 : 0);
		kl = klog_be32(f);
		snprintf(m[n].key, sizeof(m[n].key), "%.*s", kl == UINT32_MAX ?
		    1 : (int)kl, kl == UINT32_MAX ? "-" : (const char *)f + 4);
		f += 4 + (kl == UINT32_MAX ? 0 : kl);
		vl = klog_be32(f);
		snprintf(m[n].value, sizeof(m[n].value), "%.*s",
		    vl == UINT32_MAX ? 1 : (int)vl, vl == UINT32_MAX ? "-" :
		    (const char *)f + 4);
		f += 4 + (vl == UINT32_MAX ? 0 : vl);
		assert_ptr_equal(f, q + 12 + size);
		pos += 12 + size;
		n++;
	}
	return n;
}

static void
serve(const klog_buf_t *set, int64_t min_offset, int magic, size_t max_out,
    klog_buf_t *out, klog_kmsg_out_info_t *info)
{
	klog_buf_reset(out);
	assert_int_equal(klog_kmsg_serve(set->data, set->len,
	    &(klog_kmsg_serve_opt_t){ .base = BASE, .min_offset = min_offset,
	    .magic = magic, .max_out = max_out, .max_inflate = MAXI },
	    out, info), 0);
}

/* Fetch v4+: the entry as the batch it was, between plain messages. */
static void
as_batch(void **state)
{
	klog_buf_t set, out;
	klog_kmsg_out_info_t info;
	kmsg_t m[8];
	size_t w, n, e;
	const uint8_t *b;

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&out);
	put_plain(&set, "p0");
	w = set.len;
	put_batch(&set);
	n = klog_be32(set.data + w);
	e = w + 4 + n;
	put_plain(&set, "p1");
	serve(&set, BASE, 2, SIZE_MAX, &out, &info);
	assert_int_equal(info.messages, 5);
	assert_int_equal(info.consumed, set.len);
	/* p0 as a magic-0 message, then the batch, then p1. */
	assert_int_equal(parse_set(out.data, 12 + 14 + 2, m, 8), 1);
	assert_int_equal(m[0].offset, BASE + w - 1);
	b = out.data + 28;
	assert_int_equal(be64(b), BASE + w);
	assert_int_equal(klog_be32(b + 8), n + 3);
	assert_int_equal(klog_be32(b + 12), UINT32_MAX);
	assert_int_equal(b[16], 2);
	assert_memory_equal(b + 17, set.data + w + 6, 4);
	assert_memory_equal(b + 21, set.data + w + 10, n - 6);
	/* A client's checks: its CRC-32C; its last offset the entry's last
	 * byte, so the next fetch is the next entry. */
	assert_int_equal(klog_be32(b + 17), klog_crc32c(0, b + 21, n - 6));
	assert_int_equal(be64(b) + (int64_t)klog_be32(b + 23), BASE + e - 1);
	assert_int_equal(parse_set(b + 12 + n + 3, out.len - 28 - 12 - n - 3,
	    m, 8), 1);
	assert_string_equal(m[0].value, "p1");
	/* From inside it: whole while a record is at or past the offset
	 * (the client skips the others), skipped past its last record. */
	serve(&set, BASE + w + 2, 2, SIZE_MAX, &out, &info);
	assert_int_equal(info.messages, 4);
	assert_int_equal(be64(out.data), BASE + w);
	serve(&set, BASE + w + 3, 2, SIZE_MAX, &out, &info);
	assert_int_equal(info.messages, 1);
	assert_int_equal(parse_set(out.data, out.len, m, 8), 1);
	assert_string_equal(m[0].value, "p1");
	/* Whole or not at all: after p0, a budget short of it stops. */
	serve(&set, BASE, 2, 28 + 12 + n + 3 - 1, &out, &info);
	assert_int_equal(info.messages, 1);
	assert_int_equal(info.consumed, w);
	/* First, it goes whole whatever the budget. */
	serve(&set, BASE + w, 2, 1, &out, &info);
	assert_int_equal(info.messages, 3);
	assert_int_equal(out.len, 12 + n + 3);
	klog_buf_free(&set);
	klog_buf_free(&out);
}

/* Fetch v0-v3: a message a record, keys and (v2-3) timestamps kept,
 * record i at W + i and the last at E - 1. */
static void
as_messages(void **state)
{
	klog_buf_t set, out;
	klog_kmsg_out_info_t info;
	kmsg_t m[8];
	size_t w, e;

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&out);
	put_plain(&set, "p0");
	w = set.len;
	put_batch(&set);
	e = set.len;
	for (int magic = 0; magic <= 1; magic++) {
		serve(&set, BASE, magic, SIZE_MAX, &out, &info);
		assert_int_equal(info.messages, 4);
		assert_int_equal(parse_set(out.data, out.len, m, 8), 4);
		assert_int_equal(m[1].offset, BASE + w);
		assert_int_equal(m[2].offset, BASE + w + 1);
		assert_int_equal(m[3].offset, BASE + e - 1);
		assert_string_equal(m[1].key, "a");
		assert_string_equal(m[1].value, "x");
		assert_string_equal(m[2].key, "-");
		assert_string_equal(m[2].value, "y");
		assert_string_equal(m[3].key, "c");
		assert_string_equal(m[3].value, "-");
		for (int i = 1; i < 4; i++) {
			assert_int_equal(m[i].magic, magic);
			assert_int_equal(m[i].attrs, 0);
		}
		assert_int_equal(m[1].ts, magic ? T0 : -1);
		assert_int_equal(m[2].ts, magic ? T0 + 5 : -1);
		assert_int_equal(m[3].ts, magic ? T0 + 9 : -1);
	}
	/* Records below the fetch offset are left out. */
	serve(&set, BASE + w + 1, 1, SIZE_MAX, &out, &info);
	assert_int_equal(parse_set(out.data, out.len, m, 8), 2);
	assert_int_equal(m[0].offset, BASE + w + 1);
	serve(&set, BASE + w + 2, 1, SIZE_MAX, &out, &info);
	assert_int_equal(parse_set(out.data, out.len, m, 8), 1);
	assert_int_equal(m[0].offset, BASE + e - 1);
	klog_buf_free(&set);
	klog_buf_free(&out);
}

/* LogAppendTime: every record at the batch's maxTimestamp, of that type
 * (attributes bit 3 of a magic-1 message). */
static void
log_append_time(void **state)
{
	klog_buf_t set, out;
	klog_kmsg_out_info_t info;
	klog_batch_t h;
	kmsg_t m[8];

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&out);
	put_batch(&set);
	klog_batch_read(set.data + 10, set.len - 10, &h);
	h.attributes |= KLOG_BATCH_LOG_APPEND_TIME;
	h.max_timestamp = T0 + 777;
	klog_batch_write(set.data + 10, &h);
	klog_batch_seal(set.data, set.len);
	serve(&set, BASE, 1, SIZE_MAX, &out, &info);
	assert_int_equal(parse_set(out.data, out.len, m, 8), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(m[i].ts, T0 + 777);
		assert_int_equal(m[i].attrs, 8);
	}
	klog_buf_free(&set);
	klog_buf_free(&out);
}

/* A compressed entry: as stored for v4+, inflated for older fetches. */
static void
compressed(void **state)
{
	klog_buf_t plain, set, out;
	klog_kmsg_out_info_t info;
	kmsg_t m[8];

	(void)state;
	klog_buf_init(&plain);
	klog_buf_init(&set);
	klog_buf_init(&out);
	put_batch(&plain);
	gzip_entry(plain.data, &set);
	serve(&set, BASE, 2, SIZE_MAX, &out, &info);
	assert_int_equal(out.len, KLOG_BATCH_PREFIX + set.len - 10);
	assert_memory_equal(out.data + 21, set.data + 10, set.len - 10);
	serve(&set, BASE, 1, SIZE_MAX, &out, &info);
	assert_int_equal(parse_set(out.data, out.len, m, 8), 3);
	assert_string_equal(m[0].key, "a");
	assert_string_equal(m[1].value, "y");
	assert_int_equal(m[2].offset, BASE + set.len - 1);
	/* Over the inflate bound: not served, and said so. */
	klog_buf_reset(&out);
	assert_int_equal(klog_kmsg_serve(set.data, set.len,
	    &(klog_kmsg_serve_opt_t){ .base = BASE, .min_offset = BASE,
	    .magic = 1, .max_out = SIZE_MAX, .max_inflate = 4 },
	    &out, &info), 0);
	assert_int_equal(info.messages, 0);
	assert_int_equal(info.bad_offset, BASE);
	klog_buf_free(&plain);
	klog_buf_free(&set);
	klog_buf_free(&out);
}

/* Damage: a body whose CRC-32C fails goes out as stored to v4+ (the
 * client checks it) but is not read into messages; a cut entry asks for
 * its size; a length too short for a body is bad. */
static void
damage(void **state)
{
	klog_buf_t set, out;
	klog_kmsg_out_info_t info;

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&out);
	put_plain(&set, "p0");
	put_batch(&set);
	set.data[set.len - 1] ^= 1;
	serve(&set, BASE, 2, SIZE_MAX, &out, &info);
	assert_int_equal(info.messages, 4);
	assert_int_equal(info.bad_offset, -1);
	serve(&set, BASE, 1, SIZE_MAX, &out, &info);
	assert_int_equal(info.messages, 1);
	assert_int_equal(info.bad_offset, BASE + 11);
	set.data[set.len - 1] ^= 1;
	for (size_t cut = 11 + 1; cut < set.len; cut++) {
		klog_buf_reset(&out);
		assert_int_equal(klog_kmsg_serve(set.data + 11, cut - 11,
		    &(klog_kmsg_serve_opt_t){ .base = BASE + 11, .min_offset = BASE + 11,
		    .magic = 2, .max_out = SIZE_MAX, .max_inflate = MAXI },
		    &out, &info), 0);
		assert_int_equal(info.messages, 0);
		assert_int_equal(info.need, cut - 11 < 4 ? 4 : set.len - 11);
		assert_int_equal(info.bad_offset, -1);
	}
	klog_put_be32(set.data + 11, 45);
	serve(&set, BASE, 2, SIZE_MAX, &out, &info);
	assert_int_equal(info.messages, 1);
	assert_int_equal(info.bad_offset, BASE + 11);
	klog_buf_free(&set);
	klog_buf_free(&out);
}

/* The walk stops at a batch of opt.big bytes or more, Fetch v4 and
 * later only, even when the set cuts it: the caller reads its head. */
static void
big_stop(void **state)
{
	klog_buf_t set, out;
	klog_kmsg_out_info_t info;
	klog_kmsg_serve_opt_t opt = { .base = BASE, .min_offset = BASE,
	    .magic = 2, .max_out = SIZE_MAX, .max_inflate = MAXI };
	size_t w, n;
	kmsg_t m[8];

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&out);
	put_plain(&set, "p0");
	w = set.len;
	put_batch(&set);
	n = klog_be32(set.data + w);
	put_plain(&set, "p1");
	opt.big = (uint32_t)n;
	for (size_t len = w + 5; len <= set.len; len++) {
		klog_buf_reset(&out);
		assert_int_equal(klog_kmsg_serve(set.data, len, &opt, &out,
		    &info), 0);
		assert_int_equal(info.stop, KLOG_KSERVE_BIG);
		assert_int_equal(info.consumed, w);
		assert_int_equal(info.big_length, n);
		assert_int_equal(info.need, 0);
		assert_int_equal(info.messages, 1);
		assert_int_equal(parse_set(out.data, out.len, m, 8), 1);
	}
	/* One byte short of big: copied with its neighbours. */
	opt.big = (uint32_t)n + 1;
	klog_buf_reset(&out);
	assert_int_equal(klog_kmsg_serve(set.data, set.len, &opt, &out,
	    &info), 0);
	assert_int_equal(info.stop, KLOG_KSERVE_SERVED);
	assert_int_equal(info.messages, 5);
	/* A MessageSet reader gets its records whatever their size. */
	opt.big = 1;
	opt.magic = 1;
	klog_buf_reset(&out);
	assert_int_equal(klog_kmsg_serve(set.data, set.len, &opt, &out,
	    &info), 0);
	assert_int_equal(info.stop, KLOG_KSERVE_SERVED);
	assert_int_equal(info.messages, 5);
	klog_buf_free(&set);
	klog_buf_free(&out);
}

/* klog_kserve_head(): from the head alone, what klog_kserve_entry()
 * writes before the body, and the body's length for the file. */
static void
head_only(void **state)
{
	klog_buf_t set, out, whole;
	klog_kserve_t c = { .min_offset = BASE, .max_out = SIZE_MAX,
	    .out = &out, .magic = 2 };
	uint8_t head[KLOG_KSERVE_HEAD];
	uint32_t n;
	size_t body;

	(void)state;
	klog_buf_init(&set);
	klog_buf_init(&out);
	klog_buf_init(&whole);
	put_batch(&set);
	n = klog_be32(set.data);
	memcpy(head, set.data, sizeof(head));
	assert_int_equal(klog_kserve_head(&c, head, n, BASE, &body),
	    KLOG_KSERVE_SERVED);
	assert_int_equal(body, n + 4 - KLOG_KSERVE_BODY_AT);
	assert_int_equal(out.len, KLOG_BATCH_PREFIX);
	assert_int_equal(c.messages, 3);
	/* The prefix and the stored body are the copy's bytes. */
	c.out = &whole;
	c.messages = 0;
	assert_int_equal(klog_kserve_entry(&c, set.data, n, BASE),
	    KLOG_KSERVE_SERVED);
	assert_int_equal(whole.len, out.len + body);
	assert_memory_equal(whole.data, out.data, out.len);
	assert_memory_equal(whole.data + out.len,
	    set.data + KLOG_KSERVE_BODY_AT, body);
	/* Past its last record: skipped, nothing to send. */
	c.out = &out;
	klog_buf_reset(&out);
	c.min_offset = BASE + 3;
	assert_int_equal(klog_kserve_head(&c, head, n, BASE, &body),
	    KLOG_KSERVE_SERVED);
	assert_int_equal(body, 0);
	assert_int_equal(out.len, 0);
	/* Over max_out once something is in the answer. */
	c.min_offset = BASE;
	c.max_out = 100;
	c.prior = 80;
	assert_int_equal(klog_kserve_head(&c, head, n, BASE, &body),
	    KLOG_KSERVE_FULL);
	assert_int_equal(body, 0);
	assert_int_equal(out.len, 0);
	/* The first of an answer goes whole, whatever its size. */
	c.prior = 0;
	assert_int_equal(klog_kserve_head(&c, head, n, BASE, &body),
	    KLOG_KSERVE_SERVED);
	assert_int_equal(body, n - 6);
	/* A header not as written, and a MessageSet reader: bad. */
	klog_buf_reset(&out);
	assert_int_equal(klog_kserve_head(&c, head, n + 1, BASE, &body),
	    KLOG_KSERVE_BAD);
	c.magic = 1;
	assert_int_equal(klog_kserve_head(&c, head, n, BASE, &body),
	    KLOG_KSERVE_BAD);
	assert_int_equal(out.len, 0);
	klog_buf_free(&set);
	klog_buf_free(&out);
	klog_buf_free(&whole);
}

static void
versions(void **state)
{
	(void)state;
	assert_int_equal(klog_kserve_magic(0), 0);
	assert_int_equal(klog_kserve_magic(1), 0);
	assert_int_equal(klog_kserve_magic(2), 1);
	assert_int_equal(klog_kserve_magic(3), 1);
	assert_int_equal(klog_kserve_magic(4), 2);
	assert_int_equal(klog_kserve_magic(11), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(as_batch),
		cmocka_unit_test(as_messages),
		cmocka_unit_test(log_append_time),
		cmocka_unit_test(compressed),
		cmocka_unit_test(damage),
		cmocka_unit_test(big_stop),
		cmocka_unit_test(head_only),
		cmocka_unit_test(versions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
