/*
 * The broker's connections and listeners: accepting, reading into bounded
 * buffers, writing output queues (bytes and file ranges by sendfile),
 * pausing a client whose answers pile up, and having cold file ranges read
 * in by the prefetch thread rather than block the loop in sendfile.
 *
 * What the bytes mean is a front end's business: each listener carries one
 * (Redis's connListener with its ConnectionType is the model), so a second
 * port speaking a second protocol is one more klog_conns_listen(), not a
 * second copy of this file.  Everything runs on the loop's thread.
 */
#ifndef KLOG_CONN_H
#define KLOG_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/logger.h"
#include "klog/net/connauth.h"
#include "klog/net/loop.h"
#include "klog/net/outq.h"
#include "klog/net/prefetch.h"
#include "klog/net/tls.h"

typedef struct klog_conns klog_conns_t;
typedef struct klog_conn klog_conn_t;

/* A protocol, as a listener's connections speak it. */
typedef struct klog_conn_front {
	/*
	 * Handle the complete requests at the start of data (len bytes),
	 * answering into klog_conn_out(c); stop early once
	 * klog_conn_stalled(c).  Returns the bytes consumed; the rest is
	 * kept and handed back with more.  data is only valid during the
	 * call.
	 */
	size_t (*process)(void *arg, klog_conn_t *c, const uint8_t *data,
	    size_t len);
	/* The whole size of the frame that starts data (whose first bytes
	 * process() accepted and left), to read the rest of a large one. */
	size_t (*frame_size)(void *arg, const uint8_t *data, size_t len);
	/* 0, or: a connection still open this long after it was accepted
	 * is closed, whatever it is doing (a protocol of one short exchange
	 * per connection, whose slow or silent clients must not linger). */
	int64_t deadline_ms;
} klog_conn_front_t;

typedef struct klog_conns_config {
	int max_connections;       /* refuse more */
	int max_per_address;       /* refuse more from one client address
	                              (0: no bound of its own) */
	size_t out_limit;          /* stop reading a client whose unsent
	                              responses pass this many bytes */
	size_t pending_limit;      /* bytes of requests not yet whole, over
	                              every connection: the one that reads
	                              past it is closed (0: no bound) */
	int64_t request_timeout_ms; /* a request begun and not whole after
	                              this long without a byte: closed (0:
	                              never) */
	int64_t idle_ms;           /* nothing asked and nothing owed for this
	                              long: closed (0: never) */
	klog_logger_t log;
} klog_conns_config_t;

/* No connections yet; pf (may be NULL) reads cold ranges in.  *out is the
 * caller's: klog_conns_free(). */
int klog_conns_new(klog_loop_t *loop, klog_prefetch_t *pf,
    const klog_conns_config_t *cfg, klog_conns_t **out);

/* Accept on fd (listening; now cs's) with front and its arg; over TLS
 * with tls's context (tls.h; NULL: plaintext), which must outlive cs.  A
 * TLS client whose handshake is not done in 10 seconds is closed.  sasl
 * (connauth.h's enum klog_conn_sasl): a client not logged in 10 seconds after it
 * connected is closed. */
int klog_conns_listen(klog_conns_t *cs, int fd, const klog_conn_front_t *front,
    void *arg, klog_tls_t *tls, int sasl);

/* Before the loop sleeps: write the connections that have output. */
void klog_conns_before_sleep(klog_conns_t *cs);

/* The loop was woken: connections whose cold ranges were read in send. */
void klog_conns_on_wake(klog_conns_t *cs);

/* Shutting down: close the listeners, stop reading, write what is
 * queued; a connection with nothing left closes. */
void klog_conns_stop(klog_conns_t *cs);

size_t klog_conns_count(const klog_conns_t *cs);

/* What the connections counted, for the broker's metrics. */
typedef struct klog_conns_stats {
	uint64_t open;             /* connections now */
	uint64_t refused;          /* over max_connections, since start */
	uint64_t cold_read_bytes;  /* handed to the prefetch thread to read
	                              in from the disk before sending */
} klog_conns_stats_t;

void klog_conns_stats(const klog_conns_t *cs, klog_conns_stats_t *out);

/* Close every connection (logging why at level) and listener; free cs.
 * NULL is fine. */
void klog_conns_free(klog_conns_t *cs, int level, const char *why);

/* Close every connection, logging why at level. */
void klog_conns_close_all(klog_conns_t *cs, int level, const char *why);

/* c's output queue: responses are encoded onto it, in request order. */
klog_outq_t *klog_conn_out(klog_conn_t *c);

/* c has output to write (a parked response became ready). */
void klog_conn_want_write(klog_conn_t *c);

/* frame_size for a protocol whose frames start with a big-endian 32-bit
 * size of the rest (klog's and Kafka's). */
size_t klog_conn_frame_be32(void *arg, const uint8_t *data, size_t len);

/* Whether process() must stop taking requests from c: paused over its
 * output limit, or closing. */
int klog_conn_stalled(const klog_conn_t *c);

/* After each request process() answered: pause c if its output is over
 * the limit (reading resumes once it is half drained). */
void klog_conn_answered(klog_conn_t *c);

/* A frame that cannot be parsed: the front end encoded its answer; write
 * it, then close.  why is logged, at most one line a second for all. */
void klog_conn_refuse(klog_conn_t *c, const char *why);

/* Who is on c, and its front end's authentication state. */
klog_connauth_t *klog_conn_auth(klog_conn_t *c);

/* Refuse c as authentication failures are refused: write what is
 * queued, read nothing more, and close ms later (Kafka's
 * connection.failed.authentication.delay.ms), so that a client that
 * retries at once cannot make the broker spin. */
void klog_conn_linger(klog_conn_t *c, int64_t ms);

/* The front end answered the last request it will take from c: write
 * what is queued, then close, logging nothing (one answer per
 * connection, as HTTP/1.0 without keep-alive). */
void klog_conn_end(klog_conn_t *c);

#endif
