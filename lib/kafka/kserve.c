/*
 * klog's magic-2 entries into Kafka fetch answers (kserve.h): as the
 * record batch they were for Fetch v4 and later, a copy of the stored
 * bytes; as MessageSet messages, one a record, for older fetches, which
 * read the records (inflating them) and compute each message's CRC-32.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kserve.h"
#include "klog/storage/codec.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define BODY_AT (KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER)
#define CRC_AT (KLOG_LENGTH_SIZE + 2)
#define LOG_OVERHEAD 12          /* a MessageSet's offset:8 size:4 */

_Static_assert(KLOG_KSERVE_BODY_AT == BODY_AT, "kserve.h's body");
_Static_assert(KLOG_KSERVE_HEAD == BODY_AT + KLOG_BATCH_BODY_HEADER,
    "kserve.h's head");

int
klog_kserve_magic(int16_t fetch_version)
{
	return fetch_version >= 4 ? 2 : fetch_version >= 2 ? 1 : 0;
}

int
klog_kserve_over(const klog_kserve_t *c, size_t n)
{
	size_t added = c->out->len - c->start + c->prior;

	return added > 0 && (added >= c->max_out || n > c->max_out - added);
}

static void
put_be64(uint8_t *p, int64_t v)
{
	klog_put_be32(p, (uint32_t)((uint64_t)v >> 32));
	klog_put_be32(p + 4, (uint32_t)v);
}

/* The 21-byte prefix of the entry at p, at partition offset at, as the
 * record batch it was (kserve.h's picture). */
static void
put_prefix(uint8_t *q, const uint8_t *p, uint32_t length, int64_t at)
{
	put_be64(q, at);
	klog_put_be32(q + 8, length + 3);
	klog_put_be32(q + 12, UINT32_MAX);    /* no leader epoch */
	q[16] = KLOG_MAGIC2;
	memcpy(q + 17, p + CRC_AT, 4);
}

/* The entry as the record batch it was: its prefix, then its body copied
 * when copy is set, else left for the caller (klog_kserve_head()). */
static int
as_batch(klog_kserve_t *c, const uint8_t *p, uint32_t length, int64_t at,
    int32_t count, int copy)
{
	size_t body = length - KLOG_MAGIC2_HEADER;
	size_t need = KLOG_BATCH_PREFIX + body;

	if (klog_kserve_over(c, need))
		return KLOG_KSERVE_FULL;
	if (klog_buf_reserve(c->out, copy ? need : KLOG_BATCH_PREFIX) < 0)
		return -KLOG_ENOMEM;
	put_prefix(c->out->data + c->out->len, p, length, at);
	c->out->len += KLOG_BATCH_PREFIX;
	if (copy) {
		memcpy(c->out->data + c->out->len, p + BODY_AT, body);
		c->out->len += body;
	}
	c->messages += (uint32_t)count;
	return KLOG_KSERVE_SERVED;
}

/* Records of one entry, read for a MessageSet. */
typedef struct recs {
	const uint8_t *p;            /* the records, inflated */
	size_t len;
	klog_batch_t h;
	int64_t at, last;            /* the entry's offset, its last byte's */
} recs_t;

/* Record i's Kafka offset: the entry's plus i, the last one's E - 1. */
static int64_t
record_offset(const recs_t *rs, int32_t i)
{
	return i + 1 == rs->h.count ? rs->last : rs->at + i;
}

/* Bytes of record r as a message of magic. */
static size_t
message_size(int magic, const klog_record_t *r)
{
	return LOG_OVERHEAD + 4 + 2 + (magic == 1 ? 8 : 0) + 4 +
	    (r->key_len > 0 ? (size_t)r->key_len : 0) + 4 +
	    (r->value_len > 0 ? (size_t)r->value_len : 0);
}

/* Bytes the records at or past the fetch offset take as messages, their
 * framing checked; -1 if it is bad. */
static int64_t
messages_size(const klog_kserve_t *c, const recs_t *rs)
{
	klog_record_t r;
	size_t pos = 0, total = 0;

	for (int32_t i = 0; i < rs->h.count; i++) {
		if (klog_record_read(rs->p + pos, rs->len - pos, &r) < 0 ||
		    r.offset_delta != i)
			return -1;
		if (record_offset(rs, i) >= c->min_offset)
			total += message_size(c->magic, &r);
		pos += r.size;
	}
	return pos == rs->len ? (int64_t)total : -1;
}

static uint8_t *
put_bytes(uint8_t *q, const uint8_t *v, int32_t n)
{
	klog_put_be32(q, (uint32_t)n);
	if (n > 0)
		memcpy(q + 4, v, (size_t)n);
	return q + 4 + (n > 0 ? n : 0);
}

/* Record r, the i-th, as one message at q (message_size() bytes). */
static void
put_message(const klog_kserve_t *c, const recs_t *rs, const klog_record_t *r,
    int32_t i, uint8_t *q)
{
	size_t size = message_size(c->magic, r);
	int append = (rs->h.attributes & KLOG_BATCH_LOG_APPEND_TIME) != 0;
	uint8_t *m = q + LOG_OVERHEAD, *v = m + 4;
	int64_t ts;

	put_be64(q, record_offset(rs, i));
	klog_put_be32(q + 8, (uint32_t)(size - LOG_OVERHEAD));
	*v++ = (uint8_t)c->magic;
	*v++ = c->magic == 1 && append ? KLOG_BATCH_LOG_APPEND_TIME : 0;
	if (c->magic == 1) {
		ts = append ? rs->h.max_timestamp :
		    rs->h.first_timestamp == KLOG_NO_TIMESTAMP ?
		    KLOG_NO_TIMESTAMP : rs->h.first_timestamp +
		    r->timestamp_delta;
		put_be64(v, ts);
		v += 8;
	}
	v = put_bytes(v, r->key, r->key_len);
	v = put_bytes(v, r->value, r->value_len);
	klog_put_be32(m, klog_crc32(0, m + 4, (size_t)(v - m - 4)));
}

/* The records at or past the fetch offset as messages, total bytes. */
static int
put_messages(klog_kserve_t *c, const recs_t *rs, size_t total)
{
	klog_record_t r;
	size_t pos = 0;
	uint8_t *q;

	if (klog_kserve_over(c, total))
		return KLOG_KSERVE_FULL;
	if (klog_buf_reserve(c->out, total) < 0)
		return -KLOG_ENOMEM;
	q = c->out->data + c->out->len;
	for (int32_t i = 0; i < rs->h.count; i++) {
		(void)klog_record_read(rs->p + pos, rs->len - pos, &r);
		pos += r.size;
		if (record_offset(rs, i) < c->min_offset)
			continue;
		put_message(c, rs, &r, i, q);
		q += message_size(c->magic, &r);
		c->messages++;
	}
	c->out->len += total;
	return KLOG_KSERVE_SERVED;
}

/* The entry's records as MessageSet messages. */
static int
as_messages(klog_kserve_t *c, const uint8_t *p, uint32_t length, recs_t *rs)
{
	const uint8_t *body = p + BODY_AT;
	size_t body_len = length - KLOG_MAGIC2_HEADER;
	int codec = rs->h.attributes & KLOG_BATCH_CODEC_MASK;
	uint8_t *plain = NULL;
	int64_t total;
	int r;

	/* Read whole, as a wrapper is: its CRC is checked first. */
	if (klog_crc32c(0, body, body_len) != klog_be32(p + CRC_AT))
		return KLOG_KSERVE_BAD;
	rs->p = body + KLOG_BATCH_BODY_HEADER;
	rs->len = body_len - KLOG_BATCH_BODY_HEADER;
	if (codec != 0) {
		r = klog_codec_inflate(codec, rs->p, rs->len, c->max_inflate,
		    &plain, &rs->len);
		if (r == -KLOG_ENOMEM)
			return r;
		if (r < 0)
			return KLOG_KSERVE_BAD;
		rs->p = plain;
	}
	total = messages_size(c, rs);
	r = total < 0 ? KLOG_KSERVE_BAD : total == 0 ? KLOG_KSERVE_SERVED :
	    put_messages(c, rs, (size_t)total);
	free(plain);
	return r;
}

/* The entry's batch header read and checked into rs: 0, or -1. */
static int
read_head(recs_t *rs, const uint8_t *p, uint32_t length, int64_t at)
{
	rs->at = at;
	rs->last = at + KLOG_LENGTH_SIZE + length - 1;
	if (length < KLOG_MAGIC2_HEADER + KLOG_BATCH_BODY_HEADER ||
	    klog_batch_read(p + BODY_AT, KLOG_BATCH_BODY_HEADER,
	    &rs->h) < 0 || rs->h.count < 1 ||
	    rs->h.count - 1 > (int64_t)length + 3 ||
	    rs->h.last_offset_delta != (int32_t)(length + 3))
		return -1;
	return 0;
}

int
klog_kserve_entry(klog_kserve_t *c, const uint8_t *p, uint32_t length,
    int64_t at)
{
	recs_t rs = { 0 };

	if (read_head(&rs, p, length, at) < 0)
		return KLOG_KSERVE_BAD;
	if (c->magic != 2)
		return as_messages(c, p, length, &rs);
	/* Every record below the fetch offset: skipped unread (the client
	 * would skip them all, and fetch the same offset again). */
	if (at + rs.h.count - 1 < c->min_offset)
		return KLOG_KSERVE_SERVED;
	return as_batch(c, p, length, at, rs.h.count, 1);
}

int
klog_kserve_head(klog_kserve_t *c, const uint8_t *p, uint32_t length,
    int64_t at, size_t *body)
{
	recs_t rs = { 0 };
	int r;

	*body = 0;
	if (c->magic != 2 || read_head(&rs, p, length, at) < 0)
		return KLOG_KSERVE_BAD;
	if (at + rs.h.count - 1 < c->min_offset)
		return KLOG_KSERVE_SERVED;
	if ((r = as_batch(c, p, length, at, rs.h.count, 0)) ==
	    KLOG_KSERVE_SERVED)
		*body = length - KLOG_MAGIC2_HEADER;
	return r;
}
