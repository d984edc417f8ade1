/*
 * A segment's time index: where the first record at or after a time may
 * start, in memory only (no file: built on append, and for a segment the
 * broker opened by its first time lookup, which reads it once), as
 * Kafka's ListOffsets asks.
 *
 * Records are not sorted by time (a producer's CreateTime is its own), so
 * the index keeps the running maximum: an entry (ts, pos) says that every
 * entry of the segment before byte pos has a timestamp below or at ts,
 * the largest of them being ts.  Both columns only grow.  Entries are
 * noted at entry starts at least the spacing apart, and an entry whose ts
 * equals the last one's moves that one forward instead of adding one, so
 * timestamps that stand still cost nothing.  The first record at or after
 * T is then in [pos_k, pos_k+1) for the last entry k with ts < T: a
 * lookup reads about one spacing of the segment, plus one entry.
 *
 * Only magic-2 entries (record.h) carry timestamps: the batch's
 * maxTimestamp (under LogAppendTime, the broker's clock, which every
 * record of it takes).  Magic 0 and 1 entries (plain lines, gzip
 * wrappers) have none and are never found by time.
 *
 * Memory: 16 bytes an entry, at most one a spacing: 1 GiB of segment is
 * at most 16,384 entries, 256 KiB, at the default spacing of 64 KiB (the
 * active segment's array up to twice that while it grows).
 *
 * Nothing here takes a lock; a segment's index is its log's, under its
 * lock (segment.h), and the reads of the file go without it.
 */
#ifndef KLOG_TIMEINDEX_H
#define KLOG_TIMEINDEX_H

#include <stddef.h>
#include <stdint.h>

#include <sys/uio.h>

#define KLOG_TIMEINDEX_SPACING ((int64_t)64 << 10)

typedef struct klog_timeindex_entry {
	int64_t ts;                /* the running max before pos */
	int64_t pos;
} klog_timeindex_entry_t;

typedef struct klog_timeindex {
	klog_timeindex_entry_t *v;
	size_t n, cap;
	int64_t spacing;
	int64_t built;             /* the entries of [0, built) are noted */
	int64_t max_ts;            /* the largest timestamp in [0, built);
	                              KLOG_NO_TIMESTAMP (-1) if none */
	int64_t last;              /* where the last entry was noted, or 0 */
} klog_timeindex_t;

/* An empty index of a segment whose byte 0 is yet to be noted. */
void klog_timeindex_init(klog_timeindex_t *ti, int64_t spacing);
void klog_timeindex_free(klog_timeindex_t *ti);

/*
 * Note the whole entries of p[0..len), which start at segment position
 * pos == ti->built (else nothing is noted); a cut entry at the end is
 * left.  *used (may be NULL) gets the bytes of whole entries noted.
 * -KLOG_ECORRUPT, with the entries before it noted, for a length that no
 * entry can have.  An entry that cannot be kept for lack of memory is not
 * kept: a lookup then reads further, and finds the same.
 */
int klog_timeindex_note(klog_timeindex_t *ti, const uint8_t *p, size_t len,
    int64_t pos, size_t *used);

/*
 * An append of n whole, validated message sets at pos: noted if the index
 * has every byte before pos, so that a segment written since it was
 * created or indexed stays indexed, at the cost of a look at each entry's
 * length and magic: 13 us of CPU per MiB of 200-byte plain lines with the
 * set in the cache (as the CRC check leaves it), 144 us from memory,
 * against 200 us to read them back from the file after a flush, measured.
 */
void klog_timeindex_append(klog_timeindex_t *ti, int64_t pos,
    const struct iovec *iov, size_t n);

/* Where to read from for the first record at or after ts: every entry
 * before it is older. */
int64_t klog_timeindex_seek(const klog_timeindex_t *ti, int64_t ts);

/* Forget everything at or past pos (a truncation): the index keeps the
 * entries before it, and notes again from the last of them. */
void klog_timeindex_cut(klog_timeindex_t *ti, int64_t pos);

/* Bytes the index holds in memory; trimmed to its entries when its
 * segment is sealed, so a sealed GiB holds at most 256 KiB (an array that
 * cannot shrink stays as it is). */
size_t klog_timeindex_bytes(const klog_timeindex_t *ti);
void klog_timeindex_trim(klog_timeindex_t *ti);

/*
 * Index [ti->built, to) of the segment file fd: read a MiB at a time,
 * without ti (tail is its continuation: klog_timeindex_tail() of it, then
 * klog_timeindex_join() under the lock).  -KLOG_EIO for a failed read,
 * -KLOG_ECORRUPT for an impossible length, -KLOG_ENOMEM.
 */
void klog_timeindex_tail(const klog_timeindex_t *ti, klog_timeindex_t *tail);
int klog_timeindex_build(klog_timeindex_t *tail, int fd, int64_t to);

/*
 * One read of a build, for a pass over old segments off the event loop
 * (log.h's klog_log_time_index()): at most KLOG_TIMEINDEX_CHUNK bytes from
 * tail->built towards to, through buf (that many bytes, the caller's),
 * noted into tail.  Bytes that were not in the page cache are dropped from
 * it after, so that the pass does not push the log's hot tail out, and
 * added to *cold.  Errors as klog_timeindex_build().
 */
#define KLOG_TIMEINDEX_CHUNK ((size_t)1 << 20)
int klog_timeindex_build_step(klog_timeindex_t *tail, int fd, int64_t to,
    uint8_t *buf, int64_t *cold);

/* Take tail's entries and ends into ti if ti still ends at from, where
 * tail started (1), else leave ti (0); tail is freed either way. */
int klog_timeindex_join(klog_timeindex_t *ti, klog_timeindex_t *tail,
    int64_t from);

/* What a lookup found in a segment. */
typedef struct klog_timeindex_hit {
	int64_t pos;               /* the magic-2 entry holding the record */
	int32_t delta;             /* the record's offset delta */
	int64_t timestamp;         /* the record's */
} klog_timeindex_hit_t;

/*
 * The first record whose timestamp is at or after ts among the entries of
 * the segment file fd in [from, to) (from an entry start, from
 * klog_timeindex_seek(); to an entry end): 1 and *hit, or 0 if none.  The
 * records of the entry found are read (decompressed under max_inflate, 0
 * for format.h's default) to find the first at or after ts; an entry whose
 * records cannot be read answers its first record with the batch's
 * maxTimestamp.  -KLOG_EIO, -KLOG_ECORRUPT, -KLOG_ENOMEM.
 */
int klog_timeindex_find(int fd, int64_t from, int64_t to, int64_t ts,
    size_t max_inflate, klog_timeindex_hit_t *hit);

#endif
