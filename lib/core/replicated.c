/*
 * The core's replicated partitions; see replicated.h.  The rules of the ISR
 * and the high watermark are replica.h's; this file applies them to the
 * core's partitions and parked requests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/clock.h"
#include "klog/core/replicated.h"
#include "klog/storage/format.h"

#include "core_impl.h"

#define ISR_TICK_MS 250

/* ---- for core.c ---- */

int16_t
core_rep_check_replicated(const klog_core_part_t *p, int acks)
{
	if (p->rep->role != KLOG_REPLICA_LEADER)
		return KLOG_WIRE_NOT_LEADER;
	if (acks == KLOG_ACKS_ALL &&
	    klog_replica_isr_size(p->rep) < p->rep->min_insync)
		return KLOG_WIRE_NOT_ENOUGH_REPLICAS;
	return KLOG_WIRE_NONE;
}

void
core_rep_flushed(klog_core_t *c, klog_core_part_t *p)
{
	if (p->rep == NULL)
		return;
	if (p->rep->role == KLOG_REPLICA_LEADER)
		klog_replica_advance(p->rep, klog_log_flushed_end(p->log));
	else if (p->follower != NULL && c->cfg.follower_flushed != NULL)
		c->cfg.follower_flushed(c->cfg.follower_arg, p);
}

void
core_rep_free_part(klog_core_part_t *p)
{
	klog_replica_free(p->rep);
}

void
klog_core_set_replication(klog_core_t *c, int64_t lag_ms,
    klog_core_isr_fn *isr_change, void *isr_arg,
    klog_core_part_fn *follower_flushed, void *follower_arg)
{
	c->cfg.replica_lag_ms = lag_ms;
	c->cfg.isr_change = isr_change;
	c->cfg.isr_arg = isr_arg;
	c->cfg.follower_flushed = follower_flushed;
	c->cfg.follower_arg = follower_arg;
	for (size_t i = 0; i < c->nparts; i++)
		if (c->parts[i]->rep != NULL)
			c->parts[i]->rep->lag_ms = lag_ms;
}

/* ---- roles ---- */

static void
say(klog_core_t *c, int level, const klog_core_part_t *p, const char *what,
    const int32_t *ids, int n)
{
	char list[KLOG_REPLICA_MAX * 12 + 3];
	size_t at = 0;

	list[at++] = '[';
	for (int i = 0; i < n && at + 13 < sizeof(list); i++)
		at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%d",
		    i ? "," : "", (int)ids[i]);
	list[at++] = ']';
	list[at] = '\0';
	klog_logger_say(&c->cfg.log, level, "topic \"%s\" partition %d: %s "
	    "%s (epoch %d)", p->topic->name, (int)p->id, what, list,
	    (int)p->rep->epoch);
}

/* Answer p's waiting acks=all produces with error; with all, every other
 * waiter too. */
static void
fail_waiters(klog_core_t *c, klog_core_part_t *p, int16_t error, int all)
{
	klog_core_item_t *it, *next;

	for (it = p->waiters; it != NULL; it = next) {
		klog_core_park_t *pk = it->park;

		next = it->next;
		if (!all && (pk->kind != KLOG_CORE_PRODUCE || it->target < 0))
			continue;
		if (it->target >= 0) {
			it->target = -1;
			pk->flushes--;
		}
		it->error = error;
		if (pk->kind == KLOG_CORE_PRODUCE)
			it->offset = -1;
		else
			pk->expired = 1;   /* answered now, not at max_wait */
	}
	core_part_moved(c, p, 0);
}

static klog_core_part_t *
rpart_make(klog_core_t *c, const char *topic, int id, int nparts,
    klog_err_t *err)
{
	klog_core_part_t *p = core_part_named(c, topic, id, nparts, err);
	int rc;

	if (p == NULL || p->rep != NULL)
		return p;
	if ((rc = klog_replica_new(klog_log_dir(p->log), c->cfg.broker_id,
	    c->cfg.replica_lag_ms, &p->rep, err)) < 0)
		return NULL;
	/* Bytes cut at recovery may have been acknowledged: this copy must
	 * not lead before it has them again, even after another restart. */
	if (klog_log_recovered_bytes(p->log) > 0 &&
	    (rc = klog_epochs_set_behind(p->rep->epochs, 1, err)) < 0)
		return NULL;
	return p;
}

static void on_isr_tick(klog_loop_t *loop, klog_timer_t *t, void *arg);

int
klog_core_replicated(klog_core_t *c, const char *topic, int id, int nparts,
    klog_err_t *err)
{
	return rpart_make(c, topic, id, nparts, err) == NULL ? -KLOG_EIO : 0;
}

void
klog_core_set_create_check(klog_core_t *c, klog_core_name_fn *fn, void *arg)
{
	c->replicated_elsewhere = fn;
	c->replicated_arg = arg;
}

int
klog_core_lead(klog_core_t *c, const char *topic, int id, int nparts,
    int32_t epoch, const int32_t *replicas, int nrep, const int32_t *isr,
    int nisr, int min_insync, klog_err_t *err)
{
	klog_core_part_t *p = rpart_make(c, topic, id, nparts, err);
	int32_t now_isr[KLOG_REPLICA_MAX + 1];
	int rc;

	if (p == NULL)
		return -KLOG_EIO;
	if ((rc = klog_replica_lead(p->rep, epoch, replicas, nrep, isr, nisr,
	    min_insync, klog_log_end(p->log), klog_clock_mono_ms(), err)) < 0)
		return rc;
	p->caught_up = 1;
	say(c, KLOG_LEVEL_INFO, p, "leading, ISR", now_isr,
	    klog_replica_isr(p->rep, now_isr));
	if (!c->isr_timer_on) {
		klog_timer_init(&c->isr_timer, on_isr_tick, c);
		if (klog_loop_timer_start(c->loop, &c->isr_timer, ISR_TICK_MS,
		    ISR_TICK_MS) == 0)
			c->isr_timer_on = 1;
	}
	klog_replica_advance(p->rep, klog_log_flushed_end(p->log));
	core_part_moved(c, p, 0);
	return 0;
}

int
klog_core_follow(klog_core_t *c, const char *topic, int id, int nparts,
    int32_t epoch, int32_t leader, klog_err_t *err)
{
	klog_core_part_t *p = rpart_make(c, topic, id, nparts, err);

	if (p == NULL)
		return -KLOG_EIO;
	if (p->rep->role == KLOG_REPLICA_LEADER)
		fail_waiters(c, p, KLOG_WIRE_NOT_LEADER, 1);
	klog_replica_follow(p->rep, epoch, leader);
	klog_logger_say(&c->cfg.log, KLOG_LEVEL_INFO, "topic \"%s\" partition "
	    "%d: following broker %d (epoch %d)", topic, id, (int)leader,
	    (int)epoch);
	return 0;
}

void
klog_core_step_down(klog_core_t *c, klog_core_part_t *p)
{
	if (p->rep == NULL || p->rep->role == KLOG_REPLICA_OFFLINE)
		return;
	klog_replica_offline(p->rep);
	fail_waiters(c, p, KLOG_WIRE_NOT_LEADER, 1);
}

klog_core_part_t *
klog_core_rpart(klog_core_t *c, const char *topic, int id)
{
	klog_str_t name = { topic, (uint16_t)strlen(topic) };
	int16_t werr;
	klog_core_part_t *p = core_part_lookup(c, name, id, &werr);

	return p != NULL && p->rep != NULL ? p : NULL;
}

const char *
klog_core_part_topic(const klog_core_part_t *p)
{
	return p->topic->name;
}

int
klog_core_part_id(const klog_core_part_t *p)
{
	return p->id;
}

klog_log_t *
klog_core_part_log(const klog_core_part_t *p)
{
	return p->log;
}

klog_replica_t *
klog_core_part_replica(const klog_core_part_t *p)
{
	return p->rep;
}

void *
klog_core_part_follower(const klog_core_part_t *p)
{
	return p->follower;
}

void
klog_core_part_set_follower(klog_core_part_t *p, void *f)
{
	p->follower = f;
}

int
klog_core_may_lead(klog_core_t *c, const char *topic, int id,
    int32_t state_epoch)
{
	klog_core_part_t *p = klog_core_rpart(c, topic, id);

	if (p == NULL)
		return state_epoch == 0;
	if (p->caught_up)
		return 1;
	if (klog_epochs_behind(p->rep->epochs))
		return 0;
	return state_epoch == 0 || klog_epochs_count(p->rep->epochs) > 0 ||
	    klog_log_end(p->log) > 0;
}

/* ---- the ISR ---- */

/* Start making the ISR change durable; it is taken when the write is
 * answered (klog_core_isr_written()).  One write at a time. */
static void
isr_update(klog_core_t *c, klog_core_part_t *p, int32_t id, int add)
{
	int32_t isr[KLOG_REPLICA_MAX + 1];
	int n = klog_replica_isr_with(p->rep, id, add, isr), rc;

	if (c->cfg.isr_change == NULL || p->rep->pending)
		return;
	/* Before the call: its outcome may be told from within it. */
	klog_replica_set_pending(p->rep, isr, n);
	rc = c->cfg.isr_change(c->cfg.isr_arg, p->topic->name, p->id,
	    p->rep->epoch, isr, n);
	if (rc < 0)
		klog_replica_clear_pending(p->rep);
	if (rc == -KLOG_EBUSY) {
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_WARN, "topic \"%s\" "
		    "partition %d: deposed (not its leader any more)",
		    p->topic->name, (int)p->id);
		klog_core_step_down(c, p);
	}
}

void
klog_core_isr_written(klog_core_t *c, const char *topic, int partition,
    int32_t epoch, const int32_t *isr, int n, int rc)
{
	klog_core_part_t *p = klog_core_rpart(c, topic, partition);
	int32_t was[KLOG_REPLICA_MAX + 1];
	int nwas;

	if (p == NULL || p->rep->role != KLOG_REPLICA_LEADER ||
	    p->rep->epoch != epoch)
		return;
	if (rc == -KLOG_EBUSY) {
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_WARN, "topic \"%s\" "
		    "partition %d: deposed (another broker leads it)",
		    p->topic->name, (int)p->id);
		klog_core_step_down(c, p);
		return;
	}
	if (rc < 0) {
		klog_replica_clear_pending(p->rep);
		return;
	}
	nwas = klog_replica_isr(p->rep, was);
	klog_replica_set_isr(p->rep, isr, n, klog_clock_mono_ms());
	if (n != nwas)
		say(c, KLOG_LEVEL_INFO, p, n > nwas ? "ISR grew to" :
		    "ISR shrank to", isr, n);
	if (n < p->rep->min_insync)
		fail_waiters(c, p, KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND,
		    0);
	else if (klog_replica_advance(p->rep, klog_log_flushed_end(p->log)))
		core_part_moved(c, p, 0);
}

static void
on_isr_tick(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_core_t *c = arg;
	int64_t now = klog_clock_mono_ms();
	int32_t id;

	(void)loop;
	(void)t;
	for (size_t i = 0; i < c->nparts; i++) {
		klog_core_part_t *p = c->parts[i];

		if (p->rep == NULL || p->rep->role != KLOG_REPLICA_LEADER)
			continue;
		if ((id = klog_replica_laggard(p->rep, now)) >= 0)
			isr_update(c, p, id, 0);
	}
}

void
core_rep_stop(klog_core_t *c)
{
	if (c->isr_timer_on)
		klog_loop_timer_stop(c->loop, &c->isr_timer);
	c->isr_timer_on = 0;
}

/* ---- the leader's side ---- */

void
klog_core_rfetch_state(klog_core_t *c, const klog_core_item_t *it,
    klog_rfetch_resp_t *resp)
{
	klog_core_part_t *p = it->part;
	int64_t next;

	(void)c;
	memset(resp, 0, sizeof(*resp));
	resp->error = it->error;
	resp->diverging_epoch = it->div_epoch;
	resp->diverging_end = it->div_end;
	resp->log_start = resp->log_end = resp->hw = -1;
	resp->chunk_epoch = -1;
	if (p == NULL || p->rep == NULL)
		return;
	resp->leader_epoch = p->rep->epoch;
	resp->hw = p->rep->hw;
	resp->log_start = klog_log_start(p->log);
	resp->log_end = klog_log_flushed_end(p->log);
	resp->chunk_epoch = klog_epochs_at(p->rep->epochs, it->offset, &next);
	if (resp->error == KLOG_WIRE_NONE &&
	    p->rep->role != KLOG_REPLICA_LEADER)
		resp->error = KLOG_WIRE_NOT_LEADER;
}

int
klog_core_rfetch(klog_core_t *c, const klog_rfetch_req_t *q,
    klog_core_item_t *it, klog_rfetch_resp_t *resp)
{
	klog_core_part_t *p;
	int shrink, expand;
	int64_t fe, next;

	*it = (klog_core_item_t){ .topic = q->topic,
	    .partition = q->partition, .offset = q->offset,
	    .max = q->max_bytes, .target = -1, .staged = -1,
	    .is_replica = 1, .replica_id = q->replica_id, .div_epoch = -1,
	    .div_end = -1 };
	memset(resp, 0, sizeof(*resp));
	resp->diverging_epoch = -1;
	if (q->max_bytes > KLOG_CORE_MAX_FETCH_BYTES) {
		it->error = KLOG_WIRE_INVALID_FETCH_SIZE;
		return 1;
	}
	if ((p = core_part_lookup(c, q->topic, q->partition,
	    &it->error)) == NULL)
		return 1;
	it->part = p;
	if (p->rep == NULL) {
		it->error = KLOG_WIRE_NOT_LEADER;
		return 1;
	}
	fe = klog_log_flushed_end(p->log);
	it->error = klog_replica_on_fetch(p->rep, q, klog_log_end(p->log), fe,
	    klog_clock_mono_ms(), resp, &shrink, &expand);
	if (it->error != KLOG_WIRE_NONE)
		return 1;
	if (resp->diverging_epoch >= 0) {
		it->div_epoch = resp->diverging_epoch;
		it->div_end = resp->diverging_end;
		it->max = 0;
		return 1;
	}
	if (q->offset < klog_log_start(p->log)) {
		it->error = KLOG_WIRE_OFFSET_OUT_OF_RANGE;
		return 1;
	}
	if (shrink || expand) {
		isr_update(c, p, q->replica_id, expand);
		/* It found us deposed: no long poll on what is not led here. */
		if (p->rep->role != KLOG_REPLICA_LEADER) {
			it->error = KLOG_WIRE_NOT_LEADER;
			return 1;
		}
	}
	if (klog_replica_advance(p->rep, fe))
		core_part_moved(c, p, 0);
	/* A chunk never crosses an epoch: the follower records each. */
	(void)klog_epochs_at(p->rep->epochs, q->offset, &next);
	if (next - q->offset < it->max)
		it->max = (int32_t)(next - q->offset);
	/* A follower that has not recorded this epoch yet learns it now,
	 * not after a long poll: until then it could not lead. */
	return fe > q->offset || q->max_wait_ms == 0 || c->stopping ||
	    q->last_epoch < p->rep->epoch;
}

void
klog_core_rpos(klog_core_t *c, const klog_rfetch_req_t *q)
{
	klog_core_part_t *p;
	int16_t werr;
	int shrink, expand;

	if ((p = core_part_lookup(c, q->topic, q->partition, &werr)) == NULL ||
	    p->rep == NULL)
		return;
	if (klog_replica_on_pos(p->rep, q, klog_log_end(p->log),
	    klog_log_flushed_end(p->log), klog_clock_mono_ms(), &shrink,
	    &expand) != KLOG_WIRE_NONE)
		return;
	if (shrink || expand)
		isr_update(c, p, q->replica_id, expand);
	if (p->rep->role == KLOG_REPLICA_LEADER &&
	    klog_replica_advance(p->rep, klog_log_flushed_end(p->log)))
		core_part_moved(c, p, 0);
}

/* ---- a follower's side ---- */

int
klog_core_replica_append(klog_core_t *c, klog_core_part_t *p,
    const uint8_t *set, size_t len, uint32_t msgs, int32_t epoch,
    klog_err_t *err)
{
	size_t segments = klog_log_segment_count(p->log);
	int rc;

	if (c->storage_failed)
		return klog_err_set(err, -KLOG_ESTORAGE, "topic \"%s\" "
		    "partition %d: storage failed: no more writes",
		    p->topic->name, (int)p->id);
	if ((rc = core_idem_replica(c, p, set, len, klog_log_end(p->log),
	    err)) < 0)
		return rc;
	if (epoch > klog_epochs_latest(p->rep->epochs) &&
	    (rc = klog_epochs_append(p->rep->epochs, epoch,
	    klog_log_end(p->log), err)) < 0)
		return rc;
	rc = klog_log_append(p->log, set, len, msgs, NULL, err);
	core_idem_written(c, p, segments);
	if (rc < 0) {
		if (rc == -KLOG_ESTORAGE)
			core_storage_failed(c, p, err);
		return rc;
	}
	core_after_append(c, p);
	core_want_flush(c, p);
	return 0;
}

int
klog_core_replica_truncate(klog_core_t *c, klog_core_part_t *p,
    int64_t offset, int64_t *landed, klog_err_t *err)
{
	int rc;

	if ((rc = klog_log_truncate(p->log, offset, landed, err)) < 0) {
		if (rc == -KLOG_ESTORAGE)
			core_storage_failed(c, p, err);
		return rc;
	}
	if (p->rep->hw > *landed)
		p->rep->hw = *landed;
	if ((rc = core_idem_cut(p, *landed, err)) < 0)
		return rc;
	return klog_epochs_truncate(p->rep->epochs, *landed, err);
}

int
klog_core_replica_reset(klog_core_t *c, klog_core_part_t *p, int64_t base,
    klog_err_t *err)
{
	int rc;

	if ((rc = klog_log_reset(p->log, base, err)) < 0) {
		if (rc == -KLOG_ESTORAGE)
			core_storage_failed(c, p, err);
		return rc;
	}
	p->rep->hw = base;
	if ((rc = core_idem_cut(p, -1, err)) < 0)
		return rc;
	return klog_epochs_clear(p->rep->epochs, err);
}

void
klog_core_replica_hw(klog_core_t *c, klog_core_part_t *p, int64_t hw)
{
	int64_t end = klog_log_end(p->log);
	klog_err_t err;

	klog_replica_follower_hw(p->rep, hw, end);
	if (end < hw || p->caught_up)
		return;
	p->caught_up = 1;
	if (klog_epochs_behind(p->rep->epochs) &&
	    klog_epochs_set_behind(p->rep->epochs, 0, &err) < 0)
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_WARN, "topic \"%s\" "
		    "partition %d: %s", p->topic->name, (int)p->id,
		    klog_err_text(&err, -KLOG_EIO));
}
