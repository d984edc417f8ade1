/*
 * The consumer's messages handed out: the sets of a fetch response
 * iterated (gzip wrappers opened, magic-2 entries' records with their
 * keys, timestamps and headers), CRC mismatches and broken framing
 * reported, or passed over with --skip-corrupt.  The fetching is
 * lib/client/consumer.c.
 */
#include <string.h>

#include "klog/client/consumer.h"
#include "consumer_impl.h"

static int
iter_error(klog_consumer_t *c, int rc, klog_err_t *err)
{
	const char *what = klog_iter_error(&c->it);

	return klog_err_set(err, rc, "topic \"%s\" partition %d: offset "
	    "%lld: %s", c->topic, (int)c->itp->index,
	    (long long)klog_iter_error_offset(&c->it),
	    what ? what : klog_strerror(rc));
}

/* The iterator checks each CRC as it hands the message out, while its
 * bytes are in the cache.  A pass of its own over the set, shared with a
 * second thread, cost more than the CRCs since they come from libdeflate. */
static unsigned
iter_flags(const klog_consumer_t *c)
{
	return KLOG_ITER_DEEP | (c->cfg.check_crc ? 0 : KLOG_ITER_NOCRC);
}

/* Start on the next set of the response; 0 when there is none left. */
static int
next_set(klog_consumer_t *c)
{
	klog_fetch_result_t *r;

	while (c->ri < c->nres) {
		r = &c->res[c->ri];
		c->itp = c->res_part[c->ri];
		klog_iter_init(&c->it, r->set, r->set_len, c->res_base[c->ri],
		    iter_flags(c), 0);
		c->ri++;
		if (r->error == KLOG_WIRE_NONE && r->set_len > 0) {
			c->iterating = 1;
			return 1;
		}
	}
	return 0;
}

/*
 * --skip-corrupt past broken framing at offset at (what: why): the next
 * whole valid entry of the set being handed out, found a byte at a time,
 * is where the iterator goes on, and where later fetches of the partition
 * start.  0 when the set holds none after it: the error stands.
 */
static int
resync(klog_consumer_t *c, int64_t at, const char *what)
{
	const klog_fetch_result_t *r = &c->res[c->ri - 1];
	int64_t base = c->res_base[c->ri - 1];
	size_t pos = (size_t)(at - base) + 1;
	struct cpart *p = c->itp;
	uint32_t first;
	int64_t end;

	while (pos < r->set_len &&
	    klog_entry_valid(r->set + pos, r->set_len - pos) == 0)
		pos++;
	if (pos >= r->set_len)
		return 0;
	consumer_add_notice(c, "topic \"%s\" partition %d: offset %lld: "
	    "%s; skipped %lld bytes to offset %lld (--skip-corrupt)", c->topic,
	    (int)p->index, (long long)at, what,
	    (long long)(base + (int64_t)pos - at), (long long)(base +
	    (int64_t)pos));
	klog_iter_free(&c->it);
	klog_iter_init(&c->it, r->set + pos, r->set_len - pos,
	    base + (int64_t)pos, iter_flags(c), 0);
	p->position = base + (int64_t)pos;
	/* The fetch in flight may have been asked at the damage: what this
	 * answer holds whole from here on is handed out from it, and is
	 * passed over when fetched again. */
	end = p->position + (int64_t)consumer_complete_bytes(r->set + pos,
	    r->set_len - pos, &first);
	if (p->fetch_offset < end) {
		p->skip_to = end;
		p->fetch_offset = end;
		if (c->cfg.exit_at_end && end >= p->end)
			p->done = 1;
	}
	return 1;
}

/* Whether the bytes after a top-level entry that failed its CRC still look
 * like an entry (or end the set): if not, its length was the damage. */
static int
framing_held(const klog_consumer_t *c, const klog_msg_t *msg)
{
	const klog_fetch_result_t *r = &c->res[c->ri - 1];
	size_t at = (size_t)(msg->offset - c->res_base[c->ri - 1]);
	size_t next = (size_t)(msg->next_offset - c->res_base[c->ri - 1]);

	/* An inner message of a wrapper: the wrapper framed it. */
	if (next <= at || next - at != KLOG_LENGTH_SIZE +
	    (size_t)klog_be32(r->set + at))
		return 1;
	if (r->set_len - next <= KLOG_LENGTH_SIZE)
		return 1;
	return klog_entry_header_ok(r->set + next, r->set_len - next) != 0;
}

/* --skip-corrupt: 1 if the damage the iterator met (a CRC mismatch, rc 1,
 * or broken framing, rc < 0) was passed over. */
static int
skip_damage(klog_consumer_t *c, int rc, const klog_msg_t *msg)
{
	if (rc < 0)
		return rc == -KLOG_ECORRUPT && resync(c,
		    klog_iter_error_offset(&c->it), klog_iter_error(&c->it) ?
		    klog_iter_error(&c->it) : "corrupt entry");
	if (!framing_held(c, msg))
		return resync(c, msg->offset, "crc mismatch");
	consumer_add_notice(c, "topic \"%s\" partition %d: offset %lld: "
	    "crc mismatch; skipped (--skip-corrupt)", c->topic,
	    (int)c->itp->index, (long long)msg->offset);
	c->itp->position = msg->next_offset;
	return 1;
}

static void
hand_out(klog_consumer_t *c, klog_consumer_msg_t *m, const klog_msg_t *msg)
{
	m->partition = c->itp->index;
	m->offset = msg->offset;
	m->next_offset = msg->next_offset;
	m->payload = msg->payload;
	m->payload_len = msg->payload_len;
	m->key = msg->key;
	m->key_len = msg->key_len;
	m->timestamp = msg->timestamp;
	m->headers = msg->headers;
	m->headers_len = msg->headers_len;
	m->header_count = msg->header_count;
	m->batch = msg->batch;
	m->batch_len = msg->batch_len;
	c->itp->position = msg->next_offset;
}

/* No iterator result is waiting for next_slow(). */
#define NO_RESULT 2

/*
 * klog_consumer_next() but for its common case: rc and *msg are the
 * iterator's result, not yet looked at, or rc is NO_RESULT.  Not inlined,
 * or its saved registers come back to the common case.
 */
static int __attribute__((noinline))
next_slow(klog_consumer_t *c, klog_consumer_msg_t *m, klog_err_t *err,
    int rc, klog_msg_t *msg)
{
	for (;; rc = NO_RESULT) {
		if (rc == NO_RESULT && c->notice[0] != '\0') {
			char *nl = strchr(c->notice, '\n');

			klog_err_set(err, 0, "%.*s", (int)(nl - c->notice),
			    c->notice);
			memmove(c->notice, nl + 1, strlen(nl + 1) + 1);
			return KLOG_CONSUMER_NOTICE;
		}
		if (c->iterating) {
			if (rc == NO_RESULT)
				rc = klog_iter_next(&c->it, msg);
			if (c->cfg.skip_corrupt && ((rc == 1 && !msg->valid) ||
			    (rc < 0 && rc != -KLOG_EPARTIAL)) &&
			    skip_damage(c, rc, msg))
				continue;
			if (rc == 1 && !msg->valid)
				return klog_err_set(err, -KLOG_ECORRUPT,
				    "topic \"%s\" partition %d: offset %lld: "
				    "crc mismatch", c->topic,
				    (int)c->itp->index, (long long)msg->offset);
			if (rc == 1) {
				hand_out(c, m, msg);
				return KLOG_CONSUMER_MSG;
			}
			if (rc < 0 && rc != -KLOG_EPARTIAL)
				return iter_error(c, rc, err);
			klog_iter_free(&c->it);
			c->iterating = 0;
			continue;
		}
		if (next_set(c))
			continue;
		if (c->have_batch) {
			c->have_batch = 0;
			return KLOG_CONSUMER_BATCH;
		}
		if (c->cfg.exit_at_end && consumer_all_done(c))
			return KLOG_CONSUMER_DONE;
		if (c->reloc_pending && (rc = consumer_relocate(c, err)) < 0)
			return rc;
		if ((rc = consumer_wait_response(c, err)) < 0)
			return rc;
		if (rc == 0)
			return KLOG_CONSUMER_BATCH;
	}
}

/* A valid message of the set being handed out goes without next_slow()'s
 * loop, whose checks and saved registers were an eighth of klog-consume's
 * instructions (callgrind). */
int
klog_consumer_next(klog_consumer_t *c, klog_consumer_msg_t *m,
    klog_err_t *err)
{
	klog_msg_t msg;
	int rc = NO_RESULT;

	if (c->iterating && c->notice[0] == '\0') {
		rc = klog_iter_next(&c->it, &msg);
		if (rc == 1 && msg.valid) {
			hand_out(c, m, &msg);
			return KLOG_CONSUMER_MSG;
		}
	}
	return next_slow(c, m, err, rc, &msg);
}
