/*
 * Kafka's ACLs in ZooKeeper, where its ZooKeeper-mode authorizer
 * (AclAuthorizer, kafka.zk.ZkAclStore) keeps them: one persistent node per
 * resource pattern, holding every ACL of that pattern,
 *
 *   /kafka-acl/<Type>/<name>                    LITERAL patterns
 *   /kafka-acl-extended/prefixed/<Type>/<name>  PREFIXED patterns
 *     {"version":1,"acls":[{"principal":"User:alice",
 *      "permissionType":"Allow","operation":"Read","host":"*"}]}
 *
 * <Type> is Topic, Group or Cluster (the cluster's one node is
 * kafka-cluster), <name> the resource name as it is, so a name holding '/'
 * or being "." or ".." cannot be kept here.  Operations and permissions
 * are written with Kafka's names (Read, ClusterAction, Allow, Deny) and
 * read in any case, as Kafka reads them.
 *
 * An entry klog has no word for is kept as it is, written back unchanged
 * by an edit, and left out of the set klog decides by: an operation klog
 * never checks (AlterConfigs, IdempotentWrite, CreateTokens,
 * DescribeTokens), a principal of another type than User
 * (klog's principals are all User:, so it could never match one), a host
 * that is no address (Kafka compares hosts as text with the client's
 * address, so it never matches either).  Leaving such an entry out can
 * therefore allow nothing that Kafka would refuse.  Anything else that is
 * not Kafka's JSON (another version, a key missing, a permission that is
 * neither Allow nor Deny, an unknown operation, an ACL acl.h refuses)
 * refuses the whole node, with the reason.
 *
 * The nodes get zkacl.h's ACL for their path: with a digest identity the
 * identity alone writes and anyone reads, as Kafka's ACL nodes under
 * zookeeper.set.acl (they are not secret: Kafka's own brokers and
 * kafka-acls --list read them).  A writer without an identity would leave
 * them open to all, so klog-group refuses to write without one.
 *
 * Kafka's change notifications (/kafka-acl-changes/acl_changes_N,
 * /kafka-acl-extended-changes/acl_changes_N) are not written: klog
 * brokers watch the ACL nodes themselves, and the notifications would
 * pile up, since only a Kafka broker deletes old ones.
 */
#ifndef KLOG_ZKACLS_H
#define KLOG_ZKACLS_H

#include <stddef.h>
#include <stdint.h>

#include "klog/auth/acl.h"
#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/zk/zk.h"

#define KLOG_ZKACLS_LITERAL "/kafka-acl"
#define KLOG_ZKACLS_EXTENDED "/kafka-acl-extended"
#define KLOG_ZKACLS_PREFIXED KLOG_ZKACLS_EXTENDED "/prefixed"

/* How often klog_zkacls_edit() reads and writes again when another writer
 * came between. */
#define KLOG_ZKACLS_TRIES 8

/* One entry of a node, as Kafka wrote it. */
typedef struct klog_zkacls_entry {
	char *principal, *perm, *op, *host;  /* Kafka's strings, owned */
	int known;                           /* acl holds it */
	klog_acl_t acl;
} klog_zkacls_entry_t;

/* One resource pattern's node: its entries and the data version read. */
typedef struct klog_zkacls_node {
	klog_acl_res_t res;
	klog_acl_pattern_t pattern;
	char name[KLOG_ACL_NAME_MAX + 1];
	klog_zkacls_entry_t *e;
	size_t n, cap;
	int32_t version;      /* -1: no node (yet) */
} klog_zkacls_node_t;

/* Kafka's names in paths and in the JSON: "Topic", "ClusterAction",
 * "Allow"; NULL out of range. */
const char *klog_zkacls_res_name(klog_acl_res_t res);
const char *klog_zkacls_op_name(klog_acl_op_t op);
const char *klog_zkacls_perm_name(klog_acl_perm_t perm);

/* The node of a pattern's type ("/kafka-acl/Topic") into buf; and of a
 * pattern (-KLOG_EINVAL with err when name cannot be a node's name). */
int klog_zkacls_type_path(klog_acl_res_t res, klog_acl_pattern_t pattern,
    char *buf, size_t size);
int klog_zkacls_path(klog_acl_res_t res, klog_acl_pattern_t pattern,
    const char *name, char *buf, size_t size, klog_err_t *err);

/* An empty node of a pattern (version -1; name is cut to fit); and its
 * entries freed, back to that. */
void klog_zkacls_node_init(klog_zkacls_node_t *n, klog_acl_res_t res,
    klog_acl_pattern_t pattern, const char *name);
void klog_zkacls_node_clear(klog_zkacls_node_t *n);

/*
 * Add a (validated first, its resource the node's) with Kafka's names: 1
 * added, 0 there already, -KLOG_EINVAL (err says why), -KLOG_ENOMEM.
 */
int klog_zkacls_node_add(klog_zkacls_node_t *n, const klog_acl_t *a,
    klog_err_t *err);
/* Remove the known entries f matches; how many. */
size_t klog_zkacls_node_remove(klog_zkacls_node_t *n,
    const klog_acl_filter_t *f);

/* The node's JSON; and back into n's entries (n's pattern says what the
 * ACLs are on), strict as above: 0, -KLOG_EINVAL with err, -KLOG_ENOMEM. */
int klog_zkacls_encode(klog_buf_t *b, const klog_zkacls_node_t *n);
int klog_zkacls_parse(const char *s, size_t len, klog_zkacls_node_t *n,
    klog_err_t *err);

/*
 * Read n's node (n initialised with its pattern; watched if watch):
 * 0, -KLOG_ENOENT (none: n empty, version -1), -KLOG_ECORRUPT (not
 * Kafka's JSON: err names the path and says why).
 */
int klog_zkacls_read(klog_zk_t *zk, klog_zkacls_node_t *n, int watch,
    klog_err_t *err);

/*
 * Write n at the version it was read at: created (with its parents) when
 * -1, deleted when no entry is left.  -KLOG_EEXIST, -KLOG_EBUSY or
 * -KLOG_ENOENT when another writer came between, -KLOG_EDENIED.
 */
int klog_zkacls_write(klog_zk_t *zk, const klog_zkacls_node_t *n,
    klog_err_t *err);

/*
 * Read a pattern's node, let fn change it, write it back; redone, up to
 * KLOG_ZKACLS_TRIES times, when another writer came between.  fn returns
 * 1 to have the node written, 0 when it changed nothing, or a negative
 * code, which is returned.  0, or the error.
 */
typedef int (*klog_zkacls_edit_fn)(klog_zkacls_node_t *n, void *arg,
    klog_err_t *err);
int klog_zkacls_edit(klog_zk_t *zk, klog_acl_res_t res,
    klog_acl_pattern_t pattern, const char *name, klog_zkacls_edit_fn fn,
    void *arg, klog_err_t *err);

/*
 * The type nodes klog reads (Topic, Group, Cluster; prefixed Topic and
 * Group), created where missing, so that their children can be watched.
 */
int klog_zkacls_mkdirs(klog_zk_t *zk, klog_err_t *err);

/*
 * Every known ACL of every node into s (added to what it holds); with
 * watch, the type nodes' children and each node's data are watched.
 * *foreign (may be NULL) counts the entries left out.  A missing type
 * node has no ACLs.  0, or -KLOG_ECORRUPT for a node that is not Kafka's
 * (err names it), -KLOG_EDENIED, -KLOG_ENOMEM...
 */
int klog_zkacls_load(klog_zk_t *zk, int watch, klog_acl_set_t *s,
    size_t *foreign, klog_err_t *err);

/* Whether path is one of the nodes klog_zkacls_load() reads or watches. */
int klog_zkacls_owns(const char *path);

#endif
