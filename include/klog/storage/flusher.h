/*
 * The flusher: a thread that runs klog_log_flush() (fsync) on the logs the
 * event loop hands it and wakes the loop when they are done.  One flush in
 * flight plus one queued covers any number of appends to a log: group
 * commit.
 *
 * Everything but the thread itself runs on the loop's thread: want() notes
 * a log during an iteration, submit() hands the iteration's logs over under
 * one lock, done() reports the finished ones.  The flusher never allocates
 * on its thread: reserve() sizes it for every entry first.
 */
#ifndef KLOG_FLUSHER_H
#define KLOG_FLUSHER_H

#include <stddef.h>

#include "klog/base/error.h"
#include "klog/base/promtext.h"
#include "klog/storage/log.h"

typedef struct klog_flusher klog_flusher_t;

/* One log's place in the flusher, embedded in its owner's structure. */
typedef struct klog_flusher_entry {
	klog_log_t *log;
	void *owner;               /* handed back by done() */
	int wanted;                /* the loop's: noted this iteration */
	/* Under the flusher's lock. */
	int state;
	int again;                 /* flush again: appended while running */
	int done;                  /* in the done list */
	int rc;
	klog_err_t err;
	/* The thread's own while it flushes this log. */
	int run_rc;
	klog_err_t run_err;
	int64_t run_ns;            /* how long it took */
} klog_flusher_entry_t;

/* Called (on the flusher's thread) after each batch of flushes. */
typedef void klog_flusher_wake_fn(void *arg);

/* Start the thread (named "klog-flush").  *out is the caller's:
 * klog_flusher_free().  -KLOG_ENOMEM if it could not start. */
int klog_flusher_new(klog_flusher_wake_fn *wake, void *arg,
    klog_flusher_t **out);

/* Room for n entries; -KLOG_ENOMEM otherwise (the old room stays). */
int klog_flusher_reserve(klog_flusher_t *fl, size_t n);

/* Ask for a flush of e at the end of this loop iteration. */
void klog_flusher_want(klog_flusher_t *fl, klog_flusher_entry_t *e);

/* Hand this iteration's wants to the thread. */
void klog_flusher_submit(klog_flusher_t *fl);

/* Report each entry flushed since the last call: fn(arg, owner, rc, err),
 * rc the latest flush's result, or the first failure since the last
 * report if there was one (a success never hides it).  Returns how
 * many. */
typedef void klog_flusher_done_fn(void *arg, void *owner, int rc,
    const klog_err_t *err);
size_t klog_flusher_done(klog_flusher_t *fl, klog_flusher_done_fn *fn,
    void *arg);

/*
 * Whether the flusher still has e: wanted this iteration, queued, being
 * flushed, or flushed and not yet reported by done().  Its owner may free
 * e (and close its log) only once it has not; on the loop's thread.
 */
int klog_flusher_holds(klog_flusher_t *fl, const klog_flusher_entry_t *e);

/* How long each klog_log_flush() took (its fsyncs), copied out of the
 * thread's histogram under its lock. */
void klog_flusher_fsync_hist(klog_flusher_t *fl, klog_promtext_hist_t *out);

/* How many flushes failed a sync (-KLOG_ESTORAGE) since the start. */
uint64_t klog_flusher_failures(klog_flusher_t *fl);

/* Stop the thread (after the flushes queued) and free fl; NULL is fine. */
void klog_flusher_free(klog_flusher_t *fl);

#endif
