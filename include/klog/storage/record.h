/*
 * A magic-2 entry's body: Kafka's RecordBatch v2 from its attributes on,
 * the part its CRC-32C covers, kept byte for byte (klog-format(5)).
 *
 *   +-----------+---------+---------+-----------+--------------------------+
 *   | length:4  | magic:1 | attrs:1 | crc32c:4  | body (below)             |
 *   |           |    2    |         |           |                          |
 *   +-----------+---------+---------+-----------+--------------------------+
 *   length = 6 + body; attrs = the body's attributes' low byte; crc32c =
 *   CRC-32C (Castagnoli, Kafka's) of the body: the batch's own CRC.
 *
 *   body:
 *   attributes:2 lastOffsetDelta:4 firstTimestamp:8 maxTimestamp:8
 *   producerId:8 producerEpoch:2 baseSequence:4 recordsCount:4 records...
 *   (40 bytes, then the records, compressed as one when attributes & 7)
 *
 *   record (Kafka's, varints zigzag):
 *   length:varint attributes:1 timestampDelta:varlong offsetDelta:varint
 *   keyLength:varint key valueLength:varint value
 *   headersCount:varint [ keyLength:varint key valueLength:varint value ]*
 *
 * A Kafka fetch answer is the stored body behind a 21-byte prefix
 * (baseOffset:8 batchLength:4 partitionLeaderEpoch:4 magic:1 crc:4), all
 * of it from the entry: so it can be sent with sendfile(2).
 *
 * Offsets: the entry's offset W is its byte position, as for every entry.
 * Record i's Kafka offset is W + its offsetDelta, which is i (checked when
 * written).  lastOffsetDelta is stored as length + 3, so the batch's last
 * Kafka offset is the entry's last byte and a client's next fetch offset
 * (last + 1) is the next entry's position.  For klog's own readers the
 * records are like a wrapper's messages: all at offset W, the last one's
 * next offset past the entry.  The producer's last sequence is
 * baseSequence + recordsCount - 1 (not + lastOffsetDelta, as in Kafka).
 */
#ifndef KLOG_RECORD_H
#define KLOG_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"

#define KLOG_MAGIC2 2
#define KLOG_MAGIC2_HEADER 6          /* magic, attrs, crc32c */
#define KLOG_BATCH_BODY_HEADER 40     /* attributes .. recordsCount */
#define KLOG_BATCH_PREFIX 21          /* what a Kafka fetch puts before
                                         the body */

/* Byte positions in the body. */
#define KLOG_BATCH_ATTRS_AT 0
#define KLOG_BATCH_LAST_DELTA_AT 2
#define KLOG_BATCH_FIRST_TS_AT 6
#define KLOG_BATCH_MAX_TS_AT 14
#define KLOG_BATCH_PRODUCER_ID_AT 22
#define KLOG_BATCH_EPOCH_AT 30
#define KLOG_BATCH_BASE_SEQ_AT 32
#define KLOG_BATCH_COUNT_AT 36

/* Kafka's attributes bits. */
#define KLOG_BATCH_CODEC_MASK 0x07    /* 0 none 1 gzip 2 snappy 3 lz4 4 zstd */
#define KLOG_BATCH_LOG_APPEND_TIME 0x08
#define KLOG_BATCH_TRANSACTIONAL 0x10
#define KLOG_BATCH_CONTROL 0x20

#define KLOG_NO_TIMESTAMP (-1)
#define KLOG_NO_PRODUCER (-1)

/* The body's 40-byte header, decoded. */
typedef struct klog_batch {
	uint16_t attributes;
	int32_t last_offset_delta;
	int64_t first_timestamp;
	int64_t max_timestamp;
	int64_t producer_id;          /* KLOG_NO_PRODUCER: not idempotent */
	int16_t producer_epoch;
	int32_t base_sequence;
	int32_t count;
} klog_batch_t;

/* The header of body[0..len): -KLOG_ECORRUPT if len < 40. */
int klog_batch_read(const uint8_t *body, size_t len, klog_batch_t *b);

/* Write b's 40 bytes at body. */
void klog_batch_write(uint8_t *body, const klog_batch_t *b);

/* CRC-32C (ISA-L), continuing from crc (0 to start). */
uint32_t klog_crc32c(uint32_t crc, const void *p, size_t len);

/* One record, its pointers into the records it was read from. */
typedef struct klog_record {
	int64_t timestamp_delta;
	int32_t offset_delta;
	const uint8_t *key;           /* NULL when null */
	int32_t key_len;              /* -1 when null */
	const uint8_t *value;         /* NULL when null */
	int32_t value_len;            /* -1 when null */
	const uint8_t *headers;       /* the headers' bytes, after the count */
	size_t headers_len;
	uint32_t header_count;
	size_t size;                  /* bytes the record took, its length
	                                 varint included */
} klog_record_t;

/*
 * The record at p[0..left): every length inside its own, the headers
 * walked.  -KLOG_ECORRUPT if not, or -KLOG_EPARTIAL if left cuts it.
 */
int klog_record_read(const uint8_t *p, size_t left, klog_record_t *r);

/*
 * A batch's records recs[0..len), count of them, checked as the broker
 * takes them: each one read, their offset deltas 0, 1, ..., filling recs
 * exactly.  0, or -KLOG_ECORRUPT and *why.
 */
int klog_record_scan(const uint8_t *recs, size_t len, int32_t count,
    const char **why);

/* One header, pointers into the record. */
typedef struct klog_header {
	const uint8_t *key;
	size_t key_len;
	const uint8_t *value;         /* NULL when null */
	int32_t value_len;            /* -1 when null */
} klog_header_t;

/*
 * The next header of a record's headers (a klog_record_t's or a
 * klog_msg_t's headers and headers_len; *pos from 0): 1 and *h filled,
 * 0 after the last.  The record was checked by klog_record_read().
 */
int klog_record_header_next(const uint8_t *headers, size_t len, size_t *pos,
    klog_header_t *h);

/* A record to write. */
typedef struct klog_record_in {
	const void *value;          /* NULL: a null value (a tombstone) */
	size_t value_len;
	const void *key;            /* NULL: a null key */
	size_t key_len;
	int64_t timestamp;          /* ms; KLOG_NO_TIMESTAMP (-1): none */
	const klog_header_t *headers;
	uint32_t header_count;
} klog_record_in_t;

/*
 * Append rec to out as one record with the deltas given.  Sets
 * out->failed on allocation failure.
 */
void klog_record_write(klog_buf_t *out, int64_t timestamp_delta,
    int32_t offset_delta, const klog_record_in_t *rec);

/*
 * Building one magic-2 entry in out: begin reserves the entry's header
 * and the body's 40 bytes, records are written after them with
 * klog_record_write() (offset_delta 0, 1, ...), end fills in the header
 * (count, the deltas, the timestamps, the length, the CRC-32C) from the
 * records written.  Uncompressed; a builder of compressed batches
 * compresses the records itself and calls klog_batch_seal().
 */
typedef struct klog_batch_builder {
	size_t start;                 /* out->len at begin */
	int64_t first_timestamp;
	int64_t max_timestamp;
	int32_t count;
	klog_batch_t fields;          /* producer id, epoch, sequence */
} klog_batch_builder_t;

void klog_batch_begin(klog_batch_builder_t *bb, klog_buf_t *out,
    int64_t first_timestamp, int64_t producer_id, int16_t epoch,
    int32_t base_sequence);

/* Append rec with the next offset delta. */
void klog_batch_add(klog_batch_builder_t *bb, klog_buf_t *out,
    const klog_record_in_t *rec);

/* Finish the entry: 0, or -KLOG_ENOMEM (out->failed). */
int klog_batch_end(klog_batch_builder_t *bb, klog_buf_t *out);

/*
 * Make the magic-2 entry at entry[0..size) (its length field written)
 * whole, as it is stored: lastOffsetDelta set to length + 3, the attrs
 * byte from the body's attributes, the CRC-32C computed.  After any
 * change to the body (a broker's LogAppendTime), and by
 * klog_batch_end().
 */
void klog_batch_seal(uint8_t *entry, size_t size);

#endif
