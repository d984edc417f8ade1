/*
 * klog-consume --offset-file: where each partition's reading resumes.
 *
 * A text file, one line per partition, tab-separated, sorted:
 *
 *   # klog-consume offsets: topic, partition, next offset
 *   nginx	0	123456
 *   nginx	1	98765
 *
 * The offset is the next offset of the last message written out (the
 * consumer's position), so a new run starts right after it.  Lines of other
 * topics are kept as they are; '#' lines and blank lines are ignored.  A
 * save writes a temporary file next to it, fsyncs it, renames it over the
 * old one and fsyncs the directory, so a crash leaves the old or the new
 * file, never a mix.
 */
#ifndef KLOG_OFFSETFILE_H
#define KLOG_OFFSETFILE_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/storage/names.h"

typedef struct klog_offsetfile_entry {
	char topic[KLOG_TOPIC_MAX + 1];
	int32_t partition;
	int64_t offset;
} klog_offsetfile_entry_t;

typedef struct klog_offsetfile {
	char *path;                        /* owned copy */
	klog_offsetfile_entry_t *entries;  /* owned */
	size_t n, cap;
} klog_offsetfile_t;

/*
 * Read path into f (a missing file is an empty one).  -KLOG_ECORRUPT with
 * err "FILE:LINE: ..." for a malformed line, -KLOG_EIO for a read error.
 * Free with klog_offsetfile_free() in every case.
 */
int klog_offsetfile_load(const char *path, klog_offsetfile_t *f,
    klog_err_t *err);
void klog_offsetfile_free(klog_offsetfile_t *f);

/* 1 and *offset if topic/partition has an entry, else 0. */
int klog_offsetfile_get(const klog_offsetfile_t *f, const char *topic,
    int32_t partition, int64_t *offset);
/* Add or update an entry; -KLOG_ENOMEM, -KLOG_ETOPIC. */
int klog_offsetfile_set(klog_offsetfile_t *f, const char *topic,
    int32_t partition, int64_t offset);

/* Write f to its path atomically (see above); -KLOG_EIO / -KLOG_ENOSPC.
 * The temporary file is named PATH.tmp.PID. */
int klog_offsetfile_save(const klog_offsetfile_t *f, klog_err_t *err);

/*
 * klog-produce --source-offset-file: where a mirror's source is read up
 * to, in an offset file that klog-consume --offsets-from starts from.
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
/* Save the positions of the records up to the first not acknowledged, if
 * any moved: 0, or klog_offsetfile_load() and _save() errors (nothing is
 * taken off then; a later settle tries again). */
int klog_bookmark_settle(klog_bookmark_t *b, klog_err_t *err);
void klog_bookmark_close(klog_bookmark_t *b);

#endif
