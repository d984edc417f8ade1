/*
 * Producer ids (Kafka's KIP-98), handed out in blocks so that no id is
 * ever handed out twice, across restarts and across brokers: a broker
 * takes a block of KLOG_PIDS_BLOCK ids from a source, then hands them out
 * one by one.  A standalone broker's source is the data directory's file
 * <data-dir>/.producer-ids (klog-format(5)): one line, the decimal first
 * id no block holds yet, rewritten (a temporary file synced, renamed, the
 * directory synced) before any id of the block it reserves is handed out.
 * A cluster broker's is ZooKeeper's /latest_producer_id_block, as Kafka's
 * (pidblock.h).  Ids a broker reserved and did not hand out before it
 * stopped are never used.
 */
#ifndef KLOG_PIDS_H
#define KLOG_PIDS_H

#include <stdint.h>

#include "klog/base/error.h"

#define KLOG_PIDS_FILE ".producer-ids"
#define KLOG_PIDS_BLOCK 1000          /* Kafka's block */

typedef struct klog_pids klog_pids_t;

/* A source's next block: 0 and [*start, *end), or an error. */
typedef int klog_pids_block_fn(void *arg, int64_t *start, int64_t *end,
    klog_err_t *err);

/* Ids from data_dir's file (the path copied); *out is the caller's:
 * klog_pids_free(). */
int klog_pids_new(const char *data_dir, klog_pids_t **out);
void klog_pids_free(klog_pids_t *p);

/*
 * The next id in *id, a block taken first from fn(arg) when the current
 * one is used up (fn NULL: the data directory's file).  A block from one
 * source is never mixed with another's: a change of source drops what is
 * left.  An error of the source is returned (nothing handed out).
 */
int klog_pids_next(klog_pids_t *p, klog_pids_block_fn *fn, void *arg,
    int64_t *id, klog_err_t *err);

/* The file source: reserve the next block of data_dir's file. */
int klog_pids_reserve_file(const char *data_dir, int64_t *start,
    int64_t *end, klog_err_t *err);

#endif
