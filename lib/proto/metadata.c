/*
 * METADATA on the wire: the topics asked about (none: all of them), and
 * the answer: the brokers the answering one knows and each topic's
 * partition count on it, which a client decodes into arrays of its own.
 */
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"

#include "proto_impl.h"

/* ---- METADATA ---- */

int
klog_proto_encode_metadata(klog_buf_t *b, int32_t correlation,
    const klog_str_t *topics, uint32_t n)
{
	size_t start;

	if (n > INT32_MAX)
		return -KLOG_EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (!str_ok(topics[i]))
			return -KLOG_EINVAL;
	start = proto_req_begin(b, KLOG_API_METADATA, correlation);
	klog_buf_put_i32(b, (int32_t)n);
	for (uint32_t i = 0; i < n; i++)
		put_str(b, topics[i]);
	return proto_finish(b, start);
}

int
klog_proto_decode_metadata(const uint8_t *body, size_t len,
    klog_str_t *topics, uint32_t max, uint32_t *n)
{
	klog_rd_t r;
	uint32_t count;
	int rc;

	klog_rd_init(&r, body, len);
	if ((rc = rd_count(&r, max, &count)) < 0)
		return rc;
	for (uint32_t i = 0; i < count && !r.failed; i++)
		rd_topic(&r, &topics[i]);
	if ((rc = rd_end(&r)) < 0)
		return rc;
	*n = count;
	return 0;
}

int
klog_proto_encode_metadata_resp(klog_buf_t *b, int32_t correlation,
    const klog_metadata_t *md)
{
	size_t start;

	if (md->nbrokers > INT32_MAX || md->ntopics > INT32_MAX)
		return -KLOG_EINVAL;
	for (uint32_t i = 0; i < md->nbrokers; i++)
		if (!str_ok(md->brokers[i].host))
			return -KLOG_EINVAL;
	for (uint32_t i = 0; i < md->ntopics; i++)
		if (!str_ok(md->topics[i].topic))
			return -KLOG_EINVAL;
	start = proto_resp_begin(b, correlation, KLOG_WIRE_NONE);
	klog_buf_put_i32(b, md->broker_id);
	klog_buf_put_i32(b, (int32_t)md->nbrokers);
	for (uint32_t i = 0; i < md->nbrokers; i++) {
		klog_buf_put_i32(b, md->brokers[i].id);
		put_str(b, md->brokers[i].host);
		klog_buf_put_i32(b, md->brokers[i].port);
	}
	klog_buf_put_i32(b, (int32_t)md->ntopics);
	for (uint32_t i = 0; i < md->ntopics; i++) {
		klog_buf_put_i16(b, md->topics[i].error);
		put_str(b, md->topics[i].topic);
		klog_buf_put_i32(b, md->topics[i].partitions);
		klog_buf_put_i32(b, md->topics[i].broker_id);
	}
	return proto_finish(b, start);
}

int
klog_proto_decode_metadata_resp(const uint8_t *body, size_t len,
    klog_metadata_t *md, klog_meta_broker_t *brokers, uint32_t max_brokers,
    klog_meta_topic_t *topics, uint32_t max_topics)
{
	klog_rd_t r;
	int32_t broker_id;
	uint32_t nbrokers, ntopics;
	int rc;

	klog_rd_init(&r, body, len);
	broker_id = klog_rd_i32(&r);
	if ((rc = rd_count(&r, max_brokers, &nbrokers)) < 0)
		return rc;
	for (uint32_t i = 0; i < nbrokers && !r.failed; i++) {
		brokers[i].id = klog_rd_i32(&r);
		rd_topic(&r, &brokers[i].host);
		brokers[i].port = klog_rd_i32(&r);
	}
	if ((rc = rd_count(&r, max_topics, &ntopics)) < 0)
		return rc;
	for (uint32_t i = 0; i < ntopics && !r.failed; i++) {
		topics[i].error = klog_rd_i16(&r);
		rd_topic(&r, &topics[i].topic);
		topics[i].partitions = (int32_t)rd_size(&r);
		topics[i].broker_id = klog_rd_i32(&r);
	}
	if ((rc = rd_end(&r)) < 0)
		return rc;
	md->broker_id = broker_id;
	md->nbrokers = nbrokers;
	md->brokers = brokers;
	md->ntopics = ntopics;
	md->topics = topics;
	return 0;
}

/* ---- decoding into an array that grows ---- */

/* The count field comes first; an entry takes at least a topic (2). */
#define METADATA_ENTRY_MIN 2

int
klog_proto_decode_metadata_grow(const uint8_t *body, size_t len,
    klog_proto_array_t *a, uint32_t *got)
{
	int64_t n = peek_count(body, len, 0, METADATA_ENTRY_MIN);
	int rc;

	if ((rc = array_fit(a, n, sizeof(klog_str_t))) < 0)
		return rc;
	return klog_proto_decode_metadata(body, len, a->p, (uint32_t)n, got);
}
