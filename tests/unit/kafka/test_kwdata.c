/*
 * Unit tests for lib/kafka/kwdata.c.  Requests and answers are written
 * byte by byte, in hex, from Kafka's message schemas (ProduceRequest.json
 * and the others of clients/src/main/resources/common/message/): they are
 * the specification, not the output of an encoder of ours.  One test per
 * version that adds fields, each against the version before it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kwdata.h"
#include "klog/kafka/kwire.h"
#include "klog/storage/format.h"

#define STR(s) ((klog_str_t){ (s), (uint16_t)(sizeof(s) - 1) })

static int
str_is(klog_str_t s, const char *want)
{
	return s.p != NULL && s.len == strlen(want) &&
	    memcmp(s.p, want, s.len) == 0;
}

/* hex (spaces ignored) appended to b. */
static void
put_hex(klog_buf_t *b, const char *hex)
{
	for (const char *p = hex; *p != '\0'; ) {
		unsigned v;

		if (*p == ' ') {
			p++;
			continue;
		}
		assert_int_equal(sscanf(p, "%2x", &v), 1);
		klog_buf_put_i8(b, (int8_t)v);
		p += 2;
	}
	assert_false(b->failed);
}

/* A request frame of api and version (correlation 9, client "kc") whose
 * body is hex, in b, read into *r. */
static void
request(klog_buf_t *b, int16_t api, int16_t version, const char *hex,
    klog_kreq_t *r)
{
	klog_buf_init(b);
	klog_buf_put_i32(b, 0);
	klog_buf_put_i16(b, api);
	klog_buf_put_i16(b, version);
	klog_buf_put_i32(b, 9);
	klog_buf_put_str(b, "kc", 2);
	put_hex(b, hex);
	klog_buf_patch_i32(b, 0, (int32_t)(b->len - 4));
	assert_int_equal(klog_kwire_frame(b->data, b->len, 1 << 20, r), 0);
	assert_false(r->flexible);
}

/* b holds exactly the bytes of hex. */
static void
bytes_are(const klog_buf_t *b, const char *hex)
{
	klog_buf_t want;

	klog_buf_init(&want);
	put_hex(&want, hex);
	assert_false(b->failed);
	assert_int_equal(b->len, want.len);
	assert_memory_equal(b->data, want.data, want.len);
	klog_buf_free(&want);
}

/* A test's version and the bytes of its request or answer. */
typedef struct step {
	int16_t version;
	const char *hex;
} step_t;

/* ---- Produce ---- */

#define PRODUCE_TOPICS "ffff 00007530 00000002 0003 617070 00000002 " \
	"00000000 00000003 78797a 00000005 00000000 0001 62 00000001 " \
	"00000001 00000001 71"

/* v0-v2: acks, timeout, topics; v3 puts a transactional id first. */
static const step_t produce_reqs[] = {
	{ 0, PRODUCE_TOPICS },
	{ 2, PRODUCE_TOPICS },
	{ 3, "ffff " PRODUCE_TOPICS },
	{ 7, "0002 7478 " PRODUCE_TOPICS },
};

static void
test_produce_request(void **state)
{
	const step_t *s = *state;
	klog_proto_array_t a = { 0 };
	klog_produce_req_t req;
	klog_buf_t b;
	klog_kreq_t r;

	request(&b, KLOG_KAPI_PRODUCE, s->version, s->hex, &r);
	assert_int_equal(klog_kwdata_produce(&r, &req, &a), 0);
	assert_int_equal(req.acks, -1);
	assert_int_equal(req.timeout_ms, 30000);
	assert_int_equal(req.count, 3);
	assert_true(str_is(req.parts[0].topic, "app"));
	assert_int_equal(req.parts[0].set_len, 3);
	assert_memory_equal(req.parts[0].set, "xyz", 3);
	assert_int_equal(req.parts[1].partition, 5);
	assert_int_equal(req.parts[1].set_len, 0);
	assert_true(str_is(req.parts[2].topic, "b"));
	assert_int_equal(req.parts[2].partition, 1);
	assert_memory_equal(req.parts[2].set, "q", 1);
	/* Cut anywhere, it does not parse. */
	for (size_t cut = 1; cut < r.body_len; cut++) {
		klog_kreq_t c = r;

		c.body_len = cut;
		assert_int_equal(klog_kwdata_produce(&c, &req, &a),
		    -KLOG_EPROTO);
	}
	klog_buf_free(&b);
	free(a.p);
}

/*
 * Results a:0 at 100 and a:1 at 200 (log start 7; a:1 stamped with a
 * LogAppendTime), bb:0 failed (3): partitions of one topic share its
 * entry; an error's offsets and time are -1.  v1 adds the throttle time,
 * v2 the log append time, v5 the log start.
 */
static const step_t produce_resps[] = {
	{ 0, "00000041 0000004d 00000002 0001 61 00000002 "
	    "00000000 0000 0000000000000064 "
	    "00000001 0000 00000000000000c8 "
	    "0002 6262 00000001 00000000 0003 ffffffffffffffff" },
	{ 1, "00000045 0000004d 00000002 0001 61 00000002 "
	    "00000000 0000 0000000000000064 "
	    "00000001 0000 00000000000000c8 "
	    "0002 6262 00000001 00000000 0003 ffffffffffffffff "
	    "00000000" },
	{ 2, "0000005d 0000004d 00000002 0001 61 00000002 "
	    "00000000 0000 0000000000000064 ffffffffffffffff "
	    "00000001 0000 00000000000000c8 000000123456789a "
	    "0002 6262 00000001 00000000 0003 ffffffffffffffff "
	    "ffffffffffffffff 00000000" },
	{ 5, "00000075 0000004d 00000002 0001 61 00000002 "
	    "00000000 0000 0000000000000064 ffffffffffffffff "
	    "0000000000000007 "
	    "00000001 0000 00000000000000c8 000000123456789a "
	    "0000000000000007 "
	    "0002 6262 00000001 00000000 0003 ffffffffffffffff "
	    "ffffffffffffffff ffffffffffffffff 00000000" },
	{ 7, "00000075 0000004d 00000002 0001 61 00000002 "
	    "00000000 0000 0000000000000064 ffffffffffffffff "
	    "0000000000000007 "
	    "00000001 0000 00000000000000c8 000000123456789a "
	    "0000000000000007 "
	    "0002 6262 00000001 00000000 0003 ffffffffffffffff "
	    "ffffffffffffffff ffffffffffffffff 00000000" },
};

static void
test_produce_answer(void **state)
{
	const step_t *s = *state;
	klog_kproduce_res_t res[3] = {
		{ STR("a"), 0, 0, 100, 7, -1 },
		{ STR("a"), 1, 0, 200, 7, 0x123456789a },  /* LogAppendTime */
		{ STR("bb"), 0, 3, 0, 0, 5 },              /* an error: -1 */
	};
	size_t pos[3];
	klog_buf_t b;

	klog_buf_init(&b);
	klog_kwdata_produce_resp(&b, 77, s->version, res, 3, pos);
	bytes_are(&b, s->hex);
	/* A result turned into an error: its code, base offset -1. */
	klog_kwdata_patch_produce(&b, pos[1], KLOG_KERR_KAFKA_STORAGE_ERROR);
	assert_int_equal(b.data[pos[1]], 0);
	assert_int_equal(b.data[pos[1] + 1], KLOG_KERR_KAFKA_STORAGE_ERROR);
	for (int i = 2; i < 10; i++)
		assert_int_equal(b.data[pos[1] + i], 0xff);
	assert_int_equal(b.data[pos[1] - 1], 1);  /* its partition, intact */
	klog_buf_free(&b);
}

/* ---- Fetch ---- */

/*
 * Partition 2 of "app" from 1234567, 1 MiB, in each version's layout: v3
 * adds the answer's limit (50 MiB), v4 the isolation level (1), v5 each
 * partition's log start (a follower's: -1), v7 the session (42, epoch 0)
 * and forgotten topics ("old": 1, 3), v9 each partition's current leader
 * epoch (5), v11 the rack ("r1").
 */
static const step_t fetch_reqs[] = {
	{ 0, "ffffffff 000001f4 00000001 00000001 0003 617070 00000001 "
	    "00000002 000000000012d687 00100000" },
	{ 3, "ffffffff 000001f4 00000001 03200000 00000001 0003 617070 "
	    "00000001 00000002 000000000012d687 00100000" },
	{ 4, "ffffffff 000001f4 00000001 03200000 01 00000001 0003 617070 "
	    "00000001 00000002 000000000012d687 00100000" },
	{ 5, "ffffffff 000001f4 00000001 03200000 01 00000001 0003 617070 "
	    "00000001 00000002 000000000012d687 ffffffffffffffff 00100000" },
	{ 7, "ffffffff 000001f4 00000001 03200000 01 0000002a 00000000 "
	    "00000001 0003 617070 00000001 00000002 000000000012d687 "
	    "ffffffffffffffff 00100000 "
	    "00000001 0003 6f6c64 00000002 00000001 00000003" },
	{ 9, "ffffffff 000001f4 00000001 03200000 01 0000002a 00000000 "
	    "00000001 0003 617070 00000001 00000002 00000005 "
	    "000000000012d687 ffffffffffffffff 00100000 "
	    "00000001 0003 6f6c64 00000002 00000001 00000003" },
	{ 11, "ffffffff 000001f4 00000001 03200000 01 0000002a 00000000 "
	    "00000001 0003 617070 00000001 00000002 00000005 "
	    "000000000012d687 ffffffffffffffff 00100000 "
	    "00000001 0003 6f6c64 00000002 00000001 00000003 0002 7231" },
};

static void
test_fetch_request(void **state)
{
	const step_t *s = *state;
	int16_t v = s->version;
	klog_proto_array_t a = { 0 };
	klog_kfetch_t f;
	klog_buf_t b;
	klog_kreq_t r;

	request(&b, KLOG_KAPI_FETCH, v, s->hex, &r);
	assert_int_equal(klog_kwdata_fetch(&r, &f, &a), 0);
	assert_int_equal(f.req.max_wait_ms, 500);
	assert_int_equal(f.req.min_bytes, 1);
	assert_int_equal(f.max_bytes, v >= 3 ? 52428800 : INT32_MAX);
	assert_int_equal(f.isolation, v >= 4 ? 1 : 0);
	assert_int_equal(f.session_id, v >= 7 ? 42 : 0);
	assert_int_equal(f.session_epoch, v >= 7 ? 0 : -1);
	assert_true(str_is(f.rack, v >= 11 ? "r1" : ""));
	assert_int_equal(f.req.count, 1);
	assert_true(str_is(f.req.parts[0].topic, "app"));
	assert_int_equal(f.req.parts[0].partition, 2);
	assert_int_equal(f.req.parts[0].offset, 1234567);
	assert_int_equal(f.req.parts[0].max_bytes, 1048576);
	assert_int_equal(klog_kwdata_fetch_session_error(&f), 0);
	r.body_len--;
	assert_int_equal(klog_kwdata_fetch(&r, &f, &a), -KLOG_EPROTO);
	klog_buf_free(&b);
	free(a.p);
}

/* KIP-227: a full fetch (epoch 0 or -1) is served sessionless; any other
 * epoch names a session the listener never made. */
static void
test_fetch_sessions(void **state)
{
	static const int32_t full[] = { 0, -1 }, incremental[] = { 1, 7, -2,
	    INT32_MAX };
	klog_kfetch_t f = { .session_id = 42 };
	klog_buf_t b;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		f.session_epoch = full[i];
		assert_int_equal(klog_kwdata_fetch_session_error(&f), 0);
	}
	for (size_t i = 0; i < 4; i++) {
		f.session_epoch = incremental[i];
		assert_int_equal(klog_kwdata_fetch_session_error(&f),
		    KLOG_KERR_FETCH_SESSION_ID_NOT_FOUND);
	}
	/* The answer: error 70, session 0, no topics. */
	klog_buf_init(&b);
	klog_kwdata_fetch_error(&b, 5, 11,
	    KLOG_KERR_FETCH_SESSION_ID_NOT_FOUND);
	bytes_are(&b, "00000012 00000005 00000000 0046 00000000 00000000");
	klog_buf_free(&b);
}

/*
 * Partition 1 of "t", high watermark 100, log start 10, no records: v1
 * adds the throttle time, v4 the last stable offset and aborted
 * transactions, v5 the log start, v7 the top-level error and session id,
 * v11 the preferred read replica.
 */
static const step_t fetch_resps[] = {
	{ 0, "00000021 00000005 00000001 0001 74 00000001 "
	    "00000001 0000 0000000000000064 00000000" },
	{ 1, "00000025 00000005 00000000 00000001 0001 74 00000001 "
	    "00000001 0000 0000000000000064 00000000" },
	{ 4, "00000031 00000005 00000000 00000001 0001 74 00000001 "
	    "00000001 0000 0000000000000064 0000000000000064 00000000 "
	    "00000000" },
	{ 5, "00000039 00000005 00000000 00000001 0001 74 00000001 "
	    "00000001 0000 0000000000000064 0000000000000064 "
	    "000000000000000a 00000000 00000000" },
	{ 7, "0000003f 00000005 00000000 0000 00000000 00000001 0001 74 "
	    "00000001 00000001 0000 0000000000000064 0000000000000064 "
	    "000000000000000a 00000000 00000000" },
	{ 11, "00000043 00000005 00000000 0000 00000000 00000001 0001 74 "
	    "00000001 00000001 0000 0000000000000064 0000000000000064 "
	    "000000000000000a 00000000 ffffffff 00000000" },
};

static void
test_fetch_answer(void **state)
{
	const step_t *s = *state;
	klog_kwire_topics_t t;
	klog_buf_t b;
	size_t start, errpos;

	klog_buf_init(&b);
	start = klog_kwire_begin(&b, 5);
	klog_kwdata_fetch_head(&b, s->version, KLOG_KERR_NONE);
	klog_kwire_topics_begin(&b, &t);
	klog_kwire_topics_part(&b, &t, STR("t"));
	errpos = klog_kwdata_fetch_part(&b, s->version, 1, 0, 100, 10);
	klog_buf_put_i32(&b, 0);             /* records: none */
	klog_kwire_topics_end(&b, &t);
	klog_kwire_end(&b, start);
	bytes_are(&b, s->hex);
	/* The error is where it says, just after the partition. */
	assert_int_equal(klog_be32(b.data + errpos - 4), 1);
	klog_buf_free(&b);
}

/* ---- ListOffsets ---- */

/* Partition 0 of "app" at -2 (the earliest): v0 with at most 5 offsets,
 * v1 one, v2 adds the isolation level, v4 the current leader epoch. */
static const step_t offsets_reqs[] = {
	{ 0, "ffffffff 00000001 0003 617070 00000001 00000000 "
	    "fffffffffffffffe 00000005" },
	{ 1, "ffffffff 00000001 0003 617070 00000001 00000000 "
	    "fffffffffffffffe" },
	{ 2, "ffffffff 01 00000001 0003 617070 00000001 00000000 "
	    "fffffffffffffffe" },
	{ 4, "ffffffff 01 00000001 0003 617070 00000001 00000000 00000007 "
	    "fffffffffffffffe" },
	{ 5, "ffffffff 01 00000001 0003 617070 00000001 00000000 00000007 "
	    "fffffffffffffffe" },
};

static void
test_offsets_request(void **state)
{
	const step_t *s = *state;
	klog_proto_array_t a = { 0 };
	klog_offsets_part_t *p;
	klog_buf_t b;
	klog_kreq_t r;
	uint32_t n;

	request(&b, KLOG_KAPI_LIST_OFFSETS, s->version, s->hex, &r);
	assert_int_equal(klog_kwdata_list_offsets(&r, &a, &n), 0);
	p = a.p;
	assert_int_equal(n, 1);
	assert_true(str_is(p[0].topic, "app"));
	assert_int_equal(p[0].partition, 0);
	assert_int_equal(p[0].time, -2);
	assert_int_equal(p[0].max, s->version == 0 ? 5 : 1);
	r.body_len--;
	assert_int_equal(klog_kwdata_list_offsets(&r, &a, &n), -KLOG_EPROTO);
	klog_buf_free(&b);
	free(a.p);
}

/* Partition 0 of "t" with offsets 33 and 9, partition 1 refused (3): v0
 * lists the offsets, v1 gives one with a timestamp, v2 adds the throttle
 * time, v4 each partition's leader epoch. */
static const step_t offsets_resps[] = {
	{ 0, "00000033 00000006 00000001 0001 74 00000002 "
	    "00000000 0000 00000002 0000000000000021 0000000000000009 "
	    "00000001 0003 00000000" },
	{ 1, "0000003b 00000006 00000001 0001 74 00000002 "
	    "00000000 0000 0000000000001234 0000000000000021 "
	    "00000001 0003 ffffffffffffffff ffffffffffffffff" },
	{ 2, "0000003f 00000006 00000000 00000001 0001 74 00000002 "
	    "00000000 0000 0000000000001234 0000000000000021 "
	    "00000001 0003 ffffffffffffffff ffffffffffffffff" },
	{ 4, "00000047 00000006 00000000 00000001 0001 74 00000002 "
	    "00000000 0000 0000000000001234 0000000000000021 ffffffff "
	    "00000001 0003 ffffffffffffffff ffffffffffffffff ffffffff" },
};

static void
test_offsets_answer(void **state)
{
	const step_t *s = *state;
	static const int64_t offs[] = { 33, 9 };
	klog_kwire_topics_t t;
	klog_buf_t b;
	size_t start;

	klog_buf_init(&b);
	start = klog_kwire_begin(&b, 6);
	klog_kwdata_offsets_head(&b, s->version);
	klog_kwire_topics_begin(&b, &t);
	klog_kwire_topics_part(&b, &t, STR("t"));
	klog_kwdata_offsets_part(&b, s->version, 0, 0, offs, 2, 0x1234);
	klog_kwire_topics_part(&b, &t, STR("t"));
	klog_kwdata_offsets_part(&b, s->version, 1,
	    KLOG_KERR_UNKNOWN_TOPIC_OR_PARTITION, offs, 0, 0x1234);
	klog_kwire_topics_end(&b, &t);
	klog_kwire_end(&b, start);
	bytes_are(&b, s->hex);
	klog_buf_free(&b);
}

/* ---- Metadata ---- */

static void
metadata_case(int16_t v, const char *hex, int rc, uint32_t n, int all,
    int allow, int cluster_ops, int topic_ops)
{
	klog_proto_array_t a = { 0 };
	klog_kmeta_req_t m;
	klog_buf_t b;
	klog_kreq_t r;

	request(&b, KLOG_KAPI_METADATA, v, hex, &r);
	assert_int_equal(klog_kwdata_metadata(&r, &m, &a), rc);
	if (rc == 0) {
		assert_int_equal(m.n, n);
		assert_int_equal(m.all, all);
		assert_int_equal(m.allow_create, allow);
		assert_int_equal(m.cluster_ops, cluster_ops);
		assert_int_equal(m.topic_ops, topic_ops);
		if (n == 2) {
			assert_true(str_is(m.names[0], "x"));
			assert_true(str_is(m.names[1], "yz"));
		}
	}
	klog_buf_free(&b);
	free(a.p);
}

/* v0: an empty array is every topic; v1: a null one is. */
static void
test_metadata_request_v0_v1(void **state)
{
	(void)state;
	metadata_case(0, "00000000", 0, 0, 1, 1, 0, 0);
	metadata_case(0, "00000002 0001 78 0002 797a", 0, 2, 0, 1, 0, 0);
	metadata_case(0, "ffffffff", -KLOG_EPROTO, 0, 0, 0, 0, 0);
	metadata_case(1, "ffffffff", 0, 0, 1, 1, 0, 0);
	metadata_case(1, "00000000", 0, 0, 0, 1, 0, 0);
	metadata_case(1, "00000002 0001 78 0002 797a", 0, 2, 0, 1, 0, 0);
	/* A count the body cannot hold is refused before anything grows. */
	metadata_case(1, "7fffffff 0001 78", -KLOG_EPROTO, 0, 0, 0, 0, 0);
}

/* v4 adds allow_auto_topic_creation. */
static void
test_metadata_request_v4(void **state)
{
	(void)state;
	metadata_case(4, "00000002 0001 78 0002 797a 00", 0, 2, 0, 0, 0, 0);
	metadata_case(4, "00000002 0001 78 0002 797a 01", 0, 2, 0, 1, 0, 0);
	metadata_case(4, "ffffffff 00", 0, 0, 1, 0, 0, 0);
	metadata_case(4, "00000002 0001 78 0002 797a", -KLOG_EPROTO, 0, 0, 0,
	    0, 0);
}

/* v8 adds whether to include the cluster's and the topics' authorized
 * operations. */
static void
test_metadata_request_v8(void **state)
{
	(void)state;
	metadata_case(8, "ffffffff 01 01 00", 0, 0, 1, 1, 1, 0);
	metadata_case(8, "00000002 0001 78 0002 797a 00 00 01", 0, 2, 0, 0, 0,
	    1);
	metadata_case(8, "ffffffff 01 01", -KLOG_EPROTO, 0, 0, 0, 0, 0);
}

/*
 * Broker 0 at h:9092 (the controller); topic "t" with partition 0 led by
 * 0, replicas and ISR [0], topic operations 0xdf8 (READ, WRITE, CREATE,
 * DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS), cluster
 * operations not asked.  v1 adds each broker's rack, the controller and
 * whether a topic is internal, v2 the cluster id, v3 the throttle time,
 * v5 each partition's offline replicas, v7 its leader epoch, v8 the
 * authorized operations.
 */
static const step_t metadata_resps[] = {
	{ 0, "0000003a 00000007 00000001 00000000 0001 68 00002384 "
	    "00000001 0000 0001 74 00000001 "
	    "0000 00000000 00000000 00000001 00000000 00000001 00000000" },
	{ 1, "00000041 00000007 00000001 00000000 0001 68 00002384 ffff "
	    "00000000 00000001 0000 0001 74 00 00000001 "
	    "0000 00000000 00000000 00000001 00000000 00000001 00000000" },
	{ 2, "00000043 00000007 00000001 00000000 0001 68 00002384 ffff "
	    "ffff 00000000 00000001 0000 0001 74 00 00000001 "
	    "0000 00000000 00000000 00000001 00000000 00000001 00000000" },
	{ 3, "00000047 00000007 00000000 00000001 00000000 0001 68 00002384 "
	    "ffff ffff 00000000 00000001 0000 0001 74 00 00000001 "
	    "0000 00000000 00000000 00000001 00000000 00000001 00000000" },
	{ 5, "0000004b 00000007 00000000 00000001 00000000 0001 68 00002384 "
	    "ffff ffff 00000000 00000001 0000 0001 74 00 00000001 "
	    "0000 00000000 00000000 00000001 00000000 00000001 00000000 "
	    "00000000" },
	{ 7, "0000004f 00000007 00000000 00000001 00000000 0001 68 00002384 "
	    "ffff ffff 00000000 00000001 0000 0001 74 00 00000001 "
	    "0000 00000000 00000000 ffffffff 00000001 00000000 00000001 "
	    "00000000 00000000" },
	{ 8, "00000057 00000007 00000000 00000001 00000000 0001 68 00002384 "
	    "ffff ffff 00000000 00000001 0000 0001 74 00 00000001 "
	    "0000 00000000 00000000 ffffffff 00000001 00000000 00000001 "
	    "00000000 00000000 00000df8 80000000" },
};

static void
test_metadata_answer(void **state)
{
	const step_t *s = *state;
	static const int32_t zero[] = { 0 };
	const klog_kmeta_broker_t broker = { 0, STR("h"), 9092 };
	const klog_kmeta_part_t part = { 0, 0, 0, 1, 1, zero, zero };
	const klog_kmeta_topic_t topic = { 0, STR("t"), 1, &part, 0xdf8 };
	const klog_kmeta_t m = { &broker, 1, 0, KLOG_KMETA_OPS_NONE, &topic,
	    1 };
	klog_buf_t b;

	klog_buf_init(&b);
	klog_kwdata_metadata_resp(&b, 7, s->version, &m);
	bytes_are(&b, s->hex);
	klog_buf_free(&b);
}

/* A test of one version: its name, its function, its step. */
#define STEP(name, f, s) { name, f, NULL, NULL, (void *)(s) }

int
main(void)
{
	const struct CMUnitTest tests[] = {
		STEP("produce request v0", test_produce_request,
		    &produce_reqs[0]),
		STEP("produce request v2", test_produce_request,
		    &produce_reqs[1]),
		STEP("produce request v3", test_produce_request,
		    &produce_reqs[2]),
		STEP("produce request v7", test_produce_request,
		    &produce_reqs[3]),
		STEP("produce answer v0", test_produce_answer,
		    &produce_resps[0]),
		STEP("produce answer v1", test_produce_answer,
		    &produce_resps[1]),
		STEP("produce answer v2", test_produce_answer,
		    &produce_resps[2]),
		STEP("produce answer v5", test_produce_answer,
		    &produce_resps[3]),
		STEP("produce answer v7", test_produce_answer,
		    &produce_resps[4]),
		STEP("fetch request v0", test_fetch_request, &fetch_reqs[0]),
		STEP("fetch request v3", test_fetch_request, &fetch_reqs[1]),
		STEP("fetch request v4", test_fetch_request, &fetch_reqs[2]),
		STEP("fetch request v5", test_fetch_request, &fetch_reqs[3]),
		STEP("fetch request v7", test_fetch_request, &fetch_reqs[4]),
		STEP("fetch request v9", test_fetch_request, &fetch_reqs[5]),
		STEP("fetch request v11", test_fetch_request, &fetch_reqs[6]),
		cmocka_unit_test(test_fetch_sessions),
		STEP("fetch answer v0", test_fetch_answer, &fetch_resps[0]),
		STEP("fetch answer v1", test_fetch_answer, &fetch_resps[1]),
		STEP("fetch answer v4", test_fetch_answer, &fetch_resps[2]),
		STEP("fetch answer v5", test_fetch_answer, &fetch_resps[3]),
		STEP("fetch answer v7", test_fetch_answer, &fetch_resps[4]),
		STEP("fetch answer v11", test_fetch_answer, &fetch_resps[5]),
		STEP("list offsets request v0", test_offsets_request,
		    &offsets_reqs[0]),
		STEP("list offsets request v1", test_offsets_request,
		    &offsets_reqs[1]),
		STEP("list offsets request v2", test_offsets_request,
		    &offsets_reqs[2]),
		STEP("list offsets request v4", test_offsets_request,
		    &offsets_reqs[3]),
		STEP("list offsets request v5", test_offsets_request,
		    &offsets_reqs[4]),
		STEP("list offsets answer v0", test_offsets_answer,
		    &offsets_resps[0]),
		STEP("list offsets answer v1", test_offsets_answer,
		    &offsets_resps[1]),
		STEP("list offsets answer v2", test_offsets_answer,
		    &offsets_resps[2]),
		STEP("list offsets answer v4", test_offsets_answer,
		    &offsets_resps[3]),
		cmocka_unit_test(test_metadata_request_v0_v1),
		cmocka_unit_test(test_metadata_request_v4),
		cmocka_unit_test(test_metadata_request_v8),
		STEP("metadata answer v0", test_metadata_answer,
		    &metadata_resps[0]),
		STEP("metadata answer v1", test_metadata_answer,
		    &metadata_resps[1]),
		STEP("metadata answer v2", test_metadata_answer,
		    &metadata_resps[2]),
		STEP("metadata answer v3", test_metadata_answer,
		    &metadata_resps[3]),
		STEP("metadata answer v5", test_metadata_answer,
		    &metadata_resps[4]),
		STEP("metadata answer v7", test_metadata_answer,
		    &metadata_resps[5]),
		STEP("metadata answer v8", test_metadata_answer,
		    &metadata_resps[6]),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
