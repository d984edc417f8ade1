/* Unit tests for producer state snapshots and the rebuild from a log
 * (lib/storage/psnap.c): the bytes, every check of the reader, the files
 * kept and dropped, the scan after the newest snapshot. */
#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define DIRFX_NAME "psnap"
#include "fx/dirfx.h"

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"
#include "klog/storage/psnap.h"
#include "klog/storage/pstate.h"
#include "klog/storage/record.h"

static klog_pstate_t *
fresh(void)
{
	klog_pstate_t *ps = NULL;

	assert_int_equal(klog_pstate_new(&ps), 0);
	return ps;
}

static void
record(klog_pstate_t *ps, int64_t pid, int16_t epoch, int32_t seq,
    int64_t offset)
{
	klog_batch_t b = { .producer_id = pid, .producer_epoch = epoch,
	    .base_sequence = seq, .count = 2, .max_timestamp = 5000 + pid };

	assert_int_equal(klog_pstate_update(ps, &b, offset, offset + 99), 0);
}

/* a and b hold the same producers. */
static void
assert_same(const klog_pstate_t *a, const klog_pstate_t *b)
{
	const klog_pstate_producer_t *p, *q;
	size_t pos = 0;

	assert_int_equal(klog_pstate_count(a), klog_pstate_count(b));
	while ((p = klog_pstate_next(a, &pos)) != NULL) {
		q = klog_pstate_get(b, p->id);
		assert_non_null(q);
		assert_int_equal(p->n, q->n);
		assert_int_equal(p->last_ts, q->last_ts);
		for (int i = 0; i < p->n; i++) {
			assert_int_equal(p->b[i].first_seq, q->b[i].first_seq);
			assert_int_equal(p->b[i].last_seq, q->b[i].last_seq);
			assert_int_equal(p->b[i].epoch, q->b[i].epoch);
			assert_int_equal(p->b[i].offset, q->b[i].offset);
			assert_int_equal(p->b[i].last_offset,
			    q->b[i].last_offset);
		}
	}
}

/* Three producers, one with seven batches (five kept). */
static klog_pstate_t *
sample(void)
{
	klog_pstate_t *ps = fresh();

	for (int i = 0; i < 7; i++)
		record(ps, 9, 1, i * 2, i * 100);
	record(ps, 3, 0, 0, 700);
	record(ps, 1000000007, 4, 0, 800);
	return ps;
}

static void
test_round_trip(void **state)
{
	klog_pstate_t *ps = sample(), *back = fresh();
	klog_buf_t buf;
	int64_t off;

	(void)state;
	klog_buf_init(&buf);
	klog_psnap_encode(ps, 900, &buf);
	assert_false(buf.failed);
	/* 22 + 3 producers (17 each) + 7 batches (26 each) */
	assert_int_equal(buf.len, 22 + 3 * 17 + 7 * 26);
	assert_memory_equal(buf.data, "KLPS\0\1", 6);
	assert_int_equal(klog_psnap_decode(buf.data, buf.len, back, &off), 0);
	assert_int_equal(off, 900);
	assert_same(ps, back);
	klog_buf_free(&buf);
	klog_pstate_free(back);
	klog_pstate_free(ps);
}

/* Decode buf[0..len) after fixing its CRC: the reader's answer. */
static int
decode_fixed(uint8_t *buf, size_t len)
{
	klog_pstate_t *ps = fresh();
	int64_t off;
	int rc;

	if (len >= 10)
		klog_put_be32(buf + 6, klog_crc32c(0, buf + 10, len - 10));
	rc = klog_psnap_decode(buf, len, ps, &off);
	klog_pstate_free(ps);
	return rc;
}

static void
test_reader_checks(void **state)
{
	klog_pstate_t *ps = sample();
	klog_buf_t buf;
	uint8_t *c;
	/* Where the first producer (id 3, ids sorted) and its batch are. */
	const size_t p0 = 22, b0 = 22 + 17;

	(void)state;
	klog_buf_init(&buf);
	klog_psnap_encode(ps, 900, &buf);
	c = malloc(buf.len + 1);
	assert_non_null(c);
	/* Every byte flipped: the CRC (or the magic) catches it. */
	for (size_t i = 0; i < buf.len; i++) {
		klog_pstate_t *t = fresh();
		int64_t off;

		memcpy(c, buf.data, buf.len);
		c[i] ^= 0x40;
		assert_int_equal(klog_psnap_decode(c, buf.len, t, &off),
		    -KLOG_ECORRUPT);
		klog_pstate_free(t);
	}
	/* Every cut, and a byte more. */
	for (size_t n = 0; n < buf.len; n++) {
		memcpy(c, buf.data, buf.len);
		assert_int_equal(decode_fixed(c, n), -KLOG_ECORRUPT);
	}
	memcpy(c, buf.data, buf.len);
	c[buf.len] = 0;
	assert_int_equal(decode_fixed(c, buf.len + 1), -KLOG_ECORRUPT);
	/* With a right CRC, each rule: */
#define BAD(what) do { memcpy(c, buf.data, buf.len); what; \
	assert_int_equal(decode_fixed(c, buf.len), -KLOG_ECORRUPT); } while (0)
	BAD(c[5] = 2);                                   /* version */
	BAD(c[0] = 'X');                                 /* magic */
	BAD(c[10] = 0x80);                               /* offset < 0 */
	BAD(klog_put_be32(c + 18, 4));                   /* count */
	BAD(klog_put_be32(c + 18, 2));
	BAD(c[p0] = 0x80);                               /* id < 0 */
	BAD(c[p0 + 16] = 0);                             /* no batch */
	BAD(c[p0 + 16] = 6);                             /* six batches */
	BAD(c[b0] = 0x80);                               /* epoch < 0 */
	BAD(c[b0 + 2] = 0x80);                           /* first seq < 0 */
	BAD(c[b0 + 6] = 0x80);                           /* last seq < 0 */
	BAD(c[b0 + 10] = 0x80);                          /* offset < 0 */
	BAD(klog_put_be32(c + b0 + 22, 0));              /* last < offset */
	BAD(klog_put_be32(c + 14, 700));                 /* offsets >= O */
	/* The next producer (id 9) has the same id as the first. */
	BAD(klog_put_be32(c + b0 + 26 + 4, 3));
	/* Its second batch's epoch differs from its first's. */
	BAD(c[b0 + 26 + 17 + 26 + 1] = 2);
	/* Its second batch starts before its first ends. */
	BAD(klog_put_be32(c + b0 + 26 + 17 + 26 + 10 + 4, 250));
#undef BAD
	memcpy(c, buf.data, buf.len);
	assert_int_equal(decode_fixed(c, buf.len), 0);
	free(c);
	klog_buf_free(&buf);
	klog_pstate_free(ps);
}

/* ---- files and the log ---- */

static klog_log_t *
open_log(const char *dir)
{
	klog_log_t *log = NULL;
	klog_err_t err = { 0 };
	int rc = klog_log_open(dir, "t", 0, NULL, &log, &err);

	if (rc != 0)
		fail_msg("open: %s", klog_err_text(&err, rc));
	return log;
}

/* Append a magic-2 entry of pid (-1: none) with n records, and a plain
 * line; returns the entry's offset. */
static int64_t
append(klog_log_t *log, int64_t pid, int32_t seq, int n)
{
	klog_batch_builder_t bb;
	klog_buf_t set;
	klog_err_t err;
	int64_t at;

	klog_buf_init(&set);
	klog_batch_begin(&bb, &set, 7000, pid, pid < 0 ? -1 : 0,
	    pid < 0 ? -1 : seq);
	for (int i = 0; i < n; i++)
		klog_batch_add(&bb, &set, &(klog_record_in_t){ "value", 5, NULL,
		    0, 7000, NULL, 0 });
	assert_int_equal(klog_batch_end(&bb, &set), 0);
	klog_buf_put(&set, "\0\0\0\7\0\0\0\0\0ab", 11);
	assert_int_equal(klog_log_append(log, set.data, set.len, 2, &at, &err),
	    0);
	assert_int_equal(klog_log_flush(log, &err), 0);
	klog_buf_free(&set);
	return at;
}

static klog_pstate_t *
load(klog_log_t *log, klog_psnap_info_t *info)
{
	klog_pstate_t *ps = fresh();
	klog_err_t err = { 0 };
	int rc = klog_psnap_load(log, ps, 8000, 100000, info, &err);

	if (rc != 0)
		fail_msg("load: %s", klog_err_text(&err, rc));
	return ps;
}

static int
snapshots(const char *dir)
{
	char cmd[256];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls %s/t-0 | grep -c '^[0-9]\\{20\\}"
	    "\\.snapshot$'", dir);
	assert_non_null(p = popen(cmd, "r"));
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static void
test_rebuild(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = open_log(f->dir);
	klog_pstate_t *live = fresh(), *ps;
	klog_psnap_info_t info;
	klog_err_t err;
	int64_t at, mid;
	char path[256];

	/* The log alone: scanned whole. */
	for (int i = 0; i < 4; i++) {
		at = append(log, 5, i * 3, 3);
		record(live, 5, 0, i * 3, at);
	}
	at = append(log, -1, 0, 2);
	ps = load(log, &info);
	assert_int_equal(info.loaded, -1);
	assert_int_equal(info.scanned, klog_log_end(log));
	assert_int_equal(klog_pstate_count(ps), 1);
	assert_int_equal(klog_pstate_get(ps, 5)->n, 4);
	assert_int_equal(klog_pstate_get(ps, 5)->b[3].last_seq, 11);
	/* A snapshot, then more: loaded, and only what follows scanned. */
	mid = klog_log_end(log);
	assert_int_equal(klog_psnap_write(log, ps, mid, 0, &err), 0);
	klog_pstate_free(ps);
	at = append(log, 6, 0, 1);
	ps = load(log, &info);
	assert_int_equal(info.loaded, mid);
	assert_int_equal(info.scanned, klog_log_end(log) - mid);
	assert_int_equal(klog_pstate_get(ps, 6)->b[0].offset, at);
	assert_int_equal(klog_pstate_get(ps, 5)->n, 4);
	/* Three snapshots written: two kept. */
	assert_int_equal(klog_psnap_write(log, ps, klog_log_end(log), 0,
	    &err), 0);
	assert_int_equal(klog_psnap_write(log, ps, klog_log_end(log), 0,
	    &err), 0);
	assert_int_equal(snapshots(f->dir), 2);
	klog_pstate_free(ps);
	/* The newest damaged: ignored, the older one loaded. */
	snprintf(path, sizeof(path), "%s/t-0/%020lld.snapshot", f->dir,
	    (long long)klog_log_end(log));
	assert_int_equal(truncate(path, 30), 0);
	ps = load(log, &info);
	assert_int_equal(info.bad, 1);
	assert_int_equal(info.loaded, mid);
	assert_int_equal(klog_pstate_count(ps), 2);
	klog_pstate_free(ps);
	/* One past the log's end (the log lost what it counted): deleted. */
	record(live, 77, 0, 0, 0);
	assert_int_equal(klog_psnap_write(log, live, klog_log_end(log) + 100, 0,
	    &err), 0);
	ps = load(log, &info);
	assert_null(klog_pstate_get(ps, 77));
	snprintf(path, sizeof(path), "%s/t-0/%020lld.snapshot", f->dir,
	    (long long)klog_log_end(log) + 100);
	assert_int_equal(access(path, F_OK), -1);
	/* Left: the damaged one at the end (the one at mid went when the
	 * third was written).  A cut to mid: it goes too. */
	assert_int_equal(snapshots(f->dir), 1);
	assert_int_equal(klog_psnap_drop_above(log, klog_log_end(log), &err),
	    0);
	assert_int_equal(snapshots(f->dir), 1);
	assert_int_equal(klog_psnap_drop_above(log, mid, &err), 0);
	assert_int_equal(snapshots(f->dir), 0);
	klog_pstate_free(ps);
	klog_pstate_free(live);
	klog_log_close(log);
}

static void
test_expired_at_load(void **state)
{
	struct fixture *f = *state;
	klog_log_t *log = open_log(f->dir);
	klog_pstate_t *ps = fresh();
	klog_psnap_info_t info;
	klog_err_t err = { 0 };

	(void)append(log, 5, 0, 1);      /* timestamp 7000 */
	assert_int_equal(klog_psnap_load(log, ps, 7000 + 1001, 1000, &info,
	    &err), 0);
	assert_int_equal(klog_pstate_count(ps), 0);
	klog_pstate_free(ps);
	klog_log_close(log);
}

/* Open descriptors of this process. */
static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* A roll's snapshot is written with no sync: the log's next flush syncs
 * it and lets its descriptor go; a log closed first lets it go too. */
static void
test_synced_at_flush(void **state)
{
	struct fixture *f = *state;
	int before = open_fds(), base;
	klog_log_t *log = open_log(f->dir);
	klog_pstate_t *ps;
	klog_psnap_info_t info;
	klog_err_t err = { 0 };

	(void)append(log, 5, 0, 1);
	ps = load(log, &info);
	base = open_fds();
	assert_int_equal(klog_psnap_write(log, ps, klog_log_end(log), 1,
	    &err), 0);
	assert_int_equal(snapshots(f->dir), 1);
	assert_int_equal(open_fds(), base + 1);
	klog_pstate_free(ps);
	ps = load(log, &info);
	assert_int_equal(info.loaded, klog_log_end(log));
	assert_non_null(klog_pstate_get(ps, 5));
	assert_int_equal(klog_log_flush(log, &err), 0);
	assert_int_equal(open_fds(), base);
	/* Five before a flush: the oldest let go unsynced, four wait. */
	for (int i = 0; i < 5; i++)
		assert_int_equal(klog_psnap_write(log, ps, klog_log_end(log),
		    1, &err), 0);
	assert_int_equal(open_fds(), base + 4);
	klog_log_close(log);
	assert_int_equal(open_fds(), before);
	klog_pstate_free(ps);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_reader_checks),
		cmocka_unit_test_setup_teardown(test_rebuild, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expired_at_load, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_synced_at_flush, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
