/*
 * klog-group acls add|remove|list: see acls.h and klog-group(1).  Every
 * ACL a command line stands for is checked before the file or ZooKeeper is
 * touched, so a mistake in the middle changes nothing.  In ZooKeeper each
 * resource's node is edited on its own (Kafka keeps one per resource
 * pattern): an add over -t and -g that fails on the second leaves the
 * first done, and says so.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/table.h"
#include "group/acls.h"
#include "klog/auth/aclfile.h"
#include "klog/base/exit.h"
#include "klog/cluster/zkacls.h"
#include "klog/storage/names.h"
#include "klog/zk/layout.h"

/* The options' names, by their getopt_long() value. */
static const char *const opt_names[] = {
	"--acls", "--allow-principal", "--deny-principal", "--operation",
	"--cluster", "--prefixed", "--allow-host", "--deny-host",
};

/* A resource of the command line: -t, -g or --cluster. */
typedef struct resource {
	klog_acl_res_t res;
	klog_acl_pattern_t pattern;
	const char *name;
} resource_t;

#define RESOURCES_MAX 3

/* Each ACL (for add) or filter (for remove) the command line stands for,
 * handed to fn in turn. */
typedef struct walk {
	const group_acls_t *a;
	const resource_t *rs;
	size_t nrs;
	const char *host;       /* without --*-host: "*" (add), NULL (any) */
	int (*fn)(const klog_acl_filter_t *f, void *arg);
	void *arg;
} walk_t;

static void
list_add(group_acls_list_t *l, const char *opt, const char *v)
{
	if (l->n == GROUP_ACLS_LIST_MAX)
		cli_misuse("%s: more than %d", opt, GROUP_ACLS_LIST_MAX);
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], v) == 0)
			return;   /* said twice: once */
	l->v[l->n++] = v;
}

static void
principal_add(group_acls_list_t *l, const char *opt, const char *p)
{
	klog_err_t err;

	if (klog_acl_principal_validate(p, &err) < 0)
		cli_misuse("%s: %s", opt, err.msg);
	list_add(l, opt, p);
}

static void
host_add(group_acls_hosts_t *h, const char *opt, const char *s)
{
	char host[KLOG_ACL_HOST_MAX + 1];
	klog_err_t err;

	if (klog_acl_host_parse(s, host, &err) < 0)
		cli_misuse("%s: %s", opt, err.msg);
	if (h->n == GROUP_ACLS_LIST_MAX)
		cli_misuse("%s: more than %d", opt, GROUP_ACLS_LIST_MAX);
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->v[i], host) == 0)
			return;
	memcpy(h->v[h->n++], host, sizeof(host));
}

int
group_acls_option(group_acls_t *a, int ch, const char *arg)
{
	klog_acl_op_t op;
	klog_err_t err;

	if (ch < GROUP_OPT_ACLS || ch > GROUP_OPT_DENY_HOST)
		return 0;
	if (a->first == NULL)
		a->first = opt_names[ch - GROUP_OPT_ACLS];
	switch (ch) {
	case GROUP_OPT_ACLS:
		if (arg[0] == '\0')
			cli_misuse("--acls: an empty file name");
		a->file = arg;
		break;
	case GROUP_OPT_ALLOW_PRINCIPAL:
		principal_add(&a->allow, "--allow-principal", arg);
		break;
	case GROUP_OPT_DENY_PRINCIPAL:
		principal_add(&a->deny, "--deny-principal", arg);
		break;
	case GROUP_OPT_OPERATION:
		if (klog_acl_op_parse(arg, &op, &err) < 0)
			cli_misuse("--operation: %s", err.msg);
		a->ops |= 1u << op;
		break;
	case GROUP_OPT_CLUSTER:
		a->cluster = 1;
		break;
	case GROUP_OPT_PREFIXED:
		a->prefixed = 1;
		break;
	case GROUP_OPT_ALLOW_HOST:
		host_add(&a->allow_hosts, "--allow-host", arg);
		break;
	default:
		host_add(&a->deny_hosts, "--deny-host", arg);
		break;
	}
	return 1;
}

int
group_acls_repeats(int ch)
{
	return ch == GROUP_OPT_ALLOW_PRINCIPAL ||
	    ch == GROUP_OPT_DENY_PRINCIPAL || ch == GROUP_OPT_OPERATION ||
	    ch == GROUP_OPT_ALLOW_HOST || ch == GROUP_OPT_DENY_HOST;
}

const char *
group_acls_given(const group_acls_t *a)
{
	return a->first;
}

void
group_acls_usage(FILE *f)
{
	fprintf(f,
	    "  with --acls FILE a standalone broker's ACLs, with -Z a "
	    "cluster's (kafka-acls):\n"
	    "  acls add (--allow-principal P | --deny-principal P)... "
	    "--operation OP...\n"
	    "        (-t topic | -g group | --cluster)... [--prefixed]\n"
	    "        [--allow-host IP]... [--deny-host IP]...\n"
	    "                              add ACLs (those there already "
	    "stay)\n"
	    "  acls remove (-t topic | -g group | --cluster)... "
	    "[--prefixed]\n"
	    "        [--allow-principal P | --deny-principal P]... "
	    "[--operation OP]...\n"
	    "        [--allow-host IP]... [--deny-host IP]... [-f]\n"
	    "                              remove the ACLs that match (all "
	    "of a resource: -f)\n"
	    "  acls list [-t topic | -g group | --cluster]... [--prefixed]\n"
	    "                              the ACLs, as kafka-acls --list "
	    "prints them\n"
	    "      --acls FILE          the ACL file (or -Z: add and remove "
	    "need --zk-auth-file)\n"
	    "      --allow-principal P  User:NAME allowed (User:* is "
	    "everyone)\n"
	    "      --deny-principal P   User:NAME denied\n"
	    "      --operation OP       Read, Write, Create, Delete, Alter, "
	    "Describe,\n"
	    "                           ClusterAction, DescribeConfigs or "
	    "All\n"
	    "      --cluster            the cluster (kafka-cluster)\n"
	    "      --prefixed           -t and -g name the start of names\n"
	    "      --allow-host IP      the allowed principals' address "
	    "(default: any)\n"
	    "      --deny-host IP       the denied principals' address "
	    "(default: any)\n");
}

/* ---- the command line's ACLs ---- */

/* A name of -t or -g: a topic or group name as klog takes them, "*"
 * (every one), or with --prefixed the start of such names. */
static void
check_name(const char *opt, const char *name, int prefixed, int topic)
{
	klog_err_t err;

	if (strcmp(name, KLOG_ACL_WILDCARD) == 0) {
		if (prefixed)
			cli_misuse("%s *: every name is the literal *, "
			    "without --prefixed", opt);
		return;
	}
	if (prefixed) {
		if (name[0] == '\0' || strlen(name) > KLOG_TOPIC_MAX)
			cli_misuse("%s %s: a prefix is 1 to %d bytes", opt,
			    name, KLOG_TOPIC_MAX);
		for (const char *p = name; *p != '\0'; p++)
			if (!klog_names_topic_char((unsigned char)*p))
				cli_misuse("%s: a prefix: byte 0x%02x not "
				    "allowed (only A-Z a-z 0-9 . _ -)", opt,
				    (unsigned char)*p);
		return;
	}
	if ((topic ? klog_topic_validate(name, &err) :
	    klog_layout_group_validate(name, &err)) < 0)
		cli_misuse("%s", err.msg);
}

/* The resources of -t, -g and --cluster, into rs; how many. */
static size_t
resources(const group_acls_t *a, const group_acls_ctx_t *c, resource_t *rs)
{
	klog_acl_pattern_t pat = a->prefixed ? KLOG_ACL_PREFIXED :
	    KLOG_ACL_LITERAL;
	size_t n = 0;

	/* The cluster stays literal, as in kafka-acls. */
	if (a->prefixed && c->topic == NULL && c->group == NULL)
		cli_misuse("--prefixed needs -t or -g");
	if (c->topic != NULL) {
		check_name("-t", c->topic, a->prefixed, 1);
		rs[n++] = (resource_t){ KLOG_ACL_TOPIC, pat, c->topic };
	}
	if (c->group != NULL) {
		check_name("-g", c->group, a->prefixed, 0);
		rs[n++] = (resource_t){ KLOG_ACL_GROUP, pat, c->group };
	}
	if (a->cluster)
		rs[n++] = (resource_t){ KLOG_ACL_CLUSTER, KLOG_ACL_LITERAL,
		    KLOG_ACL_CLUSTER_NAME };
	return n;
}

/* One side (allow or deny) of the principals, each with each host and
 * each operation (or any operation, when none is given). */
static int
walk_side(const walk_t *w, klog_acl_filter_t *f, const group_acls_list_t *who,
    const group_acls_hosts_t *hosts)
{
	size_t nhosts = hosts->n > 0 ? hosts->n : 1;
	int rc;

	for (size_t p = 0; p < who->n; p++)
		for (size_t h = 0; h < nhosts; h++)
			for (int op = -1; op < KLOG_ACL_OP_COUNT; op++) {
				if (op < 0 ? w->a->ops != 0 :
				    !(w->a->ops & (1u << op)))
					continue;
				f->principal = who->v[p];
				f->host = hosts->n > 0 ? hosts->v[h] : w->host;
				f->op = op;
				if ((rc = w->fn(f, w->arg)) < 0)
					return rc;
			}
	return 0;
}

static int
walk(const walk_t *w)
{
	static const group_acls_list_t anyone = { { NULL }, 1 };
	static const group_acls_hosts_t nohosts = { .n = 0 };
	klog_acl_filter_t f;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < w->nrs; i++) {
		klog_acl_filter_any(&f);
		f.res = (int)w->rs[i].res;
		f.pattern = (int)w->rs[i].pattern;
		f.name = w->rs[i].name;
		/* remove -f without a principal: whoever the ACL is for. */
		if (w->a->allow.n == 0 && w->a->deny.n == 0) {
			rc = walk_side(w, &f, &anyone, &nohosts);
			continue;
		}
		f.perm = KLOG_ACL_ALLOW;
		rc = walk_side(w, &f, &w->a->allow, &w->a->allow_hosts);
		f.perm = KLOG_ACL_DENY;
		if (rc == 0)
			rc = walk_side(w, &f, &w->a->deny, &w->a->deny_hosts);
	}
	return rc;
}

/* A filter of add's, whose every field is given, as an ACL. */
static void
to_acl(const klog_acl_filter_t *f, klog_acl_t *a)
{
	memset(a, 0, sizeof(*a));
	a->perm = (klog_acl_perm_t)f->perm;
	a->op = (klog_acl_op_t)f->op;
	a->res = (klog_acl_res_t)f->res;
	a->pattern = (klog_acl_pattern_t)f->pattern;
	snprintf(a->name, sizeof(a->name), "%s", f->name);
	snprintf(a->host, sizeof(a->host), "%s", f->host);
	snprintf(a->principal, sizeof(a->principal), "%s", f->principal);
}

static int
check_one(const klog_acl_filter_t *f, void *arg)
{
	klog_acl_t a;
	klog_err_t err;

	(void)arg;
	to_acl(f, &a);
	if (klog_acl_validate(&a, &err) < 0)
		cli_misuse("acls add: %s", err.msg);
	return 0;
}

struct adding {
	klog_acl_set_t *set;
	klog_err_t *err;
};

static int
add_one(const klog_acl_filter_t *f, void *arg)
{
	struct adding *ad = arg;
	klog_acl_t a;
	int rc;

	to_acl(f, &a);
	rc = klog_acl_add(ad->set, &a, ad->err);
	return rc == -KLOG_EEXIST ? 0 : rc;   /* there already: it stays */
}

struct removing {
	klog_acl_set_t *set;
	size_t n;
};

static int
remove_one(const klog_acl_filter_t *f, void *arg)
{
	struct removing *rm = arg;
	size_t n;

	klog_acl_remove(rm->set, f, &n);
	rm->n += n;
	return 0;
}

/* ---- the commands ---- */

static int
fail(int rc, const klog_err_t *err)
{
	fprintf(stderr, "%s: %s\n", cli_prog(), klog_err_text(err, rc));
	return klog_exit_for(rc);
}

/* What add and remove need and refuse, beside their resources. */
static void
check_edit(const char *verb, const group_acls_t *a, const group_acls_ctx_t *c,
    size_t nrs)
{
	int add = strcmp(verb, "add") == 0;

	if (nrs == 0)
		cli_misuse("acls %s needs -t, -g or --cluster", verb);
	if (a->allow_hosts.n > 0 && a->allow.n == 0)
		cli_misuse("--allow-host needs --allow-principal");
	if (a->deny_hosts.n > 0 && a->deny.n == 0)
		cli_misuse("--deny-host needs --deny-principal");
	if (add && a->allow.n == 0 && a->deny.n == 0)
		cli_misuse("acls add needs --allow-principal or "
		    "--deny-principal");
	if (add && a->ops == 0)
		cli_misuse("acls add needs --operation");
	if (add && c->force)
		cli_misuse("acls add does not take -f");
	if (!add && a->allow.n == 0 && a->deny.n == 0 && !c->force)
		cli_misuse("acls remove without --allow-principal or "
		    "--deny-principal removes every ACL of the resource: "
		    "give -f");
}

/* add and remove: the file locked, loaded, changed and saved. */
static int
edit_file(int add, const group_acls_t *a, walk_t *w, klog_err_t *err)
{
	struct removing rm = { NULL, 0 };
	struct adding ad;
	klog_aclfile_t *f;
	klog_acl_set_t *set;
	int rc;

	if ((rc = klog_aclfile_open(a->file, add, &f, &set, err)) < 0)
		goto out;
	ad = (struct adding){ set, err };
	rm.set = set;
	w->fn = add ? add_one : remove_one;
	w->arg = add ? (void *)&ad : (void *)&rm;
	if ((rc = walk(w)) < 0)
		goto out;
	if (!add && rm.n == 0) {
		rc = klog_err_set(err, -KLOG_ENOENT, "acls remove: no ACL "
		    "matches; nothing removed");
		goto out;
	}
	rc = klog_aclfile_save(f, err);
out:
	klog_aclfile_close(f);
	return rc;
}

/* One resource's node in ZooKeeper, as an edit's try sees it: the count
 * is of this try, the one written when the edit ends. */
struct zkedit {
	walk_t w;                     /* over this resource alone */
	klog_zkacls_node_t *node;
	klog_err_t *err;
	size_t n;
};

static int
zk_add_one(const klog_acl_filter_t *f, void *arg)
{
	struct zkedit *ze = arg;
	klog_acl_t acl;
	int rc;

	to_acl(f, &acl);
	if ((rc = klog_zkacls_node_add(ze->node, &acl, ze->err)) > 0)
		ze->n++;
	return rc < 0 ? rc : 0;
}

static int
zk_remove_one(const klog_acl_filter_t *f, void *arg)
{
	struct zkedit *ze = arg;

	ze->n += klog_zkacls_node_remove(ze->node, f);
	return 0;
}

static int
zk_edit_node(klog_zkacls_node_t *node, void *arg, klog_err_t *err)
{
	struct zkedit *ze = arg;
	int rc;

	ze->node = node;
	ze->err = err;
	ze->n = 0;
	if ((rc = walk(&ze->w)) < 0)
		return rc;
	return ze->n > 0;   /* nothing changed: nothing written */
}

/* add and remove in ZooKeeper: each resource's node read, changed and
 * written at the version read. */
static int
edit_zk(int add, klog_zk_t *zk, const walk_t *w, klog_err_t *err)
{
	struct zkedit ze;
	size_t total = 0;
	int rc;

	for (size_t i = 0; i < w->nrs; i++) {
		ze = (struct zkedit){ .w = *w };
		ze.w.rs = &w->rs[i];
		ze.w.nrs = 1;
		ze.w.fn = add ? zk_add_one : zk_remove_one;
		ze.w.arg = &ze;
		if ((rc = klog_zkacls_edit(zk, w->rs[i].res, w->rs[i].pattern,
		    w->rs[i].name, zk_edit_node, &ze, err)) < 0) {
			/* Said before the error, which main prints. */
			for (size_t j = 0; j < i; j++)
				fprintf(stderr, "%s: acls %s: %s %s: done\n",
				    cli_prog(), add ? "add" : "remove",
				    klog_acl_res_name(w->rs[j].res),
				    w->rs[j].name);
			return rc;
		}
		total += ze.n;
	}
	if (!add && total == 0)
		return klog_err_set(err, -KLOG_ENOENT, "acls remove: no ACL "
		    "matches; nothing removed");
	return 0;
}

static int
edit(const char *verb, const group_acls_t *a, klog_zk_t *zk,
    const resource_t *rs, size_t nrs)
{
	int add = strcmp(verb, "add") == 0;
	walk_t w = { .a = a, .rs = rs, .nrs = nrs, .fn = check_one };
	klog_err_t err = { 0, "" };
	int rc;

	if (add) {
		w.host = KLOG_ACL_WILDCARD;
		(void)walk(&w);   /* a bad one is a usage error */
	}
	rc = zk != NULL ? edit_zk(add, zk, &w, &err) :
	    edit_file(add, a, &w, &err);
	return rc < 0 ? fail(rc, &err) : KLOG_EXIT_OK;
}

/* One ACL as kafka-acls --list prints it, under its resource's line when
 * it is the first of its resource. */
static void
print_kafka(const klog_acl_t *acl, const klog_acl_t *prev)
{
	if (prev == NULL || prev->res != acl->res ||
	    prev->pattern != acl->pattern || strcmp(prev->name, acl->name)) {
		if (prev != NULL)
			putchar('\n');
		printf("Current ACLs for resource `ResourcePattern("
		    "resourceType=%s, name=%s, patternType=%s)`:\n",
		    klog_acl_res_name(acl->res), acl->name,
		    klog_acl_pattern_name(acl->pattern));
	}
	printf("\t(principal=%s, host=%s, operation=%s, "
	    "permissionType=%s)\n", acl->principal, acl->host,
	    klog_acl_op_name(acl->op), klog_acl_perm_name(acl->perm));
}

static void
print_json(cli_table_t *tab, const klog_acl_t *acl)
{
	cli_col_t c[7];

	c[0] = cli_col_str("", "resource_type", klog_acl_res_name(acl->res));
	c[1] = cli_col_str("", "name", acl->name);
	c[2] = cli_col_str("", "pattern_type",
	    klog_acl_pattern_name(acl->pattern));
	c[3] = cli_col_str("", "principal", acl->principal);
	c[4] = cli_col_str("", "host", acl->host);
	c[5] = cli_col_str("", "operation", klog_acl_op_name(acl->op));
	c[6] = cli_col_str("", "permission_type",
	    klog_acl_perm_name(acl->perm));
	cli_table_row(tab, c, 7);
}

/* Whether acl is of one of the resources asked for (all, if none). */
static int
asked(const klog_acl_t *acl, const resource_t *rs, size_t nrs)
{
	for (size_t i = 0; i < nrs; i++)
		if (acl->res == rs[i].res && acl->pattern == rs[i].pattern &&
		    strcmp(acl->name, rs[i].name) == 0)
			return 1;
	return nrs == 0;
}

static int
list(const group_acls_t *a, const group_acls_ctx_t *c, klog_zk_t *zk,
    const resource_t *rs, size_t nrs)
{
	const klog_acl_t *acl, *prev = NULL;
	klog_err_t err = { 0, "" };
	klog_acl_set_t *set;
	cli_table_t tab;
	int rc;

	if (klog_acl_set_new(&set) < 0)
		return fail(-KLOG_ENOMEM, NULL);
	/* In ZooKeeper, entries klog has no word for are not shown. */
	if ((rc = zk != NULL ? klog_zkacls_load(zk, 0, set, NULL, &err) :
	    klog_aclfile_load(a->file, set, &err)) < 0) {
		klog_acl_set_free(set);
		return fail(rc, &err);
	}
	cli_table_init(&tab, 0, 1);
	for (size_t i = 0; i < klog_acl_count(set); i++) {
		acl = klog_acl_get(set, i);
		if (!asked(acl, rs, nrs))
			continue;
		if (c->json)
			print_json(&tab, acl);
		else
			print_kafka(acl, prev);
		prev = acl;
	}
	if (prev != NULL && !c->json)
		putchar('\n');
	rc = tab.line.failed ? fail(-KLOG_ENOMEM, NULL) : KLOG_EXIT_OK;
	cli_table_free(&tab);
	klog_acl_set_free(set);
	return rc;
}

/* The file or ZooKeeper, and what each needs. */
static void
check_where(const char *verb, const group_acls_t *a,
    const group_acls_ctx_t *c)
{
	if (c->zk_given && a->file != NULL)
		cli_misuse("acls -Z keeps the ACLs in ZooKeeper: --acls FILE "
		    "is a standalone broker's");
	if (!c->zk_given && a->file == NULL)
		cli_misuse("acls needs --acls FILE or -Z");
	if (!c->zk_given && c->where->zk_auth_file != NULL)
		cli_misuse("acls --acls FILE does not take --zk-auth-file");
	/* Without an identity the nodes would be made open to all. */
	if (c->zk_given && strcmp(verb, "list") != 0 &&
	    c->where->zk_auth_file == NULL)
		cli_misuse("acls %s -Z needs --zk-auth-file: the ACL nodes are "
		    "made writable by that identity alone", verb);
}

int
group_acls_main(const group_acls_t *a, const group_acls_ctx_t *c)
{
	resource_t rs[RESOURCES_MAX];
	klog_zk_t *zk = NULL;
	const char *verb;
	int rc, status;
	size_t nrs;

	if (c->nargs == 0)
		cli_misuse("acls needs add, remove or list");
	if (c->nargs > 1)
		cli_misuse("%s: unexpected argument", c->args[1]);
	verb = c->args[0];
	if (strcmp(verb, "add") != 0 && strcmp(verb, "remove") != 0 &&
	    strcmp(verb, "list") != 0)
		cli_misuse("acls %s: unknown; want add, remove or list", verb);
	if (c->brokers_given)
		cli_misuse("acls edits a file (--acls FILE) or ZooKeeper (-Z), "
		    "not a broker (-b)");
	if (strcmp(verb, "list") == 0 && (a->allow.n > 0 || a->deny.n > 0 ||
	    a->ops != 0 || a->allow_hosts.n > 0 || a->deny_hosts.n > 0 ||
	    c->force))
		cli_misuse("acls list takes only --acls or -Z, -t, -g, "
		    "--cluster, --prefixed and -J");
	check_where(verb, a, c);
	nrs = resources(a, c, rs);
	if (strcmp(verb, "list") != 0)
		check_edit(verb, a, c, nrs);
	if (!c->zk_given)
		return strcmp(verb, "list") == 0 ? list(a, c, NULL, rs, nrs) :
		    edit(verb, a, NULL, rs, nrs);
	if ((rc = cli_zk_open(c->where->zookeeper, c->where->zk_auth_file,
	    c->where->zk_session_ms, c->timeout_ms, &zk)) < 0)
		return klog_exit_for(rc);
	status = strcmp(verb, "list") == 0 ? list(a, c, zk, rs, nrs) :
	    edit(verb, a, zk, rs, nrs);
	klog_zk_close(zk);
	return status;
}
