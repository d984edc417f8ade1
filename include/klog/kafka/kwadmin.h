/*
 * The Kafka admin APIs on the wire, for the Kafka listener (klog-kafka(7),
 * "ADMIN"): CreateTopics 0-4, DeleteTopics 0-3, CreatePartitions 0-1,
 * DescribeConfigs 0-2, and InitProducerId 0-4 (flexible from 2).  Each
 * decoder reads every version of its API, classic and flexible alike
 * (kprim.h), with its views into the request's frame; arrays grow in the
 * caller's klog_proto_array_t, reused between requests.  No I/O.
 */
#ifndef KLOG_KWADMIN_H
#define KLOG_KWADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/kafka/kwire.h"
#include "klog/proto/proto.h"

/* A topic config named in a request (value null: p NULL). */
typedef struct klog_kconfig {
	klog_str_t name, value;
} klog_kconfig_t;

/* ---- CreateTopics ---- */

typedef struct klog_kcreate_topic {
	klog_str_t name;
	int32_t partitions;        /* -1: the broker's default */
	int16_t rf;                /* -1: the default replication factor */
	uint32_t nassign;          /* manual replica assignments given */
	uint32_t nconfigs;
	const klog_kconfig_t *configs;
} klog_kcreate_topic_t;

typedef struct klog_kcreate {
	uint32_t ntopics;
	const klog_kcreate_topic_t *topics;   /* in a */
	int32_t timeout_ms;
	int validate_only;         /* v1+ */
} klog_kcreate_t;

/* 0, -KLOG_EPROTO for a body that does not parse, or -KLOG_ENOMEM; the
 * topics grow in a, their configs in cfgs. */
int klog_kwadmin_create_topics(const klog_kreq_t *r, klog_kcreate_t *c,
    klog_proto_array_t *a, klog_proto_array_t *cfgs);

/* ---- DeleteTopics ---- */

/* The names (v0-5's array of strings) into a, their count to *n, the
 * timeout to *timeout_ms. */
int klog_kwadmin_delete_topics(const klog_kreq_t *r, klog_proto_array_t *a,
    uint32_t *n, int32_t *timeout_ms);

/* ---- CreatePartitions ---- */

typedef struct klog_kgrow_topic {
	klog_str_t name;
	int32_t count;             /* the partitions it is to have */
	int32_t nassign;           /* -1: null (klog places them) */
} klog_kgrow_topic_t;

typedef struct klog_kgrow {
	uint32_t ntopics;
	const klog_kgrow_topic_t *topics;     /* in a */
	int32_t timeout_ms;
	int validate_only;
} klog_kgrow_t;

int klog_kwadmin_create_partitions(const klog_kreq_t *r, klog_kgrow_t *g,
    klog_proto_array_t *a);

/* ---- a result per topic: CreateTopics, DeleteTopics, CreatePartitions */

typedef struct klog_ktopic_result {
	klog_str_t name;
	int16_t error;
	const char *message;       /* NULL: null (as on success) */
} klog_ktopic_result_t;

/* r's answer (r->api one of the three): the throttle time and the error
 * message where r's version has them. */
void klog_kwadmin_topic_results(klog_buf_t *b, const klog_kreq_t *r,
    const klog_ktopic_result_t *res, uint32_t n);

/* ---- DescribeConfigs ---- */

/* Resource types and config sources (Kafka's numbers). */
enum {
	KLOG_KRES_TOPIC = 2,
	KLOG_KRES_BROKER = 4,
};
enum {
	KLOG_KSOURCE_DYNAMIC_TOPIC = 1,
	KLOG_KSOURCE_STATIC_BROKER = 4,
	KLOG_KSOURCE_DEFAULT = 5,
};

typedef struct klog_kdescribe_res {
	int8_t type;
	klog_str_t name;
	int32_t nkeys;             /* -1: null, every key */
	const klog_str_t *keys;
} klog_kdescribe_res_t;

typedef struct klog_kdescribe {
	uint32_t nres;
	const klog_kdescribe_res_t *res;      /* in a */
	int synonyms;              /* v1+: include_synonyms */
} klog_kdescribe_t;

int klog_kwadmin_describe_configs(const klog_kreq_t *r, klog_kdescribe_t *d,
    klog_proto_array_t *a, klog_proto_array_t *keys);

#define KLOG_KCONFIG_VALUE_MAX 24   /* an int64 in decimal, or a word */

/* A config's value where it comes from: the entry's own, or a synonym's. */
typedef struct klog_kconfig_value {
	const char *name;
	char value[KLOG_KCONFIG_VALUE_MAX];
	int8_t source;
} klog_kconfig_value_t;

typedef struct klog_kconfig_entry {
	klog_kconfig_value_t v;
	int read_only;
	uint32_t nsyn;
	klog_kconfig_value_t syn[2];   /* v1+ with synonyms asked for */
} klog_kconfig_entry_t;

typedef struct klog_kconfig_result {
	int16_t error;
	const char *message;       /* NULL: null */
	int8_t type;
	klog_str_t name;
	uint32_t nentries;
	const klog_kconfig_entry_t *entries;
} klog_kconfig_result_t;

/* The answer: v0's is_default is source DEFAULT; synonyms only when the
 * request asked for them (v1+). */
void klog_kwadmin_describe_configs_resp(klog_buf_t *b, const klog_kreq_t *r,
    int synonyms, const klog_kconfig_result_t *res, uint32_t n);

/* ---- InitProducerId ---- */

/* The transactional id (null: p NULL); v3+'s producer id and epoch
 * (KIP-360: the ones the producer has, to be bumped), -1 and -1 before v3
 * or when it has none. */
int klog_kwadmin_init_producer_id(const klog_kreq_t *r, klog_str_t *txn_id,
    int32_t *timeout_ms, int64_t *producer_id, int16_t *epoch);

/* The answer: error, the producer id and its epoch (-1, -1 with an
 * error). */
void klog_kwadmin_init_producer_id_resp(klog_buf_t *b, const klog_kreq_t *r,
    int16_t error, int64_t producer_id, int16_t epoch);

#endif
