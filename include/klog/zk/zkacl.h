/*
 * klog's ZooKeeper identity and the ACLs of the nodes it creates, as
 * Kafka's zookeeper.set.acl: a digest credential "user:password" read from
 * a file (--zk-auth-file), given to every session (zk.h), and the ACL each
 * created node gets from its path.
 *
 * Debian's ZooKeeper C client has neither TLS nor SASL, so the digest is
 * sent in clear (klog-security(7)): the ACLs keep out those who reach the
 * ensemble without the secret, not those who can read its traffic.
 *
 * With an identity, a node klog creates may be changed only by that
 * identity (ZooKeeper's "auth" ACL: every session authenticated as the
 * same user:password) and read by anyone, with two exceptions:
 *
 *   /consumers, /consumers/...      open to all: the paper's consumer
 *                                   groups register and commit there with
 *                                   or without the identity (Kafka too
 *                                   left /consumers open)
 *   /config/users, /config/users/...  the identity alone, reading too:
 *                                   SCRAM credentials are secrets
 *
 * Without an identity every node is open, as before.
 */
#ifndef KLOG_ZKACL_H
#define KLOG_ZKACL_H

#include <stddef.h>

#include "klog/base/error.h"

/* The longest "user:password" taken, and the buffer that holds it. */
#define KLOG_ZKACL_AUTH_MAX 1024
#define KLOG_ZKACL_AUTH_SIZE (KLOG_ZKACL_AUTH_MAX + 1)

/* Where Kafka keeps SCRAM users in ZooKeeper; and the paper's consumer
 * groups, layout.h's KLOG_LAYOUT_CONSUMERS (not included here: layout.c
 * calls zk.c, which calls this). */
#define KLOG_ZKACL_USERS "/config/users"
#define KLOG_ZKACL_CONSUMERS "/consumers"

/*
 * Read the digest credential from path into buf (KLOG_ZKACL_AUTH_SIZE
 * bytes, NUL-terminated): the file holds one line "user:password" (a
 * newline at its end optional), the user not empty, the password not
 * empty and split from it at the first ':', no control byte.  Refused
 * (-KLOG_EINVAL) when it is not a regular file or others may read or
 * write it, as the users file (users.h).  Messages never quote the file's
 * bytes; buf is wiped on failure, and the caller wipes it after use
 * (explicit_bzero).
 */
int klog_zkacl_auth_load(const char *path, char *buf, size_t size,
    klog_err_t *err);

/* The same rules for a credential already in memory (0 or -KLOG_EINVAL,
 * err saying what is wrong without quoting it). */
int klog_zkacl_auth_check(const char *cred, klog_err_t *err);

enum klog_zkacl_kind {
	KLOG_ZKACL_OPEN = 0,       /* anyone may do anything */
	KLOG_ZKACL_CREATOR_READ,   /* the identity everything, others read */
	KLOG_ZKACL_CREATOR_ONLY,   /* the identity alone: secrets */
};

/* The ACL of a node created at path (relative to the chroot) by a session
 * with (secure != 0) or without a digest identity. */
int klog_zkacl_for(const char *path, int secure);

#endif
