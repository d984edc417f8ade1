/*
 * libFuzzer target for lib/kafka/kwire.c and lib/kafka/kwdata.c: arbitrary
 * bytes as Kafka request frames.
 *
 * The input goes to klog_kwire_frame() whole, then as a stream of frames
 * one after another (as a connection that pipelines them reads them), and
 * cut after as many bytes as its first byte's value, which must either be
 * too short or agree with the whole.  Every frame's body goes, in a heap
 * copy of exactly the frame so that ASan sees a read past it, to the
 * decoder its api names, whatever the version; each view a decoder
 * returns must lie inside the frame and each count must fit the array
 * it came in.  What decoded is encoded back as the responses the listener
 * writes (Produce from the parts, Fetch and ListOffsets from theirs,
 * Metadata from the topics, ApiVersions), each at the request's version
 * and parsed here to check that its size field is its length and that its
 * fields and counts are what was put in.  A broken invariant aborts.  The
 * group APIs' frames are fuzz_kwgroup's.
 *
 * The seeds in corpus/fuzz_kwire are real request frames, one per API and
 * version the listener speaks (Produce v2 once per codec), captured by a
 * proxy in front of klog-serve --kafka-listen while kcat (-L, -P with -z
 * gzip/snappy/lz4 and with broker.version.fallback 0.8.2 and 0.9.0, -C -e,
 * -G) and kafka-python (producers, a group consumer, api_version (0, 8, 1))
 * ran against it; produce-v3-snappy, produce-v3-lz4 and fetch-v4, from
 * strace of kcat once the listener offered those versions, and so
 * produce-v7-zstd, fetch-v11, list-offsets-v2 and metadata-v4 (kcat -P -z
 * zstd, -C, Kafka 2.1's versions).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kwdata.h"
#include "klog/kafka/kwire.h"
#include "klog/storage/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAX_SIZE (1u << 20)
#define MAX_FRAMES 16

/* The frame's bytes: views must lie in [p, p + len). */
struct frame {
	const uint8_t *p;
	size_t len;
};

static void
check_view(struct frame f, const void *p, size_t n)
{
	const uint8_t *v = p;

	if (n == 0)
		return;
	CHECK(v != NULL);
	CHECK(v >= f.p && v <= f.p + f.len && n <= (size_t)(f.p + f.len - v));
}

static void
check_str(struct frame f, klog_str_t s)
{
	check_view(f, s.p, s.len);
}

/* A decoder's count of elements of size sz fits the array a. */
static void
check_count(const klog_proto_array_t *a, const void *arr, uint32_t n,
    size_t sz)
{
	if (n == 0)
		return;
	CHECK(arr == a->p && a->p != NULL);
	CHECK(a->cap / sz >= n);
}

static void
check_rc(int rc)
{
	CHECK(rc == 0 || rc == -KLOG_EPROTO || rc == -KLOG_ENOMEM);
}

/* ---- reading back what the encoders wrote ---- */

static void
rd_str_back(klog_rd_t *rd, int nullable)
{
	int16_t n = klog_rd_i16(rd);

	CHECK(n >= 0 || (nullable && n == -1));
	if (n > 0)
		CHECK(klog_rd_bytes(rd, (size_t)n) != NULL);
}

/* The response frame at b->data + start, correlation corr: its size field
 * is its length; the reader is left on its body. */
static void
frame_back(const klog_buf_t *b, size_t start, int32_t corr, klog_rd_t *rd)
{
	CHECK(!b->failed);
	CHECK(b->len >= start + 8);
	klog_rd_init(rd, b->data + start, b->len - start);
	CHECK((size_t)klog_rd_i32(rd) == b->len - start - 4);
	CHECK(klog_rd_i32(rd) == corr);
}

static void
end_back(const klog_rd_t *rd)
{
	CHECK(!rd->failed && rd->pos == rd->len);
}

/* ---- the decoders, and the responses from what they decoded ---- */

static void
produce_resp(klog_buf_t *b, const klog_kreq_t *r, const klog_produce_req_t *req)
{
	klog_kproduce_res_t *res;
	size_t *errpos, start;
	int16_t v = r->version;
	int32_t nt, parts = 0;
	klog_rd_t rd;

	res = malloc((req->count + 1) * sizeof(*res));
	errpos = malloc((req->count + 1) * sizeof(*errpos));
	CHECK(res != NULL && errpos != NULL);
	for (uint32_t i = 0; i < req->count; i++) {
		res[i].topic = req->parts[i].topic;
		res[i].partition = req->parts[i].partition;
		res[i].error = (int16_t)(i % 3 == 1 ?
		    KLOG_KERR_CORRUPT_MESSAGE : KLOG_KERR_NONE);
		res[i].offset = (int64_t)req->parts[i].set_len;
		res[i].log_start = (int64_t)i;
		res[i].append_time = i % 2 ? -1 : 1000 + (int64_t)i;
	}
	klog_buf_reset(b);
	start = b->len;
	klog_kwdata_produce_resp(b, r->correlation, v, res, req->count,
	    errpos);
	frame_back(b, start, r->correlation, &rd);
	nt = klog_rd_i32(&rd);
	CHECK(nt >= 0 && (uint32_t)nt <= req->count);
	for (int32_t i = 0; i < nt; i++) {
		int32_t np;

		rd_str_back(&rd, 0);
		np = klog_rd_i32(&rd);
		CHECK(np > 0);
		for (int32_t j = 0; j < np; j++, parts++) {
			CHECK((uint32_t)parts < req->count);
			CHECK(klog_rd_i32(&rd) == res[parts].partition);
			CHECK(rd.pos == errpos[parts] - start);
			CHECK(klog_rd_i16(&rd) == res[parts].error);
			CHECK(klog_rd_i64(&rd) == (res[parts].error ? -1 :
			    res[parts].offset));
			if (v >= 2)
				CHECK(klog_rd_i64(&rd) == (res[parts].error ?
				    -1 : res[parts].append_time));
			if (v >= 5)
				CHECK(klog_rd_i64(&rd) == (res[parts].error ?
				    -1 : res[parts].log_start));
		}
	}
	CHECK((uint32_t)parts == req->count);
	if (v >= 1)
		CHECK(klog_rd_i32(&rd) == 0);
	end_back(&rd);
	/* A patched result reads as the error, the rest unchanged. */
	if (req->count > 0) {
		size_t len = b->len, pos = errpos[req->count - 1];

		klog_kwdata_patch_produce(b, pos,
		    KLOG_KERR_NOT_LEADER_FOR_PARTITION);
		CHECK(b->len == len);
		CHECK(b->data[pos] == 0 && b->data[pos + 1] ==
		    KLOG_KERR_NOT_LEADER_FOR_PARTITION);
		for (int k = 2; k < 10; k++)
			CHECK(b->data[pos + k] == 0xff);
		klog_kwdata_patch_produce(b, b->len - 9, 0);  /* no room */
		klog_kwdata_patch_produce(b, b->len + 1, 0);
		CHECK(b->len == len);
	}
	free(res);
	free(errpos);
}

static void
produce(struct frame f, const klog_kreq_t *r, klog_buf_t *b)
{
	klog_proto_array_t a = { NULL, 0 };
	klog_produce_req_t req;
	int rc = klog_kwdata_produce(r, &req, &a);

	check_rc(rc);
	if (rc == 0) {
		check_count(&a, req.parts, req.count, sizeof(*req.parts));
		for (uint32_t i = 0; i < req.count; i++) {
			check_str(f, req.parts[i].topic);
			CHECK(req.parts[i].topic.p != NULL);
			check_view(f, req.parts[i].set, req.parts[i].set_len);
		}
		produce_resp(b, r, &req);
	}
	free(a.p);
}

/* A fetch answer at r's version, a partition per part (high watermark
 * its offset, log start its index), read back. */
static void
fetch_resp(klog_buf_t *b, const klog_kreq_t *r, const klog_fetch_req_t *req)
{
	int16_t v = r->version;
	klog_kwire_topics_t t;
	int32_t nt, parts = 0;
	size_t start;
	klog_rd_t rd;

	klog_buf_reset(b);
	start = klog_kwire_begin(b, r->correlation);
	klog_kwdata_fetch_head(b, v, 0);
	klog_kwire_topics_begin(b, &t);
	for (uint32_t i = 0; i < req->count; i++) {
		klog_kwire_topics_part(b, &t, req->parts[i].topic);
		(void)klog_kwdata_fetch_part(b, v, req->parts[i].partition,
		    (int16_t)(i & 1), req->parts[i].offset, (int64_t)i);
		klog_buf_put_i32(b, 0);
	}
	klog_kwire_topics_end(b, &t);
	klog_kwire_end(b, start);
	frame_back(b, start, r->correlation, &rd);
	if (v >= 1)
		CHECK(klog_rd_i32(&rd) == 0);
	if (v >= 7)
		CHECK(klog_rd_i16(&rd) == 0 && klog_rd_i32(&rd) == 0);
	nt = klog_rd_i32(&rd);
	CHECK(nt >= 0 && (uint32_t)nt <= req->count);
	for (int32_t i = 0; i < nt; i++) {
		int32_t np;

		rd_str_back(&rd, 0);
		np = klog_rd_i32(&rd);
		CHECK(np > 0);
		for (int32_t j = 0; j < np; j++, parts++) {
			const klog_fetch_part_t *p = &req->parts[parts];

			CHECK((uint32_t)parts < req->count);
			CHECK(klog_rd_i32(&rd) == p->partition);
			CHECK(klog_rd_i16(&rd) == (parts & 1));
			CHECK(klog_rd_i64(&rd) == p->offset);
			if (v >= 4)
				CHECK(klog_rd_i64(&rd) == p->offset);
			if (v >= 5)
				CHECK(klog_rd_i64(&rd) == parts);
			if (v >= 4)
				CHECK(klog_rd_i32(&rd) == 0);
			if (v >= 11)
				CHECK(klog_rd_i32(&rd) == -1);
			CHECK(klog_rd_i32(&rd) == 0);
		}
	}
	CHECK((uint32_t)parts == req->count);
	end_back(&rd);
}

static void
fetch(struct frame f, const klog_kreq_t *r, klog_buf_t *b)
{
	klog_proto_array_t a = { NULL, 0 };
	klog_kfetch_t kf;
	int rc = klog_kwdata_fetch(r, &kf, &a);

	check_rc(rc);
	if (rc == 0) {
		check_count(&a, kf.req.parts, kf.req.count,
		    sizeof(*kf.req.parts));
		for (uint32_t i = 0; i < kf.req.count; i++)
			check_str(f, kf.req.parts[i].topic);
		check_str(f, kf.rack);
		CHECK(kf.rack.p != NULL);
		if (r->version < 3)
			CHECK(kf.max_bytes == INT32_MAX);
		if (r->version < 7)
			CHECK(kf.session_id == 0 && kf.session_epoch == -1 &&
			    klog_kwdata_fetch_session_error(&kf) == 0);
		if (r->version < 11)
			CHECK(kf.rack.len == 0);
		fetch_resp(b, r, &kf.req);
	}
	free(a.p);
}

/* A ListOffsets answer at r's version, a partition per part (its time
 * the one offset; every other one an error), read back. */
static void
offsets_resp(klog_buf_t *b, const klog_kreq_t *r,
    const klog_offsets_part_t *p, uint32_t n)
{
	int16_t v = r->version;
	klog_kwire_topics_t t;
	int32_t nt, k = 0;
	size_t start;
	klog_rd_t rd;

	klog_buf_reset(b);
	start = klog_kwire_begin(b, r->correlation);
	klog_kwdata_offsets_head(b, v);
	klog_kwire_topics_begin(b, &t);
	for (uint32_t i = 0; i < n; i++) {
		klog_kwire_topics_part(b, &t, p[i].topic);
		klog_kwdata_offsets_part(b, v, p[i].partition,
		    (int16_t)(i & 1 ? 3 : 0), &p[i].time, 1,
		    i % 4 == 0 ? -1 : 2000 + (int64_t)i);
	}
	klog_kwire_topics_end(b, &t);
	klog_kwire_end(b, start);
	frame_back(b, start, r->correlation, &rd);
	if (v >= 2)
		CHECK(klog_rd_i32(&rd) == 0);
	nt = klog_rd_i32(&rd);
	CHECK(nt >= 0 && (uint32_t)nt <= n);
	for (int32_t i = 0; i < nt; i++) {
		int32_t np;

		rd_str_back(&rd, 0);
		np = klog_rd_i32(&rd);
		CHECK(np > 0);
		for (int32_t j = 0; j < np; j++, k++) {
			int failed = k & 1;

			CHECK((uint32_t)k < n);
			CHECK(klog_rd_i32(&rd) == p[k].partition);
			CHECK(klog_rd_i16(&rd) == (failed ? 3 : 0));
			if (v == 0) {
				CHECK(klog_rd_i32(&rd) == !failed);
				if (!failed)
					CHECK(klog_rd_i64(&rd) == p[k].time);
				continue;
			}
			CHECK(klog_rd_i64(&rd) == (failed || k % 4 == 0 ? -1 :
			    2000 + (int64_t)k));
			CHECK(klog_rd_i64(&rd) == (failed ? -1 : p[k].time));
			if (v >= 4)
				CHECK(klog_rd_i32(&rd) == -1);
		}
	}
	CHECK((uint32_t)k == n);
	end_back(&rd);
}

static void
list_offsets(struct frame f, const klog_kreq_t *r, klog_buf_t *b)
{
	klog_proto_array_t a = { NULL, 0 };
	klog_offsets_part_t *parts;
	uint32_t n = 0;
	int rc = klog_kwdata_list_offsets(r, &a, &n);

	check_rc(rc);
	parts = a.p;
	if (rc == 0) {
		check_count(&a, parts, n, sizeof(*parts));
		for (uint32_t i = 0; i < n; i++) {
			check_str(f, parts[i].topic);
			if (r->version != 0)
				CHECK(parts[i].max == 1);
		}
		offsets_resp(b, r, parts, n);
	}
	free(a.p);
}

static void
metadata_resp(klog_buf_t *b, const klog_kreq_t *r, const klog_str_t *names,
    uint32_t n)
{
	static const int32_t replicas[] = { 0, 1, 2 };
	klog_kmeta_part_t parts[3];
	klog_kmeta_topic_t *topics;
	klog_kmeta_broker_t brokers[2] = {
		{ 0, { "127.0.0.1", 9 }, 9092 },
		{ 1, { NULL, 0 }, -1 },
	};
	int16_t v = r->version < 0 ? 0 : r->version > 8 ? 8 : r->version;
	size_t start;
	klog_rd_t rd;

	for (uint32_t j = 0; j < 3; j++)
		parts[j] = (klog_kmeta_part_t){ (int16_t)j, (int32_t)j, 0,
		    j + 1, j, replicas, replicas };
	topics = malloc((n + 1) * sizeof(*topics));
	CHECK(topics != NULL);
	for (uint32_t i = 0; i < n; i++)
		topics[i] = (klog_kmeta_topic_t){ (int16_t)(i & 1), names[i],
		    i % 4, parts, (int32_t)i };
	klog_buf_reset(b);
	klog_buf_put(b, "pad", 3);   /* a frame need not start at 0 */
	start = b->len;
	klog_kwdata_metadata_resp(b, r->correlation, v, &(klog_kmeta_t){
	    brokers, 2, 0, KLOG_KMETA_OPS_NONE, topics, n });
	frame_back(b, start, r->correlation, &rd);
	if (v >= 3)
		CHECK(klog_rd_i32(&rd) == 0);
	CHECK(klog_rd_i32(&rd) == 2);
	for (int k = 0; k < 2; k++) {
		CHECK(klog_rd_i32(&rd) == brokers[k].id);
		rd_str_back(&rd, 1);
		CHECK(klog_rd_i32(&rd) == brokers[k].port);
		if (v >= 1)
			CHECK(klog_rd_i16(&rd) == -1);
	}
	if (v >= 2)
		CHECK(klog_rd_i16(&rd) == -1);
	if (v >= 1)
		CHECK(klog_rd_i32(&rd) == 0);
	CHECK(klog_rd_i32(&rd) == (int32_t)n);
	for (uint32_t i = 0; i < n; i++) {
		CHECK(klog_rd_i16(&rd) == topics[i].error);
		rd_str_back(&rd, 0);
		if (v >= 1)
			CHECK(klog_rd_i8(&rd) == 0);
		CHECK(klog_rd_i32(&rd) == (int32_t)topics[i].nparts);
		for (uint32_t j = 0; j < topics[i].nparts; j++) {
			CHECK(klog_rd_i16(&rd) == parts[j].error);
			CHECK(klog_rd_i32(&rd) == parts[j].id);
			CHECK(klog_rd_i32(&rd) == parts[j].leader);
			if (v >= 7)
				CHECK(klog_rd_i32(&rd) == -1);
			CHECK(klog_rd_i32(&rd) == (int32_t)parts[j].nreplicas);
			for (uint32_t k = 0; k < parts[j].nreplicas; k++)
				CHECK(klog_rd_i32(&rd) == replicas[k]);
			CHECK(klog_rd_i32(&rd) == (int32_t)parts[j].nisr);
			for (uint32_t k = 0; k < parts[j].nisr; k++)
				CHECK(klog_rd_i32(&rd) == replicas[k]);
			if (v >= 5)
				CHECK(klog_rd_i32(&rd) == 0);
		}
		if (v >= 8)
			CHECK(klog_rd_i32(&rd) == (int32_t)i);
	}
	if (v >= 8)
		CHECK(klog_rd_i32(&rd) == KLOG_KMETA_OPS_NONE);
	end_back(&rd);
	free(topics);
}

static void
metadata(struct frame f, const klog_kreq_t *r, klog_buf_t *b)
{
	klog_proto_array_t a = { NULL, 0 };
	klog_kmeta_req_t m;
	int rc = klog_kwdata_metadata(r, &m, &a);

	check_rc(rc);
	if (rc == 0) {
		check_count(&a, m.names, m.n, sizeof(*m.names));
		for (uint32_t i = 0; i < m.n; i++) {
			check_str(f, m.names[i]);
			CHECK(m.names[i].p != NULL);
		}
		if (m.all)
			CHECK(m.n == 0);
		if (r->version < 4)
			CHECK(m.allow_create);
		if (r->version < 8)
			CHECK(!m.cluster_ops && !m.topic_ops);
		metadata_resp(b, r, m.names, m.n);
	}
	free(a.p);
}

static void
api_versions(const klog_kreq_t *r, klog_buf_t *b)
{
	static const klog_kapi_range_t apis[] = {
		{ KLOG_KAPI_PRODUCE, 0, 2 }, { KLOG_KAPI_FETCH, 0, 3 },
		{ KLOG_KAPI_API_VERSIONS, 0, 2 },
	};
	size_t n = (size_t)(r->correlation & 3);
	int16_t err = r->version > 2 ? KLOG_KERR_UNSUPPORTED_VERSION : 0;
	int16_t v = r->version > 2 ? 0 : r->version;
	klog_rd_t rd;

	if (n > 3)
		n = 3;
	klog_buf_reset(b);
	klog_kwire_api_versions(b, r->correlation, v, err, apis, n);
	frame_back(b, 0, r->correlation, &rd);
	CHECK(klog_rd_i16(&rd) == err);
	CHECK(klog_rd_i32(&rd) == (int32_t)n);
	for (size_t i = 0; i < n; i++) {
		CHECK(klog_rd_i16(&rd) == apis[i].api);
		CHECK(klog_rd_i16(&rd) == apis[i].min);
		CHECK(klog_rd_i16(&rd) == apis[i].max);
	}
	if (v >= 1 && err == 0)
		CHECK(klog_rd_i32(&rd) == 0);
	end_back(&rd);
}

/* One whole frame p[0..len), r its header as klog_kwire_frame() read it. */
static void
decode(const uint8_t *p, size_t len, klog_buf_t *b)
{
	struct frame f;
	klog_kreq_t r;
	uint8_t *copy;

	/* Its own allocation, so that a read past the frame is caught. */
	copy = malloc(len);
	CHECK(copy != NULL);
	memcpy(copy, p, len);
	CHECK(klog_kwire_frame(copy, len, MAX_SIZE, &r) == 0);
	CHECK(r.size + 4 == len);
	f = (struct frame){ copy, len };
	check_str(f, r.client_id);
	CHECK(r.body >= copy + KLOG_KWIRE_HEADER_MIN &&
	    r.body + r.body_len <= copy + len);
	/* The body runs to the frame's end; only an ApiVersions whose
	 * header does not parse is taken with none. */
	CHECK(r.body + r.body_len == copy + len ||
	    (r.api == KLOG_KAPI_API_VERSIONS && r.body_len == 0));
	/* Only the body and the header are views: decoders see the body. */
	f = (struct frame){ r.body, r.body_len };

	switch (r.api) {
	case KLOG_KAPI_PRODUCE:
		produce(f, &r, b);
		break;
	case KLOG_KAPI_FETCH:
		fetch(f, &r, b);
		break;
	case KLOG_KAPI_LIST_OFFSETS:
		list_offsets(f, &r, b);
		break;
	case KLOG_KAPI_METADATA:
		metadata(f, &r, b);
		break;
	case KLOG_KAPI_API_VERSIONS:
		api_versions(&r, b);
		break;
	default:
		break;  /* the group APIs: fuzz_kwgroup */
	}
	free(copy);
}

/* The frame at p[0..len): its verdict, with the header fields checked. */
static int
frame(const uint8_t *p, size_t len, klog_kreq_t *r)
{
	int rc = klog_kwire_frame(p, len, MAX_SIZE, r);

	CHECK(rc == 0 || rc == -KLOG_EPARTIAL || rc == -KLOG_ETOOBIG ||
	    rc == -KLOG_EPROTO);
	if (rc == -KLOG_EPARTIAL)
		CHECK(len < 4 || len - 4 < r->size);
	if (rc == 0 || rc == -KLOG_ETOOBIG || (rc == -KLOG_EPARTIAL &&
	    len >= 4))
		CHECK(r->size == klog_be32(p));
	if (rc == 0)
		CHECK(r->size >= KLOG_KWIRE_HEADER_MIN - 4 &&
		    r->size <= MAX_SIZE && r->size <= len - 4);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	klog_buf_t b;
	klog_kreq_t whole, cut;
	uint8_t *copy;
	size_t pos, k;
	int rc, rc2;

	copy = malloc(size + (size == 0));
	CHECK(copy != NULL);
	if (size > 0)
		memcpy(copy, data, size);
	klog_buf_init(&b);

	/* Whole, and cut after data[0] bytes: a cut either needs more or
	 * agrees with the whole. */
	rc = frame(copy, size, &whole);
	if (size > 0) {
		k = copy[0] < size ? copy[0] : size;
		rc2 = frame(copy, k, &cut);
		if (rc2 != -KLOG_EPARTIAL) {
			CHECK(rc2 == rc);
			if (rc == 0)
				CHECK(cut.size == whole.size &&
				    cut.api == whole.api &&
				    cut.version == whole.version &&
				    cut.correlation == whole.correlation &&
				    cut.body == whole.body &&
				    cut.body_len == whole.body_len);
		} else if (k >= 4) {
			CHECK(rc != -KLOG_EPARTIAL || whole.size == cut.size);
		}
	}

	/* A stream of frames, each decoded. */
	for (pos = 0, k = 0; k < MAX_FRAMES && pos < size; k++) {
		if (frame(copy + pos, size - pos, &whole) != 0)
			break;
		decode(copy + pos, (size_t)whole.size + 4, &b);
		pos += (size_t)whole.size + 4;
	}

	klog_buf_free(&b);
	free(copy);
	return 0;
}
