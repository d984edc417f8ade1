/* Unit tests for lib/net/outq.c: ordering of bytes, file slices and holds. */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/net/outq.h"
#include "klog/storage/log.h"

struct pair {
	int w, r;      /* the queue writes w; the test reads r */
	int filefd;    /* "0123456789abcdef" */
};

static int
setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	char path[] = "/tmp/klog-outq-test.XXXXXX";
	int sv[2];

	assert_non_null(p);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	p->w = sv[0];
	p->r = sv[1];
	p->filefd = mkstemp(path);
	assert_true(p->filefd >= 0);
	unlink(path);
	assert_int_equal(write(p->filefd, "0123456789abcdef", 16), 16);
	*state = p;
	return 0;
}

static int
teardown(void **state)
{
	struct pair *p = *state;

	close(p->w);
	close(p->r);
	close(p->filefd);
	free(p);
	return 0;
}

/* Everything readable now, as a string. */
static char *
drain(int fd)
{
	static char buf[1 << 16];
	size_t n = 0;
	ssize_t r;

	while (n < sizeof(buf) - 1 &&
	    (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return buf;
}

/* A slice of the test file; seg NULL, so release leaves the fd alone. */
static klog_log_slice_t
slice(struct pair *p, int64_t pos, size_t len)
{
	klog_log_slice_t s = { .fd = p->filefd, .file_pos = pos, .len = len };

	return s;
}

static void
test_bytes_merge_and_write(void **state)
{
	struct pair *p = *state;
	klog_outq_t q;

	klog_outq_init(&q);
	assert_true(klog_outq_empty(&q));
	klog_buf_put(klog_outq_buf(&q), "hello ", 6);
	assert_false(klog_outq_empty(&q));
	klog_buf_put(klog_outq_buf(&q), "world", 5);
	assert_int_equal(klog_outq_write(&q, p->w, NULL), KLOG_OUTQ_EMPTY);
	assert_string_equal(drain(p->r), "hello world");
	assert_true(klog_outq_empty(&q));
	assert_int_equal(q.queued, 0);
	/* The buffer is reused from its start. */
	klog_buf_put(klog_outq_buf(&q), "again", 5);
	assert_int_equal(klog_outq_write(&q, p->w, NULL), KLOG_OUTQ_EMPTY);
	assert_string_equal(drain(p->r), "again");
	assert_int_equal(q.rpos, 0);
	klog_outq_free(&q);
}

static void
test_files_between_bytes(void **state)
{
	struct pair *p = *state;
	klog_log_slice_t s;
	klog_outq_t q;

	klog_outq_init(&q);
	klog_buf_put(klog_outq_buf(&q), "<", 1);
	s = slice(p, 2, 5);
	assert_int_equal(klog_outq_file(&q, &s), 0);
	klog_buf_put(klog_outq_buf(&q), "|", 1);
	s = slice(p, 10, 6);
	assert_int_equal(klog_outq_file(&q, &s), 0);
	/* An empty slice adds nothing. */
	s = slice(p, 0, 0);
	assert_int_equal(klog_outq_file(&q, &s), 0);
	klog_buf_put(klog_outq_buf(&q), ">", 1);
	assert_int_equal(q.n, 4);   /* ">" becomes a chunk at the write */
	assert_int_equal(klog_outq_write(&q, p->w, NULL), KLOG_OUTQ_EMPTY);
	assert_string_equal(drain(p->r), "<23456|abcdef>");
	klog_outq_free(&q);
}

struct held {
	klog_outq_hold_t h;
	int done;
};

static void
held_done(klog_outq_hold_t *h)
{
	struct held *x = (struct held *)h;

	x->done++;
	klog_outq_free(&x->h.q);
}

static void
test_hold_keeps_order(void **state)
{
	struct pair *p = *state;
	struct held x = { .done = 0 };
	klog_log_slice_t s;
	klog_outq_t q;

	klog_outq_init(&q);
	klog_outq_init(&x.h.q);
	x.h.done = held_done;
	klog_buf_put(klog_outq_buf(&q), "1", 1);
	assert_int_equal(klog_outq_hold(&q, &x.h), 0);
	assert_int_equal(q.holds, 1);
	klog_buf_put(klog_outq_buf(&q), "4", 1);
	assert_int_equal(klog_outq_write(&q, p->w, NULL), KLOG_OUTQ_WAITING);
	assert_string_equal(drain(p->r), "1");
	/* Later responses wait behind the hold. */
	assert_int_equal(klog_outq_write(&q, p->w, NULL), KLOG_OUTQ_WAITING);
	assert_string_equal(drain(p->r), "");
	klog_buf_put(klog_outq_buf(&x.h.q), "2", 1);
	s = slice(p, 3, 1);
	assert_int_equal(klog_outq_file(&x.h.q, &s), 0);
	x.h.ready = 1;
	assert_int_equal(klog_outq_write(&q, p->w, NULL), KLOG_OUTQ_EMPTY);
	assert_string_equal(drain(p->r), "234");
	assert_int_equal(x.done, 1);
	assert_int_equal(q.holds, 0);
	klog_outq_free(&q);
	assert_int_equal(x.done, 1);
}

static void
test_free_releases_holds(void **state)
{
	struct pair *p = *state;
	struct held x = { .done = 0 }, y = { .done = 0 };
	klog_log_slice_t s;
	klog_outq_t q;

	(void)p;
	klog_outq_init(&q);
	klog_outq_init(&x.h.q);
	klog_outq_init(&y.h.q);
	x.h.done = y.h.done = held_done;
	assert_int_equal(klog_outq_hold(&q, &x.h), 0);
	s = slice(p, 0, 4);
	assert_int_equal(klog_outq_file(&q, &s), 0);
	assert_int_equal(klog_outq_hold(&q, &y.h), 0);
	klog_buf_put(klog_outq_buf(&y.h.q), "unsent", 6);
	y.h.ready = 1;
	klog_outq_free(&q);
	assert_int_equal(x.done, 1);
	assert_int_equal(y.done, 1);
	assert_true(klog_outq_empty(&q));
}

/* A full socket: BLOCKED, then the rest once the reader drains it. */
static void
test_blocked_then_resumed(void **state)
{
	struct pair *p = *state;
	size_t total = 3 << 20, got = 0;
	klog_outq_t q;
	uint8_t *data = malloc(total), tmp[65536];
	int rc, rounds = 0;
	ssize_t r;

	assert_non_null(data);
	for (size_t i = 0; i < total; i++)
		data[i] = (uint8_t)(i * 31 + (i >> 16));
	klog_outq_init(&q);
	klog_buf_put(klog_outq_buf(&q), data, total);
	rc = klog_outq_write(&q, p->w, NULL);
	assert_int_equal(rc, KLOG_OUTQ_BLOCKED);
	assert_true(q.queued > 0 && q.queued < total);
	while (got < total) {
		while ((r = read(p->r, tmp, sizeof(tmp))) > 0) {
			assert_memory_equal(tmp, data + got, (size_t)r);
			got += (size_t)r;
		}
		rc = klog_outq_write(&q, p->w, NULL);
		assert_true(rc == KLOG_OUTQ_EMPTY || rc == KLOG_OUTQ_BLOCKED);
		assert_true(++rounds < 100000);
	}
	assert_int_equal(rc, KLOG_OUTQ_EMPTY);
	assert_int_equal(q.queued, 0);
	klog_outq_free(&q);
	free(data);
}

static void
test_peer_gone_and_short_file(void **state)
{
	struct pair *p = *state;
	klog_log_slice_t s;
	klog_err_t err;
	klog_outq_t q;

	/* A slice past the end of its file cannot be sent. */
	klog_outq_init(&q);
	s = slice(p, 10, 20);
	assert_int_equal(klog_outq_file(&q, &s), 0);
	assert_int_equal(klog_outq_write(&q, p->w, &err), -KLOG_EIO);
	klog_outq_free(&q);
	drain(p->r);

	klog_outq_init(&q);
	klog_buf_put(klog_outq_buf(&q), "x", 1);
	close(p->r);
	p->r = open("/dev/null", O_RDONLY);
	assert_int_equal(klog_outq_write(&q, p->w, &err), -KLOG_ECLOSED);
	klog_outq_free(&q);

	/* A failed encoder allocation is reported by the write. */
	klog_outq_init(&q);
	klog_outq_buf(&q)->failed = 1;
	assert_int_equal(klog_outq_write(&q, p->w, &err), -KLOG_ENOMEM);
	klog_outq_free(&q);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bytes_merge_and_write,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_between_bytes,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold_keeps_order, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_free_releases_holds,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocked_then_resumed,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_peer_gone_and_short_file,
		    setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("outq", tests, NULL, NULL);
}
