/*
 * Unit tests for reads of the partition log (lib/storage/logread.c): the
 * slice a read gives, within one segment and up to the flushed end; the
 * boundary check of its offset, and where that check reads; the start of
 * the entry holding a byte.
 */
#include <sys/mman.h>
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

#define DIRFX_NAME "logread"
#include "fx/dirfx.h"
#include "fx/logfx.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_boundaries),
		T(test_not_boundary),
		T(test_large_entry_read),
		T(test_boundary_check_stays_in_cache),
		T(test_find_start),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
