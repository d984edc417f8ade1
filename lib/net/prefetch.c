/*
 * The prefetch worker: a queue of ranges in, a list of tokens out, both
 * under one mutex.  The read itself is posix_fadvise(WILLNEED), so the
 * kernel issues large reads at once, then pread(2) through a scratch
 * buffer, which waits for them: when the token is reported, the range is
 * in the page cache (unless memory pressure has taken it again).
 *
 * While writes go on and a rate is set, ranges are read a scratch buffer
 * at a time instead (the descriptors have readahead off: log.c), paced by
 * a clock: a read in flight is a read the flusher's fsync may queue
 * behind, and the tail's latency is the fsync's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "klog/base/clock.h"
#include "klog/base/error.h"
#include "klog/net/prefetch.h"

#define SCRATCH ((size_t)128 << 10)
#define NS 1000000000LL
#define WRITES_QUIET_NS NS   /* paced until this long after the last write */

struct job {
	int fd;
	int64_t pos;
	size_t len;
	uint64_t token;
};

struct klog_prefetch {
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	struct job *queue;       /* FIFO: [qhead, nqueue) */
	size_t qhead, nqueue, qcap;
	uint64_t *done;
	size_t ndone, dcap;
	void (*notify)(void *arg);
	void *arg;
	uint8_t *scratch;        /* the worker's */
	uint64_t rate;           /* bytes a second while writing; 0: no cap */
	atomic_llong writing_ns; /* monotonic time of the last write */
	int64_t next_ns;         /* the worker's: when the next read may go */
};

static int
paced(klog_prefetch_t *p)
{
	return p->rate > 0 &&
	    klog_clock_mono_ns() - atomic_load(&p->writing_ns) < WRITES_QUIET_NS;
}

/* Wait for n more bytes' turn at p->rate. */
static void
pace(klog_prefetch_t *p, size_t n)
{
	int64_t now = klog_clock_mono_ns();
	struct timespec ts;

	if (p->next_ns > now) {
		ts.tv_sec = p->next_ns / NS;
		ts.tv_nsec = p->next_ns % NS;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
		    NULL) == EINTR)
			;
	} else {
		p->next_ns = now;   /* no credit saved up while idle */
	}
	p->next_ns += (int64_t)((double)n * NS / (double)p->rate);
}

static void
read_range(klog_prefetch_t *p, const struct job *j)
{
	int64_t pos = j->pos, end = j->pos + (int64_t)j->len;
	int slow = paced(p);
	ssize_t n;

	if (!slow)
		(void)posix_fadvise(j->fd, j->pos, (off_t)j->len,
		    POSIX_FADV_WILLNEED);
	while (pos < end) {
		size_t want = end - pos < (int64_t)SCRATCH ?
		    (size_t)(end - pos) : SCRATCH;

		if (slow)
			pace(p, want);
		n = pread(j->fd, p->scratch, want, pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		pos += n;
	}
}

static int
push_done(klog_prefetch_t *p, uint64_t token)
{
	if (p->ndone == p->dcap) {
		size_t cap = p->dcap ? p->dcap * 2 : 16;
		uint64_t *d = realloc(p->done, cap * sizeof(*d));

		if (d == NULL)
			return -KLOG_ENOMEM;
		p->done = d;
		p->dcap = cap;
	}
	p->done[p->ndone++] = token;
	return 0;
}

static void *
worker_main(void *arg)
{
	klog_prefetch_t *p = arg;
	struct job j;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->qhead == p->nqueue && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		j = p->queue[p->qhead++];
		if (p->qhead == p->nqueue)
			p->qhead = p->nqueue = 0;
		pthread_mutex_unlock(&p->mu);
		read_range(p, &j);
		close(j.fd);
		pthread_mutex_lock(&p->mu);
		/* Out of memory: the token is lost and its connection waits
		 * for its own timeout; nothing else is at stake. */
		(void)push_done(p, j.token);
		pthread_mutex_unlock(&p->mu);
		p->notify(p->arg);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
klog_prefetch_new(void (*notify)(void *arg), void *arg, uint64_t rate,
    klog_prefetch_t **out)
{
	klog_prefetch_t *p;
	sigset_t all, old;
	int rc;

	*out = NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -KLOG_ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->notify = notify;
	p->arg = arg;
	p->rate = rate;
	atomic_init(&p->writing_ns, INT64_MIN / 2);
	if ((p->scratch = malloc(SCRATCH)) == NULL) {
		klog_prefetch_free(p);
		return -KLOG_ENOMEM;
	}
	/* The worker takes no signals: they stay with the loop's thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&p->thread, NULL, worker_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		klog_prefetch_free(p);
		return -KLOG_EIO;
	}
	pthread_setname_np(p->thread, "klog-prefetch");
	p->started = 1;
	*out = p;
	return 0;
}

void
klog_prefetch_free(klog_prefetch_t *p)
{
	if (p == NULL)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
	}
	for (size_t i = p->qhead; i < p->nqueue; i++)
		close(p->queue[i].fd);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->queue);
	free(p->done);
	free(p->scratch);
	free(p);
}

static int
push_job(klog_prefetch_t *p, const struct job *j)
{
	if (p->nqueue == p->qcap) {
		size_t cap = p->qcap ? p->qcap * 2 : 16;
		struct job *q = realloc(p->queue, cap * sizeof(*q));

		if (q == NULL)
			return -KLOG_ENOMEM;
		p->queue = q;
		p->qcap = cap;
	}
	p->queue[p->nqueue++] = *j;
	return 0;
}

int
klog_prefetch_submit(klog_prefetch_t *p, int fd, int64_t pos, size_t len,
    uint64_t token)
{
	struct job j = { .pos = pos, .len = len, .token = token };
	int rc;

	if ((j.fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
		return klog_errno_code(errno);
	pthread_mutex_lock(&p->mu);
	rc = push_job(p, &j);
	pthread_mutex_unlock(&p->mu);
	if (rc < 0) {
		close(j.fd);
		return rc;
	}
	pthread_cond_signal(&p->cv);
	return 0;
}

void
klog_prefetch_writing(klog_prefetch_t *p)
{
	atomic_store(&p->writing_ns, klog_clock_mono_ns());
}

size_t
klog_prefetch_take(klog_prefetch_t *p, uint64_t *tokens, size_t max)
{
	size_t n;

	pthread_mutex_lock(&p->mu);
	n = p->ndone < max ? p->ndone : max;
	for (size_t i = 0; i < n; i++)
		tokens[i] = p->done[i];
	for (size_t i = n; i < p->ndone; i++)
		p->done[i - n] = p->done[i];
	p->ndone -= n;
	pthread_mutex_unlock(&p->mu);
	return n;
}
