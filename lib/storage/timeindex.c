/*
 * A segment's time index (timeindex.h): running maxima of the magic-2
 * entries' maxTimestamps at entry starts a spacing apart, noted on append
 * and by a scan of the file, and the lookup that reads from the entry the
 * index names to the first record at or after a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/uio.h>

#include "klog/base/error.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"
#include "klog/storage/timeindex.h"

#define FIND_CHUNK ((size_t)64 << 10)  /* a read of a lookup: about the
                                          spacing, and from the heap */
/* Bytes of an entry the index reads: up to the end of maxTimestamp. */
#define TS_END (KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER + \
    KLOG_BATCH_MAX_TS_AT + 8)
#define MIN_LENGTH 5              /* magic and a CRC, at least */

static int64_t
be64(const uint8_t *p)
{
	return (int64_t)((uint64_t)klog_be32(p) << 32 | klog_be32(p + 4));
}

void
klog_timeindex_init(klog_timeindex_t *ti, int64_t spacing)
{
	*ti = (klog_timeindex_t){ .spacing = spacing, .max_ts =
	    KLOG_NO_TIMESTAMP };
}

void
klog_timeindex_free(klog_timeindex_t *ti)
{
	free(ti->v);
	ti->v = NULL;
	ti->n = ti->cap = 0;
}

size_t
klog_timeindex_bytes(const klog_timeindex_t *ti)
{
	return ti->cap * sizeof(*ti->v);
}

void
klog_timeindex_trim(klog_timeindex_t *ti)
{
	klog_timeindex_entry_t *v;

	if (ti->n == ti->cap)
		return;
	if (ti->n == 0) {
		klog_timeindex_free(ti);
		return;
	}
	if ((v = realloc(ti->v, ti->n * sizeof(*v))) == NULL)
		return;
	ti->v = v;
	ti->cap = ti->n;
}

/* An entry starts at pos: the running max before it, kept if the last
 * one kept is a spacing behind. */
static void
mark(klog_timeindex_t *ti, int64_t pos)
{
	klog_timeindex_entry_t *v;
	size_t cap;

	if (pos - ti->last < ti->spacing)
		return;
	ti->last = pos;
	if (ti->n > 0 && ti->v[ti->n - 1].ts == ti->max_ts) {
		ti->v[ti->n - 1].pos = pos;
		return;
	}
	if (ti->n == ti->cap) {
		cap = ti->cap ? 2 * ti->cap : 64;
		if ((v = realloc(ti->v, cap * sizeof(*v))) == NULL)
			return;
		ti->v = v;
		ti->cap = cap;
	}
	ti->v[ti->n++] = (klog_timeindex_entry_t){ ti->max_ts, pos };
}

/*
 * The entry at p, avail bytes of it there, at segment position pos: its
 * length field into *n, and noted if the bytes the index wants of it are
 * there (1), else 0.  -KLOG_ECORRUPT for an impossible length.
 */
static int
note_entry(klog_timeindex_t *ti, const uint8_t *p, size_t avail,
    int64_t pos, uint32_t *n)
{
	int64_t ts;

	if (avail < KLOG_LENGTH_SIZE)
		return 0;
	*n = klog_be32(p);
	if (*n < MIN_LENGTH || *n > KLOG_MAX_ENTRY_LENGTH)
		return -KLOG_ECORRUPT;
	if (avail < (size_t)KLOG_LENGTH_SIZE + *n && avail < TS_END)
		return 0;
	mark(ti, pos);
	if (p[KLOG_LENGTH_SIZE] == KLOG_MAGIC2 && *n >= KLOG_MAGIC2_HEADER +
	    KLOG_BATCH_BODY_HEADER) {
		ts = be64(p + TS_END - 8);
		if (ts > ti->max_ts)
			ti->max_ts = ts;
	}
	ti->built = pos + KLOG_LENGTH_SIZE + *n;
	return 1;
}

/*
 * The append path's walk, over every entry a producer sends: a load of
 * the length and the magic an entry, the rest only a spacing apart or
 * for a magic-2 entry.
 */
int
klog_timeindex_note(klog_timeindex_t *ti, const uint8_t *p, size_t len,
    int64_t pos, size_t *used)
{
	int64_t next = ti->last + ti->spacing, max = ti->max_ts, ts;
	size_t off = 0;
	uint32_t n;
	int r = 0;

	if (used != NULL)
		*used = 0;
	if (pos != ti->built)
		return 0;
	while (len - off >= KLOG_LENGTH_SIZE) {
		n = klog_be32(p + off);
		if (n < MIN_LENGTH || n > KLOG_MAX_ENTRY_LENGTH) {
			r = -KLOG_ECORRUPT;
			break;
		}
		if (n > len - off - KLOG_LENGTH_SIZE)
			break;  /* whole entries only: a set's last may be cut */
		if (pos + (int64_t)off >= next) {
			ti->max_ts = max;
			mark(ti, pos + (int64_t)off);
			next = ti->last + ti->spacing;
		}
		if (p[off + KLOG_LENGTH_SIZE] == KLOG_MAGIC2 && n >=
		    KLOG_MAGIC2_HEADER + KLOG_BATCH_BODY_HEADER &&
		    (ts = be64(p + off + TS_END - 8)) > max)
			max = ts;
		off += KLOG_LENGTH_SIZE + n;
	}
	ti->max_ts = max;
	ti->built += (int64_t)off;
	if (used != NULL)
		*used = off;
	return r;
}

void
klog_timeindex_append(klog_timeindex_t *ti, int64_t pos,
    const struct iovec *iov, size_t n)
{
	const uint8_t *p;

	for (size_t i = 0; i < n && pos == ti->built; i++) {
		p = iov[i].iov_base;
		(void)klog_timeindex_note(ti, p, iov[i].iov_len, pos, NULL);
		pos += (int64_t)iov[i].iov_len;
	}
}

int64_t
klog_timeindex_seek(const klog_timeindex_t *ti, int64_t ts)
{
	size_t lo = 0, hi = ti->n, mid;

	/* The first entry whose running max reaches ts; the one before it
	 * is where to start. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ti->v[mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 ? ti->v[lo - 1].pos : 0;
}

void
klog_timeindex_cut(klog_timeindex_t *ti, int64_t pos)
{
	if (pos >= ti->built)
		return;
	while (ti->n > 0 && ti->v[ti->n - 1].pos >= pos)
		ti->n--;
	/* The last entry kept knows the max before it, and nothing after:
	 * noting starts again there. */
	ti->built = ti->last = ti->n > 0 ? ti->v[ti->n - 1].pos : 0;
	ti->max_ts = ti->n > 0 ? ti->v[ti->n - 1].ts : KLOG_NO_TIMESTAMP;
}

void
klog_timeindex_tail(const klog_timeindex_t *ti, klog_timeindex_t *tail)
{
	klog_timeindex_init(tail, ti->spacing);
	tail->built = ti->built;
	tail->max_ts = ti->max_ts;
	tail->last = ti->last;
}

int
klog_timeindex_join(klog_timeindex_t *ti, klog_timeindex_t *tail,
    int64_t from)
{
	klog_timeindex_entry_t *v;
	size_t i = 0, need;
	int ok = 0;

	if (ti->built != from || tail->built < from)
		goto out;
	if (tail->n == 0)
		goto ends;
	/* The seam: a first new entry with the last old one's max only
	 * moves it, as mark() does. */
	if (ti->n > 0 && ti->v[ti->n - 1].ts == tail->v[0].ts)
		ti->v[ti->n - 1].pos = tail->v[i++].pos;
	need = ti->n + tail->n - i;
	if (need > ti->cap) {
		/* Without room the entries go: a lookup reads further. */
		if ((v = realloc(ti->v, need * sizeof(*v))) == NULL)
			goto ends;
		ti->v = v;
		ti->cap = need;
	}
	memcpy(ti->v + ti->n, tail->v + i, (tail->n - i) * sizeof(*ti->v));
	ti->n = need;
ends:
	ti->built = tail->built;
	ti->max_ts = tail->max_ts;
	ti->last = tail->last;
	ok = 1;
out:
	klog_timeindex_free(tail);
	return ok;
}

/* Up to len bytes at pos of fd: the count read, or -KLOG_EIO (a file
 * shorter than the log says is an error too). */
static ssize_t
read_at(int fd, uint8_t *buf, size_t len, int64_t pos)
{
	ssize_t got;

	do
		got = pread(fd, buf, len, pos);
	while (got < 0 && errno == EINTR);
	return got > 0 ? got : -KLOG_EIO;
}

/*
 * read_at() for a pass over old segments: what the page cache holds, taken
 * without waiting (RWF_NOWAIT), then the rest from the disk, which is
 * dropped from the cache again (POSIX_FADV_DONTNEED: the pages were not
 * there, so none is dirty or wanted) and counted in *cold.  A file system
 * that cannot read without waiting has everything read as warm.
 */
static ssize_t
read_cold(int fd, uint8_t *buf, size_t len, int64_t pos, int64_t *cold)
{
	struct iovec v = { buf, len };
	ssize_t warm, got;

	do
		warm = preadv2(fd, &v, 1, pos, RWF_NOWAIT);
	while (warm < 0 && errno == EINTR);
	if (warm < 0 && errno != EAGAIN)
		return read_at(fd, buf, len, pos);
	if (warm < 0)
		warm = 0;
	if ((size_t)warm == len)
		return warm;
	if ((got = read_at(fd, buf + warm, len - (size_t)warm,
	    pos + warm)) < 0)
		return warm > 0 ? warm : got;
	(void)posix_fadvise(fd, pos + warm, got, POSIX_FADV_DONTNEED);
	*cold += got;
	return warm + got;
}

/* One read of a build, at most a chunk from tail->built, noted; with cold
 * (not NULL), read by read_cold(). */
static int
build_chunk(klog_timeindex_t *tail, int fd, int64_t to, uint8_t *buf,
    int64_t *cold)
{
	int64_t at = tail->built;
	size_t want = (size_t)(to - at) < KLOG_TIMEINDEX_CHUNK ?
	    (size_t)(to - at) : KLOG_TIMEINDEX_CHUNK, off;
	ssize_t got;
	uint32_t n;
	int r = 0;

	got = cold != NULL ? read_cold(fd, buf, want, at, cold) :
	    read_at(fd, buf, want, at);
	if (got < 0)
		return (int)got;
	/* An entry's header is noted, and its bytes past the chunk skipped
	 * by reading from its end. */
	for (off = 0; off < (size_t)got && tail->built < to;
	    off += KLOG_LENGTH_SIZE + n)
		if ((r = note_entry(tail, buf + off, (size_t)got - off,
		    at + (int64_t)off, &n)) <= 0)
			break;
	if (r < 0)
		return r;
	if (tail->built == at)  /* a header cut by the file's end */
		return -KLOG_EIO;
	return 0;
}

int
klog_timeindex_build(klog_timeindex_t *tail, int fd, int64_t to)
{
	uint8_t *buf;
	int r = 0;

	if (tail->built >= to)
		return 0;
	if ((buf = malloc(KLOG_TIMEINDEX_CHUNK)) == NULL)
		return -KLOG_ENOMEM;
	while (tail->built < to && r == 0)
		r = build_chunk(tail, fd, to, buf, NULL);
	free(buf);
	return r;
}

int
klog_timeindex_build_step(klog_timeindex_t *tail, int fd, int64_t to,
    uint8_t *buf, int64_t *cold)
{
	if (tail->built >= to)
		return 0;
	return build_chunk(tail, fd, to, buf, cold);
}

/* The first record of the entry at p[0..len) (at pos) at or after ts. */
static void
resolve(const uint8_t *p, size_t len, int64_t pos, int64_t ts,
    size_t max_inflate, klog_timeindex_hit_t *hit)
{
	klog_iter_t it;
	klog_msg_t m;

	hit->pos = pos;
	hit->delta = 0;
	hit->timestamp = be64(p + TS_END - 8);
	klog_iter_init(&it, p, len, pos, KLOG_ITER_DEEP | KLOG_ITER_NOCRC,
	    max_inflate);
	while (klog_iter_next(&it, &m) == 1)
		if (m.timestamp >= ts) {
			hit->delta = m.delta;
			hit->timestamp = m.timestamp;
			break;
		}
	klog_iter_free(&it);
}

/* The magic-2 entry at pos, n its length field, read whole and resolved. */
static int
read_hit(int fd, int64_t pos, uint32_t n, int64_t ts, size_t max_inflate,
    klog_timeindex_hit_t *hit)
{
	size_t len = KLOG_LENGTH_SIZE + (size_t)n, have = 0;
	uint8_t *e;
	ssize_t got;

	if ((e = malloc(len)) == NULL)
		return -KLOG_ENOMEM;
	while (have < len) {
		if ((got = read_at(fd, e + have, len - have,
		    pos + (int64_t)have)) < 0) {
			free(e);
			return (int)got;
		}
		have += (size_t)got;
	}
	resolve(e, len, pos, ts, max_inflate, hit);
	free(e);
	return 1;
}

/* The first magic-2 entry of buf[0..got) (at pos) whose maxTimestamp is at
 * or after ts: 1 with *at and *n; 0 with *next where to read on. */
static int
scan_chunk(const uint8_t *buf, size_t got, int64_t pos, int64_t to,
    int64_t ts, int64_t *at, uint32_t *n, int64_t *next)
{
	size_t off = 0;
	uint32_t len;

	while (off + KLOG_LENGTH_SIZE <= got && pos + (int64_t)off < to) {
		len = klog_be32(buf + off);
		if (len < MIN_LENGTH || len > KLOG_MAX_ENTRY_LENGTH)
			return -KLOG_ECORRUPT;
		if (got - off < (size_t)KLOG_LENGTH_SIZE + len &&
		    got - off < TS_END)
			break;
		if (buf[off + KLOG_LENGTH_SIZE] == KLOG_MAGIC2 && len >=
		    KLOG_MAGIC2_HEADER + KLOG_BATCH_BODY_HEADER &&
		    be64(buf + off + TS_END - 8) >= ts) {
			*at = pos + (int64_t)off;
			*n = len;
			return 1;
		}
		off += KLOG_LENGTH_SIZE + len;
	}
	*next = pos + (int64_t)off;
	return 0;
}

int
klog_timeindex_find(int fd, int64_t from, int64_t to, int64_t ts,
    size_t max_inflate, klog_timeindex_hit_t *hit)
{
	int64_t pos = from, next, at;
	uint8_t *buf;
	ssize_t got;
	uint32_t n;
	int r = 0;

	if ((buf = malloc(FIND_CHUNK)) == NULL)
		return -KLOG_ENOMEM;
	while (pos < to) {
		if ((got = read_at(fd, buf, (size_t)(to - pos) < FIND_CHUNK ?
		    (size_t)(to - pos) : FIND_CHUNK, pos)) < 0) {
			r = (int)got;
			break;
		}
		r = scan_chunk(buf, (size_t)got, pos, to, ts, &at, &n, &next);
		if (r == 1)
			r = read_hit(fd, at, n, ts, max_inflate, hit);
		if (r != 0)
			break;
		if (next == pos) {
			r = -KLOG_EIO;
			break;
		}
		pos = next;
	}
	free(buf);
	return r;
}
