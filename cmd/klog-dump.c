/*
 * klog-dump: print, summarize or verify segment files and partition
 * directories, read-only.  The walk is lib/storage/dump.c; this main chooses what to
 * print and the exit status.  See klog-dump(1).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <dirent.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "klog/base/exit.h"
#include "klog/client/outfmt.h"
#include "klog/storage/dump.h"
#include "klog/storage/names.h"
#include "klog/storage/salvage.h"

#define PROG "klog-dump"
#define OUT_FLUSH ((size_t)256 << 10)
#define PREVIEW_DEFAULT 40

enum {
	OPT_ALLOW_PARTIAL = 256,
	OPT_DEEP,
	OPT_PROGRESS,
	OPT_SALVAGE,
	OPT_VERIFY,
	OPT_VERSION,
};

typedef struct state {
	int json, summary, verify, allow_partial, quiet, verbose, salvage;
	int show_messages;
	int64_t base_opt;
	size_t preview;
	klog_buf_t out;        /* stdout, written in large batches */
	klog_buf_t line;       /* one stderr line */
	int stdout_errno;      /* set once writing stdout failed */
	int problems;          /* problems found in the data */
	int input_errors;      /* inputs that could not be opened or read */
	int failures;          /* other failed arguments */
	cli_progress_t prog;
	int progress;          /* --progress */
	uint64_t total;        /* bytes of every argument's segments */
	uint64_t done;         /* of the files already read */
	uint64_t seen;         /* messages so far */
	int64_t cur_base;      /* the file being read */
	const char *about;     /* the argument being read */
} state_t;

static const char optstring[] = ":b:hJn:o:P:qsv";
static const struct option longopts[] = {
	{ "allow-partial", no_argument, NULL, OPT_ALLOW_PARTIAL },
	{ "base", required_argument, NULL, 'b' },
	{ "count", required_argument, NULL, 'n' },
	{ "deep", no_argument, NULL, OPT_DEEP },
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, 'J' },
	{ "offset", required_argument, NULL, 'o' },
	{ "preview", required_argument, NULL, 'P' },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "salvage", no_argument, NULL, OPT_SALVAGE },
	{ "summary", no_argument, NULL, 's' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: " PROG " [-hJqsv] [--allow-partial] [--deep] [--progress] "
	    "[--verify] [-b base]\n"
	    "                 [-n count] [-o offset] [-P bytes] file|dir ...\n"
	    "       " PROG " --salvage [-qv] dir ...\n"
	    "Print, summarize or verify klog segment files and partition "
	    "directories.\n"
	    "\n"
	    "  -b, --base N         base offset of file arguments (default: "
	    "from the name)\n"
	    "      --salvage        of partition directories: the valid "
	    "messages in the\n"
	    "                       bytes recovery cut off, as JSON lines "
	    "for klog-produce -J\n"
	    "  -J, --json           one JSON object per message (per file "
	    "with -s)\n"
	    "  -n, --count N        stop after N entries per file\n"
	    "  -o, --offset N       start at partition offset N, a message "
	    "boundary\n"
	    "  -P, --preview N      payload and key bytes per line "
	    "(default %d; 0: none)\n"
	    "  -s, --summary        one summary per file instead of messages\n"
	    "      --verify         print no messages; exit 1 if a problem "
	    "is found\n"
	    "      --deep           open gzip wrappers and magic-2 entries "
	    "and check inside\n"
	    "      --allow-partial  a partial entry ending a partition is no "
	    "problem\n"
	    "      --progress       show progress on stderr even when it is not "
	    "a terminal\n"
	    "  -q, --quiet          do not report problems on stderr\n"
	    "  -v, --verbose        say what was read of each file\n"
	    "  -h, --help           print this help\n"
	    "      --version        print the version\n"
	    "\n"
	    "Exit status: 0 ok, 1 --verify found a problem (or another "
	    "failure),\n"
	    "64 usage, 65 corrupt data, 74 I/O error.\n", PREVIEW_DEFAULT);
}

/* Write the batched output; the first failure sticks. */
static int
flush_out(state_t *st)
{
	if (st->stdout_errno)
		return -KLOG_EIO;
	if (st->out.failed) {
		st->stdout_errno = ENOMEM;
		return -KLOG_ENOMEM;
	}
	if (st->out.len > 0 &&
	    fwrite(st->out.data, 1, st->out.len, stdout) != st->out.len) {
		st->stdout_errno = errno ? errno : EIO;
		return -KLOG_EIO;
	}
	klog_buf_reset(&st->out);
	return 0;
}

/* One line on stderr about ev, after what is already on stdout. */
static int
report(state_t *st, const klog_dump_event_t *ev)
{
	int rc;

	if (st->quiet)
		return 0;
	if ((rc = flush_out(st)) < 0 || fflush(stdout) == EOF)
		return rc < 0 ? rc : -KLOG_EIO;
	klog_buf_reset(&st->line);
	klog_dump_describe(&st->line, ev);
	fprintf(stderr, PROG ": %s: %.*s\n", ev->file, (int)st->line.len,
	    st->line.data ? (const char *)st->line.data : "");
	return 0;
}

static void
note_end(const state_t *st, const klog_dump_event_t *ev)
{
	const klog_dump_summary_t *s = ev->summary;

	if (!st->verbose)
		return;
	fprintf(stderr, PROG ": %s: %" PRIu64 " messages in %" PRIu64
	    " entries, offsets %" PRId64 " to %" PRId64 "\n", ev->file,
	    s->messages, s->entries, s->first_offset, s->next_offset);
}

static int
on_event(void *arg, const klog_dump_event_t *ev)
{
	state_t *st = arg;
	int rc = 0;

	if (klog_dump_is_problem(ev, st->allow_partial))
		st->problems++;
	switch (ev->kind) {
	case KLOG_DUMP_FILE:
		st->cur_base = ev->base;
		if (st->verbose && !ev->named && st->base_opt < 0)
			fprintf(stderr, PROG ": %s: not named like a segment; "
			    "base offset 0\n", ev->file);
		break;
	case KLOG_DUMP_MESSAGE:
		st->seen++;
		cli_progress_update(&st->prog, st->about, st->done +
		    (uint64_t)(ev->msg->next_offset - st->cur_base), st->total,
		    st->seen, "messages");
		if (st->show_messages && st->json)
			klog_dump_render_json(&st->out, ev);
		else if (st->show_messages)
			klog_dump_render_text(&st->out, ev, st->preview);
		if (!ev->msg->valid)
			rc = report(st, ev);
		break;
	case KLOG_DUMP_END:
		st->done += (uint64_t)(ev->summary->next_offset - st->cur_base);
		if (st->summary)
			klog_dump_render_summary(&st->out, ev, st->json);
		note_end(st, ev);
		break;
	case KLOG_DUMP_EPOCH:
		if (st->show_messages || st->summary)
			klog_dump_render_epoch(&st->out, ev, st->json);
		break;
	default:
		rc = report(st, ev);
		break;
	}
	if (rc == 0 && st->out.len >= OUT_FLUSH)
		rc = flush_out(st);
	return rc;
}

/* The exit status for an argument that could not be dumped. */
static int
input_failed(state_t *st, int rc, const klog_err_t *err)
{
	fprintf(stderr, PROG ": %s\n", klog_err_text(err, rc));
	switch (-rc) {
	case KLOG_EINVAL:
	case KLOG_ENOMEM:
	case KLOG_ERANGE:
	case KLOG_ENOTBOUNDARY:
		st->failures++;
		break;
	default:
		st->input_errors++;
		break;
	}
	return rc;
}

static int
exit_status(const state_t *st)
{
	if (st->stdout_errno || st->input_errors)
		return KLOG_EXIT_IOERR;
	if (st->problems)
		return st->verify ? KLOG_EXIT_FAIL : KLOG_EXIT_DATAERR;
	if (st->failures)
		return KLOG_EXIT_FAIL;
	return KLOG_EXIT_OK;
}

/* Bytes of the segments of path (a file, or a partition directory), for
 * the progress line; 0 when unknown. */
static uint64_t
arg_bytes(const char *path)
{
	struct dirent *de;
	struct stat st;
	uint64_t sum = 0;
	DIR *d;

	if (stat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return (uint64_t)st.st_size;
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);

		if ((n > 5 && strcmp(de->d_name + n - 5, ".klog") == 0) ||
		    (n > 6 && strcmp(de->d_name + n - 6, ".kafka") == 0)) {
			if (fstatat(dirfd(d), de->d_name, &st, 0) == 0)
				sum += (uint64_t)st.st_size;
		}
	}
	closedir(d);
	return sum;
}

/* What --salvage renders each message with. */
struct salvage_out {
	state_t *st;
	klog_outfmt_t *fmt;
	char topic[KLOG_TOPIC_MAX + 1];
	int partition;
};

static int
on_salvaged(void *arg, const klog_salvaged_t *m)
{
	struct salvage_out *so = arg;
	klog_outfmt_rec_t r = { so->topic, strlen(so->topic), so->partition,
	    m->offset, m->next_offset, m->payload, m->payload_len, m->key,
	    m->key_len, m->timestamp, m->headers, m->headers_len,
	    m->header_count };

	klog_outfmt_render(so->fmt, &r, &so->st->out);
	return so->st->out.len >= OUT_FLUSH ? flush_out(so->st) : 0;
}

/* --salvage DIR: the messages of DIR's salvage files on stdout, in the
 * JSON klog-consume -J writes (topic and partition from DIR's name). */
static void
salvage_dir(state_t *st, klog_outfmt_t *fmt, const char *dir)
{
	struct salvage_out so = { st, fmt, "", -1 };
	const char *base = strrchr(dir, '/');
	klog_salvage_info_t info;
	klog_err_t err = { 0, "" };
	char name[KLOG_TOPIC_MAX + 32];
	size_t n;
	int rc;

	snprintf(name, sizeof(name), "%s", base != NULL && base[1] ? base + 1 :
	    dir);
	n = strlen(name);
	while (n > 1 && name[n - 1] == '/')
		name[--n] = '\0';
	if (klog_names_dir_parse(name, so.topic, sizeof(so.topic),
	    &so.partition) < 0) {
		so.topic[0] = '\0';
		so.partition = -1;
	}
	rc = klog_salvage_read(dir, on_salvaged, &so, &info, &err);
	if (rc < 0 && !st->stdout_errno) {
		input_failed(st, rc, &err);
		return;
	}
	if (!st->quiet && (st->verbose || info.files == 0))
		fprintf(stderr, PROG ": %s: %llu messages from %zu salvage "
		    "file%s, %llu bytes in no valid message (%llu of them "
		    "zero)\n", dir, (unsigned long long)info.messages,
		    info.files, info.files == 1 ? "" : "s",
		    (unsigned long long)info.skipped,
		    (unsigned long long)info.zeros);
}

/* What to read of each file, and what to make of it. */
static int
take_reading(klog_dump_opts_t *o, state_t *st, int ch, const char *arg)
{
	switch (ch) {
	case 'b':
		o->base = cli_number("-b", arg, 0, INT64_MAX);
		return 1;
	case 'n':
		o->count = cli_number("-n", arg, 1, INT64_MAX);
		return 1;
	case 'o':
		o->start = cli_number("-o", arg, 0, INT64_MAX);
		return 1;
	case OPT_DEEP:
		o->flags |= KLOG_DUMP_DEEP;
		return 1;
	case OPT_ALLOW_PARTIAL:
		st->allow_partial = 1;
		return 1;
	case OPT_VERIFY:
		st->verify = 1;
		return 1;
	case OPT_SALVAGE:
		st->salvage = 1;
		return 1;
	default:
		return 0;
	}
}

/* What is printed, on stdout and on stderr. */
static int
take_output(state_t *st, int ch, const char *arg)
{
	switch (ch) {
	case 'J':
		st->json = 1;
		return 1;
	case 's':
		st->summary = 1;
		return 1;
	case 'P':
		st->preview = (size_t)cli_number("-P", arg, 0, INT32_MAX);
		return 1;
	case 'q':
		st->quiet = 1;
		return 1;
	case 'v':
		st->verbose = 1;
		return 1;
	case OPT_PROGRESS:
		st->progress = 1;
		return 1;
	default:
		return 0;
	}
}

/* The options together, once all are taken; nargs files or dirs. */
static void
check_opts(const klog_dump_opts_t *o, const state_t *st, int nargs)
{
	if (nargs == 0)
		cli_misuse("no file or directory given");
	if (st->quiet && st->verbose)
		cli_misuse("-q and -v cannot be used together");
	if (st->salvage && (st->summary || st->verify || st->json ||
	    o->flags || o->count >= 0 || o->start >= 0 || o->base >= 0))
		cli_misuse("--salvage takes only -q and -v");
}

/* The options into *o and *st; returns the index of the first path. */
static int
parse_args(int argc, char **argv, klog_dump_opts_t *o, state_t *st)
{
	cli_seen_t seen = { { 0 } };
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, optstring, longopts, NULL)) !=
	    -1) {
		cli_once(&seen, ch, longopts);
		if (take_reading(o, st, ch, optarg) ||
		    take_output(st, ch, optarg))
			continue;
		if (ch == 'h')
			cli_help(usage);
		if (ch == OPT_VERSION)
			cli_version();
		cli_option_error(ch, argv);
	}
	check_opts(o, st, argc - optind);
	return optind;
}

/* --salvage: each partition directory's salvage files. */
static void
salvage_all(state_t *st, int n, char **paths)
{
	klog_outfmt_t *fmt;

	if (klog_outfmt_json(&fmt) < 0)
		cli_misuse("out of memory");
	for (int i = 0; i < n && !st->stdout_errno; i++)
		salvage_dir(st, fmt, paths[i]);
	klog_outfmt_free(fmt);
}

/* Every file or partition directory, as the options say. */
static void
dump_all(state_t *st, const klog_dump_opts_t *o, int n, char **paths)
{
	int rc;

	/* Progress only where it cannot mix with what goes to stdout on a
	 * terminal: --verify and -s print little or nothing there. */
	cli_progress_init(&st->prog, st->quiet ||
	    (st->show_messages && isatty(STDOUT_FILENO)), st->progress);
	for (int i = 0; i < n && st->prog.mode != 0; i++)
		st->total += arg_bytes(paths[i]);
	for (int i = 0; i < n && !st->stdout_errno; i++) {
		klog_err_t err = { 0, "" };

		st->about = paths[i];
		rc = klog_dump_path(paths[i], o, on_event, st, &err);
		if (rc < 0 && !st->stdout_errno)
			input_failed(st, rc, &err);
	}
	cli_progress_end(&st->prog);
}

int
main(int argc, char **argv)
{
	klog_dump_opts_t o;
	state_t st;
	int first;

	cli_init(PROG);
	memset(&st, 0, sizeof(st));
	klog_buf_init(&st.out);
	klog_buf_init(&st.line);
	st.preview = PREVIEW_DEFAULT;
	klog_dump_opts_default(&o);
	first = parse_args(argc, argv, &o, &st);
	st.base_opt = o.base;
	st.show_messages = !st.verify && !st.summary;
	if (st.salvage)
		salvage_all(&st, argc - first, argv + first);
	else
		dump_all(&st, &o, argc - first, argv + first);
	if (flush_out(&st) == 0 && fflush(stdout) == EOF)
		st.stdout_errno = errno ? errno : EIO;
	if (st.stdout_errno)
		cli_stdout_error(st.stdout_errno);
	klog_buf_free(&st.out);
	klog_buf_free(&st.line);
	return exit_status(&st);
}
