/*
 * A broker in a cluster decides by the ACLs in ZooKeeper, where Kafka
 * keeps them (zkacls.h, written by klog-group -Z acls), when it runs with
 * --zk-acls: they are read at start and again whenever a watch says an ACL
 * node was added, changed or removed, or a new session begins, and put in
 * force whole (authz.h's klog_authz_replace()), without a restart.
 *
 * A node that is not Kafka's JSON fails the start, naming it, as a bad
 * line of an ACL file does; later it keeps the ACLs in force, with a
 * warning naming it each time the ACLs are read again, until it is fixed
 * (leaving it out instead could drop a DENY).  Entries klog has no word
 * for never decide (zkacls.h); their count is logged.
 */
#ifndef KLOG_ZKAUTHZ_H
#define KLOG_ZKAUTHZ_H

#include "klog/auth/authz.h"
#include "klog/base/logger.h"
#include "klog/zk/zk.h"

typedef struct klog_zkauthz klog_zkauthz_t;

/* Read the ACLs into a now (their type nodes made first, so that they can
 * be watched) and watch them: 0, or the error (-KLOG_ECORRUPT for a bad
 * node, -KLOG_EDENIED...).  *out is the caller's. */
int klog_zkauthz_new(klog_zk_t *zk, klog_authz_t *a, klog_logger_t log,
    klog_zkauthz_t **out, klog_err_t *err);

/* Take ev if it is about the ACL nodes (1), reading them again; 0 if not.
 * A new session reads them again too (and lets others see the event: 0). */
int klog_zkauthz_event(klog_zkauthz_t *z, const klog_zk_event_t *ev);

void klog_zkauthz_free(klog_zkauthz_t *z);

#endif
