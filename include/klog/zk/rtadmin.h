/*
 * Replicated topics administered in ZooKeeper after their creation
 * (rtopics.h's layout; klog(7), "Replicated topics"): partitions added,
 * topics deleted.  Kafka's kafka-topics --alter and --delete.
 *
 * Adding partitions is one multi: the topic's assignment rewritten at the
 * version read, with the new partitions' nodes and states (as
 * klog_rtopics_create() makes them).  The brokers watch the assignment and
 * take their new replicas from it: local logs, an election, followers.
 *
 * Deleting is Kafka 0.8.2's protocol, with the brokers finishing it:
 *
 *   1. klog-group creates /admin/delete_topics/<t> (only if <t> exists).
 *   2. Every broker watches /admin/delete_topics.  One named in <t>'s
 *      assignment stops leading and following <t>, drops its leader nodes,
 *      removes its local copy (descriptors closed, directories removed)
 *      and then says so: /admin/delete_topics/<t>/<its id>.  A broker that
 *      was down does this when it comes back, before it serves anything
 *      of <t>, so its stale copy never comes back to life.
 *   3. Whoever finds every replica's broker done (the last broker to
 *      say so, or klog-group waiting for them) removes /klog/topics/<t>
 *      with everything under it, and only then the mark.  Both may try:
 *      each step is idempotent.
 *
 * While the mark is there, <t> cannot be created again nor altered; a
 * later create starts empty on every broker.  A replica's broker that
 * never comes back keeps the delete pending (klog-group says which).
 */
#ifndef KLOG_RTADMIN_H
#define KLOG_RTADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/zk/rtopics.h"
#include "klog/zk/zk.h"

/*
 * The assignment old grown to nparts partitions over the nb live brokers
 * (ids ascending): old's partitions as they are, the new ones as
 * klog_rtopic_assign() would place them in a topic of nparts, with its
 * start where Kafka's addPartitions puts it (the first live broker whose
 * id is at least partition 0's first replica), so leaders keep going
 * round.  *out is the caller's: klog_rtopic_free().  -KLOG_EINVAL with
 * err if nparts is not more than old has, or as klog_rtopic_assign().
 */
int klog_rtadmin_grow(const klog_rtopic_t *old, const int32_t *brokers,
    size_t nb, int nparts, klog_rtopic_t *out, klog_err_t *err);

/*
 * Grow topic to nparts partitions over the brokers live now; *out the new
 * assignment (the caller's; also zeroed on failure).  -KLOG_ENOTOPIC if
 * topic is not a replicated topic (err says whether it is an unreplicated
 * one), -KLOG_EINVAL as klog_rtadmin_grow(), -KLOG_EBUSY if it is marked
 * for deletion or its assignment changed meanwhile (err says which).
 */
int klog_rtadmin_alter(klog_zk_t *zk, const char *topic, int nparts,
    klog_rtopic_t *out, klog_err_t *err);

/*
 * Step 1: mark topic for deletion.  *already 1 if it was marked before.
 * -KLOG_ENOTOPIC as klog_rtadmin_alter().
 */
int klog_rtadmin_delete(klog_zk_t *zk, const char *topic, int *already,
    klog_err_t *err);

/* The topics marked for deletion, sorted; watch: a CHILD event when one
 * is marked or finished (the root is made if missing, to arm it). */
int klog_rtadmin_marked(klog_zk_t *zk, int watch, klog_zk_list_t *out,
    klog_err_t *err);

/* Step 2's last act: broker id holds nothing of topic any more. */
int klog_rtadmin_done(klog_zk_t *zk, const char *topic, int32_t id,
    klog_err_t *err);

/*
 * The brokers of t's replicas that are not in done (names of broker ids,
 * as /admin/delete_topics/<t>'s children), each once: the first max of
 * them into ids, ascending; returns how many there are (possibly more
 * than max).  No I/O: the rule step 3 waits on.
 */
int klog_rtadmin_waiting(const klog_rtopic_t *t, const klog_zk_list_t *done,
    int32_t *ids, int max);

/*
 * Step 3 if it is time: the brokers still to say done into ids (room for
 * max) and their count as the result; 0 when none is left, and then the
 * topic's nodes and the mark are removed (both missing: 0 as well).
 */
int klog_rtadmin_finish(klog_zk_t *zk, const char *topic, int32_t *ids,
    int max, klog_err_t *err);

/*
 * Wait up to timeout_ms for topic's deletion to finish, finishing it here
 * (klog_rtadmin_finish()) when the brokers have left that: 0 once it is
 * finished; n > 0 once every broker still to say done is down (not in
 * /brokers/ids): the first max of them into ids, and the deletion
 * finishes when they come back; -KLOG_ETIMEDOUT, err naming them, while
 * live ones have not.  Polls ZooKeeper ten times a second.
 */
int klog_rtadmin_wait(klog_zk_t *zk, const char *topic, int64_t timeout_ms,
    int32_t *ids, int max, klog_err_t *err);

/* "1,3" of the first n of ids (at most as many as fit buf). */
const char *klog_rtadmin_id_list(const int32_t *ids, int n, char *buf,
    size_t len);

/* 1 if topic is marked for deletion, 0 if not, or a negative code. */
int klog_rtadmin_is_marked(klog_zk_t *zk, const char *topic,
    klog_err_t *err);

#endif
