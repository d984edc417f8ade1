#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/client/mirror.h"
#include "klog/storage/format.h"
#include "fx/textfile.h"

static char dir[] = "/tmp/klog-mirror.XXXXXX";
static char path[256];

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/offsets", dir);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(path);
	return rmdir(dir);
}

static klog_record_in_t
value(const char *v)
{
	return (klog_record_in_t){ .value = v, .value_len = strlen(v),
	    .timestamp = KLOG_NO_TIMESTAMP };
}

/* The multiset: repeats counted, 0 a hash like any other, growth. */
static void
test_bag(void **state)
{
	klog_mirror_bag_t bag = { 0 };

	(void)state;
	assert_int_equal(klog_mirror_bag_take(&bag, 5), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(klog_mirror_bag_add(&bag, 5), 0);
	assert_int_equal(klog_mirror_bag_add(&bag, 0), 0);
	for (uint64_t h = 100; h < 2100; h++)
		assert_int_equal(klog_mirror_bag_add(&bag, h * 0x9e3779b9ULL),
		    0);
	assert_true(bag.count == 2004);
	for (int i = 0; i < 3; i++)
		assert_int_equal(klog_mirror_bag_take(&bag, 5), 1);
	assert_int_equal(klog_mirror_bag_take(&bag, 5), 0);
	assert_int_equal(klog_mirror_bag_take(&bag, 1), 0);
	assert_int_equal(klog_mirror_bag_take(&bag, 0), 1);
	assert_int_equal(klog_mirror_bag_take(&bag, 0), 0);
	for (uint64_t h = 100; h < 2100; h++)
		assert_int_equal(klog_mirror_bag_take(&bag,
		    h * 0x9e3779b9ULL), 1);
	assert_true(bag.count == 0);
	klog_mirror_bag_free(&bag);
}

/*
 * Entries of producer pid at offset base, a record each of values[], into
 * out; each record, as the consumer hands it out, given to fn.
 */
static void
each_stored(int64_t pid, int64_t base, const klog_record_in_t *recs,
    int n, void (*fn)(const klog_consumer_msg_t *, void *), void *arg)
{
	klog_batch_builder_t bb;
	klog_consumer_msg_t cm;
	klog_buf_t out;
	klog_iter_t it;
	klog_msg_t m;
	int got = 0;

	klog_buf_init(&out);
	klog_batch_begin(&bb, &out, 1000, pid, 0, 0);
	for (int i = 0; i < n; i++)
		klog_batch_add(&bb, &out, &recs[i]);
	assert_int_equal(klog_batch_end(&bb, &out), 0);
	klog_iter_init(&it, out.data, out.len, base, KLOG_ITER_DEEP, 0);
	while (klog_iter_next(&it, &m) == 1) {
		cm = (klog_consumer_msg_t){ 0, m.offset, m.next_offset,
		    m.payload, m.payload_len, m.key, m.key_len, m.timestamp,
		    m.headers, m.headers_len, m.header_count, m.batch,
		    m.batch_len };
		fn(&cm, arg);
		got++;
	}
	assert_int_equal(got, n);
	klog_iter_free(&it);
	klog_buf_free(&out);
}

static void
hash_of(const klog_consumer_msg_t *m, void *arg)
{
	uint64_t **h = arg;

	*(*h)++ = klog_mirror_hash_msg(m);
}

/* A record hashes the same to be sent and as stored, whatever its
 * timestamp; null and empty keys, values and header values differ. */
static void
test_hash(void **state)
{
	klog_header_t h[2] = {
		{ (const uint8_t *)"a", 1, (const uint8_t *)"x", 1 },
		{ (const uint8_t *)"b", 1, NULL, -1 },
	};
	klog_header_t h_empty[2] = { h[0],
	    { (const uint8_t *)"b", 1, (const uint8_t *)"", 0 } };
	klog_record_in_t recs[] = {
		{ "v", 1, "k", 1, 5, h, 2 },
		{ "v", 1, "k", 1, 6, h_empty, 2 },
		{ "v", 1, "", 0, 7, h, 2 },
		{ "v", 1, NULL, 0, 8, h, 2 },
		{ "", 0, NULL, 0, 9, NULL, 0 },
		{ NULL, 0, NULL, 0, 10, NULL, 0 },
		{ "v", 1, "k", 1, 99, h, 1 },
	};
	uint64_t stored[7], *p = stored;

	(void)state;
	each_stored(3, 0, recs, 7, hash_of, &p);
	for (int i = 0; i < 7; i++) {
		assert_true(stored[i] == klog_mirror_hash(&recs[i]));
		for (int j = 0; j < i; j++)
			assert_true(stored[i] != stored[j]);
	}
	recs[0].timestamp = 123456;
	assert_true(klog_mirror_hash(&recs[0]) == stored[0]);
}

struct recall {
	klog_mirror_t *m;
	int32_t index;
};

static void
recall(const klog_consumer_msg_t *msg, void *arg)
{
	struct recall *r = arg;

	assert_int_equal(klog_mirror_recall(r->m, r->index, msg), 0);
}

/* Send numbers first..first+n-1 acknowledged at offset, set_len bytes. */
static void
done(klog_mirror_t *m, uint64_t first, uint32_t n, int32_t partition,
    int64_t offset, size_t set_len)
{
	klog_producer_done_t d = { first, n, 1, 0, partition, offset, NULL,
	    set_len };

	assert_int_equal(klog_mirror_done(m, &d), 0);
}

/* Note a record of S partition 0 at own, next offset next: 1 skipped. */
static int
note_at(klog_mirror_t *m, const char *v, int64_t own, int64_t next)
{
	klog_record_in_t r = value(v);
	klog_err_t err = { 0 };
	int rc = klog_mirror_note(m, &r, "S", 0, own, next, &err);

	assert_true(rc >= 0);
	if (rc == 0)
		assert_int_equal(klog_mirror_sent(m), 0);
	return rc;
}

/* The same of a plain message ending at next. */
static int
note(klog_mirror_t *m, const char *v, int64_t next)
{
	return note_at(m, v, next - 1, next);
}

#define HEAD "# klog-consume offsets: topic, partition, next offset\n"

/*
 * A restart: F's line of producer 7 read back; its records past 0:100
 * recalled (not producer 9's, nor 7's before 100); the new line saved at
 * begin with the old one carried; then, while catching up, nothing past
 * the first record skipped settles; once R is empty and its last record
 * settled, the old line goes.  Another topic's line and a person's note
 * stay.
 */
static void
test_restart(void **state)
{
	klog_record_in_t ab[2] = { value("a"), value("b") }, a = value("a");
	klog_mirror_t *m = NULL;
	klog_err_t err = { 0 };
	struct recall r = { NULL, 0 };
	int64_t ends[2] = { 200, 300 };
	klog_mirror_counts_t c;

	(void)state;
	textfile_write(path, HEAD "# mine\n"
	    "# klog-produce: topic E producer 1 0:5\n"
	    "# klog-produce: topic D producer 7 0:100\n"
	    "S\t0\t10\n");
	assert_int_equal(klog_mirror_open(path, "D", 1, &m, &err), 0);
	r.m = m;
	each_stored(7, 100, ab, 2, recall, &r);
	each_stored(9, 140, &a, 1, recall, &r);
	each_stored(7, 50, &a, 1, recall, &r);
	r.index = 1;
	each_stored(7, 150, &a, 1, recall, &r);
	assert_int_equal(klog_mirror_begin(m, 12, ends, 2, &err), 0);
	assert_string_equal(textfile_read(path), HEAD "# mine\n"
	    "# klog-produce: topic E producer 1 0:5\n"
	    "# klog-produce: topic D producer 7 0:100\n"
	    "# klog-produce: topic D producer 12 0:200 1:300\n"
	    "S\t0\t10\n");
	/* x (1), a skipped (2), y (3): done, but only x settles. */
	assert_int_equal(note(m, "x", 11), 0);
	assert_int_equal(note(m, "a", 12), 1);
	assert_int_equal(note(m, "y", 13), 0);
	done(m, 1, 2, 0, 200, 40);
	assert_int_equal(klog_mirror_settle(m, &err), 0);
	assert_string_equal(textfile_read(path), HEAD "# mine\n"
	    "# klog-produce: topic E producer 1 0:5\n"
	    "# klog-produce: topic D producer 7 0:100\n"
	    "# klog-produce: topic D producer 12 0:200 1:300\n"
	    "S\t0\t11\n");
	/* b skipped (4): R is empty, everything settles, 7's line goes. */
	assert_int_equal(note(m, "b", 14), 1);
	assert_int_equal(note(m, "b", 15), 0);
	assert_int_equal(klog_mirror_settle(m, &err), 0);
	assert_string_equal(textfile_read(path), HEAD "# mine\n"
	    "# klog-produce: topic E producer 1 0:5\n"
	    "# klog-produce: topic D producer 12 0:240 1:300\n"
	    "S\t0\t14\n");
	done(m, 3, 1, 1, 300, 30);
	assert_int_equal(klog_mirror_settle(m, &err), 0);
	assert_string_equal(textfile_read(path), HEAD "# mine\n"
	    "# klog-produce: topic E producer 1 0:5\n"
	    "# klog-produce: topic D producer 12 0:240 1:330\n"
	    "S\t0\t15\n");
	klog_mirror_counts(m, &c);
	assert_true(c.found == 2 && c.skipped == 2 && c.left == 0);
	klog_mirror_close(m);
}

/* Equal records: as many skipped as were found, the rest sent; the
 * skips inside a request's numbers map each record to its own. */
static void
test_repeats(void **state)
{
	klog_record_in_t aa[3] = { value("a"), value("a"), value("z") };
	klog_mirror_t *m = NULL;
	klog_err_t err = { 0 };
	struct recall r = { NULL, 0 };
	int64_t end = 0;

	(void)state;
	textfile_write(path, "# klog-produce: topic D producer 4 0:0\n");
	assert_int_equal(klog_mirror_open(path, "D", 1, &m, &err), 0);
	r.m = m;
	each_stored(4, 0, aa, 2, recall, &r);
	assert_int_equal(klog_mirror_begin(m, 5, &end, 1, &err), 0);
	/* a a a z: two skipped, the third a and z sent as 1 and 2. */
	assert_int_equal(note(m, "a", 1), 1);
	assert_int_equal(note(m, "a", 2), 1);
	assert_int_equal(note(m, "a", 3), 0);
	assert_int_equal(note(m, "z", 4), 0);
	done(m, 1, 2, 0, 64, 36);
	assert_int_equal(klog_mirror_settle(m, &err), 0);
	assert_string_equal(textfile_read(path), HEAD
	    "# klog-produce: topic D producer 5 0:100\n"
	    "S\t0\t4\n");
	klog_mirror_close(m);
}

/*
 * A run settled inside a source batch at 100 (its records' offsets are
 * their next ones, the last one's next is past it): F says how many of
 * its records are copied; the next run, which reads the batch again from
 * its start, skips that many, and F keeps saying so until a record past
 * them settles.
 */
static void
test_inside(void **state)
{
	klog_mirror_t *m = NULL;
	klog_err_t err = { 0 };
	klog_mirror_counts_t c;
	int64_t end = 7;

	(void)state;
	unlink(path);
	assert_int_equal(klog_mirror_open(path, "D", 1, &m, &err), 0);
	assert_int_equal(klog_mirror_begin(m, 3, &end, 1, &err), 0);
	assert_int_equal(note(m, "p", 100), 0);
	assert_int_equal(note_at(m, "r1", 100, 100), 0);
	assert_int_equal(note_at(m, "r2", 100, 100), 0);
	assert_int_equal(note_at(m, "r3", 100, 100), 0);
	done(m, 1, 3, 0, 7, 50);
	assert_int_equal(klog_mirror_settle(m, &err), 0);
	assert_string_equal(textfile_read(path), HEAD
	    "# klog-produce: topic D producer 3 0:57\n"
	    "# klog-produce: topic D inside S 0:100:2\n"
	    "S\t0\t100\n");
	klog_mirror_close(m);
	/* The next run: r1 and r2 skipped; killed with r1 settled. */
	assert_int_equal(klog_mirror_open(path, "D", 1, &m, &err), 0);
	assert_int_equal(klog_mirror_begin(m, 4, &end, 1, &err), 0);
	klog_mirror_counts(m, &c);
	assert_true(c.found == 0 && c.inside == 2);
	assert_int_equal(note_at(m, "r1", 100, 100), 1);
	assert_int_equal(klog_mirror_settle(m, &err), 0);
	assert_string_equal(textfile_read(path), HEAD
	    "# klog-produce: topic D producer 4 0:7\n"
	    "# klog-produce: topic D inside S 0:100:2\n"
	    "S\t0\t100\n");
	klog_mirror_close(m);
	/* And the next: r1, r2 skipped, r3 and the last sent. */
	assert_int_equal(klog_mirror_open(path, "D", 1, &m, &err), 0);
	assert_int_equal(klog_mirror_begin(m, 5, &end, 1, &err), 0);
	assert_int_equal(note_at(m, "r1", 100, 100), 1);
	assert_int_equal(note_at(m, "r2", 100, 100), 1);
	assert_int_equal(note_at(m, "r3", 100, 100), 0);
	done(m, 1, 1, 0, 7, 20);
	assert_int_equal(klog_mirror_settle(m, &err), 0);
	assert_string_equal(textfile_read(path), HEAD
	    "# klog-produce: topic D producer 5 0:27\n"
	    "# klog-produce: topic D inside S 0:100:3\n"
	    "S\t0\t100\n");
	assert_int_equal(note_at(m, "r4", 100, 180), 0);
	done(m, 2, 1, 0, 27, 20);
	assert_int_equal(klog_mirror_settle(m, &err), 0);
	assert_string_equal(textfile_read(path), HEAD
	    "# klog-produce: topic D producer 5 0:47\n"
	    "S\t0\t180\n");
	klog_mirror_counts(m, &c);
	assert_true(c.again == 2 && c.skipped == 0);
	klog_mirror_close(m);
	/* A source that starts elsewhere skips nothing. */
	textfile_write(path, "# klog-produce: topic D inside S 0:100:2\n");
	assert_int_equal(klog_mirror_open(path, "D", 1, &m, &err), 0);
	assert_int_equal(klog_mirror_begin(m, 6, &end, 1, &err), 0);
	assert_int_equal(note_at(m, "q", 300, 300), 0);
	assert_int_equal(note_at(m, "r1", 100, 100), 0);
	klog_mirror_close(m);
}

/* Without idempotence the topic's lines go at the first save; a bad line
 * of the topic is refused at open, another topic's is not read. */
static void
test_plain_and_bad(void **state)
{
	klog_mirror_t *m = NULL;
	klog_err_t err = { 0 };
	char want[512];

	(void)state;
	textfile_write(path, "# klog-produce: topic D producer 7 0:100\n"
	    "# klog-produce: topic E producer x\n");
	assert_int_equal(klog_mirror_open(path, "D", 0, &m, &err), 0);
	assert_int_equal(note(m, "a", 9), 0);
	done(m, 1, 1, 0, 0, 10);
	assert_int_equal(klog_mirror_settle(m, &err), 0);
	assert_string_equal(textfile_read(path), HEAD
	    "# klog-produce: topic E producer x\n"
	    "S\t0\t9\n");
	klog_mirror_close(m);
	assert_int_equal(klog_mirror_open(path, "E", 1, &m, &err),
	    -KLOG_ECORRUPT);
	snprintf(want, sizeof(want), "%s: mirror state of topic \"E\": "
	    "invalid", path);
	assert_string_equal(err.msg, want);
	textfile_write(path, "# klog-produce: topic E producer 3 0\n");
	assert_int_equal(klog_mirror_open(path, "E", 1, &m, &err),
	    -KLOG_ECORRUPT);
	textfile_write(path, "# klog-produce: topic E inside S 0:5\n");
	assert_int_equal(klog_mirror_open(path, "E", 1, &m, &err),
	    -KLOG_ECORRUPT);
	textfile_write(path, "# klog-produce: topic E elsewhere\n");
	assert_int_equal(klog_mirror_open(path, "E", 1, &m, &err),
	    -KLOG_ECORRUPT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bag),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_repeats),
		cmocka_unit_test(test_inside),
		cmocka_unit_test(test_plain_and_bad),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
