/*
 * The time indexer's thread (indexer.h): passes over the store's logs,
 * each held (store.h) while its segments are read, so that a deletion of
 * its topic waits for the chunk in hand rather than closing the log under
 * the thread; paced between chunks by the clock while producers write.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "klog/base/clock.h"
#include "klog/base/error.h"
#include "klog/broker/indexer.h"
#include "klog/storage/log.h"

#define NS 1000000000LL
#define WRITES_QUIET_NS NS   /* paced until this long after the last write */
#define DROP_LOOK_NS (5 * 1000000LL)

struct klog_indexer {
	klog_indexer_config_t cfg;
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;         /* stop, and the end of a wait */
	atomic_int stop;
	atomic_int drop;           /* the held log is being deleted */
	atomic_llong writing_ns;   /* monotonic time of the last write */
	int64_t next_ns;           /* the thread's: when the next read may go */
	int64_t paced;             /* the thread's: cold bytes paced so far */
};

/* Sleep until the monotonic time at_ns, the stop, or a deletion of the
 * log held (looked at every few ms: the store cannot wake the thread, and
 * the loop waits for it). */
static void
wait_until(klog_indexer_t *ix, int64_t at_ns)
{
	struct timespec ts;
	int64_t t;

	pthread_mutex_lock(&ix->mu);
	while (!atomic_load(&ix->stop) && !atomic_load(&ix->drop) &&
	    (t = klog_clock_mono_ns()) < at_ns) {
		t = t + DROP_LOOK_NS < at_ns ? t + DROP_LOOK_NS : at_ns;
		ts = (struct timespec){ t / NS, t % NS };
		(void)pthread_cond_timedwait(&ix->cv, &ix->mu, &ts);
	}
	pthread_mutex_unlock(&ix->mu);
}

/* After each chunk: the cold bytes it read take their turn at the rate
 * while producers write; then go on unless told to stop or let go. */
static int
pace(void *arg, const klog_log_index_stats_t *st)
{
	klog_indexer_t *ix = arg;
	int64_t now = klog_clock_mono_ns(), cold = st->cold - ix->paced;

	ix->paced = st->cold;
	if (cold > 0 && ix->cfg.rate > 0 &&
	    now - atomic_load(&ix->writing_ns) < WRITES_QUIET_NS) {
		if (ix->next_ns > now)
			wait_until(ix, ix->next_ns);
		else
			ix->next_ns = now;   /* no credit saved up while idle */
		ix->next_ns += (int64_t)((double)cold * NS /
		    (double)ix->cfg.rate);
	}
	return atomic_load(&ix->stop) || atomic_load(&ix->drop);
}

/* One pass over every log; *st gets what it read.  A segment that cannot
 * be read is said at level (a warning at the first pass only: each pass
 * finds it again). */
static void
pass(klog_indexer_t *ix, klog_log_index_stats_t *st, size_t *logs, int level)
{
	klog_log_t *log;
	klog_err_t err;
	int r;

	*st = (klog_log_index_stats_t){ 0 };
	ix->paced = 0;
	for (*logs = 0; !atomic_load(&ix->stop); (*logs)++) {
		if ((log = klog_store_hold(ix->cfg.store, *logs,
		    &ix->drop)) == NULL)
			break;
		KLOG_ERR_EMPTY(&err);
		r = klog_log_time_index(log, pace, ix, st, &err);
		klog_store_release(ix->cfg.store);
		atomic_store(&ix->drop, 0);   /* the store's no more */
		if (r < 0 && r != -KLOG_ECLOSED)
			klog_logger_say(&ix->cfg.log, level, "time "
			    "index: %s (lookups read it themselves)",
			    klog_err_text(&err, r));
	}
}

static void *
worker_main(void *arg)
{
	klog_indexer_t *ix = arg;
	klog_log_index_stats_t st;
	int64_t t0;
	size_t logs;
	int level = KLOG_LEVEL_INFO;

	while (!atomic_load(&ix->stop)) {
		t0 = klog_clock_mono_ns();
		pass(ix, &st, &logs, level == KLOG_LEVEL_INFO ?
		    KLOG_LEVEL_WARN : KLOG_LEVEL_DEBUG);
		if (!atomic_load(&ix->stop) && ((level == KLOG_LEVEL_INFO &&
		    logs > 0) || st.bytes > 0))
			klog_logger_say(&ix->cfg.log, level, "time index: %zu "
			    "segment%s of %zu partition%s indexed, %lld bytes "
			    "read (%lld from the disk) in %.3f s", st.segments,
			    st.segments == 1 ? "" : "s", logs, logs == 1 ?
			    "" : "s", (long long)st.bytes, (long long)st.cold,
			    (double)(klog_clock_mono_ns() - t0) / NS);
		level = KLOG_LEVEL_DEBUG;
		wait_until(ix, klog_clock_mono_ns() + ix->cfg.period_ms *
		    1000000);
	}
	return NULL;
}

int
klog_indexer_new(const klog_indexer_config_t *cfg, klog_indexer_t **out)
{
	klog_indexer_t *ix;
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	*out = NULL;
	if ((ix = calloc(1, sizeof(*ix))) == NULL)
		return -KLOG_ENOMEM;
	ix->cfg = *cfg;
	pthread_mutex_init(&ix->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ix->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* Signals are the main thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ix->thread, NULL, worker_main, ix);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		klog_indexer_free(ix);
		return -KLOG_EIO;
	}
	ix->started = 1;
	pthread_setname_np(ix->thread, "klog-indexer");
	*out = ix;
	return 0;
}

void
klog_indexer_writing(klog_indexer_t *ix)
{
	atomic_store(&ix->writing_ns, klog_clock_mono_ns());
}

void
klog_indexer_free(klog_indexer_t *ix)
{
	if (ix == NULL)
		return;
	if (ix->started) {
		pthread_mutex_lock(&ix->mu);
		atomic_store(&ix->stop, 1);
		pthread_cond_signal(&ix->cv);
		pthread_mutex_unlock(&ix->mu);
		pthread_join(ix->thread, NULL);
	}
	pthread_cond_destroy(&ix->cv);
	pthread_mutex_destroy(&ix->mu);
	free(ix);
}
