/*
 * The Kafka protocol's front end (klog-kafka(7)): a second listener beside
 * the native one, over the same core, so that Kafka clients (librdkafka's
 * kcat and log shippers, kafka-python, sarama, Kafka's Java client)
 * produce to and consume from klog's logs.  It speaks Kafka 2.1's versions
 * and the newer ones librdkafka 2.0.2 picks (kafka.c's apis[]), classic
 * or flexible (kprim.h), with MessageSet v0/v1 and RecordBatch v2 in,
 * record batches kept as magic-2 entries (kbatch.h) and MessageSets
 * transcoded (kmsg.h), and out record batches as stored (Fetch v4+) or
 * MessageSets (kserve.h).  A message's Kafka offset is the byte offset
 * of the next one, less one (a batch's records: its own plus i);
 * consumer groups are coordinated here (coordinator.h), their offsets
 * kept under the data directory (koffsets.h).  Hand klog_kafka_front()
 * and the klog_kafka_t to klog_conns_listen().
 */
#ifndef KLOG_KAFKA_H
#define KLOG_KAFKA_H

#include <stdint.h>

#include "klog/auth/authz.h"
#include "klog/auth/sasl.h"
#include "klog/auth/saslpool.h"
#include "klog/base/error.h"
#include "klog/base/logger.h"
#include "klog/base/promtext.h"
#include "klog/core/core.h"
#include "klog/kafka/kwire.h"
#include "klog/net/conn.h"
#include "klog/net/loop.h"

/* Its port when --kafka-listen names a host alone (the native port has
 * 9092, Kafka's own). */
#define KLOG_KAFKA_DEFAULT_PORT "9093"

typedef struct klog_kafka klog_kafka_t;

typedef struct klog_kafka_config {
	const char *data_dir;          /* committed offsets live under it */
	int64_t max_request_bytes;     /* a frame over this closes the link */
	int64_t max_message_bytes;     /* per record batch, as Kafka's
	                                  message.max.bytes (kbatch.h) */
	int log_append_time;           /* Kafka's log.message.timestamp.type:
	                                  0 CreateTime, 1 LogAppendTime */
	int32_t broker_id;             /* reported by Metadata */
	const char *advertised_host;   /* reported by Metadata (copied) */
	int advertised_port;
	int auto_create;               /* Metadata for an unknown topic
	                                  creates it, as Kafka does */
	int default_partitions;        /* of such a topic */
	/* The broker's log settings, which every topic has (DescribeConfigs
	 * shows them; CreateTopics takes a config only at these values). */
	int64_t segment_bytes;
	int64_t retention_ms;          /* -1: off */
	int64_t retention_bytes;       /* -1: off */
	/* SASL_* listeners: the mechanisms and users (the caller's, for
	 * the front end's life), the thread PLAIN's checks run on. */
	const klog_sasl_config_t *sasl;
	klog_saslpool_t *saslpool;
	klog_authz_t *authz;           /* the broker's ACLs (authz.h), which
	                                  outlive the front; NULL: none */
	klog_logger_t log;
} klog_kafka_config_t;

/* A replicated topic's settings, for DescribeConfigs. */
typedef struct klog_kafka_tconf {
	int partitions, rf, min_insync;
} klog_kafka_tconf_t;

/* A partition as a cluster names it to Metadata. */
#define KLOG_KAFKA_MAX_REPLICAS 16

typedef struct klog_kafka_pmeta {
	int16_t error;                 /* KLOG_KERR_*: LEADER_NOT_AVAILABLE
	                                  while it has none */
	int32_t leader;                /* -1: none */
	uint32_t nreplicas, nisr;
	int32_t replicas[KLOG_KAFKA_MAX_REPLICAS];
	int32_t isr[KLOG_KAFKA_MAX_REPLICAS];
} klog_kafka_pmeta_t;

/* One committed offset of a group, for committed_all below. */
typedef void klog_kafka_offset_fn(void *arg, const char *topic,
    int32_t partition, int64_t offset);

/*
 * Cluster mode (zkkafka.h): what the front end asks of the cluster instead
 * of answering for this broker alone.  Every call is on the loop thread;
 * what it returns stays valid until the next call of the same hook.
 */
typedef struct klog_kafka_cluster {
	void *arg;
	/* The brokers with a Kafka listener, live now. */
	int (*brokers)(void *arg, const klog_kmeta_broker_t **out, size_t *n);
	/* The topics Kafka clients may use. */
	int (*topics)(void *arg, char *const **names, size_t *n);
	/* A topic's partitions; create: make it if missing (auto-creation
	 * is the cluster's to allow).  -KLOG_ENOTOPIC, -KLOG_ETOPIC, or
	 * another error (the client retries). */
	int (*topic)(void *arg, const char *topic, int create,
	    const klog_kafka_pmeta_t **parts, uint32_t *n);
	/* The broker coordinating group (-KLOG_ENOENT: none is live). */
	int (*coordinator)(void *arg, const char *group,
	    klog_kmeta_broker_t *out);
	/* A group's committed offsets (-KLOG_ENOENT: none). */
	int (*commit)(void *arg, const char *group, const char *topic,
	    int32_t partition, int64_t offset);
	int (*committed)(void *arg, const char *group, const char *topic,
	    int32_t partition, int64_t *offset);
	/* Every committed offset of group, fn called for each (topic a C
	 * string valid until the hook returns); none is 0. */
	int (*committed_all)(void *arg, const char *group,
	    klog_kafka_offset_fn *fn, void *fnarg);
	/*
	 * Replicated topics administered as klog-group -Z does it (rtopics.h,
	 * rtadmin.h), a few ZooKeeper calls each and never a wait: a deletion
	 * is marked, and the brokers holding a copy finish it.  Each returns
	 * a Kafka error (KLOG_KERR_*), with err saying why; dry: every check
	 * made, nothing written (validate_only).
	 */
	int16_t (*create_topic)(void *arg, const char *topic, int partitions,
	    int rf, int min_insync, int dry, klog_err_t *err);
	int16_t (*grow_topic)(void *arg, const char *topic, int partitions,
	    int dry, klog_err_t *err);
	int16_t (*delete_topic)(void *arg, const char *topic, klog_err_t *err);
	int16_t (*topic_conf)(void *arg, const char *topic,
	    klog_kafka_tconf_t *out, klog_err_t *err);
} klog_kafka_cluster_t;

/* A front end over core (the caller's, outliving it) with its group
 * coordinator's timers on loop.  *out is the caller's: klog_kafka_free(),
 * after the connections that use it are closed. */
int klog_kafka_new(klog_loop_t *loop, klog_core_t *core,
    const klog_kafka_config_t *cfg, klog_kafka_t **out, klog_err_t *err);

void klog_kafka_free(klog_kafka_t *k);

/* Answer from the cluster (copied), or with NULL for this broker alone
 * again. */
void klog_kafka_set_cluster(klog_kafka_t *k, const klog_kafka_cluster_t *c);

/* The connection callbacks; their arg is the klog_kafka_t. */
const klog_conn_front_t *klog_kafka_front(void);

/* The requests k answered, by API and by the first Kafka error of a
 * produce, fetch or list-offsets answer's partitions (the group APIs'
 * answers count as NONE), and their latencies (arrival to answer; a
 * JoinGroup or SyncGroup waiting for its group is timed to its
 * dispatch), for the broker's metrics. */
const klog_promtext_reqs_t *klog_kafka_reqs(const klog_kafka_t *k);

/* Record bytes of fetch answers so far: queued from segment files
 * (sendfile), and written in memory. */
void klog_kafka_fetch_bytes(const klog_kafka_t *k, uint64_t *file,
    uint64_t *memory);

#endif
