/* Unit tests for a partition's idempotent producers (lib/storage/pstate.c):
 * every verdict, the five batches kept, the wrap, cuts and expiry. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/format.h"
#include "klog/storage/pstate.h"
#include "klog/storage/record.h"

static klog_batch_t
batch(int64_t pid, int16_t epoch, int32_t seq, int32_t count)
{
	return (klog_batch_t){ .producer_id = pid, .producer_epoch = epoch,
	    .base_sequence = seq, .count = count, .max_timestamp = 1000 };
}

static klog_pstate_t *
fresh(void)
{
	klog_pstate_t *ps = NULL;

	assert_int_equal(klog_pstate_new(&ps), 0);
	return ps;
}

/* Check b, expecting APPEND, and record it at offset (10 bytes long). */
static void
append(klog_pstate_t *ps, klog_batch_t b, int64_t offset)
{
	assert_int_equal(klog_pstate_check(ps, &b, NULL), KLOG_PSTATE_APPEND);
	assert_int_equal(klog_pstate_update(ps, &b, offset, offset + 9), 0);
}

static void
test_unknown_producer(void **state)
{
	klog_pstate_t *ps = fresh();
	klog_batch_t b = batch(7, 0, 5, 1);

	(void)state;
	assert_int_equal(klog_pstate_check(ps, &b, NULL), KLOG_PSTATE_UNKNOWN);
	b = batch(7, 3, 0, 4);
	append(ps, b, 0);
	assert_non_null(klog_pstate_get(ps, 7));
	assert_null(klog_pstate_get(ps, 8));
	klog_pstate_free(ps);
}

static void
test_in_sequence_and_gap(void **state)
{
	klog_pstate_t *ps = fresh();
	klog_batch_t b;

	(void)state;
	append(ps, batch(1, 0, 0, 3), 0);
	append(ps, batch(1, 0, 3, 2), 10);
	b = batch(1, 0, 6, 1);      /* 5 is missing */
	assert_int_equal(klog_pstate_check(ps, &b, NULL),
	    KLOG_PSTATE_OUT_OF_ORDER);
	b = batch(1, 0, 4, 1);      /* overlaps the last one */
	assert_int_equal(klog_pstate_check(ps, &b, NULL),
	    KLOG_PSTATE_OUT_OF_ORDER);
	append(ps, batch(1, 0, 5, 1), 20);
	klog_pstate_free(ps);
}

static void
test_duplicates_of_last_five(void **state)
{
	klog_pstate_t *ps = fresh();
	klog_pstate_batch_t dup;
	klog_batch_t b;

	(void)state;
	for (int i = 0; i < 7; i++)
		append(ps, batch(1, 0, i * 2, 2), i * 100);
	/* The last five (sequences 4..13) are kept: each is a duplicate,
	 * answered with its own offsets. */
	for (int i = 2; i < 7; i++) {
		b = batch(1, 0, i * 2, 2);
		assert_int_equal(klog_pstate_check(ps, &b, &dup),
		    KLOG_PSTATE_DUPLICATE);
		assert_int_equal(dup.offset, i * 100);
		assert_int_equal(dup.last_offset, i * 100 + 9);
		assert_int_equal(dup.first_seq, i * 2);
		assert_int_equal(dup.last_seq, i * 2 + 1);
	}
	/* Older ones are out of order, as in Kafka. */
	b = batch(1, 0, 2, 2);
	assert_int_equal(klog_pstate_check(ps, &b, NULL),
	    KLOG_PSTATE_OUT_OF_ORDER);
	/* Same first sequence, another length: not a duplicate. */
	b = batch(1, 0, 12, 1);
	assert_int_equal(klog_pstate_check(ps, &b, NULL),
	    KLOG_PSTATE_OUT_OF_ORDER);
	assert_int_equal(klog_pstate_get(ps, 1)->n, KLOG_PSTATE_BATCHES);
	klog_pstate_free(ps);
}

static void
test_epochs(void **state)
{
	klog_pstate_t *ps = fresh();
	klog_batch_t b;

	(void)state;
	append(ps, batch(1, 2, 0, 5), 0);
	b = batch(1, 1, 5, 1);
	assert_int_equal(klog_pstate_check(ps, &b, NULL), KLOG_PSTATE_FENCED);
	b = batch(1, 3, 5, 1);
	assert_int_equal(klog_pstate_check(ps, &b, NULL),
	    KLOG_PSTATE_OUT_OF_ORDER);
	append(ps, batch(1, 3, 0, 1), 10);
	/* The new epoch's history starts again: the old epoch's batch is
	 * no duplicate, and the old epoch is fenced. */
	assert_int_equal(klog_pstate_get(ps, 1)->n, 1);
	b = batch(1, 2, 0, 5);
	assert_int_equal(klog_pstate_check(ps, &b, NULL), KLOG_PSTATE_FENCED);
	klog_pstate_free(ps);
}

static void
test_wrap(void **state)
{
	klog_pstate_t *ps = fresh();
	klog_batch_t b;

	(void)state;
	assert_int_equal(klog_pstate_last_seq(0, 1), 0);
	assert_int_equal(klog_pstate_last_seq(10, 5), 14);
	assert_int_equal(klog_pstate_last_seq(INT32_MAX, 1), INT32_MAX);
	assert_int_equal(klog_pstate_last_seq(INT32_MAX - 1, 3), 0);
	assert_int_equal(klog_pstate_last_seq(INT32_MAX, 3), 1);
	append(ps, batch(1, 0, 0, 1), 0);
	/* A state restored at INT32_MAX - 2: put a producer there. */
	klog_pstate_producer_t p = { .id = 2, .n = 1, .b[0] = { 0,
	    INT32_MAX - 2, 0, 0, 9 } };
	assert_int_equal(klog_pstate_put(ps, &p), 0);
	assert_int_equal(klog_pstate_put(ps, &p), -KLOG_EEXIST);
	append(ps, batch(2, 0, INT32_MAX - 1, 2), 10);
	assert_int_equal(klog_pstate_get(ps, 2)->b[1].last_seq, INT32_MAX);
	b = batch(2, 0, 1, 1);
	assert_int_equal(klog_pstate_check(ps, &b, NULL),
	    KLOG_PSTATE_OUT_OF_ORDER);
	append(ps, batch(2, 0, 0, 3), 20);
	append(ps, batch(2, 0, 3, 1), 30);
	/* A batch that wraps inside itself. */
	p = (klog_pstate_producer_t){ .id = 3, .n = 1, .b[0] = { 0,
	    INT32_MAX - 5, 0, 0, 9 } };
	assert_int_equal(klog_pstate_put(ps, &p), 0);
	append(ps, batch(3, 0, INT32_MAX - 4, 10), 40);
	assert_int_equal(klog_pstate_get(ps, 3)->b[1].last_seq, 4);
	append(ps, batch(3, 0, 5, 1), 50);
	klog_pstate_free(ps);
}

static void
test_invalid(void **state)
{
	klog_pstate_t *ps = fresh();
	klog_batch_t b;

	(void)state;
	b = batch(1, -1, 0, 1);
	assert_int_equal(klog_pstate_check(ps, &b, NULL), KLOG_PSTATE_INVALID);
	b = batch(1, 0, -1, 1);
	assert_int_equal(klog_pstate_check(ps, &b, NULL), KLOG_PSTATE_INVALID);
	b = batch(1, 0, 0, 0);
	assert_int_equal(klog_pstate_check(ps, &b, NULL), KLOG_PSTATE_INVALID);
	klog_pstate_free(ps);
}

static void
test_truncate(void **state)
{
	klog_pstate_t *ps = fresh();
	klog_batch_t b;

	(void)state;
	append(ps, batch(1, 0, 0, 1), 0);
	append(ps, batch(2, 0, 0, 1), 10);
	append(ps, batch(1, 0, 1, 1), 20);
	append(ps, batch(2, 0, 1, 1), 30);
	klog_pstate_truncate(ps, 20);
	assert_int_equal(klog_pstate_get(ps, 1)->n, 1);
	assert_int_equal(klog_pstate_get(ps, 2)->n, 1);
	b = batch(1, 0, 1, 1);       /* cut: welcome again */
	assert_int_equal(klog_pstate_check(ps, &b, NULL), KLOG_PSTATE_APPEND);
	klog_pstate_truncate(ps, 10);
	assert_null(klog_pstate_get(ps, 2));
	assert_non_null(klog_pstate_get(ps, 1));
	assert_int_equal(klog_pstate_count(ps), 1);
	klog_pstate_truncate(ps, INT64_MIN);
	assert_int_equal(klog_pstate_count(ps), 0);
	klog_pstate_free(ps);
}

static void
test_expire(void **state)
{
	klog_pstate_t *ps = fresh();
	klog_batch_t b = batch(1, 0, 0, 1);

	(void)state;
	b.max_timestamp = 1000;
	assert_int_equal(klog_pstate_update(ps, &b, 0, 9), 0);
	b = batch(2, 0, 0, 1);
	b.max_timestamp = 5000;
	assert_int_equal(klog_pstate_update(ps, &b, 10, 19), 0);
	klog_pstate_expire(ps, 6000, 1000);
	assert_null(klog_pstate_get(ps, 1));
	assert_non_null(klog_pstate_get(ps, 2));
	klog_pstate_expire(ps, 6001, 1000);
	assert_int_equal(klog_pstate_count(ps), 0);
	klog_pstate_free(ps);
}

static void
test_many_producers(void **state)
{
	klog_pstate_t *ps = fresh();
	const klog_pstate_producer_t *p;
	size_t pos = 0, seen = 0;

	(void)state;
	for (int64_t id = 0; id < 20000; id++)
		append(ps, batch(id * 1000003, 0, 0, 1), id * 10);
	assert_int_equal(klog_pstate_count(ps), 20000);
	for (int64_t id = 0; id < 20000; id++) {
		p = klog_pstate_get(ps, id * 1000003);
		assert_non_null(p);
		assert_int_equal(p->b[0].offset, id * 10);
	}
	while (klog_pstate_next(ps, &pos) != NULL)
		seen++;
	assert_int_equal(seen, 20000);
	klog_pstate_truncate(ps, 100000);
	assert_int_equal(klog_pstate_count(ps), 10000);
	assert_non_null(klog_pstate_get(ps, 9999 * 1000003LL));
	assert_null(klog_pstate_get(ps, 10000 * 1000003LL));
	klog_pstate_free(ps);
}

/* A magic-2 entry of producer pid (or none: -1) with one record. */
static void
entry(klog_buf_t *out, int64_t pid, int32_t seq)
{
	klog_batch_builder_t bb;

	klog_batch_begin(&bb, out, 1000, pid, pid < 0 ? -1 : 0,
	    pid < 0 ? -1 : seq);
	klog_batch_add(&bb, out, &(klog_record_in_t){ "v", 1, "k", 1, 1000,
	    NULL,
	    0 });
	assert_int_equal(klog_batch_end(&bb, out), 0);
}

static void
test_entries(void **state)
{
	klog_pstate_t *ps = fresh();
	klog_buf_t set;
	klog_batch_t b;
	size_t one;

	(void)state;
	klog_buf_init(&set);
	entry(&set, 42, 0);
	one = set.len;
	assert_int_equal(klog_pstate_entry(set.data, set.len, &b), 1);
	assert_int_equal(b.producer_id, 42);
	assert_int_equal(b.count, 1);
	entry(&set, 42, 1);
	/* Two batches in one set: refused, as Kafka refuses them. */
	assert_int_equal(klog_pstate_entry(set.data, set.len, &b),
	    -KLOG_ECORRUPT);
	klog_buf_put(&set, "\0\0\0\6\0\0\0\0\0x", 10);   /* a magic-0 entry */
	entry(&set, -1, 0);
	entry(&set, 43, 0);
	assert_int_equal(klog_pstate_update_set(ps, set.data, set.len, 1000),
	    0);
	assert_int_equal(klog_pstate_count(ps), 2);
	assert_int_equal(klog_pstate_get(ps, 42)->n, 2);
	assert_int_equal(klog_pstate_get(ps, 42)->b[0].offset, 1000);
	assert_int_equal(klog_pstate_get(ps, 42)->b[0].last_offset,
	    1000 + (int64_t)one - 1);
	assert_int_equal(klog_pstate_get(ps, 42)->b[1].offset,
	    1000 + (int64_t)one);
	/* Not producer batches. */
	assert_int_equal(klog_pstate_entry(set.data + 2 * one, 10, &b), 0);
	assert_int_equal(klog_pstate_entry(set.data + 2 * one + 10, one, &b),
	    0);
	assert_int_equal(klog_pstate_entry(set.data, 3, &b), 0);
	klog_buf_free(&set);
	klog_pstate_free(ps);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_producer),
		cmocka_unit_test(test_in_sequence_and_gap),
		cmocka_unit_test(test_duplicates_of_last_five),
		cmocka_unit_test(test_epochs),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_truncate),
		cmocka_unit_test(test_expire),
		cmocka_unit_test(test_many_producers),
		cmocka_unit_test(test_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
