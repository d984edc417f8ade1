/*
 * Unit tests for lib/kafka/coordinator.c, Kafka's eager group protocol on a real
 * loop: the first join makes generation 1; a second member sends the
 * first back to join through its heartbeat; syncs wait for the leader;
 * heartbeat, join and sync errors; leaving, session expiry and the
 * rebalance timeout drop members; protocols are agreed or refused; a
 * cancelled wait is never answered; limits; the commit check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/kafka/coordinator.h"
#include "klog/kafka/kwire.h"
#include "klog/net/loop.h"

#define SESSION_MS 200    /* short, so expiry tests stay quick */

/* One client's request in flight and what it was last answered. */
struct client {
	klog_coordinator_wait_t w;
	int joins, syncs;          /* answers received */
	int16_t error;
	int32_t generation;
	char member[300], leader[300], protocol[64];
	int nmembers;
	char members[8][300];
	char metas[8][64];
	char assign[64];
	uint32_t assign_len;
	char instance[32];         /* its group instance id, "" none */
	char instances[8][32];     /* the leader's answer's */
};

struct fixture {
	klog_loop_t *loop;
	klog_coordinator_t *g;
	int log_lines;
	char last_log[512];
};

static struct fixture *fx;

#define CLIENT(w) ((struct client *)((char *)(w) - offsetof(struct client, w)))

static void
copy_str(char *dst, size_t cap, klog_str_t s)
{
	snprintf(dst, cap, "%.*s", (int)s.len, s.p ? s.p : "");
}

static void
on_join(klog_coordinator_wait_t *w, const klog_kjoin_resp_t *r)
{
	struct client *c = CLIENT(w);

	c->joins++;
	c->error = r->error;
	c->generation = r->generation;
	copy_str(c->member, sizeof(c->member), r->member_id);
	copy_str(c->leader, sizeof(c->leader), r->leader_id);
	copy_str(c->protocol, sizeof(c->protocol), r->protocol);
	c->nmembers = (int)r->nmembers;
	for (uint32_t i = 0; i < r->nmembers && i < 8; i++) {
		copy_str(c->members[i], sizeof(c->members[i]),
		    r->members[i].member_id);
		copy_str(c->instances[i], sizeof(c->instances[i]),
		    r->members[i].instance_id);
		snprintf(c->metas[i], sizeof(c->metas[i]), "%.*s",
		    (int)r->members[i].meta_len,
		    (const char *)r->members[i].meta);
	}
	memset(w, 0xa5, sizeof(*w));   /* the module must forget it */
}

static void
on_sync(klog_coordinator_wait_t *w, int16_t error, const uint8_t *a, uint32_t len)
{
	struct client *c = CLIENT(w);

	c->syncs++;
	c->error = error;
	c->assign_len = len;
	snprintf(c->assign, sizeof(c->assign), "%.*s", (int)len,
	    (const char *)a);
	memset(w, 0xa5, sizeof(*w));
}

static void
on_log(void *arg, int level, const char *msg)
{
	struct fixture *f = arg;

	(void)level;
	f->log_lines++;
	snprintf(f->last_log, sizeof(f->last_log), "%s", msg);
}

static void
make(uint32_t max_members, uint32_t max_groups)
{
	klog_coordinator_config_t cfg = {
		.min_session_ms = 100,
		.max_session_ms = 30000,
		.max_members = max_members,
		.max_groups = max_groups,
		.join_done = on_join,
		.sync_done = on_sync,
		.log = { on_log, fx, 2 },
	};

	klog_coordinator_free(fx->g);
	fx->g = NULL;
	assert_int_equal(klog_coordinator_new(fx->loop, &cfg, &fx->g), 0);
}

static int
setup(void **state)
{
	fx = calloc(1, sizeof(*fx));
	assert_non_null(fx);
	assert_int_equal(klog_loop_create(&fx->loop), 0);
	make(8, 4);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	klog_coordinator_free(fx->g);
	klog_loop_free(fx->loop);
	free(fx);
	return 0;
}

static klog_str_t
S(const char *s)
{
	klog_str_t r = { s, (uint16_t)strlen(s) };

	return r;
}

/* Run the loop for ms milliseconds. */
static void
run_for(int ms)
{
	int64_t end = klog_loop_now_ms() + ms;

	while (klog_loop_now_ms() < end)
		assert_true(klog_loop_run_once(fx->loop, 5) >= 0);
}

/* A join of c to group with protocols p1 (and p2), meta its metadata,
 * require_id as JoinGroup v4+ asks. */
static void
join_v(struct client *c, const char *group, int session_ms, int rebalance_ms,
    const char *type, const char *p1, const char *p2, const char *meta,
    int require_id)
{
	klog_kpair_t ps[2] = {
		{ S(p1), (const uint8_t *)meta, (uint32_t)strlen(meta) },
		{ S(p2 ? p2 : ""), (const uint8_t *)meta,
		    (uint32_t)strlen(meta) },
	};
	klog_coordinator_join_req_t req = {
		.group = S(group),
		.member_id = S(c->member),
		.protocol_type = S(type),
		.require_member_id = require_id,
		.member = {
			.client_id = S("rdkafka"),
			.client_host = S("/127.0.0.1"),
			.instance_id = c->instance[0] ? S(c->instance) :
			    (klog_str_t){ NULL, 0 },
			.session_ms = session_ms,
			.rebalance_ms = rebalance_ms,
			.nprotocols = p2 ? 2 : 1,
			.protocols = ps,
		},
	};

	assert_int_equal(klog_coordinator_join(fx->g, &req, &c->w), 0);
}

/* A join of c to group with protocols p1 (and p2), meta its metadata,
 * without KIP-394's member id round (JoinGroup v0-3). */
static void
join_p(struct client *c, const char *group, int session_ms, int rebalance_ms,
    const char *type, const char *p1, const char *p2, const char *meta)
{
	join_v(c, group, session_ms, rebalance_ms, type, p1, p2, meta, 0);
}

/* A join of c to "g" with protocols "range" then "roundrobin". */
static void
join(struct client *c, const char *meta)
{
	join_p(c, "g", SESSION_MS, 0, "consumer", "range", "roundrobin", meta);
}

static void
sync_req(struct client *c, const char *group, int32_t gen,
    uint32_t nassign, const klog_kpair_t *assign)
{
	klog_coordinator_sync_req_t req = {
		.group = S(group),
		.generation = gen,
		.member_id = S(c->member),
		.nassign = nassign,
		.assign = assign,
	};

	assert_int_equal(klog_coordinator_sync(fx->g, &req, &c->w), 0);
}

static int16_t
hb(struct client *c, int32_t gen)
{
	return klog_coordinator_heartbeat(fx->g, S("g"), gen, S(c->member));
}

/* Two members in generation 2, a the leader, both synced (a gets "A",
 * b gets "B"). */
static void
two_members(struct client *a, struct client *b)
{
	klog_kpair_t as[2];

	join(a, "a-meta");
	assert_int_equal(a->joins, 1);
	assert_int_equal(a->generation, 1);
	join(b, "b-meta");
	assert_int_equal(b->joins, 0);        /* held */
	assert_int_equal(hb(a, 1), KLOG_KERR_REBALANCE_IN_PROGRESS);
	join(a, "a-meta");
	assert_int_equal(a->joins, 2);
	assert_int_equal(b->joins, 1);
	assert_int_equal(a->generation, 2);
	assert_int_equal(b->generation, 2);
	as[0] = (klog_kpair_t){ S(a->member), (const uint8_t *)"A", 1 };
	as[1] = (klog_kpair_t){ S(b->member), (const uint8_t *)"B", 1 };
	sync_req(b, "g", 2, 0, NULL);
	assert_int_equal(b->syncs, 0);        /* held for the leader */
	sync_req(a, "g", 2, 2, as);
	assert_int_equal(a->syncs, 1);
	assert_int_equal(b->syncs, 1);
	assert_string_equal(a->assign, "A");
	assert_string_equal(b->assign, "B");
}

static void
test_first_join(void **state)
{
	struct client a = { 0 };

	(void)state;
	join(&a, "a-meta");
	assert_int_equal(a.joins, 1);
	assert_int_equal(a.error, KLOG_KERR_NONE);
	assert_int_equal(a.generation, 1);
	assert_int_equal(strncmp(a.member, "rdkafka-", 8), 0);
	assert_string_equal(a.leader, a.member);
	assert_string_equal(a.protocol, "range");
	assert_int_equal(a.nmembers, 1);
	assert_string_equal(a.members[0], a.member);
	assert_string_equal(a.metas[0], "a-meta");
	assert_non_null(strstr(fx->last_log, "generation 1"));
	assert_non_null(strstr(fx->last_log, "1 member,"));
	assert_non_null(strstr(fx->last_log, "protocol \"range\""));
}

static void
test_second_member_rebalances(void **state)
{
	struct client a = { 0 }, b = { 0 };

	(void)state;
	two_members(&a, &b);
	assert_string_equal(a.leader, a.member);
	assert_string_equal(b.leader, a.member);
	assert_int_equal(a.nmembers, 2);
	assert_int_equal(b.nmembers, 0);
	assert_string_equal(a.members[0], a.member);
	assert_string_equal(a.metas[0], "a-meta");
	assert_string_equal(a.members[1], b.member);
	assert_string_equal(a.metas[1], "b-meta");
	assert_string_not_equal(a.member, b.member);
	assert_int_equal(hb(&a, 2), KLOG_KERR_NONE);
	assert_int_equal(hb(&b, 2), KLOG_KERR_NONE);
	/* A stable group answers syncs at once, with what is stored. */
	sync_req(&b, "g", 2, 0, NULL);
	assert_int_equal(b.syncs, 2);
	assert_string_equal(b.assign, "B");
	/* A follower's unchanged rejoin: the current generation at once. */
	join(&b, "b-meta");
	assert_int_equal(b.joins, 2);
	assert_int_equal(b.generation, 2);
	assert_int_equal(b.nmembers, 0);
	assert_int_equal(hb(&a, 2), KLOG_KERR_NONE);
	/* Changed metadata rebalances. */
	join(&b, "b-meta2");
	assert_int_equal(b.joins, 2);
	assert_int_equal(hb(&a, 2), KLOG_KERR_REBALANCE_IN_PROGRESS);
	join(&a, "a-meta");
	assert_int_equal(a.generation, 3);
	assert_string_equal(a.metas[1], "b-meta2");
}

static void
test_leader_rejoin_rebalances(void **state)
{
	struct client a = { 0 }, b = { 0 };

	(void)state;
	two_members(&a, &b);
	join(&a, "a-meta");              /* same metadata, but the leader */
	assert_int_equal(a.joins, 2);
	assert_int_equal(hb(&b, 2), KLOG_KERR_REBALANCE_IN_PROGRESS);
	sync_req(&b, "g", 2, 0, NULL);
	assert_int_equal(b.error, KLOG_KERR_REBALANCE_IN_PROGRESS);
	join(&b, "b-meta");
	assert_int_equal(a.generation, 3);
	assert_int_equal(b.generation, 3);
}

static void
test_sync_rules(void **state)
{
	struct client a = { 0 }, b = { 0 }, x = { 0 };

	(void)state;
	join(&a, "a-meta");
	join(&b, "b-meta");
	join(&a, "a-meta");
	/* AwaitingSync: bad generation, unknown member, then the follower
	 * held, a new member's join answering it REBALANCE_IN_PROGRESS. */
	sync_req(&b, "g", 1, 0, NULL);
	assert_int_equal(b.error, KLOG_KERR_ILLEGAL_GENERATION);
	snprintf(x.member, sizeof(x.member), "nobody");
	sync_req(&x, "g", 2, 0, NULL);
	assert_int_equal(x.error, KLOG_KERR_UNKNOWN_MEMBER_ID);
	sync_req(&x, "nogroup", 2, 0, NULL);
	assert_int_equal(x.error, KLOG_KERR_UNKNOWN_MEMBER_ID);
	/* Heartbeats and commits while awaiting the leader's sync. */
	assert_int_equal(hb(&b, 2), KLOG_KERR_NONE);
	assert_int_equal(klog_coordinator_commit_check(fx->g, S("g"), 2,
	    S(b.member)), KLOG_KERR_REBALANCE_IN_PROGRESS);
	/* A rejoin with the same metadata while awaiting sync: the same
	 * answer again, the leader's with the members. */
	join(&a, "a-meta");
	assert_int_equal(a.generation, 2);
	assert_int_equal(a.nmembers, 2);
	sync_req(&b, "g", 2, 0, NULL);
	assert_int_equal(b.syncs, 1);         /* held for the leader */
	x.member[0] = '\0';
	join(&x, "x-meta");
	assert_int_equal(b.syncs, 2);
	assert_int_equal(b.error, KLOG_KERR_REBALANCE_IN_PROGRESS);
	/* Preparing: syncs are refused. */
	sync_req(&a, "g", 2, 0, NULL);
	assert_int_equal(a.error, KLOG_KERR_REBALANCE_IN_PROGRESS);
	join(&a, "a-meta");
	join(&b, "b-meta");
	assert_int_equal(x.generation, 3);
	/* The leader leaves a member out: it gets an empty assignment. */
	sync_req(&x, "g", 3, 0, NULL);
	{
		klog_kpair_t as[1] = {
			{ S(b.member), (const uint8_t *)"BB", 2 },
		};

		sync_req(&a, "g", 3, 1, as);
	}
	assert_int_equal(x.error, KLOG_KERR_NONE);
	assert_int_equal(x.assign_len, 0);
	sync_req(&b, "g", 3, 0, NULL);
	assert_string_equal(b.assign, "BB");
}

static void
test_heartbeat_errors(void **state)
{
	struct client a = { 0 };

	(void)state;
	assert_int_equal(klog_coordinator_heartbeat(fx->g, S("g"), 1, S("x")),
	    KLOG_KERR_UNKNOWN_MEMBER_ID);
	join(&a, "a-meta");
	assert_int_equal(hb(&a, 7), KLOG_KERR_ILLEGAL_GENERATION);
	assert_int_equal(klog_coordinator_heartbeat(fx->g, S("g"), 1, S("x")),
	    KLOG_KERR_UNKNOWN_MEMBER_ID);
	assert_int_equal(klog_coordinator_heartbeat(fx->g, S("g"), 1, S("")),
	    KLOG_KERR_UNKNOWN_MEMBER_ID);
	assert_int_equal(hb(&a, 1), KLOG_KERR_NONE);
	assert_int_equal(klog_coordinator_leave(fx->g, S("g"), S("x")),
	    KLOG_KERR_UNKNOWN_MEMBER_ID);
	assert_int_equal(klog_coordinator_leave(fx->g, S("h"), S(a.member)),
	    KLOG_KERR_UNKNOWN_MEMBER_ID);
}

static void
test_join_errors(void **state)
{
	struct client a = { 0 }, b = { 0 };

	(void)state;
	join_p(&a, "", SESSION_MS, 0, "consumer", "range", NULL, "m");
	assert_int_equal(a.error, KLOG_KERR_INVALID_GROUP_ID);
	assert_int_equal(a.generation, -1);
	join_p(&a, "g", 99, 0, "consumer", "range", NULL, "m");
	assert_int_equal(a.error, KLOG_KERR_INVALID_SESSION_TIMEOUT);
	join_p(&a, "g", 30001, 0, "consumer", "range", NULL, "m");
	assert_int_equal(a.error, KLOG_KERR_INVALID_SESSION_TIMEOUT);
	snprintf(a.member, sizeof(a.member), "ghost");
	join(&a, "m");
	assert_int_equal(a.error, KLOG_KERR_UNKNOWN_MEMBER_ID);
	a.member[0] = '\0';
	join_p(&a, "g", SESSION_MS, 0, "consumer", "range", NULL, "m");
	assert_int_equal(a.error, KLOG_KERR_NONE);
	assert_int_equal(a.generation, 1);
	/* No protocol in common, another protocol type. */
	join_p(&b, "g", SESSION_MS, 0, "consumer", "roundrobin", NULL, "m");
	assert_int_equal(b.error, KLOG_KERR_INCONSISTENT_GROUP_PROTOCOL);
	join_p(&b, "g", SESSION_MS, 0, "connect", "range", NULL, "m");
	assert_int_equal(b.error, KLOG_KERR_INCONSISTENT_GROUP_PROTOCOL);
	snprintf(b.member, sizeof(b.member), "ghost");
	join_p(&b, "g", SESSION_MS, 0, "consumer", "range", NULL, "m");
	assert_int_equal(b.error, KLOG_KERR_UNKNOWN_MEMBER_ID);
	/* The group went on untouched. */
	assert_int_equal(hb(&a, 1), KLOG_KERR_NONE);
}

static void
test_protocol_vote(void **state)
{
	struct client a = { 0 }, b = { 0 }, c = { 0 };

	(void)state;
	/* a prefers roundrobin; b and c prefer range: range wins 2-1. */
	join_p(&a, "g", SESSION_MS, 0, "consumer", "roundrobin", "range", "a");
	assert_string_equal(a.protocol, "roundrobin");
	join_p(&b, "g", SESSION_MS, 0, "consumer", "range", "roundrobin", "b");
	join_p(&c, "g", SESSION_MS, 0, "consumer", "range", "roundrobin", "c");
	join_p(&a, "g", SESSION_MS, 0, "consumer", "roundrobin", "range", "a");
	assert_int_equal(a.generation, 2);
	assert_string_equal(a.protocol, "range");
	assert_string_equal(c.protocol, "range");
	/* The leader gets the metadata of the chosen protocol. */
	assert_int_equal(a.nmembers, 3);
}

static void
test_leave_rebalances(void **state)
{
	struct client a = { 0 }, b = { 0 }, c = { 0 };

	(void)state;
	two_members(&a, &b);
	/* The leader leaves: b joins alone and leads generation 3. */
	assert_int_equal(klog_coordinator_leave(fx->g, S("g"), S(a.member)),
	    KLOG_KERR_NONE);
	assert_int_equal(hb(&a, 2), KLOG_KERR_UNKNOWN_MEMBER_ID);
	assert_int_equal(hb(&b, 2), KLOG_KERR_REBALANCE_IN_PROGRESS);
	join(&b, "b-meta");
	assert_int_equal(b.generation, 3);
	assert_string_equal(b.leader, b.member);
	assert_int_equal(b.nmembers, 1);
	/* A member leaves with its join held: the join is answered, and
	 * the rest go on without it. */
	join(&c, "c-meta");
	join(&b, "b-meta");
	assert_int_equal(c.generation, 4);
	join(&c, "c-meta2");
	assert_int_equal(c.joins, 1);           /* held */
	assert_int_equal(klog_coordinator_leave(fx->g, S("g"), S(c.member)),
	    KLOG_KERR_NONE);
	assert_int_equal(c.joins, 2);
	assert_int_equal(c.error, KLOG_KERR_UNKNOWN_MEMBER_ID);
	assert_int_equal(hb(&b, 4), KLOG_KERR_REBALANCE_IN_PROGRESS);
	join(&b, "b-meta");
	assert_int_equal(b.generation, 5);
	assert_int_equal(b.nmembers, 1);
	/* The last member leaves: the group is gone. */
	assert_int_equal(klog_coordinator_leave(fx->g, S("g"), S(b.member)),
	    KLOG_KERR_NONE);
	assert_non_null(strstr(fx->last_log, "generation 6: empty"));
	assert_int_equal(hb(&b, 5), KLOG_KERR_UNKNOWN_MEMBER_ID);
}

static void
test_session_expiry(void **state)
{
	struct client a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	int64_t end;

	(void)state;
	two_members(&a, &b);
	/* a keeps heartbeating, b goes silent. */
	end = klog_loop_now_ms() + 3 * SESSION_MS;
	while (klog_loop_now_ms() < end) {
		int16_t e = hb(&a, a.generation);

		if (e == KLOG_KERR_REBALANCE_IN_PROGRESS)
			break;
		assert_int_equal(e, KLOG_KERR_NONE);
		run_for(20);
	}
	assert_int_equal(hb(&a, 2), KLOG_KERR_REBALANCE_IN_PROGRESS);
	assert_int_equal(hb(&b, 2), KLOG_KERR_UNKNOWN_MEMBER_ID);
	assert_non_null(strstr(fx->last_log, "session timed out"));
	/* a rejoins with a long rebalance timeout. */
	join_p(&a, "g", SESSION_MS, 3 * SESSION_MS, "consumer", "range",
	    "roundrobin", "a-meta");
	assert_int_equal(a.generation, 3);
	assert_int_equal(a.nmembers, 1);
	/* A held join is never expired: b's outlives its session while a
	 * heartbeats without rejoining, until the rebalance timeout drops
	 * a. */
	join(&d, "d-meta");
	end = klog_loop_now_ms() + 2 * SESSION_MS;
	while (klog_loop_now_ms() < end) {
		assert_int_equal(hb(&a, 3), KLOG_KERR_REBALANCE_IN_PROGRESS);
		run_for(20);
	}
	assert_int_equal(d.joins, 0);
	end = klog_loop_now_ms() + 4 * SESSION_MS;
	while (d.joins == 0 && klog_loop_now_ms() < end)
		assert_true(klog_loop_run_once(fx->loop, 5) >= 0);
	assert_int_equal(d.joins, 1);
	assert_int_equal(d.generation, 4);
	assert_string_equal(d.leader, d.member);
	assert_int_equal(hb(&a, 3), KLOG_KERR_UNKNOWN_MEMBER_ID);
	/* A held sync keeps its member too: c waits for d's sync, d goes
	 * silent and expires, and c is told to rejoin, still a member. */
	join(&c, "c-meta");
	join(&d, "d-meta");
	assert_int_equal(c.generation, 5);
	sync_req(&c, "g", 5, 0, NULL);
	assert_int_equal(c.syncs, 0);
	end = klog_loop_now_ms() + 4 * SESSION_MS;
	while (c.syncs == 0 && klog_loop_now_ms() < end)
		assert_true(klog_loop_run_once(fx->loop, 5) >= 0);
	assert_int_equal(c.syncs, 1);
	assert_int_equal(c.error, KLOG_KERR_REBALANCE_IN_PROGRESS);
	assert_int_equal(hb(&c, 5), KLOG_KERR_REBALANCE_IN_PROGRESS);
	join(&c, "c-meta");
	assert_int_equal(c.generation, 6);
	assert_string_equal(c.leader, c.member);
}

static void
test_rebalance_timeout(void **state)
{
	struct client a = { 0 }, b = { 0 }, c = { 0 };

	(void)state;
	/* a's rebalance timeout is short, b's long session keeps b alive
	 * through it; b never rejoins. */
	join_p(&a, "g", 1000, 150, "consumer", "range", NULL, "a");
	join_p(&b, "g", 1000, 150, "consumer", "range", NULL, "b");
	join_p(&a, "g", 1000, 150, "consumer", "range", NULL, "a");
	assert_int_equal(a.generation, 2);
	join_p(&c, "g", 1000, 150, "consumer", "range", NULL, "c");
	join_p(&a, "g", 1000, 150, "consumer", "range", NULL, "a");
	assert_int_equal(a.joins, 2);       /* held: b has not rejoined */
	run_for(250);
	assert_int_equal(a.joins, 3);
	assert_int_equal(c.joins, 1);
	assert_int_equal(a.generation, 3);
	assert_int_equal(a.nmembers, 2);
	assert_int_equal(hb(&b, 2), KLOG_KERR_UNKNOWN_MEMBER_ID);
	assert_non_null(strstr(fx->last_log, "2 members"));
}

static void
test_cancel(void **state)
{
	struct client a = { 0 }, b = { 0 };

	(void)state;
	two_members(&a, &b);
	join(&a, "a-meta");                  /* held: b must rejoin */
	klog_coordinator_cancel(fx->g, &a.w);
	klog_coordinator_cancel(fx->g, &a.w);    /* twice is harmless */
	join(&b, "b-meta");                  /* completes the rebalance */
	assert_int_equal(b.joins, 2);
	assert_int_equal(b.generation, 3);
	assert_int_equal(a.joins, 2);        /* never called back */
	/* a is still a member of generation 3 until its session ends. */
	assert_int_equal(hb(&a, 3), KLOG_KERR_NONE);
	/* A held sync cancelled: the leader's sync does not answer it. */
	sync_req(&b, "g", 3, 0, NULL);
	klog_coordinator_cancel(fx->g, &b.w);
	sync_req(&a, "g", 3, 0, NULL);
	assert_int_equal(a.syncs, 2);
	assert_int_equal(b.syncs, 1);
}

static void
test_limits(void **state)
{
	struct client c[4], d;

	memset(c, 0, sizeof(c));
	memset(&d, 0, sizeof(d));

	(void)state;
	make(2, 2);
	join(&c[0], "m");
	join(&c[1], "m");
	join(&c[2], "m");
	assert_int_equal(c[2].joins, 1);
	assert_int_equal(c[2].error, KLOG_KERR_UNKNOWN);
	join(&c[0], "m");
	assert_int_equal(c[0].generation, 2);
	join_p(&c[3], "h", SESSION_MS, 0, "consumer", "range", NULL, "m");
	assert_int_equal(c[3].error, KLOG_KERR_NONE);
	join_p(&d, "i", SESSION_MS, 0, "consumer", "range", NULL, "m");
	assert_int_equal(d.error, KLOG_KERR_UNKNOWN);
	/* An emptied group makes room. */
	assert_int_equal(klog_coordinator_leave(fx->g, S("h"), S(c[3].member)),
	    KLOG_KERR_NONE);
	join_p(&d, "i", SESSION_MS, 0, "consumer", "range", NULL, "m");
	assert_int_equal(d.error, KLOG_KERR_NONE);
}

static void
test_commit_check(void **state)
{
	struct client a = { 0 }, b = { 0 };

	(void)state;
	/* No group: outside any group is fine, a generation is stale. */
	assert_int_equal(klog_coordinator_commit_check(fx->g, S("g"), -1, S("")),
	    KLOG_KERR_NONE);
	assert_int_equal(klog_coordinator_commit_check(fx->g, S("g"), 3, S("x")),
	    KLOG_KERR_ILLEGAL_GENERATION);
	two_members(&a, &b);
	assert_int_equal(klog_coordinator_commit_check(fx->g, S("g"), 2,
	    S(a.member)), KLOG_KERR_NONE);
	assert_int_equal(klog_coordinator_commit_check(fx->g, S("g"), -1, S("")),
	    KLOG_KERR_UNKNOWN_MEMBER_ID);
	assert_int_equal(klog_coordinator_commit_check(fx->g, S("g"), 1,
	    S(a.member)), KLOG_KERR_ILLEGAL_GENERATION);
	assert_int_equal(klog_coordinator_commit_check(fx->g, S("g"), 2,
	    S("other")), KLOG_KERR_UNKNOWN_MEMBER_ID);
	/* Preparing: the old generation may still commit (Kafka 0.10). */
	join(&b, "b-new");
	assert_int_equal(klog_coordinator_commit_check(fx->g, S("g"), 2,
	    S(a.member)), KLOG_KERR_NONE);
	join(&a, "a-meta");
	/* Awaiting the leader's sync: nobody may. */
	assert_int_equal(klog_coordinator_commit_check(fx->g, S("g"), 3,
	    S(a.member)), KLOG_KERR_REBALANCE_IN_PROGRESS);
}

static int
str_is(klog_str_t s, const char *want)
{
	return s.len == strlen(want) && (s.len == 0 ||
	    memcmp(s.p, want, s.len) == 0);
}

static uint32_t
ngroups(void)
{
	return klog_kgtable_ngroups(klog_coordinator_table(fx->g));
}

/* KIP-394 (JoinGroup v4+): a new member is answered MEMBER_ID_REQUIRED
 * with its id, is no member until it joins with it, and then joins as
 * any new member; ids that were never handed out are refused. */
static void
test_member_id_required(void **state)
{
	struct client a = { 0 }, b = { 0 };

	(void)state;
	join_v(&a, "g", SESSION_MS, 0, "consumer", "range", NULL, "a", 1);
	assert_int_equal(a.joins, 1);
	assert_int_equal(a.error, KLOG_KERR_MEMBER_ID_REQUIRED);
	assert_int_equal(a.generation, -1);
	assert_int_equal(strncmp(a.member, "rdkafka-", 8), 0);
	assert_int_equal(ngroups(), 1);        /* kept for the rejoin */
	assert_int_equal(hb(&a, 0), KLOG_KERR_UNKNOWN_MEMBER_ID);
	/* A commit from outside the group may go ahead: no members yet. */
	assert_int_equal(klog_coordinator_commit_check(fx->g, S("g"), -1,
	    S("")), KLOG_KERR_NONE);
	join_v(&a, "g", SESSION_MS, 0, "consumer", "range", NULL, "a", 1);
	assert_int_equal(a.joins, 2);
	assert_int_equal(a.error, KLOG_KERR_NONE);
	assert_int_equal(a.generation, 1);
	assert_string_equal(a.leader, a.member);
	/* A second member: its id first, then it joins and a rejoins. */
	join_v(&b, "g", SESSION_MS, 0, "consumer", "range", NULL, "b", 1);
	assert_int_equal(b.error, KLOG_KERR_MEMBER_ID_REQUIRED);
	assert_int_equal(hb(&a, 1), KLOG_KERR_NONE);   /* no rebalance yet */
	join_v(&b, "g", SESSION_MS, 0, "consumer", "range", NULL, "b", 1);
	assert_int_equal(b.joins, 1);                 /* held */
	assert_int_equal(hb(&a, 1), KLOG_KERR_REBALANCE_IN_PROGRESS);
	join_v(&a, "g", SESSION_MS, 0, "consumer", "range", NULL, "a", 1);
	assert_int_equal(b.generation, 2);
	assert_int_equal(a.nmembers, 2);
	/* An id this coordinator never handed out. */
	snprintf(b.member, sizeof(b.member), "rdkafka-99-0123456789abcdef");
	join_v(&b, "g", SESSION_MS, 0, "consumer", "range", NULL, "b", 1);
	assert_int_equal(b.error, KLOG_KERR_UNKNOWN_MEMBER_ID);
}

/* An id handed out and never joined with goes after a session, and its
 * group with it; one may also leave before it joins. */
static void
test_pending_expiry(void **state)
{
	struct client a = { 0 }, b = { 0 };
	int64_t end;

	(void)state;
	join_v(&a, "g", SESSION_MS, 0, "consumer", "range", NULL, "a", 1);
	assert_int_equal(a.error, KLOG_KERR_MEMBER_ID_REQUIRED);
	end = klog_loop_now_ms() + 4 * SESSION_MS;
	while (ngroups() > 0 && klog_loop_now_ms() < end)
		assert_true(klog_loop_run_once(fx->loop, 5) >= 0);
	assert_int_equal(ngroups(), 0);
	join_v(&a, "g", SESSION_MS, 0, "consumer", "range", NULL, "a", 1);
	assert_int_equal(a.error, KLOG_KERR_UNKNOWN_MEMBER_ID);
	join_v(&b, "g", SESSION_MS, 0, "consumer", "range", NULL, "b", 1);
	assert_int_equal(klog_coordinator_leave(fx->g, S("g"), S(b.member)),
	    KLOG_KERR_NONE);
	assert_int_equal(ngroups(), 0);
	join_v(&b, "g", SESSION_MS, 0, "consumer", "range", NULL, "b", 1);
	assert_int_equal(b.error, KLOG_KERR_UNKNOWN_MEMBER_ID);
}

/* Pending ids count toward a group's members: they hold memory. */
static void
test_pending_limit(void **state)
{
	struct client c[3];

	(void)state;
	memset(c, 0, sizeof(c));
	make(2, 2);
	join_v(&c[0], "g", SESSION_MS, 0, "consumer", "range", NULL, "m", 1);
	join_v(&c[1], "g", SESSION_MS, 0, "consumer", "range", NULL, "m", 1);
	join_v(&c[2], "g", SESSION_MS, 0, "consumer", "range", NULL, "m", 1);
	assert_int_equal(c[1].error, KLOG_KERR_MEMBER_ID_REQUIRED);
	assert_int_equal(c[2].error, KLOG_KERR_UNKNOWN);
	join_v(&c[0], "g", SESSION_MS, 0, "consumer", "range", NULL, "m", 1);
	assert_int_equal(c[0].generation, 1);
}

/* A group instance id is kept and shown (to the leader, in DescribeGroups)
 * but its member stays a dynamic one: a second member with the same
 * instance id is a second member. */
static void
test_instance_id(void **state)
{
	struct client a = { 0 }, b = { 0 };

	(void)state;
	snprintf(a.instance, sizeof(a.instance), "host-1");
	snprintf(b.instance, sizeof(b.instance), "host-1");
	join(&a, "a");
	join(&b, "b");
	join(&a, "a");
	assert_int_equal(a.nmembers, 2);
	assert_string_equal(a.instances[0], "host-1");
	assert_string_equal(a.instances[1], "host-1");
	assert_string_not_equal(a.members[0], a.members[1]);
}

/* DescribeGroups' view: Kafka's state names, the members with their
 * client id and host, metadata and assignment only when Stable. */
static void
test_describe(void **state)
{
	const klog_kgtable_t *t;
	const klog_kgroup_t *grp;
	struct client a = { 0 }, b = { 0 }, c = { 0 };
	klog_kdmember_t ms[8];
	klog_kdgroup_t d;
	size_t cursor = 0;
	int seen = 0;

	(void)state;
	t = klog_coordinator_table(fx->g);
	assert_true(str_is(klog_kgtable_state_name(NULL), "Dead"));
	snprintf(b.instance, sizeof(b.instance), "i-b");
	two_members(&a, &b);
	grp = klog_kgtable_find(t, S("g"));
	assert_non_null(grp);
	klog_kgtable_describe(grp, &d, ms);
	assert_true(str_is(d.id, "g"));
	assert_true(str_is(d.state, "Stable"));
	assert_true(str_is(d.protocol_type, "consumer"));
	assert_true(str_is(d.protocol, "range"));
	assert_int_equal(d.nmembers, 2);
	assert_true(str_is(ms[0].member_id, a.member));
	assert_null(ms[0].instance_id.p);
	assert_true(str_is(ms[1].instance_id, "i-b"));
	assert_true(str_is(ms[0].client_id, "rdkafka"));
	assert_true(str_is(ms[0].client_host, "/127.0.0.1"));
	assert_int_equal(ms[1].meta_len, 6);
	assert_memory_equal(ms[1].meta, "b-meta", 6);
	assert_int_equal(ms[1].assign_len, 1);
	assert_memory_equal(ms[1].assign, "B", 1);
	/* Preparing, then completing: no protocol, no metadata. */
	join(&b, "b-meta2");
	klog_kgtable_describe(grp, &d, ms);
	assert_true(str_is(d.state, "PreparingRebalance"));
	assert_int_equal(d.protocol.len, 0);
	assert_int_equal(ms[0].meta_len, 0);
	assert_int_equal(ms[1].assign_len, 0);
	join(&a, "a-meta");
	klog_kgtable_describe(grp, &d, ms);
	assert_true(str_is(d.state, "CompletingRebalance"));
	/* Every group is listed once. */
	join_p(&c, "h", SESSION_MS, 0, "consumer", "range", NULL, "c");
	for (grp = NULL; (grp = klog_kgtable_next(t, &cursor, grp)) != NULL;)
		seen += str_is((klog_str_t){ grp->id, grp->id_len }, "g") ? 1 :
		    str_is((klog_str_t){ grp->id, grp->id_len }, "h") ? 10 :
		    100;
	assert_int_equal(seen, 11);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_first_join, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_second_member_rebalances,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_leader_rejoin_rebalances,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_rules, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_heartbeat_errors, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_join_errors, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_protocol_vote, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_leave_rebalances, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_session_expiry, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_rebalance_timeout, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_check, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_member_id_required, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pending_expiry, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pending_limit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_instance_id, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_describe, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
