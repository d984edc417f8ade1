/*
 * Unit tests for lib/kafka/koffsets.c: put, save, reopen and get; group ids
 * escaped into safe file names; replacing; the metadata and name limits;
 * a corrupt file fails the open and is named; a failed save keeps the
 * offsets in memory for the next.
 */
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

#include "klog/base/error.h"
#include "klog/kafka/koffsets.h"

#include "fx/tmpdir.h"

static char dir[64];

static int
setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "koffsets") ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	tmpdir_remove(dir);
	return 0;
}

static klog_str_t
S(const char *s)
{
	klog_str_t r = { s, (uint16_t)strlen(s) };

	return r;
}

static klog_str_t
B(const char *p, size_t n)
{
	klog_str_t r = { p, (uint16_t)n };

	return r;
}

static klog_koffsets_t *
open_ok(void)
{
	klog_koffsets_t *o = NULL;
	klog_err_t err = { 0 };

	assert_int_equal(klog_koffsets_open(dir, &o, &err), 0);
	assert_non_null(o);
	return o;
}

static char *
slurp(const char *name)
{
	static char buf[8192];
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, KLOG_KOFFSETS_DIR, name);
	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void
write_raw(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, KLOG_KOFFSETS_DIR, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void
test_round_trip(void **state)
{
	klog_koffsets_t *o = open_ok();
	klog_err_t err = { 0 };
	klog_str_t meta;
	int64_t off;
	struct stat st;
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/%s", dir, KLOG_KOFFSETS_DIR);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(klog_koffsets_get(o, S("g"), S("t"), 0, &off, &meta),
	    0);
	assert_int_equal(klog_koffsets_put(o, S("g"), S("t"), 1, 200,
	    S("")), 0);
	assert_int_equal(klog_koffsets_put(o, S("g"), S("t"), 0, 100,
	    B("a b\n\0z", 6)), 0);
	assert_int_equal(klog_koffsets_put(o, S("g"), S("a"), 3, 7, S("x")),
	    0);
	assert_int_equal(klog_koffsets_save(o, S("g"), &err), 0);
	assert_string_equal(slurp("g"), "klog-kafka-offsets 1\n"
	    "a 3 7 78\n"
	    "t 0 100 6120620a007a\n"
	    "t 1 200 -\n");
	klog_koffsets_free(o);

	o = open_ok();
	assert_int_equal(klog_koffsets_get(o, S("g"), S("t"), 0, &off, &meta),
	    1);
	assert_int_equal(off, 100);
	assert_int_equal(meta.len, 6);
	assert_memory_equal(meta.p, "a b\n\0z", 6);
	assert_int_equal(klog_koffsets_get(o, S("g"), S("t"), 1, &off, &meta),
	    1);
	assert_int_equal(off, 200);
	assert_int_equal(meta.len, 0);
	assert_int_equal(klog_koffsets_get(o, S("g"), S("t"), 2, &off, &meta),
	    0);
	assert_int_equal(klog_koffsets_get(o, S("h"), S("t"), 0, &off, &meta),
	    0);
	/* Replace: the new offset and metadata, one line still. */
	assert_int_equal(klog_koffsets_put(o, S("g"), S("t"), 0, 150,
	    S("new")), 0);
	assert_int_equal(klog_koffsets_get(o, S("g"), S("t"), 0, &off, &meta),
	    1);
	assert_int_equal(off, 150);
	assert_int_equal(meta.len, 3);
	assert_memory_equal(meta.p, "new", 3);
	assert_int_equal(klog_koffsets_save(o, S("g"), &err), 0);
	assert_string_equal(slurp("g"), "klog-kafka-offsets 1\n"
	    "a 3 7 78\n"
	    "t 0 150 6e6577\n"
	    "t 1 200 -\n");
	/* A save of a group with nothing put writes nothing. */
	assert_int_equal(klog_koffsets_save(o, S("none"), &err), 0);
	assert_null(slurp("none"));
	klog_koffsets_free(o);
	klog_koffsets_free(NULL);
}

static void
test_escaping(void **state)
{
	static const struct {
		const char *id;
		size_t len;
		const char *file;
	} cases[] = {
		{ "../x", 4, "%2E.%2Fx" },
		{ "a/b", 3, "a%2Fb" },
		{ ".", 1, "%2E" },
		{ "..", 2, "%2E." },
		{ "caf\xc3\xa9", 5, "caf%C3%A9" },
		{ "a b%", 4, "a%20b%25" },
		{ "n\0l", 3, "n%00l" },
		{ "Ok_-.9", 6, "Ok_-.9" },
	};
	klog_koffsets_t *o = open_ok();
	klog_err_t err = { 0 };
	klog_str_t meta;
	int64_t off;
	char big[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		klog_str_t g = B(cases[i].id, cases[i].len);

		assert_int_equal(klog_koffsets_put(o, g, S("t"), 0,
		    (int64_t)i, S("")), 0);
		assert_int_equal(klog_koffsets_save(o, g, &err), 0);
		assert_non_null(slurp(cases[i].file));
	}
	/* Nothing landed outside the directory. */
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/x", dir);
		assert_int_not_equal(access(path, F_OK), 0);
	}
	klog_koffsets_free(o);
	o = open_ok();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(klog_koffsets_get(o, B(cases[i].id,
		    cases[i].len), S("t"), 0, &off, &meta), 1);
		assert_int_equal(off, (int64_t)i);
	}
	/* The empty group, and one too long for a file name. */
	assert_int_equal(klog_koffsets_put(o, S(""), S("t"), 0, 1, S("")),
	    -KLOG_EINVAL);
	assert_int_equal(klog_koffsets_save(o, S(""), &err), -KLOG_EINVAL);
	memset(big, 'g', sizeof(big));
	assert_int_equal(klog_koffsets_put(o, B(big, 200), S("t"), 0, 1,
	    S("")), 0);
	assert_int_equal(klog_koffsets_save(o, B(big, 200), &err), 0);
	assert_int_equal(klog_koffsets_put(o, B(big, 201), S("t"), 0, 1,
	    S("")), -KLOG_EINVAL);
	memset(big, '/', sizeof(big));      /* 3 bytes each escaped */
	assert_int_equal(klog_koffsets_put(o, B(big, 100), S("t"), 0, 1,
	    S("")), -KLOG_EINVAL);
	klog_koffsets_free(o);
}

static void
test_limits(void **state)
{
	klog_koffsets_t *o = open_ok();
	static char meta[KLOG_KOFFSETS_MAX_METADATA + 1];
	klog_err_t err = { 0 };
	klog_str_t m;
	int64_t off;

	(void)state;
	memset(meta, 0xff, sizeof(meta));
	assert_int_equal(klog_koffsets_put(o, S("g"), S("t"), 0, 1,
	    B(meta, sizeof(meta))), -KLOG_ETOOBIG);
	assert_int_equal(klog_koffsets_put(o, S("g"), S("t"), 0, 1,
	    B(meta, sizeof(meta) - 1)), 0);
	assert_int_equal(klog_koffsets_put(o, S("g"), S("a/b"), 0, 1, S("")),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_koffsets_put(o, S("g"), S(".."), 0, 1, S("")),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_koffsets_put(o, S("g"), S(""), 0, 1, S("")),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_koffsets_put(o, S("g"), B("t\0x", 3), 0, 1,
	    S("")), -KLOG_ETOPIC);
	assert_int_equal(klog_koffsets_put(o, S("g"), S("t"), -1, 1, S("")),
	    -KLOG_EINVAL);
	assert_int_equal(klog_koffsets_save(o, S("g"), &err), 0);
	klog_koffsets_free(o);
	o = open_ok();
	assert_int_equal(klog_koffsets_get(o, S("g"), S("t"), 0, &off, &m),
	    1);
	assert_int_equal(m.len, KLOG_KOFFSETS_MAX_METADATA);
	klog_koffsets_free(o);
}

static void
check_corrupt(const char *name, const char *text, const char *why)
{
	klog_koffsets_t *o = (klog_koffsets_t *)1;
	klog_err_t err = { 0 };
	char want[600];

	write_raw(name, text);
	assert_int_equal(klog_koffsets_open(dir, &o, &err), -KLOG_ECORRUPT);
	assert_null(o);
	snprintf(want, sizeof(want), "%s/%s/%s%s", dir, KLOG_KOFFSETS_DIR,
	    name, why);
	assert_string_equal(err.msg, want);
	write_raw(name, "klog-kafka-offsets 1\n");
}

static void
test_corrupt(void **state)
{
	klog_koffsets_free(open_ok());
	(void)state;
	check_corrupt("g", "", ": empty file");
	check_corrupt("g", "klog-kafka-offsets 2\n",
	    ":1: not \"klog-kafka-offsets 1\"");
	check_corrupt("g", "klog-kafka-offsets 1\nt 0 1\n",
	    ":2: expected: topic, partition, offset, metadata");
	check_corrupt("g", "klog-kafka-offsets 1\nt 0 1 - x\n",
	    ":2: expected: topic, partition, offset, metadata");
	check_corrupt("g", "klog-kafka-offsets 1\na/b 0 1 -\n",
	    ":2: invalid topic name");
	check_corrupt("g", "klog-kafka-offsets 1\nt x 1 -\n", ":2: invalid");
	check_corrupt("g", "klog-kafka-offsets 1\nt 0 1 abc\n",
	    ":2: metadata: not hex, or too long");
	check_corrupt("g", "klog-kafka-offsets 1\nt 0 1 zz\n",
	    ":2: metadata: not hex, or too long");
	check_corrupt("g", "klog-kafka-offsets 1\nt 0 1 -\nt 0 2 -\n",
	    ":3: partition listed twice");
	/* A name that is not an escaped group id. */
	check_corrupt("a%2", "klog-kafka-offsets 1\n",
	    ": not the name of a group's offsets");
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/%s/a%%2", dir,
		    KLOG_KOFFSETS_DIR);
		assert_int_equal(unlink(path), 0);
		snprintf(path, sizeof(path), "%s/%s/a%%2f", dir,
		    KLOG_KOFFSETS_DIR);
		write_raw("a%2f", "klog-kafka-offsets 1\n");
		{
			klog_koffsets_t *o = NULL;
			klog_err_t err = { 0 };

			/* %2f is not how "a/" escapes (%2F): refused. */
			assert_int_equal(klog_koffsets_open(dir, &o, &err),
			    -KLOG_ECORRUPT);
		}
		assert_int_equal(unlink(path), 0);
	}
	/* A leftover temporary file is removed, not read. */
	write_raw(".g.tmp", "junk");
	klog_koffsets_free(open_ok());
	assert_null(slurp(".g.tmp"));
}

static void
test_save_failure_keeps_memory(void **state)
{
	klog_koffsets_t *o = open_ok();
	klog_err_t err = { 0 };
	klog_str_t meta;
	int64_t off;
	char path[512];

	(void)state;
	assert_int_equal(klog_koffsets_put(o, S("g"), S("t"), 0, 5, S("")), 0);
	assert_int_equal(klog_koffsets_save(o, S("g"), &err), 0);
	assert_int_equal(klog_koffsets_put(o, S("g"), S("t"), 0, 9, S("")), 0);
	/* A directory where the temporary file goes: the save fails. */
	snprintf(path, sizeof(path), "%s/%s/.g.tmp", dir, KLOG_KOFFSETS_DIR);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_true(klog_koffsets_save(o, S("g"), &err) < 0);
	assert_non_null(strstr(err.msg, ".g.tmp"));
	assert_string_equal(slurp("g"), "klog-kafka-offsets 1\nt 0 5 -\n");
	assert_int_equal(klog_koffsets_get(o, S("g"), S("t"), 0, &off, &meta),
	    1);
	assert_int_equal(off, 9);
	/* The next save writes it. */
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(klog_koffsets_save(o, S("g"), &err), 0);
	klog_koffsets_free(o);
	o = open_ok();
	assert_int_equal(klog_koffsets_get(o, S("g"), S("t"), 0, &off, &meta),
	    1);
	assert_int_equal(off, 9);
	klog_koffsets_free(o);
}

static void
test_many_partitions(void **state)
{
	klog_koffsets_t *o = open_ok();
	klog_err_t err = { 0 };
	klog_str_t meta;
	int64_t off;

	(void)state;
	for (int i = 499; i >= 0; i--)
		assert_int_equal(klog_koffsets_put(o, S("g"), S(i % 2 ?
		    "odd" : "even"), i, i * 10, S("")), 0);
	assert_int_equal(klog_koffsets_save(o, S("g"), &err), 0);
	klog_koffsets_free(o);
	o = open_ok();
	for (int i = 0; i < 500; i++) {
		assert_int_equal(klog_koffsets_get(o, S("g"), S(i % 2 ?
		    "odd" : "even"), i, &off, &meta), 1);
		assert_int_equal(off, i * 10);
		assert_int_equal(klog_koffsets_get(o, S("g"), S(i % 2 ?
		    "even" : "odd"), i, &off, &meta), 0);
	}
	klog_koffsets_free(o);
}

/* Every offset of a group in order, and every group with one, as
 * OffsetFetch of every partition and ListGroups walk them; after a
 * restart too. */
static void
test_walk(void **state)
{
	klog_koffsets_t *o = open_ok();
	klog_str_t topic, meta, id;
	const void *cursor = NULL;
	klog_err_t err = { 0 };
	int32_t part;
	int64_t off;
	int seen = 0;

	(void)state;
	assert_int_equal(klog_koffsets_at(o, S("g"), 0, &topic, &part, &off,
	    &meta), 0);
	assert_int_equal(klog_koffsets_next_group(o, &cursor, &id), 0);
	assert_int_equal(klog_koffsets_put(o, S("g"), S("b"), 1, 30, S("")),
	    0);
	assert_int_equal(klog_koffsets_put(o, S("g"), S("a"), 2, 20, S("x")),
	    0);
	assert_int_equal(klog_koffsets_put(o, S("g"), S("b"), 0, 10, S("")),
	    0);
	assert_int_equal(klog_koffsets_put(o, S("h"), S("a"), 0, 5, S("")),
	    0);
	assert_int_equal(klog_koffsets_save(o, S("g"), &err), 0);
	assert_int_equal(klog_koffsets_save(o, S("h"), &err), 0);
	klog_koffsets_free(o);
	o = open_ok();
	assert_int_equal(klog_koffsets_at(o, S("g"), 0, &topic, &part, &off,
	    &meta), 1);
	assert_true(topic.len == 1 && topic.p[0] == 'a');
	assert_int_equal(part, 2);
	assert_int_equal(off, 20);
	assert_true(meta.len == 1 && meta.p[0] == 'x');
	assert_int_equal(klog_koffsets_at(o, S("g"), 1, &topic, &part, &off,
	    &meta), 1);
	assert_true(topic.p[0] == 'b' && part == 0 && off == 10);
	assert_int_equal(meta.len, 0);
	assert_non_null(meta.p);
	assert_int_equal(klog_koffsets_at(o, S("g"), 2, &topic, &part, &off,
	    &meta), 1);
	assert_true(topic.p[0] == 'b' && part == 1 && off == 30);
	assert_int_equal(klog_koffsets_at(o, S("g"), 3, &topic, &part, &off,
	    &meta), 0);
	assert_int_equal(klog_koffsets_at(o, S("x"), 0, &topic, &part, &off,
	    &meta), 0);
	while (klog_koffsets_next_group(o, &cursor, &id))
		seen += id.len == 1 && id.p[0] == 'g' ? 1 :
		    id.len == 1 && id.p[0] == 'h' ? 10 : 100;
	assert_int_equal(seen, 11);
	klog_koffsets_free(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_escaping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_failure_keeps_memory,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_partitions, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
