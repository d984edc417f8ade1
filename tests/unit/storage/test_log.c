/* Unit tests for the partition log (lib/storage/log.c). */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <dirent.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fx/tmpdir.h"

#include "klog/base/error.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"

#define TOPIC "events"

struct fixture {
	char dir[64];
};

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

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "log"));
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* Payload byte i of message m: deterministic, so data can be checked. */
static uint8_t
payload_byte(uint32_t m, size_t i)
{
	return (uint8_t)(m * 131 + i * 7 + 1);
}

/*
 * A set of n messages of plen bytes each, numbered from first.  Returns the
 * set's size; buf must hold n * (plen + 9) bytes.
 */
static size_t
make_set(uint8_t *buf, uint32_t first, uint32_t n, size_t plen)
{
	uint8_t payload[4096];
	size_t off = 0;

	assert_true(plen <= sizeof(payload));
	for (uint32_t m = first; m < first + n; m++) {
		for (size_t i = 0; i < plen; i++)
			payload[i] = payload_byte(m, i);
		off += klog_entry_encode(buf + off, payload, plen);
	}
	return off;
}

static klog_log_t *
open_log(const char *dir, int64_t segment_bytes, int recover)
{
	klog_log_config_t cfg;
	klog_log_t *log = NULL;
	klog_err_t err = { 0 };
	int r;

	klog_log_config_default(&cfg);
	if (segment_bytes > 0)
		cfg.segment_bytes = segment_bytes;
	cfg.recover = recover;
	r = klog_log_open(dir, TOPIC, 0, &cfg, &log, &err);
	if (r != 0)
		fail_msg("open: %s", klog_err_text(&err, r));
	return log;
}

/* Append n messages of plen bytes as one set; returns its first offset. */
static int64_t
append(klog_log_t *log, uint32_t first, uint32_t n, size_t plen)
{
	size_t cap = n * klog_entry_size(plen);
	uint8_t *buf = malloc(cap);
	klog_err_t err = { 0 };
	int64_t off = -1;
	size_t len;
	int r;

	assert_non_null(buf);
	len = make_set(buf, first, n, plen);
	r = klog_log_append(log, buf, len, n, &off, &err);
	free(buf);
	if (r != 0)
		fail_msg("append: %s", klog_err_text(&err, r));
	return off;
}

static void
flush(klog_log_t *log)
{
	klog_err_t err = { 0 };
	int r = klog_log_flush(log, &err);

	if (r != 0)
		fail_msg("flush: %s", klog_err_text(&err, r));
}

static void
seg_file(char *buf, size_t len, const char *dir, int64_t base,
    const char *suffix)
{
	snprintf(buf, len, "%s/" TOPIC "-0/%020lld%s", dir, (long long)base,
	    suffix);
}

static off_t
file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static void
append_file(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, len), (ssize_t)len);
	close(fd);
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
set_mtime(const char *path, int64_t sec)
{
	struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* Read the whole flushed log through klog_log_read and check every message
 * is message number 0, 1, 2... of plen bytes. */
static uint32_t
check_contents(klog_log_t *log, size_t plen)
{
	int64_t off = klog_log_start(log), end = klog_log_flushed_end(log);
	klog_err_t err = { 0 };
	klog_log_slice_t sl;
	klog_iter_t it;
	klog_msg_t m;
	uint32_t next = (uint32_t)(off / (int64_t)klog_entry_size(plen));
	uint8_t *buf;
	int r;

	while (off < end) {
		r = klog_log_read(log, off, 1 << 20, &sl, &err);
		if (r != 0)
			fail_msg("read %lld: %s", (long long)off,
			    klog_err_text(&err, r));
		assert_true(sl.len > 0);
		assert_non_null(buf = malloc(sl.len));
		assert_int_equal(pread(sl.fd, buf, sl.len, sl.file_pos),
		    (ssize_t)sl.len);
		klog_iter_init(&it, buf, sl.len, off, 0, 0);
		while ((r = klog_iter_next(&it, &m)) == 1) {
			assert_true(m.valid);
			assert_int_equal(m.payload_len, plen);
			for (size_t i = 0; i < plen; i++)
				assert_int_equal(m.payload[i],
				    payload_byte(next, i));
			next++;
		}
		assert_int_equal(r, 0);  /* slices end on entry boundaries */
		off = klog_iter_offset(&it);
		klog_iter_free(&it);
		free(buf);
		klog_log_slice_release(&sl);
	}
	return next;
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

/* ---- append, read, flush ---- */

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

static void
test_boundaries(void **state)
{
	struct fixture *f = *state;
	klog_segment_info_t info[16];
	klog_err_t err = { 0 };
	klog_log_slice_t sl;
	size_t n, esz = klog_entry_size(91);
	klog_log_t *log = open_log(f->dir, 1000, 0);
	int64_t end;

	for (uint32_t i = 0; i < 30; i++)
		append(log, i * 3, 3, 91);
	flush(log);
	end = klog_log_end(log);
	assert_int_equal(end, 9000);
	assert_int_equal(klog_log_segments(log, info, 16, &n), 0);
	assert_int_equal(n, 10);
	for (size_t i = 0; i < n; i++) {
		/* The first byte of each segment: a slice of that segment. */
		assert_int_equal(klog_log_read(log, info[i].base, 1 << 20, &sl,
		    &err), 0);
		assert_int_equal(sl.file_pos, 0);
		assert_int_equal(sl.len, (size_t)info[i].size);
		klog_log_slice_release(&sl);
		/* The last entry of each segment: never crosses into the
		 * next one. */
		assert_int_equal(klog_log_read(log, info[i].base +
		    info[i].size - (int64_t)esz, 1 << 20, &sl, &err), 0);
		assert_int_equal(sl.len, esz);
		assert_int_equal(sl.file_pos, info[i].size - (int64_t)esz);
		klog_log_slice_release(&sl);
	}
	assert_int_equal(klog_log_read(log, end, 1 << 20, &sl, &err), 0);
	assert_int_equal(sl.len, 0);
	assert_int_equal(sl.offset, end);
	klog_log_slice_release(&sl);
	assert_int_equal(klog_log_read(log, end + 1, 1 << 20, &sl, &err),
	    -KLOG_ERANGE);
	assert_string_equal(err.msg, "offset 9001 out of range [0, 9000]");
	assert_int_equal(klog_log_read(log, -1, 1 << 20, &sl, &err),
	    -KLOG_ERANGE);
	/* max_bytes caps the slice. */
	assert_int_equal(klog_log_read(log, 3000, 10, &sl, &err), 0);
	assert_int_equal(sl.len, 10);
	klog_log_slice_release(&sl);
	assert_int_equal(check_contents(log, 91), 90);
	klog_log_close(log);

	/* Same lookups on a reopened log, whose older segments open lazily. */
	log = open_log(f->dir, 1000, 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(klog_log_read(log, info[i].base + 200, 150,
		    &sl, &err), 0);
		assert_int_equal(sl.len, 150);
		klog_log_slice_release(&sl);
	}
	assert_int_equal(check_contents(log, 91), 90);
	klog_log_close(log);
}

static void
test_not_boundary(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_err_t err = { 0 };
	klog_log_slice_t sl;
	uint8_t buf[256], zeros[64] = { 0 };
	size_t esz = klog_entry_size(40), len;
	klog_log_t *log = open_log(f->dir, 0, 0);

	append(log, 0, 6, 40);
	flush(log);
	/* Every offset inside an entry is refused. */
	for (int64_t off = 0; off < (int64_t)(6 * esz); off++) {
		int r = klog_log_read(log, off, 1 << 20, &sl, &err);

		if (off % (int64_t)esz == 0) {
			assert_int_equal(r, 0);
			klog_log_slice_release(&sl);
			continue;
		}
		if (r != -KLOG_ENOTBOUNDARY)
			fail_msg("offset %lld: got %d", (long long)off, r);
		assert_null(sl.seg);
	}
	assert_non_null(strstr(err.msg, "not a message boundary"));
	klog_log_close(log);

	/* An entry with a bad CRC or an impossible header is refused too;
	 * so is one running past the segment. */
	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	len = make_set(buf, 0, 1, 40);
	buf[20] ^= 1;
	append_file(path, buf, len);
	append_file(path, zeros, 9);  /* length 0 */
	len = make_set(buf, 0, 1, 40);
	buf[4] = 7;                   /* magic 7 */
	append_file(path, buf, len);
	len = make_set(buf, 0, 1, 40);
	append_file(path, buf, len - 1);  /* cut */
	log = open_log(f->dir, 0, 0);
	assert_int_equal(klog_log_read(log, (int64_t)(6 * esz), 100, &sl,
	    &err), -KLOG_ENOTBOUNDARY);
	assert_non_null(strstr(err.msg, "crc"));
	assert_int_equal(klog_log_read(log, (int64_t)(7 * esz), 100, &sl,
	    &err), -KLOG_ENOTBOUNDARY);
	assert_int_equal(klog_log_read(log, (int64_t)(7 * esz + 9), 100, &sl,
	    &err), -KLOG_ENOTBOUNDARY);
	assert_non_null(strstr(err.msg, "magic"));
	assert_int_equal(klog_log_read(log, (int64_t)(8 * esz + 9), 100, &sl,
	    &err), -KLOG_ENOTBOUNDARY);
	assert_non_null(strstr(err.msg, "past the segment"));
	klog_log_close(log);
}

/* Whether page i of the mapping is in the page cache (mincore(2), which
 * brings nothing in). */
static int
page_cached(const uint8_t *map, size_t page, size_t i)
{
	unsigned char v;

	assert_int_equal(mincore((void *)(map + i * page), page, &v), 0);
	return v & 1;
}

/*
 * A read checks the entry at its offset with what the page cache holds,
 * where that covers the header: a fetch starting near the end of a cached
 * page (as a consumer's next fetch after a cold read does) does not read
 * the next page, cold, on the broker's event loop, nor start reading it.
 */
static void
test_boundary_check_stays_in_cache(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = open_log(f->dir, 0, 0);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t entry = klog_entry_size(100);
	int64_t at = (int64_t)((page - 100) / entry * entry);
	klog_err_t err = { 0 };
	klog_log_slice_t sl;
	char path[128];
	uint8_t *map, byte;
	int fd, cold = 0;

	append(log, 0, (uint32_t)(3 * page / entry), 100);
	flush(log);
	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	assert_true((fd = open(path, O_RDONLY)) >= 0);
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	map = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(map != MAP_FAILED);
	/* fadvise misses pages not yet on another CPU's LRU lists. */
	for (int i = 0; i < 20 && !cold; i++) {
		assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED),
		    0);
		cold = !page_cached(map, page, 0) && !page_cached(map, page, 1);
		if (!cold)
			usleep(10000);
	}
	if (!cold)
		skip();
	assert_int_equal(pread(fd, &byte, 1, 0), 1);
	assert_true(page_cached(map, page, 0));
	assert_false(page_cached(map, page, 1));
	assert_true(page - (size_t)at >= KLOG_MSG_OVERHEAD);
	assert_int_equal(klog_log_read(log, at, 1 << 20, &sl, &err), 0);
	assert_int_equal(sl.file_pos, at);
	/* Nor does it start a read of that page that would land later. */
	usleep(100 * 1000);
	assert_false(page_cached(map, page, 1));
	klog_log_slice_release(&sl);
	/* A bad offset there is still refused from the header alone. */
	assert_int_equal(klog_log_read(log, at + 1, 1 << 20, &sl, &err),
	    -KLOG_ENOTBOUNDARY);
	munmap(map, 2 * page);
	close(fd);
	klog_log_close(log);
}

static void
test_large_entry_read(void **state)
{
	struct fixture *f = *state;
	size_t plen = 200000, len;
	uint8_t *payload = malloc(plen), *buf = malloc(klog_entry_size(plen));
	klog_log_slice_t sl;
	klog_log_t *log = open_log(f->dir, 0, 0);

	assert_non_null(payload);
	assert_non_null(buf);
	memset(payload, 0xab, plen);
	len = klog_entry_encode(buf, payload, plen);
	assert_int_equal(klog_log_append(log, buf, len, 1, NULL, NULL), 0);
	append(log, 0, 1, 10);
	flush(log);
	/* Too large for the CRC check, but its header is sane. */
	assert_int_equal(klog_log_read(log, 0, 100, &sl, NULL), 0);
	assert_int_equal(sl.len, 100);
	klog_log_slice_release(&sl);
	assert_int_equal(klog_log_read(log, 1000, 100, &sl, NULL),
	    -KLOG_ENOTBOUNDARY);
	assert_int_equal(klog_log_read(log, (int64_t)len, 100, &sl, NULL), 0);
	assert_int_equal(sl.len, klog_entry_size(10));
	klog_log_slice_release(&sl);
	klog_log_close(log);
	free(payload);
	free(buf);
}

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

/* Append messages first..first+n one per set; *every* one 100 bytes. */
static void
append_each(klog_log_t *log, uint32_t first, uint32_t n)
{
	for (uint32_t m = first; m < first + n; m++)
		assert_int_equal(append(log, m, 1, 91), (int64_t)m * 100);
}

/* The names in the partition directory, sorted, space-separated. */
static void
part_names(const char *dir, char *buf, size_t len)
{
	char path[PATH_MAX];
	struct dirent **ents;
	int n;

	snprintf(path, sizeof(path), "%s/" TOPIC "-0", dir);
	assert_true((n = scandir(path, &ents, NULL, alphasort)) >= 0);
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.') {
			if (buf[0] != '\0')
				strncat(buf, " ", len - strlen(buf) - 1);
			strncat(buf, ents[i]->d_name, len - strlen(buf) - 1);
		}
		free(ents[i]);
	}
	free(ents);
}

/* The recovery point's file of partition 0, -1 if there is none. */
static int64_t
read_rp(const char *dir)
{
	char path[PATH_MAX];
	long long v = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/" TOPIC "-0/recovery-point", dir);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	assert_int_equal(fscanf(fp, "%lld", &v), 1);
	fclose(fp);
	return v;
}

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

/* Any byte of the visible log finds the start of the entry holding it,
 * within its segment, forwards and backwards (the hint is only a start);
 * past the flushed end and before the start are out of range. */
static void
test_find_start(void **state)
{
	struct fixture *f = *state;
	klog_err_t err = { 0 };
	int64_t start, esz = (int64_t)klog_entry_size(91);
	klog_log_t *log = open_log(f->dir, 1000, 0);

	for (uint32_t i = 0; i < 5; i++)
		append(log, i * 2, 2, 91);       /* 0..1000, entries of 100 */
	append(log, 10, 25, 91);                 /* 1000..3500, one set */
	append(log, 35, 1, 43);                  /* 3500..3552 */
	flush(log);
	for (int64_t off = 0; off < 3500; off++) {
		assert_int_equal(klog_log_find_start(log, off, &start, &err), 0);
		if (start != off - off % esz)
			fail_msg("offset %lld: start %lld", (long long)off,
			    (long long)start);
	}
	for (int64_t off = 3499; off >= 0; off -= 37) {
		assert_int_equal(klog_log_find_start(log, off, &start, &err), 0);
		assert_int_equal(start, off - off % esz);
	}
	assert_int_equal(klog_log_find_start(log, 3551, &start, &err), 0);
	assert_int_equal(start, 3500);
	assert_int_equal(klog_log_find_start(log, 3552, &start, &err),
	    -KLOG_ERANGE);
	/* Written but not flushed: not visible yet. */
	append(log, 36, 1, 91);
	assert_int_equal(klog_log_find_start(log, 3560, &start, &err),
	    -KLOG_ERANGE);
	flush(log);
	assert_int_equal(klog_log_find_start(log, 3560, &start, &err), 0);
	assert_int_equal(start, 3552);
	/* After a cut, the remembered start of a removed entry is not
	 * trusted: an entry written over it is found from its segment's
	 * base. */
	assert_int_equal(klog_log_find_start(log, 3550, &start, &err), 0);
	assert_int_equal(klog_log_truncate(log, 3500, &start, &err), 0);
	append(log, 40, 2, 20);                  /* 3500..3558: 29 each */
	flush(log);
	assert_int_equal(klog_log_find_start(log, 3530, &start, &err), 0);
	assert_int_equal(start, 3529);
	klog_log_close(log);
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
		T(test_open_bad_topic),
		T(test_empty_log),
		T(test_append_read),
		T(test_flushed_cap),
		T(test_roll),
		T(test_boundaries),
		T(test_not_boundary),
		T(test_large_entry_read),
		T(test_boundary_check_stays_in_cache),
		T(test_recover_garbage),
		T(test_recover_half_entry),
		T(test_recover_short_tail),
		T(test_recover_crc),
		T(test_recover_bad_magic),
		T(test_recover_chunks),
		T(test_recover_last_only),
		T(test_gaps),
		T(test_kafka_segments),
		T(test_offsets_before),
		T(test_retain_age),
		T(test_retain_size),
		T(test_retain_with_slice),
		T(test_rescan),
		T(test_read_removed),
		T(test_offsets_removed),
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
		T(test_find_start),
		T(test_flush_rolled_then_deleted),
		T(test_sync_fails_once),
		T(test_sync_dir_fails),
		T(test_truncate_sync_fails),
		T(test_recover_from_point),
		T(test_recovery_point_moves),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
