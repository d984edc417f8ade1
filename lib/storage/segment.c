/*
 * One segment of a partition log: the refcounted object, and the file work
 * on one segment (create, open, pin, append, recover, the boundary check of
 * a read).  See segment.h for the model.
 *
 * Choices made here:
 *  - Appends pwrite() at the segment's known size: a failed write that
 *    could not even be truncated away is overwritten by the next append.
 *  - Recovery reads RECOVER_CHUNK at a time and only ever allocates that
 *    one buffer: an entry larger than it is checked by streaming its
 *    payload through klog_entry_crc().
 *  - A read's boundary check is one pread into a BOUNDARY_READ buffer on
 *    the stack, so a fetch allocates nothing.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "klog/base/error.h"
#include "klog/storage/fdcache.h"
#include "klog/storage/format.h"
#include "klog/storage/names.h"
#include "klog/storage/record.h"
#include "klog/storage/segment.h"

#define RECOVER_CHUNK ((size_t)1 << 20)   /* recovery reads this much */
/*
 * The one pread of a read: enough for the header and, for entries up to about
 * this size, the whole entry so its CRC can be checked.  Small enough for the
 * stack, so a fetch allocates nothing.
 */
#define BOUNDARY_READ ((size_t)4 << 10)

/* cachestat(2), Linux 6.5: older C libraries' headers lack its number,
 * which is the same on most architectures (not alpha or mips; where it is
 * wrong the call fails with ENOSYS and the callers do without). */
#if !defined(SYS_cachestat) && !defined(__alpha__)
#define SYS_cachestat 451
#endif
/* How many iovecs one pwritev() takes from the caller's array. */
#define IOV_BATCH 256

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* ---- the object ---- */

klog_segment_t *
klog_segment_new(klog_fdcache_t *cache, int64_t base, int64_t size,
    int kafka)
{
	klog_segment_t *s = malloc(sizeof(*s));

	if (s == NULL)
		return NULL;
	s->base = base;
	s->size = size;
	klog_fdcache_entry_init(&s->ent, -1);
	s->cache = cache;
	klog_fdcache_ref(s->cache);
	s->kafka = kafka;
	atomic_init(&s->refs, 1);
	s->marks = NULL;
	s->nmarks = s->marks_cap = 0;
	klog_timeindex_init(&s->times, KLOG_TIMEINDEX_SPACING);
	return s;
}

void
klog_segment_ref(klog_segment_t *s)
{
	atomic_fetch_add(&s->refs, 1);
}

void
klog_segment_unref(klog_segment_t *s)
{
	if (atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	klog_fdcache_drop(s->cache, &s->ent);
	klog_fdcache_unref(s->cache);
	free(s->marks);
	klog_timeindex_free(&s->times);
	free(s);
}

/* ---- the file ---- */

int
klog_segment_open(const char *path, int flags)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd >= 0)
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	return fd;
}

int
klog_segment_path(const klog_segment_t *s, const char *dir, char *buf,
    size_t len)
{
	return klog_names_segment_path(dir, s->base, s->kafka, buf, len);
}

int
klog_segment_create(klog_fdcache_t *cache, const char *dir, int64_t base,
    klog_segment_t **out, klog_err_t *err)
{
	char path[PATH_MAX];
	klog_segment_t *s;
	int fd, r;

	*out = NULL;
	if (klog_names_segment_path(dir, base, 0, path, sizeof(path)) < 0)
		return klog_err_set(err, -KLOG_ETOOBIG, "%s: path too long",
		    dir);
	if ((s = klog_segment_new(cache, base, 0, 0)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	fd = klog_segment_open(path, O_RDWR | O_CREAT | O_EXCL);
	if (fd < 0) {
		r = klog_err_sys(err, "create", path);
		klog_segment_unref(s);
		return r;
	}
	s->ent.fd = fd;
	*out = s;
	return 0;
}

int
klog_segment_sync_failed(klog_err_t *err, const char *path)
{
	return klog_err_set(err, -KLOG_ESTORAGE, "fsync %s: %s", path,
	    strerror(errno));
}

int
klog_segment_sync_dir(const char *path, klog_err_t *err)
{
	int fd, r = 0;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return klog_err_sys(err, "open", path);
	if (fsync(fd) < 0)
		r = klog_segment_sync_failed(err, path);
	close(fd);
	return r;
}

int
klog_segment_sync(klog_segment_t *s, const char *dir, int linked,
    klog_err_t *err)
{
	char path[PATH_MAX];
	struct stat st;

	klog_segment_path(s, dir, path, sizeof(path));
	if (fsync(s->ent.fd) < 0)
		return klog_segment_sync_failed(err, path);
	if (!linked)
		return 0;
	if (fstat(s->ent.fd, &st) < 0)
		return klog_err_sys(err, "fstat", path);
	if (st.st_nlink == 0)
		return klog_err_set(err, -KLOG_ENOENT, "%s: removed while the "
		    "broker had it open", path);
	return 0;
}

int
klog_segment_pin(klog_segment_t *s, const char *dir, klog_err_t *err)
{
	char path[PATH_MAX];
	int fd;

	klog_segment_path(s, dir, path, sizeof(path));
	if ((fd = klog_fdcache_pin(s->cache, &s->ent, path)) >= 0)
		return fd;
	if (errno == ENOENT)  /* removed by another process */
		return klog_err_set(err, -KLOG_ERANGE,
		    "%s: segment was deleted", path);
	return klog_err_sys(err, "open", path);
}

void
klog_segment_repin(klog_segment_t *s)
{
	klog_fdcache_repin(s->cache, &s->ent);
}

void
klog_segment_unpin(klog_segment_t *s)
{
	klog_fdcache_unpin(s->cache, &s->ent);
}

/* ---- append ---- */

int
klog_segment_write(klog_segment_t *s, const char *dir,
    const struct iovec *iov, size_t n, size_t len, size_t *kept,
    size_t *kept_bytes, klog_err_t *err)
{
	struct iovec v[IOV_BATCH];
	char path[PATH_MAX];
	size_t done = 0, i = 0, skip = 0, k;
	ssize_t w;
	int e, code;

	while (done < len) {
		for (k = 0; k < IOV_BATCH && i + k < n; k++)
			v[k] = iov[i + k];
		v[0].iov_base = (uint8_t *)v[0].iov_base + skip;
		v[0].iov_len -= skip;
		w = pwritev(s->ent.fd, v, (int)k, s->size + (int64_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		done += (size_t)w;
		for (w += (ssize_t)skip; i < n && (size_t)w >= iov[i].iov_len;
		    i++)
			w -= (ssize_t)iov[i].iov_len;
		skip = (size_t)w;
	}
	*kept = n;
	*kept_bytes = len;
	return 0;
fail:
	e = w < 0 ? errno : EIO;
	*kept = i;
	*kept_bytes = done - skip;
	while (ftruncate(s->ent.fd, s->size + (int64_t)*kept_bytes) < 0 &&
	    errno == EINTR)
		;
	klog_segment_path(s, dir, path, sizeof(path));
	code = klog_errno_code(e) == -KLOG_ENOSPC ? -KLOG_ENOSPC : -KLOG_EIO;
	return klog_err_set(err, code, "write %s: %s", path, strerror(e));
}

/* ---- recovery ---- */

/*
 * The entry at pos fills the whole recovery buffer (buf holds have bytes of
 * it): check it by streaming its payload through klog_entry_crc().  Returns 1
 * if it is whole and valid, 0 if not, or an I/O error.
 */
static int
check_large_entry(int fd, uint8_t *buf, size_t have, int64_t pos,
    int64_t fsize, int64_t *next)
{
	uint32_t length = klog_be32(buf), want;
	uint8_t magic = buf[4];
	size_t hdr;
	uint32_t crc;
	int64_t at, end;
	ssize_t n;

	if (magic > KLOG_MAGIC2 || (magic == 1 && (buf[5] & KLOG_CODEC_MASK) ==
	    3) || (magic == KLOG_MAGIC2 && (buf[11] & KLOG_BATCH_CODEC_MASK) >
	    KLOG_CODEC_MAX))
		return 0;
	hdr = magic == 0 ? KLOG_MAGIC0_HEADER : KLOG_MAGIC1_HEADER;
	end = pos + KLOG_LENGTH_SIZE + length;
	if (end > fsize)
		return 0;
	want = klog_be32(buf + KLOG_LENGTH_SIZE + hdr - 4);
	crc = klog_entry_crc(magic, 0, buf + KLOG_LENGTH_SIZE + hdr,
	    have - KLOG_LENGTH_SIZE - hdr);
	for (at = pos + (int64_t)have; at < end; at += n) {
		n = pread(fd, buf, (size_t)min64(end - at, (int64_t)have), at);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n <= 0)
			return n < 0 ? -KLOG_EIO : 0;
		crc = klog_entry_crc(magic, crc, buf, (size_t)n);
	}
	*next = end;
	return crc == want;
}

/* Fill buf[have..) from the file at pos + have, up to cap or *size (which
 * shrinks if the file turns out shorter). */
static int
fill(int fd, uint8_t *buf, size_t cap, size_t *have, int64_t pos,
    int64_t *size)
{
	ssize_t n;

	while (*have < cap && pos + (int64_t)*have < *size) {
		n = pread(fd, buf + *have,
		    (size_t)min64((int64_t)(cap - *have),
		    *size - pos - (int64_t)*have), pos + (int64_t)*have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -KLOG_EIO;
		if (n == 0)
			*size = pos + (int64_t)*have;
		*have += (size_t)n;
	}
	return 0;
}

/*
 * Find the end of the valid prefix of segment s: whole top-level entries
 * with good CRCs (inner messages are not opened), read a chunk at a time.
 */
static int
scan_valid(klog_segment_t *s, uint8_t *buf, int64_t size, int64_t *good)
{
	klog_iter_t it;
	klog_msg_t m;
	int64_t pos = 0, next;
	size_t have = 0, keep;
	int r;

	*good = 0;
	for (;;) {
		if (fill(s->ent.fd, buf, RECOVER_CHUNK, &have, pos, &size) < 0)
			return -KLOG_EIO;
		if (have == 0)
			return 0;
		klog_iter_init(&it, buf, have, pos, 0, 0);
		while ((r = klog_iter_next(&it, &m)) == 1 && m.valid)
			*good = m.next_offset;
		klog_iter_free(&it);
		if (r == 0) {
			pos += (int64_t)have;
			have = 0;
			continue;
		}
		/* A bad CRC, a corrupt entry, or one cut by the file end. */
		if (r != -KLOG_EPARTIAL || pos + (int64_t)have >= size)
			return 0;
		if (*good > pos) {
			keep = (size_t)(pos + (int64_t)have - *good);
			memmove(buf, buf + (*good - pos), keep);
			have = keep;
			pos = *good;
			continue;
		}
		r = check_large_entry(s->ent.fd, buf, have, pos, size, &next);
		if (r <= 0)
			return r;
		*good = pos = next;
		have = 0;
	}
}

/* Create the salvage file for a cut at partition offset off: its fd, or
 * -1 with errno; its name into name. */
static int
salvage_create(int dfd, int64_t off, char *name, size_t len)
{
	int fd = -1;

	for (int n = 0; n < 100 && fd < 0; n++) {
		if (n == 0)
			snprintf(name, len, "%020lld" KLOG_SALVAGE_SUFFIX,
			    (long long)off);
		else
			snprintf(name, len, "%020lld.%d" KLOG_SALVAGE_SUFFIX,
			    (long long)off, n);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			return -1;
	}
	return fd;
}

/* Copy [from, s->size) of the segment to a new salvage file in dir, synced
 * with its directory entry. */
static int
salvage(klog_segment_t *s, const char *dir, int64_t from, uint8_t *buf,
    char *saved, size_t savedlen, klog_err_t *err)
{
	char name[KLOG_SALVAGE_NAME_MAX];
	int64_t pos = from;
	int dfd, fd, r = 0;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return klog_err_sys(err, "open", dir);
	if ((fd = salvage_create(dfd, s->base + from, name, sizeof(name))) < 0) {
		r = klog_err_sys(err, "create salvage file in", dir);
		close(dfd);
		return r;
	}
	while (r == 0 && pos < s->size) {
		ssize_t n = pread(s->ent.fd, buf, (size_t)min64(
		    (int64_t)RECOVER_CHUNK, s->size - pos), pos);

		if (n <= 0 || write(fd, buf, (size_t)n) != n)
			r = klog_err_set(err, -KLOG_EIO, "%s/%s: %s", dir, name,
			    n < 0 || errno ? strerror(errno) : "short read");
		pos += n > 0 ? n : 0;
	}
	if (r == 0 && (fsync(fd) < 0 || fsync(dfd) < 0))
		r = klog_segment_sync_failed(err, name);
	close(fd);
	if (r < 0)
		(void)unlinkat(dfd, name, 0);
	close(dfd);
	if (r == 0)
		snprintf(saved, savedlen, "%s/%s", dir, name);
	return r;
}

int
klog_segment_recover(klog_segment_t *s, const char *dir, int64_t *cut,
    char *saved, size_t savedlen, klog_err_t *err)
{
	char path[PATH_MAX];
	uint8_t *buf;
	int64_t good;
	int r;

	*cut = 0;
	if (savedlen > 0)
		saved[0] = '\0';
	klog_segment_path(s, dir, path, sizeof(path));
	if (s->size == 0)
		return 0;
	if ((buf = malloc(RECOVER_CHUNK)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "%s: out of memory",
		    path);
	r = scan_valid(s, buf, s->size, &good);
	if (r < 0) {
		free(buf);
		return klog_err_set(err, r, "read %s: %s", path,
		    strerror(errno));
	}
	if (good == s->size) {
		free(buf);
		return 0;
	}
	/* Never truncate what could not be kept aside. */
	r = salvage(s, dir, good, buf, saved, savedlen, err);
	free(buf);
	if (r < 0)
		return r;
	if (ftruncate(s->ent.fd, good) < 0)
		return klog_err_sys(err, "truncate", path);
	if (fsync(s->ent.fd) < 0)
		return klog_segment_sync_failed(err, path);
	*cut = s->size - good;
	s->size = good;
	return 0;
}

int
klog_segment_set_aside(klog_segment_t *s, const char *dir, char *saved,
    size_t savedlen, klog_err_t *err)
{
	char path[PATH_MAX], to[PATH_MAX];
	struct stat st;
	int r;

	klog_segment_path(s, dir, path, sizeof(path));
	for (int n = 0; n < 100; n++) {
		if (n == 0)
			snprintf(to, sizeof(to), "%s/%020lld" KLOG_SALVAGE_SUFFIX,
			    dir, (long long)s->base);
		else
			snprintf(to, sizeof(to), "%s/%020lld.%d"
			    KLOG_SALVAGE_SUFFIX, dir, (long long)s->base, n);
		/* No other process writes the directory: the broker holds
		 * the data directory's lock. */
		if (lstat(to, &st) < 0 && errno == ENOENT)
			break;
	}
	if (rename(path, to) < 0)
		return errno == ENOENT ? 0 : klog_err_sys(err, "rename", path);
	if ((r = klog_segment_sync_dir(dir, err)) == 0 && savedlen > 0 &&
	    saved[0] == '\0')
		snprintf(saved, savedlen, "%s", to);
	return r;
}

int
klog_segment_truncate(klog_segment_t *s, const char *dir, int64_t pos,
    int64_t *landed, klog_err_t *err)
{
	char path[PATH_MAX];
	uint8_t *buf;
	int64_t good = 0;
	int r = 0;

	klog_segment_path(s, dir, path, sizeof(path));
	if (pos > s->size)
		pos = s->size;
	if (pos > 0) {
		if ((buf = malloc(RECOVER_CHUNK)) == NULL)
			return klog_err_set(err, -KLOG_ENOMEM,
			    "%s: out of memory", path);
		/* The bytes up to pos scanned as if the file ended there. */
		r = scan_valid(s, buf, pos, &good);
		free(buf);
		if (r < 0)
			return klog_err_set(err, r, "read %s: %s", path,
			    strerror(errno));
	}
	if (ftruncate(s->ent.fd, good) < 0)
		return klog_err_sys(err, "truncate", path);
	if (fsync(s->ent.fd) < 0)
		return klog_segment_sync_failed(err, path);
	s->size = good;
	/* Marks past the cut would name starts of entries to be written
	 * anew, anywhere. */
	while (s->nmarks > 0 && s->marks[s->nmarks - 1] >= good)
		s->nmarks--;
	klog_timeindex_cut(&s->times, good);
	*landed = good;
	return 0;
}

/* ---- the boundary check of a read ---- */

static int
not_boundary(klog_err_t *err, int64_t offset, const char *why)
{
	return klog_err_set(err, -KLOG_ENOTBOUNDARY,
	    "offset %lld: not a message boundary (%s)", (long long)offset,
	    why);
}

/* Whether the entry at p (whose length field is length, and whose bytes
 * are all there) has the CRC it says. */
static int
crc_ok(const uint8_t *p, uint32_t length)
{
	uint32_t hdr = p[4] == 0 ? KLOG_MAGIC0_HEADER : KLOG_MAGIC1_HEADER;

	return klog_entry_crc(p[4], 0, p + KLOG_LENGTH_SIZE + hdr,
	    length - hdr) == klog_be32(p + KLOG_LENGTH_SIZE + hdr - 4);
}

/*
 * A sane header with a bad CRC is either a corrupt message or bytes inside
 * one that look like a header.  It is taken for a corrupt message (served,
 * so that the reader reports the CRC mismatch at its offset rather than a
 * wrong offset) when it ends exactly at the segment's end or at another
 * whole entry, read in the same buffer, whose CRC is good.
 */
static int
followed_by_entry(const uint8_t *buf, size_t n, int64_t pos, uint32_t length,
    int64_t written)
{
	size_t next = KLOG_LENGTH_SIZE + (size_t)length;
	uint32_t len2;

	if (pos + (int64_t)next == written)
		return 1;
	if (next + KLOG_MSG_OVERHEAD > n)
		return 0;
	len2 = klog_entry_header_ok(buf + next, n - next);
	if (len2 == 0 || len2 > n - next - KLOG_LENGTH_SIZE)
		return 0;
	return crc_ok(buf + next, len2);
}

int
klog_segment_cached(int fd, int64_t pos, int64_t len)
{
#ifdef SYS_cachestat
	struct { uint64_t off, len; } r = { (uint64_t)pos, (uint64_t)len };
	struct {
		uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted,
		    nr_recently_evicted;
	} st;
	int64_t page = sysconf(_SC_PAGESIZE);

	if (len <= 0)
		return 1;
	if (syscall(SYS_cachestat, fd, &r, &st, 0) == 0)
		return st.nr_cache >= (uint64_t)((pos + len - 1) / page -
		    pos / page + 1);
	return -1;
#else
	(void)fd;
	(void)pos;
	(void)len;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * Up to want bytes at pos: what the page cache holds now, if that covers
 * an entry's header, else a read that waits.  A consumer's next fetch
 * after a cold read starts near the end of the last page sent; reading on
 * into the next page would wait for the disk on the broker's event loop,
 * ahead of the prefetch thread.  A read that would not wait still starts
 * reading a page it finds missing, so the pages after pos's own are asked
 * for only if they are all cached.  Without the rest, the entry's CRC is
 * just not checked here.
 */
static ssize_t
read_header(int fd, uint8_t *buf, size_t want, int64_t pos)
{
	int64_t page = sysconf(_SC_PAGESIZE);
	size_t own = (size_t)(page - pos % page);
	struct iovec iov = { buf, want };
	ssize_t n;

	if (want > own && klog_segment_cached(fd, pos + (int64_t)own,
	    (int64_t)(want - own)) != 1)
		iov.iov_len = own;
	while ((n = preadv2(fd, &iov, 1, pos, RWF_NOWAIT)) < 0 &&
	    errno == EINTR)
		;
	if (n >= (ssize_t)(KLOG_LENGTH_SIZE + KLOG_MAGIC1_HEADER) ||
	    (n > 0 && (size_t)n == want))
		return n;
	while ((n = pread(fd, buf, want, pos)) < 0 && errno == EINTR)
		;
	return n;
}

/*
 * One read of up to BOUNDARY_READ readable bytes (read_header()): the
 * header must be sane and the entry must end inside the segment; if all of
 * it was read, its CRC must match too, unless it is a corrupt message
 * (followed_by_entry()).
 */
int
klog_segment_check_boundary(int fd, int64_t pos, int64_t readable,
    int64_t written, int64_t offset, klog_err_t *err)
{
	size_t want = (size_t)min64((int64_t)BOUNDARY_READ, readable - pos);
	uint32_t length, hdr;
	uint8_t buf[BOUNDARY_READ];
	ssize_t n = read_header(fd, buf, want, pos);

	if (n < 0)
		return klog_err_set(err, -KLOG_EIO, "offset %lld: read: %s",
		    (long long)offset, strerror(errno));
	if (n < KLOG_LENGTH_SIZE + 1)
		return not_boundary(err, offset, "entry header cut");
	length = klog_be32(buf);
	hdr = buf[4] == 0 ? KLOG_MAGIC0_HEADER : buf[4] == KLOG_MAGIC2 ?
	    KLOG_MAGIC2_HEADER + KLOG_BATCH_BODY_HEADER : KLOG_MAGIC1_HEADER;
	if (length < hdr || length > KLOG_MAX_ENTRY_LENGTH)
		return not_boundary(err, offset, "impossible length");
	if (buf[4] > KLOG_MAGIC2)
		return not_boundary(err, offset, "bad magic byte");
	if (pos + KLOG_LENGTH_SIZE + length > written)
		return not_boundary(err, offset, "entry runs past the segment");
	if (KLOG_LENGTH_SIZE + (size_t)length <= (size_t)n &&
	    !crc_ok(buf, length) &&
	    !followed_by_entry(buf, (size_t)n, pos, length, written))
		return not_boundary(err, offset, "crc mismatch");
	return 0;
}

/* The index of the first mark after pos. */
static size_t
mark_after(const klog_segment_t *s, int64_t pos)
{
	size_t lo = 0, hi = s->nmarks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->marks[mid] <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void
klog_segment_mark(klog_segment_t *s, int64_t pos)
{
	size_t i = mark_after(s, pos);
	int64_t prev = i > 0 ? s->marks[i - 1] : 0;

	if (pos - prev < KLOG_SEGMENT_MARK_SPACING ||
	    (i < s->nmarks && s->marks[i] - pos < KLOG_SEGMENT_MARK_SPACING))
		return;
	if (s->nmarks == s->marks_cap) {
		size_t cap = s->marks_cap ? 2 * s->marks_cap : 16;
		int64_t *m = realloc(s->marks, cap * sizeof(*m));

		if (m == NULL)
			return;
		s->marks = m;
		s->marks_cap = cap;
	}
	memmove(s->marks + i + 1, s->marks + i,
	    (s->nmarks - i) * sizeof(*s->marks));
	s->marks[i] = pos;
	s->nmarks++;
}

int64_t
klog_segment_mark_before(const klog_segment_t *s, int64_t pos)
{
	size_t i = mark_after(s, pos);

	return i > 0 ? s->marks[i - 1] : 0;
}

/* Bytes read at a time by klog_segment_find_start(). */
#define SCAN_READ ((size_t)1 << 20)

/* Note pos in scan when it is a spacing past the last one noted; only the
 * last KLOG_SEGMENT_SCAN_MARKS are kept (the next scan goes on from the
 * last of them). */
static void
scan_note(klog_segment_scan_t *scan, int64_t pos, int64_t *last)
{
	if (scan == NULL || pos - *last < KLOG_SEGMENT_MARK_SPACING)
		return;
	*last = pos;
	if (scan->n == KLOG_SEGMENT_SCAN_MARKS) {
		memmove(scan->marks, scan->marks + 1,
		    (KLOG_SEGMENT_SCAN_MARKS - 1) * sizeof(*scan->marks));
		scan->n--;
	}
	scan->marks[scan->n++] = pos;
}

int
klog_segment_find_start(int fd, int64_t from, int64_t target,
    int64_t readable, int64_t *start, klog_segment_scan_t *scan,
    klog_err_t *err)
{
	uint8_t *buf;
	int64_t pos = from, last = from;
	int rc = 1;

	if (scan != NULL)
		scan->n = 0;
	if (target < from || target >= readable)
		return klog_err_set(err, -KLOG_ERANGE, "position %lld outside "
		    "[%lld, %lld)", (long long)target, (long long)from,
		    (long long)readable);
	if ((buf = malloc(SCAN_READ)) == NULL)
		return -KLOG_ENOMEM;
	while (rc > 0) {
		ssize_t n = pread(fd, buf, (size_t)min64((int64_t)SCAN_READ,
		    readable - pos), pos);
		size_t at = 0;

		if (n < 0) {
			rc = klog_err_set(err, -KLOG_EIO, "pread: %s",
			    strerror(errno));
			break;
		}
		/* Hop over whole entries; an entry longer than the read
		 * leaves at past n, and the next read starts at its end. */
		while (rc > 0 && at + KLOG_LENGTH_SIZE <= (size_t)n) {
			uint32_t length = klog_be32(buf + at);

			if (length < KLOG_MAGIC0_HEADER ||
			    length > KLOG_MAX_ENTRY_LENGTH)
				rc = klog_err_set(err, -KLOG_ECORRUPT,
				    "impossible entry length at position %lld",
				    (long long)pos);
			else if (pos + KLOG_LENGTH_SIZE + length > target)
				rc = 0;
			else {
				pos += KLOG_LENGTH_SIZE + length;
				at += KLOG_LENGTH_SIZE + length;
				scan_note(scan, pos, &last);
			}
		}
		if (rc > 0 && at == 0)
			rc = klog_err_set(err, -KLOG_ECORRUPT, "entry header cut "
			    "at position %lld", (long long)pos);
	}
	free(buf);
	if (rc == 0)
		*start = pos;
	return rc;
}
