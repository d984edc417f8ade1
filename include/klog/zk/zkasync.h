/*
 * A ZooKeeper session's liveness and its asynchronous calls: for a loop
 * that must never wait on ZooKeeper (zk.h has the session).  Functions of
 * the session, so they keep its klog_zk_ names.
 */
#ifndef KLOG_ZKASYNC_H
#define KLOG_ZKASYNC_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/zk/zk.h"

/* ---- liveness ---- */

/*
 * Send a ping (an exists of "/") unless one is in flight, without waiting.
 * An answered ping proves the server heard from this session when it was
 * sent, so the session cannot expire before that moment plus its timeout.
 * Once pinged, synchronous calls refuse at once while pings go unanswered
 * (zk.h).
 */
void klog_zk_ping(klog_zk_t *zk);

/* Milliseconds since the server last certainly heard from this session:
 * the sending of the newest answered ping, or the last (re)connect. */
int64_t klog_zk_quiet_ms(klog_zk_t *zk);

/* ---- asynchronous calls ---- */

/*
 * These never wait: 0 once sent (the answer comes as a KLOG_ZK_EVENT_REPLY
 * carrying tag, path and the code the synchronous call would return), or
 * an error at once if it could not be sent (not connected: -KLOG_ECONN).
 * A reply of -KLOG_ECONN or -KLOG_ETIMEDOUT means the call may or may not
 * have been applied: read the node back before deciding.
 */
int klog_zk_aget(klog_zk_t *zk, const char *path, uint64_t tag,
    klog_err_t *err);
int klog_zk_aset(klog_zk_t *zk, const char *path, const void *data,
    size_t len, int version, uint64_t tag, klog_err_t *err);

#endif
