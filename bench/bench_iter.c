/*
 * bench_iter: how fast klog_iter_next() walks a message set with CRC checks.
 *
 *   bench_iter [-j N] [SIZE]   SIZE of the in-memory set, default 256M (K/M/G)
 *
 * Builds SIZE bytes of magic-0 entries with 200-byte payloads (the paper's
 * message size), iterates them RUNS times checking every CRC, and prints one
 * line per run, then the medians.  With -j N the set is taken 4 MiB at a
 * time, as a consumer's fetches are: klog_crcpool_crcs() checks each piece on
 * the calling thread and N workers, then the iterator walks it trusting
 * those CRCs (KLOG_ITER_OUTER_CHECKED), as klog-consume does.
 *
 *   run 1 mb_s 2345.6 msgs_s 11222333
 *   iterate_crc_mb_s 2345.6 msgs_s 11222333
 *
 * MB is 10^6 bytes.  Exit 1 if any message fails its CRC, 64 on misuse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "klog/base/exit.h"
#include "klog/base/parse.h"
#include "klog/storage/crcpool.h"
#include "klog/storage/format.h"

#define PAYLOAD 200
#define RUNS 5
#define FETCH ((size_t)4 << 20)

static double
now(void)
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

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Fill buf with as many whole entries as fit; returns the bytes used. */
static size_t
build(uint8_t *buf, size_t size, size_t *count)
{
	uint8_t payload[PAYLOAD];
	size_t pos = 0, n = 0;

	while (size - pos >= klog_entry_size(PAYLOAD)) {
		for (size_t i = 0; i < PAYLOAD; i++)
			payload[i] = (uint8_t)(n * 131 + i);
		pos += klog_entry_encode(buf + pos, payload, PAYLOAD);
		n++;
	}
	*count = n;
	return pos;
}

/* Walk buf[0..len): messages into *seen, bad CRCs into *bad; the
 * iterator's result. */
static int
walk(const uint8_t *buf, size_t len, unsigned flags, size_t *seen,
    size_t *bad)
{
	klog_iter_t it;
	klog_msg_t m;
	int r;

	klog_iter_init(&it, buf, len, 0, flags, 0);
	while ((r = klog_iter_next(&it, &m)) == 1) {
		(*seen)++;
		*bad += !m.valid;
	}
	klog_iter_free(&it);
	return r;
}

/* One timed pass; returns the seconds taken, or -1 on a bad message. */
static double
pass(const uint8_t *buf, size_t len, size_t count, klog_crcpool_t *v)
{
	size_t seen = 0, bad = 0, piece = FETCH / klog_entry_size(PAYLOAD) *
	    klog_entry_size(PAYLOAD), n;
	double t0 = now();
	unsigned flags;
	int r = 0;

	if (v == NULL) {
		r = walk(buf, len, 0, &seen, &bad);
	} else {
		for (size_t pos = 0; pos < len && r == 0; pos += n) {
			n = len - pos < piece ? len - pos : piece;
			flags = klog_crcpool_crcs(v, buf + pos, n) == 0 ?
			    KLOG_ITER_OUTER_CHECKED : 0;
			r = walk(buf + pos, n, flags, &seen, &bad);
		}
	}
	if (r != 0 || bad != 0 || seen != count)
		return -1;
	return now() - t0;
}

int
main(int argc, char **argv)
{
	double mb[RUNS], msgs[RUNS], secs;
	klog_crcpool_t *v = NULL;
	const char *why;
	int64_t size = 256 << 20, workers = 0;
	size_t len, count;
	uint8_t *buf;
	int ch;

	while ((ch = getopt(argc, argv, "j:")) != -1) {
		if (ch != 'j' || klog_parse_i64(optarg, 0, 64, &workers,
		    &why) < 0) {
			if (ch == 'j')
				fprintf(stderr, "bench_iter: -j %s: %s\n",
				    optarg, why);
			fprintf(stderr, "usage: bench_iter [-j N] [SIZE]\n");
			return KLOG_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "usage: bench_iter [-j N] [SIZE]\n");
		return KLOG_EXIT_USAGE;
	}
	if (optind < argc && klog_parse_size(argv[optind],
	    (int64_t)klog_entry_size(PAYLOAD), (int64_t)1 << 40, &size,
	    &why) < 0) {
		fprintf(stderr, "bench_iter: %s: %s\n", argv[optind], why);
		return KLOG_EXIT_USAGE;
	}
	if (workers > 0 && klog_crcpool_new((int)workers, &v) < 0) {
		fprintf(stderr, "bench_iter: cannot start threads\n");
		return KLOG_EXIT_FAIL;
	}
	if ((buf = malloc((size_t)size)) == NULL) {
		fprintf(stderr, "bench_iter: out of memory\n");
		klog_crcpool_free(v);
		return KLOG_EXIT_FAIL;
	}
	len = build(buf, (size_t)size, &count);
	for (int i = 0; i < RUNS; i++) {
		if ((secs = pass(buf, len, count, v)) < 0) {
			fprintf(stderr, "bench_iter: iteration failed\n");
			free(buf);
			klog_crcpool_free(v);
			return KLOG_EXIT_FAIL;
		}
		if (secs <= 0)
			secs = 1e-9;
		mb[i] = (double)len / 1e6 / secs;
		msgs[i] = (double)count / secs;
		printf("run %d mb_s %.1f msgs_s %.0f\n", i + 1, mb[i], msgs[i]);
	}
	printf("iterate_crc_mb_s %.1f msgs_s %.0f\n", median(mb, RUNS),
	    median(msgs, RUNS));
	free(buf);
	klog_crcpool_free(v);
	return fflush(stdout) == 0 ? KLOG_EXIT_OK : KLOG_EXIT_IOERR;
}
