/*
 * CREATE_TOPIC, ALTER_TOPIC and DELETE_TOPIC on the wire: a standalone
 * broker's topic administration, one topic per request (a replicated
 * topic is administered in ZooKeeper).  The three share one layout,
 * DELETE_TOPIC's without the count, so one encoder and one decoder take
 * the api, and one answer serves all three.
 */
#include <stdint.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"

#include "proto_impl.h"

/* ---- CREATE_TOPIC, ALTER_TOPIC, DELETE_TOPIC ---- */

static int
admin_api(int16_t api)
{
	return api == KLOG_API_CREATE_TOPIC || api == KLOG_API_ALTER_TOPIC ||
	    api == KLOG_API_DELETE_TOPIC;
}

int
klog_proto_encode_topic_admin(klog_buf_t *b, int16_t api, int32_t correlation,
    const klog_topic_admin_t *req)
{
	size_t start;

	if (!admin_api(api) || !str_ok(req->topic) ||
	    (api != KLOG_API_DELETE_TOPIC && req->partitions < 0))
		return -KLOG_EINVAL;
	start = proto_req_begin(b, api, correlation);
	put_str(b, req->topic);
	if (api != KLOG_API_DELETE_TOPIC)
		klog_buf_put_i32(b, req->partitions);
	return proto_finish(b, start);
}

int
klog_proto_decode_topic_admin(int16_t api, const uint8_t *body, size_t len,
    klog_topic_admin_t *req)
{
	klog_rd_t r;

	memset(req, 0, sizeof(*req));
	if (!admin_api(api))
		return -KLOG_EINVAL;
	klog_rd_init(&r, body, len);
	rd_topic(&r, &req->topic);
	if (api != KLOG_API_DELETE_TOPIC)
		req->partitions = (int32_t)rd_size(&r);
	return rd_end(&r);
}

int
klog_proto_encode_topic_admin_resp(klog_buf_t *b, int32_t correlation,
    const klog_topic_admin_resp_t *res)
{
	size_t start;

	if (!str_ok(res->topic) || res->partitions < 0)
		return -KLOG_EINVAL;
	start = proto_resp_begin(b, correlation, KLOG_WIRE_NONE);
	put_str(b, res->topic);
	klog_buf_put_i16(b, res->error);
	klog_buf_put_i32(b, res->partitions);
	return proto_finish(b, start);
}

int
klog_proto_decode_topic_admin_resp(const uint8_t *body, size_t len,
    klog_topic_admin_resp_t *res)
{
	klog_rd_t r;

	memset(res, 0, sizeof(*res));
	klog_rd_init(&r, body, len);
	rd_topic(&r, &res->topic);
	res->error = klog_rd_i16(&r);
	res->partitions = (int32_t)rd_size(&r);
	return rd_end(&r);
}
