/*
 * bench_timeindex: what a time lookup costs on one segment of magic-2
 * entries, and what its index holds in memory.
 *
 *   bench_timeindex [SIZE]      the segment's size, default 1G (K/M/G)
 *
 * Writes one segment of SIZE bytes under TMPDIR: entries of about 16 KiB,
 * each a batch of 200-byte records (Kafka clients' batch.size, the paper's
 * message size), timestamps a millisecond apart with every record up to
 * 50 ms early or late (so not in order).  Then times klog_log_find_time()
 * for LOOKUPS times spread over the segment:
 *
 *   warm      index kept by the appends, pages cached
 *   build     the first lookup after a reopen (the index read from the
 *             file), pages cached
 *   cold      the same with the segment's pages dropped first
 *             (POSIX_FADV_DONTNEED after the flush's fsync), then one
 *             lookup after it, still cold where it reads
 *   indexer   the broker's indexer thread's pass at start
 *             (klog_log_time_index()) after a reopen, pages cached and
 *             dropped: its wall and CPU time; then the first lookup
 *             after it (no segment left to read), and its CPU time
 *   spacing   the warm lookup by klog_timeindex_find() over indexes of
 *             other spacings, and their bytes, to choose the default
 *
 * The last line is "key value key value ...": times in microseconds
 * (medians), bytes per GiB of segment.  Exit 74 on an I/O error, 64 on
 * misuse.
 */
#include <err.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/base/parse.h"
#include "klog/storage/log.h"
#include "klog/storage/record.h"
#include "klog/storage/timeindex.h"

#define VALUE 200
#define BATCH_RECORDS 78          /* 78 x ~210 B: a 16 KiB batch */
#define T0 ((int64_t)1700000000000)
#define LOOKUPS 201
#define COLD_LOOKUPS 5

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* This process's CPU time (user and system): the bench has one thread. */
static double
cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Batch b's records: timestamps around T0 + b * BATCH_RECORDS ms. */
static void
make_batch(klog_buf_t *out, int64_t b)
{
	klog_batch_builder_t bb;
	uint8_t value[VALUE];
	int64_t base = T0 + b * BATCH_RECORDS;

	memset(value, 'v', sizeof(value));
	klog_batch_begin(&bb, out, base, KLOG_NO_PRODUCER, -1, -1);
	for (int i = 0; i < BATCH_RECORDS; i++)
		klog_batch_add(&bb, out, &(klog_record_in_t){ value, VALUE,
		    NULL, 0, base + i + (i * 37 + b) % 101 - 50, NULL, 0 });
	if (klog_batch_end(&bb, out) < 0)
		errx(1, "out of memory");
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static klog_log_t *
open_log(const char *dir, int64_t size)
{
	klog_log_config_t cfg;
	klog_log_t *log;
	klog_err_t e = { 0 };
	int r;

	klog_log_config_default(&cfg);
	cfg.segment_bytes = size + (64 << 20);
	if ((r = klog_log_open(dir, "bench", 0, &cfg, &log, &e)) < 0)
		errx(74, "%s: %s", dir, klog_err_text(&e, r));
	return log;
}

/* Fill the log to size: a MiB or so of batches an append. */
static int64_t
fill(klog_log_t *log, int64_t size)
{
	klog_err_t e = { 0 };
	klog_buf_t b;
	int64_t batches = 0;
	int r;

	klog_buf_init(&b);
	while (klog_log_end(log) < size) {
		b.len = 0;
		for (int i = 0; i < 64; i++)
			make_batch(&b, batches++);
		if ((r = klog_log_append(log, b.data, b.len, 64, NULL, &e)) < 0)
			errx(74, "append: %s", klog_err_text(&e, r));
	}
	if ((r = klog_log_flush(log, &e)) < 0)
		errx(74, "flush: %s", klog_err_text(&e, r));
	klog_buf_free(&b);
	return batches;
}

/* Lookup i of n: a time spread over the segment's batches. */
static int64_t
time_of(int i, int n, int64_t batches)
{
	return T0 + (batches * BATCH_RECORDS) / n * i + 17;
}

static double
lookup(klog_log_t *log, int64_t t)
{
	klog_log_time_t res;
	klog_err_t e = { 0 };
	double t0 = now_us();
	int r;

	if ((r = klog_log_find_time(log, t, &res, &e)) < 0)
		errx(74, "lookup: %s", klog_err_text(&e, r));
	t0 = now_us() - t0;
	if (res.status != KLOG_LOG_TIME_FOUND || res.timestamp < t)
		errx(1, "lookup %lld: nothing found", (long long)t);
	return t0;
}

static double
warm(klog_log_t *log, int64_t batches)
{
	double v[LOOKUPS];

	for (int i = 0; i < LOOKUPS; i++)
		v[i] = lookup(log, time_of(i, LOOKUPS, batches));
	return median(v, LOOKUPS);
}

static void
drop_cache(const char *dir)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/bench-0/%020d.klog", dir, 0);
	if ((fd = open(path, O_RDONLY)) < 0)
		err(74, "%s", path);
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
		errx(74, "%s: fadvise", path);
	close(fd);
}

/* The segment read whole: in the page cache. */
static void
read_all(const char *dir)
{
	static char buf[1 << 20];
	char path[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/bench-0/%020d.klog", dir, 0);
	if ((fd = open(path, O_RDONLY)) < 0)
		err(74, "%s", path);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err(74, "%s", path);
	close(fd);
}

/* A reopened log's pass of the indexer (cold: its pages dropped first):
 * wall and CPU us into r[0], r[1]; then the first lookup's, r[2], r[3]. */
static void
indexer(const char *dir, int64_t size, int64_t batches, int cold,
    double *r)
{
	klog_log_index_stats_t st = { 0 };
	klog_err_t e = { 0 };
	klog_log_t *log;
	double t0, c0;
	int rc;

	if (cold)
		drop_cache(dir);
	else
		read_all(dir);
	log = open_log(dir, size);
	t0 = now_us();
	c0 = cpu_us();
	if ((rc = klog_log_time_index(log, NULL, NULL, &st, &e)) < 0)
		errx(74, "index: %s", klog_err_text(&e, rc));
	r[1] = cpu_us() - c0;
	r[0] = now_us() - t0;
	if (st.bytes != size || klog_log_time_unindexed(log) != 0 ||
	    (cold && st.cold == 0))
		errx(1, "index: %lld bytes read, %lld cold, %lld left",
		    (long long)st.bytes, (long long)st.cold,
		    (long long)klog_log_time_unindexed(log));
	c0 = cpu_us();
	r[2] = lookup(log, time_of(LOOKUPS / 2, LOOKUPS, batches));
	r[3] = cpu_us() - c0;
	klog_log_close(log);
}

/* klog_timeindex_find() at other spacings: median us, and bytes. */
static void
spacing(const char *dir, int64_t size, int64_t batches, int64_t sp,
    double *us, size_t *bytes)
{
	klog_timeindex_t ti, tail;
	klog_timeindex_hit_t hit;
	char path[4096];
	double v[LOOKUPS], t0;
	int fd;

	snprintf(path, sizeof(path), "%s/bench-0/%020d.klog", dir, 0);
	if ((fd = open(path, O_RDONLY)) < 0)
		err(74, "%s", path);
	klog_timeindex_init(&ti, sp);
	klog_timeindex_tail(&ti, &tail);
	if (klog_timeindex_build(&tail, fd, size) < 0 ||
	    !klog_timeindex_join(&ti, &tail, 0))
		errx(74, "%s: build", path);
	for (int i = 0; i < LOOKUPS; i++) {
		int64_t t = time_of(i, LOOKUPS, batches);

		t0 = now_us();
		if (klog_timeindex_find(fd, klog_timeindex_seek(&ti, t),
		    ti.built, t, 0, &hit) != 1)
			errx(1, "spacing %lld: %lld not found", (long long)sp,
			    (long long)t);
		v[i] = now_us() - t0;
	}
	*us = median(v, LOOKUPS);
	*bytes = ti.n * sizeof(*ti.v);
	klog_timeindex_free(&ti);
	close(fd);
}

int
main(int argc, char **argv)
{
	static const int64_t spacings[] = { 4 << 10, 16 << 10, 64 << 10,
	    256 << 10, 1 << 20 };
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int64_t size = (int64_t)1 << 30, batches;
	double w, build, cold, cold_next, us[5], v[COLD_LOOKUPS], gib, ix[4],
	    ixc[4];
	size_t mem, bytes[5];
	const char *why;
	char dir[2048];
	klog_log_t *log;

	if (argc > 2)
		errx(64, "usage: bench_timeindex [SIZE]");
	if (argc == 2 && klog_parse_size(argv[1], 1 << 20, (int64_t)1 << 32,
	    &size, &why) < 0)
		errx(64, "%s: %s", argv[1], why);
	snprintf(dir, sizeof(dir), "%s/bench_timeindex.XXXXXX", tmp);
	if (mkdtemp(dir) == NULL)
		err(74, "%s", dir);
	log = open_log(dir, size);
	batches = fill(log, size);
	size = klog_log_end(log);
	gib = (double)size / (double)(1 << 30);
	mem = klog_log_time_index_bytes(log);
	w = warm(log, batches);
	klog_log_close(log);
	/* Reopened, cached: the first lookup reads the segment. */
	log = open_log(dir, size);
	build = lookup(log, time_of(LOOKUPS / 2, LOOKUPS, batches));
	klog_log_close(log);
	/* Reopened, dropped from the page cache. */
	drop_cache(dir);
	log = open_log(dir, size);
	cold = lookup(log, time_of(LOOKUPS / 2, LOOKUPS, batches));
	drop_cache(dir);
	for (int i = 0; i < COLD_LOOKUPS; i++)
		v[i] = lookup(log, time_of(i * 37 + 11, LOOKUPS, batches));
	cold_next = median(v, COLD_LOOKUPS);
	klog_log_close(log);
	indexer(dir, size, batches, 0, ix);
	indexer(dir, size, batches, 1, ixc);
	for (int i = 0; i < 5; i++)
		spacing(dir, size, batches, spacings[i], &us[i], &bytes[i]);
	for (int i = 0; i < 5; i++)
		printf("# spacing %lld KiB: lookup %.1f us, %.0f bytes/GiB\n",
		    (long long)spacings[i] >> 10, us[i], (double)bytes[i] / gib);
	printf("# segment %lld bytes, %lld batches of %d records\n",
	    (long long)size, (long long)batches, BATCH_RECORDS);
	printf("# indexer: cached %.0f us (CPU %.0f us), dropped %.0f us (CPU "
	    "%.0f us); the first lookup after it: %.1f us (CPU %.1f us), "
	    "%.1f us (CPU %.1f us) where its pages were dropped\n", ix[0],
	    ix[1], ixc[0], ixc[1], ix[2], ix[3], ixc[2], ixc[3]);
	printf("warm_us %.1f build_cached_us %.0f cold_first_us %.0f "
	    "cold_next_us %.0f index_bytes_per_gib %.0f "
	    "indexer_cached_us %.0f indexer_cached_cpu_us %.0f "
	    "indexer_cold_us %.0f indexer_cold_cpu_us %.0f "
	    "after_indexer_first_us %.1f after_indexer_first_cpu_us %.1f\n",
	    w, build, cold, cold_next, (double)mem / gib, ix[0], ix[1],
	    ixc[0], ixc[1], ix[2], ix[3]);
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	if (fflush(stdout) != 0)
		err(74, "stdout");
	return 0;
}
