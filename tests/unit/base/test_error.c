/* Unit tests for lib/base/error.c: codes, their texts, and the context line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/error.h"

static void
test_strerror(void **state)
{
	(void)state;
	assert_string_equal(klog_strerror(0), "success");
	assert_string_equal(klog_strerror(-KLOG_ETOPIC), "invalid topic name");
	assert_string_equal(klog_strerror(KLOG_ETOPIC), "invalid topic name");
	assert_string_equal(klog_strerror(-KLOG_E_MAX), "unknown error");
	assert_string_equal(klog_strerror(-1000), "unknown error");
}

static void
test_err_set(void **state)
{
	klog_err_t err = { 0 };

	(void)state;
	assert_int_equal(klog_err_set(NULL, -KLOG_EIO, "x %d", 1), -KLOG_EIO);
	assert_int_equal(klog_err_set(&err, -KLOG_EIO, "x %d", 1), -KLOG_EIO);
	assert_int_equal(err.code, -KLOG_EIO);
	assert_string_equal(err.msg, "x 1");
	assert_string_equal(klog_err_text(&err, -KLOG_EIO), "x 1");
	err.msg[0] = '\0';
	assert_string_equal(klog_err_text(&err, -KLOG_EIO), "I/O error");
	assert_string_equal(klog_err_text(NULL, -KLOG_ENOENT),
	    "no such file or directory");
}

static void
test_err_sys(void **state)
{
	klog_err_t err = { 0 };
	char want[128];

	(void)state;
	errno = ENOENT;
	assert_int_equal(klog_err_sys(&err, "open", "/d/x-0"), -KLOG_ENOENT);
	assert_int_equal(err.code, -KLOG_ENOENT);
	snprintf(want, sizeof(want), "open /d/x-0: %s", strerror(ENOENT));
	assert_string_equal(err.msg, want);

	errno = ENOSPC;
	assert_int_equal(klog_err_sys(&err, NULL, "/d/f"), -KLOG_ENOSPC);
	snprintf(want, sizeof(want), "/d/f: %s", strerror(ENOSPC));
	assert_string_equal(err.msg, want);

	errno = EACCES;
	assert_int_equal(klog_err_sys(&err, "read", NULL), -KLOG_EIO);
	snprintf(want, sizeof(want), "read: %s", strerror(EACCES));
	assert_string_equal(err.msg, want);

	errno = EEXIST;
	assert_int_equal(klog_err_sys(&err, NULL, NULL), -KLOG_EEXIST);
	assert_string_equal(err.msg, strerror(EEXIST));

	errno = EIO;
	assert_int_equal(klog_err_sys(NULL, "fsync", "/d"), -KLOG_EIO);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_err_set),
		cmocka_unit_test(test_err_sys),
	};

	return cmocka_run_group_tests_name("error", tests, NULL, NULL);
}
