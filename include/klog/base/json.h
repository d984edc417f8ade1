/*
 * The little JSON klog needs: writing NDJSON records whose payloads are
 * arbitrary bytes (a JSON string when the bytes are valid UTF-8, otherwise
 * base64); reading back the flat envelope objects that klog-consume -J
 * writes, so that klog-produce -J can round-trip them losslessly; and one
 * strict reader for the JSON klog finds in ZooKeeper, which other brokers
 * and Kafka's tools write.
 */
#ifndef KLOG_JSON_H
#define KLOG_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"

/* Whether p[0..n) is valid UTF-8 (no overlongs, no surrogates). */
int klog_utf8_valid(const void *p, size_t n);

/* Append p[0..n), valid UTF-8, as a quoted JSON string with escapes. */
void klog_json_put_string(klog_buf_t *b, const void *p, size_t n);

/* Append standard base64 (RFC 4648, padded) of p[0..n), unquoted. */
void klog_base64_put(klog_buf_t *b, const void *p, size_t n);

/* Decode base64 from s[0..n) into out (which must hold n / 4 * 3 bytes);
 * -KLOG_EINVAL on bad input. */
int klog_base64_decode(const char *s, size_t n, uint8_t *out, size_t *outlen);

/* One member of a flat JSON object, as parsed. */
typedef struct klog_json_member {
	const char *key;       /* view into the input, not NUL-terminated */
	size_t key_len;
	int type;              /* KLOG_JSON_STRING, _NUMBER, _BOOL, _NULL */
	const char *raw;       /* the value's text as it appears */
	size_t raw_len;
} klog_json_member_t;

enum klog_json_type {
	KLOG_JSON_STRING = 1,
	KLOG_JSON_NUMBER,
	KLOG_JSON_BOOL,
	KLOG_JSON_NULL,
};

/*
 * Parse one flat JSON object (string, number, bool or null values; nested
 * objects and arrays are refused) from s[0..n), surrounding white space
 * allowed.  Fills up to max members; -KLOG_EINVAL on malformed input or
 * more than max members.
 */
int klog_json_parse_flat(const char *s, size_t n, klog_json_member_t *members,
    size_t max, size_t *count);

/*
 * The reader: one JSON text read in place, by schema, building no tree.  It
 * is strict RFC 8259: strings hold no control byte, only the RFC's escapes
 * and valid UTF-8; numbers follow the RFC's grammar; only white space may
 * follow the value.  Every refusal returns -KLOG_EINVAL with "WHAT: why" in
 * err; err may be NULL, and then no message is made.
 */
typedef struct klog_json_rd {
	const char *p, *end;    /* the text not read yet */
	const char *what;       /* what is read, for messages: "topic JSON" */
	klog_err_t *err;
} klog_json_rd_t;

void klog_json_rd_init(klog_json_rd_t *r, const char *s, size_t n,
    const char *what, klog_err_t *err);

/* Refuse the text: -KLOG_EINVAL, with "WHAT: " and the reason in err. */
int klog_json_rd_fail(klog_json_rd_t *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The next byte that is not white space, left unread; -1 at the end. */
int klog_json_rd_peek(klog_json_rd_t *r);

/*
 * Called for each member of an object, positioned at its value.  field is
 * the key's index in the object's fields, or -1 for another key; key is the
 * text between the quotes, escapes undecoded (klog's keys have none, so a
 * key spelled with escapes is another key).  Returns 1 having read the
 * value, 0 to have it skipped, or a negative code.
 */
typedef int (*klog_json_member_fn)(klog_json_rd_t *r, int field,
    const char *key, size_t key_len, void *ctx);

/*
 * Read one object, calling fn for each member.  Each of fields[0..nfields)
 * (at most 32) must be there exactly once: a second one is refused ("KEY
 * twice"), and so is an object without one ("no KEY").  Other keys are a
 * later writer's additions: they may repeat, and a skipped value must be a
 * scalar, so that no structure goes unread unnoticed.
 */
int klog_json_rd_object(klog_json_rd_t *r, const char *const *fields,
    int nfields, klog_json_member_fn fn, void *ctx);

/* Called for each element of an array, positioned at it; reads it and
 * returns 0, or a negative code. */
typedef int (*klog_json_elem_fn)(klog_json_rd_t *r, void *ctx);

/* Read one array, calling fn for each element. */
int klog_json_rd_array(klog_json_rd_t *r, klog_json_elem_fn fn, void *ctx);

/* An integer (no fraction, no exponent) in [min, max]; field names it in
 * messages. */
int klog_json_rd_int(klog_json_rd_t *r, const char *field, int64_t min,
    int64_t max, int64_t *out);

/* A string, number, true, false or null: its type and raw text into m
 * (m->key is left alone). */
int klog_json_rd_scalar(klog_json_rd_t *r, klog_json_member_t *m);

/* Nothing but white space is left. */
int klog_json_rd_end(klog_json_rd_t *r);

/* Unescape a KLOG_JSON_STRING member's raw text (quotes included) into
 * bytes appended to b; -KLOG_EINVAL on a bad escape. */
int klog_json_unescape(klog_buf_t *b, const char *raw, size_t raw_len);

#endif
