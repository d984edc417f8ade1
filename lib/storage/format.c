/*
 * Kafka 0.7 message sets: encoding, gzip wrappers, iteration, validation;
 * magic-2 entries (record.h) framed, checked and, deep, opened into their
 * records through batchiter.c.
 *
 * The hot path is klog_iter_next() on uncompressed entries and
 * klog_msgset_validate(): both parse a header, run klog_crc32() over the
 * payload and move on, with no allocation.  Only opening a gzip wrapper or
 * a compressed batch allocates (one buffer each, owned by the iterator).
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
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

#include "klog/base/error.h"
#include "klog/storage/batchiter.h"
#include "klog/storage/codec.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define DEFAULT_MAX_INFLATE ((size_t)64 << 20)
#define CODEC_INVALID 3
#define MAGIC2_MIN (KLOG_MAGIC2_HEADER + KLOG_BATCH_BODY_HEADER)

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
klog_entry_crc(uint8_t magic, uint32_t crc, const void *p, size_t len)
{
	return magic == KLOG_MAGIC2 ? klog_crc32c(crc, p, len) :
	    klog_crc32(crc, p, len);
}

/* The smallest length field of each magic: its header (magic 2: and the
 * body's). */
static const uint32_t min_length[] = {
	KLOG_MAGIC0_HEADER, KLOG_MAGIC1_HEADER, MAGIC2_MIN,
};

uint32_t
klog_entry_header_ok(const uint8_t *p, size_t left)
{
	uint32_t length;

	if (left <= KLOG_LENGTH_SIZE || p[4] > KLOG_MAGIC2)
		return 0;
	length = klog_be32(p);
	if (length < min_length[p[4]] || length > KLOG_MAX_ENTRY_LENGTH)
		return 0;
	return length;
}

static const char transactional[] = "transactional batch not supported";

/*
 * Why the whole magic-2 entry at p, of length field length, is not as
 * klog_batch_seal() leaves every one klog stores (its attrs byte the
 * body's attributes' low byte, a codec 0-4, its lastOffsetDelta length +
 * 3, a record at least) or is transactional (Kafka's transactions are not
 * klog's: the text transactional[]); NULL if it is fine.  A text, not a
 * code through a pointer, to keep the iterator's locals in registers.
 */
static const char *
batch_why(const uint8_t *p, uint32_t length)
{
	const uint8_t *body = p + KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER;
	uint8_t attrs = body[KLOG_BATCH_ATTRS_AT + 1];

	if ((attrs & KLOG_BATCH_CODEC_MASK) > KLOG_CODEC_MAX)
		return "unknown compression codec";
	if (p[5] != attrs)
		return "attributes byte does not match the batch's";
	if (klog_be32(body + KLOG_BATCH_LAST_DELTA_AT) != length + 3)
		return "batch's last offset delta is not its length + 3";
	if ((int32_t)klog_be32(body + KLOG_BATCH_COUNT_AT) < 1)
		return "batch holds no record";
	if (attrs & (KLOG_BATCH_TRANSACTIONAL | KLOG_BATCH_CONTROL))
		return transactional;
	return NULL;
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
	hdr = p[4] == 0 ? KLOG_MAGIC0_HEADER : KLOG_MAGIC1_HEADER;
	if (p[4] == 1 && (p[5] & KLOG_CODEC_MASK) == CODEC_INVALID)
		return 0;
	if (p[4] == KLOG_MAGIC2 && batch_why(p, length) != NULL)
		return 0;
	/* The CRC is the last 4 bytes of every header. */
	payload = p + KLOG_LENGTH_SIZE + hdr;
	if (klog_entry_crc(p[4], 0, payload, length - hdr) !=
	    klog_be32(payload - 4))
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
	case KLOG_MAGIC2:
		if (length < min_length[m->magic]) {
			*why = "entry length too small";
			return -KLOG_ECORRUPT;
		}
		hdr = KLOG_MAGIC1_HEADER; /* magic 2's is as long */
		m->attributes = p[5];
		break;
	default:
		*why = "unknown magic byte";
		return -KLOG_ECORRUPT;
	}
	m->codec = m->attributes & KLOG_CODEC_MASK;
	if (m->magic == KLOG_MAGIC2) {
		/* The body's attributes, which its CRC covers. */
		m->codec = p[11] & KLOG_BATCH_CODEC_MASK;
		if ((*why = batch_why(p, length)) != NULL)
			return *why == transactional ? -KLOG_EUNSUPPORTED :
			    -KLOG_ECORRUPT;
		m->batch = p + KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER;
		m->batch_len = length - KLOG_MAGIC2_HEADER;
	} else if (m->codec == CODEC_INVALID) {
		*why = "unknown compression codec";
		return -KLOG_ECORRUPT;
	}
	/* The CRC is the last 4 bytes of every header. */
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
	m->crc_computed = klog_entry_crc(m->magic, 0, m->payload,
	    m->payload_len);
	m->valid = m->crc_computed == m->crc_stored;
}

/*
 * Check that set[0..len), a wrapper's inflated payload, is whole entries
 * of magic 0 or 1, with their CRCs too if check_crc; count the messages
 * into *count.  A cut entry is corruption here: the wrapper around it is
 * complete.  Kafka never puts a record batch inside a wrapper.
 */
static int
inner_scan(const uint8_t *set, size_t len, int check_crc, uint32_t *count,
    const char **why)
{
	klog_msg_t m;
	size_t pos = 0;

	*count = 0;
	while (pos < len) {
		if (entry_parse(set + pos, len - pos, &m, why) < 0 ||
		    m.magic == KLOG_MAGIC2) {
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
	uint8_t *c, *buf;
	size_t clen;
	int r;

	*out = NULL;
	*outlen = 0;
	if (len == 0)
		return 0;
	if ((r = klog_codec_deflate(KLOG_CODEC_GZIP, level, set, len, &c,
	    &clen)) < 0)
		return r;
	if (clen > KLOG_MAX_ENTRY_LENGTH - KLOG_MAGIC1_HEADER) {
		free(c);
		return -KLOG_ETOOBIG;
	}
	if ((buf = realloc(c, hdr + clen)) == NULL) {
		free(c);
		return -KLOG_ENOMEM;
	}
	memmove(buf + hdr, buf, clen);
	klog_put_be32(buf, (uint32_t)(clen + KLOG_MAGIC1_HEADER));
	buf[4] = 1;
	buf[5] = KLOG_CODEC_GZIP;
	klog_put_be32(buf + 6, crc_of(buf + hdr, (uint32_t)clen));
	*out = buf;
	*outlen = hdr + clen;
	return 0;
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
	it->opened = 0;
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

/* The entry *w at it->pos becomes the one whose inner messages or
 * records are handed out. */
static void
enter(klog_iter_t *it, const klog_msg_t *w)
{
	it->opened = 1;
	it->wrapper_pos = (int64_t)it->pos;
	it->wrapper_offset = it->base + (int64_t)it->pos;
	it->wrapper_length = w->length;
	it->wrapper_next = it->wrapper_offset + KLOG_LENGTH_SIZE + w->length;
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
	r = klog_codec_inflate(KLOG_CODEC_GZIP, w->payload, w->payload_len,
	    it->max_inflate, &it->inner, &it->inner_len);
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
	enter(it, w);
	return 0;
}

/* What a message that is not a record carries of a record's fields. */
static inline void
no_record(klog_msg_t *m)
{
	m->timestamp = KLOG_NO_TIMESTAMP;
	m->key = NULL;
	m->key_len = -1;
	m->headers = NULL;
	m->headers_len = 0;
	m->header_count = 0;
	m->delta = 0;
	m->batch = NULL;
	m->batch_len = 0;
}

/* The last message of the entry being opened was handed out. */
static void
leave(klog_iter_t *it, klog_msg_t *m)
{
	m->next_offset = it->wrapper_next;
	it->pos = (size_t)it->wrapper_pos + KLOG_LENGTH_SIZE +
	    it->wrapper_length;
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
	no_record(m);
	if (it->inner_pos < it->inner_len)
		m->next_offset = it->wrapper_offset;
	else
		leave(it, m);
	return 1;
}

/* Open the valid magic-2 entry *e (the entry at it->pos): its records. */
static int
open_batch(klog_iter_t *it, const klog_msg_t *e, const char **why)
{
	int r = klog_batchiter_open(&it->batch, e->payload, e->payload_len,
	    it->max_inflate, why);

	if (r < 0)
		return r;
	it->in_batch = 1;
	enter(it, e);
	return 0;
}

static void
close_batch(klog_iter_t *it)
{
	klog_batchiter_close(&it->batch);
	it->in_batch = 0;
	it->opened = 0;
}

/* The next record of the open batch (there is one) as a message. */
static int
record_next(klog_iter_t *it, klog_msg_t *m)
{
	const uint8_t *e = it->buf + it->wrapper_pos;
	klog_record_t r;

	if (klog_batchiter_next(&it->batch, &r, &m->timestamp) == 0) {
		close_batch(it); /* cannot happen: open_batch() read them */
		return iter_fail(it, -KLOG_ECORRUPT,
		    "malformed record inside batch", it->wrapper_offset);
	}
	m->offset = it->wrapper_offset;
	m->pos = it->wrapper_pos;
	m->length = (uint32_t)r.size;
	m->magic = KLOG_MAGIC2;
	m->attributes = 0;
	m->codec = KLOG_CODEC_NONE;
	m->depth = 1;
	/* The entry's CRC, checked when it was opened. */
	m->crc_stored = klog_be32(e + KLOG_LENGTH_SIZE + 2);
	m->crc_computed = (it->flags & KLOG_ITER_NOCRC) ? 0 : m->crc_stored;
	m->valid = 1;
	m->payload = r.value;
	m->payload_len = r.value_len < 0 ? 0 : (uint32_t)r.value_len;
	m->key = r.key;
	m->key_len = r.key_len;
	m->headers = r.headers;
	m->headers_len = r.headers_len;
	m->header_count = r.header_count;
	m->delta = r.offset_delta;
	m->batch = e + KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER;
	m->batch_len = it->wrapper_length - KLOG_MAGIC2_HEADER;
	if (it->batch.index < it->batch.batch.count)
		m->next_offset = it->wrapper_offset;
	else
		leave(it, m);
	return 1;
}

/*
 * Descend into the valid entry *m met deep at it->pos: 1 with its first
 * inner message or record in *m, 0 when it holds none (it->pos past it),
 * or an error.  Out of line, as next_opened(), to keep plain entries'
 * path short.
 */
static int __attribute__((noinline))
descend(klog_iter_t *it, klog_msg_t *m, int64_t offset)
{
	const char *why;
	int r;

	if (m->magic == KLOG_MAGIC2) {
		/* entry_parse() saw a record at least. */
		if ((r = open_batch(it, m, &why)) < 0)
			return iter_fail(it, r, why, offset);
		return record_next(it, m);
	}
	if ((r = open_wrapper(it, m, &why)) < 0)
		return iter_fail(it, r, why, offset);
	if (it->inner_len > 0)
		return inner_next(it, m);
	/* An empty inner set: the wrapper holds no messages. */
	release_inner(it);
	it->pos = entry_end(it->pos, m);
	return 0;
}

/*
 * The next inner message or record of the entry opened: 1, or 0 after its
 * last (whose payload pointer, handed out by the previous call, dies only
 * now).
 */
static int __attribute__((noinline))
next_opened(klog_iter_t *it, klog_msg_t *m)
{
	if (it->inner != NULL && it->inner_pos < it->inner_len)
		return inner_next(it, m);
	if (it->in_batch && it->batch.index < it->batch.batch.count)
		return record_next(it, m);
	release_inner(it);
	close_batch(it);
	return 0;
}

int
klog_iter_next(klog_iter_t *it, klog_msg_t *m)
{
	const char *why;
	int64_t offset;
	int r;

	if (it->opened && (r = next_opened(it, m)) != 0)
		return r;
	for (;;) {
		if (it->pos >= it->len)
			return 0;
		offset = it->base + (int64_t)it->pos;
		no_record(m); /* entry_parse() sets a batch's */
		r = entry_parse(it->buf + it->pos, it->len - it->pos, m, &why);
		if (r < 0)
			return iter_fail(it, r, why, offset);
		m->offset = offset;
		m->next_offset = offset + KLOG_LENGTH_SIZE + m->length;
		m->pos = (int64_t)it->pos;
		m->depth = 0;
		check_crc(m, it->flags);
		if (!(it->flags & KLOG_ITER_DEEP) || !m->valid ||
		    (m->codec == KLOG_CODEC_NONE && m->magic != KLOG_MAGIC2)) {
			it->pos = entry_end(it->pos, m);
			return 1;
		}
		if ((r = descend(it, m, offset)) != 0)
			return r;
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
	close_batch(it);
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
	r = klog_codec_inflate(KLOG_CODEC_GZIP, w->payload, w->payload_len,
	    DEFAULT_MAX_INFLATE, &set, &len);
	if (r < 0)
		return r;
	r = inner_scan(set, len, !(flags & KLOG_ITER_NOCRC), count, &why);
	free(set);
	return r;
}

/* Count the records of the magic-2 entry *m, reading every one unless
 * flags say the caller did (its header then says). */
static int
batch_count(const klog_msg_t *m, unsigned flags, uint32_t *count)
{
	klog_batchiter_t bi;
	const char *why;
	int r;

	if (flags & KLOG_ITER_RECORDS_CHECKED) {
		*count = klog_be32(m->payload + KLOG_BATCH_COUNT_AT);
		return 0;
	}
	r = klog_batchiter_open(&bi, m->payload, m->payload_len,
	    DEFAULT_MAX_INFLATE, &why);
	if (r < 0)
		return r;
	*count = (uint32_t)bi.batch.count;
	klog_batchiter_close(&bi);
	return 0;
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
		    klog_entry_crc(m.magic, 0, m.payload, m.payload_len) !=
		    m.crc_stored) {
			r = -KLOG_ECORRUPT;
			goto bad;
		}
		count = 1;
		if ((flags & KLOG_ITER_DEEP) && (r = m.magic == KLOG_MAGIC2 ?
		    batch_count(&m, flags, &count) : m.codec != KLOG_CODEC_NONE ?
		    wrapper_count(&m, flags, &count) : 0) < 0)
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
