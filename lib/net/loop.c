/*
 * The event loop: epoll for descriptors, a binary min-heap of caller-owned
 * timers ordered by (when, seq), and an eventfd for wakeups.  Modelled on
 * Redis's ae.c, with the multiplexer fixed to epoll and timers kept in a
 * heap so that thousands of parked requests each with a deadline stay cheap.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "klog/base/clock.h"
#include "klog/base/error.h"
#include "klog/net/loop.h"

#define LOOP_MAX_EVENTS 256

struct file_ev {
	int mask;
	klog_loop_file_fn *fn;
	void *arg;
};

struct klog_loop {
	int epfd;
	int evfd;
	struct file_ev *files;  /* indexed by descriptor */
	size_t nfiles;
	klog_timer_t **heap;
	size_t nheap, capheap;
	uint64_t seq;
	klog_loop_hook_fn *before_sleep;
	void *before_sleep_arg;
	klog_loop_hook_fn *wake_fn;
	void *wake_arg;
	atomic_int stop;
	struct epoll_event events[LOOP_MAX_EVENTS];
};

int64_t
klog_loop_now_ms(void)
{
	return klog_clock_mono_ms();
}

int
klog_loop_create(klog_loop_t **out)
{
	struct epoll_event ev = { .events = EPOLLIN };
	klog_loop_t *loop;

	*out = NULL;
	if ((loop = calloc(1, sizeof(*loop))) == NULL)
		return -KLOG_ENOMEM;
	loop->evfd = -1;
	if ((loop->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		goto err;
	loop->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (loop->evfd < 0)
		goto err;
	ev.data.fd = loop->evfd;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->evfd, &ev) < 0)
		goto err;
	atomic_init(&loop->stop, 0);
	*out = loop;
	return 0;
err:
	klog_loop_free(loop);
	return -KLOG_EIO;
}

void
klog_loop_free(klog_loop_t *loop)
{
	if (loop == NULL)
		return;
	if (loop->epfd >= 0)
		close(loop->epfd);
	if (loop->evfd >= 0)
		close(loop->evfd);
	for (size_t i = 0; i < loop->nheap; i++)
		loop->heap[i]->slot = 0;
	free(loop->heap);
	free(loop->files);
	free(loop);
}

/* ---- file events ---- */

static int
grow_files(klog_loop_t *loop, int fd)
{
	size_t n = loop->nfiles ? loop->nfiles : 64;
	struct file_ev *p;

	while (n <= (size_t)fd)
		n *= 2;
	if ((p = realloc(loop->files, n * sizeof(*p))) == NULL)
		return -KLOG_ENOMEM;
	memset(p + loop->nfiles, 0, (n - loop->nfiles) * sizeof(*p));
	loop->files = p;
	loop->nfiles = n;
	return 0;
}

int
klog_loop_watch(klog_loop_t *loop, int fd, int mask, klog_loop_file_fn *fn,
    void *arg)
{
	int rc;

	if (fd < 0)
		return -KLOG_EINVAL;
	if ((size_t)fd >= loop->nfiles) {
		if (mask == 0)
			return 0;
		if ((rc = grow_files(loop, fd)) < 0)
			return rc;
	}
	if ((rc = klog_loop_set_mask(loop, fd, mask)) < 0)
		return rc;
	loop->files[fd].fn = fn;
	loop->files[fd].arg = arg;
	return 0;
}

int
klog_loop_mask(const klog_loop_t *loop, int fd)
{
	if (fd < 0 || (size_t)fd >= loop->nfiles)
		return 0;
	return loop->files[fd].mask;
}

int
klog_loop_set_mask(klog_loop_t *loop, int fd, int mask)
{
	struct epoll_event ev = { 0 };
	struct file_ev *fe;
	int op;

	if (fd < 0 || (size_t)fd >= loop->nfiles)
		return mask == 0 ? 0 : -KLOG_EINVAL;
	fe = &loop->files[fd];
	if (fe->mask == mask)
		return 0;
	op = fe->mask == 0 ? EPOLL_CTL_ADD :
	    mask == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
	if (mask & KLOG_LOOP_READABLE)
		ev.events |= EPOLLIN;
	if (mask & KLOG_LOOP_WRITABLE)
		ev.events |= EPOLLOUT;
	ev.data.fd = fd;
	/* A descriptor closed before it was unwatched has left epoll already. */
	if (epoll_ctl(loop->epfd, op, fd, &ev) < 0 &&
	    !(op == EPOLL_CTL_DEL && errno == EBADF))
		return klog_errno_code(errno);
	fe->mask = mask;
	return 0;
}

/* ---- timers: a min-heap on (when, seq) ---- */

static int
timer_before(const klog_timer_t *a, const klog_timer_t *b)
{
	return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

static void
heap_set(klog_loop_t *loop, size_t i, klog_timer_t *t)
{
	loop->heap[i] = t;
	t->slot = i + 1;
}

static void
sift_up(klog_loop_t *loop, size_t i)
{
	klog_timer_t *t = loop->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!timer_before(t, loop->heap[parent]))
			break;
		heap_set(loop, i, loop->heap[parent]);
		i = parent;
	}
	heap_set(loop, i, t);
}

static void
sift_down(klog_loop_t *loop, size_t i)
{
	klog_timer_t *t = loop->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= loop->nheap)
			break;
		if (c + 1 < loop->nheap &&
		    timer_before(loop->heap[c + 1], loop->heap[c]))
			c++;
		if (!timer_before(loop->heap[c], t))
			break;
		heap_set(loop, i, loop->heap[c]);
		i = c;
	}
	heap_set(loop, i, t);
}

/* Restore the heap after t's key changed in place. */
static void
heap_fix(klog_loop_t *loop, klog_timer_t *t)
{
	size_t i = t->slot - 1;

	if (i > 0 && timer_before(t, loop->heap[(i - 1) / 2]))
		sift_up(loop, i);
	else
		sift_down(loop, i);
}

void
klog_timer_init(klog_timer_t *t, klog_timer_fn *fn, void *arg)
{
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	t->arg = arg;
}

int
klog_loop_timer_start(klog_loop_t *loop, klog_timer_t *t, int64_t after_ms,
    int64_t repeat_ms)
{
	if (after_ms < 0)
		after_ms = 0;
	t->when = klog_loop_now_ms() + after_ms;
	t->interval = repeat_ms > 0 ? repeat_ms : 0;
	t->seq = loop->seq++;
	if (t->slot != 0) {
		heap_fix(loop, t);
		return 0;
	}
	if (loop->nheap == loop->capheap) {
		size_t cap = loop->capheap ? loop->capheap * 2 : 16;
		klog_timer_t **p = realloc(loop->heap, cap * sizeof(*p));

		if (p == NULL)
			return -KLOG_ENOMEM;
		loop->heap = p;
		loop->capheap = cap;
	}
	loop->heap[loop->nheap++] = t;
	sift_up(loop, loop->nheap - 1);
	return 0;
}

void
klog_loop_timer_stop(klog_loop_t *loop, klog_timer_t *t)
{
	size_t i;
	klog_timer_t *last;

	if (t->slot == 0)
		return;
	i = t->slot - 1;
	t->slot = 0;
	last = loop->heap[--loop->nheap];
	if (i == loop->nheap)
		return;
	heap_set(loop, i, last);
	heap_fix(loop, last);
}

/*
 * Fire the timers due at now.  Only those scheduled before this pass began
 * (seq < limit) fire, so a callback that restarts itself with 0 ms cannot
 * keep the loop here forever.
 */
static int
process_timers(klog_loop_t *loop)
{
	int64_t now = klog_loop_now_ms();
	uint64_t limit = loop->seq;
	int n = 0;

	while (loop->nheap > 0) {
		klog_timer_t *t = loop->heap[0];

		if (t->when > now || t->seq >= limit)
			break;
		if (t->interval > 0) {
			t->when = now + t->interval;
			t->seq = loop->seq++;
			heap_fix(loop, t);
		} else {
			klog_loop_timer_stop(loop, t);
		}
		t->fn(loop, t, t->arg);
		n++;
	}
	return n;
}

/* ---- hooks, wakeup, running ---- */

void
klog_loop_set_before_sleep(klog_loop_t *loop, klog_loop_hook_fn *fn, void *arg)
{
	loop->before_sleep = fn;
	loop->before_sleep_arg = arg;
}

void
klog_loop_set_wake(klog_loop_t *loop, klog_loop_hook_fn *fn, void *arg)
{
	loop->wake_fn = fn;
	loop->wake_arg = arg;
}

void
klog_loop_wake(klog_loop_t *loop)
{
	uint64_t one = 1;
	int saved = errno;

	/* EAGAIN means the counter is already non-zero: a wakeup is pending. */
	while (write(loop->evfd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	errno = saved;
}

void
klog_loop_stop(klog_loop_t *loop)
{
	atomic_store(&loop->stop, 1);
	klog_loop_wake(loop);
}

int
klog_loop_stopping(const klog_loop_t *loop)
{
	return atomic_load(&((klog_loop_t *)loop)->stop);
}

static int
next_timeout(klog_loop_t *loop, int timeout_ms)
{
	int64_t wait;

	if (loop->nheap == 0)
		return timeout_ms;
	wait = loop->heap[0]->when - klog_loop_now_ms();
	if (wait < 0)
		wait = 0;
	if (timeout_ms >= 0 && wait > timeout_ms)
		return timeout_ms;
	return wait > INT32_MAX ? INT32_MAX : (int)wait;
}

static void
drain_wakeups(klog_loop_t *loop)
{
	uint64_t v;

	while (read(loop->evfd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
	if (loop->wake_fn != NULL)
		loop->wake_fn(loop, loop->wake_arg);
}

int
klog_loop_run_once(klog_loop_t *loop, int timeout_ms)
{
	int n, handled = 0, woken = 0;

	if (loop->before_sleep != NULL)
		loop->before_sleep(loop, loop->before_sleep_arg);
	n = epoll_wait(loop->epfd, loop->events, LOOP_MAX_EVENTS,
	    next_timeout(loop, timeout_ms));
	if (n < 0) {
		if (errno != EINTR)
			return -KLOG_EIO;
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		struct epoll_event *ev = &loop->events[i];
		int fd = ev->data.fd, mask = 0;
		struct file_ev *fe;

		if (fd == loop->evfd) {
			woken = 1;
			continue;
		}
		if ((size_t)fd >= loop->nfiles)
			continue;
		fe = &loop->files[fd];
		if (ev->events & EPOLLIN)
			mask |= KLOG_LOOP_READABLE;
		if (ev->events & EPOLLOUT)
			mask |= KLOG_LOOP_WRITABLE;
		if (ev->events & (EPOLLERR | EPOLLHUP))
			mask |= fe->mask;
		/* An earlier callback may have changed or removed this fd. */
		mask &= fe->mask;
		if (mask == 0 || fe->fn == NULL)
			continue;
		fe->fn(loop, fd, fe->arg, mask);
		handled++;
	}
	if (woken)
		drain_wakeups(loop);
	return handled + process_timers(loop);
}

int
klog_loop_run(klog_loop_t *loop)
{
	int rc = 0;

	while (!atomic_load(&loop->stop)) {
		if ((rc = klog_loop_run_once(loop, -1)) < 0)
			break;
		rc = 0;
	}
	atomic_store(&loop->stop, 0);
	return rc;
}
