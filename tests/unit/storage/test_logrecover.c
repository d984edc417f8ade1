/*
 * Unit tests for the partition log's recovery at open: the scan that cuts
 * a torn or corrupt tail (recover_tail in lib/storage/log.c) and where it
 * starts, the recovery point (lib/storage/logpoint.c).
 */
#include <sys/types.h>

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define DIRFX_NAME "logrecover"
#include "fx/dirfx.h"
#include "fx/logfx.h"

/* ---- recovery ---- */

/* Write 3 valid sets, add tail, reopen with recovery; check the cut. */
static void
recover_with_tail(const char *dir, const void *tail, size_t tlen)
{
	char path[PATH_MAX];
	size_t esz = klog_entry_size(30);
	klog_log_t *log = open_log(dir, 0, 0);

	append(log, 0, 2, 30);
	append(log, 2, 2, 30);
	append(log, 4, 2, 30);
	flush(log);
	klog_log_close(log);
	seg_file(path, sizeof(path), dir, 0, ".klog");
	append_file(path, tail, tlen);

	/* Without recovery the tail is taken as it is. */
	log = open_log(dir, 0, 0);
	assert_int_equal(klog_log_end(log), (int64_t)(6 * esz + tlen));
	assert_int_equal(klog_log_recovered_bytes(log), 0);
	klog_log_close(log);

	log = open_log(dir, 0, 1);
	assert_int_equal(klog_log_end(log), (int64_t)(6 * esz));
	assert_int_equal(klog_log_flushed_end(log), (int64_t)(6 * esz));
	assert_int_equal(klog_log_recovered_bytes(log), (int64_t)tlen);
	assert_int_equal(file_size(path), (off_t)(6 * esz));
	assert_int_equal(check_contents(log, 30), 6);
	/* Appends continue at the cut. */
	assert_int_equal(append(log, 6, 1, 30), (int64_t)(6 * esz));
	flush(log);
	assert_int_equal(check_contents(log, 30), 7);
	klog_log_close(log);

	/* A second recovery finds nothing to cut. */
	log = open_log(dir, 0, 1);
	assert_int_equal(klog_log_recovered_bytes(log), 0);
	klog_log_close(log);
}

static void
test_recover_garbage(void **state)
{
	struct fixture *f = *state;
	uint8_t junk[37];

	memset(junk, 0x5a, sizeof(junk));
	recover_with_tail(f->dir, junk, sizeof(junk));
}

static void
test_recover_half_entry(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256];
	size_t len = make_set(buf, 9, 1, 30);

	recover_with_tail(f->dir, buf, len / 2);
}

static void
test_recover_short_tail(void **state)
{
	struct fixture *f = *state;
	uint8_t two[2] = { 0, 0 };

	recover_with_tail(f->dir, two, sizeof(two));
}

static void
test_recover_crc(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256];
	size_t len = make_set(buf, 9, 2, 30);

	buf[klog_entry_size(30) + 12] ^= 0x40;  /* second entry's payload */
	/* Only the bad entry and what follows it go. */
	{
		char path[PATH_MAX];
		size_t esz = klog_entry_size(30);
		klog_log_t *log = open_log(f->dir, 0, 0);

		append(log, 0, 6, 30);
		klog_log_close(log);
		seg_file(path, sizeof(path), f->dir, 0, ".klog");
		append_file(path, buf, len);
		log = open_log(f->dir, 0, 1);
		assert_int_equal(klog_log_end(log), (int64_t)(7 * esz));
		assert_int_equal(klog_log_recovered_bytes(log), (int64_t)esz);
		klog_log_close(log);
	}
}

static void
test_recover_bad_magic(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256];
	size_t len = make_set(buf, 9, 1, 30);

	buf[4] = 9;
	recover_with_tail(f->dir, buf, len);
}

/* Entries across the 1 MiB chunk edges, and entries larger than a chunk. */
static void
test_recover_chunks(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	size_t big = (3u << 20) / 2, len;
	uint8_t *payload = malloc(big), *buf = malloc(klog_entry_size(big));
	klog_log_t *log = open_log(f->dir, 0, 0);
	int64_t valid;
	uint8_t junk[100];

	assert_non_null(payload);
	assert_non_null(buf);
	for (uint32_t i = 0; i < 30; i++)
		append(log, i * 100, 100, 997);  /* ~3 MiB, odd sizes */
	for (size_t i = 0; i < big; i++)
		payload[i] = (uint8_t)(i * 13);
	len = klog_entry_encode(buf, payload, big);
	assert_int_equal(klog_log_append(log, buf, len, 1, NULL, NULL), 0);
	append(log, 3000, 3, 997);
	valid = klog_log_end(log);
	klog_log_close(log);

	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	memset(junk, 0xee, sizeof(junk));
	append_file(path, junk, sizeof(junk));
	log = open_log(f->dir, 0, 1);
	assert_int_equal(klog_log_end(log), valid);
	assert_int_equal(klog_log_recovered_bytes(log), 100);
	klog_log_close(log);

	/* A large entry with a bad CRC at its very end is cut whole. */
	buf[len - 1] ^= 1;
	append_file(path, buf, len);
	log = open_log(f->dir, 0, 1);
	assert_int_equal(klog_log_end(log), valid);
	assert_int_equal(klog_log_recovered_bytes(log), (int64_t)len);
	klog_log_close(log);

	/* A large entry cut by the end of the file is cut whole. */
	buf[len - 1] ^= 1;
	append_file(path, buf, len - 10);
	log = open_log(f->dir, 0, 1);
	assert_int_equal(klog_log_end(log), valid);
	assert_int_equal(klog_log_recovered_bytes(log), (int64_t)len - 10);
	klog_log_close(log);

	/* A valid large entry last is kept. */
	append_file(path, buf, len);
	log = open_log(f->dir, 0, 1);
	assert_int_equal(klog_log_end(log), valid + (int64_t)len);
	assert_int_equal(klog_log_recovered_bytes(log), 0);
	klog_log_close(log);
	free(payload);
	free(buf);
}

/* Only the last segment is scanned: corruption in an older one is not
 * looked for at open. */
static void
test_recover_last_only(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	uint8_t junk[4] = { 0xff, 0xff, 0xff, 0xff };
	klog_log_t *log = open_log(f->dir, 1000, 0);
	int fd;

	for (uint32_t i = 0; i < 4; i++)
		append(log, i * 5, 5, 91);
	klog_log_close(log);
	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, junk, 4, 100), 4);
	close(fd);
	log = open_log(f->dir, 1000, 1);
	assert_int_equal(klog_log_end(log), 2000);
	assert_int_equal(klog_log_recovered_bytes(log), 0);
	klog_log_close(log);
}

/* ---- recovery from the recovery point ---- */

/*
 * A roll while the old segment's tail was not synced, and that tail lost
 * (zeros, as a failed write-back reads back): recovery starts at the
 * recovery point, finds the zeros in the sealed segment, cuts there and
 * sets the newer segment aside whole.  Before the point, recovery scanned
 * the last segment only and kept the zeros in the middle of the log.
 */
static void
test_recover_from_point(void **state)
{
	struct fixture *f = *state;
	uint8_t zeros[100] = { 0 };
	char names[256], path[PATH_MAX];
	klog_log_t *log = open_log(f->dir, 1000, 0);
	int fd;

	append_each(log, 0, 9);            /* 900 bytes, synced */
	flush(log);
	assert_int_equal(read_rp(f->dir), 0);
	append_each(log, 9, 3);            /* 900..1000, roll, 1000..1200 */
	assert_int_equal(klog_log_segment_count(log), 2);
	klog_log_close(log);               /* a crash: nothing synced */
	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	assert_true((fd = open(path, O_WRONLY)) >= 0);
	assert_int_equal(pwrite(fd, zeros, sizeof(zeros), 900), 100);
	close(fd);
	log = open_log(f->dir, 1000, 1);
	assert_int_equal(klog_log_end(log), 900);
	assert_int_equal(klog_log_segment_count(log), 1);
	assert_int_equal(klog_log_recovered_bytes(log), 300);
	assert_non_null(strstr(klog_log_salvage_path(log),
	    "00000000000000000900.salvage"));
	part_names(f->dir, names, sizeof(names));
	assert_string_equal(names, "00000000000000000000.klog "
	    "00000000000000000900.salvage 00000000000000001000.salvage "
	    "recovery-point");
	/* It goes on from the cut. */
	assert_int_equal(append(log, 9, 1, 91), 900);
	flush(log);
	assert_int_equal(check_contents(log, 91), 10);
	klog_log_close(log);
}

/* The point moves with the flushes past a roll, so recovery does not
 * scan segments synced whole; a missing point scans the last segment
 * only, as before there was one. */
static void
test_recovery_point_moves(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_log_t *log = open_log(f->dir, 1000, 0);

	append_each(log, 0, 25);           /* 0, 1000, 2000 (500 bytes) */
	flush(log);
	assert_int_equal(read_rp(f->dir), 2000);
	append_each(log, 25, 5);           /* 2500..3000 */
	flush(log);
	assert_int_equal(read_rp(f->dir), 2000);
	append_each(log, 30, 1);           /* rolls to 3000 */
	flush(log);
	assert_int_equal(read_rp(f->dir), 3000);
	klog_log_close(log);
	snprintf(path, sizeof(path), "%s/" TOPIC "-0/recovery-point", f->dir);
	assert_int_equal(unlink(path), 0);
	log = open_log(f->dir, 1000, 1);
	assert_int_equal(klog_log_end(log), 3100);
	assert_int_equal(klog_log_recovered_bytes(log), 0);
	flush(log);
	assert_int_equal(read_rp(f->dir), 3000);
	klog_log_close(log);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_recover_garbage),
		T(test_recover_half_entry),
		T(test_recover_short_tail),
		T(test_recover_crc),
		T(test_recover_bad_magic),
		T(test_recover_chunks),
		T(test_recover_last_only),
		T(test_recover_from_point),
		T(test_recovery_point_moves),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
