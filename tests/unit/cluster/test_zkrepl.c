/*
 * Tests for lib/cluster/zkrepl.c against a real ZooKeeper (zkserver.h) and
 * a real core, fetcher and loop, as broker 1 of a replicated topic "rt"
 * whose other replica, broker 2, never runs: broker 1 claims partition 0
 * and leads it.  The session's events reach zkrepl through the loop, as
 * lib/cluster/zkbroker.c passes them, except that a test may lose the answer
 * to an ISR write (its REPLY becomes a timeout, as under packet loss,
 * after ZooKeeper applied the write).  Without zkServer.sh every test is
 * skipped.
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

#include "fx/tmpdir.h"
#include "fx/zkserver.h"

#include "klog/base/buf.h"
#include "klog/base/clock.h"
#include "klog/broker/fetcher.h"
#include "klog/cluster/zkrepl.h"
#include "klog/core/core.h"
#include "klog/core/replica.h"
#include "klog/core/replicated.h"
#include "klog/net/loop.h"
#include "klog/storage/store.h"
#include "klog/zk/layout.h"
#include "klog/zk/rtopics.h"
#include "klog/zk/zkasync.h"

#define SESSION_MS 2000
#define TICK_MS 20

struct fx {
	char dir[64];
	klog_store_t *store;
	klog_loop_t *loop;
	klog_core_t *core;
	klog_fetcher_t *fetcher;
	klog_zk_t *zk;
	klog_zkrepl_t *zr;
	int lose_reply;           /* the next REPLY's answer is lost */
	void (*on_lost)(struct fx *);   /* and this happens before it is
	                                   read back */
	int replies;
	klog_timer_t tick;        /* measures how long the loop was held */
	int64_t last_tick, worst_gap;
	char logs[16384];
};

static void
capture(void *arg, int level, const char *msg)
{
	struct fx *f = arg;
	size_t n = strlen(f->logs);

	snprintf(f->logs + n, sizeof(f->logs) - n, "%s: %s\n",
	    klog_level_name(level), msg);
}

static void
on_zk(klog_loop_t *loop, int fd, void *arg, int mask)
{
	struct fx *f = arg;
	klog_zk_event_t ev;

	(void)loop;
	(void)fd;
	(void)mask;
	while (klog_zk_next_event(f->zk, &ev) > 0) {
		if (ev.type == KLOG_ZK_EVENT_REPLY) {
			f->replies++;
			if (f->lose_reply) {
				f->lose_reply = 0;
				ev.rc = -KLOG_ETIMEDOUT;
				ev.version = -1;
				if (f->on_lost != NULL)
					f->on_lost(f);
			}
		}
		if (!klog_zkrepl_event(f->zr, &ev))
			free(ev.data);
	}
}

static void
on_tick(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	struct fx *f = arg;
	int64_t now = klog_clock_mono_ms();

	if (f->last_tick > 0 && now - f->last_tick > f->worst_gap)
		f->worst_gap = now - f->last_tick;
	f->last_tick = now;
	klog_loop_timer_start(loop, t, TICK_MS, 0);
}

static void
run_for(struct fx *f, int ms)
{
	int64_t end = klog_clock_mono_ms() + ms;

	while (klog_clock_mono_ms() < end)
		klog_loop_run_once(f->loop, TICK_MS);
}

static klog_replica_t *
rep(struct fx *f)
{
	klog_core_part_t *p = klog_core_rpart(f->core, "rt", 0);

	return p != NULL ? klog_core_part_replica(p) : NULL;
}

/* Run the loop until rt's partition 0 is led here, up to ms. */
static int
wait_lead(struct fx *f, int ms)
{
	int64_t end = klog_clock_mono_ms() + ms;

	while (klog_clock_mono_ms() < end) {
		if (rep(f) != NULL && rep(f)->role == KLOG_REPLICA_LEADER)
			return 1;
		klog_loop_run_once(f->loop, TICK_MS);
	}
	return 0;
}

static void
assert_isr(struct fx *f, const int32_t *want, int n)
{
	int32_t isr[KLOG_REPLICA_MAX + 1];

	assert_int_equal(klog_replica_isr(rep(f), isr), n);
	assert_memory_equal(isr, want, (size_t)n * sizeof(*want));
}

static void
read_state(struct fx *f, klog_rstate_t *st)
{
	klog_err_t err;

	assert_int_equal(klog_rtopics_state(f->zk, "rt", 0, 0, st, &err), 0);
}

/* Write rt's state behind the leader's back, as another broker would. */
static void
write_state(struct fx *f, int32_t leader, int32_t epoch, const int32_t *isr,
    int n)
{
	klog_rstate_t st = { .leader = leader, .leader_epoch = epoch,
	    .controller_epoch = -1, .nisr = n, .version = -1 };
	char path[KLOG_ZK_PATH_MAX];
	klog_err_t err;
	klog_buf_t b;

	memcpy(st.isr, isr, (size_t)n * sizeof(*isr));
	klog_buf_init(&b);
	assert_int_equal(klog_rstate_encode(&b, &st), 0);
	assert_int_equal(klog_rtopics_state_path(path, sizeof(path), "rt", 0),
	    0);
	assert_int_equal(klog_zk_set(f->zk, path, b.data, b.len, -1, &err), 0);
	klog_buf_free(&b);
}

static int
setup(void **state)
{
	static const int32_t replicas[] = { 1, 2 };
	klog_core_config_t cc = { .default_partitions = 1,
	    .max_message_bytes = 1 << 20, .broker_id = 1,
	    .replica_lag_ms = 600000 };
	klog_zkrepl_config_t rc = { .broker_id = 1 };
	klog_rtopic_t t = { 1, 2, 1, (int32_t *)replicas };
	klog_store_config_t sc;
	struct fx *f;
	klog_err_t err = { 0 };

	if (!have_server) {
		*state = NULL;
		return 0;
	}
	assert_non_null(f = calloc(1, sizeof(*f)));
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "zkrepl"));
	cc.log = (klog_logger_t){ capture, f, KLOG_LEVEL_DEBUG };
	rc.log = cc.log;
	klog_store_config_default(&sc);
	sc.data_dir = f->dir;
	assert_int_equal(klog_store_open(&sc, &f->store, &err), 0);
	assert_int_equal(klog_loop_create(&f->loop), 0);
	assert_int_equal(klog_core_new(f->loop, f->store, &cc, &f->core, &err),
	    0);
	assert_int_equal(klog_fetcher_new(f->loop, f->core, 1, NULL, &cc.log,
	    &f->fetcher, &err), 0);
	assert_int_equal(klog_zk_open(server.connect, SESSION_MS, 10000,
	    &f->zk, &err), 0);
	(void)klog_zk_delete_tree(f->zk, "/klog", &err);
	(void)klog_zk_delete_tree(f->zk, "/brokers", &err);
	assert_int_equal(klog_layout_register_broker(f->zk, 1, "127.0.0.1",
	    1, 0, &err), 0);
	assert_int_equal(klog_rtopics_create(f->zk, "rt", &t, &err), 0);
	assert_int_equal(klog_zkrepl_new(f->zk, f->loop, f->core, f->fetcher,
	    &rc, &f->zr, &err), 0);
	klog_core_set_replication(f->core, 600000, klog_zkrepl_isr_change,
	    f->zr, klog_fetcher_flushed, f->fetcher);
	assert_int_equal(klog_loop_watch(f->loop, klog_zk_event_fd(f->zk),
	    KLOG_LOOP_READABLE, on_zk, f), 0);
	klog_timer_init(&f->tick, on_tick, f);
	klog_loop_timer_start(f->loop, &f->tick, TICK_MS, 0);
	klog_zkrepl_sync(f->zr);
	assert_true(wait_lead(f, 5000));
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	klog_err_t err;

	if (f == NULL)
		return 0;
	klog_loop_timer_stop(f->loop, &f->tick);
	klog_loop_watch(f->loop, klog_zk_event_fd(f->zk), 0, NULL, NULL);
	klog_core_set_replication(f->core, 600000, NULL, NULL, NULL, NULL);
	klog_zkrepl_free(f->zr);
	klog_fetcher_free(f->fetcher);
	klog_zk_close(f->zk);
	klog_core_free(f->core);
	klog_store_close(f->store, 1, &err);
	klog_loop_free(f->loop);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* Run the loop until the write and whatever it takes to settle it are
 * answered: n replies, up to 5 s. */
static void
settle(struct fx *f, int n)
{
	int64_t end = klog_clock_mono_ms() + 5000;

	while (f->replies < n && klog_clock_mono_ms() < end)
		klog_loop_run_once(f->loop, TICK_MS);
	assert_true(f->replies >= n);
	run_for(f, 100);
}

/*
 * A grow applied by ZooKeeper whose answer was lost: read back, it is
 * taken (acks=all then waits for broker 2, which ZooKeeper's ISR could
 * elect), and the leader goes on at the version it read: its next write
 * succeeds.  Before, the leader kept the old ISR and version, so its next
 * write failed on the version and it took itself for deposed.
 */
static void
test_lost_answer_to_an_applied_grow(void **state)
{
	struct fx *f = *state;
	const int32_t w1[] = { 1 }, w12[] = { 1, 2 };
	klog_rstate_t st;

	if (f == NULL)
		skip();
	assert_isr(f, w1, 1);
	f->lose_reply = 1;
	assert_int_equal(klog_zkrepl_isr_change(f->zr, "rt", 0,
	    rep(f)->epoch, w12, 2), 0);
	settle(f, 2);   /* the write, then the read back */
	read_state(f, &st);
	assert_int_equal(st.nisr, 2);
	assert_int_equal(rep(f)->role, KLOG_REPLICA_LEADER);
	assert_isr(f, w12, 2);
	assert_null(strstr(f->logs, "deposed"));
	assert_non_null(strstr(f->logs, "reading it back"));

	assert_int_equal(klog_zkrepl_isr_change(f->zr, "rt", 0,
	    rep(f)->epoch, w1, 1), 0);
	settle(f, 3);
	assert_int_equal(rep(f)->role, KLOG_REPLICA_LEADER);
	assert_isr(f, w1, 1);
	read_state(f, &st);
	assert_int_equal(st.nisr, 1);
	assert_null(strstr(f->logs, "deposed"));
}

static void
undo_grow(struct fx *f)
{
	const int32_t w1[] = { 1 };

	write_state(f, 1, rep(f)->epoch, w1, 1);
}

/* A write that was not applied (the node holds the old ISR, at another
 * version): the old ISR stays, the leader still leads. */
static void
test_lost_answer_to_a_write_not_applied(void **state)
{
	struct fx *f = *state;
	const int32_t w1[] = { 1 }, w12[] = { 1, 2 };

	if (f == NULL)
		skip();
	/* Undone before the read back: as if it never happened. */
	f->lose_reply = 1;
	f->on_lost = undo_grow;
	assert_int_equal(klog_zkrepl_isr_change(f->zr, "rt", 0,
	    rep(f)->epoch, w12, 2), 0);
	settle(f, 2);
	assert_int_equal(rep(f)->role, KLOG_REPLICA_LEADER);
	assert_isr(f, w1, 1);
	assert_null(strstr(f->logs, "deposed"));
	/* Its version taken: the next write goes through. */
	assert_int_equal(klog_zkrepl_isr_change(f->zr, "rt", 0,
	    rep(f)->epoch, w12, 2), 0);
	settle(f, 3);
	assert_isr(f, w12, 2);
}

static void
another_leads(struct fx *f)
{
	const int32_t w2[] = { 2 };

	write_state(f, 2, rep(f)->epoch + 1, w2, 1);
}

/* Another broker leads in a later epoch: read back, this one steps down. */
static void
test_lost_answer_while_deposed(void **state)
{
	struct fx *f = *state;
	const int32_t w12[] = { 1, 2 };
	int32_t epoch;

	if (f == NULL)
		skip();
	epoch = rep(f)->epoch;
	f->lose_reply = 1;
	f->on_lost = another_leads;
	assert_int_equal(klog_zkrepl_isr_change(f->zr, "rt", 0, epoch, w12,
	    2), 0);
	settle(f, 2);
	/* The read back or the state's watch, whichever comes first. */
	assert_int_not_equal(rep(f)->role, KLOG_REPLICA_LEADER);
	assert_null(strstr(f->logs, "ISR grew"));
}

/*
 * ZooKeeper stalls (paused: connections open, nothing answered): the
 * leader steps down within the session timeout, before the server could
 * expire its session and another broker lead, says so, and the loop is
 * never held meanwhile, an ISR write during the stall included.  When
 * ZooKeeper answers again it leads again.
 */
static void
test_stalled_zookeeper_fences_the_leader(void **state)
{
	struct fx *f = *state;
	const int32_t w12[] = { 1, 2 };
	int64_t fences, t0, fenced_at = 0;

	if (f == NULL)
		skip();
	run_for(f, 500);
	assert_int_equal(klog_zkrepl_fenced(f->zr, &fences), 0);
	assert_int_equal(kill(server.pid, SIGSTOP), 0);
	t0 = klog_clock_mono_ms();
	f->worst_gap = 0;
	while (klog_clock_mono_ms() - t0 < SESSION_MS + 1000) {
		klog_loop_run_once(f->loop, TICK_MS);
		if (fenced_at == 0 && klog_zkrepl_fenced(f->zr, &fences))
			fenced_at = klog_clock_mono_ms() - t0;
		if (klog_clock_mono_ms() - t0 > 1200 &&
		    rep(f)->role == KLOG_REPLICA_LEADER)
			/* Whatever comes of it, it may not wait. */
			(void)klog_zkrepl_isr_change(f->zr, "rt", 0,
			    rep(f)->epoch, w12, 2);
	}
	assert_int_equal(kill(server.pid, SIGCONT), 0);
	assert_true(fenced_at > 0);
	assert_true(fenced_at <= SESSION_MS);
	assert_int_equal(fences, 1);
	assert_int_not_equal(rep(f)->role, KLOG_REPLICA_LEADER);
	assert_non_null(strstr(f->logs, "zookeeper: silent for"));
	assert_non_null(strstr(f->logs, "leading nothing until it answers "
	    "(stepped down from 1 partition)"));
	assert_true(f->worst_gap < 250);

	/* Back: unfenced at once (a new session if the old one expired). */
	t0 = klog_clock_mono_ms();
	while (klog_zkrepl_fenced(f->zr, &fences) &&
	    klog_clock_mono_ms() - t0 < 10000)
		klog_loop_run_once(f->loop, TICK_MS);
	assert_int_equal(klog_zkrepl_fenced(f->zr, &fences), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_lost_answer_to_an_applied_grow, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_lost_answer_to_a_write_not_applied, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_lost_answer_while_deposed, setup, teardown),
		/* Last: it pauses the server. */
		cmocka_unit_test_setup_teardown(
		    test_stalled_zookeeper_fences_the_leader, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
