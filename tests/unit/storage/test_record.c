/* Unit tests for lib/storage/record.c: a magic-2 entry's body and records,
 * against Kafka's RecordBatch v2 as its protocol guide draws it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/record.h"

/* CRC-32C bit by bit (Castagnoli, reflected 0x82F63B78), independent of
 * ISA-L. */
static uint32_t
slow_crc32c(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1));
	}
	return ~crc;
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static void
test_crc32c_check_value(void **state)
{
	const uint8_t s[] = "123456789";
	uint8_t big[3000];

	(void)state;
	assert_int_equal(klog_crc32c(0, s, 9), 0xE3069283u);
	assert_int_equal(klog_crc32c(klog_crc32c(0, s, 4), s + 4, 5),
	    0xE3069283u);
	assert_int_equal(klog_crc32c(0, s, 0), 0);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(klog_crc32c(0, big, sizeof(big)),
	    slow_crc32c(big, sizeof(big)));
}

/*
 * Two records as Kafka's protocol guide lays out a RecordBatch v2, built
 * by hand: record 0 at firstTimestamp 1000 with key "k", value "v1" and
 * header h=x; record 1 five milliseconds later with a null key, value
 * "v2" and no header; no producer id.  From the entry's length on; the
 * CRC-32C (bytes 6-9) is left to the test.
 */
static const uint8_t hand_entry[] = {
	0x00, 0x00, 0x00, 0x45,                         /* length 69 */
	0x02, 0x00,                                     /* magic, attrs */
	0x00, 0x00, 0x00, 0x00,                         /* crc32c */
	0x00, 0x00,                                     /* attributes */
	0x00, 0x00, 0x00, 0x48,                         /* lastOffsetDelta
	                                                   69 + 3 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* firstTimestamp */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xed, /* maxTimestamp */
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* producerId -1 */
	0xff, 0xff,                                     /* producerEpoch */
	0xff, 0xff, 0xff, 0xff,                         /* baseSequence */
	0x00, 0x00, 0x00, 0x02,                         /* recordsCount */
	/* length 13, attributes, timestampDelta 0, offsetDelta 0, key "k",
	 * value "v1", 1 header: "h" = "x" (zigzag varints) */
	0x1a, 0x00, 0x00, 0x00, 0x02, 'k', 0x04, 'v', '1', 0x02,
	0x02, 'h', 0x02, 'x',
	/* length 8, attributes, timestampDelta 5, offsetDelta 1, key null,
	 * value "v2", no header */
	0x10, 0x00, 0x0a, 0x02, 0x01, 0x04, 'v', '2', 0x00,
};

static void
test_builder_matches_kafka(void **state)
{
	klog_batch_builder_t bb;
	klog_header_t h = { (const uint8_t *)"h", 1, (const uint8_t *)"x", 1 };
	klog_buf_t out;
	uint8_t want[sizeof(hand_entry)];
	uint32_t crc;

	(void)state;
	memcpy(want, hand_entry, sizeof(want));
	crc = slow_crc32c(want + 10, sizeof(want) - 10);
	want[6] = (uint8_t)(crc >> 24);
	want[7] = (uint8_t)(crc >> 16);
	want[8] = (uint8_t)(crc >> 8);
	want[9] = (uint8_t)crc;
	klog_buf_init(&out);
	klog_buf_put(&out, "x", 1);     /* the entry need not start at 0 */
	klog_batch_begin(&bb, &out, 1000, KLOG_NO_PRODUCER, -1, -1);
	klog_batch_add(&bb, &out, &(klog_record_in_t){ "v1", 2, "k", 1, 1000,
	    &h,
	    1 });
	klog_batch_add(&bb, &out, &(klog_record_in_t){ "v2", 2, NULL, 0, 1005,
	    NULL, 0 });
	assert_int_equal(klog_batch_end(&bb, &out), 0);
	assert_int_equal(out.len, 1 + sizeof(want));
	assert_memory_equal(out.data + 1, want, sizeof(want));
	klog_buf_free(&out);
}

/* The hand-built batch read back: its header, each record, the header
 * walk, and the end of the records. */
static void
test_read_back(void **state)
{
	const uint8_t *body = hand_entry + 10, *p;
	size_t left = sizeof(hand_entry) - 10 - KLOG_BATCH_BODY_HEADER, pos = 0;
	klog_batch_t b;
	klog_record_t r;
	klog_header_t h;

	(void)state;
	assert_int_equal(klog_batch_read(body, sizeof(hand_entry) - 10, &b), 0);
	assert_int_equal(b.attributes, 0);
	assert_int_equal(b.last_offset_delta, 72);
	assert_int_equal(b.first_timestamp, 1000);
	assert_int_equal(b.max_timestamp, 1005);
	assert_int_equal(b.producer_id, KLOG_NO_PRODUCER);
	assert_int_equal(b.producer_epoch, -1);
	assert_int_equal(b.base_sequence, -1);
	assert_int_equal(b.count, 2);
	assert_int_equal(klog_batch_read(body, KLOG_BATCH_BODY_HEADER - 1, &b),
	    -KLOG_ECORRUPT);

	p = body + KLOG_BATCH_BODY_HEADER;
	assert_int_equal(klog_record_read(p, left, &r), 0);
	assert_int_equal(r.size, 14);
	assert_int_equal(r.timestamp_delta, 0);
	assert_int_equal(r.offset_delta, 0);
	assert_int_equal(r.key_len, 1);
	assert_memory_equal(r.key, "k", 1);
	assert_int_equal(r.value_len, 2);
	assert_memory_equal(r.value, "v1", 2);
	assert_int_equal(r.header_count, 1);
	assert_int_equal(r.headers_len, 4);
	assert_int_equal(klog_record_header_next(r.headers, r.headers_len, &pos,
	    &h), 1);
	assert_int_equal(h.key_len, 1);
	assert_memory_equal(h.key, "h", 1);
	assert_int_equal(h.value_len, 1);
	assert_memory_equal(h.value, "x", 1);
	assert_int_equal(klog_record_header_next(r.headers, r.headers_len, &pos,
	    &h), 0);

	p += r.size;
	left -= r.size;
	assert_int_equal(klog_record_read(p, left, &r), 0);
	assert_int_equal(r.size, left);
	assert_int_equal(r.timestamp_delta, 5);
	assert_int_equal(r.offset_delta, 1);
	assert_null(r.key);
	assert_int_equal(r.key_len, -1);
	assert_memory_equal(r.value, "v2", 2);
	assert_int_equal(r.header_count, 0);
	assert_int_equal(r.headers_len, 0);
}

/* Every field at its varint's edges (one byte to two, the widest
 * values) written and read back; sizes as Kafka's zigzag makes them. */
static void
test_varint_edges(void **state)
{
	static const int64_t ts[] = { 0, -1, 63, 64, -64, -65, INT64_MAX,
	    INT64_MIN };
	static const int32_t od[] = { 0, 1, 63, 64, INT32_MAX };
	klog_buf_t out;
	klog_record_t r;

	(void)state;
	klog_buf_init(&out);
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		for (size_t j = 0; j < sizeof(od) / sizeof(od[0]); j++) {
			klog_buf_reset(&out);
			klog_record_write(&out, ts[i], od[j],
			    &(klog_record_in_t){ NULL, 0, "", 0, 0, NULL, 0 });
			assert_false(out.failed);
			assert_int_equal(klog_record_read(out.data, out.len,
			    &r), 0);
			assert_int_equal(r.size, out.len);
			assert_true(r.timestamp_delta == ts[i]);
			assert_int_equal(r.offset_delta, od[j]);
			assert_non_null(r.key);     /* empty, not null */
			assert_int_equal(r.key_len, 0);
			assert_null(r.value);
			assert_int_equal(r.value_len, -1);
		}
	}
	/* 63 is one byte of zigzag (126), 64 two (128); INT64_MIN ten; a
	 * record of a null key, an empty value and no header is six bytes
	 * with a one-byte timestamp. */
	klog_buf_reset(&out);
	klog_record_write(&out, 63, 0,
	    &(klog_record_in_t){ "", 0, NULL, 0, 0, NULL, 0 });
	assert_int_equal(out.len, 1 + 6);
	klog_buf_reset(&out);
	klog_record_write(&out, 64, 0,
	    &(klog_record_in_t){ "", 0, NULL, 0, 0, NULL, 0 });
	assert_int_equal(out.len, 1 + 7);
	klog_buf_reset(&out);
	klog_record_write(&out, INT64_MIN, 0,
	    &(klog_record_in_t){ "", 0, NULL, 0, 0, NULL, 0 });
	assert_int_equal(out.len, 1 + 15);
	assert_memory_equal(out.data + 2, "\xff\xff\xff\xff\xff\xff\xff\xff"
	    "\xff\x01", 10);
	klog_buf_free(&out);
}

/* Records made bad by hand: each -KLOG_ECORRUPT, or -KLOG_EPARTIAL when
 * the bytes just stop. */
static void
test_bad_records(void **state)
{
	static const struct {
		const char *what;
		uint8_t bytes[16];
		size_t len;
		int want;
	} cases[] = {
		{ "length 0", { 0x00 }, 1, -KLOG_ECORRUPT },
		{ "length negative", { 0x01, 0x00 }, 2, -KLOG_ECORRUPT },
		{ "length varint cut", { 0x80 }, 1, -KLOG_EPARTIAL },
		{ "nothing", { 0 }, 0, -KLOG_EPARTIAL },
		{ "record cut", { 0x0e, 0x00, 0x00, 0x00 }, 4, -KLOG_EPARTIAL },
		{ "length varint too long", { 0x80, 0x80, 0x80, 0x80, 0x80,
		    0x01 }, 6, -KLOG_ECORRUPT },
		/* attrs, ts 0, od 0, key null, value null, headers 0, and a
		 * byte more than the fields */
		{ "trailing byte", { 0x0e, 0, 0, 0, 1, 1, 0, 0x7f }, 8,
		    -KLOG_ECORRUPT },
		{ "key past the record", { 0x0c, 0, 0, 0, 0x08, 'a', 1, 0 },
		    8, -KLOG_ECORRUPT },
		{ "value length -2", { 0x0c, 0, 0, 0, 1, 3, 0 }, 7,
		    -KLOG_ECORRUPT },
		{ "header count -1", { 0x0a, 0, 0, 0, 1, 1, 1 }, 6,
		    -KLOG_ECORRUPT },
		{ "header count past the fields", { 0x0a, 0, 0, 0, 1, 1, 2 },
		    7, -KLOG_ECORRUPT },
		{ "header key null", { 0x0e, 0, 0, 0, 1, 1, 2, 1, 1 }, 9,
		    -KLOG_ECORRUPT },
		{ "offset delta over int32", { 0x14, 0, 0, 0x80, 0x80, 0x80,
		    0x80, 0x10, 1, 1, 0 }, 11, -KLOG_ECORRUPT },
		{ "timestamp varlong of 11 bytes", { 0x1e, 0, 0x80, 0x80,
		    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0,
		    1, 1 }, 16, -KLOG_ECORRUPT },
	};
	klog_record_t r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = klog_record_read(cases[i].bytes, cases[i].len, &r);

		if (got != cases[i].want)
			fail_msg("%s: %d, not %d", cases[i].what, got,
			    cases[i].want);
	}
}

/* Bytes of v's zigzag varint, the plain way. */
static size_t
zigzag_size(int64_t v)
{
	uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 1;

	while (u >= 0x80) {
		u >>= 7;
		n++;
	}
	return n;
}

/* Every size of key and value around the one- and two-byte varint edges
 * (the writer guesses its length's varint from a bound, and moves the
 * body when the guess was long): each record as long as Kafka's layout
 * says, and read back whole. */
static void
test_sizes_around_varint_edges(void **state)
{
	static const int32_t lens[] = { -1, 0, 1, 20, 40, 47, 48, 49, 63, 64,
	    65, 100, 215, 8100, 8150, 8170, 8191, 8192, 8193, 20000 };
	static uint8_t bytes[20000];
	klog_header_t h = { .key = (const uint8_t *)"h", .key_len = 1,
	    .value = bytes,
	    .value_len = 60 };
	klog_buf_t out;
	klog_record_t r;

	(void)state;
	memset(bytes, 'x', sizeof(bytes));
	klog_buf_init(&out);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			int32_t kl = lens[i] > 64 ? lens[i] % 64 : lens[i];
			int32_t vl = lens[j];
			uint32_t nh = (uint32_t)(i + j) % 2;
			size_t body = 1 + zigzag_size(5) + zigzag_size(70) +
			    zigzag_size(kl) + (kl > 0 ? (size_t)kl : 0) +
			    zigzag_size(vl) + (vl > 0 ? (size_t)vl : 0) + 1 +
			    nh * (1 + 1 + 1 + 60);

			klog_buf_reset(&out);
			klog_record_write(&out, 5, 70, &(klog_record_in_t){
			    vl < 0 ? NULL : bytes, vl < 0 ? 0 : (size_t)vl,
			    kl < 0 ? NULL : bytes, kl < 0 ? 0 : (size_t)kl, 0,
			    &h, nh });
			assert_false(out.failed);
			assert_int_equal(out.len, zigzag_size((int64_t)body) +
			    body);
			assert_int_equal(klog_record_read(out.data, out.len,
			    &r), 0);
			assert_int_equal(r.size, out.len);
			assert_int_equal(r.key_len, kl);
			assert_int_equal(r.value_len, vl);
			assert_int_equal(r.header_count, nh);
			assert_int_equal(r.offset_delta, 70);
		}
	}
	klog_buf_free(&out);
}

/* The reader's one- and two-byte varints, taken without its loop, say
 * what the loop says: a two-byte length whose second byte is past the
 * record, a non-shortest zero, an int32 length of 2^32 zigzagged. */
static void
test_short_varints(void **state)
{
	static const struct {
		const char *what;
		uint8_t bytes[16];
		size_t len;
		int want;
	} cases[] = {
		/* length 5: attrs, ts, od, key null, then 0x80 ends it */
		{ "value length's second byte past the record", { 0x0a, 0, 0,
		    0, 1, 0x80, 0x01, 0 }, 8, -KLOG_ECORRUPT },
		{ "value length zero in two bytes", { 0x0e, 0, 0, 0, 1, 0x80,
		    0x00, 0 }, 8, 0 },
		{ "value length 2^31 zigzagged", { 0x16, 0, 0, 0, 1, 0x80,
		    0x80, 0x80, 0x80, 0x10, 0, 0 }, 12, -KLOG_ECORRUPT },
		{ "header count in two bytes", { 0x0e, 0, 0, 0, 1, 1, 0x80,
		    0x00 }, 8, 0 },
		{ "length in two bytes, cut", { 0x80, 0x01 }, 2,
		    -KLOG_EPARTIAL },
		{ "length 1 in two bytes, cut", { 0x82, 0x00 }, 2,
		    -KLOG_EPARTIAL },
	};
	klog_record_t r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = klog_record_read(cases[i].bytes, cases[i].len, &r);

		if (got != cases[i].want)
			fail_msg("%s: %d, not %d", cases[i].what, got,
			    cases[i].want);
	}
}

/* A record cut anywhere is -KLOG_EPARTIAL, never read. */
static void
test_cut_records(void **state)
{
	const uint8_t *rec = hand_entry + 10 + KLOG_BATCH_BODY_HEADER;
	klog_record_t r;

	(void)state;
	for (size_t cut = 0; cut < 14; cut++)
		assert_int_equal(klog_record_read(rec, cut, &r),
		    -KLOG_EPARTIAL);
	assert_int_equal(klog_record_read(rec, 14, &r), 0);
}

/* Headers with an empty key, a null and an empty value, walked in
 * order; the walk stops at the end. */
static void
test_header_walk(void **state)
{
	klog_header_t in[3] = {
		{ (const uint8_t *)"a", 1, (const uint8_t *)"1", 1 },
		{ (const uint8_t *)"", 0, NULL, -1 },
		{ (const uint8_t *)"key2", 4, (const uint8_t *)"", 0 },
	};
	klog_header_t h;
	klog_record_t r;
	klog_buf_t out;
	size_t pos = 0;

	(void)state;
	klog_buf_init(&out);
	klog_record_write(&out, 0, 0,
	    &(klog_record_in_t){ "v", 1, NULL, 0, 0, in, 3 });
	assert_int_equal(klog_record_read(out.data, out.len, &r), 0);
	assert_int_equal(r.header_count, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(klog_record_header_next(r.headers,
		    r.headers_len, &pos, &h), 1);
		assert_int_equal(h.key_len, in[i].key_len);
		assert_memory_equal(h.key, in[i].key, h.key_len);
		assert_int_equal(h.value_len, in[i].value_len);
		if (in[i].value == NULL)
			assert_null(h.value);
		else
			assert_memory_equal(h.value, in[i].value,
			    (size_t)h.value_len);
	}
	assert_int_equal(klog_record_header_next(r.headers, r.headers_len,
	    &pos, &h), 0);
	assert_int_equal(pos, r.headers_len);
	/* A message without headers (format.h: headers NULL) walks to
	 * nothing, with no arithmetic on NULL (UBSan caught it). */
	pos = 0;
	assert_int_equal(klog_record_header_next(NULL, 0, &pos, &h), 0);
	klog_buf_free(&out);
}

/* A producer's fields kept; a batch changed after it was built (a
 * broker's LogAppendTime) sealed again: lastOffsetDelta, attrs byte and
 * CRC-32C as Kafka would compute the CRC. */
static void
test_producer_and_seal(void **state)
{
	klog_batch_builder_t bb;
	klog_batch_t b;
	klog_buf_t out;
	uint8_t *e;

	(void)state;
	klog_buf_init(&out);
	klog_batch_begin(&bb, &out, 5000, 42, 3, 7);
	for (int i = 0; i < 3; i++)
		klog_batch_add(&bb, &out, &(klog_record_in_t){ "value", 5, "k",
		    1, 5000 + i, NULL, 0 });
	assert_int_equal(klog_batch_end(&bb, &out), 0);
	e = out.data;
	assert_int_equal(klog_batch_read(e + 10, out.len - 10, &b), 0);
	assert_int_equal(b.producer_id, 42);
	assert_int_equal(b.producer_epoch, 3);
	assert_int_equal(b.base_sequence, 7);
	assert_int_equal(b.count, 3);
	assert_int_equal(b.max_timestamp, 5002);
	assert_int_equal(b.last_offset_delta, (int32_t)out.len - 4 + 3);
	assert_int_equal(be32(e + 6), slow_crc32c(e + 10, out.len - 10));

	b.attributes |= KLOG_BATCH_LOG_APPEND_TIME;
	b.max_timestamp = 99999;
	b.last_offset_delta = 0;
	klog_batch_write(e + 10, &b);
	klog_batch_seal(e, out.len);
	assert_int_equal(e[5], KLOG_BATCH_LOG_APPEND_TIME);
	assert_int_equal(klog_batch_read(e + 10, out.len - 10, &b), 0);
	assert_int_equal(b.last_offset_delta, (int32_t)out.len - 4 + 3);
	assert_int_equal(b.max_timestamp, 99999);
	assert_int_equal(be32(e + 6), slow_crc32c(e + 10, out.len - 10));
	klog_buf_free(&out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_check_value),
		cmocka_unit_test(test_builder_matches_kafka),
		cmocka_unit_test(test_read_back),
		cmocka_unit_test(test_varint_edges),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_cut_records),
		cmocka_unit_test(test_sizes_around_varint_edges),
		cmocka_unit_test(test_short_varints),
		cmocka_unit_test(test_header_walk),
		cmocka_unit_test(test_producer_and_seal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
