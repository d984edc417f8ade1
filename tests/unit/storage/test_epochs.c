/* Unit tests for a replica's leader epoch file (lib/storage/epochs.c). */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
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

#define DIRFX_NAME "epochs"
#include "fx/dirfx.h"

#include "klog/base/error.h"
#include "klog/storage/epochs.h"

static klog_epochs_t *
open_epochs(const char *dir)
{
	klog_epochs_t *e = NULL;
	klog_err_t err = { 0 };
	int r = klog_epochs_open(dir, &e, &err);

	if (r != 0)
		fail_msg("open: %s", klog_err_text(&err, r));
	assert_non_null(e);
	return e;
}

static void
append(klog_epochs_t *e, int32_t epoch, int64_t start)
{
	klog_err_t err = { 0 };
	int r = klog_epochs_append(e, epoch, start, &err);

	if (r != 0)
		fail_msg("append %d at %lld: %s", (int)epoch,
		    (long long)start, klog_err_text(&err, r));
}

/* e holds exactly the n pairs want[0..n). */
static void
assert_epochs(const klog_epochs_t *e, const klog_epoch_t *want, size_t n)
{
	assert_int_equal(klog_epochs_count(e), n);
	for (size_t i = 0; i < n; i++) {
		klog_epoch_t got = klog_epochs_get(e, i);

		assert_int_equal(got.epoch, want[i].epoch);
		assert_int_equal(got.start, want[i].start);
	}
	assert_int_equal(klog_epochs_latest(e), n ? want[n - 1].epoch : -1);
}

static void
epoch_path(char *buf, size_t len, const char *dir)
{
	snprintf(buf, len, "%s/" KLOG_EPOCHS_FILE, dir);
}

static void
write_text(const char *dir, const char *text)
{
	char path[PATH_MAX];
	FILE *fp;

	epoch_path(path, sizeof(path), dir);
	assert_non_null(fp = fopen(path, "w"));
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

/* The epoch file's whole text, into buf. */
static void
read_text(const char *dir, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *fp;
	size_t n;

	epoch_path(path, sizeof(path), dir);
	assert_non_null(fp = fopen(path, "r"));
	n = fread(buf, 1, len - 1, fp);
	buf[n] = '\0';
	fclose(fp);
}

/* The names in dir, other than . and .., joined by spaces, sorted. */
static void
dir_names(const char *dir, char *buf, size_t len)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);

	assert_true(n >= 0);
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") != 0 &&
		    strcmp(ents[i]->d_name, "..") != 0) {
			if (buf[0] != '\0')
				strncat(buf, " ", len - strlen(buf) - 1);
			strncat(buf, ents[i]->d_name, len - strlen(buf) - 1);
		}
		free(ents[i]);
	}
	free(ents);
}

/* ---- tests ---- */

static void
test_open_missing(void **state)
{
	struct fixture *f = *state;
	klog_epochs_t *e = open_epochs(f->dir);
	char names[256];

	assert_int_equal(klog_epochs_count(e), 0);
	assert_int_equal(klog_epochs_latest(e), -1);
	/* Opening creates nothing. */
	dir_names(f->dir, names, sizeof(names));
	assert_string_equal(names, "");
	klog_epochs_free(e);
}

static void
test_open_missing_dir(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	klog_epochs_t *e = (klog_epochs_t *)&e;
	klog_err_t err = { 0 };

	/* A directory that does not exist has no epoch file either. */
	snprintf(path, sizeof(path), "%s/nope", f->dir);
	assert_int_equal(klog_epochs_open(path, &e, &err), 0);
	assert_int_equal(klog_epochs_count(e), 0);
	klog_epochs_free(e);
}

static void
test_round_trip(void **state)
{
	static const klog_epoch_t want[] = { { 0, 0 }, { 3, 100 }, { 7, 250 } };
	struct fixture *f = *state;
	klog_epochs_t *e = open_epochs(f->dir);
	char text[256], names[256];

	append(e, 0, 0);
	append(e, 3, 100);
	append(e, 7, 250);
	assert_epochs(e, want, 3);
	klog_epochs_free(e);

	read_text(f->dir, text, sizeof(text));
	assert_string_equal(text, "klog-epochs 1\n0 0\n3 100\n7 250\n");
	/* No temp file is left behind. */
	dir_names(f->dir, names, sizeof(names));
	assert_string_equal(names, KLOG_EPOCHS_FILE);

	e = open_epochs(f->dir);
	assert_epochs(e, want, 3);
	/* and it goes on from what it read */
	append(e, 8, 250);
	klog_epochs_free(e);
	e = open_epochs(f->dir);
	assert_int_equal(klog_epochs_count(e), 3);
	assert_int_equal(klog_epochs_latest(e), 8);
	klog_epochs_free(e);
}

static void
test_append_refuses(void **state)
{
	static const klog_epoch_t want[] = { { 2, 10 }, { 5, 40 } };
	struct fixture *f = *state;
	klog_epochs_t *e = open_epochs(f->dir);
	klog_err_t err = { 0 };
	char text[256];

	append(e, 2, 10);
	append(e, 5, 40);
	/* the same epoch again, an older one, an earlier start, a negative
	 * epoch */
	assert_int_equal(klog_epochs_append(e, 5, 50, &err), -KLOG_EINVAL);
	assert_int_equal(klog_epochs_append(e, 4, 50, &err), -KLOG_EINVAL);
	assert_int_equal(klog_epochs_append(e, 6, 39, &err), -KLOG_EINVAL);
	assert_int_equal(klog_epochs_append(e, -1, 50, &err), -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "epoch -1 at 50"));
	assert_epochs(e, want, 2);
	read_text(f->dir, text, sizeof(text));
	assert_string_equal(text, "klog-epochs 1\n2 10\n5 40\n");
	klog_epochs_free(e);

	/* On an empty file a negative epoch is refused too. */
	tmpdir_remove(f->dir);
	assert_int_equal(mkdir(f->dir, 0700), 0);
	e = open_epochs(f->dir);
	assert_int_equal(klog_epochs_append(e, -1, 0, &err), -KLOG_EINVAL);
	assert_int_equal(klog_epochs_count(e), 0);
	klog_epochs_free(e);
}

static void
test_empty_epoch_replaced(void **state)
{
	static const klog_epoch_t want[] = { { 1, 0 }, { 4, 30 } };
	struct fixture *f = *state;
	klog_epochs_t *e = open_epochs(f->dir);
	char text[256];

	append(e, 1, 0);
	append(e, 2, 30);
	append(e, 3, 30);   /* epoch 2 wrote nothing */
	append(e, 4, 30);   /* nor did 3 */
	assert_epochs(e, want, 2);
	klog_epochs_free(e);
	read_text(f->dir, text, sizeof(text));
	assert_string_equal(text, "klog-epochs 1\n1 0\n4 30\n");
}

static void
test_truncate(void **state)
{
	static const klog_epoch_t all[] = {
		{ 1, 0 }, { 2, 100 }, { 3, 200 }, { 5, 300 },
	};
	struct fixture *f = *state;
	klog_epochs_t *e = open_epochs(f->dir);
	klog_err_t err = { 0 };
	char text[256], names[256];

	for (size_t i = 0; i < 4; i++)
		append(e, all[i].epoch, all[i].start);
	/* past every start: nothing goes */
	assert_int_equal(klog_epochs_truncate(e, 301, &err), 0);
	assert_epochs(e, all, 4);
	/* at a start: that epoch goes too */
	assert_int_equal(klog_epochs_truncate(e, 300, &err), 0);
	assert_epochs(e, all, 3);
	/* inside epoch 2: epoch 3 goes, 2 stays */
	assert_int_equal(klog_epochs_truncate(e, 150, &err), 0);
	assert_epochs(e, all, 2);
	klog_epochs_free(e);

	e = open_epochs(f->dir);
	assert_epochs(e, all, 2);
	read_text(f->dir, text, sizeof(text));
	assert_string_equal(text, "klog-epochs 1\n1 0\n2 100\n");
	/* to 0: every epoch goes, and the file says so */
	assert_int_equal(klog_epochs_truncate(e, 0, &err), 0);
	assert_epochs(e, all, 0);
	klog_epochs_free(e);
	read_text(f->dir, text, sizeof(text));
	assert_string_equal(text, "klog-epochs 1\n");
	dir_names(f->dir, names, sizeof(names));
	assert_string_equal(names, KLOG_EPOCHS_FILE);
	e = open_epochs(f->dir);
	assert_int_equal(klog_epochs_count(e), 0);
	/* A truncated epoch can be appended again afterwards. */
	append(e, 2, 0);
	assert_int_equal(klog_epochs_latest(e), 2);
	klog_epochs_free(e);
}

static void
test_clear(void **state)
{
	struct fixture *f = *state;
	klog_epochs_t *e = open_epochs(f->dir);
	klog_err_t err = { 0 };
	char text[256];

	/* Clearing nothing writes nothing. */
	assert_int_equal(klog_epochs_clear(e, &err), 0);
	assert_int_equal(access(f->dir, F_OK), 0);
	epoch_path(text, sizeof(text), f->dir);
	assert_int_equal(access(text, F_OK), -1);

	append(e, 1, 0);
	append(e, 2, 50);
	assert_int_equal(klog_epochs_clear(e, &err), 0);
	assert_int_equal(klog_epochs_count(e), 0);
	assert_int_equal(klog_epochs_latest(e), -1);
	/* After a reset the log starts at a later base: any epoch above the
	 * old ones may start anywhere. */
	append(e, 3, 10);
	klog_epochs_free(e);
	read_text(f->dir, text, sizeof(text));
	assert_string_equal(text, "klog-epochs 1\n3 10\n");
}

static void
test_end_of(void **state)
{
	struct fixture *f = *state;
	klog_epochs_t *e = open_epochs(f->dir);
	int32_t found = 99;

	/* No epochs: the whole log, nothing found. */
	assert_int_equal(klog_epochs_end_of(e, 4, 500, &found), 500);
	assert_int_equal(found, -1);
	found = 99;
	assert_int_equal(klog_epochs_end_of(e, -1, 500, &found), 500);
	assert_int_equal(found, -1);

	append(e, 2, 10);
	append(e, 4, 100);
	append(e, 7, 300);
	/* the newest epoch ends at the log end */
	assert_int_equal(klog_epochs_end_of(e, 7, 500, &found), 500);
	assert_int_equal(found, 7);
	/* above the newest: the newest, to the log end */
	assert_int_equal(klog_epochs_end_of(e, 9, 500, &found), 500);
	assert_int_equal(found, 7);
	/* an older one ends where the next starts */
	assert_int_equal(klog_epochs_end_of(e, 4, 500, &found), 300);
	assert_int_equal(found, 4);
	assert_int_equal(klog_epochs_end_of(e, 2, 500, &found), 100);
	assert_int_equal(found, 2);
	/* between two known ones: the largest below it, and its end */
	assert_int_equal(klog_epochs_end_of(e, 5, 500, &found), 300);
	assert_int_equal(found, 4);
	assert_int_equal(klog_epochs_end_of(e, 3, 500, &found), 100);
	assert_int_equal(found, 2);
	/* below the first: the first's start, nothing found */
	found = 99;
	assert_int_equal(klog_epochs_end_of(e, 1, 500, &found), 10);
	assert_int_equal(found, -1);
	found = 99;
	assert_int_equal(klog_epochs_end_of(e, -1, 500, &found), 10);
	assert_int_equal(found, -1);
	klog_epochs_free(e);
}

static void
test_at(void **state)
{
	struct fixture *f = *state;
	klog_epochs_t *e = open_epochs(f->dir);
	int64_t next = 0;

	assert_int_equal(klog_epochs_at(e, 0, &next), -1);
	assert_int_equal(next, INT64_MAX);

	append(e, 2, 10);
	append(e, 4, 100);
	append(e, 7, 300);
	assert_int_equal(klog_epochs_at(e, 9, &next), -1);
	assert_int_equal(next, 10);
	assert_int_equal(klog_epochs_at(e, 10, &next), 2);
	assert_int_equal(next, 100);
	assert_int_equal(klog_epochs_at(e, 99, &next), 2);
	assert_int_equal(next, 100);
	assert_int_equal(klog_epochs_at(e, 100, &next), 4);
	assert_int_equal(next, 300);
	assert_int_equal(klog_epochs_at(e, 299, &next), 4);
	assert_int_equal(next, 300);
	assert_int_equal(klog_epochs_at(e, 300, &next), 7);
	assert_int_equal(next, INT64_MAX);
	assert_int_equal(klog_epochs_at(e, 1000000, &next), 7);
	assert_int_equal(next, INT64_MAX);
	klog_epochs_free(e);
}

static void
assert_corrupt(const char *dir, const char *text)
{
	klog_epochs_t *e = (klog_epochs_t *)&e;
	klog_err_t err = { 0 };

	write_text(dir, text);
	assert_int_equal(klog_epochs_open(dir, &e, &err), -KLOG_ECORRUPT);
	assert_null(e);
	assert_non_null(strstr(err.msg, KLOG_EPOCHS_FILE));
}

static void
test_corrupt(void **state)
{
	struct fixture *f = *state;
	klog_epochs_t *e;

	assert_corrupt(f->dir, "");
	assert_corrupt(f->dir, "klog-epochs 2\n0 0\n");
	assert_corrupt(f->dir, "klog-epochs 1");            /* no newline */
	assert_corrupt(f->dir, "0 0\n");
	assert_corrupt(f->dir, "klog-epochs 1\n3 0\n2 10\n");  /* decreasing */
	assert_corrupt(f->dir, "klog-epochs 1\n3 0\n3 10\n");  /* repeated */
	assert_corrupt(f->dir, "klog-epochs 1\n3 10\n4 9\n");  /* start back */
	assert_corrupt(f->dir, "klog-epochs 1\n3 0\nxyz\n");
	assert_corrupt(f->dir, "klog-epochs 1\n3 0 7\n");
	assert_corrupt(f->dir, "klog-epochs 1\n3\n");
	assert_corrupt(f->dir, "klog-epochs 1\n3 0x\n");
	assert_corrupt(f->dir, "klog-epochs 1\n-1 0\n");
	assert_corrupt(f->dir, "klog-epochs 1\n1 -5\n");
	assert_corrupt(f->dir, "klog-epochs 1\n2147483648 0\n");
	assert_corrupt(f->dir, "klog-epochs 1\n1 0\n\n");
	assert_corrupt(f->dir, "klog-epochs 1\n1 0");       /* cut line */

	/* The same checks pass a well-formed file. */
	write_text(f->dir, "klog-epochs 1\n0 0\n2147483647 9\n");
	e = open_epochs(f->dir);
	assert_int_equal(klog_epochs_count(e), 2);
	assert_int_equal(klog_epochs_latest(e), INT32_MAX);
	klog_epochs_free(e);
}

/*
 * A failed save (the temp file cannot be made: a directory has its name)
 * changes neither the file nor what the epochs say: a caller that retries
 * (a new leader's klog_replica_lead) must find the epoch still unrecorded.
 */
static void
test_save_fails(void **state)
{
	static const klog_epoch_t want[] = { { 1, 0 }, { 2, 10 } };
	struct fixture *f = *state;
	klog_epochs_t *e = open_epochs(f->dir);
	klog_err_t err = { 0 };
	char text[256], tmp[PATH_MAX];

	append(e, 1, 0);
	append(e, 2, 10);
	snprintf(tmp, sizeof(tmp), "%s/" KLOG_EPOCHS_FILE ".tmp", f->dir);
	assert_int_equal(mkdir(tmp, 0700), 0);

	assert_true(klog_epochs_append(e, 3, 20, &err) < 0);
	assert_non_null(strstr(err.msg, KLOG_EPOCHS_FILE ".tmp"));
	assert_epochs(e, want, 2);
	/* an epoch that wrote nothing is not lost to a failed replacement */
	assert_true(klog_epochs_append(e, 3, 10, &err) < 0);
	assert_epochs(e, want, 2);
	assert_true(klog_epochs_truncate(e, 10, &err) < 0);
	assert_epochs(e, want, 2);
	assert_true(klog_epochs_clear(e, &err) < 0);
	assert_epochs(e, want, 2);
	read_text(f->dir, text, sizeof(text));
	assert_string_equal(text, "klog-epochs 1\n1 0\n2 10\n");

	/* Once it can be written, the retry records it. */
	assert_int_equal(rmdir(tmp), 0);
	append(e, 3, 20);
	klog_epochs_free(e);
	read_text(f->dir, text, sizeof(text));
	assert_string_equal(text, "klog-epochs 1\n1 0\n2 10\n3 20\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_open_missing),
		T(test_open_missing_dir),
		T(test_round_trip),
		T(test_append_refuses),
		T(test_empty_epoch_replaced),
		T(test_truncate),
		T(test_clear),
		T(test_end_of),
		T(test_at),
		T(test_corrupt),
		T(test_save_fails),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
