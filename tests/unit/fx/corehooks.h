/*
 * The hooks of the core's unit tests (tests/unit/core/): a logger that
 * keeps every line, the finish that records parked requests as they are
 * answered, and the loop's before_sleep and on_wake, as lib/broker/broker.c
 * sets them, the latter counting wakeups.  They work on the test's own
 * struct fx, which the test defines before it includes this, with at
 * least:
 *
 *	klog_core_t *core;
 *	int wakes;
 *	int finished;
 *	klog_core_park_t *done[MAX_DONE];
 *	char logs[...];
 *
 * Header-only, like tmpdir.h.
 */
#ifndef KLOG_TEST_COREHOOKS_H
#define KLOG_TEST_COREHOOKS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/logger.h"
#include "klog/core/core.h"
#include "klog/net/loop.h"

#ifndef MAX_DONE
#error "define MAX_DONE and struct fx before fx/corehooks.h"
#endif

static inline void
capture(void *arg, int level, const char *msg)
{
	struct fx *f = arg;
	size_t n = strlen(f->logs);

	snprintf(f->logs + n, sizeof(f->logs) - n, "%s: %s\n",
	    klog_level_name(level), msg);
}

static inline void
finish(klog_core_park_t *pk)
{
	struct fx *f = pk->front;

	assert_true(f->finished < MAX_DONE);
	f->done[f->finished++] = pk;
	pk->hold.ready = 1;
}

static inline void
before_sleep(klog_loop_t *loop, void *arg)
{
	struct fx *f = arg;

	(void)loop;
	(void)klog_core_before_sleep(f->core);
}

static inline void
on_wake(klog_loop_t *loop, void *arg)
{
	struct fx *f = arg;

	(void)loop;
	f->wakes++;
	klog_core_on_wake(f->core);
}

#endif
