/*
 * A broker's place in a cluster: its registrations in ZooKeeper (layout.h's
 * Kafka 0.7 layout), kept up for as long as it serves, and its replicated
 * partitions (zkrepl.h: elections, following, ISR writes), which are not
 * registered in the 0.7 layout.
 *
 *   /brokers/ids/<id>               "<host>-<ms>:<host>:<port>"  ephemeral
 *   /brokers/topics/<topic>/<id>    partition count             ephemeral
 *
 * Every topic of the store is registered at open, and every topic created
 * later through klog_zkbroker_topic() (the broker's topic_created hook).
 * The session's event fd is a file event of the broker's loop, so all of
 * this runs on the loop thread: a lost connection is logged and waited out
 * (the session, and so the nodes, usually survive it, as they survive a
 * ZooKeeper restart); an expired session is followed by a new one on which
 * everything is registered again.  A registration that failed (ZooKeeper
 * was unreachable just then) is retried every second until it succeeds.
 *
 * ZooKeeper's calls are synchronous: while the server stalls, the loop
 * waits for at most about two thirds of the session timeout per call.
 *
 * With a digest identity (cfg.auth), as Kafka's zookeeper.set.acl, the
 * broker creates at open the roots every other node hangs from, so that
 * they carry the identity's ACL (zkacl.h) before a tool without it could
 * make them open: /brokers/ids, /brokers/topics, /klog/topics,
 * /klog/kafka/brokers, /admin/delete_topics, /config/users, and
 * /consumers, which stays open to all.  Without one it logs once that its
 * nodes are world-writable.
 */
#ifndef KLOG_ZKBROKER_H
#define KLOG_ZKBROKER_H

#include <stdint.h>

#include "klog/base/error.h"
#include "klog/broker/broker.h"

typedef struct klog_zkbroker klog_zkbroker_t;

/* Kafka's replica.lag.time.max.ms. */
#define KLOG_ZKBROKER_DEFAULT_LAG_MS 10000

typedef struct klog_zkbroker_config {
	const char *connect;        /* "host:port[,...][/chroot]" */
	const char *auth;           /* ZooKeeper's digest "user:password"
	                               (zkacl.h), or NULL; read at open
	                               only: the session keeps a copy */
	int session_ms;             /* requested session timeout */
	int connect_ms;             /* at open: give up connecting after it */
	int32_t broker_id;
	klog_broker_log_fn *log;    /* NULL: silent */
	void *log_arg;
	int log_level;              /* as klog_broker_config_t's */
	int64_t replica_lag_ms;     /* --replica-lag-time; 0: the default */
	int unclean_election;       /* --unclean-leader-election */
} klog_zkbroker_config_t;

/*
 * Open a session (retrying for up to connect_ms: -KLOG_ETIMEDOUT or
 * -KLOG_ECONN after that, -KLOG_EINVAL for a malformed connect string),
 * register broker b under cfg->broker_id at its advertised address and
 * every topic it holds, and watch the session from b's loop
 * (-KLOG_EAUTH: the server refused cfg->auth; -KLOG_EDENIED: a node's ACL
 * wants another identity).  A node left
 * by this id's previous session is waited for up to a session timeout (a
 * quick restart); an id that another live broker holds is -KLOG_EEXIST,
 * err naming the holder.  b must stay open until klog_zkbroker_close().
 * On success *out is the caller's.
 */
int klog_zkbroker_open(klog_broker_t *b, const klog_zkbroker_config_t *cfg,
    klog_zkbroker_t **out, klog_err_t *err);

/* Register (or update) topic with its partition count; a failure is
 * logged and retried later.  On the loop thread, or before run. */
void klog_zkbroker_topic(klog_zkbroker_t *zb, const char *topic,
    int partitions);

/* Stop watching and end the session, so the broker's nodes go at once;
 * then free zb.  NULL is fine. */
void klog_zkbroker_close(klog_zkbroker_t *zb);

#endif
