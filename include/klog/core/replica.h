/*
 * One replicated partition's replication state on one broker: its role,
 * the leader epoch, and, on the leader, the in-sync replicas, each
 * follower's position and the high watermark (HW).
 *
 * The rules (klog(7), "Replication"):
 *  - A follower's position is what it reported in its last REPLICA_FETCH:
 *    its log end (the fetch offset) and its flushed end.
 *  - HW = the minimum flushed end over the ISR, the leader's own included:
 *    a record under HW is on the disk of every in-sync replica (acks=all
 *    waits for it).  HW only grows within an epoch, and is frozen while
 *    the ISR is smaller than min_insync.
 *  - A follower is caught up when a fetch of its reaches the leader's
 *    flushed end, or, as Kafka counts it, was caught up at its previous
 *    fetch when this one reaches where the leader's flushed end was then
 *    (a follower of a busy leader is never level with it); one not caught
 *    up for lag_ms leaves the ISR, and one
 *    whose flushed end went backwards (it lost what it had acknowledged)
 *    leaves it at once.  One whose flushed end reaches HW and the current
 *    epoch's start joins it again.  ISR changes are the caller's to make
 *    durable first (ZooKeeper): these functions only say what is due.
 *  - While an ISR write is in flight, HW counts the members of both the
 *    ISR and the one being written (Kafka's "maximal ISR", KIP-497): the
 *    write may be applied before its answer comes, or without one, and
 *    whichever ISR ZooKeeper holds may elect the next leader, so each of
 *    its members must hold every acknowledged record.
 *  - A follower whose log diverges from the leader's (its newest epoch
 *    ends earlier here, or is unknown here) is told where to cut (KIP-279).
 * Everything runs on the broker's loop thread.
 */
#ifndef KLOG_REPLICA_H
#define KLOG_REPLICA_H

#include <stdint.h>

#include "klog/base/error.h"
#include "klog/proto/proto.h"
#include "klog/storage/epochs.h"

#define KLOG_REPLICA_MAX 16

enum klog_replica_role {
	KLOG_REPLICA_OFFLINE,     /* no leader known, or stepping down */
	KLOG_REPLICA_LEADER,
	KLOG_REPLICA_FOLLOWER,
};

typedef struct klog_replica_peer {
	int32_t id;
	int in_isr;
	int in_pending;           /* in the ISR being written */
	int64_t leo;              /* its last fetch offset, -1 unknown */
	int64_t fw;               /* its flushed end, -1 unknown */
	int64_t caught_up_ms;     /* monotonic */
	int64_t last_fetch_ms;    /* its previous fetch, and the leader's */
	int64_t last_fetch_fw;    /* flushed end then */
} klog_replica_peer_t;

typedef struct klog_replica {
	int32_t me;
	int role;
	int32_t epoch;            /* the leader epoch known */
	int32_t leader;           /* -1: none */
	int min_insync;
	int64_t lag_ms;
	int64_t hw;
	int pending;              /* an ISR write is in flight */
	int npeers;
	klog_replica_peer_t peers[KLOG_REPLICA_MAX];  /* the others */
	klog_epochs_t *epochs;
} klog_replica_t;

/* State for the partition directory dir (its epoch file loaded). */
int klog_replica_new(const char *dir, int32_t me, int64_t lag_ms,
    klog_replica_t **out, klog_err_t *err);
void klog_replica_free(klog_replica_t *r);

/*
 * Lead epoch over replicas[0..nrep) (me among them) with the ISR isr,
 * the log ending at leo: the epoch is recorded (durable) before this
 * returns, so no byte of it is written unrecorded.
 */
int klog_replica_lead(klog_replica_t *r, int32_t epoch,
    const int32_t *replicas, int nrep, const int32_t *isr, int nisr,
    int min_insync, int64_t leo, int64_t now, klog_err_t *err);
void klog_replica_follow(klog_replica_t *r, int32_t epoch, int32_t leader);
void klog_replica_offline(klog_replica_t *r);

/* The ISR, the leader first, into out (KLOG_REPLICA_MAX); its size. */
int klog_replica_isr(const klog_replica_t *r, int32_t *out);
int klog_replica_isr_size(const klog_replica_t *r);

/* What consumers may read on the leader whose flushed end is fw. */
int64_t klog_replica_committed(const klog_replica_t *r, int64_t fw);

/* Recompute HW on the leader after fw or a follower moved: 1 if it grew. */
int klog_replica_advance(klog_replica_t *r, int64_t fw);

/*
 * A follower's REPLICA_FETCH on the leader, whose log ends at leo and is
 * flushed to fw: a wire error (NOT_LEADER, FENCED_LEADER_EPOCH,
 * INVALID_REQUEST), or NONE with resp's epochs, HW and divergence filled
 * (set fields are the caller's).  *shrink / *expand: the ISR should lose /
 * gain this follower.
 */
int16_t klog_replica_on_fetch(klog_replica_t *r, const klog_rfetch_req_t *q,
    int64_t leo, int64_t fw, int64_t now, klog_rfetch_resp_t *resp,
    int *shrink, int *expand);

/*
 * A follower's REPLICA_POS (its flushed end moved after a fetch it sent):
 * taken as that fetch's position would be, if the epoch and the replica
 * are right and it is within leo; 0 if taken, else a wire error (nobody
 * is told: the request has no response).
 */
int16_t klog_replica_on_pos(klog_replica_t *r, const klog_rfetch_req_t *q,
    int64_t leo, int64_t fw, int64_t now, int *shrink, int *expand);

/* An ISR follower not caught up for lag_ms, or -1. */
int32_t klog_replica_laggard(const klog_replica_t *r, int64_t now);

/* The ISR, with id put in (add) or taken out: into out; its size. */
int klog_replica_isr_with(const klog_replica_t *r, int32_t id, int add,
    int32_t *out);
/* Take isr[0..n) as the ISR (written to ZooKeeper by the caller); ends
 * any pending write. */
void klog_replica_set_isr(klog_replica_t *r, const int32_t *isr, int n,
    int64_t now);
/* isr[0..n) is being written / the write ended without changing the ISR. */
void klog_replica_set_pending(klog_replica_t *r, const int32_t *isr, int n);
void klog_replica_clear_pending(klog_replica_t *r);

/* On a follower: the leader said its HW is hw; the local log ends at leo. */
void klog_replica_follower_hw(klog_replica_t *r, int64_t hw, int64_t leo);

#endif
