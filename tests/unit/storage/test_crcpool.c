/*
 * Unit tests for the parallel CRC checks (lib/storage/crcpool.c) and the iterator's
 * KLOG_ITER_OUTER_CHECKED: a bad CRC anywhere, on either side of a cut,
 * is found with any number of workers, in one call or started and
 * finished apart; malformed and cut tails are left to the iterator;
 * messages inside wrappers are still checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/crcpool.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define PLEN 200
#define NMSG 8000   /* about 1.7 MB: well over KLOG_CRCPOOL_MIN_SPLIT */

static const int worker_counts[] = { 0, 1, 3 };

/* NMSG entries, with a gzip wrapper of 10 messages after entry wrap_at
 * (if >= 0); *len gets the size, *pos (if not NULL) each entry's start. */
static uint8_t *
build(size_t *len, int wrap_at, size_t *pos)
{
	uint8_t payload[PLEN], inner[10 * (PLEN + KLOG_MSG_OVERHEAD)];
	uint8_t *buf, *w = NULL;
	size_t off = 0, wlen = 0, ilen = 0;

	for (int i = 0; i < 10; i++) {
		memset(payload, 'a' + i, sizeof(payload));
		ilen += klog_entry_encode(inner + ilen, payload, sizeof(payload));
	}
	if (wrap_at >= 0)
		assert_int_equal(klog_gzip_wrap(inner, ilen, 6, &w, &wlen), 0);
	buf = malloc((size_t)NMSG * (PLEN + KLOG_MSG_OVERHEAD) + wlen);
	assert_non_null(buf);
	for (int i = 0; i < NMSG; i++) {
		if (pos != NULL)
			pos[i] = off;
		for (size_t j = 0; j < PLEN; j++)
			payload[j] = (uint8_t)(i * 31 + j);
		off += klog_entry_encode(buf + off, payload, sizeof(payload));
		if (i == wrap_at) {
			memcpy(buf + off, w, wlen);
			off += wlen;
		}
	}
	free(w);
	*len = off;
	return buf;
}

static void
test_all_good(void **state)
{
	klog_crcpool_t *v;
	size_t len;
	uint8_t *set = build(&len, NMSG / 2, NULL);

	(void)state;
	assert_true(len > KLOG_CRCPOOL_MIN_SPLIT);
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(klog_crcpool_new(worker_counts[k], &v), 0);
		for (int round = 0; round < 3; round++)
			assert_int_equal(klog_crcpool_crcs(v, set, len), 0);
		/* Small sets too, which the caller's thread checks alone. */
		assert_int_equal(klog_crcpool_crcs(v, set, 1000 * (PLEN + 9)),
		    0);
		assert_int_equal(klog_crcpool_crcs(v, set, 0), 0);
		klog_crcpool_free(v);
	}
	assert_int_equal(klog_crcpool_crcs(NULL, set, len), 0);
	free(set);
}

/* One flipped payload byte, at entries spread over every piece and next
 * to the cuts, is found whatever the worker count. */
static void
test_bad_crc_anywhere(void **state)
{
	static size_t pos[NMSG];
	/* Pieces of 64 KiB hold 314 of these entries. */
	const int at[] = { 0, 1, 313, 314, 315, 627, 628, 629, NMSG / 4,
	    NMSG / 2, 3 * NMSG / 4, NMSG - 2, NMSG - 1 };
	klog_crcpool_t *v;
	size_t len, p;
	uint8_t *set = build(&len, -1, pos);

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(klog_crcpool_new(worker_counts[k], &v), 0);
		for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
			p = pos[at[i]] + KLOG_MSG_OVERHEAD + PLEN / 2;
			set[p] ^= 0x40;
			assert_int_equal(klog_crcpool_crcs(v, set, len), 1);
			set[p] ^= 0x40;
			/* The stored CRC itself, too. */
			set[pos[at[i]] + 5] ^= 1;
			assert_int_equal(klog_crcpool_crcs(v, set, len), 1);
			set[pos[at[i]] + 5] ^= 1;
		}
		assert_int_equal(klog_crcpool_crcs(v, set, len), 0);
		klog_crcpool_free(v);
	}
	free(set);
}

/* Started, then finished after other work (the workers take pieces
 * meanwhile, the caller the rest), set after set. */
static void
test_start_then_finish(void **state)
{
	static size_t pos[NMSG];
	klog_crcpool_t *v;
	size_t len;
	uint8_t *set = build(&len, -1, pos), *copy = malloc(len);

	(void)state;
	assert_non_null(copy);
	memcpy(copy, set, len);
	copy[pos[NMSG - 1] + KLOG_MSG_OVERHEAD] ^= 1;
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(klog_crcpool_new(worker_counts[k], &v), 0);
		for (int round = 0; round < 4; round++) {
			klog_crcpool_start(v, round % 2 ? copy : set, len);
			if (round >= 2)
				usleep(2000);
			assert_int_equal(klog_crcpool_finish(v), round % 2);
		}
		/* Under the split size: the caller's alone, at finish. */
		klog_crcpool_start(v, copy + pos[NMSG - 5], len -
		    pos[NMSG - 5]);
		assert_int_equal(klog_crcpool_finish(v), 1);
		klog_crcpool_free(v);
	}
	free(copy);
	free(set);
}

/* A set of more than a thousand 64 KiB pieces: a bad CRC in the last
 * entry is still found. */
static void
test_huge_set(void **state)
{
	uint8_t payload[PLEN];
	size_t n = ((size_t)70 << 20) / (PLEN + KLOG_MSG_OVERHEAD), off = 0,
	    last = 0;
	uint8_t *set = malloc(n * (PLEN + KLOG_MSG_OVERHEAD));
	klog_crcpool_t *v;

	(void)state;
	assert_non_null(set);
	memset(payload, 'z', sizeof(payload));
	for (size_t i = 0; i < n; i++) {
		last = off;
		off += klog_entry_encode(set + off, payload, sizeof(payload));
	}
	assert_int_equal(klog_crcpool_new(1, &v), 0);
	assert_int_equal(klog_crcpool_crcs(v, set, off), 0);
	set[last + KLOG_MSG_OVERHEAD] ^= 1;
	assert_int_equal(klog_crcpool_crcs(v, set, off), 1);
	klog_crcpool_free(v);
	free(set);
}

/* A malformed entry stops the checks (the iterator reports it): a bad
 * CRC before it is found, one after it is not looked at. */
static void
test_malformed_and_cut(void **state)
{
	static size_t pos[NMSG];
	klog_crcpool_t *v;
	size_t len;
	uint8_t *set = build(&len, -1, pos);

	(void)state;
	assert_int_equal(klog_crcpool_new(1, &v), 0);
	set[pos[NMSG / 3] + 4] = 7;   /* an unknown magic byte */
	assert_int_equal(klog_crcpool_crcs(v, set, len), 0);
	set[pos[NMSG - 10] + KLOG_MSG_OVERHEAD] ^= 1;
	assert_int_equal(klog_crcpool_crcs(v, set, len), 0);
	set[pos[10] + KLOG_MSG_OVERHEAD] ^= 1;
	assert_int_equal(klog_crcpool_crcs(v, set, len), 1);
	set[pos[10] + KLOG_MSG_OVERHEAD] ^= 1;
	set[pos[NMSG / 3] + 4] = 0;
	assert_int_equal(klog_crcpool_crcs(v, set, len), 1);
	set[pos[NMSG - 10] + KLOG_MSG_OVERHEAD] ^= 1;
	/* A length past the end, and a cut last entry: left alone. */
	klog_put_be32(set + pos[NMSG / 2], 0x7fffffff);
	assert_int_equal(klog_crcpool_crcs(v, set, len), 0);
	klog_put_be32(set + pos[NMSG / 2], PLEN + 5);
	assert_int_equal(klog_crcpool_crcs(v, set, len - 7), 0);
	klog_crcpool_free(v);
	free(set);
}

/*
 * Sets of a few entries each, as a broker's read of many produce requests
 * is: pieces span sets, and a flip is found in the first, a middle and the
 * last set, at either end of a set; an empty set and a malformed one
 * change nothing.
 */
static void
test_many_sets(void **state)
{
	enum { NSETS = NMSG / 4 };
	static size_t pos[NMSG];
	static struct iovec iov[NSETS + 1];
	static const int flips[] = { 0, 3, NMSG / 2, NMSG / 2 + 3, NMSG - 4,
	    NMSG - 1 };
	klog_crcpool_t *v;
	size_t len;
	uint8_t *set = build(&len, -1, pos);

	(void)state;
	/* Sets of 4 entries; an empty one in the middle. */
	for (int i = 0; i < NSETS; i++)
		iov[i + (i >= NSETS / 2)] = (struct iovec){ set + pos[4 * i],
		    (i + 1 < NSETS ? pos[4 * i + 4] : len) - pos[4 * i] };
	iov[NSETS / 2] = (struct iovec){ set, 0 };
	for (size_t k = 0; k < sizeof(worker_counts) /
	    sizeof(worker_counts[0]); k++) {
		assert_int_equal(klog_crcpool_new(worker_counts[k], &v), 0);
		assert_int_equal(klog_crcpool_sets(v, iov, NSETS + 1), 0);
		for (size_t f = 0; f < sizeof(flips) / sizeof(flips[0]); f++) {
			set[pos[flips[f]] + KLOG_MSG_OVERHEAD] ^= 1;
			assert_int_equal(klog_crcpool_sets(v, iov, NSETS + 1),
			    1);
			assert_int_equal(klog_crcpool_sets(NULL, iov,
			    NSETS + 1), 1);
			set[pos[flips[f]] + KLOG_MSG_OVERHEAD] ^= 1;
		}
		/* A malformed entry ends the checks of its own set only. */
		set[pos[8] + 4] = 7;
		set[pos[NMSG - 2] + KLOG_MSG_OVERHEAD] ^= 1;
		assert_int_equal(klog_crcpool_sets(v, iov, NSETS + 1), 1);
		set[pos[NMSG - 2] + KLOG_MSG_OVERHEAD] ^= 1;
		set[pos[9] + KLOG_MSG_OVERHEAD] ^= 1;
		assert_int_equal(klog_crcpool_sets(v, iov, NSETS + 1), 0);
		set[pos[9] + KLOG_MSG_OVERHEAD] ^= 1;
		set[pos[8] + 4] = 0;
		assert_int_equal(klog_crcpool_sets(v, iov, 0), 0);
		klog_crcpool_free(v);
	}
	free(set);
}

/* klog_msgset_validate() with KLOG_ITER_OUTER_CHECKED: the top-level
 * CRCs are taken as checked, the lengths and magic still are not. */
static void
test_outer_checked_validate(void **state)
{
	static size_t pos[NMSG];
	klog_msgset_info_t info;
	size_t len;
	uint8_t *set = build(&len, 10, pos);

	(void)state;
	set[pos[20] + KLOG_MSG_OVERHEAD] ^= 1;
	assert_int_equal(klog_msgset_validate(set, len, KLOG_ITER_DEEP,
	    &info), -KLOG_ECORRUPT);
	assert_int_equal(klog_msgset_validate(set, len, KLOG_ITER_DEEP |
	    KLOG_ITER_OUTER_CHECKED, &info), 0);
	assert_int_equal(info.messages, NMSG + 10);
	set[pos[30] + 4] = 7;
	assert_int_equal(klog_msgset_validate(set, len, KLOG_ITER_DEEP |
	    KLOG_ITER_OUTER_CHECKED, &info), -KLOG_ECORRUPT);
	assert_int_equal(info.bad_offset, (int64_t)pos[30]);
	free(set);
}

/* KLOG_ITER_OUTER_CHECKED trusts the top level and nothing inside. */
static void
test_outer_checked_iteration(void **state)
{
	uint8_t payload[PLEN], inner[2 * (PLEN + KLOG_MSG_OVERHEAD)];
	uint8_t set[PLEN + KLOG_MSG_OVERHEAD];
	uint8_t *w;
	size_t ilen = 0, wlen;
	klog_iter_t it;
	klog_msg_t m;

	(void)state;
	memset(payload, 'x', sizeof(payload));
	klog_entry_encode(set, payload, sizeof(payload));
	set[KLOG_MSG_OVERHEAD] ^= 1;
	klog_iter_init(&it, set, sizeof(set), 0,
	    KLOG_ITER_DEEP | KLOG_ITER_OUTER_CHECKED, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.valid, 1);
	assert_int_equal(m.crc_computed, m.crc_stored);
	klog_iter_free(&it);
	/* The same flag does not vouch for a wrapper's inner messages. */
	for (int i = 0; i < 2; i++)
		ilen += klog_entry_encode(inner + ilen, payload,
		    sizeof(payload));
	inner[PLEN + KLOG_MSG_OVERHEAD + KLOG_MSG_OVERHEAD] ^= 1;
	assert_int_equal(klog_gzip_wrap(inner, ilen, 6, &w, &wlen), 0);
	klog_iter_init(&it, w, wlen, 0,
	    KLOG_ITER_DEEP | KLOG_ITER_OUTER_CHECKED, 0);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.depth, 1);
	assert_int_equal(m.valid, 1);
	assert_int_equal(klog_iter_next(&it, &m), 1);
	assert_int_equal(m.depth, 1);
	assert_int_equal(m.valid, 0);
	assert_int_equal(klog_iter_next(&it, &m), 0);
	klog_iter_free(&it);
	free(w);
}

/* Magic-2 entries carry a CRC-32C: a good one passes, a bad one is
 * found, on the caller's thread and on workers alike. */
static void
test_magic2(void **state)
{
	klog_batch_builder_t bb;
	klog_crcpool_t *v;
	klog_buf_t b;
	char value[64];
	size_t last = 0;

	(void)state;
	klog_buf_init(&b);
	for (int i = 0; i < 2000; i++) {
		snprintf(value, sizeof(value), "record %d of a batch", i);
		if (i % 100 == 0) {
			if (i > 0)
				assert_int_equal(klog_batch_end(&bb, &b), 0);
			last = b.len;
			klog_batch_begin(&bb, &b, 1000, KLOG_NO_PRODUCER, -1,
			    -1);
		}
		klog_batch_add(&bb, &b, &(klog_record_in_t){ value,
		    strlen(value), "k", 1, 1000 + i, NULL, 0 });
	}
	assert_int_equal(klog_batch_end(&bb, &b), 0);
	assert_int_equal(klog_crcpool_new(2, &v), 0);
	assert_int_equal(klog_crcpool_crcs(NULL, b.data, b.len), 0);
	assert_int_equal(klog_crcpool_crcs(v, b.data, b.len), 0);
	b.data[last + 60] ^= 1;
	assert_int_equal(klog_crcpool_crcs(NULL, b.data, b.len), 1);
	assert_int_equal(klog_crcpool_crcs(v, b.data, b.len), 1);
	klog_crcpool_free(v);
	klog_buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_good),
		cmocka_unit_test(test_bad_crc_anywhere),
		cmocka_unit_test(test_start_then_finish),
		cmocka_unit_test(test_huge_set),
		cmocka_unit_test(test_malformed_and_cut),
		cmocka_unit_test(test_outer_checked_iteration),
		cmocka_unit_test(test_many_sets),
		cmocka_unit_test(test_outer_checked_validate),
		cmocka_unit_test(test_magic2),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
