/*
 * What the broker core counted, for the broker's metrics (metrics.h):
 * per partition the messages and bytes appended by producers and the
 * bytes read by fetches (counted once per staged write and per fetch
 * read, never per message), the requests parked, the flusher's fsync
 * times.  The core's own files count; this one only reads them out
 * (lib/core/stats.c, sharing lib/core/core_impl.h with core.c and replicated.c).
 * On the loop thread.
 */
#ifndef KLOG_STATS_H
#define KLOG_STATS_H

#include <stdint.h>

#include "klog/base/promtext.h"
#include "klog/core/core.h"
#include "klog/core/replica.h"
#include "klog/storage/log.h"

typedef struct klog_core_stats_part {
	klog_log_t *log;           /* its topic, partition and gauges */
	uint64_t messages_in;      /* by producers (a follower's copies of
	                              its leader's bytes are not counted) */
	uint64_t bytes_in;
	uint64_t bytes_out;        /* read for consumers and followers */
	const klog_replica_t *rep; /* NULL: not replicated */
} klog_core_stats_part_t;

/* fn for every partition of the store, in the store's order (one no
 * request has touched yet counts 0); a negative return stops and is
 * returned.  -KLOG_ENOMEM if the walk's index cannot be made. */
typedef int klog_core_stats_fn(void *arg, const klog_core_stats_part_t *sp);
int klog_core_stats_parts(klog_core_t *c, klog_core_stats_fn *fn, void *arg);

/* Requests waiting now: acks=all produces, long polls, offsets. */
uint64_t klog_core_stats_parked(const klog_core_t *c);

/* The flusher's fsync times. */
void klog_core_stats_fsync(klog_core_t *c, klog_promtext_hist_t *out);

#endif
