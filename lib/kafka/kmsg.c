/*
 * Kafka MessageSet v0/v1 to and from klog's message sets (kmsg.h).
 *
 * Ingest (a produce request) checks every Kafka message, opens gzip,
 * snappy and lz4 wrappers one level deep and writes each value with
 * nothing else as a plain magic-0 entry, and the ones with a key or a
 * timestamp as the records of magic-2 entries (record.h's builder).
 * Serve (a fetch, the listener's hot path) walks a set read from a
 * segment (plain entries itself, magic-2 ones with kserve.h, anything
 * else with klog_iter_next()) and writes one magic-0 Kafka message per
 * 0.7 message,
 * its CRC derived from the stored one without a pass over the payload
 * (kmsg.h):
 *
 *   +----------+--------+-------+---------+---------+--------+--------+---------+
 *   | offset:8 | size:4 | crc:4 | magic:1 | attrs:1 | key:4  | vlen:4 | value   |
 *   |          | 14 + n |       |    0    |    0    |   -1   |   n    | n bytes |
 *   +----------+--------+-------+---------+---------+--------+--------+---------+
 *      26 bytes of overhead (a 0.7 magic-0 entry has 9: 17 more per message)
 *
 * Every top-level entry's output is reserved once, then written in place;
 * the only allocations are a wrapper's decompressed set (one per wrapper)
 * and the growth of out.
 *
 * Every codec's decompression is storage's (codec.h): a Kafka client's
 * wrapper is opened with klog_codec_inflate(), bounded by max_inflate.
 * Only record batches (Produce v7 and later) may carry zstd: a magic 0 or
 * 1 message compressed with it is refused.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kmsg.h"
#include "klog/kafka/kserve.h"
#include "klog/storage/codec.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define KAFKA_LOG_OVERHEAD 12   /* offset:8 size:4 */
#define KAFKA_MAGIC_AT 16       /* magic's byte in v0, v1 and v2 alike */
#define KAFKA_V0_MIN 14         /* crc magic attrs key:4 value:4 */
#define KAFKA_V1_MIN 22         /* and timestamp:8 */
#define KAFKA_HDR 10            /* magic attrs key:4 vlen:4, what serve
                                   writes before the value */
#define KAFKA_OUT_OVERHEAD (KAFKA_LOG_OVERHEAD + 4 + KAFKA_HDR)

/* The largest payload one 0.7 entry can carry. */
#define MAX_ENTRY_PAYLOAD (KLOG_MAX_ENTRY_LENGTH - KLOG_MAGIC1_HEADER)

/* ---- Ingest ---- */

/* One Kafka message as kafka_parse() found it. */
typedef struct kafka_msg {
	int magic;
	int codec;
	int64_t timestamp;      /* magic 1's; KLOG_NO_TIMESTAMP for magic 0 */
	const uint8_t *key;     /* NULL for a null key */
	size_t key_len;
	const uint8_t *value;   /* NULL for a null value */
	size_t value_len;
} kafka_msg_t;

/*
 * Read a bytes field (int32 length, -1 null) at *p, before end: its start
 * (NULL if null) and length.  -KLOG_ECORRUPT if it does not fit.
 */
static int
kafka_bytes(const uint8_t **p, const uint8_t *end, const uint8_t **v,
    size_t *n)
{
	int32_t len;

	if (end - *p < 4)
		return -KLOG_ECORRUPT;
	len = (int32_t)klog_be32(*p);
	*p += 4;
	if (len == -1) {
		*v = NULL;
		*n = 0;
		return 0;
	}
	if (len < 0 || (size_t)(end - *p) < (size_t)len)
		return -KLOG_ECORRUPT;
	*v = *p;
	*n = (size_t)len;
	*p += len;
	return 0;
}

/*
 * The Kafka message at set[*pos..len): checked (size, magic, CRC, codec,
 * key and value filling it exactly) into *m; *pos moves past it.
 */
static int
kafka_parse(const uint8_t *set, size_t len, size_t *pos, kafka_msg_t *m)
{
	const uint8_t *p = set + *pos, *q, *end;
	size_t left = len - *pos;
	uint32_t size;
	int r;

	if (left > KAFKA_MAGIC_AT && p[KAFKA_MAGIC_AT] == 2)
		return -KLOG_EUNSUPPORTED;
	if (left < KAFKA_LOG_OVERHEAD)
		return -KLOG_ECORRUPT;
	size = klog_be32(p + 8);
	if (size > left - KAFKA_LOG_OVERHEAD || size < KAFKA_V0_MIN)
		return -KLOG_ECORRUPT;
	p += KAFKA_LOG_OVERHEAD;
	end = p + size;
	if (p[4] > 1 || (p[4] == 1 && size < KAFKA_V1_MIN))
		return -KLOG_ECORRUPT;
	if (klog_crc32(0, p + 4, size - 4) != klog_be32(p))
		return -KLOG_ECORRUPT;
	m->magic = p[4];
	m->codec = p[5] & KLOG_KMSG_CODEC_MASK;
	if (m->codec > KLOG_CODEC_ZSTD)
		return -KLOG_ECORRUPT;
	m->timestamp = m->magic == 1 ? (int64_t)((uint64_t)klog_be32(p + 6) <<
	    32 | klog_be32(p + 10)) : KLOG_NO_TIMESTAMP;
	q = p + 6 + (m->magic == 1 ? 8 : 0);
	if ((r = kafka_bytes(&q, end, &m->key, &m->key_len)) < 0 ||
	    (r = kafka_bytes(&q, end, &m->value, &m->value_len)) < 0)
		return r;
	if (q != end)
		return -KLOG_ECORRUPT;
	*pos += KAFKA_LOG_OVERHEAD + size;
	return 0;
}

/* An ingest under way: the magic-2 entry being built, if one is. */
typedef struct ingest_ctx {
	const klog_kingest_t *opt;
	klog_buf_t *out;
	klog_kmsg_in_info_t *info;
	klog_batch_builder_t bb;
	int open;
	int first;              /* bb is the set's first entry */
} ingest_ctx_t;

/* Finish the magic-2 entry being built, stamped under LogAppendTime. */
static int
group_end(ingest_ctx_t *c)
{
	uint8_t *entry, *body;
	klog_batch_t b;

	if (!c->open)
		return 0;
	c->open = 0;
	if (klog_batch_end(&c->bb, c->out) < 0)
		return -KLOG_ENOMEM;
	/* A producer at Produce v0-2 fetches MessageSets, where a lone
	 * record is at its entry's last byte (kserve.h). */
	if (c->first && c->bb.count == 1)
		c->info->first_delta = (int32_t)(c->out->len - c->bb.start) -
		    1;
	c->first = 0;
	if (c->opt->append_time == KLOG_NO_TIMESTAMP)
		return 0;
	entry = c->out->data + c->bb.start;
	body = entry + KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER;
	klog_batch_read(body, KLOG_BATCH_BODY_HEADER, &b);
	b.attributes |= KLOG_BATCH_LOG_APPEND_TIME;
	b.max_timestamp = c->opt->append_time;
	klog_batch_write(body, &b);
	klog_batch_seal(entry, c->out->len - c->bb.start);
	return 0;
}

/* A message with nothing but its value, as one magic-0 entry. */
static int
add_plain(ingest_ctx_t *c, const kafka_msg_t *m)
{
	size_t e = klog_entry_size(m->value_len);
	int r;

	if (m->value_len > c->opt->max_message ||
	    m->value_len > MAX_ENTRY_PAYLOAD)
		return -KLOG_ETOOBIG;
	if ((r = group_end(c)) < 0)
		return r;
	if (klog_buf_reserve(c->out, e) < 0)
		return -KLOG_ENOMEM;
	c->out->len += klog_entry_encode(c->out->data + c->out->len, m->value,
	    m->value_len);
	if (c->info->messages++ == 0)
		c->info->first_delta = (int32_t)e - 1;
	return 0;
}

/* The body of the entry being built, so far. */
static size_t
group_body(const ingest_ctx_t *c)
{
	return c->out->len - c->bb.start - KLOG_LENGTH_SIZE -
	    KLOG_MAGIC2_HEADER;
}

/* m as the next record of the entry being built (one begun if none is
 * or if m does not fit it): 1 if it fits, 0 if not, or an error. */
static int
group_add(ingest_ctx_t *c, const kafka_msg_t *m)
{
	klog_batch_builder_t saved;
	size_t mark = c->out->len;

	if (!c->open) {
		klog_batch_begin(&c->bb, c->out, m->timestamp,
		    KLOG_NO_PRODUCER, -1, -1);
		c->open = 1;
	}
	saved = c->bb;
	klog_batch_add(&c->bb, c->out, &(klog_record_in_t){ m->value,
	    m->value_len, m->key, m->key_len, m->timestamp, NULL, 0 });
	if (c->out->failed)
		return -KLOG_ENOMEM;
	if (group_body(c) <= c->opt->max_message)
		return 1;
	if (saved.count == 0)
		return -KLOG_ETOOBIG;
	c->bb = saved;
	c->out->len = mark;
	return 0;
}

/* A message with a key or a timestamp, as a record of a magic-2 entry,
 * with the ones before it of the same set (timestamped or not alike). */
static int
add_record(ingest_ctx_t *c, const kafka_msg_t *m)
{
	int r;

	if (m->value_len > c->opt->max_message)
		return -KLOG_ETOOBIG;
	if (c->open && (m->timestamp < 0) != (c->bb.first_timestamp < 0) &&
	    (r = group_end(c)) < 0)
		return r;
	if ((r = group_add(c, m)) == 0 && (r = group_end(c)) == 0)
		r = group_add(c, m);
	if (r < 0)
		return r;
	if (c->info->messages++ == 0) {
		c->info->first_delta = 0;
		c->first = 1;
	}
	return 0;
}

static int
add(ingest_ctx_t *c, const kafka_msg_t *m)
{
	if (m->key == NULL && m->timestamp == KLOG_NO_TIMESTAMP)
		return add_plain(c, m);
	return add_record(c, m);
}

/* The inner set of wrapper w: plain messages only, one level deep, a set
 * of its own. */
static int
ingest_wrapper(ingest_ctx_t *c, const kafka_msg_t *w)
{
	kafka_msg_t m;
	uint8_t *set;
	size_t len, pos = 0;
	int r;

	if (w->value == NULL)
		return -KLOG_ECORRUPT;
	if ((r = group_end(c)) < 0 || (r = klog_codec_inflate(w->codec,
	    w->value, w->value_len, c->opt->max_inflate, &set, &len)) < 0)
		return r;
	while (pos < len) {
		if ((r = kafka_parse(set, len, &pos, &m)) < 0) {
			r = -KLOG_ECORRUPT; /* magic 2 inside too */
			break;
		}
		if (m.codec != KLOG_CODEC_NONE) {
			r = -KLOG_ECORRUPT;
			break;
		}
		if ((r = add(c, &m)) < 0)
			break;
	}
	free(set);
	c->info->codec = w->codec;
	return r < 0 ? r : group_end(c);
}

int
klog_kmsg_ingest(const uint8_t *set, size_t len, const klog_kingest_t *opt,
    klog_buf_t *out, klog_kmsg_in_info_t *info)
{
	ingest_ctx_t c = { .opt = opt, .out = out, .info = info };
	size_t start = out->len, pos = 0;
	int failed = out->failed, r = 0;
	kafka_msg_t m;

	memset(info, 0, sizeof(*info));
	while (pos < len) {
		if ((r = kafka_parse(set, len, &pos, &m)) < 0)
			break;
		/* Kafka's rule: zstd needs a record batch. */
		if (m.codec == KLOG_CODEC_ZSTD) {
			info->refused_codec = m.codec;
			r = -KLOG_EUNSUPPORTED;
			break;
		}
		if (m.codec == KLOG_CODEC_NONE)
			r = add(&c, &m);
		else
			r = ingest_wrapper(&c, &m);
		if (r < 0)
			break;
	}
	if (r == 0)
		r = group_end(&c);
	if (r < 0) {
		out->len = start;
		out->failed = failed;
	}
	return r;
}

/* ---- Serve ---- */

/*
 * A Kafka message's CRC covers magic..value, and the value is a stored
 * payload whose CRC-32 its 0.7 entry holds.  CRC-32 is linear: the
 * message's CRC is that of its 10-byte header carried past the n bytes of
 * the value (crc32_combine() with a zero CRC, a function of n alone)
 * xored with the stored CRC, with no pass over the payload.  A fetch
 * carries messages of a few sizes, so that part is remembered by n.
 */
#define CRC_MEMO 64

typedef struct crc_memo {
	uint32_t n[CRC_MEMO];   /* UINT32_MAX: empty */
	uint32_t k[CRC_MEMO];
} crc_memo_t;

/* The memo's slot for n filled in. */
static void
crc_learn(crc_memo_t *cm, size_t slot, uint32_t n)
{
	uint8_t h[KAFKA_HDR] = { 0, 0, 0xff, 0xff, 0xff, 0xff };

	klog_put_be32(h + 6, n);
	cm->n[slot] = n;
	cm->k[slot] = (uint32_t)crc32_combine(klog_crc32(0, h, sizeof(h)), 0,
	    (z_off_t)n);
}

static inline uint32_t
kafka_crc(crc_memo_t *cm, uint32_t n, uint32_t stored)
{
	size_t slot = n % CRC_MEMO;

	if (cm->n[slot] != n)
		crc_learn(cm, slot, n);
	return cm->k[slot] ^ stored;
}

/*
 * One Kafka message at p (KAFKA_OUT_OVERHEAD + n bytes reserved): the
 * header, with the CRC crc, then the value.  Each field is one
 * byte-swapped store: the hot loop writes a header per message.
 */
static void
serve_put(uint8_t *p, int64_t offset, const uint8_t *payload, uint32_t n,
    uint32_t crc)
{
	/* magic 0, attributes 0, key null */
	static const uint8_t mid[6] = { 0, 0, 0xff, 0xff, 0xff, 0xff };
	uint64_t o = htobe64((uint64_t)offset);
	uint32_t w[2] = { htobe32(4 + KAFKA_HDR + n), htobe32(crc) };
	uint32_t len = htobe32(n);

	memcpy(p, &o, sizeof(o));
	memcpy(p + 8, w, sizeof(w));
	memcpy(p + 16, mid, sizeof(mid));
	memcpy(p + 22, &len, sizeof(len));
	if (n > 0)
		memcpy(p + KAFKA_OUT_OVERHEAD, payload, n);
}

/* What the serve_*() functions tell the loop (kserve.h's). */
enum {
	SERVED = KLOG_KSERVE_SERVED, STOP_FULL = KLOG_KSERVE_FULL,
	STOP_BAD = KLOG_KSERVE_BAD, STOP_CUT = KLOG_KSERVE_CUT,
	STOP_BIG = KLOG_KSERVE_BIG,
};

typedef struct serve_ctx {
	klog_kserve_t s;
	uint32_t big;            /* opt->big */
	crc_memo_t crcs;
} serve_ctx_t;

/*
 * The length field of the whole plain entry at p (left bytes there), or 0
 * for anything else: a wrapper, or a cut or corrupt entry, which
 * serve_other() hands to klog_iter_next().  These are that function's
 * checks, inline for the entries that make up nearly every fetch.
 */
static inline uint32_t
plain_length(const uint8_t *p, size_t left)
{
	uint32_t length;

	if (left < KLOG_MSG_OVERHEAD || p[4] > 1)
		return 0;
	length = klog_be32(p);
	if (length < (p[4] ? KLOG_MAGIC1_HEADER : KLOG_MAGIC0_HEADER) ||
	    length > KLOG_MAX_ENTRY_LENGTH || length > left - KLOG_LENGTH_SIZE ||
	    (p[4] == 1 && (p[5] & KLOG_CODEC_MASK) != KLOG_CODEC_NONE))
		return 0;
	return length;
}

/* The plain entry at p, at partition offset at, of length field length. */
static int
serve_plain(serve_ctx_t *c, const uint8_t *p, int64_t at, uint32_t length)
{
	size_t hdr = p[4] == 1 ? KLOG_MAGIC1_HEADER : KLOG_MAGIC0_HEADER;
	uint32_t n = length - (uint32_t)hdr;
	size_t need = KAFKA_OUT_OVERHEAD + (size_t)n;
	int64_t koff = klog_kmsg_offset(at, KLOG_LENGTH_SIZE + length);

	if (koff < c->s.min_offset)
		return SERVED;
	if (klog_kserve_over(&c->s, need))
		return STOP_FULL;
	if (c->s.out->cap - c->s.out->len < need &&
	    klog_buf_reserve(c->s.out, need) < 0)
		return -KLOG_ENOMEM;
	/* The stored CRC is the last 4 bytes of either header. */
	serve_put(c->s.out->data + c->s.out->len, koff,
	    p + KLOG_LENGTH_SIZE + hdr, n,
	    kafka_crc(&c->crcs, n, klog_be32(p + hdr)));
	c->s.out->len += need;
	c->s.messages++;
	return SERVED;
}

/*
 * Kafka offset of inner message j of k in the wrapper *w (kmsg.h):
 * W + min(j, N + 2), the last one W + N + 3.
 */
static int64_t
inner_offset(const klog_msg_t *w, uint32_t j, uint32_t k)
{
	int64_t n = w->length;

	if (j + 1 == k)
		return w->offset + n + 3;
	return w->offset + ((int64_t)j < n + 2 ? (int64_t)j : n + 2);
}

/*
 * The inner set set[0..len) of wrapper *w: a first walk without CRCs checks
 * its shape (whole plain entries) and counts and sizes its messages, the
 * second checks each CRC and writes those at or past min_offset, reserved
 * once.  A bad inner message takes back what the wrapper wrote.
 */
static int
serve_inner(serve_ctx_t *c, const klog_msg_t *w, const uint8_t *set,
    size_t len)
{
	klog_iter_t it;
	klog_msg_t m;
	uint32_t k = 0, j, written = 0;
	size_t total = 0, skipped = 0, mark = c->s.out->len;
	uint8_t *p;
	int64_t koff;
	int r;

	klog_iter_init(&it, set, len, 0, KLOG_ITER_NOCRC, 0);
	while ((r = klog_iter_next(&it, &m)) == 1) {
		/* A nested wrapper, or a batch, which no wrapper holds. */
		if (m.codec != KLOG_CODEC_NONE || m.magic > 1 ||
		    k == UINT32_MAX)
			return STOP_BAD;
		total += KAFKA_OUT_OVERHEAD + (size_t)m.payload_len;
		k++;
	}
	if (r < 0)
		return STOP_BAD;
	klog_iter_init(&it, set, len, 0, 0, 0);
	for (j = 0; klog_iter_next(&it, &m) == 1; j++) {
		if (!m.valid) {
			c->s.out->len = mark;
			return STOP_BAD;
		}
		koff = inner_offset(w, j, k);
		if (koff < c->s.min_offset) {
			skipped += KAFKA_OUT_OVERHEAD + (size_t)m.payload_len;
			continue;
		}
		if (c->s.out->len == mark) {
			if (klog_kserve_over(&c->s, total - skipped))
				return STOP_FULL;
			if (klog_buf_reserve(c->s.out, total - skipped) < 0)
				return -KLOG_ENOMEM;
		}
		p = c->s.out->data + c->s.out->len;
		serve_put(p, koff, m.payload, m.payload_len,
		    kafka_crc(&c->crcs, m.payload_len, m.crc_stored));
		c->s.out->len += KAFKA_OUT_OVERHEAD + (size_t)m.payload_len;
		written++;
	}
	c->s.messages += written;
	return SERVED;
}

static int
serve_wrapper(serve_ctx_t *c, const klog_msg_t *w)
{
	uint32_t before = c->s.messages;
	size_t mark = c->s.out->len;
	uint8_t *set;
	size_t len;
	int r;

	/* Past its last offset, a wrapper is skipped without opening it. */
	if (klog_kmsg_offset(w->offset, KLOG_LENGTH_SIZE + w->length) <
	    c->s.min_offset)
		return SERVED;
	/* It is read whole to be inflated: its CRC is checked first. */
	if (klog_crc32(0, w->payload, w->payload_len) != w->crc_stored)
		return STOP_BAD;
	r = klog_codec_inflate(w->codec, w->payload, w->payload_len,
	    c->s.max_inflate, &set, &len);
	if (r == -KLOG_ENOMEM)
		return r;
	if (r < 0)
		return STOP_BAD;
	r = serve_inner(c, w, set, len);
	free(set);
	if (r != SERVED) {
		c->s.out->len = mark;
		c->s.messages = before;
	}
	return r;
}

/* The magic-2 entry at set + pos (kserve.h), *length its length field:
 * served, left to the caller (big), or cut (info->need set). */
static int
serve_magic2(serve_ctx_t *c, const uint8_t *set, size_t len, int64_t base,
    size_t pos, klog_kmsg_out_info_t *info, uint32_t *length)
{
	uint32_t n = klog_be32(set + pos);

	if (n < KLOG_MAGIC2_HEADER + KLOG_BATCH_BODY_HEADER ||
	    n > KLOG_MAX_ENTRY_LENGTH)
		return STOP_BAD;
	*length = n;
	if (c->big > 0 && n >= c->big)
		return STOP_BIG;
	if (n > len - pos - KLOG_LENGTH_SIZE) {
		info->need = KLOG_LENGTH_SIZE + n;
		return STOP_CUT;
	}
	return klog_kserve_entry(&c->s, set + pos, n, base + (int64_t)pos);
}

/*
 * The entry at set + pos when it is not a whole plain one: a wrapper,
 * served (*length its length field), or a cut entry (info->need set when
 * nothing was served yet) or a corrupt one.
 */
static int
serve_other(serve_ctx_t *c, const uint8_t *set, size_t len, int64_t base,
    size_t pos, klog_kmsg_out_info_t *info, uint32_t *length)
{
	klog_iter_t it;
	klog_msg_t m;
	int r;

	if (len - pos > KLOG_LENGTH_SIZE && set[pos + KLOG_LENGTH_SIZE] ==
	    KLOG_MAGIC2)
		return serve_magic2(c, set, len, base, pos, info, length);
	klog_iter_init(&it, set + pos, len - pos, base + (int64_t)pos,
	    KLOG_ITER_NOCRC, 0);
	r = klog_iter_next(&it, &m);
	klog_iter_free(&it);
	if (r == -KLOG_EPARTIAL) {
		info->need = len - pos < KLOG_LENGTH_SIZE ? KLOG_LENGTH_SIZE :
		    KLOG_LENGTH_SIZE + klog_be32(set + pos);
		return STOP_CUT;
	}
	if (r < 0)
		return STOP_BAD;
	*length = m.length;
	return serve_wrapper(c, &m);
}

int
klog_kmsg_serve(const uint8_t *set, size_t len,
    const klog_kmsg_serve_opt_t *opt, klog_buf_t *out,
    klog_kmsg_out_info_t *info)
{
	serve_ctx_t c = { .s = {
		.min_offset = opt->min_offset, .max_out = opt->max_out,
		.max_inflate = opt->max_inflate, .start = out->len,
		.prior = opt->prior, .out = out, .magic = opt->magic,
	}, .big = opt->magic == 2 ? opt->big : 0 };
	int64_t base = opt->base;
	int failed = out->failed, r = SERVED;
	uint32_t length;

	memset(info, 0, sizeof(*info));
	info->bad_offset = -1;
	memset(c.crcs.n, 0xff, sizeof(c.crcs.n));
	for (size_t pos = 0; pos < len; pos += KLOG_LENGTH_SIZE + length) {
		if ((length = plain_length(set + pos, len - pos)) > 0)
			r = serve_plain(&c, set + pos, base + (int64_t)pos,
			    length);
		else
			r = serve_other(&c, set, len, base, pos, info, &length);
		if (r == -KLOG_ENOMEM) {
			out->len = c.s.start;
			out->failed = failed;
			memset(info, 0, sizeof(*info));
			info->bad_offset = -1;
			return r;
		}
		if (r == STOP_BAD)
			info->bad_offset = base + (int64_t)pos;
		if (r != SERVED)
			break;
		info->consumed = pos + KLOG_LENGTH_SIZE + length;
	}
	info->stop = r;
	info->big_length = r == STOP_BIG ? length : 0;
	info->messages = c.s.messages;
	return 0;
}
