/*
 * Unit tests for lib/broker/fetcher.c: a real core over a real store and
 * loop, one partition followed from a fake leader that lives on the same
 * loop: a listening socket on 127.0.0.1 whose connections are read, and
 * whose REPLICA_FETCHes are answered after a delay, or never (a stalled
 * leader, as one behind a network cut looks from here).  The tests run
 * the loop until what they wait for happens or a bound passes, so a
 * fetcher that never notices fails rather than hangs.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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
#include "klog/base/error.h"
#include "klog/broker/fetcher.h"
#include "klog/core/core.h"
#include "klog/core/replicated.h"
#include "klog/net/loop.h"
#include "klog/proto/proto.h"
#include "klog/storage/store.h"

#define LAG_MS 600000           /* no ISR changes here */
#define EPOCH 1
#define MAX_DONE 4
#define NPEERS 16

struct lead;

/* One connection the fake leader accepted. */
struct peer {
	struct lead *ld;
	int fd;                 /* -1 once the follower closed it */
	int64_t accepted;       /* loop ms */
	int64_t closed;         /* 0: open */
	int64_t first_fetch;    /* 0: none yet */
	uint8_t in[4096];
	size_t len;
	int32_t corr;           /* the fetch to answer */
	klog_timer_t answer;
};

struct lead {
	klog_loop_t *loop;
	int lfd;
	char port[16];
	int answer_ms;          /* -1: never answer */
	int n;
	int fetches;
	struct peer peers[NPEERS];
};

struct fx {
	char dir[64];
	klog_store_t *store;
	klog_loop_t *loop;
	klog_core_t *core;
	klog_fetcher_t *fetcher;
	struct lead ld;
	int64_t max_gap;        /* the longest loop iteration run() saw */
	/* fx/corehooks.h's */
	int wakes;
	int finished;
	klog_core_park_t *done[MAX_DONE];
	char logs[16384];
};

#include "fx/corehooks.h"

/* ---- the fake leader ---- */

static void
lead_answer(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	struct peer *pr = arg;
	klog_rfetch_resp_t r = { .leader_epoch = EPOCH, .chunk_epoch = EPOCH,
	    .diverging_epoch = -1, .diverging_end = -1 };
	klog_buf_t b;

	(void)loop;
	(void)t;
	if (pr->fd < 0)
		return;
	klog_buf_init(&b);
	klog_buf_put_i32(&b, 0);
	klog_buf_put_i32(&b, pr->corr);
	klog_buf_put_i16(&b, KLOG_WIRE_NONE);
	klog_proto_put_rfetch_header(&b, &r);
	klog_buf_patch_i32(&b, 0, (int32_t)b.len - 4);
	assert_false(b.failed);
	assert_int_equal(write(pr->fd, b.data, b.len), (ssize_t)b.len);
	klog_buf_free(&b);
}

/* Whole frames off the front of pr->in: a REPLICA_FETCH noted, and
 * answered in answer_ms unless the leader is stalled. */
static void
lead_frames(struct peer *pr)
{
	struct lead *ld = pr->ld;
	klog_rd_t rd;
	int32_t size, corr;
	int16_t api;

	for (;;) {
		if (pr->len < 4)
			return;
		klog_rd_init(&rd, pr->in, pr->len);
		size = klog_rd_i32(&rd);
		assert_true(size >= 8 && (size_t)size + 4 <= sizeof(pr->in));
		if (pr->len < (size_t)size + 4)
			return;
		api = klog_rd_i16(&rd);
		(void)klog_rd_i16(&rd);
		corr = klog_rd_i32(&rd);
		if (api == KLOG_API_REPLICA_FETCH) {
			ld->fetches++;
			if (pr->first_fetch == 0)
				pr->first_fetch = klog_loop_now_ms();
			pr->corr = corr;
			if (ld->answer_ms >= 0)
				klog_loop_timer_start(ld->loop, &pr->answer,
				    ld->answer_ms, 0);
		}
		memmove(pr->in, pr->in + size + 4, pr->len - (size_t)size - 4);
		pr->len -= (size_t)size + 4;
	}
}

static void
lead_readable(klog_loop_t *loop, int fd, void *arg, int mask)
{
	struct peer *pr = arg;
	ssize_t r;

	(void)mask;
	r = read(fd, pr->in + pr->len, sizeof(pr->in) - pr->len);
	if (r < 0 && errno == EAGAIN)
		return;
	if (r <= 0) {
		klog_loop_watch(loop, fd, 0, NULL, NULL);
		klog_loop_timer_stop(loop, &pr->answer);
		close(fd);
		pr->fd = -1;
		pr->closed = klog_loop_now_ms();
		return;
	}
	pr->len += (size_t)r;
	lead_frames(pr);
}

static void
lead_accept(klog_loop_t *loop, int fd, void *arg, int mask)
{
	struct lead *ld = arg;
	struct peer *pr;
	int c;

	(void)mask;
	if ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) < 0)
		return;
	assert_true(ld->n < NPEERS);
	pr = &ld->peers[ld->n++];
	pr->ld = ld;
	pr->fd = c;
	pr->accepted = klog_loop_now_ms();
	klog_timer_init(&pr->answer, lead_answer, pr);
	assert_int_equal(klog_loop_watch(loop, c, KLOG_LOOP_READABLE,
	    lead_readable, pr), 0);
}

/* A listening socket with backlog on an ephemeral port of 127.0.0.1,
 * not accepting yet (lead_accepting()). */
static void
lead_open(struct lead *ld, klog_loop_t *loop, int answer_ms, int backlog)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(a);

	memset(ld, 0, sizeof(*ld));
	ld->loop = loop;
	ld->answer_ms = answer_ms;
	ld->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	assert_true(ld->lfd >= 0);
	assert_int_equal(bind(ld->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(ld->lfd, (struct sockaddr *)&a, &sl), 0);
	assert_int_equal(listen(ld->lfd, backlog), 0);
	snprintf(ld->port, sizeof(ld->port), "%d", ntohs(a.sin_port));
}

static void
lead_accepting(struct lead *ld)
{
	assert_int_equal(klog_loop_watch(ld->loop, ld->lfd,
	    KLOG_LOOP_READABLE, lead_accept, ld), 0);
}

static void
lead_close(struct lead *ld)
{
	for (int i = 0; i < ld->n; i++) {
		klog_loop_timer_stop(ld->loop, &ld->peers[i].answer);
		if (ld->peers[i].fd >= 0) {
			klog_loop_watch(ld->loop, ld->peers[i].fd, 0, NULL,
			    NULL);
			close(ld->peers[i].fd);
		}
	}
	if (ld->lfd >= 0) {
		klog_loop_watch(ld->loop, ld->lfd, 0, NULL, NULL);
		close(ld->lfd);
	}
	ld->lfd = -1;
	ld->n = 0;
}

/* ---- fixture ---- */

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	klog_core_config_t cc = {
		.default_partitions = 1,
		.auto_create = 1,
		.max_message_bytes = 1 << 20,
		.log = { capture, f, KLOG_LEVEL_DEBUG },
		.broker_id = 1,
		.replica_lag_ms = LAG_MS,
	};
	klog_logger_t log = { capture, f, KLOG_LEVEL_DEBUG };
	klog_store_config_t sc;
	klog_err_t err = { 0 };
	int rc;

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "fetcher"));
	klog_store_config_default(&sc);
	sc.data_dir = f->dir;
	if ((rc = klog_store_open(&sc, &f->store, &err)) < 0)
		fail_msg("store: %s", klog_err_text(&err, rc));
	assert_int_equal(klog_loop_create(&f->loop), 0);
	if ((rc = klog_core_new(f->loop, f->store, &cc, &f->core, &err)) < 0)
		fail_msg("core: %s", klog_err_text(&err, rc));
	assert_int_equal(klog_fetcher_new(f->loop, f->core, 1, NULL, &log,
	    &f->fetcher, &err), 0);
	klog_core_set_replication(f->core, LAG_MS, NULL, NULL,
	    klog_fetcher_flushed, f->fetcher);
	klog_loop_set_before_sleep(f->loop, before_sleep, f);
	klog_loop_set_wake(f->loop, on_wake, f);
	f->ld.lfd = -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	klog_err_t err = { 0 };

	klog_fetcher_free(f->fetcher);
	lead_close(&f->ld);
	klog_core_free(f->core);
	assert_int_equal(klog_store_close(f->store, 1, &err), 0);
	klog_loop_free(f->loop);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* ---- helpers ---- */

/* Follow partition 0 of "t" as broker 1, from broker 2: the fake. */
static void
follow(struct fx *f)
{
	klog_client_addr_t addr = { "127.0.0.1", "", NULL };
	klog_err_t err = { 0 };
	klog_core_part_t *p;

	snprintf(addr.port, sizeof(addr.port), "%s", f->ld.port);
	assert_int_equal(klog_core_follow(f->core, "t", 0, 1, EPOCH, 2, &err),
	    0);
	assert_non_null(p = klog_core_rpart(f->core, "t", 0));
	assert_int_equal(klog_fetcher_follow(f->fetcher, p, 2, EPOCH, &addr),
	    0);
}

/* Run the loop until done(f) or bound_ms pass; whether done.  Notes the
 * longest iteration: nothing may hold the loop up. */
static int
run(struct fx *f, int64_t bound_ms, int (*done)(struct fx *))
{
	int64_t end = klog_loop_now_ms() + bound_ms, t0, gap;

	while (done == NULL || !done(f)) {
		t0 = klog_loop_now_ms();
		if (t0 >= end)
			return 0;
		assert_true(klog_loop_run_once(f->loop, 20) >= 0);
		gap = klog_loop_now_ms() - t0;
		if (gap > f->max_gap)
			f->max_gap = gap;
	}
	return 1;
}

static int
fetched(struct fx *f)
{
	return f->ld.n > 0 && f->ld.peers[f->ld.n - 1].first_fetch != 0;
}

static int
second(struct fx *f)
{
	return f->ld.n >= 2;
}

static int
third(struct fx *f)
{
	return f->ld.n >= 3;
}

/* Lines of the log at level holding needle. */
static int
count_lines(struct fx *f, const char *level, const char *needle)
{
	char want[32];
	int n = 0;

	snprintf(want, sizeof(want), "%s: ", level);
	for (const char *l = f->logs; *l != '\0'; ) {
		const char *nl = strchr(l, '\n');
		size_t len = nl != NULL ? (size_t)(nl - l) : strlen(l);
		const char *hit = strstr(l, needle);

		if (strncmp(l, want, strlen(want)) == 0 && hit != NULL &&
		    hit < l + len)
			n++;
		l += len + (nl != NULL);
	}
	return n;
}

/* ---- tests ---- */

/*
 * A leader that takes the fetch and never answers: the fetcher gives up
 * on it after the long poll and a margin, closes and connects again at
 * once; one warning for the run of them.
 */
static void
test_stalled_leader(void **state)
{
	struct fx *f = *state;
	klog_fetcher_stats_t st;
	int64_t t0, dt;

	lead_open(&f->ld, f->loop, -1, 16);
	lead_accepting(&f->ld);
	follow(f);
	assert_true(run(f, 2000, fetched));
	t0 = f->ld.peers[0].first_fetch;
	if (!run(f, 6000, second))
		fail_msg("no second connection 6 s after the first fetch");
	dt = f->ld.peers[1].accepted - t0;
	print_message("stalled leader: reconnected %lld ms after the fetch\n",
	    (long long)dt);
	/* Not before the long poll could have been answered. */
	assert_true(dt >= 1400 && dt <= 2500);
	assert_true(f->ld.peers[0].closed != 0);
	assert_true(run(f, 3000, third));
	klog_fetcher_stats(f->fetcher, &st);
	assert_int_equal(st.fetch_timeouts, 2);
	assert_int_equal(st.connect_timeouts, 0);
	assert_int_equal(count_lines(f, "warn", "no answer in 1500 ms"), 1);
}

/*
 * A leader that answers every long poll, late but within the margin: the
 * one connection is kept.
 */
static void
test_answered_long_polls_kept(void **state)
{
	struct fx *f = *state;
	klog_fetcher_stats_t st;

	lead_open(&f->ld, f->loop, 900, 16);
	lead_accepting(&f->ld);
	follow(f);
	run(f, 4000, NULL);
	assert_int_equal(f->ld.n, 1);
	assert_true(f->ld.fetches >= 4);
	klog_fetcher_stats(f->fetcher, &st);
	assert_int_equal(st.fetch_timeouts + st.connect_timeouts, 0);
	assert_int_equal(count_lines(f, "warn", ""), 0);
}

/*
 * A leader whose SYNs are dropped (its accept queue is full, as a cut
 * network drops them): the connect gives up after its deadline and starts
 * afresh, without holding the loop; once the leader takes connections
 * again, the next attempt gets there within a second.
 */
static void
test_connect_deadline(void **state)
{
	struct fx *f = *state;
	struct sockaddr_in a = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	klog_fetcher_stats_t st;
	int filler, c;
	int64_t heal, dt;

	/* Backlog 0: one connection fills the queue, then SYNs are dropped. */
	lead_open(&f->ld, f->loop, -1, 0);
	a.sin_port = htons((uint16_t)atoi(f->ld.port));
	assert_true((filler = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(connect(filler, (struct sockaddr *)&a, sizeof(a)),
	    0);
	follow(f);
	run(f, 2500, NULL);
	print_message("connect deadline: longest loop iteration %lld ms\n",
	    (long long)f->max_gap);
	assert_true(f->max_gap < 300);
	/* One attempt a second: given up at 1 and 2 s. */
	klog_fetcher_stats(f->fetcher, &st);
	assert_in_range(st.connect_timeouts, 2, 3);
	/* The heal: the queue emptied, the leader accepting. */
	assert_true((c = accept(f->ld.lfd, NULL, NULL)) >= 0);
	close(c);
	close(filler);
	heal = klog_loop_now_ms();
	lead_accepting(&f->ld);
	if (!run(f, 4000, fetched))
		fail_msg("no fetch 4 s after the heal");
	dt = f->ld.peers[0].first_fetch - heal;
	print_message("connect deadline: fetched %lld ms after the heal\n",
	    (long long)dt);
	assert_true(dt <= 1500);
	assert_true(f->max_gap < 300);
	klog_fetcher_stats(f->fetcher, &st);
	assert_int_equal(st.fetch_timeouts, 0);
	assert_int_equal(count_lines(f, "warn", "no connection in 1000 ms"),
	    1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stalled_leader, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_answered_long_polls_kept,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_deadline, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
