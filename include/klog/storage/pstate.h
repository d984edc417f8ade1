/*
 * A partition's idempotent producers (Kafka's KIP-98, its broker's
 * ProducerStateManager): per producer id its epoch, the last five batches
 * it appended (first and last sequence, the entry's offset W and the
 * batch's last Kafka offset) and when it last appended.  No I/O: the
 * broker's core feeds it every magic-2 entry with a producer id that goes
 * into the log (a leader's staged sets, a follower's appends), asks it
 * about a batch before staging one, and psnap.h saves it and rebuilds it.
 *
 * The rules, Kafka's (checked in this order for a batch of producer P at
 * epoch e, sequences first..last):
 *   - P unknown: first must be 0, else UNKNOWN_PRODUCER_ID (the producer
 *     expired, or its batches were cut away; the client bumps its epoch).
 *   - e older than P's epoch: INVALID_PRODUCER_EPOCH (fenced).
 *   - e newer: first must be 0, else OUT_OF_ORDER_SEQUENCE_NUMBER.
 *   - e the same and (first, last) one of the last five batches': a
 *     duplicate, answered with that batch's offset and not appended
 *     (Kafka since KAFKA-5793).
 *   - e the same: first must follow P's last sequence (INT32_MAX wraps to
 *     0), else OUT_OF_ORDER_SEQUENCE_NUMBER.
 * A batch's last sequence is first + count - 1, wrapping past INT32_MAX
 * to 0 as Kafka's does.
 */
#ifndef KLOG_PSTATE_H
#define KLOG_PSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "klog/storage/record.h"

#define KLOG_PSTATE_BATCHES 5      /* Kafka's: the batches kept a producer */
#define KLOG_PSTATE_EXPIRATION_MS (24 * 3600 * 1000LL) /* Kafka's
                                      producer.id.expiration.ms */

typedef struct klog_pstate klog_pstate_t;

/* One batch a producer appended. */
typedef struct klog_pstate_batch {
	int32_t first_seq, last_seq;
	int16_t epoch;
	int64_t offset;                /* the entry's (W) */
	int64_t last_offset;           /* the batch's last Kafka offset */
} klog_pstate_batch_t;

typedef struct klog_pstate_producer {
	int64_t id;
	int64_t last_ts;               /* max timestamp of its last batch */
	int n;                         /* batches kept, oldest first */
	klog_pstate_batch_t b[KLOG_PSTATE_BATCHES];
} klog_pstate_producer_t;

/* A batch's verdict. */
enum klog_pstate_verdict {
	KLOG_PSTATE_APPEND = 0,        /* in sequence */
	KLOG_PSTATE_DUPLICATE,         /* one of the last five: *dup */
	KLOG_PSTATE_OUT_OF_ORDER,      /* a gap, or a new epoch not at 0 */
	KLOG_PSTATE_FENCED,            /* an older epoch */
	KLOG_PSTATE_UNKNOWN,           /* an unknown producer not at 0 */
	KLOG_PSTATE_INVALID,           /* a producer id with a negative epoch
	                                  or sequence, or no records */
};

/* An empty state; *out is the caller's: klog_pstate_free(). */
int klog_pstate_new(klog_pstate_t **out);
void klog_pstate_free(klog_pstate_t *ps);

/* How many producers it holds. */
size_t klog_pstate_count(const klog_pstate_t *ps);

/* The last sequence of a batch of count records from base (Kafka's
 * wrap). */
int32_t klog_pstate_last_seq(int32_t base, int32_t count);

/* The verdict on b (producer_id >= 0); *dup (may be NULL) gets the batch
 * b duplicates. */
int klog_pstate_check(const klog_pstate_t *ps, const klog_batch_t *b,
    klog_pstate_batch_t *dup);

/*
 * Record b (producer_id >= 0), stored at offset with its last Kafka offset
 * last_offset: its producer's epoch and batches, its oldest batch dropped
 * past five.  No check (a follower takes what its leader wrote).  0, or
 * -KLOG_ENOMEM with nothing changed.
 */
int klog_pstate_update(klog_pstate_t *ps, const klog_batch_t *b,
    int64_t offset, int64_t last_offset);

/*
 * Record the entry at e, at offset, if it is a magic-2 entry with a
 * producer id: avail bytes of it are at e, all of it or at least its
 * first 50 (a log's scan reads no more).  0, or -KLOG_ENOMEM.
 */
int klog_pstate_update_entry(klog_pstate_t *ps, const uint8_t *e,
    size_t avail, int64_t offset);

/*
 * Record every magic-2 entry with a producer id in the message set
 * set[0..len), which starts at offset (entries already checked whole).
 * 0, or -KLOG_ENOMEM.
 */
int klog_pstate_update_set(klog_pstate_t *ps, const uint8_t *set, size_t len,
    int64_t offset);

/*
 * The first entry of set[0..len) if it is a magic-2 entry with a producer
 * id: 1 and *b filled; 0 if not; -KLOG_ECORRUPT if it is one but does not
 * stand alone in the set (Kafka takes one batch per partition).
 */
int klog_pstate_entry(const uint8_t *set, size_t len, klog_batch_t *b);

/* Forget every batch at or past end (a cut, or a write that failed); a
 * producer left without a batch is forgotten. */
void klog_pstate_truncate(klog_pstate_t *ps, int64_t end);

/* Forget producers whose last timestamp is more than max_idle_ms before
 * now_ms. */
void klog_pstate_expire(klog_pstate_t *ps, int64_t now_ms,
    int64_t max_idle_ms);

/* Producer id's state, or NULL. */
const klog_pstate_producer_t *klog_pstate_get(const klog_pstate_t *ps,
    int64_t id);

/* Walk the producers (*pos from 0): the next one, or NULL after the
 * last. */
const klog_pstate_producer_t *klog_pstate_next(const klog_pstate_t *ps,
    size_t *pos);

/* Put p in (a snapshot's producer, checked by its reader): 0,
 * -KLOG_EEXIST if its id is there already, or -KLOG_ENOMEM. */
int klog_pstate_put(klog_pstate_t *ps, const klog_pstate_producer_t *p);

#endif
