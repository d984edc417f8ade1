/*
 * How klog-consume prints a message: a -f format string compiled once into a
 * list of literal runs and tokens, then rendered per message into one big
 * output buffer (no allocation per message), or the -J NDJSON envelope.
 *
 * Format tokens:
 *   %s payload bytes        %S payload size (decimal)
 *   %R payload size as a 4-byte big-endian integer (binary framing)
 *   %o offset               %O next offset (where a reader resumes)
 *   %p partition            %t topic                 %% a '%'
 * Escapes (in formats and in delimiters):
 *   \n \r \t \\ \0 \xNN (exactly two hex digits)
 * Kafka 0.7 messages have no key, timestamp or headers, so kcat's %k %K %T
 * %h are refused with a message that says so; any other token or escape is
 * refused too.
 *
 * The -J envelope is one JSON object per line:
 *   {"topic":"t","partition":0,"offset":0,"next_offset":14,"size":4,
 *    "payload":"text"}
 * with "payload_base64" instead of "payload" when the bytes are not valid
 * UTF-8, so every line is valid JSON and klog-produce -J can read it back.
 */
#ifndef KLOG_OUTFMT_H
#define KLOG_OUTFMT_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"

typedef struct klog_outfmt klog_outfmt_t;

/* One message as rendered; the pointers are borrowed for the call. */
typedef struct klog_outfmt_rec {
	const char *topic;
	size_t topic_len;
	int32_t partition;
	int64_t offset;
	int64_t next_offset;
	const uint8_t *payload;
	size_t payload_len;
} klog_outfmt_rec_t;

/*
 * Compile fmt.  On success *out is owned by the caller (klog_outfmt_free());
 * on a bad token or escape, -KLOG_EINVAL with err naming it, e.g.
 * "%k: messages have no key in the Kafka 0.7 format".
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
