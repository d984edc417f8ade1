/*
 * Where a consumer's partitions start: an offset, the beginning or the end,
 * the last N messages (found by scanning back from segment starts), a time,
 * or an offset file's, with --reset for one outside the log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer_impl.h"

static const klog_consumer_pos_t *
start_override(const klog_consumer_config_t *cfg, int32_t index)
{
	for (size_t i = 0; i < cfg->nstarts; i++)
		if (cfg->starts[i].partition == index)
			return &cfg->starts[i];
	return NULL;
}

/*
 * An offset asked for (-o, an offset file) outside [earliest, latest]:
 * --reset says where to go instead, the same with and without -e, so a
 * mistyped offset never turns into a fetch the broker refuses, nor
 * silently into a replay.  On an empty partition both are 0.
 */
static int
check_range(klog_consumer_t *c, struct cpart *p, int64_t *start,
    char *notice, size_t cap, klog_err_t *err)
{
	klog_client_t *cl = c->links[p->link].c;
	int tmo = c->cfg.connect_timeout_ms;
	int64_t lo, hi, to;
	const char *what;
	int rc;

	if ((rc = klog_client_query_offset(cl, c->topic, p->partition,
	    KLOG_OFFSET_EARLIEST, tmo, NULL, &lo, err)) < 0 ||
	    (rc = klog_client_query_offset(cl, c->topic, p->partition,
	    KLOG_OFFSET_LATEST, tmo, NULL, &hi, err)) < 0)
		return rc;
	if (*start >= lo && *start <= hi)
		return 0;
	what = *start > hi ? "past the end" : "before the start";
	if (c->cfg.reset == KLOG_CONSUMER_RESET_FAIL)
		return klog_err_set(err, -KLOG_ERANGE, "offset %lld is %s "
		    "(%lld) of %s/%d", (long long)*start, what,
		    (long long)(*start > hi ? hi : lo), c->topic,
		    (int)p->index);
	to = c->cfg.reset == KLOG_CONSUMER_RESET_LATEST ? hi : lo;
	snprintf(notice, cap, "offset %lld is %s (%lld) of %s/%d; going on "
	    "from %lld (--reset %s)", (long long)*start, what,
	    (long long)(*start > hi ? hi : lo), c->topic, (int)p->index,
	    (long long)to, c->cfg.reset == KLOG_CONSUMER_RESET_LATEST ?
	    "latest" : "earliest");
	*start = to;
	return 0;
}

/* The last `want` values pushed, oldest at v[count % want] once count
 * reaches want; grown as values come, so it holds no more than came. */
struct ring {
	int64_t *v;
	uint64_t cap, want, count;
};

static int
ring_push(struct ring *r, int64_t x)
{
	int64_t *v;
	uint64_t ncap;

	if (r->count < r->want && r->count == r->cap) {
		ncap = r->cap < 1024 ? 1024 : 2 * r->cap;
		if (ncap > r->want)
			ncap = r->want;
		if ((v = realloc(r->v, ncap * sizeof(*v))) == NULL)
			return -KLOG_ENOMEM;
		r->v = v;
		r->cap = ncap;
	}
	r->v[r->count % r->want] = x;
	r->count++;
	return 0;
}

/*
 * Push the start of every entry in [from, to) of p onto r, reading the
 * length fields of blocking fetches on p's connection (no CRC: the read
 * that follows checks the messages it hands out).
 */
static int
scan_starts(klog_consumer_t *c, struct cpart *p, int64_t from, int64_t to,
    struct ring *r, klog_err_t *err)
{
	klog_client_t *cl = c->links[p->link].c;
	int32_t fb = c->cfg.fetch_bytes, id;
	klog_fetch_part_t fp;
	klog_fetch_req_t req = { .max_wait_ms = 0, .min_bytes = 0,
	    .parts = &fp, .count = 1 };
	klog_fetch_result_t res;
	const uint8_t *body;
	int16_t error;
	uint32_t n, got;
	size_t len, pos;
	int rc;

	while (from < to) {
		fp = (klog_fetch_part_t){
		    { c->topic, (uint16_t)strlen(c->topic) }, p->partition,
		    from, (int32_t)(to - from < fb ? to - from : fb) };
		id = klog_client_next_id(cl);
		if ((rc = klog_proto_encode_fetch(klog_client_out(cl), id,
		    &req)) < 0)
			return klog_err_set(err, rc, "out of memory");
		if ((rc = klog_client_call(cl, id, c->cfg.connect_timeout_ms,
		    &error, &body, &len, err)) < 0)
			return rc;
		if (error == KLOG_WIRE_NONE && (klog_proto_decode_fetch_resp(
		    body, len, &res, 1, &got) < 0 || got != 1))
			return klog_err_set(err, -KLOG_EPROTO, "%s: malformed "
			    "fetch response", klog_client_name(cl));
		if (error == KLOG_WIRE_NONE)
			error = res.error;
		if (error != KLOG_WIRE_NONE)
			return klog_err_set(err, klog_wire_error_to_klog(error),
			    "topic \"%s\" partition %d: offset %lld: %s",
			    c->topic, (int)p->index, (long long)from,
			    klog_wire_error_text(error));
		for (pos = 0; res.set_len - pos >= KLOG_LENGTH_SIZE;
		    pos += KLOG_LENGTH_SIZE + n) {
			n = klog_be32(res.set + pos);
			if (n < KLOG_MAGIC0_HEADER || n > KLOG_MAX_ENTRY_LENGTH)
				return klog_err_set(err, -KLOG_ECORRUPT,
				    "topic \"%s\" partition %d: offset %lld: "
				    "bad entry length %u", c->topic,
				    (int)p->index, (long long)(from +
				    (int64_t)pos), n);
			if (n > res.set_len - pos - KLOG_LENGTH_SIZE)
				break;
			if ((rc = ring_push(r, from + (int64_t)pos)) < 0)
				return klog_err_set(err, rc, "out of memory");
		}
		if (pos > 0) {
			from += (int64_t)pos;
			continue;
		}
		/* Not one whole entry: a bigger one, as part_advance(). */
		if (res.set_len == 0 || fb >= c->cfg.fetch_max_bytes)
			return klog_err_set(err, -KLOG_ETOOBIG, "topic \"%s\" "
			    "partition %d: offset %lld: a message over the "
			    "fetch limit of %d bytes, or the log ends early",
			    c->topic, (int)p->index, (long long)from,
			    (int)c->cfg.fetch_max_bytes);
		fb = fb > c->cfg.fetch_max_bytes / 2 ? c->cfg.fetch_max_bytes :
		    2 * fb;
	}
	return 0;
}

/*
 * -o -N (see consumer.h): the start of the last_n-th entry from the end,
 * counted from the newest segment back; *end gets the end the count
 * reached, which -e then reads up to.
 */
static int
find_last(klog_consumer_t *c, struct cpart *p, int64_t *start, int64_t *end,
    klog_err_t *err)
{
	int64_t offs[LAST_SEGMENTS], hi;
	uint64_t have = 0;
	struct ring r = { 0 };
	int n, rc;

	if ((rc = klog_client_query_offsets(c->links[p->link].c, c->topic,
	    p->partition, KLOG_OFFSET_LATEST, LAST_SEGMENTS,
	    c->cfg.connect_timeout_ms, NULL, offs, &n, err)) < 0)
		return rc;
	/* The end, then the segments' bases, newest first. */
	*end = hi = *start = offs[0];
	for (int i = 1; i < n; i++) {
		if (offs[i] >= hi)
			continue;
		r.want = (uint64_t)c->cfg.last_n - have;
		r.count = 0;
		if ((rc = scan_starts(c, p, offs[i], hi, &r, err)) < 0)
			goto out;
		*start = offs[i];
		if (r.count >= r.want) {
			*start = r.v[r.count % r.want];
			break;
		}
		have += r.count;
		hi = offs[i];
	}
out:
	free(r.v);
	return rc;
}

int
consumer_resolve_start(klog_consumer_t *c, struct cpart *p, int64_t *out,
    char *notice, size_t cap, klog_err_t *err)
{
	klog_client_t *cl = c->links[p->link].c;
	const klog_consumer_pos_t *o = start_override(&c->cfg, p->index);
	int tmo = c->cfg.connect_timeout_ms;
	int64_t start = o ? o->offset : c->cfg.start, time;
	int rc;

	if (c->cfg.exit_at_end && (rc = klog_client_query_offset(cl, c->topic,
	    p->partition, KLOG_OFFSET_LATEST, tmo, NULL, &p->end, err)) < 0)
		return rc;
	if (start == KLOG_CONSUMER_LAST) {
		if ((rc = find_last(c, p, &start, &time, err)) < 0)
			return rc;
		if (c->cfg.exit_at_end && time > p->end)
			p->end = time;
		*out = start;
		return 0;
	}
	if (start >= 0) {
		if ((rc = check_range(c, p, &start, notice, cap, err)) < 0)
			return rc;
		/* The end may have grown since it was asked for -e. */
		if (c->cfg.exit_at_end && start > p->end)
			p->end = start;
		*out = start;
		return 0;
	}
	time = start == KLOG_CONSUMER_END ? KLOG_OFFSET_LATEST :
	    start == KLOG_CONSUMER_BEGINNING ? KLOG_OFFSET_EARLIEST :
	    c->cfg.start_time_ms;
	rc = klog_client_query_offset(cl, c->topic, p->partition, time, tmo,
	    NULL, &start, err);
	/* Every segment is newer than the time: start at the beginning. */
	if (rc == -KLOG_ENOENT && time >= 0)
		rc = klog_client_query_offset(cl, c->topic, p->partition,
		    KLOG_OFFSET_EARLIEST, tmo, NULL, &start, err);
	if (rc < 0)
		return rc;
	*out = start;
	return 0;
}
