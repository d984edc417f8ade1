/*
 * Unit tests for lib/kafka/kwgroup.c.  Requests are written field by field
 * from Kafka's message schemas (the specification, not the output of an
 * encoder of ours), in the classic encoding or, for the flexible versions,
 * with compact lengths and tagged fields; answers are compared byte for
 * byte with what the schemas say they hold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kprim.h"
#include "klog/kafka/kwgroup.h"

#define STR(s) ((klog_str_t){ (s), (uint16_t)(sizeof(s) - 1) })
#define NUL ((klog_str_t){ NULL, 0 })

struct req {
	klog_buf_t b;
	size_t start;
	int flex;
	klog_kreq_t r;
	klog_proto_array_t a;
};

static int
str_is(klog_str_t s, const char *want)
{
	return s.p != NULL && s.len == strlen(want) &&
	    memcmp(s.p, want, s.len) == 0;
}

/* A request's header: api, version, correlation 9, client "kc", and in a
 * flexible request (header v2) its empty tags. */
static void
req_begin(struct req *q, int16_t api, int16_t version)
{
	memset(q, 0, sizeof(*q));
	klog_buf_init(&q->b);
	q->flex = version >= klog_kwire_first_flexible(api);
	klog_buf_put_i32(&q->b, 0);
	klog_buf_put_i16(&q->b, api);
	klog_buf_put_i16(&q->b, version);
	klog_buf_put_i32(&q->b, 9);
	klog_buf_put_str(&q->b, "kc", 2);
	if (q->flex)
		klog_buf_put_i8(&q->b, 0);
}

static void
req_end(struct req *q)
{
	klog_buf_patch_i32(&q->b, 0, (int32_t)(q->b.len - 4));
	assert_false(q->b.failed);
	assert_int_equal(klog_kwire_frame(q->b.data, q->b.len, 1 << 20, &q->r),
	    0);
	assert_int_equal(q->r.flexible, q->flex);
}

static void
req_free(struct req *q)
{
	klog_buf_free(&q->b);
	free(q->a.p);
}

/* Fields in the request's encoding. */
static void
put_str(struct req *q, const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (q->flex) {
		klog_buf_put_i8(&q->b, (int8_t)(s != NULL ? n + 1 : 0));
	} else {
		klog_buf_put_i16(&q->b, s != NULL ? (int16_t)n : -1);
	}
	if (n > 0)
		klog_buf_put(&q->b, s, n);
}

static void
put_bytes(struct req *q, const char *s)
{
	size_t n = strlen(s);

	if (q->flex)
		klog_buf_put_i8(&q->b, (int8_t)(n + 1));
	else
		klog_buf_put_i32(&q->b, (int32_t)n);
	klog_buf_put(&q->b, s, n);
}

static void
put_count(struct req *q, int32_t n)
{
	if (q->flex)
		klog_buf_put_i8(&q->b, (int8_t)(n + 1));
	else
		klog_buf_put_i32(&q->b, n);
}

static void
put_tags(struct req *q)
{
	if (q->flex)
		klog_buf_put_i8(&q->b, 0);
}

/* A decoder refuses the request cut anywhere. */
#define CUTS(q, call) do { \
	for (size_t cut_ = 0; cut_ < (q)->r.body_len; cut_++) { \
		klog_kreq_t c_ = (q)->r; \
		\
		c_.body_len = cut_; \
		{ const klog_kreq_t *r_ = &c_; \
		  assert_int_equal((call), -KLOG_EPROTO); } \
	} \
} while (0)

/* An answer to a request of api and version, correlation 9, compared
 * with want (after the size and correlation). */
static void
resp_is(const klog_buf_t *b, const uint8_t *want, size_t n)
{
	assert_false(b->failed);
	assert_int_equal(b->len, 8 + n);
	assert_int_equal(b->data[0] << 24 | b->data[1] << 16 |
	    b->data[2] << 8 | b->data[3], (int)(b->len - 4));
	assert_memory_equal(b->data + 4, "\0\0\0\11", 4);
	assert_memory_equal(b->data + 8, want, n);
}

static klog_kreq_t
hdr(int16_t api, int16_t version)
{
	return (klog_kreq_t){ .api = api, .version = version,
	    .correlation = 9, .flexible = version >=
	    klog_kwire_first_flexible(api) };
}

/* ---- FindCoordinator ---- */

static void
test_find(void **state)
{
	static const uint8_t v0[] = {
		0, 0, 0, 0, 0, 7, 0, 7, 'b', 'r', 'o', 'k', 'e', 'r', '1',
		0, 0, 0x23, 0x84,
	};
	static const uint8_t v2_err[] = {
		0, 0, 0, 0, 0, 53, 0, 4, 'n', 'o', 'p', 'e',
		0xff, 0xff, 0xff, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff,
	};
	static const uint8_t v1_ok[] = {
		0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 7, 0, 1, 'h',
		0, 0, 0x23, 0x84,
	};
	struct req q;
	klog_str_t key;
	int8_t type;
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	req_begin(&q, KLOG_KAPI_FIND_COORDINATOR, 0);
	put_str(&q, "grp");
	req_end(&q);
	assert_int_equal(klog_kwgroup_find(&q.r, &key, &type), 0);
	assert_true(str_is(key, "grp"));
	assert_int_equal(type, KLOG_KWGROUP_KEY_GROUP);
	req_free(&q);
	req_begin(&q, KLOG_KAPI_FIND_COORDINATOR, 1);
	put_str(&q, "tx");
	klog_buf_put_i8(&q.b, 1);
	req_end(&q);
	assert_int_equal(klog_kwgroup_find(&q.r, &key, &type), 0);
	assert_int_equal(type, KLOG_KWGROUP_KEY_TRANSACTION);
	CUTS(&q, klog_kwgroup_find(r_, &key, &type));
	req_free(&q);

	klog_buf_init(&b);
	r = hdr(KLOG_KAPI_FIND_COORDINATOR, 0);
	klog_kwgroup_find_resp(&b, &r, 0, NULL, 7, STR("broker1"), 9092);
	resp_is(&b, v0, sizeof(v0));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_FIND_COORDINATOR, 2);
	klog_kwgroup_find_resp(&b, &r,
	    KLOG_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "nope", 7,
	    STR("h"), 9092);
	resp_is(&b, v2_err, sizeof(v2_err));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_FIND_COORDINATOR, 1);
	klog_kwgroup_find_resp(&b, &r, 0, "ignored", 7, STR("h"), 9092);
	resp_is(&b, v1_ok, sizeof(v1_ok));
	klog_buf_free(&b);
}

/* ---- JoinGroup ---- */

static void
join_req(struct req *q, int16_t v, const char *member, const char *instance)
{
	req_begin(q, KLOG_KAPI_JOIN_GROUP, v);
	put_str(q, "g");
	klog_buf_put_i32(&q->b, 10000);
	if (v >= 1)
		klog_buf_put_i32(&q->b, 300000);
	put_str(q, member);
	if (v >= 5)
		put_str(q, instance);
	put_str(q, "consumer");
	put_count(q, 2);
	put_str(q, "range");
	put_bytes(q, "abc");
	put_tags(q);
	put_str(q, "roundrobin");
	put_bytes(q, "");
	put_tags(q);
	put_tags(q);
	req_end(q);
}

static void
test_join(void **state)
{
	struct req q;
	klog_kjoin_t j;

	(void)state;
	for (int16_t v = 0; v <= 5; v++) {
		join_req(&q, v, v == 4 ? "m-1" : "", v == 5 ? "host-a" : NULL);
		assert_int_equal(klog_kwgroup_join(&q.r, &j, &q.a), 0);
		assert_true(str_is(j.group, "g"));
		assert_int_equal(j.session_timeout_ms, 10000);
		/* v0 has no rebalance timeout: the session's. */
		assert_int_equal(j.rebalance_timeout_ms, v >= 1 ? 300000 :
		    10000);
		assert_true(str_is(j.member_id, v == 4 ? "m-1" : ""));
		if (v == 5)
			assert_true(str_is(j.instance_id, "host-a"));
		else
			assert_null(j.instance_id.p);
		assert_true(str_is(j.protocol_type, "consumer"));
		assert_int_equal(j.nprotocols, 2);
		assert_true(str_is(j.protocols[0].name, "range"));
		assert_memory_equal(j.protocols[0].data, "abc", 3);
		assert_int_equal(j.protocols[1].len, 0);
		CUTS(&q, klog_kwgroup_join(r_, &j, &q.a));
		req_free(&q);
	}
	/* v5 with a null instance id: a dynamic member. */
	join_req(&q, 5, "", NULL);
	assert_int_equal(klog_kwgroup_join(&q.r, &j, &q.a), 0);
	assert_null(j.instance_id.p);
	/* A protocol count the body cannot hold. */
	q.b.data[q.b.len - 34] = 0x7f;
	assert_int_equal(klog_kwgroup_join(&q.r, &j, &q.a), -KLOG_EPROTO);
	req_free(&q);
}

/* The answers: v0's fields; v2's throttle first; v4's MEMBER_ID_REQUIRED
 * round (KIP-394: no generation, the id to join with); v5's leader list
 * with each member's group instance id. */
static void
test_join_resp(void **state)
{
	static const uint8_t v0[] = {
		0, 0, 0, 0, 0, 3, 0, 5, 'r', 'a', 'n', 'g', 'e',
		0, 2, 'm', '1', 0, 2, 'm', '2',
		0, 0, 0, 0,
	};
	static const uint8_t v4_required[] = {
		0, 0, 0, 0, 0, 79, 0xff, 0xff, 0xff, 0xff,
		0, 0, 0, 0, 0, 3, 'm', '-', '1',
		0, 0, 0, 0,
	};
	static const uint8_t v5[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 5, 'r', 'a', 'n', 'g', 'e',
		0, 2, 'm', '1', 0, 2, 'm', '1',
		0, 0, 0, 2,
		0, 2, 'm', '1', 0xff, 0xff, 0, 0, 0, 1, 'x',
		0, 2, 'm', '2', 0, 1, 'i', 0, 0, 0, 0,
	};
	klog_kjoin_member_t ms[2] = {
		{ STR("m1"), NUL, (const uint8_t *)"x", 1 },
		{ STR("m2"), STR("i"), NULL, 0 },
	};
	klog_kjoin_resp_t jr = { 0, 3, STR("range"), STR("m1"), STR("m2"), 0,
	    NULL };
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	r = hdr(KLOG_KAPI_JOIN_GROUP, 0);
	klog_kwgroup_join_resp(&b, &r, &jr);
	resp_is(&b, v0, sizeof(v0));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_JOIN_GROUP, 4);
	klog_kwgroup_join_resp(&b, &r, &(klog_kjoin_resp_t){
	    .error = KLOG_KERR_MEMBER_ID_REQUIRED, .generation = -1,
	    .member_id = STR("m-1") });
	resp_is(&b, v4_required, sizeof(v4_required));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_JOIN_GROUP, 5);
	jr = (klog_kjoin_resp_t){ 0, 1, STR("range"), STR("m1"), STR("m1"),
	    2, ms };
	klog_kwgroup_join_resp(&b, &r, &jr);
	resp_is(&b, v5, sizeof(v5));
	klog_buf_free(&b);
}

/* ---- SyncGroup, Heartbeat, LeaveGroup ---- */

static void
test_sync_heartbeat(void **state)
{
	static const uint8_t sync_v1[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 2,
	};
	static const uint8_t sync_v0_err[] = {
		0, 27, 0, 0, 0, 0,
	};
	static const uint8_t hb_v0[] = { 0, 22 };
	static const uint8_t hb_v3[] = { 0, 0, 0, 0, 0, 27 };
	struct req q;
	klog_ksync_t s;
	klog_kbeat_t h;
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	for (int16_t v = 0; v <= 3; v++) {
		req_begin(&q, KLOG_KAPI_SYNC_GROUP, v);
		put_str(&q, "g");
		klog_buf_put_i32(&q.b, 4);
		put_str(&q, "m1");
		if (v >= 3)
			put_str(&q, "inst");
		put_count(&q, 1);
		put_str(&q, "m2");
		put_bytes(&q, "\1\2");
		req_end(&q);
		assert_int_equal(klog_kwgroup_sync(&q.r, &s, &q.a), 0);
		assert_int_equal(s.generation, 4);
		assert_true(str_is(s.member_id, "m1"));
		if (v >= 3)
			assert_true(str_is(s.instance_id, "inst"));
		assert_int_equal(s.nassign, 1);
		assert_true(str_is(s.assign[0].name, "m2"));
		assert_memory_equal(s.assign[0].data, "\1\2", 2);
		CUTS(&q, klog_kwgroup_sync(r_, &s, &q.a));
		req_free(&q);

		req_begin(&q, KLOG_KAPI_HEARTBEAT, v);
		put_str(&q, "g");
		klog_buf_put_i32(&q.b, 7);
		put_str(&q, "m1");
		if (v >= 3)
			put_str(&q, NULL);
		req_end(&q);
		assert_int_equal(klog_kwgroup_heartbeat(&q.r, &h), 0);
		assert_int_equal(h.generation, 7);
		assert_true(str_is(h.member_id, "m1"));
		assert_null(h.instance_id.p);
		CUTS(&q, klog_kwgroup_heartbeat(r_, &h));
		req_free(&q);
	}
	klog_buf_init(&b);
	r = hdr(KLOG_KAPI_SYNC_GROUP, 1);
	klog_kwgroup_sync_resp(&b, &r, 0, (const uint8_t *)"\1\2", 2);
	resp_is(&b, sync_v1, sizeof(sync_v1));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_SYNC_GROUP, 0);
	klog_kwgroup_sync_resp(&b, &r, KLOG_KERR_REBALANCE_IN_PROGRESS, NULL,
	    0);
	resp_is(&b, sync_v0_err, sizeof(sync_v0_err));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_HEARTBEAT, 0);
	klog_kwgroup_error_resp(&b, &r, KLOG_KERR_ILLEGAL_GENERATION);
	resp_is(&b, hb_v0, sizeof(hb_v0));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_HEARTBEAT, 3);
	klog_kwgroup_error_resp(&b, &r, KLOG_KERR_REBALANCE_IN_PROGRESS);
	resp_is(&b, hb_v3, sizeof(hb_v3));
	klog_buf_free(&b);
}

static void
test_leave(void **state)
{
	static const uint8_t v3[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
		0, 2, 'm', '1', 0xff, 0xff, 0, 0,
		0, 2, 'm', '2', 0, 1, 'i', 0, 25,
	};
	static const uint8_t v1[] = { 0, 0, 0, 0, 0, 25 };
	struct req q;
	klog_kleave_t l;
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	req_begin(&q, KLOG_KAPI_LEAVE_GROUP, 1);
	put_str(&q, "g");
	put_str(&q, "m1");
	req_end(&q);
	assert_int_equal(klog_kwgroup_leave(&q.r, &l, &q.a), 0);
	assert_int_equal(l.count, 1);
	assert_true(str_is(l.members[0].member_id, "m1"));
	assert_null(l.members[0].instance_id.p);
	CUTS(&q, klog_kwgroup_leave(r_, &l, &q.a));
	req_free(&q);
	req_begin(&q, KLOG_KAPI_LEAVE_GROUP, 3);
	put_str(&q, "g");
	put_count(&q, 2);
	put_str(&q, "m1");
	put_str(&q, NULL);
	put_str(&q, "m2");
	put_str(&q, "i");
	req_end(&q);
	assert_int_equal(klog_kwgroup_leave(&q.r, &l, &q.a), 0);
	assert_int_equal(l.count, 2);
	assert_true(str_is(l.members[1].member_id, "m2"));
	assert_true(str_is(l.members[1].instance_id, "i"));
	CUTS(&q, klog_kwgroup_leave(r_, &l, &q.a));
	assert_int_equal(klog_kwgroup_leave(&q.r, &l, &q.a), 0);
	l.members[0].error = 0;
	l.members[1].error = KLOG_KERR_UNKNOWN_MEMBER_ID;
	klog_buf_init(&b);
	r = hdr(KLOG_KAPI_LEAVE_GROUP, 3);
	klog_kwgroup_leave_resp(&b, &r, 0, &l);
	resp_is(&b, v3, sizeof(v3));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_LEAVE_GROUP, 1);
	l.count = 1;
	klog_kwgroup_leave_resp(&b, &r, KLOG_KERR_UNKNOWN_MEMBER_ID, &l);
	resp_is(&b, v1, sizeof(v1));
	klog_buf_free(&b);
	req_free(&q);
}

/* ---- OffsetCommit, OffsetFetch ---- */

/* Every version's fields: v1 generation, member and a timestamp per
 * partition; v2-4 a retention time, gone in v5; v6 a leader epoch per
 * partition; v7 a group instance id. */
static void
test_offset_commit(void **state)
{
	static const uint8_t v3[] = {
		0, 0, 0, 0, 0, 0, 0, 1, 0, 3, 'a', 'p', 'p', 0, 0, 0, 2,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 29,
	};
	struct req q;
	klog_kcommit_t c;
	klog_kwgroup_parts_t w;
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	for (int16_t v = 0; v <= 7; v++) {
		req_begin(&q, KLOG_KAPI_OFFSET_COMMIT, v);
		put_str(&q, "g");
		if (v >= 1) {
			klog_buf_put_i32(&q.b, 3);
			put_str(&q, "m");
		}
		if (v >= 7)
			put_str(&q, "inst");
		if (v >= 2 && v <= 4)
			klog_buf_put_i64(&q.b, -1);
		put_count(&q, 1);
		put_str(&q, "app");
		put_count(&q, 2);
		for (int p = 0; p < 2; p++) {
			klog_buf_put_i32(&q.b, p);
			klog_buf_put_i64(&q.b, 4242 + p);
			if (v >= 6)
				klog_buf_put_i32(&q.b, 5);
			if (v == 1)
				klog_buf_put_i64(&q.b, 1700000000000);
			put_str(&q, p == 0 ? NULL : "meta");
		}
		req_end(&q);
		assert_int_equal(klog_kwgroup_offset_commit(&q.r, &c, &q.a), 0);
		assert_int_equal(c.generation, v >= 1 ? 3 : -1);
		assert_true(str_is(c.member_id, v >= 1 ? "m" : ""));
		if (v >= 7)
			assert_true(str_is(c.instance_id, "inst"));
		else
			assert_null(c.instance_id.p);
		assert_int_equal(c.count, 2);
		assert_true(str_is(c.parts[1].topic, "app"));
		assert_int_equal(c.parts[1].partition, 1);
		assert_int_equal(c.parts[0].offset, 4242);
		assert_int_equal(c.parts[1].offset, 4243);
		assert_int_equal(c.parts[0].leader_epoch, v >= 6 ? 5 : -1);
		assert_true(str_is(c.parts[0].metadata, ""));
		assert_true(str_is(c.parts[1].metadata, "meta"));
		CUTS(&q, klog_kwgroup_offset_commit(r_, &c, &q.a));
		req_free(&q);
	}
	/* v3's answer: the throttle time, then the topics. */
	klog_buf_init(&b);
	r = hdr(KLOG_KAPI_OFFSET_COMMIT, 3);
	klog_kwgroup_parts_begin(&b, &r, &w);
	klog_kwgroup_commit_part(&b, &w, STR("app"), 0, 0);
	klog_kwgroup_commit_part(&b, &w, STR("app"), 1,
	    KLOG_KERR_TOPIC_AUTHORIZATION_FAILED);
	klog_kwgroup_parts_end(&b, &w, 0);
	resp_is(&b, v3, sizeof(v3));
	klog_buf_free(&b);
}

static void
fetch_req(struct req *q, int16_t v, int null_topics)
{
	req_begin(q, KLOG_KAPI_OFFSET_FETCH, v);
	put_str(q, "g");
	if (null_topics) {
		put_count(q, -1);
	} else {
		put_count(q, 1);
		put_str(q, "app");
		put_count(q, 2);
		klog_buf_put_i32(&q->b, 0);
		klog_buf_put_i32(&q->b, 1);
		put_tags(q);
	}
	if (v >= 7)
		klog_buf_put_i8(&q->b, 1);
	put_tags(q);
	req_end(q);
}

/* OffsetFetch 6 and 7 are flexible: compact strings and arrays, tagged
 * fields after each structure (and the header's). */
static void
test_offset_fetch(void **state)
{
	static const uint8_t v6_req[] = {
		0x02, 'g', 0x02, 0x04, 'a', 'p', 'p', 0x03,
		0, 0, 0, 0, 0, 0, 0, 1, 0x00, 0x00,
	};
	static const uint8_t v6[] = {
		0x00,                                   /* header tags */
		0, 0, 0, 0,                             /* throttle */
		0x02, 0x04, 'a', 'p', 'p', 0x03,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 42, 0xff, 0xff, 0xff, 0xff,
		0x03, 'm', 'd', 0, 0, 0x00,
		0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0x00,
		0x00,                                   /* topic's tags */
		0, 0,                                   /* error */
		0x00,
	};
	static const uint8_t v1[] = {
		0, 0, 0, 1, 0, 3, 'a', 'p', 'p', 0, 0, 0, 1,
		0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0, 0, 0, 30,
	};
	static const uint8_t v2_err[] = {
		0, 0, 0, 0, 0, 30,
	};
	static const uint8_t v5[] = {
		0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1,
		0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff,
		0, 0, 0, 0, 0, 0,
	};
	struct req q;
	klog_kcommit_t c;
	klog_kwgroup_parts_t w;
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	for (int16_t v = 0; v <= 7; v++) {
		fetch_req(&q, v, 0);
		if (v == 6) {
			assert_int_equal(q.r.body_len, sizeof(v6_req));
			assert_memory_equal(q.r.body, v6_req, sizeof(v6_req));
		}
		assert_int_equal(klog_kwgroup_offset_fetch(&q.r, &c, &q.a), 0);
		assert_false(c.all);
		assert_int_equal(c.require_stable, v >= 7);
		assert_int_equal(c.count, 2);
		assert_true(str_is(c.parts[1].topic, "app"));
		assert_int_equal(c.parts[1].partition, 1);
		assert_int_equal(c.parts[1].offset, -1);
		CUTS(&q, klog_kwgroup_offset_fetch(r_, &c, &q.a));
		req_free(&q);
		/* From v2 a null topics array is every partition. */
		fetch_req(&q, v, 1);
		assert_int_equal(klog_kwgroup_offset_fetch(&q.r, &c, &q.a),
		    v >= 2 ? 0 : -KLOG_EPROTO);
		if (v >= 2) {
			assert_true(c.all);
			assert_int_equal(c.count, 0);
		}
		req_free(&q);
	}
	klog_buf_init(&b);
	r = hdr(KLOG_KAPI_OFFSET_FETCH, 6);
	klog_kwgroup_parts_begin(&b, &r, &w);
	klog_kwgroup_fetch_part(&b, &w, STR("app"), 0, 42, STR("md"), 0);
	klog_kwgroup_fetch_part(&b, &w, STR("app"), 1, -1, STR(""), 0);
	klog_kwgroup_parts_end(&b, &w, 0);
	resp_is(&b, v6, sizeof(v6));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_OFFSET_FETCH, 1);
	klog_kwgroup_parts_begin(&b, &r, &w);
	klog_kwgroup_fetch_part(&b, &w, STR("app"), 0, -1, STR(""),
	    KLOG_KERR_GROUP_AUTHORIZATION_FAILED);
	klog_kwgroup_parts_end(&b, &w, KLOG_KERR_GROUP_AUTHORIZATION_FAILED);
	resp_is(&b, v1, sizeof(v1));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_OFFSET_FETCH, 2);
	klog_kwgroup_parts_begin(&b, &r, &w);
	klog_kwgroup_parts_end(&b, &w, KLOG_KERR_GROUP_AUTHORIZATION_FAILED);
	resp_is(&b, v2_err, sizeof(v2_err));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_OFFSET_FETCH, 5);
	klog_kwgroup_parts_begin(&b, &r, &w);
	klog_kwgroup_fetch_part(&b, &w, STR("t"), 3, 9, STR(""), 0);
	klog_kwgroup_parts_end(&b, &w, 0);
	resp_is(&b, v5, sizeof(v5));
	klog_buf_free(&b);
}

/* A flexible count past 126 takes two bytes: what follows moves on. */
static void
test_flexible_many(void **state)
{
	klog_kwgroup_parts_t w;
	klog_kreq_t r = hdr(KLOG_KAPI_OFFSET_FETCH, 7);
	klog_kprim_rd_t rd;
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	klog_kwgroup_parts_begin(&b, &r, &w);
	for (int i = 0; i < 200; i++)
		klog_kwgroup_fetch_part(&b, &w, STR("t"), i, i, STR(""), 0);
	klog_kwgroup_parts_end(&b, &w, 0);
	assert_false(b.failed);
	klog_kprim_rd_init(&rd, b.data + 8, b.len - 8, 1);
	klog_kprim_tags(&rd);
	assert_int_equal(klog_rd_i32(&rd.rd), 0);
	assert_int_equal(klog_kprim_count(&rd, 1, 0), 1);
	assert_true(str_is(klog_kprim_str(&rd), "t"));
	assert_int_equal(klog_kprim_count(&rd, 1, 0), 200);
	for (int i = 0; i < 200; i++) {
		assert_int_equal(klog_rd_i32(&rd.rd), i);
		assert_int_equal(klog_rd_i64(&rd.rd), i);
		assert_int_equal(klog_rd_i32(&rd.rd), -1);
		assert_true(str_is(klog_kprim_str(&rd), ""));
		assert_int_equal(klog_rd_i16(&rd.rd), 0);
		klog_kprim_tags(&rd);
	}
	klog_kprim_tags(&rd);
	assert_int_equal(klog_rd_i16(&rd.rd), 0);
	klog_kprim_tags(&rd);
	assert_int_equal(klog_kprim_done(&rd), 0);
	assert_int_equal(klog_rd_left(&rd.rd), 0);
	klog_buf_free(&b);
}

/* ---- DescribeGroups, ListGroups ---- */

static void
test_describe(void **state)
{
	static const uint8_t v0[] = {
		0, 0, 0, 2,
		0, 0, 0, 1, 'g', 0, 6, 'S', 't', 'a', 'b', 'l', 'e',
		0, 8, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r',
		0, 5, 'r', 'a', 'n', 'g', 'e', 0, 0, 0, 1,
		0, 2, 'm', '1', 0, 2, 'c', '1', 0, 4, '/', '1', '.', '2',
		0, 0, 0, 1, 'M', 0, 0, 0, 2, 'A', 'A',
		0, 30, 0, 1, 'x', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	static const uint8_t v4_tail[] = {
		0, 2, 'm', '1', 0, 1, 'i', 0, 2, 'c', '1',
		0, 4, '/', '1', '.', '2', 0, 0, 0, 1, 'M', 0, 0, 0, 2, 'A', 'A',
		0, 0, 1, 0x48,
	};
	klog_kdmember_t m = { STR("m1"), STR("i"), STR("c1"), STR("/1.2"),
	    (const uint8_t *)"M", (const uint8_t *)"AA", 1, 2 };
	klog_kdgroup_t g = { 0, STR("g"), STR("Stable"), STR("consumer"),
	    STR("range"), 1, &m, 0x148 };
	klog_kdgroup_t x = { KLOG_KERR_GROUP_AUTHORIZATION_FAILED, STR("x"),
	    NUL, NUL, NUL, 0, NULL, KLOG_KWGROUP_OPS_NONE };
	klog_kwgroup_list_t w;
	klog_proto_array_t a = { 0 };
	klog_str_t *ids;
	struct req q;
	uint32_t n;
	int ops;
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	for (int16_t v = 0; v <= 4; v++) {
		req_begin(&q, KLOG_KAPI_DESCRIBE_GROUPS, v);
		put_count(&q, 2);
		put_str(&q, "g");
		put_str(&q, "x");
		if (v >= 3)
			klog_buf_put_i8(&q.b, 1);
		req_end(&q);
		assert_int_equal(klog_kwgroup_describe(&q.r, &a, &n, &ops), 0);
		ids = a.p;
		assert_int_equal(n, 2);
		assert_true(str_is(ids[1], "x"));
		assert_int_equal(ops, v >= 3);
		CUTS(&q, klog_kwgroup_describe(r_, &a, &n, &ops));
		req_free(&q);
	}
	klog_buf_init(&b);
	r = hdr(KLOG_KAPI_DESCRIBE_GROUPS, 0);
	klog_kwgroup_describe_begin(&b, &r, &w);
	klog_kwgroup_describe_group(&b, &w, &g);
	klog_kwgroup_describe_group(&b, &w, &x);
	klog_kwgroup_list_end(&b, &w);
	resp_is(&b, v0, sizeof(v0));
	/* v4: the throttle time; per member its instance id; per group its
	 * authorized operations (v3). */
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_DESCRIBE_GROUPS, 4);
	klog_kwgroup_describe_begin(&b, &r, &w);
	klog_kwgroup_describe_group(&b, &w, &g);
	klog_kwgroup_list_end(&b, &w);
	assert_int_equal(b.len, 8 + 4 + 4 + 2 + 2 + 1 + 2 + 6 + 2 + 8 + 2 +
	    5 + 4 + sizeof(v4_tail));
	assert_memory_equal(b.data + 8, "\0\0\0\0\0\0\0\1", 8);
	assert_memory_equal(b.data + b.len - sizeof(v4_tail), v4_tail,
	    sizeof(v4_tail));
	klog_buf_free(&b);
	free(a.p);
}

static void
test_list(void **state)
{
	static const uint8_t v0[] = {
		0, 0, 0, 0, 0, 2, 0, 1, 'g', 0, 8, 'c', 'o', 'n', 's', 'u',
		'm', 'e', 'r', 0, 1, 'h', 0, 0,
	};
	static const uint8_t v4[] = {
		0x00, 0, 0, 0, 0, 0, 0, 0x02, 0x02, 'g', 0x09, 'c', 'o', 'n',
		's', 'u', 'm', 'e', 'r', 0x07, 'S', 't', 'a', 'b', 'l', 'e',
		0x00, 0x00,
	};
	klog_kwgroup_list_t w;
	klog_str_t *states;
	struct req q;
	uint32_t n;
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	req_begin(&q, KLOG_KAPI_LIST_GROUPS, 0);
	req_end(&q);
	assert_int_equal(klog_kwgroup_list(&q.r, &q.a, &n), 0);
	assert_int_equal(n, 0);
	req_free(&q);
	req_begin(&q, KLOG_KAPI_LIST_GROUPS, 4);
	put_count(&q, 2);
	put_str(&q, "Stable");
	put_str(&q, "Empty");
	put_tags(&q);
	req_end(&q);
	assert_int_equal(klog_kwgroup_list(&q.r, &q.a, &n), 0);
	states = q.a.p;
	assert_int_equal(n, 2);
	assert_true(str_is(states[0], "Stable"));
	assert_true(str_is(states[1], "Empty"));
	CUTS(&q, klog_kwgroup_list(r_, &q.a, &n));
	req_free(&q);

	klog_buf_init(&b);
	r = hdr(KLOG_KAPI_LIST_GROUPS, 0);
	klog_kwgroup_list_begin(&b, &r, 0, &w);
	klog_kwgroup_list_group(&b, &w, STR("g"), STR("consumer"),
	    STR("Stable"));
	klog_kwgroup_list_group(&b, &w, STR("h"), STR(""), STR("Empty"));
	klog_kwgroup_list_end(&b, &w);
	resp_is(&b, v0, sizeof(v0));
	klog_buf_reset(&b);
	r = hdr(KLOG_KAPI_LIST_GROUPS, 4);
	klog_kwgroup_list_begin(&b, &r, 0, &w);
	klog_kwgroup_list_group(&b, &w, STR("g"), STR("consumer"),
	    STR("Stable"));
	klog_kwgroup_list_end(&b, &w);
	resp_is(&b, v4, sizeof(v4));
	klog_buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_join_resp),
		cmocka_unit_test(test_sync_heartbeat),
		cmocka_unit_test(test_leave),
		cmocka_unit_test(test_offset_commit),
		cmocka_unit_test(test_offset_fetch),
		cmocka_unit_test(test_flexible_many),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
