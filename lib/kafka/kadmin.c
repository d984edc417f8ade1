/*
 * The Kafka listener's admin APIs (kafka_impl.h; klog-kafka(7), "ADMIN").
 *
 * CreateTopics, DeleteTopics and CreatePartitions do what klog-group's
 * create-topic, delete-topic and alter-topic do: on a standalone broker
 * the core's topic administration (admin.h), which the native
 * CREATE_TOPIC, DELETE_TOPIC and ALTER_TOPIC reach; on a cluster broker
 * the cluster's hooks, which write ZooKeeper as klog-group -Z does
 * (zkkafka.h).  Before that each topic is checked as Kafka checks it, in
 * Kafka's order: a name given twice, the principal's ACLs, manual
 * assignments (refused: klog places replicas), the partition count and
 * replication factor, the configs, then what the operation itself finds
 * (the name, the topic there or not).  A validate-only request makes the
 * same checks and changes nothing.
 *
 * klog's log settings are the broker's, for every topic: DescribeConfigs
 * shows them under Kafka's topic config names, and CreateTopics takes a
 * config only at the value every topic has (another is POLICY_VIOLATION,
 * saying which klog-serve option sets it).
 *
 * InitProducerId grants an idempotent producer its id (the core's,
 * core/idem.h: blocks from the data directory, or ZooKeeper in a cluster) under Kafka 2.8's
 * ACL rule (IDEMPOTENT_WRITE on the cluster, or WRITE on some topic);
 * a transactional id is refused (TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
 * which makes librdkafka's producer fail at once with a fatal error and
 * Kafka's Java producer fail its sends, where other errors are retried
 * for ever.
 *
 * Admin requests are rare: their scratch is allocated per request, and
 * one naming more than MAX_TOPICS topics closes the connection.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_impl.h"
#include "klog/base/clock.h"
#include "klog/base/parse.h"
#include "klog/core/admin.h"
#include "klog/core/idem.h"
#include "klog/kafka/kwadmin.h"
#include "klog/storage/names.h"

#define MSG_MAX 256            /* an answer's error message */
/* Topics or resources in one admin request: its answers' scratch (a
 * message's room each) and the answer itself stay a few MB, whatever a
 * request of --max-request-bytes could name. */
#define MAX_TOPICS 10000
#define VALUE_MAX 64           /* a config value taken */
#define MAX_ENTRIES 10         /* configs of one resource */
#define NS_PER_S 1000000000

/* ---- answers ---- */

/*
 * One request's answers, a result and the room for its message per topic
 * in request order.  dup[i]: 1 for the first of a name given more than
 * once, 2 for its later copies (left out of the answer, as Kafka answers
 * a name once).
 */
typedef struct answers {
	klog_ktopic_result_t *res;
	char (*msg)[MSG_MAX];
	uint8_t *dup;
	uint32_t *order;
	uint32_t n;
} answers_t;

/* The names being sorted: each the first field of an element. */
typedef struct names {
	const uint8_t *base;
	size_t size;
} names_t;

static klog_str_t
name_at(const names_t *v, uint32_t i)
{
	klog_str_t s;

	memcpy(&s, v->base + (size_t)i * v->size, sizeof(s));
	return s;
}

static int
str_cmp(klog_str_t x, klog_str_t y)
{
	int c = memcmp(x.p, y.p, x.len < y.len ? x.len : y.len);

	if (c != 0)
		return c;
	return (x.len > y.len) - (x.len < y.len);
}

/* By name, then by position, so that a name's first copy sorts first. */
static int
by_name(const void *a, const void *b, void *arg)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = str_cmp(name_at(arg, i), name_at(arg, j));

	return c != 0 ? c : (i > j) - (i < j);
}

static void
answers_free(answers_t *a)
{
	free(a->res);
	free(a->msg);
	free(a->dup);
	free(a->order);
}

/* Room for n answers to the elements at base (size bytes each, a name
 * first), their names copied and repeats marked (sorted, so a request of
 * many topics costs n log n).  0, or -1 out of memory. */
static int
answers_new(answers_t *a, const void *base, size_t size, uint32_t n)
{
	names_t v = { base, size };

	memset(a, 0, sizeof(*a));
	a->n = n;
	a->res = calloc((size_t)n + 1, sizeof(*a->res));
	a->msg = calloc((size_t)n + 1, sizeof(*a->msg));
	a->dup = calloc((size_t)n + 1, sizeof(*a->dup));
	a->order = calloc((size_t)n + 1, sizeof(*a->order));
	if (a->res == NULL || a->msg == NULL || a->dup == NULL ||
	    a->order == NULL) {
		answers_free(a);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		a->order[i] = i;
		a->res[i].name = name_at(&v, i);
	}
	qsort_r(a->order, n, sizeof(*a->order), by_name, &v);
	for (uint32_t i = 1; i < n; i++) {
		if (str_cmp(a->res[a->order[i - 1]].name,
		    a->res[a->order[i]].name) != 0)
			continue;
		if (a->dup[a->order[i - 1]] == 0)
			a->dup[a->order[i - 1]] = 1;
		a->dup[a->order[i]] = 2;
	}
	return 0;
}

/* Answer i is error, its message made as printf's. */
static int16_t __attribute__((format(printf, 4, 5)))
say(answers_t *a, uint32_t i, int16_t error, const char *fmt, ...)
{
	va_list ap;

	a->res[i].error = error;
	a->res[i].message = a->msg[i];
	va_start(ap, fmt);
	vsnprintf(a->msg[i], MSG_MAX, fmt, ap);
	va_end(ap);
	return error;
}

/* Answer i from what an operation said: its error, err's text. */
static int16_t
said(answers_t *a, uint32_t i, int16_t error, const klog_err_t *err)
{
	if (error == KLOG_KERR_NONE)
		return error;
	return say(a, i, error, "%s", err->msg[0] != '\0' ? err->msg :
	    klog_kwire_error_name(error));
}

/* The answers, a repeated name's later copies left out. */
static void
answers_send(klog_kafka_t *k, const klog_kreq_t *r, answers_t *a)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i < a->n; i++)
		if (a->dup[i] != 2)
			a->res[m++] = a->res[i];
	klog_kwadmin_topic_results(klog_outq_buf(k->q), r, a->res, m);
}

/* The topic's name as a C string (KLOG_TOPIC_MAX + 1 bytes); else
 * answer i is INVALID_TOPIC_EXCEPTION and -1. */
static int
topic_cstr(answers_t *a, uint32_t i, klog_str_t name, char *out)
{
	if (klog_str_cstr(name, out, KLOG_TOPIC_MAX + 1) == 0)
		return 0;
	say(a, i, KLOG_KERR_INVALID_TOPIC, "a topic name is at most %d "
	    "bytes, without NUL", KLOG_TOPIC_MAX);
	return -1;
}

/* A KLOG_WIRE_* code of the core's topic administration, as Kafka's. */
static int16_t
admin_error(int16_t wire)
{
	switch (wire) {
	case KLOG_WIRE_TOPIC_EXISTS:
		return KLOG_KERR_TOPIC_ALREADY_EXISTS;
	case KLOG_WIRE_INVALID_PARTITIONS:
		return KLOG_KERR_INVALID_PARTITIONS;
	case KLOG_WIRE_TOPIC_REPLICATED:
		return KLOG_KERR_POLICY_VIOLATION;
	default:
		return klog_kwire_error_from_wire(wire);
	}
}

/* The core's operation api on topic (dry: checked only), answered into
 * answer i; *now gets the topic's partitions after it. */
static int16_t
local_admin(klog_kafka_t *k, answers_t *a, uint32_t i, int16_t api,
    klog_str_t topic, int32_t partitions, int dry)
{
	klog_topic_admin_t req = { topic, partitions };
	klog_err_t err = { 0, "" };
	int32_t now;
	int16_t wire;

	wire = klog_core_topic_try(k->core, api, &req, dry, &now, &err);
	return said(a, i, admin_error(wire), &err);
}

/* ---- topic configs ---- */

/* The topic configs klog has, each the broker's for every topic. */
enum {
	CFG_SEGMENT_BYTES,
	CFG_RETENTION_MS,
	CFG_RETENTION_BYTES,
	CFG_MAX_MESSAGE_BYTES,
	CFG_CLEANUP_POLICY,
	CFG_MIN_INSYNC,
	NCONFIGS
};

static const struct tconfig {
	const char *name;          /* Kafka's topic config */
	const char *broker_name;   /* its broker-wide synonym */
	const char *option;        /* klog-serve's, NULL: none */
} tconfigs[NCONFIGS] = {
	[CFG_SEGMENT_BYTES] = { "segment.bytes", "log.segment.bytes",
	    "--segment-bytes" },
	[CFG_RETENTION_MS] = { "retention.ms", "log.retention.ms",
	    "--retention-hours" },
	[CFG_RETENTION_BYTES] = { "retention.bytes", "log.retention.bytes",
	    "--retention-bytes" },
	[CFG_MAX_MESSAGE_BYTES] = { "max.message.bytes", "message.max.bytes",
	    "--max-message-bytes" },
	[CFG_CLEANUP_POLICY] = { "cleanup.policy", "log.cleanup.policy",
	    NULL },
	[CFG_MIN_INSYNC] = { "min.insync.replicas", "min.insync.replicas",
	    NULL },
};

/* The broker's value of a numeric config. */
static int64_t
broker_value(const klog_kafka_t *k, int c)
{
	switch (c) {
	case CFG_SEGMENT_BYTES:
		return k->cfg.segment_bytes;
	case CFG_RETENTION_MS:
		return k->cfg.retention_ms;
	case CFG_RETENTION_BYTES:
		return k->cfg.retention_bytes;
	default:
		return k->cfg.max_message_bytes;
	}
}

static int
tconfig_find(klog_str_t name)
{
	for (int c = 0; c < NCONFIGS; c++)
		if (strlen(tconfigs[c].name) == name.len &&
		    memcmp(tconfigs[c].name, name.p, name.len) == 0)
			return c;
	return -1;
}

/* cleanup.policy: klog deletes old segments, never compacts. */
static int16_t
take_cleanup(answers_t *a, uint32_t i, const char *v)
{
	if (strcmp(v, "delete") == 0)
		return KLOG_KERR_NONE;
	if (strcmp(v, "compact") == 0 || strcmp(v, "compact,delete") == 0 ||
	    strcmp(v, "delete,compact") == 0)
		return say(a, i, KLOG_KERR_POLICY_VIOLATION, "klog deletes "
		    "old segments and never compacts: cleanup.policy is "
		    "delete");
	return say(a, i, KLOG_KERR_INVALID_CONFIG, "Invalid value %s for "
	    "configuration cleanup.policy: String must be one of: compact, "
	    "delete", v);
}

/* min.insync.replicas: a cluster's topics keep theirs (*min_insync);
 * a standalone broker's have one replica. */
static int16_t
take_min_insync(klog_kafka_t *k, answers_t *a, uint32_t i, const char *v,
    int *min_insync)
{
	const char *why;
	int64_t n;

	if (klog_parse_i64(v, 1, INT32_MAX, &n, &why) < 0)
		return say(a, i, KLOG_KERR_INVALID_CONFIG, "Invalid value %s "
		    "for configuration min.insync.replicas: %s", v, why);
	if (!k->clustered && n != 1)
		return say(a, i, KLOG_KERR_POLICY_VIOLATION, "a standalone "
		    "broker's topics have one replica: min.insync.replicas "
		    "is 1");
	*min_insync = (int)n;
	return KLOG_KERR_NONE;
}

/* A numeric config, taken at the broker's value only. */
static int16_t
take_number(klog_kafka_t *k, answers_t *a, uint32_t i, int c, const char *v)
{
	const char *why;
	int64_t n, have = broker_value(k, c);

	if (klog_parse_i64(v, -1, INT64_MAX, &n, &why) < 0)
		return say(a, i, KLOG_KERR_INVALID_CONFIG, "Invalid value %s "
		    "for configuration %s: %s", v, tconfigs[c].name, why);
	if (n == have)
		return KLOG_KERR_NONE;
	return say(a, i, KLOG_KERR_POLICY_VIOLATION, "klog sets %s for the "
	    "whole broker, not per topic: klog-serve %s, now %" PRId64,
	    tconfigs[c].name, tconfigs[c].option, have);
}

/* Topic t's configs, answer i refusing the first one klog cannot give
 * it; *min_insync from min.insync.replicas. */
static int16_t
take_configs(klog_kafka_t *k, answers_t *a, uint32_t i,
    const klog_kcreate_topic_t *t, int *min_insync)
{
	char v[VALUE_MAX];
	int16_t e = KLOG_KERR_NONE;

	for (uint32_t j = 0; j < t->nconfigs && e == KLOG_KERR_NONE; j++) {
		const klog_kconfig_t *cf = &t->configs[j];
		int c = tconfig_find(cf->name);

		if (c < 0)
			return say(a, i, KLOG_KERR_INVALID_CONFIG, "Unknown "
			    "topic config name: %.*s", (int)cf->name.len,
			    cf->name.p);
		if (cf->value.p == NULL)
			return say(a, i, KLOG_KERR_INVALID_REQUEST, "Null value "
			    "not supported for topic configs: %s",
			    tconfigs[c].name);
		if (klog_str_cstr(cf->value, v, sizeof(v)) < 0)
			return say(a, i, KLOG_KERR_INVALID_CONFIG, "Invalid "
			    "value for configuration %s", tconfigs[c].name);
		if (c == CFG_CLEANUP_POLICY)
			e = take_cleanup(a, i, v);
		else if (c == CFG_MIN_INSYNC)
			e = take_min_insync(k, a, i, v, min_insync);
		else
			e = take_number(k, a, i, c, v);
	}
	return e;
}

/* ---- CreateTopics ---- */

/* What Kafka checks before the topic itself: the partition count and
 * replication factor (-1: the defaults, filled in), manual assignments. */
static int16_t
create_shape(klog_kafka_t *k, answers_t *a, uint32_t i,
    const klog_kcreate_topic_t *t, int32_t *parts, int *rf)
{
	if (t->nassign > 0)
		return say(a, i, KLOG_KERR_INVALID_REQUEST, "klog places "
		    "replicas itself: give num_partitions and "
		    "replication_factor, not an assignment");
	*parts = t->partitions == -1 ? k->cfg.default_partitions :
	    t->partitions;
	*rf = t->rf == -1 ? 1 : t->rf;
	if (*parts <= 0)
		return say(a, i, KLOG_KERR_INVALID_PARTITIONS, "Number of "
		    "partitions must be larger than 0, or -1 to use the "
		    "default value.");
	if (*rf <= 0)
		return say(a, i, KLOG_KERR_INVALID_REPLICATION_FACTOR,
		    "Replication factor must be larger than 0, or -1 to use "
		    "the default value.");
	if (!k->clustered && *rf != 1)
		return say(a, i, KLOG_KERR_INVALID_REPLICATION_FACTOR,
		    "Replication factor: %d larger than available brokers: "
		    "1.", *rf);
	return KLOG_KERR_NONE;
}

static int16_t
create_one(klog_kafka_t *k, answers_t *a, uint32_t i, const klog_kcreate_t *c)
{
	const klog_kcreate_topic_t *t = &c->topics[i];
	char name[KLOG_TOPIC_MAX + 1];
	klog_err_t err = { 0, "" };
	int32_t parts = 0;
	int rf = 1, min_insync = 1;
	int16_t e;

	if (a->dup[i] != 0)
		return say(a, i, KLOG_KERR_INVALID_REQUEST, "Found multiple "
		    "entries for this topic.");
	if (!kafka_may_create(k, t->name))
		return say(a, i, KLOG_KERR_TOPIC_AUTHORIZATION_FAILED,
		    "Authorization failed.");
	if ((e = create_shape(k, a, i, t, &parts, &rf)) != KLOG_KERR_NONE ||
	    (e = take_configs(k, a, i, t, &min_insync)) != KLOG_KERR_NONE)
		return e;
	if (!k->clustered)
		return local_admin(k, a, i, KLOG_API_CREATE_TOPIC, t->name,
		    parts, c->validate_only);
	if (topic_cstr(a, i, t->name, name) < 0)
		return KLOG_KERR_INVALID_TOPIC;
	e = k->cluster.create_topic(k->cluster.arg, name, parts, rf,
	    min_insync, c->validate_only, &err);
	return said(a, i, e, &err);
}

void
kafka_create_topics(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_kcreate_t c;
	answers_t a;

	if (klog_kwadmin_create_topics(r, &c, &k->parts, &k->parts2) < 0) {
		k->bad = "a CreateTopics request that does not parse";
		return;
	}
	if (c.ntopics > MAX_TOPICS) {
		k->bad = "a CreateTopics request of over 10000 topics";
		return;
	}
	if (answers_new(&a, c.topics, sizeof(*c.topics), c.ntopics) < 0) {
		klog_outq_buf(k->q)->failed = 1;
		return;
	}
	for (uint32_t i = 0; i < c.ntopics; i++)
		if (a.dup[i] != 2)
			(void)create_one(k, &a, i, &c);
	answers_send(k, r, &a);
	answers_free(&a);
}

/* ---- DeleteTopics ---- */

static int16_t
delete_one(klog_kafka_t *k, answers_t *a, uint32_t i, klog_str_t topic)
{
	char name[KLOG_TOPIC_MAX + 1];
	klog_err_t err = { 0, "" };

	if (!kafka_may(k, KLOG_ACL_DELETE, KLOG_ACL_TOPIC, topic))
		return say(a, i, KLOG_KERR_TOPIC_AUTHORIZATION_FAILED,
		    "Authorization failed.");
	if (!k->clustered)
		return local_admin(k, a, i, KLOG_API_DELETE_TOPIC, topic, 0, 0);
	if (topic_cstr(a, i, topic, name) < 0)
		return KLOG_KERR_INVALID_TOPIC;
	return said(a, i, k->cluster.delete_topic(k->cluster.arg, name, &err),
	    &err);
}

void
kafka_delete_topics(klog_kafka_t *k, const klog_kreq_t *r)
{
	const klog_str_t *names;
	int32_t timeout_ms;
	answers_t a;
	uint32_t n;

	if (klog_kwadmin_delete_topics(r, &k->parts, &n, &timeout_ms) < 0) {
		k->bad = "a DeleteTopics request that does not parse";
		return;
	}
	if (n > MAX_TOPICS) {
		k->bad = "a DeleteTopics request of over 10000 topics";
		return;
	}
	names = k->parts.p;
	if (answers_new(&a, names, sizeof(*names), n) < 0) {
		klog_outq_buf(k->q)->failed = 1;
		return;
	}
	/* Kafka deletes a name given twice once. */
	for (uint32_t i = 0; i < n; i++)
		if (a.dup[i] != 2)
			(void)delete_one(k, &a, i, names[i]);
	answers_send(k, r, &a);
	answers_free(&a);
}

/* ---- CreatePartitions ---- */

/* A standalone broker's topic grown to count partitions, with Kafka's
 * answers for a count it has or is past. */
static int16_t
grow_local(klog_kafka_t *k, answers_t *a, uint32_t i,
    const klog_kgrow_topic_t *t, int dry)
{
	int16_t wire;
	int have;

	wire = klog_core_topic_meta(k->core, t->name, &have);
	if (wire == KLOG_WIRE_UNKNOWN_TOPIC)
		return say(a, i, KLOG_KERR_UNKNOWN_TOPIC_OR_PARTITION, "The "
		    "topic '%.*s' does not exist.", (int)t->name.len,
		    t->name.p);
	if (wire != KLOG_WIRE_NONE)
		return say(a, i, admin_error(wire), "%s",
		    klog_wire_error_name(wire));
	if (t->count == have)
		return say(a, i, KLOG_KERR_INVALID_PARTITIONS, "Topic already "
		    "has %d partitions.", have);
	if (t->count < have)
		return say(a, i, KLOG_KERR_INVALID_PARTITIONS, "Topic currently "
		    "has %d partitions, which is higher than the requested "
		    "%d.", have, (int)t->count);
	return local_admin(k, a, i, KLOG_API_ALTER_TOPIC, t->name, t->count,
	    dry);
}

static int16_t
grow_one(klog_kafka_t *k, answers_t *a, uint32_t i, const klog_kgrow_t *g)
{
	const klog_kgrow_topic_t *t = &g->topics[i];
	char name[KLOG_TOPIC_MAX + 1];
	klog_err_t err = { 0, "" };

	if (a->dup[i] != 0)
		return say(a, i, KLOG_KERR_INVALID_REQUEST, "Duplicate topic "
		    "in request.");
	if (!kafka_may(k, KLOG_ACL_ALTER, KLOG_ACL_TOPIC, t->name))
		return say(a, i, KLOG_KERR_TOPIC_AUTHORIZATION_FAILED,
		    "Authorization failed.");
	if (t->nassign > 0)
		return say(a, i, KLOG_KERR_INVALID_REQUEST, "klog places new "
		    "partitions itself: give no assignment");
	if (!k->clustered)
		return grow_local(k, a, i, t, g->validate_only);
	if (topic_cstr(a, i, t->name, name) < 0)
		return KLOG_KERR_INVALID_TOPIC;
	return said(a, i, k->cluster.grow_topic(k->cluster.arg, name,
	    (int)t->count, g->validate_only, &err), &err);
}

void
kafka_create_partitions(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_kgrow_t g;
	answers_t a;

	if (klog_kwadmin_create_partitions(r, &g, &k->parts) < 0) {
		k->bad = "a CreatePartitions request that does not parse";
		return;
	}
	if (g.ntopics > MAX_TOPICS) {
		k->bad = "a CreatePartitions request of over 10000 topics";
		return;
	}
	if (answers_new(&a, g.topics, sizeof(*g.topics), g.ntopics) < 0) {
		klog_outq_buf(k->q)->failed = 1;
		return;
	}
	for (uint32_t i = 0; i < g.ntopics; i++)
		if (a.dup[i] != 2)
			(void)grow_one(k, &a, i, &g);
	answers_send(k, r, &a);
	answers_free(&a);
}

/* ---- DescribeConfigs ---- */

/* One resource's answer being built. */
typedef struct described {
	const klog_kdescribe_res_t *res;
	klog_kconfig_result_t *out;
	klog_kconfig_entry_t *entries;   /* room for MAX_ENTRIES */
	char *msg;                       /* MSG_MAX bytes */
} described_t;

static int
wanted(const klog_kdescribe_res_t *res, const char *name)
{
	if (res->nkeys < 0)
		return 1;
	for (int32_t i = 0; i < res->nkeys; i++)
		if (strlen(name) == res->keys[i].len &&
		    memcmp(name, res->keys[i].p, res->keys[i].len) == 0)
			return 1;
	return 0;
}

/* An entry, read-only (klog has no AlterConfigs), if it was asked for;
 * its synonym, when syn names one, the broker's setting of the same
 * value. */
static klog_kconfig_entry_t *
entry(described_t *d, const char *name, const char *value, int8_t source,
    const char *syn, int8_t syn_source)
{
	klog_kconfig_entry_t *e;

	if (!wanted(d->res, name) || d->out->nentries >= MAX_ENTRIES)
		return NULL;
	e = &d->entries[d->out->nentries++];
	memset(e, 0, sizeof(*e));
	e->v.name = name;
	snprintf(e->v.value, sizeof(e->v.value), "%s", value);
	e->v.source = source;
	e->read_only = 1;
	if (syn != NULL) {
		e->syn[0] = e->v;
		e->syn[0].name = syn;
		e->syn[0].source = syn_source;
		e->nsyn = 1;
	}
	return e;
}

static void
entry_num(described_t *d, const char *name, int64_t v, int8_t source,
    const char *syn)
{
	char s[KLOG_KCONFIG_VALUE_MAX];

	snprintf(s, sizeof(s), "%" PRId64, v);
	(void)entry(d, name, s, source, syn, source);
}

/* A topic's configs: its partitions, then the broker's settings under
 * the topic's names; min.insync.replicas its own in a cluster. */
static void
topic_entries(klog_kafka_t *k, described_t *d, const klog_kafka_tconf_t *tc)
{
	klog_kconfig_entry_t *e;

	entry_num(d, "num.partitions", tc->partitions,
	    KLOG_KSOURCE_DYNAMIC_TOPIC, NULL);
	for (int c = CFG_SEGMENT_BYTES; c <= CFG_MAX_MESSAGE_BYTES; c++)
		entry_num(d, tconfigs[c].name, broker_value(k, c),
		    KLOG_KSOURCE_STATIC_BROKER, tconfigs[c].broker_name);
	(void)entry(d, "cleanup.policy", "delete", KLOG_KSOURCE_DEFAULT,
	    "log.cleanup.policy", KLOG_KSOURCE_DEFAULT);
	if (!k->clustered) {
		(void)entry(d, "min.insync.replicas", "1",
		    KLOG_KSOURCE_DEFAULT, "min.insync.replicas",
		    KLOG_KSOURCE_DEFAULT);
		return;
	}
	e = entry(d, "min.insync.replicas", "", KLOG_KSOURCE_DYNAMIC_TOPIC,
	    "min.insync.replicas", KLOG_KSOURCE_DYNAMIC_TOPIC);
	if (e == NULL)
		return;
	snprintf(e->v.value, sizeof(e->v.value), "%d", tc->min_insync);
	e->syn[0] = e->v;
	e->syn[1] = (klog_kconfig_value_t){ "min.insync.replicas", "1",
	    KLOG_KSOURCE_DEFAULT };
	e->nsyn = 2;
}

static void __attribute__((format(printf, 3, 4)))
refuse_res(described_t *d, int16_t error, const char *fmt, ...)
{
	va_list ap;

	d->out->error = error;
	d->out->message = d->msg;
	va_start(ap, fmt);
	vsnprintf(d->msg, MSG_MAX, fmt, ap);
	va_end(ap);
}

/* A topic resource: DESCRIBE_CONFIGS on it, a valid name, a topic. */
static void
describe_topic(klog_kafka_t *k, described_t *d)
{
	char name[KLOG_TOPIC_MAX + 1];
	klog_kafka_tconf_t tc = { 0, 1, 1 };
	klog_err_t err = { 0, "" };
	int16_t e;

	if (!kafka_may(k, KLOG_ACL_DESCRIBE_CONFIGS, KLOG_ACL_TOPIC,
	    d->res->name)) {
		refuse_res(d, KLOG_KERR_TOPIC_AUTHORIZATION_FAILED, "%s",
		    "Authorization failed.");
		return;
	}
	if (klog_str_cstr(d->res->name, name, sizeof(name)) < 0 ||
	    klog_topic_validate(name, &err) < 0) {
		refuse_res(d, KLOG_KERR_INVALID_TOPIC, "%s", err.msg[0] ?
		    err.msg : "not a valid topic name");
		return;
	}
	if (k->clustered)
		e = k->cluster.topic_conf(k->cluster.arg, name, &tc, &err);
	else
		e = klog_kwire_error_from_wire(klog_core_topic_meta(k->core,
		    d->res->name, &tc.partitions));
	if (e == KLOG_KERR_UNKNOWN_TOPIC_OR_PARTITION)
		refuse_res(d, e, "The topic '%s' does not exist.", name);
	else if (e != KLOG_KERR_NONE)
		refuse_res(d, e, "%s", err.msg[0] ? err.msg :
		    klog_kwire_error_name(e));
	else
		topic_entries(k, d, &tc);
}

/* This broker (named by its id, or "" for the cluster's defaults): its
 * settings under Kafka's broker config names. */
static void
describe_broker(klog_kafka_t *k, described_t *d)
{
	char id[16], want[KLOG_TOPIC_MAX + 1];
	const char *auto_create = k->cfg.auto_create ? "true" : "false";
	const int8_t src = KLOG_KSOURCE_STATIC_BROKER;

	if (!kafka_may(k, KLOG_ACL_DESCRIBE_CONFIGS, KLOG_ACL_CLUSTER,
	    (klog_str_t){ KLOG_ACL_CLUSTER_NAME,
	    sizeof(KLOG_ACL_CLUSTER_NAME) - 1 })) {
		refuse_res(d, KLOG_KERR_CLUSTER_AUTHORIZATION_FAILED, "%s",
		    "Authorization failed.");
		return;
	}
	snprintf(id, sizeof(id), "%d", (int)k->cfg.broker_id);
	if (klog_str_cstr(d->res->name, want, sizeof(want)) < 0)
		want[0] = '?';
	if (want[0] != '\0' && strcmp(want, id) != 0) {
		refuse_res(d, KLOG_KERR_INVALID_REQUEST, "Unexpected broker "
		    "id, expected %s or empty string, but received %s", id,
		    want);
		return;
	}
	entry_num(d, "broker.id", k->cfg.broker_id, src, "broker.id");
	entry_num(d, "num.partitions", k->cfg.default_partitions, src,
	    "num.partitions");
	(void)entry(d, "default.replication.factor", "1", KLOG_KSOURCE_DEFAULT,
	    "default.replication.factor", KLOG_KSOURCE_DEFAULT);
	(void)entry(d, "auto.create.topics.enable", auto_create, src,
	    "auto.create.topics.enable", src);
	for (int c = CFG_SEGMENT_BYTES; c <= CFG_MAX_MESSAGE_BYTES; c++)
		entry_num(d, tconfigs[c].broker_name, broker_value(k, c), src,
		    tconfigs[c].broker_name);
	entry_num(d, "socket.request.max.bytes", k->cfg.max_request_bytes,
	    src, "socket.request.max.bytes");
}

static void
describe_one(klog_kafka_t *k, described_t *d)
{
	*d->out = (klog_kconfig_result_t){ .type = d->res->type,
	    .name = d->res->name, .entries = d->entries };
	if (d->res->type == KLOG_KRES_TOPIC)
		describe_topic(k, d);
	else if (d->res->type == KLOG_KRES_BROKER)
		describe_broker(k, d);
	else
		refuse_res(d, KLOG_KERR_INVALID_REQUEST, "Unsupported resource "
		    "type %d: klog describes topics (2) and brokers (4)",
		    (int)d->res->type);
}

void
kafka_describe_configs(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_kconfig_result_t *out = NULL;
	klog_kconfig_entry_t *entries = NULL;
	char (*msg)[MSG_MAX] = NULL;
	klog_kdescribe_t q;

	if (klog_kwadmin_describe_configs(r, &q, &k->parts, &k->parts2) < 0) {
		k->bad = "a DescribeConfigs request that does not parse";
		return;
	}
	if (q.nres > MAX_TOPICS) {
		k->bad = "a DescribeConfigs request of over 10000 resources";
		return;
	}
	out = calloc((size_t)q.nres + 1, sizeof(*out));
	entries = calloc(((size_t)q.nres + 1) * MAX_ENTRIES, sizeof(*entries));
	msg = calloc((size_t)q.nres + 1, sizeof(*msg));
	if (out == NULL || entries == NULL || msg == NULL) {
		klog_outq_buf(k->q)->failed = 1;
		goto out;
	}
	for (uint32_t i = 0; i < q.nres; i++) {
		described_t d = { &q.res[i], &out[i],
		    entries + (size_t)i * MAX_ENTRIES, msg[i] };

		describe_one(k, &d);
	}
	klog_kwadmin_describe_configs_resp(klog_outq_buf(k->q), r, q.synonyms,
	    out, q.nres);
out:
	free(out);
	free(entries);
	free(msg);
}

/* ---- InitProducerId ---- */

/* Log a refusal or a failure of InitProducerId, a line a second. */
static void
pid_say(klog_kafka_t *k, const klog_kreq_t *r, int level, const char *fmt,
    ...)
{
	const char *sw = klog_conn_auth(k->conn)->software;
	int64_t now = klog_clock_mono_ns();
	char id[64], why[256];
	va_list ap;

	if (k->pid_said_ns != 0 && now - k->pid_said_ns < NS_PER_S)
		return;
	k->pid_said_ns = now;
	if (klog_str_cstr(r->client_id, id, sizeof(id)) < 0)
		snprintf(id, sizeof(id), "?");
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	klog_logger_say(&k->cfg.log, level, "Kafka listener: InitProducerId "
	    "from client id \"%s\"%s%s%s: %s", id, sw[0] ? " (" : "", sw,
	    sw[0] ? ")" : "", why);
}

/* A producer id and epoch (the core's, idem.h); the answer's error. */
static int16_t
grant(klog_kafka_t *k, const klog_kreq_t *r, int64_t *pid, int16_t *epoch)
{
	klog_err_t err;
	int rc;

	if ((rc = klog_core_producer_id(k->core, pid, epoch, &err)) == 0)
		return KLOG_KERR_NONE;
	if (rc == -KLOG_EINVAL)
		return KLOG_KERR_INVALID_REQUEST;
	/* The next block is on its way (cluster/zkpids.h): clients ask
	 * again after a back-off, as from a coordinator that is loading. */
	if (rc == -KLOG_EBUSY) {
		pid_say(k, r, KLOG_LEVEL_INFO, "no producer id yet: %s",
		    klog_err_text(&err, rc));
		return KLOG_KERR_COORDINATOR_LOAD_IN_PROGRESS;
	}
	pid_say(k, r, KLOG_LEVEL_ERROR, "no producer id: %s",
	    klog_err_text(&err, rc));
	return KLOG_KERR_COORDINATOR_NOT_AVAILABLE;
}

void
kafka_init_producer_id(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_str_t txn;
	int32_t timeout_ms;
	int64_t pid;
	int16_t epoch, error;

	if (klog_kwadmin_init_producer_id(r, &txn, &timeout_ms, &pid,
	    &epoch) < 0) {
		k->bad = "an InitProducerId request that does not parse";
		return;
	}
	if (txn.p != NULL) {
		error = KLOG_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
		pid_say(k, r, KLOG_LEVEL_WARN, "refused (%s): klog has no "
		    "transactions; the client sets no transactional.id",
		    klog_kwire_error_name(error));
	} else if (!kafka_may_idempotent(k)) {
		error = KLOG_KERR_CLUSTER_AUTHORIZATION_FAILED;
	} else {
		error = grant(k, r, &pid, &epoch);
	}
	if (error != KLOG_KERR_NONE)
		pid = epoch = -1;
	klog_kwadmin_init_producer_id_resp(klog_outq_buf(k->q), r, error, pid,
	    epoch);
}
