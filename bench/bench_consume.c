/*
 * bench_consume: the broker's fetch path, and a reader that checks what it
 * gets.  FETCH requests for one partition over one connection, each sent
 * as soon as the previous answer is in (the length fields of that answer's
 * entries say where the next one starts); then that answer's messages are
 * walked with klog_iter_next(), every CRC checked and gzip wrappers opened.
 * The top-level CRCs of a large answer are checked on -j worker threads
 * (crcpool.h) while the main thread receives the next answer, and the main
 * thread then helps with what is left: the answer stays in a buffer of its
 * own meanwhile (klog_client_detach()).
 *
 *   bench_consume [-b host:port] [-E end-offset | -n messages]
 *       [-f fetch-size] [-j workers] [-o offset|beginning|end] [-p partition]
 *       [-S epoch-ms] [-t topic] [-w max-wait]
 *
 * It reads up to the end the partition had at start, or up to -E (a
 * message boundary: fetches ask for no more than the bytes left, so that
 * many readers of small slices do not each pull a whole fetch size), or -n
 * messages, long-polling at the end for more (a consumer following
 * producers).  Timing runs from the first fetch (sent at the
 * wall-clock time -S, if given) to the last message.  Prints one line:
 *   msgs N bytes B fetches F secs S msgs_s X mb_s Y start T0 end T1 next O
 * bytes are the message-set bytes read, MB 10^6 of them, start and end
 * wall-clock seconds, next the offset after the last message.  Exit 65 for
 * a bad CRC or entry, 1 if the broker answers an error or nothing comes for
 * 30 seconds, 69 if it cannot be reached, 64 on misuse.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "klog/storage/crcpool.h"

#define PROG "bench_consume"
#define STALL_S 30.0
#define MAX_FETCH (64 << 20)

typedef struct opts {
	const char *broker;
	const char *topic;
	int32_t partition;
	int64_t start;         /* an offset or KLOG_OFFSET_* */
	int64_t messages;      /* 0: up to stop */
	int64_t stop;          /* -E; -1: the end at start */
	int32_t fetch;
	int32_t max_wait;
	int64_t start_at;
	int workers;
} opts_t;

typedef struct bench {
	const opts_t *o;
	klog_client_t *c;
	klog_crcpool_t *verify;
	int64_t offset;        /* where the fetch in flight starts */
	int64_t stop;          /* without -n: where to stop */
	int32_t fetch;         /* grows for an entry larger than it */
	int64_t walked;        /* entries in the answers so far */
	int64_t wend;          /* the offset after them */
	int64_t msgs, bytes, fetches;
	int64_t next;          /* the offset after the last message counted */
	int outstanding;       /* a fetch is in flight */
	int pending;           /* an answer is being checked: */
	const uint8_t *set;    /*   its whole entries, */
	size_t set_len;
	int64_t base;          /*   where they start, */
	klog_buf_t held;       /*   and the buffer holding them */
} bench_t;

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: " PROG " [-b host:port] [-E end-offset | -n messages] "
	    "[-f fetch-size] [-j workers]\n"
	    "                     [-o offset] [-p partition] [-S epoch-ms] "
	    "[-t topic]\n"
	    "                     [-w max-wait]\n"
	    "  -b, --broker H:P      the broker (default 127.0.0.1:9092)\n"
	    "  -E, --end-offset O    stop at offset O, a message boundary\n"
	    "                        (default: the end at start)\n"
	    "  -f, --fetch-size SIZE bytes per fetch (default 4M)\n"
	    "  -j, --workers N       CRC-checking threads besides the main "
	    "one (default 1)\n"
	    "  -n, --messages N      read N messages, waiting for them\n"
	    "  -o, --offset OFFSET   beginning (default), end, or a byte "
	    "offset\n"
	    "  -p, --partition N     the partition (default 0)\n"
	    "  -S, --start-at MS     start at this wall-clock time (ms)\n"
	    "  -t, --topic T         the topic (default bench)\n"
	    "  -w, --max-wait MS     long-poll wait at the end (default 500)\n");
}

static void
parse_opts(int argc, char **argv, opts_t *o)
{
	static const struct option longs[] = {
		{ "broker", required_argument, NULL, 'b' },
		{ "end-offset", required_argument, NULL, 'E' },
		{ "fetch-size", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "workers", required_argument, NULL, 'j' },
		{ "max-wait", required_argument, NULL, 'w' },
		{ "messages", required_argument, NULL, 'n' },
		{ "offset", required_argument, NULL, 'o' },
		{ "partition", required_argument, NULL, 'p' },
		{ "start-at", required_argument, NULL, 'S' },
		{ "topic", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*o = (opts_t){ .broker = "127.0.0.1:9092", .topic = "bench",
	    .start = KLOG_OFFSET_EARLIEST, .stop = -1, .fetch = 4 << 20,
	    .max_wait = 500, .workers = 1 };
	while ((ch = getopt_long(argc, argv, "b:E:f:hj:n:o:p:S:t:w:", longs,
	    NULL)) != -1) {
		switch (ch) {
		case 'b':
			o->broker = optarg;
			break;
		case 'E':
			o->stop = bench_opt_i64(PROG, "-E", optarg, 0,
			    INT64_MAX);
			break;
		case 'f':
			o->fetch = (int32_t)bench_opt_size(PROG, "-f", optarg,
			    64, MAX_FETCH);
			break;
		case 'h':
			usage(stdout);
			exit(KLOG_EXIT_OK);
		case 'j':
			o->workers = (int)bench_opt_i64(PROG, "-j", optarg, 0,
			    64);
			break;
		case 'n':
			o->messages = bench_opt_i64(PROG, "-n", optarg, 1,
			    INT64_MAX);
			break;
		case 'o':
			if (strcmp(optarg, "beginning") == 0)
				o->start = KLOG_OFFSET_EARLIEST;
			else if (strcmp(optarg, "end") == 0)
				o->start = KLOG_OFFSET_LATEST;
			else
				o->start = bench_opt_i64(PROG, "-o", optarg,
				    0, INT64_MAX);
			break;
		case 'p':
			o->partition = (int32_t)bench_opt_i64(PROG, "-p",
			    optarg, 0, INT32_MAX);
			break;
		case 'S':
			o->start_at = bench_opt_i64(PROG, "-S", optarg, 0,
			    INT64_MAX / 2);
			break;
		case 't':
			o->topic = optarg;
			break;
		case 'w':
			o->max_wait = (int32_t)bench_opt_i64(PROG, "-w", optarg,
			    0, 60000);
			break;
		default:
			fprintf(stderr, "Try '" PROG " -h'\n");
			exit(KLOG_EXIT_USAGE);
		}
	}
	if (optind != argc)
		errx(KLOG_EXIT_USAGE, "%s: unexpected argument (try '"
		    PROG " -h')", argv[optind]);
	if (o->stop >= 0 && o->messages > 0)
		errx(KLOG_EXIT_USAGE, "-E and -n exclude each other (try '"
		    PROG " -h')");
}

static void
send_fetch(bench_t *bp, int64_t offset)
{
	klog_fetch_part_t part = { .topic = { bp->o->topic,
	    (uint16_t)strlen(bp->o->topic) }, .partition = bp->o->partition,
	    .offset = offset, .max_bytes = bp->fetch };
	klog_fetch_req_t req = { .max_wait_ms = bp->o->max_wait,
	    .min_bytes = 1, .count = 1, .parts = &part };
	klog_err_t e = { 0 };
	int rc;

	if (bp->o->messages == 0 && bp->stop - offset < part.max_bytes)
		part.max_bytes = (int32_t)(bp->stop - offset);
	if (klog_proto_encode_fetch(klog_client_out(bp->c),
	    klog_client_next_id(bp->c), &req) < 0)
		errx(KLOG_EXIT_USAGE, "topic \"%s\": invalid", bp->o->topic);
	if ((rc = klog_client_write(bp->c, &e)) < 0)
		errx(KLOG_EXIT_UNAVAILABLE, "%s", klog_err_text(&e, rc));
	bp->offset = offset;
	bp->fetches++;
	bp->outstanding = 1;
}

/* The bytes of whole entries at the start of set, counted into *n. */
static size_t
whole_entries(const uint8_t *set, size_t len, int64_t *n)
{
	size_t pos = 0;

	while (len - pos >= KLOG_LENGTH_SIZE) {
		uint32_t l = klog_be32(set + pos);

		if (l > len - pos - KLOG_LENGTH_SIZE)
			break;
		pos += KLOG_LENGTH_SIZE + l;
		(*n)++;
	}
	return pos;
}

/* Whether entries walked up to wend hold all the reader wants (with gzip
 * wrappers, -n may need more than that: one fetch too many is harmless). */
static int
enough(const bench_t *bp, int64_t walked, int64_t wend)
{
	return bp->o->messages > 0 ? walked >= bp->o->messages :
	    wend >= bp->stop;
}

static int
done(const bench_t *bp)
{
	return bp->o->messages > 0 ? bp->msgs >= bp->o->messages :
	    bp->wend >= bp->stop;
}

/* Finish checking the pending answer, and walk every message of it. */
static void
finish_pending(bench_t *bp)
{
	unsigned flags = KLOG_ITER_DEEP;
	int64_t before = bp->next;
	klog_iter_t it;
	klog_msg_t m;
	int rc;

	if (!bp->pending)
		return;
	bp->pending = 0;
	/* A mismatch found here is found again, and reported, below. */
	if (klog_crcpool_finish(bp->verify) == 0)
		flags |= KLOG_ITER_OUTER_CHECKED;
	klog_iter_init(&it, bp->set, bp->set_len, bp->base, flags, 0);
	while ((rc = klog_iter_next(&it, &m)) == 1) {
		if (!m.valid)
			errx(KLOG_EXIT_DATAERR, "partition %d: offset %" PRId64
			    ": crc mismatch", (int)bp->o->partition, m.offset);
		if (bp->o->messages > 0 && bp->msgs == bp->o->messages)
			break;
		bp->msgs++;
		bp->next = m.next_offset;
	}
	if (rc < 0)
		errx(KLOG_EXIT_DATAERR, "partition %d: offset %" PRId64 ": %s",
		    (int)bp->o->partition, klog_iter_error_offset(&it),
		    klog_iter_error(&it));
	klog_iter_free(&it);
	if (bp->next != before)
		bp->bytes += bp->next - bp->base;
}

/* One answer: ask for the next range, finish the answer before, and
 * start checking this one while the next comes in. */
static void
on_fetch(bench_t *bp, const uint8_t *body, size_t len)
{
	klog_fetch_result_t r;
	int64_t base = bp->offset, walked = bp->walked;
	uint32_t n;
	size_t whole;

	if (klog_proto_decode_fetch_resp(body, len, &r, 1, &n) < 0 || n != 1)
		errx(KLOG_EXIT_FAIL, "%s: malformed fetch answer",
		    klog_client_name(bp->c));
	if (r.error != KLOG_WIRE_NONE)
		errx(KLOG_EXIT_FAIL, "topic \"%s\" partition %d: offset %"
		    PRId64 ": %s", bp->o->topic, (int)bp->o->partition, base,
		    klog_wire_error_name(r.error));
	whole = whole_entries(r.set, r.set_len, &walked);
	if (whole == 0 && r.set_len > 0) {
		if (bp->fetch >= MAX_FETCH)
			errx(KLOG_EXIT_FAIL, "offset %" PRId64 ": an entry "
			    "over %d bytes", base, MAX_FETCH);
		bp->fetch *= 2;
	}
	bp->outstanding = 0;
	if (!enough(bp, walked, base + (int64_t)whole))
		send_fetch(bp, base + (int64_t)whole);
	bp->walked = walked;
	bp->wend = base + (int64_t)whole;
	finish_pending(bp);
	if (klog_client_detach(bp->c, &bp->held) < 0)
		errx(KLOG_EXIT_FAIL, "out of memory");
	bp->pending = 1;
	bp->set = r.set;
	bp->set_len = whole;
	bp->base = base;
	klog_crcpool_start(bp->verify, r.set, whole);
}

static void
run(bench_t *bp)
{
	klog_resp_header_t h;
	klog_err_t e = { 0 };
	const uint8_t *body;
	double last = bench_now(), prev = last, now;
	int64_t seen = -1;
	size_t len;
	int rc;

	if (done(bp))
		return;
	send_fetch(bp, bp->offset);
	while (!done(bp)) {
		if (!bp->outstanding && bp->pending) {
			finish_pending(bp);
			continue;
		}
		bench_wait(bp->c, POLLIN, 1000);
		if ((rc = klog_client_read(bp->c, &e)) < 0)
			errx(klog_exit_for(rc), "%s", klog_err_text(&e, rc));
		while ((rc = klog_client_response(bp->c, &h, &body, &len,
		    &e)) > 0) {
			if (h.error != KLOG_WIRE_NONE)
				errx(KLOG_EXIT_FAIL, "%s: %s",
				    klog_client_name(bp->c),
				    klog_wire_error_name(h.error));
			on_fetch(bp, body, len);
		}
		if (rc < 0)
			errx(KLOG_EXIT_FAIL, "%s", klog_err_text(&e, rc));
		/* A pass waits a second at most: a longer one was a stop
		 * (bench/clients.sh stops a slow consumer between rounds),
		 * not a stall. */
		now = bench_now();
		if (now - prev > 2.0)
			last += now - prev;
		prev = now;
		if (bp->msgs != seen) {
			seen = bp->msgs;
			last = now;
		} else if (now - last > STALL_S) {
			errx(KLOG_EXIT_FAIL, "nothing new for %.0f s after %"
			    PRId64 " messages (offset %" PRId64 ")", STALL_S,
			    bp->msgs, bp->offset);
		}
	}
	finish_pending(bp);
}

int
main(int argc, char **argv)
{
	opts_t o;
	bench_t b = { .o = &o };
	double t0, t1, w0, w1;

	parse_opts(argc, argv, &o);
	b.fetch = o.fetch;
	if (klog_crcpool_new(o.workers, &b.verify) < 0)
		errx(KLOG_EXIT_FAIL, "cannot start %d threads", o.workers);
	b.c = bench_connect(o.broker);
	klog_client_set_max_response(b.c, MAX_FETCH + (1 << 20));
	b.offset = o.start >= 0 ? o.start :
	    bench_offset(b.c, o.topic, o.partition, o.start);
	b.wend = b.next = b.offset;
	if (o.messages == 0)
		b.stop = o.stop >= 0 ? o.stop : bench_offset(b.c, o.topic,
		    o.partition, KLOG_OFFSET_LATEST);
	bench_start_at(o.start_at);
	w0 = bench_wall();
	t0 = bench_now();
	run(&b);
	t1 = bench_now();
	w1 = bench_wall();
	if (t1 <= t0)
		t1 = t0 + 1e-9;
	printf("msgs %" PRId64 " bytes %" PRId64 " fetches %" PRId64
	    " secs %.3f msgs_s %.0f mb_s %.1f start %.3f end %.3f next %"
	    PRId64 "\n", b.msgs, b.bytes, b.fetches, t1 - t0,
	    (double)b.msgs / (t1 - t0), (double)b.bytes / 1e6 / (t1 - t0),
	    w0, w1, b.next);
	klog_client_close(b.c);
	klog_crcpool_free(b.verify);
	klog_buf_free(&b.held);
	if (fflush(stdout) != 0)
		err(KLOG_EXIT_IOERR, "stdout");
	return KLOG_EXIT_OK;
}
