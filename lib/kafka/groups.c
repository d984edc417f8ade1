/*
 * The Kafka listener's group APIs (kafka_impl.h): FindCoordinator, the
 * membership requests handed to the coordinator (coordinator.h), the
 * committed offsets (koffsets.h, or the cluster's), and the views of
 * DescribeGroups and ListGroups; their wire in kwgroup.h.
 *
 * A JoinGroup or SyncGroup may be answered long after it came (when the
 * rest of the group has joined, or the leader has synced): its place on
 * the connection is a hold, as a parked fetch's is, and the coordinator's
 * callback fills it.  A connection that goes first cancels it.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kafka_impl.h"

#define SESSION_MIN_MS 1000        /* Kafka's group.min.session.timeout.ms
	                              is 6 s; librdkafka's tests use less */
#define SESSION_MAX_MS 1800000     /* group.max.session.timeout.ms */
#define MAX_MEMBERS 1000
#define MAX_GROUPS 10000
#define GROUP_MAX 256              /* bytes of a group id, as a C string */
#define HOST_MAX 64                /* "/" and an address */

#define EMPTY ((klog_str_t){ "", 0 })

/* A join or sync waiting for its answer, in line on its connection. */
struct gwait {
	klog_outq_hold_t hold;     /* first: the output queue hands it back */
	klog_coordinator_wait_t w;
	klog_kafka_t *k;
	klog_conn_t *conn;
	klog_kreq_t req;           /* its header, for the answer's version */
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
	gw->req = *r;
	gw->req.body = NULL;
	gw->req.body_len = 0;
	gw->req.client_id = EMPTY;
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

static void
join_done(klog_coordinator_wait_t *w, const klog_kjoin_resp_t *jr)
{
	struct gwait *gw = gwait_of(w);

	klog_kwgroup_join_resp(klog_outq_buf(&gw->hold.q), &gw->req, jr);
	gwait_ready(gw);
}

static void
sync_done(klog_coordinator_wait_t *w, int16_t error, const uint8_t *assignment,
    uint32_t len)
{
	struct gwait *gw = gwait_of(w);

	klog_kwgroup_sync_resp(klog_outq_buf(&gw->hold.q), &gw->req, error,
	    assignment, len);
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
	klog_buf_t *out = klog_outq_buf(k->q);
	klog_kmeta_broker_t node;
	klog_str_t key;
	int8_t type;
	int16_t error;

	if (klog_kwgroup_find(r, &key, &type) < 0) {
		k->bad = "a FindCoordinator request that does not parse";
		return;
	}
	/* Kafka's order: the key type's ACL, then the coordinator.  klog
	 * has no transactions, so no transaction coordinator: the refusal
	 * a producer takes as final, not one it retries for ever. */
	if (type == KLOG_KWGROUP_KEY_TRANSACTION) {
		klog_kwgroup_find_resp(out, r,
		    KLOG_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
		    "klog has no transactions", -1, EMPTY, -1);
		return;
	}
	if (type != KLOG_KWGROUP_KEY_GROUP) {
		klog_kwgroup_find_resp(out, r, KLOG_KERR_INVALID_REQUEST,
		    "unknown coordinator type", -1, EMPTY, -1);
		return;
	}
	/* Kafka's message for it, which librdkafka shows from v1 on. */
	if (!kafka_may(k, KLOG_ACL_DESCRIBE, KLOG_ACL_GROUP, key)) {
		klog_kwgroup_find_resp(out, r,
		    KLOG_KERR_GROUP_AUTHORIZATION_FAILED,
		    "Group authorization failed.", -1, EMPTY, -1);
		return;
	}
	error = coordinator(k, key, &node);
	klog_kwgroup_find_resp(out, r, error, klog_kwire_error_name(error),
	    node.id, node.host, node.port);
}

/* The client's host as Kafka's DescribeGroups shows it ("/127.0.0.1"). */
static klog_str_t
client_host(klog_kafka_t *k, char *buf)
{
	const char *h = klog_connauth_host(klog_conn_auth(k->conn));
	int n = snprintf(buf, HOST_MAX, "/%s", h != NULL ? h : "");

	return (klog_str_t){ buf, (uint16_t)(n < HOST_MAX ? n : HOST_MAX - 1) };
}

void
kafka_join(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_coordinator_join_req_t req;
	struct gwait *gw;
	char host[HOST_MAX];
	klog_kjoin_t j;
	int16_t error;

	if (klog_kwgroup_join(r, &j, &k->parts) < 0) {
		k->bad = "a JoinGroup request that does not parse";
		return;
	}
	if ((gw = gwait_new(k, r)) == NULL) {
		klog_outq_buf(k->q)->failed = 1;
		return;
	}
	if ((error = refused_or_not_here(k, j.group, KLOG_ACL_READ)) !=
	    KLOG_KERR_NONE) {
		join_done(&gw->w, &(klog_kjoin_resp_t){ .error = error,
		    .generation = -1 });
		return;
	}
	req = (klog_coordinator_join_req_t){ j.group, j.member_id,
	    j.protocol_type, r->version >= 4, { r->client_id.p ?
	    r->client_id : EMPTY, client_host(k, host), j.instance_id,
	    j.session_timeout_ms, j.rebalance_timeout_ms, j.nprotocols,
	    j.protocols } };
	if (klog_coordinator_join(k->groups, &req, &gw->w) < 0)
		join_done(&gw->w, &(klog_kjoin_resp_t){
		    .error = KLOG_KERR_UNKNOWN, .generation = -1 });
}

void
kafka_sync(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_coordinator_sync_req_t req;
	struct gwait *gw;
	klog_ksync_t s;
	int16_t error;

	if (klog_kwgroup_sync(r, &s, &k->parts) < 0) {
		k->bad = "a SyncGroup request that does not parse";
		return;
	}
	if ((gw = gwait_new(k, r)) == NULL) {
		klog_outq_buf(k->q)->failed = 1;
		return;
	}
	if ((error = refused_or_not_here(k, s.group, KLOG_ACL_READ)) !=
	    KLOG_KERR_NONE) {
		sync_done(&gw->w, error, NULL, 0);
		return;
	}
	req = (klog_coordinator_sync_req_t){ s.group, s.generation,
	    s.member_id, s.nassign, s.assign };
	if (klog_coordinator_sync(k->groups, &req, &gw->w) < 0)
		sync_done(&gw->w, KLOG_KERR_UNKNOWN, NULL, 0);
}

void
kafka_heartbeat(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_kbeat_t h;
	int16_t error;

	if (klog_kwgroup_heartbeat(r, &h) < 0) {
		k->bad = "a Heartbeat request that does not parse";
		return;
	}
	error = refused_or_not_here(k, h.group, KLOG_ACL_READ);
	klog_kwgroup_error_resp(klog_outq_buf(k->q), r, error ? error :
	    klog_coordinator_heartbeat(k->groups, h.group, h.generation,
	    h.member_id));
}

void
kafka_leave(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_kleave_t l;
	int16_t error;

	if (klog_kwgroup_leave(r, &l, &k->parts) < 0) {
		k->bad = "a LeaveGroup request that does not parse";
		return;
	}
	/* A group's error is the answer's alone (v3: no members listed);
	 * else v0-2's one member's error is the answer's, v3 gives each
	 * its own. */
	if ((error = refused_or_not_here(k, l.group, KLOG_ACL_READ)) !=
	    KLOG_KERR_NONE)
		l.count = 0;
	for (uint32_t i = 0; i < l.count; i++)
		l.members[i].error = klog_coordinator_leave(k->groups, l.group,
		    l.members[i].member_id);
	if (r->version < 3 && l.count == 1)
		error = l.members[0].error;
	klog_kwgroup_leave_resp(klog_outq_buf(k->q), r, error, &l);
}

/* ---- committed offsets ---- */

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
	*meta = EMPTY;
	if (!k->clustered) {
		if (klog_koffsets_get(k->offsets, group, p->topic,
		    p->partition, off, meta) != 1) {
			*off = -1;
			*meta = EMPTY;
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
	klog_kwgroup_parts_t w;
	klog_kcommit_t c;
	klog_err_t err;
	int16_t *errors, gerr, serr = KLOG_KERR_NONE;

	if (klog_kwgroup_offset_commit(r, &c, &k->parts) < 0) {
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
	klog_kwgroup_parts_begin(out, r, &w);
	for (uint32_t i = 0; i < c.count; i++)
		klog_kwgroup_commit_part(out, &w, c.parts[i].topic,
		    c.parts[i].partition, errors[i] ? errors[i] : serr);
	klog_kwgroup_parts_end(out, &w, KLOG_KERR_NONE);
}

/* A cluster's committed offset, for fetch_all. */
struct all_arg {
	klog_kafka_t *k;
	klog_buf_t *out;
	klog_kwgroup_parts_t *w;
};

static void
one_offset(void *arg, const char *topic, int32_t partition, int64_t offset)
{
	struct all_arg *a = arg;
	klog_str_t t = { topic, (uint16_t)strlen(topic) };

	if (kafka_allowed(a->k, KLOG_ACL_DESCRIBE, KLOG_ACL_TOPIC, t))
		klog_kwgroup_fetch_part(a->out, a->w, t, partition, offset,
		    EMPTY, KLOG_KERR_NONE);
}

/* Every offset the group committed, of the topics the principal may
 * describe (Kafka leaves the others out); a cluster that cannot say gets
 * the retriable COORDINATOR_NOT_AVAILABLE. */
static int16_t
fetch_all(klog_kafka_t *k, klog_buf_t *out, klog_kwgroup_parts_t *w,
    klog_str_t group)
{
	struct all_arg a = { k, out, w };
	char g[GROUP_MAX];
	klog_str_t topic, meta;
	int32_t part;
	int64_t off;

	if (k->clustered)
		return klog_str_cstr(group, g, sizeof(g)) < 0 ?
		    KLOG_KERR_INVALID_GROUP_ID : k->cluster.committed_all(
		    k->cluster.arg, g, one_offset, &a) < 0 ?
		    KLOG_KERR_COORDINATOR_NOT_AVAILABLE : KLOG_KERR_NONE;
	for (size_t i = 0; klog_koffsets_at(k->offsets, group, i, &topic,
	    &part, &off, &meta); i++)
		if (kafka_allowed(k, KLOG_ACL_DESCRIBE, KLOG_ACL_TOPIC, topic))
			klog_kwgroup_fetch_part(out, w, topic, part, off, meta,
			    KLOG_KERR_NONE);
	return KLOG_KERR_NONE;
}

void
kafka_offset_fetch(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_buf_t *out = klog_outq_buf(k->q);
	klog_kwgroup_parts_t w;
	klog_kcommit_t c;
	int16_t gerr;

	if (klog_kwgroup_offset_fetch(r, &c, &k->parts) < 0) {
		k->bad = "an OffsetFetch request that does not parse";
		return;
	}
	/* DESCRIBE on the group, then on each partition's topic; a refused
	 * partition shows no offset.  A group's error is the answer's from
	 * v2 (no partitions then), each partition's before. */
	gerr = kafka_may(k, KLOG_ACL_DESCRIBE, KLOG_ACL_GROUP, c.group) ?
	    KLOG_KERR_NONE : KLOG_KERR_GROUP_AUTHORIZATION_FAILED;
	klog_kwgroup_parts_begin(out, r, &w);
	if (gerr != KLOG_KERR_NONE && r->version >= 2)
		c.count = 0;
	else if (c.all)
		gerr = fetch_all(k, out, &w, c.group);
	for (uint32_t i = 0; i < c.count; i++) {
		const klog_kcommit_part_t *p = &c.parts[i];
		klog_str_t meta = EMPTY;
		int64_t off = -1;
		int16_t error = gerr;

		if (error == KLOG_KERR_NONE && !kafka_may(k, KLOG_ACL_DESCRIBE,
		    KLOG_ACL_TOPIC, p->topic))
			error = KLOG_KERR_TOPIC_AUTHORIZATION_FAILED;
		if (error == KLOG_KERR_NONE)
			get_commit(k, c.group, p, &off, &meta);
		klog_kwgroup_fetch_part(out, &w, p->topic, p->partition, off,
		    meta, error);
	}
	klog_kwgroup_parts_end(out, &w, gerr);
}

/* ---- DescribeGroups and ListGroups ---- */

/* Whether the group has committed offsets here (an Empty group to
 * Kafka, which keeps a group while it has offsets). */
static int
has_offsets(klog_kafka_t *k, klog_str_t group)
{
	klog_str_t topic, meta;
	int32_t part;
	int64_t off;

	return !k->clustered && klog_koffsets_at(k->offsets, group, 0, &topic,
	    &part, &off, &meta);
}

/* Kafka's authorized operations of a group: a bit for each of READ (3),
 * DELETE (6) and DESCRIBE (8), Kafka's codes, that the principal may. */
static int32_t
group_ops(klog_kafka_t *k, klog_str_t group)
{
	static const struct { klog_acl_op_t op; int bit; } ops[] = {
		{ KLOG_ACL_READ, 3 }, { KLOG_ACL_DELETE, 6 },
		{ KLOG_ACL_DESCRIBE, 8 },
	};
	int32_t bits = 0;

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (kafka_allowed(k, ops[i].op, KLOG_ACL_GROUP, group))
			bits |= (int32_t)1 << ops[i].bit;
	return bits;
}

/* One group of a DescribeGroups answer. */
static void
describe_one(klog_kafka_t *k, klog_buf_t *out, klog_kwgroup_list_t *w,
    klog_str_t id, int with_ops, klog_kdmember_t *members)
{
	const klog_kgroup_t *grp;
	klog_kdgroup_t d = { .id = id, .authorized_ops =
	    KLOG_KWGROUP_OPS_NONE };

	if (!kafka_may(k, KLOG_ACL_DESCRIBE, KLOG_ACL_GROUP, id)) {
		d.error = KLOG_KERR_GROUP_AUTHORIZATION_FAILED;
	} else if ((d.error = not_here(k, id)) == KLOG_KERR_NONE) {
		grp = klog_kgtable_find(klog_coordinator_table(k->groups), id);
		if (grp != NULL)
			klog_kgtable_describe(grp, &d, members);
		else
			d.state = has_offsets(k, id) ?
			    (klog_str_t){ "Empty", 5 } : (klog_str_t){ "Dead",
			    4 };
		if (with_ops)
			d.authorized_ops = group_ops(k, id);
	}
	klog_kwgroup_describe_group(out, w, &d);
}

void
kafka_describe_groups(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_buf_t *out = klog_outq_buf(k->q);
	klog_kwgroup_list_t w;
	klog_kdmember_t *members;
	klog_str_t *ids;
	uint32_t n;
	int with_ops;

	if (klog_kwgroup_describe(r, &k->parts, &n, &with_ops) < 0) {
		k->bad = "a DescribeGroups request that does not parse";
		return;
	}
	if (klog_buf_grow(&k->parts2.p, &k->parts2.cap, MAX_MEMBERS *
	    sizeof(*members)) < 0) {
		out->failed = 1;
		return;
	}
	ids = k->parts.p;
	members = k->parts2.p;
	klog_kwgroup_describe_begin(out, r, &w);
	for (uint32_t i = 0; i < n; i++)
		describe_one(k, out, &w, ids[i], with_ops, members);
	klog_kwgroup_list_end(out, &w);
}

/* Whether state is one of v4's filter (none: every state). */
static int
wanted(klog_str_t state, const klog_str_t *states, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (states[i].len == state.len &&
		    strncasecmp(states[i].p, state.p, state.len) == 0)
			return 1;
	return n == 0;
}

void
kafka_list_groups(klog_kafka_t *k, const klog_kreq_t *r)
{
	const klog_kgtable_t *t = klog_coordinator_table(k->groups);
	klog_buf_t *out = klog_outq_buf(k->q);
	const klog_kgroup_t *grp = NULL;
	const void *cursor = NULL;
	klog_kwgroup_list_t w;
	klog_str_t id, empty = { "Empty", 5 };
	size_t bucket = 0;
	uint32_t nstates;
	int all;

	if (klog_kwgroup_list(r, &k->parts, &nstates) < 0) {
		k->bad = "a ListGroups request that does not parse";
		return;
	}
	/* Kafka's rule: DESCRIBE on the cluster lists every group, else
	 * those the principal may describe. */
	all = kafka_allowed(k, KLOG_ACL_DESCRIBE, KLOG_ACL_CLUSTER, EMPTY);
	klog_kwgroup_list_begin(out, r, KLOG_KERR_NONE, &w);
	while ((grp = klog_kgtable_next(t, &bucket, grp)) != NULL) {
		id = (klog_str_t){ grp->id, grp->id_len };
		if (wanted(klog_kgtable_state_name(grp), k->parts.p, nstates) &&
		    (all || kafka_allowed(k, KLOG_ACL_DESCRIBE,
		    KLOG_ACL_GROUP, id)))
			klog_kwgroup_list_group(out, &w, id, grp->ptype,
			    klog_kgtable_state_name(grp));
	}
	/* Groups with offsets and no members (a standalone broker's). */
	while (!k->clustered &&
	    klog_koffsets_next_group(k->offsets, &cursor, &id))
		if (klog_kgtable_find(t, id) == NULL &&
		    wanted(empty, k->parts.p, nstates) && (all ||
		    kafka_allowed(k, KLOG_ACL_DESCRIBE, KLOG_ACL_GROUP, id)))
			klog_kwgroup_list_group(out, &w, id, EMPTY, empty);
	klog_kwgroup_list_end(out, &w);
}
