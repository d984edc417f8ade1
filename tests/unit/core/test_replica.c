/*
 * Unit tests for a replicated partition's state (lib/core/replica.c): the
 * leader's ISR and high watermark, its answers to REPLICA_FETCH, and the
 * follower's HW.  Time is passed in, so nothing here waits.
 */
#include <sys/stat.h>
#include <sys/types.h>

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
#include "klog/core/replica.h"
#include "klog/proto/proto.h"
#include "klog/storage/epochs.h"

#define ME 1
#define LAG_MS 1000

struct fixture {
	char dir[64];
	klog_replica_t *r;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	klog_err_t err = { 0 };
	int rc;

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "replica"));
	if ((rc = klog_replica_new(f->dir, ME, LAG_MS, &f->r, &err)) != 0)
		fail_msg("new: %s", klog_err_text(&err, rc));
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	klog_replica_free(f->r);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

static const int32_t replicas[] = { 1, 2, 3 };

/* Lead epoch over replicas 1, 2, 3 with ISR isr[0..nisr). */
static void
lead(klog_replica_t *r, int32_t epoch, const int32_t *isr, int nisr,
    int min_insync, int64_t leo, int64_t now)
{
	klog_err_t err = { 0 };
	int rc = klog_replica_lead(r, epoch, replicas, 3, isr, nisr,
	    min_insync, leo, now, &err);

	if (rc != 0)
		fail_msg("lead: %s", klog_err_text(&err, rc));
}

static klog_rfetch_req_t
req(int32_t id, int32_t epoch, int64_t offset, int64_t flushed,
    int32_t last_epoch)
{
	return (klog_rfetch_req_t){ .replica_id = id, .leader_epoch = epoch,
	    .max_wait_ms = 100, .topic = { "t", 1 }, .partition = 0,
	    .offset = offset, .flushed = flushed, .last_epoch = last_epoch,
	    .max_bytes = 1 << 20 };
}

/* A fetch that must be answered NONE without divergence; the resp. */
static klog_rfetch_resp_t
fetch_ok(klog_replica_t *r, klog_rfetch_req_t q, int64_t leo, int64_t fw,
    int64_t now, int *shrink, int *expand)
{
	klog_rfetch_resp_t resp;

	memset(&resp, 0x55, sizeof(resp));
	assert_int_equal(klog_replica_on_fetch(r, &q, leo, fw, now, &resp,
	    shrink, expand), KLOG_WIRE_NONE);
	assert_int_equal(resp.diverging_epoch, -1);
	assert_int_equal(resp.diverging_end, -1);
	assert_int_equal(resp.leader_epoch, r->epoch);
	return resp;
}

static klog_replica_peer_t *
peer(klog_replica_t *r, int32_t id)
{
	for (int i = 0; i < r->npeers; i++)
		if (r->peers[i].id == id)
			return &r->peers[i];
	fail_msg("no peer %d", (int)id);
	return NULL;
}

static void
assert_isr(const klog_replica_t *r, const int32_t *want, int n)
{
	int32_t got[KLOG_REPLICA_MAX + 1];

	assert_int_equal(klog_replica_isr(r, got), n);
	assert_int_equal(klog_replica_isr_size(r), n);
	for (int i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

/* The epoch file on disk, as another open of it reads it. */
static void
assert_file_epochs(const char *dir, const klog_epoch_t *want, size_t n)
{
	klog_epochs_t *e = NULL;

	assert_int_equal(klog_epochs_open(dir, &e, NULL), 0);
	assert_int_equal(klog_epochs_count(e), n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(klog_epochs_get(e, i).epoch, want[i].epoch);
		assert_int_equal(klog_epochs_get(e, i).start, want[i].start);
	}
	klog_epochs_free(e);
}

/* ---- roles ---- */

static void
test_new(void **state)
{
	struct fixture *f = *state;
	klog_replica_t *r = f->r;

	assert_int_equal(r->me, ME);
	assert_int_equal(r->role, KLOG_REPLICA_OFFLINE);
	assert_int_equal(r->epoch, -1);
	assert_int_equal(r->leader, -1);
	assert_int_equal(r->hw, 0);
	assert_int_equal(r->npeers, 0);
	assert_int_equal(r->lag_ms, LAG_MS);
	assert_int_equal(klog_epochs_count(r->epochs), 0);
}

static void
test_new_reads_epochs(void **state)
{
	struct fixture *f = *state;
	klog_replica_t *r = NULL;
	klog_err_t err = { 0 };
	char path[PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/" KLOG_EPOCHS_FILE, f->dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("klog-epochs 1\n2 0\n6 40\n", fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(klog_replica_new(f->dir, 4, 10, &r, &err), 0);
	assert_int_equal(r->epoch, 6);
	assert_int_equal(klog_epochs_count(r->epochs), 2);
	klog_replica_free(r);

	/* A corrupt epoch file: no state. */
	assert_non_null(fp = fopen(path, "w"));
	fputs("klog-epochs 1\n6 0\n2 40\n", fp);
	assert_int_equal(fclose(fp), 0);
	r = (klog_replica_t *)&r;
	assert_int_equal(klog_replica_new(f->dir, 4, 10, &r, &err),
	    -KLOG_ECORRUPT);
	assert_null(r);
}

static void
test_lead(void **state)
{
	static const int32_t isr[] = { 1, 2 };
	static const klog_epoch_t one[] = { { 3, 100 } };
	static const klog_epoch_t two[] = { { 3, 100 }, { 4, 150 } };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;
	klog_replica_peer_t *p;

	lead(r, 3, isr, 2, 2, 100, 1000);
	assert_int_equal(r->role, KLOG_REPLICA_LEADER);
	assert_int_equal(r->epoch, 3);
	assert_int_equal(r->leader, ME);
	assert_int_equal(r->min_insync, 2);
	assert_int_equal(klog_epochs_latest(r->epochs), 3);
	assert_file_epochs(f->dir, one, 1);
	/* the others, in replica order, the leader not among them */
	assert_int_equal(r->npeers, 2);
	assert_int_equal(r->peers[0].id, 2);
	assert_int_equal(r->peers[1].id, 3);
	p = &r->peers[0];
	assert_int_equal(p->in_isr, 1);
	assert_int_equal(p->leo, -1);
	assert_int_equal(p->fw, -1);
	assert_int_equal(p->caught_up_ms, 1000);
	assert_int_equal(r->peers[1].in_isr, 0);
	assert_isr(r, isr, 2);

	/* Leading the same epoch again (a restart) writes nothing new. */
	lead(r, 3, isr, 2, 2, 120, 1100);
	assert_file_epochs(f->dir, one, 1);
	/* A later one is recorded at the log end. */
	lead(r, 4, isr, 1, 1, 150, 1200);
	assert_file_epochs(f->dir, two, 2);
	assert_int_equal(r->min_insync, 1);
	assert_isr(r, isr, 1);
	assert_int_equal(r->peers[0].in_isr, 0);

	klog_replica_offline(r);
	assert_int_equal(r->role, KLOG_REPLICA_OFFLINE);
	assert_int_equal(r->leader, -1);
	assert_int_equal(r->npeers, 0);
	assert_int_equal(r->epoch, 4);
}

/* A lead whose epoch cannot be recorded fails, and a retry records it. */
static void
test_lead_save_fails(void **state)
{
	static const int32_t isr[] = { 1, 2 };
	static const klog_epoch_t want[] = { { 5, 70 } };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;
	klog_err_t err = { 0 };
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s/" KLOG_EPOCHS_FILE ".tmp", f->dir);
	assert_int_equal(mkdir(tmp, 0700), 0);
	assert_true(klog_replica_lead(r, 5, replicas, 3, isr, 2, 1, 70, 0,
	    &err) < 0);
	assert_int_not_equal(r->role, KLOG_REPLICA_LEADER);
	assert_int_equal(rmdir(tmp), 0);
	lead(r, 5, isr, 2, 1, 70, 0);
	assert_file_epochs(f->dir, want, 1);
}

static void
test_follow(void **state)
{
	static const int32_t isr[] = { 1, 2 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;

	lead(r, 3, isr, 2, 1, 0, 0);
	klog_replica_follow(r, 4, 2);
	assert_int_equal(r->role, KLOG_REPLICA_FOLLOWER);
	assert_int_equal(r->epoch, 4);
	assert_int_equal(r->leader, 2);
	assert_int_equal(r->npeers, 0);
	/* A follower records an epoch only when its bytes arrive. */
	assert_int_equal(klog_epochs_latest(r->epochs), 3);
}

/* ---- the high watermark ---- */

static void
test_advance(void **state)
{
	static const int32_t isr[] = { 1, 2, 3 };
	static const int32_t two[] = { 1, 3 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;
	int shrink, expand;

	lead(r, 1, isr, 3, 2, 0, 0);
	/* The followers' positions are unknown: HW stays. */
	assert_int_equal(klog_replica_advance(r, 500), 0);
	assert_int_equal(r->hw, 0);
	fetch_ok(r, req(2, 1, 300, 300, 1), 500, 500, 0, &shrink, &expand);
	assert_int_equal(klog_replica_advance(r, 500), 0);
	assert_int_equal(r->hw, 0);
	fetch_ok(r, req(3, 1, 400, 200, 1), 500, 500, 0, &shrink, &expand);
	/* min over the ISR's flushed ends, the leader's included */
	assert_int_equal(klog_replica_advance(r, 500), 1);
	assert_int_equal(r->hw, 200);
	assert_int_equal(klog_replica_committed(r, 500), 200);
	assert_int_equal(klog_replica_committed(r, 150), 150);
	fetch_ok(r, req(3, 1, 500, 500, 1), 500, 500, 0, &shrink, &expand);
	assert_int_equal(klog_replica_advance(r, 500), 1);
	assert_int_equal(r->hw, 300);
	/* the leader's own flushed end bounds it */
	fetch_ok(r, req(2, 1, 600, 600, 1), 700, 450, 0, &shrink, &expand);
	assert_int_equal(klog_replica_advance(r, 450), 1);
	assert_int_equal(r->hw, 450);
	/* never lowered */
	assert_int_equal(klog_replica_advance(r, 400), 0);
	assert_int_equal(r->hw, 450);

	/* A follower out of the ISR does not hold HW back. */
	klog_replica_set_isr(r, two, 2, 0);
	assert_int_equal(klog_replica_advance(r, 700), 1);
	assert_int_equal(r->hw, 500);   /* broker 3's flushed end */

	/* Below min_insync HW is frozen, however far the leader gets. */
	klog_replica_set_isr(r, isr, 1, 0);
	assert_isr(r, isr, 1);
	assert_int_equal(klog_replica_advance(r, 700), 0);
	assert_int_equal(r->hw, 500);
	/* with min_insync 1 the leader alone moves it */
	r->min_insync = 1;
	assert_int_equal(klog_replica_advance(r, 700), 1);
	assert_int_equal(r->hw, 700);
}

/* A REPLICA_POS moves a follower's flushed end on from where its last
 * fetch put it, and nothing else gets in. */
static void
test_pos(void **state)
{
	static const int32_t isr[] = { 1, 2, 3 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;
	klog_rfetch_req_t q;
	int shrink, expand;

	lead(r, 1, isr, 3, 2, 0, 0);
	/* Before any fetch its position is unknown: refused. */
	q = req(2, 1, 300, 300, -1);
	assert_int_equal(klog_replica_on_pos(r, &q, 500, 500, 0, &shrink,
	    &expand), KLOG_WIRE_INVALID_REQUEST);
	fetch_ok(r, req(2, 1, 300, 0, 1), 500, 500, 0, &shrink, &expand);
	fetch_ok(r, req(3, 1, 300, 300, 1), 500, 500, 0, &shrink, &expand);
	assert_int_equal(klog_replica_advance(r, 500), 0);
	/* Synced since: HW moves without another fetch. */
	assert_int_equal(klog_replica_on_pos(r, &q, 500, 500, 0, &shrink,
	    &expand), KLOG_WIRE_NONE);
	assert_int_equal(shrink, 0);
	assert_int_equal(klog_replica_advance(r, 500), 1);
	assert_int_equal(r->hw, 300);
	/* Past the leader's end, behind its last fetch, another epoch, an
	 * unknown replica: refused, nothing taken. */
	q = req(2, 1, 600, 600, -1);
	assert_int_equal(klog_replica_on_pos(r, &q, 500, 500, 0, &shrink,
	    &expand), KLOG_WIRE_INVALID_REQUEST);
	q = req(2, 1, 200, 200, -1);
	assert_int_equal(klog_replica_on_pos(r, &q, 500, 500, 0, &shrink,
	    &expand), KLOG_WIRE_INVALID_REQUEST);
	q = req(2, 2, 400, 400, -1);
	assert_int_equal(klog_replica_on_pos(r, &q, 500, 500, 0, &shrink,
	    &expand), KLOG_WIRE_FENCED_LEADER_EPOCH);
	q = req(9, 1, 400, 400, -1);
	assert_int_equal(klog_replica_on_pos(r, &q, 500, 500, 0, &shrink,
	    &expand), KLOG_WIRE_INVALID_REQUEST);
	assert_int_equal(klog_replica_advance(r, 500), 0);
	/* Its flushed end going back drops it, as a fetch's would. */
	q = req(2, 1, 300, 100, -1);
	assert_int_equal(klog_replica_on_pos(r, &q, 500, 500, 0, &shrink,
	    &expand), KLOG_WIRE_NONE);
	assert_int_equal(shrink, 1);
	/* Not the leader: refused. */
	klog_replica_follow(r, 2, 3);
	q = req(2, 2, 300, 300, -1);
	assert_int_equal(klog_replica_on_pos(r, &q, 500, 500, 0, &shrink,
	    &expand), KLOG_WIRE_NOT_LEADER);
}

static void
test_advance_not_leader(void **state)
{
	static const int32_t isr[] = { 1 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;

	assert_int_equal(klog_replica_advance(r, 100), 0);
	assert_int_equal(r->hw, 0);
	lead(r, 1, isr, 1, 1, 0, 0);
	klog_replica_follow(r, 2, 2);
	assert_int_equal(klog_replica_advance(r, 100), 0);
	assert_int_equal(r->hw, 0);
}

static void
test_follower_hw(void **state)
{
	static const int32_t isr[] = { 1, 2 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;

	klog_replica_follow(r, 2, 2);
	klog_replica_follower_hw(r, 100, 80);   /* not past the local end */
	assert_int_equal(r->hw, 80);
	klog_replica_follower_hw(r, 90, 200);
	assert_int_equal(r->hw, 90);
	klog_replica_follower_hw(r, 50, 200);   /* never lowered */
	assert_int_equal(r->hw, 90);
	/* Leading, it keeps what it learnt, but nothing past its end. */
	lead(r, 3, isr, 2, 1, 60, 0);
	assert_int_equal(r->hw, 60);
	lead(r, 4, isr, 2, 1, 100, 0);
	assert_int_equal(r->hw, 60);
}

/* ---- REPLICA_FETCH on the leader ---- */

static void
test_fetch_refused(void **state)
{
	static const int32_t isr[] = { 1, 2 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;
	klog_rfetch_req_t q = req(2, 3, 0, 0, -1);
	klog_rfetch_resp_t resp;
	int shrink = 7, expand = 7;

	/* offline, then following */
	assert_int_equal(klog_replica_on_fetch(r, &q, 0, 0, 0, &resp,
	    &shrink, &expand), KLOG_WIRE_NOT_LEADER);
	assert_int_equal(shrink, 0);
	assert_int_equal(expand, 0);
	klog_replica_follow(r, 3, 2);
	assert_int_equal(klog_replica_on_fetch(r, &q, 0, 0, 0, &resp,
	    &shrink, &expand), KLOG_WIRE_NOT_LEADER);
	assert_int_equal(resp.leader_epoch, 3);
	assert_int_equal(resp.diverging_epoch, -1);

	lead(r, 3, isr, 2, 1, 0, 0);
	q.leader_epoch = 2;
	assert_int_equal(klog_replica_on_fetch(r, &q, 0, 0, 0, &resp,
	    &shrink, &expand), KLOG_WIRE_FENCED_LEADER_EPOCH);
	assert_int_equal(resp.leader_epoch, 3);
	q.leader_epoch = 4;
	assert_int_equal(klog_replica_on_fetch(r, &q, 0, 0, 0, &resp,
	    &shrink, &expand), KLOG_WIRE_FENCED_LEADER_EPOCH);
	q.leader_epoch = 3;
	q.replica_id = 9;
	assert_int_equal(klog_replica_on_fetch(r, &q, 0, 0, 0, &resp,
	    &shrink, &expand), KLOG_WIRE_INVALID_REQUEST);
	q.replica_id = ME;
	assert_int_equal(klog_replica_on_fetch(r, &q, 0, 0, 0, &resp,
	    &shrink, &expand), KLOG_WIRE_INVALID_REQUEST);
	/* none of those moved anybody */
	assert_int_equal(peer(r, 2)->leo, -1);
	assert_int_equal(peer(r, 2)->fw, -1);
	q.replica_id = 2;
	fetch_ok(r, q, 0, 0, 0, &shrink, &expand);
	assert_int_equal(peer(r, 2)->leo, 0);
	assert_int_equal(peer(r, 2)->fw, 0);
}

/*
 * The leader's epochs: 0@0, 2@50, 5@120, 7@200 (its own); the log ends at
 * 260, flushed to 240.
 */
static void
history(klog_replica_t *r, const int32_t *isr, int nisr)
{
	assert_int_equal(klog_epochs_append(r->epochs, 0, 0, NULL), 0);
	assert_int_equal(klog_epochs_append(r->epochs, 2, 50, NULL), 0);
	assert_int_equal(klog_epochs_append(r->epochs, 5, 120, NULL), 0);
	lead(r, 7, isr, nisr, 1, 200, 1000);
}

static void
assert_diverges(klog_replica_t *r, int32_t id, int64_t offset,
    int32_t last_epoch, int32_t want_epoch, int64_t want_end)
{
	klog_rfetch_req_t q = req(id, 7, offset, offset, last_epoch);
	klog_replica_peer_t before = *peer(r, id);
	klog_rfetch_resp_t resp;
	int shrink = 7, expand = 7;

	assert_int_equal(klog_replica_on_fetch(r, &q, 260, 240, 5000, &resp,
	    &shrink, &expand), KLOG_WIRE_NONE);
	assert_int_equal(resp.diverging_epoch, want_epoch);
	assert_int_equal(resp.diverging_end, want_end);
	assert_int_equal(resp.leader_epoch, 7);
	assert_int_equal(shrink, 0);
	assert_int_equal(expand, 0);
	/* a diverging follower's position is not taken */
	assert_memory_equal(peer(r, id), &before, sizeof(before));
}

static void
test_fetch_diverging(void **state)
{
	static const int32_t isr[] = { 1, 2, 3 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;
	int shrink, expand;

	history(r, isr, 3);
	/* Agreeing: its newest epoch is the leader's, or one of the
	 * leader's that goes on at least to its offset. */
	fetch_ok(r, req(2, 7, 230, 230, 7), 260, 240, 0, &shrink, &expand);
	fetch_ok(r, req(2, 7, 260, 260, 7), 260, 240, 0, &shrink, &expand);
	fetch_ok(r, req(3, 7, 150, 150, 5), 260, 240, 0, &shrink, &expand);
	fetch_ok(r, req(3, 7, 200, 200, 5), 260, 240, 0, &shrink, &expand);
	fetch_ok(r, req(3, 7, 50, 50, 0), 260, 240, 0, &shrink, &expand);
	fetch_ok(r, req(3, 7, 0, 0, -1), 260, 240, 0, &shrink, &expand);

	/* Its offset is past the end of its epoch here: cut to that end. */
	assert_diverges(r, 2, 210, 5, 5, 200);
	assert_diverges(r, 2, 121, 2, 2, 120);
	assert_diverges(r, 2, 51, 0, 0, 50);
	/* past the leader's log end in the newest epoch */
	assert_diverges(r, 2, 270, 7, 7, 260);
	/* An epoch unknown here: the largest below it, to its end, or to
	 * the follower's offset if that is lower. */
	assert_diverges(r, 3, 230, 6, 5, 200);
	assert_diverges(r, 3, 100, 3, 2, 100);
	assert_diverges(r, 3, 180, 3, 2, 120);
	/* newer than every epoch here */
	assert_diverges(r, 3, 230, 9, 7, 230);
	/* no epoch, but bytes the leader's first epoch does not cover */
	assert_diverges(r, 3, 40, -1, 0, 0);
}

static void
test_fetch_position(void **state)
{
	static const int32_t isr[] = { 1, 2 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;
	klog_rfetch_resp_t resp;
	int shrink, expand;

	history(r, isr, 2);
	r->hw = 180;
	resp = fetch_ok(r, req(2, 7, 230, 210, 7), 260, 240, 1500, &shrink,
	    &expand);
	assert_int_equal(resp.hw, 180);
	assert_int_equal(peer(r, 2)->leo, 230);
	assert_int_equal(peer(r, 2)->fw, 210);
	/* a flushed end past the log end counts as the log end */
	fetch_ok(r, req(2, 7, 235, 250, 7), 260, 240, 1500, &shrink, &expand);
	assert_int_equal(peer(r, 2)->leo, 235);
	assert_int_equal(peer(r, 2)->fw, 235);
}

static void
test_caught_up(void **state)
{
	static const int32_t isr[] = { 1, 2, 3 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;
	int shrink, expand;

	history(r, isr, 3);  /* at 1000 */
	assert_int_equal(peer(r, 2)->caught_up_ms, 1000);
	/* short of the leader's flushed end (240): not caught up */
	fetch_ok(r, req(2, 7, 239, 239, 7), 260, 240, 1500, &shrink, &expand);
	assert_int_equal(peer(r, 2)->caught_up_ms, 1000);
	/* at it: caught up now */
	fetch_ok(r, req(2, 7, 240, 240, 7), 260, 240, 1800, &shrink, &expand);
	assert_int_equal(peer(r, 2)->caught_up_ms, 1800);
	/* past it (the leader's own bytes not flushed yet) too */
	fetch_ok(r, req(3, 7, 250, 250, 7), 260, 240, 1900, &shrink, &expand);
	assert_int_equal(peer(r, 3)->caught_up_ms, 1900);
	assert_int_equal(peer(r, 2)->caught_up_ms, 1800);

	/* laggard: one not caught up for more than lag_ms */
	assert_int_equal(klog_replica_laggard(r, 1800 + LAG_MS), -1);
	assert_int_equal(klog_replica_laggard(r, 1800 + LAG_MS + 1), 2);
	fetch_ok(r, req(2, 7, 260, 260, 7), 260, 260, 2900, &shrink, &expand);
	assert_int_equal(klog_replica_laggard(r, 1900 + LAG_MS), -1);
	assert_int_equal(klog_replica_laggard(r, 1900 + LAG_MS + 1), 3);
	/* one out of the ISR is no laggard */
	klog_replica_set_isr(r, isr, 2, 3000);
	assert_int_equal(klog_replica_laggard(r, 1900 + LAG_MS + 1), -1);
	assert_int_equal(klog_replica_laggard(r, 2900 + LAG_MS + 1), 2);
}

static void
test_shrink(void **state)
{
	static const int32_t isr[] = { 1, 2 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;
	int shrink, expand;

	history(r, isr, 2);
	fetch_ok(r, req(2, 7, 230, 220, 7), 260, 240, 0, &shrink, &expand);
	assert_int_equal(shrink, 0);
	fetch_ok(r, req(2, 7, 230, 220, 7), 260, 240, 0, &shrink, &expand);
	assert_int_equal(shrink, 0);
	fetch_ok(r, req(2, 7, 240, 230, 7), 260, 240, 0, &shrink, &expand);
	assert_int_equal(shrink, 0);
	/* It lost what it had flushed (a restart without its page cache). */
	fetch_ok(r, req(2, 7, 240, 210, 7), 260, 240, 0, &shrink, &expand);
	assert_int_equal(shrink, 1);
	assert_int_equal(expand, 0);
	assert_int_equal(peer(r, 2)->fw, 210);

	/* Out of the ISR, going backwards is no shrink. */
	fetch_ok(r, req(3, 7, 230, 230, 7), 260, 240, 0, &shrink, &expand);
	fetch_ok(r, req(3, 7, 230, 100, 7), 260, 240, 0, &shrink, &expand);
	assert_int_equal(shrink, 0);
}

static void
test_expand(void **state)
{
	static const int32_t isr[] = { 1, 2 };
	static const int32_t all[] = { 1, 2, 3 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;
	int shrink, expand;

	history(r, isr, 2);   /* epoch 7 starts at 200; HW 0 */
	/* At HW but not at the current epoch's start: not yet. */
	fetch_ok(r, req(3, 7, 150, 150, 5), 260, 240, 0, &shrink, &expand);
	assert_int_equal(expand, 0);
	fetch_ok(r, req(3, 7, 200, 200, 5), 260, 240, 0, &shrink, &expand);
	assert_int_equal(expand, 1);
	assert_int_equal(shrink, 0);
	/* only said, not done */
	assert_int_equal(peer(r, 3)->in_isr, 0);

	r->hw = 230;
	fetch_ok(r, req(3, 7, 240, 229, 7), 260, 240, 0, &shrink, &expand);
	assert_int_equal(expand, 0);
	fetch_ok(r, req(3, 7, 240, 230, 7), 260, 240, 0, &shrink, &expand);
	assert_int_equal(expand, 1);
	/* an ISR member is never told to expand */
	fetch_ok(r, req(2, 7, 240, 240, 7), 260, 240, 0, &shrink, &expand);
	assert_int_equal(expand, 0);

	klog_replica_set_isr(r, all, 3, 0);
	fetch_ok(r, req(3, 7, 250, 250, 7), 260, 240, 0, &shrink, &expand);
	assert_int_equal(expand, 0);
}

/* ---- ISR changes ---- */

static void
test_isr_with(void **state)
{
	static const int32_t isr[] = { 1, 2 };
	static const int32_t all[] = { 1, 2, 3 };
	static const int32_t me[] = { 1 };
	static const int32_t three[] = { 1, 3 };
	struct fixture *f = *state;
	klog_replica_t *r = f->r;
	int32_t out[KLOG_REPLICA_MAX + 1];

	lead(r, 1, isr, 2, 1, 0, 100);
	assert_int_equal(klog_replica_isr_with(r, 3, 1, out), 3);
	assert_memory_equal(out, all, sizeof(all));
	assert_int_equal(klog_replica_isr_with(r, 2, 0, out), 1);
	assert_memory_equal(out, me, sizeof(me));
	assert_int_equal(klog_replica_isr_with(r, 2, 1, out), 2);
	assert_memory_equal(out, isr, sizeof(isr));
	assert_int_equal(klog_replica_isr_with(r, 9, 1, out), 2);
	assert_memory_equal(out, isr, sizeof(isr));
	/* the leader stays in */
	assert_int_equal(klog_replica_isr_with(r, ME, 0, out), 2);
	assert_memory_equal(out, isr, sizeof(isr));
	/* nothing changed */
	assert_isr(r, isr, 2);

	klog_replica_set_isr(r, three, 2, 5000);
	assert_isr(r, three, 2);
	assert_int_equal(peer(r, 2)->in_isr, 0);
	assert_int_equal(peer(r, 2)->caught_up_ms, 100);
	/* one that joins starts its lag clock now */
	assert_int_equal(peer(r, 3)->caught_up_ms, 5000);
	klog_replica_set_isr(r, all, 3, 6000);
	assert_isr(r, all, 3);
	assert_int_equal(peer(r, 3)->caught_up_ms, 5000);
	assert_int_equal(peer(r, 2)->caught_up_ms, 6000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_new),
		T(test_new_reads_epochs),
		T(test_lead),
		T(test_lead_save_fails),
		T(test_follow),
		T(test_advance),
		T(test_pos),
		T(test_advance_not_leader),
		T(test_follower_hw),
		T(test_fetch_refused),
		T(test_fetch_diverging),
		T(test_fetch_position),
		T(test_caught_up),
		T(test_shrink),
		T(test_expand),
		T(test_isr_with),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
