/*
 * A growing byte buffer for encoding, and a bounds-checked reader for
 * decoding; both big-endian.  Errors are sticky (like Redis's rio): after a
 * failed allocation or a read past the end every later call is a no-op, and
 * the caller checks once, at the end.
 */
#ifndef KLOG_BUF_H
#define KLOG_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct klog_buf {
	uint8_t *data;  /* owned; free with klog_buf_free() */
	size_t len;
	size_t cap;
	int failed;     /* an allocation failed */
} klog_buf_t;

void klog_buf_init(klog_buf_t *b);
void klog_buf_free(klog_buf_t *b);
void klog_buf_reset(klog_buf_t *b);          /* len = 0, keeps memory */
int klog_buf_reserve(klog_buf_t *b, size_t extra); /* 0 or -KLOG_ENOMEM */
/* Drop the first n bytes (consumed from the front). */
void klog_buf_consume(klog_buf_t *b, size_t n);
void klog_buf_put(klog_buf_t *b, const void *p, size_t n);
void klog_buf_put_i8(klog_buf_t *b, int8_t v);
void klog_buf_put_i16(klog_buf_t *b, int16_t v);
void klog_buf_put_i32(klog_buf_t *b, int32_t v);
void klog_buf_put_i64(klog_buf_t *b, int64_t v);
/* A protocol string: int16 length, then the bytes. */
void klog_buf_put_str(klog_buf_t *b, const char *s, size_t n);
/* Overwrite 4 bytes at pos (for a size known only at the end). */
void klog_buf_patch_i32(klog_buf_t *b, size_t pos, int32_t v);

/*
 * Grow the caller's array *p (*cap bytes; both zero at first) to hold at
 * least need bytes, doubling from 4 KiB; the contents are kept.  0, or
 * -KLOG_ENOMEM with the array as it was.  Inline for the common case, an
 * array already large enough (the broker asks once or more per request).
 */
int klog_buf_grow_to(void **p, size_t *cap, size_t need);

static inline int
klog_buf_grow(void **p, size_t *cap, size_t need)
{
	return need <= *cap ? 0 : klog_buf_grow_to(p, cap, need);
}

/* A string on the wire (a topic, a group): a view into the frame, not
 * NUL-terminated. */
typedef struct klog_str {
	const char *p;
	uint16_t len;
} klog_str_t;

/* s as a C string in buf (cap bytes): 0, or -1 when it does not fit or
 * holds a NUL. */
int klog_str_cstr(klog_str_t s, char *buf, size_t cap);

typedef struct klog_rd {
	const uint8_t *p;
	size_t len;
	size_t pos;
	int failed;     /* a read ran past the end or a string was bad */
} klog_rd_t;

void klog_rd_init(klog_rd_t *r, const void *p, size_t len);
int8_t klog_rd_i8(klog_rd_t *r);
int16_t klog_rd_i16(klog_rd_t *r);
int32_t klog_rd_i32(klog_rd_t *r);
int64_t klog_rd_i64(klog_rd_t *r);
/* A view of n bytes; NULL (and failed) if fewer remain. */
const uint8_t *klog_rd_bytes(klog_rd_t *r, size_t n);
/* A protocol string as a view (not NUL-terminated); length -1 is refused. */
const char *klog_rd_str(klog_rd_t *r, uint16_t *n);
static inline size_t
klog_rd_left(const klog_rd_t *r)
{
	return r->failed ? 0 : r->len - r->pos;
}

#endif
