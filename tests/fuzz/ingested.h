/*
 * Shared by fuzz_kmsg and fuzz_kbatch: what a Kafka ingest wrote,
 * set[0..len), must be whole valid entries: magic-0 ones of at most
 * max_payload bytes, or magic-2 ones (record.h) whose body is at most
 * max_payload bytes (a record batch's limit: its size as sent, larger by
 * 21), sealed (attrs byte, CRC-32C, lastOffsetDelta = length + 3), of at
 * least one record and no more than they can number, every record whole
 * with offset deltas 0, 1, ... once inflated within max_inflate; as many
 * messages (a magic-2 entry's records) as *in says, the first at the
 * offset delta it says: a magic-0 entry's last byte, a magic-2 entry's
 * first, or with lone_last (a MessageSet's ingest) the last byte of a
 * magic-2 entry of one record.  Aborts otherwise.
 */
#ifndef KLOG_FUZZ_INGESTED_H
#define KLOG_FUZZ_INGESTED_H

#include <stdint.h>
#include <stdlib.h>

#include "klog/kafka/kmsg.h"
#include "klog/storage/codec.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

/* The magic-2 entry e, of length field n: its record count. */
static uint32_t
check_magic2(const uint8_t *e, uint32_t n, uint32_t max_payload,
    size_t max_inflate)
{
	const uint8_t *body = e + 10, *rec;
	size_t blen = n - 6, rlen, pos = 0;
	uint8_t *plain = NULL;
	klog_batch_t h;
	klog_record_t r;

	if (n < 6 + KLOG_BATCH_BODY_HEADER || blen > (size_t)max_payload + 21 ||
	    klog_crc32c(0, body, blen) != klog_be32(e + 6) ||
	    klog_batch_read(body, blen, &h) < 0 || e[5] != body[1] ||
	    h.last_offset_delta != (int32_t)n + 3 || h.count < 1 ||
	    (int64_t)h.count - 1 > (int64_t)n + 3)
		abort();
	rec = body + KLOG_BATCH_BODY_HEADER;
	rlen = blen - KLOG_BATCH_BODY_HEADER;
	if ((h.attributes & 7) != 0) {
		if (klog_codec_inflate(h.attributes & 7, rec, rlen, max_inflate,
		    &plain, &rlen) < 0)
			abort();
		rec = plain;
	}
	for (int32_t i = 0; i < h.count; i++) {
		if (klog_record_read(rec + pos, rlen - pos, &r) < 0 ||
		    r.offset_delta != i)
			abort();
		pos += r.size;
	}
	if (pos != rlen)
		abort();
	free(plain);
	return (uint32_t)h.count;
}

static void
check_ingested(const uint8_t *set, size_t len, const klog_kmsg_in_info_t *in,
    uint32_t max_payload, size_t max_inflate, int lone_last)
{
	uint32_t msgs = 0, k;
	size_t pos = 0;

	while (pos < len) {
		const uint8_t *e = set + pos;
		uint32_t n;

		if (len - pos < KLOG_MSG_OVERHEAD)
			abort();
		n = klog_be32(e);
		if (n > len - pos - 4)
			abort();
		if (e[4] == 2) {
			k = check_magic2(e, n, max_payload, max_inflate);
			if (pos == 0 && in->first_delta !=
			    (lone_last && k == 1 ? (int32_t)n + 3 : 0))
				abort();
			msgs += k;
		} else if (pos == 0 && in->first_delta != (int32_t)n + 3) {
			abort();
		} else if (e[4] != 0 || n < 5 || n - 5 > max_payload ||
		    klog_crc32(0, e + 9, n - 5) != klog_be32(e + 5)) {
			abort();
		} else {
			msgs++;
		}
		pos += 4 + (size_t)n;
	}
	if (msgs != in->messages || in->codec < 0 || in->codec > 4)
		abort();
}

#endif
