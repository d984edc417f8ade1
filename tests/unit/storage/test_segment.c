/*
 * Unit tests for lib/storage/segment.c: one segment's object and file work.  The
 * log's tests (test_log.c) exercise the same functions through
 * klog_log_open(), appends and reads; these check each one directly.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <errno.h>
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

#include "fx/tmpdir.h"

#include "klog/base/error.h"
#include "klog/storage/fdcache.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"
#include "klog/storage/segment.h"

#define SEG0 "00000000000000000000.klog"

struct fixture {
	char dir[64];
	klog_fdcache_t *cache;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "segment"));
	assert_int_equal(klog_fdcache_new(0, &f->cache), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	klog_fdcache_unref(f->cache);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* Entries "p0", "p1", ... into buf; their total size. */
static size_t
entries(uint8_t *buf, int n)
{
	size_t len = 0;
	char payload[16];

	for (int i = 0; i < n; i++) {
		snprintf(payload, sizeof(payload), "p%d", i);
		len += klog_entry_encode(buf + len, payload, strlen(payload));
	}
	return len;
}

static int64_t
file_size(const struct fixture *f, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	if (stat(path, &st) < 0)
		return -1;
	return (int64_t)st.st_size;
}

static void
remove_seg0(const struct fixture *f)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/" SEG0, f->dir);
	assert_int_equal(unlink(path), 0);
}

/* A segment file at base 0 holding buf, opened read-write. */
static klog_segment_t *
segment_with(const struct fixture *f, const uint8_t *buf, size_t len)
{
	char path[PATH_MAX];
	klog_segment_t *s;
	int fd;

	snprintf(path, sizeof(path), "%s/" SEG0, f->dir);
	fd = klog_segment_open(path, O_RDWR | O_CREAT | O_EXCL);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_non_null(s = klog_segment_new(f->cache, 0, (int64_t)len, 0));
	s->ent.fd = fd;
	return s;
}

static void
test_create_write(void **state)
{
	struct fixture *f = *state;
	uint8_t a[64], b[64], back[128];
	struct iovec iov[2];
	klog_segment_t *s, *again;
	klog_err_t err = { 0 };
	size_t la = entries(a, 2), lb = entries(b, 3), kept, kept_bytes;
	char want[PATH_MAX + 64];

	assert_int_equal(klog_segment_create(f->cache, f->dir, 0, &s, &err),
	    0);
	assert_int_equal(s->base, 0);
	assert_int_equal(s->size, 0);
	assert_int_equal(s->kafka, 0);
	assert_true(s->ent.fd >= 0);
	assert_int_equal(file_size(f, SEG0), 0);

	iov[0] = (struct iovec){ a, la };
	iov[1] = (struct iovec){ b, lb };
	assert_int_equal(klog_segment_write(s, f->dir, iov, 2, la + lb, &kept,
	    &kept_bytes, &err), 0);
	assert_int_equal(kept, 2);
	assert_int_equal(kept_bytes, la + lb);
	s->size += (int64_t)kept_bytes;
	/* The next write goes at s->size. */
	assert_int_equal(klog_segment_write(s, f->dir, iov, 1, la, &kept,
	    &kept_bytes, &err), 0);
	s->size += (int64_t)kept_bytes;
	assert_int_equal(file_size(f, SEG0), 2 * la + lb);
	assert_int_equal(pread(s->ent.fd, back, sizeof(back), 0),
	    (ssize_t)(2 * la + lb));
	assert_memory_equal(back, a, la);
	assert_memory_equal(back + la, b, lb);
	assert_memory_equal(back + la + lb, a, la);

	/* The file must be new. */
	assert_int_equal(klog_segment_create(f->cache, f->dir, 0, &again,
	    &err), -KLOG_EEXIST);
	assert_null(again);
	snprintf(want, sizeof(want), "create %s/" SEG0 ": %s", f->dir,
	    strerror(EEXIST));
	assert_string_equal(err.msg, want);
	klog_segment_unref(s);
}

static void
test_create_path_too_long(void **state)
{
	struct fixture *f = *state;
	char dir[PATH_MAX];
	klog_segment_t *s;
	klog_err_t err = { 0 };

	memset(dir, 'd', sizeof(dir) - 10);
	dir[sizeof(dir) - 10] = '\0';
	assert_int_equal(klog_segment_create(f->cache, dir, 0, &s, &err),
	    -KLOG_ETOOBIG);
	assert_null(s);
	assert_int_equal(err.code, -KLOG_ETOOBIG);
	assert_int_equal(strncmp(err.msg, "ddd", 3), 0);
}

/* A failed write keeps nothing of the set and says which file. */
static void
test_write_fails(void **state)
{
	struct fixture *f = *state;
	uint8_t a[64];
	struct iovec iov;
	klog_segment_t *s;
	klog_err_t err = { 0 };
	size_t la = entries(a, 2), kept = 99, kept_bytes = 99;
	char path[PATH_MAX], want[PATH_MAX + 64];

	s = segment_with(f, a, 0);
	close(s->ent.fd);
	snprintf(path, sizeof(path), "%s/" SEG0, f->dir);
	s->ent.fd = klog_segment_open(path, O_RDONLY);
	assert_true(s->ent.fd >= 0);
	iov = (struct iovec){ a, la };
	assert_int_equal(klog_segment_write(s, f->dir, &iov, 1, la, &kept,
	    &kept_bytes, &err), -KLOG_EIO);
	assert_int_equal(kept, 0);
	assert_int_equal(kept_bytes, 0);
	snprintf(want, sizeof(want), "write %s: %s", path, strerror(EBADF));
	assert_string_equal(err.msg, want);
	assert_int_equal(file_size(f, SEG0), 0);
	klog_segment_unref(s);
}

static void
test_recover_clean(void **state)
{
	char saved[PATH_MAX];
	struct fixture *f = *state;
	uint8_t buf[256];
	size_t len = entries(buf, 5);
	klog_segment_t *s = segment_with(f, buf, len);
	int64_t cut = -1;

	assert_int_equal(klog_segment_recover(s, f->dir, &cut, saved, sizeof(saved), NULL), 0);
	assert_int_equal(cut, 0);
	assert_string_equal(saved, "");
	assert_int_equal(s->size, (int64_t)len);
	assert_int_equal(file_size(f, SEG0), (int64_t)len);
	klog_segment_unref(s);
}

/* A cut entry at the end, and a bad CRC in the middle: both truncate. */
static void
test_recover_truncates(void **state)
{
	char saved[PATH_MAX];
	struct fixture *f = *state;
	uint8_t buf[256];
	size_t len = entries(buf, 5), one = klog_entry_size(2);
	char name[64], want[PATH_MAX + 64];
	uint8_t back[16];
	klog_segment_t *s;
	int64_t cut = -1;
	int fd;

	memcpy(buf + len, buf, 7);  /* a header and a bit */
	s = segment_with(f, buf, len + 7);
	assert_int_equal(klog_segment_recover(s, f->dir, &cut, saved, sizeof(saved), NULL), 0);
	assert_int_equal(cut, 7);
	assert_int_equal(s->size, (int64_t)len);
	assert_int_equal(file_size(f, SEG0), (int64_t)len);
	klog_segment_unref(s);
	remove_seg0(f);
	/* The bytes cut are kept, named by the offset they were at. */
	snprintf(name, sizeof(name), "%020zu.salvage", len);
	snprintf(want, sizeof(want), "%s/%s", f->dir, name);
	assert_string_equal(saved, want);
	assert_int_equal(file_size(f, name), 7);
	assert_true((fd = open(want, O_RDONLY)) >= 0);
	assert_int_equal(read(fd, back, sizeof(back)), 7);
	assert_memory_equal(back, buf, 7);
	close(fd);

	entries(buf, 5);
	buf[2 * one + KLOG_MSG_OVERHEAD] ^= 1;  /* the third payload */
	s = segment_with(f, buf, len);
	assert_int_equal(klog_segment_recover(s, f->dir, &cut, saved, sizeof(saved), NULL), 0);
	assert_int_equal(cut, (int64_t)(len - 2 * one));
	assert_int_equal(s->size, (int64_t)(2 * one));
	assert_int_equal(file_size(f, SEG0), (int64_t)(2 * one));
	klog_segment_unref(s);
	snprintf(name, sizeof(name), "%020zu.salvage", 2 * one);
	assert_int_equal(file_size(f, name), (int64_t)(len - 2 * one));
	/* A second cut at the same offset gets a name of its own. */
	remove_seg0(f);
	s = segment_with(f, buf, len);
	assert_int_equal(klog_segment_recover(s, f->dir, &cut, saved,
	    sizeof(saved), NULL), 0);
	snprintf(name, sizeof(name), "%020zu.1.salvage", 2 * one);
	assert_int_equal(file_size(f, name), (int64_t)(len - 2 * one));
	klog_segment_unref(s);
}

/* An entry larger than the recovery buffer is checked by streaming. */
static void
test_recover_large_entry(void **state)
{
	char saved[PATH_MAX];
	struct fixture *f = *state;
	size_t plen = (size_t)3 << 19, elen = klog_entry_size(plen);
	uint8_t *payload = malloc(plen), *buf = malloc(2 * elen + 16);
	klog_segment_t *s;
	int64_t cut = -1;

	assert_non_null(payload);
	assert_non_null(buf);
	for (size_t i = 0; i < plen; i++)
		payload[i] = (uint8_t)(i * 7);
	klog_entry_encode(buf, payload, plen);
	klog_entry_encode(buf + elen, payload, plen);
	buf[elen + elen - 1] ^= 1;  /* the second one's last byte */
	s = segment_with(f, buf, 2 * elen);
	assert_int_equal(klog_segment_recover(s, f->dir, &cut, saved, sizeof(saved), NULL), 0);
	assert_int_equal(cut, (int64_t)elen);
	assert_int_equal(s->size, (int64_t)elen);
	klog_segment_unref(s);
	free(payload);
	free(buf);
}

/* Magic-2 entries (CRC-32C), small and larger than the recovery buffer,
 * are kept by recovery and taken as boundaries; a bad CRC-32C cuts, even
 * streamed. */
static void
test_recover_magic2(void **state)
{
	char saved[PATH_MAX];
	struct fixture *f = *state;
	size_t vlen = (size_t)3 << 19, first, big, small, len;
	uint8_t *value = malloc(vlen);
	klog_batch_builder_t bb;
	klog_err_t err = { 0 };
	klog_segment_t *s;
	klog_buf_t b;
	int64_t cut = -1;

	assert_non_null(value);
	memset(value, 'v', vlen);
	klog_buf_init(&b);
	assert_int_equal(klog_buf_reserve(&b, 64), 0);
	b.len = entries(b.data, 1);
	first = b.len;
	klog_batch_begin(&bb, &b, 1000, KLOG_NO_PRODUCER, -1, -1);
	klog_batch_add(&bb, &b, &(klog_record_in_t){ "small", 5, "k", 1, 1000,
	    NULL, 0 });
	assert_int_equal(klog_batch_end(&bb, &b), 0);
	small = b.len;
	klog_batch_begin(&bb, &b, 1000, KLOG_NO_PRODUCER, -1, -1);
	klog_batch_add(&bb, &b, &(klog_record_in_t){ value, vlen, "k", 1, 1000,
	    NULL, 0 });
	assert_int_equal(klog_batch_end(&bb, &b), 0);
	big = b.len;
	klog_batch_begin(&bb, &b, 1000, KLOG_NO_PRODUCER, -1, -1);
	klog_batch_add(&bb, &b, &(klog_record_in_t){ "last", 4, NULL, 0, 1001,
	    NULL, 0 });
	assert_int_equal(klog_batch_end(&bb, &b), 0);
	len = b.len;
	s = segment_with(f, b.data, len);
	assert_int_equal(klog_segment_recover(s, f->dir, &cut, saved,
	    sizeof(saved), NULL), 0);
	assert_int_equal(cut, 0);
	assert_int_equal(s->size, (int64_t)len);
	assert_int_equal(klog_segment_check_boundary(s->ent.fd,
	    (int64_t)first, (int64_t)len, (int64_t)len, 0, &err), 0);
	assert_int_equal(klog_segment_check_boundary(s->ent.fd, (int64_t)big,
	    (int64_t)len, (int64_t)len, 0, &err), 0);
	klog_segment_unref(s);
	remove_seg0(f);

	b.data[big - 1] ^= 1;          /* the big one's last byte */
	s = segment_with(f, b.data, len);
	assert_int_equal(klog_segment_recover(s, f->dir, &cut, saved,
	    sizeof(saved), NULL), 0);
	assert_int_equal(cut, (int64_t)(len - small));
	assert_int_equal(s->size, (int64_t)small);
	klog_segment_unref(s);
	klog_buf_free(&b);
	free(value);
}

static void
test_boundary(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256];
	size_t len = entries(buf, 4), one = klog_entry_size(2);
	klog_segment_t *s = segment_with(f, buf, len);
	int64_t w = (int64_t)len;
	klog_err_t err = { 0 };
	int fd = s->ent.fd;

	for (size_t i = 0; i < 4; i++)
		assert_int_equal(klog_segment_check_boundary(fd,
		    (int64_t)(i * one), w, w, 100 + (int64_t)(i * one), &err),
		    0);
	assert_int_equal(klog_segment_check_boundary(fd, 1, w, w, 101, &err),
	    -KLOG_ENOTBOUNDARY);
	assert_non_null(strstr(err.msg, "offset 101: not a message boundary"));
	/* Only part of the header is readable yet. */
	assert_int_equal(klog_segment_check_boundary(fd, 0, 3, w, 100, &err),
	    -KLOG_ENOTBOUNDARY);
	assert_non_null(strstr(err.msg, "(entry header cut)"));
	/* The entry would end past what was written. */
	w = (int64_t)one - 1;
	assert_int_equal(klog_segment_check_boundary(fd, 0, w, w, 100, &err),
	    -KLOG_ENOTBOUNDARY);
	assert_non_null(strstr(err.msg, "(entry runs past the segment)"));
	klog_segment_unref(s);
}

/* A bad CRC: a corrupt message if a good entry or the end follows (served
 * for the reader to report), else not a boundary. */
static void
test_boundary_crc(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[256];
	size_t len = entries(buf, 3), one = klog_entry_size(2);
	klog_segment_t *s;
	klog_err_t err = { 0 };
	int64_t w = (int64_t)len;

	buf[KLOG_MSG_OVERHEAD] ^= 1;              /* entry 0's payload */
	buf[2 * one + KLOG_MSG_OVERHEAD] ^= 1;    /* entry 2's */
	s = segment_with(f, buf, len);
	assert_int_equal(klog_segment_check_boundary(s->ent.fd, 0, w, w, 0,
	    &err), 0);
	assert_int_equal(klog_segment_check_boundary(s->ent.fd,
	    (int64_t)(2 * one), w, w, 0, &err), 0);
	buf[one + KLOG_MSG_OVERHEAD] ^= 1;        /* entry 1's too */
	assert_int_equal(pwrite(s->ent.fd, buf, len, 0), (ssize_t)len);
	assert_int_equal(klog_segment_check_boundary(s->ent.fd, 0, w, w, 0,
	    &err), -KLOG_ENOTBOUNDARY);
	assert_non_null(strstr(err.msg, "(crc mismatch)"));
	klog_segment_unref(s);
}

static void
test_pin(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[64];
	size_t len = entries(buf, 1);
	klog_segment_t *s = segment_with(f, buf, len), *gone;
	klog_err_t err = { 0 };
	int fd;

	/* A closed descriptor is opened read-only by the cache. */
	close(s->ent.fd);
	s->ent.fd = -1;
	assert_true((fd = klog_segment_pin(s, f->dir, &err)) >= 0);
	assert_int_equal(s->ent.fd, fd);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	assert_int_equal(klog_fdcache_open_count(f->cache), 1);
	klog_segment_unpin(s);
	/* A reference more keeps it; the last one closes it. */
	klog_segment_ref(s);
	klog_segment_unref(s);
	assert_int_equal(klog_fdcache_open_count(f->cache), 1);
	klog_segment_unref(s);
	assert_int_equal(klog_fdcache_open_count(f->cache), 0);

	assert_non_null(gone = klog_segment_new(f->cache, 500, 10, 1));
	assert_int_equal(klog_segment_pin(gone, f->dir, &err), -KLOG_ERANGE);
	assert_non_null(strstr(err.msg,
	    "/00000000000000000500.kafka: segment was deleted"));
	klog_segment_unref(gone);
}

/* Marks: kept a spacing apart, in order, the one before a position found;
 * a scan over a long file notes the starts it passes, each a true entry
 * start, and a cut drops those past it. */
static void
test_marks(void **state)
{
	struct fixture *f = *state;
	const int64_t sp = KLOG_SEGMENT_MARK_SPACING;
	size_t esz = klog_entry_size(1000), len = 0;
	int n = (int)(5 * sp / (int64_t)esz), fd;
	klog_segment_scan_t scan;
	klog_err_t err = { 0 };
	klog_segment_t *s;
	int64_t start, landed;
	uint8_t *buf, payload[1000];

	memset(payload, 'x', sizeof(payload));
	assert_non_null(buf = malloc((size_t)n * esz));
	for (int i = 0; i < n; i++)
		len += klog_entry_encode(buf + len, payload, sizeof(payload));
	s = segment_with(f, buf, len);
	fd = s->ent.fd;
	klog_segment_mark(s, 10);           /* too close to 0 */
	assert_int_equal(s->nmarks, 0);
	klog_segment_mark(s, 3 * sp);
	klog_segment_mark(s, sp + 5);
	klog_segment_mark(s, 3 * sp + 100); /* too close to 3 sp */
	klog_segment_mark(s, 2 * sp + 10);  /* too close to 3 sp after */
	assert_int_equal(s->nmarks, 2);
	assert_int_equal(s->marks[0], sp + 5);
	assert_int_equal(s->marks[1], 3 * sp);
	assert_int_equal(klog_segment_mark_before(s, sp), 0);
	assert_int_equal(klog_segment_mark_before(s, 2 * sp), sp + 5);
	assert_int_equal(klog_segment_mark_before(s, 9 * sp), 3 * sp);
	free(s->marks);
	s->marks = NULL;
	s->nmarks = s->marks_cap = 0;

	/* A scan to near the end notes about one start a MiB. */
	assert_int_equal(klog_segment_find_start(fd, 0, (int64_t)len - 10,
	    (int64_t)len, &start, &scan, &err), 0);
	assert_int_equal(start, (int64_t)len - (int64_t)esz);
	assert_true(scan.n >= 4 && scan.n <= 5);
	for (size_t i = 0; i < scan.n; i++) {
		assert_int_equal(scan.marks[i] % (int64_t)esz, 0);
		klog_segment_mark(s, scan.marks[i]);
	}
	assert_int_equal(s->nmarks, scan.n);
	/* From a mark, the same answer. */
	assert_int_equal(klog_segment_find_start(fd,
	    klog_segment_mark_before(s, 4 * sp + 7), 4 * sp + 7, (int64_t)len,
	    &start, NULL, &err), 0);
	assert_int_equal(start, (4 * sp + 7) - (4 * sp + 7) % (int64_t)esz);
	/* A cut drops the marks past it. */
	assert_int_equal(klog_segment_truncate(s, f->dir, 2 * sp + 1, &landed,
	    &err), 0);
	assert_true(s->nmarks >= 1);
	assert_true(s->marks[s->nmarks - 1] < landed);
	klog_segment_unref(s);
	free(buf);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_create_write),
		T(test_create_path_too_long),
		T(test_write_fails),
		T(test_recover_clean),
		T(test_recover_truncates),
		T(test_recover_large_entry),
		T(test_recover_magic2),
		T(test_boundary),
		T(test_boundary_crc),
		T(test_pin),
		T(test_marks),
	};
#undef T

	return cmocka_run_group_tests_name("segment", tests, NULL, NULL);
}
