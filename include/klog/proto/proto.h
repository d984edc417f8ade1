/*
 * The klog wire protocol: Kafka 0.7's framing and message sets, with a
 * version, a correlation id and a response for every request, so a client
 * can pipeline many requests on one connection.  Documented byte for byte in
 * klog-protocol(7).  All integers are big-endian; a string is an int16 length
 * and that many bytes (UTF-8, klog topics are ASCII).
 *
 * Request:
 *   +---------+--------+------------+----------------+------------+
 *   | size:4  | api:2  | version:2  | correlation:4  | body ...   |
 *   +---------+--------+------------+----------------+------------+
 *     size counts every byte after itself (8 + body)
 *
 * Response:
 *   +---------+----------------+----------+------------+
 *   | size:4  | correlation:4  | error:2  | body ...   |
 *   +---------+----------------+----------+------------+
 *     size = 6 + body; a non-zero error here (unknown api, unsupported
 *     version, malformed request) comes with an empty body
 *
 * PRODUCE (0)  body: acks:2 timeout_ms:4 count:4
 *                    count x [topic:str partition:4 set_size:4 set]
 *              resp: count:4 count x [topic:str partition:4 error:2 offset:8]
 *   acks 0: no response at all; 1: after the append; -1 (all): after fsync.
 *   partition -1: the broker picks one.  offset: of the first appended entry.
 * FETCH (1)    body: max_wait_ms:4 min_bytes:4 count:4
 *                    count x [topic:str partition:4 offset:8 max_bytes:4]
 *              resp: count:4 count x [topic:str partition:4 error:2
 *                    log_start:8 log_end:8 set_size:4 set]
 *   log_end is the flushed end.  The set may end in a cut entry.
 * OFFSETS (4)  body: count:4 count x [topic:str partition:4 time:8 max:4]
 *              resp: count:4 count x [topic:str partition:4 error:2
 *                    n:4 n x offset:8]      (descending)
 *   time -1 latest, -2 earliest, else ms since the epoch.  At version 2
 *   (the only API with one) a time >= 0 answers one offset: the entry
 *   holding the first record whose timestamp is at or after it, or the
 *   flushed end when none is; the version-1 answer where no record of
 *   the partition carries a timestamp.
 * REPLICA_FETCH (6)  a follower broker's fetch of one replicated partition
 *              body: replica_id:4 leader_epoch:4 max_wait_ms:4 topic:str
 *                    partition:4 offset:8 flushed:8 last_epoch:4 max_bytes:4
 *              resp: error:2 leader_epoch:4 hw:8 log_start:8 log_end:8
 *                    chunk_epoch:4 diverging_epoch:4 diverging_end:8
 *                    set_size:4 set
 *   offset is the follower's log end, flushed its flushed end, last_epoch
 *   the newest epoch in its epoch file (-1: none).  log_end is the leader's
 *   flushed end; the set never crosses a leader epoch (chunk_epoch is the
 *   one it was written in).  diverging_epoch >= 0: the follower must cut
 *   its log to diverging_end (KIP-279) before fetching again.
 * REPLICA_POS (7)  a follower's position, sent when its flush completes
 *              body: replica_id:4 leader_epoch:4 topic:str partition:4
 *                    offset:8 flushed:8
 *              no response (the REPLICA_FETCH it sent before may still be
 *              waiting at the leader; this must not wait behind it)
 * METADATA (5) body: count:4 count x topic:str   (0 topics: all of them)
 *              resp: broker_id:4 nbrokers:4 nbrokers x [id:4 host:str port:4]
 *                    ntopics:4 ntopics x [error:2 topic:str partitions:4
 *                    broker_id:4]
 * CREATE_TOPIC (8)  body: topic:str partitions:4
 * ALTER_TOPIC (9)   body: topic:str partitions:4   (grow only)
 * DELETE_TOPIC (10) body: topic:str
 *              resp (all three): topic:str error:2 partitions:4
 *   A standalone broker's topic administration.  partitions in the answer
 *   is the count the topic has now (DELETE_TOPIC: the count it had), 0
 *   with an error that leaves no topic.
 * AUTHENTICATE (11)  body: mechanism:str auth_size:4 auth_bytes
 *              resp: auth_size:4 auth_bytes   (none with an error)
 *   SASL on a SASL_PLAINTEXT:// or SASL_SSL:// listener, before any other
 *   request: PLAIN in one round ("\0user\0password" answered with no
 *   bytes), SCRAM-SHA-256/512 in two (client-first -> server-first,
 *   client-final -> server-final).  A refusal is the header's error
 *   (AUTHENTICATION_FAILED, UNSUPPORTED_MECHANISM, ILLEGAL_AUTH_STATE),
 *   then the broker closes the connection.
 */
#ifndef KLOG_PROTO_H
#define KLOG_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"

#define KLOG_PROTO_VERSION 1
/* OFFSETS alone also takes version 2: the same body and answer, but a
 * time >= 0 answers the entry holding the first record whose timestamp is
 * at or after it (klog-protocol(7)).  A broker older than it refuses the
 * version; the client then asks at version 1. */
#define KLOG_PROTO_VERSION_OFFSETS_AT 2
#define KLOG_REQ_HEADER_SIZE 12   /* size, api, version, correlation */
#define KLOG_RESP_HEADER_SIZE 10  /* size, correlation, error */
#define KLOG_DEFAULT_PORT "9092"
#define KLOG_DEFAULT_MAX_REQUEST (100 * 1024 * 1024)

enum klog_api {
	KLOG_API_PRODUCE = 0,
	KLOG_API_FETCH = 1,
	KLOG_API_OFFSETS = 4,
	KLOG_API_METADATA = 5,
	KLOG_API_REPLICA_FETCH = 6,
	KLOG_API_REPLICA_POS = 7,
	KLOG_API_CREATE_TOPIC = 8,
	KLOG_API_ALTER_TOPIC = 9,
	KLOG_API_DELETE_TOPIC = 10,
	KLOG_API_AUTHENTICATE = 11,
	KLOG_API_INIT_PRODUCER = 12,
};

enum klog_acks {
	KLOG_ACKS_NONE = 0,
	KLOG_ACKS_LEADER = 1,
	KLOG_ACKS_ALL = -1,
};

enum klog_offset_time {
	KLOG_OFFSET_LATEST = -1,
	KLOG_OFFSET_EARLIEST = -2,
};

/* Error codes on the wire: Kafka 0.7's first five, then klog's. */
enum klog_wire_error {
	KLOG_WIRE_UNKNOWN = -1,
	KLOG_WIRE_NONE = 0,
	KLOG_WIRE_OFFSET_OUT_OF_RANGE = 1,
	KLOG_WIRE_INVALID_MESSAGE = 2,
	KLOG_WIRE_WRONG_PARTITION = 3,
	KLOG_WIRE_INVALID_FETCH_SIZE = 4,
	KLOG_WIRE_MESSAGE_TOO_LARGE = 5,
	KLOG_WIRE_INVALID_TOPIC = 6,
	KLOG_WIRE_UNKNOWN_TOPIC = 7,
	KLOG_WIRE_NOT_BOUNDARY = 8,
	KLOG_WIRE_STORAGE_ERROR = 9,
	KLOG_WIRE_DISK_FULL = 10,
	KLOG_WIRE_INVALID_REQUEST = 11,
	KLOG_WIRE_UNSUPPORTED_VERSION = 12,
	KLOG_WIRE_UNKNOWN_API = 13,
	KLOG_WIRE_REQUEST_TOO_LARGE = 14,
	KLOG_WIRE_UNSUPPORTED_CODEC = 15,
	KLOG_WIRE_PARTIAL_MESSAGE = 16,
	KLOG_WIRE_NOT_LEADER = 17,
	KLOG_WIRE_NOT_ENOUGH_REPLICAS = 18,
	KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND = 19,
	KLOG_WIRE_FENCED_LEADER_EPOCH = 20,
	KLOG_WIRE_TOPIC_EXISTS = 21,
	KLOG_WIRE_INVALID_PARTITIONS = 22,   /* fewer than now, or not in
	                                        the broker's range */
	KLOG_WIRE_TOPIC_REPLICATED = 23,     /* administered in ZooKeeper */
	KLOG_WIRE_AUTHENTICATION_REQUIRED = 24, /* a request before
	                                           AUTHENTICATE succeeded */
	KLOG_WIRE_AUTHENTICATION_FAILED = 25,
	KLOG_WIRE_UNSUPPORTED_MECHANISM = 26,
	KLOG_WIRE_ILLEGAL_AUTH_STATE = 27,   /* AUTHENTICATE out of turn */
	KLOG_WIRE_CLUSTER_AUTHORIZATION_FAILED = 28,
	KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED = 29, /* Kafka's number */
	KLOG_WIRE_OUT_OF_ORDER_SEQUENCE = 30, /* a producer's batch after a
	                                        gap in its sequences */
	KLOG_WIRE_INVALID_PRODUCER_EPOCH = 31, /* an epoch older than the
	                                         producer's */
	KLOG_WIRE_UNKNOWN_PRODUCER_ID = 32,  /* a producer id the partition
	                                       does not know, not at 0 */
	KLOG_WIRE_ERROR_MAX
};

/* "OFFSET_OUT_OF_RANGE" etc.; "UNKNOWN" for anything unlisted. */
const char *klog_wire_error_name(int code);
/* The same for a person: a refusal by the broker's ACLs reads "not
 * authorized (TOPIC_AUTHORIZATION_FAILED)", the others their name. */
const char *klog_wire_error_text(int code);
/* Wire code <-> library code (-KLOG_E*). */
int klog_wire_error_to_klog(int code);
int klog_wire_error_from_klog(int err);
/* "PRODUCE", "FETCH", "OFFSETS", "METADATA", "REPLICA_FETCH",
 * "REPLICA_POS", "CREATE_TOPIC", "ALTER_TOPIC", "DELETE_TOPIC",
 * "AUTHENTICATE"; "UNKNOWN" for anything else. */
const char *klog_proto_api_name(int api);

typedef struct klog_req_header {
	int32_t size;       /* bytes after the size field */
	int16_t api;
	int16_t version;
	int32_t correlation;
} klog_req_header_t;

typedef struct klog_resp_header {
	int32_t size;
	int32_t correlation;
	int16_t error;
} klog_resp_header_t;

/*
 * Parse a header from the first len bytes received.  -KLOG_EPARTIAL: fewer
 * than the header's bytes yet; -KLOG_ETOOBIG: size over max_size;
 * -KLOG_EPROTO: a size too small for the header (or negative).  The size is
 * judged as soon as its 4 bytes are in (h->size is then set even if the
 * rest is -KLOG_EPARTIAL).  Decide before allocating.
 */
int klog_proto_req_header(const uint8_t *buf, size_t len, size_t max_size,
    klog_req_header_t *h);
int klog_proto_resp_header(const uint8_t *buf, size_t len, size_t max_size,
    klog_resp_header_t *h);

/*
 * Frame helpers: begin writes a header with size 0 and returns where the
 * frame starts; end patches the size to cover everything written since.
 */
size_t klog_proto_req_begin(klog_buf_t *b, int16_t api, int32_t correlation);
size_t klog_proto_resp_begin(klog_buf_t *b, int32_t correlation, int16_t error);
void klog_proto_end(klog_buf_t *b, size_t start);

/* ---- PRODUCE ---- */
typedef struct klog_produce_part {
	klog_str_t topic;
	int32_t partition;
	const uint8_t *set;
	uint32_t set_len;
} klog_produce_part_t;

typedef struct klog_produce_req {
	int16_t acks;
	int32_t timeout_ms;
	uint32_t count;
	klog_produce_part_t *parts;  /* caller's array */
} klog_produce_req_t;

typedef struct klog_produce_result {
	klog_str_t topic;
	int32_t partition;
	int16_t error;
	int64_t offset;
} klog_produce_result_t;

int klog_proto_encode_produce(klog_buf_t *b, int32_t correlation,
    const klog_produce_req_t *req);
/*
 * Decoders take the body after the header (request) or after the error
 * field (response), never allocate, and return views into body.  A count
 * over the caller's array is -KLOG_ETOOBIG; a body that is short, has bytes
 * left over, a negative count, size, limit or timeout, a null (-1) string,
 * acks other than 0, 1, -1, or a time below -2 is -KLOG_EPROTO.
 *
 * Decode a request body into req->parts, an array of max_parts entries.
 */
int klog_proto_decode_produce(const uint8_t *body, size_t len,
    klog_produce_req_t *req, klog_produce_part_t *parts, uint32_t max_parts);
int klog_proto_encode_produce_resp(klog_buf_t *b, int32_t correlation,
    const klog_produce_result_t *res, uint32_t n);
/* As encode_produce_resp, noting in errpos[i] the buffer position of
 * result i's error field, for klog_proto_patch_produce_result(). */
int klog_proto_encode_produce_resp_at(klog_buf_t *b, int32_t correlation,
    const klog_produce_result_t *res, uint32_t n, size_t *errpos);
/* Turn the result whose error field is at pos into error, offset -1
 * (nothing if pos is not inside b). */
void klog_proto_patch_produce_result(klog_buf_t *b, size_t pos,
    int16_t error);
int klog_proto_decode_produce_resp(const uint8_t *body, size_t len,
    klog_produce_result_t *res, uint32_t max, uint32_t *n);

/* ---- FETCH ---- */
typedef struct klog_fetch_part {
	klog_str_t topic;
	int32_t partition;
	int64_t offset;
	int32_t max_bytes;
} klog_fetch_part_t;

typedef struct klog_fetch_req {
	int32_t max_wait_ms;
	int32_t min_bytes;
	uint32_t count;
	klog_fetch_part_t *parts;
} klog_fetch_req_t;

typedef struct klog_fetch_result {
	klog_str_t topic;
	int32_t partition;
	int16_t error;
	int64_t log_start;
	int64_t log_end;
	const uint8_t *set;  /* view into the response */
	uint32_t set_len;
} klog_fetch_result_t;

int klog_proto_encode_fetch(klog_buf_t *b, int32_t correlation,
    const klog_fetch_req_t *req);
int klog_proto_decode_fetch(const uint8_t *body, size_t len,
    klog_fetch_req_t *req, klog_fetch_part_t *parts, uint32_t max_parts);
/*
 * The broker writes a fetch response as: resp_begin, put_i32(count), then per
 * partition put_fetch_part_header() followed by set_len bytes that it sends
 * from the segment file with sendfile, not through the buffer; the frame
 * size must then be patched to include those bytes (klog_buf_patch_i32).
 */
void klog_proto_put_fetch_part_header(klog_buf_t *b, klog_str_t topic,
    int32_t partition, int16_t error, int64_t log_start, int64_t log_end,
    uint32_t set_len);
int klog_proto_decode_fetch_resp(const uint8_t *body, size_t len,
    klog_fetch_result_t *res, uint32_t max, uint32_t *n);

/* ---- REPLICA_FETCH ---- */
typedef struct klog_rfetch_req {
	int32_t replica_id;
	int32_t leader_epoch;
	int32_t max_wait_ms;
	klog_str_t topic;
	int32_t partition;
	int64_t offset;
	int64_t flushed;
	int32_t last_epoch;
	int32_t max_bytes;
} klog_rfetch_req_t;

typedef struct klog_rfetch_resp {
	int16_t error;
	int32_t leader_epoch;
	int64_t hw;
	int64_t log_start;
	int64_t log_end;
	int32_t chunk_epoch;
	int32_t diverging_epoch;   /* -1: none */
	int64_t diverging_end;
	const uint8_t *set;        /* view into the response */
	uint32_t set_len;
} klog_rfetch_resp_t;

int klog_proto_encode_rfetch(klog_buf_t *b, int32_t correlation,
    const klog_rfetch_req_t *req);
int klog_proto_decode_rfetch(const uint8_t *body, size_t len,
    klog_rfetch_req_t *req);
/* Everything of r but the set, whose set_len bytes follow (by sendfile);
 * the frame's size must then be patched as for FETCH. */
void klog_proto_put_rfetch_header(klog_buf_t *b, const klog_rfetch_resp_t *r);
int klog_proto_decode_rfetch_resp(const uint8_t *body, size_t len,
    klog_rfetch_resp_t *r);

/* REPLICA_POS: the fields of a REPLICA_FETCH it uses (max_wait_ms,
 * last_epoch and max_bytes are not sent). */
int klog_proto_encode_rpos(klog_buf_t *b, int32_t correlation,
    const klog_rfetch_req_t *req);
int klog_proto_decode_rpos(const uint8_t *body, size_t len,
    klog_rfetch_req_t *req);

/* ---- OFFSETS ---- */
typedef struct klog_offsets_part {
	klog_str_t topic;
	int32_t partition;
	int64_t time;
	int32_t max;
} klog_offsets_part_t;

typedef struct klog_offsets_result {
	klog_str_t topic;
	int32_t partition;
	int16_t error;
	int32_t count;
	const uint8_t *raw;  /* count big-endian int64s: klog_proto_offset_at() */
} klog_offsets_result_t;

int klog_proto_encode_offsets(klog_buf_t *b, int32_t correlation,
    const klog_offsets_part_t *parts, uint32_t n);
/* The same at KLOG_PROTO_VERSION_OFFSETS_AT: a time >= 0 asks for the
 * first record at or after it. */
int klog_proto_encode_offsets_at(klog_buf_t *b, int32_t correlation,
    const klog_offsets_part_t *parts, uint32_t n);
int klog_proto_decode_offsets(const uint8_t *body, size_t len,
    klog_offsets_part_t *parts, uint32_t max, uint32_t *n);
/* Encode a response; offsets[i] has counts[i] entries, descending. */
int klog_proto_encode_offsets_resp(klog_buf_t *b, int32_t correlation,
    const klog_offsets_part_t *parts, const int16_t *errors,
    const int64_t *const *offsets, const int32_t *counts, uint32_t n);
int klog_proto_decode_offsets_resp(const uint8_t *body, size_t len,
    klog_offsets_result_t *res, uint32_t max, uint32_t *n);
int64_t klog_proto_offset_at(const klog_offsets_result_t *r, int32_t i);

/* ---- METADATA ---- */
typedef struct klog_meta_broker {
	int32_t id;
	klog_str_t host;
	int32_t port;
} klog_meta_broker_t;

typedef struct klog_meta_topic {
	int16_t error;
	klog_str_t topic;
	int32_t partitions;
	int32_t broker_id;
} klog_meta_topic_t;

typedef struct klog_metadata {
	int32_t broker_id;
	uint32_t nbrokers;
	klog_meta_broker_t *brokers;
	uint32_t ntopics;
	klog_meta_topic_t *topics;
} klog_metadata_t;

int klog_proto_encode_metadata(klog_buf_t *b, int32_t correlation,
    const klog_str_t *topics, uint32_t n);
int klog_proto_decode_metadata(const uint8_t *body, size_t len,
    klog_str_t *topics, uint32_t max, uint32_t *n);
int klog_proto_encode_metadata_resp(klog_buf_t *b, int32_t correlation,
    const klog_metadata_t *md);
/* Decode into caller arrays of max_brokers / max_topics entries. */
int klog_proto_decode_metadata_resp(const uint8_t *body, size_t len,
    klog_metadata_t *md, klog_meta_broker_t *brokers, uint32_t max_brokers,
    klog_meta_topic_t *topics, uint32_t max_topics);

/* ---- CREATE_TOPIC, ALTER_TOPIC, DELETE_TOPIC ---- */
typedef struct klog_topic_admin {
	klog_str_t topic;
	int32_t partitions;   /* asked for (DELETE_TOPIC: 0, not sent) */
} klog_topic_admin_t;

typedef struct klog_topic_admin_resp {
	klog_str_t topic;
	int16_t error;
	int32_t partitions;   /* the count now (DELETE_TOPIC: it had) */
} klog_topic_admin_resp_t;

/* A request of api (one of the three); -KLOG_EINVAL for another api. */
int klog_proto_encode_topic_admin(klog_buf_t *b, int16_t api,
    int32_t correlation, const klog_topic_admin_t *req);
/* As the other decoders; a negative partition count is -KLOG_EPROTO. */
int klog_proto_decode_topic_admin(int16_t api, const uint8_t *body,
    size_t len, klog_topic_admin_t *req);
int klog_proto_encode_topic_admin_resp(klog_buf_t *b, int32_t correlation,
    const klog_topic_admin_resp_t *res);
int klog_proto_decode_topic_admin_resp(const uint8_t *body, size_t len,
    klog_topic_admin_resp_t *res);

/* ---- INIT_PRODUCER ---- */
/*
 * An idempotent producer's id and epoch (Kafka's InitProducerId): asked
 * with both -1 for a new id, or with the producer's own to bump its epoch
 * (KIP-360).  The answer's header carries the error; its body the id and
 * epoch granted (-1 and -1 with an error).  A broker older than the
 * request answers UNKNOWN_API with an empty body.
 */
typedef struct klog_producer_id {
	int64_t producer_id;
	int16_t epoch;
} klog_producer_id_t;

int klog_proto_encode_init_producer(klog_buf_t *b, int32_t correlation,
    const klog_producer_id_t *req);
/* As the other decoders; an id or epoch below -1, or only one of them
 * -1, is -KLOG_EPROTO. */
int klog_proto_decode_init_producer(const uint8_t *body, size_t len,
    klog_producer_id_t *req);
int klog_proto_encode_init_producer_resp(klog_buf_t *b, int32_t correlation,
    int16_t error, const klog_producer_id_t *res);
int klog_proto_decode_init_producer_resp(const uint8_t *body, size_t len,
    klog_producer_id_t *res);

/* ---- decoding into arrays that grow ---- */

/* An array a decoder fills, grown to each request's count (cap in bytes);
 * starts zeroed, the caller's: free(a->p). */
typedef struct klog_proto_array {
	void *p;
	size_t cap;
} klog_proto_array_t;

/*
 * The decoders above, into a's array grown first to the count the body
 * announces (a count that could not fit in the body is refused before
 * anything is allocated).  The parts are in a->p; 0, -KLOG_EPROTO (or the
 * decoder's refusal), or -KLOG_ENOMEM.
 */
int klog_proto_decode_produce_grow(const uint8_t *body, size_t len,
    klog_produce_req_t *req, klog_proto_array_t *a);
int klog_proto_decode_fetch_grow(const uint8_t *body, size_t len,
    klog_fetch_req_t *req, klog_proto_array_t *a);
int klog_proto_decode_offsets_grow(const uint8_t *body, size_t len,
    klog_proto_array_t *a, uint32_t *n);
int klog_proto_decode_metadata_grow(const uint8_t *body, size_t len,
    klog_proto_array_t *a, uint32_t *n);

/* The correlation id of a request frame's header, 0 if too short. */
int32_t klog_proto_peek_correlation(const uint8_t *frame, size_t len);

/* ---- AUTHENTICATE ---- */
/* The longest auth_bytes either side takes: SCRAM's messages are far
 * shorter, PLAIN's bounded by a name and a password. */
#define KLOG_AUTH_BYTES_MAX 4096

typedef struct klog_auth_req {
	klog_str_t mechanism;      /* "PLAIN", "SCRAM-SHA-256", ... */
	const uint8_t *bytes;
	uint32_t len;
} klog_auth_req_t;

/* -KLOG_EINVAL for a mechanism or bytes over their limits (the buffer
 * untouched). */
int klog_proto_encode_auth(klog_buf_t *b, int32_t correlation,
    const klog_auth_req_t *req);
/* -KLOG_EPROTO for a malformed body, -KLOG_ETOOBIG for bytes over
 * KLOG_AUTH_BYTES_MAX. */
int klog_proto_decode_auth(const uint8_t *body, size_t len,
    klog_auth_req_t *req);
/* The answer: bytes (len may be 0) with error KLOG_WIRE_NONE, or the
 * error in the header and no body (bytes ignored). */
int klog_proto_encode_auth_resp(klog_buf_t *b, int32_t correlation,
    int16_t error, const uint8_t *bytes, uint32_t len);
/* The body of an answer without error: a view of its bytes. */
int klog_proto_decode_auth_resp(const uint8_t *body, size_t len,
    const uint8_t **bytes, uint32_t *n);

#endif
