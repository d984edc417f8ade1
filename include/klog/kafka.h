/*
 * The Kafka protocol's front end (klog-kafka(7)): a second listener beside
 * the native one, over the same core, so that Kafka clients (librdkafka's
 * kcat and log shippers, kafka-python) produce to and consume from klog's
 * logs.  It speaks the classic, non-flexible versions Debian's clients
 * settle on (ApiVersions 0-2, Metadata 0-1, Produce 0-2, Fetch 0-3,
 * ListOffsets 0-1, the group APIs at v0, OffsetCommit 0-2, OffsetFetch
 * 0-1) with MessageSet v0/v1, transcoded to and from klog's 0.7 sets
 * (kmsg.h).  A message's Kafka offset is the byte offset of the next one,
 * less one; consumer groups are coordinated here (kgroup.h), their offsets
 * kept under the data directory (koffsets.h).  Hand klog_kafka_front() and
 * the klog_kafka_t to klog_conns_listen().
 */
#ifndef KLOG_KAFKA_H
#define KLOG_KAFKA_H

#include <stdint.h>

#include "klog/conn.h"
#include "klog/core.h"
#include "klog/error.h"
#include "klog/logger.h"
#include "klog/loop.h"

/* Its port when --kafka-listen names a host alone (the native port has
 * 9092, Kafka's own). */
#define KLOG_KAFKA_DEFAULT_PORT "9093"

typedef struct klog_kafka klog_kafka_t;

typedef struct klog_kafka_config {
	const char *data_dir;          /* committed offsets live under it */
	int64_t max_request_bytes;     /* a frame over this closes the link */
	int64_t max_message_bytes;     /* per message value */
	int32_t broker_id;             /* reported by Metadata */
	const char *advertised_host;   /* reported by Metadata (copied) */
	int advertised_port;
	int auto_create;               /* Metadata for an unknown topic
	                                  creates it, as Kafka does */
	int default_partitions;        /* of such a topic */
	klog_logger_t log;
} klog_kafka_config_t;

/* A front end over core (the caller's, outliving it) with its group
 * coordinator's timers on loop.  *out is the caller's: klog_kafka_free(),
 * after the connections that use it are closed. */
int klog_kafka_new(klog_loop_t *loop, klog_core_t *core,
    const klog_kafka_config_t *cfg, klog_kafka_t **out, klog_err_t *err);

void klog_kafka_free(klog_kafka_t *k);

/* The connection callbacks; their arg is the klog_kafka_t. */
const klog_conn_front_t *klog_kafka_front(void);

#endif
