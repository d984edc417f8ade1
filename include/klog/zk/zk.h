/*
 * A ZooKeeper session for klog, over libzookeeper_mt.
 *
 * Calls are synchronous: each is one round trip made from the owner's
 * thread.  One made while the session is not connected fails at once with
 * -KLOG_ECONN (the library would hold it until its next connect attempt
 * ended, seconds later when the server is cut off); so does one made while
 * the owner's pings (klog_zk_ping()) have gone unanswered for half the
 * session timeout, when the connection is most likely dead although the
 * library has not noticed yet.  A loop that must never wait on ZooKeeper
 * pings, and uses the asynchronous calls for what it must not skip
 * (zkasync.h).
 * Watches and session changes
 * never run owner code on the library's threads: its callbacks only copy a
 * small event into a mutex-guarded queue and bump an eventfd, which the owner
 * adds to its epoll or poll set (klog_zk_event_fd()) and drains with
 * klog_zk_next_event() on its own thread.
 *
 * Watches are one-shot, as in ZooKeeper: to keep watching, call the same
 * watched read again when its event arrives (that read both returns the
 * current state and arms the next watch, so nothing is missed between them).
 *
 * Session expiry: the library handle is dead after it.  klog_zk_next_event()
 * then closes it, opens a new session on the same klog_zk_t and reports
 * KLOG_ZK_EVENT_EXPIRED; once the new session is connected it reports
 * KLOG_ZK_EVENT_SESSION, and the owner re-creates its ephemeral nodes,
 * re-arms its watches and re-reads its state.
 *
 * A klog_zk_t belongs to one thread.  Error codes: -KLOG_ENOENT (no node),
 * -KLOG_EEXIST (node exists), -KLOG_EBUSY (not empty, or a version that
 * moved), -KLOG_ECONN (connection lost or no server reachable),
 * -KLOG_ETIMEDOUT (operation or connect deadline), -KLOG_EZK (session
 * expired, or any other ZooKeeper error), -KLOG_EINVAL (bad path or
 * argument), -KLOG_EDENIED (a node's ACL refused: NOAUTH), -KLOG_EAUTH
 * (the server refused the session's digest), -KLOG_ENOMEM; err gets
 * "PATH: ZooKeeper's text".
 *
 * A session opened with a digest identity (klog_zk_open_auth()) creates
 * every node with the ACL zkacl.h chooses from its path; one without
 * creates them open to all.
 */
#ifndef KLOG_ZK_H
#define KLOG_ZK_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"

typedef struct klog_zk klog_zk_t;

#define KLOG_ZK_DEFAULT_SESSION_MS 6000   /* Kafka 0.7's zk.sessiontimeout.ms */
#define KLOG_ZK_PATH_MAX 1024

/*
 * Open a session to "host:port[,host:port...][/chroot]" and wait up to
 * connect_ms for it to be connected (-KLOG_ETIMEDOUT after that, -KLOG_ECONN
 * if no name resolves or the server refuses the session, -KLOG_EINVAL for a
 * malformed string).  session_ms is the requested session timeout (the
 * server clamps it: see klog_zk_session_ms()).  A missing chroot is created
 * first through a second, chroot-less session.  The library's own logging is
 * silenced.  On success *out is owned by the caller: klog_zk_close().
 */
int klog_zk_open(const char *connect, int session_ms, int connect_ms,
    klog_zk_t **out, klog_err_t *err);

/*
 * klog_zk_open() with ZooKeeper's digest identity auth ("user:password",
 * zkacl.h; NULL: none, as klog_zk_open()).  The identity is given to this
 * session and to every one that replaces an expired one, and the open waits
 * for the server's answer to it: -KLOG_EAUTH if refused.  auth is copied
 * (and wiped at close); it never appears in err.
 */
int klog_zk_open_auth(const char *connect, const char *auth, int session_ms,
    int connect_ms, klog_zk_t **out, klog_err_t *err);

/* End the session (its ephemeral nodes go at once) and free zk.  NULL ok. */
void klog_zk_close(klog_zk_t *zk);

/* The negotiated session timeout in ms, and the session id (the value of
 * an ephemeral node's owner, klog_zk_stat_t.ephemeral_owner). */
int klog_zk_session_ms(klog_zk_t *zk);
int64_t klog_zk_session_id(klog_zk_t *zk);

/* ---- events ---- */

enum klog_zk_event_type {
	KLOG_ZK_EVENT_CHILD = 1,     /* children of path changed, or it went */
	KLOG_ZK_EVENT_DATA,          /* path was created, changed or deleted */
	KLOG_ZK_EVENT_CONNECTED,     /* reconnected; session, ephemerals and
	                                watches survived */
	KLOG_ZK_EVENT_DISCONNECTED,  /* connection lost; the library reconnects
	                                by itself; calls fail meanwhile */
	KLOG_ZK_EVENT_EXPIRED,       /* session expired: its ephemerals and
	                                watches are gone; a new session is being
	                                opened (no ownership may be assumed) */
	KLOG_ZK_EVENT_SESSION,       /* the new session is connected: re-create
	                                ephemerals, re-arm watches, re-read */
	KLOG_ZK_EVENT_OVERFLOW,      /* the queue overflowed and events were
	                                lost: re-read and re-arm everything */
	KLOG_ZK_EVENT_REPLY,         /* the answer to an asynchronous call */
};

typedef struct klog_zk_event {
	int type;                    /* enum klog_zk_event_type */
	int zk_type;                 /* ZooKeeper's raw event type, for logs */
	char path[KLOG_ZK_PATH_MAX]; /* for CHILD, DATA and REPLY; "" otherwise */
	/* REPLY only: */
	uint64_t tag;                /* the call's */
	int rc;                      /* 0 or a code as the synchronous call's */
	int32_t version;             /* the node's data version after it, -1
	                                unknown */
	char *data;                  /* klog_zk_aget()'s, NUL-terminated, owned
	                                by the taker: free(); NULL otherwise */
	size_t len;
} klog_zk_event_t;

/* An eventfd that is readable while events are queued.  Poll it for
 * reading; do not read it yourself. */
int klog_zk_event_fd(const klog_zk_t *zk);

/*
 * Take the next event: 1 and *ev filled, 0 if none is queued (the eventfd is
 * then cleared), or a negative code if re-opening an expired session failed
 * at once (it is retried on the next call).  Call it until it returns 0 each
 * time the eventfd is readable.
 */
int klog_zk_next_event(klog_zk_t *zk, klog_zk_event_t *ev);

/* ---- nodes ---- */

typedef struct klog_zk_stat {
	int64_t ephemeral_owner;   /* owning session id, 0 if persistent */
	int64_t mtime_ms;
	int32_t version;           /* data version, for klog_zk_set/delete */
	int32_t data_length;
	int32_t num_children;
} klog_zk_stat_t;

/* Child names, sorted as strings (strcmp), as Kafka sorts them. */
typedef struct klog_zk_list {
	char **names;   /* owned: klog_zk_list_free() */
	size_t n;
} klog_zk_list_t;

void klog_zk_list_free(klog_zk_list_t *l);

enum klog_zk_create_flags {
	KLOG_ZK_EPHEMERAL = 1 << 0,
};

/* Create path and every missing parent as persistent empty nodes; an
 * existing node is success (mkdir -p). */
int klog_zk_mkdirs(klog_zk_t *zk, const char *path, klog_err_t *err);

/*
 * Create path with data[0..len) (data NULL: a node without data), ephemeral
 * with KLOG_ZK_EPHEMERAL; missing parents are created persistent.
 * -KLOG_EEXIST if it exists.
 */
int klog_zk_create(klog_zk_t *zk, const char *path, const void *data,
    size_t len, int flags, klog_err_t *err);

/*
 * Create an ephemeral node that must belong to this session.  If path exists:
 * owned by this session (a retry after a lost connection), its data is set
 * and 0 returned; owned by another session, which may be our own previous
 * incarnation that died less than a session timeout ago (Kafka's zombie
 * ephemeral), wait up to wait_ms for it to go and create it then; otherwise
 * -KLOG_EEXIST, with the current owner's data in err.
 */
int klog_zk_create_ephemeral(klog_zk_t *zk, const char *path,
    const void *data, size_t len, int wait_ms, klog_err_t *err);

/*
 * Read path's data into a new buffer *data (NUL-terminated for convenience,
 * *len excludes the NUL; a node without data gives "" and 0), owned by the
 * caller: free().  Never truncated.  st may be NULL.  With watch != 0 a
 * DATA event is queued when the node changes or goes (not armed if the node
 * does not exist: use klog_zk_exists() to wait for one to appear).
 */
int klog_zk_get(klog_zk_t *zk, const char *path, int watch, char **data,
    size_t *len, klog_zk_stat_t *st, klog_err_t *err);

/* 0 if path exists (*st filled if not NULL), -KLOG_ENOENT if not; with
 * watch != 0 a DATA event is queued when it is created, changed or
 * deleted, in both cases. */
int klog_zk_exists(klog_zk_t *zk, const char *path, int watch,
    klog_zk_stat_t *st, klog_err_t *err);

/* 1 if path's ACL lets anyone (world:anyone) change it or what is under
 * it (write, create, delete or admin), 0 if not, or a negative code. */
int klog_zk_world_writable(klog_zk_t *zk, const char *path, klog_err_t *err);

/* Set path's data if its version is still version (-1: any version;
 * -KLOG_EBUSY if it moved, -KLOG_ENOENT if it is missing). */
int klog_zk_set(klog_zk_t *zk, const char *path, const void *data,
    size_t len, int version, klog_err_t *err);

/* Set path's data, creating it (and its parents) persistent if missing. */
int klog_zk_put(klog_zk_t *zk, const char *path, const void *data,
    size_t len, klog_err_t *err);

/* Delete path at version (-1: any); -KLOG_EBUSY if it has children or the
 * version moved, -KLOG_ENOENT if missing. */
int klog_zk_delete(klog_zk_t *zk, const char *path, int version,
    klog_err_t *err);

/* Delete path and everything under it (depth first); a missing node is
 * success.  Not atomic: a node created meanwhile makes it -KLOG_EBUSY. */
int klog_zk_delete_tree(klog_zk_t *zk, const char *path, klog_err_t *err);

/*
 * The children of path, sorted, into *out (owned by the caller:
 * klog_zk_list_free()).  With watch != 0 a CHILD event is queued at the next
 * child created or deleted (armed only if path exists).
 */
int klog_zk_children(klog_zk_t *zk, const char *path, int watch,
    klog_zk_list_t *out, klog_err_t *err);

/* One operation of klog_zk_multi(). */
typedef struct klog_zk_op {
	int type;                  /* KLOG_ZK_OP_* */
	const char *path;
	const void *data;          /* create, set */
	size_t len;
	int version;               /* set, check, delete: -1 any */
	int flags;                 /* create: KLOG_ZK_EPHEMERAL */
} klog_zk_op_t;

enum klog_zk_op_type {
	KLOG_ZK_OP_CREATE = 1,
	KLOG_ZK_OP_SET,
	KLOG_ZK_OP_CHECK,
	KLOG_ZK_OP_DELETE,         /* a node without children */
};

/*
 * Run n operations as one transaction (ZooKeeper's multi): all of them or
 * none.  -KLOG_EEXIST (a create found its node), -KLOG_EBUSY (a version
 * moved), -KLOG_ENOENT (a node missing), err naming the failing op's path.
 */
int klog_zk_multi(klog_zk_t *zk, const klog_zk_op_t *ops, int n,
    klog_err_t *err);

#endif
