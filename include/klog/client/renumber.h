/*
 * Two counts of the same records that part where records are set aside:
 * klog-produce's send numbers against its input numbers (--report) or
 * against a mirror's bookmark numbers (mirror.h).  From number seq on,
 * the other count is seq + delta; a gap is kept where delta grows.
 */
#ifndef KLOG_RENUMBER_H
#define KLOG_RENUMBER_H

#include <stddef.h>
#include <stdint.h>

typedef struct klog_renumber {
	struct klog_renumber_gap *gaps;
	size_t n, cap;             /* cap in bytes (klog_buf_grow) */
} klog_renumber_t;

/* From seq on, the other count is seq + delta (delta never shrinks): 0,
 * or -KLOG_ENOMEM. */
int klog_renumber_from(klog_renumber_t *r, uint64_t seq, uint64_t delta);

/* seq in the other count. */
uint64_t klog_renumber_map(const klog_renumber_t *r, uint64_t seq);

/* The end of the run of numbers from seq, before end, that one delta
 * maps: the next gap's number, or end. */
uint64_t klog_renumber_run_end(const klog_renumber_t *r, uint64_t seq,
    uint64_t end);

void klog_renumber_free(klog_renumber_t *r);

#endif
