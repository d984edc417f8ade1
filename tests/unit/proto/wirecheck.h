/*
 * What the wire protocol's unit tests share: reading the reference frames
 * (each API's test writes its own out byte by byte), comparing an encoding
 * with one, and the malformed-input checks each API's test runs over its
 * own frames: cut short, a byte too many, a field patched.  Bodies are
 * decoded from an exact copy on the heap, so ASan sees any read past them.
 */
#ifndef KLOG_TEST_WIRECHECK_H
#define KLOG_TEST_WIRECHECK_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"

#define STR(s) ((klog_str_t){ (s), (uint16_t)(sizeof(s) - 1) })
#define MAXN 4
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define REQ_BODY(a) ((a) + KLOG_REQ_HEADER_SIZE)
#define REQ_BODY_LEN(a) (sizeof(a) - KLOG_REQ_HEADER_SIZE)
#define RESP_BODY(a) ((a) + KLOG_RESP_HEADER_SIZE)
#define RESP_BODY_LEN(a) (sizeof(a) - KLOG_RESP_HEADER_SIZE)

static inline void
assert_str(klog_str_t s, const char *want)
{
	assert_int_equal(s.len, strlen(want));
	assert_memory_equal(s.p, want, s.len);
}

static inline void
assert_frame(klog_buf_t *b, const uint8_t *want, size_t len)
{
	assert_false(b->failed);
	assert_int_equal(b->len, len);
	assert_memory_equal(b->data, want, len);
}

static inline void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A decoder with arrays of its own, for the table-driven checks. */
typedef int (*decode_fn)(const uint8_t *, size_t);

/* Decode a copy of exactly len bytes on the heap, so ASan sees any read
 * past it. */
static inline int
decode_copy(decode_fn fn, const uint8_t *body, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, body, len);
	rc = fn(copy, len);
	free(copy);
	return rc;
}

/* A copy of a reference body with 4 bytes at off replaced by v. */
static inline int
decode_patched(decode_fn fn, const uint8_t *body, size_t len, size_t off,
    uint32_t v)
{
	uint8_t buf[256];

	assert_true(len <= sizeof(buf) && off + 4 <= len);
	memcpy(buf, body, len);
	put_be32(buf + off, v);
	return decode_copy(fn, buf, len);
}

static inline int
decode_patched16(decode_fn fn, const uint8_t *body, size_t len, size_t off,
    uint16_t v)
{
	uint8_t buf[256];

	assert_true(len <= sizeof(buf) && off + 2 <= len);
	memcpy(buf, body, len);
	buf[off] = (uint8_t)(v >> 8);
	buf[off + 1] = (uint8_t)v;
	return decode_copy(fn, buf, len);
}

/* A reference body and its decoder. */
struct body_case {
	const char *name;
	decode_fn fn;
	const uint8_t *body;
	size_t len;
};

#define REQ_CASE(f, a) { #a, f, REQ_BODY(a), REQ_BODY_LEN(a) }
#define RESP_CASE(f, a) { #a, f, RESP_BODY(a), RESP_BODY_LEN(a) }

/* Each body decodes whole, and cut short anywhere is -KLOG_EPROTO. */
static inline void
check_truncations(const struct body_case *cases, size_t n)
{
	for (size_t c = 0; c < n; c++) {
		const struct body_case *k = &cases[c];

		assert_int_equal(decode_copy(k->fn, k->body, k->len), 0);
		for (size_t len = 0; len < k->len; len++)
			if (decode_copy(k->fn, k->body, len) != -KLOG_EPROTO)
				fail_msg("%s cut to %zu bytes: not EPROTO",
				    k->name, len);
	}
}

/* Each body with a byte after it is -KLOG_EPROTO. */
static inline void
check_trailing_bytes(const struct body_case *cases, size_t n)
{
	uint8_t buf[256];

	for (size_t c = 0; c < n; c++) {
		const struct body_case *k = &cases[c];

		assert_true(k->len + 1 <= sizeof(buf));
		memcpy(buf, k->body, k->len);
		buf[k->len] = 0;
		if (decode_copy(k->fn, buf, k->len + 1) != -KLOG_EPROTO)
			fail_msg("%s with a trailing byte: not EPROTO",
			    k->name);
	}
}

/* An int32 field at off in a reference body (after the header) that may
 * not be negative. */
struct field_case {
	const char *what;
	decode_fn fn;
	const uint8_t *body;
	size_t len, off;
};

/* Each field made -1, then INT32_MIN, is -KLOG_EPROTO. */
static inline void
check_negative_fields(const struct field_case *neg, size_t n)
{
	static const uint32_t bad[] = { 0xffffffffu, 0x80000000u };

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < 2; j++)
			if (decode_patched(neg[i].fn, neg[i].body, neg[i].len,
			    neg[i].off, bad[j]) != -KLOG_EPROTO)
				fail_msg("negative %s: not EPROTO",
				    neg[i].what);
}

#endif
