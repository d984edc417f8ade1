/*
 * The partition log opening while klog-retain deletes (lib/storage/log.c): a
 * segment that is listed by readdir(3) but gone by the time it is stat'ed
 * must be skipped, not fail the open; and since the stats go in directory
 * order, older segments stat'ed before the deletion are gone too and must
 * not leave a gap.
 *
 * The race is made deterministic by interposing fstatat(2) in this test
 * binary (the library is linked statically, so its calls land here): files
 * are unlinked at a chosen stat, as klog-retain would between the broker's
 * listing and its stats.  Kept apart from test_log.c so that no other test
 * runs with the interposer.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dlfcn.h>
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
#include "klog/storage/format.h"
#include "klog/storage/log.h"

#define TOPIC "race"
#define SEG0 "00000000000000000000.klog"
#define ENTRY 100          /* bytes per message */
#define SEG_BYTES 1000     /* 10 messages per segment */

/*
 * Test-only state for the interposer: the name whose next fstatat()
 * unlinks it first ("" for none); or, with sweep_at > 0, the segment stat
 * at which every segment but the newest (sweep_keep) is unlinked, oldest
 * first, as one klog-retain run does.  vanished counts the unlinks.
 */
static char vanish_name[64];
static int sweep_at, sweep_calls;
static int64_t sweep_keep;
static int vanished;

static void
sweep(int dfd)
{
	char name[64];

	for (int64_t base = 0; base < sweep_keep; base += SEG_BYTES) {
		snprintf(name, sizeof(name), "%020lld.klog", (long long)base);
		if (unlinkat(dfd, name, 0) == 0)
			vanished++;
	}
}

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
	if (sweep_at > 0 && strstr(name, ".klog") != NULL &&
	    ++sweep_calls == sweep_at)
		sweep(dfd);
	return real(dfd, name, st, flags);
}

struct fixture {
	char dir[64];
	int64_t end;        /* the written end after fill() */
	int64_t seg1;       /* base of the second segment */
	int64_t newest;     /* base of the last segment */
};

/* Messages of 100 bytes, 10 to a segment: 25 make segments 0, seg1 and a
 * third, active one. */
static void
fill(struct fixture *f, int messages)
{
	klog_log_config_t cfg;
	klog_log_t *log;
	klog_err_t err;
	uint8_t payload[ENTRY - KLOG_MSG_OVERHEAD], entry[ENTRY];
	klog_segment_info_t segs[32];
	size_t n;

	klog_log_config_default(&cfg);
	cfg.segment_bytes = SEG_BYTES;
	assert_int_equal(klog_log_open(f->dir, TOPIC, 0, &cfg, &log, &err), 0);
	memset(payload, 'p', sizeof(payload));
	for (int i = 0; i < messages; i++) {
		assert_int_equal(klog_entry_encode(entry, payload,
		    sizeof(payload)), sizeof(entry));
		assert_int_equal(klog_log_append(log, entry, sizeof(entry), 1,
		    NULL, &err), 0);
	}
	assert_int_equal(klog_log_flush(log, &err), 0);
	assert_int_equal(klog_log_segments(log, segs, 32, &n), 0);
	assert_int_equal(n, (size_t)(messages + 9) / 10);
	f->seg1 = segs[1].base;
	f->newest = segs[n - 1].base;
	f->end = klog_log_end(log);
	klog_log_close(log);
}

static int
setup_n(void **state, int messages)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "log-race"));
	fill(f, messages);
	vanish_name[0] = '\0';
	sweep_at = sweep_calls = 0;
	vanished = 0;
	*state = f;
	return 0;
}

static int
setup(void **state)
{
	return setup_n(state, 25);
}

/* Twelve segments, the last one active. */
static int
setup_many(void **state)
{
	return setup_n(state, 115);
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	vanish_name[0] = '\0';
	sweep_at = 0;
	tmpdir_remove(f->dir);
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
	cfg.segment_bytes = SEG_BYTES;
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

/*
 * Every segment but the newest goes at once, halfway through the stats:
 * whatever the directory order, segments stat'ed before that are gone too,
 * and the open must neither fail on them nor see a gap after them.
 */
static void
test_sweep_halfway(void **state)
{
	struct fixture *f = *state;
	klog_log_config_t cfg;
	klog_log_slice_t slice;
	klog_log_t *log = NULL;
	klog_err_t err = { 0 };
	int rc;

	klog_log_config_default(&cfg);
	cfg.segment_bytes = SEG_BYTES;
	sweep_keep = f->newest;
	sweep_at = 6;
	rc = klog_log_open(f->dir, TOPIC, 0, &cfg, &log, &err);
	assert_int_equal(vanished, 11);
	if (rc != 0)
		fail_msg("open: %s", klog_err_text(&err, rc));
	assert_int_equal(klog_log_end(log), f->end);
	/* What was stat'ed before the sweep and is newer than everything
	 * that vanished may still be listed (a rescan drops it), but the
	 * newest is readable. */
	assert_int_equal(klog_log_read(log, f->newest, 4096, &slice, &err),
	    0);
	assert_int_equal(slice.len, f->end - f->newest);
	klog_log_slice_release(&slice);
	assert_int_equal(klog_log_rescan(log, &err), 0);
	assert_int_equal(klog_log_start(log), f->newest);
	assert_int_equal(klog_log_segment_count(log), 1);
	klog_log_close(log);
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
		cmocka_unit_test_setup_teardown(test_sweep_halfway, setup_many,
		    teardown),
		cmocka_unit_test_setup_teardown(test_other_problems_still_fail,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
