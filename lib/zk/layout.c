/*
 * Kafka 0.7's ZooKeeper layout: paths, node data, the rebalance's range
 * assignment, and the operations built on them.  See layout.h for the
 * layout itself.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "klog/base/clock.h"
#include "klog/base/json.h"
#include "klog/storage/names.h"
#include "klog/zk/layout.h"

#define PATH_LEN KLOG_ZK_PATH_MAX

/* ---- names and paths ---- */

int
klog_layout_group_validate(const char *group, klog_err_t *err)
{
	size_t len;

	if (group == NULL || group[0] == '\0')
		return klog_err_set(err, -KLOG_EINVAL, "empty group name");
	len = strlen(group);
	if (len > KLOG_TOPIC_MAX)
		return klog_err_set(err, -KLOG_EINVAL,
		    "group name longer than %d bytes", KLOG_TOPIC_MAX);
	if (strcmp(group, ".") == 0 || strcmp(group, "..") == 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "group \"%s\": not a valid name", group);
	for (const char *p = group; *p != '\0'; p++)
		if (!klog_names_topic_char((unsigned char)*p))
			return klog_err_set(err, -KLOG_EINVAL,
			    "group name: byte 0x%02x not allowed "
			    "(only A-Z a-z 0-9 . _ -)", (unsigned char)*p);
	return 0;
}

/* A consumer or thread id as a znode name: printable, no '/', not . or ..,
 * at most KLOG_LAYOUT_NAME_MAX bytes. */
static int
id_ok(const char *id)
{
	size_t len = id != NULL ? strlen(id) : 0;

	if (len == 0 || len > KLOG_LAYOUT_NAME_MAX ||
	    strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return 0;
	for (const char *p = id; *p != '\0'; p++)
		if (*p == '/' || (unsigned char)*p <= ' ' ||
		    (unsigned char)*p >= 0x7f)
			return 0;
	return 1;
}

static int
fmt(char *buf, size_t len, const char *f, ...)
    __attribute__((format(printf, 3, 4)));

static int
fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, len, f, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -KLOG_ETOOBIG : 0;
}

int
klog_layout_broker_path(char *buf, size_t len, int32_t broker_id)
{
	if (broker_id < 0)
		return -KLOG_EINVAL;
	return fmt(buf, len, KLOG_LAYOUT_BROKER_IDS "/%d", (int)broker_id);
}

int
klog_layout_topic_path(char *buf, size_t len, const char *topic)
{
	if (klog_topic_validate(topic, NULL) < 0)
		return -KLOG_ETOPIC;
	return fmt(buf, len, KLOG_LAYOUT_BROKER_TOPICS "/%s", topic);
}

int
klog_layout_topic_broker_path(char *buf, size_t len, const char *topic,
    int32_t broker_id)
{
	if (klog_topic_validate(topic, NULL) < 0)
		return -KLOG_ETOPIC;
	if (broker_id < 0)
		return -KLOG_EINVAL;
	return fmt(buf, len, KLOG_LAYOUT_BROKER_TOPICS "/%s/%d", topic,
	    (int)broker_id);
}

int
klog_layout_group_path(char *buf, size_t len, const char *group)
{
	if (klog_layout_group_validate(group, NULL) < 0)
		return -KLOG_EINVAL;
	return fmt(buf, len, KLOG_LAYOUT_CONSUMERS "/%s", group);
}

int
klog_layout_member_path(char *buf, size_t len, const char *group,
    const char *consumer_id)
{
	if (klog_layout_group_validate(group, NULL) < 0)
		return -KLOG_EINVAL;
	if (consumer_id == NULL)
		return fmt(buf, len, KLOG_LAYOUT_CONSUMERS "/%s/ids", group);
	if (!id_ok(consumer_id))
		return -KLOG_EINVAL;
	return fmt(buf, len, KLOG_LAYOUT_CONSUMERS "/%s/ids/%s", group,
	    consumer_id);
}

/* /consumers/<group>/<kind>[/<topic>[/<b>-<p>]] */
static int
group_part_path(char *buf, size_t len, const char *kind, const char *group,
    const char *topic, int32_t broker_id, int32_t part)
{
	if (klog_layout_group_validate(group, NULL) < 0)
		return -KLOG_EINVAL;
	if (topic == NULL)
		return fmt(buf, len, KLOG_LAYOUT_CONSUMERS "/%s/%s", group,
		    kind);
	if (klog_topic_validate(topic, NULL) < 0)
		return -KLOG_ETOPIC;
	if (broker_id == KLOG_LAYOUT_NUMBERED)
		return part < 0 ? -KLOG_EINVAL : fmt(buf, len,
		    KLOG_LAYOUT_CONSUMERS "/%s/%s/%s/%d", group, kind, topic,
		    (int)part);
	if (broker_id < 0)
		return fmt(buf, len, KLOG_LAYOUT_CONSUMERS "/%s/%s/%s", group,
		    kind, topic);
	if (part < 0)
		return -KLOG_EINVAL;
	return fmt(buf, len, KLOG_LAYOUT_CONSUMERS "/%s/%s/%s/%d-%d", group,
	    kind, topic, (int)broker_id, (int)part);
}

int
klog_layout_owner_path(char *buf, size_t len, const char *group,
    const char *topic, int32_t broker_id, int32_t part)
{
	return group_part_path(buf, len, "owners", group, topic, broker_id,
	    part);
}

int
klog_layout_offset_path(char *buf, size_t len, const char *group,
    const char *topic, int32_t broker_id, int32_t part)
{
	return group_part_path(buf, len, "offsets", group, topic, broker_id,
	    part);
}

/* ---- data ---- */

/* Digits only, no sign, no leading zero (but "0"), value <= max. */
static int
parse_decimal(const char *s, size_t len, int64_t max, int64_t *out)
{
	int64_t v = 0;

	if (len == 0 || (len > 1 && s[0] == '0'))
		return -KLOG_EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -KLOG_EINVAL;
		if (v > (max - (s[i] - '0')) / 10)
			return -KLOG_EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int
klog_layout_broker_encode(char *buf, size_t len, const char *host,
    int port, int64_t now_ms)
{
	if (host == NULL || host[0] == '\0' || strchr(host, ':') != NULL ||
	    strlen(host) > KLOG_LAYOUT_HOST_MAX || port < 1 || port > 65535)
		return -KLOG_EINVAL;
	return fmt(buf, len, "%s-%lld:%s:%d", host, (long long)now_ms, host,
	    port);
}

int
klog_layout_broker_parse(const char *data, size_t len, char *host,
    size_t hostlen, int *port)
{
	const char *end = data + len, *h, *p;
	int64_t v;

	h = memchr(data, ':', len);
	if (h == NULL)
		return -KLOG_EINVAL;
	h++;
	p = memchr(h, ':', (size_t)(end - h));
	if (p == NULL || p == h || (size_t)(p - h) >= hostlen)
		return -KLOG_EINVAL;
	/* A NUL would cut the host short; blanks and control bytes are in
	 * no host name. */
	for (const char *c = h; c < p; c++)
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f)
			return -KLOG_EINVAL;
	if (parse_decimal(p + 1, (size_t)(end - p - 1), 65535, &v) < 0 ||
	    v == 0)
		return -KLOG_EINVAL;
	memcpy(host, h, (size_t)(p - h));
	host[p - h] = '\0';
	*port = (int)v;
	return 0;
}

int
klog_layout_count_parse(const char *data, size_t len, int32_t *count)
{
	int64_t v;

	if (parse_decimal(data, len, INT32_MAX, &v) < 0 || v < 1)
		return -KLOG_EINVAL;
	*count = (int32_t)v;
	return 0;
}

int
klog_layout_offset_parse(const char *data, size_t len, int64_t *offset)
{
	return parse_decimal(data, len, INT64_MAX, offset);
}

int
klog_layout_member_encode(klog_buf_t *b, const klog_layout_sub_t *subs,
    size_t n)
{
	char num[16];

	for (size_t i = 0; i < n; i++) {
		if (klog_topic_validate(subs[i].topic, NULL) < 0)
			return -KLOG_ETOPIC;
		if (subs[i].streams < 1)
			return -KLOG_EINVAL;
	}
	/* TopicCount.toJsonString: "{ " then "\"t\": n" joined by "," then
	 * " }". */
	klog_buf_put(b, "{ ", 2);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			klog_buf_put(b, ",", 1);
		klog_buf_put(b, "\"", 1);
		klog_buf_put(b, subs[i].topic, strlen(subs[i].topic));
		snprintf(num, sizeof(num), "\": %d", (int)subs[i].streams);
		klog_buf_put(b, num, strlen(num));
	}
	klog_buf_put(b, " }", 2);
	return b->failed ? -KLOG_ENOMEM : 0;
}

int
klog_layout_member_parse(const char *data, size_t len,
    klog_layout_sub_t *subs, size_t max, size_t *n)
{
	klog_json_member_t *m;
	size_t cap = 1, count = 0, i;
	int64_t v;
	int rc;

	*n = 0;
	while (len > 0 && (*data == ' ' || *data == '\t' || *data == '\n')) {
		data++;
		len--;
	}
	if (len > 0 && (*data == '*' || *data == '!'))
		return -KLOG_EUNSUPPORTED;
	for (i = 0; i < len; i++)  /* every member has a colon */
		cap += data[i] == ':';
	if ((m = calloc(cap, sizeof(*m))) == NULL)
		return -KLOG_ENOMEM;
	rc = klog_json_parse_flat(data, len, m, cap, &count);
	if (rc == 0 && count > max)
		rc = -KLOG_ETOOBIG;
	for (i = 0; rc == 0 && i < count; i++) {
		if (m[i].type != KLOG_JSON_NUMBER || m[i].key_len == 0 ||
		    m[i].key_len > KLOG_TOPIC_MAX ||
		    parse_decimal(m[i].raw, m[i].raw_len, INT32_MAX, &v) < 0 ||
		    v < 1) {
			rc = -KLOG_EINVAL;
			break;
		}
		memcpy(subs[i].topic, m[i].key, m[i].key_len);
		subs[i].topic[m[i].key_len] = '\0';
		if (klog_topic_validate(subs[i].topic, NULL) < 0)
			rc = -KLOG_EINVAL;
		subs[i].streams = (int32_t)v;
	}
	free(m);
	if (rc == 0)
		*n = count;
	return rc;
}

/* ---- ids ---- */

int
klog_layout_consumer_id(char *buf, size_t len, const char *group,
    const char *hostname, int64_t now_ms, uint32_t rnd)
{
	char host[KLOG_LAYOUT_HOST_MAX + 1];
	size_t i;
	int rc;

	if (klog_layout_group_validate(group, NULL) < 0)
		return -KLOG_EINVAL;
	if (hostname == NULL || hostname[0] == '\0')
		hostname = "localhost";
	for (i = 0; hostname[i] != '\0' && i < sizeof(host) - 1; i++) {
		unsigned char c = (unsigned char)hostname[i];

		host[i] = klog_names_topic_char(c) && c != '_' ? (char)c : '-';
	}
	host[i] = '\0';
	rc = fmt(buf, len, "%s_%s-%lld-%08x", group, host, (long long)now_ms,
	    (unsigned)rnd);
	if (rc == 0 && strlen(buf) > KLOG_LAYOUT_NAME_MAX)
		rc = -KLOG_ETOOBIG;
	return rc;
}

int
klog_layout_new_consumer_id(char *buf, size_t len, const char *group,
    klog_err_t *err)
{
	char host[KLOG_LAYOUT_HOST_MAX + 1] = "";
	uint32_t rnd = 0;
	int rc;

	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return klog_err_sys(err, "getrandom", NULL);
	rc = klog_layout_consumer_id(buf, len, group, host,
	    klog_clock_wall_ms(), rnd);
	if (rc < 0)
		return klog_err_set(err, rc, "consumer id for group \"%s\": %s",
		    group, klog_strerror(rc));
	return 0;
}

int
klog_layout_thread_id(char *buf, size_t len, const char *consumer_id, int i)
{
	if (!id_ok(consumer_id) || i < 0)
		return -KLOG_EINVAL;
	return fmt(buf, len, "%s-%d", consumer_id, i);
}

int
klog_layout_part_name(char *buf, size_t len, int32_t broker_id,
    int32_t part)
{
	if (broker_id == KLOG_LAYOUT_NUMBERED && part >= 0)
		return fmt(buf, len, "%d", (int)part);
	if (broker_id < 0 || part < 0)
		return -KLOG_EINVAL;
	return fmt(buf, len, "%d-%d", (int)broker_id, (int)part);
}

int
klog_layout_part_parse(const char *name, int32_t *broker_id, int32_t *part)
{
	const char *dash = strchr(name, '-');
	int64_t b, p;

	if (dash == NULL && parse_decimal(name, strlen(name), INT32_MAX,
	    &p) == 0) {
		*broker_id = KLOG_LAYOUT_NUMBERED;
		*part = (int32_t)p;
		return 0;
	}
	if (dash == NULL ||
	    parse_decimal(name, (size_t)(dash - name), INT32_MAX, &b) < 0 ||
	    parse_decimal(dash + 1, strlen(dash + 1), INT32_MAX, &p) < 0)
		return -KLOG_EINVAL;
	*broker_id = (int32_t)b;
	*part = (int32_t)p;
	return 0;
}

static int
all_digits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int
cmp_str(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t lx, ly;

	/* Numbered partitions ("<p>", no leading zeros): the shorter is the
	 * smaller, and of one length the bytes decide. */
	if (all_digits(x) && all_digits(y) && (lx = strlen(x)) !=
	    (ly = strlen(y)))
		return lx < ly ? -1 : 1;
	return strcmp(x, y);
}

void
klog_layout_sort_names(char **names, size_t n)
{
	if (n > 1)
		qsort(names, n, sizeof(char *), cmp_str);
}

void
klog_layout_assign(size_t nparts, size_t nmembers, size_t j, size_t *start,
    size_t *count)
{
	size_t n, e;

	*start = 0;
	*count = 0;
	if (nmembers == 0 || j >= nmembers)
		return;
	n = nparts / nmembers;
	e = nparts % nmembers;
	*start = n * j + (j < e ? j : e);
	*count = n + (j < e ? 1 : 0);
}

/* ---- operations ---- */

static int
path_fail(klog_err_t *err, int rc, const char *what)
{
	return klog_err_set(err, rc, "%s: %s", what, klog_strerror(rc));
}

int
klog_layout_register_broker(klog_zk_t *zk, int32_t id, const char *host,
    int port, int wait_ms, klog_err_t *err)
{
	char path[PATH_LEN], data[2 * KLOG_LAYOUT_HOST_MAX + 48];
	klog_err_t e = { 0, "" };
	int rc;

	if ((rc = klog_layout_broker_path(path, sizeof(path), id)) < 0)
		return path_fail(err, rc, "broker id");
	rc = klog_layout_broker_encode(data, sizeof(data), host, port,
	    klog_clock_wall_ms());
	if (rc < 0)
		return klog_err_set(err, rc, "broker address %s:%d: %s", host,
		    port, klog_strerror(rc));
	rc = klog_zk_create_ephemeral(zk, path, data, strlen(data), wait_ms,
	    &e);
	if (rc == -KLOG_EEXIST)
		return klog_err_set(err, rc, "broker id %d is already "
		    "registered: %s", (int)id, e.msg);
	if (rc < 0 && err != NULL)
		*err = e;
	return rc;
}

int
klog_layout_register_topic(klog_zk_t *zk, int32_t id, const char *topic,
    int32_t partitions, klog_err_t *err)
{
	char path[PATH_LEN], data[16];
	int rc;

	rc = klog_layout_topic_broker_path(path, sizeof(path), topic, id);
	if (rc < 0)
		return path_fail(err, rc, "register topic");
	if (partitions < 1)
		return klog_err_set(err, -KLOG_EINVAL, "topic \"%s\": %d "
		    "partitions", topic, (int)partitions);
	snprintf(data, sizeof(data), "%d", (int)partitions);
	return klog_zk_create_ephemeral(zk, path, data, strlen(data), 0, err);
}

/* Children of path, a missing node being an empty list. */
static int
children_or_empty(klog_zk_t *zk, const char *path, int watch,
    klog_zk_list_t *out, klog_err_t *err)
{
	int rc = klog_zk_children(zk, path, watch, out, err);

	return rc == -KLOG_ENOENT ? 0 : rc;
}

static int
cmp_broker(const void *a, const void *b)
{
	const klog_layout_broker_t *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

int
klog_layout_brokers(klog_zk_t *zk, int watch, klog_layout_broker_t **out,
    size_t *n, klog_err_t *err)
{
	klog_zk_list_t ids = { 0 };
	klog_layout_broker_t *v = NULL;
	char path[PATH_LEN], *data;
	size_t i, len, k = 0;
	int64_t id;
	int rc;

	*out = NULL;
	*n = 0;
	if (watch && (rc = klog_zk_mkdirs(zk, KLOG_LAYOUT_BROKER_IDS,
	    err)) < 0)
		return rc;
	rc = children_or_empty(zk, KLOG_LAYOUT_BROKER_IDS, watch, &ids, err);
	if (rc < 0)
		return rc;
	if (ids.n > 0 && (v = calloc(ids.n, sizeof(*v))) == NULL) {
		rc = path_fail(err, -KLOG_ENOMEM, KLOG_LAYOUT_BROKER_IDS);
		goto out;
	}
	for (i = 0; i < ids.n; i++) {
		if (parse_decimal(ids.names[i], strlen(ids.names[i]),
		    INT32_MAX, &id) < 0)
			continue;
		if (fmt(path, sizeof(path), KLOG_LAYOUT_BROKER_IDS "/%s",
		    ids.names[i]) < 0)
			continue;
		rc = klog_zk_get(zk, path, 0, &data, &len, NULL, err);
		if (rc == -KLOG_ENOENT)
			continue;  /* went between the two reads */
		if (rc < 0)
			goto out;
		rc = klog_layout_broker_parse(data, len, v[k].host,
		    sizeof(v[k].host), &v[k].port);
		free(data);
		if (rc < 0)
			continue;
		v[k++].id = (int32_t)id;
	}
	rc = 0;
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_broker);
	*out = v;
	*n = k;
	v = NULL;
out:
	free(v);
	klog_zk_list_free(&ids);
	return rc;
}

void
klog_layout_topic_free(klog_layout_topic_t *t)
{
	if (t == NULL)
		return;
	free(t->holders);
	t->holders = NULL;
	t->nholders = 0;
}

static int
cmp_holder(const void *a, const void *b)
{
	const klog_layout_holder_t *x = a, *y = b;

	return (x->broker_id > y->broker_id) - (x->broker_id < y->broker_id);
}

int
klog_layout_topic(klog_zk_t *zk, const char *topic, int watch,
    klog_layout_topic_t *t, klog_err_t *err)
{
	klog_zk_list_t ids = { 0 };
	char path[PATH_LEN], child[PATH_LEN], *data;
	size_t i, len;
	int64_t id;
	int32_t count;
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = klog_layout_topic_path(path, sizeof(path), topic)) < 0)
		return klog_topic_validate(topic, err) < 0 ? rc :
		    path_fail(err, rc, topic);
	snprintf(t->name, sizeof(t->name), "%s", topic);
	rc = klog_zk_children(zk, path, watch, &ids, err);
	if (rc == -KLOG_ENOENT)
		return klog_err_set(err, -KLOG_ENOTOPIC, "topic \"%s\": not "
		    "registered by any broker", topic);
	if (rc < 0)
		return rc;
	if (ids.n > 0 && (t->holders = calloc(ids.n,
	    sizeof(*t->holders))) == NULL) {
		rc = path_fail(err, -KLOG_ENOMEM, path);
		goto out;
	}
	for (i = 0; i < ids.n; i++) {
		if (parse_decimal(ids.names[i], strlen(ids.names[i]),
		    INT32_MAX, &id) < 0)
			continue;
		if (fmt(child, sizeof(child), "%s/%s", path, ids.names[i]) < 0)
			continue;
		rc = klog_zk_get(zk, child, 0, &data, &len, NULL, err);
		if (rc == -KLOG_ENOENT)
			continue;
		if (rc < 0)
			goto out;
		rc = klog_layout_count_parse(data, len, &count);
		free(data);
		if (rc < 0)
			continue;
		t->holders[t->nholders].broker_id = (int32_t)id;
		t->holders[t->nholders++].partitions = count;
	}
	rc = 0;
	if (t->nholders > 1)
		qsort(t->holders, t->nholders, sizeof(*t->holders),
		    cmp_holder);
out:
	klog_zk_list_free(&ids);
	if (rc < 0)
		klog_layout_topic_free(t);
	return rc;
}

void
klog_layout_topics_free(klog_layout_topic_t *t, size_t n)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		klog_layout_topic_free(&t[i]);
	free(t);
}

int
klog_layout_topics(klog_zk_t *zk, klog_layout_topic_t **out, size_t *n,
    klog_err_t *err)
{
	klog_zk_list_t names = { 0 };
	klog_layout_topic_t *v = NULL;
	size_t i, k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	rc = children_or_empty(zk, KLOG_LAYOUT_BROKER_TOPICS, 0, &names, err);
	if (rc < 0)
		return rc;
	if (names.n > 0 && (v = calloc(names.n, sizeof(*v))) == NULL) {
		rc = path_fail(err, -KLOG_ENOMEM, KLOG_LAYOUT_BROKER_TOPICS);
		goto out;
	}
	for (i = 0; i < names.n; i++) {
		if (klog_topic_validate(names.names[i], NULL) < 0)
			continue;  /* not one klog could have written */
		rc = klog_layout_topic(zk, names.names[i], 0, &v[k], err);
		if (rc == -KLOG_ENOTOPIC)
			continue;
		if (rc < 0)
			goto out;
		k++;
	}
	rc = 0;
	*out = v;
	*n = k;
	v = NULL;
out:
	klog_layout_topics_free(v, k);
	klog_zk_list_free(&names);
	return rc;
}

int
klog_layout_topic_parts(const klog_layout_topic_t *t, klog_zk_list_t *out)
{
	char name[KLOG_LAYOUT_PART_NAME_MAX];
	size_t total = 0, i;
	int32_t p;

	out->names = NULL;
	out->n = 0;
	for (i = 0; i < t->nholders; i++)
		total += (size_t)t->holders[i].partitions;
	if (total > 0 && (out->names = calloc(total, sizeof(char *))) == NULL)
		return -KLOG_ENOMEM;
	for (i = 0; i < t->nholders; i++) {
		for (p = 0; p < t->holders[i].partitions; p++) {
			klog_layout_part_name(name, sizeof(name),
			    t->holders[i].broker_id, p);
			if ((out->names[out->n] = strdup(name)) == NULL) {
				klog_zk_list_free(out);
				return -KLOG_ENOMEM;
			}
			out->n++;
		}
	}
	klog_layout_sort_names(out->names, out->n);
	return 0;
}

int
klog_layout_offset_read(klog_zk_t *zk, const char *group, const char *topic,
    int32_t broker_id, int32_t part, int64_t *offset, klog_err_t *err)
{
	char path[PATH_LEN], *data;
	size_t len;
	int rc;

	rc = klog_layout_offset_path(path, sizeof(path), group, topic,
	    broker_id, part);
	if (rc < 0)
		return path_fail(err, rc, "offset path");
	if ((rc = klog_zk_get(zk, path, 0, &data, &len, NULL, err)) < 0)
		return rc;
	rc = klog_layout_offset_parse(data, len, offset);
	if (rc < 0)
		klog_err_set(err, -KLOG_ECORRUPT, "%s: not an offset: \"%.40s\"",
		    path, data);
	free(data);
	return rc < 0 ? -KLOG_ECORRUPT : 0;
}

int
klog_layout_offset_commit(klog_zk_t *zk, const char *group,
    const char *topic, int32_t broker_id, int32_t part, int64_t offset,
    klog_err_t *err)
{
	char path[PATH_LEN], data[24];
	int rc;

	rc = klog_layout_offset_path(path, sizeof(path), group, topic,
	    broker_id, part);
	if (rc < 0)
		return path_fail(err, rc, "offset path");
	if (offset < 0)
		return klog_err_set(err, -KLOG_EINVAL, "%s: negative offset",
		    path);
	snprintf(data, sizeof(data), "%lld", (long long)offset);
	return klog_zk_put(zk, path, data, strlen(data), err);
}

int
klog_layout_groups(klog_zk_t *zk, klog_zk_list_t *out, klog_err_t *err)
{
	return children_or_empty(zk, KLOG_LAYOUT_CONSUMERS, 0, out, err);
}

int
klog_layout_members(klog_zk_t *zk, const char *group, int watch,
    klog_zk_list_t *out, klog_err_t *err)
{
	char path[PATH_LEN];
	int rc;

	out->names = NULL;
	out->n = 0;
	if ((rc = klog_layout_member_path(path, sizeof(path), group,
	    NULL)) < 0)
		return klog_layout_group_validate(group, err) < 0 ? rc :
		    path_fail(err, rc, group);
	if (watch && (rc = klog_zk_mkdirs(zk, path, err)) < 0)
		return rc;
	return children_or_empty(zk, path, watch, out, err);
}

int
klog_layout_member_register(klog_zk_t *zk, const char *group,
    const char *consumer_id, const klog_layout_sub_t *subs, size_t n,
    klog_err_t *err)
{
	char path[PATH_LEN];
	klog_buf_t b;
	int rc;

	rc = klog_layout_member_path(path, sizeof(path), group, consumer_id);
	if (rc < 0)
		return path_fail(err, rc, "member path");
	klog_buf_init(&b);
	rc = klog_layout_member_encode(&b, subs, n);
	if (rc < 0)
		rc = path_fail(err, rc, "member subscriptions");
	else
		rc = klog_zk_create_ephemeral(zk, path, b.data, b.len, 0, err);
	klog_buf_free(&b);
	return rc;
}

int
klog_layout_member_subs(klog_zk_t *zk, const char *group,
    const char *consumer_id, klog_layout_sub_t *subs, size_t max,
    size_t *n, klog_err_t *err)
{
	char path[PATH_LEN], *data;
	size_t len;
	int rc;

	*n = 0;
	rc = klog_layout_member_path(path, sizeof(path), group, consumer_id);
	if (rc < 0)
		return path_fail(err, rc, "member path");
	if ((rc = klog_zk_get(zk, path, 0, &data, &len, NULL, err)) < 0)
		return rc;
	rc = klog_layout_member_parse(data, len, subs, max, n);
	if (rc < 0)
		klog_err_set(err, rc, "%s: subscriptions \"%.60s\": %s", path,
		    data, klog_strerror(rc));
	free(data);
	return rc;
}

/* Append the names of b missing from a (both sorted) to a, re-sorted. */
static int
list_union(klog_zk_list_t *a, klog_zk_list_t *b)
{
	char **v;
	size_t i, j, k = a->n;

	if (b->n == 0)
		return 0;
	v = realloc(a->names, (a->n + b->n) * sizeof(char *));
	if (v == NULL)
		return -KLOG_ENOMEM;
	a->names = v;
	for (i = 0; i < b->n; i++) {
		for (j = 0; j < k && strcmp(v[j], b->names[i]) != 0; j++)
			;
		if (j == k) {
			v[a->n++] = b->names[i];
			b->names[i] = NULL;
		}
	}
	klog_layout_sort_names(a->names, a->n);
	return 0;
}

int
klog_layout_group_topics(klog_zk_t *zk, const char *group,
    klog_zk_list_t *out, klog_err_t *err)
{
	char path[PATH_LEN];
	klog_zk_list_t owners = { 0 };
	int rc;

	out->names = NULL;
	out->n = 0;
	if ((rc = klog_layout_offset_path(path, sizeof(path), group, NULL, -1,
	    -1)) < 0)
		return klog_layout_group_validate(group, err) < 0 ? rc :
		    path_fail(err, rc, group);
	if ((rc = children_or_empty(zk, path, 0, out, err)) < 0)
		return rc;
	klog_layout_owner_path(path, sizeof(path), group, NULL, -1, -1);
	rc = children_or_empty(zk, path, 0, &owners, err);
	if (rc == 0 && (rc = list_union(out, &owners)) < 0)
		path_fail(err, rc, path);
	klog_zk_list_free(&owners);
	if (rc < 0)
		klog_zk_list_free(out);
	return rc;
}

int
klog_layout_owner_read(klog_zk_t *zk, const char *group, const char *topic,
    int32_t broker_id, int32_t part, char **owner, klog_err_t *err)
{
	char path[PATH_LEN];
	size_t len;
	int rc;

	*owner = NULL;
	rc = klog_layout_owner_path(path, sizeof(path), group, topic,
	    broker_id, part);
	if (rc < 0)
		return path_fail(err, rc, "owner path");
	return klog_zk_get(zk, path, 0, owner, &len, NULL, err);
}

int
klog_layout_owner_claim(klog_zk_t *zk, const char *group, const char *topic,
    int32_t broker_id, int32_t part, const char *thread_id, klog_err_t *err)
{
	char path[PATH_LEN];
	int rc;

	rc = klog_layout_owner_path(path, sizeof(path), group, topic,
	    broker_id, part);
	if (rc < 0)
		return path_fail(err, rc, "owner path");
	if (!id_ok(thread_id))
		return klog_err_set(err, -KLOG_EINVAL, "bad thread id");
	return klog_zk_create_ephemeral(zk, path, thread_id,
	    strlen(thread_id), 0, err);
}

int
klog_layout_owner_release(klog_zk_t *zk, const char *group,
    const char *topic, int32_t broker_id, int32_t part, klog_err_t *err)
{
	char path[PATH_LEN];
	int rc;

	rc = klog_layout_owner_path(path, sizeof(path), group, topic,
	    broker_id, part);
	if (rc < 0)
		return path_fail(err, rc, "owner path");
	rc = klog_zk_delete(zk, path, -1, err);
	return rc == -KLOG_ENOENT ? 0 : rc;
}

int
klog_layout_group_delete(klog_zk_t *zk, const char *group, klog_err_t *err)
{
	klog_zk_list_t members = { 0 };
	char path[PATH_LEN];
	int rc;

	if ((rc = klog_layout_group_path(path, sizeof(path), group)) < 0)
		return klog_layout_group_validate(group, err) < 0 ? rc :
		    path_fail(err, rc, group);
	if ((rc = klog_zk_exists(zk, path, 0, NULL, err)) < 0)
		return rc == -KLOG_ENOENT ? klog_err_set(err, rc,
		    "group \"%s\": no such group", group) : rc;
	if ((rc = klog_layout_members(zk, group, 0, &members, err)) < 0)
		return rc;
	if (members.n > 0)
		rc = klog_err_set(err, -KLOG_EBUSY, "group \"%s\": %zu live "
		    "member%s", group, members.n, members.n == 1 ? "" : "s");
	klog_zk_list_free(&members);
	if (rc < 0)
		return rc;
	return klog_zk_delete_tree(zk, path, err);
}
