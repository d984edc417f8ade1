/*
 * The clocks, in the units the library counts in.  The monotonic clock is for
 * deadlines, timers, intervals and rates; the wall clock only for times that
 * are compared with file times or read by people and other hosts.
 */
#ifndef KLOG_CLOCK_H
#define KLOG_CLOCK_H

#include <stdint.h>
#include <time.h>

int64_t klog_clock_mono_ms(void);  /* CLOCK_MONOTONIC, milliseconds */
int64_t klog_clock_mono_ns(void);  /* CLOCK_MONOTONIC, nanoseconds */
int64_t klog_clock_wall_ms(void);  /* CLOCK_REALTIME, ms since the epoch */

/* A timespec (a file's st_mtim, say) in milliseconds, rounded as the
 * clocks above are: tv_sec * 1000 + tv_nsec / 1000000. */
int64_t klog_clock_ts_ms(const struct timespec *ts);

/* Sleep for ms milliseconds (none if ms <= 0), resuming after a signal. */
void klog_clock_sleep_ms(int64_t ms);

#endif
