/*
 * The broker's authorizer (klog-serve --acls FILE): the ACL set its
 * listeners decide by, taken up again when the file changes, and the
 * checks their front ends call (acl.h's table says which request needs
 * which operation; the fronts own the wiring).
 *
 * A broker without --acls has no authorizer: the fronts hold NULL, and
 * every klog_authz_*() check of NULL allows, so nothing changes for it.
 *
 * A cluster broker with --zk-acls has one without a file: it starts with
 * no ACL (everyone but super users refused), and cluster/zkauthz.c puts
 * the ACLs it reads from ZooKeeper in force with klog_authz_replace(),
 * whole, at start and at each change.
 *
 * The file is loaded whole at klog_authz_new() (a bad line fails the
 * start with "FILE:LINE: why").  klog_authz_reload(), which the broker
 * calls once a second on its loop, stats it and loads it again when its
 * inode, size, modification or change time moved: klog-group acls saves
 * by renaming, so a reader sees the old file or the new one.  A new file
 * that does not load (a bad line, gone, writable by others) keeps the set
 * in force and is reported once, not every second, until it changes
 * again.  The set is swapped in whole: a check sees the old ACLs or the
 * new ones, never half.
 *
 * Refusals are logged at most once a second (as klog_conn_refuse() does),
 * naming the principal, its host, the operation and the resource, and
 * how many were not logged since; never a password or token, which the
 * authorizer never sees.
 *
 * Replicas: REPLICA_FETCH and REPLICA_POS need CLUSTER_ACTION on the
 * cluster and, stricter than Kafka, a principal bound to the replica id
 * it claims: the pattern (default KLOG_AUTHZ_REPLICA_PRINCIPAL) with each
 * "{id}" replaced by the id must equal the principal or be followed in it
 * by a ',' (so "User:CN=broker-2" is met by "User:CN=broker-2,O=klog" but
 * not by "User:CN=broker-22").  A super user is bound the same way: a
 * broker's principal is usually one, and must still not pass for
 * another broker.
 *
 * Single-threaded: the loop's.
 */
#ifndef KLOG_AUTHZ_H
#define KLOG_AUTHZ_H

#include <stddef.h>
#include <stdint.h>

#include "klog/auth/acl.h"
#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/base/logger.h"

#define KLOG_AUTHZ_REPLICA_PRINCIPAL "User:CN=broker-{id}"
#define KLOG_AUTHZ_RELOAD_MS 1000     /* how often the broker stats the file */

typedef struct klog_authz klog_authz_t;

typedef struct klog_authz_config {
	const char *acl_file;          /* NULL: the caller's ACLs, given by
	                                  klog_authz_replace() (a cluster's,
	                                  from ZooKeeper: zkauthz.h); none
	                                  until then */
	const char *super_users;       /* Kafka's super.users; NULL: none */
	int allow_everyone_if_no_acl;  /* Kafka's
	                                  allow.everyone.if.no.acl.found */
	const char *replica_principal; /* NULL: the default above */
	klog_logger_t log;
} klog_authz_config_t;

/*
 * Check the replica principal pattern: a principal (acl.h) once "{id}" is
 * replaced, holding "{id}" at least once.  0, or -KLOG_EINVAL with err.
 */
int klog_authz_replica_pattern_check(const char *pattern, klog_err_t *err);

/*
 * Load the file and make an authorizer; the strings are copied.  0, or
 * what klog_aclfile_load() returns (-KLOG_ECORRUPT with "FILE:LINE: why",
 * -KLOG_ENOENT, -KLOG_EINVAL...), -KLOG_EINVAL for bad super users or
 * pattern, -KLOG_ENOMEM; err says why.
 */
int klog_authz_new(const klog_authz_config_t *cfg, klog_authz_t **out,
    klog_err_t *err);
void klog_authz_free(klog_authz_t *a);

/*
 * Take the file up again if it changed: 1 when a new set is in force
 * (logged at info), 0 when nothing changed (or there is no file),
 * -KLOG_E* when the new file did not load and the old set stays (logged
 * once at warn).
 */
int klog_authz_reload(klog_authz_t *a);

/* Whether the ACLs come from a file (0 for NULL a). */
int klog_authz_has_file(const klog_authz_t *a);

/*
 * Put s in force instead of the set, whole, with the broker's super users
 * and default: for an authorizer without a file, whose ACLs the caller
 * reads (zkauthz.h).  s is taken, and freed on failure (-KLOG_ENOMEM; the
 * old set stays).
 */
int klog_authz_replace(klog_authz_t *a, klog_acl_set_t *s, klog_err_t *err);

/* The set in force (for tests and the log lines); NULL for NULL. */
const klog_acl_set_t *klog_authz_set(const klog_authz_t *a);

/*
 * Whether principal, from host (NULL: unknown), may do op on the resource
 * named name, len bytes (not NUL-terminated; ignored for the cluster):
 * 1 allowed, 0 refused (and the refusal logged, a line a second at most).
 * NULL a allows everything.
 */
int klog_authz_check(klog_authz_t *a, const char *principal,
    const char *host, klog_acl_op_t op, klog_acl_res_t res, const char *name,
    size_t len);

/*
 * The same decision, never logged: for what a listing shows or a
 * description reports (ListGroups' groups, DescribeGroups' authorized
 * operations), which is no refusal.  NULL a allows everything.
 */
int klog_authz_allowed(klog_authz_t *a, const char *principal,
    const char *host, klog_acl_op_t op, klog_acl_res_t res, const char *name,
    size_t len);

/*
 * Whether a listing of every topic shows this one to principal: DESCRIBE
 * on it, decided as above but never logged (a listing hides topics as a
 * matter of course).  NULL a shows all.
 */
int klog_authz_visible(klog_authz_t *a, const char *principal,
    const char *host, const char *topic, size_t len);

/*
 * A request's partitions decided topic by topic: parts holds n elements
 * of size bytes, each with the klog_str_t of its topic at topic_off.
 * Those whose topic principal may not op on are moved after the others,
 * each group keeping its order (so a topic's partitions stay together);
 * returns how many are allowed, in front, or -KLOG_ENOMEM.  A topic is
 * decided once for a run of its partitions, and logged once.  NULL a
 * allows all.
 */
int klog_authz_split(klog_authz_t *a, const char *principal,
    const char *host, klog_acl_op_t op, void *parts, size_t size,
    size_t topic_off, uint32_t n);

/*
 * CREATE on the cluster, else on the topic (Kafka's rule for a topic
 * created, by a request or automatically): 1 or 0, one refusal logged.
 */
int klog_authz_create_topic(klog_authz_t *a, const char *principal,
    const char *host, const char *topic, size_t len);

/*
 * A follower's REPLICA_FETCH or REPLICA_POS as replica_id: CLUSTER_ACTION
 * on the cluster and the principal bound to that id (above).  1 or 0.
 */
int klog_authz_replica(klog_authz_t *a, const char *principal,
    const char *host, int32_t replica_id);

#endif
