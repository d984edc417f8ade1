/*
 * libFuzzer target for lib/kafka/kmsg.c: arbitrary bytes as a Kafka MessageSet
 * (a produce request's) to klog_kmsg_ingest(), and what that writes, a
 * 0.7 set, back out through klog_kmsg_serve(); and the input itself as a
 * 0.7 set read from a segment, to klog_kmsg_serve().
 *
 * Both write after bytes already in the buffer, which must survive; on
 * error ingest must leave the buffer as it was.  What ingest writes must
 * be valid magic-0 and magic-2 entries within the limits, as many
 * messages as it says (ingested.h).  Serve runs at the message format of
 * a fetch version picked by the input (0, 1 or 2): what it writes is
 * parsed here as Kafka magic-0 or magic-1 messages, and record batches
 * for magic 2: offsets non-decreasing and at or past min_offset (a
 * batch's last record's), as many as it says, consumed
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
 * megabyte of zeros; 07-* are klog sets, fuzz_msgset's, a gzip and two
 * snappy (xerial, raw) wrappers built by hand, and two segments of magic-2
 * entries kcat -K wrote through the listener (07-magic2-kcat-headers, with
 * -H and a plain message after; 07-magic2-kcat-gzip, -z gzip).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kmsg.h"
#include "klog/kafka/kserve.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

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

/* The key and value of the message at m (size bytes from its magic),
 * filling it exactly; the value's length. */
static uint32_t
check_fields(const uint8_t *m, uint32_t size)
{
	size_t h = m[0] == 1 ? 10 : 2, at;
	uint32_t klen, vlen;

	CHECK(size >= h + 8);
	klen = klog_be32(m + h);
	at = h + 4 + (klen == UINT32_MAX ? 0 : klen);
	CHECK(at + 4 <= size);
	vlen = klog_be32(m + at);
	CHECK(at + 4 + (vlen == UINT32_MAX ? 0 : vlen) == size);
	return vlen;
}

/* The record batch at p, len bytes left, served at or past min_offset:
 * its size; *count its records, *last its last offset. */
static size_t
check_batch(const uint8_t *p, size_t len, int64_t min_offset, int crcs,
    uint32_t *count, int64_t *last)
{
	uint32_t blen = klog_be32(p + 8);
	klog_batch_t h;

	CHECK(blen >= 9 + KLOG_BATCH_BODY_HEADER && blen <= len - 12);
	CHECK(klog_be32(p + 12) == UINT32_MAX);
	CHECK(!crcs || klog_crc32c(0, p + 21, blen - 9) == klog_be32(p + 17));
	CHECK(klog_batch_read(p + 21, blen - 9, &h) == 0 && h.count >= 1);
	/* Whole while its last record is at or past the offset. */
	CHECK((int64_t)rd64(p) + h.count - 1 >= min_offset);
	*count = (uint32_t)h.count;
	*last = (int64_t)rd64(p) + h.last_offset_delta;
	return 12 + (size_t)blen;
}

/*
 * The Kafka set p[0..len) that serve wrote: whole messages of magic (0 or
 * 1, or for 2 those and record batches), CRCs valid if crcs, offsets
 * non-decreasing from min_offset.  Returns their count (a batch's
 * records).
 */
static uint32_t
check_kafka_set(const uint8_t *p, size_t len, int64_t min_offset, int crcs,
    int magic)
{
	int64_t last = INT64_MIN, off;
	uint32_t n = 0, size, count;
	size_t pos = 0;

	while (pos < len) {
		CHECK(len - pos >= 12 + 14);
		off = (int64_t)rd64(p + pos);
		if (p[pos + 16] == 2) {
			CHECK(magic == 2 && off >= last);
			pos += check_batch(p + pos, len - pos, min_offset,
			    crcs, &count, &last);
			n += count;
			continue;
		}
		size = klog_be32(p + pos + 8);
		CHECK(size >= 14 && size <= len - pos - 12);
		CHECK(!crcs || klog_crc32(0, p + pos + 16, size - 4) ==
		    klog_be32(p + pos + 12));
		/* Plain entries as magic 0; records as the version reads. */
		CHECK(p[pos + 16] == 0 || (p[pos + 16] == 1 && magic == 1));
		CHECK((p[pos + 17] & ~8) == 0);
		(void)check_fields(p + pos + 16, size - 4);
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
    int magic, size_t max_out, int crcs, klog_buf_t *out,
    klog_kmsg_out_info_t *info)
{
	int rc;

	prefixed(out);
	rc = klog_kmsg_serve(set, len,
	    &(klog_kmsg_serve_opt_t){ .base = base, .min_offset = min_offset,
	    .magic = magic, .max_out = max_out, .max_inflate = MAX_INFLATE },
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
	CHECK((info->need != 0) == (info->stop == KLOG_KSERVE_CUT));
	if (info->need != 0)
		CHECK(info->need >= 4 && info->consumed + info->need > len);
	CHECK(info->stop != KLOG_KSERVE_BIG);
	CHECK((info->stop == KLOG_KSERVE_SERVED) == (info->consumed == len));
	CHECK((info->stop == KLOG_KSERVE_BAD) == (info->bad_offset != -1));
	CHECK(check_kafka_set(out->data + PREFIX_LEN, out->len - PREFIX_LEN,
	    min_offset, crcs, magic) == info->messages);
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
		const uint8_t *p = full->data + pos;
		int64_t last = (int64_t)rd64(p);
		klog_batch_t h;

		n = 12 + (size_t)klog_be32(p + 8);
		if (p[16] == 2 && klog_batch_read(p + 21, n - 21, &h) == 0)
			last += h.count - 1;
		if (last >= min_offset)
			klog_buf_put(out, p, n);
		pos += n;
	}
	CHECK(!out->failed);
}

/*
 * set[0..len) walked as the listener walks a slice (kfetch.c): windows of
 * w bytes, more for an entry they cut; a magic-2 entry of big bytes or
 * more by its head alone (klog_kserve_head()), its body put after as
 * sendfile sends it.  The bytes must be those of one serve of the whole,
 * full (from base, no limit).
 */
static void
serve_windows(const uint8_t *set, size_t len, int64_t base, int magic,
    size_t w, uint32_t big, const klog_buf_t *full)
{
	klog_kmsg_serve_opt_t opt = { .min_offset = base, .magic = magic,
	    .max_out = SIZE_MAX, .max_inflate = MAX_INFLATE, .big = big };
	klog_kmsg_out_info_t info;
	klog_kserve_t c;
	klog_buf_t out;
	size_t pos = 0, want = w, n, body;

	prefixed(&out);
	while (pos < len) {
		n = len - pos < want ? len - pos : want;
		want = w;
		opt.base = base + (int64_t)pos;
		opt.prior = out.len - PREFIX_LEN;
		if (klog_kmsg_serve(set + pos, n, &opt, &out, &info) < 0)
			goto out;
		pos += info.consumed;
		if (info.stop == KLOG_KSERVE_SERVED)
			continue;
		if (info.stop == KLOG_KSERVE_CUT && info.need <= len - pos) {
			want = info.need > w ? info.need : w;
			continue;
		}
		if (info.stop != KLOG_KSERVE_BIG)
			break;
		CHECK(magic == 2 && info.big_length >= big);
		if (KLOG_LENGTH_SIZE + (size_t)info.big_length > len - pos)
			break;
		c = (klog_kserve_t){ .min_offset = base, .max_out = SIZE_MAX,
		    .start = out.len, .prior = out.len - PREFIX_LEN, .out = &out,
		    .magic = 2 };
		if (klog_kserve_head(&c, set + pos, info.big_length,
		    base + (int64_t)pos, &body) != KLOG_KSERVE_SERVED)
			break;
		CHECK(body == 0 || body == KLOG_LENGTH_SIZE +
		    info.big_length - KLOG_KSERVE_BODY_AT);
		klog_buf_put(&out, set + pos + KLOG_KSERVE_BODY_AT, body);
		pos += KLOG_LENGTH_SIZE + info.big_length;
	}
	CHECK(!out.failed && out.len == full->len &&
	    memcmp(out.data, full->data, out.len) == 0);
out:
	klog_buf_free(&out);
}

/*
 * Serve set[0..len) (at base) whole, then from a few min_offsets and with a
 * few max_outs picked by sel; each a prefix of what it should be; CRCs
 * checked if crcs.
 */
static void
serve_all(const uint8_t *set, size_t len, int64_t base, uint32_t sel,
    int magic, int crcs, klog_buf_t *full, klog_kmsg_out_info_t *finfo)
{
	int64_t mins[3] = {
		base + (int64_t)(len ? (sel % len) : 0),
		base + (int64_t)len - 1,
		base - 1 - (int64_t)(sel & 0xff),
	};
	size_t outs[3] = { 0, (sel >> 8) & 0x3ff, SIZE_MAX };
	klog_kmsg_out_info_t info;
	klog_buf_t b, want, cut;

	serve(set, len, base, base, magic, SIZE_MAX, crcs, full, finfo);
	serve_windows(set, len, base, magic, 1 + (sel >> 18) % 300,
	    46 + (sel >> 10) % 200, full);
	for (int i = 0; i < 3; i++) {
		serve(set, len, base, mins[i], magic, SIZE_MAX, crcs, &b,
		    &info);
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
			serve(set, len, base, mins[i], magic, outs[j], crcs,
			    &cut, &info);
			check_prefix_of(&cut, &b);
			klog_buf_free(&cut);
		}
		klog_buf_free(&b);
	}
}

/* The served message at served + *pos: at offset off with value v
 * (NULL, n -1: null); *pos moves past it. */
static void
check_served(const klog_buf_t *served, size_t *pos, int64_t off,
    const uint8_t *v, int32_t n)
{
	const uint8_t *k = served->data + *pos;
	uint32_t size, vlen;

	CHECK(served->len - *pos >= 26);
	size = klog_be32(k + 8);
	CHECK(size <= served->len - *pos - 12);
	CHECK((int64_t)rd64(k) == off);
	vlen = check_fields(k + 16, size - 4);
	CHECK((int32_t)vlen == (n < 0 ? -1 : n));
	CHECK(n <= 0 || memcmp(k + 12 + size - (size_t)n, v, (size_t)n) == 0);
	*pos += 12 + size;
}

/* The ingested set, served whole as messages: a plain entry's at its
 * byte offset (S + E - 1) with its payload, a magic-2 entry's records at
 * W + i, the last at E - 1, with their values. */
static void
check_served_plain(const uint8_t *set, size_t len, int64_t base,
    const klog_buf_t *served)
{
	size_t pos = PREFIX_LEN, at = 0, rp;
	klog_record_t r;
	klog_batch_t h;

	while (at < len) {
		const uint8_t *e = set + at;
		uint32_t n = klog_be32(e);
		int64_t w = base + (int64_t)at, end = w + 4 + n - 1;

		at += 4 + (size_t)n;
		if (e[4] == 0) {
			check_served(served, &pos, end, e + 9, (int32_t)n - 5);
			continue;
		}
		CHECK(klog_batch_read(e + 10, n - 6, &h) == 0);
		rp = 10 + KLOG_BATCH_BODY_HEADER;
		for (int32_t i = 0; i < h.count; i++) {
			CHECK(klog_record_read(e + rp, 4 + n - rp, &r) == 0);
			check_served(served, &pos, i + 1 == h.count ? end :
			    w + i, r.value, r.value_len);
			rp += r.size;
		}
	}
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
	int rc, magic;
	klog_kingest_t opt = { MAX_PAYLOAD, MAX_INFLATE, 0,
	    KLOG_NO_TIMESTAMP };

	copy = malloc(size + (size == 0));
	CHECK(copy != NULL);
	if (size > 0)
		memcpy(copy, data, size);
	for (size_t i = 0; i < size && i < 4; i++)
		sel = sel << 8 | copy[size - 1 - i];
	base = (int64_t)(sel % 100000);
	magic = (int)((sel >> 20) % 3);
	opt.append_time = sel & 0x80000000u ? 1765000000000LL :
	    KLOG_NO_TIMESTAMP;

	/* A produce request's set. */
	prefixed(&out);
	out.failed = 0;
	rc = klog_kmsg_ingest(copy, size, &opt, &out, &in);
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
		check_ingested(set, len, &in, MAX_PAYLOAD, MAX_INFLATE, 1);
		serve_all(set, len, base, sel, magic, 1, &served, &oinfo);
		CHECK(oinfo.bad_offset == -1 && oinfo.need == 0);
		CHECK(oinfo.consumed == len && oinfo.messages == in.messages);
		if (magic < 2)
			check_served_plain(set, len, base, &served);
		klog_buf_free(&served);
	}
	klog_buf_free(&out);

	/* The bytes as a 0.7 set from a segment. */
	serve_all(copy, size, base, sel, magic, 0, &served, &oinfo);
	klog_buf_free(&served);

	free(copy);
	return 0;
}
