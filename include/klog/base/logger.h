/*
 * Log lines from the broker's modules, through a function the process
 * gives (klog-serve writes them to stderr): the library never prints.  A
 * line above the logger's level is not even formatted.
 */
#ifndef KLOG_LOGGER_H
#define KLOG_LOGGER_H

enum klog_level {
	KLOG_LEVEL_ERROR = 0,
	KLOG_LEVEL_WARN = 1,
	KLOG_LEVEL_INFO = 2,
	KLOG_LEVEL_DEBUG = 3,
};

/* "error", "warn", "info", "debug". */
const char *klog_level_name(int level);

/* One log line, without a newline. */
typedef void klog_logger_fn(void *arg, int level, const char *msg);

typedef struct klog_logger {
	klog_logger_fn *fn;        /* NULL: silent */
	void *arg;
	int level;                 /* lines above it are dropped */
} klog_logger_t;

/* Format and hand one line to lg->fn, if its level is wanted; a line is
 * cut at 2 KiB. */
void klog_logger_say(const klog_logger_t *lg, int level, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

/* Whether a line at level would be written. */
int klog_logger_wants(const klog_logger_t *lg, int level);

#endif
