/* Unit tests for producer id blocks (lib/storage/pids.c): the data
 * directory's file reserved before ids go out, read strictly; sources
 * switched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define DIRFX_NAME "pids"
#include "fx/dirfx.h"

#include "klog/base/error.h"
#include "klog/storage/pids.h"

static void
put(const char *dir, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/" KLOG_PIDS_FILE, dir);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static void
expect(const char *dir, const char *text)
{
	char path[256], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/" KLOG_PIDS_FILE, dir);
	assert_non_null(f = fopen(path, "r"));
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, text);
}

static int
block(void *arg, int64_t *start, int64_t *end, klog_err_t *err)
{
	int *calls = arg;

	(void)err;
	*start = 5000000 + 10 * (*calls)++;
	*end = *start + 2;
	return 0;
}

static void
test_file(void **state)
{
	struct fixture *f = *state;
	klog_pids_t *p;
	klog_err_t err;
	int64_t id;
	int calls = 0;

	assert_int_equal(klog_pids_new(f->dir, &p), 0);
	assert_int_equal(klog_pids_next(p, NULL, NULL, &id, &err), 0);
	assert_int_equal(id, 0);
	expect(f->dir, "1000\n");
	for (int i = 1; i < 1000; i++) {
		assert_int_equal(klog_pids_next(p, NULL, NULL, &id, &err), 0);
		assert_int_equal(id, i);
	}
	expect(f->dir, "1000\n");
	assert_int_equal(klog_pids_next(p, NULL, NULL, &id, &err), 0);
	assert_int_equal(id, 1000);
	expect(f->dir, "2000\n");
	/* Another source: its own blocks, the file's rest dropped. */
	assert_int_equal(klog_pids_next(p, block, &calls, &id, &err), 0);
	assert_int_equal(id, 5000000);
	assert_int_equal(klog_pids_next(p, block, &calls, &id, &err), 0);
	assert_int_equal(id, 5000001);
	assert_int_equal(klog_pids_next(p, block, &calls, &id, &err), 0);
	assert_int_equal(id, 5000010);
	assert_int_equal(klog_pids_next(p, NULL, NULL, &id, &err), 0);
	assert_int_equal(id, 2000);
	klog_pids_free(p);
}

static void
test_bad_file(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = { "", "\n", "12", "12\n\n", "x\n",
	    "-1\n", " 1\n", "1 \n", "9223372036854775807\n" };
	klog_pids_t *p;
	klog_err_t err;
	int64_t id;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(f->dir, bad[i]);
		assert_int_equal(klog_pids_new(f->dir, &p), 0);
		assert_int_equal(klog_pids_next(p, NULL, NULL, &id, &err),
		    -KLOG_ECORRUPT);
		klog_pids_free(p);
	}
	put(f->dir, "77\n");
	assert_int_equal(klog_pids_new(f->dir, &p), 0);
	assert_int_equal(klog_pids_next(p, NULL, NULL, &id, &err), 0);
	assert_int_equal(id, 77);
	expect(f->dir, "1077\n");
	klog_pids_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
