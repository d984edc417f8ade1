/*
 * Unit tests for the prefetch worker (lib/net/prefetch.c) and the output
 * queue's page-cache probe (KLOG_OUTQ_COLD in lib/net/outq.c): a file dropped
 * from the page cache stops the queue before sendfile, the worker reads
 * the range in, and the queue then sends it, byte for byte.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/base/error.h"
#include "klog/net/outq.h"
#include "klog/net/prefetch.h"
#include "klog/storage/log.h"

#define FILE_BYTES ((size_t)3 << 20)   /* six probe spans */

struct fixture {
	int filefd;
	uint8_t *map;          /* the file, mapped to ask mincore(2) */
	int w, r;              /* the queue writes w; the test reads r */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int notified;
};

static uint8_t
file_byte(size_t i)
{
	return (uint8_t)(i * 7 + i / 4096);
}

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char path[] = "/var/tmp/klog-prefetch-test.XXXXXX";
	void *buf = NULL;
	int sv[2], big = 4 << 20, wfd;

	assert_non_null(f);
	assert_int_equal(posix_memalign(&buf, 4096, FILE_BYTES), 0);
	for (size_t i = 0; i < FILE_BYTES; i++)
		((uint8_t *)buf)[i] = file_byte(i);
	f->filefd = mkstemp(path);
	assert_true(f->filefd >= 0);
	/* Written around the page cache where the file system lets us, so
	 * that the file starts out cold: dropping pages with fadvise misses
	 * those another CPU has not put on its LRU lists yet. */
	if ((wfd = open(path, O_WRONLY | O_DIRECT)) < 0)
		wfd = dup(f->filefd);
	unlink(path);
	assert_true(wfd >= 0);
	/* Readahead off, as on the broker's segments (log.c): a probe of
	 * one page reads that page only. */
	(void)posix_fadvise(f->filefd, 0, 0, POSIX_FADV_RANDOM);
	f->map = mmap(NULL, FILE_BYTES, PROT_READ, MAP_SHARED, f->filefd, 0);
	assert_true(f->map != MAP_FAILED);
	assert_int_equal(write(wfd, buf, FILE_BYTES), FILE_BYTES);
	close(wfd);
	free(buf);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	f->w = sv[0];
	f->r = sv[1];
	setsockopt(f->w, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(f->r, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	munmap(f->map, FILE_BYTES);
	close(f->filefd);
	close(f->w);
	close(f->r);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f);
	return 0;
}

/* Whether the pages of [pos, end) are all in the page cache: mincore(2)
 * of the fixture's mapping, which (unlike a read) brings nothing in. */
static int
span_cached(struct fixture *f, int64_t pos, int64_t end)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t first = (size_t)pos / page, n = ((size_t)end - 1) / page -
	    first + 1;
	unsigned char vec[FILE_BYTES / 4096 + 1];

	assert_true(n <= sizeof(vec));
	assert_int_equal(mincore(f->map + first * page, n * page, vec), 0);
	for (size_t i = 0; i < n; i++)
		if (!(vec[i] & 1))
			return 0;
	return 1;
}

static int
in_cache(struct fixture *f, int64_t pos)
{
	return span_cached(f, pos, pos + 1);
}

static int
none_cached(struct fixture *f)
{
	for (size_t pos = 0; pos < FILE_BYTES; pos += 4096)
		if (in_cache(f, (int64_t)pos))
			return 0;
	return 1;
}

/* Drop the file from the page cache, or skip where that cannot be done
 * (a file system that keeps pages).  fadvise misses pages another CPU has
 * not put on its LRU lists yet, so it is tried a few times. */
static void
make_cold(struct fixture *f)
{
	assert_int_equal(fdatasync(f->filefd), 0);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(posix_fadvise(f->filefd, 0, 0,
		    POSIX_FADV_DONTNEED), 0);
		if (none_cached(f))
			return;
		usleep(10000);
	}
	skip();
}

static void
notify(void *arg)
{
	struct fixture *f = arg;

	pthread_mutex_lock(&f->mu);
	f->notified++;
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

/* Wait for the worker's next report; its token. */
static uint64_t
wait_token(struct fixture *f, klog_prefetch_t *p)
{
	uint64_t token;

	pthread_mutex_lock(&f->mu);
	while (f->notified == 0)
		pthread_cond_wait(&f->cv, &f->mu);
	f->notified--;
	pthread_mutex_unlock(&f->mu);
	assert_int_equal(klog_prefetch_take(p, &token, 1), 1);
	return token;
}

/* Read n bytes from the socket and check them against the file at pos. */
static void
expect_bytes(struct fixture *f, size_t pos, size_t n)
{
	static uint8_t buf[1 << 16];
	size_t got = 0, want;
	ssize_t r;

	while (got < n) {
		want = n - got < sizeof(buf) ? n - got : sizeof(buf);
		r = read(f->r, buf, want);
		assert_true(r > 0);
		for (ssize_t i = 0; i < r; i++)
			assert_int_equal(buf[i], file_byte(pos + got + (size_t)i));
		got += (size_t)r;
	}
}

static void
test_worker_reads_ranges_in(void **state)
{
	struct fixture *f = *state;
	klog_prefetch_t *p;
	uint64_t token;

	make_cold(f);
	assert_int_equal(klog_prefetch_new(notify, f, 0, &p), 0);
	assert_int_equal(klog_prefetch_submit(p, f->filefd, 1 << 20, 65536,
	    42), 0);
	token = wait_token(f, p);
	assert_int_equal(token, 42);
	assert_true(span_cached(f, 1 << 20, (1 << 20) + 65536));
	/* Nothing else to take; a bad descriptor is refused. */
	assert_int_equal(klog_prefetch_take(p, &token, 1), 0);
	assert_true(klog_prefetch_submit(p, -1, 0, 1, 7) < 0);
	klog_prefetch_free(p);
}

static double
mono_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* With a rate, reads are paced only while writes are reported: 2 MiB at
 * 8 MiB a second cannot take less than 15 of its 16 reads' turns. */
static void
test_reads_paced_while_writing(void **state)
{
	struct fixture *f = *state;
	klog_prefetch_t *p;
	double t0, paced;

	assert_int_equal(klog_prefetch_new(notify, f, 8 << 20, &p), 0);
	/* No writes yet: at once (not timed: only the pacing is). */
	assert_int_equal(klog_prefetch_submit(p, f->filefd, 0, 2 << 20, 1),
	    0);
	assert_int_equal(wait_token(f, p), 1);
	klog_prefetch_writing(p);
	t0 = mono_secs();
	assert_int_equal(klog_prefetch_submit(p, f->filefd, 0, 2 << 20, 2),
	    0);
	assert_int_equal(wait_token(f, p), 2);
	paced = mono_secs() - t0;
	assert_true(paced >= 15.0 / 64 - 0.001);
	klog_prefetch_free(p);
}

/* Read what the socket has: file bytes from *next up to end, checked,
 * then whatever follows into rest (4 bytes at most). */
static void
drain_file(struct fixture *f, size_t *next, size_t end, char *rest,
    size_t *nrest)
{
	static uint8_t buf[1 << 16];
	ssize_t r;

	while ((r = read(f->r, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < r; i++) {
			if (*next < end) {
				assert_int_equal(buf[i], file_byte(*next));
				(*next)++;
			} else {
				assert_true(*nrest < 4);
				rest[(*nrest)++] = (char)buf[i];
			}
		}
}

/* by_reading: probe with one-byte reads, as where cachestat(2) is missing. */
static void
stops_cold_and_sends_warmed(struct fixture *f, int by_reading)
{
	klog_log_slice_t s = { .fd = f->filefd, .file_pos = 4096,
	    .len = FILE_BYTES - 8192 };
	size_t next = 4096, end = FILE_BYTES - 4096, spans = 0, nrest = 0;
	klog_prefetch_t *p;
	klog_outq_t q;
	char head[4], rest[4];
	int rc;

	make_cold(f);
	assert_int_equal(klog_prefetch_new(notify, f, 0, &p), 0);
	klog_outq_init(&q);
	q.probe = 1;
	q.probe_by_reading = by_reading;
	klog_buf_put(klog_outq_buf(&q), "head", 4);
	assert_int_equal(klog_outq_file(&q, &s), 0);
	klog_buf_put(klog_outq_buf(&q), "tail", 4);
	/* The bytes before the file go; the file waits for its span. */
	rc = klog_outq_write(&q, f->w, NULL);
	assert_int_equal(read(f->r, head, 4), 4);
	assert_memory_equal(head, "head", 4);
	while (rc == KLOG_OUTQ_COLD) {
		/* Stopped exactly where the socket's bytes end, at a span
		 * not all in the page cache (probing by reading brings the
		 * pages it probed in, maybe by now: nothing to check). */
		drain_file(f, &next, end, rest, &nrest);
		assert_int_equal(q.cold.fd, f->filefd);
		assert_int_equal(q.cold.pos, (int64_t)next);
		assert_true(q.cold.end - q.cold.pos <=
		    (int64_t)KLOG_OUTQ_PROBE_SPAN);
		if (!by_reading)
			assert_false(span_cached(f, q.cold.pos, q.cold.end));
		assert_int_equal(klog_prefetch_submit(p, q.cold.fd,
		    q.cold.pos, (size_t)(q.cold.end - q.cold.pos), 9), 0);
		assert_int_equal(wait_token(f, p), 9);
		klog_outq_warmed(&q);
		spans++;
		rc = klog_outq_write(&q, f->w, NULL);
	}
	assert_int_equal(rc, KLOG_OUTQ_EMPTY);
	drain_file(f, &next, end, rest, &nrest);
	assert_int_equal(next, end);
	assert_int_equal(nrest, 4);
	assert_memory_equal(rest, "tail", 4);
	/* A one-byte probe may find its page read in by then: only
	 * cachestat(2) is sure to see the file cold. */
	assert_true(spans >= 1 || by_reading);
	klog_outq_free(&q);
	klog_prefetch_free(p);
}

static void
test_queue_stops_cold_and_sends_warmed(void **state)
{
	stops_cold_and_sends_warmed(*state, 0);
}

static void
test_queue_stops_cold_probing_by_reading(void **state)
{
	stops_cold_and_sends_warmed(*state, 1);
}

/* A span whose two ends are cached and whose middle is not is cold: its
 * pages are counted, not sampled (cachestat(2)). */
static void
test_cold_middle_is_cold(void **state)
{
	struct fixture *f = *state;
	klog_log_slice_t s = { .fd = f->filefd, .file_pos = 0,
	    .len = KLOG_OUTQ_PROBE_SPAN };
	klog_outq_t q;
	char b;
	int rc;

	make_cold(f);
	assert_int_equal(pread(f->filefd, &b, 1, 0), 1);
	assert_int_equal(pread(f->filefd, &b, 1, KLOG_OUTQ_PROBE_SPAN - 1), 1);
	if (in_cache(f, KLOG_OUTQ_PROBE_SPAN / 2))
		skip();   /* readahead brought the middle in after all */
	klog_outq_init(&q);
	q.probe = 1;
	assert_int_equal(klog_outq_file(&q, &s), 0);
	rc = klog_outq_write(&q, f->w, NULL);
	if (q.probe_by_reading) {
		klog_outq_free(&q);
		skip();   /* no cachestat(2) here */
	}
	assert_int_equal(rc, KLOG_OUTQ_COLD);
	assert_int_equal(q.cold.pos, 0);
	assert_int_equal(q.cold.end, (int64_t)KLOG_OUTQ_PROBE_SPAN);
	klog_outq_free(&q);
}

/* Without probe, or with the file in the cache, nothing stops. */
static void
test_warm_or_unprobed_sends_at_once(void **state)
{
	struct fixture *f = *state;
	klog_log_slice_t s = { .fd = f->filefd, .file_pos = 0,
	    .len = 1 << 20 };
	klog_outq_t q;

	make_cold(f);
	klog_outq_init(&q);
	assert_int_equal(klog_outq_file(&q, &s), 0);
	assert_int_equal(klog_outq_write(&q, f->w, NULL), KLOG_OUTQ_EMPTY);
	expect_bytes(f, 0, 1 << 20);
	klog_outq_free(&q);
	/* Those pages are in the cache now: probed, and found. */
	klog_outq_init(&q);
	q.probe = 1;
	s = (klog_log_slice_t){ .fd = f->filefd, .file_pos = 0,
	    .len = 1 << 20 };
	assert_int_equal(klog_outq_file(&q, &s), 0);
	assert_int_equal(klog_outq_write(&q, f->w, NULL), KLOG_OUTQ_EMPTY);
	expect_bytes(f, 0, 1 << 20);
	klog_outq_free(&q);
}

static void
hold_done(klog_outq_hold_t *h)
{
	klog_outq_free(&h->q);
}

/* A file inside a hold (a long poll's answer) is probed with the owning
 * queue's state: the cold range is reported there, and once read in it
 * is sent. */
static void
test_cold_inside_hold(void **state)
{
	struct fixture *f = *state;
	klog_log_slice_t s = { .fd = f->filefd, .file_pos = 0,
	    .len = 65536 };
	klog_outq_hold_t h = { .done = hold_done };
	klog_prefetch_t *p;
	klog_outq_t q;

	make_cold(f);
	assert_int_equal(klog_prefetch_new(notify, f, 0, &p), 0);
	klog_outq_init(&q);
	q.probe = 1;
	klog_outq_init(&h.q);
	assert_int_equal(klog_outq_file(&h.q, &s), 0);
	h.ready = 1;
	assert_int_equal(klog_outq_hold(&q, &h), 0);
	assert_int_equal(klog_outq_write(&q, f->w, NULL), KLOG_OUTQ_COLD);
	assert_int_equal(q.cold.fd, f->filefd);
	assert_int_equal(q.cold.pos, 0);
	assert_int_equal(q.cold.end, 65536);
	assert_int_equal(klog_prefetch_submit(p, q.cold.fd, q.cold.pos,
	    (size_t)(q.cold.end - q.cold.pos), 3), 0);
	assert_int_equal(wait_token(f, p), 3);
	klog_outq_warmed(&q);
	assert_int_equal(klog_outq_write(&q, f->w, NULL), KLOG_OUTQ_EMPTY);
	expect_bytes(f, 0, 65536);
	klog_outq_free(&q);
	klog_prefetch_free(p);
}

/* The descriptor following every one open now: dup()'s lowest free
 * number, so it comes back once every descriptor opened since is closed. */
static int
next_fd(void)
{
	int fd = dup(0);

	assert_true(fd >= 0);
	close(fd);
	return fd;
}

/* Ranges still queued when the worker is freed are closed, not read. */
static void
test_free_with_queue(void **state)
{
	struct fixture *f = *state;
	klog_prefetch_t *p;
	int first;

	assert_int_equal(klog_prefetch_new(notify, f, 0, &p), 0);
	first = next_fd();
	for (int i = 0; i < 50; i++)
		assert_int_equal(klog_prefetch_submit(p, f->filefd, 0,
		    FILE_BYTES, (uint64_t)i), 0);
	assert_true(next_fd() > first);
	klog_prefetch_free(p);
	assert_int_equal(next_fd(), first);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_worker_reads_ranges_in),
		T(test_reads_paced_while_writing),
		T(test_queue_stops_cold_and_sends_warmed),
		T(test_queue_stops_cold_probing_by_reading),
		T(test_cold_middle_is_cold),
		T(test_warm_or_unprobed_sends_at_once),
		T(test_cold_inside_hold),
		T(test_free_with_queue),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
