/*
 * Tests for lib/group/reset.c, klog-group reset's plan and commit, against
 * a real ZooKeeper (zkserver.h) and the fake broker (fakebroker.h)
 * registered in it as broker 1 with topic "t" of two partitions.  Each
 * test works under a chroot of its own.  Without zkServer.sh every test is
 * skipped.
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
#include "klog/group/reset.h"
#include "klog/zk/layout.h"
#include "fx/zkserver.h"

typedef struct env {
	fake_t *f;
	klog_zk_t *zk;
} env_t;

/* The broker with two messages in partition 0, one in 1, registered
 * under root; group "g" has committed 5 for partition 0. */
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
	assert_int_equal(klog_layout_offset_commit(e->zk, "g", "t", 1, 0, 5,
	    &err), 0);
}

static void
env_stop(env_t *e)
{
	if (e->f != NULL)
		fake_stop(e->f);
	klog_zk_close(e->zk);
}

static klog_reset_config_t
config(klog_reset_to_t to, int64_t value)
{
	klog_reset_config_t c = { .group = "g", .topic = "t", .to = to,
	    .value = value, .timeout_ms = 2000 };

	return c;
}

static int64_t
committed(const env_t *e, int32_t part)
{
	klog_err_t err = { 0, "" };
	int64_t off = -1;

	assert_int_equal(klog_layout_offset_read(e->zk, "g", "t", 1, part,
	    &off, &err), 0);
	return off;
}

/* The plan writes nothing; the commit writes every row. */
static void
test_plan_then_commit(void **state)
{
	klog_reset_config_t c = config(KLOG_RESET_OFFSET, 7);
	klog_err_t err = { 0, "" };
	klog_reset_row_t *rows;
	size_t n;
	env_t e;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/r1");
	assert_int_equal(klog_reset_plan(e.zk, &c, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].part.broker, 1);
	assert_int_equal(rows[0].part.part, 0);
	assert_int_equal(rows[0].before, 5);
	assert_int_equal(rows[0].after, 7);
	assert_int_equal(rows[1].part.part, 1);
	assert_int_equal(rows[1].before, -1);
	assert_int_equal(rows[1].after, 7);
	assert_int_equal(committed(&e, 0), 5);
	assert_int_equal(klog_reset_commit(e.zk, &c, rows, n, &err), 0);
	assert_int_equal(committed(&e, 0), 7);
	assert_int_equal(committed(&e, 1), 7);
	free(rows);
	env_stop(&e);
}

/* Earliest and latest are the broker's; a time older than everything is
 * the first offset. */
static void
test_brokers_asked(void **state)
{
	klog_reset_config_t c;
	klog_err_t err = { 0, "" };
	klog_reset_row_t *rows;
	size_t n;
	env_t e;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/r2");
	c = config(KLOG_RESET_LATEST, 0);
	assert_int_equal(klog_reset_plan(e.zk, &c, &rows, &n, &err), 0);
	assert_int_equal(rows[0].after, (int64_t)e.f->log[0].len);
	assert_int_equal(rows[1].after, (int64_t)e.f->log[1].len);
	free(rows);
	c = config(KLOG_RESET_EARLIEST, 0);
	assert_int_equal(klog_reset_plan(e.zk, &c, &rows, &n, &err), 0);
	assert_int_equal(rows[0].after, 0);
	free(rows);
	/* The fake has no offset at any time: nothing is that old. */
	c = config(KLOG_RESET_TIME, 1000);
	assert_int_equal(klog_reset_plan(e.zk, &c, &rows, &n, &err), 0);
	assert_int_equal(rows[0].after, 0);
	assert_int_equal(rows[1].after, 0);
	free(rows);
	env_stop(&e);
}

static void
test_live_members_refused_unless_forced(void **state)
{
	klog_reset_config_t c = config(KLOG_RESET_OFFSET, 1);
	klog_layout_sub_t sub = { "t", 1 };
	klog_err_t err = { 0, "" };
	klog_reset_row_t *rows;
	size_t n;
	env_t e;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/r3");
	assert_int_equal(klog_layout_member_register(e.zk, "g", "g_m", &sub,
	    1, &err), 0);
	assert_int_equal(klog_reset_plan(e.zk, &c, &rows, &n, &err),
	    -KLOG_EBUSY);
	assert_string_equal(err.msg, "group \"g\" has 1 live member (g_m)");
	assert_null(rows);
	c.force = 1;
	assert_int_equal(klog_reset_plan(e.zk, &c, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	free(rows);
	env_stop(&e);
}

static void
test_unknown_topic(void **state)
{
	klog_reset_config_t c = config(KLOG_RESET_OFFSET, 1);
	klog_err_t err = { 0, "" };
	klog_reset_row_t *rows;
	size_t n;
	env_t e;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/r4");
	c.topic = "u";
	assert_int_equal(klog_reset_plan(e.zk, &c, &rows, &n, &err),
	    -KLOG_ENOTOPIC);
	assert_string_equal(err.msg, "topic \"u\": no partitions registered "
	    "or committed");
	assert_null(rows);
	assert_int_equal(n, 0);
	env_stop(&e);
}

/* A broker that cannot answer fails the plan: no offset is guessed. */
static void
test_broker_down_fails_the_plan(void **state)
{
	klog_reset_config_t c = config(KLOG_RESET_LATEST, 0);
	klog_err_t err = { 0, "" };
	klog_reset_row_t *rows;
	size_t n;
	env_t e;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/r5");
	fake_stop(e.f);
	e.f = NULL;
	assert_int_equal(klog_reset_plan(e.zk, &c, &rows, &n, &err),
	    -KLOG_ECONN);
	assert_non_null(strstr(err.msg, "topic \"t\" partition 1-0"));
	assert_null(rows);
	assert_int_equal(committed(&e, 0), 5);
	env_stop(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_then_commit),
		cmocka_unit_test(test_brokers_asked),
		cmocka_unit_test(test_live_members_refused_unless_forced),
		cmocka_unit_test(test_unknown_topic),
		cmocka_unit_test(test_broker_down_fails_the_plan),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
