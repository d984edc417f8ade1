/*
 * bench_latency: end-to-end latency, from the moment a message is due to be
 * produced to the moment a consumer has it, at a fixed rate.
 *
 *   bench_latency [-a acks] [-b host:port] [-d seconds] [-L linger]
 *       [-m batch] [-p partition] [-r rate] [-s size] [-t topic]
 *       [-W warmup]
 *
 * The main thread produces on one connection: message i is due at
 * t0 + i/rate, and whenever the thread wakes it sends every message that is
 * due in one request (up to -m of them), so a slow moment makes a larger
 * request rather than a later schedule.  With -L, a request waits until
 * the linger time has passed since the last one, or until -m messages are
 * due: at high rates, requests of a message or two each would cost the
 * producer more than the broker.  Each payload starts with the time
 * its message was due (CLOCK_MONOTONIC, ns) and its number.  A second
 * thread consumes on another connection, with the library's consumer as
 * klog-consume does (long polls, the next fetch asked for before an answer
 * is handed out), and takes, for every message, now minus the time it was
 * due: measuring from the
 * schedule, not from the send, keeps a stalled producer from hiding its
 * stall (no coordinated omission).  Messages of the first -W seconds are
 * left out of the figures.
 *
 * Prints one line:
 *   rate R msgs N secs S p50_ms A p99_ms B p999_ms C max_ms D late_ms L
 * late_ms is how far behind its schedule the producer ended: above a few
 * ms, it could not keep the rate.  Exit 1 if the broker refuses anything or
 * nothing arrives for 30 seconds, 65 on a bad message, 69 if the broker
 * cannot be reached, 64 on misuse.
 */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "bench.h"
#include "klog/client/consumer.h"
#include "klog/client/discovery.h"

#define PROG "bench_latency"
#define STALL_NS (30 * 1000000000LL)
#define HEADER 16      /* due time and number at the start of a payload */

typedef struct opts {
	const char *broker;
	const char *topic;
	int acks;
	int32_t partition;
	int64_t rate;
	double seconds, warmup;
	int64_t batch;
	int64_t linger_ns;
	size_t size;
} opts_t;

typedef struct shared {
	const opts_t *o;
	int64_t t0;            /* when message 0 is due */
	int64_t total;         /* messages to send */
	int64_t skip;          /* warmup messages */
	int64_t start;         /* the partition's end before the run */
	int64_t *lat;          /* ns, total - skip of them */
} shared_t;

typedef struct producer {
	const shared_t *s;
	klog_client_t *c;
	uint8_t *set;
	uint8_t *payload;
	klog_buf_t req;
	int64_t inflight;
} producer_t;

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: " PROG " [-a acks] [-b host:port] [-d seconds] [-L linger]\n"
	    "                     [-m batch] [-p partition] [-r rate] "
	    "[-s size] [-t topic]\n"
	    "                     [-W warmup]\n"
	    "  -a, --acks A          0, 1 or all (default 1)\n"
	    "  -b, --broker H:P      the broker (default 127.0.0.1:9092)\n"
	    "  -d, --seconds S       measured seconds (default 10)\n"
	    "  -L, --linger T        least time between requests unless "
	    "-m are due\n"
	    "                        (default 0; a bare number is "
	    "seconds)\n"
	    "  -m, --batch M         most messages in one request "
	    "(default 1000)\n"
	    "  -p, --partition N     the partition (default 0)\n"
	    "  -r, --rate R          messages per second (default 10000)\n"
	    "  -s, --size BYTES      payload size, at least 16 (default 200)\n"
	    "  -t, --topic T         the topic (default latency)\n"
	    "  -W, --warmup S        seconds left out at the start "
	    "(default 1)\n");
}

/* Seconds, or a duration such as 500ms. */
static double
opt_seconds(const char *opt, const char *s)
{
	const char *why;
	int64_t ms;

	if (klog_parse_duration_ms(s, 1000, 0, 86400000, &ms, &why) < 0)
		errx(KLOG_EXIT_USAGE, "%s: %s: %s (try '" PROG " -h')", opt, s,
		    why);
	return (double)ms / 1000;
}

static void
parse_opts(int argc, char **argv, opts_t *o)
{
	static const struct option longs[] = {
		{ "acks", required_argument, NULL, 'a' },
		{ "batch", required_argument, NULL, 'm' },
		{ "broker", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ "linger", required_argument, NULL, 'L' },
		{ "partition", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 's' },
		{ "topic", required_argument, NULL, 't' },
		{ "warmup", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*o = (opts_t){ .broker = "127.0.0.1:9092", .topic = "latency",
	    .acks = KLOG_ACKS_LEADER, .rate = 10000, .seconds = 10,
	    .warmup = 1, .batch = 1000, .size = 200 };
	while ((ch = getopt_long(argc, argv, "a:b:d:hL:m:p:r:s:t:W:", longs,
	    NULL)) != -1) {
		switch (ch) {
		case 'a':
			o->acks = bench_opt_acks(PROG, optarg);
			break;
		case 'b':
			o->broker = optarg;
			break;
		case 'd':
			o->seconds = opt_seconds("-d", optarg);
			break;
		case 'h':
			usage(stdout);
			exit(KLOG_EXIT_OK);
		case 'L':
			o->linger_ns = (int64_t)(opt_seconds("-L", optarg) * 1e9);
			break;
		case 'm':
			o->batch = bench_opt_i64(PROG, "-m", optarg, 1, 100000);
			break;
		case 'p':
			o->partition = (int32_t)bench_opt_i64(PROG, "-p",
			    optarg, 0, INT32_MAX);
			break;
		case 'r':
			o->rate = bench_opt_i64(PROG, "-r", optarg, 1,
			    100000000);
			break;
		case 's':
			o->size = (size_t)bench_opt_size(PROG, "-s", optarg,
			    HEADER, 100000);
			break;
		case 't':
			o->topic = optarg;
			break;
		case 'W':
			o->warmup = opt_seconds("-W", optarg);
			break;
		default:
			fprintf(stderr, "Try '" PROG " -h'\n");
			exit(KLOG_EXIT_USAGE);
		}
	}
	if (optind != argc)
		errx(KLOG_EXIT_USAGE, "%s: unexpected argument (try '"
		    PROG " -h')", argv[optind]);
	if (o->seconds <= 0)
		errx(KLOG_EXIT_USAGE, "-d: must be positive (try '" PROG
		    " -h')");
}

static void
put_be64(uint8_t *p, int64_t v)
{
	klog_put_be32(p, (uint32_t)((uint64_t)v >> 32));
	klog_put_be32(p + 4, (uint32_t)v);
}

static int64_t
be64(const uint8_t *p)
{
	return (int64_t)((uint64_t)klog_be32(p) << 32 | klog_be32(p + 4));
}

static int64_t
due_at(const shared_t *s, int64_t i)
{
	return s->t0 + (int64_t)((double)i * 1e9 / (double)s->o->rate);
}

/* ---- the consumer thread ---- */

/* Record message m. */
static void
take(shared_t *s, const klog_consumer_msg_t *m, int64_t *got)
{
	int64_t i;

	if (m->payload_len < HEADER)
		errx(KLOG_EXIT_DATAERR, "offset %" PRId64 ": short payload",
		    m->offset);
	i = be64(m->payload + 8);
	if (i < 0 || i >= s->total || i != *got)
		errx(KLOG_EXIT_DATAERR, "offset %" PRId64 ": message %" PRId64
		    " where %" PRId64 " was due", m->offset, i, *got);
	if (i >= s->skip)
		s->lat[i - s->skip] = bench_now_ns() - be64(m->payload);
	(*got)++;
}

/*
 * The library's consumer, as klog-consume reads: long polls of 100 ms, the
 * next fetch sent before an answer is handed out, every CRC checked.
 */
static void *
consume(void *arg)
{
	shared_t *s = arg;
	int32_t part = s->o->partition;
	klog_consumer_pos_t at = { .partition = part, .offset = s->start };
	klog_consumer_config_t cfg;
	klog_discovery_t *d = NULL;
	klog_consumer_t *c = NULL;
	klog_consumer_msg_t m;
	klog_err_t err = { 0 };
	int64_t got = 0, last = bench_now_ns();
	int rc;

	klog_consumer_config_default(&cfg);
	cfg.topic = s->o->topic;
	cfg.partitions = &part;
	cfg.npartitions = 1;
	cfg.starts = &at;
	cfg.nstarts = 1;
	cfg.max_wait_ms = 100;
	if (klog_discovery_open_static(s->o->broker, 5000, &d, &err) < 0 ||
	    klog_consumer_open(d, &cfg, &c, &err) < 0)
		errx(KLOG_EXIT_UNAVAILABLE, "%s", err.msg);
	while (got < s->total) {
		if ((rc = klog_consumer_next(c, &m, &err)) < 0)
			errx(rc == -KLOG_ECORRUPT ? KLOG_EXIT_DATAERR :
			    KLOG_EXIT_FAIL, "%s", err.msg);
		if (rc == KLOG_CONSUMER_MSG) {
			take(s, &m, &got);
			last = bench_now_ns();
		} else if (bench_now_ns() - last > STALL_NS) {
			errx(KLOG_EXIT_FAIL, "nothing new for 30 s after %"
			    PRId64 " messages", got);
		}
	}
	klog_consumer_close(c);
	klog_discovery_close(d);
	return NULL;
}

/* ---- the producer (main thread) ---- */

static void
read_acks(producer_t *p)
{
	klog_produce_result_t res;
	klog_resp_header_t h;
	klog_err_t e = { 0 };
	const uint8_t *body;
	uint32_t n;
	size_t len;
	int rc;

	if ((rc = klog_client_read(p->c, &e)) < 0)
		errx(klog_exit_for(rc), "%s", klog_err_text(&e, rc));
	while ((rc = klog_client_response(p->c, &h, &body, &len, &e)) > 0) {
		if (h.error != KLOG_WIRE_NONE ||
		    klog_proto_decode_produce_resp(body, len, &res, 1, &n) < 0)
			errx(KLOG_EXIT_FAIL, "%s: %s", klog_client_name(p->c),
			    h.error != KLOG_WIRE_NONE ?
			    klog_wire_error_name(h.error) :
			    "malformed produce answer");
		bench_check_produce(&res, n);
		p->inflight--;
	}
	if (rc < 0)
		errx(KLOG_EXIT_FAIL, "%s", klog_err_text(&e, rc));
}

/* Send messages first .. first+n-1 in one request, written out whole. */
static void
send_due(producer_t *p, int64_t first, int64_t n)
{
	const opts_t *o = p->s->o;
	klog_produce_part_t part = { .topic = { o->topic,
	    (uint16_t)strlen(o->topic) }, .partition = o->partition,
	    .set = p->set };
	klog_produce_req_t req = { .acks = (int16_t)o->acks,
	    .timeout_ms = BENCH_TIMEOUT_MS, .count = 1, .parts = &part };
	klog_err_t e = { 0 };
	struct iovec iov;
	size_t pos = 0, w;
	int rc;

	for (int64_t i = first; i < first + n; i++) {
		put_be64(p->payload, due_at(p->s, i));
		put_be64(p->payload + 8, i);
		part.set_len += (uint32_t)klog_entry_encode(p->set +
		    part.set_len, p->payload, o->size);
	}
	klog_buf_reset(&p->req);
	if (klog_proto_encode_produce(&p->req, klog_client_next_id(p->c),
	    &req) < 0 || p->req.failed)
		errx(KLOG_EXIT_FAIL, "cannot encode a request");
	while (pos < p->req.len) {
		iov = (struct iovec){ p->req.data + pos, p->req.len - pos };
		if ((rc = klog_client_writev(p->c, &iov, 1, 0, &w, &e)) < 0)
			errx(KLOG_EXIT_UNAVAILABLE, "%s", klog_err_text(&e, rc));
		if ((pos += w) < p->req.len) {
			bench_wait(p->c, POLLOUT | POLLIN, 1000);
			read_acks(p);
		}
	}
	if (o->acks != KLOG_ACKS_NONE)
		p->inflight++;
}

/* Produce on schedule; returns how late the last request went out (ns). */
static int64_t
produce(producer_t *p)
{
	const shared_t *s = p->s;
	int64_t sent = 0, due, now = 0, late, next_send = 0, wake;
	struct timespec ts;

	while (sent < s->total) {
		now = bench_now_ns();
		due = now < s->t0 ? 0 : (int64_t)((double)(now - s->t0) *
		    (double)s->o->rate / 1e9) + 1;
		if (due > s->total)
			due = s->total;
		if (due > sent && (now >= next_send ||
		    due - sent >= s->o->batch)) {
			int64_t n = due - sent < s->o->batch ? due - sent :
			    s->o->batch;

			send_due(p, sent, n);
			sent += n;
			next_send = now + s->o->linger_ns;
			read_acks(p);
			while (p->inflight > 1024) {
				bench_wait(p->c, POLLIN, 1000);
				read_acks(p);
			}
			continue;
		}
		/* The next message due, or the linger's end, or (lingering)
		 * the moment a full request is due, whichever comes first
		 * that can send. */
		wake = due_at(s, sent);
		if (wake < next_send) {
			int64_t full = sent + s->o->batch - 1;

			wake = next_send;
			if (full < s->total && due_at(s, full) < wake)
				wake = due_at(s, full);
		}
		ts.tv_sec = wake / 1000000000;
		ts.tv_nsec = wake % 1000000000;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	late = now - due_at(s, s->total - 1);
	while (p->inflight > 0) {
		bench_wait(p->c, POLLIN, 1000);
		read_acks(p);
	}
	return late > 0 ? late : 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The p-quantile of sorted v[0..n), in ms. */
static double
quantile_ms(const int64_t *v, int64_t n, double p)
{
	int64_t i = (int64_t)(p * (double)n + 0.999999) - 1;

	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return (double)v[i] / 1e6;
}

int
main(int argc, char **argv)
{
	opts_t o;
	shared_t s = { .o = &o };
	producer_t p = { .s = &s };
	pthread_t consumer;
	int64_t late, n;

	parse_opts(argc, argv, &o);
	s.skip = (int64_t)(o.warmup * (double)o.rate);
	s.total = s.skip + (int64_t)(o.seconds * (double)o.rate);
	if (s.total <= s.skip)
		errx(KLOG_EXIT_USAGE, "-d %g at -r %" PRId64 ": no message",
		    o.seconds, o.rate);
	n = s.total - s.skip;
	p.set = malloc((size_t)o.batch * klog_entry_size(o.size));
	p.payload = malloc(o.size);
	s.lat = malloc((size_t)n * sizeof(*s.lat));
	if (p.set == NULL || p.payload == NULL || s.lat == NULL)
		errx(KLOG_EXIT_FAIL, "out of memory");
	bench_fill(p.payload, o.size, 1);
	klog_buf_init(&p.req);
	p.c = bench_connect(o.broker);
	bench_produce_ends(p.c, o.topic, o.partition, 1, &s.start);
	/* Time for the consumer to connect and park its first fetch. */
	s.t0 = bench_now_ns() + 200000000;
	if ((errno = pthread_create(&consumer, NULL, consume, &s)) != 0)
		err(KLOG_EXIT_FAIL, "pthread_create");
	late = produce(&p);
	pthread_join(consumer, NULL);
	qsort(s.lat, (size_t)n, sizeof(*s.lat), cmp_i64);
	printf("rate %" PRId64 " msgs %" PRId64 " secs %.3f p50_ms %.3f "
	    "p99_ms %.3f p999_ms %.3f max_ms %.3f late_ms %.3f\n", o.rate, n,
	    o.seconds, quantile_ms(s.lat, n, 0.5), quantile_ms(s.lat, n, 0.99),
	    quantile_ms(s.lat, n, 0.999), (double)s.lat[n - 1] / 1e6,
	    (double)late / 1e6);
	klog_client_close(p.c);
	klog_buf_free(&p.req);
	free(p.set);
	free(p.payload);
	free(s.lat);
	if (fflush(stdout) != 0)
		err(KLOG_EXIT_IOERR, "stdout");
	return KLOG_EXIT_OK;
}
