/*
 * Unit tests for lib/storage/names.c: topic names, partition directory and
 * segment file names (parse, format, round trips), the partition and
 * segment listers on a directory with other files in it, and the retention
 * rule.
 */
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

#include "fx/tmpdir.h"

#include "klog/base/error.h"
#include "klog/storage/names.h"

#define NOW ((int64_t)1700000000000)

/* ---- topics (moved from test_log.c) ---- */

static void
test_topic_char(void **state)
{
	const char *ok = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

	(void)state;
	for (int c = 0; c < 256; c++)
		if (klog_names_topic_char(c) !=
		    (c != 0 && strchr(ok, c) != NULL))
			fail_msg("byte 0x%02x", c);
	assert_false(klog_names_topic_char(-1));
}

static void
test_topic_names(void **state)
{
	char longname[KLOG_TOPIC_MAX + 2];
	klog_err_t err = { 0 };
	const char *bad[] = {
		"", ".", "..", "a/b", "../etc", "/abs", "a b", "tab\t",
		"ctl\x01", "caf\xc3\xa9", "star*", "nl\n",
	};

	(void)state;
	assert_int_equal(klog_topic_validate("a", NULL), 0);
	assert_int_equal(klog_topic_validate("A.b_c-9", NULL), 0);
	assert_int_equal(klog_topic_validate("...", NULL), 0);
	assert_int_equal(klog_topic_validate(".hidden", NULL), 0);
	memset(longname, 'x', KLOG_TOPIC_MAX);
	longname[KLOG_TOPIC_MAX] = '\0';
	assert_int_equal(klog_topic_validate(longname, NULL), 0);
	longname[KLOG_TOPIC_MAX] = 'x';
	longname[KLOG_TOPIC_MAX + 1] = '\0';
	assert_int_equal(klog_topic_validate(longname, &err), -KLOG_ETOPIC);
	assert_non_null(strstr(err.msg, "longer than 249"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		if (klog_topic_validate(bad[i], &err) != -KLOG_ETOPIC)
			fail_msg("accepted bad topic %zu", i);
		assert_true(err.msg[0] != '\0');
		/* Error text never carries raw control bytes. */
		for (const char *p = err.msg; *p != '\0'; p++)
			assert_true((unsigned char)*p >= 0x20 &&
			    (unsigned char)*p < 0x7f);
	}
	memset(&err, 0, sizeof(err));
	klog_topic_validate("ctl\x01", &err);
	assert_non_null(strstr(err.msg, "ctl\\x01"));
	assert_int_equal(klog_topic_validate(NULL, NULL), -KLOG_ETOPIC);
}

/* ---- partition directories ---- */

static void
test_dirnames(void **state)
{
	char buf[64], topic[KLOG_TOPIC_MAX + 1];
	int p = -1;

	(void)state;
	assert_int_equal(klog_names_dir_path("/d", "a-b", 12, buf, sizeof(buf)),
	    0);
	assert_string_equal(buf, "/d/a-b-12");
	assert_int_equal(klog_names_dir_path("/d", "..", 0, buf, sizeof(buf)),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_names_dir_path("/d", "a/b", 0, buf, sizeof(buf)),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_names_dir_path("/d", "abc", 0, buf, 8),
	    -KLOG_ETOOBIG);

	assert_int_equal(klog_names_dir_parse("a-b-3", topic, sizeof(topic),
	    &p), 0);
	assert_string_equal(topic, "a-b");
	assert_int_equal(p, 3);
	assert_int_equal(klog_names_dir_parse("x--0", topic, sizeof(topic),
	    &p), 0);
	assert_string_equal(topic, "x-");
	assert_int_equal(p, 0);
	assert_int_equal(klog_names_dir_parse("t-2147483647", topic,
	    sizeof(topic), &p), 0);
	assert_int_equal(p, 2147483647);
	assert_true(klog_names_dir_parse("t-2147483648", topic,
	    sizeof(topic), &p) < 0);
	assert_true(klog_names_dir_parse("t-01", topic, sizeof(topic),
	    &p) < 0);
	assert_true(klog_names_dir_parse("t-+1", topic, sizeof(topic),
	    &p) < 0);
	assert_true(klog_names_dir_parse("t-", topic, sizeof(topic), &p)
	    < 0);
	assert_true(klog_names_dir_parse("t", topic, sizeof(topic), &p) < 0);
	assert_true(klog_names_dir_parse("-1", topic, sizeof(topic), &p)
	    < 0);
	assert_true(klog_names_dir_parse("..-1", topic, sizeof(topic), &p)
	    < 0);
	assert_true(klog_names_dir_parse(".klog_x-1", topic, 4, &p) < 0);
}


static void
test_dir_round_trip(void **state)
{
	const char *topics[] = { "a", "a-b", "x-", "-", "...", "A.b_c-9" };
	const int parts[] = { 0, 1, 9, 10, 12345, INT_MAX };
	char name[KLOG_TOPIC_MAX + 16], topic[KLOG_TOPIC_MAX + 1];
	char path[KLOG_TOPIC_MAX + 32], longname[KLOG_TOPIC_MAX + 1];
	int p;

	(void)state;
	memset(longname, 'x', KLOG_TOPIC_MAX);
	longname[KLOG_TOPIC_MAX] = '\0';
	for (size_t t = 0; t <= sizeof(topics) / sizeof(topics[0]); t++) {
		const char *tp = t < sizeof(topics) / sizeof(topics[0]) ?
		    topics[t] : longname;

		for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
			assert_int_equal(klog_names_dir_format(tp, parts[i],
			    name, sizeof(name)), 0);
			p = -1;
			assert_int_equal(klog_names_dir_parse(name, topic,
			    sizeof(topic), &p), 0);
			assert_string_equal(topic, tp);
			assert_int_equal(p, parts[i]);
			assert_int_equal(klog_names_dir_path("/d", tp,
			    parts[i], path, sizeof(path)), 0);
			assert_int_equal(strncmp(path, "/d/", 3), 0);
			assert_string_equal(path + 3, name);
		}
	}
}

static void
test_dir_bad(void **state)
{
	char buf[64], topic[8];
	int p = 77;

	(void)state;
	assert_int_equal(klog_names_dir_format("t", -1, buf, sizeof(buf)),
	    -KLOG_EINVAL);
	assert_int_equal(klog_names_dir_path("/d", "t", -1, buf, sizeof(buf)),
	    -KLOG_EINVAL);
	assert_int_equal(klog_names_dir_format(".", 0, buf, sizeof(buf)),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_names_dir_format("", 0, buf, sizeof(buf)),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_names_dir_format(NULL, 0, buf, sizeof(buf)),
	    -KLOG_ETOPIC);
	/* "abc-10" needs 7 bytes. */
	assert_int_equal(klog_names_dir_format("abc", 10, buf, 6),
	    -KLOG_ETOOBIG);
	assert_int_equal(klog_names_dir_format("abc", 10, buf, 7), 0);
	assert_string_equal(buf, "abc-10");
	/* The topic must fit the caller's buffer, NUL included. */
	assert_int_equal(klog_names_dir_parse("abcdefgh-1", topic,
	    sizeof(topic), &p), -KLOG_ETOOBIG);
	assert_int_equal(klog_names_dir_parse("abcdefg-1", topic,
	    sizeof(topic), &p), 0);
	/* Spellings klog never writes are not partitions. */
	assert_int_equal(klog_names_dir_parse("t-00", topic, sizeof(topic),
	    &p), -KLOG_EINVAL);
	assert_int_equal(klog_names_dir_parse("t- 1", topic, sizeof(topic),
	    &p), -KLOG_EINVAL);
	assert_int_equal(klog_names_dir_parse("t-1x", topic, sizeof(topic),
	    &p), -KLOG_EINVAL);
	assert_int_equal(klog_names_dir_parse("t--1", topic, sizeof(topic),
	    &p), 0);
	assert_string_equal(topic, "t-");
	assert_int_equal(klog_names_dir_parse("a b-1", topic, sizeof(topic),
	    &p), -KLOG_ETOPIC);
	assert_int_equal(klog_names_dir_parse(".-1", topic, sizeof(topic),
	    &p), -KLOG_ETOPIC);
	assert_int_equal(p, 1);  /* untouched by the failures */
}

/* ---- segment files (test_segment_name moved from test_dump.c) ---- */

static void
test_segment_name(void **state)
{
	int64_t base;

	(void)state;
	assert_int_equal(klog_names_segment_parse("00000000000000000000.klog",
	    &base, NULL), 0);
	assert_int_equal(base, 0);
	assert_int_equal(klog_names_segment_parse("00000000001073741917.kafka",
	    &base, NULL), 0);
	assert_int_equal(base, 1073741917);
	assert_int_equal(klog_names_segment_parse("09223372036854775807.klog",
	    &base, NULL), 0);
	assert_int_equal(base, INT64_MAX);
	assert_int_equal(klog_names_segment_parse("09223372036854775808.klog",
	    &base, NULL), -KLOG_ERANGE);
	assert_int_equal(klog_names_segment_parse("99999999999999999999.klog",
	    &base, NULL), -KLOG_ERANGE);
	assert_int_equal(klog_names_segment_parse("99999999999999999999.txt",
	    &base, NULL), -KLOG_EINVAL);
	assert_int_equal(klog_names_segment_parse("0000000000000000000.klog",
	    &base, NULL), -KLOG_EINVAL);
	assert_int_equal(klog_names_segment_parse("000000000000000000000.klog",
	    &base, NULL), -KLOG_EINVAL);
	assert_int_equal(klog_names_segment_parse("00000000000000000000.log",
	    &base, NULL), -KLOG_EINVAL);
	assert_int_equal(klog_names_segment_parse("00000000000000000000.klog~",
	    &base, NULL), -KLOG_EINVAL);
	assert_int_equal(klog_names_segment_parse("0000000000000000000a.klog",
	    &base, NULL), -KLOG_EINVAL);
	assert_int_equal(klog_names_segment_parse("", &base, NULL),
	    -KLOG_EINVAL);
}

static void
test_segment_round_trip(void **state)
{
	const int64_t bases[] = { 0, 1, 169, 1073741917, INT64_MAX - 1,
	    INT64_MAX };
	char name[KLOG_NAMES_SEGMENT_MAX], path[64];
	int64_t base;
	int kafka;

	(void)state;
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		for (int k = 0; k <= 1; k++) {
			assert_int_equal(klog_names_segment_format(bases[i], k,
			    name, sizeof(name)), 0);
			assert_int_equal(strlen(name), k ? 26 : 25);
			base = -1;
			kafka = -1;
			assert_int_equal(klog_names_segment_parse(name, &base,
			    &kafka), 0);
			assert_int_equal(base, bases[i]);
			assert_int_equal(kafka, k);
			assert_int_equal(klog_names_segment_path("/d/t-0",
			    bases[i], k, path, sizeof(path)), 0);
			assert_int_equal(strncmp(path, "/d/t-0/", 7), 0);
			assert_string_equal(path + 7, name);
		}
	}
	assert_int_equal(klog_names_segment_format(1073741917, 0, name,
	    sizeof(name)), 0);
	assert_string_equal(name, "00000000001073741917.klog");
	/* Any non-zero kafka means .kafka. */
	assert_int_equal(klog_names_segment_format(5, 7, name, sizeof(name)),
	    0);
	assert_string_equal(name, "00000000000000000005.kafka");
}

static void
test_segment_bad(void **state)
{
	char name[KLOG_NAMES_SEGMENT_MAX];
	int64_t base = 42;
	int kafka = 42;

	(void)state;
	assert_int_equal(klog_names_segment_format(-1, 0, name, sizeof(name)),
	    -KLOG_EINVAL);
	assert_int_equal(klog_names_segment_path("/d", -1, 0, name,
	    sizeof(name)), -KLOG_EINVAL);
	assert_int_equal(klog_names_segment_format(0, 0, name, 25),
	    -KLOG_ETOOBIG);
	assert_int_equal(klog_names_segment_format(0, 1, name, 26),
	    -KLOG_ETOOBIG);
	assert_int_equal(klog_names_segment_path("/a/long/dir", 0, 0, name,
	    sizeof(name)), -KLOG_ETOOBIG);
	/* Failures leave the outputs alone. */
	assert_int_equal(klog_names_segment_parse("00000000000000000000.kafk",
	    &base, &kafka), -KLOG_EINVAL);
	assert_int_equal(klog_names_segment_parse("-0000000000000000001.klog",
	    &base, &kafka), -KLOG_EINVAL);
	assert_int_equal(klog_names_segment_parse("+0000000000000000001.klog",
	    &base, &kafka), -KLOG_EINVAL);
	assert_int_equal(klog_names_segment_parse("09223372036854775808.kafka",
	    &base, &kafka), -KLOG_ERANGE);
	assert_int_equal(base, 42);
	assert_int_equal(kafka, 42);
}

/* ---- the lister ---- */

struct fixture {
	char dir[64];
	int dfd;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "names"));
	f->dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(f->dfd >= 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	close(f->dfd);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* A file of size bytes, modified at mtime_ms (ms since the epoch). */
static void
make_file(const struct fixture *f, const char *name, size_t size,
    int64_t mtime_ms)
{
	struct timespec ts[2];
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	ts[0].tv_sec = ts[1].tv_sec = (time_t)(mtime_ms / 1000);
	ts[0].tv_nsec = ts[1].tv_nsec = (long)(mtime_ms % 1000) * 1000000;
	assert_int_equal(futimens(fd, ts), 0);
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
make_subdir(const struct fixture *f, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	assert_int_equal(mkdir(path, 0755), 0);
}

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

/* Files that are not segments, by name, next to three that are. */
static void
make_junk(const struct fixture *f)
{
	make_file(f, "README", 10, NOW);
	make_file(f, ".lock", 0, NOW);
	make_file(f, "0000000000000000000.klog", 10, NOW);    /* 19 digits */
	make_file(f, "000000000000000000000.klog", 10, NOW);  /* 21 */
	make_file(f, "00000000000000000000.klog~", 10, NOW);
	make_file(f, "00000000000000000000.klog.tmp", 10, NOW);
	make_file(f, "00000000000000000000.log", 10, NOW);
	make_subdir(f, "sub-0");
}

static void
test_list_sorted(void **state)
{
	struct fixture *f = *state;
	klog_names_seg_t *s = NULL;
	klog_err_t err = { 0 };
	size_t n = 99;
	int fds = count_fds();

	make_junk(f);
	make_file(f, "00000000000000000300.klog", 50, NOW - 1000);
	make_file(f, "00000000000000000000.klog", 100, NOW - 3000);
	make_file(f, "00000000000000000100.kafka", 200, NOW - 2000);
	/* Strays sharing a base: the empty one first, then .kafka. */
	make_file(f, "00000000000000000300.kafka", 0, NOW);
	make_file(f, "00000000000000000350.klog", 0, NOW);
	make_file(f, "00000000000000000350.kafka", 0, NOW);
	for (unsigned flags = 0; flags <= KLOG_NAMES_INSPECT;
	    flags += KLOG_NAMES_INSPECT) {
		assert_int_equal(klog_names_segments(f->dfd, f->dir, flags, &s,
		    &n, &err), 0);
		assert_int_equal(n, 6);
		assert_int_equal(s[0].info.base, 0);
		assert_int_equal(s[0].info.size, 100);
		assert_int_equal(s[0].info.mtime_ms, NOW - 3000);
		assert_int_equal(s[0].kafka, 0);
		assert_int_equal(s[1].info.base, 100);
		assert_int_equal(s[1].info.size, 200);
		assert_int_equal(s[1].info.mtime_ms, NOW - 2000);
		assert_int_equal(s[1].kafka, 1);
		assert_int_equal(s[2].info.base, 300);
		assert_int_equal(s[2].info.size, 0);
		assert_int_equal(s[2].kafka, 1);
		assert_int_equal(s[3].info.base, 300);
		assert_int_equal(s[3].info.size, 50);
		assert_int_equal(s[3].kafka, 0);
		assert_int_equal(s[4].info.base, 350);
		assert_int_equal(s[4].kafka, 1);
		assert_int_equal(s[5].info.base, 350);
		assert_int_equal(s[5].kafka, 0);
		free(s);
	}
	/* The caller's descriptor is left where it was, and nothing else
	 * stays open. */
	assert_int_equal(lseek(f->dfd, 0, SEEK_CUR), 0);
	assert_int_equal(count_fds(), fds);
}

static void
test_list_empty(void **state)
{
	struct fixture *f = *state;
	klog_names_seg_t *s = (klog_names_seg_t *)&s;
	size_t n = 99;

	assert_int_equal(klog_names_segments(f->dfd, f->dir, 0, &s, &n, NULL),
	    0);
	assert_int_equal(n, 0);
	assert_null(s);
	make_junk(f);
	assert_int_equal(klog_names_segments(f->dfd, f->dir, 0, &s, &n, NULL),
	    0);
	assert_int_equal(n, 0);
	assert_null(s);
}

/* What cannot be a segment fails the owner's listing, named in err, and
 * is skipped when inspecting, which lists the other good segments. */
static void
check_bad(const struct fixture *f, const char *name, const char *why,
    size_t good)
{
	klog_names_seg_t *s = NULL;
	klog_err_t err = { 0 };
	char want[PATH_MAX];
	size_t n = 99;

	assert_int_equal(klog_names_segments(f->dfd, f->dir, 0, &s, &n, &err),
	    -KLOG_ECORRUPT);
	assert_int_equal(n, 0);
	assert_null(s);
	snprintf(want, sizeof(want), "%s/%s: %s", f->dir, name, why);
	assert_string_equal(err.msg, want);
	assert_int_equal(klog_names_segments(f->dfd, f->dir,
	    KLOG_NAMES_INSPECT, &s, &n, &err), 0);
	assert_int_equal(n, good);
	assert_int_equal(s[0].info.base, 0);
	free(s);
}

static void
test_list_not_regular(void **state)
{
	struct fixture *f = *state;

	make_file(f, "00000000000000000000.klog", 10, NOW);
	make_subdir(f, "00000000000000000010.klog");
	check_bad(f, "00000000000000000010.klog", "not a regular file", 1);
}

static void
test_list_base_too_large(void **state)
{
	struct fixture *f = *state;

	make_file(f, "00000000000000000000.klog", 10, NOW);
	make_file(f, "09223372036854775808.klog", 0, NOW);
	check_bad(f, "09223372036854775808.klog", "base offset too large", 1);
}

static void
test_list_end_too_large(void **state)
{
	struct fixture *f = *state;

	make_file(f, "00000000000000000000.klog", 10, NOW);
	/* Ends at INT64_MAX exactly: fine.  One byte more: not. */
	make_file(f, "09223372036854775806.klog", 1, NOW);
	make_file(f, "09223372036854775807.kafka", 1, NOW);
	check_bad(f, "09223372036854775807.kafka",
	    "segment ends past the largest offset", 2);
}

/* Links: not followed by the owner (a link is not a regular file), followed
 * when inspecting, where one leading nowhere is an error. */
static void
test_list_links(void **state)
{
	struct fixture *f = *state;
	klog_names_seg_t *s = NULL;
	klog_err_t err = { 0 };
	char want[PATH_MAX];
	size_t n = 99;

	make_file(f, "00000000000000000000.klog", 10, NOW);
	make_file(f, "data", 25, NOW - 5000);
	make_link(f, "data", "00000000000000000010.klog");
	check_bad(f, "00000000000000000010.klog", "not a regular file", 2);
	assert_int_equal(klog_names_segments(f->dfd, f->dir,
	    KLOG_NAMES_INSPECT, &s, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[1].info.base, 10);
	assert_int_equal(s[1].info.size, 25);
	assert_int_equal(s[1].info.mtime_ms, NOW - 5000);
	free(s);

	make_link(f, "nowhere", "00000000000000000035.klog");
	assert_int_equal(klog_names_segments(f->dfd, f->dir,
	    KLOG_NAMES_INSPECT, &s, &n, &err), -KLOG_ENOENT);
	assert_int_equal(n, 0);
	snprintf(want, sizeof(want), "%s/00000000000000000035.klog: %s",
	    f->dir, strerror(ENOENT));
	assert_string_equal(err.msg, want);
	assert_int_equal(klog_names_segments(f->dfd, f->dir, 0, &s, &n, &err),
	    -KLOG_ECORRUPT);
}

/* ---- the partition lister ---- */

static void
test_parts_sorted(void **state)
{
	static const struct { const char *topic; int partition; } want[] = {
		{ ".hidden", 0 },   /* a valid topic, as Kafka's are */
		{ "a", 0 }, { "a", 2 }, { "a", 10 }, { "a-b", 1 }, { "b", 0 },
	};
	struct fixture *f = *state;
	klog_names_part_t *p = NULL;
	klog_err_t err = { 0 };
	size_t n = 99;
	int fds = count_fds();

	make_subdir(f, "a-10");
	make_subdir(f, "b-0");
	make_subdir(f, "a-2");
	make_subdir(f, "a-b-1");
	make_subdir(f, "a-0");
	make_subdir(f, ".hidden-0");
	/* Skipped: names that are not "<valid topic>-<n>", files, links. */
	make_subdir(f, "a-01");
	make_subdir(f, "a-");
	make_subdir(f, "-1");
	make_subdir(f, "..-1");
	make_subdir(f, "a b-1");
	make_subdir(f, "a-2147483648");
	make_subdir(f, "plain");
	make_file(f, "c-0", 0, NOW);
	make_file(f, KLOG_CLEAN_MARKER, 0, NOW);
	make_link(f, "a-0", "d-0");
	make_link(f, "/", "e-0");
	assert_int_equal(klog_names_parts(f->dfd, f->dir, &p, &n, &err), 0);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(p[i].topic, want[i].topic);
		assert_int_equal(p[i].partition, want[i].partition);
	}
	free(p);
	/* The caller's descriptor is left where it was, and nothing else
	 * stays open. */
	assert_int_equal(lseek(f->dfd, 0, SEEK_CUR), 0);
	assert_int_equal(count_fds(), fds);
}

static void
test_parts_empty(void **state)
{
	struct fixture *f = *state;
	klog_names_part_t *p = (klog_names_part_t *)&p;
	size_t n = 99;

	assert_int_equal(klog_names_parts(f->dfd, f->dir, &p, &n, NULL), 0);
	assert_int_equal(n, 0);
	assert_null(p);
	make_file(f, "t-0", 0, NOW);
	make_link(f, ".", "t-1");
	assert_int_equal(klog_names_parts(f->dfd, f->dir, &p, &n, NULL), 0);
	assert_int_equal(n, 0);
	assert_null(p);
}

static void
test_parts_not_a_directory(void **state)
{
	klog_names_part_t *p = (klog_names_part_t *)&p;
	klog_err_t err = { 0 };
	char want[PATH_MAX];
	size_t n = 99;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(klog_names_parts(fd, "/dev/null", &p, &n, &err),
	    -KLOG_EIO);
	close(fd);
	assert_int_equal(n, 0);
	assert_null(p);
	snprintf(want, sizeof(want), "opendir /dev/null: %s",
	    strerror(ENOTDIR));
	assert_string_equal(err.msg, want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topic_char),
		cmocka_unit_test(test_topic_names),
		cmocka_unit_test(test_dirnames),
		cmocka_unit_test(test_dir_round_trip),
		cmocka_unit_test(test_dir_bad),
		cmocka_unit_test(test_segment_name),
		cmocka_unit_test(test_segment_round_trip),
		cmocka_unit_test(test_segment_bad),
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_list_sorted),
		T(test_list_empty),
		T(test_list_not_regular),
		T(test_list_base_too_large),
		T(test_list_end_too_large),
		T(test_list_links),
		T(test_parts_sorted),
		T(test_parts_empty),
		T(test_parts_not_a_directory),
#undef T
	};

	return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
