/*
 * Unit tests for the descriptor cache (lib/storage/fdcache.c), alone and under the
 * partition logs that share it: the bound holds once reads are released,
 * pinned descriptors are never closed, a closed segment reopens on the
 * next read with the same bytes, and rolled segments are handed over only
 * once synced.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
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

#include "klog/base/error.h"
#include "klog/storage/fdcache.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"

#define NFILES 6
#define PLEN 100
#define PER_SEG 4   /* messages per segment with the segment size below */
#define SEG_BYTES ((int64_t)PER_SEG * (PLEN + KLOG_MSG_OVERHEAD))

struct fixture {
	char dir[64];
	char path[NFILES][128];
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char dir[64], name[128];
	int fd;

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "fdcache"));
	strcpy(dir, f->dir);
	for (int i = 0; i < NFILES; i++) {
		/* Through a copy: the same object as source and destination
		 * upsets -Wrestrict. */
		snprintf(name, sizeof(name), "%s/f%d", dir, i);
		strcpy(f->path[i], name);
		fd = open(f->path[i], O_WRONLY | O_CREAT, 0644);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, &i, sizeof(i)), sizeof(i));
		close(fd);
	}
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* Descriptors this process has open. */
static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n - 3;  /* ".", ".." and the one opendir holds */
}

/* The int each fixture file holds, read through fd. */
static int
file_id(int fd)
{
	int v = -1;

	assert_int_equal(pread(fd, &v, sizeof(v), 0), sizeof(v));
	return v;
}

/* ---- the cache alone ---- */

static void
test_bound_and_lru(void **state)
{
	struct fixture *f = *state;
	klog_fdcache_entry_t e[NFILES];
	klog_fdcache_t *c;
	int base = open_fds(), fd;

	assert_int_equal(klog_fdcache_new(2, &c), 0);
	for (int i = 0; i < NFILES; i++)
		klog_fdcache_entry_init(&e[i], -1);
	for (int i = 0; i < 3; i++) {
		fd = klog_fdcache_pin(c, &e[i], f->path[i]);
		assert_true(fd >= 0);
		assert_int_equal(file_id(fd), i);
		klog_fdcache_unpin(c, &e[i]);
	}
	/* 0 was least recently used. */
	assert_int_equal(klog_fdcache_open_count(c), 2);
	assert_int_equal(open_fds(), base + 2);
	assert_int_equal(e[0].fd, -1);
	assert_true(e[1].fd >= 0 && e[2].fd >= 0);
	/* Touch 1, then open 0 again: 2 goes. */
	klog_fdcache_pin(c, &e[1], f->path[1]);
	klog_fdcache_unpin(c, &e[1]);
	fd = klog_fdcache_pin(c, &e[0], f->path[0]);
	assert_int_equal(file_id(fd), 0);
	klog_fdcache_unpin(c, &e[0]);
	assert_int_equal(e[2].fd, -1);
	assert_true(e[0].fd >= 0 && e[1].fd >= 0);
	for (int i = 0; i < NFILES; i++)
		klog_fdcache_drop(c, &e[i]);
	assert_int_equal(klog_fdcache_open_count(c), 0);
	assert_int_equal(open_fds(), base);
	klog_fdcache_unref(c);
}

static void
test_pinned_never_closed(void **state)
{
	struct fixture *f = *state;
	klog_fdcache_entry_t e[NFILES];
	int fds[NFILES];
	klog_fdcache_t *c;
	int base = open_fds();

	assert_int_equal(klog_fdcache_new(2, &c), 0);
	for (int i = 0; i < NFILES; i++) {
		klog_fdcache_entry_init(&e[i], -1);
		fds[i] = klog_fdcache_pin(c, &e[i], f->path[i]);
		assert_true(fds[i] >= 0);
	}
	/* Over the bound while all are in use; each still reads its file. */
	assert_int_equal(klog_fdcache_open_count(c), NFILES);
	for (int i = 0; i < NFILES; i++)
		assert_int_equal(file_id(fds[i]), i);
	/* Released: back under the bound, the last released kept. */
	for (int i = 0; i < NFILES; i++)
		klog_fdcache_unpin(c, &e[i]);
	assert_int_equal(klog_fdcache_open_count(c), 2);
	assert_int_equal(open_fds(), base + 2);
	assert_true(e[NFILES - 1].fd >= 0 && e[NFILES - 2].fd >= 0);
	/* A pin taken twice needs two releases. */
	klog_fdcache_pin(c, &e[0], f->path[0]);
	klog_fdcache_pin(c, &e[0], f->path[0]);
	klog_fdcache_unpin(c, &e[0]);
	klog_fdcache_pin(c, &e[1], f->path[1]);
	klog_fdcache_unpin(c, &e[1]);
	klog_fdcache_pin(c, &e[2], f->path[2]);
	klog_fdcache_unpin(c, &e[2]);
	assert_true(e[0].fd >= 0);
	klog_fdcache_unpin(c, &e[0]);
	for (int i = 0; i < NFILES; i++)
		klog_fdcache_drop(c, &e[i]);
	assert_int_equal(open_fds(), base);
	klog_fdcache_unref(c);
}

static void
test_adopt_and_unowned(void **state)
{
	struct fixture *f = *state;
	klog_fdcache_entry_t w, e[2];
	klog_fdcache_t *c;
	int fd;

	assert_int_equal(klog_fdcache_new(1, &c), 0);
	/* A writer's descriptor is the caller's until adopted. */
	fd = open(f->path[5], O_RDWR);
	assert_true(fd >= 0);
	klog_fdcache_entry_init(&w, fd);
	for (int i = 0; i < 2; i++) {
		klog_fdcache_entry_init(&e[i], -1);
		klog_fdcache_pin(c, &e[i], f->path[i]);
		klog_fdcache_unpin(c, &e[i]);
	}
	assert_int_equal(klog_fdcache_pin(c, &w, NULL), fd);
	klog_fdcache_unpin(c, &w);
	assert_int_equal(w.fd, fd);
	assert_int_equal(klog_fdcache_open_count(c), 1);
	/* Adopted, it is one of the cache's: the older one goes. */
	klog_fdcache_adopt(c, &w);
	assert_int_equal(klog_fdcache_open_count(c), 1);
	assert_int_equal(e[1].fd, -1);
	assert_int_equal(w.fd, fd);
	klog_fdcache_pin(c, &e[0], f->path[0]);
	klog_fdcache_unpin(c, &e[0]);
	assert_int_equal(w.fd, -1);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	for (int i = 0; i < 2; i++)
		klog_fdcache_drop(c, &e[i]);
	klog_fdcache_drop(c, &w);
	klog_fdcache_unref(c);
}

static void
test_no_bound_and_errors(void **state)
{
	struct fixture *f = *state;
	klog_fdcache_entry_t e[NFILES], gone;
	klog_fdcache_t *c;
	char path[160];

	assert_int_equal(klog_fdcache_new(0, &c), 0);
	for (int i = 0; i < NFILES; i++) {
		klog_fdcache_entry_init(&e[i], -1);
		klog_fdcache_pin(c, &e[i], f->path[i]);
		klog_fdcache_unpin(c, &e[i]);
	}
	assert_int_equal(klog_fdcache_open_count(c), NFILES);
	snprintf(path, sizeof(path), "%s/missing", f->dir);
	klog_fdcache_entry_init(&gone, -1);
	errno = 0;
	assert_int_equal(klog_fdcache_pin(c, &gone, path), -KLOG_ENOENT);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(gone.fd, -1);
	assert_int_equal(klog_fdcache_open_count(c), NFILES);
	for (int i = 0; i < NFILES; i++)
		klog_fdcache_drop(c, &e[i]);
	klog_fdcache_drop(c, &gone);
	klog_fdcache_unref(c);
}

/* ---- under the partition log ---- */

static klog_log_t *
open_log(const char *dir, const char *topic, klog_fdcache_t *c)
{
	klog_log_config_t cfg;
	klog_log_t *log = NULL;
	klog_err_t err = { 0 };
	int r;

	klog_log_config_default(&cfg);
	cfg.segment_bytes = SEG_BYTES;
	cfg.fdcache = c;
	r = klog_log_open(dir, topic, 0, &cfg, &log, &err);
	if (r != 0)
		fail_msg("open: %s", klog_err_text(&err, r));
	return log;
}

/* Messages first..first+n-1, one set each (so each segment holds
 * PER_SEG), payload bytes all equal to the message number. */
static void
fill(klog_log_t *log, uint32_t first, uint32_t n)
{
	uint8_t set[PLEN + KLOG_MSG_OVERHEAD], payload[PLEN];
	klog_err_t err = { 0 };
	int r;

	for (uint32_t m = first; m < first + n; m++) {
		memset(payload, (int)(m & 0xff), sizeof(payload));
		klog_entry_encode(set, payload, sizeof(payload));
		r = klog_log_append(log, set, sizeof(set), 1, NULL, &err);
		if (r != 0)
			fail_msg("append: %s", klog_err_text(&err, r));
	}
	r = klog_log_flush(log, &err);
	if (r != 0)
		fail_msg("flush: %s", klog_err_text(&err, r));
}

/* Read message m through a slice held in *sl; check its payload. */
static void
read_msg(klog_log_t *log, uint32_t m, klog_log_slice_t *sl)
{
	int64_t off = (int64_t)m * (PLEN + KLOG_MSG_OVERHEAD);
	uint8_t buf[PLEN + KLOG_MSG_OVERHEAD];
	klog_err_t err = { 0 };
	int r;

	r = klog_log_read(log, off, sizeof(buf), sl, &err);
	if (r != 0)
		fail_msg("read %u: %s", m, klog_err_text(&err, r));
	assert_int_equal(sl->len, sizeof(buf));
	assert_int_equal(pread(sl->fd, buf, sizeof(buf), sl->file_pos),
	    sizeof(buf));
	assert_int_equal(buf[KLOG_MSG_OVERHEAD], m & 0xff);
	assert_int_equal(buf[sizeof(buf) - 1], m & 0xff);
}

static void
test_log_reads_bounded(void **state)
{
	struct fixture *f = *state;
	klog_log_slice_t held[5], sl;
	const uint32_t nsegs = 12;
	klog_fdcache_t *c;
	klog_log_t *log;
	int base;

	assert_int_equal(klog_fdcache_new(2, &c), 0);
	base = open_fds();
	log = open_log(f->dir, "t", c);
	fill(log, 0, nsegs * PER_SEG);
	assert_int_equal(klog_log_segment_count(log), nsegs);
	/* The writer's rolled descriptors went to the cache at the flush. */
	assert_int_equal(klog_fdcache_open_count(c), 2);
	assert_int_equal(open_fds(), base + 1 + 2);
	/* Every message of every segment, twice round: at most the active
	 * segment and two others open after each read. */
	for (int round = 0; round < 2; round++)
		for (uint32_t m = 0; m < nsegs * PER_SEG; m++) {
			read_msg(log, m, &sl);
			klog_log_slice_release(&sl);
			assert_true(open_fds() <= base + 1 + 2);
		}
	/* Slices held in five segments: all open and readable at once. */
	for (uint32_t i = 0; i < 5; i++)
		read_msg(log, i * PER_SEG, &held[i]);
	assert_int_equal(klog_fdcache_open_count(c), 5);
	for (uint32_t i = 0; i < 5; i++)
		read_msg(log, i * PER_SEG + 1, &sl), klog_log_slice_release(&sl);
	for (uint32_t i = 0; i < 5; i++)
		klog_log_slice_release(&held[i]);
	assert_int_equal(klog_fdcache_open_count(c), 2);
	klog_log_close(log);
	assert_int_equal(klog_fdcache_open_count(c), 0);
	assert_int_equal(open_fds(), base);
	klog_fdcache_unref(c);
}

static void
test_logs_share_the_bound(void **state)
{
	struct fixture *f = *state;
	klog_log_t *a, *b;
	klog_log_slice_t sl;
	klog_fdcache_t *c;
	int base;

	assert_int_equal(klog_fdcache_new(3, &c), 0);
	base = open_fds();
	a = open_log(f->dir, "a", c);
	b = open_log(f->dir, "b", c);
	fill(a, 0, 5 * PER_SEG);
	fill(b, 0, 5 * PER_SEG);
	for (uint32_t m = 0; m < 5 * PER_SEG; m++) {
		read_msg(a, m, &sl);
		klog_log_slice_release(&sl);
		read_msg(b, m, &sl);
		klog_log_slice_release(&sl);
	}
	assert_int_equal(klog_fdcache_open_count(c), 3);
	assert_int_equal(open_fds(), base + 2 + 3);
	klog_log_close(a);
	klog_log_close(b);
	assert_int_equal(open_fds(), base);
	klog_fdcache_unref(c);
}

/* A slice outlives its log and the cache's other owners. */
static void
test_slice_outlives_log(void **state)
{
	struct fixture *f = *state;
	klog_log_slice_t sl;
	klog_fdcache_t *c;
	klog_log_t *log;
	uint8_t byte = 0;
	int base;

	assert_int_equal(klog_fdcache_new(1, &c), 0);
	base = open_fds();
	log = open_log(f->dir, "o", c);
	fill(log, 0, 3 * PER_SEG);
	read_msg(log, 1, &sl);
	klog_log_close(log);
	klog_fdcache_unref(c);
	assert_int_equal(pread(sl.fd, &byte, 1, sl.file_pos + KLOG_MSG_OVERHEAD),
	    1);
	assert_int_equal(byte, 1);
	klog_log_slice_release(&sl);
	assert_int_equal(open_fds(), base);
}

/* A part of a slice keeps its segment open and readable on its own,
 * past the slice it came from, the log and the cache's bound. */
static void
test_slice_part(void **state)
{
	struct fixture *f = *state;
	klog_log_slice_t sl, part;
	klog_fdcache_t *c;
	klog_log_t *log;
	uint8_t byte = 0;
	int base;

	assert_int_equal(klog_fdcache_new(1, &c), 0);
	base = open_fds();
	log = open_log(f->dir, "p", c);
	fill(log, 0, 3 * PER_SEG);
	read_msg(log, 1, &sl);
	klog_log_slice_part(&sl, KLOG_MSG_OVERHEAD, PLEN, &part);
	assert_int_equal(part.fd, sl.fd);
	assert_int_equal(part.file_pos, sl.file_pos + KLOG_MSG_OVERHEAD);
	assert_int_equal(part.offset, sl.offset + KLOG_MSG_OVERHEAD);
	assert_int_equal(part.len, PLEN);
	klog_log_slice_release(&sl);
	/* Reads in other segments, over the bound of 1, close the others
	 * but not the part's. */
	for (uint32_t m = PER_SEG; m < 3 * PER_SEG; m += PER_SEG)
		read_msg(log, m, &sl), klog_log_slice_release(&sl);
	klog_log_close(log);
	klog_fdcache_unref(c);
	assert_int_equal(pread(part.fd, &byte, 1, part.file_pos), 1);
	assert_int_equal(byte, 1);
	klog_log_slice_release(&part);
	assert_int_equal(open_fds(), base);
}

/* A rolled segment with unsynced bytes keeps its writer's descriptor
 * whatever the bound; the flush hands it over. */
static void
test_unsynced_not_closed(void **state)
{
	struct fixture *f = *state;
	uint8_t set[PLEN + KLOG_MSG_OVERHEAD], payload[PLEN] = { 0 };
	klog_fdcache_t *c;
	klog_log_t *log;
	klog_err_t err = { 0 };

	assert_int_equal(klog_fdcache_new(1, &c), 0);
	log = open_log(f->dir, "u", c);
	klog_entry_encode(set, payload, sizeof(payload));
	for (int i = 0; i < 4 * PER_SEG; i++)
		assert_int_equal(klog_log_append(log, set, sizeof(set), 1, NULL,
		    &err), 0);
	assert_int_equal(klog_log_segment_count(log), 4);
	assert_int_equal(klog_fdcache_open_count(c), 0);
	assert_int_equal(klog_log_flush(log, &err), 0);
	assert_int_equal(klog_fdcache_open_count(c), 1);
	klog_log_close(log);
	klog_fdcache_unref(c);
}

/*
 * A reader thread over every flushed message while this one appends,
 * rolls and flushes, all through a cache of one: every read gets its own
 * segment's bytes (a descriptor closed under a reader and reused would
 * give another file's).
 */
struct racer {
	klog_log_t *log;
	atomic_int stop;
	long reads;
};

static void *
race_reader(void *arg)
{
	struct racer *r = arg;
	klog_log_slice_t sl;
	uint32_t m = 0, seed = 1;
	int64_t end;

	while (!atomic_load(&r->stop)) {
		end = klog_log_flushed_end(r->log);
		if (end == 0)
			continue;
		seed = seed * 1103515245 + 12345;
		m = (seed >> 8) % (uint32_t)(end / (PLEN + KLOG_MSG_OVERHEAD));
		read_msg(r->log, m, &sl);
		klog_log_slice_release(&sl);
		r->reads++;
	}
	return NULL;
}

static void
test_race_reads_and_rolls(void **state)
{
	struct fixture *f = *state;
	struct racer r = { 0 };
	klog_fdcache_t *c;
	pthread_t t;

	assert_int_equal(klog_fdcache_new(1, &c), 0);
	r.log = open_log(f->dir, "r", c);
	atomic_init(&r.stop, 0);
	assert_int_equal(pthread_create(&t, NULL, race_reader, &r), 0);
	for (uint32_t m = 0; m < 3000; m += 3)
		fill(r.log, m, 3);
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	assert_true(r.reads > 0);
	assert_int_equal(klog_fdcache_open_count(c), 1);
	klog_log_close(r.log);
	klog_fdcache_unref(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_bound_and_lru),
		T(test_pinned_never_closed),
		T(test_adopt_and_unowned),
		T(test_no_bound_and_errors),
		T(test_log_reads_bounded),
		T(test_logs_share_the_bound),
		T(test_slice_outlives_log),
		T(test_slice_part),
		T(test_unsynced_not_closed),
		T(test_race_reads_and_rolls),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
