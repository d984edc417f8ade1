/*
 * klog-consume: read a topic and write its messages to stdout, following
 * like tail -f or stopping at the end.  Fetching is lib/client/consumer.c, the
 * output formats lib/client/outfmt.c, the offset file lib/client/offsetfile.c.  See
 * klog-consume(1).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "klog/base/clock.h"
#include "klog/base/exit.h"
#include "klog/base/json.h"
#include "klog/base/parse.h"
#include "klog/client/client.h"
#include "klog/client/consumer.h"
#include "klog/client/discovery.h"
#include "klog/client/offsetfile.h"
#include "klog/client/outfmt.h"
#include "klog/group/member.h"
#include "klog/storage/log.h"
#include "klog/zk/layout.h"
#include "klog/zk/zk.h"

#define PROG "klog-consume"
#define OUT_FLUSH ((size_t)1 << 20)
#define SAVE_EVERY_MS 1000
#define COMMIT_EVERY_MS 1000
#define MAX_PARTS 1024

enum {
	OPT_COMMIT_INTERVAL = 256,
	OPT_FETCH_SIZE,
	OPT_OFFSET_FILE,
	OPT_OFFSETS_FROM,
	OPT_RESET,
	OPT_PROGRESS,
	OPT_RETRY_FOR,
	OPT_SKIP_CORRUPT,
	OPT_VERSION,
};

typedef struct opts {
	cli_where_t where;         /* -b, -Z, --zk-session-timeout */
	const char *group;         /* -G */
	int64_t commit_ms;
	const char *topic;
	const char *format;
	const char *delim;
	const char *offset_file;
	const char *offsets_from;  /* --offsets-from: read, never written */
	klog_consumer_config_t cc;
	int32_t parts[MAX_PARTS];
	size_t nparts;
	int offset_given;
	int64_t count;             /* -c, or -1 */
	int json, list, unbuffered, quiet, verbose;
	int progress;              /* --progress */
	int formats;               /* -f, -J and -D given: at most one */
	int commit_given;          /* --commit-interval */
} opts_t;

static const char optstring[] = ":b:c:D:ef:F:G:hJLm:o:p:qt:uvX:Z:";
static const struct option longopts[] = {
	{ "broker", required_argument, NULL, 'b' },
	{ "commit-interval", required_argument, NULL, OPT_COMMIT_INTERVAL },
	{ "count", required_argument, NULL, 'c' },
	{ "delimiter", required_argument, NULL, 'D' },
	{ "exit", no_argument, NULL, 'e' },
	{ "fetch-size", required_argument, NULL, OPT_FETCH_SIZE },
	{ "format", required_argument, NULL, 'f' },
	{ "group", required_argument, NULL, 'G' },
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, 'J' },
	{ "list", no_argument, NULL, 'L' },
	{ "offset", required_argument, NULL, 'o' },
	{ "offset-file", required_argument, NULL, OPT_OFFSET_FILE },
	{ "offsets-from", required_argument, NULL, OPT_OFFSETS_FROM },
	{ "partition", required_argument, NULL, 'p' },
	{ "property", required_argument, NULL, 'X' },
	{ "property-file", required_argument, NULL, 'F' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "reset", required_argument, NULL, OPT_RESET },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "retry-for", required_argument, NULL, OPT_RETRY_FOR },
	{ "skip-corrupt", no_argument, NULL, OPT_SKIP_CORRUPT },
	{ "timeout", required_argument, NULL, 'm' },
	{ "topic", required_argument, NULL, 't' },
	{ "unbuffered", no_argument, NULL, 'u' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "zk-session-timeout", required_argument, NULL, CLI_OPT_ZK_SESSION },
	{ "zk-auth-file", required_argument, NULL, CLI_OPT_ZK_AUTH },
	{ "zookeeper", required_argument, NULL, 'Z' },
	{ NULL, 0, NULL, 0 },
};

/* The help text, in sections printed in order. */
static const char *const usage_text[] = {
	/* synopsis */
	"usage: " PROG " [-eJLhquv] [-b brokers] [-c count] [-D delim] "
	"[-f format] [-m timeout]\n"
	"                    [-o offset] [-p partition]... "
	"[--fetch-size size] [--offset-file file]\n"
	"                    [--offsets-from file] [--reset how] "
	"[--progress] [--retry-for time] [--skip-corrupt]\n"
	"                    [-X key=value] [-F file] -t topic\n"
	"       " PROG " -Z connect [-G group] [options] -t topic\n"
	"       " PROG " -L [-b brokers | -Z connect] [-t topic]\n"
	"Read a topic and write its messages to stdout.\n"
	"\n",
	/* where the brokers are, and the group */
	"  -b, --broker LIST      brokers, HOST:PORT[,...] (default: "
	"$KLOG_BROKERS or\n"
	"                         " CLI_DEFAULT_BROKERS ")\n"
	"  -Z, --zookeeper CONNECT  cluster mode: find the brokers in "
	"ZooKeeper at\n"
	"                         host:port[,...][/chroot] (default: "
	"$KLOG_ZOOKEEPER\n"
	"                         unless -b is given)\n"
	"  -G, --group GROUP      read as a member of this consumer group "
	"(needs -Z):\n"
	"                         a share of the partitions, offsets kept "
	"in ZooKeeper\n"
	"      --commit-interval TIME  commit the group's offsets this "
	"often (default 1s)\n"
	"      --zk-session-timeout TIME  requested ZooKeeper session "
	"timeout (default\n"
	"                         6000ms)\n"
	CLI_WHERE_USAGE,
	/* what to read, from where, until when */
	"  -t, --topic TOPIC      the topic\n"
	"  -p, --partition N      only partition N (repeatable; default: "
	"all, merged)\n"
	"  -o, --offset WHERE     beginning, end (default), a byte offset "
	"that starts a\n"
	"                         message, or s@TIME: the first record at "
	"or after TIME\n"
	"                         (Unix ms or 2026-11-29T10:00:00Z), or -N: "
	"the last N\n"
	"                         messages\n"
	"  -e, --exit             stop at the end each partition had at "
	"start\n"
	"  -c, --count N          stop after N messages in all\n",
	/* the output, the offset files, the fetch */
	"  -f, --format FMT       %s payload, %S size, %R size (4 bytes),"
	" %o offset,\n"
	"                         %O next offset, %p partition, %t topic,"
	" %k key,\n"
	"                         %K key size, %T timestamp (ms), %h "
	"headers, %%;\n"
	"                         \\n \\t \\0 \\xNN (default '%s\\n')\n"
	"  -J, --json             one JSON object per message (NDJSON), "
	"with key,\n"
	"                         timestamp and headers when it has them\n"
	"  -D, --delimiter D      write D after each payload (-f '%sD')\n"
	"  -u, --unbuffered       flush stdout after every message\n"
	"      --offset-file F    resume from F and keep it up to date\n"
	"      --offsets-from F   start from F, never write it (a mirror's "
	"bookmark)\n"
	"      --reset HOW        offset outside the log (past the end, "
	"before the start,\n"
	"                         deleted): earliest (default), latest, "
	"fail\n"
	"      --fetch-size SIZE  bytes per partition per fetch (default "
	"1M)\n",
	/* listing, waiting, chatter; the exit status */
	"  -L, --list             list topics, partitions, earliest and "
	"latest offsets\n"
	"                         (with -J: one JSON object per "
	"partition)\n"
	"  -m, --timeout TIME     connect and request timeout (default "
	"5s)\n"
	"      --retry-for TIME   give up reconnecting, or waiting for a "
	"partition's\n"
	"                         leader, after TIME (default 30s)\n"
	"      --progress         with -e: progress on stderr even when it "
	"is not a terminal\n"
	"      --skip-corrupt     warn of a damaged message (its CRC, or "
	"its length)\n"
	"                         and go on at the next valid one, "
	"rather than stop (65)\n"
	"  -q, --quiet            no messages but errors\n"
	"  -v, --verbose          statistics on stderr at the end\n"
	"  -h, --help             print this help\n"
	"      --version          print the version\n"
	"\n"
	"Exit status: 0 ok, 1 failure, 64 usage, 65 corrupt data, "
	"69 broker or ZooKeeper\n"
	"unavailable, "
	"74 I/O error, 77 authentication failed (a certificate, SASL "
	"credentials or\nthe ZooKeeper identity refused) or not authorized.\n",
};

static void
usage(FILE *f)
{
	for (size_t i = 0; i < sizeof(usage_text) / sizeof(usage_text[0]); i++)
		fputs(usage_text[i], f);
}

static void
parse_offset(opts_t *o, const char *s)
{
	const char *why;

	o->offset_given = 1;
	if (strcmp(s, "beginning") == 0) {
		o->cc.start = KLOG_CONSUMER_BEGINNING;
	} else if (strcmp(s, "end") == 0) {
		o->cc.start = KLOG_CONSUMER_END;
	} else if (strncmp(s, "s@", 2) == 0) {
		o->cc.start = KLOG_CONSUMER_TIME;
		if (klog_parse_time_ms(s + 2, &o->cc.start_time_ms, &why) < 0)
			cli_misuse("-o %s: %s", s, why);
	} else if (s[0] == '-') {
		o->cc.start = KLOG_CONSUMER_LAST;
		o->cc.last_n = cli_number("-o -N", s + 1, 1, INT64_MAX);
	} else {
		o->cc.start = cli_number("-o", s, 0, INT64_MAX);
	}
}

/* -p N: one more partition; -p is a list (-p 0 -p 3 reads both). */
static void
add_partition(opts_t *o, const char *arg)
{
	if (o->nparts == MAX_PARTS)
		cli_misuse("-p: at most %d partitions", MAX_PARTS);
	o->parts[o->nparts] = (int32_t)cli_number("-p", arg, 0, INT32_MAX);
	/* The same partition twice would be read twice at once, and never
	 * end. */
	for (size_t i = 0; i < o->nparts; i++)
		if (o->parts[i] == o->parts[o->nparts])
			cli_misuse("-p %s given twice", arg);
	o->nparts++;
}

static int
parse_reset(const char *arg)
{
	if (strcmp(arg, "earliest") == 0)
		return KLOG_CONSUMER_RESET_EARLIEST;
	if (strcmp(arg, "latest") == 0)
		return KLOG_CONSUMER_RESET_LATEST;
	if (strcmp(arg, "fail") != 0)
		cli_misuse("--reset %s: expected earliest, latest or fail",
		    arg);
	return KLOG_CONSUMER_RESET_FAIL;
}

/* What to read, from where (-o, -p, the offset files, the group), and how
 * (durations: a bare number is milliseconds). */
static int
take_read(opts_t *o, int ch, const char *arg)
{
	switch (ch) {
	case 't':
		o->topic = arg;
		return 1;
	case 'p':
		add_partition(o, arg);
		return 1;
	case 'o':
		parse_offset(o, arg);
		return 1;
	case 'G':
		o->group = arg;
		return 1;
	case OPT_COMMIT_INTERVAL:
		o->commit_ms = cli_duration("--commit-interval", arg, 1, 10,
		    24 * 3600000LL);
		o->commit_given = 1;
		return 1;
	case OPT_OFFSET_FILE:
		o->offset_file = arg;
		return 1;
	case OPT_OFFSETS_FROM:
		o->offsets_from = arg;
		return 1;
	case OPT_RESET:
		o->cc.reset = parse_reset(arg);
		return 1;
	case 'e':
		o->cc.exit_at_end = 1;
		return 1;
	case 'L':
		o->list = 1;
		return 1;
	default:
		return 0;
	}
}

/* How to fetch: sizes, timeouts, damaged messages. */
static int
take_fetch(opts_t *o, int ch, const char *arg)
{
	switch (ch) {
	case 'm':
		o->cc.connect_timeout_ms = (int)cli_duration("-m", arg, 1, 1,
		    3600000);
		return 1;
	case OPT_FETCH_SIZE:
		o->cc.fetch_bytes = (int32_t)cli_size("--fetch-size", arg,
		    1024, 64 << 20);
		return 1;
	case OPT_RETRY_FOR:
		o->cc.retry_for_ms = cli_duration("--retry-for", arg, 1, 0,
		    INT32_MAX);
		return 1;
	case OPT_SKIP_CORRUPT:
		o->cc.skip_corrupt = 1;
		return 1;
	default:
		return 0;
	}
}

/* What goes to stdout, and what to stderr. */
static int
take_output(opts_t *o, int ch, const char *arg)
{
	switch (ch) {
	case 'f':
		o->format = arg;
		o->formats++;
		return 1;
	case 'J':
		o->json = 1;
		o->formats++;
		return 1;
	case 'D':
		o->delim = arg;
		o->formats++;
		return 1;
	case 'c':
		o->count = cli_number("-c", arg, 1, INT64_MAX);
		return 1;
	case 'u':
		o->unbuffered = 1;
		return 1;
	case 'q':
		o->quiet = 1;
		return 1;
	case 'v':
		o->verbose = 1;
		return 1;
	case OPT_PROGRESS:
		o->progress = 1;
		return 1;
	default:
		return 0;
	}
}

/* The options together, once all are taken. */
static void
check_opts(opts_t *o)
{
	klog_err_t err = { 0 };

	cli_where_check(&o->where);
	if (o->group != NULL && o->where.zookeeper == NULL)
		cli_misuse("-G needs -Z (or $KLOG_ZOOKEEPER): a group's "
		    "offsets live in ZooKeeper");
	if (o->group != NULL && o->list)
		cli_misuse("-G and -L cannot be used together");
	if (o->group != NULL && o->nparts > 0)
		cli_misuse("-G and -p cannot be used together: the group "
		    "assigns the partitions");
	if (o->group != NULL && o->offset_file != NULL)
		cli_misuse("-G and --offset-file cannot be used together: the "
		    "group keeps the offsets");
	if (o->offset_file != NULL && o->offsets_from != NULL)
		cli_misuse("--offset-file and --offsets-from cannot be used "
		    "together");
	if (o->offsets_from != NULL && o->list)
		cli_misuse("--offsets-from and -L cannot be used together");
	if (o->commit_given && o->group == NULL)
		cli_misuse("--commit-interval needs -G");
	if (o->topic == NULL && !o->list)
		cli_misuse("no topic given (-t)");
	if (o->formats > 1)
		cli_misuse("-f, -J and -D cannot be used together");
	if (o->quiet && o->verbose)
		cli_misuse("-q and -v cannot be used together");
	if (o->topic != NULL && klog_topic_validate(o->topic, &err) < 0)
		cli_misuse("%s", err.msg);
	if (o->group != NULL && klog_layout_group_validate(o->group, &err) < 0)
		cli_misuse("-G %s", err.msg);
}

static void
parse_args(int argc, char **argv, opts_t *o)
{
	cli_seen_t seen = { { 0 } };
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, optstring, longopts, NULL)) !=
	    -1) {
		/* -p is a list. */
		if (ch != 'p')
			cli_once(&seen, ch, longopts);
		if (cli_where_option(&o->where, ch, optarg) ||
		    take_read(o, ch, optarg) || take_fetch(o, ch, optarg) ||
		    take_output(o, ch, optarg))
			continue;
		if (ch == 'h')
			cli_help(usage);
		if (ch == OPT_VERSION)
			cli_version();
		cli_option_error(ch, argv);
	}
	if (optind < argc)
		cli_misuse("%s: unexpected argument", argv[optind]);
	check_opts(o);
	/* A message bigger than the fetch size grows it up to this. */
	if (o->cc.fetch_max_bytes < o->cc.fetch_bytes)
		o->cc.fetch_max_bytes = o->cc.fetch_bytes;
}

static klog_outfmt_t *
compile_format(const opts_t *o)
{
	klog_outfmt_t *f = NULL;
	klog_err_t err = { 0 };
	int rc;

	if (o->json)
		rc = klog_outfmt_json(&f);
	else if (o->delim != NULL)
		rc = klog_outfmt_delimited(o->delim, &f, &err);
	else
		rc = klog_outfmt_compile(o->format ? o->format : "%s\\n", &f,
		    &err);
	if (rc == -KLOG_ENOMEM)
		cli_misuse("out of memory");
	if (rc < 0)
		cli_misuse("%s %s: %s", o->delim ? "-D" : "-f",
		    o->delim ? o->delim : o->format, err.msg);
	return f;
}

typedef struct run {
	const opts_t *o;
	cli_where_t *where;        /* o's, freed at the end */
	klog_consumer_t *c;
	klog_zk_t *zk;             /* cluster mode */
	klog_discovery_t *d;
	klog_member_t *mb;         /* -G */
	klog_outfmt_t *fmt;
	size_t topic_len;          /* of o->topic, rendered per message */
	klog_buf_t out;
	klog_offsetfile_t of;
	int64_t saved_ms;
	uint64_t messages, bytes;
	int stdout_errno;
	int save_failed;           /* the offset file could not be written */
	cli_progress_t prog;       /* -e's catch-up */
	int64_t from, to;          /* its bytes: the positions and ends at
	                              open, summed over the partitions */
} run_t;

/* With -e, how far the catch-up has got: bytes past the positions at open
 * toward the ends then, summed over the partitions; now and then, since
 * it walks them. */
static void
progress(run_t *r)
{
	int64_t at = 0;

	if (r->prog.mode == 0 || r->messages % 4096 != 1)
		return;
	for (size_t i = 0; i < klog_consumer_count(r->c); i++)
		at += klog_consumer_position(r->c, i);
	cli_progress_update(&r->prog, r->o->topic, (uint64_t)(at - r->from),
	    (uint64_t)(r->to - r->from), r->messages, "messages");
}

static void
progress_start(run_t *r)
{
	int tty_out = isatty(STDOUT_FILENO);

	cli_progress_init(&r->prog, r->o->quiet || !r->o->cc.exit_at_end ||
	    tty_out, r->o->progress);
	for (size_t i = 0; r->prog.mode != 0 &&
	    i < klog_consumer_count(r->c); i++) {
		r->from += klog_consumer_position(r->c, i);
		r->to += klog_consumer_end(r->c, i);
	}
}

/* Write the output buffer to stdout; the first failure sticks. */
static int
flush_out(run_t *r)
{
	size_t off = 0;
	ssize_t n;

	if (r->stdout_errno)
		return -1;
	if (r->out.failed) {
		r->stdout_errno = ENOMEM;
		return -1;
	}
	while (off < r->out.len) {
		n = write(STDOUT_FILENO, r->out.data + off, r->out.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r->stdout_errno = errno;
			return -1;
		}
		off += (size_t)n;
	}
	klog_buf_reset(&r->out);
	return 0;
}

/* Record every position in the offset file (after a flush only); a
 * failure is reported once and stops the run with status 74. */
static int
save_offsets(run_t *r, int64_t now)
{
	klog_err_t err = { 0 };

	if (r->o->offset_file == NULL || r->stdout_errno || r->save_failed)
		return r->save_failed ? -1 : 0;
	for (size_t i = 0; i < klog_consumer_count(r->c); i++)
		if (klog_offsetfile_set(&r->of, r->o->topic,
		    klog_consumer_partition(r->c, i),
		    klog_consumer_position(r->c, i)) < 0) {
			klog_err_set(&err, -KLOG_ENOMEM, "out of memory");
			goto fail;
		}
	if (klog_offsetfile_save(&r->of, &err) < 0)
		goto fail;
	r->saved_ms = now;
	return 0;
fail:
	fprintf(stderr, PROG ": %s\n", err.msg);
	r->save_failed = 1;
	return -1;
}

/* Render m; 1 if the run ends with it (stdout failed, or -c is reached). */
static int
emit(run_t *r, const klog_consumer_msg_t *m)
{
	klog_outfmt_rec_t rec = {
		.topic = r->o->topic, .topic_len = r->topic_len,
		.partition = m->partition, .offset = m->offset,
		.next_offset = m->next_offset, .payload = m->payload,
		.payload_len = m->payload_len, .key = m->key,
		.key_len = m->key_len, .timestamp = m->timestamp,
		.headers = m->headers, .headers_len = m->headers_len,
		.header_count = m->header_count,
	};

	klog_outfmt_render(r->fmt, &rec, &r->out);
	r->messages++;
	r->bytes += m->payload_len;
	if ((r->o->unbuffered || r->out.len >= OUT_FLUSH) && flush_out(r) < 0)
		return 1;
	return r->o->count > 0 && r->messages >= (uint64_t)r->o->count;
}

/*
 * Cluster mode: take ZooKeeper's news, as klog-produce does.  Without it an
 * expired session would never be replaced and no lost partition found
 * again; with it a partition waiting for its leader is asked for at once.
 */
static void
cluster_events(run_t *r)
{
	if (r->zk != NULL && cli_zk_news(r->d, r->o->quiet))
		klog_consumer_refresh(r->c);
}

/* Consume until the end, the count, a signal or an error (returned). */
static int
consume(run_t *r, klog_err_t *err)
{
	klog_consumer_msg_t m;
	int64_t now;
	int rc;

	while (!cli_stopped()) {
		rc = klog_consumer_next(r->c, &m, err);
		if (rc < 0)
			return rc;
		if (rc == KLOG_CONSUMER_MSG) {
			if (emit(r, &m))
				return 0;
			progress(r);
			continue;
		}
		if (rc == KLOG_CONSUMER_NOTICE) {
			if (!r->o->quiet)
				fprintf(stderr, PROG ": %s\n", err->msg);
			continue;
		}
		if (flush_out(r) < 0)
			return 0;
		if (rc == KLOG_CONSUMER_DONE)
			return 0;
		cluster_events(r);
		now = klog_clock_mono_ms();
		if (now - r->saved_ms >= SAVE_EVERY_MS &&
		    save_offsets(r, now) < 0)
			return 0;
	}
	return 0;
}

/* ---- -G: a member of a consumer group (lib/group/member.c) ---- */

static int
member_flush(void *arg)
{
	return flush_out(arg);
}

/* -q: no line; -v: the details as well (debug). */
static void
member_log(void *arg, int level, const char *line)
{
	(void)arg;
	(void)level;
	fprintf(stderr, PROG ": %s\n", line);
}

/*
 * Consume as a group member until the end (-e: everything this member
 * owns read to its end, and no rebalance pending), the count, a signal or
 * an error (returned).
 */
static int
consume_group(run_t *r, klog_err_t *err)
{
	klog_consumer_msg_t m;
	int rc;

	while (!cli_stopped() && !r->stdout_errno) {
		if ((rc = klog_member_next(r->mb, &m, err)) < 0)
			return rc;
		if (rc == KLOG_CONSUMER_DONE)
			return 0;
		if (rc == KLOG_CONSUMER_MSG && emit(r, &m))
			return 0;
	}
	return 0;
}

/*
 * -L: one line per partition: topic, partition, earliest, latest; with -J
 * a JSON object per line, as every other -J output is.
 */
static int
list_line(void *arg, const char *topic, int32_t index, int64_t lo, int64_t hi)
{
	run_t *r = arg;
	char line[KLOG_TOPIC_MAX + 80];
	int n;

	if (!r->o->json) {
		n = snprintf(line, sizeof(line), "%s\t%d\t%" PRId64 "\t%"
		    PRId64 "\n", topic, (int)index, lo, hi);
		klog_buf_put(&r->out, line, (size_t)n);
		return 0;
	}
	klog_buf_put(&r->out, "{\"topic\":", 9);
	klog_json_put_string(&r->out, topic, strlen(topic));
	n = snprintf(line, sizeof(line), ",\"partition\":%d,\"earliest\":%"
	    PRId64 ",\"latest\":%" PRId64 "}\n", (int)index, lo, hi);
	klog_buf_put(&r->out, line, (size_t)n);
	return 0;
}

static int
list(run_t *r)
{
	klog_err_t err = { 0 };
	int rc;

	if ((rc = klog_consumer_list(r->d, r->o->topic,
	    r->o->cc.connect_timeout_ms, list_line, r, &err)) < 0) {
		fprintf(stderr, PROG ": %s\n", klog_err_text(&err, rc));
		return klog_exit_for(rc);
	}
	return 0;
}

/* Load the offset file and turn its entries into start offsets. */
static int
load_offsets(run_t *r, opts_t *o, klog_consumer_pos_t *starts, size_t *n)
{
	klog_err_t err = { 0 };
	const klog_offsetfile_entry_t *e;
	int rc;

	*n = 0;
	if (o->offset_file == NULL && o->offsets_from == NULL)
		return 0;
	if ((rc = klog_offsetfile_load(o->offset_file ? o->offset_file :
	    o->offsets_from, &r->of, &err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return klog_exit_for(rc);
	}
	/* -o, when given, wins; without it, unknown partitions start at
	 * the beginning, so that nothing is skipped. */
	if (o->offset_given)
		return 0;
	o->cc.start = KLOG_CONSUMER_BEGINNING;
	for (size_t i = 0; i < r->of.n && *n < MAX_PARTS; i++) {
		e = &r->of.entries[i];
		if (strcmp(e->topic, o->topic) != 0)
			continue;
		starts[*n].partition = e->partition;
		starts[(*n)++].offset = e->offset;
	}
	return 0;
}

static int
open_consumer(run_t *r, opts_t *o, klog_discovery_t *d)
{
	klog_consumer_pos_t *starts;
	klog_err_t err = { 0 };
	size_t n;
	int rc, status;

	if ((starts = calloc(MAX_PARTS, sizeof(*starts))) == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		return KLOG_EXIT_FAIL;
	}
	if ((status = load_offsets(r, o, starts, &n)) == 0) {
		o->cc.topic = o->topic;
		o->cc.partitions = o->nparts ? o->parts : NULL;
		o->cc.npartitions = o->nparts;
		o->cc.starts = starts;
		o->cc.nstarts = n;
		if ((rc = klog_consumer_open(d, &o->cc, &r->c, &err)) < 0) {
			fprintf(stderr, PROG ": %s\n", klog_err_text(&err, rc));
			status = klog_exit_for(rc);
		}
	}
	free(starts);
	return status;
}

/* Stdout if it is a pipe or a socket, whose reader may go (| head): the
 * consumer watches it then.  -1 otherwise. */
static int
stdout_pipe(void)
{
	struct stat sb;

	if (fstat(STDOUT_FILENO, &sb) == 0 &&
	    (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)))
		return STDOUT_FILENO;
	return -1;
}

/*
 * -G --offsets-from: a partition the group gives us starts where the file
 * says, read again at each rebalance (the mirror's producer moves it), or
 * at the beginning if it is not there: the group's commits run ahead of
 * what the destination acknowledged.
 */
static int
group_start_at(void *arg, int32_t index, int64_t *offset, klog_err_t *err)
{
	run_t *r = arg;
	klog_offsetfile_t f;
	int rc;

	if ((rc = klog_offsetfile_load(r->o->offsets_from, &f, err)) < 0) {
		klog_offsetfile_free(&f);
		return rc;
	}
	if (klog_offsetfile_get(&f, r->o->topic, index, offset) == 0)
		*offset = KLOG_CONSUMER_BEGINNING;
	klog_offsetfile_free(&f);
	return 1;
}

static int
join_group(run_t *r, const opts_t *o)
{
	klog_member_config_t mc = {
		.group = { .group = o->group, .topic = o->topic },
		.read = o->cc, .commit_ms = o->commit_ms,
		.watch_fd = stdout_pipe(), .flush = member_flush,
		.start_at = o->offsets_from && !o->offset_given ?
		    group_start_at : NULL, .arg = r,
		.log = { member_log, NULL, o->quiet ? KLOG_LEVEL_WARN :
		    o->verbose ? KLOG_LEVEL_DEBUG : KLOG_LEVEL_INFO },
	};
	klog_err_t err = { 0 };
	int rc;

	if ((rc = klog_member_open(r->zk, r->d, &mc, &r->mb, &err)) < 0) {
		if (rc == -KLOG_EINVAL)
			cli_misuse("-G %s", err.msg);
		fprintf(stderr, PROG ": %s\n", klog_err_text(&err, rc));
		return klog_exit_for(rc);
	}
	return 0;
}

/* A group member's last commit, then it leaves; a status. */
static int
leave_group(run_t *r)
{
	klog_err_t err = { 0 };
	int rc;

	if ((rc = klog_member_leave(r->mb, &err)) < 0)
		fprintf(stderr, PROG ": committing offsets: %s\n",
		    klog_err_text(&err, rc));
	return rc < 0 ? klog_exit_for(rc) : 0;
}

/* -G: read as a group member; 0, or the exit status of a failed join.
 * The reading's own error is *rc. */
static int
read_as_member(run_t *r, const opts_t *o, int *rc, klog_err_t *err)
{
	int status;

	if ((status = join_group(r, o)) != 0)
		return status;
	*rc = consume_group(r, err);
	if (*rc == -KLOG_ECLOSED && flush_out(r) == 0) {
		/* Leave at once, without committing what the reader may not
		 * have read. */
		klog_zk_close(r->zk);
		raise(SIGPIPE);
	}
	return 0;
}

/* Without -G: as read_as_member(), on the partitions of -p (or all). */
static int
read_alone(run_t *r, opts_t *o, int *rc, klog_err_t *err)
{
	int status;

	if ((status = open_consumer(r, o, r->d)) != 0)
		return status;
	r->saved_ms = klog_clock_mono_ms();
	if (stdout_pipe() >= 0)
		klog_consumer_watch(r->c, STDOUT_FILENO);
	if (r->zk != NULL)
		klog_consumer_wake_on(r->c, klog_zk_event_fd(r->zk));
	progress_start(r);
	*rc = consume(r, err);
	cli_progress_end(&r->prog);
	return 0;
}

/* After the reading ended with rc: its error, the last save and commit,
 * -v's count; the exit status. */
static int
finish(run_t *r, int rc, const klog_err_t *err)
{
	int status = 0, left;

	/* The reader of our pipe is gone (| head): end as a write would. */
	if (rc == -KLOG_ECLOSED && flush_out(r) == 0)
		raise(SIGPIPE);
	if (rc < 0) {
		flush_out(r);
		fprintf(stderr, PROG ": %s\n", klog_err_text(err, rc));
		status = klog_exit_for(rc);
	}
	if (flush_out(r) == 0 && save_offsets(r, klog_clock_mono_ms()) < 0 &&
	    status == 0)
		status = KLOG_EXIT_IOERR;
	if ((left = leave_group(r)) != 0 && status == 0)
		status = left;
	if (r->o->verbose)
		fprintf(stderr, PROG ": %" PRIu64 " messages, %" PRIu64
		    " payload bytes\n", r->messages, r->bytes);
	return status;
}

/* The last of stdout, then everything closed; the exit status. */
static int
close_run(run_t *r, int status)
{
	if (flush_out(r) < 0 || r->stdout_errno) {
		cli_stdout_error(r->stdout_errno);
		status = KLOG_EXIT_IOERR;
	}
	klog_member_close(r->mb);
	klog_consumer_close(r->c);
	klog_discovery_close(r->d);
	klog_zk_close(r->zk);
	klog_outfmt_free(r->fmt);
	klog_offsetfile_free(&r->of);
	klog_buf_free(&r->out);
	cli_where_close(r->where);
	return status;
}

int
main(int argc, char **argv)
{
	klog_err_t err = { 0 };
	opts_t o;
	run_t r;
	int rc = 0, status;

	cli_init(PROG);
	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	klog_consumer_config_default(&o.cc);
	o.count = -1;
	o.commit_ms = COMMIT_EVERY_MS;
	cli_where_init(&o.where);
	parse_args(argc, argv, &o);
	r.o = &o;
	r.where = &o.where;
	r.topic_len = o.topic ? strlen(o.topic) : 0;
	klog_buf_init(&r.out);
	/* The first signal stops cleanly; the second one kills.  | head
	 * ends us quietly, like cat. */
	cli_catch_stop();
	signal(SIGPIPE, SIG_DFL);
	if ((status = cli_where_open(&o.where, o.cc.connect_timeout_ms, &r.zk,
	    &r.d)) != 0)
		return close_run(&r, status);
	if (o.list)
		return close_run(&r, list(&r));
	r.fmt = compile_format(&o);
	if (o.group != NULL)
		status = read_as_member(&r, &o, &rc, &err);
	else
		status = read_alone(&r, &o, &rc, &err);
	if (status == 0)
		status = finish(&r, rc, &err);
	return close_run(&r, status);
}
