/*
 * Producer id blocks for a broker in a cluster, from ZooKeeper's
 * /latest_producer_id_block (pidblock.h), one block ahead.  The broker's
 * loop hands out ids (core/idem.h) and must never wait on ZooKeeper: a
 * synchronous read and write there, when the current block ran out, held
 * every client of the broker for as long as ZooKeeper took to answer, or
 * for seconds when it had just been cut off.  So the next block is taken
 * with the asynchronous calls while the current one is in use, and a
 * block asked for while none is ready is refused at once (-KLOG_EBUSY),
 * for the client to ask again (Kafka's COORDINATOR_LOAD_IN_PROGRESS).
 *
 * A set whose answer was lost (the connection went) may or may not have
 * been applied: the node is read back, and the block is the broker's if
 * the node still holds what it wrote.  Blocks taken and not handed out
 * before the broker stops are never used, as in Kafka.
 */
#ifndef KLOG_ZKPIDS_H
#define KLOG_ZKPIDS_H

#include <stdint.h>

#include "klog/base/error.h"
#include "klog/base/logger.h"
#include "klog/zk/zk.h"

typedef struct klog_zkpids klog_zkpids_t;

/*
 * Ids for broker from zk's node, the first block taken now, synchronously
 * (at the broker's start, before it serves; a failure there is logged and
 * the block is asked for again later).  *out is the caller's:
 * klog_zkpids_free().
 */
int klog_zkpids_new(klog_zk_t *zk, int32_t broker, const klog_logger_t *log,
    klog_zkpids_t **out);
void klog_zkpids_free(klog_zkpids_t *zp);

/* A klog_pids_block_fn (pids.h) for arg a klog_zkpids_t: the block taken
 * ahead, [*start, *end), and the next one asked for; -KLOG_EBUSY while
 * none is ready. */
int klog_zkpids_take(void *arg, int64_t *start, int64_t *end,
    klog_err_t *err);

/* A ZooKeeper event: 1 if it was the answer to one of this module's
 * calls (taken), else 0; a new or restored session asks again for a block
 * that is missing. */
int klog_zkpids_event(klog_zkpids_t *zp, const klog_zk_event_t *ev);

#endif
