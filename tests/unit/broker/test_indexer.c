/*
 * Unit tests for the broker's time indexer (lib/broker/indexer.c): after a
 * reopen its thread completes every partition's time index with no lookup;
 * paced while producers write, a deletion of the topic it holds waits only
 * a moment, and so does its stop.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <sys/uio.h>

#include "fx/tmpdir.h"

#include "klog/base/buf.h"
#include "klog/base/clock.h"
#include "klog/broker/indexer.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"
#include "klog/storage/record.h"
#include "klog/storage/store.h"

struct fixture {
	char dir[64];
	klog_store_t *store;
};

static klog_store_t *
open_store(const char *dir, int64_t segment_bytes)
{
	klog_store_config_t cfg;
	klog_store_t *s = NULL;
	klog_err_t err = { 0 };
	int r;

	klog_store_config_default(&cfg);
	cfg.data_dir = dir;
	cfg.log.segment_bytes = segment_bytes;
	cfg.default_partitions = 1;
	cfg.auto_create = 1;
	if ((r = klog_store_open(&cfg, &s, &err)) != 0)
		fail_msg("store open: %s", klog_err_text(&err, r));
	return s;
}

static klog_log_t *
get(klog_store_t *s)
{
	klog_log_t *log = NULL;
	klog_err_t err = { 0 };

	assert_int_equal(klog_store_get(s, "t", 0, 1, &log, &err), 0);
	return log;
}

/* About size bytes of 16 KiB batches into topic t, then a clean close
 * and a reopen: segments with no time index. */
static void
written(struct fixture *f, int64_t size, int64_t segment_bytes)
{
	klog_store_t *s = open_store(f->dir, segment_bytes);
	klog_log_t *log = get(s);
	klog_batch_builder_t bb;
	klog_err_t err = { 0 };
	char value[200];
	klog_buf_t b;

	memset(value, 'v', sizeof(value));
	klog_buf_init(&b);
	for (int64_t ts = 1000; klog_log_end(log) < size; ts += 100) {
		b.len = 0;
		klog_batch_begin(&bb, &b, ts, KLOG_NO_PRODUCER, -1, -1);
		for (int i = 0; i < 78; i++)
			klog_batch_add(&bb, &b, &(klog_record_in_t){ value,
			    sizeof(value), NULL, 0, ts + i, NULL, 0 });
		assert_int_equal(klog_batch_end(&bb, &b), 0);
		assert_int_equal(klog_log_append(log, b.data, b.len, 1, NULL,
		    &err), 0);
	}
	klog_buf_free(&b);
	assert_int_equal(klog_store_close(s, 1, &err), 0);
	f->store = open_store(f->dir, segment_bytes);
	log = get(f->store);
	assert_true(klog_log_segment_count(log) >= 4);
	assert_int_equal(klog_log_time_unindexed(log), klog_log_end(log));
}

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "indexer"));
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	if (f->store != NULL)
		(void)klog_store_close(f->store, 0, NULL);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* Until log's indexes are complete, up to ms: 1 if they are. */
static int
wait_indexed(klog_log_t *log, int64_t ms)
{
	int64_t end = klog_clock_mono_ms() + ms;

	while (klog_log_time_unindexed(log) > 0)
		if (klog_clock_mono_ms() > end)
			return 0;
		else
			klog_clock_sleep_ms(2);
	return 1;
}

static void
test_completes(void **state)
{
	struct fixture *f = *state;
	klog_indexer_config_t cfg = { .rate = 0, .period_ms = 50 };
	klog_indexer_t *ix;
	klog_log_t *log;
	klog_log_time_t t;
	int64_t t0;

	written(f, 1 << 20, 128 << 10);
	cfg.store = f->store;
	log = get(f->store);
	assert_int_equal(klog_indexer_new(&cfg, &ix), 0);
	assert_true(wait_indexed(log, 5000));
	/* No lookup came before: the thread read every segment. */
	assert_int_equal(klog_log_find_time(log, 5000, &t, NULL), 0);
	assert_int_equal(t.status, KLOG_LOG_TIME_FOUND);
	t0 = klog_clock_mono_ms();
	klog_indexer_free(ix);
	assert_true(klog_clock_mono_ms() - t0 < 1000);
}

/* The segments' pages out of the page cache: 0 if this file system
 * keeps them (tmpfs). */
static int
drop_pages(klog_log_t *log, const char *dir)
{
	klog_segment_info_t info[64];
	char path[512], c;
	struct iovec v = { &c, 1 };
	size_t n;
	int fd, gone = 1;

	assert_int_equal(klog_log_segments(log, info, 64, &n), 0);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/t-0/%020lld.klog", dir,
		    (long long)info[i].base);
		assert_true((fd = open(path, O_RDONLY)) >= 0);
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		gone &= preadv2(fd, &v, 1, 0, RWF_NOWAIT) < 0;
		close(fd);
	}
	return gone;
}

static void
test_delete_while_paced(void **state)
{
	struct fixture *f = *state;
	/* 1 MiB a second while "producers write": a chunk a second. */
	klog_indexer_config_t cfg = { .rate = 1 << 20, .period_ms = 10000 };
	klog_err_t err = { 0 };
	klog_indexer_t *ix;
	klog_log_t *log, **logs;
	int64_t end, t0;
	int n;

	written(f, 4 << 20, 1 << 20);
	cfg.store = f->store;
	log = get(f->store);
	end = klog_log_end(log);
	if (!drop_pages(log, f->dir))
		skip();
	assert_int_equal(klog_indexer_new(&cfg, &ix), 0);
	klog_indexer_writing(ix);
	/* Its first chunk read, it waits for its turn at the rate. */
	t0 = klog_clock_mono_ms();
	while (klog_log_time_unindexed(log) == end &&
	    klog_clock_mono_ms() - t0 < 5000)
		klog_clock_sleep_ms(1);
	assert_true(klog_log_time_unindexed(log) < end);
	assert_true(klog_log_time_unindexed(log) > 0);
	/* The deletion waits for it to let go: a few ms, not the second. */
	t0 = klog_clock_mono_ms();
	assert_int_equal(klog_store_delete_topic(f->store, "t", &logs, &n,
	    &err), 0);
	assert_true(klog_clock_mono_ms() - t0 < 300);
	for (int i = 0; i < n; i++)
		klog_log_close(logs[i]);
	free(logs);
	t0 = klog_clock_mono_ms();
	klog_indexer_free(ix);
	assert_true(klog_clock_mono_ms() - t0 < 300);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_completes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_delete_while_paced, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
