/*
 * A mirror's bookmark (klog-produce --source-offset-file): where the
 * mirror's source is read up to, kept in an offset file (offsetfile.h)
 * that klog-consume --offsets-from starts from.
 *
 * Each record sent on is noted with its send number and its source
 * position (topic, partition, next offset, from its -J envelope); the
 * producer's requests, as they are done, tell which send numbers the
 * destination acknowledged (klog_producer_config_t's done); a settle
 * writes the positions of the records up to the first number not
 * acknowledged, so the file never moves past what the destination
 * holds.  A request refused holds it there for good.  A settle reads the file
 * again and changes only the partitions it moved, so mirrors of one
 * consumer group can share a file: two saves that race lose at most one's
 * move, which only sends the next run back a little (at least once).
 */
#ifndef KLOG_BOOKMARK_H
#define KLOG_BOOKMARK_H

#include <stdint.h>

#include "klog/base/error.h"

typedef struct klog_bookmark klog_bookmark_t;

/* The file must be readable (or missing); *out is the caller's:
 * klog_bookmark_close(). */
int klog_bookmark_open(const char *path, klog_bookmark_t **out,
    klog_err_t *err);
/* seq grows from note to note; all of one topic, else -KLOG_EINVAL. */
int klog_bookmark_note(klog_bookmark_t *b, uint64_t seq, const char *topic,
    int32_t partition, int64_t offset, klog_err_t *err);
/* Records [first, first + records) done: acknowledged (ok) or never to
 * be.  0, or -KLOG_ENOMEM. */
int klog_bookmark_done(klog_bookmark_t *b, uint64_t first, uint32_t records,
    int ok);
/* The last record number the destination holds with every one before
 * it acknowledged, below the first never to be (0: none yet). */
uint64_t klog_bookmark_upto(const klog_bookmark_t *b);
/*
 * Save the positions of the records numbered up to upto (at most
 * klog_bookmark_upto()) and, when prefix is not NULL, the file's notes
 * (offsetfile.h) that start with prefix replaced by notes' lines, in one
 * save; only if a position moved or the notes differ from those this
 * bookmark saved last.  0, or klog_offsetfile_load() and _save() errors
 * (nothing is taken off then; a later settle tries again).
 */
int klog_bookmark_settle(klog_bookmark_t *b, uint64_t upto,
    const char *prefix, const char *notes, klog_err_t *err);
void klog_bookmark_close(klog_bookmark_t *b);

#endif
