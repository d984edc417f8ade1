/*
 * The records of a magic-2 entry's body (record.h), one at a time: what
 * the message iterator (format.h) walks for KLOG_ITER_DEEP and what
 * klog_msgset_validate() counts.
 *
 * Opening a body checks all of it before any record is handed out, as a
 * gzip wrapper's inner set is checked whole: the 40-byte header, the codec
 * (0-4), the records decompressed (codec.h) within the caller's bound,
 * then every record read (klog_record_read()) with offsetDelta i for the
 * i-th, recordsCount of them filling the records exactly.
 *
 * A record's timestamp (Kafka's rules, DefaultRecordBatch): the batch's
 * maxTimestamp under LogAppendTime (attributes bit 3); KLOG_NO_TIMESTAMP
 * when firstTimestamp is KLOG_NO_TIMESTAMP; else firstTimestamp +
 * timestampDelta (wrapping as Java's long does, never undefined).
 */
#ifndef KLOG_BATCHITER_H
#define KLOG_BATCHITER_H

#include <stddef.h>
#include <stdint.h>

#include "klog/storage/record.h"

/* Stack-allocate it; fields are private but for batch. */
typedef struct klog_batchiter {
	klog_batch_t batch;           /* the body's header, decoded */
	const uint8_t *recs;          /* the records: in the body, or owned */
	size_t len, pos;
	uint8_t *owned;               /* the decompressed records */
	int32_t index;                /* the next record's */
} klog_batchiter_t;

/*
 * Open body[0..len), decompressing its records into a buffer of at most
 * max_inflate bytes that the iterator owns until klog_batchiter_close().
 * Returns 0; -KLOG_ECORRUPT for a header cut or a codec over 4, records
 * that do not decompress, or a record that does not read, is out of order
 * or miscounted; -KLOG_ETOOBIG for records that decompress past
 * max_inflate; -KLOG_ENOMEM.  *why says which in a static text.  On error
 * nothing stays open.
 */
int klog_batchiter_open(klog_batchiter_t *bi, const uint8_t *body,
    size_t len, size_t max_inflate, const char **why);

/*
 * The next record: 1 with *r (pointers into the body or the iterator's
 * buffer, valid until close) and its timestamp; 0 after the last.
 */
int klog_batchiter_next(klog_batchiter_t *bi, klog_record_t *r,
    int64_t *timestamp);

/* Release the decompressed records. */
void klog_batchiter_close(klog_batchiter_t *bi);

#endif
