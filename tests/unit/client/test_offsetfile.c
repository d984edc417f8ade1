#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/client/bookmark.h"
#include "klog/client/offsetfile.h"
#include "fx/textfile.h"

static char dir[] = "/tmp/klog-offsetfile.XXXXXX";
static char path[256];

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/offsets", dir);
	return 0;
}

static int
teardown(void **state)
{
	char tmp[300];

	(void)state;
	unlink(path);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	unlink(tmp);
	return rmdir(dir);
}

static void
test_missing_is_empty(void **state)
{
	klog_offsetfile_t f;
	klog_err_t err = { 0 };
	int64_t off;

	(void)state;
	unlink(path);
	assert_int_equal(klog_offsetfile_load(path, &f, &err), 0);
	assert_int_equal(f.n, 0);
	assert_int_equal(klog_offsetfile_get(&f, "t", 0, &off), 0);
	klog_offsetfile_free(&f);
}

static void
test_save_and_load(void **state)
{
	klog_offsetfile_t f, g;
	klog_err_t err = { 0 };
	char tmp[300];
	int64_t off;

	(void)state;
	unlink(path);
	assert_int_equal(klog_offsetfile_load(path, &f, &err), 0);
	assert_int_equal(klog_offsetfile_set(&f, "nginx", 1, 98765), 0);
	assert_int_equal(klog_offsetfile_set(&f, "nginx", 0, 5), 0);
	assert_int_equal(klog_offsetfile_set(&f, "app", 3, 0), 0);
	assert_int_equal(klog_offsetfile_set(&f, "nginx", 0, 123456), 0);
	assert_int_equal(klog_offsetfile_save(&f, &err), 0);
	assert_string_equal(textfile_read(path),
	    "# klog-consume offsets: topic, partition, next offset\n"
	    "app\t3\t0\n"
	    "nginx\t0\t123456\n"
	    "nginx\t1\t98765\n");
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(klog_offsetfile_load(path, &g, &err), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(klog_offsetfile_get(&g, "nginx", 0, &off), 1);
	assert_int_equal(off, 123456);
	assert_int_equal(klog_offsetfile_get(&g, "nginx", 1, &off), 1);
	assert_int_equal(off, 98765);
	assert_int_equal(klog_offsetfile_get(&g, "app", 3, &off), 1);
	assert_int_equal(off, 0);
	assert_int_equal(klog_offsetfile_get(&g, "app", 0, &off), 0);
	klog_offsetfile_free(&f);
	klog_offsetfile_free(&g);
}

/* Hand-edited files: blanks dropped; comments (notes) and other topics
 * survive a save, the header not doubled. */
static void
test_hand_edited(void **state)
{
	klog_offsetfile_t f;
	klog_err_t err = { 0 };
	int64_t off;

	(void)state;
	textfile_write(path, "# klog-consume offsets: topic, partition, next offset\n"
	    "# mine\n\n  other  2   77\n# klog-produce: x\r\n"
	    "t 0 9223372036854775807\r\n");
	assert_int_equal(klog_offsetfile_load(path, &f, &err), 0);
	assert_int_equal(klog_offsetfile_get(&f, "t", 0, &off), 1);
	assert_true(off == INT64_MAX);
	assert_int_equal(klog_offsetfile_set(&f, "t", 0, 10), 0);
	assert_int_equal(klog_offsetfile_save(&f, &err), 0);
	assert_string_equal(textfile_read(path),
	    "# klog-consume offsets: topic, partition, next offset\n"
	    "# mine\n"
	    "# klog-produce: x\n"
	    "other\t2\t77\n"
	    "t\t0\t10\n");
	klog_offsetfile_free(&f);
}

/* Notes of one prefix replaced where the first one was, the others
 * kept; none left, or added at the end. */
static void
test_notes_set(void **state)
{
	klog_offsetfile_t f;
	klog_err_t err = { 0 };

	(void)state;
	textfile_write(path, "# a 1\n# b\n# a 2\nt 0 5\n");
	assert_int_equal(klog_offsetfile_load(path, &f, &err), 0);
	assert_int_equal(klog_offsetfile_notes_set(&f, "# a ",
	    "# a 3\n# a 4\n"), 0);
	assert_int_equal(klog_offsetfile_save(&f, &err), 0);
	assert_string_equal(textfile_read(path),
	    "# klog-consume offsets: topic, partition, next offset\n"
	    "# a 3\n# a 4\n# b\nt\t0\t5\n");
	assert_int_equal(klog_offsetfile_notes_set(&f, "# a ", ""), 0);
	assert_int_equal(klog_offsetfile_notes_set(&f, "# c ", "# c 1"), 0);
	assert_int_equal(klog_offsetfile_save(&f, &err), 0);
	assert_string_equal(textfile_read(path),
	    "# klog-consume offsets: topic, partition, next offset\n"
	    "# b\n# c 1\nt\t0\t5\n");
	klog_offsetfile_free(&f);
}

static void
check_bad(const char *text, const char *why)
{
	klog_offsetfile_t f;
	klog_err_t err = { 0 };
	char want[512];

	textfile_write(path, text);
	assert_int_equal(klog_offsetfile_load(path, &f, &err),
	    -KLOG_ECORRUPT);
	snprintf(want, sizeof(want), "%s:%s", path, why);
	assert_string_equal(err.msg, want);
	klog_offsetfile_free(&f);
}

static void
test_malformed(void **state)
{
	(void)state;
	check_bad("t 0\n", "1: expected: topic, partition, offset");
	check_bad("# ok\nt 0 1 2\n", "2: expected: topic, partition, offset");
	check_bad("t x 1\n", "1: invalid");
	check_bad("t 0 -1\n", "1: too small");
	check_bad("t 0 99999999999999999999\n", "1: too large");
	check_bad("a/b 0 1\n", "1: invalid topic name");
}

/* A settle as far as the acknowledgements go, no notes. */
static int
settle(klog_bookmark_t *b, klog_err_t *err)
{
	return klog_bookmark_settle(b, klog_bookmark_upto(b), NULL, NULL, err);
}

/* A mirror's bookmark: only what was acknowledged, with every record
 * before it, merged into what another mirror of the group wrote. */
static void
test_bookmark(void **state)
{
	klog_bookmark_t *b = NULL;
	klog_err_t err = { 0 };

	(void)state;
	unlink(path);
	assert_int_equal(klog_bookmark_open(path, &b, &err), 0);
	for (int i = 1; i <= 6; i++)
		assert_int_equal(klog_bookmark_note(b, (uint64_t)i, "t", i % 2,
		    i * 10, &err), 0);
	assert_int_equal(klog_bookmark_note(b, 7, "u", 0, 1, &err),
	    -KLOG_EINVAL);
	/* 3..4 acknowledged before 1..2: nothing to save yet. */
	assert_int_equal(klog_bookmark_done(b, 3, 2, 1), 0);
	assert_int_equal(settle(b, &err), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(klog_bookmark_done(b, 1, 2, 1), 0);
	assert_int_equal(settle(b, &err), 0);
	assert_string_equal(textfile_read(path),
	    "# klog-consume offsets: topic, partition, next offset\n"
	    "t\t0\t40\n"
	    "t\t1\t30\n");
	/* Another mirror moved partition 1 and added 2: kept.  5 refused
	 * holds the file for good, though 6 is acknowledged. */
	textfile_write(path, "t 0 40\nt 1 35\nt 2 99\n");
	assert_int_equal(klog_bookmark_done(b, 6, 1, 1), 0);
	assert_int_equal(klog_bookmark_done(b, 5, 1, 0), 0);
	assert_int_equal(settle(b, &err), 0);
	assert_string_equal(textfile_read(path), "t 0 40\nt 1 35\nt 2 99\n");
	klog_bookmark_close(b);
	/* Moved by a settle, the others' lines stay. */
	assert_int_equal(klog_bookmark_open(path, &b, &err), 0);
	assert_int_equal(klog_bookmark_note(b, 1, "t", 0, 50, &err), 0);
	assert_int_equal(klog_bookmark_done(b, 1, 1, 1), 0);
	assert_int_equal(settle(b, &err), 0);
	assert_string_equal(textfile_read(path),
	    "# klog-consume offsets: topic, partition, next offset\n"
	    "t\t0\t50\n"
	    "t\t1\t35\n"
	    "t\t2\t99\n");
	klog_bookmark_close(b);
	/* A file that does not parse is refused at open. */
	textfile_write(path, "t zero 1\n");
	assert_int_equal(klog_bookmark_open(path, &b, &err), -KLOG_ECORRUPT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_is_empty),
		cmocka_unit_test(test_save_and_load),
		cmocka_unit_test(test_bookmark),
		cmocka_unit_test(test_hand_edited),
		cmocka_unit_test(test_notes_set),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
