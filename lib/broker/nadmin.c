/*
 * The klog protocol's front end: the connection's authorization and the
 * requests about the broker (native_impl.h).
 */
#include <stdint.h>
#include <string.h>

#include "klog/core/admin.h"
#include "klog/core/idem.h"

#include "native_impl.h"

void
native_encode_error(klog_native_t *n, klog_buf_t *out, int32_t corr, int16_t error)
{
	size_t start = klog_proto_resp_begin(out, corr, error);

	note_error(n, error);
	klog_proto_end(out, start);
}

/* ---- authorization (authz.h; everything allowed without ACLs) ---- */

int
native_may(klog_native_t *n, klog_acl_op_t op, klog_acl_res_t res, klog_str_t name)
{
	klog_connauth_t *a;

	if (n->cfg.authz == NULL)
		return 1;
	a = klog_conn_auth(n->conn);
	return klog_authz_check(n->cfg.authz, klog_connauth_principal(a),
	    klog_connauth_host(a), op, res, name.p, name.len);
}

int
native_may_create(klog_native_t *n, klog_str_t topic)
{
	klog_connauth_t *a;

	if (n->cfg.authz == NULL)
		return 1;
	a = klog_conn_auth(n->conn);
	return klog_authz_create_topic(n->cfg.authz,
	    klog_connauth_principal(a), klog_connauth_host(a), topic.p,
	    topic.len);
}

int
native_split_allowed(klog_native_t *n, klog_acl_op_t op, void *parts, size_t size,
    uint32_t count)
{
	klog_connauth_t *a;
	int rc;

	if (n->cfg.authz == NULL)
		return (int)count;
	a = klog_conn_auth(n->conn);
	rc = klog_authz_split(n->cfg.authz, klog_connauth_principal(a),
	    klog_connauth_host(a), op, parts, size, 0, count);
	return rc < 0 ? -1 : rc;
}

/* ---- requests ---- */

/* A requested topic's partition count, or a wire error (with 0
 * partitions and broker id -1, as klog-protocol(7) says). */
static void
meta_topic(klog_native_t *n, klog_str_t name, klog_meta_topic_t *mt)
{
	int parts;

	*mt = (klog_meta_topic_t){ .topic = name, .broker_id = -1 };
	if (!native_may(n, KLOG_ACL_DESCRIBE, KLOG_ACL_TOPIC, name)) {
		mt->error = KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED;
		return;
	}
	if ((mt->error = klog_core_topic_meta(n->core, name, &parts)) != 0)
		return;
	mt->partitions = parts;
	mt->broker_id = n->cfg.broker_id;
}

void
native_metadata(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len)
{
	int32_t corr = h->correlation;
	klog_buf_t *out = klog_outq_buf(n->q);
	klog_meta_broker_t self = { n->cfg.broker_id,
	    { n->adv_host, (uint16_t)strlen(n->adv_host) },
	    n->cfg.advertised_port };
	klog_metadata_t md = { .broker_id = n->cfg.broker_id, .nbrokers = 1,
	    .brokers = &self };
	klog_str_t *names;
	klog_connauth_t *a = klog_conn_auth(n->conn);
	uint32_t got;
	size_t nt, shown = 0;
	int parts;

	if (klog_proto_decode_metadata_grow(body, len, &n->s.parts, &got) < 0) {
		native_encode_error(n, out, corr, KLOG_WIRE_INVALID_REQUEST);
		return;
	}
	names = n->s.parts.p;
	nt = got > 0 ? got : klog_core_topic_count(n->core);
	if (klog_buf_grow((void **)&n->s.mtopics, &n->s.mtopics_cap,
	    (nt + 1) * sizeof(*n->s.mtopics)) < 0) {
		native_encode_error(n, out, corr, KLOG_WIRE_STORAGE_ERROR);
		return;
	}
	for (size_t i = 0; i < nt; i++) {
		const char *name;

		if (got > 0) {
			meta_topic(n, names[i], &n->s.mtopics[shown++]);
			continue;
		}
		name = klog_core_topic_at(n->core, i, &parts);
		/* Of all topics, those it may not describe are left out. */
		if (!klog_authz_visible(n->cfg.authz,
		    klog_connauth_principal(a), klog_connauth_host(a), name,
		    strlen(name)))
			continue;
		n->s.mtopics[shown++] = (klog_meta_topic_t){ KLOG_WIRE_NONE,
		    { name, (uint16_t)strlen(name) }, parts,
		    n->cfg.broker_id };
	}
	md.ntopics = (uint32_t)shown;
	md.topics = n->s.mtopics;
	if (klog_proto_encode_metadata_resp(out, corr, &md) < 0)
		out->failed = 1;
}

/* CREATE_TOPIC needs CREATE on the cluster, else on the topic;
 * ALTER_TOPIC ALTER and DELETE_TOPIC DELETE on the topic. */
static int
may_admin(klog_native_t *n, int16_t api, klog_str_t topic)
{
	if (api == KLOG_API_CREATE_TOPIC)
		return native_may_create(n, topic);
	return native_may(n, api == KLOG_API_ALTER_TOPIC ? KLOG_ACL_ALTER :
	    KLOG_ACL_DELETE, KLOG_ACL_TOPIC, topic);
}

/* CREATE_TOPIC, ALTER_TOPIC, DELETE_TOPIC: answered now. */
void
native_topic_admin(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len)
{
	int16_t api = h->api;
	int32_t corr = h->correlation;
	klog_buf_t *out = klog_outq_buf(n->q);
	klog_topic_admin_t req;
	klog_topic_admin_resp_t res;

	if (klog_proto_decode_topic_admin(api, body, len, &req) < 0) {
		native_encode_error(n, out, corr, KLOG_WIRE_INVALID_REQUEST);
		return;
	}
	res.topic = req.topic;
	res.partitions = 0;
	if (!may_admin(n, api, req.topic))
		res.error = KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED;
	else
		res.error = klog_core_topic_admin(n->core, api, &req,
		    &res.partitions);
	note_error(n, res.error);
	if (klog_proto_encode_topic_admin_resp(out, corr, &res) < 0)
		out->failed = 1;
}


/* Kafka 2.8's rule for an idempotent producer's id (as the Kafka
 * listener's): IDEMPOTENT_WRITE on the cluster (klog's ALL), or WRITE on
 * some topic. */
static int
may_idempotent(klog_native_t *n)
{
	const klog_acl_set_t *set = klog_authz_set(n->cfg.authz);
	klog_connauth_t *a;

	if (n->cfg.authz == NULL || set == NULL)
		return 1;
	a = klog_conn_auth(n->conn);
	if (klog_acl_authorize_any(set, klog_connauth_principal(a),
	    klog_connauth_host(a), KLOG_ACL_WRITE, KLOG_ACL_TOPIC))
		return 1;
	/* Asked the logging way, so that a refusal has its line. */
	return native_may(n, KLOG_ACL_ALL, KLOG_ACL_CLUSTER, (klog_str_t){ 0 });
}

/* INIT_PRODUCER: an id and epoch from the core (core/idem.h), the Kafka
 * listener's allocation. */
void
native_init_producer(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len)
{
	klog_buf_t *out = klog_outq_buf(n->q);
	klog_producer_id_t id;
	int16_t error = KLOG_WIRE_NONE;
	klog_err_t err;
	int rc;

	if (klog_proto_decode_init_producer(body, len, &id) < 0) {
		native_encode_error(n, out, h->correlation,
		    KLOG_WIRE_INVALID_REQUEST);
		return;
	}
	if (!may_idempotent(n)) {
		error = KLOG_WIRE_CLUSTER_AUTHORIZATION_FAILED;
	} else if ((rc = klog_core_producer_id(n->core, &id.producer_id,
	    &id.epoch, &err)) < 0) {
		klog_logger_say(&n->cfg.log, KLOG_LEVEL_ERROR, "INIT_PRODUCER: "
		    "no producer id: %s", klog_err_text(&err, rc));
		error = KLOG_WIRE_STORAGE_ERROR;
	}
	if (error != KLOG_WIRE_NONE)
		id = (klog_producer_id_t){ -1, -1 };
	note_error(n, error);
	if (klog_proto_encode_init_producer_resp(out, h->correlation, error,
	    &id) < 0)
		out->failed = 1;
}
