/* Unit tests for lib/kafka/kbatch.c: Kafka RecordBatch v2 into magic-2
 * entries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zstd.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kbatch.h"
#include "klog/kafka/kmsg.h"
#include "klog/storage/codec.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define MAXP (1u << 20)
#define MAXI (16u << 20)

/*
 * Written by kafka-python 2.0.2's DefaultRecordBatchBuilder (its own
 * CRC-32C): records "one" (a header h=x), key "key" value "two", and a null
 * value; then three records of "abcdefgh" x 8, gzip.
 */
static const char plain_hex[] =
    "00000000000000000000005300000000028df390e60000000000020000018bcfe568"
    "000000018bcfe56802ffffffffffffffffffffffffffff000000031a00000001066f"
    "6e65020268027818000202066b65790674776f000c000404010100";
static const char gzip_hex[] =
    "0000000000000000000000620000000002c846b8de0001000000020000018bcfe568"
    "000000018bcfe56800ffffffffffffffffffffffffffff000000031f8b080057460f"
    "6b02ffeb63646060606c604c4c4a4e494d4bcf209766e8031ac4442d8358a8611000"
    "32fb47dedb000000";

static size_t
unhex(const char *hex, uint8_t *out)
{
	size_t n = strlen(hex) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

static const klog_kingest_t opt_all = { MAXP, MAXI, 1, KLOG_NO_TIMESTAMP };

static klog_kingest_t
opt(size_t max_message, size_t max_inflate, int zstd)
{
	return (klog_kingest_t){ max_message, max_inflate, zstd,
	    KLOG_NO_TIMESTAMP };
}

/*
 * The entry at e is batch b[0..n) kept: length 6 + the body, magic 2,
 * the attrs byte and CRC-32C of its body, the body as sent but for
 * lastOffsetDelta (the length + 3) and, under LogAppendTime (append_time
 * not -1), attributes bit 3 and maxTimestamp.  Returns its size.
 */
static size_t
kept(const uint8_t *e, const uint8_t *b, size_t n, int64_t append_time)
{
	size_t body = n - 21;
	uint32_t length = klog_be32(e);
	uint8_t want[4096];
	klog_batch_t h;

	assert_true(body <= sizeof(want));
	assert_int_equal(length, 6 + body);
	assert_int_equal(e[4], 2);
	memcpy(want, b + 21, body);
	klog_batch_read(want, body, &h);
	h.last_offset_delta = (int32_t)length + 3;
	if (append_time != KLOG_NO_TIMESTAMP) {
		h.attributes |= KLOG_BATCH_LOG_APPEND_TIME;
		h.max_timestamp = append_time;
	}
	klog_batch_write(want, &h);
	assert_memory_equal(e + 10, want, body);
	assert_int_equal(e[5], want[1]);
	assert_int_equal(klog_be32(e + 6), klog_crc32c(0, want, body));
	return 4 + length;
}

/* The values of the records of the magic-2 entry at e, in order (NULL for
 * a null one); their count. */
static int
values(const uint8_t *e, const char **want, int n)
{
	size_t body = klog_be32(e) - 6, len, pos = 0;
	const uint8_t *rec = e + 10 + 40;
	uint8_t *plain = NULL;
	klog_batch_t h;
	klog_record_t r;
	int i;

	klog_batch_read(e + 10, body, &h);
	len = body - 40;
	if (h.attributes & 7) {
		assert_int_equal(klog_codec_inflate(h.attributes & 7, rec, len,
		    MAXI, &plain, &len), 0);
		rec = plain;
	}
	for (i = 0; pos < len; i++) {
		assert_true(i < n);
		assert_int_equal(klog_record_read(rec + pos, len - pos, &r), 0);
		assert_int_equal(r.offset_delta, i);
		if (want[i] == NULL) {
			assert_int_equal(r.value_len, -1);
		} else {
			assert_int_equal(r.value_len, strlen(want[i]));
			assert_memory_equal(r.value, want[i], r.value_len);
		}
		pos += r.size;
	}
	assert_int_equal(i, h.count);
	free(plain);
	return i;
}

static void
kafka_python_plain(void **state)
{
	const char *want[] = { "one", "two", NULL };
	uint8_t set[256];
	size_t n = unhex(plain_hex, set);
	klog_kmsg_in_info_t info;
	klog_kingest_t o = opt_all;
	klog_buf_t out;

	(void)state;
	klog_buf_init(&out);
	assert_int_equal(klog_kbatch_ingest(set, n, &o, &out, &info), 0);
	assert_int_equal(info.messages, 3);
	assert_int_equal(info.first_delta, 0);
	assert_int_equal(info.codec, 0);
	assert_int_equal(kept(out.data, set, n, KLOG_NO_TIMESTAMP), out.len);
	assert_int_equal(values(out.data, want, 3), 3);
	/* LogAppendTime: the broker's clock stamped, the rest kept. */
	out.len = 0;
	o.append_time = 1765000000123LL;
	assert_int_equal(klog_kbatch_ingest(set, n, &o, &out, &info), 0);
	assert_int_equal(kept(out.data, set, n, o.append_time), out.len);
	klog_buf_free(&out);
}

static void
kafka_python_gzip(void **state)
{
	const char *v = "abcdefghabcdefghabcdefghabcdefghabcdefghabcdefgh"
	    "abcdefghabcdefgh";
	const char *want[] = { v, v, v };
	uint8_t set[256];
	size_t n = unhex(gzip_hex, set);
	klog_kmsg_in_info_t info;
	klog_buf_t out;

	(void)state;
	klog_buf_init(&out);
	klog_kingest_t small = opt(MAXP, 100, 1);

	assert_int_equal(klog_kbatch_ingest(set, n, &opt_all, &out, &info), 0);
	assert_int_equal(info.messages, 3);
	assert_int_equal(info.codec, 1);
	/* Stored compressed, as it came. */
	assert_int_equal(kept(out.data, set, n, KLOG_NO_TIMESTAMP), out.len);
	assert_int_equal(values(out.data, want, 3), 3);
	/* Decompressing past the limit is refused, out untouched. */
	out.len = 0;
	assert_int_equal(klog_kbatch_ingest(set, n, &small, &out, &info),
	    -KLOG_ETOOBIG);
	assert_int_equal(out.len, 0);
	klog_buf_free(&out);
}

static void
two_batches_and_cuts(void **state)
{
	const char *want[] = { "one", "two", NULL };
	uint8_t set[512];
	size_t n = unhex(plain_hex, set);
	klog_kmsg_in_info_t info;
	klog_buf_t out;

	(void)state;
	memcpy(set + n, set, n);
	klog_buf_init(&out);
	size_t e;

	assert_int_equal(klog_kbatch_ingest(set, 2 * n, &opt_all, &out,
	    &info), 0);
	assert_int_equal(info.messages, 6);
	e = kept(out.data, set, n, KLOG_NO_TIMESTAMP);
	assert_int_equal(e + kept(out.data + e, set + n, n, KLOG_NO_TIMESTAMP),
	    out.len);
	assert_int_equal(values(out.data + e, want, 3), 3);
	/* Any cut of the second batch refuses the whole set. */
	for (size_t cut = n + 1; cut < 2 * n; cut++) {
		out.len = 0;
		assert_int_equal(klog_kbatch_ingest(set, cut, &opt_all, &out,
		    &info), -KLOG_ECORRUPT);
		assert_int_equal(out.len, 0);
	}
	klog_buf_free(&out);
}

/* A flipped bit anywhere but the base offset and leader epoch, which no
 * CRC covers and klog keeps nothing of, is refused. */
static void
every_bit_flip(void **state)
{
	uint8_t set[256];
	size_t n = unhex(plain_hex, set);
	klog_kmsg_in_info_t info;
	klog_buf_t out;

	(void)state;
	klog_buf_init(&out);
	for (size_t i = 0; i < n; i++) {
		for (int bit = 0; bit < 8; bit++) {
			int want = (i < 8 || (i >= 12 && i < 16)) ? 0 :
			    -KLOG_ECORRUPT;

			set[i] ^= (uint8_t)(1 << bit);
			out.len = 0;
			assert_int_equal(klog_kbatch_ingest(set, n, &opt_all,
			    &out, &info), want);
			if (want < 0)
				assert_int_equal(out.len, 0);
			set[i] ^= (uint8_t)(1 << bit);
		}
	}
	klog_buf_free(&out);
}

/* ---- Batches built here, their CRC-32C from the function checked above ---- */

static size_t
put_varint(uint8_t *p, int64_t v)
{
	uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	while (u >= 0x80) {
		p[n++] = (uint8_t)(u | 0x80);
		u >>= 7;
	}
	p[n++] = (uint8_t)u;
	return n;
}

/* One record: value v (NULL: null), offset delta delta, pad bytes of
 * nothing after its last field but inside its length. */
static size_t
put_record(uint8_t *p, int64_t delta, const char *v, int pad)
{
	uint8_t body[256];
	size_t n = 0, vl = v ? strlen(v) : 0;

	body[n++] = 0;
	n += put_varint(body + n, 0);
	n += put_varint(body + n, delta);
	n += put_varint(body + n, -1);
	n += put_varint(body + n, v ? (int64_t)vl : -1);
	memcpy(body + n, v ? v : "", vl);
	n += vl;
	n += put_varint(body + n, 0);
	memset(body + n, 0, (size_t)pad);
	n += (size_t)pad;
	size_t h = put_varint(p, (int64_t)n);
	memcpy(p + h, body, n);
	return h + n;
}

typedef struct spec {
	uint16_t attrs;
	int64_t producer_id;
	int32_t count, last_delta;
	int64_t delta_of_second;
	int pad;
} spec_t;

/* A batch of two records "a" and "b" as s says, its CRC right. */
static size_t
build(uint8_t *b, const spec_t *s)
{
	size_t n = 61;

	memset(b, 0, 61);
	b[16] = 2;
	b[21] = (uint8_t)(s->attrs >> 8);
	b[22] = (uint8_t)s->attrs;
	klog_put_be32(b + 23, (uint32_t)s->last_delta);
	klog_put_be32(b + 43, (uint32_t)((uint64_t)s->producer_id >> 32));
	klog_put_be32(b + 47, (uint32_t)s->producer_id);
	klog_put_be32(b + 57, (uint32_t)s->count);
	n += put_record(b + n, 0, "a", 0);
	n += put_record(b + n, s->delta_of_second, "b", s->pad);
	klog_put_be32(b + 8, (uint32_t)(n - 12));
	klog_put_be32(b + 17, klog_crc32c(0, b + 21, n - 21));
	return n;
}

static void
refusals(void **state)
{
	static const struct {
		spec_t s;
		int want;
	} cases[] = {
		{ { 0, -1, 2, 1, 1, 0 }, 0 },
		{ { 0x10, -1, 2, 1, 1, 0 }, -KLOG_EUNSUPPORTED },   /* transactional */
		{ { 0x20, -1, 2, 1, 1, 0 }, -KLOG_EUNSUPPORTED },   /* control */
		/* A producer's batch: taken, its sequence the core's to judge. */
		{ { 0, 7, 2, 1, 1, 0 }, 0 },
		{ { 0, 0x1ffffffffLL, 2, 1, 1, 0 }, 0 },
		{ { 4, -1, 2, 1, 1, 0 }, -KLOG_ECORRUPT },          /* not zstd */
		{ { 5, -1, 2, 1, 1, 0 }, -KLOG_ECORRUPT },          /* codec 5 */
		{ { 0, -1, 2, 1, 2, 0 }, -KLOG_ECORRUPT },          /* delta skips */
		{ { 0, -1, 3, 2, 1, 0 }, -KLOG_ECORRUPT },          /* count over */
		{ { 0, -1, 1, 0, 1, 0 }, -KLOG_ECORRUPT },          /* count under */
		{ { 0, -1, 2, 0, 1, 0 }, -KLOG_ECORRUPT },          /* last delta */
		{ { 0, -1, 0, -1, 1, 0 }, -KLOG_ECORRUPT },         /* empty */
		{ { 1, -1, 2, 1, 1, 0 }, -KLOG_ECORRUPT },          /* not gzip */
		{ { 0, -1, 2, 1, 1, 1 }, -KLOG_ECORRUPT },          /* a spare byte */
	};
	const char *want[] = { "a", "b" };
	klog_kingest_t tight;
	klog_kmsg_in_info_t info;
	klog_buf_t out;
	uint8_t b[512];

	(void)state;
	klog_buf_init(&out);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = build(b, &cases[i].s);

		out.len = 0;
		assert_int_equal(klog_kbatch_ingest(b, n, &opt_all, &out,
		    &info), cases[i].want);
		if (cases[i].want == 0)
			assert_int_equal(values(out.data, want, 2), 2);
		else
			assert_int_equal(out.len, 0);
	}
	/* A batch over --max-message-bytes, as Kafka's message.max.bytes:
	 * its size as sent. */
	size_t n = build(b, &cases[0].s);
	tight = opt(n, MAXI, 1);
	out.len = 0;
	assert_int_equal(klog_kbatch_ingest(b, n, &tight, &out, &info), 0);
	tight.max_message = n - 1;
	assert_int_equal(klog_kbatch_ingest(b, n, &tight, &out, &info),
	    -KLOG_ETOOBIG);
	/* Magic 1 where a batch must be. */
	b[16] = 1;
	assert_int_equal(klog_kbatch_ingest(b, n, &opt_all, &out, &info),
	    -KLOG_ECORRUPT);
	/* A record length past its batch, the CRC made right again. */
	b[16] = 2;
	b[61] = 0x7e;
	klog_put_be32(b + 17, klog_crc32c(0, b + 21, n - 21));
	assert_int_equal(klog_kbatch_ingest(b, n, &opt_all, &out, &info),
	    -KLOG_ECORRUPT);
	/* A batch length below the header, and one past the set. */
	klog_put_be32(b + 8, 48);
	assert_int_equal(klog_kbatch_ingest(b, n, &opt_all, &out, &info),
	    -KLOG_ECORRUPT);
	klog_put_be32(b + 8, (uint32_t)n);
	assert_int_equal(klog_kbatch_ingest(b, n, &opt_all, &out, &info),
	    -KLOG_ECORRUPT);
	assert_int_equal(klog_kbatch_ingest(b, 0, &opt_all, &out, &info), 0);
	assert_int_equal(info.messages, 0);
	klog_buf_free(&out);
}

/*
 * Written by librdkafka 2.0.2 (kcat -z zstd, Produce v7): "zstd line 1" to
 * "zstd line 12", one zstd frame that does not say its content size.  Its
 * records take 219 bytes: 9 of 18 (a length byte, 17 of record with a
 * value of 11) and 3 of 19.
 */
static const char kcat_zstd_hex[] =
    "0000000000000000000000990000000002853d016900040000000b000001a24fc8"
    "6e76000001a24fc86e76ffffffffffffffffffffffffffff0000000c28b52ffd00"
    "58fd020074032200000001167a737464206c696e65203100220000023204330634"
    "08350a360c370e3810390024000012011831300024000014311632001300e00404"
    "d7e6316063c00c5802f880c5000bb00e300396003e6031c002ac03cc802514379b";

static void
librdkafka_zstd(void **state)
{
	const char *want[12];
	char lines[12][16];
	uint8_t set[256];
	size_t n = unhex(kcat_zstd_hex, set);
	klog_kmsg_in_info_t info;
	klog_buf_t out;

	(void)state;
	for (int i = 0; i < 12; i++) {
		snprintf(lines[i], sizeof(lines[i]), "zstd line %d", i + 1);
		want[i] = lines[i];
	}
	klog_buf_init(&out);
	klog_kingest_t o = opt(MAXP, 219, 1);

	assert_int_equal(klog_kbatch_ingest(set, n, &opt_all, &out, &info), 0);
	assert_int_equal(info.messages, 12);
	assert_int_equal(info.codec, 4);
	assert_int_equal(kept(out.data, set, n, KLOG_NO_TIMESTAMP), out.len);
	assert_int_equal(values(out.data, want, 12), 12);
	/* Bounded exactly, as the other codecs are. */
	out.len = 0;
	assert_int_equal(klog_kbatch_ingest(set, n, &o, &out, &info), 0);
	out.len = 0;
	o.max_inflate = 218;
	assert_int_equal(klog_kbatch_ingest(set, n, &o, &out, &info),
	    -KLOG_ETOOBIG);
	assert_int_equal(out.len, 0);
	/* Produce v3 to v6 may not carry it: refused as such, undecoded. */
	o = opt(MAXP, MAXI, 0);
	assert_int_equal(klog_kbatch_ingest(set, n, &o, &out, &info),
	    -KLOG_EUNSUPPORTED);
	assert_int_equal(info.refused_codec, 4);
	assert_int_equal(out.len, 0);
	/* Every other codec those versions still take. */
	n = unhex(gzip_hex, set);
	assert_int_equal(klog_kbatch_ingest(set, n, &o, &out, &info), 0);
	assert_int_equal(info.messages, 3);
	klog_buf_free(&out);
}

/* A batch of count records whose records are data[0..len), as codec
 * compressed them, its CRC right. */
static size_t
wrap(uint8_t *b, int codec, int32_t count, const void *data, size_t len)
{
	memset(b, 0, 61);
	b[16] = 2;
	b[22] = (uint8_t)codec;
	klog_put_be32(b + 23, (uint32_t)(count - 1));
	memset(b + 43, 0xff, 14);        /* no producer id, epoch, sequence */
	klog_put_be32(b + 57, (uint32_t)count);
	memcpy(b + 61, data, len);
	klog_put_be32(b + 8, (uint32_t)(61 + len - 12));
	klog_put_be32(b + 17, klog_crc32c(0, b + 21, 61 + len - 21));
	return 61 + len;
}

/*
 * A zstd bomb: records of 16 MiB of zeros in a batch of a few hundred
 * bytes stop at the bound, up to one byte short of them; at it they are
 * read whole, and then they are not records.
 */
static void
zstd_bomb(void **state)
{
	size_t big = (size_t)16 << 20, cap = ZSTD_compressBound(big), clen, n;
	uint8_t *zeros, *c, b[4096];
	klog_kmsg_in_info_t info;
	klog_buf_t out;

	(void)state;
	assert_non_null(zeros = calloc(1, big));
	assert_non_null(c = malloc(cap));
	clen = ZSTD_compress(c, cap, zeros, big, 3);
	assert_false(ZSTD_isError(clen));
	assert_true(clen + 61 < sizeof(b));
	n = wrap(b, 4, 1, c, clen);
	klog_buf_init(&out);
	klog_kingest_t o = opt(MAXP, 1 << 20, 1);

	assert_int_equal(klog_kbatch_ingest(b, n, &o, &out, &info),
	    -KLOG_ETOOBIG);
	o.max_inflate = big - 1;
	assert_int_equal(klog_kbatch_ingest(b, n, &o, &out, &info),
	    -KLOG_ETOOBIG);
	o.max_inflate = big;
	assert_int_equal(klog_kbatch_ingest(b, n, &o, &out, &info),
	    -KLOG_ECORRUPT);
	assert_int_equal(out.len, 0);
	klog_buf_free(&out);
	free(c);
	free(zeros);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kafka_python_plain),
		cmocka_unit_test(kafka_python_gzip),
		cmocka_unit_test(two_batches_and_cuts),
		cmocka_unit_test(every_bit_flip),
		cmocka_unit_test(refusals),
		cmocka_unit_test(librdkafka_zstd),
		cmocka_unit_test(zstd_bomb),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
