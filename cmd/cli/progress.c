/* Progress on standard error; see progress.h. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"

#define TTY_EVERY_MS 200
#define PLAIN_EVERY_MS 5000

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
cli_progress_init(cli_progress_t *p, int quiet, int forced)
{
	p->mode = quiet ? 0 : isatty(STDERR_FILENO) ? 1 : forced ? 2 : 0;
	p->start_ms = now_ms();
	p->last_ms = 0;    /* the first update shows at once */
	p->shown = 0;
}

/* 1.5 GB, 120 MB, 12 KB: three significant figures at most. */
static void
human(char *buf, size_t len, uint64_t v)
{
	static const char *unit[] = { "B", "KB", "MB", "GB", "TB" };
	double d = (double)v;
	int u = 0;

	while (d >= 1000 && u < 4) {
		d /= 1000;
		u++;
	}
	snprintf(buf, len, u == 0 ? "%.0f %s" : d < 10 ? "%.1f %s" :
	    "%.0f %s", d, unit[u]);
}

void
cli_progress_update(cli_progress_t *p, const char *about, uint64_t done,
    uint64_t total, uint64_t count, const char *what)
{
	char d[32], t[32], rate[48] = "", r[32], pct[16] = "";
	int64_t now, ms;

	if (p->mode == 0)
		return;
	now = now_ms();
	if (now - p->last_ms < (p->mode == 1 ? TTY_EVERY_MS : PLAIN_EVERY_MS))
		return;
	p->last_ms = now;
	ms = now - p->start_ms;
	human(d, sizeof(d), done);
	human(t, sizeof(t), total);
	if (ms >= 100) {
		human(r, sizeof(r), done * 1000 / (uint64_t)ms);
		snprintf(rate, sizeof(rate), ", %s/s", r);
	}
	if (total > 0)
		snprintf(pct, sizeof(pct), " (%d%%)",
		    (int)(done * 100 / total));
	fprintf(stderr, "%s%s: %s: %s%s%s%s, %llu %s%s%s",
	    p->mode == 1 ? "\r" : "", cli_prog(), about, d,
	    total > 0 ? " of " : "", total > 0 ? t : "", pct,
	    (unsigned long long)count, what, rate, p->mode == 1 ? "\033[K" :
	    "\n");
	fflush(stderr);
	p->shown = p->mode == 1;
}

void
cli_progress_end(cli_progress_t *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = 0;
}
