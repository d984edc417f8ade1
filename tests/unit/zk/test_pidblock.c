/* Unit tests for ZooKeeper's producer id block node as Kafka writes it
 * (lib/zk/pidblock.c): what is read, what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/error.h"
#include "klog/zk/pidblock.h"

static int
parse(const char *json, int32_t *broker, int64_t *start, int64_t *end)
{
	klog_err_t err = { 0 };

	return klog_pidblock_parse(json, strlen(json), broker, start, end,
	    &err);
}

static void
test_parse(void **state)
{
	int32_t b;
	int64_t s, e;

	(void)state;
	/* Kafka's own (strings), and numbers. */
	assert_int_equal(parse("{\"version\":1,\"broker\":3,\"block_start\":"
	    "\"1000\",\"block_end\":\"1999\"}", &b, &s, &e), 0);
	assert_int_equal(b, 3);
	assert_int_equal(s, 1000);
	assert_int_equal(e, 1999);
	assert_int_equal(parse(" {\"block_end\":9,\"block_start\":0,"
	    "\"version\":1,\"broker\":-1} ", &b, &s, &e), 0);
	assert_int_equal(e, 9);
	/* Refused: another version, a missing or bad bound, an end before
	 * the start, not JSON. */
	assert_int_equal(parse("{\"version\":2,\"broker\":3,\"block_start\":"
	    "\"0\",\"block_end\":\"9\"}", &b, &s, &e), -KLOG_EINVAL);
	assert_int_equal(parse("{\"version\":1,\"broker\":3,\"block_end\":"
	    "\"9\"}", &b, &s, &e), -KLOG_EINVAL);
	assert_int_equal(parse("{\"version\":1,\"broker\":3,\"block_start\":"
	    "\"x\",\"block_end\":\"9\"}", &b, &s, &e), -KLOG_EINVAL);
	assert_int_equal(parse("{\"version\":1,\"broker\":3,\"block_start\":"
	    "\"-5\",\"block_end\":\"9\"}", &b, &s, &e), -KLOG_EINVAL);
	assert_int_equal(parse("{\"version\":1,\"broker\":3,\"block_start\":"
	    "\"10\",\"block_end\":\"9\"}", &b, &s, &e), -KLOG_EINVAL);
	assert_int_equal(parse("{\"version\":1,\"broker\":3,\"block_start\":"
	    "true,\"block_end\":\"9\"}", &b, &s, &e), -KLOG_EINVAL);
	assert_int_equal(parse("[1]", &b, &s, &e), -KLOG_EINVAL);
	assert_int_equal(parse("", &b, &s, &e), -KLOG_EINVAL);
}

/* The block after the node's, and what is written for it. */
static void
test_next(void **state)
{
	const char *kafka = "{\"version\":1,\"broker\":3,\"block_start\":"
	    "\"1000\",\"block_end\":\"1999\"}";
	char json[KLOG_PIDBLOCK_JSON], big[160];
	klog_err_t err = { 0 };
	int64_t s, e;
	int32_t b;

	(void)state;
	/* No node yet: the first block. */
	assert_int_equal(klog_pidblock_next(NULL, 0, 7, &s, &e, json, &err),
	    0);
	assert_int_equal(s, 0);
	assert_int_equal(e, 1000);
	assert_string_equal(json, "{\"version\":1,\"broker\":7,"
	    "\"block_start\":\"0\",\"block_end\":\"999\"}");
	/* After Kafka's node; what is written reads back as the block. */
	assert_int_equal(klog_pidblock_next(kafka, strlen(kafka), 2, &s, &e,
	    json, &err), 0);
	assert_int_equal(s, 2000);
	assert_int_equal(e, 3000);
	assert_int_equal(parse(json, &b, &s, &e), 0);
	assert_int_equal(b, 2);
	assert_int_equal(s, 2000);
	assert_int_equal(e, 2999);
	/* A node without data, or not Kafka's, is never written over; ids
	 * used up are refused. */
	assert_int_equal(klog_pidblock_next("", 0, 2, &s, &e, json, &err),
	    -KLOG_EINVAL);
	snprintf(big, sizeof(big), "{\"version\":1,\"broker\":1,"
	    "\"block_start\":\"0\",\"block_end\":\"%lld\"}",
	    (long long)(INT64_MAX - 1000));
	assert_int_equal(klog_pidblock_next(big, strlen(big), 2, &s, &e, json,
	    &err), -KLOG_ERANGE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_next),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
