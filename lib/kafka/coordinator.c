/*
 * The broker's Kafka group coordinator (coordinator.h), after Apache
 * Kafka's GroupCoordinator: the same four states, the same join, sync,
 * heartbeat, leave and commit rules, the same "every known member rejoins
 * or the rebalance timeout drops it", and KIP-394's pending member ids.
 * The groups and members are the table's (kgtable.h); this file is the
 * state machine over them.
 *
 * Timers never fail mid-rebalance: each member's session timer and each
 * group's rebalance timer is started once, when the table makes the
 * member or group (the only place a timer can fail, with nothing done),
 * and is only moved after that.  A repeating timer stays scheduled;
 * moving a scheduled timer cannot fail.  Likewise the leader's member list
 * is built in an array allocated once for max_members.
 *
 * The callbacks run inside these calls and inside timer callbacks; they
 * must not call back into the coordinator.  A wait is cleared before its
 * callback runs, so the callback may free it.
 */
#include <stdlib.h>
#include <string.h>

#include "klog/base/error.h"
#include "klog/kafka/coordinator.h"
#include "klog/kafka/kwire.h"

/* A parked rebalance timer's period: it only has to stay scheduled. */
#define PARK_MS (24 * 3600 * 1000)
#define ESC (KLOG_KGTABLE_ESC_MAX + 1)

enum wait_kind { WAIT_NONE, WAIT_JOIN, WAIT_SYNC };

struct klog_coordinator {
	klog_loop_t *loop;
	klog_coordinator_config_t cfg;
	klog_kgtable_t *t;
	klog_kjoin_member_t *scratch;  /* max_members: the leader's answer */
};

static klog_str_t
str_of(const char *p, size_t n)
{
	klog_str_t s = { p, (uint16_t)n };

	return s;
}

static int
str_eq(klog_str_t a, klog_str_t b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

/* Every heartbeat, join, sync and commit of a member, and the end of each
 * wait, starts its session again.  The timer is scheduled, so moving it
 * cannot fail. */
static void
renew(klog_coordinator_t *g, klog_kmember_t *m)
{
	(void)klog_loop_timer_start(g->loop, &m->timer, m->session_ms,
	    m->session_ms);
}

/* ---- answers ---- */

static void
answer_join(klog_coordinator_t *g, klog_kmember_t *m, const klog_kgroup_t *grp,
    int with_members)
{
	struct klog_coordinator_wait *w = m->join_wait;
	klog_kjoin_resp_t r;
	uint32_t n = 0;

	m->join_wait = NULL;
	w->kind = WAIT_NONE;
	renew(g, m);
	if (with_members)
		for (klog_kmember_t *x = grp->head; x != NULL; x = x->next) {
			const klog_kpair_t *p = klog_kgtable_proto(x,
			    grp->protocol);

			g->scratch[n] = (klog_kjoin_member_t){
			    str_of(x->id, x->id_len), x->instance_id,
			    p ? p->data : NULL, p ? p->len : 0 };
			n++;
		}
	memset(&r, 0, sizeof(r));
	r.error = KLOG_KERR_NONE;
	r.generation = grp->generation;
	r.protocol = grp->protocol;
	r.leader_id = str_of(grp->leader->id, grp->leader->id_len);
	r.member_id = str_of(m->id, m->id_len);
	r.nmembers = n;
	r.members = n > 0 ? g->scratch : NULL;
	g->cfg.join_done(w, &r);
}

static void
join_error(klog_coordinator_t *g, klog_coordinator_wait_t *w, int16_t error,
    const klog_kmember_t *m)
{
	klog_kjoin_resp_t r;

	memset(&r, 0, sizeof(r));
	w->kind = WAIT_NONE;
	r.error = error;
	r.generation = -1;
	if (m != NULL)
		r.member_id = str_of(m->id, m->id_len);
	g->cfg.join_done(w, &r);
}

static void
answer_sync(klog_coordinator_t *g, klog_kmember_t *m, int16_t error)
{
	klog_coordinator_wait_t *w = m->sync_wait;

	m->sync_wait = NULL;
	w->kind = WAIT_NONE;
	renew(g, m);
	if (error != KLOG_KERR_NONE)
		g->cfg.sync_done(w, error, NULL, 0);
	else
		g->cfg.sync_done(w, error, m->assign, m->assign_len);
}

static void
sync_error(klog_coordinator_t *g, klog_coordinator_wait_t *w, int16_t error)
{
	w->kind = WAIT_NONE;
	g->cfg.sync_done(w, error, NULL, 0);
}

/* ---- the rebalance ---- */

/* Drop m from its group; a wait it still holds is answered
 * UNKNOWN_MEMBER_ID, since it is no longer one. */
static void
member_remove(klog_coordinator_t *g, klog_kmember_t *m, const char *why)
{
	klog_kgroup_t *grp = m->grp;
	char e1[ESC], e2[ESC];

	klog_logger_say(&g->cfg.log, KLOG_LEVEL_INFO, "kafka group \"%s\": "
	    "member \"%s\" removed: %s",
	    klog_kgtable_esc(grp->id, grp->id_len, e1),
	    klog_kgtable_esc(m->id, m->id_len, e2), why);
	if (m->join_wait != NULL)
		join_error(g, m->join_wait, KLOG_KERR_UNKNOWN_MEMBER_ID, NULL);
	if (m->sync_wait != NULL)
		sync_error(g, m->sync_wait, KLOG_KERR_UNKNOWN_MEMBER_ID);
	klog_kgtable_member_free(m);
}

/* Kafka's onCompleteJoin: those who did not rejoin are dropped, the
 * generation moves on, and every held join is answered. */
static void
complete_join(klog_coordinator_t *g, klog_kgroup_t *grp)
{
	char e1[ESC], e2[ESC], e3[ESC];
	klog_kmember_t *m, *next;

	for (m = grp->head; m != NULL; m = next) {
		next = m->next;
		if (!m->joined)
			member_remove(g, m, "did not rejoin within the "
			    "rebalance timeout");
	}
	grp->generation++;
	(void)klog_loop_timer_start(g->loop, &grp->timer, PARK_MS, PARK_MS);
	if (grp->nmembers == 0) {
		grp->state = KLOG_KGROUP_EMPTY;
		klog_logger_say(&g->cfg.log, KLOG_LEVEL_INFO, "kafka group "
		    "\"%s\": generation %d: empty",
		    klog_kgtable_esc(grp->id, grp->id_len, e1),
		    (int)grp->generation);
		return;
	}
	if (grp->leader == NULL)
		grp->leader = grp->head;
	grp->protocol = klog_kgtable_select(grp);
	grp->state = KLOG_KGROUP_AWAITING_SYNC;
	klog_logger_say(&g->cfg.log, KLOG_LEVEL_INFO, "kafka group \"%s\": "
	    "generation %d: %u member%s, leader \"%s\", protocol \"%s\"",
	    klog_kgtable_esc(grp->id, grp->id_len, e1), (int)grp->generation,
	    (unsigned)grp->nmembers, grp->nmembers == 1 ? "" : "s",
	    klog_kgtable_esc(grp->leader->id, grp->leader->id_len, e2),
	    klog_kgtable_esc(grp->protocol.p, grp->protocol.len, e3));
	for (m = grp->head; m != NULL; m = m->next) {
		m->joined = 0;
		if (m->join_wait != NULL)
			answer_join(g, m, grp, m == grp->leader);
	}
}

/* Complete the rebalance if every member has joined again. */
static void
try_complete(klog_coordinator_t *g, klog_kgroup_t *grp)
{
	if (grp->state != KLOG_KGROUP_PREPARING)
		return;
	for (klog_kmember_t *m = grp->head; m != NULL; m = m->next)
		if (!m->joined)
			return;
	complete_join(g, grp);
}

/* Kafka's prepareRebalance: syncs held for the old generation are told to
 * rejoin, and the rebalance timer starts at the largest of the members'
 * rebalance timeouts (JoinGroup v1's, else their session timeouts). */
static void
prepare_rebalance(klog_coordinator_t *g, klog_kgroup_t *grp)
{
	int32_t timeout = 0;

	if (grp->state == KLOG_KGROUP_PREPARING)
		return;
	for (klog_kmember_t *m = grp->head; m != NULL; m = m->next) {
		if (m->sync_wait != NULL)
			answer_sync(g, m, KLOG_KERR_REBALANCE_IN_PROGRESS);
		m->assign = NULL;
		m->assign_len = 0;
		if (m->rebalance_ms > timeout)
			timeout = m->rebalance_ms;
	}
	free(grp->assign_buf);
	grp->assign_buf = NULL;
	grp->protocol = str_of(NULL, 0);
	grp->state = KLOG_KGROUP_PREPARING;
	(void)klog_loop_timer_start(g->loop, &grp->timer, timeout, PARK_MS);
}

/* After a member left or expired: the rest rebalance.  The group may be
 * left empty, for settle() to free. */
static void
after_removal(klog_coordinator_t *g, klog_kgroup_t *grp)
{
	if (grp->state != KLOG_KGROUP_EMPTY)
		prepare_rebalance(g, grp);
	try_complete(g, grp);
}

/* The last step of every entry point that may have emptied a group: an
 * empty group keeps nothing worth keeping (its offsets are koffsets'),
 * once no id it handed out can still join. */
static void
settle(klog_kgroup_t *grp)
{
	if (grp->nmembers == 0 && grp->npending == 0)
		klog_kgtable_group_free(grp);
}

static void
session_fired(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_kmember_t *m = arg;
	klog_kgroup_t *grp = m->grp;
	klog_coordinator_t *g = klog_kgtable_owner(grp->t);

	(void)loop;
	(void)t;
	if (m->pending) {
		/* An id handed out that never joined. */
		klog_kgtable_member_free(m);
		settle(grp);
		return;
	}
	/* Kafka's shouldKeepMemberAlive: a held request is a live member. */
	if (m->join_wait != NULL || m->sync_wait != NULL)
		return;
	member_remove(g, m, "session timed out");
	after_removal(g, grp);
	settle(grp);
}

static void
rebalance_fired(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_kgroup_t *grp = arg;
	klog_coordinator_t *g = klog_kgtable_owner(grp->t);

	(void)loop;
	(void)t;
	if (grp->state != KLOG_KGROUP_PREPARING)
		return;
	complete_join(g, grp);
	settle(grp);
}

/* ---- the coordinator ---- */

int
klog_coordinator_new(klog_loop_t *loop, const klog_coordinator_config_t *cfg,
    klog_coordinator_t **out)
{
	klog_coordinator_t *g;
	klog_kgtable_config_t tc = { cfg->max_members, cfg->max_groups,
	    rebalance_fired, session_fired, NULL };
	int rc;

	*out = NULL;
	if (cfg->join_done == NULL || cfg->sync_done == NULL ||
	    cfg->max_members == 0 || cfg->max_groups == 0 ||
	    cfg->min_session_ms > cfg->max_session_ms)
		return -KLOG_EINVAL;
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return -KLOG_ENOMEM;
	g->loop = loop;
	g->cfg = *cfg;
	tc.owner = g;
	if ((rc = klog_kgtable_new(loop, &tc, &g->t)) < 0 ||
	    (g->scratch = calloc(cfg->max_members,
	    sizeof(*g->scratch))) == NULL) {
		klog_coordinator_free(g);
		return rc < 0 ? rc : -KLOG_ENOMEM;
	}
	*out = g;
	return 0;
}

void
klog_coordinator_free(klog_coordinator_t *g)
{
	if (g == NULL)
		return;
	klog_kgtable_free(g->t);
	free(g->scratch);
	free(g);
}

const klog_kgtable_t *
klog_coordinator_table(const klog_coordinator_t *g)
{
	return g->t;
}

static void
hold_join(klog_kmember_t *m, klog_coordinator_wait_t *w)
{
	m->joined = 1;
	m->join_wait = w;
	w->kind = WAIT_JOIN;
	w->group = m->grp;
	w->member = m;
}

/* The join of a known member, m, as doJoinGroup has it by state. */
static int
join_known(klog_coordinator_t *g, klog_kgroup_t *grp, klog_kmember_t *m,
    const klog_coordinator_join_req_t *req, klog_coordinator_wait_t *w)
{
	int same = klog_kgtable_protos_match(m, &req->member);

	if (grp->state == KLOG_KGROUP_AWAITING_SYNC && same) {
		/* It may have missed the answer: the same one again. */
		m->join_wait = w;
		answer_join(g, m, grp, m == grp->leader);
		return 0;
	}
	if (grp->state == KLOG_KGROUP_STABLE && same && m != grp->leader) {
		m->join_wait = w;
		answer_join(g, m, grp, 0);
		return 0;
	}
	/* A leader's rejoin rebalances even with the same metadata: it is
	 * how a leader reassigns after the topics changed. */
	if (klog_kgtable_update(m, &req->member) < 0)
		return -KLOG_ENOMEM;
	renew(g, m);
	prepare_rebalance(g, grp);
	if (m->join_wait != NULL)   /* a second join: the first is stale */
		join_error(g, m->join_wait, KLOG_KERR_REBALANCE_IN_PROGRESS,
		    m);
	hold_join(m, w);
	try_complete(g, grp);
	return 0;
}

/* A member new to the group, or a pending id joining: its join held, and
 * the group rebalances.  0, or -KLOG_ENOMEM with w not answered. */
static int
join_new(klog_coordinator_t *g, klog_kgroup_t *grp, klog_kmember_t *pending,
    const klog_coordinator_join_req_t *req, klog_coordinator_wait_t *w)
{
	klog_kmember_t *m = pending;

	if (pending == NULL && grp->nmembers + grp->npending >=
	    klog_kgtable_max_members(g->t)) {
		join_error(g, w, KLOG_KERR_UNKNOWN, NULL);
		return 0;
	}
	/* The first member names the group's protocol type. */
	if (grp->nmembers == 0 &&
	    klog_kgtable_set_ptype(grp, req->protocol_type) < 0)
		return -KLOG_ENOMEM;
	if (pending != NULL && klog_kgtable_admit(pending, &req->member) < 0)
		return -KLOG_ENOMEM;
	if (pending == NULL && (m = klog_kgtable_member_new(grp, &req->member,
	    0)) == NULL)
		return -KLOG_ENOMEM;
	renew(g, m);
	hold_join(m, w);
	prepare_rebalance(g, grp);
	try_complete(g, grp);
	return 0;
}

/* KIP-394: a new member is handed its id first, and joins with it. */
static int
hand_out_id(klog_coordinator_t *g, klog_kgroup_t *grp,
    const klog_coordinator_join_req_t *req, klog_coordinator_wait_t *w)
{
	klog_kmember_t *p;

	if (grp->nmembers + grp->npending >= klog_kgtable_max_members(g->t)) {
		join_error(g, w, KLOG_KERR_UNKNOWN, NULL);
		return 0;
	}
	if ((p = klog_kgtable_member_new(grp, &req->member, 1)) == NULL)
		return -KLOG_ENOMEM;
	join_error(g, w, KLOG_KERR_MEMBER_ID_REQUIRED, p);
	return 0;
}

/* Whether the join's protocols can never be agreed on in grp (no
 * protocol at all, another type, none every member lists). */
static int
inconsistent(const klog_kgroup_t *grp, const klog_coordinator_join_req_t *req)
{
	return req->member.nprotocols == 0 || (grp->nmembers > 0 &&
	    (!str_eq(req->protocol_type, grp->ptype) ||
	    !klog_kgtable_supports(grp, &req->member)));
}

int
klog_coordinator_join(klog_coordinator_t *g, const klog_coordinator_join_req_t *req,
    klog_coordinator_wait_t *w)
{
	klog_kgroup_t *grp;
	klog_kmember_t *m = NULL, *p = NULL;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	if (req->group.len == 0) {
		join_error(g, w, KLOG_KERR_INVALID_GROUP_ID, NULL);
		return 0;
	}
	if (req->member.session_ms < g->cfg.min_session_ms ||
	    req->member.session_ms > g->cfg.max_session_ms) {
		join_error(g, w, KLOG_KERR_INVALID_SESSION_TIMEOUT, NULL);
		return 0;
	}
	if ((grp = klog_kgtable_find(g->t, req->group)) == NULL) {
		if (req->member_id.len > 0) {
			join_error(g, w, KLOG_KERR_UNKNOWN_MEMBER_ID, NULL);
			return 0;
		}
		if (klog_kgtable_ngroups(g->t) >= g->cfg.max_groups) {
			join_error(g, w, KLOG_KERR_UNKNOWN, NULL);
			return 0;
		}
		if ((grp = klog_kgtable_group_new(g->t, req->group)) == NULL)
			return -KLOG_ENOMEM;
	}
	m = klog_kgtable_member(grp, req->member_id);
	if (m == NULL)
		p = klog_kgtable_pending(grp, req->member_id);
	if (inconsistent(grp, req))
		join_error(g, w, KLOG_KERR_INCONSISTENT_GROUP_PROTOCOL, m);
	else if (m != NULL)
		rc = join_known(g, grp, m, req, w);
	else if (req->member_id.len > 0 && p == NULL)
		join_error(g, w, KLOG_KERR_UNKNOWN_MEMBER_ID, NULL);
	else if (p == NULL && req->require_member_id)
		rc = hand_out_id(g, grp, req, w);
	else
		rc = join_new(g, grp, p, req, w);
	settle(grp);     /* a group made for a join that failed */
	return rc;
}

/* The leader's assignment: one block for every member's share (a member
 * it leaves out gets an empty one), then every held sync answered. */
static int
sync_leader(klog_coordinator_t *g, klog_kgroup_t *grp,
    const klog_coordinator_sync_req_t *req)
{
	size_t size = 0;
	uint8_t *buf, *p;

	for (uint32_t i = 0; i < req->nassign; i++)
		if (klog_kgtable_member(grp, req->assign[i].name) != NULL)
			size += req->assign[i].len;
	if ((buf = malloc(size ? size : 1)) == NULL)
		return -KLOG_ENOMEM;
	free(grp->assign_buf);
	grp->assign_buf = buf;
	for (klog_kmember_t *m = grp->head; m != NULL; m = m->next) {
		m->assign = NULL;
		m->assign_len = 0;
	}
	p = buf;
	for (uint32_t i = 0; i < req->nassign; i++) {
		const klog_kpair_t *a = &req->assign[i];
		klog_kmember_t *m = klog_kgtable_member(grp, a->name);

		if (m == NULL)
			continue;
		if (a->len > 0)
			memcpy(p, a->data, a->len);
		m->assign = p;     /* a member named twice: the last share */
		m->assign_len = a->len;
		p += a->len;
	}
	grp->state = KLOG_KGROUP_STABLE;
	for (klog_kmember_t *m = grp->head; m != NULL; m = m->next)
		if (m->sync_wait != NULL)
			answer_sync(g, m, KLOG_KERR_NONE);
	return 0;
}

int
klog_coordinator_sync(klog_coordinator_t *g, const klog_coordinator_sync_req_t *req,
    klog_coordinator_wait_t *w)
{
	klog_kgroup_t *grp = klog_kgtable_find(g->t, req->group);
	klog_kmember_t *m;
	klog_coordinator_wait_t *old;
	int rc;

	memset(w, 0, sizeof(*w));
	if (grp == NULL ||
	    (m = klog_kgtable_member(grp, req->member_id)) == NULL) {
		sync_error(g, w, KLOG_KERR_UNKNOWN_MEMBER_ID);
		return 0;
	}
	if (req->generation != grp->generation) {
		sync_error(g, w, KLOG_KERR_ILLEGAL_GENERATION);
		return 0;
	}
	renew(g, m);
	switch (grp->state) {
	case KLOG_KGROUP_PREPARING:
		sync_error(g, w, KLOG_KERR_REBALANCE_IN_PROGRESS);
		return 0;
	case KLOG_KGROUP_STABLE:
		m->sync_wait = w;
		answer_sync(g, m, KLOG_KERR_NONE);
		return 0;
	case KLOG_KGROUP_AWAITING_SYNC:
		break;
	default:
		sync_error(g, w, KLOG_KERR_UNKNOWN_MEMBER_ID);
		return 0;
	}
	/* A second sync of the member's: the first is stale, told to
	 * rejoin, and kept out of the leader's answers meanwhile. */
	old = m->sync_wait;
	m->sync_wait = NULL;
	if (m == grp->leader && (rc = sync_leader(g, grp, req)) < 0) {
		m->sync_wait = old;
		return rc;
	}
	if (old != NULL)
		sync_error(g, old, KLOG_KERR_REBALANCE_IN_PROGRESS);
	m->sync_wait = w;
	if (grp->state == KLOG_KGROUP_STABLE) {
		answer_sync(g, m, KLOG_KERR_NONE);
		return 0;
	}
	w->kind = WAIT_SYNC;
	w->group = grp;
	w->member = m;
	return 0;
}

void
klog_coordinator_cancel(klog_coordinator_t *g, klog_coordinator_wait_t *w)
{
	klog_kmember_t *m;

	if (w->kind == WAIT_NONE)
		return;
	m = w->member;
	/* The member stays (a join it made still counts as made) until its
	 * session, starting now, runs out. */
	if (w->kind == WAIT_JOIN && m->join_wait == w)
		m->join_wait = NULL;
	if (w->kind == WAIT_SYNC && m->sync_wait == w)
		m->sync_wait = NULL;
	w->kind = WAIT_NONE;
	renew(g, m);
}

int16_t
klog_coordinator_heartbeat(klog_coordinator_t *g, klog_str_t group,
    int32_t generation, klog_str_t member_id)
{
	klog_kgroup_t *grp = klog_kgtable_find(g->t, group);
	klog_kmember_t *m;

	if (grp == NULL || (m = klog_kgtable_member(grp, member_id)) == NULL)
		return KLOG_KERR_UNKNOWN_MEMBER_ID;
	if (generation != grp->generation)
		return KLOG_KERR_ILLEGAL_GENERATION;
	renew(g, m);
	/* Kafka 0.10 said REBALANCE_IN_PROGRESS while awaiting the leader's
	 * sync too, sending members that had just joined back to join
	 * again; later Kafka answers them NONE, as here. */
	return grp->state == KLOG_KGROUP_PREPARING ?
	    KLOG_KERR_REBALANCE_IN_PROGRESS : KLOG_KERR_NONE;
}

int16_t
klog_coordinator_leave(klog_coordinator_t *g, klog_str_t group, klog_str_t member_id)
{
	klog_kgroup_t *grp = klog_kgtable_find(g->t, group);
	klog_kmember_t *m;

	if (grp == NULL)
		return KLOG_KERR_UNKNOWN_MEMBER_ID;
	if ((m = klog_kgtable_member(grp, member_id)) != NULL) {
		member_remove(g, m, "left the group");
		after_removal(g, grp);
	} else if ((m = klog_kgtable_pending(grp, member_id)) != NULL) {
		klog_kgtable_member_free(m);
	} else {
		return KLOG_KERR_UNKNOWN_MEMBER_ID;
	}
	settle(grp);
	return KLOG_KERR_NONE;
}

int16_t
klog_coordinator_commit_check(klog_coordinator_t *g, klog_str_t group,
    int32_t generation, klog_str_t member_id)
{
	klog_kgroup_t *grp = klog_kgtable_find(g->t, group);
	klog_kmember_t *m;

	/* No group here is an empty one: a commit from outside any group
	 * goes ahead, one naming a generation comes from an older one. */
	if (grp == NULL || grp->nmembers == 0)
		return generation < 0 ? KLOG_KERR_NONE :
		    KLOG_KERR_ILLEGAL_GENERATION;
	/* As Kafka 0.10's doCommitOffsets: while preparing a rebalance the
	 * old generation may still commit (members commit before they
	 * rejoin); once it is over, nobody may until the assignment is. */
	if (grp->state == KLOG_KGROUP_AWAITING_SYNC)
		return KLOG_KERR_REBALANCE_IN_PROGRESS;
	if ((m = klog_kgtable_member(grp, member_id)) == NULL)
		return KLOG_KERR_UNKNOWN_MEMBER_ID;
	if (generation != grp->generation)
		return KLOG_KERR_ILLEGAL_GENERATION;
	renew(g, m);
	return KLOG_KERR_NONE;
}
