/*
 * Kafka MessageSet v0/v1 to and from klog's 0.7 message sets (kmsg.h).
 *
 * Ingest (a produce request) checks every Kafka message, opens gzip,
 * snappy and lz4 wrappers one level deep and writes each value as a plain
 * magic-0 entry.  Serve (a fetch, the listener's hot path) walks a 0.7 set
 * read from a segment (plain entries itself, anything else with
 * klog_iter_next()) and writes one magic-0 Kafka message per 0.7 message,
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
#include "klog/storage/codec.h"
#include "klog/storage/format.h"

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
	int codec;
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
	const uint8_t *p = set + *pos, *q, *end, *key;
	size_t left = len - *pos, keylen;
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
	m->codec = p[5] & KLOG_KMSG_CODEC_MASK;
	if (m->codec > KLOG_CODEC_ZSTD)
		return -KLOG_ECORRUPT;
	q = p + 6 + (p[4] == 1 ? 8 : 0);
	if ((r = kafka_bytes(&q, end, &key, &keylen)) < 0 ||
	    (r = kafka_bytes(&q, end, &m->value, &m->value_len)) < 0)
		return r;
	if (q != end)
		return -KLOG_ECORRUPT;
	*pos += KAFKA_LOG_OVERHEAD + size;
	return 0;
}

int
klog_kmsg_add(const uint8_t *value, size_t n, size_t max_payload,
    klog_buf_t *out, klog_kmsg_in_info_t *info)
{
	size_t e = klog_entry_size(n);

	if (n > max_payload || n > MAX_ENTRY_PAYLOAD)
		return -KLOG_ETOOBIG;
	if (klog_buf_reserve(out, e) < 0)
		return -KLOG_ENOMEM;
	out->len += klog_entry_encode(out->data + out->len, value, n);
	if (info->messages++ == 0)
		info->first_entry = (uint32_t)e;
	return 0;
}

/* The inner set of wrapper w: plain messages only, one level deep. */
static int
ingest_wrapper(const kafka_msg_t *w, size_t max_payload, size_t max_inflate,
    klog_buf_t *out, klog_kmsg_in_info_t *info)
{
	kafka_msg_t m;
	uint8_t *set;
	size_t len, pos = 0;
	int r;

	if (w->value == NULL)
		return -KLOG_ECORRUPT;
	if ((r = klog_codec_inflate(w->codec, w->value, w->value_len,
	    max_inflate, &set, &len)) < 0)
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
		if ((r = klog_kmsg_add(m.value, m.value_len, max_payload, out,
		    info)) < 0)
			break;
	}
	free(set);
	info->codec = w->codec;
	return r;
}

int
klog_kmsg_ingest(const uint8_t *set, size_t len, size_t max_payload,
    size_t max_inflate, klog_buf_t *out, klog_kmsg_in_info_t *info)
{
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
			r = klog_kmsg_add(m.value, m.value_len, max_payload,
			    out, info);
		else
			r = ingest_wrapper(&m, max_payload, max_inflate, out,
			    info);
		if (r < 0)
			break;
	}
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

/* What the serve_*() functions tell the loop. */
enum { SERVED = 0, STOP_FULL = 1, STOP_BAD = 2, STOP_CUT = 3 };

typedef struct serve_ctx {
	int64_t min_offset;
	size_t max_out;
	size_t max_inflate;
	size_t start;           /* out->len at the call */
	klog_buf_t *out;
	uint32_t messages;
	crc_memo_t crcs;
} serve_ctx_t;

/* Would adding n more bytes break max_out?  Never for the first output. */
static int
over_budget(const serve_ctx_t *c, size_t n)
{
	size_t added = c->out->len - c->start;

	return added > 0 && (added >= c->max_out || n > c->max_out - added);
}

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

	if (koff < c->min_offset)
		return SERVED;
	if (over_budget(c, need))
		return STOP_FULL;
	if (c->out->cap - c->out->len < need &&
	    klog_buf_reserve(c->out, need) < 0)
		return -KLOG_ENOMEM;
	/* The stored CRC is the last 4 bytes of either header. */
	serve_put(c->out->data + c->out->len, koff, p + KLOG_LENGTH_SIZE + hdr,
	    n, kafka_crc(&c->crcs, n, klog_be32(p + hdr)));
	c->out->len += need;
	c->messages++;
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
	size_t total = 0, skipped = 0, mark = c->out->len;
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
			c->out->len = mark;
			return STOP_BAD;
		}
		koff = inner_offset(w, j, k);
		if (koff < c->min_offset) {
			skipped += KAFKA_OUT_OVERHEAD + (size_t)m.payload_len;
			continue;
		}
		if (c->out->len == mark) {
			if (over_budget(c, total - skipped))
				return STOP_FULL;
			if (klog_buf_reserve(c->out, total - skipped) < 0)
				return -KLOG_ENOMEM;
		}
		p = c->out->data + c->out->len;
		serve_put(p, koff, m.payload, m.payload_len,
		    kafka_crc(&c->crcs, m.payload_len, m.crc_stored));
		c->out->len += KAFKA_OUT_OVERHEAD + (size_t)m.payload_len;
		written++;
	}
	c->messages += written;
	return SERVED;
}

static int
serve_wrapper(serve_ctx_t *c, const klog_msg_t *w)
{
	uint32_t before = c->messages;
	size_t mark = c->out->len;
	uint8_t *set;
	size_t len;
	int r;

	/* Past its last offset, a wrapper is skipped without opening it. */
	if (klog_kmsg_offset(w->offset, KLOG_LENGTH_SIZE + w->length) <
	    c->min_offset)
		return SERVED;
	/* It is read whole to be inflated: its CRC is checked first. */
	if (klog_crc32(0, w->payload, w->payload_len) != w->crc_stored)
		return STOP_BAD;
	r = klog_codec_inflate(w->codec, w->payload, w->payload_len,
	    c->max_inflate, &set, &len);
	if (r == -KLOG_ENOMEM)
		return r;
	if (r < 0)
		return STOP_BAD;
	r = serve_inner(c, w, set, len);
	free(set);
	if (r != SERVED) {
		c->out->len = mark;
		c->messages = before;
	}
	return r;
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

	klog_iter_init(&it, set + pos, len - pos, base + (int64_t)pos,
	    KLOG_ITER_NOCRC, 0);
	r = klog_iter_next(&it, &m);
	klog_iter_free(&it);
	if (r == -KLOG_EPARTIAL) {
		if (c->messages == 0)
			info->need = len - pos < KLOG_LENGTH_SIZE ?
			    KLOG_LENGTH_SIZE : KLOG_LENGTH_SIZE +
			    klog_be32(set + pos);
		return STOP_CUT;
	}
	if (r < 0)
		return STOP_BAD;
	*length = m.length;
	return serve_wrapper(c, &m);
}

int
klog_kmsg_serve(const uint8_t *set, size_t len, int64_t base,
    int64_t min_offset, size_t max_out, size_t max_inflate, klog_buf_t *out,
    klog_kmsg_out_info_t *info)
{
	serve_ctx_t c = {
		.min_offset = min_offset, .max_out = max_out,
		.max_inflate = max_inflate, .start = out->len, .out = out,
	};
	int failed = out->failed, r;
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
			out->len = c.start;
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
	info->messages = c.messages;
	return 0;
}
