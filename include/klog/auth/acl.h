/*
 * Kafka's ACLs and its authorizer (StandardAuthorizer), for klog's
 * listeners: who may do which operation on which topic, group or cluster.
 *
 * An ACL is a principal ("User:alice", "User:CN=alice,O=Acme": a client
 * certificate's subject DN, commas and spaces included; "User:*" is
 * everyone), a host ("*", or one IP address), an operation, ALLOW or
 * DENY, and a resource pattern: TOPIC, GROUP or CLUSTER, a name ("*" is
 * every name; the cluster is always "kafka-cluster") taken LITERAL or as a
 * PREFIXED name.  A request is decided as Kafka decides it
 * (StandardAuthorizerData), in this order:
 *
 *   1. a super user (klog_acl_super_users(), Kafka's super.users) is
 *      allowed everything, whatever the ACLs say;
 *   2. the ACLs that match: the principal (or User:*), the host (or *),
 *      the operation (ALL matches every one; an ALLOW of READ, WRITE,
 *      DELETE or ALTER also matches DESCRIBE, but a DENY only its own
 *      operation), the resource type, and the name (equal, "*", or a
 *      PREFIXED name it starts with);
 *   3. any matching DENY denies; else any matching ALLOW allows;
 *   4. else denied, or allowed when no ACL at all names the resource and
 *      klog_acl_allow_everyone_if_no_acl() is on (Kafka's
 *      allow.everyone.if.no.acl.found, off by default).
 *
 * Hosts: the request's host is compared with the ACL's as text, after
 * the ACL's was made canonical (inet_ntop(3): "::1", "10.0.0.1"), so the
 * caller passes the peer address as inet_ntop() writes it.  An IPv4 client
 * of a dual-stack listener is "::ffff:10.0.0.1", a host of its own.
 *
 * A check costs a few binary searches in the set, which is kept sorted by
 * resource type, pattern, name, principal: the ACLs of the exact name, of
 * "*", and of each PREFIXED name the name starts with (walked from the
 * longest), each looked up for the principal and for User:*: about half
 * a microsecond with 300 ACLs on the project's machines (test_acl.c's
 * test_cost prints it).  It allocates nothing and takes a const set: the
 * loop can call it per request, and several threads at once on a set
 * nobody changes.
 *
 * What each request needs (Kafka's docs/security.html table; klog's own
 * requests of klog-protocol(7) the same way).  A refusal is
 * TOPIC_AUTHORIZATION_FAILED (29), GROUP_AUTHORIZATION_FAILED (30) or
 * CLUSTER_AUTHORIZATION_FAILED (31) on the Kafka listener, by the resource
 * that was refused:
 *
 *   klog request     Kafka API           operation       resource
 *   PRODUCE          Produce             WRITE           TOPIC t
 *    (auto-create)   (Metadata's too)    CREATE          CLUSTER, else TOPIC t
 *   FETCH            Fetch (consumer)    READ            TOPIC t
 *   REPLICA_FETCH,   Fetch (replica)     CLUSTER_ACTION  CLUSTER
 *   REPLICA_POS
 *   OFFSETS          ListOffsets         DESCRIBE        TOPIC t
 *   METADATA         Metadata            DESCRIBE        TOPIC t
 *   CREATE_TOPIC     (CreateTopics)      CREATE          CLUSTER, else TOPIC t
 *   ALTER_TOPIC      (CreatePartitions)  ALTER           TOPIC t
 *   DELETE_TOPIC     (DeleteTopics)      DELETE          TOPIC t
 *   -                DescribeConfigs     DESCRIBE_CONFIGS TOPIC t, or CLUSTER
 *                                        (a broker's)
 *   -                InitProducerId      refused (no producer ids)
 *   -                OffsetCommit        READ            GROUP g, then TOPIC t
 *   -                OffsetFetch         DESCRIBE        GROUP g, then TOPIC t
 *   -                FindCoordinator     DESCRIBE        GROUP g
 *   -                JoinGroup, SyncGroup, Heartbeat, LeaveGroup
 *                                        READ            GROUP g
 *   -                ApiVersions, SaslHandshake, SaslAuthenticate: none
 *
 * Notes for the wiring: a request naming several topics is decided topic
 * by topic (Produce, Fetch, ListOffsets, OffsetCommit answer the refused
 * partitions with 29 and serve the others); METADATA for every topic leaves
 * out those not described, one named is answered 29; "CREATE on CLUSTER,
 * else on TOPIC" means two checks, the first allowing being enough;
 * REPLICA_FETCH and REPLICA_POS should also check that replica_id is the
 * broker id bound to the principal (stricter than Kafka, which checks only
 * CLUSTER_ACTION).  The native tools' consumer groups live in ZooKeeper,
 * which the broker does not see: no ACL covers them.
 */
#ifndef KLOG_ACL_H
#define KLOG_ACL_H

#include <stddef.h>

#include "klog/base/error.h"

/* Bounds of an ACL's strings, NUL not counted. */
#define KLOG_ACL_PRINCIPAL_MAX 1024
#define KLOG_ACL_NAME_MAX 255
#define KLOG_ACL_HOST_MAX 45        /* INET6_ADDRSTRLEN - 1 */

#define KLOG_ACL_WILDCARD "*"       /* every name, every host */
#define KLOG_ACL_ANYONE "User:*"    /* every principal */
#define KLOG_ACL_CLUSTER_NAME "kafka-cluster"

/* Kafka's AclOperation, those klog's requests need; in its order. */
typedef enum klog_acl_op {
	KLOG_ACL_READ,
	KLOG_ACL_WRITE,
	KLOG_ACL_CREATE,
	KLOG_ACL_DELETE,
	KLOG_ACL_ALTER,
	KLOG_ACL_DESCRIBE,
	KLOG_ACL_CLUSTER_ACTION,
	KLOG_ACL_DESCRIBE_CONFIGS,
	KLOG_ACL_ALL,
	KLOG_ACL_OP_COUNT
} klog_acl_op_t;

typedef enum klog_acl_perm {
	KLOG_ACL_ALLOW,
	KLOG_ACL_DENY,
	KLOG_ACL_PERM_COUNT
} klog_acl_perm_t;

typedef enum klog_acl_res {
	KLOG_ACL_TOPIC,
	KLOG_ACL_GROUP,
	KLOG_ACL_CLUSTER,
	KLOG_ACL_RES_COUNT
} klog_acl_res_t;

typedef enum klog_acl_pattern {
	KLOG_ACL_LITERAL,
	KLOG_ACL_PREFIXED,
	KLOG_ACL_PATTERN_COUNT
} klog_acl_pattern_t;

typedef struct klog_acl {
	klog_acl_perm_t perm;
	klog_acl_op_t op;
	klog_acl_res_t res;
	klog_acl_pattern_t pattern;
	char name[KLOG_ACL_NAME_MAX + 1];
	char host[KLOG_ACL_HOST_MAX + 1];
	char principal[KLOG_ACL_PRINCIPAL_MAX + 1];
} klog_acl_t;

/* ---- names ---- */

/*
 * Kafka's names, as kafka-acls prints them: "READ", "CLUSTER_ACTION",
 * "ALLOW", "TOPIC", "LITERAL"; "UNKNOWN" out of range.
 */
const char *klog_acl_op_name(klog_acl_op_t op);
const char *klog_acl_perm_name(klog_acl_perm_t perm);
const char *klog_acl_res_name(klog_acl_res_t res);
const char *klog_acl_pattern_name(klog_acl_pattern_t pattern);

/*
 * The reverse, in any case, and for the operation also without its
 * underscore as kafka-acls takes it ("ClusterAction", "cluster_action").
 * 0, or -KLOG_EINVAL with err (which may be NULL) listing the words.
 */
int klog_acl_op_parse(const char *s, klog_acl_op_t *op, klog_err_t *err);
int klog_acl_perm_parse(const char *s, klog_acl_perm_t *perm,
    klog_err_t *err);
int klog_acl_res_parse(const char *s, klog_acl_res_t *res, klog_err_t *err);
int klog_acl_pattern_parse(const char *s, klog_acl_pattern_t *pattern,
    klog_err_t *err);

/* ---- one ACL ---- */

/*
 * A principal: "User:" (Kafka's principal type, exactly so) and a name of
 * 1 or more bytes, at most KLOG_ACL_PRINCIPAL_MAX in all, without control
 * bytes nor a trailing blank (an ACL file could not keep one).  0, or
 * -KLOG_EINVAL with err saying why.
 */
int klog_acl_principal_validate(const char *principal, klog_err_t *err);

/*
 * A host as an ACL holds it: "*", or an IPv4 or IPv6 address written
 * canonically into out (KLOG_ACL_HOST_MAX + 1 bytes).  0, or -KLOG_EINVAL
 * (names are not resolved: Kafka compares addresses too).
 */
int klog_acl_host_parse(const char *s, char *out, klog_err_t *err);

/*
 * Check a whole ACL, as Kafka's kafka-acls does, and make its host
 * canonical: the principal and host as above; a name of 1 to
 * KLOG_ACL_NAME_MAX bytes of printable ASCII without blanks, "*" only
 * LITERAL; the cluster's LITERAL "kafka-cluster" only; an operation the
 * resource type has (TOPIC: READ WRITE CREATE DELETE ALTER DESCRIBE ALL;
 * GROUP: READ DELETE DESCRIBE ALL; CLUSTER: CREATE ALTER DESCRIBE
 * CLUSTER_ACTION ALL).  0, or -KLOG_EINVAL with err saying why.
 */
int klog_acl_validate(klog_acl_t *a, klog_err_t *err);

/*
 * A filter of ACLs, for removing and listing: each field matches
 * anything when negative (NULL for the strings), else only an equal one.
 */
typedef struct klog_acl_filter {
	int perm, op, res, pattern;
	const char *name;
	const char *host;       /* canonical, as klog_acl_host_parse() */
	const char *principal;
} klog_acl_filter_t;

/* A filter that matches every ACL. */
void klog_acl_filter_any(klog_acl_filter_t *f);
int klog_acl_filter_match(const klog_acl_filter_t *f, const klog_acl_t *a);

/* ---- a set of ACLs, and the decision ---- */

typedef struct klog_acl_set klog_acl_set_t;

/* An empty set: no ACL, no super user, everyone denied. */
int klog_acl_set_new(klog_acl_set_t **s);
void klog_acl_set_free(klog_acl_set_t *s);

/*
 * Add a copy of a (validated first: -KLOG_EINVAL with err); -KLOG_EEXIST
 * when the set holds it already (nothing changes), -KLOG_ENOMEM.
 */
int klog_acl_add(klog_acl_set_t *s, const klog_acl_t *a, klog_err_t *err);
/* Remove every ACL f matches; *removed (which may be NULL) counts them. */
void klog_acl_remove(klog_acl_set_t *s, const klog_acl_filter_t *f,
    size_t *removed);

/*
 * The ACLs in order: resource type (TOPIC, GROUP, CLUSTER), pattern
 * (LITERAL first), name, principal, host, operation, permission; i below
 * klog_acl_count().  Valid until the set changes.
 */
size_t klog_acl_count(const klog_acl_set_t *s);
const klog_acl_t *klog_acl_get(const klog_acl_set_t *s, size_t i);

/*
 * The super users, as Kafka's super.users: "User:Bob;User:Alice",
 * separated by semicolons (a DN holds commas); blanks around each are
 * dropped, empty entries skipped, each checked as a principal; User:* is
 * refused (it would be everyone).  Replaces the list; an empty string is
 * none.  0, -KLOG_EINVAL (the list stays as it was), -KLOG_ENOMEM.
 */
int klog_acl_super_users(klog_acl_set_t *s, const char *list,
    klog_err_t *err);

/* Kafka's allow.everyone.if.no.acl.found: off by default. */
void klog_acl_allow_everyone_if_no_acl(klog_acl_set_t *s, int on);

/* Why a request was decided so (for a log line); the allowing ones
 * last. */
typedef enum klog_acl_verdict {
	KLOG_ACL_DENIED_NO_ACL,      /* no ACL names the resource */
	KLOG_ACL_DENIED_NO_MATCH,    /* ACLs name it, none allows this */
	KLOG_ACL_DENIED_BY_ACL,      /* a DENY matched */
	KLOG_ACL_ALLOWED_BY_ACL,     /* an ALLOW matched, no DENY */
	KLOG_ACL_ALLOWED_SUPER_USER,
	KLOG_ACL_ALLOWED_NO_ACL      /* no ACL names it, and allow-everyone */
} klog_acl_verdict_t;

/*
 * Decide whether principal (never NULL: an unauthenticated client is
 * Kafka's "User:ANONYMOUS"), connected from host (NULL: matches only "*"
 * hosts), may do op on the resource of type res named name (NULL for the
 * cluster).  *acl (acl may be NULL) is the ACL that decided, for the two
 * _BY_ACL verdicts, else NULL.  Never fails, never allocates.
 */
klog_acl_verdict_t klog_acl_decide(const klog_acl_set_t *s,
    const char *principal, const char *host, klog_acl_op_t op,
    klog_acl_res_t res, const char *name, const klog_acl_t **acl);

/* 1 if klog_acl_decide() allows, else 0. */
int klog_acl_authorize(const klog_acl_set_t *s, const char *principal,
    const char *host, klog_acl_op_t op, klog_acl_res_t res,
    const char *name);

/*
 * Whether principal may do op on some resource of type res (Kafka 2.8's
 * authorizeByResourceType, KIP-679: an idempotent producer needs WRITE
 * on any topic): a super user may; a matching DENY of the LITERAL "*"
 * refuses, a matching ALLOW of it allows; else an ALLOW that no matching
 * DENY covers (a PREFIXED one a prefix of its name, a LITERAL one of a
 * LITERAL name the same) allows.  With no ACL of the type at all,
 * allow.everyone.if.no.acl.found decides.
 */
int klog_acl_authorize_any(const klog_acl_set_t *s, const char *principal,
    const char *host, klog_acl_op_t op, klog_acl_res_t res);

#endif
