/*
 * A discovery for a replicated topic "t" whose leader moves, for the
 * producer and consumer tests: partitions nparts, index i is partition i at
 * the leader's address, replicated set.  The leader is the broker at
 * addrs[leader]; invalidating (what a client does after NOT_LEADER or a
 * lost leader) applies the next leader, as a ZooKeeper watch would have,
 * after `leaderless` more locates answered -KLOG_ENOTLEADER (an election).
 */
#ifndef KLOG_TEST_FAKELEADER_H
#define KLOG_TEST_FAKELEADER_H

#include <stdio.h>
#include <string.h>

#include "klog/client/discovery.h"

typedef struct fakeleader {
	klog_discovery_t base;
	char addrs[2][32];      /* "127.0.0.1:port" */
	int nparts;
	int leader;             /* index into addrs */
	int next_leader;        /* applied at the next invalidate */
	int leaderless;         /* locates refused after an invalidate */
	int pending;            /* leaderless locates still to refuse */
	int no_leader_part;     /* this index has no leader at all (-1) */
	int invalidations;
	int locates;
} fakeleader_t;

static inline int
fl_partitions(klog_discovery_t *d, const char *topic, klog_err_t *err)
{
	(void)topic;
	(void)err;
	return ((fakeleader_t *)d)->nparts;
}

static inline int
fl_locate(klog_discovery_t *d, const char *topic, int index,
    klog_discovery_part_t *out, klog_err_t *err)
{
	fakeleader_t *f = (fakeleader_t *)d;
	const char *colon;

	(void)topic;
	f->locates++;
	if (index < 0 || index >= f->nparts)
		return klog_err_set(err, -KLOG_ENOPARTITION, "no partition %d",
		    index);
	if (f->pending > 0 || index == f->no_leader_part) {
		if (index != f->no_leader_part)
			f->pending--;
		return klog_err_set(err, -KLOG_ENOTLEADER, "topic \"t\" "
		    "partition %d: no leader (an election is under way)",
		    index);
	}
	memset(out, 0, sizeof(*out));
	colon = strchr(f->addrs[f->leader], ':');
	snprintf(out->addr.host, sizeof(out->addr.host), "%.*s",
	    (int)(colon - f->addrs[f->leader]), f->addrs[f->leader]);
	snprintf(out->addr.port, sizeof(out->addr.port), "%s", colon + 1);
	out->partition = index;
	out->broker_id = f->leader + 1;
	out->replicated = 1;
	return 0;
}

static inline int
fl_topics(klog_discovery_t *d, klog_discovery_topic_fn fn, void *arg,
    klog_err_t *err)
{
	(void)err;
	fn(arg, "t", ((fakeleader_t *)d)->nparts);
	return 0;
}

static inline void
fl_invalidate(klog_discovery_t *d)
{
	fakeleader_t *f = (fakeleader_t *)d;

	f->invalidations++;
	if (f->leader != f->next_leader) {
		f->leader = f->next_leader;
		f->pending = f->leaderless;
	}
}

static inline void
fl_close(klog_discovery_t *d)
{
	(void)d;
}

static const klog_discovery_ops_t fakeleader_ops = {
	.partitions = fl_partitions,
	.locate = fl_locate,
	.topics = fl_topics,
	.invalidate = fl_invalidate,
	.close = fl_close,
};

static inline void
fakeleader_init(fakeleader_t *f, const char *a0, const char *a1, int nparts)
{
	memset(f, 0, sizeof(*f));
	f->base.ops = &fakeleader_ops;
	snprintf(f->addrs[0], sizeof(f->addrs[0]), "%s", a0);
	snprintf(f->addrs[1], sizeof(f->addrs[1]), "%s", a1 ? a1 : a0);
	f->nparts = nparts;
	f->no_leader_part = -1;
}

#endif
