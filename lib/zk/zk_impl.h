/*
 * The ZooKeeper session's insides, shared by lib/zk/zk.c (the session, its
 * events and the synchronous calls) and lib/zk/zkasync.c (liveness and the
 * asynchronous calls).  Nothing outside lib/zk/ includes this.
 */
#ifndef KLOG_ZK_IMPL_H
#define KLOG_ZK_IMPL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <zookeeper/zookeeper.h>

#include "klog/zk/zk.h"

#define QUEUE_CAP 256

struct qev {
	int type;
	int zk_type;
	unsigned gen;   /* of the handle that reported it */
	char *path;     /* owned, may be NULL */
	uint64_t tag;   /* a REPLY's: */
	int rc;
	int32_t version;
	char *data;     /* owned, may be NULL */
	size_t len;
};

/* An asynchronous call in flight: the library holds it until its
 * completion runs, which frees it (also when the handle closes). */
struct acall {
	klog_zk_t *zk;
	uint64_t tag;
	int64_t sent_ms;
	char path[];
};

struct klog_zk {
	zhandle_t *zh;        /* NULL after a failed re-open */
	char *hosts;          /* the connect string, chroot included */
	char *auth;           /* the digest "user:password", or NULL:
	                         wiped and freed at close */
	struct ACL creator_read[2];        /* the identity all, anyone read */
	struct ACL_vector creator_read_v;  /* over creator_read */
	int session_ms;       /* as requested */
	int efd;
	pthread_mutex_t mu;   /* guards everything below */
	pthread_cond_t cv;    /* signalled on every session state change */
	unsigned gen;         /* bumped at each new handle */
	int state;            /* last session state of zh */
	int connects;         /* CONNECTED events seen on zh */
	int renewed;          /* zh replaced an expired session */
	int auth_done;        /* zh's digest was answered: */
	int auth_rc;          /* ZooKeeper's code for it */
	int overflow;
	int64_t heard_ms;     /* the server surely heard from us then */
	int pinging;          /* the owner pings: calls check heard_ms */
	int ping_out;         /* a ping is in flight */
	struct qev q[QUEUE_CAP];
	size_t head, count;
};

/* Queue an event (under zk->mu); takes in->data. */
void zk_push_ev_locked(klog_zk_t *zk, const struct qev *in, const char *path);
/* ZooKeeper's code as a KLOG_E* one; err set from it for path. */
int zk_map_rc(int rc);
int zk_fail(klog_err_t *err, int rc, const char *path);
/* The live handle (re-opening one a failed renewal left missing), or
 * NULL; whether a synchronous call may be made now (zk.h). */
zhandle_t *zk_handle(klog_zk_t *zk);
int zk_usable(klog_zk_t *zk);

#define NEED_HANDLE(zk, path, err) do { \
	if (zk_handle(zk) == NULL) \
		return klog_err_set(err, -KLOG_ECONN, "%s: no session", path); \
	if (!zk_usable(zk)) \
		return klog_err_set(err, -KLOG_ECONN, "%s: not connected to " \
		    "ZooKeeper", path); \
} while (0)

#endif
