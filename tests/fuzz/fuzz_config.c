/*
 * libFuzzer target for the text that klog reads from files and the command
 * line: arbitrary bytes as a klog-serve config file (lib/base/config.c), every
 * value it yields through the strict parsers of lib/base/parse.c, and the same
 * bytes as a klog-consume offset file (lib/client/offsetfile.c).
 *
 * Besides not crashing or leaking, it checks what the parsers promise: a
 * setting's key and value are non-empty, trimmed, single-line, the key
 * without '=' and not a comment; the settings written back as "key = value"
 * lines parse to the same settings; numbers land inside their bounds; an
 * offset file's entries are valid.  A broken invariant aborts.
 */
#include <sys/mman.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/buf.h"
#include "klog/base/config.h"
#include "klog/base/error.h"
#include "klog/base/parse.h"
#include "klog/client/offsetfile.h"
#include "klog/storage/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAX_SETTINGS 32

struct settings {
	klog_buf_t text;       /* "key\0value\0" pairs as seen */
	size_t n;
	int last_line;
};

static int
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static void
check_value(const char *v)
{
	char host[64], port[16];
	const char *why;
	int64_t x;
	int b;

	if (klog_parse_i64(v, -5, 1000, &x, &why) == 0)
		CHECK(x >= -5 && x <= 1000);
	else
		CHECK(why != NULL);
	if (klog_parse_size(v, 0, INT64_MAX, &x, &why) == 0)
		CHECK(x >= 0);
	if (klog_parse_size(v, 1024, 1 << 30, &x, &why) == 0)
		CHECK(x >= 1024 && x <= 1 << 30);
	if (klog_parse_duration_ms(v, 1000, 0, 86400000, &x, &why) == 0)
		CHECK(x >= 0 && x <= 86400000);
	if (klog_parse_duration_ms(v, 1, 100, INT64_MAX, &x, &why) == 0)
		CHECK(x >= 100);
	if (klog_parse_bool(v, &b, &why) == 0)
		CHECK(b == 0 || b == 1);
	if (klog_parse_hostport(v, "127.0.0.1", "9092", host, sizeof(host),
	    port, sizeof(port), &why) == 0) {
		CHECK(memchr(host, '\0', sizeof(host)) != NULL);
		CHECK(memchr(port, '\0', sizeof(port)) != NULL);
	}
}

static int
setting(void *arg, int line, const char *key, const char *value,
    klog_err_t *err)
{
	struct settings *s = arg;
	size_t kl = strlen(key), vl = strlen(value);

	(void)err;
	CHECK(line > s->last_line);
	s->last_line = line;
	CHECK(kl > 0 && vl > 0);
	CHECK(kl <= KLOG_CONFIG_LINE_MAX && vl <= KLOG_CONFIG_LINE_MAX);
	CHECK(!blank(key[0]) && !blank(key[kl - 1]));
	CHECK(!blank(value[0]) && !blank(value[vl - 1]));
	CHECK(key[0] != '#' && strchr(key, '=') == NULL);
	CHECK(strchr(key, '\n') == NULL && strchr(value, '\n') == NULL);
	check_value(value);
	if (s->n == MAX_SETTINGS)
		return -KLOG_ETOOBIG;
	klog_buf_put(&s->text, key, kl + 1);
	klog_buf_put(&s->text, value, vl + 1);
	s->n++;
	return 0;
}

/* Write the settings back as lines and parse them again: the same. */
static void
roundtrip(const struct settings *s)
{
	struct settings again = { .n = 0, .last_line = 0 };
	klog_buf_t lines;
	klog_err_t err;
	const char *p = (const char *)s->text.data;

	klog_buf_init(&lines);
	klog_buf_init(&again.text);
	for (size_t i = 0; i < s->n; i++) {
		size_t kl = strlen(p), vl = strlen(p + kl + 1);

		klog_buf_put(&lines, p, kl);
		klog_buf_put(&lines, " = ", 3);
		klog_buf_put(&lines, p + kl + 1, vl);
		klog_buf_put(&lines, "\n", 1);
		p += kl + vl + 2;
	}
	CHECK(!lines.failed);
	CHECK(klog_config_parse("again", (const char *)lines.data, lines.len,
	    setting, &again, &err) == 0);
	CHECK(again.n == s->n && again.text.len == s->text.len);
	CHECK(s->text.len == 0 ||
	    memcmp(again.text.data, s->text.data, s->text.len) == 0);
	klog_buf_free(&lines);
	klog_buf_free(&again.text);
}

static void
config(const uint8_t *data, size_t size)
{
	struct settings s = { .n = 0, .last_line = 0 };
	klog_err_t err = { 0 };
	int rc;

	klog_buf_init(&s.text);
	rc = klog_config_parse("fuzz", (const char *)data, size, setting, &s,
	    &err);
	CHECK(rc == 0 || rc == -KLOG_EINVAL || rc == -KLOG_ETOOBIG);
	if (rc == -KLOG_EINVAL)
		CHECK(strncmp(err.msg, "fuzz:", 5) == 0);
	if (rc == 0)
		roundtrip(&s);
	klog_buf_free(&s.text);
}

static void
offsetfile(const uint8_t *data, size_t size)
{
	klog_offsetfile_t f;
	klog_err_t err;
	char path[64];
	int fd, rc;

	if ((fd = memfd_create("offsets", MFD_CLOEXEC)) < 0)
		return;
	if (size > 0 && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rc = klog_offsetfile_load(path, &f, &err);
	CHECK(rc == 0 || rc == -KLOG_ECORRUPT);
	for (size_t i = 0; rc == 0 && i < f.n; i++) {
		CHECK(klog_topic_validate(f.entries[i].topic, NULL) == 0);
		CHECK(f.entries[i].partition >= 0 && f.entries[i].offset >= 0);
	}
	klog_offsetfile_free(&f);
	close(fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	config(data, size);
	offsetfile(data, size);
	return 0;
}
