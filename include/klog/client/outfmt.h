/*
 * How klog-consume prints a message: a -f format string compiled once into a
 * list of literal runs and tokens, then rendered per message into one big
 * output buffer (no allocation per message), or the -J NDJSON envelope.
 *
 * Format tokens:
 *   %s payload bytes        %S payload size (decimal; -1 for a null value)
 *   %R payload size as a 4-byte big-endian integer (binary framing)
 *   %o offset               %O next offset (where a reader resumes)
 *   %p partition            %t topic                 %% a '%'
 *   %k key bytes            %K key size (-1 when there is no key)
 *   %T timestamp, ms since the epoch (-1 when there is none)
 *   %h headers as kcat prints them: name=value,name2=value2 (raw bytes; a
 *      null value prints as nothing after its '=')
 * kcat's tokens with kcat's meanings.  Escapes (in formats and in
 * delimiters):
 *   \n \r \t \\ \0 \xNN (exactly two hex digits)
 * Any other token or escape is refused.
 *
 * The -J envelope is one JSON object per line:
 *   {"topic":"t","partition":0,"offset":0,"next_offset":14,"size":4,
 *    "payload":"text"}
 * with "payload_base64" instead of "payload" when the bytes are not valid
 * UTF-8, so every line is valid JSON and klog-produce -J can read it back;
 * "payload":null for a null value (a Kafka tombstone).  A record of a
 * magic-2 entry adds, before the payload, what it has of:
 *   "key":"k" (or "key_base64"), "timestamp":1700000000000,
 *   "headers":[{"key":"h","value":"v"},...] (each "key_base64",
 *   "value_base64" where not UTF-8, "value":null for a null value)
 * A record without them renders exactly as a plain message.
 */
#ifndef KLOG_OUTFMT_H
#define KLOG_OUTFMT_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/record.h"

typedef struct klog_outfmt klog_outfmt_t;

/* One message as rendered; the pointers are borrowed for the call. */
typedef struct klog_outfmt_rec {
	const char *topic;
	size_t topic_len;
	int32_t partition;
	int64_t offset;
	int64_t next_offset;
	const uint8_t *payload;       /* NULL: a null value (payload_len 0) */
	size_t payload_len;
	/* A magic-2 record's (format.h's klog_msg_t); a plain message has
	 * key NULL, timestamp KLOG_NO_TIMESTAMP and header_count 0. */
	const uint8_t *key;           /* NULL: no key */
	int32_t key_len;
	int64_t timestamp;
	const uint8_t *headers;       /* record.h's header bytes */
	size_t headers_len;
	uint32_t header_count;
} klog_outfmt_rec_t;

/*
 * Compile fmt.  On success *out is owned by the caller (klog_outfmt_free());
 * on a bad token or escape, -KLOG_EINVAL with err naming it, e.g.
 * "%q: unknown format token".
 */
int klog_outfmt_compile(const char *fmt, klog_outfmt_t **out, klog_err_t *err);

/*
 * klog-consume -D: each payload followed by delim, whose backslash escapes
 * are decoded and whose '%' is a '%' (the format "%s" then delim, '%'
 * doubled).  *out and errors as klog_outfmt_compile().
 */
int klog_outfmt_delimited(const char *delim, klog_outfmt_t **out,
    klog_err_t *err);

/* The -J envelope as a compiled format; *out as above. */
int klog_outfmt_json(klog_outfmt_t **out);

void klog_outfmt_free(klog_outfmt_t *f);

/* Append one rendered message to out (errors stay sticky in out). */
void klog_outfmt_render(const klog_outfmt_t *f, const klog_outfmt_rec_t *r,
    klog_buf_t *out);

/*
 * Decode the backslash escapes of s (a -D or -K delimiter) into out;
 * -KLOG_EINVAL with err naming a bad escape.  '%' has no meaning here.
 */
int klog_outfmt_unescape(const char *s, klog_buf_t *out, klog_err_t *err);

#endif
