/*
 * The Kafka protocol's data APIs on the wire, for the Kafka listener
 * (klog-kafka(7)): Produce v0-v7, Fetch v0-v11, ListOffsets v0-v5 and
 * Metadata v0-v8, their requests decoded and their answers encoded field
 * by field as Kafka's message schemas give each version.  None of these
 * versions is flexible.  The request header, the primitive types, the
 * API and error names and the topics list of answers are kwire.h's.
 *
 * What klog has no notion of is answered as a Kafka broker without it
 * answers: leader epochs -1 (unknown: clients then send -1 and nothing
 * is fenced), no cluster id (null), no rack, no offline replicas, no
 * transactions (the last stable offset is the high watermark, none
 * aborted), no fetch sessions (KIP-227: every fetch is full, session 0).
 */
#ifndef KLOG_KWDATA_H
#define KLOG_KWDATA_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/kafka/kwire.h"
#include "klog/proto/proto.h"

/* ---- decoders: 0, -KLOG_EPROTO for a body that does not parse, or
 * -KLOG_ENOMEM; arrays grow in a (the caller's, reused) ---- */

/* Produce v0-v7: parts' sets are MessageSets (v0-v2, kmsg.h) or record
 * batches (v3+, kbatch.h); v3's transactional id is read and dropped. */
int klog_kwdata_produce(const klog_kreq_t *r, klog_produce_req_t *req,
    klog_proto_array_t *a);

/*
 * Fetch v0-v11.  Each partition's current leader epoch (v9+) and a
 * follower's log start (v5+) are read and dropped (the listener has
 * neither leader epochs nor followers), as are forgotten topics (v7+:
 * an incremental session's).
 */
typedef struct klog_kfetch {
	klog_fetch_req_t req;          /* parts in a */
	int32_t max_bytes;             /* v3+: the answer's limit; else
	                                  INT32_MAX */
	int8_t isolation;              /* v4+: 1 read committed; else 0 */
	int32_t session_id;            /* v7+ (KIP-227); else 0 */
	int32_t session_epoch;         /* v7+; else -1 */
	klog_str_t rack;               /* v11+: the client's; else "" */
} klog_kfetch_t;
int klog_kwdata_fetch(const klog_kreq_t *r, klog_kfetch_t *f,
    klog_proto_array_t *a);

/*
 * The error of a fetch's session, 0 when it may be served: a full fetch
 * (epoch 0, asking for a session, or -1, for none) is served without one,
 * as by a Kafka broker whose session cache has no room; an incremental one
 * (any other epoch) names a session the listener never made, and gets
 * Kafka's FETCH_SESSION_ID_NOT_FOUND.
 */
int16_t klog_kwdata_fetch_session_error(const klog_kfetch_t *f);

/* ListOffsets v0-v5: time, and max (v1+: 1); the isolation level (v2+)
 * and current leader epochs (v4+) are read and dropped. */
int klog_kwdata_list_offsets(const klog_kreq_t *r, klog_proto_array_t *a,
    uint32_t *n);

/* What a Metadata request asks. */
typedef struct klog_kmeta_req {
	uint32_t n;
	klog_str_t *names;             /* in a */
	int all;                       /* every topic (v0: an empty array,
	                                  v1+: a null one) */
	int allow_create;              /* v4+: may create the topics named;
	                                  else 1 */
	int cluster_ops, topic_ops;    /* v8: the authorized operations
	                                  asked for; else 0 */
} klog_kmeta_req_t;
int klog_kwdata_metadata(const klog_kreq_t *r, klog_kmeta_req_t *m,
    klog_proto_array_t *a);

/* ---- encoders: onto b, whose errors are sticky ---- */

/* Produce v0-v7: one result per part. */
typedef struct klog_kproduce_res {
	klog_str_t topic;
	int32_t partition;
	int16_t error;
	int64_t offset;                /* the Kafka base offset */
	int64_t log_start;             /* v5+: the log's start offset */
	int64_t append_time;           /* v2+: LogAppendTime's, or -1 */
} klog_kproduce_res_t;

/* errpos[i], when not NULL, is where result i's error is, for
 * klog_kwdata_patch_produce(); an error's offsets are -1. */
void klog_kwdata_produce_resp(klog_buf_t *b, int32_t corr, int16_t version,
    const klog_kproduce_res_t *res, uint32_t n, size_t *errpos);
/* Turn the result at pos into error (base offset -1). */
void klog_kwdata_patch_produce(klog_buf_t *b, size_t pos, int16_t error);

/* A fetch answer's head, after the frame's: throttle time (v1+), then the
 * top-level error and session id (v7+: 0, none). */
void klog_kwdata_fetch_head(klog_buf_t *b, int16_t version, int16_t error);
/*
 * A fetch answer's partition, up to its records (whose size and bytes the
 * caller writes): index, error (at the position returned, for a patch),
 * high watermark, last stable offset (v4+: the high watermark), log start
 * (v5+), aborted transactions (v4+: none) and preferred read replica
 * (v11+: -1, this one).
 */
size_t klog_kwdata_fetch_part(klog_buf_t *b, int16_t version,
    int32_t partition, int16_t error, int64_t hwm, int64_t log_start);
/* A whole fetch answer of error and no topics (v7+: a session's). */
void klog_kwdata_fetch_error(klog_buf_t *b, int32_t corr, int16_t version,
    int16_t error);

/* A ListOffsets answer's head, after the frame's: throttle time (v2+). */
void klog_kwdata_offsets_head(klog_buf_t *b, int16_t version);
/* A ListOffsets answer's partition: index and error, then v0's array of
 * the cnt offsets, or v1+'s timestamp ts (-1: none), first offset (-1
 * for none or an error) and leader epoch (v4+: -1). */
void klog_kwdata_offsets_part(klog_buf_t *b, int16_t version,
    int32_t partition, int16_t error, const int64_t *offs, int cnt,
    int64_t ts);

/* Metadata v0-v8. */
#define KLOG_KMETA_OPS_NONE INT32_MIN  /* authorized operations not asked */

typedef struct klog_kmeta_part {
	int16_t error;
	int32_t id, leader;
	uint32_t nreplicas, nisr;
	const int32_t *replicas, *isr;
} klog_kmeta_part_t;

typedef struct klog_kmeta_topic {
	int16_t error;
	klog_str_t name;
	uint32_t nparts;
	const klog_kmeta_part_t *parts;
	int32_t ops;                   /* v8: a bit per Kafka AclOperation
	                                  code, or KLOG_KMETA_OPS_NONE */
} klog_kmeta_topic_t;

typedef struct klog_kmeta {
	const klog_kmeta_broker_t *brokers;
	uint32_t nbrokers;
	int32_t controller;
	int32_t cluster_ops;           /* v8: as a topic's ops */
	const klog_kmeta_topic_t *topics;
	uint32_t ntopics;
} klog_kmeta_t;

void klog_kwdata_metadata_resp(klog_buf_t *b, int32_t corr, int16_t version,
    const klog_kmeta_t *m);

#endif
