/*
 * The Kafka listener's Metadata (kafka_impl.h): a standalone broker's
 * topics from the core, each led by this broker, or a cluster's from its
 * hooks; a topic named that does not exist created when auto-creation is
 * on, as Kafka's auto.create.topics.enable does, and the request allows it
 * (v4+); the operations the principal may do, when asked (v8).
 */
#include <stdlib.h>
#include <string.h>

#include "kafka_impl.h"
#include "klog/storage/names.h"


/* A topic's entry: its partitions, each led by this broker; a topic that
 * does not exist is created (create: it was named, and the request
 * allows it), as Kafka's auto.create.topics.enable does, when
 * auto-creation is on and the principal may create it (else
 * TOPIC_AUTHORIZATION_FAILED, as Kafka). */
static int
meta_topic(klog_kafka_t *k, klog_str_t name, int create,
    klog_kmeta_topic_t *mt, size_t *np)
{
	char topic[KLOG_TOPIC_MAX + 1];
	klog_err_t err;
	int parts = 0;

	*mt = (klog_kmeta_topic_t){ .name = name };
	mt->error = klog_kwire_error_from_wire(klog_core_topic_meta(k->core,
	    name, &parts));
	if (mt->error == KLOG_KERR_UNKNOWN_TOPIC_OR_PARTITION && create &&
	    k->cfg.auto_create && name.len <= KLOG_TOPIC_MAX &&
	    !kafka_may_create(k, name))
		mt->error = KLOG_KERR_TOPIC_AUTHORIZATION_FAILED;
	else if (mt->error == KLOG_KERR_UNKNOWN_TOPIC_OR_PARTITION && create &&
	    k->cfg.auto_create && name.len <= KLOG_TOPIC_MAX) {
		memcpy(topic, name.p, name.len);
		topic[name.len] = '\0';
		if (klog_core_create_topic(k->core, topic,
		    k->cfg.default_partitions, &err) == 0)
			mt->error = klog_kwire_error_from_wire(
			    klog_core_topic_meta(k->core, name, &parts));
		else
			mt->error = err.code == -KLOG_ETOPIC ?
			    KLOG_KERR_INVALID_TOPIC : KLOG_KERR_UNKNOWN;
	}
	if (mt->error != KLOG_KERR_NONE)
		parts = 0;
	if (klog_buf_grow((void **)&k->mparts, &k->mparts_cap,
	    (*np + (size_t)parts + 1) * sizeof(*k->mparts)) < 0)
		return -1;
	for (int p = 0; p < parts; p++)
		k->mparts[*np + (size_t)p] = (klog_kmeta_part_t){ 0, p,
		    k->cfg.broker_id, 1, 1, &k->cfg.broker_id,
		    &k->cfg.broker_id };
	mt->nparts = (uint32_t)parts;
	*np += (size_t)parts;
	return 0;
}

/* A topic named that the principal may not describe: its entry says
 * TOPIC_AUTHORIZATION_FAILED, and 1. */
static int
refused(klog_kafka_t *k, klog_str_t name, klog_kmeta_topic_t *mt)
{
	if (kafka_may(k, KLOG_ACL_DESCRIBE, KLOG_ACL_TOPIC, name))
		return 0;
	*mt = (klog_kmeta_topic_t){ .name = name,
	    .error = KLOG_KERR_TOPIC_AUTHORIZATION_FAILED };
	return 1;
}

static int16_t
cluster_error(int rc)
{
	switch (rc) {
	case -KLOG_ENOTOPIC:
	case -KLOG_ENOENT:
		return KLOG_KERR_UNKNOWN_TOPIC_OR_PARTITION;
	case -KLOG_ETOPIC:
	case -KLOG_EINVAL:
		return KLOG_KERR_INVALID_TOPIC;
	default:
		return KLOG_KERR_LEADER_NOT_AVAILABLE;  /* retriable */
	}
}

/* One topic of a cluster's Metadata: its partitions copied to k->pmeta
 * from *np on. */
static int
cluster_topic(klog_kafka_t *k, klog_str_t name, int create,
    klog_kmeta_topic_t *mt, size_t *np)
{
	char topic[KLOG_TOPIC_MAX + 1];
	const klog_kafka_pmeta_t *parts = NULL;
	uint32_t n = 0;
	int rc;

	*mt = (klog_kmeta_topic_t){ .name = name };
	if (klog_str_cstr(name, topic, sizeof(topic)) < 0) {
		mt->error = KLOG_KERR_INVALID_TOPIC;
		return 0;
	}
	rc = k->cluster.topic(k->cluster.arg, topic, create &&
	    k->cfg.auto_create && k->cfg.authz == NULL, &parts, &n);
	/* With ACLs, a topic is created only once it is known missing and
	 * the principal may create it. */
	if (rc == -KLOG_ENOTOPIC && create && k->cfg.auto_create &&
	    k->cfg.authz != NULL) {
		if (!kafka_may_create(k, name)) {
			mt->error = KLOG_KERR_TOPIC_AUTHORIZATION_FAILED;
			return 0;
		}
		rc = k->cluster.topic(k->cluster.arg, topic, 1, &parts, &n);
	}
	if (rc < 0) {
		mt->error = cluster_error(rc);
		return 0;
	}
	if (klog_buf_grow((void **)&k->pmeta, &k->pmeta_cap,
	    (*np + n + 1) * sizeof(*k->pmeta)) < 0)
		return -1;
	memcpy(k->pmeta + *np, parts, n * sizeof(*parts));
	mt->nparts = n;
	*np += n;
	return 0;
}

/* v8's authorized operations, when asked: each topic's but those refused
 * (Kafka leaves theirs unset), and the cluster's. */
static int32_t
meta_ops(klog_kafka_t *k, const klog_kmeta_req_t *m, size_t nt)
{
	for (size_t i = 0; i < nt; i++) {
		klog_kmeta_topic_t *t = &k->mtopics[i];

		t->ops = KLOG_KMETA_OPS_NONE;
		if (m->topic_ops &&
		    t->error != KLOG_KERR_TOPIC_AUTHORIZATION_FAILED)
			t->ops = kafka_ops(k, KLOG_ACL_TOPIC, t->name);
	}
	return m->cluster_ops ? kafka_ops(k, KLOG_ACL_CLUSTER,
	    (klog_str_t){ NULL, 0 }) : KLOG_KMETA_OPS_NONE;
}

/* Cluster mode: the brokers with Kafka listeners, each partition's leader
 * among them (clients send there, and ask again on NOT_LEADER). */
static void
cluster_metadata(klog_kafka_t *k, const klog_kreq_t *r,
    const klog_kmeta_req_t *m)
{
	klog_buf_t *out = klog_outq_buf(k->q);
	klog_kmeta_broker_t self = kafka_self(k);
	const klog_kmeta_broker_t *brokers = &self;
	char *const *tnames = NULL;
	size_t nb = 1, nt = m->n, np = 0, at = 0, shown = 0;
	int all = m->all;

	if (k->cluster.brokers(k->cluster.arg, &brokers, &nb) < 0 || nb == 0) {
		brokers = &self;
		nb = 1;
	}
	if (all && k->cluster.topics(k->cluster.arg, &tnames, &nt) < 0)
		nt = 0;
	if (klog_buf_grow((void **)&k->mtopics, &k->mtopics_cap,
	    (nt + 1) * sizeof(*k->mtopics)) < 0) {
		out->failed = 1;
		return;
	}
	for (size_t i = 0; i < nt; i++) {
		klog_str_t name = all ? (klog_str_t){ tnames[i],
		    (uint16_t)strlen(tnames[i]) } : m->names[i];

		if (all ? !kafka_sees(k, name) : refused(k, name, &k->mtopics[
		    shown])) {
			shown += !all;
			continue;
		}
		if (cluster_topic(k, name, !all && m->allow_create,
		    &k->mtopics[shown++], &np) < 0) {
			out->failed = 1;
			return;
		}
	}
	nt = shown;
	if (klog_buf_grow((void **)&k->mparts, &k->mparts_cap,
	    (np + 1) * sizeof(*k->mparts)) < 0) {
		out->failed = 1;
		return;
	}
	for (size_t i = 0; i < np; i++) {
		const klog_kafka_pmeta_t *pm = &k->pmeta[i];

		k->mparts[i] = (klog_kmeta_part_t){ pm->error, 0, pm->leader,
		    pm->nreplicas, pm->nisr, pm->replicas, pm->isr };
	}
	for (size_t i = 0; i < nt; i++) {
		k->mtopics[i].parts = k->mparts + at;
		for (uint32_t j = 0; j < k->mtopics[i].nparts; j++)
			k->mparts[at + j].id = (int32_t)j;
		at += k->mtopics[i].nparts;
	}
	klog_kwdata_metadata_resp(out, r->correlation, r->version,
	    &(klog_kmeta_t){ brokers, (uint32_t)nb, brokers[0].id,
	    meta_ops(k, m, nt), k->mtopics, (uint32_t)nt });
}

void
kafka_metadata(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_buf_t *out = klog_outq_buf(k->q);
	klog_kmeta_broker_t self = kafka_self(k);
	klog_kmeta_req_t m;
	size_t nt, np = 0, at = 0, shown = 0;
	int parts;

	if (klog_kwdata_metadata(r, &m, &k->parts) < 0) {
		k->bad = "a Metadata request that does not parse";
		return;
	}
	if (k->clustered) {
		cluster_metadata(k, r, &m);
		return;
	}
	nt = m.all ? klog_core_topic_count(k->core) : m.n;
	if (klog_buf_grow((void **)&k->mtopics, &k->mtopics_cap,
	    (nt + 1) * sizeof(*k->mtopics)) < 0) {
		out->failed = 1;
		return;
	}
	for (size_t i = 0; i < nt; i++) {
		klog_str_t name = m.all ? (klog_str_t){ NULL, 0 } : m.names[i];

		if (m.all) {
			const char *s = klog_core_topic_at(k->core, i, &parts);

			name = (klog_str_t){ s, (uint16_t)strlen(s) };
		}
		/* Of all topics, those it may not describe are left out;
		 * one named is answered, refused. */
		if (m.all ? !kafka_sees(k, name) : refused(k, name,
		    &k->mtopics[shown])) {
			shown += !m.all;
			continue;
		}
		if (meta_topic(k, name, !m.all && m.allow_create,
		    &k->mtopics[shown++], &np) < 0) {
			out->failed = 1;
			return;
		}
	}
	nt = shown;
	/* The partitions' array may have moved as it grew: point each
	 * topic at its share only now. */
	for (size_t i = 0; i < nt; i++) {
		k->mtopics[i].parts = k->mparts + at;
		at += k->mtopics[i].nparts;
	}
	klog_kwdata_metadata_resp(out, r->correlation, r->version,
	    &(klog_kmeta_t){ &self, 1, k->cfg.broker_id, meta_ops(k, &m, nt),
	    k->mtopics, (uint32_t)nt });
}
