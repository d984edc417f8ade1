/*
 * The Kafka protocol's wire layer; see kwire.h.
 *
 * Decoders read with a sticky reader and check it once at the end; arrays
 * of parts grow as they are read (each part takes a dozen bytes or more of
 * the body, so a request's parts can never outgrow a small multiple of
 * the request itself).
 */
#include <stdint.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kprim.h"
#include "klog/kafka/kwire.h"
#include "klog/storage/format.h"

/* ---- reading ---- */

int16_t
klog_kwire_first_flexible(int api)
{
	/* Kafka's message schemas' "flexibleVersions" (KIP-482). */
	switch (api) {
	case KLOG_KAPI_PRODUCE: return 9;
	case KLOG_KAPI_FETCH: return 12;
	case KLOG_KAPI_LIST_OFFSETS: return 6;
	case KLOG_KAPI_METADATA: return 9;
	case KLOG_KAPI_OFFSET_COMMIT: return 8;
	case KLOG_KAPI_OFFSET_FETCH: return 6;
	case KLOG_KAPI_FIND_COORDINATOR: return 3;
	case KLOG_KAPI_JOIN_GROUP: return 6;
	case KLOG_KAPI_HEARTBEAT: return 4;
	case KLOG_KAPI_LEAVE_GROUP: return 4;
	case KLOG_KAPI_SYNC_GROUP: return 4;
	case KLOG_KAPI_DESCRIBE_GROUPS: return 5;
	case KLOG_KAPI_LIST_GROUPS: return 3;
	case KLOG_KAPI_API_VERSIONS: return 3;
	case KLOG_KAPI_CREATE_TOPICS: return 5;
	case KLOG_KAPI_DELETE_TOPICS: return 4;
	case KLOG_KAPI_INIT_PRODUCER_ID: return 2;
	case KLOG_KAPI_DESCRIBE_CONFIGS: return 4;
	case KLOG_KAPI_SASL_AUTHENTICATE: return 2;
	case KLOG_KAPI_CREATE_PARTITIONS: return 2;
	default: return INT16_MAX;  /* SaslHandshake: never */
	}
}

int
klog_kwire_frame(const uint8_t *p, size_t len, size_t max, klog_kreq_t *r)
{
	klog_kprim_rd_t rd;

	memset(r, 0, sizeof(*r));
	if (len < 4)
		return -KLOG_EPARTIAL;
	r->size = klog_be32(p);
	if (r->size > (uint32_t)INT32_MAX || r->size < KLOG_KWIRE_HEADER_MIN - 4)
		return -KLOG_EPROTO;
	if (r->size > max)
		return -KLOG_ETOOBIG;
	if (len - 4 < r->size)
		return -KLOG_EPARTIAL;
	/* The header's client id is a classic string in every version
	 * (header v1 and v2); v2, a flexible request's, adds tags. */
	klog_kprim_rd_init(&rd, p + 4, r->size, 0);
	r->api = klog_rd_i16(&rd.rd);
	r->version = klog_rd_i16(&rd.rd);
	r->correlation = klog_rd_i32(&rd.rd);
	r->flexible = r->version >= klog_kwire_first_flexible(r->api);
	r->client_id = klog_kprim_nstr(&rd);
	rd.flex = r->flexible;
	klog_kprim_tags(&rd);
	if (rd.rd.failed) {
		/* An ApiVersions the listener cannot read is still answered,
		 * in the v0 layout that tells the client what to send. */
		if (r->api != KLOG_KAPI_API_VERSIONS)
			return -KLOG_EPROTO;
		rd.rd.pos = rd.rd.len;
	}
	r->body = p + 4 + rd.rd.pos;
	r->body_len = r->size - rd.rd.pos;
	return 0;
}

void
klog_kwire_reader(const klog_kreq_t *r, klog_kprim_rd_t *rd)
{
	klog_kprim_rd_init(rd, r->body, r->body_len, r->flexible);
}

/* ---- encoders ---- */

size_t
klog_kwire_begin(klog_buf_t *b, int32_t correlation)
{
	size_t start = b->len;

	klog_buf_put_i32(b, 0);
	klog_buf_put_i32(b, correlation);
	return start;
}

size_t
klog_kwire_begin_resp(klog_buf_t *b, const klog_kreq_t *r)
{
	size_t start = klog_kwire_begin(b, r->correlation);

	klog_kprim_put_tags(b, r->flexible &&
	    r->api != KLOG_KAPI_API_VERSIONS);
	return start;
}

void
klog_kwire_end(klog_buf_t *b, size_t start)
{
	klog_buf_patch_i32(b, start, (int32_t)(b->len - start - 4));
}

void
klog_kwire_put_str(klog_buf_t *b, klog_str_t s)
{
	if (s.p == NULL) {
		klog_buf_put_i16(b, -1);
		return;
	}
	klog_buf_put_str(b, s.p, s.len);
}

void
klog_kwire_put_bytes(klog_buf_t *b, const void *p, int32_t len)
{
	klog_buf_put_i32(b, p == NULL ? -1 : len);
	if (p != NULL && len > 0)
		klog_buf_put(b, p, (size_t)len);
}

void
klog_kwire_topics_begin(klog_buf_t *b, klog_kwire_topics_t *t)
{
	memset(t, 0, sizeof(*t));
	t->count_pos = b->len;
	klog_buf_put_i32(b, 0);
}

static int
str_eq(klog_str_t a, klog_str_t b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

static void
close_topic(klog_buf_t *b, klog_kwire_topics_t *t)
{
	if (t->ntopics > 0)
		klog_buf_patch_i32(b, t->parts_pos, t->nparts);
}

void
klog_kwire_topics_part(klog_buf_t *b, klog_kwire_topics_t *t,
    klog_str_t topic)
{
	if (t->ntopics == 0 || !str_eq(t->cur, topic)) {
		close_topic(b, t);
		t->ntopics++;
		t->cur = topic;
		t->nparts = 0;
		klog_buf_put_str(b, topic.p, topic.len);
		t->parts_pos = b->len;
		klog_buf_put_i32(b, 0);
	}
	t->nparts++;
}

void
klog_kwire_topics_end(klog_buf_t *b, klog_kwire_topics_t *t)
{
	close_topic(b, t);
	klog_buf_patch_i32(b, t->count_pos, t->ntopics);
}

int
klog_kwire_api_versions_req(const klog_kreq_t *r, klog_str_t *name,
    klog_str_t *version)
{
	klog_kprim_rd_t rd;

	*name = *version = (klog_str_t){ "", 0 };
	if (r->version < 3)
		return 0;
	klog_kprim_rd_init(&rd, r->body, r->body_len, 1);
	*name = klog_kprim_str(&rd);
	*version = klog_kprim_str(&rd);
	return klog_kprim_end(&rd);
}

void
klog_kwire_api_versions(klog_buf_t *b, int32_t corr, int16_t version,
    int16_t error, const klog_kapi_range_t *apis, size_t n)
{
	size_t start = klog_kwire_begin(b, corr);
	int flex = version >= 3;

	klog_buf_put_i16(b, error);
	klog_kprim_put_count(b, (int32_t)n, flex);
	for (size_t i = 0; i < n; i++) {
		klog_buf_put_i16(b, apis[i].api);
		klog_buf_put_i16(b, apis[i].min);
		klog_buf_put_i16(b, apis[i].max);
		klog_kprim_put_tags(b, flex);
	}
	if (version >= 1)
		klog_buf_put_i32(b, 0);  /* throttle time */
	klog_kprim_put_tags(b, flex);
	klog_kwire_end(b, start);
}

int16_t
klog_kwire_error_from_wire(int16_t wire)
{
	switch (wire) {
	case KLOG_WIRE_NONE:
		return KLOG_KERR_NONE;
	case KLOG_WIRE_OFFSET_OUT_OF_RANGE:
		return KLOG_KERR_OFFSET_OUT_OF_RANGE;
	case KLOG_WIRE_INVALID_MESSAGE:
	case KLOG_WIRE_PARTIAL_MESSAGE:
		return KLOG_KERR_CORRUPT_MESSAGE;
	case KLOG_WIRE_WRONG_PARTITION:
	case KLOG_WIRE_UNKNOWN_TOPIC:
		return KLOG_KERR_UNKNOWN_TOPIC_OR_PARTITION;
	case KLOG_WIRE_INVALID_FETCH_SIZE:
		return KLOG_KERR_INVALID_FETCH_SIZE;
	case KLOG_WIRE_MESSAGE_TOO_LARGE:
		return KLOG_KERR_MESSAGE_TOO_LARGE;
	case KLOG_WIRE_INVALID_TOPIC:
		return KLOG_KERR_INVALID_TOPIC;
	case KLOG_WIRE_NOT_LEADER:
		return KLOG_KERR_NOT_LEADER_FOR_PARTITION;
	case KLOG_WIRE_NOT_ENOUGH_REPLICAS:
		return KLOG_KERR_NOT_ENOUGH_REPLICAS;
	case KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
		return KLOG_KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND;
	case KLOG_WIRE_INVALID_REQUEST:
		return KLOG_KERR_INVALID_REQUEST;
	case KLOG_WIRE_UNSUPPORTED_CODEC:
		/* Only a Kafka produce's: zstd where its version may not
		 * carry it (ingest checks every other codec). */
		return KLOG_KERR_UNSUPPORTED_COMPRESSION_TYPE;
	case KLOG_WIRE_UNSUPPORTED_VERSION:
		/* Only a part's: a message format it cannot take (magic 2). */
		return KLOG_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT;
	case KLOG_WIRE_STORAGE_ERROR:
	case KLOG_WIRE_DISK_FULL:
		return KLOG_KERR_KAFKA_STORAGE_ERROR;
	case KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED:
		return KLOG_KERR_TOPIC_AUTHORIZATION_FAILED;
	case KLOG_WIRE_CLUSTER_AUTHORIZATION_FAILED:
		return KLOG_KERR_CLUSTER_AUTHORIZATION_FAILED;
	case KLOG_WIRE_OUT_OF_ORDER_SEQUENCE:
		return KLOG_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
	case KLOG_WIRE_INVALID_PRODUCER_EPOCH:
		return KLOG_KERR_INVALID_PRODUCER_EPOCH;
	case KLOG_WIRE_UNKNOWN_PRODUCER_ID:
		return KLOG_KERR_UNKNOWN_PRODUCER_ID;
	default:
		return KLOG_KERR_UNKNOWN;
	}
}

const char *
klog_kwire_api_name(int api)
{
	static const char *const names[] = {
		[KLOG_KAPI_PRODUCE] = "produce",
		[KLOG_KAPI_FETCH] = "fetch",
		[KLOG_KAPI_LIST_OFFSETS] = "list_offsets",
		[KLOG_KAPI_METADATA] = "metadata",
		[KLOG_KAPI_OFFSET_COMMIT] = "offset_commit",
		[KLOG_KAPI_OFFSET_FETCH] = "offset_fetch",
		[KLOG_KAPI_FIND_COORDINATOR] = "find_coordinator",
		[KLOG_KAPI_JOIN_GROUP] = "join_group",
		[KLOG_KAPI_HEARTBEAT] = "heartbeat",
		[KLOG_KAPI_LEAVE_GROUP] = "leave_group",
		[KLOG_KAPI_SYNC_GROUP] = "sync_group",
		[KLOG_KAPI_DESCRIBE_GROUPS] = "describe_groups",
		[KLOG_KAPI_LIST_GROUPS] = "list_groups",
		[KLOG_KAPI_SASL_HANDSHAKE] = "sasl_handshake",
		[KLOG_KAPI_API_VERSIONS] = "api_versions",
		[KLOG_KAPI_CREATE_TOPICS] = "create_topics",
		[KLOG_KAPI_DELETE_TOPICS] = "delete_topics",
		[KLOG_KAPI_INIT_PRODUCER_ID] = "init_producer_id",
		[KLOG_KAPI_DESCRIBE_CONFIGS] = "describe_configs",
		[KLOG_KAPI_SASL_AUTHENTICATE] = "sasl_authenticate",
		[KLOG_KAPI_CREATE_PARTITIONS] = "create_partitions",
	};

	return api >= 0 && (size_t)api < sizeof(names) / sizeof(names[0]) ?
	    names[api] : NULL;
}

const char *
klog_kwire_error_name(int error)
{
	static const char *const names[] = {
		[KLOG_KERR_NONE] = "NONE",
		[KLOG_KERR_OFFSET_OUT_OF_RANGE] = "OFFSET_OUT_OF_RANGE",
		[KLOG_KERR_CORRUPT_MESSAGE] = "CORRUPT_MESSAGE",
		[KLOG_KERR_UNKNOWN_TOPIC_OR_PARTITION] =
		    "UNKNOWN_TOPIC_OR_PARTITION",
		[KLOG_KERR_INVALID_FETCH_SIZE] = "INVALID_FETCH_SIZE",
		[KLOG_KERR_LEADER_NOT_AVAILABLE] = "LEADER_NOT_AVAILABLE",
		[KLOG_KERR_NOT_LEADER_FOR_PARTITION] =
		    "NOT_LEADER_FOR_PARTITION",
		[KLOG_KERR_REQUEST_TIMED_OUT] = "REQUEST_TIMED_OUT",
		[KLOG_KERR_MESSAGE_TOO_LARGE] = "MESSAGE_TOO_LARGE",
		[KLOG_KERR_OFFSET_METADATA_TOO_LARGE] =
		    "OFFSET_METADATA_TOO_LARGE",
		[KLOG_KERR_COORDINATOR_LOAD_IN_PROGRESS] =
		    "COORDINATOR_LOAD_IN_PROGRESS",
		[KLOG_KERR_COORDINATOR_NOT_AVAILABLE] =
		    "COORDINATOR_NOT_AVAILABLE",
		[KLOG_KERR_NOT_COORDINATOR] = "NOT_COORDINATOR",
		[KLOG_KERR_INVALID_TOPIC] = "INVALID_TOPIC_EXCEPTION",
		[KLOG_KERR_RECORD_LIST_TOO_LARGE] = "RECORD_LIST_TOO_LARGE",
		[KLOG_KERR_NOT_ENOUGH_REPLICAS] = "NOT_ENOUGH_REPLICAS",
		[KLOG_KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND] =
		    "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
		[KLOG_KERR_INVALID_REQUIRED_ACKS] = "INVALID_REQUIRED_ACKS",
		[KLOG_KERR_ILLEGAL_GENERATION] = "ILLEGAL_GENERATION",
		[KLOG_KERR_INCONSISTENT_GROUP_PROTOCOL] =
		    "INCONSISTENT_GROUP_PROTOCOL",
		[KLOG_KERR_INVALID_GROUP_ID] = "INVALID_GROUP_ID",
		[KLOG_KERR_UNKNOWN_MEMBER_ID] = "UNKNOWN_MEMBER_ID",
		[KLOG_KERR_INVALID_SESSION_TIMEOUT] =
		    "INVALID_SESSION_TIMEOUT",
		[KLOG_KERR_REBALANCE_IN_PROGRESS] = "REBALANCE_IN_PROGRESS",
		[KLOG_KERR_TOPIC_AUTHORIZATION_FAILED] =
		    "TOPIC_AUTHORIZATION_FAILED",
		[KLOG_KERR_GROUP_AUTHORIZATION_FAILED] =
		    "GROUP_AUTHORIZATION_FAILED",
		[KLOG_KERR_CLUSTER_AUTHORIZATION_FAILED] =
		    "CLUSTER_AUTHORIZATION_FAILED",
		[KLOG_KERR_UNSUPPORTED_SASL_MECHANISM] =
		    "UNSUPPORTED_SASL_MECHANISM",
		[KLOG_KERR_ILLEGAL_SASL_STATE] = "ILLEGAL_SASL_STATE",
		[KLOG_KERR_UNSUPPORTED_VERSION] = "UNSUPPORTED_VERSION",
		[KLOG_KERR_TOPIC_ALREADY_EXISTS] = "TOPIC_ALREADY_EXISTS",
		[KLOG_KERR_INVALID_PARTITIONS] = "INVALID_PARTITIONS",
		[KLOG_KERR_INVALID_REPLICATION_FACTOR] =
		    "INVALID_REPLICATION_FACTOR",
		[KLOG_KERR_INVALID_REPLICA_ASSIGNMENT] =
		    "INVALID_REPLICA_ASSIGNMENT",
		[KLOG_KERR_INVALID_CONFIG] = "INVALID_CONFIG",
		[KLOG_KERR_NOT_CONTROLLER] = "NOT_CONTROLLER",
		[KLOG_KERR_INVALID_REQUEST] = "INVALID_REQUEST",
		[KLOG_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT] =
		    "UNSUPPORTED_FOR_MESSAGE_FORMAT",
		[KLOG_KERR_POLICY_VIOLATION] = "POLICY_VIOLATION",
		[KLOG_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER] =
		    "OUT_OF_ORDER_SEQUENCE_NUMBER",
		[KLOG_KERR_INVALID_PRODUCER_EPOCH] = "INVALID_PRODUCER_EPOCH",
		[KLOG_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED] =
		    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
		[KLOG_KERR_KAFKA_STORAGE_ERROR] = "KAFKA_STORAGE_ERROR",
		[KLOG_KERR_SASL_AUTHENTICATION_FAILED] =
		    "SASL_AUTHENTICATION_FAILED",
		[KLOG_KERR_UNKNOWN_PRODUCER_ID] = "UNKNOWN_PRODUCER_ID",
		[KLOG_KERR_NON_EMPTY_GROUP] = "NON_EMPTY_GROUP",
		[KLOG_KERR_GROUP_ID_NOT_FOUND] = "GROUP_ID_NOT_FOUND",
		[KLOG_KERR_TOPIC_DELETION_DISABLED] = "TOPIC_DELETION_DISABLED",
		[KLOG_KERR_FETCH_SESSION_ID_NOT_FOUND] =
		    "FETCH_SESSION_ID_NOT_FOUND",
		[KLOG_KERR_UNSUPPORTED_COMPRESSION_TYPE] =
		    "UNSUPPORTED_COMPRESSION_TYPE",
		[KLOG_KERR_MEMBER_ID_REQUIRED] = "MEMBER_ID_REQUIRED",
	};

	if (error < 0 || (size_t)error >= sizeof(names) / sizeof(names[0]) ||
	    names[error] == NULL)
		return "UNKNOWN_SERVER_ERROR";
	return names[error];
}
