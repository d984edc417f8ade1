/*
 * libFuzzer target for lib/kafka/kbatch.c: arbitrary bytes as the record batches
 * of a Produce v7 request, to klog_kbatch_ingest(), twice: as they are, and
 * with each batch's CRC-32C made right (walking the batches by their
 * length fields), so that mutations reach the records behind the CRC.
 * Each time as Produce v3 to v6 too (klog_kbatch_ingest_nozstd()), which
 * must agree but where it refuses zstd.
 *
 * Ingest writes after bytes already in the buffer, which must survive; on
 * error the buffer must be as it was.  What it writes must be valid
 * magic-2 entries within the batch limit, as many records as it says
 * (ingested.h), each holding its batch's body (LogAppendTime too, picked
 * by the input).  Limits are small so that decompression bombs are cut.
 * A broken invariant aborts.
 *
 * The seeds in corpus/fuzz_kbatch: kafka-python's batches of
 * tests/unit/kafka/test_kbatch.c (plain with a key, a header and a null value;
 * gzip), and the two back to back; kcat's (librdkafka 2.0.2) lz4, snappy
 * and zstd batches.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kbatch.h"
#include "klog/kafka/kmsg.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#include "ingested.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAX_PAYLOAD 4096
#define MAX_INFLATE (64 * 1024)
#define PREFIX "before"
#define PREFIX_LEN (sizeof(PREFIX) - 1)

/* As Produce v3 to v6 take it: as rc (Produce v7's), or zstd refused. */
static void
ingest_nozstd(const uint8_t *set, size_t size, const klog_kingest_t *opt,
    int rc, size_t len)
{
	klog_kingest_t o = *opt;
	klog_kmsg_in_info_t in;
	klog_buf_t out;
	int r;

	o.zstd = 0;
	klog_buf_init(&out);
	r = klog_kbatch_ingest(set, size, &o, &out, &in);
	if (r == -KLOG_EUNSUPPORTED && in.refused_codec == 4)
		CHECK(out.len == 0);
	else
		CHECK(r == rc && out.len == len);
	klog_buf_free(&out);
}

/* Each entry written holds its batch's body: the bytes after its
 * lastOffsetDelta and, under LogAppendTime, its maxTimestamp. */
static void
check_bodies(const uint8_t *set, size_t size, const uint8_t *out, size_t len)
{
	size_t pos = 0, at = 0;

	while (at < len) {
		uint32_t n = klog_be32(out + at);

		CHECK(size - pos >= 12 && n == klog_be32(set + pos + 8) - 3);
		CHECK(memcmp(out + at + 10 + 6, set + pos + 21 + 6, 8) == 0);
		CHECK(memcmp(out + at + 10 + 22, set + pos + 21 + 22,
		    n - 6 - 22) == 0);
		pos += 12 + (size_t)klog_be32(set + pos + 8);
		at += 4 + (size_t)n;
	}
	CHECK(pos == size);
}

static void
ingest(const uint8_t *set, size_t size, int64_t append_time)
{
	klog_kingest_t opt = { MAX_PAYLOAD, MAX_INFLATE, 1, append_time };
	klog_kmsg_in_info_t in;
	klog_buf_t out;
	int rc;

	klog_buf_init(&out);
	klog_buf_put(&out, PREFIX, PREFIX_LEN);
	CHECK(!out.failed);
	rc = klog_kbatch_ingest(set, size, &opt, &out, &in);
	CHECK(rc == 0 || rc == -KLOG_ECORRUPT || rc == -KLOG_EUNSUPPORTED ||
	    rc == -KLOG_ETOOBIG || rc == -KLOG_ENOMEM);
	CHECK(!out.failed && out.len >= PREFIX_LEN &&
	    memcmp(out.data, PREFIX, PREFIX_LEN) == 0);
	if (rc < 0) {
		CHECK(out.len == PREFIX_LEN);
	} else {
		check_ingested(out.data + PREFIX_LEN, out.len - PREFIX_LEN,
		    &in, MAX_PAYLOAD, MAX_INFLATE, 0);
		check_bodies(set, size, out.data + PREFIX_LEN,
		    out.len - PREFIX_LEN);
	}
	if (rc == 0 && size == 0)
		CHECK(in.messages == 0);
	if (rc != -KLOG_ENOMEM)
		ingest_nozstd(set, size, &opt, rc, out.len - PREFIX_LEN);
	klog_buf_free(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size + (size == 0));
	size_t pos = 0, n;

	CHECK(copy != NULL);
	if (size > 0)
		memcpy(copy, data, size);
	ingest(copy, size, size > 0 && (copy[0] & 1) ? 1765000000000LL :
	    KLOG_NO_TIMESTAMP);
	while (size - pos >= 61) {
		n = 12 + (size_t)klog_be32(copy + pos + 8);
		if (n < 61 || n > size - pos)
			break;
		klog_put_be32(copy + pos + 17, klog_crc32c(0,
		    copy + pos + 21, n - 21));
		pos += n;
	}
	ingest(copy, size, KLOG_NO_TIMESTAMP);
	free(copy);
	return 0;
}
