/*
 * The Kafka protocol's data APIs on the wire; see kwdata.h.
 *
 * Decoders read with kprim's sticky reader and check it once at the end;
 * arrays of parts grow as they are read (each part takes a dozen bytes or
 * more of the body, so a request's parts can never outgrow a small multiple
 * of the request itself).  Fields a version adds are read or written
 * where Kafka's schema puts them, each under the test of its version.
 */
#include <stdint.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kprim.h"
#include "klog/kafka/kwdata.h"
#include "klog/kafka/kwire.h"

/* KIP-227's epochs of a full fetch: the first of a new session, and the
 * one asking for none. */
#define EPOCH_INITIAL 0
#define EPOCH_FINAL (-1)

/* ---- decoders ---- */

int
klog_kwdata_produce(const klog_kreq_t *r, klog_produce_req_t *req,
    klog_proto_array_t *a)
{
	klog_kprim_rd_t rd;
	int32_t nt;
	uint32_t k = 0;

	klog_kwire_reader(r, &rd);
	memset(req, 0, sizeof(*req));
	if (r->version >= 3)
		(void)klog_kprim_nstr(&rd);  /* transactional id: none */
	req->acks = klog_rd_i16(&rd.rd);
	req->timeout_ms = klog_rd_i32(&rd.rd);
	nt = klog_kprim_count(&rd, 6, 0);
	for (int32_t i = 0; i < nt && !rd.rd.failed; i++) {
		klog_str_t topic = klog_kprim_str(&rd);
		int32_t np = klog_kprim_count(&rd, 8, 0);

		for (int32_t j = 0; j < np && !rd.rd.failed; j++) {
			klog_produce_part_t *pp = klog_kprim_slot(a, k,
			    sizeof(*pp));

			if (pp == NULL)
				return -KLOG_ENOMEM;
			pp->topic = topic;
			pp->partition = klog_rd_i32(&rd.rd);
			pp->set = klog_kprim_bytes(&rd, &pp->set_len);
			k++;
		}
	}
	req->count = k;
	req->parts = a->p;
	return klog_kprim_done(&rd);
}

/* A fetch's topics and their partitions, into a. */
static int
fetch_topics(klog_kprim_rd_t *rd, int16_t version, klog_fetch_req_t *req,
    klog_proto_array_t *a)
{
	int32_t nt = klog_kprim_count(rd, 6, 0);
	uint32_t k = 0;

	for (int32_t i = 0; i < nt && !rd->rd.failed; i++) {
		klog_str_t topic = klog_kprim_str(rd);
		int32_t np = klog_kprim_count(rd, 16, 0);

		for (int32_t j = 0; j < np && !rd->rd.failed; j++) {
			klog_fetch_part_t *fp = klog_kprim_slot(a, k,
			    sizeof(*fp));

			if (fp == NULL)
				return -KLOG_ENOMEM;
			fp->topic = topic;
			fp->partition = klog_rd_i32(&rd->rd);
			if (version >= 9)
				(void)klog_rd_i32(&rd->rd);  /* leader epoch */
			fp->offset = klog_rd_i64(&rd->rd);
			if (version >= 5)
				(void)klog_rd_i64(&rd->rd);  /* a follower's */
			fp->max_bytes = klog_rd_i32(&rd->rd);
			k++;
		}
	}
	req->count = k;
	req->parts = a->p;
	return 0;
}

/* v7's forgotten topics: an incremental session's, read past. */
static void
skip_forgotten(klog_kprim_rd_t *rd)
{
	int32_t nt = klog_kprim_count(rd, 6, 0);

	for (int32_t i = 0; i < nt && !rd->rd.failed; i++) {
		int32_t np;

		(void)klog_kprim_str(rd);
		np = klog_kprim_count(rd, 4, 0);
		(void)klog_rd_bytes(&rd->rd, (size_t)np * 4);
	}
}

int
klog_kwdata_fetch(const klog_kreq_t *r, klog_kfetch_t *f,
    klog_proto_array_t *a)
{
	klog_kprim_rd_t rd;
	int16_t v = r->version;

	klog_kwire_reader(r, &rd);
	memset(f, 0, sizeof(*f));
	f->max_bytes = INT32_MAX;
	f->session_epoch = EPOCH_FINAL;
	f->rack = (klog_str_t){ "", 0 };
	(void)klog_rd_i32(&rd.rd);   /* replica id: -1 from clients */
	f->req.max_wait_ms = klog_rd_i32(&rd.rd);
	f->req.min_bytes = klog_rd_i32(&rd.rd);
	if (v >= 3)
		f->max_bytes = klog_rd_i32(&rd.rd);
	if (v >= 4)
		f->isolation = klog_rd_i8(&rd.rd);
	if (v >= 7) {
		f->session_id = klog_rd_i32(&rd.rd);
		f->session_epoch = klog_rd_i32(&rd.rd);
	}
	if (fetch_topics(&rd, v, &f->req, a) < 0)
		return -KLOG_ENOMEM;
	if (v >= 7)
		skip_forgotten(&rd);
	if (v >= 11)
		f->rack = klog_kprim_str(&rd);
	return klog_kprim_done(&rd);
}

int16_t
klog_kwdata_fetch_session_error(const klog_kfetch_t *f)
{
	if (f->session_epoch == EPOCH_INITIAL ||
	    f->session_epoch == EPOCH_FINAL)
		return KLOG_KERR_NONE;
	return KLOG_KERR_FETCH_SESSION_ID_NOT_FOUND;
}

int
klog_kwdata_list_offsets(const klog_kreq_t *r, klog_proto_array_t *a,
    uint32_t *n)
{
	klog_kprim_rd_t rd;
	int32_t nt;
	uint32_t k = 0;

	klog_kwire_reader(r, &rd);
	(void)klog_rd_i32(&rd.rd);   /* replica id */
	if (r->version >= 2)
		(void)klog_rd_i8(&rd.rd);  /* isolation: no transactions */
	nt = klog_kprim_count(&rd, 6, 0);
	for (int32_t i = 0; i < nt && !rd.rd.failed; i++) {
		klog_str_t topic = klog_kprim_str(&rd);
		int32_t np = klog_kprim_count(&rd, 12, 0);

		for (int32_t j = 0; j < np && !rd.rd.failed; j++) {
			klog_offsets_part_t *op = klog_kprim_slot(a, k,
			    sizeof(*op));

			if (op == NULL)
				return -KLOG_ENOMEM;
			op->topic = topic;
			op->partition = klog_rd_i32(&rd.rd);
			if (r->version >= 4)
				(void)klog_rd_i32(&rd.rd);  /* leader epoch */
			op->time = klog_rd_i64(&rd.rd);
			op->max = r->version == 0 ? klog_rd_i32(&rd.rd) : 1;
			k++;
		}
	}
	*n = k;
	return klog_kprim_done(&rd);
}

int
klog_kwdata_metadata(const klog_kreq_t *r, klog_kmeta_req_t *m,
    klog_proto_array_t *a)
{
	klog_kprim_rd_t rd;
	int32_t nt;

	klog_kwire_reader(r, &rd);
	memset(m, 0, sizeof(*m));
	m->allow_create = 1;
	nt = klog_kprim_count(&rd, 2, r->version >= 1);
	m->all = r->version == 0 ? nt == 0 : nt == -1;
	for (int32_t i = 0; i < nt && !rd.rd.failed; i++) {
		klog_str_t *s = klog_kprim_slot(a, (size_t)i, sizeof(*s));

		if (s == NULL)
			return -KLOG_ENOMEM;
		*s = klog_kprim_str(&rd);
	}
	if (r->version >= 4)
		m->allow_create = klog_rd_i8(&rd.rd) != 0;
	if (r->version >= 8) {
		m->cluster_ops = klog_rd_i8(&rd.rd) != 0;
		m->topic_ops = klog_rd_i8(&rd.rd) != 0;
	}
	if (rd.rd.failed)
		return -KLOG_EPROTO;
	m->n = nt > 0 ? (uint32_t)nt : 0;
	m->names = m->n > 0 ? a->p : NULL;
	return 0;
}

/* ---- encoders ---- */

void
klog_kwdata_produce_resp(klog_buf_t *b, int32_t corr, int16_t version,
    const klog_kproduce_res_t *res, uint32_t n, size_t *errpos)
{
	size_t start = klog_kwire_begin(b, corr);
	klog_kwire_topics_t t;

	klog_kwire_topics_begin(b, &t);
	for (uint32_t i = 0; i < n; i++) {
		int failed = res[i].error != KLOG_KERR_NONE;

		klog_kwire_topics_part(b, &t, res[i].topic);
		klog_buf_put_i32(b, res[i].partition);
		if (errpos != NULL)
			errpos[i] = b->len;
		klog_buf_put_i16(b, res[i].error);
		klog_buf_put_i64(b, failed ? -1 : res[i].offset);
		if (version >= 2)
			klog_buf_put_i64(b, failed ? -1 : res[i].append_time);
		if (version >= 5)
			klog_buf_put_i64(b, failed ? -1 : res[i].log_start);
	}
	klog_kwire_topics_end(b, &t);
	if (version >= 1)
		klog_buf_put_i32(b, 0);  /* throttle time */
	klog_kwire_end(b, start);
}

void
klog_kwdata_patch_produce(klog_buf_t *b, size_t pos, int16_t error)
{
	if (pos > b->len || b->len - pos < 10)
		return;
	b->data[pos] = (uint8_t)((uint16_t)error >> 8);
	b->data[pos + 1] = (uint8_t)error;
	memset(b->data + pos + 2, 0xff, 8);
}

void
klog_kwdata_fetch_head(klog_buf_t *b, int16_t version, int16_t error)
{
	if (version >= 1)
		klog_buf_put_i32(b, 0);   /* throttle time */
	if (version >= 7) {
		klog_buf_put_i16(b, error);
		klog_buf_put_i32(b, 0);   /* session id: none */
	}
}

size_t
klog_kwdata_fetch_part(klog_buf_t *b, int16_t version, int32_t partition,
    int16_t error, int64_t hwm, int64_t log_start)
{
	size_t errpos;

	klog_buf_put_i32(b, partition);
	errpos = b->len;
	klog_buf_put_i16(b, error);
	klog_buf_put_i64(b, hwm);
	if (version >= 4)
		klog_buf_put_i64(b, hwm);        /* last stable offset */
	if (version >= 5)
		klog_buf_put_i64(b, log_start);
	if (version >= 4)
		klog_buf_put_i32(b, 0);          /* aborted transactions */
	if (version >= 11)
		klog_buf_put_i32(b, -1);         /* preferred read replica */
	return errpos;
}

void
klog_kwdata_fetch_error(klog_buf_t *b, int32_t corr, int16_t version,
    int16_t error)
{
	size_t start = klog_kwire_begin(b, corr);

	klog_kwdata_fetch_head(b, version, error);
	klog_buf_put_i32(b, 0);          /* no topics */
	klog_kwire_end(b, start);
}

void
klog_kwdata_offsets_head(klog_buf_t *b, int16_t version)
{
	if (version >= 2)
		klog_buf_put_i32(b, 0);   /* throttle time */
}

void
klog_kwdata_offsets_part(klog_buf_t *b, int16_t version, int32_t partition,
    int16_t error, const int64_t *offs, int cnt, int64_t ts)
{
	klog_buf_put_i32(b, partition);
	klog_buf_put_i16(b, error);
	if (version == 0) {
		klog_buf_put_i32(b, error ? 0 : cnt);
		for (int j = 0; !error && j < cnt; j++)
			klog_buf_put_i64(b, offs[j]);
		return;
	}
	klog_buf_put_i64(b, error || cnt == 0 ? -1 : ts);
	klog_buf_put_i64(b, error || cnt == 0 ? -1 : offs[0]);
	if (version >= 4)
		klog_buf_put_i32(b, -1);  /* leader epoch: unknown */
}

static void
put_i32s(klog_buf_t *b, const int32_t *v, uint32_t n)
{
	klog_buf_put_i32(b, (int32_t)n);
	for (uint32_t i = 0; i < n; i++)
		klog_buf_put_i32(b, v[i]);
}

static void
put_brokers(klog_buf_t *b, int16_t version, const klog_kmeta_t *m)
{
	klog_buf_put_i32(b, (int32_t)m->nbrokers);
	for (uint32_t i = 0; i < m->nbrokers; i++) {
		klog_buf_put_i32(b, m->brokers[i].id);
		klog_kwire_put_str(b, m->brokers[i].host);
		klog_buf_put_i32(b, m->brokers[i].port);
		if (version >= 1)
			klog_buf_put_i16(b, -1);  /* rack: none */
	}
	if (version >= 2)
		klog_buf_put_i16(b, -1);          /* cluster id: none */
	if (version >= 1)
		klog_buf_put_i32(b, m->controller);
}

static void
put_part(klog_buf_t *b, int16_t version, const klog_kmeta_part_t *p)
{
	klog_buf_put_i16(b, p->error);
	klog_buf_put_i32(b, p->id);
	klog_buf_put_i32(b, p->leader);
	if (version >= 7)
		klog_buf_put_i32(b, -1);          /* leader epoch: unknown */
	put_i32s(b, p->replicas, p->nreplicas);
	put_i32s(b, p->isr, p->nisr);
	if (version >= 5)
		klog_buf_put_i32(b, 0);           /* offline replicas: none */
}

void
klog_kwdata_metadata_resp(klog_buf_t *b, int32_t corr, int16_t version,
    const klog_kmeta_t *m)
{
	size_t start = klog_kwire_begin(b, corr);

	if (version >= 3)
		klog_buf_put_i32(b, 0);           /* throttle time */
	put_brokers(b, version, m);
	klog_buf_put_i32(b, (int32_t)m->ntopics);
	for (uint32_t i = 0; i < m->ntopics; i++) {
		const klog_kmeta_topic_t *t = &m->topics[i];

		klog_buf_put_i16(b, t->error);
		klog_kwire_put_str(b, t->name);
		if (version >= 1)
			klog_buf_put_i8(b, 0);    /* not internal */
		klog_buf_put_i32(b, (int32_t)t->nparts);
		for (uint32_t j = 0; j < t->nparts; j++)
			put_part(b, version, &t->parts[j]);
		if (version >= 8)
			klog_buf_put_i32(b, t->ops);
	}
	if (version >= 8)
		klog_buf_put_i32(b, m->cluster_ops);
	klog_kwire_end(b, start);
}
