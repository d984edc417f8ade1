/*
 * One TCP connection to a broker, speaking the framing of proto.h.
 *
 * The connection is non-blocking and does no waiting of its own except in
 * klog_client_open() and klog_client_call() (and the one-off OFFSETS
 * question built on it, klog_client_query_offset()); a caller with an event
 * loop of its own connects with klog_client_start() and
 * klog_client_connected() instead, which never wait.  The producer and the
 * consumer drive it from their poll loops, which is what lets a producer
 * keep many requests in flight (pipelining) while it reads stdin.  Requests on one
 * connection are answered in order, each response carrying the correlation
 * id of its request.  Writes use MSG_NOSIGNAL, so a broker that goes away
 * is an error return, never a SIGPIPE.
 *
 * Reconnecting is the caller's decision: after an error the connection is
 * dead (klog_client_close() it and open a new one).  The producer
 * (producer.h) and the consumer (consumer.h) are built on this, and are the
 * APIs to drive from C (a benchmark, say) rather than the tools.
 */
#ifndef KLOG_CLIENT_H
#define KLOG_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/net/tls.h"
#include "klog/proto/proto.h"

typedef struct klog_client klog_client_t;

/*
 * How to reach a broker beyond its address (librdkafka's
 * security.protocol and what goes with it; props.h makes one from those
 * properties): TLS when tls is set, SASL when mechanism is.  Shared by
 * every connection to the brokers of one cluster, so it is referenced,
 * never copied, and must outlive them.
 */
typedef struct klog_client_sec {
	klog_tls_t *tls;           /* a client context (tls.h), or NULL */
	int verify_host;           /* the broker's certificate must name
	                              the host dialled */
	const char *mechanism;     /* "PLAIN", "SCRAM-SHA-256",
	                              "SCRAM-SHA-512", or NULL: no SASL */
	const char *username;
	const char *password;
} klog_client_sec_t;

/* Every client's retry backoff (reconnects, relocations, rebalances):
 * from the minimum, doubled after each failure, up to the maximum. */
#define KLOG_BACKOFF_MIN_MS 50
#define KLOG_BACKOFF_MAX_MS 2000

/* A broker address as given by the user ("host:port" parsed), and how
 * to speak to it: sec NULL is plaintext without SASL.  An address found
 * from another (a broker's metadata, ZooKeeper's registry) takes its
 * sec. */
typedef struct klog_client_addr {
	char host[256];
	char port[16];
	const klog_client_sec_t *sec;
} klog_client_addr_t;

/*
 * Parse "HOST:PORT[,HOST:PORT...]" (port defaults to 9092) into a new array
 * *out of *n addresses, owned by the caller (free()).  -KLOG_EINVAL with err
 * naming the bad entry.
 */
int klog_client_parse_brokers(const char *list, klog_client_addr_t **out,
    size_t *n, klog_err_t *err);

/*
 * Connect to addr within timeout_ms (every address the name resolves to is
 * tried), then, as addr->sec says, take the TLS handshake and SASL's
 * exchange (AUTHENTICATE) within the same time.  -KLOG_ECONN or
 * -KLOG_ETIMEDOUT with err saying "127.0.0.1:9092: Connection refused";
 * -KLOG_EAUTH when the broker's certificate is not trusted, ours is
 * refused, or SASL fails ("127.0.0.1:9092: authentication failed"); a
 * malformed answer -KLOG_EPROTO.  On success *out is owned by the caller:
 * klog_client_close().
 */
int klog_client_open(const klog_client_addr_t *addr, int timeout_ms,
    klog_client_t **out, klog_err_t *err);
void klog_client_close(klog_client_t *c);

/*
 * The same connect without waiting (for a caller's event loop): *out is a
 * client whose connect to the first of addr's addresses that did not
 * refuse at once is under way, owned by the caller (klog_client_close(),
 * which also abandons a connect).  Only the name's lookup may wait.  The
 * caller watches klog_client_fd() for what klog_client_wants() says, then
 * asks klog_client_connected(); a deadline is the caller's.  Errors as
 * klog_client_open()'s, when every address refused at once.  TLS's
 * handshake is part of the connect; SASL is not done here (a follower
 * broker presents its certificate instead).
 */
int klog_client_start(const klog_client_addr_t *addr, klog_client_t **out,
    klog_err_t *err);
/*
 * Whether c's connect is done: 1 connected (and from then on always 1);
 * 0 still under way, possibly to the next address after this one failed,
 * on a new descriptor: stop watching klog_client_fd() before the call and
 * watch it again after; -KLOG_ECONN (or -KLOG_ETIMEDOUT, should the
 * kernel give up first) with err as klog_client_open() says once the last
 * address failed (c is then only for klog_client_close()).
 */
int klog_client_connected(klog_client_t *c, klog_err_t *err);
/* What a connect under way waits for: POLLOUT for TCP's, POLLIN or
 * POLLOUT for TLS's handshake; POLLIN once connected. */
short klog_client_wants(const klog_client_t *c);

int klog_client_fd(const klog_client_t *c);
/* "host:port", for messages. */
const char *klog_client_name(const klog_client_t *c);

/* A fresh correlation id (increasing, never 0). */
int32_t klog_client_next_id(klog_client_t *c);

/*
 * Small requests (fetch, offsets, metadata) are encoded straight into this
 * buffer with the proto.h encoders; klog_client_write() sends it.
 */
klog_buf_t *klog_client_out(klog_client_t *c);

/* Whether output is buffered and not yet written. */
int klog_client_pending(const klog_client_t *c);

/*
 * Write as much buffered output as the socket takes now.  0, or -KLOG_ECONN
 * (the connection is dead).
 */
int klog_client_write(klog_client_t *c, klog_err_t *err);

/*
 * Write caller-owned bytes directly (the producer's request frames, kept for
 * resending): as much as the socket takes now, *written getting the count.
 * Buffered output (klog_client_out) must have been written first.  more:
 * the caller writes again at once, so the kernel may hold these bytes back
 * to share a segment with the next ones (MSG_MORE); the first write without
 * it sends everything held.
 */
int klog_client_writev(klog_client_t *c, const struct iovec *iov, int n,
    int more, size_t *written, klog_err_t *err);

/*
 * Read what the socket has now (over TLS, every record it holds: bytes
 * decrypted are not seen by poll).  0; -KLOG_ECLOSED if the broker closed
 * the connection; -KLOG_ECONN on an error; -KLOG_EAUTH when the broker
 * refused our certificate (TLS 1.3 says so after the handshake).
 */
int klog_client_read(klog_client_t *c, klog_err_t *err);

/*
 * The next complete response already read: 1, with *body a view of *len
 * bytes that stays valid until the next call to klog_client_response() or
 * klog_client_read(); 0 if none is complete yet; -KLOG_EPROTO for a frame
 * that cannot be a response.  The largest response accepted is
 * max_response (default KLOG_DEFAULT_MAX_REQUEST + 1 MiB).
 */
int klog_client_response(klog_client_t *c, klog_resp_header_t *h,
    const uint8_t **body, size_t *len, klog_err_t *err);
void klog_client_set_max_response(klog_client_t *c, size_t max);

/*
 * Keep the views of the responses handed out so far valid while reading
 * on (to check one fetch while the next arrives): the client's input
 * buffer is swapped with *spare, whose contents are dropped and whose
 * memory is reused, and the bytes read past those responses move over.
 * *spare then holds the views until the caller passes it in again, or
 * frees it.  0, or -KLOG_ENOMEM (the client unchanged, *spare emptied).
 */
int klog_client_detach(klog_client_t *c, klog_buf_t *spare);

/*
 * Blocking round trip: write the buffered output, then wait up to
 * timeout_ms for the response to request id (answers to earlier requests
 * are skipped).  Returns 0 with a view as above and *error the response
 * header's error code, or -KLOG_ECONN / -KLOG_ECLOSED / -KLOG_ETIMEDOUT /
 * -KLOG_EPROTO.  For one-off requests (metadata, offsets) only.
 */
int klog_client_call(klog_client_t *c, int32_t id, int timeout_ms,
    int16_t *error, const uint8_t **body, size_t *len, klog_err_t *err);

/*
 * Ask c's broker for one offset of partition part (the broker's own
 * number) of topic, one OFFSETS round trip within timeout_ms: time
 * KLOG_OFFSET_LATEST, KLOG_OFFSET_EARLIEST, or ms since the epoch for the
 * entry holding the first record whose timestamp is at or after it (or
 * the end if none is), asked at OFFSETS version 2; a broker that refuses
 * that version, or whose partition holds no record with a timestamp,
 * answers the newest segment start at or before it (the connection then
 * asks at version 1 from the first refusal on).  The answer maps one way for every
 * caller: a broker's error, whether for the whole request or for the
 * partition, as klog_wire_error_to_klog() says (the same as for a FETCH);
 * -KLOG_ENOENT if the broker has no offset that old; -KLOG_EPROTO for an
 * answer that does not parse; else the connection's errors, as
 * klog_client_call() returns them.  err's lines about the answer start with
 * what, or with "topic \"T\" partition P" if what is NULL, so that a caller
 * that knows more (which broker, under which name) words it for its users.
 * topic must be a valid name.
 */
int klog_client_query_offset(klog_client_t *c, const char *topic,
    int32_t part, int64_t time, int timeout_ms, const char *what,
    int64_t *offset, klog_err_t *err);

/*
 * The same question for up to max offsets (max >= 1), descending, as the
 * broker's OFFSETS answers them (klog_log_offsets_before(): with time
 * KLOG_OFFSET_LATEST, the end and then every segment's base, newest
 * first); *n gets how many.
 */
int klog_client_query_offsets(klog_client_t *c, const char *topic,
    int32_t part, int64_t time, int max, int timeout_ms, const char *what,
    int64_t *offsets, int *n, klog_err_t *err);

/*
 * The same question on a connection of its own to addr, opened and closed
 * here: the connect and the round trip together take at most timeout_ms.
 */
int klog_client_query_offset_at(const klog_client_addr_t *addr,
    const char *topic, int32_t part, int64_t time, int timeout_ms,
    const char *what, int64_t *offset, klog_err_t *err);

/*
 * One CREATE_TOPIC, ALTER_TOPIC or DELETE_TOPIC round trip (api) within
 * timeout_ms: 0 with *error the broker's answer (a KLOG_WIRE_* code, from
 * the header or the body) and *partitions the count it gave, or the
 * connection's errors as klog_client_call() returns them (-KLOG_EPROTO for
 * an answer that does not parse).  Wording an error for users is the
 * caller's.
 */
int klog_client_topic_admin(klog_client_t *c, int16_t api, const char *topic,
    int32_t partitions, int timeout_ms, int16_t *error, int32_t *now,
    klog_err_t *err);

/*
 * One INIT_PRODUCER round trip: *id (both -1 for a new producer, or the
 * producer's own to bump its epoch) replaced by the broker's grant, with
 * *error KLOG_WIRE_NONE; or 0 with *error the refusal (UNKNOWN_API from a
 * broker older than the request, CLUSTER_AUTHORIZATION_FAILED, ...) and
 * *id unchanged; or the connection's errors as klog_client_call().
 */
int klog_client_init_producer(klog_client_t *c, int timeout_ms,
    klog_producer_id_t *id, int16_t *error, klog_err_t *err);

#endif
