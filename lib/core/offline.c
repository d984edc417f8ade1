/* The broker core when a sync fails; see offline.h. */
#include "core_impl.h"
#include "klog/core/offline.h"

static void
on_failed(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_core_t *c = arg;

	(void)loop;
	(void)t;
	if (c->fail_fn != NULL)
		c->fail_fn(c->fail_arg);
}

/* The hook runs from a timer: the failure is found inside the flusher's
 * reports or a fetcher's append, whose state it must not pull from under
 * them (it stops followers). */
static void
tell_later(klog_core_t *c)
{
	klog_timer_init(&c->fail_timer, on_failed, c);
	if (klog_loop_timer_start(c->loop, &c->fail_timer, 1, 0) < 0)
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_ERROR, "storage "
		    "failed: could not tell the replication layer (out of "
		    "memory)");
}

void
klog_core_set_storage_hook(klog_core_t *c, klog_core_fail_fn *fn, void *arg)
{
	c->fail_fn = fn;
	c->fail_arg = arg;
	if (fn != NULL && c->storage_failed &&
	    !klog_timer_active(&c->fail_timer))
		tell_later(c);
}

int
klog_core_storage_failed(const klog_core_t *c)
{
	return c->storage_failed;
}

uint64_t
klog_core_flush_failures(klog_core_t *c)
{
	return klog_flusher_failures(c->fl);
}

void
core_storage_failed(klog_core_t *c, const klog_core_part_t *p,
    const klog_err_t *err)
{
	if (c->storage_failed)
		return;
	c->storage_failed = 1;
	klog_logger_say(&c->cfg.log, KLOG_LEVEL_ERROR, "topic \"%s\" "
	    "partition %d: %s; storage failed: no partition takes writes "
	    "(STORAGE_ERROR) until a restart recovers the logs",
	    p->topic->name, (int)p->id, klog_err_text(err, -KLOG_ESTORAGE));
	tell_later(c);
}

int64_t
core_awaited_end(klog_log_t *log)
{
	return klog_log_failed(log) ? klog_log_flushed_end(log) :
	    klog_log_end(log);
}
