/*
 * A small event loop in the style of Redis's ae: file events with read and
 * write interest and one callback per descriptor, timers in milliseconds
 * (one-shot or repeating), a hook that runs before every sleep, and a wakeup
 * that any thread (or a signal handler) may trigger.  Linux epoll, level
 * triggered.
 *
 * One thread runs the loop and makes every call here, except klog_loop_wake()
 * and klog_loop_stop(), which are safe from any thread and from a signal
 * handler.  Callbacks run on the loop thread and may add, change or remove
 * any file event or timer, their own included.
 *
 * One iteration:
 *
 *   before-sleep hook -> epoll_wait (until the nearest timer) -> file events
 *   -> wake callback (if woken) -> due timers
 */
#ifndef KLOG_LOOP_H
#define KLOG_LOOP_H

#include <stddef.h>
#include <stdint.h>

typedef struct klog_loop klog_loop_t;

enum klog_loop_mask {
	KLOG_LOOP_NONE = 0,
	KLOG_LOOP_READABLE = 1 << 0,
	KLOG_LOOP_WRITABLE = 1 << 1,
};

/* A file event: mask says what is ready; a hang-up or error is reported as
 * readable and writable, so the next read or write sees it. */
typedef void klog_loop_file_fn(klog_loop_t *loop, int fd, void *arg, int mask);

/*
 * A timer lives in its owner's memory (embed it in the struct it serves), so
 * starting one never fails for lack of a handle and stopping one that already
 * fired is harmless.  Fields are private.
 */
typedef struct klog_timer klog_timer_t;
typedef void klog_timer_fn(klog_loop_t *loop, klog_timer_t *t, void *arg);

struct klog_timer {
	int64_t when;       /* CLOCK_MONOTONIC ms */
	int64_t interval;   /* repeat period, 0 for one-shot */
	uint64_t seq;       /* ties fire in start order */
	size_t slot;        /* heap index + 1; 0 when not scheduled */
	klog_timer_fn *fn;
	void *arg;
};

typedef void klog_loop_hook_fn(klog_loop_t *loop, void *arg);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t klog_loop_now_ms(void);

/* A new loop (epoll and eventfd descriptors, close-on-exec); *out is the
 * caller's: klog_loop_free().  -KLOG_EIO or -KLOG_ENOMEM. */
int klog_loop_create(klog_loop_t **out);

/* Free the loop and its descriptors.  Watched descriptors are not closed;
 * scheduled timers are simply forgotten. */
void klog_loop_free(klog_loop_t *loop);

/*
 * Watch fd for mask (KLOG_LOOP_READABLE | KLOG_LOOP_WRITABLE), replacing any
 * earlier mask, callback and argument; mask 0 stops watching.  The kernel is
 * only told when the mask changes, so calling this with the current mask is
 * cheap.  Stop watching a descriptor before closing it.
 */
int klog_loop_watch(klog_loop_t *loop, int fd, int mask, klog_loop_file_fn *fn,
    void *arg);
/* The current mask of fd (0 if not watched). */
int klog_loop_mask(const klog_loop_t *loop, int fd);
/* Change only the mask, keeping the callback. */
int klog_loop_set_mask(klog_loop_t *loop, int fd, int mask);

void klog_timer_init(klog_timer_t *t, klog_timer_fn *fn, void *arg);
/*
 * (Re)schedule t to fire after after_ms, then every repeat_ms if that is
 * positive.  A running timer is moved.  -KLOG_ENOMEM if the heap cannot grow.
 */
int klog_loop_timer_start(klog_loop_t *loop, klog_timer_t *t, int64_t after_ms,
    int64_t repeat_ms);
/* Unschedule t; harmless if it is not scheduled. */
void klog_loop_timer_stop(klog_loop_t *loop, klog_timer_t *t);
static inline int
klog_timer_active(const klog_timer_t *t)
{
	return t->slot != 0;
}

void klog_loop_set_before_sleep(klog_loop_t *loop, klog_loop_hook_fn *fn,
    void *arg);
/* Called on the loop thread after klog_loop_wake() (calls coalesce). */
void klog_loop_set_wake(klog_loop_t *loop, klog_loop_hook_fn *fn, void *arg);

/* Wake the loop from any thread or signal handler (one write to an eventfd). */
void klog_loop_wake(klog_loop_t *loop);

/*
 * Ask klog_loop_run() to return after the current iteration.  Safe from any
 * thread and from a signal handler.  A stop requested before run is called
 * makes it return at once.
 */
void klog_loop_stop(klog_loop_t *loop);
/* Whether a stop is pending. */
int klog_loop_stopping(const klog_loop_t *loop);

/*
 * One iteration, sleeping at most timeout_ms (-1: until an event or the next
 * timer).  Returns the number of file events and timers handled, or -KLOG_EIO
 * if epoll_wait failed for a reason other than a signal.
 */
int klog_loop_run_once(klog_loop_t *loop, int timeout_ms);

/* Iterate until klog_loop_stop(); consumes the stop request.  0 or -KLOG_EIO. */
int klog_loop_run(klog_loop_t *loop);

#endif
