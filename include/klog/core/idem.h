/*
 * Producer ids for idempotent producers, one allocation for both front
 * ends (Kafka's InitProducerId, the klog protocol's INIT_PRODUCER):
 * lib/core/idem.c, sharing lib/core/core_impl.h.  Ids come in blocks
 * (pids.h) from the data directory's file, or, once the cluster layer set
 * a source, from ZooKeeper's block node as Kafka's brokers take them.
 */
#ifndef KLOG_CORE_IDEM_H
#define KLOG_CORE_IDEM_H

#include <stdint.h>

#include "klog/core/core.h"
#include "klog/storage/pids.h"

/* Take blocks from fn(arg) from now on (NULL: the data directory's
 * file again). */
void klog_core_set_producer_block(klog_core_t *c, klog_pids_block_fn *fn,
    void *arg);

/*
 * A producer id and epoch: with *pid and *epoch both -1, a new id at
 * epoch 0; with the producer's own id and epoch (KIP-360), that id at the
 * epoch plus one, which restarts its sequences after an error (an epoch
 * at its end takes a new id).  -KLOG_EINVAL if only one of them is -1;
 * the source's error if no block could be taken (nothing changed).
 */
int klog_core_producer_id(klog_core_t *c, int64_t *pid, int16_t *epoch,
    klog_err_t *err);

#endif
