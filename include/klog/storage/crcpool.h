/*
 * CRC checks of message sets on several cores: a fetched set, or the sets
 * of the produce requests a broker read at once.
 *
 * A reader that checks every CRC is bound by zlib's crc32(), about 1 GB/s
 * a core on 200-byte messages, below what one fetch connection delivers;
 * a broker's event loop spent 44% of its time in it under one producer.
 * klog_crcpool_crcs() cuts a large set at entry boundaries and checks the
 * pieces at once, on the caller's thread and on the workers; the caller
 * then iterates with KLOG_ITER_OUTER_CHECKED (format.h), which trusts the
 * top-level CRCs and still checks the messages inside gzip wrappers.
 *
 * One caller at a time per klog_crcpool_t.
 */
#ifndef KLOG_CRCPOOL_H
#define KLOG_CRCPOOL_H

#include <stddef.h>
#include <sys/uio.h>

typedef struct klog_crcpool klog_crcpool_t;

/* Sets smaller than this are checked on the caller's thread alone. */
#define KLOG_CRCPOOL_MIN_SPLIT ((size_t)256 << 10)

/*
 * A verifier with workers threads besides the caller's (0: none, every
 * check on the caller's thread).  On success *out is the caller's:
 * klog_crcpool_free().  -KLOG_ENOMEM, or -KLOG_EIO if a thread cannot start.
 */
int klog_crcpool_new(int workers, klog_crcpool_t **out);
void klog_crcpool_free(klog_crcpool_t *v);

/*
 * Check the CRC of each whole top-level entry of set[0..len), up to the
 * first one that is malformed or cut (which the iterator then reports).
 * 0 if every one matches; 1 if one does not: iterate without
 * KLOG_ITER_OUTER_CHECKED to find it and report it at its offset.  v may
 * be NULL (the caller's thread alone).
 */
int klog_crcpool_crcs(klog_crcpool_t *v, const void *set, size_t len);

/*
 * The same in two halves, so that the caller can do other work (receive
 * the next fetch) while the workers check: start hands the set to them
 * and returns at once; finish checks what they have not taken yet, waits
 * for the rest and returns as klog_crcpool_crcs() does.  set must stay
 * valid, and unchanged, until finish; one set at a time, each finished
 * once.  v may not be NULL here.
 */
void klog_crcpool_start(klog_crcpool_t *v, const void *set, size_t len);
int klog_crcpool_finish(klog_crcpool_t *v);
/*
 * klog_crcpool_crcs() over n sets at once, as if they were one: pieces
 * span small sets, so a broker checks the sets of many small produce
 * requests read at once on several cores.  The sets are shared if they
 * come to KLOG_CRCPOOL_MIN_SPLIT together.  0 if every whole entry of
 * every set matches, 1 if one does not.  v may be NULL.
 */
int klog_crcpool_sets(klog_crcpool_t *v, const struct iovec *sets, size_t n);

#endif
