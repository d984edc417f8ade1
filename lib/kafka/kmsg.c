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
 * Snappy comes in two shapes: raw (one snappy block, as librdkafka writes
 * it) and xerial framed (snappy-java's SnappyOutputStream, which Kafka 0.7
 * stores and kafka-python writes):
 *
 *   +------------------+-----------+----------+---------------------------+
 *   | "\x82SNAPPY\0":8 | version:4 | compat:4 | [ length:4 | block ]* ... |
 *   +------------------+-----------+----------+---------------------------+
 *
 * Like snappy-java's SnappyInputStream, anything without the header is
 * read as one raw block, and a header met again between blocks (streams
 * written one after another) is skipped.
 *
 * LZ4 is one LZ4 frame.  Kafka's magic-0 lz4 wrappers (0.8 to 0.9, and
 * librdkafka's, which copies them on purpose) carry a wrong header checksum
 * (KAFKA-3160: computed over the magic number too).  librdkafka rewrites
 * that byte with XXH32; liblz4 does not export its XXH32 publicly, so when
 * LZ4F reports a bad header checksum the right byte is taken from the header
 * LZ4F_compressBegin() writes for the same frame settings, and the frame is
 * decoded again with it.  That costs an allocation or two, only on that path.
 *
 * Zstandard (codec 4) is one or more zstd frames, read with the streaming
 * API: a frame need not say its content size (Kafka's Java producer's do
 * not), and a frame that says a small one cannot make it write past the
 * buffer grown so far.  Only record batches (Produce v7 and later) may
 * carry it: a magic 0 or 1 message compressed with it is refused.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kmsg.h"
#include "klog/storage/format.h"

#define KAFKA_LOG_OVERHEAD 12   /* offset:8 size:4 */
#define KAFKA_MAGIC_AT 16       /* magic's byte in v0, v1 and v2 alike */
#define KAFKA_V0_MIN 14         /* crc magic attrs key:4 value:4 */
#define KAFKA_V1_MIN 22         /* and timestamp:8 */
#define KAFKA_HDR 10            /* magic attrs key:4 vlen:4, what serve
                                   writes before the value */
#define KAFKA_OUT_OVERHEAD (KAFKA_LOG_OVERHEAD + 4 + KAFKA_HDR)

#define KAFKA_CODEC_NONE 0
#define KAFKA_CODEC_GZIP 1
#define KAFKA_CODEC_SNAPPY 2
#define KAFKA_CODEC_LZ4 3
#define KAFKA_CODEC_ZSTD 4

#define XERIAL_HEADER 16
#define FIRST_CAP 4096

/* The largest payload one 0.7 entry can carry. */
#define MAX_ENTRY_PAYLOAD (KLOG_MAX_ENTRY_LENGTH - KLOG_MAGIC1_HEADER)

static const uint8_t xerial_magic[8] = {
	0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0,
};

/* ---- Decompression: each returns a new buffer the caller frees. ---- */

/* One raw snappy block into *out, refusing more than max bytes. */
static int
snappy_raw(const uint8_t *in, size_t len, size_t max, uint8_t **out,
    size_t *outlen)
{
	size_t n;

	if (snappy_uncompressed_length((const char *)in, len, &n) != SNAPPY_OK)
		return -KLOG_ECORRUPT;
	if (n > max)
		return -KLOG_ETOOBIG;
	if ((*out = malloc(n ? n : 1)) == NULL)
		return -KLOG_ENOMEM;
	if (snappy_uncompress((const char *)in, len, (char *)*out, &n) !=
	    SNAPPY_OK) {
		free(*out);
		*out = NULL;
		return -KLOG_ECORRUPT;
	}
	*outlen = n;
	return 0;
}

static int
xerial_header_at(const uint8_t *p, size_t left)
{
	return left >= XERIAL_HEADER &&
	    memcmp(p, xerial_magic, sizeof(xerial_magic)) == 0;
}

/*
 * Walk the blocks of a xerial stream: with dst NULL, add their sizes up into
 * *total (refusing past max); else decode them into dst.
 */
static int
xerial_blocks(const uint8_t *in, size_t len, size_t max, uint8_t *dst,
    size_t *total)
{
	size_t pos = 0, n, have = 0;
	uint32_t blen;

	while (pos < len) {
		if (xerial_header_at(in + pos, len - pos)) {
			pos += XERIAL_HEADER;
			continue;
		}
		if (len - pos < 4)
			return -KLOG_ECORRUPT;
		blen = klog_be32(in + pos);
		pos += 4;
		if (blen > len - pos || snappy_uncompressed_length(
		    (const char *)in + pos, blen, &n) != SNAPPY_OK)
			return -KLOG_ECORRUPT;
		if (dst == NULL && n > max - have)
			return -KLOG_ETOOBIG;
		if (dst != NULL && (snappy_uncompress((const char *)in + pos,
		    blen, (char *)dst + have, &n) != SNAPPY_OK))
			return -KLOG_ECORRUPT;
		have += n;
		pos += blen;
	}
	*total = have;
	return 0;
}

static int
snappy_unwrap(const uint8_t *in, size_t len, size_t max, uint8_t **out,
    size_t *outlen)
{
	size_t n;
	int r;

	if (!xerial_header_at(in, len))
		return snappy_raw(in, len, max, out, outlen);
	if ((r = xerial_blocks(in, len, max, NULL, &n)) < 0)
		return r;
	if ((*out = malloc(n ? n : 1)) == NULL)
		return -KLOG_ENOMEM;
	if ((r = xerial_blocks(in, len, max, *out, outlen)) < 0) {
		free(*out);
		*out = NULL;
	}
	return r;
}

/*
 * The header LZ4F_compressBegin() writes for the frame settings of in's
 * header, into fix (LZ4F_HEADER_SIZE_MAX bytes); its length, or 0 if in's
 * header cannot be rebuilt byte for byte but for the checksum.
 */
static size_t
lz4_fixed_header(const uint8_t *in, size_t len, uint8_t *fix)
{
	LZ4F_preferences_t prefs;
	LZ4F_cctx *cctx;
	size_t hlen, w;
	uint8_t flg;

	if (len < 7 || ((flg = in[4]) >> 6) != 1)
		return 0;
	hlen = 7 + ((flg & 0x08) ? 8 : 0) + ((flg & 0x01) ? 4 : 0);
	if (len < hlen)
		return 0;
	memset(&prefs, 0, sizeof(prefs));
	prefs.autoFlush = 1;
	prefs.frameInfo.blockSizeID = (LZ4F_blockSizeID_t)((in[5] >> 4) & 7);
	prefs.frameInfo.blockMode = (flg & 0x20) ? LZ4F_blockIndependent :
	    LZ4F_blockLinked;
	prefs.frameInfo.blockChecksumFlag = (flg & 0x10) ?
	    LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum;
	prefs.frameInfo.contentChecksumFlag = (flg & 0x04) ?
	    LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
	for (w = 0; (flg & 0x08) && w < 8; w++)
		prefs.frameInfo.contentSize |= (unsigned long long)in[6 + w] <<
		    (8 * w);
	for (w = 0; (flg & 0x01) && w < 4; w++)
		prefs.frameInfo.dictID |= (unsigned)in[hlen - 5 + w] << (8 * w);
	if (LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION)))
		return 0;
	w = LZ4F_compressBegin(cctx, fix, LZ4F_HEADER_SIZE_MAX, &prefs);
	LZ4F_freeCompressionContext(cctx);
	if (LZ4F_isError(w) || w != hlen || memcmp(fix, in, hlen - 1) != 0)
		return 0;
	return hlen;
}

/*
 * Decode the one LZ4 frame in[0..len) (its first fixlen bytes replaced by
 * fix[] when fixlen > 0) into a buffer grown up to max bytes; at the
 * limit, LZ4F writes into a one-byte spare, and a byte there is over it.
 * *bad_hc tells a header checksum error from other corruption.
 */
static int
lz4_decode(const uint8_t *in, size_t len, const uint8_t *fix, size_t fixlen,
    size_t max, uint8_t **out, size_t *outlen, int *bad_hc)
{
	LZ4F_dctx *dctx;
	const uint8_t *src = fixlen ? fix : in;
	size_t left = fixlen ? fixlen : len, cap = 0, have = 0, dsz, ssz, hint;
	uint8_t *buf = NULL, *nbuf, spare, *dst;
	int r, at_limit;

	if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
		return -KLOG_ENOMEM;
	for (;;) {
		if (have == cap && cap < max) {
			dsz = cap ? (cap < max / 2 ? cap * 2 : max) :
			    (max < FIRST_CAP ? max : FIRST_CAP);
			if ((nbuf = realloc(buf, dsz)) == NULL) {
				r = -KLOG_ENOMEM;
				goto out;
			}
			buf = nbuf;
			cap = dsz;
		}
		at_limit = have == cap;
		dst = at_limit ? &spare : buf + have;
		dsz = at_limit ? 1 : cap - have;
		ssz = left;
		hint = LZ4F_decompress(dctx, dst, &dsz, src, &ssz, NULL);
		if (LZ4F_isError(hint)) {
			*bad_hc = strcmp(LZ4F_getErrorName(hint),
			    "ERROR_headerChecksum_invalid") == 0;
			r = -KLOG_ECORRUPT;
			goto out;
		}
		if (at_limit && dsz > 0) {
			r = -KLOG_ETOOBIG;
			goto out;
		}
		if (!at_limit)
			have += dsz;
		src += ssz;
		left -= ssz;
		if (hint == 0)
			break;
		if (ssz == 0 && dsz == 0 && left > 0) {
			r = -KLOG_ECORRUPT;     /* no progress: never loop */
			goto out;
		}
		if (left == 0 && fixlen > 0 && src == fix + fixlen) {
			src = in + fixlen;
			left = len - fixlen;
		} else if (left == 0 && dsz == 0) {
			r = -KLOG_ECORRUPT;     /* the frame is cut */
			goto out;
		}
	}
	/* Bytes after the frame: not what a Kafka producer writes. */
	if (left > 0 || (fixlen > 0 && src == fix + fixlen && len > fixlen)) {
		r = -KLOG_ECORRUPT;
		goto out;
	}
	*out = buf;
	*outlen = have;
	buf = NULL;
	r = 0;
out:
	LZ4F_freeDecompressionContext(dctx);
	free(buf);
	return r;
}

static int
lz4_unwrap(const uint8_t *in, size_t len, size_t max, uint8_t **out,
    size_t *outlen)
{
	uint8_t fix[LZ4F_HEADER_SIZE_MAX];
	size_t fixlen;
	int r, bad_hc = 0;

	r = lz4_decode(in, len, NULL, 0, max, out, outlen, &bad_hc);
	if (r != -KLOG_ECORRUPT || !bad_hc)
		return r;
	if ((fixlen = lz4_fixed_header(in, len, fix)) == 0)
		return r;
	return lz4_decode(in, len, fix, fixlen, max, out, outlen, &bad_hc);
}

/*
 * Decode the zstd frames in[0..len) into a buffer grown up to max bytes,
 * as lz4_decode() does; the window a frame asks for is zstd's to allocate,
 * within its default limit (128 MiB, touched only as far as it is written).
 */
static int
zstd_unwrap(const uint8_t *in, size_t len, size_t max, uint8_t **out,
    size_t *outlen)
{
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	ZSTD_inBuffer src = { in, len, 0 };
	ZSTD_outBuffer dst;
	size_t cap = 0, have = 0, hint = 1, dsz;
	uint8_t *buf = NULL, *nbuf, spare;
	int r, at_limit;

	if (dctx == NULL)
		return -KLOG_ENOMEM;
	while (src.pos < src.size || hint != 0) {
		if (have == cap && cap < max) {
			dsz = cap ? (cap < max / 2 ? cap * 2 : max) :
			    (max < FIRST_CAP ? max : FIRST_CAP);
			if ((nbuf = realloc(buf, dsz)) == NULL) {
				r = -KLOG_ENOMEM;
				goto out;
			}
			buf = nbuf;
			cap = dsz;
		}
		at_limit = have == cap;
		dst = (ZSTD_outBuffer){ at_limit ? &spare : buf + have,
		    at_limit ? 1 : cap - have, 0 };
		hint = ZSTD_decompressStream(dctx, &dst, &src);
		if (ZSTD_isError(hint)) {
			r = -KLOG_ECORRUPT;
			goto out;
		}
		if (at_limit && dst.pos > 0) {
			r = -KLOG_ETOOBIG;
			goto out;
		}
		have += at_limit ? 0 : dst.pos;
		/* Input all read, room left, and the frame not done: cut
		 * (no input at all too). */
		if (src.pos == src.size && hint != 0 && dst.pos < dst.size) {
			r = -KLOG_ECORRUPT;
			goto out;
		}
	}
	*out = buf;
	*outlen = have;
	buf = NULL;
	r = 0;
out:
	ZSTD_freeDCtx(dctx);
	free(buf);
	return r;
}

int
klog_kmsg_inflate(int codec, const uint8_t *in, size_t len, size_t max,
    uint8_t **out, size_t *outlen)
{
	*out = NULL;
	*outlen = 0;
	switch (codec) {
	case KAFKA_CODEC_GZIP:
		return klog_gunzip(in, len, max, out, outlen);
	case KAFKA_CODEC_SNAPPY:
		return snappy_unwrap(in, len, max, out, outlen);
	case KAFKA_CODEC_LZ4:
		return lz4_unwrap(in, len, max, out, outlen);
	case KAFKA_CODEC_ZSTD:
		return zstd_unwrap(in, len, max, out, outlen);
	default:
		return -KLOG_ECORRUPT;
	}
}

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
	if (m->codec > KAFKA_CODEC_ZSTD)
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
	if ((r = klog_kmsg_inflate(w->codec, w->value, w->value_len,
	    max_inflate, &set, &len)) < 0)
		return r;
	while (pos < len) {
		if ((r = kafka_parse(set, len, &pos, &m)) < 0) {
			r = -KLOG_ECORRUPT; /* magic 2 inside too */
			break;
		}
		if (m.codec != KAFKA_CODEC_NONE) {
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
		if (m.codec == KAFKA_CODEC_ZSTD) {
			info->refused_codec = m.codec;
			r = -KLOG_EUNSUPPORTED;
			break;
		}
		if (m.codec == KAFKA_CODEC_NONE)
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
		if (m.codec != KLOG_CODEC_NONE || k == UINT32_MAX)
			return STOP_BAD;        /* a nested wrapper */
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
	r = klog_kmsg_inflate(w->codec, w->payload, w->payload_len,
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
