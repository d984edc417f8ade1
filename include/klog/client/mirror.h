/*
 * What a restarted mirror finds already copied (klog-produce -J
 * --idempotent --source-offset-file F, klog-produce(1) "Mirroring").
 *
 * The mirror's bookmark (bookmark.h) settles F to the source positions of
 * the records up to the first one the destination has not acknowledged;
 * a kill -9 after an acknowledgement and before the settle would make the
 * next run copy those records again.  So the destination itself says what
 * is there past the settle point: beside the positions, in the same
 * atomic save, F holds notes (offsetfile.h) of this producer's state,
 *
 *   # klog-produce: topic DEST producer ID INDEX:OFFSET ...
 *
 * a line per producer id: for each destination partition, the offset just
 * past the last entry of that producer the settle covers, or, before it
 * has one there, the partition's end when the run started.  Every entry
 * of that producer past those offsets holds records numbered past the
 * settle point (one entry a request, a request's records consecutive).
 *
 * At start (klog_mirror_start()) the destination is read from those
 * offsets to its end, and the records of the listed producers, hashed
 * over key, value and headers (not timestamps: a batch's time differs
 * from run to run), go into a multiset R.  While copying, a record read
 * whose hash is in R is taken out of it and not sent: it counts as done
 * and acknowledged for the bookmark.  The counts keep equal records
 * right: the destination ends with as many of each as the source has.
 *
 * Until R is empty and the last record skipped is settled, the earlier
 * ids' lines stay in F beside the current one, and the positions settle
 * no further than the record before the first one skipped, so a kill
 * meanwhile finds every record of R again in what the source sends back
 * (no skipped record settled yet), and nothing R held is lost or copied
 * twice.  Then they are dropped in the save that moves past them.
 *
 * A source position can also fall inside a batch or a gzip wrapper: its
 * records all have the batch's offset, and all but the last that offset
 * as their next one, so the position saved is the batch's and the next
 * run reads it again from its first record.  So F also says how many of
 * that batch's records are copied,
 *
 *   # klog-produce: topic DEST inside SOURCE PARTITION:OFFSET:RECORDS ...
 *
 * and the next run skips as many records read at that offset first (not
 * hashed: their place says it), counted done.  The count stands until a
 * record past them settles.
 *
 * Without idempotence nothing is recalled or skipped, and this is the
 * bookmark alone (at least once); F's lines of the topic are dropped at
 * its first save, since the positions then move past what they describe.
 * Two mirrors sharing F (a consumer group's) are not covered.
 */
#ifndef KLOG_MIRROR_H
#define KLOG_MIRROR_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/client/consumer.h"
#include "klog/client/discovery.h"
#include "klog/client/producer.h"
#include "klog/storage/record.h"

typedef struct klog_mirror klog_mirror_t;

/*
 * A multiset of 64-bit hashes.  add: 0 or -KLOG_ENOMEM; take: 1 if h was
 * there (one taken out), 0 if not.
 */
typedef struct klog_mirror_bag {
	struct klog_mirror_slot *slots;
	size_t cap;                /* a power of two, or 0 */
	size_t used;               /* slots holding a hash */
	uint64_t count;            /* hashes held, with their repeats */
} klog_mirror_bag_t;

int klog_mirror_bag_add(klog_mirror_bag_t *bag, uint64_t h);
int klog_mirror_bag_take(klog_mirror_bag_t *bag, uint64_t h);
void klog_mirror_bag_free(klog_mirror_bag_t *bag);

/* The hash of a record over its key, value and headers, null ones told
 * from empty ones: the same for a record to send and for it as stored. */
uint64_t klog_mirror_hash(const klog_record_in_t *rec);
uint64_t klog_mirror_hash_msg(const klog_consumer_msg_t *m);

/*
 * The mirror of F (path) into topic (borrowed for its life); with
 * idempotent, its producer's state kept in F.  -KLOG_ECORRUPT for a
 * malformed F or state line ("F:LINE: why"), as klog_bookmark_open().
 * *out is the caller's: klog_mirror_close().
 */
int klog_mirror_open(const char *path, const char *topic, int idempotent,
    klog_mirror_t **out, klog_err_t *err);

/*
 * At start, the producer open with id pid: read the destination through
 * d from the offsets of F's producer lines (connect_timeout_ms for each
 * connection), take the end of every partition, then begin (below).
 * The consumer's errors.  Not called without idempotence.
 */
int klog_mirror_start(klog_mirror_t *m, klog_discovery_t *d, int64_t pid,
    int connect_timeout_ms, klog_err_t *err);

/* klog_mirror_start()'s two steps: a record read from the destination's
 * partition index (into R if its producer is listed there and it is past
 * that producer's offset; 0 or -KLOG_ENOMEM); and the start proper:
 * ends[0..n) each partition's end, the current line saved. */
int klog_mirror_recall(klog_mirror_t *m, int32_t index,
    const klog_consumer_msg_t *msg);
int klog_mirror_begin(klog_mirror_t *m, int64_t pid, const int64_t *ends,
    size_t n, klog_err_t *err);

/*
 * A record read at source position (topic, partition, its own offset
 * own, or -1, and its next one), as it is to be sent: 1 if the
 * destination holds it already (done, not to be sent), 0 to send it
 * (then klog_mirror_sent() once it is queued: 0 or -KLOG_ENOMEM), or
 * -KLOG_EINVAL (another topic than the records before) and -KLOG_ENOMEM.
 */
int klog_mirror_note(klog_mirror_t *m, const klog_record_in_t *rec,
    const char *topic, int32_t partition, int64_t own, int64_t next,
    klog_err_t *err);
int klog_mirror_sent(klog_mirror_t *m);

/* The producer's word on a request (producer.h); 0 or -KLOG_ENOMEM. */
int klog_mirror_done(klog_mirror_t *m, const klog_producer_done_t *d);

/* Save what the destination holds now (klog_bookmark_settle()). */
int klog_mirror_settle(klog_mirror_t *m, klog_err_t *err);

typedef struct klog_mirror_counts {
	uint64_t found;            /* at the destination at start (R) */
	uint64_t inside;           /* F's counts of records copied inside
	                              batches, not yet met again */
	uint64_t skipped;          /* of R, met and not sent */
	uint64_t again;            /* inside a batch, met and not sent */
	uint64_t left;             /* of R, not met yet */
} klog_mirror_counts_t;

void klog_mirror_counts(const klog_mirror_t *m, klog_mirror_counts_t *c);

void klog_mirror_close(klog_mirror_t *m);

#endif
