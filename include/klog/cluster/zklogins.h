/*
 * A broker in a cluster logs its SASL users in from ZooKeeper, where
 * Kafka keeps them (zkusers.h: /config/users, written by klog-group -Z
 * users): read at start, and again whenever a user node is added,
 * changed or removed (watches), or a new session begins.  A node that is
 * not Kafka's JSON, or a credential that does not parse, is left out with
 * a warning naming the user, never a key.
 */
#ifndef KLOG_ZKLOGINS_H
#define KLOG_ZKLOGINS_H

#include "klog/base/logger.h"
#include "klog/broker/logins.h"
#include "klog/zk/zk.h"

typedef struct klog_zklogins klog_zklogins_t;

/* Read the users into l now (an error if ZooKeeper cannot be read, e.g.
 * -KLOG_EDENIED without the identity) and watch them.  *out is the
 * caller's. */
int klog_zklogins_new(klog_zk_t *zk, klog_logins_t *l, klog_logger_t log,
    klog_zklogins_t **out, klog_err_t *err);

/* Take ev if it is about the users (1), reading them again; 0 if not.  A
 * new session re-reads too (and lets others see the event: 0). */
int klog_zklogins_event(klog_zklogins_t *z, const klog_zk_event_t *ev);

void klog_zklogins_free(klog_zklogins_t *z);

#endif
