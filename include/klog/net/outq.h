/*
 * A connection's output queue: responses in request order, made of bytes
 * (encoded into one growing buffer), file ranges (log slices, sent with
 * sendfile(2) so message bytes never pass through user space) and holds
 * (a response not ready yet, which later responses queue behind).
 *
 *   chunks:  | BYTES 38 | FILE 4096 | BYTES 44 | HOLD -> [BYTES 30] | BYTES 22 |
 *   buf:     [38 bytes][44 bytes][22 bytes]      (in order, sent from rpos)
 *
 * Encoders append to klog_outq_buf(); the bytes become a chunk at the next
 * klog_outq_file(), klog_outq_hold() or klog_outq_write(), merging with the
 * previous chunk when that one is bytes too.  Holds do not nest.
 */
#ifndef KLOG_OUTQ_H
#define KLOG_OUTQ_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/log.h"

struct klog_outq_chunk;

/* Bytes [pos, end) of the file open as fd. */
typedef struct klog_outq_range {
	int fd;
	int64_t pos, end;
} klog_outq_range_t;

typedef struct klog_outq {
	klog_buf_t buf;          /* encoded bytes; [rpos, len) unsent */
	size_t rpos;
	size_t accounted;        /* buf bytes already in a chunk */
	struct klog_outq_chunk *chunks;  /* ring */
	size_t head, n, cap;
	uint64_t queued;         /* unsent bytes and file bytes (not holds') */
	size_t holds;            /* hold chunks queued */
	/* Probing (see KLOG_OUTQ_COLD), for this queue and its holds' (whose
	 * own fields are unused). */
	int probe;               /* set by the owner */
	int probe_by_reading;    /* cachestat(2) is missing here */
	klog_outq_range_t warm;  /* probed, or read in: sent without a probe */
	klog_outq_range_t cold;  /* what KLOG_OUTQ_COLD found missing */
	/* Over TLS: file bytes read, not yet taken by TLS (klog_outq_write_tls). */
	uint8_t *tls_buf;
	size_t tls_off, tls_len;
} klog_outq_t;

/*
 * A response that will be ready later.  Its owner embeds it, fills q and
 * sets ready; done(h) is called exactly once when the hold leaves the queue
 * (fully written, or the queue was freed), after which the queue never
 * touches it again: the owner may free it then.
 */
typedef struct klog_outq_hold klog_outq_hold_t;
struct klog_outq_hold {
	klog_outq_t q;
	int ready;
	void (*done)(klog_outq_hold_t *h);
};

enum klog_outq_status {
	KLOG_OUTQ_EMPTY = 0,     /* everything was written */
	KLOG_OUTQ_BLOCKED = 1,   /* the socket is full: wait until writable */
	KLOG_OUTQ_WAITING = 2,   /* the head is a hold that is not ready */
	KLOG_OUTQ_COLD = 3,      /* the next file bytes, q->cold, are not in
	                            the page cache (only with q->probe) */
};

void klog_outq_init(klog_outq_t *q);
/* Release every slice, call done() on every hold, free the memory. */
void klog_outq_free(klog_outq_t *q);

/* Where to encode the next bytes (klog_buf_* calls; errors are sticky and
 * reported by the next klog_outq_* call as -KLOG_ENOMEM). */
static inline klog_buf_t *
klog_outq_buf(klog_outq_t *q)
{
	return &q->buf;
}

/* Queue slice->len bytes of a log slice; the queue takes the slice (it
 * releases it once sent, or at free), even on error.  A len of 0 is
 * released at once. */
int klog_outq_file(klog_outq_t *q, klog_log_slice_t *slice);

/* Queue a hold; h stays the caller's memory until done(h). */
int klog_outq_hold(klog_outq_t *q, klog_outq_hold_t *h);

/* Whether nothing is queued. */
static inline int
klog_outq_empty(const klog_outq_t *q)
{
	return q->n == 0 && q->accounted == q->buf.len;
}

/*
 * Send as much as the socket takes, in order: bytes with send(2)
 * (MSG_NOSIGNAL, MSG_MORE when a file follows), files with sendfile(2).
 * With q->probe set, file bytes are sent KLOG_OUTQ_PROBE_SPAN at a time,
 * each span first probed for the page cache (cachestat(2) of its pages and
 * a one-byte RWF_NOWAIT read of the last, or such reads at either end on
 * kernels without cachestat); a span
 * that is not all there stops the write with
 * KLOG_OUTQ_COLD, so that the caller can read it in elsewhere
 * (prefetch.h) and then call klog_outq_warmed() and write again, rather
 * than block in sendfile on the disk.
 * Returns a klog_outq_status, or -KLOG_ECLOSED (the peer went away),
 * -KLOG_EIO (a file was shorter than its slice, or another error),
 * -KLOG_ENOMEM (an encoder's allocation failed).  sendfile(2) can raise
 * SIGPIPE: the process must ignore it.
 */
int klog_outq_write(klog_outq_t *q, int fd, klog_err_t *err);

#define KLOG_OUTQ_PROBE_SPAN ((size_t)512 << 10)

/*
 * The same over TLS (tls.h): bytes go to SSL_write; file bytes, with no
 * kTLS, are read (pread, from pages the probe found cached) 16 KiB at a
 * time into a buffer the queue keeps until TLS has taken them, then
 * encrypted.  KLOG_OUTQ_BLOCKED also when TLS waits to read.
 */
int klog_outq_write_tls(klog_outq_t *q, SSL *ssl, klog_err_t *err);

/* q->cold has been read in: send it without probing again. */
void klog_outq_warmed(klog_outq_t *q);

#endif
