/*
 * Tests for lib/zk/rtadmin.c: the grown assignment and the wait rule without
 * a server, then alter and the deletion protocol against a real throwaway
 * ZooKeeper (zkserver.h); without zkServer.sh those are skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/zk/layout.h"
#include "klog/zk/rtadmin.h"
#include "klog/zk/rtopics.h"
#include "klog/zk/zk.h"
#include "fx/zkserver.h"

static void
test_grow_keeps_and_continues(void **state)
{
	static const int32_t brokers[] = { 1, 2, 3 };
	klog_rtopic_t old, grown, full;
	klog_err_t err;
	int p;

	(void)state;
	assert_int_equal(klog_rtopic_assign(brokers, 3, 2, 2, 2, 1, &old,
	    &err), 0);
	assert_int_equal(old.replicas[0], 2);
	assert_int_equal(klog_rtadmin_grow(&old, brokers, 3, 5, &grown, &err),
	    0);
	assert_int_equal(grown.nparts, 5);
	assert_int_equal(grown.rf, 2);
	assert_int_equal(grown.min_insync, 2);
	/* The old partitions exactly as they were. */
	assert_memory_equal(grown.replicas, old.replicas,
	    (size_t)(2 * 2) * sizeof(int32_t));
	/* The new ones where the same assignment of 5, started where
	 * partition 0's first replica is, puts them: leaders go on round. */
	assert_int_equal(klog_rtopic_assign(brokers, 3, 5, 2, 2, 1, &full,
	    &err), 0);
	for (p = 2; p < 5; p++)
		assert_memory_equal(grown.replicas + p * 2,
		    full.replicas + p * 2, 2 * sizeof(int32_t));
	assert_int_equal(grown.replicas[2 * 2], 1);   /* 2, 3, then 1 */
	klog_rtopic_free(&full);
	klog_rtopic_free(&grown);
	klog_rtopic_free(&old);
}

static void
test_grow_start_without_the_first(void **state)
{
	static const int32_t before[] = { 1, 2, 3 }, now[] = { 1, 3, 4 };
	klog_rtopic_t old, grown;
	klog_err_t err;

	(void)state;
	assert_int_equal(klog_rtopic_assign(before, 3, 1, 1, 1, 1, &old,
	    &err), 0);
	assert_int_equal(old.replicas[0], 2);
	/* Broker 2 is gone: the start is the next id up, 3. */
	assert_int_equal(klog_rtadmin_grow(&old, now, 3, 3, &grown, &err), 0);
	assert_int_equal(grown.replicas[0], 2);
	assert_int_equal(grown.replicas[1], 4);
	assert_int_equal(grown.replicas[2], 1);
	klog_rtopic_free(&grown);
	klog_rtopic_free(&old);
}

static void
test_grow_refusals(void **state)
{
	static const int32_t brokers[] = { 1, 2, 3 };
	klog_rtopic_t old, grown;
	klog_err_t err;

	(void)state;
	assert_int_equal(klog_rtopic_assign(brokers, 3, 4, 3, 2, 0, &old,
	    &err), 0);
	assert_int_equal(klog_rtadmin_grow(&old, brokers, 3, 3, &grown, &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "it has 4 partitions: partitions are "
	    "added, never removed (ask for more than 4)");
	assert_null(grown.replicas);
	assert_int_equal(klog_rtadmin_grow(&old, brokers, 3, 4, &grown, &err),
	    -KLOG_EINVAL);
	/* Fewer live brokers than replicas. */
	assert_int_equal(klog_rtadmin_grow(&old, brokers, 2, 6, &grown, &err),
	    -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "larger than available brokers"));
	assert_null(grown.replicas);
	klog_rtopic_free(&old);
}

static void
test_waiting(void **state)
{
	static const int32_t brokers[] = { 1, 2, 5 };
	char one[] = "1", five[] = "5", junk[] = "01";
	char *names[] = { junk, one, five };
	klog_zk_list_t done = { names, 0 };
	int32_t ids[4];
	klog_rtopic_t t;
	klog_err_t err;

	(void)state;
	assert_int_equal(klog_rtopic_assign(brokers, 3, 6, 2, 1, 2, &t, &err),
	    0);
	assert_int_equal(klog_rtadmin_waiting(&t, &done, ids, 4), 3);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 2);
	assert_int_equal(ids[2], 5);
	assert_int_equal(klog_rtadmin_waiting(&t, NULL, ids, 4), 3);
	/* "01" is not broker 1. */
	done.n = 1;
	assert_int_equal(klog_rtadmin_waiting(&t, &done, ids, 4), 3);
	done.n = 2;
	assert_int_equal(klog_rtadmin_waiting(&t, &done, ids, 4), 2);
	assert_int_equal(ids[0], 2);
	assert_int_equal(ids[1], 5);
	/* Counted past the room. */
	assert_int_equal(klog_rtadmin_waiting(&t, &done, ids, 1), 2);
	done.n = 3;
	assert_int_equal(klog_rtadmin_waiting(&t, &done, ids, 4), 1);
	assert_int_equal(ids[0], 2);
	klog_rtopic_free(&t);
}

/* ---- against ZooKeeper ---- */

static klog_zk_t *
open_ok(void)
{
	klog_zk_t *zk = NULL;
	klog_err_t err = { 0, "" };
	int rc = klog_zk_open(server.connect, 4000, 10000, &zk, &err);

	if (rc != 0)
		fprintf(stderr, "open %s: %s\n", server.connect, err.msg);
	assert_int_equal(rc, 0);
	return zk;
}

static void
brokers_up(klog_zk_t *zk, int n)
{
	klog_err_t err = { 0, "" };

	for (int id = 1; id <= n; id++)
		assert_int_equal(klog_layout_register_broker(zk, id,
		    "127.0.0.1", 9000 + id, 0, &err), 0);
}

static void
make_topic(klog_zk_t *zk, const char *name, int nparts, int rf)
{
	klog_rtopic_t t;
	klog_err_t err = { 0, "" };
	int rc;

	rc = klog_rtopics_create_live(zk, name, nparts, rf, 1, 0, &t, &err);
	if (rc != 0)
		fail_msg("create %s: %s", name, err.msg);
	klog_rtopic_free(&t);
}

static void
test_alter(void **state)
{
	klog_zk_t *zk;
	klog_err_t err = { 0, "" };
	klog_rtopic_t t, back;
	klog_rstate_t s;
	int already;

	(void)state;
	NEED_SERVER();
	zk = open_ok();
	brokers_up(zk, 3);
	make_topic(zk, "a", 2, 3);
	assert_int_equal(klog_rtadmin_alter(zk, "a", 4, &t, &err), 0);
	assert_int_equal(t.nparts, 4);
	assert_int_equal(klog_rtopics_read(zk, "a", 0, &back, &err), 0);
	assert_int_equal(back.nparts, 4);
	assert_memory_equal(back.replicas, t.replicas,
	    (size_t)(4 * 3) * sizeof(int32_t));
	/* The new partitions' states, as create writes them. */
	assert_int_equal(klog_rtopics_state(zk, "a", 3, 0, &s, &err), 0);
	assert_int_equal(s.leader, t.replicas[3 * 3]);
	assert_int_equal(s.leader_epoch, 0);
	assert_int_equal(s.nisr, 3);
	klog_rtopic_free(&back);
	klog_rtopic_free(&t);

	assert_int_equal(klog_rtadmin_alter(zk, "a", 4, &t, &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "topic \"a\": it has 4 partitions: "
	    "partitions are added, never removed (ask for more than 4)");
	assert_null(t.replicas);
	assert_int_equal(klog_rtadmin_alter(zk, "none", 4, &t, &err),
	    -KLOG_ENOTOPIC);
	assert_string_equal(err.msg, "topic \"none\": no such topic");
	assert_int_equal(klog_rtadmin_alter(zk, "a/b", 4, &t, &err),
	    -KLOG_ETOPIC);
	/* A topic of the 0.7 layout is not ZooKeeper's to grow. */
	assert_int_equal(klog_layout_register_topic(zk, 1, "old", 2, &err), 0);
	assert_int_equal(klog_rtadmin_alter(zk, "old", 4, &t, &err),
	    -KLOG_ENOTOPIC);
	assert_non_null(strstr(err.msg, "is not replicated"));
	/* Nor one being deleted. */
	assert_int_equal(klog_rtadmin_delete(zk, "a", &already, &err), 0);
	assert_int_equal(klog_rtadmin_alter(zk, "a", 6, &t, &err),
	    -KLOG_EBUSY);
	assert_non_null(strstr(err.msg, "is being deleted"));
	assert_int_equal(klog_rtopics_read(zk, "a", 0, &back, &err), 0);
	assert_int_equal(back.nparts, 4);
	klog_rtopic_free(&back);
	assert_int_equal(klog_zk_delete_tree(zk, "/klog", &err), 0);
	assert_int_equal(klog_zk_delete_tree(zk, "/admin", &err), 0);
	assert_int_equal(klog_zk_delete_tree(zk, "/brokers", &err), 0);
	klog_zk_close(zk);
}

static void
test_delete_protocol(void **state)
{
	klog_zk_t *zk;
	klog_err_t err = { 0, "" };
	klog_zk_list_t l;
	klog_rtopic_t t;
	int32_t ids[4];
	int already;

	(void)state;
	NEED_SERVER();
	zk = open_ok();
	brokers_up(zk, 3);
	make_topic(zk, "d", 3, 2);
	assert_int_equal(klog_rtadmin_is_marked(zk, "d", &err), 0);
	assert_int_equal(klog_rtadmin_delete(zk, "nope", &already, &err),
	    -KLOG_ENOTOPIC);
	assert_int_equal(klog_rtadmin_is_marked(zk, "nope", &err), 0);
	assert_int_equal(klog_rtadmin_delete(zk, "d", &already, &err), 0);
	assert_int_equal(already, 0);
	assert_int_equal(klog_rtadmin_delete(zk, "d", &already, &err), 0);
	assert_int_equal(already, 1);
	assert_int_equal(klog_rtadmin_is_marked(zk, "d", &err), 1);
	assert_int_equal(klog_rtadmin_marked(zk, 0, &l, &err), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.names[0], "d");
	klog_zk_list_free(&l);

	/* Every replica's broker must say done; twice is once. */
	assert_int_equal(klog_rtadmin_finish(zk, "d", ids, 4, &err), 3);
	assert_int_equal(klog_rtadmin_done(zk, "d", 2, &err), 0);
	assert_int_equal(klog_rtadmin_done(zk, "d", 2, &err), 0);
	assert_int_equal(klog_rtadmin_finish(zk, "d", ids, 4, &err), 2);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 3);
	assert_int_equal(klog_rtadmin_done(zk, "d", 1, &err), 0);
	/* The name cannot be taken meanwhile. */
	assert_int_equal(klog_rtopics_create_live(zk, "d", 1, 1, 1, 0, &t,
	    &err), -KLOG_EEXIST);
	assert_non_null(strstr(err.msg, "still being deleted"));
	klog_rtopic_free(&t);
	/* A leader node left behind does not stop the removal. */
	assert_int_equal(klog_zk_create(zk, "/klog/topics/d/partitions/0/"
	    "leader", "1", 1, KLOG_ZK_EPHEMERAL, &err), 0);
	assert_int_equal(klog_rtadmin_done(zk, "d", 3, &err), 0);
	assert_int_equal(klog_rtadmin_finish(zk, "d", ids, 4, &err), 0);
	assert_int_equal(klog_zk_exists(zk, "/klog/topics/d", 0, NULL, &err),
	    -KLOG_ENOENT);
	assert_int_equal(klog_zk_exists(zk, "/admin/delete_topics/d", 0, NULL,
	    &err), -KLOG_ENOENT);
	/* Finished is finished: a late done makes nothing again. */
	assert_int_equal(klog_rtadmin_done(zk, "d", 3, &err), 0);
	assert_int_equal(klog_zk_exists(zk, "/admin/delete_topics/d", 0, NULL,
	    &err), -KLOG_ENOENT);
	assert_int_equal(klog_rtadmin_finish(zk, "d", ids, 4, &err), 0);
	/* The name is free again, and a finish without a mark leaves the new
	 * topic alone. */
	make_topic(zk, "d", 1, 1);
	assert_int_equal(klog_rtadmin_finish(zk, "d", ids, 4, &err), 0);
	assert_int_equal(klog_zk_exists(zk, "/klog/topics/d", 0, NULL, &err),
	    0);
	assert_int_equal(klog_zk_delete_tree(zk, "/klog", &err), 0);
	assert_int_equal(klog_zk_delete_tree(zk, "/admin", &err), 0);
	assert_int_equal(klog_zk_delete_tree(zk, "/brokers", &err), 0);
	klog_zk_close(zk);
}

static void
test_wait(void **state)
{
	klog_zk_t *zk;
	klog_err_t err = { 0, "" };
	int32_t ids[4];
	char list[32];
	int already;

	(void)state;
	NEED_SERVER();
	zk = open_ok();
	brokers_up(zk, 3);
	make_topic(zk, "w", 3, 3);
	assert_int_equal(klog_rtadmin_delete(zk, "w", &already, &err), 0);
	assert_int_equal(klog_rtadmin_done(zk, "w", 2, &err), 0);
	/* Brokers 1 and 3 are live and silent: the deadline passes. */
	assert_int_equal(klog_rtadmin_wait(zk, "w", 300, ids, 4, &err),
	    -KLOG_ETIMEDOUT);
	assert_non_null(strstr(err.msg, "1,3 did not remove it within 300 ms"));
	/* Broker 3 goes: 1 is still waited for. */
	assert_int_equal(klog_zk_delete(zk, "/brokers/ids/3", -1, &err), 0);
	assert_int_equal(klog_rtadmin_wait(zk, "w", 200, ids, 4, &err),
	    -KLOG_ETIMEDOUT);
	/* 1 says done: only the down one is left, which is not waited for. */
	assert_int_equal(klog_rtadmin_done(zk, "w", 1, &err), 0);
	assert_int_equal(klog_rtadmin_wait(zk, "w", 10000, ids, 4, &err), 1);
	assert_int_equal(ids[0], 3);
	assert_int_equal(klog_zk_exists(zk, "/klog/topics/w", 0, NULL, &err),
	    0);
	/* It comes back and says done (without finishing): the wait
	 * finishes it. */
	assert_int_equal(klog_rtadmin_done(zk, "w", 3, &err), 0);
	assert_int_equal(klog_rtadmin_wait(zk, "w", 10000, ids, 4, &err), 0);
	assert_int_equal(klog_zk_exists(zk, "/klog/topics/w", 0, NULL, &err),
	    -KLOG_ENOENT);
	assert_int_equal(klog_zk_exists(zk, "/admin/delete_topics/w", 0, NULL,
	    &err), -KLOG_ENOENT);
	assert_string_equal(klog_rtadmin_id_list(ids, 1, list, sizeof(list)),
	    "3");
	ids[1] = 12;
	assert_string_equal(klog_rtadmin_id_list(ids, 2, list, sizeof(list)),
	    "3,12");
	assert_string_equal(klog_rtadmin_id_list(ids, 2, list, 14), "3");
	assert_int_equal(klog_zk_delete_tree(zk, "/klog", &err), 0);
	assert_int_equal(klog_zk_delete_tree(zk, "/admin", &err), 0);
	assert_int_equal(klog_zk_delete_tree(zk, "/brokers", &err), 0);
	klog_zk_close(zk);
}

static void
test_marked_watch(void **state)
{
	klog_zk_t *zk;
	klog_err_t err = { 0, "" };
	klog_zk_event_t ev;
	klog_zk_list_t l;
	int i, got = 0, already;

	(void)state;
	NEED_SERVER();
	zk = open_ok();
	brokers_up(zk, 1);
	/* The root is made to arm the watch on. */
	assert_int_equal(klog_rtadmin_marked(zk, 1, &l, &err), 0);
	assert_int_equal(l.n, 0);
	make_topic(zk, "w", 1, 1);
	assert_int_equal(klog_rtadmin_delete(zk, "w", &already, &err), 0);
	for (i = 0; i < 50 && !got; i++) {
		while (klog_zk_next_event(zk, &ev) == 1)
			if (ev.type == KLOG_ZK_EVENT_CHILD &&
			    strcmp(ev.path, KLOG_RTOPICS_DELETE_ROOT) == 0)
				got = 1;
		if (!got)
			usleep(100000);
	}
	assert_true(got);
	assert_int_equal(klog_zk_delete_tree(zk, "/klog", &err), 0);
	assert_int_equal(klog_zk_delete_tree(zk, "/admin", &err), 0);
	assert_int_equal(klog_zk_delete_tree(zk, "/brokers", &err), 0);
	klog_zk_close(zk);
}

int
main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_grow_keeps_and_continues),
		cmocka_unit_test(test_grow_start_without_the_first),
		cmocka_unit_test(test_grow_refusals),
		cmocka_unit_test(test_waiting),
	};
	const struct CMUnitTest zk[] = {
		cmocka_unit_test(test_alter),
		cmocka_unit_test(test_delete_protocol),
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_marked_watch),
	};
	int rc = cmocka_run_group_tests(pure, NULL, NULL);

	return rc | cmocka_run_group_tests(zk, group_setup, group_teardown);
}
