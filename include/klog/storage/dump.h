/*
 * klog-dump's logic: walk segment files and partition directories, and
 * report every message and every problem found as events to a callback.
 * Renderers (lib/storage/dumpfmt.c) turn events into the tool's text lines
 * and NDJSON records.  Nothing here prints, and files are opened O_RDONLY
 * only.
 *
 * A file is read in bounded chunks (4 MiB by default); an entry cut by the
 * end of a chunk is carried over to the next one, and the chunk buffer grows
 * only as far as the largest single entry.  Each call allocates one chunk
 * buffer (and an inflate buffer per gzip wrapper or compressed magic-2
 * entry under KLOG_DUMP_DEEP), never one per message.
 *
 * Events for one file, in order:
 *
 *   FILE  (MESSAGE | UNCHECKED | CORRUPT)*  [CORRUPT | PARTIAL]  END
 *
 * and, in a partition directory, a GAP before the FILE of a segment that
 * does not start where the previous one ended.  A CRC mismatch is a MESSAGE
 * with msg->valid == 0 and the walk goes on; an entry whose length, magic or
 * codec is impossible is a CORRUPT after which the rest of the file cannot
 * be framed and is not read.  A gzip wrapper that does not inflate, or whose
 * inner set is malformed, is a CORRUPT about that wrapper only (under
 * KLOG_DUMP_DEEP), and the walk goes on after it.
 *
 * A magic-2 entry (record.h) is a MESSAGE whose payload is its body; under
 * KLOG_DUMP_DEEP its records follow as MESSAGEs of depth 1, as a wrapper's
 * messages do, and records that do not decompress or read are a CORRUPT
 * about the entry.  One whose batch's fields the iterator refuses (its
 * attrs byte, lastOffsetDelta, record count, codec, a transaction's bits)
 * is still framed by its length: a MESSAGE, then a CORRUPT about it, and
 * the walk goes on after it.
 */
#ifndef KLOG_DUMP_H
#define KLOG_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/format.h"

#define KLOG_DUMP_CHUNK ((size_t)4 << 20)

enum klog_dump_flags {
	KLOG_DUMP_DEEP = 1 << 0,  /* open gzip wrappers and magic-2 entries,
	                             report inner messages and records */
};

typedef struct klog_dump_opts {
	unsigned flags;       /* KLOG_DUMP_* */
	int64_t base;         /* base offset of a FILE argument; -1: from its
	                         name, or 0 when the name is not a segment's */
	int64_t start;        /* first offset to report, an entry boundary;
	                         -1: from the beginning */
	int64_t count;        /* top-level entries to report per file; -1: all */
	size_t chunk;         /* read size; 0: KLOG_DUMP_CHUNK */
	size_t max_inflate;   /* per wrapper; 0: the iterator's default */
} klog_dump_opts_t;

void klog_dump_opts_default(klog_dump_opts_t *o);

enum klog_dump_kind {
	KLOG_DUMP_FILE = 1,   /* a file is about to be read */
	KLOG_DUMP_MESSAGE,    /* one message, valid or not (msg->valid) */
	KLOG_DUMP_UNCHECKED,  /* a wrapper DEEP cannot open (snappy) */
	KLOG_DUMP_CORRUPT,    /* an entry that cannot be read */
	KLOG_DUMP_PARTIAL,    /* the file ends inside an entry */
	KLOG_DUMP_GAP,        /* a segment does not start where the previous
	                         one ended (a gap, or an overlap) */
	KLOG_DUMP_END,        /* the file is done: summary */
	KLOG_DUMP_EPOCH,      /* a partition directory's leader epoch
	                         (epochs.h): epoch, from offset on */
};

/* What was read of one file. */
typedef struct klog_dump_summary {
	int64_t first_offset;   /* first entry reported (the base if none) */
	int64_t next_offset;    /* just after the last whole entry read */
	uint64_t entries;       /* top-level entries */
	uint64_t messages;      /* entries, with each wrapper that DEEP opened
	                           counted as its inner messages */
	uint64_t entry_bytes;   /* bytes of top-level entries, length
	                           prefixes included */
	uint64_t payload_bytes; /* bytes of top-level payloads */
	uint64_t batches;       /* magic-2 entries */
	uint64_t records;       /* their records, as their headers count
	                           them (CRC-32C matching) */
	uint64_t codecs[KLOG_CODEC_MAX + 1]; /* top-level entries per codec,
	                           by Kafka's numbers (codec.h) */
	uint64_t crc_errors;    /* messages (inner ones too) with a bad CRC */
	uint64_t corrupt;       /* CORRUPT events */
	uint64_t unchecked;     /* UNCHECKED events */
	int64_t partial_bytes;  /* bytes of a cut entry at the end, or 0 */
} klog_dump_summary_t;

/*
 * One event.  Pointers are valid during the callback only.  offset is a
 * partition offset (base + byte position in the file; for an inner message
 * its wrapper's); the byte position in the file is offset - base.
 */
typedef struct klog_dump_event {
	int kind;                   /* KLOG_DUMP_* */
	const char *file;           /* the path read */
	int64_t base;               /* the file's base offset */
	int named;                  /* the base came from the file's name (or
	                               from a directory listing) */
	int last;                   /* the last segment of its partition; a
	                               FILE argument always is */
	int64_t offset;             /* the entry (or segment) concerned */
	const klog_msg_t *msg;      /* MESSAGE; also CORRUPT and UNCHECKED
	                               about a wrapper or a magic-2 entry:
	                               the entry */
	const char *what;           /* CORRUPT, UNCHECKED: why (static) */
	int64_t size;               /* FILE: the file's size (-1 if not a
	                               regular file); PARTIAL: bytes present;
	                               GAP: where the previous segment ended */
	int64_t need;               /* PARTIAL, CORRUPT (top level): the
	                               entry's whole size by its length field,
	                               or -1 when the length is cut */
	const klog_dump_summary_t *summary; /* END */
	int32_t epoch;              /* EPOCH */
} klog_dump_event_t;

/* Return 0 to go on; a negative code stops the walk and is returned. */
typedef int (*klog_dump_cb)(void *arg, const klog_dump_event_t *ev);

/*
 * Dump path: a segment file (or any file holding a message set), or a
 * partition directory, whose segments are read in base-offset order and
 * checked for contiguity.  Files in a directory that are not named like
 * segments are skipped; a replica's leader epochs (its `leader-epochs`)
 * come first as EPOCH events, and an epoch that does not start on an
 * entry of the walk is a CORRUPT event at its start.  With o->start, the
 * file or partition must contain that offset (-KLOG_ERANGE) and it must
 * begin an entry (-KLOG_ENOTBOUNDARY); earlier segments are not read.
 *
 * Returns 0 once everything was read: problems in the data are events, not
 * errors.  Otherwise, with err naming the file: -KLOG_ENOENT, -KLOG_EIO
 * (and other errno codes) when a file or directory cannot be opened or read,
 * -KLOG_EINVAL for a directory without segments, -KLOG_ERANGE,
 * -KLOG_ENOTBOUNDARY, -KLOG_ENOMEM, or what the callback returned.
 */
int klog_dump_path(const char *path, const klog_dump_opts_t *o,
    klog_dump_cb cb, void *arg, klog_err_t *err);

/*
 * Whether ev reports a problem with the data: a CRC mismatch, a CORRUPT, a
 * GAP, or a PARTIAL, except a PARTIAL in the last segment of a partition when
 * allow_partial is set (that is what a crash leaves before recovery).
 */
int klog_dump_is_problem(const klog_dump_event_t *ev, int allow_partial);

/*
 * Append what a problem event says, without the file name and without a
 * newline: "offset 1234 (byte 0x4d2): crc mismatch (stored 0x..., computed
 * 0x...)".  Also describes UNCHECKED events.
 */
void klog_dump_describe(klog_buf_t *b, const klog_dump_event_t *ev);

/*
 * Append a MESSAGE event as one text line:
 *   offset=0 pos=0 size=4 magic=0 codec=none crc=0xd87f7e0c
 *   computed=0xd87f7e0c status=ok payload="test"
 * (one line), with inner messages indented by two spaces.  The payload shows
 * its first preview bytes, escaped C-style, "..." after the closing quote if
 * there is more; preview 0 leaves it out.  A magic-2 entry shows its
 * batch's fields (crc32c=, records=, timestamp_type=, first_timestamp=,
 * max_timestamp=, and producer_id=, producer_epoch=, base_sequence= when
 * it has a producer id) instead of a payload; a record shows its Kafka
 * offset, timestamp (and time= in ISO 8601 UTC), key and headers (cut and
 * left out as payloads are) and its value (payload=null when null):
 *     offset=14 kafka_offset=15 pos=14 size=2 magic=2
 *     timestamp=1700000000000 time=2023-11-14T22:13:20.000Z key="k"
 *     headers="name=value,name2" payload="v"
 */
void klog_dump_render_text(klog_buf_t *b, const klog_dump_event_t *ev,
    size_t preview);

/* Append a MESSAGE event as one NDJSON record (see klog-dump(1)). */
void klog_dump_render_json(klog_buf_t *b, const klog_dump_event_t *ev);

/* "epoch=E start=S" or {"epoch":E,"start":S}, and a newline. */
void klog_dump_render_epoch(klog_buf_t *b, const klog_dump_event_t *ev,
    int json);

/* Append an END event's summary as one text line or NDJSON record. */
void klog_dump_render_summary(klog_buf_t *b, const klog_dump_event_t *ev,
    int json);

#endif
