/*
 * Kafka consumer groups coordinated by the broker, for the Kafka listener
 * (klog-kafka(7)): Kafka's eager group protocol (JoinGroup, SyncGroup,
 * Heartbeat, LeaveGroup) with Kafka 2.x's rules: a rebalance timeout of
 * each member's own for the join phase, and KIP-394's member id required
 * of a new member before it joins.  The broker only keeps membership and
 * generations (in its table, kgtable.h): it collects the joins, chooses a
 * protocol every member lists, hands the members' metadata to the leader
 * it elects and the leader's assignment to each member; the assignment
 * itself runs in the clients.  No I/O: requests in, answers through the
 * config's callbacks (at once, inside the call, or later from a timer or
 * another member's request), timers on the loop.  Everything runs on the
 * loop's thread.
 *
 * States, per group: empty; preparing a rebalance (joins are held until
 * every known member has joined again or the largest of the members'
 * rebalance timeouts passes, and those that did not are dropped); awaiting
 * the leader's SyncGroup (members' syncs held); stable.  A member whose
 * session passes without a heartbeat (or join or sync) is dropped, and
 * the rest rebalance.  A group instance id (KIP-345's static membership)
 * is kept and shown, but the member is a dynamic one all the same.
 */
#ifndef KLOG_COORDINATOR_H
#define KLOG_COORDINATOR_H

#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/logger.h"
#include "klog/kafka/kgtable.h"
#include "klog/kafka/kwgroup.h"
#include "klog/net/loop.h"

typedef struct klog_coordinator klog_coordinator_t;

typedef struct klog_coordinator_join_req {
	klog_str_t group;
	klog_str_t member_id;        /* empty on a first join */
	klog_str_t protocol_type;    /* "consumer" */
	int require_member_id;       /* JoinGroup v4+: a new member first
	                                gets MEMBER_ID_REQUIRED with its id */
	klog_kmember_spec_t member;  /* rebalance_ms: v0's is the session */
} klog_coordinator_join_req_t;

typedef struct klog_coordinator_sync_req {
	klog_str_t group;
	int32_t generation;
	klog_str_t member_id;
	uint32_t nassign;            /* the leader's; 0 for the others */
	const klog_kpair_t *assign;  /* member id and its share */
} klog_coordinator_sync_req_t;

/*
 * A request that may be answered later.  The front end embeds it in what
 * holds the request's place on its connection; the fields are private.
 * After its answer, or klog_coordinator_cancel(), the module forgets it: it is
 * cleared before its callback runs, so the callback may free it.  A member
 * dropped while it holds a wait (LeaveGroup) has the wait answered
 * UNKNOWN_MEMBER_ID; a member's second join or sync while its first is
 * held answers the first REBALANCE_IN_PROGRESS.
 */
typedef struct klog_coordinator_wait klog_coordinator_wait_t;
struct klog_coordinator_wait {
	klog_coordinator_wait_t *prev, *next;
	void *group;
	void *member;
	int kind;
};

/* A JoinGroup answer; views valid during the callback only.  With an
 * error the member id is empty unless the member is known (or, with
 * MEMBER_ID_REQUIRED, the id to join with). */
typedef void klog_coordinator_join_fn(klog_coordinator_wait_t *w,
    const klog_kjoin_resp_t *r);
/* A SyncGroup answer: error, and this member's assignment (a view valid
 * during the call; len 0 with an error). */
typedef void klog_coordinator_sync_fn(klog_coordinator_wait_t *w, int16_t error,
    const uint8_t *assignment, uint32_t len);

/* The callbacks run inside the klog_coordinator_* calls and inside the
 * coordinator's timers, and must not call into the coordinator. */
typedef struct klog_coordinator_config {
	int32_t min_session_ms;      /* Kafka's group.min.session.timeout.ms */
	int32_t max_session_ms;      /* group.max.session.timeout.ms */
	uint32_t max_members;        /* per group, pending ids counted; a
	                                join past it, or a new group past
	                                max_groups, gets KLOG_KERR_UNKNOWN */
	uint32_t max_groups;
	klog_coordinator_join_fn *join_done;
	klog_coordinator_sync_fn *sync_done;
	klog_logger_t log;
} klog_coordinator_config_t;

/* No groups yet.  *out is the caller's: klog_coordinator_free().
 * -KLOG_EINVAL for a config without callbacks, with a zero limit or with
 * min_session_ms over max_session_ms; -KLOG_ENOMEM. */
int klog_coordinator_new(klog_loop_t *loop, const klog_coordinator_config_t *cfg,
    klog_coordinator_t **out);

/* Stop the timers and free everything; waits still linked are forgotten
 * (never answered).  NULL is fine. */
void klog_coordinator_free(klog_coordinator_t *g);

/* The groups and members, for the describe and list views (kgtable.h). */
const klog_kgtable_t *klog_coordinator_table(const klog_coordinator_t *g);

/*
 * A JoinGroup: w is answered through join_done, now or later.  Returns 0,
 * or -KLOG_ENOMEM when nothing was done and w will not be answered.  A
 * new member's id is kgtable.h's.  With require_member_id, a join without
 * a member id is answered MEMBER_ID_REQUIRED with one, kept pending for a
 * session timeout; a join with it then makes the member.
 */
int klog_coordinator_join(klog_coordinator_t *g, const klog_coordinator_join_req_t *req,
    klog_coordinator_wait_t *w);

/* A SyncGroup: as klog_coordinator_join(), answered through sync_done. */
int klog_coordinator_sync(klog_coordinator_t *g, const klog_coordinator_sync_req_t *req,
    klog_coordinator_wait_t *w);

/* The connection of a waiting request went away: w is never answered.
 * The member stays, a cancelled join still counting as its rejoin, until
 * its session (restarted now) runs out.  Harmless on a wait already
 * answered or cancelled. */
void klog_coordinator_cancel(klog_coordinator_t *g, klog_coordinator_wait_t *w);

/* Heartbeat and LeaveGroup, answered at once: a KLOG_KERR_* code.  A
 * heartbeat is REBALANCE_IN_PROGRESS only while a rebalance is being
 * prepared (Kafka 0.10 said so while awaiting the leader's sync too).  A
 * member id still pending may leave too (it then never joins). */
int16_t klog_coordinator_heartbeat(klog_coordinator_t *g, klog_str_t group,
    int32_t generation, klog_str_t member_id);
int16_t klog_coordinator_leave(klog_coordinator_t *g, klog_str_t group,
    klog_str_t member_id);

/*
 * Whether an OffsetCommit of group by member at generation may go ahead:
 * KLOG_KERR_NONE, or the error it gets.  Generation -1 with an empty
 * member id (a consumer outside any group: kcat -o stored, a v0 commit) is
 * allowed while the group has no members; a generation other than -1
 * for a group without members is ILLEGAL_GENERATION.  In an active group,
 * as Kafka 0.10's handleCommitOffsets: REBALANCE_IN_PROGRESS while
 * awaiting the leader's SyncGroup, else UNKNOWN_MEMBER_ID or
 * ILLEGAL_GENERATION unless member and generation match, so the old
 * generation may still commit while a rebalance is being prepared (as
 * consumers do before they rejoin).  A commit that may go ahead renews the
 * member's session.
 */
int16_t klog_coordinator_commit_check(klog_coordinator_t *g, klog_str_t group,
    int32_t generation, klog_str_t member_id);

#endif
