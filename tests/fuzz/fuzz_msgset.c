/*
 * libFuzzer target for lib/storage/format.c: arbitrary bytes as a message set.
 *
 * Besides not crashing or leaking, it checks that the iterator and
 * klog_msgset_validate() agree on where a set stops being valid, that an
 * error leaves the iterator where it was, that offsets follow the wrapper
 * and record rules, that encoding and gzip wrapping round-trip, and that
 * klog_crcpool_crcs() never vouches for a bad CRC the iterator would see.
 * A broken invariant aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/error.h"
#include "klog/storage/crcpool.h"
#include "klog/storage/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

/* What one pass of the iterator saw, in validate()'s terms. */
struct outcome {
	int code;              /* 0, or validate()'s expected error */
	int64_t bad;           /* where validate() should stop, or -1 */
	uint32_t messages;
	uint32_t top;          /* depth-0 messages */
};

static void
check_msg(const uint8_t *data, size_t size, unsigned flags,
    const klog_msg_t *m)
{
	uint8_t *copy;
	volatile uint8_t sink = 0;

	/* Every payload byte must be readable (ASan checks the bounds). */
	for (uint32_t i = 0; i < m->payload_len; i++)
		sink ^= m->payload[i];
	(void)sink;
	CHECK(m->offset == m->pos);
	CHECK(m->magic <= 2);
	if (m->magic == 2 && m->depth == 1) {
		/* A record: never compressed itself, its batch the entry's. */
		CHECK(m->codec == 0 && m->batch == data + m->pos + 10);
		for (int32_t i = 0; i < m->key_len; i++)
			sink ^= m->key[i];
	} else if (m->magic == 2) {
		CHECK(m->codec <= 4 && m->codec == (m->payload[1] & 7));
		CHECK(m->batch == m->payload && m->key == NULL &&
		    m->timestamp == -1);
	} else {
		CHECK(m->codec == (m->attributes & KLOG_CODEC_MASK));
		CHECK(m->codec != 3);
		CHECK(m->batch == NULL && m->key == NULL && m->key_len == -1 &&
		    m->timestamp == -1 && m->header_count == 0);
	}
	if (m->depth == 1) {
		CHECK(m->next_offset == m->offset ||
		    m->next_offset == m->offset + 4 +
		    (int64_t)klog_be32(data + m->pos));
		return;
	}
	CHECK(m->depth == 0);
	CHECK(m->next_offset == m->offset + 4 + (int64_t)m->length);
	CHECK((size_t)m->next_offset <= size);
	CHECK(m->payload + m->payload_len == data + m->next_offset);
	if (flags & KLOG_ITER_NOCRC) {
		CHECK(m->valid && m->crc_computed == 0);
		return;
	}
	CHECK(m->valid == (m->crc_computed == m->crc_stored));
	if (m->magic != 0 || !m->valid)
		return;
	/* A valid magic-0 entry re-encodes to the same bytes. */
	copy = malloc(klog_entry_size(m->payload_len));
	CHECK(copy != NULL);
	CHECK(klog_entry_encode(copy, m->payload, m->payload_len) ==
	    4 + (size_t)m->length);
	CHECK(memcmp(copy, data + m->pos, 4 + (size_t)m->length) == 0);
	free(copy);
}

static struct outcome
iterate(const uint8_t *data, size_t size, unsigned flags)
{
	struct outcome o = { 0, -1, 0, 0 };
	klog_iter_t it;
	klog_msg_t m;
	int64_t at;
	int r;

	klog_iter_init(&it, data, size, 0, flags, 0);
	while ((r = klog_iter_next(&it, &m)) == 1) {
		check_msg(data, size, flags, &m);
		if (!m.valid && o.bad < 0) {
			o.code = -KLOG_ECORRUPT;
			o.bad = m.pos;
		}
		if (o.bad < 0) {
			o.messages++;
			o.top += m.depth == 0;
		}
	}
	CHECK(r == 0 || r == -KLOG_EPARTIAL || r == -KLOG_ECORRUPT ||
	    r == -KLOG_EUNSUPPORTED || r == -KLOG_ETOOBIG);
	if (r == 0) {
		CHECK((size_t)klog_iter_offset(&it) == size);
		CHECK(klog_iter_next(&it, &m) == 0);
	} else {
		at = klog_iter_offset(&it);
		CHECK(klog_iter_error_offset(&it) == at);
		CHECK(klog_iter_error(&it) != NULL);
		/* An error leaves the iterator at the bad entry. */
		CHECK(klog_iter_next(&it, &m) == r);
		CHECK(klog_iter_offset(&it) == at);
		if (o.bad < 0) {
			o.code = r;
			o.bad = at;
		}
	}
	klog_iter_free(&it);
	return o;
}

static void
compare(const uint8_t *data, size_t size, unsigned flags)
{
	klog_msgset_info_t info;
	struct outcome o = iterate(data, size, flags);
	int r = klog_msgset_validate(data, size, flags, &info);

	CHECK(r == o.code);
	CHECK(info.bad_offset == o.bad);
	CHECK(info.valid_bytes == (o.bad < 0 ? size : (size_t)o.bad));
	if (r == 0)
		CHECK(info.messages == o.messages);
	if (!(flags & KLOG_ITER_DEEP))
		CHECK(info.entries == o.top);
}

/* verify says 0 only if no top-level entry the iterator hands out has a
 * bad CRC; then iterating with KLOG_ITER_OUTER_CHECKED sees just what
 * iterating with the CRCs computed does. */
static void
check_verify(const uint8_t *data, size_t size)
{
	struct outcome plain, trusted;
	klog_iter_t it;
	klog_msg_t m;
	int bad = 0, v;

	klog_iter_init(&it, data, size, 0, 0, 0);
	while (klog_iter_next(&it, &m) == 1)
		bad |= !m.valid;
	klog_iter_free(&it);
	v = klog_crcpool_crcs(NULL, data, size);
	CHECK(v == 0 || v == 1);
	if (bad)
		CHECK(v == 1);
	if (v != 0)
		return;
	plain = iterate(data, size, KLOG_ITER_DEEP);
	trusted = iterate(data, size, KLOG_ITER_DEEP | KLOG_ITER_OUTER_CHECKED);
	CHECK(plain.code == trusted.code && plain.bad == trusted.bad &&
	    plain.messages == trusted.messages && plain.top == trusted.top);
}

static void
roundtrip_gzip(const uint8_t *data, size_t size)
{
	uint8_t *w = NULL, *set = NULL;
	size_t wlen, setlen;

	CHECK(klog_gzip_wrap(data, size, 1, &w, &wlen) == 0);
	if (size == 0) {
		CHECK(w == NULL && wlen == 0);
		return;
	}
	CHECK(klog_be32(w) == wlen - 4);
	CHECK(klog_codec_inflate(KLOG_CODEC_GZIP, w + 10, wlen - 10, size,
	    &set, &setlen) == 0);
	CHECK(setlen == size && memcmp(set, data, size) == 0);
	free(set);
	CHECK(klog_codec_inflate(KLOG_CODEC_GZIP, w + 10, wlen - 10, size - 1,
	    &set, &setlen) == -KLOG_ETOOBIG);
	free(w);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	compare(data, size, 0);
	compare(data, size, KLOG_ITER_NOCRC);
	compare(data, size, KLOG_ITER_DEEP);
	compare(data, size, KLOG_ITER_DEEP | KLOG_ITER_NOCRC);
	check_verify(data, size);
	roundtrip_gzip(data, size);
	return 0;
}
