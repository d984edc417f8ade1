/*
 * The verifier: whoever is free takes the next piece of the sets, about
 * PIECE bytes up to an entry boundary (spanning sets where they are
 * small), found by walking the length fields from where the last piece
 * ended: the workers as soon as the sets are started, the caller when it
 * comes to finish them.  So a caller with other work between start and
 * finish (receiving the next fetch) leaves more to the workers, one with
 * none shares evenly, and nothing is walked twice.  Workers sleep on a
 * condition variable between calls.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/uio.h>


#include "klog/base/error.h"
#include "klog/storage/crcpool.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define PIECE ((size_t)64 << 10)

/* Where a piece starts or ends: set s, byte c of it. */
struct mark {
	size_t s, c;
};

struct klog_crcpool {
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	pthread_t *threads;
	int workers, started;
	const struct iovec *sets; /* the sets being checked, or NULL */
	size_t nsets;
	struct iovec one;       /* klog_crcpool_start()'s set */
	struct mark cut;        /* where the next piece starts */
	int shared;             /* the pieces are for the workers too */
	int busy;               /* pieces being checked */
	int bad;                /* a piece had a mismatch */
	int stop;
};

/* The header size of a well-formed entry at p with len bytes left, or 0
 * where the iterator has something to report. */
static size_t
entry_header(const uint8_t *p, size_t len, uint32_t *length)
{
	size_t hdr;

	if (len < KLOG_LENGTH_SIZE + 1)
		return 0;
	*length = klog_be32(p);
	if (p[4] == 0)
		hdr = KLOG_MAGIC0_HEADER;
	else if (p[4] <= KLOG_MAGIC2)
		hdr = KLOG_MAGIC1_HEADER; /* magic 2's is as long */
	else
		return 0;
	if (*length < hdr || *length > len - KLOG_LENGTH_SIZE)
		return 0;
	return hdr;
}

/* 1 if a whole entry of p[0..len) has a CRC that does not match. */
static int
check_range(const uint8_t *p, size_t len)
{
	const uint8_t *q;
	uint32_t length;
	size_t pos = 0, hdr;

	while ((hdr = entry_header(p + pos, len - pos, &length)) != 0) {
		q = p + pos + KLOG_LENGTH_SIZE;
		if (klog_entry_crc(q[0], 0, q + hdr, length - (uint32_t)hdr) !=
		    klog_be32(q + hdr - 4))
			return 1;
		pos += KLOG_LENGTH_SIZE + length;
	}
	return 0;
}

/* 1 if a whole entry of the sets from a to b has a CRC that does not
 * match.  Pieces start and end at entry boundaries (or at the end of a
 * set), so a piece of one set is checked as a set of its own. */
static int
check_piece(const struct iovec *sets, struct mark a, struct mark b)
{
	size_t from, to;

	for (size_t s = a.s; s <= b.s; s++) {
		from = s == a.s ? a.c : 0;
		to = s == b.s ? b.c : sets[s].iov_len;
		if (to > from && check_range((const uint8_t *)sets[s].iov_base +
		    from, to - from))
			return 1;
	}
	return 0;
}

/* check_range() of each of n sets on the caller's thread alone. */
static int
check_all(const struct iovec *sets, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (check_range(sets[i].iov_base, sets[i].iov_len))
			return 1;
	return 0;
}

/* Step m over sets that are done; 1 if none is left. */
static int
settle(const klog_crcpool_t *v, struct mark *m)
{
	while (m->s < v->nsets && m->c >= v->sets[m->s].iov_len) {
		m->s++;
		m->c = 0;
	}
	return m->s >= v->nsets;
}

/* Whether pieces are left to take, under v->mu. */
static int
pieces_left(klog_crcpool_t *v)
{
	return v->sets != NULL && v->shared && !settle(v, &v->cut);
}

/* The next piece, about PIECE bytes of whole entries from v->cut across
 * as many sets as it takes, under v->mu: 0 if none is left.  After a
 * malformed entry the rest of its set goes into the piece (check_range()
 * stops at that entry), and the piece goes on with the next set. */
static int
take(klog_crcpool_t *v, struct mark *a, struct mark *b)
{
	struct mark m;
	size_t got = 0, len, start;
	const uint8_t *p;
	uint32_t length;

	if (!pieces_left(v))
		return 0;
	*a = *b = m = v->cut;
	while (got < PIECE && !settle(v, &m)) {
		p = v->sets[m.s].iov_base;
		len = v->sets[m.s].iov_len;
		start = m.c;
		while (got + (m.c - start) < PIECE && entry_header(p + m.c,
		    len - m.c, &length) != 0)
			m.c += KLOG_LENGTH_SIZE + length;
		if (m.c < len && got + (m.c - start) < PIECE)
			m.c = len;
		got += m.c - start;
		*b = m;
	}
	v->cut = m;
	return 1;
}

/* Take pieces and check them until none is left; under v->mu. */
static void
drain(klog_crcpool_t *v)
{
	struct mark a, b;
	int bad;

	while (take(v, &a, &b)) {
		v->busy++;
		pthread_mutex_unlock(&v->mu);
		bad = check_piece(v->sets, a, b);
		pthread_mutex_lock(&v->mu);
		v->bad |= bad;
		if (bad)        /* the answer is known: take no more */
			v->cut = (struct mark){ v->nsets, 0 };
		if (--v->busy == 0 && !pieces_left(v))
			pthread_cond_broadcast(&v->done);
	}
}

static void *
worker_main(void *arg)
{
	klog_crcpool_t *v = arg;

	pthread_mutex_lock(&v->mu);
	for (;;) {
		while (!v->stop && !pieces_left(v))
			pthread_cond_wait(&v->go, &v->mu);
		if (v->stop)
			break;
		drain(v);
	}
	pthread_mutex_unlock(&v->mu);
	return NULL;
}

/* Workers take no signals: a tool's handlers and its EINTRs stay on the
 * thread that expects them. */
static int
start_workers(klog_crcpool_t *v)
{
	sigset_t all, old;
	int rc = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (; v->started < v->workers; v->started++)
		if (pthread_create(&v->threads[v->started], NULL, worker_main,
		    v) != 0) {
			rc = -KLOG_EIO;
			break;
		} else {
			pthread_setname_np(v->threads[v->started],
			    "klog-verify");
		}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int
klog_crcpool_new(int workers, klog_crcpool_t **out)
{
	klog_crcpool_t *v;
	int rc;

	*out = NULL;
	if (workers < 0)
		return -KLOG_EINVAL;
	if ((v = calloc(1, sizeof(*v))) == NULL)
		return -KLOG_ENOMEM;
	pthread_mutex_init(&v->mu, NULL);
	pthread_cond_init(&v->go, NULL);
	pthread_cond_init(&v->done, NULL);
	v->workers = workers;
	if (workers > 0 && (v->threads = calloc((size_t)workers,
	    sizeof(*v->threads))) == NULL) {
		klog_crcpool_free(v);
		return -KLOG_ENOMEM;
	}
	if ((rc = start_workers(v)) < 0) {
		klog_crcpool_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

void
klog_crcpool_free(klog_crcpool_t *v)
{
	if (v == NULL)
		return;
	pthread_mutex_lock(&v->mu);
	v->stop = 1;
	pthread_cond_broadcast(&v->go);
	pthread_mutex_unlock(&v->mu);
	for (int i = 0; i < v->started; i++)
		pthread_join(v->threads[i], NULL);
	pthread_cond_destroy(&v->done);
	pthread_cond_destroy(&v->go);
	pthread_mutex_destroy(&v->mu);
	free(v->threads);
	free(v);
}

/* Hand sets[0..n) to the workers, if they are large enough to share. */
static void
start_sets(klog_crcpool_t *v, const struct iovec *sets, size_t n)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += sets[i].iov_len;
	pthread_mutex_lock(&v->mu);
	v->sets = sets;
	v->nsets = n;
	v->cut = (struct mark){ 0, 0 };
	v->bad = 0;
	v->shared = v->workers > 0 && total >= KLOG_CRCPOOL_MIN_SPLIT;
	if (v->shared)
		pthread_cond_broadcast(&v->go);
	pthread_mutex_unlock(&v->mu);
}

void
klog_crcpool_start(klog_crcpool_t *v, const void *set, size_t len)
{
	v->one = (struct iovec){ (void *)set, len };
	start_sets(v, &v->one, 1);
}

int
klog_crcpool_finish(klog_crcpool_t *v)
{
	int bad;

	pthread_mutex_lock(&v->mu);
	if (!v->shared) {
		pthread_mutex_unlock(&v->mu);
		bad = check_all(v->sets, v->nsets);
		pthread_mutex_lock(&v->mu);
	} else {
		drain(v);
		while (v->busy > 0)
			pthread_cond_wait(&v->done, &v->mu);
		bad = v->bad;
	}
	v->sets = NULL;
	pthread_mutex_unlock(&v->mu);
	return bad;
}

int
klog_crcpool_crcs(klog_crcpool_t *v, const void *set, size_t len)
{
	if (v == NULL)
		return check_range(set, len);
	klog_crcpool_start(v, set, len);
	return klog_crcpool_finish(v);
}

int
klog_crcpool_sets(klog_crcpool_t *v, const struct iovec *sets, size_t n)
{
	if (v == NULL)
		return check_all(sets, n);
	start_sets(v, sets, n);
	return klog_crcpool_finish(v);
}
