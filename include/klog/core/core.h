/*
 * The broker core: topics and partitions over a store, appends staged and
 * written together, the flusher, and requests parked until a flush, a long
 * poll's data or its timeout.  It deals in decoded requests (proto.h's
 * parts) and in results (items, below), never in wire bytes: a front end
 * (native.h for the klog protocol) frames and decodes a request, calls the
 * core, and encodes what the core leaves in the items.
 *
 * Everything runs on the event loop's thread.  Visibility is the broker's
 * (broker.h): consumers see flushed data only, and a request that needs
 * the visible end of a log with unflushed data waits for one flush.
 *
 * Appends are staged: the sets of the produce requests of one read stay
 * where they are in the front end's buffer and go to each partition's log
 * in one pwritev() at klog_core_commit(), which the front end calls when
 * the read is done and before any other request (so a fetch pipelined
 * behind a produce sees it).  Each staged set remembers where its result
 * is: an item of a parked request, or a position the front end named
 * (klog_core_note_result()) in a response it already encoded; a set the
 * write could not take has its result turned into an error there.  So an
 * acknowledgement is never sent for bytes that are not in the log, and the
 * log never holds a set whose producer was told it failed.
 */
#ifndef KLOG_CORE_H
#define KLOG_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/base/logger.h"
#include "klog/net/loop.h"
#include "klog/net/outq.h"
#include "klog/proto/proto.h"
#include "klog/storage/log.h"
#include "klog/storage/store.h"

#define KLOG_CORE_MAX_FETCH_BYTES (64 * 1024 * 1024)  /* per partition */

typedef struct klog_core klog_core_t;
typedef struct klog_core_part klog_core_part_t;
typedef struct klog_core_park klog_core_park_t;

/*
 * Called after a topic is created (auto-created by a produce or by
 * klog_core_create_topic()), with its partition count; the place for a
 * cluster to register it.  A negative return is logged and otherwise
 * ignored: the topic exists locally either way.
 */
typedef int klog_core_topic_fn(void *arg, const char *topic, int partitions);

/*
 * Start writing a leader's ISR change for partition of topic at epoch
 * (ZooKeeper), without waiting: 0 once it is on its way, its outcome told
 * later through klog_core_isr_written() (replicated.h); -KLOG_EBUSY if
 * this broker does not lead it at epoch any more (the partition then goes
 * offline until its new role is set); another error if it could not be
 * sent (asked again at the next fetch or tick).
 */
typedef int klog_core_isr_fn(void *arg, const char *topic, int partition,
    int32_t epoch, const int32_t *isr, int n);

/* A partition-level event for the replication layer. */
typedef void klog_core_part_fn(void *arg, klog_core_part_t *p);

typedef struct klog_core_config {
	int default_partitions;        /* for auto-created topics */
	int auto_create;               /* produce creates unknown topics */
	int64_t flush_messages;        /* 0: no count trigger */
	int64_t flush_ms;              /* 0: no time trigger; both 0: eager */
	int64_t max_message_bytes;     /* per top-level message payload */
	klog_logger_t log;
	klog_core_topic_fn *topic_created;
	void *topic_arg;
	int32_t broker_id;             /* this broker, for replication */
	int64_t replica_lag_ms;        /* a follower behind this long leaves
	                                  the ISR */
	klog_core_isr_fn *isr_change;  /* NULL: ISRs never change */
	void *isr_arg;
	klog_core_part_fn *follower_flushed;  /* a follower's log flushed */
	void *follower_arg;
} klog_core_config_t;

/*
 * One partition of a request: filled by the core from the decoded part,
 * answered from it, and (when the request is parked) linked into its
 * partition's waiters.  error is a KLOG_WIRE_* code.
 */
typedef struct klog_core_item {
	klog_core_park_t *park;
	klog_core_part_t *part;   /* NULL when error is set at lookup */
	struct klog_core_item *prev, *next;  /* in the waiters while linked */
	int linked;
	klog_str_t topic;
	int32_t partition;
	int16_t error;
	int64_t offset;           /* produce: first offset; fetch: where from;
	                             offsets: the time asked */
	int32_t max;              /* fetch: max bytes; offsets: max count */
	int64_t target;           /* flushed end awaited, or -1 */
	int64_t staged;           /* produce: index among the partition's
	                             staged sets, or -1 */
	int is_replica;           /* a follower's fetch: reads to the flushed
	                             end, not the committed one */
	int align;                /* fetch: an offset inside a message reads
	                             from that message's start (the Kafka
	                             listener's; set by the front end) */
	int first_at;             /* offsets: a time asks for the first record
	                             at or after it (OFFSETS v2; set by the
	                             front end) */
	int32_t replica_id;
	int32_t div_epoch;        /* rfetch: where the follower diverges */
	int64_t div_end;
} klog_core_item_t;

enum klog_core_kind {
	KLOG_CORE_PRODUCE,        /* acks=all: until every target is flushed */
	KLOG_CORE_FETCH,          /* until min_bytes are visible or timeout */
	KLOG_CORE_OFFSETS,        /* until the log end is flushed */
	KLOG_CORE_RFETCH,         /* a follower's: as FETCH */
};

/* Encode pk's response into pk->hold.q, set pk->hold.ready and have its
 * connection write: the front end's, called once when pk is answered. */
typedef void klog_core_finish_fn(klog_core_park_t *pk);

/* Where a parked request's answer goes, and who encodes it. */
typedef struct klog_core_reply {
	klog_outq_t *q;               /* queued in order on it */
	klog_core_finish_fn *finish;
	void *front;                  /* the front end */
	void *conn;                   /* its connection */
} klog_core_reply_t;

/*
 * A parked request.  hold is first: the connection's output queue hands it
 * back.  The front end reads hold, front, conn, kind, correlation, n and
 * items; the
 * rest is the core's.  Freed when the output queue is done with the hold.
 */
struct klog_core_park {
	klog_outq_hold_t hold;
	klog_core_t *core;
	klog_core_finish_fn *finish;
	void *front, *conn;        /* as in the reply */
	klog_core_park_t *prev, *next;  /* the core's list while waiting */
	int kind;
	int complete;
	int expired;
	int flushes;               /* items still waiting for a flush */
	int rechecking;
	klog_core_park_t *next_recheck;
	int32_t correlation;
	int32_t min_bytes;
	int32_t tag[2];            /* the front end's own: the Kafka listener
	                              keeps the API version and the fetch
	                              limit of the request here */
	int64_t arrived_ns;        /* the front end's own: when the request
	                              came in, for its latency */
	int64_t stamp;             /* the front end's own: the Kafka
	                              listener's LogAppendTime of a produce */
	klog_timer_t timer;
	uint32_t n;
	klog_core_item_t items[];  /* n, then the topic names */
};

/* Patch a result the front end encoded at pos into error (offset -1). */
typedef void klog_core_patch_fn(void *arg, size_t pos, int16_t error);

/* What the front end's decoder checked of pp's set: 0 (nothing), or
 * KLOG_CORE_TRUST_CRC (its top-level CRCs), with KLOG_CORE_TRUST_RECORDS
 * when it also read its magic-2 entries' records as klog_msgset_validate()
 * would (KLOG_ITER_RECORDS_CHECKED: the core then does not inflate and
 * read them again). */
typedef int klog_core_trust_fn(void *arg, const klog_produce_part_t *pp);

enum klog_core_trust {
	KLOG_CORE_TRUST_CRC = 1,
	KLOG_CORE_TRUST_RECORDS = 2,
};

/*
 * A core over store (the caller's, open until after klog_core_free()),
 * with its flush timer on loop and its flusher thread started.  cfg is copied.
 * *out is the caller's: klog_core_free().
 */
int klog_core_new(klog_loop_t *loop, klog_store_t *store,
    const klog_core_config_t *cfg, klog_core_t **out, klog_err_t *err);

/* Set (or with NULLs clear) the replication hooks of the config and the
 * ISR lag; on the loop thread. */
void klog_core_set_replication(klog_core_t *c, int64_t lag_ms,
    klog_core_isr_fn *isr_change, void *isr_arg,
    klog_core_part_fn *follower_flushed, void *follower_arg);

/* Stop the flusher and the timer and free c; parks must be gone (their
 * connections closed).  NULL is fine. */
void klog_core_free(klog_core_t *c);

/* Create a topic with the given partitions, or grow it; calls
 * topic_created. */
int klog_core_create_topic(klog_core_t *c, const char *topic, int partitions,
    klog_err_t *err);

/* fn for every topic of the store, in name order, with its partition
 * count; a negative return stops and is returned. */
int klog_core_topics(klog_core_t *c, klog_core_topic_fn *fn, void *arg);

/*
 * A produce request: fill items[0..req->count) (the staged sets' results,
 * or errors; parts with partition -1 go round robin).  trust says what
 * the decoder checked of each set (NULL: nothing).  Returns how many items an
 * acks=all request must wait for (0 for other acks).
 */
int klog_core_produce(klog_core_t *c, const klog_produce_req_t *req,
    klog_core_trust_fn *trust, void *arg, klog_core_item_t *items);

/*
 * Items [from, n) answer error for parts that never reach the core (a
 * front end's refusal, such as the ACLs'): parts is the request's array
 * of produce, fetch or offsets parts (each size bytes), which start
 * alike, a topic then a partition.
 */
void klog_core_refuse_items(klog_core_item_t *items, uint32_t from,
    uint32_t n, const void *parts, size_t size, int16_t error);

/* A produce response encoded now: the result of it (staged) is at pos,
 * SIZE_MAX for none (acks 0). */
void klog_core_note_result(klog_core_item_t *it, size_t pos);

/* Whether enough is staged to write before the next request. */
int klog_core_stage_full(const klog_core_t *c);

/* Write every staged set; results of those the log did not take become
 * errors (patch for those noted at a position). */
void klog_core_commit(klog_core_t *c, klog_core_patch_fn *patch, void *arg);

/* A fetch request: fill items; 1 when it is answered now, 0 when it must
 * be parked (klog_core_park(), then klog_core_park_fetch()). */
int klog_core_fetch(klog_core_t *c, const klog_fetch_req_t *req,
    klog_core_item_t *items);

/* What a fetch item answers: an error or no bytes yet, or a slice of the
 * log (has_slice), which the caller must release or hand over. */
typedef struct klog_core_read {
	int16_t error;
	int64_t log_start, log_end;   /* the flushed end; -1, -1 unknown */
	int has_slice;
	klog_log_slice_t slice;
} klog_core_read_t;

/* What it answers now, reading at most budget file bytes. */
void klog_core_fetch_read(klog_core_t *c, const klog_core_item_t *it,
    int64_t budget, klog_core_read_t *r);

/* The start of an item's partition, as a read reports it (a Kafka
 * produce answer's log start); -1 for an item without one. */
int64_t klog_core_item_log_start(const klog_core_item_t *it);

/* An offsets request of n parts: fill items; returns how many wait for a
 * flush (0: answer now). */
int klog_core_offsets(klog_core_t *c, const klog_offsets_part_t *parts,
    uint32_t n, klog_core_item_t *items);

/* The offsets of an answered offsets item into out (it->max at most);
 * *count set; a KLOG_WIRE_* error. */
int16_t klog_core_offsets_read(const klog_core_item_t *it, int64_t *out,
    int *count);

/*
 * The first record at or after an answered offsets item's time (>= 0),
 * klog_log_find_time(): *res, and a KLOG_WIRE_* error.  A found offset at
 * or past what readers may see (a replicated partition's committed end)
 * is NONE.
 */
int16_t klog_core_offsets_time(const klog_core_item_t *it,
    klog_log_time_t *res);

/* A topic's partition count for metadata: 0, or a wire error. */
int16_t klog_core_topic_meta(klog_core_t *c, klog_str_t name,
    int *partitions);
size_t klog_core_topic_count(klog_core_t *c);
/* The i-th topic's name and partition count. */
const char *klog_core_topic_at(klog_core_t *c, size_t i, int *partitions);

/*
 * Park a request of kind whose items were filled by the core (topics
 * copied), in order on the reply's queue; items with targets wait for
 * their flushes (asked for), and with link_all every item with a partition
 * is also woken when its partition's data moves.  The reply's finish
 * encodes it.  NULL when out of memory.
 */
klog_core_park_t *klog_core_park(klog_core_t *c, int kind, int32_t corr,
    const klog_core_item_t *items, uint32_t n, int link_all,
    const klog_core_reply_t *reply);

/* A parked fetch waits for min_bytes, at most max_wait_ms. */
void klog_core_park_fetch(klog_core_park_t *pk, int32_t min_bytes,
    int32_t max_wait_ms);

/*
 * Between loop iterations: ask the flusher for this iteration's flushes.
 * Returns whether anything was appended since the last call.
 */
int klog_core_before_sleep(klog_core_t *c);

/* The loop was woken: answer what the finished flushes release. */
void klog_core_on_wake(klog_core_t *c);

/* Shutting down: long polls are answered now; acks=all and offsets still
 * wait for their flushes. */
void klog_core_stop(klog_core_t *c);

#endif
