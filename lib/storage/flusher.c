/* The flusher thread and its queues; see flusher.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/clock.h"
#include "klog/storage/flusher.h"

enum { FL_IDLE, FL_QUEUED, FL_RUNNING };

struct klog_flusher {
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	klog_flusher_wake_fn *wake;
	void *wake_arg;
	/* Each holds at most one entry per log; sized by reserve() so the
	 * thread never allocates. */
	klog_flusher_entry_t **queue, **work, **done;
	size_t nqueue, ndone, cap;
	/* Under mu: the flush times, observed by the thread when it takes
	 * the lock to report the batch, read by a scrape. */
	klog_promtext_hist_t fsync;
	uint64_t failures;         /* flushes that failed a sync, or were
	                              refused after one (-KLOG_ESTORAGE) */
	/* The loop's own: wants of this iteration. */
	klog_flusher_entry_t **wanted;
	size_t nwanted;
};

/*
 * Take the whole queue, fsync each log without the lock, report them done.
 * A log appended to while its flush ran is queued again (again), so one
 * fsync in flight plus one queued covers any number of appends.
 */
static void *
flusher_main(void *arg)
{
	klog_flusher_t *fl = arg;
	klog_flusher_entry_t **batch, *e;
	size_t n;

	pthread_mutex_lock(&fl->mu);
	for (;;) {
		while (fl->nqueue == 0 && !fl->stop)
			pthread_cond_wait(&fl->cv, &fl->mu);
		if (fl->nqueue == 0)
			break;
		batch = fl->queue;
		fl->queue = fl->work;
		fl->work = batch;
		n = fl->nqueue;
		fl->nqueue = 0;
		for (size_t i = 0; i < n; i++)
			batch[i]->state = FL_RUNNING;
		pthread_mutex_unlock(&fl->mu);
		for (size_t i = 0; i < n; i++) {
			int64_t t0 = klog_clock_mono_ns();

			e = batch[i];
			e->run_rc = klog_log_flush(e->log, &e->run_err);
			e->run_ns = klog_clock_mono_ns() - t0;
		}
		pthread_mutex_lock(&fl->mu);
		for (size_t i = 0; i < n; i++) {
			e = batch[i];
			klog_promtext_hist_observe(&fl->fsync, e->run_ns);
			fl->failures += e->run_rc == -KLOG_ESTORAGE;
			/* A failure not yet reported stays: a success after it
			 * would hide a sync failure, which is final (log.h). */
			if (!e->done || e->rc >= 0) {
				e->rc = e->run_rc;
				if (e->run_rc < 0)
					e->err = e->run_err;
			}
			if (!e->done) {
				e->done = 1;
				fl->done[fl->ndone++] = e;
			}
			if (e->again) {
				e->again = 0;
				e->state = FL_QUEUED;
				fl->queue[fl->nqueue++] = e;
			} else {
				e->state = FL_IDLE;
			}
		}
		pthread_mutex_unlock(&fl->mu);
		fl->wake(fl->wake_arg);
		pthread_mutex_lock(&fl->mu);
	}
	pthread_mutex_unlock(&fl->mu);
	return NULL;
}

int
klog_flusher_new(klog_flusher_wake_fn *wake, void *arg, klog_flusher_t **out)
{
	klog_flusher_t *fl = calloc(1, sizeof(*fl));

	*out = NULL;
	if (fl == NULL)
		return -KLOG_ENOMEM;
	pthread_mutex_init(&fl->mu, NULL);
	pthread_cond_init(&fl->cv, NULL);
	klog_promtext_hist_init(&fl->fsync, klog_promtext_latency_bounds,
	    klog_promtext_latency_nbounds);
	fl->wake = wake;
	fl->wake_arg = arg;
	if (pthread_create(&fl->thread, NULL, flusher_main, fl) != 0) {
		klog_flusher_free(fl);
		return -KLOG_ENOMEM;
	}
	/* Named for top -H, perf and ionice -p; here, not by the thread
	 * itself, so the name is there as soon as the broker is up. */
	pthread_setname_np(fl->thread, "klog-flush");
	fl->started = 1;
	*out = fl;
	return 0;
}

static int
grow_to(klog_flusher_entry_t ***p, size_t cap)
{
	klog_flusher_entry_t **q = realloc(*p, cap * sizeof(*q));

	if (q == NULL)
		return -1;
	*p = q;
	return 0;
}

int
klog_flusher_reserve(klog_flusher_t *fl, size_t n)
{
	size_t cap;
	int rc = 0;

	pthread_mutex_lock(&fl->mu);
	if (n <= fl->cap)
		goto out;
	cap = fl->cap ? fl->cap * 2 : 64;
	while (cap < n)
		cap *= 2;
	/* Each array that grew keeps its room even if a later one fails. */
	if (grow_to(&fl->queue, cap) < 0 || grow_to(&fl->work, cap) < 0 ||
	    grow_to(&fl->done, cap) < 0 || grow_to(&fl->wanted, cap) < 0)
		rc = -KLOG_ENOMEM;
	else
		fl->cap = cap;
out:
	pthread_mutex_unlock(&fl->mu);
	return rc;
}

void
klog_flusher_want(klog_flusher_t *fl, klog_flusher_entry_t *e)
{
	if (e->wanted)
		return;
	/* wanted has room for every entry (reserve()). */
	e->wanted = 1;
	fl->wanted[fl->nwanted++] = e;
}

void
klog_flusher_submit(klog_flusher_t *fl)
{
	int signal = 0;

	if (fl->nwanted == 0)
		return;
	pthread_mutex_lock(&fl->mu);
	for (size_t i = 0; i < fl->nwanted; i++) {
		klog_flusher_entry_t *e = fl->wanted[i];

		e->wanted = 0;
		if (e->state == FL_IDLE) {
			e->state = FL_QUEUED;
			fl->queue[fl->nqueue++] = e;
			signal = 1;
		} else if (e->state == FL_RUNNING) {
			e->again = 1;
		}
	}
	pthread_mutex_unlock(&fl->mu);
	fl->nwanted = 0;
	if (signal)
		pthread_cond_signal(&fl->cv);
}

size_t
klog_flusher_done(klog_flusher_t *fl, klog_flusher_done_fn *fn, void *arg)
{
	klog_flusher_entry_t *e;
	klog_err_t err;
	size_t n;
	int rc;

	pthread_mutex_lock(&fl->mu);
	n = fl->ndone;
	pthread_mutex_unlock(&fl->mu);
	/* done[] only grows under the lock, and only the loop shrinks it, so
	 * entries are read one at a time under the lock. */
	for (size_t i = 0; i < n; i++) {
		pthread_mutex_lock(&fl->mu);
		e = fl->done[i];
		e->done = 0;
		rc = e->rc;
		err = e->err;
		pthread_mutex_unlock(&fl->mu);
		fn(arg, e->owner, rc, &err);
	}
	if (n == 0)
		return 0;
	pthread_mutex_lock(&fl->mu);
	/* Entries added meanwhile move to the front for the next wakeup. */
	memmove(fl->done, fl->done + n, (fl->ndone - n) * sizeof(*fl->done));
	fl->ndone -= n;
	pthread_mutex_unlock(&fl->mu);
	return n;
}

int
klog_flusher_holds(klog_flusher_t *fl, const klog_flusher_entry_t *e)
{
	int held;

	if (e->wanted)
		return 1;
	pthread_mutex_lock(&fl->mu);
	held = e->state != FL_IDLE || e->done;
	pthread_mutex_unlock(&fl->mu);
	return held;
}

void
klog_flusher_fsync_hist(klog_flusher_t *fl, klog_promtext_hist_t *out)
{
	pthread_mutex_lock(&fl->mu);
	*out = fl->fsync;
	pthread_mutex_unlock(&fl->mu);
}

uint64_t
klog_flusher_failures(klog_flusher_t *fl)
{
	uint64_t n;

	pthread_mutex_lock(&fl->mu);
	n = fl->failures;
	pthread_mutex_unlock(&fl->mu);
	return n;
}

void
klog_flusher_free(klog_flusher_t *fl)
{
	if (fl == NULL)
		return;
	if (fl->started) {
		pthread_mutex_lock(&fl->mu);
		fl->stop = 1;
		pthread_cond_signal(&fl->cv);
		pthread_mutex_unlock(&fl->mu);
		pthread_join(fl->thread, NULL);
	}
	pthread_mutex_destroy(&fl->mu);
	pthread_cond_destroy(&fl->cv);
	free(fl->queue);
	free(fl->work);
	free(fl->done);
	free(fl->wanted);
	free(fl);
}
