/*
 * Kafka's compression codecs, by Kafka's numbers, both ways: what a
 * magic-1 wrapper's payload (codecs 0-2) or a magic-2 entry's records
 * (0-4) are compressed with (format.h, record.h), and what Kafka clients
 * send.  No I/O.
 *
 *   0 none
 *   1 gzip    RFC 1952; several members in a row read as one stream, as
 *             gzip(1) and Java's GZIPInputStream do
 *   2 snappy  read: one raw block (librdkafka's) or xerial framed
 *             (snappy-java's SnappyOutputStream: Kafka 0.7's, kafka-python's)
 *             +------------------+-----------+----------+--------------------+
 *             | "\x82SNAPPY\0":8 | version:4 | compat:4 | [ length:4 block ]*|
 *             +------------------+-----------+----------+--------------------+
 *             anything without that header is one raw block; the header met
 *             again between blocks (streams one after another) is skipped.
 *             Written: one raw block, as librdkafka writes it
 *   3 lz4     one LZ4 frame; read also with the wrong header checksum of
 *             Kafka's magic-0 lz4 wrappers (KAFKA-3160: computed over the
 *             magic number too), as librdkafka forgives it
 *   4 zstd    one or more zstd frames, read streaming: a frame need not say
 *             its content size (Kafka's Java producer's do not)
 *
 * Decompression is bounded: never more than max bytes of output are
 * allocated, whatever a frame says of its own size.
 */
#ifndef KLOG_CODEC_H
#define KLOG_CODEC_H

#include <stddef.h>
#include <stdint.h>

enum klog_codec {
	KLOG_CODEC_NONE = 0,
	KLOG_CODEC_GZIP = 1,
	KLOG_CODEC_SNAPPY = 2,
	KLOG_CODEC_LZ4 = 3,
	KLOG_CODEC_ZSTD = 4,
};

#define KLOG_CODEC_MAX KLOG_CODEC_ZSTD

/* The codec's own default level (gzip 6, lz4 0: fast, zstd 3), as
 * librdkafka's compression.level -1. */
#define KLOG_CODEC_LEVEL_DEFAULT (-1)

/* "none", "gzip", "snappy", "lz4", "zstd", or "invalid". */
const char *klog_codec_name(int codec);

/*
 * in[0..len), compressed with codec 1-4, decompressed into a new buffer
 * *out of *outlen bytes that the caller frees (never NULL on success, even
 * for no bytes).  -KLOG_ETOOBIG past max bytes; -KLOG_ECORRUPT for data
 * that does not decompress whole (cut, or followed by other bytes) or
 * another codec; -KLOG_ENOMEM.  *out is NULL after an error.
 */
int klog_codec_inflate(int codec, const uint8_t *in, size_t len, size_t max,
    uint8_t **out, size_t *outlen);

/*
 * in[0..len) compressed with codec 1-4 (snappy one raw block, lz4 one
 * frame, zstd one frame that says its size) at level: the codec's own
 * scale (gzip 0-9, lz4 0-12, where 3 and up is LZ4HC, zstd 1-22; snappy
 * has none and takes any) or KLOG_CODEC_LEVEL_DEFAULT.  *out is a new
 * buffer the caller frees, *outlen its size.  -KLOG_EINVAL for another
 * codec or a level out of range; -KLOG_ETOOBIG for more than 1 GiB of
 * input (an entry's limit, format.h); -KLOG_ENOMEM.
 */
int klog_codec_deflate(int codec, int level, const uint8_t *in, size_t len,
    uint8_t **out, size_t *outlen);

#endif
