/*
 * Connections and listeners; see conn.h.
 *
 * Reads go into one shared buffer: a connection keeps only the unprocessed
 * tail of a read, small tails going back through the shared buffer with
 * the next read, so idle connections own no read buffer at all.  A large
 * frame grows the connection's own buffer up to the frame's size.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/error.h"
#include "klog/net/conn.h"
#include "klog/net/connaddr.h"
#include "klog/net/connauth.h"
#include "klog/net/socket.h"
#include "klog/net/tls.h"
#include "klog/storage/format.h"

#define READ_CHUNK ((size_t)1 << 20)  /* one read(2) into the shared buffer */
#define COPY_MAX ((size_t)16 << 10)     /* leftovers this small go back through
                                           the shared buffer */
#define MAX_HOLDS 1024                  /* pending responses per connection */
#define ACCEPT_BATCH 64
#define ACCEPT_PAUSE_MS 100
#define SWEEP_MS 1000                   /* idle and request timeouts */
#define TLS_HANDSHAKE_MS 10000          /* a TLS client silent this long
                                           before its handshake is done */
#define AUTH_MS 10000                   /* and a SASL client not
                                           authenticated this long */

struct listener {
	klog_conns_t *cs;
	int fd;
	const klog_conn_front_t *front;
	void *arg;
	klog_tls_t *tls;           /* NULL: plaintext */
	int sasl;                  /* enum klog_conn_sasl */
	klog_timer_t pause;        /* accept paused: out of descriptors */
	struct listener *next;
};

struct klog_conn {
	klog_conns_t *cs;
	const klog_conn_front_t *front;
	void *front_arg;
	int fd;
	SSL *ssl;                  /* TLS over fd, or NULL */
	int tls_read_wants_write;  /* the handshake or a read waits to send */
	int tls_unread;            /* resumed with plaintext TLS holds: read
	                              it before the loop sleeps */
	int tls_named;             /* its certificate named the principal */
	klog_connauth_t auth;
	int linger;                /* closing when deadline fires, not when
	                              written (klog_conn_linger()) */
	int64_t accepted_ms;
	uint8_t *rbuf;             /* unprocessed input */
	size_t rlen, rcap;
	klog_outq_t out;
	int paused;                /* output over the limit: not reading */
	int closing;               /* protocol error: write what is queued,
	                              then close */
	int eof;                   /* peer shut its side */
	int in_writeq;
	int ended;                 /* klog_conn_end(): closing, quietly */
	klog_timer_t deadline;     /* the front end's deadline_ms */
	int64_t last_read_ms;      /* the last byte in */
	int64_t last_active_ms;    /* the last byte in or out */
	klog_connaddr_t *addr;     /* its client address's count, or NULL */
	uint64_t id;               /* the prefetch token */
	int prefetching;           /* out.cold is being read in */
	klog_conn_t *prev, *next;            /* cs->conns */
	klog_conn_t *pf_prev, *pf_next;      /* cs->prefetching */
	klog_conn_t *wq_prev, *wq_next;      /* cs->writeq */
};

struct klog_conns {
	klog_conns_config_t cfg;
	klog_loop_t *loop;
	klog_prefetch_t *pf;
	struct listener *listeners;
	klog_conn_t *conns;
	size_t nconns;
	klog_conn_t *writeq;
	klog_conn_t *prefetching;  /* conns waiting for pf */
	uint64_t next_id;
	uint8_t *rd;               /* the shared read buffer */
	int stopping;
	int64_t refuse_logged_ms;
	uint64_t refused;
	uint64_t cold_bytes;
	int64_t bad_logged_ms;
	uint64_t bad_suppressed;
	size_t held;               /* bytes of unprocessed input, all conns */
	klog_timer_t sweep;
	klog_connaddrs_t addrs;
	int64_t limit_logged_ms;   /* the last line about a limit */
};

static int conn_write(klog_conn_t *c);

/* ---- output limits ---- */

/* Output not yet written, whether or not it is in a chunk yet. */
static uint64_t
conn_queued(const klog_conn_t *c)
{
	return c->out.queued + (c->out.buf.len - c->out.accounted);
}

static int
conn_over(const klog_conn_t *c)
{
	return conn_queued(c) > c->cs->cfg.out_limit ||
	    c->out.holds >= MAX_HOLDS;
}

/* Low-water mark: resume reading once half drained. */
static int
conn_under(const klog_conn_t *c)
{
	return conn_queued(c) <= c->cs->cfg.out_limit / 2 &&
	    c->out.holds < MAX_HOLDS / 2;
}

size_t
klog_conn_frame_be32(void *arg, const uint8_t *data, size_t len)
{
	(void)arg;
	(void)len;
	return 4 + (size_t)klog_be32(data);
}

int
klog_conn_stalled(const klog_conn_t *c)
{
	return c->paused || c->closing;
}

void
klog_conn_answered(klog_conn_t *c)
{
	if (conn_over(c))
		c->paused = 1;
}

klog_outq_t *
klog_conn_out(klog_conn_t *c)
{
	return &c->out;
}

/* ---- cold file ranges ---- */

static void
pf_unlink(klog_conn_t *c)
{
	klog_conns_t *cs = c->cs;

	if (c->pf_prev != NULL)
		c->pf_prev->pf_next = c->pf_next;
	else
		cs->prefetching = c->pf_next;
	if (c->pf_next != NULL)
		c->pf_next->pf_prev = c->pf_prev;
	c->pf_prev = c->pf_next = NULL;
	c->prefetching = 0;
}

/*
 * The next bytes c sends are not in the page cache: have them read in
 * rather than block the loop in sendfile.  0 when queued; -1 when they
 * could not be (no memory, no descriptor), and then they are sent as they
 * are, from the disk.
 */
static int
conn_prefetch(klog_conn_t *c)
{
	klog_conns_t *cs = c->cs;
	klog_outq_range_t *r = &c->out.cold;

	if (cs->pf == NULL || klog_prefetch_submit(cs->pf, r->fd, r->pos,
	    (size_t)(r->end - r->pos), c->id) < 0) {
		klog_outq_warmed(&c->out);
		return -1;
	}
	cs->cold_bytes += (uint64_t)(r->end - r->pos);
	c->prefetching = 1;
	c->pf_prev = NULL;
	c->pf_next = cs->prefetching;
	if (cs->prefetching != NULL)
		cs->prefetching->pf_prev = c;
	cs->prefetching = c;
	return 0;
}

/* Ranges read in: their connections send again.  A token whose
 * connection closed meanwhile matches nothing. */
void
klog_conns_on_wake(klog_conns_t *cs)
{
	uint64_t tokens[64];
	klog_conn_t *c;
	size_t n;

	if (cs->pf == NULL)
		return;
	while ((n = klog_prefetch_take(cs->pf, tokens, 64)) > 0)
		for (size_t i = 0; i < n; i++) {
			for (c = cs->prefetching; c != NULL; c = c->pf_next)
				if (c->id == tokens[i])
					break;
			if (c == NULL)
				continue;
			pf_unlink(c);
			klog_outq_warmed(&c->out);
			conn_write(c);
		}
}

/* A limit turned a client away: one line a second at most. */
static void
limit_say(klog_conns_t *cs, const char *what)
{
	int64_t now = klog_loop_now_ms();

	cs->refused++;
	if (now - cs->limit_logged_ms < 1000)
		return;
	cs->limit_logged_ms = now;
	klog_logger_say(&cs->cfg.log, KLOG_LEVEL_WARN, "%s", what);
}

/* ---- connections ---- */

static void
conn_close(klog_conn_t *c, int level, const char *why)
{
	klog_conns_t *cs = c->cs;
	char peer[96];

	if (klog_logger_wants(&cs->cfg.log, level))
		klog_logger_say(&cs->cfg.log, level, "%s: closing: %s",
		    klog_socket_peer_name(c->fd, peer, sizeof(peer)), why);
	klog_loop_watch(cs->loop, c->fd, 0, NULL, NULL);
	klog_loop_timer_stop(cs->loop, &c->deadline);
	klog_tls_close(c->ssl);
	close(c->fd);
	klog_connauth_clear(&c->auth);
	if (c->prefetching)
		pf_unlink(c);
	if (c->in_writeq) {
		if (c->wq_prev != NULL)
			c->wq_prev->wq_next = c->wq_next;
		else
			cs->writeq = c->wq_next;
		if (c->wq_next != NULL)
			c->wq_next->wq_prev = c->wq_prev;
	}
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		cs->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	cs->nconns--;
	cs->held -= c->rlen;
	klog_connaddr_drop(&cs->addrs, c->addr);
	klog_outq_free(&c->out);
	free(c->rbuf);
	free(c);
}

void
klog_conn_want_write(klog_conn_t *c)
{
	klog_conns_t *cs = c->cs;

	if (c->in_writeq)
		return;
	c->in_writeq = 1;
	c->wq_prev = NULL;
	c->wq_next = cs->writeq;
	if (cs->writeq != NULL)
		cs->writeq->wq_prev = c;
	cs->writeq = c;
}

void
klog_conn_refuse(klog_conn_t *c, const char *why)
{
	klog_conns_t *cs = c->cs;
	int64_t now = klog_loop_now_ms();
	char peer[96];

	c->closing = 1;
	/* A flood of bad clients must not flood the log: one line a second. */
	if (now - cs->bad_logged_ms < 1000) {
		cs->bad_suppressed++;
		return;
	}
	cs->bad_logged_ms = now;
	if (cs->bad_suppressed > 0)
		klog_logger_say(&cs->cfg.log, KLOG_LEVEL_WARN, "%s: %s (and "
		    "%llu more bad requests not logged)",
		    klog_socket_peer_name(c->fd, peer, sizeof(peer)), why,
		    (unsigned long long)cs->bad_suppressed);
	else
		klog_logger_say(&cs->cfg.log, KLOG_LEVEL_WARN, "%s: %s",
		    klog_socket_peer_name(c->fd, peer, sizeof(peer)), why);
	cs->bad_suppressed = 0;
}

klog_connauth_t *
klog_conn_auth(klog_conn_t *c)
{
	return &c->auth;
}

void
klog_conn_linger(klog_conn_t *c, int64_t ms)
{
	c->closing = 1;
	c->ended = 1;
	c->linger = 1;
	klog_loop_timer_stop(c->cs->loop, &c->deadline);
	if (klog_loop_timer_start(c->cs->loop, &c->deadline, ms, 0) < 0)
		c->linger = 0;
}

void
klog_conn_end(klog_conn_t *c)
{
	c->closing = 1;
	c->ended = 1;
}

static size_t
conn_process(klog_conn_t *c, const uint8_t *data, size_t len)
{
	return c->front->process(c->front_arg, c, data, len);
}

/* Keep the unprocessed tail of a read for the next one. */
static int
conn_keep(klog_conn_t *c, const uint8_t *data, size_t left, int shared)
{
	size_t cap;
	uint8_t *p;

	if (!shared) {
		memmove(c->rbuf, data, left);
	} else if (left > 0) {
		if (left > c->rcap) {
			cap = left < 4096 ? 4096 : left;
			if ((p = realloc(c->rbuf, cap)) == NULL)
				return -KLOG_ENOMEM;
			c->rbuf = p;
			c->rcap = cap;
		}
		memcpy(c->rbuf, data, left);
	}
	c->cs->held += left;
	c->cs->held -= c->rlen;
	c->rlen = left;
	if (left == 0 && c->rcap > COPY_MAX) {
		free(c->rbuf);
		c->rbuf = NULL;
		c->rcap = 0;
	} else if (left <= COPY_MAX && c->rcap > COPY_MAX) {
		/* A big frame or a paused backlog is done: give the room back
		 * (shrinking cannot fail in a way that loses the bytes). */
		if ((p = realloc(c->rbuf, COPY_MAX)) != NULL) {
			c->rbuf = p;
			c->rcap = COPY_MAX;
		}
	}
	return 0;
}

/*
 * Room to read the rest of a large frame into the connection's own buffer:
 * it grows geometrically, but never past the frame (whose size the front
 * end checked against its limit when its first bytes came in).
 */
static int
conn_room(klog_conn_t *c)
{
	size_t total = c->front->frame_size(c->front_arg, c->rbuf, c->rlen);
	size_t want;
	uint8_t *p;

	want = c->rcap * 2 > c->rlen + READ_CHUNK ? c->rcap * 2 :
	    c->rlen + READ_CHUNK;
	if (want > total)
		want = total > c->rlen ? total : c->rlen + READ_CHUNK;
	if (want <= c->rcap)
		return 0;
	if ((p = realloc(c->rbuf, want)) == NULL)
		return -KLOG_ENOMEM;
	c->rbuf = p;
	c->rcap = want;
	return 0;
}

/* The handshake is done: a verified client certificate names the
 * principal before the first request is seen. */
static int
conn_name_peer(klog_conn_t *c)
{
	char principal[1200];

	c->tls_named = 1;
	if (klog_tls_principal(c->ssl, principal, sizeof(principal)) < 0) {
		conn_close(c, KLOG_LEVEL_INFO, "a client certificate subject "
		    "too long to be a principal");
		return -1;
	}
	if (strcmp(principal, KLOG_PRINCIPAL_ANONYMOUS) != 0 &&
	    klog_connauth_certificate(&c->auth, principal) < 0) {
		conn_close(c, KLOG_LEVEL_WARN, "out of memory");
		return -1;
	}
	return 0;
}

/*
 * Read into buf: the count, 0 at the peer's end, -1 if nothing can be read
 * now, -2 once c is closed.  Over TLS the handshake runs here first, and
 * may have to wait for the socket to be writable.
 */
static ssize_t
conn_recv(klog_conn_t *c, uint8_t *buf, size_t len)
{
	klog_err_t err;
	ssize_t n;
	int want;

	if (c->ssl != NULL) {
		/* A call gives one record (16 KiB): read on while there is
		 * room, so that a large request is whole in one pass rather
		 * than kept and copied again after each record. */
		size_t got = 0;

		while ((n = klog_tls_read(c->ssl, buf + got, len - got, &want,
		    &err)) > 0 && (got += (size_t)n) < len)
			;
		c->tls_read_wants_write = n == -1 &&
		    want == KLOG_TLS_WANT_WRITE;
		/* An end or error after bytes is met again at the next call. */
		if (got > 0)
			return !c->tls_named && conn_name_peer(c) < 0 ? -2 :
			    (ssize_t)got;
		if (n == -2)
			conn_close(c, KLOG_LEVEL_DEBUG, klog_err_text(&err,
			    -KLOG_EPROTO));
		return n;
	}
	while ((n = read(c->fd, buf, len)) < 0 && errno == EINTR)
		;
	if (n >= 0)
		return n;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return -1;
	conn_close(c, KLOG_LEVEL_DEBUG, strerror(errno));
	return -2;
}

/* One read; 1 if c is still open and TLS holds more plaintext already
 * read off the socket, which epoll will never say is there. */
static int
conn_read_once(klog_conn_t *c)
{
	klog_conns_t *cs = c->cs;
	uint8_t *data;
	size_t have, cap, used;
	int shared = c->rlen <= COPY_MAX;
	ssize_t n;

	if (shared) {
		/* Small leftovers ride along in the shared buffer. */
		data = cs->rd;
		if (c->rlen > 0)
			memcpy(data, c->rbuf, c->rlen);
		cap = READ_CHUNK;
	} else {
		if (conn_room(c) < 0) {
			conn_close(c, KLOG_LEVEL_WARN, "out of memory");
			return 0;
		}
		data = c->rbuf;
		cap = c->rcap;
	}
	have = c->rlen;
	if ((n = conn_recv(c, data + have, cap - have)) < 0) {
		/* conn_write() sets the mask, writable included. */
		if (n == -1 && c->tls_read_wants_write)
			conn_write(c);
		return 0;
	}
	if (n == 0) {
		/* Half-closed: answer what was asked, then close. */
		c->eof = 1;
		cs->held -= c->rlen;
		c->rlen = 0;
		conn_write(c);
		return 0;
	}
	c->last_read_ms = c->last_active_ms = klog_loop_now_ms();
	have += (size_t)n;
	used = conn_process(c, data, have);
	if (conn_keep(c, data + used, have - used, shared) < 0) {
		conn_close(c, KLOG_LEVEL_WARN, "out of memory");
		return 0;
	}
	/* Requests arriving slowly must not hold the broker's memory
	 * without bound: the one that reads past the budget goes. */
	if (cs->cfg.pending_limit > 0 && cs->held > cs->cfg.pending_limit &&
	    c->rlen > 0) {
		limit_say(cs, "closing a connection: unfinished requests over "
		    "--max-pending-bytes");
		conn_close(c, KLOG_LEVEL_INFO, "unfinished requests over "
		    "--max-pending-bytes");
		return 0;
	}
	if (conn_write(c) < 0)
		return 0;
	return c->ssl != NULL && SSL_has_pending(c->ssl) && !c->paused &&
	    !c->closing && !c->eof;
}

static void
conn_read(klog_conn_t *c)
{
	while (conn_read_once(c))
		;
}

/*
 * Write what can be written; resume reading (and the frames left in the
 * buffer) below the low-water mark; set the interest mask; close when a
 * closing, half-closed or shutting-down connection has nothing left.
 * Returns -1 if c was closed.
 */
static int
conn_write(klog_conn_t *c)
{
	klog_conns_t *cs = c->cs;
	klog_err_t err;
	size_t used;
	int rc, mask = 0;

	for (;;) {
		if (c->prefetching) {
			rc = KLOG_OUTQ_COLD;
			break;
		}
		rc = c->ssl != NULL ? klog_outq_write_tls(&c->out, c->ssl,
		    &err) : klog_outq_write(&c->out, c->fd, &err);
		if (rc < 0) {
			conn_close(c, KLOG_LEVEL_DEBUG, klog_err_text(&err, rc));
			return -1;
		}
		c->last_active_ms = klog_loop_now_ms();
		if (rc == KLOG_OUTQ_COLD) {
			if (conn_prefetch(c) < 0)
				continue;
			break;
		}
		if (!c->paused || c->closing || cs->stopping || !conn_under(c))
			break;
		c->paused = 0;
		/* What TLS decrypted already, epoll cannot announce. */
		if (c->ssl != NULL && SSL_has_pending(c->ssl)) {
			c->tls_unread = 1;
			klog_conn_want_write(c);
		}
		if (c->rlen == 0)
			break;
		used = conn_process(c, c->rbuf, c->rlen);
		conn_keep(c, c->rbuf + used, c->rlen - used, 0);
	}
	if ((rc == KLOG_OUTQ_EMPTY && ((c->closing && !c->linger) || c->eof ||
	    cs->stopping)) || (rc == KLOG_OUTQ_WAITING && c->closing &&
	    !c->linger)) {
		conn_close(c, KLOG_LEVEL_DEBUG, c->ended ? "answered" :
		    c->closing ? "bad request" : c->eof ? "peer closed" :
		    "shutting down");
		return -1;
	}
	if (!c->paused && !c->closing && !c->eof && !cs->stopping)
		mask |= KLOG_LOOP_READABLE;
	if (rc == KLOG_OUTQ_BLOCKED || c->tls_read_wants_write)
		mask |= KLOG_LOOP_WRITABLE;
	if (klog_loop_set_mask(cs->loop, c->fd, mask) < 0) {
		conn_close(c, KLOG_LEVEL_WARN, "epoll_ctl failed");
		return -1;
	}
	return 0;
}

static void
on_conn(klog_loop_t *loop, int fd, void *arg, int mask)
{
	klog_conn_t *c = arg;

	(void)loop;
	(void)fd;
	if ((mask & KLOG_LOOP_READABLE) || c->tls_read_wants_write)
		conn_read(c);
	else
		conn_write(c);
}

static void
on_deadline(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_conn_t *c = arg;

	(void)loop;
	(void)t;
	conn_close(c, KLOG_LEVEL_DEBUG, c->linger ? "refused" :
	    "past the front end's deadline");
}

static void
conn_new(struct listener *l, int fd)
{
	klog_conns_t *cs = l->cs;
	klog_conn_t *c;
	klog_connaddr_t *a = NULL;
	uint8_t key[KLOG_CONNADDR_KEY];
	char host[KLOG_CONNAUTH_HOST_MAX];
	int one = 1, full = 0;

	if (klog_connaddr_key(fd, key, host, sizeof(host)) &&
	    (a = klog_connaddr_take(&cs->addrs, key, cs->cfg.max_per_address,
	    &full)) == NULL && full) {
		close(fd);
		limit_say(cs, "refusing connections from one address "
		    "(--max-connections-per-address)");
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		klog_connaddr_drop(&cs->addrs, a);
		close(fd);
		return;
	}
	c->addr = a;
	c->last_read_ms = c->last_active_ms = klog_loop_now_ms();
	c->cs = cs;
	c->front = l->front;
	c->front_arg = l->arg;
	c->fd = fd;
	c->accepted_ms = c->last_read_ms;
	c->auth.sasl = l->sasl;
	memcpy(c->auth.host, host, sizeof(host));
	if (l->tls != NULL && (c->ssl = klog_tls_accept(l->tls, fd)) == NULL) {
		klog_connaddr_drop(&cs->addrs, a);
		close(fd);
		free(c);
		return;
	}
	c->id = ++cs->next_id;
	klog_outq_init(&c->out);
	c->out.probe = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	klog_timer_init(&c->deadline, on_deadline, c);
	if (klog_loop_watch(cs->loop, fd, KLOG_LOOP_READABLE, on_conn, c) < 0 ||
	    (l->front->deadline_ms > 0 && klog_loop_timer_start(cs->loop,
	    &c->deadline, l->front->deadline_ms, 0) < 0)) {
		klog_loop_watch(cs->loop, fd, 0, NULL, NULL);
		klog_tls_close(c->ssl);
		close(fd);
		klog_connaddr_drop(&cs->addrs, a);
		free(c);
		return;
	}
	c->next = cs->conns;
	if (cs->conns != NULL)
		cs->conns->prev = c;
	cs->conns = c;
	cs->nconns++;
}

/* ---- listeners ---- */

static void on_accept(klog_loop_t *loop, int fd, void *arg, int mask);

static void
accept_resume(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	struct listener *l = arg;

	(void)t;
	if (l->fd >= 0)
		klog_loop_watch(loop, l->fd, KLOG_LOOP_READABLE, on_accept, l);
}

static void
on_accept(klog_loop_t *loop, int lfd, void *arg, int mask)
{
	struct listener *l = arg;
	klog_conns_t *cs = l->cs;
	int64_t now;
	int fd;

	(void)mask;
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/* Out of descriptors or memory: a level-triggered
			 * listener would spin, so stop listening briefly. */
			klog_logger_say(&cs->cfg.log, KLOG_LEVEL_WARN,
			    "accept: %s; pausing", strerror(errno));
			klog_loop_watch(loop, lfd, 0, NULL, NULL);
			klog_loop_timer_start(loop, &l->pause, ACCEPT_PAUSE_MS,
			    0);
			return;
		}
		if (cs->nconns >= (size_t)cs->cfg.max_connections) {
			close(fd);
			cs->refused++;
			now = klog_loop_now_ms();
			if (now - cs->refuse_logged_ms >= 1000) {
				cs->refuse_logged_ms = now;
				klog_logger_say(&cs->cfg.log, KLOG_LEVEL_WARN,
				    "refusing connections: %d open "
				    "(--max-connections)",
				    cs->cfg.max_connections);
			}
			continue;
		}
		conn_new(l, fd);
	}
}

int
klog_conns_listen(klog_conns_t *cs, int fd, const klog_conn_front_t *front,
    void *arg, klog_tls_t *tls, int sasl)
{
	struct listener *l = calloc(1, sizeof(*l));
	int rc;

	if (l == NULL) {
		close(fd);
		return -KLOG_ENOMEM;
	}
	l->cs = cs;
	l->fd = fd;
	l->front = front;
	l->arg = arg;
	l->tls = tls;
	l->sasl = sasl;
	klog_timer_init(&l->pause, accept_resume, l);
	/* Handshakes that stall are swept too. */
	if ((tls != NULL || sasl) && !klog_timer_active(&cs->sweep) &&
	    klog_loop_timer_start(cs->loop, &cs->sweep, SWEEP_MS,
	    SWEEP_MS) < 0)
		return -KLOG_ENOMEM;
	l->next = cs->listeners;
	cs->listeners = l;
	if ((rc = klog_loop_watch(cs->loop, fd, KLOG_LOOP_READABLE, on_accept,
	    l)) < 0)
		return rc;
	return 0;
}

static void
listeners_close(klog_conns_t *cs)
{
	struct listener *l, *next;

	for (l = cs->listeners; l != NULL; l = next) {
		next = l->next;
		klog_loop_timer_stop(cs->loop, &l->pause);
		klog_loop_watch(cs->loop, l->fd, 0, NULL, NULL);
		close(l->fd);
		free(l);
	}
	cs->listeners = NULL;
}

/* ---- the set ---- */

/* Whether c neither waits for a request's rest nor owes an answer. */
static int
conn_idle(const klog_conn_t *c)
{
	return c->rlen == 0 && !c->prefetching && klog_outq_empty(&c->out);
}

/* Close what waited too long: a request that stopped arriving (idle
 * clients hold no memory but a slot, so their bound is longer). */
static void
on_sweep(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_conns_t *cs = arg;
	int64_t now = klog_loop_now_ms();
	klog_conn_t *c, *cn;

	(void)loop;
	(void)t;
	for (c = cs->conns; c != NULL; c = cn) {
		cn = c->next;
		if (c->closing || c->paused)
			continue;
		if (c->ssl != NULL && !klog_tls_established(c->ssl) &&
		    now - c->accepted_ms >= TLS_HANDSHAKE_MS)
			conn_close(c, KLOG_LEVEL_DEBUG, "no TLS handshake in "
			    "time");
		else if (klog_connauth_pending(&c->auth) &&
		    now - c->accepted_ms >= AUTH_MS)
			conn_close(c, KLOG_LEVEL_DEBUG, "not authenticated in "
			    "time");
		else if (cs->cfg.request_timeout_ms > 0 && c->rlen > 0 &&
		    now - c->last_read_ms >= cs->cfg.request_timeout_ms)
			conn_close(c, KLOG_LEVEL_INFO, "a request stopped "
			    "arriving (--request-timeout)");
		else if (cs->cfg.idle_ms > 0 && conn_idle(c) &&
		    now - c->last_active_ms >= cs->cfg.idle_ms)
			conn_close(c, KLOG_LEVEL_DEBUG, "idle "
			    "(--idle-timeout)");
	}
}

int
klog_conns_new(klog_loop_t *loop, klog_prefetch_t *pf,
    const klog_conns_config_t *cfg, klog_conns_t **out)
{
	klog_conns_t *cs = calloc(1, sizeof(*cs));

	*out = NULL;
	if (cs == NULL || (cs->rd = malloc(READ_CHUNK)) == NULL) {
		free(cs);
		return -KLOG_ENOMEM;
	}
	cs->cfg = *cfg;
	cs->loop = loop;
	cs->pf = pf;
	klog_timer_init(&cs->sweep, on_sweep, cs);
	if ((cfg->idle_ms > 0 || cfg->request_timeout_ms > 0) &&
	    klog_loop_timer_start(loop, &cs->sweep, SWEEP_MS, SWEEP_MS) < 0) {
		free(cs->rd);
		free(cs);
		return -KLOG_ENOMEM;
	}
	*out = cs;
	return 0;
}

void
klog_conns_before_sleep(klog_conns_t *cs)
{
	klog_conn_t *c;

	while ((c = cs->writeq) != NULL) {
		cs->writeq = c->wq_next;
		if (cs->writeq != NULL)
			cs->writeq->wq_prev = NULL;
		c->in_writeq = 0;
		if (conn_write(c) == 0 && c->tls_unread) {
			c->tls_unread = 0;
			conn_read(c);
		}
	}
}

void
klog_conns_stop(klog_conns_t *cs)
{
	klog_conn_t *c, *cn;

	cs->stopping = 1;
	listeners_close(cs);
	for (c = cs->conns; c != NULL; c = cn) {
		cn = c->next;
		conn_write(c);
	}
}

size_t
klog_conns_count(const klog_conns_t *cs)
{
	return cs->nconns;
}

void
klog_conns_stats(const klog_conns_t *cs, klog_conns_stats_t *out)
{
	out->open = cs->nconns;
	out->refused = cs->refused;
	out->cold_read_bytes = cs->cold_bytes;
}

void
klog_conns_close_all(klog_conns_t *cs, int level, const char *why)
{
	while (cs->conns != NULL)
		conn_close(cs->conns, level, why);
}

void
klog_conns_free(klog_conns_t *cs, int level, const char *why)
{
	if (cs == NULL)
		return;
	klog_loop_timer_stop(cs->loop, &cs->sweep);
	klog_conns_close_all(cs, level, why);
	listeners_close(cs);
	free(cs->rd);
	free(cs);
}
