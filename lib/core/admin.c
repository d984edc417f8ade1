/*
 * The core's topic administration and the dropping of partitions; see
 * admin.h.
 *
 * A dropped partition is first made unreachable (out of its topic and of
 * the core's list, so no request, timer or flush policy finds it again)
 * and every parked item naming it answered with an error; then it is
 * freed at once if the flusher does not have it, or else kept in the
 * dying list until a report of the flusher lets it go
 * (core_after_flushes()).  Its log is freed with it: the flusher's
 * thread may be inside klog_log_flush() on it until then.
 */
#include <stdlib.h>
#include <string.h>

#include "klog/core/admin.h"
#include "klog/storage/flusher.h"
#include "klog/storage/names.h"

#include "core_impl.h"

static void
part_free(klog_core_part_t *p)
{
	core_rep_free_part(p);
	core_idem_free(p);
	klog_log_close(p->log);
	free(p->siov);
	free(p->sref);
	free(p);
}

/* Every parked item naming p: unlinked, answered with error, no longer
 * pointing at p; fetches waiting for more data are answered now. */
static void
answer_parked(klog_core_t *c, klog_core_part_t *p, int16_t error)
{
	for (klog_core_park_t *pk = c->parks; pk != NULL; pk = pk->next) {
		int hit = 0;

		for (uint32_t i = 0; i < pk->n; i++) {
			klog_core_item_t *it = &pk->items[i];

			if (it->part != p)
				continue;
			if (it->linked && it->target >= 0)
				pk->flushes--;
			core_item_unlink(it);
			*it = (klog_core_item_t){ .park = pk,
			    .topic = it->topic, .partition = it->partition,
			    .error = error, .offset = -1, .target = -1,
			    .staged = -1 };
			hit = 1;
		}
		if (hit && (pk->kind == KLOG_CORE_FETCH ||
		    pk->kind == KLOG_CORE_RFETCH))
			pk->expired = 1;
		if (hit)
			core_recheck_add(c, pk);
	}
	core_recheck_run(c);
}

/* Take p out of the core's list of parts (the flush timer's, the
 * metrics'). */
static void
parts_remove(klog_core_t *c, klog_core_part_t *p)
{
	for (size_t i = 0; i < c->nparts; i++) {
		if (c->parts[i] != p)
			continue;
		c->parts[i] = c->parts[--c->nparts];
		return;
	}
}

/* Drop p, whose log the store has handed over: see the top. */
static void
part_drop(klog_core_t *c, klog_core_part_t *p, int16_t error)
{
	answer_parked(c, p, error);
	parts_remove(c, p);
	p->topic->parts[p->id] = NULL;
	p->topic = NULL;
	p->dying = 1;
	if (!klog_flusher_holds(c->fl, &p->fl)) {
		part_free(p);
		return;
	}
	p->next_dying = c->dying;
	c->dying = p;
	c->ndying++;
}

/* The core's entry of topic t goes (its parts dropped already). */
static void
topic_remove(klog_core_t *c, struct topic *t)
{
	struct topic **tp = &c->buckets[t->hash & (c->nbuckets - 1)];

	while (*tp != t)
		tp = &(*tp)->hnext;
	*tp = t->hnext;
	c->ntopics--;
	free(t->parts);
	free(t->name);
	free(t);
}

/* ---- dropping partitions ---- */

/* Drop each part whose directory went (its flush found it unlinked):
 * the store forgets its log, and the topic too if that was its last. */
static void
drop_gone(klog_core_t *c)
{
	/* Downwards: a removal moves the last part, already seen, to i. */
	for (size_t i = c->nparts; i-- > 0;) {
		klog_core_part_t *p = c->parts[i];
		struct topic *t = p->topic;

		if (!p->gone)
			continue;
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_ERROR, "topic \"%s\" "
		    "partition %d: its directory was removed behind the "
		    "broker's back: dropped (acks=all writes since its last "
		    "flush failed; its next use starts it empty)", t->name,
		    (int)p->id);
		(void)klog_store_drop_partition(c->store, t->name, p->id);
		part_drop(c, p, KLOG_WIRE_UNKNOWN_TOPIC);
		if (klog_store_partitions(c->store, t->name) < 0)
			topic_remove(c, t);
	}
}

void
core_after_flushes(klog_core_t *c)
{
	klog_core_part_t **pp = &c->dying, *p;

	while ((p = *pp) != NULL) {
		if (klog_flusher_holds(c->fl, &p->fl)) {
			pp = &p->next_dying;
			continue;
		}
		*pp = p->next_dying;
		c->ndying--;
		part_free(p);
	}
	if (c->gone) {
		c->gone = 0;
		drop_gone(c);
	}
}

void
core_dying_free(klog_core_t *c)
{
	klog_core_part_t *p;

	while ((p = c->dying) != NULL) {
		c->dying = p->next_dying;
		part_free(p);
	}
	c->ndying = 0;
}

/* ---- administration ---- */

/* Whether topic is replicated here or in the cluster: ZooKeeper's to
 * administer, not a broker's. */
static int
replicated(klog_core_t *c, const char *name)
{
	struct topic *t = core_topic_named(c, name);

	if (c->replicated_elsewhere != NULL &&
	    c->replicated_elsewhere(c->replicated_arg, name))
		return 1;
	for (int i = 0; t != NULL && i < t->nparts; i++)
		if (t->parts[i] != NULL && t->parts[i]->rep != NULL)
			return 1;
	return 0;
}

static int
refuse_replicated(const char *name, klog_err_t *err)
{
	return klog_err_set(err, -KLOG_EBUSY, "topic \"%s\" is replicated: "
	    "administered in ZooKeeper (-Z), not by a broker", name);
}

/* dry: every check, nothing done (a Kafka validate-only request). */
static int
admin_create(klog_core_t *c, const char *name, int32_t n, int dry,
    klog_err_t *err)
{
	if (klog_store_partitions(c->store, name) >= 0)
		return klog_err_set(err, -KLOG_EEXIST, "topic \"%s\" exists",
		    name);
	if (replicated(c, name))
		return refuse_replicated(name, err);
	if (dry)
		return klog_store_check_partitions(c->store, name, n, err);
	return klog_core_create_topic(c, name, n, err);
}

static int
admin_alter(klog_core_t *c, const char *name, int32_t n, int dry,
    klog_err_t *err)
{
	int have = klog_store_partitions(c->store, name);

	if (have < 0)
		return klog_err_set(err, -KLOG_ENOTOPIC, "topic \"%s\": "
		    "unknown topic", name);
	if (replicated(c, name))
		return refuse_replicated(name, err);
	if (n < have)
		return klog_err_set(err, -KLOG_EINVAL, "topic \"%s\" has %d "
		    "partitions: partitions are added, never removed", name,
		    have);
	if (dry || n == have)
		return klog_store_check_partitions(c->store, name, n, err);
	return klog_core_create_topic(c, name, n, err);
}

/* The store hands the logs over; those the core made a part for go with
 * the part, the others now. */
static int
topic_delete(klog_core_t *c, const char *name, klog_err_t *err)
{
	struct topic *t = core_topic_named(c, name);
	klog_core_part_t *p;
	klog_log_t **logs;
	int n, rc;

	rc = klog_store_delete_topic(c->store, name, &logs, &n, err);
	for (int i = 0; i < n; i++) {
		p = t != NULL && i < t->nparts ? t->parts[i] : NULL;
		if (p != NULL)
			part_drop(c, p, KLOG_WIRE_UNKNOWN_TOPIC);
		else
			klog_log_close(logs[i]);
	}
	free(logs);
	if (t != NULL)
		topic_remove(c, t);
	if (n > 0)
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_INFO, "deleted topic "
		    "\"%s\" (%d partition%s)", name, n, n == 1 ? "" : "s");
	return rc;
}

static int
admin_delete(klog_core_t *c, const char *name, klog_err_t *err)
{
	if (replicated(c, name))
		return refuse_replicated(name, err);
	return topic_delete(c, name, err);
}

int
klog_core_drop_topic(klog_core_t *c, const char *topic, klog_err_t *err)
{
	if (klog_store_partitions(c->store, topic) < 0)
		return klog_err_set(err, -KLOG_ENOTOPIC, "topic \"%s\": "
		    "unknown topic", topic);
	return topic_delete(c, topic, err);
}

static int16_t
wire_admin(int rc)
{
	switch (rc) {
	case 0:
		return KLOG_WIRE_NONE;
	case -KLOG_ENOTOPIC:
		return KLOG_WIRE_UNKNOWN_TOPIC;
	case -KLOG_ETOPIC:
		return KLOG_WIRE_INVALID_TOPIC;
	case -KLOG_EEXIST:
		return KLOG_WIRE_TOPIC_EXISTS;
	case -KLOG_EINVAL:
		return KLOG_WIRE_INVALID_PARTITIONS;
	case -KLOG_EBUSY:
		return KLOG_WIRE_TOPIC_REPLICATED;
	case -KLOG_ENOSPC:
		return KLOG_WIRE_DISK_FULL;
	default:
		return KLOG_WIRE_STORAGE_ERROR;
	}
}

int16_t
klog_core_topic_try(klog_core_t *c, int16_t api, const klog_topic_admin_t *req,
    int dry, int32_t *partitions, klog_err_t *err)
{
	char name[KLOG_TOPIC_MAX + 1];
	int16_t werr;
	int had, rc;

	*partitions = 0;
	if (core_topic_cstr(req->topic, name) < 0) {
		/* Why, in klog_topic_validate()'s words when it has some. */
		if (klog_str_cstr(req->topic, name, sizeof(name)) < 0 ||
		    klog_topic_validate(name, err) == 0)
			klog_err_set(err, -KLOG_ETOPIC, "a topic name is at "
			    "most %d bytes, without NUL", KLOG_TOPIC_MAX);
		return KLOG_WIRE_INVALID_TOPIC;
	}
	if (c->storage_failed) {  /* nothing is written after it (offline.h) */
		klog_err_set(err, -KLOG_EIO, "the broker's storage failed");
		return KLOG_WIRE_STORAGE_ERROR;
	}
	had = klog_store_partitions(c->store, name);
	if (api == KLOG_API_CREATE_TOPIC)
		rc = admin_create(c, name, req->partitions, dry, err);
	else if (api == KLOG_API_ALTER_TOPIC)
		rc = admin_alter(c, name, req->partitions, dry, err);
	else if (had < 0)
		rc = klog_err_set(err, -KLOG_ENOTOPIC, "topic \"%s\": unknown "
		    "topic", name);
	else if (dry)
		rc = replicated(c, name) ? refuse_replicated(name, err) : 0;
	else
		rc = admin_delete(c, name, err);
	werr = wire_admin(rc);
	if (werr == KLOG_WIRE_STORAGE_ERROR || werr == KLOG_WIRE_DISK_FULL)
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_ERROR, "topic \"%s\": "
		    "%s: %s", name, klog_proto_api_name(api),
		    klog_err_text(err, rc));
	if (api != KLOG_API_DELETE_TOPIC)
		had = klog_store_partitions(c->store, name);
	*partitions = had > 0 ? had : 0;
	return werr;
}

int16_t
klog_core_topic_admin(klog_core_t *c, int16_t api,
    const klog_topic_admin_t *req, int32_t *partitions)
{
	klog_err_t err = { 0, "" };

	return klog_core_topic_try(c, api, req, 0, partitions, &err);
}
