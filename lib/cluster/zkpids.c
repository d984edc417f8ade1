/*
 * Producer id blocks taken one ahead with ZooKeeper's asynchronous calls
 * (zkpids.h): a read of the node, a set at the version read, and, when a
 * set's answer was lost, a read back.
 */
#include <stdlib.h>
#include <string.h>

#include "klog/cluster/zkpids.h"
#include "klog/zk/pidblock.h"
#include "klog/zk/zkasync.h"

/* This module's calls carry "pids" in their tag's high half, the call's
 * number in the low: an answer to an earlier call (one from a session
 * that has since expired) is not taken for the current one's. */
#define TAG ((uint64_t)0x70696473 << 32)
#define TRIES 20              /* other writers winning before a pause */

enum state {
	IDLE,       /* nothing asked */
	READING,    /* the node asked for */
	SETTING,    /* the next block written at the version read */
	CHECKING,   /* the node read back after a set's answer was lost */
};

struct klog_zkpids {
	klog_zk_t *zk;
	int32_t broker;
	klog_logger_t log;
	int64_t start, end;           /* the block taken ahead; empty if equal */
	int state;
	uint32_t call;                /* the number of the call in flight */
	int tries;                    /* sets lost to other writers in a row */
	int64_t want_start, want_end; /* the block being set */
	char json[KLOG_PIDBLOCK_JSON];
	int warned;                   /* a failure logged since the last block */
};

/* The tag of a new call. */
static uint64_t
next_tag(klog_zkpids_t *zp)
{
	return TAG | ++zp->call;
}

/* A failure, logged once until a block is taken again. */
static void
failed(klog_zkpids_t *zp, const char *what, const klog_err_t *err, int rc)
{
	zp->state = IDLE;
	if (zp->warned)
		return;
	zp->warned = 1;
	klog_logger_say(&zp->log, KLOG_LEVEL_WARN, "producer ids: %s: %s; "
	    "asked again at the next InitProducerId", what,
	    klog_err_text(err, rc));
}

/* Ask for the next block, unless one is ready or being asked for. */
static void
ask(klog_zkpids_t *zp)
{
	klog_err_t err;
	int rc;

	if (zp->state != IDLE || zp->start < zp->end)
		return;
	if ((rc = klog_zk_aget(zp->zk, KLOG_PIDBLOCK_PATH, next_tag(zp),
	    &err)) < 0) {
		failed(zp, "reading " KLOG_PIDBLOCK_PATH, &err, rc);
		return;
	}
	zp->state = READING;
}

static void
got(klog_zkpids_t *zp, int64_t start, int64_t end)
{
	zp->start = start;
	zp->end = end;
	zp->state = IDLE;
	zp->tries = 0;
	zp->warned = 0;
}

/* The node read: write the block after it at the version read. */
static void
on_read(klog_zkpids_t *zp, const klog_zk_event_t *ev)
{
	klog_err_t err;
	int rc = ev->rc;

	if (rc == -KLOG_ENOENT)
		rc = klog_err_set(&err, rc, KLOG_PIDBLOCK_PATH " is gone (it "
		    "is made at a broker's start)");
	else if (rc < 0)
		klog_err_set(&err, rc, "%s", klog_strerror(rc));
	if (rc < 0) {
		failed(zp, "reading " KLOG_PIDBLOCK_PATH, &err, rc);
		return;
	}
	/* The set is at the version read, or another writer's block could
	 * be written over: never at "any version" (-1). */
	if (ev->version < 0) {
		klog_err_set(&err, -KLOG_EZK, "no version in the answer");
		failed(zp, "reading " KLOG_PIDBLOCK_PATH, &err, -KLOG_EZK);
		return;
	}
	/* A node without data is not "no node": it fails to parse. */
	if ((rc = klog_pidblock_next(ev->data != NULL ? ev->data : "",
	    ev->len, zp->broker, &zp->want_start, &zp->want_end, zp->json,
	    &err)) < 0 ||
	    (rc = klog_zk_aset(zp->zk, KLOG_PIDBLOCK_PATH, zp->json,
	    strlen(zp->json), ev->version, next_tag(zp), &err)) < 0) {
		failed(zp, "taking a block", &err, rc);
		return;
	}
	zp->state = SETTING;
}

/* The set answered: the block is ours, another writer won (read again),
 * or the answer was lost (read back). */
static void
on_set(klog_zkpids_t *zp, const klog_zk_event_t *ev)
{
	klog_err_t err;
	int rc;

	if (ev->rc == 0) {
		got(zp, zp->want_start, zp->want_end);
		return;
	}
	zp->state = IDLE;
	if (ev->rc == -KLOG_EBUSY && ++zp->tries < TRIES) {
		ask(zp);
		return;
	}
	if (ev->rc == -KLOG_ECONN || ev->rc == -KLOG_ETIMEDOUT) {
		if ((rc = klog_zk_aget(zp->zk, KLOG_PIDBLOCK_PATH,
		    next_tag(zp), &err)) < 0) {
			failed(zp, "reading back " KLOG_PIDBLOCK_PATH, &err, rc);
			return;
		}
		zp->state = CHECKING;
		return;
	}
	zp->tries = 0;
	klog_err_set(&err, ev->rc, "%s", klog_strerror(ev->rc));
	failed(zp, "writing " KLOG_PIDBLOCK_PATH, &err, ev->rc);
}

/* Read back after a lost answer: the node still holds what was written
 * (the block is ours), or not (ours was not written, or another broker
 * took the one after it: ours is then never used). */
static void
on_check(klog_zkpids_t *zp, const klog_zk_event_t *ev)
{
	klog_err_t err;

	if (ev->rc == 0 && ev->data != NULL &&
	    strcmp(ev->data, zp->json) == 0) {
		got(zp, zp->want_start, zp->want_end);
		return;
	}
	if (ev->rc < 0) {
		klog_err_set(&err, ev->rc, "%s", klog_strerror(ev->rc));
		failed(zp, "reading back " KLOG_PIDBLOCK_PATH, &err, ev->rc);
		return;
	}
	zp->state = IDLE;
	ask(zp);
}

int
klog_zkpids_event(klog_zkpids_t *zp, const klog_zk_event_t *ev)
{
	int state;

	if (zp == NULL)
		return 0;
	/* An expired session's calls are never answered, and an answer
	 * lost with the queue's overflow never comes: a later one for the
	 * call in flight then is taken for nothing (its tag is old). */
	if (ev->type == KLOG_ZK_EVENT_EXPIRED ||
	    ev->type == KLOG_ZK_EVENT_OVERFLOW)
		zp->state = IDLE;
	if (ev->type == KLOG_ZK_EVENT_SESSION ||
	    ev->type == KLOG_ZK_EVENT_CONNECTED ||
	    ev->type == KLOG_ZK_EVENT_OVERFLOW) {
		ask(zp);
		return 0;
	}
	if (ev->type != KLOG_ZK_EVENT_REPLY ||
	    (ev->tag & ~(uint64_t)UINT32_MAX) != TAG)
		return 0;
	state = ev->tag == (TAG | zp->call) ? zp->state : IDLE;
	if (state == READING)
		on_read(zp, ev);
	else if (state == SETTING)
		on_set(zp, ev);
	else if (state == CHECKING)
		on_check(zp, ev);
	free(ev->data);
	return 1;
}

int
klog_zkpids_take(void *arg, int64_t *start, int64_t *end, klog_err_t *err)
{
	klog_zkpids_t *zp = arg;

	if (zp->start == zp->end) {
		ask(zp);
		return klog_err_set(err, -KLOG_EBUSY, "no block of producer "
		    "ids ready yet: ZooKeeper is asked for one");
	}
	*start = zp->start;
	*end = zp->end;
	zp->start = zp->end = 0;
	ask(zp);
	return 0;
}

int
klog_zkpids_new(klog_zk_t *zk, int32_t broker, const klog_logger_t *log,
    klog_zkpids_t **out)
{
	klog_zkpids_t *zp = calloc(1, sizeof(*zp));
	klog_err_t err;
	int rc;

	if (zp == NULL)
		return -KLOG_ENOMEM;
	zp->zk = zk;
	zp->broker = broker;
	zp->log = *log;
	if ((rc = klog_pidblock_take(zk, broker, &zp->start, &zp->end,
	    &err)) < 0) {
		zp->start = zp->end = 0;
		failed(zp, "taking a block", &err, rc);
	}
	*out = zp;
	return 0;
}

void
klog_zkpids_free(klog_zkpids_t *zp)
{
	free(zp);
}
