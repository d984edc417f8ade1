/*
 * The partition log's insides, shared by its files: log.c (open, recovery,
 * append, flush, truncation), logpoint.c (the recovery point), logread.c
 * (where a read's bytes are), logretain.c (the segments listed, OFFSETS
 * by time, retention) and logtime.c (the first record at or after a
 * time).  Nothing else includes this.
 */
#ifndef KLOG_LOG_IMPL_H
#define KLOG_LOG_IMPL_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "klog/storage/fdcache.h"
#include "klog/storage/log.h"
#include "klog/storage/names.h"
#include "klog/storage/segment.h"

#define LOG_LATER_MAX 4  /* side files waiting for a flush */

struct klog_log {
	pthread_mutex_t mu;
	klog_fdcache_t *cache;  /* referenced; shared with the store's logs */
	char *data_dir;
	char *dir;              /* <data-dir>/<topic>-<partition> */
	char *topic;
	int partition;
	int64_t segment_bytes;
	klog_segment_t **segs;      /* sorted by base; the last one is active */
	size_t nsegs, cap;
	int64_t end;            /* written end */
	int64_t flushed_end;
	int64_t bytes;          /* sum of segment sizes */
	uint64_t unflushed;     /* messages appended since the last flush */
	int64_t last_flush_ms;  /* CLOCK_MONOTONIC */
	int64_t recovered;      /* bytes cut at open */
	char salvaged[PATH_MAX];  /* where they were kept, or "" */
	int dirty;              /* DIRTY_* */
	/* Files written in dir (producer state snapshots) that the next
	 * flush syncs and closes (klog_log_sync_later()). */
	int later[LOG_LATER_MAX];
	size_t nlater;
	uint64_t cuts;          /* truncations and resets: a flush begun
	                           before one must not move flushed_end */
	char failed[384];       /* why a sync failed, "" if none did: final
	                           (log.h), so no write or flush from then */
	/* Under rp_mu (taken before mu): the recovery point as its file has
	 * it, -1 if there is none. */
	pthread_mutex_t rp_mu;
	int64_t rp;
};

/* A segment as copied out under the lock, with a reference held. */
struct snap {
	klog_segment_t *seg;
	int64_t base, size;
	int kafka;
};

static inline int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static inline int
seg_path(const klog_log_t *log, int64_t base, int kafka, char *buf,
    size_t len)
{
	return klog_names_segment_path(log->dir, base, kafka, buf, len);
}

static inline klog_segment_t *
active(const klog_log_t *log)
{
	return log->segs[log->nsegs - 1];
}

/* Index of the last segment whose base <= offset; offset >= the first. */
static inline size_t
seg_find(const klog_log_t *log, int64_t offset)
{
	size_t lo = 0, hi = log->nsegs, mid;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (log->segs[mid]->base <= offset)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The segments copied out under the lock, each referenced, and *flushed
 * (may be NULL) the flushed end then; for logretain.c and logtime.c. */
static inline int
log_snapshot(klog_log_t *log, struct snap **out, size_t *n, int64_t *flushed)
{
	struct snap *sn;

	pthread_mutex_lock(&log->mu);
	*n = log->nsegs;
	if (flushed != NULL)
		*flushed = log->flushed_end;
	if ((sn = malloc(*n * sizeof(*sn))) == NULL) {
		pthread_mutex_unlock(&log->mu);
		return -KLOG_ENOMEM;
	}
	for (size_t i = 0; i < *n; i++) {
		sn[i].seg = log->segs[i];
		sn[i].base = log->segs[i]->base;
		sn[i].size = log->segs[i]->size;
		sn[i].kafka = log->segs[i]->kafka;
		klog_segment_ref(sn[i].seg);
	}
	pthread_mutex_unlock(&log->mu);
	*out = sn;
	return 0;
}

static inline void
log_snapshot_free(struct snap *sn, size_t n)
{
	for (size_t i = 0; i < n; i++)
		klog_segment_unref(sn[i].seg);
	free(sn);
}

/* log.c, for logretain.c */
int log_roll(klog_log_t *log, klog_err_t *err);

/* logpoint.c, for log.c: the recovery point */
int64_t log_rp_read(const klog_log_t *log);
/* A flush begun at cuts synced everything below rp: move the point there
 * unless a cut came meanwhile (it set its own).  Takes rp_mu, then mu. */
void log_rp_advance(klog_log_t *log, int64_t rp, uint64_t cuts);
/* A cut or a reset left base the active segment's base: the point no
 * higher.  Under rp_mu. */
void log_rp_lower(klog_log_t *log, int64_t base);

#endif
