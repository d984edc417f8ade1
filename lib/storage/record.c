/*
 * A magic-2 entry's body and its records (record.h): Kafka's RecordBatch
 * v2 layout read and written, with no allocation but the growth of the
 * output buffer.  The varints are Kafka's (protobuf's, zigzag-encoded).
 *
 * It includes nothing of format.h: format.c's iterator walks records
 * through batchiter.c, which stands on this.
 */
#include <limits.h>
#include <string.h>

#include <isa-l/crc.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/record.h"

#define LENGTH_SIZE 4            /* an entry's length field (format.h) */
#define VARINT_MAX 5             /* bytes of an int32 varint */
#define VARLONG_MAX 10

uint32_t
klog_crc32c(uint32_t crc, const void *p, size_t len)
{
	const unsigned char *q = p;

	/* ISA-L takes int lengths and leaves the inversions to its caller. */
	crc = ~crc;
	while (len > 0) {
		int chunk = len > (size_t)INT_MAX ? INT_MAX : (int)len;

		crc = crc32_iscsi((unsigned char *)(uintptr_t)q, chunk, crc);
		q += chunk;
		len -= (size_t)chunk;
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
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint64_t
be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static void
put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

int
klog_batch_read(const uint8_t *body, size_t len, klog_batch_t *b)
{
	if (len < KLOG_BATCH_BODY_HEADER)
		return -KLOG_ECORRUPT;
	b->attributes = be16(body + KLOG_BATCH_ATTRS_AT);
	b->last_offset_delta = (int32_t)be32(body +
	    KLOG_BATCH_LAST_DELTA_AT);
	b->first_timestamp = (int64_t)be64(body + KLOG_BATCH_FIRST_TS_AT);
	b->max_timestamp = (int64_t)be64(body + KLOG_BATCH_MAX_TS_AT);
	b->producer_id = (int64_t)be64(body + KLOG_BATCH_PRODUCER_ID_AT);
	b->producer_epoch = (int16_t)be16(body + KLOG_BATCH_EPOCH_AT);
	b->base_sequence = (int32_t)be32(body + KLOG_BATCH_BASE_SEQ_AT);
	b->count = (int32_t)be32(body + KLOG_BATCH_COUNT_AT);
	return 0;
}

void
klog_batch_write(uint8_t *body, const klog_batch_t *b)
{
	put_be16(body + KLOG_BATCH_ATTRS_AT, b->attributes);
	put_be32(body + KLOG_BATCH_LAST_DELTA_AT,
	    (uint32_t)b->last_offset_delta);
	put_be64(body + KLOG_BATCH_FIRST_TS_AT, (uint64_t)b->first_timestamp);
	put_be64(body + KLOG_BATCH_MAX_TS_AT, (uint64_t)b->max_timestamp);
	put_be64(body + KLOG_BATCH_PRODUCER_ID_AT, (uint64_t)b->producer_id);
	put_be16(body + KLOG_BATCH_EPOCH_AT, (uint16_t)b->producer_epoch);
	put_be32(body + KLOG_BATCH_BASE_SEQ_AT,
	    (uint32_t)b->base_sequence);
	put_be32(body + KLOG_BATCH_COUNT_AT, (uint32_t)b->count);
}

/* A zigzag varint's value. */
static inline int64_t
unzig(uint64_t u)
{
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/*
 * The raw (still zigzag-encoded) varint of at most max bytes at *p, before
 * end: 0, or -KLOG_EPARTIAL when end cuts it, -KLOG_ECORRUPT when it is
 * too long.  Inlined everywhere, and most of a record's varints are one
 * byte and its lengths two (under 8 KiB): taken without the loop.  The
 * broker's check of a keyed nginx line went from 267 instructions to 160
 * (callgrind; field() was a call, the two-byte varints the loop).
 */
static inline __attribute__((always_inline)) int
uvarint(const uint8_t **p, const uint8_t *end, int max, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t u = 0;

	if (end - q >= 2) {
		if (q[0] < 0x80) {
			*v = q[0];
			*p = q + 1;
			return 0;
		}
		if (q[1] < 0x80) {
			*v = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
			*p = q + 2;
			return 0;
		}
	}
	for (int i = 0; i < max; i++) {
		uint8_t b;

		if (q == end)
			return -KLOG_EPARTIAL;
		b = *q++;
		u |= (uint64_t)(b & 0x7f) << (7 * i);
		if ((b & 0x80) == 0) {
			*v = u;
			*p = q;
			return 0;
		}
	}
	return -KLOG_ECORRUPT;
}

/* An int32 varint, raw; inside a record, a cut one is corrupt.  A zigzag
 * value is an int32 exactly when its encoding fits 32 bits. */
static inline __attribute__((always_inline)) int
uvarint32(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	if (uvarint(p, end, VARINT_MAX, v) < 0 || *v >> 32 != 0)
		return -KLOG_ECORRUPT;
	return 0;
}

/* A length-prefixed field (-1 null: *v NULL) at *p, before end.  Zigzag's
 * odd values are the negative lengths, 1 the -1 of null. */
static inline __attribute__((always_inline)) int
field(const uint8_t **p, const uint8_t *end, int nullable, const uint8_t **v,
    int32_t *n)
{
	uint64_t u;

	if (uvarint32(p, end, &u) < 0)
		return -KLOG_ECORRUPT;
	if (u & 1) {
		if (u != 1 || !nullable)
			return -KLOG_ECORRUPT;
		*v = NULL;
		*n = -1;
		return 0;
	}
	if ((int64_t)(u >> 1) > end - *p)
		return -KLOG_ECORRUPT;
	*v = *p;
	*n = (int32_t)(u >> 1);
	*p += u >> 1;
	return 0;
}

/* The headers at *p, count of them, before end. */
static int
headers(const uint8_t **p, const uint8_t *end, uint64_t count)
{
	const uint8_t *v;
	int32_t n;

	for (uint64_t h = 0; h < count; h++)
		if (field(p, end, 0, &v, &n) < 0 ||
		    field(p, end, 1, &v, &n) < 0)
			return -KLOG_ECORRUPT;
	return 0;
}

/* klog_record_read(), inlined into the broker's walk of a batch too. */
static inline __attribute__((always_inline)) int
record_read(const uint8_t *p, size_t left, klog_record_t *r)
{
	const uint8_t *q = p, *end = p + left, *rend;
	uint64_t u, ts, delta, count;
	int64_t len;
	int rc;

	if ((rc = uvarint(&q, end, VARINT_MAX, &u)) < 0)
		return rc;
	len = unzig(u);
	if (len < 1 || len > INT32_MAX)
		return -KLOG_ECORRUPT;
	if (len > end - q)
		return -KLOG_EPARTIAL;
	rend = q + len;
	q++;                             /* attributes: none defined */
	/* A count is a non-negative int32: even, under 2^32 zigzagged. */
	if (uvarint(&q, rend, VARLONG_MAX, &ts) < 0 ||
	    uvarint32(&q, rend, &delta) < 0 ||
	    field(&q, rend, 1, &r->key, &r->key_len) < 0 ||
	    field(&q, rend, 1, &r->value, &r->value_len) < 0 ||
	    uvarint32(&q, rend, &count) < 0 || (count & 1))
		return -KLOG_ECORRUPT;
	count >>= 1;
	r->headers = q;
	if ((count > 0 && headers(&q, rend, count) < 0) || q != rend)
		return -KLOG_ECORRUPT;
	r->timestamp_delta = unzig(ts);
	r->offset_delta = (int32_t)unzig(delta);
	r->headers_len = (size_t)(rend - r->headers);
	r->header_count = (uint32_t)count;
	r->size = (size_t)(rend - p);
	return 0;
}

int
klog_record_read(const uint8_t *p, size_t left, klog_record_t *r)
{
	return record_read(p, left, r);
}

/* A call a record and its result's stores were 22% of the broker's check
 * of a keyed nginx line: 34.5 M instructions for 200,000, now 26.7 M
 * (callgrind). */
int
klog_record_scan(const uint8_t *recs, size_t len, int32_t count,
    const char **why)
{
	klog_record_t r;
	size_t pos = 0;

	for (int32_t i = 0; i < count; i++) {
		if (record_read(recs + pos, len - pos, &r) < 0) {
			*why = "malformed record inside batch";
			return -KLOG_ECORRUPT;
		}
		if (r.offset_delta != i) {
			*why = "record offset delta out of order";
			return -KLOG_ECORRUPT;
		}
		pos += r.size;
	}
	if (pos != len) {
		*why = "records do not match the batch's count";
		return -KLOG_ECORRUPT;
	}
	return 0;
}

int
klog_record_header_next(const uint8_t *hdrs, size_t len, size_t *pos,
    klog_header_t *h)
{
	const uint8_t *p, *end, *k;
	int32_t kn;

	/* A record without headers may have hdrs NULL: no arithmetic on it. */
	if (*pos >= len)
		return 0;
	p = hdrs + *pos;
	end = hdrs + len;
	if (field(&p, end, 0, &k, &kn) < 0 ||
	    field(&p, end, 1, &h->value, &h->value_len) < 0)
		return 0;
	h->key = k;
	h->key_len = (size_t)kn;
	*pos = (size_t)(p - hdrs);
	return 1;
}

/* v zigzag-encoded. */
static inline uint64_t
zig(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* Bytes of the varint of u (encoded), 7 bits a byte: one and two (a
 * record's small numbers, its lengths under 8 KiB) tested first. */
static inline size_t
uvarint_size(uint64_t u)
{
	size_t n = 2;

	if (u < 0x80)
		return 1;
	for (u >>= 14; u != 0; u >>= 7)
		n++;
	return n;
}

/* The varint of u (encoded) at p; returns its size.  One and two bytes
 * (a record's small numbers, its lengths under 8 KiB) without the loop. */
static inline __attribute__((always_inline)) size_t
uvarint_put(uint8_t *p, uint64_t u)
{
	size_t n = 0;

	if (u < 0x80) {
		p[0] = (uint8_t)u;
		return 1;
	}
	if (u < 0x4000) {
		p[0] = (uint8_t)(u | 0x80);
		p[1] = (uint8_t)(u >> 7);
		return 2;
	}
	while (u >= 0x80) {
		p[n++] = (uint8_t)(u | 0x80);
		u >>= 7;
	}
	p[n++] = (uint8_t)u;
	return n;
}

/* n bytes from v to p: keys are short, and two overlapping moves of 4 or
 * 8 bytes are cheaper than a call to memcpy (17 instructions less a
 * keyed nginx line, callgrind). */
static inline __attribute__((always_inline)) void
copy(uint8_t *p, const uint8_t *v, size_t n)
{
	if (n >= 8 && n <= 16) {
		memcpy(p, v, 8);
		memcpy(p + n - 8, v + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(p, v, 4);
		memcpy(p + n - 4, v + n - 4, 4);
	} else if (n > 0) {
		memcpy(p, v, n);         /* v may be NULL when n is 0 */
	}
}

static inline __attribute__((always_inline)) size_t
field_put(uint8_t *p, const void *v, int32_t n)
{
	size_t k = uvarint_put(p, zig(n));

	if (n <= 0)
		return k;
	copy(p + k, v, (size_t)n);
	return k + (size_t)n;
}

/* rec's body (all but its length) at p; returns its end. */
static inline __attribute__((always_inline)) uint8_t *
body_put(uint8_t *p, int64_t timestamp_delta, int32_t offset_delta,
    const klog_record_in_t *rec)
{
	*p++ = 0;
	p += uvarint_put(p, zig(timestamp_delta));
	p += uvarint_put(p, zig(offset_delta));
	p += field_put(p, rec->key, rec->key == NULL ? -1 :
	    (int32_t)rec->key_len);
	p += field_put(p, rec->value, rec->value == NULL ? -1 :
	    (int32_t)rec->value_len);
	p += uvarint_put(p, zig(rec->header_count));
	for (uint32_t i = 0; i < rec->header_count; i++) {
		const klog_header_t *h = &rec->headers[i];

		p += field_put(p, h->key, (int32_t)h->key_len);
		p += field_put(p, h->value, h->value == NULL ? -1 :
		    h->value_len);
	}
	return p;
}

/* The most bytes rec's body (all but its length) can take. */
static inline size_t
body_bound(const klog_record_in_t *rec)
{
	size_t bound = 1 + VARLONG_MAX + 4 * VARINT_MAX +
	    (rec->key != NULL ? rec->key_len : 0) +
	    (rec->value != NULL ? rec->value_len : 0);

	for (uint32_t i = 0; i < rec->header_count; i++)
		bound += 2 * VARINT_MAX + rec->headers[i].key_len +
		    (rec->headers[i].value != NULL &&
		    rec->headers[i].value_len > 0 ?
		    (size_t)rec->headers[i].value_len : 0);
	return bound;
}

/*
 * The record into out, in one pass: its length's varint guessed from a
 * bound on the body (moved in the rare case the guess was long), the
 * room checked here and klog_buf_reserve() called only to grow.  A
 * keyed nginx line took 258 instructions with every size computed
 * before the writing, and takes about 185 (callgrind).
 */
static inline __attribute__((always_inline)) void
record_put(klog_buf_t *out, int64_t timestamp_delta, int32_t offset_delta,
    const klog_record_in_t *rec)
{
	size_t bound = body_bound(rec), guess, len, k;
	uint8_t *start, *body;

	guess = uvarint_size(bound << 1);
	if ((out->failed || out->cap - out->len < guess + bound) &&
	    klog_buf_reserve(out, guess + bound) < 0)
		return;
	start = out->data + out->len;
	body = start + guess;
	len = (size_t)(body_put(body, timestamp_delta, offset_delta, rec) -
	    body);
	if ((k = uvarint_size(len << 1)) != guess)
		memmove(start + k, body, len);
	uvarint_put(start, len << 1);
	out->len += k + len;
}

void
klog_record_write(klog_buf_t *out, int64_t timestamp_delta,
    int32_t offset_delta, const klog_record_in_t *rec)
{
	record_put(out, timestamp_delta, offset_delta, rec);
}

void
klog_batch_begin(klog_batch_builder_t *bb, klog_buf_t *out,
    int64_t first_timestamp, int64_t producer_id, int16_t epoch,
    int32_t base_sequence)
{
	static const uint8_t zero[LENGTH_SIZE + KLOG_MAGIC2_HEADER +
	    KLOG_BATCH_BODY_HEADER];

	*bb = (klog_batch_builder_t){ .start = out->len,
	    .first_timestamp = first_timestamp,
	    .max_timestamp = first_timestamp,
	    .fields = { .producer_id = producer_id, .producer_epoch = epoch,
	    .base_sequence = base_sequence } };
	klog_buf_put(out, zero, sizeof(zero));
}

void
klog_batch_add(klog_batch_builder_t *bb, klog_buf_t *out,
    const klog_record_in_t *rec)
{
	int64_t ts = rec->timestamp;

	if (ts > bb->max_timestamp)
		bb->max_timestamp = ts;
	record_put(out, bb->first_timestamp < 0 || ts < 0 ? 0 :
	    ts - bb->first_timestamp, bb->count++, rec);
}

int
klog_batch_end(klog_batch_builder_t *bb, klog_buf_t *out)
{
	uint8_t *entry;
	size_t size;
	klog_batch_t b = bb->fields;

	if (out->failed)
		return -KLOG_ENOMEM;
	entry = out->data + bb->start;
	size = out->len - bb->start;
	b.count = bb->count;
	b.first_timestamp = bb->first_timestamp;
	b.max_timestamp = bb->max_timestamp;
	put_be32(entry, (uint32_t)(size - LENGTH_SIZE));
	entry[LENGTH_SIZE] = KLOG_MAGIC2;
	klog_batch_write(entry + LENGTH_SIZE + KLOG_MAGIC2_HEADER, &b);
	klog_batch_seal(entry, size);
	return 0;
}

void
klog_batch_seal(uint8_t *entry, size_t size)
{
	uint8_t *body = entry + LENGTH_SIZE + KLOG_MAGIC2_HEADER;
	size_t body_len = size - LENGTH_SIZE - KLOG_MAGIC2_HEADER;
	uint32_t length = (uint32_t)(size - LENGTH_SIZE);

	put_be32(body + KLOG_BATCH_LAST_DELTA_AT, length + 3);
	entry[LENGTH_SIZE + 1] = body[KLOG_BATCH_ATTRS_AT + 1];
	put_be32(entry + LENGTH_SIZE + 2,
	    klog_crc32c(0, body, body_len));
}
