/*
 * The Kafka protocol's front end; see kafka.h.  This file frames requests
 * and answers ApiVersions, Produce, Fetch and ListOffsets; Metadata is in
 * kmetadata.c, the group APIs in groups.c.
 *
 * Produce: each partition's MessageSet (kmsg.h) or record batches
 * (kbatch.h, each kept as one magic-2 entry) become a klog set in a buffer
 * of its request, which the core stages and writes at klog_core_commit(),
 * as the native front end's sets in the read buffer.
 * Fetch: the core's slices of the log, answered by kfetch.c.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_impl.h"
#include "klog/base/buf.h"
#include "klog/base/clock.h"
#include "klog/kafka/kbatch.h"
#include "klog/kafka/kmsg.h"
#include "klog/kafka/kserve.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define MAX_INFLATE ((size_t)64 << 20)    /* of one compressed wrapper */
/* What one read's produce requests may decompress to, together: a
 * request of compressed sets is bounded by its size, its 0.7 sets only by
 * this. */
#define INGEST_MAX ((size_t)256 << 20)
/* Buffers past this are freed after use rather than kept for the next
 * request, so one large request does not pin its memory for good. */
#define KEEP_BYTES ((size_t)4 << 20)

static klog_core_item_t *
scratch_items(klog_kafka_t *k, uint32_t count)
{
	if (klog_buf_grow((void **)&k->items, &k->items_cap,
	    ((size_t)count + 1) * sizeof(klog_core_item_t)) < 0)
		return NULL;
	return k->items;
}

/* ---- authorization ---- */

/*
 * The parts (n of size bytes, a topic first in each) of topics the
 * principal may do op on, moved in front (authz.h); their count, or -1
 * out of memory.
 */
static int
split_allowed(klog_kafka_t *k, klog_acl_op_t op, void *parts, size_t size,
    uint32_t n)
{
	klog_connauth_t *a;
	int rc;

	if (k->cfg.authz == NULL)
		return (int)n;
	a = klog_conn_auth(k->conn);
	rc = klog_authz_split(k->cfg.authz, klog_connauth_principal(a),
	    klog_connauth_host(a), op, parts, size, 0, n);
	return rc < 0 ? -1 : rc;
}

/* ---- produce ---- */

static void
patch_result(void *arg, size_t pos, int16_t error)
{
	klog_kwdata_patch_produce(arg, pos, klog_kwire_error_from_wire(error));
}

/* Write what this read staged, then reuse its buffers. */
static void
commit(klog_kafka_t *k)
{
	klog_core_commit(k->core, patch_result, klog_outq_buf(k->q));
	for (size_t i = 0; i < k->nblocks; i++) {
		if (k->blocks[i].cap > KEEP_BYTES)
			klog_buf_free(&k->blocks[i]);
		klog_buf_reset(&k->blocks[i]);
	}
	k->nblocks = 0;
	k->ingested = 0;
}

/* A buffer for the 0.7 sets of one request, alive until the commit. */
static klog_buf_t *
next_block(klog_kafka_t *k)
{
	if (k->nblocks == k->blocks_cap) {
		size_t cap = k->blocks_cap ? 2 * k->blocks_cap : 8;
		klog_buf_t *b = realloc(k->blocks, cap * sizeof(*b));

		if (b == NULL)
			return NULL;
		for (size_t i = k->blocks_cap; i < cap; i++)
			klog_buf_init(&b[i]);
		k->blocks = b;
		k->blocks_cap = cap;
	}
	return &k->blocks[k->nblocks++];
}

static int
trusted(void *arg, const klog_produce_part_t *pp)
{
	(void)arg;
	(void)pp;
	/* The entries were just encoded here, CRCs and all, and ingest read
	 * every record of a batch (kbatch.h), inflated within the core's
	 * 64 MiB: a compressed batch is not inflated a second time. */
	return KLOG_CORE_TRUST_CRC | KLOG_CORE_TRUST_RECORDS;
}

/* A produce response from items: a part's Kafka base offset is its first
 * message's (item max holds it less the set's offset); append_time the
 * LogAppendTime its batches were stamped with, or -1. */
static void
encode_produce(klog_kafka_t *k, klog_buf_t *out, int16_t version,
    int32_t corr, const klog_core_item_t *items, uint32_t n,
    int64_t append_time, size_t *errpos)
{
	klog_kproduce_res_t *r;

	if (klog_buf_grow((void **)&k->results, &k->results_cap,
	    ((size_t)n + 1) * sizeof(*r)) < 0) {
		out->failed = 1;
		return;
	}
	r = k->results;
	for (uint32_t i = 0; i < n; i++)
		r[i] = (klog_kproduce_res_t){ items[i].topic,
		    items[i].partition,
		    klog_kwire_error_from_wire(items[i].error),
		    items[i].offset + items[i].max,
		    version >= 5 ? klog_core_item_log_start(&items[i]) : -1,
		    append_time };
	for (uint32_t i = 0; i < n; i++)
		kafka_note_error(k, r[i].error);
	klog_kwdata_produce_resp(out, corr, version, r, n, errpos);
}

/* Why a produce to topic is refused: WRITE on it, and CREATE when the
 * produce would create it; KLOG_WIRE_NONE when it is not. */
static int16_t
produce_refusal(klog_kafka_t *k, klog_str_t topic)
{
	int parts;

	if (k->cfg.authz == NULL)
		return KLOG_WIRE_NONE;
	if (!kafka_may(k, KLOG_ACL_WRITE, KLOG_ACL_TOPIC, topic) ||
	    (klog_core_topic_meta(k->core, topic, &parts) ==
	    KLOG_WIRE_UNKNOWN_TOPIC && !kafka_may_create(k, topic)))
		return KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED;
	return KLOG_WIRE_NONE;
}

/* The wire error of an ingest's rc (info: what it found). */
static int16_t
ingest_error(int rc, const klog_kmsg_in_info_t *info)
{
	switch (rc) {
	case -KLOG_ETOOBIG:
		return KLOG_WIRE_MESSAGE_TOO_LARGE;
	case -KLOG_EUNSUPPORTED:
		return info->refused_codec ? KLOG_WIRE_UNSUPPORTED_CODEC :
		    KLOG_WIRE_UNSUPPORTED_VERSION;
	case -KLOG_ENOMEM:
		return KLOG_WIRE_STORAGE_ERROR;
	default:
		return KLOG_WIRE_INVALID_MESSAGE;
	}
}

/*
 * Transcode every part into block first (it may grow and move), noting in
 * each item where its set is (offset, target: start and length), its
 * first entry's size (max) or its error; then hand the sets to the core,
 * which keeps pointers into block until the commit.  Returns how many
 * parts an acks=all request waits for.
 */
static uint32_t
produce_parts(klog_kafka_t *k, int16_t version, const klog_produce_req_t *req,
    klog_buf_t *block, klog_core_item_t *items)
{
	/* Kafka's rules: v3 and later carry magic 2 only, v0-2 magic 0-1;
	 * zstd from v7 on (KIP-110). */
	int (*ingest)(const uint8_t *, size_t, const klog_kingest_t *,
	    klog_buf_t *, klog_kmsg_in_info_t *) = version >= 3 ?
	    klog_kbatch_ingest : klog_kmsg_ingest;
	klog_kingest_t opt = {
		.max_message = (size_t)k->cfg.max_message_bytes,
		.zstd = version >= 7,
		.append_time = k->append_time = k->cfg.log_append_time ?
		    klog_clock_wall_ms() : KLOG_NO_TIMESTAMP,
	};
	uint32_t waits = 0;

	for (uint32_t i = 0; i < req->count; i++) {
		const klog_produce_part_t *kp = &req->parts[i];
		klog_kmsg_in_info_t info = { 0 };
		size_t start = block->len;
		int16_t denied = produce_refusal(k, kp->topic);
		int rc;

		if (denied != KLOG_WIRE_NONE) {
			items[i] = (klog_core_item_t){ .topic = kp->topic,
			    .partition = kp->partition, .staged = -1,
			    .error = denied };
			continue;
		}
		opt.max_inflate = INGEST_MAX - k->ingested < MAX_INFLATE ?
		    INGEST_MAX - k->ingested : MAX_INFLATE;
		rc = k->ingested >= INGEST_MAX ? -KLOG_ETOOBIG :
		    ingest(kp->set, kp->set_len, &opt, block, &info);
		k->ingested += block->len - start;
		if (rc == 0 && info.messages == 0)
			rc = -KLOG_ECORRUPT;
		items[i] = (klog_core_item_t){ .topic = kp->topic,
		    .partition = kp->partition, .offset = (int64_t)start,
		    .target = (int64_t)(block->len - start), .staged = -1,
		    .max = rc < 0 ? 0 : info.first_delta,
		    .error = rc < 0 ? ingest_error(rc, &info) :
		    KLOG_WIRE_NONE };
	}
	for (uint32_t i = 0; i < req->count; i++) {
		klog_core_item_t *it = &items[i];
		klog_produce_part_t pp = req->parts[i];
		klog_produce_req_t one = { req->acks, req->timeout_ms, 1, &pp };
		int32_t first = it->max;

		if (it->error != KLOG_WIRE_NONE) {
			it->offset = it->target = -1;
			continue;
		}
		pp.set = block->data + it->offset;
		pp.set_len = (uint32_t)it->target;
		waits += (uint32_t)klog_core_produce(k->core, &one, trusted, k,
		    it);
		it->max = first;
	}
	return waits;
}

static klog_core_park_t *park(klog_kafka_t *k, int kind, int16_t version,
    int32_t corr, const klog_core_item_t *items, uint32_t n, int link_all);

/* Encode a produce response now and note where each staged set's result
 * is, so that a write that fails can still turn it into an error. */
static void
answer_produce(klog_kafka_t *k, const klog_kreq_t *r, klog_core_item_t *items,
    uint32_t n)
{
	klog_buf_t *out = klog_outq_buf(k->q);

	if (klog_buf_grow((void **)&k->errpos, &k->errpos_cap,
	    ((size_t)n + 1) * sizeof(*k->errpos)) < 0) {
		out->failed = 1;
		return;
	}
	encode_produce(k, out, r->version, r->correlation, items, n,
	    k->append_time, k->errpos);
	if (out->failed)
		return;
	for (uint32_t i = 0; i < n; i++)
		klog_core_note_result(&items[i], k->errpos[i]);
}

/* Acks other than 0, 1 and -1: every part refused. */
static void
refuse_acks(klog_kafka_t *k, const klog_kreq_t *r, const klog_produce_req_t *req)
{
	klog_buf_t *out = klog_outq_buf(k->q);

	if (klog_buf_grow((void **)&k->results, &k->results_cap,
	    ((size_t)req->count + 1) * sizeof(*k->results)) < 0) {
		out->failed = 1;
		return;
	}
	for (uint32_t i = 0; i < req->count; i++)
		k->results[i] = (klog_kproduce_res_t){ req->parts[i].topic,
		    req->parts[i].partition, KLOG_KERR_INVALID_REQUIRED_ACKS,
		    -1, -1, -1 };
	klog_kwdata_produce_resp(out, r->correlation, r->version, k->results,
	    req->count, NULL);
}

static void
handle_produce(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_buf_t *out = klog_outq_buf(k->q), *block;
	klog_produce_req_t req;
	klog_core_item_t *items;
	uint32_t waits;

	if (klog_kwdata_produce(r, &req, &k->parts) < 0) {
		k->bad = "a Produce request that does not parse";
		return;
	}
	if ((items = scratch_items(k, req.count)) == NULL ||
	    (block = next_block(k)) == NULL) {
		out->failed = 1;
		return;
	}
	if (req.acks != 0 && req.acks != 1 && req.acks != -1) {
		refuse_acks(k, r, &req);
		return;
	}
	waits = produce_parts(k, r->version, &req, block, items);
	if (req.acks == 0)
		;  /* Kafka sends no response at all */
	else if (waits == 0)
		answer_produce(k, r, items, req.count);
	else if (park(k, KLOG_CORE_PRODUCE, r->version, r->correlation,
	    items, req.count, 0) == NULL)
		out->failed = 1;
	if (klog_core_stage_full(k->core))
		commit(k);
}

/* ---- fetch ---- */

static void
handle_fetch(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_buf_t *out = klog_outq_buf(k->q);
	klog_kfetch_t f;
	klog_fetch_req_t req;
	klog_core_item_t *items;
	klog_core_park_t *pk;
	int32_t max_bytes;
	uint32_t n;
	int now, allowed;
	int16_t error;

	if (klog_kwdata_fetch(r, &f, &k->parts) < 0) {
		k->bad = "a Fetch request that does not parse";
		return;
	}
	if ((error = klog_kwdata_fetch_session_error(&f)) != KLOG_KERR_NONE) {
		klog_kwdata_fetch_error(out, r->correlation, r->version, error);
		kafka_note_error(k, error);
		return;
	}
	req = f.req;
	max_bytes = f.max_bytes;
	if ((items = scratch_items(k, req.count)) == NULL ||
	    (allowed = split_allowed(k, KLOG_ACL_READ, req.parts,
	    sizeof(*req.parts), req.count)) < 0) {
		out->failed = 1;
		return;
	}
	/* The core sees only the partitions allowed; the others follow
	 * them in the answer, refused. */
	n = req.count;
	req.count = (uint32_t)allowed;
	/* Clients ask for up to their own limits; the log reads at most
	 * the core's per partition. */
	for (uint32_t i = 0; i < req.count; i++)
		if (req.parts[i].max_bytes > KLOG_CORE_MAX_FETCH_BYTES)
			req.parts[i].max_bytes = KLOG_CORE_MAX_FETCH_BYTES;
	if (max_bytes <= 0)
		max_bytes = 1;
	now = klog_core_fetch(k->core, &req, items);
	klog_core_refuse_items(items, req.count, n, req.parts,
	    sizeof(*req.parts), KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED);
	for (uint32_t i = 0; i < n; i++)
		items[i].align = 1;
	if (now) {
		kafka_fetch_encode(k, k->q, r->version, r->correlation,
		    max_bytes, items, n);
		return;
	}
	if ((pk = park(k, KLOG_CORE_FETCH, r->version, r->correlation, items,
	    n, 1)) == NULL) {
		out->failed = 1;
		return;
	}
	pk->tag[1] = max_bytes;
	klog_core_park_fetch(pk, req.min_bytes, req.max_wait_ms);
}

/* ---- list offsets ---- */

/* ListOffsets v1+ by a timestamp (Kafka 0.10's): the first record at or
 * after it, *ts and k->offs[0], else -1 and -1 (cnt 0); 0 where no record
 * carries a timestamp, for the segments' answer. */
static int
offsets_by_time(klog_kafka_t *k, const klog_core_item_t *it, int16_t *error,
    int64_t *ts, int *cnt)
{
	klog_log_time_t t;
	int16_t e = klog_core_offsets_time(it, &t);

	if (e == KLOG_WIRE_NONE && t.status == KLOG_LOG_TIME_UNSTAMPED)
		return 0;
	*error = klog_kwire_error_from_wire(e);
	*cnt = e == KLOG_WIRE_NONE && t.status == KLOG_LOG_TIME_FOUND;
	k->offs[0] = t.kafka_offset;
	*ts = t.timestamp;
	return 1;
}

/* Kafka 0.7's answer, from the segments: v0's, and v1+'s where no record
 * carries a timestamp. */
static int16_t
offsets_of_segments(klog_kafka_t *k, const klog_core_item_t *it, int *cnt)
{
	int16_t error = klog_kwire_error_from_wire(
	    klog_core_offsets_read(it, k->offs, cnt));

	/* A time before every segment: the log's start. */
	if (error == 0 && *cnt == 0 && it->offset >= 0 && it->part != NULL)
		error = klog_kwire_error_from_wire(klog_core_offsets_read(
		    &(klog_core_item_t){ .part = it->part,
		    .offset = KLOG_OFFSET_EARLIEST, .max = 1 }, k->offs, cnt));
	return error;
}

static void
encode_offsets(klog_kafka_t *k, klog_buf_t *out, int16_t version,
    int32_t corr, const klog_core_item_t *items, uint32_t n)
{
	size_t start = klog_kwire_begin(out, corr);
	klog_kwire_topics_t t;
	int cnt;

	klog_kwdata_offsets_head(out, version);
	klog_kwire_topics_begin(out, &t);
	for (uint32_t i = 0; i < n; i++) {
		const klog_core_item_t *it = &items[i];
		int64_t ts = -1;
		int16_t error;

		if (klog_buf_grow((void **)&k->offs, &k->offs_cap,
		    ((size_t)it->max + 1) * sizeof(*k->offs)) < 0) {
			out->failed = 1;
			return;
		}
		if (version == 0 || it->offset < 0 || it->part == NULL ||
		    !offsets_by_time(k, it, &error, &ts, &cnt))
			error = offsets_of_segments(k, it, &cnt);
		klog_kwire_topics_part(out, &t, it->topic);
		klog_kwdata_offsets_part(out, version, it->partition, error,
		    k->offs, cnt, ts);
		kafka_note_error(k, error);
	}
	klog_kwire_topics_end(out, &t);
	klog_kwire_end(out, start);
}

static void
handle_list_offsets(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_buf_t *out = klog_outq_buf(k->q);
	klog_core_item_t *items;
	uint32_t n;
	int allowed;

	if (klog_kwdata_list_offsets(r, &k->parts, &n) < 0) {
		k->bad = "a ListOffsets request that does not parse";
		return;
	}
	if ((items = scratch_items(k, n)) == NULL ||
	    (allowed = split_allowed(k, KLOG_ACL_DESCRIBE, k->parts.p,
	    sizeof(klog_offsets_part_t), n)) < 0) {
		out->failed = 1;
		return;
	}
	klog_core_refuse_items(items, (uint32_t)allowed, n, k->parts.p,
	    sizeof(klog_offsets_part_t), KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED);
	if (klog_core_offsets(k->core, k->parts.p, (uint32_t)allowed,
	    items) == 0)
		encode_offsets(k, out, r->version, r->correlation, items, n);
	else if (park(k, KLOG_CORE_OFFSETS, r->version, r->correlation, items,
	    n, 0) == NULL)
		out->failed = 1;
}

/* ---- parked requests ---- */

/* A parked request is answered: encode it where it waited in line. */
static void
finish(klog_core_park_t *pk)
{
	klog_kafka_t *k = pk->front;
	klog_buf_t *out = klog_outq_buf(&pk->hold.q);
	int16_t version = (int16_t)pk->tag[0], outer = k->err;

	k->err = KLOG_KERR_NONE;
	switch (pk->kind) {
	case KLOG_CORE_PRODUCE:
		encode_produce(k, out, version, pk->correlation, pk->items,
		    pk->n, pk->stamp, NULL);
		break;
	case KLOG_CORE_FETCH:
		kafka_fetch_encode(k, &pk->hold.q, version, pk->correlation,
		    pk->tag[1], pk->items, pk->n);
		break;
	default:
		encode_offsets(k, out, version, pk->correlation, pk->items,
		    pk->n);
		break;
	}
	klog_promtext_reqs_note(&k->reqs, pk->kind == KLOG_CORE_PRODUCE ?
	    KLOG_KAPI_PRODUCE : pk->kind == KLOG_CORE_FETCH ? KLOG_KAPI_FETCH :
	    KLOG_KAPI_LIST_OFFSETS, k->err,
	    klog_clock_mono_ns() - pk->arrived_ns);
	/* Answered while another request is handled: leave its error. */
	k->err = outer;
	pk->hold.ready = 1;
	klog_conn_want_write(pk->conn);
}

static klog_core_park_t *
park(klog_kafka_t *k, int kind, int16_t version, int32_t corr,
    const klog_core_item_t *items, uint32_t n, int link_all)
{
	klog_core_reply_t reply = { k->q, finish, k, k->conn };
	klog_core_park_t *pk = klog_core_park(k->core, kind, corr, items, n,
	    link_all, &reply);

	if (pk != NULL) {
		pk->tag[0] = version;
		pk->arrived_ns = k->arrived_ns;
		pk->stamp = k->append_time;
		k->parked = 1;
	}
	return pk;
}

/* ---- framing ---- */

/* ---- the APIs ---- */

typedef void kafka_handler_fn(klog_kafka_t *k, const klog_kreq_t *r);

static kafka_handler_fn handle_api_versions;

/*
 * What the listener speaks, one row an API: its versions, as ApiVersions
 * advertises them (klog-kafka(7), "APIS AND VERSIONS": Kafka 2.1's at
 * least, and the newer ones librdkafka 2.0.2 picks, flexible from
 * klog_kwire_first_flexible() on), and its handler.
 * Produce 3 and Fetch 4 are what librdkafka needs to send RecordBatch v2,
 * whose one CRC-32C a batch it computes in hardware, where MessageSet v1
 * costs it zlib's CRC-32 a message, and Produce 7 to send zstd; Fetch 4
 * and later get the batches back as they were stored.  The data APIs are
 * at Kafka 2.1's versions or later (kwdata.h).
 */
static const struct kafka_api {
	klog_kapi_range_t v;
	kafka_handler_fn *handle;
} apis[] = {
	{ { KLOG_KAPI_PRODUCE, 0, 7 }, handle_produce },
	{ { KLOG_KAPI_FETCH, 0, 11 }, handle_fetch },
	{ { KLOG_KAPI_LIST_OFFSETS, 0, 5 }, handle_list_offsets },
	{ { KLOG_KAPI_METADATA, 0, 8 }, kafka_metadata },
	{ { KLOG_KAPI_OFFSET_COMMIT, 0, 7 }, kafka_offset_commit },
	{ { KLOG_KAPI_OFFSET_FETCH, 0, 7 }, kafka_offset_fetch },
	{ { KLOG_KAPI_FIND_COORDINATOR, 0, 2 }, kafka_find_coordinator },
	{ { KLOG_KAPI_JOIN_GROUP, 0, 5 }, kafka_join },
	{ { KLOG_KAPI_HEARTBEAT, 0, 3 }, kafka_heartbeat },
	{ { KLOG_KAPI_LEAVE_GROUP, 0, 3 }, kafka_leave },
	{ { KLOG_KAPI_SYNC_GROUP, 0, 3 }, kafka_sync },
	{ { KLOG_KAPI_DESCRIBE_GROUPS, 0, 4 }, kafka_describe_groups },
	{ { KLOG_KAPI_LIST_GROUPS, 0, 4 }, kafka_list_groups },
	{ { KLOG_KAPI_SASL_HANDSHAKE, 0, 1 }, kafka_sasl_misplaced },
	{ { KLOG_KAPI_API_VERSIONS, 0, 3 }, handle_api_versions },
	{ { KLOG_KAPI_SASL_AUTHENTICATE, 0, 1 }, kafka_sasl_misplaced },
	{ { KLOG_KAPI_CREATE_TOPICS, 0, 4 }, kafka_create_topics },
	{ { KLOG_KAPI_DELETE_TOPICS, 0, 3 }, kafka_delete_topics },
	{ { KLOG_KAPI_INIT_PRODUCER_ID, 0, 4 }, kafka_init_producer_id },
	{ { KLOG_KAPI_DESCRIBE_CONFIGS, 0, 2 }, kafka_describe_configs },
	{ { KLOG_KAPI_CREATE_PARTITIONS, 0, 1 }, kafka_create_partitions },
};
#define NAPIS (sizeof(apis) / sizeof(apis[0]))

static const struct kafka_api *
api_of(int16_t api)
{
	for (size_t i = 0; i < NAPIS; i++)
		if (apis[i].v.api == api)
			return &apis[i];
	return NULL;
}

static int
supported(const struct kafka_api *a, int16_t version)
{
	return a != NULL && version >= a->v.min && version <= a->v.max;
}

/* The table's versions, answered at version with error. */
static void
answer_versions(klog_kafka_t *k, int32_t corr, int16_t version,
    int16_t error)
{
	klog_kapi_range_t v[NAPIS];

	for (size_t i = 0; i < NAPIS; i++)
		v[i] = apis[i].v;
	klog_kwire_api_versions(klog_outq_buf(k->q), corr, version, error, v,
	    NAPIS);
}

static void
handle_api_versions(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_str_t name, version;

	if (klog_kwire_api_versions_req(r, &name, &version) < 0) {
		k->bad = "an ApiVersions request that does not parse";
		return;
	}
	if (r->version >= 3)
		klog_connauth_set_software(klog_conn_auth(k->conn), name.p,
		    name.len, version.p, version.len);
	answer_versions(k, r->correlation, r->version, KLOG_KERR_NONE);
}

/* What a client of this kind sets so that it asks for versions the
 * listener speaks. */
static const char *
version_hint(const char *software, klog_str_t client_id)
{
	char id[64];

	if (klog_str_cstr(client_id, id, sizeof(id)) < 0)
		id[0] = '\0';
	if (strstr(software, "librdkafka") != NULL || strstr(id, "rdkafka"))
		return "keep api.version.request=true (librdkafka's default) "
		    "and it picks versions klog speaks";
	if (strstr(software, "java") != NULL)
		return "Kafka's Java client picks versions itself from "
		    "ApiVersions: one this old is not known to klog";
	if (strstr(id, "sarama") != NULL)
		return "set sarama's Config.Version to V2_1_0_0 or older";
	if (strstr(id, "kafka-python") != NULL)
		return "set kafka-python's api_version to (2, 1, 0) or older, "
		    "or leave it None";
	return "let the client ask ApiVersions and use the versions listed, "
	    "or set it for Kafka 2.1";
}

/* Close the connection of a request whose API or version the listener
 * does not speak, as Kafka does, saying who sent it and what to set. */
static void
refuse_version(klog_kafka_t *k, const klog_kreq_t *r,
    const struct kafka_api *a)
{
	const char *sw = klog_conn_auth(k->conn)->software;
	const char *name = klog_kwire_api_name(r->api);
	char id[64], what[96];

	if (klog_str_cstr(r->client_id, id, sizeof(id)) < 0)
		snprintf(id, sizeof(id), "?");
	if (a != NULL)
		snprintf(what, sizeof(what), "%s v%d (klog speaks v%d-%d)",
		    name, r->version, a->v.min, a->v.max);
	else
		snprintf(what, sizeof(what), "API %d v%d (not one klog "
		    "speaks)", r->api, r->version);
	snprintf(k->badbuf, sizeof(k->badbuf), "%s from client id \"%s\"%s%s%s: "
	    "UNSUPPORTED_VERSION, closed; %s", what, id, sw[0] ? " (" : "",
	    sw, sw[0] ? ")" : "", version_hint(sw, r->client_id));
	k->bad = k->badbuf;
}

static void
dispatch(klog_kafka_t *k, const klog_kreq_t *r)
{
	const struct kafka_api *a = api_of(r->api);

	if (!supported(a, r->version)) {
		if (r->api != KLOG_KAPI_API_VERSIONS) {
			refuse_version(k, r, a);
			return;
		}
		/* Above v2 the answer is v0's, which tells the client to
		 * ask again at a version listed. */
		answer_versions(k, r->correlation, 0,
		    KLOG_KERR_UNSUPPORTED_VERSION);
		kafka_note_error(k, KLOG_KERR_UNSUPPORTED_VERSION);
		return;
	}
	/* Anything but a produce first writes what this read staged, so it
	 * sees the produces before it (ApiVersions looks at no partition). */
	if (r->api != KLOG_KAPI_PRODUCE && r->api != KLOG_KAPI_API_VERSIONS)
		commit(k);
	a->handle(k, r);
}

/* Close c after what is queued, saying why (with the request's API). */
static void
refuse(klog_kafka_t *k, klog_conn_t *c, const klog_kreq_t *r, const char *what)
{
	char why[sizeof(k->badbuf) + 64];

	commit(k);
	if (r != NULL && what != k->badbuf)
		snprintf(why, sizeof(why), "Kafka listener: %s (api %d "
		    "version %d)", what, r->api, r->version);
	else
		snprintf(why, sizeof(why), "Kafka listener: %s", what);
	klog_conn_refuse(c, why);
}

static size_t
process(void *arg, klog_conn_t *c, const uint8_t *data, size_t len)
{
	klog_kafka_t *k = arg;
	klog_kreq_t r;
	size_t pos = 0, used;
	int64_t now;
	int rc;

	k->conn = c;
	k->q = klog_conn_out(c);
	/* One clock read per request: each one's answer is the next one's
	 * arrival. */
	k->arrived_ns = klog_clock_mono_ns();
	while (pos < len && !klog_conn_stalled(c)) {
		if (klog_connauth_pending(klog_conn_auth(c))) {
			k->bad = NULL;
			if ((used = kafka_sasl_frame(k, c, data + pos,
			    len - pos, &r, &rc)) == 0)
				break;
			pos += used;
			if (rc)
				dispatch(k, &r);
			if (k->bad != NULL) {
				refuse(k, c, NULL, k->bad);
				return len;
			}
			continue;
		}
		rc = klog_kwire_frame(data + pos, len - pos,
		    (size_t)k->cfg.max_request_bytes, &r);
		if (rc == -KLOG_EPARTIAL)
			break;
		if (rc < 0) {
			refuse(k, c, NULL, rc == -KLOG_ETOOBIG ? "a request "
			    "over the size limit" : "a bad request size");
			return len;
		}
		k->bad = NULL;
		k->err = KLOG_KERR_NONE;
		k->parked = 0;
		dispatch(k, &r);
		if (k->bad != NULL) {
			refuse(k, c, &r, k->bad);
			return len;
		}
		now = klog_clock_mono_ns();
		if (!k->parked)
			klog_promtext_reqs_note(&k->reqs, r.api, k->err,
			    now - k->arrived_ns);
		k->arrived_ns = now;
		pos += 4 + (size_t)r.size;
		klog_conn_answered(c);
	}
	/* The staged sets point into the blocks, which are reused. */
	commit(k);
	return pos;
}

const klog_conn_front_t *
klog_kafka_front(void)
{
	static const klog_conn_front_t front = { process,
	    klog_conn_frame_be32, 0 };

	return &front;
}

const klog_promtext_reqs_t *
klog_kafka_reqs(const klog_kafka_t *k)
{
	return &k->reqs;
}

void
klog_kafka_fetch_bytes(const klog_kafka_t *k, uint64_t *file,
    uint64_t *memory)
{
	*file = k->fetch_file_bytes;
	*memory = k->fetch_memory_bytes;
}

/* ---- new and free ---- */

int
klog_kafka_new(klog_loop_t *loop, klog_core_t *core,
    const klog_kafka_config_t *cfg, klog_kafka_t **out, klog_err_t *err)
{
	klog_kafka_t *k = calloc(1, sizeof(*k));
	int rc;

	*out = NULL;
	if (k == NULL)
		return -KLOG_ENOMEM;
	k->cfg = *cfg;
	k->core = core;
	klog_promtext_reqs_init(&k->reqs);
	if ((k->adv_host = strdup(cfg->advertised_host)) == NULL) {
		klog_kafka_free(k);
		return -KLOG_ENOMEM;
	}
	k->cfg.advertised_host = k->adv_host;
	k->cfg.data_dir = NULL;
	if ((rc = kafka_groups_open(k, loop, cfg->data_dir, err)) < 0) {
		klog_kafka_free(k);
		return rc;
	}
	*out = k;
	return 0;
}

void
klog_kafka_free(klog_kafka_t *k)
{
	if (k == NULL)
		return;
	kafka_groups_close(k);
	for (size_t i = 0; i < k->blocks_cap; i++)
		klog_buf_free(&k->blocks[i]);
	free(k->blocks);
	free(k->parts.p);
	free(k->parts2.p);
	free(k->items);
	free(k->results);
	free(k->errpos);
	free(k->offs);
	free(k->mtopics);
	free(k->mparts);
	free(k->pmeta);
	free(k->rbuf);
	free(k->adv_host);
	free(k);
}

void
klog_kafka_set_cluster(klog_kafka_t *k, const klog_kafka_cluster_t *c)
{
	k->clustered = c != NULL;
	if (c != NULL)
		k->cluster = *c;
}
