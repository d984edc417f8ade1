/*
 * The Kafka group APIs on the wire; see kwgroup.h.  The fields of each
 * version are Kafka's message schemas' (the JSON files of its
 * clients/src/main/resources/common/message/); each decoder and encoder
 * follows its schema's field order, reading or writing a field where its
 * versions say.
 *
 * Decoders read with a sticky reader and check it once at the end; arrays
 * grow as they are read, their counts first bounded by the bytes left (an
 * element takes at least a few bytes of the body).
 */
#include <stdint.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kprim.h"
#include "klog/kafka/kwgroup.h"

#define EMPTY ((klog_str_t){ "", 0 })

/* ---- decoders ---- */

/* The least bytes an element of the array takes: classic and flexible
 * encodings of its fields, and its tags. */
static size_t
least(const klog_kprim_rd_t *rd, size_t classic, size_t flexible)
{
	return rd->flex ? flexible + 1 : classic;
}

int
klog_kwgroup_find(const klog_kreq_t *r, klog_str_t *key, int8_t *key_type)
{
	klog_kprim_rd_t rd;

	klog_kwire_reader(r, &rd);
	*key = klog_kprim_str(&rd);
	*key_type = r->version >= 1 ? klog_rd_i8(&rd.rd) :
	    KLOG_KWGROUP_KEY_GROUP;
	return klog_kprim_end(&rd);
}

/* An array of names and their bytes, into a; its count to *n. */
static int
rd_pairs(klog_kprim_rd_t *rd, klog_proto_array_t *a, uint32_t *n)
{
	int32_t count = klog_kprim_count(rd, least(rd, 6, 2), 0);

	*n = 0;
	for (int32_t i = 0; i < count && !rd->rd.failed; i++) {
		klog_kpair_t *p = klog_kprim_slot(a, (size_t)i, sizeof(*p));

		if (p == NULL)
			return -KLOG_ENOMEM;
		p->name = klog_kprim_str(rd);
		p->data = klog_kprim_bytes(rd, &p->len);
		klog_kprim_tags(rd);
	}
	if (!rd->rd.failed)
		*n = (uint32_t)count;
	return 0;
}

int
klog_kwgroup_join(const klog_kreq_t *r, klog_kjoin_t *j, klog_proto_array_t *a)
{
	klog_kprim_rd_t rd;

	klog_kwire_reader(r, &rd);
	memset(j, 0, sizeof(*j));
	j->group = klog_kprim_str(&rd);
	j->session_timeout_ms = klog_rd_i32(&rd.rd);
	j->rebalance_timeout_ms = r->version >= 1 ? klog_rd_i32(&rd.rd) :
	    j->session_timeout_ms;
	j->member_id = klog_kprim_str(&rd);
	if (r->version >= 5)
		j->instance_id = klog_kprim_nstr(&rd);
	j->protocol_type = klog_kprim_str(&rd);
	if (rd_pairs(&rd, a, &j->nprotocols) < 0)
		return -KLOG_ENOMEM;
	j->protocols = a->p;
	return klog_kprim_end(&rd);
}

int
klog_kwgroup_sync(const klog_kreq_t *r, klog_ksync_t *s, klog_proto_array_t *a)
{
	klog_kprim_rd_t rd;

	klog_kwire_reader(r, &rd);
	memset(s, 0, sizeof(*s));
	s->group = klog_kprim_str(&rd);
	s->generation = klog_rd_i32(&rd.rd);
	s->member_id = klog_kprim_str(&rd);
	if (r->version >= 3)
		s->instance_id = klog_kprim_nstr(&rd);
	if (rd_pairs(&rd, a, &s->nassign) < 0)
		return -KLOG_ENOMEM;
	s->assign = a->p;
	return klog_kprim_end(&rd);
}

int
klog_kwgroup_heartbeat(const klog_kreq_t *r, klog_kbeat_t *h)
{
	klog_kprim_rd_t rd;

	klog_kwire_reader(r, &rd);
	memset(h, 0, sizeof(*h));
	h->group = klog_kprim_str(&rd);
	h->generation = klog_rd_i32(&rd.rd);
	h->member_id = klog_kprim_str(&rd);
	if (r->version >= 3)
		h->instance_id = klog_kprim_nstr(&rd);
	return klog_kprim_end(&rd);
}

int
klog_kwgroup_leave(const klog_kreq_t *r, klog_kleave_t *l,
    klog_proto_array_t *a)
{
	klog_kprim_rd_t rd;
	klog_kleaver_t *m;
	int32_t n = 1;

	klog_kwire_reader(r, &rd);
	memset(l, 0, sizeof(*l));
	l->group = klog_kprim_str(&rd);
	if (r->version >= 3)
		n = klog_kprim_count(&rd, least(&rd, 4, 2), 0);
	for (int32_t i = 0; i < n && !rd.rd.failed; i++) {
		if ((m = klog_kprim_slot(a, (size_t)i, sizeof(*m))) == NULL)
			return -KLOG_ENOMEM;
		memset(m, 0, sizeof(*m));
		m->member_id = klog_kprim_str(&rd);
		if (r->version >= 3) {
			m->instance_id = klog_kprim_nstr(&rd);
			klog_kprim_tags(&rd);
		}
	}
	if (rd.rd.failed)
		return -KLOG_EPROTO;
	l->count = (uint32_t)n;
	l->members = a->p;
	return klog_kprim_end(&rd);
}

/* The topics and partitions of OffsetCommit (with) or OffsetFetch. */
static int
commit_parts(klog_kprim_rd_t *rd, int16_t version, int with, klog_kcommit_t *c,
    klog_proto_array_t *a)
{
	int32_t nt = klog_kprim_count(rd, least(rd, 6, 2), !with &&
	    version >= 2);
	uint32_t k = 0;

	c->all = nt == -1;
	for (int32_t i = 0; i < nt && !rd->rd.failed; i++) {
		klog_str_t topic = klog_kprim_str(rd);
		int32_t np = klog_kprim_count(rd, with ? least(rd, 14, 10) : 4,
		    0);

		for (int32_t j = 0; j < np && !rd->rd.failed; j++) {
			klog_kcommit_part_t *p = klog_kprim_slot(a, k,
			    sizeof(*p));

			if (p == NULL)
				return -KLOG_ENOMEM;
			*p = (klog_kcommit_part_t){ topic, klog_rd_i32(&rd->rd),
			    -1, -1, EMPTY };
			if (with) {
				p->offset = klog_rd_i64(&rd->rd);
				if (version >= 6)
					p->leader_epoch = klog_rd_i32(&rd->rd);
				if (version == 1)  /* a commit time */
					(void)klog_rd_i64(&rd->rd);
				p->metadata = klog_kprim_nstr(rd);
				if (p->metadata.p == NULL)
					p->metadata = EMPTY;
				klog_kprim_tags(rd);
			}
			k++;
		}
		klog_kprim_tags(rd);
	}
	c->count = k;
	c->parts = a->p;
	return 0;
}

int
klog_kwgroup_offset_commit(const klog_kreq_t *r, klog_kcommit_t *c,
    klog_proto_array_t *a)
{
	klog_kprim_rd_t rd;

	klog_kwire_reader(r, &rd);
	memset(c, 0, sizeof(*c));
	c->group = klog_kprim_str(&rd);
	c->generation = -1;
	c->member_id = EMPTY;
	if (r->version >= 1) {
		c->generation = klog_rd_i32(&rd.rd);
		c->member_id = klog_kprim_str(&rd);
	}
	if (r->version >= 7)
		c->instance_id = klog_kprim_nstr(&rd);
	if (r->version >= 2 && r->version <= 4)
		(void)klog_rd_i64(&rd.rd);  /* retention: the broker's */
	if (commit_parts(&rd, r->version, 1, c, a) < 0)
		return -KLOG_ENOMEM;
	return klog_kprim_end(&rd);
}

int
klog_kwgroup_offset_fetch(const klog_kreq_t *r, klog_kcommit_t *c,
    klog_proto_array_t *a)
{
	klog_kprim_rd_t rd;

	klog_kwire_reader(r, &rd);
	memset(c, 0, sizeof(*c));
	c->group = klog_kprim_str(&rd);
	c->generation = -1;
	c->member_id = EMPTY;
	if (commit_parts(&rd, r->version, 0, c, a) < 0)
		return -KLOG_ENOMEM;
	if (r->version >= 7)
		c->require_stable = klog_rd_i8(&rd.rd) != 0;
	return klog_kprim_end(&rd);
}

/* An array of strings into a. */
static int
rd_strs(klog_kprim_rd_t *rd, klog_proto_array_t *a, uint32_t *n)
{
	int32_t count = klog_kprim_count(rd, least(rd, 2, 0), 0);

	*n = 0;
	for (int32_t i = 0; i < count && !rd->rd.failed; i++) {
		klog_str_t *s = klog_kprim_slot(a, (size_t)i, sizeof(*s));

		if (s == NULL)
			return -KLOG_ENOMEM;
		*s = klog_kprim_str(rd);
	}
	if (!rd->rd.failed)
		*n = (uint32_t)count;
	return 0;
}

int
klog_kwgroup_describe(const klog_kreq_t *r, klog_proto_array_t *a,
    uint32_t *n, int *with_ops)
{
	klog_kprim_rd_t rd;

	klog_kwire_reader(r, &rd);
	if (rd_strs(&rd, a, n) < 0)
		return -KLOG_ENOMEM;
	*with_ops = r->version >= 3 && klog_rd_i8(&rd.rd) != 0;
	return klog_kprim_end(&rd);
}

int
klog_kwgroup_list(const klog_kreq_t *r, klog_proto_array_t *a,
    uint32_t *nstates)
{
	klog_kprim_rd_t rd;

	klog_kwire_reader(r, &rd);
	*nstates = 0;
	if (r->version >= 4 && rd_strs(&rd, a, nstates) < 0)
		return -KLOG_ENOMEM;
	return klog_kprim_end(&rd);
}

/* ---- encoders ---- */

static klog_str_t
or_empty(klog_str_t s)
{
	return s.p != NULL ? s : EMPTY;
}

/* The response header, and the throttle time from version from. */
static size_t
begin(klog_buf_t *b, const klog_kreq_t *r, int16_t from)
{
	size_t start = klog_kwire_begin_resp(b, r);

	if (r->version >= from)
		klog_buf_put_i32(b, 0);
	return start;
}

/* The response's own tags, and its size. */
static void
end(klog_buf_t *b, const klog_kreq_t *r, size_t start)
{
	klog_kprim_put_tags(b, r->flexible);
	klog_kwire_end(b, start);
}

void
klog_kwgroup_find_resp(klog_buf_t *b, const klog_kreq_t *r, int16_t error,
    const char *why, int32_t node, klog_str_t host, int32_t port)
{
	size_t start = begin(b, r, 1);
	int flex = r->flexible;

	klog_buf_put_i16(b, error);
	if (r->version >= 1)
		klog_kprim_put_cstr(b, error ? why : NULL, flex);
	klog_buf_put_i32(b, error ? -1 : node);
	klog_kprim_put_str(b, error ? EMPTY : or_empty(host), flex);
	klog_buf_put_i32(b, error ? -1 : port);
	end(b, r, start);
}

void
klog_kwgroup_join_resp(klog_buf_t *b, const klog_kreq_t *r,
    const klog_kjoin_resp_t *jr)
{
	size_t start = begin(b, r, 2);
	int flex = r->flexible;

	klog_buf_put_i16(b, jr->error);
	klog_buf_put_i32(b, jr->generation);
	klog_kprim_put_str(b, or_empty(jr->protocol), flex);
	klog_kprim_put_str(b, or_empty(jr->leader_id), flex);
	klog_kprim_put_str(b, or_empty(jr->member_id), flex);
	klog_kprim_put_count(b, (int32_t)jr->nmembers, flex);
	for (uint32_t i = 0; i < jr->nmembers; i++) {
		const klog_kjoin_member_t *m = &jr->members[i];

		klog_kprim_put_str(b, m->member_id, flex);
		if (r->version >= 5)
			klog_kprim_put_str(b, m->instance_id, flex);
		klog_kprim_put_bytes(b, m->meta != NULL ? m->meta :
		    (const uint8_t *)"", (int32_t)m->meta_len, flex);
		klog_kprim_put_tags(b, flex);
	}
	end(b, r, start);
}

void
klog_kwgroup_sync_resp(klog_buf_t *b, const klog_kreq_t *r, int16_t error,
    const uint8_t *assignment, uint32_t len)
{
	size_t start = begin(b, r, 1);

	klog_buf_put_i16(b, error);
	klog_kprim_put_bytes(b, assignment != NULL ? assignment :
	    (const uint8_t *)"", assignment != NULL ? (int32_t)len : 0,
	    r->flexible);
	end(b, r, start);
}

void
klog_kwgroup_error_resp(klog_buf_t *b, const klog_kreq_t *r, int16_t error)
{
	size_t start = begin(b, r, 1);

	klog_buf_put_i16(b, error);
	end(b, r, start);
}

void
klog_kwgroup_leave_resp(klog_buf_t *b, const klog_kreq_t *r, int16_t error,
    const klog_kleave_t *l)
{
	size_t start = begin(b, r, 1);
	int flex = r->flexible;

	klog_buf_put_i16(b, error);
	if (r->version >= 3) {
		klog_kprim_put_count(b, (int32_t)l->count, flex);
		for (uint32_t i = 0; i < l->count; i++) {
			klog_kprim_put_str(b, l->members[i].member_id, flex);
			klog_kprim_put_str(b, l->members[i].instance_id, flex);
			klog_buf_put_i16(b, l->members[i].error);
			klog_kprim_put_tags(b, flex);
		}
	}
	end(b, r, start);
}

/* ---- OffsetCommit's and OffsetFetch's partitions ---- */

void
klog_kwgroup_parts_begin(klog_buf_t *b, const klog_kreq_t *r,
    klog_kwgroup_parts_t *w)
{
	memset(w, 0, sizeof(*w));
	w->r = r;
	w->start = begin(b, r, 3);
	w->topics_pos = klog_kprim_count_mark(b, r->flexible);
}

static int
str_eq(klog_str_t a, klog_str_t b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

/* The open topic's partition count, and its tags. */
static void
close_topic(klog_buf_t *b, klog_kwgroup_parts_t *w)
{
	if (w->ntopics == 0)
		return;
	klog_kprim_count_patch(b, w->parts_pos, w->nparts, w->r->flexible);
	klog_kprim_put_tags(b, w->r->flexible);
}

/* Before a partition's fields: its topic's entry when it starts one. */
static void
part(klog_buf_t *b, klog_kwgroup_parts_t *w, klog_str_t topic,
    int32_t partition)
{
	if (w->ntopics == 0 || !str_eq(w->cur, topic)) {
		close_topic(b, w);
		w->ntopics++;
		w->cur = topic;
		w->nparts = 0;
		klog_kprim_put_str(b, or_empty(topic), w->r->flexible);
		w->parts_pos = klog_kprim_count_mark(b, w->r->flexible);
	}
	w->nparts++;
	klog_buf_put_i32(b, partition);
}

void
klog_kwgroup_commit_part(klog_buf_t *b, klog_kwgroup_parts_t *w,
    klog_str_t topic, int32_t partition, int16_t error)
{
	part(b, w, topic, partition);
	klog_buf_put_i16(b, error);
	klog_kprim_put_tags(b, w->r->flexible);
}

void
klog_kwgroup_fetch_part(klog_buf_t *b, klog_kwgroup_parts_t *w,
    klog_str_t topic, int32_t partition, int64_t offset, klog_str_t meta,
    int16_t error)
{
	part(b, w, topic, partition);
	klog_buf_put_i64(b, offset);
	if (w->r->version >= 5)
		klog_buf_put_i32(b, -1);  /* leader epoch: klog has none */
	klog_kprim_put_str(b, or_empty(meta), w->r->flexible);
	klog_buf_put_i16(b, error);
	klog_kprim_put_tags(b, w->r->flexible);
}

void
klog_kwgroup_parts_end(klog_buf_t *b, klog_kwgroup_parts_t *w, int16_t error)
{
	const klog_kreq_t *r = w->r;

	close_topic(b, w);
	klog_kprim_count_patch(b, w->topics_pos, w->ntopics, r->flexible);
	if (r->api == KLOG_KAPI_OFFSET_FETCH && r->version >= 2)
		klog_buf_put_i16(b, error);
	end(b, r, w->start);
}

/* ---- DescribeGroups and ListGroups ---- */

void
klog_kwgroup_describe_begin(klog_buf_t *b, const klog_kreq_t *r,
    klog_kwgroup_list_t *w)
{
	memset(w, 0, sizeof(*w));
	w->r = r;
	w->start = begin(b, r, 1);
	w->count_pos = klog_kprim_count_mark(b, r->flexible);
}

static void
describe_member(klog_buf_t *b, const klog_kreq_t *r, const klog_kdmember_t *m)
{
	int flex = r->flexible;

	klog_kprim_put_str(b, or_empty(m->member_id), flex);
	if (r->version >= 4)
		klog_kprim_put_str(b, m->instance_id, flex);
	klog_kprim_put_str(b, or_empty(m->client_id), flex);
	klog_kprim_put_str(b, or_empty(m->client_host), flex);
	klog_kprim_put_bytes(b, m->meta != NULL ? m->meta :
	    (const uint8_t *)"", m->meta != NULL ? (int32_t)m->meta_len : 0,
	    flex);
	klog_kprim_put_bytes(b, m->assign != NULL ? m->assign :
	    (const uint8_t *)"", m->assign != NULL ? (int32_t)m->assign_len :
	    0, flex);
	klog_kprim_put_tags(b, flex);
}

void
klog_kwgroup_describe_group(klog_buf_t *b, klog_kwgroup_list_t *w,
    const klog_kdgroup_t *g)
{
	const klog_kreq_t *r = w->r;
	int flex = r->flexible;

	w->n++;
	klog_buf_put_i16(b, g->error);
	klog_kprim_put_str(b, or_empty(g->id), flex);
	klog_kprim_put_str(b, or_empty(g->state), flex);
	klog_kprim_put_str(b, or_empty(g->protocol_type), flex);
	klog_kprim_put_str(b, or_empty(g->protocol), flex);
	klog_kprim_put_count(b, (int32_t)g->nmembers, flex);
	for (uint32_t i = 0; i < g->nmembers; i++)
		describe_member(b, r, &g->members[i]);
	if (r->version >= 3)
		klog_buf_put_i32(b, g->authorized_ops);
	klog_kprim_put_tags(b, flex);
}

void
klog_kwgroup_list_begin(klog_buf_t *b, const klog_kreq_t *r, int16_t error,
    klog_kwgroup_list_t *w)
{
	memset(w, 0, sizeof(*w));
	w->r = r;
	w->start = begin(b, r, 1);
	klog_buf_put_i16(b, error);
	w->count_pos = klog_kprim_count_mark(b, r->flexible);
}

void
klog_kwgroup_list_group(klog_buf_t *b, klog_kwgroup_list_t *w, klog_str_t id,
    klog_str_t protocol_type, klog_str_t state)
{
	int flex = w->r->flexible;

	w->n++;
	klog_kprim_put_str(b, or_empty(id), flex);
	klog_kprim_put_str(b, or_empty(protocol_type), flex);
	if (w->r->version >= 4)
		klog_kprim_put_str(b, or_empty(state), flex);
	klog_kprim_put_tags(b, flex);
}

void
klog_kwgroup_list_end(klog_buf_t *b, klog_kwgroup_list_t *w)
{
	klog_kprim_count_patch(b, w->count_pos, w->n, w->r->flexible);
	end(b, w->r, w->start);
}
