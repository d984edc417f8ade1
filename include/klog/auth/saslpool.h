/*
 * A thread for PLAIN's PBKDF2 (sasl.h's klog_sasl_check()), so that a
 * login that costs milliseconds never holds the event loop.  One worker,
 * a bounded queue: a flood of PLAIN logins waits here (or is refused when
 * the queue is full) while the loop goes on serving everyone else.
 */
#ifndef KLOG_SASLPOOL_H
#define KLOG_SASLPOOL_H

#include "klog/auth/sasl.h"

#define KLOG_SASLPOOL_QUEUE 256    /* checks waiting or done, at most */

typedef struct klog_saslpool klog_saslpool_t;
typedef struct klog_saslpool_job klog_saslpool_job_t;

/* Start the worker; notify(arg) runs on it after each check (to wake the
 * loop).  0, or -KLOG_ENOMEM. */
int klog_saslpool_new(void (*notify)(void *), void *arg,
    klog_saslpool_t **out);

/* Check s (which answered KLOG_SASL_SLOW); once checked, drain calls
 * done(tag, s), the caller owning s again.  The pool holds s until then,
 * or until the job is cancelled.  0 and *job, or -KLOG_EBUSY when the
 * queue is full (s stays the caller's). */
int klog_saslpool_submit(klog_saslpool_t *p, klog_sasl_t *s,
    void (*done)(void *tag, klog_sasl_t *s), void *tag,
    klog_saslpool_job_t **job);

/* The job's owner is gone: its exchange is freed, done or not. */
void klog_saslpool_cancel(klog_saslpool_t *p, klog_saslpool_job_t *job);

/* An exchange's owner is gone: s is freed now, or, while job (NULL: none)
 * is in flight, by the pool once it is checked. */
void klog_saslpool_release(klog_saslpool_t *p, klog_saslpool_job_t *job,
    klog_sasl_t *s);

/* On the loop: hand each checked job's exchange back to its done(). */
void klog_saslpool_drain(klog_saslpool_t *p);

/* Stop the worker and free every job.  NULL is fine. */
void klog_saslpool_free(klog_saslpool_t *p);

#endif
