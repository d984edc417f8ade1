/*
 * The broker: one event-loop thread owns the sockets, the store and every
 * structure here; a flusher thread runs klog_log_flush() (fsync) on the
 * partitions the loop hands it and wakes the loop when done.  See broker.h
 * for the visibility rules this implements.
 *
 * Pieces, top to bottom:
 *   topics and partitions   a hash of topic names, partitions made lazily
 *   the flusher             request queue, group commit, completion list
 *   pending responses       "pends": acks=all, long polls, OFFSETS waiting
 *                           for a flush; their items link into partitions
 *   requests                PRODUCE, FETCH, OFFSETS, METADATA
 *   connections             framing, bounded buffers, pause and resume,
 *                           cold file ranges read in by the prefetch thread
 *   loop glue               accept, before-sleep, wakeup, timers, shutdown
 *
 * Appends are staged: the message sets of every PRODUCE in one read batch
 * stay where they are in the read buffer and go to each partition's log in
 * one pwritev() when the batch is done (or before any other request, so that
 * a FETCH or OFFSETS pipelined behind a PRODUCE sees it).  Their responses
 * are encoded meanwhile but not sent until then: each staged set remembers
 * where its result is (a byte position in the output buffer, or an item of a
 * waiting pend), and a set the write could not take has its result turned
 * into an error there.  So an acknowledgement is never sent for bytes that
 * are not in the log, and the log never holds a set whose producer was told
 * it failed.
 *
 * Memory on the hot path: requests are decoded from a shared read buffer
 * into arrays reused across requests, responses are encoded straight into
 * the connection's output queue, and nothing is allocated per request
 * unless it has to wait.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "klog/broker.h"
#include "klog/buf.h"
#include "klog/error.h"
#include "klog/format.h"
#include "klog/log.h"
#include "klog/loop.h"
#include "klog/outq.h"
#include "klog/parse.h"
#include "klog/prefetch.h"
#include "klog/proto.h"
#include "klog/store.h"
#include "klog/verify.h"

#define READ_CHUNK ((size_t)1 << 20)  /* one read(2) into the shared buffer */
#define AUTO_CRC_THREADS 3
#define COPY_MAX ((size_t)16 << 10)     /* leftovers this small go back through
                                           the shared buffer */
#define MAX_HOLDS 1024                  /* pending responses per connection */
#define FETCH_BUDGET ((int64_t)512 << 20)  /* file bytes in one response */
#define MAX_OFFSETS 1024                /* offsets per OFFSETS partition */
#define STAGE_SETS 1024                 /* staged sets per partition ... */
#define STAGE_BYTES ((int64_t)8 << 20)  /* ... and bytes, before a write */
#define ACCEPT_BATCH 64
#define ACCEPT_PAUSE_MS 100
#define LISTEN_BACKLOG 511

/* ---- types ---- */

struct pend;

/*
 * One partition of a request: decoded into this form, answered from it, and
 * (when the request has to wait) linked into its partition's waiter list.
 */
struct item {
	struct pend *pend;
	struct part *part;        /* NULL when error is set at lookup */
	struct item *prev, *next; /* in part->waiters while linked */
	int linked;
	klog_str_t topic;
	int32_t partition;
	int16_t error;
	int64_t offset;           /* produce: first offset; fetch: where from;
	                             offsets: the time asked */
	int32_t max;              /* fetch: max bytes; offsets: max count */
	int64_t target;           /* flushed end awaited, or -1 */
	int64_t staged;           /* produce: index among part->staged sets,
	                             or -1 */
};

/* Where a staged set's result lives until its write is done. */
struct stage_ref {
	struct pend *pend;        /* the pend holding it, or NULL... */
	uint32_t item;            /* ...its item there */
	size_t pos;               /* else: its error field in conn->out's
	                             buffer; SIZE_MAX: no response (acks 0) */
};

struct topic {
	char *name;
	uint16_t len;
	uint32_t hash;
	int nparts;
	struct part **parts;      /* nparts, made on first use */
	uint32_t rr;              /* round robin for partition -1 */
	struct topic *hnext;
};

enum { FL_IDLE, FL_QUEUED, FL_RUNNING };

struct part {
	klog_log_t *log;
	struct topic *topic;
	int32_t id;
	struct item *waiters;
	int wanted;               /* in b->wanted this iteration */
	int append_failing;       /* the last write failed (for the log) */
	/* Sets staged by the current read batch (see the top of the file). */
	struct iovec *siov;
	struct stage_ref *sref;
	size_t sn, scap, srcap;   /* caps in bytes, as grow() keeps them */
	int64_t sbytes;
	uint32_t smsgs;
	int staged;               /* in b->staged */
	int flush_failing;
	/* Shared with the flusher, under fl.mu. */
	int fl_state;
	int fl_again;             /* flush again: appended while running */
	int fl_done;              /* in fl.done */
	int fl_rc;
	klog_err_t fl_err;
	/* The flusher's own, while it runs this part's flush. */
	int run_rc;
	klog_err_t run_err;
};

struct flusher {
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	/* Each holds at most one entry per partition; sized as parts are made
	 * so the flusher thread never allocates. */
	struct part **queue, **work, **done;
	size_t nqueue, ndone, cap;
};

enum { PEND_PRODUCE, PEND_FETCH, PEND_OFFSETS };

/* A response that waits.  hold is first: the outq hands it back to us. */
struct pend {
	klog_outq_hold_t hold;
	klog_broker_t *b;
	struct conn *conn;
	struct pend *prev, *next;  /* b->pends while not complete */
	int kind;
	int complete;
	int expired;
	int flushes;               /* items still waiting for a flush */
	int rechecking;
	struct pend *next_recheck;
	int32_t correlation;
	int32_t min_bytes;
	klog_timer_t timer;
	uint32_t n;
	struct item items[];       /* n, then the topic names */
};

struct conn {
	klog_broker_t *b;
	int fd;
	uint8_t *rbuf;             /* unprocessed input */
	size_t rlen, rcap;
	klog_outq_t out;
	int paused;                /* output over the limit: not reading */
	int closing;               /* protocol error: write what is queued,
	                              then close */
	int eof;                   /* peer shut its side */
	int in_writeq;
	uint64_t id;               /* the prefetch token */
	int prefetching;           /* out.cold is being read in */
	struct conn *prev, *next;            /* b->conns */
	struct conn *pf_prev, *pf_next;      /* b->prefetching */
	struct conn *wq_prev, *wq_next;      /* b->writeq */
};

/* Arrays reused by every request (the loop is single-threaded); caps are
 * in bytes. */
struct scratch {
	void *parts;               /* decoder output of any API */
	size_t parts_cap;
	struct item *items;
	size_t items_cap;
	klog_produce_result_t *results;
	size_t results_cap;
	klog_offsets_part_t *oparts;
	size_t oparts_cap;
	int16_t *errors;
	size_t errors_cap;
	int32_t *counts;
	size_t counts_cap;
	const int64_t **offp;
	size_t offp_cap;
	int64_t *offsets;
	size_t offsets_cap;
	klog_meta_topic_t *mtopics;
	size_t mtopics_cap;
};

struct klog_broker {
	klog_broker_config_t cfg;
	char *data_dir, *listen, *adv_host;
	char *bind_host;           /* as bound, for the log: "[::1]" */
	int port;
	int lfd;
	klog_loop_t *loop;
	klog_store_t *store;
	struct flusher fl;
	klog_prefetch_t *pf;
	struct conn *prefetching;  /* conns waiting for pf */
	uint64_t next_conn_id;
	struct topic **buckets;
	size_t nbuckets, ntopics;
	struct part **parts;       /* every part made, for the flush timer */
	size_t nparts, parts_cap;
	struct part **wanted;      /* flush requests of this iteration */
	size_t nwanted, wanted_cap;
	struct part **staged;      /* parts with staged sets */
	size_t nstaged, staged_cap;
	struct conn *conns;
	size_t nconns;
	struct conn *writeq;
	struct pend *pends;
	struct pend *recheck;
	uint8_t *rd;               /* the shared read buffer */
	struct scratch s;
	klog_verify_t *verify;     /* CRCs of a read on more cores, or NULL */
	struct iovec *vsets;       /* the produce sets of one read */
	size_t vsets_cap;
	uintptr_t checked_from, checked_to; /* their top-level CRCs match */
	klog_timer_t accept_timer, flush_timer, clean_timer, rescan_timer;
	int eager;
	int appended;              /* since the loop last slept */
	int stopping;
	int64_t refuse_logged_ms;
	int64_t bad_logged_ms;
	uint64_t bad_suppressed;
};

/* ---- logging ---- */

const char *
klog_level_name(int level)
{
	static const char *const names[] = { "error", "warn", "info",
	    "debug" };

	if (level < 0 || level > KLOG_LEVEL_DEBUG)
		return "debug";
	return names[level];
}

static void blog(klog_broker_t *b, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
blog(klog_broker_t *b, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (b->cfg.log == NULL || level > b->cfg.log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	b->cfg.log(b->cfg.log_arg, level, msg);
}

static const char *
peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN], serv[8];

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), serv,
	    sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(buf, len, "fd %d", fd);
	else if (ss.ss_family == AF_INET6)
		snprintf(buf, len, "[%s]:%s", host, serv);
	else
		snprintf(buf, len, "%s:%s", host, serv);
	return buf;
}

/* ---- scratch arrays ---- */

static int
grow(void **p, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4096;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if ((q = realloc(*p, n)) == NULL)
		return -KLOG_ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static struct item *
scratch_items(klog_broker_t *b, uint32_t n)
{
	if (grow((void **)&b->s.items, &b->s.items_cap,
	    (size_t)n * sizeof(struct item)) < 0)
		return NULL;
	return b->s.items;
}

/* ---- topics and partitions ---- */

static uint32_t
hash_name(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 16777619u;
	return h;
}

static struct topic *
topic_find(klog_broker_t *b, const char *p, uint16_t n, uint32_t h)
{
	struct topic *t;

	if (b->nbuckets == 0)
		return NULL;
	for (t = b->buckets[h & (b->nbuckets - 1)]; t != NULL; t = t->hnext)
		if (t->hash == h && t->len == n && memcmp(t->name, p, n) == 0)
			return t;
	return NULL;
}

static int
topic_rehash(klog_broker_t *b)
{
	size_t n = b->nbuckets ? b->nbuckets * 2 : 64;
	struct topic **nb = calloc(n, sizeof(*nb));

	if (nb == NULL)
		return -KLOG_ENOMEM;
	for (size_t i = 0; i < b->nbuckets; i++) {
		struct topic *t, *next;

		for (t = b->buckets[i]; t != NULL; t = next) {
			next = t->hnext;
			t->hnext = nb[t->hash & (n - 1)];
			nb[t->hash & (n - 1)] = t;
		}
	}
	free(b->buckets);
	b->buckets = nb;
	b->nbuckets = n;
	return 0;
}

/* Make (or grow) the entry of a topic the store knows with nparts. */
static struct topic *
topic_add(klog_broker_t *b, const char *name, int nparts)
{
	size_t len = strlen(name);
	uint32_t h = hash_name(name, len);
	struct topic *t = topic_find(b, name, (uint16_t)len, h);
	struct part **pp;

	if (t == NULL) {
		if (b->ntopics >= b->nbuckets && topic_rehash(b) < 0)
			return NULL;
		if ((t = calloc(1, sizeof(*t))) == NULL)
			return NULL;
		if ((t->name = strdup(name)) == NULL) {
			free(t);
			return NULL;
		}
		t->len = (uint16_t)len;
		t->hash = h;
		t->hnext = b->buckets[h & (b->nbuckets - 1)];
		b->buckets[h & (b->nbuckets - 1)] = t;
		b->ntopics++;
	}
	if (nparts > t->nparts) {
		pp = realloc(t->parts, (size_t)nparts * sizeof(*pp));
		if (pp == NULL)
			return NULL;
		memset(pp + t->nparts, 0,
		    (size_t)(nparts - t->nparts) * sizeof(*pp));
		t->parts = pp;
		t->nparts = nparts;
	}
	return t;
}

static void
topics_free(klog_broker_t *b)
{
	for (size_t i = 0; i < b->nbuckets; i++) {
		struct topic *t, *next;

		for (t = b->buckets[i]; t != NULL; t = next) {
			next = t->hnext;
			free(t->parts);
			free(t->name);
			free(t);
		}
	}
	free(b->buckets);
	for (size_t i = 0; i < b->nparts; i++) {
		free(b->parts[i]->siov);
		free(b->parts[i]->sref);
		free(b->parts[i]);
	}
	free(b->parts);
	free(b->staged);
}

static int16_t
wire_storage(int rc)
{
	return rc == -KLOG_ENOSPC ? KLOG_WIRE_DISK_FULL :
	    KLOG_WIRE_STORAGE_ERROR;
}

static void
topic_created(klog_broker_t *b, const char *name, int nparts)
{
	int rc;

	blog(b, KLOG_LEVEL_INFO, "created topic \"%s\" with %d partition%s",
	    name, nparts, nparts == 1 ? "" : "s");
	if (b->cfg.topic_created == NULL)
		return;
	if ((rc = b->cfg.topic_created(b->cfg.topic_arg, name, nparts)) < 0)
		blog(b, KLOG_LEVEL_WARN, "topic \"%s\": registering: %s", name,
		    klog_strerror(rc));
}

/*
 * The topic named by a request, made from the store's on first use; with
 * create, an unknown topic is auto-created (if that is on).  NULL with
 * *werr set to the wire error otherwise.
 */
static struct topic *
topic_lookup(klog_broker_t *b, klog_str_t name, int create, int16_t *werr)
{
	char buf[KLOG_TOPIC_MAX + 1];
	struct topic *t;
	klog_err_t err;
	int n, rc;

	if ((t = topic_find(b, name.p, name.len, hash_name(name.p, name.len))))
		return t;
	if (name.len > KLOG_TOPIC_MAX || memchr(name.p, 0, name.len) != NULL) {
		*werr = KLOG_WIRE_INVALID_TOPIC;
		return NULL;
	}
	memcpy(buf, name.p, name.len);
	buf[name.len] = '\0';
	if (klog_topic_validate(buf, NULL) < 0) {
		*werr = KLOG_WIRE_INVALID_TOPIC;
		return NULL;
	}
	if ((n = klog_store_partitions(b->store, buf)) < 0) {
		if (!create || !b->cfg.auto_create) {
			*werr = KLOG_WIRE_UNKNOWN_TOPIC;
			return NULL;
		}
		n = b->cfg.default_partitions;
		if ((rc = klog_store_create_topic(b->store, buf, n, &err)) < 0) {
			blog(b, KLOG_LEVEL_ERROR, "creating topic \"%s\": %s",
			    buf, klog_err_text(&err, rc));
			*werr = wire_storage(rc);
			return NULL;
		}
		topic_created(b, buf, n);
	}
	if ((t = topic_add(b, buf, n)) == NULL)
		*werr = KLOG_WIRE_STORAGE_ERROR;
	return t;
}

static int flusher_reserve(klog_broker_t *b, size_t n);

/* Partition id of topic t (range-checked), made on first use. */
static struct part *
part_get(klog_broker_t *b, struct topic *t, int32_t id, int16_t *werr)
{
	struct part *p;
	klog_log_t *log;
	klog_err_t err;
	int rc;

	if (id < 0 || id >= t->nparts) {
		*werr = KLOG_WIRE_WRONG_PARTITION;
		return NULL;
	}
	if (t->parts[id] != NULL)
		return t->parts[id];
	if ((rc = klog_store_get(b->store, t->name, id, 0, &log, &err)) < 0) {
		blog(b, KLOG_LEVEL_ERROR, "topic \"%s\" partition %d: %s",
		    t->name, (int)id, klog_err_text(&err, rc));
		*werr = klog_wire_error_from_klog(rc);
		return NULL;
	}
	if (grow((void **)&b->parts, &b->parts_cap,
	    (b->nparts + 1) * sizeof(*b->parts)) < 0 ||
	    grow((void **)&b->wanted, &b->wanted_cap,
	    (b->nparts + 1) * sizeof(*b->wanted)) < 0 ||
	    grow((void **)&b->staged, &b->staged_cap,
	    (b->nparts + 1) * sizeof(*b->staged)) < 0 ||
	    flusher_reserve(b, b->nparts + 1) < 0 ||
	    (p = calloc(1, sizeof(*p))) == NULL) {
		*werr = KLOG_WIRE_STORAGE_ERROR;
		return NULL;
	}
	p->log = log;
	p->topic = t;
	p->id = id;
	b->parts[b->nparts++] = p;
	t->parts[id] = p;
	return p;
}

/* ---- the flusher ---- */

static int
flusher_reserve(klog_broker_t *b, size_t n)
{
	struct flusher *fl = &b->fl;
	struct part **q, **w, **d;
	size_t cap;
	int rc = 0;

	pthread_mutex_lock(&fl->mu);
	if (n <= fl->cap)
		goto out;
	cap = fl->cap ? fl->cap * 2 : 64;
	while (cap < n)
		cap *= 2;
	q = realloc(fl->queue, cap * sizeof(*q));
	if (q != NULL)
		fl->queue = q;
	w = realloc(fl->work, cap * sizeof(*w));
	if (w != NULL)
		fl->work = w;
	d = realloc(fl->done, cap * sizeof(*d));
	if (d != NULL)
		fl->done = d;
	if (q == NULL || w == NULL || d == NULL)
		rc = -KLOG_ENOMEM;
	else
		fl->cap = cap;
out:
	pthread_mutex_unlock(&fl->mu);
	return rc;
}

/*
 * Take the whole queue, fsync each log without the lock, report them done.
 * A log appended to while its flush ran is queued again (fl_again), so one
 * fsync in flight plus one queued covers any number of appends: group
 * commit.
 */
static void *
flusher_main(void *arg)
{
	klog_broker_t *b = arg;
	struct flusher *fl = &b->fl;
	struct part **batch, *p;
	size_t n;

	pthread_mutex_lock(&fl->mu);
	for (;;) {
		while (fl->nqueue == 0 && !fl->stop)
			pthread_cond_wait(&fl->cv, &fl->mu);
		if (fl->nqueue == 0)
			break;
		batch = fl->queue;
		fl->queue = fl->work;
		fl->work = batch;
		n = fl->nqueue;
		fl->nqueue = 0;
		for (size_t i = 0; i < n; i++)
			batch[i]->fl_state = FL_RUNNING;
		pthread_mutex_unlock(&fl->mu);
		for (size_t i = 0; i < n; i++) {
			p = batch[i];
			p->run_rc = klog_log_flush(p->log, &p->run_err);
		}
		pthread_mutex_lock(&fl->mu);
		for (size_t i = 0; i < n; i++) {
			p = batch[i];
			/* The latest result wins; the flushed end says the rest. */
			p->fl_rc = p->run_rc;
			if (p->run_rc < 0)
				p->fl_err = p->run_err;
			if (!p->fl_done) {
				p->fl_done = 1;
				fl->done[fl->ndone++] = p;
			}
			if (p->fl_again) {
				p->fl_again = 0;
				p->fl_state = FL_QUEUED;
				fl->queue[fl->nqueue++] = p;
			} else {
				p->fl_state = FL_IDLE;
			}
		}
		pthread_mutex_unlock(&fl->mu);
		klog_loop_wake(b->loop);
		pthread_mutex_lock(&fl->mu);
	}
	pthread_mutex_unlock(&fl->mu);
	return NULL;
}

/* Ask for a flush of p at the end of this loop iteration. */
static void
want_flush(klog_broker_t *b, struct part *p)
{
	if (p->wanted)
		return;
	/* b->wanted has room for every part (grown with b->parts). */
	p->wanted = 1;
	b->wanted[b->nwanted++] = p;
}

/* Hand this iteration's requests to the flusher under one lock. */
static void
flusher_submit(klog_broker_t *b)
{
	struct flusher *fl = &b->fl;
	int signal = 0;

	if (b->nwanted == 0)
		return;
	pthread_mutex_lock(&fl->mu);
	for (size_t i = 0; i < b->nwanted; i++) {
		struct part *p = b->wanted[i];

		p->wanted = 0;
		if (p->fl_state == FL_IDLE) {
			p->fl_state = FL_QUEUED;
			fl->queue[fl->nqueue++] = p;
			signal = 1;
		} else if (p->fl_state == FL_RUNNING) {
			p->fl_again = 1;
		}
	}
	pthread_mutex_unlock(&fl->mu);
	b->nwanted = 0;
	if (signal)
		pthread_cond_signal(&fl->cv);
}

static int
flusher_start(klog_broker_t *b)
{
	if (pthread_create(&b->fl.thread, NULL, flusher_main, b) != 0)
		return -KLOG_ENOMEM;
	/* Named for top -H, perf and ionice -p; here, not by the thread
	 * itself, so the name is there as soon as the broker is up. */
	pthread_setname_np(b->fl.thread, "klog-flush");
	b->fl.started = 1;
	return 0;
}

static void
flusher_stop(klog_broker_t *b)
{
	if (!b->fl.started)
		return;
	pthread_mutex_lock(&b->fl.mu);
	b->fl.stop = 1;
	pthread_cond_signal(&b->fl.cv);
	pthread_mutex_unlock(&b->fl.mu);
	pthread_join(b->fl.thread, NULL);
	b->fl.started = 0;
}

/* ---- pending responses ---- */

static void conn_want_write(struct conn *c);

static void
item_link(struct item *it)
{
	struct part *p = it->part;

	it->prev = NULL;
	it->next = p->waiters;
	if (p->waiters != NULL)
		p->waiters->prev = it;
	p->waiters = it;
	it->linked = 1;
}

static void
item_unlink(struct item *it)
{
	if (!it->linked)
		return;
	if (it->prev != NULL)
		it->prev->next = it->next;
	else
		it->part->waiters = it->next;
	if (it->next != NULL)
		it->next->prev = it->prev;
	it->linked = 0;
}

/* Take pd out of every list it waits in. */
static void
pend_detach(struct pend *pd)
{
	klog_broker_t *b = pd->b;

	for (uint32_t i = 0; i < pd->n; i++)
		item_unlink(&pd->items[i]);
	klog_loop_timer_stop(b->loop, &pd->timer);
	if (pd->complete)
		return;
	if (pd->prev != NULL)
		pd->prev->next = pd->next;
	else
		b->pends = pd->next;
	if (pd->next != NULL)
		pd->next->prev = pd->prev;
	pd->complete = 1;
}

/* The outq is done with the hold: written, or the connection closed. */
static void
pend_done(klog_outq_hold_t *h)
{
	struct pend *pd = (struct pend *)h;

	pend_detach(pd);
	klog_outq_free(&pd->hold.q);
	free(pd);
}

static void pend_timeout(klog_loop_t *loop, klog_timer_t *t, void *arg);

/*
 * A pend for the n items (topics copied), queued on c's output.  Its items
 * are not linked yet.
 */
static struct pend *
pend_new(struct conn *c, int kind, int32_t correlation,
    const struct item *items, uint32_t n)
{
	klog_broker_t *b = c->b;
	size_t names = 0;
	struct pend *pd;
	char *np;

	for (uint32_t i = 0; i < n; i++)
		names += items[i].topic.len;
	pd = malloc(sizeof(*pd) + n * sizeof(struct item) + names);
	if (pd == NULL)
		return NULL;
	memset(pd, 0, sizeof(*pd));
	klog_outq_init(&pd->hold.q);
	pd->hold.done = pend_done;
	pd->b = b;
	pd->conn = c;
	pd->kind = kind;
	pd->correlation = correlation;
	pd->n = n;
	klog_timer_init(&pd->timer, pend_timeout, pd);
	np = (char *)&pd->items[n];
	for (uint32_t i = 0; i < n; i++) {
		pd->items[i] = items[i];
		pd->items[i].pend = pd;
		pd->items[i].linked = 0;
		memcpy(np, items[i].topic.p, items[i].topic.len);
		pd->items[i].topic.p = np;
		np += items[i].topic.len;
	}
	if (klog_outq_hold(&c->out, &pd->hold) < 0) {
		free(pd);
		return NULL;
	}
	pd->next = b->pends;
	if (b->pends != NULL)
		b->pends->prev = pd;
	b->pends = pd;
	return pd;
}

static void encode_produce(klog_broker_t *b, klog_buf_t *out, int32_t corr,
    const struct item *items, uint32_t n);
static void encode_fetch(klog_broker_t *b, klog_outq_t *q, int32_t corr,
    const struct item *items, uint32_t n);
static void encode_offsets(klog_broker_t *b, klog_buf_t *out, int32_t corr,
    const struct item *items, uint32_t n);

/* Bytes a fetch could return now, counting each partition up to its max;
 * an item that would now be an error counts as enough. */
static int64_t
fetch_available(const struct item *items, uint32_t n, int32_t min_bytes)
{
	int64_t sum = 0, fe;

	for (uint32_t i = 0; i < n; i++) {
		const struct item *it = &items[i];

		if (it->error != KLOG_WIRE_NONE || it->part == NULL)
			continue;
		fe = klog_log_flushed_end(it->part->log);
		if (it->offset < klog_log_start(it->part->log))
			return min_bytes;
		if (it->offset < fe)
			sum += fe - it->offset < it->max ? fe - it->offset :
			    it->max;
	}
	return sum;
}

static void
pend_finish(struct pend *pd)
{
	klog_broker_t *b = pd->b;

	pend_detach(pd);
	switch (pd->kind) {
	case PEND_PRODUCE:
		encode_produce(b, klog_outq_buf(&pd->hold.q), pd->correlation,
		    pd->items, pd->n);
		break;
	case PEND_FETCH:
		encode_fetch(b, &pd->hold.q, pd->correlation, pd->items,
		    pd->n);
		break;
	default:
		encode_offsets(b, klog_outq_buf(&pd->hold.q), pd->correlation,
		    pd->items, pd->n);
		break;
	}
	pd->hold.ready = 1;
	conn_want_write(pd->conn);
}

/* Answer pd if what it waits for has happened. */
static void
pend_check(struct pend *pd)
{
	if (pd->complete || pd->flushes > 0)
		return;
	if (pd->kind == PEND_FETCH && !pd->expired && !pd->b->stopping &&
	    fetch_available(pd->items, pd->n, pd->min_bytes) < pd->min_bytes)
		return;
	pend_finish(pd);
}

static void
pend_timeout(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	struct pend *pd = arg;

	(void)loop;
	(void)t;
	pd->expired = 1;
	pend_check(pd);
}

static void
recheck_add(klog_broker_t *b, struct pend *pd)
{
	if (pd->rechecking || pd->complete)
		return;
	pd->rechecking = 1;
	pd->next_recheck = b->recheck;
	b->recheck = pd;
}

static void
recheck_run(klog_broker_t *b)
{
	struct pend *pd;

	while ((pd = b->recheck) != NULL) {
		b->recheck = pd->next_recheck;
		pd->rechecking = 0;
		pend_check(pd);
	}
}

/*
 * p's flushed end moved (or its flush failed): items whose target it
 * reached stop waiting; every waiter is looked at again.  On a failed flush
 * an acks=all item not covered gets STORAGE_ERROR; others just stop waiting
 * for a flush and answer with what is visible.
 */
static void
part_flushed(klog_broker_t *b, struct part *p, int rc, const klog_err_t *err)
{
	int64_t fe = klog_log_flushed_end(p->log);

	if (rc < 0 && !p->flush_failing)
		blog(b, KLOG_LEVEL_ERROR, "topic \"%s\" partition %d: flush: "
		    "%s", p->topic->name, (int)p->id, klog_err_text(err, rc));
	else if (rc == 0 && p->flush_failing)
		blog(b, KLOG_LEVEL_INFO, "topic \"%s\" partition %d: flushing "
		    "again", p->topic->name, (int)p->id);
	p->flush_failing = rc < 0;
	for (struct item *it = p->waiters; it != NULL; it = it->next) {
		if (it->target >= 0 && (fe >= it->target || rc < 0)) {
			if (fe < it->target && it->pend->kind == PEND_PRODUCE)
				it->error = wire_storage(rc);
			it->target = -1;
			it->pend->flushes--;
		}
		recheck_add(b, it->pend);
	}
	recheck_run(b);
}

static void pf_finished(klog_broker_t *b);

/* Flushes finished: take the flusher's list and look at the waiters; and
 * cold ranges read in. */
static void
on_wake(klog_loop_t *loop, void *arg)
{
	klog_broker_t *b = arg;
	struct flusher *fl = &b->fl;
	klog_err_t err;
	size_t n;
	int rc;

	(void)loop;
	pf_finished(b);
	pthread_mutex_lock(&fl->mu);
	n = fl->ndone;
	pthread_mutex_unlock(&fl->mu);
	/* done[] only grows under the lock, and only the loop shrinks it, so
	 * entries are read one at a time under the lock. */
	for (size_t i = 0; i < n; i++) {
		struct part *p;

		pthread_mutex_lock(&fl->mu);
		p = fl->done[i];
		p->fl_done = 0;
		rc = p->fl_rc;
		err = p->fl_err;
		pthread_mutex_unlock(&fl->mu);
		part_flushed(b, p, rc, &err);
	}
	if (n == 0)
		return;
	pthread_mutex_lock(&fl->mu);
	/* Entries added meanwhile move to the front for the next wakeup. */
	memmove(fl->done, fl->done + n, (fl->ndone - n) * sizeof(*fl->done));
	fl->ndone -= n;
	pthread_mutex_unlock(&fl->mu);
}

/* ---- encoding responses ---- */

static void
encode_error(klog_buf_t *out, int32_t corr, int16_t error)
{
	size_t start = klog_proto_resp_begin(out, corr, error);

	klog_proto_end(out, start);
}

static void
encode_produce(klog_broker_t *b, klog_buf_t *out, int32_t corr,
    const struct item *items, uint32_t n)
{
	klog_produce_result_t *r;

	if (grow((void **)&b->s.results, &b->s.results_cap,
	    (size_t)n * sizeof(*r)) < 0) {
		out->failed = 1;
		return;
	}
	r = b->s.results;
	for (uint32_t i = 0; i < n; i++) {
		r[i].topic = items[i].topic;
		r[i].partition = items[i].partition;
		r[i].error = items[i].error;
		r[i].offset = items[i].offset;
	}
	if (klog_proto_encode_produce_resp(out, corr, r, n) < 0)
		out->failed = 1;
}

/* One partition of a fetch response: header, then the bytes by sendfile. */
static int64_t
encode_fetch_part(klog_broker_t *b, klog_outq_t *q, const struct item *it,
    int64_t budget)
{
	klog_buf_t *out = klog_outq_buf(q);
	klog_log_slice_t slice;
	int64_t start = -1, fe = -1, max;
	int16_t error = it->error;
	klog_err_t err;
	int rc;

	if (it->part != NULL) {
		start = klog_log_start(it->part->log);
		fe = klog_log_flushed_end(it->part->log);
	}
	if (error != KLOG_WIRE_NONE || it->offset >= fe) {
		/* Past the flushed end but written: not visible yet, no error
		 * (a failed flush, or an offset from a produce response). */
		if (error == KLOG_WIRE_NONE &&
		    it->offset > klog_log_end(it->part->log))
			error = KLOG_WIRE_OFFSET_OUT_OF_RANGE;
		klog_proto_put_fetch_part_header(out, it->topic, it->partition,
		    error, start, fe, 0);
		return 0;
	}
	max = it->max < budget ? it->max : budget;
	rc = klog_log_read(it->part->log, it->offset, (size_t)max, &slice,
	    &err);
	if (rc < 0) {
		if (rc != -KLOG_ERANGE && rc != -KLOG_ENOTBOUNDARY) {
			blog(b, KLOG_LEVEL_WARN, "topic \"%s\" partition %d: %s",
			    it->part->topic->name, (int)it->part->id,
			    klog_err_text(&err, rc));
			rc = -KLOG_EIO;
		}
		klog_proto_put_fetch_part_header(out, it->topic, it->partition,
		    (int16_t)klog_wire_error_from_klog(rc),
		    klog_log_start(it->part->log), fe, 0);
		return 0;
	}
	klog_proto_put_fetch_part_header(out, it->topic, it->partition,
	    KLOG_WIRE_NONE, start, fe, (uint32_t)slice.len);
	max = (int64_t)slice.len;
	if (klog_outq_file(q, &slice) < 0)
		out->failed = 1;
	return max;
}

/*
 * The response frame is header bytes and file ranges interleaved; its size
 * field is patched at the end to count both.  Nothing is sent between
 * begin and patch, so the patch position is still in the buffer.
 */
static void
encode_fetch(klog_broker_t *b, klog_outq_t *q, int32_t corr,
    const struct item *items, uint32_t n)
{
	klog_buf_t *out = klog_outq_buf(q);
	size_t start = klog_proto_resp_begin(out, corr, KLOG_WIRE_NONE);
	int64_t files = 0;

	klog_buf_put_i32(out, (int32_t)n);
	for (uint32_t i = 0; i < n; i++)
		files += encode_fetch_part(b, q, &items[i],
		    FETCH_BUDGET - files);
	klog_buf_patch_i32(out, start,
	    (int32_t)(out->len - start - 4 + (size_t)files));
}

static void
encode_offsets(klog_broker_t *b, klog_buf_t *out, int32_t corr,
    const struct item *items, uint32_t n)
{
	struct scratch *s = &b->s;
	klog_offsets_part_t *parts;
	size_t total = 0, k = 0;
	int cnt;

	for (uint32_t i = 0; i < n; i++)
		total += items[i].error ? 0 : (size_t)items[i].max;
	if (grow((void **)&s->oparts, &s->oparts_cap,
	    n * sizeof(*parts)) < 0 ||
	    grow((void **)&s->errors, &s->errors_cap,
	    n * sizeof(*s->errors)) < 0 ||
	    grow((void **)&s->counts, &s->counts_cap,
	    n * sizeof(*s->counts)) < 0 ||
	    grow((void **)&s->offp, &s->offp_cap, n * sizeof(*s->offp)) < 0 ||
	    grow((void **)&s->offsets, &s->offsets_cap,
	    (total + 1) * sizeof(*s->offsets)) < 0) {
		out->failed = 1;
		return;
	}
	parts = s->oparts;
	for (uint32_t i = 0; i < n; i++) {
		const struct item *it = &items[i];

		parts[i] = (klog_offsets_part_t){ it->topic, it->partition,
		    it->offset, it->max };
		s->errors[i] = it->error;
		s->counts[i] = 0;
		s->offp[i] = &s->offsets[k];
		if (it->error != KLOG_WIRE_NONE || it->max == 0)
			continue;
		if (klog_log_offsets_before(it->part->log, it->offset,
		    &s->offsets[k], it->max, &cnt) < 0) {
			s->errors[i] = KLOG_WIRE_STORAGE_ERROR;
			continue;
		}
		s->counts[i] = cnt;
		k += (size_t)cnt;
	}
	if (klog_proto_encode_offsets_resp(out, corr, parts, s->errors,
	    s->offp, s->counts, n) < 0)
		out->failed = 1;
}

/* ---- requests ---- */

/*
 * The count field at off in body, if count entries of at least min bytes
 * each could fit after it; -1 otherwise (the decoder would refuse it).
 */
static int64_t
peek_count(const uint8_t *body, size_t len, size_t off, size_t min)
{
	int32_t n;

	if (len < off + 4)
		return -1;
	n = (int32_t)klog_be32(body + off);
	if (n < 0 || (size_t)n > (len - off - 4) / min)
		return -1;
	return n;
}

static void *
scratch_parts(klog_broker_t *b, int64_t n, size_t elem)
{
	if (grow(&b->s.parts, &b->s.parts_cap, (size_t)(n + 1) * elem) < 0)
		return NULL;
	return b->s.parts;
}

static void
after_append(klog_broker_t *b, struct part *p)
{
	b->appended = 1;
	if (b->eager)
		want_flush(b, p);
	else if (b->cfg.flush_messages > 0 &&
	    klog_log_unflushed_messages(p->log) >=
	    (uint64_t)b->cfg.flush_messages)
		want_flush(b, p);
}

static int16_t
validate_set(klog_broker_t *b, const uint8_t *set, uint32_t len,
    klog_msgset_info_t *info)
{
	unsigned flags = KLOG_ITER_DEEP;
	int rc;

	if ((uintptr_t)set >= b->checked_from &&
	    (uintptr_t)set + len <= b->checked_to)
		flags |= KLOG_ITER_OUTER_CHECKED;
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
	if ((int64_t)info->max_payload > b->cfg.max_message_bytes)
		return KLOG_WIRE_MESSAGE_TOO_LARGE;
	return KLOG_WIRE_NONE;
}

/* Log an append failure once per run of failures. */
static void
append_failed(klog_broker_t *b, struct part *p, int rc, const klog_err_t *err)
{
	if (!p->append_failing)
		blog(b, KLOG_LEVEL_ERROR, "topic \"%s\" partition %d: append: "
		    "%s", p->topic->name, (int)p->id, klog_err_text(err, rc));
	p->append_failing = 1;
}

/* Some sets went in; all did when all != 0. */
static void
append_ok(klog_broker_t *b, struct part *p, int all)
{
	if (p->append_failing && all)
		blog(b, KLOG_LEVEL_INFO, "topic \"%s\" partition %d: appending "
		    "again", p->topic->name, (int)p->id);
	if (all)
		p->append_failing = 0;
	after_append(b, p);
	/* A pend parked on staged data asked for its flush before the data
	 * was written; ask again now that it is. */
	if (p->waiters != NULL)
		want_flush(b, p);
}

/* Turn the result of a staged set the log did not take into error. */
static void
stage_fail(struct conn *c, const struct stage_ref *r, int16_t error)
{
	klog_buf_t *out = klog_outq_buf(&c->out);
	struct item *it;

	if (r->pend == NULL) {
		if (r->pos == SIZE_MAX || r->pos + 10 > out->len)
			return;
		out->data[r->pos] = (uint8_t)((uint16_t)error >> 8);
		out->data[r->pos + 1] = (uint8_t)error;
		memset(out->data + r->pos + 2, 0xff, 8);  /* offset -1 */
		return;
	}
	it = &r->pend->items[r->item];
	if (it->linked && it->target >= 0)
		r->pend->flushes--;
	item_unlink(it);
	it->error = error;
	it->offset = -1;
	it->target = -1;
	pend_check(r->pend);
}

/* Write p's staged sets; answer those the log could not take with errors. */
static void
stage_commit_part(struct conn *c, struct part *p)
{
	klog_err_t err;
	size_t done = 0;
	int rc;

	rc = klog_log_appendv(p->log, p->siov, p->sn, p->smsgs, NULL, &done,
	    &err);
	if (rc < 0) {
		append_failed(c->b, p, rc, &err);
		for (size_t k = done; k < p->sn; k++)
			stage_fail(c, &p->sref[k], wire_storage(rc));
	}
	p->sn = 0;
	p->sbytes = 0;
	p->smsgs = 0;
	if (done > 0)
		append_ok(c->b, p, rc == 0);
}

/* Write everything c's current batch staged. */
static void
stage_commit(struct conn *c)
{
	klog_broker_t *b = c->b;

	for (size_t i = 0; i < b->nstaged; i++) {
		b->staged[i]->staged = 0;
		if (b->staged[i]->sn > 0)
			stage_commit_part(c, b->staged[i]);
	}
	b->nstaged = 0;
}

/*
 * Stage set for p: *first gets its offset, *idx its index among p's staged
 * sets.  Returns a wire error (out of memory).
 */
static int16_t
stage(struct conn *c, struct part *p, const uint8_t *set, uint32_t len,
    uint32_t msgs, int64_t *first, int64_t *idx)
{
	klog_broker_t *b = c->b;

	if (grow((void **)&p->siov, &p->scap, (p->sn + 1) *
	    sizeof(*p->siov)) < 0 || grow((void **)&p->sref, &p->srcap,
	    (p->sn + 1) * sizeof(*p->sref)) < 0)
		return KLOG_WIRE_STORAGE_ERROR;
	*first = klog_log_end(p->log) + p->sbytes;
	*idx = (int64_t)p->sn;
	p->siov[p->sn] = (struct iovec){ (void *)set, len };
	p->sref[p->sn++] = (struct stage_ref){ NULL, 0, SIZE_MAX };
	p->sbytes += len;
	p->smsgs += msgs;
	if (!p->staged) {
		p->staged = 1;
		b->staged[b->nstaged++] = p;
	}
	return KLOG_WIRE_NONE;
}

/* Whether staging has grown enough to write before the next request. */
static int
stage_full(const klog_broker_t *b)
{
	for (size_t i = 0; i < b->nstaged; i++)
		if (b->staged[i]->sn >= STAGE_SETS ||
		    b->staged[i]->sbytes >= STAGE_BYTES)
			return 1;
	return 0;
}

static void
produce_part(struct conn *c, const klog_produce_part_t *pp, struct item *it)
{
	klog_broker_t *b = c->b;
	klog_msgset_info_t info;
	struct topic *t;
	struct part *p;
	int64_t first;

	*it = (struct item){ .topic = pp->topic, .partition = pp->partition,
	    .offset = -1, .target = -1, .staged = -1 };
	if ((t = topic_lookup(b, pp->topic, 1, &it->error)) == NULL)
		return;
	if (pp->partition == -1)
		it->partition = (int32_t)(t->rr++ % (uint32_t)t->nparts);
	if ((p = part_get(b, t, it->partition, &it->error)) == NULL)
		return;
	it->part = p;
	if (pp->set_len == 0) {
		it->offset = klog_log_end(p->log) + p->sbytes;
		return;
	}
	if ((it->error = validate_set(b, pp->set, pp->set_len, &info)) != 0)
		return;
	if ((it->error = stage(c, p, pp->set, pp->set_len, info.messages,
	    &first, &it->staged)) != 0)
		return;
	it->offset = first;
	it->target = first + pp->set_len;
}

/*
 * Queue a pend for items whose targets are set (linking those, and every
 * item with a partition when link_all), asking for their flushes.
 */
static struct pend *
pend_park(struct conn *c, int kind, int32_t corr, const struct item *items,
    uint32_t n, int link_all)
{
	struct pend *pd = pend_new(c, kind, corr, items, n);

	if (pd == NULL)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		struct item *it = &pd->items[i];

		if (it->part == NULL)
			continue;
		if (it->target >= 0) {
			pd->flushes++;
			want_flush(c->b, it->part);
		} else if (!link_all || it->error != KLOG_WIRE_NONE) {
			continue;
		}
		item_link(it);
	}
	return pd;
}

/*
 * Encode a produce response now and note, for each staged set, where its
 * error field is: after size, correlation, error and count (14 bytes), each
 * result is topic (2 + len), partition (4), error (2), offset (8).
 */
static void
encode_produce_noted(struct conn *c, int32_t corr, const struct item *items,
    uint32_t n)
{
	klog_buf_t *out = klog_outq_buf(&c->out);
	size_t pos = out->len + 14;

	encode_produce(c->b, out, corr, items, n);
	for (uint32_t i = 0; i < n; i++) {
		pos += 2 + items[i].topic.len + 4;
		if (items[i].staged >= 0)
			items[i].part->sref[items[i].staged].pos = pos;
		pos += 2 + 8;
	}
}

/* Park a produce response until its flushes; note its staged sets. */
static void
park_produce_noted(struct conn *c, int32_t corr, const struct item *items,
    uint32_t n)
{
	struct pend *pd = pend_park(c, PEND_PRODUCE, corr, items, n, 0);

	if (pd == NULL) {
		klog_outq_buf(&c->out)->failed = 1;
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		if (items[i].staged >= 0)
			items[i].part->sref[items[i].staged] =
			    (struct stage_ref){ pd, i, 0 };
}

static void
handle_produce(struct conn *c, int32_t corr, const uint8_t *body, size_t len)
{
	klog_broker_t *b = c->b;
	klog_produce_part_t *parts;
	klog_produce_req_t req;
	struct item *items;
	int64_t n = peek_count(body, len, 6, 10);
	int waits = 0;

	if (n < 0 || (parts = scratch_parts(b, n, sizeof(*parts))) == NULL ||
	    klog_proto_decode_produce(body, len, &req, parts,
	    (uint32_t)n) < 0) {
		encode_error(klog_outq_buf(&c->out), corr,
		    KLOG_WIRE_INVALID_REQUEST);
		return;
	}
	if ((items = scratch_items(b, req.count)) == NULL) {
		encode_error(klog_outq_buf(&c->out), corr,
		    KLOG_WIRE_STORAGE_ERROR);
		return;
	}
	for (uint32_t i = 0; i < req.count; i++) {
		produce_part(c, &parts[i], &items[i]);
		if (req.acks != KLOG_ACKS_ALL || items[i].target < 0)
			continue;
		if (klog_log_flushed_end(items[i].part->log) >=
		    items[i].target)
			items[i].target = -1;
		else
			waits++;
	}
	if (req.acks != KLOG_ACKS_NONE && waits == 0)
		encode_produce_noted(c, corr, items, req.count);
	else if (req.acks != KLOG_ACKS_NONE)
		park_produce_noted(c, corr, items, req.count);
	if (stage_full(b))
		stage_commit(c);
}

/* Fill a fetch item; returns the bytes it could return now. */
static int64_t
fetch_item(klog_broker_t *b, const klog_fetch_part_t *fp, struct item *it)
{
	int64_t start, fe, we;
	struct topic *t;

	*it = (struct item){ .topic = fp->topic, .partition = fp->partition,
	    .offset = fp->offset, .max = fp->max_bytes, .target = -1 };
	if (fp->max_bytes > KLOG_BROKER_MAX_FETCH_BYTES) {
		it->error = KLOG_WIRE_INVALID_FETCH_SIZE;
		return 0;
	}
	if ((t = topic_lookup(b, fp->topic, 0, &it->error)) == NULL ||
	    (it->part = part_get(b, t, fp->partition, &it->error)) == NULL)
		return 0;
	start = klog_log_start(it->part->log);
	fe = klog_log_flushed_end(it->part->log);
	we = klog_log_end(it->part->log);
	if (fp->offset < start || fp->offset > we) {
		/* The range it reports must cover every acknowledged record. */
		it->error = KLOG_WIRE_OFFSET_OUT_OF_RANGE;
		if (we > fe)
			it->target = we;
		return 0;
	}
	if (fp->offset < fe)
		return fe - fp->offset < fp->max_bytes ? fe - fp->offset :
		    fp->max_bytes;
	/* Written but not flushed where this consumer reads: it waits for
	 * one flush, not for the policy. */
	if (we > fp->offset)
		it->target = we;
	return 0;
}

static void
handle_fetch(struct conn *c, int32_t corr, const uint8_t *body, size_t len)
{
	klog_broker_t *b = c->b;
	klog_fetch_part_t *parts;
	klog_fetch_req_t req;
	struct item *items;
	struct pend *pd;
	int64_t n = peek_count(body, len, 8, 18), avail = 0;
	int flushes = 0, live = 0;

	if (n < 0 || (parts = scratch_parts(b, n, sizeof(*parts))) == NULL ||
	    klog_proto_decode_fetch(body, len, &req, parts, (uint32_t)n) < 0) {
		encode_error(klog_outq_buf(&c->out), corr,
		    KLOG_WIRE_INVALID_REQUEST);
		return;
	}
	if ((items = scratch_items(b, req.count)) == NULL) {
		encode_error(klog_outq_buf(&c->out), corr,
		    KLOG_WIRE_STORAGE_ERROR);
		return;
	}
	for (uint32_t i = 0; i < req.count; i++) {
		avail += fetch_item(b, &parts[i], &items[i]);
		flushes += items[i].target >= 0;
		live += items[i].part != NULL && items[i].error == 0;
	}
	if (flushes == 0 && (avail >= req.min_bytes || req.max_wait_ms == 0 ||
	    live == 0)) {
		encode_fetch(b, &c->out, corr, items, req.count);
		return;
	}
	if ((pd = pend_park(c, PEND_FETCH, corr, items, req.count, 1)) ==
	    NULL) {
		klog_outq_buf(&c->out)->failed = 1;
		return;
	}
	pd->min_bytes = req.min_bytes;
	if (req.max_wait_ms == 0 || b->stopping)
		pd->expired = 1;
	else if (klog_loop_timer_start(b->loop, &pd->timer, req.max_wait_ms,
	    0) < 0)
		pd->expired = 1;
}

static void
handle_offsets(struct conn *c, int32_t corr, const uint8_t *body, size_t len)
{
	klog_broker_t *b = c->b;
	klog_offsets_part_t *parts;
	struct item *items;
	struct topic *t;
	int64_t n = peek_count(body, len, 0, 18);
	uint32_t got;
	int flushes = 0;

	if (n < 0 || (parts = scratch_parts(b, n, sizeof(*parts))) == NULL ||
	    klog_proto_decode_offsets(body, len, parts, (uint32_t)n,
	    &got) < 0) {
		encode_error(klog_outq_buf(&c->out), corr,
		    KLOG_WIRE_INVALID_REQUEST);
		return;
	}
	if ((items = scratch_items(b, got)) == NULL) {
		encode_error(klog_outq_buf(&c->out), corr,
		    KLOG_WIRE_STORAGE_ERROR);
		return;
	}
	for (uint32_t i = 0; i < got; i++) {
		struct item *it = &items[i];
		int64_t we;

		*it = (struct item){ .topic = parts[i].topic,
		    .partition = parts[i].partition, .offset = parts[i].time,
		    .max = parts[i].max < MAX_OFFSETS ? parts[i].max :
		    MAX_OFFSETS, .target = -1 };
		if ((t = topic_lookup(b, it->topic, 0, &it->error)) == NULL ||
		    (it->part = part_get(b, t, it->partition,
		    &it->error)) == NULL)
			continue;
		/* Every answer but "earliest" shows the flushed end. */
		if (it->offset == KLOG_OFFSET_EARLIEST)
			continue;
		we = klog_log_end(it->part->log);
		if (we > klog_log_flushed_end(it->part->log)) {
			it->target = we;
			flushes++;
		}
	}
	if (flushes == 0)
		encode_offsets(b, klog_outq_buf(&c->out), corr, items, got);
	else if (pend_park(c, PEND_OFFSETS, corr, items, got, 0) == NULL)
		klog_outq_buf(&c->out)->failed = 1;
}

/* The partition count of a requested topic, or a wire error (with 0
 * partitions and broker id -1, as klog-protocol(7) says). */
static void
meta_topic(klog_broker_t *b, klog_str_t name, klog_meta_topic_t *mt)
{
	char buf[KLOG_TOPIC_MAX + 1];
	int n;

	*mt = (klog_meta_topic_t){ .topic = name, .broker_id = -1 };
	if (name.len > KLOG_TOPIC_MAX || memchr(name.p, 0, name.len) != NULL) {
		mt->error = KLOG_WIRE_INVALID_TOPIC;
		return;
	}
	memcpy(buf, name.p, name.len);
	buf[name.len] = '\0';
	if (klog_topic_validate(buf, NULL) < 0) {
		mt->error = KLOG_WIRE_INVALID_TOPIC;
	} else if ((n = klog_store_partitions(b->store, buf)) < 0) {
		mt->error = KLOG_WIRE_UNKNOWN_TOPIC;
	} else {
		mt->partitions = n;
		mt->broker_id = b->cfg.broker_id;
	}
}

static void
handle_metadata(struct conn *c, int32_t corr, const uint8_t *body, size_t len)
{
	klog_broker_t *b = c->b;
	klog_meta_broker_t self = { b->cfg.broker_id,
	    { b->adv_host, (uint16_t)strlen(b->adv_host) },
	    b->cfg.advertised_port ? b->cfg.advertised_port : b->port };
	klog_metadata_t md = { .broker_id = b->cfg.broker_id, .nbrokers = 1,
	    .brokers = &self };
	int64_t n = peek_count(body, len, 0, 2);
	klog_str_t *names;
	uint32_t got;
	size_t nt;

	if (n < 0 || (names = scratch_parts(b, n, sizeof(*names))) == NULL ||
	    klog_proto_decode_metadata(body, len, names, (uint32_t)n,
	    &got) < 0) {
		encode_error(klog_outq_buf(&c->out), corr,
		    KLOG_WIRE_INVALID_REQUEST);
		return;
	}
	nt = got > 0 ? got : klog_store_topic_count(b->store);
	if (grow((void **)&b->s.mtopics, &b->s.mtopics_cap,
	    (nt + 1) * sizeof(*b->s.mtopics)) < 0) {
		encode_error(klog_outq_buf(&c->out), corr,
		    KLOG_WIRE_STORAGE_ERROR);
		return;
	}
	for (size_t i = 0; i < nt; i++) {
		const char *name;

		if (got > 0) {
			meta_topic(b, names[i], &b->s.mtopics[i]);
			continue;
		}
		name = klog_store_topic_name(b->store, i);
		b->s.mtopics[i] = (klog_meta_topic_t){ KLOG_WIRE_NONE,
		    { name, (uint16_t)strlen(name) },
		    klog_store_partitions(b->store, name), b->cfg.broker_id };
	}
	md.ntopics = (uint32_t)nt;
	md.topics = b->s.mtopics;
	if (klog_proto_encode_metadata_resp(klog_outq_buf(&c->out), corr,
	    &md) < 0)
		klog_outq_buf(&c->out)->failed = 1;
}

static void
dispatch(struct conn *c, const klog_req_header_t *h, const uint8_t *body,
    size_t len)
{
	klog_buf_t *out = klog_outq_buf(&c->out);

	if (h->version != KLOG_PROTO_VERSION) {
		encode_error(out, h->correlation,
		    KLOG_WIRE_UNSUPPORTED_VERSION);
		return;
	}
	if (h->api != KLOG_API_PRODUCE)
		stage_commit(c);
	switch (h->api) {
	case KLOG_API_PRODUCE:
		handle_produce(c, h->correlation, body, len);
		break;
	case KLOG_API_FETCH:
		handle_fetch(c, h->correlation, body, len);
		break;
	case KLOG_API_OFFSETS:
		handle_offsets(c, h->correlation, body, len);
		break;
	case KLOG_API_METADATA:
		handle_metadata(c, h->correlation, body, len);
		break;
	default:
		encode_error(out, h->correlation, KLOG_WIRE_UNKNOWN_API);
		break;
	}
}

/* ---- connections ---- */

/* Output not yet written, whether or not it is in a chunk yet. */
static uint64_t
conn_queued(const struct conn *c)
{
	return c->out.queued + (c->out.buf.len - c->out.accounted);
}

static int
conn_over(const struct conn *c)
{
	return conn_queued(c) > c->b->cfg.conn_out_limit ||
	    c->out.holds >= MAX_HOLDS;
}

/* Low-water mark: resume reading once half drained. */
static int
conn_under(const struct conn *c)
{
	return conn_queued(c) <= c->b->cfg.conn_out_limit / 2 &&
	    c->out.holds < MAX_HOLDS / 2;
}

/* ---- cold file ranges ---- */

static void
pf_notify(void *arg)
{
	klog_loop_wake(arg);
}

static void
pf_unlink(struct conn *c)
{
	klog_broker_t *b = c->b;

	if (c->pf_prev != NULL)
		c->pf_prev->pf_next = c->pf_next;
	else
		b->prefetching = c->pf_next;
	if (c->pf_next != NULL)
		c->pf_next->pf_prev = c->pf_prev;
	c->pf_prev = c->pf_next = NULL;
	c->prefetching = 0;
}

/*
 * The next bytes c sends are not in the page cache: have them read in
 * rather than block the loop in sendfile.  0 when queued; -1 when they
 * could not be (no memory, no descriptor), and then they are sent as they
 * are, from the disk.
 */
static int
conn_prefetch(struct conn *c)
{
	klog_broker_t *b = c->b;
	klog_outq_range_t *r = &c->out.cold;

	if (klog_prefetch_submit(b->pf, r->fd, r->pos,
	    (size_t)(r->end - r->pos), c->id) < 0) {
		klog_outq_warmed(&c->out);
		return -1;
	}
	c->prefetching = 1;
	c->pf_prev = NULL;
	c->pf_next = b->prefetching;
	if (b->prefetching != NULL)
		b->prefetching->pf_prev = c;
	b->prefetching = c;
	return 0;
}

static int conn_write(struct conn *c);

/* Ranges read in: their connections send again.  A token whose
 * connection closed meanwhile matches nothing. */
static void
pf_finished(klog_broker_t *b)
{
	uint64_t tokens[64];
	struct conn *c;
	size_t n;

	while ((n = klog_prefetch_take(b->pf, tokens, 64)) > 0)
		for (size_t i = 0; i < n; i++) {
			for (c = b->prefetching; c != NULL; c = c->pf_next)
				if (c->id == tokens[i])
					break;
			if (c == NULL)
				continue;
			pf_unlink(c);
			klog_outq_warmed(&c->out);
			conn_write(c);
		}
}

static void
conn_close(struct conn *c, int level, const char *why)
{
	klog_broker_t *b = c->b;
	char peer[96];

	if (level <= b->cfg.log_level)
		blog(b, level, "%s: closing: %s",
		    peer_name(c->fd, peer, sizeof(peer)), why);
	klog_loop_watch(b->loop, c->fd, 0, NULL, NULL);
	close(c->fd);
	if (c->prefetching)
		pf_unlink(c);
	if (c->in_writeq) {
		if (c->wq_prev != NULL)
			c->wq_prev->wq_next = c->wq_next;
		else
			b->writeq = c->wq_next;
		if (c->wq_next != NULL)
			c->wq_next->wq_prev = c->wq_prev;
	}
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		b->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	b->nconns--;
	klog_outq_free(&c->out);
	free(c->rbuf);
	free(c);
}

static void
conn_want_write(struct conn *c)
{
	klog_broker_t *b = c->b;

	if (c->in_writeq)
		return;
	c->in_writeq = 1;
	c->wq_prev = NULL;
	c->wq_next = b->writeq;
	if (b->writeq != NULL)
		b->writeq->wq_prev = c;
	b->writeq = c;
}

/* A frame that cannot be parsed: answer once, then close. */
static void
conn_refuse(struct conn *c, const uint8_t *p, size_t len, int16_t error,
    const char *why)
{
	klog_broker_t *b = c->b;
	int32_t corr = len >= KLOG_REQ_HEADER_SIZE ?
	    (int32_t)klog_be32(p + 8) : 0;
	int64_t now = klog_loop_now_ms();
	char peer[96];

	encode_error(klog_outq_buf(&c->out), corr, error);
	c->closing = 1;
	/* A flood of bad clients must not flood the log: one line a second. */
	if (now - b->bad_logged_ms < 1000) {
		b->bad_suppressed++;
		return;
	}
	b->bad_logged_ms = now;
	if (b->bad_suppressed > 0)
		blog(b, KLOG_LEVEL_WARN, "%s: %s (and %llu more bad requests "
		    "not logged)", peer_name(c->fd, peer, sizeof(peer)), why,
		    (unsigned long long)b->bad_suppressed);
	else
		blog(b, KLOG_LEVEL_WARN, "%s: %s", peer_name(c->fd, peer,
		    sizeof(peer)), why);
	b->bad_suppressed = 0;
}

/* The verifier's threads: cfg's, or one fewer than the CPUs this
 * process may run on (at most AUTO_CRC_THREADS), so that the loop and
 * they fill what the machine, or the container, gives. */
static int
crc_threads(const klog_broker_config_t *cfg)
{
	cpu_set_t set;
	int n;

	if (cfg->crc_threads >= 0)
		return cfg->crc_threads;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set) - 1;
	else
		n = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	return n < 0 ? 0 : n > AUTO_CRC_THREADS ? AUTO_CRC_THREADS : n;
}

/* The verifier, if the broker has threads for it. */
static int
verify_start(klog_broker_t *b)
{
	int n = crc_threads(&b->cfg);

	return n > 0 ? klog_verify_new(n, &b->verify) : 0;
}

/* Note the set of each part of a produce body for precheck(). */
static int
note_sets(klog_broker_t *b, const uint8_t *body, size_t len, size_t *n,
    size_t *bytes)
{
	klog_produce_part_t *parts;
	klog_produce_req_t req;
	int64_t count = peek_count(body, len, 6, 10);

	if (count < 0)
		return 0;       /* refused whole by handle_produce */
	if ((parts = scratch_parts(b, count, sizeof(*parts))) == NULL)
		return -1;
	if (klog_proto_decode_produce(body, len, &req, parts,
	    (uint32_t)count) < 0)
		return 0;
	if (grow((void **)&b->vsets, &b->vsets_cap, (*n + req.count) *
	    sizeof(*b->vsets)) < 0)
		return -1;
	for (uint32_t i = 0; i < req.count; i++) {
		b->vsets[(*n)++] = (struct iovec){ (void *)parts[i].set,
		    parts[i].set_len };
		*bytes += parts[i].set_len;
	}
	return 0;
}

/*
 * Check the CRCs of every produce set in the complete frames of data at
 * once, on the verifier's threads as well as the loop's: one request's
 * set is too small to share, a read's worth is not.  When all match,
 * validate_set() trusts their top-level CRCs; when one does not (or
 * memory runs short), nothing is trusted and each set is checked on its
 * own, which finds it.  validate_set() trusts by where a set lies in the
 * read, so every request that appends sets must be noted here as produce
 * requests are, or its sets would be taken as checked.
 */
static void
precheck(klog_broker_t *b, const uint8_t *data, size_t len)
{
	klog_req_header_t h;
	size_t pos = 0, total, n = 0, bytes = 0;

	b->checked_from = b->checked_to = 0;
	if (b->verify == NULL || len < KLOG_VERIFY_MIN_SPLIT)
		return;
	while (klog_proto_req_header(data + pos, len - pos,
	    (size_t)b->cfg.max_request_bytes, &h) == 0 &&
	    (total = 4 + (size_t)h.size) <= len - pos) {
		if (h.api == KLOG_API_PRODUCE &&
		    h.version == KLOG_PROTO_VERSION &&
		    note_sets(b, data + pos + KLOG_REQ_HEADER_SIZE,
		    total - KLOG_REQ_HEADER_SIZE, &n, &bytes) < 0)
			return;
		pos += total;
	}
	if (bytes < KLOG_VERIFY_MIN_SPLIT ||
	    klog_verify_sets(b->verify, b->vsets, n) != 0)
		return;
	b->checked_from = (uintptr_t)data;
	b->checked_to = (uintptr_t)data + pos;
}

/* Handle every complete frame in data; returns the bytes consumed. */
static size_t
conn_process(struct conn *c, const uint8_t *data, size_t len)
{
	klog_broker_t *b = c->b;
	klog_req_header_t h;
	size_t pos = 0, total;
	char why[128];
	int rc;

	precheck(b, data, len);
	while (pos < len && !c->paused && !c->closing) {
		rc = klog_proto_req_header(data + pos, len - pos,
		    (size_t)b->cfg.max_request_bytes, &h);
		if (rc == -KLOG_EPARTIAL)
			break;
		if (rc < 0) {
			if (rc == -KLOG_ETOOBIG)
				snprintf(why, sizeof(why), "request of %u "
				    "bytes over the limit of %lld",
				    klog_be32(data + pos),
				    (long long)b->cfg.max_request_bytes);
			else
				snprintf(why, sizeof(why), "bad request size "
				    "%d", (int32_t)klog_be32(data + pos));
			stage_commit(c);
			conn_refuse(c, data + pos, len - pos,
			    rc == -KLOG_ETOOBIG ? KLOG_WIRE_REQUEST_TOO_LARGE :
			    KLOG_WIRE_INVALID_REQUEST, why);
			b->checked_from = b->checked_to = 0;
			return len;
		}
		total = 4 + (size_t)h.size;
		if (len - pos < total)
			break;
		dispatch(c, &h, data + pos + KLOG_REQ_HEADER_SIZE,
		    total - KLOG_REQ_HEADER_SIZE);
		pos += total;
		if (conn_over(c))
			c->paused = 1;
	}
	/* The staged sets point into data, which the caller reuses. */
	stage_commit(c);
	b->checked_from = b->checked_to = 0;
	return pos;
}

/* Keep the unprocessed tail of a read for the next one. */
static int
conn_keep(struct conn *c, const uint8_t *data, size_t left, int shared)
{
	size_t cap;
	uint8_t *p;

	if (!shared) {
		memmove(c->rbuf, data, left);
	} else if (left > 0) {
		if (left > c->rcap) {
			cap = left < 4096 ? 4096 : left;
			if ((p = realloc(c->rbuf, cap)) == NULL)
				return -KLOG_ENOMEM;
			c->rbuf = p;
			c->rcap = cap;
		}
		memcpy(c->rbuf, data, left);
	}
	c->rlen = left;
	if (left == 0 && c->rcap > COPY_MAX) {
		free(c->rbuf);
		c->rbuf = NULL;
		c->rcap = 0;
	} else if (left <= COPY_MAX && c->rcap > COPY_MAX) {
		/* A big frame or a paused backlog is done: give the room back
		 * (shrinking cannot fail in a way that loses the bytes). */
		if ((p = realloc(c->rbuf, COPY_MAX)) != NULL) {
			c->rbuf = p;
			c->rcap = COPY_MAX;
		}
	}
	return 0;
}

/*
 * Room to read the rest of a large frame into the connection's own buffer:
 * it grows geometrically, but never past the frame (whose size was checked
 * against max_request_bytes when its first bytes came in).
 */
static int
conn_room(struct conn *c)
{
	size_t total = 4 + (size_t)klog_be32(c->rbuf), want;
	uint8_t *p;

	want = c->rcap * 2 > c->rlen + READ_CHUNK ? c->rcap * 2 :
	    c->rlen + READ_CHUNK;
	if (want > total)
		want = total > c->rlen ? total : c->rlen + READ_CHUNK;
	if (want <= c->rcap)
		return 0;
	if ((p = realloc(c->rbuf, want)) == NULL)
		return -KLOG_ENOMEM;
	c->rbuf = p;
	c->rcap = want;
	return 0;
}

static void
conn_read(struct conn *c)
{
	klog_broker_t *b = c->b;
	uint8_t *data;
	size_t have, cap, used;
	int shared = c->rlen <= COPY_MAX;
	ssize_t n;

	if (shared) {
		/* Small leftovers ride along in the shared buffer: idle
		 * connections own no read buffer at all. */
		data = b->rd;
		if (c->rlen > 0)
			memcpy(data, c->rbuf, c->rlen);
		cap = READ_CHUNK;
	} else {
		if (conn_room(c) < 0) {
			conn_close(c, KLOG_LEVEL_WARN, "out of memory");
			return;
		}
		data = c->rbuf;
		cap = c->rcap;
	}
	have = c->rlen;
	while ((n = read(c->fd, data + have, cap - have)) < 0 &&
	    errno == EINTR)
		;
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			conn_close(c, KLOG_LEVEL_DEBUG, strerror(errno));
		return;
	}
	if (n == 0) {
		/* Half-closed: answer what was asked, then close. */
		c->eof = 1;
		c->rlen = 0;
		conn_write(c);
		return;
	}
	have += (size_t)n;
	used = conn_process(c, data, have);
	if (conn_keep(c, data + used, have - used, shared) < 0) {
		conn_close(c, KLOG_LEVEL_WARN, "out of memory");
		return;
	}
	conn_write(c);
}

/*
 * Write what can be written; resume reading (and the frames left in the
 * buffer) below the low-water mark; set the interest mask; close when a
 * closing, half-closed or shutting-down connection has nothing left.
 * Returns -1 if c was closed.
 */
static int
conn_write(struct conn *c)
{
	klog_broker_t *b = c->b;
	klog_err_t err;
	size_t used;
	int rc, mask = 0;

	for (;;) {
		if (c->prefetching) {
			rc = KLOG_OUTQ_COLD;
			break;
		}
		if ((rc = klog_outq_write(&c->out, c->fd, &err)) < 0) {
			conn_close(c, KLOG_LEVEL_DEBUG, klog_err_text(&err, rc));
			return -1;
		}
		if (rc == KLOG_OUTQ_COLD) {
			if (conn_prefetch(c) < 0)
				continue;
			break;
		}
		if (!c->paused || c->closing || b->stopping || !conn_under(c))
			break;
		c->paused = 0;
		if (c->rlen == 0)
			break;
		used = conn_process(c, c->rbuf, c->rlen);
		conn_keep(c, c->rbuf + used, c->rlen - used, 0);
	}
	if ((rc == KLOG_OUTQ_EMPTY && (c->closing || c->eof || b->stopping)) ||
	    (rc == KLOG_OUTQ_WAITING && c->closing)) {
		conn_close(c, KLOG_LEVEL_DEBUG, c->closing ? "bad request" :
		    c->eof ? "peer closed" : "shutting down");
		return -1;
	}
	if (!c->paused && !c->closing && !c->eof && !b->stopping)
		mask |= KLOG_LOOP_READABLE;
	if (rc == KLOG_OUTQ_BLOCKED)
		mask |= KLOG_LOOP_WRITABLE;
	if (klog_loop_set_mask(b->loop, c->fd, mask) < 0) {
		conn_close(c, KLOG_LEVEL_WARN, "epoll_ctl failed");
		return -1;
	}
	return 0;
}

static void
on_conn(klog_loop_t *loop, int fd, void *arg, int mask)
{
	struct conn *c = arg;

	(void)loop;
	(void)fd;
	if (mask & KLOG_LOOP_READABLE)
		conn_read(c);
	else
		conn_write(c);
}

/* ---- loop glue ---- */

static void on_accept(klog_loop_t *loop, int fd, void *arg, int mask);

static void
conn_new(klog_broker_t *b, int fd)
{
	struct conn *c = calloc(1, sizeof(*c));
	int one = 1;

	if (c == NULL) {
		close(fd);
		return;
	}
	c->b = b;
	c->fd = fd;
	c->id = ++b->next_conn_id;
	klog_outq_init(&c->out);
	c->out.probe = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (klog_loop_watch(b->loop, fd, KLOG_LOOP_READABLE, on_conn, c) < 0) {
		close(fd);
		free(c);
		return;
	}
	c->next = b->conns;
	if (b->conns != NULL)
		b->conns->prev = c;
	b->conns = c;
	b->nconns++;
}

static void
accept_resume(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_broker_t *b = arg;

	(void)t;
	if (b->lfd >= 0)
		klog_loop_watch(loop, b->lfd, KLOG_LOOP_READABLE, on_accept,
		    b);
}

static void
on_accept(klog_loop_t *loop, int lfd, void *arg, int mask)
{
	klog_broker_t *b = arg;
	int64_t now;
	int fd;

	(void)mask;
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/* Out of descriptors or memory: a level-triggered
			 * listener would spin, so stop listening briefly. */
			blog(b, KLOG_LEVEL_WARN, "accept: %s; pausing",
			    strerror(errno));
			klog_loop_watch(loop, lfd, 0, NULL, NULL);
			klog_loop_timer_start(loop, &b->accept_timer,
			    ACCEPT_PAUSE_MS, 0);
			return;
		}
		if (b->nconns >= (size_t)b->cfg.max_connections) {
			close(fd);
			now = klog_loop_now_ms();
			if (now - b->refuse_logged_ms >= 1000) {
				b->refuse_logged_ms = now;
				blog(b, KLOG_LEVEL_WARN, "refusing connections: "
				    "%d open (--max-connections)",
				    b->cfg.max_connections);
			}
			continue;
		}
		conn_new(b, fd);
	}
}

static void
before_sleep(klog_loop_t *loop, void *arg)
{
	klog_broker_t *b = arg;
	struct conn *c;

	(void)loop;
	while ((c = b->writeq) != NULL) {
		b->writeq = c->wq_next;
		if (b->writeq != NULL)
			b->writeq->wq_prev = NULL;
		c->in_writeq = 0;
		conn_write(c);
	}
	/* Cold reads slow down while there are appends to make durable,
	 * whatever the flush policy. */
	if (b->appended && b->pf != NULL)
		klog_prefetch_writing(b->pf);
	b->appended = 0;
	flusher_submit(b);
}

/* The time policy: flush a log flush_ms after its last flush. */
static void
on_flush_tick(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_broker_t *b = arg;
	int64_t now = klog_loop_now_ms();

	(void)loop;
	(void)t;
	for (size_t i = 0; i < b->nparts; i++) {
		struct part *p = b->parts[i];

		if (klog_log_unflushed_messages(p->log) > 0 &&
		    now - klog_log_last_flush_ms(p->log) >= b->cfg.flush_ms)
			want_flush(b, p);
	}
}

static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
on_clean(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_broker_t *b = arg;
	int64_t now = wall_ms(), bytes;
	klog_log_t *log;
	klog_err_t err;
	size_t segs;
	int rc;

	(void)loop;
	(void)t;
	for (size_t i = 0; (log = klog_store_log(b->store, i)) != NULL; i++) {
		rc = klog_log_retain(log, b->cfg.retention_ms,
		    b->cfg.retention_bytes, now, &segs, &bytes, &err);
		if (rc < 0)
			blog(b, KLOG_LEVEL_WARN, "topic \"%s\" partition %d: "
			    "retention: %s", klog_log_topic(log),
			    klog_log_partition(log), klog_err_text(&err, rc));
		else if (segs > 0)
			blog(b, KLOG_LEVEL_INFO, "topic \"%s\" partition %d: "
			    "retention deleted %zu segment%s (%lld bytes)",
			    klog_log_topic(log), klog_log_partition(log), segs,
			    segs == 1 ? "" : "s", (long long)bytes);
	}
}

static void
on_rescan(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_broker_t *b = arg;
	klog_log_t *log;
	klog_err_t err;
	int rc;

	(void)loop;
	(void)t;
	for (size_t i = 0; (log = klog_store_log(b->store, i)) != NULL; i++)
		if ((rc = klog_log_rescan(log, &err)) < 0)
			blog(b, KLOG_LEVEL_WARN, "topic \"%s\" partition %d: "
			    "rescan: %s", klog_log_topic(log),
			    klog_log_partition(log), klog_err_text(&err, rc));
}

/* ---- open, run, close ---- */

void
klog_broker_config_default(klog_broker_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->data_dir = KLOG_BROKER_DEFAULT_DATA_DIR;
	cfg->listen = KLOG_BROKER_DEFAULT_LISTEN;
	cfg->default_partitions = 1;
	cfg->auto_create = 1;
	cfg->segment_bytes = (int64_t)1 << 30;
	cfg->retention_ms = 168 * 3600 * 1000LL;
	cfg->retention_bytes = -1;
	cfg->cleanup_interval_ms = 5 * 60 * 1000;
	cfg->rescan_interval_ms = 5000;
	cfg->max_request_bytes = KLOG_DEFAULT_MAX_REQUEST;
	cfg->max_message_bytes = KLOG_BROKER_DEFAULT_MAX_MESSAGE;
	cfg->max_connections = 10000;
	cfg->max_open_segments = KLOG_STORE_DEFAULT_OPEN_SEGMENTS;
	cfg->cold_read_rate = KLOG_BROKER_DEFAULT_COLD_READ_RATE;
	cfg->crc_threads = -1;
	cfg->conn_out_limit = (size_t)4 << 20;
	cfg->shutdown_ms = 5000;
	cfg->log_level = KLOG_LEVEL_INFO;
}

static int
check_config(const klog_broker_config_t *cfg, klog_err_t *err)
{
	if (cfg->max_request_bytes < KLOG_REQ_HEADER_SIZE ||
	    cfg->max_request_bytes > INT32_MAX)
		return klog_err_set(err, -KLOG_EINVAL, "max request size %lld: "
		    "not in [%d, %d]", (long long)cfg->max_request_bytes,
		    KLOG_REQ_HEADER_SIZE, INT32_MAX);
	if (cfg->max_connections < 1 || cfg->conn_out_limit < 1 ||
	    cfg->max_message_bytes < 0 || cfg->flush_messages < 0 ||
	    cfg->flush_ms < 0 || cfg->cleanup_interval_ms < 1 ||
	    cfg->rescan_interval_ms < 1 || cfg->shutdown_ms < 0)
		return klog_err_set(err, -KLOG_EINVAL, "invalid configuration");
	return 0;
}

static int
is_wildcard(const char *host)
{
	return host[0] == '\0' || strcmp(host, "0.0.0.0") == 0 ||
	    strcmp(host, "::") == 0;
}

/* klog_parse_hostport(), plus port 0: let the kernel pick one. */
static int
parse_listen(const char *s, char *host, size_t hostlen, char *port,
    size_t portlen, const char **why)
{
	size_t n = strlen(s);
	char prefix[300];

	if (n < 2 || strcmp(s + n - 2, ":0") != 0 || n - 2 >= sizeof(prefix))
		return klog_parse_hostport(s, "127.0.0.1", KLOG_DEFAULT_PORT,
		    host, hostlen, port, portlen, why);
	memcpy(prefix, s, n - 2);
	prefix[n - 2] = '\0';
	return klog_parse_hostport(n == 2 ? "127.0.0.1" : prefix, "127.0.0.1",
	    "0", host, hostlen, port, portlen, why);
}

/* Bind (not listen yet) and work out the addresses to report. */
static int
listen_on(klog_broker_t *b, klog_err_t *err)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	    .ai_socktype = SOCK_STREAM }, *res, *ai;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[256], port[32], name[256];
	const char *why;
	int rc, fd = -1, e = 0, one = 1;

	if (parse_listen(b->listen, host, sizeof(host), port, sizeof(port),
	    &why) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "listen address \"%s\": "
		    "%s", b->listen, why);
	if ((rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res)) != 0)
		return klog_err_set(err, -KLOG_ECONN, "listen %s: %s",
		    b->listen, gai_strerror(rc));
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return klog_err_set(err, -KLOG_ECONN, "listen %s: %s",
		    b->listen, strerror(e));
	b->lfd = fd;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		b->port = ntohs(ss.ss_family == AF_INET6 ?
		    ((struct sockaddr_in6 *)&ss)->sin6_port :
		    ((struct sockaddr_in *)&ss)->sin_port);
	if (b->cfg.advertised_host != NULL)
		why = b->cfg.advertised_host;
	else if (!is_wildcard(host))
		why = host;
	else if (gethostname(name, sizeof(name)) == 0)
		why = name;
	else
		why = "localhost";
	name[sizeof(name) - 1] = '\0';
	snprintf(port, sizeof(port), "%d", b->port);
	if (asprintf(&b->bind_host, strchr(host, ':') != NULL ? "[%s]:%s" :
	    "%s:%s", host[0] ? host : "0.0.0.0", port) < 0) {
		b->bind_host = NULL;
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	if ((b->adv_host = strdup(why)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	return 0;
}

static int
open_store(klog_broker_t *b, klog_err_t *err)
{
	klog_store_config_t sc;
	int64_t cut;
	klog_log_t *log;
	int rc, n;

	klog_store_config_default(&sc);
	sc.data_dir = b->data_dir;
	sc.log.segment_bytes = b->cfg.segment_bytes;
	sc.max_open_segments = b->cfg.max_open_segments;
	sc.default_partitions = b->cfg.default_partitions;
	sc.auto_create = b->cfg.auto_create;
	if ((rc = klog_store_open(&sc, &b->store, err)) < 0)
		return rc;
	if ((n = klog_store_recovered(b->store)) == 0)
		return 0;
	for (size_t i = 0; (log = klog_store_log(b->store, i)) != NULL; i++)
		if ((cut = klog_log_recovered_bytes(log)) > 0)
			blog(b, KLOG_LEVEL_WARN, "topic \"%s\" partition %d: "
			    "recovery truncated %lld bytes", klog_log_topic(log),
			    klog_log_partition(log), (long long)cut);
	blog(b, KLOG_LEVEL_WARN, "%s: %s: recovered %d partition%s, %lld bytes "
	    "truncated", b->data_dir, klog_store_clean(b->store) ?
	    "changed since the clean shutdown" : "no clean-shutdown marker",
	    n, n == 1 ? "" : "s",
	    (long long)klog_store_recovered_bytes(b->store));
	return 0;
}

static int
start_timers(klog_broker_t *b)
{
	int64_t first = b->cfg.cleanup_interval_ms < 60000 ?
	    b->cfg.cleanup_interval_ms : 60000;
	int rc = 0;

	klog_timer_init(&b->accept_timer, accept_resume, b);
	klog_timer_init(&b->flush_timer, on_flush_tick, b);
	klog_timer_init(&b->clean_timer, on_clean, b);
	klog_timer_init(&b->rescan_timer, on_rescan, b);
	if (b->cfg.flush_ms > 0) {
		int64_t tick = b->cfg.flush_ms / 4;

		tick = tick < 1 ? 1 : tick > 1000 ? 1000 : tick;
		rc = klog_loop_timer_start(b->loop, &b->flush_timer, tick,
		    tick);
	}
	if (rc == 0 && (b->cfg.retention_ms >= 0 ||
	    b->cfg.retention_bytes >= 0))
		rc = klog_loop_timer_start(b->loop, &b->clean_timer, first,
		    b->cfg.cleanup_interval_ms);
	if (rc == 0)
		rc = klog_loop_timer_start(b->loop, &b->rescan_timer,
		    b->cfg.rescan_interval_ms, b->cfg.rescan_interval_ms);
	return rc;
}

static int
copy_str(char **dst, const char *src, const char *dflt)
{
	return (*dst = strdup(src != NULL ? src : dflt)) == NULL ?
	    -KLOG_ENOMEM : 0;
}

int
klog_broker_open(const klog_broker_config_t *cfg, klog_broker_t **out,
    klog_err_t *err)
{
	klog_broker_t *b;
	int rc;

	*out = NULL;
	if ((rc = check_config(cfg, err)) < 0)
		return rc;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	b->cfg = *cfg;
	b->lfd = -1;
	b->eager = cfg->flush_messages == 0 && cfg->flush_ms == 0;
	pthread_mutex_init(&b->fl.mu, NULL);
	pthread_cond_init(&b->fl.cv, NULL);
	if ((rc = copy_str(&b->data_dir, cfg->data_dir,
	    KLOG_BROKER_DEFAULT_DATA_DIR)) < 0 ||
	    (rc = copy_str(&b->listen, cfg->listen,
	    KLOG_BROKER_DEFAULT_LISTEN)) < 0 ||
	    (b->rd = malloc(READ_CHUNK)) == NULL) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto fail;
	}
	b->cfg.data_dir = b->data_dir;
	b->cfg.listen = b->listen;
	if ((rc = klog_loop_create(&b->loop)) < 0) {
		rc = klog_err_set(err, rc, "event loop: %s", strerror(errno));
		goto fail;
	}
	/* Bind first, so a taken port fails before the data is touched;
	 * listen last, so connections are taken once the store is open. */
	if ((rc = listen_on(b, err)) < 0 || (rc = open_store(b, err)) < 0)
		goto fail;
	if (listen(b->lfd, LISTEN_BACKLOG) < 0) {
		rc = klog_err_set(err, -KLOG_ECONN, "listen %s: %s", b->listen,
		    strerror(errno));
		goto fail;
	}
	if ((rc = klog_loop_watch(b->loop, b->lfd, KLOG_LOOP_READABLE,
	    on_accept, b)) < 0 || (rc = start_timers(b)) < 0 ||
	    (rc = flusher_start(b)) < 0 ||
	    (rc = klog_prefetch_new(pf_notify, b->loop, b->cfg.cold_read_rate,
	    &b->pf)) < 0 || (rc = verify_start(b)) < 0) {
		rc = klog_err_set(err, rc, "starting: %s", klog_strerror(rc));
		goto fail;
	}
	klog_loop_set_before_sleep(b->loop, before_sleep, b);
	klog_loop_set_wake(b->loop, on_wake, b);
	*out = b;
	return 0;
fail:
	klog_broker_close(b, 0, NULL);
	return rc;
}

int
klog_broker_create_topic(klog_broker_t *b, const char *topic, int partitions,
    klog_err_t *err)
{
	int before = klog_store_partitions(b->store, topic), rc;

	if ((rc = klog_store_create_topic(b->store, topic, partitions,
	    err)) < 0)
		return rc;
	partitions = klog_store_partitions(b->store, topic);
	if (topic_add(b, topic, partitions) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if (partitions > before)
		topic_created(b, topic, partitions);
	return 0;
}

int
klog_broker_port(const klog_broker_t *b)
{
	return b->port;
}

const char *
klog_broker_advertised_host(const klog_broker_t *b)
{
	return b->adv_host;
}

int
klog_broker_advertised_port(const klog_broker_t *b)
{
	return b->cfg.advertised_port ? b->cfg.advertised_port : b->port;
}

int
klog_broker_topics(klog_broker_t *b, klog_broker_topic_fn *fn, void *arg)
{
	const char *name;
	int n, rc;

	for (size_t i = 0; i < klog_store_topic_count(b->store); i++) {
		name = klog_store_topic_name(b->store, i);
		if ((n = klog_store_partitions(b->store, name)) <= 0)
			continue;
		if ((rc = fn(arg, name, n)) < 0)
			return rc;
	}
	return 0;
}

klog_loop_t *
klog_broker_loop(klog_broker_t *b)
{
	return b->loop;
}

void
klog_broker_stop(klog_broker_t *b)
{
	klog_loop_stop(b->loop);
}

/*
 * Stop accepting and reading; answer long polls now (acks=all and OFFSETS
 * still wait for their flush, which is requested); write for up to
 * shutdown_ms; close whatever is left.
 */
static void
shutdown_conns(klog_broker_t *b)
{
	int64_t deadline = klog_loop_now_ms() + b->cfg.shutdown_ms, left;
	struct pend *pd, *next;
	struct conn *c, *cn;

	b->stopping = 1;
	klog_loop_timer_stop(b->loop, &b->accept_timer);
	if (b->lfd >= 0) {
		klog_loop_watch(b->loop, b->lfd, 0, NULL, NULL);
		close(b->lfd);
		b->lfd = -1;
	}
	for (pd = b->pends; pd != NULL; pd = next) {
		next = pd->next;
		if (pd->kind == PEND_FETCH) {
			pd->expired = 1;
			pend_check(pd);
		}
	}
	for (c = b->conns; c != NULL; c = cn) {
		cn = c->next;
		conn_write(c);
	}
	while (b->conns != NULL &&
	    (left = deadline - klog_loop_now_ms()) > 0)
		if (klog_loop_run_once(b->loop, (int)left) < 0)
			break;
	while (b->conns != NULL)
		conn_close(b->conns, KLOG_LEVEL_INFO,
		    "shutdown timeout: dropping unsent responses");
}

int
klog_broker_run(klog_broker_t *b)
{
	int rc;

	blog(b, KLOG_LEVEL_INFO, "listening on %s, data in %s", b->bind_host,
	    b->data_dir);
	rc = klog_loop_run(b->loop);
	if (rc < 0)
		blog(b, KLOG_LEVEL_ERROR, "event loop: %s", strerror(errno));
	blog(b, KLOG_LEVEL_INFO, "shutting down");
	shutdown_conns(b);
	return rc;
}

int
klog_broker_close(klog_broker_t *b, int clean, klog_err_t *err)
{
	struct scratch *s;
	int rc = 0;

	if (b == NULL)
		return 0;
	while (b->conns != NULL)
		conn_close(b->conns, KLOG_LEVEL_DEBUG, "broker closed");
	flusher_stop(b);
	klog_prefetch_free(b->pf);
	klog_verify_free(b->verify);
	free(b->vsets);
	if (b->store != NULL &&
	    (rc = klog_store_close(b->store, clean, err)) == 0 && clean)
		blog(b, KLOG_LEVEL_INFO, "clean shutdown");
	if (b->lfd >= 0)
		close(b->lfd);
	klog_loop_free(b->loop);
	topics_free(b);
	pthread_mutex_destroy(&b->fl.mu);
	pthread_cond_destroy(&b->fl.cv);
	free(b->fl.queue);
	free(b->fl.work);
	free(b->fl.done);
	free(b->wanted);
	s = &b->s;
	free(s->parts);
	free(s->items);
	free(s->results);
	free(s->oparts);
	free(s->errors);
	free(s->counts);
	free(s->offp);
	free(s->offsets);
	free(s->mtopics);
	free(b->rd);
	free(b->adv_host);
	free(b->bind_host);
	free(b->listen);
	free(b->data_dir);
	free(b);
	return rc;
}
