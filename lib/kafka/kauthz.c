/*
 * The Kafka listener's authorization (kafka_impl.h): the connection's
 * principal and host asked of the broker's ACLs (authz.h), for the
 * handlers of kafka.c, kmetadata.c and groups.c.  Without ACLs every
 * answer is yes.
 */
#include "kafka_impl.h"

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
