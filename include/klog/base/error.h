/*
 * Error codes shared by every libklog module.
 *
 * Library functions return 0 on success or a negative KLOG_E* code.  Where the
 * code alone would not tell a user what went wrong (which file, which offset),
 * the function also takes a klog_err_t and writes one line of context into it.
 * The library never prints and never exits: only the mains in cmd/ do.
 */
#ifndef KLOG_ERROR_H
#define KLOG_ERROR_H

#include <stddef.h>

enum klog_error {
	KLOG_OK = 0,
	KLOG_EINVAL,       /* invalid argument or input */
	KLOG_ENOMEM,       /* out of memory */
	KLOG_EIO,          /* an I/O system call failed */
	KLOG_ENOSPC,       /* no space left on device (or file size limit) */
	KLOG_ECORRUPT,     /* corrupt data: bad length, magic, codec or CRC */
	KLOG_EPARTIAL,     /* data ends inside an entry (a cut trailing entry) */
	KLOG_ERANGE,       /* offset outside the log's valid range */
	KLOG_ENOTBOUNDARY, /* offset is not the start of a message */
	KLOG_ETOPIC,       /* invalid topic name */
	KLOG_ENOTOPIC,     /* no such topic */
	KLOG_ENOPARTITION, /* no such partition */
	KLOG_EUNSUPPORTED, /* unsupported codec, API or version */
	KLOG_ETOOBIG,      /* message or request over a size limit */
	KLOG_ENOENT,       /* no such file or directory */
	KLOG_EEXIST,       /* already exists */
	KLOG_EPROTO,       /* malformed protocol data */
	KLOG_ECONN,        /* cannot connect, or the connection was lost */
	KLOG_ETIMEDOUT,    /* a deadline passed */
	KLOG_EZK,          /* ZooKeeper error */
	KLOG_EBUSY,        /* resource in use (locked, live group members) */
	KLOG_EBROKER,      /* the broker answered with an error code */
	KLOG_ECLOSED,      /* the peer closed or the object is shut down */
	KLOG_ENOTLEADER,   /* the broker does not lead that partition */
	KLOG_ENOREPLICAS,  /* fewer in-sync replicas than the topic's minimum */
	KLOG_EFENCED,      /* a leader epoch other than the current one */
	KLOG_ESTORAGE,     /* a sync failed: the log takes no more writes
	                      until a restart recovers it (log.h) */
	KLOG_EAUTH,        /* authentication failed: wrong credentials, or an
	                      unknown user, which must look the same */
	KLOG_EDENIED,      /* not authorized: who asked may not do that (the
	                      broker's ACLs, a ZooKeeper node's ACL) */
	KLOG_E_MAX
};

/* Text for a KLOG_E* code, positive or negative; never NULL. */
const char *klog_strerror(int err);

/* One line of context for an error, filled by the callee. */
typedef struct klog_err {
	int code;        /* the negative code that was returned */
	char msg[512];   /* "open /data/x-0: Permission denied"; empty if none */
} klog_err_t;

/*
 * An empty klog_err_t, as `= { 0 }` makes one but without zeroing all of
 * msg: in code run per record or per poll, that memset was a seventh of
 * klog-produce's CPU.
 */
#define KLOG_ERR_EMPTY(e) ((e)->code = 0, (e)->msg[0] = '\0')

/*
 * Record code and a printf-style message in e (which may be NULL) and return
 * code, so that a callee can write `return klog_err_set(e, -KLOG_EIO, ...)`.
 */
int klog_err_set(klog_err_t *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Map an errno value from a failed system call to a KLOG_E* code (negative). */
int klog_errno_code(int errnum);

/*
 * Record the system call that just failed, as klog_err_set() does: the code
 * is klog_errno_code(errno), the message "what path: <strerror(errno)>".
 * Either may be NULL: "path: ...", "what: ...", or the strerror text alone.
 * Call it before anything else can change errno.
 */
int klog_err_sys(klog_err_t *e, const char *what, const char *path);

/* The message in e if any, else klog_strerror(code). */
const char *klog_err_text(const klog_err_t *e, int code);

#endif
