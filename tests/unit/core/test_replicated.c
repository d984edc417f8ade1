/*
 * Unit tests for lib/core/replicated.c (and the replicated paths of lib/core/core.c): a
 * real core over a real store and event loop, its functions called
 * directly as lib/broker/native.c calls them (no network, no ZooKeeper), with
 * replication hooks of the tests' own: an isr_change that records its
 * calls, returns what a test says and, unless a test keeps it in flight,
 * tells its outcome at once; and a follower_flushed that counts.
 * Parked requests are answered through a finish that records them; the
 * loop runs (before_sleep / on_wake as lib/broker/broker.c sets them) until the
 * flushes asked for are done.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <fcntl.h>
#include <limits.h>
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
#include "klog/core/core.h"
#include "klog/core/replica.h"
#include "klog/core/replicated.h"
#include "klog/net/loop.h"
#include "klog/net/outq.h"
#include "klog/proto/proto.h"
#include "klog/storage/epochs.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"
#include "klog/storage/store.h"

#define LAG_MS 600000           /* no follower lags by the clock here */
#define MAX_CALLS 8
#define MAX_DONE 16

struct isr_call {
	char topic[32];
	int partition;
	int32_t epoch;
	int32_t isr[KLOG_REPLICA_MAX + 1];
	int n;
};

struct fx {
	char dir[64];
	klog_store_t *store;
	klog_loop_t *loop;
	klog_core_t *core;
	klog_outq_t q;            /* the parks' "connection" */
	int wakes;
	/* finish() */
	int finished;
	klog_core_park_t *done[MAX_DONE];
	/* isr_change */
	int isr_rc;
	int isr_async;            /* the write's outcome comes later */
	int nisr;
	struct isr_call isr[MAX_CALLS];
	/* follower_flushed */
	int flushed;
	klog_core_part_t *flushed_part;
	/* the patch of a failed staged write */
	int patched;
	char logs[16384];
};

#include "fx/corehooks.h"

/* ---- hooks (and fx/corehooks.h's) ---- */

static int
fake_isr(void *arg, const char *topic, int partition, int32_t epoch,
    const int32_t *isr, int n)
{
	struct fx *f = arg;
	struct isr_call *c;

	assert_true(f->nisr < MAX_CALLS);
	c = &f->isr[f->nisr++];
	snprintf(c->topic, sizeof(c->topic), "%s", topic);
	c->partition = partition;
	c->epoch = epoch;
	assert_true(n >= 0 && n <= KLOG_REPLICA_MAX + 1);
	memcpy(c->isr, isr, (size_t)n * sizeof(*isr));
	c->n = n;
	/* Answered at once, as a ZooKeeper reply could be: from within. */
	if (f->isr_rc == 0 && !f->isr_async)
		klog_core_isr_written(f->core, topic, partition, epoch, isr, n,
		    0);
	return f->isr_rc;
}

static void
fake_flushed(void *arg, klog_core_part_t *p)
{
	struct fx *f = arg;

	f->flushed++;
	f->flushed_part = p;
}

static void
patch(void *arg, size_t pos, int16_t error)
{
	struct fx *f = arg;

	(void)pos;
	(void)error;
	f->patched++;
}

/* ---- fixture ---- */

static void
store_open(struct fx *f)
{
	klog_store_config_t sc;
	klog_err_t err = { 0 };
	int rc;

	klog_store_config_default(&sc);
	sc.data_dir = f->dir;
	if ((rc = klog_store_open(&sc, &f->store, &err)) < 0)
		fail_msg("store: %s", klog_err_text(&err, rc));
}

static void
store_close(struct fx *f, int clean)
{
	klog_err_t err = { 0 };
	int rc;

	if ((rc = klog_store_close(f->store, clean, &err)) < 0)
		fail_msg("store close: %s", klog_err_text(&err, rc));
	f->store = NULL;
}

/* A store, a loop and a core on them, eager flushes, broker 1. */
static void
fx_open(struct fx *f)
{
	klog_core_config_t cc = {
		.default_partitions = 1,
		.auto_create = 1,
		.max_message_bytes = 1 << 20,
		.log = { capture, f, KLOG_LEVEL_DEBUG },
		.broker_id = 1,
		.replica_lag_ms = LAG_MS,
	};
	klog_err_t err = { 0 };
	int rc;

	store_open(f);
	assert_int_equal(klog_loop_create(&f->loop), 0);
	if ((rc = klog_core_new(f->loop, f->store, &cc, &f->core, &err)) < 0)
		fail_msg("core: %s", klog_err_text(&err, rc));
	klog_core_set_replication(f->core, LAG_MS, fake_isr, f, fake_flushed,
	    f);
	klog_loop_set_before_sleep(f->loop, before_sleep, f);
	klog_loop_set_wake(f->loop, on_wake, f);
	klog_outq_init(&f->q);
}

/* Parks go with their queue (as with a closed connection), then the rest. */
static void
fx_close(struct fx *f, int clean)
{
	if (f->core == NULL)
		return;
	klog_outq_free(&f->q);
	f->finished = 0;
	klog_core_free(f->core);
	f->core = NULL;
	store_close(f, clean);
	klog_loop_free(f->loop);
	f->loop = NULL;
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "corerep"));
	fx_open(f);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	fx_close(f, 1);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* ---- helpers ---- */

static klog_str_t
str(const char *s)
{
	return (klog_str_t){ s, (uint16_t)strlen(s) };
}

static klog_core_part_t *
rpart(struct fx *f, const char *topic)
{
	klog_core_part_t *p = klog_core_rpart(f->core, topic, 0);

	assert_non_null(p);
	return p;
}

static klog_log_t *
plog(struct fx *f, const char *topic)
{
	return klog_core_part_log(rpart(f, topic));
}

/* Run the loop until log's flushed end is its end and the flusher's
 * wakeup has been handled (on_wake, and with it the core's answers). */
static void
settle(struct fx *f, klog_log_t *log)
{
	int w0 = f->wakes;

	for (int i = 0; i < 500; i++) {
		if (f->wakes > w0 &&
		    klog_log_flushed_end(log) == klog_log_end(log))
			return;
		assert_true(klog_loop_run_once(f->loop, 10) >= 0);
	}
	fail_msg("no flush: end %lld, flushed %lld", (long long)
	    klog_log_end(log), (long long)klog_log_flushed_end(log));
}

static klog_core_reply_t
reply(struct fx *f)
{
	return (klog_core_reply_t){ &f->q, finish, f, NULL };
}

static uint8_t sets[8][64];

/* Produce one message of text to topic partition 0 with acks; parked as
 * native.c does when it must wait (*pk), then committed.  The item is
 * copied to *it (as it was before the park). */
static int
produce(struct fx *f, const char *topic, const char *text, int acks,
    klog_core_item_t *it, klog_core_park_t **pk)
{
	static int next;
	uint8_t *set = sets[next++ % 8];
	klog_produce_part_t pp = { str(topic), 0, set, 0 };
	klog_produce_req_t req = { (int16_t)acks, 1000, 1, &pp };
	klog_core_reply_t r = reply(f);
	int waits;

	pp.set_len = (uint32_t)klog_entry_encode(set, text, strlen(text));
	waits = klog_core_produce(f->core, &req, NULL, NULL, it);
	*pk = NULL;
	if (waits > 0) {
		*pk = klog_core_park(f->core, KLOG_CORE_PRODUCE, 7, it, 1, 0,
		    &r);
		assert_non_null(*pk);
	}
	klog_core_commit(f->core, patch, f);
	return waits;
}

/* A produce that must be answered at once; its error, *offset set. */
static int16_t
produce_now(struct fx *f, const char *topic, const char *text, int acks,
    int64_t *offset)
{
	klog_core_item_t it;
	klog_core_park_t *pk;

	assert_int_equal(produce(f, topic, text, acks, &it, &pk), 0);
	assert_null(pk);
	if (offset != NULL)
		*offset = it.offset;
	return it.error;
}

/* A consumer fetch of partition 0 at offset, answered at once: r. */
static void
fetch_now(struct fx *f, const char *topic, int64_t offset,
    klog_core_read_t *r)
{
	klog_fetch_part_t fp = { str(topic), 0, offset, 1 << 20 };
	klog_fetch_req_t req = { 0, 0, 1, &fp };
	klog_core_item_t it;

	assert_int_equal(klog_core_fetch(f->core, &req, &it), 1);
	klog_core_fetch_read(f->core, &it, 1 << 20, r);
}

/* OFFSETS "latest" of partition 0, answered at once: the count, out[]. */
static int16_t
offsets_latest(struct fx *f, const char *topic, int64_t *out, int *count)
{
	klog_offsets_part_t op = { str(topic), 0, KLOG_OFFSET_LATEST, 8 };
	klog_core_item_t it;

	assert_int_equal(klog_core_offsets(f->core, &op, 1, &it), 0);
	return klog_core_offsets_read(&it, out, count);
}

static klog_rfetch_req_t
rreq(const char *topic, int32_t id, int32_t epoch, int64_t offset,
    int64_t flushed, int32_t last_epoch, int32_t max_wait)
{
	return (klog_rfetch_req_t){ .replica_id = id, .leader_epoch = epoch,
	    .max_wait_ms = max_wait, .topic = str(topic), .partition = 0,
	    .offset = offset, .flushed = flushed, .last_epoch = last_epoch,
	    .max_bytes = 1 << 20 };
}

/* A follower's REPLICA_FETCH that is answered at once: the item's error. */
static int16_t
rfetch_now(struct fx *f, const klog_rfetch_req_t *q, klog_core_item_t *it,
    klog_rfetch_resp_t *resp)
{
	assert_int_equal(klog_core_rfetch(f->core, q, it, resp), 1);
	return it->error;
}

static void
lead(struct fx *f, const char *topic, int32_t epoch, const int32_t *rep,
    int nrep, const int32_t *isr, int nisr, int min)
{
	klog_err_t err = { 0 };
	int rc = klog_core_lead(f->core, topic, 0, 1, epoch, rep, nrep, isr,
	    nisr, min, &err);

	if (rc < 0)
		fail_msg("lead: %s", klog_err_text(&err, rc));
}

/* The text of a file in partition 0's directory of topic ("" if none,
 * and *exists 0). */
static void
read_part_file(struct fx *f, const char *topic, const char *name,
    char *buf, size_t size, int *exists)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s-0/%s", f->dir, topic, name);
	buf[0] = '\0';
	if ((fd = open(path, O_RDONLY)) < 0) {
		*exists = 0;
		return;
	}
	*exists = 1;
	n = read(fd, buf, size - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
}

static void
assert_epochs_file(struct fx *f, const char *topic, const char *want)
{
	char buf[512];
	int exists;

	read_part_file(f, topic, KLOG_EPOCHS_FILE, buf, sizeof(buf), &exists);
	assert_true(exists);
	assert_string_equal(buf, want);
}

static int
behind_file(struct fx *f, const char *topic)
{
	char buf[16];
	int exists;

	read_part_file(f, topic, KLOG_EPOCHS_BEHIND_FILE, buf, sizeof(buf),
	    &exists);
	return exists;
}

static void
assert_isr(klog_core_part_t *p, const int32_t *want, int n)
{
	int32_t got[KLOG_REPLICA_MAX + 1];

	assert_int_equal(klog_replica_isr(klog_core_part_replica(p), got), n);
	for (int i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

static void
assert_call(const struct isr_call *c, const char *topic, int32_t epoch,
    const int32_t *want, int n)
{
	assert_string_equal(c->topic, topic);
	assert_int_equal(c->partition, 0);
	assert_int_equal(c->epoch, epoch);
	assert_int_equal(c->n, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(c->isr[i], want[i]);
}

/* "hello" and friends: 5-byte payloads, 14-byte entries. */
#define E 14

static const int32_t R3[] = { 1, 2, 3 };

/* ---- 1. replicated, no role ---- */

static void
test_replicated_without_role(void **state)
{
	struct fx *f = *state;
	klog_err_t err = { 0 };
	klog_core_read_t r;
	klog_log_t *log;
	int64_t off, v[8];
	int n;

	assert_int_equal(klog_core_create_topic(f->core, "plain", 1, &err), 0);
	assert_int_equal(klog_core_replicated(f->core, "rt", 0, 1, &err), 0);
	assert_int_equal(klog_core_part_replica(rpart(f, "rt"))->role,
	    KLOG_REPLICA_OFFLINE);
	assert_null(klog_core_rpart(f->core, "plain", 0));

	/* Produce, either acks. */
	assert_int_equal(produce_now(f, "rt", "hello", KLOG_ACKS_LEADER, &off),
	    KLOG_WIRE_NOT_LEADER);
	assert_int_equal(off, -1);
	assert_int_equal(produce_now(f, "rt", "hello", KLOG_ACKS_ALL, &off),
	    KLOG_WIRE_NOT_LEADER);
	assert_int_equal(off, -1);
	assert_int_equal(klog_log_end(plog(f, "rt")), 0);
	/* Fetch and offsets. */
	fetch_now(f, "rt", 0, &r);
	assert_int_equal(r.error, KLOG_WIRE_NOT_LEADER);
	assert_false(r.has_slice);
	assert_int_equal(offsets_latest(f, "rt", v, &n), KLOG_WIRE_NOT_LEADER);
	assert_int_equal(n, 0);

	/* The other topic is an ordinary one. */
	assert_int_equal(produce_now(f, "plain", "hello", KLOG_ACKS_LEADER,
	    &off), KLOG_WIRE_NONE);
	assert_int_equal(off, 0);
	assert_int_equal(produce_now(f, "plain", "world", KLOG_ACKS_LEADER,
	    &off), KLOG_WIRE_NONE);
	assert_int_equal(off, E);
	/* The store hands out the core's log. */
	assert_int_equal(klog_store_get(f->store, "plain", 0, 0, &log, &err),
	    0);
	settle(f, log);
	fetch_now(f, "plain", 0, &r);
	assert_int_equal(r.error, KLOG_WIRE_NONE);
	assert_int_equal(r.log_end, 2 * E);
	assert_true(r.has_slice);
	assert_int_equal(r.slice.len, 2 * E);
	klog_log_slice_release(&r.slice);
	assert_int_equal(offsets_latest(f, "plain", v, &n), KLOG_WIRE_NONE);
	assert_int_equal(n, 2);
	assert_int_equal(v[0], 2 * E);
	assert_int_equal(v[1], 0);
	assert_int_equal(f->nisr, 0);
}

/* ---- 2. the leader ---- */

static void
test_lead_records_epoch_and_refuses_below_min(void **state)
{
	struct fx *f = *state;
	const int32_t isr[] = { 1 };
	int64_t off;

	lead(f, "rt", 3, R3, 3, isr, 1, 2);
	/* On disk as lead returns, before any produce. */
	assert_epochs_file(f, "rt", "klog-epochs 1\n3 0\n");
	assert_int_equal(klog_core_part_replica(rpart(f, "rt"))->role,
	    KLOG_REPLICA_LEADER);
	assert_int_equal(klog_core_part_replica(rpart(f, "rt"))->epoch, 3);

	/* ISR 1 < min 2: acks=all is refused and appends nothing. */
	assert_int_equal(produce_now(f, "rt", "hello", KLOG_ACKS_ALL, &off),
	    KLOG_WIRE_NOT_ENOUGH_REPLICAS);
	assert_int_equal(off, -1);
	assert_int_equal(klog_log_end(plog(f, "rt")), 0);
	assert_int_equal(f->patched, 0);
	/* acks=1 is the leader's alone. */
	assert_int_equal(produce_now(f, "rt", "hello", KLOG_ACKS_LEADER, &off),
	    KLOG_WIRE_NONE);
	assert_int_equal(off, 0);
	assert_int_equal(klog_log_end(plog(f, "rt")), E);

	/* A new epoch starts at the log end: 3 wrote [0, 14). */
	settle(f, plog(f, "rt"));
	lead(f, "rt", 4, R3, 3, isr, 1, 2);
	assert_epochs_file(f, "rt", "klog-epochs 1\n3 0\n4 14\n");
}

static void
test_acks_all_waits_for_the_isr(void **state)
{
	struct fx *f = *state;
	klog_core_item_t it;
	klog_core_park_t *pk;
	klog_rfetch_resp_t resp;
	klog_rfetch_req_t q;
	klog_core_read_t r;
	klog_replica_t *rep;
	klog_log_t *log;
	int64_t v[8], off;
	int n;

	lead(f, "rt", 1, R3, 3, R3, 3, 2);
	log = plog(f, "rt");
	rep = klog_core_part_replica(rpart(f, "rt"));
	assert_int_equal(produce(f, "rt", "hello", KLOG_ACKS_ALL, &it, &pk),
	    1);
	assert_non_null(pk);
	assert_int_equal(it.offset, 0);
	assert_int_equal(klog_log_end(log), E);
	settle(f, log);
	/* On the leader's disk, on no follower's: not answered. */
	assert_int_equal(klog_log_flushed_end(log), E);
	assert_int_equal(f->finished, 0);
	assert_int_equal(rep->hw, 0);
	/* Consumers see the committed end, not the flushed one. */
	fetch_now(f, "rt", 0, &r);
	assert_int_equal(r.error, KLOG_WIRE_NONE);
	assert_int_equal(r.log_end, 0);
	assert_false(r.has_slice);
	assert_int_equal(offsets_latest(f, "rt", v, &n), KLOG_WIRE_NONE);
	assert_int_equal(n, 1);
	assert_int_equal(v[0], 0);
	/* A fetch past the committed end but inside the log: empty, no
	 * error. */
	fetch_now(f, "rt", E, &r);
	assert_int_equal(r.error, KLOG_WIRE_NONE);
	assert_false(r.has_slice);

	/* Follower 2 has it on disk: the HW waits for 3. */
	q = rreq("rt", 2, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(rep->hw, 0);
	assert_int_equal(f->finished, 0);
	/* Follower 3 too: HW 14, the produce is answered. */
	q = rreq("rt", 3, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(rep->hw, E);
	assert_int_equal(f->finished, 1);
	assert_ptr_equal(f->done[0], pk);
	assert_int_equal(pk->items[0].error, KLOG_WIRE_NONE);
	assert_int_equal(pk->items[0].offset, 0);
	klog_core_rfetch_state(f->core, &it, &resp);
	assert_int_equal(resp.error, KLOG_WIRE_NONE);
	assert_int_equal(resp.hw, E);
	assert_int_equal(resp.leader_epoch, 1);
	assert_int_equal(resp.log_end, E);
	assert_int_equal(f->nisr, 0);

	/* acks=1 on top: flushed 28, committed 14. */
	assert_int_equal(produce_now(f, "rt", "world", KLOG_ACKS_LEADER, &off),
	    KLOG_WIRE_NONE);
	assert_int_equal(off, E);
	settle(f, log);
	assert_int_equal(klog_log_flushed_end(log), 2 * E);
	fetch_now(f, "rt", 0, &r);
	assert_int_equal(r.error, KLOG_WIRE_NONE);
	assert_int_equal(r.log_end, E);
	assert_true(r.has_slice);
	assert_int_equal(r.slice.len, E);
	klog_log_slice_release(&r.slice);
	assert_int_equal(offsets_latest(f, "rt", v, &n), KLOG_WIRE_NONE);
	assert_int_equal(n, 2);
	assert_int_equal(v[0], E);
	assert_int_equal(v[1], 0);
}

static void
test_long_poll_waits_for_the_hw(void **state)
{
	struct fx *f = *state;
	const int32_t r12[] = { 1, 2 };
	klog_fetch_part_t fp = { str("rt"), 0, 0, 1 << 20 };
	klog_fetch_req_t req = { 5000, 1, 1, &fp };
	klog_core_reply_t rp = reply(f);
	klog_core_item_t it;
	klog_core_park_t *pk;
	klog_rfetch_resp_t resp;
	klog_rfetch_req_t q;
	klog_core_read_t r;
	klog_log_t *log;

	lead(f, "rt", 1, r12, 2, r12, 2, 1);
	log = plog(f, "rt");
	assert_int_equal(klog_core_fetch(f->core, &req, &it), 0);
	pk = klog_core_park(f->core, KLOG_CORE_FETCH, 5, &it, 1, 1, &rp);
	assert_non_null(pk);
	klog_core_park_fetch(pk, 1, 5000);
	/* Flushed on the leader: not committed, still waiting. */
	assert_int_equal(produce_now(f, "rt", "hello", 1, NULL), 0);
	settle(f, log);
	assert_int_equal(f->finished, 0);
	/* The follower has it: HW 14 wakes the consumer. */
	q = rreq("rt", 2, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(f->finished, 1);
	assert_ptr_equal(f->done[0], pk);
	klog_core_fetch_read(f->core, &pk->items[0], 1 << 20, &r);
	assert_int_equal(r.error, KLOG_WIRE_NONE);
	assert_int_equal(r.log_end, E);
	assert_true(r.has_slice);
	assert_int_equal(r.slice.len, E);
	klog_log_slice_release(&r.slice);
}

/* ---- 3. REPLICA_FETCH ---- */

static void
test_rfetch_errors(void **state)
{
	struct fx *f = *state;
	const int32_t rep2[] = { 1, 2 };
	klog_core_item_t it;
	klog_rfetch_resp_t resp;
	klog_rfetch_req_t q;
	klog_err_t err = { 0 };

	lead(f, "rt", 2, rep2, 2, rep2, 2, 1);
	q = rreq("rt", 2, 1, 0, 0, -1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp),
	    KLOG_WIRE_FENCED_LEADER_EPOCH);
	q = rreq("rt", 2, 3, 0, 0, -1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp),
	    KLOG_WIRE_FENCED_LEADER_EPOCH);
	/* Not one of the replicas. */
	q = rreq("rt", 9, 2, 0, 0, -1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp),
	    KLOG_WIRE_INVALID_REQUEST);
	q = rreq("rt", 2, 2, 0, 0, -1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);

	/* Following: NOT_LEADER. */
	assert_int_equal(klog_core_follow(f->core, "rt", 0, 1, 3, 2, &err), 0);
	q = rreq("rt", 2, 3, 0, 0, -1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NOT_LEADER);
	/* And an unreplicated partition is led by nobody. */
	assert_int_equal(klog_core_create_topic(f->core, "plain", 1, &err), 0);
	q = rreq("plain", 2, 3, 0, 0, -1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NOT_LEADER);
	assert_int_equal(f->nisr, 0);
}

static void
test_rfetch_epochs(void **state)
{
	struct fx *f = *state;
	klog_core_item_t it;
	klog_core_park_t *pk;
	klog_rfetch_resp_t resp;
	klog_rfetch_req_t q;
	klog_core_reply_t rp = reply(f);
	klog_core_read_t r;
	klog_log_t *log;

	/* Epoch 1 wrote [0, 28); epoch 3 nothing yet. */
	lead(f, "rt", 1, R3, 3, R3, 3, 1);
	log = plog(f, "rt");
	assert_int_equal(produce_now(f, "rt", "hello", 1, NULL), 0);
	assert_int_equal(produce_now(f, "rt", "world", 1, NULL), 0);
	settle(f, log);
	lead(f, "rt", 3, R3, 3, R3, 3, 1);
	assert_epochs_file(f, "rt", "klog-epochs 1\n1 0\n3 28\n");

	/* Level with the leader but still in epoch 1: answered at once with
	 * nothing to read, so that it learns epoch 3. */
	q = rreq("rt", 2, 3, 2 * E, 2 * E, 1, 5000);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(it.div_epoch, -1);
	klog_core_rfetch_state(f->core, &it, &resp);
	assert_int_equal(resp.error, KLOG_WIRE_NONE);
	assert_int_equal(resp.leader_epoch, 3);
	assert_int_equal(resp.chunk_epoch, 3);
	assert_int_equal(resp.log_end, 2 * E);
	assert_int_equal(resp.diverging_epoch, -1);
	klog_core_fetch_read(f->core, &it, 1 << 20, &r);
	assert_int_equal(r.error, KLOG_WIRE_NONE);
	assert_false(r.has_slice);

	/* Level and in epoch 3: a long poll. */
	q = rreq("rt", 2, 3, 2 * E, 2 * E, 3, 5000);
	assert_int_equal(klog_core_rfetch(f->core, &q, &it, &resp), 0);
	pk = klog_core_park(f->core, KLOG_CORE_RFETCH, 9, &it, 1, 1, &rp);
	assert_non_null(pk);
	klog_core_park_fetch(pk, 1, 5000);
	assert_int_equal(f->finished, 0);
	/* Answered when the leader's flushed end passes it. */
	assert_int_equal(produce_now(f, "rt", "third", 1, NULL), 0);
	assert_int_equal(f->finished, 0);
	settle(f, log);
	assert_int_equal(f->finished, 1);
	assert_ptr_equal(f->done[0], pk);
	klog_core_rfetch_state(f->core, &pk->items[0], &resp);
	assert_int_equal(resp.error, KLOG_WIRE_NONE);
	assert_int_equal(resp.chunk_epoch, 3);
	assert_int_equal(resp.log_end, 3 * E);
	klog_core_fetch_read(f->core, &pk->items[0], 1 << 20, &r);
	assert_int_equal(r.error, KLOG_WIRE_NONE);
	assert_true(r.has_slice);
	assert_int_equal(r.slice.offset, 2 * E);
	assert_int_equal(r.slice.len, E);
	klog_log_slice_release(&r.slice);

	/* A chunk stops where the next epoch starts. */
	q = rreq("rt", 3, 3, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(it.max, E);
	klog_core_rfetch_state(f->core, &it, &resp);
	assert_int_equal(resp.chunk_epoch, 1);
	klog_core_fetch_read(f->core, &it, 1 << 20, &r);
	assert_true(r.has_slice);
	assert_int_equal(r.slice.offset, E);
	assert_int_equal(r.slice.len, E);
	klog_log_slice_release(&r.slice);

	/* Divergent: it wrote under epoch 2, which the leader never had;
	 * epoch 1 ends at 28 here. */
	q = rreq("rt", 3, 3, 40, 40, 2, 5000);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(it.div_epoch, 1);
	assert_int_equal(it.div_end, 2 * E);
	assert_int_equal(it.max, 0);
	assert_int_equal(resp.diverging_epoch, 1);
	assert_int_equal(resp.diverging_end, 2 * E);
	klog_core_rfetch_state(f->core, &it, &resp);
	assert_int_equal(resp.diverging_epoch, 1);
	assert_int_equal(resp.diverging_end, 2 * E);
	/* Past the end of its own epoch 1 here: cut at 28 too. */
	q = rreq("rt", 3, 3, 35, 35, 1, 5000);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(it.div_epoch, 1);
	assert_int_equal(it.div_end, 2 * E);
	assert_int_equal(f->nisr, 0);
}

/* ---- 4. the ISR ---- */

static void
test_isr_shrinks_and_grows(void **state)
{
	struct fx *f = *state;
	const int32_t w13[] = { 1, 3 };
	klog_core_item_t it;
	klog_rfetch_resp_t resp;
	klog_rfetch_req_t q;
	klog_core_part_t *p;
	klog_replica_t *rep;

	lead(f, "rt", 1, R3, 3, R3, 3, 2);
	p = rpart(f, "rt");
	rep = klog_core_part_replica(p);
	assert_int_equal(produce_now(f, "rt", "hello", 1, NULL), 0);
	settle(f, klog_core_part_log(p));
	q = rreq("rt", 2, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	q = rreq("rt", 3, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(rep->hw, E);
	assert_int_equal(f->nisr, 0);

	/* 2 lost what it had acknowledged: out at once. */
	q = rreq("rt", 2, 1, E, 0, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(f->nisr, 1);
	assert_call(&f->isr[0], "rt", 1, w13, 2);
	assert_isr(p, w13, 2);
	assert_non_null(strstr(f->logs, "topic \"rt\" partition 0: ISR shrank "
	    "to [1,3] (epoch 1)"));
	/* Below the HW: stays out. */
	q = rreq("rt", 2, 1, E, 7, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(f->nisr, 1);
	/* At the HW: back in. */
	q = rreq("rt", 2, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(f->nisr, 2);
	assert_call(&f->isr[1], "rt", 1, R3, 3);
	assert_isr(p, R3, 3);
	assert_int_equal(rep->hw, E);
}

/*
 * An ISR write in flight may be applied before its answer comes, or with
 * none (a timeout): until its outcome is known, HW counts the members of
 * both ISRs.  A grow counted only once answered would let acks=all
 * complete without a member ZooKeeper already lists, one that could then
 * be elected without the record.
 */
static void
test_isr_write_in_flight_counts_both(void **state)
{
	struct fx *f = *state;
	const int32_t w12[] = { 1, 2 };
	klog_core_item_t it, pit;
	klog_core_park_t *pk;
	klog_rfetch_resp_t resp;
	klog_rfetch_req_t q;
	klog_core_part_t *p;
	klog_replica_t *rep;

	lead(f, "rt", 1, R3, 3, w12, 2, 2);
	p = rpart(f, "rt");
	rep = klog_core_part_replica(p);
	assert_int_equal(produce_now(f, "rt", "hello", 1, NULL), 0);
	settle(f, klog_core_part_log(p));
	q = rreq("rt", 2, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(rep->hw, E);

	/* 3 caught up: the grow is written, its answer not in yet. */
	f->isr_async = 1;
	q = rreq("rt", 3, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(f->nisr, 1);
	assert_call(&f->isr[0], "rt", 1, R3, 3);
	assert_isr(p, w12, 2);
	/* One write at a time: a fetch meanwhile asks nothing. */
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(f->nisr, 1);

	/* 2 has the next record, 3 not yet: not committed. */
	assert_int_equal(produce(f, "rt", "world", KLOG_ACKS_ALL, &pit, &pk),
	    1);
	settle(f, klog_core_part_log(p));
	q = rreq("rt", 2, 1, 2 * E, 2 * E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(rep->hw, E);
	assert_int_equal(f->finished, 0);

	/* Applied: the ISR is taken, and 3's fetch commits the record. */
	klog_core_isr_written(f->core, "rt", 0, 1, R3, 3, 0);
	assert_isr(p, R3, 3);
	assert_non_null(strstr(f->logs, "ISR grew to [1,2,3] (epoch 1)"));
	assert_int_equal(rep->hw, E);
	q = rreq("rt", 3, 1, 2 * E, 2 * E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(rep->hw, 2 * E);
	assert_int_equal(f->finished, 1);
	assert_ptr_equal(f->done[0], pk);
	assert_int_equal(pk->items[0].error, KLOG_WIRE_NONE);
}

/* A write whose outcome stayed unknown changed nothing: the next fetch
 * asks again; one that found another leader steps this one down. */
static void
test_isr_write_outcomes(void **state)
{
	struct fx *f = *state;
	const int32_t w12[] = { 1, 2 };
	klog_core_item_t it;
	klog_rfetch_resp_t resp;
	klog_rfetch_req_t q;
	klog_core_part_t *p;

	lead(f, "rt", 1, R3, 3, w12, 2, 2);
	p = rpart(f, "rt");
	assert_int_equal(produce_now(f, "rt", "hello", 1, NULL), 0);
	settle(f, klog_core_part_log(p));
	f->isr_async = 1;
	q = rreq("rt", 3, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(f->nisr, 1);
	/* A stale outcome (another epoch) is not this write's. */
	klog_core_isr_written(f->core, "rt", 0, 0, R3, 3, 0);
	assert_isr(p, w12, 2);
	klog_core_isr_written(f->core, "rt", 0, 1, NULL, 0, -KLOG_ETIMEDOUT);
	assert_isr(p, w12, 2);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(f->nisr, 2);
	klog_core_isr_written(f->core, "rt", 0, 1, NULL, 0, -KLOG_EBUSY);
	assert_int_equal(klog_core_part_replica(p)->role,
	    KLOG_REPLICA_OFFLINE);
	assert_non_null(strstr(f->logs, "deposed (another broker leads it)"));
}

static void
test_isr_change_deposed(void **state)
{
	struct fx *f = *state;
	const int32_t w13[] = { 1, 3 };
	klog_core_item_t it;
	klog_core_park_t *pk;
	klog_rfetch_resp_t resp;
	klog_rfetch_req_t q;
	klog_core_part_t *p;
	int64_t off;

	lead(f, "rt", 1, R3, 3, R3, 3, 2);
	p = rpart(f, "rt");
	assert_int_equal(produce(f, "rt", "hello", KLOG_ACKS_ALL, &it, &pk),
	    1);
	settle(f, klog_core_part_log(p));
	q = rreq("rt", 2, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(f->finished, 0);

	/* The state moved under us: the change is not made, we step down. */
	f->isr_rc = -KLOG_EBUSY;
	/* A long poll level with the leader: answered now, not parked on a
	 * partition no longer led here. */
	q = rreq("rt", 2, 1, E, 0, 1, 5000);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NOT_LEADER);
	assert_int_equal(f->nisr, 1);
	assert_call(&f->isr[0], "rt", 1, w13, 2);
	assert_int_equal(klog_core_part_replica(p)->role,
	    KLOG_REPLICA_OFFLINE);
	klog_core_rfetch_state(f->core, &it, &resp);
	assert_int_equal(resp.error, KLOG_WIRE_NOT_LEADER);
	assert_int_equal(f->finished, 1);
	assert_ptr_equal(f->done[0], pk);
	assert_int_equal(pk->items[0].error, KLOG_WIRE_NOT_LEADER);
	assert_int_equal(pk->items[0].offset, -1);
	assert_non_null(strstr(f->logs, "deposed"));
	assert_int_equal(produce_now(f, "rt", "world", KLOG_ACKS_LEADER, &off),
	    KLOG_WIRE_NOT_LEADER);
	assert_int_equal(klog_log_end(klog_core_part_log(p)), E);
	q = rreq("rt", 3, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NOT_LEADER);
}

static void
test_isr_below_min_after_append(void **state)
{
	struct fx *f = *state;
	const int32_t r12[] = { 1, 2 }, w1[] = { 1 };
	klog_core_item_t it;
	klog_core_park_t *pk;
	klog_rfetch_resp_t resp;
	klog_rfetch_req_t q;
	klog_core_part_t *p;
	int64_t off;

	lead(f, "rt", 1, r12, 2, r12, 2, 2);
	p = rpart(f, "rt");
	assert_int_equal(produce_now(f, "rt", "hello", 1, NULL), 0);
	settle(f, klog_core_part_log(p));
	q = rreq("rt", 2, 1, E, E, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(klog_core_part_replica(p)->hw, E);
	/* ISR 2 = min: taken, waiting for 2. */
	assert_int_equal(produce(f, "rt", "world", KLOG_ACKS_ALL, &it, &pk),
	    1);
	assert_int_equal(it.offset, E);
	settle(f, klog_core_part_log(p));
	assert_int_equal(f->finished, 0);

	/* 2 goes backwards: ISR [1] < 2. */
	q = rreq("rt", 2, 1, E, 0, 1, 0);
	assert_int_equal(rfetch_now(f, &q, &it, &resp), KLOG_WIRE_NONE);
	assert_int_equal(f->nisr, 1);
	assert_call(&f->isr[0], "rt", 1, w1, 1);
	assert_isr(p, w1, 1);
	assert_int_equal(f->finished, 1);
	assert_ptr_equal(f->done[0], pk);
	assert_int_equal(pk->items[0].error,
	    KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND);
	assert_int_equal(pk->items[0].offset, -1);
	/* Still the leader: acks=1 goes in, acks=all does not. */
	assert_int_equal(klog_core_part_replica(p)->role, KLOG_REPLICA_LEADER);
	assert_int_equal(produce_now(f, "rt", "third", KLOG_ACKS_ALL, &off),
	    KLOG_WIRE_NOT_ENOUGH_REPLICAS);
	assert_int_equal(klog_log_end(klog_core_part_log(p)), 2 * E);
	assert_int_equal(produce_now(f, "rt", "third", KLOG_ACKS_LEADER, &off),
	    KLOG_WIRE_NONE);
	assert_int_equal(off, 2 * E);
}

static void
test_isr_laggard_at_tick(void **state)
{
	struct fx *f = *state;
	const int32_t r12[] = { 1, 2 }, w1[] = { 1 };

	lead(f, "rt", 1, r12, 2, r12, 2, 1);
	klog_core_set_replication(f->core, 1, fake_isr, f, fake_flushed, f);
	/* The ISR tick is every 250 ms. */
	for (int i = 0; i < 300 && f->nisr == 0; i++)
		assert_true(klog_loop_run_once(f->loop, 10) >= 0);
	assert_int_equal(f->nisr, 1);
	assert_call(&f->isr[0], "rt", 1, w1, 1);
	assert_isr(rpart(f, "rt"), w1, 1);
}

/* ---- 5. a follower ---- */

static void
test_follower_append_truncate_hw(void **state)
{
	struct fx *f = *state;
	klog_err_t err = { 0 };
	klog_core_part_t *p;
	klog_log_t *log;
	uint8_t set[64];
	size_t len = klog_entry_encode(set, "hello", 5);
	int64_t landed;
	int dummy;

	assert_int_equal(len, E);
	assert_int_equal(klog_core_follow(f->core, "ft", 0, 1, 2, 2, &err), 0);
	p = rpart(f, "ft");
	log = klog_core_part_log(p);
	assert_int_equal(klog_core_part_replica(p)->role,
	    KLOG_REPLICA_FOLLOWER);
	assert_int_equal(klog_core_part_replica(p)->leader, 2);
	klog_core_part_set_follower(p, &dummy);
	assert_ptr_equal(klog_core_part_follower(p), &dummy);

	/* The epoch is on disk before the bytes (its start: the old end). */
	assert_int_equal(klog_core_replica_append(f->core, p, set, len, 1, 2,
	    &err), 0);
	assert_epochs_file(f, "ft", "klog-epochs 1\n2 0\n");
	assert_int_equal(klog_log_end(log), E);
	assert_int_equal(f->flushed, 0);
	settle(f, log);
	assert_int_equal(f->flushed, 1);
	assert_ptr_equal(f->flushed_part, p);
	assert_int_equal(klog_core_replica_append(f->core, p, set, len, 1, 2,
	    &err), 0);
	assert_epochs_file(f, "ft", "klog-epochs 1\n2 0\n");
	settle(f, log);
	assert_int_equal(f->flushed, 2);
	assert_int_equal(klog_core_replica_append(f->core, p, set, len, 1, 4,
	    &err), 0);
	assert_epochs_file(f, "ft", "klog-epochs 1\n2 0\n4 28\n");
	settle(f, log);
	assert_int_equal(f->flushed, 3);
	assert_int_equal(klog_log_flushed_end(log), 3 * E);

	/* The leader's HW, never past the local end. */
	klog_core_replica_hw(f->core, p, 100);
	assert_int_equal(klog_core_part_replica(p)->hw, 3 * E);
	/* Cut inside the epoch-4 entry: back to its start; epoch 4 goes. */
	assert_int_equal(klog_core_replica_truncate(f->core, p, 35, &landed,
	    &err), 0);
	assert_int_equal(landed, 2 * E);
	assert_int_equal(klog_log_end(log), 2 * E);
	assert_int_equal(klog_core_part_replica(p)->hw, 2 * E);
	assert_epochs_file(f, "ft", "klog-epochs 1\n2 0\n");
	assert_int_equal(klog_core_replica_truncate(f->core, p, 20, &landed,
	    &err), 0);
	assert_int_equal(landed, E);
	assert_int_equal(klog_log_end(log), E);
	assert_int_equal(klog_core_part_replica(p)->hw, E);
	assert_epochs_file(f, "ft", "klog-epochs 1\n2 0\n");
	/* To 0: no epoch left. */
	assert_int_equal(klog_core_replica_truncate(f->core, p, 0, &landed,
	    &err), 0);
	assert_int_equal(landed, 0);
	assert_epochs_file(f, "ft", "klog-epochs 1\n");
	assert_int_equal(f->nisr, 0);
}

static void
test_may_lead_empty(void **state)
{
	struct fx *f = *state;
	klog_err_t err = { 0 };
	klog_core_part_t *p;
	uint8_t set[64];
	size_t len = klog_entry_encode(set, "hello", 5);

	/* Not even known here. */
	assert_false(klog_core_may_lead(f->core, "ml", 0, 1));
	assert_true(klog_core_may_lead(f->core, "ml", 0, 0));
	/* Known, no bytes, no epochs: a lost disk, once there was a leader. */
	assert_int_equal(klog_core_replicated(f->core, "ml", 0, 1, &err), 0);
	assert_false(klog_core_may_lead(f->core, "ml", 0, 1));
	assert_false(klog_core_may_lead(f->core, "ml", 0, 5));
	assert_true(klog_core_may_lead(f->core, "ml", 0, 0));
	/* An epoch recorded: it was a replica. */
	assert_int_equal(klog_core_follow(f->core, "ml", 0, 1, 1, 2, &err), 0);
	p = rpart(f, "ml");
	assert_int_equal(klog_core_replica_append(f->core, p, set, len, 1, 1,
	    &err), 0);
	assert_true(klog_core_may_lead(f->core, "ml", 0, 5));
}

static void
test_may_lead_behind(void **state)
{
	struct fx *f = *state;
	klog_err_t err = { 0 };
	klog_log_t *log;
	klog_core_part_t *p;
	uint8_t set[64], junk[11] = { 0 };
	size_t len = klog_entry_encode(set, "hello", 5);
	char path[PATH_MAX];
	int fd;

	/* One entry, then a torn tail and no clean shutdown. */
	fx_close(f, 1);
	store_open(f);
	assert_int_equal(klog_store_get(f->store, "bt", 0, 1, &log, &err), 0);
	assert_int_equal(klog_log_append(log, set, len, 1, NULL, &err), 0);
	store_close(f, 0);
	snprintf(path, sizeof(path), "%s/bt-0/00000000000000000000.klog",
	    f->dir);
	assert_true((fd = open(path, O_WRONLY | O_APPEND)) >= 0);
	assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);

	fx_open(f);
	assert_int_equal(klog_store_recovered_bytes(f->store), 11);
	assert_false(behind_file(f, "bt"));
	assert_int_equal(klog_core_replicated(f->core, "bt", 0, 1, &err), 0);
	assert_true(behind_file(f, "bt"));
	assert_int_equal(klog_log_end(plog(f, "bt")), E);
	assert_false(klog_core_may_lead(f->core, "bt", 0, 1));
	assert_false(klog_core_may_lead(f->core, "bt", 0, 0));

	/* The mark outlives a clean restart. */
	fx_close(f, 1);
	fx_open(f);
	assert_int_equal(klog_store_recovered_bytes(f->store), 0);
	assert_int_equal(klog_core_replicated(f->core, "bt", 0, 1, &err), 0);
	assert_true(behind_file(f, "bt"));
	assert_false(klog_core_may_lead(f->core, "bt", 0, 1));

	/* Following: a HW past its end does not clear it ... */
	assert_int_equal(klog_core_follow(f->core, "bt", 0, 1, 1, 2, &err), 0);
	p = rpart(f, "bt");
	klog_core_replica_hw(f->core, p, E + 1);
	assert_true(behind_file(f, "bt"));
	assert_false(klog_core_may_lead(f->core, "bt", 0, 1));
	/* ... one it has reached does. */
	klog_core_replica_hw(f->core, p, E);
	assert_false(behind_file(f, "bt"));
	assert_true(klog_core_may_lead(f->core, "bt", 0, 1));
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_replicated_without_role),
		T(test_lead_records_epoch_and_refuses_below_min),
		T(test_acks_all_waits_for_the_isr),
		T(test_long_poll_waits_for_the_hw),
		T(test_rfetch_errors),
		T(test_rfetch_epochs),
		T(test_isr_shrinks_and_grows),
		T(test_isr_write_in_flight_counts_both),
		T(test_isr_write_outcomes),
		T(test_isr_change_deposed),
		T(test_isr_below_min_after_append),
		T(test_isr_laggard_at_tick),
		T(test_follower_append_truncate_hw),
		T(test_may_lead_empty),
		T(test_may_lead_behind),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
