/*
 * Kafka's MessageSet v0/v1 (the format Kafka 0.8 to 0.10 clients send and
 * read; klog-kafka(7)) transcoded to and from klog's message sets
 * (format.h), both ways, CRCs checked on the way in and derived from the
 * stored ones on the way out (klog_kmsg_serve()); a fetch's walk of a set
 * hands its magic-2 entries to kserve.h.  No I/O.
 *
 *   Kafka MessageSet = [ offset:8 | size:4 | message ]*, where
 *   message = crc:4 | magic:1 (0|1) | attributes:1 | [timestamp:8, magic 1]
 *             | key:4+n (-1 null) | value:4+n (-1 null)
 *   crc is the CRC-32 of magic..end; attributes & 7 is the codec:
 *   0 none, 1 gzip, 2 snappy, 3 lz4 (codec.h's shapes of each; the wrong
 *   header checksum of Kafka's magic-0 lz4 wrappers, KAFKA-3160, is
 *   forgiven, as librdkafka does: the message's CRC still covers it).
 *
 * Offsets: a klog message at byte S whose entry takes E bytes has the Kafka
 * offset S + E - 1 (the next message's start, less one), so that a client's
 * "last offset + 1" is the next message's byte offset (a boundary) and its
 * end-of-partition test (high watermark == next fetch offset) holds.  The
 * messages inside a 0.7 compressed wrapper at W, of length field N (so N + 4
 * bytes, offsets W .. W + N + 3), are served flat: inner message j gets
 * W + min(j, N + 2), the last one W + N + 3.  A magic-2 entry's record i
 * has W + i (record.h), whose last one is W + N + 3 too.
 */
#ifndef KLOG_KMSG_H
#define KLOG_KMSG_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"

#define KLOG_KMSG_CODEC_MASK 0x07

/* How a produce request's sets are taken in (klog_kmsg_ingest(),
 * klog_kbatch_ingest()). */
typedef struct klog_kingest {
	size_t max_message;      /* klog-serve --max-message-bytes: a record
	                            batch's size, as Kafka's message.max.bytes;
	                            a MessageSet message's value; a magic-2
	                            entry's body */
	size_t max_inflate;      /* what a compressed set may decompress to */
	int zstd;                /* zstd may come (Produce v7 and later, in
	                            record batches only: KIP-110) */
	int64_t append_time;     /* LogAppendTime: the broker's clock at the
	                            append, ms since the epoch, stamped on
	                            each magic-2 entry written (attributes
	                            bit 3, maxTimestamp); KLOG_NO_TIMESTAMP
	                            (-1): CreateTime, the producer's */
} klog_kingest_t;

/* What klog_kmsg_ingest() found. */
typedef struct klog_kmsg_in_info {
	uint32_t messages;       /* Kafka messages (records) written */
	int32_t first_delta;     /* the first one's Kafka offset less the
	                            byte offset of the set: a magic-0 entry's
	                            size less one (kmsg.h's offsets), 0 for a
	                            magic-2 entry's first record, but its size
	                            less one for a lone record of a
	                            MessageSet's (as a MessageSet serves it,
	                            kserve.h) */
	int codec;               /* the last wrapper's codec, 0 if none */
	int refused_codec;       /* with -KLOG_EUNSUPPORTED: 4 when zstd was
	                            refused (where the format or the request
	                            may not carry it), else 0 */
} klog_kmsg_in_info_t;

/*
 * A produce request's MessageSet set[0..len) into klog entries appended to
 * out.  Every message (the inner ones of gzip, snappy and lz4 wrappers,
 * decompressed, one level deep as in Kafka) is kept: a magic-0 message
 * with a null key as a plain magic-0 entry of its value (a null value: an
 * empty payload), as klog_entry_encode() writes it; one with a key, or a
 * magic-1 one with a timestamp, as a record of a magic-2 entry
 * (record.h), its key, value (null kept) and timestamp (CreateTime, or
 * the broker's LogAppendTime), consecutive ones of one set together in
 * one entry whose body stays within opt->max_message.  Kafka offsets are
 * dropped.  Checks each CRC, magic, size and codec; a value over
 * opt->max_message bytes (or a record whose entry alone would be) is
 * -KLOG_ETOOBIG, a wrapper that decompresses past opt->max_inflate bytes
 * as well.  Returns 0; -KLOG_ECORRUPT for a bad CRC, size, magic or
 * codec, a truncated set (producers never send partial messages) or data
 * that does not decompress; -KLOG_EUNSUPPORTED for magic 2 (a
 * RecordBatch) or a zstd wrapper (which Kafka takes in record batches
 * only; info->refused_codec says so); -KLOG_ENOMEM.  A nested wrapper,
 * or a magic-2 or cut message inside a wrapper, is -KLOG_ECORRUPT.  On
 * error out is as it was before the call (its length and failed flag
 * restored) and *info is unspecified but for refused_codec.  An empty
 * set is 0 with no messages.
 */
int klog_kmsg_ingest(const uint8_t *set, size_t len,
    const klog_kingest_t *opt, klog_buf_t *out, klog_kmsg_in_info_t *info);

/* How klog_kmsg_serve() serves a set. */
typedef struct klog_kmsg_serve_opt {
	int64_t base;            /* the partition offset of the set's first
	                            byte */
	int64_t min_offset;      /* the fetch offset */
	int magic;               /* the fetch version's (kserve.h): 0, 1, 2 */
	size_t max_out;          /* bytes the partition's answer may take */
	size_t prior;            /* bytes it took before this set (kserve.h):
	                            0 for the first, which is written whole */
	size_t max_inflate;      /* of one compressed entry */
	uint32_t big;            /* with magic 2, a magic-2 entry of at least
	                            this length field stops the walk (BIG),
	                            for the caller to send from the file
	                            (klog_kserve_head()); 0: none does */
} klog_kmsg_serve_opt_t;

/* What klog_kmsg_serve() did. */
typedef struct klog_kmsg_out_info {
	size_t consumed;         /* bytes of the set served (whole
	                            top-level entries): where it stopped */
	uint32_t messages;       /* Kafka messages written */
	int stop;                /* why it stopped there: KLOG_KSERVE_SERVED
	                            at the set's end, else FULL, BAD, CUT or
	                            BIG (kserve.h) */
	int64_t bad_offset;      /* -1, or the offset of the first entry that
	                            could not be served (corrupt framing, a
	                            wrapper or, read for a MessageSet, a
	                            magic-2 entry with a bad CRC, one that
	                            does not decompress, holds a wrapper or a
	                            message with a bad CRC, or decompresses
	                            past max_inflate) */
	uint32_t need;           /* CUT: the whole size of the entry at set +
	                            consumed, which len cuts (length field +
	                            4), or 4 when even its length field is
	                            cut; else 0 */
	uint32_t big_length;     /* BIG: the length field of the entry at
	                            set + consumed, whose bytes may run past
	                            len; else 0 */
} klog_kmsg_out_info_t;

/*
 * The klog set set[0..len), whose first byte is at partition offset
 * opt->base, as a Kafka fetch answer's records appended to out: its
 * magic-0 and magic-1 entries as MessageSet magic-0 messages (attributes
 * 0, key null, value the payload; 0.7 gzip and snappy wrappers
 * decompressed up to opt->max_inflate bytes each), its magic-2 entries
 * as opt->magic (kserve.h: the record batch as stored for 2, Fetch v4
 * and later; messages of magic 0 or 1 with their keys and timestamps for
 * Fetch v0 to v3), stopping before the first top-level entry that would
 * take the answer past opt->max_out bytes (counting opt->prior; the
 * first entry of an answer is always written whole, whatever its size),
 * at a trailing cut entry, at a magic-2 entry of opt->big bytes or more,
 * and at the first entry that cannot be served (noted in
 * info->bad_offset; what precedes it is still served).  Messages whose
 * Kafka offset is below opt->min_offset are left out (a fetch from
 * inside a wrapper or a magic-2 entry; a record batch goes whole, and
 * the client skips them); they add no bytes, so the first entry that
 * writes anything is the one always written whole.  A wrapper is served
 * whole or not at all.  Returns 0 (also when nothing could be served:
 * see info), or -KLOG_ENOMEM with out as it was.
 *
 * CRCs: like a Kafka broker, this does not check the stored CRCs of the
 * plain messages it serves.  Each Kafka message's CRC is derived from its
 * payload's stored CRC-32 (CRC-32 is linear: the CRC of the message's
 * header carried past the payload, xored with the stored one), with no
 * pass over the payload.  A payload damaged on disk is served under the
 * CRC it was stored with, which it no longer matches: a client that
 * checks CRCs (check.crcs in librdkafka, default off, and in Kafka's Java
 * client, default on; check_crcs in kafka-python, default on) sees the
 * damage, as klog-consume does on the native port, where the broker sends
 * messages unread.  A compressed wrapper is read whole to be decompressed,
 * so its CRC and its inner messages' are checked, and a bad one is not
 * served.
 */
int klog_kmsg_serve(const uint8_t *set, size_t len,
    const klog_kmsg_serve_opt_t *opt, klog_buf_t *out,
    klog_kmsg_out_info_t *info);

/* The Kafka offset of the 0.7 message at byte start whose entry takes
 * entry_bytes: start + entry_bytes - 1. */
static inline int64_t
klog_kmsg_offset(int64_t start, uint32_t entry_bytes)
{
	return start + (int64_t)entry_bytes - 1;
}

#endif
