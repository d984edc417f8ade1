/* Unit tests for the store (lib/storage/store.c). */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
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
#include "klog/storage/store.h"

struct fixture {
	char root[64];          /* the mkdtemp directory */
	char dir[128];          /* the data directory, not yet created */
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->root, sizeof(f->root), "store"));
	snprintf(f->dir, sizeof(f->dir), "%s/a/data", f->root);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	tmpdir_remove(f->root);
	free(f);
	return 0;
}

static void
config(klog_store_config_t *cfg, const char *dir)
{
	klog_store_config_default(cfg);
	cfg->data_dir = dir;
}

static klog_store_t *
open_store(const klog_store_config_t *cfg)
{
	klog_store_t *s = NULL;
	klog_err_t err = { 0 };
	int r = klog_store_open(cfg, &s, &err);

	if (r != 0)
		fail_msg("store open: %s", klog_err_text(&err, r));
	return s;
}

static void
close_store(klog_store_t *s, int clean)
{
	klog_err_t err = { 0 };
	int r = klog_store_close(s, clean, &err);

	if (r != 0)
		fail_msg("store close: %s", klog_err_text(&err, r));
}

static int
exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static klog_log_t *
get(klog_store_t *s, const char *topic, int partition)
{
	klog_log_t *log = NULL;
	klog_err_t err = { 0 };
	int r = klog_store_get(s, topic, partition, 1, &log, &err);

	if (r != 0)
		fail_msg("get %s-%d: %s", topic, partition,
		    klog_err_text(&err, r));
	return log;
}

static void
append_msg(klog_log_t *log, const char *text)
{
	uint8_t buf[256];
	size_t len = klog_entry_encode(buf, text, strlen(text));

	assert_int_equal(klog_log_append(log, buf, len, 1, NULL, NULL), 0);
}

static void
test_marker_lifecycle(void **state)
{
	struct fixture *f = *state;
	klog_store_config_t cfg;
	klog_store_t *s;
	char path[PATH_MAX];
	uint8_t junk[11] = { 0 };
	int fd;

	config(&cfg, f->dir);
	/* A brand new directory (parents too): nothing to recover. */
	s = open_store(&cfg);
	assert_true(exists(f->dir, ".lock"));
	assert_int_equal(klog_store_recovered(s), 0);
	assert_string_equal(klog_store_data_dir(s), f->dir);
	append_msg(get(s, "t", 0), "hello");
	close_store(s, 1);
	assert_true(exists(f->dir, KLOG_CLEAN_MARKER));

	/* Clean restart: the marker is consumed, no recovery. */
	s = open_store(&cfg);
	assert_false(exists(f->dir, KLOG_CLEAN_MARKER));
	assert_int_equal(klog_store_recovered(s), 0);
	assert_int_equal(klog_log_end(get(s, "t", 0)), 14);
	/* The flush at a clean close made it visible. */
	assert_int_equal(klog_log_flushed_end(get(s, "t", 0)), 14);
	close_store(s, 0);
	assert_false(exists(f->dir, KLOG_CLEAN_MARKER));

	/* Unclean: recovery runs and cuts a torn tail. */
	snprintf(path, sizeof(path), "%s/t-0/00000000000000000000.klog",
	    f->dir);
	assert_true((fd = open(path, O_WRONLY | O_APPEND)) >= 0);
	assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	s = open_store(&cfg);
	assert_int_equal(klog_store_recovered(s), 1);
	assert_int_equal(klog_store_recovered_bytes(s), 11);
	assert_int_equal(klog_log_end(get(s, "t", 0)), 14);
	close_store(s, 1);
	s = open_store(&cfg);
	assert_int_equal(klog_store_recovered(s), 0);
	assert_int_equal(klog_store_recovered_bytes(s), 0);
	close_store(s, 1);
}

/*
 * The marker records each partition's end: bytes that appear after a clean
 * stop (garbage written by something else) are recovered, not appended
 * after; a marker with no word of a partition (an empty one, as an older
 * klog wrote) trusts nothing.
 */
static void
test_marker_ends(void **state)
{
	struct fixture *f = *state;
	klog_store_config_t cfg;
	klog_store_t *s;
	char path[PATH_MAX];
	int fd;

	config(&cfg, f->dir);
	s = open_store(&cfg);
	append_msg(get(s, "t", 0), "hello");
	append_msg(get(s, "u", 0), "world");
	close_store(s, 1);
	snprintf(path, sizeof(path), "%s/t-0/00000000000000000000.klog",
	    f->dir);
	assert_true((fd = open(path, O_WRONLY | O_APPEND)) >= 0);
	assert_int_equal(write(fd, "GARBAGE", 7), 7);
	close(fd);
	s = open_store(&cfg);
	assert_int_equal(klog_store_clean(s), 1);
	assert_int_equal(klog_store_recovered(s), 1);  /* t-0, not u-0 */
	assert_int_equal(klog_store_recovered_bytes(s), 7);
	assert_int_equal(klog_log_end(get(s, "t", 0)), 14);
	assert_int_equal(klog_log_end(get(s, "u", 0)), 14);
	close_store(s, 1);

	snprintf(path, sizeof(path), "%s/%s", f->dir, KLOG_CLEAN_MARKER);
	assert_true((fd = open(path, O_WRONLY | O_TRUNC)) >= 0);
	close(fd);
	s = open_store(&cfg);
	assert_int_equal(klog_store_recovered(s), 2);
	assert_int_equal(klog_store_recovered_bytes(s), 0);
	close_store(s, 1);
	s = open_store(&cfg);
	assert_int_equal(klog_store_recovered(s), 0);
	close_store(s, 1);
}

static void
test_lock(void **state)
{
	struct fixture *f = *state;
	klog_store_config_t cfg;
	klog_store_t *s, *s2 = NULL;
	klog_err_t err = { 0 };

	config(&cfg, f->dir);
	s = open_store(&cfg);
	assert_int_equal(klog_store_open(&cfg, &s2, &err), -KLOG_EBUSY);
	assert_null(s2);
	assert_non_null(strstr(err.msg, f->dir));
	/* The failed open left the marker state alone. */
	close_store(s, 1);
	assert_true(exists(f->dir, KLOG_CLEAN_MARKER));
	s2 = open_store(&cfg);
	close_store(s2, 1);
}

static void
test_get(void **state)
{
	struct fixture *f = *state;
	klog_store_config_t cfg;
	klog_store_t *s;
	klog_log_t *log;
	klog_err_t err = { 0 };

	config(&cfg, f->dir);
	cfg.default_partitions = 3;
	s = open_store(&cfg);
	/* Lookup without create: unknown. */
	assert_int_equal(klog_store_get(s, "auto", 0, 0, &log, &err),
	    -KLOG_ENOTOPIC);
	assert_null(log);
	assert_int_equal(klog_store_partitions(s, "auto"), -KLOG_ENOTOPIC);
	/* With create: made with the default partition count. */
	log = get(s, "auto", 2);
	assert_string_equal(klog_log_topic(log), "auto");
	assert_int_equal(klog_log_partition(log), 2);
	assert_int_equal(klog_store_partitions(s, "auto"), 3);
	assert_true(exists(f->dir, "auto-0"));
	assert_true(exists(f->dir, "auto-2"));
	assert_ptr_equal(get(s, "auto", 2), log);
	assert_int_equal(klog_store_get(s, "auto", 3, 1, &log, &err),
	    -KLOG_ENOPARTITION);
	assert_non_null(strstr(err.msg, "partition 3"));
	assert_int_equal(klog_store_get(s, "auto", -1, 1, &log, &err),
	    -KLOG_ENOPARTITION);
	assert_int_equal(klog_store_get(s, "../etc", 0, 1, &log, &err),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_store_get(s, "", 0, 1, &log, &err),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_store_get(s, "a b", 0, 1, &log, &err),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_store_topic_count(s), 1);
	close_store(s, 1);

	/* With auto-create off, create != 0 is not enough. */
	cfg.auto_create = 0;
	s = open_store(&cfg);
	assert_int_equal(klog_store_partitions(s, "auto"), 3);
	assert_int_equal(klog_store_get(s, "other", 0, 1, &log, &err),
	    -KLOG_ENOTOPIC);
	assert_int_equal(klog_store_create_topic(s, "other", 2, &err), 0);
	assert_non_null(get(s, "other", 1));
	close_store(s, 1);
}

static void
test_topics_sorted(void **state)
{
	struct fixture *f = *state;
	const char *names[] = { "zeta", "alpha", "m-x", "beta", "m", "Z" };
	const char *sorted[] = { "Z", "alpha", "beta", "m", "m-x", "zeta" };
	klog_store_config_t cfg;
	klog_store_t *s;
	klog_err_t err = { 0 };
	size_t nlogs = 0;

	config(&cfg, f->dir);
	cfg.max_partitions = 8;
	s = open_store(&cfg);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(klog_store_create_topic(s, names[i],
		    (int)i % 3 + 1, &err), 0);
		nlogs += i % 3 + 1;
	}
	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(klog_store_topic_count(s), 6);
		for (size_t i = 0; i < 6; i++)
			assert_string_equal(klog_store_topic_name(s, i),
			    sorted[i]);
		assert_null(klog_store_topic_name(s, 6));
		assert_int_equal(klog_store_log_count(s), nlogs);
		for (size_t i = 0; i < nlogs; i++)
			assert_non_null(klog_store_log(s, i));
		assert_null(klog_store_log(s, nlogs));
		assert_int_equal(klog_store_partitions(s, "m-x"), 3);
		close_store(s, 1);
		s = open_store(&cfg);  /* the same after a scan */
	}

	/* Growing; shrinking is a no-op; bad counts are refused. */
	assert_int_equal(klog_store_create_topic(s, "alpha", 5, &err), 0);
	assert_int_equal(klog_store_partitions(s, "alpha"), 5);
	assert_int_equal(klog_store_create_topic(s, "alpha", 2, &err), 0);
	assert_int_equal(klog_store_partitions(s, "alpha"), 5);
	assert_int_equal(klog_store_log_count(s), nlogs + 3);
	assert_int_equal(klog_store_create_topic(s, "big", 9, &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_store_create_topic(s, "none", 0, &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_store_create_topic(s, "..", 1, &err),
	    -KLOG_ETOPIC);
	assert_int_equal(klog_store_topic_count(s), 6);
	close_store(s, 1);
}

static void
mkdir_in(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void
test_scan(void **state)
{
	struct fixture *f = *state;
	klog_store_config_t cfg;
	klog_store_t *s;
	klog_err_t err = { 0 };
	char path[PATH_MAX], target[PATH_MAX / 2];
	int fd;

	assert_int_equal(mkdir(strcat(strcpy(path, f->root), "/a"), 0755), 0);
	assert_int_equal(mkdir(f->dir, 0755), 0);
	mkdir_in(f->dir, "t-0");
	mkdir_in(f->dir, "t-3");
	mkdir_in(f->dir, "my-topic-1");
	mkdir_in(f->dir, "junk");
	mkdir_in(f->dir, "x-01");
	mkdir_in(f->dir, "..-0");
	snprintf(path, sizeof(path), "%s/y-0", f->dir);
	assert_true((fd = open(path, O_CREAT | O_WRONLY, 0644)) >= 0);
	close(fd);
	/* A link to a directory elsewhere is not followed. */
	snprintf(target, sizeof(target), "%s/outside-0", f->root);
	assert_int_equal(mkdir(target, 0755), 0);
	snprintf(path, sizeof(path), "%s/z-0", f->dir);
	assert_int_equal(symlink(target, path), 0);

	config(&cfg, f->dir);
	s = open_store(&cfg);
	/* Existing data with no marker is recovered: all 6 partitions. */
	assert_int_equal(klog_store_clean(s), 0);
	assert_int_equal(klog_store_recovered(s), 6);
	assert_int_equal(klog_store_topic_count(s), 2);
	assert_string_equal(klog_store_topic_name(s, 0), "my-topic");
	assert_string_equal(klog_store_topic_name(s, 1), "t");
	assert_int_equal(klog_store_partitions(s, "t"), 4);
	assert_int_equal(klog_store_partitions(s, "my-topic"), 2);
	assert_true(exists(f->dir, "t-1"));
	assert_true(exists(f->dir, "t-2"));
	assert_true(exists(f->dir, "t-3/00000000000000000000.klog"));
	assert_false(exists(target, "00000000000000000000.klog"));
	assert_int_equal(klog_store_partitions(s, "z"), -KLOG_ENOTOPIC);
	assert_int_equal(klog_store_partitions(s, "x"), -KLOG_ENOTOPIC);
	close_store(s, 1);

	/* A partition past the configured maximum refuses to open. */
	mkdir_in(f->dir, "t-9");
	cfg.max_partitions = 8;
	s = NULL;
	assert_int_equal(klog_store_open(&cfg, &s, &err), -KLOG_EINVAL);
	assert_null(s);
	assert_non_null(strstr(err.msg, "t-9"));
	/* ...and so does a gap in a segment list. */
	cfg.max_partitions = 16;
	snprintf(path, sizeof(path), "%s/t-1/00000000000000000100.klog",
	    f->dir);
	assert_true((fd = open(path, O_CREAT | O_WRONLY, 0644)) >= 0);
	close(fd);
	assert_int_equal(klog_store_open(&cfg, &s, &err), -KLOG_ECORRUPT);
	assert_non_null(strstr(err.msg, "00000000000000000100.klog"));
	/* The lock went with the failed open. */
	unlink(path);
	s = open_store(&cfg);
	assert_int_equal(klog_store_partitions(s, "t"), 10);
	close_store(s, 1);
}

static void
test_bad_config(void **state)
{
	struct fixture *f = *state;
	klog_store_config_t cfg;
	klog_store_t *s = NULL;
	klog_err_t err = { 0 };
	char path[PATH_MAX];
	int fd;

	config(&cfg, f->dir);
	cfg.default_partitions = 0;
	assert_int_equal(klog_store_open(&cfg, &s, &err), -KLOG_EINVAL);
	config(&cfg, NULL);
	assert_int_equal(klog_store_open(&cfg, &s, &err), -KLOG_EINVAL);
	/* A data directory path through a regular file. */
	snprintf(path, sizeof(path), "%s/file", f->root);
	assert_true((fd = open(path, O_CREAT | O_WRONLY, 0644)) >= 0);
	close(fd);
	strcat(path, "/data");
	config(&cfg, path);
	assert_true(klog_store_open(&cfg, &s, &err) < 0);
	assert_non_null(strstr(err.msg, "file"));
	assert_null(s);
}

struct flusher {
	klog_store_t *s;
	atomic_int stop, failed;
};

/* What the broker's flusher does: walk the store's logs and flush them. */
static void *
flush_loop(void *arg)
{
	struct flusher *fl = arg;
	klog_log_t *log;

	while (!atomic_load(&fl->stop))
		for (size_t i = 0; i < klog_store_log_count(fl->s); i++)
			if ((log = klog_store_log(fl->s, i)) == NULL ||
			    klog_log_flush(log, NULL) != 0)
				atomic_store(&fl->failed, 1);
	return NULL;
}

static void
test_flusher_thread(void **state)
{
	struct fixture *f = *state;
	klog_store_config_t cfg;
	struct flusher fl = { 0 };
	char name[32];
	pthread_t th;

	config(&cfg, f->dir);
	cfg.default_partitions = 2;
	fl.s = open_store(&cfg);
	assert_int_equal(pthread_create(&th, NULL, flush_loop, &fl), 0);
	/* Topics appear (the log list grows) while the flusher walks it. */
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "topic%d", i);
		append_msg(get(fl.s, name, i % 2), "x");
	}
	atomic_store(&fl.stop, 1);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&fl.failed), 0);
	assert_int_equal(klog_store_log_count(fl.s), 80);
	close_store(fl.s, 1);
	fl.s = open_store(&cfg);
	assert_int_equal(klog_store_topic_count(fl.s), 40);
	assert_int_equal(klog_log_end(get(fl.s, "topic7", 1)), 10);
	close_store(fl.s, 1);
}

/* Issue 18 #6: a marker that cannot be written whole (here the file size
 * limit, as a full disk does) is not left behind, empty or cut: the next
 * start must recover, and say so plainly. */
static void
test_marker_atomic(void **state)
{
	struct fixture *f = *state;
	klog_store_config_t cfg;
	klog_err_t err = { 0 };
	struct rlimit old, lim;
	klog_store_t *s;
	int r;

	config(&cfg, f->dir);
	s = open_store(&cfg);
	append_msg(get(s, "t", 0), "hello");
	append_msg(get(s, "u", 0), "hello");
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = 12;  /* less than the marker's text */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	r = klog_store_close(s, 1, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_true(r < 0);
	assert_false(exists(f->dir, KLOG_CLEAN_MARKER));
	assert_false(exists(f->dir, KLOG_CLEAN_MARKER ".tmp"));
	s = open_store(&cfg);
	assert_false(klog_store_clean(s));
	close_store(s, 1);
	assert_true(exists(f->dir, KLOG_CLEAN_MARKER));
}

struct seen {
	size_t calls, last_done, total;
	int recovering;
};

static void
on_progress(void *arg, const klog_store_progress_t *pr)
{
	struct seen *sn = arg;

	sn->calls++;
	assert_int_equal(pr->done, sn->last_done + 1);
	sn->last_done = pr->done;
	sn->total = pr->total;
	sn->recovering += pr->recovering;
}

/* Opening reports each partition it opens, of how many, and whether it
 * was recovered; topics made later are not opening's. */
static void
test_open_progress(void **state)
{
	struct fixture *f = *state;
	struct seen sn = { 0 };
	klog_store_config_t cfg;
	klog_store_t *s;

	config(&cfg, f->dir);
	s = open_store(&cfg);
	assert_int_equal(klog_store_create_topic(s, "a", 2, NULL), 0);
	append_msg(get(s, "a", 0), "x");
	append_msg(get(s, "a", 1), "x");
	append_msg(get(s, "b", 0), "x");
	close_store(s, 0);
	cfg.progress = on_progress;
	cfg.progress_arg = &sn;
	s = open_store(&cfg);
	assert_int_equal(sn.calls, 3);
	assert_int_equal(sn.total, 3);
	assert_int_equal(sn.recovering, 3);
	append_msg(get(s, "c", 0), "x");
	assert_int_equal(sn.calls, 3);
	close_store(s, 1);
	memset(&sn, 0, sizeof(sn));
	s = open_store(&cfg);
	assert_int_equal(sn.calls, 4);
	assert_int_equal(sn.recovering, 0);
	close_store(s, 1);
}

/* A holder of the store's log 0 on a thread of its own, as the broker's
 * time indexer is: it lets go only once told to, and a while after. */
struct holder {
	klog_store_t *s;
	atomic_int drop, held, released;
};

static void *
hold_main(void *arg)
{
	struct holder *h = arg;

	assert_non_null(klog_store_hold(h->s, 0, &h->drop));
	atomic_store(&h->held, 1);
	for (int i = 0; i < 5000 && !atomic_load(&h->drop); i++)
		usleep(1000);
	usleep(20000);
	atomic_store(&h->released, 1);
	klog_store_release(h->s);
	return NULL;
}

static void
test_hold(void **state)
{
	struct fixture *f = *state;
	klog_store_config_t cfg;
	struct holder h = { 0 };
	klog_err_t err = { 0 };
	klog_log_t **logs;
	pthread_t t;
	int n;

	config(&cfg, f->dir);
	h.s = open_store(&cfg);
	append_msg(get(h.s, "a", 0), "x");
	assert_null(klog_store_hold(h.s, 1, &h.drop));
	assert_int_equal(pthread_create(&t, NULL, hold_main, &h), 0);
	while (!atomic_load(&h.held))
		usleep(1000);
	/* The deletion asks the holder to let go, and waits for it. */
	assert_int_equal(klog_store_delete_topic(h.s, "a", &logs, &n, &err),
	    0);
	assert_int_equal(atomic_load(&h.drop), 1);
	assert_int_equal(atomic_load(&h.released), 1);
	pthread_join(t, NULL);
	assert_int_equal(n, 1);
	klog_log_close(logs[0]);
	free(logs);
	assert_null(klog_store_hold(h.s, 0, &h.drop));
	close_store(h.s, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_marker_lifecycle),
		T(test_marker_ends),
		T(test_marker_atomic),
		T(test_open_progress),
		T(test_lock),
		T(test_get),
		T(test_topics_sorted),
		T(test_scan),
		T(test_bad_config),
		T(test_flusher_thread),
		T(test_hold),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
