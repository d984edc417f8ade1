/*
 * Unit tests for lib/proto/proto.c.  The expected frames are written out byte by
 * byte from the layouts in include/klog/proto.h: they are the specification,
 * not the output of the encoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/proto/proto.h"

#define STR(s) ((klog_str_t){ (s), (uint16_t)(sizeof(s) - 1) })
#define MAXN 4

/* ---- the reference frames ---- */

/* PRODUCE, correlation 7, acks 1, timeout 1500 ms,
 * ("ab", 3, "xyz") and ("c", -1, empty set). */
static const uint8_t produce_req[] = {
	0x00, 0x00, 0x00, 0x2c,                   /* size 44 */
	0x00, 0x00,                               /* api PRODUCE */
	0x00, 0x01,                               /* version 1 */
	0x00, 0x00, 0x00, 0x07,                   /* correlation */
	0x00, 0x01,                               /* acks 1 */
	0x00, 0x00, 0x05, 0xdc,                   /* timeout 1500 */
	0x00, 0x00, 0x00, 0x02,                   /* count */
	0x00, 0x02, 'a', 'b',                     /* topic */
	0x00, 0x00, 0x00, 0x03,                   /* partition 3 */
	0x00, 0x00, 0x00, 0x03,                   /* set_size */
	'x', 'y', 'z',
	0x00, 0x01, 'c',
	0xff, 0xff, 0xff, 0xff,                   /* partition -1 */
	0x00, 0x00, 0x00, 0x00,                   /* empty set */
};

static const uint8_t produce_resp[] = {
	0x00, 0x00, 0x00, 0x2d,                   /* size 45 */
	0x00, 0x00, 0x00, 0x07,                   /* correlation */
	0x00, 0x00,                               /* error NONE */
	0x00, 0x00, 0x00, 0x02,                   /* count */
	0x00, 0x02, 'a', 'b',
	0x00, 0x00, 0x00, 0x03,                   /* partition */
	0x00, 0x00,                               /* error */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  /* offset */
	0x00, 0x01, 'c',
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x05,                               /* MESSAGE_TOO_LARGE */
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  /* offset -1 */
};

/* FETCH, correlation 8: wait 100 ms for 1 byte; ("t", 0, 0x1234, 1 MiB). */
static const uint8_t fetch_req[] = {
	0x00, 0x00, 0x00, 0x27,                   /* size 39 */
	0x00, 0x01,                               /* api FETCH */
	0x00, 0x01,
	0x00, 0x00, 0x00, 0x08,
	0x00, 0x00, 0x00, 0x64,                   /* max_wait_ms 100 */
	0x00, 0x00, 0x00, 0x01,                   /* min_bytes 1 */
	0x00, 0x00, 0x00, 0x01,                   /* count */
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x00,                   /* partition */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x34,  /* offset */
	0x00, 0x10, 0x00, 0x00,                   /* max_bytes */
};

static const uint8_t fetch_resp[] = {
	0x00, 0x00, 0x00, 0x47,                   /* size 71 */
	0x00, 0x00, 0x00, 0x09,
	0x00, 0x00,
	0x00, 0x00, 0x00, 0x02,                   /* count */
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x00,                   /* partition 0 */
	0x00, 0x00,                               /* error */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* log_start */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20,  /* log_end */
	0x00, 0x00, 0x00, 0x03,                   /* set_size */
	'a', 'b', 'c',
	0x00, 0x01, 'u',
	0x00, 0x00, 0x00, 0x01,
	0x00, 0x01,                               /* OFFSET_OUT_OF_RANGE */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a,
	0x00, 0x00, 0x00, 0x00,
};

/* OFFSETS, correlation 10: ("t", 0, latest, 1), ("t", 2, 1300000000000, 10) */
static const uint8_t offsets_req[] = {
	0x00, 0x00, 0x00, 0x32,                   /* size 50 */
	0x00, 0x04,                               /* api OFFSETS */
	0x00, 0x01,
	0x00, 0x00, 0x00, 0x0a,
	0x00, 0x00, 0x00, 0x02,
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  /* time -1 */
	0x00, 0x00, 0x00, 0x01,                   /* max */
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x01, 0x2e, 0xae, 0x09, 0xc8, 0x00,  /* time */
	0x00, 0x00, 0x00, 0x0a,
};

static const uint8_t offsets_resp[] = {
	0x00, 0x00, 0x00, 0x34,                   /* size 52 */
	0x00, 0x00, 0x00, 0x0a,
	0x00, 0x00,
	0x00, 0x00, 0x00, 0x02,
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00,
	0x00, 0x00, 0x00, 0x02,                   /* n */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 't',
	0x00, 0x00, 0x00, 0x02,
	0x00, 0x03,                               /* WRONG_PARTITION */
	0x00, 0x00, 0x00, 0x00,
};

/* METADATA, correlation 11: topics "a" and "bc". */
static const uint8_t metadata_req[] = {
	0x00, 0x00, 0x00, 0x13,                   /* size 19 */
	0x00, 0x05,                               /* api METADATA */
	0x00, 0x01,
	0x00, 0x00, 0x00, 0x0b,
	0x00, 0x00, 0x00, 0x02,
	0x00, 0x01, 'a',
	0x00, 0x02, 'b', 'c',
};

static const uint8_t metadata_resp[] = {
	0x00, 0x00, 0x00, 0x38,                   /* size 56 */
	0x00, 0x00, 0x00, 0x0b,
	0x00, 0x00,
	0x00, 0x00, 0x00, 0x01,                   /* broker_id */
	0x00, 0x00, 0x00, 0x01,                   /* nbrokers */
	0x00, 0x00, 0x00, 0x01,                   /* id */
	0x00, 0x01, 'h',
	0x00, 0x00, 0x23, 0x84,                   /* port 9092 */
	0x00, 0x00, 0x00, 0x02,                   /* ntopics */
	0x00, 0x00,                               /* error */
	0x00, 0x01, 'a',
	0x00, 0x00, 0x00, 0x02,                   /* partitions */
	0x00, 0x00, 0x00, 0x01,                   /* broker_id */
	0x00, 0x07,                               /* UNKNOWN_TOPIC */
	0x00, 0x02, 'z', 'z',
	0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0xff, 0xff,
};

/* REPLICA_FETCH, correlation 11: broker 2 at epoch 7, waiting 500 ms, of
 * ("ab", 3) from 0x0102030405060708, flushed to 0x01020304050606ff, its
 * newest epoch 6, up to 1 MiB. */
static const uint8_t rfetch_req[] = {
	0x00, 0x00, 0x00, 0x34,                   /* size 52 */
	0x00, 0x06,                               /* api REPLICA_FETCH */
	0x00, 0x01,
	0x00, 0x00, 0x00, 0x0b,                   /* correlation */
	0x00, 0x00, 0x00, 0x02,                   /* replica_id */
	0x00, 0x00, 0x00, 0x07,                   /* leader_epoch */
	0x00, 0x00, 0x01, 0xf4,                   /* max_wait_ms 500 */
	0x00, 0x02, 'a', 'b',                     /* topic */
	0x00, 0x00, 0x00, 0x03,                   /* partition */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  /* offset */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x06, 0xff,  /* flushed */
	0x00, 0x00, 0x00, 0x06,                   /* last_epoch */
	0x00, 0x10, 0x00, 0x00,                   /* max_bytes */
};

/* Its answer: epoch 7, HW 0x40, log 0x10..0x50, a 3-byte chunk of epoch
 * 6, no divergence. */
static const uint8_t rfetch_resp[] = {
	0x00, 0x00, 0x00, 0x3b,                   /* size 59 */
	0x00, 0x00, 0x00, 0x0b,                   /* correlation */
	0x00, 0x00,                               /* frame error */
	0x00, 0x00,                               /* error */
	0x00, 0x00, 0x00, 0x07,                   /* leader_epoch */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,  /* hw */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,  /* log_start */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50,  /* log_end */
	0x00, 0x00, 0x00, 0x06,                   /* chunk_epoch */
	0xff, 0xff, 0xff, 0xff,                   /* diverging_epoch -1 */
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  /* diverging_end */
	0x00, 0x00, 0x00, 0x03,                   /* set_size */
	'a', 'b', 'c',
};

#define REQ_BODY(a) ((a) + KLOG_REQ_HEADER_SIZE)
#define REQ_BODY_LEN(a) (sizeof(a) - KLOG_REQ_HEADER_SIZE)
#define RESP_BODY(a) ((a) + KLOG_RESP_HEADER_SIZE)
#define RESP_BODY_LEN(a) (sizeof(a) - KLOG_RESP_HEADER_SIZE)

static void
assert_str(klog_str_t s, const char *want)
{
	assert_int_equal(s.len, strlen(want));
	assert_memory_equal(s.p, want, s.len);
}

static void
assert_frame(klog_buf_t *b, const uint8_t *want, size_t len)
{
	assert_false(b->failed);
	assert_int_equal(b->len, len);
	assert_memory_equal(b->data, want, len);
}

/* ---- decoders with arrays of their own, for the table-driven tests ---- */

typedef int (*decode_fn)(const uint8_t *, size_t);

static int
dec_produce(const uint8_t *p, size_t n)
{
	klog_produce_req_t req;
	klog_produce_part_t parts[MAXN];

	return klog_proto_decode_produce(p, n, &req, parts, MAXN);
}

static int
dec_produce_resp(const uint8_t *p, size_t n)
{
	klog_produce_result_t res[MAXN];
	uint32_t k;

	return klog_proto_decode_produce_resp(p, n, res, MAXN, &k);
}

static int
dec_fetch(const uint8_t *p, size_t n)
{
	klog_fetch_req_t req;
	klog_fetch_part_t parts[MAXN];

	return klog_proto_decode_fetch(p, n, &req, parts, MAXN);
}

static int
dec_fetch_resp(const uint8_t *p, size_t n)
{
	klog_fetch_result_t res[MAXN];
	uint32_t k;

	return klog_proto_decode_fetch_resp(p, n, res, MAXN, &k);
}

static int
dec_offsets(const uint8_t *p, size_t n)
{
	klog_offsets_part_t parts[MAXN];
	uint32_t k;

	return klog_proto_decode_offsets(p, n, parts, MAXN, &k);
}

static int
dec_offsets_resp(const uint8_t *p, size_t n)
{
	klog_offsets_result_t res[MAXN];
	uint32_t k;

	return klog_proto_decode_offsets_resp(p, n, res, MAXN, &k);
}

static int
dec_metadata(const uint8_t *p, size_t n)
{
	klog_str_t topics[MAXN];
	uint32_t k;

	return klog_proto_decode_metadata(p, n, topics, MAXN, &k);
}

static int
dec_metadata_resp(const uint8_t *p, size_t n)
{
	klog_metadata_t md;
	klog_meta_broker_t brokers[MAXN];
	klog_meta_topic_t topics[MAXN];

	return klog_proto_decode_metadata_resp(p, n, &md, brokers, MAXN,
	    topics, MAXN);
}

static int
dec_rfetch(const uint8_t *p, size_t n)
{
	klog_rfetch_req_t req;

	return klog_proto_decode_rfetch(p, n, &req);
}

static int
dec_rfetch_resp(const uint8_t *p, size_t n)
{
	klog_rfetch_resp_t r;

	return klog_proto_decode_rfetch_resp(p, n, &r);
}

/* Decode a copy of exactly len bytes on the heap, so ASan sees any read
 * past it. */
static int
decode_copy(decode_fn fn, const uint8_t *body, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, body, len);
	rc = fn(copy, len);
	free(copy);
	return rc;
}

/* ---- header and framing ---- */

static void
test_req_frame(void **state)
{
	static const uint8_t want[] = {
		0x00, 0x00, 0x00, 0x08,
		0x00, 0x0d,
		0x00, 0x01,
		0xff, 0xff, 0xff, 0xfe,
	};
	klog_buf_t b;
	klog_req_header_t h;
	size_t start;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put(&b, "junk", 4);
	start = klog_proto_req_begin(&b, 13, -2);
	assert_int_equal(start, 4);
	klog_proto_end(&b, start);
	assert_int_equal(b.len, 4 + sizeof(want));
	assert_memory_equal(b.data + 4, want, sizeof(want));
	assert_int_equal(klog_proto_req_header(b.data + 4, sizeof(want), 100,
	    &h), 0);
	assert_int_equal(h.size, 8);
	assert_int_equal(h.api, 13);
	assert_int_equal(h.version, KLOG_PROTO_VERSION);
	assert_int_equal(h.correlation, -2);
	klog_buf_free(&b);
}

static void
test_resp_frame(void **state)
{
	static const uint8_t want[] = {
		0x00, 0x00, 0x00, 0x08,
		0x00, 0x00, 0x01, 0x00,
		0x00, 0x0c,                       /* UNSUPPORTED_VERSION */
		0xab, 0xcd,
	};
	klog_buf_t b;
	klog_resp_header_t h;
	size_t start;

	(void)state;
	klog_buf_init(&b);
	start = klog_proto_resp_begin(&b, 256,
	    KLOG_WIRE_UNSUPPORTED_VERSION);
	klog_buf_put_i16(&b, (int16_t)0xabcd);
	klog_proto_end(&b, start);
	assert_frame(&b, want, sizeof(want));
	assert_int_equal(klog_proto_resp_header(b.data, b.len, 100, &h), 0);
	assert_int_equal(h.size, 8);
	assert_int_equal(h.correlation, 256);
	assert_int_equal(h.error, KLOG_WIRE_UNSUPPORTED_VERSION);
	klog_buf_free(&b);
}

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void
test_req_header_edges(void **state)
{
	uint8_t buf[KLOG_REQ_HEADER_SIZE] = {
		0, 0, 0, 8, 0, 1, 0, 1, 0, 0, 0, 5,
	};
	klog_req_header_t h;

	(void)state;
	for (size_t len = 0; len < 4; len++)
		assert_int_equal(klog_proto_req_header(buf, len, 100, &h),
		    -KLOG_EPARTIAL);
	assert_int_equal(klog_proto_req_header(NULL, 0, 100, &h),
	    -KLOG_EPARTIAL);
	/* a good size with the rest still to come */
	for (size_t len = 4; len < sizeof(buf); len++) {
		h.size = 0;
		assert_int_equal(klog_proto_req_header(buf, len, 100, &h),
		    -KLOG_EPARTIAL);
		assert_int_equal(h.size, 8);
	}
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf), 100, &h), 0);
	assert_int_equal(h.api, KLOG_API_FETCH);
	assert_int_equal(h.correlation, 5);

	/* a size too small for the header is refused from its 4 bytes */
	for (uint32_t s = 0; s < 8; s++) {
		put_be32(buf, s);
		assert_int_equal(klog_proto_req_header(buf, 4, 100, &h),
		    -KLOG_EPROTO);
	}
	put_be32(buf, 0x80000000u);
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf), SIZE_MAX, &h),
	    -KLOG_EPROTO);
	put_be32(buf, 0xffffffffu);
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf), SIZE_MAX, &h),
	    -KLOG_EPROTO);

	/* max_size bounds the size field, inclusive */
	put_be32(buf, 100);
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf), 100, &h), 0);
	assert_int_equal(h.size, 100);
	put_be32(buf, 101);
	assert_int_equal(klog_proto_req_header(buf, 4, 100, &h),
	    -KLOG_ETOOBIG);
	put_be32(buf, 0x7fffffff);
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf),
	    KLOG_DEFAULT_MAX_REQUEST, &h), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_req_header(buf, sizeof(buf), SIZE_MAX, &h),
	    0);
}

static void
test_resp_header_edges(void **state)
{
	uint8_t buf[KLOG_RESP_HEADER_SIZE] = {
		0, 0, 0, 6, 0, 0, 0, 3, 0xff, 0xff,
	};
	klog_resp_header_t h;

	(void)state;
	for (size_t len = 0; len < 4; len++)
		assert_int_equal(klog_proto_resp_header(buf, len, 100, &h),
		    -KLOG_EPARTIAL);
	for (size_t len = 4; len < sizeof(buf); len++)
		assert_int_equal(klog_proto_resp_header(buf, len, 100, &h),
		    -KLOG_EPARTIAL);
	assert_int_equal(klog_proto_resp_header(buf, sizeof(buf), 100, &h), 0);
	assert_int_equal(h.size, 6);
	assert_int_equal(h.correlation, 3);
	assert_int_equal(h.error, KLOG_WIRE_UNKNOWN);
	put_be32(buf, 5);
	assert_int_equal(klog_proto_resp_header(buf, sizeof(buf), 100, &h),
	    -KLOG_EPROTO);
	put_be32(buf, 0xfffffffau);
	assert_int_equal(klog_proto_resp_header(buf, sizeof(buf), 100, &h),
	    -KLOG_EPROTO);
	put_be32(buf, 101);
	assert_int_equal(klog_proto_resp_header(buf, sizeof(buf), 100, &h),
	    -KLOG_ETOOBIG);
}

/* ---- byte-exact encodings and their decodings ---- */

static void
test_produce(void **state)
{
	klog_produce_part_t in[2] = {
		{ STR("ab"), 3, (const uint8_t *)"xyz", 3 },
		{ STR("c"), -1, NULL, 0 },
	};
	klog_produce_req_t req = { KLOG_ACKS_LEADER, 1500, 2, in };
	klog_produce_req_t out;
	klog_produce_part_t parts[2];
	klog_req_header_t h;
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_produce(&b, 7, &req), 0);
	assert_frame(&b, produce_req, sizeof(produce_req));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_req_header(produce_req,
	    sizeof(produce_req), 1000, &h), 0);
	assert_int_equal(h.size, sizeof(produce_req) - 4);
	assert_int_equal(h.api, KLOG_API_PRODUCE);
	assert_int_equal(h.correlation, 7);
	assert_int_equal(klog_proto_decode_produce(REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), &out, parts, 2), 0);
	assert_int_equal(out.acks, 1);
	assert_int_equal(out.timeout_ms, 1500);
	assert_int_equal(out.count, 2);
	assert_ptr_equal(out.parts, parts);
	assert_str(parts[0].topic, "ab");
	assert_ptr_equal(parts[0].topic.p, produce_req + 24);
	assert_int_equal(parts[0].partition, 3);
	assert_int_equal(parts[0].set_len, 3);
	assert_ptr_equal(parts[0].set, produce_req + 34);
	assert_str(parts[1].topic, "c");
	assert_int_equal(parts[1].partition, -1);
	assert_int_equal(parts[1].set_len, 0);
}

static void
test_produce_resp(void **state)
{
	klog_produce_result_t in[2] = {
		{ STR("ab"), 3, KLOG_WIRE_NONE, 0x0102030405060708 },
		{ STR("c"), 0, KLOG_WIRE_MESSAGE_TOO_LARGE, -1 },
	};
	klog_produce_result_t res[2];
	klog_buf_t b;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_produce_resp(&b, 7, in, 2), 0);
	assert_frame(&b, produce_resp, sizeof(produce_resp));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_produce_resp(RESP_BODY(produce_resp),
	    RESP_BODY_LEN(produce_resp), res, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_str(res[0].topic, "ab");
	assert_int_equal(res[0].partition, 3);
	assert_int_equal(res[0].error, 0);
	assert_int_equal(res[0].offset, 0x0102030405060708);
	assert_str(res[1].topic, "c");
	assert_int_equal(res[1].error, KLOG_WIRE_MESSAGE_TOO_LARGE);
	assert_int_equal(res[1].offset, -1);
}

static void
test_fetch(void **state)
{
	klog_fetch_part_t in[1] = { { STR("t"), 0, 0x1234, 1 << 20 } };
	klog_fetch_req_t req = { 100, 1, 1, in };
	klog_fetch_req_t out;
	klog_fetch_part_t parts[1];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_fetch(&b, 8, &req), 0);
	assert_frame(&b, fetch_req, sizeof(fetch_req));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_fetch(REQ_BODY(fetch_req),
	    REQ_BODY_LEN(fetch_req), &out, parts, 1), 0);
	assert_int_equal(out.max_wait_ms, 100);
	assert_int_equal(out.min_bytes, 1);
	assert_int_equal(out.count, 1);
	assert_ptr_equal(out.parts, parts);
	assert_str(parts[0].topic, "t");
	assert_int_equal(parts[0].partition, 0);
	assert_int_equal(parts[0].offset, 0x1234);
	assert_int_equal(parts[0].max_bytes, 1 << 20);
}

/* The broker's way: part headers through the buffer, sets by sendfile, the
 * frame size patched to count both. */
static void
test_fetch_resp(void **state)
{
	klog_fetch_result_t res[2];
	klog_buf_t b;
	size_t start, sent;
	uint8_t *wire;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	start = klog_proto_resp_begin(&b, 9, KLOG_WIRE_NONE);
	klog_buf_put_i32(&b, 2);
	klog_proto_put_fetch_part_header(&b, STR("t"), 0, KLOG_WIRE_NONE, 0,
	    0x20, 3);
	sent = b.len;
	klog_proto_put_fetch_part_header(&b, STR("u"), 1,
	    KLOG_WIRE_OFFSET_OUT_OF_RANGE, 5, 10, 0);
	klog_buf_patch_i32(&b, start, (int32_t)(b.len - start - 4 + 3));
	assert_false(b.failed);
	/* what goes out: buffer up to sent, the 3 file bytes, the rest */
	wire = malloc(b.len + 3);
	assert_non_null(wire);
	memcpy(wire, b.data, sent);
	memcpy(wire + sent, "abc", 3);
	memcpy(wire + sent + 3, b.data + sent, b.len - sent);
	assert_int_equal(b.len + 3, sizeof(fetch_resp));
	assert_memory_equal(wire, fetch_resp, sizeof(fetch_resp));
	free(wire);

	/* the same frame built entirely in the buffer */
	klog_buf_reset(&b);
	start = klog_proto_resp_begin(&b, 9, KLOG_WIRE_NONE);
	klog_buf_put_i32(&b, 2);
	klog_proto_put_fetch_part_header(&b, STR("t"), 0, KLOG_WIRE_NONE, 0,
	    0x20, 3);
	klog_buf_put(&b, "abc", 3);
	klog_proto_put_fetch_part_header(&b, STR("u"), 1,
	    KLOG_WIRE_OFFSET_OUT_OF_RANGE, 5, 10, 0);
	klog_proto_end(&b, start);
	assert_frame(&b, fetch_resp, sizeof(fetch_resp));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_fetch_resp(RESP_BODY(fetch_resp),
	    RESP_BODY_LEN(fetch_resp), res, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_str(res[0].topic, "t");
	assert_int_equal(res[0].error, 0);
	assert_int_equal(res[0].log_start, 0);
	assert_int_equal(res[0].log_end, 0x20);
	assert_int_equal(res[0].set_len, 3);
	assert_memory_equal(res[0].set, "abc", 3);
	assert_ptr_equal(res[0].set, fetch_resp + 43);
	assert_str(res[1].topic, "u");
	assert_int_equal(res[1].partition, 1);
	assert_int_equal(res[1].error, KLOG_WIRE_OFFSET_OUT_OF_RANGE);
	assert_int_equal(res[1].log_start, 5);
	assert_int_equal(res[1].log_end, 10);
	assert_int_equal(res[1].set_len, 0);
}

static void
test_offsets(void **state)
{
	klog_offsets_part_t in[2] = {
		{ STR("t"), 0, KLOG_OFFSET_LATEST, 1 },
		{ STR("t"), 2, 1300000000000, 10 },
	};
	klog_offsets_part_t parts[2];
	klog_buf_t b;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_offsets(&b, 10, in, 2), 0);
	assert_frame(&b, offsets_req, sizeof(offsets_req));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_offsets(REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), parts, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_str(parts[0].topic, "t");
	assert_int_equal(parts[0].time, -1);
	assert_int_equal(parts[0].max, 1);
	assert_int_equal(parts[1].partition, 2);
	assert_int_equal(parts[1].time, 1300000000000);
	assert_int_equal(parts[1].max, 10);
}

static void
test_offsets_resp(void **state)
{
	klog_offsets_part_t parts[2] = {
		{ STR("t"), 0, KLOG_OFFSET_LATEST, 2 },
		{ STR("t"), 2, KLOG_OFFSET_EARLIEST, 1 },
	};
	const int16_t errors[2] = { 0, KLOG_WIRE_WRONG_PARTITION };
	const int64_t offs0[2] = { 0x200, 0 };
	const int64_t *const offsets[2] = { offs0, NULL };
	const int32_t counts[2] = { 2, 0 };
	klog_offsets_result_t res[2];
	klog_buf_t b;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_offsets_resp(&b, 10, parts, errors,
	    offsets, counts, 2), 0);
	assert_frame(&b, offsets_resp, sizeof(offsets_resp));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_offsets_resp(RESP_BODY(offsets_resp),
	    RESP_BODY_LEN(offsets_resp), res, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_str(res[0].topic, "t");
	assert_int_equal(res[0].error, 0);
	assert_int_equal(res[0].count, 2);
	assert_int_equal(klog_proto_offset_at(&res[0], 0), 0x200);
	assert_int_equal(klog_proto_offset_at(&res[0], 1), 0);
	assert_int_equal(klog_proto_offset_at(&res[0], 2), -1);
	assert_int_equal(klog_proto_offset_at(&res[0], -1), -1);
	assert_int_equal(res[1].partition, 2);
	assert_int_equal(res[1].error, KLOG_WIRE_WRONG_PARTITION);
	assert_int_equal(res[1].count, 0);
	assert_int_equal(klog_proto_offset_at(&res[1], 0), -1);
}

static void
test_metadata(void **state)
{
	static const uint8_t all[] = {
		0x00, 0x00, 0x00, 0x0c,
		0x00, 0x05,
		0x00, 0x01,
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00,           /* no topics: all of them */
	};
	const klog_str_t in[2] = { STR("a"), STR("bc") };
	klog_str_t topics[2];
	klog_buf_t b;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_metadata(&b, 11, in, 2), 0);
	assert_frame(&b, metadata_req, sizeof(metadata_req));
	klog_buf_reset(&b);
	assert_int_equal(klog_proto_encode_metadata(&b, 0, NULL, 0), 0);
	assert_frame(&b, all, sizeof(all));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_metadata(REQ_BODY(metadata_req),
	    REQ_BODY_LEN(metadata_req), topics, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_str(topics[0], "a");
	assert_str(topics[1], "bc");
	assert_int_equal(klog_proto_decode_metadata(REQ_BODY(all),
	    REQ_BODY_LEN(all), NULL, 0, &n), 0);
	assert_int_equal(n, 0);
}

static void
test_metadata_resp(void **state)
{
	klog_meta_broker_t brokers_in[1] = { { 1, STR("h"), 9092 } };
	klog_meta_topic_t topics_in[2] = {
		{ KLOG_WIRE_NONE, STR("a"), 2, 1 },
		{ KLOG_WIRE_UNKNOWN_TOPIC, STR("zz"), 0, -1 },
	};
	klog_metadata_t md = { 1, 1, brokers_in, 2, topics_in };
	klog_metadata_t out;
	klog_meta_broker_t brokers[1];
	klog_meta_topic_t topics[2];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_metadata_resp(&b, 11, &md), 0);
	assert_frame(&b, metadata_resp, sizeof(metadata_resp));
	klog_buf_free(&b);

	assert_int_equal(klog_proto_decode_metadata_resp(
	    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), &out,
	    brokers, 1, topics, 2), 0);
	assert_int_equal(out.broker_id, 1);
	assert_int_equal(out.nbrokers, 1);
	assert_ptr_equal(out.brokers, brokers);
	assert_int_equal(brokers[0].id, 1);
	assert_str(brokers[0].host, "h");
	assert_int_equal(brokers[0].port, 9092);
	assert_int_equal(out.ntopics, 2);
	assert_ptr_equal(out.topics, topics);
	assert_int_equal(topics[0].error, 0);
	assert_str(topics[0].topic, "a");
	assert_int_equal(topics[0].partitions, 2);
	assert_int_equal(topics[0].broker_id, 1);
	assert_int_equal(topics[1].error, KLOG_WIRE_UNKNOWN_TOPIC);
	assert_str(topics[1].topic, "zz");
	assert_int_equal(topics[1].partitions, 0);
	assert_int_equal(topics[1].broker_id, -1);
}

/* A produce with a large set, through a growing buffer and back. */
static void
test_produce_round_trip_large(void **state)
{
	enum { SET = 300000 };
	uint8_t *set = malloc(SET);
	klog_produce_part_t in[1] = { { STR("big"), 0, set, SET } };
	klog_produce_req_t req = { KLOG_ACKS_ALL, 0, 1, in };
	klog_produce_req_t out;
	klog_produce_part_t parts[1];
	klog_req_header_t h;
	klog_buf_t b;

	(void)state;
	assert_non_null(set);
	for (size_t i = 0; i < SET; i++)
		set[i] = (uint8_t)(i * 31);
	klog_buf_init(&b);
	klog_buf_put(&b, "prev", 4);
	assert_int_equal(klog_proto_encode_produce(&b, 1, &req), 0);
	assert_int_equal(klog_proto_req_header(b.data + 4, b.len - 4,
	    KLOG_DEFAULT_MAX_REQUEST, &h), 0);
	assert_int_equal((size_t)h.size, b.len - 8);
	assert_int_equal(klog_proto_decode_produce(b.data + 4 +
	    KLOG_REQ_HEADER_SIZE, b.len - 4 - KLOG_REQ_HEADER_SIZE, &out,
	    parts, 1), 0);
	assert_int_equal(out.acks, KLOG_ACKS_ALL);
	assert_int_equal(parts[0].set_len, SET);
	assert_memory_equal(parts[0].set, set, SET);
	klog_buf_free(&b);
	free(set);
}

/* ---- malformed input ---- */

struct body_case {
	const char *name;
	decode_fn fn;
	const uint8_t *body;
	size_t len;
};

#define REQ_CASE(f, a) { #a, f, REQ_BODY(a), REQ_BODY_LEN(a) }
#define RESP_CASE(f, a) { #a, f, RESP_BODY(a), RESP_BODY_LEN(a) }

static const struct body_case cases[] = {
	REQ_CASE(dec_produce, produce_req),
	RESP_CASE(dec_produce_resp, produce_resp),
	REQ_CASE(dec_fetch, fetch_req),
	RESP_CASE(dec_fetch_resp, fetch_resp),
	REQ_CASE(dec_offsets, offsets_req),
	RESP_CASE(dec_offsets_resp, offsets_resp),
	REQ_CASE(dec_metadata, metadata_req),
	RESP_CASE(dec_metadata_resp, metadata_resp),
	REQ_CASE(dec_rfetch, rfetch_req),
	RESP_CASE(dec_rfetch_resp, rfetch_resp),
};

static void
test_truncations(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct body_case *k = &cases[c];

		assert_int_equal(decode_copy(k->fn, k->body, k->len), 0);
		for (size_t len = 0; len < k->len; len++)
			if (decode_copy(k->fn, k->body, len) != -KLOG_EPROTO)
				fail_msg("%s cut to %zu bytes: not EPROTO",
				    k->name, len);
	}
}

static void
test_trailing_bytes(void **state)
{
	uint8_t buf[256];

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct body_case *k = &cases[c];

		assert_true(k->len + 1 <= sizeof(buf));
		memcpy(buf, k->body, k->len);
		buf[k->len] = 0;
		if (decode_copy(k->fn, buf, k->len + 1) != -KLOG_EPROTO)
			fail_msg("%s with a trailing byte: not EPROTO",
			    k->name);
	}
}

/* A copy of a reference body with 4 bytes at off replaced by v. */
static int
decode_patched(decode_fn fn, const uint8_t *body, size_t len, size_t off,
    uint32_t v)
{
	uint8_t buf[256];

	assert_true(len <= sizeof(buf) && off + 4 <= len);
	memcpy(buf, body, len);
	put_be32(buf + off, v);
	return decode_copy(fn, buf, len);
}

/* A count over the caller's array never touches the array. */
static void
test_counts_over_max(void **state)
{
	klog_produce_req_t req;
	klog_fetch_req_t freq;
	klog_produce_result_t pres;
	klog_metadata_t md;
	klog_meta_broker_t brokers[1];
	uint32_t n;

	(void)state;
	assert_int_equal(klog_proto_decode_produce(REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), &req, NULL, 1), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_produce_resp(
	    RESP_BODY(produce_resp), RESP_BODY_LEN(produce_resp), &pres, 1,
	    &n), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_fetch(REQ_BODY(fetch_req),
	    REQ_BODY_LEN(fetch_req), &freq, NULL, 0), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_fetch_resp(RESP_BODY(fetch_resp),
	    RESP_BODY_LEN(fetch_resp), NULL, 1, &n), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_offsets(REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), NULL, 1, &n), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_offsets_resp(
	    RESP_BODY(offsets_resp), RESP_BODY_LEN(offsets_resp), NULL, 1,
	    &n), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_metadata(REQ_BODY(metadata_req),
	    REQ_BODY_LEN(metadata_req), NULL, 1, &n), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_metadata_resp(
	    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), &md,
	    NULL, 0, NULL, 2), -KLOG_ETOOBIG);
	assert_int_equal(klog_proto_decode_metadata_resp(
	    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), &md,
	    brokers, 1, NULL, 1), -KLOG_ETOOBIG);
	/* a huge count is refused before any entry is read */
	assert_int_equal(decode_patched(dec_produce, REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), 6, 0x7fffffff), -KLOG_ETOOBIG);
	assert_int_equal(decode_patched(dec_fetch_resp, RESP_BODY(fetch_resp),
	    RESP_BODY_LEN(fetch_resp), 0, 0x10000), -KLOG_ETOOBIG);
}

/* Offsets of fields inside the reference bodies (after the header). */
static void
test_negative_fields(void **state)
{
	static const struct {
		const char *what;
		decode_fn fn;
		const uint8_t *body;
		size_t len, off;
	} neg[] = {
		{ "produce count", dec_produce, REQ_BODY(produce_req),
		    REQ_BODY_LEN(produce_req), 6 },
		{ "produce timeout", dec_produce, REQ_BODY(produce_req),
		    REQ_BODY_LEN(produce_req), 2 },
		{ "produce set_size", dec_produce, REQ_BODY(produce_req),
		    REQ_BODY_LEN(produce_req), 18 },
		{ "last produce set_size", dec_produce, REQ_BODY(produce_req),
		    REQ_BODY_LEN(produce_req), 32 },
		{ "produce_resp count", dec_produce_resp,
		    RESP_BODY(produce_resp), RESP_BODY_LEN(produce_resp), 0 },
		{ "fetch max_wait", dec_fetch, REQ_BODY(fetch_req),
		    REQ_BODY_LEN(fetch_req), 0 },
		{ "fetch min_bytes", dec_fetch, REQ_BODY(fetch_req),
		    REQ_BODY_LEN(fetch_req), 4 },
		{ "fetch count", dec_fetch, REQ_BODY(fetch_req),
		    REQ_BODY_LEN(fetch_req), 8 },
		{ "fetch max_bytes", dec_fetch, REQ_BODY(fetch_req),
		    REQ_BODY_LEN(fetch_req), 27 },
		{ "fetch_resp set_size", dec_fetch_resp, RESP_BODY(fetch_resp),
		    RESP_BODY_LEN(fetch_resp), 29 },
		{ "offsets count", dec_offsets, REQ_BODY(offsets_req),
		    REQ_BODY_LEN(offsets_req), 0 },
		{ "offsets max", dec_offsets, REQ_BODY(offsets_req),
		    REQ_BODY_LEN(offsets_req), 19 },
		{ "offsets_resp n", dec_offsets_resp, RESP_BODY(offsets_resp),
		    RESP_BODY_LEN(offsets_resp), 13 },
		{ "metadata count", dec_metadata, REQ_BODY(metadata_req),
		    REQ_BODY_LEN(metadata_req), 0 },
		{ "metadata_resp nbrokers", dec_metadata_resp,
		    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), 4 },
		{ "metadata_resp ntopics", dec_metadata_resp,
		    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), 19 },
		{ "metadata_resp partitions", dec_metadata_resp,
		    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), 28 },
	};
	static const uint32_t bad[] = { 0xffffffffu, 0x80000000u };

	(void)state;
	for (size_t i = 0; i < sizeof(neg) / sizeof(neg[0]); i++)
		for (size_t j = 0; j < 2; j++)
			if (decode_patched(neg[i].fn, neg[i].body, neg[i].len,
			    neg[i].off, bad[j]) != -KLOG_EPROTO)
				fail_msg("negative %s: not EPROTO",
				    neg[i].what);
}

static int
decode_patched16(decode_fn fn, const uint8_t *body, size_t len, size_t off,
    uint16_t v)
{
	uint8_t buf[256];

	assert_true(len <= sizeof(buf) && off + 2 <= len);
	memcpy(buf, body, len);
	buf[off] = (uint8_t)(v >> 8);
	buf[off + 1] = (uint8_t)v;
	return decode_copy(fn, buf, len);
}

static void
test_null_strings(void **state)
{
	(void)state;
	/* topic of the first part, of the second, a broker host */
	assert_int_equal(decode_patched16(dec_produce, REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), 10, 0xffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched16(dec_produce, REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), 25, 0xffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched16(dec_fetch, REQ_BODY(fetch_req),
	    REQ_BODY_LEN(fetch_req), 12, 0xffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched16(dec_offsets, REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), 4, 0xffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched16(dec_metadata, REQ_BODY(metadata_req),
	    REQ_BODY_LEN(metadata_req), 7, 0xffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched16(dec_metadata_resp,
	    RESP_BODY(metadata_resp), RESP_BODY_LEN(metadata_resp), 12, 0xffff),
	    -KLOG_EPROTO);
	assert_int_equal(decode_patched16(dec_produce_resp,
	    RESP_BODY(produce_resp), RESP_BODY_LEN(produce_resp), 4, 0x8000),
	    -KLOG_EPROTO);
	/* a string longer than what is left */
	assert_int_equal(decode_patched16(dec_fetch_resp, RESP_BODY(fetch_resp),
	    RESP_BODY_LEN(fetch_resp), 4, 0x7fff), -KLOG_EPROTO);
}

static void
test_bad_values(void **state)
{
	static const uint16_t acks_ok[] = { 0x0000, 0x0001, 0xffff };
	static const uint16_t acks_bad[] = { 0x0002, 0xfffe, 0x7fff, 0x8000 };

	(void)state;
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(decode_patched16(dec_produce,
		    REQ_BODY(produce_req), REQ_BODY_LEN(produce_req), 0,
		    acks_ok[i]), 0);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(decode_patched16(dec_produce,
		    REQ_BODY(produce_req), REQ_BODY_LEN(produce_req), 0,
		    acks_bad[i]), -KLOG_EPROTO);
	/* time -2 is earliest; -3 means nothing */
	assert_int_equal(decode_patched(dec_offsets, REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), 15, 0xfffffffe), 0);
	assert_int_equal(decode_patched(dec_offsets, REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), 15, 0xfffffffd), -KLOG_EPROTO);
	/* an offsets count too big for the body must not overflow n * 8 */
	assert_int_equal(decode_patched(dec_offsets_resp,
	    RESP_BODY(offsets_resp), RESP_BODY_LEN(offsets_resp), 13,
	    0x7fffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_offsets_resp,
	    RESP_BODY(offsets_resp), RESP_BODY_LEN(offsets_resp), 13,
	    0x20000000), -KLOG_EPROTO);
	/* a set size pointing past the body */
	assert_int_equal(decode_patched(dec_produce, REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), 18, 0x7fffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_produce, REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), 18, 4), -KLOG_EPROTO);
}

/* ---- encoders on bad input ---- */

static void
test_encode_refuses(void **state)
{
	static char big[INT16_MAX + 1];
	klog_produce_part_t part = { { big, INT16_MAX + 1 }, 0, NULL, 0 };
	klog_produce_req_t req = { 1, 0, 1, &part };
	klog_offsets_part_t opart = { STR("t"), 0, -1, 1 };
	const int32_t neg = -1;
	const int16_t err = 0;
	const int64_t *offs = NULL;
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put(&b, "keep", 4);
	assert_int_equal(klog_proto_encode_produce(&b, 1, &req),
	    -KLOG_EINVAL);
	part.topic.len = 3;
	part.set_len = 0x80000000u;
	assert_int_equal(klog_proto_encode_produce(&b, 1, &req),
	    -KLOG_EINVAL);
	assert_int_equal(klog_proto_encode_offsets_resp(&b, 1, &opart, &err,
	    &offs, &neg, 1), -KLOG_EINVAL);
	assert_int_equal(klog_proto_encode_metadata(&b, 1,
	    &(klog_str_t){ big, INT16_MAX + 1 }, 1), -KLOG_EINVAL);
	assert_false(b.failed);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.data, "keep", 4);
	/* the longest string is fine */
	assert_int_equal(klog_proto_encode_metadata(&b, 1,
	    &(klog_str_t){ big, INT16_MAX }, 1), 0);
	assert_int_equal(b.len, 4 + KLOG_REQ_HEADER_SIZE + 4 + 2 + INT16_MAX);

	/* an earlier failure is sticky: the encoder reports it */
	klog_buf_reset(&b);
	assert_int_equal(klog_buf_reserve(&b, SIZE_MAX), -KLOG_ENOMEM);
	assert_int_equal(klog_proto_encode_metadata(&b, 1, NULL, 0),
	    -KLOG_ENOMEM);
	assert_int_equal(b.len, 0);
	klog_buf_free(&b);
}

/* ---- error codes ---- */

static void
test_error_names(void **state)
{
	(void)state;
	for (int c = 0; c < KLOG_WIRE_ERROR_MAX; c++) {
		const char *name = klog_wire_error_name(c);

		assert_non_null(name);
		if (strcmp(name, "UNKNOWN") == 0 || name[0] == '\0')
			fail_msg("wire error %d has no name", c);
		for (int d = 0; d < c; d++)
			assert_string_not_equal(name, klog_wire_error_name(d));
	}
	assert_string_equal(klog_wire_error_name(KLOG_WIRE_NONE), "NONE");
	assert_string_equal(klog_wire_error_name(1), "OFFSET_OUT_OF_RANGE");
	assert_string_equal(klog_wire_error_name(8), "NOT_BOUNDARY");
	assert_string_equal(klog_wire_error_name(16), "PARTIAL_MESSAGE");
	assert_string_equal(klog_wire_error_name(-1), "UNKNOWN");
	assert_string_equal(klog_wire_error_name(-2), "UNKNOWN");
	assert_string_equal(klog_wire_error_name(KLOG_WIRE_ERROR_MAX),
	    "UNKNOWN");
	assert_string_equal(klog_wire_error_name(32767), "UNKNOWN");
}

static void
test_error_mapping(void **state)
{
	/* wire -> klog -> the same wire code */
	static const struct {
		int wire, klog;
	} both[] = {
		{ KLOG_WIRE_NONE, 0 },
		{ KLOG_WIRE_OFFSET_OUT_OF_RANGE, -KLOG_ERANGE },
		{ KLOG_WIRE_INVALID_MESSAGE, -KLOG_ECORRUPT },
		{ KLOG_WIRE_WRONG_PARTITION, -KLOG_ENOPARTITION },
		{ KLOG_WIRE_INVALID_FETCH_SIZE, -KLOG_EINVAL },
		{ KLOG_WIRE_MESSAGE_TOO_LARGE, -KLOG_ETOOBIG },
		{ KLOG_WIRE_INVALID_TOPIC, -KLOG_ETOPIC },
		{ KLOG_WIRE_UNKNOWN_TOPIC, -KLOG_ENOTOPIC },
		{ KLOG_WIRE_NOT_BOUNDARY, -KLOG_ENOTBOUNDARY },
		{ KLOG_WIRE_STORAGE_ERROR, -KLOG_EIO },
		{ KLOG_WIRE_DISK_FULL, -KLOG_ENOSPC },
		{ KLOG_WIRE_INVALID_REQUEST, -KLOG_EPROTO },
		{ KLOG_WIRE_UNSUPPORTED_CODEC, -KLOG_EUNSUPPORTED },
		{ KLOG_WIRE_PARTIAL_MESSAGE, -KLOG_EPARTIAL },
		{ KLOG_WIRE_NOT_LEADER, -KLOG_ENOTLEADER },
		{ KLOG_WIRE_NOT_ENOUGH_REPLICAS, -KLOG_ENOREPLICAS },
		{ KLOG_WIRE_FENCED_LEADER_EPOCH, -KLOG_EFENCED },
	};
	/* wire -> klog only: the reverse picks another code */
	static const struct {
		int wire, klog;
	} one[] = {
		{ KLOG_WIRE_UNKNOWN, -KLOG_EBROKER },
		{ KLOG_WIRE_UNSUPPORTED_VERSION, -KLOG_EUNSUPPORTED },
		{ KLOG_WIRE_UNKNOWN_API, -KLOG_EUNSUPPORTED },
		{ KLOG_WIRE_REQUEST_TOO_LARGE, -KLOG_ETOOBIG },
		{ KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND, -KLOG_ENOREPLICAS },
		/* The admin answers' (klog-group words them itself). */
		{ KLOG_WIRE_TOPIC_EXISTS, -KLOG_EEXIST },
		{ KLOG_WIRE_INVALID_PARTITIONS, -KLOG_EINVAL },
		{ KLOG_WIRE_TOPIC_REPLICATED, -KLOG_EBUSY },
		{ KLOG_WIRE_ERROR_MAX, -KLOG_EBROKER },
		{ 1000, -KLOG_EBROKER },
		{ -7, -KLOG_EBROKER },
	};
	int covered[KLOG_WIRE_ERROR_MAX] = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(both) / sizeof(both[0]); i++) {
		assert_int_equal(klog_wire_error_to_klog(both[i].wire),
		    both[i].klog);
		assert_int_equal(klog_wire_error_from_klog(both[i].klog),
		    both[i].wire);
		/* a positive code means the same */
		assert_int_equal(klog_wire_error_from_klog(-both[i].klog),
		    both[i].wire);
		covered[both[i].wire] = 1;
	}
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		assert_int_equal(klog_wire_error_to_klog(one[i].wire),
		    one[i].klog);
		if (one[i].wire >= 0 && one[i].wire < KLOG_WIRE_ERROR_MAX)
			covered[one[i].wire] = 1;
	}
	for (int c = 0; c < KLOG_WIRE_ERROR_MAX; c++)
		if (!covered[c])
			fail_msg("wire error %d not in the mapping test", c);
	/* every non-zero wire code is an error to the library */
	for (int c = 1; c < KLOG_WIRE_ERROR_MAX; c++)
		assert_true(klog_wire_error_to_klog(c) < 0);
	/* library codes with no wire meaning */
	assert_int_equal(klog_wire_error_from_klog(-KLOG_EBROKER),
	    KLOG_WIRE_UNKNOWN);
	assert_int_equal(klog_wire_error_from_klog(-KLOG_ENOMEM),
	    KLOG_WIRE_UNKNOWN);
	assert_int_equal(klog_wire_error_from_klog(-KLOG_E_MAX),
	    KLOG_WIRE_UNKNOWN);
}

static void
test_api_names(void **state)
{
	(void)state;
	assert_string_equal(klog_proto_api_name(KLOG_API_PRODUCE), "PRODUCE");
	assert_string_equal(klog_proto_api_name(KLOG_API_FETCH), "FETCH");
	assert_string_equal(klog_proto_api_name(KLOG_API_OFFSETS), "OFFSETS");
	assert_string_equal(klog_proto_api_name(KLOG_API_METADATA),
	    "METADATA");
	assert_string_equal(klog_proto_api_name(KLOG_API_REPLICA_FETCH),
	    "REPLICA_FETCH");
	assert_string_equal(klog_proto_api_name(6), "REPLICA_FETCH");
	assert_string_equal(klog_proto_api_name(7), "REPLICA_POS");
	assert_string_equal(klog_proto_api_name(8), "CREATE_TOPIC");
	assert_string_equal(klog_proto_api_name(9), "ALTER_TOPIC");
	assert_string_equal(klog_proto_api_name(10), "DELETE_TOPIC");
	assert_string_equal(klog_proto_api_name(11), "UNKNOWN");
	assert_string_equal(klog_proto_api_name(2), "UNKNOWN");
	assert_string_equal(klog_proto_api_name(-1), "UNKNOWN");
}

/* ---- REPLICA_FETCH ---- */

static const klog_rfetch_req_t rfetch_in = {
	.replica_id = 2, .leader_epoch = 7, .max_wait_ms = 500,
	.topic = STR("ab"), .partition = 3, .offset = 0x0102030405060708,
	.flushed = 0x01020304050606ff, .last_epoch = 6, .max_bytes = 1 << 20,
};

static void
test_rfetch(void **state)
{
	klog_rfetch_req_t q = rfetch_in, out;
	klog_buf_t b;
	static char big[INT16_MAX + 1];

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_rfetch(&b, 11, &q), 0);
	assert_frame(&b, rfetch_req, sizeof(rfetch_req));
	/* a topic too long for the wire: nothing written */
	klog_buf_reset(&b);
	q.topic = (klog_str_t){ big, INT16_MAX + 1 };
	assert_int_equal(klog_proto_encode_rfetch(&b, 11, &q), -KLOG_EINVAL);
	assert_int_equal(b.len, 0);
	klog_buf_free(&b);

	memset(&out, 0x55, sizeof(out));
	assert_int_equal(klog_proto_decode_rfetch(REQ_BODY(rfetch_req),
	    REQ_BODY_LEN(rfetch_req), &out), 0);
	assert_int_equal(out.replica_id, 2);
	assert_int_equal(out.leader_epoch, 7);
	assert_int_equal(out.max_wait_ms, 500);
	assert_str(out.topic, "ab");
	assert_ptr_equal(out.topic.p, rfetch_req + KLOG_REQ_HEADER_SIZE + 14);
	assert_int_equal(out.partition, 3);
	assert_int_equal(out.offset, 0x0102030405060708);
	assert_int_equal(out.flushed, 0x01020304050606ff);
	assert_int_equal(out.last_epoch, 6);
	assert_int_equal(out.max_bytes, 1 << 20);

	/* zeros and the smallest values allowed round-trip too */
	q = (klog_rfetch_req_t){ .topic = STR("t"), .last_epoch = -1 };
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_rfetch(&b, 0, &q), 0);
	assert_int_equal(klog_proto_decode_rfetch(b.data +
	    KLOG_REQ_HEADER_SIZE, b.len - KLOG_REQ_HEADER_SIZE, &out), 0);
	assert_int_equal(out.replica_id, 0);
	assert_int_equal(out.leader_epoch, 0);
	assert_int_equal(out.offset, 0);
	assert_int_equal(out.flushed, 0);
	assert_int_equal(out.last_epoch, -1);
	assert_int_equal(out.max_bytes, 0);
	klog_buf_free(&b);
}

/* REPLICA_POS, byte for byte: header, then replica 2, epoch 7, "ab",
 * partition 3, offset, flushed. */
static const uint8_t rpos_req[] = {
	0, 0, 0, 40, 0, 7, 0, 1, 0, 0, 0, 12,
	0, 0, 0, 2, 0, 0, 0, 7, 0, 2, 'a', 'b', 0, 0, 0, 3,
	1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 6, 0xff,
};

static void
test_rpos(void **state)
{
	klog_rfetch_req_t q = rfetch_in, out;
	const uint8_t *body = rpos_req + KLOG_REQ_HEADER_SIZE;
	size_t len = sizeof(rpos_req) - KLOG_REQ_HEADER_SIZE;
	uint8_t bad[sizeof(rpos_req)];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_rpos(&b, 12, &q), 0);
	assert_int_equal(b.len, sizeof(rpos_req));
	assert_memory_equal(b.data, rpos_req, sizeof(rpos_req));
	klog_buf_free(&b);
	memset(&out, 0x55, sizeof(out));
	assert_int_equal(klog_proto_decode_rpos(body, len, &out), 0);
	assert_int_equal(out.replica_id, 2);
	assert_int_equal(out.leader_epoch, 7);
	assert_str(out.topic, "ab");
	assert_int_equal(out.partition, 3);
	assert_int_equal(out.offset, 0x0102030405060708);
	assert_int_equal(out.flushed, 0x01020304050606ff);
	assert_int_equal(out.last_epoch, -1);
	assert_int_equal(out.max_wait_ms, 0);
	/* short, long, negative */
	for (size_t n = 0; n < len; n++)
		assert_int_equal(klog_proto_decode_rpos(body, n, &out),
		    -KLOG_EPROTO);
	memcpy(bad, rpos_req, sizeof(bad));
	bad[KLOG_REQ_HEADER_SIZE] = 0x80;          /* replica id < 0 */
	assert_int_equal(klog_proto_decode_rpos(bad + KLOG_REQ_HEADER_SIZE,
	    len, &out), -KLOG_EPROTO);
	memcpy(bad, rpos_req, sizeof(bad));
	bad[KLOG_REQ_HEADER_SIZE + 24] = 0x80;     /* flushed < 0 */
	assert_int_equal(klog_proto_decode_rpos(bad + KLOG_REQ_HEADER_SIZE,
	    len, &out), -KLOG_EPROTO);
}

/* ---- CREATE_TOPIC, ALTER_TOPIC, DELETE_TOPIC ---- */

/* CREATE_TOPIC "ab" with 3 partitions, correlation 12, byte for byte;
 * DELETE_TOPIC sends no count. */
static const uint8_t create_req[] = {
	0, 0, 0, 16, 0, 8, 0, 1, 0, 0, 0, 12,
	0, 2, 'a', 'b', 0, 0, 0, 3,
};
static const uint8_t delete_req[] = {
	0, 0, 0, 12, 0, 10, 0, 1, 0, 0, 0, 12,
	0, 2, 'a', 'b',
};

static void
test_topic_admin(void **state)
{
	klog_topic_admin_t q = { STR("ab"), 3 }, out;
	const uint8_t *body = create_req + KLOG_REQ_HEADER_SIZE;
	size_t len = sizeof(create_req) - KLOG_REQ_HEADER_SIZE;
	uint8_t bad[sizeof(create_req)];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_topic_admin(&b,
	    KLOG_API_CREATE_TOPIC, 12, &q), 0);
	assert_int_equal(b.len, sizeof(create_req));
	assert_memory_equal(b.data, create_req, sizeof(create_req));
	klog_buf_reset(&b);
	assert_int_equal(klog_proto_encode_topic_admin(&b,
	    KLOG_API_DELETE_TOPIC, 12, &q), 0);
	assert_int_equal(b.len, sizeof(delete_req));
	assert_memory_equal(b.data, delete_req, sizeof(delete_req));
	klog_buf_reset(&b);
	/* Not an admin api, a negative count: nothing written. */
	assert_int_equal(klog_proto_encode_topic_admin(&b, KLOG_API_FETCH, 1,
	    &q), -KLOG_EINVAL);
	q.partitions = -1;
	assert_int_equal(klog_proto_encode_topic_admin(&b,
	    KLOG_API_ALTER_TOPIC, 1, &q), -KLOG_EINVAL);
	assert_int_equal(b.len, 0);
	klog_buf_free(&b);

	memset(&out, 0x55, sizeof(out));
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_ALTER_TOPIC,
	    body, len, &out), 0);
	assert_str(out.topic, "ab");
	assert_int_equal(out.partitions, 3);
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_DELETE_TOPIC,
	    delete_req + KLOG_REQ_HEADER_SIZE,
	    sizeof(delete_req) - KLOG_REQ_HEADER_SIZE, &out), 0);
	assert_str(out.topic, "ab");
	assert_int_equal(out.partitions, 0);
	/* A delete with a count has a byte left over; short bodies. */
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_DELETE_TOPIC,
	    body, len, &out), -KLOG_EPROTO);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(klog_proto_decode_topic_admin(
		    KLOG_API_CREATE_TOPIC, body, n, &out), -KLOG_EPROTO);
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_PRODUCE, body,
	    len, &out), -KLOG_EINVAL);
	memcpy(bad, create_req, sizeof(bad));
	bad[KLOG_REQ_HEADER_SIZE + 4] = 0x80;      /* partitions < 0 */
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_CREATE_TOPIC,
	    bad + KLOG_REQ_HEADER_SIZE, len, &out), -KLOG_EPROTO);
	memcpy(bad, create_req, sizeof(bad));
	bad[KLOG_REQ_HEADER_SIZE] = 0xff;          /* a null topic */
	bad[KLOG_REQ_HEADER_SIZE + 1] = 0xff;
	assert_int_equal(klog_proto_decode_topic_admin(KLOG_API_CREATE_TOPIC,
	    bad + KLOG_REQ_HEADER_SIZE, len, &out), -KLOG_EPROTO);
}

/* Its answer: header (correlation 12, no error), "ab", INVALID_PARTITIONS,
 * 4 partitions. */
static const uint8_t admin_resp[] = {
	0, 0, 0, 16, 0, 0, 0, 12, 0, 0,
	0, 2, 'a', 'b', 0, 22, 0, 0, 0, 4,
};

static void
test_topic_admin_resp(void **state)
{
	klog_topic_admin_resp_t r = { STR("ab"),
	    KLOG_WIRE_INVALID_PARTITIONS, 4 }, out;
	const uint8_t *body = admin_resp + KLOG_RESP_HEADER_SIZE;
	size_t len = sizeof(admin_resp) - KLOG_RESP_HEADER_SIZE;
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_topic_admin_resp(&b, 12, &r), 0);
	assert_int_equal(b.len, sizeof(admin_resp));
	assert_memory_equal(b.data, admin_resp, sizeof(admin_resp));
	klog_buf_free(&b);
	memset(&out, 0x55, sizeof(out));
	assert_int_equal(klog_proto_decode_topic_admin_resp(body, len, &out),
	    0);
	assert_str(out.topic, "ab");
	assert_int_equal(out.error, KLOG_WIRE_INVALID_PARTITIONS);
	assert_int_equal(out.partitions, 4);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(klog_proto_decode_topic_admin_resp(body, n,
		    &out), -KLOG_EPROTO);
	assert_string_equal(klog_wire_error_name(KLOG_WIRE_TOPIC_EXISTS),
	    "TOPIC_EXISTS");
	assert_int_equal(klog_wire_error_to_klog(KLOG_WIRE_TOPIC_REPLICATED),
	    -KLOG_EBUSY);
}

static const klog_rfetch_resp_t rfetch_out = {
	.error = KLOG_WIRE_NONE, .leader_epoch = 7, .hw = 0x40,
	.log_start = 0x10, .log_end = 0x50, .chunk_epoch = 6,
	.diverging_epoch = -1, .diverging_end = -1, .set_len = 3,
};

static void
test_rfetch_resp(void **state)
{
	klog_rfetch_resp_t r = rfetch_out, out;
	klog_buf_t b;
	size_t start;

	(void)state;
	/* The leader's way: the header, the set by sendfile, the size
	 * patched. */
	klog_buf_init(&b);
	start = klog_proto_resp_begin(&b, 11, KLOG_WIRE_NONE);
	klog_proto_put_rfetch_header(&b, &r);
	klog_buf_patch_i32(&b, start, (int32_t)(b.len - start - 4 + 3));
	assert_false(b.failed);
	assert_int_equal(b.len + 3, sizeof(rfetch_resp));
	assert_memory_equal(b.data, rfetch_resp, b.len);
	assert_memory_equal(rfetch_resp + b.len, "abc", 3);
	/* all in the buffer */
	klog_buf_reset(&b);
	start = klog_proto_resp_begin(&b, 11, KLOG_WIRE_NONE);
	klog_proto_put_rfetch_header(&b, &r);
	klog_buf_put(&b, "abc", 3);
	klog_proto_end(&b, start);
	assert_frame(&b, rfetch_resp, sizeof(rfetch_resp));
	/* a set too large for the wire fails the buffer */
	klog_buf_reset(&b);
	r.set_len = (uint32_t)INT32_MAX + 1;
	klog_proto_put_rfetch_header(&b, &r);
	assert_true(b.failed);
	klog_buf_free(&b);

	memset(&out, 0x55, sizeof(out));
	assert_int_equal(klog_proto_decode_rfetch_resp(RESP_BODY(rfetch_resp),
	    RESP_BODY_LEN(rfetch_resp), &out), 0);
	assert_int_equal(out.error, KLOG_WIRE_NONE);
	assert_int_equal(out.leader_epoch, 7);
	assert_int_equal(out.hw, 0x40);
	assert_int_equal(out.log_start, 0x10);
	assert_int_equal(out.log_end, 0x50);
	assert_int_equal(out.chunk_epoch, 6);
	assert_int_equal(out.diverging_epoch, -1);
	assert_int_equal(out.diverging_end, -1);
	assert_int_equal(out.set_len, 3);
	assert_ptr_equal(out.set, rfetch_resp + sizeof(rfetch_resp) - 3);

	/* a divergence and an error answer round-trip */
	r = rfetch_out;
	r.error = KLOG_WIRE_FENCED_LEADER_EPOCH;
	r.diverging_epoch = 5;
	r.diverging_end = 0x123456789;
	r.set_len = 0;
	klog_buf_init(&b);
	klog_proto_put_rfetch_header(&b, &r);
	assert_int_equal(b.len, 50);
	assert_int_equal(klog_proto_decode_rfetch_resp(b.data, b.len, &out),
	    0);
	assert_int_equal(out.error, KLOG_WIRE_FENCED_LEADER_EPOCH);
	assert_int_equal(out.diverging_epoch, 5);
	assert_int_equal(out.diverging_end, 0x123456789);
	assert_int_equal(out.set_len, 0);
	klog_buf_free(&b);
}

/* Body offsets of the REPLICA_FETCH fields (request, response). */
enum {
	RQ_REPLICA = 0, RQ_EPOCH = 4, RQ_WAIT = 8, RQ_PARTITION = 16,
	RQ_OFFSET = 20, RQ_FLUSHED = 28, RQ_LAST_EPOCH = 36, RQ_MAX = 40,
	RS_DIV_EPOCH = 34, RS_DIV_END = 38, RS_SET_SIZE = 46,
};

static void
test_rfetch_refusals(void **state)
{
	const uint8_t *q = REQ_BODY(rfetch_req), *a = RESP_BODY(rfetch_resp);
	size_t qn = REQ_BODY_LEN(rfetch_req), an = RESP_BODY_LEN(rfetch_resp);

	(void)state;
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_REPLICA,
	    0xffffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_EPOCH,
	    0xffffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_WAIT,
	    0x80000000), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_OFFSET,
	    0x80000000), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_FLUSHED,
	    0xffffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_LAST_EPOCH,
	    0xfffffffe), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_LAST_EPOCH,
	    0x80000000), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_MAX,
	    0xffffffff), -KLOG_EPROTO);
	/* the edges that are allowed */
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_LAST_EPOCH,
	    0xffffffff), 0);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_REPLICA, 0), 0);
	assert_int_equal(decode_patched(dec_rfetch, q, qn, RQ_EPOCH,
	    0x7fffffff), 0);

	/* a divergence needs an end */
	assert_int_equal(decode_patched(dec_rfetch_resp, a, an, RS_DIV_EPOCH,
	    0), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch_resp, a, an, RS_DIV_EPOCH,
	    5), -KLOG_EPROTO);
	{
		uint8_t buf[128];

		memcpy(buf, a, an);
		put_be32(buf + RS_DIV_EPOCH, 5);
		put_be32(buf + RS_DIV_END, 0);
		put_be32(buf + RS_DIV_END + 4, 0x20);
		assert_int_equal(decode_copy(dec_rfetch_resp, buf, an), 0);
		put_be32(buf + RS_DIV_EPOCH, 0);
		put_be32(buf + RS_DIV_END + 4, 0);
		assert_int_equal(decode_copy(dec_rfetch_resp, buf, an), 0);
	}
	/* a set size that is negative, or longer than what is there */
	assert_int_equal(decode_patched(dec_rfetch_resp, a, an, RS_SET_SIZE,
	    0xffffffff), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch_resp, a, an, RS_SET_SIZE,
	    4), -KLOG_EPROTO);
	assert_int_equal(decode_patched(dec_rfetch_resp, a, an, RS_SET_SIZE,
	    2), -KLOG_EPROTO);
	/* short bodies and leftover bytes: test_truncations and
	 * test_trailing_bytes run these frames too */
	assert_int_equal(decode_copy(dec_rfetch, q, qn - 1), -KLOG_EPROTO);
	assert_int_equal(decode_copy(dec_rfetch_resp, a, an - 1),
	    -KLOG_EPROTO);
}

/* ---- decoders that size their arrays, produce results patched ---- */

static void
test_grow_decoders(void **state)
{
	klog_proto_array_t a = { NULL, 0 };
	klog_produce_req_t preq;
	klog_fetch_req_t freq;
	klog_offsets_part_t *op;
	klog_str_t *names;
	uint32_t n;
	/* A produce body announcing 2^30 parts in 4 bytes: refused before
	 * anything is allocated. */
	static const uint8_t liar[] = { 0, 1, 0, 0, 0, 0, 0x40, 0, 0, 0 };

	(void)state;
	assert_int_equal(klog_proto_decode_produce_grow(REQ_BODY(produce_req),
	    REQ_BODY_LEN(produce_req), &preq, &a), 0);
	assert_int_equal(preq.count, 2);
	assert_ptr_equal(preq.parts, a.p);
	assert_str(preq.parts[1].topic, "c");
	assert_true(a.cap >= 3 * sizeof(klog_produce_part_t));
	assert_int_equal(klog_proto_decode_fetch_grow(REQ_BODY(fetch_req),
	    REQ_BODY_LEN(fetch_req), &freq, &a), 0);
	assert_int_equal(freq.count, 1);
	assert_int_equal(freq.parts[0].offset, 0x1234);
	assert_int_equal(klog_proto_decode_offsets_grow(REQ_BODY(offsets_req),
	    REQ_BODY_LEN(offsets_req), &a, &n), 0);
	op = a.p;
	assert_int_equal(n, 2);
	assert_int_equal(op[1].partition, 2);
	assert_int_equal(op[1].max, 10);
	assert_int_equal(klog_proto_decode_metadata_grow(
	    REQ_BODY(metadata_req), REQ_BODY_LEN(metadata_req), &a, &n), 0);
	names = a.p;
	assert_int_equal(n, 2);
	assert_str(names[1], "bc");
	free(a.p);

	a = (klog_proto_array_t){ NULL, 0 };
	assert_int_equal(klog_proto_decode_produce_grow(liar, sizeof(liar),
	    &preq, &a), -KLOG_EPROTO);
	assert_null(a.p);
	assert_int_equal(klog_proto_decode_produce_grow(liar, 5, &preq, &a),
	    -KLOG_EPROTO);
	assert_int_equal(klog_proto_decode_metadata_grow(liar, 3, &a, &n),
	    -KLOG_EPROTO);
	assert_null(a.p);
}

static void
test_produce_result_patch(void **state)
{
	klog_produce_result_t in[2] = {
		{ STR("ab"), 3, KLOG_WIRE_NONE, 0x0102030405060708 },
		{ STR("c"), 0, KLOG_WIRE_MESSAGE_TOO_LARGE, -1 },
	};
	klog_produce_result_t res[2];
	size_t pos[2];
	klog_buf_t b;
	uint32_t n;

	(void)state;
	klog_buf_init(&b);
	klog_buf_put(&b, "prefix", 6);  /* positions are the buffer's */
	assert_int_equal(klog_proto_encode_produce_resp_at(&b, 7, in, 2, pos),
	    0);
	assert_memory_equal(b.data + 6, produce_resp, sizeof(produce_resp));
	assert_int_equal(pos[0], 6 + 14 + 2 + 2 + 4);
	assert_int_equal(pos[1], pos[0] + 2 + 8 + 2 + 1 + 4);
	klog_proto_patch_produce_result(&b, pos[0], KLOG_WIRE_DISK_FULL);
	assert_int_equal(klog_proto_decode_produce_resp(b.data + 6 + 10,
	    b.len - 6 - 10, res, 2, &n), 0);
	assert_int_equal(res[0].error, KLOG_WIRE_DISK_FULL);
	assert_int_equal(res[0].offset, -1);
	assert_int_equal(res[1].error, KLOG_WIRE_MESSAGE_TOO_LARGE);
	/* Positions outside the buffer change nothing. */
	klog_proto_patch_produce_result(&b, b.len - 9, KLOG_WIRE_DISK_FULL);
	klog_proto_patch_produce_result(&b, SIZE_MAX, KLOG_WIRE_DISK_FULL);
	assert_int_equal(klog_proto_decode_produce_resp(b.data + 6 + 10,
	    b.len - 6 - 10, res, 2, &n), 0);
	assert_int_equal(res[1].error, KLOG_WIRE_MESSAGE_TOO_LARGE);
	klog_buf_free(&b);

	assert_int_equal(klog_proto_peek_correlation(produce_req,
	    sizeof(produce_req)), 7);
	assert_int_equal(klog_proto_peek_correlation(produce_req, 11), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_frame),
		cmocka_unit_test(test_grow_decoders),
		cmocka_unit_test(test_produce_result_patch),
		cmocka_unit_test(test_resp_frame),
		cmocka_unit_test(test_req_header_edges),
		cmocka_unit_test(test_resp_header_edges),
		cmocka_unit_test(test_produce),
		cmocka_unit_test(test_produce_resp),
		cmocka_unit_test(test_fetch),
		cmocka_unit_test(test_fetch_resp),
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_offsets_resp),
		cmocka_unit_test(test_metadata),
		cmocka_unit_test(test_metadata_resp),
		cmocka_unit_test(test_produce_round_trip_large),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_counts_over_max),
		cmocka_unit_test(test_negative_fields),
		cmocka_unit_test(test_null_strings),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_error_names),
		cmocka_unit_test(test_error_mapping),
		cmocka_unit_test(test_api_names),
		cmocka_unit_test(test_rfetch),
		cmocka_unit_test(test_rpos),
		cmocka_unit_test(test_topic_admin),
		cmocka_unit_test(test_topic_admin_resp),
		cmocka_unit_test(test_rfetch_resp),
		cmocka_unit_test(test_rfetch_refusals),
	};

	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
