/*
 * Tests for lib/group/lag.c, klog-group describe's walk, against a real
 * ZooKeeper (zkserver.h) and the fake broker (fakebroker.h) registered in
 * it as broker 1 with topic "t" of two partitions.  Each test works under a
 * chroot of its own.  Without zkServer.sh every test is skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fx/fakebroker.h"
#include "klog/group/lag.h"
#include "klog/zk/layout.h"
#include "fx/zkserver.h"

typedef struct env {
	fake_t *f;
	klog_zk_t *zk;
} env_t;

/* The broker with two messages in partition 0, one in 1, registered
 * under root; group "g" has committed 3 for partition 0, and a thread
 * of its owns partition 1. */
static void
env_start(env_t *e, const char *root)
{
	klog_err_t err = { 0, "" };
	char connect[128];

	snprintf(connect, sizeof(connect), "%s%s", server.connect, root);
	e->f = fake_start(2, 0);
	fake_append(e->f, 0, "a");
	fake_append(e->f, 0, "b");
	fake_append(e->f, 1, "c");
	if (klog_zk_open(connect, 4000, 10000, &e->zk, &err) < 0)
		fail_msg("zookeeper %s: %s", connect, err.msg);
	assert_int_equal(klog_layout_register_broker(e->zk, 1, "127.0.0.1",
	    e->f->port, 0, &err), 0);
	assert_int_equal(klog_layout_register_topic(e->zk, 1, "t", 2, &err),
	    0);
	assert_int_equal(klog_layout_offset_commit(e->zk, "g", "t", 1, 0, 3,
	    &err), 0);
	assert_int_equal(klog_layout_owner_claim(e->zk, "g", "t", 1, 1,
	    "g_m-0", &err), 0);
}

static void
env_stop(env_t *e)
{
	if (e->f != NULL)
		fake_stop(e->f);
	klog_zk_close(e->zk);
}

static void
test_one_topic(void **state)
{
	klog_err_t err = { 0, "" };
	klog_lag_row_t r;
	klog_lag_t *l;
	env_t e;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/l1");
	assert_int_equal(klog_lag_open(e.zk, "g", "t", 2000, NULL, &l, &err), 0);
	assert_int_equal(klog_lag_next(l, &r, &err), 1);
	assert_string_equal(r.topic, "t");
	assert_int_equal(r.part.broker, 1);
	assert_int_equal(r.part.part, 0);
	assert_true(r.has_current && r.has_end && r.has_lag);
	assert_int_equal(r.current, 3);
	assert_int_equal(r.end, (int64_t)e.f->log[0].len);
	assert_int_equal(r.lag, (int64_t)e.f->log[0].len - 3);
	assert_null(r.owner);
	assert_int_equal(klog_lag_next(l, &r, &err), 1);
	assert_int_equal(r.part.part, 1);
	assert_false(r.has_current);
	assert_false(r.has_lag);
	assert_int_equal(r.end, (int64_t)e.f->log[1].len);
	assert_string_equal(r.owner, "g_m-0");
	assert_int_equal(klog_lag_next(l, &r, &err), 0);
	klog_lag_close(l);
	env_stop(&e);
}

/* Without a topic: every topic the group has offsets for, in order. */
static void
test_every_topic(void **state)
{
	klog_err_t err = { 0, "" };
	klog_lag_row_t r;
	klog_lag_t *l;
	env_t e;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/l2");
	assert_int_equal(klog_layout_offset_commit(e.zk, "g", "s", 1, 4, 9,
	    &err), 0);
	assert_int_equal(klog_lag_open(e.zk, "g", NULL, 2000, NULL, &l, &err), 0);
	assert_int_equal(klog_lag_next(l, &r, &err), 1);
	assert_string_equal(r.topic, "s");
	assert_int_equal(r.part.part, 4);
	assert_int_equal(r.current, 9);
	assert_int_equal(klog_lag_next(l, &r, &err), 1);
	assert_string_equal(r.topic, "t");
	assert_int_equal(klog_lag_next(l, &r, &err), 1);
	assert_string_equal(r.topic, "t");
	assert_int_equal(klog_lag_next(l, &r, &err), 0);
	klog_lag_close(l);
	env_stop(&e);
}

static void
test_no_such_group(void **state)
{
	klog_err_t err = { 0, "" };
	klog_lag_t *l;
	env_t e;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/l3");
	assert_int_equal(klog_lag_open(e.zk, "nope", NULL, 2000, NULL, &l, &err),
	    -KLOG_ENOENT);
	assert_string_equal(err.msg, "group \"nope\": no such group");
	assert_null(l);
	env_stop(&e);
}

/* A broker down leaves the ends unknown; the offsets are still shown. */
static void
test_broker_down_leaves_ends_unknown(void **state)
{
	klog_err_t err = { 0, "" };
	klog_lag_row_t r;
	klog_lag_t *l;
	env_t e;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/l4");
	fake_stop(e.f);
	e.f = NULL;
	assert_int_equal(klog_lag_open(e.zk, "g", "t", 2000, NULL, &l, &err), 0);
	assert_int_equal(klog_lag_next(l, &r, &err), 1);
	assert_int_equal(r.current, 3);
	assert_false(r.has_end);
	assert_false(r.has_lag);
	assert_int_equal(klog_lag_next(l, &r, &err), 1);
	assert_false(r.has_end);
	assert_int_equal(klog_lag_next(l, &r, &err), 0);
	klog_lag_close(l);
	env_stop(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_topic),
		cmocka_unit_test(test_every_topic),
		cmocka_unit_test(test_no_such_group),
		cmocka_unit_test(test_broker_down_leaves_ends_unknown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
