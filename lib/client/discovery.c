#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/client/discovery.h"
#include "klog/storage/names.h"

#define MAX_BROKERS 1024

/* Standalone discovery: a broker list and METADATA. */
struct static_disc {
	klog_discovery_t base;
	klog_client_addr_t *addrs;
	size_t naddrs;
	size_t cur;              /* the broker we ask */
	klog_client_t *conn;     /* to addrs[cur], opened on first use */
	int timeout_ms;
	/* The last positive answer, for one topic. */
	int cached;
	char topic[KLOG_TOPIC_MAX + 1];
	int partitions;
	klog_discovery_part_t where;
};

/* What one METADATA round trip returned; arrays owned here. */
struct answer {
	klog_metadata_t md;
	klog_meta_broker_t *brokers;
	klog_meta_topic_t *topics;
};

static void
answer_free(struct answer *a)
{
	free(a->brokers);
	free(a->topics);
}

/* One round trip on s->conn; the body is decoded before it goes stale. */
static int
ask_conn(struct static_disc *s, const char *topic, struct answer *a,
    klog_err_t *err)
{
	klog_str_t t = { topic, (uint16_t)(topic ? strlen(topic) : 0) };
	uint32_t max_topics = topic ? 1 : 1024;
	const uint8_t *body;
	size_t len;
	int16_t error;
	int32_t id;
	int rc;

	id = klog_client_next_id(s->conn);
	if ((rc = klog_proto_encode_metadata(klog_client_out(s->conn), id, &t,
	    topic ? 1 : 0)) < 0)
		return klog_err_set(err, rc, "metadata request: %s",
		    klog_strerror(rc));
	if ((rc = klog_client_call(s->conn, id, s->timeout_ms, &error, &body,
	    &len, err)) < 0)
		return rc;
	/* A SASL listener asked without SASL refuses us: no other broker
	 * of the cluster would do otherwise. */
	if (error != KLOG_WIRE_NONE)
		return klog_err_set(err, klog_wire_error_to_klog(error) ==
		    -KLOG_EAUTH ? -KLOG_EAUTH : -KLOG_EPROTO, "%s: metadata: %s",
		    klog_client_name(s->conn), klog_wire_error_name(error));
	a->brokers = calloc(MAX_BROKERS, sizeof(*a->brokers));
	for (;;) {
		free(a->topics);
		a->topics = calloc(max_topics, sizeof(*a->topics));
		if (a->brokers == NULL || a->topics == NULL)
			return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		rc = klog_proto_decode_metadata_resp(body, len, &a->md,
		    a->brokers, MAX_BROKERS, a->topics, max_topics);
		if (rc != -KLOG_ETOOBIG || max_topics >= (1u << 20))
			break;
		max_topics *= 8;
	}
	if (rc < 0)
		return klog_err_set(err, -KLOG_EPROTO,
		    "%s: malformed metadata response",
		    klog_client_name(s->conn));
	return 0;
}

/* Ask the brokers in turn until one answers. */
static int
ask(struct static_disc *s, const char *topic, struct answer *a,
    klog_err_t *err)
{
	klog_client_addr_t to;
	int rc = -KLOG_ECONN, stale;

	memset(a, 0, sizeof(*a));
	for (size_t tries = 0; tries < s->naddrs; tries++) {
		/* A kept connection may be to a broker that restarted since:
		 * it gets one fresh retry before the next broker is tried. */
		stale = s->conn != NULL;
		to = s->addrs[s->cur];
		to.sec = s->base.sec;
		/* Refused credentials are refused by every broker alike. */
		if (s->conn == NULL && (rc = klog_client_open(&to,
		    s->timeout_ms, &s->conn, err)) < 0) {
			if (rc == -KLOG_EAUTH)
				return rc;
			s->cur = (s->cur + 1) % s->naddrs;
			continue;
		}
		if ((rc = ask_conn(s, topic, a, err)) == 0)
			return 0;
		answer_free(a);
		memset(a, 0, sizeof(*a));
		if (rc == -KLOG_ENOMEM || rc == -KLOG_EAUTH)
			return rc;
		klog_client_close(s->conn);
		s->conn = NULL;
		if (stale)
			tries--;
		else
			s->cur = (s->cur + 1) % s->naddrs;
	}
	return rc == -KLOG_ETIMEDOUT ? rc : -KLOG_ECONN;
}

/* The address of the broker that md names as serving a topic. */
static void
serving_broker(const struct static_disc *s, const klog_metadata_t *md,
    int32_t broker_id, klog_discovery_part_t *out)
{
	memset(out, 0, sizeof(*out));
	out->addr = s->addrs[s->cur];
	out->broker_id = broker_id;
	if (broker_id == md->broker_id)
		return;
	for (uint32_t i = 0; i < md->nbrokers; i++) {
		const klog_meta_broker_t *b = &md->brokers[i];

		if (b->id != broker_id || b->host.len == 0 ||
		    b->host.len >= sizeof(out->addr.host))
			continue;
		memcpy(out->addr.host, b->host.p, b->host.len);
		out->addr.host[b->host.len] = '\0';
		snprintf(out->addr.port, sizeof(out->addr.port), "%d",
		    (int)b->port);
		return;
	}
}

static int
topic_error(const char *topic, int error, klog_err_t *err)
{
	if (error == KLOG_WIRE_INVALID_TOPIC)
		return klog_err_set(err, -KLOG_ETOPIC,
		    "topic \"%s\": invalid name", topic);
	return klog_err_set(err, klog_wire_error_to_klog(error),
	    "topic \"%s\": %s", topic, klog_wire_error_text(error));
}

static int
static_partitions(klog_discovery_t *d, const char *topic, klog_err_t *err)
{
	struct static_disc *s = (struct static_disc *)d;
	const klog_meta_topic_t *t;
	struct answer a;
	int rc;

	if (s->cached && strcmp(s->topic, topic) == 0)
		return s->partitions;
	if (strlen(topic) > KLOG_TOPIC_MAX)
		return klog_err_set(err, -KLOG_ETOPIC,
		    "topic \"%s\": invalid name", topic);
	if ((rc = ask(s, topic, &a, err)) < 0)
		return rc;
	rc = 0;
	for (uint32_t i = 0; i < a.md.ntopics; i++) {
		t = &a.topics[i];
		if (t->topic.len != strlen(topic) ||
		    memcmp(t->topic.p, topic, t->topic.len) != 0)
			continue;
		if (t->error == KLOG_WIRE_UNKNOWN_TOPIC)
			break;
		if (t->error != KLOG_WIRE_NONE) {
			rc = topic_error(topic, t->error, err);
			break;
		}
		if (t->partitions <= 0)
			break;
		s->cached = 1;
		snprintf(s->topic, sizeof(s->topic), "%s", topic);
		s->partitions = t->partitions;
		serving_broker(s, &a.md, t->broker_id, &s->where);
		rc = t->partitions;
		break;
	}
	answer_free(&a);
	return rc;
}

static int
static_locate(klog_discovery_t *d, const char *topic, int index,
    klog_discovery_part_t *out, klog_err_t *err)
{
	struct static_disc *s = (struct static_disc *)d;
	int n;

	if ((n = static_partitions(d, topic, err)) < 0)
		return n;
	if (n == 0 && index == 0 && s->conn != NULL) {
		/* Not created yet: a produce to the broker we asked will. */
		memset(out, 0, sizeof(*out));
		out->addr = s->addrs[s->cur];
		out->broker_id = -1;
		return 0;
	}
	if (index < 0 || index >= n)
		return klog_err_set(err, -KLOG_ENOPARTITION,
		    "topic \"%s\" has no partition %d", topic, index);
	*out = s->where;
	out->partition = index;
	return 0;
}

static int
static_topics(klog_discovery_t *d, klog_discovery_topic_fn fn, void *arg,
    klog_err_t *err)
{
	struct static_disc *s = (struct static_disc *)d;
	char name[KLOG_TOPIC_MAX + 1];
	const klog_meta_topic_t *t;
	struct answer a;
	int rc;

	if ((rc = ask(s, NULL, &a, err)) < 0)
		return rc;
	for (uint32_t i = 0; i < a.md.ntopics && rc == 0; i++) {
		t = &a.topics[i];
		if (t->error != KLOG_WIRE_NONE || t->topic.len > KLOG_TOPIC_MAX)
			continue;
		memcpy(name, t->topic.p, t->topic.len);
		name[t->topic.len] = '\0';
		rc = fn(arg, name, t->partitions) != 0;
	}
	answer_free(&a);
	return 0;
}

static void
static_invalidate(klog_discovery_t *d)
{
	struct static_disc *s = (struct static_disc *)d;

	s->cached = 0;
}

static void
static_close(klog_discovery_t *d)
{
	struct static_disc *s = (struct static_disc *)d;

	klog_client_close(s->conn);
	free(s->addrs);
	free(s);
}

static const klog_discovery_ops_t static_ops = {
	.partitions = static_partitions,
	.locate = static_locate,
	.topics = static_topics,
	.invalidate = static_invalidate,
	.close = static_close,
};

int
klog_discovery_open_static(const char *brokers, int timeout_ms,
    klog_discovery_t **out, klog_err_t *err)
{
	struct static_disc *s;
	int rc;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if ((rc = klog_client_parse_brokers(brokers, &s->addrs, &s->naddrs,
	    err)) < 0) {
		free(s);
		return rc;
	}
	s->base.ops = &static_ops;
	s->timeout_ms = timeout_ms;
	*out = &s->base;
	return 0;
}
