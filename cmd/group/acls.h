/*
 * klog-group acls add|remove|list: a standalone broker's ACL file
 * (aclfile.h), or with -Z a cluster's ACLs in ZooKeeper where Kafka keeps
 * them (cluster/zkacls.h), edited with the flags of Kafka's kafka-acls and
 * listed as it lists them.  klog-group's main offers every option to
 * group_acls_option() (its long options are GROUP_ACLS_LONGOPTS in its
 * table), refuses them to its other commands through group_acls_given(),
 * and hands the acls command to group_acls_main(), with what its own
 * options (-t, -g, -f, -J, -b, -Z) said.
 */
#ifndef KLOG_GROUP_ACLS_H
#define KLOG_GROUP_ACLS_H

#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h"
#include "klog/auth/acl.h"

/* getopt_long()'s values of the options below: above klog-group's own,
 * below cli.h's. */
enum {
	GROUP_OPT_ACLS = 0x810,   /* users.h has 0x800 on */
	GROUP_OPT_ALLOW_PRINCIPAL,
	GROUP_OPT_DENY_PRINCIPAL,
	GROUP_OPT_OPERATION,
	GROUP_OPT_CLUSTER,
	GROUP_OPT_PREFIXED,
	GROUP_OPT_ALLOW_HOST,
	GROUP_OPT_DENY_HOST,
};

#define GROUP_ACLS_LONGOPTS \
	{ "acls", required_argument, NULL, GROUP_OPT_ACLS }, \
	{ "allow-principal", required_argument, NULL, \
	    GROUP_OPT_ALLOW_PRINCIPAL }, \
	{ "deny-principal", required_argument, NULL, \
	    GROUP_OPT_DENY_PRINCIPAL }, \
	{ "operation", required_argument, NULL, GROUP_OPT_OPERATION }, \
	{ "cluster", no_argument, NULL, GROUP_OPT_CLUSTER }, \
	{ "prefixed", no_argument, NULL, GROUP_OPT_PREFIXED }, \
	{ "allow-host", required_argument, NULL, GROUP_OPT_ALLOW_HOST }, \
	{ "deny-host", required_argument, NULL, GROUP_OPT_DENY_HOST }

/* Of each list option: more is a usage error. */
#define GROUP_ACLS_LIST_MAX 64

typedef struct group_acls_list {
	const char *v[GROUP_ACLS_LIST_MAX];
	size_t n;
} group_acls_list_t;

typedef struct group_acls_hosts {
	char v[GROUP_ACLS_LIST_MAX][KLOG_ACL_HOST_MAX + 1];  /* canonical */
	size_t n;
} group_acls_hosts_t;

typedef struct group_acls {
	const char *file;             /* --acls */
	group_acls_list_t allow, deny;
	group_acls_hosts_t allow_hosts, deny_hosts;
	unsigned ops;                 /* a bit per klog_acl_op_t given */
	int cluster, prefixed;
	const char *first;            /* the first of these options given */
} group_acls_t;

/* What klog-group's own options said. */
typedef struct group_acls_ctx {
	char **args;                  /* the words after "acls" */
	int nargs;
	const char *topic, *group;    /* -t, -g */
	int force, json;              /* -f, -J */
	int brokers_given, zk_given;  /* -b, -Z */
	const cli_where_t *where;     /* -Z's connect and --zk-auth-file */
	int timeout_ms;               /* -T, ZooKeeper's connect */
} group_acls_ctx_t;

/* Take option ch with its argument: 1 if it was one of these (a bad value
 * is a usage error), else 0. */
int group_acls_option(group_acls_t *a, int ch, const char *arg);
/* 1 for the options that may be given more than once. */
int group_acls_repeats(int ch);
/* The first of these options given ("--acls"), or NULL. */
const char *group_acls_given(const group_acls_t *a);
/* The command's and the options' lines of klog-group -h. */
void group_acls_usage(FILE *f);

/* Run acls add, remove or list; returns the exit status, after saying
 * why on stderr when it is not 0. */
int group_acls_main(const group_acls_t *a, const group_acls_ctx_t *c);

#endif
