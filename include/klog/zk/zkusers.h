/*
 * SCRAM users in ZooKeeper, where Kafka keeps them (kafka-configs
 * --entity-type users): one persistent node per user,
 *
 *   /config/users/<sanitized name>
 *     {"version":1,"config":{"SCRAM-SHA-256":"salt=...,stored_key=...,
 *      server_key=...,iterations=4096","SCRAM-SHA-512":"..."}}
 *
 * the name URL-encoded as Kafka's Sanitizer does (every byte but
 * A-Z a-z 0-9 . - _ as %XX), each value Kafka's credential text
 * (scram.h's klog_scram_cred_format()).  The config's entries are kept as
 * strings whatever their key, so a key Kafka adds (a quota) survives an
 * edit.  The nodes are secrets: made with the identity's ACL alone
 * (zkacl.h: /config/users), which a session without a digest identity
 * cannot give them, so writers need one (klog-group -Z --zk-auth-file).
 * Kafka's change notifications (/config/changes) are not written: a
 * broker watches /config/users itself.
 */
#ifndef KLOG_ZKUSERS_H
#define KLOG_ZKUSERS_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/zk/zk.h"
#include "klog/zk/zkacl.h"

#define KLOG_ZKUSERS_ROOT KLOG_ZKACL_USERS
#define KLOG_ZKUSERS_ENTRIES_MAX 16
#define KLOG_ZKUSERS_KEY_MAX 63
#define KLOG_ZKUSERS_NAME_MAX 255      /* a user name, unsanitized */

typedef struct klog_zkuser_entry {
	char key[KLOG_ZKUSERS_KEY_MAX + 1];   /* "SCRAM-SHA-256" */
	char *value;                          /* owned, wiped when freed */
} klog_zkuser_entry_t;

/* One user's node: its config and the data version it was read at. */
typedef struct klog_zkuser {
	klog_zkuser_entry_t e[KLOG_ZKUSERS_ENTRIES_MAX];
	int n;
	int32_t version;     /* -1: no node (yet) */
} klog_zkuser_t;

/* An empty user (version -1); and its values wiped and freed. */
void klog_zkuser_init(klog_zkuser_t *u);
void klog_zkuser_clear(klog_zkuser_t *u);

/* key's value, or NULL. */
const char *klog_zkuser_get(const klog_zkuser_t *u, const char *key);
/* Set key to value (a copy), adding it if missing: 0, -KLOG_EINVAL (a key
 * too long or empty), -KLOG_ETOOBIG (too many keys), -KLOG_ENOMEM. */
int klog_zkuser_set(klog_zkuser_t *u, const char *key, const char *value);
/* Remove key: 1 if it was there, 0 if not. */
int klog_zkuser_remove(klog_zkuser_t *u, const char *key);

/* The node's JSON, and back (strict: version 1, config an object of
 * strings); a value never appears in err. */
int klog_zkuser_encode(klog_buf_t *b, const klog_zkuser_t *u);
int klog_zkuser_parse(const char *s, size_t n, klog_zkuser_t *u,
    klog_err_t *err);

/* Kafka's Sanitizer: name URL-encoded into buf; and decoded back
 * (-KLOG_EINVAL for a bad %XX, -KLOG_ETOOBIG when it does not fit). */
int klog_zkusers_sanitize(const char *name, char *buf, size_t size);
int klog_zkusers_unsanitize(const char *s, char *buf, size_t size);

/*
 * Read name's node into *u (klog_zkuser_clear() it after): 0, or
 * -KLOG_ENOENT (no such user: *u empty, version -1), -KLOG_EDENIED (the
 * session lacks the identity), -KLOG_EINVAL (not Kafka's JSON).
 */
int klog_zkusers_read(klog_zk_t *zk, const char *name, klog_zkuser_t *u,
    klog_err_t *err);

/*
 * Write *u as name's node at the version it was read at: created when it
 * was -1, deleted when u has no entries left.  -KLOG_EEXIST or -KLOG_EBUSY
 * when another writer came between (read again and redo), -KLOG_EDENIED.
 */
int klog_zkusers_write(klog_zk_t *zk, const char *name,
    const klog_zkuser_t *u, klog_err_t *err);

/* The users there, unsanitized and sorted, into *out (klog_zk_list_free());
 * none when /config/users does not exist. */
int klog_zkusers_list(klog_zk_t *zk, klog_zk_list_t *out, klog_err_t *err);

#endif
