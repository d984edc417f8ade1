/*
 * Where a producer's partitions go: the topic created on first use, each
 * partition located (a broker, or a leader in a cluster), and requests
 * moved when the map changes or a leader is lost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/clock.h"
#include "producer_impl.h"

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
int
producer_create_topic(klog_producer_t *p, klog_err_t *err)
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
	l->backoff_ms = KLOG_BACKOFF_MIN_MS;
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
	l->backoff_ms = KLOG_BACKOFF_MIN_MS;
	for (size_t k = l->head; k < l->tail; k++) {
		r = l->q[k];
		l->q[k] = NULL;
		idx = p->cfg.partition >= 0 ? p->cfg.partition :
		    r->index % p->npart;
		if (rc == 0 && (nr = producer_req_new(p, idx, now)) != NULL) {
			klog_buf_put(&nr->buf, r->buf.data + r->hdr_len,
			    r->buf.len - r->hdr_len);
			nr->records = r->records;
			nr->first_seq = r->first_seq;
			nr->payload_bytes = r->payload_bytes;
			nr->sent = r->sent;  /* counts as resent once written */
			rc = producer_enqueue(p, nr);
		} else if (rc == 0) {
			rc = -KLOG_ENOMEM;
		}
		if (rc < 0)
			producer_tell_done(p, r, KLOG_WIRE_NONE, 0, -1);
		p->queued--;
		p->queued_bytes -= r->buf.len;
		producer_req_free(r);
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
		if (dst == l || (rc = producer_link_push(dst, r)) < 0)
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
	producer_skip_limbo(p);
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

/*
 * Do the relocation asked for (a retryable answer or a lost leader):
 * forget what the discovery knows, map the partitions again and move
 * what waits.  Gives up once a partition has been refused, or the
 * relocation has failed, for retry_for: with the last cause's code.
 */
int
producer_relocate(klog_producer_t *p, int64_t now, klog_err_t *err)
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
	if (p->reloc_backoff_ms < KLOG_BACKOFF_MAX_MS)
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
	producer_want_relocate(p, rc, e.msg);
	return 0;
}

/*
 * The first map: a replicated partition without a leader yet (an election
 * under way) waits in limbo while the others are written to, and is asked
 * for again at each poll that is due, for up to retry_for.
 */
int
producer_map_leaders(klog_producer_t *p, int n, klog_err_t *err)
{
	int rc = map_partitions(p, n, err);

	if (rc != -KLOG_ENOTLEADER)
		return rc;
	producer_want_relocate(p, rc, err->msg);
	p->reloc_fail_since = klog_clock_mono_ms();
	return 0;
}

/*
 * The producer id and epoch from a broker of the topic (INIT_PRODUCER;
 * ids are the cluster's, any broker grants them).  With idempotence on,
 * a broker can have at most IDEM_INFLIGHT batches of a partition that it
 * has not acknowledged: it keeps the last five of each producer to know
 * a retry from a new batch, as Kafka's.
 */
#define IDEM_INFLIGHT 5

int
producer_init_id(klog_producer_t *p, klog_err_t *err)
{
	klog_producer_id_t id = { -1, -1 };
	klog_client_t *c;
	int16_t error;
	int i, rc;

	for (i = 0; i < p->nlinks && i == p->limbo; i++)
		;
	if (i == p->nlinks)
		return klog_err_set(err, -KLOG_ENOTLEADER, "topic \"%s\": no "
		    "broker to ask for a producer id", p->topic);
	if ((rc = klog_client_open(&p->links[i].addr,
	    p->cfg.connect_timeout_ms, &c, err)) < 0)
		return rc;
	rc = klog_client_init_producer(c, p->cfg.connect_timeout_ms, &id,
	    &error, err);
	if (rc == 0 && error == KLOG_WIRE_NONE) {
		p->pid = id.producer_id;
		p->epoch = id.epoch;
		if (p->cfg.max_inflight > IDEM_INFLIGHT)
			p->cfg.max_inflight = IDEM_INFLIGHT;
	} else if (rc == 0 && error == KLOG_WIRE_UNKNOWN_API) {
		rc = klog_err_set(err, -KLOG_EUNSUPPORTED, "%s: no "
		    "idempotence: a broker older than INIT_PRODUCER",
		    klog_client_name(c));
	} else if (rc == 0) {
		rc = klog_err_set(err, klog_wire_error_to_klog(error), "%s: "
		    "INIT_PRODUCER: %s", klog_client_name(c),
		    klog_wire_error_text(error));
	}
	klog_client_close(c);
	return rc;
}
