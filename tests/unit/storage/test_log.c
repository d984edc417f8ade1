/*
 * Unit tests for the partition log (lib/storage/log.c): open and the
 * segments it finds on disk, append and roll, flush (with a flusher
 * thread racing the appender), a failed sync being final, a follower's
 * truncation and reset.  Reads are test_logread.c's, segment listing,
 * OFFSETS and retention test_logretain.c's, recovery at open
 * test_logrecover.c's; the helpers they share are fx/logfx.h.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define DIRFX_NAME "log"
#include "fx/dirfx.h"
#include "fx/logfx.h"

/* ---- helpers ---- */

/*
 * fsync, interposed: the library is linked into this executable, so
 * lib/storage/log.c's and lib/storage/segment.c's calls come here.  A test sets fsync_hook
 * to run code at the point where a flush has captured what to sync and let
 * go of the log's lock; it runs once, before the first fsync after it is
 * set (and not for the fsyncs the hook itself makes).  A test sets
 * fsync_fails to make the fsyncs after the next fsync_passes ones fail
 * with EIO, as after a failed write-back.  Otherwise this is the system
 * call.
 */
static void (*fsync_hook)(void *);
static void *fsync_hook_arg;
static int fsync_passes, fsync_fails;

int
fsync(int fd)
{
	void (*hook)(void *) = fsync_hook;

	if (hook != NULL) {
		fsync_hook = NULL;
		hook(fsync_hook_arg);
	}
	if (fsync_fails > 0 && fsync_passes-- <= 0) {
		fsync_fails--;
		fsync_passes = 0;
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fsync, fd);
}

static void
write_file(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	if (len > 0)
		assert_int_equal(write(fd, p, len), (ssize_t)len);
	close(fd);
}

static void
test_open_bad_topic(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = NULL;
	klog_err_t err = { 0 };

	assert_int_equal(klog_log_open(f->dir, "../x", 0, NULL, &log, &err),
	    -KLOG_ETOPIC);
	assert_null(log);
	assert_int_equal(klog_log_open(f->dir, "ok", -1, NULL, &log, &err),
	    -KLOG_EINVAL);
}

/* ---- append and flush ---- */

static void
test_empty_log(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_log_slice_t sl;
	klog_log_t *log = open_log(f->dir, 0, 0);

	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	assert_int_equal(file_size(path), 0);
	assert_int_equal(klog_log_start(log), 0);
	assert_int_equal(klog_log_end(log), 0);
	assert_int_equal(klog_log_flushed_end(log), 0);
	assert_int_equal(klog_log_segment_count(log), 1);
	assert_string_equal(klog_log_topic(log), TOPIC);
	assert_int_equal(klog_log_partition(log), 0);
	assert_int_equal(klog_log_read(log, 0, 100, &sl, NULL), 0);
	assert_int_equal(sl.len, 0);
	klog_log_slice_release(&sl);
	assert_int_equal(klog_log_read(log, 1, 100, &sl, NULL), -KLOG_ERANGE);
	flush(log);
	klog_log_close(log);
}

static void
test_append_read(void **state)
{
	struct fixture *f = *state;
	klog_err_t err = { 0 };
	klog_log_slice_t sl;
	klog_log_t *log = open_log(f->dir, 0, 0);
	size_t esz = klog_entry_size(100);
	uint8_t buf[4096];

	assert_int_equal(append(log, 0, 10, 100), 0);
	assert_int_equal(append(log, 10, 5, 100), (int64_t)(10 * esz));
	assert_int_equal(klog_log_end(log), (int64_t)(15 * esz));
	assert_int_equal(klog_log_unflushed_messages(log), 15);
	assert_int_equal(klog_log_size_bytes(log), (int64_t)(15 * esz));

	/* Nothing is visible before the flush. */
	assert_int_equal(klog_log_flushed_end(log), 0);
	assert_int_equal(klog_log_read(log, 0, 1000, &sl, &err), 0);
	assert_int_equal(sl.len, 0);
	assert_int_equal(klog_log_read(log, (int64_t)esz, 1000, &sl, &err),
	    -KLOG_ERANGE);
	assert_string_equal(err.msg, "offset 109 out of range [0, 0]");

	flush(log);
	assert_int_equal(klog_log_flushed_end(log), (int64_t)(15 * esz));
	assert_int_equal(klog_log_unflushed_messages(log), 0);
	assert_int_equal(klog_log_read(log, (int64_t)esz, 250, &sl, &err), 0);
	assert_int_equal(sl.len, 250);
	assert_int_equal(sl.offset, (int64_t)esz);
	assert_int_equal(sl.file_pos, (int64_t)esz);
	assert_int_equal(pread(sl.fd, buf, sl.len, sl.file_pos), 250);
	make_set(buf + 1000, 1, 3, 100);
	assert_memory_equal(buf, buf + 1000, 250);
	klog_log_slice_release(&sl);
	assert_null(sl.seg);
	klog_log_slice_release(&sl);  /* twice is harmless */

	assert_int_equal(check_contents(log, 100), 15);
	klog_log_close(log);

	/* After a restart the data on disk counts as flushed. */
	log = open_log(f->dir, 0, 0);
	assert_int_equal(klog_log_flushed_end(log), (int64_t)(15 * esz));
	assert_int_equal(append(log, 15, 1, 100), (int64_t)(15 * esz));
	flush(log);
	assert_int_equal(check_contents(log, 100), 16);
	klog_log_close(log);
}

static void
test_flushed_cap(void **state)
{
	struct fixture *f = *state;
	klog_log_slice_t sl;
	klog_log_t *log = open_log(f->dir, 0, 0);
	size_t esz = klog_entry_size(50);
	uint64_t t0;

	append(log, 0, 4, 50);
	t0 = (uint64_t)klog_log_last_flush_ms(log);
	flush(log);
	assert_true((uint64_t)klog_log_last_flush_ms(log) >= t0);
	append(log, 4, 4, 50);
	assert_int_equal(klog_log_unflushed_messages(log), 4);
	/* A read is capped at the flushed end, not the written end. */
	assert_int_equal(klog_log_read(log, 0, 1 << 20, &sl, NULL), 0);
	assert_int_equal(sl.len, 4 * esz);
	klog_log_slice_release(&sl);
	assert_int_equal(klog_log_read(log, (int64_t)(4 * esz), 1 << 20, &sl,
	    NULL), 0);
	assert_int_equal(sl.len, 0);
	assert_int_equal(klog_log_read(log, (int64_t)(5 * esz), 1 << 20, &sl,
	    NULL), -KLOG_ERANGE);
	flush(log);
	assert_int_equal(klog_log_read(log, 0, 1 << 20, &sl, NULL), 0);
	assert_int_equal(sl.len, 8 * esz);
	klog_log_slice_release(&sl);
	klog_log_close(log);
}

static void
test_roll(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_segment_info_t info[8];
	klog_log_config_t cfg;
	klog_log_t *log = open_log(f->dir, 1000, 0);
	size_t n;

	/* 5 sets of 200 bytes fill the segment exactly: no roll. */
	assert_int_equal(klog_entry_size(91), 100);
	for (uint32_t i = 0; i < 5; i++)
		append(log, i * 2, 2, 91);
	assert_int_equal(klog_log_segment_count(log), 1);
	/* The next set would pass 1000: it starts a new segment. */
	assert_int_equal(append(log, 10, 1, 91), 1000);
	assert_int_equal(klog_log_segment_count(log), 2);
	seg_file(path, sizeof(path), f->dir, 1000, ".klog");
	assert_int_equal(file_size(path), 100);
	/* A set larger than a segment still goes in, alone. */
	assert_int_equal(append(log, 11, 25, 91), 1100);
	assert_int_equal(klog_log_segment_count(log), 3);
	append(log, 36, 1, 91);
	assert_int_equal(klog_log_segment_count(log), 4);
	assert_int_equal(klog_log_segments(log, info, 8, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(info[0].base, 0);
	assert_int_equal(info[0].size, 1000);
	assert_int_equal(info[1].base, 1000);
	assert_int_equal(info[1].size, 100);
	assert_int_equal(info[2].base, 1100);
	assert_int_equal(info[2].size, 2500);
	assert_int_equal(info[3].base, 3600);
	assert_int_equal(info[3].size, 100);
	assert_true(info[3].mtime_ms > 0);
	assert_int_equal(klog_log_size_bytes(log), 3700);
	assert_int_equal(klog_log_segments(log, info, 1, &n), 0);
	assert_int_equal(n, 4);

	flush(log);
	assert_int_equal(check_contents(log, 91), 37);
	klog_log_close(log);

	/* An oversized set into a fresh log stays in the first segment. */
	klog_log_config_default(&cfg);
	cfg.segment_bytes = 1000;
	assert_int_equal(klog_log_open(f->dir, TOPIC, 1, &cfg, &log, NULL), 0);
	assert_int_equal(append(log, 0, 30, 91), 0);
	assert_int_equal(klog_log_segment_count(log), 1);
	assert_int_equal(append(log, 30, 1, 91), 3000);
	assert_int_equal(klog_log_segment_count(log), 2);
	klog_log_close(log);
}

/* ---- segments on disk ---- */

static void
test_gaps(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], dir[PATH_MAX / 2];
	uint8_t buf[1024], buf1[1024];
	size_t len = make_set(buf, 0, 1, 91);  /* 100 bytes */
	klog_log_t *log = NULL;
	klog_err_t err = { 0 };

	snprintf(dir, sizeof(dir), "%s/" TOPIC "-0", f->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	write_file(path, buf, len);
	seg_file(path, sizeof(path), f->dir, 200, ".klog");
	write_file(path, buf, len);
	assert_int_equal(klog_log_open(f->dir, TOPIC, 0, NULL, &log, &err),
	    -KLOG_ECORRUPT);
	assert_null(log);
	assert_non_null(strstr(err.msg, "00000000000000000200.klog"));
	assert_non_null(strstr(err.msg, "gap"));

	/* Overlap. */
	unlink(path);
	seg_file(path, sizeof(path), f->dir, 50, ".klog");
	write_file(path, buf, len);
	assert_int_equal(klog_log_open(f->dir, TOPIC, 0, NULL, &log, &err),
	    -KLOG_ECORRUPT);
	assert_non_null(strstr(err.msg, "overlap"));
	unlink(path);

	/* An empty segment in the middle is a gap unless the next one
	 * starts at the same base. */
	seg_file(path, sizeof(path), f->dir, 100, ".klog");
	write_file(path, NULL, 0);
	seg_file(path, sizeof(path), f->dir, 150, ".klog");
	write_file(path, buf, len);
	assert_int_equal(klog_log_open(f->dir, TOPIC, 0, NULL, &log, &err),
	    -KLOG_ECORRUPT);
	assert_non_null(strstr(err.msg, "00000000000000000150.klog"));
	unlink(path);
	seg_file(path, sizeof(path), f->dir, 100, ".klog");
	write_file(path, buf1, make_set(buf1, 1, 1, 91));
	seg_file(path, sizeof(path), f->dir, 100, ".kafka");
	write_file(path, NULL, 0);
	log = open_log(f->dir, 0, 1);
	assert_int_equal(klog_log_end(log), 200);
	assert_int_equal(check_contents(log, 91), 2);
	klog_log_close(log);

	/* Files that are not segments are ignored; a directory with a
	 * segment's name is refused. */
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	write_file(path, "x", 1);
	snprintf(path, sizeof(path), "%s/0000000000000000000.klog", dir);
	write_file(path, "x", 1);
	log = open_log(f->dir, 0, 0);
	klog_log_close(log);
	seg_file(path, sizeof(path), f->dir, 200, ".klog");
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(klog_log_open(f->dir, TOPIC, 0, NULL, &log, &err),
	    -KLOG_ECORRUPT);
	assert_non_null(strstr(err.msg, "not a regular file"));
}

static void
test_kafka_segments(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], dir[PATH_MAX / 2];
	uint8_t buf[4096];
	size_t len = make_set(buf, 0, 10, 91);
	klog_log_t *log;

	snprintf(dir, sizeof(dir), "%s/" TOPIC "-0", f->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	seg_file(path, sizeof(path), f->dir, 0, ".kafka");
	write_file(path, buf, len);
	len = make_set(buf, 10, 10, 91);
	seg_file(path, sizeof(path), f->dir, 1000, ".kafka");
	write_file(path, buf, len);
	log = open_log(f->dir, 1500, 1);
	assert_int_equal(klog_log_segment_count(log), 2);
	assert_int_equal(klog_log_end(log), 2000);
	assert_int_equal(check_contents(log, 91), 20);
	/* Appends go on in klog segments. */
	assert_int_equal(append(log, 20, 10, 91), 2000);
	flush(log);
	seg_file(path, sizeof(path), f->dir, 2000, ".klog");
	assert_int_equal(file_size(path), 1000);
	assert_int_equal(check_contents(log, 91), 30);
	klog_log_close(log);
}

/* ---- errors on append ---- */

static void
test_append_efbig(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	struct rlimit old, lim;
	uint8_t buf[2048];
	size_t len = make_set(buf, 0, 20, 91);
	klog_log_t *log = open_log(f->dir, 0, 0);
	klog_err_t err = { 0 };
	int r;

	append(log, 0, 10, 91);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = 1500;  /* half of the next set fits */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	r = klog_log_append(log, buf, len, 20, NULL, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(r, -KLOG_ENOSPC);
	assert_non_null(strstr(err.msg, "00000000000000000000.klog"));
	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	assert_int_equal(file_size(path), 1000);
	assert_int_equal(klog_log_end(log), 1000);
	assert_int_equal(klog_log_unflushed_messages(log), 10);
	/* The log goes on where it was. */
	assert_int_equal(append(log, 10, 1, 91), 1000);
	flush(log);
	assert_int_equal(check_contents(log, 91), 11);
	klog_log_close(log);
}

/*
 * Vectored appends: the sets that fit go out together, a set that would pass
 * the segment size starts a new segment mid-batch, and offsets are
 * contiguous whatever the split.
 */
static void
test_appendv_roll(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[8][1024];
	struct iovec iov[8];
	klog_segment_info_t info[8];
	klog_log_t *log = open_log(f->dir, 1000, 0);
	klog_err_t err = { 0 };
	int64_t first = -1;
	size_t done = 0, n;

	append(log, 0, 3, 91);                     /* 300 bytes */
	for (uint32_t i = 0; i < 8; i++) {         /* 8 sets of 200 bytes */
		iov[i].iov_base = buf[i];
		iov[i].iov_len = make_set(buf[i], 3 + 2 * i, 2, 91);
	}
	assert_int_equal(klog_log_appendv(log, iov, 8, 16, &first, &done,
	    &err), 0);
	assert_int_equal(first, 300);
	assert_int_equal(done, 8);
	assert_int_equal(klog_log_end(log), 1900);
	assert_int_equal(klog_log_unflushed_messages(log), 19);
	/* 300 + 3 sets = 900; the 4th would pass 1000: new segment at 900,
	 * which takes 5 sets (1000 bytes exactly). */
	assert_int_equal(klog_log_segments(log, info, 8, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(info[0].size, 900);
	assert_int_equal(info[1].base, 900);
	assert_int_equal(info[1].size, 1000);
	flush(log);
	assert_int_equal(check_contents(log, 91), 19);
	klog_log_close(log);
}

/* A write that fails mid-batch leaves exactly the sets before it. */
static void
test_appendv_partial(void **state)
{
	struct fixture *f = *state;
	static const uint32_t msgs[3] = { 2, 4, 2 };  /* 200, 400, 200 bytes */
	uint8_t buf[3][1024];
	struct iovec iov[3];
	struct rlimit old, lim;
	klog_log_t *log = open_log(f->dir, 250, 0);
	klog_err_t err = { 0 };
	size_t done = 99;
	int r;

	for (uint32_t i = 0, m = 0; i < 3; m += msgs[i], i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = make_set(buf[i], m, msgs[i], 91);
	}
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = 300;  /* the 400-byte set cannot fit its segment */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	r = klog_log_appendv(log, iov, 3, 8, NULL, &done, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(r, -KLOG_ENOSPC);
	assert_int_equal(done, 1);
	assert_int_equal(klog_log_end(log), 200);
	assert_int_equal(klog_log_unflushed_messages(log), 0);
	/* Nothing of the failed write stays: the log goes on at 200. */
	assert_int_equal(append(log, 2, 2, 91), 200);
	flush(log);
	assert_int_equal(check_contents(log, 91), 4);
	klog_log_close(log);
}

/* ---- a follower's truncation and reset ---- */

static void
truncate_ok(klog_log_t *log, int64_t offset, int64_t want)
{
	klog_err_t err = { 0 };
	int64_t landed = -7;
	int r = klog_log_truncate(log, offset, &landed, &err);

	if (r != 0)
		fail_msg("truncate %lld: %s", (long long)offset,
		    klog_err_text(&err, r));
	assert_int_equal(landed, want);
	assert_int_equal(klog_log_end(log), want);
}

static void
test_truncate_active(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_log_t *log = open_log(f->dir, 1000, 0);

	append_each(log, 0, 15);       /* 0: 1000 bytes, 1000: 500 */
	flush(log);
	truncate_ok(log, 1300, 1300);
	assert_int_equal(klog_log_flushed_end(log), 1300);
	assert_int_equal(klog_log_segment_count(log), 2);
	assert_int_equal(klog_log_size_bytes(log), 1300);
	seg_file(path, sizeof(path), f->dir, 1000, ".klog");
	assert_int_equal(file_size(path), 300);
	assert_int_equal(check_contents(log, 91), 13);
	/* appends go on at the new end */
	append_each(log, 13, 3);
	flush(log);
	assert_int_equal(klog_log_end(log), 1600);
	assert_int_equal(check_contents(log, 91), 16);
	klog_log_close(log);

	log = open_log(f->dir, 1000, 1);
	assert_int_equal(klog_log_recovered_bytes(log), 0);
	assert_int_equal(klog_log_end(log), 1600);
	assert_int_equal(check_contents(log, 91), 16);
	klog_log_close(log);
}

static void
test_truncate_older(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], names[512];
	klog_segment_info_t info[4];
	klog_log_t *log = open_log(f->dir, 1000, 0);
	size_t n;

	append_each(log, 0, 25);       /* 0, 1000, 2000 (500 bytes) */
	flush(log);
	assert_int_equal(klog_log_segment_count(log), 3);
	truncate_ok(log, 600, 600);
	assert_int_equal(klog_log_flushed_end(log), 600);
	assert_int_equal(klog_log_segment_count(log), 1);
	assert_int_equal(klog_log_size_bytes(log), 600);
	assert_int_equal(klog_log_unflushed_messages(log), 0);
	part_names(f->dir, names, sizeof(names));
	assert_string_equal(names, "00000000000000000000.klog recovery-point");
	/* The flush had put the recovery point at 2000; the cut lowers it
	 * to the segment it landed in. */
	assert_int_equal(read_rp(f->dir), 0);
	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	assert_int_equal(file_size(path), 600);
	assert_int_equal(check_contents(log, 91), 6);

	/* Appendable at 600; the segment fills to 1000 and rolls, making
	 * the deleted file's name again. */
	append_each(log, 6, 6);
	assert_int_equal(klog_log_segments(log, info, 4, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(info[0].size, 1000);
	assert_int_equal(info[1].base, 1000);
	assert_int_equal(info[1].size, 200);
	flush(log);
	assert_int_equal(check_contents(log, 91), 12);
	klog_log_close(log);

	log = open_log(f->dir, 1000, 1);
	assert_int_equal(klog_log_end(log), 1200);
	assert_int_equal(check_contents(log, 91), 12);
	klog_log_close(log);
}

/* At a segment's base: that segment stays, empty, as the active one. */
static void
test_truncate_at_base(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_log_t *log = open_log(f->dir, 1000, 0);

	append_each(log, 0, 25);
	flush(log);
	truncate_ok(log, 1000, 1000);
	assert_int_equal(klog_log_segment_count(log), 2);
	seg_file(path, sizeof(path), f->dir, 1000, ".klog");
	assert_int_equal(file_size(path), 0);
	seg_file(path, sizeof(path), f->dir, 2000, ".klog");
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(check_contents(log, 91), 10);
	append_each(log, 10, 1);
	flush(log);
	assert_int_equal(check_contents(log, 91), 11);
	/* and to the start: an empty log at 0 */
	truncate_ok(log, 0, 0);
	assert_int_equal(klog_log_segment_count(log), 1);
	assert_int_equal(klog_log_flushed_end(log), 0);
	assert_int_equal(klog_log_size_bytes(log), 0);
	append_each(log, 0, 2);
	flush(log);
	assert_int_equal(check_contents(log, 91), 2);
	klog_log_close(log);
}

static void
test_truncate_not_boundary(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = open_log(f->dir, 1000, 0);

	append_each(log, 0, 25);
	flush(log);
	truncate_ok(log, 2250, 2200);     /* in the active segment */
	truncate_ok(log, 1999, 1900);     /* in an older one */
	assert_int_equal(klog_log_segment_count(log), 2);
	truncate_ok(log, 1001, 1000);
	truncate_ok(log, 99, 0);
	assert_int_equal(klog_log_flushed_end(log), 0);
	klog_log_close(log);
}

static void
test_truncate_past_end(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_log_t *log = open_log(f->dir, 1000, 0);

	append_each(log, 0, 15);
	flush(log);
	append_each(log, 15, 2);         /* unflushed: 1500..1700 */
	truncate_ok(log, 1700, 1700);
	truncate_ok(log, 5000, 1700);
	assert_int_equal(klog_log_flushed_end(log), 1500);
	assert_int_equal(klog_log_unflushed_messages(log), 2);
	seg_file(path, sizeof(path), f->dir, 1000, ".klog");
	assert_int_equal(file_size(path), 700);
	klog_log_close(log);
}

static void
test_truncate_below_start(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = open_log(f->dir, 1000, 0);
	klog_err_t err = { 0 };
	int64_t landed = -7;

	assert_int_equal(klog_log_reset(log, 3000, &err), 0);
	append_each(log, 30, 2);
	assert_int_equal(klog_log_truncate(log, 2999, &landed, &err),
	    -KLOG_ERANGE);
	assert_non_null(strstr(err.msg, "2999"));
	assert_int_equal(klog_log_end(log), 3200);
	assert_int_equal(klog_log_truncate(log, -1, &landed, &err),
	    -KLOG_ERANGE);
	truncate_ok(log, 3000, 3000);
	klog_log_close(log);
}

/* The flushed end: never raised by a cut, lowered to it. */
static void
test_truncate_flushed_end(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = open_log(f->dir, 1000, 0);

	append_each(log, 0, 15);
	flush(log);                      /* flushed 1500 */
	append_each(log, 15, 10);        /* to 2500, unflushed */
	truncate_ok(log, 2200, 2200);
	assert_int_equal(klog_log_flushed_end(log), 1500);
	/* What is left unflushed is still due for a flush. */
	assert_true(klog_log_unflushed_messages(log) > 0);
	flush(log);
	assert_int_equal(klog_log_flushed_end(log), 2200);
	assert_int_equal(klog_log_unflushed_messages(log), 0);
	assert_int_equal(check_contents(log, 91), 22);
	truncate_ok(log, 1200, 1200);
	assert_int_equal(klog_log_flushed_end(log), 1200);
	assert_int_equal(check_contents(log, 91), 12);
	klog_log_close(log);
}

struct cut {
	klog_log_t *log;
	int64_t offset;     /* truncate here, or reset at base */
	int reset;
	int rc;
	int64_t landed;
};

static void
cut_now(void *arg)
{
	struct cut *c = arg;

	if (c->reset)
		c->rc = klog_log_reset(c->log, c->offset, NULL);
	else
		c->rc = klog_log_truncate(c->log, c->offset, &c->landed,
		    NULL);
}

/*
 * A flush that captured the written end (1000) and is syncing when a cut
 * happens must not move the flushed end to what it captured: that would put
 * it past the new end.  The cut runs from the flush's first fsync, after
 * the flush has let go of the lock (log.h allows a flush meanwhile).
 */
static void
test_flush_then_truncate(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = open_log(f->dir, 0, 0);
	struct cut c = { .log = log, .offset = 500, .rc = -99 };

	append_each(log, 0, 10);
	fsync_hook_arg = &c;
	fsync_hook = cut_now;
	flush(log);
	assert_null(fsync_hook);         /* it did run inside the flush */
	assert_int_equal(c.rc, 0);
	assert_int_equal(c.landed, 500);
	assert_int_equal(klog_log_end(log), 500);
	assert_int_equal(klog_log_flushed_end(log), 0);
	/* A flush begun afterwards syncs and publishes the rest. */
	flush(log);
	assert_int_equal(klog_log_flushed_end(log), 500);
	assert_int_equal(check_contents(log, 91), 5);
	klog_log_close(log);
}

static void
test_flush_then_reset(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = open_log(f->dir, 0, 0);
	struct cut c = { .log = log, .offset = 200, .reset = 1, .rc = -99 };

	append_each(log, 0, 10);
	fsync_hook_arg = &c;
	fsync_hook = cut_now;
	flush(log);
	assert_null(fsync_hook);
	assert_int_equal(c.rc, 0);
	assert_int_equal(klog_log_start(log), 200);
	assert_int_equal(klog_log_end(log), 200);
	assert_int_equal(klog_log_flushed_end(log), 200);
	append_each(log, 2, 1);
	flush(log);
	assert_int_equal(klog_log_flushed_end(log), 300);
	assert_int_equal(check_contents(log, 91), 3);
	klog_log_close(log);
}

static void
test_reset(void **state)
{
	struct fixture *f = *state;
	char names[512];
	klog_log_t *log = open_log(f->dir, 1000, 0);
	klog_err_t err = { 0 };

	append_each(log, 0, 25);
	flush(log);
	append_each(log, 25, 1);         /* and one unflushed */
	assert_int_equal(klog_log_reset(log, 5000, &err), 0);
	assert_int_equal(klog_log_segment_count(log), 1);
	assert_int_equal(klog_log_start(log), 5000);
	assert_int_equal(klog_log_end(log), 5000);
	assert_int_equal(klog_log_flushed_end(log), 5000);
	assert_int_equal(klog_log_size_bytes(log), 0);
	assert_int_equal(klog_log_unflushed_messages(log), 0);
	part_names(f->dir, names, sizeof(names));
	assert_string_equal(names, "00000000000000005000.klog recovery-point");
	append_each(log, 50, 12);
	flush(log);
	assert_int_equal(klog_log_end(log), 6200);
	assert_int_equal(klog_log_segment_count(log), 2);
	assert_int_equal(check_contents(log, 91), 62);
	klog_log_close(log);

	log = open_log(f->dir, 1000, 1);
	assert_int_equal(klog_log_start(log), 5000);
	assert_int_equal(check_contents(log, 91), 62);
	/* Reset at a base whose file exists: made anew, empty. */
	assert_int_equal(klog_log_reset(log, 5000, &err), 0);
	part_names(f->dir, names, sizeof(names));
	assert_string_equal(names, "00000000000000005000.klog recovery-point");
	assert_int_equal(klog_log_end(log), 5000);
	append_each(log, 50, 1);
	flush(log);
	assert_int_equal(check_contents(log, 91), 51);
	/* At the base of a later segment: the new file takes its name and
	 * must not go with the old ones. */
	append_each(log, 51, 11);
	flush(log);
	assert_int_equal(klog_log_segment_count(log), 2);
	assert_int_equal(klog_log_reset(log, 6000, &err), 0);
	part_names(f->dir, names, sizeof(names));
	assert_string_equal(names, "00000000000000006000.klog recovery-point");
	append_each(log, 60, 2);
	flush(log);
	klog_log_close(log);
	log = open_log(f->dir, 1000, 1);
	assert_int_equal(klog_log_start(log), 6000);
	assert_int_equal(klog_log_end(log), 6200);
	klog_log_close(log);
}

/* ---- a flusher thread racing the appender ---- */

struct racer {
	klog_log_t *log;
	atomic_int stop, failed;
};

static void *
flusher(void *arg)
{
	struct racer *rc = arg;
	int64_t last = 0, fe;

	while (!rc->stop) {
		if (klog_log_flush(rc->log, NULL) != 0)
			rc->failed = 1;
		fe = klog_log_flushed_end(rc->log);
		if (fe < last || fe > klog_log_end(rc->log))
			rc->failed = 1;
		last = fe;
	}
	return NULL;
}

static void
test_flush_race(void **state)
{
	struct fixture *f = *state;
	struct racer rc = { 0 };
	klog_log_slice_t sl;
	pthread_t th;
	int64_t fe;

	rc.log = open_log(f->dir, 4096, 0);
	assert_int_equal(pthread_create(&th, NULL, flusher, &rc), 0);
	for (uint32_t i = 0; i < 600; i++) {
		append(rc.log, i * 5, 5, 91);
		/* Reads go on too, within whatever is flushed now. */
		fe = klog_log_flushed_end(rc.log);
		if (fe >= 500) {
			assert_int_equal(klog_log_read(rc.log, fe - 500, 1000,
			    &sl, NULL), 0);
			klog_log_slice_release(&sl);
		}
	}
	rc.stop = 1;
	pthread_join(th, NULL);
	assert_int_equal(rc.failed, 0);
	flush(rc.log);
	assert_int_equal(klog_log_flushed_end(rc.log), klog_log_end(rc.log));
	assert_int_equal(klog_log_end(rc.log), 300000);
	assert_int_equal(klog_log_unflushed_messages(rc.log), 0);
	assert_true(klog_log_segment_count(rc.log) > 50);
	assert_int_equal(check_contents(rc.log, 91), 3000);
	klog_log_close(rc.log);

	/* Everything synced is on disk as read back after a reopen. */
	rc.log = open_log(f->dir, 4096, 1);
	assert_int_equal(klog_log_recovered_bytes(rc.log), 0);
	assert_int_equal(check_contents(rc.log, 91), 3000);
	klog_log_close(rc.log);
}

/* What a hook does inside a flush: roll the log, then delete the segment
 * that was active when the flush began, as klog-retain may. */
struct roll_away {
	klog_log_t *log;
	char path[PATH_MAX];
};

static void
roll_and_delete(void *arg)
{
	struct roll_away *ra = arg;

	append(ra->log, 100, 5, 91);         /* past 1000: a new segment */
	assert_int_equal(unlink(ra->path), 0);
}

/*
 * The flush's last segment was the active one when it began; if the log
 * has rolled since, retention may delete it before its fsync's check, and
 * that is retention's doing, not a directory removed behind the broker:
 * the flush still succeeds (a cc1 make check caught the partition dropped).
 */
static void
test_flush_rolled_then_deleted(void **state)
{
	struct fixture *f = *state;
	struct roll_away ra;
	klog_log_t *log = open_log(f->dir, 1000, 0);
	klog_err_t err = { 0 };

	append(log, 0, 9, 91);               /* 900 bytes of segment 0 */
	ra.log = log;
	seg_file(ra.path, sizeof(ra.path), f->dir, 0, ".klog");
	fsync_hook_arg = &ra;
	fsync_hook = roll_and_delete;
	assert_int_equal(klog_log_flush(log, &err), 0);
	assert_null(fsync_hook);
	flush(log);
	assert_int_equal(klog_log_flushed_end(log), klog_log_end(log));
	klog_log_close(log);
}

/* ---- a failed sync is final ---- */

/* What a read at the flushed end and an append see on a failed log. */
static void
assert_failed(klog_log_t *log, int64_t flushed, int64_t end)
{
	uint8_t buf[256];
	size_t len = make_set(buf, 0, 1, 91);
	klog_err_t err = { 0 };
	klog_log_slice_t sl;

	assert_int_equal(klog_log_failed(log), 1);
	assert_int_equal(klog_log_flushed_end(log), flushed);
	assert_int_equal(klog_log_end(log), end);
	assert_int_equal(klog_log_flush(log, &err), -KLOG_ESTORAGE);
	assert_non_null(strstr(err.msg, "Input/output error"));
	assert_int_equal(klog_log_flushed_end(log), flushed);
	assert_int_equal(klog_log_append(log, buf, len, 1, NULL, &err),
	    -KLOG_ESTORAGE);
	assert_int_equal(klog_log_end(log), end);
	/* Nothing past the last good sync is ever served. */
	assert_int_equal(klog_log_read(log, flushed, 1 << 20, &sl, &err), 0);
	assert_int_equal(sl.len, 0);
}

/*
 * An fsync that fails once and would then succeed (Linux marks the pages
 * whose write-back failed clean and reports the error once): the flushed
 * end stays at the last good sync for good, and the log takes no more
 * writes.  Before the fix the second flush returned 0 and moved the end
 * over the bytes the disk never got.
 */
static void
test_sync_fails_once(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = open_log(f->dir, 0, 0);
	klog_err_t err = { 0 };

	append(log, 0, 10, 91);
	flush(log);
	append(log, 10, 5, 91);
	fsync_fails = 1;
	assert_int_equal(klog_log_flush(log, &err), -KLOG_ESTORAGE);
	assert_int_equal(fsync_fails, 0);
	assert_non_null(strstr(err.msg, "fsync "));
	assert_failed(log, 1000, 1500);
	assert_int_equal(check_contents(log, 91), 10);
	klog_log_close(log);
	/* The way back is a new open (a restart): it takes writes again. */
	log = open_log(f->dir, 0, 1);
	assert_int_equal(klog_log_failed(log), 0);
	assert_int_equal(append(log, 15, 1, 91), 1500);
	flush(log);
	assert_int_equal(check_contents(log, 91), 16);
	klog_log_close(log);
}

/* A failed sync of the directory a roll created a name in is as final as
 * one of a segment: the new segment's name may not be on the disk. */
static void
test_sync_dir_fails(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = open_log(f->dir, 1000, 0);
	klog_err_t err = { 0 };

	append(log, 0, 10, 91);
	flush(log);
	append(log, 10, 2, 91);            /* rolls: a new name at 1000 */
	fsync_passes = 1;                  /* the segment's sync passes */
	fsync_fails = 1;                   /* the directory's fails */
	assert_int_equal(klog_log_flush(log, &err), -KLOG_ESTORAGE);
	assert_int_equal(fsync_fails, 0);
	assert_non_null(strstr(err.msg, TOPIC "-0"));
	assert_failed(log, 1000, 1200);
	klog_log_close(log);
}

/* A follower's cut still runs on a failed log and only lowers the flushed
 * end; a failed sync of the cut fails a healthy log. */
static void
test_truncate_sync_fails(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = open_log(f->dir, 0, 0);
	klog_err_t err = { 0 };
	int64_t landed;

	append(log, 0, 10, 91);
	flush(log);
	append(log, 10, 5, 91);
	fsync_fails = 1;
	assert_int_equal(klog_log_truncate(log, 1200, &landed, &err),
	    -KLOG_ESTORAGE);
	assert_int_equal(klog_log_failed(log), 1);
	assert_int_equal(klog_log_flushed_end(log), 1000);
	assert_int_equal(klog_log_truncate(log, 500, &landed, &err), 0);
	assert_int_equal(landed, 500);
	assert_failed(log, 500, 500);
	klog_log_close(log);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_open_bad_topic),
		T(test_empty_log),
		T(test_append_read),
		T(test_flushed_cap),
		T(test_roll),
		T(test_gaps),
		T(test_kafka_segments),
		T(test_append_efbig),
		T(test_appendv_roll),
		T(test_appendv_partial),
		T(test_flush_race),
		T(test_truncate_active),
		T(test_truncate_older),
		T(test_truncate_at_base),
		T(test_truncate_not_boundary),
		T(test_truncate_past_end),
		T(test_truncate_below_start),
		T(test_truncate_flushed_end),
		T(test_flush_then_truncate),
		T(test_flush_then_reset),
		T(test_reset),
		T(test_flush_rolled_then_deleted),
		T(test_sync_fails_once),
		T(test_sync_dir_fails),
		T(test_truncate_sync_fails),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
