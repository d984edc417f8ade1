/*
 * The core's requests: PRODUCE items checked and staged, FETCH items
 * resolved to file ranges, OFFSETS answered from the log's segments.
 * Decoded requests in, items out; the front ends encode the answers.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "klog/core/core.h"
#include "klog/storage/format.h"

#include "core_impl.h"

#define MAX_OFFSETS 1024                /* offsets per OFFSETS partition */

_Static_assert(offsetof(klog_fetch_part_t, partition) ==
    offsetof(klog_offsets_part_t, partition) &&
    offsetof(klog_fetch_part_t, partition) ==
    offsetof(klog_produce_part_t, partition), "parts start alike");

void
klog_core_refuse_items(klog_core_item_t *items, uint32_t from, uint32_t n,
    const void *parts, size_t size, int16_t error)
{
	for (uint32_t i = from; i < n; i++) {
		const uint8_t *p = (const uint8_t *)parts + (size_t)i * size;
		klog_str_t topic;
		int32_t partition;

		memcpy(&topic, p, sizeof(topic));
		memcpy(&partition, p + offsetof(klog_fetch_part_t, partition),
		    sizeof(partition));
		items[i] = (klog_core_item_t){ .topic = topic,
		    .partition = partition, .offset = -1, .target = -1,
		    .staged = -1, .error = error };
	}
}

/* ---- requests ---- */

static int16_t
validate_set(klog_core_t *c, const uint8_t *set, uint32_t len, int trusted,
    klog_msgset_info_t *info)
{
	unsigned flags = KLOG_ITER_DEEP;
	int rc;

	if (trusted & KLOG_CORE_TRUST_CRC)
		flags |= KLOG_ITER_OUTER_CHECKED;
	if (trusted & KLOG_CORE_TRUST_RECORDS)
		flags |= KLOG_ITER_RECORDS_CHECKED;
	rc = klog_msgset_validate(set, len, flags, info);

	switch (rc) {
	case 0:
		break;
	case -KLOG_EPARTIAL:
		return KLOG_WIRE_PARTIAL_MESSAGE;
	case -KLOG_EUNSUPPORTED:
		return KLOG_WIRE_UNSUPPORTED_CODEC;
	case -KLOG_ETOOBIG:
		return KLOG_WIRE_MESSAGE_TOO_LARGE;
	default:
		return KLOG_WIRE_INVALID_MESSAGE;
	}
	if ((int64_t)info->max_payload > c->cfg.max_message_bytes)
		return KLOG_WIRE_MESSAGE_TOO_LARGE;
	return KLOG_WIRE_NONE;
}

static void
produce_part(klog_core_t *c, const klog_produce_part_t *pp, int acks,
    int trusted, klog_core_item_t *it)
{
	klog_msgset_info_t info;
	klog_core_part_t *p;
	struct topic *t;
	int64_t first;

	*it = (klog_core_item_t){ .topic = pp->topic,
	    .partition = pp->partition, .offset = -1, .target = -1,
	    .staged = -1 };
	if ((t = core_topic_lookup(c, pp->topic, 1, &it->error)) == NULL)
		return;
	if (pp->partition == -1)
		it->partition = (int32_t)(t->rr++ % (uint32_t)t->nparts);
	if ((p = core_part_get(c, t, it->partition, &it->error)) == NULL)
		return;
	if ((it->error = core_rep_check(p, acks)) != KLOG_WIRE_NONE)
		return;
	if (c->storage_failed) {
		it->error = KLOG_WIRE_STORAGE_ERROR;
		return;
	}
	it->part = p;
	if (pp->set_len == 0) {
		it->offset = klog_log_end(p->log) + p->sbytes;
		return;
	}
	if ((it->error = validate_set(c, pp->set, pp->set_len, trusted,
	    &info)) != 0)
		return;
	if (core_idem_check(c, p, pp->set, pp->set_len, it))
		return;
	if ((it->error = core_stage(c, p, pp->set, pp->set_len, info.messages,
	    &first, &it->staged)) != 0) {
		core_idem_unstage(p, klog_log_end(p->log) + p->sbytes);
		return;
	}
	it->offset = first;
	it->target = first + pp->set_len;
}

int
klog_core_produce(klog_core_t *c, const klog_produce_req_t *req,
    klog_core_trust_fn *trust, void *arg, klog_core_item_t *items)
{
	int waits = 0;

	for (uint32_t i = 0; i < req->count; i++) {
		const klog_produce_part_t *pp = &req->parts[i];

		produce_part(c, pp, req->acks, trust != NULL ? trust(arg, pp) :
		    0, &items[i]);
		if (req->acks != KLOG_ACKS_ALL || items[i].target < 0)
			continue;
		if (core_visible_end(items[i].part) >= items[i].target)
			items[i].target = -1;
		else
			waits++;
	}
	return waits;
}

/* Fill a fetch item; returns the bytes it could return now. */
static int64_t
fetch_item(klog_core_t *c, const klog_fetch_part_t *fp, klog_core_item_t *it)
{
	int64_t start, fe, we;

	*it = (klog_core_item_t){ .topic = fp->topic,
	    .partition = fp->partition, .offset = fp->offset,
	    .max = fp->max_bytes, .target = -1 };
	if (fp->max_bytes > KLOG_CORE_MAX_FETCH_BYTES) {
		it->error = KLOG_WIRE_INVALID_FETCH_SIZE;
		return 0;
	}
	if ((it->part = core_part_lookup(c, fp->topic, fp->partition,
	    &it->error)) == NULL)
		return 0;
	if ((it->error = core_rep_check(it->part, 0)) != KLOG_WIRE_NONE) {
		it->part = NULL;
		return 0;
	}
	start = klog_log_start(it->part->log);
	fe = core_visible_end(it->part);
	we = core_awaited_end(it->part->log);
	if (fp->offset < start || fp->offset > we) {
		/* The range it reports must cover every acknowledged record. */
		it->error = KLOG_WIRE_OFFSET_OUT_OF_RANGE;
		if (we > fe && it->part->rep == NULL)
			it->target = we;
		return 0;
	}
	if (fp->offset < fe)
		return fe - fp->offset < fp->max_bytes ? fe - fp->offset :
		    fp->max_bytes;
	/* Written but not flushed where this consumer reads: it waits for
	 * one flush, not for the policy.  (A replicated partition's reader
	 * waits as a long poll for the HW instead, which may stand still.) */
	if (we > fp->offset && it->part->rep == NULL)
		it->target = we;
	return 0;
}

int
klog_core_fetch(klog_core_t *c, const klog_fetch_req_t *req,
    klog_core_item_t *items)
{
	int64_t avail = 0;
	int flushes = 0, live = 0;

	for (uint32_t i = 0; i < req->count; i++) {
		avail += fetch_item(c, &req->parts[i], &items[i]);
		flushes += items[i].target >= 0;
		live += items[i].part != NULL && items[i].error == 0;
	}
	return flushes == 0 && (avail >= req->min_bytes ||
	    req->max_wait_ms == 0 || live == 0);
}

/* A read from the start of the message holding it->offset. */
static int
read_aligned(const klog_core_item_t *it, int64_t max, klog_log_slice_t *slice,
    klog_err_t *err)
{
	int64_t start;
	int rc;

	if ((rc = klog_log_find_start(it->part->log, it->offset, &start,
	    err)) < 0)
		return rc;
	return klog_log_read(it->part->log, start, (size_t)max +
	    (size_t)(it->offset - start), slice, err);
}

void
klog_core_fetch_read(klog_core_t *c, const klog_core_item_t *it,
    int64_t budget, klog_core_read_t *r)
{
	int64_t max;
	klog_err_t err;
	int rc;

	*r = (klog_core_read_t){ .error = it->error, .log_start = -1,
	    .log_end = -1 };
	if (it->part != NULL) {
		if (!it->is_replica && r->error == KLOG_WIRE_NONE)
			r->error = core_rep_check(it->part, 0);
		r->log_start = klog_log_start(it->part->log);
		r->log_end = core_item_end(it);
	}
	if (r->error != KLOG_WIRE_NONE || it->offset >= r->log_end) {
		/* Past the flushed end but written: not visible yet, no error
		 * (a failed flush, or an offset from a produce response). */
		if (r->error == KLOG_WIRE_NONE &&
		    it->offset > klog_log_end(it->part->log))
			r->error = KLOG_WIRE_OFFSET_OUT_OF_RANGE;
		return;
	}
	max = it->max < budget ? it->max : budget;
	/* The log reads to its flushed end; a replicated partition's
	 * consumer stops at the committed end. */
	if (r->log_end - it->offset < max)
		max = r->log_end - it->offset;
	rc = klog_log_read(it->part->log, it->offset, (size_t)max, &r->slice,
	    &err);
	if (rc == -KLOG_ENOTBOUNDARY && it->align)
		rc = read_aligned(it, max, &r->slice, &err);
	if (rc < 0) {
		if (rc != -KLOG_ERANGE && rc != -KLOG_ENOTBOUNDARY) {
			klog_logger_say(&c->cfg.log, KLOG_LEVEL_WARN, "topic "
			    "\"%s\" partition %d: %s", it->part->topic->name,
			    (int)it->part->id, klog_err_text(&err, rc));
			rc = -KLOG_EIO;
		}
		r->error = (int16_t)klog_wire_error_from_klog(rc);
		r->log_start = klog_log_start(it->part->log);
		return;
	}
	it->part->bytes_out += r->slice.len;
	r->has_slice = 1;
}

int64_t
klog_core_item_log_start(const klog_core_item_t *it)
{
	return it->part != NULL ? klog_log_start(it->part->log) : -1;
}

int
klog_core_offsets(klog_core_t *c, const klog_offsets_part_t *parts,
    uint32_t n, klog_core_item_t *items)
{
	int flushes = 0;

	for (uint32_t i = 0; i < n; i++) {
		klog_core_item_t *it = &items[i];
		int64_t we;

		*it = (klog_core_item_t){ .topic = parts[i].topic,
		    .partition = parts[i].partition, .offset = parts[i].time,
		    .max = parts[i].max < MAX_OFFSETS ? parts[i].max :
		    MAX_OFFSETS, .target = -1 };
		if ((it->part = core_part_lookup(c, it->topic, it->partition,
		    &it->error)) == NULL)
			continue;
		if ((it->error = core_rep_check(it->part, 0)) != 0) {
			it->part = NULL;
			continue;
		}
		/* Every answer but "earliest" shows the flushed end (a
		 * replicated partition's committed end, as it is). */
		if (it->offset == KLOG_OFFSET_EARLIEST || it->part->rep != NULL)
			continue;
		we = core_awaited_end(it->part->log);
		if (we > klog_log_flushed_end(it->part->log)) {
			it->target = we;
			flushes++;
		}
	}
	return flushes;
}

/* Offsets (descending) past the committed end become it, once. */
static void
cap_offsets(int64_t end, int64_t *v, int *n)
{
	int k = 0;

	for (int i = 0; i < *n; i++) {
		int64_t x = v[i] > end ? end : v[i];

		if (k == 0 || v[k - 1] != x)
			v[k++] = x;
	}
	*n = k;
}

int16_t
klog_core_offsets_time(const klog_core_item_t *it, klog_log_time_t *res)
{
	if (it->error != KLOG_WIRE_NONE)
		return it->error;
	if (klog_log_find_time(it->part->log, it->offset, res, NULL) < 0)
		return KLOG_WIRE_STORAGE_ERROR;
	/* A replicated partition's records past its committed end are not
	 * to be read yet. */
	if (res->status == KLOG_LOG_TIME_FOUND &&
	    res->offset >= core_visible_end(it->part))
		res->status = KLOG_LOG_TIME_NONE;
	return KLOG_WIRE_NONE;
}

/* OFFSETS v2 with a time: the entry holding the first record at or after
 * it, or the end; 0 where no record carries a timestamp. */
static int
first_at(const klog_core_item_t *it, int64_t *out, int *count,
    int16_t *error)
{
	klog_log_time_t t;

	if (!it->first_at || it->offset < 0)
		return 0;
	if ((*error = klog_core_offsets_time(it, &t)) != KLOG_WIRE_NONE)
		return 1;
	if (t.status == KLOG_LOG_TIME_UNSTAMPED)
		return 0;
	out[0] = t.status == KLOG_LOG_TIME_FOUND ? t.offset :
	    core_visible_end(it->part);
	*count = 1;
	return 1;
}

int16_t
klog_core_offsets_read(const klog_core_item_t *it, int64_t *out, int *count)
{
	int16_t error;

	*count = 0;
	if (it->error != KLOG_WIRE_NONE || it->max == 0)
		return it->error;
	if (first_at(it, out, count, &error))
		return error;
	if (klog_log_offsets_before(it->part->log, it->offset, out, it->max,
	    count) < 0) {
		*count = 0;
		return KLOG_WIRE_STORAGE_ERROR;
	}
	if (it->part->rep != NULL)
		cap_offsets(core_visible_end(it->part), out, count);
	return KLOG_WIRE_NONE;
}
