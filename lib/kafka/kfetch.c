/*
 * The Kafka listener's Fetch answers (kafka.c frames and parks the
 * requests; see kafka.h).  Each partition's slice of the log is read
 * (pread) and served from the entry holding the offset asked for, so its
 * first message always has an offset at or past it (kmsg.h): plain
 * entries transcoded, magic-2 ones as the record batches they were
 * (kserve.h) or, for Fetch v0 to v3, as messages of their records.
 *
 * Each stored byte is copied three times on its way out (the read, the
 * transcode, the socket's copy), where the native port sends from the page
 * cache with sendfile(2).  A mapping of the slice instead of the read, and
 * the payloads left in it for sendmsg(2) to gather between the headers
 * made up, measured slower here on 200-byte messages: mapping and
 * unmapping a megabyte cost more than reading it, and the kernel's copy
 * from an iovec every 26 or 200 bytes cost more than the copies it saved
 * (klog-kafka(7), FETCH COST).
 */
#include <sys/types.h>

#include <stdlib.h>
#include <unistd.h>

#include "kafka_impl.h"
#include "klog/base/buf.h"
#include "klog/kafka/kmsg.h"
#include "klog/kafka/kserve.h"

#define RESPONSE_MAX ((int64_t)64 << 20)  /* message bytes in one fetch */
#define MAX_INFLATE ((size_t)64 << 20)    /* of one compressed wrapper */
/* A read buffer past this is freed after use rather than kept for the
 * next fetch, so one large fetch does not pin its memory for good. */
#define KEEP_BYTES ((size_t)4 << 20)

/* Read the slice's bytes into k->rbuf: 0, or -1. */
static int
read_slice(klog_kafka_t *k, const klog_log_slice_t *sl)
{
	size_t got = 0;

	if (klog_buf_grow((void **)&k->rbuf, &k->rbuf_cap, sl->len + 1) < 0)
		return -1;
	while (got < sl->len) {
		ssize_t n = pread(sl->fd, k->rbuf + got, sl->len - got,
		    sl->file_pos + (int64_t)got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/*
 * One partition's messages from what the core reads for it, at most
 * max_out Kafka bytes (the first message whole, whatever its size).
 * Returns the Kafka error of the part.
 */
static int16_t
serve_part(klog_kafka_t *k, klog_buf_t *out, const klog_core_item_t *it,
    klog_core_read_t *r, int magic, size_t max_out)
{
	klog_kmsg_out_info_t info;
	klog_core_item_t bigger;
	int16_t error = KLOG_KERR_NONE;

	for (int tries = 0; tries < 2; tries++) {
		if (read_slice(k, &r->slice) < 0) {
			error = KLOG_KERR_UNKNOWN;
			break;
		}
		if (klog_kmsg_serve(k->rbuf, r->slice.len, r->slice.offset,
		    it->offset, magic, max_out, MAX_INFLATE, out, &info) < 0) {
			out->failed = 1;
			break;
		}
		if (info.messages == 0 && info.bad_offset >= 0)
			error = KLOG_KERR_CORRUPT_MESSAGE;
		/* A first message larger than the client's limit is read
		 * whole, once, as Kafka hands it out. */
		if (info.messages > 0 || info.need == 0 || tries > 0 ||
		    info.need > (uint32_t)KLOG_CORE_MAX_FETCH_BYTES)
			break;
		bigger = *it;
		bigger.offset = r->slice.offset;
		bigger.max = (int32_t)info.need;
		klog_log_slice_release(&r->slice);
		klog_core_fetch_read(k->core, &bigger, (int64_t)info.need, r);
		if (!r->has_slice)
			break;
	}
	if (r->has_slice)
		klog_log_slice_release(&r->slice);
	if (k->rbuf_cap > KEEP_BYTES) {
		free(k->rbuf);
		k->rbuf = NULL;
		k->rbuf_cap = 0;
	}
	return error;
}

void
kafka_fetch_encode(klog_kafka_t *k, klog_buf_t *out, int16_t version,
    int32_t corr, int32_t max_bytes, const klog_core_item_t *items,
    uint32_t n)
{
	size_t start = klog_kwire_begin(out, corr);
	int64_t left = max_bytes < RESPONSE_MAX ? max_bytes : RESPONSE_MAX;
	klog_kwire_topics_t t;

	klog_kwdata_fetch_head(out, version, KLOG_KERR_NONE);
	klog_kwire_topics_begin(out, &t);
	for (uint32_t i = 0; i < n; i++) {
		const klog_core_item_t *it = &items[i];
		klog_core_read_t r = { 0 };
		size_t errpos, sizepos, before;
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
		before = out->len;
		if (r.has_slice && (error = serve_part(k, out, it, &r,
		    klog_kserve_magic(version), (size_t)(it->max < left ?
		    it->max : left))) != 0 &&
		    !out->failed && out->len >= errpos + 2) {
			out->data[errpos] = (uint8_t)((uint16_t)error >> 8);
			out->data[errpos + 1] = (uint8_t)error;
		}
		kafka_note_error(k, error);
		if (out->failed)
			break;
		klog_buf_patch_i32(out, sizepos, (int32_t)(out->len - before));
		left -= (int64_t)(out->len - before);
	}
	klog_kwire_topics_end(out, &t);
	klog_kwire_end(out, start);
}

