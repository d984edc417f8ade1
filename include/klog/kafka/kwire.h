/*
 * The Kafka protocol's wire layer, for the Kafka listener (klog-kafka(7)):
 * API keys, error codes, the request header, and the decoders and encoders
 * of the API versions the listener speaks (all non-flexible: Kafka's
 * classic int16-length strings and int32-count arrays, big-endian).
 * The data, group and admin APIs are kwdata.h's, kwgroup.h's and
 * kwadmin.h's.
 */
#ifndef KLOG_KWIRE_H
#define KLOG_KWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/kafka/kprim.h"
#include "klog/proto/proto.h"

/* API keys. */
enum klog_kapi {
	KLOG_KAPI_PRODUCE = 0,
	KLOG_KAPI_FETCH = 1,
	KLOG_KAPI_LIST_OFFSETS = 2,
	KLOG_KAPI_METADATA = 3,
	KLOG_KAPI_OFFSET_COMMIT = 8,
	KLOG_KAPI_OFFSET_FETCH = 9,
	KLOG_KAPI_FIND_COORDINATOR = 10,
	KLOG_KAPI_JOIN_GROUP = 11,
	KLOG_KAPI_HEARTBEAT = 12,
	KLOG_KAPI_LEAVE_GROUP = 13,
	KLOG_KAPI_SYNC_GROUP = 14,
	KLOG_KAPI_DESCRIBE_GROUPS = 15,
	KLOG_KAPI_LIST_GROUPS = 16,
	KLOG_KAPI_SASL_HANDSHAKE = 17,
	KLOG_KAPI_API_VERSIONS = 18,
	KLOG_KAPI_CREATE_TOPICS = 19,
	KLOG_KAPI_DELETE_TOPICS = 20,
	KLOG_KAPI_INIT_PRODUCER_ID = 22,
	KLOG_KAPI_DESCRIBE_CONFIGS = 32,
	KLOG_KAPI_SASL_AUTHENTICATE = 36,
	KLOG_KAPI_CREATE_PARTITIONS = 37,
};

/* Error codes (Kafka's). */
enum klog_kerr {
	KLOG_KERR_UNKNOWN = -1,
	KLOG_KERR_NONE = 0,
	KLOG_KERR_OFFSET_OUT_OF_RANGE = 1,
	KLOG_KERR_CORRUPT_MESSAGE = 2,
	KLOG_KERR_UNKNOWN_TOPIC_OR_PARTITION = 3,
	KLOG_KERR_INVALID_FETCH_SIZE = 4,
	KLOG_KERR_LEADER_NOT_AVAILABLE = 5,
	KLOG_KERR_NOT_LEADER_FOR_PARTITION = 6,
	KLOG_KERR_REQUEST_TIMED_OUT = 7,
	KLOG_KERR_MESSAGE_TOO_LARGE = 10,
	KLOG_KERR_OFFSET_METADATA_TOO_LARGE = 12,
	KLOG_KERR_COORDINATOR_LOAD_IN_PROGRESS = 14,
	KLOG_KERR_COORDINATOR_NOT_AVAILABLE = 15,
	KLOG_KERR_NOT_COORDINATOR = 16,
	KLOG_KERR_INVALID_TOPIC = 17,
	KLOG_KERR_RECORD_LIST_TOO_LARGE = 18,
	KLOG_KERR_NOT_ENOUGH_REPLICAS = 19,
	KLOG_KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20,
	KLOG_KERR_INVALID_REQUIRED_ACKS = 21,
	KLOG_KERR_ILLEGAL_GENERATION = 22,
	KLOG_KERR_INCONSISTENT_GROUP_PROTOCOL = 23,
	KLOG_KERR_INVALID_GROUP_ID = 24,
	KLOG_KERR_UNKNOWN_MEMBER_ID = 25,
	KLOG_KERR_INVALID_SESSION_TIMEOUT = 26,
	KLOG_KERR_REBALANCE_IN_PROGRESS = 27,
	KLOG_KERR_TOPIC_AUTHORIZATION_FAILED = 29,
	KLOG_KERR_GROUP_AUTHORIZATION_FAILED = 30,
	KLOG_KERR_CLUSTER_AUTHORIZATION_FAILED = 31,
	KLOG_KERR_UNSUPPORTED_SASL_MECHANISM = 33,
	KLOG_KERR_ILLEGAL_SASL_STATE = 34,
	KLOG_KERR_UNSUPPORTED_VERSION = 35,
	KLOG_KERR_TOPIC_ALREADY_EXISTS = 36,
	KLOG_KERR_INVALID_PARTITIONS = 37,
	KLOG_KERR_INVALID_REPLICATION_FACTOR = 38,
	KLOG_KERR_INVALID_REPLICA_ASSIGNMENT = 39,
	KLOG_KERR_INVALID_CONFIG = 40,
	KLOG_KERR_NOT_CONTROLLER = 41,
	KLOG_KERR_INVALID_REQUEST = 42,
	KLOG_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT = 43,
	KLOG_KERR_POLICY_VIOLATION = 44,
	KLOG_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER = 45,
	KLOG_KERR_INVALID_PRODUCER_EPOCH = 47,
	KLOG_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53,
	KLOG_KERR_KAFKA_STORAGE_ERROR = 56,
	KLOG_KERR_SASL_AUTHENTICATION_FAILED = 58,
	KLOG_KERR_UNKNOWN_PRODUCER_ID = 59,
	KLOG_KERR_NON_EMPTY_GROUP = 68,
	KLOG_KERR_GROUP_ID_NOT_FOUND = 69,
	KLOG_KERR_FETCH_SESSION_ID_NOT_FOUND = 70,
	KLOG_KERR_TOPIC_DELETION_DISABLED = 73,
	KLOG_KERR_UNSUPPORTED_COMPRESSION_TYPE = 76,
	KLOG_KERR_MEMBER_ID_REQUIRED = 79,
};

/* An API key's name in snake case ("list_offsets"), NULL for a key the
 * listener does not speak; an error code's as Kafka spells it,
 * UNKNOWN_SERVER_ERROR for one the listener never sends. */
const char *klog_kwire_api_name(int api);
const char *klog_kwire_error_name(int error);


/* The first version of api in the flexible encoding (KIP-482; its body
 * and header then carry tagged fields); INT16_MAX for none. */
int16_t klog_kwire_first_flexible(int api);

#define KLOG_KWIRE_HEADER_MIN 12   /* size, api, version, correlation */

/*
 * A request: header fields and the body, views into the frame.  The
 * client id is a nullable string (null: len 0, p NULL).
 */
typedef struct klog_kreq {
	uint32_t size;             /* the frame's, without its size field */
	int16_t api, version;
	int32_t correlation;
	int flexible;              /* body (and header) in the flexible
	                              encoding, by the API's version */
	klog_str_t client_id;
	const uint8_t *body;
	size_t body_len;
} klog_kreq_t;

/*
 * The request frame at the start of p[0..len): 0 when it is whole;
 * -KLOG_EPARTIAL when more is needed (r->size is set once the size field
 * is in); -KLOG_ETOOBIG for a size over max; -KLOG_EPROTO for a size that
 * cannot hold a header.  A flexible request's header tags are skipped;
 * an ApiVersions whose header does not parse is taken with an empty body
 * (it is answered by its version alone).
 */
int klog_kwire_frame(const uint8_t *p, size_t len, size_t max, klog_kreq_t *r);

/* A reader of r's body in the encoding of its version. */
void klog_kwire_reader(const klog_kreq_t *r, klog_kprim_rd_t *rd);

/* ---- encoders: onto b, whose errors are sticky ---- */

/* A response frame: size (patched by end) and correlation id. */
size_t klog_kwire_begin(klog_buf_t *b, int32_t correlation);
/* The same for r's answer: a flexible request's response header has tags
 * (v1), but ApiVersions' (v0 always, which a client reads before it knows
 * the versions). */
size_t klog_kwire_begin_resp(klog_buf_t *b, const klog_kreq_t *r);
void klog_kwire_end(klog_buf_t *b, size_t start);

/* A nullable string or bytes (NULL: length -1). */
void klog_kwire_put_str(klog_buf_t *b, klog_str_t s);
void klog_kwire_put_bytes(klog_buf_t *b, const void *p, int32_t len);

/*
 * Responses list partitions under their topics: parts in request order,
 * consecutive ones of one topic under one entry.  begin writes the topic
 * count; part() before each part's fields; end patches the counts.
 */
typedef struct klog_kwire_topics {
	size_t count_pos, parts_pos;
	int32_t ntopics, nparts;
	klog_str_t cur;
} klog_kwire_topics_t;
void klog_kwire_topics_begin(klog_buf_t *b, klog_kwire_topics_t *t);
void klog_kwire_topics_part(klog_buf_t *b, klog_kwire_topics_t *t,
    klog_str_t topic);
void klog_kwire_topics_end(klog_buf_t *b, klog_kwire_topics_t *t);

/* One API of the ApiVersions answer. */
typedef struct klog_kapi_range {
	int16_t api, min, max;
} klog_kapi_range_t;

/* ApiVersions v3's client software name and version (empty before v3). */
int klog_kwire_api_versions_req(const klog_kreq_t *r, klog_str_t *name,
    klog_str_t *version);

/* ApiVersions at version (0-3); the caller answers a version it does not
 * speak at 0 with error 35 and the list (Kafka's downgrade). */
void klog_kwire_api_versions(klog_buf_t *b, int32_t corr, int16_t version,
    int16_t error, const klog_kapi_range_t *apis, size_t n);

/* A broker as Metadata (kwdata.h) and FindCoordinator name it. */
typedef struct klog_kmeta_broker {
	int32_t id;
	klog_str_t host;
	int32_t port;
} klog_kmeta_broker_t;


/* Kafka's error for a KLOG_WIRE_* code. */
int16_t klog_kwire_error_from_wire(int16_t wire);

#endif
