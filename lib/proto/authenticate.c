/*
 * AUTHENTICATE on the wire: one SASL message each way, the mechanism
 * named in every request so that a broker needs no state to read one.
 * What the messages say is lib/auth's (PLAIN, SCRAM); the broker's side
 * of the exchange is the native front end's, the client's client.c's.
 */
#include <stdint.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"

#include "proto_impl.h"

/* A mechanism's name is a SASL name: at most 20 characters (RFC 4422). */
#define MECH_MAX 20

int
klog_proto_encode_auth(klog_buf_t *b, int32_t correlation,
    const klog_auth_req_t *req)
{
	size_t start;

	if (req->mechanism.len == 0 || req->mechanism.len > MECH_MAX ||
	    req->len > KLOG_AUTH_BYTES_MAX)
		return -KLOG_EINVAL;
	start = proto_req_begin(b, KLOG_API_AUTHENTICATE, correlation);
	put_str(b, req->mechanism);
	klog_buf_put_i32(b, (int32_t)req->len);
	klog_buf_put(b, req->bytes, req->len);
	return proto_finish(b, start);
}

int
klog_proto_decode_auth(const uint8_t *body, size_t len, klog_auth_req_t *req)
{
	klog_rd_t r;
	int rc;

	memset(req, 0, sizeof(*req));
	klog_rd_init(&r, body, len);
	rd_topic(&r, &req->mechanism);
	req->bytes = rd_set(&r, &req->len);
	if ((rc = rd_end(&r)) < 0)
		return rc;
	if (req->mechanism.len == 0 || req->mechanism.len > MECH_MAX)
		return -KLOG_EPROTO;
	return req->len > KLOG_AUTH_BYTES_MAX ? -KLOG_ETOOBIG : 0;
}

int
klog_proto_encode_auth_resp(klog_buf_t *b, int32_t correlation,
    int16_t error, const uint8_t *bytes, uint32_t len)
{
	size_t start;

	if (error == KLOG_WIRE_NONE && len > KLOG_AUTH_BYTES_MAX)
		return -KLOG_EINVAL;
	start = proto_resp_begin(b, correlation, error);
	/* An error has no body, as every header error. */
	if (error == KLOG_WIRE_NONE) {
		klog_buf_put_i32(b, (int32_t)len);
		klog_buf_put(b, bytes, len);
	}
	return proto_finish(b, start);
}

int
klog_proto_decode_auth_resp(const uint8_t *body, size_t len,
    const uint8_t **bytes, uint32_t *n)
{
	klog_rd_t r;
	int rc;

	klog_rd_init(&r, body, len);
	*bytes = rd_set(&r, n);
	if ((rc = rd_end(&r)) < 0)
		return rc;
	return *n > KLOG_AUTH_BYTES_MAX ? -KLOG_ETOOBIG : 0;
}
