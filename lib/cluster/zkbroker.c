#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/promtext.h"
#include "klog/broker/fetcher.h"
#include "klog/cluster/zkbroker.h"
#include "klog/cluster/zkauthz.h"
#include "klog/cluster/zklogins.h"
#include "klog/cluster/zkkafka.h"
#include "klog/cluster/zkpids.h"
#include "klog/cluster/zkrepl.h"
#include "klog/core/idem.h"
#include "klog/core/offline.h"
#include "klog/core/replicated.h"
#include "klog/zk/layout.h"
#include "klog/zk/rtopics.h"
#include "klog/zk/zkacl.h"
#include "klog/zk/zkasync.h"

#define RETRY_MS 1000
#define ZOMBIE_SLACK_MS 1000

struct klog_zkbroker {
	klog_zkbroker_config_t cfg;
	char *connect;
	klog_broker_t *b;
	klog_loop_t *loop;
	klog_zk_t *zk;
	int watching;
	int dirty;              /* a registration failed: retry */
	int warned;             /* the current outage was logged */
	int connected;          /* the session is connected (the metric) */
	klog_timer_t retry;
	klog_fetcher_t *fetcher;
	klog_zkrepl_t *repl;
	klog_zkkafka_t *kafka;     /* the Kafka listener's, if any */
	klog_zklogins_t *logins;   /* SASL users from ZooKeeper, if so */
	klog_zkauthz_t *acls;      /* ACLs from ZooKeeper, if so */
	klog_zkpids_t *pids;       /* producer id blocks */
};

static void zlog(klog_zkbroker_t *zb, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
zlog(klog_zkbroker_t *zb, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (zb->cfg.log == NULL || level > zb->cfg.log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	zb->cfg.log(zb->cfg.log_arg, level, msg);
}

/* A failure while ZooKeeper is away is expected and logged once per
 * outage; the retry timer takes it from there. */
static void
failed(klog_zkbroker_t *zb, const char *what, int rc, const klog_err_t *err)
{
	zb->dirty = 1;
	if (!klog_timer_active(&zb->retry))
		klog_loop_timer_start(zb->loop, &zb->retry, RETRY_MS, 0);
	if (zb->warned && (rc == -KLOG_ECONN || rc == -KLOG_ETIMEDOUT))
		return;
	zb->warned = 1;
	zlog(zb, KLOG_LEVEL_WARN, "zookeeper: registering %s: %s (will "
	    "retry)", what, klog_err_text(err, rc));
}

static int
register_broker(klog_zkbroker_t *zb, int wait_ms, klog_err_t *err)
{
	return klog_layout_register_broker(zb->zk, zb->cfg.broker_id,
	    klog_broker_advertised_host(zb->b),
	    klog_broker_advertised_port(zb->b), wait_ms, err);
}

static int
topic_one(void *arg, const char *topic, int partitions)
{
	klog_zkbroker_t *zb = arg;
	klog_err_t err = { 0 };
	char what[KLOG_TOPIC_MAX + 16];
	int rc;

	if (zb->repl != NULL && klog_zkrepl_has(zb->repl, topic))
		return 0;
	rc = klog_layout_register_topic(zb->zk, zb->cfg.broker_id, topic,
	    partitions, &err);
	if (rc < 0) {
		snprintf(what, sizeof(what), "topic \"%s\"", topic);
		failed(zb, what, rc, &err);
	}
	/* One failure for lack of a connection means all would fail. */
	return rc == -KLOG_ECONN ? rc : 0;
}

/* Everything again: after a new session, a failure or lost events. */
static void
register_all(klog_zkbroker_t *zb)
{
	klog_err_t err = { 0 };
	char what[32];
	int rc;

	zb->dirty = 0;
	if ((rc = register_broker(zb, 0, &err)) < 0) {
		snprintf(what, sizeof(what), "broker id %d",
		    (int)zb->cfg.broker_id);
		failed(zb, what, rc, &err);
		return;
	}
	if (zb->kafka != NULL &&
	    (rc = klog_zkkafka_register(zb->kafka, 0, &err)) < 0) {
		failed(zb, "the Kafka listener", rc, &err);
		return;
	}
	if (klog_broker_topics(zb->b, topic_one, zb) == 0 && !zb->dirty) {
		if (zb->warned)
			zlog(zb, KLOG_LEVEL_INFO, "zookeeper: registered again "
			    "as broker %d", (int)zb->cfg.broker_id);
		zb->warned = 0;
	}
}

static void
on_retry(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_zkbroker_t *zb = arg;

	(void)loop;
	(void)t;
	if (zb->dirty)
		register_all(zb);
}

static void
on_event(klog_zkbroker_t *zb, const klog_zk_event_t *ev)
{
	if (klog_zkpids_event(zb->pids, ev) ||
	    klog_zkkafka_event(zb->kafka, ev) ||
	    klog_zkrepl_event(zb->repl, ev) ||
	    klog_zklogins_event(zb->logins, ev) ||
	    klog_zkauthz_event(zb->acls, ev))
		return;
	if (ev->type == KLOG_ZK_EVENT_DISCONNECTED ||
	    ev->type == KLOG_ZK_EVENT_EXPIRED)
		zb->connected = 0;
	else if (ev->type == KLOG_ZK_EVENT_CONNECTED ||
	    ev->type == KLOG_ZK_EVENT_SESSION)
		zb->connected = 1;
	switch (ev->type) {
	case KLOG_ZK_EVENT_DISCONNECTED:
		zlog(zb, KLOG_LEVEL_WARN, "zookeeper: connection lost; "
		    "reconnecting");
		break;
	case KLOG_ZK_EVENT_CONNECTED:
		zlog(zb, KLOG_LEVEL_INFO, "zookeeper: reconnected; the session "
		    "and its registrations survived");
		if (zb->dirty)
			register_all(zb);
		break;
	case KLOG_ZK_EVENT_EXPIRED:
		zlog(zb, KLOG_LEVEL_WARN, "zookeeper: session expired; "
		    "opening a new one");
		break;
	case KLOG_ZK_EVENT_SESSION:
		zlog(zb, KLOG_LEVEL_INFO, "zookeeper: new session; "
		    "registering again");
		zb->warned = 1;
		register_all(zb);
		break;
	case KLOG_ZK_EVENT_OVERFLOW:
		register_all(zb);
		break;
	default:
		break;
	}
}

static void
on_readable(klog_loop_t *loop, int fd, void *arg, int mask)
{
	klog_zkbroker_t *zb = arg;
	klog_zk_event_t ev;
	int rc;

	(void)loop;
	(void)fd;
	(void)mask;
	while ((rc = klog_zk_next_event(zb->zk, &ev)) != 0) {
		if (rc < 0) {
			/* The new session could not even be started: the
			 * retry timer will try again. */
			zb->dirty = 1;
			if (!klog_timer_active(&zb->retry))
				klog_loop_timer_start(zb->loop, &zb->retry,
				    RETRY_MS, 0);
			break;
		}
		on_event(zb, &ev);
	}
}

/* The broker's scrape, from the cluster layer: the session's state, the
 * lease, and the follower's fetches, which only a broker in a cluster
 * makes. */
static int
zk_metrics(void *arg, klog_buf_t *out)
{
	klog_zkbroker_t *zb = arg;
	klog_fetcher_stats_t fs;
	klog_promtext_labels_t l;
	int64_t fences;
	int fenced;

	klog_promtext_family(out, "klog_zookeeper_session_state", "gauge",
	    "1 while the ZooKeeper session is connected, 0 while it is "
	    "lost or being replaced.");
	klog_promtext_int(out, "klog_zookeeper_session_state", NULL,
	    zb->connected);
	klog_promtext_family(out, "klog_zookeeper_silent_seconds", "gauge",
	    "Seconds since ZooKeeper last certainly heard from this broker "
	    "(its last answered ping).");
	klog_promtext_double(out, "klog_zookeeper_silent_seconds", NULL,
	    (double)klog_zk_quiet_ms(zb->zk) / 1000.0);
	if (zb->repl == NULL)
		return 0;
	fenced = klog_zkrepl_fenced(zb->repl, &fences);
	klog_promtext_family(out, "klog_zookeeper_fenced", "gauge",
	    "1 while this broker leads nothing because ZooKeeper has been "
	    "silent for nine tenths of the session timeout.");
	klog_promtext_int(out, "klog_zookeeper_fenced", NULL, fenced);
	klog_promtext_family(out, "klog_zookeeper_fences_total", "counter",
	    "Times this broker stopped leading for want of ZooKeeper.");
	klog_promtext_int(out, "klog_zookeeper_fences_total", NULL, fences);
	klog_fetcher_stats(zb->fetcher, &fs);
	klog_promtext_family(out, "klog_replica_fetch_timeouts_total",
	    "counter", "A follower's connects to a leader and fetches from it "
	    "given up at their deadline and started again, by phase.");
	klog_promtext_labels_init(&l);
	klog_promtext_label(&l, "phase", "connect");
	klog_promtext_int(out, "klog_replica_fetch_timeouts_total", &l,
	    (int64_t)fs.connect_timeouts);
	klog_promtext_labels_init(&l);
	klog_promtext_label(&l, "phase", "fetch");
	klog_promtext_int(out, "klog_replica_fetch_timeouts_total", &l,
	    (int64_t)fs.fetch_timeouts);
	return 0;
}

void
klog_zkbroker_topic(klog_zkbroker_t *zb, const char *topic, int partitions)
{
	(void)topic_one(zb, topic, partitions);
}

/* The core's create check: a produce must not make a local, unreplicated
 * copy of a replicated topic on a broker that holds none of it. */
static int
replicated(void *arg, const char *topic)
{
	klog_zkbroker_t *zb = arg;

	return klog_zkrepl_has(zb->repl, topic);
}

static int
open_repl(klog_zkbroker_t *zb, klog_err_t *err)
{
	klog_logger_t log = { zb->cfg.log, zb->cfg.log_arg, zb->cfg.log_level };
	klog_zkrepl_config_t rc = { .broker_id = zb->cfg.broker_id,
	    .unclean = zb->cfg.unclean_election, .log = log };
	klog_core_t *core = klog_broker_core(zb->b);
	int r;

	if ((r = klog_zkpids_new(zb->zk, zb->cfg.broker_id, &log,
	    &zb->pids)) < 0)
		return klog_err_set(err, r, "producer ids: %s",
		    klog_strerror(r));
	if ((r = klog_fetcher_new(zb->loop, core, zb->cfg.broker_id,
	    klog_broker_peer_security(zb->b), &log, &zb->fetcher, err)) < 0 ||
	    (r = klog_zkrepl_new(zb->zk, zb->loop, core, zb->fetcher, &rc,
	    &zb->repl, err)) < 0)
		return r;
	klog_core_set_create_check(core, replicated, zb);
	klog_core_set_storage_hook(core, klog_zkrepl_storage_failed, zb->repl);
	/* Both front ends' producer ids (core/idem.h), as Kafka's brokers
	 * take them, a block ahead. */
	klog_core_set_producer_block(core, klog_zkpids_take, zb->pids);
	klog_core_set_replication(core, zb->cfg.replica_lag_ms,
	    klog_zkrepl_isr_change, zb->repl, klog_fetcher_flushed,
	    zb->fetcher);
	return 0;
}

/*
 * With an identity, the roots of every node klog makes, made now with its
 * ACL (zkacl.h): a tool without it that came first would make them open,
 * and a mark under an open /admin/delete_topics would delete a topic.
 * Kafka makes its persistent paths at start for the same reason.
 */
static int
make_roots(klog_zkbroker_t *zb, klog_err_t *err)
{
	static const char *const roots[] = {
		KLOG_LAYOUT_BROKER_IDS, KLOG_LAYOUT_BROKER_TOPICS,
		KLOG_LAYOUT_CONSUMERS, KLOG_RTOPICS_ROOT,
		KLOG_RTOPICS_DELETE_ROOT, KLOG_ZKKAFKA_BROKERS,
		KLOG_ZKACL_USERS,
	};
	int rc;

	if (zb->cfg.auth == NULL) {
		zlog(zb, KLOG_LEVEL_WARN, "zookeeper: no digest identity "
		    "(--zk-auth-file): the nodes klog creates are "
		    "world-writable; anyone who reaches ZooKeeper can change "
		    "leaders, ISRs and topics");
		return 0;
	}
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		if ((rc = klog_zk_mkdirs(zb->zk, roots[i], err)) < 0)
			return rc;
		/* Made before there was an identity: it keeps its ACL. */
		if (strcmp(roots[i], KLOG_LAYOUT_CONSUMERS) != 0 &&
		    klog_zk_world_writable(zb->zk, roots[i], NULL) == 1)
			zlog(zb, KLOG_LEVEL_WARN, "zookeeper: %s was made "
			    "without a digest identity and anyone may still "
			    "change it: set its ACL, and its children's "
			    "(klog-security(7))", roots[i]);
	}
	return 0;
}

/* The Kafka listener's registration and cluster hooks, when it has one. */
static int
open_kafka(klog_zkbroker_t *zb, klog_err_t *err)
{
	klog_kafka_t *kafka = klog_broker_kafka(zb->b);
	klog_zkkafka_config_t kc = {
		.broker_id = zb->cfg.broker_id,
		.host = klog_broker_kafka_host(zb->b),
		.port = klog_broker_kafka_advertised_port(zb->b),
		.default_partitions = klog_broker_default_partitions(zb->b),
		.log = { zb->cfg.log, zb->cfg.log_arg, zb->cfg.log_level },
	};
	int rc;

	if (kafka == NULL)
		return 0;
	if ((rc = klog_zkkafka_new(zb->zk, kafka, &kc, &zb->kafka)) < 0)
		return klog_err_set(err, rc, "out of memory");
	return klog_zkkafka_register(zb->kafka, klog_zk_session_ms(zb->zk) +
	    ZOMBIE_SLACK_MS, err);
}

/* SASL listeners without a users file: the users in ZooKeeper. */
static int
open_logins(klog_zkbroker_t *zb, klog_err_t *err)
{
	klog_logins_t *l = klog_broker_logins(zb->b);
	klog_logger_t log = { zb->cfg.log, zb->cfg.log_arg,
	    zb->cfg.log_level };
	klog_err_t why = { 0 };
	int rc;

	if (l == NULL || klog_logins_from_file(l))
		return 0;
	/* why, not err: err->msg cannot be formatted into itself. */
	if ((rc = klog_zklogins_new(zb->zk, l, log, &zb->logins, &why)) < 0)
		return klog_err_set(err, rc, "users in ZooKeeper: %s",
		    klog_err_text(&why, rc));
	zlog(zb, KLOG_LEVEL_INFO, "users: %zu credentials from ZooKeeper",
	    klog_logins_count(l));
	return 0;
}

/* An authorizer without a file: the ACLs in ZooKeeper (--zk-acls). */
static int
open_acls(klog_zkbroker_t *zb, klog_err_t *err)
{
	klog_authz_t *a = klog_broker_authz(zb->b);
	klog_logger_t log = { zb->cfg.log, zb->cfg.log_arg,
	    zb->cfg.log_level };
	klog_err_t why = { 0 };
	int rc;

	if (a == NULL || klog_authz_has_file(a))
		return 0;
	/* why, not err: err->msg cannot be formatted into itself. */
	if ((rc = klog_zkauthz_new(zb->zk, a, log, &zb->acls, &why)) < 0)
		return klog_err_set(err, rc, "ACLs in ZooKeeper: %s",
		    klog_err_text(&why, rc));
	return 0;
}

int
klog_zkbroker_open(klog_broker_t *b, const klog_zkbroker_config_t *cfg,
    klog_zkbroker_t **out, klog_err_t *err)
{
	klog_zkbroker_t *zb;
	int rc;

	*out = NULL;
	if ((zb = calloc(1, sizeof(*zb))) == NULL ||
	    (zb->connect = strdup(cfg->connect)) == NULL) {
		free(zb);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	zb->cfg = *cfg;
	zb->cfg.connect = zb->connect;
	if (zb->cfg.replica_lag_ms <= 0)
		zb->cfg.replica_lag_ms = KLOG_ZKBROKER_DEFAULT_LAG_MS;
	zb->b = b;
	zb->loop = klog_broker_loop(b);
	klog_timer_init(&zb->retry, on_retry, zb);
	if ((rc = klog_zk_open_auth(cfg->connect, cfg->auth, cfg->session_ms,
	    cfg->connect_ms, &zb->zk, err)) < 0 ||
	    (rc = make_roots(zb, err)) < 0)
		goto fail;
	zb->cfg.auth = NULL;  /* the caller's; the session has a copy */
	/* Our own node from a crash moments ago lasts a session timeout. */
	if ((rc = register_broker(zb, klog_zk_session_ms(zb->zk) +
	    ZOMBIE_SLACK_MS, err)) < 0)
		goto fail;
	if ((rc = open_repl(zb, err)) < 0 || (rc = open_kafka(zb, err)) < 0 ||
	    (rc = open_logins(zb, err)) < 0 || (rc = open_acls(zb, err)) < 0)
		goto fail;
	/* A topic that fails here is retried like any other. */
	(void)klog_broker_topics(b, topic_one, zb);
	klog_zkrepl_sync(zb->repl);
	if ((rc = klog_loop_watch(zb->loop, klog_zk_event_fd(zb->zk),
	    KLOG_LOOP_READABLE, on_readable, zb)) < 0) {
		rc = klog_err_set(err, rc, "zookeeper: watching the session: "
		    "%s", klog_strerror(rc));
		goto fail;
	}
	zb->watching = 1;
	zb->connected = 1;
	klog_broker_set_metrics(b, zk_metrics, zb);
	zlog(zb, KLOG_LEVEL_INFO, "zookeeper %s: registered as broker %d at "
	    "%s:%d", cfg->connect, (int)cfg->broker_id,
	    klog_broker_advertised_host(b), klog_broker_advertised_port(b));
	*out = zb;
	return 0;
fail:
	klog_zkbroker_close(zb);
	return rc;
}

void
klog_zkbroker_close(klog_zkbroker_t *zb)
{
	if (zb == NULL)
		return;
	klog_broker_set_metrics(zb->b, NULL, NULL);
	klog_loop_timer_stop(zb->loop, &zb->retry);
	if (zb->repl != NULL) {
		klog_core_set_create_check(klog_broker_core(zb->b), NULL, NULL);
		klog_core_set_storage_hook(klog_broker_core(zb->b), NULL, NULL);
		klog_core_set_producer_block(klog_broker_core(zb->b), NULL,
		    NULL);
		klog_core_set_replication(klog_broker_core(zb->b),
		    zb->cfg.replica_lag_ms, NULL, NULL, NULL, NULL);
	}
	klog_zkkafka_free(zb->kafka);
	klog_zklogins_free(zb->logins);
	klog_zkauthz_free(zb->acls);
	klog_zkrepl_free(zb->repl);
	klog_fetcher_free(zb->fetcher);
	if (zb->watching)
		klog_loop_watch(zb->loop, klog_zk_event_fd(zb->zk), 0, NULL,
		    NULL);
	klog_zk_close(zb->zk);
	klog_zkpids_free(zb->pids);
	free(zb->connect);
	free(zb);
}
