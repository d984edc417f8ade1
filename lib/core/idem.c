/*
 * The core's idempotent producers: each partition's producer state
 * (pstate.h) kept in step with its log.  It is rebuilt (psnap.h) the
 * first time the partition takes an append, before any, so it always
 * counts every batch in the log; a leader checks a batch and records it
 * when the batch is staged, so a retry in the same read or the next one
 * finds it; a write that fails forgets what it did not write; a follower
 * records what it appends; a cut forgets what it cut.  A snapshot is
 * taken when an append rolls the log to a new segment, and at a clean
 * close, so a restart reads at most a segment's headers.  Producer ids
 * are granted here too (idem.h).
 */
#include <stdint.h>
#include <stdio.h>

#include "klog/base/clock.h"
#include "klog/core/idem.h"
#include "klog/storage/psnap.h"

#include "core_impl.h"

static void
say(klog_core_t *c, const klog_core_part_t *p, int level, const char *what,
    const klog_err_t *err, int rc)
{
	klog_logger_say(&c->cfg.log, level, "topic \"%s\" partition %d: "
	    "producer state: %s%s%s", p->topic->name, (int)p->id, what,
	    err != NULL ? ": " : "", err != NULL ? klog_err_text(err, rc) :
	    "");
}

klog_pstate_t *
core_idem_state(klog_core_t *c, klog_core_part_t *p)
{
	klog_psnap_info_t info;
	klog_err_t err;
	char what[160];
	int rc;

	if (p->ps != NULL)
		return p->ps;
	if (klog_pstate_new(&p->ps) < 0)
		return NULL;
	rc = klog_psnap_load(p->log, p->ps, klog_clock_wall_ms(),
	    KLOG_PSTATE_EXPIRATION_MS, &info, &err);
	/* A log that cannot be read to its end leaves the producers found
	 * so far: those past the fault come back as unknown ones, which
	 * start a new epoch. */
	if (rc < 0)
		say(c, p, KLOG_LEVEL_ERROR, "rebuilding", &err, rc);
	if (info.bad == 0 && info.scanned == 0)
		return p->ps;
	snprintf(what, sizeof(what), "%d snapshot%s unreadable, %lld bytes of "
	    "the log scanned from %lld", info.bad, info.bad == 1 ? "" : "s",
	    (long long)info.scanned, (long long)(info.loaded < 0 ?
	    klog_log_start(p->log) : info.loaded));
	say(c, p, info.bad > 0 ? KLOG_LEVEL_WARN : KLOG_LEVEL_INFO, what,
	    NULL, 0);
	return p->ps;
}

/* A batch refused: a line a second at most per partition, for what a
 * client only shows as a retry or an epoch bump. */
static void
refused(klog_core_t *c, klog_core_part_t *p, const klog_batch_t *b,
    int16_t error)
{
	const klog_pstate_producer_t *pr = klog_pstate_get(p->ps,
	    b->producer_id);
	int64_t now = klog_clock_mono_ms();
	char what[200];
	int n;

	if (p->idem_said_ms != 0 && now - p->idem_said_ms < 1000)
		return;
	p->idem_said_ms = now;
	n = snprintf(what, sizeof(what), "producer %lld epoch %d: sequences "
	    "%d..%d refused (%s): ", (long long)b->producer_id,
	    (int)b->producer_epoch, (int)b->base_sequence,
	    (int)klog_pstate_last_seq(b->base_sequence, b->count),
	    klog_wire_error_name(error));
	if (pr == NULL)
		snprintf(what + n, sizeof(what) - (size_t)n, "the partition "
		    "does not know it");
	else
		snprintf(what + n, sizeof(what) - (size_t)n, "its last batch "
		    "is %d..%d at epoch %d", (int)pr->b[pr->n - 1].first_seq,
		    (int)pr->b[pr->n - 1].last_seq,
		    (int)pr->b[pr->n - 1].epoch);
	say(c, p, KLOG_LEVEL_INFO, what, NULL, 0);
}

static int16_t
verdict_error(int v)
{
	switch (v) {
	case KLOG_PSTATE_OUT_OF_ORDER:
		return KLOG_WIRE_OUT_OF_ORDER_SEQUENCE;
	case KLOG_PSTATE_FENCED:
		return KLOG_WIRE_INVALID_PRODUCER_EPOCH;
	case KLOG_PSTATE_UNKNOWN:
		return KLOG_WIRE_UNKNOWN_PRODUCER_ID;
	default:
		return KLOG_WIRE_INVALID_MESSAGE;
	}
}

int
core_idem_check(klog_core_t *c, klog_core_part_t *p, const uint8_t *set,
    uint32_t len, klog_core_item_t *it)
{
	klog_pstate_t *ps = core_idem_state(c, p);
	klog_pstate_batch_t dup;
	klog_batch_t b;
	int64_t at;
	int rc, v;

	if (ps == NULL) {
		it->error = KLOG_WIRE_STORAGE_ERROR;
		return 1;
	}
	if ((rc = klog_pstate_entry(set, len, &b)) <= 0) {
		it->error = rc < 0 ? KLOG_WIRE_INVALID_MESSAGE : KLOG_WIRE_NONE;
		return rc < 0;
	}
	if ((v = klog_pstate_check(ps, &b, &dup)) == KLOG_PSTATE_DUPLICATE) {
		/* Answered as the batch it repeats (KAFKA-5793): acks=all
		 * waits for that one. */
		it->offset = dup.offset;
		it->target = dup.last_offset + 1;
		return 1;
	}
	if (v != KLOG_PSTATE_APPEND) {
		it->error = verdict_error(v);
		refused(c, p, &b, it->error);
		return 1;
	}
	at = klog_log_end(p->log) + p->sbytes;
	if (klog_pstate_update(ps, &b, at, at + len - 1) < 0) {
		it->error = KLOG_WIRE_STORAGE_ERROR;
		return 1;
	}
	return 0;
}

void
core_idem_unstage(klog_core_part_t *p, int64_t at)
{
	if (p->ps != NULL)
		klog_pstate_truncate(p->ps, at);
}

void
core_idem_written(klog_core_t *c, klog_core_part_t *p, size_t segments)
{
	klog_err_t err;
	int rc;

	if (p->ps == NULL)
		return;
	klog_pstate_truncate(p->ps, klog_log_end(p->log));
	if (klog_log_segment_count(p->log) <= segments)
		return;
	klog_pstate_expire(p->ps, klog_clock_wall_ms(),
	    KLOG_PSTATE_EXPIRATION_MS);
	if ((rc = klog_psnap_write(p->log, p->ps, klog_log_end(p->log), 1,
	    &err)) < 0)
		say(c, p, KLOG_LEVEL_WARN, "snapshot", &err, rc);
}

int
core_idem_replica(klog_core_t *c, klog_core_part_t *p, const uint8_t *set,
    size_t len, int64_t at, klog_err_t *err)
{
	if (core_idem_state(c, p) == NULL ||
	    klog_pstate_update_set(p->ps, set, len, at) < 0)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	return 0;
}

int
core_idem_cut(klog_core_part_t *p, int64_t end, klog_err_t *err)
{
	if (p->ps != NULL)
		klog_pstate_truncate(p->ps, end);
	return klog_psnap_drop_above(p->log, end, err);
}

void
core_idem_save(klog_core_t *c, klog_core_part_t *p)
{
	klog_err_t err;
	int rc;

	if (p->ps == NULL || c->storage_failed || klog_log_failed(p->log))
		return;
	if ((rc = klog_psnap_write(p->log, p->ps, klog_log_end(p->log), 0,
	    &err)) < 0)
		say(c, p, KLOG_LEVEL_WARN, "snapshot", &err, rc);
}

void
core_idem_free(klog_core_part_t *p)
{
	klog_pstate_free(p->ps);
	p->ps = NULL;
}

void
klog_core_set_producer_block(klog_core_t *c, klog_pids_block_fn *fn,
    void *arg)
{
	c->pid_block = fn;
	c->pid_block_arg = arg;
}

int
klog_core_producer_id(klog_core_t *c, int64_t *pid, int16_t *epoch,
    klog_err_t *err)
{
	if ((*pid < 0) != (*epoch < 0))
		return klog_err_set(err, -KLOG_EINVAL, "a producer id %lld "
		    "with epoch %d", (long long)*pid, (int)*epoch);
	if (*pid >= 0 && *epoch < INT16_MAX - 1) {
		(*epoch)++;
		return 0;
	}
	*epoch = 0;
	return klog_pids_next(c->pids, c->pid_block, c->pid_block_arg, pid,
	    err);
}
