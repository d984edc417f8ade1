/*
 * The broker's SASL logins (klog-security(7)): the users file
 * (klog-serve --users), taken up again without a restart when it
 * changes, the mechanisms its SASL_* listeners offer, the server secret
 * that unknown users' fake credentials come from, and the thread PLAIN's
 * PBKDF2 runs on.  The front ends (Kafka's, the native one) run the
 * exchanges with what klog_logins_sasl() and klog_logins_pool() give.
 */
#ifndef KLOG_LOGINS_H
#define KLOG_LOGINS_H

#include "klog/auth/sasl.h"
#include "klog/auth/saslpool.h"
#include "klog/auth/users.h"
#include "klog/base/error.h"
#include "klog/base/logger.h"
#include "klog/net/loop.h"

typedef struct klog_logins klog_logins_t;

/*
 * Read the users file (users.h: a bad or world-readable one is an error
 * naming it) and start the PLAIN thread, which wakes loop when a check is
 * done: the loop's wake callback must call klog_logins_drain().  The file
 * is looked at once a second and read again when it changed; a bad new
 * one keeps the users read before, with one warning on log.  users_file
 * NULL: no user until klog_logins_set_users() (a cluster's, from
 * ZooKeeper: zklogins.h).
 */
int klog_logins_open(klog_loop_t *loop, const char *users_file,
    unsigned mechs, klog_logger_t log, klog_logins_t **out, klog_err_t *err);

/* Log users in with u from now on (l's; the set before is freed). */
void klog_logins_set_users(klog_logins_t *l, klog_users_t *u);

/* The exchanges' configuration, valid until klog_logins_free(). */
const klog_sasl_config_t *klog_logins_sasl(klog_logins_t *l);
klog_saslpool_t *klog_logins_pool(klog_logins_t *l);

/* On the loop, when woken: answer the PLAIN logins checked. */
void klog_logins_drain(klog_logins_t *l);

/* Whether the users come from a file (else from klog_logins_set_users()). */
int klog_logins_from_file(const klog_logins_t *l);

/* How many users and credentials are loaded (for the start line). */
size_t klog_logins_count(const klog_logins_t *l);

/* NULL is fine.  Before the front ends that use it are freed, or after:
 * exchanges still on the thread are freed here. */
void klog_logins_free(klog_logins_t *l);

#endif
