/*
 * The core's topics and partitions: a hash of topic names over the
 * store's topics, each partition made lazily on first use (its log opened,
 * a replicated partition's state attached by the cluster layer later);
 * lookups by wire name or C name; topics created at run time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/core/core.h"

#include "core_impl.h"

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
struct topic *
core_topic_lookup(klog_core_t *c, klog_str_t name, int create,
    int16_t *werr)
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
			*werr = core_wire_storage(rc);
			return NULL;
		}
		topic_created(c, buf, n);
	}
	if ((t = topic_add(c, buf, n)) == NULL)
		*werr = KLOG_WIRE_STORAGE_ERROR;
	return t;
}

/* Partition id of topic t (range-checked), made on first use. */
klog_core_part_t *
core_part_get(klog_core_t *c, struct topic *t, int32_t id, int16_t *werr)
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
	struct topic *t = core_topic_lookup(c, topic, 0, werr);

	return t == NULL ? NULL : core_part_get(c, t, id, werr);
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
	if ((t = core_topic_lookup(c, name, 0, &werr)) == NULL) {
		klog_err_set(err, -KLOG_EIO, "topic \"%s\": %s", topic,
		    klog_wire_error_name(werr));
		return NULL;
	}
	if ((p = core_part_get(c, t, id, &werr)) == NULL)
		klog_err_set(err, -KLOG_EIO, "topic \"%s\" partition %d: %s",
		    topic, id, klog_wire_error_name(werr));
	return p;
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
