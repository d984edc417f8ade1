/* Unit tests for "key = value" configuration files (lib/base/config.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/base/config.h"
#include "klog/base/error.h"

/* What the callback saw, as "LINE:KEY=VALUE|" records. */
struct seen {
	char text[8192];
	int stop_at;   /* line at which to return an error; 0: never */
};

static int
record(void *arg, int line, const char *key, const char *value,
    klog_err_t *err)
{
	struct seen *s = arg;
	size_t n = strlen(s->text);

	if (line == s->stop_at)
		return klog_err_set(err, -KLOG_EINVAL, "f:%d: unknown key \"%s\"",
		    line, key);
	snprintf(s->text + n, sizeof(s->text) - n, "%d:%s=%s|", line, key,
	    value);
	return 0;
}

static int
parse(const char *text, struct seen *s, klog_err_t *err)
{
	return klog_config_parse("f", text, strlen(text), record, s, err);
}

static void
test_settings(void **state)
{
	struct seen s = { "", 0 };
	klog_err_t err;

	(void)state;
	assert_int_equal(parse("# comment\n\n  \t\n"
	    "data-dir = /var/lib/klog\n"
	    "\tlisten=0.0.0.0:9092  \r\n"
	    "  # indented comment\n"
	    "topic = a:2 = b\n"
	    "k=v", &s, &err), 0);
	assert_string_equal(s.text, "4:data-dir=/var/lib/klog|"
	    "5:listen=0.0.0.0:9092|7:topic=a:2 = b|8:k=v|");
}

static void
test_empty(void **state)
{
	struct seen s = { "", 0 };
	klog_err_t err;

	(void)state;
	assert_int_equal(klog_config_parse("f", "", 0, record, &s, &err), 0);
	/* An empty file read into no buffer at all (fuzz_config found the
	 * NULL + 0 this used to compute). */
	assert_int_equal(klog_config_parse("f", NULL, 0, record, &s, &err), 0);
	assert_int_equal(parse("\n\n\r\n#", &s, &err), 0);
	assert_string_equal(s.text, "");
}

static void
test_errors(void **state)
{
	struct seen s = { "", 0 };
	klog_err_t err;

	(void)state;
	assert_int_equal(parse("a = 1\njust words\n", &s, &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "f:2: expected \"key = value\"");
	assert_int_equal(parse(" = 1\n", &s, &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, "f:1: expected \"key = value\"");
	assert_int_equal(parse("flush-ms =  \n", &s, &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, "f:1: flush-ms: no value");
	assert_int_equal(klog_config_parse("f", "a = 1\nb = x\0y\n", 12,
	    record, &s, &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, "f:2: NUL byte");
	/* Settings before the bad line were handed out. */
	assert_string_equal(s.text, "1:a=1|1:a=1|");
}

/* A line one byte over the limit is refused, never split in two. */
static void
test_long_line(void **state)
{
	struct seen s = { "", 0 };
	klog_err_t err;
	char *text = malloc(KLOG_CONFIG_LINE_MAX + 16);

	(void)state;
	assert_non_null(text);
	memset(text, 'x', KLOG_CONFIG_LINE_MAX + 1);
	memcpy(text, "k = ", 4);
	text[KLOG_CONFIG_LINE_MAX + 1] = '\0';
	assert_int_equal(parse(text, &s, &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, "f:1: longer than 4096 bytes");
	/* At the limit it is fine, with or without a \r before the \n. */
	text[KLOG_CONFIG_LINE_MAX] = '\0';
	assert_int_equal(parse(text, &s, &err), 0);
	strcpy(text + KLOG_CONFIG_LINE_MAX, "\r\n");
	assert_int_equal(parse(text, &s, &err), 0);
	free(text);
}

static void
test_callback_stops(void **state)
{
	struct seen s = { "", 2 };
	klog_err_t err;

	(void)state;
	assert_int_equal(parse("a = 1\nnope = 2\nc = 3\n", &s, &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "f:2: unknown key \"nope\"");
	assert_string_equal(s.text, "1:a=1|");
}

static void
test_read(void **state)
{
	char path[] = "/tmp/klog-test-config.XXXXXX";
	struct seen s = { "", 0 };
	klog_err_t err;
	char *big;
	FILE *f;
	int fd;

	(void)state;
	assert_true((fd = mkstemp(path)) >= 0);
	assert_non_null(f = fdopen(fd, "w"));
	fputs("# x\nretention-hours = 48\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(klog_config_read(path, record, &s, &err), 0);
	assert_string_equal(s.text, "2:retention-hours=48|");
	/* Too large to be a configuration file. */
	assert_non_null(big = calloc(1, KLOG_CONFIG_FILE_MAX + 1));
	memset(big, '#', KLOG_CONFIG_FILE_MAX);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(big, 1, KLOG_CONFIG_FILE_MAX + 1, f),
	    KLOG_CONFIG_FILE_MAX + 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(klog_config_read(path, record, &s, &err),
	    -KLOG_ETOOBIG);
	free(big);
	unlink(path);
	assert_int_equal(klog_config_read(path, record, &s, &err),
	    -KLOG_ENOENT);
	assert_non_null(strstr(err.msg, ": No such file or directory"));
	assert_int_equal(strncmp(err.msg, path, strlen(path)), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_callback_stops),
		cmocka_unit_test(test_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
