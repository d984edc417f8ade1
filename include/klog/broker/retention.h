/*
 * The store's upkeep on the broker's loop: retention (whole segments past
 * an age or over a size, per partition) every cleanup interval, and a
 * rescan of each partition every rescan interval, so that segments
 * removed by others (klog-retain from cron) are noticed.
 */
#ifndef KLOG_RETENTION_H
#define KLOG_RETENTION_H

#include <stdint.h>

#include "klog/base/logger.h"
#include "klog/net/loop.h"
#include "klog/storage/store.h"

typedef struct klog_retention_config {
	int64_t retention_ms;          /* by segment age; -1 off */
	int64_t retention_bytes;       /* per partition; -1 off */
	int64_t cleanup_interval_ms;   /* the retention cleaner's period */
	int64_t rescan_interval_ms;
	klog_logger_t log;
} klog_retention_config_t;

typedef struct klog_retention {
	klog_retention_config_t cfg;
	klog_loop_t *loop;
	klog_store_t *store;
	klog_timer_t clean_timer, rescan_timer;
	uint64_t deleted_segments;     /* by retention, since start */
} klog_retention_t;

/* Start u's timers on loop over store (both the caller's, outliving u);
 * the first retention pass comes within a minute.  0 or -KLOG_ENOMEM. */
int klog_retention_start(klog_retention_t *u, klog_loop_t *loop,
    klog_store_t *store, const klog_retention_config_t *cfg);

/* Stop the timers (whether or not they were started). */
void klog_retention_stop(klog_retention_t *u);

#endif
