/*
 * Unit tests for lib/client/renumber.c: send numbers mapped to another
 * count across records set aside, and a request's numbers cut where the
 * counts part.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "klog/client/renumber.h"

/* No record set aside: the same numbers, one run. */
static void
test_none(void **state)
{
	klog_renumber_t r = { 0 };

	(void)state;
	assert_int_equal(klog_renumber_from(&r, 1, 0), 0);
	assert_int_equal(r.n, 0);
	assert_int_equal(klog_renumber_map(&r, 1), 1);
	assert_int_equal(klog_renumber_map(&r, 1000), 1000);
	assert_int_equal(klog_renumber_run_end(&r, 1, 50), 50);
	klog_renumber_free(&r);
}

/* Records 3 and 7..8 of the other count set aside: send numbers 1, 2 are
 * 1, 2; 3..5 are 4..6; 6 on are 9 on.  An unchanged delta adds no gap. */
static void
test_gaps(void **state)
{
	klog_renumber_t r = { 0 };

	(void)state;
	assert_int_equal(klog_renumber_from(&r, 3, 1), 0);
	assert_int_equal(klog_renumber_from(&r, 4, 1), 0);
	assert_int_equal(klog_renumber_from(&r, 6, 3), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(klog_renumber_map(&r, 1), 1);
	assert_int_equal(klog_renumber_map(&r, 2), 2);
	assert_int_equal(klog_renumber_map(&r, 3), 4);
	assert_int_equal(klog_renumber_map(&r, 5), 6);
	assert_int_equal(klog_renumber_map(&r, 6), 9);
	assert_int_equal(klog_renumber_map(&r, 100), 103);
	/* Send numbers 1..9 (end 10) in runs one delta maps. */
	assert_int_equal(klog_renumber_run_end(&r, 1, 10), 3);
	assert_int_equal(klog_renumber_run_end(&r, 3, 10), 6);
	assert_int_equal(klog_renumber_run_end(&r, 6, 10), 10);
	assert_int_equal(klog_renumber_run_end(&r, 4, 5), 5);
	klog_renumber_free(&r);
	assert_null(r.gaps);
}

/* Past the first allocation: every gap kept, found by the search. */
static void
test_many(void **state)
{
	klog_renumber_t r = { 0 };

	(void)state;
	for (uint64_t i = 1; i <= 1000; i++)
		assert_int_equal(klog_renumber_from(&r, 2 * i, i), 0);
	assert_int_equal(r.n, 1000);
	assert_int_equal(klog_renumber_map(&r, 1), 1);
	assert_int_equal(klog_renumber_map(&r, 2), 3);
	assert_int_equal(klog_renumber_map(&r, 3), 4);
	assert_int_equal(klog_renumber_map(&r, 1999), 1999 + 999);
	assert_int_equal(klog_renumber_map(&r, 5000), 6000);
	assert_int_equal(klog_renumber_run_end(&r, 1001, 5000), 1002);
	klog_renumber_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_gaps),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
