/*
 * The broker core's replicated partitions (klog(7), "Replication"): the
 * roles the cluster layer (zkbroker.h) sets, the leader's answers to
 * followers' REPLICA_FETCH, and a follower's appends of the leader's
 * bytes.  A partition is replicated once a role was set for it; until then
 * it is an ordinary (Kafka 0.7) partition.
 *
 * On a replicated partition:
 *  - only the leader takes produce, fetch and offsets requests; the others
 *    answer NOT_LEADER;
 *  - an acks=all produce is refused (NOT_ENOUGH_REPLICAS, nothing
 *    appended) while the ISR is below the topic's minimum, and answered
 *    when the high watermark covers it: on the disk of every in-sync
 *    replica; if the ISR falls below the minimum meanwhile it is answered
 *    NOT_ENOUGH_REPLICAS_AFTER_APPEND, if the leader steps down NOT_LEADER;
 *  - consumers read, and OFFSETS and FETCH report, up to the committed
 *    end (the HW, never past the leader's flushed end).
 * Everything runs on the loop thread.
 */
#ifndef KLOG_REPLICATED_H
#define KLOG_REPLICATED_H

#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/core/core.h"
#include "klog/core/replica.h"

/*
 * Roles, for partition p of topic (created locally with nparts partitions
 * if missing).  lead records epoch in the partition's epoch file first.
 */
int klog_core_lead(klog_core_t *c, const char *topic, int p, int nparts,
    int32_t epoch, const int32_t *replicas, int nrep, const int32_t *isr,
    int nisr, int min_insync, klog_err_t *err);
int klog_core_follow(klog_core_t *c, const char *topic, int p, int nparts,
    int32_t epoch, int32_t leader, klog_err_t *err);
/* p of topic is replicated, its role not known yet: it answers
 * NOT_LEADER until one is set (never as an unreplicated partition). */
int klog_core_replicated(klog_core_t *c, const char *topic, int p,
    int nparts, klog_err_t *err);

/*
 * Refuse to auto-create a topic that fn says is replicated elsewhere (a
 * produce sent to a broker that holds no replica of it): NOT_LEADER.
 */
typedef int klog_core_name_fn(void *arg, const char *topic);
void klog_core_set_create_check(klog_core_t *c, klog_core_name_fn *fn,
    void *arg);

/* No role here (deposed, or the session lost): NOT_LEADER to everyone,
 * waiting acks=all answered NOT_LEADER. */
void klog_core_step_down(klog_core_t *c, klog_core_part_t *p);

/* The partition if it is known and replicated, else NULL. */
klog_core_part_t *klog_core_rpart(klog_core_t *c, const char *topic, int p);
const char *klog_core_part_topic(const klog_core_part_t *p);
int klog_core_part_id(const klog_core_part_t *p);
klog_log_t *klog_core_part_log(const klog_core_part_t *p);
klog_replica_t *klog_core_part_replica(const klog_core_part_t *p);
void *klog_core_part_follower(const klog_core_part_t *p);
void klog_core_part_set_follower(klog_core_part_t *p, void *f);

/*
 * Whether this broker may lead p, whose state is at leader epoch
 * state_epoch: not while it is marked behind (its recovery cut bytes;
 * epochs.h), and not with nothing to show it ever was a replica of it
 * (no data, no epoch: a lost disk) once the partition has had a leader,
 * unless it has since caught up with one.
 */
int klog_core_may_lead(klog_core_t *c, const char *topic, int p,
    int32_t state_epoch);

/* ---- the leader's side ---- */

/*
 * A follower's REPLICA_FETCH: fill it (an item for fetch_read) and resp
 * (all but the set); 1 to answer now, 0 to park it (KLOG_CORE_RFETCH,
 * answered when the flushed end passes it or at max_wait).
 */
int klog_core_rfetch(klog_core_t *c, const klog_rfetch_req_t *q,
    klog_core_item_t *it, klog_rfetch_resp_t *resp);
/* A follower's REPLICA_POS: its position taken (HW, ISR) if it is a
 * consistent one; nothing is answered either way. */
void klog_core_rpos(klog_core_t *c, const klog_rfetch_req_t *q);

/*
 * The outcome of an ISR write the isr_change hook started for partition of
 * topic at epoch: 0 with isr[0..n) the ISR ZooKeeper now holds (the one
 * written, or the old one if it was not applied), -KLOG_EBUSY if another
 * broker leads it now (stepped down), or another error (nothing known to
 * have changed: asked again at the next fetch or tick).  Until then HW
 * counts the members of both ISRs (replica.h).
 */
void klog_core_isr_written(klog_core_t *c, const char *topic, int partition,
    int32_t epoch, const int32_t *isr, int n, int rc);

/* resp for it as of now (after a park), the set not included. */
void klog_core_rfetch_state(klog_core_t *c, const klog_core_item_t *it,
    klog_rfetch_resp_t *resp);

/* ---- a follower's side ---- */

/* Append the leader's bytes (whole, CRC-checked entries) written in
 * epoch; a new epoch is recorded first.  Flushed as usual: the
 * follower_flushed hook says when. */
int klog_core_replica_append(klog_core_t *c, klog_core_part_t *p,
    const uint8_t *set, size_t len, uint32_t msgs, int32_t epoch,
    klog_err_t *err);
/* Cut the log at offset (a message boundary, else the one before);
 * *landed the new end; the epoch file follows. */
int klog_core_replica_truncate(klog_core_t *c, klog_core_part_t *p,
    int64_t offset, int64_t *landed, klog_err_t *err);
/* Start over, empty, at base (the leader no longer has our end). */
int klog_core_replica_reset(klog_core_t *c, klog_core_part_t *p,
    int64_t base, klog_err_t *err);
/* The leader's HW as a fetch reported it. */
void klog_core_replica_hw(klog_core_t *c, klog_core_part_t *p, int64_t hw);

#endif
