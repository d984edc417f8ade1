/*
 * The Kafka group APIs on the wire, for the Kafka listener (klog-kafka(7)):
 * the decoders and encoders of FindCoordinator 0-2, JoinGroup 0-5,
 * SyncGroup 0-3, Heartbeat 0-3, LeaveGroup 0-3, OffsetCommit 0-7,
 * OffsetFetch 0-7 (6 and 7 flexible), DescribeGroups 0-4 and ListGroups
 * 0-4 (3 and 4 flexible).  One decoder reads every version of its API
 * (kprim.h reads either encoding, the request says which); an encoder
 * writes the version and encoding of the request it answers.  Fields a
 * version lacks decode as Kafka's defaults: a rebalance timeout of the
 * session timeout, no group instance id (p NULL), generation -1, leader
 * epoch -1.  No I/O; views point into the request.
 */
#ifndef KLOG_KWGROUP_H
#define KLOG_KWGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/kafka/kwire.h"
#include "klog/proto/proto.h"

/* FindCoordinator's key types (v1+; v0's key is a group's). */
#define KLOG_KWGROUP_KEY_GROUP 0
#define KLOG_KWGROUP_KEY_TRANSACTION 1

/* The authorized operations of a described group when not asked for. */
#define KLOG_KWGROUP_OPS_NONE INT32_MIN

/* A name and its bytes: a JoinGroup protocol and its metadata, a
 * SyncGroup member and its assignment. */
typedef struct klog_kpair {
	klog_str_t name;
	const uint8_t *data;
	uint32_t len;
} klog_kpair_t;

typedef struct klog_kjoin {
	klog_str_t group, member_id, protocol_type;
	klog_str_t instance_id;        /* v5; p NULL: none (dynamic) */
	int32_t session_timeout_ms;
	int32_t rebalance_timeout_ms;  /* v1; v0: the session timeout */
	uint32_t nprotocols;
	klog_kpair_t *protocols;       /* in a */
} klog_kjoin_t;

typedef struct klog_ksync {
	klog_str_t group, member_id, instance_id;  /* instance: v3 */
	int32_t generation;
	uint32_t nassign;
	klog_kpair_t *assign;          /* in a: member id and assignment */
} klog_ksync_t;

typedef struct klog_kbeat {
	klog_str_t group, member_id, instance_id;  /* instance: v3 */
	int32_t generation;
} klog_kbeat_t;

/* A member that leaves: v0-2 name one, v3 a batch. */
typedef struct klog_kleaver {
	klog_str_t member_id, instance_id;
	int16_t error;                 /* the answer's, set by the caller */
} klog_kleaver_t;

typedef struct klog_kleave {
	klog_str_t group;
	uint32_t count;
	klog_kleaver_t *members;       /* in a */
} klog_kleave_t;

/* OffsetCommit's and OffsetFetch's partitions. */
typedef struct klog_kcommit_part {
	klog_str_t topic;
	int32_t partition;
	int64_t offset;                /* OffsetFetch: -1 */
	int32_t leader_epoch;          /* OffsetCommit v6; else -1 */
	klog_str_t metadata;           /* null as empty */
} klog_kcommit_part_t;

typedef struct klog_kcommit {
	klog_str_t group, member_id, instance_id;
	int32_t generation;            /* -1 before OffsetCommit v1 */
	int all;                       /* OffsetFetch v2+, topics null: every
	                                  partition the group committed */
	int require_stable;            /* OffsetFetch v7 */
	uint32_t count;
	klog_kcommit_part_t *parts;    /* in a */
} klog_kcommit_t;

/* ---- decoders: 0, -KLOG_EPROTO for a body that does not parse, or
 * -KLOG_ENOMEM; arrays grow in a (the caller's, reused) ---- */

int klog_kwgroup_find(const klog_kreq_t *r, klog_str_t *key,
    int8_t *key_type);
int klog_kwgroup_join(const klog_kreq_t *r, klog_kjoin_t *j,
    klog_proto_array_t *a);
int klog_kwgroup_sync(const klog_kreq_t *r, klog_ksync_t *s,
    klog_proto_array_t *a);
int klog_kwgroup_heartbeat(const klog_kreq_t *r, klog_kbeat_t *h);
int klog_kwgroup_leave(const klog_kreq_t *r, klog_kleave_t *l,
    klog_proto_array_t *a);
int klog_kwgroup_offset_commit(const klog_kreq_t *r, klog_kcommit_t *c,
    klog_proto_array_t *a);
int klog_kwgroup_offset_fetch(const klog_kreq_t *r, klog_kcommit_t *c,
    klog_proto_array_t *a);
/* DescribeGroups: the group ids (klog_str_t, in a), and whether their
 * authorized operations are asked for (v3). */
int klog_kwgroup_describe(const klog_kreq_t *r, klog_proto_array_t *a,
    uint32_t *n, int *with_ops);
/* ListGroups: v4's states filter (klog_str_t, in a; none: every state). */
int klog_kwgroup_list(const klog_kreq_t *r, klog_proto_array_t *a,
    uint32_t *nstates);

/* ---- encoders: r's answer onto b, whose errors are sticky ---- */

/* FindCoordinator: with an error, node -1, host "" and port -1 and (v1+)
 * why, else this node; no message without an error. */
void klog_kwgroup_find_resp(klog_buf_t *b, const klog_kreq_t *r,
    int16_t error, const char *why, int32_t node, klog_str_t host,
    int32_t port);

/* A member of the leader's JoinGroup answer. */
typedef struct klog_kjoin_member {
	klog_str_t member_id, instance_id;   /* instance: v5, p NULL none */
	const uint8_t *meta;
	uint32_t meta_len;
} klog_kjoin_member_t;

/* A JoinGroup answer (protocol, leader and member ids: p NULL as ""). */
typedef struct klog_kjoin_resp {
	int16_t error;                 /* KLOG_KERR_* */
	int32_t generation;            /* -1 with an error */
	klog_str_t protocol, leader_id, member_id;
	uint32_t nmembers;             /* the leader's answer only; else 0 */
	const klog_kjoin_member_t *members;
} klog_kjoin_resp_t;

void klog_kwgroup_join_resp(klog_buf_t *b, const klog_kreq_t *r,
    const klog_kjoin_resp_t *jr);
/* SyncGroup (the assignment NULL as empty). */
void klog_kwgroup_sync_resp(klog_buf_t *b, const klog_kreq_t *r,
    int16_t error, const uint8_t *assignment, uint32_t len);
/* Heartbeat, and LeaveGroup v0-2: an error (and a throttle time). */
void klog_kwgroup_error_resp(klog_buf_t *b, const klog_kreq_t *r,
    int16_t error);
/* LeaveGroup: error, and at v3 each member's answer. */
void klog_kwgroup_leave_resp(klog_buf_t *b, const klog_kreq_t *r,
    int16_t error, const klog_kleave_t *l);

/*
 * The partitions of an OffsetCommit or OffsetFetch answer, in request
 * order, consecutive ones of one topic under one entry: begin, a part()
 * for each, end (OffsetFetch v2+ takes its top-level error there).  The
 * counts are patched in at the end, in either encoding.
 */
typedef struct klog_kwgroup_parts {
	const klog_kreq_t *r;
	size_t start, topics_pos, parts_pos;
	int32_t ntopics, nparts;
	klog_str_t cur;
} klog_kwgroup_parts_t;

void klog_kwgroup_parts_begin(klog_buf_t *b, const klog_kreq_t *r,
    klog_kwgroup_parts_t *w);
/* OffsetCommit's: a partition's error. */
void klog_kwgroup_commit_part(klog_buf_t *b, klog_kwgroup_parts_t *w,
    klog_str_t topic, int32_t partition, int16_t error);
/* OffsetFetch's: its offset (-1: none) and metadata, or an error. */
void klog_kwgroup_fetch_part(klog_buf_t *b, klog_kwgroup_parts_t *w,
    klog_str_t topic, int32_t partition, int64_t offset, klog_str_t meta,
    int16_t error);
void klog_kwgroup_parts_end(klog_buf_t *b, klog_kwgroup_parts_t *w,
    int16_t error);

/* A member of a described group. */
typedef struct klog_kdmember {
	klog_str_t member_id, instance_id;   /* instance: v4, p NULL none */
	klog_str_t client_id, client_host;
	const uint8_t *meta, *assign;        /* NULL as empty */
	uint32_t meta_len, assign_len;
} klog_kdmember_t;

/* A described group (Kafka's GroupSummary, and the error it got). */
typedef struct klog_kdgroup {
	int16_t error;
	klog_str_t id, state, protocol_type, protocol;
	uint32_t nmembers;
	const klog_kdmember_t *members;
	int32_t authorized_ops;        /* v3; KLOG_KWGROUP_OPS_NONE */
} klog_kdgroup_t;

/*
 * DescribeGroups and ListGroups answers, a group at a time: begin, a
 * group for each, end.
 */
typedef struct klog_kwgroup_list {
	const klog_kreq_t *r;
	size_t start, count_pos;
	int32_t n;
} klog_kwgroup_list_t;

void klog_kwgroup_describe_begin(klog_buf_t *b, const klog_kreq_t *r,
    klog_kwgroup_list_t *w);
void klog_kwgroup_describe_group(klog_buf_t *b, klog_kwgroup_list_t *w,
    const klog_kdgroup_t *g);
/* ListGroups' error comes before its groups. */
void klog_kwgroup_list_begin(klog_buf_t *b, const klog_kreq_t *r,
    int16_t error, klog_kwgroup_list_t *w);
/* A listed group; its state is written from v4. */
void klog_kwgroup_list_group(klog_buf_t *b, klog_kwgroup_list_t *w,
    klog_str_t id, klog_str_t protocol_type, klog_str_t state);
void klog_kwgroup_list_end(klog_buf_t *b, klog_kwgroup_list_t *w);

#endif
