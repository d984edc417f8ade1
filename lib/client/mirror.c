/* What a restarted mirror finds already copied; see mirror.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/parse.h"
#include "klog/client/bookmark.h"
#include "klog/client/mirror.h"
#include "klog/client/offsetfile.h"

struct klog_mirror_slot {
	uint64_t h;
	uint32_t n;                /* of h held now */
	uint32_t used;             /* h was held (the probe goes on) */
};

/* A partition's offset in a producer line. */
struct at {
	int32_t index;
	int64_t offset;
};

/* An earlier run's producer, from its line in F. */
struct owner {
	int64_t pid;
	struct at *at;
	size_t n, cap;
};

/* A request of this run's producer acknowledged, not yet settled past. */
struct acked {
	int32_t index;
	int64_t end;               /* just past its entry */
	uint64_t last;             /* its last record's send number */
};

/* From send number seq on, the bookmark's numbers are seq + delta (the
 * records skipped before it). */
struct gap {
	uint64_t seq, delta;
};

struct klog_mirror {
	klog_bookmark_t *bm;
	const char *topic;
	char *prefix;              /* "# klog-produce: topic T producer " */
	int idempotent;
	int had_lines;             /* F held lines of the topic at open */
	char *old;                 /* those lines, each ended by '\n' */
	struct owner *owners;
	size_t nowners;
	int carry;                 /* old still saved beside the current */
	int64_t pid;               /* KLOG_NO_PRODUCER until begun */
	int64_t *cur;              /* per index, -1: none */
	size_t ncur;
	struct acked *acked;
	size_t nacked, acked_cap;
	klog_mirror_bag_t bag;     /* R */
	uint64_t recalled;
	uint64_t sent, skipped;
	uint64_t first_skip, last_skip;   /* bookmark numbers, 0: none */
	struct gap *gaps;
	size_t ngaps, gaps_cap;
	klog_buf_t notes;
};

/* Grow *v (*cap elements of size) to hold one more than n. */
static int
room(void *v, size_t *cap, size_t n, size_t size)
{
	void **p = v, *q;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : 16;
	if ((q = realloc(*p, ncap * size)) == NULL)
		return -KLOG_ENOMEM;
	*p = q;
	*cap = ncap;
	return 0;
}

static struct klog_mirror_slot *
bag_find(const klog_mirror_bag_t *bag, uint64_t h)
{
	size_t i = (size_t)(h ^ h >> 29) & (bag->cap - 1);

	while (bag->slots[i].used && bag->slots[i].h != h)
		i = (i + 1) & (bag->cap - 1);
	return &bag->slots[i];
}

int
klog_mirror_bag_add(klog_mirror_bag_t *bag, uint64_t h)
{
	struct klog_mirror_slot *s, *old = bag->slots;
	size_t ocap = bag->cap;

	if (2 * (bag->used + 1) > bag->cap) {
		bag->cap = ocap ? 2 * ocap : 64;
		if ((bag->slots = calloc(bag->cap, sizeof(*s))) == NULL) {
			bag->slots = old;
			bag->cap = ocap;
			return -KLOG_ENOMEM;
		}
		for (size_t i = 0; i < ocap; i++)
			if (old[i].used)
				*bag_find(bag, old[i].h) = old[i];
		free(old);
	}
	s = bag_find(bag, h);
	if (!s->used) {
		s->h = h;
		s->used = 1;
		bag->used++;
	}
	s->n++;
	bag->count++;
	return 0;
}

int
klog_mirror_bag_take(klog_mirror_bag_t *bag, uint64_t h)
{
	struct klog_mirror_slot *s;

	if (bag->count == 0 || (s = bag_find(bag, h))->n == 0)
		return 0;
	s->n--;
	bag->count--;
	return 1;
}

void
klog_mirror_bag_free(klog_mirror_bag_t *bag)
{
	free(bag->slots);
	memset(bag, 0, sizeof(*bag));
}

/* FNV-1a, 64-bit, of v's 8 bytes. */
static uint64_t
mix_n(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * 0x100000001b3ULL;
	return h;
}

/* The same of a field: its length (-1: null), then its bytes. */
static uint64_t
mix(uint64_t h, const void *p, int64_t len)
{
	const uint8_t *b = p;

	h = mix_n(h, (uint64_t)len);
	for (int64_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

#define FNV_BASIS 0xcbf29ce484222325ULL

uint64_t
klog_mirror_hash(const klog_record_in_t *rec)
{
	uint64_t h = FNV_BASIS;

	h = mix(h, rec->key, rec->key ? (int64_t)rec->key_len : -1);
	h = mix(h, rec->value, rec->value ? (int64_t)rec->value_len : -1);
	h = mix_n(h, rec->header_count);
	for (uint32_t i = 0; i < rec->header_count; i++) {
		const klog_header_t *x = &rec->headers[i];

		h = mix(h, x->key, (int64_t)x->key_len);
		h = mix(h, x->value, x->value ? x->value_len : -1);
	}
	return h;
}

uint64_t
klog_mirror_hash_msg(const klog_consumer_msg_t *m)
{
	uint64_t h = FNV_BASIS;
	klog_header_t x;
	size_t pos = 0;

	h = mix(h, m->key, m->key ? m->key_len : -1);
	h = mix(h, m->payload, m->payload ? (int64_t)m->payload_len : -1);
	h = mix_n(h, m->header_count);
	while (klog_record_header_next(m->headers, m->headers_len, &pos,
	    &x) == 1) {
		h = mix(h, x.key, (int64_t)x.key_len);
		h = mix(h, x.value, x.value ? x.value_len : -1);
	}
	return h;
}

/* "ID INDEX:OFFSET ..." (s is changed) into o. */
static int
parse_owner(char *s, struct owner *o, const char **why)
{
	char *save = NULL, *w, *colon;
	int64_t v;

	if ((w = strtok_r(s, " ", &save)) == NULL) {
		*why = "no producer id";
		return -1;
	}
	if (klog_parse_i64(w, 0, INT64_MAX, &o->pid, why) < 0)
		return -1;
	while ((w = strtok_r(NULL, " ", &save)) != NULL) {
		if ((colon = strchr(w, ':')) == NULL) {
			*why = "expected INDEX:OFFSET";
			return -1;
		}
		*colon = '\0';
		if (room(&o->at, &o->cap, o->n, sizeof(*o->at)) < 0)
			return -KLOG_ENOMEM;
		if (klog_parse_i64(w, 0, INT32_MAX, &v, why) < 0 ||
		    klog_parse_i64(colon + 1, 0, INT64_MAX,
		    &o->at[o->n].offset, why) < 0)
			return -1;
		o->at[o->n++].index = (int32_t)v;
	}
	return 0;
}

/* A line of the topic's (after the prefix) into a new owner: 0, -1 with
 * *why, or -KLOG_ENOMEM. */
static int
add_owner(klog_mirror_t *m, const char *line, size_t *cap, const char **why)
{
	char *copy;
	int rc;

	if (room(&m->owners, cap, m->nowners, sizeof(*m->owners)) < 0 ||
	    (copy = strdup(line)) == NULL)
		return -KLOG_ENOMEM;
	memset(&m->owners[m->nowners], 0, sizeof(*m->owners));
	/* Counted either way, so that close frees what it parsed. */
	rc = parse_owner(copy, &m->owners[m->nowners++], why);
	free(copy);
	return rc;
}

/* F's lines of the topic: kept as text, and parsed. */
static int
take_lines(klog_mirror_t *m, const klog_offsetfile_t *f, const char *path,
    klog_err_t *err)
{
	size_t plen = strlen(m->prefix), cap = 0;
	const char *why = NULL;
	klog_buf_t text;
	int rc = 0;

	klog_buf_init(&text);
	for (size_t i = 0; i < f->nnotes && rc == 0; i++) {
		if (strncmp(f->notes[i], m->prefix, plen) != 0)
			continue;
		klog_buf_put(&text, f->notes[i], strlen(f->notes[i]));
		klog_buf_put(&text, "\n", 1);
		rc = add_owner(m, f->notes[i] + plen, &cap, &why);
	}
	klog_buf_put(&text, "", 1);
	m->had_lines = m->nowners > 0;
	m->old = (char *)text.data;
	if (rc == -1)
		return klog_err_set(err, -KLOG_ECORRUPT, "%s: mirror state of "
		    "topic \"%s\": %s", path, m->topic, why);
	if (rc == 0 && text.failed)
		rc = -KLOG_ENOMEM;
	return rc < 0 ? klog_err_set(err, rc, "out of memory") : 0;
}

int
klog_mirror_open(const char *path, const char *topic, int idempotent,
    klog_mirror_t **out, klog_err_t *err)
{
	klog_offsetfile_t f;
	klog_mirror_t *m;
	size_t plen = strlen(topic) + 40;
	int rc;

	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (m->prefix = malloc(plen)) == NULL) {
		free(m);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	snprintf(m->prefix, plen, "# klog-produce: topic %s producer ", topic);
	m->topic = topic;
	m->idempotent = idempotent;
	m->pid = KLOG_NO_PRODUCER;
	klog_buf_init(&m->notes);
	if ((rc = klog_offsetfile_load(path, &f, err)) == 0)
		rc = take_lines(m, &f, path, err);
	klog_offsetfile_free(&f);
	if (rc == 0)
		rc = klog_bookmark_open(path, &m->bm, err);
	if (rc < 0) {
		klog_mirror_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

int
klog_mirror_recall(klog_mirror_t *m, int32_t index,
    const klog_consumer_msg_t *msg)
{
	klog_batch_t b;
	int rc;

	if (msg->batch == NULL ||
	    klog_batch_read(msg->batch, msg->batch_len, &b) < 0 ||
	    b.producer_id == KLOG_NO_PRODUCER)
		return 0;
	for (size_t i = 0; i < m->nowners; i++) {
		const struct owner *o = &m->owners[i];

		if (o->pid != b.producer_id)
			continue;
		for (size_t j = 0; j < o->n; j++)
			if (o->at[j].index == index &&
			    msg->offset >= o->at[j].offset) {
				if ((rc = klog_mirror_bag_add(&m->bag,
				    klog_mirror_hash_msg(msg))) < 0)
					return rc;
				m->recalled++;
				return 0;
			}
	}
	return 0;
}

/* Index's offset of this run's line, growing the array. */
static int64_t *
cur_at(klog_mirror_t *m, int32_t index)
{
	size_t n = (size_t)index + 1;
	int64_t *v;

	if (n > m->ncur) {
		if ((v = realloc(m->cur, n * sizeof(*v))) == NULL)
			return NULL;
		for (size_t i = m->ncur; i < n; i++)
			v[i] = -1;
		m->cur = v;
		m->ncur = n;
	}
	return &m->cur[index];
}

int
klog_mirror_begin(klog_mirror_t *m, int64_t pid, const int64_t *ends,
    size_t n, klog_err_t *err)
{
	int64_t *at;

	m->pid = pid;
	for (size_t i = 0; i < n; i++) {
		if (ends[i] < 0)
			continue;
		if ((at = cur_at(m, (int32_t)i)) == NULL)
			return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		*at = ends[i];
	}
	m->carry = m->bag.count > 0;
	/* Saved before the first record goes: a kill from here on finds
	 * this run's records by its id. */
	return klog_mirror_settle(m, err);
}

/* Where the consumer starts: each listed partition's least offset. */
static int
starts_of(const klog_mirror_t *m, klog_consumer_pos_t **out, size_t *n)
{
	klog_consumer_pos_t *v = NULL;
	size_t cap = 0, k;

	*n = 0;
	for (size_t i = 0; i < m->nowners; i++)
		for (size_t j = 0; j < m->owners[i].n; j++) {
			const struct at *a = &m->owners[i].at[j];

			for (k = 0; k < *n && v[k].partition != a->index; k++)
				;
			if (k < *n) {
				if (a->offset < v[k].offset)
					v[k].offset = a->offset;
				continue;
			}
			if (room(&v, &cap, *n, sizeof(*v)) < 0) {
				free(v);
				return -KLOG_ENOMEM;
			}
			v[(*n)++] = (klog_consumer_pos_t){ a->index, a->offset };
		}
	*out = v;
	return 0;
}

/* Every partition's end at open, by index (-1 where not read). */
static int
ends_of(const klog_consumer_t *c, int64_t **out, size_t *n)
{
	size_t count = klog_consumer_count(c);
	int64_t *v;

	*n = 0;
	for (size_t i = 0; i < count; i++)
		if ((size_t)klog_consumer_partition(c, i) + 1 > *n)
			*n = (size_t)klog_consumer_partition(c, i) + 1;
	if ((v = malloc((*n + 1) * sizeof(*v))) == NULL)
		return -KLOG_ENOMEM;
	for (size_t i = 0; i < *n; i++)
		v[i] = -1;
	for (size_t i = 0; i < count; i++)
		v[klog_consumer_partition(c, i)] = klog_consumer_end(c, i);
	*out = v;
	return 0;
}

int
klog_mirror_start(klog_mirror_t *m, klog_discovery_t *d, int64_t pid,
    int connect_timeout_ms, klog_err_t *err)
{
	klog_consumer_config_t cfg;
	klog_consumer_t *c = NULL;
	klog_consumer_pos_t *starts = NULL;
	klog_consumer_msg_t msg;
	int64_t *ends = NULL;
	size_t n;
	int rc;

	if ((rc = starts_of(m, &starts, &n)) < 0)
		return klog_err_set(err, rc, "out of memory");
	klog_consumer_config_default(&cfg);
	cfg.topic = m->topic;
	cfg.start = KLOG_CONSUMER_END;
	cfg.starts = starts;
	cfg.nstarts = n;
	cfg.exit_at_end = 1;
	cfg.reset = KLOG_CONSUMER_RESET_EARLIEST;
	cfg.connect_timeout_ms = connect_timeout_ms;
	if ((rc = klog_consumer_open(d, &cfg, &c, err)) < 0)
		goto out;
	while ((rc = klog_consumer_next(c, &msg, err)) >= 0 &&
	    rc != KLOG_CONSUMER_DONE)
		if (rc == KLOG_CONSUMER_MSG &&
		    (rc = klog_mirror_recall(m, msg.partition, &msg)) < 0) {
			klog_err_set(err, rc, "out of memory");
			goto out;
		}
	if (rc < 0)
		goto out;
	if ((rc = ends_of(c, &ends, &n)) < 0) {
		klog_err_set(err, rc, "out of memory");
		goto out;
	}
	rc = klog_mirror_begin(m, pid, ends, n, err);
out:
	free(ends);
	free(starts);
	klog_consumer_close(c);
	return rc;
}

/* The bookmark's number of send number seq. */
static uint64_t
number_of(const klog_mirror_t *m, uint64_t seq)
{
	size_t lo = 0, hi = m->ngaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->gaps[mid].seq <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return seq + (lo > 0 ? m->gaps[lo - 1].delta : 0);
}

int
klog_mirror_note(klog_mirror_t *m, const klog_record_in_t *rec,
    const char *topic, int32_t partition, int64_t offset, klog_err_t *err)
{
	uint64_t k = m->sent + m->skipped + 1;
	int rc;

	if ((rc = klog_bookmark_note(m->bm, k, topic, partition, offset,
	    err)) < 0)
		return rc;
	if (m->bag.count == 0 ||
	    !klog_mirror_bag_take(&m->bag, klog_mirror_hash(rec)))
		return 0;
	if ((rc = klog_bookmark_done(m->bm, k, 1, 1)) < 0)
		return klog_err_set(err, rc, "out of memory");
	m->skipped++;
	if (m->first_skip == 0)
		m->first_skip = k;
	m->last_skip = k;
	return 1;
}

int
klog_mirror_sent(klog_mirror_t *m)
{
	m->sent++;
	if ((m->ngaps > 0 ? m->gaps[m->ngaps - 1].delta : 0) == m->skipped)
		return 0;
	if (room(&m->gaps, &m->gaps_cap, m->ngaps, sizeof(*m->gaps)) < 0)
		return -KLOG_ENOMEM;
	m->gaps[m->ngaps++] = (struct gap){ m->sent, m->skipped };
	return 0;
}

int
klog_mirror_done(klog_mirror_t *m, const klog_producer_done_t *d)
{
	uint64_t s = d->first, end = d->first + d->records, stop;
	size_t g;
	int64_t *at;
	int rc;

	/* A request's send numbers, in pieces the skips do not cut. */
	for (g = 0; g < m->ngaps && m->gaps[g].seq <= s; g++)
		;
	for (; s < end; s = stop, g++) {
		stop = g < m->ngaps && m->gaps[g].seq < end ? m->gaps[g].seq :
		    end;
		if ((rc = klog_bookmark_done(m->bm, number_of(m, s),
		    (uint32_t)(stop - s), d->ok)) < 0)
			return rc;
	}
	if (!m->idempotent || m->pid == KLOG_NO_PRODUCER || !d->ok ||
	    d->offset < 0)
		return 0;
	if ((at = cur_at(m, d->partition)) == NULL ||
	    room(&m->acked, &m->acked_cap, m->nacked, sizeof(*m->acked)) < 0)
		return -KLOG_ENOMEM;
	/* A partition this run found no end of: it wrote there first. */
	if (*at < 0)
		*at = d->offset;
	m->acked[m->nacked++] = (struct acked){ d->partition,
	    d->offset + (int64_t)d->set_len, d->first + d->records - 1 };
	return 0;
}

/* This run's requests settled up to number upto: their partitions'
 * offsets move past them. */
static void
cover(klog_mirror_t *m, uint64_t upto)
{
	for (size_t i = 0; i < m->nacked; )
		if (number_of(m, m->acked[i].last) <= upto) {
			if (m->acked[i].end > m->cur[m->acked[i].index])
				m->cur[m->acked[i].index] = m->acked[i].end;
			m->acked[i] = m->acked[--m->nacked];
		} else {
			i++;
		}
}

/* The notes: the carried lines, then this run's. */
static const char *
notes(klog_mirror_t *m)
{
	char part[64];
	int len;

	klog_buf_reset(&m->notes);
	if (m->carry)
		klog_buf_put(&m->notes, m->old, strlen(m->old));
	len = snprintf(part, sizeof(part), "%" PRId64, m->pid);
	klog_buf_put(&m->notes, m->prefix, strlen(m->prefix));
	klog_buf_put(&m->notes, part, (size_t)len);
	for (size_t i = 0; i < m->ncur; i++)
		if (m->cur[i] >= 0) {
			len = snprintf(part, sizeof(part), " %zu:%" PRId64, i,
			    m->cur[i]);
			klog_buf_put(&m->notes, part, (size_t)len);
		}
	klog_buf_put(&m->notes, "\n", 2);
	return m->notes.failed ? NULL : (const char *)m->notes.data;
}

int
klog_mirror_settle(klog_mirror_t *m, klog_err_t *err)
{
	uint64_t upto = klog_bookmark_upto(m->bm);
	const char *text;

	if (!m->idempotent)
		return klog_bookmark_settle(m->bm, upto, m->had_lines ?
		    m->prefix : NULL, "", err);
	if (m->pid == KLOG_NO_PRODUCER)
		return klog_bookmark_settle(m->bm, upto, NULL, NULL, err);
	if (m->carry && m->bag.count == 0 && m->last_skip <= upto)
		m->carry = 0;
	/* While R is caught up with, no record skipped is settled: a kill
	 * then finds all of R again, and the source sends all of it back. */
	if (m->carry && m->first_skip != 0 && upto >= m->first_skip)
		upto = m->first_skip - 1;
	cover(m, upto);
	if ((text = notes(m)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	return klog_bookmark_settle(m->bm, upto, m->prefix, text, err);
}

void
klog_mirror_counts(const klog_mirror_t *m, uint64_t *recalled,
    uint64_t *skipped, uint64_t *left)
{
	*recalled = m->recalled;
	*skipped = m->skipped;
	*left = m->bag.count;
}

void
klog_mirror_close(klog_mirror_t *m)
{
	if (m == NULL)
		return;
	klog_bookmark_close(m->bm);
	for (size_t i = 0; i < m->nowners; i++)
		free(m->owners[i].at);
	free(m->owners);
	free(m->old);
	free(m->prefix);
	free(m->cur);
	free(m->acked);
	free(m->gaps);
	klog_mirror_bag_free(&m->bag);
	klog_buf_free(&m->notes);
	free(m);
}
