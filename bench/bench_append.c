/*
 * Partition-log append throughput against plain write(2) of the same bytes,
 * in the same run and the same directory:
 *   bench_append [SIZE]   SIZE bytes per run (K/M/G suffixes; default 1G)
 * Each run appends sets of 50 messages of 200 bytes (the paper's producer
 * test) to a fresh partition log with the default segment size, then writes
 * the same sets to a plain file.  Neither side calls fsync: this measures
 * the log's overhead over the page cache, not the disk.  Data goes under
 * $TMPDIR (default /tmp) and is removed after each run.
 * Prints one "# run" line per run, then
 *   append_mb_s <median> write_mb_s <median> ratio <append/write>
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

#include "klog/base/error.h"
#include "klog/base/parse.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"

#define RUNS 5
#define MSGS_PER_SET 50
#define PAYLOAD 200

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* One set of MSGS_PER_SET entries with varied payloads; *len its size. */
static uint8_t *
make_set(size_t *len)
{
	uint8_t payload[PAYLOAD], *set;

	if ((set = malloc(MSGS_PER_SET * klog_entry_size(PAYLOAD))) == NULL)
		err(1, "malloc");
	*len = 0;
	for (int m = 0; m < MSGS_PER_SET; m++) {
		for (int i = 0; i < PAYLOAD; i++)
			payload[i] = (uint8_t)(m * 31 + i);
		*len += klog_entry_encode(set + *len, payload, PAYLOAD);
	}
	return set;
}

static double
append_once(const char *dir, const uint8_t *set, size_t len, size_t nsets)
{
	klog_log_config_t cfg;
	klog_log_t *log;
	klog_err_t e = { 0 };
	double t0;
	int r;

	klog_log_config_default(&cfg);
	if ((r = klog_log_open(dir, "bench", 0, &cfg, &log, &e)) < 0)
		errx(74, "%s: %s", dir, klog_err_text(&e, r));
	t0 = now_s();
	for (size_t i = 0; i < nsets; i++)
		if ((r = klog_log_append(log, set, len, MSGS_PER_SET, NULL,
		    &e)) < 0)
			errx(74, "append: %s", klog_err_text(&e, r));
	t0 = now_s() - t0;
	klog_log_close(log);
	return (double)(len * nsets) / t0 / 1e6;
}

static double
write_once(const char *dir, const uint8_t *set, size_t len, size_t nsets)
{
	char path[4096];
	double t0;
	int fd;

	snprintf(path, sizeof(path), "%s/plain", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
		err(74, "%s", path);
	t0 = now_s();
	for (size_t i = 0; i < nsets; i++)
		if (write(fd, set, len) != (ssize_t)len)
			err(74, "write %s", path);
	t0 = now_s() - t0;
	close(fd);
	return (double)(len * nsets) / t0 / 1e6;
}

int
main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	double a[RUNS], w[RUNS];
	const char *why;
	char dir[2048];
	int64_t size = (int64_t)1 << 30;
	size_t len, nsets;
	uint8_t *set;

	if (argc > 2)
		errx(64, "usage: bench_append [SIZE]");
	if (argc == 2 && klog_parse_size(argv[1], 1, INT64_MAX, &size,
	    &why) < 0)
		errx(64, "%s: %s", argv[1], why);
	set = make_set(&len);
	nsets = (size_t)size / len + 1;
	for (int i = 0; i < RUNS; i++) {
		snprintf(dir, sizeof(dir), "%s/bench_append.XXXXXX", tmp);
		if (mkdtemp(dir) == NULL)
			err(74, "%s", dir);
		a[i] = append_once(dir, set, len, nsets);
		w[i] = write_once(dir, set, len, nsets);
		nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
		printf("# run %d: append %.0f MB/s, write %.0f MB/s\n", i + 1,
		    a[i], w[i]);
	}
	qsort(a, RUNS, sizeof(a[0]), cmp_double);
	qsort(w, RUNS, sizeof(w[0]), cmp_double);
	printf("append_mb_s %.0f write_mb_s %.0f ratio %.2f\n", a[RUNS / 2],
	    w[RUNS / 2], a[RUNS / 2] / w[RUNS / 2]);
	free(set);
	if (fflush(stdout) != 0)
		err(74, "stdout");
	return 0;
}
