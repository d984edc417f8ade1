/*
 * The walk behind klog-dump.  One reader per file: a chunk buffer that
 * always starts at an entry boundary, refilled from the file as the message
 * iterator consumes it.  An entry cut by the chunk's end is moved to the
 * front and the rest read behind it; only at the end of the file is a cut
 * entry a partial tail.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "klog/storage/dump.h"
#include "klog/storage/epochs.h"
#include "klog/storage/names.h"
#include "klog/storage/record.h"

#define COUNT_REACHED 1

void
klog_dump_opts_default(klog_dump_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->base = -1;
	o->start = -1;
	o->count = -1;
}

typedef struct reader {
	const klog_dump_opts_t *o;
	klog_dump_cb cb;
	void *arg;
	klog_err_t *err;
	klog_dump_event_t ev;     /* file, base, named, last for every event */
	klog_dump_summary_t sum;
	int64_t reported;         /* top-level entries reported */
	int fd;
	int eof;
	uint8_t *buf;             /* owned; buf[0] is an entry boundary */
	size_t cap, have;
	int64_t fpos;             /* file position of buf[0] */
} reader_t;

static int
emit(reader_t *r, int kind, int64_t offset, const klog_msg_t *m,
    const char *what)
{
	klog_dump_event_t ev = r->ev;

	ev.kind = kind;
	ev.offset = offset;
	ev.msg = m;
	ev.what = what;
	return r->cb(r->arg, &ev);
}

/* Read until the buffer is full or the file ends. */
static int
fill(reader_t *r)
{
	ssize_t n;

	while (r->have < r->cap && !r->eof) {
		n = read(r->fd, r->buf + r->have, r->cap - r->have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return klog_err_set(r->err, klog_errno_code(errno),
			    "%s: read: %s", r->ev.file, strerror(errno));
		if (n == 0)
			r->eof = 1;
		r->have += (size_t)n;
	}
	return 0;
}

/* Drop the first n bytes of the buffer: they have been dealt with. */
static void
advance(reader_t *r, size_t n)
{
	memmove(r->buf, r->buf + n, r->have - n);
	r->have -= n;
	r->fpos += (int64_t)n;
}

/* The buffer starts with a cut entry: make room for all of it.  The
 * iterator has checked its length against KLOG_MAX_ENTRY_LENGTH. */
static int
make_room(reader_t *r)
{
	size_t need;
	uint8_t *p;

	if (r->have < KLOG_LENGTH_SIZE)
		return 0;
	need = KLOG_LENGTH_SIZE + (size_t)klog_be32(r->buf);
	if (need <= r->cap)
		return 0;
	if ((p = realloc(r->buf, need)) == NULL)
		return klog_err_set(r->err, -KLOG_ENOMEM,
		    "%s: no memory for a %zu-byte entry", r->ev.file, need);
	r->buf = p;
	r->cap = need;
	return 0;
}

static int64_t
buf_offset(const reader_t *r)
{
	return r->ev.base + r->fpos;
}

static int
not_boundary(reader_t *r, int64_t start)
{
	return klog_err_set(r->err, -KLOG_ENOTBOUNDARY,
	    "%s: offset %" PRId64 " is not a message boundary", r->ev.file,
	    start);
}

/*
 * Whether buf[0] is a whole magic-2 entry with a sane length.  One that
 * the iterator refuses for its batch's fields (format.h: its attrs byte,
 * lastOffsetDelta, count, codec, a transaction's bits) is still framed by
 * its length, as an entry with a bad CRC is.
 */
static int
whole_batch(const reader_t *r)
{
	uint32_t length = klog_entry_header_ok(r->buf, r->have);

	return length != 0 && r->buf[4] == KLOG_MAGIC2 &&
	    length <= r->have - KLOG_LENGTH_SIZE;
}

/*
 * Walk entry lengths (no CRC) until buf[0] is the entry at start.  An entry
 * that cannot be framed before start leaves the buffer there, so that the
 * dump reports that corruption rather than silently nothing; a magic-2
 * entry refused for its batch's fields is framed by its length.
 */
static int
skip_to(reader_t *r, int64_t start)
{
	klog_iter_t it;
	klog_msg_t m;
	int64_t next;
	int rc;

	for (;;) {
		if ((rc = fill(r)) < 0)
			return rc;
		klog_iter_init(&it, r->buf, r->have, buf_offset(r),
		    KLOG_ITER_NOCRC, 0);
		while ((rc = klog_iter_next(&it, &m)) == 1) {
			if (m.offset == start) {
				advance(r, (size_t)(m.offset - buf_offset(r)));
				return 0;
			}
			if (m.next_offset > start)
				return not_boundary(r, start);
		}
		advance(r, (size_t)(klog_iter_offset(&it) - buf_offset(r)));
		if (buf_offset(r) != start && rc < 0 && rc != -KLOG_EPARTIAL &&
		    whole_batch(r)) {
			next = buf_offset(r) + KLOG_LENGTH_SIZE +
			    klog_be32(r->buf);
			if (next > start)
				return not_boundary(r, start);
			advance(r, (size_t)(next - buf_offset(r)));
			continue;
		}
		if (buf_offset(r) == start || (rc < 0 && rc != -KLOG_EPARTIAL))
			return 0;
		if (r->eof)
			return not_boundary(r, start);
		if (rc == -KLOG_EPARTIAL && (rc = make_room(r)) < 0)
			return rc;
	}
}

/* Report the inner messages of the valid gzip wrapper *w. */
static int
open_wrapper(reader_t *r, const klog_msg_t *w)
{
	klog_iter_t it;
	klog_msg_t m;
	uint64_t n = 0;
	int rc, cbrc = 0;

	klog_iter_init(&it, r->buf + (size_t)(w->offset - buf_offset(r)),
	    KLOG_LENGTH_SIZE + (size_t)w->length, w->offset, KLOG_ITER_DEEP,
	    r->o->max_inflate);
	while ((rc = klog_iter_next(&it, &m)) == 1) {
		n++;
		if (!m.valid)
			r->sum.crc_errors++;
		if ((cbrc = emit(r, KLOG_DUMP_MESSAGE, m.offset, &m, NULL)) < 0)
			goto out;
	}
	if (rc == 0) {
		/* The wrapper was counted as one message: it is n. */
		r->sum.messages = r->sum.messages - 1 + n;
	} else if (rc == -KLOG_ENOMEM) {
		cbrc = klog_err_set(r->err, rc, "%s: offset %" PRId64
		    ": no memory to inflate the wrapper", r->ev.file,
		    w->offset);
	} else if (rc == -KLOG_EUNSUPPORTED || rc == -KLOG_ETOOBIG) {
		r->sum.unchecked++;
		cbrc = emit(r, KLOG_DUMP_UNCHECKED, w->offset, w,
		    klog_iter_error(&it));
	} else {
		r->sum.corrupt++;
		cbrc = emit(r, KLOG_DUMP_CORRUPT, w->offset, w,
		    klog_iter_error(&it));
	}
out:
	klog_iter_free(&it);
	return cbrc;
}

/*
 * One top-level entry: 0 to go on, COUNT_REACHED, or an error.  bad says
 * why a magic-2 entry's batch is not one klog stores (its records are then
 * not opened), or is NULL.
 */
static int
on_entry(reader_t *r, const klog_msg_t *m, const char *bad)
{
	klog_batch_t h;
	int rc;

	if (r->o->count >= 0 && r->reported >= r->o->count)
		return COUNT_REACHED;
	r->reported++;
	r->sum.entries++;
	r->sum.messages++;
	r->sum.entry_bytes += KLOG_LENGTH_SIZE + (uint64_t)m->length;
	r->sum.payload_bytes += m->payload_len;
	if (m->codec <= KLOG_CODEC_MAX)
		r->sum.codecs[m->codec]++;
	r->sum.next_offset = m->next_offset;
	if (!m->valid)
		r->sum.crc_errors++;
	if (m->magic == KLOG_MAGIC2)
		r->sum.batches++;
	if ((rc = emit(r, KLOG_DUMP_MESSAGE, m->offset, m, NULL)) < 0)
		return rc;
	if (bad != NULL) {
		r->sum.corrupt++;
		return emit(r, KLOG_DUMP_CORRUPT, m->offset, m, bad);
	}
	if (!m->valid)
		return 0;
	if (m->magic == KLOG_MAGIC2 &&
	    klog_batch_read(m->payload, m->payload_len, &h) == 0)
		r->sum.records += (uint64_t)h.count;
	/* A magic-2 entry's records are opened like a wrapper's messages,
	 * compressed or not. */
	if ((r->o->flags & KLOG_DUMP_DEEP) && (m->magic == KLOG_MAGIC2 ||
	    m->codec != KLOG_CODEC_NONE))
		return open_wrapper(r, m);
	return 0;
}

/*
 * The whole magic-2 entry at buf[0], refused by the iterator for why:
 * shown as the iterator shows an entry, reported, and stepped over.
 * Returns what on_entry() does.
 */
static int
on_bad_batch(reader_t *r, const char *why)
{
	klog_msg_t m;
	int rc;

	memset(&m, 0, sizeof(m));
	m.offset = buf_offset(r);
	m.length = klog_be32(r->buf);
	m.next_offset = m.offset + KLOG_LENGTH_SIZE + m.length;
	m.magic = KLOG_MAGIC2;
	m.attributes = r->buf[5];
	m.crc_stored = klog_be32(r->buf + 6);
	m.payload = r->buf + KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER;
	m.payload_len = m.length - KLOG_MAGIC2_HEADER;
	m.codec = m.payload[KLOG_BATCH_ATTRS_AT + 1] & KLOG_BATCH_CODEC_MASK;
	m.crc_computed = klog_crc32c(0, m.payload, m.payload_len);
	m.valid = m.crc_computed == m.crc_stored;
	m.timestamp = KLOG_NO_TIMESTAMP;
	m.key_len = -1;
	m.batch = m.payload;
	m.batch_len = m.payload_len;
	if ((rc = on_entry(r, &m, why)) == 0)
		advance(r, KLOG_LENGTH_SIZE + (size_t)m.length);
	return rc;
}

/* The size of the entry at buf[0] by its length field, or -1. */
static int64_t
entry_need(const reader_t *r)
{
	if (r->have < KLOG_LENGTH_SIZE)
		return -1;
	return KLOG_LENGTH_SIZE + (int64_t)klog_be32(r->buf);
}

/*
 * Zeros where an entry should start are what a write the disk never got
 * reads back as (klog(7), "A failing disk"): say how many, not just that
 * the length is too small.  why otherwise.
 */
static const char *
zeros_why(const reader_t *r, const char *why, char *buf, size_t len)
{
	size_t n = 0;

	while (n < r->have && r->buf[n] == 0)
		n++;
	if (n < KLOG_LENGTH_SIZE)
		return why;
	snprintf(buf, len, "%s%zu zero bytes, as a write the disk never got "
	    "leaves (klog(7), A FAILING DISK)", n == r->have && !r->eof ?
	    "at least " : "", n);
	return buf;
}

/* The entry at buf[0] cannot be read; nothing after it can be framed. */
static int
corrupt_here(reader_t *r, const char *why)
{
	klog_dump_event_t ev = r->ev;
	char text[128];

	r->sum.corrupt++;
	ev.kind = KLOG_DUMP_CORRUPT;
	ev.offset = buf_offset(r);
	ev.what = zeros_why(r, why, text, sizeof(text));
	ev.need = entry_need(r);
	return r->cb(r->arg, &ev);
}

/*
 * The file ends inside the entry at buf[0].  A cut entry whose visible
 * header is already impossible is corruption, not an interrupted write.
 */
static int
on_tail(reader_t *r)
{
	klog_dump_event_t ev = r->ev;
	const char *why = NULL;

	if (r->have > KLOG_LENGTH_SIZE && r->buf[4] > KLOG_MAGIC2)
		why = "unknown magic byte";
	else if (r->have > KLOG_LENGTH_SIZE + 1 && r->buf[4] == 1 &&
	    (r->buf[5] & KLOG_CODEC_MASK) == KLOG_CODEC_MASK)
		why = "unknown compression codec";
	else if (r->have > KLOG_LENGTH_SIZE && r->buf[4] == KLOG_MAGIC2 &&
	    klog_be32(r->buf) < KLOG_MAGIC2_HEADER + KLOG_BATCH_BODY_HEADER)
		why = "entry length too small";
	else if (r->have > KLOG_LENGTH_SIZE + 1 && r->buf[4] == KLOG_MAGIC2 &&
	    (r->buf[5] & KLOG_BATCH_CODEC_MASK) > KLOG_CODEC_MAX)
		why = "unknown compression codec";
	if (why != NULL)
		return corrupt_here(r, why);
	r->sum.partial_bytes = (int64_t)r->have;
	ev.kind = KLOG_DUMP_PARTIAL;
	ev.offset = buf_offset(r);
	ev.size = (int64_t)r->have;
	ev.need = entry_need(r);
	return r->cb(r->arg, &ev);
}

static int
dump_entries(reader_t *r)
{
	klog_iter_t it;
	klog_msg_t m;
	int rc;

	r->sum.first_offset = r->sum.next_offset = buf_offset(r);
	for (;;) {
		if ((rc = fill(r)) < 0)
			return rc;
		klog_iter_init(&it, r->buf, r->have, buf_offset(r), 0, 0);
		while ((rc = klog_iter_next(&it, &m)) == 1)
			if ((rc = on_entry(r, &m, NULL)) != 0)
				return rc == COUNT_REACHED ? 0 : rc;
		advance(r, (size_t)(klog_iter_offset(&it) - buf_offset(r)));
		if (rc < 0 && rc != -KLOG_EPARTIAL && whole_batch(r)) {
			if ((rc = on_bad_batch(r, klog_iter_error(&it))) != 0)
				return rc == COUNT_REACHED ? 0 : rc;
			continue;
		}
		if (rc == 0 && r->eof)
			return 0;
		if (rc == -KLOG_EPARTIAL && r->eof)
			return on_tail(r);
		if (rc == -KLOG_EPARTIAL) {
			if ((rc = make_room(r)) < 0)
				return rc;
			continue;
		}
		if (rc < 0)
			return corrupt_here(r, klog_iter_error(&it));
	}
}

/* Check o->start against the file's offsets [base, base + size]. */
static int
check_start(reader_t *r, int64_t start, int64_t size)
{
	int64_t base = r->ev.base;

	if (start < base || (size >= 0 && start - base > size))
		return klog_err_set(r->err, -KLOG_ERANGE, "%s: offset %" PRId64
		    " is outside the file (offsets %" PRId64 " to %" PRId64 ")",
		    r->ev.file, start, base, size >= 0 ? base + size : base);
	return 0;
}

static int
dump_file(reader_t *r, int64_t start)
{
	struct stat st;
	int rc;

	if ((r->fd = open(r->ev.file, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0)
		return klog_err_sys(r->err, NULL, r->ev.file);
	if (fstat(r->fd, &st) < 0) {
		rc = klog_err_sys(r->err, NULL, r->ev.file);
		goto out;
	}
	r->ev.size = S_ISREG(st.st_mode) ? (int64_t)st.st_size : -1;
	if (start >= 0 && (rc = check_start(r, start, r->ev.size)) < 0)
		goto out;
	(void)posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	r->cap = r->o->chunk ? r->o->chunk : KLOG_DUMP_CHUNK;
	if (r->cap < KLOG_MSG_OVERHEAD)
		r->cap = KLOG_MSG_OVERHEAD;
	if ((r->buf = malloc(r->cap)) == NULL) {
		rc = klog_err_set(r->err, -KLOG_ENOMEM, "%s: no memory",
		    r->ev.file);
		goto out;
	}
	if ((rc = emit(r, KLOG_DUMP_FILE, r->ev.base, NULL, NULL)) < 0)
		goto out;
	if (start > r->ev.base && (rc = skip_to(r, start)) < 0)
		goto out;
	if ((rc = dump_entries(r)) < 0)
		goto out;
	{
		klog_dump_event_t ev = r->ev;

		ev.kind = KLOG_DUMP_END;
		ev.offset = r->sum.next_offset;
		ev.summary = &r->sum;
		rc = r->cb(r->arg, &ev);
	}
out:
	close(r->fd);
	free(r->buf);
	r->buf = NULL;
	return rc;
}

/* Dump one file as base, from start (-1: its beginning). */
static int
dump_one(const char *path, int64_t base, int named, int last, int64_t start,
    const klog_dump_opts_t *o, klog_dump_cb cb, void *arg, klog_err_t *err)
{
	reader_t r;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.cb = cb;
	r.arg = arg;
	r.err = err;
	r.ev.file = path;
	r.ev.base = base;
	r.ev.named = named;
	r.ev.last = last;
	r.ev.need = -1;
	return dump_file(&r, start);
}

/* The segments of dir as klog-dump sees them (klog_names_segments(),
 * inspecting: links followed, other files skipped), by base offset. */
static int
list_segments(const char *dir, klog_names_seg_t **out, size_t *n,
    klog_err_t *err)
{
	int dfd, rc;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return klog_err_sys(err, NULL, dir);
	rc = klog_names_segments(dfd, dir, KLOG_NAMES_INSPECT, out, n, err);
	close(dfd);
	return rc;
}

/* The segment to start at: the last whose base is at most start. */
static size_t
first_segment(const klog_names_seg_t *s, size_t n, int64_t start)
{
	size_t i = 0;

	while (start >= 0 && i + 1 < n && s[i + 1].info.base <= start)
		i++;
	return i;
}

/* The walk of a directory with epochs: each epoch start must be where an
 * entry starts. */
struct epoch_walk {
	klog_dump_cb cb;
	void *arg;
	const klog_epochs_t *e;
	size_t next;                /* the next epoch to meet */
	const char *file;
	int64_t end;                /* after the last entry met */
	int started;
	int check;                  /* every entry is met (no -n) */
};

static int
epoch_miss(struct epoch_walk *w, int64_t upto)
{
	klog_dump_event_t ev;
	klog_epoch_t ep;
	int rc;

	while (w->next < klog_epochs_count(w->e) &&
	    (ep = klog_epochs_get(w->e, w->next)).start < upto) {
		memset(&ev, 0, sizeof(ev));
		ev.kind = KLOG_DUMP_CORRUPT;
		ev.file = w->file;
		ev.offset = ep.start;
		ev.need = -1;
		ev.epoch = ep.epoch;
		ev.what = "a leader epoch starts inside an entry or past the end";
		w->next++;
		if ((rc = w->cb(w->arg, &ev)) < 0)
			return rc;
	}
	return 0;
}

static int
epoch_cb(void *arg, const klog_dump_event_t *ev)
{
	struct epoch_walk *w = arg;
	int rc;

	w->file = ev->file;
	/* Epochs older than the retained log: nothing left to check. */
	if (ev->kind == KLOG_DUMP_FILE && !w->started) {
		w->started = 1;
		w->end = ev->base;
		while (w->next < klog_epochs_count(w->e) &&
		    klog_epochs_get(w->e, w->next).start < ev->base)
			w->next++;
	}
	if (w->check && ev->kind == KLOG_DUMP_MESSAGE && ev->msg->depth == 0) {
		w->end = ev->msg->next_offset;
		if ((rc = epoch_miss(w, ev->offset)) < 0)
			return rc;
		if (w->next < klog_epochs_count(w->e) &&
		    klog_epochs_get(w->e, w->next).start == ev->offset)
			w->next++;
	}
	return w->cb(w->arg, ev);
}

/* Report dir's epochs; *e NULL when it has none. */
static int
dir_epochs(const char *dir, const klog_dump_opts_t *o, klog_dump_cb cb,
    void *arg, klog_epochs_t **e, klog_err_t *err)
{
	klog_dump_event_t ev;
	int rc;

	*e = NULL;
	if ((rc = klog_epochs_open(dir, e, err)) == -KLOG_ECORRUPT) {
		memset(&ev, 0, sizeof(ev));
		ev.kind = KLOG_DUMP_CORRUPT;
		ev.file = dir;
		ev.offset = -1;
		ev.need = -1;
		ev.what = "its " KLOG_EPOCHS_FILE " file does not parse";
		return cb(arg, &ev);
	}
	if (rc < 0)
		return rc;
	if (klog_epochs_count(*e) == 0) {
		klog_epochs_free(*e);
		*e = NULL;
		return 0;
	}
	for (size_t i = 0; i < klog_epochs_count(*e); i++) {
		klog_epoch_t ep = klog_epochs_get(*e, i);

		if (o->start >= 0 && i + 1 < klog_epochs_count(*e) &&
		    klog_epochs_get(*e, i + 1).start <= o->start)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.kind = KLOG_DUMP_EPOCH;
		ev.file = dir;
		ev.offset = ep.start;
		ev.epoch = ep.epoch;
		ev.need = -1;
		if ((rc = cb(arg, &ev)) < 0)
			return rc;
	}
	return 0;
}

static int dump_segments(const char *dir, const klog_dump_opts_t *o,
    klog_dump_cb cb, void *arg, klog_err_t *err);

static int
dump_dir(const char *dir, const klog_dump_opts_t *o, klog_dump_cb cb,
    void *arg, klog_err_t *err)
{
	struct epoch_walk w = { cb, arg, NULL, 0, dir, 0, 0, o->count < 0 };
	klog_epochs_t *e;
	int rc;

	if ((rc = dir_epochs(dir, o, cb, arg, &e, err)) < 0 || e == NULL)
		return rc < 0 ? rc : dump_segments(dir, o, cb, arg, err);
	w.e = e;
	/* Epochs before where the walk starts are not looked for. */
	while (o->start >= 0 && w.next < klog_epochs_count(e) &&
	    klog_epochs_get(e, w.next).start < o->start)
		w.next++;
	if ((rc = dump_segments(dir, o, epoch_cb, &w, err)) == 0 &&
	    w.check && (rc = epoch_miss(&w, w.end)) == 0) {
		/* A new leader's epoch that has written nothing yet. */
		while (w.next < klog_epochs_count(e) &&
		    klog_epochs_get(e, w.next).start == w.end)
			w.next++;
		rc = epoch_miss(&w, INT64_MAX);
	}
	klog_epochs_free(e);
	return rc;
}

static int
dump_segments(const char *dir, const klog_dump_opts_t *o, klog_dump_cb cb,
    void *arg, klog_err_t *err)
{
	const char *sep = dir[strlen(dir) - 1] == '/' ? "" : "/";
	const klog_segment_info_t *seg, *prev;
	char path[PATH_MAX], name[KLOG_NAMES_SEGMENT_MAX];
	klog_names_seg_t *s = NULL;
	size_t n = 0, i;
	int64_t end;
	int rc;

	if ((rc = list_segments(dir, &s, &n, err)) < 0)
		return rc;
	if (n == 0) {
		rc = klog_err_set(err, -KLOG_EINVAL, "%s: no segment files",
		    dir);
		goto out;
	}
	end = s[n - 1].info.base + s[n - 1].info.size;
	if (o->start >= 0 && (o->start < s[0].info.base || o->start > end)) {
		rc = klog_err_set(err, -KLOG_ERANGE, "%s: offset %" PRId64
		    " is outside the partition (offsets %" PRId64 " to %"
		    PRId64 ")", dir, o->start, s[0].info.base, end);
		goto out;
	}
	for (i = first_segment(s, n, o->start); i < n; i++) {
		seg = &s[i].info;
		/* The name it was listed under: parsing is exact. */
		klog_names_segment_format(seg->base, s[i].kafka, name,
		    sizeof(name));
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", dir, sep,
		    name) >= sizeof(path)) {
			rc = klog_err_set(err, -KLOG_ETOOBIG,
			    "%s/%s: path too long", dir, name);
			goto out;
		}
		prev = i > 0 ? &s[i - 1].info : NULL;
		if (prev != NULL && seg->base != prev->base + prev->size) {
			klog_dump_event_t ev;

			memset(&ev, 0, sizeof(ev));
			ev.kind = KLOG_DUMP_GAP;
			ev.file = path;
			ev.base = seg->base;
			ev.named = 1;
			ev.last = i + 1 == n;
			ev.offset = seg->base;
			ev.size = prev->base + prev->size;
			ev.need = -1;
			if ((rc = cb(arg, &ev)) < 0)
				goto out;
		}
		rc = dump_one(path, seg->base, 1, i + 1 == n,
		    o->start > seg->base ? o->start : -1, o, cb, arg, err);
		if (rc < 0)
			goto out;
	}
out:
	free(s);
	return rc;
}

int
klog_dump_path(const char *path, const klog_dump_opts_t *o,
    klog_dump_cb cb, void *arg, klog_err_t *err)
{
	const char *name = strrchr(path, '/');
	struct stat st;
	int64_t base = 0;
	int named = 0;

	if (stat(path, &st) < 0)
		return klog_err_sys(err, NULL, path);
	if (S_ISDIR(st.st_mode))
		return dump_dir(path, o, cb, arg, err);
	name = name != NULL ? name + 1 : path;
	if (o->base >= 0)
		base = o->base;
	else if (klog_names_segment_parse(name, &base, NULL) == 0)
		named = 1;
	return dump_one(path, base, named, 1, o->start, o, cb, arg, err);
}
