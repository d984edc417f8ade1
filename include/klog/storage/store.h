/*
 * The store: every partition log under one data directory, by topic.
 *
 * It owns the logs, the descriptor cache they share, and the clean-shutdown
 * marker (<data-dir>/.klog_cleanshutdown):
 * at open the marker is read and removed, and without it every partition's
 * last segment is recovered; a clean close flushes everything and writes it.
 * The store is used from one thread (the broker's event loop); klog_log_t
 * pointers it hands out stay valid until klog_store_close(), so another
 * thread (the flusher) may keep and flush them.
 */
#ifndef KLOG_STORE_H
#define KLOG_STORE_H

#include <stdatomic.h>
#include <stddef.h>

#include "klog/base/error.h"
#include "klog/storage/log.h"

typedef struct klog_store klog_store_t;

/* How far klog_store_open() has got: called after each partition it
 * opens, recovering or not. */
typedef struct klog_store_progress {
	size_t done, total;        /* partitions opened, of those found */
	const char *topic;
	int partition;
	int recovering;            /* this one was scanned for a torn tail */
	int64_t cut;               /* bytes its recovery cut */
} klog_store_progress_t;

typedef void klog_store_progress_fn(void *arg,
    const klog_store_progress_t *p);

typedef struct klog_store_config {
	const char *data_dir;
	klog_log_config_t log;     /* segment size; recover is decided here */
	int default_partitions;    /* for auto-created topics (>= 1) */
	int auto_create;           /* create unknown topics on first use */
	int max_partitions;        /* upper bound on a topic's partitions */
	size_t max_open_segments;  /* the descriptor cache's bound (fdcache.h),
	                              shared by all logs; 0: none */
	klog_store_progress_fn *progress;  /* at open; NULL: none */
	void *progress_arg;
} klog_store_config_t;

#define KLOG_STORE_DEFAULT_OPEN_SEGMENTS 256

void klog_store_config_default(klog_store_config_t *cfg);

/*
 * Create the data directory if needed, take its lock (one broker per
 * directory: -KLOG_EBUSY otherwise), consume the clean-shutdown marker and
 * open every existing partition (recovering if the marker was missing).
 * On success *out is owned by the caller: klog_store_close().
 */
int klog_store_open(const klog_store_config_t *cfg, klog_store_t **out,
    klog_err_t *err);

/*
 * Whether open found the clean-shutdown marker; how many partitions it
 * recovered (all of them without the marker, those whose end disagreed
 * with it otherwise), and the bytes recovery cut.
 */
int klog_store_clean(const klog_store_t *s);
int klog_store_recovered(const klog_store_t *s);
int64_t klog_store_recovered_bytes(const klog_store_t *s);

/*
 * Close every log.  With clean != 0, flush them all first and write the
 * clean-shutdown marker (only if every flush succeeded).
 */
int klog_store_close(klog_store_t *s, int clean, klog_err_t *err);

/* Create topic with the given partitions (or grow it to that many). */
int klog_store_create_topic(klog_store_t *s, const char *topic, int partitions,
    klog_err_t *err);

/*
 * The log of topic/partition.  An unknown topic is created with the default
 * partition count when create != 0 and auto_create is on, else
 * -KLOG_ENOTOPIC; a partition outside the topic's count is
 * -KLOG_ENOPARTITION; a bad name -KLOG_ETOPIC.
 */
int klog_store_get(klog_store_t *s, const char *topic, int partition,
    int create, klog_log_t **log, klog_err_t *err);

/*
 * Take topic out of the store and off the disk: every file of its
 * partition directories (segments, leader-epochs, salvage files) goes,
 * then the directories, then the data directory is synced.  The logs are
 * handed over, not closed: *logs (the caller's to free()) has *n entries,
 * NULL for a partition dropped before, each the caller's to
 * klog_log_close() once no other thread uses it (the flusher).
 * -KLOG_ENOTOPIC if there is no such topic.  A file that cannot be
 * removed is an error naming it, but the topic is out of the store all
 * the same (the logs are handed over); what is left on disk is found
 * again at the next start.
 */
int klog_store_delete_topic(klog_store_t *s, const char *topic,
    klog_log_t ***logs, int *n, klog_err_t *err);

/*
 * Forget the log of topic/partition, whose directory was removed behind
 * the store's back, and hand it over as above (NULL if there is none).
 * The partition is opened afresh, an empty log in a new directory, at its
 * next klog_store_get(), unless it was the topic's last one: then the
 * topic is gone, as if deleted.
 */
klog_log_t *klog_store_drop_partition(klog_store_t *s, const char *topic,
    int partition);

/* 0 if a topic may have partitions partitions (in [1, max_partitions]);
 * else -KLOG_EINVAL with err saying so. */
int klog_store_check_partitions(const klog_store_t *s, const char *topic,
    int partitions, klog_err_t *err);

/* Partition count of topic, or -KLOG_ENOTOPIC. */
int klog_store_partitions(klog_store_t *s, const char *topic);

/* Topics in name order, for metadata. */
size_t klog_store_topic_count(klog_store_t *s);
const char *klog_store_topic_name(klog_store_t *s, size_t i);

/* Every open log, for the flusher and the cleaner.  Unlike the rest of the
 * store, these two may be called from another thread too. */
size_t klog_store_log_count(klog_store_t *s);
klog_log_t *klog_store_log(klog_store_t *s, size_t i);

/*
 * The i-th log as klog_store_log() counts them (NULL past the end), held
 * for another thread's long work on it (the broker's time indexer) until
 * klog_store_release(): a deletion of its topic or partition sets *drop,
 * then waits for the release before it hands the log over to be closed,
 * so the holder checks *drop often.  One holder at a time; not the loop.
 */
klog_log_t *klog_store_hold(klog_store_t *s, size_t i, atomic_int *drop);
void klog_store_release(klog_store_t *s);

const char *klog_store_data_dir(const klog_store_t *s);

#endif
