#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/clock.h"
#include "klog/client/consumer.h"
#include "klog/storage/names.h"
#include "consumer_impl.h"

#define FETCH_BUDGET (16 << 20)   /* bytes asked per request, all parts */
#define FETCH_MIN (64 << 10)


void
klog_consumer_config_default(klog_consumer_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->start = KLOG_CONSUMER_END;
	cfg->reset = KLOG_CONSUMER_RESET_EARLIEST;
	cfg->fetch_bytes = 1 << 20;
	cfg->fetch_max_bytes = 64 << 20;
	cfg->max_wait_ms = 1000;
	cfg->min_bytes = 1;
	cfg->check_crc = 1;
	cfg->connect_timeout_ms = 5000;
	cfg->retry_for_ms = 30000;
}

/* ---- OFFSETS ---- */

/* One offset of partition index, asked of the broker the discovery names:
 * the connect and the answer each within timeout_ms. */
static int
ask_offset(klog_discovery_t *d, const char *topic, int32_t index,
    int64_t time, int timeout_ms, int64_t *offset, klog_err_t *err)
{
	klog_discovery_part_t where;
	klog_client_t *c;
	int rc;

	if ((rc = klog_discovery_locate(d, topic, index, &where, err)) < 0)
		return rc;
	if ((rc = klog_client_open(&where.addr, timeout_ms, &c, err)) < 0)
		return rc;
	rc = klog_client_query_offset(c, topic, where.partition, time,
	    timeout_ms, NULL, offset, err);
	klog_client_close(c);
	return rc;
}

struct lister {
	klog_discovery_t *d;
	const char *topic;          /* the one to list, or NULL */
	int timeout_ms;
	klog_consumer_list_fn fn;
	void *arg;
	size_t listed;              /* partitions handed to fn */
	int rc;                     /* why it stopped */
	klog_err_t *err;
};

static int
list_topic(void *arg, const char *topic, int partitions)
{
	struct lister *l = arg;
	int64_t lo, hi;

	if (l->topic != NULL && strcmp(topic, l->topic) != 0)
		return 0;
	for (int i = 0; i < partitions; i++) {
		if ((l->rc = ask_offset(l->d, topic, i, KLOG_OFFSET_EARLIEST,
		    l->timeout_ms, &lo, l->err)) < 0 ||
		    (l->rc = ask_offset(l->d, topic, i, KLOG_OFFSET_LATEST,
		    l->timeout_ms, &hi, l->err)) < 0)
			return 1;
		l->listed++;
		if (l->fn(l->arg, topic, i, lo, hi) != 0)
			return 1;
	}
	return 0;
}

int
klog_consumer_list(klog_discovery_t *d, const char *topic, int timeout_ms,
    klog_consumer_list_fn fn, void *arg, klog_err_t *err)
{
	struct lister l = { .d = d, .topic = topic, .timeout_ms = timeout_ms,
	    .fn = fn, .arg = arg, .err = err };
	int rc;

	if ((rc = klog_discovery_topics(d, list_topic, &l, err)) == 0)
		rc = l.rc;
	if (rc == 0 && topic != NULL && l.listed == 0)
		rc = klog_err_set(err, -KLOG_ENOTOPIC,
		    "topic \"%s\" does not exist", topic);
	return rc;
}

/* Queue a notice line, handed out as KLOG_CONSUMER_NOTICE; one that does
 * not fit is dropped (the reset it tells of happens all the same). */
void
consumer_add_notice(klog_consumer_t *c, const char *fmt, ...)
{
	size_t used = strlen(c->notice);
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && used + (size_t)n + 2 <= sizeof(c->notice))
		snprintf(c->notice + used, sizeof(c->notice) - used, "%s\n",
		    line);
}

/* ---- links ---- */

static void
link_down(struct clink *l, int64_t now, const char *why)
{
	klog_client_close(l->c);
	l->c = NULL;
	l->id = 0;
	l->broken = 0;
	if (l->down_since == 0)
		l->down_since = now;
	l->retry_at = now + l->backoff_ms;
	if (l->backoff_ms < KLOG_BACKOFF_MAX_MS)
		l->backoff_ms *= 2;
	snprintf(l->why, sizeof(l->why), "%s", why);
}

/* For a replicated topic: p is to be found again.  Its --retry-for runs
 * from the first loss no answer of its leader followed, so relocations
 * back to a broker that fails again count as one loss. */
static void
lose_part(klog_consumer_t *c, struct cpart *p, int64_t now)
{
	p->lost = 1;
	if (p->lost_since == 0)
		p->lost_since = now;
	c->reloc_pending = 1;
}

/* For a replicated topic: the partitions of link li are to be found
 * again (their leader may be elsewhere now). */
static void
lose_parts(klog_consumer_t *c, int li, int64_t now, int code, const char *why)
{
	int any = 0;

	for (size_t i = 0; i < c->nparts; i++)
		if (c->parts[i].link == li && !c->parts[i].done) {
			lose_part(c, &c->parts[i], now);
			any = 1;
		}
	if (!any)
		return;
	c->reloc_code = code;
	snprintf(c->reloc_why, sizeof(c->reloc_why), "%s", why);
}

static void
link_lost(klog_consumer_t *c, int li, int64_t now, const char *why)
{
	link_down(&c->links[li], now, why);
	if (c->replicated)
		lose_parts(c, li, now, -KLOG_ECONN, c->links[li].why);
}

/* Ask l's broker for the next data of every partition still to read. */
static void
send_fetch(klog_consumer_t *c, struct clink *l, int li, int64_t now)
{
	klog_fetch_req_t req = { .max_wait_ms = c->cfg.max_wait_ms,
	    .min_bytes = c->cfg.min_bytes, .parts = c->req };
	klog_err_t e = { 0 };
	struct cpart *p;
	int64_t max;

	for (size_t i = 0; i < c->nparts; i++) {
		p = &c->parts[i];
		if (p->link != li || p->done || p->lost)
			continue;
		max = p->fetch_bytes;
		/* With -e, never fetch past the end taken at open. */
		if (c->cfg.exit_at_end && p->end - p->fetch_offset < max)
			max = p->end - p->fetch_offset;
		p->asked = p->fetch_offset;
		c->req[req.count++] = (klog_fetch_part_t){
			{ c->topic, (uint16_t)strlen(c->topic) },
			p->partition, p->fetch_offset, (int32_t)max };
	}
	if (req.count == 0)
		return;
	l->id = klog_client_next_id(l->c);
	l->sent_ms = now;
	if (klog_proto_encode_fetch(klog_client_out(l->c), l->id, &req) < 0 ||
	    klog_client_write(l->c, &e) < 0)
		l->broken = 1;
}

static struct cpart *
find_part(klog_consumer_t *c, int li, int32_t partition)
{
	for (size_t i = 0; i < c->nparts; i++)
		if (c->parts[i].link == li &&
		    c->parts[i].partition == partition)
			return &c->parts[i];
	return NULL;
}

/* Bytes of complete entries at the start of set; *first gets the length
 * field of the entry after them (0 if fewer than 4 bytes remain). */
size_t
consumer_complete_bytes(const uint8_t *set, size_t len, uint32_t *first)
{
	size_t pos = 0;
	uint32_t n;

	*first = 0;
	while (len - pos >= KLOG_LENGTH_SIZE) {
		n = klog_be32(set + pos);
		if (n < KLOG_MAGIC0_HEADER || n > KLOG_MAX_ENTRY_LENGTH ||
		    (size_t)n > len - pos - KLOG_LENGTH_SIZE) {
			*first = n;
			break;
		}
		pos += KLOG_LENGTH_SIZE + n;
	}
	return pos;
}

static void
set_position(klog_consumer_t *c, struct cpart *p, int64_t offset)
{
	p->fetch_offset = offset;
	p->position = offset;
	if (c->cfg.exit_at_end && offset >= p->end)
		p->done = 1;
}

static int
part_error(klog_consumer_t *c, struct cpart *p, const klog_fetch_result_t *r,
    klog_err_t *err)
{
	int64_t to;

	switch (r->error) {
	case KLOG_WIRE_NOT_LEADER:
		/* The leader moved: find it, go on from the same offset. */
		lose_part(c, p, klog_clock_mono_ms());
		c->reloc_code = -KLOG_ENOTLEADER;
		snprintf(c->reloc_why, sizeof(c->reloc_why), "topic \"%s\" "
		    "partition %d: NOT_LEADER", c->topic, (int)p->index);
		return 0;
	case KLOG_WIRE_NOT_BOUNDARY:
		/* Asked at the damage before --skip-corrupt got past it. */
		if (p->skip_to > p->asked)
			return 0;
		return klog_err_set(err, -KLOG_ENOTBOUNDARY,
		    "topic \"%s\" partition %d: offset %lld is not a message "
		    "boundary", c->topic, (int)p->index,
		    (long long)p->asked);
	case KLOG_WIRE_OFFSET_OUT_OF_RANGE:
		if (c->cfg.reset == KLOG_CONSUMER_RESET_FAIL)
			return klog_err_set(err, -KLOG_ERANGE,
			    "topic \"%s\" partition %d: offset %lld is out of "
			    "range (the log holds %lld to %lld)", c->topic,
			    (int)p->index, (long long)p->asked,
			    (long long)r->log_start, (long long)r->log_end);
		to = c->cfg.reset == KLOG_CONSUMER_RESET_LATEST ?
		    r->log_end : r->log_start;
		consumer_add_notice(c,
		    "topic \"%s\" partition %d: offset %lld is out of range "
		    "(the log holds %lld to %lld); going on from %lld",
		    c->topic, (int)p->index, (long long)p->asked,
		    (long long)r->log_start, (long long)r->log_end,
		    (long long)to);
		set_position(c, p, to);
		return 0;
	case KLOG_WIRE_UNKNOWN_TOPIC:
		/* It was there when the read began: deleted since. */
		return klog_err_set(err, -KLOG_ENOTOPIC, "topic \"%s\" "
		    "partition %d: the topic no longer exists (deleted?)",
		    c->topic, (int)p->index);
	default:
		return klog_err_set(err, klog_wire_error_to_klog(r->error),
		    "topic \"%s\" partition %d: %s", c->topic, (int)p->index,
		    klog_wire_error_text(r->error));
	}
}

/* Move p past the complete entries of r; grow the fetch size if one entry
 * did not fit at all. */
static int
part_advance(klog_consumer_t *c, struct cpart *p, const klog_fetch_result_t *r,
    klog_err_t *err)
{
	uint32_t first;
	size_t done = consumer_complete_bytes(r->set, r->set_len, &first);
	uint64_t need = (uint64_t)first + KLOG_LENGTH_SIZE;

	p->fetch_offset = p->asked + (int64_t)done;
	/* Its own leader answered (another's says nothing): the loss is over. */
	if (p->lost_since != 0) {
		p->lost_since = 0;
		c->reloc_backoff_ms = KLOG_BACKOFF_MIN_MS;
	}
	if (c->cfg.exit_at_end && p->fetch_offset >= p->end)
		p->done = 1;
	if (done > 0 || first < KLOG_MAGIC0_HEADER || first >
	    KLOG_MAX_ENTRY_LENGTH || need <= (uint64_t)p->fetch_bytes)
		return 0;
	if (need > (uint64_t)c->cfg.fetch_max_bytes)
		return klog_err_set(err, -KLOG_ETOOBIG,
		    "topic \"%s\" partition %d: offset %lld: a %u-byte "
		    "message is over the fetch limit of %d bytes", c->topic,
		    (int)p->index, (long long)p->asked, first,
		    (int)c->cfg.fetch_max_bytes);
	while ((uint64_t)p->fetch_bytes < need)
		p->fetch_bytes = p->fetch_bytes > c->cfg.fetch_max_bytes / 2 ?
		    c->cfg.fetch_max_bytes : p->fetch_bytes * 2;
	return 0;
}

/* An answer from before where --skip-corrupt resynchronized (a fetch sent
 * before the damage was met): the bytes up to there are passed over. */
static void
skip_ahead(struct cpart *p, klog_fetch_result_t *r)
{
	int64_t d = p->skip_to - p->asked;

	if (d <= 0)
		return;
	if ((uint64_t)d > r->set_len)
		d = (int64_t)r->set_len;
	r->set += d;
	r->set_len -= (uint32_t)d;
	p->asked = p->skip_to;
}

/* A fetch response came in on link li: note it for handing out and send
 * the next fetch at once. */
static int
take_response(klog_consumer_t *c, int li, const klog_resp_header_t *h,
    const uint8_t *body, size_t len, int64_t now, klog_err_t *err)
{
	struct clink *l = &c->links[li];
	klog_fetch_result_t *r;
	struct cpart *p;
	uint32_t n = 0;
	int rc;

	if (h->correlation != l->id)
		return 0;
	l->id = 0;
	if (h->error != KLOG_WIRE_NONE)
		return klog_err_set(err, klog_wire_error_to_klog(h->error),
		    "%s: fetch: %s", klog_client_name(l->c),
		    klog_wire_error_name(h->error));
	if (klog_proto_decode_fetch_resp(body, len, c->res,
	    (uint32_t)c->nparts, &n) < 0)
		return klog_err_set(err, -KLOG_EPROTO,
		    "%s: malformed fetch response", klog_client_name(l->c));
	for (uint32_t i = 0; i < n; i++) {
		r = &c->res[i];
		if ((p = find_part(c, li, r->partition)) == NULL)
			return klog_err_set(err, -KLOG_EPROTO,
			    "%s: fetch response for partition %d, not asked",
			    klog_client_name(l->c), (int)r->partition);
		c->res_part[i] = p;
		if (r->error == KLOG_WIRE_NONE)
			skip_ahead(p, r);
		c->res_base[i] = p->asked;
		if (r->error != KLOG_WIRE_NONE)
			rc = part_error(c, p, r, err);
		else
			rc = part_advance(c, p, r, err);
		if (rc < 0)
			return rc;
	}
	c->nres = n;
	c->ri = 0;
	c->have_batch = 1;
	send_fetch(c, l, li, now);
	return 1;
}

int
consumer_all_done(const klog_consumer_t *c)
{
	for (size_t i = 0; i < c->nparts; i++)
		if (!c->parts[i].done)
			return 0;
	return 1;
}

static int
link_active(const klog_consumer_t *c, int li)
{
	for (size_t i = 0; i < c->nparts; i++)
		if (c->parts[i].link == li && !c->parts[i].done &&
		    !c->parts[i].lost)
			return 1;
	return 0;
}

/* Reconnect l if due; a fresh connection gets its fetch at once. */
static int
link_service(klog_consumer_t *c, int li, int64_t now, klog_err_t *err)
{
	struct clink *l = &c->links[li];
	klog_err_t e = { 0 };

	if (l->broken)
		link_lost(c, li, now, "write failed");
	if (l->c == NULL && now >= l->retry_at && link_active(c, li)) {
		if (klog_client_open(&l->addr, c->cfg.connect_timeout_ms,
		    &l->c, &e) < 0) {
			now = klog_clock_mono_ms();
			link_lost(c, li, now, e.msg);
			if (e.code == -KLOG_EAUTH ||  /* refused: no retry */
			    now - l->down_since >= c->cfg.retry_for_ms)
				return klog_err_set(err, e.code,
				    "%s; gave up after %lld ms", l->why,
				    (long long)(now - l->down_since));
			return 0;
		}
		l->down_since = 0;
		l->backoff_ms = KLOG_BACKOFF_MIN_MS;
	}
	if (l->c != NULL && l->id == 0)
		send_fetch(c, l, li, now);
	/* A long poll answers within max_wait; much later, it is lost. */
	if (l->c != NULL && l->id != 0 && now - l->sent_ms >
	    c->cfg.max_wait_ms + c->cfg.retry_for_ms)
		link_lost(c, li, now, "no answer to a fetch");
	return 0;
}

/* Wait for the next fetch response: 1 when one is taken, 0 if
 * interrupted or nothing came yet. */
int
consumer_wait_response(klog_consumer_t *c, klog_err_t *err)
{
	struct pollfd pfd[c->nlinks + 2];
	int64_t now = klog_clock_mono_ms(), next = -1;
	const uint8_t *body;
	klog_resp_header_t h;
	klog_err_t e = { 0 };
	struct clink *l;
	size_t len;
	int rc, n, wait;

	for (int i = 0; i < c->nlinks; i++) {
		if ((rc = link_service(c, i, now, err)) < 0)
			return rc;
		l = &c->links[i];
		pfd[i].fd = l->c ? klog_client_fd(l->c) : -1;
		pfd[i].events = POLLIN | (l->c && klog_client_pending(l->c) ?
		    POLLOUT : 0);
		pfd[i].revents = 0;
		if (l->c == NULL && link_active(c, i) &&
		    (next < 0 || l->retry_at < next))
			next = l->retry_at;
	}
	/* No events asked: only an error or a hang-up is reported. */
	pfd[c->nlinks] = (struct pollfd){ .fd = c->watch_fd };
	pfd[c->nlinks + 1] = (struct pollfd){ .fd = c->wake_fd,
	    .events = POLLIN };
	if (c->reloc_pending && (next < 0 || c->reloc_at < next))
		next = c->reloc_at;
	wait = c->cfg.max_wait_ms + 1000;
	if (next >= 0 && next - now < wait)
		wait = next > now ? (int)(next - now) : 0;
	if ((n = poll(pfd, (nfds_t)c->nlinks + 2, wait)) < 0)
		return errno == EINTR ? 0 : klog_err_set(err, -KLOG_EIO,
		    "poll: %s", strerror(errno));
	if (pfd[c->nlinks].revents & (POLLERR | POLLHUP | POLLNVAL))
		return klog_err_set(err, -KLOG_ECLOSED, "output closed");
	if (pfd[c->nlinks + 1].revents != 0)
		n--;
	now = klog_clock_mono_ms();
	for (int i = 0; i < c->nlinks && n > 0; i++) {
		l = &c->links[i];
		if (l->c == NULL || pfd[i].revents == 0)
			continue;
		if ((pfd[i].revents & POLLOUT) && klog_client_write(l->c, &e) <
		    0) {
			link_lost(c, i, now, e.msg);
			continue;
		}
		if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (klog_client_read(l->c, &e) < 0) {
			link_lost(c, i, now, e.msg);
			continue;
		}
		while ((rc = klog_client_response(l->c, &h, &body, &len,
		    err)) > 0)
			if ((rc = take_response(c, i, &h, body, len, now,
			    err)) != 0)
				return rc;
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int add_link(klog_consumer_t *c, const klog_client_addr_t *a);

/* Errors of locating that a later question may not have. */
static int
relocation_retryable(int rc)
{
	return rc == -KLOG_ENOTLEADER || rc == -KLOG_ECONN ||
	    rc == -KLOG_ETIMEDOUT || rc == -KLOG_EZK;
}

/*
 * Locate the lost partitions again, when due (backoff from 50 ms doubling
 * to 2 s, reset by a lost partition's answer); it may add links.  Gives up
 * once a partition went retry_for unanswered by a leader since its loss.
 */
int
consumer_relocate(klog_consumer_t *c, klog_err_t *err)
{
	int64_t now = klog_clock_mono_ms();
	klog_discovery_part_t where;
	klog_err_t e = { 0 };
	struct cpart *p;
	int rc, li, left = 0;

	if (now < c->reloc_at)
		return 0;
	if (c->reloc_backoff_ms < KLOG_BACKOFF_MIN_MS)
		c->reloc_backoff_ms = KLOG_BACKOFF_MIN_MS;
	c->reloc_at = now + c->reloc_backoff_ms;
	if (c->reloc_backoff_ms < KLOG_BACKOFF_MAX_MS)
		c->reloc_backoff_ms *= 2;
	klog_discovery_invalidate(c->d);
	for (size_t i = 0; i < c->nparts; i++) {
		p = &c->parts[i];
		if (!p->lost)
			continue;
		rc = klog_discovery_locate(c->d, c->topic, p->index, &where,
		    &e);
		if (rc < 0 && !relocation_retryable(rc))
			return klog_err_set(err, rc, "%s", e.msg);
		if (rc < 0) {
			c->reloc_code = rc;
			snprintf(c->reloc_why, sizeof(c->reloc_why), "%s",
			    e.msg);
			left++;
		}
		/* Found or not: a leader that only says NOT_LEADER is none. */
		if (now - p->lost_since >= c->cfg.retry_for_ms)
			return klog_err_set(err, c->reloc_code, "%s; gave up "
			    "after %lld ms", c->reloc_why,
			    (long long)(now - p->lost_since));
		if (rc < 0)
			continue;
		if ((li = add_link(c, &where.addr)) < 0)
			return klog_err_set(err, li, "out of memory");
		p->partition = where.partition;
		p->link = li;
		p->lost = 0;
	}
	c->reloc_pending = left > 0;
	return 0;
}

void
klog_consumer_watch(klog_consumer_t *c, int fd)
{
	c->watch_fd = fd;
}

void
klog_consumer_wake_on(klog_consumer_t *c, int fd)
{
	c->wake_fd = fd;
}

void
klog_consumer_refresh(klog_consumer_t *c)
{
	c->reloc_at = 0;
	c->reloc_backoff_ms = KLOG_BACKOFF_MIN_MS;
}

size_t
klog_consumer_count(const klog_consumer_t *c)
{
	return c->nparts;
}

int32_t
klog_consumer_partition(const klog_consumer_t *c, size_t i)
{
	return c->parts[i].index;
}

int64_t
klog_consumer_position(const klog_consumer_t *c, size_t i)
{
	return c->parts[i].position;
}

int64_t
klog_consumer_end(const klog_consumer_t *c, size_t i)
{
	return c->parts[i].end;
}

/* ---- opening ---- */

/* The link to a's broker, added if new; -KLOG_ENOMEM. */
static int
add_link(klog_consumer_t *c, const klog_client_addr_t *a)
{
	struct clink *v;
	int ncap;

	for (int i = 0; i < c->nlinks; i++)
		if (strcmp(c->links[i].addr.host, a->host) == 0 &&
		    strcmp(c->links[i].addr.port, a->port) == 0)
			return i;
	if (c->nlinks == c->links_cap) {
		ncap = c->links_cap ? 2 * c->links_cap : 4;
		if ((v = realloc(c->links, (size_t)ncap * sizeof(*v))) == NULL)
			return -KLOG_ENOMEM;
		c->links = v;
		c->links_cap = ncap;
	}
	memset(&c->links[c->nlinks], 0, sizeof(*c->links));
	c->links[c->nlinks].addr = *a;
	c->links[c->nlinks].backoff_ms = KLOG_BACKOFF_MIN_MS;
	return c->nlinks++;
}

static int
setup_parts(klog_consumer_t *c, klog_discovery_t *d, int n, klog_err_t *err)
{
	size_t count = c->cfg.partitions ? c->cfg.npartitions : (size_t)n;
	klog_discovery_part_t where;
	struct cpart *p;
	int rc;

	c->parts = calloc(count, sizeof(*c->parts));
	c->req = calloc(count, sizeof(*c->req));
	c->res = calloc(count, sizeof(*c->res));
	c->res_part = calloc(count, sizeof(*c->res_part));
	c->res_base = calloc(count, sizeof(*c->res_base));
	if (!c->parts || !c->req || !c->res || !c->res_part ||
	    !c->res_base)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	c->nparts = count;
	for (size_t i = 0; i < count; i++) {
		p = &c->parts[i];
		p->index = c->cfg.partitions ? c->cfg.partitions[i] :
		    (int32_t)i;
		if (p->index < 0 || p->index >= n)
			return klog_err_set(err, -KLOG_ENOPARTITION,
			    "topic \"%s\" has %d partition%s, no partition %d",
			    c->topic, n, n == 1 ? "" : "s", (int)p->index);
		if ((rc = klog_discovery_locate(d, c->topic, p->index, &where,
		    err)) < 0)
			return rc;
		p->partition = where.partition;
		if ((p->link = add_link(c, &where.addr)) < 0)
			return klog_err_set(err, p->link, "out of memory");
		c->replicated |= where.replicated;
		p->fetch_bytes = c->cfg.fetch_bytes;
		if ((int64_t)p->fetch_bytes * (int64_t)count > FETCH_BUDGET)
			p->fetch_bytes = FETCH_BUDGET / (int32_t)count;
		if (p->fetch_bytes < FETCH_MIN)
			p->fetch_bytes = FETCH_MIN;
	}
	return 0;
}

/* Where p starts, told to the caller if --reset moved it. */
static int
start_part(klog_consumer_t *c, struct cpart *p, klog_err_t *err)
{
	char notice[512] = "";
	int64_t start;
	int rc;

	if ((rc = consumer_resolve_start(c, p, &start, notice, sizeof(notice),
	    err)) < 0)
		return rc;
	if (notice[0] != '\0')
		consumer_add_notice(c, "%s", notice);
	set_position(c, p, start);
	return 0;
}

static int
open_once(klog_discovery_t *d, const klog_consumer_config_t *cfg,
    klog_consumer_t **out, klog_err_t *err)
{
	klog_consumer_t *c;
	int n, rc;

	if (cfg->topic == NULL || strlen(cfg->topic) > KLOG_TOPIC_MAX ||
	    cfg->fetch_bytes <= 0 || cfg->fetch_max_bytes < cfg->fetch_bytes ||
	    (cfg->start == KLOG_CONSUMER_LAST && cfg->last_n < 1))
		return klog_err_set(err, -KLOG_EINVAL, "bad consumer config");
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	c->cfg = *cfg;
	c->d = d;
	c->watch_fd = -1;
	c->wake_fd = -1;
	c->reloc_backoff_ms = KLOG_BACKOFF_MIN_MS;
	snprintf(c->topic, sizeof(c->topic), "%s", cfg->topic);
	c->cfg.topic = c->topic;
	rc = n = klog_discovery_partitions(d, c->topic, err);
	if (n == 0)
		rc = klog_err_set(err, -KLOG_ENOTOPIC,
		    "topic \"%s\" does not exist", c->topic);
	if (rc < 0 || (rc = setup_parts(c, d, n, err)) < 0)
		goto fail;
	for (int i = 0; i < c->nlinks; i++)
		if ((rc = klog_client_open(&c->links[i].addr,
		    cfg->connect_timeout_ms, &c->links[i].c, err)) < 0)
			goto fail;
	for (size_t i = 0; i < c->nparts; i++)
		if ((rc = start_part(c, &c->parts[i], err)) < 0)
			goto fail;
	/* Those two are borrowed for open only. */
	c->cfg.partitions = NULL;
	c->cfg.starts = NULL;
	*out = c;
	return 0;
fail:
	klog_consumer_close(c);
	return rc;
}

/*
 * A replicated partition without a leader (an election) or whose broker
 * says NOT_LEADER (the news not in ZooKeeper yet) is waited for, asking
 * again with backoff, for up to retry_for.
 */
int
klog_consumer_open(klog_discovery_t *d, const klog_consumer_config_t *cfg,
    klog_consumer_t **out, klog_err_t *err)
{
	int64_t since = klog_clock_mono_ms();
	int rc, wait = KLOG_BACKOFF_MIN_MS;

	while ((rc = open_once(d, cfg, out, err)) == -KLOG_ENOTLEADER &&
	    klog_clock_mono_ms() - since < cfg->retry_for_ms) {
		poll(NULL, 0, wait);
		if (wait < KLOG_BACKOFF_MAX_MS)
			wait *= 2;
		klog_discovery_invalidate(d);
	}
	return rc;
}

void
klog_consumer_close(klog_consumer_t *c)
{
	if (c == NULL)
		return;
	if (c->iterating)
		klog_iter_free(&c->it);
	for (int i = 0; i < c->nlinks; i++)
		klog_client_close(c->links[i].c);
	free(c->parts);
	free(c->links);
	free(c->req);
	free(c->res);
	free(c->res_part);
	free(c->res_base);
	free(c);
}
