/*
 * Unit tests for lib/proto/initproducer.c: INIT_PRODUCER.  The expected
 * frames are written out byte by byte from the layout in
 * include/klog/proto/proto.h: they are the specification, not the output
 * of the encoder.
 */
#include "proto/wirecheck.h"

/* A new producer's request (id -1, epoch -1), correlation 7. */
static const uint8_t init_req[] = {
	0, 0, 0, 18, 0, 12, 0, 1, 0, 0, 0, 7,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};
/* Its answer: no error, id 0x0102 at epoch 3. */
static const uint8_t init_resp[] = {
	0, 0, 0, 16, 0, 0, 0, 7, 0, 0,
	0, 0, 0, 0, 0, 0, 1, 2, 0, 3,
};

static void
test_init_producer(void **state)
{
	klog_producer_id_t q = { -1, -1 }, out;
	const uint8_t *body = init_req + KLOG_REQ_HEADER_SIZE;
	size_t len = sizeof(init_req) - KLOG_REQ_HEADER_SIZE;
	uint8_t bad[sizeof(init_req)];
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_init_producer(&b, 7, &q), 0);
	assert_int_equal(b.len, sizeof(init_req));
	assert_memory_equal(b.data, init_req, sizeof(init_req));
	klog_buf_reset(&b);
	/* An id without an epoch, an epoch below -1: nothing written. */
	q = (klog_producer_id_t){ 5, -1 };
	assert_int_equal(klog_proto_encode_init_producer(&b, 7, &q),
	    -KLOG_EINVAL);
	q = (klog_producer_id_t){ 5, -2 };
	assert_int_equal(klog_proto_encode_init_producer(&b, 7, &q),
	    -KLOG_EINVAL);
	assert_int_equal(b.len, 0);
	klog_buf_free(&b);

	memset(&out, 0x55, sizeof(out));
	assert_int_equal(klog_proto_decode_init_producer(body, len, &out), 0);
	assert_int_equal(out.producer_id, -1);
	assert_int_equal(out.epoch, -1);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(klog_proto_decode_init_producer(body, n,
		    &out), -KLOG_EPROTO);
	memcpy(bad, init_req, sizeof(bad));
	bad[sizeof(bad) - 1] = 4;      /* id -1 with epoch 0xff04 */
	assert_int_equal(klog_proto_decode_init_producer(
	    bad + KLOG_REQ_HEADER_SIZE, len, &out), -KLOG_EPROTO);
}

static void
test_init_producer_resp(void **state)
{
	klog_producer_id_t r = { 0x0102, 3 }, out;
	const uint8_t *body = init_resp + KLOG_RESP_HEADER_SIZE;
	size_t len = sizeof(init_resp) - KLOG_RESP_HEADER_SIZE;
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	assert_int_equal(klog_proto_encode_init_producer_resp(&b, 7,
	    KLOG_WIRE_NONE, &r), 0);
	assert_int_equal(b.len, sizeof(init_resp));
	assert_memory_equal(b.data, init_resp, sizeof(init_resp));
	klog_buf_reset(&b);
	/* A refusal carries -1 and -1, and a grant an id. */
	assert_int_equal(klog_proto_encode_init_producer_resp(&b, 7,
	    KLOG_WIRE_CLUSTER_AUTHORIZATION_FAILED, &r), -KLOG_EINVAL);
	r = (klog_producer_id_t){ -1, -1 };
	assert_int_equal(klog_proto_encode_init_producer_resp(&b, 7,
	    KLOG_WIRE_NONE, &r), -KLOG_EINVAL);
	assert_int_equal(b.len, 0);
	assert_int_equal(klog_proto_encode_init_producer_resp(&b, 7,
	    KLOG_WIRE_CLUSTER_AUTHORIZATION_FAILED, &r), 0);
	klog_buf_free(&b);
	assert_int_equal(klog_proto_decode_init_producer_resp(body, len, &out),
	    0);
	assert_int_equal(out.producer_id, 0x0102);
	assert_int_equal(out.epoch, 3);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(klog_proto_decode_init_producer_resp(body, n,
		    &out), -KLOG_EPROTO);
	assert_string_equal(klog_proto_api_name(KLOG_API_INIT_PRODUCER),
	    "INIT_PRODUCER");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_producer),
		cmocka_unit_test(test_init_producer_resp),
	};

	return cmocka_run_group_tests_name("initproducer", tests, NULL, NULL);
}
