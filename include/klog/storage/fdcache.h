/*
 * A bounded cache of open segment descriptors, shared by every partition
 * log of a store, so that a broker's descriptor count does not grow with
 * the segments it has read: each partition's active segment stays open
 * (appends and fsync need it), and older segments are opened on a read and
 * closed again, least recently used first, when more than max of them are
 * open and unused.
 *
 * Each segment (segment.h) embeds one klog_fdcache_entry_t.  A descriptor is
 * used only while pinned: a pinned one is never closed, whatever the bound,
 * so the count may pass max by the reads in flight.  Only entries the cache
 * owns are ever closed: those it opened itself, and those handed over with
 * klog_fdcache_adopt() once their segment is sealed and durable (closing a
 * descriptor with unsynced writes could lose an fsync error).
 *
 * Thread-safe; one mutex, held for list moves and for the open(2) and
 * close(2) of an eviction.  It is taken after a log's own lock, never
 * before.  Reference counted, because segments (held by in-flight reads)
 * may outlive the store that made the cache.
 */
#ifndef KLOG_FDCACHE_H
#define KLOG_FDCACHE_H

#include <stddef.h>

typedef struct klog_fdcache klog_fdcache_t;

/* Per segment; private fields, declared here so segments can embed it. */
typedef struct klog_fdcache_entry {
	int fd;                 /* -1 while closed */
	unsigned pins;
	int owned;              /* the cache may close fd when unpinned */
	struct klog_fdcache_entry *prev, *next;  /* idle list, if on it */
} klog_fdcache_entry_t;

/*
 * A cache keeping at most max owned descriptors open beyond the pinned
 * ones; max 0 means no bound.  The caller owns one reference.
 */
int klog_fdcache_new(size_t max, klog_fdcache_t **out);
void klog_fdcache_ref(klog_fdcache_t *c);
void klog_fdcache_unref(klog_fdcache_t *c);

/* Owned descriptors open now (pinned or idle). */
size_t klog_fdcache_open_count(klog_fdcache_t *c);

/* An entry for a segment, with fd already open (not owned) or -1. */
void klog_fdcache_entry_init(klog_fdcache_entry_t *e, int fd);

/*
 * Pin e and return its descriptor, opening path read-only first (and
 * owning the result) if it is closed; path is only read then.  A negative
 * KLOG_E* code if the open fails, with errno set by open(2).
 */
int klog_fdcache_pin(klog_fdcache_t *c, klog_fdcache_entry_t *e,
    const char *path);
void klog_fdcache_unpin(klog_fdcache_t *c, klog_fdcache_entry_t *e);
/* One more pin of e, which is pinned already (so open, and off the idle
 * list). */
void klog_fdcache_repin(klog_fdcache_t *c, klog_fdcache_entry_t *e);

/* e's segment is sealed and synced: its descriptor may now be closed. */
void klog_fdcache_adopt(klog_fdcache_t *c, klog_fdcache_entry_t *e);

/* e is going away (unpinned): close its descriptor, forget it. */
void klog_fdcache_drop(klog_fdcache_t *c, klog_fdcache_entry_t *e);

#endif
