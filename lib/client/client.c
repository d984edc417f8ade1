#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "klog/base/clock.h"
#include "klog/base/parse.h"
#include "klog/client/client.h"
#include "klog/storage/format.h"

#define READ_CHUNK (256 * 1024)

struct klog_client {
	int fd;
	char name[sizeof(((klog_client_addr_t *)0)->host) + 20];
	int32_t next_id;
	klog_buf_t out;
	size_t out_pos;      /* bytes of out already written */
	klog_buf_t in;
	size_t in_pos;       /* start of what is not consumed yet */
	size_t last_len;     /* the response handed out last, dropped later */
	size_t max_response;
	/* While connecting: the name's addresses, the one tried now, and
	 * the error of the last that failed. */
	struct addrinfo *addrs, *ai;
	int soerr;
};

int
klog_client_parse_brokers(const char *list, klog_client_addr_t **out,
    size_t *n, klog_err_t *err)
{
	klog_client_addr_t *addrs;
	const char *p = list, *why = NULL;
	size_t count = 1, i = 0, len = 0;
	char item[300];

	for (const char *q = list; *q != '\0'; q++)
		count += *q == ',';
	if ((addrs = calloc(count, sizeof(*addrs))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	for (i = 0; i < count; i++) {
		len = strcspn(p, ",");
		if (len == 0 || len >= sizeof(item)) {
			why = len == 0 ? "empty broker address" : "too long";
			goto bad;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if (klog_parse_hostport(item, "127.0.0.1", KLOG_DEFAULT_PORT,
		    addrs[i].host, sizeof(addrs[i].host), addrs[i].port,
		    sizeof(addrs[i].port), &why) < 0)
			goto bad;
		p += len + (p[len] == ',');
	}
	*out = addrs;
	*n = count;
	return 0;
bad:
	free(addrs);
	return klog_err_set(err, -KLOG_EINVAL, "%s: %s",
	    len > 0 && len < sizeof(item) ? item : list, why);
}

/* Wait for fd to be ready for events until deadline; 0, or -KLOG_ETIMEDOUT. */
static int
wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int64_t left;
	int n;

	for (;;) {
		left = deadline - klog_clock_mono_ms();
		if (left <= 0)
			return -KLOG_ETIMEDOUT;
		n = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -KLOG_EIO;
	}
}

/*
 * Start a connect to the next of c's addresses that does not refuse at
 * once: 0 with it under way (or done), or the last errno if none is left.
 */
static int
start_next(klog_client_t *c)
{
	int e = c->soerr;

	for (; c->ai != NULL; c->ai = c->ai->ai_next) {
		c->fd = socket(c->ai->ai_family, c->ai->ai_socktype |
		    SOCK_NONBLOCK | SOCK_CLOEXEC, c->ai->ai_protocol);
		if (c->fd < 0) {
			e = errno;
			continue;
		}
		if (connect(c->fd, c->ai->ai_addr, c->ai->ai_addrlen) == 0 ||
		    errno == EINPROGRESS)
			return 0;
		e = errno;
		close(c->fd);
		c->fd = -1;
	}
	return e;
}

static int
connect_failed(klog_client_t *c, int e, klog_err_t *err)
{
	return klog_err_set(err, e == ETIMEDOUT ? -KLOG_ETIMEDOUT :
	    -KLOG_ECONN, "%s: %s", c->name, e == ETIMEDOUT ?
	    "connection timed out" : strerror(e));
}

int
klog_client_start(const klog_client_addr_t *addr, klog_client_t **out,
    klog_err_t *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
	    .ai_socktype = SOCK_STREAM };
	klog_client_t *c;
	int gai, e, rc;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	c->fd = -1;
	snprintf(c->name, sizeof(c->name), "%s:%s", addr->host, addr->port);
	c->max_response = (size_t)KLOG_DEFAULT_MAX_REQUEST + 1024 * 1024;
	klog_buf_init(&c->out);
	klog_buf_init(&c->in);
	if ((gai = getaddrinfo(addr->host, addr->port, &hints,
	    &c->addrs)) != 0) {
		klog_client_close(c);
		return klog_err_set(err, -KLOG_ECONN, "%s:%s: %s", addr->host,
		    addr->port, gai_strerror(gai));
	}
	c->ai = c->addrs;
	c->soerr = ECONNREFUSED;
	if ((e = start_next(c)) != 0) {
		rc = connect_failed(c, e, err);
		klog_client_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

int
klog_client_connected(klog_client_t *c, klog_err_t *err)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
	socklen_t sl = sizeof(c->soerr);
	int one = 1, e;

	if (c->addrs == NULL)
		return 1;
	/* Not writable yet (or poll interrupted): SO_ERROR would say 0. */
	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &c->soerr, &sl) < 0)
		c->soerr = errno;
	if (c->soerr != 0) {
		close(c->fd);
		c->fd = -1;
		c->ai = c->ai->ai_next;
		if ((e = start_next(c)) != 0)
			return connect_failed(c, e, err);
		return 0;
	}
	freeaddrinfo(c->addrs);
	c->addrs = NULL;
	c->ai = NULL;
	/* Requests are whole frames already: do not let Nagle hold them. */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 1;
}

int
klog_client_open(const klog_client_addr_t *addr, int timeout_ms,
    klog_client_t **out, klog_err_t *err)
{
	int64_t deadline = klog_clock_mono_ms() + timeout_ms;
	klog_client_t *c;
	int rc;

	if ((rc = klog_client_start(addr, &c, err)) < 0)
		return rc;
	while ((rc = klog_client_connected(c, err)) == 0)
		if ((rc = wait_fd(c->fd, POLLOUT, deadline)) < 0) {
			rc = connect_failed(c, rc == -KLOG_ETIMEDOUT ?
			    ETIMEDOUT : EIO, err);
			break;
		}
	if (rc < 0) {
		klog_client_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

void
klog_client_close(klog_client_t *c)
{
	if (c == NULL)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->addrs != NULL)
		freeaddrinfo(c->addrs);
	klog_buf_free(&c->out);
	klog_buf_free(&c->in);
	free(c);
}

int
klog_client_fd(const klog_client_t *c)
{
	return c->fd;
}

const char *
klog_client_name(const klog_client_t *c)
{
	return c->name;
}

int32_t
klog_client_next_id(klog_client_t *c)
{
	if (c->next_id == INT32_MAX)
		c->next_id = 0;
	return ++c->next_id;
}

klog_buf_t *
klog_client_out(klog_client_t *c)
{
	return &c->out;
}

int
klog_client_pending(const klog_client_t *c)
{
	return c->out.len > c->out_pos;
}

void
klog_client_set_max_response(klog_client_t *c, size_t max)
{
	c->max_response = max;
}

static int
sock_error(klog_client_t *c, int errnum, klog_err_t *err)
{
	return klog_err_set(err, -KLOG_ECONN, "%s: %s", c->name,
	    strerror(errnum));
}

int
klog_client_write(klog_client_t *c, klog_err_t *err)
{
	ssize_t n;

	if (c->out.failed)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	while (c->out_pos < c->out.len) {
		n = send(c->fd, c->out.data + c->out_pos,
		    c->out.len - c->out_pos, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return sock_error(c, errno, err);
		c->out_pos += (size_t)n;
	}
	klog_buf_reset(&c->out);
	c->out_pos = 0;
	return 0;
}

int
klog_client_writev(klog_client_t *c, const struct iovec *iov, int n,
    int more, size_t *written, klog_err_t *err)
{
	struct msghdr msg = { .msg_iov = (struct iovec *)iov,
	    .msg_iovlen = (size_t)n };
	ssize_t w;

	*written = 0;
	do
		w = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT |
		    (more ? MSG_MORE : 0));
	while (w < 0 && errno == EINTR);
	if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (w < 0)
		return sock_error(c, errno, err);
	*written = (size_t)w;
	return 0;
}

/* Drop consumed input and make room for the rest of the current frame. */
static int
make_room(klog_client_t *c)
{
	size_t avail, want = READ_CHUNK;
	uint32_t size;

	c->in_pos += c->last_len;
	c->last_len = 0;
	if (c->in_pos > 0) {
		klog_buf_consume(&c->in, c->in_pos);
		c->in_pos = 0;
	}
	avail = c->in.len;
	if (avail >= 4) {
		size = klog_be32(c->in.data);
		if ((size_t)size + 4 > avail &&
		    (size_t)size + 4 - avail > want &&
		    (size_t)size <= c->max_response)
			want = (size_t)size + 4 - avail;
	}
	return klog_buf_reserve(&c->in, want);
}

int
klog_client_read(klog_client_t *c, klog_err_t *err)
{
	ssize_t n;
	size_t room;

	for (;;) {
		if (make_room(c) < 0)
			return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		room = c->in.cap - c->in.len;
		n = read(c->fd, c->in.data + c->in.len, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return sock_error(c, errno, err);
		if (n == 0)
			return klog_err_set(err, -KLOG_ECLOSED,
			    "%s: the broker closed the connection", c->name);
		c->in.len += (size_t)n;
		if ((size_t)n < room)
			return 0;
	}
}

int
klog_client_response(klog_client_t *c, klog_resp_header_t *h,
    const uint8_t **body, size_t *len, klog_err_t *err)
{
	size_t avail;
	int rc;

	c->in_pos += c->last_len;
	c->last_len = 0;
	avail = c->in.len - c->in_pos;
	if (avail == 0)
		return 0;  /* nothing received yet: in.data may be NULL */
	rc = klog_proto_resp_header(c->in.data + c->in_pos, avail,
	    c->max_response, h);
	if (rc == -KLOG_EPARTIAL)
		return 0;
	if (rc < 0)
		return klog_err_set(err, -KLOG_EPROTO,
		    "%s: malformed response (%s)", c->name, klog_strerror(rc));
	if ((size_t)h->size + 4 > avail)
		return 0;
	*body = c->in.data + c->in_pos + KLOG_RESP_HEADER_SIZE;
	*len = (size_t)h->size + 4 - KLOG_RESP_HEADER_SIZE;
	c->last_len = (size_t)h->size + 4;
	return 1;
}

int
klog_client_detach(klog_client_t *c, klog_buf_t *spare)
{
	size_t end = c->in_pos + c->last_len, rest = c->in.len - end;
	klog_buf_t old;

	klog_buf_reset(spare);
	if (klog_buf_reserve(spare, rest > 0 ? rest : 1) < 0)
		return -KLOG_ENOMEM;
	klog_buf_put(spare, c->in.data + end, rest);
	old = c->in;
	c->in = *spare;
	*spare = old;
	spare->len = end;
	c->in_pos = 0;
	c->last_len = 0;
	return 0;
}

int
klog_client_call(klog_client_t *c, int32_t id, int timeout_ms,
    int16_t *error, const uint8_t **body, size_t *len, klog_err_t *err)
{
	int64_t deadline = klog_clock_mono_ms() + timeout_ms;
	klog_resp_header_t h;
	int rc;

	while (klog_client_pending(c)) {
		if ((rc = klog_client_write(c, err)) < 0)
			return rc;
		if (klog_client_pending(c) &&
		    wait_fd(c->fd, POLLOUT, deadline) < 0)
			goto timeout;
	}
	for (;;) {
		while ((rc = klog_client_response(c, &h, body, len, err)) > 0)
			if (h.correlation == id) {
				*error = h.error;
				return 0;
			}
		if (rc < 0)
			return rc;
		if (wait_fd(c->fd, POLLIN, deadline) < 0)
			goto timeout;
		if ((rc = klog_client_read(c, err)) < 0)
			return rc;
	}
timeout:
	return klog_err_set(err, -KLOG_ETIMEDOUT, "%s: no answer within %d ms",
	    c->name, timeout_ms);
}

/* A line about the broker's answer: "<what>: why". */
static int
answer_error(klog_err_t *err, int rc, const char *what, const char *topic,
    int32_t part, const char *why)
{
	if (what == NULL)
		return klog_err_set(err, rc, "topic \"%s\" partition %d: %s",
		    topic, (int)part, why);
	return klog_err_set(err, rc, "%s: %s", what, why);
}

int
klog_client_query_offsets(klog_client_t *c, const char *topic, int32_t part,
    int64_t time, int max, int timeout_ms, const char *what, int64_t *offsets,
    int *n, klog_err_t *err)
{
	klog_offsets_part_t q = { { topic, (uint16_t)strlen(topic) }, part,
	    time, max };
	klog_offsets_result_t res;
	const uint8_t *body;
	int16_t error;
	uint32_t got = 0;
	size_t len;
	int32_t id = klog_client_next_id(c);
	int rc;

	*n = 0;
	if ((rc = klog_proto_encode_offsets(&c->out, id, &q, 1)) < 0)
		return klog_err_set(err, rc, "%s: offsets request: %s",
		    c->name, klog_strerror(rc));
	if ((rc = klog_client_call(c, id, timeout_ms, &error, &body, &len,
	    err)) < 0)
		return rc;
	/* A refusal of the whole request has no body to decode. */
	if (error == KLOG_WIRE_NONE) {
		if (klog_proto_decode_offsets_resp(body, len, &res, 1, &got) <
		    0 || got != 1)
			return klog_err_set(err, -KLOG_EPROTO,
			    "%s: malformed offsets response", c->name);
		error = res.error;
	}
	if (error != KLOG_WIRE_NONE)
		return answer_error(err, klog_wire_error_to_klog(error), what,
		    topic, part, klog_wire_error_text(error));
	if (res.count < 1)
		return answer_error(err, -KLOG_ENOENT, what, topic, part,
		    "no offset that old");
	for (int32_t i = 0; i < res.count && i < max; i++)
		offsets[(*n)++] = klog_proto_offset_at(&res, i);
	return 0;
}

int
klog_client_query_offset(klog_client_t *c, const char *topic, int32_t part,
    int64_t time, int timeout_ms, const char *what, int64_t *offset,
    klog_err_t *err)
{
	int n;

	return klog_client_query_offsets(c, topic, part, time, 1, timeout_ms,
	    what, offset, &n, err);
}

int
klog_client_query_offset_at(const klog_client_addr_t *addr,
    const char *topic, int32_t part, int64_t time, int timeout_ms,
    const char *what, int64_t *offset, klog_err_t *err)
{
	int64_t deadline = klog_clock_mono_ms() + timeout_ms, left;
	klog_client_t *c;
	int rc;

	if ((rc = klog_client_open(addr, timeout_ms, &c, err)) < 0)
		return rc;
	left = deadline - klog_clock_mono_ms();
	rc = klog_client_query_offset(c, topic, part, time,
	    left > 0 ? (int)left : 1, what, offset, err);
	klog_client_close(c);
	return rc;
}

int
klog_client_topic_admin(klog_client_t *c, int16_t api, const char *topic,
    int32_t partitions, int timeout_ms, int16_t *error, int32_t *now,
    klog_err_t *err)
{
	klog_topic_admin_t q = { { topic, (uint16_t)strlen(topic) },
	    partitions };
	klog_topic_admin_resp_t res;
	const uint8_t *body;
	size_t len;
	int32_t id = klog_client_next_id(c);
	int rc;

	*now = 0;
	if ((rc = klog_proto_encode_topic_admin(&c->out, api, id, &q)) < 0)
		return klog_err_set(err, rc, "%s: %s request: %s", c->name,
		    klog_proto_api_name(api), klog_strerror(rc));
	if ((rc = klog_client_call(c, id, timeout_ms, error, &body, &len,
	    err)) < 0)
		return rc;
	/* A refusal of the whole request has no body to decode. */
	if (*error != KLOG_WIRE_NONE)
		return 0;
	if (klog_proto_decode_topic_admin_resp(body, len, &res) < 0)
		return klog_err_set(err, -KLOG_EPROTO, "%s: malformed %s "
		    "response", c->name, klog_proto_api_name(api));
	*error = res.error;
	*now = res.partitions;
	return 0;
}
