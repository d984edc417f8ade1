/*
 * Cluster discovery: the discovery.h interface answered from ZooKeeper, as
 * Kafka 0.7's producer finds its brokers (klog(7), "Cluster layout").
 *
 * A topic's partitions are the (broker id, partition) pairs registered
 * under /brokers/topics/<topic> by brokers that are live in /brokers/ids,
 * in numeric order (broker id, then partition): index i is the i-th pair.
 * A topic that no live broker holds has no partitions (0), and its indexes
 * 0..n-1 locate partition 0 of each of the n live brokers: where a produce
 * creates it, as 0.7 bootstraps a new topic on every broker.
 *
 * Answers are cached and watched: a change of the live brokers or of a
 * topic's registrations (or the topic appearing) queues an event on the
 * session, which the owner drains (klog_zk_next_event()) and hands to
 * klog_zkdiscovery_event(); that drops the cached answers it concerns, and
 * the next question re-reads them and arms the next watch.  A change of a
 * registration's partition count alone (a topic grown on a broker) is not
 * watched; it is seen at the next re-read.
 *
 * Replicated topics (rtopics.h: those under /klog/topics) are asked
 * first: such a topic's partition count is its assignment's, index i is
 * partition i, located at the broker its leader node names (partition i,
 * broker_id the leader, replicated set) at that broker's /brokers/ids
 * address.  A partition with no leader node (an election is under way) or
 * whose leader is not registered as live is -KLOG_ENOTLEADER: retryable,
 * the producer and the consumer ask again until their retry_for.  The
 * assignment and each leader node read are watched: a leader created,
 * deleted or changed is an event that drops that leader's cached answer.
 * Topic listings include every replicated topic.
 */
#ifndef KLOG_ZKDISCOVERY_H
#define KLOG_ZKDISCOVERY_H

#include "klog/base/error.h"
#include "klog/client/discovery.h"
#include "klog/zk/zk.h"

/*
 * Discovery over zk (borrowed: it must outlive *out, and its events are
 * the owner's to drain).  Only ZooKeeper is asked, never a broker; nothing
 * is read before the first question.  *out is the caller's:
 * klog_discovery_close().
 */
int klog_zkdiscovery_open(klog_zk_t *zk, klog_discovery_t **out,
    klog_err_t *err);

/*
 * Take one event of the session: 1 if it may change an answer (cached
 * answers dropped: ask again), 0 if it does not concern discovery.  A new
 * session, lost events, and a reconnection after a read had failed all
 * count as changes.
 */
int klog_zkdiscovery_event(klog_discovery_t *d, const klog_zk_event_t *ev);

/*
 * Take every event queued on the session d was opened over, each as
 * klog_zkdiscovery_event() takes it: 1 if one may change an answer, 0 if
 * none.  For an owner with no other use of the session's events (the
 * producer, a consumer outside a group), which must take them all the same:
 * an expired session is replaced only as its event is taken (zk.h), and
 * until then every question fails.  *seen gets the bit 1u << type of each
 * event taken (enum klog_zk_event_type), for the owner to tell of a lost
 * connection or an expired session.
 */
int klog_zkdiscovery_drain(klog_discovery_t *d, unsigned *seen);

/* The number of live brokers as last read (-1 before the first read). */
int klog_zkdiscovery_brokers(klog_discovery_t *d);

#endif
