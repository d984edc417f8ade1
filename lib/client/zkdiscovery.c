#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/client/zkdiscovery.h"
#include "klog/storage/names.h"
#include "klog/zk/layout.h"
#include "klog/zk/rtopics.h"

/* A replicated partition's leader as last read (each one watched). */
enum { LEADER_UNREAD = -2, LEADER_NONE = -1 };

/* One topic as last read; holders include brokers that are not live. */
struct dtopic {
	char name[KLOG_TOPIC_MAX + 1];
	int valid;
	int registered;
	klog_layout_topic_t t;
	int replicated;          /* under /klog/topics: rt and leaders hold */
	klog_rtopic_t rt;
	int32_t *leaders;        /* rt.nparts: a broker id or LEADER_* */
};

struct zk_disc {
	klog_discovery_t base;
	klog_zk_t *zk;
	int brokers_valid;
	klog_layout_broker_t *brokers;   /* ascending id */
	size_t nbrokers;
	struct dtopic *topics;
	size_t ntopics;
	int stale;                        /* a read failed: re-read later */
};

static const klog_layout_broker_t *
live_broker(const struct zk_disc *z, int32_t id)
{
	for (size_t i = 0; i < z->nbrokers; i++)
		if (z->brokers[i].id == id)
			return &z->brokers[i];
	return NULL;
}

static int
read_brokers(struct zk_disc *z, klog_err_t *err)
{
	klog_layout_broker_t *v;
	size_t n;
	int rc;

	if (z->brokers_valid)
		return 0;
	if ((rc = klog_layout_brokers(z->zk, 1, &v, &n, err)) < 0) {
		z->stale = 1;
		return rc;
	}
	free(z->brokers);
	z->brokers = v;
	z->nbrokers = n;
	z->brokers_valid = 1;
	return 0;
}

static struct dtopic *
find_topic(struct zk_disc *z, const char *topic, klog_err_t *err)
{
	struct dtopic *v;

	for (size_t i = 0; i < z->ntopics; i++)
		if (strcmp(z->topics[i].name, topic) == 0)
			return &z->topics[i];
	v = realloc(z->topics, (z->ntopics + 1) * sizeof(*v));
	if (v == NULL) {
		klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		return NULL;
	}
	z->topics = v;
	v = &z->topics[z->ntopics++];
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", topic);
	return v;
}

static void
dtopic_clear(struct dtopic *t)
{
	klog_layout_topic_free(&t->t);
	klog_rtopic_free(&t->rt);
	free(t->leaders);
	t->leaders = NULL;
	t->registered = 0;
	t->replicated = 0;
}

/* A replicated topic's assignment (watched: a DATA event if it changes);
 * 1 if it is one, 0 if not. */
static int
read_replicated(struct zk_disc *z, struct dtopic *t, klog_err_t *err)
{
	int rc;

	rc = klog_rtopics_read(z->zk, t->name, 1, &t->rt, err);
	if (rc == -KLOG_ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	if ((t->leaders = malloc((size_t)t->rt.nparts *
	    sizeof(*t->leaders))) == NULL) {
		klog_rtopic_free(&t->rt);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	for (int i = 0; i < t->rt.nparts; i++)
		t->leaders[i] = LEADER_UNREAD;
	t->replicated = 1;
	return 1;
}

/* A topic's registrations, watched; one not registered yet is watched
 * for its creation.  A replicated topic is asked first: it has no 0.7
 * registrations at all. */
static int
read_topic(struct zk_disc *z, struct dtopic *t, klog_err_t *err)
{
	char path[KLOG_ZK_PATH_MAX];
	int rc;

	if (t->valid)
		return 0;
	dtopic_clear(t);
	if ((rc = read_replicated(z, t, err)) != 0) {
		if (rc < 0) {
			z->stale = 1;
			return rc;
		}
		t->valid = 1;
		return 0;
	}
	rc = klog_layout_topic(z->zk, t->name, 1, &t->t, err);
	if (rc == -KLOG_ENOTOPIC) {
		klog_layout_topic_path(path, sizeof(path), t->name);
		rc = klog_zk_exists(z->zk, path, 1, NULL, err);
		if (rc == 0)
			return klog_err_set(err, -KLOG_EBUSY, "topic \"%s\": "
			    "registered meanwhile; ask again", t->name);
		if (rc == -KLOG_ENOENT)
			rc = 0;
	} else if (rc == 0) {
		t->registered = 1;
	}
	if (rc < 0) {
		z->stale = 1;
		return rc;
	}
	t->valid = 1;
	return 0;
}

/* The topic's live pair count, reading what is not cached. */
static int
topic_state(struct zk_disc *z, const char *topic, struct dtopic **out,
    klog_err_t *err)
{
	struct dtopic *t;
	int rc, n = 0, tries = 0;

	if (klog_topic_validate(topic, err) < 0)
		return -KLOG_ETOPIC;
	if ((rc = read_brokers(z, err)) < 0)
		return rc;
	if ((t = find_topic(z, topic, err)) == NULL)
		return -KLOG_ENOMEM;
	while ((rc = read_topic(z, t, err)) == -KLOG_EBUSY && ++tries < 3)
		;
	if (rc < 0)
		return rc;
	*out = t;
	if (t->replicated)
		return t->rt.nparts;
	for (size_t i = 0; t->registered && i < t->t.nholders; i++)
		if (live_broker(z, t->t.holders[i].broker_id) != NULL)
			n += t->t.holders[i].partitions;
	return n;
}

static int
zk_partitions(klog_discovery_t *d, const char *topic, klog_err_t *err)
{
	struct dtopic *t;

	return topic_state((struct zk_disc *)d, topic, &t, err);
}

static void
fill_part(const klog_layout_broker_t *b, int32_t partition,
    klog_discovery_part_t *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->addr.host, sizeof(out->addr.host), "%s", b->host);
	snprintf(out->addr.port, sizeof(out->addr.port), "%d", b->port);
	out->partition = partition;
	out->broker_id = b->id;
}

/*
 * Partition index of a replicated topic: at its leader, read (and watched)
 * if not cached.  No leader node, or a leader not registered as live, is
 * -KLOG_ENOTLEADER: an election is under way (or the leader's session is
 * about to expire, which starts one), and the caller asks again later.
 */
static int
locate_replicated(struct zk_disc *z, struct dtopic *t, int index,
    klog_discovery_part_t *out, klog_err_t *err)
{
	const klog_layout_broker_t *b;
	int32_t id;
	int rc;

	if (index < 0 || index >= t->rt.nparts)
		return klog_err_set(err, -KLOG_ENOPARTITION,
		    "topic \"%s\" has %d partition%s, no partition %d",
		    t->name, t->rt.nparts, t->rt.nparts == 1 ? "" : "s",
		    index);
	if (t->leaders[index] == LEADER_UNREAD) {
		rc = klog_rtopics_leader(z->zk, t->name, index, 1, &id, err);
		if (rc == -KLOG_ENOENT)
			id = LEADER_NONE;
		else if (rc < 0) {
			z->stale = 1;
			return rc;
		}
		t->leaders[index] = id;
	}
	if (t->leaders[index] == LEADER_NONE)
		return klog_err_set(err, -KLOG_ENOTLEADER, "topic \"%s\" "
		    "partition %d: no leader (an election is under way)",
		    t->name, index);
	if ((b = live_broker(z, t->leaders[index])) == NULL)
		return klog_err_set(err, -KLOG_ENOTLEADER, "topic \"%s\" "
		    "partition %d: leader %d is not a live broker", t->name,
		    index, (int)t->leaders[index]);
	fill_part(b, index, out);
	out->replicated = 1;
	return 0;
}

static int
zk_locate(klog_discovery_t *d, const char *topic, int index,
    klog_discovery_part_t *out, klog_err_t *err)
{
	struct zk_disc *z = (struct zk_disc *)d;
	const klog_layout_holder_t *h;
	const klog_layout_broker_t *b;
	struct dtopic *t;
	int n, k = index;

	if ((n = topic_state(z, topic, &t, err)) < 0)
		return n;
	if (t->replicated)
		return locate_replicated(z, t, index, out, err);
	if (n == 0 && z->nbrokers == 0)
		return klog_err_set(err, -KLOG_ECONN, "no live broker is "
		    "registered in ZooKeeper");
	if (n == 0 && index >= 0 && (size_t)index < z->nbrokers) {
		fill_part(&z->brokers[index], 0, out);
		return 0;
	}
	if (index < 0 || index >= n)
		return klog_err_set(err, -KLOG_ENOPARTITION,
		    "topic \"%s\" has %d partition%s, no partition %d", topic,
		    n, n == 1 ? "" : "s", index);
	for (size_t i = 0; i < t->t.nholders; i++) {
		h = &t->t.holders[i];
		if ((b = live_broker(z, h->broker_id)) == NULL)
			continue;
		if (k < h->partitions) {
			fill_part(b, k, out);
			return 0;
		}
		k -= h->partitions;
	}
	return klog_err_set(err, -KLOG_ENOPARTITION, "topic \"%s\": no "
	    "partition %d", topic, index);
}

/* A replicated topic's partition count, or a negative error. */
static int
replicated_count(struct zk_disc *z, const char *topic, klog_err_t *err)
{
	klog_rtopic_t rt = { 0 };
	int rc;

	if ((rc = klog_rtopics_read(z->zk, topic, 0, &rt, err)) < 0)
		return rc;
	rc = rt.nparts;
	klog_rtopic_free(&rt);
	return rc;
}

/*
 * The 0.7 topics (those a live broker holds) and the replicated ones
 * (every one: a partition without a leader is still a partition), merged
 * in name order; a name in both is said once, as replicated.
 */
static int
zk_topics(klog_discovery_t *d, klog_discovery_topic_fn fn, void *arg,
    klog_err_t *err)
{
	struct zk_disc *z = (struct zk_disc *)d;
	klog_layout_topic_t *v;
	klog_zk_list_t rl = { 0 };
	size_t n, i = 0, j = 0;
	int rc, count, cmp;

	if ((rc = read_brokers(z, err)) < 0)
		return rc;
	if ((rc = klog_layout_topics(z->zk, &v, &n, err)) < 0) {
		z->stale = 1;
		return rc;
	}
	if ((rc = klog_rtopics_list(z->zk, 0, &rl, err)) < 0 &&
	    rc != -KLOG_ENOENT) {
		z->stale = 1;
		goto out;
	}
	rc = 0;
	while (i < n || j < rl.n) {
		cmp = i == n ? 1 : j == rl.n ? -1 :
		    strcmp(v[i].name, rl.names[j]);
		if (cmp >= 0) {
			if ((count = replicated_count(z, rl.names[j],
			    err)) == -KLOG_ENOENT)
				count = 0;      /* deleted meanwhile */
			else if (count < 0) {
				rc = count;
				z->stale = 1;
				goto out;
			}
			if (count > 0 && fn(arg, rl.names[j], count) != 0)
				break;
			j++;
			i += cmp == 0;
			continue;
		}
		count = 0;
		for (size_t k = 0; k < v[i].nholders; k++)
			if (live_broker(z, v[i].holders[k].broker_id) != NULL)
				count += v[i].holders[k].partitions;
		if (count > 0 && fn(arg, v[i].name, count) != 0)
			break;
		i++;
	}
out:
	klog_zk_list_free(&rl);
	klog_layout_topics_free(v, n);
	return rc;
}

static void
zk_invalidate(klog_discovery_t *d)
{
	struct zk_disc *z = (struct zk_disc *)d;

	z->brokers_valid = 0;
	for (size_t i = 0; i < z->ntopics; i++)
		z->topics[i].valid = 0;
}

static void
zk_close(klog_discovery_t *d)
{
	struct zk_disc *z = (struct zk_disc *)d;

	for (size_t i = 0; i < z->ntopics; i++)
		dtopic_clear(&z->topics[i]);
	free(z->topics);
	free(z->brokers);
	free(z);
}

static const klog_discovery_ops_t zk_ops = {
	.partitions = zk_partitions,
	.locate = zk_locate,
	.topics = zk_topics,
	.invalidate = zk_invalidate,
	.close = zk_close,
};

int
klog_zkdiscovery_open(klog_zk_t *zk, klog_discovery_t **out,
    klog_err_t *err)
{
	struct zk_disc *z;

	if ((z = calloc(1, sizeof(*z))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	z->base.ops = &zk_ops;
	z->zk = zk;
	*out = &z->base;
	return 0;
}

static struct dtopic *
cached_topic(struct zk_disc *z, const char *name, size_t len)
{
	for (size_t i = 0; i < z->ntopics; i++)
		if (strlen(z->topics[i].name) == len &&
		    memcmp(z->topics[i].name, name, len) == 0)
			return &z->topics[i];
	return NULL;
}

/*
 * An event under /klog/topics: the assignment node (the whole topic is
 * read again) or a partition's leader node (that leader alone is).  State
 * nodes are not watched here: the leader node is what names the leader
 * for clients, and an election always recreates it.
 */
static int
rtopic_event(struct zk_disc *z, const char *rest)
{
	const char *slash = strchr(rest, '/'), *num;
	struct dtopic *t;
	char *end;
	long p;

	if ((t = cached_topic(z, rest, slash ? (size_t)(slash - rest) :
	    strlen(rest))) == NULL)
		return 0;
	if (slash == NULL) {
		t->valid = 0;
		return 1;
	}
	if (strncmp(slash, "/partitions/", 12) != 0)
		return 0;
	num = slash + 12;
	p = strtol(num, &end, 10);
	if (end == num || strcmp(end, "/leader") != 0)
		return 0;
	if (!t->valid || !t->replicated)
		return 1;
	if (p >= 0 && p < t->rt.nparts)
		t->leaders[p] = LEADER_UNREAD;
	return 1;
}

/* A path event under /brokers or /klog: which cached answer it
 * concerns. */
static int
path_event(struct zk_disc *z, const char *path)
{
	const char *topics = KLOG_LAYOUT_BROKER_TOPICS "/";
	const char *rtopics = KLOG_RTOPICS_ROOT "/";
	size_t tl = strlen(topics);

	if (strncmp(path, rtopics, strlen(rtopics)) == 0)
		return rtopic_event(z, path + strlen(rtopics));
	if (strcmp(path, KLOG_LAYOUT_BROKER_IDS) == 0) {
		z->brokers_valid = 0;
		return 1;
	}
	if (strncmp(path, topics, tl) != 0 || strchr(path + tl, '/') != NULL)
		return 0;
	for (size_t i = 0; i < z->ntopics; i++)
		if (strcmp(z->topics[i].name, path + tl) == 0) {
			z->topics[i].valid = 0;
			return 1;
		}
	return 0;
}

int
klog_zkdiscovery_event(klog_discovery_t *d, const klog_zk_event_t *ev)
{
	struct zk_disc *z = (struct zk_disc *)d;

	switch (ev->type) {
	case KLOG_ZK_EVENT_CHILD:
	case KLOG_ZK_EVENT_DATA:
		return path_event(z, ev->path);
	case KLOG_ZK_EVENT_CONNECTED:
		if (!z->stale)
			return 0;
		/* fall through */
	case KLOG_ZK_EVENT_SESSION:
	case KLOG_ZK_EVENT_OVERFLOW:
		z->stale = 0;
		zk_invalidate(d);
		return 1;
	default:
		return 0;
	}
}

int
klog_zkdiscovery_drain(klog_discovery_t *d, unsigned *seen)
{
	struct zk_disc *z = (struct zk_disc *)d;
	klog_zk_event_t ev;
	int changed = 0;

	/* < 0: the expiry was taken but no new session could be started; the
	 * session starts one at the next question asked of it. */
	while (klog_zk_next_event(z->zk, &ev) != 0) {
		changed |= klog_zkdiscovery_event(d, &ev);
		*seen |= 1u << ev.type;
	}
	return changed;
}

int
klog_zkdiscovery_brokers(klog_discovery_t *d)
{
	struct zk_disc *z = (struct zk_disc *)d;

	return z->brokers_valid ? (int)z->nbrokers : -1;
}
