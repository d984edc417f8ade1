/*
 * One segment of a partition log (log.h): a file holding a bare message set
 * (format.h), named after its base offset (names.h), and the object the log
 * keeps for it in its array.
 *
 * The object is reference counted.  The log's array holds one reference;
 * every slice and every flush in flight holds another.  The count is atomic,
 * so that a reference can be dropped without the log, even after
 * klog_log_close().  base, size and kafka are the log's to read and change
 * under its lock.
 *
 * The descriptor lives in a descriptor cache entry (fdcache.h).  The active
 * segment's is opened read-write and stays open; a sealed segment's is opened
 * read-only on a read, and the cache may close it whenever it is unpinned
 * once the segment is synced.  So ent.fd is used directly only for the
 * active segment under the log's lock, and through a pin everywhere else.
 * Every segment descriptor is opened with kernel readahead off: see
 * klog_segment_open().
 *
 * Nothing here takes a lock: the log serializes what needs it.  Paths are
 * made from the partition directory (dir) only when a file is opened or an
 * error is worded.
 */
#ifndef KLOG_SEGMENT_H
#define KLOG_SEGMENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/uio.h>

#include "klog/base/error.h"
#include "klog/storage/fdcache.h"
#include "klog/storage/timeindex.h"

/*
 * Marks: positions in the file where an entry starts, ascending, at least
 * this far apart: a sparse index in memory only (the file format has no
 * index, and the paper's design keeps none on disk), learned from appends
 * and from the scans of klog_segment_find_start(), so that finding the
 * entry that holds a byte reads at most about this far.  1 GiB of segment
 * is 1,024 marks, 8 KiB.
 */
#define KLOG_SEGMENT_MARK_SPACING ((int64_t)1 << 20)

typedef struct klog_segment {
	int64_t base;
	int64_t size;              /* bytes written */
	klog_fdcache_entry_t ent;  /* the descriptor (see above) */
	klog_fdcache_t *cache;     /* referenced */
	int kafka;                 /* named .kafka rather than .klog */
	atomic_int refs;
	int64_t *marks;            /* see above; the log's, under its lock */
	size_t nmarks, marks_cap;
	klog_timeindex_t times;    /* timeindex.h; the log's, under its lock */
} klog_segment_t;

/*
 * A segment object with one reference (the caller's) and no descriptor, for
 * the file at base holding size bytes; it takes a reference on cache.  NULL
 * when out of memory.
 */
klog_segment_t *klog_segment_new(klog_fdcache_t *cache, int64_t base,
    int64_t size, int kafka);
void klog_segment_ref(klog_segment_t *s);

/* Drop a reference; the last one closes the descriptor and frees s. */
void klog_segment_unref(klog_segment_t *s);

/* "<dir>/<s's file name>" into buf; -KLOG_ETOOBIG if it does not fit. */
int klog_segment_path(const klog_segment_t *s, const char *dir, char *buf,
    size_t len);

/*
 * open(2) a segment file (never through a link, close-on-exec) and turn
 * kernel readahead off on it (POSIX_FADV_RANDOM; the descriptor cache does
 * the same): readers either send bytes that are in the page cache, or read
 * cold ranges in whole (one pread, or the broker's prefetch thread).  Left
 * on, a sendfile(2) of warm pages next to cold ones starts readahead windows
 * of up to read_ahead_kb (8 MiB on the VMs measured) from the event loop, and
 * the disk serves them ahead of the flusher's fsyncs.  The descriptor, or -1
 * with errno set.
 */
int klog_segment_open(const char *path, int flags);

/*
 * A new, empty .klog segment at base in dir: the file is created (it must
 * not exist) and opened read-write, and *out gets the object with its
 * descriptor, one reference the caller's.  -KLOG_ETOOBIG if the path does
 * not fit, -KLOG_ENOMEM, or the code of the failed open.
 */
int klog_segment_create(klog_fdcache_t *cache, const char *dir, int64_t base,
    klog_segment_t **out, klog_err_t *err);

/*
 * fsync s's open descriptor.  With linked, a file unlinked meanwhile (its
 * directory removed behind the broker's back) is -KLOG_ENOENT after the
 * sync: what was written to it can never be read again, so it must not
 * count as flushed.  A failed fsync is -KLOG_ESTORAGE: Linux marks the
 * pages whose write-back failed clean, so a later fsync may return 0
 * without them ever reaching the disk, and the bytes it covered must be
 * taken as lost for good (log.h).
 */
int klog_segment_sync(klog_segment_t *s, const char *dir, int linked,
    klog_err_t *err);

/* The -KLOG_ESTORAGE of an fsync of path that just failed (errno). */
int klog_segment_sync_failed(klog_err_t *err, const char *path);

/* fsync a directory, so that the names created or removed in it last.
 * A failed fsync is -KLOG_ESTORAGE. */
int klog_segment_sync_dir(const char *path, klog_err_t *err);

/*
 * Pin s's descriptor and return it, opening a closed one read-only first.
 * -KLOG_ERANGE if the file is gone (another process deleted it), else the
 * code of the failed open.  Every pin is undone by klog_segment_unpin().
 */
int klog_segment_pin(klog_segment_t *s, const char *dir, klog_err_t *err);
void klog_segment_unpin(klog_segment_t *s);
/* One more pin of s, which the caller holds pinned. */
void klog_segment_repin(klog_segment_t *s);

/*
 * Write the len bytes of iov[0..n) (each one a whole message set) at the end
 * of s (at s->size, which the caller advances), resuming after short
 * writes.  On success *kept is n and *kept_bytes len.  On failure
 * (-KLOG_ENOSPC, or -KLOG_EIO for anything else) the whole sets that were
 * written stay, *kept of them and *kept_bytes bytes, and the file is
 * truncated after them, so no part of a set stays; a truncation that fails
 * too leaves bytes past s->size that the next write overwrites.
 */
int klog_segment_write(klog_segment_t *s, const char *dir,
    const struct iovec *iov, size_t n, size_t len, size_t *kept,
    size_t *kept_bytes, klog_err_t *err);

/*
 * Recovery of a segment after an unclean stop (the active one, or one
 * past the log's recovery point, log.h), through its open
 * read-write descriptor: find the end of its valid prefix (whole top-level
 * entries with good CRCs; inner messages are not opened), reading a chunk
 * at a time, and truncate the file there and fsync it.  Kafka 0.7's rule
 * (the log ends at the first bad message), but nothing is destroyed: the
 * bytes cut are first copied, synced, to a salvage file beside the
 * segment (names.h), whose name goes to saved (savedlen bytes; "" when
 * nothing was cut), for klog-dump --salvage.  *cut gets the bytes cut (0
 * if none) and s->size the new size.
 */
int klog_segment_recover(klog_segment_t *s, const char *dir, int64_t *cut,
    char *saved, size_t savedlen, klog_err_t *err);

/*
 * Recovery of a whole segment after the one it cut: its file renamed to a
 * salvage file (<base>.salvage, or <base>.<n>.salvage if that is taken),
 * the directory synced.  Its name goes to saved unless saved holds one
 * already (the first cut's).  A file already gone (klog-retain) is fine.
 * s is the caller's to drop.
 */
int klog_segment_set_aside(klog_segment_t *s, const char *dir, char *saved,
    size_t savedlen, klog_err_t *err);

/*
 * Cut s (open read-write) to pos, or, if no entry ends exactly there, to
 * the last whole valid entry before it; *landed gets where it was cut
 * (== pos when pos is a boundary), s->size follows, and the file is
 * fsynced.
 */
int klog_segment_truncate(klog_segment_t *s, const char *dir, int64_t pos,
    int64_t *landed, klog_err_t *err);

/*
 * Does an entry start at byte pos of the segment file fd (partition offset
 * offset, for messages)?  readable bytes of it may be read, written bytes
 * exist.  One read of up to 4 KiB readable bytes, from the page cache if it
 * holds the header (pages past pos's own are read only if all are cached,
 * so that no read of a cold page is even started): the header must be sane
 * and the entry must end inside the written bytes; if all of it was read, its CRC must match too, unless
 * it is a corrupt message that is to be served for the reader to report
 * (the segment's end or another whole valid entry follows it).
 * -KLOG_ENOTBOUNDARY if not, -KLOG_EIO if the read fails.
 */
int klog_segment_check_boundary(int fd, int64_t pos, int64_t readable,
    int64_t written, int64_t offset, klog_err_t *err);

/* Note that an entry starts at pos: kept as a mark when the mark before it
 * is at least the spacing behind (0, the file's start, is one).  A mark
 * that cannot be kept for lack of memory is simply not kept. */
void klog_segment_mark(klog_segment_t *s, int64_t pos);

/* The last mark at or before pos, 0 if none. */
int64_t klog_segment_mark_before(const klog_segment_t *s, int64_t pos);

/* The marks found by klog_segment_find_start(), for klog_segment_mark(). */
#define KLOG_SEGMENT_SCAN_MARKS 1024  /* 1 GiB of scan */

typedef struct klog_segment_scan {
	int64_t marks[KLOG_SEGMENT_SCAN_MARKS];
	size_t n;
} klog_segment_scan_t;

/*
 * The start of the entry that holds byte target of the segment file fd,
 * found by hopping over entry lengths from from, a known entry start (0,
 * or a mark), in reads of 1 MiB: the cost of a position that is not a
 * boundary, such as a Kafka client's offset (klog-kafka(7)).  Entry starts
 * passed on the way, a spacing apart (the last KLOG_SEGMENT_SCAN_MARKS of
 * them), go to scan (may be NULL).  from <= target < readable, or
 * -KLOG_ERANGE; an impossible length on the way is -KLOG_ECORRUPT, a failed
 * read -KLOG_EIO.
 */
int klog_segment_find_start(int fd, int64_t from, int64_t target,
    int64_t readable, int64_t *start, klog_segment_scan_t *scan,
    klog_err_t *err);

/*
 * Whether every page of [pos, pos + len) of fd is in the page cache, by
 * cachestat(2), which touches nothing (it counts pages still being read
 * in as well): 1 or 0; -1 with errno where the kernel cannot tell (ENOSYS
 * without cachestat, EPERM where a filter forbids it).
 */
int klog_segment_cached(int fd, int64_t pos, int64_t len);

#endif
