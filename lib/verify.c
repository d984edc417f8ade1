/*
 * The verifier: the set is cut into workers + 1 pieces of about equal
 * bytes at entry boundaries (a walk of the length fields only); the caller
 * checks the first piece while each worker checks one of the others.
 * Workers sleep on a condition variable between sets; a set costs two
 * wake-ups, nothing next to the milliseconds of crc32() a large one takes.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include <zlib.h>

#include "klog/error.h"
#include "klog/format.h"
#include "klog/verify.h"

struct piece {
	const uint8_t *p;
	size_t len;
	int bad;
};

struct worker {
	klog_verify_t *v;
	int idx;             /* its piece: idx + 1 */
	pthread_t thread;
};

struct klog_verify {
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	struct worker *w;
	int workers, started;
	struct piece *pieces;   /* workers + 1 */
	unsigned long gen;      /* bumped for each set */
	int pending;            /* workers still checking the current set */
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
	else if (p[4] == 1)
		hdr = KLOG_MAGIC1_HEADER;
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
		if (crc32(0, q + hdr, length - (uint32_t)hdr) !=
		    klog_be32(q + hdr - 4))
			return 1;
		pos += KLOG_LENGTH_SIZE + length;
	}
	return 0;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	klog_verify_t *v = w->v;
	unsigned long seen = 0;
	struct piece *pc = &v->pieces[w->idx + 1];
	int bad;

	pthread_setname_np(pthread_self(), "klog-verify");
	pthread_mutex_lock(&v->mu);
	for (;;) {
		while (!v->stop && v->gen == seen)
			pthread_cond_wait(&v->go, &v->mu);
		if (v->stop)
			break;
		seen = v->gen;
		pthread_mutex_unlock(&v->mu);
		bad = check_range(pc->p, pc->len);
		pthread_mutex_lock(&v->mu);
		pc->bad = bad;
		if (--v->pending == 0)
			pthread_cond_signal(&v->done);
	}
	pthread_mutex_unlock(&v->mu);
	return NULL;
}

/* Workers take no signals: a tool's handlers and its EINTRs stay on the
 * thread that expects them. */
static int
start_workers(klog_verify_t *v)
{
	sigset_t all, old;
	int rc = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (; v->started < v->workers; v->started++) {
		v->w[v->started].v = v;
		v->w[v->started].idx = v->started;
		if (pthread_create(&v->w[v->started].thread, NULL, worker_main,
		    &v->w[v->started]) != 0) {
			rc = -KLOG_EIO;
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int
klog_verify_new(int workers, klog_verify_t **out)
{
	klog_verify_t *v;
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
	v->w = calloc((size_t)workers + 1, sizeof(*v->w));
	v->pieces = calloc((size_t)workers + 1, sizeof(*v->pieces));
	if (v->w == NULL || v->pieces == NULL) {
		klog_verify_free(v);
		return -KLOG_ENOMEM;
	}
	if ((rc = start_workers(v)) < 0) {
		klog_verify_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

void
klog_verify_free(klog_verify_t *v)
{
	if (v == NULL)
		return;
	pthread_mutex_lock(&v->mu);
	v->stop = 1;
	pthread_cond_broadcast(&v->go);
	pthread_mutex_unlock(&v->mu);
	for (int i = 0; i < v->started; i++)
		pthread_join(v->w[i].thread, NULL);
	pthread_cond_destroy(&v->done);
	pthread_cond_destroy(&v->go);
	pthread_mutex_destroy(&v->mu);
	free(v->pieces);
	free(v->w);
	free(v);
}

/* Cut set into n pieces of about len / n bytes at entry boundaries; after
 * a malformed entry the rest is one piece that stops there. */
static void
cut(struct piece *pieces, int n, const uint8_t *set, size_t len)
{
	size_t pos = 0, start = 0, hdr, target;
	uint32_t length;

	for (int i = 0; i < n - 1; i++) {
		target = len / (size_t)n * (size_t)(i + 1);
		while (pos < target &&
		    (hdr = entry_header(set + pos, len - pos, &length)) != 0)
			pos += KLOG_LENGTH_SIZE + length;
		pieces[i].p = set + start;
		pieces[i].len = pos - start;
		start = pos;
	}
	pieces[n - 1].p = set + start;
	pieces[n - 1].len = len - start;
}

int
klog_verify_crcs(klog_verify_t *v, const void *set, size_t len)
{
	int bad;

	if (v == NULL || v->workers == 0 || len < KLOG_VERIFY_MIN_SPLIT)
		return check_range(set, len);
	pthread_mutex_lock(&v->mu);
	cut(v->pieces, v->workers + 1, set, len);
	v->pending = v->workers;
	v->gen++;
	pthread_cond_broadcast(&v->go);
	pthread_mutex_unlock(&v->mu);
	bad = check_range(v->pieces[0].p, v->pieces[0].len);
	pthread_mutex_lock(&v->mu);
	while (v->pending > 0)
		pthread_cond_wait(&v->done, &v->mu);
	for (int i = 1; i <= v->workers; i++)
		bad |= v->pieces[i].bad;
	pthread_mutex_unlock(&v->mu);
	return bad;
}
