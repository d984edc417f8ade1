/*
 * Names in a data directory, and the retention rule over a partition's list
 * of segments: what the broker's log (log.h), klog-retain (retain.h) and
 * klog-dump (dump.h) share about the layout on disk.
 *
 *   <data-dir>/.klog_cleanshutdown                 (see store.h)
 *   <data-dir>/<topic>-<partition>/                 a partition directory
 *   <data-dir>/<topic>-<partition>/00000000000000000000.klog
 *                                  00000000001073741917.klog
 *                                  00000000002147483834.kafka
 *
 * A topic is 1 to KLOG_TOPIC_MAX bytes of [A-Za-z0-9._-], neither "." nor
 * ".."; a partition is a decimal number without sign or leading zero, at most
 * INT_MAX.  A segment is named after its base offset (the partition offset of
 * its first byte), zero-padded to 20 digits, then ".klog", or ".kafka" for a
 * segment left by Kafka 0.7 (klog reads and appends to those, and creates
 * only .klog ones).  The data directory is a security boundary: everything
 * that makes a path from a topic checks it here first.
 *
 * Only the listers (klog_names_parts(), klog_names_segments()) and
 * klog_names_reopen_dir() touch the file system: they list a directory, it
 * opens one to list.  Nothing here allocates except what they return.
 */
#ifndef KLOG_NAMES_H
#define KLOG_NAMES_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"

#define KLOG_TOPIC_MAX 249
#define KLOG_SEGMENT_SUFFIX ".klog"
#define KLOG_SEGMENT_SUFFIX_KAFKA ".kafka" /* Kafka 0.7's, still read */
/* Bytes recovery cut off a segment, kept beside it: "<20-digit partition
 * offset of the first byte cut>.salvage" (".<n>.salvage" for another cut
 * at the same offset); never a segment, never retained or served. */
#define KLOG_SALVAGE_SUFFIX ".salvage"
#define KLOG_SALVAGE_NAME_MAX 40
#define KLOG_CLEAN_MARKER ".klog_cleanshutdown"
/* In a partition directory: an offset below which every byte was synced
 * (log.h), where recovery starts. */
#define KLOG_RECOVERY_POINT_FILE "recovery-point"
#define KLOG_NAMES_SEGMENT_MAX 32  /* a segment file name, NUL included */

/* ---- topics ---- */

/*
 * 0 for a valid topic name; else -KLOG_ETOPIC, with err (which may be NULL)
 * saying why and showing the name escaped (never raw control bytes).
 */
int klog_topic_validate(const char *topic, klog_err_t *err);

/* Whether byte c may appear in a topic name (the same set is used for
 * consumer group names): A-Z a-z 0-9 . _ - */
int klog_names_topic_char(int c);

/* ---- partition directories: "<topic>-<partition>" ---- */

/*
 * The directory name of topic's partition into buf: -KLOG_ETOPIC for an
 * invalid topic, -KLOG_EINVAL for a negative partition, -KLOG_ETOOBIG if
 * it does not fit (buf then holds a cut copy).
 */
int klog_names_dir_format(const char *topic, int partition, char *buf,
    size_t len);

/* The same with the data directory in front: "<data_dir>/<topic>-<n>". */
int klog_names_dir_path(const char *data_dir, const char *topic,
    int partition, char *buf, size_t len);

/*
 * Split a directory name at its last '-' into a valid topic (into topic,
 * topiclen bytes) and a partition written as klog_names_dir_format() writes
 * it.  -KLOG_EINVAL if the part after the dash is not such a number,
 * -KLOG_ETOPIC if the part before it is not a valid topic, -KLOG_ETOOBIG if
 * the topic does not fit.
 */
int klog_names_dir_parse(const char *name, char *topic, size_t topiclen,
    int *partition);

/* One partition directory found by klog_names_parts(). */
typedef struct klog_names_part {
	char topic[KLOG_TOPIC_MAX + 1];
	int partition;
} klog_names_part_t;

/*
 * The partition directories of the data directory dfd refers to (dir is its
 * path, for messages), by topic then partition: each entry whose name
 * klog_names_dir_parse() takes and that is a directory itself.  Links are
 * not followed (the data directory is a security boundary), other names
 * and other files are skipped, and so is a directory removed since the
 * listing (a topic deleted beside klog-retain).  One readdir and one stat
 * per entry; dfd is neither moved nor closed.  A failed system call is its
 * code with "stat PATH: reason" (or opendir, readdir).  On success *out
 * (n entries; NULL when none) is the caller's to free().
 */
int klog_names_parts(int dfd, const char *dir, klog_names_part_t **out,
    size_t *n, klog_err_t *err);

/* ---- segment files: "<20 digits>.klog" or ".kafka" ---- */

/*
 * The file name of the segment at base (.kafka if kafka is non-zero) into
 * buf, which KLOG_NAMES_SEGMENT_MAX bytes always hold: -KLOG_EINVAL for a
 * negative base, -KLOG_ETOOBIG if buf is too small.
 */
int klog_names_segment_format(int64_t base, int kafka, char *buf,
    size_t len);

/* The same with the partition directory in front: "<dir>/<name>". */
int klog_names_segment_path(const char *dir, int64_t base, int kafka,
    char *buf, size_t len);

/*
 * Parse a segment file name: exactly 20 digits, then ".klog" or ".kafka"
 * (*kafka, which may be NULL, tells which).  -KLOG_ERANGE for such a name
 * whose digits pass INT64_MAX, -KLOG_EINVAL for any other name (not a
 * segment).  klog_names_segment_format() gives the name back from *base
 * and *kafka.
 */
int klog_names_segment_parse(const char *name, int64_t *base, int *kafka);

/* One segment, as listed for retention and tools. */
typedef struct klog_segment_info {
	int64_t base;
	int64_t size;
	int64_t mtime_ms;  /* file modification time, ms since the epoch */
} klog_segment_info_t;

/* One segment file found by klog_names_segments(). */
typedef struct klog_names_seg {
	klog_segment_info_t info;
	int kafka;                /* named .kafka rather than .klog */
} klog_names_seg_t;

enum klog_names_flags {
	/*
	 * Look at a directory the way a tool inspects files it is handed
	 * (klog-dump), rather than as the owner of a data directory:
	 * symbolic links are followed, a name that cannot be a segment's (not
	 * a regular file, a base offset past INT64_MAX, an end past the
	 * largest offset) is skipped, a link that leads nowhere is an error,
	 * and errors say "PATH: reason" as for any file the tool opens.
	 */
	KLOG_NAMES_INSPECT = 1 << 0,
};

/*
 * The segment files of the directory dfd refers to (dir is its path, for
 * messages), sorted by base offset, then by size (so that a stray empty
 * file sharing a base comes first, contiguous with both neighbours), then
 * .kafka before .klog (the order of the names).  One readdir and one stat
 * per entry, in directory order; no segment is opened or read, and dfd is
 * neither moved nor closed.
 *
 * Without flags: links are not followed; other names are ignored; a file
 * removed since the listing (klog-retain at work) is left out; a segment
 * name that is not a regular file, whose base offset cannot be, or whose
 * end would pass INT64_MAX is -KLOG_ECORRUPT, named in err; a failed
 * system call is its code with "stat PATH: reason" (or opendir, readdir).
 *
 * On success *out (n entries; NULL when none) is the caller's to free().
 * Contiguity is not checked: each caller has its own rule for a gap.
 */
int klog_names_segments(int dfd, const char *dir, unsigned flags,
    klog_names_seg_t **out, size_t *n, klog_err_t *err);

/* An opendir(3) of the directory dfd refers to, with its own descriptor
 * and offset (dfd is neither moved nor closed); NULL with errno. */
DIR *klog_names_reopen_dir(int dfd);

/* ---- retention ---- */

/* The mtime_ms of a segment file that is already gone: it counts as
 * expired, so that the age rule walks past it. */
#define KLOG_RETAIN_GONE INT64_MIN

#endif
