/*
 * TCP sockets for the broker's listeners, in the shape of Redis's anet.c:
 * each function returns a descriptor (or 0) or a negative KLOG_E* code
 * with a one-line reason in the caller's buffer, and fills no one's
 * structure but the one it is handed.
 */
#ifndef KLOG_SOCKET_H
#define KLOG_SOCKET_H

#include <stddef.h>

#define KLOG_SOCKET_ERR_LEN 320

/* What a bound socket is: for the log, the advertisements and the tests. */
typedef struct klog_socket_addr {
	int port;                  /* as bound (the kernel's pick for 0) */
	char host[256];            /* as given; "" for a wildcard */
	char bound[300];           /* "127.0.0.1:9092", "[::1]:9092" */
} klog_socket_addr_t;

/*
 * Bind (not listen yet) a non-blocking, close-on-exec TCP socket to spec,
 * "HOST:PORT", "HOST", ":PORT" or "HOST:0" (the kernel picks the port);
 * a missing host is 127.0.0.1, a missing port default_port.  Returns the
 * descriptor (the caller's), or -KLOG_EINVAL for a spec that does not
 * parse, -KLOG_ECONN when no address could be bound, with the reason in
 * err ("listen 127.0.0.1:9092: Address already in use").
 */
int klog_socket_bind(const char *spec, const char *default_port,
    klog_socket_addr_t *addr, char *err, size_t errlen);

/* listen(2) on a bound socket; 0 or -KLOG_ECONN with the reason. */
int klog_socket_listen(int fd, const char *spec, char *err, size_t errlen);

/*
 * The host to advertise for a listener on host: host itself, or this
 * machine's name when host is a wildcard ("", 0.0.0.0, ::), or
 * "localhost" when the name cannot be had.  Written into buf.
 */
void klog_socket_advertised(const char *host, char *buf, size_t len);

/* "HOST:PORT" ("[V6]:PORT") of fd's peer, or "fd N"; returns buf. */
const char *klog_socket_peer_name(int fd, char *buf, size_t len);

#endif
