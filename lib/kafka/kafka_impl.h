/*
 * What lib/kafka/kafka.c (framing, produce, fetch, offsets),
 * lib/kafka/kmetadata.c (Metadata), lib/kafka/groups.c (the group APIs),
 * lib/kafka/ksasl.c (SASL), lib/kafka/kauthz.c (authorization) and
 * lib/kafka/kadmin.c (the admin APIs, InitProducerId) share:
 * the front end's state.  Private to those files.
 */
#ifndef KLOG_KAFKA_IMPL_H
#define KLOG_KAFKA_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/core/core.h"
#include "klog/kafka/coordinator.h"
#include "klog/kafka/kafka.h"
#include "klog/kafka/koffsets.h"
#include "klog/kafka/kwdata.h"
#include "klog/kafka/kwgroup.h"
#include "klog/kafka/kwire.h"
#include "klog/net/conn.h"
#include "klog/proto/proto.h"

struct klog_kafka {
	klog_kafka_config_t cfg;
	char *adv_host;
	klog_core_t *core;
	klog_coordinator_t *groups;
	klog_koffsets_t *offsets;
	/* Arrays reused by every request (the loop is single-threaded). */
	klog_proto_array_t parts, parts2;
	klog_core_item_t *items;
	size_t items_cap;
	klog_kproduce_res_t *results;
	size_t results_cap;
	size_t *errpos;
	size_t errpos_cap;
	int64_t *offs;
	size_t offs_cap;
	klog_kmeta_topic_t *mtopics;
	size_t mtopics_cap;
	klog_kmeta_part_t *mparts;
	size_t mparts_cap;
	klog_kafka_pmeta_t *pmeta;     /* cluster mode: copies of the
	                                  cluster's answers */
	size_t pmeta_cap;
	klog_kafka_cluster_t cluster;
	int clustered;
	uint8_t *rbuf;             /* file bytes a fetch transcodes */
	size_t rbuf_cap;
	uint64_t fetch_file_bytes;   /* fetched record bytes, sendfile's */
	uint64_t fetch_memory_bytes; /* and the others */
	/* The 0.7 sets transcoded from one read's produce requests, one
	 * buffer per request (the core keeps pointers into them until
	 * klog_core_commit()); nblocks in use. */
	klog_buf_t *blocks;
	size_t nblocks, blocks_cap;
	size_t ingested;           /* bytes in them */
	/* The connection process() works for, and its output queue. */
	klog_conn_t *conn;
	klog_outq_t *q;
	char badbuf[512];          /* room for a bad's words made up */
	const char *bad;           /* set by a handler: close the connection
	                              after what is queued, saying this */
	/* The request being handled: when it came in, the first error of
	 * its answer's partitions (produce, fetch, list offsets), whether
	 * it was parked (then counted when it is answered). */
	int64_t arrived_ns;
	int64_t append_time;       /* a produce's LogAppendTime, or -1 */
	int16_t err;
	int parked;
	klog_promtext_reqs_t reqs;
	int64_t pid_said_ns;       /* when an InitProducerId refusal was last
	                              logged (a line a second at most) */
};

/*
 * (kauthz.c) Whether the connection's principal may do op on the resource named
 * name (authz.h; always without ACLs).  A refusal is logged there.
 */
int kafka_may(klog_kafka_t *k, klog_acl_op_t op, klog_acl_res_t res,
    klog_str_t name);

/* The same, never logged: what a listing shows, what a description
 * reports. */
int kafka_allowed(klog_kafka_t *k, klog_acl_op_t op, klog_acl_res_t res,
    klog_str_t name);

/* Whether it may get a producer id: IDEMPOTENT_WRITE on the cluster (ALL
 * in klog's ACLs), else WRITE on some topic (Kafka 2.8's rule).  A refusal
 * is logged. */
int kafka_may_idempotent(klog_kafka_t *k);

/* Whether it may create the topic: CREATE on the cluster, else on it. */
int kafka_may_create(klog_kafka_t *k, klog_str_t topic);

/* Whether a Metadata of every topic shows it this one (not logged). */
int kafka_sees(klog_kafka_t *k, klog_str_t topic);

/* The operations it may do on a topic (name) or the cluster, as Metadata
 * v8 reports them: a bit per Kafka AclOperation code, of those Kafka
 * reports on that resource; all of them without ACLs (not logged). */
int32_t kafka_ops(klog_kafka_t *k, klog_acl_res_t res, klog_str_t name);

/* This broker as Metadata and FindCoordinator name it (groups.c). */
klog_kmeta_broker_t kafka_self(const klog_kafka_t *k);

/* Before authentication on a SASL_* listener (ksasl.c): take the frame at
 * data, the bytes used (0: not whole yet); k->bad set to close c;
 * *versions set when it is an ApiVersions (*r) for the caller to answer. */
size_t kafka_sasl_frame(klog_kafka_t *k, klog_conn_t *c, const uint8_t *data,
    size_t len, klog_kreq_t *r, int *versions);

/* SaslHandshake or SaslAuthenticate where none is expected:
 * ILLEGAL_SASL_STATE (34). */
void kafka_sasl_misplaced(klog_kafka_t *k, const klog_kreq_t *r);

/* Metadata (kmetadata.c): answers r onto k->q. */
void kafka_metadata(klog_kafka_t *k, const klog_kreq_t *r);

/* The group APIs (groups.c); each answers r onto k->q, or in line
 * later. */
void kafka_find_coordinator(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_join(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_sync(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_heartbeat(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_leave(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_offset_commit(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_offset_fetch(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_describe_groups(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_list_groups(klog_kafka_t *k, const klog_kreq_t *r);

/* The admin APIs and InitProducerId (kadmin.c); each answers r onto
 * k->q. */
void kafka_create_topics(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_delete_topics(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_create_partitions(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_describe_configs(klog_kafka_t *k, const klog_kreq_t *r);
void kafka_init_producer_id(klog_kafka_t *k, const klog_kreq_t *r);

/* The first error of an answer, for the requests' error label. */
static inline void
kafka_note_error(klog_kafka_t *k, int16_t error)
{
	if (k->err == KLOG_KERR_NONE)
		k->err = error;
}

/*
 * A Fetch response (kfetch.c) onto q (k->q, or a parked request's
 * hold's): its head (kwdata.h), then each partition's error, high
 * watermark (the visible end), log start and the fields of its version,
 * and messages, within max_bytes: bytes, and ranges of segment files.
 */
void kafka_fetch_encode(klog_kafka_t *k, klog_outq_t *q, int16_t version,
    int32_t corr, int32_t max_bytes, const klog_core_item_t *items,
    uint32_t n);

/* The group coordinator and offset store, for klog_kafka_new/free. */
int kafka_groups_open(klog_kafka_t *k, klog_loop_t *loop,
    const char *data_dir, klog_err_t *err);
void kafka_groups_close(klog_kafka_t *k);

#endif
