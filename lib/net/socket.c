/* TCP listeners and peer names; see socket.h. */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/error.h"
#include "klog/base/parse.h"
#include "klog/net/socket.h"

#define LISTEN_BACKLOG 511

static int
fail(char *err, size_t errlen, int rc, const char *fmt, const char *a,
    const char *b)
{
	snprintf(err, errlen, fmt, a, b);
	return rc;
}

static int
is_wildcard(const char *host)
{
	return host[0] == '\0' || strcmp(host, "0.0.0.0") == 0 ||
	    strcmp(host, "::") == 0;
}

/* klog_parse_hostport(), plus port 0: let the kernel pick one. */
static int
parse_spec(const char *s, const char *default_port, char *host,
    size_t hostlen, char *port, size_t portlen, const char **why)
{
	size_t n = strlen(s);
	char prefix[300];

	if (n < 2 || strcmp(s + n - 2, ":0") != 0 || n - 2 >= sizeof(prefix))
		return klog_parse_hostport(s, "127.0.0.1", default_port,
		    host, hostlen, port, portlen, why);
	memcpy(prefix, s, n - 2);
	prefix[n - 2] = '\0';
	return klog_parse_hostport(n == 2 ? "127.0.0.1" : prefix, "127.0.0.1",
	    "0", host, hostlen, port, portlen, why);
}

static int
bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return 0;
	return ntohs(ss.ss_family == AF_INET6 ?
	    ((struct sockaddr_in6 *)&ss)->sin6_port :
	    ((struct sockaddr_in *)&ss)->sin_port);
}

int
klog_socket_bind(const char *spec, const char *default_port,
    klog_socket_addr_t *addr, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	    .ai_socktype = SOCK_STREAM }, *res, *ai;
	char port[32];
	const char *why;
	int rc, fd = -1, e = 0, one = 1;

	if (parse_spec(spec, default_port, addr->host, sizeof(addr->host),
	    port, sizeof(port), &why) < 0)
		return fail(err, errlen, -KLOG_EINVAL,
		    "listen address \"%s\": %s", spec, why);
	if ((rc = getaddrinfo(addr->host[0] ? addr->host : NULL, port, &hints,
	    &res)) != 0)
		return fail(err, errlen, -KLOG_ECONN, "listen %s: %s", spec,
		    gai_strerror(rc));
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return fail(err, errlen, -KLOG_ECONN, "listen %s: %s", spec,
		    strerror(e));
	addr->port = bound_port(fd);
	snprintf(addr->bound, sizeof(addr->bound), strchr(addr->host, ':') ?
	    "[%s]:%d" : "%s:%d", addr->host[0] ? addr->host : "0.0.0.0",
	    addr->port);
	return fd;
}

int
klog_socket_listen(int fd, const char *spec, char *err, size_t errlen)
{
	if (listen(fd, LISTEN_BACKLOG) < 0)
		return fail(err, errlen, -KLOG_ECONN, "listen %s: %s", spec,
		    strerror(errno));
	return 0;
}

void
klog_socket_advertised(const char *host, char *buf, size_t len)
{
	if (!is_wildcard(host))
		snprintf(buf, len, "%s", host);
	else if (gethostname(buf, len) != 0)
		snprintf(buf, len, "localhost");
	else
		buf[len - 1] = '\0';
}

const char *
klog_socket_peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN], serv[8];

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), serv,
	    sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(buf, len, "fd %d", fd);
	else if (ss.ss_family == AF_INET6)
		snprintf(buf, len, "[%s]:%s", host, serv);
	else
		snprintf(buf, len, "%s:%s", host, serv);
	return buf;
}
