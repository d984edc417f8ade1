/*
 * A broker small enough to script, for the client, producer and consumer
 * unit tests: one thread, one connection at a time, one topic "t" kept in
 * memory, the real proto.h encoders and decoders.  Knobs let a test close
 * connections at chosen moments, cap fetch replies, or corrupt a byte.
 */
#ifndef KLOG_TEST_FAKEBROKER_H
#define KLOG_TEST_FAKEBROKER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "klog/base/buf.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"

#define FAKE_MAX_PARTS 8

typedef struct fake {
	int lfd;
	int port;
	char addr[32];                 /* "127.0.0.1:port" */
	pthread_t thread;
	pthread_mutex_t mu;
	int stop;
	pthread_t conns[64];           /* one thread per connection */
	int conn_fds[64];
	int nconns;
	/* The topic "t": 0 partitions = not created yet. */
	int partitions;
	int create_partitions;         /* a produce creates it with these */
	klog_buf_t log[FAKE_MAX_PARTS];
	/* Knobs. */
	int drop_produce_at;           /* close on the Nth produce (1-based)
	                                  before appending; 0 never */
	int drop_after_append_at;      /* append the Nth, close unanswered */
	uint32_t fetch_cap;            /* cut fetch replies at this (0: no) */
	int16_t offsets_error;         /* refuse OFFSETS as a whole with this
	                                  wire error (0: answer) */
	int offsets_garbage;           /* answer OFFSETS with a body that
	                                  does not parse */
	int old_version;               /* refuse every version but 1, as a
	                                  broker older than OFFSETS v2 does */
	int offsets_v2;                /* OFFSETS requests at version 2 seen
	                                  (answered as version 1: no record
	                                  here carries a timestamp) */
	int16_t produce_error;         /* answer produces number
	                                  [produce_error_from, +count) (1-based)
	                                  with this, appending nothing; count
	                                  -1: every one from then on */
	int produce_error_from;
	int produce_error_count;
	int16_t fetch_error;           /* answer every partition of fetch
	                                  number fetch_error_from (1-based)
	                                  and later with this (NOT_LEADER: no
	                                  more the leader); from 0: OFFSETS
	                                  too */
	int fetch_error_from;
	int old_broker;                /* INIT_PRODUCER answered UNKNOWN_API
	                                  (else: id 42, epoch 0) */
	/* Counters. */
	int produces;
	int fetches;
	int connections;
	int64_t max_fetch_asked;
} fake_t;

/* Read exactly n bytes; 0 on success, -1 at EOF or error. */
static inline int
fake_read(int fd, void *p, size_t n)
{
	size_t off = 0;
	ssize_t r;

	while (off < n) {
		r = read(fd, (char *)p + off, n - off);
		if (r <= 0)
			return -1;
		off += (size_t)r;
	}
	return 0;
}

static inline int
fake_write(int fd, const klog_buf_t *b)
{
	size_t off = 0;
	ssize_t r;

	while (off < b->len) {
		r = send(fd, b->data + off, b->len - off, MSG_NOSIGNAL);
		if (r <= 0)
			return -1;
		off += (size_t)r;
	}
	return 0;
}

static inline klog_str_t
fake_topic(void)
{
	klog_str_t t = { "t", 1 };
	return t;
}

static inline int
fake_is_t(klog_str_t s)
{
	return s.len == 1 && s.p[0] == 't';
}

/* Whether offset starts an entry of partition p's log. */
static inline int
fake_boundary(fake_t *f, int p, int64_t offset)
{
	int64_t pos = 0;

	while (pos < offset && pos + 4 <= (int64_t)f->log[p].len)
		pos += 4 + klog_be32(f->log[p].data + pos);
	return pos == offset;
}

static inline void
fake_metadata(fake_t *f, int32_t id, const uint8_t *body, size_t len,
    klog_buf_t *out)
{
	klog_meta_broker_t b = { 1, { "127.0.0.1", 9 }, f->port };
	klog_meta_topic_t t = { 0, fake_topic(), 0, 1 };
	klog_metadata_t md = { 1, 1, &b, 1, &t };
	klog_str_t asked[4];
	uint32_t n = 0;

	klog_proto_decode_metadata(body, len, asked, 4, &n);
	t.partitions = f->partitions;
	if (f->partitions == 0)
		t.error = KLOG_WIRE_UNKNOWN_TOPIC;
	if (n == 1 && !fake_is_t(asked[0])) {
		t.topic = asked[0];
		t.error = KLOG_WIRE_UNKNOWN_TOPIC;
		t.partitions = 0;
	}
	klog_proto_encode_metadata_resp(out, id, &md);
}

/* 1: answer; 0: close without answering. */
static inline int
fake_produce(fake_t *f, int32_t id, const uint8_t *body, size_t len,
    klog_buf_t *out)
{
	klog_produce_part_t parts[FAKE_MAX_PARTS];
	klog_produce_result_t res[FAKE_MAX_PARTS];
	klog_produce_req_t req;
	klog_msgset_info_t info;

	if (klog_proto_decode_produce(body, len, &req, parts,
	    FAKE_MAX_PARTS) < 0)
		return 0;
	f->produces++;
	if (f->drop_produce_at == f->produces)
		return 0;
	if (f->partitions == 0)
		f->partitions = f->create_partitions;
	for (uint32_t i = 0; i < req.count; i++) {
		klog_produce_part_t *p = &parts[i];

		res[i].topic = p->topic;
		res[i].partition = p->partition;
		res[i].offset = -1;
		res[i].error = KLOG_WIRE_NONE;
		if (f->produce_error != KLOG_WIRE_NONE &&
		    f->produces >= f->produce_error_from &&
		    (f->produce_error_count < 0 || f->produces <
		    f->produce_error_from + f->produce_error_count))
			res[i].error = f->produce_error;
		else if (!fake_is_t(p->topic))
			res[i].error = KLOG_WIRE_UNKNOWN_TOPIC;
		else if (p->partition < 0 || p->partition >= f->partitions)
			res[i].error = KLOG_WIRE_WRONG_PARTITION;
		else if (klog_msgset_validate(p->set, p->set_len,
		    KLOG_ITER_DEEP, &info) < 0)
			res[i].error = KLOG_WIRE_INVALID_MESSAGE;
		if (res[i].error != KLOG_WIRE_NONE)
			continue;
		res[i].offset = (int64_t)f->log[p->partition].len;
		klog_buf_put(&f->log[p->partition], p->set, p->set_len);
	}
	if (f->drop_after_append_at == f->produces)
		return 0;
	if (req.acks != KLOG_ACKS_NONE)
		klog_proto_encode_produce_resp(out, id, res, req.count);
	return 1;
}

static inline void
fake_init_producer(fake_t *f, int32_t id, klog_buf_t *out)
{
	klog_producer_id_t grant = { 42, 0 };

	if (f->old_broker)
		klog_proto_end(out, klog_proto_resp_begin(out, id,
		    KLOG_WIRE_UNKNOWN_API));
	else
		klog_proto_encode_init_producer_resp(out, id, KLOG_WIRE_NONE,
		    &grant);
}

static inline void
fake_fetch(fake_t *f, int32_t id, const uint8_t *body, size_t len,
    klog_buf_t *out)
{
	klog_fetch_part_t parts[FAKE_MAX_PARTS];
	klog_fetch_req_t req;
	size_t start;

	f->fetches++;
	if (klog_proto_decode_fetch(body, len, &req, parts, FAKE_MAX_PARTS) <
	    0)
		return;
	start = klog_proto_resp_begin(out, id, KLOG_WIRE_NONE);
	klog_buf_put_i32(out, (int32_t)req.count);
	for (uint32_t i = 0; i < req.count; i++) {
		klog_fetch_part_t *p = &parts[i];
		int16_t error = KLOG_WIRE_NONE;
		int64_t end = 0, n = 0;

		if (p->max_bytes > f->max_fetch_asked)
			f->max_fetch_asked = p->max_bytes;
		if (f->fetch_error != KLOG_WIRE_NONE &&
		    f->fetches >= f->fetch_error_from)
			error = f->fetch_error;
		else if (p->partition < 0 || p->partition >= f->partitions)
			error = KLOG_WIRE_WRONG_PARTITION;
		else if (p->offset < 0 ||
		    p->offset > (int64_t)f->log[p->partition].len)
			error = KLOG_WIRE_OFFSET_OUT_OF_RANGE;
		else if (!fake_boundary(f, p->partition, p->offset))
			error = KLOG_WIRE_NOT_BOUNDARY;
		if (error == KLOG_WIRE_NONE) {
			end = (int64_t)f->log[p->partition].len;
			n = end - p->offset;
			if (n > p->max_bytes)
				n = p->max_bytes;
			if (f->fetch_cap && n > f->fetch_cap)
				n = f->fetch_cap;
		} else if (p->partition >= 0 && p->partition < f->partitions) {
			end = (int64_t)f->log[p->partition].len;
		}
		klog_proto_put_fetch_part_header(out, p->topic, p->partition,
		    error, 0, end, (uint32_t)n);
		if (n > 0)
			klog_buf_put(out, f->log[p->partition].data + p->offset,
			    (size_t)n);
	}
	klog_proto_end(out, start);
}

static inline void
fake_offsets(fake_t *f, int32_t id, const uint8_t *body, size_t len,
    klog_buf_t *out)
{
	klog_offsets_part_t parts[FAKE_MAX_PARTS];
	int16_t errors[FAKE_MAX_PARTS];
	int64_t values[FAKE_MAX_PARTS];
	const int64_t *offs[FAKE_MAX_PARTS];
	int32_t counts[FAKE_MAX_PARTS];
	uint32_t n = 0;
	size_t start;

	if (f->offsets_error != KLOG_WIRE_NONE || f->offsets_garbage) {
		start = klog_proto_resp_begin(out, id, f->offsets_error);
		if (f->offsets_garbage)
			klog_buf_put_i32(out, 7);  /* 7 results, none there */
		klog_proto_end(out, start);
		return;
	}
	klog_proto_decode_offsets(body, len, parts, FAKE_MAX_PARTS, &n);
	for (uint32_t i = 0; i < n; i++) {
		int p = parts[i].partition;

		errors[i] = f->fetch_error != KLOG_WIRE_NONE &&
		    f->fetch_error_from == 0 ? f->fetch_error :
		    p < 0 || p >= f->partitions ?
		    KLOG_WIRE_WRONG_PARTITION : KLOG_WIRE_NONE;
		counts[i] = errors[i] == KLOG_WIRE_NONE &&
		    parts[i].time < 0 ? 1 : 0;
		values[i] = parts[i].time == KLOG_OFFSET_LATEST &&
		    errors[i] == KLOG_WIRE_NONE ? (int64_t)f->log[p].len : 0;
		offs[i] = &values[i];
	}
	klog_proto_encode_offsets_resp(out, id, parts, errors, offs, counts,
	    n);
}

/* Serve one connection until it closes or a knob closes it. */
static inline void
fake_serve(fake_t *f, int fd)
{
	klog_req_header_t h;
	uint8_t head[KLOG_REQ_HEADER_SIZE];
	klog_buf_t body, out;
	int keep = 1;

	klog_buf_init(&body);
	klog_buf_init(&out);
	while (keep && fake_read(fd, head, sizeof(head)) == 0) {
		if (klog_proto_req_header(head, sizeof(head), 1 << 30, &h) < 0)
			break;
		klog_buf_reset(&body);
		klog_buf_reserve(&body, (size_t)h.size + 1);
		if (fake_read(fd, body.data, (size_t)h.size + 4 -
		    KLOG_REQ_HEADER_SIZE) < 0)
			break;
		body.len = (size_t)h.size + 4 - KLOG_REQ_HEADER_SIZE;
		klog_buf_reset(&out);
		pthread_mutex_lock(&f->mu);
		if (h.api == KLOG_API_OFFSETS &&
		    h.version == KLOG_PROTO_VERSION_OFFSETS_AT)
			f->offsets_v2++;
		if (f->old_version && h.version != KLOG_PROTO_VERSION) {
			klog_proto_end(&out, klog_proto_resp_begin(&out,
			    h.correlation, KLOG_WIRE_UNSUPPORTED_VERSION));
			h.api = -1;
		}
		switch (h.api) {
		case -1:
			break;
		case KLOG_API_METADATA:
			fake_metadata(f, h.correlation, body.data, body.len,
			    &out);
			break;
		case KLOG_API_PRODUCE:
			keep = fake_produce(f, h.correlation, body.data,
			    body.len, &out);
			break;
		case KLOG_API_FETCH:
			fake_fetch(f, h.correlation, body.data, body.len,
			    &out);
			break;
		case KLOG_API_OFFSETS:
			fake_offsets(f, h.correlation, body.data, body.len,
			    &out);
			break;
		case KLOG_API_INIT_PRODUCER:
			fake_init_producer(f, h.correlation, &out);
			break;
		default:
			keep = 0;
		}
		pthread_mutex_unlock(&f->mu);
		if (keep && fake_write(fd, &out) < 0)
			break;
	}
	klog_buf_free(&body);
	klog_buf_free(&out);
}

struct fake_conn {
	fake_t *f;
	int fd;
};

static inline void *
fake_conn_main(void *arg)
{
	struct fake_conn *c = arg;

	fake_serve(c->f, c->fd);
	shutdown(c->fd, SHUT_RDWR);
	free(c);
	return NULL;
}

static inline void *
fake_main(void *arg)
{
	fake_t *f = arg;
	struct pollfd pfd = { .fd = f->lfd, .events = POLLIN };
	struct fake_conn *c;
	int fd;

	while (!f->stop) {
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		if ((fd = accept(f->lfd, NULL, NULL)) < 0)
			continue;
		pthread_mutex_lock(&f->mu);
		if (f->nconns == 64 || (c = malloc(sizeof(*c))) == NULL) {
			pthread_mutex_unlock(&f->mu);
			close(fd);
			continue;
		}
		c->f = f;
		c->fd = fd;
		f->conn_fds[f->nconns] = fd;
		f->connections++;
		if (pthread_create(&f->conns[f->nconns], NULL, fake_conn_main,
		    c) == 0)
			f->nconns++;
		pthread_mutex_unlock(&f->mu);
	}
	return NULL;
}

/* Start a broker whose topic "t" has `partitions` (0: created by the
 * first produce with create_partitions). */
static inline fake_t *
fake_start(int partitions, int create_partitions)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	fake_t *f = calloc(1, sizeof(*f));

	if (f == NULL)
		abort();
	f->partitions = partitions;
	f->create_partitions = create_partitions;
	for (int i = 0; i < FAKE_MAX_PARTS; i++)
		klog_buf_init(&f->log[i]);
	pthread_mutex_init(&f->mu, NULL);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&sa, sl) < 0 ||
	    listen(f->lfd, 16) < 0 ||
	    getsockname(f->lfd, (struct sockaddr *)&sa, &sl) < 0)
		abort();
	f->port = ntohs(sa.sin_port);
	snprintf(f->addr, sizeof(f->addr), "127.0.0.1:%d", f->port);
	if (pthread_create(&f->thread, NULL, fake_main, f) != 0)
		abort();
	return f;
}

static inline void
fake_stop(fake_t *f)
{
	f->stop = 1;
	pthread_join(f->thread, NULL);
	for (int i = 0; i < f->nconns; i++) {
		shutdown(f->conn_fds[i], SHUT_RDWR);
		pthread_join(f->conns[i], NULL);
		close(f->conn_fds[i]);
	}
	close(f->lfd);
	for (int i = 0; i < FAKE_MAX_PARTS; i++)
		klog_buf_free(&f->log[i]);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

/* Append payload to partition p's log directly, as a magic-0 entry. */
static inline void
fake_append(fake_t *f, int p, const char *payload)
{
	size_t n = strlen(payload);

	pthread_mutex_lock(&f->mu);
	klog_buf_reserve(&f->log[p], klog_entry_size(n));
	f->log[p].len += klog_entry_encode(f->log[p].data + f->log[p].len,
	    payload, n);
	pthread_mutex_unlock(&f->mu);
}

#endif
