/*
 * Kafka's RecordBatch (magic 2: what Produce v3 and later carry, and what
 * librdkafka writes once a broker offers Produce v3 and Fetch v4) into
 * klog's magic-2 entries (record.h), for the Kafka listener's produce
 * path (klog-kafka(7)).  No I/O.
 *
 *   batch  = baseOffset:8 | batchLength:4 | partitionLeaderEpoch:4
 *            | magic:1 (2) | crc:4 | attributes:2 | lastOffsetDelta:4
 *            | baseTimestamp:8 | maxTimestamp:8 | producerId:8
 *            | producerEpoch:2 | baseSequence:4 | count:4 | records
 *            \_________ the body: kept byte for byte __________________/
 *
 * crc is the CRC-32C (Castagnoli: record.h's klog_crc32c()) of the body;
 * attributes & 7 the codec of the records, compressed as one (0 none,
 * 1 gzip, 2 snappy, 3 lz4, 4 zstd: codec.h's klog_codec_inflate()).  Each
 * batch becomes one magic-2 entry: its body as sent, compressed or not,
 * but for lastOffsetDelta (the entry's length + 3, record.h) and, under
 * LogAppendTime, the timestamp type and maxTimestamp, resealed
 * (klog_batch_seal()).
 */
#ifndef KLOG_KBATCH_H
#define KLOG_KBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/kafka/kmsg.h"

/*
 * The record batches set[0..len) of a produce request, each as one
 * magic-2 entry appended to out.  Checks each batch's size (at most
 * opt->max_message, as Kafka's message.max.bytes), length, magic, CRC-32C,
 * codec, record count (at least one) and last offset delta (count - 1, as
 * sent), and its records' framing after decompression (every field inside
 * the record's length, offset deltas 0, 1, 2, ..., the records filling
 * the batch).  Returns 0; -KLOG_ECORRUPT for a bad batch or record, an
 * unknown codec, data that does not decompress or a cut set;
 * -KLOG_EUNSUPPORTED for a transactional or control batch (a producer's
 * batch is taken: the core checks its sequence, idem.c), or zstd where
 * opt->zstd is 0 (info->refused_codec 4); -KLOG_ETOOBIG for a batch over
 * opt->max_message or records that decompress past opt->max_inflate;
 * -KLOG_ENOMEM.  On error out is as it was and *info unspecified but for
 * refused_codec.
 */
int klog_kbatch_ingest(const uint8_t *set, size_t len,
    const klog_kingest_t *opt, klog_buf_t *out, klog_kmsg_in_info_t *info);

#endif
