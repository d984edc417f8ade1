/*
 * The clocks (see clock.h).  clock_gettime() cannot fail for these two
 * clocks on Linux, so its result is not checked.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "klog/base/clock.h"

int64_t
klog_clock_ts_ms(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

int64_t
klog_clock_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return klog_clock_ts_ms(&ts);
}

int64_t
klog_clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
klog_clock_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return klog_clock_ts_ms(&ts);
}

void
klog_clock_sleep_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
