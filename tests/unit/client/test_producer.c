#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fx/fakebroker.h"
#include "fx/fakeleader.h"
#include "klog/base/clock.h"
#include "klog/client/producer.h"

/* The documented partitioner: FNV-1a 32-bit, standard test vectors. */
static void
test_hash_known_values(void **state)
{
	(void)state;
	assert_int_equal(klog_producer_hash("", 0), 0x811c9dc5u);
	assert_int_equal(klog_producer_hash("a", 1), 0xe40c292cu);
	assert_int_equal(klog_producer_hash("foobar", 6), 0xbf9cf968u);
	/* So "foobar" goes to partition 0xbf9cf968 % 3 == 1 of 3. */
	assert_int_equal(klog_producer_hash("foobar", 6) % 3, 1);
	assert_int_equal(klog_producer_hash("\0", 1), 0x050c5d1fu);
}

typedef struct seen {
	int count;
	int per_part[FAKE_MAX_PARTS];
	int last[FAKE_MAX_PARTS];  /* last sequence number per partition */
	int in_order;
	int *hits;                 /* hits[i]: times record i was stored */
} seen_t;

/* Walk the fake's log of every partition; payloads are "rec <i>". */
static void
collect(fake_t *f, int nrecords, seen_t *s)
{
	klog_iter_t it;
	klog_msg_t m;
	int rc, i;

	memset(s, 0, sizeof(*s));
	s->in_order = 1;
	s->hits = calloc((size_t)nrecords, sizeof(int));
	for (int p = 0; p < FAKE_MAX_PARTS; p++) {
		s->last[p] = -1;
		klog_iter_init(&it, f->log[p].data, f->log[p].len, 0,
		    KLOG_ITER_DEEP, 0);
		while ((rc = klog_iter_next(&it, &m)) == 1) {
			assert_true(m.valid);
			assert_int_equal(sscanf((const char *)m.payload,
			    "rec %d", &i), 1);
			assert_true(i >= 0 && i < nrecords);
			s->hits[i]++;
			s->count++;
			s->per_part[p]++;
			/* Resends may repeat a tail, never go back further. */
			if (i < s->last[p] && s->hits[i] == 1)
				s->in_order = 0;
			s->last[p] = i;
		}
		assert_int_equal(rc, 0);
		klog_iter_free(&it);
	}
}

static klog_discovery_t *
discover(fake_t *f)
{
	klog_discovery_t *d = NULL;
	klog_err_t err = { 0 };

	assert_int_equal(klog_discovery_open_static(f->addr, 1000, &d, &err),
	    0);
	return d;
}

/* Send n records "rec <i>" (with key "k<i % keys>" if keys > 0). */
static void
produce(klog_producer_t *p, int n, int keys)
{
	klog_err_t err = { 0 };
	char rec[64], key[16];

	for (int i = 0; i < n; i++) {
		int len = snprintf(rec, sizeof(rec), "rec %d", i);
		int klen = snprintf(key, sizeof(key), "k%d", keys ? i % keys :
		    0);

		assert_int_equal(klog_producer_send(p, rec, (size_t)len + 1,
		    keys ? key : NULL, (size_t)klen), 0);
		while (klog_producer_busy(p))
			assert_true(klog_producer_poll(p, -1, 100, &err) >= 0);
	}
	assert_int_equal(klog_producer_drain(p, &err), 0);
}

static void
config(klog_producer_config_t *cfg, uint32_t batch)
{
	klog_producer_config_default(cfg);
	cfg->topic = "t";
	cfg->batch_records = batch;
	cfg->max_inflight = 4;
	cfg->retry_for_ms = 3000;
}

static void
test_spread_in_order(void **state)
{
	fake_t *f = fake_start(3, 0);
	klog_discovery_t *d = discover(f);
	klog_producer_config_t cfg;
	klog_producer_stats_t st;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	seen_t s;

	(void)state;
	config(&cfg, 7);
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	assert_int_equal(klog_producer_partitions(p), 3);
	produce(p, 2000, 0);
	klog_producer_stats(p, &st);
	assert_int_equal(st.records, 2000);
	assert_int_equal(st.acked, 2000);
	assert_int_equal(st.failed, 0);
	assert_true(klog_producer_done(p));
	collect(f, 2000, &s);
	assert_int_equal(s.count, 2000);
	assert_true(s.in_order);
	/* Batches of 7 went round robin: every partition got some. */
	for (int i = 0; i < 3; i++)
		assert_true(s.per_part[i] > 600);
	free(s.hits);
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

static void
test_keys(void **state)
{
	fake_t *f = fake_start(4, 0);
	klog_discovery_t *d = discover(f);
	klog_producer_config_t cfg;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	klog_iter_t it;
	klog_msg_t m;
	char key[16];
	int i;

	(void)state;
	config(&cfg, 50);
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	produce(p, 1000, 10);
	for (int part = 0; part < 4; part++) {
		klog_iter_init(&it, f->log[part].data, f->log[part].len, 0, 0,
		    0);
		while (klog_iter_next(&it, &m) == 1) {
			sscanf((const char *)m.payload, "rec %d", &i);
			snprintf(key, sizeof(key), "k%d", i % 10);
			assert_int_equal(klog_producer_hash(key, strlen(key)) %
			    4, part);
		}
		klog_iter_free(&it);
	}
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

static void
test_creates_topic(void **state)
{
	fake_t *f = fake_start(0, 5);
	klog_discovery_t *d = discover(f);
	klog_producer_config_t cfg;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };

	(void)state;
	config(&cfg, 10);
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	assert_int_equal(klog_producer_partitions(p), 5);
	klog_producer_close(p);
	/* A topic the broker will not create. */
	cfg.topic = "u";
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err),
	    -KLOG_ENOTOPIC);
	cfg.topic = "t";
	cfg.partition = 5;
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err),
	    -KLOG_ENOPARTITION);
	klog_discovery_close(d);
	fake_stop(f);
}

/* A connection lost before or after an append: everything arrives. */
static void
check_resend(int drop_before, int drop_after)
{
	fake_t *f = fake_start(2, 0);
	klog_discovery_t *d = discover(f);
	klog_producer_config_t cfg;
	klog_producer_stats_t st;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	seen_t s;

	f->drop_produce_at = drop_before;
	f->drop_after_append_at = drop_after;
	config(&cfg, 10);
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	produce(p, 500, 0);
	klog_producer_stats(p, &st);
	assert_int_equal(st.acked, 500);
	assert_int_equal(st.reconnects, 1);
	assert_true(st.resent >= 1);
	collect(f, 500, &s);
	for (int i = 0; i < 500; i++)
		assert_true(s.hits[i] >= 1);
	/* Lost before the append: no duplicates; after: one batch twice. */
	if (drop_before)
		assert_int_equal(s.count, 500);
	else
		assert_int_equal(s.count, 510);
	assert_true(s.in_order);
	free(s.hits);
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

static void
test_resend_after_drop(void **state)
{
	(void)state;
	check_resend(5, 0);
	check_resend(0, 5);
}

static void
test_acks_none_and_gzip(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_discovery_t *d = discover(f);
	klog_producer_config_t cfg;
	klog_producer_stats_t st;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	klog_iter_t it;
	klog_msg_t m;
	int wrappers = 0;
	seen_t s;

	(void)state;
	config(&cfg, 100);
	cfg.codec = KLOG_CODEC_GZIP;
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	produce(p, 1000, 0);
	klog_producer_close(p);
	/* Ten requests of 100 records: ten gzip wrappers. */
	klog_iter_init(&it, f->log[0].data, f->log[0].len, 0, 0, 0);
	while (klog_iter_next(&it, &m) == 1) {
		assert_int_equal(m.codec, KLOG_CODEC_GZIP);
		wrappers++;
	}
	klog_iter_free(&it);
	assert_int_equal(wrappers, 10);
	cfg.codec = KLOG_CODEC_NONE;
	cfg.acks = KLOG_ACKS_NONE;
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	produce(p, 1000, 0);
	klog_producer_stats(p, &st);
	assert_int_equal(st.acked, 1000);
	klog_producer_close(p);
	/* Written is not yet stored: wait for the fake to catch up. */
	for (int i = 0; i < 200 && f->produces < 20; i++)
		usleep(10000);
	pthread_mutex_lock(&f->mu);
	collect(f, 1000, &s);
	pthread_mutex_unlock(&f->mu);
	assert_int_equal(s.count, 2000);
	free(s.hits);
	klog_discovery_close(d);
	fake_stop(f);
}

static void
test_too_big(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_discovery_t *d = discover(f);
	klog_producer_config_t cfg;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	static char big[1001];

	(void)state;
	config(&cfg, 10);
	cfg.max_message = 1000;
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	assert_int_equal(klog_producer_send(p, big, 1001, NULL, 0),
	    -KLOG_ETOOBIG);
	assert_int_equal(klog_producer_send(p, big, 1000, NULL, 0), 0);
	assert_int_equal(klog_producer_drain(p, &err), 0);
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

/* What the done callback was told, in order. */
struct dones {
	uint64_t first[64];
	uint32_t records[64];
	int ok[64];
	int n;
};

static void
on_done(void *arg, const klog_producer_done_t *dn)
{
	struct dones *d = arg;

	if (d->n < 64) {
		d->first[d->n] = dn->first;
		d->records[d->n] = dn->records;
		d->ok[d->n++] = dn->ok;
	}
}

/*
 * done: every request once, its send numbers consecutive without keys
 * and, all together, each record once; a refused one with ok 0.
 */
static void
test_done(void **state)
{
	fake_t *f = fake_start(3, 0);
	klog_discovery_t *d = discover(f);
	klog_producer_config_t cfg;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	struct dones got = { 0 };
	int seen[41] = { 0 }, refused = 0;

	(void)state;
	config(&cfg, 7);
	cfg.done = on_done;
	cfg.arg = &got;
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(klog_producer_send(p, "x", 1, NULL, 0), 0);
	assert_int_equal(got.n, 0);
	assert_int_equal(klog_producer_drain(p, &err), 0);
	assert_int_equal(got.n, 2);
	/* The next request (records 11..17) is refused. */
	pthread_mutex_lock(&f->mu);
	f->produce_error = KLOG_WIRE_INVALID_MESSAGE;
	f->produce_error_from = f->produces + 1;
	f->produce_error_count = 1;
	pthread_mutex_unlock(&f->mu);
	produce(p, 30, 0);
	for (int i = 0; i < got.n; i++) {
		for (uint32_t k = 0; k < got.records[i]; k++)
			seen[got.first[i] + k]++;
		if (!got.ok[i]) {
			assert_int_equal(got.first[i], 11);
			assert_int_equal(got.records[i], 7);
			refused++;
		}
	}
	assert_int_equal(refused, 1);
	for (int i = 1; i <= 40; i++)
		assert_int_equal(seen[i], 1);
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

/* The broker goes away for good: the producer gives up in time. */
static void
test_gives_up(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_discovery_t *d = discover(f);
	klog_producer_config_t cfg;
	klog_producer_stats_t st;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	int64_t t0;
	int rc;

	(void)state;
	config(&cfg, 10);
	cfg.retry_for_ms = 300;
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	fake_stop(f);
	assert_int_equal(klog_producer_send(p, "x", 1, NULL, 0), 0);
	t0 = klog_clock_mono_ms();
	rc = klog_producer_drain(p, &err);
	assert_int_equal(rc, -KLOG_ECONN);
	assert_non_null(strstr(err.msg, "gave up after"));
	assert_true(klog_clock_mono_ms() - t0 < 3000);
	klog_producer_stats(p, &st);
	assert_int_equal(st.acked, 0);
	klog_producer_close(p);
	klog_discovery_close(d);
}

/*
 * The order a retry keeps: requests pipelined behind a refused one may have
 * been appended before it is sent again, so a record's first copy can come
 * early; its last copy is in order (records i < j of a partition: i's last
 * copy before j's).
 */
static int
last_copies_in_order(fake_t *f, int nrecords)
{
	int *last = calloc((size_t)nrecords, sizeof(int));
	int *part = calloc((size_t)nrecords, sizeof(int));
	int seq = 0, ok = 1, prev[FAKE_MAX_PARTS];
	klog_iter_t it;
	klog_msg_t m;
	int i;

	for (int p = 0; p < FAKE_MAX_PARTS; p++) {
		prev[p] = -1;
		klog_iter_init(&it, f->log[p].data, f->log[p].len, 0,
		    KLOG_ITER_DEEP, 0);
		while (klog_iter_next(&it, &m) == 1) {
			assert_int_equal(sscanf((const char *)m.payload,
			    "rec %d", &i), 1);
			last[i] = ++seq;
			part[i] = p;
		}
		klog_iter_free(&it);
	}
	for (i = 0; i < nrecords; i++) {
		if (last[i] == 0)
			continue;
		if (prev[part[i]] >= 0 && last[prev[part[i]]] > last[i])
			ok = 0;
		prev[part[i]] = i;
	}
	free(last);
	free(part);
	return ok;
}

/* Both fakes' logs, partition by partition, a's before b's: what a reader
 * following the leader from a to b sees. */
static void
collect_two(fake_t *a, fake_t *b, int nrecords, seen_t *s)
{
	static fake_t both;

	for (int p = 0; p < FAKE_MAX_PARTS; p++) {
		klog_buf_init(&both.log[p]);
		klog_buf_put(&both.log[p], a->log[p].data, a->log[p].len);
		klog_buf_put(&both.log[p], b->log[p].data, b->log[p].len);
	}
	collect(&both, nrecords, s);
	for (int p = 0; p < FAKE_MAX_PARTS; p++)
		klog_buf_free(&both.log[p]);
}

/*
 * The leader of a replicated topic moves from a to b: a answers NOT_LEADER
 * from its 6th produce on, the discovery names b (after two locates
 * without a leader: an election) once asked again.  Every record ends up
 * acknowledged, none refused, each partition in order.
 */
static void
test_follows_leader(void **state)
{
	fake_t *a = fake_start(2, 0), *b = fake_start(2, 0);
	klog_producer_config_t cfg;
	klog_producer_stats_t st;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	fakeleader_t fl;
	seen_t s;

	(void)state;
	fakeleader_init(&fl, a->addr, b->addr, 2);
	fl.next_leader = 1;
	fl.leaderless = 2;
	a->produce_error = KLOG_WIRE_NOT_LEADER;
	a->produce_error_from = 6;
	a->produce_error_count = -1;
	config(&cfg, 10);
	assert_int_equal(klog_producer_open(&fl.base, &cfg, &p, &err), 0);
	produce(p, 500, 0);
	klog_producer_stats(p, &st);
	assert_int_equal(st.acked, 500);
	assert_int_equal(st.failed, 0);
	assert_null(klog_producer_error(p));
	assert_true(fl.invalidations >= 1);
	assert_true(b->produces > 0);
	collect_two(a, b, 500, &s);
	for (int i = 0; i < 500; i++)
		assert_true(s.hits[i] >= 1);
	assert_int_equal(s.count, 500);  /* NOT_LEADER appends nothing */
	assert_true(s.in_order);
	free(s.hits);
	klog_producer_close(p);
	fake_stop(a);
	fake_stop(b);
}

/* NOT_ENOUGH_REPLICAS is waited out on the same broker, as Kafka's
 * producer retries it. */
static void
test_not_enough_replicas_retried(void **state)
{
	fake_t *f = fake_start(2, 0);
	klog_discovery_t *d = discover(f);
	klog_producer_config_t cfg;
	klog_producer_stats_t st;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	seen_t s;

	(void)state;
	f->produce_error = KLOG_WIRE_NOT_ENOUGH_REPLICAS;
	f->produce_error_from = 3;
	f->produce_error_count = 4;
	config(&cfg, 10);
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	produce(p, 300, 0);
	klog_producer_stats(p, &st);
	assert_int_equal(st.acked, 300);
	assert_int_equal(st.failed, 0);
	collect(f, 300, &s);
	for (int i = 0; i < 300; i++)
		assert_true(s.hits[i] >= 1);
	assert_true(last_copies_in_order(f, 300));
	free(s.hits);
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

/* Too few replicas for good, or a leader never elected: the producer
 * gives up after retry_for with the cause's code. */
static void
check_gives_up(int16_t wire, int leaderless, int want)
{
	fake_t *a = fake_start(1, 0), *b = fake_start(1, 0);
	klog_producer_config_t cfg;
	klog_producer_stats_t st;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	fakeleader_t fl;
	int64_t t0;

	fakeleader_init(&fl, a->addr, b->addr, 1);
	fl.next_leader = leaderless ? 1 : 0;
	fl.leaderless = leaderless;
	a->produce_error = wire;
	a->produce_error_from = 1;
	a->produce_error_count = -1;
	config(&cfg, 10);
	cfg.retry_for_ms = 300;
	assert_int_equal(klog_producer_open(&fl.base, &cfg, &p, &err), 0);
	assert_int_equal(klog_producer_send(p, "x", 1, NULL, 0), 0);
	t0 = klog_clock_mono_ms();
	assert_int_equal(klog_producer_drain(p, &err), want);
	assert_non_null(strstr(err.msg, "gave up after"));
	assert_true(klog_clock_mono_ms() - t0 < 3000);
	klog_producer_stats(p, &st);
	assert_int_equal(st.acked, 0);
	klog_producer_close(p);
	fake_stop(a);
	fake_stop(b);
}

static void
test_retryable_gives_up(void **state)
{
	(void)state;
	check_gives_up(KLOG_WIRE_NOT_ENOUGH_REPLICAS, 0, -KLOG_ENOREPLICAS);
	check_gives_up(KLOG_WIRE_NOT_LEADER, 1000000, -KLOG_ENOTLEADER);
}

/*
 * Partition 1 has no leader: the producer opens anyway, keyless records go
 * to partition 0 only (nothing waits, so nothing fails), and a keyed
 * record for partition 1 waits until its leader is there.
 */
static void
test_partition_without_leader(void **state)
{
	fake_t *a = fake_start(2, 0);
	klog_producer_config_t cfg;
	klog_producer_stats_t st;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	fakeleader_t fl;
	char key[16];
	int i = 0;
	seen_t s;

	(void)state;
	fakeleader_init(&fl, a->addr, NULL, 2);
	fl.no_leader_part = 1;
	config(&cfg, 10);
	assert_int_equal(klog_producer_open(&fl.base, &cfg, &p, &err), 0);
	produce(p, 100, 0);
	collect(a, 100, &s);
	assert_int_equal(s.per_part[0], 100);
	free(s.hits);
	while (klog_producer_hash(key, (size_t)snprintf(key, sizeof(key),
	    "k%d", i)) % 2 != 1)
		i++;
	assert_int_equal(klog_producer_send(p, "late", 5, key, strlen(key)),
	    0);
	klog_producer_flush(p);
	for (int k = 0; k < 5; k++)
		assert_true(klog_producer_poll(p, -1, 20, &err) >= 0);
	assert_false(klog_producer_done(p));
	fl.no_leader_part = -1;
	assert_int_equal(klog_producer_drain(p, &err), 0);
	klog_producer_stats(p, &st);
	assert_int_equal(st.acked, 101);
	assert_int_equal(a->log[1].len, klog_entry_size(5));
	klog_producer_close(p);
	fake_stop(a);
}

/* A 0.7 cluster shrinking: indexes 0-1 on a and 2-3 on b, then a gone
 * and 0-1 on b. */
typedef struct shrink {
	klog_discovery_t base;
	fake_t *a, *b;
	int gone;
} shrink_t;

static int
sh_partitions(klog_discovery_t *d, const char *topic, klog_err_t *err)
{
	(void)topic;
	(void)err;
	return ((shrink_t *)d)->gone ? 2 : 4;
}

static int
sh_locate(klog_discovery_t *d, const char *topic, int index,
    klog_discovery_part_t *out, klog_err_t *err)
{
	shrink_t *s = (shrink_t *)d;
	fake_t *f = s->gone || index >= 2 ? s->b : s->a;

	(void)topic;
	(void)err;
	memset(out, 0, sizeof(*out));
	snprintf(out->addr.host, sizeof(out->addr.host), "127.0.0.1");
	snprintf(out->addr.port, sizeof(out->addr.port), "%d", f->port);
	out->partition = s->gone ? index : index % 2;
	out->broker_id = f == s->a ? 1 : 2;
	return 0;
}

static void
sh_nothing(klog_discovery_t *d)
{
	(void)d;
}

static const klog_discovery_ops_t shrink_ops = {
	.partitions = sh_partitions,
	.locate = sh_locate,
	.invalidate = sh_nothing,
	.close = sh_nothing,
};

/*
 * Requests queued on a broker that stays, for indexes past the new count,
 * are acknowledged after the refresh: the per-index retry state is not
 * indexed past its end (ASan caught that write when it was).
 */
static void
test_refresh_shrinks(void **state)
{
	shrink_t sh = { .base = { .ops = &shrink_ops } };
	klog_producer_config_t cfg;
	klog_producer_stats_t st;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	char rec[16];

	(void)state;
	sh.a = fake_start(2, 0);
	sh.b = fake_start(2, 0);
	config(&cfg, 1);
	assert_int_equal(klog_producer_open(&sh.base, &cfg, &p, &err), 0);
	for (int i = 0; i < 8; i++) {
		int len = snprintf(rec, sizeof(rec), "rec %d", i);

		assert_int_equal(klog_producer_send(p, rec, (size_t)len + 1,
		    NULL, 0), 0);
	}
	sh.gone = 1;
	assert_int_equal(klog_producer_refresh(p, &err), 0);
	assert_int_equal(klog_producer_drain(p, &err), 0);
	klog_producer_stats(p, &st);
	assert_int_equal(st.acked, 8);
	klog_producer_close(p);
	fake_stop(sh.a);
	fake_stop(sh.b);
}

/* One magic-2 entry of a log at *pos, checked as klog-format(5) says it
 * is built: its records' keys "k<i>", values "rec <i>", headers
 * "h"="v<i>" and (stamped) timestamps 1000 + i, i counting from *next. */
static void
check_entry(const klog_buf_t *log, size_t *pos, int stamped, int *next)
{
	const uint8_t *e = log->data + *pos, *body = e + 10, *rp;
	uint32_t len = klog_be32(e);
	size_t blen = len - 6, left;
	klog_batch_t b;
	klog_record_t r;
	klog_header_t h;
	char want[32];
	size_t hp = 0;

	assert_int_equal(e[4], KLOG_MAGIC2);
	assert_int_equal(klog_be32(e + 6), klog_crc32c(0, body, blen));
	assert_int_equal(klog_batch_read(body, blen, &b), 0);
	assert_int_equal(e[5], b.attributes & 0xff);
	assert_int_equal(b.attributes, 0);
	assert_int_equal(b.last_offset_delta, (int32_t)len + 3);
	assert_int_equal(b.producer_id, KLOG_NO_PRODUCER);
	assert_int_equal(b.first_timestamp, stamped ? 1000 + *next :
	    KLOG_NO_TIMESTAMP);
	rp = body + KLOG_BATCH_BODY_HEADER;
	left = blen - KLOG_BATCH_BODY_HEADER;
	for (int32_t i = 0; i < b.count; i++, (*next)++) {
		assert_int_equal(klog_record_read(rp, left, &r), 0);
		assert_int_equal(r.offset_delta, i);
		assert_int_equal(b.first_timestamp + (stamped ?
		    r.timestamp_delta : 0), stamped ? 1000 + *next : -1);
		snprintf(want, sizeof(want), "k%d", *next);
		assert_int_equal(r.key_len, strlen(want));
		assert_memory_equal(r.key, want, strlen(want));
		snprintf(want, sizeof(want), "rec %d", *next);
		assert_int_equal(r.value_len, strlen(want));
		assert_memory_equal(r.value, want, strlen(want));
		assert_int_equal(r.header_count, 1);
		hp = 0;
		assert_int_equal(klog_record_header_next(r.headers,
		    r.headers_len, &hp, &h), 1);
		snprintf(want, sizeof(want), "v%d", *next);
		assert_memory_equal(h.key, "h", 1);
		assert_int_equal(h.value_len, strlen(want));
		assert_memory_equal(h.value, want, strlen(want));
		rp += r.size;
		left -= r.size;
	}
	assert_int_equal(left, 0);
	*pos += 4 + len;
}

/* Send record i as klog-produce -K -H h=v<i> [--timestamp] would. */
static void
send_keyed(klog_producer_t *p, int i, int stamped)
{
	char key[16], val[32], hv[16];
	klog_header_t h = { (const uint8_t *)"h", 1, (const uint8_t *)hv, 0 };
	klog_producer_rec_t r = { val, 0, key, 0, stamped ? 1000 + i :
	    KLOG_NO_TIMESTAMP, &h, 1 };

	r.key_len = (size_t)snprintf(key, sizeof(key), "k%d", i);
	r.value_len = (size_t)snprintf(val, sizeof(val), "rec %d", i);
	h.value_len = snprintf(hv, sizeof(hv), "v%d", i);
	assert_int_equal(klog_producer_send_record(p, &r), 0);
}

/*
 * Records with keys, timestamps and headers: one magic-2 entry per
 * request; a plain record between them stays a 9-byte-overhead magic-0
 * message in a request of its own, and records without timestamps start
 * a batch of their own too.
 */
static void
test_records_as_magic2(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_discovery_t *d = discover(f);
	klog_producer_rec_t plain = { "plain", 5, NULL, 0, KLOG_NO_TIMESTAMP,
	    NULL, 0 };
	klog_producer_config_t cfg;
	klog_producer_stats_t st;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	size_t pos = 0;
	int next = 0, i;

	(void)state;
	config(&cfg, 10);
	cfg.linger_ms = 60000;
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	for (i = 0; i < 25; i++)
		send_keyed(p, i, 1);
	assert_int_equal(klog_producer_send_record(p, &plain), 0);
	for (; i < 30; i++)
		send_keyed(p, i, 0);
	assert_int_equal(klog_producer_drain(p, &err), 0);
	klog_producer_stats(p, &st);
	assert_int_equal(st.acked, 31);
	assert_int_equal(st.requests, 5);
	check_entry(&f->log[0], &pos, 1, &next);   /* 0-9 */
	check_entry(&f->log[0], &pos, 1, &next);   /* 10-19 */
	check_entry(&f->log[0], &pos, 1, &next);   /* 20-24 */
	assert_int_equal(next, 25);
	assert_int_equal(klog_be32(f->log[0].data + pos), 5 + 5);
	assert_int_equal(f->log[0].data[pos + 4], 0);
	pos += klog_entry_size(5);
	check_entry(&f->log[0], &pos, 0, &next);   /* 25-29 */
	assert_int_equal(pos, f->log[0].len);
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

/* A record that cannot fit an entry under max_message is refused whole;
 * a null value (a tombstone) is a record, never a plain message. */
static void
test_record_limits(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_discovery_t *d = discover(f);
	static char big[1200];
	klog_producer_rec_t r = { big, 990, "k", 1, KLOG_NO_TIMESTAMP, NULL,
	    0 };
	klog_producer_rec_t tomb = { NULL, 0, "k", 1, KLOG_NO_TIMESTAMP,
	    NULL, 0 };
	klog_producer_config_t cfg;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	klog_batch_t b;
	klog_record_t rd;

	(void)state;
	config(&cfg, 10);
	cfg.max_message = 1000;
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	assert_int_equal(klog_producer_send_record(p, &r), -KLOG_ETOOBIG);
	r.value_len = 900;
	assert_int_equal(klog_producer_send_record(p, &r), 0);
	assert_int_equal(klog_producer_send_record(p, &tomb), 0);
	assert_int_equal(klog_producer_drain(p, &err), 0);
	/* One entry of the two, the second a null value. */
	assert_int_equal(4 + klog_be32(f->log[0].data), f->log[0].len);
	assert_int_equal(klog_batch_read(f->log[0].data + 10,
	    f->log[0].len - 10, &b), 0);
	assert_int_equal(b.count, 2);
	assert_int_equal(klog_record_read(f->log[0].data + 50,
	    f->log[0].len - 50, &rd), 0);
	assert_int_equal(rd.value_len, 900);
	assert_int_equal(klog_record_read(f->log[0].data + 50 + rd.size,
	    f->log[0].len - 50 - rd.size, &rd), 0);
	assert_null(rd.value);
	assert_int_equal(rd.value_len, -1);
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

/* A record over the batch size but under max_message goes alone, as a
 * plain one does: the batch size is no record's limit. */
static void
test_record_over_batch_bytes(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_discovery_t *d = discover(f);
	static char big[900];
	klog_producer_rec_t r = { big, sizeof(big), "k", 1, 7, NULL, 0 };
	klog_producer_config_t cfg;
	klog_producer_stats_t st;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };

	(void)state;
	config(&cfg, 10);
	cfg.max_message = 1000;
	cfg.batch_bytes = 600;
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	assert_int_equal(klog_producer_send_record(p, &r), 0);
	assert_int_equal(klog_producer_send_record(p, &r), 0);
	assert_int_equal(klog_producer_drain(p, &err), 0);
	klog_producer_stats(p, &st);
	assert_int_equal(st.acked, 2);
	assert_int_equal(st.requests, 2);
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

/* -K's lines without a key join an open batch of keyed records (as
 * records without a key) instead of cutting it; with none open, they
 * are plain messages. */
static void
test_unkeyed_join_records(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_discovery_t *d = discover(f);
	klog_producer_rec_t plain = { "plain", 5, NULL, 0, KLOG_NO_TIMESTAMP,
	    NULL, 0 };
	klog_producer_config_t cfg;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	klog_iter_t it;
	klog_msg_t m;
	int n = 0;

	(void)state;
	config(&cfg, 100);
	cfg.linger_ms = 60000;
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
	assert_int_equal(klog_producer_send_record(p, &plain), 0);
	klog_producer_flush(p);
	for (int i = 0; i < 6; i++)
		if (i % 2)
			assert_int_equal(klog_producer_send_record(p, &plain),
			    0);
		else
			send_keyed(p, i, 0);
	assert_int_equal(klog_producer_drain(p, &err), 0);
	/* The first alone: plain.  Then one entry of six records. */
	assert_int_equal(f->log[0].data[4], 0);
	assert_int_equal(f->log[0].len, klog_entry_size(5) + 4 +
	    klog_be32(f->log[0].data + klog_entry_size(5)));
	klog_iter_init(&it, f->log[0].data, f->log[0].len, 0, KLOG_ITER_DEEP,
	    0);
	while (klog_iter_next(&it, &m) == 1) {
		if (n > 0)
			assert_int_equal(m.magic, KLOG_MAGIC2);
		assert_int_equal(m.key == NULL, n == 0 || n % 2 == 0);
		n++;
	}
	klog_iter_free(&it);
	assert_int_equal(n, 7);
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

/*
 * Each codec: a batch's records compressed as one block in one magic-2
 * entry, read back whole by the iterator (keys, values, timestamps,
 * headers), all at the entry's offset and the last one's next offset
 * past it.
 */
static void
test_records_compressed(void **state)
{
	static const int codecs[] = { KLOG_CODEC_GZIP, KLOG_CODEC_SNAPPY,
	    KLOG_CODEC_LZ4, KLOG_CODEC_ZSTD };
	klog_producer_config_t cfg;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };
	klog_iter_t it;
	klog_msg_t m;
	char want[32];
	int i;

	(void)state;
	for (size_t c = 0; c < sizeof(codecs) / sizeof(codecs[0]); c++) {
		fake_t *f = fake_start(1, 0);
		klog_discovery_t *d = discover(f);

		config(&cfg, 100);
		cfg.codec = codecs[c];
		assert_int_equal(klog_producer_open(d, &cfg, &p, &err), 0);
		for (i = 0; i < 100; i++)
			send_keyed(p, i, 1);
		assert_int_equal(klog_producer_drain(p, &err), 0);
		/* One entry, compressed: far under 100 uncompressed records. */
		assert_int_equal(4 + klog_be32(f->log[0].data), f->log[0].len);
		assert_int_equal(f->log[0].data[5] & KLOG_BATCH_CODEC_MASK,
		    codecs[c]);
		assert_true(f->log[0].len < 100 * 20);
		klog_iter_init(&it, f->log[0].data, f->log[0].len, 0,
		    KLOG_ITER_DEEP, 0);
		for (i = 0; klog_iter_next(&it, &m) == 1; i++) {
			assert_true(m.valid);
			assert_int_equal(m.offset, 0);
			assert_int_equal(m.next_offset, i == 99 ?
			    (int64_t)f->log[0].len : 0);
			assert_int_equal(m.timestamp, 1000 + i);
			snprintf(want, sizeof(want), "k%d", i);
			assert_int_equal(m.key_len, strlen(want));
			assert_memory_equal(m.key, want, strlen(want));
			snprintf(want, sizeof(want), "rec %d", i);
			assert_int_equal(m.payload_len, strlen(want));
			assert_memory_equal(m.payload, want, strlen(want));
			assert_int_equal(m.header_count, 1);
		}
		klog_iter_free(&it);
		assert_int_equal(i, 100);
		klog_producer_close(p);
		klog_discovery_close(d);
		fake_stop(f);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_known_values),
		cmocka_unit_test(test_records_as_magic2),
		cmocka_unit_test(test_record_limits),
		cmocka_unit_test(test_record_over_batch_bytes),
		cmocka_unit_test(test_records_compressed),
		cmocka_unit_test(test_unkeyed_join_records),
		cmocka_unit_test(test_spread_in_order),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_creates_topic),
		cmocka_unit_test(test_resend_after_drop),
		cmocka_unit_test(test_acks_none_and_gzip),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_done),
		cmocka_unit_test(test_gives_up),
		cmocka_unit_test(test_follows_leader),
		cmocka_unit_test(test_not_enough_replicas_retried),
		cmocka_unit_test(test_retryable_gives_up),
		cmocka_unit_test(test_refresh_shrinks),
		cmocka_unit_test(test_partition_without_leader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
