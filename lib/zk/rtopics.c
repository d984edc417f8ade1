/*
 * Replicated topics in ZooKeeper (rtopics.h): paths, the two JSON schemas,
 * Kafka's replica assignment, and the operations on a session.
 *
 * The schemas are read with json.h's strict reader: unknown keys with
 * scalar values pass (a later writer may add some, as Kafka did); a known
 * key twice or missing, and anything else not expected, is refused.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/json.h"
#include "klog/storage/names.h"
#include "klog/zk/layout.h"
#include "klog/zk/rtopics.h"

#define PATH_LEN KLOG_ZK_PATH_MAX

void
klog_rtopic_free(klog_rtopic_t *t)
{
	if (t == NULL)
		return;
	free(t->replicas);
	t->replicas = NULL;
	t->nparts = 0;
	t->rf = 0;
}

int
klog_rtopic_has(const klog_rtopic_t *t, int p, int32_t id)
{
	int i;

	if (p < 0 || p >= t->nparts)
		return 0;
	for (i = 0; i < t->rf; i++)
		if (t->replicas[(size_t)p * (size_t)t->rf + (size_t)i] == id)
			return 1;
	return 0;
}

int
klog_rstate_in_isr(const klog_rstate_t *s, int32_t id)
{
	int i;

	for (i = 0; i < s->nisr; i++)
		if (s->isr[i] == id)
			return 1;
	return 0;
}

/* ---- paths ---- */

static int
path_fmt(char *buf, size_t len, const char *topic, int p, const char *leaf)
{
	int n;

	if (klog_topic_validate(topic, NULL) < 0 || p < -1)
		return -KLOG_EINVAL;
	if (p < 0)
		n = snprintf(buf, len, "%s/%s", KLOG_RTOPICS_ROOT, topic);
	else
		n = snprintf(buf, len, "%s/%s/partitions/%d/%s",
		    KLOG_RTOPICS_ROOT, topic, p, leaf);
	return n < 0 || (size_t)n >= len ? -KLOG_EINVAL : 0;
}

int
klog_rtopics_topic_path(char *buf, size_t len, const char *topic)
{
	return path_fmt(buf, len, topic, -1, NULL);
}

int
klog_rtopics_state_path(char *buf, size_t len, const char *topic, int p)
{
	return p < 0 ? -KLOG_EINVAL : path_fmt(buf, len, topic, p, "state");
}

int
klog_rtopics_leader_path(char *buf, size_t len, const char *topic, int p)
{
	return p < 0 ? -KLOG_EINVAL : path_fmt(buf, len, topic, p, "leader");
}

/* ---- encoding ---- */

static void
put_cstr(klog_buf_t *b, const char *s)
{
	klog_buf_put(b, s, strlen(s));
}

static void
put_int(klog_buf_t *b, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%" PRId64, v);

	klog_buf_put(b, num, (size_t)n);
}

static void
put_ids(klog_buf_t *b, const int32_t *ids, int n)
{
	int i;

	put_cstr(b, "[");
	for (i = 0; i < n; i++) {
		if (i > 0)
			put_cstr(b, ",");
		put_int(b, ids[i]);
	}
	put_cstr(b, "]");
}

/* Ids >= 0, none twice: what every replica list and isr must be. */
static int
ids_ok(const int32_t *ids, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (ids[i] < 0)
			return 0;
		for (j = 0; j < i; j++)
			if (ids[j] == ids[i])
				return 0;
	}
	return 1;
}

static int
rtopic_ok(const klog_rtopic_t *t)
{
	int p;

	if (t->nparts < 1 || t->nparts > KLOG_RTOPICS_MAX_PARTITIONS ||
	    t->rf < 1 || t->rf > KLOG_RTOPICS_MAX_REPLICAS ||
	    t->min_insync < 1 || t->min_insync > t->rf || t->replicas == NULL)
		return 0;
	for (p = 0; p < t->nparts; p++)
		if (!ids_ok(t->replicas + (size_t)p * (size_t)t->rf, t->rf))
			return 0;
	return 1;
}

static int
rstate_ok(const klog_rstate_t *s)
{
	return s->leader >= -1 && s->leader_epoch >= 0 &&
	    s->controller_epoch >= -1 && s->nisr >= 0 &&
	    s->nisr <= KLOG_RTOPICS_MAX_REPLICAS && ids_ok(s->isr, s->nisr);
}

int
klog_rtopic_encode(klog_buf_t *b, const klog_rtopic_t *t)
{
	int p;

	if (!rtopic_ok(t))
		return -KLOG_EINVAL;
	put_cstr(b, "{\"version\":1,\"partitions\":{");
	for (p = 0; p < t->nparts; p++) {
		put_cstr(b, p > 0 ? ",\"" : "\"");
		put_int(b, p);
		put_cstr(b, "\":");
		put_ids(b, t->replicas + (size_t)p * (size_t)t->rf, t->rf);
	}
	put_cstr(b, "},\"min_insync\":");
	put_int(b, t->min_insync);
	put_cstr(b, "}");
	return b->failed ? -KLOG_ENOMEM : 0;
}

int
klog_rstate_encode(klog_buf_t *b, const klog_rstate_t *s)
{
	if (!rstate_ok(s))
		return -KLOG_EINVAL;
	put_cstr(b, "{\"version\":1,\"isr\":");
	put_ids(b, s->isr, s->nisr);
	put_cstr(b, ",\"leader\":");
	put_int(b, s->leader);
	put_cstr(b, ",\"controller_epoch\":");
	put_int(b, s->controller_epoch);
	put_cstr(b, ",\"leader_epoch\":");
	put_int(b, s->leader_epoch);
	put_cstr(b, "}");
	return b->failed ? -KLOG_ENOMEM : 0;
}

/* ---- reading ---- */

/* A replica list or an isr being read: broker ids, none twice. */
struct ids {
	const char *field;
	int32_t *ids;
	int n;
};

static int
id_elem(klog_json_rd_t *r, void *ctx)
{
	struct ids *a = ctx;
	int64_t v;
	int rc, i;

	if (a->n == KLOG_RTOPICS_MAX_REPLICAS)
		return klog_json_rd_fail(r, "%s: more than %d replicas",
		    a->field, KLOG_RTOPICS_MAX_REPLICAS);
	if ((rc = klog_json_rd_int(r, a->field, 0, INT32_MAX, &v)) < 0)
		return rc;
	for (i = 0; i < a->n; i++)
		if (a->ids[i] == (int32_t)v)
			return klog_json_rd_fail(r, "%s: broker %" PRId64
			    " twice", a->field, v);
	a->ids[a->n++] = (int32_t)v;
	return 0;
}

/* An array of up to KLOG_RTOPICS_MAX_REPLICAS broker ids into ids. */
static int
id_array(klog_json_rd_t *r, int32_t *ids, int *n, const char *field)
{
	struct ids a = { field, ids, 0 };
	int rc;

	*n = 0;
	if (klog_json_rd_peek(r) != '[')
		return klog_json_rd_fail(r, "%s: not an array", field);
	rc = klog_json_rd_array(r, id_elem, &a);
	*n = a.n;
	return rc;
}

/* ---- the topic's assignment ---- */

/* The fields, named in the enum's order. */
enum { T_VERSION, T_PARTITIONS, T_MIN_INSYNC, T_NFIELDS };
static const char *const t_fields[T_NFIELDS] = { "version", "partitions",
    "min_insync" };

struct tparse {
	int64_t min_insync;
	int rf;                 /* 0 until the first partition */
	int n;                  /* partitions read */
	int32_t *ids;           /* partition p's replicas at p * rf */
	unsigned char *have;    /* partition p read */
};

/* "0", "1", ...: canonical decimals, no sign, no leading zero. */
static int
part_key(const char *k, size_t kn, int *p)
{
	long v = 0;
	size_t i;

	if (kn == 0 || kn > 5 || (kn > 1 && k[0] == '0'))
		return -1;
	for (i = 0; i < kn; i++) {
		if (k[i] < '0' || k[i] > '9')
			return -1;
		v = v * 10 + (k[i] - '0');
	}
	if (v >= KLOG_RTOPICS_MAX_PARTITIONS)
		return -1;
	*p = (int)v;
	return 0;
}

static int
t_partition(klog_json_rd_t *r, int field, const char *k, size_t kn,
    void *ctx)
{
	struct tparse *tp = ctx;
	int32_t ids[KLOG_RTOPICS_MAX_REPLICAS];
	int p, n, rc;

	(void)field;  /* "partitions" has no fixed keys */
	if (part_key(k, kn, &p) < 0)
		return klog_json_rd_fail(r, "partition \"%.*s\": not a number "
		    "in [0, %d)", (int)(kn > 20 ? 20 : kn), k,
		    KLOG_RTOPICS_MAX_PARTITIONS);
	if ((rc = id_array(r, ids, &n, "replicas")) < 0)
		return rc;
	if (n == 0)
		return klog_json_rd_fail(r, "partition %d: no replicas", p);
	if (tp->rf == 0) {
		tp->rf = n;
		tp->ids = malloc((size_t)KLOG_RTOPICS_MAX_PARTITIONS *
		    (size_t)n * sizeof(int32_t));
		tp->have = calloc(KLOG_RTOPICS_MAX_PARTITIONS, 1);
		if (tp->ids == NULL || tp->have == NULL)
			return klog_err_set(r->err, -KLOG_ENOMEM,
			    "topic JSON: %s", klog_strerror(KLOG_ENOMEM));
	} else if (n != tp->rf) {
		return klog_json_rd_fail(r, "partition %d: %d replicas, "
		    "others have %d", p, n, tp->rf);
	}
	if (tp->have[p])
		return klog_json_rd_fail(r, "partition %d twice", p);
	tp->have[p] = 1;
	tp->n++;
	memcpy(tp->ids + (size_t)p * (size_t)n, ids, (size_t)n * sizeof(*ids));
	return 1;
}

static int
t_member(klog_json_rd_t *r, int field, const char *k, size_t kn, void *ctx)
{
	struct tparse *tp = ctx;
	int64_t v;
	int rc;

	(void)k;
	(void)kn;
	switch (field) {
	case T_VERSION:
		rc = klog_json_rd_int(r, "version", 1, 1, &v);
		break;
	case T_PARTITIONS:
		if (klog_json_rd_peek(r) != '{')
			return klog_json_rd_fail(r, "partitions: not an "
			    "object");
		rc = klog_json_rd_object(r, NULL, 0, t_partition, tp);
		break;
	case T_MIN_INSYNC:
		rc = klog_json_rd_int(r, "min_insync", 1,
		    KLOG_RTOPICS_MAX_REPLICAS, &tp->min_insync);
		break;
	default:
		return 0;  /* a later writer's key */
	}
	return rc < 0 ? rc : 1;
}

int
klog_rtopic_parse(const char *s, size_t n, klog_rtopic_t *out,
    klog_err_t *err)
{
	struct tparse tp = { 0 };
	klog_json_rd_t r;
	int rc, p;

	memset(out, 0, sizeof(*out));
	klog_json_rd_init(&r, s, n, "topic JSON", err);
	if ((rc = klog_json_rd_object(&r, t_fields, T_NFIELDS, t_member,
	    &tp)) < 0 || (rc = klog_json_rd_end(&r)) < 0)
		goto out;
	if (tp.n == 0) {
		rc = klog_json_rd_fail(&r, "no partitions");
		goto out;
	}
	/* Partitions are 0 .. n-1, every one of them. */
	for (p = 0; p < tp.n; p++)
		if (!tp.have[p]) {
			rc = klog_json_rd_fail(&r, "partition %d missing", p);
			goto out;
		}
	if (tp.min_insync > tp.rf) {
		rc = klog_json_rd_fail(&r, "min_insync %" PRId64 " over %d "
		    "replicas", tp.min_insync, tp.rf);
		goto out;
	}
	out->nparts = tp.n;
	out->rf = tp.rf;
	out->min_insync = (int)tp.min_insync;
	out->replicas = realloc(tp.ids, (size_t)tp.n * (size_t)tp.rf *
	    sizeof(int32_t));
	if (out->replicas == NULL)
		out->replicas = tp.ids;  /* shrinking failed: keep it whole */
	tp.ids = NULL;
out:
	free(tp.ids);
	free(tp.have);
	return rc;
}

/* ---- a partition's state ---- */

enum { S_VERSION, S_ISR, S_LEADER, S_CONTROLLER_EPOCH, S_LEADER_EPOCH,
    S_NFIELDS };
static const char *const s_fields[S_NFIELDS] = { "version", "isr", "leader",
    "controller_epoch", "leader_epoch" };

/* A field of the state in [min, INT32_MAX] into *dst. */
static int
s_int(klog_json_rd_t *r, const char *field, int32_t min, int32_t *dst)
{
	int64_t v;
	int rc = klog_json_rd_int(r, field, min, INT32_MAX, &v);

	if (rc == 0)
		*dst = (int32_t)v;
	return rc;
}

static int
s_member(klog_json_rd_t *r, int field, const char *k, size_t kn, void *ctx)
{
	klog_rstate_t *out = ctx;
	int64_t v;
	int rc;

	(void)k;
	(void)kn;
	switch (field) {
	case S_VERSION:
		rc = klog_json_rd_int(r, "version", 1, 1, &v);
		break;
	case S_ISR:
		rc = id_array(r, out->isr, &out->nisr, "isr");
		break;
	case S_LEADER:
		rc = s_int(r, "leader", -1, &out->leader);
		break;
	case S_CONTROLLER_EPOCH:
		rc = s_int(r, "controller_epoch", -1, &out->controller_epoch);
		break;
	case S_LEADER_EPOCH:
		rc = s_int(r, "leader_epoch", 0, &out->leader_epoch);
		break;
	default:
		return 0;  /* a later writer's key */
	}
	return rc < 0 ? rc : 1;
}

int
klog_rstate_parse(const char *s, size_t n, klog_rstate_t *out,
    klog_err_t *err)
{
	klog_json_rd_t r;
	int rc;

	memset(out, 0, sizeof(*out));
	out->version = -1;
	klog_json_rd_init(&r, s, n, "state JSON", err);
	if ((rc = klog_json_rd_object(&r, s_fields, S_NFIELDS, s_member,
	    out)) < 0)
		return rc;
	return klog_json_rd_end(&r);
}

/* ---- assignment ---- */

int
klog_rtopic_assign(const int32_t *brokers, size_t nb, int nparts, int rf,
    int min_insync, uint32_t start, klog_rtopic_t *out, klog_err_t *err)
{
	int64_t first, shift, idx;
	size_t i, b = nb;
	int p, j;

	memset(out, 0, sizeof(*out));
	if (nparts < 1 || nparts > KLOG_RTOPICS_MAX_PARTITIONS)
		return klog_err_set(err, -KLOG_EINVAL,
		    "partitions: %d not in [1, %d]", nparts,
		    KLOG_RTOPICS_MAX_PARTITIONS);
	if (rf < 1 || rf > KLOG_RTOPICS_MAX_REPLICAS)
		return klog_err_set(err, -KLOG_EINVAL,
		    "replication factor: %d not in [1, %d]", rf,
		    KLOG_RTOPICS_MAX_REPLICAS);
	if ((size_t)rf > nb)
		return klog_err_set(err, -KLOG_EINVAL,
		    "replication factor: %d larger than available brokers: "
		    "%zu", rf, nb);
	if (min_insync < 1 || min_insync > rf)
		return klog_err_set(err, -KLOG_EINVAL,
		    "min insync replicas: %d not in [1, %d]", min_insync, rf);
	for (i = 0; i < nb; i++)
		if (brokers[i] < 0 || (i > 0 && brokers[i] <= brokers[i - 1]))
			return klog_err_set(err, -KLOG_EINVAL,
			    "broker ids not ascending and >= 0");
	if ((out->replicas = malloc((size_t)nparts * (size_t)rf *
	    sizeof(int32_t))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "assignment: %s",
		    klog_strerror(KLOG_ENOMEM));
	out->nparts = nparts;
	out->rf = rf;
	out->min_insync = min_insync;
	/*
	 * Kafka's assignReplicasToBrokersRackUnaware with a fixed start
	 * index: leaders round-robin from start; follower j sits
	 * 1 + (shift + j) % (nb - 1) places after the leader, and the shift
	 * grows by one each time the leaders have gone round all brokers, so
	 * that the same follower sequences do not repeat.
	 */
	shift = start % b;
	for (p = 0; p < nparts; p++) {
		if (p > 0 && (size_t)p % b == 0)
			shift++;
		first = ((int64_t)p + (int64_t)(start % b)) % (int64_t)b;
		out->replicas[(size_t)p * (size_t)rf] = brokers[first];
		for (j = 0; j < rf - 1; j++) {
			idx = (first + 1 + (shift + j) % ((int64_t)b - 1)) %
			    (int64_t)b;
			out->replicas[(size_t)p * (size_t)rf + (size_t)j + 1] =
			    brokers[idx];
		}
	}
	return 0;
}

/* ---- operations ---- */

/* A topic name that can become a path; -KLOG_ETOPIC with err if not. */
static int
topic_ok(const char *topic, klog_err_t *err)
{
	return klog_topic_validate(topic, err);
}

/* Put the node's path before a parser's message. */
static int
prefix_path(klog_err_t *err, int rc, const char *path)
{
	char why[sizeof(err->msg)];

	if (err == NULL)
		return rc;
	snprintf(why, sizeof(why), "%s", err->msg);
	return klog_err_set(err, rc, "%s: %s", path, why);
}

void
klog_rtopics_newparts_free(klog_rtopics_newparts_t *np)
{
	klog_buf_free(&np->states);
	free(np->off);
	free(np->path);
	np->off = NULL;
	np->path = NULL;
}

int
klog_rtopics_newparts(klog_rtopics_newparts_t *np, const char *topic,
    const char *tpath, const klog_rtopic_t *t, int from, klog_zk_op_t *ops,
    int *nops, klog_err_t *err)
{
	int n = t->nparts - from, rc, p;
	const int32_t *r;
	klog_rstate_t st;

	memset(np, 0, sizeof(*np));
	np->off = calloc((size_t)n + 1, sizeof(*np->off));
	np->path = calloc((size_t)n > 0 ? (size_t)n : 1, sizeof(*np->path));
	if (np->off == NULL || np->path == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "topic \"%s\": %s",
		    topic, klog_strerror(KLOG_ENOMEM));
	/* Every state in one buffer first: it may move while it grows. */
	for (int k = 0; k < n; k++) {
		p = from + k;
		r = t->replicas + (size_t)p * (size_t)t->rf;
		memset(&st, 0, sizeof(st));
		st.leader = r[0];
		st.controller_epoch = -1;
		st.nisr = t->rf;
		memcpy(st.isr, r, (size_t)t->rf * sizeof(int32_t));
		np->off[k] = np->states.len;
		if ((rc = klog_rstate_encode(&np->states, &st)) < 0)
			return klog_err_set(err, rc, "topic \"%s\": %s", topic,
			    klog_strerror(rc));
		if ((size_t)snprintf(np->path[k][0], KLOG_RTOPICS_PPATH_LEN,
		    "%s/partitions/%d", tpath, p) >= KLOG_RTOPICS_PPATH_LEN ||
		    klog_rtopics_state_path(np->path[k][1],
		    KLOG_RTOPICS_PPATH_LEN, topic, p) < 0)
			return klog_err_set(err, -KLOG_EINVAL,
			    "topic \"%s\": path too long", topic);
	}
	np->off[n] = np->states.len;
	for (int k = 0; k < n; k++) {
		ops[(*nops)++] = (klog_zk_op_t){ .type = KLOG_ZK_OP_CREATE,
		    .path = np->path[k][0] };
		ops[(*nops)++] = (klog_zk_op_t){ .type = KLOG_ZK_OP_CREATE,
		    .path = np->path[k][1], .data = np->states.data +
		    np->off[k], .len = np->off[k + 1] - np->off[k] };
	}
	return 0;
}

/* Roughly what a multi of these creates weighs on the wire: per op its
 * header, path, data, the open ACL and flags. */
#define MULTI_OP_BYTES 48
#define MULTI_SUSPECT (768 * 1024)

static size_t
multi_bytes(const klog_zk_op_t *ops, int n)
{
	size_t sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += MULTI_OP_BYTES + strlen(ops[i].path) + ops[i].len;
	return sum;
}

/* The checks of klog_rtopics_can_create() but the replicated topic's own
 * node (klog_rtopics_create()'s multi meets that one). */
static int
can_create(klog_zk_t *zk, const char *topic, klog_err_t *err)
{
	char old[PATH_LEN];
	int rc;

	if (klog_layout_topic_path(old, sizeof(old), topic) < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\": path too long", topic);
	/* A topic lives in one layout only: brokers would otherwise serve
	 * the 0.7 partitions of the same name beside the replicated ones. */
	rc = klog_zk_exists(zk, old, 0, NULL, err);
	if (rc == 0)
		return klog_err_set(err, -KLOG_EEXIST,
		    "topic \"%s\" exists (unreplicated, %s)", topic, old);
	if (rc != -KLOG_ENOENT)
		return rc;
	/* The old topic's nodes go before its deletion mark does (rtadmin.h),
	 * so once the mark is gone nothing of it is left to meet. */
	if ((size_t)snprintf(old, sizeof(old), "%s/%s",
	    KLOG_RTOPICS_DELETE_ROOT, topic) >= sizeof(old))
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\": path too long", topic);
	rc = klog_zk_exists(zk, old, 0, NULL, err);
	if (rc == 0)
		return klog_err_set(err, -KLOG_EEXIST, "topic \"%s\" is still "
		    "being deleted (%s): brokers that hold a copy have not all "
		    "removed it yet", topic, old);
	return rc == -KLOG_ENOENT ? 0 : rc;
}

int
klog_rtopics_can_create(klog_zk_t *zk, const char *topic, klog_err_t *err)
{
	char tpath[PATH_LEN];
	int rc;

	if ((rc = topic_ok(topic, err)) < 0)
		return rc;
	if (klog_rtopics_topic_path(tpath, sizeof(tpath), topic) < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\": path too long", topic);
	rc = klog_zk_exists(zk, tpath, 0, NULL, err);
	if (rc == 0)
		return klog_err_set(err, -KLOG_EEXIST, "topic \"%s\" exists "
		    "(%s)", topic, tpath);
	if (rc != -KLOG_ENOENT)
		return rc;
	return can_create(zk, topic, err);
}

int
klog_rtopics_create(klog_zk_t *zk, const char *topic,
    const klog_rtopic_t *t, klog_err_t *err)
{
	char tpath[PATH_LEN], parts[PATH_LEN];
	klog_rtopics_newparts_t np = { 0 };
	klog_zk_op_t *ops = NULL;
	klog_buf_t tjson;
	int rc, nops = 0;

	if ((rc = topic_ok(topic, err)) < 0)
		return rc;
	if (!rtopic_ok(t))
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\": invalid assignment", topic);
	if (klog_rtopics_topic_path(tpath, sizeof(tpath), topic) < 0 ||
	    (size_t)snprintf(parts, sizeof(parts), "%s/partitions", tpath) >=
	    sizeof(parts))
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\": path too long", topic);
	if ((rc = can_create(zk, topic, err)) < 0)
		return rc;
	if ((rc = klog_zk_mkdirs(zk, KLOG_RTOPICS_ROOT, err)) < 0)
		return rc;

	klog_buf_init(&tjson);
	if ((ops = calloc((size_t)t->nparts * 2 + 2, sizeof(*ops))) == NULL) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "topic \"%s\": %s",
		    topic, klog_strerror(KLOG_ENOMEM));
		goto out;
	}
	if ((rc = klog_rtopic_encode(&tjson, t)) < 0) {
		klog_err_set(err, rc, "topic \"%s\": %s", topic,
		    klog_strerror(rc));
		goto out;
	}
	ops[nops++] = (klog_zk_op_t){ .type = KLOG_ZK_OP_CREATE,
	    .path = tpath, .data = tjson.data, .len = tjson.len };
	ops[nops++] = (klog_zk_op_t){ .type = KLOG_ZK_OP_CREATE,
	    .path = parts };
	if ((rc = klog_rtopics_newparts(&np, topic, tpath, t, 0, ops, &nops,
	    err)) < 0)
		goto out;
	rc = klog_zk_multi(zk, ops, nops, err);
	if (rc == -KLOG_EEXIST)
		klog_err_set(err, rc, "topic \"%s\" exists (%s)", topic,
		    tpath);
	/* A server drops the connection of a request over its jute.maxbuffer
	 * (1 MiB by default) without applying it: some 4000 partitions of
	 * two replicas.  Say so rather than "connection loss". */
	if (rc == -KLOG_ECONN && multi_bytes(ops, nops) > MULTI_SUSPECT)
		rc = klog_err_set(err, -KLOG_ETOOBIG, "topic \"%s\": %d "
		    "partitions are too many for one ZooKeeper transaction "
		    "(about %zu KiB; the server's jute.maxbuffer is 1 MiB by "
		    "default)", topic, t->nparts,
		    multi_bytes(ops, nops) / 1024);
out:
	klog_buf_free(&tjson);
	klog_rtopics_newparts_free(&np);
	free(ops);
	return rc;
}

int
klog_rtopics_create_live(klog_zk_t *zk, const char *topic, int nparts,
    int rf, int min_insync, uint32_t start, klog_rtopic_t *out,
    klog_err_t *err)
{
	klog_layout_broker_t *brs = NULL;
	int32_t *ids = NULL;
	size_t n = 0, i;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = topic_ok(topic, err)) < 0)
		return rc;
	if ((rc = klog_layout_brokers(zk, 0, &brs, &n, err)) < 0)
		return rc;
	if (n > 0 && (ids = calloc(n, sizeof(*ids))) == NULL) {
		free(brs);
		return klog_err_set(err, -KLOG_ENOMEM, "%s",
		    klog_strerror(KLOG_ENOMEM));
	}
	for (i = 0; i < n; i++)
		ids[i] = brs[i].id;  /* ascending, as klog_layout_brokers() */
	free(brs);
	rc = klog_rtopic_assign(ids, n, nparts, rf, min_insync, start, out,
	    err);
	free(ids);
	if (rc == 0)
		rc = klog_rtopics_create(zk, topic, out, err);
	return rc;
}

int
klog_rtopics_list(klog_zk_t *zk, int watch, klog_zk_list_t *out,
    klog_err_t *err)
{
	int rc = klog_zk_children(zk, KLOG_RTOPICS_ROOT, watch, out, err);

	if (rc != -KLOG_ENOENT)
		return rc;
	if (!watch)
		return 0;  /* no replicated topic was ever made */
	/* A child watch is armed only on a node that exists. */
	if ((rc = klog_zk_mkdirs(zk, KLOG_RTOPICS_ROOT, err)) < 0)
		return rc;
	return klog_zk_children(zk, KLOG_RTOPICS_ROOT, watch, out, err);
}

int
klog_rtopics_read(klog_zk_t *zk, const char *topic, int watch,
    klog_rtopic_t *out, klog_err_t *err)
{
	char path[PATH_LEN];
	char *data;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = topic_ok(topic, err)) < 0)
		return rc;
	if (klog_rtopics_topic_path(path, sizeof(path), topic) < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\": path too long", topic);
	if ((rc = klog_zk_get(zk, path, watch, &data, &len, NULL, err)) < 0)
		return rc;
	rc = klog_rtopic_parse(data, len, out, err);
	free(data);
	return rc < 0 ? prefix_path(err, rc, path) : 0;
}

int
klog_rtopics_state(klog_zk_t *zk, const char *topic, int p, int watch,
    klog_rstate_t *out, klog_err_t *err)
{
	char path[PATH_LEN];
	klog_zk_stat_t st;
	char *data;
	size_t len;
	int rc;

	if ((rc = topic_ok(topic, err)) < 0)
		return rc;
	if (klog_rtopics_state_path(path, sizeof(path), topic, p) < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\" partition %d: bad path", topic, p);
	if ((rc = klog_zk_get(zk, path, watch, &data, &len, &st, err)) < 0)
		return rc;
	rc = klog_rstate_parse(data, len, out, err);
	free(data);
	if (rc < 0)
		return prefix_path(err, rc, path);
	out->version = st.version;
	return 0;
}

/* "<broker id>", strictly. */
static int
leader_parse(const char *s, size_t n, int32_t *id)
{
	int64_t v = 0;
	size_t i;

	if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
		return -KLOG_EINVAL;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -KLOG_EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	if (v > INT32_MAX)
		return -KLOG_EINVAL;
	*id = (int32_t)v;
	return 0;
}

int
klog_rtopics_leader(klog_zk_t *zk, const char *topic, int p, int watch,
    int32_t *leader, klog_err_t *err)
{
	char path[PATH_LEN];
	char *data;
	size_t len;
	int rc, tries;

	*leader = -1;
	if ((rc = topic_ok(topic, err)) < 0)
		return rc;
	if (klog_rtopics_leader_path(path, sizeof(path), topic, p) < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\" partition %d: bad path", topic, p);
	/* A get arms its watch only on a node that exists, an exists on
	 * either; the node may come or go between the two, so go round. */
	for (tries = 0; tries < 8; tries++) {
		rc = klog_zk_get(zk, path, watch, &data, &len, NULL, err);
		if (rc == 0) {
			rc = leader_parse(data, len, leader);
			free(data);
			if (rc < 0)
				return klog_err_set(err, rc,
				    "%s: not a broker id", path);
			return 0;
		}
		if (rc != -KLOG_ENOENT)
			return rc;
		if (!watch)
			return rc;
		rc = klog_zk_exists(zk, path, 1, NULL, err);
		if (rc == -KLOG_ENOENT)
			return rc;
		if (rc < 0)
			return rc;
	}
	return klog_err_set(err, -KLOG_EBUSY, "%s: keeps changing", path);
}

int
klog_rtopics_claim(klog_zk_t *zk, const char *topic, int p, int32_t me,
    klog_rstate_t *next, klog_err_t *err)
{
	char spath[PATH_LEN], lpath[PATH_LEN], id[16];
	klog_zk_op_t ops[2];
	klog_buf_t b;
	int rc;

	if ((rc = topic_ok(topic, err)) < 0)
		return rc;
	if (me < 0 || next->leader != me || next->version < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\" partition %d: a claim needs leader = me "
		    "and the version read", topic, p);
	if (klog_rtopics_state_path(spath, sizeof(spath), topic, p) < 0 ||
	    klog_rtopics_leader_path(lpath, sizeof(lpath), topic, p) < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\" partition %d: bad path", topic, p);
	klog_buf_init(&b);
	if ((rc = klog_rstate_encode(&b, next)) < 0) {
		klog_buf_free(&b);
		return klog_err_set(err, rc, "%s: invalid state", spath);
	}
	snprintf(id, sizeof(id), "%" PRId32, me);
	ops[0] = (klog_zk_op_t){ .type = KLOG_ZK_OP_SET, .path = spath,
	    .data = b.data, .len = b.len, .version = next->version };
	ops[1] = (klog_zk_op_t){ .type = KLOG_ZK_OP_CREATE, .path = lpath,
	    .data = id, .len = strlen(id), .flags = KLOG_ZK_EPHEMERAL };
	rc = klog_zk_multi(zk, ops, 2, err);
	klog_buf_free(&b);
	if (rc == -KLOG_EEXIST)
		rc = klog_err_set(err, -KLOG_EBUSY, "%s: another claim won",
		    lpath);
	if (rc == 0)
		next->version++;  /* every setData adds exactly one */
	return rc;
}

int
klog_rtopics_set_state(klog_zk_t *zk, const char *topic, int p,
    klog_rstate_t *next, klog_err_t *err)
{
	char path[PATH_LEN];
	klog_buf_t b;
	int rc;

	if ((rc = topic_ok(topic, err)) < 0)
		return rc;
	if (next->version < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\" partition %d: state writes need a version",
		    topic, p);
	if (klog_rtopics_state_path(path, sizeof(path), topic, p) < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "topic \"%s\" partition %d: bad path", topic, p);
	klog_buf_init(&b);
	if ((rc = klog_rstate_encode(&b, next)) < 0) {
		klog_buf_free(&b);
		return klog_err_set(err, rc, "%s: invalid state", path);
	}
	rc = klog_zk_set(zk, path, b.data, b.len, next->version, err);
	klog_buf_free(&b);
	if (rc == 0)
		next->version++;
	return rc;
}
