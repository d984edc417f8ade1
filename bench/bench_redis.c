/*
 * bench_redis: Redis Streams, the peer that bench/peers.sh sets beside
 * klog's tools.  Speaks RESP itself over one TCP connection to 127.0.0.1
 * (TCP_NODELAY, as hiredis sets it), on the stream "bench":
 *
 *   bench_redis xadd1|xadd50|xread [-c count] [-n entries] [-p port]
 *       [-w window]
 *
 *   xadd1   n XADD bench * v VALUE, each command a send(2) of its own, up
 *           to a window of commands in flight (default 1024, at least
 *           50); a second thread reads the replies, each an entry's
 *           id.  One command per write, as klog-produce --batch 1 makes
 *           one request per record.
 *   xadd50  the same with 50 commands to a send(2) (klog-produce
 *           --batch 50's analogue); the window still counts commands.
 *   xread   XREAD COUNT c STREAMS bench LAST from 0-0 until n entries
 *           were read (c: default 1000), one command at a time, as the
 *           next needs the last id of the one before; every value's
 *           length is checked.
 *
 * Values are 200 bytes: the entry's number in 10 digits, then 'x's, like
 * peers.sh's input lines.  Timing runs from the first send to the last
 * reply.  Prints one line:
 *   msgs N bytes B writes W secs S msgs_s X mb_s Y
 * bytes are the values' (MB: 10^6 of them), writes the commands' sends.
 * Exit 1 on an error reply or a lost connection, 64 on misuse.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"

#define PROG "bench_redis"
#define KEY "bench"      /* the stream */
#define SIZE 200         /* a value's bytes */
#define IDMAX 48         /* an entry id's bytes, with a NUL */
#define RBUF (1 << 20)   /* the reader's buffer: more than one element */

typedef struct opts {
	int64_t n;
	int64_t window;        /* commands in flight */
	int64_t count;         /* XREAD COUNT */
	int port;
	int batch;             /* commands per send; 0: xread */
} opts_t;

typedef struct bench {
	const opts_t *o;
	int fd;
	char *buf;             /* replies: RBUF bytes */
	size_t pos, end;
	int64_t done;          /* replies read */
	int64_t told;          /* of them, added to acked */
	int window;            /* whether a writer waits on acked */
	atomic_int_fast64_t acked;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int64_t writes;
} bench_t;

static void
usage(void)
{
	errx(KLOG_EXIT_USAGE, "usage: " PROG " xadd1|xadd50|xread "
	    "[-c count] [-n entries] [-p port] [-w window]");
}

static void
parse_opts(int argc, char **argv, opts_t *o)
{
	int ch;

	*o = (opts_t){ .n = 1000000, .window = 1024,
	    .count = 1000, .port = 6379 };
	while ((ch = getopt(argc, argv, "c:n:p:w:")) != -1) {
		if (ch == 'c')
			o->count = bench_opt_i64(PROG, "-c", optarg, 1, 1000000);
		else if (ch == 'n')
			o->n = bench_opt_i64(PROG, "-n", optarg, 1,
			    INT64_MAX / 2);
		else if (ch == 'p')
			o->port = (int)bench_opt_i64(PROG, "-p", optarg, 1,
			    65535);
		else if (ch == 'w')
			o->window = bench_opt_i64(PROG, "-w", optarg, 50,
			    1000000);
		else
			usage();
	}
	if (optind + 1 != argc)
		usage();
	if (strcmp(argv[optind], "xadd1") == 0)
		o->batch = 1;
	else if (strcmp(argv[optind], "xadd50") == 0)
		o->batch = 50;
	else if (strcmp(argv[optind], "xread") != 0)
		usage();
}

/* One connection to 127.0.0.1:port, Nagle off. */
static int
connect_to(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		err(KLOG_EXIT_UNAVAILABLE, "127.0.0.1:%d", port);
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 },
	    sizeof(int)) < 0)
		err(KLOG_EXIT_FAIL, "TCP_NODELAY");
	return fd;
}

static void
send_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, p, len, 0);

		if (n < 0)
			err(KLOG_EXIT_FAIL, "send");
		p += n;
		len -= (size_t)n;
	}
}

/* Replies read so far, told to a writer waiting for room in the window. */
static void
rd_publish(bench_t *b)
{
	if (!b->window || b->done == b->told)
		return;
	atomic_fetch_add(&b->acked, b->done - b->told);
	b->told = b->done;
	pthread_mutex_lock(&b->mu);
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

/* More bytes after the unread ones; whatever was returned is invalid. */
static void
rd_fill(bench_t *b)
{
	ssize_t n;

	rd_publish(b);
	memmove(b->buf, b->buf + b->pos, b->end - b->pos);
	b->end -= b->pos;
	b->pos = 0;
	if (b->end == RBUF)
		errx(KLOG_EXIT_FAIL, "a reply's element over %d bytes", RBUF);
	if ((n = read(b->fd, b->buf + b->end, RBUF - b->end)) < 0)
		err(KLOG_EXIT_FAIL, "read");
	if (n == 0)
		errx(KLOG_EXIT_FAIL, "the server closed the connection");
	b->end += (size_t)n;
}

/* A line "<type><integer>\r\n": the integer.  An error reply ends it
 * all. */
static int64_t
rd_head(bench_t *b, char type)
{
	const char *l, *nl;
	char *end;
	long long v;
	int len;

	while ((nl = memchr(b->buf + b->pos, '\n', b->end - b->pos)) == NULL)
		rd_fill(b);
	l = b->buf + b->pos;
	len = (int)(nl - l);
	b->pos += (size_t)len + 1;
	if (len > 1 && l[0] == '-')
		errx(KLOG_EXIT_FAIL, "redis: %.*s", len - 2, l + 1);
	if (len >= 3 && l[0] == type && nl[-1] == '\r') {
		v = strtoll(l + 1, &end, 10);
		if (end == nl - 1)
			return v;
	}
	errx(KLOG_EXIT_FAIL, "expected '%c', got \"%.*s\"", type, len, l);
}

/* A bulk string's bytes (not NUL-terminated); valid until the next call. */
static const char *
rd_bulk(bench_t *b, size_t *len)
{
	int64_t n = rd_head(b, '$');
	const char *p;

	if (n < 0 || n > RBUF - 2)
		errx(KLOG_EXIT_FAIL, "bulk string of %" PRId64 " bytes", n);
	while (b->end - b->pos < (size_t)n + 2)
		rd_fill(b);
	p = b->buf + b->pos;
	if (p[n] != '\r' || p[n + 1] != '\n')
		errx(KLOG_EXIT_FAIL, "a bulk string without CRLF");
	b->pos += (size_t)n + 2;
	*len = (size_t)n;
	return p;
}

/* An array of two: a stream and its entries, an id and its fields, or
 * one field and its value. */
static void
rd_pair(bench_t *b)
{
	int64_t n = rd_head(b, '*');

	if (n != 2)
		errx(KLOG_EXIT_FAIL, "XREAD: an array of %" PRId64 ", not 2", n);
}

/* A command of argc bulk strings, into out (which must be large enough). */
static size_t
resp_cmd(char *out, int argc, const char **argv, const size_t *lens)
{
	size_t pos = (size_t)sprintf(out, "*%d\r\n", argc);

	for (int i = 0; i < argc; i++) {
		pos += (size_t)sprintf(out + pos, "$%zu\r\n", lens[i]);
		memcpy(out + pos, argv[i], lens[i]);
		pos += lens[i];
		memcpy(out + pos, "\r\n", 2);
		pos += 2;
	}
	return pos;
}

/* A batch of XADDs into buf: one's length, and where its value is. */
static size_t
xadd_template(const opts_t *o, char *buf, size_t *val)
{
	char value[SIZE];
	const char *argv[] = { "XADD", KEY, "*", "v", value };
	size_t lens[] = { 4, strlen(KEY), 1, 1, SIZE }, len;

	memset(value, 'x', SIZE);
	len = resp_cmd(buf, 5, argv, lens);
	*val = len - 2 - SIZE;
	for (int i = 1; i < o->batch; i++)
		memcpy(buf + (size_t)i * len, buf, len);
	return len;
}

static void *
xadd_replies(void *arg)
{
	bench_t *b = arg;
	size_t len;

	for (int64_t i = 0; i < b->o->n; i++) {
		rd_bulk(b, &len);
		b->done++;
	}
	rd_publish(b);
	return NULL;
}

/* Wait until at least need replies were read. */
static void
window_wait(bench_t *b, int64_t need)
{
	if (atomic_load(&b->acked) >= need)
		return;
	pthread_mutex_lock(&b->mu);
	while (atomic_load(&b->acked) < need)
		pthread_cond_wait(&b->cv, &b->mu);
	pthread_mutex_unlock(&b->mu);
}

static void
xadd_run(bench_t *b)
{
	const opts_t *o = b->o;
	char *buf = malloc((size_t)o->batch * (64 + SIZE));
	size_t val, len;
	pthread_t t;

	if (buf == NULL)
		errx(KLOG_EXIT_FAIL, "out of memory");
	len = xadd_template(o, buf, &val);
	if (pthread_create(&t, NULL, xadd_replies, b) != 0)
		errx(KLOG_EXIT_FAIL, "pthread_create");
	for (int64_t sent = 0; sent < o->n;) {
		int k = o->n - sent < o->batch ? (int)(o->n - sent) : o->batch;
		char digits[16];

		window_wait(b, sent + k - o->window);
		for (int i = 0; i < k; i++) {
			snprintf(digits, sizeof(digits), "%010" PRId64,
			    (sent + i) % 10000000000);
			memcpy(buf + (size_t)i * len + val, digits, 10);
		}
		send_all(b->fd, buf, (size_t)k * len);
		b->writes++;
		sent += k;
	}
	pthread_join(t, NULL);
	free(buf);
}

/* One XREAD of up to max entries: how many it returned, the last one's
 * id into last (IDMAX bytes). */
static int64_t
xread_once(bench_t *b, int64_t max, char *last)
{
	char count[24], cmd[128];
	const char *argv[] = { "XREAD", "COUNT", count, "STREAMS", KEY, last };
	size_t lens[6] = { 5, 5, 0, 7, strlen(KEY), strlen(last) }, len;
	int64_t n;

	lens[2] = (size_t)snprintf(count, sizeof(count), "%" PRId64, max);
	send_all(b->fd, cmd, resp_cmd(cmd, 6, argv, lens));
	b->writes++;
	if (rd_head(b, '*') < 1)     /* *-1: nothing after last */
		return 0;
	rd_pair(b);
	rd_bulk(b, &len);
	n = rd_head(b, '*');
	for (int64_t i = 0; i < n; i++) {
		const char *p;

		rd_pair(b);
		p = rd_bulk(b, &len);
		if (len >= IDMAX)
			errx(KLOG_EXIT_FAIL, "XREAD: an id of %zu bytes", len);
		memcpy(last, p, len);
		last[len] = '\0';
		rd_pair(b);
		rd_bulk(b, &len);
		rd_bulk(b, &len);
		if (len != SIZE)
			errx(KLOG_EXIT_FAIL, "XREAD: entry %s: %zu bytes, not "
			    "%d", last, len, SIZE);
	}
	return n;
}

static void
xread_run(bench_t *b)
{
	const opts_t *o = b->o;
	char last[IDMAX] = "0-0";

	for (int64_t got = 0, n; got < o->n; got += n)
		if ((n = xread_once(b, o->n - got < o->count ? o->n - got :
		    o->count, last)) == 0)
			errx(KLOG_EXIT_FAIL, "XREAD: the stream ended after "
			    "%" PRId64 " of %" PRId64 " entries", got, o->n);
}

int
main(int argc, char **argv)
{
	opts_t o;
	bench_t b = { .o = &o, .mu = PTHREAD_MUTEX_INITIALIZER,
	    .cv = PTHREAD_COND_INITIALIZER };
	double t0, t1;

	parse_opts(argc, argv, &o);
	b.fd = connect_to(o.port);
	b.window = o.batch > 0;
	if ((b.buf = malloc(RBUF)) == NULL)
		errx(KLOG_EXIT_FAIL, "out of memory");
	t0 = bench_now();
	if (o.batch > 0)
		xadd_run(&b);
	else
		xread_run(&b);
	t1 = bench_now();
	printf("msgs %" PRId64 " bytes %" PRId64 " writes %" PRId64
	    " secs %.3f msgs_s %.0f mb_s %.1f\n", o.n, o.n * SIZE,
	    b.writes, t1 - t0, (double)o.n / (t1 - t0),
	    (double)o.n * SIZE / 1e6 / (t1 - t0));
	close(b.fd);
	free(b.buf);
	if (fflush(stdout) != 0)
		err(KLOG_EXIT_IOERR, "stdout");
	return KLOG_EXIT_OK;
}
