/*
 * The Kafka listener's Fetch answers (kafka.c frames and parks the
 * requests; see kafka.h).  Each partition's slice of the log is walked a
 * window at a time from the entry holding the offset asked for, so its
 * first message always has an offset at or past it (kmsg.h): plain
 * entries are read (pread) and transcoded, magic-2 ones go out as the
 * record batches they were (kserve.h) or, for Fetch v0 to v3, as
 * messages of their records.
 *
 * A batch stored as a Kafka client sent it is already the bytes a Fetch
 * v4 or later answers with, but for a 21-byte prefix: a big one (FILE_MIN
 * and up; librdkafka's are up to a MiB) goes out as that prefix and its
 * body sent from the page cache with sendfile(2), as the native port
 * sends everything, and only its header is read.  Smaller ones are copied
 * with their neighbours in the window, where a chunk of the queue and a
 * system call each would cost more than the copy.
 *
 * A transcoded byte is copied three times on its way out (the read, the
 * transcode, the socket's copy).  A mapping of the slice instead of the
 * read, and the payloads left in it for sendmsg(2) to gather between the
 * headers made up, measured slower here on 200-byte messages: mapping and
 * unmapping a megabyte cost more than reading it, and the kernel's copy
 * from an iovec every 26 or 200 bytes cost more than the copies it saved
 * (klog-kafka(7), CAVEATS).
 */
#include <sys/types.h>

#include <stdlib.h>
#include <unistd.h>

#include "kafka_impl.h"
#include "klog/base/buf.h"
#include "klog/kafka/kmsg.h"
#include "klog/kafka/kserve.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define RESPONSE_MAX ((int64_t)64 << 20)  /* message bytes in one fetch */
#define MAX_INFLATE ((size_t)64 << 20)    /* of one compressed wrapper */
/* Bytes read at a time: a window the transcoder's reads find in the CPU's
 * cache, more of them for an entry bigger than that.  The first read of
 * a slice, and the one after a batch sent from the file, is only a
 * batch's head: a slice of batches is then never read but for their
 * heads, and one of plain lines costs a small read more. */
#define WINDOW ((size_t)64 << 10)
/* A batch whose length field is this or more is sent from the file. */
#define FILE_MIN ((uint32_t)16 << 10)
/* A read buffer past this is freed after use rather than kept for the
 * next fetch, so one large fetch does not pin its memory for good. */
#define KEEP_BYTES ((size_t)4 << 20)

/* One partition's walk over its slice. */
typedef struct walk {
	klog_kafka_t *k;
	klog_outq_t *q;
	klog_core_read_t *r;
	klog_kmsg_serve_opt_t opt;   /* base and prior set each window */
	size_t pos;                  /* slice bytes walked */
	size_t added;                /* bytes of records written (both) */
	size_t filed;                /* of which sent from the file */
	uint32_t need;               /* the size of a whole entry at pos
	                                that the slice cuts, when it stops
	                                there; else 0 */
	int16_t error;
} walk_t;

/* Bytes [pos, pos + n) of the slice into buf: 0, or -1. */
static int
read_at(const klog_log_slice_t *sl, size_t pos, uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t m = pread(sl->fd, buf + got, n - got,
		    sl->file_pos + (int64_t)(pos + got));

		if (m <= 0)
			return -1;
		got += (size_t)m;
	}
	return 0;
}

/* The walk stops on a corrupt entry at pos: an error when it is first. */
static int
stop_bad(walk_t *w)
{
	if (w->added == 0)
		w->error = KLOG_KERR_CORRUPT_MESSAGE;
	return 0;
}

/*
 * The batch at pos, of length field length, whose first bytes are at
 * head (n of them), as its prefix and its body from the file.  1 to go
 * on, 0 to stop.
 */
static int
send_batch(walk_t *w, const uint8_t *head, size_t n, uint32_t length)
{
	klog_buf_t *out = klog_outq_buf(w->q);
	klog_kserve_t c = { .min_offset = w->opt.min_offset,
	    .max_out = w->opt.max_out, .start = out->len, .prior = w->added,
	    .out = out, .magic = 2 };
	uint8_t own[KLOG_KSERVE_HEAD];
	klog_log_slice_t body;
	size_t len = 0;
	int r;

	if (KLOG_LENGTH_SIZE + (size_t)length > w->r->slice.len - w->pos) {
		w->need = KLOG_LENGTH_SIZE + length;
		return 0;
	}
	if (n < KLOG_KSERVE_HEAD) {
		if (read_at(&w->r->slice, w->pos, own, sizeof(own)) < 0) {
			w->error = w->added == 0 ? KLOG_KERR_UNKNOWN : 0;
			return 0;
		}
		head = own;
	}
	r = klog_kserve_head(&c, head, length,
	    w->r->slice.offset + (int64_t)w->pos, &len);
	if (r == -KLOG_ENOMEM) {
		out->failed = 1;
		return 0;
	}
	if (r == KLOG_KSERVE_BAD)
		return stop_bad(w);
	if (r != KLOG_KSERVE_SERVED)
		return 0;
	if (len > 0) {
		klog_log_slice_part(&w->r->slice, w->pos + KLOG_KSERVE_BODY_AT,
		    len, &body);
		if (klog_outq_file(w->q, &body) < 0) {
			out->failed = 1;
			return 0;
		}
		w->added += KLOG_BATCH_PREFIX + len;
		w->filed += len;
	}
	w->pos += KLOG_LENGTH_SIZE + length;
	return 1;
}

/* One window of the walk, of up to want bytes: 1 to go on, 0 to stop. */
static int
walk_window(walk_t *w, size_t *want)
{
	klog_kafka_t *k = w->k;
	klog_buf_t *out = klog_outq_buf(w->q);
	klog_kmsg_out_info_t info;
	size_t n = w->r->slice.len - w->pos, before = out->len;

	if (n > *want)
		n = *want;
	*want = WINDOW;
	if (klog_buf_grow((void **)&k->rbuf, &k->rbuf_cap, n + 1) < 0) {
		out->failed = 1;
		return 0;
	}
	if (read_at(&w->r->slice, w->pos, k->rbuf, n) < 0) {
		w->error = w->added == 0 ? KLOG_KERR_UNKNOWN : 0;
		return 0;
	}
	w->opt.base = w->r->slice.offset + (int64_t)w->pos;
	w->opt.prior = w->added;
	if (klog_kmsg_serve(k->rbuf, n, &w->opt, out, &info) < 0) {
		out->failed = 1;
		return 0;
	}
	w->added += out->len - before;
	w->pos += info.consumed;
	switch (info.stop) {
	case KLOG_KSERVE_SERVED:
		return 1;
	case KLOG_KSERVE_BAD:
		return stop_bad(w);
	case KLOG_KSERVE_CUT:
		/* Cut by the window: read it whole next; by the slice: stop. */
		if (info.need > w->r->slice.len - w->pos) {
			w->need = info.need;
			return 0;
		}
		*want = info.need > WINDOW ? info.need : WINDOW;
		return 1;
	case KLOG_KSERVE_BIG:
		if (!send_batch(w, k->rbuf + info.consumed, n - info.consumed,
		    info.big_length))
			return 0;
		/* Another batch may follow: its head is all it needs read. */
		*want = KLOG_KSERVE_HEAD;
		return 1;
	default:
		return 0;
	}
}

/*
 * One partition's messages from what the core reads for it, at most
 * max_out Kafka bytes (the first message whole, whatever its size), into
 * q.  Returns the Kafka error of the part; *added and *filed the bytes of
 * records written, and of those the ones queued from the file.
 */
static int16_t
serve_part(klog_kafka_t *k, klog_outq_t *q, const klog_core_item_t *it,
    klog_core_read_t *r, int magic, size_t max_out, size_t *added,
    size_t *filed)
{
	walk_t w = { .k = k, .q = q, .r = r, .opt = {
		.min_offset = it->offset, .magic = magic, .max_out = max_out,
		.max_inflate = MAX_INFLATE, .big = FILE_MIN } };
	klog_core_item_t bigger;
	size_t want = KLOG_KSERVE_HEAD;

	while (w.pos < r->slice.len && walk_window(&w, &want))
		;
	/* A first message larger than the client's limit is read whole,
	 * once, as Kafka hands it out. */
	if (w.added == 0 && w.need > 0 && !klog_outq_buf(q)->failed &&
	    w.need <= (uint32_t)KLOG_CORE_MAX_FETCH_BYTES) {
		bigger = *it;
		bigger.offset = r->slice.offset + (int64_t)w.pos;
		bigger.max = (int32_t)w.need;
		klog_log_slice_release(&r->slice);
		klog_core_fetch_read(k->core, &bigger, (int64_t)w.need, r);
		want = w.need;
		w.pos = 0;
		w.need = 0;
		while (r->has_slice && w.pos < r->slice.len &&
		    walk_window(&w, &want))
			;
	}
	if (r->has_slice)
		klog_log_slice_release(&r->slice);
	if (k->rbuf_cap > KEEP_BYTES) {
		free(k->rbuf);
		k->rbuf = NULL;
		k->rbuf_cap = 0;
	}
	*added = w.added;
	*filed = w.filed;
	return w.error;
}

void
kafka_fetch_encode(klog_kafka_t *k, klog_outq_t *q, int16_t version,
    int32_t corr, int32_t max_bytes, const klog_core_item_t *items,
    uint32_t n)
{
	klog_buf_t *out = klog_outq_buf(q);
	size_t start = klog_kwire_begin(out, corr), files = 0;
	int64_t left = max_bytes < RESPONSE_MAX ? max_bytes : RESPONSE_MAX;
	klog_kwire_topics_t t;

	klog_kwdata_fetch_head(out, version, KLOG_KERR_NONE);
	klog_kwire_topics_begin(out, &t);
	for (uint32_t i = 0; i < n; i++) {
		const klog_core_item_t *it = &items[i];
		klog_core_read_t r = { 0 };
		size_t errpos, sizepos, added = 0, filed = 0;
		int16_t error;

		klog_kwire_topics_part(out, &t, it->topic);
		/* Past the response's limit a partition still tells its high
		 * watermark (clients count lag and find the end by it). */
		klog_core_fetch_read(k->core, it, left > 0 ? left : 0, &r);
		if (r.has_slice && left <= 0) {
			klog_log_slice_release(&r.slice);
			r.has_slice = 0;
		}
		error = klog_kwire_error_from_wire(r.error);
		errpos = klog_kwdata_fetch_part(out, version, it->partition,
		    error, r.log_end, r.log_start);
		sizepos = out->len;
		klog_buf_put_i32(out, 0);
		if (r.has_slice && (error = serve_part(k, q, it, &r,
		    klog_kserve_magic(version), (size_t)(it->max < left ?
		    it->max : left), &added, &filed)) != 0 &&
		    !out->failed && out->len >= errpos + 2) {
			out->data[errpos] = (uint8_t)((uint16_t)error >> 8);
			out->data[errpos + 1] = (uint8_t)error;
		}
		kafka_note_error(k, error);
		if (out->failed)
			break;
		klog_buf_patch_i32(out, sizepos, (int32_t)added);
		left -= (int64_t)added;
		files += filed;
		k->fetch_file_bytes += filed;
		k->fetch_memory_bytes += added - filed;
	}
	klog_kwire_topics_end(out, &t);
	/* The frame counts the bytes queued from files too; nothing is sent
	 * before the patch, so its position is still in the buffer. */
	klog_buf_patch_i32(out, start, (int32_t)(out->len - start - 4 + files));
}
