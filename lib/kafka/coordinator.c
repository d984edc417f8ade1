/*
 * The broker's Kafka group coordinator (coordinator.h), after Apache Kafka
 * 0.10's GroupCoordinator: the same four states, the same join, sync,
 * heartbeat, leave and commit rules, the same "every known member rejoins
 * or the rebalance timeout drops it".
 *
 *   klog_coordinator_t --buckets--> group --members--> member --> member ...
 *                                 |  timer: the rebalance deadline
 *                                 |  (parked far away between rebalances)
 *                                 '--leader, protocol (a view into the
 *                                    leader's protocol list)
 *   member: its id, session, protocols and metadata (one block), its
 *   assignment (a view into the group's assignment block), its held join
 *   and sync, and a session timer of its own.
 *
 * Timers never fail mid-rebalance: each member's session timer and each
 * group's rebalance timer is started once, when the member or group is
 * made (the only place the loop's heap may need to grow, so the only
 * place a timer can fail, with -KLOG_ENOMEM and nothing done), and is
 * only moved after that.  A repeating timer stays scheduled; moving a
 * scheduled timer cannot fail.  Likewise the leader's member list is
 * built in an array allocated once for max_members.
 *
 * The callbacks run inside these calls and inside timer callbacks; they
 * must not call back into the coordinator.  A wait is cleared before its
 * callback runs, so the callback may free it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "klog/base/clock.h"
#include "klog/base/error.h"
#include "klog/kafka/coordinator.h"
#include "klog/kafka/kwire.h"

/* A parked rebalance timer's period: it only has to stay scheduled. */
#define PARK_MS (24 * 3600 * 1000)
/* The client id's share of a member id, so an id fits a klog_str_t. */
#define CLIENT_ID_MAX 255
#define ESC_MAX 160     /* a name in a log line, escaped and cut */

enum state { ST_EMPTY, ST_PREPARING, ST_AWAITING_SYNC, ST_STABLE };
enum wait_kind { WAIT_NONE, WAIT_JOIN, WAIT_SYNC };

struct kproto {
	klog_str_t name;
	const uint8_t *meta;
	uint32_t meta_len;
};

struct group;

struct member {
	struct member *prev, *next;  /* the group's, oldest first */
	struct group *grp;
	klog_timer_t timer;          /* session; repeating, always scheduled */
	char *id;
	uint16_t id_len;
	int32_t session_ms, rebalance_ms;
	uint32_t nprotos;
	struct kproto *protos;       /* one block with the names and metadata */
	const uint8_t *assign;       /* into grp->assign_buf */
	uint32_t assign_len;
	klog_coordinator_wait_t *join_wait, *sync_wait;
	int joined;                  /* joined in this rebalance (its join may
	                                since have been cancelled) */
};

struct group {
	struct group *hnext;
	klog_coordinator_t *g;
	klog_timer_t timer;          /* the rebalance deadline, or parked */
	char *id;                    /* the id, then the protocol type */
	uint16_t id_len;
	klog_str_t ptype;
	int state;
	int32_t generation;
	struct member *head, *tail;
	uint32_t nmembers;
	struct member *leader;
	klog_str_t protocol;         /* AwaitingSync and Stable only */
	uint8_t *assign_buf;
};

struct klog_coordinator {
	klog_loop_t *loop;
	klog_coordinator_config_t cfg;
	struct group **buckets;
	size_t nbuckets;             /* a power of two */
	uint32_t ngroups;
	uint64_t seed, counter;      /* member ids */
	klog_coordinator_member_t *scratch; /* max_members, the leader's answer */
};

static void session_fired(klog_loop_t *loop, klog_timer_t *t, void *arg);
static void rebalance_fired(klog_loop_t *loop, klog_timer_t *t, void *arg);

/* ---- small helpers ---- */

static int
str_eq(klog_str_t a, const char *p, size_t n)
{
	return a.len == n && (n == 0 || memcmp(a.p, p, n) == 0);
}

static klog_str_t
str_of(const char *p, size_t n)
{
	klog_str_t s = { p, (uint16_t)n };

	return s;
}

/* name made printable for a log line: quotes, backslashes and bytes
 * outside printable ASCII as \xHH, cut with "..." past ESC_MAX. */
static const char *
esc(const char *p, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (o + 8 > ESC_MAX) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c > 0x7e || c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	return out;
}

static uint64_t
mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static size_t
hash_id(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
	return (size_t)h;
}

/* ---- groups and members ---- */

static struct group *
group_find(const klog_coordinator_t *g, klog_str_t id)
{
	struct group *grp = g->buckets[hash_id(id.p, id.len) &
	    (g->nbuckets - 1)];

	for (; grp != NULL; grp = grp->hnext)
		if (str_eq(id, grp->id, grp->id_len))
			return grp;
	return NULL;
}

static struct member *
member_find(const struct group *grp, klog_str_t id)
{
	if (id.len == 0)
		return NULL;
	for (struct member *m = grp->head; m != NULL; m = m->next)
		if (str_eq(id, m->id, m->id_len))
			return m;
	return NULL;
}

/* A new empty group (generation 0) in the table; NULL for no memory. */
static struct group *
group_new(klog_coordinator_t *g, klog_str_t id)
{
	struct group *grp = calloc(1, sizeof(*grp));
	size_t b;

	if (grp == NULL || (grp->id = malloc(id.len + 1u)) == NULL)
		goto fail;
	memcpy(grp->id, id.p, id.len);
	grp->id[id.len] = '\0';
	grp->id_len = id.len;
	grp->g = g;
	klog_timer_init(&grp->timer, rebalance_fired, grp);
	if (klog_loop_timer_start(g->loop, &grp->timer, PARK_MS, PARK_MS) < 0)
		goto fail;
	b = hash_id(id.p, id.len) & (g->nbuckets - 1);
	grp->hnext = g->buckets[b];
	g->buckets[b] = grp;
	g->ngroups++;
	return grp;
fail:
	if (grp != NULL)
		free(grp->id);
	free(grp);
	return NULL;
}

static void
member_free(klog_coordinator_t *g, struct member *m)
{
	klog_loop_timer_stop(g->loop, &m->timer);
	free(m->protos);
	free(m->id);
	free(m);
}

/* Unlink and free a group: its members have no waits left, or the
 * coordinator is going away and forgets them. */
static void
group_free(klog_coordinator_t *g, struct group *grp)
{
	struct group **pp = &g->buckets[hash_id(grp->id, grp->id_len) &
	    (g->nbuckets - 1)];

	while (*pp != grp)
		pp = &(*pp)->hnext;
	*pp = grp->hnext;
	g->ngroups--;
	while (grp->head != NULL) {
		struct member *m = grp->head;

		grp->head = m->next;
		member_free(g, m);
	}
	klog_loop_timer_stop(g->loop, &grp->timer);
	free((char *)grp->ptype.p);
	free(grp->assign_buf);
	free(grp->id);
	free(grp);
}

/* A copy of a request's protocols in one block; NULL for no memory. */
static struct kproto *
protos_copy(const klog_coordinator_join_req_t *req)
{
	size_t size = (size_t)req->nprotocols * sizeof(struct kproto);
	struct kproto *ps;
	uint8_t *p;

	for (uint32_t i = 0; i < req->nprotocols; i++)
		size += req->protocols[i].name.len +
		    (size_t)req->protocols[i].meta_len;
	if ((ps = malloc(size ? size : 1)) == NULL)
		return NULL;
	p = (uint8_t *)(ps + req->nprotocols);
	for (uint32_t i = 0; i < req->nprotocols; i++) {
		const klog_coordinator_proto_t *q = &req->protocols[i];

		if (q->name.len > 0)
			memcpy(p, q->name.p, q->name.len);
		ps[i].name = str_of((const char *)p, q->name.len);
		p += q->name.len;
		if (q->meta_len > 0)
			memcpy(p, q->meta, q->meta_len);
		ps[i].meta = p;
		ps[i].meta_len = q->meta_len;
		p += q->meta_len;
	}
	return ps;
}

/* Whether the member's protocols and metadata are those of req (Kafka's
 * MemberMetadata.matches: same names, same order, same bytes). */
static int
protos_match(const struct member *m, const klog_coordinator_join_req_t *req)
{
	if (m->nprotos != req->nprotocols)
		return 0;
	for (uint32_t i = 0; i < m->nprotos; i++) {
		const klog_coordinator_proto_t *q = &req->protocols[i];

		if (!str_eq(q->name, m->protos[i].name.p, m->protos[i].name.len) ||
		    q->meta_len != m->protos[i].meta_len || (q->meta_len > 0 &&
		    memcmp(q->meta, m->protos[i].meta, q->meta_len) != 0))
			return 0;
	}
	return 1;
}

static const struct kproto *
member_proto(const struct member *m, klog_str_t name)
{
	for (uint32_t i = 0; i < m->nprotos; i++)
		if (str_eq(name, m->protos[i].name.p, m->protos[i].name.len))
			return &m->protos[i];
	return NULL;
}

/* Whether every member lists name. */
static int
all_list(const struct group *grp, klog_str_t name)
{
	for (const struct member *m = grp->head; m != NULL; m = m->next)
		if (member_proto(m, name) == NULL)
			return 0;
	return 1;
}

/* Kafka's supportsProtocols: a group with members takes a join only if it
 * lists one of the protocols every member (the joiner's old self too)
 * lists, so a protocol every member lists always exists. */
static int
supports(const struct group *grp, const klog_coordinator_join_req_t *req)
{
	if (grp->nmembers == 0)
		return 1;
	for (uint32_t i = 0; i < req->nprotocols; i++)
		if (all_list(grp, req->protocols[i].name))
			return 1;
	return 0;
}

/* Kafka's selectProtocol: each member votes for the first protocol it
 * lists that every member lists; the most votes win, a tie going to the
 * one the leader lists first. */
static klog_str_t
select_protocol(const struct group *grp)
{
	const struct member *ld = grp->leader;
	klog_str_t best = { NULL, 0 };
	uint32_t best_votes = 0;

	for (uint32_t i = 0; i < ld->nprotos; i++) {
		klog_str_t cand = ld->protos[i].name;
		uint32_t votes = 0;

		if (!all_list(grp, cand))
			continue;
		for (const struct member *m = grp->head; m != NULL;
		    m = m->next)
			for (uint32_t j = 0; j < m->nprotos; j++)
				if (all_list(grp, m->protos[j].name)) {
					votes += str_eq(cand,
					    m->protos[j].name.p,
					    m->protos[j].name.len);
					break;
				}
		if (best.p == NULL || votes > best_votes) {
			best = cand;
			best_votes = votes;
		}
	}
	return best;
}

/* Every heartbeat, join, sync and commit of a member, and the end of each
 * wait, starts its session again.  The timer is scheduled, so moving it
 * cannot fail. */
static void
renew(klog_coordinator_t *g, struct member *m)
{
	(void)klog_loop_timer_start(g->loop, &m->timer, m->session_ms,
	    m->session_ms);
}

/* ---- answers ---- */

static void
answer_join(klog_coordinator_t *g, struct member *m, const struct group *grp,
    int with_members)
{
	klog_coordinator_wait_t *w = m->join_wait;
	klog_coordinator_join_resp_t r;
	uint32_t n = 0;

	m->join_wait = NULL;
	w->kind = WAIT_NONE;
	renew(g, m);
	if (with_members)
		for (struct member *x = grp->head; x != NULL; x = x->next) {
			const struct kproto *p = member_proto(x, grp->protocol);

			g->scratch[n].member_id = str_of(x->id, x->id_len);
			g->scratch[n].meta = p ? p->meta : NULL;
			g->scratch[n].meta_len = p ? p->meta_len : 0;
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
    const struct member *m)
{
	klog_coordinator_join_resp_t r;

	memset(&r, 0, sizeof(r));
	w->kind = WAIT_NONE;
	r.error = error;
	r.generation = -1;
	if (m != NULL)
		r.member_id = str_of(m->id, m->id_len);
	g->cfg.join_done(w, &r);
}

static void
answer_sync(klog_coordinator_t *g, struct member *m, int16_t error)
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
member_remove(klog_coordinator_t *g, struct member *m, const char *why)
{
	struct group *grp = m->grp;
	char e1[ESC_MAX + 1], e2[ESC_MAX + 1];

	klog_logger_say(&g->cfg.log, KLOG_LEVEL_INFO, "kafka group \"%s\": "
	    "member \"%s\" removed: %s", esc(grp->id, grp->id_len, e1),
	    esc(m->id, m->id_len, e2), why);
	if (m->prev != NULL)
		m->prev->next = m->next;
	else
		grp->head = m->next;
	if (m->next != NULL)
		m->next->prev = m->prev;
	else
		grp->tail = m->prev;
	grp->nmembers--;
	if (grp->leader == m) {
		grp->leader = NULL;
		grp->protocol = str_of(NULL, 0);
	}
	if (m->join_wait != NULL)
		join_error(g, m->join_wait, KLOG_KERR_UNKNOWN_MEMBER_ID, NULL);
	if (m->sync_wait != NULL)
		sync_error(g, m->sync_wait, KLOG_KERR_UNKNOWN_MEMBER_ID);
	member_free(g, m);
}

/* Kafka's onCompleteJoin: those who did not rejoin are dropped, the
 * generation moves on, and every held join is answered. */
static void
complete_join(klog_coordinator_t *g, struct group *grp)
{
	char e1[ESC_MAX + 1], e2[ESC_MAX + 1], e3[ESC_MAX + 1];
	struct member *m, *next;

	for (m = grp->head; m != NULL; m = next) {
		next = m->next;
		if (!m->joined)
			member_remove(g, m, "did not rejoin within the "
			    "rebalance timeout");
	}
	grp->generation++;
	(void)klog_loop_timer_start(g->loop, &grp->timer, PARK_MS, PARK_MS);
	if (grp->nmembers == 0) {
		grp->state = ST_EMPTY;
		klog_logger_say(&g->cfg.log, KLOG_LEVEL_INFO, "kafka group "
		    "\"%s\": generation %d: empty",
		    esc(grp->id, grp->id_len, e1), (int)grp->generation);
		return;
	}
	if (grp->leader == NULL)
		grp->leader = grp->head;
	grp->protocol = select_protocol(grp);
	grp->state = ST_AWAITING_SYNC;
	klog_logger_say(&g->cfg.log, KLOG_LEVEL_INFO, "kafka group \"%s\": "
	    "generation %d: %u member%s, leader \"%s\", protocol \"%s\"",
	    esc(grp->id, grp->id_len, e1), (int)grp->generation,
	    (unsigned)grp->nmembers, grp->nmembers == 1 ? "" : "s",
	    esc(grp->leader->id, grp->leader->id_len, e2),
	    esc(grp->protocol.p, grp->protocol.len, e3));
	for (m = grp->head; m != NULL; m = m->next) {
		m->joined = 0;
		if (m->join_wait != NULL)
			answer_join(g, m, grp, m == grp->leader);
	}
}

/* Complete the rebalance if every member has joined again. */
static void
try_complete(klog_coordinator_t *g, struct group *grp)
{
	if (grp->state != ST_PREPARING)
		return;
	for (struct member *m = grp->head; m != NULL; m = m->next)
		if (!m->joined)
			return;
	complete_join(g, grp);
}

/* Kafka's prepareRebalance: syncs held for the old generation are told to
 * rejoin, and the rebalance timer starts at the members' largest
 * rebalance timeout. */
static void
prepare_rebalance(klog_coordinator_t *g, struct group *grp)
{
	int32_t timeout = 0;

	if (grp->state == ST_PREPARING)
		return;
	for (struct member *m = grp->head; m != NULL; m = m->next) {
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
	grp->state = ST_PREPARING;
	(void)klog_loop_timer_start(g->loop, &grp->timer, timeout, PARK_MS);
}

/* After a member left or expired: the rest rebalance.  The group may be
 * left empty, for settle() to free. */
static void
after_removal(klog_coordinator_t *g, struct group *grp)
{
	if (grp->state != ST_EMPTY)
		prepare_rebalance(g, grp);
	try_complete(g, grp);
}

/* The last step of every entry point that may have emptied a group: an
 * empty group keeps nothing worth keeping (its offsets are koffsets'). */
static void
settle(klog_coordinator_t *g, struct group *grp)
{
	if (grp->nmembers == 0)
		group_free(g, grp);
}

static void
session_fired(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	struct member *m = arg;
	struct group *grp = m->grp;
	klog_coordinator_t *g = grp->g;

	(void)loop;
	(void)t;
	/* Kafka's shouldKeepMemberAlive: a held request is a live member. */
	if (m->join_wait != NULL || m->sync_wait != NULL)
		return;
	member_remove(g, m, "session timed out");
	after_removal(g, grp);
	settle(g, grp);
}

static void
rebalance_fired(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	struct group *grp = arg;
	klog_coordinator_t *g = grp->g;

	(void)loop;
	(void)t;
	if (grp->state != ST_PREPARING)
		return;
	complete_join(g, grp);
	settle(g, grp);
}

/* ---- the coordinator ---- */

int
klog_coordinator_new(klog_loop_t *loop, const klog_coordinator_config_t *cfg,
    klog_coordinator_t **out)
{
	klog_coordinator_t *g;
	uint64_t rnd = 0;

	*out = NULL;
	if (cfg->join_done == NULL || cfg->sync_done == NULL ||
	    cfg->max_members == 0 || cfg->max_groups == 0 ||
	    cfg->min_session_ms > cfg->max_session_ms)
		return -KLOG_EINVAL;
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return -KLOG_ENOMEM;
	g->loop = loop;
	g->cfg = *cfg;
	for (g->nbuckets = 16; g->nbuckets < cfg->max_groups &&
	    g->nbuckets < 4096; g->nbuckets <<= 1)
		;
	g->buckets = calloc(g->nbuckets, sizeof(*g->buckets));
	g->scratch = calloc(cfg->max_members, sizeof(*g->scratch));
	if (g->buckets == NULL || g->scratch == NULL) {
		klog_coordinator_free(g);
		return -KLOG_ENOMEM;
	}
	/* Member ids must not repeat across restarts, where the counter
	 * starts again: each run gets a seed of its own, random when the
	 * kernel can say, else from the clocks and the pid. */
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
		rnd = 0;
	g->seed = mix64(rnd ^ (uint64_t)klog_clock_wall_ms() ^
	    mix64((uint64_t)klog_clock_mono_ns()) ^ ((uint64_t)getpid() << 40));
	*out = g;
	return 0;
}

void
klog_coordinator_free(klog_coordinator_t *g)
{
	if (g == NULL)
		return;
	for (size_t b = 0; g->buckets != NULL && b < g->nbuckets; b++)
		while (g->buckets[b] != NULL)
			group_free(g, g->buckets[b]);
	free(g->buckets);
	free(g->scratch);
	free(g);
}

/* A new member of grp with a fresh id, its join held; NULL for no
 * memory (nothing changed). */
static struct member *
member_new(klog_coordinator_t *g, struct group *grp,
    const klog_coordinator_join_req_t *req, klog_coordinator_wait_t *w)
{
	size_t clen = req->client_id.len < CLIENT_ID_MAX ?
	    req->client_id.len : CLIENT_ID_MAX;
	struct member *m = calloc(1, sizeof(*m));
	size_t idcap = clen + 40;
	int n;

	if (m == NULL || (m->id = malloc(idcap)) == NULL ||
	    (m->protos = protos_copy(req)) == NULL)
		goto fail;
	g->counter++;
	n = snprintf(m->id, idcap, "%.*s-%llu-%016llx", (int)clen,
	    req->client_id.p ? req->client_id.p : "",
	    (unsigned long long)g->counter,
	    (unsigned long long)mix64(g->seed + g->counter));
	m->id_len = (uint16_t)n;
	m->nprotos = req->nprotocols;
	m->session_ms = req->session_timeout_ms;
	m->rebalance_ms = req->rebalance_timeout_ms > 0 ?
	    req->rebalance_timeout_ms : req->session_timeout_ms;
	m->grp = grp;
	klog_timer_init(&m->timer, session_fired, m);
	if (klog_loop_timer_start(g->loop, &m->timer, m->session_ms,
	    m->session_ms) < 0)
		goto fail;
	m->prev = grp->tail;
	if (grp->tail != NULL)
		grp->tail->next = m;
	else
		grp->head = m;
	grp->tail = m;
	grp->nmembers++;
	m->joined = 1;
	m->join_wait = w;
	w->kind = WAIT_JOIN;
	w->group = grp;
	w->member = m;
	return m;
fail:
	if (m != NULL) {
		free(m->protos);
		free(m->id);
	}
	free(m);
	return NULL;
}

/* The join of a known member, m, as doJoinGroup has it by state. */
static int
join_known(klog_coordinator_t *g, struct group *grp, struct member *m,
    const klog_coordinator_join_req_t *req, klog_coordinator_wait_t *w)
{
	int same = protos_match(m, req);
	struct kproto *ps = NULL;

	if (grp->state == ST_AWAITING_SYNC && same) {
		/* It may have missed the answer: the same one again. */
		m->join_wait = w;
		answer_join(g, m, grp, m == grp->leader);
		return 0;
	}
	if (grp->state == ST_STABLE && same && m != grp->leader) {
		m->join_wait = w;
		answer_join(g, m, grp, 0);
		return 0;
	}
	/* A leader's rejoin rebalances even with the same metadata: it is
	 * how a leader reassigns after the topics changed. */
	if (!same && (ps = protos_copy(req)) == NULL)
		return -KLOG_ENOMEM;
	if (ps != NULL) {
		if (grp->leader == m)
			grp->protocol = str_of(NULL, 0);
		free(m->protos);
		m->protos = ps;
		m->nprotos = req->nprotocols;
	}
	m->rebalance_ms = req->rebalance_timeout_ms > 0 ?
	    req->rebalance_timeout_ms : req->session_timeout_ms;
	m->session_ms = req->session_timeout_ms;
	renew(g, m);
	prepare_rebalance(g, grp);
	if (m->join_wait != NULL)   /* a second join: the first is stale */
		join_error(g, m->join_wait, KLOG_KERR_REBALANCE_IN_PROGRESS,
		    m);
	m->joined = 1;
	m->join_wait = w;
	w->kind = WAIT_JOIN;
	w->group = grp;
	w->member = m;
	try_complete(g, grp);
	return 0;
}

int
klog_coordinator_join(klog_coordinator_t *g, const klog_coordinator_join_req_t *req,
    klog_coordinator_wait_t *w)
{
	struct group *grp;
	struct member *m = NULL;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	if (req->group.len == 0) {
		join_error(g, w, KLOG_KERR_INVALID_GROUP_ID, NULL);
		return 0;
	}
	if (req->session_timeout_ms < g->cfg.min_session_ms ||
	    req->session_timeout_ms > g->cfg.max_session_ms) {
		join_error(g, w, KLOG_KERR_INVALID_SESSION_TIMEOUT, NULL);
		return 0;
	}
	if ((grp = group_find(g, req->group)) == NULL) {
		if (req->member_id.len > 0) {
			join_error(g, w, KLOG_KERR_UNKNOWN_MEMBER_ID, NULL);
			return 0;
		}
		if (g->ngroups >= g->cfg.max_groups) {
			join_error(g, w, KLOG_KERR_UNKNOWN, NULL);
			return 0;
		}
		if ((grp = group_new(g, req->group)) == NULL)
			return -KLOG_ENOMEM;
	}
	if (req->member_id.len > 0)
		m = member_find(grp, req->member_id);
	/* No protocol at all can never be agreed on. */
	if (req->nprotocols == 0 || (grp->nmembers > 0 &&
	    (!str_eq(req->protocol_type, grp->ptype.p, grp->ptype.len) ||
	    !supports(grp, req)))) {
		join_error(g, w, KLOG_KERR_INCONSISTENT_GROUP_PROTOCOL, m);
		goto out;
	}
	if (req->member_id.len > 0 && m == NULL) {
		join_error(g, w, KLOG_KERR_UNKNOWN_MEMBER_ID, NULL);
		goto out;
	}
	if (m != NULL) {
		rc = join_known(g, grp, m, req, w);
		goto out;
	}
	if (grp->nmembers >= g->cfg.max_members) {
		join_error(g, w, KLOG_KERR_UNKNOWN, NULL);
		goto out;
	}
	if (grp->nmembers == 0) {
		/* The first member names the group's protocol type. */
		char *t = malloc(req->protocol_type.len + 1u);

		if (t == NULL) {
			rc = -KLOG_ENOMEM;
			goto out;
		}
		if (req->protocol_type.len > 0)
			memcpy(t, req->protocol_type.p,
			    req->protocol_type.len);
		free((char *)grp->ptype.p);
		grp->ptype = str_of(t, req->protocol_type.len);
	}
	if (member_new(g, grp, req, w) == NULL) {
		rc = -KLOG_ENOMEM;
		goto out;
	}
	prepare_rebalance(g, grp);
	try_complete(g, grp);
out:
	settle(g, grp);     /* a group made for a join that failed */
	return rc;
}

/* The leader's assignment: one block for every member's share (a member
 * it leaves out gets an empty one), then every held sync answered. */
static int
sync_leader(klog_coordinator_t *g, struct group *grp,
    const klog_coordinator_sync_req_t *req)
{
	size_t size = 0;
	uint8_t *buf, *p;

	for (uint32_t i = 0; i < req->nassign; i++)
		if (member_find(grp, req->assign[i].member_id) != NULL)
			size += req->assign[i].len;
	if ((buf = malloc(size ? size : 1)) == NULL)
		return -KLOG_ENOMEM;
	free(grp->assign_buf);
	grp->assign_buf = buf;
	for (struct member *m = grp->head; m != NULL; m = m->next) {
		m->assign = NULL;
		m->assign_len = 0;
	}
	p = buf;
	for (uint32_t i = 0; i < req->nassign; i++) {
		const klog_coordinator_assign_t *a = &req->assign[i];
		struct member *m = member_find(grp, a->member_id);

		if (m == NULL)
			continue;
		if (a->len > 0)
			memcpy(p, a->data, a->len);
		m->assign = p;     /* a member named twice: the last share */
		m->assign_len = a->len;
		p += a->len;
	}
	grp->state = ST_STABLE;
	for (struct member *m = grp->head; m != NULL; m = m->next)
		if (m->sync_wait != NULL)
			answer_sync(g, m, KLOG_KERR_NONE);
	return 0;
}

int
klog_coordinator_sync(klog_coordinator_t *g, const klog_coordinator_sync_req_t *req,
    klog_coordinator_wait_t *w)
{
	struct group *grp = group_find(g, req->group);
	struct member *m;
	klog_coordinator_wait_t *old;
	int rc;

	memset(w, 0, sizeof(*w));
	if (grp == NULL || (m = member_find(grp, req->member_id)) == NULL) {
		sync_error(g, w, KLOG_KERR_UNKNOWN_MEMBER_ID);
		return 0;
	}
	if (req->generation != grp->generation) {
		sync_error(g, w, KLOG_KERR_ILLEGAL_GENERATION);
		return 0;
	}
	renew(g, m);
	switch (grp->state) {
	case ST_PREPARING:
		sync_error(g, w, KLOG_KERR_REBALANCE_IN_PROGRESS);
		return 0;
	case ST_STABLE:
		m->sync_wait = w;
		answer_sync(g, m, KLOG_KERR_NONE);
		return 0;
	case ST_AWAITING_SYNC:
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
	if (grp->state == ST_STABLE) {
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
	struct member *m;

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
	struct group *grp = group_find(g, group);
	struct member *m;

	if (grp == NULL || (m = member_find(grp, member_id)) == NULL)
		return KLOG_KERR_UNKNOWN_MEMBER_ID;
	if (generation != grp->generation)
		return KLOG_KERR_ILLEGAL_GENERATION;
	renew(g, m);
	/* Kafka 0.10 said REBALANCE_IN_PROGRESS while awaiting the leader's
	 * sync too, sending members that had just joined back to join
	 * again; later Kafka answers them NONE, as here. */
	return grp->state == ST_PREPARING ? KLOG_KERR_REBALANCE_IN_PROGRESS :
	    KLOG_KERR_NONE;
}

int16_t
klog_coordinator_leave(klog_coordinator_t *g, klog_str_t group, klog_str_t member_id)
{
	struct group *grp = group_find(g, group);
	struct member *m;

	if (grp == NULL || (m = member_find(grp, member_id)) == NULL)
		return KLOG_KERR_UNKNOWN_MEMBER_ID;
	member_remove(g, m, "left the group");
	after_removal(g, grp);
	settle(g, grp);
	return KLOG_KERR_NONE;
}

int16_t
klog_coordinator_commit_check(klog_coordinator_t *g, klog_str_t group,
    int32_t generation, klog_str_t member_id)
{
	struct group *grp = group_find(g, group);
	struct member *m;

	/* No group here is an empty one: a commit from outside any group
	 * goes ahead, one naming a generation comes from an older one. */
	if (grp == NULL)
		return generation < 0 ? KLOG_KERR_NONE :
		    KLOG_KERR_ILLEGAL_GENERATION;
	/* As Kafka 0.10's doCommitOffsets: while preparing a rebalance the
	 * old generation may still commit (members commit before they
	 * rejoin); once it is over, nobody may until the assignment is. */
	if (grp->state == ST_AWAITING_SYNC)
		return KLOG_KERR_REBALANCE_IN_PROGRESS;
	if ((m = member_find(grp, member_id)) == NULL)
		return KLOG_KERR_UNKNOWN_MEMBER_ID;
	if (generation != grp->generation)
		return KLOG_KERR_ILLEGAL_GENERATION;
	renew(g, m);
	return KLOG_KERR_NONE;
}
