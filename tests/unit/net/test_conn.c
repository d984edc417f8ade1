/*
 * Unit tests for lib/net/conn.c with front ends of the tests' own, so that
 * what is checked is the connection layer alone: framing across reads,
 * frames larger than a read, pausing a client that does not read its
 * answers and resuming it, refusing, the connection limit, and two
 * listeners speaking two protocols on one set of connections.
 *
 * The echo protocol: a frame is a 4-byte big-endian length and that many
 * bytes; the answer is the same frame ("shout" answers it upper-cased).
 * A length of 0xffffffff is refused with the one-byte answer "!".
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/base/error.h"
#include "klog/net/conn.h"
#include "klog/net/socket.h"

struct proto {
	int shout;
	size_t requests;           /* answered, on the loop's thread */
};

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static size_t
echo_process(void *arg, klog_conn_t *c, const uint8_t *data, size_t len)
{
	struct proto *pr = arg;
	klog_buf_t *out = klog_outq_buf(klog_conn_out(c));
	size_t pos = 0, total;

	while (pos < len && !klog_conn_stalled(c)) {
		if (len - pos < 4)
			break;
		if (be32(data + pos) == 0xffffffffu) {
			klog_buf_put(out, "!", 1);
			klog_conn_refuse(c, "refused by the test");
			return len;
		}
		total = 4 + (size_t)be32(data + pos);
		if (len - pos < total)
			break;
		klog_buf_put(out, data + pos, 4);
		for (size_t i = 4; i < total; i++) {
			uint8_t ch = data[pos + i];

			if (pr->shout && ch >= 'a' && ch <= 'z')
				ch = (uint8_t)(ch - 'a' + 'A');
			klog_buf_put(out, &ch, 1);
		}
		__atomic_add_fetch(&pr->requests, 1, __ATOMIC_RELAXED);
		pos += total;
		klog_conn_answered(c);
	}
	return pos;
}

static size_t
echo_frame_size(void *arg, const uint8_t *data, size_t len)
{
	(void)arg;
	(void)len;
	return 4 + (size_t)be32(data);
}

static const klog_conn_front_t echo_front = { echo_process,
    echo_frame_size, 0 };

struct fixture {
	klog_loop_t *loop;
	klog_conns_t *cs;
	struct proto echo, shout;
	int port[2];
	pthread_t thread;
};

static void *
run_loop(void *arg)
{
	struct fixture *f = arg;

	klog_loop_run(f->loop);
	return NULL;
}

static int
add_listener(struct fixture *f, struct proto *pr)
{
	klog_socket_addr_t addr;
	char err[KLOG_SOCKET_ERR_LEN];
	int fd = klog_socket_bind("127.0.0.1:0", "9092", &addr, err,
	    sizeof(err));

	assert_true(fd >= 0);
	assert_int_equal(klog_socket_listen(fd, "127.0.0.1:0", err, sizeof(err)),
	    0);
	assert_int_equal(klog_conns_listen(f->cs, fd, &echo_front, pr, NULL, 0), 0);
	return addr.port;
}

static struct fixture *
start_cfg(const klog_conns_config_t *cfg)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->shout.shout = 1;
	assert_int_equal(klog_loop_create(&f->loop), 0);
	assert_int_equal(klog_conns_new(f->loop, NULL, cfg, &f->cs), 0);
	f->port[0] = add_listener(f, &f->echo);
	f->port[1] = add_listener(f, &f->shout);
	assert_int_equal(pthread_create(&f->thread, NULL, run_loop, f), 0);
	return f;
}

static struct fixture *
start(int max_connections, size_t out_limit)
{
	klog_conns_config_t cfg = { .max_connections = max_connections,
	    .out_limit = out_limit };

	return start_cfg(&cfg);
}

static void
stop(struct fixture *f)
{
	klog_loop_stop(f->loop);
	pthread_join(f->thread, NULL);
	klog_conns_free(f->cs, KLOG_LEVEL_DEBUG, "test over");
	klog_loop_free(f->loop);
	free(f);
}

static int
dial(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port) };
	struct timeval tv = { 5, 0 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void
send_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n > 0) {
		ssize_t w = write(fd, b, n);

		assert_true(w > 0);
		b += w;
		n -= (size_t)w;
	}
}

static void
recv_all(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n > 0) {
		ssize_t r = read(fd, b, n);

		assert_true(r > 0);
		b += r;
		n -= (size_t)r;
	}
}

/* A frame of n bytes of text: "abc...z" repeated. */
static uint8_t *
frame(size_t n)
{
	uint8_t *p = malloc(4 + n);

	assert_non_null(p);
	p[0] = (uint8_t)(n >> 24);
	p[1] = (uint8_t)(n >> 16);
	p[2] = (uint8_t)(n >> 8);
	p[3] = (uint8_t)n;
	for (size_t i = 0; i < n; i++)
		p[4 + i] = (uint8_t)('a' + i % 26);
	return p;
}

static void
expect_echo(int fd, const uint8_t *req, size_t n, int shout)
{
	uint8_t *got = malloc(4 + n);

	assert_non_null(got);
	recv_all(fd, got, 4 + n);
	assert_memory_equal(got, req, 4);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(got[4 + i], shout ? req[4 + i] - 'a' + 'A' :
		    req[4 + i]);
	free(got);
}

/* Requests arriving together, and one arriving a byte at a time. */
static void
test_framing(void **state)
{
	struct fixture *f = start(16, 1 << 20);
	uint8_t *a = frame(10), *b = frame(300);
	uint8_t both[4 + 10 + 4 + 300];
	int fd = dial(f->port[0]);

	(void)state;
	memcpy(both, a, 14);
	memcpy(both + 14, b, 304);
	send_all(fd, both, sizeof(both));
	expect_echo(fd, a, 10, 0);
	expect_echo(fd, b, 300, 0);
	for (size_t i = 0; i < 304; i++) {
		send_all(fd, b + i, 1);
		usleep(i % 50 == 0 ? 1000 : 0);
	}
	expect_echo(fd, b, 300, 0);
	close(fd);
	free(a);
	free(b);
	stop(f);
}

/* A frame of 3 MiB is more than one read and more than the shared
 * buffer: the connection's own buffer grows to it (frame_size). */
static void
test_large_frame(void **state)
{
	struct fixture *f = start(16, (size_t)16 << 20);
	size_t n = (size_t)3 << 20;
	uint8_t *a = frame(n);
	int fd = dial(f->port[0]);

	(void)state;
	send_all(fd, a, 4 + n);
	expect_echo(fd, a, n, 0);
	close(fd);
	free(a);
	stop(f);
}

static size_t
answered(struct proto *pr)
{
	return __atomic_load_n(&pr->requests, __ATOMIC_RELAXED);
}

struct writer {
	int fd;
	const uint8_t *p;
	size_t n;
};

static void *
writer_main(void *arg)
{
	struct writer *w = arg;

	send_all(w->fd, w->p, w->n);
	return NULL;
}

/*
 * A client that sends 400 requests of 64 KiB without reading: past the
 * output limit (16 KiB) and what the sockets hold, the connection stops
 * reading, and resumes, the requests left in its buffer first, as the
 * client reads; every answer comes back whole and in order.
 */
static void
test_pause_resume(void **state)
{
	struct fixture *f = start(16, 16 << 10);
	size_t n = 65536, count = 400;
	uint8_t *a = frame(n), *all = malloc(count * (4 + n));
	int fd = dial(f->port[0]);
	struct writer w;
	pthread_t t;

	(void)state;
	assert_non_null(all);
	for (size_t i = 0; i < count; i++) {
		memcpy(all + i * (4 + n), a, 4 + n);
		all[i * (4 + n) + 4] = (uint8_t)('a' + i % 26);
	}
	/* The kernel buffers take far less than 26 MB of answers, so the
	 * writer is a thread of its own, or this would deadlock. */
	w = (struct writer){ fd, all, count * (4 + n) };
	assert_int_equal(pthread_create(&t, NULL, writer_main, &w), 0);
	/* Before anything is read, the answers held are bounded by the
	 * limit and the sockets' buffers (a few MB here), far from all of
	 * them: give a connection that did not pause a second to get there. */
	for (int i = 0; i < 100 && answered(&f->echo) < count; i++)
		usleep(10 * 1000);
	assert_true(answered(&f->echo) < count / 2);
	for (size_t i = 0; i < count; i++)
		expect_echo(fd, all + i * (4 + n), n, 0);
	pthread_join(t, NULL);
	assert_int_equal(answered(&f->echo), count);
	close(fd);
	free(a);
	free(all);
	stop(f);
}

/* Each listener's connections speak its protocol. */
static void
test_two_fronts(void **state)
{
	struct fixture *f = start(16, 1 << 20);
	uint8_t *a = frame(40);
	int e = dial(f->port[0]), s = dial(f->port[1]);

	(void)state;
	send_all(e, a, 44);
	send_all(s, a, 44);
	expect_echo(s, a, 40, 1);
	expect_echo(e, a, 40, 0);
	close(e);
	close(s);
	free(a);
	stop(f);
}

/* A refused frame: its answer is written, then the connection closes. */
static void
test_refuse(void **state)
{
	struct fixture *f = start(16, 1 << 20);
	uint8_t bad[8] = { 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4 }, got[2];
	int fd = dial(f->port[0]);

	(void)state;
	send_all(fd, bad, sizeof(bad));
	assert_int_equal(read(fd, got, 2), 1);
	assert_int_equal(got[0], '!');
	assert_int_equal(read(fd, got, 2), 0);
	close(fd);
	stop(f);
}

/* Past max_connections a new connection is closed at once; the first
 * one is served as before. */
static void
test_connection_limit(void **state)
{
	struct fixture *f = start(1, 1 << 20);
	uint8_t *a = frame(5), got[1];
	int first = dial(f->port[0]), second;

	(void)state;
	send_all(first, a, 9);
	expect_echo(first, a, 5, 0);
	second = dial(f->port[1]);
	assert_int_equal(read(second, got, 1), 0);
	send_all(first, a, 9);
	expect_echo(first, a, 5, 0);
	close(first);
	close(second);
	free(a);
	stop(f);
}

/* One address may hold only so many connections; the next is closed at
 * once, and the others go on. */
static void
test_address_limit(void **state)
{
	klog_conns_config_t cfg = { .max_connections = 10,
	    .max_per_address = 2, .out_limit = 1 << 20 };
	struct fixture *f = start_cfg(&cfg);
	uint8_t *a = frame(5), got[1];
	int one = dial(f->port[0]), two = dial(f->port[1]), three;

	(void)state;
	send_all(one, a, 9);
	expect_echo(one, a, 5, 0);
	three = dial(f->port[0]);
	assert_int_equal(read(three, got, 1), 0);
	send_all(two, a, 9);
	expect_echo(two, a, 5, 1);
	close(one);
	close(three);
	/* One gone, room for another. */
	three = dial(f->port[0]);
	send_all(three, a, 9);
	expect_echo(three, a, 5, 0);
	close(two);
	close(three);
	free(a);
	stop(f);
}

/* A request that stops arriving is closed; a connection that asked
 * nothing is not, without an idle timeout. */
static void
test_request_timeout(void **state)
{
	klog_conns_config_t cfg = { .max_connections = 10,
	    .out_limit = 1 << 20, .request_timeout_ms = 200 };
	struct fixture *f = start_cfg(&cfg);
	uint8_t *a = frame(5), got[1];
	int slow = dial(f->port[0]), quiet = dial(f->port[0]);

	(void)state;
	send_all(slow, a, 6);           /* the header and two of five bytes */
	assert_int_equal(read(slow, got, 1), 0);
	send_all(quiet, a, 9);
	expect_echo(quiet, a, 5, 0);
	close(slow);
	close(quiet);
	free(a);
	stop(f);
}

/* Nothing asked and nothing owed for the idle time: closed. */
static void
test_idle_timeout(void **state)
{
	klog_conns_config_t cfg = { .max_connections = 10,
	    .out_limit = 1 << 20, .idle_ms = 200 };
	struct fixture *f = start_cfg(&cfg);
	uint8_t *a = frame(5), got[1];
	int fd = dial(f->port[0]);

	(void)state;
	send_all(fd, a, 9);
	expect_echo(fd, a, 5, 0);
	assert_int_equal(read(fd, got, 1), 0);
	close(fd);
	free(a);
	stop(f);
}

/* Bytes of unfinished requests over every connection are bounded: the
 * connection that reads past the bound is closed, the others finish. */
static void
test_pending_budget(void **state)
{
	klog_conns_config_t cfg = { .max_connections = 10,
	    .out_limit = 4 << 20, .pending_limit = 96 << 10 };
	struct fixture *f = start_cfg(&cfg);
	size_t big = 80 << 10;
	uint8_t *a = frame(big), got[1];
	int first = dial(f->port[0]), second = dial(f->port[0]);

	(void)state;
	send_all(first, a, 4 + (40 << 10));
	usleep(100000);
	send_all(second, a, 4 + (60 << 10));
	assert_int_equal(read(second, got, 1), 0);
	send_all(first, a + 4 + (40 << 10), big - (40 << 10));
	expect_echo(first, a, big, 0);
	close(first);
	close(second);
	free(a);
	stop(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_large_frame),
		cmocka_unit_test(test_pause_resume),
		cmocka_unit_test(test_two_fronts),
		cmocka_unit_test(test_refuse),
		cmocka_unit_test(test_connection_limit),
		cmocka_unit_test(test_address_limit),
		cmocka_unit_test(test_request_timeout),
		cmocka_unit_test(test_idle_timeout),
		cmocka_unit_test(test_pending_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
