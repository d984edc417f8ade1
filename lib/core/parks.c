/*
 * The core's parked requests: acks=all produces waiting for a flush, long
 * polls waiting for bytes, OFFSETS waiting for the flushed end.  A park
 * holds its connection's output queue at its place; its items link into
 * their partitions' waiter lists, so a flush or an append looks only at
 * the parks it can answer.
 */
#include <stdlib.h>
#include <string.h>

#include "klog/core/core.h"

#include "core_impl.h"

/* ---- parks ---- */

static void
item_link(klog_core_item_t *it)
{
	klog_core_part_t *p = it->part;

	it->prev = NULL;
	it->next = p->waiters;
	if (p->waiters != NULL)
		p->waiters->prev = it;
	p->waiters = it;
	it->linked = 1;
}

void
core_item_unlink(klog_core_item_t *it)
{
	if (!it->linked)
		return;
	if (it->prev != NULL)
		it->prev->next = it->next;
	else
		it->part->waiters = it->next;
	if (it->next != NULL)
		it->next->prev = it->prev;
	it->linked = 0;
}

/* Take pk out of every list it waits in. */
static void
park_detach(klog_core_park_t *pk)
{
	klog_core_t *c = pk->core;

	for (uint32_t i = 0; i < pk->n; i++)
		core_item_unlink(&pk->items[i]);
	klog_loop_timer_stop(c->loop, &pk->timer);
	if (pk->complete)
		return;
	if (pk->prev != NULL)
		pk->prev->next = pk->next;
	else
		c->parks = pk->next;
	if (pk->next != NULL)
		pk->next->prev = pk->prev;
	pk->complete = 1;
}

/* The output queue is done with the hold: written, or the connection
 * closed. */
static void
park_done(klog_outq_hold_t *h)
{
	klog_core_park_t *pk = (klog_core_park_t *)h;

	park_detach(pk);
	klog_outq_free(&pk->hold.q);
	free(pk);
}

/* Bytes a fetch could return now, counting each partition up to its max;
 * an item that would now be an error counts as enough. */
static int64_t
fetch_available(const klog_core_item_t *items, uint32_t n, int32_t min_bytes)
{
	int64_t sum = 0, fe;

	for (uint32_t i = 0; i < n; i++) {
		const klog_core_item_t *it = &items[i];

		if (it->error != KLOG_WIRE_NONE || it->part == NULL)
			continue;
		fe = core_item_end(it);
		if (it->offset < klog_log_start(it->part->log))
			return min_bytes;
		if (it->offset < fe)
			sum += fe - it->offset < it->max ? fe - it->offset :
			    it->max;
	}
	return sum;
}

/* Answer pk if what it waits for has happened. */
void
core_park_check(klog_core_park_t *pk)
{
	if (pk->complete || pk->flushes > 0)
		return;
	if ((pk->kind == KLOG_CORE_FETCH || pk->kind == KLOG_CORE_RFETCH) &&
	    !pk->expired &&
	    !pk->core->stopping &&
	    fetch_available(pk->items, pk->n, pk->min_bytes) < pk->min_bytes)
		return;
	park_detach(pk);
	pk->finish(pk);
}

static void
park_timeout(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_core_park_t *pk = arg;

	(void)loop;
	(void)t;
	pk->expired = 1;
	core_park_check(pk);
}

/* A park for the n items (topics copied), queued on q; its items are
 * not linked yet. */
static klog_core_park_t *
park_new(klog_core_t *c, int kind, int32_t corr, const klog_core_item_t *items,
    uint32_t n, klog_outq_t *q)
{
	size_t names = 0;
	klog_core_park_t *pk;
	char *np;

	for (uint32_t i = 0; i < n; i++)
		names += items[i].topic.len;
	pk = malloc(sizeof(*pk) + n * sizeof(klog_core_item_t) + names);
	if (pk == NULL)
		return NULL;
	memset(pk, 0, sizeof(*pk));
	klog_outq_init(&pk->hold.q);
	pk->hold.done = park_done;
	pk->core = c;
	pk->kind = kind;
	pk->correlation = corr;
	pk->n = n;
	klog_timer_init(&pk->timer, park_timeout, pk);
	np = (char *)&pk->items[n];
	for (uint32_t i = 0; i < n; i++) {
		pk->items[i] = items[i];
		pk->items[i].park = pk;
		pk->items[i].linked = 0;
		memcpy(np, items[i].topic.p, items[i].topic.len);
		pk->items[i].topic.p = np;
		np += items[i].topic.len;
	}
	if (klog_outq_hold(q, &pk->hold) < 0) {
		free(pk);
		return NULL;
	}
	pk->next = c->parks;
	if (c->parks != NULL)
		c->parks->prev = pk;
	c->parks = pk;
	return pk;
}

klog_core_park_t *
klog_core_park(klog_core_t *c, int kind, int32_t corr,
    const klog_core_item_t *items, uint32_t n, int link_all,
    const klog_core_reply_t *reply)
{
	klog_core_park_t *pk = park_new(c, kind, corr, items, n, reply->q);

	if (pk == NULL)
		return NULL;
	pk->finish = reply->finish;
	pk->front = reply->front;
	pk->conn = reply->conn;
	for (uint32_t i = 0; i < n; i++) {
		klog_core_item_t *it = &pk->items[i];

		if (it->part == NULL)
			continue;
		/* A staged set's result is now this item. */
		if (kind == KLOG_CORE_PRODUCE && it->staged >= 0)
			it->part->sref[it->staged] =
			    (struct stage_ref){ pk, i, 0 };
		if (it->target >= 0) {
			pk->flushes++;
			core_want_flush(c, it->part);
		} else if (!link_all || it->error != KLOG_WIRE_NONE) {
			continue;
		}
		item_link(it);
	}
	return pk;
}

void
klog_core_park_fetch(klog_core_park_t *pk, int32_t min_bytes,
    int32_t max_wait_ms)
{
	klog_core_t *c = pk->core;

	pk->min_bytes = min_bytes;
	if (max_wait_ms == 0 || c->stopping)
		pk->expired = 1;
	else if (klog_loop_timer_start(c->loop, &pk->timer, max_wait_ms,
	    0) < 0)
		pk->expired = 1;
}

void
core_recheck_add(klog_core_t *c, klog_core_park_t *pk)
{
	if (pk->rechecking || pk->complete)
		return;
	pk->rechecking = 1;
	pk->next_recheck = c->recheck;
	c->recheck = pk;
}

void
core_recheck_run(klog_core_t *c)
{
	klog_core_park_t *pk;

	while ((pk = c->recheck) != NULL) {
		c->recheck = pk->next_recheck;
		pk->rechecking = 0;
		core_park_check(pk);
	}
}

void
klog_core_stop(klog_core_t *c)
{
	klog_core_park_t *pk, *next;

	c->stopping = 1;
	for (pk = c->parks; pk != NULL; pk = next) {
		next = pk->next;
		if (pk->kind == KLOG_CORE_FETCH || pk->kind == KLOG_CORE_RFETCH) {
			pk->expired = 1;
			core_park_check(pk);
		}
	}
}

/* What p's waiters wait for may have happened: its visible end moved, or
 * (rc < 0) its flush failed. */
void
core_part_moved(klog_core_t *c, klog_core_part_t *p, int rc)
{
	int64_t fe = core_visible_end(p);

	for (klog_core_item_t *it = p->waiters; it != NULL; it = it->next) {
		if (it->target >= 0 && (fe >= it->target || rc < 0)) {
			if (fe < it->target &&
			    it->park->kind == KLOG_CORE_PRODUCE)
				it->error = core_wire_storage(rc);
			it->target = -1;
			it->park->flushes--;
		}
		core_recheck_add(c, it->park);
	}
	core_recheck_run(c);
}
