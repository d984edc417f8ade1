/*
 * klog-group: consumer-group administration over ZooKeeper, in Kafka 0.7's
 * layout (layout.h): list groups, describe offsets and lag, reset offsets,
 * delete a group, list topics and brokers; and create, grow and delete
 * replicated topics in klog's own layout (rtopics.h, rtadmin.h).  Log ends
 * come from the brokers themselves,
 * by an OFFSETS request.  With -b, a standalone broker's own topics are
 * created, grown and deleted by the klog protocol's admin requests.  The
 * users command, on a standalone broker's users file, is cmd/group/users.c;
 * with --acls, a standalone broker's ACL file is edited (group/acls.c).
 * See klog-group(1).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/table.h"
#include "group/acls.h"
#include "group/usage.h"
#include "group/users.h"
#include "klog/base/exit.h"
#include "klog/base/parse.h"
#include "klog/client/client.h"
#include "klog/group/lag.h"
#include "klog/group/positions.h"
#include "klog/group/reset.h"
#include "klog/proto/proto.h"
#include "klog/zk/layout.h"
#include "klog/zk/rtadmin.h"
#include "klog/zk/rtopics.h"
#include "klog/zk/zk.h"

#define PROG "klog-group"
#define DEFAULT_TIMEOUT_MS 10000

enum {
	OPT_VERSION = 256,
	OPT_EXECUTE,
	OPT_TO_EARLIEST,
	OPT_TO_LATEST,
	OPT_TO_OFFSET,
	OPT_TO_TIME,
	OPT_PARTITIONS,
	OPT_REPLICATION_FACTOR,
	OPT_MIN_INSYNC,
};

/* Options given, to check them against the command once parsed. */
enum {
	HAVE_GROUP = 1 << 0,
	HAVE_TOPIC = 1 << 1,
	HAVE_DRY = 1 << 2,
	HAVE_EXEC = 1 << 3,
	HAVE_FORCE = 1 << 4,
	HAVE_TO = 1 << 5,
	HAVE_PARTS = 1 << 6,
	HAVE_RF = 1 << 7,
	HAVE_MIN = 1 << 8,
};

typedef struct opts {
	cli_where_t where;   /* -Z */
	const char *group;
	const char *topic;
	int header;
	int json;
	int force;
	int execute;
	unsigned have;
	klog_reset_to_t to;  /* --to-*, for reset */
	int tos;             /* how many --to-* were given */
	int64_t to_value;    /* the offset or the time */
	int64_t timeout_ms;
	int nparts;          /* create-topic */
	int rf;
	int min_insync;
	users_opts_t users;  /* --users, --mechanism... */
	group_acls_t acls;   /* acls' own options */
	char **args;         /* the words after the command */
	int nargs;
} opts_t;

static const char optstring[] = ":b:F:fg:hHJnt:T:X:Z:";
static const struct option longopts[] = {
	{ "broker", required_argument, NULL, 'b' },
	{ "zookeeper", required_argument, NULL, 'Z' },
	{ "zk-auth-file", required_argument, NULL, CLI_OPT_ZK_AUTH },
	{ "property", required_argument, NULL, 'X' },
	{ "property-file", required_argument, NULL, 'F' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "group", required_argument, NULL, 'g' },
	{ "topic", required_argument, NULL, 't' },
	{ "no-header", no_argument, NULL, 'H' },
	{ "json", no_argument, NULL, 'J' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "execute", no_argument, NULL, OPT_EXECUTE },
	{ "force", no_argument, NULL, 'f' },
	{ "to-earliest", no_argument, NULL, OPT_TO_EARLIEST },
	{ "to-latest", no_argument, NULL, OPT_TO_LATEST },
	{ "to-offset", required_argument, NULL, OPT_TO_OFFSET },
	{ "to-time", required_argument, NULL, OPT_TO_TIME },
	{ "partitions", required_argument, NULL, OPT_PARTITIONS },
	{ "replication-factor", required_argument, NULL,
	    OPT_REPLICATION_FACTOR },
	{ "min-insync-replicas", required_argument, NULL, OPT_MIN_INSYNC },
	{ "users", required_argument, NULL, USERS_OPT_FILE },
	{ "mechanism", required_argument, NULL, USERS_OPT_MECHANISM },
	{ "iterations", required_argument, NULL, USERS_OPT_ITERATIONS },
	{ "password-file", required_argument, NULL, USERS_OPT_PASSWORD_FILE },
	{ "password", required_argument, NULL, USERS_OPT_PASSWORD },
	GROUP_ACLS_LONGOPTS,
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

typedef klog_positions_brokers_t brokers_t;

static int
fail(int rc, const klog_err_t *err)
{
	fprintf(stderr, PROG ": %s\n", klog_err_text(err, rc));
	return klog_exit_for(rc);
}

static void
set_to(opts_t *o, klog_reset_to_t to, const char *arg)
{
	const char *why;

	o->to = to;
	o->tos++;
	o->have |= HAVE_TO;
	if (to == KLOG_RESET_OFFSET)
		o->to_value = cli_number("--to-offset", arg, 0, INT64_MAX);
	if (to == KLOG_RESET_TIME &&
	    klog_parse_time_ms(arg, &o->to_value, &why) < 0)
		cli_misuse("--to-time %s: want ms since the epoch or "
		    "YYYY-MM-DDTHH:MM:SSZ", arg);
}

/* The reset's options: where to (--to-*), and whether to do it. */
static int
take_reset(opts_t *o, int ch, const char *arg)
{
	switch (ch) {
	case 'f':
		o->force = 1;
		o->have |= HAVE_FORCE;
		return 1;
	case 'n':
		o->have |= HAVE_DRY;
		return 1;
	case OPT_EXECUTE:
		o->execute = 1;
		o->have |= HAVE_EXEC;
		return 1;
	case OPT_TO_EARLIEST:
		set_to(o, KLOG_RESET_EARLIEST, NULL);
		return 1;
	case OPT_TO_LATEST:
		set_to(o, KLOG_RESET_LATEST, NULL);
		return 1;
	case OPT_TO_OFFSET:
		set_to(o, KLOG_RESET_OFFSET, arg);
		return 1;
	case OPT_TO_TIME:
		set_to(o, KLOG_RESET_TIME, arg);
		return 1;
	default:
		return 0;
	}
}

/* The numbers of create-topic and alter-topic. */
static int
take_topic_size(opts_t *o, int ch, const char *arg)
{
	switch (ch) {
	case OPT_PARTITIONS:
		o->nparts = (int)cli_number("--partitions", arg, 1,
		    KLOG_RTOPICS_MAX_PARTITIONS);
		o->have |= HAVE_PARTS;
		return 1;
	case OPT_REPLICATION_FACTOR:
		o->rf = (int)cli_number("--replication-factor", arg, 1,
		    KLOG_RTOPICS_MAX_REPLICAS);
		o->have |= HAVE_RF;
		return 1;
	case OPT_MIN_INSYNC:
		o->min_insync = (int)cli_number("--min-insync-replicas", arg,
		    1, KLOG_RTOPICS_MAX_REPLICAS);
		o->have |= HAVE_MIN;
		return 1;
	default:
		return 0;
	}
}

/* What names the group and the topic, and how to show and to wait. */
static int
take_common(opts_t *o, int ch, const char *arg)
{
	switch (ch) {
	case 'g':
		o->group = arg;
		o->have |= HAVE_GROUP;
		return 1;
	case 't':
		o->topic = arg;
		o->have |= HAVE_TOPIC;
		return 1;
	case 'H':
		o->header = 0;
		return 1;
	case 'J':
		o->json = 1;
		return 1;
	case 'T':
		/* A bare number is seconds. */
		o->timeout_ms = cli_duration("-T", arg, 1000, 1, 3600000);
		return 1;
	default:
		return 0;
	}
}

/* Take the options, each checked as it comes; returns the command. */
static const char *
parse_opts(int argc, char **argv, opts_t *o)
{
	cli_seen_t seen = { { 0 } };
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, optstring, longopts, NULL)) !=
	    -1) {
		if (!group_acls_repeats(ch))
			cli_once(&seen, ch, longopts);
		if (cli_where_option(&o->where, ch, optarg) ||
		    take_common(o, ch, optarg) || take_reset(o, ch, optarg) ||
		    take_topic_size(o, ch, optarg) ||
		    users_option(&o->users, ch, optarg) ||
		    group_acls_option(&o->acls, ch, optarg))
			continue;
		if (ch == 'h')
			cli_help(group_usage);
		if (ch == OPT_VERSION)
			cli_version();
		cli_option_error(ch, argv);
	}
	if (optind >= argc)
		cli_misuse("no command");
	/* Words after the command: acls takes one, the others none. */
	o->args = argv + optind + 1;
	o->nargs = argc - optind - 1;
	return argv[optind];
}

/* The broker's own topic commands, which -b asks for. */
static int
broker_cmd(const char *cmd)
{
	return strcmp(cmd, "create-topic") == 0 ||
	    strcmp(cmd, "alter-topic") == 0 || strcmp(cmd, "delete-topic") == 0;
}

/*
 * -b or -Z: -b is a standalone broker's own topics (create-topic then
 * makes a local one), -Z the cluster's groups and replicated topics
 * (create-topic, alter-topic, delete-topic in ZooKeeper).
 */
static void
check_where(const char *cmd, opts_t *o)
{
	klog_err_t err;

	if (o->topic != NULL && klog_topic_validate(o->topic, &err) < 0)
		cli_misuse("%s", err.msg);
	cli_where_check(&o->where);
	if (o->where.brokers_given && !broker_cmd(cmd))
		cli_misuse("%s needs ZooKeeper (-Z), not a broker (-b)", cmd);
	if (o->where.brokers_given && (o->have & (HAVE_RF | HAVE_MIN)))
		cli_misuse("create-topic -b makes a broker's own topic: "
		    "--replication-factor and --min-insync-replicas need -Z");
}

/* users and acls take words after the command and options of their own,
 * which no other command does: 1 if cmd is one of them (acls checks its
 * names and where its file is by itself). */
static int
check_auth_cmd(const char *cmd, opts_t *o)
{
	int acls = strcmp(cmd, "acls") == 0, users = strcmp(cmd, "users") == 0;

	if (!acls && group_acls_given(&o->acls) != NULL)
		cli_misuse("%s does not take %s", cmd,
		    group_acls_given(&o->acls));
	if (!users && users_given(&o->users) != NULL)
		cli_misuse("%s does not take %s", cmd, users_given(&o->users));
	if (users)
		users_check(&o->users, o->args, o->nargs,
		    o->where.brokers_given, o->where.zk_given,
		    o->where.zk_auth_file != NULL);
	else if (!acls && o->nargs > 0)
		cli_misuse("%s: unexpected argument", o->args[0]);
	return acls || users;
}

/* Check the options against the command: required ones, and those that
 * would be silently ignored. */
static void
check_opts(const char *cmd, opts_t *o)
{
	static const struct {
		const char *name;
		unsigned need, allow;
	} cmds[] = {
		{ "list", 0, 0 },
		{ "describe", HAVE_GROUP, HAVE_GROUP | HAVE_TOPIC },
		{ "reset", HAVE_GROUP | HAVE_TOPIC | HAVE_TO,
		    HAVE_GROUP | HAVE_TOPIC | HAVE_TO | HAVE_DRY | HAVE_EXEC |
		    HAVE_FORCE },
		{ "delete", HAVE_GROUP, HAVE_GROUP },
		{ "topics", 0, HAVE_TOPIC },
		{ "brokers", 0, 0 },
		/* --replication-factor is required but checked below, to
		 * say why. */
		{ "create-topic", HAVE_TOPIC | HAVE_PARTS,
		    HAVE_TOPIC | HAVE_PARTS | HAVE_RF | HAVE_MIN },
		{ "alter-topic", HAVE_TOPIC | HAVE_PARTS,
		    HAVE_TOPIC | HAVE_PARTS },
		{ "delete-topic", HAVE_TOPIC, HAVE_TOPIC },
		{ "users", 0, 0 },
		{ "acls", 0, HAVE_GROUP | HAVE_TOPIC | HAVE_FORCE },
	};
	static const char *const names[] = { "-g", "-t", "-n", "--execute",
	    "-f", "--to-*", "--partitions", "--replication-factor",
	    "--min-insync-replicas" };
	size_t i, k;
	klog_err_t err;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(cmd, cmds[i].name) == 0)
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0]))
		cli_misuse("%s: unknown command", cmd);
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		if ((cmds[i].need & (1u << k)) && !(o->have & (1u << k)))
			cli_misuse("%s needs %s", cmd, names[k]);
		if ((o->have & (1u << k)) && !(cmds[i].allow & (1u << k)))
			cli_misuse("%s does not take %s", cmd, names[k]);
	}
	if (check_auth_cmd(cmd, o))
		return;
	if (o->tos > 1)
		cli_misuse("reset takes one of --to-earliest, --to-latest, "
		    "--to-offset, --to-time");
	check_where(cmd, o);
	if (o->where.brokers_given)
		return;
	/* A topic without replication is Kafka 0.7's: brokers make it on
	 * the first produce, each with its own partitions, so there is
	 * nothing for a cluster-wide command to create. */
	if (strcmp(cmd, "create-topic") == 0 && !(o->have & HAVE_RF))
		cli_misuse("create-topic: --replication-factor is required "
		    "(unreplicated topics are created by brokers on first "
		    "produce)");
	if ((o->have & HAVE_MIN) && o->min_insync > o->rf)
		cli_misuse("--min-insync-replicas %d is more than "
		    "--replication-factor %d", o->min_insync, o->rf);
	if (strcmp(cmd, "reset") == 0 &&
	    !!(o->have & HAVE_DRY) == !!(o->have & HAVE_EXEC))
		cli_misuse("reset needs exactly one of -n (--dry-run) and "
		    "--execute");
	if (o->group != NULL && klog_layout_group_validate(o->group,
	    &err) < 0)
		cli_misuse("%s", err.msg);
	if (o->where.zookeeper == NULL)
		cli_misuse("no ZooKeeper: give -Z or set KLOG_ZOOKEEPER");
}

/* ---- commands ---- */

static int
cmd_list(klog_zk_t *zk, cli_table_t *tab, klog_err_t *err)
{
	klog_zk_list_t groups, members;
	cli_col_t c[2];
	int rc;

	if ((rc = klog_layout_groups(zk, &groups, err)) < 0)
		return rc;
	c[0] = cli_col_str("GROUP", "group", NULL);
	c[1] = cli_col_num("MEMBERS", "members", 0, 0);
	cli_table_header(tab, c, 2);
	for (size_t i = 0; i < groups.n; i++) {
		if (klog_layout_group_validate(groups.names[i], NULL) < 0)
			continue;
		rc = klog_layout_members(zk, groups.names[i], 0, &members,
		    err);
		if (rc < 0)
			break;
		c[0] = cli_col_str("GROUP", "group", groups.names[i]);
		c[1] = cli_col_num("MEMBERS", "members", (int64_t)members.n, 1);
		klog_zk_list_free(&members);
		cli_table_row(tab, c, 2);
	}
	klog_zk_list_free(&groups);
	return rc;
}

/* One row a partition, as lag.h walks them. */
static int
cmd_describe(klog_zk_t *zk, const opts_t *o, cli_table_t *tab,
    klog_err_t *err)
{
	static const cli_col_t head[7] = {
		{ .name = "GROUP" }, { .name = "TOPIC" },
		{ .name = "PARTITION" }, { .name = "CURRENT" },
		{ .name = "LOG_END" }, { .name = "LAG_BYTES" },
		{ .name = "OWNER" },
	};
	char name[KLOG_LAYOUT_PART_NAME_MAX];
	klog_lag_row_t r;
	klog_lag_t *lag;
	cli_col_t c[7];
	int rc;

	if ((rc = klog_lag_open(zk, o->group, o->topic, (int)o->timeout_ms,
	    o->where.sec, &lag, err)) < 0)
		return rc;
	cli_table_header(tab, head, 7);
	while ((rc = klog_lag_next(lag, &r, err)) > 0) {
		klog_layout_part_name(name, sizeof(name), r.part.broker,
		    r.part.part);
		c[0] = cli_col_str("GROUP", "group", o->group);
		c[1] = cli_col_str("TOPIC", "topic", r.topic);
		c[2] = cli_col_str("PARTITION", "partition", name);
		c[3] = cli_col_num("CURRENT", "current", r.current,
		    r.has_current);
		c[4] = cli_col_num("LOG_END", "log_end", r.end, r.has_end);
		c[5] = cli_col_num("LAG_BYTES", "lag_bytes", r.lag, r.has_lag);
		c[6] = cli_col_str("OWNER", "owner", r.owner);
		cli_table_row(tab, c, 7);
	}
	klog_lag_close(lag);
	return rc;
}

/* The plan of reset (reset.h), carried out with --execute; one row a
 * partition either way. */
static int
cmd_reset(klog_zk_t *zk, const opts_t *o, cli_table_t *tab, klog_err_t *err)
{
	klog_reset_config_t rs = {
		.group = o->group, .topic = o->topic, .to = o->to,
		.value = o->to_value, .force = o->force,
		.timeout_ms = (int)o->timeout_ms, .sec = o->where.sec,
	};
	char name[KLOG_LAYOUT_PART_NAME_MAX];
	klog_reset_row_t *rows;
	klog_err_t busy;
	size_t n;
	cli_col_t c[5];
	int rc;

	if ((rc = klog_reset_plan(zk, &rs, &rows, &n, err)) == -KLOG_EBUSY) {
		busy = *err;
		return klog_err_set(err, rc, "%s; stop them first, or use "
		    "--force", busy.msg);
	}
	if (rc == 0 && o->execute)
		rc = klog_reset_commit(zk, &rs, rows, n, err);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		klog_layout_part_name(name, sizeof(name), rows[i].part.broker,
		    rows[i].part.part);
		c[0] = cli_col_str("GROUP", "group", o->group);
		c[1] = cli_col_str("TOPIC", "topic", o->topic);
		c[2] = cli_col_str("PARTITION", "partition", name);
		c[3] = cli_col_num("BEFORE", "before", rows[i].before,
		    rows[i].before >= 0);
		c[4] = cli_col_num("AFTER", "after", rows[i].after, 1);
		if (i == 0)
			cli_table_header(tab, c, 5);
		cli_table_row(tab, c, 5);
	}
	free(rows);
	if (rc == 0 && !o->execute && fflush(stdout) != EOF)
		fprintf(stderr, PROG ": dry run: nothing changed (use "
		    "--execute)\n");
	return rc;
}

static int
cmd_delete(klog_zk_t *zk, const opts_t *o, klog_err_t *err)
{
	klog_err_t e = { 0, "" };
	int rc = klog_layout_group_delete(zk, o->group, &e);

	if (rc == -KLOG_EBUSY)
		return klog_err_set(err, rc, "%s; stop them first", e.msg);
	if (rc < 0)
		*err = e;
	return rc;
}

/* The rows of the partitions broker id holds of topic (0.7's names). */
static void
holder_rows(cli_table_t *tab, const brokers_t *brs, const char *topic,
    int32_t id, int32_t nparts)
{
	char name[KLOG_LAYOUT_PART_NAME_MAX], addr[KLOG_LAYOUT_HOST_MAX + 8];
	const klog_layout_broker_t *br = klog_positions_broker_find(brs, id,
	    NULL);
	cli_col_t c[4];

	if (br != NULL)
		snprintf(addr, sizeof(addr), "%s:%d", br->host, br->port);
	for (int32_t p = 0; p < nparts; p++) {
		klog_layout_part_name(name, sizeof(name), id, p);
		c[0] = cli_col_str("TOPIC", "topic", topic);
		c[1] = cli_col_str("PARTITION", "partition", name);
		c[2] = cli_col_num("BROKER", "broker", id, 1);
		c[3] = cli_col_str("ADDRESS", "address",
		    br != NULL ? addr : NULL);
		cli_table_row(tab, c, 4);
	}
}

static int
topics_unreplicated(klog_zk_t *zk, const opts_t *o, cli_table_t *tab,
    klog_err_t *err)
{
	klog_layout_topic_t *t = NULL, one;
	brokers_t brs = { 0 };
	size_t n = 0;
	cli_col_t c[4];
	int rc;

	if (o->topic != NULL) {
		if ((rc = klog_layout_topic(zk, o->topic, 0, &one, err)) < 0)
			return rc;
		if ((t = malloc(sizeof(*t))) == NULL) {
			klog_layout_topic_free(&one);
			return klog_err_set(err, -KLOG_ENOMEM, "%s",
			    klog_strerror(KLOG_ENOMEM));
		}
		t[0] = one;
		n = 1;
	} else if ((rc = klog_layout_topics(zk, &t, &n, err)) < 0) {
		return rc;
	}
	if ((rc = klog_positions_brokers_load(zk, &brs, err)) < 0)
		goto out;
	c[0] = cli_col_str("TOPIC", "topic", NULL);
	c[1] = cli_col_str("PARTITION", "partition", NULL);
	c[2] = cli_col_num("BROKER", "broker", 0, 0);
	c[3] = cli_col_str("ADDRESS", "address", NULL);
	cli_table_header(tab, c, 4);
	for (size_t i = 0; i < n; i++)
		for (size_t h = 0; h < t[i].nholders; h++)
			holder_rows(tab, &brs, t[i].name,
			    t[i].holders[h].broker_id,
			    t[i].holders[h].partitions);
out:
	klog_positions_brokers_free(&brs);
	klog_layout_topics_free(t, n);
	return rc;
}

/* The columns of a replicated topic's partition, as topics and
 * create-topic show them. */
#define RCOLS 6

static void
rcols(cli_col_t *c, const char *topic, int p, int32_t leader,
    const klog_rtopic_t *t, const klog_rstate_t *s)
{
	c[0] = cli_col_str("TOPIC", "topic", topic);
	c[1] = cli_col_num("PARTITION", "partition", p, 1);
	c[2] = cli_col_num("LEADER", "leader", leader, 1);
	c[3] = cli_col_num("LEADER_EPOCH", "leader_epoch",
	    s != NULL ? s->leader_epoch : 0, s != NULL);
	c[4] = cli_col_ids("REPLICAS", "replicas", t != NULL ?
	    t->replicas + (size_t)p * (size_t)t->rf : NULL,
	    t != NULL ? t->rf : 0);
	c[5] = cli_col_ids("ISR", "isr", s != NULL ? s->isr : NULL,
	    s != NULL ? s->nisr : 0);
}

static void
rheader(const cli_table_t *tab)
{
	cli_col_t c[RCOLS];

	rcols(c, NULL, 0, -1, NULL, NULL);
	cli_table_header(tab, c, RCOLS);
}

/*
 * A replicated topic's partitions: the leader is the broker holding the
 * leader node (-1 while none does: before the first election, or between
 * a leader's death and the next), with the epoch, replicas and isr of
 * the partition's state.
 */
static int
topic_replicated(klog_zk_t *zk, const char *topic,
    cli_table_t *tab, klog_err_t *err)
{
	klog_rtopic_t t;
	klog_rstate_t s;
	cli_col_t c[RCOLS];
	int32_t leader;
	int rc;

	if ((rc = klog_rtopics_read(zk, topic, 0, &t, err)) < 0)
		return rc;
	for (int p = 0; p < t.nparts; p++) {
		if ((rc = klog_rtopics_state(zk, topic, p, 0, &s, err)) < 0)
			break;
		rc = klog_rtopics_leader(zk, topic, p, 0, &leader, err);
		if (rc < 0 && rc != -KLOG_ENOENT)
			break;
		rc = 0;
		rcols(c, topic, p, leader, &t, &s);
		cli_table_row(tab, c, RCOLS);
	}
	klog_rtopic_free(&t);
	return rc;
}

static int
is_listed(const klog_zk_list_t *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->names[i], name) == 0)
			return 1;
	return 0;
}

/* Replicated topics get their own table (and JSON shape) after the 0.7
 * one, which stays as it was. */
static int
cmd_topics(klog_zk_t *zk, const opts_t *o, cli_table_t *tab, klog_err_t *err)
{
	klog_zk_list_t rl;
	int rc;

	if ((rc = klog_rtopics_list(zk, 0, &rl, err)) < 0)
		return rc;
	if (o->topic != NULL && is_listed(&rl, o->topic)) {
		rheader(tab);
		rc = topic_replicated(zk, o->topic, tab, err);
		goto out;
	}
	if ((rc = topics_unreplicated(zk, o, tab, err)) < 0 || rl.n == 0 ||
	    o->topic != NULL)
		goto out;
	rheader(tab);
	for (size_t i = 0; rc == 0 && i < rl.n; i++)
		if (klog_topic_validate(rl.names[i], NULL) == 0)
			rc = topic_replicated(zk, rl.names[i], tab, err);
out:
	klog_zk_list_free(&rl);
	return rc;
}

/* A random start spreads the first leader over the brokers, as Kafka's
 * random start index does; the clock stands in if getrandom fails. */
static int
cmd_create_topic(klog_zk_t *zk, const opts_t *o, cli_table_t *tab,
    klog_err_t *err)
{
	klog_rtopic_t t;
	uint32_t start;
	int rc;

	if (getrandom(&start, sizeof(start), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(start))
		start = (uint32_t)time(NULL) ^ (uint32_t)clock();
	rc = klog_rtopics_create_live(zk, o->topic, o->nparts, o->rf,
	    o->min_insync > 0 ? o->min_insync : 1, start, &t, err);
	klog_rtopic_free(&t);
	if (rc < 0)
		return rc;
	/* Show what was made, as topics -t would. */
	rheader(tab);
	return topic_replicated(zk, o->topic, tab, err);
}

/* Partitions are added over the live brokers (rtadmin.h); the brokers
 * take them up by themselves.  Shown as topics -t would. */
static int
cmd_alter_topic(klog_zk_t *zk, const opts_t *o, cli_table_t *tab,
    klog_err_t *err)
{
	klog_rtopic_t t;
	int rc;

	rc = klog_rtadmin_alter(zk, o->topic, o->nparts, &t, err);
	klog_rtopic_free(&t);
	if (rc < 0)
		return rc;
	rheader(tab);
	return topic_replicated(zk, o->topic, tab, err);
}

/*
 * Mark the topic and wait for the brokers holding a copy to remove it
 * (rtadmin.h): brokers that are down are named on stderr and finish it
 * when they come back; live ones that do not finish within -T are
 * ETIMEDOUT, the topic staying marked.
 */
static int
cmd_delete_topic(klog_zk_t *zk, const opts_t *o, cli_table_t *tab,
    klog_err_t *err)
{
	int32_t ids[64];
	char list[sizeof(ids) / sizeof(ids[0]) * 12];
	int nparts = 0, already, rc, n;
	klog_rtopic_t t;
	cli_col_t col[2];

	/* Its count first, for the line shown: the nodes may soon be gone. */
	if ((rc = klog_rtopics_read(zk, o->topic, 0, &t, err)) == 0)
		nparts = t.nparts;
	klog_rtopic_free(&t);
	if (rc < 0 && rc != -KLOG_ENOENT)
		return rc;
	if ((rc = klog_rtadmin_delete(zk, o->topic, &already, err)) < 0)
		return rc;
	(void)already;   /* marked before: waited for all the same */
	n = klog_rtadmin_wait(zk, o->topic, o->timeout_ms, ids,
	    (int)(sizeof(ids) / sizeof(ids[0])), err);
	if (n < 0)
		return n;
	if (n > 0)
		fprintf(stderr, PROG ": topic \"%s\": marked for deletion; "
		    "broker%s %s, down, still hold%s a copy: the deletion "
		    "finishes when %s back\n", o->topic, n == 1 ? "" : "s",
		    klog_rtadmin_id_list(ids, n, list, sizeof(list)),
		    n == 1 ? "s" : "", n == 1 ? "it comes" : "they come");
	col[0] = cli_col_str("TOPIC", "topic", o->topic);
	col[1] = cli_col_num("PARTITIONS", "partitions", nparts, 1);
	cli_table_header(tab, col, 2);
	cli_table_row(tab, col, 2);
	return 0;
}

static int
cmd_brokers(klog_zk_t *zk, cli_table_t *tab, klog_err_t *err)
{
	brokers_t brs = { 0 };
	cli_col_t c[3];
	int rc;

	if ((rc = klog_positions_brokers_load(zk, &brs, err)) < 0)
		return rc;
	c[0] = cli_col_num("BROKER", "broker", 0, 0);
	c[1] = cli_col_str("HOST", "host", NULL);
	c[2] = cli_col_num("PORT", "port", 0, 0);
	cli_table_header(tab, c, 3);
	for (size_t i = 0; i < brs.n; i++) {
		c[0] = cli_col_num("BROKER", "broker", brs.v[i].id, 1);
		c[1] = cli_col_str("HOST", "host", brs.v[i].host);
		c[2] = cli_col_num("PORT", "port", brs.v[i].port, 1);
		cli_table_row(tab, c, 3);
	}
	klog_positions_brokers_free(&brs);
	return 0;
}

/* ---- a broker's own topics (-b) ---- */

/* A broker's refusal in words, for the command's topic and count
 * (asked), now what the topic has. */
static int
admin_refused(const char *cmd, const char *topic, int asked, int16_t error,
    int32_t now, klog_err_t *err)
{
	switch (error) {
	case KLOG_WIRE_UNKNOWN_TOPIC:
		return klog_err_set(err, -KLOG_EBROKER, "%s: topic \"%s\": "
		    "no such topic", cmd, topic);
	case KLOG_WIRE_TOPIC_EXISTS:
		return klog_err_set(err, -KLOG_EBROKER, "%s: topic \"%s\" "
		    "exists already (alter-topic adds partitions)", cmd, topic);
	case KLOG_WIRE_INVALID_PARTITIONS:
		if (asked < now)
			return klog_err_set(err, -KLOG_EBROKER, "%s: topic "
			    "\"%s\" has %d partitions: partitions are added, "
			    "never removed", cmd, topic, (int)now);
		return klog_err_set(err, -KLOG_EBROKER, "%s: topic \"%s\": "
		    "more partitions than the broker allows "
		    "(1024 a topic)", cmd, topic);
	case KLOG_WIRE_TOPIC_REPLICATED:
		return klog_err_set(err, -KLOG_EBROKER, "%s: topic \"%s\" is "
		    "replicated: its partitions are ZooKeeper's: %s it with -Z",
		    cmd, topic, strncmp(cmd, "create", 6) == 0 ? "create" :
		    strncmp(cmd, "alter", 5) == 0 ? "alter" : "delete");
	case KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED:
		return klog_err_set(err, -KLOG_EDENIED, "%s: topic \"%s\": %s",
		    cmd, topic, klog_wire_error_text(error));
	default:
		return klog_err_set(err, -KLOG_EBROKER, "%s: topic \"%s\": "
		    "the broker answered %s (its log says why)", cmd, topic,
		    klog_wire_error_name(error));
	}
}

/* create-topic, alter-topic or delete-topic on the broker of -b (the
 * first of a list): one request, then the topic as it is now. */
static int
cmd_broker_topic(const char *cmd, const opts_t *o, cli_table_t *tab,
    klog_err_t *err)
{
	int16_t api = strcmp(cmd, "create-topic") == 0 ?
	    KLOG_API_CREATE_TOPIC : strcmp(cmd, "alter-topic") == 0 ?
	    KLOG_API_ALTER_TOPIC : KLOG_API_DELETE_TOPIC;
	klog_client_addr_t *addrs;
	klog_client_t *c;
	int16_t error;
	int32_t now;
	size_t n;
	cli_col_t col[2];
	int rc;

	if (klog_client_parse_brokers(o->where.brokers, &addrs, &n, err) < 0)
		cli_misuse("-b %s: %s", o->where.brokers, err->msg);
	addrs[0].sec = o->where.sec;
	rc = klog_client_open(&addrs[0], (int)o->timeout_ms, &c, err);
	free(addrs);
	if (rc < 0)
		return rc;
	rc = klog_client_topic_admin(c, api, o->topic, o->nparts,
	    (int)o->timeout_ms, &error, &now, err);
	klog_client_close(c);
	if (rc < 0)
		return rc;
	if (error != KLOG_WIRE_NONE)
		return admin_refused(cmd, o->topic, o->nparts, error, now,
		    err);
	col[0] = cli_col_str("TOPIC", "topic", o->topic);
	col[1] = cli_col_num("PARTITIONS", "partitions", now, 1);
	cli_table_header(tab, col, 2);
	cli_table_row(tab, col, 2);
	return 0;
}

/* acls add|remove|list (group/acls.c), with what the options said. */
static int
cmd_acls(const opts_t *o)
{
	group_acls_ctx_t c = {
		.args = o->args, .nargs = o->nargs, .topic = o->topic,
		.group = o->group, .force = o->force, .json = o->json,
		.brokers_given = o->where.brokers_given,
		.zk_given = o->where.zk_given, .where = &o->where,
		.timeout_ms = (int)o->timeout_ms,
	};
	int status = group_acls_main(&o->acls, &c);

	return cli_stdout_check() != 0 ? KLOG_EXIT_IOERR : status;
}

int
main(int argc, char **argv)
{
	opts_t o = { .header = 1, .timeout_ms = DEFAULT_TIMEOUT_MS };
	klog_err_t err = { 0, "" };
	klog_zk_t *zk = NULL;
	cli_table_t tab;
	const char *cmd;
	int rc, status;

	cli_init(PROG);
	cli_where_init(&o.where);
	users_init(&o.users);
	cmd = parse_opts(argc, argv, &o);
	check_opts(cmd, &o);
	if (strcmp(cmd, "acls") == 0)
		return cmd_acls(&o);
	cli_table_init(&tab, o.header, o.json);
	if (strcmp(cmd, "users") == 0 && !o.where.zk_given) {
		rc = users_run(&o.users, NULL, o.args, o.nargs, &tab, &err);
		goto out;
	}
	if (o.where.brokers_given) {
		rc = cmd_broker_topic(cmd, &o, &tab, &err);
		goto out;
	}
	if ((rc = cli_zk_open(o.where.zookeeper, o.where.zk_auth_file,
	    o.where.zk_session_ms, (int)o.timeout_ms, &zk)) < 0)
		return klog_exit_for(rc);
	if (strcmp(cmd, "users") == 0)
		rc = users_run(&o.users, zk, o.args, o.nargs, &tab, &err);
	else if (strcmp(cmd, "list") == 0)
		rc = cmd_list(zk, &tab, &err);
	else if (strcmp(cmd, "describe") == 0)
		rc = cmd_describe(zk, &o, &tab, &err);
	else if (strcmp(cmd, "reset") == 0)
		rc = cmd_reset(zk, &o, &tab, &err);
	else if (strcmp(cmd, "delete") == 0)
		rc = cmd_delete(zk, &o, &err);
	else if (strcmp(cmd, "topics") == 0)
		rc = cmd_topics(zk, &o, &tab, &err);
	else if (strcmp(cmd, "create-topic") == 0)
		rc = cmd_create_topic(zk, &o, &tab, &err);
	else if (strcmp(cmd, "alter-topic") == 0)
		rc = cmd_alter_topic(zk, &o, &tab, &err);
	else if (strcmp(cmd, "delete-topic") == 0)
		rc = cmd_delete_topic(zk, &o, &tab, &err);
	else
		rc = cmd_brokers(zk, &tab, &err);
out:
	status = rc < 0 ? fail(rc, &err) : KLOG_EXIT_OK;
	if (tab.line.failed && status == KLOG_EXIT_OK)
		status = fail(-KLOG_ENOMEM, NULL);
	cli_table_free(&tab);
	klog_zk_close(zk);
	cli_where_close(&o.where);
	return cli_stdout_check() != 0 ? KLOG_EXIT_IOERR : status;
}
