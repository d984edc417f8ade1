#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fx/fakebroker.h"
#include "klog/client/client.h"
#include "klog/client/discovery.h"

/* A loopback port with nothing listening (bound, then closed). */
static int
dead_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sl), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static void
test_parse_brokers(void **state)
{
	klog_client_addr_t *a = NULL;
	klog_err_t err = { 0 };
	size_t n = 0;

	(void)state;
	assert_int_equal(klog_client_parse_brokers("h1:1,h2,:7,[::1]:9",
	    &a, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_string_equal(a[0].host, "h1");
	assert_string_equal(a[0].port, "1");
	assert_string_equal(a[1].host, "h2");
	assert_string_equal(a[1].port, "9092");
	assert_string_equal(a[2].host, "127.0.0.1");
	assert_string_equal(a[2].port, "7");
	assert_string_equal(a[3].host, "::1");
	assert_string_equal(a[3].port, "9");
	free(a);
	assert_int_equal(klog_client_parse_brokers("a:1,,b", &a, &n, &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "a:1,,b: empty broker address");
	assert_int_equal(klog_client_parse_brokers("", &a, &n, &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_client_parse_brokers("h:x", &a, &n, &err),
	    -KLOG_EINVAL);
}

static void
test_refused(void **state)
{
	klog_client_addr_t a = { "127.0.0.1", "", NULL };
	klog_client_t *c = NULL;
	klog_err_t err = { 0 };
	char want[64];
	int port = dead_port();

	(void)state;
	snprintf(a.port, sizeof(a.port), "%d", port);
	assert_int_equal(klog_client_open(&a, 1000, &c, &err), -KLOG_ECONN);
	assert_null(c);
	snprintf(want, sizeof(want), "127.0.0.1:%d: Connection refused",
	    port);
	assert_string_equal(err.msg, want);
}

static klog_client_t *
connect_fake(fake_t *f)
{
	klog_client_addr_t a = { "127.0.0.1", "", NULL };
	klog_client_t *c = NULL;
	klog_err_t err = { 0 };

	snprintf(a.port, sizeof(a.port), "%d", f->port);
	assert_int_equal(klog_client_open(&a, 1000, &c, &err), 0);
	return c;
}

/* Send n metadata requests and check their answers come in order, each
 * for a topic of 3 partitions.  The first answer (with its header, whose
 * correlation id differs from the others') is copied to copy and its view
 * returned in *first, then detached into spare if it is not NULL. */
static void
metadata_round(klog_client_t *c, int n, klog_buf_t *spare,
    const uint8_t **first, size_t *first_len, uint8_t *copy)
{
	klog_str_t t = { "t", 1 };
	klog_meta_broker_t brokers[4];
	klog_meta_topic_t topics[4];
	klog_metadata_t md;
	klog_resp_header_t h;
	klog_err_t err = { 0 };
	const uint8_t *body;
	size_t len;
	int32_t ids[32];
	int got = 0, rc;

	for (int i = 0; i < n; i++) {
		ids[i] = klog_client_next_id(c);
		assert_int_equal(klog_proto_encode_metadata(klog_client_out(c),
		    ids[i], &t, 1), 0);
	}
	while (klog_client_pending(c))
		assert_int_equal(klog_client_write(c, &err), 0);
	while (got < n) {
		struct pollfd pfd = { klog_client_fd(c), POLLIN, 0 };

		assert_true(poll(&pfd, 1, 2000) > 0);
		assert_int_equal(klog_client_read(c, &err), 0);
		while ((rc = klog_client_response(c, &h, &body, &len, &err)) ==
		    1) {
			assert_int_equal(h.correlation, ids[got]);
			assert_int_equal(klog_proto_decode_metadata_resp(body,
			    len, &md, brokers, 4, topics, 4), 0);
			assert_int_equal(topics[0].partitions, 3);
			if (got++ > 0 || first == NULL)
				continue;
			body -= KLOG_RESP_HEADER_SIZE;
			len += KLOG_RESP_HEADER_SIZE;
			assert_true(len <= 4096);
			memcpy(copy, body, len);
			*first = body;
			*first_len = len;
			if (spare != NULL)
				assert_int_equal(klog_client_detach(c, spare),
				    0);
		}
		assert_int_equal(rc, 0);
	}
}

/* Several requests written at once are answered in order. */
static void
test_pipelined_calls(void **state)
{
	fake_t *f = fake_start(3, 0);
	klog_client_t *c = connect_fake(f);
	klog_str_t t = { "t", 1 };
	klog_err_t err = { 0 };
	const uint8_t *body;
	size_t len;
	int32_t id;
	int16_t error;

	(void)state;
	metadata_round(c, 5, NULL, NULL, NULL, NULL);
	/* And a blocking call skips nothing it should not. */
	id = klog_client_next_id(c);
	klog_proto_encode_metadata(klog_client_out(c), id, &t, 1);
	assert_int_equal(klog_client_call(c, id, 2000, &error, &body,
	    &len, &err), 0);
	assert_int_equal(error, 0);
	klog_client_close(c);
	fake_stop(f);
}

/* A detached answer stays as it was while the client reads on. */
static void
test_detach(void **state)
{
	fake_t *f = fake_start(3, 0);
	klog_client_t *c = connect_fake(f);
	klog_buf_t spare;
	const uint8_t *kept = NULL;
	uint8_t copy[4096];
	size_t kept_len = 0;

	(void)state;
	klog_buf_init(&spare);
	metadata_round(c, 1, &spare, &kept, &kept_len, copy);
	/* More answers, read into the client's buffer from its start. */
	for (int i = 0; i < 5; i++)
		metadata_round(c, 30, NULL, NULL, NULL, NULL);
	assert_non_null(kept);
	assert_memory_equal(kept, copy, kept_len);
	assert_true(kept >= spare.data && kept + kept_len <=
	    spare.data + spare.len);
	klog_buf_free(&spare);
	klog_client_close(c);
	fake_stop(f);
}

static void
test_closed_by_broker(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_client_t *c = connect_fake(f);
	klog_err_t err = { 0 };
	const uint8_t *body;
	size_t len;
	int16_t error;
	int32_t id;

	(void)state;
	/* An unknown api: the fake closes the connection. */
	id = klog_client_next_id(c);
	klog_proto_req_begin(klog_client_out(c), 99, id);
	klog_proto_end(klog_client_out(c), 0);
	assert_int_equal(klog_client_call(c, id, 2000, &error, &body, &len,
	    &err), -KLOG_ECLOSED);
	klog_client_close(c);
	fake_stop(f);
}

/* One OFFSETS question, and how each kind of answer maps. */
static void
test_query_offset(void **state)
{
	fake_t *f = fake_start(2, 0);
	klog_client_t *c = connect_fake(f);
	klog_err_t err = { 0 };
	char want[96];
	int64_t off = -1;

	(void)state;
	fake_append(f, 1, "hello");
	assert_int_equal(klog_client_query_offset(c, "t", 1,
	    KLOG_OFFSET_LATEST, 2000, NULL, &off, &err), 0);
	assert_int_equal(off, klog_entry_size(5));
	assert_int_equal(klog_client_query_offset(c, "t", 0,
	    KLOG_OFFSET_EARLIEST, 2000, NULL, &off, &err), 0);
	assert_int_equal(off, 0);
	/* The partition refused: its wire error, mapped. */
	assert_int_equal(klog_client_query_offset(c, "t", 5,
	    KLOG_OFFSET_LATEST, 2000, NULL, &off, &err), -KLOG_ENOPARTITION);
	assert_string_equal(err.msg, "topic \"t\" partition 5: "
	    "WRONG_PARTITION");
	/* Nothing that old (the fake has no segment times): ENOENT, and
	 * the caller's own words for the partition. */
	assert_int_equal(klog_client_query_offset(c, "t", 0, 1000, 2000,
	    "b1: t 0", &off, &err), -KLOG_ENOENT);
	assert_string_equal(err.msg, "b1: t 0: no offset that old");
	/* The whole request refused: mapped as a partition's refusal
	 * would be, not as a malformed answer. */
	f->offsets_error = KLOG_WIRE_STORAGE_ERROR;
	assert_int_equal(klog_client_query_offset(c, "t", 0,
	    KLOG_OFFSET_LATEST, 2000, NULL, &off, &err), -KLOG_EIO);
	assert_string_equal(err.msg, "topic \"t\" partition 0: "
	    "STORAGE_ERROR");
	f->offsets_error = KLOG_WIRE_UNKNOWN_TOPIC;
	assert_int_equal(klog_client_query_offset(c, "t", 0,
	    KLOG_OFFSET_LATEST, 2000, NULL, &off, &err), -KLOG_ENOTOPIC);
	f->offsets_error = 0;
	f->offsets_garbage = 1;
	assert_int_equal(klog_client_query_offset(c, "t", 0,
	    KLOG_OFFSET_LATEST, 2000, NULL, &off, &err), -KLOG_EPROTO);
	snprintf(want, sizeof(want), "%s: malformed offsets response",
	    f->addr);
	assert_string_equal(err.msg, want);
	f->offsets_garbage = 0;
	/* The connection still serves after every refusal. */
	assert_int_equal(klog_client_query_offset(c, "t", 1,
	    KLOG_OFFSET_LATEST, 2000, NULL, &off, &err), 0);
	assert_int_equal(off, klog_entry_size(5));
	klog_client_close(c);
	fake_stop(f);
}

/* A time is asked at OFFSETS v2; a broker older than it refuses the
 * version, and the connection asks at v1 from then on. */
static void
test_query_offset_v2(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_client_t *c = connect_fake(f);
	klog_err_t err = { 0 };
	int64_t off = -1;

	(void)state;
	fake_append(f, 0, "hello");
	assert_int_equal(klog_client_query_offset(c, "t", 0, 1000, 2000,
	    NULL, &off, &err), -KLOG_ENOENT);
	assert_int_equal(f->offsets_v2, 1);
	/* Latest and earliest stay at v1. */
	assert_int_equal(klog_client_query_offset(c, "t", 0,
	    KLOG_OFFSET_LATEST, 2000, NULL, &off, &err), 0);
	assert_int_equal(f->offsets_v2, 1);
	klog_client_close(c);
	f->old_version = 1;
	c = connect_fake(f);
	assert_int_equal(klog_client_query_offset(c, "t", 0, 1000, 2000,
	    NULL, &off, &err), -KLOG_ENOENT);
	assert_string_equal(err.msg, "topic \"t\" partition 0: no offset "
	    "that old");
	assert_int_equal(f->offsets_v2, 2);
	assert_int_equal(klog_client_query_offset(c, "t", 0, 1000, 2000,
	    NULL, &off, &err), -KLOG_ENOENT);
	assert_int_equal(f->offsets_v2, 2);
	assert_int_equal(klog_client_query_offset(c, "t", 0,
	    KLOG_OFFSET_LATEST, 2000, NULL, &off, &err), 0);
	assert_int_equal(off, klog_entry_size(5));
	klog_client_close(c);
	fake_stop(f);
}

/* The same on a connection of its own; a dead broker is ECONN. */
static void
test_query_offset_at(void **state)
{
	fake_t *f = fake_start(1, 0);
	klog_client_addr_t a = { "127.0.0.1", "", NULL };
	klog_err_t err = { 0 };
	int64_t off = -1;

	(void)state;
	fake_append(f, 0, "x");
	snprintf(a.port, sizeof(a.port), "%d", f->port);
	assert_int_equal(klog_client_query_offset_at(&a, "t", 0,
	    KLOG_OFFSET_LATEST, 2000, NULL, &off, &err), 0);
	assert_int_equal(off, klog_entry_size(1));
	assert_int_equal(f->connections, 1);
	snprintf(a.port, sizeof(a.port), "%d", dead_port());
	assert_int_equal(klog_client_query_offset_at(&a, "t", 0,
	    KLOG_OFFSET_LATEST, 2000, "x", &off, &err), -KLOG_ECONN);
	assert_non_null(strstr(err.msg, "Connection refused"));
	fake_stop(f);
}

static int
count_topic(void *arg, const char *topic, int partitions)
{
	int *n = arg;

	assert_string_equal(topic, "t");
	assert_int_equal(partitions, 2);
	(*n)++;
	return 0;
}

static void
test_discovery_static(void **state)
{
	fake_t *f = fake_start(2, 0);
	klog_discovery_t *d = NULL;
	klog_discovery_part_t where;
	klog_err_t err = { 0 };
	char list[96];
	int n = 0;

	(void)state;
	/* A dead broker first: the next one in the list answers. */
	snprintf(list, sizeof(list), "127.0.0.1:%d,%s", dead_port(), f->addr);
	assert_int_equal(klog_discovery_open_static(list, 1000, &d, &err), 0);
	assert_int_equal(klog_discovery_partitions(d, "t", &err), 2);
	assert_int_equal(klog_discovery_partitions(d, "nope", &err), 0);
	assert_int_equal(klog_discovery_locate(d, "t", 1, &where, &err), 0);
	assert_int_equal(where.partition, 1);
	assert_string_equal(where.addr.host, "127.0.0.1");
	assert_int_equal(atoi(where.addr.port), f->port);
	assert_int_equal(klog_discovery_locate(d, "t", 2, &where, &err),
	    -KLOG_ENOPARTITION);
	assert_int_equal(klog_discovery_topics(d, count_topic, &n, &err), 0);
	assert_int_equal(n, 1);
	klog_discovery_close(d);
	fake_stop(f);
}

static void
test_discovery_unavailable(void **state)
{
	klog_discovery_t *d = NULL;
	klog_err_t err = { 0 };
	char list[64];

	(void)state;
	snprintf(list, sizeof(list), "127.0.0.1:%d", dead_port());
	assert_int_equal(klog_discovery_open_static(list, 1000, &d, &err), 0);
	assert_int_equal(klog_discovery_partitions(d, "t", &err),
	    -KLOG_ECONN);
	assert_non_null(strstr(err.msg, "Connection refused"));
	klog_discovery_close(d);
	assert_int_equal(klog_discovery_open_static("a:b:c", 1000, &d, &err),
	    -KLOG_EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_brokers),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_pipelined_calls),
		cmocka_unit_test(test_detach),
		cmocka_unit_test(test_closed_by_broker),
		cmocka_unit_test(test_query_offset),
		cmocka_unit_test(test_query_offset_v2),
		cmocka_unit_test(test_query_offset_at),
		cmocka_unit_test(test_discovery_static),
		cmocka_unit_test(test_discovery_unavailable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
