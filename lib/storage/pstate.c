/*
 * A partition's idempotent producers (pstate.h): a dense array of
 * producers and an open-addressed index of it by id.  Producers come and
 * go rarely (an expiry, a cut), so a removal compacts the array and
 * rebuilds the index rather than keeping tombstones.
 */
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/format.h"
#include "klog/storage/pstate.h"

struct klog_pstate {
	klog_pstate_producer_t *p;
	size_t n, cap;                /* cap in bytes, as klog_buf_grow() */
	uint32_t *slot;               /* index + 1 into p; 0: empty */
	size_t nslots;                /* a power of two, at least 2n */
};

static size_t
hash(int64_t id)
{
	uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ULL;

	return (size_t)(x ^ x >> 29);
}

int
klog_pstate_new(klog_pstate_t **out)
{
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return -KLOG_ENOMEM;
	return 0;
}

void
klog_pstate_free(klog_pstate_t *ps)
{
	if (ps == NULL)
		return;
	free(ps->p);
	free(ps->slot);
	free(ps);
}

size_t
klog_pstate_count(const klog_pstate_t *ps)
{
	return ps->n;
}

static void
reindex(klog_pstate_t *ps)
{
	size_t mask = ps->nslots - 1;

	memset(ps->slot, 0, ps->nslots * sizeof(*ps->slot));
	for (size_t i = 0; i < ps->n; i++) {
		size_t h = hash(ps->p[i].id) & mask;

		while (ps->slot[h] != 0)
			h = (h + 1) & mask;
		ps->slot[h] = (uint32_t)(i + 1);
	}
}

static klog_pstate_producer_t *
find(const klog_pstate_t *ps, int64_t id)
{
	size_t mask = ps->nslots - 1, h;

	if (ps->nslots == 0)
		return NULL;
	for (h = hash(id) & mask; ps->slot[h] != 0; h = (h + 1) & mask)
		if (ps->p[ps->slot[h] - 1].id == id)
			return &ps->p[ps->slot[h] - 1];
	return NULL;
}

/* A new producer id (not there), empty: NULL when out of memory. */
static klog_pstate_producer_t *
add(klog_pstate_t *ps, int64_t id)
{
	klog_pstate_producer_t *np;
	size_t h, mask;
	int grown = 0;

	if (ps->n >= UINT32_MAX - 1 || klog_buf_grow((void **)&ps->p,
	    &ps->cap, (ps->n + 1) * sizeof(*ps->p)) < 0)
		return NULL;
	if ((ps->n + 1) * 2 > ps->nslots) {
		size_t ns = ps->nslots == 0 ? 16 : ps->nslots * 2;
		uint32_t *s = malloc(ns * sizeof(*s));

		if (s == NULL)
			return NULL;
		free(ps->slot);
		ps->slot = s;
		ps->nslots = ns;
		grown = 1;
	}
	mask = ps->nslots - 1;
	np = &ps->p[ps->n++];
	*np = (klog_pstate_producer_t){ .id = id };
	if (grown) {
		reindex(ps);
		return np;
	}
	for (h = hash(id) & mask; ps->slot[h] != 0; h = (h + 1) & mask)
		;
	ps->slot[h] = (uint32_t)ps->n;
	return np;
}

int32_t
klog_pstate_last_seq(int32_t base, int32_t count)
{
	int32_t delta = count - 1;

	if (base > INT32_MAX - delta)
		return delta - (INT32_MAX - base) - 1;
	return base + delta;
}

int
klog_pstate_check(const klog_pstate_t *ps, const klog_batch_t *b,
    klog_pstate_batch_t *dup)
{
	const klog_pstate_producer_t *p;
	const klog_pstate_batch_t *last;
	int32_t first = b->base_sequence, lseq;

	if (b->producer_epoch < 0 || first < 0 || b->count <= 0)
		return KLOG_PSTATE_INVALID;
	if ((p = find(ps, b->producer_id)) == NULL || p->n == 0)
		return first == 0 ? KLOG_PSTATE_APPEND : KLOG_PSTATE_UNKNOWN;
	last = &p->b[p->n - 1];
	if (b->producer_epoch < last->epoch)
		return KLOG_PSTATE_FENCED;
	if (b->producer_epoch > last->epoch)
		return first == 0 ? KLOG_PSTATE_APPEND :
		    KLOG_PSTATE_OUT_OF_ORDER;
	lseq = klog_pstate_last_seq(first, b->count);
	for (int i = 0; i < p->n; i++) {
		if (p->b[i].epoch != b->producer_epoch ||
		    p->b[i].first_seq != first || p->b[i].last_seq != lseq)
			continue;
		if (dup != NULL)
			*dup = p->b[i];
		return KLOG_PSTATE_DUPLICATE;
	}
	if (last->last_seq == INT32_MAX ? first == 0 :
	    first == last->last_seq + 1)
		return KLOG_PSTATE_APPEND;
	return KLOG_PSTATE_OUT_OF_ORDER;
}

int
klog_pstate_update(klog_pstate_t *ps, const klog_batch_t *b, int64_t offset,
    int64_t last_offset)
{
	klog_pstate_producer_t *p = find(ps, b->producer_id);

	if (p == NULL && (p = add(ps, b->producer_id)) == NULL)
		return -KLOG_ENOMEM;
	/* A new epoch starts the producer's history again (Kafka's). */
	if (p->n > 0 && p->b[p->n - 1].epoch != b->producer_epoch)
		p->n = 0;
	if (p->n == KLOG_PSTATE_BATCHES) {
		memmove(&p->b[0], &p->b[1], (KLOG_PSTATE_BATCHES - 1) *
		    sizeof(p->b[0]));
		p->n--;
	}
	p->b[p->n++] = (klog_pstate_batch_t){ b->base_sequence,
	    klog_pstate_last_seq(b->base_sequence, b->count),
	    b->producer_epoch, offset, last_offset };
	p->last_ts = b->max_timestamp;
	return 0;
}

/* The magic-2 entry's header at e[0..avail) (avail covers the entry or
 * its first 50 bytes) with a producer id: 1 and *b. */
static int
entry_batch(const uint8_t *e, size_t avail, klog_batch_t *b)
{
	const size_t body = KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER;

	if (avail < body + KLOG_BATCH_BODY_HEADER ||
	    klog_be32(e) < KLOG_MAGIC2_HEADER + KLOG_BATCH_BODY_HEADER ||
	    e[KLOG_LENGTH_SIZE] != KLOG_MAGIC2)
		return 0;
	if (klog_batch_read(e + body, avail - body, b) < 0)
		return 0;
	return b->producer_id >= 0;
}

int
klog_pstate_update_entry(klog_pstate_t *ps, const uint8_t *e, size_t avail,
    int64_t offset)
{
	klog_batch_t b;

	if (!entry_batch(e, avail, &b))
		return 0;
	return klog_pstate_update(ps, &b, offset, offset + KLOG_LENGTH_SIZE +
	    (int64_t)klog_be32(e) - 1);
}

int
klog_pstate_update_set(klog_pstate_t *ps, const uint8_t *set, size_t len,
    int64_t offset)
{
	size_t pos = 0;

	while (len - pos > KLOG_LENGTH_SIZE) {
		size_t size = KLOG_LENGTH_SIZE + klog_be32(set + pos);

		if (size > len - pos)
			break;
		if (klog_pstate_update_entry(ps, set + pos, size, offset +
		    (int64_t)pos) < 0)
			return -KLOG_ENOMEM;
		pos += size;
	}
	return 0;
}

int
klog_pstate_entry(const uint8_t *set, size_t len, klog_batch_t *b)
{
	size_t size;

	if (len < KLOG_LENGTH_SIZE)
		return 0;
	size = KLOG_LENGTH_SIZE + klog_be32(set);
	if (size > len || !entry_batch(set, size, b))
		return 0;
	return size == len ? 1 : -KLOG_ECORRUPT;
}

/* Drop the producers keep() refuses, then index again. */
static void
compact(klog_pstate_t *ps, int (*keep)(klog_pstate_producer_t *, int64_t,
    int64_t), int64_t a, int64_t b)
{
	size_t j = 0;

	for (size_t i = 0; i < ps->n; i++)
		if (keep(&ps->p[i], a, b))
			ps->p[j++] = ps->p[i];
	if (j == ps->n)
		return;
	ps->n = j;
	reindex(ps);
}

static int
keep_below(klog_pstate_producer_t *p, int64_t end, int64_t unused)
{
	(void)unused;
	while (p->n > 0 && p->b[p->n - 1].offset >= end)
		p->n--;
	return p->n > 0;
}

void
klog_pstate_truncate(klog_pstate_t *ps, int64_t end)
{
	compact(ps, keep_below, end, 0);
}

static int
keep_fresh(klog_pstate_producer_t *p, int64_t now, int64_t idle)
{
	return p->last_ts >= now - idle;
}

void
klog_pstate_expire(klog_pstate_t *ps, int64_t now_ms, int64_t max_idle_ms)
{
	compact(ps, keep_fresh, now_ms, max_idle_ms);
}

const klog_pstate_producer_t *
klog_pstate_get(const klog_pstate_t *ps, int64_t id)
{
	return find(ps, id);
}

const klog_pstate_producer_t *
klog_pstate_next(const klog_pstate_t *ps, size_t *pos)
{
	return *pos < ps->n ? &ps->p[(*pos)++] : NULL;
}

int
klog_pstate_put(klog_pstate_t *ps, const klog_pstate_producer_t *p)
{
	klog_pstate_producer_t *np;

	if (find(ps, p->id) != NULL)
		return -KLOG_EEXIST;
	if ((np = add(ps, p->id)) == NULL)
		return -KLOG_ENOMEM;
	*np = *p;
	return 0;
}
