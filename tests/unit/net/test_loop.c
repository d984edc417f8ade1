/* Unit tests for lib/net/loop.c: timers, file events, wakeups, the hooks. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/base/error.h"
#include "klog/net/loop.h"

/* Run iterations until cond() holds or about two seconds pass. */
static int
spin_until(klog_loop_t *loop, int (*cond)(void *), void *arg)
{
	int64_t end = klog_loop_now_ms() + 2000;

	while (!cond(arg)) {
		if (klog_loop_now_ms() > end)
			return 0;
		assert_true(klog_loop_run_once(loop, 50) >= 0);
	}
	return 1;
}

/* ---- timers ---- */

struct order {
	int fired[16];
	int n;
};

struct tagged {
	klog_timer_t t;
	struct order *o;
	int tag;
};

static void
record(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	struct tagged *tt = arg;

	(void)loop;
	(void)t;
	tt->o->fired[tt->o->n++] = tt->tag;
}

static int
fired_n(void *arg)
{
	struct order *o = arg;

	return o->n >= 4;
}

static void
test_timers_fire_in_order(void **state)
{
	klog_loop_t *loop;
	struct order o = { .n = 0 };
	struct tagged t[4];
	/* Started out of order; two share a deadline and keep start order. */
	static const int after[4] = { 30, 0, 10, 10 };

	(void)state;
	assert_int_equal(klog_loop_create(&loop), 0);
	for (int i = 0; i < 4; i++) {
		t[i].o = &o;
		t[i].tag = i;
		klog_timer_init(&t[i].t, record, &t[i]);
		assert_int_equal(klog_loop_timer_start(loop, &t[i].t, after[i],
		    0), 0);
		assert_true(klog_timer_active(&t[i].t));
	}
	assert_true(spin_until(loop, fired_n, &o));
	assert_int_equal(o.n, 4);
	assert_int_equal(o.fired[0], 1);
	assert_int_equal(o.fired[1], 2);
	assert_int_equal(o.fired[2], 3);
	assert_int_equal(o.fired[3], 0);
	for (int i = 0; i < 4; i++)
		assert_false(klog_timer_active(&t[i].t));
	klog_loop_free(loop);
}

static void
test_timer_stop_and_move(void **state)
{
	klog_loop_t *loop;
	struct order o = { .n = 0 };
	struct tagged t[5];

	(void)state;
	assert_int_equal(klog_loop_create(&loop), 0);
	for (int i = 0; i < 5; i++) {
		t[i].o = &o;
		t[i].tag = i;
		klog_timer_init(&t[i].t, record, &t[i]);
		assert_int_equal(klog_loop_timer_start(loop, &t[i].t,
		    5 * (i + 1), 0), 0);
	}
	klog_loop_timer_stop(loop, &t[1].t);
	klog_loop_timer_stop(loop, &t[1].t);   /* twice is harmless */
	klog_loop_timer_stop(loop, &t[3].t);
	/* Move timer 0 behind everyone else. */
	assert_int_equal(klog_loop_timer_start(loop, &t[0].t, 60, 0), 0);
	o.n = 1;  /* fired_n waits for 4: three real firings + this */
	o.fired[0] = -1;
	assert_true(spin_until(loop, fired_n, &o));
	assert_int_equal(o.fired[1], 2);
	assert_int_equal(o.fired[2], 4);
	assert_int_equal(o.fired[3], 0);
	klog_loop_free(loop);
}

struct repeat {
	klog_timer_t t;
	int count;
};

static void
repeat_fn(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	struct repeat *r = arg;

	if (++r->count == 3)
		klog_loop_timer_stop(loop, t);
}

static int
repeat_done(void *arg)
{
	return ((struct repeat *)arg)->count >= 3;
}

static void
test_repeating_timer(void **state)
{
	klog_loop_t *loop;
	struct repeat r = { .count = 0 };

	(void)state;
	assert_int_equal(klog_loop_create(&loop), 0);
	klog_timer_init(&r.t, repeat_fn, &r);
	assert_int_equal(klog_loop_timer_start(loop, &r.t, 0, 2), 0);
	assert_true(spin_until(loop, repeat_done, &r));
	assert_false(klog_timer_active(&r.t));
	/* Stopped from its own callback: it stays stopped. */
	for (int i = 0; i < 3; i++)
		assert_true(klog_loop_run_once(loop, 5) >= 0);
	assert_int_equal(r.count, 3);
	klog_loop_free(loop);
}

static void
restart_zero(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	int *n = arg;

	(*n)++;
	assert_int_equal(klog_loop_timer_start(loop, t, 0, 0), 0);
}

static void
test_timer_restart_zero_does_not_spin(void **state)
{
	klog_loop_t *loop;
	klog_timer_t t;
	int n = 0;

	(void)state;
	assert_int_equal(klog_loop_create(&loop), 0);
	klog_timer_init(&t, restart_zero, &n);
	assert_int_equal(klog_loop_timer_start(loop, &t, 0, 0), 0);
	assert_int_equal(klog_loop_run_once(loop, 0), 1);
	assert_int_equal(n, 1);
	assert_int_equal(klog_loop_run_once(loop, 0), 1);
	assert_int_equal(n, 2);
	klog_loop_timer_stop(loop, &t);
	klog_loop_free(loop);
}

/* Many timers with random deadlines come out sorted. */
static void
test_timer_heap_many(void **state)
{
	enum { N = 200 };
	klog_loop_t *loop;
	static klog_timer_t t[N];
	unsigned x = 12345;

	(void)state;
	assert_int_equal(klog_loop_create(&loop), 0);
	for (int i = 0; i < N; i++) {
		x = x * 1103515245 + 12345;
		klog_timer_init(&t[i], record, NULL);
		assert_int_equal(klog_loop_timer_start(loop, &t[i],
		    1000 + (x >> 16) % 1000, 0), 0);
	}
	for (int i = 0; i < N; i += 3)
		klog_loop_timer_stop(loop, &t[i]);
	/* Inspect the heap order through the public fields. */
	int64_t prev = 0;
	for (int left = N - (N + 2) / 3; left > 0; left--) {
		klog_timer_t *min = NULL;

		for (int i = 0; i < N; i++)
			if (klog_timer_active(&t[i]) &&
			    (min == NULL || t[i].when < min->when ||
			    (t[i].when == min->when && t[i].seq < min->seq)))
				min = &t[i];
		assert_non_null(min);
		assert_int_equal(min->slot, 1);   /* the heap's root */
		assert_true(min->when >= prev);
		prev = min->when;
		klog_loop_timer_stop(loop, min);
	}
	for (int i = 0; i < N; i++)
		assert_false(klog_timer_active(&t[i]));
	klog_loop_free(loop);
}

/* ---- file events ---- */

struct pipe_state {
	int fds[2];
	char got[64];
	size_t n;
	int writable;
};

static void
on_read(klog_loop_t *loop, int fd, void *arg, int mask)
{
	struct pipe_state *ps = arg;
	ssize_t r;

	(void)loop;
	assert_true(mask & KLOG_LOOP_READABLE);
	r = read(fd, ps->got + ps->n, sizeof(ps->got) - ps->n);
	if (r > 0)
		ps->n += (size_t)r;
}

static void
on_write(klog_loop_t *loop, int fd, void *arg, int mask)
{
	struct pipe_state *ps = arg;

	assert_true(mask & KLOG_LOOP_WRITABLE);
	ps->writable++;
	assert_int_equal(write(fd, "hello", 5), 5);
	/* Drop write interest so level triggering does not repeat. */
	assert_int_equal(klog_loop_set_mask(loop, fd, 0), 0);
}

static int
got_hello(void *arg)
{
	struct pipe_state *ps = arg;

	return ps->n == 5;
}

static void
test_file_events(void **state)
{
	klog_loop_t *loop;
	struct pipe_state ps = { .n = 0 };

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    ps.fds), 0);
	assert_int_equal(klog_loop_create(&loop), 0);
	assert_int_equal(klog_loop_watch(loop, ps.fds[0], KLOG_LOOP_READABLE,
	    on_read, &ps), 0);
	assert_int_equal(klog_loop_mask(loop, ps.fds[0]), KLOG_LOOP_READABLE);
	/* Nothing to read yet: a bounded wait handles nothing. */
	assert_int_equal(klog_loop_run_once(loop, 10), 0);
	assert_int_equal(klog_loop_watch(loop, ps.fds[1], KLOG_LOOP_WRITABLE,
	    on_write, &ps), 0);
	assert_true(spin_until(loop, got_hello, &ps));
	assert_memory_equal(ps.got, "hello", 5);
	assert_int_equal(ps.writable, 1);
	assert_int_equal(klog_loop_mask(loop, ps.fds[1]), 0);

	/* Unwatched: written bytes are not read. */
	assert_int_equal(klog_loop_watch(loop, ps.fds[0], 0, NULL, NULL), 0);
	assert_int_equal(write(ps.fds[1], "x", 1), 1);
	assert_int_equal(klog_loop_run_once(loop, 10), 0);
	assert_int_equal(ps.n, 5);
	/* A descriptor never watched, or out of range, has mask 0. */
	assert_int_equal(klog_loop_mask(loop, 100000), 0);
	assert_int_equal(klog_loop_watch(loop, -1, KLOG_LOOP_READABLE,
	    on_read, &ps), -KLOG_EINVAL);
	klog_loop_free(loop);
	close(ps.fds[0]);
	close(ps.fds[1]);
}

/* A peer hang-up wakes a reader so it can see EOF. */
static void
test_hangup_is_readable(void **state)
{
	klog_loop_t *loop;
	struct pipe_state ps = { .n = 0 };

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    ps.fds), 0);
	assert_int_equal(klog_loop_create(&loop), 0);
	assert_int_equal(klog_loop_watch(loop, ps.fds[0], KLOG_LOOP_READABLE,
	    on_read, &ps), 0);
	close(ps.fds[1]);
	assert_int_equal(klog_loop_run_once(loop, 1000), 1);
	assert_int_equal(ps.n, 0);
	assert_int_equal(klog_loop_watch(loop, ps.fds[0], 0, NULL, NULL), 0);
	klog_loop_free(loop);
	close(ps.fds[0]);
}

/* ---- wakeup, stop, before-sleep ---- */

struct wake_state {
	klog_loop_t *loop;
	int wakes;
	int sleeps;
};

static void
on_wake(klog_loop_t *loop, void *arg)
{
	(void)loop;
	((struct wake_state *)arg)->wakes++;
}

static void
on_sleep(klog_loop_t *loop, void *arg)
{
	(void)loop;
	((struct wake_state *)arg)->sleeps++;
}

static void *
waker(void *arg)
{
	struct wake_state *ws = arg;

	usleep(20000);
	klog_loop_wake(ws->loop);
	return NULL;
}

static void
test_wake_from_thread(void **state)
{
	struct wake_state ws = { .wakes = 0 };
	pthread_t th;
	int64_t start;

	(void)state;
	assert_int_equal(klog_loop_create(&ws.loop), 0);
	klog_loop_set_wake(ws.loop, on_wake, &ws);
	klog_loop_set_before_sleep(ws.loop, on_sleep, &ws);
	assert_int_equal(pthread_create(&th, NULL, waker, &ws), 0);
	/* Sleeps until the other thread wakes it (the timeout is a backstop). */
	start = klog_loop_now_ms();
	while (ws.wakes == 0 && klog_loop_now_ms() - start < 5000)
		assert_true(klog_loop_run_once(ws.loop, -1) >= 0 ||
		    ws.wakes > 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(ws.wakes, 1);
	assert_true(ws.sleeps >= 1);

	/* Wakeups coalesce: three calls, one callback. */
	klog_loop_wake(ws.loop);
	klog_loop_wake(ws.loop);
	klog_loop_wake(ws.loop);
	assert_true(klog_loop_run_once(ws.loop, 100) >= 0);
	assert_int_equal(ws.wakes, 2);
	assert_true(klog_loop_run_once(ws.loop, 0) >= 0);
	assert_int_equal(ws.wakes, 2);
	klog_loop_free(ws.loop);
}

static void
stop_from_hook(klog_loop_t *loop, void *arg)
{
	struct wake_state *ws = arg;

	if (++ws->sleeps == 3)
		klog_loop_stop(loop);
}

static void *
stopper(void *arg)
{
	usleep(20000);
	klog_loop_stop(arg);
	return NULL;
}

static void
test_run_and_stop(void **state)
{
	struct wake_state ws = { .sleeps = 0 };
	struct repeat r = { .count = -1000 };
	klog_timer_t tick;
	klog_loop_t *loop;
	pthread_t th;

	(void)state;
	assert_int_equal(klog_loop_create(&loop), 0);
	/* Stopped before running: returns at once, consuming the request. */
	klog_loop_stop(loop);
	assert_true(klog_loop_stopping(loop));
	assert_int_equal(klog_loop_run(loop), 0);
	assert_false(klog_loop_stopping(loop));

	/* The hook runs before every sleep (a 1 ms timer ends each one) and
	 * may stop the loop. */
	klog_timer_init(&tick, repeat_fn, &r);
	assert_int_equal(klog_loop_timer_start(loop, &tick, 1, 1), 0);
	klog_loop_set_before_sleep(loop, stop_from_hook, &ws);
	assert_int_equal(klog_loop_run(loop), 0);
	assert_int_equal(ws.sleeps, 3);
	klog_loop_timer_stop(loop, &tick);

	/* Another thread stops a loop blocked in epoll_wait. */
	klog_loop_set_before_sleep(loop, NULL, NULL);
	assert_int_equal(pthread_create(&th, NULL, stopper, loop), 0);
	assert_int_equal(klog_loop_run(loop), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	klog_loop_free(loop);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers_fire_in_order),
		cmocka_unit_test(test_timer_stop_and_move),
		cmocka_unit_test(test_repeating_timer),
		cmocka_unit_test(test_timer_restart_zero_does_not_spin),
		cmocka_unit_test(test_timer_heap_many),
		cmocka_unit_test(test_file_events),
		cmocka_unit_test(test_hangup_is_readable),
		cmocka_unit_test(test_wake_from_thread),
		cmocka_unit_test(test_run_and_stop),
	};

	return cmocka_run_group_tests_name("loop", tests, NULL, NULL);
}
