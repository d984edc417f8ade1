/*
 * Tests for lib/zk/zk.c, and the cluster operations of lib/zk/layout.c built on
 * it, against a real ZooKeeper: the group setup starts a throwaway
 * standalone server (zkserver.h), the teardown kills it.  Without
 * zkServer.sh every test is skipped.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/zk/layout.h"
#include "klog/zk/zk.h"
#include "klog/zk/zkasync.h"
#include "fx/zkserver.h"


static klog_zk_t *
open_auth_ok(const char *connect, const char *auth, int session_ms)
{
	klog_zk_t *zk = NULL;
	klog_err_t err = { 0, "" };
	int rc = klog_zk_open_auth(connect, auth, session_ms, 10000, &zk,
	    &err);

	if (rc != 0)
		fprintf(stderr, "open %s: %s\n", connect, err.msg);
	assert_int_equal(rc, 0);
	return zk;
}

static klog_zk_t *
open_ok(const char *connect, int session_ms)
{
	return open_auth_ok(connect, NULL, session_ms);
}


/* Wait up to ms for an event of the given type; 1 if it came.  Other
 * events are recorded in *seen as a bit mask of their types. */
static int
wait_event(klog_zk_t *zk, int type, int ms, klog_zk_event_t *ev,
    unsigned *seen)
{
	struct pollfd p = { klog_zk_event_fd(zk), POLLIN, 0 };
	struct timespec t0, t;
	int64_t spent = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (spent < ms) {
		if (poll(&p, 1, 100) > 0) {
			while (klog_zk_next_event(zk, ev) == 1) {
				if (seen != NULL)
					*seen |= 1u << ev->type;
				if (ev->type == type)
					return 1;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		spent = (t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000;
	}
	return 0;
}

static void
test_open_errors(void **state)
{
	klog_zk_t *zk = (klog_zk_t *)1;
	klog_err_t err;
	char conn[32];

	(void)state;
	assert_int_equal(klog_zk_open("127.0.0.1", 1000, 100, &zk, &err),
	    -KLOG_EINVAL);
	assert_null(zk);
	assert_int_equal(klog_zk_open("h:1/", 1000, 100, &zk, &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_zk_open("h:1,", 1000, 100, &zk, &err),
	    -KLOG_EINVAL);
	snprintf(conn, sizeof(conn), "127.0.0.1:%d", zkserver_free_port());
	assert_int_equal(klog_zk_open(conn, 1000, 300, &zk, &err),
	    -KLOG_ETIMEDOUT);
	assert_null(zk);
	assert_non_null(strstr(err.msg, conn));
}

static void
test_nodes(void **state)
{
	klog_zk_t *zk;
	klog_zk_list_t l;
	klog_zk_stat_t st;
	klog_err_t err;
	char big[3000], *data;
	size_t len;

	(void)state;
	NEED_SERVER();
	zk = open_ok(server.connect, 4000);
	assert_int_equal(klog_zk_mkdirs(zk, "/n/a/b", &err), 0);
	assert_int_equal(klog_zk_mkdirs(zk, "/n/a/b", &err), 0);
	assert_int_equal(klog_zk_create(zk, "/n/a/b", "x", 1, 0, &err),
	    -KLOG_EEXIST);
	assert_non_null(strstr(err.msg, "/n/a/b"));

	/* Parents are made; data larger than the first read is not cut. */
	memset(big, 'z', sizeof(big));
	assert_int_equal(klog_zk_create(zk, "/n/deep/er/big", big,
	    sizeof(big), 0, &err), 0);
	assert_int_equal(klog_zk_get(zk, "/n/deep/er/big", 0, &data, &len, &st,
	    &err), 0);
	assert_int_equal(len, sizeof(big));
	assert_int_equal(st.data_length, (int)sizeof(big));
	assert_int_equal(st.ephemeral_owner, 0);
	assert_memory_equal(data, big, sizeof(big));
	assert_int_equal(data[len], '\0');
	free(data);

	assert_int_equal(klog_zk_get(zk, "/n/a", 0, &data, &len, NULL, &err),
	    0);
	assert_int_equal(len, 0);
	assert_string_equal(data, "");
	free(data);
	assert_int_equal(klog_zk_get(zk, "/n/none", 0, &data, &len, NULL,
	    &err), -KLOG_ENOENT);
	assert_null(data);

	/* Children come back sorted as strings. */
	assert_int_equal(klog_zk_create(zk, "/n/k/b", NULL, 0, 0, &err), 0);
	assert_int_equal(klog_zk_create(zk, "/n/k/2-0", NULL, 0, 0, &err), 0);
	assert_int_equal(klog_zk_create(zk, "/n/k/10-0", NULL, 0, 0, &err), 0);
	assert_int_equal(klog_zk_children(zk, "/n/k", 0, &l, &err), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.names[0], "10-0");
	assert_string_equal(l.names[1], "2-0");
	assert_string_equal(l.names[2], "b");
	klog_zk_list_free(&l);
	assert_int_equal(klog_zk_children(zk, "/n/none", 0, &l, &err),
	    -KLOG_ENOENT);

	/* Versions, put, delete. */
	assert_int_equal(klog_zk_exists(zk, "/n/a", 0, &st, &err), 0);
	assert_int_equal(klog_zk_set(zk, "/n/a", "v", 1, st.version + 1,
	    &err), -KLOG_EBUSY);
	assert_int_equal(klog_zk_set(zk, "/n/a", "v", 1, st.version, &err), 0);
	assert_int_equal(klog_zk_set(zk, "/n/none", "v", 1, -1, &err),
	    -KLOG_ENOENT);
	assert_int_equal(klog_zk_put(zk, "/n/p/q", "1", 1, &err), 0);
	assert_int_equal(klog_zk_put(zk, "/n/p/q", "22", 2, &err), 0);
	assert_int_equal(klog_zk_get(zk, "/n/p/q", 0, &data, &len, NULL, &err),
	    0);
	assert_string_equal(data, "22");
	free(data);
	assert_int_equal(klog_zk_delete(zk, "/n/k", -1, &err), -KLOG_EBUSY);
	assert_int_equal(klog_zk_delete_tree(zk, "/n", &err), 0);
	assert_int_equal(klog_zk_exists(zk, "/n", 0, NULL, &err),
	    -KLOG_ENOENT);
	assert_int_equal(klog_zk_delete_tree(zk, "/n", &err), 0);
	klog_zk_close(zk);
}

static void
test_chroot(void **state)
{
	klog_zk_t *zk, *root;
	klog_err_t err;
	char conn[96];

	(void)state;
	NEED_SERVER();
	snprintf(conn, sizeof(conn), "%s/cr/oot", server.connect);
	zk = open_ok(conn, 4000);
	assert_int_equal(klog_zk_create(zk, "/x", "1", 1, 0, &err), 0);
	root = open_ok(server.connect, 4000);
	assert_int_equal(klog_zk_exists(root, "/cr/oot/x", 0, NULL, &err), 0);
	assert_int_equal(klog_zk_delete_tree(root, "/cr", &err), 0);
	klog_zk_close(root);
	klog_zk_close(zk);
}

static void
test_watch_events(void **state)
{
	struct pollfd p;
	klog_zk_t *zk, *other;
	klog_zk_list_t l;
	klog_zk_event_t ev;
	klog_err_t err;
	char *data;
	size_t len;

	(void)state;
	NEED_SERVER();
	zk = open_ok(server.connect, 4000);
	other = open_ok(server.connect, 4000);
	assert_int_equal(klog_zk_mkdirs(zk, "/w/ids", &err), 0);
	assert_int_equal(klog_zk_children(zk, "/w/ids", 1, &l, &err), 0);
	assert_int_equal(l.n, 0);
	klog_zk_list_free(&l);
	/* A watch on a node that does not exist yet, through exists. */
	assert_int_equal(klog_zk_exists(zk, "/w/flag", 1, NULL, &err),
	    -KLOG_ENOENT);

	assert_int_equal(klog_zk_create(other, "/w/ids/m1", "{}", 2,
	    KLOG_ZK_EPHEMERAL, &err), 0);
	assert_true(wait_event(zk, KLOG_ZK_EVENT_CHILD, 5000, &ev, NULL));
	assert_string_equal(ev.path, "/w/ids");
	/* One-shot: a second child gives nothing until re-armed. */
	assert_int_equal(klog_zk_create(other, "/w/ids/m2", "{}", 2,
	    KLOG_ZK_EPHEMERAL, &err), 0);
	assert_int_equal(klog_zk_create(other, "/w/flag", "1", 1, 0, &err), 0);
	assert_true(wait_event(zk, KLOG_ZK_EVENT_DATA, 5000, &ev, NULL));
	assert_string_equal(ev.path, "/w/flag");
	assert_int_equal(klog_zk_next_event(zk, &ev), 0);
	/* Drained: the eventfd is no longer readable. */
	p.fd = klog_zk_event_fd(zk);
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 0), 0);

	/* Re-arm, and the member's session ending fires it. */
	assert_int_equal(klog_zk_children(zk, "/w/ids", 1, &l, &err), 0);
	assert_int_equal(l.n, 2);
	klog_zk_list_free(&l);
	assert_int_equal(klog_zk_get(zk, "/w/flag", 1, &data, &len, NULL,
	    &err), 0);
	free(data);
	klog_zk_close(other);
	assert_true(wait_event(zk, KLOG_ZK_EVENT_CHILD, 5000, &ev, NULL));
	assert_string_equal(ev.path, "/w/ids");
	assert_int_equal(klog_zk_children(zk, "/w/ids", 0, &l, &err), 0);
	assert_int_equal(l.n, 0);
	klog_zk_list_free(&l);
	assert_int_equal(klog_zk_delete(zk, "/w/flag", -1, &err), 0);
	assert_true(wait_event(zk, KLOG_ZK_EVENT_DATA, 5000, &ev, NULL));
	assert_int_equal(klog_zk_delete_tree(zk, "/w", &err), 0);
	klog_zk_close(zk);
}

static void
test_zombie_ephemeral(void **state)
{
	klog_zk_t *a, *b;
	klog_zk_stat_t st;
	klog_err_t err;
	int fds[2];
	pid_t pid;
	char c;

	(void)state;
	NEED_SERVER();
	a = open_ok(server.connect, 4000);
	b = open_ok(server.connect, 4000);
	assert_int_equal(klog_zk_create_ephemeral(a, "/z/node", "a", 1, 0,
	    &err), 0);
	/* Our own node again (a retry after a lost connection): fine. */
	assert_int_equal(klog_zk_create_ephemeral(a, "/z/node", "a2", 2, 0,
	    &err), 0);
	/* Another live session's: refused after the bounded wait. */
	assert_int_equal(klog_zk_create_ephemeral(b, "/z/node", "b", 1, 200,
	    &err), -KLOG_EEXIST);
	assert_non_null(strstr(err.msg, "another session"));
	assert_non_null(strstr(err.msg, "a2"));
	klog_zk_close(a);

	/*
	 * A process that dies without closing its session leaves its node
	 * for about a session timeout: the zombie a fast restart meets.
	 */
	assert_int_equal(pipe(fds), 0);
	if ((pid = fork()) == 0) {
		klog_zk_t *z;

		if (klog_zk_open(server.connect, 1000, 10000, &z, NULL) < 0 ||
		    klog_zk_create_ephemeral(z, "/z/node", "dead", 4, 0,
		    NULL) < 0)
			_exit(1);
		if (write(fds[1], "k", 1) != 1)
			_exit(1);
		_exit(0);  /* no close: the session stays until it expires */
	}
	assert_true(pid > 0);
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	waitpid(pid, NULL, 0);
	assert_int_equal(klog_zk_exists(b, "/z/node", 0, &st, &err), 0);
	assert_true(st.ephemeral_owner != 0);
	assert_true(st.ephemeral_owner != klog_zk_session_id(b));
	assert_int_equal(klog_zk_create_ephemeral(b, "/z/node", "b", 1, 10000,
	    &err), 0);
	assert_int_equal(klog_zk_exists(b, "/z/node", 0, &st, &err), 0);
	assert_true(st.ephemeral_owner == klog_zk_session_id(b));
	assert_int_equal(klog_zk_delete_tree(b, "/z", &err), 0);
	klog_zk_close(b);
}

static void
test_cluster_operations(void **state)
{
	klog_zk_t *a, *b;
	klog_layout_broker_t *brs;
	klog_layout_topic_t t;
	klog_layout_sub_t subs[2] = { { "app", 2 }, { "logs", 1 } }, got[4];
	klog_zk_list_t l;
	klog_zk_event_t ev;
	klog_err_t err;
	char *data;
	size_t n, len;
	int64_t off;

	(void)state;
	NEED_SERVER();
	a = open_ok(server.connect, 4000);
	b = open_ok(server.connect, 4000);

	/* Brokers: registration, a duplicate id, the list. */
	assert_int_equal(klog_layout_register_broker(a, 2, "10.0.0.5", 9092,
	    0, &err), 0);
	assert_int_equal(klog_layout_register_broker(b, 2, "10.0.0.6", 9093,
	    200, &err), -KLOG_EEXIST);
	assert_non_null(strstr(err.msg, "broker id 2 is already registered"));
	assert_non_null(strstr(err.msg, ":10.0.0.5:9092"));
	assert_int_equal(klog_layout_register_broker(b, 10, "10.0.0.6", 9093,
	    0, &err), 0);
	assert_int_equal(klog_layout_brokers(b, 0, &brs, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(brs[0].id, 2);
	assert_string_equal(brs[0].host, "10.0.0.5");
	assert_int_equal(brs[0].port, 9092);
	assert_int_equal(brs[1].id, 10);
	free(brs);

	/* Topics: per-broker counts and the partitions sorted as strings. */
	assert_int_equal(klog_layout_register_topic(a, 2, "app", 2, &err), 0);
	assert_int_equal(klog_layout_register_topic(b, 10, "app", 1, &err),
	    0);
	assert_int_equal(klog_layout_register_topic(b, 10, "app", 3, &err),
	    0);  /* grown: the same session updates its node */
	assert_int_equal(klog_zk_get(b, "/brokers/topics/app/10", 0, &data,
	    &len, NULL, &err), 0);
	assert_string_equal(data, "3");
	free(data);
	assert_int_equal(klog_layout_topic(b, "app", 0, &t, &err), 0);
	assert_int_equal(t.nholders, 2);
	assert_int_equal(t.holders[0].broker_id, 2);
	assert_int_equal(t.holders[0].partitions, 2);
	assert_int_equal(klog_layout_topic_parts(&t, &l), 0);
	assert_int_equal(l.n, 5);
	assert_string_equal(l.names[0], "10-0");
	assert_string_equal(l.names[3], "2-0");
	klog_zk_list_free(&l);
	klog_layout_topic_free(&t);
	assert_int_equal(klog_layout_topic(b, "nosuch", 0, &t, &err),
	    -KLOG_ENOTOPIC);

	/* Members: 0.7's JSON on the node, a watch on the group's ids. */
	assert_int_equal(klog_layout_members(a, "g", 1, &l, &err), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(klog_layout_member_register(b, "g", "g_h-1-0000abcd",
	    subs, 2, &err), 0);
	assert_true(wait_event(a, KLOG_ZK_EVENT_CHILD, 5000, &ev, NULL));
	assert_string_equal(ev.path, "/consumers/g/ids");
	assert_int_equal(klog_zk_get(a, "/consumers/g/ids/g_h-1-0000abcd", 0,
	    &data, &len, NULL, &err), 0);
	assert_string_equal(data, "{ \"app\": 2,\"logs\": 1 }");
	free(data);
	assert_int_equal(klog_layout_member_subs(a, "g", "g_h-1-0000abcd",
	    got, 4, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(got[1].topic, "logs");

	/* Owners: one thread per partition. */
	assert_int_equal(klog_layout_owner_claim(b, "g", "app", 10, 0,
	    "g_h-1-0000abcd-0", &err), 0);
	assert_int_equal(klog_layout_owner_claim(a, "g", "app", 10, 0,
	    "g_h-2-0000abcd-0", &err), -KLOG_EEXIST);
	assert_int_equal(klog_layout_owner_read(a, "g", "app", 10, 0, &data,
	    &err), 0);
	assert_string_equal(data, "g_h-1-0000abcd-0");
	free(data);
	assert_int_equal(klog_layout_owner_release(b, "g", "app", 10, 0,
	    &err), 0);
	assert_int_equal(klog_layout_owner_release(b, "g", "app", 10, 0,
	    &err), 0);
	assert_int_equal(klog_layout_owner_claim(b, "g", "logs", 2, 0,
	    "g_h-1-0000abcd-0", &err), 0);

	/* Offsets, the group's topics, the groups, delete. */
	assert_int_equal(klog_layout_offset_read(a, "g", "app", 2, 1, &off,
	    &err), -KLOG_ENOENT);
	assert_int_equal(klog_layout_offset_commit(a, "g", "app", 2, 1, 123456,
	    &err), 0);
	assert_int_equal(klog_layout_offset_commit(a, "g", "app", 2, 1, 123457,
	    &err), 0);
	assert_int_equal(klog_layout_offset_read(a, "g", "app", 2, 1, &off,
	    &err), 0);
	assert_int_equal(off, 123457);
	assert_int_equal(klog_layout_group_topics(a, "g", &l, &err), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.names[0], "app");
	assert_string_equal(l.names[1], "logs");
	klog_zk_list_free(&l);
	assert_int_equal(klog_layout_groups(a, &l, &err), 0);
	assert_int_equal(l.n, 1);
	klog_zk_list_free(&l);
	assert_int_equal(klog_layout_group_delete(a, "g", &err), -KLOG_EBUSY);
	klog_zk_close(b);
	assert_int_equal(klog_layout_group_delete(a, "g", &err), 0);
	assert_int_equal(klog_layout_group_delete(a, "g", &err),
	    -KLOG_ENOENT);
	assert_int_equal(klog_zk_delete_tree(a, "/brokers", &err), 0);
	klog_zk_close(a);
}

static int64_t
mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Asynchronous calls answer through the event queue, tag and all. */
static void
test_async_calls(void **state)
{
	klog_zk_t *zk;
	klog_zk_event_t ev;
	klog_err_t err;

	(void)state;
	NEED_SERVER();
	zk = open_ok(server.connect, 4000);
	assert_int_equal(klog_zk_create(zk, "/as/n", "v0", 2, 0, &err), 0);
	assert_int_equal(klog_zk_aset(zk, "/as/n", "v1", 2, 0, 7, &err), 0);
	assert_true(wait_event(zk, KLOG_ZK_EVENT_REPLY, 5000, &ev, NULL));
	assert_int_equal(ev.tag, 7);
	assert_int_equal(ev.rc, 0);
	assert_int_equal(ev.version, 1);
	assert_string_equal(ev.path, "/as/n");
	assert_null(ev.data);
	/* A version that moved, as the synchronous call says it. */
	assert_int_equal(klog_zk_aset(zk, "/as/n", "v2", 2, 0, 8, &err), 0);
	assert_true(wait_event(zk, KLOG_ZK_EVENT_REPLY, 5000, &ev, NULL));
	assert_int_equal(ev.tag, 8);
	assert_int_equal(ev.rc, -KLOG_EBUSY);
	assert_int_equal(klog_zk_aget(zk, "/as/n", 9, &err), 0);
	assert_true(wait_event(zk, KLOG_ZK_EVENT_REPLY, 5000, &ev, NULL));
	assert_int_equal(ev.tag, 9);
	assert_int_equal(ev.rc, 0);
	assert_int_equal(ev.version, 1);
	assert_int_equal(ev.len, 2);
	assert_string_equal(ev.data, "v1");
	free(ev.data);
	assert_int_equal(klog_zk_aget(zk, "/as/none", 10, &err), 0);
	assert_true(wait_event(zk, KLOG_ZK_EVENT_REPLY, 5000, &ev, NULL));
	assert_int_equal(ev.rc, -KLOG_ENOENT);
	assert_null(ev.data);
	/* Answered pings: the server heard from us moments ago. */
	klog_zk_ping(zk);
	usleep(200 * 1000);
	assert_true(klog_zk_quiet_ms(zk) < 1000);
	assert_int_equal(klog_zk_delete_tree(zk, "/as", &err), 0);
	klog_zk_close(zk);
}

/*
 * A stalled server (paused: it holds the connection open and answers
 * nothing, as one cut off by a silent partition does): once pings go
 * unanswered for half the session timeout, calls refuse at once instead of
 * waiting for the library to notice the dead connection (two thirds of the
 * timeout), and they keep refusing while it reconnects.
 */
static void
test_stalled_server_never_holds_a_call(void **state)
{
	klog_zk_t *zk;
	klog_zk_stat_t st;
	klog_err_t err;
	int64_t t0, spent, worst = 0;
	int rc;

	(void)state;
	NEED_SERVER();
	zk = open_ok(server.connect, 3000);
	assert_int_equal(klog_zk_session_ms(zk), 3000);
	klog_zk_ping(zk);
	assert_int_equal(kill(server.pid, SIGSTOP), 0);
	t0 = mono_ms();
	while (mono_ms() - t0 < 1600)
		usleep(50 * 1000);   /* past half the timeout, not 2/3 */
	assert_true(klog_zk_quiet_ms(zk) >= 1500);
	/* Until well after the library gave the connection up. */
	for (int i = 0; i < 20; i++) {
		int64_t c0 = mono_ms();

		klog_zk_ping(zk);
		rc = klog_zk_exists(zk, "/", 0, &st, &err);
		spent = mono_ms() - c0;
		if (spent > worst)
			worst = spent;
		assert_int_equal(rc, -KLOG_ECONN);
		rc = klog_zk_aset(zk, "/x", "1", 1, -1, 1, &err);
		assert_int_equal(rc, -KLOG_ECONN);
		usleep(100 * 1000);
	}
	assert_int_equal(kill(server.pid, SIGCONT), 0);
	assert_true(worst < 100);
	/* Answering again: calls go through (the session may have been
	 * renewed meanwhile). */
	t0 = mono_ms();
	do {
		klog_zk_event_t ev;

		while (klog_zk_next_event(zk, &ev) > 0)
			free(ev.data);
		klog_zk_ping(zk);
		usleep(100 * 1000);
		rc = klog_zk_exists(zk, "/", 0, &st, &err);
	} while (rc != 0 && mono_ms() - t0 < 15000);
	assert_int_equal(rc, 0);
	klog_zk_close(zk);
}

/*
 * Kafka's zookeeper.set.acl: what a session with the digest identity makes,
 * a session without it (or with another password) may read but not change,
 * except under /consumers; /config/users is not even readable.  Under a
 * chroot of its own, so that /consumers is this test's.
 */
static void
test_acls(void **state)
{
	klog_zk_t *klog, *klog2, *anon, *wrong, *root;
	klog_zk_list_t l;
	klog_zk_op_t op;
	klog_err_t err;
	char conn[96], *data;
	size_t len;

	(void)state;
	NEED_SERVER();
	snprintf(conn, sizeof(conn), "%s/acl", server.connect);
	klog = open_auth_ok(conn, "klog:s3cret", 4000);
	anon = open_ok(conn, 4000);
	wrong = open_auth_ok(conn, "klog:wrong", 4000);

	assert_int_equal(klog_zk_mkdirs(klog, "/klog/topics/t/partitions/0",
	    &err), 0);
	assert_int_equal(klog_zk_create(klog, "/klog/topics/t/partitions/0/"
	    "state", "{\"leader\":1}", 12, 0, &err), 0);
	op = (klog_zk_op_t){ .type = KLOG_ZK_OP_CREATE, .path = "/klog/m",
	    .data = "m", .len = 1 };
	assert_int_equal(klog_zk_multi(klog, &op, 1, &err), 0);

	/* Others read... */
	assert_int_equal(klog_zk_get(anon, "/klog/topics/t/partitions/0/state",
	    0, &data, &len, NULL, &err), 0);
	assert_string_equal(data, "{\"leader\":1}");
	free(data);
	/* ...but change nothing, whether by set, delete, create or multi. */
	assert_int_equal(klog_zk_set(anon, "/klog/topics/t/partitions/0/state",
	    "{\"leader\":2}", 12, -1, &err), -KLOG_EDENIED);
	assert_non_null(strstr(err.msg, "/klog/topics/t/partitions/0/state: "
	    "not authorized"));
	assert_int_equal(klog_zk_set(wrong, "/klog/topics/t/partitions/0/state",
	    "{\"leader\":2}", 12, -1, &err), -KLOG_EDENIED);
	assert_int_equal(klog_zk_delete(anon, "/klog/topics/t/partitions/0/"
	    "state", -1, &err), -KLOG_EDENIED);
	assert_int_equal(klog_zk_delete(anon, "/klog/m", -1, &err),
	    -KLOG_EDENIED);
	assert_int_equal(klog_zk_delete_tree(anon, "/klog/topics/t", &err),
	    -KLOG_EDENIED);
	assert_int_equal(klog_zk_create(anon, "/klog/topics/u", NULL, 0, 0,
	    &err), -KLOG_EDENIED);
	op = (klog_zk_op_t){ .type = KLOG_ZK_OP_SET, .path = "/klog/m",
	    .data = "x", .len = 1, .version = -1 };
	assert_int_equal(klog_zk_multi(anon, &op, 1, &err), -KLOG_EDENIED);
	/* Which nodes anyone may change. */
	assert_int_equal(klog_zk_world_writable(anon, "/klog/topics/t/"
	    "partitions/0/state", &err), 0);
	assert_int_equal(klog_zk_world_writable(anon, "/klog", &err), 0);
	/* A node that is there is all mkdirs wants, ACL or not. */
	assert_int_equal(klog_zk_mkdirs(anon, "/klog/topics/t", &err), 0);
	assert_int_equal(klog_zk_mkdirs(anon, "/klog/topics/v", &err),
	    -KLOG_EDENIED);

	/* The identity, not the session: another one with it may. */
	klog2 = open_auth_ok(conn, "klog:s3cret", 4000);
	assert_int_equal(klog_zk_set(klog2, "/klog/topics/t/partitions/0/state",
	    "{\"leader\":3}", 12, -1, &err), 0);
	assert_int_equal(klog_zk_delete(klog2, "/klog/m", -1, &err), 0);

	/* The consumer groups' nodes are open to all, made by whoever. */
	assert_int_equal(klog_zk_mkdirs(klog, "/consumers/g/ids", &err), 0);
	assert_int_equal(klog_zk_create(anon, "/consumers/g/ids/c1", "1", 1,
	    KLOG_ZK_EPHEMERAL, &err), 0);
	assert_int_equal(klog_zk_create(klog, "/consumers/g/offsets/t/0-0",
	    "5", 1, 0, &err), 0);
	assert_int_equal(klog_zk_set(anon, "/consumers/g/offsets/t/0-0", "6",
	    1, -1, &err), 0);
	assert_int_equal(klog_zk_world_writable(klog, "/consumers/g/offsets/"
	    "t/0-0", &err), 1);
	assert_int_equal(klog_zk_delete_tree(anon, "/consumers/g", &err), 0);

	/* SCRAM credentials: the identity's alone, reading too. */
	assert_int_equal(klog_zk_create(klog, "/config/users/alice", "cred", 4,
	    0, &err), 0);
	assert_int_equal(klog_zk_get(anon, "/config/users/alice", 0, &data,
	    &len, NULL, &err), -KLOG_EDENIED);
	assert_int_equal(klog_zk_world_writable(anon, "/config/users/alice",
	    &err), -KLOG_EDENIED);
	assert_int_equal(klog_zk_world_writable(klog, "/config/users/alice",
	    &err), 0);
	assert_int_equal(klog_zk_get(klog2, "/config/users/alice", 0, &data,
	    &len, NULL, &err), 0);
	free(data);
	/* /config itself is no secret. */
	assert_int_equal(klog_zk_children(anon, "/config", 0, &l, &err), 0);
	assert_int_equal(l.n, 1);
	klog_zk_list_free(&l);

	/* The chroot was made by the identity too. */
	root = open_ok(server.connect, 4000);
	assert_int_equal(klog_zk_set(root, "/acl", "x", 1, -1, &err),
	    -KLOG_EDENIED);
	klog_zk_close(root);

	/* The chroot's "/" is /acl itself: all of it goes. */
	assert_int_equal(klog_zk_delete_tree(klog, "/", &err), 0);
	klog_zk_close(wrong);
	klog_zk_close(klog2);
	klog_zk_close(anon);
	klog_zk_close(klog);
}

/*
 * A server that refuses the digest (its provider turned off): the open
 * says so, never quoting the password, and fails with -KLOG_EAUTH.
 */
static void
test_digest_refused(void **state)
{
	zkserver_t off;
	klog_zk_t *zk = (klog_zk_t *)1;
	klog_err_t err;

	(void)state;
	NEED_SERVER();
	assert_int_equal(zkserver_start_with(&off,
	    "-Dzookeeper.DigestAuthenticationProvider.enabled=false"), 1);
	assert_int_equal(klog_zk_open_auth(off.connect, "klog:s3cret", 4000,
	    10000, &zk, &err), -KLOG_EAUTH);
	assert_null(zk);
	assert_non_null(strstr(err.msg, "digest authentication failed"));
	assert_null(strstr(err.msg, "s3cret"));
	zkserver_stop(&off);
}

/* Last: it pauses the server past the session timeout. */
static void
test_expiry_renews_session(void **state)
{
	klog_zk_t *zk;
	klog_zk_list_t l;
	klog_zk_event_t ev;
	klog_err_t err;
	int64_t old;
	unsigned seen = 0;

	(void)state;
	NEED_SERVER();
	/* With the identity: /e gets its ACL, so the new session's create
	 * under it below works only if the identity was given again. */
	zk = open_auth_ok(server.connect, "klog:s3cret", 1000);
	assert_int_equal(klog_zk_session_ms(zk), 1000);
	old = klog_zk_session_id(zk);
	assert_int_equal(klog_zk_create_ephemeral(zk, "/e/me", "1", 1, 0,
	    &err), 0);
	assert_int_equal(klog_zk_children(zk, "/e", 1, &l, &err), 0);
	klog_zk_list_free(&l);

	/*
	 * A server paused past the session timeout usually expires the
	 * session when it resumes, but the client's reconnect can win the
	 * race and keep it alive (seen on a loaded machine): pause again
	 * until the expiry comes, a few times at most.
	 */
	for (int tries = 0; tries < 4 && !(seen & (1u << KLOG_ZK_EVENT_SESSION));
	    tries++) {
		assert_int_equal(kill(server.pid, SIGSTOP), 0);
		usleep(2500 * 1000);
		assert_int_equal(kill(server.pid, SIGCONT), 0);
		wait_event(zk, KLOG_ZK_EVENT_SESSION, 8000, &ev, &seen);
	}
	assert_true(seen & (1u << KLOG_ZK_EVENT_SESSION));
	assert_true(seen & (1u << KLOG_ZK_EVENT_EXPIRED));
	assert_true(klog_zk_session_id(zk) != old);
	/* The old ephemeral went with the old session; the owner re-creates
	 * it on the new one. */
	assert_int_equal(klog_zk_create_ephemeral(zk, "/e/me", "1", 1, 5000,
	    &err), 0);
	assert_int_equal(klog_zk_delete_tree(zk, "/e", &err), 0);
	klog_zk_close(zk);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_chroot),
		cmocka_unit_test(test_watch_events),
		cmocka_unit_test(test_zombie_ephemeral),
		cmocka_unit_test(test_cluster_operations),
		cmocka_unit_test(test_async_calls),
		cmocka_unit_test(test_acls),
		cmocka_unit_test(test_digest_refused),
		cmocka_unit_test(test_stalled_server_never_holds_a_call),
		cmocka_unit_test(test_expiry_renews_session),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
