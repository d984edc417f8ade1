/*
 * A replica's leader epochs (KIP-101): which leader epoch wrote which bytes
 * of the partition, as (epoch, start offset) pairs, in the file
 * `leader-epochs` of the partition directory:
 *
 *   klog-epochs 1\n
 *   <epoch> <start offset>\n      one line per epoch, both ascending
 *
 * Epoch e covers [start(e), start(next)), the newest up to the log end.
 * Every change is written to a new file that is fsynced and renamed over
 * the old one, and the directory fsynced, before it is used: a follower
 * records an epoch before appending the first bytes of it, a new leader
 * before accepting a produce.
 */
#ifndef KLOG_EPOCHS_H
#define KLOG_EPOCHS_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"

#define KLOG_EPOCHS_FILE "leader-epochs"
#define KLOG_EPOCHS_BEHIND_FILE "replica-behind"

typedef struct klog_epochs klog_epochs_t;

typedef struct klog_epoch {
	int32_t epoch;
	int64_t start;
} klog_epoch_t;

/* Load dir's epoch file (none: no epochs); -KLOG_ECORRUPT for a file that
 * does not parse.  *out is the caller's: klog_epochs_free(). */
int klog_epochs_open(const char *dir, klog_epochs_t **out, klog_err_t *err);
void klog_epochs_free(klog_epochs_t *e);

size_t klog_epochs_count(const klog_epochs_t *e);
klog_epoch_t klog_epochs_get(const klog_epochs_t *e, size_t i);
/* The newest epoch, -1 if none. */
int32_t klog_epochs_latest(const klog_epochs_t *e);

/* Record that epoch starts at start: epoch above the newest, start at or
 * after its start (an epoch that wrote nothing is replaced).  Durable on
 * return. */
int klog_epochs_append(klog_epochs_t *e, int32_t epoch, int64_t start,
    klog_err_t *err);

/* The log was cut to end: epochs starting at or after it go.  Durable. */
int klog_epochs_truncate(klog_epochs_t *e, int64_t end, klog_err_t *err);

/* The log was emptied at base: every epoch goes. */
int klog_epochs_clear(klog_epochs_t *e, klog_err_t *err);

/*
 * KIP-279's question, asked of the leader: for a follower whose newest
 * epoch is epoch, the largest epoch here at or below it (*found, -1 if
 * none) and where it ends: the start of the next epoch, or leo if *found
 * is the newest.  With no such epoch the end is the first epoch's start
 * (the follower keeps nothing written under an epoch unknown here).
 */
int64_t klog_epochs_end_of(const klog_epochs_t *e, int32_t epoch, int64_t leo,
    int32_t *found);

/*
 * Whether this replica is marked behind: its recovery cut bytes it may
 * have acknowledged, so it must not lead before it has caught up with a
 * leader.  The mark is the (empty) file replica-behind, so it outlives a
 * restart; set and cleared durably.
 */
int klog_epochs_behind(const klog_epochs_t *e);
int klog_epochs_set_behind(klog_epochs_t *e, int behind, klog_err_t *err);

/* The epoch that wrote offset (the newest with start <= offset), -1 if
 * none; *next_start the start of the one after it (INT64_MAX if none). */
int32_t klog_epochs_at(const klog_epochs_t *e, int64_t offset,
    int64_t *next_start);

#endif
