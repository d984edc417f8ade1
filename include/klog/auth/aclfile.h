/*
 * The ACL file of a standalone broker (klog-serve --acls FILE), which
 * klog-group --acls FILE acls add|remove|list edits: one ACL a line,
 *
 *   # klog ACLs: permission operation resource pattern name [host=IP] principal
 *   allow read topic literal clicks User:alice
 *   allow describe group prefixed app- host=10.0.0.7 User:CN=app,O=Acme Corp
 *   deny write topic literal audit User:*
 *   allow cluster_action cluster literal kafka-cluster User:CN=broker-2,O=klog
 *
 * Fields are separated by blanks (spaces or tabs).  The first four are
 * words, in any case, with Kafka's names (acl.h; the operation also as
 * kafka-acls takes it, ClusterAction); the fifth the resource name ("*"
 * for every one); then, optionally, host=IP (else every host); then the
 * principal, which is the rest of the line: a DN's commas and spaces are
 * its own, only the blanks before it and at the end of the line are not.
 * So no quoting is needed, and none exists.  Blank lines and lines whose
 * first non-blank byte is '#' are comments.  A line is at most
 * KLOG_ACLFILE_LINE_MAX bytes.
 *
 * Loading is strict: the first bad line fails the whole file with
 * "FILE:LINE: why", so a broker never runs on half of what was meant; a
 * line repeated is one ACL.  The file is written sorted (acl.h's order),
 * in lower case, "host=" only for an address, with the comment line above
 * first; hand edits are kept as ACLs, not as text.
 *
 * A save writes FILE.tmp (mode 0600), fsyncs it, renames it over FILE and
 * fsyncs the directory: a reader (a broker reloading it) sees the old file
 * or the new one, never a mix.  An edit holds an flock(2) on FILE.lock
 * (kept, empty, mode 0600) from its load to its save, so two editors at
 * once do not lose each other's changes.  A file writable by group or
 * others is refused on load, as ssh refuses such key files: whoever can
 * write it can grant themselves everything.
 */
#ifndef KLOG_ACLFILE_H
#define KLOG_ACLFILE_H

#include <stddef.h>

#include "klog/auth/acl.h"
#include "klog/base/buf.h"
#include "klog/base/error.h"

#define KLOG_ACLFILE_LINE_MAX 2048

/*
 * Add the ACLs of text (len bytes; it need not end in a newline nor hold
 * a NUL) to s.  name stands for the file in messages.  0, or
 * -KLOG_ECORRUPT with err "NAME:LINE: why" (ACLs of the lines before may
 * have been added), -KLOG_ENOMEM.
 */
int klog_aclfile_parse(const char *name, const char *text, size_t len,
    klog_acl_set_t *s, klog_err_t *err);

/* One ACL as a line of the file, without the newline, into out; at most
 * KLOG_ACLFILE_LINE_MAX bytes. */
void klog_aclfile_line(const klog_acl_t *a, klog_buf_t *out);
/* The whole file's text for s: the comment line, then a line an ACL. */
void klog_aclfile_format(const klog_acl_set_t *s, klog_buf_t *out);

/*
 * Add the ACLs of the file at path to s.  -KLOG_ENOENT for a missing file,
 * -KLOG_ECORRUPT for a bad line, -KLOG_EINVAL for a file writable by
 * group or others or not a regular file, -KLOG_ETOOBIG over 64 MiB,
 * -KLOG_EIO; err says which and why.
 */
int klog_aclfile_load(const char *path, klog_acl_set_t *s, klog_err_t *err);

/*
 * An edit of the file at path: its lock taken (waiting for another
 * editor), then its ACLs loaded into a new set (*set), which the caller
 * changes and saves with klog_aclfile_save().  A missing file is an empty
 * set when create is set, else -KLOG_ENOENT.  Ends with
 * klog_aclfile_close() in every case, which frees the set and lets the
 * lock go.
 */
typedef struct klog_aclfile klog_aclfile_t;

int klog_aclfile_open(const char *path, int create, klog_aclfile_t **f,
    klog_acl_set_t **set, klog_err_t *err);
/* Write the set back, atomically (above).  0, or -KLOG_EIO, -KLOG_ENOSPC
 * with err naming the file. */
int klog_aclfile_save(klog_aclfile_t *f, klog_err_t *err);
void klog_aclfile_close(klog_aclfile_t *f);

#endif
