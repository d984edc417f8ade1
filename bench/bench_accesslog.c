/*
 * bench_accesslog: realistic input for the tools and compression
 * benchmarks, nginx "combined" access-log lines from a seeded generator, so
 * that every run (and every machine) gets the same bytes:
 *
 *   bench_accesslog [-n lines] [-s seed]
 *
 * 203.0.113.7 - - [10/Oct/2025:13:55:36 +0000] "GET /api/v1/users/4821
 * HTTP/1.1" 200 5123 "https://www.example.com/cart" "Mozilla/5.0 (...)"
 *
 * Clients, paths, statuses and user agents are skewed the way a real site's
 * are (a few of each make most lines), which is what gzip feeds on; times
 * advance by a few milliseconds a line.  Lines average about 200 bytes.
 */
#include <err.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "klog/base/exit.h"
#include "klog/base/parse.h"

#define PROG "bench_accesslog"
#define CLIENTS 5000
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const agents[] = {
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
	    "(KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) "
	    "AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 "
	    "Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 "
	    "(KHTML, like Gecko) Version/17.3 Safari/605.1.15",
	"Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 "
	    "Firefox/125.0",
	"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 "
	    "(KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36",
	"Mozilla/5.0 (compatible; Googlebot/2.1; "
	    "+http://www.google.com/bot.html)",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
	    "(KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0",
	"curl/8.5.0",
	"Mozilla/5.0 (compatible; bingbot/2.0; "
	    "+http://www.bing.com/bingbot.htm)",
	"python-requests/2.31.0",
	"Prometheus/2.51.0",
	"Go-http-client/1.1",
};

static const char *const words[] = {
	"shoes", "laptop", "coffee", "garden", "books", "camera", "jacket",
	"phone", "kitchen", "toys", "music", "watch", "bike", "lamp", "desk",
};

static const char *const sorts[] = { "price", "rating", "newest", "name" };

static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May",
	"Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* splitmix64: small, fast and the same everywhere. */
static uint64_t
next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t
below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(next(s) % n);
}

/* Skewed towards 0: the square of a uniform draw. */
static uint32_t
skewed(uint64_t *s, uint32_t n)
{
	double u = (double)(next(s) >> 11) / 9007199254740992.0;

	return (uint32_t)(u * u * n);
}

static const char *
method(uint64_t *s)
{
	uint32_t r = below(s, 100);

	return r < 85 ? "GET" : r < 95 ? "POST" : r < 97 ? "HEAD" :
	    r < 99 ? "PUT" : "DELETE";
}

static int
status(uint64_t *s)
{
	static const int rare[] = { 301, 302, 400, 403, 499, 502, 503 };
	uint32_t r = below(s, 1000);

	return r < 800 ? 200 : r < 870 ? 304 : r < 930 ? 404 : r < 940 ?
	    500 : r < 960 ? 201 : rare[below(s, NELEM(rare))];
}

/* The request path into buf; its typical response size into *size. */
static void
path(uint64_t *s, char *buf, size_t len, uint32_t *size)
{
	uint32_t r = below(s, 100);

	if (r < 20) {
		snprintf(buf, len, "/api/v1/users/%u", skewed(s, 20000));
		*size = 300 + below(s, 2000);
	} else if (r < 32) {
		snprintf(buf, len, "/api/v1/users/%u/orders?page=%u",
		    skewed(s, 20000), 1 + skewed(s, 10));
		*size = 1000 + below(s, 8000);
	} else if (r < 44) {
		snprintf(buf, len, "/api/v1/products?category=%s&sort=%s",
		    words[skewed(s, NELEM(words))],
		    sorts[below(s, NELEM(sorts))]);
		*size = 4000 + below(s, 30000);
	} else if (r < 56) {
		snprintf(buf, len, "/images/products/%u.jpg",
		    skewed(s, 50000));
		*size = 20000 + below(s, 200000);
	} else if (r < 66) {
		snprintf(buf, len, "/static/js/app.%08x.js",
		    0x5f3a9c00u + skewed(s, 4));
		*size = 180000 + below(s, 1000);
	} else if (r < 72) {
		snprintf(buf, len, "/static/css/main.%08x.css",
		    0x1b7e4400u + skewed(s, 3));
		*size = 42000 + below(s, 500);
	} else if (r < 78) {
		snprintf(buf, len, "/search?q=%s+%s",
		    words[skewed(s, NELEM(words))],
		    words[below(s, NELEM(words))]);
		*size = 9000 + below(s, 20000);
	} else if (r < 84) {
		snprintf(buf, len, "/blog/%u/%s-%s", 2000 + skewed(s, 400),
		    words[below(s, NELEM(words))],
		    words[below(s, NELEM(words))]);
		*size = 15000 + below(s, 40000);
	} else {
		static const char *const fixed[] = { "/", "/cart",
		    "/checkout", "/login", "/favicon.ico", "/robots.txt",
		    "/healthz", "/metrics" };

		snprintf(buf, len, "%s", fixed[skewed(s, NELEM(fixed))]);
		*size = 100 + below(s, 12000);
	}
}

static void
referer(uint64_t *s, char *buf, size_t len)
{
	uint32_t r = below(s, 100);
	char p[128];
	uint32_t ignored;

	if (r < 40) {
		snprintf(buf, len, "-");
	} else if (r < 55) {
		snprintf(buf, len, "https://www.google.com/");
	} else {
		path(s, p, sizeof(p), &ignored);
		snprintf(buf, len, "https://www.example.com%s", p);
	}
}

static void
line(uint64_t *s, int64_t ms, FILE *out)
{
	uint32_t client = skewed(s, CLIENTS), size;
	time_t secs = (time_t)(ms / 1000);
	char req[160], ref[200];
	struct tm tm;
	int st;

	gmtime_r(&secs, &tm);
	path(s, req, sizeof(req), &size);
	referer(s, ref, sizeof(ref));
	st = status(s);
	if (st == 304 || st >= 500)
		size = st == 304 ? 0 : 150 + below(s, 400);
	fprintf(out, "%u.%u.%u.%u - - [%02d/%s/%d:%02d:%02d:%02d +0000] "
	    "\"%s %s HTTP/%s\" %d %u \"%s\" \"%s\"\n",
	    client < 2500 ? 10 : 203, (client >> 8) & 0xff, client & 0xff,
	    1 + client % 250, tm.tm_mday, months[tm.tm_mon],
	    tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, method(s),
	    req, below(s, 10) < 7 ? "1.1" : "2.0", st, size, ref,
	    agents[skewed(s, NELEM(agents))]);
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: " PROG " [-n lines] [-s seed]\n"
	    "  -n, --lines N   lines to write (default 1000000)\n"
	    "  -s, --seed S    generator seed (default 42)\n");
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "lines", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	/* 10 Oct 2025 00:00:00 UTC: a fixed start, like the seed. */
	int64_t lines = 1000000, seed = 42, ms = 1760054400000LL;
	const char *why;
	uint64_t state;
	int ch;

	while ((ch = getopt_long(argc, argv, "hn:s:", longs, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(stdout);
			return KLOG_EXIT_OK;
		case 'n':
			if (klog_parse_i64(optarg, 0, INT64_MAX, &lines,
			    &why) < 0)
				errx(KLOG_EXIT_USAGE, "-n: %s: %s", optarg, why);
			break;
		case 's':
			if (klog_parse_i64(optarg, 0, INT64_MAX, &seed,
			    &why) < 0)
				errx(KLOG_EXIT_USAGE, "-s: %s: %s", optarg, why);
			break;
		default:
			fprintf(stderr, "Try '" PROG " -h'\n");
			return KLOG_EXIT_USAGE;
		}
	}
	if (optind != argc)
		errx(KLOG_EXIT_USAGE, "%s: unexpected argument (try '" PROG
		    " -h')", argv[optind]);
	state = (uint64_t)seed;
	for (int64_t i = 0; i < lines; i++) {
		ms += below(&state, 8);
		line(&state, ms, stdout);
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		err(KLOG_EXIT_IOERR, "stdout");
	return KLOG_EXIT_OK;
}
