/*
 * libFuzzer target for lib/kafka/kmsg.c: arbitrary bytes as a Kafka MessageSet
 * (a produce request's) to klog_kmsg_ingest(), and what that writes, a
 * 0.7 set, back out through klog_kmsg_serve(); and the input itself as a
 * 0.7 set read from a segment, to klog_kmsg_serve().
 *
 * Both write after bytes already in the buffer, which must survive; on
 * error ingest must leave the buffer as it was.  What ingest writes must
 * be plain, valid magic-0 entries within the limits, as many as it says.
 * What serve writes is parsed here as Kafka magic-0 messages: offsets
 * non-decreasing and at or past min_offset, as many as it says, consumed
 * within the set, and each CRC valid when the set's stored CRCs are (a
 * set ingest wrote: serve derives the CRCs from the stored ones without
 * checking them, so a damaged one is passed on); a smaller max_out or a
 * larger min_offset serves a prefix (filtered) of what the whole serve
 * does, and a set that ingest wrote is served whole, each payload at its
 * byte offset.  Limits are small so that decompression bombs are cut.  A
 * broken invariant aborts.
 *
 * The seeds in corpus/fuzz_kmsg: v0-* and v1-* are Kafka sets, most the
 * Produce sets of fuzz_kwire's captures (kcat's v0 plain, v1 plain, gzip,
 * raw snappy and lz4; kafka-python's v1 gzip), v0-gzip and
 * v1-snappy-xerial (the raw block re-framed) built by hand, gzip-bomb a
 * megabyte of zeros; 07-* are 0.7 sets, fuzz_msgset's and a gzip and two
 * snappy (xerial, raw) wrappers built by hand.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kmsg.h"
#include "klog/storage/format.h"

#include "ingested.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAX_PAYLOAD 4096
#define MAX_INFLATE (64 * 1024)
#define PREFIX "before"
#define PREFIX_LEN (sizeof(PREFIX) - 1)

static uint64_t
rd64(const uint8_t *p)
{
	return (uint64_t)klog_be32(p) << 32 | klog_be32(p + 4);
}

/* A buffer holding PREFIX, as if other responses preceded. */
static void
prefixed(klog_buf_t *b)
{
	klog_buf_init(b);
	klog_buf_put(b, PREFIX, PREFIX_LEN);
	CHECK(!b->failed);
}

static void
check_prefix(const klog_buf_t *b)
{
	CHECK(!b->failed && b->len >= PREFIX_LEN);
	CHECK(memcmp(b->data, PREFIX, PREFIX_LEN) == 0);
}

/*
 * The Kafka set p[0..len) that serve wrote: whole magic-0 messages, CRCs
 * valid if crcs, offsets non-decreasing from min_offset.  Returns their
 * count.
 */
static uint32_t
check_kafka_set(const uint8_t *p, size_t len, int64_t min_offset, int crcs)
{
	int64_t last = INT64_MIN, off;
	uint32_t n = 0, size, vlen;
	size_t pos = 0;

	while (pos < len) {
		CHECK(len - pos >= 12 + 14);
		off = (int64_t)rd64(p + pos);
		size = klog_be32(p + pos + 8);
		CHECK(size >= 14 && size <= len - pos - 12);
		CHECK(!crcs || klog_crc32(0, p + pos + 16, size - 4) ==
		    klog_be32(p + pos + 12));
		CHECK(p[pos + 16] == 0 && p[pos + 17] == 0);   /* magic, attrs */
		CHECK(klog_be32(p + pos + 18) == UINT32_MAX);  /* key null */
		vlen = klog_be32(p + pos + 22);
		CHECK(vlen == size - 14);
		CHECK(off >= min_offset && off >= last);
		last = off;
		pos += 12 + (size_t)size;
		n++;
	}
	return n;
}

/* One serve, into a fresh buffer: its checks (CRCs if crcs); the served
 * bytes in *out. */
static void
serve(const uint8_t *set, size_t len, int64_t base, int64_t min_offset,
    size_t max_out, int crcs, klog_buf_t *out, klog_kmsg_out_info_t *info)
{
	int rc;

	prefixed(out);
	rc = klog_kmsg_serve(set, len, base, min_offset, max_out, MAX_INFLATE,
	    out, info);
	CHECK(rc == 0 || rc == -KLOG_ENOMEM);
	check_prefix(out);
	if (rc < 0) {
		CHECK(out->len == PREFIX_LEN);
		return;
	}
	CHECK(info->consumed <= len);
	CHECK(info->bad_offset == -1 || (info->bad_offset >= base &&
	    info->bad_offset < base + (int64_t)len));
	CHECK(info->bad_offset == -1 || info->bad_offset >=
	    base + (int64_t)info->consumed);
	if (info->need != 0)
		CHECK(info->messages == 0 && info->need >= 4 &&
		    info->consumed + info->need > len);
	CHECK(check_kafka_set(out->data + PREFIX_LEN, out->len - PREFIX_LEN,
	    min_offset, crcs) == info->messages);
	CHECK(info->messages > 0 || out->len == PREFIX_LEN);
}

/* Is a's output a prefix of b's? */
static void
check_prefix_of(const klog_buf_t *a, const klog_buf_t *b)
{
	CHECK(a->len <= b->len);
	CHECK(memcmp(a->data, b->data, a->len) == 0);
}

/* The part of full's output at or past min_offset, message by message. */
static void
filtered(const klog_buf_t *full, int64_t min_offset, klog_buf_t *out)
{
	size_t pos = PREFIX_LEN, n;

	prefixed(out);
	while (pos < full->len) {
		n = 12 + (size_t)klog_be32(full->data + pos + 8);
		if ((int64_t)rd64(full->data + pos) >= min_offset)
			klog_buf_put(out, full->data + pos, n);
		pos += n;
	}
	CHECK(!out->failed);
}

/*
 * Serve set[0..len) (at base) whole, then from a few min_offsets and with a
 * few max_outs picked by sel; each a prefix of what it should be; CRCs
 * checked if crcs.
 */
static void
serve_all(const uint8_t *set, size_t len, int64_t base, uint32_t sel,
    int crcs, klog_buf_t *full, klog_kmsg_out_info_t *finfo)
{
	int64_t mins[3] = {
		base + (int64_t)(len ? (sel % len) : 0),
		base + (int64_t)len - 1,
		base - 1 - (int64_t)(sel & 0xff),
	};
	size_t outs[3] = { 0, (sel >> 8) & 0x3ff, SIZE_MAX };
	klog_kmsg_out_info_t info;
	klog_buf_t b, want, cut;

	serve(set, len, base, base, SIZE_MAX, crcs, full, finfo);
	for (int i = 0; i < 3; i++) {
		serve(set, len, base, mins[i], SIZE_MAX, crcs, &b, &info);
		/* Only wrappers wholly below min_offset are skipped unopened:
		 * what the whole serve had from there on comes first. */
		if (mins[i] <= base) {
			CHECK(b.len == full->len &&
			    memcmp(b.data, full->data, b.len) == 0);
		} else {
			filtered(full, mins[i], &want);
			if (finfo->bad_offset == -1 && finfo->need == 0 &&
			    finfo->consumed == len)
				CHECK(b.len == want.len);
			check_prefix_of(&want, &b);
			klog_buf_free(&want);
		}
		for (int j = 0; j < 3; j++) {
			serve(set, len, base, mins[i], outs[j], crcs, &cut,
			    &info);
			check_prefix_of(&cut, &b);
			klog_buf_free(&cut);
		}
		klog_buf_free(&b);
	}
}

/* The ingested plain set, served whole: each message at its byte offset
 * (S + E - 1) with its payload. */
static void
check_served_plain(const uint8_t *set, size_t len, int64_t base,
    const klog_buf_t *served)
{
	klog_iter_t it;
	klog_msg_t m;
	size_t pos = PREFIX_LEN;

	klog_iter_init(&it, set, len, base, 0, 0);
	while (klog_iter_next(&it, &m) == 1) {
		const uint8_t *k = served->data + pos;

		CHECK(served->len - pos >= 26u + m.payload_len);
		CHECK((int64_t)rd64(k) == klog_kmsg_offset(m.offset,
		    4 + m.length));
		CHECK(klog_be32(k + 22) == m.payload_len);
		CHECK(m.payload_len == 0 ||
		    memcmp(k + 26, m.payload, m.payload_len) == 0);
		pos += 26u + m.payload_len;
	}
	klog_iter_free(&it);
	CHECK(pos == served->len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	klog_kmsg_out_info_t oinfo;
	klog_kmsg_in_info_t in;
	klog_buf_t out, served;
	uint8_t *copy;
	uint32_t sel = 0;
	int64_t base;
	int rc;

	copy = malloc(size + (size == 0));
	CHECK(copy != NULL);
	if (size > 0)
		memcpy(copy, data, size);
	for (size_t i = 0; i < size && i < 4; i++)
		sel = sel << 8 | copy[size - 1 - i];
	base = (int64_t)(sel % 100000);

	/* A produce request's set. */
	prefixed(&out);
	out.failed = 0;
	rc = klog_kmsg_ingest(copy, size, MAX_PAYLOAD, MAX_INFLATE, &out, &in);
	CHECK(rc == 0 || rc == -KLOG_ECORRUPT || rc == -KLOG_EUNSUPPORTED ||
	    rc == -KLOG_ETOOBIG || rc == -KLOG_ENOMEM);
	check_prefix(&out);
	if (rc < 0) {
		CHECK(out.len == PREFIX_LEN);
	} else {
		const uint8_t *set = out.data + PREFIX_LEN;
		size_t len = out.len - PREFIX_LEN;

		if (size == 0)
			CHECK(len == 0 && in.messages == 0);
		check_ingested(set, len, &in, MAX_PAYLOAD);
		serve_all(set, len, base, sel, 1, &served, &oinfo);
		CHECK(oinfo.bad_offset == -1 && oinfo.need == 0);
		CHECK(oinfo.consumed == len && oinfo.messages == in.messages);
		check_served_plain(set, len, base, &served);
		klog_buf_free(&served);
	}
	klog_buf_free(&out);

	/* The bytes as a 0.7 set from a segment. */
	serve_all(copy, size, base, sel, 0, &served, &oinfo);
	klog_buf_free(&served);

	free(copy);
	return 0;
}
