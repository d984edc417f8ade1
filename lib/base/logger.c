/* Log lines through the process's function; see logger.h. */
#include <stdarg.h>
#include <stdio.h>

#include "klog/base/logger.h"

const char *
klog_level_name(int level)
{
	static const char *const names[] = { "error", "warn", "info",
	    "debug" };

	if (level < 0 || level > KLOG_LEVEL_DEBUG)
		return "debug";
	return names[level];
}

int
klog_logger_wants(const klog_logger_t *lg, int level)
{
	return lg->fn != NULL && level <= lg->level;
}

void
klog_logger_say(const klog_logger_t *lg, int level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	if (!klog_logger_wants(lg, level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lg->fn(lg->arg, level, msg);
}
