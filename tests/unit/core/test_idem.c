/*
 * Unit tests for lib/core/idem.c: a real core over a real store and event
 * loop, produce requests with Kafka producer batches (magic-2 entries
 * with a producer id) as the front ends hand them over.  A retry, in the
 * same read or later, answered with the first copy's offset and not
 * written; each refusal's wire error; the state after a clean restart
 * (from the snapshot) and after one without it (from the log).
 */
#include <sys/stat.h>
#include <sys/types.h>

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

#include "klog/base/buf.h"
#include "klog/base/clock.h"
#include "klog/base/error.h"
#include "klog/core/core.h"
#include "klog/core/idem.h"
#include "klog/net/loop.h"
#include "klog/net/outq.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"
#include "klog/storage/record.h"
#include "klog/storage/store.h"

#define MAX_DONE 8

struct fx {
	char dir[64];
	klog_store_t *store;
	klog_loop_t *loop;
	klog_core_t *core;
	klog_outq_t q;
	int wakes;
	int finished;
	klog_core_park_t *done[MAX_DONE];
	char logs[8192];
	klog_buf_t sets[8];         /* kept until the commit */
	int nsets;
};

#include "fx/corehooks.h"

static void
patch(void *arg, size_t pos, int16_t error)
{
	(void)arg;
	(void)pos;
	(void)error;
	fail_msg("no staged write fails here");
}

static void
open_core(struct fx *f)
{
	klog_core_config_t cc = {
		.default_partitions = 1,
		.auto_create = 1,
		.max_message_bytes = 1 << 20,
	};
	klog_store_config_t sc;
	klog_err_t err = { 0 };
	int rc;

	cc.log = (klog_logger_t){ capture, f, KLOG_LEVEL_DEBUG };
	klog_store_config_default(&sc);
	sc.data_dir = f->dir;
	if ((rc = klog_store_open(&sc, &f->store, &err)) < 0)
		fail_msg("store: %s", klog_err_text(&err, rc));
	if ((rc = klog_core_new(f->loop, f->store, &cc, &f->core, &err)) < 0)
		fail_msg("core: %s", klog_err_text(&err, rc));
}

static void
close_core(struct fx *f, int clean)
{
	klog_err_t err = { 0 };

	klog_core_free(f->core);
	assert_int_equal(klog_store_close(f->store, clean, &err), 0);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "coreidem"));
	assert_int_equal(klog_loop_create(&f->loop), 0);
	klog_loop_set_before_sleep(f->loop, before_sleep, f);
	klog_loop_set_wake(f->loop, on_wake, f);
	klog_outq_init(&f->q);
	for (int i = 0; i < 8; i++)
		klog_buf_init(&f->sets[i]);
	open_core(f);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	klog_outq_free(&f->q);
	close_core(f, 1);
	klog_loop_free(f->loop);
	for (int i = 0; i < 8; i++)
		klog_buf_free(&f->sets[i]);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

static klog_str_t
str(const char *s)
{
	return (klog_str_t){ s, (uint16_t)strlen(s) };
}

/* Stage (not commit) a batch of n records of producer pid at epoch from
 * seq, acks 1: the item. */
static klog_core_item_t
stage(struct fx *f, int64_t pid, int16_t epoch, int32_t seq, int n)
{
	klog_buf_t *b = &f->sets[f->nsets++ % 8];
	klog_batch_builder_t bb;
	klog_produce_part_t pp;
	klog_produce_req_t req = { 1, 1000, 1, &pp };
	klog_core_item_t it;

	/* Stamped now: a producer idle for a day is forgotten at a start. */
	klog_buf_reset(b);
	klog_batch_begin(&bb, b, klog_clock_wall_ms(), pid, epoch, seq);
	for (int i = 0; i < n; i++)
		klog_batch_add(&bb, b, &(klog_record_in_t){ "v", 1, NULL, 0,
		    klog_clock_wall_ms(), NULL, 0 });
	assert_int_equal(klog_batch_end(&bb, b), 0);
	pp = (klog_produce_part_t){ str("t"), 0, b->data, (uint32_t)b->len };
	assert_int_equal(klog_core_produce(f->core, &req, NULL, NULL, &it), 0);
	return it;
}

static klog_core_item_t
produce(struct fx *f, int64_t pid, int16_t epoch, int32_t seq, int n)
{
	klog_core_item_t it = stage(f, pid, epoch, seq, n);

	klog_core_commit(f->core, patch, f);
	return it;
}

static int64_t
end_of(struct fx *f)
{
	klog_log_t *log;
	klog_err_t err;

	assert_int_equal(klog_store_get(f->store, "t", 0, 0, &log, &err), 0);
	return klog_log_end(log);
}

static void
test_retries(void **state)
{
	struct fx *f = *state;
	klog_core_item_t a, b, c;
	int64_t end;

	a = produce(f, 7, 0, 0, 3);
	assert_int_equal(a.error, KLOG_WIRE_NONE);
	assert_int_equal(a.offset, 0);
	end = end_of(f);
	/* A retry after the commit: its first offset, nothing written. */
	b = produce(f, 7, 0, 0, 3);
	assert_int_equal(b.error, KLOG_WIRE_NONE);
	assert_int_equal(b.offset, 0);
	assert_int_equal(b.staged, -1);
	assert_int_equal(end_of(f), end);
	/* In one read: the next batch staged, its retry behind it found. */
	b = stage(f, 7, 0, 3, 2);
	c = stage(f, 7, 0, 3, 2);
	assert_int_equal(b.offset, end);
	assert_int_equal(c.offset, end);
	assert_true(b.staged >= 0);
	assert_int_equal(c.staged, -1);
	klog_core_commit(f->core, patch, f);
	assert_true(end_of(f) > end);
	end = end_of(f);
	/* The refusals, nothing written. */
	assert_int_equal(produce(f, 7, 0, 9, 1).error,
	    KLOG_WIRE_OUT_OF_ORDER_SEQUENCE);
	assert_int_equal(produce(f, 7, 1, 4, 1).error,
	    KLOG_WIRE_OUT_OF_ORDER_SEQUENCE);
	assert_int_equal(produce(f, 8, 0, 4, 1).error,
	    KLOG_WIRE_UNKNOWN_PRODUCER_ID);
	assert_int_equal(produce(f, 7, -1, 5, 1).error,
	    KLOG_WIRE_INVALID_MESSAGE);
	assert_int_equal(end_of(f), end);
	/* Logged, a line a second: the first. */
	assert_non_null(strstr(f->logs, "producer 7 epoch 0: sequences 9..9 "
	    "refused (OUT_OF_ORDER_SEQUENCE_NUMBER): its last batch is 3..4 "
	    "at epoch 0"));
	assert_null(strstr(f->logs, "producer 8 epoch 0"));
	/* A new epoch from 0, and the old one fenced. */
	assert_int_equal(produce(f, 7, 1, 0, 1).error, KLOG_WIRE_NONE);
	assert_int_equal(produce(f, 7, 0, 5, 1).error,
	    KLOG_WIRE_INVALID_PRODUCER_EPOCH);
}

static void
test_restarts(void **state)
{
	struct fx *f = *state;
	klog_core_item_t a;
	char path[128];

	a = produce(f, 7, 0, 0, 3);
	(void)produce(f, 9, 2, 0, 1);
	/* A clean stop saves the state; a start reads it. */
	snprintf(path, sizeof(path), "%s/t-0/%020lld.snapshot", f->dir,
	    (long long)end_of(f));
	close_core(f, 1);
	open_core(f);
	assert_int_equal(produce(f, 7, 0, 0, 3).offset, a.offset);
	assert_int_equal(produce(f, 9, 1, 1, 1).error,
	    KLOG_WIRE_INVALID_PRODUCER_EPOCH);
	/* Without the snapshot (a crash before it), the log's headers. */
	close_core(f, 0);
	assert_int_equal(unlink(path), 0);
	open_core(f);
	assert_int_equal(produce(f, 7, 0, 0, 3).offset, a.offset);
	assert_int_equal(produce(f, 7, 0, 3, 1).error, KLOG_WIRE_NONE);
	assert_non_null(strstr(f->logs, "producer state: 0 snapshots "
	    "unreadable"));
}

/* A producer idle past the expiry is forgotten at a start. */
static void
test_expiry(void **state)
{
	struct fx *f = *state;
	klog_buf_t *b = &f->sets[0];
	klog_batch_builder_t bb;
	klog_produce_part_t pp;
	klog_produce_req_t req = { 1, 1000, 1, &pp };
	klog_core_item_t it;

	klog_buf_reset(b);
	klog_batch_begin(&bb, b, 1000, 7, 0, 0);
	klog_batch_add(&bb, b, &(klog_record_in_t){ "v", 1, NULL, 0, 1000, NULL,
	    0 });
	assert_int_equal(klog_batch_end(&bb, b), 0);
	pp = (klog_produce_part_t){ str("t"), 0, b->data, (uint32_t)b->len };
	assert_int_equal(klog_core_produce(f->core, &req, NULL, NULL, &it), 0);
	klog_core_commit(f->core, patch, f);
	/* Known until the restart, then a stranger. */
	assert_int_equal(produce(f, 7, 0, 5, 1).error,
	    KLOG_WIRE_OUT_OF_ORDER_SEQUENCE);
	close_core(f, 1);
	open_core(f);
	assert_int_equal(produce(f, 7, 0, 1, 1).error,
	    KLOG_WIRE_UNKNOWN_PRODUCER_ID);
}

/* Producer ids: from the data directory's blocks, never the same twice
 * (across a restart too); an epoch bumped for the producer's own id; a
 * cluster's source used once set. */
static int
block_at_5000(void *arg, int64_t *start, int64_t *end, klog_err_t *err)
{
	(void)err;
	++*(int *)arg;
	*start = 5000;
	*end = 5000 + KLOG_PIDS_BLOCK;
	return 0;
}

static void
test_producer_ids(void **state)
{
	struct fx *f = *state;
	int64_t pid = -1, first;
	int16_t epoch = -1;
	klog_err_t err = { 0 };
	int calls = 0;

	assert_int_equal(klog_core_producer_id(f->core, &pid, &epoch, &err), 0);
	assert_true(pid >= 0);
	assert_int_equal(epoch, 0);
	first = pid;
	/* The producer's own: the same id, the next epoch. */
	assert_int_equal(klog_core_producer_id(f->core, &pid, &epoch, &err), 0);
	assert_int_equal(pid, first);
	assert_int_equal(epoch, 1);
	/* An epoch at its end takes a new id at 0. */
	epoch = INT16_MAX - 1;
	assert_int_equal(klog_core_producer_id(f->core, &pid, &epoch, &err), 0);
	assert_int_equal(pid, first + 1);
	assert_int_equal(epoch, 0);
	pid = 3;
	epoch = -1;
	assert_int_equal(klog_core_producer_id(f->core, &pid, &epoch, &err),
	    -KLOG_EINVAL);
	/* A restart reserves the next block: no id twice. */
	close_core(f, 1);
	open_core(f);
	pid = epoch = -1;
	assert_int_equal(klog_core_producer_id(f->core, &pid, &epoch, &err), 0);
	assert_true(pid >= first + KLOG_PIDS_BLOCK);
	klog_core_set_producer_block(f->core, block_at_5000, &calls);
	pid = epoch = -1;
	assert_int_equal(klog_core_producer_id(f->core, &pid, &epoch, &err), 0);
	assert_int_equal(pid, 5000);
	assert_int_equal(calls, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restarts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_producer_ids, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
