/*
 * Unit tests for lib/kafka/kwadmin.c.  Request bodies are written byte by
 * byte from Kafka's message schemas (CreateTopicsRequest.json and its
 * kin: they are the specification, not the output of an encoder of ours),
 * and answers compared byte for byte with what the schemas lay out.
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
#include "klog/kafka/kwadmin.h"
#include "klog/kafka/kwire.h"

#define STR(s) ((klog_str_t){ (s), (uint16_t)(sizeof(s) - 1) })

static int
str_is(klog_str_t s, const char *want)
{
	return s.p != NULL && s.len == strlen(want) &&
	    memcmp(s.p, want, s.len) == 0;
}

/* A request of api at version around body: its frame in b, framed into
 * *r (a flexible version's header has its tags, none). */
static void
frame(klog_buf_t *b, int16_t api, int16_t version, const uint8_t *body,
    size_t n, klog_kreq_t *r)
{
	klog_buf_init(b);
	klog_buf_put_i32(b, 0);
	klog_buf_put_i16(b, api);
	klog_buf_put_i16(b, version);
	klog_buf_put_i32(b, 9);
	klog_buf_put_str(b, "kc", 2);
	if (version >= klog_kwire_first_flexible(api))
		klog_buf_put_i8(b, 0);
	klog_buf_put(b, body, n);
	klog_buf_patch_i32(b, 0, (int32_t)(b->len - 4));
	assert_false(b->failed);
	assert_int_equal(klog_kwire_frame(b->data, b->len, 1 << 20, r), 0);
	assert_int_equal(r->flexible,
	    version >= klog_kwire_first_flexible(api));
}

/* The answer in b is exactly want (size field included). */
static void
same(const klog_buf_t *b, const uint8_t *want, size_t n)
{
	assert_false(b->failed);
	assert_int_equal(b->len, n);
	assert_memory_equal(b->data, want, n);
}

/* Every shorter prefix of a body fails to decode, never reads past it. */
typedef int decode_fn(const klog_kreq_t *r, klog_proto_array_t *a,
    klog_proto_array_t *b);

static void
truncated(int16_t api, int16_t version, const uint8_t *body, size_t n,
    decode_fn *fn)
{
	klog_proto_array_t a = { 0 }, c = { 0 };
	klog_kreq_t r;
	klog_buf_t b;

	for (size_t len = 0; len < n; len++) {
		uint8_t *copy = malloc(len + 1);

		assert_non_null(copy);
		memcpy(copy, body, len);
		frame(&b, api, version, copy, len, &r);
		assert_int_equal(fn(&r, &a, &c), -KLOG_EPROTO);
		klog_buf_free(&b);
		free(copy);
	}
	free(a.p);
	free(c.p);
}

/* ---- CreateTopics ---- */

/* v4 (classic): two topics, the first with an assignment and two
 * configs (one value null), timeout 30000, validate_only. */
static const uint8_t create_v4[] = {
	0, 0, 0, 2,
	0, 6, 'o', 'r', 'd', 'e', 'r', 's',
	0xff, 0xff, 0xff, 0xff,                 /* num_partitions -1 */
	0xff, 0xff,                             /* replication_factor -1 */
	0, 0, 0, 1,                             /* assignments */
	0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2,
	0, 0, 0, 2,                             /* configs */
	0, 13, 's', 'e', 'g', 'm', 'e', 'n', 't', '.', 'b', 'y', 't', 'e',
	's', 0, 4, '1', '0', '2', '4',
	0, 12, 'r', 'e', 't', 'e', 'n', 't', 'i', 'o', 'n', '.', 'm', 's',
	0xff, 0xff,
	0, 1, 'x',
	0, 0, 0, 3,
	0, 2,
	0, 0, 0, 0,
	0, 0, 0, 0,
	0, 0, 0x75, 0x30,
	1,
};

static int
create_fn(const klog_kreq_t *r, klog_proto_array_t *a, klog_proto_array_t *b)
{
	klog_kcreate_t c;

	return klog_kwadmin_create_topics(r, &c, a, b);
}

static void
test_create_topics(void **state)
{
	klog_proto_array_t a = { 0 }, cfgs = { 0 };
	klog_kcreate_t c;
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	frame(&b, KLOG_KAPI_CREATE_TOPICS, 4, create_v4, sizeof(create_v4),
	    &r);
	assert_int_equal(klog_kwadmin_create_topics(&r, &c, &a, &cfgs), 0);
	assert_int_equal(c.ntopics, 2);
	assert_true(str_is(c.topics[0].name, "orders"));
	assert_int_equal(c.topics[0].partitions, -1);
	assert_int_equal(c.topics[0].rf, -1);
	assert_int_equal(c.topics[0].nassign, 1);
	assert_int_equal(c.topics[0].nconfigs, 2);
	assert_true(str_is(c.topics[0].configs[0].name, "segment.bytes"));
	assert_true(str_is(c.topics[0].configs[0].value, "1024"));
	assert_true(str_is(c.topics[0].configs[1].name, "retention.ms"));
	assert_null(c.topics[0].configs[1].value.p);
	assert_true(str_is(c.topics[1].name, "x"));
	assert_int_equal(c.topics[1].partitions, 3);
	assert_int_equal(c.topics[1].rf, 2);
	assert_int_equal(c.topics[1].nassign, 0);
	assert_int_equal(c.topics[1].nconfigs, 0);
	assert_int_equal(c.timeout_ms, 30000);
	assert_true(c.validate_only);
	klog_buf_free(&b);

	/* v0 has no validate_only: its last byte is a stray one. */
	frame(&b, KLOG_KAPI_CREATE_TOPICS, 0, create_v4, sizeof(create_v4) - 1,
	    &r);
	assert_int_equal(klog_kwadmin_create_topics(&r, &c, &a, &cfgs), 0);
	assert_false(c.validate_only);
	klog_buf_free(&b);
	free(a.p);
	free(cfgs.p);
	truncated(KLOG_KAPI_CREATE_TOPICS, 4, create_v4, sizeof(create_v4),
	    create_fn);
}

/* A count the body cannot hold fails at once, whatever it claims. */
static void
test_create_topics_bad_counts(void **state)
{
	static const uint8_t many[] = { 0x7f, 0xff, 0xff, 0xff, 0, 1, 'a' };
	static const uint8_t negative[] = {
		0, 0, 0, 1, 0, 1, 'a', 0, 0, 0, 1, 0, 1,
		0xff, 0xff, 0xff, 0xfe,            /* assignments: -2 */
	};
	klog_proto_array_t a = { 0 }, cfgs = { 0 };
	klog_kcreate_t c;
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	frame(&b, KLOG_KAPI_CREATE_TOPICS, 2, many, sizeof(many), &r);
	assert_int_equal(klog_kwadmin_create_topics(&r, &c, &a, &cfgs),
	    -KLOG_EPROTO);
	klog_buf_free(&b);
	frame(&b, KLOG_KAPI_CREATE_TOPICS, 2, negative, sizeof(negative), &r);
	assert_int_equal(klog_kwadmin_create_topics(&r, &c, &a, &cfgs),
	    -KLOG_EPROTO);
	klog_buf_free(&b);
	free(a.p);
	free(cfgs.p);
}

/* ---- the results per topic ---- */

static void
test_topic_results(void **state)
{
	static const klog_ktopic_result_t res[2] = {
		{ STR("a"), 0, NULL },
		{ STR("b"), 36, "topic \"b\" exists" },
	};
	/* CreateTopics v2: throttle, then name, error, message. */
	static const uint8_t create_v2[] = {
		0, 0, 0, 42, 0, 0, 0, 9,
		0, 0, 0, 0,
		0, 0, 0, 2,
		0, 1, 'a', 0, 0, 0xff, 0xff,
		0, 1, 'b', 0, 36, 0, 16, 't', 'o', 'p', 'i', 'c', ' ', '"', 'b',
		'"', ' ', 'e', 'x', 'i', 's', 't', 's',
	};
	/* DeleteTopics v0: no throttle, no message. */
	static const uint8_t delete_v0[] = {
		0, 0, 0, 18, 0, 0, 0, 9,
		0, 0, 0, 2,
		0, 1, 'a', 0, 0,
		0, 1, 'b', 0, 36,
	};
	/* CreatePartitions v1: throttle and message in every version. */
	static const uint8_t grow_v1[] = {
		0, 0, 0, 19, 0, 0, 0, 9,
		0, 0, 0, 0,
		0, 0, 0, 1,
		0, 1, 'a', 0, 0, 0xff, 0xff,
	};
	klog_kreq_t r = { .correlation = 9 };
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	r.api = KLOG_KAPI_CREATE_TOPICS;
	r.version = 2;
	klog_kwadmin_topic_results(&b, &r, res, 2);
	same(&b, create_v2, sizeof(create_v2));
	klog_buf_reset(&b);
	r.api = KLOG_KAPI_DELETE_TOPICS;
	r.version = 0;
	klog_kwadmin_topic_results(&b, &r, res, 2);
	same(&b, delete_v0, sizeof(delete_v0));
	klog_buf_reset(&b);
	r.api = KLOG_KAPI_CREATE_PARTITIONS;
	r.version = 1;
	klog_kwadmin_topic_results(&b, &r, res, 1);
	same(&b, grow_v1, sizeof(grow_v1));
	klog_buf_free(&b);
}

/* ---- DeleteTopics ---- */

static const uint8_t delete_v3[] = {
	0, 0, 0, 2, 0, 1, 'a', 0, 2, 'b', 'c', 0, 0, 0x27, 0x10,
};

static int
delete_fn(const klog_kreq_t *r, klog_proto_array_t *a, klog_proto_array_t *b)
{
	uint32_t n;
	int32_t t;

	(void)b;
	return klog_kwadmin_delete_topics(r, a, &n, &t);
}

static void
test_delete_topics(void **state)
{
	klog_proto_array_t a = { 0 };
	const klog_str_t *names;
	int32_t timeout_ms;
	klog_kreq_t r;
	klog_buf_t b;
	uint32_t n;

	(void)state;
	frame(&b, KLOG_KAPI_DELETE_TOPICS, 3, delete_v3, sizeof(delete_v3),
	    &r);
	assert_int_equal(klog_kwadmin_delete_topics(&r, &a, &n, &timeout_ms),
	    0);
	names = a.p;
	assert_int_equal(n, 2);
	assert_true(str_is(names[0], "a"));
	assert_true(str_is(names[1], "bc"));
	assert_int_equal(timeout_ms, 10000);
	klog_buf_free(&b);
	free(a.p);
	truncated(KLOG_KAPI_DELETE_TOPICS, 3, delete_v3, sizeof(delete_v3),
	    delete_fn);
}

/* ---- CreatePartitions ---- */

/* v1: "a" to 4 with a null assignment, "b" to 2 placed on broker 1. */
static const uint8_t grow_v1_req[] = {
	0, 0, 0, 2,
	0, 1, 'a', 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff,
	0, 1, 'b', 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,
	0, 0, 0x13, 0x88,
	1,
};

static int
grow_fn(const klog_kreq_t *r, klog_proto_array_t *a, klog_proto_array_t *b)
{
	klog_kgrow_t g;

	(void)b;
	return klog_kwadmin_create_partitions(r, &g, a);
}

static void
test_create_partitions(void **state)
{
	klog_proto_array_t a = { 0 };
	klog_kgrow_t g;
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	frame(&b, KLOG_KAPI_CREATE_PARTITIONS, 1, grow_v1_req,
	    sizeof(grow_v1_req), &r);
	assert_int_equal(klog_kwadmin_create_partitions(&r, &g, &a), 0);
	assert_int_equal(g.ntopics, 2);
	assert_true(str_is(g.topics[0].name, "a"));
	assert_int_equal(g.topics[0].count, 4);
	assert_int_equal(g.topics[0].nassign, -1);
	assert_true(str_is(g.topics[1].name, "b"));
	assert_int_equal(g.topics[1].count, 2);
	assert_int_equal(g.topics[1].nassign, 1);
	assert_int_equal(g.timeout_ms, 5000);
	assert_true(g.validate_only);
	klog_buf_free(&b);
	free(a.p);
	truncated(KLOG_KAPI_CREATE_PARTITIONS, 1, grow_v1_req,
	    sizeof(grow_v1_req), grow_fn);
}

/* ---- DescribeConfigs ---- */

/* v1: topic "t" with two keys, broker "1" with every key (null), then
 * include_synonyms. */
static const uint8_t describe_v1[] = {
	0, 0, 0, 2,
	2, 0, 1, 't', 0, 0, 0, 2, 0, 2, 'a', 'b', 0, 1, 'c',
	4, 0, 1, '1', 0xff, 0xff, 0xff, 0xff,
	1,
};

static int
describe_fn(const klog_kreq_t *r, klog_proto_array_t *a,
    klog_proto_array_t *b)
{
	klog_kdescribe_t d;

	return klog_kwadmin_describe_configs(r, &d, a, b);
}

static void
test_describe_configs(void **state)
{
	klog_proto_array_t a = { 0 }, keys = { 0 };
	klog_kdescribe_t d;
	klog_kreq_t r;
	klog_buf_t b;

	(void)state;
	frame(&b, KLOG_KAPI_DESCRIBE_CONFIGS, 1, describe_v1,
	    sizeof(describe_v1), &r);
	assert_int_equal(klog_kwadmin_describe_configs(&r, &d, &a, &keys), 0);
	assert_int_equal(d.nres, 2);
	assert_int_equal(d.res[0].type, KLOG_KRES_TOPIC);
	assert_true(str_is(d.res[0].name, "t"));
	assert_int_equal(d.res[0].nkeys, 2);
	assert_true(str_is(d.res[0].keys[0], "ab"));
	assert_true(str_is(d.res[0].keys[1], "c"));
	assert_int_equal(d.res[1].type, KLOG_KRES_BROKER);
	assert_int_equal(d.res[1].nkeys, -1);
	assert_null(d.res[1].keys);
	assert_true(d.synonyms);
	klog_buf_free(&b);
	free(a.p);
	free(keys.p);
	truncated(KLOG_KAPI_DESCRIBE_CONFIGS, 1, describe_v1,
	    sizeof(describe_v1), describe_fn);
}

/* v1's entry has a source and synonyms (only when asked for); v0's an
 * is_default instead and no synonyms. */
static void
test_describe_configs_resp(void **state)
{
	static const klog_kconfig_entry_t e = {
		{ "s.b", "10", KLOG_KSOURCE_STATIC_BROKER }, 1, 1,
		{ { "l.s", "10", KLOG_KSOURCE_STATIC_BROKER } },
	};
	static const klog_kconfig_result_t res[2] = {
		{ 0, NULL, KLOG_KRES_TOPIC, STR("t"), 1, &e },
		{ 29, "no", KLOG_KRES_TOPIC, STR("u"), 0, NULL },
	};
	static const uint8_t v1[] = {
		0, 0, 0, 64, 0, 0, 0, 9,
		0, 0, 0, 0,                     /* throttle */
		0, 0, 0, 2,
		0, 0, 0xff, 0xff, 2, 0, 1, 't', 0, 0, 0, 1,
		0, 3, 's', '.', 'b', 0, 2, '1', '0', 1, 4, 0,
		0, 0, 0, 1, 0, 3, 'l', '.', 's', 0, 2, '1', '0', 4,
		0, 29, 0, 2, 'n', 'o', 2, 0, 1, 'u', 0, 0, 0, 0,
	};
	static const uint8_t v0[] = {
		0, 0, 0, 36, 0, 0, 0, 9,
		0, 0, 0, 0,
		0, 0, 0, 1,
		0, 0, 0xff, 0xff, 2, 0, 1, 't', 0, 0, 0, 1,
		0, 3, 's', '.', 'b', 0, 2, '1', '0', 1, 0, 0,
	};
	klog_kreq_t r = { .api = KLOG_KAPI_DESCRIBE_CONFIGS, .version = 1,
	    .correlation = 9 };
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	klog_kwadmin_describe_configs_resp(&b, &r, 1, res, 2);
	same(&b, v1, sizeof(v1));
	klog_buf_reset(&b);
	r.version = 0;
	klog_kwadmin_describe_configs_resp(&b, &r, 1, res, 1);
	same(&b, v0, sizeof(v0));
	klog_buf_free(&b);
}

/* ---- InitProducerId ---- */

static void
test_init_producer_id(void **state)
{
	/* v1 (classic): transactional id "tx", timeout 60000. */
	static const uint8_t v1[] = {
		0, 2, 't', 'x', 0, 0, 0xea, 0x60,
	};
	/* v4 (flexible): a null id (0), timeout -1, producer id and epoch
	 * -1, no tags. */
	static const uint8_t v4[] = {
		0, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0,
	};
	/* Its answer: the v1 response header's tags, throttle, error 31,
	 * producer id -1, epoch -1, tags. */
	static const uint8_t v4_resp[] = {
		0, 0, 0, 22, 0, 0, 0, 9, 0,
		0, 0, 0, 0, 0, 31,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0,
	};
	static const uint8_t v1_resp[] = {
		0, 0, 0, 20, 0, 0, 0, 9,
		0, 0, 0, 0, 0, 53,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	/* v3 (flexible) with the producer's id 0x0102 and epoch 7 (KIP-360),
	 * and its answer granting id 0x0102 at epoch 8. */
	static const uint8_t v3[] = {
		0, 0, 0, 0x75, 0x30,
		0, 0, 0, 0, 0, 0, 1, 2, 0, 7,
		0,
	};
	static const uint8_t v3_resp[] = {
		0, 0, 0, 22, 0, 0, 0, 9, 0,
		0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 1, 2, 0, 8,
		0,
	};
	klog_str_t txn;
	int32_t timeout_ms;
	int64_t pid;
	int16_t epoch;
	klog_kreq_t r;
	klog_buf_t b, out;

	(void)state;
	klog_buf_init(&out);
	frame(&b, KLOG_KAPI_INIT_PRODUCER_ID, 1, v1, sizeof(v1), &r);
	assert_int_equal(klog_kwadmin_init_producer_id(&r, &txn, &timeout_ms,
	    &pid, &epoch),
	    0);
	assert_true(str_is(txn, "tx"));
	assert_int_equal(timeout_ms, 60000);
	assert_int_equal(pid, -1);
	assert_int_equal(epoch, -1);
	klog_kwadmin_init_producer_id_resp(&out, &r,
	    KLOG_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, -1);
	same(&out, v1_resp, sizeof(v1_resp));
	klog_buf_free(&b);

	frame(&b, KLOG_KAPI_INIT_PRODUCER_ID, 4, v4, sizeof(v4), &r);
	assert_int_equal(klog_kwadmin_init_producer_id(&r, &txn, &timeout_ms,
	    &pid, &epoch),
	    0);
	assert_null(txn.p);
	assert_int_equal(timeout_ms, -1);
	klog_buf_reset(&out);
	klog_kwadmin_init_producer_id_resp(&out, &r,
	    KLOG_KERR_CLUSTER_AUTHORIZATION_FAILED, -1, -1);
	same(&out, v4_resp, sizeof(v4_resp));
	klog_buf_free(&b);

	frame(&b, KLOG_KAPI_INIT_PRODUCER_ID, 3, v3, sizeof(v3), &r);
	assert_int_equal(klog_kwadmin_init_producer_id(&r, &txn, &timeout_ms,
	    &pid, &epoch), 0);
	assert_null(txn.p);
	assert_int_equal(timeout_ms, 30000);
	assert_int_equal(pid, 0x0102);
	assert_int_equal(epoch, 7);
	klog_buf_reset(&out);
	klog_kwadmin_init_producer_id_resp(&out, &r, KLOG_KERR_NONE, 0x0102,
	    8);
	same(&out, v3_resp, sizeof(v3_resp));
	klog_buf_free(&b);

	/* v4 without its tags, or read as classic: refused. */
	frame(&b, KLOG_KAPI_INIT_PRODUCER_ID, 4, v4, sizeof(v4) - 1, &r);
	assert_int_equal(klog_kwadmin_init_producer_id(&r, &txn, &timeout_ms,
	    &pid, &epoch),
	    -KLOG_EPROTO);
	klog_buf_free(&b);
	frame(&b, KLOG_KAPI_INIT_PRODUCER_ID, 1, v4, 1, &r);
	assert_int_equal(klog_kwadmin_init_producer_id(&r, &txn, &timeout_ms,
	    &pid, &epoch),
	    -KLOG_EPROTO);
	klog_buf_free(&b);
	klog_buf_free(&out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_topics),
		cmocka_unit_test(test_create_topics_bad_counts),
		cmocka_unit_test(test_topic_results),
		cmocka_unit_test(test_delete_topics),
		cmocka_unit_test(test_create_partitions),
		cmocka_unit_test(test_describe_configs),
		cmocka_unit_test(test_describe_configs_resp),
		cmocka_unit_test(test_init_producer_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
