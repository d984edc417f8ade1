/*
 * Unit tests for the partition log's segments seen whole
 * (lib/storage/logretain.c): OFFSETS before a time, retention by age and by
 * size, and the rescan that follows segments deleted behind the log, by a
 * read or an OFFSETS as by klog_log_rescan().
 */
#include <sys/stat.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define DIRFX_NAME "logretain"
#include "fx/dirfx.h"
#include "fx/logfx.h"

static void
set_mtime(const char *path, int64_t sec)
{
	struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* ---- offsets before a time ---- */

static void
test_offsets_before(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	int64_t offs[8], now = time(NULL);
	klog_log_t *log = open_log(f->dir, 1000, 0);
	int n;

	/* Segments 0, 1000, 2000, the last holding 500 bytes. */
	for (uint32_t i = 0; i < 5; i++)
		append(log, i * 5, 5, 91);
	flush(log);
	for (int i = 0; i < 3; i++) {
		seg_file(path, sizeof(path), f->dir, i * 1000, ".klog");
		set_mtime(path, now - 3000 + i * 1000);
	}
	assert_int_equal(klog_log_offsets_before(log, -2, offs, 8, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(offs[0], 0);
	assert_int_equal(klog_log_offsets_before(log, -1, offs, 1, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(offs[0], 2500);
	assert_int_equal(klog_log_offsets_before(log, -1, offs, 8, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(offs[0], 2500);
	assert_int_equal(offs[1], 2000);
	assert_int_equal(offs[2], 1000);
	assert_int_equal(offs[3], 0);
	/* Newest segment with mtime <= T: the middle one. */
	assert_int_equal(klog_log_offsets_before(log, (now - 1500) * 1000,
	    offs, 8, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(offs[0], 1000);
	assert_int_equal(offs[1], 0);
	assert_int_equal(klog_log_offsets_before(log, (now - 2000) * 1000,
	    offs, 1, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(offs[0], 1000);
	assert_int_equal(klog_log_offsets_before(log, (now - 5000) * 1000,
	    offs, 8, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(klog_log_offsets_before(log, -1, offs, 0, &n), 0);
	assert_int_equal(n, 0);

	/* Unflushed data (here a whole new segment) is not offered. */
	append(log, 25, 10, 91);
	assert_int_equal(klog_log_segment_count(log), 4);
	assert_int_equal(klog_log_offsets_before(log, -1, offs, 8, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(offs[0], 2500);
	flush(log);
	assert_int_equal(klog_log_offsets_before(log, -1, offs, 8, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(offs[0], 3500);
	assert_int_equal(offs[1], 2500);
	klog_log_close(log);

	/* An empty log: one segment, nothing flushed in it. */
	assert_int_equal(mkdir(strcat(strcpy(path, f->dir), "/e"), 0755), 0);
	{
		klog_log_t *e = NULL;

		assert_int_equal(klog_log_open(path, "e", 0, NULL, &e, NULL), 0);
		assert_int_equal(klog_log_offsets_before(e, -1, offs, 8, &n),
		    0);
		assert_int_equal(n, 1);
		assert_int_equal(offs[0], 0);
		klog_log_close(e);
	}
}

/*
 * Every segment holding the flushed end deleted behind the log
 * (klog-retain) while the newest one is not flushed yet: the start is the
 * newest segment's, for the
 * earliest and the latest offset alike, not "no offset" (which failed
 * klog-consume -L beside a busy producer).
 */
static void
test_offsets_all_flushed_gone(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	int64_t offs[8];
	klog_log_t *log = open_log(f->dir, 1000, 0);
	int n;

	for (uint32_t i = 0; i < 5; i++)
		append(log, i * 5, 5, 91);
	flush(log);
	/* 2000 grows to 2900 and 2900 starts, neither flushed. */
	append(log, 25, 4, 91);
	append(log, 29, 5, 91);
	assert_int_equal(klog_log_segment_count(log), 4);
	for (int i = 0; i < 3; i++) {
		seg_file(path, sizeof(path), f->dir, i * 1000, ".klog");
		assert_int_equal(unlink(path), 0);
	}
	for (int64_t t = -2; t <= -1; t++) {
		assert_int_equal(klog_log_offsets_before(log, t, offs, 8, &n),
		    0);
		assert_int_equal(n, 1);
		assert_int_equal(offs[0], 2900);
	}
	klog_log_close(log);
}

/* ---- retention ---- */

/* A log of nseg full segments of 1000 bytes and a last of 500. */
static klog_log_t *
make_segments(const char *dir, int nseg)
{
	klog_log_t *log = open_log(dir, 1000, 0);

	for (int i = 0; i < nseg * 2 + 1; i++)
		append(log, (uint32_t)i * 5, 5, 91);
	flush(log);
	assert_int_equal(klog_log_segment_count(log), (size_t)nseg + 1);
	return log;
}

static void
test_retain_age(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	int64_t now = time(NULL), bytes;
	klog_log_t *log = make_segments(f->dir, 3);
	klog_err_t err = { 0 };
	size_t del;

	/* Old, new, old, new: only the prefix goes. */
	for (int i = 0; i < 4; i++) {
		seg_file(path, sizeof(path), f->dir, i * 1000, ".klog");
		set_mtime(path, i % 2 ? now : now - 7200);
	}
	assert_int_equal(klog_log_retain(log, 3600 * 1000, -1, now * 1000,
	    &del, &bytes, &err), 0);
	assert_int_equal(del, 1);
	assert_int_equal(bytes, 1000);
	assert_int_equal(klog_log_start(log), 1000);
	assert_int_equal(klog_log_segment_count(log), 3);
	assert_int_equal(klog_log_size_bytes(log), 2500);
	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(check_contents(log, 91), 35);

	/* Everything expired: the log rolls and keeps an empty segment. */
	for (int i = 1; i < 4; i++) {
		seg_file(path, sizeof(path), f->dir, i * 1000, ".klog");
		set_mtime(path, now - 7200);
	}
	assert_int_equal(klog_log_retain(log, 3600 * 1000, -1, now * 1000,
	    &del, &bytes, &err), 0);
	assert_int_equal(del, 3);
	assert_int_equal(bytes, 2500);
	assert_int_equal(klog_log_segment_count(log), 1);
	assert_int_equal(klog_log_start(log), 3500);
	assert_int_equal(klog_log_end(log), 3500);
	assert_int_equal(klog_log_flushed_end(log), 3500);
	seg_file(path, sizeof(path), f->dir, 3500, ".klog");
	assert_int_equal(file_size(path), 0);

	/* An empty active segment is never deleted; its mtime is
	 * refreshed. */
	set_mtime(path, now - 7200);
	assert_int_equal(klog_log_retain(log, 3600 * 1000, -1, now * 1000,
	    &del, &bytes, &err), 0);
	assert_int_equal(del, 0);
	assert_int_equal(klog_log_segment_count(log), 1);
	{
		struct stat st;

		assert_int_equal(stat(path, &st), 0);
		assert_true(st.st_mtime > now - 3600);
	}
	assert_int_equal(append(log, 0, 1, 91), 3500);
	flush(log);
	klog_log_close(log);

	/* The state survives a restart. */
	log = open_log(f->dir, 1000, 1);
	assert_int_equal(klog_log_start(log), 3500);
	assert_int_equal(klog_log_end(log), 3600);
	klog_log_close(log);
}

static void
test_retain_size(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = make_segments(f->dir, 4);  /* 4500 bytes */
	klog_err_t err = { 0 };
	int64_t bytes;
	size_t del;

	/* 4500 - 1000 >= 2600 but 3500 - 1000 < 2600. */
	assert_int_equal(klog_log_retain(log, -1, 2600, 0, &del, &bytes,
	    &err), 0);
	assert_int_equal(del, 1);
	assert_int_equal(klog_log_size_bytes(log), 3500);
	/* Exactly at the limit after deleting: it goes. */
	assert_int_equal(klog_log_retain(log, -1, 2500, 0, &del, &bytes,
	    &err), 0);
	assert_int_equal(del, 1);
	assert_int_equal(klog_log_size_bytes(log), 2500);
	assert_int_equal(klog_log_retain(log, -1, 100000, 0, &del, &bytes,
	    &err), 0);
	assert_int_equal(del, 0);
	/* Unflushed data in the active segment, limit 0: the log rolls. */
	append(log, 0, 1, 91);
	assert_int_equal(klog_log_retain(log, -1, 0, 0, &del, &bytes, &err),
	    0);
	assert_int_equal(del, 3);
	assert_int_equal(bytes, 2600);
	assert_int_equal(klog_log_start(log), 4600);
	assert_int_equal(klog_log_flushed_end(log), 4600);
	assert_int_equal(klog_log_end(log), 4600);
	assert_int_equal(klog_log_size_bytes(log), 0);
	flush(log);
	klog_log_close(log);
}

static void
test_retain_with_slice(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = make_segments(f->dir, 3);
	klog_log_slice_t sl, sl2, sl3;
	uint8_t buf[1000], want[1000];
	int64_t bytes;
	size_t del;

	assert_int_equal(klog_log_read(log, 0, 1000, &sl, NULL), 0);
	assert_int_equal(klog_log_read(log, 1000, 1000, &sl2, NULL), 0);
	assert_int_equal(klog_log_retain(log, -1, 1, 0, &del, &bytes, NULL),
	    0);
	assert_int_equal(del, 3);
	assert_int_equal(klog_log_read(log, 0, 1000, &sl3, NULL),
	    -KLOG_ERANGE);
	/* The held slices still read the deleted files' bytes. */
	make_set(want, 0, 10, 91);
	assert_int_equal(pread(sl.fd, buf, sl.len, sl.file_pos), 1000);
	assert_memory_equal(buf, want, 1000);
	klog_log_slice_release(&sl);
	klog_log_close(log);  /* even after the log is gone */
	make_set(want, 10, 10, 91);
	assert_int_equal(pread(sl2.fd, buf, sl2.len, sl2.file_pos), 1000);
	assert_memory_equal(buf, want, 1000);
	klog_log_slice_release(&sl2);
}

static void
test_rescan(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_log_t *log = make_segments(f->dir, 4);
	klog_log_slice_t sl, gone;
	klog_err_t err = { 0 };
	uint8_t buf[100], want[100];

	assert_int_equal(klog_log_read(log, 0, 100, &sl, NULL), 0);
	/* A file missing in the middle is not a prefix: nothing changes. */
	seg_file(path, sizeof(path), f->dir, 2000, ".klog");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(klog_log_rescan(log, &err), 0);
	assert_int_equal(klog_log_segment_count(log), 5);
	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	assert_int_equal(unlink(path), 0);
	seg_file(path, sizeof(path), f->dir, 1000, ".klog");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(klog_log_rescan(log, &err), 0);
	assert_int_equal(klog_log_segment_count(log), 2);
	assert_int_equal(klog_log_start(log), 3000);
	assert_int_equal(klog_log_size_bytes(log), 1500);
	assert_int_equal(klog_log_read(log, 1000, 100, &gone, &err),
	    -KLOG_ERANGE);
	assert_int_equal(check_contents(log, 91), 45);
	/* The slice taken before still works. */
	make_set(want, 0, 1, 91);
	assert_int_equal(pread(sl.fd, buf, 100, sl.file_pos), 100);
	assert_memory_equal(buf, want, 100);
	klog_log_slice_release(&sl);
	klog_log_close(log);
}

/* A segment removed before this process ever opened it. */
static void
test_read_removed(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_log_t *log = make_segments(f->dir, 2);
	klog_log_slice_t sl;
	klog_err_t err = { 0 };

	klog_log_close(log);
	log = open_log(f->dir, 1000, 0);
	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(klog_log_read(log, 100, 100, &sl, &err),
	    -KLOG_ERANGE);
	assert_non_null(strstr(err.msg, "deleted"));
	/* The failed read already moved the start past the deleted file, so
	 * the range a reader is told with the error is the true one. */
	assert_int_equal(klog_log_start(log), 1000);
	assert_int_equal(klog_log_read(log, 1100, 100, &sl, &err), 0);
	klog_log_slice_release(&sl);
	assert_int_equal(klog_log_rescan(log, &err), 0);
	assert_int_equal(klog_log_start(log), 1000);
	klog_log_close(log);
}

/* OFFSETS that finds a segment removed behind the log rescans as a read
 * does: the start and the descriptors follow the files. */
static void
test_offsets_removed(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_log_t *log = make_segments(f->dir, 2);
	int64_t offs[8];
	int n;

	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(klog_log_start(log), 0);
	assert_int_equal(klog_log_offsets_before(log, -2, offs, 8, &n), 0);
	assert_true(n >= 1);
	assert_int_equal(offs[0], 1000);
	assert_int_equal(klog_log_start(log), 1000);
	klog_log_close(log);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_offsets_before),
		T(test_offsets_all_flushed_gone),
		T(test_retain_age),
		T(test_retain_size),
		T(test_retain_with_slice),
		T(test_rescan),
		T(test_read_removed),
		T(test_offsets_removed),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
