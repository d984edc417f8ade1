/*
 * For klog-group's describe and reset: the partitions of a topic that
 * matter to a consumer group (in ZooKeeper, layout.h's and rtopics.h's
 * layouts), and their offsets at a time, asked of the brokers that hold or
 * lead them (client.h's OFFSETS query), each broker that fails asked no
 * more.
 */
#ifndef KLOG_POSITIONS_H
#define KLOG_POSITIONS_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/client/client.h"
#include "klog/zk/layout.h"
#include "klog/zk/zk.h"

/* A partition as klog-group shows it; broker KLOG_LAYOUT_NUMBERED for a
 * replicated topic's (named "<p>"). */
typedef struct klog_positions_part {
	int32_t broker;
	int32_t part;
} klog_positions_part_t;

/*
 * The partitions of topic that matter to group: those registered by live
 * brokers (for a replicated topic: every partition of its assignment), and
 * those the group has an offset or an owner for; sorted by broker, then
 * partition, into *out (the caller's: free()).
 */
int klog_positions_parts(klog_zk_t *zk, const char *group, const char *topic,
    klog_positions_part_t **out, size_t *n, klog_err_t *err);

/* The live brokers, and which of them failed to answer. */
typedef struct klog_positions_brokers {
	klog_zk_t *zk;             /* for replicated partitions' leaders */
	klog_layout_broker_t *v;
	size_t n;
	int *dead;
	const klog_client_sec_t *sec;  /* how to speak to them (TLS, SASL):
	                                  the caller's, NULL for plaintext;
	                                  load leaves it as it was */
} klog_positions_brokers_t;

int klog_positions_brokers_load(klog_zk_t *zk, klog_positions_brokers_t *b,
    klog_err_t *err);
void klog_positions_brokers_free(klog_positions_brokers_t *b);
/* Broker id among them (its index into *idx, which may be NULL), or
 * NULL. */
const klog_layout_broker_t *klog_positions_broker_find(
    const klog_positions_brokers_t *b, int32_t id, size_t *idx);

/*
 * Partition p's offset at time (KLOG_OFFSET_LATEST, _EARLIEST or ms),
 * asked of its broker: a replicated partition's leader (which answers
 * "latest" with the committed end: what consumers can read), a 0.7
 * partition's holder.  A broker that is not registered, or that failed
 * once, is not asked again (-KLOG_ECONN); -KLOG_ENOTLEADER while a
 * replicated partition has no leader.
 */
int klog_positions_ask_offset(klog_positions_brokers_t *b, const char *topic,
    const klog_positions_part_t *p, int64_t time, int timeout_ms, int64_t *off,
    klog_err_t *err);

#endif
