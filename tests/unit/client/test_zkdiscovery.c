/*
 * Tests for lib/client/zkdiscovery.c's replicated topics against a real throwaway
 * ZooKeeper (zkserver.h), the /klog nodes written by hand: where a
 * partition's leader is, following a leader node that goes and comes,
 * topic listings, and the session's events drained through the discovery
 * across an expiry.  Without zkServer.sh they are skipped.  (0.7 topics are
 * covered through the member and bats tests.)
 */
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/client/zkdiscovery.h"
#include "klog/zk/layout.h"
#include "klog/zk/rtopics.h"
#include "klog/zk/zk.h"
#include "fx/zkserver.h"



static klog_zk_t *
zk_open(const char *root)
{
	char connect[256];
	klog_zk_t *zk = NULL;
	klog_err_t err = { 0, "" };

	snprintf(connect, sizeof(connect), "%s%s", server.connect, root);
	if (klog_zk_open(connect, 4000, 10000, &zk, &err) < 0)
		fail_msg("zookeeper %s: %s", connect, err.msg);
	return zk;
}

static void
put(klog_zk_t *zk, const char *path, const char *data)
{
	klog_err_t err = { 0, "" };

	if (klog_zk_put(zk, path, data, strlen(data), &err) < 0)
		fail_msg("put %s: %s", path, err.msg);
}

static void
leader(klog_zk_t *zk, int p, const char *id)
{
	klog_err_t err = { 0, "" };
	char path[128];

	snprintf(path, sizeof(path), "/klog/topics/r/partitions/%d/leader", p);
	if (id == NULL)
		assert_int_equal(klog_zk_delete(zk, path, -1, &err), 0);
	else if (klog_zk_create_ephemeral(zk, path, id, strlen(id), 0,
	    &err) < 0)
		fail_msg("create %s: %s", path, err.msg);
}

/*
 * Replicated topic "r", 2 partitions over brokers 1 and 2 (written as
 * klog-group create-topic would, leader nodes by hand), and 0.7 topics "a"
 * and "z" on broker 1.
 */
static void
layout(klog_zk_t *zk)
{
	klog_err_t err = { 0, "" };

	assert_int_equal(klog_layout_register_broker(zk, 1, "127.0.0.1",
	    9101, 0, &err), 0);
	assert_int_equal(klog_layout_register_broker(zk, 2, "127.0.0.1",
	    9102, 0, &err), 0);
	assert_int_equal(klog_layout_register_topic(zk, 1, "a", 3, &err), 0);
	assert_int_equal(klog_layout_register_topic(zk, 1, "z", 1, &err), 0);
	put(zk, "/klog/topics/r", "{\"version\":1,\"partitions\":"
	    "{\"0\":[1,2],\"1\":[2,1]},\"min_insync\":1}");
	put(zk, "/klog/topics/r/partitions/0/state", "{\"version\":1,"
	    "\"isr\":[1,2],\"leader\":1,\"controller_epoch\":-1,"
	    "\"leader_epoch\":0}");
	put(zk, "/klog/topics/r/partitions/1/state", "{\"version\":1,"
	    "\"isr\":[2,1],\"leader\":2,\"controller_epoch\":-1,"
	    "\"leader_epoch\":0}");
}

/* Hand the session's events to d until one changes an answer (1), or
 * ms pass (0); *seen as klog_zkdiscovery_drain() fills it. */
static int
drain_for(klog_zk_t *zk, klog_discovery_t *d, int ms, unsigned *seen)
{
	struct pollfd pfd = { .fd = klog_zk_event_fd(zk), .events = POLLIN };
	int hit = 0;

	for (int i = 0; i < ms / 100 && !hit; i++) {
		poll(&pfd, 1, 100);
		hit = klog_zkdiscovery_drain(d, seen);
	}
	return hit;
}

static int
changed(klog_zk_t *zk, klog_discovery_t *d)
{
	unsigned seen = 0;

	return drain_for(zk, d, 5000, &seen);
}

static void
expect_at(klog_discovery_t *d, int p, int32_t id)
{
	klog_discovery_part_t w;
	klog_err_t err = { 0, "" };
	char port[8];

	if (klog_discovery_locate(d, "r", p, &w, &err) < 0)
		fail_msg("locate r %d: %s", p, err.msg);
	snprintf(port, sizeof(port), "%d", 9100 + (int)id);
	assert_string_equal(w.addr.host, "127.0.0.1");
	assert_string_equal(w.addr.port, port);
	assert_int_equal(w.partition, p);
	assert_int_equal(w.broker_id, id);
	assert_int_equal(w.replicated, 1);
}

static void
test_locates_leaders(void **state)
{
	klog_zk_t *zk;
	klog_discovery_t *d = NULL;
	klog_discovery_part_t w;
	klog_err_t err = { 0, "" };

	(void)state;
	NEED_SERVER();
	zk = zk_open("/locate");
	layout(zk);
	leader(zk, 0, "1");
	assert_int_equal(klog_zkdiscovery_open(zk, &d, &err), 0);
	assert_int_equal(klog_discovery_partitions(d, "r", &err), 2);
	expect_at(d, 0, 1);
	/* No leader node yet: an election, waited out by the caller. */
	assert_int_equal(klog_discovery_locate(d, "r", 1, &w, &err),
	    -KLOG_ENOTLEADER);
	assert_non_null(strstr(err.msg, "partition 1: no leader"));
	assert_int_equal(klog_discovery_locate(d, "r", 2, &w, &err),
	    -KLOG_ENOPARTITION);
	/* The 0.7 topic is as it was: broker 1's own numbering. */
	assert_int_equal(klog_discovery_partitions(d, "a", &err), 3);
	assert_int_equal(klog_discovery_locate(d, "a", 2, &w, &err), 0);
	assert_int_equal(w.partition, 2);
	assert_int_equal(w.replicated, 0);

	/* Partition 1's leader is elected: the watch says so. */
	leader(zk, 1, "2");
	assert_true(changed(zk, d));
	expect_at(d, 1, 2);
	/* Partition 0's leader goes (session expired) and 2 takes over. */
	leader(zk, 0, NULL);
	assert_true(changed(zk, d));
	assert_int_equal(klog_discovery_locate(d, "r", 0, &w, &err),
	    -KLOG_ENOTLEADER);
	leader(zk, 0, "2");
	assert_true(changed(zk, d));
	expect_at(d, 0, 2);
	/* A leader that is not a live broker is no leader either. */
	leader(zk, 1, NULL);
	assert_true(changed(zk, d));
	/* Watches are armed again by the next question. */
	assert_int_equal(klog_discovery_locate(d, "r", 1, &w, &err),
	    -KLOG_ENOTLEADER);
	leader(zk, 1, "7");
	assert_true(changed(zk, d));
	assert_int_equal(klog_discovery_locate(d, "r", 1, &w, &err),
	    -KLOG_ENOTLEADER);
	assert_non_null(strstr(err.msg, "leader 7 is not a live broker"));
	klog_discovery_close(d);
	klog_zk_close(zk);
}

struct seen {
	char names[8][16];
	int counts[8];
	int n;
};

static int
seen_topic(void *arg, const char *topic, int partitions)
{
	struct seen *s = arg;

	if (s->n < 8) {
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", topic);
		s->counts[s->n++] = partitions;
	}
	return 0;
}

static void
test_lists_replicated_topics(void **state)
{
	klog_zk_t *zk;
	klog_discovery_t *d = NULL;
	klog_err_t err = { 0, "" };
	struct seen s = { 0 };

	(void)state;
	NEED_SERVER();
	zk = zk_open("/list");
	layout(zk);
	assert_int_equal(klog_zkdiscovery_open(zk, &d, &err), 0);
	assert_int_equal(klog_discovery_topics(d, seen_topic, &s, &err), 0);
	/* In name order, the replicated one between the 0.7 ones, with its
	 * partitions although neither has a leader. */
	assert_int_equal(s.n, 3);
	assert_string_equal(s.names[0], "a");
	assert_int_equal(s.counts[0], 3);
	assert_string_equal(s.names[1], "r");
	assert_int_equal(s.counts[1], 2);
	assert_string_equal(s.names[2], "z");
	assert_int_equal(s.counts[2], 1);
	klog_discovery_close(d);
	klog_zk_close(zk);
}

/*
 * Last: it pauses the server past the reader's session timeout.  The
 * session's events drained through the discovery replace the expired
 * session, and the answers read on the new one arm their watches there:
 * what a consumer outside a group relies on (issue 27).
 */
static void
test_drain_renews_expired_session(void **state)
{
	char connect[256];
	klog_zk_t *zk, *rd = NULL;
	klog_discovery_t *d = NULL;
	klog_err_t err = { 0, "" };
	unsigned seen = 0;
	int hit = 0;

	(void)state;
	NEED_SERVER();
	/* The writer's session (and its broker nodes) outlives the pause. */
	snprintf(connect, sizeof(connect), "%s/renew", server.connect);
	if (klog_zk_open(connect, 10000, 10000, &zk, &err) < 0)
		fail_msg("zookeeper %s: %s", connect, err.msg);
	layout(zk);
	leader(zk, 0, "1");
	if (klog_zk_open(connect, 1000, 10000, &rd, &err) < 0)
		fail_msg("zookeeper %s: %s", connect, err.msg);
	assert_int_equal(klog_zkdiscovery_open(rd, &d, &err), 0);
	expect_at(d, 0, 1);
	/* The reader's reconnect can win the race with the expiry on a
	 * loaded machine (test_zk.c): pause again until it expires. */
	for (int tries = 0; tries < 4 &&
	    !(seen & (1u << KLOG_ZK_EVENT_SESSION)); tries++) {
		assert_int_equal(kill(server.pid, SIGSTOP), 0);
		usleep(2500 * 1000);
		assert_int_equal(kill(server.pid, SIGCONT), 0);
		for (int i = 0; i < 8 && !(seen &
		    (1u << KLOG_ZK_EVENT_SESSION)); i++)
			hit |= drain_for(rd, d, 1000, &seen);
	}
	assert_true(seen & (1u << KLOG_ZK_EVENT_EXPIRED));
	assert_true(seen & (1u << KLOG_ZK_EVENT_SESSION));
	assert_true(hit);
	/* Asked on the new session, and watched there: a new leader is
	 * news. */
	expect_at(d, 0, 1);
	leader(zk, 0, NULL);
	leader(zk, 0, "2");
	assert_true(changed(rd, d));
	expect_at(d, 0, 2);
	klog_discovery_close(d);
	klog_zk_close(rd);
	klog_zk_close(zk);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locates_leaders),
		cmocka_unit_test(test_lists_replicated_topics),
		cmocka_unit_test(test_drain_renews_expired_session),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
