/*
 * The offsets Kafka consumer groups commit through the Kafka listener, kept
 * durably under a standalone broker's data directory (klog-kafka(7)):
 * DATA/.kafka-offsets/ holds one file per group, named by its escaped group
 * id, rewritten whole (temporary file, fsync, rename, fsync of the
 * directory) when the group commits.  The offsets are klog byte offsets
 * (the next message's start), so they mean the same to klog-consume.  Not
 * thread-safe: the broker's loop owns it.
 */
#ifndef KLOG_KOFFSETS_H
#define KLOG_KOFFSETS_H

#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"

#define KLOG_KOFFSETS_DIR ".kafka-offsets"
#define KLOG_KOFFSETS_MAX_METADATA 4096   /* bytes of a commit's metadata */

typedef struct klog_koffsets klog_koffsets_t;

/*
 * Open (creating DATA/.kafka-offsets if missing) and load every group's
 * file; a file that does not parse is an error naming it.  *out is the
 * caller's: klog_koffsets_free().
 */
int klog_koffsets_open(const char *data_dir, klog_koffsets_t **out,
    klog_err_t *err);

void klog_koffsets_free(klog_koffsets_t *o);

/*
 * Record group's committed offset for topic/partition in memory, replacing
 * the one before; klog_koffsets_save() makes it durable.  metadata longer
 * than KLOG_KOFFSETS_MAX_METADATA is -KLOG_ETOOBIG; a topic name that
 * klog_names rejects is -KLOG_ETOPIC; an empty group, one over 200 bytes
 * or one whose escaped file name would pass 250 characters (each byte
 * outside [A-Za-z0-9_-.] takes three), or a negative partition,
 * -KLOG_EINVAL.
 */
int klog_koffsets_put(klog_koffsets_t *o, klog_str_t group, klog_str_t topic,
    int32_t partition, int64_t offset, klog_str_t metadata);

/* Write group's file with everything put so far; 0 or a negative code
 * with err naming the file.  After a failure the offsets stay in memory
 * (and are written by the next save).  A group with nothing put: 0, and
 * nothing written. */
int klog_koffsets_save(klog_koffsets_t *o, klog_str_t group, klog_err_t *err);

/* group's committed offset of topic/partition: 1 and *offset, *metadata (a
 * view valid until the next put or save of the group), or 0 if none. */
int klog_koffsets_get(const klog_koffsets_t *o, klog_str_t group,
    klog_str_t topic, int32_t partition, int64_t *offset,
    klog_str_t *metadata);

/* group's i-th committed offset, in topic then partition order: 1 and the
 * fields (views valid until the next put or save of the group), or 0 past
 * the last (OffsetFetch of every partition). */
int klog_koffsets_at(const klog_koffsets_t *o, klog_str_t group, size_t i,
    klog_str_t *topic, int32_t *partition, int64_t *offset,
    klog_str_t *metadata);

/* The groups with a committed offset, one at a time: *cursor NULL at
 * first, moved on by each call; 1 and the next one's id (a view valid
 * while the group is), or 0 after the last. */
int klog_koffsets_next_group(const klog_koffsets_t *o, const void **cursor,
    klog_str_t *id);

#endif
