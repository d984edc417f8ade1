/*
 * The SCRAM users of a standalone broker (klog-serve --users FILE), as
 * klog-group users writes them: a text file, one line per user and
 * mechanism, sorted, each credential in Kafka's own text (scram.h), so
 * that a line's third field is what Kafka keeps for that user and
 * mechanism in ZooKeeper's /config/users:
 *
 *   # klog users: NAME MECHANISM CREDENTIAL (klog-group users); a secret
 *   alice SCRAM-SHA-256 salt=...,stored_key=...,server_key=...,iterations=4096
 *   alice SCRAM-SHA-512 salt=...,stored_key=...,server_key=...,iterations=4096
 *
 * Fields are separated by blanks (a name has none); lines that are blank
 * or start with '#' are skipped, and a save writes only the header line.
 * No password is kept, but a StoredKey and one recorded exchange give a
 * ClientKey (scram.h): the file is a secret, and one that others could
 * read or write is refused.  A save writes a temporary file beside it
 * (mode 0600, or the old file's mode and owner), syncs it, renames it
 * over the old one and syncs the directory: a reader sees the old file or
 * the new one, never a mix.
 */
#ifndef KLOG_USERS_H
#define KLOG_USERS_H

#include <stddef.h>

#include "klog/auth/scram.h"
#include "klog/base/error.h"

typedef struct klog_users klog_users_t;

/* A set of mechanisms, one bit each (1u << KLOG_SCRAM_SHA256...). */
#define KLOG_USERS_ALL ((1u << KLOG_SCRAM_MECHS) - 1)

/* A line as listed: no keys. */
typedef struct klog_users_entry {
	const char *name;        /* valid until the set changes */
	klog_scram_mech_t mech;
	int iterations;
} klog_users_entry_t;

/* An empty set; the caller owns *out.  0, or -KLOG_ENOMEM. */
int klog_users_new(klog_users_t **out, klog_err_t *err);

/*
 * Read path, strictly: -KLOG_ECORRUPT with "PATH:LINE: why" for a line
 * that is not NAME MECHANISM CREDENTIAL with each as it must be (never
 * showing the credential), or a user and mechanism given twice;
 * -KLOG_ENOENT for a missing file; -KLOG_EINVAL for a file that is not
 * regular or that others may read or write; -KLOG_EIO.  The caller owns
 * *out on success.
 */
int klog_users_load(const char *path, klog_users_t **out, klog_err_t *err);

/* Write u to path as above.  0, or -KLOG_EIO, -KLOG_ENOSPC (the old file
 * left as it was). */
int klog_users_save(const klog_users_t *u, const char *path,
    klog_err_t *err);

/*
 * Hold the lock of path's directory (flock) until klog_users_unlock(),
 * waiting for another writer's: a load, a change and a save under it
 * lose no one else's change.  Readers need none.  0 and *fd, or -KLOG_EIO.
 */
int klog_users_lock(const char *path, int *fd, klog_err_t *err);
void klog_users_unlock(int fd);

/* A name a user may have: scram.h's rules, and no '#' first (the line
 * would read as a comment).  0, or -KLOG_EINVAL with the reason. */
int klog_users_name_check(const char *name, klog_err_t *err);

/* Add or replace name's credential of cred->mech.  0, or -KLOG_EINVAL (a
 * bad name), -KLOG_ENOMEM. */
int klog_users_set(klog_users_t *u, const char *name,
    const klog_scram_cred_t *cred, klog_err_t *err);

/* Remove name's credentials of the mechanisms in mechs (KLOG_USERS_ALL
 * for every one): how many went, or -KLOG_ENOENT when none was there. */
int klog_users_remove(klog_users_t *u, const char *name, unsigned mechs,
    klog_err_t *err);

/* The lines, sorted by name, then mechanism. */
size_t klog_users_count(const klog_users_t *u);
void klog_users_get(const klog_users_t *u, size_t i, klog_users_entry_t *e);

/* A klog_scram_lookup_fn over a klog_users_t (arg). */
int klog_users_lookup(void *users, const char *name, klog_scram_mech_t m,
    klog_scram_cred_t *out);

/* Wipe the keys and free; NULL is fine. */
void klog_users_free(klog_users_t *u);

#endif
