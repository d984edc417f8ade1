/*
 * The partition log: a directory of segment files that only grow at the end.
 *
 *   <data-dir>/<topic>-<partition>/00000000000000000000.klog
 *                                  00000000001073741917.klog   (base offsets)
 *
 * Each segment is a bare message set (see format.h); its name is the offset
 * of its first byte in the partition, zero-padded to 20 digits (names.h has
 * the names, and the retention rule klog_log_retain() applies).  The log
 * keeps in memory only a sorted array of segments (base offset, size, lazily
 * opened descriptor): O(segments), never O(messages).  The active segment's
 * descriptor stays open; older ones are opened on a read and closed by the
 * descriptor cache (fdcache.h) when it is full.
 *
 * Two ends: the written end (everything appended) and the flushed end (what
 * fsync has made durable).  Readers see only up to the flushed end, as in the
 * paper.  Appends come from one thread (the broker's event loop); flushes may
 * come from another (the flusher): klog_log_flush() captures what to sync
 * under the log's lock and calls fsync without it, so appends and reads go on
 * meanwhile.  Every function here is safe to call from those two threads.
 *
 * A failed sync is final (klog(7), "A failing disk").  After Linux fails
 * a write-back it marks the pages clean and reports the error once, so a
 * later fsync of the same file may return 0 although those bytes never
 * reached the disk (PostgreSQL's 2018 finding).  So the first fsync that
 * fails (of a segment, or of a directory the log created names in) fails
 * the log for good: its flushed end stays where the last successful sync
 * left it, and every append and flush after is -KLOG_ESTORAGE (a
 * follower's truncation or reset still runs: it only ever lowers the
 * flushed end).  Readers still see up to the flushed end.  Only a new
 * open (a restart, whose recovery finds the valid end) takes writes
 * again.  A write the disk refuses before it is in the page cache
 * (-KLOG_ENOSPC) is not a failure of this kind: nothing of it was kept,
 * and the next append may succeed.
 */
#ifndef KLOG_LOG_H
#define KLOG_LOG_H

#include <stddef.h>
#include <stdint.h>

#include <sys/uio.h>

#include "klog/base/error.h"
#include "klog/storage/fdcache.h"
#include "klog/storage/names.h"

typedef struct klog_log klog_log_t;

typedef struct klog_log_config {
	int64_t segment_bytes;  /* roll before an append that would pass it;
	                           default 1 GiB */
	int recover;            /* scan and truncate the last segment at open
	                           (the clean-shutdown marker was missing) */
	klog_fdcache_t *fdcache; /* shared by the store's logs (the log takes
	                            a reference); NULL: the log's own, with no
	                            bound */
} klog_log_config_t;

void klog_log_config_default(klog_log_config_t *cfg);

/*
 * Open (creating if needed) the log of topic/partition under data_dir.
 * Segments are checked for contiguity (base + size == next base); a gap
 * is -KLOG_ECORRUPT with the file named in err.  With cfg->recover every
 * segment from the recovery point (names.h's recovery-point file: every
 * byte below it was synced; the last segment if there is none) is
 * scanned, and the log cut at the first incomplete or CRC-invalid entry,
 * what is cut kept in salvage files (segment.h); older segments are never
 * read.  klog_log_recovered_bytes() tells how many bytes were cut.  On
 * success *out is owned by the caller: klog_log_close().
 */
int klog_log_open(const char *data_dir, const char *topic, int partition,
    const klog_log_config_t *cfg, klog_log_t **out, klog_err_t *err);

/* Close every descriptor and free the log.  Does not fsync. */
void klog_log_close(klog_log_t *log);

const char *klog_log_topic(const klog_log_t *log);
/* The partition directory. */
const char *klog_log_dir(const klog_log_t *log);

/*
 * fd, a file just written (and renamed into place) in the log's
 * directory, is synced by the next klog_log_flush() (on the flusher's
 * thread), with the directory, and closed; the log owns it from here.
 * For files whose loss at a crash costs time, not data (a producer state
 * snapshot: a torn one is ignored): the loop that writes them never waits
 * on a disk.  A sync that fails there is not the log's failure.  Past a
 * few waiting, the oldest is closed unsynced (a newer file supersedes
 * it).
 */
void klog_log_sync_later(klog_log_t *log, int fd);
int klog_log_partition(const klog_log_t *log);
int64_t klog_log_recovered_bytes(const klog_log_t *log);
/* The salvage file the bytes recovery cut were kept in (segment.h), ""
 * if none. */
const char *klog_log_salvage_path(const klog_log_t *log);

/*
 * Append a validated message set of nmsgs messages at the written end,
 * rolling to a new segment first if the active one is non-empty and would
 * pass segment_bytes.  *first_offset (may be NULL) gets the offset of its
 * first entry.  On a failed write the segment is truncated back, so a
 * partial set never stays in the log; the error is -KLOG_ENOSPC or -KLOG_EIO
 * (-KLOG_ESTORAGE, with nothing written, once a sync has failed).
 */
int klog_log_append(klog_log_t *log, const void *set, size_t len,
    uint32_t nmsgs, int64_t *first_offset, klog_err_t *err);

/*
 * Append n validated message sets, one per iovec (they may point into a
 * network buffer: nothing is copied), with as few writes as the segment
 * size allows: the sets that fit the active segment go out in one
 * pwritev(), and a set that would pass segment_bytes starts a new segment
 * (the same rule as klog_log_append, set by set).  *first_offset gets the
 * offset of the first set; the sets are contiguous from there.  *appended
 * (may be NULL) gets how many sets are in the log: all n on success; on a
 * failed write (-KLOG_ENOSPC, -KLOG_EIO) the whole sets written before it
 * stay and no part of any other does.  nmsgs is counted as unflushed only
 * on full success.
 */
int klog_log_appendv(klog_log_t *log, const struct iovec *iov, size_t n,
    uint32_t nmsgs, int64_t *first_offset, size_t *appended, klog_err_t *err);

/* fsync everything written so far and advance the flushed end to it.
 * -KLOG_ENOENT if a segment with unflushed bytes (or the partition
 * directory) was removed behind the log's back: the end does not move.
 * -KLOG_ESTORAGE if an fsync failed, now or before: the end does not move,
 * now or ever (see above).  A flush that synced sealed segments to their
 * ends moves the recovery point past them. */
int klog_log_flush(klog_log_t *log, klog_err_t *err);

/*
 * A follower's cut: drop everything from offset on (segments after the one
 * holding it deleted, that one truncated and fsynced, the directory
 * fsynced).  If offset is not a message boundary the cut lands on the last
 * one before it.  *landed gets the new end (the old one if offset is past
 * it).  -KLOG_ERANGE below the log start.  The recovery point goes no
 * higher than the segment the cut landed in.  No other append or
 * truncation may run meanwhile; a flush may.
 */
int klog_log_truncate(klog_log_t *log, int64_t offset, int64_t *landed,
    klog_err_t *err);

/* Delete every segment and start the log empty at base (a follower whose
 * log the leader's retention has passed). */
int klog_log_reset(klog_log_t *log, int64_t base, klog_err_t *err);

int64_t klog_log_start(klog_log_t *log);       /* first retained offset */
int64_t klog_log_end(klog_log_t *log);         /* written end */
int64_t klog_log_flushed_end(klog_log_t *log); /* what readers may see */
uint64_t klog_log_unflushed_messages(klog_log_t *log);
int klog_log_failed(klog_log_t *log);          /* a sync failed: final */
int64_t klog_log_last_flush_ms(klog_log_t *log); /* CLOCK_MONOTONIC ms */
size_t klog_log_segment_count(klog_log_t *log);
int64_t klog_log_size_bytes(klog_log_t *log);    /* sum of segment sizes */

/*
 * Where the bytes for a read are.  The slice holds a reference on its
 * segment, so the descriptor stays open (even if retention deletes the
 * segment) until klog_log_slice_release().
 */
typedef struct klog_log_slice {
	int fd;
	int64_t file_pos;   /* position in the segment file */
	size_t len;         /* bytes to send; 0 at the flushed end */
	int64_t offset;     /* partition offset of the first byte */
	void *seg;          /* private: the referenced segment */
} klog_log_slice_t;

/*
 * Locate up to max_bytes from offset, never crossing a segment and never past
 * the flushed end.  offset == flushed end gives len 0.  offset below the start
 * or past the flushed end: -KLOG_ERANGE.  An offset that is not the start of
 * an entry (its length field is impossible, or its magic, or the entry runs
 * past the segment, or, for an entry that fits in the 4 KiB read, its CRC
 * unless the segment's end or another whole valid entry follows it, which
 * makes it a corrupt message that is served for the reader to report):
 * -KLOG_ENOTBOUNDARY.  On success release the slice.
 */
int klog_log_read(klog_log_t *log, int64_t offset, size_t max_bytes,
    klog_log_slice_t *out, klog_err_t *err);
void klog_log_slice_release(klog_log_slice_t *slice);
/* Bytes [pos, pos + len) of src (within it) as a slice of their own, with
 * its own reference: released on its own, before or after src. */
void klog_log_slice_part(const klog_log_slice_t *src, size_t pos,
    size_t len, klog_log_slice_t *out);

/*
 * The start of the message entry that holds byte offset, which may be any
 * byte of the visible log (a Kafka client's offset, klog-kafka(7)): found
 * by hopping over the entries of its segment from the nearest known start
 * before it: the segment's marks (segment.h: one a MiB, from the appends
 * of this run and from earlier scans).  So it
 * reads at most about a MiB, except the first time in a segment written
 * before the broker started, which reads up to the segment's bytes before
 * offset.  -KLOG_ERANGE outside [start, flushed end), -KLOG_ECORRUPT for
 * an impossible length on the way.
 */
int klog_log_find_start(klog_log_t *log, int64_t offset, int64_t *start,
    klog_err_t *err);

/*
 * Offsets for a "before time T" query, as Kafka 0.7: the (base offset,
 * mtime) pairs of all segments plus (flushed end, now) if the last segment is
 * not empty; time -1 starts from the last entry, -2 from the first, otherwise
 * from the newest entry whose mtime <= time_ms; up to max offsets are
 * returned counting backwards, in descending order.  A segment found
 * deleted behind the log (klog-retain) is left out, and the log rescans
 * then, as klog_log_read() does.
 */
int klog_log_offsets_before(klog_log_t *log, int64_t time_ms, int64_t *offsets,
    int max, int *n);

/* What klog_log_find_time() found. */
enum klog_log_time_status {
	KLOG_LOG_TIME_FOUND,      /* a record at or after the time */
	KLOG_LOG_TIME_NONE,       /* records carry timestamps, none that late */
	KLOG_LOG_TIME_UNSTAMPED,  /* no record carries one: the segments'
	                             mtimes are all there is to go by */
};

typedef struct klog_log_time {
	int status;               /* KLOG_LOG_TIME_* */
	int64_t offset;           /* the entry holding the record (klog's
	                             offset, a reader's start) */
	int64_t kafka_offset;     /* the record's Kafka offset (offset +
	                             its offset delta) */
	int64_t timestamp;        /* the record's */
} klog_log_time_t;

/*
 * The first record, in log order, whose timestamp is at or after time_ms
 * (Kafka's ListOffsets by timestamp), among the visible log (below the
 * flushed end).  Only magic-2 entries carry timestamps (timeindex.h);
 * records without one are never found.  Each segment's time index is
 * completed first, reading the bytes appends did not note (the whole
 * segment, the first time for one written before the broker started);
 * then about a spacing of it is read.  A segment deleted behind the log is passed
 * over.  -KLOG_EIO, -KLOG_ECORRUPT (an impossible length on the way),
 * -KLOG_ENOMEM, with err set.
 */
int klog_log_find_time(klog_log_t *log, int64_t time_ms,
    klog_log_time_t *out, klog_err_t *err);

/* What klog_log_time_index() read: segments, bytes, and of them the bytes
 * that were not in the page cache. */
typedef struct klog_log_index_stats {
	size_t segments;
	int64_t bytes, cold;
} klog_log_index_stats_t;

/* Called after each read of klog_log_time_index() with the figures so
 * far; nonzero stops it there. */
typedef int klog_log_pace_fn(void *arg, const klog_log_index_stats_t *st);

/*
 * Complete the time index of every segment of log, so that no lookup has
 * to read a whole segment first: for a thread other than the loop's (the
 * broker's indexer), while lookups, appends, cuts and retention go on
 * (each join is checked as a lookup's own is).  A MiB is read at a time,
 * without the log's lock, and bytes not in the page cache are dropped
 * from it after (timeindex.h); pace (NULL: none) is called after each
 * read, and stops the work with -KLOG_ECLOSED, what was read kept.
 * Cheap when every index is complete: a look under the lock a segment.
 * Segments deleted meanwhile (retention, klog-retain, a cut) are passed
 * over.  What was read is added to *st.  -KLOG_EIO, -KLOG_ECORRUPT,
 * -KLOG_ENOMEM or the code of a failed open, with err set.
 */
int klog_log_time_index(klog_log_t *log, klog_log_pace_fn *pace, void *arg,
    klog_log_index_stats_t *st, klog_err_t *err);

/* Bytes the log's time indexes hold in memory, and bytes of its segments
 * they have not seen yet (what lookups would read first). */
size_t klog_log_time_index_bytes(klog_log_t *log);
int64_t klog_log_time_unindexed(klog_log_t *log);

/* Copy up to max segment infos, oldest first; *n gets the total count. */
int klog_log_segments(klog_log_t *log, klog_segment_info_t *out, size_t max,
    size_t *n);

/*
 * Retention by klog_retain_plan() (retain.h): delete whole segments from the
 * oldest end while their mtime is older than max_age_ms (if >= 0) before
 * now_ms, then while the log stays at or above max_bytes (if >= 0) without
 * them.  The active (newest) segment is never deleted: if everything
 * expired, the log rolls to a fresh empty segment first.  Readers holding
 * slices of deleted segments keep working.
 */
int klog_log_retain(klog_log_t *log, int64_t max_age_ms, int64_t max_bytes,
    int64_t now_ms, size_t *deleted_segments, int64_t *deleted_bytes,
    klog_err_t *err);

/*
 * Notice segments that another process (klog-retain) removed from the
 * oldest end: drop them from the in-memory array.
 */
int klog_log_rescan(klog_log_t *log, klog_err_t *err);

#endif
