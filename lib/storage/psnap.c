/*
 * Producer state snapshots and the log's scan after them (psnap.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "klog/storage/format.h"
#include "klog/storage/psnap.h"
#include "klog/storage/segment.h"

#define MAGIC "KLPS"
#define VERSION 1
#define HEADER 22                     /* magic .. count */
#define CRC_AT 6
#define PRODUCER 17                   /* id, timestamp, batch count */
#define BATCH 26
#define DIGITS 20
#define MAX_FILE ((size_t)256 << 20)  /* over 1.3 M producers: not ours */
#define SCAN_CHUNK ((size_t)1 << 20)
#define KEEP 2                        /* snapshots kept */

/* ---- bytes ---- */

static void
put16(klog_buf_t *b, uint16_t v)
{
	uint8_t p[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	klog_buf_put(b, p, 2);
}

static void
put32(klog_buf_t *b, uint32_t v)
{
	uint8_t p[4];

	klog_put_be32(p, v);
	klog_buf_put(b, p, 4);
}

static void
put64(klog_buf_t *b, uint64_t v)
{
	put32(b, (uint32_t)(v >> 32));
	put32(b, (uint32_t)v);
}

static uint64_t
be64(const uint8_t *p)
{
	return (uint64_t)klog_be32(p) << 32 | klog_be32(p + 4);
}

void
klog_psnap_encode(const klog_pstate_t *ps, int64_t offset, klog_buf_t *out)
{
	const klog_pstate_producer_t **v;
	const klog_pstate_producer_t *p;
	size_t n = klog_pstate_count(ps), pos = 0, start = out->len, k = 0;

	/* Ids increasing, so that a reader finds a repeated one cheaply. */
	if ((v = malloc((n + 1) * sizeof(*v))) == NULL) {
		out->failed = 1;
		return;
	}
	while ((p = klog_pstate_next(ps, &pos)) != NULL)
		v[k++] = p;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1]->id > v[j]->id; j--) {
			p = v[j];
			v[j] = v[j - 1];
			v[j - 1] = p;
		}
	klog_buf_put(out, MAGIC, 4);
	put16(out, VERSION);
	put32(out, 0);
	put64(out, (uint64_t)offset);
	put32(out, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		put64(out, (uint64_t)v[i]->id);
		put64(out, (uint64_t)v[i]->last_ts);
		klog_buf_put(out, &(uint8_t){ (uint8_t)v[i]->n }, 1);
		for (int j = 0; j < v[i]->n; j++) {
			const klog_pstate_batch_t *b = &v[i]->b[j];

			put16(out, (uint16_t)b->epoch);
			put32(out, (uint32_t)b->first_seq);
			put32(out, (uint32_t)b->last_seq);
			put64(out, (uint64_t)b->offset);
			put64(out, (uint64_t)b->last_offset);
		}
	}
	free(v);
	if (out->failed)
		return;
	klog_put_be32(out->data + start + CRC_AT, klog_crc32c(0, out->data +
	    start + CRC_AT + 4, out->len - start - CRC_AT - 4));
}

/* One producer at q[0..left) (offsets below below): its size, or 0. */
static size_t
decode_producer(const uint8_t *q, size_t left, int64_t below,
    klog_pstate_producer_t *p)
{
	size_t size;

	if (left < PRODUCER)
		return 0;
	p->id = (int64_t)be64(q);
	p->last_ts = (int64_t)be64(q + 8);
	p->n = q[16];
	size = PRODUCER + (size_t)p->n * BATCH;
	if (p->id < 0 || p->n < 1 || p->n > KLOG_PSTATE_BATCHES ||
	    left < size)
		return 0;
	for (int j = 0; j < p->n; j++) {
		const uint8_t *r = q + PRODUCER + (size_t)j * BATCH;
		klog_pstate_batch_t *b = &p->b[j];

		b->epoch = (int16_t)(r[0] << 8 | r[1]);
		b->first_seq = (int32_t)klog_be32(r + 2);
		b->last_seq = (int32_t)klog_be32(r + 6);
		b->offset = (int64_t)be64(r + 10);
		b->last_offset = (int64_t)be64(r + 18);
		if (b->epoch < 0 || b->first_seq < 0 || b->last_seq < 0 ||
		    b->offset < 0 || b->last_offset < b->offset ||
		    b->last_offset >= below || b->epoch != p->b[0].epoch ||
		    (j > 0 && b->offset <= p->b[j - 1].last_offset))
			return 0;
	}
	return size;
}

int
klog_psnap_decode(const uint8_t *buf, size_t len, klog_pstate_t *ps,
    int64_t *offset)
{
	size_t pos = HEADER;
	int64_t prev = -1;
	uint32_t count;

	if (len < HEADER || memcmp(buf, MAGIC, 4) != 0 ||
	    (buf[4] << 8 | buf[5]) != VERSION ||
	    klog_be32(buf + CRC_AT) != klog_crc32c(0, buf + CRC_AT + 4,
	    len - CRC_AT - 4))
		return -KLOG_ECORRUPT;
	*offset = (int64_t)be64(buf + 10);
	count = klog_be32(buf + 18);
	if (*offset < 0)
		return -KLOG_ECORRUPT;
	for (uint32_t i = 0; i < count; i++) {
		klog_pstate_producer_t p;
		size_t size = decode_producer(buf + pos, len - pos, *offset, &p);
		int rc;

		if (size == 0 || p.id <= prev)
			return -KLOG_ECORRUPT;
		if ((rc = klog_pstate_put(ps, &p)) < 0)
			return rc == -KLOG_EEXIST ? -KLOG_ECORRUPT : rc;
		prev = p.id;
		pos += size;
	}
	return pos == len ? 0 : -KLOG_ECORRUPT;
}

/* ---- files ---- */

/* The offset a snapshot's name says, or -1 for another name. */
static int64_t
name_offset(const char *name)
{
	int64_t v = 0;

	if (strlen(name) != DIGITS + strlen(KLOG_PSNAP_SUFFIX) ||
	    strcmp(name + DIGITS, KLOG_PSNAP_SUFFIX) != 0)
		return -1;
	for (int i = 0; i < DIGITS; i++) {
		if (name[i] < '0' || name[i] > '9' ||
		    v > (INT64_MAX - (name[i] - '0')) / 10)
			return -1;
		v = v * 10 + (name[i] - '0');
	}
	return v;
}

static void
path_of(const char *dir, int64_t offset, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%0*lld" KLOG_PSNAP_SUFFIX, dir, DIGITS,
	    (long long)offset);
}

static int
cmp_off(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The snapshots of dir, oldest first: *out the caller's to free(). */
static int
list(const char *dir, int64_t **out, size_t *n, klog_err_t *err)
{
	int64_t *v = NULL, off;
	size_t cap = 0;
	struct dirent *de;
	DIR *d;

	*n = 0;
	if ((d = opendir(dir)) == NULL)
		return klog_err_sys(err, "opendir", dir);
	while ((de = readdir(d)) != NULL) {
		if ((off = name_offset(de->d_name)) < 0)
			continue;
		if (klog_buf_grow((void **)&v, &cap, (*n + 1) *
		    sizeof(*v)) < 0) {
			closedir(d);
			free(v);
			return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		}
		v[(*n)++] = off;
	}
	closedir(d);
	if (*n > 1)
		qsort(v, *n, sizeof(*v), cmp_off);
	*out = v;
	return 0;
}

static int
drop(const char *dir, int64_t offset, klog_err_t *err)
{
	char path[PATH_MAX];

	path_of(dir, offset, path, sizeof(path));
	if (unlink(path) < 0 && errno != ENOENT)
		return klog_err_sys(err, "unlink", path);
	return 0;
}

int
klog_psnap_drop_above(klog_log_t *log, int64_t offset, klog_err_t *err)
{
	int64_t *v;
	size_t n;
	int rc;

	if ((rc = list(klog_log_dir(log), &v, &n, err)) < 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++)
		if (v[i] > offset)
			rc = drop(klog_log_dir(log), v[i], err);
	free(v);
	return rc;
}

/*
 * Write buf whole to path through a temporary file, synced and renamed
 * with the directory synced; or, with log, renamed unsynced and handed to
 * the log for its next flush to sync (klog_log_sync_later()).
 */
static int
write_file(const char *dir, const char *path, const klog_buf_t *buf,
    klog_log_t *log, klog_err_t *err)
{
	char tmp[PATH_MAX + 8];
	ssize_t w = 0;
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) < 0)
		return klog_err_sys(err, "open", tmp);
	for (size_t done = 0; done < buf->len && w >= 0; done += (size_t)w)
		if ((w = write(fd, buf->data + done, buf->len - done)) < 0 &&
		    errno == EINTR)
			w = 0;
	if (w < 0)
		rc = klog_err_sys(err, "write", tmp);
	else if (log == NULL && fsync(fd) < 0)
		rc = klog_err_sys(err, "fsync", tmp);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = klog_err_sys(err, "rename", tmp);
	if (rc < 0 || log == NULL)
		close(fd);
	if (rc < 0) {
		(void)unlink(tmp);
		return rc;
	}
	if (log != NULL) {
		klog_log_sync_later(log, fd);
		return 0;
	}
	return klog_segment_sync_dir(dir, err);
}

int
klog_psnap_write(klog_log_t *log, const klog_pstate_t *ps, int64_t offset,
    int at_flush, klog_err_t *err)
{
	const char *dir = klog_log_dir(log);
	char path[PATH_MAX];
	klog_buf_t buf;
	int64_t *v;
	size_t n;
	int rc;

	klog_buf_init(&buf);
	klog_psnap_encode(ps, offset, &buf);
	if (buf.failed) {
		klog_buf_free(&buf);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	path_of(dir, offset, path, sizeof(path));
	rc = write_file(dir, path, &buf, at_flush ? log : NULL, err);
	klog_buf_free(&buf);
	if (rc < 0 || (rc = list(dir, &v, &n, err)) < 0)
		return rc;
	for (size_t i = 0; i + KEEP < n && rc == 0; i++)
		rc = drop(dir, v[i], err);
	free(v);
	return rc;
}

/* ---- rebuilding ---- */

/* Read the snapshot at offset into ps: 0, or -KLOG_ECORRUPT for a file
 * that does not read (ps then partly filled). */
static int
load_one(const char *dir, int64_t offset, klog_pstate_t *ps)
{
	char path[PATH_MAX];
	uint8_t *buf = NULL;
	struct stat st;
	int64_t said;
	ssize_t r;
	int fd, rc = -KLOG_ECORRUPT;

	path_of(dir, offset, path, sizeof(path));
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -KLOG_ECORRUPT;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < HEADER ||
	    (size_t)st.st_size > MAX_FILE ||
	    (buf = malloc((size_t)st.st_size)) == NULL)
		goto out;
	r = pread(fd, buf, (size_t)st.st_size, 0);
	if (r != st.st_size)
		goto out;
	rc = klog_psnap_decode(buf, (size_t)r, ps, &said);
	if (rc == 0 && said != offset)
		rc = -KLOG_ECORRUPT;
out:
	free(buf);
	close(fd);
	return rc;
}

/* Read n bytes at pos of fd whole: 0 or -1. */
static int
read_all(int fd, uint8_t *buf, size_t n, int64_t pos)
{
	while (n > 0) {
		ssize_t r = pread(fd, buf, n, pos);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		buf += r;
		n -= (size_t)r;
		pos += r;
	}
	return 0;
}

/* Record every producer batch of log from offset to end. */
static int
scan(klog_log_t *log, int64_t offset, int64_t end, klog_pstate_t *ps,
    int64_t *scanned, klog_err_t *err)
{
	uint8_t *buf = malloc(SCAN_CHUNK);
	int64_t from = offset;
	int rc = 0;

	if (buf == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	while (offset < end && rc == 0) {
		klog_log_slice_t sl;
		size_t pos = 0, size, got;

		if ((rc = klog_log_read(log, offset, SCAN_CHUNK, &sl, err)) < 0)
			break;
		got = sl.len;
		if (got > 0 && read_all(sl.fd, buf, got, sl.file_pos) < 0)
			rc = klog_err_sys(err, "read", klog_log_dir(log));
		klog_log_slice_release(&sl);
		if (got == 0 || rc < 0)
			break;
		/* An entry longer than the chunk counts by its header. */
		while (got - pos >= KLOG_LENGTH_SIZE && rc == 0) {
			size = KLOG_LENGTH_SIZE + klog_be32(buf + pos);
			if (size > got - pos && (pos > 0 || got <
			    KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER +
			    KLOG_BATCH_BODY_HEADER))
				break;
			rc = klog_pstate_update_entry(ps, buf + pos,
			    size < got - pos ? size : got - pos,
			    offset + (int64_t)pos);
			pos += size;
		}
		if (rc < 0)
			rc = klog_err_set(err, rc, "out of memory");
		else if (pos == 0)
			rc = klog_err_set(err, -KLOG_ECORRUPT, "%s: offset %lld: "
			    "an entry cut short", klog_log_dir(log),
			    (long long)offset);
		offset += (int64_t)pos;
	}
	free(buf);
	*scanned = offset - from;
	return rc;
}

int
klog_psnap_load(klog_log_t *log, klog_pstate_t *ps, int64_t now_ms,
    int64_t max_idle_ms, klog_psnap_info_t *info, klog_err_t *err)
{
	const char *dir = klog_log_dir(log);
	int64_t end = klog_log_flushed_end(log), start = klog_log_start(log);
	int64_t *v, from = start;
	size_t n;
	int rc;

	*info = (klog_psnap_info_t){ .loaded = -1 };
	if ((rc = list(dir, &v, &n, err)) < 0)
		return rc;
	for (size_t i = n; i-- > 0 && rc == 0;) {
		if (v[i] > end) {
			rc = drop(dir, v[i], err);
			continue;
		}
		if (load_one(dir, v[i], ps) == 0) {
			info->loaded = v[i];
			from = v[i] > start ? v[i] : start;
			break;
		}
		info->bad++;
		klog_pstate_truncate(ps, INT64_MIN);
	}
	free(v);
	if (rc == 0)
		rc = scan(log, from, end, ps, &info->scanned, err);
	klog_pstate_expire(ps, now_ms, max_idle_ms);
	return rc;
}
