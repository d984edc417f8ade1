/*
 * libFuzzer target for lib/storage/record.c and batchiter.c: arbitrary
 * bytes as one record, and as the body of a magic-2 entry.
 *
 * As a record (klog_record_read()): a record read lies inside the bytes,
 * its headers walk to exactly their count, and writing what was read
 * (klog_record_write()) reads back the same; a reader written the plain
 * way, a varint byte by byte, agrees with it on every input.  As a body: made an entry
 * (the length field, magic 2, the attrs byte from the body, and sealed:
 * lastOffsetDelta and CRC-32C right, so mutations reach the records),
 * then iterated deep and validated deep, which must agree on where it
 * stops and how many records it holds; each record is handed out at the
 * entry's offset with offset delta i, the last one moving past the entry.
 * Bodies decompress within a small bound, so bombs are cut.  A broken
 * invariant aborts.
 *
 * The seeds in corpus/fuzz_record: bodies built with
 * klog_batch_begin()/add()/end() (keys, null keys and values, headers,
 * LogAppendTime, a producer id), their records compressed with each codec
 * (klog_codec_deflate()), and one record alone.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAX_INFLATE (64 * 1024)
#define ENTRY_AT 9          /* after a magic-0 entry of no payload */

static void
check_inside(const uint8_t *p, int64_t n, const uint8_t *data, size_t size)
{
	if (p == NULL) {
		CHECK(n == -1);
		return;
	}
	CHECK(n >= 0 && p >= data && (size_t)(p - data) + (size_t)n <= size);
}

/*
 * The reader as it was before its one- and two-byte varints skipped the
 * loop (a varint byte by byte, every check spelled out): what
 * klog_record_read() says of any bytes, it must say too.
 */
static int
ref_varint(const uint8_t **p, const uint8_t *end, int max, int64_t *v)
{
	uint64_t u = 0;

	for (int i = 0; i < max; i++) {
		uint8_t b;

		if (*p == end)
			return -KLOG_EPARTIAL;
		b = *(*p)++;
		u |= (uint64_t)(b & 0x7f) << (7 * i);
		if ((b & 0x80) == 0) {
			*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
			return 0;
		}
	}
	return -KLOG_ECORRUPT;
}

static int
ref_varint32(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	if (ref_varint(p, end, 5, v) < 0 || *v < INT32_MIN || *v > INT32_MAX)
		return -KLOG_ECORRUPT;
	return 0;
}

static int
ref_field(const uint8_t **p, const uint8_t *end, int nullable,
    const uint8_t **v, int64_t *n)
{
	if (ref_varint32(p, end, n) < 0)
		return -KLOG_ECORRUPT;
	if (*n == -1 && nullable) {
		*v = NULL;
		return 0;
	}
	if (*n < 0 || *n > end - *p)
		return -KLOG_ECORRUPT;
	*v = *p;
	*p += *n;
	return 0;
}

static void
ref_check(const uint8_t *data, size_t size, int rc, const klog_record_t *r)
{
	const uint8_t *q = data, *end = data + size, *rend, *key, *value, *v;
	int64_t len, ts, delta, kn, vn, count, n;
	int want;

	if ((want = ref_varint(&q, end, 5, &len)) < 0) {
		CHECK(rc == want);
		return;
	}
	if (len < 1 || len > INT32_MAX) {
		CHECK(rc == -KLOG_ECORRUPT);
		return;
	}
	if (len > end - q) {
		CHECK(rc == -KLOG_EPARTIAL);
		return;
	}
	rend = q + len;
	q++;
	want = ref_varint(&q, rend, 10, &ts) < 0 ||
	    ref_varint32(&q, rend, &delta) < 0 ||
	    ref_field(&q, rend, 1, &key, &kn) < 0 ||
	    ref_field(&q, rend, 1, &value, &vn) < 0 ||
	    ref_varint32(&q, rend, &count) < 0 || count < 0 ?
	    -KLOG_ECORRUPT : 0;
	for (int64_t h = 0; want == 0 && h < count; h++)
		if (ref_field(&q, rend, 0, &v, &n) < 0 ||
		    ref_field(&q, rend, 1, &v, &n) < 0)
			want = -KLOG_ECORRUPT;
	if (want == 0 && q != rend)
		want = -KLOG_ECORRUPT;
	CHECK(rc == want);
	if (want < 0)
		return;
	CHECK(r->size == (size_t)(rend - data) && r->timestamp_delta == ts &&
	    r->offset_delta == delta && r->key == key && r->key_len == kn &&
	    r->value == value && r->value_len == vn &&
	    r->header_count == (uint32_t)count);
}

static void
as_record(const uint8_t *data, size_t size)
{
	klog_record_t r, again;
	klog_header_t h, hdrs[64];
	klog_buf_t out;
	size_t pos = 0;
	uint32_t n = 0;
	int rc = klog_record_read(data, size, &r);

	CHECK(rc == 0 || rc == -KLOG_ECORRUPT || rc == -KLOG_EPARTIAL);
	ref_check(data, size, rc, &r);
	if (rc < 0)
		return;
	CHECK(r.size >= 2 && r.size <= size);
	check_inside(r.key, r.key_len, data, size);
	check_inside(r.value, r.value_len, data, size);
	CHECK(r.headers >= data && r.headers + r.headers_len <= data + r.size);
	while (klog_record_header_next(r.headers, r.headers_len, &pos, &h)) {
		check_inside(h.key, (int64_t)h.key_len, data, size);
		check_inside(h.value, h.value_len, data, size);
		if (n < 64)
			hdrs[n] = h;
		n++;
	}
	CHECK(n == r.header_count && pos == r.headers_len);
	if (n > 64)
		return;
	klog_buf_init(&out);
	klog_record_write(&out, r.timestamp_delta, r.offset_delta,
	    &(klog_record_in_t){ r.value, r.value_len < 0 ? 0 :
	    (size_t)r.value_len, r.key, r.key_len < 0 ? 0 : (size_t)r.key_len,
	    0, hdrs, (uint32_t)n });
	CHECK(!out.failed);
	CHECK(klog_record_read(out.data, out.len, &again) == 0);
	CHECK(again.size == out.len && again.timestamp_delta ==
	    r.timestamp_delta && again.offset_delta == r.offset_delta &&
	    again.key_len == r.key_len && again.value_len == r.value_len &&
	    again.header_count == r.header_count);
	if (r.key_len > 0)
		CHECK(memcmp(again.key, r.key, (size_t)r.key_len) == 0);
	if (r.value_len > 0)
		CHECK(memcmp(again.value, r.value, (size_t)r.value_len) == 0);
	/* By fields: a varint may come over-long, and is written short. */
	pos = 0;
	for (uint32_t i = 0; i < n; i++) {
		CHECK(klog_record_header_next(again.headers, again.headers_len,
		    &pos, &h) == 1);
		CHECK(h.key_len == hdrs[i].key_len && memcmp(h.key,
		    hdrs[i].key, h.key_len) == 0);
		CHECK(h.value_len == hdrs[i].value_len);
		if (h.value_len > 0)
			CHECK(memcmp(h.value, hdrs[i].value,
			    (size_t)h.value_len) == 0);
	}
	klog_buf_free(&out);
}

/* Deep iteration of set (the entry at ENTRY_AT) against validation. */
static void
iterate(const uint8_t *set, size_t len)
{
	klog_msgset_info_t info;
	klog_iter_t it;
	klog_msg_t m;
	uint32_t records = 0;
	volatile uint8_t sink = 0;
	int r, v;

	klog_iter_init(&it, set, len, 0, KLOG_ITER_DEEP, MAX_INFLATE);
	CHECK(klog_iter_next(&it, &m) == 1 && m.depth == 0);
	while ((r = klog_iter_next(&it, &m)) == 1) {
		CHECK(m.magic == 2 && m.depth == 1 && m.valid);
		CHECK(m.offset == ENTRY_AT && m.delta == (int32_t)records);
		CHECK(m.batch == set + ENTRY_AT + 10 &&
		    m.batch_len == len - ENTRY_AT - 10);
		CHECK(m.next_offset == ENTRY_AT ||
		    m.next_offset == (int64_t)len);
		/* Every byte handed out is readable (ASan checks). */
		for (uint32_t i = 0; i < m.payload_len; i++)
			sink ^= m.payload[i];
		for (int32_t i = 0; i < m.key_len; i++)
			sink ^= m.key[i];
		for (size_t i = 0; i < m.headers_len; i++)
			sink ^= m.headers[i];
		records++;
	}
	CHECK(r == 0 || r == -KLOG_ECORRUPT || r == -KLOG_EUNSUPPORTED ||
	    r == -KLOG_ETOOBIG);
	CHECK(klog_iter_offset(&it) == (r == 0 ? (int64_t)len : ENTRY_AT));
	if (r == 0)
		CHECK(records >= 1 && m.next_offset == (int64_t)len);
	(void)sink;
	klog_iter_free(&it);
	v = klog_msgset_validate(set, len, KLOG_ITER_DEEP, &info);
	if (r == -KLOG_ETOOBIG)
		return;     /* validate's bound is 64 MiB, not MAX_INFLATE */
	CHECK(v == r);
	if (r == 0)
		CHECK(info.messages == 1 + records && records >= 1);
	else
		CHECK(info.bad_offset == ENTRY_AT && records == 0);
}

static void
as_body(const uint8_t *data, size_t size)
{
	klog_msgset_info_t info;
	size_t len = ENTRY_AT + 10 + size;
	uint8_t *set = malloc(len);

	CHECK(set != NULL);
	CHECK(klog_entry_encode(set, "", 0) == ENTRY_AT);
	klog_put_be32(set + ENTRY_AT, (uint32_t)(6 + size));
	set[ENTRY_AT + 4] = KLOG_MAGIC2;
	if (size > 0)
		memcpy(set + ENTRY_AT + 10, data, size);
	if (size >= KLOG_BATCH_BODY_HEADER) {
		klog_batch_seal(set + ENTRY_AT, len - ENTRY_AT);
		iterate(set, len);
	} else {
		CHECK(klog_msgset_validate(set, len, KLOG_ITER_DEEP, &info) ==
		    -KLOG_ECORRUPT && info.bad_offset == ENTRY_AT);
	}
	free(set);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	as_record(data, size);
	if (size < ((size_t)1 << 20))
		as_body(data, size);
	return 0;
}
