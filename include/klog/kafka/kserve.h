/*
 * klog's magic-2 entries (record.h) in a Kafka fetch answer, for the
 * Kafka listener's fetch path (kmsg.h's klog_kmsg_serve() walks the set
 * and hands them here).  No I/O.
 *
 * Fetch v4 and later read RecordBatch v2: the entry at W, of length
 * field N, goes out as the batch it was, its body as stored behind a
 * 21-byte prefix made of the entry's own fields, no transcoding:
 *
 *   +----------+-----------+--------------+---------+-------+-----------+
 *   | W:8      | N + 3:4   | -1:4         | 2:1     | crc:4 | body      |
 *   | baseOff. | batchLen. | leaderEpoch  | magic   |       | N - 6 B   |
 *   +----------+-----------+--------------+---------+-------+-----------+
 *
 * Fetch v0 to v3 read MessageSets: each record, decompressed, becomes a
 * message (magic 0 for Fetch v0-1; magic 1, with the record's timestamp
 * and its type, for v2-3) carrying its key and value, with a CRC-32
 * computed; headers have nowhere to go.  Record i's Kafka offset is
 * W + i, the last one's E - 1 (E = W + 4 + N, the next entry), as
 * kmsg.h numbers the inner messages of a wrapper, so that a client's
 * next fetch offset is E.
 *
 * Either way an entry goes whole or not at all; records below the fetch
 * offset are left out of a MessageSet (Kafka clients skip them in a
 * batch), and an entry whose last record is below it is skipped.
 */
#ifndef KLOG_KSERVE_H
#define KLOG_KSERVE_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"

/* A fetch answer's partition being written. */
typedef struct klog_kserve {
	int64_t min_offset;      /* the fetch offset */
	size_t max_out;          /* bytes to add at most (the first entry
	                            that adds any goes whole) */
	size_t max_inflate;      /* what a compressed entry may inflate to */
	size_t start;            /* out->len when this walk began */
	size_t prior;            /* bytes the partition's answer got before
	                            this walk (earlier reads, and bodies
	                            sent from the file): counted with
	                            out's against max_out */
	klog_buf_t *out;
	uint32_t messages;       /* Kafka messages (records) written */
	int magic;               /* what the fetch version reads: 0 (Fetch
	                            v0-1), 1 (v2-3), 2 (v4 and later) */
} klog_kserve_t;

/* What klog_kserve_entry() (and kmsg.c's serving) did with an entry. */
enum {
	KLOG_KSERVE_SERVED = 0,  /* written, or skipped as below the offset */
	KLOG_KSERVE_FULL = 1,    /* not written: over max_out */
	KLOG_KSERVE_BAD = 2,     /* not written: it cannot be served */
	KLOG_KSERVE_CUT = 3,     /* not written: the set cuts it */
	KLOG_KSERVE_BIG = 4,     /* not written: a batch for the caller to
	                            send from the file (klog_kserve_head()) */
};

/* The bytes of a magic-2 entry klog_kserve_head() reads: its length
 * field, magic, attributes, CRC and batch header. */
#define KLOG_KSERVE_HEAD 50
/* Where in such an entry the body that follows the prefix starts. */
#define KLOG_KSERVE_BODY_AT 10

/* The fetch version's message format: 0, 1 or 2 (above). */
int klog_kserve_magic(int16_t fetch_version);

/* Would adding n more bytes break c->max_out?  Never for the first. */
int klog_kserve_over(const klog_kserve_t *c, size_t n);

/*
 * The whole magic-2 entry at p (length its length field, all its bytes in
 * memory) at partition offset at, written as c->magic asks.  Returns a
 * KLOG_KSERVE_* (BAD for a header that is not as written, with no record
 * or a lastOffsetDelta other than length + 3, or, when its records
 * are read for a MessageSet, a bad CRC-32C or records that do not inflate
 * within c->max_inflate), or -KLOG_ENOMEM with out as it was.
 */
int klog_kserve_entry(klog_kserve_t *c, const uint8_t *p, uint32_t length,
    int64_t at);

/*
 * For Fetch v4 and later (c->magic 2), the batch of the magic-2 entry at
 * partition offset at, of length field length, with only its first
 * KLOG_KSERVE_HEAD bytes, p, in memory: checked as klog_kserve_entry()
 * checks it, its 21-byte prefix written to out, and *body set to the
 * length of the body, the entry's bytes from KLOG_KSERVE_BODY_AT on,
 * which the caller sends from the file right after the prefix (the
 * stored bytes are the batch's: nothing is read or copied).  *body is 0
 * when nothing was written: an entry skipped (every record below the
 * fetch offset: SERVED), FULL or BAD.  -KLOG_ENOMEM with out as it was.
 */
int klog_kserve_head(klog_kserve_t *c, const uint8_t *p, uint32_t length,
    int64_t at, size_t *body);

#endif
