/*
 * A partition's producer state saved and rebuilt (pstate.h): snapshots,
 * as Kafka's ProducerStateManager takes them, and the scan of the log
 * after the newest one.
 *
 * A snapshot is the state as of an offset O, an entry boundary: every
 * batch below O counted, none from O on.  It is the file
 * <partition dir>/<O, 20 digits>.snapshot, written whole (a temporary
 * file synced, renamed, the directory synced), at each segment roll (its
 * syncs left to the log's next flush) and at a clean close, the two
 * newest kept.  Its bytes (big-endian;
 * klog-format(5)):
 *
 *   +-----------+-----------+-----------+-----------+----------+
 *   | "KLPS":4  | version:2 | crc32c:4  | offset:8  | count:4  |  22 bytes
 *   +-----------+-----------+-----------+-----------+----------+
 *   then count producers, ids increasing:
 *   +---------------+-----------------+------------+
 *   | producerId:8  | lastTimestamp:8 | batches:1  |  then batches (1-5)
 *   +---------------+-----------------+------------+
 *   | epoch:2 | firstSeq:4 | lastSeq:4 | offset:8 | lastOffset:8 |  26 B
 *
 *   version 1; crc32c (Castagnoli) of every byte after it; offset = O,
 *   the name's; the batches oldest first, of one epoch, their offsets
 *   increasing and below O.  A file that is not exactly this is ignored
 *   (an older one, or the log, serves).
 *
 * Rebuilding (klog_psnap_load()): snapshots past the log's end are
 * deleted (the log lost what they counted: an unclean stop, a cut), the
 * newest that reads is loaded, and the entries from its offset to the
 * log's end are scanned (their 50-byte headers only); with none, the
 * whole log is.  So after a clean stop nothing is scanned, and after a
 * crash at most what was written since the last roll.
 */
#ifndef KLOG_PSNAP_H
#define KLOG_PSNAP_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/log.h"
#include "klog/storage/pstate.h"

#define KLOG_PSNAP_SUFFIX ".snapshot"

/* What a rebuild did. */
typedef struct klog_psnap_info {
	int64_t loaded;               /* the snapshot's offset, or -1 */
	int bad;                      /* snapshots ignored: they did not read */
	int64_t scanned;              /* log bytes scanned after it */
} klog_psnap_info_t;

/* ps's bytes as of offset, appended to out (out->failed on allocation
 * failure). */
void klog_psnap_encode(const klog_pstate_t *ps, int64_t offset,
    klog_buf_t *out);

/*
 * The snapshot buf[0..len) into ps (empty): 0 and *offset, or
 * -KLOG_ECORRUPT (ps then holds what was read before the fault: the caller
 * starts again with an empty one), -KLOG_ENOMEM.
 */
int klog_psnap_decode(const uint8_t *buf, size_t len, klog_pstate_t *ps,
    int64_t *offset);

/* Save ps as of offset in log's directory, keeping the newest two:
 * synced now, or with at_flush by the log's next flush (on the flusher's
 * thread: the event loop's roll never waits on a disk; a snapshot torn
 * by a crash before it is ignored, and an older one or the log serves). */
int klog_psnap_write(klog_log_t *log, const klog_pstate_t *ps, int64_t offset,
    int at_flush, klog_err_t *err);

/* Delete log's snapshots past offset (a cut to offset). */
int klog_psnap_drop_above(klog_log_t *log, int64_t offset, klog_err_t *err);

/*
 * Rebuild ps (empty) for log: as described above, up to the log's flushed
 * end, which must be its end (a log just opened); then producers idle
 * more than max_idle_ms before now_ms expired.  0, or an error reading
 * the log.
 */
int klog_psnap_load(klog_log_t *log, klog_pstate_t *ps, int64_t now_ms,
    int64_t max_idle_ms, klog_psnap_info_t *info, klog_err_t *err);

#endif
