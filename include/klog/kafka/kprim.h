/*
 * The Kafka protocol's primitive types, read and written in both of the
 * protocol's encodings: the classic one (int16-length strings, int32-length
 * bytes and arrays) and the flexible one of KIP-482 (lengths as unsigned
 * varints of length + 1, 0 for null, and a block of tagged fields closing
 * each structure).  A request's version says which its body uses
 * (klog_kwire_flexible()); the decoders and encoders of every API take
 * that one flag and otherwise read alike.  No I/O.
 *
 *   uvarint          7 bits a byte, low first, high bit set on all but the
 *                    last; at most 5 bytes for 32 bits
 *   compact string   uvarint(len + 1) | bytes      (0: null)
 *   compact bytes    uvarint(len + 1) | bytes      (0: null)
 *   compact array    uvarint(count + 1) | items    (0: null)
 *   tagged fields    uvarint(n) | [ uvarint(tag) | uvarint(size) | data ]*
 */
#ifndef KLOG_KPRIM_H
#define KLOG_KPRIM_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/proto/proto.h"

/* A body's reader: a sticky reader and the encoding it reads. */
typedef struct klog_kprim_rd {
	klog_rd_t rd;
	int flex;
} klog_kprim_rd_t;

void klog_kprim_rd_init(klog_kprim_rd_t *r, const void *p, size_t len,
    int flex);

/* An unsigned varint of at most 32 bits (a longer one fails the reader). */
uint32_t klog_kprim_uvarint(klog_rd_t *r);

/* A nullable string (null: {NULL, 0}; empty: {"", 0}); strings longer
 * than 32767 bytes fail the reader in either encoding. */
klog_str_t klog_kprim_nstr(klog_kprim_rd_t *r);
/* A string that may not be null. */
klog_str_t klog_kprim_str(klog_kprim_rd_t *r);
/* Nullable bytes as a view, *len (0 for null); NULL once the reader has
 * failed, else never NULL. */
const uint8_t *klog_kprim_bytes(klog_kprim_rd_t *r, uint32_t *len);
/*
 * An array's count, at least min bytes an element (so a count the rest of
 * the body cannot hold fails the reader); -1 for a null array when nullable,
 * else null fails it too.
 */
int32_t klog_kprim_count(klog_kprim_rd_t *r, size_t min, int nullable);
/* A structure's tagged fields, skipped (none in the classic encoding). */
void klog_kprim_tags(klog_kprim_rd_t *r);
/* 0, or -KLOG_EPROTO once the reader has failed. */
int klog_kprim_done(const klog_kprim_rd_t *r);
/* The end of a body: its tagged fields, then klog_kprim_done(). */
int klog_kprim_end(klog_kprim_rd_t *r);

/* Room for element i (of sz bytes) of a's array, grown as needed; NULL
 * out of memory. */
void *klog_kprim_slot(klog_proto_array_t *a, size_t i, size_t sz);

/* ---- writing, onto b (errors sticky) ---- */

void klog_kprim_put_uvarint(klog_buf_t *b, uint32_t v);
/* A nullable string (p NULL: null) or bytes (NULL: null). */
void klog_kprim_put_str(klog_buf_t *b, klog_str_t s, int flex);
void klog_kprim_put_cstr(klog_buf_t *b, const char *s, int flex);
void klog_kprim_put_bytes(klog_buf_t *b, const void *p, int32_t len,
    int flex);
/* An array's count (-1: null). */
void klog_kprim_put_count(klog_buf_t *b, int32_t n, int flex);
/* An empty block of tagged fields (nothing in the classic encoding). */
void klog_kprim_put_tags(klog_buf_t *b, int flex);

/*
 * A count known only after its elements: mark reserves its room at the
 * current end (4 bytes classic, 1 flexible), patch writes it there.  A
 * flexible count over 126 needs more bytes than reserved: what follows is
 * moved on, so positions taken after the mark move too.
 */
size_t klog_kprim_count_mark(klog_buf_t *b, int flex);
void klog_kprim_count_patch(klog_buf_t *b, size_t pos, int32_t n, int flex);

#endif
