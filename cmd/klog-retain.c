/*
 * klog-retain: delete old segments from a data directory by age and size,
 * from cron, beside a running broker.  The rule and the file work are
 * lib/storage/retain.c; this main walks the partitions, prints one line per deleted
 * segment and chooses the exit status.  See klog-retain(1).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "klog/base/exit.h"
#include "klog/storage/log.h"
#include "klog/storage/retain.h"

#define PROG "klog-retain"
#define DEFAULT_DATA_DIR "klog-data"
#define DEFAULT_WAIT_MS 10000

enum {
	OPT_MAX_AGE = 256,
	OPT_MAX_BYTES,
	OPT_VERSION,
};

typedef struct state {
	const char *data_dir;
	int64_t max_age_ms, max_bytes, wait_ms, now_ms;
	const char **topics;     /* -t arguments, in argv */
	int *topic_seen;
	size_t ntopics;
	int dry_run, quiet, verbose;
	int rval;                /* the worst exit status so far */
	size_t deleted, partitions;
	int64_t deleted_bytes;
} state_t;

static const char optstring[] = ":d:hnqt:vw:";
static const struct option longopts[] = {
	{ "data-dir", required_argument, NULL, 'd' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ "max-age", required_argument, NULL, OPT_MAX_AGE },
	{ "max-bytes", required_argument, NULL, OPT_MAX_BYTES },
	{ "quiet", no_argument, NULL, 'q' },
	{ "topic", required_argument, NULL, 't' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "wait", required_argument, NULL, 'w' },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: " PROG " [-hnqv] [-d dir] [--max-age duration] "
	    "[--max-bytes size]\n"
	    "                   [-t topic]... [-w duration]\n"
	    "Delete the oldest segments of a data directory by age and size, "
	    "from cron.\n"
	    "\n"
	    "  -d, --data-dir DIR     the broker's data directory (default: "
	    "$KLOG_DATA_DIR,\n"
	    "                         else " DEFAULT_DATA_DIR ")\n"
	    "      --max-age D        delete segments older than D "
	    "(7d, 36h, 90m)\n"
	    "      --max-bytes S      delete while a partition keeps S "
	    "without them (10G)\n"
	    "  -t, --topic TOPIC      only this topic (repeatable)\n"
	    "  -n, --dry-run          delete nothing; print what would be "
	    "deleted\n"
	    "  -w, --wait D           wait up to D for another klog-retain "
	    "(default 10s)\n"
	    "  -q, --quiet            no warnings\n"
	    "  -v, --verbose          a total line and notes on stderr\n"
	    "  -h, --help             print this help\n"
	    "      --version          print the version\n"
	    "\n"
	    "One tab-separated line per deleted segment: topic, partition, "
	    "base offset,\n"
	    "bytes, age in seconds.  The newest segment of a partition is "
	    "never deleted.\n"
	    "At least one of --max-age and --max-bytes is required.\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure (another klog-retain running, "
	    "a partition left\n"
	    "alone), 64 usage, 74 I/O error.\n");
}

/* A bare number is seconds. */
static int64_t
duration(const char *opt, const char *s)
{
	return cli_duration(opt, s, 1000, 0, INT64_MAX);
}

static void
note_status(state_t *st, int status)
{
	if (status > st->rval)
		st->rval = status;
}

static void
warning(state_t *st, const char *msg)
{
	note_status(st, KLOG_EXIT_FAIL);
	if (!st->quiet)
		fprintf(stderr, PROG ": %s\n", msg);
}

static void
failure(state_t *st, int rc, const klog_err_t *err)
{
	note_status(st, klog_exit_for(rc));
	fprintf(stderr, PROG ": %s\n", klog_err_text(err, rc));
}

/* Whether -t selects topic; marks it seen. */
static int
selected(state_t *st, const char *topic)
{
	int hit = st->ntopics == 0;

	for (size_t i = 0; i < st->ntopics; i++)
		if (strcmp(st->topics[i], topic) == 0)
			hit = st->topic_seen[i] = 1;
	return hit;
}

static void
print_deleted(state_t *st, const klog_retain_part_t *p, size_t i)
{
	const klog_segment_info_t *s = &p->segs[i];

	printf("%s\t%d\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n", p->topic,
	    p->partition, s->base, s->size, (st->now_ms - s->mtime_ms) / 1000);
	st->deleted++;
	st->deleted_bytes += s->size;
}

/*
 * Delete the planned prefix oldest first, and stop at the first failure:
 * going on would leave a hole in the partition.
 */
static void
delete_prefix(state_t *st, klog_retain_t *r, const klog_retain_part_t *p,
    size_t count)
{
	klog_err_t err = { 0, "" };
	size_t unlinked = 0;
	int rc;

	for (size_t i = 0; i < count; i++) {
		if (!st->dry_run) {
			rc = klog_retain_part_unlink(r, p, i, &err);
			if (rc == -KLOG_ENOENT)
				continue;  /* the broker got there first */
			if (rc < 0) {
				failure(st, rc, &err);
				break;
			}
			unlinked++;
		}
		print_deleted(st, p, i);
	}
	if (unlinked > 0 && (rc = klog_retain_part_sync(r, p, &err)) < 0)
		failure(st, rc, &err);
}

static void
retain_part(state_t *st, klog_retain_t *r, klog_retain_part_t *p)
{
	klog_err_t err = { 0, "" };
	klog_retain_plan_t plan;
	char msg[sizeof(err.msg) + 64];
	int rc;

	if ((rc = klog_retain_part_load(r, p, &err)) == -KLOG_ECORRUPT) {
		snprintf(msg, sizeof(msg), "%s; partition left alone",
		    err.msg);
		warning(st, msg);
		goto out;
	}
	if (rc == -KLOG_ENOENT)  /* removed since the listing */
		goto out;
	if (rc < 0) {
		failure(st, rc, &err);
		goto out;
	}
	st->partitions++;
	klog_retain_plan(p->segs, p->nsegs, st->max_age_ms, st->max_bytes,
	    st->now_ms, &plan);
	delete_prefix(st, r, p, plan.count);
	if (plan.newest_expired && st->verbose)
		fprintf(stderr, PROG ": topic \"%s\" partition %d: the newest "
		    "segment is past the limits too; it is left to the "
		    "broker\n", p->topic, p->partition);
out:
	klog_retain_part_close(p);
}

static void
run(state_t *st)
{
	klog_err_t err = { 0, "" };
	klog_retain_part_t *parts = NULL;
	klog_retain_t *r = NULL;
	struct timespec now;
	char msg[KLOG_TOPIC_MAX + 64];
	size_t n = 0;
	int rc;

	if ((rc = klog_retain_open(st->data_dir, &r, &err)) < 0 ||
	    (!st->dry_run && (rc = klog_retain_lock(r, st->wait_ms,
	    &err)) < 0) ||
	    (rc = klog_retain_parts(r, &parts, &n, &err)) < 0) {
		failure(st, rc, &err);
		goto out;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	st->now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	for (size_t i = 0; i < n; i++)
		if (selected(st, parts[i].topic))
			retain_part(st, r, &parts[i]);
	for (size_t i = 0; i < st->ntopics; i++) {
		if (st->topic_seen[i])
			continue;
		snprintf(msg, sizeof(msg), "topic \"%s\": no such topic",
		    st->topics[i]);
		warning(st, msg);
	}
	if (st->verbose)
		fprintf(stderr, PROG ": %s %zu segments, %" PRId64 " bytes, "
		    "in %zu partitions\n", st->dry_run ? "would delete" :
		    "deleted", st->deleted, st->deleted_bytes, st->partitions);
out:
	klog_retain_parts_free(parts, n);
	klog_retain_close(r);
}

static void
add_topic(state_t *st, const char *topic)
{
	klog_err_t err = { 0, "" };

	if (klog_topic_validate(topic, &err) < 0)
		cli_misuse("-t: %s", err.msg);
	st->topics[st->ntopics++] = topic;
}

/* Where, what and how much to delete; 0 if ch is not one of these. */
static int
take_option(state_t *st, int ch, const char *arg)
{
	switch (ch) {
	case 'd':
		st->data_dir = arg;
		return 1;
	case 't':
		add_topic(st, arg);
		return 1;
	case OPT_MAX_AGE:
		st->max_age_ms = duration("--max-age", arg);
		return 1;
	case OPT_MAX_BYTES:
		st->max_bytes = cli_size("--max-bytes", arg, 0, INT64_MAX);
		return 1;
	case 'n':
		st->dry_run = 1;
		return 1;
	case 'w':
		st->wait_ms = duration("-w", arg);
		return 1;
	case 'q':
		st->quiet = 1;
		return 1;
	case 'v':
		st->verbose = 1;
		return 1;
	default:
		return 0;
	}
}

/* The options together, once all are taken. */
static void
check_opts(const state_t *st)
{
	if (st->max_age_ms < 0 && st->max_bytes < 0)
		cli_misuse("--max-age or --max-bytes is required");
	if (st->quiet && st->verbose)
		cli_misuse("-q and -v cannot be used together");
	if (*st->data_dir == '\0')
		cli_misuse("-d: empty directory name");
}

static void
parse_args(int argc, char **argv, state_t *st)
{
	cli_seen_t seen = { { 0 } };
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, optstring, longopts, NULL)) !=
	    -1) {
		/* -t is a list: -t a -t b keeps both topics. */
		if (ch != 't')
			cli_once(&seen, ch, longopts);
		if (take_option(st, ch, optarg))
			continue;
		if (ch == 'h')
			cli_help(usage);
		if (ch == OPT_VERSION)
			cli_version();
		cli_option_error(ch, argv);
	}
	if (optind < argc)
		cli_misuse("%s: unexpected argument", argv[optind]);
	check_opts(st);
}

int
main(int argc, char **argv)
{
	const char *env;
	state_t st;

	cli_init(PROG);
	memset(&st, 0, sizeof(st));
	st.max_age_ms = st.max_bytes = -1;
	st.wait_ms = DEFAULT_WAIT_MS;
	env = getenv("KLOG_DATA_DIR");
	st.data_dir = env != NULL && *env != '\0' ? env : DEFAULT_DATA_DIR;
	/* -t can appear at most once per argument. */
	st.topics = calloc((size_t)argc, sizeof(*st.topics));
	st.topic_seen = calloc((size_t)argc, sizeof(*st.topic_seen));
	if (st.topics == NULL || st.topic_seen == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		return KLOG_EXIT_FAIL;
	}
	parse_args(argc, argv, &st);
	run(&st);
	note_status(&st, cli_stdout_check());
	free(st.topics);
	free(st.topic_seen);
	return st.rval;
}
