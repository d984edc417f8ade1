#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/clock.h"
#include "klog/format.h"
#include "klog/names.h"
#include "klog/producer.h"

#define MAX_IOV 64
#define POOL_MAX 16
#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 2000
#define BUSY_BYTES (64u << 20)
#define GZIP_LEVEL 6

/* One batch: a whole PRODUCE frame for one partition. */
struct req {
	klog_buf_t buf;
	size_t hdr_len;          /* bytes before the message set */
	int index;               /* partition index */
	uint32_t records;
	uint64_t first_seq;      /* klog_producer_send() number of its first */
	uint64_t payload_bytes;
	int32_t id;
	int64_t born_ms;         /* for linger */
	int64_t sent_ms;         /* last time it was completely written */
	int sent;                /* written at least once */
};

/* The connection to one broker and the requests queued for it. */
struct link {
	klog_client_addr_t addr;
	klog_client_t *c;        /* NULL while not connected */
	struct req **q;          /* q[head..tail): oldest first */
	size_t head, tail, cap;
	size_t wi;               /* next request to write */
	size_t woff;             /* bytes of q[wi] already written */
	int64_t down_since;      /* first failure of this outage, or 0 */
	int64_t retry_at;
	int backoff_ms;
	int connected_once;
	char why[512];           /* the last connection error */
};

struct klog_producer {
	klog_producer_config_t cfg;
	klog_discovery_t *d;     /* borrowed */
	char topic[KLOG_TOPIC_MAX + 1];
	int npart;
	int32_t *part_num;       /* broker-side partition of each index */
	int *part_link;          /* link of each index */
	struct req **open;       /* open batch of each index, or NULL */
	size_t nopen;
	int sticky;              /* round robin: the current partition */
	struct link *links;
	int nlinks, links_cap;
	int wake_fd;             /* -1, or also waited for by poll */
	size_t set_cap;          /* message-set bytes per batch */
	int32_t next_id;
	size_t queued;           /* sealed requests not yet done */
	size_t queued_bytes;
	struct req *pool[POOL_MAX];
	size_t npool;
	klog_producer_stats_t st;
	char error[512];
	/*
	 * Following leaders (replicated topics; discovery.h): a retryable
	 * answer or a lost leader asks for a relocation, done by poll when
	 * due, with backoff; fail_since[i] is when index i was first refused
	 * with a retryable error since its last acknowledgement.
	 */
	int replicated;          /* the topic's partitions have leaders */
	int limbo;               /* the link of partitions without a leader
	                            (no address, never connected), or -1 */
	int64_t *fail_since;     /* per index; 0: not failing */
	int reloc_pending;
	int64_t reloc_at;        /* not before */
	int reloc_backoff_ms;
	int64_t reloc_fail_since;/* relocations failing since, or 0 */
	int reloc_code;          /* the last cause, for giving up */
	char reloc_why[512];
};

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
	cfg->max_inflight = 64;
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

/* ---- requests ---- */

static void
req_free(struct req *r)
{
	if (r == NULL)
		return;
	klog_buf_free(&r->buf);
	free(r);
}

/* Keep a few frames for reuse: a fresh 1 MiB buffer costs page faults. */
static void
req_recycle(klog_producer_t *p, struct req *r)
{
	if (p->npool < POOL_MAX && r->buf.cap <= 4 * p->set_cap) {
		p->pool[p->npool++] = r;
		return;
	}
	req_free(r);
}

static struct req *
req_new(klog_producer_t *p, int index, int64_t now)
{
	klog_produce_part_t part = {
		.topic = { p->topic, (uint16_t)strlen(p->topic) },
		.partition = p->part_num[index],
	};
	klog_produce_req_t preq = {
		.acks = (int16_t)p->cfg.acks, .timeout_ms = p->cfg.timeout_ms,
		.count = 1, .parts = &part,
	};
	struct req *r;

	if (p->npool > 0)
		r = p->pool[--p->npool];
	else if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	klog_buf_reset(&r->buf);
	if (klog_proto_encode_produce(&r->buf, 0, &preq) < 0 ||
	    r->buf.failed) {
		req_free(r);
		return NULL;
	}
	r->hdr_len = r->buf.len;
	r->index = index;
	r->records = 0;
	r->payload_bytes = 0;
	r->born_ms = now;
	r->sent = 0;
	return r;
}

/* Replace an uncompressed set by its gzip wrapper, if that fits. */
static void
req_compress(klog_producer_t *p, struct req *r)
{
	uint8_t *w = NULL;
	size_t wlen = 0;

	if (klog_gzip_wrap(r->buf.data + r->hdr_len, r->buf.len - r->hdr_len,
	    GZIP_LEVEL, &w, &wlen) == 0 && wlen - KLOG_LENGTH_SIZE -
	    KLOG_MAGIC1_HEADER <= p->cfg.max_message) {
		r->buf.len = r->hdr_len;
		klog_buf_put(&r->buf, w, wlen);
	}
	free(w);
}

/* ---- links ---- */

static int
link_push(struct link *l, struct req *r)
{
	struct req **q;
	size_t ncap;

	if (l->tail == l->cap && l->head > 0) {
		memmove(l->q, l->q + l->head, (l->tail - l->head) * sizeof(*q));
		l->tail -= l->head;
		l->wi -= l->head;
		l->head = 0;
	}
	if (l->tail == l->cap) {
		ncap = l->cap ? l->cap * 2 : 64;
		if ((q = realloc(l->q, ncap * sizeof(*q))) == NULL)
			return -KLOG_ENOMEM;
		l->q = q;
		l->cap = ncap;
	}
	l->q[l->tail++] = r;
	return 0;
}

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

/* Relocate the partitions at the next poll that is due (see poll). */
static void
want_relocate(klog_producer_t *p, int code, const char *why)
{
	p->reloc_pending = 1;
	p->reloc_code = code;
	snprintf(p->reloc_why, sizeof(p->reloc_why), "%s", why);
}

/* A lost connection: for a replicated topic the leader may have gone, so
 * where its partitions are is asked again too. */
static void
link_lost(klog_producer_t *p, struct link *l, int64_t now,
    const klog_err_t *why)
{
	link_down(l, now, why);
	if (p->replicated)
		want_relocate(p, why->code ? why->code : -KLOG_ECONN, l->why);
}

/* The answers a producer waits out: the partition has another leader, or
 * too few in-sync replicas right now (as Kafka's producer retries them). */
static int
retryable(int16_t error)
{
	return error == KLOG_WIRE_NOT_LEADER ||
	    error == KLOG_WIRE_NOT_ENOUGH_REPLICAS ||
	    error == KLOG_WIRE_NOT_ENOUGH_REPLICAS_AFTER_APPEND;
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
	want_relocate(p, e.code, e.msg);
}

static void
tell_done(klog_producer_t *p, const struct req *r, int16_t error, int ok,
    int64_t offset)
{
	klog_producer_done_t d = { r->first_seq, r->records, ok, error,
	    r->index, offset, r->buf.data + r->hdr_len,
	    r->buf.len - r->hdr_len };

	if (p->cfg.done != NULL && r->records > 0)
		p->cfg.done(p->cfg.arg, &d);
}

/* The oldest request of l is done: acknowledged (at offset), refused or
 * written. */
static void
complete(klog_producer_t *p, struct link *l, int16_t error, int64_t offset)
{
	struct req *r = l->q[l->head++];

	tell_done(p, r, error, error == KLOG_WIRE_NONE, offset);
	if (error != KLOG_WIRE_NONE) {
		p->st.failed += r->records;
		if (error == KLOG_WIRE_MESSAGE_TOO_LARGE)
			p->st.too_large += r->records;
		if (p->error[0] == '\0')
			snprintf(p->error, sizeof(p->error),
			    "topic \"%s\" partition %d: %s", p->topic,
			    r->index, klog_wire_error_name(error));
	} else {
		/* A request queued before the count shrank (0.7 refresh)
		 * can carry an index past it. */
		if (r->index < p->npart)
			p->fail_since[r->index] = 0;
		p->reloc_backoff_ms = BACKOFF_MIN_MS;
		p->st.acked += r->records;
		p->st.bytes += r->payload_bytes;
		p->st.requests++;
	}
	p->queued--;
	p->queued_bytes -= r->buf.len;
	req_recycle(p, r);
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
	klog_err_t e = { 0 };
	int n;

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
		if (retryable(h->error)) {
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
	if (res[0].error != KLOG_WIRE_NONE && retryable(res[0].error)) {
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
	klog_err_t e = { 0 };
	size_t len;
	int rc, rrc;

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
	klog_err_t e = { 0 };

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
			if (now - l->down_since >= p->cfg.retry_for_ms)
				return klog_err_set(err, e.code,
				    "%s; gave up after %lld ms", l->why,
				    (long long)(now - l->down_since));
			if (l->backoff_ms < BACKOFF_MAX_MS)
				l->backoff_ms *= 2;
			return 0;
		}
		if (l->connected_once)
			p->st.reconnects++;
		l->connected_once = 1;
		l->down_since = 0;
		l->backoff_ms = BACKOFF_MIN_MS;
		l->wi = l->head;
		l->woff = 0;
	}
	link_write(p, l, now);
	return 0;
}

/* ---- batches ---- */

/* Number a finished frame and queue it on its partition's link. */
static int
enqueue(klog_producer_t *p, struct req *r)
{
	struct link *l = &p->links[p->part_link[r->index]];

	if (r->buf.failed) {
		req_free(r);
		return -KLOG_ENOMEM;
	}
	if (p->next_id == INT32_MAX)
		p->next_id = 0;
	r->id = ++p->next_id;
	klog_buf_patch_i32(&r->buf, 0, (int32_t)(r->buf.len - 4));
	klog_buf_patch_i32(&r->buf, 8, r->id);
	klog_buf_patch_i32(&r->buf, r->hdr_len - 4,
	    (int32_t)(r->buf.len - r->hdr_len));
	if (link_push(l, r) < 0) {
		req_free(r);
		return -KLOG_ENOMEM;
	}
	p->queued++;
	p->queued_bytes += r->buf.len;
	return 0;
}

/* Without a key, skip partitions without a leader, as Kafka's partitioner
 * skips unavailable ones (unless none has one). */
static void
skip_limbo(klog_producer_t *p)
{
	for (int k = 0; p->limbo >= 0 && k < p->npart &&
	    p->part_link[p->sticky] == p->limbo; k++)
		p->sticky = (p->sticky + 1) % p->npart;
}

static int
seal(klog_producer_t *p, int index)
{
	struct req *r = p->open[index];

	p->open[index] = NULL;
	p->nopen--;
	if (p->cfg.codec == KLOG_CODEC_GZIP)
		req_compress(p, r);
	if (p->cfg.partition < 0 && index == p->sticky) {
		p->sticky = (p->sticky + 1) % p->npart;
		skip_limbo(p);
	}
	return enqueue(p, r);
}

void
klog_producer_flush(klog_producer_t *p)
{
	for (int i = 0; i < p->npart && p->nopen > 0; i++)
		if (p->open[i] != NULL)
			seal(p, i);
}

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
			seal(p, i);
		else if (*next < 0 || due < *next)
			*next = due;
	}
}

static int
pick(const klog_producer_t *p, const void *key, size_t keylen)
{
	if (p->cfg.partition >= 0)
		return p->cfg.partition;
	if (key != NULL)
		return (int)(klog_producer_hash(key, keylen) %
		    (uint32_t)p->npart);
	return p->sticky;
}

int
klog_producer_send(klog_producer_t *p, const void *payload, size_t len,
    const void *key, size_t keylen)
{
	size_t esize = klog_entry_size(len);
	struct req *r;
	int idx, rc;

	if (len > p->cfg.max_message)
		return -KLOG_ETOOBIG;
	for (;;) {
		idx = pick(p, key, keylen);
		r = p->open[idx];
		if (r == NULL || r->records == 0 ||
		    r->buf.len - r->hdr_len + esize <= p->set_cap)
			break;
		if ((rc = seal(p, idx)) < 0)
			return rc;
	}
	if (r == NULL) {
		if ((r = req_new(p, idx, klog_clock_mono_ms())) == NULL)
			return -KLOG_ENOMEM;
		p->open[idx] = r;
		p->nopen++;
	}
	if (klog_buf_reserve(&r->buf, esize) < 0)
		return -KLOG_ENOMEM;
	r->buf.len += klog_entry_encode(r->buf.data + r->buf.len, payload, len);
	p->st.records++;
	if (r->records++ == 0)
		r->first_seq = p->st.records;
	r->payload_bytes += len;
	if (r->records >= p->cfg.batch_records)
		return seal(p, idx);
	return 0;
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

static int relocate(klog_producer_t *p, int64_t now, klog_err_t *err);

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
	    (rc = relocate(p, now, err)) < 0)
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

/* ---- opening ---- */

/* An empty PRODUCE to one broker: it creates the topic if it may. */
static int
touch_topic(klog_producer_t *p, const klog_discovery_part_t *where,
    klog_err_t *err)
{
	klog_produce_part_t part = {
		.topic = { p->topic, (uint16_t)strlen(p->topic) },
		.partition = where->partition,
	};
	klog_produce_req_t preq = { .acks = KLOG_ACKS_LEADER,
	    .timeout_ms = p->cfg.timeout_ms, .count = 1, .parts = &part };
	klog_client_t *c = NULL;
	const uint8_t *body;
	size_t len;
	int16_t error;
	int32_t id;
	int rc;

	if ((rc = klog_client_open(&where->addr, p->cfg.connect_timeout_ms,
	    &c, err)) < 0)
		return rc;
	id = klog_client_next_id(c);
	if ((rc = klog_proto_encode_produce(klog_client_out(c), id, &preq)) ==
	    0)
		rc = klog_client_call(c, id, p->cfg.connect_timeout_ms, &error,
		    &body, &len, err);
	klog_client_close(c);
	return rc;
}

/* Create the topic with an empty PRODUCE to every place a new topic is
 * located (one broker standalone, each live broker in a cluster), then
 * ask for its partition count again. */
static int
create_topic(klog_producer_t *p, klog_err_t *err)
{
	klog_discovery_part_t where;
	int i, rc;

	for (i = 0; ; i++) {
		rc = klog_discovery_locate(p->d, p->topic, i, &where, err);
		if (rc == -KLOG_ENOPARTITION && i > 0)
			break;
		if (rc < 0 || (rc = touch_topic(p, &where, err)) < 0)
			return rc;
	}
	klog_discovery_invalidate(p->d);
	if ((rc = klog_discovery_partitions(p->d, p->topic, err)) == 0)
		rc = klog_err_set(err, -KLOG_ENOTOPIC,
		    "topic \"%s\" does not exist and the broker did not "
		    "create it", p->topic);
	return rc;
}

static int
find_link(klog_producer_t *p, const klog_client_addr_t *a)
{
	struct link *l;

	for (int i = 0; i < p->nlinks; i++)
		if (strcmp(p->links[i].addr.host, a->host) == 0 &&
		    strcmp(p->links[i].addr.port, a->port) == 0)
			return i;
	l = &p->links[p->nlinks];
	memset(l, 0, sizeof(*l));
	l->addr = *a;
	l->backoff_ms = BACKOFF_MIN_MS;
	return p->nlinks++;
}

/*
 * Locate n partitions into new arrays; on success the producer's are
 * replaced (open batches must have been sealed).  Links are kept (by
 * address) and added; a link no index uses any more stays, idle.
 */
static int
map_partitions(klog_producer_t *p, int n, klog_err_t *err)
{
	klog_discovery_part_t where;
	int32_t *num = calloc((size_t)n, sizeof(*num));
	int *link = calloc((size_t)n, sizeof(*link));
	struct req **open = calloc((size_t)n, sizeof(*open));
	int64_t *fail = calloc((size_t)n, sizeof(*fail));
	struct link *links;
	int rc = 0, nlinks = p->nlinks, leaderless = 0, replicated = 0;

	if (num == NULL || link == NULL || open == NULL || fail == NULL) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto out;
	}
	if (p->nlinks + n + 1 > p->links_cap) {
		if ((links = realloc(p->links, (size_t)(p->nlinks + n + 1) *
		    sizeof(*links))) == NULL) {
			rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
			goto out;
		}
		p->links = links;
		p->links_cap = p->nlinks + n + 1;
	}
	for (int i = 0; i < n; i++) {
		klog_err_t e = { 0 };

		rc = klog_discovery_locate(p->d, p->topic, i, &where, &e);
		/* A partition between leaders (only a replicated one is)
		 * waits in limbo; the others go on (the error is returned,
		 * so the caller asks again).  The error named is the first
		 * one of a partition the producer writes to. */
		if (rc < 0 && (rc != -KLOG_ENOTLEADER || (leaderless == 0 &&
		    (p->cfg.partition < 0 || p->cfg.partition == i))))
			*err = e;
		if (rc == -KLOG_ENOTLEADER) {
			if (p->limbo < 0) {
				memset(&where, 0, sizeof(where));
				p->limbo = find_link(p, &where.addr);
			}
			num[i] = i;
			link[i] = p->limbo;
			if (p->cfg.partition < 0 || p->cfg.partition == i)
				leaderless = rc;
			replicated = 1;
			continue;
		}
		if (rc < 0) {
			p->nlinks = nlinks;  /* forget the links just added */
			if (p->limbo >= nlinks)
				p->limbo = -1;
			goto out;
		}
		num[i] = where.partition;
		link[i] = find_link(p, &where.addr);
		replicated |= where.replicated;
	}
	if (p->fail_since != NULL && n == p->npart)
		memcpy(fail, p->fail_since, (size_t)n * sizeof(*fail));
	free(p->part_num);
	free(p->part_link);
	free(p->open);
	free(p->fail_since);
	p->part_num = num;
	p->part_link = link;
	p->open = open;
	p->fail_since = fail;
	p->npart = n;
	p->replicated |= replicated;
	num = NULL;
	link = NULL;
	open = NULL;
	fail = NULL;
	if (leaderless < 0)
		rc = leaderless;
out:
	free(num);
	free(link);
	free(open);
	free(fail);
	return rc;
}

static int
link_used(const klog_producer_t *p, int li)
{
	for (int i = 0; i < p->npart; i++)
		if (p->part_link[i] == li)
			return 1;
	return 0;
}

/* Take the requests of a link no partition maps to any more and queue
 * them again for partitions that exist: at-least-once, like a resend. */
static int
move_requests(klog_producer_t *p, struct link *l, int64_t now)
{
	struct req *r, *nr;
	int idx, rc = 0;

	klog_client_close(l->c);
	l->c = NULL;
	l->down_since = 0;
	l->backoff_ms = BACKOFF_MIN_MS;
	for (size_t k = l->head; k < l->tail; k++) {
		r = l->q[k];
		l->q[k] = NULL;
		idx = p->cfg.partition >= 0 ? p->cfg.partition :
		    r->index % p->npart;
		if (rc == 0 && (nr = req_new(p, idx, now)) != NULL) {
			klog_buf_put(&nr->buf, r->buf.data + r->hdr_len,
			    r->buf.len - r->hdr_len);
			nr->records = r->records;
			nr->first_seq = r->first_seq;
			nr->payload_bytes = r->payload_bytes;
			nr->sent = r->sent;  /* counts as resent once written */
			rc = enqueue(p, nr);
		} else if (rc == 0) {
			rc = -KLOG_ENOMEM;
		}
		if (rc < 0)
			tell_done(p, r, KLOG_WIRE_NONE, 0, -1);
		p->queued--;
		p->queued_bytes -= r->buf.len;
		req_free(r);
	}
	l->head = l->tail = l->wi = 0;
	l->woff = 0;
	return rc;
}

/*
 * A replicated partition's requests queued on a link other than its
 * leader's now move there, in order, behind what that link holds (nothing
 * of the same partition: it was not mapped there).  The old link's
 * connection is dropped first, since answers to requests that left could
 * arrive on it; its remaining requests are sent again (duplicates allowed).
 * The frames stay as they are: a replicated partition's number is its index
 * wherever it leads.
 */
static int
rehome(klog_producer_t *p, int li, int64_t now)
{
	struct link *l = &p->links[li], *dst;
	struct req *r;
	size_t k, keep;
	int rc = 0;

	for (k = l->head; k < l->tail; k++)
		if (l->q[k]->index < p->npart &&
		    p->part_link[l->q[k]->index] != li)
			break;
	if (k == l->tail)
		return 0;
	klog_client_close(l->c);
	l->c = NULL;
	l->retry_at = now;
	l->wi = l->head;
	l->woff = 0;
	keep = l->head;
	for (k = l->head; k < l->tail; k++) {
		r = l->q[k];
		dst = r->index < p->npart ? &p->links[p->part_link[r->index]] :
		    l;
		/* Out of memory: it stays, sent where it was (and refused
		 * again) rather than lost. */
		if (dst == l || (rc = link_push(dst, r)) < 0)
			l->q[keep++] = r;
	}
	l->tail = keep;
	return rc;
}

int
klog_producer_refresh(klog_producer_t *p, klog_err_t *err)
{
	int64_t now = klog_clock_mono_ms();
	int n, rc, mrc;

	if ((n = klog_discovery_partitions(p->d, p->topic, err)) < 0)
		return n;
	if (n == 0)
		return klog_err_set(err, -KLOG_ENOTOPIC, "topic \"%s\": no live "
		    "broker holds it now", p->topic);
	if (p->cfg.partition >= n)
		return klog_err_set(err, -KLOG_ENOPARTITION, "topic \"%s\" "
		    "has %d partition%s now, no partition %d", p->topic, n,
		    n == 1 ? "" : "s", p->cfg.partition);
	/* Open batches are encoded for the partitions they were opened on. */
	klog_producer_flush(p);
	if ((mrc = map_partitions(p, n, err)) < 0 && mrc != -KLOG_ENOTLEADER)
		return mrc;
	p->sticky %= p->npart;
	skip_limbo(p);
	for (int i = 0; i < p->nlinks; i++)
		if (!link_used(p, i) && (p->links[i].head < p->links[i].tail ||
		    p->links[i].c != NULL) &&
		    (rc = move_requests(p, &p->links[i], now)) < 0)
			return klog_err_set(err, rc, "out of memory");
	for (int i = 0; p->replicated && i < p->nlinks; i++)
		if ((rc = rehome(p, i, now)) < 0)
			return klog_err_set(err, rc, "out of memory");
	return mrc;
}

/* Errors of asking the discovery that a later question may not have. */
static int
relocation_retryable(int rc)
{
	return rc == -KLOG_ENOTLEADER || rc == -KLOG_ECONN ||
	    rc == -KLOG_ETIMEDOUT || rc == -KLOG_EZK ||
	    rc == -KLOG_ENOTOPIC;
}

/*
 * Do the relocation asked for (a retryable answer or a lost leader):
 * forget what the discovery knows, map the partitions again and move
 * what waits.  Gives up once a partition has been refused, or the
 * relocation has failed, for retry_for: with the last cause's code.
 */
/* Requests wait on a link that is down, or in limbo. */
static int
stuck(const klog_producer_t *p)
{
	for (int i = 0; i < p->nlinks; i++)
		if (p->links[i].c == NULL &&
		    p->links[i].head < p->links[i].tail)
			return 1;
	return 0;
}

static int
relocate(klog_producer_t *p, int64_t now, klog_err_t *err)
{
	klog_err_t e = { 0 };
	int rc;

	/* Failing relocations count only while something waits on them: a
	 * partition without a leader that nothing is sent to harms no
	 * one. */
	if (p->reloc_fail_since != 0 && !stuck(p))
		p->reloc_fail_since = now;
	for (int i = 0; i < p->npart; i++)
		if (p->fail_since[i] != 0 &&
		    now - p->fail_since[i] >= p->cfg.retry_for_ms)
			return klog_err_set(err, p->reloc_code, "%s; gave up "
			    "after %lld ms", p->reloc_why,
			    (long long)(now - p->fail_since[i]));
	if (p->reloc_fail_since != 0 &&
	    now - p->reloc_fail_since >= p->cfg.retry_for_ms)
		return klog_err_set(err, p->reloc_code, "%s; gave up after "
		    "%lld ms", p->reloc_why,
		    (long long)(now - p->reloc_fail_since));
	p->reloc_at = now + p->reloc_backoff_ms;
	if (p->reloc_backoff_ms < BACKOFF_MAX_MS)
		p->reloc_backoff_ms *= 2;
	klog_discovery_invalidate(p->d);
	rc = klog_producer_refresh(p, &e);
	if (rc == 0) {
		p->reloc_pending = 0;
		p->reloc_fail_since = 0;
		return 0;
	}
	if (!relocation_retryable(rc))
		return klog_err_set(err, rc, "%s", e.msg);
	if (p->reloc_fail_since == 0)
		p->reloc_fail_since = now;
	want_relocate(p, rc, e.msg);
	return 0;
}

/*
 * The first map: a replicated partition without a leader yet (an election
 * under way) waits in limbo while the others are written to, and is asked
 * for again at each poll that is due, for up to retry_for.
 */
static int
map_leaders(klog_producer_t *p, int n, klog_err_t *err)
{
	int rc = map_partitions(p, n, err);

	if (rc != -KLOG_ENOTLEADER)
		return rc;
	want_relocate(p, rc, err->msg);
	p->reloc_fail_since = klog_clock_mono_ms();
	return 0;
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
	p->reloc_backoff_ms = BACKOFF_MIN_MS;
	snprintf(p->topic, sizeof(p->topic), "%s", cfg->topic);
	p->cfg.topic = p->topic;
	p->set_cap = cfg->batch_bytes;
	/* A gzip wrapper is one message: keep it under the size limit. */
	if (cfg->codec == KLOG_CODEC_GZIP && p->set_cap > cfg->max_message)
		p->set_cap = cfg->max_message;
	if ((rc = klog_discovery_partitions(d, p->topic, err)) == 0)
		rc = create_topic(p, err);
	if (rc < 0)
		goto fail;
	if (cfg->partition >= rc) {
		rc = klog_err_set(err, -KLOG_ENOPARTITION,
		    "topic \"%s\" has %d partition%s, no partition %d",
		    p->topic, rc, rc == 1 ? "" : "s", cfg->partition);
		goto fail;
	}
	if ((rc = map_leaders(p, rc, err)) < 0)
		goto fail;
	p->sticky = (int)(klog_clock_mono_ms() % p->npart);
	skip_limbo(p);
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
		req_free(p->open[i]);
	for (int i = 0; i < p->nlinks; i++) {
		l = &p->links[i];
		klog_client_close(l->c);
		for (size_t k = l->head; k < l->tail; k++)
			req_free(l->q[k]);
		free(l->q);
	}
	for (size_t i = 0; i < p->npool; i++)
		req_free(p->pool[i]);
	free(p->part_num);
	free(p->part_link);
	free(p->open);
	free(p->fail_since);
	free(p->links);
	free(p);
}
