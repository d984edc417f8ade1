/*
 * klog-group reset: a consumer group's committed offsets of one topic
 * moved, in ZooKeeper (layout.h), to an offset of the caller's, or to
 * each partition's first offset, its end, or the segment start at a time
 * (those three asked of the brokers, positions.h).
 *
 * Two steps, so that a dry run shows the same plan an execution writes:
 * klog_reset_plan() works out every partition's new offset before any is
 * written, and klog_reset_commit() writes them.  A group with live members
 * is refused unless forced: they would commit over the reset, or read
 * from offsets they did not choose.
 */
#ifndef KLOG_RESET_H
#define KLOG_RESET_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/group/positions.h"
#include "klog/zk/zk.h"

/* Where every partition goes. */
typedef enum klog_reset_to {
	KLOG_RESET_EARLIEST,       /* its first offset */
	KLOG_RESET_LATEST,         /* its end */
	KLOG_RESET_OFFSET,         /* value, the same for every partition */
	KLOG_RESET_TIME,           /* the segment start at or before value
	                              (ms since the epoch); the first offset
	                              when nothing is that old */
} klog_reset_to_t;

typedef struct klog_reset_config {
	const char *group;
	const char *topic;
	klog_reset_to_t to;
	int64_t value;             /* KLOG_RESET_OFFSET's, KLOG_RESET_TIME's */
	int force;                 /* even while the group has live members */
	int timeout_ms;            /* for each broker asked */
	const klog_client_sec_t *sec;  /* how to speak to them; NULL:
	                                  plaintext */
} klog_reset_config_t;

/* One partition of the plan. */
typedef struct klog_reset_row {
	klog_positions_part_t part;
	int64_t before;            /* the committed offset; -1: none, or not
	                              readable */
	int64_t after;
} klog_reset_row_t;

/*
 * The plan for every partition of c->topic that matters to c->group
 * (klog_positions_parts()), in its order, into *rows (the caller's:
 * free()) and *n.  Nothing is written.  -KLOG_EBUSY while the group has
 * live members and c->force is 0 (err names the first of them);
 * -KLOG_ENOTOPIC when the topic has no partition registered or committed;
 * a broker's or ZooKeeper's error when an offset could not be learnt.
 */
int klog_reset_plan(klog_zk_t *zk, const klog_reset_config_t *c,
    klog_reset_row_t **rows, size_t *n, klog_err_t *err);

/* Commit every row's after offset for c->group, in order; the first
 * failure stops, the rows before it committed. */
int klog_reset_commit(klog_zk_t *zk, const klog_reset_config_t *c,
    const klog_reset_row_t *rows, size_t n, klog_err_t *err);

#endif
