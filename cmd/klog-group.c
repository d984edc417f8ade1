/*
 * klog-group: consumer-group administration over ZooKeeper, in Kafka 0.7's
 * layout (layout.h): list groups, describe offsets and lag, reset offsets,
 * delete a group, list topics and brokers; and create, grow and delete
 * replicated topics in klog's own layout (rtopics.h, rtadmin.h).  Log ends
 * come from the brokers themselves,
 * by an OFFSETS request.  With -b, a standalone broker's own topics are
 * created, grown and deleted by the klog protocol's admin requests.  See
 * klog-group(1).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cli/cli.h"
#include "klog/base/buf.h"
#include "klog/base/exit.h"
#include "klog/base/json.h"
#include "klog/base/parse.h"
#include "klog/client/client.h"
#include "klog/group/positions.h"
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

enum reset_to {
	TO_NONE,
	TO_EARLIEST,
	TO_LATEST,
	TO_OFFSET,
	TO_TIME,
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
	int to;              /* enum reset_to */
	int tos;             /* how many --to-* were given */
	int64_t to_value;    /* the offset or the time */
	int64_t timeout_ms;
	int nparts;          /* create-topic */
	int rf;
	int min_insync;
} opts_t;

typedef klog_positions_part_t part_t;
typedef klog_positions_brokers_t brokers_t;


static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: " PROG " [-HJ] [-b broker | -Z connect] [-T timeout] "
	    "command [options]\n"
	    "Administer consumer groups stored in ZooKeeper, and topics.\n"
	    "\n"
	    "commands:\n"
	    "  list                        groups and their live members\n"
	    "  describe -g group [-t topic]\n"
	    "                              committed offsets, log ends, lag "
	    "and owners\n"
	    "  reset -g group -t topic --to-earliest|--to-latest|"
	    "--to-offset N|--to-time T\n"
	    "        -n|--execute [-f]     move the group's offsets\n"
	    "  delete -g group             delete a group without live "
	    "members\n"
	    "  topics [-t topic]           topics, partitions and their "
	    "brokers\n"
	    "  create-topic -t topic --partitions N --replication-factor R\n"
	    "        [--min-insync-replicas M]\n"
	    "                              create a replicated topic over "
	    "the live brokers\n"
	    "  alter-topic -t topic --partitions N\n"
	    "                              add partitions to a replicated "
	    "topic (never fewer)\n"
	    "  delete-topic -t topic       delete a replicated topic and "
	    "every broker's copy\n"
	    "  brokers                     live brokers\n"
	    "\n"
	    "  with -b, a standalone broker's own topics:\n"
	    "  create-topic -t topic --partitions N\n"
	    "                              create a topic on the broker\n"
	    "  alter-topic -t topic --partitions N\n"
	    "                              add partitions (never fewer)\n"
	    "  delete-topic -t topic       delete the topic and its data\n"
	    "\n"
	    "  -b, --broker HOST:PORT   the broker of create-topic, "
	    "alter-topic, delete-topic\n"
	    "  -Z, --zookeeper CONNECT  host:port[,host:port...][/chroot] "
	    "(default: $KLOG_ZOOKEEPER)\n"
	    "  -T, --timeout DURATION   wait this long for ZooKeeper and "
	    "brokers (default 10s)\n"
	    "  -g, --group GROUP        the consumer group\n"
	    "  -t, --topic TOPIC        the topic\n"
	    "  -H, --no-header          no header line (for awk)\n"
	    "  -J, --json               one JSON object per line\n"
	    "      --to-earliest        reset to each partition's first "
	    "offset\n"
	    "      --to-latest          reset to each partition's end\n"
	    "      --to-offset N        reset every partition to offset N\n"
	    "      --to-time T          reset to the segment start at or "
	    "before T\n"
	    "                           (ms since the epoch, or "
	    "YYYY-MM-DDTHH:MM:SSZ)\n"
	    "  -n, --dry-run            show what reset would do\n"
	    "      --execute            do it\n"
	    "  -f, --force              reset even while members are live\n"
	    "      --partitions N       create-topic, alter-topic: number of "
	    "partitions\n"
	    "      --replication-factor R\n"
	    "                           create-topic: replicas of each "
	    "partition\n"
	    "      --min-insync-replicas M\n"
	    "                           create-topic: in-sync replicas "
	    "acks=all needs\n"
	    "                           (default 1)\n"
	    "  -h, --help               print this help\n"
	    "      --version            print the version\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure (or refused, by ZooKeeper or the "
	    "broker), 64 usage,\n69 ZooKeeper or broker unavailable (or "
	    "live brokers that did not finish a\ndelete-topic in time), 74 "
	    "I/O error.\n");
}

static int
fail(int rc, const klog_err_t *err)
{
	fprintf(stderr, PROG ": %s\n", klog_err_text(err, rc));
	return klog_exit_for(rc);
}

static void
set_to(opts_t *o, int to, const char *arg)
{
	const char *why;

	o->to = to;
	o->tos++;
	o->have |= HAVE_TO;
	if (to == TO_OFFSET)
		o->to_value = cli_number("--to-offset", arg, 0, INT64_MAX);
	if (to == TO_TIME && klog_parse_time_ms(arg, &o->to_value, &why) < 0)
		cli_misuse("--to-time %s: want ms since the epoch or "
		    "YYYY-MM-DDTHH:MM:SSZ", arg);
}

static const char *
parse_opts(int argc, char **argv, opts_t *o)
{
	static const struct option longopts[] = {
		{ "broker", required_argument, NULL, 'b' },
		{ "zookeeper", required_argument, NULL, 'Z' },
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
		{ "min-insync-replicas", required_argument, NULL,
		    OPT_MIN_INSYNC },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	cli_seen_t seen = { { 0 } };
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":b:fg:hHJnt:T:Z:", longopts,
	    NULL)) != -1) {
		cli_once(&seen, ch, longopts);
		if (cli_where_option(&o->where, ch, optarg))
			continue;
		switch (ch) {
		case 'f':
			o->force = 1;
			o->have |= HAVE_FORCE;
			break;
		case 'g':
			o->group = optarg;
			o->have |= HAVE_GROUP;
			break;
		case 'h':
			cli_help(usage);
		case 'H':
			o->header = 0;
			break;
		case 'J':
			o->json = 1;
			break;
		case 'n':
			o->have |= HAVE_DRY;
			break;
		case 't':
			o->topic = optarg;
			o->have |= HAVE_TOPIC;
			break;
		case 'T':
			/* A bare number is seconds. */
			o->timeout_ms = cli_duration("-T", optarg, 1000, 1,
			    3600000);
			break;
		case OPT_EXECUTE:
			o->execute = 1;
			o->have |= HAVE_EXEC;
			break;
		case OPT_TO_EARLIEST:
			set_to(o, TO_EARLIEST, NULL);
			break;
		case OPT_TO_LATEST:
			set_to(o, TO_LATEST, NULL);
			break;
		case OPT_TO_OFFSET:
			set_to(o, TO_OFFSET, optarg);
			break;
		case OPT_TO_TIME:
			set_to(o, TO_TIME, optarg);
			break;
		case OPT_PARTITIONS:
			o->nparts = (int)cli_number("--partitions", optarg, 1,
			    KLOG_RTOPICS_MAX_PARTITIONS);
			o->have |= HAVE_PARTS;
			break;
		case OPT_REPLICATION_FACTOR:
			o->rf = (int)cli_number("--replication-factor", optarg,
			    1, KLOG_RTOPICS_MAX_REPLICAS);
			o->have |= HAVE_RF;
			break;
		case OPT_MIN_INSYNC:
			o->min_insync = (int)cli_number("--min-insync-replicas",
			    optarg, 1, KLOG_RTOPICS_MAX_REPLICAS);
			o->have |= HAVE_MIN;
			break;
		case OPT_VERSION:
			cli_version();
		default:
			cli_option_error(ch, argv);
		}
	}
	if (optind >= argc)
		cli_misuse("no command");
	if (optind + 1 < argc)
		cli_misuse("%s: unexpected argument", argv[optind + 1]);
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

/* ---- output: tab-separated with a header, or NDJSON ---- */

typedef struct col {
	const char *name;   /* header (TSV, upper case) */
	const char *key;    /* JSON key */
	const char *str;    /* a string value, or NULL */
	int64_t num;        /* a number, if str is NULL and known */
	int known;          /* 0: shown as - / null */
	const int32_t *ids; /* a list of broker ids, if not NULL and known:
	                       1,2,3 / [1,2,3] */
	int nids;
} col_t;

static void
emit_header(const opts_t *o, const col_t *c, size_t n)
{
	if (!o->header || o->json)
		return;
	for (size_t i = 0; i < n; i++)
		printf("%s%c", c[i].name, i + 1 < n ? '\t' : '\n');
}

static void
put_ids(const opts_t *o, klog_buf_t *b, const int32_t *ids, int n)
{
	char num[16];

	if (o->json)
		klog_buf_put(b, "[", 1);
	for (int i = 0; i < n; i++) {
		snprintf(num, sizeof(num), "%s%d", i > 0 ? "," : "",
		    (int)ids[i]);
		klog_buf_put(b, num, strlen(num));
	}
	if (o->json)
		klog_buf_put(b, "]", 1);
}

static void
emit(const opts_t *o, klog_buf_t *b, const col_t *c, size_t n)
{
	char num[24];

	klog_buf_reset(b);
	if (o->json)
		klog_buf_put(b, "{", 1);
	for (size_t i = 0; i < n; i++) {
		if (o->json) {
			if (i > 0)
				klog_buf_put(b, ",", 1);
			klog_json_put_string(b, c[i].key, strlen(c[i].key));
			klog_buf_put(b, ":", 1);
		} else if (i > 0) {
			klog_buf_put(b, "\t", 1);
		}
		if (!c[i].known) {
			klog_buf_put(b, o->json ? "null" : "-",
			    o->json ? 4 : 1);
		} else if (c[i].ids != NULL) {
			put_ids(o, b, c[i].ids, c[i].nids);
		} else if (c[i].str != NULL) {
			if (o->json)
				klog_json_put_string(b, c[i].str,
				    strlen(c[i].str));
			else
				klog_buf_put(b, c[i].str, strlen(c[i].str));
		} else {
			snprintf(num, sizeof(num), "%lld", (long long)c[i].num);
			klog_buf_put(b, num, strlen(num));
		}
	}
	klog_buf_put(b, o->json ? "}\n" : "\n", o->json ? 2 : 1);
	if (!b->failed)
		fwrite(b->data, 1, b->len, stdout);
}

static col_t
str_col(const char *name, const char *key, const char *s)
{
	col_t c = { .name = name, .key = key, .str = s, .known = s != NULL };

	return c;
}

static col_t
num_col(const char *name, const char *key, int64_t v, int known)
{
	col_t c = { .name = name, .key = key, .num = v, .known = known };

	return c;
}

static col_t
ids_col(const char *name, const char *key, const int32_t *ids, int n)
{
	col_t c = { .name = name, .key = key, .known = 1, .ids = ids,
	    .nids = n };

	return c;
}

/* ---- commands ---- */

static int
group_exists(klog_zk_t *zk, const char *group, klog_err_t *err)
{
	char path[KLOG_ZK_PATH_MAX];
	int rc;

	klog_layout_group_path(path, sizeof(path), group);
	rc = klog_zk_exists(zk, path, 0, NULL, err);
	if (rc == -KLOG_ENOENT)
		return klog_err_set(err, rc, "group \"%s\": no such group",
		    group);
	return rc;
}

static int
cmd_list(klog_zk_t *zk, const opts_t *o, klog_buf_t *b, klog_err_t *err)
{
	klog_zk_list_t groups, members;
	col_t c[2];
	int rc;

	if ((rc = klog_layout_groups(zk, &groups, err)) < 0)
		return rc;
	c[0] = str_col("GROUP", "group", NULL);
	c[1] = num_col("MEMBERS", "members", 0, 0);
	emit_header(o, c, 2);
	for (size_t i = 0; i < groups.n; i++) {
		if (klog_layout_group_validate(groups.names[i], NULL) < 0)
			continue;
		rc = klog_layout_members(zk, groups.names[i], 0, &members,
		    err);
		if (rc < 0)
			break;
		c[0] = str_col("GROUP", "group", groups.names[i]);
		c[1] = num_col("MEMBERS", "members", (int64_t)members.n, 1);
		klog_zk_list_free(&members);
		emit(o, b, c, 2);
	}
	klog_zk_list_free(&groups);
	return rc;
}

static int
describe_topic(klog_zk_t *zk, const opts_t *o, brokers_t *brs,
    const char *topic, klog_buf_t *b, klog_err_t *err)
{
	char name[KLOG_LAYOUT_PART_NAME_MAX], *owner;
	int64_t cur, end;
	int has_cur, has_end, rc;
	part_t *parts;
	size_t n;
	col_t c[7];

	if ((rc = klog_positions_parts(zk, o->group, topic, &parts, &n,
	    err)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		rc = klog_layout_offset_read(zk, o->group, topic,
		    parts[i].broker, parts[i].part, &cur, err);
		if (rc < 0 && rc != -KLOG_ENOENT && rc != -KLOG_ECORRUPT)
			break;
		has_cur = rc == 0;
		rc = klog_layout_owner_read(zk, o->group, topic,
		    parts[i].broker, parts[i].part, &owner, err);
		if (rc < 0 && rc != -KLOG_ENOENT)
			break;
		has_end = klog_positions_ask_offset(brs, topic, &parts[i],
		    KLOG_OFFSET_LATEST, (int)o->timeout_ms, &end, NULL) == 0;
		klog_layout_part_name(name, sizeof(name), parts[i].broker,
		    parts[i].part);
		c[0] = str_col("GROUP", "group", o->group);
		c[1] = str_col("TOPIC", "topic", topic);
		c[2] = str_col("PARTITION", "partition", name);
		c[3] = num_col("CURRENT", "current", cur, has_cur);
		c[4] = num_col("LOG_END", "log_end", end, has_end);
		c[5] = num_col("LAG_BYTES", "lag_bytes", end - cur,
		    has_cur && has_end);
		c[6] = str_col("OWNER", "owner", owner);
		emit(o, b, c, 7);
		free(owner);
		rc = 0;
	}
	free(parts);
	return rc;
}

static int
cmd_describe(klog_zk_t *zk, const opts_t *o, klog_buf_t *b, klog_err_t *err)
{
	klog_zk_list_t topics = { 0 };
	brokers_t brs = { 0 };
	col_t c[7] = {
		{ .name = "GROUP" }, { .name = "TOPIC" },
		{ .name = "PARTITION" }, { .name = "CURRENT" },
		{ .name = "LOG_END" }, { .name = "LAG_BYTES" },
		{ .name = "OWNER" },
	};
	int rc;

	if ((rc = group_exists(zk, o->group, err)) < 0)
		return rc;
	if (o->topic == NULL) {
		if ((rc = klog_layout_group_topics(zk, o->group, &topics,
		    err)) < 0)
			return rc;
	}
	if ((rc = klog_positions_brokers_load(zk, &brs, err)) < 0)
		goto out;
	emit_header(o, c, 7);
	if (o->topic != NULL)
		rc = describe_topic(zk, o, &brs, o->topic, b, err);
	for (size_t i = 0; rc == 0 && i < topics.n; i++)
		if (klog_topic_validate(topics.names[i], NULL) == 0)
			rc = describe_topic(zk, o, &brs, topics.names[i], b,
			    err);
out:
	klog_positions_brokers_free(&brs);
	klog_zk_list_free(&topics);
	return rc;
}

/* Refuse to touch a group whose consumers are running. */
static int
check_idle(klog_zk_t *zk, const opts_t *o, klog_err_t *err)
{
	klog_zk_list_t m;
	int rc;

	if ((rc = klog_layout_members(zk, o->group, 0, &m, err)) < 0)
		return rc;
	if (m.n > 0 && !o->force)
		rc = klog_err_set(err, -KLOG_EBUSY, "group \"%s\" has %zu live "
		    "member%s (%s%s); stop them first, or use --force",
		    o->group, m.n, m.n == 1 ? "" : "s", m.names[0],
		    m.n > 1 ? ", ..." : "");
	klog_zk_list_free(&m);
	return rc;
}

static int
new_offset(const opts_t *o, brokers_t *brs, const part_t *p, int64_t *off,
    klog_err_t *err)
{
	int timeout = (int)o->timeout_ms;
	int rc;

	switch (o->to) {
	case TO_OFFSET:
		*off = o->to_value;
		return 0;
	case TO_EARLIEST:
		return klog_positions_ask_offset(brs, o->topic, p,
		    KLOG_OFFSET_EARLIEST, timeout, off, err);
	case TO_LATEST:
		return klog_positions_ask_offset(brs, o->topic, p,
		    KLOG_OFFSET_LATEST, timeout, off, err);
	default:
		rc = klog_positions_ask_offset(brs, o->topic, p, o->to_value,
		    timeout, off, err);
		/* Nothing that old: everything there is is newer. */
		if (rc == -KLOG_ENOENT)
			rc = klog_positions_ask_offset(brs, o->topic, p,
			    KLOG_OFFSET_EARLIEST, timeout, off, err);
		return rc;
	}
}

static int
cmd_reset(klog_zk_t *zk, const opts_t *o, klog_buf_t *b, klog_err_t *err)
{
	char name[KLOG_LAYOUT_PART_NAME_MAX];
	brokers_t brs = { 0 };
	part_t *parts = NULL;
	int64_t *before = NULL, *after = NULL;
	size_t n = 0, i;
	col_t c[5];
	int rc;

	if ((rc = check_idle(zk, o, err)) < 0)
		return rc;
	if ((rc = klog_positions_parts(zk, o->group, o->topic, &parts, &n,
	    err)) < 0)
		return rc;
	if (n == 0) {
		rc = klog_err_set(err, -KLOG_ENOTOPIC, "topic \"%s\": no "
		    "partitions registered or committed", o->topic);
		goto out;
	}
	before = calloc(n, sizeof(*before));
	after = calloc(n, sizeof(*after));
	if (before == NULL || after == NULL) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "%s",
		    klog_strerror(KLOG_ENOMEM));
		goto out;
	}
	if ((rc = klog_positions_brokers_load(zk, &brs, err)) < 0)
		goto out;
	/* Work out every new offset before writing any. */
	for (i = 0; i < n; i++) {
		rc = klog_layout_offset_read(zk, o->group, o->topic,
		    parts[i].broker, parts[i].part, &before[i], err);
		if (rc == -KLOG_ENOENT || rc == -KLOG_ECORRUPT)
			before[i] = -1;
		else if (rc < 0)
			goto out;
		if ((rc = new_offset(o, &brs, &parts[i], &after[i], err)) < 0)
			goto out;
	}
	for (i = 0; i < n && o->execute; i++) {
		rc = klog_layout_offset_commit(zk, o->group, o->topic,
		    parts[i].broker, parts[i].part, after[i], err);
		if (rc < 0)
			goto out;
	}
	for (i = 0; i < n; i++) {
		klog_layout_part_name(name, sizeof(name), parts[i].broker,
		    parts[i].part);
		c[0] = str_col("GROUP", "group", o->group);
		c[1] = str_col("TOPIC", "topic", o->topic);
		c[2] = str_col("PARTITION", "partition", name);
		c[3] = num_col("BEFORE", "before", before[i], before[i] >= 0);
		c[4] = num_col("AFTER", "after", after[i], 1);
		if (i == 0)
			emit_header(o, c, 5);
		emit(o, b, c, 5);
	}
	if (!o->execute && fflush(stdout) != EOF)
		fprintf(stderr, PROG ": dry run: nothing changed (use "
		    "--execute)\n");
out:
	klog_positions_brokers_free(&brs);
	free(parts);
	free(before);
	free(after);
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

static int
topics_unreplicated(klog_zk_t *zk, const opts_t *o, klog_buf_t *b,
    klog_err_t *err)
{
	klog_layout_topic_t *t = NULL, one;
	char name[KLOG_LAYOUT_PART_NAME_MAX], addr[KLOG_LAYOUT_HOST_MAX + 8];
	const klog_layout_broker_t *br;
	brokers_t brs = { 0 };
	size_t n = 0;
	col_t c[4];
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
	c[0] = str_col("TOPIC", "topic", NULL);
	c[1] = str_col("PARTITION", "partition", NULL);
	c[2] = num_col("BROKER", "broker", 0, 0);
	c[3] = str_col("ADDRESS", "address", NULL);
	emit_header(o, c, 4);
	for (size_t i = 0; i < n; i++) {
		for (size_t h = 0; h < t[i].nholders; h++) {
			br = klog_positions_broker_find(&brs,
			    t[i].holders[h].broker_id, NULL);
			if (br != NULL)
				snprintf(addr, sizeof(addr), "%s:%d", br->host,
				    br->port);
			for (int32_t p = 0; p < t[i].holders[h].partitions;
			    p++) {
				klog_layout_part_name(name, sizeof(name),
				    t[i].holders[h].broker_id, p);
				c[0] = str_col("TOPIC", "topic", t[i].name);
				c[1] = str_col("PARTITION", "partition", name);
				c[2] = num_col("BROKER", "broker",
				    t[i].holders[h].broker_id, 1);
				c[3] = str_col("ADDRESS", "address",
				    br != NULL ? addr : NULL);
				emit(o, b, c, 4);
			}
		}
	}
out:
	klog_positions_brokers_free(&brs);
	klog_layout_topics_free(t, n);
	return rc;
}

/* The columns of a replicated topic's partition, as topics and
 * create-topic show them. */
#define RCOLS 6

static void
rcols(col_t *c, const char *topic, int p, int32_t leader,
    const klog_rtopic_t *t, const klog_rstate_t *s)
{
	c[0] = str_col("TOPIC", "topic", topic);
	c[1] = num_col("PARTITION", "partition", p, 1);
	c[2] = num_col("LEADER", "leader", leader, 1);
	c[3] = num_col("LEADER_EPOCH", "leader_epoch",
	    s != NULL ? s->leader_epoch : 0, s != NULL);
	c[4] = ids_col("REPLICAS", "replicas", t != NULL ?
	    t->replicas + (size_t)p * (size_t)t->rf : NULL,
	    t != NULL ? t->rf : 0);
	c[5] = ids_col("ISR", "isr", s != NULL ? s->isr : NULL,
	    s != NULL ? s->nisr : 0);
}

static void
rheader(const opts_t *o)
{
	col_t c[RCOLS];

	rcols(c, NULL, 0, -1, NULL, NULL);
	emit_header(o, c, RCOLS);
}

/*
 * A replicated topic's partitions: the leader is the broker holding the
 * leader node (-1 while none does: before the first election, or between
 * a leader's death and the next), with the epoch, replicas and isr of
 * the partition's state.
 */
static int
topic_replicated(klog_zk_t *zk, const opts_t *o, const char *topic,
    klog_buf_t *b, klog_err_t *err)
{
	klog_rtopic_t t;
	klog_rstate_t s;
	col_t c[RCOLS];
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
		emit(o, b, c, RCOLS);
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
cmd_topics(klog_zk_t *zk, const opts_t *o, klog_buf_t *b, klog_err_t *err)
{
	klog_zk_list_t rl;
	int rc;

	if ((rc = klog_rtopics_list(zk, 0, &rl, err)) < 0)
		return rc;
	if (o->topic != NULL && is_listed(&rl, o->topic)) {
		rheader(o);
		rc = topic_replicated(zk, o, o->topic, b, err);
		goto out;
	}
	if ((rc = topics_unreplicated(zk, o, b, err)) < 0 || rl.n == 0 ||
	    o->topic != NULL)
		goto out;
	rheader(o);
	for (size_t i = 0; rc == 0 && i < rl.n; i++)
		if (klog_topic_validate(rl.names[i], NULL) == 0)
			rc = topic_replicated(zk, o, rl.names[i], b, err);
out:
	klog_zk_list_free(&rl);
	return rc;
}

/* A random start spreads the first leader over the brokers, as Kafka's
 * random start index does; the clock stands in if getrandom fails. */
static int
cmd_create_topic(klog_zk_t *zk, const opts_t *o, klog_buf_t *b,
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
	rheader(o);
	return topic_replicated(zk, o, o->topic, b, err);
}

/* Partitions are added over the live brokers (rtadmin.h); the brokers
 * take them up by themselves.  Shown as topics -t would. */
static int
cmd_alter_topic(klog_zk_t *zk, const opts_t *o, klog_buf_t *b,
    klog_err_t *err)
{
	klog_rtopic_t t;
	int rc;

	rc = klog_rtadmin_alter(zk, o->topic, o->nparts, &t, err);
	klog_rtopic_free(&t);
	if (rc < 0)
		return rc;
	rheader(o);
	return topic_replicated(zk, o, o->topic, b, err);
}

/*
 * Mark the topic and wait for the brokers holding a copy to remove it
 * (rtadmin.h): brokers that are down are named on stderr and finish it
 * when they come back; live ones that do not finish within -T are
 * ETIMEDOUT, the topic staying marked.
 */
static int
cmd_delete_topic(klog_zk_t *zk, const opts_t *o, klog_buf_t *b,
    klog_err_t *err)
{
	int32_t ids[64];
	char list[sizeof(ids) / sizeof(ids[0]) * 12];
	int nparts = 0, already, rc, n;
	klog_rtopic_t t;
	col_t col[2];

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
	col[0] = str_col("TOPIC", "topic", o->topic);
	col[1] = num_col("PARTITIONS", "partitions", nparts, 1);
	emit_header(o, col, 2);
	emit(o, b, col, 2);
	return 0;
}

static int
cmd_brokers(klog_zk_t *zk, const opts_t *o, klog_buf_t *b, klog_err_t *err)
{
	brokers_t brs = { 0 };
	col_t c[3];
	int rc;

	if ((rc = klog_positions_brokers_load(zk, &brs, err)) < 0)
		return rc;
	c[0] = num_col("BROKER", "broker", 0, 0);
	c[1] = str_col("HOST", "host", NULL);
	c[2] = num_col("PORT", "port", 0, 0);
	emit_header(o, c, 3);
	for (size_t i = 0; i < brs.n; i++) {
		c[0] = num_col("BROKER", "broker", brs.v[i].id, 1);
		c[1] = str_col("HOST", "host", brs.v[i].host);
		c[2] = num_col("PORT", "port", brs.v[i].port, 1);
		emit(o, b, c, 3);
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
	default:
		return klog_err_set(err, -KLOG_EBROKER, "%s: topic \"%s\": "
		    "the broker answered %s (its log says why)", cmd, topic,
		    klog_wire_error_name(error));
	}
}

/* create-topic, alter-topic or delete-topic on the broker of -b (the
 * first of a list): one request, then the topic as it is now. */
static int
cmd_broker_topic(const char *cmd, const opts_t *o, klog_buf_t *b,
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
	col_t col[2];
	int rc;

	if (klog_client_parse_brokers(o->where.brokers, &addrs, &n, err) < 0)
		cli_misuse("-b %s: %s", o->where.brokers, err->msg);
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
	col[0] = str_col("TOPIC", "topic", o->topic);
	col[1] = num_col("PARTITIONS", "partitions", now, 1);
	emit_header(o, col, 2);
	emit(o, b, col, 2);
	return 0;
}

int
main(int argc, char **argv)
{
	opts_t o = { .header = 1, .timeout_ms = DEFAULT_TIMEOUT_MS };
	klog_err_t err = { 0, "" };
	klog_zk_t *zk = NULL;
	klog_buf_t line;
	const char *cmd;
	int rc, status;

	cli_init(PROG);
	cli_where_init(&o.where);
	cmd = parse_opts(argc, argv, &o);
	check_opts(cmd, &o);
	klog_buf_init(&line);
	if (o.where.brokers_given) {
		rc = cmd_broker_topic(cmd, &o, &line, &err);
		goto out;
	}
	if ((rc = cli_zk_open(o.where.zookeeper, o.where.zk_session_ms,
	    (int)o.timeout_ms, &zk)) < 0)
		return klog_exit_for(rc);
	if (strcmp(cmd, "list") == 0)
		rc = cmd_list(zk, &o, &line, &err);
	else if (strcmp(cmd, "describe") == 0)
		rc = cmd_describe(zk, &o, &line, &err);
	else if (strcmp(cmd, "reset") == 0)
		rc = cmd_reset(zk, &o, &line, &err);
	else if (strcmp(cmd, "delete") == 0)
		rc = cmd_delete(zk, &o, &err);
	else if (strcmp(cmd, "topics") == 0)
		rc = cmd_topics(zk, &o, &line, &err);
	else if (strcmp(cmd, "create-topic") == 0)
		rc = cmd_create_topic(zk, &o, &line, &err);
	else if (strcmp(cmd, "alter-topic") == 0)
		rc = cmd_alter_topic(zk, &o, &line, &err);
	else if (strcmp(cmd, "delete-topic") == 0)
		rc = cmd_delete_topic(zk, &o, &line, &err);
	else
		rc = cmd_brokers(zk, &o, &line, &err);
out:
	status = rc < 0 ? fail(rc, &err) : KLOG_EXIT_OK;
	if (line.failed && status == KLOG_EXIT_OK)
		status = fail(-KLOG_ENOMEM, NULL);
	klog_buf_free(&line);
	klog_zk_close(zk);
	return cli_stdout_check() != 0 ? KLOG_EXIT_IOERR : status;
}
