/*
 * The broker: a store, the core over it, and listeners whose connections
 * speak the klog protocol through its front end, all on one event loop.
 * This file wires them together and owns their lifetimes; what each does
 * is in core.c, conn.c, native.c, socket.c and retention.c.
 *
 *   conns (conn.c) --bytes--> front end (native.c) --decoded--> core (core.c)
 *        ^                         | encodes answers               | appends,
 *        +------ output queues ----+  (parked ones when ready) <---+ flushes
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/auth/authz.h"
#include "klog/broker/broker.h"
#include "klog/broker/indexer.h"
#include "klog/broker/logins.h"
#include "klog/broker/metrics.h"
#include "klog/broker/native.h"
#include "klog/broker/retention.h"
#include "klog/core/core.h"
#include "klog/core/offline.h"
#include "klog/kafka/kafka.h"
#include "klog/net/conn.h"
#include "klog/net/httpd.h"
#include "klog/net/prefetch.h"
#include "klog/net/socket.h"
#include "klog/net/tls.h"
#include "klog/proto/proto.h"
#include "klog/storage/store.h"

#define AUTO_CRC_THREADS 3
/* Scrapers at once: a handful of Prometheus servers, and curl.  Their
 * connections are a set of their own, so they never take a client's
 * place under --max-connections. */
#define METRICS_CONNECTIONS 16
#define TLS_RELOAD_MS 5000          /* how often the TLS files are looked at */
#define METRICS_DEFAULT_PORT "9644"  /* Redpanda's, whose habit this follows */

struct klog_broker {
	klog_broker_config_t cfg;
	klog_logger_t log;
	char *data_dir, *listen;
	klog_socket_addr_t addr;
	char adv_host[256];
	int lfd;                   /* bound, until the conns take it */
	klog_loop_t *loop;
	klog_store_t *store;
	klog_core_t *core;
	klog_prefetch_t *pf;
	klog_indexer_t *ix;        /* completes the logs' time indexes */
	klog_native_t *native;
	/* The Kafka listener, when configured: its address, its bound socket
	 * until the conns take it, and its front end. */
	char *kafka_listen;
	klog_socket_addr_t kaddr;
	char kadv_host[256];
	int kfd;
	klog_kafka_t *kafka;
	klog_conns_t *conns;
	klog_retention_t upkeep;
	int64_t progress_ms;       /* the last recovery progress line */
	/* The metrics listener, when configured: as the Kafka one's. */
	char *metrics_listen;
	klog_socket_addr_t maddr;
	int mfd;
	klog_httpd_t *httpd;
	klog_conns_t *mconns;
	klog_metrics_more_fn *more;
	void *more_arg;
	/* TLS: the context the listeners named SSL:// share, and which of
	 * them (native, Kafka, metrics) are. */
	klog_tls_t *tls;
	int tls_on[3];             /* each listener's KLOG_SEC_* bits */
	klog_logins_t *logins;     /* when a listener is SASL_* */
	klog_timer_t tls_reload;
	/* Authorization: the ACLs the fronts decide by, or NULL, and the
	 * timer that looks at their file. */
	klog_authz_t *authz;
	klog_timer_t authz_reload;
	/* A follower's side when the native listener is TLS: its fetches
	 * verify the leaders against --ssl-ca and present --ssl-cert. */
	klog_tls_t *tls_client;
	klog_client_sec_t peer_sec;
};

void
klog_broker_config_default(klog_broker_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->data_dir = KLOG_BROKER_DEFAULT_DATA_DIR;
	cfg->listen = KLOG_BROKER_DEFAULT_LISTEN;
	cfg->default_partitions = 1;
	cfg->auto_create = 1;
	cfg->segment_bytes = (int64_t)1 << 30;
	cfg->retention_ms = 168 * 3600 * 1000LL;
	cfg->retention_bytes = -1;
	cfg->cleanup_interval_ms = 5 * 60 * 1000;
	cfg->rescan_interval_ms = 5000;
	cfg->max_request_bytes = KLOG_DEFAULT_MAX_REQUEST;
	cfg->max_message_bytes = KLOG_BROKER_DEFAULT_MAX_MESSAGE;
	cfg->max_connections = 10000;
	cfg->max_pending_bytes = KLOG_BROKER_DEFAULT_PENDING;
	cfg->request_timeout_ms = KLOG_BROKER_DEFAULT_REQUEST_TIMEOUT_MS;
	cfg->idle_timeout_ms = KLOG_BROKER_DEFAULT_IDLE_MS;
	cfg->max_open_segments = KLOG_STORE_DEFAULT_OPEN_SEGMENTS;
	cfg->cold_read_rate = KLOG_BROKER_DEFAULT_COLD_READ_RATE;
	cfg->crc_threads = -1;
	cfg->conn_out_limit = (size_t)4 << 20;
	cfg->shutdown_ms = 5000;
	cfg->log_level = KLOG_LEVEL_INFO;
}

static int
check_config(const klog_broker_config_t *cfg, klog_err_t *err)
{
	if (cfg->max_request_bytes < KLOG_REQ_HEADER_SIZE ||
	    cfg->max_request_bytes > INT32_MAX)
		return klog_err_set(err, -KLOG_EINVAL, "max request size %lld: "
		    "not in [%d, %d]", (long long)cfg->max_request_bytes,
		    KLOG_REQ_HEADER_SIZE, INT32_MAX);
	if (cfg->max_connections < 1 || cfg->conn_out_limit < 1 ||
	    cfg->max_message_bytes < 0 || cfg->flush_messages < 0 ||
	    cfg->flush_ms < 0 || cfg->cleanup_interval_ms < 1 ||
	    cfg->rescan_interval_ms < 1 || cfg->shutdown_ms < 0)
		return klog_err_set(err, -KLOG_EINVAL, "invalid configuration");
	return 0;
}

/* The verifier's threads: cfg's, or one fewer than the CPUs this
 * process may run on (at most AUTO_CRC_THREADS), so that the loop and
 * they fill what the machine, or the container, gives. */
static int
crc_threads(const klog_broker_config_t *cfg)
{
	cpu_set_t set;
	int n;

	if (cfg->crc_threads >= 0)
		return cfg->crc_threads;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set) - 1;
	else
		n = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	return n < 0 ? 0 : n > AUTO_CRC_THREADS ? AUTO_CRC_THREADS : n;
}

/* Bind (not listen yet) and work out the host to advertise. */
static int
bind_listener(klog_broker_t *b, klog_err_t *err)
{
	char why[KLOG_SOCKET_ERR_LEN];
	int fd;

	if ((fd = klog_socket_bind(b->listen, KLOG_DEFAULT_PORT, &b->addr, why,
	    sizeof(why))) < 0)
		return klog_err_set(err, fd, "%s", why);
	b->lfd = fd;
	if (b->cfg.advertised_host != NULL)
		snprintf(b->adv_host, sizeof(b->adv_host), "%s",
		    b->cfg.advertised_host);
	else
		klog_socket_advertised(b->addr.host, b->adv_host,
		    sizeof(b->adv_host));
	return 0;
}

/* The Kafka listener's socket, bound (not listening yet). */
static int
bind_kafka(klog_broker_t *b, klog_err_t *err)
{
	char why[KLOG_SOCKET_ERR_LEN];
	int fd;

	if (b->kafka_listen == NULL)
		return 0;
	if ((fd = klog_socket_bind(b->kafka_listen, KLOG_KAFKA_DEFAULT_PORT,
	    &b->kaddr, why, sizeof(why))) < 0)
		return klog_err_set(err, fd, "Kafka listener: %s", why);
	b->kfd = fd;
	if (b->cfg.kafka_advertised_host != NULL)
		snprintf(b->kadv_host, sizeof(b->kadv_host), "%s",
		    b->cfg.kafka_advertised_host);
	else
		klog_socket_advertised(b->kaddr.host, b->kadv_host,
		    sizeof(b->kadv_host));
	return 0;
}

/* The metrics listener's socket, bound (not listening yet). */
static int
bind_metrics(klog_broker_t *b, klog_err_t *err)
{
	char why[KLOG_SOCKET_ERR_LEN];
	int fd;

	if (b->metrics_listen == NULL)
		return 0;
	if ((fd = klog_socket_bind(b->metrics_listen, METRICS_DEFAULT_PORT,
	    &b->maddr, why, sizeof(why))) < 0)
		return klog_err_set(err, fd, "metrics listener: %s", why);
	b->mfd = fd;
	return 0;
}

/* Recovery at start can take a while over many or large partitions: say
 * how far it has got, once a second. */
static void
store_progress(void *arg, const klog_store_progress_t *pr)
{
	klog_broker_t *b = arg;
	int64_t now = klog_loop_now_ms();

	if (!pr->recovering || (now - b->progress_ms < 1000 &&
	    pr->done < pr->total))
		return;
	b->progress_ms = now;
	klog_logger_say(&b->log, KLOG_LEVEL_INFO, "recovery: %zu of %zu "
	    "partitions (topic \"%s\" partition %d)", pr->done, pr->total,
	    pr->topic, pr->partition);
}

static int
open_store(klog_broker_t *b, klog_err_t *err)
{
	klog_store_config_t sc;
	int64_t cut;
	klog_log_t *log;
	int rc, n;

	klog_store_config_default(&sc);
	sc.data_dir = b->data_dir;
	sc.log.segment_bytes = b->cfg.segment_bytes;
	sc.max_open_segments = b->cfg.max_open_segments;
	sc.default_partitions = b->cfg.default_partitions;
	sc.auto_create = b->cfg.auto_create;
	sc.progress = store_progress;
	sc.progress_arg = b;
	b->progress_ms = klog_loop_now_ms();
	if ((rc = klog_store_open(&sc, &b->store, err)) < 0)
		return rc;
	if ((n = klog_store_recovered(b->store)) == 0)
		return 0;
	for (size_t i = 0; (log = klog_store_log(b->store, i)) != NULL; i++)
		if ((cut = klog_log_recovered_bytes(log)) > 0)
			klog_logger_say(&b->log, KLOG_LEVEL_WARN, "topic \"%s\" "
			    "partition %d: recovery truncated %lld bytes at "
			    "offset %lld, kept in %s (klog-dump --salvage)",
			    klog_log_topic(log), klog_log_partition(log),
			    (long long)cut, (long long)klog_log_end(log),
			    klog_log_salvage_path(log));
	klog_logger_say(&b->log, KLOG_LEVEL_WARN, "%s: %s: recovered %d "
	    "partition%s, %lld bytes truncated", b->data_dir,
	    klog_store_clean(b->store) ? "changed since the clean shutdown" :
	    "no clean-shutdown marker", n, n == 1 ? "" : "s",
	    (long long)klog_store_recovered_bytes(b->store));
	return 0;
}

static int
open_core(klog_broker_t *b, klog_err_t *err)
{
	klog_core_config_t cc = {
		.default_partitions = b->cfg.default_partitions,
		.auto_create = b->cfg.auto_create,
		.flush_messages = b->cfg.flush_messages,
		.flush_ms = b->cfg.flush_ms,
		.max_message_bytes = b->cfg.max_message_bytes,
		.log = b->log,
		.topic_created = b->cfg.topic_created,
		.topic_arg = b->cfg.topic_arg,
		.broker_id = b->cfg.broker_id,
	};

	klog_retention_config_t uc = {
		.retention_ms = b->cfg.retention_ms,
		.retention_bytes = b->cfg.retention_bytes,
		.cleanup_interval_ms = b->cfg.cleanup_interval_ms,
		.rescan_interval_ms = b->cfg.rescan_interval_ms,
		.log = b->log,
	};
	int rc;

	if ((rc = klog_core_new(b->loop, b->store, &cc, &b->core, err)) < 0)
		return rc;
	if ((rc = klog_retention_start(&b->upkeep, b->loop, b->store, &uc)) < 0)
		return klog_err_set(err, rc, "starting: %s", klog_strerror(rc));
	return 0;
}

static void
pf_notify(void *arg)
{
	klog_loop_wake(arg);
}

/* The front end and the connections, listening on the bound socket. */
static int
open_conns(klog_broker_t *b)
{
	klog_native_config_t nc = {
		.max_request_bytes = b->cfg.max_request_bytes,
		.broker_id = b->cfg.broker_id,
		.advertised_host = b->adv_host,
		.advertised_port = klog_broker_advertised_port(b),
		.crc_threads = crc_threads(&b->cfg),
		.authz = b->authz,
		.log = b->log,
	};
	klog_conns_config_t cc = {
		.max_connections = b->cfg.max_connections,
		/* One host may not take every slot: a tenth stays for the
		 * others. */
		.max_per_address = b->cfg.max_per_address > 0 ?
		    b->cfg.max_per_address : b->cfg.max_connections -
		    b->cfg.max_connections / 10,
		.out_limit = b->cfg.conn_out_limit,
		.pending_limit = b->cfg.max_pending_bytes,
		.request_timeout_ms = b->cfg.request_timeout_ms,
		.idle_ms = b->cfg.idle_timeout_ms,
		.log = b->log,
	};
	int rc, fd;

	if (b->tls_on[0] & KLOG_SEC_SASL) {
		nc.sasl = klog_logins_sasl(b->logins);
		nc.saslpool = klog_logins_pool(b->logins);
	}
	if ((rc = klog_prefetch_new(pf_notify, b->loop, b->cfg.cold_read_rate,
	    &b->pf)) < 0 || (rc = klog_native_new(b->core, &nc,
	    &b->native)) < 0 || (rc = klog_conns_new(b->loop, b->pf, &cc,
	    &b->conns)) < 0)
		return rc;
	fd = b->lfd;
	b->lfd = -1;
	return klog_conns_listen(b->conns, fd, klog_native_front(), b->native,
	    (b->tls_on[0] & KLOG_SEC_TLS) ? b->tls : NULL,
	    (b->tls_on[0] & KLOG_SEC_SASL) ? KLOG_CONN_SASL_OR_CERT :
	    KLOG_CONN_NO_SASL);
}

/* The Kafka front end, and its listener beside the native one. */
static int
open_kafka(klog_broker_t *b, klog_err_t *err)
{
	klog_kafka_config_t kc = {
		.data_dir = b->data_dir,
		.max_request_bytes = b->cfg.max_request_bytes,
		.max_message_bytes = b->cfg.max_message_bytes,
		.log_append_time = b->cfg.log_append_time,
		.broker_id = b->cfg.broker_id,
		.advertised_host = b->kadv_host,
		.advertised_port = klog_broker_kafka_advertised_port(b),
		.auto_create = b->cfg.auto_create,
		.default_partitions = b->cfg.default_partitions,
		.segment_bytes = b->cfg.segment_bytes,
		.retention_ms = b->cfg.retention_ms,
		.retention_bytes = b->cfg.retention_bytes,
		.authz = b->authz,
		.log = b->log,
	};
	int rc, fd;

	if (b->kafka_listen == NULL)
		return 0;
	if (b->tls_on[1] & KLOG_SEC_SASL) {
		kc.sasl = klog_logins_sasl(b->logins);
		kc.saslpool = klog_logins_pool(b->logins);
	}
	if ((rc = klog_kafka_new(b->loop, b->core, &kc, &b->kafka, err)) < 0)
		return rc;
	fd = b->kfd;
	b->kfd = -1;
	if ((rc = klog_conns_listen(b->conns, fd, klog_kafka_front(),
	    b->kafka, (b->tls_on[1] & KLOG_SEC_TLS) ? b->tls : NULL,
	    (b->tls_on[1] & KLOG_SEC_SASL) ? KLOG_CONN_SASL :
	    KLOG_CONN_NO_SASL)) < 0)
		return klog_err_set(err, rc, "Kafka listener: %s",
		    klog_strerror(rc));
	return 0;
}

static int
render_metrics(void *arg, klog_buf_t *out)
{
	klog_broker_t *b = arg;
	klog_metrics_src_t src = {
		.core = b->core,
		.conns = b->conns,
		.native = b->native,
		.kafka = b->kafka,
		.upkeep = &b->upkeep,
		.more = b->more,
		.more_arg = b->more_arg,
	};

	return klog_metrics_render(&src, out);
}

/* The scrape endpoint: an HTTP front end on a connection set of its
 * own, on the same loop. */
static int
open_metrics(klog_broker_t *b, klog_err_t *err)
{
	klog_httpd_config_t hc = { "/metrics",
	    "text/plain; version=0.0.4; charset=utf-8", render_metrics, b };
	klog_conns_config_t cc = { .max_connections = METRICS_CONNECTIONS,
	    .out_limit = (size_t)4 << 20, .log = b->log };
	int rc, fd;

	if (b->metrics_listen == NULL)
		return 0;
	if ((rc = klog_httpd_new(&hc, &b->httpd)) < 0 ||
	    (rc = klog_conns_new(b->loop, NULL, &cc, &b->mconns)) < 0)
		return klog_err_set(err, rc, "metrics listener: %s",
		    klog_strerror(rc));
	fd = b->mfd;
	b->mfd = -1;
	if ((rc = klog_conns_listen(b->mconns, fd, klog_httpd_front(),
	    b->httpd, (b->tls_on[2] & KLOG_SEC_TLS) ? b->tls : NULL, 0)) < 0)
		return klog_err_set(err, rc, "metrics listener: %s",
		    klog_strerror(rc));
	return 0;
}

static void
before_sleep(klog_loop_t *loop, void *arg)
{
	klog_broker_t *b = arg;

	(void)loop;
	klog_conns_before_sleep(b->conns);
	if (b->mconns != NULL)
		klog_conns_before_sleep(b->mconns);
	/* Cold reads slow down while there are appends to make durable,
	 * whatever the flush policy. */
	if (klog_core_before_sleep(b->core)) {
		klog_prefetch_writing(b->pf);
		klog_indexer_writing(b->ix);
	}
}

/* Flushes finished, or cold ranges read in. */
static void
on_wake(klog_loop_t *loop, void *arg)
{
	klog_broker_t *b = arg;

	(void)loop;
	klog_conns_on_wake(b->conns);
	klog_core_on_wake(b->core);
	klog_logins_drain(b->logins);
}

static int
copy_str(char **dst, const char *src, const char *dflt)
{
	return (*dst = strdup(src != NULL ? src : dflt)) == NULL ?
	    -KLOG_ENOMEM : 0;
}

static void
on_tls_reload(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_broker_t *b = arg;
	klog_err_t err = { 0 };
	int rc;

	(void)loop;
	(void)t;
	if ((rc = klog_tls_reload(b->tls, &err)) > 0)
		klog_logger_say(&b->log, KLOG_LEVEL_INFO, "TLS: certificate, "
		    "key or CA changed: new connections use them");
	else if (rc < 0)
		klog_logger_say(&b->log, KLOG_LEVEL_WARN, "TLS: %s (keeping "
		    "the files read before)", klog_err_text(&err, rc));
	/* The same files, read again for the fetches; its own failure
	 * was said just above. */
	if (b->tls_client != NULL)
		(void)klog_tls_reload(b->tls_client, NULL);
}

/* The fetches' side of the native listener's TLS: the same files. */
static int
open_tls_client(klog_broker_t *b, klog_err_t *err)
{
	klog_tls_client_config_t cc = { b->cfg.ssl_ca, b->cfg.ssl_cert,
	    b->cfg.ssl_key };
	int rc;

	if ((rc = klog_tls_client_new(&cc, &b->tls_client, err)) < 0)
		return rc;
	b->peer_sec = (klog_client_sec_t){ .tls = b->tls_client,
	    .verify_host = 1 };
	return 0;
}

/* SASL_* listeners: the users, and the mechanisms they may offer. */
static int
open_logins(klog_broker_t *b, klog_err_t *err)
{
	unsigned mechs = b->cfg.sasl_mechs != 0 ? b->cfg.sasl_mechs :
	    KLOG_SASL_DEFAULT_MECHS;
	int sasl = (b->tls_on[0] | b->tls_on[1]) & KLOG_SEC_SASL;

	if (!sasl)
		return 0;
	if (b->cfg.users_file == NULL && !b->cfg.users_from_zk)
		return klog_err_set(err, -KLOG_EINVAL, "a SASL_*:// listener "
		    "and no --users file to log users in from (or, with -Z, "
		    "--zk-auth-file for ZooKeeper's /config/users)");
	/* PLAIN sends the password itself: never in clear. */
	for (int i = 0; i < 2; i++)
		if ((mechs & KLOG_SASL_BIT(KLOG_SASL_PLAIN)) &&
		    b->tls_on[i] == KLOG_SEC_SASL)
			return klog_err_set(err, -KLOG_EINVAL, "a "
			    "SASL_PLAINTEXT:// listener: PLAIN would send "
			    "passwords in clear (use SASL_SSL://)");
	return klog_logins_open(b->loop, b->cfg.users_file, mechs, b->log,
	    &b->logins, err);
}

static void
on_authz_reload(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_broker_t *b = arg;

	(void)loop;
	(void)t;
	klog_authz_reload(b->authz);  /* logs what it took up, or refused */
}

/* The ACLs, when asked for: loaded now (a bad file fails the start), and
 * looked at again every second. */
static int
open_authz(klog_broker_t *b, klog_err_t *err)
{
	klog_authz_config_t ac = { b->cfg.acl_file, b->cfg.super_users,
	    b->cfg.allow_everyone_if_no_acl, b->cfg.replica_principal,
	    b->log };
	int rc;

	if (b->cfg.acl_file == NULL && !b->cfg.acls_from_zk)
		return 0;
	if ((rc = klog_authz_new(&ac, &b->authz, err)) < 0)
		return rc;
	if (b->cfg.acl_file == NULL)
		return 0;   /* no file to look at: zkauthz hands them over */
	klog_logger_say(&b->log, KLOG_LEVEL_INFO, "ACLs: %s: %zu ACLs in "
	    "force", b->cfg.acl_file, klog_acl_count(klog_authz_set(b->authz)));
	klog_timer_init(&b->authz_reload, on_authz_reload, b);
	return klog_loop_timer_start(b->loop, &b->authz_reload,
	    KLOG_AUTHZ_RELOAD_MS, KLOG_AUTHZ_RELOAD_MS);
}

/*
 * Take the security protocol off each listener's address (the address
 * strings become the bare ones) and, if one is TLS, the TLS context.
 */
static int
open_tls(klog_broker_t *b, klog_err_t *err)
{
	char **addrs[3] = { &b->listen, &b->kafka_listen, &b->metrics_listen };
	static const char *const names[3] = { "listener", "Kafka listener",
	    "metrics listener" };
	klog_tls_config_t tc = { b->cfg.ssl_cert, b->cfg.ssl_key,
	    b->cfg.ssl_ca, b->cfg.ssl_client_auth };
	const char *rest;
	char *bare;
	int rc, any = 0;

	for (int i = 0; i < 3; i++) {
		if (*addrs[i] == NULL)
			continue;
		if ((rc = klog_tls_scheme(*addrs[i], &b->tls_on[i], &rest,
		    NULL)) < 0)
			return klog_err_set(err, rc, "%s %s: not PLAINTEXT:// "
			    "or SSL://", names[i], *addrs[i]);
		if ((b->tls_on[i] & KLOG_SEC_SASL) && i == 2)
			return klog_err_set(err, -KLOG_EINVAL, "%s %s: not "
			    "http:// or https://", names[i], *addrs[i]);
		if ((bare = strdup(rest)) == NULL)
			return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		free(*addrs[i]);
		*addrs[i] = bare;
		any |= b->tls_on[i] & KLOG_SEC_TLS;
	}
	if ((rc = open_logins(b, err)) < 0 || !any)
		return rc;
	if ((rc = klog_tls_new(&tc, &b->tls, err)) < 0 ||
	    ((b->tls_on[0] & KLOG_SEC_TLS) &&
	    (rc = open_tls_client(b, err)) < 0))
		return rc;
	klog_timer_init(&b->tls_reload, on_tls_reload, b);
	return klog_loop_timer_start(b->loop, &b->tls_reload, TLS_RELOAD_MS,
	    TLS_RELOAD_MS);
}

int
klog_broker_open(const klog_broker_config_t *cfg, klog_broker_t **out,
    klog_err_t *err)
{
	klog_broker_t *b;
	char why[KLOG_SOCKET_ERR_LEN];
	int rc;

	*out = NULL;
	if ((rc = check_config(cfg, err)) < 0)
		return rc;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	b->cfg = *cfg;
	b->log = (klog_logger_t){ cfg->log, cfg->log_arg, cfg->log_level };
	b->lfd = -1;
	b->kfd = -1;
	b->mfd = -1;
	if ((cfg->kafka_listen != NULL &&
	    (b->kafka_listen = strdup(cfg->kafka_listen)) == NULL) ||
	    (cfg->metrics_listen != NULL &&
	    (b->metrics_listen = strdup(cfg->metrics_listen)) == NULL)) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto fail;
	}
	b->cfg.kafka_listen = b->kafka_listen;
	b->cfg.metrics_listen = b->metrics_listen;
	if ((rc = copy_str(&b->data_dir, cfg->data_dir,
	    KLOG_BROKER_DEFAULT_DATA_DIR)) < 0 ||
	    (rc = copy_str(&b->listen, cfg->listen,
	    KLOG_BROKER_DEFAULT_LISTEN)) < 0) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = klog_loop_create(&b->loop)) < 0) {
		rc = klog_err_set(err, rc, "event loop: %s", strerror(errno));
		goto fail;
	}
	if ((rc = open_tls(b, err)) < 0 || (rc = open_authz(b, err)) < 0)
		goto fail;
	b->cfg.data_dir = b->data_dir;
	b->cfg.listen = b->listen;
	b->cfg.kafka_listen = b->kafka_listen;
	b->cfg.metrics_listen = b->metrics_listen;
	/* Bind first, so a taken port fails before the data is touched;
	 * listen last, so connections are taken once the store is open. */
	if ((rc = bind_listener(b, err)) < 0 || (rc = bind_kafka(b, err)) < 0 ||
	    (rc = bind_metrics(b, err)) < 0 || (rc = open_store(b, err)) < 0)
		goto fail;
	if ((rc = klog_socket_listen(b->lfd, b->listen, why, sizeof(why))) < 0 ||
	    (b->kfd >= 0 && (rc = klog_socket_listen(b->kfd, b->kafka_listen, why,
	    sizeof(why))) < 0) ||
	    (b->mfd >= 0 && (rc = klog_socket_listen(b->mfd, b->metrics_listen,
	    why, sizeof(why))) < 0)) {
		rc = klog_err_set(err, rc, "%s", why);
		goto fail;
	}
	if ((rc = open_core(b, err)) < 0)
		goto fail;
	if ((rc = klog_indexer_new(&(klog_indexer_config_t){ b->store,
	    b->cfg.cold_read_rate, KLOG_INDEXER_PERIOD_MS, b->log },
	    &b->ix)) < 0 || (rc = open_conns(b)) < 0) {
		rc = klog_err_set(err, rc, "starting: %s", klog_strerror(rc));
		goto fail;
	}
	if ((rc = open_kafka(b, err)) < 0 || (rc = open_metrics(b, err)) < 0)
		goto fail;
	klog_loop_set_before_sleep(b->loop, before_sleep, b);
	klog_loop_set_wake(b->loop, on_wake, b);
	*out = b;
	return 0;
fail:
	klog_broker_close(b, 0, NULL);
	return rc;
}

int
klog_broker_create_topic(klog_broker_t *b, const char *topic, int partitions,
    klog_err_t *err)
{
	return klog_core_create_topic(b->core, topic, partitions, err);
}

int
klog_broker_port(const klog_broker_t *b)
{
	return b->addr.port;
}

const char *
klog_broker_advertised_host(const klog_broker_t *b)
{
	return b->adv_host;
}

int
klog_broker_advertised_port(const klog_broker_t *b)
{
	return b->cfg.advertised_port ? b->cfg.advertised_port : b->addr.port;
}

int
klog_broker_kafka_port(const klog_broker_t *b)
{
	return b->kafka != NULL ? b->kaddr.port : 0;
}

int
klog_broker_metrics_port(const klog_broker_t *b)
{
	return b->mconns != NULL ? b->maddr.port : 0;
}

void
klog_broker_set_metrics(klog_broker_t *b, klog_metrics_more_fn *fn, void *arg)
{
	b->more = fn;
	b->more_arg = arg;
}

klog_kafka_t *
klog_broker_kafka(klog_broker_t *b)
{
	return b->kafka;
}

const klog_client_sec_t *
klog_broker_peer_security(const klog_broker_t *b)
{
	return b->tls_client != NULL ? &b->peer_sec : NULL;
}

int
klog_broker_default_partitions(const klog_broker_t *b)
{
	return b->cfg.default_partitions;
}

const char *
klog_broker_kafka_host(const klog_broker_t *b)
{
	return b->kadv_host;
}

int
klog_broker_kafka_advertised_port(const klog_broker_t *b)
{
	return b->cfg.kafka_advertised_port > 0 ? b->cfg.kafka_advertised_port :
	    b->kaddr.port;
}

int
klog_broker_topics(klog_broker_t *b, klog_broker_topic_fn *fn, void *arg)
{
	return klog_core_topics(b->core, fn, arg);
}

klog_loop_t *
klog_broker_loop(klog_broker_t *b)
{
	return b->loop;
}

klog_authz_t *
klog_broker_authz(klog_broker_t *b)
{
	return b->authz;
}

klog_logins_t *
klog_broker_logins(klog_broker_t *b)
{
	return b->logins;
}

klog_core_t *
klog_broker_core(klog_broker_t *b)
{
	return b->core;
}

void
klog_broker_stop(klog_broker_t *b)
{
	klog_loop_stop(b->loop);
}

/*
 * Stop accepting and reading; answer long polls now (acks=all and OFFSETS
 * still wait for their flush, which is requested); write for up to
 * shutdown_ms; close whatever is left.
 */
static void
shutdown_conns(klog_broker_t *b)
{
	int64_t deadline = klog_loop_now_ms() + b->cfg.shutdown_ms, left;

	klog_core_stop(b->core);
	klog_conns_stop(b->conns);
	/* Scrapers are not waited for. */
	if (b->mconns != NULL)
		klog_conns_free(b->mconns, KLOG_LEVEL_DEBUG, "shutting down");
	b->mconns = NULL;
	while (klog_conns_count(b->conns) > 0 &&
	    (left = deadline - klog_loop_now_ms()) > 0)
		if (klog_loop_run_once(b->loop, (int)left) < 0)
			break;
	klog_conns_close_all(b->conns, KLOG_LEVEL_INFO,
	    "shutdown timeout: dropping unsent responses");
}

/* A listener's security protocol as its address names it. */
static const char *
scheme(int bits)
{
	static const char *const names[4] = { "", "SSL://",
	    "SASL_PLAINTEXT://", "SASL_SSL://" };

	return names[bits & (KLOG_SEC_TLS | KLOG_SEC_SASL)];
}

int
klog_broker_run(klog_broker_t *b)
{
	int rc;

	klog_logger_say(&b->log, KLOG_LEVEL_INFO, "listening on %s%s, data "
	    "in %s", scheme(b->tls_on[0]), b->addr.bound, b->data_dir);
	if (b->kafka != NULL)
		klog_logger_say(&b->log, KLOG_LEVEL_INFO, "Kafka listener on "
		    "%s%s", scheme(b->tls_on[1]), b->kaddr.bound);
	if (b->logins != NULL && b->cfg.users_file != NULL)
		klog_logger_say(&b->log, KLOG_LEVEL_INFO, "users: %s: %zu "
		    "credentials", b->cfg.users_file,
		    klog_logins_count(b->logins));
	if (b->mconns != NULL)
		klog_logger_say(&b->log, KLOG_LEVEL_INFO, "metrics on http%s://%s"
		    "/metrics", b->tls_on[2] ? "s" : "", b->maddr.bound);
	rc = klog_loop_run(b->loop);
	if (rc < 0)
		klog_logger_say(&b->log, KLOG_LEVEL_ERROR, "event loop: %s",
		    strerror(errno));
	klog_logger_say(&b->log, KLOG_LEVEL_INFO, "shutting down");
	shutdown_conns(b);
	return rc;
}

int
klog_broker_close(klog_broker_t *b, int clean, klog_err_t *err)
{
	int rc = 0, failed;

	if (b == NULL)
		return 0;
	failed = b->core != NULL && klog_core_storage_failed(b->core);
	/* First: it holds logs that the core and the store close. */
	klog_indexer_free(b->ix);
	/* Connections first: their parked requests belong to the core. */
	klog_conns_free(b->conns, KLOG_LEVEL_DEBUG, "broker closed");
	klog_conns_free(b->mconns, KLOG_LEVEL_DEBUG, "broker closed");
	klog_httpd_free(b->httpd);
	klog_kafka_free(b->kafka);
	klog_retention_stop(&b->upkeep);
	klog_core_free(b->core);
	klog_prefetch_free(b->pf);
	klog_native_free(b->native);
	/* After a failed sync no marker: a later sync's success proves
	 * nothing (log.h), and only recovery finds each log's valid end. */
	if (b->store != NULL)
		rc = klog_store_close(b->store, clean && !failed, err);
	if (rc == 0 && clean && failed)
		rc = klog_err_set(err, -KLOG_ESTORAGE, "a sync failed since the "
		    "start, so the next start recovers every partition");
	else if (rc == 0 && clean && b->store != NULL)
		klog_logger_say(&b->log, KLOG_LEVEL_INFO, "clean shutdown");
	if (b->lfd >= 0)
		close(b->lfd);
	if (b->kfd >= 0)
		close(b->kfd);
	if (b->mfd >= 0)
		close(b->mfd);
	free(b->kafka_listen);
	free(b->metrics_listen);
	if (b->tls != NULL)
		klog_loop_timer_stop(b->loop, &b->tls_reload);
	/* After the connections: each holds a reference to its context. */
	klog_tls_free(b->tls);
	klog_tls_free(b->tls_client);
	/* After the connections too: a login being checked is cancelled
	 * with its connection's session. */
	klog_logins_free(b->logins);
	if (b->authz != NULL)
		klog_loop_timer_stop(b->loop, &b->authz_reload);
	/* After the fronts, which decide by it. */
	klog_authz_free(b->authz);
	klog_loop_free(b->loop);
	free(b->listen);
	free(b->data_dir);
	free(b);
	return rc;
}
