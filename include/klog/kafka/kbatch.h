/*
 * Kafka's RecordBatch (magic 2: what Produce v3 and later carry, and what
 * librdkafka writes once a broker offers Produce v3 and Fetch v4) into
 * klog's 0.7 entries, for the Kafka listener's produce path (klog-kafka(7)).
 * No I/O.  Fetches still answer in MessageSet v0, which every client
 * reads whatever version it fetches with.
 *
 *   batch  = baseOffset:8 | batchLength:4 | partitionLeaderEpoch:4
 *            | magic:1 (2) | crc:4 | attributes:2 | lastOffsetDelta:4
 *            | baseTimestamp:8 | maxTimestamp:8 | producerId:8
 *            | producerEpoch:2 | baseSequence:4 | count:4 | records
 *   record = length:varint | attributes:1 | timestampDelta:varlong
 *            | offsetDelta:varint | keyLength:varint | key
 *            | valueLength:varint | value | headerCount:varint
 *            | [ keyLength:varint | key | valueLength:varint | value ]*
 *
 * crc is the CRC-32C (Castagnoli: record.h's klog_crc32c()) of
 * attributes..end; attributes & 7 the codec of the records, compressed as
 * one (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd: codec.h's
 * klog_codec_inflate()); varints are zigzag, -1 a null key or value.
 */
#ifndef KLOG_KBATCH_H
#define KLOG_KBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/kafka/kmsg.h"

/*
 * The record batches set[0..len) of a produce request into plain 0.7
 * magic-0 entries appended to out, as klog_kmsg_ingest() does for a
 * MessageSet: each record's value becomes one entry (a null value an empty
 * payload); keys, headers, timestamps and offsets are dropped.  Checks each
 * batch's length, magic, CRC-32C, codec and record count, and each record's
 * framing (every field inside its length, offset deltas 0, 1, 2, ...).
 * Returns 0; -KLOG_ECORRUPT for a bad batch or record, an unknown codec,
 * data that does not decompress or a cut set; -KLOG_EUNSUPPORTED for a
 * transactional, control or idempotent batch (the listener grants no
 * producer ids); -KLOG_ETOOBIG for a value over max_payload or records that
 * decompress past max_inflate; -KLOG_ENOMEM.  On error out is as it was
 * and *info unspecified but for refused_codec.  For Produce v7 and later.
 */
int klog_kbatch_ingest(const uint8_t *set, size_t len, size_t max_payload,
    size_t max_inflate, klog_buf_t *out, klog_kmsg_in_info_t *info);

/* The same for Produce v3 to v6, which may not carry zstd (Kafka's rule,
 * KIP-110): a zstd batch is -KLOG_EUNSUPPORTED with info->refused_codec
 * 4. */
int klog_kbatch_ingest_nozstd(const uint8_t *set, size_t len,
    size_t max_payload, size_t max_inflate, klog_buf_t *out,
    klog_kmsg_in_info_t *info);

#endif
