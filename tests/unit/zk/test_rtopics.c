/*
 * Tests for lib/zk/rtopics.c: the JSON codecs and Kafka's assignment without
 * a server, then the operations (and klog_zk_multi) against a real
 * throwaway ZooKeeper (zkserver.h); without zkServer.sh those are skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/zk/layout.h"
#include "klog/zk/rtopics.h"
#include "klog/zk/zk.h"
#include "fx/zkserver.h"



static const char topic_json[] =
    "{\"version\":1,\"partitions\":{\"0\":[1,2,3],\"1\":[2,3,1]},"
    "\"min_insync\":2}";
static const char state_json[] =
    "{\"version\":1,\"isr\":[1,2],\"leader\":1,\"controller_epoch\":-1,"
    "\"leader_epoch\":0}";

static void
test_paths(void **state)
{
	char buf[128], small[16];

	(void)state;
	assert_int_equal(klog_rtopics_topic_path(buf, sizeof(buf), "t"), 0);
	assert_string_equal(buf, "/klog/topics/t");
	assert_int_equal(klog_rtopics_state_path(buf, sizeof(buf), "t", 3), 0);
	assert_string_equal(buf, "/klog/topics/t/partitions/3/state");
	assert_int_equal(klog_rtopics_leader_path(buf, sizeof(buf), "t", 0), 0);
	assert_string_equal(buf, "/klog/topics/t/partitions/0/leader");
	assert_int_equal(klog_rtopics_state_path(small, sizeof(small), "t", 3),
	    -KLOG_EINVAL);
	assert_int_equal(klog_rtopics_state_path(buf, sizeof(buf), "t", -1),
	    -KLOG_EINVAL);
	assert_int_equal(klog_rtopics_topic_path(buf, sizeof(buf), "a/b"),
	    -KLOG_EINVAL);
}

static void
test_topic_round_trip(void **state)
{
	klog_rtopic_t t, u;
	klog_err_t err;
	klog_buf_t b;

	(void)state;
	assert_int_equal(klog_rtopic_parse(topic_json, strlen(topic_json), &t,
	    &err), 0);
	assert_int_equal(t.nparts, 2);
	assert_int_equal(t.rf, 3);
	assert_int_equal(t.min_insync, 2);
	assert_int_equal(t.replicas[3], 2);
	assert_true(klog_rtopic_has(&t, 1, 1));
	assert_false(klog_rtopic_has(&t, 2, 1));
	klog_buf_init(&b);
	assert_int_equal(klog_rtopic_encode(&b, &t), 0);
	assert_int_equal(b.len, strlen(topic_json));
	assert_memory_equal(b.data, topic_json, b.len);
	klog_buf_free(&b);
	/* An unknown key with a nested value is refused; any spacing and
	 * order, and unknown scalar keys, are not. */
	static const char loose[] = " { \"min_insync\" : 1 , \"x\": [1] }";
	assert_int_equal(klog_rtopic_parse(loose, strlen(loose), &u, &err),
	    -KLOG_EINVAL);
	static const char other[] = "{\"partitions\":{\"1\":[5],\"0\":[4]},"
	    "\"note\":\"hi \\\"there\\\"\",\"n\":1.5e3,\"b\":true,\"z\":null,"
	    "\"version\":1,\"min_insync\":1}\n";
	assert_int_equal(klog_rtopic_parse(other, strlen(other), &u, &err), 0);
	assert_int_equal(u.nparts, 2);
	assert_int_equal(u.rf, 1);
	assert_int_equal(u.replicas[0], 4);
	assert_int_equal(u.replicas[1], 5);
	klog_rtopic_free(&u);
	klog_rtopic_free(&t);
}

static void
refuse_topic(const char *s, const char *why)
{
	klog_rtopic_t t;
	klog_err_t err = { 0, "" };

	assert_int_equal(klog_rtopic_parse(s, strlen(s), &t, &err),
	    -KLOG_EINVAL);
	if (strstr(err.msg, why) == NULL)
		fail_msg("%s: got \"%s\", wanted \"%s\"", s, err.msg, why);
	assert_null(t.replicas);
}

static void
test_topic_refusals(void **state)
{
	char big[512];
	size_t n;
	int i;

	(void)state;
	refuse_topic("", "expected an object");
	refuse_topic("[]", "expected an object");
	refuse_topic("{\"partitions\":{\"0\":[1]},\"min_insync\":1}",
	    "no version");
	refuse_topic("{\"version\":1,\"min_insync\":1}", "no partitions");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1]}}",
	    "no min_insync");
	refuse_topic("{\"version\":2,\"partitions\":{\"0\":[1]},"
	    "\"min_insync\":1}", "out of range");
	refuse_topic("{\"version\":\"1\",\"partitions\":{\"0\":[1]},"
	    "\"min_insync\":1}", "expected a number");
	refuse_topic("{\"version\":1,\"partitions\":{},\"min_insync\":1}",
	    "no partitions");
	refuse_topic("{\"version\":1,\"partitions\":[[1]],\"min_insync\":1}",
	    "not an object");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1],\"0\":[2]},"
	    "\"min_insync\":1}", "partition 0 twice");
	refuse_topic("{\"version\":1,\"partitions\":{\"1\":[1]},"
	    "\"min_insync\":1}", "partition 0 missing");
	refuse_topic("{\"version\":1,\"partitions\":{\"01\":[1]},"
	    "\"min_insync\":1}", "not a number");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[-1]},"
	    "\"min_insync\":1}", "out of range");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1,1]},"
	    "\"min_insync\":1}", "twice");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1.5]},"
	    "\"min_insync\":1}", "not an integer");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[]},"
	    "\"min_insync\":1}", "no replicas");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1,2],\"1\":[3]},"
	    "\"min_insync\":1}", "others have 2");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1,2]},"
	    "\"min_insync\":3}", "over 2 replicas");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1]},"
	    "\"min_insync\":0}", "out of range");
	refuse_topic("{\"version\":1,\"version\":1,\"partitions\":{\"0\":[1]},"
	    "\"min_insync\":1}", "version twice");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1]},"
	    "\"min_insync\":1,\"x\":{}}", "nested");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1]},"
	    "\"min_insync\":1} x", "trailing");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1]},"
	    "\"min_insync\":1", "expected ,");
	refuse_topic("{\"version\":1,\"partitions\":{\"10000\":[1]},"
	    "\"min_insync\":1}", "not a number");
	/* Strings are RFC 8259's, in a key or a value nobody reads. */
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1]},"
	    "\"min_insync\":1,\"note\":\"\\q\"}", "bad escape");
	refuse_topic("{\"version\":1,\"partitions\":{\"0\":[1]},"
	    "\"min_insync\":1,\"\xc0\xaf\":1}", "invalid UTF-8");
	/* 17 replicas */
	n = (size_t)snprintf(big, sizeof(big),
	    "{\"version\":1,\"min_insync\":1,\"partitions\":{\"0\":[0");
	for (i = 1; i <= KLOG_RTOPICS_MAX_REPLICAS; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, ",%d", i);
	snprintf(big + n, sizeof(big) - n, "]}}");
	refuse_topic(big, "more than 16 replicas");
}

static void
test_state_round_trip(void **state)
{
	klog_rstate_t s;
	klog_err_t err;
	klog_buf_t b;

	(void)state;
	assert_int_equal(klog_rstate_parse(state_json, strlen(state_json), &s,
	    &err), 0);
	assert_int_equal(s.leader, 1);
	assert_int_equal(s.nisr, 2);
	assert_int_equal(s.isr[1], 2);
	assert_int_equal(s.controller_epoch, -1);
	assert_int_equal(s.leader_epoch, 0);
	assert_int_equal(s.version, -1);
	assert_true(klog_rstate_in_isr(&s, 2));
	assert_false(klog_rstate_in_isr(&s, 3));
	klog_buf_init(&b);
	assert_int_equal(klog_rstate_encode(&b, &s), 0);
	assert_int_equal(b.len, strlen(state_json));
	assert_memory_equal(b.data, state_json, b.len);
	klog_buf_free(&b);

	static const char none[] = "{\"leader_epoch\":7,\"leader\":-1,"
	    "\"isr\":[],\"controller_epoch\":3,\"version\":1,\"extra\":\"x\"}";
	assert_int_equal(klog_rstate_parse(none, strlen(none), &s, &err), 0);
	assert_int_equal(s.leader, -1);
	assert_int_equal(s.nisr, 0);
	assert_int_equal(s.leader_epoch, 7);

	s.leader = -2;
	klog_buf_init(&b);
	assert_int_equal(klog_rstate_encode(&b, &s), -KLOG_EINVAL);
	klog_buf_free(&b);
}

static void
refuse_state(const char *s, const char *why)
{
	klog_rstate_t st;
	klog_err_t err = { 0, "" };

	assert_int_equal(klog_rstate_parse(s, strlen(s), &st, &err),
	    -KLOG_EINVAL);
	if (strstr(err.msg, why) == NULL)
		fail_msg("%s: got \"%s\", wanted \"%s\"", s, err.msg, why);
}

static void
test_state_refusals(void **state)
{
	(void)state;
	refuse_state("{\"version\":1,\"isr\":[1],\"leader\":1,"
	    "\"controller_epoch\":-1}", "no leader_epoch");
	refuse_state("{\"version\":1,\"leader\":1,\"controller_epoch\":-1,"
	    "\"leader_epoch\":0}", "no isr");
	refuse_state("{\"version\":1,\"isr\":[1,1],\"leader\":1,"
	    "\"controller_epoch\":-1,\"leader_epoch\":0}", "twice");
	refuse_state("{\"version\":1,\"isr\":1,\"leader\":1,"
	    "\"controller_epoch\":-1,\"leader_epoch\":0}", "not an array");
	refuse_state("{\"version\":1,\"isr\":[1],\"leader\":-2,"
	    "\"controller_epoch\":-1,\"leader_epoch\":0}", "out of range");
	refuse_state("{\"version\":1,\"isr\":[1],\"leader\":1,"
	    "\"controller_epoch\":-1,\"leader_epoch\":-1}", "out of range");
	refuse_state("{\"version\":1,\"isr\":[1],\"leader\":\"1\","
	    "\"controller_epoch\":-1,\"leader_epoch\":0}", "expected a number");
	refuse_state("{\"version\":1,\"isr\":[1],\"leader\":2147483648,"
	    "\"controller_epoch\":-1,\"leader_epoch\":0}", "out of range");
	refuse_state("{\"version\":1,\"isr\":[1],\"leader\":1,\"leader\":1,"
	    "\"controller_epoch\":-1,\"leader_epoch\":0}", "leader twice");
}

/* Kafka's AdminUtilsTest expectation for 5 brokers, 10 partitions, 3
 * replicas and fixed start index 0. */
static void
test_assign_kafka(void **state)
{
	static const int32_t brokers[] = { 0, 1, 2, 3, 4 };
	static const int32_t want[10][3] = {
		{ 0, 1, 2 }, { 1, 2, 3 }, { 2, 3, 4 }, { 3, 4, 0 }, { 4, 0, 1 },
		{ 0, 2, 3 }, { 1, 3, 4 }, { 2, 4, 0 }, { 3, 0, 1 }, { 4, 1, 2 },
	};
	klog_rtopic_t t;
	klog_err_t err;
	int p;

	(void)state;
	assert_int_equal(klog_rtopic_assign(brokers, 5, 10, 3, 2, 0, &t, &err),
	    0);
	assert_int_equal(t.nparts, 10);
	assert_int_equal(t.rf, 3);
	assert_int_equal(t.min_insync, 2);
	for (p = 0; p < 10; p++)
		assert_memory_equal(t.replicas + p * 3, want[p], sizeof(want[p]));
	klog_rtopic_free(&t);
}

static void
test_assign_spread(void **state)
{
	static const int32_t brokers[] = { 3, 7, 9 };
	int leads[3], holds[3], b, p, j, k;
	klog_rtopic_t t;
	klog_err_t err;
	uint32_t start;

	(void)state;
	for (start = 0; start < 7; start++) {
		assert_int_equal(klog_rtopic_assign(brokers, 3, 6, 2, 1, start,
		    &t, &err), 0);
		memset(leads, 0, sizeof(leads));
		memset(holds, 0, sizeof(holds));
		for (p = 0; p < 6; p++) {
			for (j = 0; j < 2; j++) {
				for (b = 0; b < 3; b++)
					if (t.replicas[p * 2 + j] == brokers[b])
						break;
				assert_true(b < 3);
				holds[b]++;
				if (j == 0)
					leads[b]++;
				for (k = 0; k < j; k++)
					assert_int_not_equal(t.replicas[p * 2 + k],
					    t.replicas[p * 2 + j]);
			}
		}
		for (b = 0; b < 3; b++) {
			assert_int_equal(leads[b], 2);  /* nparts / nb */
			assert_int_equal(holds[b], 4);
		}
		/* The first leader moves with start. */
		assert_int_equal(t.replicas[0], brokers[start % 3]);
		klog_rtopic_free(&t);
	}
	/* One broker, one replica. */
	assert_int_equal(klog_rtopic_assign(brokers, 1, 4, 1, 1, 99, &t, &err),
	    0);
	assert_int_equal(t.replicas[3], 3);
	klog_rtopic_free(&t);

	assert_int_equal(klog_rtopic_assign(brokers, 3, 6, 4, 1, 0, &t, &err),
	    -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "larger than available brokers"));
	assert_null(t.replicas);
	assert_int_equal(klog_rtopic_assign(brokers, 3, 0, 1, 1, 0, &t, &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_rtopic_assign(brokers, 3, 3, 2, 3, 0, &t, &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_rtopic_assign(brokers, 3, 3, 2, 0, 0, &t, &err),
	    -KLOG_EINVAL);
	static const int32_t unsorted[] = { 2, 1 };
	assert_int_equal(klog_rtopic_assign(unsorted, 2, 3, 2, 1, 0, &t, &err),
	    -KLOG_EINVAL);
}

/* ---- against ZooKeeper ---- */

static klog_zk_t *
open_ok(void)
{
	klog_zk_t *zk = NULL;
	klog_err_t err = { 0, "" };
	int rc = klog_zk_open(server.connect, 4000, 10000, &zk, &err);

	if (rc != 0)
		fprintf(stderr, "open %s: %s\n", server.connect, err.msg);
	assert_int_equal(rc, 0);
	return zk;
}

static void
make_topic(klog_zk_t *zk, const char *name, int nparts, int rf)
{
	static const int32_t brokers[] = { 1, 2, 3 };
	klog_rtopic_t t;
	klog_err_t err = { 0, "" };
	int rc;

	assert_int_equal(klog_rtopic_assign(brokers, 3, nparts, rf, 1, 0, &t,
	    &err), 0);
	rc = klog_rtopics_create(zk, name, &t, &err);
	if (rc != 0)
		fail_msg("create %s: %s", name, err.msg);
	klog_rtopic_free(&t);
}

static void
test_multi(void **state)
{
	klog_zk_t *zk;
	klog_err_t err = { 0, "" };
	klog_zk_stat_t st;
	char *data;
	size_t len;

	(void)state;
	NEED_SERVER();
	zk = open_ok();
	assert_int_equal(klog_zk_mkdirs(zk, "/m", &err), 0);
	klog_zk_op_t ok[] = {
		{ .type = KLOG_ZK_OP_CREATE, .path = "/m/a", .data = "1",
		  .len = 1 },
		{ .type = KLOG_ZK_OP_CREATE, .path = "/m/a/b" },
		{ .type = KLOG_ZK_OP_CHECK, .path = "/m", .version = 0 },
		{ .type = KLOG_ZK_OP_SET, .path = "/m/a", .data = "22",
		  .len = 2, .version = 0 },
		{ .type = KLOG_ZK_OP_CREATE, .path = "/m/e", .data = "x",
		  .len = 1, .flags = KLOG_ZK_EPHEMERAL },
	};
	assert_int_equal(klog_zk_multi(zk, ok, 5, &err), 0);
	assert_int_equal(klog_zk_get(zk, "/m/a", 0, &data, &len, &st, &err), 0);
	assert_string_equal(data, "22");
	assert_int_equal(st.version, 1);
	free(data);
	assert_int_equal(klog_zk_exists(zk, "/m/e", 0, &st, &err), 0);
	assert_true(st.ephemeral_owner == klog_zk_session_id(zk));

	/* All or nothing: the create before the failing op is undone. */
	klog_zk_op_t stale[] = {
		{ .type = KLOG_ZK_OP_CREATE, .path = "/m/c" },
		{ .type = KLOG_ZK_OP_SET, .path = "/m/a", .data = "3",
		  .len = 1, .version = 0 },
	};
	assert_int_equal(klog_zk_multi(zk, stale, 2, &err), -KLOG_EBUSY);
	assert_non_null(strstr(err.msg, "/m/a"));
	assert_int_equal(klog_zk_exists(zk, "/m/c", 0, NULL, &err),
	    -KLOG_ENOENT);
	klog_zk_op_t dup[] = {
		{ .type = KLOG_ZK_OP_CREATE, .path = "/m/d" },
		{ .type = KLOG_ZK_OP_CREATE, .path = "/m/a" },
	};
	assert_int_equal(klog_zk_multi(zk, dup, 2, &err), -KLOG_EEXIST);
	assert_int_equal(klog_zk_exists(zk, "/m/d", 0, NULL, &err),
	    -KLOG_ENOENT);
	klog_zk_op_t orphan[] = {
		{ .type = KLOG_ZK_OP_CREATE, .path = "/m/x/y" },
	};
	assert_int_equal(klog_zk_multi(zk, orphan, 1, &err), -KLOG_ENOENT);
	klog_zk_op_t check[] = {
		{ .type = KLOG_ZK_OP_CHECK, .path = "/m/a", .version = 0 },
	};
	assert_int_equal(klog_zk_multi(zk, check, 1, &err), -KLOG_EBUSY);
	/* A create and a delete of one node: fails if it exists (rtadmin's
	 * "no mark" check), leaves nothing if it did not. */
	klog_zk_op_t absent[] = {
		{ .type = KLOG_ZK_OP_CREATE, .path = "/m/mark" },
		{ .type = KLOG_ZK_OP_DELETE, .path = "/m/mark", .version = -1 },
	};
	assert_int_equal(klog_zk_multi(zk, absent, 2, &err), 0);
	assert_int_equal(klog_zk_exists(zk, "/m/mark", 0, NULL, &err),
	    -KLOG_ENOENT);
	assert_int_equal(klog_zk_create(zk, "/m/mark", NULL, 0, 0, &err), 0);
	assert_int_equal(klog_zk_multi(zk, absent, 2, &err), -KLOG_EEXIST);
	klog_zk_op_t del[] = {
		{ .type = KLOG_ZK_OP_DELETE, .path = "/m/a", .version = -1 },
	};
	assert_int_equal(klog_zk_multi(zk, del, 1, &err), -KLOG_EBUSY);
	assert_int_equal(klog_zk_delete_tree(zk, "/m", &err), 0);
	klog_zk_close(zk);
}

static void
test_create_and_read(void **state)
{
	klog_zk_t *zk;
	klog_err_t err = { 0, "" };
	klog_zk_list_t l;
	klog_rtopic_t t;
	klog_rstate_t s;
	int32_t leader;
	char *data;
	size_t len;
	int p;

	(void)state;
	NEED_SERVER();
	zk = open_ok();
	assert_int_equal(klog_rtopics_list(zk, 0, &l, &err), 0);
	assert_int_equal(l.n, 0);
	make_topic(zk, "orders", 3, 2);
	make_topic(zk, "a.logs", 1, 3);

	/* The bytes klog(7) documents. */
	assert_int_equal(klog_zk_get(zk, "/klog/topics/orders", 0, &data, &len,
	    NULL, &err), 0);
	assert_string_equal(data, "{\"version\":1,\"partitions\":{"
	    "\"0\":[1,2],\"1\":[2,3],\"2\":[3,1]},\"min_insync\":1}");
	free(data);
	assert_int_equal(klog_zk_get(zk, "/klog/topics/orders/partitions/1/"
	    "state", 0, &data, &len, NULL, &err), 0);
	assert_string_equal(data, "{\"version\":1,\"isr\":[2,3],\"leader\":2,"
	    "\"controller_epoch\":-1,\"leader_epoch\":0}");
	free(data);

	assert_int_equal(klog_rtopics_list(zk, 0, &l, &err), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.names[0], "a.logs");
	assert_string_equal(l.names[1], "orders");
	klog_zk_list_free(&l);

	assert_int_equal(klog_rtopics_read(zk, "orders", 0, &t, &err), 0);
	assert_int_equal(t.nparts, 3);
	assert_int_equal(t.rf, 2);
	for (p = 0; p < 3; p++) {
		assert_int_equal(klog_rtopics_state(zk, "orders", p, 0, &s,
		    &err), 0);
		assert_int_equal(s.leader, t.replicas[p * 2]);
		assert_int_equal(s.nisr, 2);
		assert_int_equal(s.leader_epoch, 0);
		assert_int_equal(s.version, 0);
		assert_int_equal(klog_rtopics_leader(zk, "orders", p, 0,
		    &leader, &err), -KLOG_ENOENT);
		assert_int_equal(leader, -1);
	}
	klog_rtopic_free(&t);
	assert_int_equal(klog_rtopics_read(zk, "nosuch", 0, &t, &err),
	    -KLOG_ENOENT);
	assert_int_equal(klog_rtopics_state(zk, "orders", 3, 0, &s, &err),
	    -KLOG_ENOENT);

	/* EEXIST against itself and against the 0.7 layout, the same
	 * asked beforehand (can_create, which writes nothing). */
	{
		static const int32_t b[] = { 1, 2, 3 };
		assert_int_equal(klog_rtopics_can_create(zk, "orders", &err),
		    -KLOG_EEXIST);
		assert_non_null(strstr(err.msg, "exists"));
		assert_int_equal(klog_rtopics_can_create(zk, "fresh", &err), 0);
		assert_int_equal(klog_rtopics_read(zk, "fresh", 0, &t, &err),
		    -KLOG_ENOENT);
		assert_int_equal(klog_rtopic_assign(b, 3, 2, 1, 1, 0, &t,
		    &err), 0);
		assert_int_equal(klog_rtopics_create(zk, "orders", &t, &err),
		    -KLOG_EEXIST);
		assert_non_null(strstr(err.msg, "exists"));
		assert_int_equal(klog_layout_register_topic(zk, 1, "old", 2,
		    &err), 0);
		assert_int_equal(klog_rtopics_create(zk, "old", &t, &err),
		    -KLOG_EEXIST);
		assert_non_null(strstr(err.msg, "unreplicated"));
		assert_int_equal(klog_rtopics_can_create(zk, "old", &err),
		    -KLOG_EEXIST);
		assert_non_null(strstr(err.msg, "unreplicated"));
		assert_int_equal(klog_rtopics_can_create(zk, "bad/name", &err),
		    -KLOG_ETOPIC);
		assert_int_equal(klog_rtopics_create(zk, "bad/name", &t, &err),
		    -KLOG_ETOPIC);
		klog_rtopic_free(&t);
		assert_int_equal(klog_rtopics_read(zk, "old", 0, &t, &err),
		    -KLOG_ENOENT);
	}
	/* A node that does not parse is an error naming it. */
	assert_int_equal(klog_zk_put(zk, "/klog/topics/junk", "{}", 2, &err), 0);
	assert_int_equal(klog_rtopics_read(zk, "junk", 0, &t, &err),
	    -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "/klog/topics/junk: topic JSON"));
	assert_int_equal(klog_zk_delete_tree(zk, "/klog", &err), 0);
	assert_int_equal(klog_zk_delete_tree(zk, "/brokers", &err), 0);
	klog_zk_close(zk);
}

static void
test_claims(void **state)
{
	klog_zk_t *a, *b;
	klog_err_t err = { 0, "" };
	klog_rstate_t sa, sb, now;
	int32_t leader;
	int ra, rb;

	(void)state;
	NEED_SERVER();
	a = open_ok();
	b = open_ok();
	make_topic(a, "c", 1, 3);
	assert_int_equal(klog_rtopics_state(a, "c", 0, 0, &sa, &err), 0);
	assert_int_equal(klog_rtopics_state(b, "c", 0, 0, &sb, &err), 0);
	/* Both read version 0 and claim: exactly one wins. */
	sa.leader = 2;
	sa.leader_epoch++;
	sb.leader = 3;
	sb.leader_epoch++;
	ra = klog_rtopics_claim(a, "c", 0, 2, &sa, &err);
	rb = klog_rtopics_claim(b, "c", 0, 3, &sb, &err);
	assert_int_equal(ra, 0);
	assert_int_equal(rb, -KLOG_EBUSY);
	assert_int_equal(sa.version, 1);
	assert_int_equal(klog_rtopics_leader(b, "c", 0, 1, &leader, &err), 0);
	assert_int_equal(leader, 2);
	assert_int_equal(klog_rtopics_state(b, "c", 0, 0, &now, &err), 0);
	assert_int_equal(now.leader, 2);
	assert_int_equal(now.leader_epoch, 1);
	assert_int_equal(now.version, 1);

	/* A claim at the right version still loses to a live leader node. */
	now.leader = 3;
	now.leader_epoch = 2;
	assert_int_equal(klog_rtopics_claim(b, "c", 0, 3, &now, &err),
	    -KLOG_EBUSY);
	assert_int_equal(now.version, 1);
	/* The multi wrote nothing: the state is as a left it. */
	assert_int_equal(klog_rtopics_state(b, "c", 0, 0, &now, &err), 0);
	assert_int_equal(now.leader, 2);
	assert_int_equal(now.version, 1);

	/* The leader shrinks the isr at its version; a stale write fails. */
	sa.nisr = 2;
	assert_int_equal(klog_rtopics_set_state(a, "c", 0, &sa, &err), 0);
	assert_int_equal(sa.version, 2);
	sb = now;  /* version 1 */
	sb.nisr = 1;
	assert_int_equal(klog_rtopics_set_state(b, "c", 0, &sb, &err),
	    -KLOG_EBUSY);
	sb.version = -1;
	assert_int_equal(klog_rtopics_set_state(b, "c", 0, &sb, &err),
	    -KLOG_EINVAL);

	/* The leader's session ends: its node goes, another can claim. */
	klog_zk_close(a);
	assert_int_equal(klog_rtopics_leader(b, "c", 0, 0, &leader, &err),
	    -KLOG_ENOENT);
	assert_int_equal(klog_rtopics_state(b, "c", 0, 0, &now, &err), 0);
	now.leader = 3;
	now.leader_epoch++;
	assert_int_equal(klog_rtopics_claim(b, "c", 0, 3, &now, &err), 0);
	assert_int_equal(klog_rtopics_leader(b, "c", 0, 0, &leader, &err), 0);
	assert_int_equal(leader, 3);
	/* A claim for someone else is a caller's mistake. */
	now.leader = 1;
	assert_int_equal(klog_rtopics_claim(b, "c", 0, 3, &now, &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_zk_delete_tree(b, "/klog", &err), 0);
	klog_zk_close(b);
}

static void
test_watches(void **state)
{
	klog_zk_t *zk;
	klog_err_t err = { 0, "" };
	klog_zk_event_t ev;
	klog_zk_list_t l;
	klog_rstate_t s;
	int32_t leader;
	int i, got = 0;

	(void)state;
	NEED_SERVER();
	zk = open_ok();
	assert_int_equal(klog_rtopics_list(zk, 1, &l, &err), 0);
	assert_int_equal(l.n, 0);
	make_topic(zk, "w", 1, 2);
	assert_int_equal(klog_rtopics_leader(zk, "w", 0, 1, &leader, &err),
	    -KLOG_ENOENT);
	assert_int_equal(klog_rtopics_state(zk, "w", 0, 1, &s, &err), 0);
	s.leader_epoch++;
	assert_int_equal(klog_rtopics_claim(zk, "w", 0, s.leader, &s, &err),
	    0);
	/* A CHILD on the root, a DATA on the state and one on the leader. */
	for (i = 0; i < 50 && got != 7; i++) {
		while (klog_zk_next_event(zk, &ev) == 1) {
			if (ev.type == KLOG_ZK_EVENT_CHILD &&
			    strcmp(ev.path, "/klog/topics") == 0)
				got |= 1;
			if (ev.type == KLOG_ZK_EVENT_DATA &&
			    strstr(ev.path, "/state") != NULL)
				got |= 2;
			if (ev.type == KLOG_ZK_EVENT_DATA &&
			    strstr(ev.path, "/leader") != NULL)
				got |= 4;
		}
		if (got != 7)
			usleep(100000);
	}
	assert_int_equal(got, 7);
	assert_int_equal(klog_zk_delete_tree(zk, "/klog", &err), 0);
	klog_zk_close(zk);
}

int
main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_topic_round_trip),
		cmocka_unit_test(test_topic_refusals),
		cmocka_unit_test(test_state_round_trip),
		cmocka_unit_test(test_state_refusals),
		cmocka_unit_test(test_assign_kafka),
		cmocka_unit_test(test_assign_spread),
	};
	const struct CMUnitTest zk[] = {
		cmocka_unit_test(test_multi),
		cmocka_unit_test(test_create_and_read),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_watches),
	};
	int rc = cmocka_run_group_tests(pure, NULL, NULL);

	return rc | cmocka_run_group_tests(zk, group_setup, group_teardown);
}
