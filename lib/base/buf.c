#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"

void
klog_buf_init(klog_buf_t *b)
{
	memset(b, 0, sizeof(*b));
}

void
klog_buf_free(klog_buf_t *b)
{
	free(b->data);
	klog_buf_init(b);
}

void
klog_buf_reset(klog_buf_t *b)
{
	b->len = 0;
	b->failed = 0;
}

int
klog_buf_reserve(klog_buf_t *b, size_t extra)
{
	size_t cap;
	uint8_t *p;

	if (b->failed)
		return -KLOG_ENOMEM;
	if (extra <= b->cap - b->len)
		return 0;
	if (extra > SIZE_MAX / 2 - b->len)
		goto fail;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < extra)
		cap *= 2;
	if ((p = realloc(b->data, cap)) == NULL)
		goto fail;
	b->data = p;
	b->cap = cap;
	return 0;
fail:
	b->failed = 1;
	return -KLOG_ENOMEM;
}

int
klog_buf_grow_to(void **p, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4096;
	void *q;

	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -KLOG_ENOMEM;
		n *= 2;
	}
	if ((q = realloc(*p, n)) == NULL)
		return -KLOG_ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

void
klog_buf_consume(klog_buf_t *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

void
klog_buf_put(klog_buf_t *b, const void *p, size_t n)
{
	if (n == 0 || klog_buf_reserve(b, n) < 0)
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/*
 * The fixed-size puts and reads are per field of every request: written so
 * that the compiler makes each one a byte swap and a store or load (the
 * loops they replace took 50 instructions a field), with the room checked
 * once.
 */
static inline void
put_small(klog_buf_t *b, const uint8_t *p, size_t n)
{
	if (b->failed || b->cap - b->len < n) {
		klog_buf_put(b, p, n);
		return;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void
klog_buf_put_i8(klog_buf_t *b, int8_t v)
{
	uint8_t p[1] = { (uint8_t)v };

	put_small(b, p, 1);
}

void
klog_buf_put_i16(klog_buf_t *b, int16_t v)
{
	uint8_t p[2] = { (uint8_t)((uint16_t)v >> 8), (uint8_t)v };

	put_small(b, p, 2);
}

static inline void
store_be32(uint8_t *p, uint32_t u)
{
	p[0] = (uint8_t)(u >> 24);
	p[1] = (uint8_t)(u >> 16);
	p[2] = (uint8_t)(u >> 8);
	p[3] = (uint8_t)u;
}

void
klog_buf_put_i32(klog_buf_t *b, int32_t v)
{
	uint8_t p[4];

	store_be32(p, (uint32_t)v);
	put_small(b, p, 4);
}

void
klog_buf_put_i64(klog_buf_t *b, int64_t v)
{
	uint8_t p[8];
	uint64_t u = (uint64_t)v;

	store_be32(p, (uint32_t)(u >> 32));
	store_be32(p + 4, (uint32_t)u);
	put_small(b, p, 8);
}

void
klog_buf_put_str(klog_buf_t *b, const char *s, size_t n)
{
	if (n > INT16_MAX) {
		b->failed = 1;
		return;
	}
	klog_buf_put_i16(b, (int16_t)n);
	klog_buf_put(b, s, n);
}

void
klog_buf_patch_i32(klog_buf_t *b, size_t pos, int32_t v)
{
	uint32_t u = (uint32_t)v;

	/* Written so that a pos near SIZE_MAX cannot wrap past the check. */
	if (b->failed || pos > b->len || b->len - pos < 4)
		return;
	store_be32(b->data + pos, u);
}

void
klog_rd_init(klog_rd_t *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->pos = 0;
	r->failed = 0;
}

const uint8_t *
klog_rd_bytes(klog_rd_t *r, size_t n)
{
	const uint8_t *p;

	if (r->failed || n > r->len - r->pos) {
		r->failed = 1;
		return NULL;
	}
	p = r->p + r->pos;
	r->pos += n;
	return p;
}

static inline uint32_t
load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

int8_t
klog_rd_i8(klog_rd_t *r)
{
	const uint8_t *p = klog_rd_bytes(r, 1);

	return p ? (int8_t)p[0] : 0;
}

int16_t
klog_rd_i16(klog_rd_t *r)
{
	const uint8_t *p = klog_rd_bytes(r, 2);

	return p ? (int16_t)((uint16_t)(p[0] << 8 | p[1])) : 0;
}

int32_t
klog_rd_i32(klog_rd_t *r)
{
	const uint8_t *p = klog_rd_bytes(r, 4);

	return p ? (int32_t)load_be32(p) : 0;
}

int64_t
klog_rd_i64(klog_rd_t *r)
{
	const uint8_t *p = klog_rd_bytes(r, 8);

	return p ? (int64_t)((uint64_t)load_be32(p) << 32 | load_be32(p + 4)) :
	    0;
}

const char *
klog_rd_str(klog_rd_t *r, uint16_t *n)
{
	int16_t len = klog_rd_i16(r);
	const char *s;

	*n = 0;
	if (len < 0) {
		r->failed = 1;
		return NULL;
	}
	s = (const char *)klog_rd_bytes(r, (size_t)len);
	if (s != NULL)
		*n = (uint16_t)len;
	return s;
}

int
klog_str_cstr(klog_str_t s, char *buf, size_t cap)
{
	if (s.p == NULL || s.len >= cap || memchr(s.p, '\0', s.len) != NULL)
		return -1;
	memcpy(buf, s.p, s.len);
	buf[s.len] = '\0';
	return 0;
}
