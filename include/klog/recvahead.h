/*
 * A thread that receives a connection's next response while the caller
 * works on the last one.
 *
 * A consumer catching up spends its core on three things per fetch:
 * copying the answer out of the socket, checking its CRCs and handing its
 * messages out.  Done in turn on one thread, the broker's sendfile(2) waits
 * while the consumer hands out, and the consumer's core idles while the
 * answer arrives.  With a klog_recvahead_t, the caller sends the next
 * request, keeps the last answer's views in a buffer of its own
 * (klog_client_detach()) and hands the connection to the thread, which
 * reads until the next answer is complete and then calls fn on it (the
 * consumer checks its CRCs there), all while the caller hands out the last
 * one.
 *
 * The connection is the thread's from klog_recvahead_start() until
 * klog_recvahead_done() returns 1: the caller must not touch it meanwhile.
 * One connection at a time.
 */
#ifndef KLOG_RECVAHEAD_H
#define KLOG_RECVAHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "klog/client.h"
#include "klog/error.h"
#include "klog/proto.h"

typedef struct klog_recvahead klog_recvahead_t;

/* Called on the thread with the complete response, not taken: the caller
 * takes it with klog_client_response() once done. */
typedef void (*klog_recvahead_fn)(void *arg, const klog_resp_header_t *h,
    const uint8_t *body, size_t len);

/*
 * A new thread (signals blocked in it, so that they reach the caller's).
 * *out is the caller's: klog_recvahead_free().  -KLOG_ENOMEM, or -KLOG_EIO
 * when the thread or its event descriptors cannot be made.
 */
int klog_recvahead_new(klog_recvahead_fn fn, void *arg,
    klog_recvahead_t **out);

/* Stops what the thread is doing (klog_recvahead_cancel()) and joins it. */
void klog_recvahead_free(klog_recvahead_t *a);

/* Hand c to the thread: it reads until a whole response is buffered. */
void klog_recvahead_start(klog_recvahead_t *a, klog_client_t *c);

/* Readable once the thread is done with its connection (for poll). */
int klog_recvahead_fd(const klog_recvahead_t *a);

/*
 * 1 if the thread is done with the connection, which is the caller's again:
 * *rc is 0 (a response is complete, or the wait was cancelled) or the
 * error klog_client_read() met, with err; 0 if it is still reading.
 */
int klog_recvahead_done(klog_recvahead_t *a, int *rc, klog_err_t *err);

/* Make the thread stop waiting for the rest of the response and wait until
 * it is done; a no-op when it has no connection. */
void klog_recvahead_cancel(klog_recvahead_t *a);

#endif
