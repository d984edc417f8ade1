/*
 * The broker core; see core.h for what it does and the staging of
 * appends.
 *
 * Pieces, top to bottom:
 *   topics and partitions   a hash of topic names, partitions made lazily
 *   parks                   acks=all, long polls, OFFSETS waiting for a
 *                           flush; their items link into partitions
 *   flushes                 wants, group commit results, waking parks
 *   staging                 produce sets held until the read is done
 *   requests                PRODUCE, FETCH, OFFSETS, METADATA answers
 *   the flush timer         the flush policy's clock
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

#define MAX_OFFSETS 1024                /* offsets per OFFSETS partition */
#define STAGE_SETS 1024                 /* staged sets per partition ... */
#define STAGE_BYTES ((int64_t)8 << 20)  /* ... and bytes, before a write */

static int16_t
wire_storage(int rc)
{
	return rc == -KLOG_ENOSPC ? KLOG_WIRE_DISK_FULL :
	    KLOG_WIRE_STORAGE_ERROR;
}

/* ---- topics and partitions ---- */

static uint32_t
hash_name(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 16777619u;
	return h;
}

static struct topic *
topic_find(klog_core_t *c, const char *p, uint16_t n, uint32_t h)
{
	struct topic *t;

	if (c->nbuckets == 0)
		return NULL;
	for (t = c->buckets[h & (c->nbuckets - 1)]; t != NULL; t = t->hnext)
		if (t->hash == h && t->len == n && memcmp(t->name, p, n) == 0)
			return t;
	return NULL;
}

static int
topic_rehash(klog_core_t *c)
{
	size_t n = c->nbuckets ? c->nbuckets * 2 : 64;
	struct topic **nb = calloc(n, sizeof(*nb));

	if (nb == NULL)
		return -KLOG_ENOMEM;
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct topic *t, *next;

		for (t = c->buckets[i]; t != NULL; t = next) {
			next = t->hnext;
			t->hnext = nb[t->hash & (n - 1)];
			nb[t->hash & (n - 1)] = t;
		}
	}
	free(c->buckets);
	c->buckets = nb;
	c->nbuckets = n;
	return 0;
}

/* Make (or grow) the entry of a topic the store knows with nparts. */
static struct topic *
topic_add(klog_core_t *c, const char *name, int nparts)
{
	size_t len = strlen(name);
	uint32_t h = hash_name(name, len);
	struct topic *t = topic_find(c, name, (uint16_t)len, h);
	klog_core_part_t **pp;

	if (t == NULL) {
		if (c->ntopics >= c->nbuckets && topic_rehash(c) < 0)
			return NULL;
		if ((t = calloc(1, sizeof(*t))) == NULL)
			return NULL;
		if ((t->name = strdup(name)) == NULL) {
			free(t);
			return NULL;
		}
		t->len = (uint16_t)len;
		t->hash = h;
		t->hnext = c->buckets[h & (c->nbuckets - 1)];
		c->buckets[h & (c->nbuckets - 1)] = t;
		c->ntopics++;
	}
	if (nparts > t->nparts) {
		pp = realloc(t->parts, (size_t)nparts * sizeof(*pp));
		if (pp == NULL)
			return NULL;
		memset(pp + t->nparts, 0,
		    (size_t)(nparts - t->nparts) * sizeof(*pp));
		t->parts = pp;
		t->nparts = nparts;
	}
	return t;
}

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
		free(c->parts[i]->siov);
		free(c->parts[i]->sref);
		free(c->parts[i]);
	}
	free(c->parts);
	free(c->staged);
}

static void
topic_created(klog_core_t *c, const char *name, int nparts)
{
	int rc;

	klog_logger_say(&c->cfg.log, KLOG_LEVEL_INFO, "created topic \"%s\" "
	    "with %d partition%s", name, nparts, nparts == 1 ? "" : "s");
	if (c->cfg.topic_created == NULL)
		return;
	if ((rc = c->cfg.topic_created(c->cfg.topic_arg, name, nparts)) < 0)
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_WARN, "topic \"%s\": "
		    "registering: %s", name, klog_strerror(rc));
}

/* A wire-named topic as a C string in buf, if it could be a topic. */
int
core_topic_cstr(klog_str_t name, char *buf)
{
	if (name.len > KLOG_TOPIC_MAX || memchr(name.p, 0, name.len) != NULL)
		return -1;
	memcpy(buf, name.p, name.len);
	buf[name.len] = '\0';
	return klog_topic_validate(buf, NULL) < 0 ? -1 : 0;
}

/* The core's entry of a topic, if it has one yet. */
struct topic *
core_topic_named(klog_core_t *c, const char *name)
{
	size_t n = strlen(name);

	return topic_find(c, name, (uint16_t)n, hash_name(name, n));
}

/*
 * The topic named by a request, made from the store's on first use; with
 * create, an unknown topic is auto-created (if that is on).  NULL with
 * *werr set to the wire error otherwise.
 */
static struct topic *
topic_lookup(klog_core_t *c, klog_str_t name, int create, int16_t *werr)
{
	char buf[KLOG_TOPIC_MAX + 1];
	struct topic *t;
	klog_err_t err;
	int n, rc;

	if ((t = topic_find(c, name.p, name.len, hash_name(name.p, name.len))))
		return t;
	if (core_topic_cstr(name, buf) < 0) {
		*werr = KLOG_WIRE_INVALID_TOPIC;
		return NULL;
	}
	if ((n = klog_store_partitions(c->store, buf)) < 0) {
		if (!create || !c->cfg.auto_create) {
			*werr = KLOG_WIRE_UNKNOWN_TOPIC;
			return NULL;
		}
		if (c->storage_failed) {
			*werr = KLOG_WIRE_STORAGE_ERROR;
			return NULL;
		}
		if (c->replicated_elsewhere != NULL &&
		    c->replicated_elsewhere(c->replicated_arg, buf)) {
			*werr = KLOG_WIRE_NOT_LEADER;
			return NULL;
		}
		n = c->cfg.default_partitions;
		if ((rc = klog_store_create_topic(c->store, buf, n, &err)) < 0) {
			klog_logger_say(&c->cfg.log, KLOG_LEVEL_ERROR,
			    "creating topic \"%s\": %s", buf,
			    klog_err_text(&err, rc));
			*werr = wire_storage(rc);
			return NULL;
		}
		topic_created(c, buf, n);
	}
	if ((t = topic_add(c, buf, n)) == NULL)
		*werr = KLOG_WIRE_STORAGE_ERROR;
	return t;
}

/* Partition id of topic t (range-checked), made on first use. */
static klog_core_part_t *
part_get(klog_core_t *c, struct topic *t, int32_t id, int16_t *werr)
{
	klog_core_part_t *p;
	klog_log_t *log;
	klog_err_t err;
	int rc;

	if (id < 0 || id >= t->nparts) {
		*werr = KLOG_WIRE_WRONG_PARTITION;
		return NULL;
	}
	if (t->parts[id] != NULL)
		return t->parts[id];
	if ((rc = klog_store_get(c->store, t->name, id, 0, &log, &err)) < 0) {
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_ERROR, "topic \"%s\" "
		    "partition %d: %s", t->name, (int)id,
		    klog_err_text(&err, rc));
		*werr = klog_wire_error_from_klog(rc);
		return NULL;
	}
	if (klog_buf_grow((void **)&c->parts, &c->parts_cap,
	    (c->nparts + 1) * sizeof(*c->parts)) < 0 ||
	    klog_buf_grow((void **)&c->staged, &c->staged_cap,
	    (c->nparts + 1) * sizeof(*c->staged)) < 0 ||
	    klog_flusher_reserve(c->fl, c->nparts + c->ndying + 1) < 0 ||
	    (p = calloc(1, sizeof(*p))) == NULL) {
		*werr = KLOG_WIRE_STORAGE_ERROR;
		return NULL;
	}
	p->log = log;
	p->topic = t;
	p->id = id;
	p->fl.log = log;
	p->fl.owner = p;
	c->parts[c->nparts++] = p;
	t->parts[id] = p;
	return p;
}

/* The partition a request names, or NULL with *werr. */
klog_core_part_t *
core_part_lookup(klog_core_t *c, klog_str_t topic, int32_t id, int16_t *werr)
{
	struct topic *t = topic_lookup(c, topic, 0, werr);

	return t == NULL ? NULL : part_get(c, t, id, werr);
}

/* Partition id of a topic by name (created with nparts if missing). */
klog_core_part_t *
core_part_named(klog_core_t *c, const char *topic, int id, int nparts,
    klog_err_t *err)
{
	klog_str_t name = { topic, (uint16_t)strlen(topic) };
	klog_core_part_t *p;
	struct topic *t;
	int16_t werr;
	int have = klog_store_partitions(c->store, topic);

	if (have < nparts && klog_core_create_topic(c, topic, nparts, err) < 0)
		return NULL;
	if ((t = topic_lookup(c, name, 0, &werr)) == NULL) {
		klog_err_set(err, -KLOG_EIO, "topic \"%s\": %s", topic,
		    klog_wire_error_name(werr));
		return NULL;
	}
	if ((p = part_get(c, t, id, &werr)) == NULL)
		klog_err_set(err, -KLOG_EIO, "topic \"%s\" partition %d: %s",
		    topic, id, klog_wire_error_name(werr));
	return p;
}

/* ---- parks ---- */

static void
want_flush(klog_core_t *c, klog_core_part_t *p)
{
	klog_flusher_want(c->fl, &p->fl);
}

void
core_want_flush(klog_core_t *c, klog_core_part_t *p)
{
	want_flush(c, p);
}

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

/* Where a fetch item may read to: a follower to the flushed end, others
 * to what is visible. */
static int64_t
item_end(const klog_core_item_t *it)
{
	return it->is_replica ? klog_log_flushed_end(it->part->log) :
	    core_visible_end(it->part);
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
		fe = item_end(it);
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
			want_flush(c, it->part);
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
	 * reports are done (coreadmin.c). */
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
				it->error = wire_storage(rc);
			it->target = -1;
			it->park->flushes--;
		}
		core_recheck_add(c, it->park);
	}
	core_recheck_run(c);
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

/* ---- staging ---- */

void
core_after_append(klog_core_t *c, klog_core_part_t *p)
{
	c->appended = 1;
	if (c->eager)
		want_flush(c, p);
	else if (c->cfg.flush_messages > 0 &&
	    klog_log_unflushed_messages(p->log) >=
	    (uint64_t)c->cfg.flush_messages)
		want_flush(c, p);
}

/* Log an append failure once per run of failures. */
static void
append_failed(klog_core_t *c, klog_core_part_t *p, int rc,
    const klog_err_t *err)
{
	if (!p->append_failing)
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_ERROR, "topic \"%s\" "
		    "partition %d: append: %s", p->topic->name, (int)p->id,
		    klog_err_text(err, rc));
	p->append_failing = 1;
}

/* Some sets went in; all did when all != 0. */
static void
append_ok(klog_core_t *c, klog_core_part_t *p, int all)
{
	if (p->append_failing && all)
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_INFO, "topic \"%s\" "
		    "partition %d: appending again", p->topic->name,
		    (int)p->id);
	if (all)
		p->append_failing = 0;
	core_after_append(c, p);
	/* A park waiting on staged data asked for its flush before the data
	 * was written; ask again now that it is. */
	if (p->waiters != NULL)
		want_flush(c, p);
}

/* Turn the result of a staged set the log did not take into error. */
static void
stage_fail(const struct stage_ref *r, int16_t error,
    klog_core_patch_fn *patch, void *arg)
{
	klog_core_item_t *it;

	if (r->park == NULL) {
		if (r->pos != SIZE_MAX)
			patch(arg, r->pos, error);
		return;
	}
	it = &r->park->items[r->item];
	if (it->linked && it->target >= 0)
		r->park->flushes--;
	core_item_unlink(it);
	it->error = error;
	it->offset = -1;
	it->target = -1;
	core_park_check(r->park);
}

/* Write p's staged sets; answer those the log could not take with errors. */
static void
commit_part(klog_core_t *c, klog_core_part_t *p, klog_core_patch_fn *patch,
    void *arg)
{
	klog_err_t err;
	size_t done = 0;
	int rc;

	rc = klog_log_appendv(p->log, p->siov, p->sn, p->smsgs, NULL, &done,
	    &err);
	/* A write cut short leaves its sets' message counts unknown: only
	 * its bytes are counted. */
	if (done == p->sn) {
		p->messages_in += p->smsgs;
		p->bytes_in += (uint64_t)p->sbytes;
	} else {
		for (size_t k = 0; k < done; k++)
			p->bytes_in += p->siov[k].iov_len;
	}
	if (rc == -KLOG_ESTORAGE)
		core_storage_failed(c, p, &err);
	if (rc < 0) {
		append_failed(c, p, rc, &err);
		for (size_t k = done; k < p->sn; k++)
			stage_fail(&p->sref[k], wire_storage(rc), patch, arg);
	}
	p->sn = 0;
	p->sbytes = 0;
	p->smsgs = 0;
	if (done > 0)
		append_ok(c, p, rc == 0);
}

void
klog_core_commit(klog_core_t *c, klog_core_patch_fn *patch, void *arg)
{
	for (size_t i = 0; i < c->nstaged; i++) {
		c->staged[i]->staged = 0;
		if (c->staged[i]->sn > 0)
			commit_part(c, c->staged[i], patch, arg);
	}
	c->nstaged = 0;
	c->stage_full = 0;
}

/*
 * Stage set for p: *first gets its offset, *idx its index among p's staged
 * sets.  Returns a wire error (out of memory).
 */
static int16_t
stage(klog_core_t *c, klog_core_part_t *p, const uint8_t *set, uint32_t len,
    uint32_t msgs, int64_t *first, int64_t *idx)
{
	if (klog_buf_grow((void **)&p->siov, &p->scap, (p->sn + 1) *
	    sizeof(*p->siov)) < 0 || klog_buf_grow((void **)&p->sref, &p->srcap,
	    (p->sn + 1) * sizeof(*p->sref)) < 0)
		return KLOG_WIRE_STORAGE_ERROR;
	*first = klog_log_end(p->log) + p->sbytes;
	*idx = (int64_t)p->sn;
	p->siov[p->sn] = (struct iovec){ (void *)set, len };
	p->sref[p->sn++] = (struct stage_ref){ NULL, 0, SIZE_MAX };
	p->sbytes += len;
	p->smsgs += msgs;
	if (p->sn >= STAGE_SETS || p->sbytes >= STAGE_BYTES)
		c->stage_full = 1;
	if (!p->staged) {
		p->staged = 1;
		c->staged[c->nstaged++] = p;
	}
	return KLOG_WIRE_NONE;
}

int
klog_core_stage_full(const klog_core_t *c)
{
	return c->stage_full;
}

void
klog_core_note_result(klog_core_item_t *it, size_t pos)
{
	if (it->staged >= 0)
		it->part->sref[it->staged].pos = pos;
}

/* ---- requests ---- */

static int16_t
validate_set(klog_core_t *c, const uint8_t *set, uint32_t len, int trusted,
    klog_msgset_info_t *info)
{
	unsigned flags = KLOG_ITER_DEEP;
	int rc;

	if (trusted)
		flags |= KLOG_ITER_OUTER_CHECKED;
	rc = klog_msgset_validate(set, len, flags, info);

	switch (rc) {
	case 0:
		break;
	case -KLOG_EPARTIAL:
		return KLOG_WIRE_PARTIAL_MESSAGE;
	case -KLOG_EUNSUPPORTED:
		return KLOG_WIRE_UNSUPPORTED_CODEC;
	case -KLOG_ETOOBIG:
		return KLOG_WIRE_MESSAGE_TOO_LARGE;
	default:
		return KLOG_WIRE_INVALID_MESSAGE;
	}
	if ((int64_t)info->max_payload > c->cfg.max_message_bytes)
		return KLOG_WIRE_MESSAGE_TOO_LARGE;
	return KLOG_WIRE_NONE;
}

static void
produce_part(klog_core_t *c, const klog_produce_part_t *pp, int acks,
    int trusted, klog_core_item_t *it)
{
	klog_msgset_info_t info;
	klog_core_part_t *p;
	struct topic *t;
	int64_t first;

	*it = (klog_core_item_t){ .topic = pp->topic,
	    .partition = pp->partition, .offset = -1, .target = -1,
	    .staged = -1 };
	if ((t = topic_lookup(c, pp->topic, 1, &it->error)) == NULL)
		return;
	if (pp->partition == -1)
		it->partition = (int32_t)(t->rr++ % (uint32_t)t->nparts);
	if ((p = part_get(c, t, it->partition, &it->error)) == NULL)
		return;
	if ((it->error = core_rep_check(p, acks)) != KLOG_WIRE_NONE)
		return;
	if (c->storage_failed) {
		it->error = KLOG_WIRE_STORAGE_ERROR;
		return;
	}
	it->part = p;
	if (pp->set_len == 0) {
		it->offset = klog_log_end(p->log) + p->sbytes;
		return;
	}
	if ((it->error = validate_set(c, pp->set, pp->set_len, trusted,
	    &info)) != 0)
		return;
	if ((it->error = stage(c, p, pp->set, pp->set_len, info.messages,
	    &first, &it->staged)) != 0)
		return;
	it->offset = first;
	it->target = first + pp->set_len;
}

int
klog_core_produce(klog_core_t *c, const klog_produce_req_t *req,
    klog_core_trust_fn *trust, void *arg, klog_core_item_t *items)
{
	int waits = 0;

	for (uint32_t i = 0; i < req->count; i++) {
		const klog_produce_part_t *pp = &req->parts[i];

		produce_part(c, pp, req->acks, trust != NULL && trust(arg, pp),
		    &items[i]);
		if (req->acks != KLOG_ACKS_ALL || items[i].target < 0)
			continue;
		if (core_visible_end(items[i].part) >= items[i].target)
			items[i].target = -1;
		else
			waits++;
	}
	return waits;
}

/* Fill a fetch item; returns the bytes it could return now. */
static int64_t
fetch_item(klog_core_t *c, const klog_fetch_part_t *fp, klog_core_item_t *it)
{
	int64_t start, fe, we;

	*it = (klog_core_item_t){ .topic = fp->topic,
	    .partition = fp->partition, .offset = fp->offset,
	    .max = fp->max_bytes, .target = -1 };
	if (fp->max_bytes > KLOG_CORE_MAX_FETCH_BYTES) {
		it->error = KLOG_WIRE_INVALID_FETCH_SIZE;
		return 0;
	}
	if ((it->part = core_part_lookup(c, fp->topic, fp->partition,
	    &it->error)) == NULL)
		return 0;
	if ((it->error = core_rep_check(it->part, 0)) != KLOG_WIRE_NONE) {
		it->part = NULL;
		return 0;
	}
	start = klog_log_start(it->part->log);
	fe = core_visible_end(it->part);
	we = core_awaited_end(it->part->log);
	if (fp->offset < start || fp->offset > we) {
		/* The range it reports must cover every acknowledged record. */
		it->error = KLOG_WIRE_OFFSET_OUT_OF_RANGE;
		if (we > fe && it->part->rep == NULL)
			it->target = we;
		return 0;
	}
	if (fp->offset < fe)
		return fe - fp->offset < fp->max_bytes ? fe - fp->offset :
		    fp->max_bytes;
	/* Written but not flushed where this consumer reads: it waits for
	 * one flush, not for the policy.  (A replicated partition's reader
	 * waits as a long poll for the HW instead, which may stand still.) */
	if (we > fp->offset && it->part->rep == NULL)
		it->target = we;
	return 0;
}

int
klog_core_fetch(klog_core_t *c, const klog_fetch_req_t *req,
    klog_core_item_t *items)
{
	int64_t avail = 0;
	int flushes = 0, live = 0;

	for (uint32_t i = 0; i < req->count; i++) {
		avail += fetch_item(c, &req->parts[i], &items[i]);
		flushes += items[i].target >= 0;
		live += items[i].part != NULL && items[i].error == 0;
	}
	return flushes == 0 && (avail >= req->min_bytes ||
	    req->max_wait_ms == 0 || live == 0);
}

/* A read from the start of the message holding it->offset. */
static int
read_aligned(const klog_core_item_t *it, int64_t max, klog_log_slice_t *slice,
    klog_err_t *err)
{
	int64_t start;
	int rc;

	if ((rc = klog_log_find_start(it->part->log, it->offset, &start,
	    err)) < 0)
		return rc;
	return klog_log_read(it->part->log, start, (size_t)max +
	    (size_t)(it->offset - start), slice, err);
}

void
klog_core_fetch_read(klog_core_t *c, const klog_core_item_t *it,
    int64_t budget, klog_core_read_t *r)
{
	int64_t max;
	klog_err_t err;
	int rc;

	*r = (klog_core_read_t){ .error = it->error, .log_start = -1,
	    .log_end = -1 };
	if (it->part != NULL) {
		if (!it->is_replica && r->error == KLOG_WIRE_NONE)
			r->error = core_rep_check(it->part, 0);
		r->log_start = klog_log_start(it->part->log);
		r->log_end = item_end(it);
	}
	if (r->error != KLOG_WIRE_NONE || it->offset >= r->log_end) {
		/* Past the flushed end but written: not visible yet, no error
		 * (a failed flush, or an offset from a produce response). */
		if (r->error == KLOG_WIRE_NONE &&
		    it->offset > klog_log_end(it->part->log))
			r->error = KLOG_WIRE_OFFSET_OUT_OF_RANGE;
		return;
	}
	max = it->max < budget ? it->max : budget;
	/* The log reads to its flushed end; a replicated partition's
	 * consumer stops at the committed end. */
	if (r->log_end - it->offset < max)
		max = r->log_end - it->offset;
	rc = klog_log_read(it->part->log, it->offset, (size_t)max, &r->slice,
	    &err);
	if (rc == -KLOG_ENOTBOUNDARY && it->align)
		rc = read_aligned(it, max, &r->slice, &err);
	if (rc < 0) {
		if (rc != -KLOG_ERANGE && rc != -KLOG_ENOTBOUNDARY) {
			klog_logger_say(&c->cfg.log, KLOG_LEVEL_WARN, "topic "
			    "\"%s\" partition %d: %s", it->part->topic->name,
			    (int)it->part->id, klog_err_text(&err, rc));
			rc = -KLOG_EIO;
		}
		r->error = (int16_t)klog_wire_error_from_klog(rc);
		r->log_start = klog_log_start(it->part->log);
		return;
	}
	it->part->bytes_out += r->slice.len;
	r->has_slice = 1;
}

int
klog_core_offsets(klog_core_t *c, const klog_offsets_part_t *parts,
    uint32_t n, klog_core_item_t *items)
{
	int flushes = 0;

	for (uint32_t i = 0; i < n; i++) {
		klog_core_item_t *it = &items[i];
		int64_t we;

		*it = (klog_core_item_t){ .topic = parts[i].topic,
		    .partition = parts[i].partition, .offset = parts[i].time,
		    .max = parts[i].max < MAX_OFFSETS ? parts[i].max :
		    MAX_OFFSETS, .target = -1 };
		if ((it->part = core_part_lookup(c, it->topic, it->partition,
		    &it->error)) == NULL)
			continue;
		if ((it->error = core_rep_check(it->part, 0)) != 0) {
			it->part = NULL;
			continue;
		}
		/* Every answer but "earliest" shows the flushed end (a
		 * replicated partition's committed end, as it is). */
		if (it->offset == KLOG_OFFSET_EARLIEST || it->part->rep != NULL)
			continue;
		we = core_awaited_end(it->part->log);
		if (we > klog_log_flushed_end(it->part->log)) {
			it->target = we;
			flushes++;
		}
	}
	return flushes;
}

/* Offsets (descending) past the committed end become it, once. */
static void
cap_offsets(int64_t end, int64_t *v, int *n)
{
	int k = 0;

	for (int i = 0; i < *n; i++) {
		int64_t x = v[i] > end ? end : v[i];

		if (k == 0 || v[k - 1] != x)
			v[k++] = x;
	}
	*n = k;
}

int16_t
klog_core_offsets_read(const klog_core_item_t *it, int64_t *out, int *count)
{
	*count = 0;
	if (it->error != KLOG_WIRE_NONE || it->max == 0)
		return it->error;
	if (klog_log_offsets_before(it->part->log, it->offset, out, it->max,
	    count) < 0) {
		*count = 0;
		return KLOG_WIRE_STORAGE_ERROR;
	}
	if (it->part->rep != NULL)
		cap_offsets(core_visible_end(it->part), out, count);
	return KLOG_WIRE_NONE;
}

int16_t
klog_core_topic_meta(klog_core_t *c, klog_str_t name, int *partitions)
{
	char buf[KLOG_TOPIC_MAX + 1];

	*partitions = 0;
	if (core_topic_cstr(name, buf) < 0)
		return KLOG_WIRE_INVALID_TOPIC;
	if ((*partitions = klog_store_partitions(c->store, buf)) < 0) {
		*partitions = 0;
		return KLOG_WIRE_UNKNOWN_TOPIC;
	}
	return KLOG_WIRE_NONE;
}

size_t
klog_core_topic_count(klog_core_t *c)
{
	return klog_store_topic_count(c->store);
}

const char *
klog_core_topic_at(klog_core_t *c, size_t i, int *partitions)
{
	const char *name = klog_store_topic_name(c->store, i);

	*partitions = klog_store_partitions(c->store, name);
	return name;
}

int
klog_core_create_topic(klog_core_t *c, const char *topic, int partitions,
    klog_err_t *err)
{
	int before = klog_store_partitions(c->store, topic), rc;

	if ((rc = klog_store_create_topic(c->store, topic, partitions,
	    err)) < 0)
		return rc;
	partitions = klog_store_partitions(c->store, topic);
	if (topic_add(c, topic, partitions) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if (partitions > before)
		topic_created(c, topic, partitions);
	return 0;
}

int
klog_core_topics(klog_core_t *c, klog_core_topic_fn *fn, void *arg)
{
	const char *name;
	int n, rc;

	for (size_t i = 0; i < klog_store_topic_count(c->store); i++) {
		name = klog_store_topic_name(c->store, i);
		if ((n = klog_store_partitions(c->store, name)) <= 0)
			continue;
		if ((rc = fn(arg, name, n)) < 0)
			return rc;
	}
	return 0;
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
			want_flush(c, p);
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
	free(c);
}
