/*
 * The helpers every main shares (cli.h).  The program name is the one piece
 * of state: set once by main before anything can go wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "klog/base/exit.h"
#include "klog/base/parse.h"
#include "klog/client/zkdiscovery.h"
#include "klog/zk/zkacl.h"

static const char *prog = "klog";
static volatile sig_atomic_t stopped;

/*
 * A descriptor 0, 1 or 2 that is closed would be taken by the next open or
 * socket, and stdout's records would go to a broker, stdin would read a
 * socket.  Hold each closed one with /dev/null opened the other way round
 * (stdin write-only, stdout and stderr read-only), so that using it still
 * fails, with EBADF, as the closed descriptor would have.
 */
static void
hold_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int nfd;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		nfd = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
		if (nfd < 0)
			exit(KLOG_EXIT_IOERR);
		/* The lowest free descriptor is fd itself. */
		if (nfd != fd)
			exit(KLOG_EXIT_IOERR);
	}
}

void
cli_init(const char *name)
{
	prog = name;
	hold_std_fds();
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
cli_once(cli_seen_t *s, int ch, const struct option *longopts)
{
	const struct option *lo;

	/* Properties are set one by one, the last setting winning. */
	if (ch < 0 || ch >= CLI_OPT_MAX || ch == 'X' || ch == 'F')
		return;
	for (lo = longopts; lo->name != NULL && lo->val != ch; lo++)
		;
	/* Not an option of the tool (':' or '?'), or one without a value. */
	if (lo->name == NULL || lo->has_arg == no_argument)
		return;
	if (s->seen[ch]) {
		if (ch < 256)
			cli_misuse("-%c given twice", ch);
		cli_misuse("--%s given twice", lo->name);
	}
	s->seen[ch] = 1;
}

void
cli_help(void (*usage)(FILE *))
{
	usage(stdout);
	/* A text longer than the buffer fails in the middle: the error
	 * flag says so even when the final flush has nothing left. */
	exit(fflush(stdout) == EOF || ferror(stdout) ? KLOG_EXIT_IOERR :
	    KLOG_EXIT_OK);
}

void
cli_version(void)
{
	printf("%s " CLI_VERSION "\n", prog);
	exit(fflush(stdout) == EOF || ferror(stdout) ? KLOG_EXIT_IOERR :
	    KLOG_EXIT_OK);
}

static void
on_stop(int sig)
{
	(void)sig;
	stopped = 1;
}

void
cli_catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int
cli_stopped(void)
{
	return stopped;
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

void
cli_where_init(cli_where_t *w)
{
	memset(w, 0, sizeof(*w));
	if ((w->brokers = getenv("KLOG_BROKERS")) == NULL ||
	    *w->brokers == '\0')
		w->brokers = CLI_DEFAULT_BROKERS;
	w->zookeeper = getenv("KLOG_ZOOKEEPER");
	w->zk_session_ms = KLOG_ZK_DEFAULT_SESSION_MS;
	klog_props_init(&w->props);
}

void
cli_where_usage(FILE *f)
{
	fputs(CLI_WHERE_USAGE, f);
}

int
cli_where_option(cli_where_t *w, int ch, const char *arg)
{
	klog_err_t err = { 0 };

	switch (ch) {
	case 'b':
		w->brokers = arg;
		w->brokers_given = 1;
		return 1;
	case 'Z':
		w->zookeeper = arg;
		w->zk_given = 1;
		return 1;
	case CLI_OPT_ZK_SESSION:
		/* A bare number is milliseconds. */
		w->zk_session_ms = (int)cli_duration("--zk-session-timeout",
		    arg, 1, 100, 3600000);
		return 1;
	case CLI_OPT_ZK_AUTH:
		w->zk_auth_file = arg;
		return 1;
	case 'X':
		/* err never holds the value: it may be a password. */
		if (klog_props_set(&w->props, arg, &err) < 0)
			cli_misuse("-X %s", err.msg);
		return 1;
	case 'F':
		if (klog_props_load(&w->props, arg, &err) < 0)
			cli_misuse("-F %s", err.msg);
		return 1;
	default:
		return 0;
	}
}

/* The password from the environment, which ps does not show, when -X
 * and -F gave none; then what connections need. */
static void
where_security(cli_where_t *w)
{
	const char *pw = getenv("KLOG_SASL_PASSWORD");
	klog_err_t err = { 0 };
	int rc;

	if (w->props.password == NULL && pw != NULL &&
	    klog_props_set_kv(&w->props, "sasl.password", pw, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		exit(KLOG_EXIT_FAIL);
	}
	if ((rc = klog_props_security(&w->props, &w->sec, &err)) < 0)
		cli_misuse("%s", klog_err_text(&err, rc));
}

void
cli_where_check(cli_where_t *w)
{
	if (w->brokers_given && w->zk_given)
		cli_misuse("-b and -Z cannot be used together");
	if (w->brokers_given)
		w->zookeeper = NULL;  /* -b wins over $KLOG_ZOOKEEPER */
	if (w->zookeeper != NULL && *w->zookeeper == '\0')
		w->zookeeper = NULL;
	if (w->zk_auth_file != NULL && w->zookeeper == NULL)
		cli_misuse("--zk-auth-file needs -Z");
	where_security(w);
}

void
cli_where_close(cli_where_t *w)
{
	klog_props_free(&w->props);
	w->sec = NULL;
}

int
cli_zk_open(const char *connect, const char *auth_file, int session_ms,
    int connect_timeout_ms, klog_zk_t **zk)
{
	char auth[KLOG_ZKACL_AUTH_SIZE];
	klog_err_t err = { 0 };
	int rc;

	if (auth_file != NULL && (rc = klog_zkacl_auth_load(auth_file, auth,
	    sizeof(auth), &err)) < 0) {
		fprintf(stderr, "%s: --zk-auth-file %s\n", prog,
		    klog_err_text(&err, rc));
		exit(KLOG_EXIT_FAIL);
	}
	rc = klog_zk_open_auth(connect, auth_file != NULL ? auth : NULL,
	    session_ms, connect_timeout_ms, zk, &err);
	explicit_bzero(auth, sizeof(auth));
	if (rc < 0) {
		if (rc == -KLOG_EINVAL)
			cli_misuse("-Z %s", klog_err_text(&err, rc));
		fprintf(stderr, "%s: %s\n", prog, klog_err_text(&err, rc));
	}
	return rc;
}

int
cli_zk_news(klog_discovery_t *d, int quiet)
{
	unsigned seen = 0;
	int changed = klog_zkdiscovery_drain(d, &seen);

	if (!quiet && (seen & 1u << KLOG_ZK_EVENT_DISCONNECTED))
		fprintf(stderr, "%s: zookeeper: connection lost; reconnecting\n",
		    prog);
	if (!quiet && (seen & 1u << KLOG_ZK_EVENT_EXPIRED))
		fprintf(stderr, "%s: zookeeper: session expired; opening a new "
		    "one\n", prog);
	return changed;
}

int
cli_where_open(const cli_where_t *w, int connect_timeout_ms, klog_zk_t **zk,
    klog_discovery_t **d)
{
	klog_err_t err = { 0 };
	int rc;

	if (w->zookeeper == NULL) {
		if (klog_discovery_open_static(w->brokers, connect_timeout_ms,
		    d, &err) < 0)
			cli_misuse("-b %s: %s", w->brokers, err.msg);
		klog_discovery_set_security(*d, w->sec);
		return 0;
	}
	if ((rc = cli_zk_open(w->zookeeper, w->zk_auth_file, w->zk_session_ms,
	    connect_timeout_ms, zk)) < 0)
		return rc == -KLOG_EAUTH ? KLOG_EXIT_NOPERM :
		    KLOG_EXIT_UNAVAILABLE;
	if ((rc = klog_zkdiscovery_open(*zk, d, &err)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, klog_err_text(&err, rc));
		return KLOG_EXIT_FAIL;
	}
	klog_discovery_set_security(*d, w->sec);
	return 0;
}
