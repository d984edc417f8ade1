/*
 * klog-produce's input: records cut from a byte stream at a delimiter of
 * any length, and the -J envelope that klog-consume -J writes (with the
 * keys, timestamps and headers of records that have them).
 *
 * The splitter reads stdin in large chunks into one buffer and hands out
 * records as views into it (no copy, no allocation per record).  A delimiter
 * may straddle two reads.  A final record without a delimiter at EOF is a
 * record; a delimiter at the very end does not make an extra empty one;
 * an empty record between two delimiters is kept.
 */
#ifndef KLOG_INPUT_H
#define KLOG_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/names.h"
#include "klog/storage/record.h"

typedef struct klog_input {
	uint8_t *buf;          /* owned */
	size_t cap;
	size_t start;          /* first byte of the current record */
	size_t end;            /* end of the bytes read */
	size_t scan;           /* where the delimiter search resumes */
	uint8_t delim[64];
	size_t dlen;
	size_t max_record;
	int eof;
	int skipping;          /* inside a record too long, reported */
	int unterminated;      /* the last record taken ended at EOF, with no
	                        * delimiter: its writer may have died in it */
} klog_input_t;

#define KLOG_INPUT_DELIM_MAX 64

/*
 * Prepare in for records of at most max_record bytes cut at delim[0..dlen)
 * (1..KLOG_INPUT_DELIM_MAX bytes).  -KLOG_EINVAL, -KLOG_ENOMEM.  Free with
 * klog_input_free().
 */
int klog_input_init(klog_input_t *in, const void *delim, size_t dlen,
    size_t max_record);
void klog_input_free(klog_input_t *in);

/*
 * One read(2) from fd into the buffer: 1 if bytes came (or none were ready
 * on a non-blocking fd), 0 at end of file,
 * -KLOG_EIO with err on a read error.  Invalidates the record views.
 */
int klog_input_fill(klog_input_t *in, int fd, klog_err_t *err);

/* Append bytes as if read (for tests and for callers with their own I/O). */
int klog_input_feed(klog_input_t *in, const void *p, size_t n);
/* Mark the end of the input. */
void klog_input_set_eof(klog_input_t *in);

/*
 * The next complete record: 1 with a view *rec of *len bytes (valid until
 * the next fill or feed); 0 if no complete record is buffered (fill again;
 * after EOF it means the input is finished); -KLOG_ETOOBIG once for a
 * record longer than max_record, which is dropped: its bytes are thrown
 * away as they come, up to its delimiter, without ever being held whole,
 * and the calls after go on with the record after it.  After a 1,
 * in->unterminated tells the last record of an input that did not end with
 * a delimiter, as a writer killed mid-record leaves it.
 */
int klog_input_next(klog_input_t *in, const uint8_t **rec, size_t *len);

/* Where a record came from, as klog-consume -J says. */
typedef struct klog_input_source {
	char topic[KLOG_TOPIC_MAX + 1];
	int32_t partition;
	int64_t offset;            /* the record's own; -1 if not given */
	int64_t next_offset;
} klog_input_source_t;

/*
 * One -J envelope's record, decoded into buffers of its own that are
 * reused from line to line (klog_input_record_init(), _free()).
 */
typedef struct klog_input_record {
	klog_buf_t payload;        /* the value's bytes */
	int null_payload;          /* "payload":null: a null value */
	klog_buf_t key;
	int has_key;               /* "key" or "key_base64" (not null) */
	int64_t timestamp;         /* KLOG_NO_TIMESTAMP: none given */
	klog_header_t *hdrs;       /* header_count of them, into hbytes */
	uint32_t header_count;
	uint32_t hdrs_cap;
	klog_buf_t hbytes;         /* the headers' names and values */
} klog_input_record_t;

void klog_input_record_init(klog_input_record_t *rec);
void klog_input_record_free(klog_input_record_t *rec);

/*
 * Decode one -J envelope line, a JSON object as klog-consume -J writes it,
 * into rec (emptied first): the bytes of "payload" or "payload_base64"
 * ("payload":null: a null value); "size", if present, must match; "key" or
 * "key_base64" (absent or null: no key); "timestamp" (ms, absent, null or
 * -1: none); "headers", an array of {"key" or "key_base64", "value",
 * "value_base64" or "value":null}.  Every member but "headers" is a
 * scalar; other members are ignored.  With src, also the record's source
 * position from its "topic", "partition" and "next_offset" (klog-produce
 * --source-offset-file), each of which must then be there as klog-consume
 * writes it.  Returns 1 for a record, 0 for a blank line (nothing to
 * send), -KLOG_EINVAL with err saying what is wrong, -KLOG_ENOMEM.
 */
int klog_input_envelope(const uint8_t *line, size_t len,
    klog_input_record_t *rec, klog_input_source_t *src, klog_err_t *err);

#endif
