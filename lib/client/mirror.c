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
#include "klog/client/renumber.h"

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
	size_t n, cap;             /* cap in bytes (klog_buf_grow) */
};

/* A request of this run's producer acknowledged, not yet settled past. */
struct acked {
	int32_t index;
	int64_t end;               /* just past its entry */
	uint64_t last;             /* its last record's send number */
};

/* A source partition's saved position at: the first k records there are
 * copied (a batch or wrapper the position is inside); the next run skips
 * them, left of them still to come. */
struct within {
	int64_t at;
	uint32_t k, left;
	int from_file;             /* (at, k) as F says, until a record of
	                              the partition past those k settles */
	uint32_t seen;             /* of those k, settled again */
};

/* A record noted, for the within state once it settles. */
struct event {
	uint64_t number;
	int32_t partition;
	int inside;                /* its offset is its next one */
	int64_t next;
};


struct klog_mirror {
	klog_bookmark_t *bm;
	const char *topic;
	char *prefix;              /* "# klog-produce: topic T " */
	char source[KLOG_TOPIC_MAX + 1];  /* "" until known */
	struct within *within;     /* by source partition */
	size_t nwithin;
	struct event *ev;          /* ev[evhead..nev): oldest first */
	size_t evhead, nev, evcap; /* evcap in bytes */
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
	size_t nacked, acked_cap;  /* acked_cap in bytes */
	klog_mirror_bag_t bag;     /* R */
	uint64_t recalled;
	uint64_t sent, skipped;    /* skipped: R's and again */
	uint64_t again;            /* skipped inside a batch (within) */
	uint64_t first_skip, last_skip;   /* bookmark numbers, 0: none */
	klog_renumber_t numbers;   /* send numbers to the bookmark's */
	klog_buf_t notes;
};

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
		if (klog_buf_grow((void **)&o->at, &o->cap,
		    (o->n + 1) * sizeof(*o->at)) < 0)
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

	if (klog_buf_grow((void **)&m->owners, cap,
	    (m->nowners + 1) * sizeof(*m->owners)) < 0 ||
	    (copy = strdup(line)) == NULL)
		return -KLOG_ENOMEM;
	memset(&m->owners[m->nowners], 0, sizeof(*m->owners));
	/* Counted either way, so that close frees what it parsed. */
	rc = parse_owner(copy, &m->owners[m->nowners++], why);
	free(copy);
	return rc;
}

/* Source partition p's within state, the array grown. */
static struct within *
within_at(klog_mirror_t *m, int32_t p)
{
	size_t n = (size_t)p + 1;
	struct within *v;

	if (n > m->nwithin) {
		if ((v = realloc(m->within, n * sizeof(*v))) == NULL)
			return NULL;
		memset(v + m->nwithin, 0, (n - m->nwithin) * sizeof(*v));
		m->within = v;
		m->nwithin = n;
	}
	return &m->within[p];
}

/* "SOURCE P:AT:K ..." into the within states: 0, -1 with *why, or
 * -KLOG_ENOMEM. */
static int
take_within(klog_mirror_t *m, const char *line, const char **why)
{
	char *copy, *save = NULL, *w, *c1, *c2;
	struct within *x;
	int64_t p, at, k;
	int rc = 0;

	if ((copy = strdup(line)) == NULL)
		return -KLOG_ENOMEM;
	if ((w = strtok_r(copy, " ", &save)) == NULL ||
	    klog_topic_validate(w, NULL) < 0) {
		*why = "inside: no source topic";
		rc = -1;
		goto out;
	}
	snprintf(m->source, sizeof(m->source), "%s", w);
	while ((w = strtok_r(NULL, " ", &save)) != NULL) {
		if ((c1 = strchr(w, ':')) == NULL ||
		    (c2 = strchr(c1 + 1, ':')) == NULL) {
			*why = "expected PARTITION:OFFSET:RECORDS";
			rc = -1;
			goto out;
		}
		*c1 = *c2 = '\0';
		if (klog_parse_i64(w, 0, INT32_MAX, &p, why) < 0 ||
		    klog_parse_i64(c1 + 1, 0, INT64_MAX, &at, why) < 0 ||
		    klog_parse_i64(c2 + 1, 1, UINT32_MAX, &k, why) < 0) {
			rc = -1;
			goto out;
		}
		if ((x = within_at(m, (int32_t)p)) == NULL) {
			rc = -KLOG_ENOMEM;
			goto out;
		}
		*x = (struct within){ at, (uint32_t)k, (uint32_t)k, 1, 0 };
	}
out:
	free(copy);
	return rc;
}

/* F's lines of the topic: the producer lines kept as text, and parsed;
 * the inside line parsed. */
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
		const char *line = f->notes[i] + plen;

		if (strncmp(f->notes[i], m->prefix, plen) != 0)
			continue;
		m->had_lines = 1;
		if (strncmp(line, "inside ", 7) == 0) {
			rc = take_within(m, line + 7, &why);
			continue;
		}
		if (strncmp(line, "producer ", 9) != 0) {
			why = "expected producer or inside";
			rc = -1;
			continue;
		}
		klog_buf_put(&text, f->notes[i], strlen(f->notes[i]));
		klog_buf_put(&text, "\n", 1);
		rc = add_owner(m, line + 9, &cap, &why);
	}
	klog_buf_put(&text, "", 1);
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
	snprintf(m->prefix, plen, "# klog-produce: topic %s ", topic);
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
			if (klog_buf_grow((void **)&v, &cap,
			    (*n + 1) * sizeof(*v)) < 0) {
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
	return klog_renumber_map(&m->numbers, seq);
}

/* Record the note of record number k for the within state. */
static int
push_event(klog_mirror_t *m, uint64_t k, int32_t partition, int64_t own,
    int64_t next)
{
	if (m->evhead > 0 && (m->nev + 1) * sizeof(*m->ev) > m->evcap) {
		memmove(m->ev, m->ev + m->evhead, (m->nev - m->evhead) *
		    sizeof(*m->ev));
		m->nev -= m->evhead;
		m->evhead = 0;
	}
	if (klog_buf_grow((void **)&m->ev, &m->evcap,
	    (m->nev + 1) * sizeof(*m->ev)) < 0 ||
	    within_at(m, partition) == NULL)
		return -KLOG_ENOMEM;
	m->ev[m->nev++] = (struct event){ k, partition, own == next, next };
	return 0;
}

/* 1 if the record at (partition, own) is one of the first records of a
 * batch the last run settled inside of. */
static int
copied_inside(klog_mirror_t *m, int32_t partition, int64_t own)
{
	struct within *x;

	if ((size_t)partition >= m->nwithin ||
	    (x = &m->within[partition])->left == 0)
		return 0;
	if (own != x->at) {
		/* The source did not start there: nothing to skip. */
		x->left = 0;
		return 0;
	}
	x->left--;
	return 1;
}

int
klog_mirror_note(klog_mirror_t *m, const klog_record_in_t *rec,
    const char *topic, int32_t partition, int64_t own, int64_t next,
    klog_err_t *err)
{
	uint64_t k = m->sent + m->skipped + 1;
	int again, rc;

	if ((rc = klog_bookmark_note(m->bm, k, topic, partition, next,
	    err)) < 0)
		return rc;
	if (!m->idempotent)
		return 0;
	if (m->source[0] == '\0')
		snprintf(m->source, sizeof(m->source), "%s", topic);
	if ((rc = push_event(m, k, partition, own, next)) < 0)
		return klog_err_set(err, rc, "out of memory");
	if ((again = copied_inside(m, partition, own)) == 0 &&
	    (m->bag.count == 0 ||
	    !klog_mirror_bag_take(&m->bag, klog_mirror_hash(rec))))
		return 0;
	if ((rc = klog_bookmark_done(m->bm, k, 1, 1)) < 0)
		return klog_err_set(err, rc, "out of memory");
	m->skipped++;
	if (again) {
		m->again++;
		return 1;
	}
	if (m->first_skip == 0)
		m->first_skip = k;
	m->last_skip = k;
	return 1;
}

int
klog_mirror_sent(klog_mirror_t *m)
{
	m->sent++;
	return klog_renumber_from(&m->numbers, m->sent, m->skipped);
}

int
klog_mirror_done(klog_mirror_t *m, const klog_producer_done_t *d)
{
	uint64_t s = d->first, end = d->first + d->records, stop;
	int64_t *at;
	int rc;

	/* A request's send numbers, in pieces the skips do not cut. */
	for (; s < end; s = stop) {
		stop = klog_renumber_run_end(&m->numbers, s, end);
		if ((rc = klog_bookmark_done(m->bm, number_of(m, s),
		    (uint32_t)(stop - s), d->ok)) < 0)
			return rc;
	}
	if (!m->idempotent || m->pid == KLOG_NO_PRODUCER || !d->ok ||
	    d->offset < 0)
		return 0;
	if ((at = cur_at(m, d->partition)) == NULL ||
	    klog_buf_grow((void **)&m->acked,
	    &m->acked_cap, (m->nacked + 1) * sizeof(*m->acked)) < 0)
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

/* The records settled up to number upto: each source partition's
 * position, and how many records inside a batch there are copied. */
static void
advance(klog_mirror_t *m, uint64_t upto)
{
	struct within *x;

	for (; m->evhead < m->nev && m->ev[m->evhead].number <= upto;
	    m->evhead++) {
		const struct event *e = &m->ev[m->evhead];

		/* Allocated at the note. */
		x = &m->within[e->partition];
		/* The records F counted come again first: F's count holds
		 * until a record past them settles. */
		if (x->from_file && e->inside && e->next == x->at &&
		    ++x->seen <= x->k)
			continue;
		x->from_file = 0;
		if (!e->inside)
			x->k = 0;
		else if (x->k > 0 && x->at == e->next)
			x->k++;
		else
			x->k = 1;
		x->at = e->next;
	}
}

/* The inside line, if a position is inside a batch. */
static void
notes_within(klog_mirror_t *m)
{
	char part[80];
	int len, any = 0;

	for (size_t i = 0; i < m->nwithin; i++) {
		if (m->within[i].k == 0)
			continue;
		if (!any++) {
			klog_buf_put(&m->notes, m->prefix, strlen(m->prefix));
			klog_buf_put(&m->notes, "inside ", 7);
			klog_buf_put(&m->notes, m->source, strlen(m->source));
		}
		len = snprintf(part, sizeof(part), " %zu:%" PRId64 ":%" PRIu32,
		    i, m->within[i].at, m->within[i].k);
		klog_buf_put(&m->notes, part, (size_t)len);
	}
	if (any)
		klog_buf_put(&m->notes, "\n", 1);
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
	klog_buf_put(&m->notes, "producer ", 9);
	klog_buf_put(&m->notes, part, (size_t)len);
	for (size_t i = 0; i < m->ncur; i++)
		if (m->cur[i] >= 0) {
			len = snprintf(part, sizeof(part), " %zu:%" PRId64, i,
			    m->cur[i]);
			klog_buf_put(&m->notes, part, (size_t)len);
		}
	klog_buf_put(&m->notes, "\n", 1);
	notes_within(m);
	klog_buf_put(&m->notes, "", 1);
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
	advance(m, upto);
	if ((text = notes(m)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	return klog_bookmark_settle(m->bm, upto, m->prefix, text, err);
}

void
klog_mirror_counts(const klog_mirror_t *m, klog_mirror_counts_t *c)
{
	c->found = m->recalled;
	c->inside = 0;
	for (size_t i = 0; i < m->nwithin; i++)
		c->inside += m->within[i].from_file ? m->within[i].k : 0;
	c->skipped = m->skipped - m->again;
	c->again = m->again;
	c->left = m->bag.count;
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
	klog_renumber_free(&m->numbers);
	free(m->within);
	free(m->ev);
	klog_mirror_bag_free(&m->bag);
	klog_buf_free(&m->notes);
	free(m);
}
