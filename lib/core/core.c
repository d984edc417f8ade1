/*
 * The broker core; see core.h for what it does and the staging of
 * appends.
 *
 * The core is cut in files, bottom up (no file calls one above it):
 *   topics.c      a hash of topic names, partitions made lazily
 *   parks.c       acks=all, long polls, OFFSETS waiting for a flush;
 *                 their items link into partitions
 *   idem.c        idempotent producers' state, checked and kept
 *   stage.c       produce sets held until the read is done
 *   offline.c     a failed sync: the storage failed for good
 *   replicated.c  replicated partitions (replica.c's rules applied)
 *   admin.c       topics created, grown and deleted; partitions dropped
 *   requests.c    PRODUCE, FETCH, OFFSETS, METADATA answers
 *   stats.c       the counters read out for the metrics
 *   core.c        (this file) flush results, the flush timer, open, close
 *
 * Memory on the hot path: items are the front end's (reused across
 * requests), and nothing is allocated per request unless it has to wait.
 */
#include <sys/uio.h>

#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/core/core.h"
#include "klog/storage/flusher.h"
#include "klog/storage/format.h"

#include "core_impl.h"



static void
topics_free(klog_core_t *c)
{
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct topic *t, *next;

		for (t = c->buckets[i]; t != NULL; t = next) {
			next = t->hnext;
			free(t->parts);
			free(t->name);
			free(t);
		}
	}
	free(c->buckets);
	for (size_t i = 0; i < c->nparts; i++) {
		core_rep_free_part(c->parts[i]);
		core_idem_save(c, c->parts[i]);
		core_idem_free(c->parts[i]);
		free(c->parts[i]->siov);
		free(c->parts[i]->sref);
		free(c->parts[i]);
	}
	free(c->parts);
	free(c->staged);
}

/* ---- flushes ---- */

/*
 * p's flushed end moved (or its flush failed): items whose target it
 * reached stop waiting; every waiter is looked at again.  On a failed flush
 * an acks=all item not covered gets STORAGE_ERROR; others just stop waiting
 * for a flush and answer with what is visible.
 */
static void
part_flushed(void *arg, void *owner, int rc, const klog_err_t *err)
{
	klog_core_t *c = arg;
	klog_core_part_t *p = owner;

	if (p->dying)  /* answered already; freed after this report */
		return;
	/* Its directory went behind the broker's back: dropped once the
	 * reports are done (admin.c). */
	if (rc == -KLOG_ENOENT && p->rep == NULL)
		c->gone = p->gone = 1;
	if (rc == -KLOG_ESTORAGE)
		core_storage_failed(c, p, err);
	else if (rc < 0 && !p->flush_failing)
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_ERROR, "topic \"%s\" "
		    "partition %d: flush: %s", p->topic->name, (int)p->id,
		    klog_err_text(err, rc));
	else if (rc == 0 && p->flush_failing)
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_INFO, "topic \"%s\" "
		    "partition %d: flushing again", p->topic->name,
		    (int)p->id);
	p->flush_failing = rc < 0;
	core_rep_flushed(c, p);
	core_part_moved(c, p, rc);
}

void
klog_core_on_wake(klog_core_t *c)
{
	klog_flusher_done(c->fl, part_flushed, c);
	core_after_flushes(c);
}

int
klog_core_before_sleep(klog_core_t *c)
{
	int appended = c->appended;

	c->appended = 0;
	klog_flusher_submit(c->fl);
	return appended;
}

/* ---- timers ---- */

/* The time policy: flush a log flush_ms after its last flush. */
static void
on_flush_tick(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_core_t *c = arg;
	int64_t now = klog_loop_now_ms();

	(void)loop;
	(void)t;
	for (size_t i = 0; i < c->nparts; i++) {
		klog_core_part_t *p = c->parts[i];

		if (klog_log_unflushed_messages(p->log) > 0 &&
		    now - klog_log_last_flush_ms(p->log) >= c->cfg.flush_ms &&
		    !klog_log_failed(p->log))
			core_want_flush(c, p);
	}
}

static int
start_timers(klog_core_t *c)
{
	int64_t tick = c->cfg.flush_ms / 4;

	if (c->cfg.flush_ms <= 0)
		return 0;
	tick = tick < 1 ? 1 : tick > 1000 ? 1000 : tick;
	return klog_loop_timer_start(c->loop, &c->flush_timer, tick, tick);
}

/* ---- open and close ---- */

static void
wake_loop(void *arg)
{
	klog_loop_wake(arg);
}

int
klog_core_new(klog_loop_t *loop, klog_store_t *store,
    const klog_core_config_t *cfg, klog_core_t **out, klog_err_t *err)
{
	klog_core_t *c;
	int rc;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	c->cfg = *cfg;
	c->loop = loop;
	c->store = store;
	c->eager = cfg->flush_messages == 0 && cfg->flush_ms == 0;
	klog_timer_init(&c->flush_timer, on_flush_tick, c);
	if ((rc = start_timers(c)) < 0 ||
	    (rc = klog_pids_new(klog_store_data_dir(store), &c->pids)) < 0 ||
	    (rc = klog_flusher_new(wake_loop, loop, &c->fl)) < 0) {
		klog_core_free(c);
		return klog_err_set(err, rc, "starting: %s", klog_strerror(rc));
	}
	*out = c;
	return 0;
}

void
klog_core_free(klog_core_t *c)
{
	if (c == NULL)
		return;
	klog_flusher_free(c->fl);
	klog_loop_timer_stop(c->loop, &c->fail_timer);
	core_dying_free(c);
	klog_loop_timer_stop(c->loop, &c->flush_timer);
	core_rep_stop(c);
	topics_free(c);
	klog_pids_free(c->pids);
	free(c);
}
