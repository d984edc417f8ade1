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

#include "klog/auth/scram.h"
#include "klog/base/clock.h"
#include "klog/base/parse.h"
#include "klog/client/client.h"
#include "klog/storage/format.h"

#define READ_CHUNK (256 * 1024)
/* Iovecs written over TLS are gathered into one buffer of up to this
 * much, so that small frames share records (Redis's writev does so
 * below 64 KiB too). */
#define GATHER_MAX (64 * 1024)
/* The longest wait for a TLS 1.3 broker's verdict on our certificate:
 * it comes a round trip after the handshake. */
#define SETTLE_MS 1000

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
	/* TLS, when addr->sec says so: the handshake is done once
	 * handshaken; until then want is what it waits for. */
	const klog_client_sec_t *sec;
	char host[sizeof(((klog_client_addr_t *)0)->host)];
	SSL *ssl;
	int want;
	int handshaken;
	uint8_t *gather;     /* GATHER_MAX bytes, made on first use */
	int offsets_v1;      /* the broker refused OFFSETS at version 2 */
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
	c->sec = addr->sec;
	snprintf(c->host, sizeof(c->host), "%s", addr->host);
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

/* A failed handshake as err says it, with the broker's name first. */
static int
tls_failed(klog_client_t *c, int rc, klog_err_t *err)
{
	char why[sizeof(err->msg)];

	snprintf(why, sizeof(why), "%s", err != NULL ? err->msg : "");
	return klog_err_set(err, rc, "%s: %s", c->name, why);
}

/* The TLS handshake, as far as the socket lets it go now. */
static int
handshake(klog_client_t *c, klog_err_t *err)
{
	int rc;

	if (c->ssl == NULL && (c->ssl = klog_tls_connect(c->sec->tls, c->fd,
	    c->host, c->sec->verify_host)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "%s: TLS: out of "
		    "memory", c->name);
	if ((rc = klog_tls_handshake(c->ssl, &c->want, err)) < 0)
		return tls_failed(c, rc, err);
	c->handshaken = rc;
	return rc;
}

int
klog_client_connected(klog_client_t *c, klog_err_t *err)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
	socklen_t sl = sizeof(c->soerr);
	int one = 1, e;

	if (c->addrs == NULL)
		return c->ssl == NULL || c->handshaken ? 1 : handshake(c, err);
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
	if (c->sec == NULL || c->sec->tls == NULL)
		return 1;
	return handshake(c, err);
}

short
klog_client_wants(const klog_client_t *c)
{
	if (c->addrs != NULL)
		return POLLOUT;
	if (c->ssl != NULL && !c->handshaken)
		return c->want == KLOG_TLS_WANT_WRITE ? POLLOUT : POLLIN;
	return POLLIN;
}

/* One AUTHENTICATE round trip: msg out, the broker's answer in *ans. */
static int
auth_round(klog_client_t *c, const char *mech, const void *msg, size_t len,
    int64_t deadline, const uint8_t **ans, uint32_t *alen, klog_err_t *err)
{
	klog_auth_req_t q = { { mech, (uint16_t)strlen(mech) }, msg,
	    (uint32_t)len };
	int64_t left = deadline - klog_clock_mono_ms();
	int32_t id = klog_client_next_id(c);
	const uint8_t *body;
	size_t blen;
	int16_t error;
	int rc;

	if ((rc = klog_proto_encode_auth(&c->out, id, &q)) < 0)
		return klog_err_set(err, rc, "%s: authentication failed: %s",
		    c->name, rc == -KLOG_EINVAL ? "user name or password too "
		    "long" : klog_strerror(rc));
	if ((rc = klog_client_call(c, id, left > 0 ? (int)left : 1, &error,
	    &body, &blen, err)) < 0)
		return rc;
	switch (error) {
	case KLOG_WIRE_NONE:
		break;
	case KLOG_WIRE_AUTHENTICATION_FAILED:
		return klog_err_set(err, -KLOG_EAUTH, "%s: authentication "
		    "failed", c->name);
	case KLOG_WIRE_UNSUPPORTED_MECHANISM:
		return klog_err_set(err, -KLOG_EAUTH, "%s: authentication "
		    "failed: the broker does not offer %s", c->name, mech);
	default:
		/* A listener without SASL answers out of turn or not at all
		 * (an older broker): say what it said. */
		return klog_err_set(err, -KLOG_EAUTH, "%s: authentication "
		    "failed: %s (is it a SASL listener?)", c->name,
		    klog_wire_error_name(error));
	}
	if (klog_proto_decode_auth_resp(body, blen, ans, alen) < 0)
		return klog_err_set(err, -KLOG_EPROTO, "%s: malformed "
		    "AUTHENTICATE response", c->name);
	return 0;
}

/* PLAIN (RFC 4616): "\0user\0password" in one round, no authzid. */
static int
auth_plain(klog_client_t *c, int64_t deadline, klog_err_t *err)
{
	const klog_client_sec_t *s = c->sec;
	size_t ul = strlen(s->username), pl = strlen(s->password);
	uint8_t msg[KLOG_AUTH_BYTES_MAX];
	const uint8_t *ans;
	uint32_t alen;
	int rc;

	if (ul + pl + 2 > sizeof(msg))
		return klog_err_set(err, -KLOG_EINVAL, "%s: authentication "
		    "failed: user name or password too long", c->name);
	msg[0] = '\0';
	memcpy(msg + 1, s->username, ul);
	msg[1 + ul] = '\0';
	memcpy(msg + 2 + ul, s->password, pl);
	rc = auth_round(c, "PLAIN", msg, ul + pl + 2, deadline, &ans, &alen,
	    err);
	OPENSSL_cleanse(msg, sizeof(msg));
	return rc;
}

/* SCRAM (RFC 5802) in two rounds; the server proves it holds our
 * credential too. */
static int
auth_scram(klog_client_t *c, klog_scram_mech_t m, int64_t deadline,
    klog_err_t *err)
{
	const klog_client_sec_t *s = c->sec;
	const char *mech = klog_scram_mech_name(m), *out;
	klog_scram_client_t *sc;
	const uint8_t *ans;
	uint32_t alen;
	size_t olen;
	int rc;

	if ((rc = klog_scram_client_new(m, s->username, s->password,
	    strlen(s->password), NULL, &sc, err)) < 0)
		return klog_err_set(err, rc, "%s: authentication failed: %s",
		    c->name, rc == -KLOG_EINVAL ? "not a user name or password "
		    "SCRAM takes" : klog_strerror(rc));
	if ((rc = klog_scram_client_first(sc, &out, &olen, err)) < 0 ||
	    (rc = auth_round(c, mech, out, olen, deadline, &ans, &alen,
	    err)) < 0)
		goto out;
	if ((rc = klog_scram_client_final(sc, ans, alen, &out, &olen,
	    err)) < 0) {
		rc = klog_err_set(err, rc, "%s: authentication failed: a "
		    "malformed SCRAM challenge", c->name);
		goto out;
	}
	if ((rc = auth_round(c, mech, out, olen, deadline, &ans, &alen,
	    err)) < 0)
		goto out;
	if ((rc = klog_scram_client_verify(sc, ans, alen, err)) < 0)
		rc = klog_err_set(err, -KLOG_EAUTH, "%s: authentication "
		    "failed: the broker did not prove it knows the password",
		    c->name);
out:
	klog_scram_client_free(sc);
	return rc;
}

/* SASL's exchange, first thing on a new connection. */
static int
authenticate(klog_client_t *c, int64_t deadline, klog_err_t *err)
{
	klog_scram_mech_t m;

	if (strcmp(c->sec->mechanism, "PLAIN") == 0)
		return auth_plain(c, deadline, err);
	if (klog_scram_mech_parse(c->sec->mechanism, &m) < 0)
		return klog_err_set(err, -KLOG_EAUTH, "%s: authentication "
		    "failed: no mechanism %s", c->name, c->sec->mechanism);
	return auth_scram(c, m, deadline, err);
}

/*
 * Before the first request over TLS 1.3 with a client certificate asked
 * for: wait for the broker's verdict on it (klog_tls_settled()), so that
 * a refusal is read as one rather than lost in a reset.  A broker that
 * sends no ticket costs SETTLE_MS at most, and is not refused for it.
 */
static int
settle(klog_client_t *c, int64_t deadline, klog_err_t *err)
{
	int64_t until = klog_clock_mono_ms() + SETTLE_MS;
	int rc;

	if (until > deadline)
		until = deadline;
	while (!klog_tls_settled(c->ssl))
		if (wait_fd(c->fd, POLLIN, until) < 0)
			return 0;
		else if ((rc = klog_client_read(c, err)) < 0)
			return rc;
	return 0;
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
		if ((rc = wait_fd(c->fd, klog_client_wants(c),
		    deadline)) < 0) {
			rc = connect_failed(c, rc == -KLOG_ETIMEDOUT ?
			    ETIMEDOUT : EIO, err);
			break;
		}
	if (rc > 0 && c->ssl != NULL)
		rc = settle(c, deadline, err);
	if (rc >= 0 && c->sec != NULL && c->sec->mechanism != NULL)
		rc = authenticate(c, deadline, err);
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
	klog_tls_close(c->ssl);
	if (c->fd >= 0)
		close(c->fd);
	free(c->gather);
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

/* Write up to len bytes of buf: the count (0 when the socket is full),
 * or an error. */
static ssize_t
send_some(klog_client_t *c, const void *buf, size_t len, int more,
    klog_err_t *err)
{
	ssize_t n;
	int want;

	if (c->ssl != NULL) {
		if ((n = klog_tls_write(c->ssl, buf, len, &want, err)) >= 0)
			return n;
		return n == -1 ? 0 : tls_failed(c, err->code < 0 ? err->code :
		    -KLOG_ECONN, err);
	}
	do
		n = send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT |
		    (more ? MSG_MORE : 0));
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n < 0)
		return sock_error(c, errno, err);
	return n;
}

int
klog_client_write(klog_client_t *c, klog_err_t *err)
{
	ssize_t n;

	if (c->out.failed)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	while (c->out_pos < c->out.len) {
		if ((n = send_some(c, c->out.data + c->out_pos,
		    c->out.len - c->out_pos, 0, err)) < 0)
			return (int)n;
		if (n == 0)
			return 0;
		c->out_pos += (size_t)n;
	}
	klog_buf_reset(&c->out);
	c->out_pos = 0;
	return 0;
}

/*
 * TLS writes one buffer: the iovecs' first GATHER_MAX bytes are copied
 * into one.  After a write that waited, the caller passes the same bytes
 * again (it advances only by what was written), and so this gathers the
 * same first bytes, as OpenSSL asks of a write tried again.
 */
static int
writev_tls(klog_client_t *c, const struct iovec *iov, int n,
    size_t *written, klog_err_t *err)
{
	size_t len = 0, k;
	ssize_t w;

	if (n == 1) {
		w = send_some(c, iov[0].iov_base, iov[0].iov_len, 0, err);
		goto out;
	}
	if (c->gather == NULL && (c->gather = malloc(GATHER_MAX)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	for (int i = 0; i < n && len < GATHER_MAX; i++) {
		k = iov[i].iov_len < GATHER_MAX - len ? iov[i].iov_len :
		    GATHER_MAX - len;
		memcpy(c->gather + len, iov[i].iov_base, k);
		len += k;
	}
	w = send_some(c, c->gather, len, 0, err);
out:
	if (w < 0)
		return (int)w;
	*written = (size_t)w;
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
	if (c->ssl != NULL)
		return writev_tls(c, iov, n, written, err);
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

/* One read of up to room bytes: the count, 0 when nothing is there
 * now (over TLS: no whole record), or an error. */
static ssize_t
read_some(klog_client_t *c, void *buf, size_t room, klog_err_t *err)
{
	ssize_t n;
	int want;

	if (c->ssl != NULL) {
		if ((n = klog_tls_read(c->ssl, buf, room, &want, err)) > 0)
			return n;
		if (n == -1)
			return 0;
		if (n == 0 || err->code == -KLOG_ECLOSED)
			return klog_err_set(err, -KLOG_ECLOSED, "%s: the broker "
			    "closed the connection", c->name);
		return tls_failed(c, err->code, err);
	}
	do
		n = read(c->fd, buf, room);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n < 0)
		return sock_error(c, errno, err);
	if (n == 0)
		return klog_err_set(err, -KLOG_ECLOSED,
		    "%s: the broker closed the connection", c->name);
	return n;
}

int
klog_client_read(klog_client_t *c, klog_err_t *err)
{
	ssize_t n;
	size_t room;
	int got = 0;

	for (;;) {
		if (make_room(c) < 0)
			return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		room = c->in.cap - c->in.len;
		/* An end or an error after bytes is told at the next call,
		 * once the caller took the responses those bytes hold (a
		 * refusal and the close that follows it). */
		if ((n = read_some(c, c->in.data + c->in.len, room, err)) <= 0)
			return got ? 0 : (int)n;
		got = 1;
		c->in.len += (size_t)n;
		/* A short read emptied the socket; over TLS it emptied one
		 * record, and the next may be decrypted already, where poll
		 * cannot see it: read on until OpenSSL wants the socket. */
		if ((size_t)n < room && c->ssl == NULL)
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

static int
query_offsets(klog_client_t *c, int at, const char *topic, int32_t part,
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
	if ((rc = at ? klog_proto_encode_offsets_at(&c->out, id, &q, 1) :
	    klog_proto_encode_offsets(&c->out, id, &q, 1)) < 0)
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
klog_client_query_offsets(klog_client_t *c, const char *topic, int32_t part,
    int64_t time, int max, int timeout_ms, const char *what, int64_t *offsets,
    int *n, klog_err_t *err)
{
	return query_offsets(c, 0, topic, part, time, max, timeout_ms, what,
	    offsets, n, err);
}

int
klog_client_query_offset(klog_client_t *c, const char *topic, int32_t part,
    int64_t time, int timeout_ms, const char *what, int64_t *offset,
    klog_err_t *err)
{
	int n, rc;

	/* A time: the first record at or after it, asked at version 2 of
	 * a broker that knows it, and as before of one that does not. */
	if (time >= 0 && !c->offsets_v1) {
		rc = query_offsets(c, 1, topic, part, time, 1, timeout_ms,
		    what, offset, &n, err);
		if (rc != -KLOG_EUNSUPPORTED)
			return rc;
		c->offsets_v1 = 1;
	}
	return query_offsets(c, 0, topic, part, time, 1, timeout_ms, what,
	    offset, &n, err);
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

int
klog_client_init_producer(klog_client_t *c, int timeout_ms,
    klog_producer_id_t *id, int16_t *error, klog_err_t *err)
{
	const uint8_t *body;
	size_t len;
	int32_t rid = klog_client_next_id(c);
	int rc;

	if ((rc = klog_proto_encode_init_producer(&c->out, rid, id)) < 0)
		return klog_err_set(err, rc, "%s: INIT_PRODUCER request: %s",
		    c->name, klog_strerror(rc));
	if ((rc = klog_client_call(c, rid, timeout_ms, error, &body, &len,
	    err)) < 0)
		return rc;
	/* An old broker's UNKNOWN_API has no body. */
	if (*error != KLOG_WIRE_NONE)
		return 0;
	if (klog_proto_decode_init_producer_resp(body, len, id) < 0 ||
	    id->producer_id < 0)
		return klog_err_set(err, -KLOG_EPROTO, "%s: malformed "
		    "INIT_PRODUCER response", c->name);
	return 0;
}
