/*
 * klog-produce: read records from stdin and publish them to a topic.  The
 * batching, pipelining and reconnecting are lib/client/producer.c; record cutting
 * and the -J envelope are lib/client/input.c.  See klog-produce(1).
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "produce/report.h"
#include "produce/usage.h"
#include "klog/base/clock.h"
#include "klog/base/exit.h"
#include "klog/client/client.h"
#include "klog/client/discovery.h"
#include "klog/client/input.h"
#include "klog/client/mirror.h"
#include "klog/client/outfmt.h"
#include "klog/client/producer.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"
#include "klog/zk/zk.h"

#define PROG "klog-produce"

enum {
	OPT_BATCH = 256,
	OPT_IDEMPOTENT,
	OPT_LINGER,
	OPT_MAX_MESSAGE,
	OPT_RETRY_FOR,
	OPT_PROGRESS,
	OPT_REPORT,
	OPT_SOURCE_OFFSET_FILE,
	OPT_STOP_ON_OVERSIZE,
	OPT_STRIP_KEY,
	OPT_TIMESTAMP,
	OPT_VERSION,
};

#define MAX_HEADERS 64

typedef struct opts {
	cli_where_t where;         /* -b, -Z, --zk-session-timeout */
	klog_producer_config_t pc;
	klog_buf_t delim;
	klog_buf_t keydelim;       /* empty: no -K */
	const char *source_file;   /* --source-offset-file */
	const char *report_path;   /* --report, "-": stdout */
	klog_header_t hdrs[MAX_HEADERS];  /* -H, views into argv */
	uint32_t nhdrs;
	int stamp;                 /* --timestamp */
	int strip_key, json, verbose, quiet;
	int progress;              /* --progress */
	int stop_on_oversize;      /* end at the first record too long */
} opts_t;

static const char optstring[] = ":0a:b:D:F:hH:JK:m:p:qt:vX:Z:z:";
static const struct option longopts[] = {
	{ "acks", required_argument, NULL, 'a' },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "broker", required_argument, NULL, 'b' },
	{ "compression", required_argument, NULL, 'z' },
	{ "delimiter", required_argument, NULL, 'D' },
	{ "header", required_argument, NULL, 'H' },
	{ "help", no_argument, NULL, 'h' },
	{ "idempotent", no_argument, NULL, OPT_IDEMPOTENT },
	{ "json", no_argument, NULL, 'J' },
	{ "key-delimiter", required_argument, NULL, 'K' },
	{ "linger", required_argument, NULL, OPT_LINGER },
	{ "max-message", required_argument, NULL, OPT_MAX_MESSAGE },
	{ "null", no_argument, NULL, '0' },
	{ "partition", required_argument, NULL, 'p' },
	{ "property", required_argument, NULL, 'X' },
	{ "property-file", required_argument, NULL, 'F' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "retry-for", required_argument, NULL, OPT_RETRY_FOR },
	{ "source-offset-file", required_argument, NULL,
	    OPT_SOURCE_OFFSET_FILE },
	{ "stop-on-oversize", no_argument, NULL, OPT_STOP_ON_OVERSIZE },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "strip-key", no_argument, NULL, OPT_STRIP_KEY },
	{ "timeout", required_argument, NULL, 'm' },
	{ "timestamp", no_argument, NULL, OPT_TIMESTAMP },
	{ "topic", required_argument, NULL, 't' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "zk-session-timeout", required_argument, NULL, CLI_OPT_ZK_SESSION },
	{ "zk-auth-file", required_argument, NULL, CLI_OPT_ZK_AUTH },
	{ "zookeeper", required_argument, NULL, 'Z' },
	{ NULL, 0, NULL, 0 },
};

/* A bare number is milliseconds. */
static int64_t
duration(const char *opt, const char *s, int64_t max)
{
	return cli_duration(opt, s, 1, 0, max);
}

static void
delimiter(const char *opt, const char *s, klog_buf_t *out)
{
	klog_err_t err = { 0 };

	klog_buf_reset(out);
	if (klog_outfmt_unescape(s, out, &err) < 0)
		cli_misuse("%s %s: %s", opt, s, err.msg);
	if (out->len == 0 || out->len > KLOG_INPUT_DELIM_MAX)
		cli_misuse("%s: a delimiter is 1 to %d bytes", opt,
		    KLOG_INPUT_DELIM_MAX);
}

static int
parse_acks(const char *arg)
{
	if (strcmp(arg, "all") == 0 || strcmp(arg, "-1") == 0)
		return KLOG_ACKS_ALL;
	if (strcmp(arg, "0") != 0 && strcmp(arg, "1") != 0)
		cli_misuse("-a %s: expected 0, 1 or all", arg);
	return arg[0] - '0';
}

static int
parse_codec(const char *arg)
{
	for (int c = KLOG_CODEC_NONE; c <= KLOG_CODEC_MAX; c++)
		if (strcmp(arg, klog_codec_name(c)) == 0)
			return c;
	cli_misuse("-z %s: expected gzip, snappy, lz4, zstd or none", arg);
}

/* -H name=value (kcat's): a header of every record; without '=', one
 * with a null value. */
static void
add_header(opts_t *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	klog_header_t *h;

	if (o->nhdrs == MAX_HEADERS)
		cli_misuse("-H: at most %d headers", MAX_HEADERS);
	h = &o->hdrs[o->nhdrs++];
	h->key = (const uint8_t *)arg;
	h->key_len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	h->value = eq != NULL ? (const uint8_t *)eq + 1 : NULL;
	h->value_len = eq != NULL ? (int32_t)strlen(eq + 1) : -1;
}

/* How stdin is cut into records, and what of them is sent. */
static int
take_input(opts_t *o, int ch, const char *arg)
{
	switch (ch) {
	case 'D':
		delimiter("-D", arg, &o->delim);
		return 1;
	case '0':
		klog_buf_reset(&o->delim);
		klog_buf_put(&o->delim, "", 1);
		return 1;
	case 'K':
		delimiter("-K", arg, &o->keydelim);
		return 1;
	case 'H':
		add_header(o, arg);
		return 1;
	case OPT_TIMESTAMP:
		o->stamp = 1;
		return 1;
	case OPT_STRIP_KEY:
		o->strip_key = 1;
		return 1;
	case 'J':
		o->json = 1;
		return 1;
	case OPT_SOURCE_OFFSET_FILE:
		o->source_file = arg;
		return 1;
	case OPT_MAX_MESSAGE:
		o->pc.max_message = (size_t)cli_size("--max-message", arg, 1,
		    64 << 20);
		return 1;
	case OPT_STOP_ON_OVERSIZE:
		o->stop_on_oversize = 1;
		return 1;
	default:
		return 0;
	}
}

/* Where the records go and how they are sent. */
static int
take_send(opts_t *o, int ch, const char *arg)
{
	switch (ch) {
	case 't':
		o->pc.topic = arg;
		return 1;
	case 'p':
		o->pc.partition = (int)cli_number("-p", arg, -1, INT32_MAX);
		return 1;
	case 'a':
		o->pc.acks = parse_acks(arg);
		return 1;
	case 'z':
		o->pc.codec = parse_codec(arg);
		return 1;
	case OPT_BATCH:
		o->pc.batch_records = (uint32_t)cli_number("--batch", arg, 1,
		    1000000);
		return 1;
	case OPT_LINGER:
		o->pc.linger_ms = (int)duration("--linger", arg, 3600000);
		return 1;
	case OPT_RETRY_FOR:
		o->pc.retry_for_ms = duration("--retry-for", arg, INT32_MAX);
		return 1;
	case OPT_IDEMPOTENT:
		o->pc.idempotent = 1;
		return 1;
	case 'm':
		o->pc.connect_timeout_ms = (int)duration("-m", arg, 3600000);
		if (o->pc.connect_timeout_ms == 0)
			cli_misuse("-m %s: too small", arg);
		return 1;
	default:
		return 0;
	}
}

/* What is said on stderr, and the delivery report. */
static int
take_report(opts_t *o, int ch, const char *arg)
{
	switch (ch) {
	case 'q':
		o->quiet = 1;
		return 1;
	case 'v':
		o->verbose = 1;
		return 1;
	case OPT_PROGRESS:
		o->progress = 1;
		return 1;
	case OPT_REPORT:
		o->report_path = arg;
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
	if (o->pc.topic == NULL)
		cli_misuse("no topic given (-t)");
	if (o->quiet && o->verbose)
		cli_misuse("-q and -v cannot be used together");
	if (o->json && o->keydelim.len > 0)
		cli_misuse("-J and -K cannot be used together");
	if (o->strip_key && o->keydelim.len == 0)
		cli_misuse("--strip-key needs -K");
	if (o->source_file != NULL && !o->json)
		cli_misuse("--source-offset-file needs -J: the positions come "
		    "from the envelopes");
	if (o->report_path != NULL && o->keydelim.len > 0)
		cli_misuse("--report and -K cannot be used together: keys "
		    "spread a batch's records over the partitions");
	if (o->source_file != NULL && o->pc.acks == KLOG_ACKS_NONE)
		cli_misuse("--source-offset-file and -a 0 cannot be used "
		    "together: nothing says what the destination holds");
	if (o->pc.acks == KLOG_ACKS_NONE && o->pc.idempotent)
		cli_misuse("--idempotent and -a 0 cannot be used together: "
		    "nothing is retried without acknowledgements");
	if (klog_topic_validate(o->pc.topic, &err) < 0)
		cli_misuse("%s", err.msg);
}

static void
parse_args(int argc, char **argv, opts_t *o)
{
	cli_seen_t seen = { { 0 } };
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, optstring, longopts, NULL)) !=
	    -1) {
		if (ch != 'H')          /* -H adds a header each time */
			cli_once(&seen, ch, longopts);
		if (cli_where_option(&o->where, ch, optarg) ||
		    take_input(o, ch, optarg) || take_send(o, ch, optarg) ||
		    take_report(o, ch, optarg))
			continue;
		if (ch == 'h')
			cli_help(produce_usage);
		if (ch == OPT_VERSION)
			cli_version();
		cli_option_error(ch, argv);
	}
	if (optind < argc)
		cli_misuse("%s: unexpected argument", argv[optind]);
	check_opts(o);
}

typedef struct run {
	opts_t *o;
	klog_producer_t *p;
	klog_zk_t *zk;             /* cluster mode */
	klog_discovery_t *d;
	klog_input_t in;
	klog_input_record_t jrec;  /* -J: the decoded record */
	klog_header_t *hdrs;       /* -J: its headers and -H's */
	uint32_t hdrs_cap;
	int64_t read_ms;           /* --timestamp: when stdin was read */
	int plain;                 /* nothing asks for records: no key,
	                              header, timestamp, -J or codec that
	                              only records carry */
	klog_mirror_t *bm;         /* --source-offset-file */
	klog_input_source_t src;   /* the record's source position */
	uint64_t recno;            /* records read */
	uint64_t sent;             /* records queued: the producer's numbers */
	int done_failed;           /* the bookmark could not take a request */
	int save_failed;           /* said once; no more saves */
	uint64_t oversized;        /* records skipped as too long */
	int status;                /* exit status decided so far */
	produce_report_t rep;      /* --report */
	cli_progress_t prog;       /* of a file on stdin */
	off_t in_start, in_end;
} run_t;

/* A file on stdin shows how far it has been read (a pipe has no end to
 * measure by: a shipper's tail -F runs for ever). */
static void
progress_start(run_t *r)
{
	struct stat st;
	off_t at;

	if (fstat(STDIN_FILENO, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (at = lseek(STDIN_FILENO, 0, SEEK_CUR)) < 0 || st.st_size <= at) {
		cli_progress_init(&r->prog, 1, 0);
		return;
	}
	r->in_start = at;
	r->in_end = st.st_size;
	cli_progress_init(&r->prog, r->o->quiet, r->o->progress);
}

static void
progress(run_t *r)
{
	off_t at;

	if (r->prog.mode != 0 && (at = lseek(STDIN_FILENO, 0, SEEK_CUR)) >= 0)
		cli_progress_update(&r->prog, "stdin",
		    (uint64_t)(at - r->in_start),
		    (uint64_t)(r->in_end - r->in_start), r->recno, "records");
}

/* Report record recno as bad and stop reading; the status follows rc. */
static int
bad_record(run_t *r, int rc, const char *why)
{
	fprintf(stderr, PROG ": record %" PRIu64 ": %s\n", r->recno, why);
	r->status = rc == -KLOG_EINVAL ? KLOG_EXIT_DATAERR : KLOG_EXIT_FAIL;
	return -1;
}

/*
 * Record recno is over --max-message: a shipper fed by tail -F must not
 * lose every record after one long line, so it is skipped with a warning
 * and the run ends 1 (OpenBSD's habit), unless --stop-on-oversize makes it
 * the end.  <0 stops reading.  The broker's own limit cannot be learnt
 * (METADATA does not carry it), so the message names both settings.
 */
static int
oversized(run_t *r)
{
	const int stop = r->o->stop_on_oversize;

	fprintf(stderr, PROG ": record %" PRIu64 ": over the maximum message "
	    "size of %zu bytes (--max-message here, --max-message-bytes on "
	    "the broker); %s\n", r->recno, r->o->pc.max_message,
	    stop ? "not sent" : "skipped");
	r->oversized++;
	if (!stop)
		return 0;
	r->status = KLOG_EXIT_FAIL;
	return -1;
}

/* -J: the envelope's headers, then -H's; NULL when out of memory. */
static const klog_header_t *
all_headers(run_t *r, uint32_t *count)
{
	const klog_input_record_t *j = &r->jrec;
	uint32_t n = j->header_count + r->o->nhdrs;
	klog_header_t *h;

	*count = n;
	if (r->o->nhdrs == 0 || j->header_count == 0)
		return j->header_count ? j->hdrs : r->o->hdrs;
	if (n > r->hdrs_cap) {
		if ((h = realloc(r->hdrs, n * sizeof(*h))) == NULL)
			return NULL;
		r->hdrs = h;
		r->hdrs_cap = n;
	}
	memcpy(r->hdrs, j->hdrs, j->header_count * sizeof(*h));
	memcpy(r->hdrs + j->header_count, r->o->hdrs,
	    r->o->nhdrs * sizeof(*h));
	return r->hdrs;
}

/* A record of line rec[0..len) with -H's headers and --timestamp's time. */
static void
record_init(const run_t *r, const uint8_t *rec, size_t len,
    klog_producer_rec_t *pr)
{
	*pr = (klog_producer_rec_t){ .value = rec, .value_len = len,
	    .timestamp = r->o->stamp ? r->read_ms : KLOG_NO_TIMESTAMP,
	    .headers = r->o->hdrs, .header_count = r->o->nhdrs };
}

/* -J: the envelope into *pr; 0 for a blank line, <0 stops reading. */
static int
from_envelope(run_t *r, const uint8_t *line, size_t len,
    klog_producer_rec_t *pr)
{
	const klog_input_record_t *j = &r->jrec;
	klog_err_t err;
	int rc;

	KLOG_ERR_EMPTY(&err);
	/* A blank line is no record: the numbers in messages count records,
	 * as klog-consume -J wrote them, not lines. */
	if ((rc = klog_input_envelope(line, len, &r->jrec, r->bm ? &r->src :
	    NULL, &err)) == 0)
		return 0;
	r->recno++;
	if (rc < 0)
		return bad_record(r, rc, r->in.unterminated ? "the input ends "
		    "inside it, with no newline (did its writer die?)" :
		    err.msg);
	/* An empty buffer may have no memory: "" is an empty value, NULL a
	 * null one. */
	record_init(r, j->null_payload ? NULL : j->payload.len ?
	    j->payload.data : (const uint8_t *)"", j->payload.len, pr);
	pr->key = !j->has_key ? NULL : j->key.len ? j->key.data :
	    (const uint8_t *)"";
	pr->key_len = j->key.len;
	if (j->timestamp != KLOG_NO_TIMESTAMP)
		pr->timestamp = j->timestamp;
	if ((pr->headers = all_headers(r, &pr->header_count)) == NULL)
		return bad_record(r, -KLOG_ENOMEM, "out of memory");
	return 1;
}

/* A line into *pr: its key before -K's delimiter, if it has one. */
static void
from_line(const run_t *r, const uint8_t *rec, size_t len,
    klog_producer_rec_t *pr)
{
	const opts_t *o = r->o;
	const uint8_t *hit;

	record_init(r, rec, len, pr);
	/* memchr for one byte: memmem's own setup cost a fifth of what a
	 * keyed record adds (callgrind). */
	if (o->keydelim.len == 0 || (hit = o->keydelim.len == 1 ?
	    memchr(rec, o->keydelim.data[0], len) : memmem(rec, len,
	    o->keydelim.data, o->keydelim.len)) == NULL)
		return;
	pr->key = rec;
	pr->key_len = (size_t)(hit - rec);
	if (o->strip_key) {
		pr->value = hit + o->keydelim.len;
		pr->value_len -= pr->key_len + o->keydelim.len;
	}
}

/* Publish one record cut from stdin; <0 stops reading.  A run that makes
 * no records sends plain lines as it always did, at the same cost. */
static int
record(run_t *r, const uint8_t *rec, size_t len)
{
	klog_producer_rec_t pr;
	klog_err_t err;
	int rc;

	KLOG_ERR_EMPTY(&err);
	if (r->o->json) {
		if ((rc = from_envelope(r, rec, len, &pr)) <= 0)
			return rc;
	} else {
		r->recno++;
		if (!r->plain)
			from_line(r, rec, len, &pr);
	}
	/* Noted first, so that a record of a second topic is not sent; a
	 * number that send then refuses is never acknowledged.  A record a
	 * killed run's producer wrote is not sent again (mirror.h). */
	if (r->bm != NULL && (rc = klog_mirror_note(r->bm, &pr, r->src.topic,
	    r->src.partition, r->src.offset, r->src.next_offset, &err)) != 0)
		return rc < 0 ? bad_record(r, rc, err.msg) : 0;
	rc = r->plain ? klog_producer_send(r->p, rec, len, NULL, 0) :
	    klog_producer_send_record(r->p, &pr);
	if (rc == -KLOG_ETOOBIG)
		return oversized(r);
	if (rc < 0 || (r->bm != NULL && (rc = klog_mirror_sent(r->bm)) < 0))
		return bad_record(r, rc, klog_strerror(rc));
	r->sent++;
	if (produce_report_sent(&r->rep, r->recno, r->sent) == 0)
		return 0;
	fprintf(stderr, PROG ": out of memory\n");
	r->status = KLOG_EXIT_FAIL;
	return -1;
}

/*
 * Publish the complete records buffered while the producer has room:
 * 1 if some are left for later, 0 if none, <0 stops reading.  Stopping
 * when busy keeps the queue, and the memory of its frames, bounded
 * whatever a read of stdin brought.
 */
static int
drain_input(run_t *r)
{
	const uint8_t *rec;
	size_t len;
	int rc;

	/* A record too long for the input buffer is dropped there as it
	 * streams in, without ever being held whole. */
	while (!klog_producer_busy(r->p)) {
		if ((rc = klog_input_next(&r->in, &rec, &len)) == 0)
			return 0;
		if (rc == -KLOG_ETOOBIG) {
			r->recno++;
			if (oversized(r) < 0)
				return -1;
		} else if (record(r, rec, len) < 0) {
			return -1;
		}
	}
	return 1;
}

/*
 * --source-offset-file: save the source positions the destination now
 * holds.  A failure is said once and ends the run with status 74.
 */
static int
settle(run_t *r)
{
	klog_err_t err = { 0 };
	int rc;

	if (r->bm == NULL)
		return 0;
	if (r->save_failed)
		return -1;
	if (r->done_failed)
		rc = klog_err_set(&err, -KLOG_ENOMEM, "out of memory");
	else if ((rc = klog_mirror_settle(r->bm, &err)) == 0)
		return 0;
	fprintf(stderr, PROG ": %s\n", klog_err_text(&err, rc));
	r->status = KLOG_EXIT_IOERR;
	r->save_failed = 1;
	return -1;
}

/*
 * Cluster mode: take ZooKeeper's news; when the brokers or the topic's
 * partitions changed, map the partitions again (moving what was queued for
 * a broker that left).  A failure leaves the old map; it is said once.
 */
static void
cluster_events(run_t *r)
{
	klog_err_t err = { 0 };
	int rc;

	if (!cli_zk_news(r->d, r->o->quiet))
		return;
	if ((rc = klog_producer_refresh(r->p, &err)) < 0 && !r->o->quiet)
		fprintf(stderr, PROG ": %s; waiting\n",
		    klog_err_text(&err, rc));
	else if (rc == 0 && r->o->verbose)
		fprintf(stderr, PROG ": topic \"%s\": %d partition%s now\n",
		    r->o->pc.topic, klog_producer_partitions(r->p),
		    klog_producer_partitions(r->p) == 1 ? "" : "s");
}

/*
 * Read stdin and publish until EOF, a signal, a bad record or a fatal
 * producer error (returned).  Batches go out when full, when lingering too
 * long, and as soon as stdin has nothing more to give right now.  Records
 * already read go before stdin is read again.
 */
static int
pump(run_t *r, klog_err_t *err)
{
	int idle = 1, more = 0, eof = 0, busy, rc;

	while (!cli_stopped()) {
		if (more && !klog_producer_busy(r->p)) {
			if ((more = drain_input(r)) < 0 || (!more && eof))
				return 0;
			progress(r);
		}
		busy = klog_producer_busy(r->p);
		rc = klog_producer_poll(r->p, busy || more ? -1 : STDIN_FILENO,
		    busy || (idle && !more) ? -1 : 0, err);
		if (rc < 0)
			return rc;
		if (settle(r) < 0)
			return 0;
		if (rc & KLOG_PRODUCER_WOKEN)
			cluster_events(r);
		if (more)
			continue;
		if (!(rc & KLOG_PRODUCER_INPUT)) {
			if (!idle && !klog_producer_busy(r->p)) {
				klog_producer_flush(r->p);
				idle = 1;
			}
			continue;
		}
		idle = 0;
		if ((rc = klog_input_fill(&r->in, STDIN_FILENO, err)) < 0) {
			fprintf(stderr, PROG ": stdin: %s\n", err->msg);
			r->status = KLOG_EXIT_IOERR;
			return 0;
		}
		eof = rc == 0;
		if (r->o->stamp)
			r->read_ms = klog_clock_wall_ms();
		if ((more = drain_input(r)) < 0 || (!more && eof))
			return 0;
		progress(r);
	}
	return 0;
}

static void
mirror_report(const run_t *r)
{
	klog_mirror_counts_t c;

	klog_mirror_counts(r->bm, &c);
	if (c.found > 0 || c.again > 0)
		fprintf(stderr, PROG ": mirror: %" PRIu64 " records not sent "
		    "again (at the destination already), %" PRIu64 " of those "
		    "found not met, %" PRIu64 " inside batches\n", c.skipped,
		    c.left, c.again);
}

static void
report(const run_t *r, int64_t start_ms)
{
	klog_producer_stats_t st;
	uint64_t missing;
	const char *verb = r->o->pc.acks == KLOG_ACKS_NONE ? "written" :
	    "acknowledged";

	klog_producer_stats(r->p, &st);
	missing = st.records - st.acked;
	if (r->o->verbose)
		fprintf(stderr, PROG ": %" PRIu64 " records, %" PRIu64
		    " %s, %" PRIu64 " refused, %" PRIu64 " payload bytes, %"
		    PRIu64 " requests, %" PRIu64 " resent, %" PRIu64
		    " reconnects, %.3f s\n", st.records, st.acked, verb,
		    st.failed, st.bytes, st.requests, st.resent,
		    st.reconnects,
		    (double)(klog_clock_mono_ms() - start_ms) / 1000.0);
	if (klog_producer_error(r->p) != NULL)
		fprintf(stderr, PROG ": %s\n", klog_producer_error(r->p));
	if (r->bm != NULL && r->o->verbose)
		mirror_report(r);
	if (missing > 0)
		fprintf(stderr, PROG ": %" PRIu64 " of %" PRIu64 " records %s,"
		    " %" PRIu64 " not\n", st.acked, st.records, verb, missing);
	if (st.too_large > 0)
		fprintf(stderr, PROG ": a record was over the broker's "
		    "--max-message-bytes, which is below this producer's "
		    "--max-message of %zu bytes\n", r->o->pc.max_message);
	if (r->oversized > 0 && !r->o->stop_on_oversize)
		fprintf(stderr, PROG ": %" PRIu64 " record%s over %zu bytes "
		    "skipped\n", r->oversized, r->oversized == 1 ? "" : "s",
		    r->o->pc.max_message);
}

/* Flush and wait for every acknowledgement, following the cluster. */
static int
drain(run_t *r, klog_err_t *err)
{
	int rc;

	klog_producer_flush(r->p);
	while (!klog_producer_done(r->p)) {
		if ((rc = klog_producer_poll(r->p, -1, -1, err)) < 0)
			return rc;
		if (settle(r) < 0)
			return 0;
		if (rc & KLOG_PRODUCER_WOKEN)
			cluster_events(r);
	}
	(void)settle(r);
	return 0;
}

/* The producer's word on a request: to the bookmark. */
static void
request_done(void *arg, const klog_producer_done_t *d)
{
	run_t *r = arg;

	if (r->bm != NULL && klog_mirror_done(r->bm, d) < 0)
		r->done_failed = 1;
	if (r->rep.f != NULL)
		produce_report_done(&r->rep, d);
}

/* --source-offset-file with --idempotent: what a killed run's producer
 * wrote past the bookmark, found at the destination.  0, or an exit
 * status. */
static int
mirror_start(run_t *r, int64_t pid)
{
	klog_err_t err = { 0 };
	klog_mirror_counts_t c;
	int rc;

	if ((rc = klog_mirror_start(r->bm, r->d, pid,
	    r->o->pc.connect_timeout_ms, &err)) < 0) {
		fprintf(stderr, PROG ": %s\n", klog_err_text(&err, rc));
		return klog_exit_for(rc);
	}
	klog_mirror_counts(r->bm, &c);
	if (r->o->verbose)
		fprintf(stderr, PROG ": mirror: %" PRIu64 " records of earlier "
		    "runs past the bookmark at the destination, %" PRIu64
		    " copied inside batches at it\n", c.found, c.inside);
	return 0;
}

static int
connect_producer(run_t *r)
{
	klog_err_t err = { 0 };
	int64_t pid;
	int16_t epoch;
	int rc;

	if ((rc = cli_where_open(&r->o->where, r->o->pc.connect_timeout_ms,
	    &r->zk, &r->d)) != 0)
		return rc;
	/* -J's keys are stored but place no record, so a request's records
	 * are consecutive, as the bookmark needs. */
	r->o->pc.unkeyed_partitions = r->o->json;
	r->plain = !r->o->json && r->o->keydelim.len == 0 &&
	    r->o->nhdrs == 0 && !r->o->stamp &&
	    r->o->pc.codec <= KLOG_CODEC_GZIP;
	if (r->bm != NULL || r->rep.f != NULL) {
		r->o->pc.done = request_done;
		r->o->pc.arg = r;
	}
	if ((rc = klog_producer_open(r->d, &r->o->pc, &r->p, &err)) < 0) {
		fprintf(stderr, PROG ": %s\n", klog_err_text(&err, rc));
		return rc == -KLOG_ETOPIC ? KLOG_EXIT_USAGE :
		    klog_exit_for(rc);
	}
	if (r->zk != NULL)
		klog_producer_wake_on(r->p, klog_zk_event_fd(r->zk));
	if (!klog_producer_id(r->p, &pid, &epoch))
		return 0;
	if (r->o->verbose)
		fprintf(stderr, PROG ": idempotent: producer id %lld, epoch "
		    "%d\n", (long long)pid, (int)epoch);
	return r->bm != NULL ? mirror_start(r, pid) : 0;
}

/* --source-offset-file's bookmark and --report's file opened: 0, or an
 * exit status. */
static int
open_outputs(run_t *r)
{
	const opts_t *o = r->o;
	klog_err_t err = { 0 };
	int rc;

	if (o->source_file != NULL && (rc = klog_mirror_open(o->source_file,
	    o->pc.topic, o->pc.idempotent, &r->bm, &err)) < 0) {
		fprintf(stderr, PROG ": %s\n", klog_err_text(&err, rc));
		return klog_exit_for(rc);
	}
	if (o->report_path != NULL && (r->rep.f = strcmp(o->report_path,
	    "-") == 0 ? stdout : fopen(o->report_path, "we")) == NULL) {
		fprintf(stderr, PROG ": --report %s: %s\n", o->report_path,
		    strerror(errno));
		return KLOG_EXIT_IOERR;
	}
	return 0;
}

/* The exit status of a run that ended with rc: 0 only when every record
 * read was acknowledged. */
static int
run_status(const run_t *r, int rc)
{
	klog_producer_stats_t st;
	int status = r->status;

	if (status == 0 && r->oversized > 0)
		status = KLOG_EXIT_FAIL;
	if (status == 0 && rc < 0)
		status = klog_exit_for(rc);
	if (status == 0 && !klog_producer_done(r->p))
		status = KLOG_EXIT_FAIL;
	if (status == 0) {
		klog_producer_stats(r->p, &st);
		if (st.denied > 0)
			status = KLOG_EXIT_NOPERM;
		else if (st.acked != st.records)
			status = KLOG_EXIT_FAIL;
	}
	return status;
}

/* The report's last check, then everything closed; the exit status. */
static int
close_run(run_t *r, int status)
{
	/* The report is the ledger of what the broker holds: a report that
	 * could not be written whole fails the run. */
	if (r->rep.f != NULL && (fflush(r->rep.f) == EOF ||
	    ferror(r->rep.f))) {
		fprintf(stderr, PROG ": --report %s: %s\n", r->o->report_path,
		    strerror(errno));
		status = KLOG_EXIT_IOERR;
	}
	if (r->rep.f != NULL && r->rep.f != stdout)
		fclose(r->rep.f);
	produce_report_free(&r->rep);
	klog_input_free(&r->in);
	klog_mirror_close(r->bm);
	klog_producer_close(r->p);
	klog_discovery_close(r->d);
	klog_zk_close(r->zk);
	klog_input_record_free(&r->jrec);
	free(r->hdrs);
	klog_buf_free(&r->o->delim);
	klog_buf_free(&r->o->keydelim);
	cli_where_close(&r->o->where);
	return status;
}

int
main(int argc, char **argv)
{
	klog_err_t err = { 0 };
	opts_t o;
	run_t r;
	int64_t start_ms = klog_clock_mono_ms();
	int rc, status;

	cli_init(PROG);
	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	klog_producer_config_default(&o.pc);
	klog_buf_init(&o.delim);
	klog_buf_init(&o.keydelim);
	klog_buf_put(&o.delim, "\n", 1);
	cli_where_init(&o.where);
	parse_args(argc, argv, &o);

	/* The first signal drains and exits; the second one kills. */
	cli_catch_stop();

	r.o = &o;
	klog_input_record_init(&r.jrec);
	if ((status = open_outputs(&r)) != 0 ||
	    (status = connect_producer(&r)) != 0)
		return close_run(&r, status);
	if (klog_input_init(&r.in, o.delim.data, o.delim.len,
	    o.json ? 6 * o.pc.max_message + 1024 : o.pc.max_message) < 0) {
		fprintf(stderr, PROG ": out of memory\n");
		return close_run(&r, KLOG_EXIT_FAIL);
	}
	progress_start(&r);
	rc = pump(&r, &err);
	cli_progress_end(&r.prog);
	if (rc == 0)
		rc = drain(&r, &err);
	if (rc < 0)
		fprintf(stderr, PROG ": %s\n", klog_err_text(&err, rc));
	report(&r, start_ms);
	return close_run(&r, run_status(&r, rc));
}
