/*
 * The little JSON klog needs: writing NDJSON records whose payloads are
 * arbitrary bytes (a JSON string when the bytes are valid UTF-8, otherwise
 * base64), and reading back the flat envelope objects that klog-consume -J
 * writes, so that klog-produce -J can round-trip them losslessly.
 */
#ifndef KLOG_JSON_H
#define KLOG_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"

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

/* Unescape a KLOG_JSON_STRING member's raw text (quotes included) into
 * bytes appended to b; -KLOG_EINVAL on a bad escape. */
int klog_json_unescape(klog_buf_t *b, const char *raw, size_t raw_len);

#endif
