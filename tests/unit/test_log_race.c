/*
 * The partition log opening while klog-retain deletes (lib/log.c): a
 * segment that is listed by readdir(3) but gone by the time it is stat'ed
 * must be skipped, not fail the open.
 *
 * The race is made deterministic by interposing fstatat(2) in this test
 * binary (the library is linked statically, so its calls land here): for
 * one chosen name, the file is unlinked first, as klog-retain would between
 * the broker's listing and its stat.  Kept apart from test_log.c so that no
 * other test runs with the interposer.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
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

#include "klog/error.h"
#include "klog/format.h"
#include "klog/log.h"

#define TOPIC "race"
#define SEG0 "00000000000000000000.klog"

/* The name whose next fstatat() unlinks it first ("" for none), and how
 * often that happened: test-only state for the interposer. */
static char vanish_name[64];
static int vanished;

int fstatat(int dfd, const char *name, struct stat *st, int flags);

int
fstatat(int dfd, const char *name, struct stat *st, int flags)
{
	static int (*real)(int, const char *, struct stat *, int);

	if (real == NULL)
		real = (int (*)(int, const char *, struct stat *, int))
		    dlsym(RTLD_NEXT, "fstatat");
	if (vanish_name[0] != '\0' && strcmp(name, vanish_name) == 0) {
		vanish_name[0] = '\0';
		if (unlinkat(dfd, name, 0) == 0)
			vanished++;
	}
	return real(dfd, name, st, flags);
}

struct fixture {
	char dir[64];
	int64_t end;        /* the written end after fill() */
	int64_t seg1;       /* base of the second segment */
};

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Three segments of 100-byte messages: 0, seg1 and a third, active one. */
static void
fill(struct fixture *f)
{
	klog_log_config_t cfg;
	klog_log_t *log;
	klog_err_t err;
	uint8_t payload[91], entry[100];
	klog_segment_info_t segs[8];
	size_t n;

	klog_log_config_default(&cfg);
	cfg.segment_bytes = 1000;
	assert_int_equal(klog_log_open(f->dir, TOPIC, 0, &cfg, &log, &err), 0);
	memset(payload, 'p', sizeof(payload));
	for (int i = 0; i < 25; i++) {
		assert_int_equal(klog_entry_encode(entry, payload,
		    sizeof(payload)), sizeof(entry));
		assert_int_equal(klog_log_append(log, entry, sizeof(entry), 1,
		    NULL, &err), 0);
	}
	assert_int_equal(klog_log_flush(log, &err), 0);
	assert_int_equal(klog_log_segments(log, segs, 8, &n), 0);
	assert_int_equal(n, 3);
	f->seg1 = segs[1].base;
	f->end = klog_log_end(log);
	klog_log_close(log);
}

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/klog-test-log-race.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	fill(f);
	vanish_name[0] = '\0';
	vanished = 0;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	vanish_name[0] = '\0';
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* Open with the oldest segment vanishing between listing and stat. */
static void
open_racing(struct fixture *f, int recover)
{
	klog_log_config_t cfg;
	klog_log_slice_t slice;
	klog_log_t *log = NULL;
	klog_err_t err = { 0 };
	int rc;

	klog_log_config_default(&cfg);
	cfg.segment_bytes = 1000;
	cfg.recover = recover;
	snprintf(vanish_name, sizeof(vanish_name), "%s", SEG0);
	rc = klog_log_open(f->dir, TOPIC, 0, &cfg, &log, &err);
	assert_int_equal(vanished, 1);
	if (rc != 0)
		fail_msg("open: %s", klog_err_text(&err, rc));
	/* The partition starts at the next segment, as after a rescan. */
	assert_int_equal(klog_log_start(log), f->seg1);
	assert_int_equal(klog_log_end(log), f->end);
	assert_int_equal(klog_log_segment_count(log), 2);
	assert_int_equal(klog_log_read(log, 0, 4096, &slice, &err),
	    -KLOG_ERANGE);
	assert_int_equal(klog_log_read(log, f->seg1, 4096, &slice, &err), 0);
	assert_true(slice.len > 0);
	klog_log_slice_release(&slice);
	klog_log_close(log);
}

static void
test_segment_gone_before_stat(void **state)
{
	open_racing(*state, 0);
}

static void
test_segment_gone_before_stat_recovering(void **state)
{
	open_racing(*state, 1);
}

/* Other stat failures still fail the open: only a vanished file is
 * skipped.  A name that is a dangling link is not a regular file. */
static void
test_other_problems_still_fail(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_log_t *log = NULL;
	klog_err_t err = { 0 };

	snprintf(path, sizeof(path), "%s/" TOPIC "-0/%020lld.klog", f->dir,
	    (long long)f->end);
	assert_int_equal(symlink("nowhere", path), 0);
	assert_int_equal(klog_log_open(f->dir, TOPIC, 0, NULL, &log, &err),
	    -KLOG_ECORRUPT);
	assert_null(log);
	assert_non_null(strstr(err.msg, "not a regular file"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_segment_gone_before_stat,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_segment_gone_before_stat_recovering, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_problems_still_fail,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
