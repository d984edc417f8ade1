/*
 * Cluster mode: Kafka 0.7's ZooKeeper layout, byte for byte, so that the
 * znodes klog writes read the same as Kafka's (klog(7), "Cluster layout").
 *
 *   /brokers/ids/<brokerId>                      ephemeral
 *       "<host>-<startMs>:<host>:<port>"  (creator id, host, port)
 *   /brokers/topics/<topic>/<brokerId>           ephemeral
 *       "4"                               (partitions on that broker)
 *   /consumers/<group>/ids/<consumerId>          ephemeral
 *       "{ \"t1\": 2,\"t2\": 1 }"         (topic -> stream count)
 *   /consumers/<group>/owners/<topic>/<b>-<p>    ephemeral
 *       "<consumerId>-<i>"                (owning thread id)
 *   /consumers/<group>/offsets/<topic>/<b>-<p>   persistent
 *       "123456"                          (next byte offset to consume)
 *
 * A partition is named "<brokerId>-<partId>", partId being the broker's own
 * partition number.  For a rebalance, partitions and consumer threads are
 * both sorted as strings ("10-0" < "2-0"), and thread j of C takes a
 * contiguous range of P (klog_layout_assign()).
 *
 * The first part is pure: path builders, data codecs, ids and the range
 * assignment.  The second part are operations on a klog_zk_t session, for
 * the broker, the clients and klog-group.  Names are checked before they
 * become paths: topics by klog_topic_validate(), groups by the same rules.
 * Path builders return 0, -KLOG_ETOPIC, -KLOG_EINVAL (group, id or number)
 * or -KLOG_ETOOBIG (buffer too small).
 */
#ifndef KLOG_LAYOUT_H
#define KLOG_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/names.h"
#include "klog/zk/zk.h"

#define KLOG_LAYOUT_BROKER_IDS "/brokers/ids"
#define KLOG_LAYOUT_BROKER_TOPICS "/brokers/topics"
#define KLOG_LAYOUT_CONSUMERS "/consumers"
#define KLOG_LAYOUT_NAME_MAX 255     /* a consumer or thread id */
#define KLOG_LAYOUT_HOST_MAX 255
#define KLOG_LAYOUT_PART_NAME_MAX 24 /* "2147483647-2147483647" */
/*
 * The broker_id of a replicated topic's partition in the group paths and
 * names below: such a partition is named by its number alone, "<p>"
 * (Kafka 0.8; rtopics.h), wherever its leader is.
 */
#define KLOG_LAYOUT_NUMBERED (-2)

/* Group names: as topic names (1-249 bytes of A-Z a-z 0-9 . _ -, neither
 * "." nor ".."), since they become znode names.  -KLOG_EINVAL. */
int klog_layout_group_validate(const char *group, klog_err_t *err);

/* ---- paths ---- */

int klog_layout_broker_path(char *buf, size_t len, int32_t broker_id);
/* /brokers/topics/<topic> */
int klog_layout_topic_path(char *buf, size_t len, const char *topic);
/* /brokers/topics/<topic>/<brokerId> */
int klog_layout_topic_broker_path(char *buf, size_t len, const char *topic,
    int32_t broker_id);
/* /consumers/<group> */
int klog_layout_group_path(char *buf, size_t len, const char *group);
/* /consumers/<group>/ids, or .../ids/<consumerId> if consumer_id != NULL */
int klog_layout_member_path(char *buf, size_t len, const char *group,
    const char *consumer_id);
/* /consumers/<group>/owners[/<topic>[/<b>-<p>]]: topic NULL stops at
 * owners, broker_id -1 stops at the topic; broker_id
 * KLOG_LAYOUT_NUMBERED ends in /<p>. */
int klog_layout_owner_path(char *buf, size_t len, const char *group,
    const char *topic, int32_t broker_id, int32_t part);
/* /consumers/<group>/offsets[/<topic>[/<b>-<p>]], likewise. */
int klog_layout_offset_path(char *buf, size_t len, const char *group,
    const char *topic, int32_t broker_id, int32_t part);

/* ---- data ---- */

/*
 * A broker node's data as Kafka 0.7 writes it: "<host>-<now_ms>:<host>:<port>".
 * The host may not contain ':' (readers split on it).  -KLOG_EINVAL,
 * -KLOG_ETOOBIG.
 */
int klog_layout_broker_encode(char *buf, size_t len, const char *host,
    int port, int64_t now_ms);
/* Take host and port from fields 1 and 2 of "creator:host:port".
 * -KLOG_EINVAL if malformed, if the host has a byte outside printable
 * ASCII (a NUL, a blank) or does not fit hostlen. */
int klog_layout_broker_parse(const char *data, size_t len, char *host,
    size_t hostlen, int *port);

/* Strict decimals: a partition count in [1, INT32_MAX], an offset in
 * [0, INT64_MAX]; no sign, no blanks.  -KLOG_EINVAL. */
int klog_layout_count_parse(const char *data, size_t len, int32_t *count);
int klog_layout_offset_parse(const char *data, size_t len, int64_t *offset);

/* One subscription of a consumer: topic -> number of streams (threads). */
typedef struct klog_layout_sub {
	char topic[KLOG_TOPIC_MAX + 1];
	int32_t streams;
} klog_layout_sub_t;

/* Append a member node's data, 0.7's exact JSON spacing:
 * "{ \"t1\": 2,\"t2\": 1 }".  -KLOG_ETOPIC, -KLOG_EINVAL (streams < 1). */
int klog_layout_member_encode(klog_buf_t *b, const klog_layout_sub_t *subs,
    size_t n);
/*
 * Parse a member node's JSON (any spacing) into subs[0..max), *n entries.
 * -KLOG_EUNSUPPORTED for 0.7.2's wildcard forms ("*<n>*<regex>",
 * "!<n>!<regex>"); -KLOG_EINVAL if malformed; -KLOG_ETOOBIG past max.
 */
int klog_layout_member_parse(const char *data, size_t len,
    klog_layout_sub_t *subs, size_t max, size_t *n);

/* ---- ids ---- */

/*
 * "<group>_<hostname>-<now_ms>-<8 hex digits of rnd>", Kafka's
 * consumerIdString; bytes of hostname outside A-Z a-z 0-9 . - become '-'.
 */
int klog_layout_consumer_id(char *buf, size_t len, const char *group,
    const char *hostname, int64_t now_ms, uint32_t rnd);
/* The same with this host's name, the wall clock and getrandom(2). */
int klog_layout_new_consumer_id(char *buf, size_t len, const char *group,
    klog_err_t *err);
/* "<consumerId>-<i>" */
int klog_layout_thread_id(char *buf, size_t len, const char *consumer_id,
    int i);

/* "<broker>-<part>", and back (strict decimals, both >= 0); "<part>" for
 * broker_id KLOG_LAYOUT_NUMBERED, and back. */
int klog_layout_part_name(char *buf, size_t len, int32_t broker_id,
    int32_t part);
int klog_layout_part_parse(const char *name, int32_t *broker_id,
    int32_t *part);

/* Sort strings as Kafka does for a rebalance: bytewise (strcmp), but two
 * names of digits alone (numbered partitions) numerically, as Kafka 0.8
 * sorts partition numbers. */
void klog_layout_sort_names(char **names, size_t n);

/*
 * Kafka 0.7's range assignment: of nparts sorted partitions and nmembers
 * sorted threads, thread j takes *count partitions from index *start, with
 * start = n*j + min(j, e), count = n + (j < e), n = nparts / nmembers,
 * e = nparts % nmembers.  Zero members or j out of range: count 0.
 */
void klog_layout_assign(size_t nparts, size_t nmembers, size_t j,
    size_t *start, size_t *count);

/* ---- operations on a session ---- */

typedef struct klog_layout_broker {
	int32_t id;
	char host[KLOG_LAYOUT_HOST_MAX + 1];
	int port;
} klog_layout_broker_t;

/* A topic's registrations: which brokers hold how many partitions. */
typedef struct klog_layout_holder {
	int32_t broker_id;
	int32_t partitions;
} klog_layout_holder_t;

typedef struct klog_layout_topic {
	char name[KLOG_TOPIC_MAX + 1];
	size_t nholders;
	klog_layout_holder_t *holders;  /* owned, ascending broker id */
} klog_layout_topic_t;

/*
 * Register broker id at host:port: the ephemeral /brokers/ids/<id>.  A node
 * left by this broker's previous session is waited for up to wait_ms (see
 * klog_zk_create_ephemeral()); an id that stays taken is -KLOG_EEXIST with
 * err naming its holder.
 */
int klog_layout_register_broker(klog_zk_t *zk, int32_t id, const char *host,
    int port, int wait_ms, klog_err_t *err);
/* Register (or update) topic with partitions on broker id: the ephemeral
 * /brokers/topics/<topic>/<id>. */
int klog_layout_register_topic(klog_zk_t *zk, int32_t id, const char *topic,
    int32_t partitions, klog_err_t *err);

/*
 * Live brokers into a new array *out (owned by the caller: free()), *n
 * entries, ascending id.  Nodes that are not numeric ids or whose data does
 * not parse are skipped.  With watch != 0, a CHILD event on /brokers/ids
 * is armed.  No /brokers/ids yet is an empty list.
 */
int klog_layout_brokers(klog_zk_t *zk, int watch, klog_layout_broker_t **out,
    size_t *n, klog_err_t *err);

/*
 * One topic's registrations into *t (free with klog_layout_topic_free());
 * with watch != 0 a CHILD event on /brokers/topics/<topic> is armed (only
 * if the topic exists).  -KLOG_ENOTOPIC if it is not registered at all.
 */
int klog_layout_topic(klog_zk_t *zk, const char *topic, int watch,
    klog_layout_topic_t *t, klog_err_t *err);
void klog_layout_topic_free(klog_layout_topic_t *t);

/* Every registered topic, ascending name, into a new array *out of *n
 * (free with klog_layout_topics_free()). */
int klog_layout_topics(klog_zk_t *zk, klog_layout_topic_t **out, size_t *n,
    klog_err_t *err);
void klog_layout_topics_free(klog_layout_topic_t *t, size_t n);

/* The partition names "<b>-<p>" of a topic, sorted as strings (the P of a
 * rebalance), into *out (klog_zk_list_free()). */
int klog_layout_topic_parts(const klog_layout_topic_t *t,
    klog_zk_list_t *out);

/* A group's committed offset: -KLOG_ENOENT if none. */
int klog_layout_offset_read(klog_zk_t *zk, const char *group,
    const char *topic, int32_t broker_id, int32_t part, int64_t *offset,
    klog_err_t *err);
/* Commit it (persistent, parents created as needed). */
int klog_layout_offset_commit(klog_zk_t *zk, const char *group,
    const char *topic, int32_t broker_id, int32_t part, int64_t offset,
    klog_err_t *err);

/* Group names under /consumers (empty if none). */
int klog_layout_groups(klog_zk_t *zk, klog_zk_list_t *out, klog_err_t *err);
/* Live member ids of group (empty if none); watch arms a CHILD event on
 * /consumers/<group>/ids, created first so that the watch holds. */
int klog_layout_members(klog_zk_t *zk, const char *group, int watch,
    klog_zk_list_t *out, klog_err_t *err);
/* Register a member: ephemeral /consumers/<group>/ids/<consumerId> with
 * its subscriptions. */
int klog_layout_member_register(klog_zk_t *zk, const char *group,
    const char *consumer_id, const klog_layout_sub_t *subs, size_t n,
    klog_err_t *err);
/* A member's subscriptions (see klog_layout_member_parse()). */
int klog_layout_member_subs(klog_zk_t *zk, const char *group,
    const char *consumer_id, klog_layout_sub_t *subs, size_t max,
    size_t *n, klog_err_t *err);

/* Topics that have a committed offset, or an owner, in group: the union,
 * sorted (empty if none). */
int klog_layout_group_topics(klog_zk_t *zk, const char *group,
    klog_zk_list_t *out, klog_err_t *err);

/*
 * The owner (thread id) of a partition into a new string *owner (free()),
 * -KLOG_ENOENT if unowned.
 */
int klog_layout_owner_read(klog_zk_t *zk, const char *group,
    const char *topic, int32_t broker_id, int32_t part, char **owner,
    klog_err_t *err);
/* Claim a partition for thread_id: ephemeral owner node.  -KLOG_EEXIST if
 * another thread owns it (one of ours owning it already is success). */
int klog_layout_owner_claim(klog_zk_t *zk, const char *group,
    const char *topic, int32_t broker_id, int32_t part, const char *thread_id,
    klog_err_t *err);
/* Release it (missing is success). */
int klog_layout_owner_release(klog_zk_t *zk, const char *group,
    const char *topic, int32_t broker_id, int32_t part, klog_err_t *err);

/* Delete /consumers/<group> and all under it; -KLOG_EBUSY while it has
 * live members, -KLOG_ENOENT if there is no such group. */
int klog_layout_group_delete(klog_zk_t *zk, const char *group,
    klog_err_t *err);

#endif
