/*
 * The Kafka group coordinator's table; see kgtable.h.
 *
 *   klog_kgtable_t --buckets--> group --members--> member --> member ...
 *                             |  timer: the rebalance deadline
 *                             |  (parked far away between rebalances)
 *                             |--pending--> id handed out --> ...
 *                             '--leader, protocol (a view into the
 *                                leader's protocol list)
 *   member: one block for its id, client id, client host and instance
 *   id; one for its protocols and metadata; its assignment (a view into
 *   the group's assignment block); a session timer of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "klog/base/clock.h"
#include "klog/base/error.h"
#include "klog/kafka/kgtable.h"

/* A parked rebalance timer's period: it only has to stay scheduled. */
#define PARK_MS (24 * 3600 * 1000)
/* The client id's share of a member id, so an id fits a klog_str_t. */
#define CLIENT_ID_MAX 255
#define HOST_MAX 64
#define INSTANCE_MAX 255

struct klog_kgtable {
	klog_loop_t *loop;
	klog_kgtable_config_t cfg;
	klog_kgroup_t **buckets;
	size_t nbuckets;             /* a power of two */
	uint32_t ngroups;
	uint64_t seed, counter;      /* member ids */
};

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

const char *
klog_kgtable_esc(const char *p, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (o + 8 > KLOG_KGTABLE_ESC_MAX) {
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

/* ---- the table ---- */

int
klog_kgtable_new(klog_loop_t *loop, const klog_kgtable_config_t *cfg,
    klog_kgtable_t **out)
{
	klog_kgtable_t *t;
	uint64_t rnd = 0;

	*out = NULL;
	if (cfg->max_members == 0 || cfg->max_groups == 0)
		return -KLOG_EINVAL;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return -KLOG_ENOMEM;
	t->loop = loop;
	t->cfg = *cfg;
	for (t->nbuckets = 16; t->nbuckets < cfg->max_groups &&
	    t->nbuckets < 4096; t->nbuckets <<= 1)
		;
	if ((t->buckets = calloc(t->nbuckets, sizeof(*t->buckets))) == NULL) {
		free(t);
		return -KLOG_ENOMEM;
	}
	/* Member ids must not repeat across restarts, where the counter
	 * starts again: each run gets a seed of its own, random when the
	 * kernel can say, else from the clocks and the pid. */
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
		rnd = 0;
	t->seed = mix64(rnd ^ (uint64_t)klog_clock_wall_ms() ^
	    mix64((uint64_t)klog_clock_mono_ns()) ^ ((uint64_t)getpid() << 40));
	*out = t;
	return 0;
}

void
klog_kgtable_free(klog_kgtable_t *t)
{
	if (t == NULL)
		return;
	for (size_t b = 0; b < t->nbuckets; b++)
		while (t->buckets[b] != NULL)
			klog_kgtable_group_free(t->buckets[b]);
	free(t->buckets);
	free(t);
}

void *
klog_kgtable_owner(const klog_kgtable_t *t)
{
	return t->cfg.owner;
}

uint32_t
klog_kgtable_ngroups(const klog_kgtable_t *t)
{
	return t->ngroups;
}

uint32_t
klog_kgtable_max_members(const klog_kgtable_t *t)
{
	return t->cfg.max_members;
}

/* ---- groups ---- */

klog_kgroup_t *
klog_kgtable_find(const klog_kgtable_t *t, klog_str_t id)
{
	klog_kgroup_t *grp = t->buckets[hash_id(id.p, id.len) &
	    (t->nbuckets - 1)];

	for (; grp != NULL; grp = grp->hnext)
		if (str_eq(id, grp->id, grp->id_len))
			return grp;
	return NULL;
}

klog_kgroup_t *
klog_kgtable_group_new(klog_kgtable_t *t, klog_str_t id)
{
	klog_kgroup_t *grp;
	size_t b;

	if (t->ngroups >= t->cfg.max_groups ||
	    (grp = calloc(1, sizeof(*grp))) == NULL)
		return NULL;
	if ((grp->id = malloc(id.len + 1u)) == NULL)
		goto fail;
	memcpy(grp->id, id.p, id.len);
	grp->id[id.len] = '\0';
	grp->id_len = id.len;
	grp->t = t;
	klog_timer_init(&grp->timer, t->cfg.rebalance_fired, grp);
	if (klog_loop_timer_start(t->loop, &grp->timer, PARK_MS, PARK_MS) < 0)
		goto fail;
	b = hash_id(id.p, id.len) & (t->nbuckets - 1);
	grp->hnext = t->buckets[b];
	t->buckets[b] = grp;
	t->ngroups++;
	return grp;
fail:
	free(grp->id);
	free(grp);
	return NULL;
}

static void
member_release(klog_kgtable_t *t, klog_kmember_t *m)
{
	klog_loop_timer_stop(t->loop, &m->timer);
	free(m->protos);
	free(m->id);
	free(m);
}

void
klog_kgtable_group_free(klog_kgroup_t *grp)
{
	klog_kgtable_t *t = grp->t;
	klog_kgroup_t **pp = &t->buckets[hash_id(grp->id, grp->id_len) &
	    (t->nbuckets - 1)];
	klog_kmember_t *m;

	while (*pp != grp)
		pp = &(*pp)->hnext;
	*pp = grp->hnext;
	t->ngroups--;
	while ((m = grp->head) != NULL) {
		grp->head = m->next;
		member_release(t, m);
	}
	while ((m = grp->pending) != NULL) {
		grp->pending = m->next;
		member_release(t, m);
	}
	klog_loop_timer_stop(t->loop, &grp->timer);
	free((char *)grp->ptype.p);
	free(grp->assign_buf);
	free(grp->id);
	free(grp);
}

int
klog_kgtable_set_ptype(klog_kgroup_t *grp, klog_str_t ptype)
{
	char *p = malloc(ptype.len + 1u);

	if (p == NULL)
		return -KLOG_ENOMEM;
	if (ptype.len > 0)
		memcpy(p, ptype.p, ptype.len);
	free((char *)grp->ptype.p);
	grp->ptype = str_of(p, ptype.len);
	return 0;
}

/* ---- members ---- */

static klog_kmember_t *
find_in(klog_kmember_t *m, klog_str_t id)
{
	if (id.len == 0)
		return NULL;
	for (; m != NULL; m = m->next)
		if (str_eq(id, m->id, m->id_len))
			return m;
	return NULL;
}

klog_kmember_t *
klog_kgtable_member(const klog_kgroup_t *grp, klog_str_t id)
{
	return find_in(grp->head, id);
}

klog_kmember_t *
klog_kgtable_pending(const klog_kgroup_t *grp, klog_str_t id)
{
	return find_in(grp->pending, id);
}

/* A copy of spec's protocols in one block; NULL for no memory. */
static klog_kpair_t *
protos_copy(const klog_kmember_spec_t *spec)
{
	size_t size = (size_t)spec->nprotocols * sizeof(klog_kpair_t);
	klog_kpair_t *ps;
	uint8_t *p;

	for (uint32_t i = 0; i < spec->nprotocols; i++)
		size += spec->protocols[i].name.len +
		    (size_t)spec->protocols[i].len;
	if ((ps = malloc(size ? size : 1)) == NULL)
		return NULL;
	p = (uint8_t *)(ps + spec->nprotocols);
	for (uint32_t i = 0; i < spec->nprotocols; i++) {
		const klog_kpair_t *q = &spec->protocols[i];

		if (q->name.len > 0)
			memcpy(p, q->name.p, q->name.len);
		ps[i].name = str_of((const char *)p, q->name.len);
		p += q->name.len;
		if (q->len > 0)
			memcpy(p, q->data, q->len);
		ps[i].data = p;
		ps[i].len = q->len;
		p += q->len;
	}
	return ps;
}

/* s cut at max bytes, copied to *at, which moves on; the copy's view. */
static klog_str_t
put_str(char **at, klog_str_t s, size_t max)
{
	size_t n = s.len < max ? s.len : max;
	klog_str_t v = { *at, (uint16_t)n };

	if (s.p == NULL)
		return str_of(NULL, 0);
	if (n > 0)
		memcpy(*at, s.p, n);
	*at += n;
	return v;
}

/* m's id, client id and host and instance id in one block. */
static int
ids_make(klog_kgtable_t *t, klog_kmember_t *m, const klog_kmember_spec_t *spec)
{
	size_t clen = spec->client_id.len < CLIENT_ID_MAX ?
	    spec->client_id.len : CLIENT_ID_MAX;
	size_t idcap = clen + 40;
	char *at;
	int n;

	if ((m->id = malloc(idcap + clen + HOST_MAX + INSTANCE_MAX)) == NULL)
		return -KLOG_ENOMEM;
	t->counter++;
	n = snprintf(m->id, idcap, "%.*s-%llu-%016llx", (int)clen,
	    spec->client_id.p ? spec->client_id.p : "",
	    (unsigned long long)t->counter,
	    (unsigned long long)mix64(t->seed + t->counter));
	m->id_len = (uint16_t)n;
	at = m->id + n;
	m->client_id = put_str(&at, spec->client_id.p ? spec->client_id :
	    str_of("", 0), clen);
	m->client_host = put_str(&at, spec->client_host.p ?
	    spec->client_host : str_of("", 0), HOST_MAX);
	m->instance_id = put_str(&at, spec->instance_id, INSTANCE_MAX);
	return 0;
}

static void
link_last(klog_kgroup_t *grp, klog_kmember_t *m)
{
	m->next = NULL;
	m->prev = grp->tail;
	if (grp->tail != NULL)
		grp->tail->next = m;
	else
		grp->head = m;
	grp->tail = m;
	grp->nmembers++;
}

static void
take_spec(klog_kmember_t *m, const klog_kmember_spec_t *spec,
    klog_kpair_t *ps)
{
	m->protos = ps;
	m->nprotos = spec->nprotocols;
	m->session_ms = spec->session_ms;
	m->rebalance_ms = spec->rebalance_ms > 0 ? spec->rebalance_ms :
	    spec->session_ms;
}

klog_kmember_t *
klog_kgtable_member_new(klog_kgroup_t *grp, const klog_kmember_spec_t *spec,
    int pending)
{
	klog_kgtable_t *t = grp->t;
	klog_kmember_t *m;
	klog_kpair_t *ps = NULL;

	if (grp->nmembers + grp->npending >= t->cfg.max_members ||
	    (m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	if (ids_make(t, m, spec) < 0 ||
	    (!pending && (ps = protos_copy(spec)) == NULL))
		goto fail;
	take_spec(m, spec, ps);
	m->grp = grp;
	klog_timer_init(&m->timer, t->cfg.session_fired, m);
	if (klog_loop_timer_start(t->loop, &m->timer, m->session_ms,
	    m->session_ms) < 0)
		goto fail;
	if (pending) {
		m->pending = 1;
		m->next = grp->pending;
		if (grp->pending != NULL)
			grp->pending->prev = m;
		grp->pending = m;
		grp->npending++;
	} else {
		link_last(grp, m);
	}
	return m;
fail:
	free(ps);
	free(m->id);
	free(m);
	return NULL;
}

/* Unlink m from the group's pending ids or its members. */
static void
unlink_member(klog_kmember_t *m)
{
	klog_kgroup_t *grp = m->grp;

	if (m->prev != NULL)
		m->prev->next = m->next;
	else if (m->pending)
		grp->pending = m->next;
	else
		grp->head = m->next;
	if (m->next != NULL)
		m->next->prev = m->prev;
	else if (!m->pending)
		grp->tail = m->prev;
	if (m->pending) {
		grp->npending--;
		return;
	}
	grp->nmembers--;
	if (grp->leader == m) {
		grp->leader = NULL;
		grp->protocol = str_of(NULL, 0);
	}
}

int
klog_kgtable_admit(klog_kmember_t *m, const klog_kmember_spec_t *spec)
{
	klog_kpair_t *ps = protos_copy(spec);

	if (ps == NULL)
		return -KLOG_ENOMEM;
	unlink_member(m);
	m->pending = 0;
	take_spec(m, spec, ps);
	link_last(m->grp, m);
	return 0;
}

int
klog_kgtable_update(klog_kmember_t *m, const klog_kmember_spec_t *spec)
{
	klog_kpair_t *ps = NULL;

	if (!klog_kgtable_protos_match(m, spec)) {
		if ((ps = protos_copy(spec)) == NULL)
			return -KLOG_ENOMEM;
		if (m->grp->leader == m)
			m->grp->protocol = str_of(NULL, 0);
		free(m->protos);
	}
	take_spec(m, spec, ps != NULL ? ps : m->protos);
	return 0;
}

void
klog_kgtable_member_free(klog_kmember_t *m)
{
	unlink_member(m);
	member_release(m->grp->t, m);
}

/* ---- protocols ---- */

int
klog_kgtable_protos_match(const klog_kmember_t *m,
    const klog_kmember_spec_t *spec)
{
	if (m->nprotos != spec->nprotocols)
		return 0;
	for (uint32_t i = 0; i < m->nprotos; i++) {
		const klog_kpair_t *q = &spec->protocols[i];

		if (!str_eq(q->name, m->protos[i].name.p, m->protos[i].name.len) ||
		    q->len != m->protos[i].len || (q->len > 0 &&
		    memcmp(q->data, m->protos[i].data, q->len) != 0))
			return 0;
	}
	return 1;
}

const klog_kpair_t *
klog_kgtable_proto(const klog_kmember_t *m, klog_str_t name)
{
	for (uint32_t i = 0; i < m->nprotos; i++)
		if (str_eq(name, m->protos[i].name.p, m->protos[i].name.len))
			return &m->protos[i];
	return NULL;
}

/* Whether every member lists name. */
static int
all_list(const klog_kgroup_t *grp, klog_str_t name)
{
	for (const klog_kmember_t *m = grp->head; m != NULL; m = m->next)
		if (klog_kgtable_proto(m, name) == NULL)
			return 0;
	return 1;
}

int
klog_kgtable_supports(const klog_kgroup_t *grp,
    const klog_kmember_spec_t *spec)
{
	if (grp->nmembers == 0)
		return 1;
	for (uint32_t i = 0; i < spec->nprotocols; i++)
		if (all_list(grp, spec->protocols[i].name))
			return 1;
	return 0;
}

klog_str_t
klog_kgtable_select(const klog_kgroup_t *grp)
{
	const klog_kmember_t *ld = grp->leader;
	klog_str_t best = { NULL, 0 };
	uint32_t best_votes = 0;

	for (uint32_t i = 0; i < ld->nprotos; i++) {
		klog_str_t cand = ld->protos[i].name;
		uint32_t votes = 0;

		if (!all_list(grp, cand))
			continue;
		for (const klog_kmember_t *m = grp->head; m != NULL;
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

/* ---- the views ---- */

klog_str_t
klog_kgtable_state_name(const klog_kgroup_t *grp)
{
	static const char *const names[] = {
		[KLOG_KGROUP_EMPTY] = "Empty",
		[KLOG_KGROUP_PREPARING] = "PreparingRebalance",
		[KLOG_KGROUP_AWAITING_SYNC] = "CompletingRebalance",
		[KLOG_KGROUP_STABLE] = "Stable",
	};
	const char *s = grp != NULL && grp->state >= 0 &&
	    grp->state <= KLOG_KGROUP_STABLE ? names[grp->state] : "Dead";

	return str_of(s, strlen(s));
}

void
klog_kgtable_describe(const klog_kgroup_t *grp, klog_kdgroup_t *out,
    klog_kdmember_t *members)
{
	int stable = grp->state == KLOG_KGROUP_STABLE;
	uint32_t n = 0;

	memset(out, 0, sizeof(*out));
	out->id = str_of(grp->id, grp->id_len);
	out->state = klog_kgtable_state_name(grp);
	out->protocol_type = grp->ptype;
	out->protocol = stable ? grp->protocol : str_of("", 0);
	out->authorized_ops = KLOG_KWGROUP_OPS_NONE;
	for (const klog_kmember_t *m = grp->head; m != NULL; m = m->next) {
		const klog_kpair_t *p = stable ?
		    klog_kgtable_proto(m, grp->protocol) : NULL;

		members[n] = (klog_kdmember_t){
			.member_id = str_of(m->id, m->id_len),
			.instance_id = m->instance_id,
			.client_id = m->client_id,
			.client_host = m->client_host,
		};
		if (p != NULL) {
			members[n].meta = p->data;
			members[n].meta_len = p->len;
		}
		if (stable) {
			members[n].assign = m->assign;
			members[n].assign_len = m->assign_len;
		}
		n++;
	}
	out->nmembers = n;
	out->members = members;
}

const klog_kgroup_t *
klog_kgtable_next(const klog_kgtable_t *t, size_t *cursor,
    const klog_kgroup_t *prev)
{
	if (prev != NULL && prev->hnext != NULL)
		return prev->hnext;
	if (prev != NULL)
		(*cursor)++;
	for (; *cursor < t->nbuckets; (*cursor)++)
		if (t->buckets[*cursor] != NULL)
			return t->buckets[*cursor];
	return NULL;
}
