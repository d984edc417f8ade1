/*
 * INIT_PRODUCER on the wire: an idempotent producer's id and epoch
 * (proto.h).  Request body: producerId:8 epoch:2; answer body the same,
 * after the response header's error.
 */
#include <stdint.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"

#include "proto_impl.h"

/* Both -1 (none yet), or an id and an epoch. */
static int
pid_ok(const klog_producer_id_t *id)
{
	if (id->producer_id < -1 || id->epoch < -1)
		return 0;
	return (id->producer_id == -1) == (id->epoch == -1);
}

static void
put_id(klog_buf_t *b, const klog_producer_id_t *id)
{
	klog_buf_put_i64(b, id->producer_id);
	klog_buf_put_i16(b, id->epoch);
}

static int
rd_id(const uint8_t *body, size_t len, klog_producer_id_t *id)
{
	klog_rd_t r;
	int rc;

	klog_rd_init(&r, body, len);
	id->producer_id = klog_rd_i64(&r);
	id->epoch = klog_rd_i16(&r);
	if ((rc = rd_end(&r)) < 0)
		return rc;
	return pid_ok(id) ? 0 : -KLOG_EPROTO;
}

int
klog_proto_encode_init_producer(klog_buf_t *b, int32_t correlation,
    const klog_producer_id_t *req)
{
	size_t start;

	if (!pid_ok(req))
		return -KLOG_EINVAL;
	start = proto_req_begin(b, KLOG_API_INIT_PRODUCER, correlation);
	put_id(b, req);
	return proto_finish(b, start);
}

int
klog_proto_decode_init_producer(const uint8_t *body, size_t len,
    klog_producer_id_t *req)
{
	return rd_id(body, len, req);
}

int
klog_proto_encode_init_producer_resp(klog_buf_t *b, int32_t correlation,
    int16_t error, const klog_producer_id_t *res)
{
	size_t start;

	if (!pid_ok(res) || (error != KLOG_WIRE_NONE) !=
	    (res->producer_id == -1))
		return -KLOG_EINVAL;
	start = proto_resp_begin(b, correlation, error);
	put_id(b, res);
	return proto_finish(b, start);
}

int
klog_proto_decode_init_producer_resp(const uint8_t *body, size_t len,
    klog_producer_id_t *res)
{
	return rd_id(body, len, res);
}
