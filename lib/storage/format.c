/*
 * Kafka 0.7 message sets: encoding, gzip wrappers, iteration, validation.
 *
 * The hot path is klog_iter_next() on uncompressed entries and
 * klog_msgset_validate(): both parse a header, run klog_crc32() over the
 * payload and move on, with no allocation.  Only opening a gzip wrapper
 * allocates (one buffer per wrapper, owned by the iterator).
 *
 * A wrapper inside a wrapper is not opened: Kafka 0.7's iterator would
 * recurse, but no producer builds such sets, and recursion would make the
 * offset rules and the inflate budget murky.  A nested wrapper is reported as
 * an ordinary inner message (depth 1) carrying its codec, so a reader can
 * still see it and decide.
 *
 * The bits of a magic-1 attributes byte above the codec are ignored, as in
 * Kafka 0.7 (it only masks the codec).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <zlib.h>

#include "klog/base/error.h"
#include "klog/storage/format.h"

#define DEFAULT_MAX_INFLATE ((size_t)64 << 20)
#define GZIP_WINDOW (15 + 16) /* zlib's windowBits for gzip framing */
#define CODEC_INVALID 3

const char *
klog_codec_name(int codec)
{
	switch (codec) {
	case KLOG_CODEC_NONE:
		return "none";
	case KLOG_CODEC_GZIP:
		return "gzip";
	case KLOG_CODEC_SNAPPY:
		return "snappy";
	default:
		return "invalid";
	}
}

uint32_t
klog_crc32(uint32_t crc, const void *p, size_t len)
{
	return libdeflate_crc32(crc, p, len);
}

static uint32_t
crc_of(const uint8_t *p, uint32_t len)
{
	return klog_crc32(0, p, len);
}

uint32_t
klog_entry_header_ok(const uint8_t *p, size_t left)
{
	uint32_t length;

	if (left <= KLOG_LENGTH_SIZE || p[4] > 1)
		return 0;
	length = klog_be32(p);
	if (length < (p[4] == 1 ? KLOG_MAGIC1_HEADER : KLOG_MAGIC0_HEADER) ||
	    length > KLOG_MAX_ENTRY_LENGTH)
		return 0;
	return length;
}

uint32_t
klog_entry_valid(const uint8_t *p, size_t left)
{
	uint32_t length, hdr;
	const uint8_t *payload;

	if (left < KLOG_MSG_OVERHEAD ||
	    (length = klog_entry_header_ok(p, left)) == 0 ||
	    (size_t)length > left - KLOG_LENGTH_SIZE)
		return 0;
	hdr = p[4] == 1 ? KLOG_MAGIC1_HEADER : KLOG_MAGIC0_HEADER;
	if (p[4] == 1 && (p[5] & KLOG_CODEC_MASK) == 3)
		return 0;
	payload = p + KLOG_LENGTH_SIZE + hdr;
	if (klog_crc32(0, payload, length - hdr) != klog_be32(payload - 4))
		return 0;
	return length;
}

size_t
klog_entry_encode(uint8_t *buf, const void *payload, size_t len)
{
	klog_put_be32(buf, (uint32_t)(len + KLOG_MAGIC0_HEADER));
	buf[4] = 0;
	klog_put_be32(buf + 5, crc_of(payload, (uint32_t)len));
	if (len > 0)
		memcpy(buf + KLOG_MSG_OVERHEAD, payload, len);
	return klog_entry_size(len);
}

/*
 * Parse the entry at p, of which rem bytes are in the buffer, into the
 * length, header and payload fields of *m (not the offsets, not the CRC
 * check).  Returns 1, or an error with *why set.  The length is judged before
 * the buffer end so that a cut entry with a sane length is EPARTIAL, never
 * corruption; the magic and codec are judged only once the entry is whole.
 */
static inline int
entry_parse(const uint8_t *p, size_t rem, klog_msg_t *m, const char **why)
{
	uint32_t length;
	size_t hdr;

	if (rem < KLOG_LENGTH_SIZE) {
		*why = "entry cut short";
		return -KLOG_EPARTIAL;
	}
	length = klog_be32(p);
	if (length < KLOG_MAGIC0_HEADER) {
		*why = "entry length too small";
		return -KLOG_ECORRUPT;
	}
	if (length > KLOG_MAX_ENTRY_LENGTH) {
		*why = "entry length too large";
		return -KLOG_ECORRUPT;
	}
	if (length > rem - KLOG_LENGTH_SIZE) {
		*why = "entry cut short";
		return -KLOG_EPARTIAL;
	}
	m->length = length;
	m->magic = p[4];
	switch (m->magic) {
	case 0:
		hdr = KLOG_MAGIC0_HEADER;
		m->attributes = 0;
		break;
	case 1:
		if (length < KLOG_MAGIC1_HEADER) {
			*why = "entry length too small";
			return -KLOG_ECORRUPT;
		}
		hdr = KLOG_MAGIC1_HEADER;
		m->attributes = p[5];
		break;
	default:
		*why = "unknown magic byte";
		return -KLOG_ECORRUPT;
	}
	m->codec = m->attributes & KLOG_CODEC_MASK;
	if (m->codec == CODEC_INVALID) {
		*why = "unknown compression codec";
		return -KLOG_ECORRUPT;
	}
	/* The CRC is the last 4 bytes of either header. */
	m->crc_stored = klog_be32(p + hdr);
	m->payload = p + KLOG_LENGTH_SIZE + hdr;
	m->payload_len = length - (uint32_t)hdr;
	return 1;
}

static size_t
entry_end(size_t pos, const klog_msg_t *m)
{
	return pos + KLOG_LENGTH_SIZE + m->length;
}

/* Fill the CRC fields of *m as flags ask. */
static void
check_crc(klog_msg_t *m, unsigned flags)
{
	if ((flags & KLOG_ITER_OUTER_CHECKED) && m->depth == 0 &&
	    !(flags & KLOG_ITER_NOCRC)) {
		m->crc_computed = m->crc_stored;
		m->valid = 1;
		return;
	}
	if (flags & KLOG_ITER_NOCRC) {
		m->crc_computed = 0;
		m->valid = 1;
		return;
	}
	m->crc_computed = crc_of(m->payload, m->payload_len);
	m->valid = m->crc_computed == m->crc_stored;
}

/*
 * Check that set[0..len), a wrapper's inflated payload, is whole entries,
 * with their CRCs too if check_crc; count the messages into *count.  A cut
 * entry is corruption here: the wrapper around it is complete.
 */
static int
inner_scan(const uint8_t *set, size_t len, int check_crc, uint32_t *count,
    const char **why)
{
	klog_msg_t m;
	size_t pos = 0;

	*count = 0;
	while (pos < len) {
		if (entry_parse(set + pos, len - pos, &m, why) < 0) {
			*why = "malformed message set inside wrapper";
			return -KLOG_ECORRUPT;
		}
		if (check_crc && crc_of(m.payload, m.payload_len) !=
		    m.crc_stored) {
			*why = "crc mismatch inside wrapper";
			return -KLOG_ECORRUPT;
		}
		(*count)++;
		pos = entry_end(pos, &m);
	}
	return 0;
}

int
klog_gzip_wrap(const uint8_t *set, size_t len, int level, uint8_t **out,
    size_t *outlen)
{
	const size_t hdr = KLOG_LENGTH_SIZE + KLOG_MAGIC1_HEADER;
	z_stream zs;
	uint8_t *buf = NULL;
	uLong bound;
	size_t clen;
	int zr, r;

	*out = NULL;
	*outlen = 0;
	if (len == 0)
		return 0;
	memset(&zs, 0, sizeof(zs));
	zr = deflateInit2(&zs, level, Z_DEFLATED, GZIP_WINDOW, 8,
	    Z_DEFAULT_STRATEGY);
	if (zr != Z_OK)
		return zr == Z_MEM_ERROR ? -KLOG_ENOMEM : -KLOG_EINVAL;
	/* Refusing sets whose worst case would not fit one entry keeps every
	 * count below zlib's uInt. */
	bound = deflateBound(&zs, len);
	if (bound > KLOG_MAX_ENTRY_LENGTH - KLOG_MAGIC1_HEADER) {
		r = -KLOG_ETOOBIG;
		goto out;
	}
	if ((buf = malloc(hdr + bound)) == NULL) {
		r = -KLOG_ENOMEM;
		goto out;
	}
	zs.next_in = (Bytef *)set;
	zs.avail_in = (uInt)len;
	zs.next_out = buf + hdr;
	zs.avail_out = (uInt)bound;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		r = -KLOG_EINVAL;
		goto out;
	}
	clen = zs.total_out;
	klog_put_be32(buf, (uint32_t)(clen + KLOG_MAGIC1_HEADER));
	buf[4] = 1;
	buf[5] = KLOG_CODEC_GZIP;
	klog_put_be32(buf + 6, crc_of(buf + hdr, (uint32_t)clen));
	*out = buf;
	*outlen = hdr + clen;
	buf = NULL;
	r = 0;
out:
	deflateEnd(&zs);
	free(buf);
	return r;
}

static int
inflate_code(int zr)
{
	return zr == Z_MEM_ERROR ? -KLOG_ENOMEM : -KLOG_ECORRUPT;
}

/* Room to inflate into at first: a guess from typical ratios. */
static size_t
first_cap(size_t len, size_t max_out)
{
	size_t cap = len < SIZE_MAX / 4 ? len * 4 : SIZE_MAX;

	if (cap < 4096)
		cap = 4096;
	return cap < max_out ? cap : max_out;
}

/*
 * Point zs's output at the room left in *buf, doubling the buffer up to
 * max_out; once it holds max_out bytes, at the one-byte spare instead.
 * Returns 1 when at the limit, 0 otherwise, or -KLOG_ENOMEM.
 */
static int
out_room(z_stream *zs, uint8_t **buf, size_t *cap, size_t have,
    size_t max_out, uint8_t *spare)
{
	uint8_t *nbuf;
	size_t ncap;

	if (have == *cap && *cap < max_out) {
		ncap = *cap < max_out / 2 ? *cap * 2 : max_out;
		if ((nbuf = realloc(*buf, ncap)) == NULL)
			return -KLOG_ENOMEM;
		*buf = nbuf;
		*cap = ncap;
	}
	if (have == *cap) {
		zs->next_out = spare;
		zs->avail_out = 1;
		return 1;
	}
	zs->next_out = *buf + have;
	zs->avail_out = *cap - have < UINT_MAX ? (uInt)(*cap - have) :
	    UINT_MAX;
	return 0;
}

/*
 * At the limit, inflate goes on into a one-byte spare: if the stream still
 * yields a byte it is over the limit; if it ends, the output was exactly
 * max_out.  Several gzip members in a row are one stream, as gzip(1) and
 * Java's GZIPInputStream read them.
 */
int
klog_gunzip(const uint8_t *in, size_t len, size_t max_out, uint8_t **out,
    size_t *outlen)
{
	z_stream zs;
	uint8_t *buf, spare;
	size_t cap, have = 0, left = len;
	int zr, r, at_limit;

	*out = NULL;
	*outlen = 0;
	memset(&zs, 0, sizeof(zs));
	if ((zr = inflateInit2(&zs, GZIP_WINDOW)) != Z_OK)
		return inflate_code(zr);
	cap = first_cap(len, max_out);
	if ((buf = malloc(cap ? cap : 1)) == NULL) {
		r = -KLOG_ENOMEM;
		goto out;
	}
	zs.next_in = (Bytef *)in;
	for (;;) {
		if (zs.avail_in == 0 && left > 0) {
			zs.avail_in = left < UINT_MAX ? (uInt)left : UINT_MAX;
			left -= zs.avail_in;
		}
		at_limit = out_room(&zs, &buf, &cap, have, max_out, &spare);
		if (at_limit < 0) {
			r = at_limit;
			goto out;
		}
		zr = inflate(&zs, Z_NO_FLUSH);
		if (at_limit && zs.avail_out == 0) {
			r = -KLOG_ETOOBIG;
			goto out;
		}
		if (!at_limit)
			have = (size_t)(zs.next_out - buf);
		if (zr == Z_STREAM_END && zs.avail_in == 0 && left == 0)
			break;
		if (zr == Z_STREAM_END)
			zr = inflateReset(&zs);
		/* Z_BUF_ERROR: no progress with output room left, so the
		 * input ran out before the stream ended. */
		if (zr != Z_OK) {
			r = inflate_code(zr);
			goto out;
		}
	}
	*out = buf;
	*outlen = have;
	buf = NULL;
	r = 0;
out:
	inflateEnd(&zs);
	free(buf);
	return r;
}

void
klog_iter_init(klog_iter_t *it, const void *buf, size_t len, int64_t base,
    unsigned flags, size_t max_inflate)
{
	memset(it, 0, sizeof(*it));
	it->buf = buf;
	it->len = len;
	it->base = base;
	it->flags = flags;
	it->max_inflate = max_inflate ? max_inflate : DEFAULT_MAX_INFLATE;
	it->error_pos = -1;
}

static void
release_inner(klog_iter_t *it)
{
	free(it->inner);
	it->inner = NULL;
	it->inner_len = 0;
	it->inner_pos = 0;
}

/* Record an error about the entry at offset; the iterator does not move. */
static int
iter_fail(klog_iter_t *it, int code, const char *why, int64_t offset)
{
	it->error = why;
	it->error_pos_valid = 1;
	it->error_pos = offset;
	return code;
}

/* Inflate the gzip wrapper *w (the entry at it->pos) into it->inner. */
static int
open_wrapper(klog_iter_t *it, const klog_msg_t *w, const char **why)
{
	uint32_t count;
	int r;

	if (w->codec == KLOG_CODEC_SNAPPY) {
		*why = "snappy wrapper not supported";
		return -KLOG_EUNSUPPORTED;
	}
	r = klog_gunzip(w->payload, w->payload_len, it->max_inflate,
	    &it->inner, &it->inner_len);
	if (r < 0) {
		*why = r == -KLOG_ETOOBIG ? "wrapper inflates past the limit" :
		    r == -KLOG_ENOMEM ? "out of memory" :
		    "wrapper does not inflate";
		return r;
	}
	/* Checked whole now so that no inner message is handed out from a
	 * wrapper that later turns out malformed. */
	if ((r = inner_scan(it->inner, it->inner_len, 0, &count, why)) < 0) {
		release_inner(it);
		return r;
	}
	it->inner_pos = 0;
	it->wrapper_pos = (int64_t)it->pos;
	it->wrapper_offset = it->base + (int64_t)it->pos;
	it->wrapper_length = w->length;
	it->wrapper_next = it->wrapper_offset + KLOG_LENGTH_SIZE + w->length;
	return 0;
}

static int
inner_next(klog_iter_t *it, klog_msg_t *m)
{
	const char *why;
	int r;

	r = entry_parse(it->inner + it->inner_pos,
	    it->inner_len - it->inner_pos, m, &why);
	if (r < 0) /* cannot happen: open_wrapper() scanned the set */
		return iter_fail(it, r, why, it->wrapper_offset);
	it->inner_pos = entry_end(it->inner_pos, m);
	m->offset = it->wrapper_offset;
	m->pos = it->wrapper_pos;
	m->depth = 1;
	check_crc(m, it->flags);
	if (it->inner_pos < it->inner_len) {
		m->next_offset = it->wrapper_offset;
		return 1;
	}
	m->next_offset = it->wrapper_next;
	it->pos = (size_t)it->wrapper_pos + KLOG_LENGTH_SIZE +
	    it->wrapper_length;
	return 1;
}

int
klog_iter_next(klog_iter_t *it, klog_msg_t *m)
{
	const char *why;
	int64_t offset;
	int r;

	if (it->inner != NULL) {
		if (it->inner_pos < it->inner_len)
			return inner_next(it, m);
		/* The last inner message was handed out by the previous
		 * call, whose payload pointer dies only now. */
		release_inner(it);
	}
	for (;;) {
		if (it->pos >= it->len)
			return 0;
		offset = it->base + (int64_t)it->pos;
		r = entry_parse(it->buf + it->pos, it->len - it->pos, m, &why);
		if (r < 0)
			return iter_fail(it, r, why, offset);
		m->offset = offset;
		m->next_offset = offset + KLOG_LENGTH_SIZE + m->length;
		m->pos = (int64_t)it->pos;
		m->depth = 0;
		check_crc(m, it->flags);
		if (!(it->flags & KLOG_ITER_DEEP) ||
		    m->codec == KLOG_CODEC_NONE || !m->valid) {
			it->pos = entry_end(it->pos, m);
			return 1;
		}
		if ((r = open_wrapper(it, m, &why)) < 0)
			return iter_fail(it, r, why, offset);
		if (it->inner_len > 0)
			return inner_next(it, m);
		/* An empty inner set: the wrapper holds no messages. */
		release_inner(it);
		it->pos = entry_end(it->pos, m);
	}
}

int64_t
klog_iter_offset(const klog_iter_t *it)
{
	return it->base + (int64_t)it->pos;
}

const char *
klog_iter_error(const klog_iter_t *it)
{
	return it->error ? it->error : "no error";
}

int64_t
klog_iter_error_offset(const klog_iter_t *it)
{
	return it->error_pos_valid ? it->error_pos : -1;
}

void
klog_iter_free(klog_iter_t *it)
{
	release_inner(it);
}

/* Count the messages in wrapper *w, checking them as flags ask. */
static int
wrapper_count(const klog_msg_t *w, unsigned flags, uint32_t *count)
{
	const char *why;
	uint8_t *set;
	size_t len;
	int r;

	if (w->codec == KLOG_CODEC_SNAPPY)
		return -KLOG_EUNSUPPORTED;
	r = klog_gunzip(w->payload, w->payload_len, DEFAULT_MAX_INFLATE, &set,
	    &len);
	if (r < 0)
		return r;
	r = inner_scan(set, len, !(flags & KLOG_ITER_NOCRC), count, &why);
	free(set);
	return r;
}

int
klog_msgset_validate(const void *buf, size_t len, unsigned flags,
    klog_msgset_info_t *info)
{
	const uint8_t *p = buf;
	const char *why;
	klog_msg_t m;
	uint32_t count;
	size_t pos = 0;
	int r;

	memset(info, 0, sizeof(*info));
	info->bad_offset = -1;
	while (pos < len) {
		if ((r = entry_parse(p + pos, len - pos, &m, &why)) < 0)
			goto bad;
		if (!(flags & (KLOG_ITER_NOCRC | KLOG_ITER_OUTER_CHECKED)) &&
		    crc_of(m.payload, m.payload_len) != m.crc_stored) {
			r = -KLOG_ECORRUPT;
			goto bad;
		}
		count = 1;
		if ((flags & KLOG_ITER_DEEP) && m.codec != KLOG_CODEC_NONE &&
		    (r = wrapper_count(&m, flags, &count)) < 0)
			goto bad;
		info->messages += count;
		info->entries++;
		if (m.payload_len > info->max_payload)
			info->max_payload = m.payload_len;
		pos = entry_end(pos, &m);
		info->valid_bytes = pos;
	}
	return 0;
bad:
	info->bad_offset = (int64_t)pos;
	return r;
}
