/*
 * Progress of long work on standard error, for the tools' mains: one line
 * redrawn in place at most five times a second while stderr is a terminal
 * (or a line every few seconds with --progress when it is not), cleared
 * when the work ends; nothing at all in a pipe, or under -q.
 */
#ifndef KLOG_CLI_PROGRESS_H
#define KLOG_CLI_PROGRESS_H

#include <stdint.h>

typedef struct cli_progress {
	int mode;              /* 0 off, 1 a terminal line, 2 plain lines */
	int64_t start_ms, last_ms;
	int shown;             /* a terminal line is on the screen */
} cli_progress_t;

/* Off when quiet; a terminal line when stderr is one; plain lines when
 * forced (--progress) and it is not. */
void cli_progress_init(cli_progress_t *p, int quiet, int forced);

/* Say how far: done of total bytes (total 0: unknown), count of what
 * (e.g. "messages"), about what (e.g. a directory).  Cheap when not due:
 * call it as often as convenient. */
void cli_progress_update(cli_progress_t *p, const char *about,
    uint64_t done, uint64_t total, uint64_t count, const char *what);

/* The work is over: clear the line. */
void cli_progress_end(cli_progress_t *p);

#endif
