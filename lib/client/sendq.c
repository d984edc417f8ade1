/*
 * The producer's send queues: a batch is a whole PRODUCE frame for one
 * partition, built from a head encoded once, sealed (gzip-wrapped when
 * asked; a magic-2 entry finished), numbered and queued on the link of its partition's broker;
 * frames are pooled for reuse.  Below both producer.c (the links' I/O,
 * acknowledgements) and partmap.c (where partitions go), which move
 * requests between queues with these and nothing else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/client/producer.h"
#include "klog/storage/codec.h"
#include "klog/storage/format.h"
#include "klog/storage/pstate.h"
#include "klog/storage/record.h"

#include "producer_impl.h"

#define GZIP_LEVEL 6

void
producer_req_free(struct req *r)
{
	if (r == NULL)
		return;
	klog_buf_free(&r->buf);
	free(r);
}

/* Keep frames for reuse: a fresh 1 MiB buffer costs page faults, a
 * one-record frame two allocations. */
void
producer_req_recycle(klog_producer_t *p, struct req *r)
{
	if (p->npool < POOL_MAX && r->buf.cap <= 4 * p->set_cap &&
	    p->pool_bytes + r->buf.cap <= POOL_BYTES) {
		p->pool[p->npool++] = r;
		p->pool_bytes += r->buf.cap;
		return;
	}
	producer_req_free(r);
}

/* A PRODUCE frame's head is the same for every batch but for the
 * partition: encoded once, then copied (encoding it took a fifth of the
 * producer's instructions at one record a request). */
static int
head_template(klog_producer_t *p)
{
	klog_produce_part_t part = {
		.topic = { p->topic, (uint16_t)strlen(p->topic) },
	};
	klog_produce_req_t preq = {
		.acks = (int16_t)p->cfg.acks, .timeout_ms = p->cfg.timeout_ms,
		.count = 1, .parts = &part,
	};

	if (klog_proto_encode_produce(&p->head, 0, &preq) < 0 ||
	    p->head.failed) {
		klog_buf_free(&p->head);
		return -KLOG_ENOMEM;
	}
	return 0;
}

struct req *
producer_req_new(klog_producer_t *p, int index, int64_t now)
{
	struct req *r;

	if (p->head.len == 0 && head_template(p) < 0)
		return NULL;
	if (p->npool > 0) {
		r = p->pool[--p->npool];
		p->pool_bytes -= r->buf.cap;
	} else if ((r = calloc(1, sizeof(*r))) == NULL) {
		return NULL;
	}
	klog_buf_reset(&r->buf);
	klog_buf_put(&r->buf, p->head.data, p->head.len);
	/* The partition is the head's last field but the set's size. */
	klog_buf_patch_i32(&r->buf, p->head.len - 8, p->part_num[index]);
	if (r->buf.failed) {
		producer_req_free(r);
		return NULL;
	}
	/* Room for a batch as big as the biggest so far, taken at once: grown
	 * by doubling, a fresh buffer's copies cost each record of -K's 15 to
	 * 29 instructions (callgrind). */
	if (p->batch_hint > r->buf.cap && klog_buf_reserve(&r->buf,
	    p->batch_hint - r->buf.len) < 0) {
		producer_req_free(r);
		return NULL;
	}
	r->hdr_len = r->buf.len;
	r->kind = PRODUCER_PLAIN;
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

/*
 * A finished magic-2 entry's records compressed as Kafka's producers do
 * (one block of the codec in place of the records, its number in the
 * attributes), then sealed again.  Kept uncompressed if the codec fails
 * or the entry would outgrow the size limit.
 */
static void
entry_compress(klog_producer_t *p, struct req *r)
{
	size_t at = r->bb.start + KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER,
	    rec = at + KLOG_BATCH_BODY_HEADER;
	uint8_t *z = NULL;
	size_t zlen = 0;
	uint16_t attrs;

	if (r->buf.failed || klog_codec_deflate(p->cfg.codec,
	    KLOG_CODEC_LEVEL_DEFAULT, r->buf.data + rec, r->buf.len - rec, &z,
	    &zlen) < 0 || KLOG_BATCH_BODY_HEADER + zlen > p->cfg.max_message) {
		free(z);
		return;
	}
	r->buf.len = rec;
	klog_buf_put(&r->buf, z, zlen);
	free(z);
	if (r->buf.failed)
		return;
	attrs = (uint16_t)(r->buf.data[at] << 8 | r->buf.data[at + 1]);
	attrs = (uint16_t)((attrs & ~KLOG_BATCH_CODEC_MASK) | p->cfg.codec);
	r->buf.data[at] = (uint8_t)(attrs >> 8);
	r->buf.data[at + 1] = (uint8_t)attrs;
	klog_put_be32(r->buf.data + r->bb.start,
	    (uint32_t)(r->buf.len - r->bb.start - KLOG_LENGTH_SIZE));
	klog_batch_seal(r->buf.data + r->bb.start, r->buf.len - r->bb.start);
}

int
producer_link_push(struct link *l, struct req *r)
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

/* Relocate the partitions at the next poll that is due (see poll). */
void
producer_want_relocate(klog_producer_t *p, int code, const char *why)
{
	p->reloc_pending = 1;
	p->reloc_code = code;
	snprintf(p->reloc_why, sizeof(p->reloc_why), "%s", why);
}

void
producer_tell_done(klog_producer_t *p, const struct req *r,
    int16_t error, int ok, int64_t offset)
{
	klog_producer_done_t d = { r->first_seq, r->records, ok, error,
	    r->index, offset, r->buf.data + r->hdr_len,
	    r->buf.len - r->hdr_len };

	if (p->cfg.done != NULL && r->records > 0)
		p->cfg.done(p->cfg.arg, &d);
}

/* Number a finished frame and queue it on its partition's link. */
int
producer_enqueue(klog_producer_t *p, struct req *r)
{
	struct link *l = &p->links[p->part_link[r->index]];

	if (r->buf.failed) {
		producer_req_free(r);
		return -KLOG_ENOMEM;
	}
	if (p->next_id == INT32_MAX)
		p->next_id = 0;
	r->id = ++p->next_id;
	klog_buf_patch_i32(&r->buf, 0, (int32_t)(r->buf.len - 4));
	klog_buf_patch_i32(&r->buf, 8, r->id);
	klog_buf_patch_i32(&r->buf, r->hdr_len - 4,
	    (int32_t)(r->buf.len - r->hdr_len));
	if (producer_link_push(l, r) < 0) {
		producer_req_free(r);
		return -KLOG_ENOMEM;
	}
	p->queued++;
	p->queued_bytes += r->buf.len;
	return 0;
}

/* Without a key, skip partitions without a leader, as Kafka's partitioner
 * skips unavailable ones (unless none has one). */
void
producer_skip_limbo(klog_producer_t *p)
{
	for (int k = 0; p->limbo >= 0 && k < p->npart &&
	    p->part_link[p->sticky] == p->limbo; k++)
		p->sticky = (p->sticky + 1) % p->npart;
}

/*
 * An idempotent batch's first sequence: its partition's next, which its
 * records then advance.  Taken once, when the batch is sealed (only one
 * is open per partition, and they are sealed in order): its retries are
 * the same frame, byte for byte.
 */
static int
take_sequence(klog_producer_t *p, struct req *r)
{
	int32_t *seq;
	int cap;

	if (r->index >= p->seq_cap) {
		cap = r->index + 1 > 2 * p->seq_cap ? r->index + 1 :
		    2 * p->seq_cap;
		if ((seq = realloc(p->seq, (size_t)cap * sizeof(*seq))) ==
		    NULL)
			return -KLOG_ENOMEM;
		memset(seq + p->seq_cap, 0, (size_t)(cap - p->seq_cap) *
		    sizeof(*seq));
		p->seq = seq;
		p->seq_cap = cap;
	}
	r->bb.fields.base_sequence = p->seq[r->index];
	/* The next batch's: this one's last plus one, wrapping as the
	 * broker counts (pstate.h). */
	p->seq[r->index] = klog_pstate_last_seq(p->seq[r->index],
	    (int32_t)r->records + 1);
	return 0;
}

int
producer_seal(klog_producer_t *p, int index)
{
	struct req *r = p->open[index];

	p->open[index] = NULL;
	p->nopen--;
	if (r->buf.len > p->batch_hint)
		p->batch_hint = r->buf.len;
	if (p->pid != KLOG_NO_PRODUCER && take_sequence(p, r) < 0) {
		producer_req_free(r);
		return -KLOG_ENOMEM;
	}
	if (r->kind != PRODUCER_PLAIN &&
	    klog_batch_end(&r->bb, &r->buf) == 0 &&  /* failed: buf says */
	    p->cfg.codec != KLOG_CODEC_NONE)
		entry_compress(p, r);
	else if (r->kind == PRODUCER_PLAIN && p->cfg.codec == KLOG_CODEC_GZIP)
		req_compress(p, r);
	if (p->cfg.partition < 0 && index == p->sticky) {
		p->sticky = (p->sticky + 1) % p->npart;
		producer_skip_limbo(p);
	}
	return producer_enqueue(p, r);
}

void
klog_producer_flush(klog_producer_t *p)
{
	for (int i = 0; i < p->npart && p->nopen > 0; i++)
		if (p->open[i] != NULL)
			producer_seal(p, i);
}
