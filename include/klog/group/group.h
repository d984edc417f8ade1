/*
 * A member of a consumer group (Kafka 0.7's ZooKeeper consumer, one stream
 * on one topic; layout.h has the layout):
 *
 *   /consumers/<group>/ids/<consumerId>            ephemeral: we are here
 *   /consumers/<group>/owners/<topic>/<b>-<p>      ephemeral: we read it
 *   /consumers/<group>/offsets/<topic>/<b>-<p>     next offset to read
 *
 * A rebalance sorts the topic's partitions and the group's threads as
 * strings and takes this member's range of them (klog_layout_assign()):
 * partitions that are no longer ours are committed, then released; new
 * ones are claimed.  A claim that finds another owner (who has not let go
 * yet, or died less than a session timeout ago) is retried with backoff
 * from 100 ms doubling to 2 s, as a whole new rebalance each time, until
 * every partition of the range is ours.  What was claimed can be read
 * meanwhile: a partition is read only while its owner node is ours.
 *
 * The owner drives it: it drains the session's events and hands each to
 * klog_group_event() (which says when a rebalance is due), calls
 * klog_group_rebalance() once klog_group_due() says so, reads only the
 * partitions klog_group_part() lists while klog_group_live() holds, keeps
 * the group told of how far it wrote (klog_group_set_position()), and
 * commits.  While the session is disconnected, ownership may lapse without
 * notice, so nothing should be read then; after an expiry nothing is owned
 * and positions not committed are lost (those records come again:
 * at-least-once).
 */
#ifndef KLOG_GROUP_H
#define KLOG_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/client/discovery.h"
#include "klog/zk/zk.h"

typedef struct klog_group klog_group_t;

typedef struct klog_group_config {
	const char *group;
	const char *topic;
	const char *consumer_id;   /* NULL: a new Kafka-style id */
} klog_group_config_t;

/* One partition this member owns. */
typedef struct klog_group_part {
	int32_t index;             /* the discovery's index, for the consumer */
	int32_t broker_id;
	int32_t partition;         /* the broker's own number */
	int64_t position;          /* next offset to read; -1: none yet */
	int64_t committed;         /* last committed; -1: none */
} klog_group_part_t;

/*
 * Join: register the member node (ephemeral, subscription {topic: 1}) and
 * watch the members.  zk and d are borrowed and must outlive *out; d must
 * be a discovery over zk (zkdiscovery.h) whose events the owner hands to
 * both.  A rebalance is due at once.  -KLOG_EINVAL for a bad group name,
 * -KLOG_ETOPIC, ZooKeeper's errors.  *out is the caller's:
 * klog_group_close().
 */
int klog_group_open(klog_zk_t *zk, klog_discovery_t *d,
    const klog_group_config_t *cfg, klog_group_t **out, klog_err_t *err);

/* "<consumerId>" and its one thread "<consumerId>-0". */
const char *klog_group_member_id(const klog_group_t *g);
const char *klog_group_thread_id(const klog_group_t *g);

/*
 * Take one event of the session (after klog_zkdiscovery_event() took it):
 * changed says whether discovery found the topic's brokers changed.
 * Returns 1 if a rebalance is due now, 0 otherwise.  A lost connection
 * makes the group not live (stop reading); an expiry also drops every
 * partition.
 */
int klog_group_event(klog_group_t *g, const klog_zk_event_t *ev,
    int changed);

/* Connected, registered, and the partitions listed are ours to read. */
int klog_group_live(const klog_group_t *g);

/* Whether a rebalance should run at now_ms (monotonic), and how many ms
 * are left until one should (-1: none is pending). */
int klog_group_due(const klog_group_t *g, int64_t now_ms);
int64_t klog_group_wait_ms(const klog_group_t *g, int64_t now_ms);

/*
 * Rebalance.  The owner has stopped reading and set every position
 * beforehand.  Released partitions are committed first (a failed commit
 * keeps them and fails the rebalance).  Returns 0 when the range is all
 * ours, 1 when some claims met another owner (a retry is scheduled), or a
 * negative code (ZooKeeper unreachable...: a retry is scheduled too).
 * *moved is set when the owned set changed.
 */
int klog_group_rebalance(klog_group_t *g, int *moved, klog_err_t *err);

/* Schedule a rebalance after the backoff: the owner could not read what
 * it owns (a broker unreachable). */
void klog_group_later(klog_group_t *g);

/* The partitions owned, in the order of the discovery's indexes. */
size_t klog_group_count(const klog_group_t *g);
const klog_group_part_t *klog_group_part(const klog_group_t *g, size_t i);

/* Note how far the owner wrote partition index (its next offset). */
void klog_group_set_position(klog_group_t *g, int32_t index,
    int64_t position);

/* Commit every position that moved since its last commit. */
int klog_group_commit(klog_group_t *g, klog_err_t *err);

/* Commit, release every partition and leave the group (the member node
 * goes), then free g.  Errors are ignored: the session's end removes the
 * ephemeral nodes anyway.  NULL is fine. */
void klog_group_close(klog_group_t *g);

/* ---- pure parts, for tests ---- */

/*
 * This thread's range of a rebalance: parts and threads are sorted in
 * place (as strings) and *start, *count say which parts are me's.
 * -KLOG_ENOENT (count 0) if me is not among threads.
 */
int klog_group_plan(char **parts, size_t nparts, char **threads,
    size_t nthreads, const char *me, size_t *start, size_t *count);

/*
 * Compare the names owned (old) with those assigned (new), any order,
 * no duplicates: release[i] = 1 if old[i] is not in new, claim[j] = 1 if
 * new[j] is not in old, 0 otherwise.
 */
void klog_group_diff(char *const *old, size_t nold, char *const *new_,
    size_t nnew, unsigned char *release, unsigned char *claim);

#endif
