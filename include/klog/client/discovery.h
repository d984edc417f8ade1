/*
 * How a client finds the partitions of a topic and the broker that serves
 * each one.  The producer and the consumer see only this interface, so
 * cluster mode can answer from ZooKeeper (klog(7), "Cluster layout": the
 * sorted (broker, partition) list) without any change to them or to the tools.
 *
 * A topic's partitions are numbered 0..n-1 by the client ("index").  In
 * standalone mode the index is the broker's own partition number; in
 * cluster mode index i is the i-th (broker id, partition) pair in Kafka's
 * numeric sort, and klog_discovery_locate() says which pair it is.
 *
 * Implementations embed klog_discovery_t as their first member and are
 * used from one thread.
 */
#ifndef KLOG_DISCOVERY_H
#define KLOG_DISCOVERY_H

#include <stdint.h>

#include "klog/base/error.h"
#include "klog/client/client.h"

typedef struct klog_discovery klog_discovery_t;

/* Where one partition of a topic lives. */
typedef struct klog_discovery_part {
	klog_client_addr_t addr;   /* the broker to talk to */
	int32_t partition;         /* the partition number on that broker */
	int32_t broker_id;         /* as the broker or ZooKeeper names it */
	int replicated;            /* a replicated topic's partition: its
	                              leader can move, so a NOT_LEADER answer
	                              or a lost connection means "locate it
	                              again" (zkdiscovery.h) */
} klog_discovery_part_t;

/* Called once per topic by klog_discovery_topics(); non-zero stops. */
typedef int (*klog_discovery_topic_fn)(void *arg, const char *topic,
    int partitions);

typedef struct klog_discovery_ops {
	/* Partition count (> 0), 0 if the topic does not exist yet,
	 * -KLOG_ETOPIC for a name the broker refuses, -KLOG_ECONN or
	 * -KLOG_ETIMEDOUT if no broker answered. */
	int (*partitions)(klog_discovery_t *d, const char *topic,
	    klog_err_t *err);
	/* Where partition index lives; -KLOG_ENOPARTITION past the count;
	 * -KLOG_ENOTLEADER for a replicated partition without a leader now
	 * (an election is under way: ask again later).
	 * For a topic that does not exist yet, index 0 is where a produce
	 * would create it (in a cluster, indexes 0..n-1: each of the n live
	 * brokers, since the topic is created on every one). */
	int (*locate)(klog_discovery_t *d, const char *topic, int index,
	    klog_discovery_part_t *out, klog_err_t *err);
	/* Every topic, in name order. */
	int (*topics)(klog_discovery_t *d, klog_discovery_topic_fn fn,
	    void *arg, klog_err_t *err);
	/* Forget cached answers (after a lost broker or an unknown topic). */
	void (*invalidate)(klog_discovery_t *d);
	void (*close)(klog_discovery_t *d);
} klog_discovery_ops_t;

struct klog_discovery {
	const klog_discovery_ops_t *ops;
	const klog_client_sec_t *sec;  /* every address located gets it */
};

/*
 * How to speak to the brokers found (TLS, SASL): sec is put in every
 * address klog_discovery_locate() gives, and used for the discovery's
 * own questions.  NULL (the default) is plaintext; sec outlives d.
 */
static inline void
klog_discovery_set_security(klog_discovery_t *d,
    const klog_client_sec_t *sec)
{
	d->sec = sec;
}

static inline int
klog_discovery_partitions(klog_discovery_t *d, const char *topic,
    klog_err_t *err)
{
	return d->ops->partitions(d, topic, err);
}

static inline int
klog_discovery_locate(klog_discovery_t *d, const char *topic, int index,
    klog_discovery_part_t *out, klog_err_t *err)
{
	int rc = d->ops->locate(d, topic, index, out, err);

	if (rc >= 0)
		out->addr.sec = d->sec;
	return rc;
}

static inline int
klog_discovery_topics(klog_discovery_t *d, klog_discovery_topic_fn fn,
    void *arg, klog_err_t *err)
{
	return d->ops->topics(d, fn, arg, err);
}

static inline void
klog_discovery_invalidate(klog_discovery_t *d)
{
	d->ops->invalidate(d);
}

/* NULL is fine. */
static inline void
klog_discovery_close(klog_discovery_t *d)
{
	if (d != NULL)
		d->ops->close(d);
}

/*
 * Standalone discovery: the -b list ("HOST:PORT[,...]", see
 * klog_client_parse_brokers()) and METADATA requests, each bounded by
 * timeout_ms.  Brokers are tried in list order until one answers; a topic is
 * served by the broker that the answer names (the answering one, when it
 * names itself, at the address the user gave).  Nothing is sent before the
 * first question.  -KLOG_EINVAL for a bad list.  *out is owned by the
 * caller: klog_discovery_close().
 */
int klog_discovery_open_static(const char *brokers, int timeout_ms,
    klog_discovery_t **out, klog_err_t *err);

#endif
