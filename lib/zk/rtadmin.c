/*
 * Replicated topics altered and deleted in ZooKeeper; see rtadmin.h for
 * the protocol.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "klog/base/clock.h"
#include "klog/storage/names.h"
#include "klog/zk/layout.h"
#include "klog/zk/rtadmin.h"

#define PATH_LEN KLOG_ZK_PATH_MAX
#define DELETE_TRIES 5
#define WAIT_POLL_NS 100000000L

static int
mark_path(char *buf, size_t len, const char *topic)
{
	int n = snprintf(buf, len, "%s/%s", KLOG_RTOPICS_DELETE_ROOT, topic);

	return n < 0 || (size_t)n >= len ? -KLOG_EINVAL : 0;
}

/* The topic's assignment and mark paths; -KLOG_ETOPIC for a bad name. */
static int
paths(const char *topic, char *tpath, char *mpath, klog_err_t *err)
{
	int rc;

	if ((rc = klog_topic_validate(topic, err)) < 0)
		return rc;
	if (klog_rtopics_topic_path(tpath, PATH_LEN, topic) < 0 ||
	    mark_path(mpath, PATH_LEN, topic) < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\": path too long", topic);
	return 0;
}

/* topic is no replicated topic: say whether it is an unreplicated one. */
static int
no_rtopic(klog_zk_t *zk, const char *topic, klog_err_t *err)
{
	char old[PATH_LEN];
	int rc;

	if (klog_layout_topic_path(old, sizeof(old), topic) < 0)
		return klog_err_set(err, -KLOG_ENOTOPIC,
		    "topic \"%s\": no such topic", topic);
	rc = klog_zk_exists(zk, old, 0, NULL, err);
	if (rc == 0)
		return klog_err_set(err, -KLOG_ENOTOPIC, "topic \"%s\" is not "
		    "replicated (%s): each broker administers its own "
		    "partitions of it", topic, old);
	if (rc != -KLOG_ENOENT)
		return rc;
	return klog_err_set(err, -KLOG_ENOTOPIC, "topic \"%s\": no such "
	    "topic", topic);
}

static int
being_deleted(const char *topic, klog_err_t *err)
{
	return klog_err_set(err, -KLOG_EBUSY, "topic \"%s\" is being deleted "
	    "(%s/%s)", topic, KLOG_RTOPICS_DELETE_ROOT, topic);
}

int
klog_rtadmin_is_marked(klog_zk_t *zk, const char *topic, klog_err_t *err)
{
	char tpath[PATH_LEN], mpath[PATH_LEN];
	int rc;

	if ((rc = paths(topic, tpath, mpath, err)) < 0)
		return rc;
	rc = klog_zk_exists(zk, mpath, 0, NULL, err);
	return rc == 0 ? 1 : rc == -KLOG_ENOENT ? 0 : rc;
}

/* ---- adding partitions ---- */

int
klog_rtadmin_grow(const klog_rtopic_t *old, const int32_t *brokers,
    size_t nb, int nparts, klog_rtopic_t *out, klog_err_t *err)
{
	klog_rtopic_t full;
	uint32_t start = 0;
	size_t i, had;
	int rc;

	memset(out, 0, sizeof(*out));
	if (nparts <= old->nparts)
		return klog_err_set(err, -KLOG_EINVAL, "it has %d "
		    "partition%s: partitions are added, never removed (ask for "
		    "more than %d)", old->nparts, old->nparts == 1 ? "" : "s",
		    old->nparts);
	/* Kafka's addPartitions: the start is where partition 0's first
	 * replica is (or would be) among the brokers now. */
	for (i = 0; i < nb; i++)
		if (brokers[i] >= old->replicas[0]) {
			start = (uint32_t)i;
			break;
		}
	if ((rc = klog_rtopic_assign(brokers, nb, nparts, old->rf,
	    old->min_insync, start, &full, err)) < 0)
		return rc;
	had = (size_t)old->nparts * (size_t)old->rf;
	memcpy(full.replicas, old->replicas, had * sizeof(int32_t));
	*out = full;
	return 0;
}

/* The live brokers' ids, ascending, into *ids (the caller's: free()). */
static int
live_ids(klog_zk_t *zk, int32_t **ids, size_t *n, klog_err_t *err)
{
	klog_layout_broker_t *brs = NULL;
	int rc;

	*ids = NULL;
	if ((rc = klog_layout_brokers(zk, 0, &brs, n, err)) < 0)
		return rc;
	if (*n > 0 && (*ids = calloc(*n, sizeof(**ids))) == NULL) {
		free(brs);
		return klog_err_set(err, -KLOG_ENOMEM, "%s",
		    klog_strerror(KLOG_ENOMEM));
	}
	for (size_t i = 0; i < *n; i++)
		(*ids)[i] = brs[i].id;
	free(brs);
	return 0;
}

/*
 * The multi of an alter: the assignment set at the version read; a
 * create and a delete of the deletion mark, which fail the whole multi if
 * a delete began since the mark was looked for (ZooKeeper has no "check
 * that a node is missing"); the new partitions' nodes and states.
 */
static int
alter_write(klog_zk_t *zk, const char *topic, const char *tpath,
    const char *mpath, int32_t version, int from, const klog_rtopic_t *t,
    klog_err_t *err)
{
	klog_rtopics_newparts_t np = { 0 };
	klog_zk_op_t *ops;
	klog_buf_t tjson;
	int nops = 0, rc;

	klog_buf_init(&tjson);
	if ((ops = calloc((size_t)(t->nparts - from) * 2 + 3,
	    sizeof(*ops))) == NULL) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "topic \"%s\": %s",
		    topic, klog_strerror(KLOG_ENOMEM));
		goto out;
	}
	if ((rc = klog_rtopic_encode(&tjson, t)) < 0) {
		klog_err_set(err, rc, "topic \"%s\": %s", topic,
		    klog_strerror(rc));
		goto out;
	}
	ops[nops++] = (klog_zk_op_t){ .type = KLOG_ZK_OP_SET, .path = tpath,
	    .data = tjson.data, .len = tjson.len, .version = version };
	ops[nops++] = (klog_zk_op_t){ .type = KLOG_ZK_OP_CREATE,
	    .path = mpath };
	ops[nops++] = (klog_zk_op_t){ .type = KLOG_ZK_OP_DELETE,
	    .path = mpath, .version = -1 };
	if ((rc = klog_rtopics_newparts(&np, topic, tpath, t, from, ops, &nops,
	    err)) == 0)
		rc = klog_zk_multi(zk, ops, nops, err);
out:
	klog_buf_free(&tjson);
	klog_rtopics_newparts_free(&np);
	free(ops);
	return rc;
}

int
klog_rtadmin_alter(klog_zk_t *zk, const char *topic, int nparts,
    klog_rtopic_t *out, klog_err_t *err)
{
	char tpath[PATH_LEN], mpath[PATH_LEN], why[sizeof(err->msg)];
	klog_rtopic_t old = { 0 };
	klog_zk_stat_t st;
	int32_t *ids = NULL;
	char *data = NULL;
	size_t len, nb;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = paths(topic, tpath, mpath, err)) < 0)
		return rc;
	if ((rc = klog_zk_get(zk, tpath, 0, &data, &len, &st, err)) < 0)
		return rc == -KLOG_ENOENT ? no_rtopic(zk, topic, err) : rc;
	rc = klog_rtopic_parse(data, len, &old, err);
	free(data);
	if (rc < 0)
		return rc;
	if ((rc = klog_rtadmin_is_marked(zk, topic, err)) != 0) {
		if (rc > 0)
			rc = being_deleted(topic, err);
		goto out;
	}
	if ((rc = live_ids(zk, &ids, &nb, err)) < 0)
		goto out;
	if ((rc = klog_rtadmin_grow(&old, ids, nb, nparts, out, err)) < 0) {
		snprintf(why, sizeof(why), "%s", err != NULL ? err->msg : "");
		klog_err_set(err, rc, "topic \"%s\": %s", topic, why);
		goto out;
	}
	if ((rc = klog_zk_mkdirs(zk, KLOG_RTOPICS_DELETE_ROOT, err)) < 0)
		goto out;
	rc = alter_write(zk, topic, tpath, mpath, st.version, old.nparts, out,
	    err);
	if (rc == -KLOG_EBUSY)
		rc = klog_err_set(err, rc, "topic \"%s\" changed while it was "
		    "being altered: try again", topic);
	else if (rc == -KLOG_EEXIST)
		rc = klog_rtadmin_is_marked(zk, topic, NULL) > 0 ?
		    being_deleted(topic, err) : klog_err_set(err, -KLOG_EBUSY,
		    "topic \"%s\" changed while it was being altered: try "
		    "again", topic);
out:
	if (rc < 0)
		klog_rtopic_free(out);
	klog_rtopic_free(&old);
	free(ids);
	return rc;
}

/* ---- deleting ---- */

int
klog_rtadmin_delete(klog_zk_t *zk, const char *topic, int *already,
    klog_err_t *err)
{
	char tpath[PATH_LEN], mpath[PATH_LEN];
	klog_zk_op_t ops[2];
	int rc;

	*already = 0;
	if ((rc = paths(topic, tpath, mpath, err)) < 0)
		return rc;
	if ((rc = klog_zk_mkdirs(zk, KLOG_RTOPICS_DELETE_ROOT, err)) < 0)
		return rc;
	/* Marked only while it exists: a mark without a topic would stop
	 * its next creation for nothing. */
	ops[0] = (klog_zk_op_t){ .type = KLOG_ZK_OP_CHECK, .path = tpath,
	    .version = -1 };
	ops[1] = (klog_zk_op_t){ .type = KLOG_ZK_OP_CREATE, .path = mpath };
	rc = klog_zk_multi(zk, ops, 2, err);
	if (rc == -KLOG_EEXIST) {
		*already = 1;
		return 0;
	}
	if (rc == -KLOG_ENOENT)
		return no_rtopic(zk, topic, err);
	return rc;
}

int
klog_rtadmin_marked(klog_zk_t *zk, int watch, klog_zk_list_t *out,
    klog_err_t *err)
{
	int rc = klog_zk_children(zk, KLOG_RTOPICS_DELETE_ROOT, watch, out,
	    err);

	if (rc != -KLOG_ENOENT)
		return rc;
	if (!watch)
		return 0;
	if ((rc = klog_zk_mkdirs(zk, KLOG_RTOPICS_DELETE_ROOT, err)) < 0)
		return rc;
	return klog_zk_children(zk, KLOG_RTOPICS_DELETE_ROOT, watch, out,
	    err);
}

int
klog_rtadmin_done(klog_zk_t *zk, const char *topic, int32_t id,
    klog_err_t *err)
{
	char tpath[PATH_LEN], mpath[PATH_LEN], path[PATH_LEN];
	klog_zk_op_t op;
	int rc;

	if ((rc = paths(topic, tpath, mpath, err)) < 0)
		return rc;
	if (id < 0 || (size_t)snprintf(path, sizeof(path), "%s/%" PRId32,
	    mpath, id) >= sizeof(path))
		return klog_err_set(err, -KLOG_EINVAL, "%s: bad broker id",
		    mpath);
	/* Not klog_zk_create(): a mark finished meanwhile must not be made
	 * again as a parent. */
	op = (klog_zk_op_t){ .type = KLOG_ZK_OP_CREATE, .path = path };
	rc = klog_zk_multi(zk, &op, 1, err);
	return rc == -KLOG_EEXIST || rc == -KLOG_ENOENT ? 0 : rc;
}

static int
cmp_id(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* Whether done names broker id (canonical decimals only). */
static int
said_done(const klog_zk_list_t *done, int32_t id)
{
	char name[16];

	snprintf(name, sizeof(name), "%" PRId32, id);
	for (size_t i = 0; done != NULL && i < done->n; i++)
		if (strcmp(done->names[i], name) == 0)
			return 1;
	return 0;
}

int
klog_rtadmin_waiting(const klog_rtopic_t *t, const klog_zk_list_t *done,
    int32_t *ids, int max)
{
	size_t all = (size_t)t->nparts * (size_t)t->rf, i, j;
	int n = 0;

	for (i = 0; i < all; i++) {
		int32_t id = t->replicas[i];

		for (j = 0; j < i && t->replicas[j] != id; j++)
			;
		if (j < i || said_done(done, id))
			continue;
		if (n < max)
			ids[n] = id;
		n++;
	}
	if (n > 0 && ids != NULL)
		qsort(ids, (size_t)(n < max ? n : max), sizeof(*ids), cmp_id);
	return n;
}

int
klog_rtadmin_finish(klog_zk_t *zk, const char *topic, int32_t *ids,
    int max, klog_err_t *err)
{
	char tpath[PATH_LEN], mpath[PATH_LEN];
	klog_zk_list_t done = { 0 };
	klog_rtopic_t t = { 0 };
	int rc, n = 0, tries;

	if ((rc = paths(topic, tpath, mpath, err)) < 0)
		return rc;
	/* No mark, nothing to finish: a topic of that name now is a new one
	 * and must be left alone. */
	if ((rc = klog_zk_children(zk, mpath, 0, &done, err)) < 0)
		return rc == -KLOG_ENOENT ? 0 : rc;
	rc = klog_rtopics_read(zk, topic, 0, &t, err);
	if (rc == 0)
		n = klog_rtadmin_waiting(&t, &done, ids, max);
	klog_rtopic_free(&t);
	klog_zk_list_free(&done);
	if (rc < 0 && rc != -KLOG_ENOENT)
		return rc;
	if (n > 0)
		return n;
	/* The topic's nodes first, the mark last: while the mark is there
	 * the name cannot be created again, so no new topic's nodes can be
	 * taken for the old one's.  A leader node made meanwhile makes the
	 * walk -KLOG_EBUSY: go round. */
	for (tries = 0; tries < DELETE_TRIES; tries++)
		if ((rc = klog_zk_delete_tree(zk, tpath, err)) != -KLOG_EBUSY)
			break;
	if (rc < 0)
		return rc;
	return klog_zk_delete_tree(zk, mpath, err);
}

const char *
klog_rtadmin_id_list(const int32_t *ids, int n, char *buf, size_t len)
{
	size_t at = 0;

	if (len == 0)
		return "";
	buf[0] = '\0';
	for (int i = 0; i < n && at + 13 < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%" PRId32,
		    i ? "," : "", ids[i]);
	return buf;
}

/* How many of ids[0..n) are not live brokers; -1 (with err) if the live
 * ones cannot be read. */
static int
count_down(klog_zk_t *zk, const int32_t *ids, int n, klog_err_t *err)
{
	klog_layout_broker_t *live;
	size_t nl, k;
	int down = 0, rc;

	if ((rc = klog_layout_brokers(zk, 0, &live, &nl, err)) < 0)
		return rc;
	for (int i = 0; i < n; i++) {
		for (k = 0; k < nl && live[k].id != ids[i]; k++)
			;
		down += k == nl;
	}
	free(live);
	return down;
}

int
klog_rtadmin_wait(klog_zk_t *zk, const char *topic, int64_t timeout_ms,
    int32_t *ids, int max, klog_err_t *err)
{
	const struct timespec nap = { 0, WAIT_POLL_NS };
	int64_t deadline = klog_clock_mono_ms() + timeout_ms;
	char list[256];
	int n, down;

	for (;;) {
		if ((n = klog_rtadmin_finish(zk, topic, ids, max, err)) <= 0)
			return n;
		/* Those past the room are not known: taken as live. */
		if ((down = count_down(zk, ids, n < max ? n : max, err)) < 0)
			return down;
		if (down == n)
			return n;
		if (klog_clock_mono_ms() >= deadline)
			return klog_err_set(err, -KLOG_ETIMEDOUT, "topic \"%s\": "
			    "marked for deletion, but of the brokers holding a "
			    "copy, %s did not remove it within %lld ms (the "
			    "deletion finishes once they have)", topic,
			    klog_rtadmin_id_list(ids, n < max ? n : max, list,
			    sizeof(list)), (long long)timeout_ms);
		nanosleep(&nap, NULL);
	}
}
