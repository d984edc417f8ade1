#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "klog/recvahead.h"

struct klog_recvahead {
	klog_recvahead_fn fn;
	void *arg;
	pthread_t thread;
	int started;             /* thread is joinable */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	klog_client_t *job;      /* under mu: handed over, not yet taken */
	int quit;                /* under mu */
	int rc;                  /* under mu: the last job's outcome */
	klog_err_t err;
	int busy;                /* the caller's: started, not yet done */
	int done_fd;             /* eventfd: the thread finished a job */
	int stop_fd;             /* eventfd: cut the current job short */
};

static void
drain(int fd)
{
	uint64_t n;

	while (read(fd, &n, sizeof(n)) < 0 && errno == EINTR)
		continue;
}

static void
post(int fd)
{
	uint64_t one = 1;

	while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR)
		continue;
}

/* Read until a whole response is buffered: 0 (or cancelled), or an error. */
static int
receive(klog_recvahead_t *a, klog_client_t *c, klog_err_t *err)
{
	struct pollfd pfd[2];
	klog_resp_header_t h;
	const uint8_t *body;
	size_t len;
	int rc;

	for (;;) {
		if ((rc = klog_client_peek(c, &h, &body, &len, err)) < 0)
			return rc;
		if (rc == 1) {
			if (a->fn != NULL)
				a->fn(a->arg, &h, body, len);
			return 0;
		}
		pfd[0] = (struct pollfd){ .fd = klog_client_fd(c),
		    .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = a->stop_fd, .events = POLLIN };
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return klog_err_sys(err, "poll", NULL);
		}
		if (pfd[1].revents != 0)
			return 0;
		if ((rc = klog_client_read(c, err)) < 0)
			return rc;
	}
}

static void *
run(void *arg)
{
	klog_recvahead_t *a = arg;
	klog_client_t *c;
	klog_err_t err;
	int rc;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (!a->quit && a->job == NULL)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->quit)
			break;
		c = a->job;
		pthread_mutex_unlock(&a->mu);
		KLOG_ERR_EMPTY(&err);
		rc = receive(a, c, &err);
		pthread_mutex_lock(&a->mu);
		a->job = NULL;
		a->rc = rc;
		a->err = err;
		post(a->done_fd);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

int
klog_recvahead_new(klog_recvahead_fn fn, void *arg, klog_recvahead_t **out)
{
	klog_recvahead_t *a = calloc(1, sizeof(*a));
	sigset_t all, old;
	int rc;

	if (a == NULL)
		return -KLOG_ENOMEM;
	a->fn = fn;
	a->arg = arg;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	a->done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	a->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->done_fd < 0 || a->stop_fd < 0) {
		klog_recvahead_free(a);
		return -KLOG_EIO;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&a->thread, NULL, run, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		klog_recvahead_free(a);
		return -KLOG_EIO;
	}
	a->started = 1;
	*out = a;
	return 0;
}

void
klog_recvahead_start(klog_recvahead_t *a, klog_client_t *c)
{
	pthread_mutex_lock(&a->mu);
	a->job = c;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	a->busy = 1;
}

int
klog_recvahead_fd(const klog_recvahead_t *a)
{
	return a->done_fd;
}

int
klog_recvahead_done(klog_recvahead_t *a, int *rc, klog_err_t *err)
{
	uint64_t n;

	if (!a->busy)
		return 1;
	if (read(a->done_fd, &n, sizeof(n)) < 0)
		return 0;
	pthread_mutex_lock(&a->mu);
	*rc = a->rc;
	if (err != NULL)
		*err = a->err;
	pthread_mutex_unlock(&a->mu);
	a->busy = 0;
	return 1;
}

void
klog_recvahead_cancel(klog_recvahead_t *a)
{
	struct pollfd pfd = { .fd = a->done_fd, .events = POLLIN };
	int rc;

	if (!a->busy)
		return;
	post(a->stop_fd);
	while (!klog_recvahead_done(a, &rc, NULL))
		(void)poll(&pfd, 1, -1);
	drain(a->stop_fd);
}

void
klog_recvahead_free(klog_recvahead_t *a)
{
	if (a == NULL)
		return;
	if (a->started) {
		klog_recvahead_cancel(a);
		pthread_mutex_lock(&a->mu);
		a->quit = 1;
		pthread_cond_signal(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thread, NULL);
	}
	if (a->done_fd >= 0)
		close(a->done_fd);
	if (a->stop_fd >= 0)
		close(a->stop_fd);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
}
