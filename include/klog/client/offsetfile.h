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
 * topics are kept as they are; '#' lines and blank lines are no entries,
 * but the '#' lines (notes: a person's, or klog-produce's mirror state,
 * mirror.h) are kept too, in their order, after the header line.  A
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
	char **notes;                      /* owned: '#' lines, no newline */
	size_t nnotes, notes_cap;          /* notes_cap in bytes */
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

/*
 * The notes that start with prefix replaced by the lines of text (each
 * ended by '\n'; "" for none), placed where the first one was, or at the
 * end.  -KLOG_ENOMEM (f then holds some of them).
 */
int klog_offsetfile_notes_set(klog_offsetfile_t *f, const char *prefix,
    const char *text);

/* Write f to its path atomically (see above); -KLOG_EIO / -KLOG_ENOSPC.
 * The temporary file is named PATH.tmp.PID. */
int klog_offsetfile_save(const klog_offsetfile_t *f, klog_err_t *err);

#endif
