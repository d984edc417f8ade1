/*
 * klog-serve: the broker.  Options come from the command line and an
 * optional config file (key = value, the long option names; the command
 * line wins); everything else is lib/broker/broker.c.  See klog-serve(1).
 */
#include <sys/resource.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "klog/auth/authz.h"
#include "klog/auth/sasl.h"
#include "klog/base/config.h"
#include "klog/base/exit.h"
#include "klog/base/parse.h"
#include "klog/broker/broker.h"
#include "klog/cluster/zkbroker.h"
#include "klog/kafka/kafka.h"
#include "klog/net/tls.h"
#include "klog/storage/log.h"
#include "klog/zk/zk.h"
#include "klog/zk/zkacl.h"
#include "serve/usage.h"

#define PROG "klog-serve"
#define MAX_PARTITIONS 1024
#define DAY_MS (24 * 3600 * 1000LL)
#define ZK_CONNECT_MS 30000

enum {
	OPT_ACLS = 256,
	OPT_ADVERTISE,
	OPT_ALLOW_EVERYONE,
	OPT_BROKER_ID,
	OPT_CLEANUP,
	OPT_COLD_READ_RATE,
	OPT_CRC_THREADS,
	OPT_FLUSH_MESSAGES,
	OPT_FLUSH_MS,
	OPT_IDLE_TIMEOUT,
	OPT_MAX_CONNECTIONS,
	OPT_MAX_PER_ADDRESS,
	OPT_MAX_PENDING,
	OPT_REQUEST_TIMEOUT,
	OPT_MAX_MESSAGE,
	OPT_KAFKA_ADVERTISE,
	OPT_KAFKA_LISTEN,
	OPT_LOG_TIMESTAMP_TYPE,
	OPT_MAX_OPEN_SEGMENTS,
	OPT_MAX_REQUEST,
	OPT_METRICS_LISTEN,
	OPT_NO_AUTO_CREATE,
	OPT_PARTITIONS,
	OPT_REPLICA_LAG,
	OPT_REPLICA_PRINCIPAL,
	OPT_RETENTION_BYTES,
	OPT_RETENTION_HOURS,
	OPT_SASL_MECHANISMS,
	OPT_SEGMENT_BYTES,
	OPT_SSL_CA,
	OPT_SSL_CERT,
	OPT_SSL_CLIENT_AUTH,
	OPT_SSL_KEY,
	OPT_SUPER_USERS,
	OPT_TOPIC,
	OPT_UNCLEAN,
	OPT_USERS,
	OPT_VERSION,
	OPT_ZK_ACLS,
	OPT_ZK_AUTH,
	OPT_ZK_CONNECT,
	OPT_ZK_SESSION,
	OPT_END
};

static const char optstring[] = ":c:d:hl:qvZ:";
static const struct option longopts[] = {
	{ "acls", required_argument, NULL, OPT_ACLS },
	{ "advertise", required_argument, NULL, OPT_ADVERTISE },
	{ "allow-everyone-if-no-acl-found", no_argument, NULL,
	    OPT_ALLOW_EVERYONE },
	{ "broker-id", required_argument, NULL, OPT_BROKER_ID },
	{ "cleanup-interval", required_argument, NULL, OPT_CLEANUP },
	{ "cold-read-rate", required_argument, NULL, OPT_COLD_READ_RATE },
	{ "config", required_argument, NULL, 'c' },
	{ "crc-threads", required_argument, NULL, OPT_CRC_THREADS },
	{ "data-dir", required_argument, NULL, 'd' },
	{ "flush-messages", required_argument, NULL, OPT_FLUSH_MESSAGES },
	{ "flush-ms", required_argument, NULL, OPT_FLUSH_MS },
	{ "help", no_argument, NULL, 'h' },
	{ "kafka-advertise", required_argument, NULL, OPT_KAFKA_ADVERTISE },
	{ "kafka-listen", required_argument, NULL, OPT_KAFKA_LISTEN },
	{ "listen", required_argument, NULL, 'l' },
	{ "log-message-timestamp-type", required_argument, NULL,
	    OPT_LOG_TIMESTAMP_TYPE },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
	{ "max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS },
	{ "max-connections-per-address", required_argument, NULL,
	    OPT_MAX_PER_ADDRESS },
	{ "max-pending-bytes", required_argument, NULL, OPT_MAX_PENDING },
	{ "max-message-bytes", required_argument, NULL, OPT_MAX_MESSAGE },
	{ "max-open-segments", required_argument, NULL, OPT_MAX_OPEN_SEGMENTS },
	{ "max-request-bytes", required_argument, NULL, OPT_MAX_REQUEST },
	{ "metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN },
	{ "no-auto-create", no_argument, NULL, OPT_NO_AUTO_CREATE },
	{ "partitions", required_argument, NULL, OPT_PARTITIONS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "replica-lag-time", required_argument, NULL, OPT_REPLICA_LAG },
	{ "replica-principal", required_argument, NULL,
	    OPT_REPLICA_PRINCIPAL },
	{ "request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT },
	{ "retention-bytes", required_argument, NULL, OPT_RETENTION_BYTES },
	{ "retention-hours", required_argument, NULL, OPT_RETENTION_HOURS },
	{ "sasl-mechanisms", required_argument, NULL, OPT_SASL_MECHANISMS },
	{ "segment-bytes", required_argument, NULL, OPT_SEGMENT_BYTES },
	{ "ssl-ca", required_argument, NULL, OPT_SSL_CA },
	{ "ssl-cert", required_argument, NULL, OPT_SSL_CERT },
	{ "ssl-client-auth", required_argument, NULL, OPT_SSL_CLIENT_AUTH },
	{ "ssl-key", required_argument, NULL, OPT_SSL_KEY },
	{ "super-users", required_argument, NULL, OPT_SUPER_USERS },
	{ "topic", required_argument, NULL, OPT_TOPIC },
	{ "unclean-leader-election", no_argument, NULL, OPT_UNCLEAN },
	{ "users", required_argument, NULL, OPT_USERS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "zk-acls", no_argument, NULL, OPT_ZK_ACLS },
	{ "zk-auth-file", required_argument, NULL, OPT_ZK_AUTH },
	{ "zk-connect-timeout", required_argument, NULL, OPT_ZK_CONNECT },
	{ "zk-session-timeout", required_argument, NULL, OPT_ZK_SESSION },
	{ "zookeeper", required_argument, NULL, 'Z' },
	{ NULL, 0, NULL, 0 }
};

struct topic_opt {
	char name[KLOG_TOPIC_MAX + 1];
	int partitions;             /* 0: --partitions */
};

typedef struct opts {
	klog_broker_config_t cfg;
	const char *config;
	char *advertise_host;
	char *kafka_advertise_host;
	struct topic_opt *topics;
	size_t ntopics;
	int quiet, verbose;
	int data_dir_given;         /* by either source */
	const char *zookeeper;      /* cluster mode, or NULL */
	const char *zk_auth_file;   /* ZooKeeper's digest identity, or NULL */
	int zk_session_ms, zk_connect_ms;
	int64_t replica_lag_ms;
	int unclean;
	unsigned char set[OPT_END]; /* given on the command line */
} opts_t;

static klog_broker_t *volatile broker;
static volatile sig_atomic_t stop_asked;


static int
is_off(const char *s)
{
	return strcmp(s, "off") == 0 || strcmp(s, "-1") == 0;
}

/* NAME or NAME:N, the name checked as the store will. */
static void
add_topic(opts_t *o, const char *what, const char *s)
{
	const char *colon = strrchr(s, ':');
	size_t n = colon != NULL ? (size_t)(colon - s) : strlen(s);
	struct topic_opt *t;
	const char *why;
	klog_err_t err;
	int64_t v;

	t = realloc(o->topics, (o->ntopics + 1) * sizeof(*t));
	if (t == NULL)
		cli_misuse("out of memory");
	o->topics = t;
	t = &o->topics[o->ntopics];
	if (n > KLOG_TOPIC_MAX)
		cli_misuse("%s %s: topic name too long", what, s);
	memcpy(t->name, s, n);
	t->name[n] = '\0';
	if (klog_topic_validate(t->name, &err) < 0)
		cli_misuse("%s %s: %s", what, s,
		    klog_err_text(&err, -KLOG_ETOPIC));
	t->partitions = 0;
	if (colon != NULL && klog_parse_i64(colon + 1, 1, MAX_PARTITIONS, &v,
	    &why) < 0)
		cli_misuse("%s %s: partitions: %s", what, s, why);
	if (colon != NULL)
		t->partitions = (int)v;
	o->ntopics++;
}

/* HOST[:PORT] into *hostp (replaced) and *portp (0 without a port). */
static void
advertise(const char *what, const char *s, char **hostp, const char **cfg_host,
    int *portp)
{
	char host[256], port[16];
	const char *why;

	if (klog_parse_hostport(s, "", "0", host, sizeof(host), port,
	    sizeof(port), &why) < 0 || host[0] == '\0')
		cli_misuse("%s %s: %s", what, s, host[0] ? why : "no host");
	free(*hostp);
	if ((*hostp = strdup(host)) == NULL)
		cli_misuse("out of memory");
	*cfg_host = *hostp;
	*portp = atoi(port);
}

/* A HOST[:PORT] option, checked now so a typo is a usage error. */
static void
check_hostport(const char *what, const char *s, const char *dflt_port)
{
	char host[256], port[16];
	const char *why;

	if (klog_parse_hostport(s, "127.0.0.1", dflt_port, host, sizeof(host),
	    port, sizeof(port), &why) < 0)
		cli_misuse("%s %s: %s", what, s, why);
}

/* A listener's address past its security protocol, which must be one
 * klog serves. */
static const char *
listen_addr(const char *what, const char *v)
{
	klog_err_t err = { 0 };
	const char *addr;
	int tls;

	if (klog_tls_scheme(v, &tls, &addr, &err) < 0)
		cli_misuse("%s %s", what, err.msg);
	return addr;
}

/* Where the data and the listener are, what is logged, which topics. */
static int
apply_basic(opts_t *o, int id, const char *v, const char *what, int b)
{
	switch (id) {
	case 'd':
		o->cfg.data_dir = v;
		o->data_dir_given = 1;
		return 1;
	case 'l':
		(void)listen_addr(what, v);
		o->cfg.listen = v;
		return 1;
	case 'q':
		o->quiet = b;
		return 1;
	case 'v':
		o->verbose = b;
		return 1;
	case OPT_TOPIC:
		add_topic(o, what, v);
		return 1;
	case OPT_PARTITIONS:
		o->cfg.default_partitions = (int)cli_number(what, v, 1,
		    MAX_PARTITIONS);
		return 1;
	case OPT_NO_AUTO_CREATE:
		o->cfg.auto_create = !b;
		return 1;
	default:
		return 0;
	}
}

/* The logs: segments, flushes, retention, reads from the disk. */
static int
apply_log(klog_broker_config_t *c, int id, const char *v, const char *what)
{
	switch (id) {
	case OPT_SEGMENT_BYTES:
		c->segment_bytes = cli_size(what, v, 1024, INT64_MAX / 2);
		return 1;
	case OPT_FLUSH_MESSAGES:
		c->flush_messages = cli_number(what, v, 0, INT32_MAX);
		return 1;
	case OPT_FLUSH_MS:
		c->flush_ms = cli_duration(what, v, 1, 0, DAY_MS);
		return 1;
	case OPT_RETENTION_BYTES:
		c->retention_bytes = is_off(v) ? -1 :
		    cli_size(what, v, 0, INT64_MAX);
		return 1;
	case OPT_RETENTION_HOURS:
		c->retention_ms = is_off(v) ? -1 :
		    cli_duration(what, v, 3600 * 1000, 0, 100000 * DAY_MS);
		return 1;
	case OPT_CLEANUP:
		c->cleanup_interval_ms = cli_duration(what, v, 1000, 100,
		    30 * DAY_MS);
		return 1;
	case OPT_MAX_OPEN_SEGMENTS:
		c->max_open_segments = (size_t)cli_number(what, v, 0, 1 << 20);
		return 1;
	case OPT_COLD_READ_RATE:
		/* At least 1M: the reader sleeps between 128 KiB reads,
		 * and shutdown waits for the 512 KiB it is reading (0.5 s
		 * at 1M). */
		c->cold_read_rate = is_off(v) || strcmp(v, "0") == 0 ? 0 :
		    (uint64_t)cli_size(what, v, 1 << 20, INT64_MAX);
		return 1;
	default:
		return 0;
	}
}

/* What clients may ask, and for how long; the CRC threads. */
static int
apply_limits(klog_broker_config_t *c, int id, const char *v,
    const char *what)
{
	switch (id) {
	case OPT_MAX_CONNECTIONS:
		c->max_connections = (int)cli_number(what, v, 1, 1000000);
		return 1;
	case OPT_MAX_PER_ADDRESS:
		c->max_per_address = (int)cli_number(what, v, 1, 1000000);
		return 1;
	case OPT_MAX_PENDING:
		c->max_pending_bytes = is_off(v) ? 0 :
		    (size_t)cli_size(what, v, 1 << 20, INT64_MAX / 2);
		return 1;
	case OPT_MAX_REQUEST:
		c->max_request_bytes = cli_size(what, v, 1024, INT32_MAX);
		return 1;
	case OPT_MAX_MESSAGE:
		c->max_message_bytes = cli_size(what, v, 1, 1 << 30);
		return 1;
	case OPT_LOG_TIMESTAMP_TYPE:
		if (strcmp(v, "CreateTime") != 0 &&
		    strcmp(v, "LogAppendTime") != 0)
			cli_misuse("%s must be CreateTime or LogAppendTime, "
			    "not \"%s\"", what, v);
		c->log_append_time = strcmp(v, "LogAppendTime") == 0;
		return 1;
	case OPT_IDLE_TIMEOUT:
		c->idle_timeout_ms = is_off(v) ? 0 :
		    cli_duration(what, v, 1, 1000, 30 * DAY_MS);
		return 1;
	case OPT_REQUEST_TIMEOUT:
		c->request_timeout_ms = is_off(v) ? 0 :
		    cli_duration(what, v, 1, 1000, DAY_MS);
		return 1;
	case OPT_CRC_THREADS:
		c->crc_threads = strcmp(v, "auto") == 0 ? -1 :
		    (int)cli_number(what, v, 0, 64);
		return 1;
	default:
		return 0;
	}
}

/* Who the broker is to others: its id and addresses, its other
 * listeners, ZooKeeper and replication. */
static int
apply_cluster(opts_t *o, int id, const char *v, const char *what, int b)
{
	klog_broker_config_t *c = &o->cfg;
	klog_err_t err = { 0 };

	switch (id) {
	case OPT_BROKER_ID:
		c->broker_id = (int32_t)cli_number(what, v, 0, INT32_MAX);
		return 1;
	case OPT_ADVERTISE:
		advertise(what, v, &o->advertise_host, &c->advertised_host,
		    &c->advertised_port);
		return 1;
	case OPT_KAFKA_ADVERTISE:
		advertise(what, v, &o->kafka_advertise_host,
		    &c->kafka_advertised_host, &c->kafka_advertised_port);
		return 1;
	case OPT_KAFKA_LISTEN:
		/* Checked when bound, as --listen is (port 0 picks one). */
		(void)listen_addr(what, v);
		c->kafka_listen = v;
		return 1;
	case OPT_METRICS_LISTEN:
		check_hostport(what, listen_addr(what, v), "9644");
		c->metrics_listen = v;
		return 1;
	case OPT_SSL_CERT:
		c->ssl_cert = v;
		return 1;
	case OPT_SSL_KEY:
		c->ssl_key = v;
		return 1;
	case OPT_SSL_CA:
		c->ssl_ca = v;
		return 1;
	case OPT_SSL_CLIENT_AUTH:
		if (klog_tls_client_auth_parse(v, &c->ssl_client_auth,
		    &err) < 0)
			cli_misuse("%s %s", what, err.msg);
		return 1;
	case OPT_USERS:
		c->users_file = v;
		return 1;
	case OPT_SASL_MECHANISMS:
		if (klog_sasl_mechs_parse(v, &c->sasl_mechs, &err) < 0)
			cli_misuse("%s %s", what, err.msg);
		return 1;
	case 'Z':
		o->zookeeper = v;
		return 1;
	case OPT_ZK_AUTH:
		o->zk_auth_file = v;
		return 1;
	case OPT_ZK_CONNECT:
		o->zk_connect_ms = (int)cli_duration(what, v, 1, 100, DAY_MS);
		return 1;
	case OPT_ZK_SESSION:
		o->zk_session_ms = (int)cli_duration(what, v, 1, 100, 3600000);
		return 1;
	case OPT_REPLICA_LAG:
		o->replica_lag_ms = cli_duration(what, v, 1, 100, DAY_MS);
		return 1;
	case OPT_UNCLEAN:
		o->unclean = b;
		return 1;
	default:
		return 0;
	}
}

/* Authorization: the ACL file and what goes with it. */
static int
apply_authz(opts_t *o, int id, const char *v, const char *what, int b)
{
	klog_broker_config_t *c = &o->cfg;
	klog_err_t err = { 0 };

	switch (id) {
	case OPT_ACLS:
		c->acl_file = v;
		return 1;
	case OPT_SUPER_USERS:
		c->super_users = v;
		return 1;
	case OPT_ALLOW_EVERYONE:
		c->allow_everyone_if_no_acl = b;
		return 1;
	case OPT_ZK_ACLS:
		c->acls_from_zk = b;
		return 1;
	case OPT_REPLICA_PRINCIPAL:
		if (klog_authz_replica_pattern_check(v, &err) < 0)
			cli_misuse("%s %s", what, err.msg);
		c->replica_principal = v;
		return 1;
	default:
		return 0;
	}
}

/*
 * Apply one option with its value (NULL for a flag given on the command
 * line).  what names it in messages: "--flush-ms" or "FILE:3: flush-ms".
 * Strings from a config file must outlive the broker: they are strdup'ed.
 */
static void
apply(opts_t *o, int id, const char *v, const char *what, int from_file)
{
	const char *why;
	int b = 1;

	if (v != NULL && (id == OPT_NO_AUTO_CREATE || id == OPT_UNCLEAN ||
	    id == OPT_ALLOW_EVERYONE || id == OPT_ZK_ACLS || id == 'q' ||
	    id == 'v') && klog_parse_bool(v, &b, &why) < 0)
		cli_misuse("%s %s: %s", what, v, why);
	if (from_file && (id == 'd' || id == 'l' || id == 'Z' ||
	    id == OPT_KAFKA_LISTEN || id == OPT_METRICS_LISTEN ||
	    id == OPT_SSL_CERT || id == OPT_SSL_KEY || id == OPT_SSL_CA ||
	    id == OPT_USERS || id == OPT_ZK_AUTH || id == OPT_ACLS ||
	    id == OPT_SUPER_USERS || id == OPT_REPLICA_PRINCIPAL) &&
	    (v = strdup(v)) == NULL)
		cli_misuse("out of memory");
	if (!apply_basic(o, id, v, what, b) && !apply_log(&o->cfg, id, v,
	    what) && !apply_limits(&o->cfg, id, v, what) &&
	    !apply_authz(o, id, v, what, b))
		apply_cluster(o, id, v, what, b);
}

static const struct option *
find_key(const char *key)
{
	char name[64];
	size_t i;

	for (i = 0; key[i] != '\0' && i < sizeof(name) - 1; i++)
		name[i] = key[i] == '_' ? '-' : key[i];
	name[i] = '\0';
	for (const struct option *lo = longopts; lo->name != NULL; lo++)
		if (strcmp(lo->name, name) == 0 && lo->val != 'c' &&
		    lo->val != 'h' && lo->val != OPT_VERSION)
			return lo;
	return NULL;
}

/* One setting of the config file (config.h): the command line wins,
 * except that topics from both are created. */
static int
config_setting(void *arg, int line, const char *key, const char *value,
    klog_err_t *err)
{
	opts_t *o = arg;
	const struct option *lo;
	char what[512];

	(void)err;
	if ((lo = find_key(key)) == NULL)
		cli_misuse("%s:%d: unknown key \"%s\"", o->config, line, key);
	if (lo->val != OPT_TOPIC && o->set[lo->val])
		return 0;
	snprintf(what, sizeof(what), "%s:%d: %s", o->config, line, key);
	apply(o, lo->val, value, what, 1);
	return 0;
}

static void
read_config(opts_t *o)
{
	klog_err_t err;
	int rc;

	if ((rc = klog_config_read(o->config, config_setting, o, &err)) < 0)
		cli_misuse("%s", klog_err_text(&err, rc));
}

static void
parse_args(opts_t *o, int argc, char **argv)
{
	char what[64];
	cli_seen_t seen = { { 0 } };
	int ch, li = -1;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, optstring, longopts, &li)) !=
	    -1) {
		/* --topic is a list: each one is created. */
		if (ch != OPT_TOPIC)
			cli_once(&seen, ch, longopts);
		switch (ch) {
		case 'c':
			o->config = optarg;
			break;
		case 'h':
			cli_help(serve_usage);
		case OPT_VERSION:
			cli_version();
		case ':':
		case '?':
			cli_option_error(ch, argv);
		default:
			if (li >= 0)
				snprintf(what, sizeof(what), "--%s",
				    longopts[li].name);
			else
				snprintf(what, sizeof(what), "-%c", ch);
			o->set[ch] = 1;
			apply(o, ch, optarg, what, 0);
			break;
		}
		li = -1;
	}
	if (optind < argc)
		cli_misuse("%s: unexpected argument", argv[optind]);
}

/* ---- running ---- */

static void
log_line(void *arg, int level, const char *msg)
{
	char line[1200];

	(void)arg;
	snprintf(line, sizeof(line), PROG ": %s: %s\n", klog_level_name(level),
	    msg);
	fputs(line, stderr);
}

static void
on_signal(int sig)
{
	klog_broker_t *b = broker;

	(void)sig;
	stop_asked = 1;
	if (b != NULL)
		klog_broker_stop(b);
}

/*
 * SA_RESETHAND: a second ^C ends the process at once.  SIGHUP (a closed
 * terminal) is a clean stop too, not a reload: re-reading only part of
 * the configuration would surprise more than a stop, and dying on it
 * would cost the next start a recovery of every partition.
 */
static void
catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A write past RLIMIT_FSIZE then fails with EFBIG, which the log
	 * undoes and reports as DISK_FULL, instead of ending the broker. */
	signal(SIGXFSZ, SIG_IGN);
}

/*
 * Room for max_connections clients, the segment cache and each partition's
 * active segment (MAX_PARTITIONS for a first few topics), as far as the
 * hard limit allows.
 */
static void
raise_nofile(const opts_t *o)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)o->cfg.max_connections +
	    (rlim_t)o->cfg.max_open_segments + MAX_PARTITIONS + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < want && !o->quiet)
		fprintf(stderr, PROG ": warn: only %llu descriptors allowed "
		    "of the %llu that --max-connections, --max-open-segments "
		    "and active segments may take\n",
		    (unsigned long long)rl.rlim_cur, (unsigned long long)want);
}

/* The broker's topic_created hook: arg is main's klog_zkbroker_t *. */
static int
on_topic(void *arg, const char *topic, int partitions)
{
	klog_zkbroker_t *zb = *(klog_zkbroker_t **)arg;

	if (zb != NULL)
		klog_zkbroker_topic(zb, topic, partitions);
	return 0;
}

static int
join_cluster(const opts_t *o, const char *auth, klog_broker_t *b,
    klog_zkbroker_t **zb, klog_err_t *err)
{
	klog_zkbroker_config_t zc = {
		.connect = o->zookeeper,
		.auth = auth,
		.session_ms = o->zk_session_ms,
		.connect_ms = o->zk_connect_ms,
		.broker_id = o->cfg.broker_id,
		.log = o->cfg.log,
		.log_arg = o->cfg.log_arg,
		.log_level = o->cfg.log_level,
		.replica_lag_ms = o->replica_lag_ms,
		.unclean_election = o->unclean,
	};

	return klog_zkbroker_open(b, &zc, zb, err);
}

static int
open_exit(int rc)
{
	switch (rc < 0 ? -rc : rc) {
	case KLOG_ECONN:
	case KLOG_EBUSY:
	case KLOG_EEXIST:
		return KLOG_EXIT_UNAVAILABLE;
	case KLOG_EINVAL:
	case KLOG_ETOPIC:
		return KLOG_EXIT_USAGE;
	default:
		return klog_exit_for(rc);
	}
}

/* What neither the command line nor the config file set: from the
 * environment, else the defaults. */
static void
env_defaults(opts_t *o)
{
	const char *env;

	if (!o->data_dir_given && (env = getenv("KLOG_DATA_DIR")) != NULL &&
	    *env != '\0')
		o->cfg.data_dir = env;
	if (o->zookeeper == NULL && (env = getenv("KLOG_ZOOKEEPER")) != NULL &&
	    *env != '\0')
		o->zookeeper = env;
	if (o->zookeeper != NULL && *o->zookeeper == '\0')
		o->zookeeper = NULL;
	if (o->zk_session_ms == 0)
		o->zk_session_ms = KLOG_ZK_DEFAULT_SESSION_MS;
	if (o->zk_connect_ms == 0)
		o->zk_connect_ms = ZK_CONNECT_MS;
	/* In a cluster, with an identity to read them, SASL users may live
	 * in ZooKeeper, as Kafka's do. */
	o->cfg.users_from_zk = o->zookeeper != NULL &&
	    o->zk_auth_file != NULL && o->cfg.users_file == NULL;
}

/* The options together, from both sources. */
static void
check_opts(const opts_t *o)
{
	if (o->quiet && o->verbose)
		cli_misuse("-q and -v cannot be used together");
	if (o->cfg.acl_file == NULL && !o->cfg.acls_from_zk &&
	    (o->cfg.super_users != NULL || o->cfg.allow_everyone_if_no_acl ||
	    o->cfg.replica_principal != NULL))
		cli_misuse("--super-users, --allow-everyone-if-no-acl-found "
		    "and --replica-principal need --acls or --zk-acls");
	if (o->cfg.acls_from_zk && o->cfg.acl_file != NULL)
		cli_misuse("--zk-acls and --acls cannot be used together");
	if (o->cfg.acls_from_zk && o->zookeeper == NULL)
		cli_misuse("--zk-acls needs -Z");
	/* Without an identity whoever reaches ZooKeeper could write them. */
	if (o->cfg.acls_from_zk && o->zk_auth_file == NULL)
		cli_misuse("--zk-acls needs --zk-auth-file: without an "
		    "identity anyone who reaches ZooKeeper could write the "
		    "ACLs");
	if (o->zk_auth_file != NULL && o->zookeeper == NULL)
		cli_misuse("--zk-auth-file needs -Z");
}

/* --zk-auth-file's credential into auth (wiped by the caller), before
 * anything is opened; 0 or the exit status after saying why. */
static int
read_zk_auth(const opts_t *o, char *auth, size_t size)
{
	klog_err_t err = { 0 };
	int rc;

	auth[0] = '\0';
	if (o->zk_auth_file == NULL)
		return 0;
	if ((rc = klog_zkacl_auth_load(o->zk_auth_file, auth, size,
	    &err)) < 0) {
		fprintf(stderr, PROG ": --zk-auth-file %s\n",
		    klog_err_text(&err, rc));
		return KLOG_EXIT_FAIL;
	}
	return 0;
}

/* --topic's topics, made at start; 0 or the exit status. */
static int
create_topics(const opts_t *o, klog_broker_t *b)
{
	klog_err_t err = { 0 };
	int rc;

	for (size_t i = 0; i < o->ntopics; i++) {
		rc = klog_broker_create_topic(b, o->topics[i].name,
		    o->topics[i].partitions ? o->topics[i].partitions :
		    o->cfg.default_partitions, &err);
		if (rc < 0) {
			fprintf(stderr, PROG ": topic \"%s\": %s\n",
			    o->topics[i].name, klog_err_text(&err, rc));
			return open_exit(rc);
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	opts_t o;
	klog_broker_t *b;
	static klog_zkbroker_t *zb;
	klog_err_t err = { 0 };
	char zk_auth[KLOG_ZKACL_AUTH_SIZE];
	int rc;

	cli_init(PROG);
	memset(&o, 0, sizeof(o));
	klog_broker_config_default(&o.cfg);
	parse_args(&o, argc, argv);
	if (o.config != NULL)
		read_config(&o);
	env_defaults(&o);
	check_opts(&o);
	if (o.zookeeper != NULL) {
		o.cfg.topic_created = on_topic;
		o.cfg.topic_arg = &zb;
	}
	o.cfg.log = log_line;
	o.cfg.log_level = o.quiet ? KLOG_LEVEL_WARN : o.verbose ?
	    KLOG_LEVEL_DEBUG : KLOG_LEVEL_INFO;
	if ((rc = read_zk_auth(&o, zk_auth, sizeof(zk_auth))) != 0)
		return rc;
	catch_signals();
	raise_nofile(&o);
	if ((rc = klog_broker_open(&o.cfg, &b, &err)) < 0) {
		explicit_bzero(zk_auth, sizeof(zk_auth));
		fprintf(stderr, PROG ": %s\n", klog_err_text(&err, rc));
		return open_exit(rc);
	}
	rc = o.zookeeper != NULL ? join_cluster(&o, o.zk_auth_file != NULL ?
	    zk_auth : NULL, b, &zb, &err) : 0;
	explicit_bzero(zk_auth, sizeof(zk_auth));
	if (rc < 0) {
		fprintf(stderr, PROG ": %s\n", klog_err_text(&err, rc));
		klog_broker_close(b, 1, NULL);
		return open_exit(rc);
	}
	if ((rc = create_topics(&o, b)) != 0) {
		klog_zkbroker_close(zb);
		klog_broker_close(b, 1, NULL);
		return rc;
	}
	broker = b;
	if (stop_asked)
		klog_broker_stop(b);
	rc = klog_broker_run(b);
	broker = NULL;
	/* Leave the cluster before the final flush, so clients move on. */
	klog_zkbroker_close(zb);
	zb = NULL;
	if (klog_broker_close(b, 1, &err) < 0) {
		fprintf(stderr, PROG ": closing: %s (no clean-shutdown "
		    "marker written)\n", klog_err_text(&err, -KLOG_EIO));
		return KLOG_EXIT_IOERR;
	}
	free(o.topics);
	free(o.advertise_host);
	free(o.kafka_advertise_host);
	return rc < 0 ? KLOG_EXIT_IOERR : KLOG_EXIT_OK;
}
