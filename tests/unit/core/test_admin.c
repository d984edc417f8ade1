/*
 * Unit tests for lib/core/admin.c: a real core over a real store and event
 * loop, its functions called as lib/broker/native.c calls them.  Topics created,
 * grown and deleted; a delete answering the parked requests of the topic
 * (a long poll, an acks=all produce waiting for its flush) before its
 * partitions go; a partition whose directory is removed behind the core's
 * back failing its acks=all write and starting afresh.  Run under ASan
 * (make unit-asan), a partition freed while the flusher still had it
 * shows as a use after free.
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

#include "klog/base/error.h"
#include "klog/core/admin.h"
#include "klog/core/core.h"
#include "klog/core/replicated.h"
#include "klog/net/loop.h"
#include "klog/net/outq.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"
#include "klog/storage/store.h"

#define MAX_DONE 8
#define E 14                    /* "hello" and friends: one entry */

struct fx {
	char dir[64];
	klog_store_t *store;
	klog_loop_t *loop;
	klog_core_t *core;
	klog_outq_t q;              /* the parks' "connection" */
	int wakes;
	int finished;
	klog_core_park_t *done[MAX_DONE];
	char logs[8192];
};

#include "fx/corehooks.h"

/* ---- hooks (and fx/corehooks.h's) ---- */

static void
patch(void *arg, size_t pos, int16_t error)
{
	(void)arg;
	(void)pos;
	(void)error;
	fail_msg("no staged write fails here");
}

static int
no_isr(void *arg, const char *topic, int partition, int32_t epoch,
    const int32_t *isr, int n)
{
	(void)arg;
	(void)topic;
	(void)partition;
	(void)epoch;
	(void)isr;
	(void)n;
	return 0;
}

/* ---- fixture: eager flushes, auto-create on ---- */

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	klog_core_config_t cc = {
		.default_partitions = 1,
		.auto_create = 1,
		.max_message_bytes = 1 << 20,
		.broker_id = 1,
		.replica_lag_ms = 600000,
	};
	klog_store_config_t sc;
	klog_err_t err = { 0 };
	int rc;

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "coreadmin"));
	cc.log = (klog_logger_t){ capture, f, KLOG_LEVEL_DEBUG };
	klog_store_config_default(&sc);
	sc.data_dir = f->dir;
	if ((rc = klog_store_open(&sc, &f->store, &err)) < 0)
		fail_msg("store: %s", klog_err_text(&err, rc));
	assert_int_equal(klog_loop_create(&f->loop), 0);
	if ((rc = klog_core_new(f->loop, f->store, &cc, &f->core, &err)) < 0)
		fail_msg("core: %s", klog_err_text(&err, rc));
	klog_core_set_replication(f->core, 600000, no_isr, f, NULL, NULL);
	klog_loop_set_before_sleep(f->loop, before_sleep, f);
	klog_loop_set_wake(f->loop, on_wake, f);
	klog_outq_init(&f->q);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	klog_err_t err = { 0 };

	klog_outq_free(&f->q);
	klog_core_free(f->core);
	assert_int_equal(klog_store_close(f->store, 1, &err), 0);
	klog_loop_free(f->loop);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* ---- helpers ---- */

static klog_str_t
str(const char *s)
{
	return (klog_str_t){ s, (uint16_t)strlen(s) };
}

static int16_t
admin(struct fx *f, int16_t api, const char *topic, int32_t n,
    int32_t *now)
{
	klog_topic_admin_t req = { str(topic), n };

	return klog_core_topic_admin(f->core, api, &req, now);
}

/* Run the loop until the flusher has reported count more times. */
static void
spin(struct fx *f, int count)
{
	int w0 = f->wakes;

	for (int i = 0; i < 500 && f->wakes < w0 + count; i++)
		assert_true(klog_loop_run_once(f->loop, 10) >= 0);
	if (f->wakes < w0 + count)
		fail_msg("the flusher never reported");
}

static uint8_t sets[8][64];

/* One message to partition 0 with acks, parked as native.c parks one
 * that waits (*pk), then committed; the item in *it. */
static int
produce(struct fx *f, const char *topic, int acks, klog_core_item_t *it,
    klog_core_park_t **pk)
{
	static int next;
	uint8_t *set = sets[next++ % 8];
	klog_produce_part_t pp = { str(topic), 0, set, 0 };
	klog_produce_req_t req = { (int16_t)acks, 1000, 1, &pp };
	klog_core_reply_t r = { &f->q, finish, f, NULL };
	int waits;

	pp.set_len = (uint32_t)klog_entry_encode(set, "hello", 5);
	waits = klog_core_produce(f->core, &req, NULL, NULL, it);
	*pk = NULL;
	if (waits > 0) {
		*pk = klog_core_park(f->core, KLOG_CORE_PRODUCE, 7, it, 1, 0,
		    &r);
		assert_non_null(*pk);
	}
	klog_core_commit(f->core, patch, f);
	return waits;
}

/* A long poll of partition 0 from offset, for a minute: parked. */
static klog_core_park_t *
long_poll(struct fx *f, const char *topic, int64_t offset)
{
	klog_fetch_part_t fp = { str(topic), 0, offset, 1 << 20 };
	klog_fetch_req_t req = { 60000, 1, 1, &fp };
	klog_core_reply_t r = { &f->q, finish, f, NULL };
	klog_core_park_t *pk;
	klog_core_item_t it;

	assert_int_equal(klog_core_fetch(f->core, &req, &it), 0);
	pk = klog_core_park(f->core, KLOG_CORE_FETCH, 9, &it, 1, 1, &r);
	assert_non_null(pk);
	klog_core_park_fetch(pk, req.min_bytes, req.max_wait_ms);
	return pk;
}

static int16_t
fetch_error(struct fx *f, const char *topic)
{
	klog_fetch_part_t fp = { str(topic), 0, 0, 1 << 20 };
	klog_fetch_req_t req = { 0, 0, 1, &fp };
	klog_core_item_t it;

	assert_int_equal(klog_core_fetch(f->core, &req, &it), 1);
	return it.error;
}

static int
part_dir_exists(struct fx *f, const char *topic)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s-0", f->dir, topic);
	return stat(path, &st) == 0;
}

/* ---- tests ---- */

static void
test_create_and_alter(void **state)
{
	struct fx *f = *state;
	int32_t n;

	assert_int_equal(admin(f, KLOG_API_CREATE_TOPIC, "a", 2, &n),
	    KLOG_WIRE_NONE);
	assert_int_equal(n, 2);
	assert_int_equal(klog_store_partitions(f->store, "a"), 2);
	assert_int_equal(admin(f, KLOG_API_CREATE_TOPIC, "a", 3, &n),
	    KLOG_WIRE_TOPIC_EXISTS);
	assert_int_equal(n, 2);
	/* Fewer is refused, as many is nothing to do, more grows it. */
	assert_int_equal(admin(f, KLOG_API_ALTER_TOPIC, "a", 1, &n),
	    KLOG_WIRE_INVALID_PARTITIONS);
	assert_int_equal(n, 2);
	assert_int_equal(admin(f, KLOG_API_ALTER_TOPIC, "a", 2, &n),
	    KLOG_WIRE_NONE);
	assert_int_equal(admin(f, KLOG_API_ALTER_TOPIC, "a", 5, &n),
	    KLOG_WIRE_NONE);
	assert_int_equal(n, 5);
	assert_int_equal(klog_store_partitions(f->store, "a"), 5);
	assert_int_equal(admin(f, KLOG_API_ALTER_TOPIC, "b", 5, &n),
	    KLOG_WIRE_UNKNOWN_TOPIC);
	assert_int_equal(n, 0);
	assert_int_equal(admin(f, KLOG_API_DELETE_TOPIC, "b", 0, &n),
	    KLOG_WIRE_UNKNOWN_TOPIC);
	assert_int_equal(admin(f, KLOG_API_CREATE_TOPIC, "b", 0, &n),
	    KLOG_WIRE_INVALID_PARTITIONS);
	assert_int_equal(admin(f, KLOG_API_CREATE_TOPIC, "../b", 1, &n),
	    KLOG_WIRE_INVALID_TOPIC);
	assert_int_equal(klog_store_partitions(f->store, "b"), -KLOG_ENOTOPIC);
}

/* A dry run (a Kafka validate-only request) answers as the operation
 * would, with the reason, and changes nothing. */
static void
test_dry_run(void **state)
{
	struct fx *f = *state;
	klog_err_t err = { 0, "" };
	klog_topic_admin_t req;
	int32_t n;

	req = (klog_topic_admin_t){ str("a"), 3 };
	assert_int_equal(klog_core_topic_try(f->core, KLOG_API_CREATE_TOPIC,
	    &req, 1, &n, &err), KLOG_WIRE_NONE);
	assert_int_equal(n, 0);
	assert_int_equal(klog_store_partitions(f->store, "a"), -KLOG_ENOTOPIC);
	assert_false(part_dir_exists(f, "a"));
	req.partitions = 5000;
	assert_int_equal(klog_core_topic_try(f->core, KLOG_API_CREATE_TOPIC,
	    &req, 1, &n, &err), KLOG_WIRE_INVALID_PARTITIONS);
	assert_string_equal(err.msg, "topic \"a\": 5000 partitions: not in "
	    "[1, 1024]");
	req = (klog_topic_admin_t){ str("a b"), 1 };
	assert_int_equal(klog_core_topic_try(f->core, KLOG_API_CREATE_TOPIC,
	    &req, 1, &n, &err), KLOG_WIRE_INVALID_TOPIC);
	assert_string_equal(err.msg, "topic \"a b\": byte 0x20 not allowed "
	    "(only A-Z a-z 0-9 . _ -)");

	assert_int_equal(admin(f, KLOG_API_CREATE_TOPIC, "a", 2, &n),
	    KLOG_WIRE_NONE);
	req = (klog_topic_admin_t){ str("a"), 2 };
	assert_int_equal(klog_core_topic_try(f->core, KLOG_API_CREATE_TOPIC,
	    &req, 1, &n, &err), KLOG_WIRE_TOPIC_EXISTS);
	assert_string_equal(err.msg, "topic \"a\" exists");
	req.partitions = 4;
	assert_int_equal(klog_core_topic_try(f->core, KLOG_API_ALTER_TOPIC,
	    &req, 1, &n, &err), KLOG_WIRE_NONE);
	assert_int_equal(n, 2);
	assert_int_equal(klog_store_partitions(f->store, "a"), 2);
	req.partitions = 1;
	assert_int_equal(klog_core_topic_try(f->core, KLOG_API_ALTER_TOPIC,
	    &req, 1, &n, &err), KLOG_WIRE_INVALID_PARTITIONS);
	req.partitions = 0;
	assert_int_equal(klog_core_topic_try(f->core, KLOG_API_DELETE_TOPIC,
	    &req, 1, &n, &err), KLOG_WIRE_NONE);
	assert_int_equal(klog_store_partitions(f->store, "a"), 2);
	assert_true(part_dir_exists(f, "a"));
}

/* A long poll on the topic is answered UNKNOWN_TOPIC by the delete,
 * before its minute is up; the directory goes; a produce makes the topic
 * afresh, from offset 0. */
static void
test_delete_answers_long_poll(void **state)
{
	struct fx *f = *state;
	klog_core_item_t it;
	klog_core_park_t *pk, *poll;
	int32_t n;

	assert_int_equal(produce(f, "t", KLOG_ACKS_ALL, &it, &pk), 1);
	spin(f, 1);
	assert_int_equal(f->finished, 1);
	assert_int_equal(pk->items[0].error, KLOG_WIRE_NONE);
	poll = long_poll(f, "t", E);
	assert_int_equal(f->finished, 1);

	assert_int_equal(admin(f, KLOG_API_DELETE_TOPIC, "t", 0, &n),
	    KLOG_WIRE_NONE);
	assert_int_equal(n, 1);
	assert_int_equal(f->finished, 2);
	assert_ptr_equal(f->done[1], poll);
	assert_int_equal(poll->items[0].error, KLOG_WIRE_UNKNOWN_TOPIC);
	assert_null(poll->items[0].part);
	assert_false(part_dir_exists(f, "t"));
	assert_int_equal(klog_store_partitions(f->store, "t"), -KLOG_ENOTOPIC);
	assert_int_equal(fetch_error(f, "t"), KLOG_WIRE_UNKNOWN_TOPIC);
	assert_non_null(strstr(f->logs, "deleted topic \"t\" (1 partition)"));

	assert_int_equal(produce(f, "t", KLOG_ACKS_ALL, &it, &pk), 1);
	assert_int_equal(it.offset, 0);
	spin(f, 1);
	assert_int_equal(f->finished, 3);
	assert_int_equal(pk->items[0].error, KLOG_WIRE_NONE);
	assert_true(part_dir_exists(f, "t"));
}

/* Deleted with its flush asked for and not yet done: the acks=all write
 * is answered with an error (never as durable), and the partition lives
 * on until the flusher lets go of it. */
static void
test_delete_with_flush_in_flight(void **state)
{
	struct fx *f = *state;
	klog_core_item_t it;
	klog_core_park_t *pk;
	int32_t n;

	assert_int_equal(produce(f, "t", KLOG_ACKS_ALL, &it, &pk), 1);
	assert_int_equal(admin(f, KLOG_API_DELETE_TOPIC, "t", 0, &n),
	    KLOG_WIRE_NONE);
	assert_int_equal(f->finished, 1);
	assert_int_equal(pk->items[0].error, KLOG_WIRE_UNKNOWN_TOPIC);
	assert_int_equal(pk->items[0].offset, -1);
	/* The flush runs on a log that is out of the store; its report
	 * frees the partition. */
	spin(f, 1);
	assert_int_equal(f->finished, 1);
	assert_false(part_dir_exists(f, "t"));
}

/* A replicated topic is ZooKeeper's: neither grown nor deleted here. */
static void
test_replicated_refused(void **state)
{
	struct fx *f = *state;
	const int32_t r1[] = { 1 };
	klog_err_t err = { 0 };
	int32_t n;

	assert_int_equal(klog_core_lead(f->core, "rt", 0, 1, 1, r1, 1, r1, 1,
	    1, &err), 0);
	assert_int_equal(admin(f, KLOG_API_DELETE_TOPIC, "rt", 0, &n),
	    KLOG_WIRE_TOPIC_REPLICATED);
	assert_int_equal(admin(f, KLOG_API_ALTER_TOPIC, "rt", 4, &n),
	    KLOG_WIRE_TOPIC_REPLICATED);
	assert_true(part_dir_exists(f, "rt"));
	assert_int_equal(klog_store_partitions(f->store, "rt"), 1);
}

/* rm -rf DATA/t-0 under the core: the next acks=all write fails at its
 * flush, the partition is dropped, and the one after lands in a new
 * directory from offset 0. */
static void
test_directory_removed(void **state)
{
	struct fx *f = *state;
	char path[PATH_MAX];
	klog_core_item_t it;
	klog_core_park_t *pk;

	assert_int_equal(produce(f, "t", KLOG_ACKS_ALL, &it, &pk), 1);
	spin(f, 1);
	assert_int_equal(pk->items[0].error, KLOG_WIRE_NONE);
	snprintf(path, sizeof(path), "%s/t-0", f->dir);
	tmpdir_remove(path);
	assert_false(part_dir_exists(f, "t"));

	assert_int_equal(produce(f, "t", KLOG_ACKS_ALL, &it, &pk), 1);
	assert_int_equal(it.offset, E);
	spin(f, 1);
	assert_int_equal(f->finished, 2);
	assert_int_equal(pk->items[0].error, KLOG_WIRE_STORAGE_ERROR);
	assert_non_null(strstr(f->logs, "removed behind the broker's back"));
	/* It was the topic's only partition: the topic went with it. */
	assert_int_equal(klog_store_partitions(f->store, "t"), -KLOG_ENOTOPIC);

	assert_int_equal(produce(f, "t", KLOG_ACKS_ALL, &it, &pk), 1);
	assert_int_equal(it.offset, 0);
	spin(f, 1);
	assert_int_equal(f->finished, 3);
	assert_int_equal(pk->items[0].error, KLOG_WIRE_NONE);
	assert_true(part_dir_exists(f, "t"));
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_create_and_alter),
		T(test_dry_run),
		T(test_delete_answers_long_poll),
		T(test_delete_with_flush_in_flight),
		T(test_replicated_refused),
		T(test_directory_removed),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
