#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "klog/client.h"
#include "klog/recvahead.h"

/* A client connected to a socket the test writes the broker's side of. */
typedef struct pair {
	klog_client_t *c;
	int server;
} pair_t;

static void
pair_open(pair_t *p)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	klog_client_addr_t a = { "127.0.0.1", "" };
	klog_err_t err = { 0 };
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sl), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	snprintf(a.port, sizeof(a.port), "%d", ntohs(sa.sin_port));
	assert_int_equal(klog_client_open(&a, 1000, &p->c, &err), 0);
	p->server = accept(lfd, NULL, NULL);
	assert_true(p->server >= 0);
	close(lfd);
}

static void
pair_close(pair_t *p)
{
	klog_client_close(p->c);
	if (p->server >= 0)
		close(p->server);
}

/* A response frame: correlation id, no error, n bytes of body 'x'. */
static size_t
frame(uint8_t *buf, int32_t id, size_t n)
{
	uint32_t size = (uint32_t)(KLOG_RESP_HEADER_SIZE - 4 + n);

	buf[0] = (uint8_t)(size >> 24);
	buf[1] = (uint8_t)(size >> 16);
	buf[2] = (uint8_t)(size >> 8);
	buf[3] = (uint8_t)size;
	buf[4] = (uint8_t)((uint32_t)id >> 24);
	buf[5] = (uint8_t)((uint32_t)id >> 16);
	buf[6] = (uint8_t)((uint32_t)id >> 8);
	buf[7] = (uint8_t)id;
	buf[8] = buf[9] = 0;
	memset(buf + KLOG_RESP_HEADER_SIZE, 'x', n);
	return KLOG_RESP_HEADER_SIZE + n;
}

struct seen {
	int calls;
	int32_t id;
	size_t len;
};

static void
note(void *arg, const klog_resp_header_t *h, const uint8_t *body, size_t len)
{
	struct seen *s = arg;

	(void)body;
	s->calls++;
	s->id = h->correlation;
	s->len = len;
}

/* Wait up to ms for the thread; 1 if done. */
static int
wait_done(klog_recvahead_t *a, int ms, int *rc, klog_err_t *err)
{
	struct pollfd pfd = { .fd = klog_recvahead_fd(a), .events = POLLIN };

	if (poll(&pfd, 1, ms) < 0)
		return 0;
	return klog_recvahead_done(a, rc, err);
}

/* A response sent in two parts: the thread is done only once it is whole,
 * calls fn on it, and leaves it to be taken. */
static void
test_receives_whole_response(void **state)
{
	static uint8_t buf[300000];
	size_t n = frame(buf, 7, sizeof(buf) - KLOG_RESP_HEADER_SIZE);
	struct seen s = { 0 };
	klog_recvahead_t *a = NULL;
	klog_resp_header_t h;
	klog_err_t err = { 0 };
	const uint8_t *body;
	size_t len;
	pair_t p;
	int rc = -1;

	(void)state;
	pair_open(&p);
	assert_int_equal(klog_recvahead_new(note, &s, &a), 0);
	klog_recvahead_start(a, p.c);
	assert_int_equal(write(p.server, buf, 1000), 1000);
	assert_int_equal(wait_done(a, 100, &rc, &err), 0);
	assert_int_equal(s.calls, 0);
	for (size_t off = 1000; off < n;) {
		ssize_t w = write(p.server, buf + off, n - off);

		assert_true(w > 0);
		off += (size_t)w;
	}
	assert_int_equal(wait_done(a, 5000, &rc, &err), 1);
	assert_int_equal(rc, 0);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.id, 7);
	assert_int_equal(s.len, n - KLOG_RESP_HEADER_SIZE);
	assert_int_equal(klog_client_response(p.c, &h, &body, &len, &err), 1);
	assert_int_equal(h.correlation, 7);
	assert_int_equal(len, n - KLOG_RESP_HEADER_SIZE);
	assert_int_equal(body[len - 1], 'x');
	assert_int_equal(klog_client_response(p.c, &h, &body, &len, &err), 0);
	klog_recvahead_free(a);
	pair_close(&p);
}

/* Cancelled while the response is incomplete: the connection is the
 * caller's again, with what arrived kept; a later start goes on. */
static void
test_cancel_then_again(void **state)
{
	static uint8_t buf[5000];
	size_t n = frame(buf, 9, sizeof(buf) - KLOG_RESP_HEADER_SIZE);
	struct seen s = { 0 };
	klog_recvahead_t *a = NULL;
	klog_err_t err = { 0 };
	pair_t p;
	int rc = -1;

	(void)state;
	pair_open(&p);
	assert_int_equal(klog_recvahead_new(note, &s, &a), 0);
	klog_recvahead_start(a, p.c);
	assert_int_equal(write(p.server, buf, 100), 100);
	klog_recvahead_cancel(a);
	assert_int_equal(klog_recvahead_done(a, &rc, &err), 1);
	assert_int_equal(s.calls, 0);
	klog_recvahead_start(a, p.c);
	assert_int_equal(write(p.server, buf + 100, n - 100),
	    (ssize_t)(n - 100));
	assert_int_equal(wait_done(a, 5000, &rc, &err), 1);
	assert_int_equal(rc, 0);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.id, 9);
	klog_recvahead_free(a);
	pair_close(&p);
}

/* The broker closes midway: the thread's outcome is the client's error. */
static void
test_closed_midway(void **state)
{
	static uint8_t buf[5000];
	struct seen s = { 0 };
	klog_recvahead_t *a = NULL;
	klog_err_t err = { 0 };
	pair_t p;
	int rc = 0;

	(void)state;
	frame(buf, 3, sizeof(buf) - KLOG_RESP_HEADER_SIZE);
	pair_open(&p);
	assert_int_equal(klog_recvahead_new(note, &s, &a), 0);
	klog_recvahead_start(a, p.c);
	assert_int_equal(write(p.server, buf, 2000), 2000);
	close(p.server);
	p.server = -1;
	assert_int_equal(wait_done(a, 5000, &rc, &err), 1);
	assert_int_equal(rc, -KLOG_ECLOSED);
	assert_non_null(strstr(err.msg, "closed the connection"));
	assert_int_equal(s.calls, 0);
	klog_recvahead_free(a);
	pair_close(&p);
}

/* Freed while it waits for a response that never comes: no hang. */
static void
test_free_while_waiting(void **state)
{
	klog_recvahead_t *a = NULL;
	pair_t p;

	(void)state;
	pair_open(&p);
	assert_int_equal(klog_recvahead_new(NULL, NULL, &a), 0);
	klog_recvahead_start(a, p.c);
	klog_recvahead_free(a);
	pair_close(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_receives_whole_response),
		cmocka_unit_test(test_cancel_then_again),
		cmocka_unit_test(test_closed_midway),
		cmocka_unit_test(test_free_while_waiting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
