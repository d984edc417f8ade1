#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/clock.h"
#include "klog/group/group.h"
#include "klog/storage/names.h"
#include "klog/zk/layout.h"

struct klog_group {
	klog_zk_t *zk;
	klog_discovery_t *d;
	char group[KLOG_TOPIC_MAX + 1];
	char topic[KLOG_TOPIC_MAX + 1];
	char id[KLOG_LAYOUT_NAME_MAX + 1];
	char thread[KLOG_LAYOUT_NAME_MAX + 1];
	char ids_path[KLOG_ZK_PATH_MAX];
	klog_group_part_t *parts;   /* owned, ascending index */
	size_t nparts;
	int connected;
	int registered;
	int pending;
	int64_t retry_at;
	int backoff_ms;
};

/* A partition of the topic as the discovery sees it now. */
struct cand {
	char name[KLOG_LAYOUT_PART_NAME_MAX];
	int32_t index, broker_id, partition;
};

/* What a rebalance reads: the topic's partitions and the group's threads,
 * each sorted as strings. */
struct view {
	struct cand *cands;
	char **names;               /* views of cands[i].name */
	size_t n;
	klog_zk_list_t threads;
	int me_listed;
};

/* ---- pure parts ---- */

int
klog_group_plan(char **parts, size_t nparts, char **threads, size_t nthreads,
    const char *me, size_t *start, size_t *count)
{
	*start = 0;
	*count = 0;
	klog_layout_sort_names(parts, nparts);
	klog_layout_sort_names(threads, nthreads);
	for (size_t j = 0; j < nthreads; j++)
		if (strcmp(threads[j], me) == 0) {
			klog_layout_assign(nparts, nthreads, j, start, count);
			return 0;
		}
	return -KLOG_ENOENT;
}

static int
listed(char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return 1;
	return 0;
}

void
klog_group_diff(char *const *old, size_t nold, char *const *new_, size_t nnew,
    unsigned char *release, unsigned char *claim)
{
	for (size_t i = 0; i < nold; i++)
		release[i] = !listed(new_, nnew, old[i]);
	for (size_t j = 0; j < nnew; j++)
		claim[j] = !listed(old, nold, new_[j]);
}

/* ---- state ---- */

static void
schedule(klog_group_t *g, int64_t delay_ms)
{
	g->pending = 1;
	g->retry_at = klog_clock_mono_ms() + delay_ms;
}

static void
retry_later(klog_group_t *g)
{
	schedule(g, g->backoff_ms);
	g->backoff_ms = g->backoff_ms * 2 > KLOG_BACKOFF_MAX_MS ? KLOG_BACKOFF_MAX_MS :
	    g->backoff_ms * 2;
}

void
klog_group_later(klog_group_t *g)
{
	retry_later(g);
}

static void
due_now(klog_group_t *g)
{
	schedule(g, 0);
	g->backoff_ms = KLOG_BACKOFF_MIN_MS;
}

int
klog_group_event(klog_group_t *g, const klog_zk_event_t *ev, int changed)
{
	switch (ev->type) {
	case KLOG_ZK_EVENT_CHILD:
		if (strcmp(ev->path, g->ids_path) == 0)
			changed = 1;
		break;
	case KLOG_ZK_EVENT_DISCONNECTED:
		g->connected = 0;
		return 0;
	case KLOG_ZK_EVENT_EXPIRED:
		/* Our ephemerals are gone: nothing is ours any more. */
		g->connected = 0;
		g->registered = 0;
		g->nparts = 0;
		return 0;
	case KLOG_ZK_EVENT_SESSION:
		g->registered = 0;
		/* fall through */
	case KLOG_ZK_EVENT_CONNECTED:
		g->connected = 1;
		changed = 1;
		break;
	case KLOG_ZK_EVENT_OVERFLOW:
		changed = 1;
		break;
	default:
		break;
	}
	if (changed)
		due_now(g);
	return changed;
}

int
klog_group_live(const klog_group_t *g)
{
	return g->connected && g->registered;
}

int
klog_group_due(const klog_group_t *g, int64_t now_ms)
{
	return g->pending && g->connected && now_ms >= g->retry_at;
}

int64_t
klog_group_wait_ms(const klog_group_t *g, int64_t now_ms)
{
	if (!g->pending || !g->connected)
		return -1;
	return g->retry_at > now_ms ? g->retry_at - now_ms : 0;
}

const char *
klog_group_member_id(const klog_group_t *g)
{
	return g->id;
}

const char *
klog_group_thread_id(const klog_group_t *g)
{
	return g->thread;
}

size_t
klog_group_count(const klog_group_t *g)
{
	return g->nparts;
}

const klog_group_part_t *
klog_group_part(const klog_group_t *g, size_t i)
{
	return &g->parts[i];
}

void
klog_group_set_position(klog_group_t *g, int32_t index, int64_t position)
{
	for (size_t i = 0; i < g->nparts; i++)
		if (g->parts[i].index == index)
			g->parts[i].position = position;
}

static int
commit_one(klog_group_t *g, klog_group_part_t *p, klog_err_t *err)
{
	int rc;

	if (p->position < 0 || p->position == p->committed)
		return 0;
	rc = klog_layout_offset_commit(g->zk, g->group, g->topic,
	    p->broker_id, p->partition, p->position, err);
	if (rc == 0)
		p->committed = p->position;
	return rc;
}

int
klog_group_commit(klog_group_t *g, klog_err_t *err)
{
	int rc;

	for (size_t i = 0; i < g->nparts; i++)
		if ((rc = commit_one(g, &g->parts[i], err)) < 0)
			return rc;
	return 0;
}

/* ---- rebalance ---- */

static void
view_free(struct view *v)
{
	free(v->cands);
	free(v->names);
	klog_zk_list_free(&v->threads);
}

static int
cmp_cand(const void *a, const void *b)
{
	return strcmp(((const struct cand *)a)->name,
	    ((const struct cand *)b)->name);
}

static int
read_parts(klog_group_t *g, struct view *v, klog_err_t *err)
{
	klog_discovery_part_t where;
	int n, rc;

	if ((n = klog_discovery_partitions(g->d, g->topic, err)) < 0)
		return n;
	if (n == 0)
		return 0;
	v->cands = calloc((size_t)n, sizeof(*v->cands));
	v->names = calloc((size_t)n, sizeof(*v->names));
	if (v->cands == NULL || v->names == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		/* A replicated partition is named by its number, leader or
		 * not: no leader now (an election) is no reason to wait. */
		rc = klog_discovery_locate(g->d, g->topic, i, &where, err);
		if (rc == -KLOG_ENOTLEADER) {
			where.replicated = 1;
			where.partition = i;
		} else if (rc < 0) {
			return rc;
		}
		v->cands[i].index = i;
		v->cands[i].broker_id = where.replicated ?
		    KLOG_LAYOUT_NUMBERED : where.broker_id;
		v->cands[i].partition = where.partition;
		klog_layout_part_name(v->cands[i].name,
		    sizeof(v->cands[i].name), where.broker_id, where.partition);
	}
	v->n = (size_t)n;
	qsort(v->cands, v->n, sizeof(*v->cands), cmp_cand);
	for (size_t i = 0; i < v->n; i++)
		v->names[i] = v->cands[i].name;
	return 0;
}

/* Add "<member>-<i>" for each stream member has on our topic. */
static int
add_threads(klog_group_t *g, const char *member, klog_zk_list_t *out,
    klog_err_t *err)
{
	klog_layout_sub_t subs[64];
	char tid[KLOG_LAYOUT_NAME_MAX + 16];
	char **v;
	size_t n;
	int rc;

	rc = klog_layout_member_subs(g->zk, g->group, member, subs, 64, &n,
	    err);
	if (rc == -KLOG_ENOENT)
		return 0;  /* left between the two reads */
	if (rc == -KLOG_EINVAL || rc == -KLOG_EUNSUPPORTED ||
	    rc == -KLOG_ETOOBIG)
		return 0;  /* not one we can share a topic with */
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(subs[i].topic, g->topic) != 0)
			continue;
		for (int32_t s = 0; s < subs[i].streams && s < 1024; s++) {
			if (klog_layout_thread_id(tid, sizeof(tid), member,
			    s) < 0)
				break;
			v = realloc(out->names, (out->n + 1) * sizeof(*v));
			if (v == NULL || (v[out->n] = strdup(tid)) == NULL) {
				if (v != NULL)
					out->names = v;
				return klog_err_set(err, -KLOG_ENOMEM,
				    "out of memory");
			}
			out->names = v;
			out->n++;
		}
	}
	return 0;
}

static int
read_threads(klog_group_t *g, struct view *v, klog_err_t *err)
{
	klog_zk_list_t members = { 0 };
	int rc;

	if ((rc = klog_layout_members(g->zk, g->group, 1, &members,
	    err)) < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < members.n; i++) {
		if (strcmp(members.names[i], g->id) == 0)
			v->me_listed = 1;
		rc = add_threads(g, members.names[i], &v->threads, err);
	}
	klog_zk_list_free(&members);
	return rc;
}

static const struct cand *
find_cand(const struct view *v, const char *name)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->cands[i].name, name) == 0)
			return &v->cands[i];
	return NULL;
}

static void
part_name(const klog_group_part_t *p, char *buf, size_t len)
{
	klog_layout_part_name(buf, len, p->broker_id, p->partition);
}

/* Commit and give up owned partition i. */
static int
release(klog_group_t *g, size_t i, klog_err_t *err)
{
	klog_group_part_t *p = &g->parts[i];
	int rc;

	if ((rc = commit_one(g, p, err)) < 0 ||
	    (rc = klog_layout_owner_release(g->zk, g->group, g->topic,
	    p->broker_id, p->partition, err)) < 0)
		return rc;
	memmove(p, p + 1, (g->nparts - i - 1) * sizeof(*p));
	g->nparts--;
	return 0;
}

/* Claim c: 0 and added, 1 if another thread owns it, or an error. */
static int
claim(klog_group_t *g, const struct cand *c, klog_err_t *err)
{
	klog_group_part_t *v, *p;
	int64_t off;
	int rc;

	rc = klog_layout_owner_claim(g->zk, g->group, g->topic, c->broker_id,
	    c->partition, g->thread, err);
	if (rc == -KLOG_EEXIST)
		return 1;
	if (rc < 0)
		return rc;
	rc = klog_layout_offset_read(g->zk, g->group, g->topic, c->broker_id,
	    c->partition, &off, err);
	if (rc == -KLOG_ENOENT)
		off = -1;
	else if (rc < 0)
		goto undo;
	if ((v = realloc(g->parts, (g->nparts + 1) * sizeof(*v))) == NULL) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto undo;
	}
	g->parts = v;
	p = &v[g->nparts++];
	p->index = c->index;
	p->broker_id = c->broker_id;
	p->partition = c->partition;
	p->position = off;
	p->committed = off;
	return 0;
undo:
	klog_layout_owner_release(g->zk, g->group, g->topic, c->broker_id,
	    c->partition, NULL);
	return rc;
}

static int
cmp_index(const void *a, const void *b)
{
	const klog_group_part_t *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

/* Make the owned set the range [start, start + count) of v. */
static int
apply(klog_group_t *g, const struct view *v, size_t start, size_t count,
    int *moved, klog_err_t *err)
{
	char name[KLOG_LAYOUT_PART_NAME_MAX];
	const struct cand *c;
	size_t i;
	int rc, conflicts = 0;

	for (i = 0; i < g->nparts; ) {
		part_name(&g->parts[i], name, sizeof(name));
		c = find_cand(v, name);
		if (c != NULL && listed(v->names + start, count, name)) {
			g->parts[i++].index = c->index;
			continue;
		}
		if ((rc = release(g, i, err)) < 0)
			return rc;
		*moved = 1;
	}
	for (size_t j = start; j < start + count; j++) {
		for (i = 0; i < g->nparts; i++) {
			part_name(&g->parts[i], name, sizeof(name));
			if (strcmp(name, v->names[j]) == 0)
				break;
		}
		if (i < g->nparts)
			continue;
		if ((rc = claim(g, find_cand(v, v->names[j]), err)) < 0)
			return rc;
		conflicts += rc;
		*moved |= rc == 0;
	}
	if (g->nparts > 1)
		qsort(g->parts, g->nparts, sizeof(*g->parts), cmp_index);
	return conflicts > 0;
}

static int
join(klog_group_t *g, klog_err_t *err)
{
	klog_layout_sub_t sub = { .streams = 1 };
	int rc;

	snprintf(sub.topic, sizeof(sub.topic), "%s", g->topic);
	if ((rc = klog_layout_member_register(g->zk, g->group, g->id, &sub, 1,
	    err)) < 0)
		return rc;
	g->registered = 1;
	g->connected = 1;
	return 0;
}

int
klog_group_rebalance(klog_group_t *g, int *moved, klog_err_t *err)
{
	struct view v = { 0 };
	size_t start = 0, count = 0;
	int rc;

	*moved = 0;
	g->pending = 0;
	if (!g->registered && (rc = join(g, err)) < 0)
		goto out;
	if ((rc = read_threads(g, &v, err)) < 0 ||
	    (rc = read_parts(g, &v, err)) < 0)
		goto out;
	if (!v.me_listed) {
		/* Our node went without an expiry we heard of: join again. */
		g->registered = 0;
		rc = klog_err_set(err, -KLOG_ECONN, "group \"%s\": member %s "
		    "is not registered", g->group, g->id);
		goto out;
	}
	klog_group_plan(v.names, v.n, v.threads.names, v.threads.n, g->thread,
	    &start, &count);
	rc = apply(g, &v, start, count, moved, err);
out:
	view_free(&v);
	if (rc != 0)
		retry_later(g);
	else
		g->backoff_ms = KLOG_BACKOFF_MIN_MS;
	return rc;
}

/* ---- open and close ---- */

int
klog_group_open(klog_zk_t *zk, klog_discovery_t *d,
    const klog_group_config_t *cfg, klog_group_t **out, klog_err_t *err)
{
	klog_group_t *g;
	int rc;

	*out = NULL;
	if ((rc = klog_layout_group_validate(cfg->group, err)) < 0)
		return rc;
	if (klog_topic_validate(cfg->topic, err) < 0)
		return -KLOG_ETOPIC;
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	g->zk = zk;
	g->d = d;
	g->backoff_ms = KLOG_BACKOFF_MIN_MS;
	snprintf(g->group, sizeof(g->group), "%s", cfg->group);
	snprintf(g->topic, sizeof(g->topic), "%s", cfg->topic);
	if (cfg->consumer_id != NULL)
		rc = snprintf(g->id, sizeof(g->id), "%s", cfg->consumer_id) >=
		    (int)sizeof(g->id) ? -KLOG_EINVAL : 0;
	else
		rc = klog_layout_new_consumer_id(g->id, sizeof(g->id),
		    cfg->group, err);
	if (rc == 0)
		rc = klog_layout_thread_id(g->thread, sizeof(g->thread),
		    g->id, 0);
	if (rc == 0)
		rc = klog_layout_member_path(g->ids_path, sizeof(g->ids_path),
		    g->group, NULL);
	if (rc < 0) {
		klog_err_set(err, rc, "group \"%s\": bad consumer id",
		    cfg->group);
		goto fail;
	}
	if ((rc = join(g, err)) < 0)
		goto fail;
	due_now(g);
	*out = g;
	return 0;
fail:
	free(g);
	return rc;
}

void
klog_group_close(klog_group_t *g)
{
	char path[KLOG_ZK_PATH_MAX];

	if (g == NULL)
		return;
	if (g->connected) {
		(void)klog_group_commit(g, NULL);
		while (g->nparts > 0 && release(g, g->nparts - 1, NULL) == 0)
			;
		if (klog_layout_member_path(path, sizeof(path), g->group,
		    g->id) == 0)
			(void)klog_zk_delete(g->zk, path, -1, NULL);
	}
	free(g->parts);
	free(g);
}
