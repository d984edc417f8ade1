/*
 * Unit tests for the time index (lib/storage/timeindex.c) and the log's
 * time lookup (lib/storage/logtime.c): the running max and its entries,
 * records out of time order, LogAppendTime, segments with no timestamp,
 * an index built by appends or at the first lookup after an open, and
 * logs recovered, truncated and retained; the indexer's pass over a log
 * (complete, stopped, segments deleted meanwhile) and its reads' care of
 * the page cache.  Every lookup is checked against
 * a walk of what was written, record by record.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <sys/mman.h>
#include <sys/uio.h>

#define DIRFX_NAME "timeindex"
#include "fx/dirfx.h"
#include "fx/logfx.h"

#include "klog/base/buf.h"
#include "klog/storage/record.h"
#include "klog/storage/timeindex.h"

#define MAXREC 4

/* What was written, for the oracle: one entry each. */
struct written {
	int64_t offset;              /* -1: a plain line */
	int n;
	int64_t ts[MAXREC];          /* each record's, as a reader sees it */
};

struct book {
	struct written w[8192];
	size_t n;
};

/* A magic-2 entry of n records with timestamps ts into out; lat >= 0 makes
 * it LogAppendTime at lat, as a broker stamps it. */
static void
make_batch(klog_buf_t *out, const int64_t *ts, int n, int64_t lat)
{
	klog_batch_builder_t bb;
	size_t start = out->len;
	char value[64];

	klog_batch_begin(&bb, out, ts[0], KLOG_NO_PRODUCER, -1, -1);
	for (int i = 0; i < n; i++) {
		int len = snprintf(value, sizeof(value), "record %lld",
		    (long long)ts[i]);

		klog_batch_add(&bb, out, &(klog_record_in_t){ value,
		    (size_t)len, NULL, 0, ts[i], NULL, 0 });
	}
	assert_int_equal(klog_batch_end(&bb, out), 0);
	if (lat >= 0) {
		uint8_t *body = out->data + start + KLOG_LENGTH_SIZE +
		    KLOG_MAGIC2_HEADER;
		klog_batch_t b;

		assert_int_equal(klog_batch_read(body, KLOG_BATCH_BODY_HEADER,
		    &b), 0);
		b.attributes |= KLOG_BATCH_LOG_APPEND_TIME;
		b.max_timestamp = lat;
		klog_batch_write(body, &b);
		klog_batch_seal(out->data + start, out->len - start);
	}
}

/* Append one batch to log and note it in bk. */
static void
put_batch(klog_log_t *log, struct book *bk, const int64_t *ts, int n,
    int64_t lat)
{
	struct written *w = &bk->w[bk->n++];
	klog_err_t err = { 0 };
	klog_buf_t b;
	int r;

	klog_buf_init(&b);
	make_batch(&b, ts, n, lat);
	r = klog_log_append(log, b.data, b.len, 1, &w->offset, &err);
	if (r != 0)
		fail_msg("append: %s", klog_err_text(&err, r));
	klog_buf_free(&b);
	w->n = n;
	for (int i = 0; i < n; i++)
		w->ts[i] = lat >= 0 ? lat : ts[i];
}

static void
put_line(klog_log_t *log, struct book *bk, uint32_t m)
{
	struct written *w = &bk->w[bk->n++];

	w->offset = append(log, m, 1, 100);
	w->n = 0;
}

/* The oracle: the first record at or after t in log order, among the
 * entries at or after start and below end. */
static klog_log_time_t
expect(const struct book *bk, int64_t t, int64_t start, int64_t end)
{
	int stamped = 0;

	for (size_t i = 0; i < bk->n; i++) {
		const struct written *w = &bk->w[i];

		if (w->offset < start || w->offset >= end)
			continue;
		stamped |= w->n > 0;
		for (int j = 0; j < w->n; j++)
			if (w->ts[j] >= t)
				return (klog_log_time_t){ KLOG_LOG_TIME_FOUND,
				    w->offset, w->offset + j, w->ts[j] };
	}
	return (klog_log_time_t){ stamped ? KLOG_LOG_TIME_NONE :
	    KLOG_LOG_TIME_UNSTAMPED, -1, -1, -1 };
}

static void
check(klog_log_t *log, const struct book *bk, int64_t t)
{
	klog_log_time_t want = expect(bk, t, klog_log_start(log),
	    klog_log_flushed_end(log)), got;
	klog_err_t err = { 0 };
	int r = klog_log_find_time(log, t, &got, &err);

	if (r != 0)
		fail_msg("find %lld: %s", (long long)t, klog_err_text(&err, r));
	if (got.status != want.status || (want.status == KLOG_LOG_TIME_FOUND &&
	    (got.offset != want.offset || got.kafka_offset !=
	    want.kafka_offset || got.timestamp != want.timestamp)))
		fail_msg("time %lld: got %d %lld %lld %lld, want %d %lld %lld "
		    "%lld", (long long)t, got.status, (long long)got.offset,
		    (long long)got.kafka_offset, (long long)got.timestamp,
		    want.status, (long long)want.offset,
		    (long long)want.kafka_offset, (long long)want.timestamp);
}

/* Every time from below the least to past the largest, stepping. */
static void
check_all(klog_log_t *log, const struct book *bk, int64_t lo, int64_t hi,
    int64_t step)
{
	for (int64_t t = lo; t <= hi; t += step)
		check(log, bk, t);
}

/* ---- the index alone ---- */

/* An entry of length 46 + pad: magic 2 with maxTimestamp ts, or magic 0
 * when ts is -2. */
static size_t
fake_entry(uint8_t *p, int64_t ts, size_t pad)
{
	size_t len = KLOG_MAGIC2_HEADER + KLOG_BATCH_BODY_HEADER + pad;

	memset(p, 0, KLOG_LENGTH_SIZE + len);
	klog_put_be32(p, (uint32_t)len);
	p[KLOG_LENGTH_SIZE] = ts == -2 ? 0 : KLOG_MAGIC2;
	for (int i = 0; i < 8; i++)
		p[KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER + KLOG_BATCH_MAX_TS_AT +
		    i] = (uint8_t)((uint64_t)ts >> (56 - 8 * i));
	return KLOG_LENGTH_SIZE + len;
}

static void
test_running_max(void **state)
{
	static const int64_t ts[] = { -2, -2, 50, 40, 60, 60, 60, 60, 55, 90,
	    -2, 100 };
	klog_timeindex_t ti;
	uint8_t buf[4096];
	size_t off = 0, used;

	(void)state;
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
		off += fake_entry(buf + off, ts[i], 54);  /* 104 bytes each */
	klog_timeindex_init(&ti, 200);
	/* Cut anywhere: the whole entries before it are noted. */
	assert_int_equal(klog_timeindex_note(&ti, buf, 150, 0, &used), 0);
	assert_int_equal(used, 104);
	assert_int_equal(klog_timeindex_note(&ti, buf + 104, off - 104, 0,
	    &used), 0);
	assert_int_equal(used, 0);          /* not where the index ends */
	assert_int_equal(klog_timeindex_note(&ti, buf + 104, off - 104, 104,
	    &used), 0);
	assert_int_equal(used, off - 104);
	assert_int_equal(ti.built, (int64_t)off);
	assert_int_equal(ti.max_ts, 100);
	/* Entries at 208 (-1), 416 (50), 624 (60: 832 moves it), 1040 (90). */
	assert_int_equal(ti.n, 4);
	assert_int_equal(ti.v[0].ts, -1);
	assert_int_equal(ti.v[0].pos, 208);
	assert_int_equal(ti.v[2].ts, 60);
	assert_int_equal(ti.v[2].pos, 832);
	assert_int_equal(ti.v[3].ts, 90);
	assert_int_equal(klog_timeindex_seek(&ti, -1), 0);
	assert_int_equal(klog_timeindex_seek(&ti, 0), 208);
	assert_int_equal(klog_timeindex_seek(&ti, 50), 208);
	assert_int_equal(klog_timeindex_seek(&ti, 51), 416);
	assert_int_equal(klog_timeindex_seek(&ti, 61), 832);
	assert_int_equal(klog_timeindex_seek(&ti, 1000), 1040);
	/* A cut keeps the entries before it and notes again from the last. */
	klog_timeindex_cut(&ti, 900);
	assert_int_equal(ti.n, 3);
	assert_int_equal(ti.built, 832);
	assert_int_equal(ti.max_ts, 60);
	assert_int_equal(klog_timeindex_note(&ti, buf + 832, off - 832, 832,
	    &used), 0);
	assert_int_equal(ti.max_ts, 100);
	assert_int_equal(ti.n, 4);
	assert_int_equal(ti.v[3].pos, 1040);
	assert_int_equal(klog_timeindex_bytes(&ti), 64 * 16);
	klog_timeindex_trim(&ti);
	assert_int_equal(klog_timeindex_bytes(&ti), 4 * 16);
	assert_int_equal(klog_timeindex_seek(&ti, 61), 832);
	klog_timeindex_free(&ti);
}

static void
test_impossible_length(void **state)
{
	klog_timeindex_t ti;
	uint8_t buf[256];
	size_t off, used;

	(void)state;
	off = fake_entry(buf, 7, 10);
	klog_put_be32(buf + off, 2);
	klog_timeindex_init(&ti, 64);
	assert_int_equal(klog_timeindex_note(&ti, buf, off + 60, 0, &used),
	    -KLOG_ECORRUPT);
	assert_int_equal(used, off);
	assert_int_equal(ti.max_ts, 7);
	klog_timeindex_free(&ti);
}

/* ---- the log's lookup ---- */

static struct book *
book_new(void)
{
	struct book *bk = calloc(1, sizeof(*bk));

	assert_non_null(bk);
	return bk;
}

/* n batches of 1 to 4 records, timestamps wandering up from 1000 with
 * every seventh batch reaching back. */
static void
fill(klog_log_t *log, struct book *bk, int n, uint32_t seed)
{
	int64_t ts[MAXREC], base = 1000;

	for (int i = 0; i < n; i++) {
		int k = 1 + (int)((seed + (uint32_t)i) % MAXREC);

		for (int j = 0; j < k; j++)
			ts[j] = base + ((seed * 7 + (uint32_t)(i + j) * 13) %
			    50) - (i % 7 == 0 ? 400 : 0);
		put_batch(log, bk, ts, k, -1);
		base += 10;
	}
}

static void
test_out_of_order(void **state)
{
	struct fixture *f = *state;
	struct book *bk = book_new();
	klog_log_t *log = open_log(f->dir, 0, 0);

	/* About 120 KiB: the index has entries, and the lookups use them. */
	fill(log, bk, 2000, 3);
	/* Kept by the appends, before any lookup. */
	assert_int_equal(klog_log_time_unindexed(log), 0);
	assert_true(klog_log_time_index_bytes(log) > 0);
	flush(log);
	check_all(log, bk, 0, 22000, 97);
	check(log, bk, INT64_MAX);
	klog_log_close(log);
	/* Opened again: the index is built by the first lookup. */
	log = open_log(f->dir, 0, 0);
	assert_int_equal(klog_log_time_unindexed(log), klog_log_end(log));
	check_all(log, bk, 0, 22000, 89);
	assert_int_equal(klog_log_time_unindexed(log), 0);
	assert_true(klog_log_time_index_bytes(log) > 0);
	assert_true(klog_log_time_index_bytes(log) < 4096);
	klog_log_close(log);
	free(bk);
}

static void
test_log_append_time(void **state)
{
	struct fixture *f = *state;
	struct book *bk = book_new();
	klog_log_t *log = open_log(f->dir, 0, 0);
	int64_t early[] = { 5, 6, 7 }, late[] = { 9000, 9001 };

	put_batch(log, bk, late, 2, -1);
	put_batch(log, bk, early, 3, 20000);
	put_batch(log, bk, late, 2, -1);
	flush(log);
	check_all(log, bk, 0, 21000, 500);
	check(log, bk, 20000);
	klog_log_close(log);
	free(bk);
}

static void
test_unstamped(void **state)
{
	struct fixture *f = *state;
	struct book *bk = book_new();
	klog_log_t *log = open_log(f->dir, 4096, 0);
	int64_t ts[] = { 3000, 2000 };
	klog_log_time_t t;

	for (uint32_t i = 0; i < 100; i++)
		put_line(log, bk, i);
	flush(log);
	assert_int_equal(klog_log_time_unindexed(log), 0);
	assert_int_equal(klog_log_find_time(log, 0, &t, NULL), 0);
	assert_int_equal(t.status, KLOG_LOG_TIME_UNSTAMPED);
	/* Timestamps after plain lines: the lines are never found. */
	put_batch(log, bk, ts, 2, -1);
	for (uint32_t i = 0; i < 10; i++)
		put_line(log, bk, 100 + i);
	flush(log);
	check_all(log, bk, 0, 4000, 250);
	klog_log_close(log);
	free(bk);
}

/* Half a batch at the end of the newest segment file. */
static void
tear_tail(const char *dir, const int64_t *ts)
{
	klog_segment_info_t info[64];
	char path[PATH_MAX];
	klog_log_t *log = open_log(dir, 64 << 10, 0);
	klog_buf_t b;
	size_t n;
	FILE *fp;

	assert_int_equal(klog_log_segments(log, info, 64, &n), 0);
	assert_true(n > 0 && n <= 64);
	klog_log_close(log);
	seg_file(path, sizeof(path), dir, info[n - 1].base, ".klog");
	klog_buf_init(&b);
	make_batch(&b, ts, 1, -1);
	assert_non_null(fp = fopen(path, "ab"));
	assert_int_equal(fwrite(b.data, 1, b.len / 2, fp), b.len / 2);
	assert_int_equal(fclose(fp), 0);
	klog_buf_free(&b);
}

static void
test_truncated_and_recovered(void **state)
{
	struct fixture *f = *state;
	struct book *bk = book_new();
	klog_log_t *log = open_log(f->dir, 64 << 10, 0);
	int64_t landed, ts[] = { 50000, 60000 }, torn[] = { 70000 };
	klog_err_t err = { 0 };
	size_t keep = 1200;

	fill(log, bk, 2000, 5);
	flush(log);
	check_all(log, bk, 0, 22000, 301);
	/* A follower's cut: everything from batch keep on goes. */
	assert_int_equal(klog_log_truncate(log, bk->w[keep].offset, &landed,
	    &err), 0);
	assert_int_equal(landed, bk->w[keep].offset);
	bk->n = keep;
	check_all(log, bk, 0, 22000, 301);
	put_batch(log, bk, ts, 2, -1);
	flush(log);
	check_all(log, bk, 10000, 61000, 1001);
	klog_log_close(log);
	/* Half a batch past the end, as a crash leaves it: recovery cuts
	 * it, and the lookups never see it. */
	tear_tail(f->dir, torn);
	log = open_log(f->dir, 64 << 10, 1);
	check_all(log, bk, 10000, 71000, 1001);
	assert_true(klog_log_recovered_bytes(log) > 0);
	klog_log_close(log);
	free(bk);
}

static void
test_retained(void **state)
{
	struct fixture *f = *state;
	struct book *bk = book_new();
	klog_log_t *log = open_log(f->dir, 16 << 10, 0);
	klog_err_t err = { 0 };
	char path[PATH_MAX];
	size_t deleted;
	int64_t bytes;

	fill(log, bk, 1000, 11);
	flush(log);
	check_all(log, bk, 0, 12000, 211);
	/* Retention to about half: the lookups start at the log's start. */
	assert_int_equal(klog_log_retain(log, -1, klog_log_size_bytes(log) / 2,
	    0, &deleted, &bytes, &err), 0);
	assert_true(deleted > 0);
	check_all(log, bk, 0, 12000, 211);
	/* A segment klog-retain deleted behind the log is passed over. */
	seg_file(path, sizeof(path), f->dir, klog_log_start(log), ".klog");
	assert_int_equal(unlink(path), 0);
	(void)klog_log_rescan(log, NULL);
	check_all(log, bk, 0, 12000, 211);
	klog_log_close(log);
	free(bk);
}

/* ---- the indexer's pass (klog_log_time_index()) ---- */

/* A pace that stops after stop_after reads (0: never), retains the log
 * to retain bytes after the first if asked (> 0), and counts the calls. */
struct pacer {
	klog_log_t *log;
	int calls, stop_after;
	int64_t retain;
};

static int
pacer(void *arg, const klog_log_index_stats_t *st)
{
	struct pacer *p = arg;
	size_t deleted;
	int64_t bytes;

	assert_true(st->bytes > 0);
	if (++p->calls == 1 && p->retain > 0)
		assert_int_equal(klog_log_retain(p->log, -1, p->retain, 0,
		    &deleted, &bytes, NULL), 0);
	return p->stop_after > 0 && p->calls >= p->stop_after;
}

/* A log of several 16 KiB segments, closed and opened again: no index. */
static klog_log_t *
reopened(const char *dir, struct book *bk, size_t *nsegs)
{
	klog_log_t *log = open_log(dir, 16 << 10, 0);

	fill(log, bk, 1000, 13);
	flush(log);
	klog_log_close(log);
	log = open_log(dir, 16 << 10, 0);
	*nsegs = klog_log_segment_count(log);
	assert_true(*nsegs >= 4);
	assert_int_equal(klog_log_time_unindexed(log), klog_log_end(log));
	return log;
}

static void
test_index_pass(void **state)
{
	struct fixture *f = *state;
	struct book *bk = book_new();
	klog_log_index_stats_t st = { 0 };
	struct pacer p = { 0 };
	klog_err_t err = { 0 };
	size_t nsegs;
	klog_log_t *log = reopened(f->dir, bk, &nsegs);

	p.log = log;
	assert_int_equal(klog_log_time_index(log, pacer, &p, &st, &err), 0);
	assert_int_equal(klog_log_time_unindexed(log), 0);
	assert_int_equal(st.segments, nsegs);
	assert_int_equal(st.bytes, klog_log_end(log));
	assert_int_equal(p.calls, (int)nsegs);  /* a read each: under a MiB */
	check_all(log, bk, 0, 12000, 97);
	/* Again: nothing to read, nothing changed. */
	st = (klog_log_index_stats_t){ 0 };
	assert_int_equal(klog_log_time_index(log, pacer, &p, &st, &err), 0);
	assert_int_equal(st.segments, 0);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(p.calls, (int)nsegs);
	/* Appends after it are noted by the appends themselves. */
	fill(log, bk, 50, 17);
	flush(log);
	assert_int_equal(klog_log_time_unindexed(log), 0);
	check_all(log, bk, 0, 12000, 89);
	klog_log_close(log);
	free(bk);
}

static void
test_index_stopped(void **state)
{
	struct fixture *f = *state;
	struct book *bk = book_new();
	klog_log_index_stats_t st = { 0 };
	struct pacer p = { .stop_after = 2 };
	klog_err_t err = { 0 };
	size_t nsegs;
	klog_log_t *log = reopened(f->dir, bk, &nsegs);
	int64_t end = klog_log_end(log);

	/* Stopped after its second read: those two segments are kept. */
	assert_int_equal(klog_log_time_index(log, pacer, &p, &st, &err),
	    -KLOG_ECLOSED);
	assert_int_equal(st.segments, 2);
	assert_int_equal(klog_log_time_unindexed(log), end - st.bytes);
	check_all(log, bk, 0, 12000, 301);
	assert_int_equal(klog_log_time_unindexed(log), 0);
	klog_log_close(log);
	free(bk);
}

static void
test_index_deleted(void **state)
{
	struct fixture *f = *state;
	struct book *bk = book_new();
	klog_log_index_stats_t st = { 0 };
	struct pacer p = { 0 };
	klog_err_t err = { 0 };
	char path[PATH_MAX];
	klog_segment_info_t info[64];
	size_t nsegs, n;
	klog_log_t *log = reopened(f->dir, bk, &nsegs);

	/* klog-retain deleted the second segment behind the log: passed
	 * over, unread; retention then drops all but the active one while
	 * the first is read: they are passed over too. */
	assert_int_equal(klog_log_segments(log, info, 64, &n), 0);
	p.retain = info[n - 1].size;
	seg_file(path, sizeof(path), f->dir, info[1].base, ".klog");
	assert_int_equal(unlink(path), 0);
	p.log = log;
	assert_int_equal(klog_log_time_index(log, pacer, &p, &st, &err), 0);
	assert_int_equal(st.segments, 2);
	assert_int_equal(st.bytes, info[0].size + info[n - 1].size);
	assert_int_equal(klog_log_segment_count(log), 1);
	assert_int_equal(klog_log_time_unindexed(log), 0);
	check_all(log, bk, 0, 12000, 97);
	klog_log_close(log);
	free(bk);
}

static void *
index_main(void *arg)
{
	klog_log_index_stats_t st = { 0 };
	klog_err_t err = { 0 };

	return (void *)(intptr_t)klog_log_time_index(arg, NULL, NULL, &st,
	    &err);
}

/* The pass on a thread of its own while lookups and appends go on, as in
 * the broker: every answer the oracle's, every index complete after. */
static void
test_index_concurrent(void **state)
{
	struct fixture *f = *state;
	struct book *bk = book_new();
	klog_log_t *log = open_log(f->dir, 4 << 10, 0);
	int64_t ts[] = { 90000, 90001 };
	pthread_t t;
	void *r;

	fill(log, bk, 6000, 23);
	flush(log);
	klog_log_close(log);
	log = open_log(f->dir, 4 << 10, 0);
	assert_int_equal(pthread_create(&t, NULL, index_main, log), 0);
	for (int i = 0; i < 20; i++)
		put_batch(log, bk, ts, 2, -1);
	flush(log);
	check_all(log, bk, 0, 91000, 397);
	assert_int_equal(pthread_join(t, &r), 0);
	assert_int_equal((intptr_t)r, 0);
	check_all(log, bk, 0, 91000, 101);
	assert_int_equal(klog_log_time_unindexed(log), 0);
	klog_log_close(log);
	free(bk);
}

/* Pages of fd's first len bytes in the page cache. */
static size_t
resident(int fd, int64_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = ((size_t)len + page -
	    1) / page, in = 0;
	unsigned char *vec = malloc(n);
	void *m = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);

	assert_true(m != MAP_FAILED);
	assert_int_equal(mincore(m, (size_t)len, vec), 0);
	for (size_t i = 0; i < n; i++)
		in += vec[i] & 1;
	munmap(m, (size_t)len);
	free(vec);
	return in;
}

/* A step's reads leave the page cache as they found it: bytes from the
 * disk dropped again and counted, bytes in the cache kept. */
static void
test_build_step_cold(void **state)
{
	struct fixture *f = *state;
	struct book *bk = book_new();
	klog_log_t *log = open_log(f->dir, 0, 0);
	klog_timeindex_t whole, step;
	char path[PATH_MAX];
	uint8_t *buf = malloc(KLOG_TIMEINDEX_CHUNK), probe[4096];
	struct iovec v = { probe, sizeof(probe) };
	int64_t end, cold = 0;
	int fd;

	fill(log, bk, 8000, 19);   /* about half a MiB */
	flush(log);
	end = klog_log_end(log);
	klog_log_close(log);
	seg_file(path, sizeof(path), f->dir, 0, ".klog");
	assert_true((fd = open(path, O_RDONLY)) >= 0);
	klog_timeindex_init(&whole, KLOG_TIMEINDEX_SPACING);
	assert_int_equal(klog_timeindex_build(&whole, fd, end), 0);
	/* Warm (just read): nothing counted as cold. */
	klog_timeindex_init(&step, KLOG_TIMEINDEX_SPACING);
	assert_int_equal(klog_timeindex_build_step(&step, fd, end, buf,
	    &cold), 0);
	assert_int_equal(step.built, end);
	assert_int_equal(cold, 0);
	assert_int_equal(resident(fd, end), (size_t)(end + 4095) / 4096);
	assert_int_equal(step.n, whole.n);
	assert_memory_equal(step.v, whole.v, whole.n * sizeof(*whole.v));
	assert_int_equal(step.max_ts, whole.max_ts);
	klog_timeindex_free(&step);
	/* Cold: read from the disk, and out of the cache after. */
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (preadv2(fd, &v, 1, 0, RWF_NOWAIT) >= 0) {
		/* A file system that keeps its pages (tmpfs) cannot say. */
		close(fd);
		free(buf);
		klog_timeindex_free(&whole);
		free(bk);
		skip();
	}
	klog_timeindex_init(&step, KLOG_TIMEINDEX_SPACING);
	assert_int_equal(klog_timeindex_build_step(&step, fd, end, buf,
	    &cold), 0);
	assert_int_equal(cold, end);
	assert_int_equal(step.n, whole.n);
	/* The page cut by the end stays (DONTNEED drops whole pages). */
	assert_in_range(resident(fd, end), 0, 1);
	klog_timeindex_free(&step);
	klog_timeindex_free(&whole);
	close(fd);
	free(buf);
	free(bk);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_running_max),
		cmocka_unit_test(test_impossible_length),
		cmocka_unit_test_setup_teardown(test_out_of_order, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_log_append_time, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_unstamped, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_truncated_and_recovered,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_retained, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_index_pass, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_index_stopped, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_index_deleted, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_index_concurrent, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_build_step_cold, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
