/*
 * The broker: a store of partition logs served over the klog wire protocol
 * (proto.h) by one event-loop thread, with fsync on a flusher thread.
 *
 *   clients --TCP--> loop thread: read, decode, append, answer --sendfile-->
 *                        |  ^ eventfd: "flushed"
 *                        v  |
 *                    flusher thread: klog_log_flush() (fsync), group commit
 *
 * Consumers see only flushed data (the paper).  Flushing is eager by default:
 * whenever a log has unflushed data the flusher syncs it, one fsync covering
 * everything appended meanwhile.  flush_messages / flush_ms turn that into
 * Kafka 0.7's batching: flush a log once that many messages are unflushed or
 * that long after its last flush.  Whatever the policy, a request that needs
 * the visible end of a log which has unflushed data (a FETCH at or past the
 * flushed end, an OFFSETS other than "earliest", a PRODUCE with acks=all)
 * asks for a flush and is answered when it completes, so a record that was
 * acknowledged before a consumer asks is always visible to it, at the cost
 * of waiting for one fsync at most.
 *
 * Requests are handled as they arrive (appends happen in order at once);
 * responses go out in request order, later ones queueing behind one still
 * pending (acks=all until flushed, a long-poll fetch until data or timeout).
 *
 * The broker is assembled here from its parts: core.h (topics, staged
 * appends, the flusher, parked requests), conn.h (connections and
 * listeners), native.h (the klog protocol's front end) and socket.h (binding).
 *
 * The library never prints: it reports through cfg->log.  The process must
 * ignore SIGPIPE (sendfile(2) cannot be told not to raise it), and SIGXFSZ
 * so that a file size limit fails an append (DISK_FULL) rather than the
 * process.
 */
#ifndef KLOG_BROKER_H
#define KLOG_BROKER_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/base/logger.h"
#include "klog/broker/logins.h"
#include "klog/broker/metrics.h"
#include "klog/client/client.h"
#include "klog/core/core.h"
#include "klog/kafka/kafka.h"
#include "klog/net/loop.h"

typedef struct klog_broker klog_broker_t;

/* One log line, without a newline; called on the loop thread (or the
 * opening/closing thread). */
typedef klog_logger_fn klog_broker_log_fn;

/*
 * Called on the loop thread after a topic is created (auto-created by a
 * produce or created by klog_broker_create_topic()), with its partition
 * count; the place for a cluster to register it.  A negative return is
 * logged and otherwise ignored: the topic exists locally either way.
 */
typedef klog_core_topic_fn klog_broker_topic_fn;

typedef struct klog_broker_config {
	const char *data_dir;          /* default "./klog-data" */
	const char *listen;            /* "HOST:PORT"; port 0 picks one */
	const char *advertised_host;   /* NULL: the listen host, or the host
	                                  name when listening on a wildcard */
	int advertised_port;           /* 0: the bound port */
	const char *kafka_listen;      /* "HOST:PORT" of the Kafka listener
	                                  (kafka.h); NULL: none */
	const char *kafka_advertised_host; /* as advertised_host, for it */
	int kafka_advertised_port;
	const char *metrics_listen;    /* "HOST:PORT" answering GET /metrics
	                                  (Prometheus, metrics.h); NULL: none */
	/* Each of the three addresses may start with its security protocol
	 * (tls.h): "SSL://" ("https://" for metrics) listens over TLS with
	 * these files, taken up again when they change. */
	const char *ssl_cert, *ssl_key, *ssl_ca;
	int ssl_client_auth;           /* enum klog_tls_client_auth */
	/* "SASL_SSL://" and "SASL_PLAINTEXT://" listeners log users in
	 * from this file (logins.h) with these mechanisms (sasl.h bits; 0:
	 * the default, the two SCRAMs). */
	const char *users_file;
	int users_from_zk;             /* no file: a cluster's users come
	                                  from ZooKeeper (zklogins.h) */
	unsigned sasl_mechs;
	/* Authorization (authz.h): with acl_file, every listener decides
	 * each request by its ACLs, taken up again when the file changes;
	 * NULL: everyone may do everything. */
	const char *acl_file;
	/* Or, in a cluster, the ACLs the ZooKeeper side hands over
	 * (klog_broker_authz(), cluster/zkauthz.h): none until then. */
	int acls_from_zk;
	const char *super_users;       /* "User:a;User:b" */
	int allow_everyone_if_no_acl;
	const char *replica_principal; /* NULL: "User:CN=broker-{id}" */
	int32_t broker_id;             /* reported by METADATA */
	int default_partitions;        /* for auto-created topics */
	int auto_create;               /* produce creates unknown topics */
	int64_t segment_bytes;         /* roll segments past this */
	int64_t flush_messages;        /* 0: no count trigger */
	int64_t flush_ms;              /* 0: no time trigger; both 0: eager */
	int64_t retention_ms;          /* by segment age; -1 off */
	int64_t retention_bytes;       /* per partition; -1 off */
	int64_t cleanup_interval_ms;   /* the retention cleaner's period */
	int64_t rescan_interval_ms;    /* notice segments removed by others */
	int64_t max_request_bytes;     /* a frame over this closes the link */
	int64_t max_message_bytes;     /* per top-level message payload */
	int log_append_time;           /* the Kafka listener stamps batches
	                                  with its clock (LogAppendTime) */
	int max_connections;           /* refuse more */
	int max_per_address;           /* refuse more from one address; 0:
	                                  max_connections less a tenth */
	size_t max_pending_bytes;      /* of requests not yet whole, over all
	                                  connections; 0: no bound */
	int64_t request_timeout_ms;    /* a request not whole this long after
	                                  its last byte; 0: never */
	int64_t idle_timeout_ms;       /* a client that asks and is owed
	                                  nothing this long; 0: never */
	size_t max_open_segments;      /* older segments kept open for reads
	                                  (each partition's active one is
	                                  always open); 0: no bound */
	uint64_t cold_read_rate;       /* bytes a second read from the disk
	                                  for consumers behind the page cache
	                                  while producers write (prefetch.h);
	                                  0: no cap */
	int crc_threads;               /* threads besides the loop checking
	                                  the CRCs of the produce requests of
	                                  one read together (crcpool.h); -1:
	                                  one fewer than the CPUs it may run
	                                  on, at most 3; 0: the loop alone */
	size_t conn_out_limit;         /* stop reading a client whose unsent
	                                  responses pass this many bytes */
	int64_t shutdown_ms;           /* time to write pending responses */
	int log_level;                 /* lines above it are not formatted */
	klog_broker_log_fn *log;       /* NULL: silent */
	void *log_arg;
	klog_broker_topic_fn *topic_created;
	void *topic_arg;
} klog_broker_config_t;

#define KLOG_BROKER_DEFAULT_LISTEN "127.0.0.1:9092"
#define KLOG_BROKER_DEFAULT_DATA_DIR "./klog-data"
#define KLOG_BROKER_MAX_FETCH_BYTES KLOG_CORE_MAX_FETCH_BYTES
#define KLOG_BROKER_DEFAULT_MAX_MESSAGE 1000000
#define KLOG_BROKER_DEFAULT_PENDING ((size_t)256 << 20)
#define KLOG_BROKER_DEFAULT_REQUEST_TIMEOUT_MS 30000
#define KLOG_BROKER_DEFAULT_IDLE_MS 600000     /* Kafka's
                                                  connections.max.idle.ms */
#define KLOG_BROKER_DEFAULT_COLD_READ_RATE ((uint64_t)32 << 20)

void klog_broker_config_default(klog_broker_config_t *cfg);

/*
 * Bind the listening socket (-KLOG_ECONN if it cannot: address in use...),
 * open the store (-KLOG_EBUSY if another broker holds the data directory,
 * -KLOG_ECORRUPT for a gap between segments, -KLOG_EIO...) recovering it
 * after an unclean shutdown (logged per partition), and start the flusher
 * thread.  cfg's strings are copied.  On success *out is the caller's:
 * klog_broker_close().
 */
int klog_broker_open(const klog_broker_config_t *cfg, klog_broker_t **out,
    klog_err_t *err);

/* Create a topic with the given partitions, or grow it; calls
 * topic_created.  Before klog_broker_run() or on its thread. */
int klog_broker_create_topic(klog_broker_t *b, const char *topic,
    int partitions, klog_err_t *err);

/* The bound port (useful with port 0), and the host METADATA reports. */
int klog_broker_port(const klog_broker_t *b);
const char *klog_broker_advertised_host(const klog_broker_t *b);
/* The port METADATA reports (advertised_port, or the bound one). */
int klog_broker_advertised_port(const klog_broker_t *b);
/* The Kafka listener's bound port, 0 without one; its front end (NULL
 * without one), and the host and port its metadata reports. */
int klog_broker_kafka_port(const klog_broker_t *b);
klog_kafka_t *klog_broker_kafka(klog_broker_t *b);
/* The metrics listener's bound port, 0 without one. */
int klog_broker_metrics_port(const klog_broker_t *b);
/* Families a layer above adds to each scrape (the ZooKeeper session's
 * state); on the loop thread or before run.  fn NULL removes them. */
void klog_broker_set_metrics(klog_broker_t *b, klog_metrics_more_fn *fn,
    void *arg);
/* How this broker reaches other brokers' native listeners (a follower's
 * fetches): TLS with its own --ssl-cert and --ssl-key as client
 * certificate, the leader's checked against --ssl-ca and its host, when
 * its own native listener is SSL://; NULL (plaintext) otherwise.  Valid
 * until the broker is freed. */
const klog_client_sec_t *klog_broker_peer_security(const klog_broker_t *b);
/* Partitions of an auto-created topic. */
int klog_broker_default_partitions(const klog_broker_t *b);
const char *klog_broker_kafka_host(const klog_broker_t *b);
int klog_broker_kafka_advertised_port(const klog_broker_t *b);

/*
 * Call fn for every topic of the store, in name order, with its partition
 * count; a negative return stops and is returned.  Before
 * klog_broker_run() or on its thread.
 */
int klog_broker_topics(klog_broker_t *b, klog_broker_topic_fn *fn,
    void *arg);

/*
 * The broker's event loop, for a caller's own file events and timers (a
 * ZooKeeper session's event fd): they run on the loop thread, between
 * requests.  Owned by b; watches must be removed before klog_broker_close().
 */
klog_loop_t *klog_broker_loop(klog_broker_t *b);

/* Its core, for the cluster layer's replicated partitions (replicated.h). */
klog_core_t *klog_broker_core(klog_broker_t *b);

/* The SASL logins of its SASL_* listeners, or NULL without one. */
klog_logins_t *klog_broker_logins(klog_broker_t *b);

/* The authorizer, or NULL when the broker has none (authz.h). */
klog_authz_t *klog_broker_authz(klog_broker_t *b);

/*
 * Serve until klog_broker_stop(); then stop accepting and reading, answer
 * what is pending (flushing what acks=all waits for), write out responses
 * for up to shutdown_ms, and close every connection.  0, or -KLOG_EIO if the
 * event loop failed.
 */
int klog_broker_run(klog_broker_t *b);

/* Ask run to return.  Safe from any thread and from a signal handler. */
void klog_broker_stop(klog_broker_t *b);

/*
 * Stop the flusher, close the store (with clean != 0: flush everything and
 * write the clean-shutdown marker) and free b.  Returns the close's error;
 * after a failed sync (offline.h) no marker is written and a clean close
 * is -KLOG_ESTORAGE.
 */
int klog_broker_close(klog_broker_t *b, int clean, klog_err_t *err);

#endif
