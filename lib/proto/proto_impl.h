/*
 * The wire protocol's insides, shared by its files: proto.c (error codes,
 * framing) and the encoders and decoders of each group of APIs (produce.c,
 * fetch.c, offsets.c, metadata.c, topicadmin.c).  Nothing else includes
 * this.
 *
 * The readers and writers here run once per field of every frame, a
 * produce request's parts and a fetch response's partition headers among
 * them.  They are static inline: the compiler inlined them when the
 * protocol was one file, and a call per field from the files of the APIs
 * would make the hot paths slower.
 */
#ifndef KLOG_PROTO_IMPL_H
#define KLOG_PROTO_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"

/* Close the frame an encoder began (proto.c); 0, -KLOG_ENOMEM or
 * -KLOG_ETOOBIG. */
int proto_finish(klog_buf_t *b, size_t start);

/*
 * klog_proto_req_begin() and klog_proto_resp_begin(), inline for the
 * encoders here: those of a produce request (the producer's hot path) and
 * of its response (the broker's) would otherwise pay a call for what gcc
 * inlined when they shared a file.
 */
static inline size_t
proto_req_begin(klog_buf_t *b, int16_t api, int32_t correlation)
{
	size_t start = b->len;

	klog_buf_put_i32(b, 0);
	klog_buf_put_i16(b, api);
	klog_buf_put_i16(b, KLOG_PROTO_VERSION);
	klog_buf_put_i32(b, correlation);
	return start;
}

static inline size_t
proto_resp_begin(klog_buf_t *b, int32_t correlation, int16_t error)
{
	size_t start = b->len;

	klog_buf_put_i32(b, 0);
	klog_buf_put_i32(b, correlation);
	klog_buf_put_i16(b, error);
	return start;
}

static inline void
put_str(klog_buf_t *b, klog_str_t s)
{
	klog_buf_put_str(b, s.p, s.len);
}

static inline int
str_ok(klog_str_t s)
{
	return s.len <= INT16_MAX;
}

/* ---- decoding ---- */

static inline void
rd_topic(klog_rd_t *r, klog_str_t *s)
{
	s->p = klog_rd_str(r, &s->len);
}

/* A non-negative int32; a negative one marks the reader failed. */
static inline uint32_t
rd_size(klog_rd_t *r)
{
	int32_t v = klog_rd_i32(r);

	if (v < 0) {
		r->failed = 1;
		return 0;
	}
	return (uint32_t)v;
}

static inline int
rd_count(klog_rd_t *r, uint32_t max, uint32_t *n)
{
	uint32_t c = rd_size(r);

	if (r->failed)
		return -KLOG_EPROTO;
	if (c > max)
		return -KLOG_ETOOBIG;
	*n = c;
	return 0;
}

/* An int32 length and that many bytes, as a view. */
static inline const uint8_t *
rd_set(klog_rd_t *r, uint32_t *len)
{
	*len = rd_size(r);
	return klog_rd_bytes(r, *len);
}

/* The whole body must have been read, and nothing more. */
static inline int
rd_end(const klog_rd_t *r)
{
	if (r->failed || r->pos != r->len)
		return -KLOG_EPROTO;
	return 0;
}

/* ---- decoding into arrays that grow ---- */

/*
 * The count field at off in body, if count entries of at least min bytes
 * each could fit after it; -1 otherwise (the decoder would refuse it).
 */
static inline int64_t
peek_count(const uint8_t *body, size_t len, size_t off, size_t min)
{
	int32_t n;

	if (len < off + 4)
		return -1;
	n = (int32_t)klog_be32(body + off);
	if (n < 0 || (size_t)n > (len - off - 4) / min)
		return -1;
	return n;
}

/* Room in a for n + 1 entries of elem bytes (one, so 0 allocates). */
static inline int
array_fit(klog_proto_array_t *a, int64_t n, size_t elem)
{
	if (n < 0)
		return -KLOG_EPROTO;
	return klog_buf_grow(&a->p, &a->cap, (size_t)(n + 1) * elem);
}

#endif
