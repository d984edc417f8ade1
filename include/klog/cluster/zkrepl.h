/*
 * A broker's part in its replicated topics (rtopics.h's layout): which
 * partitions it holds a replica of, who leads each, elections, and the
 * leader's ISR writes.  Runs on the broker's loop thread over the
 * zkbroker's session; its events come through klog_zkrepl_event().
 *
 * For each partition of a replicated topic that names this broker:
 *  - a leader node held by another broker: follow it (the core's role,
 *    the fetcher fetching from it) in the state's epoch;
 *  - the leader node is ours: lead;
 *  - no leader node: if this broker is live, in the state's isr and may
 *    lead (klog_core_may_lead()), it claims the partition (rtopics.h's
 *    multi, leader_epoch + 1, isr = isr with only live brokers) when it is
 *    the first live isr member, or once the partition has been without a
 *    leader for a second (so a first member that cannot lead does not
 *    stall it); meanwhile nobody takes requests for it.  With unclean
 *    election on, a live replica outside the isr claims it when no isr
 *    member is live, with isr = [itself].
 * Losing the session steps every partition down at once (the leader
 * nodes go with it); the new session re-reads everything.  Before that, a
 * leader whose pings ZooKeeper has not answered for nine tenths of the
 * session timeout steps down from every partition it leads ("fenced"),
 * since by the timeout another broker may lead them; it leads again when
 * ZooKeeper answers and the leader nodes are still its own.  Nothing here
 * waits on ZooKeeper while it is silent: ISR writes are asynchronous (one
 * per partition in flight; one that fails is read back before anything is
 * decided), and the other calls refuse at once (zk.h).
 *
 * After a failed sync (offline.h) the broker leads and follows nothing
 * until it restarts: each partition it leads it leaves, out of the ISR if
 * other members are in it, and its leader node deleted, so that an
 * in-sync replica elsewhere claims it at once; it never claims one
 * again.  A follower on a failed disk just stops fetching; its leader
 * drops it from the ISR once it lags (--replica-lag-time).
 */
#ifndef KLOG_ZKREPL_H
#define KLOG_ZKREPL_H

#include <stdint.h>

#include "klog/base/error.h"
#include "klog/base/logger.h"
#include "klog/broker/fetcher.h"
#include "klog/core/core.h"
#include "klog/net/loop.h"
#include "klog/zk/zk.h"

typedef struct klog_zkrepl klog_zkrepl_t;

typedef struct klog_zkrepl_config {
	int32_t broker_id;
	int unclean;                /* --unclean-leader-election */
	klog_logger_t log;
} klog_zkrepl_config_t;

int klog_zkrepl_new(klog_zk_t *zk, klog_loop_t *loop, klog_core_t *core,
    klog_fetcher_t *fetcher, const klog_zkrepl_config_t *cfg,
    klog_zkrepl_t **out, klog_err_t *err);
void klog_zkrepl_free(klog_zkrepl_t *zr);

/* Read every replicated topic and act on it (at open, on a new session). */
void klog_zkrepl_sync(klog_zkrepl_t *zr);
/* A session event; 1 if it was replication's. */
int klog_zkrepl_event(klog_zkrepl_t *zr, const klog_zk_event_t *ev);
/* Whether topic is replicated (not to be registered in the 0.7 layout). */
int klog_zkrepl_has(klog_zkrepl_t *zr, const char *topic);

/* The core's storage hook (offline.h; arg: zr). */
void klog_zkrepl_storage_failed(void *arg);

/* Whether this broker is fenced (leading nothing for want of ZooKeeper),
 * and how many times it has been (*fences). */
int klog_zkrepl_fenced(const klog_zkrepl_t *zr, int64_t *fences);

/* The core's isr_change hook (arg: zr): starts the write (core.h). */
int klog_zkrepl_isr_change(void *arg, const char *topic, int partition,
    int32_t epoch, const int32_t *isr, int n);

#endif
