/* Unit tests for lib/net/socket.c: binding, the reasons it gives, peer names. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/base/error.h"
#include "klog/net/socket.h"

static void
test_bind_port_zero(void **state)
{
	klog_socket_addr_t a;
	char err[KLOG_SOCKET_ERR_LEN], want[64];
	int fd = klog_socket_bind("127.0.0.1:0", "9092", &a, err, sizeof(err));

	(void)state;
	assert_true(fd >= 0);
	assert_true(a.port > 0);
	assert_string_equal(a.host, "127.0.0.1");
	snprintf(want, sizeof(want), "127.0.0.1:%d", a.port);
	assert_string_equal(a.bound, want);
	close(fd);
}

static void
test_bind_ipv6(void **state)
{
	klog_socket_addr_t a;
	char err[KLOG_SOCKET_ERR_LEN], want[64];
	int fd = klog_socket_bind("[::1]:0", "9092", &a, err, sizeof(err));

	(void)state;
	if (fd < 0)
		skip();         /* no IPv6 loopback here */
	snprintf(want, sizeof(want), "[::1]:%d", a.port);
	assert_string_equal(a.bound, want);
	close(fd);
}

static void
test_bind_errors(void **state)
{
	klog_socket_addr_t a, b;
	char err[KLOG_SOCKET_ERR_LEN], spec[64];
	int fd;

	(void)state;
	assert_int_equal(klog_socket_bind("127.0.0.1:99999", "9092", &a, err,
	    sizeof(err)), -KLOG_EINVAL);
	assert_memory_equal(err, "listen address \"127.0.0.1:99999\": ", 34);
	fd = klog_socket_bind("127.0.0.1:0", "9092", &a, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(klog_socket_listen(fd, "x", err, sizeof(err)), 0);
	snprintf(spec, sizeof(spec), "127.0.0.1:%d", a.port);
	assert_int_equal(klog_socket_bind(spec, "9092", &b, err, sizeof(err)),
	    -KLOG_ECONN);
	assert_non_null(strstr(err, "Address already in use"));
	assert_memory_equal(err, "listen ", 7);
	close(fd);
}

static void
test_peer_name(void **state)
{
	klog_socket_addr_t a;
	struct sockaddr_in sa = { .sin_family = AF_INET }, me;
	socklen_t sl = sizeof(me);
	char err[KLOG_SOCKET_ERR_LEN], name[96], want[96];
	int lfd, cfd, afd;

	(void)state;
	lfd = klog_socket_bind("127.0.0.1:0", "9092", &a, err, sizeof(err));
	assert_int_equal(klog_socket_listen(lfd, "x", err, sizeof(err)), 0);
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_port = htons((uint16_t)a.port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(cfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(cfd, (struct sockaddr *)&me, &sl), 0);
	while ((afd = accept(lfd, NULL, NULL)) < 0)
		usleep(1000);   /* the listener is non-blocking */
	snprintf(want, sizeof(want), "127.0.0.1:%d", ntohs(me.sin_port));
	assert_string_equal(klog_socket_peer_name(afd, name, sizeof(name)),
	    want);
	assert_string_equal(klog_socket_peer_name(-1, name, sizeof(name)),
	    "fd -1");
	close(afd);
	close(cfd);
	close(lfd);
}

static void
test_advertised(void **state)
{
	char buf[256], host[256];

	(void)state;
	klog_socket_advertised("10.1.2.3", buf, sizeof(buf));
	assert_string_equal(buf, "10.1.2.3");
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	klog_socket_advertised("0.0.0.0", buf, sizeof(buf));
	assert_string_equal(buf, host);
	klog_socket_advertised("", buf, sizeof(buf));
	assert_string_equal(buf, host);
	klog_socket_advertised("::", buf, sizeof(buf));
	assert_string_equal(buf, host);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bind_port_zero),
		cmocka_unit_test(test_bind_ipv6),
		cmocka_unit_test(test_bind_errors),
		cmocka_unit_test(test_peer_name),
		cmocka_unit_test(test_advertised),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
