/* Unit tests for ZooKeeper's producer id block node as Kafka writes it
 * (lib/zk/pidblock.c): what is read, what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
