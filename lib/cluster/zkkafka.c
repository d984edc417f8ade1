/*
 * The Kafka listener's cluster hooks over ZooKeeper; see zkkafka.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/parse.h"
#include "klog/cluster/zkkafka.h"
#include "klog/kafka/kwire.h"
#include "klog/zk/layout.h"
#include "klog/zk/rtadmin.h"
#include "klog/zk/rtopics.h"

struct klog_zkkafka {
	klog_zkkafka_config_t cfg;
	char *host;
	klog_zk_t *zk;
	klog_kafka_t *kafka;
	/* The live listeners, read again after a change. */
	int stale;
	klog_kmeta_broker_t *brokers;
	char **hosts;
	size_t nbrokers;
	klog_zk_list_t topics;
	klog_kafka_pmeta_t *parts;
	size_t parts_cap;
	uint32_t seed;               /* spreads auto-created topics' leaders */
};

static void
say(klog_zkkafka_t *zkk, int level, const char *what, const klog_err_t *err,
    int rc)
{
	klog_logger_say(&zkk->cfg.log, level, "zookeeper: Kafka listener: %s: "
	    "%s", what, klog_err_text(err, rc));
}

static void
drop_brokers(klog_zkkafka_t *zkk)
{
	for (size_t i = 0; i < zkk->nbrokers; i++)
		free(zkk->hosts[i]);
	free(zkk->hosts);
	free(zkk->brokers);
	zkk->hosts = NULL;
	zkk->brokers = NULL;
	zkk->nbrokers = 0;
}

/* One listener's node into slot i: 1 if it was taken, 0 if skipped. */
static int
read_broker(klog_zkkafka_t *zkk, const char *name, size_t i)
{
	char path[KLOG_ZK_PATH_MAX], host[256], port[16], *data;
	klog_err_t err = { 0 };
	const char *why;
	int64_t id;
	size_t len;

	if (klog_parse_i64(name, 0, INT32_MAX, &id, &why) < 0)
		return 0;
	snprintf(path, sizeof(path), KLOG_ZKKAFKA_BROKERS "/%s", name);
	if (klog_zk_get(zkk->zk, path, 0, &data, &len, NULL, &err) < 0)
		return 0;
	if (klog_parse_hostport(data, "", "", host, sizeof(host), port,
	    sizeof(port), &why) < 0 || host[0] == '\0' || port[0] == '\0' ||
	    (zkk->hosts[i] = strdup(host)) == NULL) {
		free(data);
		return 0;
	}
	free(data);
	zkk->brokers[i] = (klog_kmeta_broker_t){ (int32_t)id,
	    { zkk->hosts[i], (uint16_t)strlen(host) }, atoi(port) };
	return 1;
}

/* Ascending ids: the children are sorted as strings. */
static int
by_id(const void *a, const void *b)
{
	const klog_kmeta_broker_t *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int
read_brokers(klog_zkkafka_t *zkk)
{
	klog_zk_list_t l = { 0 };
	klog_err_t err = { 0 };
	size_t n = 0;
	int rc;

	drop_brokers(zkk);
	if ((rc = klog_zk_children(zkk->zk, KLOG_ZKKAFKA_BROKERS, 1, &l,
	    &err)) < 0) {
		say(zkk, KLOG_LEVEL_WARN, "listing the listeners", &err, rc);
		return rc;
	}
	zkk->brokers = calloc(l.n + 1, sizeof(*zkk->brokers));
	zkk->hosts = calloc(l.n + 1, sizeof(*zkk->hosts));
	if (zkk->brokers == NULL || zkk->hosts == NULL) {
		klog_zk_list_free(&l);
		drop_brokers(zkk);
		return -KLOG_ENOMEM;
	}
	for (size_t i = 0; i < l.n; i++)
		n += (size_t)read_broker(zkk, l.names[i], n);
	zkk->nbrokers = n;
	qsort(zkk->brokers, n, sizeof(*zkk->brokers), by_id);
	/* hosts[] stays in read order: it only owns the strings. */
	klog_zk_list_free(&l);
	zkk->stale = 0;
	return 0;
}

static int
brokers(void *arg, const klog_kmeta_broker_t **out, size_t *n)
{
	klog_zkkafka_t *zkk = arg;
	int rc;

	if (zkk->stale && (rc = read_brokers(zkk)) < 0)
		return rc;
	*out = zkk->brokers;
	*n = zkk->nbrokers;
	return 0;
}

static const klog_kmeta_broker_t *
find_broker(klog_zkkafka_t *zkk, int32_t id)
{
	for (size_t i = 0; i < zkk->nbrokers; i++)
		if (zkk->brokers[i].id == id)
			return &zkk->brokers[i];
	return NULL;
}

static int
topics(void *arg, char *const **names, size_t *n)
{
	klog_zkkafka_t *zkk = arg;
	klog_err_t err = { 0 };
	int rc;

	klog_zk_list_free(&zkk->topics);
	if ((rc = klog_rtopics_list(zkk->zk, 0, &zkk->topics, &err)) < 0)
		return rc;
	*names = zkk->topics.names;
	*n = zkk->topics.n;
	return 0;
}

/* Partition p of t: its replicas, live leader and isr. */
static void
read_part(klog_zkkafka_t *zkk, const char *topic, const klog_rtopic_t *t,
    int p, klog_kafka_pmeta_t *pm)
{
	klog_err_t err = { 0 };
	klog_rstate_t st;
	int32_t leader = -1;

	memset(pm, 0, sizeof(*pm));
	pm->nreplicas = (uint32_t)t->rf;
	memcpy(pm->replicas, t->replicas + (size_t)p * (size_t)t->rf,
	    (size_t)t->rf * sizeof(int32_t));
	if (klog_rtopics_state(zkk->zk, topic, p, 0, &st, &err) == 0) {
		pm->nisr = (uint32_t)st.nisr;
		memcpy(pm->isr, st.isr, (size_t)st.nisr * sizeof(int32_t));
	}
	if (klog_rtopics_leader(zkk->zk, topic, p, 0, &leader, &err) < 0 ||
	    find_broker(zkk, leader) == NULL)
		leader = -1;
	pm->leader = leader;
	pm->error = leader < 0 ? KLOG_KERR_LEADER_NOT_AVAILABLE :
	    KLOG_KERR_NONE;
}

static int
topic(void *arg, const char *name, int create,
    const klog_kafka_pmeta_t **parts, uint32_t *n)
{
	klog_zkkafka_t *zkk = arg;
	klog_err_t err = { 0 };
	klog_rtopic_t t = { 0 };
	int rc;

	if (zkk->stale && (rc = read_brokers(zkk)) < 0)
		return rc;
	rc = klog_rtopics_read(zkk->zk, name, 0, &t, &err);
	if (rc == -KLOG_ENOENT && create) {
		rc = klog_rtopics_create_live(zkk->zk, name,
		    zkk->cfg.default_partitions, 1, 1, zkk->seed++, &t, &err);
		if (rc == 0)
			klog_logger_say(&zkk->cfg.log, KLOG_LEVEL_INFO,
			    "Kafka listener: created replicated topic \"%s\" "
			    "with %d partitions", name,
			    zkk->cfg.default_partitions);
		klog_rtopic_free(&t);
		rc = klog_rtopics_read(zkk->zk, name, 0, &t, &err);
	}
	if (rc < 0)
		return rc == -KLOG_ENOENT ? -KLOG_ENOTOPIC : rc;
	if (klog_buf_grow((void **)&zkk->parts, &zkk->parts_cap,
	    ((size_t)t.nparts + 1) * sizeof(*zkk->parts)) < 0) {
		klog_rtopic_free(&t);
		return -KLOG_ENOMEM;
	}
	for (int p = 0; p < t.nparts; p++)
		read_part(zkk, name, &t, p, &zkk->parts[p]);
	*parts = zkk->parts;
	*n = (uint32_t)t.nparts;
	klog_rtopic_free(&t);
	return 0;
}

/* FNV-1a: any broker computes the same from the same set. */
static uint32_t
hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static int
coordinator(void *arg, const char *group, klog_kmeta_broker_t *out)
{
	klog_zkkafka_t *zkk = arg;
	int rc;

	if (zkk->stale && (rc = read_brokers(zkk)) < 0)
		return rc;
	if (zkk->nbrokers == 0)
		return -KLOG_ENOENT;
	*out = zkk->brokers[hash(group) % zkk->nbrokers];
	return 0;
}

static int
commit(void *arg, const char *group, const char *topic_name,
    int32_t partition, int64_t offset)
{
	klog_zkkafka_t *zkk = arg;
	klog_err_t err = { 0 };
	int rc;

	rc = klog_layout_offset_commit(zkk->zk, group, topic_name,
	    KLOG_LAYOUT_NUMBERED, partition, offset, &err);
	if (rc < 0)
		say(zkk, KLOG_LEVEL_WARN, "committing an offset", &err, rc);
	return rc;
}

static int
committed(void *arg, const char *group, const char *topic_name,
    int32_t partition, int64_t *offset)
{
	klog_zkkafka_t *zkk = arg;
	klog_err_t err = { 0 };

	return klog_layout_offset_read(zkk->zk, group, topic_name,
	    KLOG_LAYOUT_NUMBERED, partition, offset, &err);
}

/* ---- topic administration (kafka.h's hooks) ---- */

/* A ZooKeeper operation's failure as Kafka's error. */
static int16_t
admin_error(int rc)
{
	switch (rc) {
	case -KLOG_ENOTOPIC:
	case -KLOG_ENOENT:
		return KLOG_KERR_UNKNOWN_TOPIC_OR_PARTITION;
	case -KLOG_ETOPIC:
		return KLOG_KERR_INVALID_TOPIC;
	case -KLOG_EEXIST:
		return KLOG_KERR_TOPIC_ALREADY_EXISTS;
	case -KLOG_EINVAL:
	case -KLOG_ETOOBIG:
		return KLOG_KERR_INVALID_PARTITIONS;
	case -KLOG_ECONN:
	case -KLOG_ETIMEDOUT:
		return KLOG_KERR_REQUEST_TIMED_OUT;
	default:
		return KLOG_KERR_UNKNOWN;
	}
}

/* The live brokers' ids, ascending (as klog-group -Z create-topic places
 * replicas over them); *ids the caller's to free. */
static int
live_ids(klog_zkkafka_t *zkk, int32_t **ids, size_t *n, klog_err_t *err)
{
	klog_layout_broker_t *brs = NULL;
	int rc;

	*ids = NULL;
	if ((rc = klog_layout_brokers(zkk->zk, 0, &brs, n, err)) < 0)
		return rc;
	if ((*ids = calloc(*n + 1, sizeof(**ids))) == NULL) {
		free(brs);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < *n; i++)
		(*ids)[i] = brs[i].id;
	free(brs);
	return 0;
}

/* Whether rf replicas fit the live brokers: Kafka's error if not. */
static int16_t
check_rf(klog_zkkafka_t *zkk, int rf, int32_t **ids, size_t *n,
    klog_err_t *err)
{
	int rc;

	if ((rc = live_ids(zkk, ids, n, err)) < 0)
		return admin_error(rc);
	if (rf >= 1 && (size_t)rf <= *n && rf <= KLOG_RTOPICS_MAX_REPLICAS)
		return KLOG_KERR_NONE;
	klog_err_set(err, -KLOG_EINVAL, "Replication factor: %d larger than "
	    "available brokers: %zu.", rf, *n);
	return KLOG_KERR_INVALID_REPLICATION_FACTOR;
}

static int16_t
create_topic(void *arg, const char *name, int nparts, int rf, int min_insync,
    int dry, klog_err_t *err)
{
	klog_zkkafka_t *zkk = arg;
	klog_rtopic_t t = { 0 };
	int32_t *ids = NULL;
	size_t n = 0;
	int16_t e;
	int rc;

	if (nparts < 1 || nparts > KLOG_RTOPICS_MAX_PARTITIONS) {
		klog_err_set(err, -KLOG_EINVAL, "partitions: %d not in [1, %d]",
		    nparts, KLOG_RTOPICS_MAX_PARTITIONS);
		return KLOG_KERR_INVALID_PARTITIONS;
	}
	if ((e = check_rf(zkk, rf, &ids, &n, err)) != KLOG_KERR_NONE)
		goto out;
	if (min_insync > rf) {
		klog_err_set(err, -KLOG_EINVAL, "min.insync.replicas: %d "
		    "is more than the replication factor, %d", min_insync, rf);
		e = KLOG_KERR_INVALID_CONFIG;
		goto out;
	}
	rc = klog_rtopic_assign(ids, n, nparts, rf, min_insync, zkk->seed++,
	    &t, err);
	if (rc == 0)
		rc = dry ? klog_rtopics_can_create(zkk->zk, name, err) :
		    klog_rtopics_create(zkk->zk, name, &t, err);
	e = rc < 0 ? admin_error(rc) : KLOG_KERR_NONE;
	if (rc == 0 && !dry)
		klog_logger_say(&zkk->cfg.log, KLOG_LEVEL_INFO, "Kafka listener: "
		    "created replicated topic \"%s\": %d partitions, %d "
		    "replicas each", name, nparts, rf);
out:
	klog_rtopic_free(&t);
	free(ids);
	return e;
}

static int16_t
grow_topic(void *arg, const char *name, int nparts, int dry, klog_err_t *err)
{
	klog_zkkafka_t *zkk = arg;
	klog_rtopic_t t = { 0 }, grown = { 0 };
	int32_t *ids = NULL;
	size_t n = 0;
	int16_t e;
	int rc;

	if ((rc = klog_rtopics_read(zkk->zk, name, 0, &t, err)) < 0)
		return admin_error(rc);
	e = KLOG_KERR_INVALID_PARTITIONS;
	if (nparts == t.nparts) {
		klog_err_set(err, -KLOG_EINVAL, "Topic already has %d "
		    "partitions.", t.nparts);
		goto out;
	}
	if (nparts < t.nparts) {
		klog_err_set(err, -KLOG_EINVAL, "Topic currently has %d "
		    "partitions, which is higher than the requested %d.",
		    t.nparts, nparts);
		goto out;
	}
	if ((rc = klog_rtadmin_is_marked(zkk->zk, name, err)) != 0) {
		e = rc < 0 ? admin_error(rc) : KLOG_KERR_INVALID_TOPIC;
		if (rc > 0)
			klog_err_set(err, -KLOG_EBUSY, "topic \"%s\" is marked "
			    "for deletion", name);
		goto out;
	}
	if ((e = check_rf(zkk, t.rf, &ids, &n, err)) != KLOG_KERR_NONE)
		goto out;
	rc = dry ? klog_rtadmin_grow(&t, ids, n, nparts, &grown, err) :
	    klog_rtadmin_alter(zkk->zk, name, nparts, &grown, err);
	e = rc < 0 ? admin_error(rc) : KLOG_KERR_NONE;
out:
	klog_rtopic_free(&t);
	klog_rtopic_free(&grown);
	free(ids);
	return e;
}

static int16_t
delete_topic(void *arg, const char *name, klog_err_t *err)
{
	klog_zkkafka_t *zkk = arg;
	int already, rc;

	if ((rc = klog_rtadmin_delete(zkk->zk, name, &already, err)) < 0)
		return admin_error(rc);
	if (!already)
		klog_logger_say(&zkk->cfg.log, KLOG_LEVEL_INFO, "Kafka listener: "
		    "topic \"%s\" marked for deletion", name);
	return KLOG_KERR_NONE;
}

static int16_t
topic_conf(void *arg, const char *name, klog_kafka_tconf_t *out,
    klog_err_t *err)
{
	klog_zkkafka_t *zkk = arg;
	klog_rtopic_t t;
	int rc;

	if ((rc = klog_rtopics_read(zkk->zk, name, 0, &t, err)) < 0)
		return admin_error(rc);
	*out = (klog_kafka_tconf_t){ t.nparts, t.rf, t.min_insync };
	klog_rtopic_free(&t);
	return KLOG_KERR_NONE;
}

/* ---- a group's offsets ---- */

/* One topic's committed offsets under /consumers/<group>/offsets: the
 * numbered partitions Kafka groups commit (klog's own groups' <b>-<p>
 * are not theirs). */
static int
topic_offsets(klog_zkkafka_t *zkk, const char *group, const char *topic,
    klog_kafka_offset_fn *fn, void *fnarg, klog_err_t *err)
{
	char path[KLOG_ZK_PATH_MAX];
	klog_zk_list_t parts = { 0 };
	int32_t b, p;
	int64_t off;
	int rc;

	if ((rc = klog_layout_offset_path(path, sizeof(path), group, topic,
	    -1, -1)) < 0 || (rc = klog_zk_children(zkk->zk, path, 0, &parts,
	    err)) < 0)
		return rc == -KLOG_ENOENT ? 0 : rc;
	klog_layout_sort_names(parts.names, parts.n);
	for (size_t i = 0; i < parts.n && rc >= 0; i++) {
		if (klog_layout_part_parse(parts.names[i], &b, &p) < 0 ||
		    b != KLOG_LAYOUT_NUMBERED)
			continue;
		rc = klog_layout_offset_read(zkk->zk, group, topic,
		    KLOG_LAYOUT_NUMBERED, p, &off, err);
		if (rc == 0)
			fn(fnarg, topic, p, off);
		else if (rc == -KLOG_ENOENT)
			rc = 0;
	}
	klog_zk_list_free(&parts);
	return rc < 0 ? rc : 0;
}

static int
committed_all(void *arg, const char *group, klog_kafka_offset_fn *fn,
    void *fnarg)
{
	klog_zkkafka_t *zkk = arg;
	char path[KLOG_ZK_PATH_MAX];
	klog_zk_list_t topics = { 0 };
	klog_err_t err = { 0 };
	int rc;

	if ((rc = klog_layout_offset_path(path, sizeof(path), group, NULL,
	    -1, -1)) < 0)
		return rc;
	if ((rc = klog_zk_children(zkk->zk, path, 0, &topics, &err)) < 0)
		return rc == -KLOG_ENOENT ? 0 : rc;
	klog_layout_sort_names(topics.names, topics.n);
	for (size_t i = 0; i < topics.n && rc >= 0; i++)
		rc = topic_offsets(zkk, group, topics.names[i], fn, fnarg,
		    &err);
	if (rc < 0)
		say(zkk, KLOG_LEVEL_WARN, "reading a group's offsets", &err,
		    rc);
	klog_zk_list_free(&topics);
	return rc;
}

int
klog_zkkafka_register(klog_zkkafka_t *zkk, int wait_ms, klog_err_t *err)
{
	char path[KLOG_ZK_PATH_MAX], data[300];
	int rc;

	snprintf(path, sizeof(path), KLOG_ZKKAFKA_BROKERS "/%d",
	    (int)zkk->cfg.broker_id);
	snprintf(data, sizeof(data), "%s:%d", zkk->host, zkk->cfg.port);
	if ((rc = klog_zk_mkdirs(zkk->zk, KLOG_ZKKAFKA_BROKERS, err)) < 0)
		return rc;
	rc = klog_zk_create_ephemeral(zkk->zk, path, data, strlen(data),
	    wait_ms, err);
	zkk->stale = 1;
	return rc;
}

int
klog_zkkafka_event(klog_zkkafka_t *zkk, const klog_zk_event_t *ev)
{
	if (zkk == NULL)
		return 0;
	switch (ev->type) {
	case KLOG_ZK_EVENT_CHILD:
		if (strcmp(ev->path, KLOG_ZKKAFKA_BROKERS) != 0)
			return 0;
		zkk->stale = 1;
		return 1;
	case KLOG_ZK_EVENT_SESSION:
	case KLOG_ZK_EVENT_OVERFLOW:
		zkk->stale = 1;   /* the watch went with the session */
		return 0;
	default:
		return 0;
	}
}

int
klog_zkkafka_new(klog_zk_t *zk, klog_kafka_t *kafka,
    const klog_zkkafka_config_t *cfg, klog_zkkafka_t **out)
{
	klog_zkkafka_t *zkk = calloc(1, sizeof(*zkk));
	klog_kafka_cluster_t hooks;

	*out = NULL;
	if (zkk == NULL || (zkk->host = strdup(cfg->host)) == NULL) {
		free(zkk);
		return -KLOG_ENOMEM;
	}
	zkk->cfg = *cfg;
	zkk->cfg.host = zkk->host;
	zkk->zk = zk;
	zkk->kafka = kafka;
	zkk->stale = 1;
	zkk->seed = (uint32_t)cfg->broker_id * 2654435761u;
	hooks = (klog_kafka_cluster_t){ zkk, brokers, topics, topic,
	    coordinator, commit, committed, committed_all, create_topic,
	    grow_topic, delete_topic, topic_conf };
	klog_kafka_set_cluster(kafka, &hooks);
	*out = zkk;
	return 0;
}

void
klog_zkkafka_free(klog_zkkafka_t *zkk)
{
	if (zkk == NULL)
		return;
	klog_kafka_set_cluster(zkk->kafka, NULL);
	drop_brokers(zkk);
	klog_zk_list_free(&zkk->topics);
	free(zkk->parts);
	free(zkk->host);
	free(zkk);
}
