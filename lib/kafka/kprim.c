/*
 * The Kafka protocol's primitive types in both encodings; see kprim.h.
 */
#include <stdint.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kprim.h"

#define STR_MAX 32767   /* Kafka's, whichever the encoding */

void
klog_kprim_rd_init(klog_kprim_rd_t *r, const void *p, size_t len, int flex)
{
	klog_rd_init(&r->rd, p, len);
	r->flex = flex;
}

uint32_t
klog_kprim_uvarint(klog_rd_t *r)
{
	uint32_t v = 0;

	for (int shift = 0; shift < 35; shift += 7) {
		const uint8_t *b = klog_rd_bytes(r, 1);

		if (b == NULL)
			return 0;
		if (shift == 28 && (*b & 0xf0) != 0)
			break;  /* past 32 bits */
		v |= (uint32_t)(*b & 0x7f) << shift;
		if ((*b & 0x80) == 0)
			return v;
	}
	r->failed = 1;
	return 0;
}

/* A length: -1 for null, else 0..INT32_MAX; anything else fails. */
static int64_t
rd_len(klog_kprim_rd_t *r, int wide)
{
	if (r->flex)
		return (int64_t)klog_kprim_uvarint(&r->rd) - 1;
	return wide ? klog_rd_i32(&r->rd) : klog_rd_i16(&r->rd);
}

klog_str_t
klog_kprim_nstr(klog_kprim_rd_t *r)
{
	int64_t n = rd_len(r, 0);
	klog_str_t s = { NULL, 0 };

	if (n < -1 || n > STR_MAX) {
		r->rd.failed = 1;
		return s;
	}
	if (n > 0) {
		s.p = (const char *)klog_rd_bytes(&r->rd, (size_t)n);
		s.len = s.p != NULL ? (uint16_t)n : 0;
	} else if (n == 0) {
		s.p = "";
	}
	return s;
}

klog_str_t
klog_kprim_str(klog_kprim_rd_t *r)
{
	klog_str_t s = klog_kprim_nstr(r);

	if (s.p == NULL)
		r->rd.failed = 1;
	return s;
}

const uint8_t *
klog_kprim_bytes(klog_kprim_rd_t *r, uint32_t *len)
{
	int64_t n = rd_len(r, 1);

	*len = 0;
	if (n < -1 || (n > 0 && (size_t)n > klog_rd_left(&r->rd)))
		r->rd.failed = 1;
	if (r->rd.failed)
		return NULL;
	if (n <= 0)
		return (const uint8_t *)"";
	*len = (uint32_t)n;
	return klog_rd_bytes(&r->rd, (size_t)n);
}

int32_t
klog_kprim_count(klog_kprim_rd_t *r, size_t min, int nullable)
{
	int64_t n = rd_len(r, 1);

	if (n == -1 && nullable)
		return -1;
	if (n < 0 || (size_t)n > klog_rd_left(&r->rd) / (min ? min : 1)) {
		r->rd.failed = 1;
		return 0;
	}
	return (int32_t)n;
}

void
klog_kprim_tags(klog_kprim_rd_t *r)
{
	uint32_t n;

	if (!r->flex)
		return;
	n = klog_kprim_uvarint(&r->rd);
	for (uint32_t i = 0; i < n && !r->rd.failed; i++) {
		uint32_t size;

		(void)klog_kprim_uvarint(&r->rd);  /* tag: none is known */
		size = klog_kprim_uvarint(&r->rd);
		(void)klog_rd_bytes(&r->rd, size);
	}
}

int
klog_kprim_done(const klog_kprim_rd_t *r)
{
	return r->rd.failed ? -KLOG_EPROTO : 0;
}

int
klog_kprim_end(klog_kprim_rd_t *r)
{
	klog_kprim_tags(r);
	return klog_kprim_done(r);
}

void *
klog_kprim_slot(klog_proto_array_t *a, size_t i, size_t sz)
{
	if (klog_buf_grow(&a->p, &a->cap, (i + 1) * sz) < 0)
		return NULL;
	return (uint8_t *)a->p + i * sz;
}

/* ---- writing ---- */

/* v as a uvarint into out (5 bytes at most); its length. */
static size_t
uvarint(uint8_t *out, uint32_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

void
klog_kprim_put_uvarint(klog_buf_t *b, uint32_t v)
{
	uint8_t tmp[5];

	klog_buf_put(b, tmp, uvarint(tmp, v));
}

/* A length (-1: null) as the encoding writes it. */
static void
put_len(klog_buf_t *b, int32_t n, int flex, int wide)
{
	if (flex)
		klog_kprim_put_uvarint(b, (uint32_t)((int64_t)n + 1));
	else if (wide)
		klog_buf_put_i32(b, n);
	else
		klog_buf_put_i16(b, (int16_t)n);
}

void
klog_kprim_put_str(klog_buf_t *b, klog_str_t s, int flex)
{
	if (s.p == NULL) {
		put_len(b, -1, flex, 0);
		return;
	}
	put_len(b, s.len, flex, 0);
	klog_buf_put(b, s.p, s.len);
}

void
klog_kprim_put_cstr(klog_buf_t *b, const char *s, int flex)
{
	size_t n = s != NULL ? strlen(s) : 0;

	klog_kprim_put_str(b, (klog_str_t){ s, (uint16_t)(n > STR_MAX ?
	    STR_MAX : n) }, flex);
}

void
klog_kprim_put_bytes(klog_buf_t *b, const void *p, int32_t len, int flex)
{
	put_len(b, p == NULL ? -1 : len, flex, 1);
	if (p != NULL && len > 0)
		klog_buf_put(b, p, (size_t)len);
}

void
klog_kprim_put_count(klog_buf_t *b, int32_t n, int flex)
{
	put_len(b, n, flex, 1);
}

void
klog_kprim_put_tags(klog_buf_t *b, int flex)
{
	if (flex)
		klog_buf_put_i8(b, 0);
}

size_t
klog_kprim_count_mark(klog_buf_t *b, int flex)
{
	size_t pos = b->len;

	if (flex)
		klog_buf_put_i8(b, 0);
	else
		klog_buf_put_i32(b, 0);
	return pos;
}

void
klog_kprim_count_patch(klog_buf_t *b, size_t pos, int32_t n, int flex)
{
	uint8_t tmp[5];
	size_t len;

	if (!flex) {
		klog_buf_patch_i32(b, pos, n);
		return;
	}
	if (b->failed || pos >= b->len)
		return;
	len = uvarint(tmp, (uint32_t)((int64_t)n + 1));
	if (len > 1) {
		if (klog_buf_reserve(b, len - 1) < 0)
			return;
		memmove(b->data + pos + len, b->data + pos + 1,
		    b->len - pos - 1);
		b->len += len - 1;
	}
	memcpy(b->data + pos, tmp, len);
}
