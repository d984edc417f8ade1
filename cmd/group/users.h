/*
 * klog-group users: the SCRAM users of a standalone broker's --users FILE
 * (lib/auth/users.c), or with -Z those of a cluster in ZooKeeper, where
 * Kafka keeps them (lib/zk/zkusers.c, /config/users): add a user (or
 * replace its credentials), remove one, list them.  The options are klog-group's: its getopt loop offers
 * each to users_option(), and its checks hand the users command to
 * users_check().  The password is the first line of stdin or of
 * --password-file, never an argument: argv is in ps(1) and in shell
 * histories.
 */
#ifndef KLOG_GROUP_USERS_H
#define KLOG_GROUP_USERS_H

#include <stdio.h>

#include "cli/table.h"
#include "klog/base/error.h"
#include "klog/zk/zk.h"

/* getopt_long()'s values for the users options: above klog-group's own
 * long options, below CLI_OPT_ZK_SESSION. */
enum {
	USERS_OPT_FILE = 0x800,
	USERS_OPT_MECHANISM,
	USERS_OPT_ITERATIONS,
	USERS_OPT_PASSWORD_FILE,
	/* --password, refused: by its own name, so that getopt_long() does
	 * not take it for --password-file cut short and the password for a
	 * file name, to be shown in an error. */
	USERS_OPT_PASSWORD,
};

typedef struct users_opts {
	const char *file;           /* --users */
	const char *password_file;  /* --password-file */
	unsigned mechs;             /* --mechanism, a set (users.h) */
	int iterations;             /* --iterations */
	unsigned have;              /* which were given, by USERS_OPT_* */
} users_opts_t;

void users_init(users_opts_t *u);

/* Take option ch with its argument: 1 if it was one of the above (a bad
 * value is a usage error), 0 if it is klog-group's. */
int users_option(users_opts_t *u, int ch, const char *arg);

/* The name of a users option given, for "list does not take --users";
 * NULL when none was. */
const char *users_given(const users_opts_t *u);

/* The users command's lines and options in -h. */
void users_usage(FILE *f);

/*
 * Check "users ACTION [NAME]" (args: what follows "users") against the
 * options and where klog-group was pointed (-b, -Z, and whether
 * --zk-auth-file was given): every misuse is a usage error, -Z without
 * --zk-auth-file among them (the nodes would be made open to all).
 */
void users_check(const users_opts_t *u, char **args, int nargs,
    int brokers_given, int zk_given, int zk_auth);

/* Do it, on zk's /config/users when zk is not NULL, else on --users FILE,
 * with rows of USER, MECHANISM and ITERATIONS on tab (what is there after
 * an add, what went with a remove, what a list finds).  0, or the error
 * code with err set. */
int users_run(const users_opts_t *u, klog_zk_t *zk, char **args, int nargs,
    cli_table_t *tab, klog_err_t *err);

#endif
