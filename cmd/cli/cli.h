/*
 * What every klog main shares: the program name in messages, usage errors,
 * strict option values, --version, -h, the final check of stdout, and for
 * the client tools where the brokers are (-b, -Z).  These print and exit,
 * so they belong to the mains, not to the library.
 *
 * A main calls cli_init("klog-x") first; every message then starts with
 * "klog-x: ".  A usage error is one line plus "Try 'klog-x -h'" on stderr
 * and exit status 64 (exit.h); option values are checked by the parsers of
 * parse.h, and a bad one is a usage error naming the option, the value and
 * the reason: "klog-x: -p foo: invalid".
 */
#ifndef KLOG_CLI_H
#define KLOG_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "klog/client/discovery.h"
#include "klog/client/props.h"
#include "klog/zk/zk.h"

#define CLI_VERSION "0.1.0"

/*
 * Name the program for every message below; prog must outlive the run.
 * Also makes sure descriptors 0, 1 and 2 are open before the main opens
 * anything, so none of its files or sockets becomes stdin or stdout; one
 * that was closed is /dev/null opened for the wrong direction, and the
 * tool's first read or write of it fails with EBADF (exit 74).  Without
 * /dev/null the tool exits 74 at once.
 */
void cli_init(const char *prog);
const char *cli_prog(void);

/* "prog: <fmt...>" and "Try 'prog -h'" on stderr, exit 64. */
void cli_misuse(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/*
 * The usage error for what getopt_long() returned in ch (':' for a missing
 * argument, anything else for an unknown option; opterr must be 0 and
 * optstring start with ':'): "-x: unknown option", "--bogus: unknown
 * option", "-n: option needs an argument".
 */
void cli_option_error(int ch, char **argv) __attribute__((noreturn));

/*
 * Option values, or a usage error "prog: OPT S: why": a decimal in
 * [min, max], a size (K, M, G, T suffixes), a duration in ms (a bare
 * number counted in unit ms: 1 for milliseconds, 1000 for seconds).
 */
int64_t cli_number(const char *opt, const char *s, int64_t min, int64_t max);
int64_t cli_size(const char *opt, const char *s, int64_t min, int64_t max);
int64_t cli_duration(const char *opt, const char *s, int64_t unit,
    int64_t min, int64_t max);

/* -h: usage(stdout), then exit 0, or 74 if stdout could not take it. */
void cli_help(void (*usage)(FILE *)) __attribute__((noreturn));
/* --version: "prog 0.1.0" on stdout, then exit as cli_help(). */
void cli_version(void) __attribute__((noreturn));

/*
 * Catch SIGINT, SIGTERM and SIGHUP once: the first one makes cli_stopped()
 * true, for the main to end its run cleanly (drain, commit, save); the
 * second one kills, since the handler resets itself.  A hangup (the
 * terminal or ssh session gone) is a stop like ^C, so a consumer still
 * commits and saves what it wrote.
 */
void cli_catch_stop(void);
int cli_stopped(void);

/*
 * At the end of a run: flush stdout and check that every write to it
 * worked.  Returns 0, or says "prog: stdout: <reason>" and returns 74.
 */
int cli_stdout_check(void);
/* Say "prog: stdout: <strerror(errnum)>", for a main that writes stdout
 * by itself and kept the errno of its first failure. */
void cli_stdout_error(int errnum);

/*
 * Where a client tool finds its brokers: -b/--broker HOST:PORT[,...]
 * (default $KLOG_BROKERS, else CLI_DEFAULT_BROKERS), or -Z/--zookeeper
 * CONNECT (default $KLOG_ZOOKEEPER, unless -b is given) with
 * --zk-session-timeout and --zk-auth-file (ZooKeeper's digest identity,
 * zkacl.h); and how to speak to the brokers: librdkafka's security
 * properties (props.h) from -X/--property KEY=VALUE and
 * -F/--property-file FILE, as kcat takes them, in the order given, the
 * SASL password from $KLOG_SASL_PASSWORD when neither set one.  A main
 * calls cli_where_init() before its getopt
 * loop, offers every option to cli_where_option() first, and calls
 * cli_where_check() once after the loop, where its other conflicts are
 * checked.  A tool takes only the options its optstring and longopts name
 * (klog-group: -Z alone).
 */
#define CLI_DEFAULT_BROKERS "127.0.0.1:9092"
/* getopt_long()'s value for --zk-session-timeout: above every main's own
 * long-only options, which count up from 256. */
#define CLI_OPT_ZK_SESSION 0x1000
#define CLI_OPT_ZK_AUTH (CLI_OPT_ZK_SESSION + 1)

/*
 * An option that takes one value, given twice, is a usage error naming it
 * ("-t given twice"), never a silent "the last one wins".  A main keeps a
 * zeroed cli_seen_t through its getopt_long() loop and offers it every
 * option it returns, except those the main takes as a list (klog-consume
 * -p, klog-serve --topic, klog-retain -t; -X and -F, skipped here).  Options without a value (-v,
 * -J) may repeat: saying a thing twice changes nothing.  longopts names
 * the long-only ones ("--batch given twice").
 */
#define CLI_OPT_MAX (CLI_OPT_ZK_AUTH + 1)
typedef struct cli_seen {
	unsigned char seen[CLI_OPT_MAX];
} cli_seen_t;
struct option;
void cli_once(cli_seen_t *s, int ch, const struct option *longopts);

typedef struct cli_where {
	klog_props_t props;        /* -X, -F */
	const klog_client_sec_t *sec;  /* after cli_where_check(): NULL for
	                              plaintext without SASL */
	const char *brokers;
	const char *zookeeper;     /* after cli_where_check(): NULL unless
	                              cluster mode */
	int zk_session_ms;
	const char *zk_auth_file;  /* --zk-auth-file, or NULL */
	int brokers_given;
	int zk_given;
} cli_where_t;

void cli_where_init(cli_where_t *w);
/* The help text of --zk-auth-file, -X and -F, in klog-produce's and
 * klog-consume's columns. */
#define CLI_WHERE_USAGE \
	"      --zk-auth-file FILE  ZooKeeper digest identity: one line " \
	"user:password\n" \
	"  -X, --property KEY=VALUE  a security property, librdkafka's " \
	"name, as kcat -X:\n" \
	"                         security.protocol, ssl.ca.location, " \
	"sasl.mechanism, ...\n" \
	"                         (klog-security(7)); a password given " \
	"so shows in ps\n" \
	"  -F, --property-file FILE  KEY=VALUE lines of those (kcat -F); " \
	"the password may\n" \
	"                         also come from $KLOG_SASL_PASSWORD\n"
void cli_where_usage(FILE *f);
/* Take option ch of getopt_long() with its argument: 1 if it was one of
 * these (a bad value is a usage error), 0 if it is the main's. */
int cli_where_option(cli_where_t *w, int ch, const char *arg);
/* -b and -Z together is a usage error; -b wins over $KLOG_ZOOKEEPER; an
 * empty -Z is none; --zk-auth-file without ZooKeeper is a usage error.
 * The security properties are checked and their files read (a missing or
 * bad one is a usage error naming it). */
void cli_where_check(cli_where_t *w);
/* Free what w holds (the password wiped). */
void cli_where_close(cli_where_t *w);

/*
 * Open what w names: the -b list when w->zookeeper is NULL (*zk stays
 * NULL), else a ZooKeeper session and the discovery over it; the
 * discovery's brokers are spoken to as w->sec says.  Returns 0,
 * or an exit status after saying why; a malformed -b or -Z is a usage
 * error.
 */
int cli_where_open(const cli_where_t *w, int connect_timeout_ms,
    klog_zk_t **zk, klog_discovery_t **d);

/*
 * Cluster mode: take the news of d's ZooKeeper session
 * (klog_zkdiscovery_drain()), which the tool must do whenever the session's
 * event fd is readable, or an expired session is never replaced.  Unless
 * quiet, says "prog: zookeeper: connection lost; reconnecting" and
 * "prog: zookeeper: session expired; opening a new one".  1 if the
 * discovery's answers may have changed: the caller asks again.
 */
int cli_zk_news(klog_discovery_t *d, int quiet);

/*
 * A ZooKeeper session for -Z connect, with the digest identity of
 * auth_file (--zk-auth-file; NULL: none): 0, or the error code after
 * saying why ("prog: zookeeper ...: not connected in time"); a malformed
 * connect string is a usage error, an auth_file that cannot be read, that
 * others may read or that is not one line user:password ends the tool
 * with status 1.  The caller picks the exit status (klog_exit_for():
 * -KLOG_EAUTH, a refused identity, is 77).
 */
int cli_zk_open(const char *connect, const char *auth_file, int session_ms,
    int connect_timeout_ms, klog_zk_t **zk);

#endif
