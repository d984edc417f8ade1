/*
 * The broker core's insides, shared by the files of lib/core/ (core.c
 * lists them, bottom up).  Nothing outside lib/core/ includes this.
 */
#ifndef KLOG_CORE_IMPL_H
#define KLOG_CORE_IMPL_H

#include <sys/uio.h>

#include "klog/core/core.h"
#include "klog/core/replica.h"
#include "klog/core/replicated.h"
#include "klog/storage/flusher.h"
#include "klog/storage/pids.h"
#include "klog/storage/pstate.h"

/* Where a staged set's result lives until its write is done. */
struct stage_ref {
	klog_core_park_t *park;   /* the park holding it, or NULL... */
	uint32_t item;            /* ...its item there */
	size_t pos;               /* else: where the front end encoded it;
	                             SIZE_MAX: no response (acks 0) */
};

struct topic {
	char *name;
	uint16_t len;
	uint32_t hash;
	int nparts;
	klog_core_part_t **parts; /* nparts, made on first use */
	uint32_t rr;              /* round robin for partition -1 */
	struct topic *hnext;
};

struct klog_core_part {
	klog_log_t *log;
	struct topic *topic;
	int32_t id;
	klog_core_item_t *waiters;
	klog_flusher_entry_t fl;
	int append_failing;       /* the last write failed (for the log) */
	int flush_failing;
	/* Sets staged by the current read (see core.h). */
	struct iovec *siov;
	struct stage_ref *sref;
	size_t sn, scap, srcap;   /* caps in bytes, as klog_buf_grow() keeps them */
	int64_t sbytes;
	uint32_t smsgs;
	int staged;               /* in c->staged */
	klog_replica_t *rep;      /* NULL: not replicated */
	klog_pstate_t *ps;        /* its producers; NULL until its first
	                             append (idem.c) */
	int64_t idem_said_ms;     /* a refused batch last logged */
	void *follower;           /* the fetcher's, while following */
	int caught_up;            /* fetched up to a leader's HW since the
	                             broker started */
	/* Counted per staged write and per fetch read, for the metrics. */
	uint64_t messages_in, bytes_in, bytes_out;
	int gone;                 /* its directory was removed behind the
	                             broker's back: to be dropped */
	int dying;                /* dropped, waiting for the flusher to let
	                             go of it (then freed) */
	klog_core_part_t *next_dying;
};

struct klog_core {
	klog_core_config_t cfg;
	klog_loop_t *loop;
	klog_store_t *store;
	klog_flusher_t *fl;
	struct topic **buckets;
	size_t nbuckets, ntopics;
	klog_core_part_t **parts;  /* every part made, for the flush timer */
	size_t nparts, parts_cap;
	klog_core_part_t **staged; /* parts with staged sets */
	size_t nstaged, staged_cap;
	int stage_full;            /* a staged part passed STAGE_SETS or
	                              STAGE_BYTES since the last commit */
	klog_core_park_t *parks;
	klog_core_park_t *recheck;
	klog_timer_t flush_timer;
	int eager;
	int appended;              /* since the last before_sleep */
	int stopping;
	klog_timer_t isr_timer;    /* leaders' ISR checks */
	int isr_timer_on;
	klog_core_name_fn *replicated_elsewhere;
	void *replicated_arg;
	int gone;                  /* some part is gone (see the part) */
	klog_core_part_t *dying;   /* dropped parts the flusher still has */
	size_t ndying;             /* their entries count in its room */
	int storage_failed;        /* a sync failed (offline.h) */
	klog_timer_t fail_timer;   /* tells fail_fn */
	void (*fail_fn)(void *);
	void *fail_arg;
	klog_pids_t *pids;         /* producer ids granted (idem.c) */
	klog_pids_block_fn *pid_block; /* their source; NULL: the file */
	void *pid_block_arg;
};


/*
 * Shared among the core's files, bottom up: a file calls only the files
 * listed before it (tests/layers.sh checks the calls).
 */

/* Wire error of a failed append or flush. */
static inline int16_t
core_wire_storage(int rc)
{
	return rc == -KLOG_ENOSPC ? KLOG_WIRE_DISK_FULL :
	    KLOG_WIRE_STORAGE_ERROR;
}

/* Ask the flusher for p's flush at the next submit. */
static inline void
core_want_flush(klog_core_t *c, klog_core_part_t *p)
{
	klog_flusher_want(c->fl, &p->fl);
}

/* topics.c */
int core_topic_cstr(klog_str_t name, char *buf);
struct topic *core_topic_named(klog_core_t *c, const char *name);
/* The topic of a wire name, created (create != 0, auto-create on) or
 * NULL with *werr set. */
struct topic *core_topic_lookup(klog_core_t *c, klog_str_t name, int create,
    int16_t *werr);
/* Partition id of t, its log opened on first use; NULL with *werr. */
klog_core_part_t *core_part_get(klog_core_t *c, struct topic *t, int32_t id,
    int16_t *werr);
klog_core_part_t *core_part_lookup(klog_core_t *c, klog_str_t topic,
    int32_t id, int16_t *werr);
klog_core_part_t *core_part_named(klog_core_t *c, const char *topic, int id,
    int nparts, klog_err_t *err);

/* parks.c */
void core_item_unlink(klog_core_item_t *it);
void core_park_check(klog_core_park_t *pk);
void core_recheck_add(klog_core_t *c, klog_core_park_t *pk);
void core_recheck_run(klog_core_t *c);
void core_part_moved(klog_core_t *c, klog_core_part_t *p, int rc);

/* offline.c */
/* A sync failed (rc -KLOG_ESTORAGE, found on p): say so once, refuse
 * every write from now on, tell the replication layer. */
void core_storage_failed(klog_core_t *c, const klog_core_part_t *p,
    const klog_err_t *err);
/* The end a reader or OFFSETS may wait to see flushed: the written end,
 * or, once the log's sync failed, its flushed end, since nothing past it
 * will ever be flushed (log.h) and a wait for it would be answered at
 * once, again and again. */
int64_t core_awaited_end(klog_log_t *log);

/* idem.c */
/* p's producer state, rebuilt from its log the first time; NULL when out
 * of memory. */
klog_pstate_t *core_idem_state(klog_core_t *c, klog_core_part_t *p);
/* Before staging set[0..len) for p: 0 to stage it (a producer's batch in
 * sequence is recorded at the offset it will have), 1 when it is answered
 * in it (an error, or a duplicate's original offset and end). */
int core_idem_check(klog_core_t *c, klog_core_part_t *p, const uint8_t *set,
    uint32_t len, klog_core_item_t *it);
/* The set checked at at was not staged after all. */
void core_idem_unstage(klog_core_part_t *p, int64_t at);
/* p's staged sets were written (some may have failed); the log had
 * segments segments before: a snapshot if it rolled. */
void core_idem_written(klog_core_t *c, klog_core_part_t *p, size_t segments);
/* A follower is appending set at at. */
int core_idem_replica(klog_core_t *c, klog_core_part_t *p, const uint8_t *set,
    size_t len, int64_t at, klog_err_t *err);
/* p's log was cut to end (-1: emptied). */
int core_idem_cut(klog_core_part_t *p, int64_t end, klog_err_t *err);
/* Save p's state as of its log's end (a clean close). */
void core_idem_save(klog_core_t *c, klog_core_part_t *p);
void core_idem_free(klog_core_part_t *p);

/* stage.c */
void core_after_append(klog_core_t *c, klog_core_part_t *p);
/* Stage set for p: *first gets its offset, *idx its index among p's
 * staged sets.  Returns a wire error (out of memory). */
int16_t core_stage(klog_core_t *c, klog_core_part_t *p, const uint8_t *set,
    uint32_t len, uint32_t msgs, int64_t *first, int64_t *idx);

/* replicated.c */
/* What consumers may see of p: its flushed end, or for a replicated
 * partition the committed end.  Inline: on every request's path. */
static inline int64_t
core_visible_end(const klog_core_part_t *p)
{
	int64_t fe = klog_log_flushed_end(p->log);

	return p->rep == NULL ? fe : klog_replica_committed(p->rep, fe);
}

/* Where a fetch item may read to: a follower to the flushed end, others
 * to what is visible. */
static inline int64_t
core_item_end(const klog_core_item_t *it)
{
	return it->is_replica ? klog_log_flushed_end(it->part->log) :
	    core_visible_end(it->part);
}

int16_t core_rep_check_replicated(const klog_core_part_t *p, int acks);

/* A wire error if p is replicated and not led here (or acks=all cannot be
 * taken now). */
static inline int16_t
core_rep_check(const klog_core_part_t *p, int acks)
{
	return p->rep == NULL ? KLOG_WIRE_NONE :
	    core_rep_check_replicated(p, acks);
}
/* p's flushed end moved; for a follower, tell the fetcher. */
void core_rep_flushed(klog_core_t *c, klog_core_part_t *p);
void core_rep_stop(klog_core_t *c);
void core_rep_free_part(klog_core_part_t *p);

/* admin.c */
/* After the flusher's reports: drop the parts found gone, free the dying
 * parts it has let go of. */
void core_after_flushes(klog_core_t *c);
/* Free every dying part (the flusher stopped). */
void core_dying_free(klog_core_t *c);

#endif
