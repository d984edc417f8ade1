/*
 * The Kafka listener in a cluster (klog-kafka(7)): the broker's listener
 * registered in ZooKeeper beside its native registration, and the
 * front end's cluster hooks (kafka.h) answered from ZooKeeper, so that a
 * Kafka client that knows one broker learns them all.
 *
 *   /klog/kafka/brokers/<id>   "<host>:<port>" of its Kafka listener
 *                              (ephemeral)
 *
 * Kafka clients see the replicated topics (rtopics.h): Kafka names a
 * partition by one index, which the 0.7 layout's per-broker partitions
 * cannot keep steady as brokers come and go, so 0.7-layout topics stay
 * the native tools'.  A partition's leader is the holder of its leader
 * node, when that broker has a Kafka listener.  A group's coordinator is
 * picked by a hash of its id over the live listeners (sorted by id), so
 * every broker names the same one while the set holds; its commits are
 * the group's ZooKeeper offsets (/consumers/<g>/offsets/<t>/<p>), which
 * klog-group describe reads.
 *
 * The admin requests (CreateTopics, CreatePartitions, DeleteTopics,
 * DescribeConfigs) do what klog-group -Z does (rtopics.h, rtadmin.h), but
 * never wait: a deletion is marked, and the brokers finish it.
 *
 * ZooKeeper's calls are synchronous, on the loop thread, as zkbroker's:
 * Metadata, FindCoordinator, the group and the admin requests wait for
 * them, a few round trips each; the listener list is kept and read again
 * only when it changes.
 */
#ifndef KLOG_ZKKAFKA_H
#define KLOG_ZKKAFKA_H

#include <stdint.h>

#include "klog/base/error.h"
#include "klog/base/logger.h"
#include "klog/kafka/kafka.h"
#include "klog/zk/zk.h"

#define KLOG_ZKKAFKA_BROKERS "/klog/kafka/brokers"

typedef struct klog_zkkafka klog_zkkafka_t;

typedef struct klog_zkkafka_config {
	int32_t broker_id;
	const char *host;            /* the listener's advertised address */
	int port;
	int default_partitions;      /* of a topic auto-created by Metadata
	                                (replication factor 1, as Kafka's
	                                default.replication.factor) */
	klog_logger_t log;
} klog_zkkafka_config_t;

/* Over zk (the caller's, outliving it): hooks set on kafka.  *out is the
 * caller's: klog_zkkafka_free(). */
int klog_zkkafka_new(klog_zk_t *zk, klog_kafka_t *kafka,
    const klog_zkkafka_config_t *cfg, klog_zkkafka_t **out);

/* Unset the hooks and free.  NULL is fine. */
void klog_zkkafka_free(klog_zkkafka_t *zk);

/* The listener's node (again, on a new session); wait_ms as
 * klog_zk_create_ephemeral()'s. */
int klog_zkkafka_register(klog_zkkafka_t *zkk, int wait_ms, klog_err_t *err);

/* A session event: 1 if it was this module's. */
int klog_zkkafka_event(klog_zkkafka_t *zkk, const klog_zk_event_t *ev);

#endif
