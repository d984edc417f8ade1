/*
 * The helpers every main shares (cli.h).  The program name is the one piece
 * of state: set once by main before anything can go wrong.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "klog/exit.h"
#include "klog/parse.h"
#include "klog/zkdiscovery.h"

static const char *prog = "klog";

void
cli_init(const char *name)
{
	prog = name;
}

const char *
cli_prog(void)
{
	return prog;
}

void
cli_misuse(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s -h'\n", prog);
	exit(KLOG_EXIT_USAGE);
}

void
cli_option_error(int ch, char **argv)
{
	if (ch == ':')
		cli_misuse("%s: option needs an argument", argv[optind - 1]);
	/* optopt is the letter of an unknown short option, 0 for a long one
	 * (whose text is the whole argument). */
	if (optopt != 0)
		cli_misuse("-%c: unknown option", optopt);
	cli_misuse("%s: unknown option", argv[optind - 1]);
}

int64_t
cli_number(const char *opt, const char *s, int64_t min, int64_t max)
{
	const char *why;
	int64_t v;

	if (klog_parse_i64(s, min, max, &v, &why) < 0)
		cli_misuse("%s %s: %s", opt, s, why);
	return v;
}

int64_t
cli_size(const char *opt, const char *s, int64_t min, int64_t max)
{
	const char *why;
	int64_t v;

	if (klog_parse_size(s, min, max, &v, &why) < 0)
		cli_misuse("%s %s: %s", opt, s, why);
	return v;
}

int64_t
cli_duration(const char *opt, const char *s, int64_t unit, int64_t min,
    int64_t max)
{
	const char *why;
	int64_t v;

	if (klog_parse_duration_ms(s, unit, min, max, &v, &why) < 0)
		cli_misuse("%s %s: %s", opt, s, why);
	return v;
}

void
cli_help(void (*usage)(FILE *))
{
	usage(stdout);
	exit(fflush(stdout) == EOF ? KLOG_EXIT_IOERR : KLOG_EXIT_OK);
}

void
cli_version(void)
{
	printf("%s " CLI_VERSION "\n", prog);
	exit(fflush(stdout) == EOF ? KLOG_EXIT_IOERR : KLOG_EXIT_OK);
}

int
cli_stdout_check(void)
{
	if (fflush(stdout) != EOF && !ferror(stdout))
		return 0;
	cli_stdout_error(errno ? errno : EIO);
	return KLOG_EXIT_IOERR;
}

void
cli_stdout_error(int errnum)
{
	fprintf(stderr, "%s: stdout: %s\n", prog, strerror(errnum));
}

int
cli_open_discovery(const char *brokers, const char *zookeeper,
    int zk_session_ms, int connect_timeout_ms, klog_zk_t **zk,
    klog_discovery_t **d)
{
	klog_err_t err = { 0 };
	int rc;

	if (zookeeper == NULL) {
		if (klog_discovery_open_static(brokers, connect_timeout_ms, d,
		    &err) < 0)
			cli_misuse("-b %s: %s", brokers, err.msg);
		return 0;
	}
	if ((rc = klog_zk_open(zookeeper, zk_session_ms, connect_timeout_ms,
	    zk, &err)) < 0) {
		if (rc == -KLOG_EINVAL)
			cli_misuse("-Z %s", err.msg);
		fprintf(stderr, "%s: %s\n", cli_prog(), klog_err_text(&err, rc));
		return KLOG_EXIT_UNAVAILABLE;
	}
	if ((rc = klog_zkdiscovery_open(*zk, d, &err)) < 0) {
		fprintf(stderr, "%s: %s\n", cli_prog(), klog_err_text(&err, rc));
		return KLOG_EXIT_FAIL;
	}
	return 0;
}
