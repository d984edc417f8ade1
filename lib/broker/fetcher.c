/*
 * Followers' fetches from their leaders; see fetcher.h.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/broker/fetcher.h"
#include "klog/core/replicated.h"
#include "klog/storage/format.h"

#define RETRY_MS 250
#define WAIT_MS 500                  /* the leader's long poll */
#define FIRST_MAX (1 << 20)
#define MAX_MAX (64 << 20)

/*
 * The deadlines by which a follower cut from its leader notices.  Without
 * them a connect or a fetch waits on TCP's retransmissions, whose backoff
 * kept followers away for 8 to 23 s after cuts of 3 to 5 s.
 *
 * CONNECT_MS: Linux sends a lost SYN again after 1 s, then 3, 7, 15 s
 * later; a fresh connect every second keeps a SYN a second going out
 * while the leader cannot be reached, so the first one after a heal
 * leaves within a second of it.  A connect that works takes a round trip.
 *
 * FETCH_MS: the leader holds a fetch up to WAIT_MS when it has nothing
 * new.  The second beyond it covers a leader's loop running late and a
 * lost segment sent twice more (200 and 400 ms at TCP's least timeout),
 * and is well inside --replica-lag-time (10 s): a follower that gives up
 * this soon is back before the leader would have dropped it.  It runs
 * from the fetch's sending and again from each read that brings part of
 * the answer, so a large answer on a slow link is not cut while it flows.
 */
#define CONNECT_MS 1000
#define FETCH_MS (WAIT_MS + 1000)

/* IDLE: connected, nothing asked; CONNECTING and SENT: the timer is the
 * deadline; RETRY: disconnected, the timer is the wait before trying. */
enum state { IDLE, CONNECTING, SENT, RETRY };

struct follow {
	klog_fetcher_t *f;
	klog_core_part_t *p;
	int32_t leader, epoch;
	klog_client_addr_t addr;
	klog_client_t *cl;
	int state;
	int32_t corr;
	int32_t max_bytes;
	int64_t reported;            /* the flushed end the leader was told */
	int failing;                 /* logged the current run of errors */
	klog_timer_t timer;          /* the state's: see enum state */
	struct follow *prev, *next;  /* the fetcher's */
};

struct klog_fetcher {
	klog_loop_t *loop;
	klog_core_t *core;
	int32_t me;
	const klog_client_sec_t *sec;  /* TLS to the leaders, or NULL */
	klog_logger_t log;
	struct follow *follows;
	klog_fetcher_stats_t stats;
};

static void send_fetch(struct follow *fw);

static void
disconnect(struct follow *fw)
{
	if (fw->cl == NULL)
		return;
	klog_loop_watch(fw->f->loop, klog_client_fd(fw->cl), 0, NULL, NULL);
	klog_client_close(fw->cl);
	fw->cl = NULL;
}

/* One warning for a run of failures, however long: the next answer
 * from the leader ends it (handle()). */
static void
warn(struct follow *fw, const char *what, const char *why)
{
	if (!fw->failing)
		klog_logger_say(&fw->f->log, KLOG_LEVEL_WARN, "topic \"%s\" "
		    "partition %d: fetching from broker %d: %s%s%s",
		    klog_core_part_topic(fw->p), klog_core_part_id(fw->p),
		    (int)fw->leader, what, why ? ": " : "", why ? why : "");
	fw->failing = 1;
}

static void
fail(struct follow *fw, const char *what, const char *why)
{
	warn(fw, what, why);
	disconnect(fw);
	fw->state = RETRY;
	klog_loop_timer_start(fw->f->loop, &fw->timer, RETRY_MS, 0);
}

/*
 * A deadline passed, or the retry's wait did.  A connect or a fetch that
 * timed out is started again at once: the leader did not refuse, it went
 * quiet, and what the follower waits for now is the first chance to reach
 * it again.
 */
static void
on_timer(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	struct follow *fw = arg;
	char why[300];

	(void)loop;
	(void)t;
	if (fw->state == CONNECTING) {
		fw->f->stats.connect_timeouts++;
		snprintf(why, sizeof(why), "%s: no connection in %d ms, "
		    "trying again", klog_client_name(fw->cl), CONNECT_MS);
		warn(fw, "connecting", why);
	} else if (fw->state == SENT) {
		fw->f->stats.fetch_timeouts++;
		snprintf(why, sizeof(why), "no answer in %d ms, reconnecting",
		    FETCH_MS);
		warn(fw, why, NULL);
	}
	disconnect(fw);
	fw->state = IDLE;
	send_fetch(fw);
}

/* Cut the local log where the leader says it stops agreeing. */
static int
diverged(struct follow *fw, const klog_rfetch_resp_t *r)
{
	klog_replica_t *rep = klog_core_part_replica(fw->p);
	klog_log_t *log = klog_core_part_log(fw->p);
	int64_t end = klog_log_end(log), cut, landed;
	int32_t found;
	klog_err_t err;
	int rc;

	cut = klog_epochs_end_of(rep->epochs, r->diverging_epoch, end, &found);
	if (r->diverging_end < cut)
		cut = r->diverging_end;
	if (cut < klog_log_start(log))
		cut = klog_log_start(log);
	if ((rc = klog_core_replica_truncate(fw->f->core, fw->p, cut,
	    &landed, &err)) < 0) {
		fail(fw, "truncating", klog_err_text(&err, rc));
		return rc;
	}
	if (landed < end)
		klog_logger_say(&fw->f->log, KLOG_LEVEL_INFO, "topic \"%s\" "
		    "partition %d: log cut from %lld to %lld (diverged from "
		    "broker %d at epoch %d)", klog_core_part_topic(fw->p),
		    klog_core_part_id(fw->p), (long long)end, (long long)landed,
		    (int)fw->leader, (int)r->diverging_epoch);
	return 0;
}

/* The leader no longer has our end: start where it starts. */
static int
restart_at(struct follow *fw, const klog_rfetch_resp_t *r)
{
	klog_log_t *log = klog_core_part_log(fw->p);
	int64_t end = klog_log_end(log), landed;
	klog_err_t err;
	int rc;

	if (end > r->log_end && r->log_end >= klog_log_start(log))
		rc = klog_core_replica_truncate(fw->f->core, fw->p, r->log_end,
		    &landed, &err);
	else
		rc = klog_core_replica_reset(fw->f->core, fw->p,
		    r->log_start, &err);
	if (rc < 0)
		fail(fw, "starting over", klog_err_text(&err, rc));
	return rc;
}

/* Append what the leader sent; 1 if the next fetch waits for a flush. */
static int
take(struct follow *fw, const klog_rfetch_resp_t *r)
{
	klog_msgset_info_t info;
	klog_err_t err;
	int rc;

	rc = klog_msgset_validate(r->set, r->set_len, 0, &info);
	if (rc < 0 && rc != -KLOG_EPARTIAL) {
		fail(fw, "a corrupt entry from the leader", klog_strerror(rc));
		return -1;
	}
	if (info.valid_bytes == 0) {
		/* One entry is larger than we asked for. */
		if (r->set_len > 0 && fw->max_bytes < MAX_MAX)
			fw->max_bytes *= 2;
		return 0;
	}
	if ((rc = klog_core_replica_append(fw->f->core, fw->p, r->set,
	    info.valid_bytes, info.entries, r->chunk_epoch, &err)) < 0) {
		fail(fw, "appending", klog_err_text(&err, rc));
		return -1;
	}
	return 1;
}

/*
 * Level with the leader's current epoch and nothing to append: record the
 * epoch now (the bytes from our end on will be its), so that a replica of
 * an empty partition has something to show it is one (klog_core_may_lead).
 */
static int
note_epoch(struct follow *fw, const klog_rfetch_resp_t *r)
{
	klog_replica_t *rep = klog_core_part_replica(fw->p);
	klog_err_t err;
	int rc;

	if (r->chunk_epoch != r->leader_epoch ||
	    r->chunk_epoch <= klog_epochs_latest(rep->epochs))
		return 0;
	rc = klog_epochs_append(rep->epochs, r->chunk_epoch,
	    klog_log_end(klog_core_part_log(fw->p)), &err);
	if (rc < 0)
		fail(fw, "recording the epoch", klog_err_text(&err, rc));
	return rc;
}

static void
handle(struct follow *fw, const klog_rfetch_resp_t *r)
{
	int rc;

	fw->state = IDLE;
	switch (r->error) {
	case KLOG_WIRE_NONE:
		break;
	case KLOG_WIRE_OFFSET_OUT_OF_RANGE:
		if (restart_at(fw, r) == 0)
			send_fetch(fw);
		return;
	default:
		fail(fw, "the leader answered", klog_wire_error_name(r->error));
		return;
	}
	if (fw->failing)
		klog_logger_say(&fw->f->log, KLOG_LEVEL_INFO, "topic \"%s\" "
		    "partition %d: fetching from broker %d again",
		    klog_core_part_topic(fw->p), klog_core_part_id(fw->p),
		    (int)fw->leader);
	fw->failing = 0;
	if (r->diverging_epoch >= 0) {
		if (diverged(fw, r) == 0)
			send_fetch(fw);
		return;
	}
	if (r->set_len == 0 && note_epoch(fw, r) < 0)
		return;
	if ((rc = take(fw, r)) < 0)
		return;
	klog_core_replica_hw(fw->f->core, fw->p, r->hw);
	/* The next fetch goes now, while this is being synced: its flushed
	 * end follows in a REPLICA_POS (klog_fetcher_flushed()). */
	send_fetch(fw);
}

static void
on_readable(klog_loop_t *loop, int fd, void *arg, int mask)
{
	struct follow *fw = arg;
	klog_resp_header_t h;
	klog_rfetch_resp_t r;
	const uint8_t *body;
	klog_err_t err;
	size_t len;
	int rc;

	(void)fd;
	(void)mask;
	if ((rc = klog_client_read(fw->cl, &err)) < 0) {
		fail(fw, "connection lost", klog_err_text(&err, rc));
		return;
	}
	if ((rc = klog_client_response(fw->cl, &h, &body, &len, &err)) < 0) {
		fail(fw, "bad response", klog_err_text(&err, rc));
		return;
	}
	if (rc == 0) {
		/* Part of the answer came: it is on its way. */
		klog_loop_timer_start(loop, &fw->timer, FETCH_MS, 0);
		return;
	}
	klog_loop_timer_stop(loop, &fw->timer);
	if (h.correlation != fw->corr || h.error != KLOG_WIRE_NONE ||
	    klog_proto_decode_rfetch_resp(body, len, &r) < 0) {
		fail(fw, "bad response", h.error ?
		    klog_wire_error_name(h.error) : NULL);
		return;
	}
	handle(fw, &r);
}

/* What the connect under way waits for, as the loop names it. */
static int
connect_mask(const struct follow *fw)
{
	return klog_client_wants(fw->cl) == POLLOUT ? KLOG_LOOP_WRITABLE :
	    KLOG_LOOP_READABLE;
}

/* The connect under way (TCP's, then TLS's handshake, a step each time
 * the socket is ready) is done, or failed, or moved on to the name's
 * next address (a new descriptor, so the watch is taken off first). */
static void
on_connected(klog_loop_t *loop, int fd, void *arg, int mask)
{
	struct follow *fw = arg;
	klog_err_t err;
	int rc;

	(void)mask;
	klog_loop_watch(loop, fd, 0, NULL, NULL);
	if ((rc = klog_client_connected(fw->cl, &err)) < 0) {
		fail(fw, "connecting", klog_err_text(&err, rc));
		return;
	}
	if (klog_loop_watch(loop, klog_client_fd(fw->cl), rc == 0 ?
	    connect_mask(fw) : KLOG_LOOP_READABLE, rc == 0 ? on_connected :
	    on_readable, fw) < 0) {
		fail(fw, "watching the connection", NULL);
		return;
	}
	if (rc == 0)
		return;
	klog_loop_timer_stop(loop, &fw->timer);
	fw->state = IDLE;
	send_fetch(fw);
}

/* Start connecting: the loop says when it is done (on_connected), or the
 * deadline passes first (on_timer).  The loop never waits for it. */
static void
connect_leader(struct follow *fw)
{
	klog_err_t err;
	int rc;

	if ((rc = klog_client_start(&fw->addr, &fw->cl, &err)) < 0) {
		fail(fw, "connecting", klog_err_text(&err, rc));
		return;
	}
	klog_client_set_max_response(fw->cl, (size_t)MAX_MAX + 4096);
	if (klog_loop_watch(fw->f->loop, klog_client_fd(fw->cl),
	    KLOG_LOOP_WRITABLE, on_connected, fw) < 0) {
		fail(fw, "watching the connection", NULL);
		return;
	}
	fw->state = CONNECTING;
	klog_loop_timer_start(fw->f->loop, &fw->timer, CONNECT_MS, 0);
}

/* Requests are small: each leaves in one write or the connection is gone,
 * so the loop only ever waits to read. */
static int
write_out(struct follow *fw)
{
	klog_err_t err;

	if (klog_client_write(fw->cl, &err) < 0) {
		fail(fw, "sending", NULL);
		return -1;
	}
	if (klog_client_pending(fw->cl)) {
		fail(fw, "sending", "the socket would block");
		return -1;
	}
	return 0;
}

static void
send_fetch(struct follow *fw)
{
	klog_replica_t *rep = klog_core_part_replica(fw->p);
	klog_log_t *log = klog_core_part_log(fw->p);
	const char *topic = klog_core_part_topic(fw->p);
	klog_rfetch_req_t q;

	if (fw->state != IDLE)
		return;
	if (fw->cl == NULL) {
		connect_leader(fw);
		return;
	}
	fw->corr = klog_client_next_id(fw->cl);
	q = (klog_rfetch_req_t){ .replica_id = fw->f->me,
	    .leader_epoch = fw->epoch, .max_wait_ms = WAIT_MS,
	    .topic = { topic, (uint16_t)strlen(topic) },
	    .partition = klog_core_part_id(fw->p),
	    .offset = klog_log_end(log), .flushed = klog_log_flushed_end(log),
	    .last_epoch = klog_epochs_latest(rep->epochs),
	    .max_bytes = fw->max_bytes };
	if (klog_proto_encode_rfetch(klog_client_out(fw->cl), fw->corr,
	    &q) < 0 || write_out(fw) < 0)
		return;
	fw->reported = q.flushed;
	fw->state = SENT;
	klog_loop_timer_start(fw->f->loop, &fw->timer, FETCH_MS, 0);
}

/* Tell the leader what is synced now, without waiting for the fetch in
 * flight (which may be parked there until it has more). */
static void
send_pos(struct follow *fw)
{
	klog_log_t *log = klog_core_part_log(fw->p);
	const char *topic = klog_core_part_topic(fw->p);
	klog_rfetch_req_t q;

	q = (klog_rfetch_req_t){ .replica_id = fw->f->me,
	    .leader_epoch = fw->epoch,
	    .topic = { topic, (uint16_t)strlen(topic) },
	    .partition = klog_core_part_id(fw->p),
	    .offset = klog_log_end(log), .flushed = klog_log_flushed_end(log),
	    .last_epoch = -1 };
	if (klog_proto_encode_rpos(klog_client_out(fw->cl),
	    klog_client_next_id(fw->cl), &q) < 0 || write_out(fw) < 0)
		return;
	fw->reported = q.flushed;
}

int
klog_fetcher_new(klog_loop_t *loop, klog_core_t *core, int32_t me,
    const klog_client_sec_t *sec, const klog_logger_t *log,
    klog_fetcher_t **out, klog_err_t *err)
{
	klog_fetcher_t *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (f == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	f->loop = loop;
	f->core = core;
	f->me = me;
	f->sec = sec;
	f->log = *log;
	*out = f;
	return 0;
}

void
klog_fetcher_stop(klog_fetcher_t *f, klog_core_part_t *p)
{
	struct follow *fw = klog_core_part_follower(p);

	if (fw == NULL)
		return;
	disconnect(fw);
	klog_loop_timer_stop(f->loop, &fw->timer);
	klog_core_part_set_follower(p, NULL);
	if (fw->prev != NULL)
		fw->prev->next = fw->next;
	else
		f->follows = fw->next;
	if (fw->next != NULL)
		fw->next->prev = fw->prev;
	free(fw);
}

int
klog_fetcher_follow(klog_fetcher_t *f, klog_core_part_t *p, int32_t leader,
    int32_t epoch, const klog_client_addr_t *addr)
{
	struct follow *fw = klog_core_part_follower(p);
	klog_client_addr_t to = *addr;

	to.sec = f->sec;
	if (fw != NULL && fw->leader == leader && fw->epoch == epoch &&
	    memcmp(&fw->addr, &to, sizeof(to)) == 0)
		return 0;
	klog_fetcher_stop(f, p);
	if ((fw = calloc(1, sizeof(*fw))) == NULL)
		return -KLOG_ENOMEM;
	fw->f = f;
	fw->p = p;
	fw->leader = leader;
	fw->epoch = epoch;
	fw->addr = to;
	fw->max_bytes = FIRST_MAX;
	klog_timer_init(&fw->timer, on_timer, fw);
	klog_core_part_set_follower(p, fw);
	fw->next = f->follows;
	if (f->follows != NULL)
		f->follows->prev = fw;
	f->follows = fw;
	send_fetch(fw);
	return 0;
}

void
klog_fetcher_flushed(void *arg, klog_core_part_t *p)
{
	struct follow *fw = klog_core_part_follower(p);

	(void)arg;
	if (fw == NULL || fw->state != SENT ||
	    klog_log_flushed_end(klog_core_part_log(p)) <= fw->reported)
		return;
	send_pos(fw);
}

void
klog_fetcher_stats(const klog_fetcher_t *f, klog_fetcher_stats_t *out)
{
	*out = f->stats;
}

void
klog_fetcher_free(klog_fetcher_t *f)
{
	if (f == NULL)
		return;
	while (f->follows != NULL)
		klog_fetcher_stop(f, f->follows->p);
	free(f);
}
