/*
 * The Kafka group coordinator's table (coordinator.h keeps the rules): its
 * groups, by id in a hash, and each group's members, oldest first, with
 * what Kafka's GroupMetadata and MemberMetadata keep: a member's id, the
 * client id and host it joined from, its group instance id, timeouts,
 * protocols and metadata, its share of the assignment.  Beside them, the
 * ids handed out with MEMBER_ID_REQUIRED and not yet joined with (KIP-394:
 * pending members).  Here too the protocol vote, the member ids, and the
 * views DescribeGroups and ListGroups show.  No I/O; everything runs on
 * the loop's thread.
 *
 * Each group has a timer for the rebalance deadline, each member (pending
 * ones too) a session timer; both are started here, where the group or
 * member is made, the only place the loop's heap may need to grow and so
 * the only place a timer can fail.  Their callbacks are the coordinator's,
 * given in the config; the coordinator only moves the timers after that.
 */
#ifndef KLOG_KGTABLE_H
#define KLOG_KGTABLE_H

#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/kafka/kwgroup.h"
#include "klog/net/loop.h"

/* A group's states, as Kafka's GroupMetadata has them. */
enum klog_kgroup_state {
	KLOG_KGROUP_EMPTY,
	KLOG_KGROUP_PREPARING,         /* PreparingRebalance */
	KLOG_KGROUP_AWAITING_SYNC,     /* CompletingRebalance */
	KLOG_KGROUP_STABLE,
};

/* Who joins, and with what: a JoinGroup's fields about its member. */
typedef struct klog_kmember_spec {
	klog_str_t client_id;          /* a new member id starts with it */
	klog_str_t client_host;        /* as DescribeGroups shows it */
	klog_str_t instance_id;        /* p NULL: none */
	int32_t session_ms, rebalance_ms;
	uint32_t nprotocols;
	const klog_kpair_t *protocols; /* each a name and its metadata */
} klog_kmember_spec_t;

struct klog_coordinator_wait;
typedef struct klog_kgroup klog_kgroup_t;
typedef struct klog_kmember klog_kmember_t;

struct klog_kmember {
	klog_kmember_t *prev, *next;   /* the group's members, or its
	                                  pending ids */
	klog_kgroup_t *grp;
	klog_timer_t timer;            /* session; repeating, always
	                                  scheduled */
	char *id;                      /* one block: the id, client id,
	                                  client host, instance id */
	uint16_t id_len;
	klog_str_t client_id, client_host, instance_id;
	int pending;                   /* an id handed out, not joined yet */
	int32_t session_ms, rebalance_ms;
	uint32_t nprotos;
	klog_kpair_t *protos;         /* one block with names and metadata */
	const uint8_t *assign;         /* into grp->assign_buf */
	uint32_t assign_len;
	struct klog_coordinator_wait *join_wait, *sync_wait;
	int joined;                    /* joined in this rebalance (its join
	                                  may since have been cancelled) */
};

typedef struct klog_kgtable klog_kgtable_t;

struct klog_kgroup {
	klog_kgroup_t *hnext;
	klog_kgtable_t *t;
	klog_timer_t timer;            /* the rebalance deadline, or parked */
	char *id;
	uint16_t id_len;
	klog_str_t ptype;              /* owned */
	int state;                     /* enum klog_kgroup_state */
	int32_t generation;
	klog_kmember_t *head, *tail;
	uint32_t nmembers;
	klog_kmember_t *pending;       /* ids handed out, newest first */
	uint32_t npending;
	klog_kmember_t *leader;
	klog_str_t protocol;           /* AwaitingSync and Stable only: a
	                                  view into the leader's protocols */
	uint8_t *assign_buf;
};

typedef struct klog_kgtable_config {
	uint32_t max_members;          /* per group, pending ids counted */
	uint32_t max_groups;
	klog_timer_fn *rebalance_fired;  /* arg: the group */
	klog_timer_fn *session_fired;    /* arg: the member */
	void *owner;                   /* the coordinator, for them */
} klog_kgtable_config_t;

/* An empty table; *out is the caller's: klog_kgtable_free().  -KLOG_EINVAL
 * for a zero limit, -KLOG_ENOMEM. */
int klog_kgtable_new(klog_loop_t *loop, const klog_kgtable_config_t *cfg,
    klog_kgtable_t **out);
/* Every group freed, its timers stopped; NULL is fine. */
void klog_kgtable_free(klog_kgtable_t *t);
void *klog_kgtable_owner(const klog_kgtable_t *t);
uint32_t klog_kgtable_ngroups(const klog_kgtable_t *t);
uint32_t klog_kgtable_max_members(const klog_kgtable_t *t);

klog_kgroup_t *klog_kgtable_find(const klog_kgtable_t *t, klog_str_t id);
/* A new empty group, generation 0, its timer parked; NULL for no memory
 * or past max_groups. */
klog_kgroup_t *klog_kgtable_group_new(klog_kgtable_t *t, klog_str_t id);
/* Unlink and free a group, its members and pending ids (none of them
 * holding a wait, or the table going away). */
void klog_kgtable_group_free(klog_kgroup_t *grp);
/* Take protocol type ptype, a copy, for the group; -KLOG_ENOMEM. */
int klog_kgtable_set_ptype(klog_kgroup_t *grp, klog_str_t ptype);

/* A member by id (empty: none); a pending id likewise. */
klog_kmember_t *klog_kgtable_member(const klog_kgroup_t *grp, klog_str_t id);
klog_kmember_t *klog_kgtable_pending(const klog_kgroup_t *grp,
    klog_str_t id);

/*
 * A new member of grp (pending: only an id handed out) with a fresh id
 * "<client id, cut at 255 bytes>-<n>-<16 hex digits>", n counting this
 * table's members, the digits differing from run to run; its session
 * timer started.  A member is last in the group's list.  NULL for no
 * memory or a group holding max_members already (nothing changed).
 */
klog_kmember_t *klog_kgtable_member_new(klog_kgroup_t *grp,
    const klog_kmember_spec_t *spec, int pending);
/* A pending id joining: it becomes a member, last, with spec's
 * protocols; -KLOG_ENOMEM with nothing changed. */
int klog_kgtable_admit(klog_kmember_t *m, const klog_kmember_spec_t *spec);
/* Take spec's protocols and timeouts for m; -KLOG_ENOMEM with nothing
 * changed.  A leader's protocols going drops the group's protocol. */
int klog_kgtable_update(klog_kmember_t *m, const klog_kmember_spec_t *spec);
/* Unlink m from its group (the leader's going drops leader and protocol)
 * and free it; its waits must have been answered. */
void klog_kgtable_member_free(klog_kmember_t *m);

/* Whether m's protocols and metadata are spec's (Kafka's
 * MemberMetadata.matches: same names, same order, same bytes). */
int klog_kgtable_protos_match(const klog_kmember_t *m,
    const klog_kmember_spec_t *spec);
/* m's protocol named name, NULL if it lists none. */
const klog_kpair_t *klog_kgtable_proto(const klog_kmember_t *m,
    klog_str_t name);
/* Kafka's supportsProtocols: whether a group with members takes a join
 * of these protocols (one that every member lists is among them). */
int klog_kgtable_supports(const klog_kgroup_t *grp,
    const klog_kmember_spec_t *spec);
/* Kafka's selectProtocol: each member votes for the first protocol it
 * lists that every member lists; the most votes win, a tie going to the
 * one the leader lists first.  The group must have a leader. */
klog_str_t klog_kgtable_select(const klog_kgroup_t *grp);

/* name made printable for a log line into out (161 bytes): quotes,
 * backslashes and bytes outside printable ASCII as \xHH, cut with "...". */
#define KLOG_KGTABLE_ESC_MAX 160
const char *klog_kgtable_esc(const char *p, size_t n, char *out);

/* ---- the views ---- */

/* A state as Kafka names it: "Empty", "PreparingRebalance",
 * "CompletingRebalance", "Stable"; "Dead" for a group that is not. */
klog_str_t klog_kgtable_state_name(const klog_kgroup_t *grp);

/*
 * grp as DescribeGroups shows it (Kafka's GroupSummary), its members into
 * members (room for max_members): the protocol, and each member's
 * metadata and assignment, only when Stable.  Views into the table, valid
 * until it next changes.
 */
void klog_kgtable_describe(const klog_kgroup_t *grp, klog_kdgroup_t *out,
    klog_kdmember_t *members);

/* The groups one at a time: *cursor 0 at first; NULL after the last.
 * The table must not change meanwhile. */
const klog_kgroup_t *klog_kgtable_next(const klog_kgtable_t *t,
    size_t *cursor, const klog_kgroup_t *prev);

#endif
