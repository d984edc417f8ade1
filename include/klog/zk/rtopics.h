/*
 * Replicated topics in ZooKeeper: a subtree of their own, so that the Kafka
 * 0.7 layout under /brokers/topics (layout.h) stays exactly as it is for
 * unreplicated topics and for 0.7 consumers.  Documented byte for byte in
 * klog(7), "Replicated topics".  The schemas are Kafka 0.8's.
 *
 *   /klog/topics/<t>                        persistent
 *       {"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]},"min_insync":2}
 *       the replicas of each partition, the first the preferred leader;
 *       min_insync is klog's (Kafka keeps it in the topic's config)
 *   /klog/topics/<t>/partitions/<p>/state   persistent, versioned writes only
 *       {"version":1,"isr":[1,2],"leader":1,"controller_epoch":-1,
 *        "leader_epoch":0}
 *       controller_epoch is -1: klog has no controller (election is per
 *       partition, below)
 *   /klog/topics/<t>/partitions/<p>/leader  ephemeral, the leader's session
 *       "<broker id>"
 *   /admin/delete_topics/<t>                persistent, empty: <t> is being
 *       deleted (Kafka's node); /admin/delete_topics/<t>/<broker id> once
 *       that broker holds nothing of <t> any more.  rtadmin.h has the
 *       protocol; a topic cannot be made again while its node is there.
 *
 * A partition of a replicated topic is named by its number alone (Kafka
 * 0.8): consumer groups keep /consumers/<g>/owners/<t>/<p> and
 * /consumers/<g>/offsets/<t>/<p>, and every replica of it is the directory
 * <t>-<p> in its broker's data directory, holding the same bytes at the
 * same offsets.
 *
 * Election: when a partition's leader node is missing, a live broker in its
 * state's isr claims it with one multi: set state (at the version it read)
 * to itself as leader with leader_epoch + 1, and create the leader node.
 * Exactly one claim can win.  The leader changes the isr with a setData at
 * the version it last wrote; a deposed leader's write fails.
 */
#ifndef KLOG_RTOPICS_H
#define KLOG_RTOPICS_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/zk/zk.h"

#define KLOG_RTOPICS_ROOT "/klog/topics"
#define KLOG_RTOPICS_DELETE_ROOT "/admin/delete_topics"
#define KLOG_RTOPICS_MAX_REPLICAS 16
#define KLOG_RTOPICS_MAX_PARTITIONS 10000

/* A topic's assignment. */
typedef struct klog_rtopic {
	int nparts;
	int rf;                  /* replicas per partition */
	int min_insync;          /* >= 1, <= rf */
	int32_t *replicas;       /* nparts * rf, partition p's at p * rf;
	                            owned: klog_rtopic_free() */
} klog_rtopic_t;

/* A partition's state, and the znode version it was read at. */
typedef struct klog_rstate {
	int32_t leader;          /* -1: none yet */
	int32_t leader_epoch;    /* only grows */
	int32_t controller_epoch;
	int nisr;
	int32_t isr[KLOG_RTOPICS_MAX_REPLICAS];
	int32_t version;         /* of the state node, as read; -1 unknown */
} klog_rstate_t;

void klog_rtopic_free(klog_rtopic_t *t);

/* Whether broker id is among partition p's replicas / in s's isr. */
int klog_rtopic_has(const klog_rtopic_t *t, int p, int32_t id);
int klog_rstate_in_isr(const klog_rstate_t *s, int32_t id);

/* Paths; -KLOG_EINVAL if they do not fit len, if topic is not a valid
 * topic name or p < 0. */
int klog_rtopics_topic_path(char *buf, size_t len, const char *topic);
int klog_rtopics_state_path(char *buf, size_t len, const char *topic, int p);
int klog_rtopics_leader_path(char *buf, size_t len, const char *topic, int p);

/* The JSON above.  Parsers are strict about types and ranges: -KLOG_EINVAL
 * with err saying what is wrong. */
int klog_rtopic_encode(klog_buf_t *b, const klog_rtopic_t *t);
int klog_rtopic_parse(const char *s, size_t n, klog_rtopic_t *out,
    klog_err_t *err);
int klog_rstate_encode(klog_buf_t *b, const klog_rstate_t *s);
int klog_rstate_parse(const char *s, size_t n, klog_rstate_t *out,
    klog_err_t *err);

/*
 * An assignment of nparts partitions with rf replicas over the nb live
 * brokers (ids ascending), as Kafka's assignReplicasToBrokers without
 * racks: partition p's leader is brokers[(start + p) % nb], its followers
 * the brokers after it shifted by a step that grows every nb partitions.
 * start spreads the first leader (Kafka picks it at random).  -KLOG_EINVAL
 * with err if rf > nb, rf or nparts out of range, or min_insync not in
 * [1, rf].
 */
int klog_rtopic_assign(const int32_t *brokers, size_t nb, int nparts, int rf,
    int min_insync, uint32_t start, klog_rtopic_t *out, klog_err_t *err);

/*
 * Create topic with assignment t in one multi: the topic node and, per
 * partition, its state (leader: its first replica, isr: every replica,
 * leader_epoch 0), without leader nodes (the brokers elect).  -KLOG_EEXIST
 * if the topic exists, replicated or in the 0.7 layout, or if a topic of
 * that name is still being deleted (its /admin/delete_topics node, err
 * says so).  One multi must
 * fit the server's jute.maxbuffer (1 MiB by default: about 4000
 * partitions); a larger one is -KLOG_ETOOBIG, nothing created.
 */
int klog_rtopics_create(klog_zk_t *zk, const char *topic,
    const klog_rtopic_t *t, klog_err_t *err);

/*
 * 0 if topic could be created now, as klog_rtopics_create() would find it:
 * -KLOG_EEXIST (err saying why) if it exists, replicated or in the 0.7
 * layout, or is still being deleted.  Writes nothing (a Kafka validate-only
 * CreateTopics).
 */
int klog_rtopics_can_create(klog_zk_t *zk, const char *topic,
    klog_err_t *err);

/*
 * Create topic over the brokers live now (/brokers/ids, as
 * klog_layout_brokers() reads them): klog_rtopic_assign() over their ids,
 * then klog_rtopics_create().  The assignment made goes to *out (owned by
 * the caller: klog_rtopic_free()), also on -KLOG_EEXIST.  -KLOG_EINVAL
 * with err as klog_rtopic_assign()'s (so rf over the live brokers says
 * "larger than available brokers").
 */
int klog_rtopics_create_live(klog_zk_t *zk, const char *topic, int nparts,
    int rf, int min_insync, uint32_t start, klog_rtopic_t *out,
    klog_err_t *err);

/* The replicated topics, sorted; watch: a CHILD event when one is made
 * (the root is made first if missing, so that the watch can be armed).
 * The operations below take a topic name and return -KLOG_ETOPIC (err
 * saying why) if it is not a valid one. */
int klog_rtopics_list(klog_zk_t *zk, int watch, klog_zk_list_t *out,
    klog_err_t *err);

/* topic's assignment; -KLOG_ENOENT if it is not a replicated topic. */
int klog_rtopics_read(klog_zk_t *zk, const char *topic, int watch,
    klog_rtopic_t *out, klog_err_t *err);

/* Partition p's state (version filled); watch: a DATA event when it
 * changes. */
int klog_rtopics_state(klog_zk_t *zk, const char *topic, int p, int watch,
    klog_rstate_t *out, klog_err_t *err);

/*
 * The broker holding p's leader node into *leader; -KLOG_ENOENT if none.
 * watch: a DATA event when it is created or deleted (armed either way).
 */
int klog_rtopics_leader(klog_zk_t *zk, const char *topic, int p, int watch,
    int32_t *leader, klog_err_t *err);

/*
 * Claim leadership of p for broker me: state set to next (at
 * next->version, which must be what was read) and the leader node created
 * ephemeral, both or neither.  -KLOG_EBUSY: another claim won or the state
 * moved.  On success next->version is the new version.  -KLOG_EINVAL
 * unless next->leader == me and next->version >= 0.
 */
int klog_rtopics_claim(klog_zk_t *zk, const char *topic, int p, int32_t me,
    klog_rstate_t *next, klog_err_t *err);

/*
 * Write p's state as next at next->version (the leader's isr changes);
 * -KLOG_EBUSY if it moved (the writer was deposed).  On success
 * next->version is the new version.
 */
int klog_rtopics_set_state(klog_zk_t *zk, const char *topic, int p,
    klog_rstate_t *next, klog_err_t *err);

/* "/klog/topics/" + a topic of KLOG_TOPIC_MAX + "/partitions/9999/state"
 * fits. */
#define KLOG_RTOPICS_PPATH_LEN (sizeof(KLOG_RTOPICS_ROOT) + KLOG_TOPIC_MAX + 32)

/*
 * The nodes that make partitions [from, t->nparts) of topic, whose
 * assignment node is tpath: each one's node under tpath/partitions and its
 * first state (its first replica leads, every replica in sync), as create
 * and alter write them in their multis.  klog_rtopics_newparts() builds
 * them into *np (the caller's, klog_rtopics_newparts_free(), also after an
 * error) and appends two creates a partition at ops[*nops], which must
 * have the room; the ops point into *np.  -KLOG_ENOMEM, -KLOG_EINVAL for
 * a path too long.
 */
typedef struct klog_rtopics_newparts {
	klog_buf_t states;              /* the states' JSON, back to back */
	size_t *off;                    /* where each starts, and the end */
	char (*path)[2][KLOG_RTOPICS_PPATH_LEN];  /* node, state */
} klog_rtopics_newparts_t;

int klog_rtopics_newparts(klog_rtopics_newparts_t *np, const char *topic,
    const char *tpath, const klog_rtopic_t *t, int from, klog_zk_op_t *ops,
    int *nops, klog_err_t *err);
void klog_rtopics_newparts_free(klog_rtopics_newparts_t *np);

#endif
