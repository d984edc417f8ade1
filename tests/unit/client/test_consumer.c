#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fx/fakebroker.h"
#include "fx/fakeleader.h"
#include "klog/base/clock.h"
#include "klog/client/consumer.h"

typedef struct got {
	int n;
	char payload[64][32];
	int32_t partition[64];
	int64_t offset[64], next[64];
	int batches, notices;
	char notice[512];
} got_t;

static klog_discovery_t *
discover(fake_t *f)
{
	klog_discovery_t *d = NULL;
	klog_err_t err = { 0 };

	assert_int_equal(klog_discovery_open_static(f->addr, 1000, &d, &err),
	    0);
	return d;
}

static void
config(klog_consumer_config_t *cfg)
{
	klog_consumer_config_default(cfg);
	cfg->topic = "t";
	cfg->start = KLOG_CONSUMER_BEGINNING;
	cfg->exit_at_end = 1;
	cfg->max_wait_ms = 100;
}

/* Consume until DONE (or an error, returned), recording what came. */
static int
run(klog_consumer_t *c, got_t *g, klog_err_t *err)
{
	klog_consumer_msg_t m;
	int rc;

	memset(g, 0, sizeof(*g));
	for (;;) {
		rc = klog_consumer_next(c, &m, err);
		if (rc < 0 || rc == KLOG_CONSUMER_DONE)
			return rc;
		if (rc == KLOG_CONSUMER_BATCH) {
			g->batches++;
			continue;
		}
		if (rc == KLOG_CONSUMER_NOTICE) {
			g->notices++;
			snprintf(g->notice, sizeof(g->notice), "%s", err->msg);
			continue;
		}
		assert_true(g->n < 64);
		assert_true(m.payload_len < 32);
		memcpy(g->payload[g->n], m.payload, m.payload_len);
		g->payload[g->n][m.payload_len] = '\0';
		g->partition[g->n] = m.partition;
		g->offset[g->n] = m.offset;
		g->next[g->n] = m.next_offset;
		g->n++;
	}
}

static int
open_run(fake_t *f, const klog_consumer_config_t *cfg, got_t *g,
    klog_err_t *err, int64_t *positions)
{
	klog_discovery_t *d = discover(f);
	klog_consumer_t *c = NULL;
	int rc;

	if ((rc = klog_consumer_open(d, cfg, &c, err)) == 0) {
		rc = run(c, g, err);
		for (size_t i = 0; positions && i < klog_consumer_count(c); i++)
			positions[i] = klog_consumer_position(c, i);
	}
	klog_consumer_close(c);
	klog_discovery_close(d);
	return rc;
}

static void
test_all_partitions_to_end(void **state)
{
	fake_t *f = fake_start(3, 0);
	klog_consumer_config_t cfg;
	klog_err_t err = { 0 };
	int64_t pos[3];
	got_t g;
	int per[3] = { 0 };
	int64_t at[3] = { 0 };

	(void)state;
	for (int i = 0; i < 30; i++) {
		char p[16];

		snprintf(p, sizeof(p), "m%d", i);
		fake_append(f, i % 3, p);
	}
	config(&cfg);
	assert_int_equal(open_run(f, &cfg, &g, &err, pos),
	    KLOG_CONSUMER_DONE);
	assert_int_equal(g.n, 30);
	for (int i = 0; i < 30; i++) {
		int k, p = g.partition[i];

		assert_int_equal(sscanf(g.payload[i], "m%d", &k), 1);
		assert_int_equal(k % 3, p);
		/* In order within a partition: m0, m3, m6... */
		assert_int_equal(k / 3, per[p]);
		assert_int_equal(g.offset[i], at[p]);
		at[p] += 9 + (int64_t)strlen(g.payload[i]);
		assert_int_equal(g.next[i], at[p]);
		per[p]++;
	}
	for (int i = 0; i < 3; i++) {
		assert_int_equal(per[i], 10);
		assert_int_equal(pos[i], (int64_t)f->log[i].len);
	}
	fake_stop(f);
}

/* Replies cut inside entries, and an entry bigger than the fetch size. */
static void
test_partial_and_growing(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_consumer_config_t cfg;
	klog_err_t err = { 0 };
	static char big[200001];
	got_t g;

	(void)state;
	fake_append(f, 0, "first message");
	memset(big, 'b', sizeof(big) - 1);
	fake_append(f, 0, big);
	fake_append(f, 0, "after the big one");
	f->fetch_cap = 100000000;
	config(&cfg);
	cfg.fetch_bytes = 16;          /* floored at 64 KiB by the consumer */
	cfg.fetch_max_bytes = 1 << 20;
	/* Payloads above 31 bytes are not recorded by run(): count only. */
	memset(&g, 0, sizeof(g));
	{
		klog_discovery_t *d = discover(f);
		klog_consumer_t *c = NULL;
		klog_consumer_msg_t m;
		int rc, n = 0;
		size_t lens[3] = { 13, 200000, 17 };

		assert_int_equal(klog_consumer_open(d, &cfg, &c, &err), 0);
		while ((rc = klog_consumer_next(c, &m, &err)) !=
		    KLOG_CONSUMER_DONE) {
			assert_true(rc >= 0);
			if (rc == KLOG_CONSUMER_MSG)
				assert_int_equal(m.payload_len, lens[n++]);
		}
		assert_int_equal(n, 3);
		assert_true(f->max_fetch_asked >= 200013);
		klog_consumer_close(c);
		klog_discovery_close(d);
	}
	/* Over the limit: a clear error. */
	cfg.fetch_max_bytes = 100000;
	cfg.fetch_bytes = 65536;
	assert_int_equal(open_run(f, &cfg, &g, &err, NULL), -KLOG_ETOOBIG);
	assert_non_null(strstr(err.msg, "topic \"t\" partition 0: offset 22: "
	    "a 200005-byte message is over the fetch limit"));
	/* Replies cut every 7 bytes: small entries still all arrive. */
	f->fetch_cap = 7;
	cfg.fetch_max_bytes = 1 << 20;
	klog_buf_reset(&f->log[0]);
	for (int i = 0; i < 20; i++)
		fake_append(f, 0, "0123456789");
	f->fetch_cap = 40;
	assert_int_equal(open_run(f, &cfg, &g, &err, NULL),
	    KLOG_CONSUMER_DONE);
	assert_int_equal(g.n, 20);
	fake_stop(f);
}

static void
test_crc_mismatch(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_consumer_config_t cfg;
	klog_err_t err = { 0 };
	got_t g;

	(void)state;
	fake_append(f, 0, "good");
	fake_append(f, 0, "flipped");
	f->log[0].data[13 + 9] ^= 0x20;
	config(&cfg);
	assert_int_equal(open_run(f, &cfg, &g, &err, NULL), -KLOG_ECORRUPT);
	assert_string_equal(err.msg,
	    "topic \"t\" partition 0: offset 13: crc mismatch");
	assert_int_equal(g.n, 1);
	fake_stop(f);
}

/*
 * Answers of 1 MiB, cut inside entries: every message comes once, in
 * order, at its offset; a flipped byte three answers in is reported at its
 * own offset, after every message before it.
 */
static int
count_all(fake_t *f, size_t *n, int64_t *last_next, klog_err_t *err)
{
	klog_discovery_t *d = discover(f);
	klog_consumer_config_t cfg;
	klog_consumer_t *c = NULL;
	klog_consumer_msg_t m;
	int64_t at = 0;
	char want[128];
	int rc;

	config(&cfg);
	cfg.fetch_bytes = 1 << 20;
	*n = 0;
	if ((rc = klog_consumer_open(d, &cfg, &c, err)) == 0) {
		while ((rc = klog_consumer_next(c, &m, err)) >= 0 &&
		    rc != KLOG_CONSUMER_DONE) {
			if (rc != KLOG_CONSUMER_MSG)
				continue;
			snprintf(want, sizeof(want), "%099zu", *n);
			assert_int_equal(m.offset, at);
			assert_int_equal(m.payload_len, 99);
			assert_memory_equal(m.payload, want, 99);
			at = m.next_offset;
			(*n)++;
		}
	}
	*last_next = at;
	klog_consumer_close(c);
	klog_discovery_close(d);
	return rc;
}

static void
test_large_answers(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_err_t err = { 0 };
	int64_t end, bad = 108 * 30000;
	char p[128], want[96];
	size_t n;

	(void)state;
	for (int i = 0; i < 50000; i++) {
		snprintf(p, sizeof(p), "%099d", i);
		fake_append(f, 0, p);
	}
	assert_int_equal(count_all(f, &n, &end, &err), KLOG_CONSUMER_DONE);
	assert_int_equal(n, 50000);
	assert_int_equal(end, (int64_t)f->log[0].len);
	f->log[0].data[bad + 20] ^= 0x01;
	assert_int_equal(count_all(f, &n, &end, &err), -KLOG_ECORRUPT);
	snprintf(want, sizeof(want), "topic \"t\" partition 0: offset %lld: "
	    "crc mismatch", (long long)bad);
	assert_string_equal(err.msg, want);
	assert_int_equal(n, 30000);
	fake_stop(f);
}

static void
test_start_offsets(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_consumer_config_t cfg;
	klog_consumer_pos_t start = { 0, 13 };
	klog_err_t err = { 0 };
	int64_t pos[1];
	got_t g;

	(void)state;
	fake_append(f, 0, "zero");
	fake_append(f, 0, "one");
	fake_append(f, 0, "two");
	config(&cfg);
	/* A byte offset that starts a message. */
	cfg.start = 13;
	assert_int_equal(open_run(f, &cfg, &g, &err, pos), KLOG_CONSUMER_DONE);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.payload[0], "one");
	/* One that does not. */
	cfg.start = 14;
	assert_int_equal(open_run(f, &cfg, &g, &err, NULL),
	    -KLOG_ENOTBOUNDARY);
	assert_string_equal(err.msg, "topic \"t\" partition 0: offset 14 is "
	    "not a message boundary");
	/* A per-partition override wins over the default. */
	cfg.start = KLOG_CONSUMER_BEGINNING;
	cfg.starts = &start;
	cfg.nstarts = 1;
	assert_int_equal(open_run(f, &cfg, &g, &err, NULL),
	    KLOG_CONSUMER_DONE);
	assert_int_equal(g.n, 2);
	cfg.starts = NULL;
	cfg.nstarts = 0;
	/* The end: nothing, at once; position is the end. */
	cfg.start = KLOG_CONSUMER_END;
	assert_int_equal(open_run(f, &cfg, &g, &err, pos), KLOG_CONSUMER_DONE);
	assert_int_equal(g.n, 0);
	assert_int_equal(pos[0], 37);
	/* A time before every segment: the beginning. */
	cfg.start = KLOG_CONSUMER_TIME;
	cfg.start_time_ms = 1;
	assert_int_equal(open_run(f, &cfg, &g, &err, NULL),
	    KLOG_CONSUMER_DONE);
	assert_int_equal(g.n, 3);
	fake_stop(f);
}

static void
test_out_of_range(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_consumer_config_t cfg;
	klog_err_t err = { 0 };
	got_t g;

	(void)state;
	fake_append(f, 0, "zero");
	fake_append(f, 0, "one");
	config(&cfg);
	cfg.exit_at_end = 0;
	cfg.start = 5000;
	cfg.reset = KLOG_CONSUMER_RESET_FAIL;
	assert_int_equal(open_run(f, &cfg, &g, &err, NULL), -KLOG_ERANGE);
	assert_string_equal(err.msg, "offset 5000 is past the end (25) of t/0");
	/* Checked at open, so the same with exit_at_end. */
	cfg.exit_at_end = 1;
	assert_int_equal(open_run(f, &cfg, &g, &err, NULL), -KLOG_ERANGE);
	assert_string_equal(err.msg, "offset 5000 is past the end (25) of t/0");
	cfg.exit_at_end = 0;
	/* Earliest: a notice, then from the start, then following. */
	{
		klog_discovery_t *d = discover(f);
		klog_consumer_t *c = NULL;
		klog_consumer_msg_t m;
		int rc, n = 0, notices = 0;

		cfg.reset = KLOG_CONSUMER_RESET_EARLIEST;
		assert_int_equal(klog_consumer_open(d, &cfg, &c, &err), 0);
		while (n < 3) {
			rc = klog_consumer_next(c, &m, &err);
			assert_true(rc >= 0);
			notices += rc == KLOG_CONSUMER_NOTICE;
			if (rc == KLOG_CONSUMER_NOTICE)
				assert_non_null(strstr(err.msg,
				    "going on from 0"));
			if (rc != KLOG_CONSUMER_MSG)
				continue;
			if (++n == 2)
				fake_append(f, 0, "two, later");
		}
		assert_int_equal(notices, 1);
		assert_int_equal(m.offset, 25);
		assert_int_equal(klog_consumer_position(c, 0), 44);
		klog_consumer_close(c);
		klog_discovery_close(d);
	}
	fake_stop(f);
}

/* Messages inside a gzip wrapper carry the wrapper's offset. */
static void
test_gzip_offsets(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_consumer_config_t cfg;
	klog_err_t err = { 0 };
	uint8_t set[64], *w = NULL;
	size_t n = 0, wlen = 0;
	int64_t pos[1];
	got_t g;

	(void)state;
	fake_append(f, 0, "plain");
	n += klog_entry_encode(set + n, "a", 1);
	n += klog_entry_encode(set + n, "bb", 2);
	n += klog_entry_encode(set + n, "ccc", 3);
	assert_int_equal(klog_gzip_wrap(set, n, 6, &w, &wlen), 0);
	klog_buf_put(&f->log[0], w, wlen);
	free(w);
	config(&cfg);
	assert_int_equal(open_run(f, &cfg, &g, &err, pos), KLOG_CONSUMER_DONE);
	assert_int_equal(g.n, 4);
	assert_string_equal(g.payload[1], "a");
	assert_string_equal(g.payload[3], "ccc");
	for (int i = 1; i < 4; i++)
		assert_int_equal(g.offset[i], 14);
	assert_int_equal(g.next[1], 14);
	assert_int_equal(g.next[2], 14);
	assert_int_equal(g.next[3], 14 + (int64_t)wlen);
	assert_int_equal(pos[0], 14 + (int64_t)wlen);
	fake_stop(f);
}

static void
test_unknown(void **state)
{
	fake_t *f = fake_start(2, 0);
	klog_consumer_config_t cfg;
	klog_err_t err = { 0 };
	int32_t part = 2;
	got_t g;

	(void)state;
	config(&cfg);
	cfg.topic = "nope";
	assert_int_equal(open_run(f, &cfg, &g, &err, NULL), -KLOG_ENOTOPIC);
	assert_string_equal(err.msg, "topic \"nope\" does not exist");
	cfg.topic = "t";
	cfg.partitions = &part;
	cfg.npartitions = 1;
	assert_int_equal(open_run(f, &cfg, &g, &err, NULL),
	    -KLOG_ENOPARTITION);
	assert_string_equal(err.msg,
	    "topic \"t\" has 2 partitions, no partition 2");
	fake_stop(f);
}

/* What klog_consumer_list() reported, stopping after stop_after. */
typedef struct listed {
	int n, stop_after;
	char line[8][64];
} listed_t;

static int
list_one(void *arg, const char *topic, int32_t index, int64_t lo,
    int64_t hi)
{
	listed_t *l = arg;

	assert_true(l->n < 8);
	snprintf(l->line[l->n++], sizeof(l->line[0]), "%s %d %lld %lld",
	    topic, (int)index, (long long)lo, (long long)hi);
	return l->n == l->stop_after;
}

static void
test_list(void **state)
{
	fake_t *f = fake_start(2, 0);
	klog_discovery_t *d = discover(f);
	klog_err_t err = { 0 };
	listed_t l = { 0 };
	char want[32];

	(void)state;
	fake_append(f, 1, "abc");
	snprintf(want, sizeof(want), "t 1 0 %zu", klog_entry_size(3));
	assert_int_equal(klog_consumer_list(d, NULL, 1000, list_one, &l,
	    &err), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.line[0], "t 0 0 0");
	assert_string_equal(l.line[1], want);
	memset(&l, 0, sizeof(l));
	assert_int_equal(klog_consumer_list(d, "t", 1000, list_one, &l,
	    &err), 0);
	assert_int_equal(l.n, 2);
	/* The callback stops it, and that is no error. */
	memset(&l, 0, sizeof(l));
	l.stop_after = 1;
	assert_int_equal(klog_consumer_list(d, "t", 1000, list_one, &l,
	    &err), 0);
	assert_int_equal(l.n, 1);
	memset(&l, 0, sizeof(l));
	assert_int_equal(klog_consumer_list(d, "nope", 1000, list_one, &l,
	    &err), -KLOG_ENOTOPIC);
	assert_string_equal(err.msg, "topic \"nope\" does not exist");
	assert_int_equal(l.n, 0);
	/* A broker gone: the first failed question ends it. */
	fake_stop(f);
	assert_int_equal(klog_consumer_list(d, "t", 1000, list_one, &l,
	    &err), -KLOG_ECONN);
	assert_non_null(strstr(err.msg, "Connection refused"));
	klog_discovery_close(d);
}

/* Two replicas of topic "t": the same messages "<p>-<i>" at the same
 * offsets. */
static void
replicas(fake_t **a, fake_t **b, int parts, int n)
{
	char text[16];

	*a = fake_start(parts, 0);
	*b = fake_start(parts, 0);
	for (int p = 0; p < parts; p++)
		for (int i = 0; i < n; i++) {
			snprintf(text, sizeof(text), "%d-%d", p, i);
			fake_append(*a, p, text);
			fake_append(*b, p, text);
		}
}

/* Every message "<p>-<i>" once, each partition in order. */
static void
expect_all_once(const got_t *g, int parts, int n)
{
	int next[8] = { 0 }, p, i;

	assert_int_equal(g->n, parts * n);
	for (int k = 0; k < g->n; k++) {
		assert_int_equal(sscanf(g->payload[k], "%d-%d", &p, &i), 2);
		assert_int_equal(p, g->partition[k]);
		assert_int_equal(i, next[p]);
		next[p]++;
	}
}

/*
 * The leader moves from a to b mid-read: a answers NOT_LEADER from its
 * third fetch on; the consumer locates the partitions again (after an
 * election: two locates without a leader) and goes on at b from the
 * position it had, nothing lost or repeated.
 */
static void
test_follows_leader(void **state)
{
	klog_consumer_config_t cfg;
	klog_consumer_t *c = NULL;
	klog_err_t err = { 0 };
	fake_t *a, *b;
	fakeleader_t fl;
	got_t g;

	(void)state;
	replicas(&a, &b, 2, 10);
	a->fetch_cap = 30;
	a->fetch_error = KLOG_WIRE_NOT_LEADER;
	a->fetch_error_from = 3;
	fakeleader_init(&fl, a->addr, b->addr, 2);
	fl.next_leader = 1;
	fl.leaderless = 2;
	config(&cfg);
	assert_int_equal(klog_consumer_open(&fl.base, &cfg, &c, &err), 0);
	assert_int_equal(run(c, &g, &err), KLOG_CONSUMER_DONE);
	expect_all_once(&g, 2, 10);
	assert_true(fl.invalidations >= 1);
	assert_true(b->fetches > 0);
	klog_consumer_close(c);
	fake_stop(a);
	fake_stop(b);
}

/* The leader's broker goes away: the partitions are located again too. */
static void
test_lost_leader(void **state)
{
	klog_consumer_config_t cfg;
	klog_consumer_t *c = NULL;
	klog_err_t err = { 0 };
	fake_t *a, *b;
	fakeleader_t fl;
	got_t g;

	(void)state;
	replicas(&a, &b, 2, 10);
	fakeleader_init(&fl, a->addr, b->addr, 2);
	fl.next_leader = 1;
	config(&cfg);
	assert_int_equal(klog_consumer_open(&fl.base, &cfg, &c, &err), 0);
	fake_stop(a);
	assert_int_equal(run(c, &g, &err), KLOG_CONSUMER_DONE);
	expect_all_once(&g, 2, 10);
	klog_consumer_close(c);
	fake_stop(b);
}

/* No leader for retry_for: given up with -KLOG_ENOTLEADER. */
static void
test_no_leader_gives_up(void **state)
{
	klog_consumer_config_t cfg;
	klog_consumer_t *c = NULL;
	klog_err_t err = { 0 };
	int64_t t0 = klog_clock_mono_ms();
	fake_t *a, *b;
	fakeleader_t fl;
	got_t g;

	(void)state;
	replicas(&a, &b, 1, 3);
	a->fetch_error = KLOG_WIRE_NOT_LEADER;
	a->fetch_error_from = 1;
	fakeleader_init(&fl, a->addr, b->addr, 1);
	fl.next_leader = 1;
	fl.leaderless = 1000000;
	config(&cfg);
	cfg.retry_for_ms = 300;
	assert_int_equal(klog_consumer_open(&fl.base, &cfg, &c, &err), 0);
	assert_int_equal(run(c, &g, &err), -KLOG_ENOTLEADER);
	assert_non_null(strstr(err.msg, "gave up after"));
	assert_true(klog_clock_mono_ms() - t0 < 3000);
	assert_int_equal(g.n, 0);
	klog_consumer_close(c);
	fake_stop(a);
	fake_stop(b);
}

/*
 * A follower of two partitions whose leader moves from a to b, where
 * partition 0 then has no leader while partition 1 is read on at b, whose
 * answers (empty ones too) keep coming: partition 0 is given up after
 * retry_for all the same, since only its own leader's answer ends its
 * loss (issue 27).
 */
static void
test_no_leader_gives_up_beside_another(void **state)
{
	klog_consumer_config_t cfg;
	klog_consumer_msg_t m;
	klog_consumer_t *c = NULL;
	klog_err_t err = { 0 };
	int64_t t0;
	fake_t *a, *b;
	fakeleader_t fl;
	int rc, n = 0;

	(void)state;
	replicas(&a, &b, 2, 3);
	a->fetch_error = KLOG_WIRE_NOT_LEADER;
	a->fetch_error_from = 1;
	fakeleader_init(&fl, a->addr, b->addr, 2);
	fl.next_leader = 1;
	config(&cfg);
	cfg.exit_at_end = 0;
	cfg.retry_for_ms = 300;
	assert_int_equal(klog_consumer_open(&fl.base, &cfg, &c, &err), 0);
	fl.no_leader_part = 0;
	t0 = klog_clock_mono_ms();
	while ((rc = klog_consumer_next(c, &m, &err)) >= 0 &&
	    klog_clock_mono_ms() - t0 < 3000)
		if (rc == KLOG_CONSUMER_MSG) {
			assert_int_equal(m.partition, 1);
			n++;
		}
	assert_int_equal(rc, -KLOG_ENOTLEADER);
	assert_non_null(strstr(err.msg, "partition 0: no leader"));
	assert_non_null(strstr(err.msg, "gave up after"));
	assert_int_equal(n, 3);
	assert_true(b->fetches > 3);
	klog_consumer_close(c);
	fake_stop(a);
	fake_stop(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_partitions_to_end),
		cmocka_unit_test(test_partial_and_growing),
		cmocka_unit_test(test_crc_mismatch),
		cmocka_unit_test(test_large_answers),
		cmocka_unit_test(test_start_offsets),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_gzip_offsets),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_follows_leader),
		cmocka_unit_test(test_lost_leader),
		cmocka_unit_test(test_no_leader_gives_up),
		cmocka_unit_test(test_no_leader_gives_up_beside_another),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
