/*
 * Reading file ranges into the page cache on a thread of their own.
 *
 * The broker's event loop sends log bytes with sendfile(2), which reads
 * from the disk, blocking the loop and every other client, when the bytes
 * are not in the page cache (a consumer catching up on old segments).  The
 * loop hands such a range here instead and goes on; the worker reads it
 * into the cache and reports the caller's token back, after which
 * sendfile finds the bytes in memory.
 */
#ifndef KLOG_PREFETCH_H
#define KLOG_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct klog_prefetch klog_prefetch_t;

/*
 * Start the worker.  notify(arg) is called on the worker's thread after
 * each range is read (e.g. to wake an event loop).  rate: bytes a second
 * the worker reads at most until a second after the last
 * klog_prefetch_writing(), so that a consumer catching up on old segments
 * leaves the disk to the flushes of new data; 0 for no cap.  On success
 * *out is the caller's: klog_prefetch_free().  -KLOG_ENOMEM, or -KLOG_EIO
 * if the thread cannot start.
 */
int klog_prefetch_new(void (*notify)(void *arg), void *arg, uint64_t rate,
    klog_prefetch_t **out);

/* Writes are going on (any thread may call it, often). */
void klog_prefetch_writing(klog_prefetch_t *p);

/* Stop the worker (after the range it is reading) and free everything;
 * queued ranges are dropped unread. */
void klog_prefetch_free(klog_prefetch_t *p);

/*
 * Queue fd's bytes [pos, pos + len) to be read; the descriptor is
 * duplicated, so the caller may close its own at once.  -KLOG_ENOMEM, or
 * -KLOG_EIO if it cannot be duplicated.
 */
int klog_prefetch_submit(klog_prefetch_t *p, int fd, int64_t pos, size_t len,
    uint64_t token);

/* Take up to max tokens of ranges read since the last call (a read that
 * failed counts as done: the send will report the error). */
size_t klog_prefetch_take(klog_prefetch_t *p, uint64_t *tokens, size_t max);

#endif
