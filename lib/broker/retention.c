/* Retention and rescans on the loop's timers; see retention.h. */
#include "klog/base/clock.h"
#include "klog/base/error.h"
#include "klog/broker/retention.h"
#include "klog/storage/log.h"

static void
on_clean(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_retention_t *u = arg;
	int64_t now = klog_clock_wall_ms(), bytes;
	klog_log_t *log;
	klog_err_t err;
	size_t segs;
	int rc;

	(void)loop;
	(void)t;
	for (size_t i = 0; (log = klog_store_log(u->store, i)) != NULL; i++) {
		rc = klog_log_retain(log, u->cfg.retention_ms,
		    u->cfg.retention_bytes, now, &segs, &bytes, &err);
		if (rc < 0) {
			klog_logger_say(&u->cfg.log, KLOG_LEVEL_WARN, "topic "
			    "\"%s\" partition %d: retention: %s",
			    klog_log_topic(log), klog_log_partition(log),
			    klog_err_text(&err, rc));
			continue;
		}
		u->deleted_segments += segs;
		if (segs > 0)
			klog_logger_say(&u->cfg.log, KLOG_LEVEL_INFO, "topic "
			    "\"%s\" partition %d: retention deleted %zu "
			    "segment%s (%lld bytes)", klog_log_topic(log),
			    klog_log_partition(log), segs, segs == 1 ? "" : "s",
			    (long long)bytes);
	}
}

static void
on_rescan(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_retention_t *u = arg;
	klog_log_t *log;
	klog_err_t err;
	int rc;

	(void)loop;
	(void)t;
	for (size_t i = 0; (log = klog_store_log(u->store, i)) != NULL; i++)
		if ((rc = klog_log_rescan(log, &err)) < 0)
			klog_logger_say(&u->cfg.log, KLOG_LEVEL_WARN, "topic "
			    "\"%s\" partition %d: rescan: %s",
			    klog_log_topic(log), klog_log_partition(log),
			    klog_err_text(&err, rc));
}

int
klog_retention_start(klog_retention_t *u, klog_loop_t *loop, klog_store_t *store,
    const klog_retention_config_t *cfg)
{
	int64_t first = cfg->cleanup_interval_ms < 60000 ?
	    cfg->cleanup_interval_ms : 60000;
	int rc = 0;

	u->cfg = *cfg;
	u->loop = loop;
	u->store = store;
	klog_timer_init(&u->clean_timer, on_clean, u);
	klog_timer_init(&u->rescan_timer, on_rescan, u);
	if (cfg->retention_ms >= 0 || cfg->retention_bytes >= 0)
		rc = klog_loop_timer_start(loop, &u->clean_timer, first,
		    cfg->cleanup_interval_ms);
	if (rc == 0)
		rc = klog_loop_timer_start(loop, &u->rescan_timer,
		    cfg->rescan_interval_ms, cfg->rescan_interval_ms);
	return rc;
}

void
klog_retention_stop(klog_retention_t *u)
{
	if (u->loop == NULL)
		return;
	klog_loop_timer_stop(u->loop, &u->clean_timer);
	klog_loop_timer_stop(u->loop, &u->rescan_timer);
}
