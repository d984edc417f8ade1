/*
 * The broker core when a sync fails (klog(7), "A failing disk").
 *
 * A failed fsync is final (log.h): the log it failed for keeps its
 * flushed end where the last good sync left it and takes no more writes.
 * The core then does what Kafka does with a failed log directory, for the
 * one data directory a broker has: from the first such failure on, every
 * partition of the broker refuses produce requests (STORAGE_ERROR, the
 * Kafka listener's KAFKA_STORAGE_ERROR) and a follower's appends, no topic
 * is made, grown or deleted (auto-created or by an admin request), one
 * line says so in the log, the metrics show it, and the replication
 * layer is told (from the loop's next turn, never from inside a caller)
 * so that leadership moves to an in-sync replica on another broker.
 * Reads go on up to each partition's visible end; no clean-shutdown
 * marker is written at the stop, so the restart's recovery finds each
 * log's valid end.  The way back is that restart.
 *
 * A write the disk refuses before it is in the page cache (a full disk)
 * fails only its own requests (DISK_FULL), and writes resume once there
 * is room.  lib/core/offline.c, sharing lib/core/core_impl.h with core.c; on the
 * loop thread.
 */
#ifndef KLOG_OFFLINE_H
#define KLOG_OFFLINE_H

#include <stdint.h>

#include "klog/core/core.h"

/* Called once, on the loop thread, after the first failed sync. */
typedef void klog_core_fail_fn(void *arg);

/* Set (or with NULL clear) the hook; one set after the failure is called
 * at the loop's next turn. */
void klog_core_set_storage_hook(klog_core_t *c, klog_core_fail_fn *fn,
    void *arg);

/* Whether a sync has failed since the start (every write refused). */
int klog_core_storage_failed(const klog_core_t *c);

/* Flushes that failed a sync, or were refused after one, since the
 * start. */
uint64_t klog_core_flush_failures(klog_core_t *c);

#endif
