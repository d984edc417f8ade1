/*
 * Retention on disk: deleting segments from partition directories beside a
 * live broker (klog-retain).  Which segments go is klog_retain_plan()
 * (below), the pure rule the broker's own klog_log_retain() applies too,
 * so both delete the same segments.
 *
 * This works on files only, never through klog_log_open() (which would
 * create, recover or truncate files under a running broker):
 *
 *   <data-dir>/.retain.lock            flock(2)ed by a deleting klog-retain
 *   <data-dir>/<topic>-<n>/<20 digits>.klog|.kafka
 *
 * Segments are unlinked oldest first, so a reader (the broker at open or at
 * klog_log_rescan(), klog-dump) only ever sees the start of a partition move
 * forward, never a hole.  The broker's own .lock is not touched.
 */
#ifndef KLOG_RETAIN_H
#define KLOG_RETAIN_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/storage/names.h"

#define KLOG_RETAIN_LOCK ".retain.lock"

/* A data directory being worked on, with its lock once taken. */
typedef struct klog_retain klog_retain_t;

/*
 * Open data_dir (the path itself may be a symbolic link; nothing inside it
 * is followed).  On success *out is owned by the caller: klog_retain_close().
 */
int klog_retain_open(const char *data_dir, klog_retain_t **out,
    klog_err_t *err);

/* Release the lock if held, close and free. */
void klog_retain_close(klog_retain_t *r);

/*
 * Take <data-dir>/.retain.lock (creating it), retrying for up to wait_ms
 * while another process holds it; then -KLOG_EBUSY.  Held until
 * klog_retain_close().
 */
int klog_retain_lock(klog_retain_t *r, int64_t wait_ms, klog_err_t *err);

/* One partition directory and, once loaded, its segments. */
typedef struct klog_retain_part {
	char topic[KLOG_TOPIC_MAX + 1];
	int partition;
	int fd;                     /* the directory; -1 until loaded */
	klog_segment_info_t *segs;  /* oldest first */
	unsigned char *kafka;       /* per segment: named .kafka */
	size_t nsegs;
} klog_retain_part_t;

/*
 * Every "<valid topic>-<n>" directory in the data directory, by topic then
 * partition; symbolic links, other files and other names are skipped.  On
 * success *out (n entries, not loaded) is owned by the caller:
 * klog_retain_parts_free().
 */
int klog_retain_parts(klog_retain_t *r, klog_retain_part_t **out, size_t *n,
    klog_err_t *err);
void klog_retain_parts_free(klog_retain_part_t *parts, size_t n);

/*
 * Open p's directory (not through a link) and list its segment files with
 * their sizes and mtimes.  Files removed meanwhile are left out; other names
 * are ignored.  A segment that is not a regular file, a base offset that
 * cannot be, or two neighbours that do not meet (base + size != next base)
 * is -KLOG_ECORRUPT, named in err.  A directory that is gone is
 * -KLOG_ENOENT.  klog_retain_part_close() releases what this took, even on
 * failure.
 */
int klog_retain_part_load(klog_retain_t *r, klog_retain_part_t *p,
    klog_err_t *err);
void klog_retain_part_close(klog_retain_part_t *p);

/*
 * Unlink segment i of a loaded partition.  -KLOG_ENOENT if it was already
 * gone (the broker's own retention, another tool): not an error for the
 * partition, since only a prefix is ever removed.
 */
int klog_retain_part_unlink(klog_retain_t *r, const klog_retain_part_t *p,
    size_t i, klog_err_t *err);

/* fsync p's directory, making the unlinks durable; -KLOG_ESTORAGE if the
 * fsync failed. */
int klog_retain_part_sync(klog_retain_t *r, const klog_retain_part_t *p,
    klog_err_t *err);

/* ---- the rule ---- */

typedef struct klog_retain_plan {
	size_t count;        /* segments to delete from the oldest end */
	int newest_expired;  /* the rules would delete the newest one too */
} klog_retain_plan_t;

/*
 * The retention rule over n segments, oldest first, shared by the broker's
 * own klog_log_retain() and by klog-retain, so both delete the same
 * segments.  Walking from the oldest: while a segment is older than
 * max_age_ms (if >= 0), that is now_ms - mtime_ms > max_age_ms; then, from
 * where that stopped, while the segments left without it still hold at
 * least max_bytes (if >= 0).  The result's count never includes the newest
 * segment (the one a broker appends to): if the rules reach it too,
 * newest_expired is set instead, and only the log's owner can retire it, by
 * rolling first.
 */
void klog_retain_plan(const klog_segment_info_t *segs, size_t n,
    int64_t max_age_ms, int64_t max_bytes, int64_t now_ms,
    klog_retain_plan_t *plan);

#endif
