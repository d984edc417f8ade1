/*
 * A broker's replicated partitions in ZooKeeper; see zkrepl.h.
 *
 * Per partition held here: its topic's assignment, the state version this
 * broker last read or wrote, and since when it has seen it leaderless.
 * Every decision re-reads the partition's state and leader node (arming
 * their watches), so a missed or coalesced event costs nothing but the
 * next one; a retry timer re-reads the partitions still without a leader.
 *
 * Topics change under a running broker (rtadmin.h): each assignment is
 * watched, and one that grew brings its new replicas here; a topic marked
 * for deletion is dropped (rtadmin.h's step 2, and step 3 when this broker
 * is the last), before anything else is read at a new session, and is
 * never taken up again while the mark is there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/clock.h"
#include "klog/cluster/zkrepl.h"
#include "klog/core/admin.h"
#include "klog/core/replicated.h"
#include "klog/zk/layout.h"
#include "klog/zk/rtadmin.h"
#include "klog/zk/rtopics.h"
#include "klog/zk/zkasync.h"

#define RETRY_MS 500
#define OTHERS_WAIT_MS 1000     /* before a later isr member claims */
#define LEASE_TICKS 6           /* pings per session timeout */
#define LEASE_MIN_MS 20

enum isr_phase {
	ISR_IDLE,
	ISR_WRITING,                /* the state write is in flight */
	ISR_READING,                /* its outcome unknown: reading back */
	ISR_UNKNOWN,                /* the read failed too: at the retry */
};

struct rpart {
	char topic[KLOG_TOPIC_MAX + 1];
	int p, nparts, min_insync, nrep;
	int32_t replicas[KLOG_RTOPICS_MAX_REPLICAS];
	int32_t version;            /* of the state, as last known */
	int64_t leaderless_since;   /* 0: has a leader */
	int role;                   /* what was set: KLOG_REPLICA_* */
	int32_t epoch;
	int isr_phase;              /* enum isr_phase */
	uint64_t isr_tag;           /* of the ISR write's calls */
	int nnext;
	int32_t next[KLOG_RTOPICS_MAX_REPLICAS];   /* the ISR being written */
};

struct klog_zkrepl {
	klog_zkrepl_config_t cfg;
	klog_zk_t *zk;
	klog_loop_t *loop;
	klog_core_t *core;
	klog_fetcher_t *fetcher;
	struct rpart *parts;
	size_t nparts, cap;
	klog_zk_list_t topics;      /* known replicated topics */
	klog_layout_broker_t *live;
	size_t nlive;
	klog_timer_t retry;
	klog_zk_list_t marked;      /* topics marked for deletion */
	int marked_stale;           /* reading them failed: at the retry */
	klog_zk_list_t stuck;       /* marked topics whose copy could not
	                               be removed: never said done */
	int failed;                 /* a sync failed here: lead and follow
	                               nothing until a restart */
	uint64_t tags;              /* the last asynchronous call's */
	klog_timer_t lease;
	int fenced;                 /* ZooKeeper silent for a session
	                               timeout: leading nothing */
	int64_t fences;             /* times fenced */
};

static void
say_err(klog_zkrepl_t *zr, const char *what, int rc, const klog_err_t *err)
{
	klog_logger_say(&zr->cfg.log, KLOG_LEVEL_WARN, "zookeeper: %s: %s",
	    what, klog_err_text(err, rc));
}

static const klog_layout_broker_t *
live_broker(const klog_zkrepl_t *zr, int32_t id)
{
	for (size_t i = 0; i < zr->nlive; i++)
		if (zr->live[i].id == id)
			return &zr->live[i];
	return NULL;
}

static int
read_live(klog_zkrepl_t *zr)
{
	klog_layout_broker_t *v;
	klog_err_t err;
	size_t n;
	int rc;

	if ((rc = klog_layout_brokers(zr->zk, 1, &v, &n, &err)) < 0) {
		say_err(zr, "reading the live brokers", rc, &err);
		return rc;
	}
	free(zr->live);
	zr->live = v;
	zr->nlive = n;
	return 0;
}

static void
arm_retry(klog_zkrepl_t *zr)
{
	if (!klog_timer_active(&zr->retry))
		klog_loop_timer_start(zr->loop, &zr->retry, RETRY_MS, 0);
}

static int
listed(const klog_zk_list_t *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->names[i], name) == 0)
			return 1;
	return 0;
}

/* Nobody leads rp as far as this broker can tell. */
static void
go_offline(klog_zkrepl_t *zr, struct rpart *rp)
{
	klog_core_part_t *p = klog_core_rpart(zr->core, rp->topic, rp->p);

	if (p != NULL) {
		klog_fetcher_stop(zr->fetcher, p);
		klog_core_step_down(zr->core, p);
	}
	rp->role = KLOG_REPLICA_OFFLINE;
	rp->isr_phase = ISR_IDLE;   /* a late answer finds no tag */
	rp->isr_tag = 0;
}

static void
lead(klog_zkrepl_t *zr, struct rpart *rp, const klog_rstate_t *st)
{
	klog_core_part_t *p;
	klog_err_t err;
	int rc;

	if (rp->role == KLOG_REPLICA_LEADER && rp->epoch == st->leader_epoch)
		return;
	if (zr->fenced)
		return;   /* the lease timer evaluates again when it ends */
	if ((p = klog_core_rpart(zr->core, rp->topic, rp->p)) != NULL)
		klog_fetcher_stop(zr->fetcher, p);
	rc = klog_core_lead(zr->core, rp->topic, rp->p, rp->nparts,
	    st->leader_epoch, rp->replicas, rp->nrep, st->isr, st->nisr,
	    rp->min_insync, &err);
	if (rc < 0) {
		say_err(zr, "taking the lead", rc, &err);
		return;
	}
	rp->role = KLOG_REPLICA_LEADER;
	rp->epoch = st->leader_epoch;
	rp->version = st->version;
}

static void
follow(klog_zkrepl_t *zr, struct rpart *rp, int32_t leader, int32_t epoch)
{
	const klog_layout_broker_t *b = live_broker(zr, leader);
	klog_client_addr_t addr;
	klog_core_part_t *p;
	klog_err_t err;
	int rc;

	if (b == NULL) {
		/* Its registration is not read yet. */
		read_live(zr);
		if ((b = live_broker(zr, leader)) == NULL) {
			arm_retry(zr);
			return;
		}
	}
	if (rp->role != KLOG_REPLICA_FOLLOWER || rp->epoch != epoch) {
		if ((rc = klog_core_follow(zr->core, rp->topic, rp->p,
		    rp->nparts, epoch, leader, &err)) < 0) {
			say_err(zr, "following", rc, &err);
			return;
		}
	}
	if ((p = klog_core_rpart(zr->core, rp->topic, rp->p)) == NULL)
		return;
	memset(&addr, 0, sizeof(addr));
	snprintf(addr.host, sizeof(addr.host), "%s", b->host);
	snprintf(addr.port, sizeof(addr.port), "%d", b->port);
	if (klog_fetcher_follow(zr->fetcher, p, leader, epoch, &addr) < 0)
		return;
	rp->role = KLOG_REPLICA_FOLLOWER;
	rp->epoch = epoch;
}

/* rp's ISR without this broker, written as its leader (st is the state
 * read, its version the one to replace).  The others hold every record
 * acknowledged (HW), so one of them may lead at once.  The last member
 * stays, as in Kafka: an ISR is never empty. */
static void
leave_isr(klog_zkrepl_t *zr, struct rpart *rp, const klog_rstate_t *st)
{
	klog_rstate_t next = *st;
	klog_err_t err;
	int rc;

	next.nisr = 0;
	for (int i = 0; i < st->nisr; i++)
		if (st->isr[i] != zr->cfg.broker_id)
			next.isr[next.nisr++] = st->isr[i];
	if (next.nisr == 0 || next.nisr == st->nisr)
		return;
	if ((rc = klog_rtopics_set_state(zr->zk, rp->topic, rp->p, &next,
	    &err)) < 0)
		say_err(zr, "leaving the ISR", rc, &err);
}

/*
 * After a failed sync (offline.h): step down, and if the leader node is
 * ours, leave the ISR and delete the node, so that an in-sync replica on
 * another broker claims the partition now rather than when this broker's
 * session ends.  Safe to repeat: every event of rp comes here from then on.
 */
static void
resign(klog_zkrepl_t *zr, struct rpart *rp)
{
	char path[KLOG_ZK_PATH_MAX];
	klog_rstate_t st;
	klog_err_t err;
	int32_t leader;
	int rc;

	if (rp->role != KLOG_REPLICA_OFFLINE)
		go_offline(zr, rp);
	if (klog_rtopics_leader(zr->zk, rp->topic, rp->p, 1, &leader,
	    &err) < 0 || leader != zr->cfg.broker_id)
		return;
	if (klog_rtopics_state(zr->zk, rp->topic, rp->p, 1, &st, &err) == 0 &&
	    st.leader == leader)
		leave_isr(zr, rp, &st);
	if ((rc = klog_rtopics_leader_path(path, sizeof(path), rp->topic,
	    rp->p)) == 0 && (rc = klog_zk_delete(zr->zk, path, -1, &err)) < 0 &&
	    rc != -KLOG_ENOENT) {
		say_err(zr, "giving up the lead", rc, &err);
		arm_retry(zr);
		return;
	}
	klog_logger_say(&zr->cfg.log, KLOG_LEVEL_WARN, "topic \"%s\" partition "
	    "%d: gave up the lead (storage failed)", rp->topic, rp->p);
}

/* The candidate rule of zkrepl.h; 1 if this broker should claim now. */
static int
should_claim(klog_zkrepl_t *zr, struct rpart *rp, const klog_rstate_t *st,
    int *unclean)
{
	int64_t now = klog_clock_mono_ms();
	int32_t me = zr->cfg.broker_id;

	*unclean = 0;
	if (rp->leaderless_since == 0)
		rp->leaderless_since = now;
	if (live_broker(zr, me) == NULL)
		return 0;
	if (klog_rstate_in_isr(st, me)) {
		if (!klog_core_may_lead(zr->core, rp->topic, rp->p,
		    st->leader_epoch))
			return *unclean = zr->cfg.unclean;
		for (int i = 0; i < st->nisr; i++)
			if (live_broker(zr, st->isr[i]) != NULL)
				return st->isr[i] == me ||
				    now - rp->leaderless_since >=
				    OTHERS_WAIT_MS;
		return 0;
	}
	for (int i = 0; i < st->nisr; i++)
		if (live_broker(zr, st->isr[i]) != NULL)
			return 0;
	*unclean = zr->cfg.unclean;
	return *unclean;
}

static void
claim(klog_zkrepl_t *zr, struct rpart *rp, const klog_rstate_t *st,
    int unclean)
{
	klog_rstate_t next = *st;
	klog_err_t err;
	int rc;

	next.leader = zr->cfg.broker_id;
	next.leader_epoch = st->leader_epoch + 1;
	next.nisr = 0;
	if (unclean) {
		next.isr[next.nisr++] = zr->cfg.broker_id;
	} else {
		for (int i = 0; i < st->nisr; i++)
			if (live_broker(zr, st->isr[i]) != NULL)
				next.isr[next.nisr++] = st->isr[i];
	}
	rc = klog_rtopics_claim(zr->zk, rp->topic, rp->p, zr->cfg.broker_id,
	    &next, &err);
	if (rc == -KLOG_EBUSY || rc == -KLOG_EEXIST)
		return;   /* another won: its leader node's event follows */
	if (rc < 0) {
		say_err(zr, "claiming a partition", rc, &err);
		arm_retry(zr);
		return;
	}
	klog_logger_say(&zr->cfg.log, KLOG_LEVEL_INFO, "topic \"%s\" partition "
	    "%d: elected leader (epoch %d%s)", rp->topic, rp->p,
	    (int)next.leader_epoch, unclean ? ", unclean" : "");
	rp->leaderless_since = 0;
	lead(zr, rp, &next);
}

/* Read rp's state and leader and act on them. */
static void
evaluate(klog_zkrepl_t *zr, struct rpart *rp)
{
	klog_rstate_t st;
	klog_err_t err;
	int32_t leader;
	int rc, unclean;

	if (zr->failed) {
		resign(zr, rp);
		return;
	}
	if (zr->fenced)
		return;   /* the lease evaluates everything when it ends */
	if ((rc = klog_rtopics_state(zr->zk, rp->topic, rp->p, 1, &st,
	    &err)) < 0) {
		say_err(zr, "reading a partition's state", rc, &err);
		arm_retry(zr);
		return;
	}
	rc = klog_rtopics_leader(zr->zk, rp->topic, rp->p, 1, &leader, &err);
	if (rc == 0 && leader == zr->cfg.broker_id && st.leader == leader) {
		rp->leaderless_since = 0;
		lead(zr, rp, &st);
		return;
	}
	if (rc == 0 && leader != zr->cfg.broker_id) {
		rp->leaderless_since = 0;
		follow(zr, rp, leader, st.leader_epoch);
		return;
	}
	if (rc < 0 && rc != -KLOG_ENOENT) {
		say_err(zr, "reading a partition's leader", rc, &err);
		arm_retry(zr);
		return;
	}
	if (rp->role != KLOG_REPLICA_OFFLINE)
		go_offline(zr, rp);
	if (should_claim(zr, rp, &st, &unclean))
		claim(zr, rp, &st, unclean);
	else
		arm_retry(zr);
}

static struct rpart *
find(klog_zkrepl_t *zr, const char *topic, int p)
{
	for (size_t i = 0; i < zr->nparts; i++)
		if (zr->parts[i].p == p && strcmp(zr->parts[i].topic,
		    topic) == 0)
			return &zr->parts[i];
	return NULL;
}

/* Take topic's assignment: the partitions with a replica here. */
static void
add_topic(klog_zkrepl_t *zr, const char *topic)
{
	klog_rtopic_t t;
	klog_err_t err;
	struct rpart *rp;
	int rc;

	if (listed(&zr->marked, topic))
		return;
	/* Watched: partitions added later come through its DATA event. */
	if ((rc = klog_rtopics_read(zr->zk, topic, 1, &t, &err)) < 0) {
		if (rc != -KLOG_ENOENT)    /* deleted meanwhile */
			say_err(zr, "reading a replicated topic", rc, &err);
		return;
	}
	for (size_t i = 0; i < zr->nparts; i++)
		if (strcmp(zr->parts[i].topic, topic) == 0)
			zr->parts[i].nparts = t.nparts;
	for (int p = 0; p < t.nparts; p++) {
		if (!klog_rtopic_has(&t, p, zr->cfg.broker_id) ||
		    find(zr, topic, p) != NULL)
			continue;
		if (zr->nparts == zr->cap) {
			size_t cap = zr->cap ? zr->cap * 2 : 16;
			struct rpart *v = realloc(zr->parts, cap * sizeof(*v));

			if (v == NULL)
				break;
			zr->parts = v;
			zr->cap = cap;
		}
		rp = &zr->parts[zr->nparts++];
		memset(rp, 0, sizeof(*rp));
		snprintf(rp->topic, sizeof(rp->topic), "%s", topic);
		rp->p = p;
		rp->nparts = t.nparts;
		rp->min_insync = t.min_insync;
		rp->nrep = t.rf;
		memcpy(rp->replicas, &t.replicas[p * t.rf],
		    (size_t)t.rf * sizeof(int32_t));
		rp->version = -1;
		rp->epoch = -1;
		if ((rc = klog_core_replicated(zr->core, topic, p, t.nparts,
		    &err)) < 0)
			say_err(zr, "opening a replica", rc, &err);
		evaluate(zr, rp);
	}
	klog_rtopic_free(&t);
}

/* topic's copy here could not be removed: it stays, and this broker
 * does not say done until a restart finds it on disk again. */
static void
stuck_add(klog_zkrepl_t *zr, const char *topic)
{
	char **v, *name;

	if (listed(&zr->stuck, topic))
		return;
	if ((name = strdup(topic)) == NULL)
		return;
	if ((v = realloc(zr->stuck.names, (zr->stuck.n + 1) *
	    sizeof(*v))) == NULL) {
		free(name);
		return;
	}
	v[zr->stuck.n++] = name;
	zr->stuck.names = v;
}

/* Stop leading and following every partition of topic held here; the
 * leader nodes this broker holds go, so clients stop asking it. */
static void
forget_topic(klog_zkrepl_t *zr, const char *topic)
{
	char path[KLOG_ZK_PATH_MAX];
	klog_core_part_t *p;
	size_t i, keep = 0;

	for (i = 0; i < zr->nparts; i++) {
		struct rpart *rp = &zr->parts[i];

		if (strcmp(rp->topic, topic) != 0) {
			zr->parts[keep++] = *rp;
			continue;
		}
		if ((p = klog_core_rpart(zr->core, topic, rp->p)) != NULL)
			klog_fetcher_stop(zr->fetcher, p);
		if (rp->role == KLOG_REPLICA_LEADER &&
		    klog_rtopics_leader_path(path, sizeof(path), topic,
		    rp->p) == 0)
			(void)klog_zk_delete(zr->zk, path, -1, NULL);
	}
	zr->nparts = keep;
}

/* rtadmin.h's step 2 for topic, marked for deletion, and step 3 when this
 * broker is the last. */
static void
drop_topic(klog_zkrepl_t *zr, const char *topic)
{
	int32_t me = zr->cfg.broker_id;
	klog_rtopic_t t;
	klog_err_t err;
	int rc, mine = 0;

	rc = klog_rtopics_read(zr->zk, topic, 0, &t, &err);
	if (rc < 0 && rc != -KLOG_ENOENT) {
		say_err(zr, "reading a topic being deleted", rc, &err);
		zr->marked_stale = 1;
		arm_retry(zr);
		return;
	}
	/* Its assignment gone: every replica said done, so none is here. */
	for (int p = 0; rc == 0 && p < t.nparts; p++)
		mine |= klog_rtopic_has(&t, p, me);
	if (rc == 0)
		klog_rtopic_free(&t);
	forget_topic(zr, topic);
	if (!mine || listed(&zr->stuck, topic))
		return;
	rc = klog_core_drop_topic(zr->core, topic, &err);
	if (rc == 0) {
		klog_logger_say(&zr->cfg.log, KLOG_LEVEL_INFO, "topic \"%s\": "
		    "marked for deletion: this broker's copy removed", topic);
	} else if (rc != -KLOG_ENOTOPIC) {
		klog_logger_say(&zr->cfg.log, KLOG_LEVEL_ERROR, "topic \"%s\": "
		    "marked for deletion: removing this broker's copy: %s (the "
		    "deletion waits for this broker until a restart removes "
		    "what is left)", topic, klog_err_text(&err, rc));
		stuck_add(zr, topic);
		return;
	}
	if ((rc = klog_rtadmin_done(zr->zk, topic, me, &err)) < 0) {
		say_err(zr, "saying a deleted topic's copy is gone", rc, &err);
		zr->marked_stale = 1;
		arm_retry(zr);
		return;
	}
	rc = klog_rtadmin_finish(zr->zk, topic, NULL, 0, &err);
	if (rc == 0)
		klog_logger_say(&zr->cfg.log, KLOG_LEVEL_INFO, "topic \"%s\": "
		    "deleted: no broker holds a copy; its ZooKeeper nodes "
		    "removed", topic);
	else if (rc < 0)
		say_err(zr, "removing a deleted topic's nodes", rc, &err);
}

static void
read_marked(klog_zkrepl_t *zr)
{
	klog_zk_list_t l;
	klog_err_t err;
	int rc;

	zr->marked_stale = 0;
	if ((rc = klog_rtadmin_marked(zr->zk, 1, &l, &err)) < 0) {
		say_err(zr, "listing topics being deleted", rc, &err);
		zr->marked_stale = 1;
		arm_retry(zr);
		return;
	}
	klog_zk_list_free(&zr->marked);
	zr->marked = l;
	/* A mark gone (finished by hand) takes its stuck copy's note along. */
	for (size_t i = zr->stuck.n; i-- > 0;)
		if (!listed(&l, zr->stuck.names[i])) {
			free(zr->stuck.names[i]);
			zr->stuck.names[i] = zr->stuck.names[--zr->stuck.n];
		}
	for (size_t i = 0; i < l.n; i++)
		if (klog_topic_validate(l.names[i], NULL) == 0)
			drop_topic(zr, l.names[i]);
}

static void
read_topics(klog_zkrepl_t *zr)
{
	klog_zk_list_t l;
	klog_err_t err;
	int rc;

	if ((rc = klog_rtopics_list(zr->zk, 1, &l, &err)) < 0) {
		say_err(zr, "listing replicated topics", rc, &err);
		arm_retry(zr);
		return;
	}
	klog_zk_list_free(&zr->topics);
	zr->topics = l;
	for (size_t i = 0; i < l.n; i++)
		add_topic(zr, l.names[i]);
}

void
klog_zkrepl_sync(klog_zkrepl_t *zr)
{
	read_live(zr);
	/* First: a copy of a topic deleted while this broker was away must
	 * go before anything of it is served again. */
	read_marked(zr);
	read_topics(zr);
	for (size_t i = 0; i < zr->nparts; i++)
		evaluate(zr, &zr->parts[i]);
}

static struct rpart *
by_tag(klog_zkrepl_t *zr, uint64_t tag)
{
	for (size_t i = 0; tag != 0 && i < zr->nparts; i++)
		if (zr->parts[i].isr_tag == tag)
			return &zr->parts[i];
	return NULL;
}

/* The ISR write of rp ended: tell the core, which waited for it. */
static void
isr_done(klog_zkrepl_t *zr, struct rpart *rp, int rc, const int32_t *isr,
    int n)
{
	rp->isr_phase = ISR_IDLE;
	rp->isr_tag = 0;
	if (rc == -KLOG_EBUSY) {
		rp->role = KLOG_REPLICA_OFFLINE;
		arm_retry(zr);
	}
	klog_core_isr_written(zr->core, rp->topic, rp->p, rp->epoch, isr, n,
	    rc);
}

/* An ISR write that failed may still have been applied (a timeout, a
 * lost connection), or may have been ours from before: read the state
 * back and decide from what ZooKeeper holds, never from the error. */
static void
read_back(klog_zkrepl_t *zr, struct rpart *rp)
{
	char path[KLOG_ZK_PATH_MAX];
	klog_err_t err;
	int rc;

	rp->isr_phase = ISR_READING;
	if ((rc = klog_rtopics_state_path(path, sizeof(path), rp->topic,
	    rp->p)) == 0 && (rc = klog_zk_aget(zr->zk, path, rp->isr_tag,
	    &err)) == 0)
		return;
	rp->isr_phase = ISR_UNKNOWN;
	arm_retry(zr);
}

/* What the state read back says: still ours in our epoch, its ISR (the
 * one written or the old one) is the one there is; else deposed. */
static void
isr_read(klog_zkrepl_t *zr, struct rpart *rp, const klog_zk_event_t *ev)
{
	klog_rstate_t st;
	klog_err_t err;
	int rc;

	if (ev->rc < 0) {
		rp->isr_phase = ISR_UNKNOWN;
		arm_retry(zr);
		return;
	}
	if ((rc = klog_rstate_parse(ev->data, ev->len, &st, &err)) < 0) {
		say_err(zr, "reading the ISR back", rc, &err);
		isr_done(zr, rp, rc, NULL, 0);
		return;
	}
	if (st.leader != zr->cfg.broker_id || st.leader_epoch != rp->epoch) {
		isr_done(zr, rp, -KLOG_EBUSY, NULL, 0);
		return;
	}
	rp->version = ev->version;
	isr_done(zr, rp, 0, st.isr, st.nisr);
}

static void
isr_reply(klog_zkrepl_t *zr, const klog_zk_event_t *ev)
{
	struct rpart *rp = by_tag(zr, ev->tag);
	klog_err_t err;

	if (rp == NULL)
		return;   /* stepped down meanwhile */
	if (rp->isr_phase == ISR_READING) {
		isr_read(zr, rp, ev);
		return;
	}
	if (rp->isr_phase != ISR_WRITING)
		return;
	if (ev->rc == 0) {
		rp->version = ev->version;
		isr_done(zr, rp, 0, rp->next, rp->nnext);
		return;
	}
	klog_err_set(&err, ev->rc, "%s: %s", ev->path, klog_strerror(ev->rc));
	say_err(zr, "writing the ISR (reading it back)", ev->rc, &err);
	read_back(zr, rp);
}

int
klog_zkrepl_isr_change(void *arg, const char *topic, int partition,
    int32_t epoch, const int32_t *isr, int n)
{
	klog_zkrepl_t *zr = arg;
	struct rpart *rp = find(zr, topic, partition);
	klog_rstate_t next = { 0 };
	char path[KLOG_ZK_PATH_MAX];
	klog_err_t err;
	klog_buf_t b;
	int rc;

	if (rp == NULL || rp->role != KLOG_REPLICA_LEADER ||
	    rp->epoch != epoch || n > KLOG_RTOPICS_MAX_REPLICAS)
		return -KLOG_EBUSY;
	if (rp->isr_phase != ISR_IDLE)
		return -KLOG_EINVAL;   /* the core asks one at a time */
	next.leader = zr->cfg.broker_id;
	next.leader_epoch = epoch;
	next.controller_epoch = -1;
	next.nisr = n;
	memcpy(next.isr, isr, (size_t)n * sizeof(*isr));
	if ((rc = klog_rtopics_state_path(path, sizeof(path), topic,
	    partition)) < 0)
		return rc;
	klog_buf_init(&b);
	if ((rc = klog_rstate_encode(&b, &next)) == 0)
		rc = klog_zk_aset(zr->zk, path, b.data, b.len, rp->version,
		    ++zr->tags, &err);
	klog_buf_free(&b);
	if (rc < 0)
		return rc;   /* not sent: asked again at the next fetch */
	rp->isr_phase = ISR_WRITING;
	rp->isr_tag = zr->tags;
	rp->nnext = n;
	memcpy(rp->next, isr, (size_t)n * sizeof(*isr));
	return 0;
}

static void
on_retry(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_zkrepl_t *zr = arg;

	(void)loop;
	(void)t;
	if (zr->marked_stale)
		read_marked(zr);
	for (size_t i = 0; i < zr->nparts; i++)
		if (zr->parts[i].isr_phase == ISR_UNKNOWN)
			read_back(zr, &zr->parts[i]);
	for (size_t i = 0; i < zr->nparts; i++)
		if (zr->parts[i].role == KLOG_REPLICA_OFFLINE ||
		    zr->parts[i].leaderless_since != 0)
			evaluate(zr, &zr->parts[i]);
}

/* The partition whose state or leader node path is. */
static struct rpart *
by_path(klog_zkrepl_t *zr, const char *path)
{
	char a[KLOG_ZK_PATH_MAX], b[KLOG_ZK_PATH_MAX];

	for (size_t i = 0; i < zr->nparts; i++) {
		struct rpart *rp = &zr->parts[i];

		klog_rtopics_state_path(a, sizeof(a), rp->topic, rp->p);
		klog_rtopics_leader_path(b, sizeof(b), rp->topic, rp->p);
		if (strcmp(path, a) == 0 || strcmp(path, b) == 0)
			return rp;
	}
	return NULL;
}

/* The known replicated topic whose assignment node path is. */
static const char *
topic_of(klog_zkrepl_t *zr, const char *path)
{
	size_t n = strlen(KLOG_RTOPICS_ROOT);

	if (strncmp(path, KLOG_RTOPICS_ROOT "/", n + 1) != 0)
		return NULL;
	for (size_t i = 0; i < zr->topics.n; i++)
		if (strcmp(path + n + 1, zr->topics.names[i]) == 0)
			return zr->topics.names[i];
	return NULL;
}

int
klog_zkrepl_event(klog_zkrepl_t *zr, const klog_zk_event_t *ev)
{
	const char *topic;
	struct rpart *rp;

	switch (ev->type) {
	case KLOG_ZK_EVENT_REPLY:
		isr_reply(zr, ev);
		free(ev->data);
		return 1;
	case KLOG_ZK_EVENT_EXPIRED:
		for (size_t i = 0; i < zr->nparts; i++)
			go_offline(zr, &zr->parts[i]);
		return 0;
	case KLOG_ZK_EVENT_SESSION:
	case KLOG_ZK_EVENT_OVERFLOW:
		klog_zkrepl_sync(zr);
		return 0;
	case KLOG_ZK_EVENT_CHILD:
		if (strcmp(ev->path, KLOG_RTOPICS_ROOT) == 0) {
			read_topics(zr);
			return 1;
		}
		if (strcmp(ev->path, KLOG_RTOPICS_DELETE_ROOT) == 0) {
			read_marked(zr);
			return 1;
		}
		if (strcmp(ev->path, KLOG_LAYOUT_BROKER_IDS) == 0) {
			read_live(zr);
			for (size_t i = 0; i < zr->nparts; i++)
				if (zr->parts[i].role != KLOG_REPLICA_LEADER)
					evaluate(zr, &zr->parts[i]);
			return 0;   /* others may watch it too */
		}
		return 0;
	case KLOG_ZK_EVENT_DATA:
		if ((topic = topic_of(zr, ev->path)) != NULL) {
			add_topic(zr, topic);   /* partitions added? */
			return 1;
		}
		if ((rp = by_path(zr, ev->path)) == NULL)
			return 0;
		evaluate(zr, rp);
		return 1;
	default:
		return 0;
	}
}

int
klog_zkrepl_has(klog_zkrepl_t *zr, const char *topic)
{
	klog_rtopic_t t;
	klog_err_t err;

	for (size_t i = 0; i < zr->topics.n; i++)
		if (strcmp(zr->topics.names[i], topic) == 0)
			return 1;
	if (klog_rtopics_read(zr->zk, topic, 0, &t, &err) < 0)
		return 0;
	klog_rtopic_free(&t);
	return 1;
}

/*
 * The lease: a leader that has not heard from ZooKeeper for its session
 * timeout cannot know whether its session, and with it its leader nodes,
 * still exist, or whether another broker leads already; it stops leading
 * before the server could expire the session (the last answered ping's
 * sending plus the timeout, less a tenth for the timer's lateness), and
 * leads again once ZooKeeper answers and the nodes are still its own.
 */
static void
fence(klog_zkrepl_t *zr, int64_t quiet, int session_ms)
{
	int n = 0;

	zr->fenced = 1;
	zr->fences++;
	for (size_t i = 0; i < zr->nparts; i++)
		if (zr->parts[i].role == KLOG_REPLICA_LEADER) {
			go_offline(zr, &zr->parts[i]);
			n++;
		}
	klog_logger_say(&zr->cfg.log, KLOG_LEVEL_WARN, "zookeeper: silent for "
	    "%lld ms (session timeout %d ms): leading nothing until it "
	    "answers (stepped down from %d partition%s)", (long long)quiet,
	    session_ms, n, n == 1 ? "" : "s");
}

static void
on_lease(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_zkrepl_t *zr = arg;
	int session_ms = klog_zk_session_ms(zr->zk);
	int64_t quiet = klog_zk_quiet_ms(zr->zk);
	int64_t limit = session_ms - session_ms / 10;
	int64_t next = session_ms / LEASE_TICKS;

	(void)t;
	klog_zk_ping(zr->zk);
	if (!zr->fenced && quiet >= limit) {
		fence(zr, quiet, session_ms);
	} else if (zr->fenced && quiet < limit) {
		zr->fenced = 0;
		klog_logger_say(&zr->cfg.log, KLOG_LEVEL_INFO, "zookeeper: "
		    "answering again: taking up the partitions it still "
		    "assigns here");
		for (size_t i = 0; i < zr->nparts; i++)
			evaluate(zr, &zr->parts[i]);
	}
	if (!zr->fenced && limit - quiet < next)
		next = limit - quiet;
	klog_loop_timer_start(loop, &zr->lease,
	    next > LEASE_MIN_MS ? next : LEASE_MIN_MS, 0);
}

int
klog_zkrepl_fenced(const klog_zkrepl_t *zr, int64_t *fences)
{
	*fences = zr->fences;
	return zr->fenced;
}

void
klog_zkrepl_storage_failed(void *arg)
{
	klog_zkrepl_t *zr = arg;

	zr->failed = 1;
	for (size_t i = 0; i < zr->nparts; i++)
		resign(zr, &zr->parts[i]);
}

int
klog_zkrepl_new(klog_zk_t *zk, klog_loop_t *loop, klog_core_t *core,
    klog_fetcher_t *fetcher, const klog_zkrepl_config_t *cfg,
    klog_zkrepl_t **out, klog_err_t *err)
{
	klog_zkrepl_t *zr = calloc(1, sizeof(*zr));

	*out = NULL;
	if (zr == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	zr->cfg = *cfg;
	zr->zk = zk;
	zr->loop = loop;
	zr->core = core;
	zr->fetcher = fetcher;
	klog_timer_init(&zr->retry, on_retry, zr);
	klog_timer_init(&zr->lease, on_lease, zr);
	klog_zk_ping(zk);
	klog_loop_timer_start(loop, &zr->lease,
	    klog_zk_session_ms(zk) / LEASE_TICKS, 0);
	*out = zr;
	return 0;
}

void
klog_zkrepl_free(klog_zkrepl_t *zr)
{
	if (zr == NULL)
		return;
	klog_loop_timer_stop(zr->loop, &zr->retry);
	klog_loop_timer_stop(zr->loop, &zr->lease);
	klog_zk_list_free(&zr->topics);
	klog_zk_list_free(&zr->marked);
	klog_zk_list_free(&zr->stuck);
	free(zr->live);
	free(zr->parts);
	free(zr);
}
