/*
 * Unit tests for lib/broker/broker.c: a broker on 127.0.0.1 port 0 in a thread,
 * with a temporary data directory, driven over raw sockets with the
 * proto.h encoders and decoders.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fx/failsync.h"
#include "fx/tmpdir.h"

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/broker/broker.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"
#include "klog/storage/record.h"

/* ---- fixture: a broker in a thread ---- */

struct fx {
	char dir[64];
	klog_broker_config_t cfg;
	klog_broker_t *b;
	pthread_t thread;
	int running;
	pthread_mutex_t mu;
	char logs[16384];       /* every log line, newline separated */
	int topics_created;
};

static void
capture(void *arg, int level, const char *msg)
{
	struct fx *f = arg;
	size_t n;

	pthread_mutex_lock(&f->mu);
	n = strlen(f->logs);
	snprintf(f->logs + n, sizeof(f->logs) - n, "%s: %s\n",
	    klog_level_name(level), msg);
	pthread_mutex_unlock(&f->mu);
}

static int
count_created(void *arg, const char *topic, int partitions)
{
	struct fx *f = arg;

	(void)topic;
	(void)partitions;
	f->topics_created++;
	return 0;
}

static int
logged(struct fx *f, const char *needle)
{
	int r;

	pthread_mutex_lock(&f->mu);
	r = strstr(f->logs, needle) != NULL;
	pthread_mutex_unlock(&f->mu);
	return r;
}

static void *
run_thread(void *arg)
{
	struct fx *f = arg;

	assert_int_equal(klog_broker_run(f->b), 0);
	return NULL;
}

static void
fx_start(struct fx *f)
{
	klog_err_t err = { 0 };
	int rc;

	rc = klog_broker_open(&f->cfg, &f->b, &err);
	if (rc < 0)
		fail_msg("open: %s", klog_err_text(&err, rc));
	assert_int_equal(klog_broker_create_topic(f->b, "made", 2, &err), 0);
	assert_int_equal(pthread_create(&f->thread, NULL, run_thread, f), 0);
	f->running = 1;
}

static void
fx_stop(struct fx *f, int clean)
{
	klog_err_t err = { 0 };

	if (f->running) {
		klog_broker_stop(f->b);
		assert_int_equal(pthread_join(f->thread, NULL), 0);
		f->running = 0;
	}
	if (f->b != NULL)
		assert_int_equal(klog_broker_close(f->b, clean, &err), 0);
	f->b = NULL;
}

static void
fx_config(struct fx *f)
{
	klog_broker_config_default(&f->cfg);
	f->cfg.data_dir = f->dir;
	f->cfg.listen = "127.0.0.1:0";
	f->cfg.log = capture;
	f->cfg.log_arg = f;
	f->cfg.log_level = KLOG_LEVEL_DEBUG;
	f->cfg.topic_created = count_created;
	f->cfg.topic_arg = f;
	f->cfg.shutdown_ms = 2000;
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	pthread_mutex_init(&f->mu, NULL);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "broker"));
	fx_config(f);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	fx_stop(f, 1);
	tmpdir_remove(f->dir);
	pthread_mutex_destroy(&f->mu);
	free(f);
	return 0;
}

/* ---- a raw client ---- */

static int
client(struct fx *f)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	sa.sin_port = htons((uint16_t)klog_broker_port(f->b));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void
send_all(int fd, const void *p, size_t n)
{
	const uint8_t *q = p;
	ssize_t r;

	while (n > 0) {
		r = send(fd, q, n, MSG_NOSIGNAL);
		assert_true(r > 0);
		q += r;
		n -= (size_t)r;
	}
}

static void
send_buf(int fd, klog_buf_t *b)
{
	assert_false(b->failed);
	send_all(fd, b->data, b->len);
	klog_buf_reset(b);
}

static int
read_full(int fd, void *p, size_t n)
{
	uint8_t *q = p;
	ssize_t r;

	while (n > 0) {
		r = recv(fd, q, n, 0);
		if (r <= 0)
			return -1;
		q += r;
		n -= (size_t)r;
	}
	return 0;
}

/* One response: header in *h, the body after the error field in *body
 * (malloc'ed, *len bytes). */
static void
recv_resp(int fd, klog_resp_header_t *h, uint8_t **body, size_t *len)
{
	uint8_t hdr[KLOG_RESP_HEADER_SIZE];

	assert_int_equal(read_full(fd, hdr, sizeof(hdr)), 0);
	assert_int_equal(klog_proto_resp_header(hdr, sizeof(hdr), 1 << 30, h),
	    0);
	*len = (size_t)h->size - 6;
	*body = malloc(*len + 1);
	assert_non_null(*body);
	assert_int_equal(read_full(fd, *body, *len), 0);
}

/* Whether the broker closed fd (EOF within the receive timeout). */
static int
closed_by_peer(int fd)
{
	uint8_t tmp[256];
	ssize_t r;

	while ((r = recv(fd, tmp, sizeof(tmp), 0)) > 0)
		;
	return r == 0 || (r < 0 && errno == ECONNRESET);
}

/* A message set of n payloads "msg-<i>". */
static void
make_set(klog_buf_t *set, int n, int first)
{
	char payload[32];
	uint8_t entry[64];
	size_t len;

	for (int i = 0; i < n; i++) {
		len = (size_t)snprintf(payload, sizeof(payload), "msg-%d",
		    first + i);
		klog_buf_put(set, entry, klog_entry_encode(entry, payload,
		    len));
	}
}

static klog_str_t
str(const char *s)
{
	return (klog_str_t){ s, (uint16_t)strlen(s) };
}

static void
put_produce(klog_buf_t *out, int32_t corr, int16_t acks, const char *topic,
    int32_t partition, const klog_buf_t *set)
{
	klog_produce_part_t part = { str(topic), partition, set->data,
	    (uint32_t)set->len };
	klog_produce_req_t req = { acks, 1000, 1, &part };

	assert_int_equal(klog_proto_encode_produce(out, corr, &req), 0);
}

/* Produce with acks and return the one result (error, offset). */
static klog_produce_result_t
produce(int fd, int16_t acks, const char *topic, int32_t partition,
    const klog_buf_t *set)
{
	klog_buf_t out;
	klog_resp_header_t h;
	klog_produce_result_t res;
	uint8_t *body;
	size_t len;
	uint32_t n;

	klog_buf_init(&out);
	put_produce(&out, 7, acks, topic, partition, set);
	send_buf(fd, &out);
	klog_buf_free(&out);
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.correlation, 7);
	assert_int_equal(h.error, 0);
	assert_int_equal(klog_proto_decode_produce_resp(body, len, &res, 1,
	    &n), 0);
	assert_int_equal(n, 1);
	/* res.topic points into body: compare before freeing. */
	assert_int_equal(res.topic.len, strlen(topic));
	assert_memory_equal(res.topic.p, topic, res.topic.len);
	res.topic = (klog_str_t){ NULL, 0 };
	free(body);
	return res;
}

static void
put_fetch(klog_buf_t *out, int32_t corr, const char *topic, int32_t partition,
    int64_t offset, int32_t max, int32_t max_wait, int32_t min_bytes)
{
	klog_fetch_part_t part = { str(topic), partition, offset, max };
	klog_fetch_req_t req = { max_wait, min_bytes, 1, &part };

	assert_int_equal(klog_proto_encode_fetch(out, corr, &req), 0);
}

/* One fetch result; the set is copied into *set. */
static klog_fetch_result_t
recv_fetch(int fd, int32_t corr, klog_buf_t *set)
{
	klog_resp_header_t h;
	klog_fetch_result_t r;
	uint8_t *body;
	size_t len;
	uint32_t n;

	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.correlation, corr);
	assert_int_equal(h.error, 0);
	assert_int_equal(klog_proto_decode_fetch_resp(body, len, &r, 1, &n),
	    0);
	assert_int_equal(n, 1);
	if (set != NULL)
		klog_buf_put(set, r.set, r.set_len);
	r.set = NULL;
	r.topic = (klog_str_t){ NULL, 0 };
	free(body);
	return r;
}

static klog_fetch_result_t
fetch(int fd, const char *topic, int32_t partition, int64_t offset,
    int32_t max_wait, int32_t min_bytes, klog_buf_t *set)
{
	klog_buf_t out;

	klog_buf_init(&out);
	put_fetch(&out, 9, topic, partition, offset, 1 << 20, max_wait,
	    min_bytes);
	send_buf(fd, &out);
	klog_buf_free(&out);
	return recv_fetch(fd, 9, set);
}

/* OFFSETS at version 2 for one partition, or at v: the header's error
 * (0 when it answered), the partition's, and the first offset. */
static int16_t
offsets_v(int fd, int16_t v, const char *topic, int64_t time,
    int16_t *error, int64_t *first)
{
	klog_offsets_part_t part = { str(topic), 0, time, 10 };
	klog_offsets_result_t r;
	klog_resp_header_t h;
	klog_buf_t out;
	uint8_t *body;
	size_t len;
	uint32_t n;

	klog_buf_init(&out);
	assert_int_equal(klog_proto_encode_offsets_at(&out, 4, &part, 1), 0);
	out.data[7] = (uint8_t)v;
	send_buf(fd, &out);
	klog_buf_free(&out);
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.correlation, 4);
	*first = -1;
	if (h.error == 0) {
		assert_int_equal(klog_proto_decode_offsets_resp(body, len, &r,
		    1, &n), 0);
		*error = r.error;
		*first = r.count > 0 ? klog_proto_offset_at(&r, 0) : -1;
		if (v == KLOG_PROTO_VERSION_OFFSETS_AT && time >= 0)
			assert_true(r.count <= 1);
	}
	free(body);
	return h.error;
}

/* OFFSETS for one partition: error, and the first offset (or -1). */
static int16_t
offsets(int fd, const char *topic, int32_t partition, int64_t time,
    int64_t *first, int32_t *count)
{
	klog_offsets_part_t part = { str(topic), partition, time, 10 };
	klog_offsets_result_t r;
	klog_resp_header_t h;
	klog_buf_t out;
	uint8_t *body;
	size_t len;
	uint32_t n;
	int16_t e;

	klog_buf_init(&out);
	assert_int_equal(klog_proto_encode_offsets(&out, 3, &part, 1), 0);
	send_buf(fd, &out);
	klog_buf_free(&out);
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.correlation, 3);
	assert_int_equal(klog_proto_decode_offsets_resp(body, len, &r, 1, &n),
	    0);
	assert_int_equal(n, 1);
	e = r.error;
	*count = r.count;
	*first = r.count > 0 ? klog_proto_offset_at(&r, 0) : -1;
	free(body);
	return e;
}

/* ---- tests ---- */

/* A magic-2 entry of records stamped ts[0..n) appended to set. */
static void
put_batch(klog_buf_t *set, const int64_t *ts, int n)
{
	klog_batch_builder_t bb;

	klog_batch_begin(&bb, set, ts[0], KLOG_NO_PRODUCER, -1, -1);
	for (int i = 0; i < n; i++)
		klog_batch_add(&bb, set, &(klog_record_in_t){ "v", 1, NULL, 0,
		    ts[i],
		    NULL, 0 });
	assert_int_equal(klog_batch_end(&bb, set), 0);
}

/* OFFSETS v2 finds the entry holding the first record at or after a
 * time; v1 keeps Kafka 0.7's answer; no other API or version is taken. */
static void
test_offsets_by_time(void **state)
{
	struct fx *f = *state;
	static const int64_t a[] = { 1000 }, b[] = { 3000, 2500 },
	    c[] = { 2000 };
	klog_produce_result_t pr;
	klog_buf_t set;
	int64_t first, end;
	int16_t error;
	size_t one;
	int fd;

	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	put_batch(&set, a, 1);
	one = set.len;
	put_batch(&set, b, 2);
	put_batch(&set, c, 1);
	end = (int64_t)set.len;
	pr = produce(fd, KLOG_ACKS_LEADER, "t", 0, &set);
	assert_int_equal(pr.error, 0);
	assert_int_equal(offsets_v(fd, 2, "t", 1500, &error, &first), 0);
	assert_int_equal(error, 0);
	assert_int_equal(first, (int64_t)one);
	assert_int_equal(offsets_v(fd, 2, "t", 0, &error, &first), 0);
	assert_int_equal(first, 0);
	/* The running max: 2000 is first reached in the second entry. */
	assert_int_equal(offsets_v(fd, 2, "t", 2000, &error, &first), 0);
	assert_int_equal(first, (int64_t)one);
	assert_int_equal(offsets_v(fd, 2, "t", 3001, &error, &first), 0);
	assert_int_equal(first, end);
	assert_int_equal(offsets_v(fd, 2, "t", KLOG_OFFSET_LATEST, &error,
	    &first), 0);
	assert_int_equal(first, end);
	/* Version 1: the segments' times, all newer than 1970. */
	assert_int_equal(offsets_v(fd, 1, "t", 1500, &error, &first), 0);
	assert_int_equal(first, -1);
	assert_int_equal(offsets_v(fd, 3, "t", 1500, &error, &first),
	    KLOG_WIRE_UNSUPPORTED_VERSION);
	klog_buf_free(&set);
	close(fd);
}

static void
test_produce_then_fetch(void **state)
{
	struct fx *f = *state;
	klog_buf_t set, got;
	klog_produce_result_t pr;
	klog_fetch_result_t fr;
	int fd;

	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	klog_buf_init(&got);
	make_set(&set, 3, 0);
	pr = produce(fd, KLOG_ACKS_LEADER, "t", 0, &set);
	assert_int_equal(pr.error, 0);
	assert_int_equal(pr.offset, 0);
	assert_int_equal(pr.partition, 0);
	/* Acknowledged, so visible to the very next fetch (max_wait 0). */
	fr = fetch(fd, "t", 0, 0, 0, 0, &got);
	assert_int_equal(fr.error, 0);
	assert_int_equal(fr.log_start, 0);
	assert_int_equal(fr.log_end, (int64_t)set.len);
	assert_int_equal(got.len, set.len);
	assert_memory_equal(got.data, set.data, set.len);
	/* The second set lands after the first. */
	pr = produce(fd, KLOG_ACKS_LEADER, "t", 0, &set);
	assert_int_equal(pr.offset, (int64_t)set.len);
	/* At the end: an empty set, no error. */
	klog_buf_reset(&got);
	fr = fetch(fd, "t", 0, 2 * (int64_t)set.len, 0, 0, &got);
	assert_int_equal(fr.error, 0);
	assert_int_equal(got.len, 0);
	assert_int_equal(f->topics_created, 2);   /* "made" and "t" */
	close(fd);
	klog_buf_free(&set);
	klog_buf_free(&got);
}

static void
test_acks_zero_and_all(void **state)
{
	struct fx *f = *state;
	klog_buf_t set, out, got;
	klog_produce_result_t pr;
	klog_fetch_result_t fr;
	int fd;

	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	klog_buf_init(&out);
	klog_buf_init(&got);
	make_set(&set, 2, 0);
	/* acks 0: no response; the fetch's answer is the first to come. */
	put_produce(&out, 1, KLOG_ACKS_NONE, "t", 0, &set);
	put_fetch(&out, 2, "t", 0, 0, 1 << 20, 0, 0);
	send_buf(fd, &out);
	fr = recv_fetch(fd, 2, &got);
	assert_int_equal(fr.error, 0);
	assert_int_equal(got.len, set.len);
	/* acks all: answered after the flush, so log_end already covers it. */
	pr = produce(fd, KLOG_ACKS_ALL, "t", 0, &set);
	assert_int_equal(pr.error, 0);
	assert_int_equal(pr.offset, (int64_t)set.len);
	fr = fetch(fd, "t", 0, 0, 0, 0, NULL);
	assert_int_equal(fr.log_end, 2 * (int64_t)set.len);
	close(fd);
	klog_buf_free(&set);
	klog_buf_free(&out);
	klog_buf_free(&got);
}

/* Many requests in one write, mixed APIs and acks: answers in order. */
static void
test_pipelined_in_order(void **state)
{
	struct fx *f = *state;
	klog_buf_t set, out;
	klog_resp_header_t h;
	uint8_t *body;
	size_t len;
	int fd, expect = 0;

	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	klog_buf_init(&out);
	make_set(&set, 1, 0);
	for (int i = 0; i < 300; i++) {
		switch (i % 3) {
		case 0:
			put_produce(&out, i, KLOG_ACKS_LEADER, "p", 0, &set);
			break;
		case 1:
			put_produce(&out, i, KLOG_ACKS_ALL, "p", 0, &set);
			break;
		default:
			/* Parks until the flush of what came before. */
			put_fetch(&out, i, "p", 0, 0, 64, 0, 0);
			break;
		}
	}
	send_buf(fd, &out);
	for (int i = 0; i < 300; i++) {
		recv_resp(fd, &h, &body, &len);
		assert_int_equal(h.correlation, expect);
		assert_int_equal(h.error, 0);
		expect++;
		free(body);
	}
	close(fd);
	klog_buf_free(&set);
	klog_buf_free(&out);
}

struct producer_arg {
	struct fx *f;
	klog_buf_t *set;
};

static void *
late_producer(void *arg)
{
	struct producer_arg *pa = arg;
	int fd;

	usleep(100000);
	fd = client(pa->f);
	produce(fd, KLOG_ACKS_LEADER, "made", 1, pa->set);
	close(fd);
	return NULL;
}

static void
test_long_poll(void **state)
{
	struct fx *f = *state;
	struct producer_arg pa;
	klog_buf_t set, got;
	klog_fetch_result_t fr;
	pthread_t th;
	int fd;

	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	klog_buf_init(&got);
	make_set(&set, 4, 0);
	/* Nothing there: answered empty once max_wait passes. */
	fr = fetch(fd, "made", 1, 0, 50, 1, &got);
	assert_int_equal(fr.error, 0);
	assert_int_equal(got.len, 0);
	/* Data arriving meanwhile answers the poll (well before 30 s). */
	pa.f = f;
	pa.set = &set;
	assert_int_equal(pthread_create(&th, NULL, late_producer, &pa), 0);
	fr = fetch(fd, "made", 1, 0, 30000, 1, &got);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(fr.error, 0);
	assert_int_equal(got.len, set.len);
	assert_memory_equal(got.data, set.data, set.len);
	close(fd);
	klog_buf_free(&set);
	klog_buf_free(&got);
}

static void
test_offsets(void **state)
{
	struct fx *f = *state;
	klog_buf_t set;
	int64_t first;
	int32_t count;
	int fd;

	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	make_set(&set, 5, 0);
	assert_int_equal(offsets(fd, "made", 0, KLOG_OFFSET_LATEST, &first,
	    &count), 0);
	assert_int_equal(first, 0);
	produce(fd, KLOG_ACKS_LEADER, "made", 0, &set);
	produce(fd, KLOG_ACKS_LEADER, "made", 0, &set);
	/* Latest first, then backwards through segment bases (here 0). */
	assert_int_equal(offsets(fd, "made", 0, KLOG_OFFSET_LATEST, &first,
	    &count), 0);
	assert_int_equal(count, 2);
	assert_int_equal(first, 2 * (int64_t)set.len);
	assert_int_equal(offsets(fd, "made", 0, KLOG_OFFSET_EARLIEST, &first,
	    &count), 0);
	assert_int_equal(count, 1);
	assert_int_equal(first, 0);
	assert_int_equal(offsets(fd, "nope", 0, KLOG_OFFSET_LATEST, &first,
	    &count), KLOG_WIRE_UNKNOWN_TOPIC);
	assert_int_equal(offsets(fd, "made", 2, KLOG_OFFSET_LATEST, &first,
	    &count), KLOG_WIRE_WRONG_PARTITION);
	close(fd);
	klog_buf_free(&set);
}

static void
test_metadata(void **state)
{
	struct fx *f = *state;
	klog_meta_broker_t brokers[2];
	klog_meta_topic_t topics[4];
	klog_metadata_t md;
	klog_resp_header_t h;
	klog_str_t ask[2] = { { "made", 4 }, { "zz", 2 } };
	klog_buf_t out;
	uint8_t *body;
	size_t len;
	int fd;

	f->cfg.broker_id = 42;
	fx_start(f);
	fd = client(f);
	klog_buf_init(&out);
	assert_int_equal(klog_proto_encode_metadata(&out, 1, NULL, 0), 0);
	send_buf(fd, &out);
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.error, 0);
	assert_int_equal(klog_proto_decode_metadata_resp(body, len, &md,
	    brokers, 2, topics, 4), 0);
	assert_int_equal(md.broker_id, 42);
	assert_int_equal(md.nbrokers, 1);
	assert_int_equal(brokers[0].id, 42);
	assert_int_equal(brokers[0].port, klog_broker_port(f->b));
	assert_int_equal(brokers[0].host.len, 9);
	assert_memory_equal(brokers[0].host.p, "127.0.0.1", 9);
	assert_int_equal(md.ntopics, 1);
	assert_memory_equal(topics[0].topic.p, "made", 4);
	assert_int_equal(topics[0].partitions, 2);
	assert_int_equal(topics[0].error, 0);
	free(body);

	assert_int_equal(klog_proto_encode_metadata(&out, 2, ask, 2), 0);
	send_buf(fd, &out);
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(klog_proto_decode_metadata_resp(body, len, &md,
	    brokers, 2, topics, 4), 0);
	assert_int_equal(md.ntopics, 2);
	assert_int_equal(topics[0].partitions, 2);
	assert_int_equal(topics[1].error, KLOG_WIRE_UNKNOWN_TOPIC);
	free(body);
	close(fd);
	klog_buf_free(&out);
}

/* A response-level error leaves the connection usable. */
static void
test_unknown_api_and_version(void **state)
{
	struct fx *f = *state;
	klog_resp_header_t h;
	klog_buf_t out;
	uint8_t *body;
	size_t len, start;
	int fd;

	fx_start(f);
	fd = client(f);
	klog_buf_init(&out);
	start = klog_proto_req_begin(&out, 77, 5);
	klog_buf_put_i32(&out, 1234);
	klog_proto_end(&out, start);
	start = klog_proto_req_begin(&out, KLOG_API_METADATA, 6);
	klog_buf_patch_i32(&out, start + 4, (KLOG_API_METADATA << 16) | 9);
	klog_buf_put_i32(&out, 0);
	klog_proto_end(&out, start);
	/* A METADATA body that lies about its count. */
	start = klog_proto_req_begin(&out, KLOG_API_METADATA, 7);
	klog_buf_put_i32(&out, 1000);
	klog_proto_end(&out, start);
	assert_int_equal(klog_proto_encode_metadata(&out, 8, NULL, 0), 0);
	send_buf(fd, &out);
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.correlation, 5);
	assert_int_equal(h.error, KLOG_WIRE_UNKNOWN_API);
	assert_int_equal(len, 0);
	free(body);
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.correlation, 6);
	assert_int_equal(h.error, KLOG_WIRE_UNSUPPORTED_VERSION);
	free(body);
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.correlation, 7);
	assert_int_equal(h.error, KLOG_WIRE_INVALID_REQUEST);
	free(body);
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.correlation, 8);
	assert_int_equal(h.error, 0);
	free(body);
	close(fd);
	klog_buf_free(&out);
}

static void
test_oversized_frame(void **state)
{
	struct fx *f = *state;
	uint8_t huge[12] = { 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 33 };
	uint8_t neg[4] = { 0xff, 0xff, 0xff, 0xf0 };
	klog_resp_header_t h;
	klog_buf_t set;
	klog_produce_result_t pr;
	uint8_t *body;
	size_t len;
	int fd, fd2, fd3;

	f->cfg.max_request_bytes = 1 << 20;
	fx_start(f);
	fd = client(f);
	fd2 = client(f);
	send_all(fd, huge, sizeof(huge));
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.correlation, 33);
	assert_int_equal(h.error, KLOG_WIRE_REQUEST_TOO_LARGE);
	free(body);
	assert_true(closed_by_peer(fd));
	close(fd);
	/* A negative size: answered (correlation unknown) and closed. */
	fd3 = client(f);
	send_all(fd3, neg, sizeof(neg));
	recv_resp(fd3, &h, &body, &len);
	assert_int_equal(h.error, KLOG_WIRE_INVALID_REQUEST);
	free(body);
	assert_true(closed_by_peer(fd3));
	close(fd3);
	/* The other client, connected all along, is still served. */
	klog_buf_init(&set);
	make_set(&set, 1, 0);
	pr = produce(fd2, KLOG_ACKS_LEADER, "t", 0, &set);
	assert_int_equal(pr.error, 0);
	close(fd2);
	klog_buf_free(&set);
	assert_true(logged(f, "over the limit"));
}

static void
test_bad_topic_partition_and_sets(void **state)
{
	struct fx *f = *state;
	klog_buf_t set, bad;
	klog_produce_result_t pr;
	klog_fetch_result_t fr;
	int fd;

	f->cfg.max_message_bytes = 100;
	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	klog_buf_init(&bad);
	make_set(&set, 2, 0);
	assert_int_equal(produce(fd, 1, "a/b", 0, &set).error,
	    KLOG_WIRE_INVALID_TOPIC);
	assert_int_equal(produce(fd, 1, "..", 0, &set).error,
	    KLOG_WIRE_INVALID_TOPIC);
	assert_int_equal(produce(fd, 1, "made", 2, &set).error,
	    KLOG_WIRE_WRONG_PARTITION);
	assert_int_equal(produce(fd, 1, "made", -5, &set).error,
	    KLOG_WIRE_WRONG_PARTITION);
	/* Partition -1: the broker picks one and says which. */
	pr = produce(fd, 1, "made", -1, &set);
	assert_int_equal(pr.error, 0);
	assert_true(pr.partition == 0 || pr.partition == 1);

	/* A flipped payload byte: CRC mismatch, nothing appended. */
	klog_buf_put(&bad, set.data, set.len);
	bad.data[bad.len - 1] ^= 1;
	assert_int_equal(produce(fd, 1, "c", 0, &bad).error,
	    KLOG_WIRE_INVALID_MESSAGE);
	/* A cut last entry is refused, never silently dropped. */
	assert_int_equal(produce(fd, 1, "c", 0, &(klog_buf_t){ set.data,
	    set.len - 3, set.len, 0 }).error, KLOG_WIRE_PARTIAL_MESSAGE);
	fr = fetch(fd, "c", 0, 0, 0, 0, NULL);
	assert_int_equal(fr.error, 0);
	assert_int_equal(fr.log_end, 0);

	/* A payload over max_message_bytes. */
	klog_buf_reset(&bad);
	{
		uint8_t big[200], entry[300];

		memset(big, 'x', sizeof(big));
		klog_buf_put(&bad, entry, klog_entry_encode(entry, big,
		    sizeof(big)));
	}
	assert_int_equal(produce(fd, 1, "c", 0, &bad).error,
	    KLOG_WIRE_MESSAGE_TOO_LARGE);

	/* Fetch errors. */
	fr = fetch(fd, "unknown", 0, 0, 0, 0, NULL);
	assert_int_equal(fr.error, KLOG_WIRE_UNKNOWN_TOPIC);
	fr = fetch(fd, "made", 9, 0, 0, 0, NULL);
	assert_int_equal(fr.error, KLOG_WIRE_WRONG_PARTITION);
	produce(fd, 1, "made", 0, &set);
	fr = fetch(fd, "made", 0, 1000000, 0, 0, NULL);
	assert_int_equal(fr.error, KLOG_WIRE_OFFSET_OUT_OF_RANGE);
	assert_int_equal(fr.log_start, 0);
	assert_true(fr.log_end >= (int64_t)set.len);
	fr = fetch(fd, "made", 0, 3, 0, 0, NULL);
	assert_int_equal(fr.error, KLOG_WIRE_NOT_BOUNDARY);
	close(fd);
	/* A fetch never creates a topic. */
	assert_int_equal(f->topics_created, 2);   /* "made" and "c" */
	klog_buf_free(&set);
	klog_buf_free(&bad);
}

static void
test_fetch_size_limit(void **state)
{
	struct fx *f = *state;
	klog_buf_t out;
	klog_fetch_result_t fr;
	int fd;

	fx_start(f);
	fd = client(f);
	klog_buf_init(&out);
	put_fetch(&out, 9, "made", 0, 0, KLOG_BROKER_MAX_FETCH_BYTES + 1, 0,
	    0);
	send_buf(fd, &out);
	fr = recv_fetch(fd, 9, NULL);
	assert_int_equal(fr.error, KLOG_WIRE_INVALID_FETCH_SIZE);
	close(fd);
	klog_buf_free(&out);
}

static void
test_no_auto_create(void **state)
{
	struct fx *f = *state;
	klog_buf_t set;
	int fd;

	f->cfg.auto_create = 0;
	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	make_set(&set, 1, 0);
	assert_int_equal(produce(fd, 1, "new", 0, &set).error,
	    KLOG_WIRE_UNKNOWN_TOPIC);
	assert_int_equal(produce(fd, 1, "made", 1, &set).error, 0);
	close(fd);
	klog_buf_free(&set);
}

/*
 * With batching (a long flush interval), a record acknowledged with acks=1
 * is still visible to a consumer that asks afterwards: the fetch (and the
 * OFFSETS "latest") wait for one flush instead of the policy.
 */
static void
test_visibility_with_batching(void **state)
{
	struct fx *f = *state;
	klog_buf_t set, got;
	klog_fetch_result_t fr;
	int64_t first;
	int32_t count;
	int fd, fd2;

	f->cfg.flush_ms = 600000;
	f->cfg.flush_messages = 1000000;
	fx_start(f);
	fd = client(f);
	fd2 = client(f);
	klog_buf_init(&set);
	klog_buf_init(&got);
	make_set(&set, 10, 1);
	assert_int_equal(produce(fd, 1, "v", 0, &set).error, 0);
	assert_int_equal(offsets(fd2, "v", 0, KLOG_OFFSET_LATEST, &first,
	    &count), 0);
	assert_int_equal(first, (int64_t)set.len);
	/* The flushed part comes at once; at the flushed end, the fetch
	 * waits for one flush rather than ten minutes. */
	assert_int_equal(produce(fd, 1, "v", 0, &set).error, 0);
	fr = fetch(fd2, "v", 0, 0, 0, 0, &got);
	assert_int_equal(fr.error, 0);
	assert_int_equal(got.len, set.len);
	fr = fetch(fd2, "v", 0, (int64_t)set.len, 0, 0, &got);
	assert_int_equal(fr.error, 0);
	assert_int_equal(fr.log_end, 2 * (int64_t)set.len);
	assert_int_equal(got.len, 2 * set.len);
	assert_memory_equal(got.data + set.len, set.data, set.len);
	/* An out-of-range answer covers acknowledged records too. */
	assert_int_equal(produce(fd, 1, "v", 0, &set).error, 0);
	fr = fetch(fd2, "v", 0, 1 << 30, 0, 0, NULL);
	assert_int_equal(fr.error, KLOG_WIRE_OFFSET_OUT_OF_RANGE);
	assert_int_equal(fr.log_end, 3 * (int64_t)set.len);
	close(fd);
	close(fd2);
	klog_buf_free(&set);
	klog_buf_free(&got);
}

/*
 * A produce request whose sets come to more than KLOG_CRCPOOL_MIN_SPLIT has
 * its CRCs checked on the verifier's threads and the loop's together,
 * before any set is handled.  A flip anywhere still refuses that
 * partition's set alone, and the others go in whole, with no CRC thread,
 * one, and three.
 */
static void
test_large_produce_checked_together(void **state)
{
	enum { PARTS = 4, PER = 6000 };   /* 4 sets of about 110 KB */
	static const int threads[] = { 0, 1, 3 };
	static const size_t flips[] = { 0, PER / 2, PER - 1 };
	struct fx *f = *state;
	klog_buf_t sets[PARTS], want[PARTS], out, got;
	klog_produce_part_t parts[PARTS];
	klog_produce_req_t req = { KLOG_ACKS_ALL, 1000, PARTS, parts };
	klog_produce_result_t res[PARTS];
	klog_resp_header_t h;
	char topics[PARTS][16];
	uint8_t *body;
	size_t len, at;
	uint32_t n;
	int fd;

	for (int i = 0; i < PARTS; i++) {
		klog_buf_init(&sets[i]);
		make_set(&sets[i], PER, i * PER);
	}
	klog_buf_init(&out);
	klog_buf_init(&got);
	for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++) {
		f->cfg.crc_threads = threads[k];
		fx_start(f);
		fd = client(f);
		for (int i = 0; i < PARTS; i++) {
			snprintf(topics[i], sizeof(topics[i]), "big%zu-%d", k,
			    i);
			parts[i] = (klog_produce_part_t){ str(topics[i]), 0,
			    sets[i].data, (uint32_t)sets[i].len };
			klog_buf_init(&want[i]);
		}
		/* Round 0 flips nothing; round r flips a byte of set r - 1,
		 * at its first, middle or last entry in turn. */
		for (int r = 0; r <= PARTS; r++) {
			uint8_t *p = NULL;

			if (r > 0) {
				p = sets[r - 1].data;
				at = 0;
				for (size_t e = 0; e < flips[r % 3]; e++)
					at += 4 + klog_be32(p + at);
				p += at + KLOG_MSG_OVERHEAD;
				*p ^= 1;
			}
			assert_int_equal(klog_proto_encode_produce(&out, 11,
			    &req), 0);
			send_buf(fd, &out);
			recv_resp(fd, &h, &body, &len);
			assert_int_equal(klog_proto_decode_produce_resp(body,
			    len, res, PARTS, &n), 0);
			assert_int_equal(n, PARTS);
			for (int i = 0; i < PARTS; i++) {
				if (i == r - 1) {
					assert_int_equal(res[i].error,
					    KLOG_WIRE_INVALID_MESSAGE);
					continue;
				}
				assert_int_equal(res[i].error, 0);
				assert_int_equal(res[i].offset,
				    (int64_t)want[i].len);
				klog_buf_put(&want[i], sets[i].data,
				    sets[i].len);
			}
			free(body);
			if (p != NULL)
				*p ^= 1;
		}
		for (int i = 0; i < PARTS; i++) {
			klog_buf_reset(&got);
			assert_int_equal(fetch(fd, topics[i], 0, 0, 0, 0,
			    &got).error, 0);
			assert_int_equal(got.len, want[i].len);
			assert_memory_equal(got.data, want[i].data, got.len);
			klog_buf_free(&want[i]);
		}
		close(fd);
		fx_stop(f, 1);
	}
	for (int i = 0; i < PARTS; i++)
		klog_buf_free(&sets[i]);
	klog_buf_free(&out);
	klog_buf_free(&got);
}

/*
 * A client that pipelines fetches and never reads the answers fills its
 * socket and then its queue: the broker stops reading it, and another
 * client is served all along.
 */
static void
test_slow_reader_does_not_block_others(void **state)
{
	struct fx *f = *state;
	klog_buf_t set, out;
	klog_produce_result_t pr;
	int fd, slow, flags, sent = 0;

	f->cfg.conn_out_limit = 64 << 10;
	fx_start(f);
	fd = client(f);
	slow = client(f);
	klog_buf_init(&set);
	klog_buf_init(&out);
	for (int i = 0; i < 100; i++)
		make_set(&set, 100, i * 100);
	pr = produce(fd, 1, "big", 0, &set);
	assert_int_equal(pr.error, 0);
	/* Send fetches until our own socket buffer is full. */
	flags = fcntl(slow, F_GETFL);
	fcntl(slow, F_SETFL, flags | O_NONBLOCK);
	put_fetch(&out, 1, "big", 0, 0, 1 << 20, 0, 0);
	for (int i = 0; i < 20000; i++) {
		ssize_t r = send(slow, out.data, out.len, MSG_NOSIGNAL);

		if (r < 0)
			break;
		assert_int_equal(r, (ssize_t)out.len);
		sent++;
	}
	assert_true(sent > 10);
	/* The other client goes on. */
	for (int i = 0; i < 20; i++) {
		pr = produce(fd, 1, "other", 0, &set);
		assert_int_equal(pr.error, 0);
	}
	close(slow);
	close(fd);
	klog_buf_free(&set);
	klog_buf_free(&out);
}

/* Frames larger than the shared read buffer, mixed with small ones. */
static void
test_large_frames(void **state)
{
	struct fx *f = *state;
	klog_buf_t set, small, out, got;
	klog_resp_header_t h;
	klog_fetch_result_t fr;
	uint8_t *body;
	size_t len;
	int fd;

	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	klog_buf_init(&small);
	klog_buf_init(&out);
	klog_buf_init(&got);
	make_set(&set, 50000, 0);          /* about 900 KB */
	make_set(&small, 1, 0);
	assert_true(set.len > 512 * 1024);
	for (int i = 0; i < 3; i++) {
		put_produce(&out, 10 * i, KLOG_ACKS_LEADER, "L", 0, &small);
		put_produce(&out, 10 * i + 1, KLOG_ACKS_LEADER, "L", 0, &set);
	}
	send_buf(fd, &out);
	for (int i = 0; i < 6; i++) {
		recv_resp(fd, &h, &body, &len);
		assert_int_equal(h.correlation, 10 * (i / 2) + i % 2);
		assert_int_equal(h.error, 0);
		free(body);
	}
	fr = fetch(fd, "L", 0, (int64_t)small.len, 0, 0, &got);
	assert_int_equal(fr.error, 0);
	/* Flushed at least up to the end of this set (maybe not beyond). */
	assert_true(fr.log_end >= (int64_t)(set.len + small.len));
	assert_true(got.len >= set.len);
	assert_memory_equal(got.data, set.data, set.len);
	close(fd);
	klog_buf_free(&set);
	klog_buf_free(&small);
	klog_buf_free(&out);
	klog_buf_free(&got);
}

/*
 * Answers bigger than the output limit: the broker stops reading, then
 * resumes with the requests it had buffered; every answer comes, in order
 * and complete.
 */
static void
test_paused_connection_resumes(void **state)
{
	struct fx *f = *state;
	klog_buf_t set, out, got;
	klog_fetch_result_t fr;
	int fd;

	f->cfg.conn_out_limit = 16 << 10;
	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	klog_buf_init(&out);
	klog_buf_init(&got);
	make_set(&set, 5000, 0);
	assert_int_equal(produce(fd, 1, "P", 0, &set).error, 0);
	for (int i = 0; i < 200; i++)
		put_fetch(&out, 1000 + i, "P", 0, 0, 1 << 20, 0, 0);
	send_buf(fd, &out);
	for (int i = 0; i < 200; i++) {
		klog_buf_reset(&got);
		fr = recv_fetch(fd, 1000 + i, &got);
		assert_int_equal(fr.error, 0);
		assert_int_equal(got.len, set.len);
		assert_memory_equal(got.data, set.data, set.len);
	}
	close(fd);
	klog_buf_free(&set);
	klog_buf_free(&out);
	klog_buf_free(&got);
}

/* A client that shuts its sending side still gets its answers. */
static void
test_half_close(void **state)
{
	struct fx *f = *state;
	klog_buf_t set, out;
	klog_resp_header_t h;
	uint8_t *body;
	size_t len;
	int fd;

	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	klog_buf_init(&out);
	make_set(&set, 1, 0);
	put_produce(&out, 1, KLOG_ACKS_ALL, "h", 0, &set);
	put_produce(&out, 2, KLOG_ACKS_LEADER, "h", 0, &set);
	send_buf(fd, &out);
	shutdown(fd, SHUT_WR);
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.correlation, 1);
	free(body);
	recv_resp(fd, &h, &body, &len);
	assert_int_equal(h.correlation, 2);
	free(body);
	assert_true(closed_by_peer(fd));
	close(fd);
	klog_buf_free(&set);
	klog_buf_free(&out);
}

/* Random bytes and truncated frames: the broker stays up. */
static void
test_garbage(void **state)
{
	struct fx *f = *state;
	uint8_t junk[4096];
	klog_buf_t set, out;
	unsigned x = 99;
	int fd;

	fx_start(f);
	for (int round = 0; round < 20; round++) {
		fd = client(f);
		for (size_t i = 0; i < sizeof(junk); i++) {
			x = x * 1103515245 + 12345;
			junk[i] = (uint8_t)(x >> 16);
		}
		/* Some rounds: a plausible size, then junk. */
		if (round % 2 == 0)
			klog_put_be32(junk, 100 + (uint32_t)round);
		send(fd, junk, (size_t)(round * 200 + 3), MSG_NOSIGNAL);
		close(fd);
	}
	/* A truncated frame from a client that then disappears. */
	klog_buf_init(&set);
	klog_buf_init(&out);
	make_set(&set, 3, 0);
	put_produce(&out, 1, 1, "g", 0, &set);
	fd = client(f);
	send_all(fd, out.data, out.len - 5);
	close(fd);
	fd = client(f);
	assert_int_equal(produce(fd, 1, "g", 0, &set).error, 0);
	close(fd);
	klog_buf_free(&set);
	klog_buf_free(&out);
}

static void
test_clean_and_unclean_restart(void **state)
{
	struct fx *f = *state;
	char marker[160];
	klog_buf_t set;
	klog_fetch_result_t fr;
	struct stat st;
	int fd;

	snprintf(marker, sizeof(marker), "%s/%s", f->dir, KLOG_CLEAN_MARKER);
	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	make_set(&set, 2, 0);
	produce(fd, 1, "r", 0, &set);
	close(fd);
	fx_stop(f, 1);
	assert_int_equal(stat(marker, &st), 0);
	assert_true(logged(f, "clean shutdown"));
	assert_false(logged(f, "no clean-shutdown marker"));

	/* Open again (consumes the marker), then close without it. */
	fx_start(f);
	assert_int_equal(stat(marker, &st), -1);
	fx_stop(f, 0);
	assert_int_equal(stat(marker, &st), -1);
	fx_start(f);
	assert_true(logged(f, "no clean-shutdown marker"));
	fd = client(f);
	fr = fetch(fd, "r", 0, 0, 0, 0, NULL);
	assert_int_equal(fr.log_end, (int64_t)set.len);
	close(fd);
	klog_buf_free(&set);
}

/* A second broker on the same directory is refused. */
static void
test_data_dir_locked(void **state)
{
	struct fx *f = *state;
	klog_broker_t *b2;
	klog_err_t err = { 0 };

	fx_start(f);
	assert_int_equal(klog_broker_open(&f->cfg, &b2, &err), -KLOG_EBUSY);
	assert_non_null(strstr(err.msg, "in use"));
}

/*
 * Pipelined produces are written together; when the write can take only
 * some of them, those are acknowledged with their offsets and the rest get
 * DISK_FULL, whatever their acks: the log then holds exactly what was
 * acknowledged.
 */
static void
test_partial_write_answers_each_set(void **state)
{
	struct fx *f = *state;
	klog_buf_t set, out, got;
	klog_produce_result_t r;
	klog_resp_header_t h;
	struct rlimit old, lim;
	uint8_t *body;
	size_t len;
	uint32_t n;
	int64_t base, end;
	int32_t count;
	int fd;

	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	klog_buf_init(&out);
	klog_buf_init(&got);
	make_set(&set, 10, 0);
	assert_int_equal(produce(fd, KLOG_ACKS_ALL, "d", 0, &set).error, 0);
	base = (int64_t)set.len;
	for (int i = 0; i < 8; i++)
		put_produce(&out, i, i % 2 ? KLOG_ACKS_ALL : KLOG_ACKS_LEADER,
		    "d", 0, &set);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = (rlim_t)(base + 3 * (int64_t)set.len +
	    (int64_t)set.len / 2);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	send_buf(fd, &out);
	for (int i = 0; i < 8; i++) {
		recv_resp(fd, &h, &body, &len);
		assert_int_equal(h.correlation, i);
		assert_int_equal(klog_proto_decode_produce_resp(body, len, &r,
		    1, &n), 0);
		if (i < 3) {
			assert_int_equal(r.error, 0);
			assert_int_equal(r.offset, base + i * (int64_t)set.len);
		} else {
			assert_int_equal(r.error, KLOG_WIRE_DISK_FULL);
			assert_int_equal(r.offset, -1);
		}
		free(body);
	}
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	end = base + 3 * (int64_t)set.len;
	assert_int_equal(offsets(fd, "d", 0, KLOG_OFFSET_LATEST, &base,
	    &count), 0);
	assert_int_equal(base, end);
	fetch(fd, "d", 0, 0, 0, 0, &got);
	assert_int_equal(got.len, (size_t)end);
	/* Room again: the next set goes right after the acknowledged ones. */
	r = produce(fd, KLOG_ACKS_LEADER, "d", 0, &set);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.offset, end);
	close(fd);
	klog_buf_free(&set);
	klog_buf_free(&out);
	klog_buf_free(&got);
}

static void
test_port_in_use(void **state)
{
	struct fx *f = *state;
	klog_broker_config_t cfg;
	klog_broker_t *b2;
	klog_err_t err = { 0 };
	char listen[64], dir2[128];

	fx_start(f);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d",
	    klog_broker_port(f->b));
	snprintf(dir2, sizeof(dir2), "%s/other", f->dir);
	cfg = f->cfg;
	cfg.listen = listen;
	cfg.data_dir = dir2;
	assert_int_equal(klog_broker_open(&cfg, &b2, &err), -KLOG_ECONN);
	assert_non_null(strstr(err.msg, "in use"));
	/* Nothing was created for the refused broker. */
	assert_int_equal(access(dir2, F_OK), -1);
}

/*
 * A failed fsync is final (klog(7), "A failing disk"): the acks=all
 * request it covered gets STORAGE_ERROR, and so does every produce after
 * it, on every partition, although the next fsync would succeed; readers
 * see only what the last good sync covered; the stop writes no
 * clean-shutdown marker, and the restart recovers and takes writes.
 * Before the fix the second acks=all produce was acknowledged.
 */
static void
test_sync_failure_final(void **state)
{
	struct fx *f = *state;
	char marker[160];
	klog_buf_t set, got;
	klog_fetch_result_t fr;
	klog_err_t err = { 0 };
	struct stat st;
	int fd;

	snprintf(marker, sizeof(marker), "%s/%s", f->dir, KLOG_CLEAN_MARKER);
	fx_start(f);
	fd = client(f);
	klog_buf_init(&set);
	klog_buf_init(&got);
	make_set(&set, 2, 0);
	assert_int_equal(produce(fd, KLOG_ACKS_ALL, "r", 0, &set).error, 0);
	fsync_fails = 1;
	assert_int_equal(produce(fd, KLOG_ACKS_ALL, "r", 0, &set).error,
	    KLOG_WIRE_STORAGE_ERROR);
	assert_int_equal(fsync_fails, 0);
	assert_int_equal(produce(fd, KLOG_ACKS_ALL, "r", 0, &set).error,
	    KLOG_WIRE_STORAGE_ERROR);
	assert_int_equal(produce(fd, 1, "made", 1, &set).error,
	    KLOG_WIRE_STORAGE_ERROR);
	/* Nor is a topic made on the failed disk. */
	assert_int_equal(produce(fd, 1, "new", 0, &set).error,
	    KLOG_WIRE_STORAGE_ERROR);
	snprintf(marker, sizeof(marker), "%s/new-0", f->dir);
	assert_int_equal(stat(marker, &st), -1);
	snprintf(marker, sizeof(marker), "%s/%s", f->dir, KLOG_CLEAN_MARKER);
	fr = fetch(fd, "r", 0, 0, 0, 0, &got);
	assert_int_equal(fr.error, 0);
	assert_int_equal(fr.log_end, (int64_t)set.len);
	assert_int_equal(got.len, set.len);
	assert_true(logged(f, "storage failed"));
	assert_true(logged(f, "Input/output error"));
	close(fd);
	klog_broker_stop(f->b);
	assert_int_equal(pthread_join(f->thread, NULL), 0);
	f->running = 0;
	assert_int_equal(klog_broker_close(f->b, 1, &err), -KLOG_ESTORAGE);
	f->b = NULL;
	assert_int_equal(stat(marker, &st), -1);
	assert_false(logged(f, "clean shutdown"));
	/* The restart recovers, and takes writes again. */
	fx_start(f);
	assert_true(logged(f, "no clean-shutdown marker"));
	fd = client(f);
	assert_int_equal(produce(fd, KLOG_ACKS_ALL, "r", 0, &set).error, 0);
	close(fd);
	klog_buf_free(&set);
	klog_buf_free(&got);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_produce_then_fetch, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_offsets_by_time, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_acks_zero_and_all, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pipelined_in_order, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_long_poll, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_offsets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metadata, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_api_and_version,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_frame, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_bad_topic_partition_and_sets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_size_limit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_no_auto_create, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_visibility_with_batching,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_slow_reader_does_not_block_others, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_frames, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_paused_connection_resumes,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_close, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_large_produce_checked_together, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clean_and_unclean_restart,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_data_dir_locked, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_partial_write_answers_each_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_failure_final, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_port_in_use, setup,
		    teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("broker", tests, NULL, NULL);
}
