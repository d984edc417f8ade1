/* Unit tests for lib/base/parse.c: times. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "klog/base/error.h"
#include "klog/base/parse.h"

/* Times as klog-group --to-time and klog-consume -o s@ take them. */
static void
test_time(void **state)
{
	const char *why = NULL;
	int64_t ms;

	(void)state;
	assert_int_equal(klog_parse_time_ms("2026-11-29T10:00:00Z", &ms, &why),
	    0);
	assert_int_equal(ms, 1795946400000LL);
	assert_int_equal(klog_parse_time_ms("2026-11-29T10:00:00", &ms, &why),
	    0);
	assert_int_equal(ms, 1795946400000LL);
	assert_int_equal(klog_parse_time_ms("1795946400123", &ms, &why), 0);
	assert_int_equal(ms, 1795946400123LL);
	assert_int_equal(klog_parse_time_ms("0", &ms, &why), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(klog_parse_time_ms("2026-11-29T10:00:00+01", &ms,
	    &why), -KLOG_EINVAL);
	assert_non_null(why);
	assert_int_equal(klog_parse_time_ms("2026-11-29", &ms, &why),
	    -KLOG_EINVAL);
	assert_int_equal(klog_parse_time_ms("", &ms, &why), -KLOG_EINVAL);
	assert_int_equal(klog_parse_time_ms("-5", &ms, &why), -KLOG_EINVAL);
	assert_int_equal(klog_parse_time_ms("1969-12-31T23:59:59Z", &ms,
	    &why), -KLOG_EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
