/* Unit tests for retention on disk (lib/storage/retain.c) and its rule,
 * klog_retain_plan(). */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
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

#include "fx/failsync.h"
#include "fx/tmpdir.h"

#include "klog/base/error.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"
#include "klog/storage/retain.h"

#define NOW ((int64_t)1700000000000)
#define HOUR ((int64_t)3600 * 1000)

/* ---- the file work ---- */

struct fixture {
	char dir[64];
	klog_retain_t *r;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "retain"));
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	klog_retain_close(f->r);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

static void
make_dir(const struct fixture *f, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* A file of size bytes (contents do not matter here). */
static void
make_file(const struct fixture *f, const char *name, off_t size)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

static void
make_link(const struct fixture *f, const char *target, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	assert_int_equal(symlink(target, path), 0);
}

static void
remove_file(const struct fixture *f, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	assert_int_equal(unlink(path), 0);
}

static int
exists(const struct fixture *f, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	return lstat(path, &st) == 0;
}

static void
open_data(struct fixture *f)
{
	klog_err_t err = { 0, "" };

	assert_int_equal(klog_retain_open(f->dir, &f->r, &err), 0);
}

static void
test_open_missing(void **state)
{
	struct fixture *f = *state;
	klog_retain_t *r = (klog_retain_t *)1;
	klog_err_t err = { 0, "" };
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/nope", f->dir);
	assert_int_equal(klog_retain_open(path, &r, &err), -KLOG_ENOENT);
	assert_null(r);
	assert_non_null(strstr(err.msg, "nope"));
}

static void
test_parts(void **state)
{
	struct fixture *f = *state;
	klog_retain_part_t *parts;
	klog_err_t err = { 0, "" };
	size_t n;

	make_dir(f, "b-10");
	make_dir(f, "b-2");
	make_dir(f, "a.x_y-0");
	make_dir(f, "b-02");        /* not how klog writes a partition */
	make_dir(f, "no_dash");
	make_dir(f, "-1");
	make_dir(f, "outside");
	make_file(f, "c-0", 0);     /* a file, not a directory */
	make_file(f, ".lock", 0);
	make_link(f, "outside", "d-0");
	make_link(f, "/", "e-0");
	open_data(f);
	assert_int_equal(klog_retain_parts(f->r, &parts, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(parts[0].topic, "a.x_y");
	assert_int_equal(parts[0].partition, 0);
	assert_string_equal(parts[1].topic, "b");
	assert_int_equal(parts[1].partition, 2);
	assert_int_equal(parts[2].partition, 10);
	assert_int_equal(parts[2].fd, -1);
	klog_retain_parts_free(parts, n);
}

static void
load_one(struct fixture *f, klog_retain_part_t *p, int want,
    klog_err_t *err)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	strcpy(p->topic, "t");
	p->partition = 0;
	if (f->r == NULL)
		open_data(f);
	assert_int_equal(klog_retain_part_load(f->r, p, err), want);
}

static void
test_load_sorted(void **state)
{
	struct fixture *f = *state;
	klog_err_t err = { 0, "" };
	klog_retain_part_t p;

	make_dir(f, "t-0");
	make_file(f, "t-0/00000000000000000300.klog", 50);
	make_file(f, "t-0/00000000000000000000.klog", 100);
	make_file(f, "t-0/00000000000000000100.kafka", 200);
	make_file(f, "t-0/00000000000000000300.kafka", 0);  /* stray, empty */
	make_file(f, "t-0/0000000000000000010.klog", 7);    /* 19 digits */
	make_file(f, "t-0/00000000000000000000.log", 7);
	make_file(f, "t-0/notes.txt", 7);
	make_dir(f, "t-0/00000000000000000900.klog.d");
	load_one(f, &p, 0, &err);
	assert_int_equal(p.nsegs, 4);
	assert_int_equal(p.segs[0].base, 0);
	assert_int_equal(p.segs[1].base, 100);
	assert_int_equal(p.kafka[1], 1);
	assert_int_equal(p.segs[1].size, 200);
	assert_int_equal(p.segs[2].base, 300);
	assert_int_equal(p.segs[2].size, 0);
	assert_int_equal(p.kafka[2], 1);
	assert_int_equal(p.segs[3].size, 50);
	assert_int_equal(p.kafka[3], 0);
	assert_true(p.segs[0].mtime_ms > 0);
	assert_true(p.fd >= 0);
	klog_retain_part_close(&p);
	assert_int_equal(p.fd, -1);
	assert_null(p.segs);
}

static void
test_load_gap(void **state)
{
	struct fixture *f = *state;
	klog_err_t err = { 0, "" };
	klog_retain_part_t p;

	make_dir(f, "t-0");
	make_file(f, "t-0/00000000000000000000.klog", 100);
	make_file(f, "t-0/00000000000000000150.klog", 100);
	load_one(f, &p, -KLOG_ECORRUPT, &err);
	assert_non_null(strstr(err.msg,
	    "t-0/00000000000000000150.klog: gap: the previous segment ends "
	    "at 100"));
	klog_retain_part_close(&p);
	assert_int_equal(p.fd, -1);
}

static void
test_load_overlap(void **state)
{
	struct fixture *f = *state;
	klog_err_t err = { 0, "" };
	klog_retain_part_t p;

	make_dir(f, "t-0");
	make_file(f, "t-0/00000000000000000000.klog", 100);
	make_file(f, "t-0/00000000000000000050.klog", 100);
	load_one(f, &p, -KLOG_ECORRUPT, &err);
	assert_non_null(strstr(err.msg, "overlap"));
	klog_retain_part_close(&p);
}

static void
test_load_bad_files(void **state)
{
	struct fixture *f = *state;
	klog_err_t err = { 0, "" };
	klog_retain_part_t p;

	make_dir(f, "t-0");
	make_file(f, "t-0/00000000000000000000.klog", 100);
	make_file(f, "outside", 100);
	make_link(f, "../outside", "t-0/00000000000000000100.klog");
	load_one(f, &p, -KLOG_ECORRUPT, &err);
	assert_non_null(strstr(err.msg, "not a regular file"));
	klog_retain_part_close(&p);

	remove_file(f, "t-0/00000000000000000100.klog");
	make_file(f, "t-0/99999999999999999999.klog", 1);
	load_one(f, &p, -KLOG_ECORRUPT, &err);
	assert_non_null(strstr(err.msg, "base offset too large"));
	klog_retain_part_close(&p);
}

static void
test_load_gone(void **state)
{
	struct fixture *f = *state;
	klog_err_t err = { 0, "" };
	klog_retain_part_t p;

	load_one(f, &p, -KLOG_ENOENT, &err);
	klog_retain_part_close(&p);
	/* Swapped for a link after the listing: not followed. */
	make_dir(f, "elsewhere");
	make_link(f, "elsewhere", "t-0");
	load_one(f, &p, -KLOG_ECORRUPT, &err);
	assert_non_null(strstr(err.msg, "no longer a directory"));
	klog_retain_part_close(&p);
}

static void
test_unlink_sync(void **state)
{
	struct fixture *f = *state;
	klog_err_t err = { 0, "" };
	klog_retain_part_t p;

	make_dir(f, "t-0");
	make_file(f, "t-0/00000000000000000000.klog", 100);
	make_file(f, "t-0/00000000000000000100.kafka", 100);
	make_file(f, "t-0/00000000000000000200.klog", 100);
	load_one(f, &p, 0, &err);
	assert_int_equal(klog_retain_part_unlink(f->r, &p, 0, &err), 0);
	assert_int_equal(klog_retain_part_unlink(f->r, &p, 1, &err), 0);
	assert_false(exists(f, "t-0/00000000000000000000.klog"));
	assert_false(exists(f, "t-0/00000000000000000100.kafka"));
	assert_true(exists(f, "t-0/00000000000000000200.klog"));
	/* Already gone: its own code, and the path in the message. */
	assert_int_equal(klog_retain_part_unlink(f->r, &p, 0, &err),
	    -KLOG_ENOENT);
	assert_non_null(strstr(err.msg, "t-0/00000000000000000000.klog"));
	assert_int_equal(klog_retain_part_sync(f->r, &p, &err), 0);
	/* A failed sync: the deletions may not be on the disk, and it says
	 * so (klog-retain exits 74). */
	fsync_fails = 1;
	assert_int_equal(klog_retain_part_sync(f->r, &p, &err),
	    -KLOG_ESTORAGE);
	assert_non_null(strstr(err.msg, "t-0: Input/output error (the disk "
	    "may not hold the deletions"));
	klog_retain_part_close(&p);
}

static void
test_lock(void **state)
{
	struct fixture *f = *state;
	klog_retain_t *other = NULL;
	klog_err_t err = { 0, "" };
	char path[PATH_MAX];
	int fd;

	open_data(f);
	assert_int_equal(klog_retain_lock(f->r, 0, &err), 0);
	assert_true(exists(f, KLOG_RETAIN_LOCK));
	assert_false(exists(f, ".lock"));   /* never the broker's */
	/* flock(2) excludes another open file description, even in one
	 * process. */
	assert_int_equal(klog_retain_open(f->dir, &other, &err), 0);
	assert_int_equal(klog_retain_lock(other, 0, &err), -KLOG_EBUSY);
	assert_non_null(strstr(err.msg, "another klog-retain is running"));
	assert_int_equal(klog_retain_lock(other, 120, &err), -KLOG_EBUSY);
	/* The broker's lock file is a different file. */
	snprintf(path, sizeof(path), "%s/.lock", f->dir);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	close(fd);
	/* Closing releases it. */
	klog_retain_close(f->r);
	f->r = NULL;
	assert_int_equal(klog_retain_lock(other, 0, &err), 0);
	klog_retain_close(other);
}

/* ---- beside a live log (the broker's view of the same files) ---- */

static int
count_fds(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Append one set of 10 entries of 91-byte payloads (1000 bytes). */
static void
append_set(klog_log_t *log)
{
	uint8_t set[1000], payload[91];
	size_t len = 0;

	memset(payload, 'p', sizeof(payload));
	for (int i = 0; i < 10; i++)
		len += klog_entry_encode(set + len, payload, sizeof(payload));
	assert_int_equal(len, sizeof(set));
	assert_int_equal(klog_log_append(log, set, len, 10, NULL, NULL), 0);
}

/* What klog-retain does for one partition, with a byte limit. */
static size_t
retain_bytes(struct fixture *f, int64_t max_bytes)
{
	klog_retain_part_t *parts;
	klog_err_t err = { 0, "" };
	klog_retain_plan_t plan;
	size_t n;

	if (f->r == NULL)
		open_data(f);
	assert_int_equal(klog_retain_lock(f->r, 0, &err), 0);
	assert_int_equal(klog_retain_parts(f->r, &parts, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(klog_retain_part_load(f->r, &parts[0], &err), 0);
	klog_retain_plan(parts[0].segs, parts[0].nsegs, -1, max_bytes, NOW,
	    &plan);
	for (size_t i = 0; i < plan.count; i++)
		assert_int_equal(klog_retain_part_unlink(f->r, &parts[0], i,
		    &err), 0);
	assert_int_equal(klog_retain_part_sync(f->r, &parts[0], &err), 0);
	klog_retain_parts_free(parts, n);
	klog_retain_close(f->r);
	f->r = NULL;
	return plan.count;
}

static void
test_beside_live_log(void **state)
{
	struct fixture *f = *state;
	klog_log_config_t cfg;
	klog_log_slice_t held, sl;
	klog_err_t err = { 0, "" };
	klog_log_t *log = NULL;
	int64_t offs[4];
	int fds, nofs, held_fd;

	klog_log_config_default(&cfg);
	cfg.segment_bytes = 1000;
	assert_int_equal(klog_log_open(f->dir, "t", 0, &cfg, &log, &err), 0);
	for (int i = 0; i < 5; i++)
		append_set(log);
	assert_int_equal(klog_log_flush(log, &err), 0);
	assert_int_equal(klog_log_segment_count(log), 5);
	/* Reopened, the log has only its active segment open; then a reader
	 * opens the first one. */
	klog_log_close(log);
	assert_int_equal(klog_log_open(f->dir, "t", 0, &cfg, &log, &err), 0);
	assert_int_equal(klog_log_read(log, 100, 500, &held, &err), 0);
	fds = count_fds();

	assert_int_equal(retain_bytes(f, 2000), 3);
	/* Before the log notices: a segment it had not opened is out of
	 * range, and the earliest offset has moved. */
	assert_int_equal(klog_log_read(log, 2000, 100, &sl, &err),
	    -KLOG_ERANGE);
	assert_int_equal(klog_log_offsets_before(log, -2, offs, 4, &nofs), 0);
	assert_int_equal(nofs, 1);
	assert_int_equal(offs[0], 3000);
	assert_int_equal(klog_log_rescan(log, &err), 0);
	assert_int_equal(klog_log_start(log), 3000);
	assert_int_equal(klog_log_segment_count(log), 2);
	assert_int_equal(klog_log_size_bytes(log), 2000);
	assert_int_equal(klog_log_read(log, 1000, 100, &sl, &err),
	    -KLOG_ERANGE);
	assert_int_equal(klog_log_read(log, 3000, 100, &sl, &err), 0);
	klog_log_slice_release(&sl);
	{
		uint8_t buf[9];

		assert_int_equal(pread(held.fd, buf, sizeof(buf),
		    held.file_pos), (ssize_t)sizeof(buf));
		assert_int_equal(klog_be32(buf), 96);
	}
	/* A deleted file's descriptor goes with the last reference; the
	 * lock's and the data directory's are closed too. */
	held_fd = held.fd;
	klog_log_slice_release(&held);
	assert_int_equal(fcntl(held_fd, F_GETFD), -1);
	assert_int_equal(count_fds(), fds);  /* -1 for 0, +1 for 3000 */
	/* The log goes on appending and reopens as a whole partition. */
	append_set(log);
	assert_int_equal(klog_log_flush(log, &err), 0);
	klog_log_close(log);
	assert_int_equal(klog_log_open(f->dir, "t", 0, &cfg, &log, &err), 0);
	assert_int_equal(klog_log_start(log), 3000);
	assert_int_equal(klog_log_end(log), 6000);
	/* Repeated runs leak nothing, in either process. */
	fds = count_fds();
	for (int i = 0; i < 5; i++) {
		append_set(log);
		assert_int_equal(klog_log_flush(log, &err), 0);
		retain_bytes(f, 1000);
		assert_int_equal(klog_log_rescan(log, &err), 0);
		assert_int_equal(klog_log_read(log, klog_log_start(log), 100,
		    &sl, &err), 0);
		klog_log_slice_release(&sl);
		assert_int_equal(count_fds(), fds);
	}
	assert_int_equal(klog_log_segment_count(log), 1);
	klog_log_close(log);
}

/* ---- the retention rule ---- */

/* n contiguous segments of the given sizes and ages (ms before NOW). */
static void
make_segs(klog_segment_info_t *s, size_t n, const int64_t *sizes,
    const int64_t *ages)
{
	int64_t base = 0;

	for (size_t i = 0; i < n; i++) {
		s[i].base = base;
		s[i].size = sizes[i];
		s[i].mtime_ms = NOW - ages[i];
		base += sizes[i];
	}
}

static klog_retain_plan_t
plan(const klog_segment_info_t *s, size_t n, int64_t age, int64_t bytes)
{
	klog_retain_plan_t p = { 99, 99 };

	klog_retain_plan(s, n, age, bytes, NOW, &p);
	return p;
}

static void
test_plan_empty(void **state)
{
	klog_retain_plan_t p;

	(void)state;
	p = plan(NULL, 0, 0, 0);
	assert_int_equal(p.count, 0);
	assert_int_equal(p.newest_expired, 0);
}

static void
test_plan_disabled(void **state)
{
	int64_t sizes[] = { 100, 100, 100 }, ages[] = { 9 * HOUR, 9 * HOUR,
	    9 * HOUR };
	klog_segment_info_t s[3];
	klog_retain_plan_t p;

	(void)state;
	make_segs(s, 3, sizes, ages);
	p = plan(s, 3, -1, -1);
	assert_int_equal(p.count, 0);
	assert_int_equal(p.newest_expired, 0);
}

static void
test_plan_age_prefix(void **state)
{
	/* Old, new, old, new: the walk stops at the first young one. */
	int64_t sizes[] = { 100, 100, 100, 100 };
	int64_t ages[] = { 2 * HOUR, 0, 2 * HOUR, 0 };
	klog_segment_info_t s[4];
	klog_retain_plan_t p;

	(void)state;
	make_segs(s, 4, sizes, ages);
	p = plan(s, 4, HOUR, -1);
	assert_int_equal(p.count, 1);
	assert_int_equal(p.newest_expired, 0);
	/* A young first segment protects the old ones behind it. */
	s[0].mtime_ms = NOW;
	p = plan(s, 4, HOUR, -1);
	assert_int_equal(p.count, 0);
}

static void
test_plan_age_exact(void **state)
{
	int64_t sizes[] = { 100, 100 }, ages[] = { HOUR, 0 };
	klog_segment_info_t s[2];

	(void)state;
	make_segs(s, 2, sizes, ages);
	/* Exactly max_age old is not older than max_age. */
	assert_int_equal(plan(s, 2, HOUR, -1).count, 0);
	s[0].mtime_ms--;
	assert_int_equal(plan(s, 2, HOUR, -1).count, 1);
	/* max_age 0: anything from before now goes, now itself stays. */
	s[0].mtime_ms = NOW;
	assert_int_equal(plan(s, 2, 0, -1).count, 0);
	s[0].mtime_ms = NOW - 1;
	assert_int_equal(plan(s, 2, 0, -1).count, 1);
	/* A file from the future is young. */
	s[0].mtime_ms = NOW + HOUR;
	assert_int_equal(plan(s, 2, 0, -1).count, 0);
}

static void
test_plan_age_extremes(void **state)
{
	int64_t sizes[] = { 100, 100 }, ages[] = { 0, 0 };
	klog_segment_info_t s[2];

	(void)state;
	make_segs(s, 2, sizes, ages);
	/* A file already gone counts as expired, without overflow. */
	s[0].mtime_ms = KLOG_RETAIN_GONE;
	assert_int_equal(plan(s, 2, HOUR, -1).count, 1);
	assert_int_equal(plan(s, 2, INT64_MAX - 1, -1).count, 1);
	/* The oldest possible real mtime with the largest age: kept. */
	s[0].mtime_ms = 0;
	assert_int_equal(plan(s, 2, INT64_MAX, -1).count, 0);
}

static void
test_plan_never_newest(void **state)
{
	int64_t sizes[] = { 100, 100, 100 }, ages[] = { 9 * HOUR, 9 * HOUR,
	    9 * HOUR };
	klog_segment_info_t s[3];
	klog_retain_plan_t p;

	(void)state;
	make_segs(s, 3, sizes, ages);
	p = plan(s, 3, HOUR, -1);
	assert_int_equal(p.count, 2);
	assert_int_equal(p.newest_expired, 1);
	p = plan(s, 3, -1, 0);
	assert_int_equal(p.count, 2);
	assert_int_equal(p.newest_expired, 1);
	/* The only segment is never deleted. */
	p = plan(s, 1, 0, 0);
	assert_int_equal(p.count, 0);
	assert_int_equal(p.newest_expired, 1);
	/* An empty newest segment still fits a limit of 0 without the
	 * others: it is reported, not deleted. */
	s[2].size = 0;
	p = plan(s, 3, -1, 0);
	assert_int_equal(p.count, 2);
	assert_int_equal(p.newest_expired, 1);
}

static void
test_plan_size(void **state)
{
	int64_t sizes[] = { 1000, 1000, 1000, 1000, 500 };
	int64_t ages[] = { 0, 0, 0, 0, 0 };
	klog_segment_info_t s[5];
	klog_retain_plan_t p;

	(void)state;
	make_segs(s, 5, sizes, ages);       /* 4500 bytes */
	/* 4500 - 1000 >= 2600, 3500 - 1000 < 2600. */
	assert_int_equal(plan(s, 5, -1, 2600).count, 1);
	/* Exactly the limit left after deleting: they go. */
	assert_int_equal(plan(s, 5, -1, 2500).count, 2);
	assert_int_equal(plan(s, 5, -1, 2501).count, 1);
	/* At the limit already: nothing. */
	assert_int_equal(plan(s, 5, -1, 4500).count, 0);
	assert_int_equal(plan(s, 5, -1, 3501).count, 0);
	assert_int_equal(plan(s, 5, -1, 100000).count, 0);
	/* 1: everything but the newest, and the newest is not past it. */
	p = plan(s, 5, -1, 1);
	assert_int_equal(p.count, 4);
	assert_int_equal(p.newest_expired, 0);
}

static void
test_plan_age_then_size(void **state)
{
	int64_t sizes[] = { 1000, 1000, 1000, 1000, 500 };
	int64_t ages[] = { 2 * HOUR, 0, 0, 0, 0 };
	klog_segment_info_t s[5];

	(void)state;
	make_segs(s, 5, sizes, ages);
	/* Age takes the first; size goes on from there over 3500 bytes. */
	assert_int_equal(plan(s, 5, HOUR, 2500).count, 2);
	assert_int_equal(plan(s, 5, HOUR, 1500).count, 3);
	/* Size alone would take more than age: the union is a prefix. */
	assert_int_equal(plan(s, 5, HOUR, 100000).count, 1);
	/* Empty segments (a stray file) go with their neighbours. */
	s[1].size = 0;
	s[2].base = s[1].base;
	assert_int_equal(plan(s, 5, HOUR, 2500).count, 2);
	assert_int_equal(plan(s, 5, HOUR, 2501).count, 1);
}

/* Over many generated inputs: a prefix, never the newest, never below the
 * byte limit, and the age rule agrees with a plain loop. */
static void
test_plan_properties(void **state)
{
	klog_segment_info_t s[8];
	unsigned seed = 12345;
	klog_retain_plan_t p;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)(rand_r(&seed) % 9), age_k = 0;
		int64_t total = 0, left = 0, age = -1, bytes = -1;

		for (size_t i = 0; i < n; i++) {
			s[i].base = total;
			s[i].size = rand_r(&seed) % 4 * 100;
			s[i].mtime_ms = NOW - (rand_r(&seed) % 5) * HOUR;
			total += s[i].size;
		}
		if (rand_r(&seed) % 3)
			age = (rand_r(&seed) % 5) * HOUR;
		if (rand_r(&seed) % 3)
			bytes = rand_r(&seed) % 1200;
		p = plan(s, n, age, bytes);
		assert_true(p.count <= (n > 0 ? n - 1 : 0));
		assert_true(!p.newest_expired || p.count == n - 1);
		if (age >= 0)
			while (age_k < n && NOW - s[age_k].mtime_ms > age)
				age_k++;
		for (size_t i = p.count; i < n; i++)
			left += s[i].size;
		/* Whatever went beyond the age rule kept the limit. */
		if (p.count > age_k && bytes >= 0)
			assert_true(left >= bytes);
		/* And stopped where one more would go below it. */
		if (bytes >= 0 && !p.newest_expired && p.count >= age_k &&
		    p.count < n)
			assert_true(left - s[p.count].size < bytes);
		if (bytes < 0 && age >= 0)
			assert_int_equal(p.count + (size_t)p.newest_expired,
			    age_k);
		if (age < 0 && bytes < 0)
			assert_int_equal(p.count, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_open_missing),
		T(test_parts),
		T(test_load_sorted),
		T(test_load_gap),
		T(test_load_overlap),
		T(test_load_bad_files),
		T(test_load_gone),
		T(test_unlink_sync),
		T(test_lock),
		T(test_beside_live_log),
#undef T
		cmocka_unit_test(test_plan_empty),
		cmocka_unit_test(test_plan_disabled),
		cmocka_unit_test(test_plan_age_prefix),
		cmocka_unit_test(test_plan_age_exact),
		cmocka_unit_test(test_plan_age_extremes),
		cmocka_unit_test(test_plan_never_newest),
		cmocka_unit_test(test_plan_size),
		cmocka_unit_test(test_plan_age_then_size),
		cmocka_unit_test(test_plan_properties),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
