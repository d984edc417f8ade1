/*
 * A member of a consumer group reading its share of one topic: the owner
 * that group.h describes, driving a klog_group_t and a klog_consumer_t
 * over one ZooKeeper session.
 *
 * klog_member_next() hands out messages as klog_consumer_next() does and,
 * between them, does a member's work: it takes the session's news (for the
 * discovery and the group), rebalances when the group says one is due
 * (reading stops, then starts again on what is ours now, from where the
 * group got to), and commits the positions every commit_ms.  A broker or
 * ZooKeeper away for now (-KLOG_ECONN, -KLOG_ETIMEDOUT, -KLOG_EZK) is not an
 * error: reading stops and a rebalance is retried after the group's
 * backoff.
 *
 * The caller writes the messages out (to stdout, say).  A position is
 * noted for the group, and so committed, only after the flush hook has
 * said that everything handed out so far is written: a message can come
 * twice (at-least-once), but none is committed that was not written.  What
 * the member has to tell (a lost session, a retry, a new assignment) goes
 * to the caller's logger: news at KLOG_LEVEL_INFO, details for a verbose
 * caller at KLOG_LEVEL_DEBUG.  The library prints nothing itself.
 */
#ifndef KLOG_MEMBER_H
#define KLOG_MEMBER_H

#include <stdint.h>

#include "klog/base/error.h"
#include "klog/base/logger.h"
#include "klog/client/consumer.h"
#include "klog/client/discovery.h"
#include "klog/group/group.h"
#include "klog/zk/zk.h"

typedef struct klog_member klog_member_t;

typedef struct klog_member_config {
	klog_group_config_t group;    /* the group and the topic; borrowed:
	                                 they must outlive the member */
	klog_consumer_config_t read;  /* how to read; the member sets its
	                                 topic, partitions and starts */
	int64_t commit_ms;            /* commit the positions this often */
	int watch_fd;                 /* for klog_consumer_watch(); -1 none */
	/* Write out everything handed out so far: 0, or < 0 if it could not
	 * be (the member then stops).  NULL: nothing is kept back. */
	int (*flush)(void *arg);
	/* Where partition index starts when the group gives it to this
	 * member, instead of the group's committed offset: 1 and *offset
	 * (a byte offset or a KLOG_CONSUMER_* start), 0 for the group's,
	 * or < 0 (a -KLOG_E* code, with err) to fail.  Asked at every
	 * rebalance (klog-consume -G --offsets-from).  NULL: the group's. */
	int (*start_at)(void *arg, int32_t index, int64_t *offset,
	    klog_err_t *err);
	void *arg;                    /* flush's and start_at's */
	klog_logger_t log;            /* what the member has to tell */
} klog_member_config_t;

/*
 * Join the group (klog_group_open(): zk and d are borrowed as there;
 * -KLOG_EINVAL for a bad group name).  Reading starts with the first
 * rebalance, in klog_member_next().  *out is the caller's:
 * klog_member_leave(), then klog_member_close().
 */
int klog_member_open(klog_zk_t *zk, klog_discovery_t *d,
    const klog_member_config_t *cfg, klog_member_t **out, klog_err_t *err);

/*
 * One step.  KLOG_CONSUMER_MSG: *m is a message, valid until the next
 * call.  KLOG_CONSUMER_BATCH: nothing to hand out yet (the step
 * rebalanced, told something, or waited up to a second for news): look at
 * your signal flags and call again.  KLOG_CONSUMER_DONE: the end, because
 * with read.exit_at_end everything this member owns is read to its end
 * and no rebalance is pending, or because the flush hook failed.  Errors
 * are those no retry mends: the consumer's (-KLOG_ECORRUPT, -KLOG_ECLOSED
 * once watch_fd's reader is gone, ...) and the group's.
 */
int klog_member_next(klog_member_t *mb, klog_consumer_msg_t *m,
    klog_err_t *err);

/*
 * Stop reading (the flush hook first), commit every position written, and
 * leave the group.  0, or the commit's error: the member has left either
 * way (what it owned goes with its session).  NULL is fine.
 */
int klog_member_leave(klog_member_t *mb, klog_err_t *err);

/* Free mb; a member that did not leave leaves as klog_group_close() does.
 * NULL is fine. */
void klog_member_close(klog_member_t *mb);

#endif
