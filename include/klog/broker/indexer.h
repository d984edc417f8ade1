/*
 * The broker's time indexer: a thread that completes the time index of
 * every partition log (log.h's klog_log_time_index()), so that the first
 * time lookup after a restart (Kafka's ListOffsets by timestamp, OFFSETS
 * by time), which runs on the event loop, finds every segment indexed
 * instead of reading each old one while every client waits.
 *
 * It starts with the broker, once the logs are open, and makes a pass over
 * them (one line at info when it ends: segments, bytes, how many of them
 * from the disk, how long); then a pass every few seconds, which finds
 * logs opened since and segments whose index a cut left short, and costs
 * a look under each log's lock otherwise.  A lookup meanwhile completes
 * what it needs itself, as without the indexer.  Bytes from the disk are
 * dropped from the page cache after (timeindex.h) and read at most at the
 * cold read rate while producers write (the prefetch thread's rule), so a
 * cold start leaves the disk to the flusher's fsyncs.
 */
#ifndef KLOG_INDEXER_H
#define KLOG_INDEXER_H

#include <stdint.h>

#include "klog/base/logger.h"
#include "klog/storage/store.h"

typedef struct klog_indexer klog_indexer_t;

typedef struct klog_indexer_config {
	klog_store_t *store;       /* the caller's, outliving the indexer */
	uint64_t rate;             /* bytes a second from the disk while
	                              producers write; 0: no cap */
	int64_t period_ms;         /* between passes */
	klog_logger_t log;         /* said from the indexer's thread */
} klog_indexer_config_t;

#define KLOG_INDEXER_PERIOD_MS 10000

/* Start the thread.  On success *out is the caller's: klog_indexer_free().
 * -KLOG_ENOMEM, or -KLOG_EIO if the thread cannot start. */
int klog_indexer_new(const klog_indexer_config_t *cfg, klog_indexer_t **out);

/* Writes are going on (any thread may call it, often). */
void klog_indexer_writing(klog_indexer_t *ix);

/* Stop the thread (within a MiB of its read) and free everything; NULL is
 * nothing. */
void klog_indexer_free(klog_indexer_t *ix);

#endif
