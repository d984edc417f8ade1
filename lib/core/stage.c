/*
 * The core's staging: a read's produce sets are held per partition and
 * written with one writev when the read is done (klog_core_commit), so
 * pipelined requests cost one write; a set the log cannot take gets its
 * error patched into the answer already queued.
 */
#include <sys/uio.h>

#include <stdint.h>
#include <stdlib.h>

#include "klog/base/buf.h"
#include "klog/core/core.h"

#include "core_impl.h"

#define STAGE_SETS 1024                 /* staged sets per partition ... */
#define STAGE_BYTES ((int64_t)8 << 20)  /* ... and bytes, before a write */

/* ---- staging ---- */

void
core_after_append(klog_core_t *c, klog_core_part_t *p)
{
	c->appended = 1;
	if (c->eager)
		core_want_flush(c, p);
	else if (c->cfg.flush_messages > 0 &&
	    klog_log_unflushed_messages(p->log) >=
	    (uint64_t)c->cfg.flush_messages)
		core_want_flush(c, p);
}

/* Log an append failure once per run of failures. */
static void
append_failed(klog_core_t *c, klog_core_part_t *p, int rc,
    const klog_err_t *err)
{
	if (!p->append_failing)
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_ERROR, "topic \"%s\" "
		    "partition %d: append: %s", p->topic->name, (int)p->id,
		    klog_err_text(err, rc));
	p->append_failing = 1;
}

/* Some sets went in; all did when all != 0. */
static void
append_ok(klog_core_t *c, klog_core_part_t *p, int all)
{
	if (p->append_failing && all)
		klog_logger_say(&c->cfg.log, KLOG_LEVEL_INFO, "topic \"%s\" "
		    "partition %d: appending again", p->topic->name,
		    (int)p->id);
	if (all)
		p->append_failing = 0;
	core_after_append(c, p);
	/* A park waiting on staged data asked for its flush before the data
	 * was written; ask again now that it is. */
	if (p->waiters != NULL)
		core_want_flush(c, p);
}

/* Turn the result of a staged set the log did not take into error. */
static void
stage_fail(const struct stage_ref *r, int16_t error,
    klog_core_patch_fn *patch, void *arg)
{
	klog_core_item_t *it;

	if (r->park == NULL) {
		if (r->pos != SIZE_MAX)
			patch(arg, r->pos, error);
		return;
	}
	it = &r->park->items[r->item];
	if (it->linked && it->target >= 0)
		r->park->flushes--;
	core_item_unlink(it);
	it->error = error;
	it->offset = -1;
	it->target = -1;
	core_park_check(r->park);
}

/* Write p's staged sets; answer those the log could not take with errors. */
static void
commit_part(klog_core_t *c, klog_core_part_t *p, klog_core_patch_fn *patch,
    void *arg)
{
	size_t done = 0, segments = klog_log_segment_count(p->log);
	klog_err_t err;
	int rc;

	rc = klog_log_appendv(p->log, p->siov, p->sn, p->smsgs, NULL, &done,
	    &err);
	/* A write cut short leaves its sets' message counts unknown: only
	 * its bytes are counted. */
	if (done == p->sn) {
		p->messages_in += p->smsgs;
		p->bytes_in += (uint64_t)p->sbytes;
	} else {
		for (size_t k = 0; k < done; k++)
			p->bytes_in += p->siov[k].iov_len;
	}
	if (rc == -KLOG_ESTORAGE)
		core_storage_failed(c, p, &err);
	if (rc < 0) {
		append_failed(c, p, rc, &err);
		for (size_t k = done; k < p->sn; k++)
			stage_fail(&p->sref[k], core_wire_storage(rc), patch, arg);
	}
	p->sn = 0;
	p->sbytes = 0;
	p->smsgs = 0;
	core_idem_written(c, p, segments);
	if (done > 0)
		append_ok(c, p, rc == 0);
}

void
klog_core_commit(klog_core_t *c, klog_core_patch_fn *patch, void *arg)
{
	for (size_t i = 0; i < c->nstaged; i++) {
		c->staged[i]->staged = 0;
		if (c->staged[i]->sn > 0)
			commit_part(c, c->staged[i], patch, arg);
	}
	c->nstaged = 0;
	c->stage_full = 0;
}

/*
 * Stage set for p: *first gets its offset, *idx its index among p's staged
 * sets.  Returns a wire error (out of memory).
 */
int16_t
core_stage(klog_core_t *c, klog_core_part_t *p, const uint8_t *set,
    uint32_t len, uint32_t msgs, int64_t *first, int64_t *idx)
{
	if (klog_buf_grow((void **)&p->siov, &p->scap, (p->sn + 1) *
	    sizeof(*p->siov)) < 0 || klog_buf_grow((void **)&p->sref, &p->srcap,
	    (p->sn + 1) * sizeof(*p->sref)) < 0)
		return KLOG_WIRE_STORAGE_ERROR;
	*first = klog_log_end(p->log) + p->sbytes;
	*idx = (int64_t)p->sn;
	p->siov[p->sn] = (struct iovec){ (void *)set, len };
	p->sref[p->sn++] = (struct stage_ref){ NULL, 0, SIZE_MAX };
	p->sbytes += len;
	p->smsgs += msgs;
	if (p->sn >= STAGE_SETS || p->sbytes >= STAGE_BYTES)
		c->stage_full = 1;
	if (!p->staged) {
		p->staged = 1;
		c->staged[c->nstaged++] = p;
	}
	return KLOG_WIRE_NONE;
}

int
klog_core_stage_full(const klog_core_t *c)
{
	return c->stage_full;
}

void
klog_core_note_result(klog_core_item_t *it, size_t pos)
{
	if (it->staged >= 0)
		it->part->sref[it->staged].pos = pos;
}
