/*
 * The output queue: a ring of chunks over one byte buffer.  Bytes are sent
 * from the buffer in order, so a chunk of bytes needs only its length; file
 * chunks carry their slice; holds point at a response finished later.
 */
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/error.h"
#include "klog/net/outq.h"
#include "klog/net/tls.h"
#include "klog/storage/segment.h"

/* Bytes in one page for the fallback probes; a larger real page costs at
 * most an extra probe. */
#define PROBE_PAGE 4096

/* Past this, an emptied buffer is given back instead of kept for reuse. */
#define OUTQ_KEEP_CAP ((size_t)64 << 10)
#define TLS_FILE_CHUNK ((size_t)16 << 10)   /* one TLS record's plaintext */

/* Where a queue is written: a socket, or TLS over it. */
struct sink {
	int fd;
	SSL *ssl;
};

enum { CHUNK_BYTES, CHUNK_FILE, CHUNK_HOLD };

struct klog_outq_chunk {
	int kind;
	size_t len;                  /* bytes left to send (bytes, file) */
	klog_log_slice_t slice;      /* file: file_pos advances as sent */
	klog_outq_hold_t *hold;
};

void
klog_outq_init(klog_outq_t *q)
{
	memset(q, 0, sizeof(*q));
	klog_buf_init(&q->buf);
	q->warm.fd = q->cold.fd = -1;
}

static struct klog_outq_chunk *
chunk_at(klog_outq_t *q, size_t i)
{
	return &q->chunks[(q->head + i) & (q->cap - 1)];
}

static int
push(klog_outq_t *q, struct klog_outq_chunk **out)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 8;
		struct klog_outq_chunk *p = malloc(cap * sizeof(*p));

		if (p == NULL)
			return -KLOG_ENOMEM;
		for (size_t i = 0; i < q->n; i++)
			p[i] = *chunk_at(q, i);
		free(q->chunks);
		q->chunks = p;
		q->cap = cap;
		q->head = 0;
	}
	*out = chunk_at(q, q->n++);
	memset(*out, 0, sizeof(**out));
	return 0;
}

static void
pop(klog_outq_t *q)
{
	q->head = (q->head + 1) & (q->cap - 1);
	q->n--;
}

/* Turn bytes encoded since the last call into a chunk. */
static int
sync_bytes(klog_outq_t *q)
{
	struct klog_outq_chunk *c;
	size_t add;
	int rc;

	if (q->buf.failed)
		return -KLOG_ENOMEM;
	add = q->buf.len - q->accounted;
	if (add == 0)
		return 0;
	if (q->n > 0 && (c = chunk_at(q, q->n - 1))->kind == CHUNK_BYTES) {
		c->len += add;
	} else {
		if ((rc = push(q, &c)) < 0)
			return rc;
		c->kind = CHUNK_BYTES;
		c->len = add;
	}
	q->accounted = q->buf.len;
	q->queued += add;
	return 0;
}

int
klog_outq_file(klog_outq_t *q, klog_log_slice_t *slice)
{
	struct klog_outq_chunk *c;
	int rc;

	if (slice->len == 0) {
		klog_log_slice_release(slice);
		return 0;
	}
	if ((rc = sync_bytes(q)) < 0 || (rc = push(q, &c)) < 0) {
		klog_log_slice_release(slice);
		return rc;
	}
	c->kind = CHUNK_FILE;
	c->len = slice->len;
	c->slice = *slice;
	q->queued += slice->len;
	return 0;
}

int
klog_outq_hold(klog_outq_t *q, klog_outq_hold_t *h)
{
	struct klog_outq_chunk *c;
	int rc;

	if ((rc = sync_bytes(q)) < 0 || (rc = push(q, &c)) < 0)
		return rc;
	c->kind = CHUNK_HOLD;
	c->hold = h;
	q->holds++;
	return 0;
}

static void
chunk_release(klog_outq_t *q, struct klog_outq_chunk *c)
{
	if (c->kind == CHUNK_FILE) {
		klog_log_slice_release(&c->slice);
	} else if (c->kind == CHUNK_HOLD) {
		q->holds--;
		c->hold->done(c->hold);
	}
}

void
klog_outq_free(klog_outq_t *q)
{
	while (q->n > 0) {
		struct klog_outq_chunk c = *chunk_at(q, 0);

		pop(q);
		chunk_release(q, &c);
	}
	free(q->chunks);
	free(q->tls_buf);
	klog_buf_free(&q->buf);
	klog_outq_init(q);
}

/* After the bytes chunk at the head was sent: reuse or give back memory. */
static void
compact(klog_outq_t *q)
{
	if (q->rpos == q->buf.len) {
		if (q->buf.cap > OUTQ_KEEP_CAP)
			klog_buf_free(&q->buf);
		klog_buf_reset(&q->buf);
		q->rpos = q->accounted = 0;
	} else if (q->rpos > OUTQ_KEEP_CAP && q->rpos > q->buf.len / 2) {
		klog_buf_consume(&q->buf, q->rpos);
		q->accounted -= q->rpos;
		q->rpos = 0;
	}
}

static int
send_error(klog_err_t *err, int e)
{
	if (e == EPIPE || e == ECONNRESET)
		return klog_err_set(err, -KLOG_ECLOSED, "peer closed");
	return klog_err_set(err, -KLOG_EIO, "send: %s", strerror(e));
}

/* The code of a failed write (-2 below), as err holds it. */
static int
write_failed(const klog_err_t *err)
{
	return err != NULL && err->code < 0 ? err->code : -KLOG_EIO;
}

/*
 * Write up to len bytes of buf to the sink: the count; -1 when the socket
 * must drain first (over TLS also when a write waits for a TLS read: it
 * is retried when the socket is writable, which the loop sees either
 * way); -2 with err set.
 */
static ssize_t
sink_write(const struct sink *to, const void *buf, size_t len, int more,
    klog_err_t *err)
{
	ssize_t r;
	int want;

	if (to->ssl != NULL)
		return klog_tls_write(to->ssl, buf, len, &want, err);
	while ((r = send(to->fd, buf, len, MSG_NOSIGNAL |
	    (more ? MSG_MORE : 0))) < 0 && errno == EINTR)
		;
	if (r >= 0)
		return r;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return -1;
	send_error(err, errno);
	return -2;
}

static int
write_bytes(klog_outq_t *q, struct klog_outq_chunk *c, int more,
    const struct sink *to, klog_err_t *err)
{
	ssize_t r;

	while (c->len > 0) {
		r = sink_write(to, q->buf.data + q->rpos, c->len, more, err);
		if (r == -1)
			return KLOG_OUTQ_BLOCKED;
		if (r < 0)
			return write_failed(err);
		q->rpos += (size_t)r;
		q->queued -= (uint64_t)r;
		c->len -= (size_t)r;
	}
	return KLOG_OUTQ_EMPTY;
}

/* Whether the byte at pos is in the page cache; 1 where the kernel cannot
 * tell (then sendfile is all there is).  A miss starts a read of that page,
 * and a hit on a page marked for readahead starts that readahead. */
static int
cached_byte(int fd, int64_t pos)
{
	struct iovec v;
	char byte;

	v.iov_base = &byte;
	v.iov_len = 1;
	return preadv2(fd, &v, 1, (off_t)pos, RWF_NOWAIT) >= 0 ||
	    errno != EAGAIN;
}

/*
 * Whether every page of [pos, end) is in the page cache.  cachestat(2)
 * counts them without touching the file, but counts pages still being
 * read in too (another connection's prefetch): a one-byte read of the
 * last one, which would fail rather than wait, says whether the read is
 * done.  Where cachestat is missing (or filtered out), a one-byte read at
 * either end, which may start reads on the loop, stands in.
 */
static int
cached(klog_outq_t *top, int fd, int64_t pos, int64_t end)
{
	int rc;

	if (!top->probe_by_reading) {
		if ((rc = klog_segment_cached(fd, pos, end - pos)) >= 0)
			return rc && cached_byte(fd, end - 1);
		if (errno != ENOSYS && errno != EPERM)
			return 1;
		top->probe_by_reading = 1;
	}
	return cached_byte(fd, pos) && ((end - 1) / PROBE_PAGE ==
	    pos / PROBE_PAGE || cached_byte(fd, end - 1));
}

/* How much of c to send now: all of it without probing, else up to the
 * end of a span known to be in the page cache; 0 with q->cold set if the
 * next span is not. */
static size_t
sendable(klog_outq_t *q, const struct klog_outq_chunk *c)
{
	int64_t pos = c->slice.file_pos, end;
	size_t span;

	if (!q->probe)
		return c->len;
	if (q->warm.fd != c->slice.fd || pos < q->warm.pos ||
	    pos >= q->warm.end) {
		span = c->len < KLOG_OUTQ_PROBE_SPAN ? c->len :
		    KLOG_OUTQ_PROBE_SPAN;
		end = pos + (int64_t)span;
		q->warm = (klog_outq_range_t){ c->slice.fd, pos, end };
		if (!cached(q, c->slice.fd, pos, end)) {
			q->cold = q->warm;
			q->warm.fd = -1;
			return 0;
		}
	}
	end = q->warm.end - pos;
	return (size_t)end < c->len ? (size_t)end : c->len;
}

void
klog_outq_warmed(klog_outq_t *q)
{
	q->warm = q->cold;
	q->cold.fd = -1;
}

/* Send file chunk c of q; top holds the probe state (q itself, or the
 * queue whose hold q is). */
static int
write_file(klog_outq_t *q, klog_outq_t *top, struct klog_outq_chunk *c,
    int fd, klog_err_t *err)
{
	size_t n;
	off_t pos;
	ssize_t r;

	while (c->len > 0) {
		if ((n = sendable(top, c)) == 0)
			return KLOG_OUTQ_COLD;
		pos = (off_t)c->slice.file_pos;
		r = sendfile(fd, c->slice.fd, &pos, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return KLOG_OUTQ_BLOCKED;
			return send_error(err, errno);
		}
		if (r == 0)
			return klog_err_set(err, -KLOG_EIO,
			    "segment shorter than expected at %lld",
			    (long long)c->slice.file_pos);
		c->slice.file_pos += r;
		q->queued -= (uint64_t)r;
		c->len -= (size_t)r;
	}
	return KLOG_OUTQ_EMPTY;
}

/*
 * File chunk c over TLS: there is no kTLS to encrypt what sendfile sends,
 * so its bytes are read (only from pages known to be in the page cache)
 * into top's buffer, one record's worth at a time, and written from
 * there; the buffer keeps what TLS has not taken yet, the bytes at c's
 * position, for the retry TLS requires.
 */
static int
write_file_tls(klog_outq_t *q, klog_outq_t *top, struct klog_outq_chunk *c,
    SSL *ssl, klog_err_t *err)
{
	size_t n;
	ssize_t r;
	int want;

	while (c->len > 0) {
		if (top->tls_off == top->tls_len) {
			if ((n = sendable(top, c)) == 0)
				return KLOG_OUTQ_COLD;
			if (n > TLS_FILE_CHUNK)
				n = TLS_FILE_CHUNK;
			if (top->tls_buf == NULL &&
			    (top->tls_buf = malloc(TLS_FILE_CHUNK)) == NULL)
				return klog_err_set(err, -KLOG_ENOMEM,
				    "out of memory");
			r = pread(c->slice.fd, top->tls_buf, n,
			    (off_t)c->slice.file_pos);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return klog_err_sys(err, "read", NULL);
			if (r == 0)
				return klog_err_set(err, -KLOG_EIO,
				    "segment shorter than expected at %lld",
				    (long long)c->slice.file_pos);
			top->tls_off = 0;
			top->tls_len = (size_t)r;
		}
		r = klog_tls_write(ssl, top->tls_buf + top->tls_off,
		    top->tls_len - top->tls_off, &want, err);
		if (r == -1)
			return KLOG_OUTQ_BLOCKED;
		if (r < 0)
			return write_failed(err);
		top->tls_off += (size_t)r;
		c->slice.file_pos += r;
		q->queued -= (uint64_t)r;
		c->len -= (size_t)r;
	}
	return KLOG_OUTQ_EMPTY;
}

/* Write q, a top-level queue or a hold's, probing with top's state. */
static int
write_queue(klog_outq_t *q, klog_outq_t *top, const struct sink *to,
    klog_err_t *err)
{
	struct klog_outq_chunk *c, done;
	int rc, more;

	if ((rc = sync_bytes(q)) < 0)
		return klog_err_set(err, rc, "out of memory");
	while (q->n > 0) {
		c = chunk_at(q, 0);
		switch (c->kind) {
		case CHUNK_BYTES:
			/* Cork only ahead of a file, which is sent right away. */
			more = q->n > 1 && chunk_at(q, 1)->kind == CHUNK_FILE;
			rc = write_bytes(q, c, more, to, err);
			break;
		case CHUNK_FILE:
			rc = to->ssl != NULL ? write_file_tls(q, top, c, to->ssl,
			    err) : write_file(q, top, c, to->fd, err);
			break;
		default:
			if (!c->hold->ready)
				return KLOG_OUTQ_WAITING;
			rc = write_queue(&c->hold->q, top, to, err);
			break;
		}
		if (rc != KLOG_OUTQ_EMPTY)
			return rc;
		done = *c;
		pop(q);
		/* A released file's descriptor number may come back for
		 * another file. */
		if (done.kind == CHUNK_FILE)
			top->warm.fd = -1;
		if (done.kind == CHUNK_BYTES)
			compact(q);
		else
			chunk_release(q, &done);
	}
	return KLOG_OUTQ_EMPTY;
}

int
klog_outq_write(klog_outq_t *q, int fd, klog_err_t *err)
{
	struct sink to = { fd, NULL };

	return write_queue(q, q, &to, err);
}

int
klog_outq_write_tls(klog_outq_t *q, SSL *ssl, klog_err_t *err)
{
	struct sink to = { -1, ssl };
	int rc = write_queue(q, q, &to, err);

	/* An idle connection keeps no buffer. */
	if (rc == KLOG_OUTQ_EMPTY && q->tls_off == q->tls_len) {
		free(q->tls_buf);
		q->tls_buf = NULL;
		q->tls_off = q->tls_len = 0;
	}
	return rc;
}
