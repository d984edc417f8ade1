/*
 * The Kafka listener's authorization (kafka_impl.h): the connection's
 * principal and host asked of the broker's ACLs (authz.h), for the
 * handlers of kafka.c, kmetadata.c and groups.c.  Without ACLs every
 * answer is yes.
 */
#include "kafka_impl.h"
#include "klog/storage/names.h"

/* Kafka's AclOperation codes, a bit each in Metadata v8's answer. */
enum {
	KAFKA_OP_READ = 3,
	KAFKA_OP_WRITE = 4,
	KAFKA_OP_CREATE = 5,
	KAFKA_OP_DELETE = 6,
	KAFKA_OP_ALTER = 7,
	KAFKA_OP_DESCRIBE = 8,
	KAFKA_OP_CLUSTER_ACTION = 9,
	KAFKA_OP_DESCRIBE_CONFIGS = 10,
	KAFKA_OP_ALTER_CONFIGS = 11,
	KAFKA_OP_IDEMPOTENT_WRITE = 12,
};

#define ON_TOPIC (1u << KLOG_ACL_TOPIC)
#define ON_CLUSTER (1u << KLOG_ACL_CLUSTER)

/*
 * The operations Kafka reports on a topic and on the cluster, each with
 * the klog operation that decides it.  Those klog's ACLs have no word for
 * are decided as Kafka decides them for the ACLs klog can hold: by an
 * ALLOW of ALL (or a super user).
 */
static const struct {
	int code;
	klog_acl_op_t op;
	unsigned on;
} kafka_ops_table[] = {
	{ KAFKA_OP_READ, KLOG_ACL_READ, ON_TOPIC },
	{ KAFKA_OP_WRITE, KLOG_ACL_WRITE, ON_TOPIC },
	{ KAFKA_OP_CREATE, KLOG_ACL_CREATE, ON_TOPIC | ON_CLUSTER },
	{ KAFKA_OP_DELETE, KLOG_ACL_DELETE, ON_TOPIC },
	{ KAFKA_OP_ALTER, KLOG_ACL_ALTER, ON_TOPIC | ON_CLUSTER },
	{ KAFKA_OP_DESCRIBE, KLOG_ACL_DESCRIBE, ON_TOPIC | ON_CLUSTER },
	{ KAFKA_OP_CLUSTER_ACTION, KLOG_ACL_CLUSTER_ACTION, ON_CLUSTER },
	{ KAFKA_OP_DESCRIBE_CONFIGS, KLOG_ACL_DESCRIBE_CONFIGS,
	    ON_TOPIC | ON_CLUSTER },
	{ KAFKA_OP_ALTER_CONFIGS, KLOG_ACL_ALL, ON_TOPIC | ON_CLUSTER },
	{ KAFKA_OP_IDEMPOTENT_WRITE, KLOG_ACL_ALL, ON_CLUSTER },
};

int
kafka_may(klog_kafka_t *k, klog_acl_op_t op, klog_acl_res_t res,
    klog_str_t name)
{
	klog_connauth_t *a;

	if (k->cfg.authz == NULL)
		return 1;
	a = klog_conn_auth(k->conn);
	return klog_authz_check(k->cfg.authz, klog_connauth_principal(a),
	    klog_connauth_host(a), op, res, name.p, name.len);
}

int
kafka_allowed(klog_kafka_t *k, klog_acl_op_t op, klog_acl_res_t res,
    klog_str_t name)
{
	klog_connauth_t *a;

	if (k->cfg.authz == NULL)
		return 1;
	a = klog_conn_auth(k->conn);
	return klog_authz_allowed(k->cfg.authz, klog_connauth_principal(a),
	    klog_connauth_host(a), op, res, name.p, name.len);
}

int
kafka_may_idempotent(klog_kafka_t *k)
{
	const klog_acl_set_t *set = klog_authz_set(k->cfg.authz);
	klog_connauth_t *a;

	if (k->cfg.authz == NULL || set == NULL ||
	    kafka_allowed(k, KLOG_ACL_ALL, KLOG_ACL_CLUSTER, (klog_str_t){ 0 }))
		return 1;
	a = klog_conn_auth(k->conn);
	if (klog_acl_authorize_any(set, klog_connauth_principal(a),
	    klog_connauth_host(a), KLOG_ACL_WRITE, KLOG_ACL_TOPIC))
		return 1;
	/* Asked again the logging way, so the refusal has its line. */
	return kafka_may(k, KLOG_ACL_ALL, KLOG_ACL_CLUSTER, (klog_str_t){ 0 });
}

int
kafka_may_create(klog_kafka_t *k, klog_str_t topic)
{
	klog_connauth_t *a;

	if (k->cfg.authz == NULL)
		return 1;
	a = klog_conn_auth(k->conn);
	return klog_authz_create_topic(k->cfg.authz,
	    klog_connauth_principal(a), klog_connauth_host(a), topic.p,
	    topic.len);
}

int
kafka_sees(klog_kafka_t *k, klog_str_t topic)
{
	klog_connauth_t *a;

	if (k->cfg.authz == NULL)
		return 1;
	a = klog_conn_auth(k->conn);
	return klog_authz_visible(k->cfg.authz, klog_connauth_principal(a),
	    klog_connauth_host(a), topic.p, topic.len);
}

int32_t
kafka_ops(klog_kafka_t *k, klog_acl_res_t res, klog_str_t name)
{
	const klog_acl_set_t *set = klog_authz_set(k->cfg.authz);
	klog_connauth_t *a = klog_conn_auth(k->conn);
	char buf[KLOG_TOPIC_MAX + 1];
	uint32_t bits = 0;

	if (res == KLOG_ACL_TOPIC && klog_str_cstr(name, buf, sizeof(buf)) < 0)
		return KLOG_KMETA_OPS_NONE;     /* no topic has that name */
	for (size_t i = 0; i < sizeof(kafka_ops_table) /
	    sizeof(kafka_ops_table[0]); i++) {
		if (!(kafka_ops_table[i].on & (1u << res)))
			continue;
		/* Asked of the set itself, as Kafka does, unlogged. */
		if (set == NULL || klog_acl_authorize(set,
		    klog_connauth_principal(a), klog_connauth_host(a),
		    kafka_ops_table[i].op, res,
		    res == KLOG_ACL_TOPIC ? buf : NULL))
			bits |= 1u << kafka_ops_table[i].code;
	}
	return (int32_t)bits;
}
