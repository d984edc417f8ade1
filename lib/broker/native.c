/*
 * The klog protocol's front end; see native.h.
 *
 * Requests are decoded from the connection's read into arrays reused
 * across requests, and responses are encoded straight into the
 * connection's output queue: nothing is allocated per request unless it
 * has to wait (the core parks it).
 */
#include <sys/uio.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/clock.h"
#include "klog/base/promtext.h"
#include "klog/broker/native.h"
#include "klog/broker/nsasl.h"
#include "klog/core/admin.h"
#include "klog/core/replicated.h"
#include "klog/proto/proto.h"
#include "klog/storage/crcpool.h"
#include "klog/storage/format.h"

#include "native_impl.h"

#define FETCH_BUDGET ((int64_t)512 << 20)  /* file bytes in one response */

static klog_core_item_t *
scratch_items(klog_native_t *n, uint32_t count)
{
	if (klog_buf_grow((void **)&n->s.items, &n->s.items_cap,
	    (size_t)count * sizeof(klog_core_item_t)) < 0)
		return NULL;
	return n->s.items;
}

/* ---- encoding responses ---- */

/* A produce response; with errpos, where each result's error is. */
static void
encode_produce(klog_native_t *n, klog_buf_t *out, int32_t corr,
    const klog_core_item_t *items, uint32_t count, size_t *errpos)
{
	klog_produce_result_t *r;

	if (klog_buf_grow((void **)&n->s.results, &n->s.results_cap,
	    (size_t)count * sizeof(*r)) < 0) {
		out->failed = 1;
		return;
	}
	r = n->s.results;
	for (uint32_t i = 0; i < count; i++) {
		r[i].topic = items[i].topic;
		r[i].partition = items[i].partition;
		r[i].error = items[i].error;
		r[i].offset = items[i].offset;
		note_error(n, items[i].error);
	}
	if (klog_proto_encode_produce_resp_at(out, corr, r, count, errpos) < 0)
		out->failed = 1;
}

/* One partition of a fetch response: header, then the bytes by sendfile. */
static int64_t
encode_fetch_part(klog_native_t *n, klog_outq_t *q, const klog_core_item_t *it,
    int64_t budget)
{
	klog_buf_t *out = klog_outq_buf(q);
	klog_core_read_t r;

	klog_core_fetch_read(n->core, it, budget, &r);
	note_error(n, r.error);
	if (!r.has_slice) {
		klog_proto_put_fetch_part_header(out, it->topic, it->partition,
		    r.error, r.log_start, r.log_end, 0);
		return 0;
	}
	klog_proto_put_fetch_part_header(out, it->topic, it->partition,
	    KLOG_WIRE_NONE, r.log_start, r.log_end, (uint32_t)r.slice.len);
	budget = (int64_t)r.slice.len;
	if (klog_outq_file(q, &r.slice) < 0)
		out->failed = 1;
	return budget;
}

/*
 * The response frame is header bytes and file ranges interleaved; its size
 * field is patched at the end to count both.  Nothing is sent between
 * begin and patch, so the patch position is still in the buffer.
 */
static void
encode_fetch(klog_native_t *n, klog_outq_t *q, int32_t corr,
    const klog_core_item_t *items, uint32_t count)
{
	klog_buf_t *out = klog_outq_buf(q);
	size_t start = klog_proto_resp_begin(out, corr, KLOG_WIRE_NONE);
	int64_t files = 0;

	klog_buf_put_i32(out, (int32_t)count);
	for (uint32_t i = 0; i < count; i++)
		files += encode_fetch_part(n, q, &items[i],
		    FETCH_BUDGET - files);
	klog_buf_patch_i32(out, start,
	    (int32_t)(out->len - start - 4 + (size_t)files));
}

static void
encode_offsets(klog_native_t *n, klog_buf_t *out, int32_t corr,
    const klog_core_item_t *items, uint32_t count)
{
	struct scratch *s = &n->s;
	size_t total = 0, k = 0;
	int cnt;

	for (uint32_t i = 0; i < count; i++)
		total += items[i].error ? 0 : (size_t)items[i].max;
	if (klog_buf_grow((void **)&s->oparts, &s->oparts_cap,
	    count * sizeof(*s->oparts)) < 0 ||
	    klog_buf_grow((void **)&s->errors, &s->errors_cap,
	    count * sizeof(*s->errors)) < 0 ||
	    klog_buf_grow((void **)&s->counts, &s->counts_cap,
	    count * sizeof(*s->counts)) < 0 ||
	    klog_buf_grow((void **)&s->offp, &s->offp_cap,
	    count * sizeof(*s->offp)) < 0 ||
	    klog_buf_grow((void **)&s->offsets, &s->offsets_cap,
	    (total + 1) * sizeof(*s->offsets)) < 0) {
		out->failed = 1;
		return;
	}
	for (uint32_t i = 0; i < count; i++) {
		const klog_core_item_t *it = &items[i];

		s->oparts[i] = (klog_offsets_part_t){ it->topic,
		    it->partition, it->offset, it->max };
		s->offp[i] = &s->offsets[k];
		s->errors[i] = klog_core_offsets_read(it, &s->offsets[k],
		    &cnt);
		s->counts[i] = cnt;
		k += (size_t)cnt;
		note_error(n, s->errors[i]);
	}
	if (klog_proto_encode_offsets_resp(out, corr, s->oparts, s->errors,
	    s->offp, s->counts, count) < 0)
		out->failed = 1;
}

/* A follower's fetch: the header, then the bytes by sendfile (none when
 * it must cut its log first). */
static void
encode_rfetch(klog_native_t *n, klog_outq_t *q, int32_t corr,
    const klog_core_item_t *it)
{
	klog_buf_t *out = klog_outq_buf(q);
	size_t start = klog_proto_resp_begin(out, corr, KLOG_WIRE_NONE);
	klog_rfetch_resp_t resp;
	klog_core_read_t r = { 0 };

	klog_core_rfetch_state(n->core, it, &resp);
	if (resp.error == KLOG_WIRE_NONE && it->max > 0) {
		klog_core_fetch_read(n->core, it, FETCH_BUDGET, &r);
		if (!r.has_slice && r.error != KLOG_WIRE_NONE)
			resp.error = r.error;
	}
	note_error(n, resp.error);
	resp.set_len = r.has_slice ? (uint32_t)r.slice.len : 0;
	klog_proto_put_rfetch_header(out, &resp);
	if (r.has_slice && klog_outq_file(q, &r.slice) < 0)
		out->failed = 1;
	klog_buf_patch_i32(out, start,
	    (int32_t)(out->len - start - 4 + resp.set_len));
}

/* The API a parked request of kind came in as. */
static int
kind_api(int kind)
{
	switch (kind) {
	case KLOG_CORE_PRODUCE:
		return KLOG_API_PRODUCE;
	case KLOG_CORE_FETCH:
		return KLOG_API_FETCH;
	case KLOG_CORE_RFETCH:
		return KLOG_API_REPLICA_FETCH;
	default:
		return KLOG_API_OFFSETS;
	}
}

/* A parked request is answered: encode it where it waited in line. */
static void
finish(klog_core_park_t *pk)
{
	klog_native_t *n = pk->front;
	int16_t outer = n->err;

	n->err = KLOG_WIRE_NONE;
	switch (pk->kind) {
	case KLOG_CORE_PRODUCE:
		encode_produce(n, klog_outq_buf(&pk->hold.q), pk->correlation,
		    pk->items, pk->n, NULL);
		break;
	case KLOG_CORE_FETCH:
		encode_fetch(n, &pk->hold.q, pk->correlation, pk->items,
		    pk->n);
		break;
	case KLOG_CORE_RFETCH:
		encode_rfetch(n, &pk->hold.q, pk->correlation, pk->items);
		break;
	default:
		encode_offsets(n, klog_outq_buf(&pk->hold.q), pk->correlation,
		    pk->items, pk->n);
		break;
	}
	klog_promtext_reqs_note(&n->reqs, kind_api(pk->kind), n->err,
	    klog_clock_mono_ns() - pk->arrived_ns);
	/* A park answered while another request is handled (its produce
	 * flushed eagerly) leaves that one's error as it was. */
	n->err = outer;
	pk->hold.ready = 1;
	klog_conn_want_write(pk->conn);
}

/* Why a produce to topic is refused: WRITE on it, and CREATE when the
 * produce would create it; KLOG_WIRE_NONE when it is not. */
static int16_t
produce_refusal(klog_native_t *n, klog_str_t topic)
{
	int parts;

	if (!native_may(n, KLOG_ACL_WRITE, KLOG_ACL_TOPIC, topic) ||
	    (klog_core_topic_meta(n->core, topic, &parts) ==
	    KLOG_WIRE_UNKNOWN_TOPIC && !native_may_create(n, topic)))
		return KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED;
	return KLOG_WIRE_NONE;
}

/* ---- requests ---- */

static void
patch_result(void *arg, size_t pos, int16_t error)
{
	klog_proto_patch_produce_result(arg, pos, error);
}

/* Write what this read staged; results the log refused become errors. */
static void
commit(klog_native_t *n)
{
	klog_core_commit(n->core, patch_result, klog_outq_buf(n->q));
}

/* Park a request in line on the connection's output. */
static klog_core_park_t *
park(klog_native_t *n, int kind, int32_t corr, const klog_core_item_t *items,
    uint32_t count, int link_all)
{
	klog_core_reply_t reply = { n->q, finish, n, n->conn };
	klog_core_park_t *pk = klog_core_park(n->core, kind, corr, items,
	    count, link_all, &reply);

	if (pk != NULL) {
		pk->arrived_ns = n->arrived_ns;
		n->parked = 1;
	}
	return pk;
}

/* Whether pp's set is the next one the precheck found matching. */
static int
trusted(void *arg, const klog_produce_part_t *pp)
{
	klog_native_t *n = arg;
	const struct iovec *v;

	if (n->vnext >= n->nchecked)
		return 0;
	v = &n->vsets[n->vnext];
	if (v->iov_base != (const void *)pp->set || v->iov_len != pp->set_len)
		return 0;
	n->vnext++;
	return KLOG_CORE_TRUST_CRC;
}

/* Encode a produce response now and note where each staged set's result
 * is, so that a write that fails can still turn it into an error. */
static void
answer_produce(klog_native_t *n, int32_t corr, klog_core_item_t *items,
    uint32_t count)
{
	klog_buf_t *out = klog_outq_buf(n->q);

	if (klog_buf_grow((void **)&n->s.errpos, &n->s.errpos_cap,
	    ((size_t)count + 1) * sizeof(*n->s.errpos)) < 0) {
		out->failed = 1;
		return;
	}
	encode_produce(n, out, corr, items, count, n->s.errpos);
	/* A response that could not be encoded closes the connection: there
	 * is no result to patch then. */
	if (out->failed)
		return;
	for (uint32_t i = 0; i < count; i++)
		klog_core_note_result(&items[i], n->s.errpos[i]);
}

/*
 * With ACLs, each part on its own: a refused one is answered
 * TOPIC_AUTHORIZATION_FAILED and never reaches the core (its set is
 * still passed in the precheck's order, so the sets after it stay
 * trusted).  Returns how many parts an acks=all request waits for.
 */
static int
produce_each(klog_native_t *n, const klog_produce_req_t *req,
    klog_core_item_t *items)
{
	int waits = 0;

	for (uint32_t i = 0; i < req->count; i++) {
		klog_produce_part_t pp = req->parts[i];
		klog_produce_req_t one = { req->acks, req->timeout_ms, 1, &pp };
		int16_t denied = produce_refusal(n, pp.topic);

		if (denied == KLOG_WIRE_NONE) {
			waits += klog_core_produce(n->core, &one, trusted, n,
			    &items[i]);
			continue;
		}
		(void)trusted(n, &pp);
		items[i] = (klog_core_item_t){ .topic = pp.topic,
		    .partition = pp.partition, .offset = -1, .target = -1,
		    .staged = -1, .error = denied };
	}
	return waits;
}

static void
handle_produce(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len)
{
	int32_t corr = h->correlation;
	klog_buf_t *out = klog_outq_buf(n->q);
	klog_produce_req_t req;
	klog_core_item_t *items;
	int waits;

	if (klog_proto_decode_produce_grow(body, len, &req, &n->s.parts) < 0) {
		native_encode_error(n, out, corr, KLOG_WIRE_INVALID_REQUEST);
		return;
	}
	if ((items = scratch_items(n, req.count)) == NULL) {
		native_encode_error(n, out, corr, KLOG_WIRE_STORAGE_ERROR);
		return;
	}
	waits = n->cfg.authz == NULL ? klog_core_produce(n->core, &req,
	    trusted, n, items) : produce_each(n, &req, items);
	if (req.acks != KLOG_ACKS_NONE && waits == 0)
		answer_produce(n, corr, items, req.count);
	else if (req.acks != KLOG_ACKS_NONE &&
	    park(n, KLOG_CORE_PRODUCE, corr, items, req.count, 0) == NULL)
		out->failed = 1;
	if (klog_core_stage_full(n->core))
		commit(n);
}

static void
handle_fetch(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len)
{
	int32_t corr = h->correlation;
	klog_buf_t *out = klog_outq_buf(n->q);
	klog_fetch_req_t req;
	klog_core_item_t *items;
	klog_core_park_t *pk;
	uint32_t count;
	int allowed, now;

	if (klog_proto_decode_fetch_grow(body, len, &req, &n->s.parts) < 0) {
		native_encode_error(n, out, corr, KLOG_WIRE_INVALID_REQUEST);
		return;
	}
	if ((items = scratch_items(n, req.count)) == NULL ||
	    (allowed = native_split_allowed(n, KLOG_ACL_READ, req.parts,
	    sizeof(*req.parts), req.count)) < 0) {
		native_encode_error(n, out, corr, KLOG_WIRE_STORAGE_ERROR);
		return;
	}
	/* The core sees the partitions allowed; the refused follow them. */
	count = req.count;
	req.count = (uint32_t)allowed;
	now = klog_core_fetch(n->core, &req, items);
	klog_core_refuse_items(items, req.count, count, req.parts,
	    sizeof(*req.parts), KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED);
	if (now) {
		encode_fetch(n, n->q, corr, items, count);
		return;
	}
	if ((pk = park(n, KLOG_CORE_FETCH, corr, items, count,
	    1)) == NULL) {
		out->failed = 1;
		return;
	}
	klog_core_park_fetch(pk, req.min_bytes, req.max_wait_ms);
}

/* CLUSTER_ACTION, and the principal of the broker whose id it claims. */
static int
may_replicate(klog_native_t *n, int32_t replica_id)
{
	klog_connauth_t *a;

	if (n->cfg.authz == NULL)
		return 1;
	a = klog_conn_auth(n->conn);
	return klog_authz_replica(n->cfg.authz, klog_connauth_principal(a),
	    klog_connauth_host(a), replica_id);
}

static void
handle_rfetch(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len)
{
	int32_t corr = h->correlation;
	klog_buf_t *out = klog_outq_buf(n->q);
	klog_rfetch_req_t req;
	klog_rfetch_resp_t resp;
	klog_core_item_t *it;
	klog_core_park_t *pk;

	if (klog_proto_decode_rfetch(body, len, &req) < 0) {
		native_encode_error(n, out, corr, KLOG_WIRE_INVALID_REQUEST);
		return;
	}
	if (!may_replicate(n, req.replica_id)) {
		native_encode_error(n, out, corr,
		    KLOG_WIRE_CLUSTER_AUTHORIZATION_FAILED);
		return;
	}
	if ((it = scratch_items(n, 1)) == NULL) {
		native_encode_error(n, out, corr, KLOG_WIRE_STORAGE_ERROR);
		return;
	}
	if (klog_core_rfetch(n->core, &req, it, &resp)) {
		encode_rfetch(n, n->q, corr, it);
		return;
	}
	if ((pk = park(n, KLOG_CORE_RFETCH, corr, it, 1, 1)) == NULL) {
		out->failed = 1;
		return;
	}
	klog_core_park_fetch(pk, 1, req.max_wait_ms);
}

/* No response: a malformed or refused one is dropped as a whole. */
static void
handle_rpos(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len)
{
	klog_rfetch_req_t req;

	(void)h;
	if (klog_proto_decode_rpos(body, len, &req) == 0 &&
	    may_replicate(n, req.replica_id))
		klog_core_rpos(n->core, &req);
}

static void
handle_offsets(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len)
{
	int32_t corr = h->correlation;
	klog_buf_t *out = klog_outq_buf(n->q);
	klog_core_item_t *items;
	uint32_t got;
	int allowed, flushes;

	if (klog_proto_decode_offsets_grow(body, len, &n->s.parts, &got) < 0) {
		native_encode_error(n, out, corr, KLOG_WIRE_INVALID_REQUEST);
		return;
	}
	if ((items = scratch_items(n, got)) == NULL ||
	    (allowed = native_split_allowed(n, KLOG_ACL_DESCRIBE, n->s.parts.p,
	    sizeof(klog_offsets_part_t), got)) < 0) {
		native_encode_error(n, out, corr, KLOG_WIRE_STORAGE_ERROR);
		return;
	}
	klog_core_refuse_items(items, (uint32_t)allowed, got, n->s.parts.p,
	    sizeof(klog_offsets_part_t), KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED);
	flushes = klog_core_offsets(n->core, n->s.parts.p, (uint32_t)allowed,
	    items);
	for (uint32_t i = 0; i < got; i++)
		items[i].first_at = h->version == KLOG_PROTO_VERSION_OFFSETS_AT;
	if (flushes == 0)
		encode_offsets(n, out, corr, items, got);
	else if (park(n, KLOG_CORE_OFFSETS, corr, items, got, 0) == NULL)
		out->failed = 1;
}

typedef void native_handler_fn(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len);

/* The klog protocol's requests (klog-protocol(7)) by API key, as
 * librdkafka's mock broker keeps Kafka's: a new request type is a row here
 * (and its label in metrics.c's native_api()). */
static native_handler_fn *const handlers[] = {
	[KLOG_API_PRODUCE] = handle_produce,
	[KLOG_API_FETCH] = handle_fetch,
	[KLOG_API_OFFSETS] = handle_offsets,
	[KLOG_API_METADATA] = native_metadata,
	[KLOG_API_REPLICA_FETCH] = handle_rfetch,
	[KLOG_API_REPLICA_POS] = handle_rpos,
	[KLOG_API_CREATE_TOPIC] = native_topic_admin,
	[KLOG_API_ALTER_TOPIC] = native_topic_admin,
	[KLOG_API_DELETE_TOPIC] = native_topic_admin,
	[KLOG_API_INIT_PRODUCER] = native_init_producer,
};
#define NHANDLERS (sizeof(handlers) / sizeof(handlers[0]))

static void
dispatch(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len)
{
	klog_buf_t *out = klog_outq_buf(n->q);

	if (h->version != KLOG_PROTO_VERSION && !(h->api == KLOG_API_OFFSETS &&
	    h->version == KLOG_PROTO_VERSION_OFFSETS_AT)) {
		native_encode_error(n, out, h->correlation,
		    KLOG_WIRE_UNSUPPORTED_VERSION);
		return;
	}
	if (h->api != KLOG_API_PRODUCE)
		commit(n);
	if (h->api < 0 || (size_t)h->api >= NHANDLERS ||
	    handlers[h->api] == NULL) {
		native_encode_error(n, out, h->correlation, KLOG_WIRE_UNKNOWN_API);
		return;
	}
	handlers[h->api](n, h, body, len);
}

/* ---- the CRC precheck ---- */

/* Note the set of each part of a produce body, in order. */
static int
note_sets(klog_native_t *n, const uint8_t *body, size_t len, size_t *count,
    size_t *bytes)
{
	klog_produce_req_t req;
	int rc;

	if ((rc = klog_proto_decode_produce_grow(body, len, &req,
	    &n->vparts)) < 0)
		return rc == -KLOG_ENOMEM ? -1 : 0;  /* else refused whole */
	if (klog_buf_grow((void **)&n->vsets, &n->vsets_cap, (*count + req.count) *
	    sizeof(*n->vsets)) < 0)
		return -1;
	for (uint32_t i = 0; i < req.count; i++) {
		n->vsets[(*count)++] = (struct iovec){ (void *)req.parts[i].set,
		    req.parts[i].set_len };
		*bytes += req.parts[i].set_len;
	}
	return 0;
}

/*
 * Check the CRCs of every produce set in the complete frames of data at
 * once.  When all match, the decoder vouches for them one by one as it
 * hands the same sets to the core (trusted()); when one does not (or
 * memory runs short), it vouches for none and each set is checked on its
 * own, which finds it.
 */
static void
precheck(klog_native_t *n, const uint8_t *data, size_t len)
{
	klog_req_header_t h;
	size_t pos = 0, total, count = 0, bytes = 0;

	n->nchecked = n->vnext = 0;
	if (n->verify == NULL || len < KLOG_CRCPOOL_MIN_SPLIT)
		return;
	while (klog_proto_req_header(data + pos, len - pos,
	    (size_t)n->cfg.max_request_bytes, &h) == 0 &&
	    (total = 4 + (size_t)h.size) <= len - pos) {
		if (h.api == KLOG_API_PRODUCE &&
		    h.version == KLOG_PROTO_VERSION &&
		    note_sets(n, data + pos + KLOG_REQ_HEADER_SIZE,
		    total - KLOG_REQ_HEADER_SIZE, &count, &bytes) < 0)
			return;
		pos += total;
	}
	if (bytes < KLOG_CRCPOOL_MIN_SPLIT ||
	    klog_crcpool_sets(n->verify, n->vsets, count) != 0)
		return;
	n->nchecked = count;
}

/* ---- framing ---- */

/* A frame whose size cannot be taken: answer once, then close. */
static void
refuse(klog_native_t *n, klog_conn_t *c, const uint8_t *p, size_t len,
    int rc)
{
	char why[128];

	if (rc == -KLOG_ETOOBIG)
		snprintf(why, sizeof(why), "request of %u bytes over the limit "
		    "of %lld", klog_be32(p), (long long)n->cfg.max_request_bytes);
	else
		snprintf(why, sizeof(why), "bad request size %d",
		    (int32_t)klog_be32(p));
	native_encode_error(n, klog_outq_buf(n->q),
	    klog_proto_peek_correlation(p, len), rc == -KLOG_ETOOBIG ?
	    KLOG_WIRE_REQUEST_TOO_LARGE : KLOG_WIRE_INVALID_REQUEST);
	klog_conn_refuse(c, why);
}

/* Handle every complete frame in data; returns the bytes consumed. */
static size_t
process(void *arg, klog_conn_t *c, const uint8_t *data, size_t len)
{
	klog_native_t *n = arg;
	klog_req_header_t h;
	size_t pos = 0, total;
	int64_t now;
	int rc;

	n->conn = c;
	n->q = klog_conn_out(c);
	/* One clock read per request: each one's answer is the next one's
	 * arrival, as they are handled back to back. */
	n->arrived_ns = klog_clock_mono_ns();
	precheck(n, data, len);
	while (pos < len && !klog_conn_stalled(c)) {
		rc = klog_proto_req_header(data + pos, len - pos,
		    klog_connauth_pending(klog_conn_auth(c)) ?
		    KLOG_NSASL_FRAME_MAX : (size_t)n->cfg.max_request_bytes,
		    &h);
		if (rc == -KLOG_EPARTIAL)
			break;
		if (rc < 0) {
			commit(n);
			refuse(n, c, data + pos, len - pos, rc);
			n->nchecked = 0;
			return len;
		}
		total = 4 + (size_t)h.size;
		if (len - pos < total)
			break;
		n->err = KLOG_WIRE_NONE;
		n->parked = 0;
		if (klog_nsasl_takes(c, h.api)) {
			commit(n);
			klog_nsasl_request(n->cfg.sasl, n->cfg.saslpool, c, &h,
			    data + pos + KLOG_REQ_HEADER_SIZE,
			    total - KLOG_REQ_HEADER_SIZE);
		} else {
			dispatch(n, &h, data + pos + KLOG_REQ_HEADER_SIZE,
			    total - KLOG_REQ_HEADER_SIZE);
		}
		now = klog_clock_mono_ns();
		if (!n->parked)
			klog_promtext_reqs_note(&n->reqs, h.api, n->err,
			    now - n->arrived_ns);
		n->arrived_ns = now;
		pos += total;
		klog_conn_answered(c);
	}
	/* The staged sets point into data, which the caller reuses. */
	commit(n);
	n->nchecked = 0;
	return pos;
}

const klog_conn_front_t *
klog_native_front(void)
{
	static const klog_conn_front_t front = { process,
	    klog_conn_frame_be32, 0 };

	return &front;
}

/* ---- new and free ---- */

int
klog_native_new(klog_core_t *core, const klog_native_config_t *cfg,
    klog_native_t **out)
{
	klog_native_t *n = calloc(1, sizeof(*n));
	int rc;

	*out = NULL;
	if (n == NULL)
		return -KLOG_ENOMEM;
	n->cfg = *cfg;
	n->core = core;
	klog_promtext_reqs_init(&n->reqs);
	if ((n->adv_host = strdup(cfg->advertised_host)) == NULL) {
		klog_native_free(n);
		return -KLOG_ENOMEM;
	}
	n->cfg.advertised_host = n->adv_host;
	if (cfg->crc_threads > 0 &&
	    (rc = klog_crcpool_new(cfg->crc_threads, &n->verify)) < 0) {
		klog_native_free(n);
		return rc;
	}
	*out = n;
	return 0;
}

const klog_promtext_reqs_t *
klog_native_reqs(const klog_native_t *n)
{
	return &n->reqs;
}

void
klog_native_free(klog_native_t *n)
{
	struct scratch *s;

	if (n == NULL)
		return;
	s = &n->s;
	klog_crcpool_free(n->verify);
	free(n->vsets);
	free(n->vparts.p);
	free(s->parts.p);
	free(s->items);
	free(s->results);
	free(s->errpos);
	free(s->oparts);
	free(s->errors);
	free(s->counts);
	free(s->offp);
	free(s->offsets);
	free(s->mtopics);
	free(n->adv_host);
	free(n);
}
