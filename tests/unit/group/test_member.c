/*
 * Tests for lib/group/member.c, a consumer group member's loop, against a real
 * ZooKeeper (zkserver.h) and the fake broker (fakebroker.h) registered in
 * it as broker 1 with topic "t".  Each test works under a chroot of its
 * own.  Without zkServer.sh every test is skipped.
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
#include "klog/base/clock.h"
#include "klog/client/client.h"
#include "klog/client/zkdiscovery.h"
#include "klog/group/member.h"
#include "klog/zk/layout.h"
#include "fx/zkserver.h"

#define NPARTS 4
#define PER_PART 64



/* What a member handed out and said, as its caller saw it. */
typedef struct sink {
	int flushes;
	int fail;                   /* a flush with something to write fails,
	                               and every flush after it */
	int failed;
	int unwritten;              /* handed out since the last flush */
	int got[NPARTS][PER_PART];  /* message "<part>-<i>" handed out */
	int total;
	char said[64][600];
	int detail[64];
	int nsaid;
} sink_t;

static int
sink_flush(void *arg)
{
	sink_t *s = arg;

	s->flushes++;
	if (s->failed || (s->fail && s->unwritten > 0)) {
		s->failed = 1;
		return -1;
	}
	s->unwritten = 0;
	return 0;
}

static void
sink_say(void *arg, int level, const char *line)
{
	sink_t *s = arg;

	if (s->nsaid == 64)
		return;
	s->detail[s->nsaid] = level == KLOG_LEVEL_DEBUG;
	snprintf(s->said[s->nsaid++], sizeof(s->said[0]), "%s", line);
}

/* Whether some line said contains text; detail: -1 any, else which. */
static int
said(const sink_t *s, const char *text, int detail)
{
	for (int i = 0; i < s->nsaid; i++)
		if (strstr(s->said[i], text) != NULL &&
		    (detail < 0 || s->detail[i] == detail))
			return 1;
	return 0;
}

/* How many partitions the last assignment line names ("reads 1-0 1-2"). */
static int
assigned(const sink_t *s)
{
	const char *p;
	int n = -1;

	for (int i = 0; i < s->nsaid; i++) {
		if ((p = strstr(s->said[i], " reads")) == NULL)
			continue;
		n = 0;
		for (p += 6; (p = strchr(p, ' ')) != NULL; p++)
			n++;
		if (strstr(s->said[i], " reads nothing") != NULL)
			n = 0;
	}
	return n;
}

/* The test's broker, and its registration in ZooKeeper. */
typedef struct env {
	char connect[128];
	fake_t *f;
	klog_zk_t *zk;              /* the broker's session */
} env_t;

/* A member with its own session. */
typedef struct mem {
	klog_zk_t *zk;
	klog_discovery_t *d;
	klog_member_t *mb;
	sink_t s;
} mem_t;

static klog_zk_t *
zk_open(const char *connect)
{
	klog_zk_t *zk = NULL;
	klog_err_t err = { 0, "" };

	if (klog_zk_open(connect, 4000, 10000, &zk, &err) < 0)
		fail_msg("zookeeper %s: %s", connect, err.msg);
	return zk;
}

static void
env_start(env_t *e, const char *root, int parts)
{
	klog_err_t err = { 0, "" };
	char text[8];

	memset(e, 0, sizeof(*e));
	snprintf(e->connect, sizeof(e->connect), "%s%s", server.connect, root);
	e->f = fake_start(parts, 0);
	for (int p = 0; p < parts; p++)
		for (int i = 0; i < 2; i++) {
			snprintf(text, sizeof(text), "%d-%d", p, i);
			fake_append(e->f, p, text);
		}
	e->zk = zk_open(e->connect);
	assert_int_equal(klog_layout_register_broker(e->zk, 1, "127.0.0.1",
	    e->f->port, 0, &err), 0);
	assert_int_equal(klog_layout_register_topic(e->zk, 1, "t", parts,
	    &err), 0);
}

static void
env_stop(env_t *e)
{
	if (e->f != NULL)
		fake_stop(e->f);
	klog_zk_close(e->zk);
}

/* Append message "<p>-<i>" for i in [from, to) to every partition. */
static void
append(env_t *e, int parts, int from, int to)
{
	char text[8];

	for (int p = 0; p < parts; p++)
		for (int i = from; i < to; i++) {
			snprintf(text, sizeof(text), "%d-%d", p, i);
			fake_append(e->f, p, text);
		}
}

static void
mem_open(mem_t *m, const env_t *e, int exit_at_end, int64_t commit_ms)
{
	klog_member_config_t mc;
	klog_err_t err = { 0, "" };

	memset(m, 0, sizeof(*m));
	memset(&mc, 0, sizeof(mc));
	mc.group.group = "g";
	mc.group.topic = "t";
	klog_consumer_config_default(&mc.read);
	mc.read.start = KLOG_CONSUMER_BEGINNING;
	mc.read.exit_at_end = exit_at_end;
	mc.read.max_wait_ms = 50;
	mc.read.connect_timeout_ms = 1000;
	mc.read.retry_for_ms = 200;
	mc.commit_ms = commit_ms;
	mc.watch_fd = -1;
	mc.flush = sink_flush;
	mc.log = (klog_logger_t){ sink_say, &m->s, KLOG_LEVEL_DEBUG };
	mc.arg = &m->s;
	m->zk = zk_open(e->connect);
	assert_int_equal(klog_zkdiscovery_open(m->zk, &m->d, &err), 0);
	assert_int_equal(klog_member_open(m->zk, m->d, &mc, &m->mb, &err), 0);
}

static void
mem_close(mem_t *m)
{
	klog_member_close(m->mb);
	klog_discovery_close(m->d);
	klog_zk_close(m->zk);
}

/* One step of m; a message is recorded as handed out. */
static int
step(mem_t *m)
{
	klog_consumer_msg_t msg;
	klog_err_t err = { 0, "" };
	char text[16];
	int rc, p, i;

	rc = klog_member_next(m->mb, &msg, &err);
	if (rc < 0)
		fail_msg("klog_member_next: %s", klog_err_text(&err, rc));
	if (rc != KLOG_CONSUMER_MSG)
		return rc;
	assert_true(msg.payload_len < sizeof(text));
	memcpy(text, msg.payload, msg.payload_len);
	text[msg.payload_len] = '\0';
	assert_int_equal(sscanf(text, "%d-%d", &p, &i), 2);
	assert_int_equal(p, msg.partition);
	m->s.got[p][i]++;
	m->s.total++;
	m->s.unwritten++;
	return rc;
}

/* Steps of m up to the end of a batch, where a member takes ZooKeeper's
 * news: stepping two members in turn a message at a time, a waiting one's
 * second-long idle made every message of the other's batch wait for it
 * (17-18 s to hand over, against a 20 s deadline, in 5 runs of 40). */
static void
turn(mem_t *m)
{
	while (step(m) == KLOG_CONSUMER_MSG)
		;
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

/* -e: everything read once, committed at the end of the log on leaving. */
static void
test_reads_and_commits(void **state)
{
	env_t e;
	mem_t m;
	klog_err_t err = { 0, "" };
	int rc, steps = 0;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/m1", 2);
	mem_open(&m, &e, 1, 20);
	while ((rc = step(&m)) != KLOG_CONSUMER_DONE)
		assert_true(++steps < 1000);
	assert_int_equal(m.s.total, 4);
	for (int p = 0; p < 2; p++)
		for (int i = 0; i < 2; i++)
			assert_int_equal(m.s.got[p][i], 1);
	/* The assignment is a detail line; the start of the loop said
	 * nothing else. */
	assert_true(said(&m.s, " reads 1-0 1-1", 1));
	assert_true(said(&m.s, "group \"g\": member g_", 1));
	assert_int_equal(m.s.nsaid, 1);
	assert_int_equal(step(&m), KLOG_CONSUMER_DONE);
	assert_int_equal(klog_member_leave(m.mb, &err), 0);
	assert_int_equal(m.s.unwritten, 0);
	assert_int_equal(committed(&e, 0), (int64_t)e.f->log[0].len);
	assert_int_equal(committed(&e, 1), (int64_t)e.f->log[1].len);
	mem_close(&m);
	env_stop(&e);
}

/*
 * A replicated topic (its /klog/topics nodes written by hand, broker 1
 * leading both partitions): the group names the partitions by number,
 * keeps owners and offsets at .../t/<p>, and reads from the leader.
 */
static void
test_replicated_topic(void **state)
{
	klog_err_t err = { 0, "" };
	char text[8], path[64];
	int64_t off = -1;
	env_t e;
	mem_t m;
	int steps = 0;

	(void)state;
	NEED_SERVER();
	memset(&e, 0, sizeof(e));
	snprintf(e.connect, sizeof(e.connect), "%s/mr", server.connect);
	e.f = fake_start(2, 0);
	for (int p = 0; p < 2; p++)
		for (int i = 0; i < 2; i++) {
			snprintf(text, sizeof(text), "%d-%d", p, i);
			fake_append(e.f, p, text);
		}
	e.zk = zk_open(e.connect);
	assert_int_equal(klog_layout_register_broker(e.zk, 1, "127.0.0.1",
	    e.f->port, 0, &err), 0);
	static const char assignment[] = "{\"version\":1,\"partitions\":"
	    "{\"0\":[1],\"1\":[1]},\"min_insync\":1}";
	assert_int_equal(klog_zk_put(e.zk, "/klog/topics/t", assignment,
	    strlen(assignment), &err), 0);
	for (int p = 0; p < 2; p++) {
		snprintf(path, sizeof(path),
		    "/klog/topics/t/partitions/%d/leader", p);
		assert_int_equal(klog_zk_mkdirs(e.zk, path, &err), 0);
		assert_int_equal(klog_zk_delete(e.zk, path, -1, &err), 0);
		assert_int_equal(klog_zk_create_ephemeral(e.zk, path, "1", 1,
		    0, &err), 0);
	}
	mem_open(&m, &e, 1, 20);
	while (step(&m) != KLOG_CONSUMER_DONE)
		assert_true(++steps < 1000);
	assert_int_equal(m.s.total, 4);
	assert_true(said(&m.s, " reads 0 1", 1));
	assert_int_equal(klog_member_leave(m.mb, &err), 0);
	for (int p = 0; p < 2; p++) {
		assert_int_equal(klog_layout_offset_read(e.zk, "g", "t",
		    KLOG_LAYOUT_NUMBERED, p, &off, &err), 0);
		assert_int_equal(off, (int64_t)e.f->log[p].len);
	}
	assert_int_equal(klog_zk_exists(e.zk, "/consumers/g/offsets/t/1", 0,
	    NULL, &err), 0);
	mem_close(&m);

	/* Partition 1 without a leader (an election): the member waits,
	 * longer than its retry_for, and reads once the leader is there. */
	assert_int_equal(klog_zk_delete(e.zk,
	    "/klog/topics/t/partitions/1/leader", -1, &err), 0);
	mem_open(&m, &e, 1, 20);
	int64_t t0 = klog_clock_mono_ms();
	while (klog_clock_mono_ms() - t0 < 600)
		assert_int_not_equal(step(&m), KLOG_CONSUMER_DONE);
	assert_true(said(&m.s, "no leader", -1));
	assert_int_equal(klog_zk_create_ephemeral(e.zk,
	    "/klog/topics/t/partitions/1/leader", "1", 1, 0, &err), 0);
	steps = 0;
	while (step(&m) != KLOG_CONSUMER_DONE)
		assert_true(++steps < 5000);
	mem_close(&m);
	env_stop(&e);
}

/* What the caller could not write is not committed: the positions noted
 * stay where the last good flush left them (here: the start). */
static void
test_failed_flush_commits_nothing_unwritten(void **state)
{
	env_t e;
	mem_t m;
	klog_err_t err = { 0, "" };
	int rc, steps = 0, flushes;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/m2", 1);
	mem_open(&m, &e, 1, 20);
	m.s.fail = 1;
	while ((rc = step(&m)) != KLOG_CONSUMER_DONE)
		assert_true(++steps < 1000);
	assert_int_equal(m.s.total, 2);
	assert_true(m.s.failed);
	/* It stays stopped, without asking to write again. */
	flushes = m.s.flushes;
	assert_int_equal(step(&m), KLOG_CONSUMER_DONE);
	assert_int_equal(klog_member_leave(m.mb, &err), 0);
	assert_int_equal(m.s.flushes, flushes);
	assert_int_equal(committed(&e, 0), 0);
	mem_close(&m);
	env_stop(&e);
}

/* A second member joins: the first gives up half of the partitions,
 * committing them first, and the second starts where it stopped, so that
 * every message comes exactly once.  No commit falls due meanwhile: what
 * is handed over is what the first member noted on stopping.  The first
 * may read everything appended before the handover is done; what is
 * appended after it goes to each partition's new owner. */
static void
test_rebalance_hands_over(void **state)
{
	env_t e;
	mem_t a, b;
	int64_t deadline;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/m3", NPARTS);
	mem_open(&a, &e, 0, 3600000);
	deadline = klog_clock_mono_ms() + 10000;
	while (a.s.total < 2 * NPARTS)
		assert_true(step(&a) >= 0 && klog_clock_mono_ms() < deadline);
	assert_int_equal(assigned(&a.s), NPARTS);
	append(&e, NPARTS, 2, 10);
	mem_open(&b, &e, 0, 3600000);
	while (a.s.total + b.s.total < 10 * NPARTS || assigned(&a.s) != 2 ||
	    assigned(&b.s) != 2) {
		turn(&a);
		turn(&b);
		assert_true(klog_clock_mono_ms() < deadline);
	}
	append(&e, NPARTS, 10, 12);
	while (a.s.total + b.s.total < 12 * NPARTS) {
		turn(&a);
		turn(&b);
		assert_true(klog_clock_mono_ms() < deadline);
	}
	for (int p = 0; p < NPARTS; p++)
		for (int i = 0; i < 12; i++)
			assert_int_equal(a.s.got[p][i] + b.s.got[p][i], 1);
	assert_true(b.s.total >= 2 * 2);
	mem_close(&a);
	mem_close(&b);
	env_stop(&e);
}

/* A broker gone is not an error: reading stops and is tried again. */
static void
test_broker_gone_is_retried(void **state)
{
	env_t e;
	mem_t m;
	int64_t until;

	(void)state;
	NEED_SERVER();
	env_start(&e, "/m4", 1);
	mem_open(&m, &e, 0, 20);
	until = klog_clock_mono_ms() + 20000;
	while (m.s.total < 2)
		assert_true(step(&m) >= 0 && klog_clock_mono_ms() < until);
	fake_stop(e.f);
	e.f = NULL;
	until = klog_clock_mono_ms() + 20000;
	while (!said(&m.s, "; trying again", 0) &&
	    klog_clock_mono_ms() < until)
		step(&m);
	assert_true(said(&m.s, "; rebalancing", 0));
	assert_true(said(&m.s, "Connection refused; trying again", 0));
	mem_close(&m);
	env_stop(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_and_commits),
		cmocka_unit_test(test_failed_flush_commits_nothing_unwritten),
		cmocka_unit_test(test_rebalance_hands_over),
		cmocka_unit_test(test_broker_gone_is_retried),
		cmocka_unit_test(test_replicated_topic),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
