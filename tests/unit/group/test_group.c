#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/group/group.h"

/* Six partitions of three brokers, deliberately unsorted, and with a
 * broker id that sorts differently as a string ("10-0" < "2-0"). */
static char *parts_init[] = { "2-1", "10-0", "1-0", "2-0", "1-1", "10-1" };
static char *threads_init[] = { "g_c-0", "g_a-0", "g_b-0" };

static void
copy(char **dst, char *const *src, size_t n)
{
	memcpy(dst, src, n * sizeof(*src));
}

static void
test_plan_ranges(void **state)
{
	char *parts[6], *threads[3];
	size_t start, count;

	(void)state;
	copy(parts, parts_init, 6);
	copy(threads, threads_init, 3);
	assert_int_equal(klog_group_plan(parts, 6, threads, 3, "g_b-0",
	    &start, &count), 0);
	/* Sorted as strings, as Kafka does. */
	assert_string_equal(parts[0], "1-0");
	assert_string_equal(parts[2], "10-0");
	assert_string_equal(parts[5], "2-1");
	assert_string_equal(threads[1], "g_b-0");
	assert_int_equal(start, 2);
	assert_int_equal(count, 2);
	assert_string_equal(parts[start], "10-0");
	assert_string_equal(parts[start + 1], "10-1");
}

/* Every member's range together: disjoint, covering all, sizes differing
 * by one at most, the bigger ones first. */
static void
test_plan_cover(void **state)
{
	char *parts[6], *threads[4];
	char *members[] = { "m4-0", "m3-0", "m2-0", "m1-0" };
	char *sorted[] = { "m1-0", "m2-0", "m3-0", "m4-0" };
	size_t start, count, seen[6], prev = 99;

	(void)state;
	for (size_t c = 1; c <= 4; c++) {
		memset(seen, 0, sizeof(seen));
		prev = 99;
		for (size_t j = 0; j < c; j++) {
			copy(parts, parts_init, 6);
			/* The first c of them, handed over unsorted. */
			copy(threads, members + 4 - c, c);
			assert_int_equal(klog_group_plan(parts, 6, threads, c,
			    sorted[j], &start, &count), 0);
			assert_true(start + count <= 6);
			for (size_t k = start; k < start + count; k++)
				seen[k]++;
			assert_true(count == 6 / c || count == 6 / c + 1);
			assert_true(count <= prev);
			prev = count;
		}
		for (size_t k = 0; k < 6; k++)
			assert_int_equal(seen[k], 1);
	}
}

static void
test_plan_not_member(void **state)
{
	char *parts[6], *threads[3];
	size_t start = 7, count = 7;

	(void)state;
	copy(parts, parts_init, 6);
	copy(threads, threads_init, 3);
	assert_int_equal(klog_group_plan(parts, 6, threads, 3, "g_x-0",
	    &start, &count), -KLOG_ENOENT);
	assert_int_equal(count, 0);
	/* More members than partitions: the last ones get nothing. */
	copy(threads, threads_init, 3);
	assert_int_equal(klog_group_plan(parts, 2, threads, 3, "g_c-0",
	    &start, &count), 0);
	assert_int_equal(count, 0);
	assert_int_equal(klog_group_plan(parts, 0, threads, 3, "g_a-0",
	    &start, &count), 0);
	assert_int_equal(count, 0);
}

static void
test_diff(void **state)
{
	char *old[] = { "1-0", "2-1", "3-0" };
	char *new_[] = { "3-0", "1-1", "1-0", "4-0" };
	unsigned char release[3], claim[4];

	(void)state;
	memset(release, 9, sizeof(release));
	memset(claim, 9, sizeof(claim));
	klog_group_diff(old, 3, new_, 4, release, claim);
	assert_int_equal(release[0], 0);
	assert_int_equal(release[1], 1);
	assert_int_equal(release[2], 0);
	assert_int_equal(claim[0], 0);
	assert_int_equal(claim[1], 1);
	assert_int_equal(claim[2], 0);
	assert_int_equal(claim[3], 1);
	/* Nothing owned yet: claim all; nothing assigned: release all. */
	klog_group_diff(NULL, 0, new_, 4, release, claim);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(claim[i], 1);
	klog_group_diff(old, 3, NULL, 0, release, claim);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(release[i], 1);
}

/* A rebalance from two members to three: what each one releases is
 * exactly what the others claim. */
static void
test_diff_handover(void **state)
{
	char *two[] = { "a-0", "b-0" }, *three[] = { "a-0", "b-0", "c-0" };
	char *parts[6], *t[3], *before[2][6], *after[3][6];
	size_t nbefore[2], nafter[3], start, count, released = 0,
	    claimed = 0;
	unsigned char rel[6], cl[6];

	(void)state;
	for (size_t j = 0; j < 2; j++) {
		copy(parts, parts_init, 6);
		copy(t, two, 2);
		klog_group_plan(parts, 6, t, 2, two[j], &start, &count);
		copy(before[j], parts + start, count);
		nbefore[j] = count;
	}
	for (size_t j = 0; j < 3; j++) {
		copy(parts, parts_init, 6);
		copy(t, three, 3);
		klog_group_plan(parts, 6, t, 3, three[j], &start, &count);
		copy(after[j], parts + start, count);
		nafter[j] = count;
	}
	for (size_t j = 0; j < 2; j++) {
		klog_group_diff(before[j], nbefore[j], after[j], nafter[j],
		    rel, cl);
		for (size_t i = 0; i < nbefore[j]; i++)
			released += rel[i];
		for (size_t i = 0; i < nafter[j]; i++)
			claimed += cl[i];
	}
	klog_group_diff(NULL, 0, after[2], nafter[2], rel, cl);
	for (size_t i = 0; i < nafter[2]; i++)
		claimed += cl[i];
	assert_int_equal(released, claimed);
	assert_int_equal(nafter[2], 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_ranges),
		cmocka_unit_test(test_plan_cover),
		cmocka_unit_test(test_plan_not_member),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_diff_handover),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
