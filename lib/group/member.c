/*
 * A consumer group member's loop (member.h): klog_member_next() is one turn
 * of it, so that the caller writes each message out and looks at its
 * signal flags between turns.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

#include "klog/base/clock.h"
#include "klog/client/zkdiscovery.h"
#include "klog/group/member.h"
#include "klog/zk/layout.h"

/* The longest wait for news when there is nothing to read. */
#define IDLE_MAX_MS 1000

struct klog_member {
	klog_member_config_t cfg;
	klog_zk_t *zk;
	klog_discovery_t *d;
	klog_group_t *g;            /* NULL once left */
	klog_consumer_t *c;         /* what is ours, while reading */
	int64_t committed_ms;
	int commit_failed;          /* said once until a commit works */
	int failed;                 /* the flush hook failed: stop */
};

/* ZooKeeper or a broker away for now: retried, not fatal. */
static int
transient(int rc)
{
	/* A partition without a leader is an election under way: a member
	 * waits it out as it waits for a broker to come back. */
	return rc == -KLOG_ECONN || rc == -KLOG_ETIMEDOUT || rc == -KLOG_EZK ||
	    rc == -KLOG_ENOTLEADER;
}

/* Have the caller write out what it was handed; the first failure sticks,
 * so that nothing is noted after it. */
static int
flush(klog_member_t *mb)
{
	if (!mb->failed && mb->cfg.flush != NULL &&
	    mb->cfg.flush(mb->cfg.arg) < 0)
		mb->failed = 1;
	return mb->failed ? -1 : 0;
}

/* Tell the group how far the output got (after a flush only). */
static void
note_positions(klog_member_t *mb)
{
	for (size_t i = 0; mb->c != NULL && i < klog_consumer_count(mb->c);
	    i++)
		klog_group_set_position(mb->g, klog_consumer_partition(mb->c, i),
		    klog_consumer_position(mb->c, i));
}

/* Commit what was written: flush, then the positions. */
static int
commit(klog_member_t *mb, int64_t now)
{
	klog_err_t err = { 0 };
	int rc;

	if (flush(mb) < 0)
		return -1;
	note_positions(mb);
	mb->committed_ms = now;
	if ((rc = klog_group_commit(mb->g, &err)) < 0) {
		if (!mb->commit_failed)
			klog_logger_say(&mb->cfg.log, KLOG_LEVEL_INFO,
			    "committing offsets: %s (will retry)",
			    klog_err_text(&err, rc));
		mb->commit_failed = 1;
		return rc;
	}
	mb->commit_failed = 0;
	return 0;
}

/* Stop reading: what was written is noted, what was fetched dropped. */
static int
stop_reading(klog_member_t *mb)
{
	if (mb->c == NULL)
		return 0;
	if (flush(mb) < 0)
		return -1;
	note_positions(mb);
	klog_consumer_close(mb->c);
	mb->c = NULL;
	return 0;
}

/* Read what the group gave us, from where the group got to. */
static int
start_reading(klog_member_t *mb, klog_err_t *err)
{
	size_t n = klog_group_count(mb->g), k = 0;
	const klog_group_part_t *gp;
	klog_consumer_config_t cc = mb->cfg.read;
	int32_t *parts;
	klog_consumer_pos_t *starts;
	int rc;

	if (n == 0)
		return 0;
	parts = calloc(n, sizeof(*parts));
	starts = calloc(n, sizeof(*starts));
	if (parts == NULL || starts == NULL) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		gp = klog_group_part(mb->g, i);
		parts[i] = gp->index;
		if (mb->cfg.start_at != NULL && (rc = mb->cfg.start_at(
		    mb->cfg.arg, gp->index, &starts[k].offset, err)) != 0) {
			if (rc < 0)
				goto out;
			starts[k++].partition = gp->index;
		} else if (gp->position >= 0) {
			starts[k].partition = gp->index;
			starts[k++].offset = gp->position;
		}
	}
	cc.topic = mb->cfg.group.topic;
	cc.partitions = parts;
	cc.npartitions = n;
	cc.starts = starts;
	cc.nstarts = k;
	if ((rc = klog_consumer_open(mb->d, &cc, &mb->c, err)) < 0)
		goto out;
	klog_consumer_wake_on(mb->c, klog_zk_event_fd(mb->zk));
	if (mb->cfg.watch_fd >= 0)
		klog_consumer_watch(mb->c, mb->cfg.watch_fd);
	/* A new group's start (the end, say) is a position to commit. */
	note_positions(mb);
out:
	free(parts);
	free(starts);
	return rc;
}

/* Take ZooKeeper's news, for the discovery and the group. */
static void
take_events(klog_member_t *mb)
{
	klog_zk_event_t ev;
	int changed;

	while (klog_zk_next_event(mb->zk, &ev) > 0) {
		changed = klog_zkdiscovery_event(mb->d, &ev);
		klog_group_event(mb->g, &ev, changed);
		if (ev.type == KLOG_ZK_EVENT_DISCONNECTED)
			klog_logger_say(&mb->cfg.log, KLOG_LEVEL_INFO,
			    "zookeeper: connection lost; not reading until "
			    "it is back");
		else if (ev.type == KLOG_ZK_EVENT_EXPIRED)
			klog_logger_say(&mb->cfg.log, KLOG_LEVEL_INFO,
			    "zookeeper: session expired; joining the group "
			    "again");
	}
}

/* "member <id> reads 1-0 1-1", as many as fit a line. */
static void
say_assignment(klog_member_t *mb)
{
	char line[512], name[32];
	size_t n = klog_group_count(mb->g), len = 0;
	const klog_group_part_t *p;

	if (!klog_logger_wants(&mb->cfg.log, KLOG_LEVEL_DEBUG))
		return;
	line[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(line) - 40; i++) {
		p = klog_group_part(mb->g, i);
		if (p->broker_id == KLOG_LAYOUT_NUMBERED)
			snprintf(name, sizeof(name), " %d", (int)p->partition);
		else
			snprintf(name, sizeof(name), " %d-%d",
			    (int)p->broker_id, (int)p->partition);
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s",
		    name);
	}
	klog_logger_say(&mb->cfg.log, KLOG_LEVEL_DEBUG, "group \"%s\": member "
	    "%s reads%s", mb->cfg.group.group, klog_group_member_id(mb->g),
	    n ? line : " nothing");
}

/* A rebalance, then reading what is ours.  <0 only for a fatal error. */
static int
rebalance(klog_member_t *mb, klog_err_t *err)
{
	int moved = 0, rc;

	if (stop_reading(mb) < 0)
		return KLOG_CONSUMER_DONE;
	rc = klog_group_rebalance(mb->g, &moved, err);
	if (rc < 0 && !transient(rc) && rc != -KLOG_ENOTOPIC)
		return rc;
	if (rc < 0)
		klog_logger_say(&mb->cfg.log, KLOG_LEVEL_DEBUG, "rebalance: %s "
		    "(will retry)", klog_err_text(err, rc));
	if (moved)
		say_assignment(mb);
	if (!klog_group_live(mb->g))
		return KLOG_CONSUMER_BATCH;
	if ((rc = start_reading(mb, err)) < 0) {
		if (!transient(rc))
			return rc;
		klog_logger_say(&mb->cfg.log, KLOG_LEVEL_INFO, "%s; trying again",
		    klog_err_text(err, rc));
		klog_group_later(mb->g);
	}
	return KLOG_CONSUMER_BATCH;
}

/* Nothing to read: wait for ZooKeeper's news or the next retry, a second
 * at most so that the caller's flags are looked at. */
static void
idle(klog_member_t *mb)
{
	struct pollfd pfd = { .fd = klog_zk_event_fd(mb->zk), .events = POLLIN };
	int64_t wait = klog_group_wait_ms(mb->g, klog_clock_mono_ms());

	if (wait < 0 || wait > IDLE_MAX_MS)
		wait = IDLE_MAX_MS;
	if (poll(&pfd, 1, (int)wait) > 0)
		take_events(mb);
}

int
klog_member_next(klog_member_t *mb, klog_consumer_msg_t *m, klog_err_t *err)
{
	int64_t now = klog_clock_mono_ms();
	int rc;

	if (mb->failed)
		return KLOG_CONSUMER_DONE;
	if (!klog_group_live(mb->g) && stop_reading(mb) < 0)
		return KLOG_CONSUMER_DONE;
	if (klog_group_due(mb->g, now))
		return rebalance(mb, err);
	if (mb->c == NULL) {
		if (mb->cfg.read.exit_at_end && klog_group_live(mb->g) &&
		    klog_group_wait_ms(mb->g, now) < 0)
			return KLOG_CONSUMER_DONE;
		idle(mb);
		return KLOG_CONSUMER_BATCH;
	}
	rc = klog_consumer_next(mb->c, m, err);
	if (rc < 0 && transient(rc)) {
		klog_logger_say(&mb->cfg.log, KLOG_LEVEL_INFO, "%s; rebalancing",
		    klog_err_text(err, rc));
		stop_reading(mb);
		klog_group_later(mb->g);
		return KLOG_CONSUMER_BATCH;
	}
	if (rc < 0 || rc == KLOG_CONSUMER_MSG)
		return rc;
	if (rc == KLOG_CONSUMER_NOTICE) {
		klog_logger_say(&mb->cfg.log, KLOG_LEVEL_INFO, "%s", err->msg);
		return KLOG_CONSUMER_BATCH;
	}
	/* A batch used up, or the end of what we own: a moment to write
	 * out, take the news and commit. */
	if (flush(mb) < 0)
		return KLOG_CONSUMER_DONE;
	take_events(mb);
	if (rc == KLOG_CONSUMER_DONE && klog_group_wait_ms(mb->g, now) < 0)
		return KLOG_CONSUMER_DONE;
	if (rc == KLOG_CONSUMER_DONE)
		stop_reading(mb);
	now = klog_clock_mono_ms();
	if (now - mb->committed_ms >= mb->cfg.commit_ms)
		commit(mb, now);
	return KLOG_CONSUMER_BATCH;
}

int
klog_member_open(klog_zk_t *zk, klog_discovery_t *d,
    const klog_member_config_t *cfg, klog_member_t **out, klog_err_t *err)
{
	klog_member_t *mb;
	int rc;

	*out = NULL;
	if ((mb = calloc(1, sizeof(*mb))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	mb->cfg = *cfg;
	mb->zk = zk;
	mb->d = d;
	if ((rc = klog_group_open(zk, d, &cfg->group, &mb->g, err)) < 0) {
		free(mb);
		return rc;
	}
	mb->committed_ms = klog_clock_mono_ms();
	*out = mb;
	return 0;
}

int
klog_member_leave(klog_member_t *mb, klog_err_t *err)
{
	int rc = 0;

	if (mb == NULL || mb->g == NULL)
		return 0;
	if (stop_reading(mb) == 0)
		rc = klog_group_commit(mb->g, err);
	klog_group_close(mb->g);
	mb->g = NULL;
	return rc;
}

void
klog_member_close(klog_member_t *mb)
{
	if (mb == NULL)
		return;
	klog_group_close(mb->g);
	klog_consumer_close(mb->c);
	free(mb);
}
