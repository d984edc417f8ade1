/*
 * The wire protocol's common part: the wire error codes and the API names,
 * framing, and closing the frame an encoder wrote (proto_finish).  The
 * encoders and decoders of each group of APIs are in files of their own
 * beside this one (produce.c, fetch.c, offsets.c, metadata.c,
 * topicadmin.c, authenticate.c), sharing the readers and writers of proto_impl.h; they call
 * this file, never the reverse.  Layouts are drawn in
 * include/klog/proto/proto.h and man/klog-protocol.7.
 *
 * Decoders read through a sticky klog_rd_t and check it once at the end, so
 * a short body can never be read past.  They run on bytes straight from the
 * network: nothing is allocated (the _grow wrappers size the caller's array
 * first, from a count checked against the body's length), every count is
 * checked against the caller's array before an entry is stored, and results
 * are views into the body.
 * Encoders validate their input before writing, so an -KLOG_EINVAL leaves
 * the buffer as it was.
 */
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"

#include "proto_impl.h"

static const char *const wire_names[KLOG_WIRE_ERROR_MAX] = {
	[KLOG_WIRE_NONE] = "NONE",
	[KLOG_WIRE_OFFSET_OUT_OF_RANGE] = "OFFSET_OUT_OF_RANGE",
	[KLOG_WIRE_INVALID_MESSAGE] = "INVALID_MESSAGE",
	[KLOG_WIRE_WRONG_PARTITION] = "WRONG_PARTITION",
	[KLOG_WIRE_INVALID_FETCH_SIZE] = "INVALID_FETCH_SIZE",
	[KLOG_WIRE_MESSAGE_TOO_LARGE] = "MESSAGE_TOO_LARGE",
	[KLOG_WIRE_INVALID_TOPIC] = "INVALID_TOPIC",
	[KLOG_WIRE_UNKNOWN_TOPIC] = "UNKNOWN_TOPIC",
	[KLOG_WIRE_NOT_BOUNDARY] = "NOT_BOUNDARY",
	[KLOG_WIRE_STORAGE_ERROR] = "STORAGE_ERROR",
	[KLOG_WIRE_DISK_FULL] = "DISK_FULL",
	[KLOG_WIRE_INVALID_REQUEST] = "INVALID_REQUEST",
	[KLOG_WIRE_UNSUPPORTED_VERSION] = "UNSUPPORTED_VERSION",
	[KLOG_WIRE_UNKNOWN_API] = "UNKNOWN_API",
	[KLOG_WIRE_REQUEST_TOO_LARGE] = "REQUEST_TOO_LARGE",
	[KLOG_WIRE_UNSUPPORTED_CODEC] = "UNSUPPORTED_CODEC",
	[KLOG_WIRE_PARTIAL_MESSAGE] = "PARTIAL_MESSAGE",
	[KLOG_WIRE_NOT_LEADER] = "NOT_LEADER",
	[KLOG_WIRE_NOT_ENOUGH_REPLICAS] = "NOT_ENOUGH_REPLICAS",
	[KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND] =
	    "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
	[KLOG_WIRE_FENCED_LEADER_EPOCH] = "FENCED_LEADER_EPOCH",
	[KLOG_WIRE_TOPIC_EXISTS] = "TOPIC_EXISTS",
	[KLOG_WIRE_INVALID_PARTITIONS] = "INVALID_PARTITIONS",
	[KLOG_WIRE_TOPIC_REPLICATED] = "TOPIC_REPLICATED",
	[KLOG_WIRE_AUTHENTICATION_REQUIRED] = "AUTHENTICATION_REQUIRED",
	[KLOG_WIRE_AUTHENTICATION_FAILED] = "AUTHENTICATION_FAILED",
	[KLOG_WIRE_UNSUPPORTED_MECHANISM] = "UNSUPPORTED_MECHANISM",
	[KLOG_WIRE_ILLEGAL_AUTH_STATE] = "ILLEGAL_AUTH_STATE",
	[KLOG_WIRE_CLUSTER_AUTHORIZATION_FAILED] =
	    "CLUSTER_AUTHORIZATION_FAILED",
	[KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED] = "TOPIC_AUTHORIZATION_FAILED",
	[KLOG_WIRE_OUT_OF_ORDER_SEQUENCE] = "OUT_OF_ORDER_SEQUENCE_NUMBER",
	[KLOG_WIRE_INVALID_PRODUCER_EPOCH] = "INVALID_PRODUCER_EPOCH",
	[KLOG_WIRE_UNKNOWN_PRODUCER_ID] = "UNKNOWN_PRODUCER_ID",
};

const char *
klog_wire_error_text(int code)
{
	switch (code) {
	case KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED:
		return "not authorized (TOPIC_AUTHORIZATION_FAILED)";
	case KLOG_WIRE_CLUSTER_AUTHORIZATION_FAILED:
		return "not authorized (CLUSTER_AUTHORIZATION_FAILED)";
	default:
		return klog_wire_error_name(code);
	}
}

const char *
klog_wire_error_name(int code)
{
	if (code < 0 || code >= KLOG_WIRE_ERROR_MAX || wire_names[code] == NULL)
		return "UNKNOWN";
	return wire_names[code];
}

int
klog_wire_error_to_klog(int code)
{
	switch (code) {
	case KLOG_WIRE_NONE:
		return 0;
	case KLOG_WIRE_OFFSET_OUT_OF_RANGE:
		return -KLOG_ERANGE;
	case KLOG_WIRE_INVALID_MESSAGE:
		return -KLOG_ECORRUPT;
	case KLOG_WIRE_WRONG_PARTITION:
		return -KLOG_ENOPARTITION;
	case KLOG_WIRE_INVALID_FETCH_SIZE:
		return -KLOG_EINVAL;
	case KLOG_WIRE_MESSAGE_TOO_LARGE:
	case KLOG_WIRE_REQUEST_TOO_LARGE:
		return -KLOG_ETOOBIG;
	case KLOG_WIRE_INVALID_TOPIC:
		return -KLOG_ETOPIC;
	case KLOG_WIRE_UNKNOWN_TOPIC:
		return -KLOG_ENOTOPIC;
	case KLOG_WIRE_NOT_BOUNDARY:
		return -KLOG_ENOTBOUNDARY;
	case KLOG_WIRE_STORAGE_ERROR:
		return -KLOG_EIO;
	case KLOG_WIRE_DISK_FULL:
		return -KLOG_ENOSPC;
	case KLOG_WIRE_INVALID_REQUEST:
		return -KLOG_EPROTO;
	case KLOG_WIRE_UNSUPPORTED_VERSION:
	case KLOG_WIRE_UNKNOWN_API:
	case KLOG_WIRE_UNSUPPORTED_CODEC:
		return -KLOG_EUNSUPPORTED;
	case KLOG_WIRE_PARTIAL_MESSAGE:
		return -KLOG_EPARTIAL;
	case KLOG_WIRE_NOT_LEADER:
		return -KLOG_ENOTLEADER;
	case KLOG_WIRE_NOT_ENOUGH_REPLICAS:
	case KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
		return -KLOG_ENOREPLICAS;
	case KLOG_WIRE_FENCED_LEADER_EPOCH:
		return -KLOG_EFENCED;
	case KLOG_WIRE_TOPIC_EXISTS:
		return -KLOG_EEXIST;
	case KLOG_WIRE_INVALID_PARTITIONS:
		return -KLOG_EINVAL;
	case KLOG_WIRE_TOPIC_REPLICATED:
		return -KLOG_EBUSY;
	case KLOG_WIRE_AUTHENTICATION_REQUIRED:
	case KLOG_WIRE_AUTHENTICATION_FAILED:
	case KLOG_WIRE_UNSUPPORTED_MECHANISM:
	case KLOG_WIRE_ILLEGAL_AUTH_STATE:
		return -KLOG_EAUTH;
	case KLOG_WIRE_CLUSTER_AUTHORIZATION_FAILED:
	case KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED:
		return -KLOG_EDENIED;
	default:
		return -KLOG_EBROKER;
	}
}

/*
 * Several wire codes share a library code; the reverse picks the one a
 * broker means when the library returns it from an append or a read (an
 * unsupported API or version is answered from the header, not from here).
 */
int
klog_wire_error_from_klog(int err)
{
	switch (err < 0 ? -err : err) {
	case KLOG_OK:
		return KLOG_WIRE_NONE;
	case KLOG_ERANGE:
		return KLOG_WIRE_OFFSET_OUT_OF_RANGE;
	case KLOG_ECORRUPT:
		return KLOG_WIRE_INVALID_MESSAGE;
	case KLOG_ENOPARTITION:
		return KLOG_WIRE_WRONG_PARTITION;
	case KLOG_EINVAL:
		return KLOG_WIRE_INVALID_FETCH_SIZE;
	case KLOG_ETOOBIG:
		return KLOG_WIRE_MESSAGE_TOO_LARGE;
	case KLOG_ETOPIC:
		return KLOG_WIRE_INVALID_TOPIC;
	case KLOG_ENOTOPIC:
		return KLOG_WIRE_UNKNOWN_TOPIC;
	case KLOG_ENOTBOUNDARY:
		return KLOG_WIRE_NOT_BOUNDARY;
	case KLOG_EIO:
	case KLOG_ESTORAGE:
		return KLOG_WIRE_STORAGE_ERROR;
	case KLOG_ENOSPC:
		return KLOG_WIRE_DISK_FULL;
	case KLOG_EPROTO:
		return KLOG_WIRE_INVALID_REQUEST;
	case KLOG_EUNSUPPORTED:
		return KLOG_WIRE_UNSUPPORTED_CODEC;
	case KLOG_EPARTIAL:
		return KLOG_WIRE_PARTIAL_MESSAGE;
	case KLOG_ENOTLEADER:
		return KLOG_WIRE_NOT_LEADER;
	case KLOG_ENOREPLICAS:
		return KLOG_WIRE_NOT_ENOUGH_REPLICAS;
	case KLOG_EFENCED:
		return KLOG_WIRE_FENCED_LEADER_EPOCH;
	case KLOG_EAUTH:
		return KLOG_WIRE_AUTHENTICATION_FAILED;
	default:
		return KLOG_WIRE_UNKNOWN;
	}
}

const char *
klog_proto_api_name(int api)
{
	switch (api) {
	case KLOG_API_PRODUCE:
		return "PRODUCE";
	case KLOG_API_FETCH:
		return "FETCH";
	case KLOG_API_OFFSETS:
		return "OFFSETS";
	case KLOG_API_METADATA:
		return "METADATA";
	case KLOG_API_REPLICA_FETCH:
		return "REPLICA_FETCH";
	case KLOG_API_REPLICA_POS:
		return "REPLICA_POS";
	case KLOG_API_CREATE_TOPIC:
		return "CREATE_TOPIC";
	case KLOG_API_ALTER_TOPIC:
		return "ALTER_TOPIC";
	case KLOG_API_DELETE_TOPIC:
		return "DELETE_TOPIC";
	case KLOG_API_AUTHENTICATE:
		return "AUTHENTICATE";
	case KLOG_API_INIT_PRODUCER:
		return "INIT_PRODUCER";
	default:
		return "UNKNOWN";
	}
}

/* ---- framing ---- */

/*
 * The size field alone decides whether a frame is acceptable, so it is
 * judged as soon as its 4 bytes are in: a peer sending a bad size is not
 * left waiting for the rest of a header.
 */
static int
frame_size(const uint8_t *buf, size_t len, size_t max_size, int32_t min,
    int32_t *size)
{
	klog_rd_t r;
	int32_t s;

	if (len < 4)
		return -KLOG_EPARTIAL;
	klog_rd_init(&r, buf, len);
	s = klog_rd_i32(&r);
	if (s < min)
		return -KLOG_EPROTO;
	if ((uint32_t)s > max_size)
		return -KLOG_ETOOBIG;
	*size = s;
	return 0;
}

int
klog_proto_req_header(const uint8_t *buf, size_t len, size_t max_size,
    klog_req_header_t *h)
{
	klog_rd_t r;
	int rc;

	if ((rc = frame_size(buf, len, max_size, KLOG_REQ_HEADER_SIZE - 4,
	    &h->size)) < 0)
		return rc;
	if (len < KLOG_REQ_HEADER_SIZE)
		return -KLOG_EPARTIAL;
	klog_rd_init(&r, buf + 4, KLOG_REQ_HEADER_SIZE - 4);
	h->api = klog_rd_i16(&r);
	h->version = klog_rd_i16(&r);
	h->correlation = klog_rd_i32(&r);
	return 0;
}

int
klog_proto_resp_header(const uint8_t *buf, size_t len, size_t max_size,
    klog_resp_header_t *h)
{
	klog_rd_t r;
	int rc;

	if ((rc = frame_size(buf, len, max_size, KLOG_RESP_HEADER_SIZE - 4,
	    &h->size)) < 0)
		return rc;
	if (len < KLOG_RESP_HEADER_SIZE)
		return -KLOG_EPARTIAL;
	klog_rd_init(&r, buf + 4, KLOG_RESP_HEADER_SIZE - 4);
	h->correlation = klog_rd_i32(&r);
	h->error = klog_rd_i16(&r);
	return 0;
}

size_t
klog_proto_req_begin(klog_buf_t *b, int16_t api, int32_t correlation)
{
	return proto_req_begin(b, api, correlation);
}

size_t
klog_proto_resp_begin(klog_buf_t *b, int32_t correlation, int16_t error)
{
	return proto_resp_begin(b, correlation, error);
}

void
klog_proto_end(klog_buf_t *b, size_t start)
{
	size_t size;

	if (b->failed || start > b->len || b->len - start < 4)
		return;
	size = b->len - start - 4;
	if (size > INT32_MAX) {
		b->failed = 1;
		return;
	}
	klog_buf_patch_i32(b, start, (int32_t)size);
}

/*
 * Close a frame an encoder wrote.  A frame too big for its size field is
 * taken back out of the buffer rather than left half-described.
 */
int
proto_finish(klog_buf_t *b, size_t start)
{
	if (b->failed)
		return -KLOG_ENOMEM;
	if (b->len - start - 4 > INT32_MAX) {
		b->len = start;
		return -KLOG_ETOOBIG;
	}
	klog_proto_end(b, start);
	return 0;
}

int32_t
klog_proto_peek_correlation(const uint8_t *frame, size_t len)
{
	/* After size (4), api (2) and version (2). */
	return len >= KLOG_REQ_HEADER_SIZE ? (int32_t)klog_be32(frame + 8) : 0;
}
