/*
 * Unit tests for the idempotent producer (producer.h, "idempotent";
 * lib/client/sendq.c takes the sequences, partmap.c the id): against the
 * fake broker, which appends what it gets and does not deduplicate, so
 * its log shows every copy the producer sent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fx/fakebroker.h"
#include "klog/client/producer.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

/* One magic-2 entry of a fake partition's log, as the producer sent it. */
typedef struct entry {
	const uint8_t *p;
	size_t len;
	klog_batch_t b;
} entry_t;

/* The entries of partition part's log (every one magic 2), up to max. */
static int
entries(fake_t *f, int part, entry_t *out, int max)
{
	const klog_buf_t *log = &f->log[part];
	size_t at = 0, size;
	int n = 0;

	while (at < log->len) {
		assert_true(at + 10 + KLOG_BATCH_BODY_HEADER <= log->len);
		size = 4 + klog_be32(log->data + at);
		assert_int_equal(log->data[at + 4], 2);
		assert_true(n < max);
		out[n].p = log->data + at;
		out[n].len = size;
		assert_int_equal(klog_batch_read(log->data + at + 10,
		    size - 10, &out[n].b), 0);
		n++;
		at += size;
	}
	return n;
}

static klog_producer_t *
open_idem(fake_t *f, klog_discovery_t **d, uint32_t batch)
{
	klog_producer_config_t cfg;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };

	assert_int_equal(klog_discovery_open_static(f->addr, 1000, d, &err),
	    0);
	klog_producer_config_default(&cfg);
	cfg.topic = "t";
	cfg.batch_records = batch;
	cfg.retry_for_ms = 3000;
	cfg.idempotent = 1;
	assert_int_equal(klog_producer_open(*d, &cfg, &p, &err), 0);
	return p;
}

static void
send_n(klog_producer_t *p, int from, int n)
{
	klog_err_t err = { 0 };
	char rec[32];

	for (int i = from; i < from + n; i++) {
		int len = snprintf(rec, sizeof(rec), "rec %d", i);

		assert_int_equal(klog_producer_send(p, rec, (size_t)len, NULL,
		    0), 0);
		while (klog_producer_busy(p))
			assert_true(klog_producer_poll(p, -1, 100, &err) >= 0);
	}
	assert_int_equal(klog_producer_drain(p, &err), 0);
}

/* Each partition's batches carry the id, the epoch and sequences that
 * follow one another from 0, per partition; plain records go as records. */
static void
test_sequences_per_partition(void **state)
{
	fake_t *f = fake_start(3, 0);
	klog_discovery_t *d;
	klog_producer_t *p = open_idem(f, &d, 7);
	entry_t e[64];
	int64_t pid;
	int16_t epoch;
	int n, total = 0;

	(void)state;
	assert_int_equal(klog_producer_id(p, &pid, &epoch), 1);
	assert_int_equal(pid, 42);
	assert_int_equal(epoch, 0);
	send_n(p, 0, 200);
	for (int part = 0; part < 3; part++) {
		int32_t next = 0;

		n = entries(f, part, e, 64);
		assert_true(n > 0);
		for (int i = 0; i < n; i++) {
			assert_int_equal(e[i].b.producer_id, 42);
			assert_int_equal(e[i].b.producer_epoch, 0);
			assert_int_equal(e[i].b.base_sequence, next);
			next += e[i].b.count;
			total += e[i].b.count;
		}
	}
	assert_int_equal(total, 200);
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

/* A batch appended and not acknowledged (the connection closed) goes
 * again byte for byte, with its sequence; the batches after it keep
 * theirs. */
static void
test_retry_same_bytes(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_discovery_t *d;
	klog_producer_t *p;
	entry_t e[64];
	int n, again = 0;
	int32_t next = 0;

	(void)state;
	f->drop_after_append_at = 3;
	p = open_idem(f, &d, 10);
	send_n(p, 0, 100);
	n = entries(f, 0, e, 64);
	for (int i = 0; i < n; i++) {
		if (i > 0 && e[i].b.base_sequence == e[i - 1].b.base_sequence) {
			/* The retry: the very bytes of the first copy. */
			assert_int_equal(e[i].len, e[i - 1].len);
			assert_memory_equal(e[i].p, e[i - 1].p, e[i].len);
			again++;
			continue;
		}
		assert_int_equal(e[i].b.base_sequence, next);
		next += e[i].b.count;
	}
	assert_int_equal(again, 1);
	assert_int_equal(next, 100);
	klog_producer_close(p);
	klog_discovery_close(d);
	fake_stop(f);
}

/* A broker without INIT_PRODUCER (its UNKNOWN_API): no producer. */
static void
test_old_broker(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_discovery_t *d = NULL;
	klog_producer_config_t cfg;
	klog_producer_t *p = NULL;
	klog_err_t err = { 0 };

	(void)state;
	f->old_broker = 1;
	assert_int_equal(klog_discovery_open_static(f->addr, 1000, &d, &err),
	    0);
	klog_producer_config_default(&cfg);
	cfg.topic = "t";
	cfg.idempotent = 1;
	assert_int_equal(klog_producer_open(d, &cfg, &p, &err),
	    -KLOG_EUNSUPPORTED);
	assert_null(p);
	assert_non_null(strstr(err.msg, "older than INIT_PRODUCER"));
	klog_discovery_close(d);
	fake_stop(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequences_per_partition),
		cmocka_unit_test(test_retry_same_bytes),
		cmocka_unit_test(test_old_broker),
	};

	return cmocka_run_group_tests_name("producer_idem", tests, NULL, NULL);
}
