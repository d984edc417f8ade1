/* Unit tests for lib/zk/layout.c's pure part: paths, node data in Kafka
 * 0.7's exact formats, ids, string order and the range assignment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/zk/layout.h"

static void
test_assign_every_size(void **state)
{
	size_t p, c, j, start, count, again_s, again_c, min, max;
	int owned[20];

	(void)state;
	for (p = 0; p <= 20; p++) {
		for (c = 1; c <= 20; c++) {
			memset(owned, 0, sizeof(owned));
			min = SIZE_MAX;
			max = 0;
			for (j = 0; j < c; j++) {
				klog_layout_assign(p, c, j, &start, &count);
				klog_layout_assign(p, c, j, &again_s,
				    &again_c);
				assert_int_equal(start, again_s);
				assert_int_equal(count, again_c);
				assert_true(start + count <= p);
				for (size_t k = start; k < start + count; k++)
					owned[k]++;
				min = count < min ? count : min;
				max = count > max ? count : max;
			}
			for (size_t k = 0; k < p; k++)
				assert_int_equal(owned[k], 1);
			assert_true(max - min <= 1);
		}
	}
}

static void
test_assign_kafka_example(void **state)
{
	size_t start, count;

	(void)state;
	/* 5 partitions, 2 threads: the first e = 1 threads take n + 1. */
	klog_layout_assign(5, 2, 0, &start, &count);
	assert_int_equal(start, 0);
	assert_int_equal(count, 3);
	klog_layout_assign(5, 2, 1, &start, &count);
	assert_int_equal(start, 3);
	assert_int_equal(count, 2);
	/* More threads than partitions: the last ones get nothing. */
	klog_layout_assign(2, 3, 2, &start, &count);
	assert_int_equal(count, 0);
	klog_layout_assign(4, 0, 0, &start, &count);
	assert_int_equal(count, 0);
	klog_layout_assign(4, 2, 2, &start, &count);
	assert_int_equal(count, 0);
}

static void
test_sort_as_strings(void **state)
{
	char a[] = "2-0", b[] = "10-0", c[] = "2-1", d[] = "1-5";
	char *v[] = { a, b, c, d };

	(void)state;
	klog_layout_sort_names(v, 4);
	assert_string_equal(v[0], "1-5");
	assert_string_equal(v[1], "10-0");
	assert_string_equal(v[2], "2-0");
	assert_string_equal(v[3], "2-1");
}

static void
test_topic_parts_sorted(void **state)
{
	klog_layout_holder_t h[] = { { 2, 2 }, { 10, 1 } };
	klog_layout_topic_t t = { .name = "app", .nholders = 2,
	    .holders = h };
	klog_zk_list_t l;

	(void)state;
	assert_int_equal(klog_layout_topic_parts(&t, &l), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.names[0], "10-0");
	assert_string_equal(l.names[1], "2-0");
	assert_string_equal(l.names[2], "2-1");
	klog_zk_list_free(&l);
	assert_null(l.names);
}

static void
test_paths(void **state)
{
	char buf[KLOG_ZK_PATH_MAX];

	(void)state;
	assert_int_equal(klog_layout_broker_path(buf, sizeof(buf), 7), 0);
	assert_string_equal(buf, "/brokers/ids/7");
	assert_int_equal(klog_layout_topic_path(buf, sizeof(buf), "app"), 0);
	assert_string_equal(buf, "/brokers/topics/app");
	assert_int_equal(klog_layout_topic_broker_path(buf, sizeof(buf),
	    "app", 3), 0);
	assert_string_equal(buf, "/brokers/topics/app/3");
	assert_int_equal(klog_layout_group_path(buf, sizeof(buf), "g1"), 0);
	assert_string_equal(buf, "/consumers/g1");
	assert_int_equal(klog_layout_member_path(buf, sizeof(buf), "g1",
	    NULL), 0);
	assert_string_equal(buf, "/consumers/g1/ids");
	assert_int_equal(klog_layout_member_path(buf, sizeof(buf), "g1",
	    "g1_h-1-0badcafe"), 0);
	assert_string_equal(buf, "/consumers/g1/ids/g1_h-1-0badcafe");
	assert_int_equal(klog_layout_owner_path(buf, sizeof(buf), "g1",
	    "app", 10, 0), 0);
	assert_string_equal(buf, "/consumers/g1/owners/app/10-0");
	assert_int_equal(klog_layout_owner_path(buf, sizeof(buf), "g1",
	    "app", -1, -1), 0);
	assert_string_equal(buf, "/consumers/g1/owners/app");
	assert_int_equal(klog_layout_offset_path(buf, sizeof(buf), "g1",
	    "app", 2, 5), 0);
	assert_string_equal(buf, "/consumers/g1/offsets/app/2-5");
	assert_int_equal(klog_layout_offset_path(buf, sizeof(buf), "g1",
	    NULL, -1, -1), 0);
	assert_string_equal(buf, "/consumers/g1/offsets");
}

static void
test_paths_reject_bad_names(void **state)
{
	char buf[KLOG_ZK_PATH_MAX], small[12], long_name[300];

	(void)state;
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(klog_layout_topic_path(buf, sizeof(buf), "a/b"),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_layout_topic_path(buf, sizeof(buf), ".."),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_layout_topic_path(buf, sizeof(buf), ""),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_layout_topic_path(buf, sizeof(buf), long_name),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_layout_group_path(buf, sizeof(buf), "../x"),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_group_path(buf, sizeof(buf), "."),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_group_path(buf, sizeof(buf), "a b"),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_group_path(buf, sizeof(buf), long_name),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_offset_path(buf, sizeof(buf), "g",
	    "t/x", 1, 0), -KLOG_ETOPIC);
	assert_int_equal(klog_layout_offset_path(buf, sizeof(buf), "g/x",
	    "t", 1, 0), -KLOG_EINVAL);
	assert_int_equal(klog_layout_offset_path(buf, sizeof(buf), "g",
	    "t", 1, -1), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_path(buf, sizeof(buf), -1),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_member_path(buf, sizeof(buf), "g",
	    "a/b"), -KLOG_EINVAL);
	assert_int_equal(klog_layout_member_path(buf, sizeof(buf), "g",
	    ".."), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_path(small, sizeof(small), 1234),
	    -KLOG_ETOOBIG);
	assert_int_equal(klog_layout_group_validate("ok.Group_1-x", NULL), 0);
}

static void
test_broker_data(void **state)
{
	char buf[128], host[64];
	int port = 0;

	(void)state;
	assert_int_equal(klog_layout_broker_encode(buf, sizeof(buf),
	    "10.0.0.5", 9092, 1325376000000LL), 0);
	assert_string_equal(buf, "10.0.0.5-1325376000000:10.0.0.5:9092");
	assert_int_equal(klog_layout_broker_parse(buf, strlen(buf), host,
	    sizeof(host), &port), 0);
	assert_string_equal(host, "10.0.0.5");
	assert_int_equal(port, 9092);
	/* Readers use fields 1 and 2 only, whatever the creator id says. */
	assert_int_equal(klog_layout_broker_parse("x:b.example:1", 13, host,
	    sizeof(host), &port), 0);
	assert_string_equal(host, "b.example");
	assert_int_equal(port, 1);

	assert_int_equal(klog_layout_broker_encode(buf, sizeof(buf), "::1",
	    9092, 1), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_encode(buf, sizeof(buf), "h", 0,
	    1), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_encode(buf, 8, "host", 9092, 1),
	    -KLOG_ETOOBIG);
	assert_int_equal(klog_layout_broker_parse("h:9092", 6, host,
	    sizeof(host), &port), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_parse("c::9092", 7, host,
	    sizeof(host), &port), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_parse("c:h:", 4, host,
	    sizeof(host), &port), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_parse("c:h:0", 5, host,
	    sizeof(host), &port), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_parse("c:h:65536", 9, host,
	    sizeof(host), &port), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_parse("c:h:90a", 7, host,
	    sizeof(host), &port), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_parse("c:h:1:2", 7, host,
	    sizeof(host), &port), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_parse("c:longhost:1", 12, host,
	    4, &port), -KLOG_EINVAL);
	/* Found by fuzz_layout: a NUL cut the host short ("hos"). */
	assert_int_equal(klog_layout_broker_parse("c:hos\0t:5", 9, host,
	    sizeof(host), &port), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_parse("c:a b:5", 7, host,
	    sizeof(host), &port), -KLOG_EINVAL);
	assert_int_equal(klog_layout_broker_parse("c:\x7f:5", 5, host,
	    sizeof(host), &port), -KLOG_EINVAL);
}

static void
test_decimals(void **state)
{
	int32_t count;
	int64_t off;

	(void)state;
	assert_int_equal(klog_layout_count_parse("4", 1, &count), 0);
	assert_int_equal(count, 4);
	assert_int_equal(klog_layout_count_parse("2147483647", 10, &count),
	    0);
	assert_int_equal(count, INT32_MAX);
	assert_int_equal(klog_layout_count_parse("2147483648", 10, &count),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_count_parse("0", 1, &count),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_count_parse("-1", 2, &count),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_count_parse("04", 2, &count),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_count_parse(" 4", 2, &count),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_count_parse("", 0, &count),
	    -KLOG_EINVAL);

	assert_int_equal(klog_layout_offset_parse("123456", 6, &off), 0);
	assert_int_equal(off, 123456);
	assert_int_equal(klog_layout_offset_parse("0", 1, &off), 0);
	assert_int_equal(off, 0);
	assert_int_equal(klog_layout_offset_parse("9223372036854775807", 19,
	    &off), 0);
	assert_int_equal(off, INT64_MAX);
	assert_int_equal(klog_layout_offset_parse("9223372036854775808", 19,
	    &off), -KLOG_EINVAL);
	assert_int_equal(klog_layout_offset_parse("12\n", 3, &off),
	    -KLOG_EINVAL);
	/* The length bounds the parse: a node's data has no NUL. */
	assert_int_equal(klog_layout_offset_parse("129", 2, &off), 0);
	assert_int_equal(off, 12);
}

static void
test_member_json(void **state)
{
	klog_layout_sub_t in[2] = { { "t1", 2 }, { "t2", 1 } }, out[4];
	klog_buf_t b;
	size_t n = 0;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_layout_member_encode(&b, in, 2), 0);
	assert_int_equal(b.len, strlen("{ \"t1\": 2,\"t2\": 1 }"));
	assert_memory_equal(b.data, "{ \"t1\": 2,\"t2\": 1 }", b.len);
	assert_int_equal(klog_layout_member_parse((char *)b.data, b.len, out,
	    4, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].topic, "t1");
	assert_int_equal(out[0].streams, 2);
	assert_string_equal(out[1].topic, "t2");
	assert_int_equal(out[1].streams, 1);

	klog_buf_reset(&b);
	assert_int_equal(klog_layout_member_encode(&b, in + 1, 1), 0);
	assert_memory_equal(b.data, "{ \"t2\": 1 }", b.len);
	klog_buf_reset(&b);
	in[0].streams = 0;
	assert_int_equal(klog_layout_member_encode(&b, in, 1), -KLOG_EINVAL);
	strcpy(in[0].topic, "a/b");
	in[0].streams = 1;
	assert_int_equal(klog_layout_member_encode(&b, in, 1), -KLOG_ETOPIC);
	klog_buf_free(&b);

	assert_int_equal(klog_layout_member_parse("{\"x\":3}", 7, out, 4,
	    &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].topic, "x");
	assert_int_equal(out[0].streams, 3);
	assert_int_equal(klog_layout_member_parse("*2*app.*", 8, out, 4, &n),
	    -KLOG_EUNSUPPORTED);
	assert_int_equal(klog_layout_member_parse("!1!x", 4, out, 4, &n),
	    -KLOG_EUNSUPPORTED);
	assert_int_equal(klog_layout_member_parse("{ \"a\": 0 }", 10, out, 4,
	    &n), -KLOG_EINVAL);
	assert_int_equal(klog_layout_member_parse("{ \"a\": \"1\" }", 12, out,
	    4, &n), -KLOG_EINVAL);
	assert_int_equal(klog_layout_member_parse("{ \"a/b\": 1 }", 12, out,
	    4, &n), -KLOG_EINVAL);
	assert_int_equal(klog_layout_member_parse("{ \"a\": 1", 8, out, 4,
	    &n), -KLOG_EINVAL);
	assert_int_equal(klog_layout_member_parse("{ \"a\": 1,\"b\": 1 }", 17,
	    out, 1, &n), -KLOG_ETOOBIG);
	assert_int_equal(n, 0);
}

static void
test_ids(void **state)
{
	char buf[KLOG_LAYOUT_NAME_MAX + 1], thread[KLOG_LAYOUT_NAME_MAX + 8];
	const char *tail;

	(void)state;
	assert_int_equal(klog_layout_consumer_id(buf, sizeof(buf), "g",
	    "host.example", 1325376000000LL, 0xdeadbeef), 0);
	assert_string_equal(buf, "g_host.example-1325376000000-deadbeef");
	assert_int_equal(klog_layout_consumer_id(buf, sizeof(buf), "g",
	    "a_b/c", 1, 0x1), 0);
	assert_string_equal(buf, "g_a-b-c-1-00000001");
	assert_int_equal(klog_layout_consumer_id(buf, sizeof(buf), "a/b",
	    "h", 1, 1), -KLOG_EINVAL);
	assert_int_equal(klog_layout_thread_id(thread, sizeof(thread), buf,
	    3), 0);
	assert_string_equal(thread, "g_a-b-c-1-00000001-3");

	assert_int_equal(klog_layout_new_consumer_id(buf, sizeof(buf), "grp",
	    NULL), 0);
	assert_memory_equal(buf, "grp_", 4);
	tail = strrchr(buf, '-');
	assert_non_null(tail);
	assert_int_equal(strlen(tail + 1), 8);
	assert_int_equal(strspn(tail + 1, "0123456789abcdef"), 8);
}

static void
test_part_names(void **state)
{
	char buf[KLOG_LAYOUT_PART_NAME_MAX];
	int32_t b = -1, p = -1;

	(void)state;
	assert_int_equal(klog_layout_part_name(buf, sizeof(buf), 10, 3), 0);
	assert_string_equal(buf, "10-3");
	assert_int_equal(klog_layout_part_parse(buf, &b, &p), 0);
	assert_int_equal(b, 10);
	assert_int_equal(p, 3);
	assert_int_equal(klog_layout_part_name(buf, sizeof(buf), INT32_MAX,
	    INT32_MAX), 0);
	assert_int_equal(klog_layout_part_parse(buf, &b, &p), 0);
	assert_int_equal(b, INT32_MAX);
	assert_int_equal(klog_layout_part_name(buf, sizeof(buf), -1, 0),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_part_parse("01", &b, &p), -KLOG_EINVAL);
	assert_int_equal(klog_layout_part_parse("", &b, &p), -KLOG_EINVAL);
	assert_int_equal(klog_layout_part_parse("-1-0", &b, &p),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_part_parse("1-", &b, &p), -KLOG_EINVAL);
	assert_int_equal(klog_layout_part_parse("01-0", &b, &p),
	    -KLOG_EINVAL);
	assert_int_equal(klog_layout_part_parse("a-0", &b, &p), -KLOG_EINVAL);
	assert_int_equal(klog_layout_part_parse("1-0-0", &b, &p),
	    -KLOG_EINVAL);
}

/* A replicated topic's partitions are named by number ("<p>"), in the
 * group paths too, and sort numerically beside each other. */
static void
test_numbered_parts(void **state)
{
	char buf[128], a[] = "10", b2[] = "2", c[] = "1", d[] = "0";
	char *v[] = { a, b2, c, d };
	int32_t b = -1, p = -1;

	(void)state;
	assert_int_equal(klog_layout_part_name(buf, sizeof(buf),
	    KLOG_LAYOUT_NUMBERED, 7), 0);
	assert_string_equal(buf, "7");
	assert_int_equal(klog_layout_part_parse("7", &b, &p), 0);
	assert_int_equal(b, KLOG_LAYOUT_NUMBERED);
	assert_int_equal(p, 7);
	assert_int_equal(klog_layout_part_name(buf, sizeof(buf),
	    KLOG_LAYOUT_NUMBERED, -1), -KLOG_EINVAL);
	assert_int_equal(klog_layout_owner_path(buf, sizeof(buf), "g", "t",
	    KLOG_LAYOUT_NUMBERED, 3), 0);
	assert_string_equal(buf, "/consumers/g/owners/t/3");
	assert_int_equal(klog_layout_offset_path(buf, sizeof(buf), "g", "t",
	    KLOG_LAYOUT_NUMBERED, 12), 0);
	assert_string_equal(buf, "/consumers/g/offsets/t/12");
	assert_int_equal(klog_layout_offset_path(buf, sizeof(buf), "g", "t",
	    -1, 0), 0);
	assert_string_equal(buf, "/consumers/g/offsets/t");
	klog_layout_sort_names(v, 4);
	assert_string_equal(v[0], "0");
	assert_string_equal(v[1], "1");
	assert_string_equal(v[2], "2");
	assert_string_equal(v[3], "10");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_assign_every_size),
		cmocka_unit_test(test_assign_kafka_example),
		cmocka_unit_test(test_sort_as_strings),
		cmocka_unit_test(test_topic_parts_sorted),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_paths_reject_bad_names),
		cmocka_unit_test(test_broker_data),
		cmocka_unit_test(test_decimals),
		cmocka_unit_test(test_member_json),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_part_names),
		cmocka_unit_test(test_numbered_parts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
