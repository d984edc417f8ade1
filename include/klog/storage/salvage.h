/*
 * The salvage files recovery leaves beside a segment (segment.h, names.h):
 * the bytes it cut off at the first bad message, which usually hold good
 * messages after the damage.  Reading them back finds those messages by
 * resynchronizing: from the first byte, an entry is taken where its length,
 * magic, attributes and CRC all hold (klog_entry_valid(): a magic-2 entry's
 * CRC-32C too), and the search moves on a byte at a time where they do
 * not.  Offline and read-only (klog-dump --salvage).
 */
#ifndef KLOG_SALVAGE_H
#define KLOG_SALVAGE_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"

/* One message found; pointers valid during the callback. */
typedef struct klog_salvaged {
	const char *file;          /* the salvage file's path */
	int64_t offset;            /* the partition offset its entry had */
	int64_t next_offset;
	const uint8_t *payload;    /* inner messages of a wrapper, records
	                              of a magic-2 entry, one by one; NULL
	                              for a record's null value */
	uint32_t payload_len;
	/* A record's (format.h's klog_msg_t): key NULL and key_len -1,
	 * timestamp KLOG_NO_TIMESTAMP and no headers for the others. */
	const uint8_t *key;
	int32_t key_len;
	int64_t timestamp;
	const uint8_t *headers;    /* record.h's header bytes */
	size_t headers_len;
	uint32_t header_count;
} klog_salvaged_t;

/* Return 0 to go on, non-zero to stop (returned as it is). */
typedef int klog_salvage_fn(void *arg, const klog_salvaged_t *m);

typedef struct klog_salvage_info {
	size_t files;
	uint64_t messages;
	uint64_t skipped;          /* bytes in no valid entry */
	uint64_t zeros;            /* of those, zero bytes: what a write
	                              the disk never got reads back as */
} klog_salvage_info_t;

/*
 * Every salvage file of the partition directory dir, in name order (so in
 * offset order): fn for each valid message.  No salvage file is 0 with
 * info->files 0.  -KLOG_ENOENT if dir is missing, -KLOG_EIO for a file
 * that cannot be read (err naming it).
 */
int klog_salvage_read(const char *dir, klog_salvage_fn *fn, void *arg,
    klog_salvage_info_t *info, klog_err_t *err);

#endif
