/*
 * klog-group describe: where a consumer group stands on its topics, one
 * partition at a time: the offset it committed (layout.h), the partition's
 * end asked of its broker (positions.h), the lag between the two in bytes,
 * and the member's thread that owns the partition now.
 *
 * An iterator, so that a caller can show each partition as soon as it is
 * known, and what came before an error stays shown.  A broker that does
 * not answer leaves its partitions' ends unknown without stopping the
 * walk: the committed offsets are still worth seeing.
 */
#ifndef KLOG_LAG_H
#define KLOG_LAG_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/group/positions.h"
#include "klog/zk/zk.h"

typedef struct klog_lag klog_lag_t;

/* One partition; its strings are the iterator's, valid until the next
 * klog_lag_next() or klog_lag_close(). */
typedef struct klog_lag_row {
	const char *topic;
	klog_positions_part_t part;
	int64_t current;           /* the committed offset, if has_current */
	int64_t end;               /* the log end, if has_end */
	int64_t lag;               /* end - current, if has_lag */
	int has_current, has_end, has_lag;
	const char *owner;         /* the owning thread's id, or NULL */
} klog_lag_row_t;

/*
 * Begin with group's topic, or with every topic the group has offsets or
 * owners for (topic NULL; names that are not valid topics skipped).
 * -KLOG_ENOENT if there is no such group.  group and topic must outlive
 * the iterator; each broker is asked within timeout_ms, as sec says (NULL:
 * plaintext; it outlives the iterator).  *out is the
 * caller's: klog_lag_close().
 */
int klog_lag_open(klog_zk_t *zk, const char *group, const char *topic,
    int timeout_ms, const klog_client_sec_t *sec, klog_lag_t **out,
    klog_err_t *err);
/* The next partition into *row: 1, 0 after the last, or an error of
 * ZooKeeper's (the walk is then over). */
int klog_lag_next(klog_lag_t *l, klog_lag_row_t *row, klog_err_t *err);
void klog_lag_close(klog_lag_t *l);

#endif
