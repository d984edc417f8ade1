/*
 * The Kafka listener's group APIs (kafka_impl.h): FindCoordinator, the
 * membership requests handed to the coordinator (coordinator.h), and the
 * committed offsets (koffsets.h).
 *
 * A JoinGroup or SyncGroup may be answered long after it came (when the
 * rest of the group has joined, or the leader has synced): its place on
 * the connection is a hold, as a parked fetch's is, and the coordinator's
 * callback fills it.  A connection that goes first cancels it.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_impl.h"

#define SESSION_MIN_MS 1000        /* Kafka's group.min.session.timeout.ms
	                              is 6 s; librdkafka's tests use less */
#define SESSION_MAX_MS 1800000     /* group.max.session.timeout.ms */
#define MAX_MEMBERS 1000
#define MAX_GROUPS 10000
#define GROUP_MAX 256              /* bytes of a group id, as a C string */

/* A join or sync waiting for its answer, in line on its connection. */
struct gwait {
	klog_outq_hold_t hold;     /* first: the output queue hands it back */
	klog_coordinator_wait_t w;
	klog_kafka_t *k;
	klog_conn_t *conn;
	int32_t corr;
	int answered;
};

klog_kmeta_broker_t
kafka_self(const klog_kafka_t *k)
{
	return (klog_kmeta_broker_t){ k->cfg.broker_id,
	    { k->adv_host, (uint16_t)strlen(k->adv_host) },
	    k->cfg.advertised_port };
}

static struct gwait *
gwait_of(klog_coordinator_wait_t *w)
{
	return (struct gwait *)((char *)w - offsetof(struct gwait, w));
}

static void
gwait_done(klog_outq_hold_t *h)
{
	struct gwait *gw = (struct gwait *)h;

	if (!gw->answered)
		klog_coordinator_cancel(gw->k->groups, &gw->w);
	klog_outq_free(&gw->hold.q);
	free(gw);
}

/* A hold in line on the connection for r's answer; NULL when out of
 * memory (the connection is then closed). */
static struct gwait *
gwait_new(klog_kafka_t *k, const klog_kreq_t *r)
{
	struct gwait *gw = calloc(1, sizeof(*gw));

	if (gw == NULL)
		return NULL;
	klog_outq_init(&gw->hold.q);
	gw->hold.done = gwait_done;
	gw->k = k;
	gw->conn = k->conn;
	gw->corr = r->correlation;
	if (klog_outq_hold(k->q, &gw->hold) < 0) {
		klog_outq_free(&gw->hold.q);
		free(gw);
		return NULL;
	}
	return gw;
}

static void
gwait_ready(struct gwait *gw)
{
	gw->answered = 1;
	gw->hold.ready = 1;
	klog_conn_want_write(gw->conn);
}

/* JoinGroup v0's answer. */
static void
join_done(klog_coordinator_wait_t *w, const klog_coordinator_join_resp_t *jr)
{
	struct gwait *gw = gwait_of(w);
	klog_buf_t *out = klog_outq_buf(&gw->hold.q);
	size_t start = klog_kwire_begin(out, gw->corr);

	klog_buf_put_i16(out, jr->error);
	klog_buf_put_i32(out, jr->generation);
	klog_kwire_put_str(out, jr->protocol.p ? jr->protocol :
	    (klog_str_t){ "", 0 });
	klog_kwire_put_str(out, jr->leader_id.p ? jr->leader_id :
	    (klog_str_t){ "", 0 });
	klog_kwire_put_str(out, jr->member_id.p ? jr->member_id :
	    (klog_str_t){ "", 0 });
	klog_buf_put_i32(out, (int32_t)jr->nmembers);
	for (uint32_t i = 0; i < jr->nmembers; i++) {
		klog_kwire_put_str(out, jr->members[i].member_id);
		klog_kwire_put_bytes(out, jr->members[i].meta,
		    (int32_t)jr->members[i].meta_len);
	}
	klog_kwire_end(out, start);
	gwait_ready(gw);
}

/* SyncGroup v0's answer. */
static void
sync_done(klog_coordinator_wait_t *w, int16_t error, const uint8_t *assignment,
    uint32_t len)
{
	struct gwait *gw = gwait_of(w);
	klog_buf_t *out = klog_outq_buf(&gw->hold.q);
	size_t start = klog_kwire_begin(out, gw->corr);

	klog_buf_put_i16(out, error);
	klog_kwire_put_bytes(out, assignment != NULL ? assignment :
	    (const uint8_t *)"", (int32_t)len);
	klog_kwire_end(out, start);
	gwait_ready(gw);
}

int
kafka_groups_open(klog_kafka_t *k, klog_loop_t *loop,
    const char *data_dir, klog_err_t *err)
{
	klog_coordinator_config_t gc = { SESSION_MIN_MS, SESSION_MAX_MS,
	    MAX_MEMBERS, MAX_GROUPS, join_done, sync_done, k->cfg.log };
	int rc;

	if ((rc = klog_koffsets_open(data_dir, &k->offsets, err)) < 0)
		return rc;
	return klog_coordinator_new(loop, &gc, &k->groups);
}

void
kafka_groups_close(klog_kafka_t *k)
{
	klog_coordinator_free(k->groups);
	klog_koffsets_free(k->offsets);
	k->groups = NULL;
	k->offsets = NULL;
}

/* Which broker coordinates group: this one alone, or in a cluster the
 * one the cluster names (a KLOG_KERR_* when there is none). */
static int16_t
coordinator(klog_kafka_t *k, klog_str_t group, klog_kmeta_broker_t *out)
{
	char g[GROUP_MAX];

	*out = kafka_self(k);
	if (!k->clustered)
		return KLOG_KERR_NONE;
	if (group.len == 0 || klog_str_cstr(group, g, sizeof(g)) < 0)
		return KLOG_KERR_INVALID_GROUP_ID;
	if (k->cluster.coordinator(k->cluster.arg, g, out) < 0)
		return KLOG_KERR_COORDINATOR_NOT_AVAILABLE;
	return KLOG_KERR_NONE;
}

/* A group request that came to a broker that does not coordinate its
 * group: NOT_COORDINATOR sends the client to FindCoordinator again. */
static int16_t
not_here(klog_kafka_t *k, klog_str_t group)
{
	klog_kmeta_broker_t node;
	int16_t error;

	if (!k->clustered)
		return KLOG_KERR_NONE;
	if ((error = coordinator(k, group, &node)) != KLOG_KERR_NONE)
		return error;
	return node.id == k->cfg.broker_id ? KLOG_KERR_NONE :
	    KLOG_KERR_NOT_COORDINATOR;
}

/* GROUP_AUTHORIZATION_FAILED when the principal may not do op on group,
 * else NOT_COORDINATOR when another broker coordinates it. */
static int16_t
refused_or_not_here(klog_kafka_t *k, klog_str_t group, klog_acl_op_t op)
{
	if (!kafka_may(k, op, KLOG_ACL_GROUP, group))
		return KLOG_KERR_GROUP_AUTHORIZATION_FAILED;
	return not_here(k, group);
}

void
kafka_find_coordinator(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_kmeta_broker_t node;
	klog_str_t group;

	if (klog_kwire_group_id(r, &group) < 0) {
		k->bad = "a FindCoordinator request that does not parse";
		return;
	}
	if (!kafka_may(k, KLOG_ACL_DESCRIBE, KLOG_ACL_GROUP, group)) {
		node = (klog_kmeta_broker_t){ .id = -1,
		    .host = { "", 0 }, .port = -1 };
		klog_kwire_coordinator_resp(klog_outq_buf(k->q),
		    r->correlation, KLOG_KERR_GROUP_AUTHORIZATION_FAILED, &node);
		return;
	}
	klog_kwire_coordinator_resp(klog_outq_buf(k->q), r->correlation,
	    coordinator(k, group, &node), &node);
}

void
kafka_join(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_coordinator_join_req_t req;
	klog_coordinator_proto_t *protos;
	struct gwait *gw;
	klog_kjoin_t j;

	int16_t error;

	if (klog_kwire_join(r, &j, &k->parts) < 0) {
		k->bad = "a JoinGroup request that does not parse";
		return;
	}
	if ((error = refused_or_not_here(k, j.group, KLOG_ACL_READ)) !=
	    KLOG_KERR_NONE) {
		if ((gw = gwait_new(k, r)) == NULL)
			klog_outq_buf(k->q)->failed = 1;
		else
			join_done(&gw->w, &(klog_coordinator_join_resp_t){
			    .error = error, .generation = -1 });
		return;
	}
	if (klog_buf_grow(&k->parts2.p, &k->parts2.cap,
	    ((size_t)j.nprotocols + 1) * sizeof(*protos)) < 0 ||
	    (gw = gwait_new(k, r)) == NULL) {
		klog_outq_buf(k->q)->failed = 1;
		return;
	}
	protos = k->parts2.p;
	for (uint32_t i = 0; i < j.nprotocols; i++)
		protos[i] = (klog_coordinator_proto_t){ j.protocols[i].name,
		    j.protocols[i].data, j.protocols[i].len };
	req = (klog_coordinator_join_req_t){ j.group, j.member_id,
	    r->client_id.p ? r->client_id : (klog_str_t){ "", 0 },
	    j.protocol_type, j.session_timeout_ms, j.session_timeout_ms,
	    j.nprotocols, protos };
	if (klog_coordinator_join(k->groups, &req, &gw->w) < 0)
		join_done(&gw->w, &(klog_coordinator_join_resp_t){
		    .error = KLOG_KERR_UNKNOWN, .generation = -1 });
}

void
kafka_sync(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_coordinator_sync_req_t req;
	klog_coordinator_assign_t *as;
	struct gwait *gw;
	klog_ksync_t s;

	int16_t error;

	if (klog_kwire_sync(r, &s, &k->parts) < 0) {
		k->bad = "a SyncGroup request that does not parse";
		return;
	}
	if ((error = refused_or_not_here(k, s.group, KLOG_ACL_READ)) !=
	    KLOG_KERR_NONE) {
		if ((gw = gwait_new(k, r)) == NULL)
			klog_outq_buf(k->q)->failed = 1;
		else
			sync_done(&gw->w, error, NULL, 0);
		return;
	}
	if (klog_buf_grow(&k->parts2.p, &k->parts2.cap,
	    ((size_t)s.nassign + 1) * sizeof(*as)) < 0 ||
	    (gw = gwait_new(k, r)) == NULL) {
		klog_outq_buf(k->q)->failed = 1;
		return;
	}
	as = k->parts2.p;
	for (uint32_t i = 0; i < s.nassign; i++)
		as[i] = (klog_coordinator_assign_t){ s.assign[i].name,
		    s.assign[i].data, s.assign[i].len };
	req = (klog_coordinator_sync_req_t){ s.group, s.generation, s.member_id,
	    s.nassign, as };
	if (klog_coordinator_sync(k->groups, &req, &gw->w) < 0)
		sync_done(&gw->w, KLOG_KERR_UNKNOWN, NULL, 0);
}

void
kafka_heartbeat(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_str_t group, member;
	int32_t generation;
	int16_t error;

	if (klog_kwire_heartbeat(r, &group, &generation, &member) < 0) {
		k->bad = "a Heartbeat request that does not parse";
		return;
	}
	error = refused_or_not_here(k, group, KLOG_ACL_READ);
	klog_kwire_error_resp(klog_outq_buf(k->q), r->correlation, error ?
	    error : klog_coordinator_heartbeat(k->groups, group, generation,
	    member));
}

void
kafka_leave(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_str_t group, member;
	int16_t error;

	if (klog_kwire_leave(r, &group, &member) < 0) {
		k->bad = "a LeaveGroup request that does not parse";
		return;
	}
	error = refused_or_not_here(k, group, KLOG_ACL_READ);
	klog_kwire_error_resp(klog_outq_buf(k->q), r->correlation, error ?
	    error : klog_coordinator_leave(k->groups, group, member));
}

static int16_t
put_error(int rc)
{
	switch (rc) {
	case 0:
		return KLOG_KERR_NONE;
	case -KLOG_ETOOBIG:
		return KLOG_KERR_OFFSET_METADATA_TOO_LARGE;
	case -KLOG_ETOPIC:
		return KLOG_KERR_INVALID_TOPIC;
	case -KLOG_EINVAL:
		return KLOG_KERR_INVALID_GROUP_ID;
	default:
		return KLOG_KERR_UNKNOWN;
	}
}

/* One partition's commit: under the data directory, or in a cluster in
 * ZooKeeper where klog-group describe shows it (without its metadata). */
static int16_t
put_commit(klog_kafka_t *k, klog_str_t group, const klog_kcommit_part_t *p)
{
	char g[GROUP_MAX], topic[KLOG_TOPIC_MAX + 1];

	if (!k->clustered)
		return put_error(klog_koffsets_put(k->offsets, group, p->topic,
		    p->partition, p->offset, p->metadata));
	if (klog_str_cstr(group, g, sizeof(g)) < 0)
		return KLOG_KERR_INVALID_GROUP_ID;
	if (klog_str_cstr(p->topic, topic, sizeof(topic)) < 0)
		return KLOG_KERR_INVALID_TOPIC;
	return k->cluster.commit(k->cluster.arg, g, topic, p->partition,
	    p->offset) < 0 ? KLOG_KERR_COORDINATOR_NOT_AVAILABLE :
	    KLOG_KERR_NONE;
}

/* A partition's committed offset, -1 (and no metadata) if none. */
static void
get_commit(klog_kafka_t *k, klog_str_t group, const klog_kcommit_part_t *p,
    int64_t *off, klog_str_t *meta)
{
	char g[GROUP_MAX], topic[KLOG_TOPIC_MAX + 1];

	*off = -1;
	*meta = (klog_str_t){ "", 0 };
	if (!k->clustered) {
		if (klog_koffsets_get(k->offsets, group, p->topic,
		    p->partition, off, meta) != 1) {
			*off = -1;
			*meta = (klog_str_t){ "", 0 };
		}
		return;
	}
	if (klog_str_cstr(group, g, sizeof(g)) < 0 ||
	    klog_str_cstr(p->topic, topic, sizeof(topic)) < 0 ||
	    k->cluster.committed(k->cluster.arg, g, topic, p->partition,
	    off) < 0)
		*off = -1;
}

void
kafka_offset_commit(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_buf_t *out = klog_outq_buf(k->q);
	klog_kwire_topics_t t;
	klog_kcommit_t c;
	klog_err_t err;
	int16_t *errors, gerr, serr = KLOG_KERR_NONE;
	size_t start;

	if (klog_kwire_offset_commit(r, &c, &k->parts) < 0) {
		k->bad = "an OffsetCommit request that does not parse";
		return;
	}
	if (klog_buf_grow(&k->parts2.p, &k->parts2.cap,
	    ((size_t)c.count + 1) * sizeof(*errors)) < 0) {
		out->failed = 1;
		return;
	}
	errors = k->parts2.p;
	/* READ on the group, then on each partition's topic (Kafka's
	 * order). */
	if ((gerr = refused_or_not_here(k, c.group, KLOG_ACL_READ)) ==
	    KLOG_KERR_NONE)
		gerr = klog_coordinator_commit_check(k->groups, c.group,
		    c.generation, c.member_id);
	for (uint32_t i = 0; i < c.count; i++)
		errors[i] = gerr != KLOG_KERR_NONE ? gerr :
		    !kafka_may(k, KLOG_ACL_READ, KLOG_ACL_TOPIC,
		    c.parts[i].topic) ? KLOG_KERR_TOPIC_AUTHORIZATION_FAILED :
		    put_commit(k, c.group, &c.parts[i]);
	if (gerr == KLOG_KERR_NONE && c.count > 0 && !k->clustered &&
	    klog_koffsets_save(k->offsets, c.group, &err) < 0) {
		klog_logger_say(&k->cfg.log, KLOG_LEVEL_WARN, "Kafka listener: "
		    "committed offsets: %s", err.msg);
		/* Retriable: the client commits again. */
		serr = KLOG_KERR_COORDINATOR_NOT_AVAILABLE;
	}
	start = klog_kwire_begin(out, r->correlation);
	klog_kwire_topics_begin(out, &t);
	for (uint32_t i = 0; i < c.count; i++) {
		klog_kwire_topics_part(out, &t, c.parts[i].topic);
		klog_buf_put_i32(out, c.parts[i].partition);
		klog_buf_put_i16(out, errors[i] ? errors[i] : serr);
	}
	klog_kwire_topics_end(out, &t);
	klog_kwire_end(out, start);
}

void
kafka_offset_fetch(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_buf_t *out = klog_outq_buf(k->q);
	klog_kwire_topics_t t;
	klog_kcommit_t c;
	size_t start;
	int16_t gerr;

	if (klog_kwire_offset_fetch(r, &c, &k->parts) < 0) {
		k->bad = "an OffsetFetch request that does not parse";
		return;
	}
	/* DESCRIBE on the group, then on each partition's topic; a refused
	 * partition shows no offset. */
	gerr = kafka_may(k, KLOG_ACL_DESCRIBE, KLOG_ACL_GROUP, c.group) ?
	    KLOG_KERR_NONE : KLOG_KERR_GROUP_AUTHORIZATION_FAILED;
	start = klog_kwire_begin(out, r->correlation);
	klog_kwire_topics_begin(out, &t);
	for (uint32_t i = 0; i < c.count; i++) {
		const klog_kcommit_part_t *p = &c.parts[i];
		klog_str_t meta = { "", 0 };
		int64_t off = -1;
		int16_t error = gerr;

		if (error == KLOG_KERR_NONE && !kafka_may(k, KLOG_ACL_DESCRIBE,
		    KLOG_ACL_TOPIC, p->topic))
			error = KLOG_KERR_TOPIC_AUTHORIZATION_FAILED;
		if (error == KLOG_KERR_NONE)
			get_commit(k, c.group, p, &off, &meta);
		klog_kwire_topics_part(out, &t, p->topic);
		klog_buf_put_i32(out, p->partition);
		klog_buf_put_i64(out, off);
		klog_kwire_put_str(out, meta);
		klog_buf_put_i16(out, error);
	}
	klog_kwire_topics_end(out, &t);
	klog_kwire_end(out, start);
}
