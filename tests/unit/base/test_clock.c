/* Unit tests for lib/base/clock.c: the clocks' units and the sleep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "klog/base/clock.h"

static int64_t
raw_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
test_ts_ms(void **state)
{
	struct timespec ts = { 1700000000, 999999999 };

	(void)state;
	assert_int_equal(klog_clock_ts_ms(&ts), 1700000000999LL);
	ts.tv_sec = 0;
	ts.tv_nsec = 999999;
	assert_int_equal(klog_clock_ts_ms(&ts), 0);
	ts.tv_nsec = 1000000;
	assert_int_equal(klog_clock_ts_ms(&ts), 1);
}

/* Each clock reads what clock_gettime() says, in its unit. */
static void
test_units(void **state)
{
	int64_t before, got, after;

	(void)state;
	before = raw_ms(CLOCK_MONOTONIC);
	got = klog_clock_mono_ms();
	after = raw_ms(CLOCK_MONOTONIC);
	assert_true(before <= got && got <= after);

	before = raw_ms(CLOCK_MONOTONIC);
	got = klog_clock_mono_ns() / 1000000;
	after = raw_ms(CLOCK_MONOTONIC);
	assert_true(before <= got && got <= after);

	before = raw_ms(CLOCK_REALTIME);
	got = klog_clock_wall_ms();
	after = raw_ms(CLOCK_REALTIME);
	assert_true(before <= got && got <= after);
	/* Since the epoch: after 2020. */
	assert_true(got > 1577836800000LL);
}

static void
test_sleep(void **state)
{
	int64_t start;

	(void)state;
	start = klog_clock_mono_ns();
	klog_clock_sleep_ms(20);
	assert_true(klog_clock_mono_ns() - start >= 20 * 1000000LL);
	start = klog_clock_mono_ms();
	klog_clock_sleep_ms(0);
	klog_clock_sleep_ms(-5);
	assert_true(klog_clock_mono_ms() - start < 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ts_ms),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_sleep),
	};

	return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
