/*
 * libFuzzer target for lib/kafka/kwgroup.c: arbitrary bytes as Kafka group
 * API request frames.
 *
 * The input is a stream of frames (klog_kwire_frame()); each frame's body
 * goes, in a heap copy of exactly the frame so that ASan sees a read past
 * it, to the group decoder its api names, whatever the version (classic
 * or flexible as the version says); each view a decoder returns must lie
 * inside the frame and each count must fit the array it came in.  What
 * decoded is encoded back as the answer the listener writes at that
 * version, read here again with kprim's reader in the answer's encoding
 * to check that its size field is its length, that its counts are what
 * was put in, and that nothing is left over.  A broken invariant aborts.
 *
 * The seeds in corpus/fuzz_kwgroup are real request frames, one per API
 * and version the clients send: the v0 ones captured from kcat and
 * kafka-python before the listener spoke later versions (they were
 * fuzz_kwire's), the later ones captured by a proxy in front of
 * klog-serve --kafka-listen while confluent-kafka (JoinGroup 5, SyncGroup
 * 3, Heartbeat 3, LeaveGroup 1, OffsetCommit 7, OffsetFetch 7,
 * FindCoordinator 2; ListGroups and DescribeGroups 0 from list_groups())
 * and kafka-python (JoinGroup 1, OffsetFetch 3 of every partition,
 * ListGroups 1, DescribeGroups 3) ran groups and admin clients against it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kprim.h"
#include "klog/kafka/kwgroup.h"
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

/* ---- reading an answer back ---- */

/* The answer at b's start to r: its size field is its length; the reader
 * is left after the header (and a flexible answer's header tags). */
static void
answer(const klog_buf_t *b, const klog_kreq_t *r, klog_kprim_rd_t *rd)
{
	CHECK(!b->failed && b->len >= 8);
	klog_kprim_rd_init(rd, b->data, b->len, r->flexible);
	CHECK((size_t)klog_rd_i32(&rd->rd) == b->len - 4);
	CHECK(klog_rd_i32(&rd->rd) == r->correlation);
	klog_kprim_tags(rd);
}

static void
throttle(klog_kprim_rd_t *rd, const klog_kreq_t *r, int16_t from)
{
	if (r->version >= from)
		CHECK(klog_rd_i32(&rd->rd) == 0);
}

static void
end(klog_kprim_rd_t *rd)
{
	klog_kprim_tags(rd);
	CHECK(klog_kprim_done(rd) == 0 && klog_rd_left(&rd->rd) == 0);
}

static void
str_back(klog_kprim_rd_t *rd, klog_str_t want)
{
	klog_str_t s = klog_kprim_nstr(rd);

	CHECK(!rd->rd.failed);
	if (want.p == NULL)
		return;
	CHECK(s.len == want.len && (s.len == 0 ||
	    memcmp(s.p, want.p, s.len) == 0));
}

/* ---- each API ---- */

static void
find(struct frame f, const klog_kreq_t *r, klog_buf_t *b)
{
	klog_kprim_rd_t rd;
	klog_str_t key;
	int8_t type;
	int rc = klog_kwgroup_find(r, &key, &type);

	check_rc(rc);
	if (rc != 0)
		return;
	check_str(f, key);
	CHECK(key.p != NULL);
	if (r->version == 0)
		CHECK(type == KLOG_KWGROUP_KEY_GROUP);
	klog_buf_reset(b);
	klog_kwgroup_find_resp(b, r, (int16_t)(type & 1), "why", 3, key, 9);
	answer(b, r, &rd);
	throttle(&rd, r, 1);
	CHECK(klog_rd_i16(&rd.rd) == (type & 1));
	if (r->version >= 1)
		str_back(&rd, (klog_str_t){ NULL, 0 });
	CHECK(klog_rd_i32(&rd.rd) == ((type & 1) ? -1 : 3));
	str_back(&rd, (type & 1) ? (klog_str_t){ "", 0 } : key);
	CHECK(klog_rd_i32(&rd.rd) == ((type & 1) ? -1 : 9));
	end(&rd);
}

/* JoinGroup: the leader's answer lists every protocol as a member. */
static void
join(struct frame f, const klog_kreq_t *r, klog_buf_t *b,
    klog_proto_array_t *a)
{
	klog_kjoin_member_t *ms;
	klog_kprim_rd_t rd;
	klog_kjoin_t j;
	int rc = klog_kwgroup_join(r, &j, a);

	check_rc(rc);
	if (rc != 0)
		return;
	check_str(f, j.group);
	check_str(f, j.member_id);
	check_str(f, j.protocol_type);
	check_str(f, j.instance_id);
	if (r->version < 5)
		CHECK(j.instance_id.p == NULL);
	if (r->version == 0)
		CHECK(j.rebalance_timeout_ms == j.session_timeout_ms);
	check_count(a, j.protocols, j.nprotocols, sizeof(*j.protocols));
	ms = malloc(((size_t)j.nprotocols + 1) * sizeof(*ms));
	CHECK(ms != NULL);
	for (uint32_t i = 0; i < j.nprotocols; i++) {
		check_str(f, j.protocols[i].name);
		check_view(f, j.protocols[i].data, j.protocols[i].len);
		ms[i] = (klog_kjoin_member_t){ j.protocols[i].name,
		    j.instance_id, j.protocols[i].data, j.protocols[i].len };
	}
	klog_buf_reset(b);
	klog_kwgroup_join_resp(b, r, &(klog_kjoin_resp_t){ 0, 1,
	    j.protocol_type, j.member_id, j.group, j.nprotocols, ms });
	answer(b, r, &rd);
	throttle(&rd, r, 2);
	CHECK(klog_rd_i16(&rd.rd) == 0 && klog_rd_i32(&rd.rd) == 1);
	str_back(&rd, j.protocol_type);
	str_back(&rd, j.member_id);
	str_back(&rd, j.group);
	CHECK(klog_kprim_count(&rd, 0, 0) == (int32_t)j.nprotocols);
	for (uint32_t i = 0; i < j.nprotocols; i++) {
		uint32_t len;

		str_back(&rd, ms[i].member_id);
		if (r->version >= 5)
			str_back(&rd, j.instance_id);
		(void)klog_kprim_bytes(&rd, &len);
		CHECK(len == ms[i].meta_len);
		klog_kprim_tags(&rd);
	}
	end(&rd);
	free(ms);
}

static void
sync_group(struct frame f, const klog_kreq_t *r, klog_buf_t *b,
    klog_proto_array_t *a)
{
	klog_kprim_rd_t rd;
	klog_ksync_t s;
	uint32_t len;
	int rc = klog_kwgroup_sync(r, &s, a);

	check_rc(rc);
	if (rc != 0)
		return;
	check_str(f, s.group);
	check_str(f, s.member_id);
	check_str(f, s.instance_id);
	check_count(a, s.assign, s.nassign, sizeof(*s.assign));
	for (uint32_t i = 0; i < s.nassign; i++) {
		check_str(f, s.assign[i].name);
		check_view(f, s.assign[i].data, s.assign[i].len);
	}
	klog_buf_reset(b);
	klog_kwgroup_sync_resp(b, r, 0, s.nassign ? s.assign[0].data : NULL,
	    s.nassign ? s.assign[0].len : 0);
	answer(b, r, &rd);
	throttle(&rd, r, 1);
	CHECK(klog_rd_i16(&rd.rd) == 0);
	(void)klog_kprim_bytes(&rd, &len);
	CHECK(len == (s.nassign ? s.assign[0].len : 0));
	end(&rd);
}

static void
heartbeat(struct frame f, const klog_kreq_t *r, klog_buf_t *b)
{
	klog_kprim_rd_t rd;
	klog_kbeat_t h;
	int rc = klog_kwgroup_heartbeat(r, &h);

	check_rc(rc);
	if (rc != 0)
		return;
	check_str(f, h.group);
	check_str(f, h.member_id);
	check_str(f, h.instance_id);
	klog_buf_reset(b);
	klog_kwgroup_error_resp(b, r, KLOG_KERR_REBALANCE_IN_PROGRESS);
	answer(b, r, &rd);
	throttle(&rd, r, 1);
	CHECK(klog_rd_i16(&rd.rd) == KLOG_KERR_REBALANCE_IN_PROGRESS);
	end(&rd);
}

static void
leave(struct frame f, const klog_kreq_t *r, klog_buf_t *b,
    klog_proto_array_t *a)
{
	klog_kprim_rd_t rd;
	klog_kleave_t l;
	int rc = klog_kwgroup_leave(r, &l, a);

	check_rc(rc);
	if (rc != 0)
		return;
	check_str(f, l.group);
	check_count(a, l.members, l.count, sizeof(*l.members));
	if (r->version < 3)
		CHECK(l.count == 1);
	for (uint32_t i = 0; i < l.count; i++) {
		check_str(f, l.members[i].member_id);
		check_str(f, l.members[i].instance_id);
		l.members[i].error = (int16_t)(i & 1);
	}
	klog_buf_reset(b);
	klog_kwgroup_leave_resp(b, r, 0, &l);
	answer(b, r, &rd);
	throttle(&rd, r, 1);
	CHECK(klog_rd_i16(&rd.rd) == 0);
	if (r->version >= 3) {
		CHECK(klog_kprim_count(&rd, 0, 0) == (int32_t)l.count);
		for (uint32_t i = 0; i < l.count; i++) {
			str_back(&rd, l.members[i].member_id);
			str_back(&rd, l.members[i].instance_id);
			CHECK(klog_rd_i16(&rd.rd) == (int16_t)(i & 1));
			klog_kprim_tags(&rd);
		}
	}
	end(&rd);
}

/* OffsetCommit's or OffsetFetch's answer: its partitions under their
 * topics, in order, every one of them. */
static void
parts_back(const klog_buf_t *b, const klog_kreq_t *r, const klog_kcommit_t *c)
{
	int fetch = r->api == KLOG_KAPI_OFFSET_FETCH;
	klog_kprim_rd_t rd;
	uint32_t k = 0;
	int32_t nt;

	answer(b, r, &rd);
	throttle(&rd, r, 3);
	nt = klog_kprim_count(&rd, 0, 0);
	for (int32_t i = 0; i < nt; i++) {
		int32_t np;

		CHECK(k < c->count);
		str_back(&rd, c->parts[k].topic);
		np = klog_kprim_count(&rd, 0, 0);
		CHECK(np > 0);
		for (int32_t j = 0; j < np; j++, k++) {
			CHECK(k < c->count);
			CHECK(klog_rd_i32(&rd.rd) == c->parts[k].partition);
			if (fetch) {
				CHECK(klog_rd_i64(&rd.rd) ==
				    c->parts[k].offset);
				if (r->version >= 5)
					CHECK(klog_rd_i32(&rd.rd) == -1);
				str_back(&rd, c->parts[k].metadata);
			}
			CHECK(klog_rd_i16(&rd.rd) == (int16_t)(k & 1));
			klog_kprim_tags(&rd);
		}
		klog_kprim_tags(&rd);
	}
	CHECK(k == c->count);
	if (fetch && r->version >= 2)
		CHECK(klog_rd_i16(&rd.rd) == 0);
	end(&rd);
}

static void
commit(struct frame f, const klog_kreq_t *r, klog_buf_t *b,
    klog_proto_array_t *a)
{
	int is_commit = r->api == KLOG_KAPI_OFFSET_COMMIT;
	klog_kwgroup_parts_t w;
	klog_kcommit_t c;
	int rc = is_commit ? klog_kwgroup_offset_commit(r, &c, a) :
	    klog_kwgroup_offset_fetch(r, &c, a);

	check_rc(rc);
	if (rc != 0)
		return;
	check_str(f, c.group);
	check_str(f, c.member_id);
	check_str(f, c.instance_id);
	CHECK(c.group.p != NULL && c.member_id.p != NULL);
	if (!is_commit || r->version < 1)
		CHECK(c.generation == -1);
	if (c.all)
		CHECK(!is_commit && r->version >= 2 && c.count == 0);
	check_count(a, c.parts, c.count, sizeof(*c.parts));
	klog_buf_reset(b);
	klog_kwgroup_parts_begin(b, r, &w);
	for (uint32_t i = 0; i < c.count; i++) {
		const klog_kcommit_part_t *p = &c.parts[i];

		check_str(f, p->topic);
		check_str(f, p->metadata);
		CHECK(p->metadata.p != NULL);
		if (!is_commit)
			CHECK(p->offset == -1 && p->metadata.len == 0);
		if (is_commit)
			klog_kwgroup_commit_part(b, &w, p->topic, p->partition,
			    (int16_t)(i & 1));
		else
			klog_kwgroup_fetch_part(b, &w, p->topic, p->partition,
			    p->offset, p->metadata, (int16_t)(i & 1));
	}
	klog_kwgroup_parts_end(b, &w, 0);
	parts_back(b, r, &c);
}

static void
describe(struct frame f, const klog_kreq_t *r, klog_buf_t *b,
    klog_proto_array_t *a)
{
	klog_kwgroup_list_t w;
	klog_kprim_rd_t rd;
	klog_str_t *ids;
	uint32_t n;
	int ops, rc = klog_kwgroup_describe(r, a, &n, &ops);

	check_rc(rc);
	if (rc != 0)
		return;
	ids = a->p;
	check_count(a, ids, n, sizeof(*ids));
	klog_buf_reset(b);
	klog_kwgroup_describe_begin(b, r, &w);
	for (uint32_t i = 0; i < n; i++) {
		klog_kdmember_t m = { ids[i], ids[i], ids[i], ids[i],
		    (const uint8_t *)ids[i].p, NULL, ids[i].len, 0 };
		klog_kdgroup_t g = { 0, ids[i], ids[i], ids[i], ids[i], 1, &m,
		    (int32_t)i };

		check_str(f, ids[i]);
		klog_kwgroup_describe_group(b, &w, &g);
	}
	klog_kwgroup_list_end(b, &w);
	answer(b, r, &rd);
	throttle(&rd, r, 1);
	CHECK(klog_kprim_count(&rd, 0, 0) == (int32_t)n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t len;

		CHECK(klog_rd_i16(&rd.rd) == 0);
		for (int k = 0; k < 4; k++)
			str_back(&rd, ids[i]);
		CHECK(klog_kprim_count(&rd, 0, 0) == 1);
		for (int k = r->version >= 4 ? 0 : 1; k < 4; k++)
			str_back(&rd, ids[i]);
		(void)klog_kprim_bytes(&rd, &len);
		CHECK(len == ids[i].len);
		(void)klog_kprim_bytes(&rd, &len);
		CHECK(len == 0);
		klog_kprim_tags(&rd);
		if (r->version >= 3)
			CHECK(klog_rd_i32(&rd.rd) == (int32_t)i);
		klog_kprim_tags(&rd);
	}
	end(&rd);
}

static void
list(struct frame f, const klog_kreq_t *r, klog_buf_t *b,
    klog_proto_array_t *a)
{
	klog_kwgroup_list_t w;
	klog_kprim_rd_t rd;
	klog_str_t *states;
	uint32_t n;
	int rc = klog_kwgroup_list(r, a, &n);

	check_rc(rc);
	if (rc != 0)
		return;
	states = a->p;
	check_count(a, states, n, sizeof(*states));
	klog_buf_reset(b);
	klog_kwgroup_list_begin(b, r, 0, &w);
	for (uint32_t i = 0; i < n; i++) {
		check_str(f, states[i]);
		klog_kwgroup_list_group(b, &w, states[i], states[i],
		    states[i]);
	}
	klog_kwgroup_list_end(b, &w);
	answer(b, r, &rd);
	throttle(&rd, r, 1);
	CHECK(klog_rd_i16(&rd.rd) == 0);
	CHECK(klog_kprim_count(&rd, 0, 0) == (int32_t)n);
	for (uint32_t i = 0; i < n; i++) {
		str_back(&rd, states[i]);
		str_back(&rd, states[i]);
		if (r->version >= 4)
			str_back(&rd, states[i]);
		klog_kprim_tags(&rd);
	}
	end(&rd);
}

/* One whole frame p[0..len). */
static void
decode(const uint8_t *p, size_t len, klog_buf_t *b)
{
	klog_proto_array_t a = { NULL, 0 };
	struct frame f;
	klog_kreq_t r;
	uint8_t *copy;

	copy = malloc(len);
	CHECK(copy != NULL);
	memcpy(copy, p, len);
	CHECK(klog_kwire_frame(copy, len, MAX_SIZE, &r) == 0);
	f = (struct frame){ r.body, r.body_len };
	switch (r.api) {
	case KLOG_KAPI_FIND_COORDINATOR:
		find(f, &r, b);
		break;
	case KLOG_KAPI_JOIN_GROUP:
		join(f, &r, b, &a);
		break;
	case KLOG_KAPI_SYNC_GROUP:
		sync_group(f, &r, b, &a);
		break;
	case KLOG_KAPI_HEARTBEAT:
		heartbeat(f, &r, b);
		break;
	case KLOG_KAPI_LEAVE_GROUP:
		leave(f, &r, b, &a);
		break;
	case KLOG_KAPI_OFFSET_COMMIT:
	case KLOG_KAPI_OFFSET_FETCH:
		commit(f, &r, b, &a);
		break;
	case KLOG_KAPI_DESCRIBE_GROUPS:
		describe(f, &r, b, &a);
		break;
	case KLOG_KAPI_LIST_GROUPS:
		list(f, &r, b, &a);
		break;
	default:
		break;
	}
	free(a.p);
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	klog_buf_t b;
	klog_kreq_t r;
	size_t pos = 0;

	klog_buf_init(&b);
	for (int k = 0; k < MAX_FRAMES && pos < size; k++) {
		if (klog_kwire_frame(data + pos, size - pos, MAX_SIZE, &r) != 0)
			break;
		decode(data + pos, (size_t)r.size + 4, &b);
		pos += (size_t)r.size + 4;
	}
	klog_buf_free(&b);
	return 0;
}
