/*
 * What every klog main shares: the program name in messages, usage errors,
 * strict option values, --version, -h, and the final check of stdout.
 * These print and exit, so they belong to the mains, not to the library.
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

#include "klog/discovery.h"
#include "klog/zk.h"

#define CLI_VERSION "0.1.0"

/* Name the program for every message below; prog must outlive the run. */
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
 * At the end of a run: flush stdout and check that every write to it
 * worked.  Returns 0, or says "prog: stdout: <reason>" and returns 74.
 */
int cli_stdout_check(void);
/* Say "prog: stdout: <strerror(errnum)>", for a main that writes stdout
 * by itself and kept the errno of its first failure. */
void cli_stdout_error(int errnum);

/*
 * Where a client tool finds its brokers: the -b list when zookeeper is
 * NULL (*zk stays NULL), else a ZooKeeper session and the discovery over
 * it.  Returns 0, or an exit status after saying why; a malformed -b or -Z
 * is a usage error.
 */
int cli_open_discovery(const char *brokers, const char *zookeeper,
    int zk_session_ms, int connect_timeout_ms, klog_zk_t **zk,
    klog_discovery_t **d);

#endif
