#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/clock.h"
#include "klog/client/producer.h"
#include "klog/storage/format.h"
#include "klog/storage/names.h"
#include "klog/storage/record.h"
#include "producer_impl.h"

#define MAX_IOV 64
#define BUSY_BYTES (64u << 20)

void
klog_producer_config_default(klog_producer_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->partition = -1;
	cfg->acks = KLOG_ACKS_LEADER;
	cfg->timeout_ms = 30000;
	cfg->codec = KLOG_CODEC_NONE;
	cfg->batch_records = 1000;
	cfg->batch_bytes = 1u << 20;
	cfg->linger_ms = 5;
	cfg->max_inflight = 1024;
	cfg->max_message = 1000000;
	cfg->connect_timeout_ms = 5000;
	cfg->retry_for_ms = 30000;
}

uint32_t
klog_producer_hash(const void *key, size_t len)
{
	const uint8_t *p = key;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

/* ---- links ---- */

static void
link_down(struct link *l, int64_t now, const klog_err_t *why)
{
	klog_client_close(l->c);
	l->c = NULL;
	if (l->down_since == 0)
		l->down_since = now;
	l->retry_at = now + l->backoff_ms;
	l->wi = l->head;
	l->woff = 0;
	snprintf(l->why, sizeof(l->why), "%s", why->msg);
}

/* A lost connection: for a replicated topic the leader may have gone, so
 * where its partitions are is asked again too. */
static void
link_lost(klog_producer_t *p, struct link *l, int64_t now,
    const klog_err_t *why)
{
	link_down(l, now, why);
	if (p->replicated)
		producer_want_relocate(p, why->code ? why->code : -KLOG_ECONN, l->why);
}

/* The answers a producer waits out: the partition has another leader, or
 * too few in-sync replicas right now, or (a replicated topic) its leader's
 * storage failed and the lead moves to an in-sync replica elsewhere (as
 * Kafka's producer retries them all). */
static int
retryable(const klog_producer_t *p, int16_t error)
{
	return error == KLOG_WIRE_NOT_LEADER ||
	    error == KLOG_WIRE_NOT_ENOUGH_REPLICAS ||
	    error == KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND ||
	    (p->replicated && error == KLOG_WIRE_STORAGE_ERROR);
}

/*
 * The oldest request of l got a retryable answer: it and every later one
 * on l go again after a relocation (the connection is dropped, so answers
 * to requests moved elsewhere cannot arrive on it).  A request appended
 * before the answer (AFTER_APPEND, or a later one the broker took) is
 * appended twice: at-least-once, the last copy in order.
 */
static void
refused(klog_producer_t *p, struct link *l, int16_t error, int64_t now)
{
	struct req *r = l->q[l->head];
	klog_err_t e = { 0 };

	if (r->index < p->npart && p->fail_since[r->index] == 0)
		p->fail_since[r->index] = now;
	klog_err_set(&e, klog_wire_error_to_klog(error),
	    "topic \"%s\" partition %d: %s from %s", p->topic, r->index,
	    klog_wire_error_name(error), klog_client_name(l->c));
	link_down(l, now, &e);
	/* Backoff that grows until something is acknowledged: a partition
	 * short of replicas is not asked again at once, forever. */
	l->retry_at = now + p->reloc_backoff_ms;
	producer_want_relocate(p, e.code, e.msg);
}

/* The oldest request of l is done: acknowledged (at offset), refused or
 * written. */
static void
complete(klog_producer_t *p, struct link *l, int16_t error, int64_t offset)
{
	struct req *r = l->q[l->head++];

	producer_tell_done(p, r, error, error == KLOG_WIRE_NONE, offset);
	if (error != KLOG_WIRE_NONE) {
		p->st.failed += r->records;
		if (error == KLOG_WIRE_MESSAGE_TOO_LARGE)
			p->st.too_large += r->records;
		if (error == KLOG_WIRE_TOPIC_AUTHORIZATION_FAILED)
			p->st.denied += r->records;
		if (p->error[0] == '\0')
			snprintf(p->error, sizeof(p->error),
			    "topic \"%s\" partition %d: %s", p->topic,
			    r->index, klog_wire_error_text(error));
	} else {
		/* A request queued before the count shrank (0.7 refresh)
		 * can carry an index past it. */
		if (r->index < p->npart)
			p->fail_since[r->index] = 0;
		p->reloc_backoff_ms = KLOG_BACKOFF_MIN_MS;
		p->st.acked += r->records;
		p->st.bytes += r->payload_bytes;
		p->st.requests++;
	}
	p->queued--;
	p->queued_bytes -= r->buf.len;
	producer_req_recycle(p, r);
}

static void
advance(klog_producer_t *p, struct link *l, size_t w, int64_t now)
{
	struct req *r;
	size_t left;

	while (w > 0) {
		r = l->q[l->wi];
		left = r->buf.len - l->woff;
		if (w < left) {
			l->woff += w;
			return;
		}
		w -= left;
		l->wi++;
		l->woff = 0;
		p->st.resent += r->sent;
		r->sent = 1;
		r->sent_ms = now;
	}
}

/* Write what the socket and the in-flight bound allow. */
static void
link_write(klog_producer_t *p, struct link *l, int64_t now)
{
	struct iovec iov[MAX_IOV];
	size_t limit, k, off, w;
	klog_err_t e;
	int n;

	KLOG_ERR_EMPTY(&e);
	while (l->c != NULL && l->wi < l->tail) {
		limit = l->head + (size_t)p->cfg.max_inflight;
		n = 0;
		off = l->woff;
		for (k = l->wi; k < l->tail && k < limit && n < MAX_IOV; k++) {
			iov[n].iov_base = l->q[k]->buf.data + off;
			iov[n++].iov_len = l->q[k]->buf.len - off;
			off = 0;
		}
		if (n == 0)
			return;
		if (klog_client_writev(l->c, iov, n, 0, &w, &e) < 0) {
			link_lost(p, l, now, &e);
			return;
		}
		if (w == 0)
			return;
		advance(p, l, w, now);
		if (p->cfg.acks == KLOG_ACKS_NONE)
			while (l->head < l->wi)
				complete(p, l, KLOG_WIRE_NONE, -1);
	}
}

/* 1 if the answer was retryable (l is down then), 0, or an error. */
static int
handle_response(klog_producer_t *p, struct link *l, const klog_resp_header_t *h,
    const uint8_t *body, size_t len, int64_t now, klog_err_t *err)
{
	klog_produce_result_t res[1];
	uint32_t n = 0;

	if (l->head == l->wi || h->correlation != l->q[l->head]->id)
		return klog_err_set(err, -KLOG_EPROTO,
		    "%s: answer to a request never sent (id %d)",
		    klog_client_name(l->c), (int)h->correlation);
	if (h->error != KLOG_WIRE_NONE) {
		if (retryable(p, h->error)) {
			refused(p, l, h->error, now);
			return 1;
		}
		complete(p, l, h->error, -1);
		return 0;
	}
	if (klog_proto_decode_produce_resp(body, len, res, 1, &n) < 0 ||
	    n != 1)
		return klog_err_set(err, -KLOG_EPROTO,
		    "%s: malformed produce response", klog_client_name(l->c));
	if (res[0].error != KLOG_WIRE_NONE && retryable(p, res[0].error)) {
		refused(p, l, res[0].error, now);
		return 1;
	}
	complete(p, l, res[0].error, res[0].error ? -1 : res[0].offset);
	return 0;
}

static int
link_read(klog_producer_t *p, struct link *l, int64_t now, klog_err_t *err)
{
	const uint8_t *body;
	klog_resp_header_t h;
	klog_err_t e;
	size_t len;
	int rc, rrc;

	KLOG_ERR_EMPTY(&e);
	rrc = klog_client_read(l->c, &e);
	while ((rc = klog_client_response(l->c, &h, &body, &len, err)) > 0)
		if ((rc = handle_response(p, l, &h, body, len, now, err)) != 0)
			return rc < 0 ? rc : 0;   /* 1: l is down already */
	if (rc < 0)
		return rc;
	if (rrc < 0)
		link_lost(p, l, now, &e);
	return 0;
}

/* Connect if due, then write. */
static int
link_service(klog_producer_t *p, struct link *l, int64_t now, klog_err_t *err)
{
	klog_err_t e;

	KLOG_ERR_EMPTY(&e);
	if (l->addr.host[0] == '\0')
		return 0;      /* limbo: waits for a relocation */
	if (l->c == NULL) {
		/* An outage counts only while something waits to be sent. */
		if (l->head == l->tail)
			l->down_since = 0;
		/* A relocation not yet tried may move these requests
		 * elsewhere; one that failed (a leader missing) holds back
		 * no other partition. */
		if (l->head == l->tail || now < l->retry_at ||
		    (p->reloc_pending && p->reloc_fail_since == 0))
			return 0;
		if (klog_client_open(&l->addr, p->cfg.connect_timeout_ms,
		    &l->c, &e) < 0) {
			now = klog_clock_mono_ms();
			link_lost(p, l, now, &e);
			/* Refused credentials stay refused: no retry. */
			if (e.code == -KLOG_EAUTH)
				return klog_err_set(err, e.code, "%s", e.msg);
			if (now - l->down_since >= p->cfg.retry_for_ms)
				return klog_err_set(err, e.code,
				    "%s; gave up after %lld ms", l->why,
				    (long long)(now - l->down_since));
			if (l->backoff_ms < KLOG_BACKOFF_MAX_MS)
				l->backoff_ms *= 2;
			return 0;
		}
		if (l->connected_once)
			p->st.reconnects++;
		l->connected_once = 1;
		l->down_since = 0;
		l->backoff_ms = KLOG_BACKOFF_MIN_MS;
		l->wi = l->head;
		l->woff = 0;
	}
	link_write(p, l, now);
	return 0;
}

/* ---- batches ---- */

/* Seal batches older than linger; the next deadline into *next (or -1). */
static void
seal_expired(klog_producer_t *p, int64_t now, int64_t *next)
{
	int64_t due;

	*next = -1;
	for (int i = 0; i < p->npart && p->nopen > 0; i++) {
		if (p->open[i] == NULL)
			continue;
		due = p->open[i]->born_ms + p->cfg.linger_ms;
		if (due <= now)
			producer_seal(p, i);
		else if (*next < 0 || due < *next)
			*next = due;
	}
}

static int
pick(const klog_producer_t *p, const void *key, size_t keylen)
{
	if (p->cfg.partition >= 0)
		return p->cfg.partition;
	/* One partition: no hash to take. */
	if (key != NULL && p->npart > 1)
		return (int)(klog_producer_hash(key, keylen) %
		    (uint32_t)p->npart);
	if (key != NULL)
		return 0;
	return p->sticky;
}

/* The open batch of partition idx, with room for esize more bytes of
 * entries of the kind given; sealed and started afresh if not.  NULL:
 * out of memory (*rc). */
static struct req *
open_batch(klog_producer_t *p, int idx, int kind, size_t esize, int *rc)
{
	size_t cap = kind == PRODUCER_PLAIN ? p->set_cap : p->records_cap;
	struct req *r = p->open[idx];

	*rc = 0;
	if (r != NULL && (r->kind != kind ||
	    (r->records > 0 && r->buf.len - r->hdr_len + esize > cap))) {
		if ((*rc = producer_seal(p, idx)) < 0)
			return NULL;
		/* Round robin moved on: a new batch is the next one's. */
		return NULL;
	}
	if (r == NULL) {
		if ((r = producer_req_new(p, idx, klog_clock_mono_ms())) ==
		    NULL) {
			*rc = -KLOG_ENOMEM;
			return NULL;
		}
		r->kind = kind;
		p->open[idx] = r;
		p->nopen++;
	}
	return r;
}

/* Account for a record added to r (partition idx). */
static inline int
added(klog_producer_t *p, struct req *r, int idx, size_t len)
{
	if (r->buf.failed)
		return -KLOG_ENOMEM;
	p->st.records++;
	if (r->records++ == 0)
		r->first_seq = p->st.records;
	r->payload_bytes += len;
	if (r->records >= p->cfg.batch_records)
		return producer_seal(p, idx);
	return 0;
}

static int send_in_entry(klog_producer_t *p, const klog_producer_rec_t *rec);

int
klog_producer_send(klog_producer_t *p, const void *payload, size_t len,
    const void *key, size_t keylen)
{
	size_t esize = klog_entry_size(len);
	struct req *r;
	int idx, rc;

	if (len > p->cfg.max_message)
		return -KLOG_ETOOBIG;
	/* Only a magic-2 entry carries a producer id and sequence. */
	if (p->pid != KLOG_NO_PRODUCER)
		return send_in_entry(p, &(klog_producer_rec_t){ payload, len,
		    key, keylen, KLOG_NO_TIMESTAMP, NULL, 0 });
	/* open_batch() inlined for the plain record, the common case. */
	for (;;) {
		idx = pick(p, key, keylen);
		r = p->open[idx];
		if (r == NULL || (r->kind == PRODUCER_PLAIN && (r->records == 0 ||
		    r->buf.len - r->hdr_len + esize <= p->set_cap)))
			break;
		if ((rc = producer_seal(p, idx)) < 0)
			return rc;
	}
	if (r == NULL) {
		if ((r = producer_req_new(p, idx, klog_clock_mono_ms())) == NULL)
			return -KLOG_ENOMEM;
		p->open[idx] = r;
		p->nopen++;
	}
	if (klog_buf_reserve(&r->buf, esize) < 0)
		return -KLOG_ENOMEM;
	r->buf.len += klog_entry_encode(r->buf.data + r->buf.len, payload, len);
	return added(p, r, idx, len);
}

/* The most bytes rec takes in a magic-2 entry: Kafka's record with
 * varints at their longest. */
static inline size_t
record_bound(const klog_producer_rec_t *rec)
{
	size_t n = 5 + 1 + 10 + 5 + 5 + rec->key_len + 5 + rec->value_len +
	    5;

	for (uint32_t i = 0; i < rec->header_count; i++)
		n += 10 + rec->headers[i].key_len + (rec->headers[i].value ?
		    (size_t)rec->headers[i].value_len : 0);
	return n;
}

/*
 * The time an idempotent producer's unstamped record carries, as Kafka's
 * do: a broker knows when a producer was last seen by its batches'
 * times, and forgets at a restart one that looks idle for a day.  Taken
 * once a batch (a clock read a record cost 9% of -K's instructions): the
 * time of the batch's latest record, or now for a new batch.
 */
static int64_t
batch_time(const struct req *r)
{
	if (r != NULL && r->kind == PRODUCER_STAMPED && r->records > 0)
		return r->bb.max_timestamp;
	return klog_clock_wall_ms();
}

/* A record into the magic-2 entry of its partition's open batch. */
static int __attribute__((noinline))
send_in_entry(klog_producer_t *p, const klog_producer_rec_t *in)
{
	klog_producer_rec_t stamped;
	const klog_producer_rec_t *rec = in;
	size_t esize = record_bound(in);
	struct req *r;
	int kind, idx, rc;

	/* An entry's body (its batch header and records) is one message to
	 * the broker's limit, which one record alone must fit. */
	if (in->value_len > p->cfg.max_message || esize +
	    KLOG_BATCH_BODY_HEADER > p->cfg.max_message ||
	    in->key_len > INT32_MAX || in->header_count > INT32_MAX)
		return -KLOG_ETOOBIG;
	kind = in->timestamp != KLOG_NO_TIMESTAMP ||
	    p->pid != KLOG_NO_PRODUCER ? PRODUCER_STAMPED : PRODUCER_RECORDS;
	do {
		idx = pick(p, p->cfg.unkeyed_partitions ? NULL : in->key,
		    in->key_len);
		if (in->timestamp == KLOG_NO_TIMESTAMP &&
		    p->pid != KLOG_NO_PRODUCER) {
			stamped = *in;
			stamped.timestamp = batch_time(p->open[idx]);
			rec = &stamped;
		}
		r = open_batch(p, idx, kind, esize, &rc);
	} while (r == NULL && rc == 0);
	if (r == NULL)
		return rc;
	if (r->records == 0)
		klog_batch_begin(&r->bb, &r->buf, rec->timestamp, p->pid,
		    p->epoch, -1);  /* the sequence is taken at the seal */
	klog_batch_add(&r->bb, &r->buf, rec);
	return added(p, r, idx, rec->value_len);
}

/* A record with nothing but a value stays a 9-byte-overhead plain
 * message, unless the codec is one only a magic-2 entry carries or a
 * batch of records is open where it goes (so -K's lines without a key do
 * not cut keyed ones into batches of a few).  Checked first: plain lines
 * cost what they did before records came. */
int
klog_producer_send_record(klog_producer_t *p, const klog_producer_rec_t *rec)
{
	const struct req *r;

	if (rec->key == NULL && rec->value != NULL && rec->header_count == 0 &&
	    rec->timestamp == KLOG_NO_TIMESTAMP &&
	    p->pid == KLOG_NO_PRODUCER &&
	    p->cfg.codec <= KLOG_CODEC_GZIP &&
	    ((r = p->open[pick(p, NULL, 0)]) == NULL ||
	    r->kind != PRODUCER_RECORDS))
		return klog_producer_send(p, rec->value, rec->value_len, NULL,
		    0);
	return send_in_entry(p, rec);
}

int
klog_producer_busy(const klog_producer_t *p)
{
	return p->queued >= (size_t)(2 * p->cfg.max_inflight * p->nlinks) ||
	    p->queued_bytes >= BUSY_BYTES;
}

int
klog_producer_done(const klog_producer_t *p)
{
	return p->queued == 0 && p->nopen == 0;
}

static int64_t
earliest(int64_t a, int64_t b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/* Give up on a broker that has not acknowledged for retry_for. */
static int
check_stalled(klog_producer_t *p, int64_t now, int64_t *next,
    klog_err_t *err)
{
	struct link *l;
	int64_t due;

	for (int i = 0; i < p->nlinks; i++) {
		l = &p->links[i];
		if (l->c == NULL || l->head == l->wi ||
		    p->cfg.acks == KLOG_ACKS_NONE)
			continue;
		due = l->q[l->head]->sent_ms + p->cfg.retry_for_ms;
		if (due <= now)
			return klog_err_set(err, -KLOG_ETIMEDOUT,
			    "%s: no acknowledgement for %lld ms",
			    klog_client_name(l->c), (long long)
			    p->cfg.retry_for_ms);
		*next = earliest(*next, due);
	}
	return 0;
}

/* poll's I/O, once a relocation (which can add links) is done. */
static int
poll_links(klog_producer_t *p, int fd, int timeout_ms, int64_t now,
    klog_err_t *err)
{
	struct pollfd pfd[p->nlinks + 2];
	int64_t next;
	struct link *l;
	int n = 0, rc, wait;

	seal_expired(p, now, &next);
	if (p->reloc_pending)
		next = earliest(next, p->reloc_at);
	for (int i = 0; i < p->nlinks; i++) {
		l = &p->links[i];
		if ((rc = link_service(p, l, now, err)) < 0)
			return rc;
		if (l->c == NULL && l->head < l->tail &&
		    l->addr.host[0] != '\0')
			next = earliest(next, l->retry_at);
	}
	if ((rc = check_stalled(p, now, &next, err)) < 0)
		return rc;
	/* With acks 0 the writes above may have finished everything. */
	if (fd < 0 && klog_producer_done(p))
		return 0;
	for (int i = 0; i < p->nlinks; i++) {
		l = &p->links[i];
		pfd[i].fd = l->c ? klog_client_fd(l->c) : -1;
		pfd[i].events = POLLIN;
		if (l->c && l->wi < l->tail &&
		    l->wi < l->head + (size_t)p->cfg.max_inflight)
			pfd[i].events |= POLLOUT;
		pfd[i].revents = 0;
	}
	pfd[p->nlinks].fd = fd;
	pfd[p->nlinks].events = POLLIN;
	pfd[p->nlinks].revents = 0;
	pfd[p->nlinks + 1].fd = p->wake_fd;
	pfd[p->nlinks + 1].events = POLLIN;
	pfd[p->nlinks + 1].revents = 0;
	if (timeout_ms >= 0)
		next = earliest(next, now + timeout_ms);
	wait = next < 0 ? -1 : next <= now ? 0 :
	    (int)(next - now > 60000 ? 60000 : next - now);
	if ((n = poll(pfd, (nfds_t)p->nlinks + 2, wait)) < 0) {
		if (errno == EINTR)
			return 0;
		return klog_err_set(err, -KLOG_EIO, "poll: %s",
		    strerror(errno));
	}
	now = klog_clock_mono_ms();
	for (int i = 0; i < p->nlinks && n > 0; i++) {
		l = &p->links[i];
		if (l->c == NULL || pfd[i].revents == 0)
			continue;
		if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR) &&
		    (rc = link_read(p, l, now, err)) < 0)
			return rc;
		link_write(p, l, now);
	}
	return (fd >= 0 && pfd[p->nlinks].revents != 0 ? KLOG_PRODUCER_INPUT :
	    0) | (p->wake_fd >= 0 && pfd[p->nlinks + 1].revents != 0 ?
	    KLOG_PRODUCER_WOKEN : 0);
}

int
klog_producer_poll(klog_producer_t *p, int fd, int timeout_ms,
    klog_err_t *err)
{
	int64_t now = klog_clock_mono_ms();
	int rc;

	if (p->reloc_pending && now >= p->reloc_at &&
	    (rc = producer_relocate(p, now, err)) < 0)
		return rc;
	return poll_links(p, fd, timeout_ms, now, err);
}

int
klog_producer_drain(klog_producer_t *p, klog_err_t *err)
{
	int rc = 0, wake = p->wake_fd;

	p->wake_fd = -1;
	klog_producer_flush(p);
	while (!klog_producer_done(p))
		if ((rc = klog_producer_poll(p, -1, -1, err)) < 0)
			break;
	p->wake_fd = wake;
	return rc < 0 ? rc : 0;
}

void
klog_producer_wake_on(klog_producer_t *p, int fd)
{
	p->wake_fd = fd;
}

void
klog_producer_stats(const klog_producer_t *p, klog_producer_stats_t *st)
{
	*st = p->st;
}

const char *
klog_producer_error(const klog_producer_t *p)
{
	return p->error[0] ? p->error : NULL;
}

int
klog_producer_partitions(const klog_producer_t *p)
{
	return p->npart;
}

int
klog_producer_id(const klog_producer_t *p, int64_t *pid, int16_t *epoch)
{
	*pid = p->pid;
	*epoch = p->epoch;
	return p->pid != KLOG_NO_PRODUCER;
}

int
klog_producer_open(klog_discovery_t *d, const klog_producer_config_t *cfg,
    klog_producer_t **out, klog_err_t *err)
{
	klog_producer_t *p;
	int rc;

	if (cfg->topic == NULL || strlen(cfg->topic) > KLOG_TOPIC_MAX ||
	    cfg->batch_records == 0 || cfg->max_inflight <= 0)
		return klog_err_set(err, -KLOG_EINVAL, "bad producer config");
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	p->cfg = *cfg;
	p->d = d;
	p->wake_fd = -1;
	p->limbo = -1;
	p->pid = KLOG_NO_PRODUCER;
	p->epoch = -1;
	p->reloc_backoff_ms = KLOG_BACKOFF_MIN_MS;
	snprintf(p->topic, sizeof(p->topic), "%s", cfg->topic);
	p->cfg.topic = p->topic;
	p->set_cap = cfg->batch_bytes;
	/* A gzip wrapper is one message: keep it under the size limit. */
	if (cfg->codec == KLOG_CODEC_GZIP && p->set_cap > cfg->max_message)
		p->set_cap = cfg->max_message;
	/* So is a magic-2 entry (its body is its payload). */
	p->records_cap = cfg->batch_bytes < cfg->max_message ?
	    cfg->batch_bytes : cfg->max_message;
	if ((rc = klog_discovery_partitions(d, p->topic, err)) == 0)
		rc = producer_create_topic(p, err);
	if (rc < 0)
		goto fail;
	if (cfg->partition >= rc) {
		rc = klog_err_set(err, -KLOG_ENOPARTITION,
		    "topic \"%s\" has %d partition%s, no partition %d",
		    p->topic, rc, rc == 1 ? "" : "s", cfg->partition);
		goto fail;
	}
	if ((rc = producer_map_leaders(p, rc, err)) < 0 ||
	    (cfg->idempotent &&
	    (rc = producer_init_id(p, err)) < 0))
		goto fail;
	p->sticky = (int)(klog_clock_mono_ms() % p->npart);
	producer_skip_limbo(p);
	*out = p;
	return 0;
fail:
	klog_producer_close(p);
	return rc;
}

void
klog_producer_close(klog_producer_t *p)
{
	struct link *l;

	if (p == NULL)
		return;
	for (int i = 0; p->open && i < p->npart; i++)
		producer_req_free(p->open[i]);
	for (int i = 0; i < p->nlinks; i++) {
		l = &p->links[i];
		klog_client_close(l->c);
		for (size_t k = l->head; k < l->tail; k++)
			producer_req_free(l->q[k]);
		free(l->q);
	}
	for (size_t i = 0; i < p->npool; i++)
		producer_req_free(p->pool[i]);
	klog_buf_free(&p->head);
	free(p->part_num);
	free(p->part_link);
	free(p->open);
	free(p->fail_since);
	free(p->seq);
	free(p->links);
	free(p);
}
