/*
 * bench_produce: the broker's produce path, with the client out of the way.
 * Speaks the wire protocol itself (proto.h encoders over one klog_client_t
 * connection), keeps up to a window of requests in flight, and writes each
 * request with a sendmsg(2) of its own, never coalesced with the next one.
 * The message sets are encoded (and their CRCs computed) once, before
 * timing, and reused, so the figure is the broker's and the loopback's.
 *
 *   bench_produce [-MN] [-a acks] [-b host:port] [-k parts] [-m batch]
 *       [-n messages] [-P partitions] [-p partition] [-S epoch-ms]
 *       [-s size] [-t topic] [-w window]
 *
 * Each request holds k parts of m messages of s bytes; successive parts go
 * to partitions p, p+1, ..., p+P-1 in turn.  Timing starts at the first
 * request (at the wall-clock time -S, if given, so that several processes
 * start together) and ends when the broker answers one last request with
 * acks 1 asking every partition for its end: a connection's requests are
 * handled in order, so that answer covers acks-0 requests too.  The ends
 * must have grown by at least the bytes sent.
 *
 * Like every klog client, it sets TCP_NODELAY, so each small request is
 * pushed as a segment of its own, and on loopback the sending core also
 * runs the receiving side of TCP for it: about 2.5 us a segment here,
 * which caps one-message requests near 400,000 a second whatever the
 * broker does.  -M passes MSG_MORE to every sendmsg(2) that the next
 * request follows at once (the window has room), so requests written back
 * to back share segments and the last one of a run is pushed at once;
 * each request is still its own sendmsg(2), and the broker still reads,
 * appends and answers each on its own.  -N instead lets Nagle's algorithm
 * merge small writes while earlier ones are unacknowledged.
 *
 * Prints one line:
 *   msgs N bytes B requests R secs S msgs_s X mb_s Y start T0 end T1
 * bytes are message-set bytes (the 9 bytes of framing of each message
 * included, request headers not), MB are 10^6 of them, start and end are
 * wall-clock seconds.  Exit 1 if the broker refuses anything, 69 if it
 * cannot be reached, 64 on misuse.
 */
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "bench.h"

#define PROG "bench_produce"
#define NSETS 16   /* distinct message sets, used in turn */

typedef struct opts {
	const char *broker;
	const char *topic;
	int acks;
	uint32_t parts;        /* per request */
	uint32_t batch;        /* messages per part */
	int64_t messages;
	int32_t partitions;
	int32_t first;
	size_t size;
	int64_t window;
	int64_t start_at;      /* wall-clock ms, 0: at once */
	int nagle;
	int more;
} opts_t;

typedef struct bench {
	const opts_t *o;
	klog_client_t *c;
	uint8_t *pool;                 /* NSETS sets of o->batch entries */
	size_t set_bytes;              /* one full set */
	size_t entry;                  /* one entry */
	klog_produce_part_t *pp;       /* max(parts, partitions) */
	klog_produce_result_t *res;
	klog_buf_t req;                /* the request being written */
	size_t wpos;
	int64_t left;                  /* messages not in a request yet */
	uint64_t nparts;               /* parts sent so far: round robin */
	uint64_t requests;
	int64_t inflight;              /* requests awaiting an answer */
	int32_t end_id;                /* 0 until the last request is made */
	int done;
	int64_t *ends;                 /* per partition, after the run */
} bench_t;

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: " PROG " [-MN] [-a acks] [-b host:port] [-k parts] "
	    "[-m batch]\n"
	    "                     [-n messages] [-P partitions] "
	    "[-p partition] [-S epoch-ms]\n"
	    "                     [-s size] [-t topic] [-w window]\n"
	    "  -M, --more            MSG_MORE while the next request follows\n"
	    "  -N, --nagle           let the kernel merge small requests\n"
	    "  -a, --acks A          0, 1 or all (default 1)\n"
	    "  -b, --broker H:P      the broker (default 127.0.0.1:9092)\n"
	    "  -k, --parts K         parts per request (default 1)\n"
	    "  -m, --batch M         messages per part (default 1)\n"
	    "  -n, --messages N      messages in all (default 10000000)\n"
	    "  -P, --partitions P    partitions to spread over (default 1)\n"
	    "  -p, --partition N     the first of them (default 0)\n"
	    "  -S, --start-at MS     start at this wall-clock time (ms)\n"
	    "  -s, --size BYTES      payload size (default 200)\n"
	    "  -t, --topic T         the topic (default bench)\n"
	    "  -w, --window W        requests in flight (default 256)\n");
}

static void
parse_opts(int argc, char **argv, opts_t *o)
{
	static const struct option longs[] = {
		{ "acks", required_argument, NULL, 'a' },
		{ "batch", required_argument, NULL, 'm' },
		{ "broker", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ "messages", required_argument, NULL, 'n' },
		{ "more", no_argument, NULL, 'M' },
		{ "nagle", no_argument, NULL, 'N' },
		{ "partition", required_argument, NULL, 'p' },
		{ "partitions", required_argument, NULL, 'P' },
		{ "parts", required_argument, NULL, 'k' },
		{ "size", required_argument, NULL, 's' },
		{ "start-at", required_argument, NULL, 'S' },
		{ "topic", required_argument, NULL, 't' },
		{ "window", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*o = (opts_t){ .broker = "127.0.0.1:9092", .topic = "bench",
	    .acks = KLOG_ACKS_LEADER, .parts = 1, .batch = 1,
	    .messages = 10000000, .partitions = 1, .size = 200,
	    .window = 256 };
	while ((ch = getopt_long(argc, argv, "a:b:hk:Mm:Nn:P:p:S:s:t:w:", longs,
	    NULL)) != -1) {
		switch (ch) {
		case 'a':
			o->acks = bench_opt_acks(PROG, optarg);
			break;
		case 'b':
			o->broker = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(KLOG_EXIT_OK);
		case 'k':
			o->parts = (uint32_t)bench_opt_i64(PROG, "-k", optarg,
			    1, 10000);
			break;
		case 'm':
			o->batch = (uint32_t)bench_opt_i64(PROG, "-m", optarg,
			    1, 100000);
			break;
		case 'M':
			o->more = 1;
			break;
		case 'N':
			o->nagle = 1;
			break;
		case 'n':
			o->messages = bench_opt_i64(PROG, "-n", optarg, 1,
			    INT64_MAX / 2);
			break;
		case 'P':
			o->partitions = (int32_t)bench_opt_i64(PROG, "-P",
			    optarg, 1, 100000);
			break;
		case 'p':
			o->first = (int32_t)bench_opt_i64(PROG, "-p", optarg,
			    0, INT32_MAX / 2);
			break;
		case 'S':
			o->start_at = bench_opt_i64(PROG, "-S", optarg, 0,
			    INT64_MAX / 2);
			break;
		case 's':
			o->size = (size_t)bench_opt_size(PROG, "-s", optarg, 0,
			    1000000);
			break;
		case 't':
			o->topic = optarg;
			break;
		case 'w':
			o->window = bench_opt_i64(PROG, "-w", optarg, 1,
			    1000000);
			break;
		default:
			fprintf(stderr, "Try '" PROG " -h'\n");
			exit(KLOG_EXIT_USAGE);
		}
	}
	if (optind != argc)
		errx(KLOG_EXIT_USAGE, "%s: unexpected argument (try '"
		    PROG " -h')", argv[optind]);
	if ((uint64_t)o->batch * klog_entry_size(o->size) > 64u << 20)
		errx(KLOG_EXIT_USAGE, "-m %u of -s %zu: sets over 64 MiB",
		    o->batch, o->size);
}

/* NSETS sets of batch entries with distinct payloads. */
static void
make_pool(bench_t *bp)
{
	const opts_t *o = bp->o;
	uint8_t *payload = malloc(o->size + 1);   /* -s 0 is allowed */
	size_t pos = 0;

	bp->entry = klog_entry_size(o->size);
	bp->set_bytes = bp->entry * o->batch;
	if (payload == NULL ||
	    (bp->pool = malloc(bp->set_bytes * NSETS)) == NULL)
		errx(KLOG_EXIT_FAIL, "out of memory");
	for (uint32_t i = 0; i < NSETS * o->batch; i++) {
		bench_fill(payload, o->size, i);
		pos += klog_entry_encode(bp->pool + pos, payload, o->size);
	}
	free(payload);
}

/* Encode the next request: data while messages are left, then the end. */
static void
next_request(bench_t *bp)
{
	const opts_t *o = bp->o;
	klog_produce_req_t req = { .acks = (int16_t)o->acks,
	    .timeout_ms = BENCH_TIMEOUT_MS, .parts = bp->pp };
	klog_str_t topic = { o->topic, (uint16_t)strlen(o->topic) };
	int32_t id = klog_client_next_id(bp->c);

	klog_buf_reset(&bp->req);
	bp->wpos = 0;
	if (bp->left == 0) {
		/* Empty sets, acks 1: answered behind everything before. */
		req.acks = KLOG_ACKS_LEADER;
		for (int32_t i = 0; i < o->partitions; i++)
			bp->pp[req.count++] = (klog_produce_part_t){
			    .topic = topic, .partition = o->first + i,
			    .set = bp->pool };
		bp->end_id = id;
	}
	while (bp->left > 0 && req.count < o->parts) {
		uint32_t n = bp->left < o->batch ? (uint32_t)bp->left :
		    o->batch;

		bp->pp[req.count++] = (klog_produce_part_t){ .topic = topic,
		    .partition = o->first +
		    (int32_t)(bp->nparts % (uint64_t)o->partitions),
		    .set = bp->pool + bp->nparts % NSETS * bp->set_bytes,
		    .set_len = (uint32_t)(n * bp->entry) };
		bp->nparts++;
		bp->left -= n;
	}
	if (klog_proto_encode_produce(&bp->req, id, &req) < 0 ||
	    bp->req.failed)
		errx(KLOG_EXIT_FAIL, "cannot encode a request");
	if (req.acks != KLOG_ACKS_NONE)
		bp->inflight++;
	bp->requests++;
}

/* Whether send_more() writes another request right after this one. */
static int
more_follows(const bench_t *bp)
{
	int64_t after = bp->inflight;   /* this one is counted already */

	return bp->end_id == 0 && after < bp->o->window;
}

/* Write requests while the window allows; 1 if the socket is full. */
static int
send_more(bench_t *bp)
{
	klog_err_t e = { 0 };
	struct iovec iov;
	size_t n;
	int rc;

	for (;;) {
		if (bp->wpos == bp->req.len) {
			if (bp->end_id != 0 || bp->inflight >= bp->o->window)
				return 0;
			next_request(bp);
		}
		iov = (struct iovec){ bp->req.data + bp->wpos,
		    bp->req.len - bp->wpos };
		if ((rc = klog_client_writev(bp->c, &iov, 1,
		    bp->o->more && more_follows(bp), &n, &e)) < 0)
			errx(KLOG_EXIT_UNAVAILABLE, "%s", klog_err_text(&e, rc));
		bp->wpos += n;
		if (bp->wpos < bp->req.len)
			return 1;
	}
}

static void
on_response(bench_t *bp, const klog_resp_header_t *h, const uint8_t *body,
    size_t len)
{
	uint32_t max = bp->o->parts > (uint32_t)bp->o->partitions ?
	    bp->o->parts : (uint32_t)bp->o->partitions, n;

	if (h->error != KLOG_WIRE_NONE)
		errx(KLOG_EXIT_FAIL, "%s: %s", klog_client_name(bp->c),
		    klog_wire_error_name(h->error));
	if (klog_proto_decode_produce_resp(body, len, bp->res, max, &n) < 0)
		errx(KLOG_EXIT_FAIL, "%s: malformed produce answer",
		    klog_client_name(bp->c));
	bench_check_produce(bp->res, n);
	bp->inflight--;
	if (h->correlation != bp->end_id)
		return;
	if (n != (uint32_t)bp->o->partitions)
		errx(KLOG_EXIT_FAIL, "%s: %u parts in the last answer",
		    klog_client_name(bp->c), n);
	for (uint32_t i = 0; i < n; i++)
		bp->ends[i] = bp->res[i].offset;
	bp->done = 1;
}

static void
read_responses(bench_t *bp)
{
	klog_resp_header_t h;
	klog_err_t e = { 0 };
	const uint8_t *body;
	size_t len;
	int rc;

	if ((rc = klog_client_read(bp->c, &e)) < 0)
		errx(klog_exit_for(rc), "%s", klog_err_text(&e, rc));
	while ((rc = klog_client_response(bp->c, &h, &body, &len, &e)) > 0)
		on_response(bp, &h, body, len);
	if (rc < 0)
		errx(KLOG_EXIT_FAIL, "%s", klog_err_text(&e, rc));
}

static void
run(bench_t *bp)
{
	while (!bp->done) {
		int full = send_more(bp);
		short ev = (short)((full ? POLLOUT : 0) |
		    (bp->inflight > 0 ? POLLIN : 0));

		bench_wait(bp->c, ev, -1);
		if (bp->inflight > 0)
			read_responses(bp);
	}
}

int
main(int argc, char **argv)
{
	opts_t o;
	bench_t b = { .o = &o };
	int64_t *starts, grown = 0, bytes;
	double t0, t1, w0, w1;
	uint32_t max;

	parse_opts(argc, argv, &o);
	max = o.parts > (uint32_t)o.partitions ? o.parts :
	    (uint32_t)o.partitions;
	b.pp = calloc(max, sizeof(*b.pp));
	b.res = calloc(max, sizeof(*b.res));
	b.ends = calloc((size_t)o.partitions, sizeof(*b.ends));
	starts = calloc((size_t)o.partitions, sizeof(*starts));
	if (b.pp == NULL || b.res == NULL || b.ends == NULL || starts == NULL)
		errx(KLOG_EXIT_FAIL, "out of memory");
	make_pool(&b);
	klog_buf_init(&b.req);
	b.left = o.messages;
	b.c = bench_connect(o.broker);
	if (o.nagle && setsockopt(klog_client_fd(b.c), IPPROTO_TCP,
	    TCP_NODELAY, &(int){ 0 }, sizeof(int)) < 0)
		err(KLOG_EXIT_FAIL, "TCP_NODELAY");
	bench_produce_ends(b.c, o.topic, o.first, o.partitions, starts);
	bench_start_at(o.start_at);
	w0 = bench_wall();
	t0 = bench_now();
	run(&b);
	t1 = bench_now();
	w1 = bench_wall();
	for (int32_t i = 0; i < o.partitions; i++)
		grown += b.ends[i] - starts[i];
	bytes = o.messages * (int64_t)b.entry;
	if (grown < bytes)
		errx(KLOG_EXIT_FAIL, "the partitions grew by %" PRId64
		    " bytes, %" PRId64 " were sent", grown, bytes);
	if (t1 <= t0)
		t1 = t0 + 1e-9;
	printf("msgs %" PRId64 " bytes %" PRId64 " requests %" PRIu64
	    " secs %.3f msgs_s %.0f mb_s %.1f start %.3f end %.3f\n",
	    o.messages, bytes, b.requests - 1, t1 - t0,
	    (double)o.messages / (t1 - t0), (double)bytes / 1e6 / (t1 - t0),
	    w0, w1);
	klog_client_close(b.c);
	klog_buf_free(&b.req);
	free(b.pool);
	free(b.pp);
	free(b.res);
	free(b.ends);
	free(starts);
	if (fflush(stdout) != 0)
		err(KLOG_EXIT_IOERR, "stdout");
	return KLOG_EXIT_OK;
}
