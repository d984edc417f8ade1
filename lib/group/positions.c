/*
 * A group's partitions and where they stand; see positions.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include "klog/client/client.h"
#include "klog/group/positions.h"
#include "klog/zk/rtopics.h"

static int
cmp_part(const void *a, const void *b)
{
	const klog_positions_part_t *x = a, *y = b;

	if (x->broker != y->broker)
		return (x->broker > y->broker) - (x->broker < y->broker);
	return (x->part > y->part) - (x->part < y->part);
}

static int
add_part(klog_positions_part_t **v, size_t *n, int32_t broker, int32_t p)
{
	klog_positions_part_t *nv;

	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].broker == broker && (*v)[i].part == p)
			return 0;
	if ((nv = realloc(*v, (*n + 1) * sizeof(**v))) == NULL)
		return -KLOG_ENOMEM;
	nv[*n].broker = broker;
	nv[*n].part = p;
	*v = nv;
	(*n)++;
	return 0;
}

/* Add the "<b>-<p>" children of path (offsets or owners of a topic). */
static int
add_named_parts(klog_zk_t *zk, const char *path, klog_positions_part_t **v,
    size_t *n, klog_err_t *err)
{
	klog_zk_list_t l;
	int32_t b, p;
	int rc;

	rc = klog_zk_children(zk, path, 0, &l, err);
	if (rc == -KLOG_ENOENT)
		return 0;
	for (size_t i = 0; rc == 0 && i < l.n; i++)
		if (klog_layout_part_parse(l.names[i], &b, &p) == 0)
			rc = add_part(v, n, b, p);
	klog_zk_list_free(&l);
	return rc;
}

int
klog_positions_parts(klog_zk_t *zk, const char *group, const char *topic,
    klog_positions_part_t **out, size_t *n, klog_err_t *err)
{
	klog_layout_topic_t t = { 0 };
	klog_rtopic_t rt;
	char path[KLOG_ZK_PATH_MAX];
	klog_positions_part_t *v = NULL;
	size_t k = 0;
	int rc;

	rc = klog_rtopics_read(zk, topic, 0, &rt, err);
	if (rc == 0) {
		for (int32_t p = 0; rc == 0 && p < rt.nparts; p++)
			rc = add_part(&v, &k, KLOG_LAYOUT_NUMBERED, p);
		klog_rtopic_free(&rt);
	} else if (rc == -KLOG_ENOENT) {
		rc = klog_layout_topic(zk, topic, 0, &t, err);
	}
	if (rc < 0 && rc != -KLOG_ENOTOPIC) {
		free(v);
		return rc;
	}
	for (size_t i = 0; rc == 0 && i < t.nholders; i++)
		for (int32_t p = 0; rc == 0 && p < t.holders[i].partitions; p++)
			rc = add_part(&v, &k, t.holders[i].broker_id, p);
	klog_layout_topic_free(&t);
	if (rc == -KLOG_ENOTOPIC)
		rc = 0;
	if (rc == 0) {
		klog_layout_offset_path(path, sizeof(path), group, topic, -1,
		    -1);
		rc = add_named_parts(zk, path, &v, &k, err);
	}
	if (rc == 0) {
		klog_layout_owner_path(path, sizeof(path), group, topic, -1,
		    -1);
		rc = add_named_parts(zk, path, &v, &k, err);
	}
	if (rc < 0) {
		free(v);
		return rc == -KLOG_ENOMEM ? klog_err_set(err, rc, "%s",
		    klog_strerror(rc)) : rc;
	}
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_part);
	*out = v;
	*n = k;
	return 0;
}


int
klog_positions_brokers_load(klog_zk_t *zk, klog_positions_brokers_t *b,
    klog_err_t *err)
{
	int rc = klog_layout_brokers(zk, 0, &b->v, &b->n, err);

	if (rc < 0)
		return rc;
	b->zk = zk;
	if ((b->dead = calloc(b->n + 1, sizeof(int))) == NULL) {
		free(b->v);
		return klog_err_set(err, -KLOG_ENOMEM, "%s",
		    klog_strerror(KLOG_ENOMEM));
	}
	return 0;
}

void
klog_positions_brokers_free(klog_positions_brokers_t *b)
{
	free(b->v);
	free(b->dead);
}

const klog_layout_broker_t *
klog_positions_broker_find(const klog_positions_brokers_t *b, int32_t id,
    size_t *idx)
{
	for (size_t i = 0; i < b->n; i++) {
		if (b->v[i].id == id) {
			if (idx != NULL)
				*idx = i;
			return &b->v[i];
		}
	}
	return NULL;
}

int
klog_positions_ask_offset(klog_positions_brokers_t *b, const char *topic,
    const klog_positions_part_t *p, int64_t time, int timeout_ms, int64_t *off,
    klog_err_t *err)
{
	const klog_layout_broker_t *br;
	klog_client_addr_t addr;
	klog_err_t e = { 0, "" };
	char what[KLOG_LAYOUT_HOST_MAX + KLOG_TOPIC_MAX + 32];
	char name[KLOG_LAYOUT_PART_NAME_MAX];
	int32_t id = p->broker;
	size_t i;
	int rc;

	klog_layout_part_name(name, sizeof(name), p->broker, p->part);
	if (p->broker == KLOG_LAYOUT_NUMBERED) {
		rc = klog_rtopics_leader(b->zk, topic, p->part, 0, &id, &e);
		if (rc == -KLOG_ENOENT)
			return klog_err_set(err, -KLOG_ENOTLEADER, "topic "
			    "\"%s\" partition %s: no leader (an election is "
			    "under way)", topic, name);
		if (rc < 0)
			return klog_err_set(err, rc, "topic \"%s\" partition "
			    "%s: %s", topic, name, klog_err_text(&e, rc));
	}
	if ((br = klog_positions_broker_find(b, id, &i)) == NULL)
		return klog_err_set(err, -KLOG_ECONN, "topic \"%s\" partition "
		    "%s: broker %d is not registered", topic, name, (int)id);
	if (b->dead[i])
		return klog_err_set(err, -KLOG_ECONN, "topic \"%s\" partition "
		    "%s: broker %d: unavailable", topic, name, (int)id);
	snprintf(addr.host, sizeof(addr.host), "%s", br->host);
	snprintf(addr.port, sizeof(addr.port), "%d", br->port);
	addr.sec = b->sec;
	snprintf(what, sizeof(what), "%s:%d: %s %d", br->host, br->port, topic,
	    (int)p->part);
	rc = klog_client_query_offset_at(&addr, topic, p->part, time,
	    timeout_ms, what, off, &e);
	if (rc == -KLOG_ECONN || rc == -KLOG_ETIMEDOUT || rc == -KLOG_ECLOSED)
		b->dead[i] = 1;
	if (rc < 0)
		return klog_err_set(err, rc, "topic \"%s\" partition %s: "
		    "broker %d: %s", topic, name, (int)id,
		    klog_err_text(&e, rc));
	return 0;
}

