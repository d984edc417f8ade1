/*
 * The consumer: FETCH requests over every partition of a topic (or some),
 * messages out one at a time, CRCs checked, gzip wrappers opened, the
 * records of magic-2 entries handed out with their keys, timestamps and
 * headers.
 *
 * One fetch request per broker covers all its partitions, long-polling
 * (max_wait_ms, min_bytes).  As soon as a response is in, the next fetch is
 * sent (the offsets it needs come from the entries' length fields alone),
 * so the broker prepares the next batch while the caller goes through this
 * one; messages are views into the response buffer, never copied.
 *
 * KLOG_CONSUMER_LAST, the last N entries (kcat's -o -N): the format has no
 * back pointers, so klog_consumer_open() counts entries forwards from the
 * newest segment's base (OFFSETS lists the bases) to the end, reading
 * only their length fields and keeping the last N starts, and steps back
 * a segment while those hold fewer than N (at most the 1,024 segments
 * OFFSETS lists; then it starts at the oldest of them).  So it reads the
 * newest segments that together hold N entries, up to a whole segment
 * more than those N, and keeps 8 bytes per start, at most N of them.  A
 * compressed wrapper counts as one entry.
 *
 * Offsets are byte positions (format.h).  Each partition has a position:
 * the next offset of the last message handed out (or the start offset),
 * which is what an offset file stores to resume without loss.  Inside a
 * gzip wrapper every message but the last has the wrapper's offset as next
 * offset, so resuming from one re-reads the wrapper (at-least-once); the
 * records of a magic-2 entry likewise (offset W, the last one's next
 * offset past the entry).
 *
 * What the broker sends is checked: a partial entry at the end of a
 * response is normal (fetched again); an entry larger than the fetch size
 * grows the fetch size, up to fetch_max_bytes; a CRC mismatch or a broken
 * entry is -KLOG_ECORRUPT naming topic, partition and offset.
 *
 * Replicated topics (discovery.h): a partition answered NOT_LEADER, or
 * whose broker's connection is lost, is located again through the
 * discovery (invalidated first; backoff from 50 ms doubling to 2 s, reset
 * when a lost partition's leader answers, cut short by
 * klog_consumer_refresh() when the discovery's owner saw news) and read on
 * at its new leader from the position it had: every replica holds the same
 * bytes at the same offsets.  A partition without a leader
 * (-KLOG_ENOTLEADER: an election) waits; klog_consumer_open() waits for
 * one too.  A partition that no leader answered for retry_for_ms since it
 * was lost ends it with the last cause (-KLOG_ENOTLEADER, -KLOG_ECONN),
 * however well the other partitions are read.
 */
#ifndef KLOG_CONSUMER_H
#define KLOG_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/client/discovery.h"
#include "klog/storage/format.h"

typedef struct klog_consumer klog_consumer_t;

enum klog_consumer_start {
	KLOG_CONSUMER_END = -1,        /* the flushed end at start */
	KLOG_CONSUMER_BEGINNING = -2,  /* the first retained offset */
	KLOG_CONSUMER_TIME = -3,       /* start_time_ms, segment granular */
	KLOG_CONSUMER_LAST = -4,       /* the last last_n entries */
};

/* What to do when a position is no longer in the log (retention). */
enum klog_consumer_reset {
	KLOG_CONSUMER_RESET_EARLIEST = 0,
	KLOG_CONSUMER_RESET_LATEST,
	KLOG_CONSUMER_RESET_FAIL,
};

/* A start offset for one partition that overrides the default. */
typedef struct klog_consumer_pos {
	int32_t partition;   /* index */
	int64_t offset;
} klog_consumer_pos_t;

typedef struct klog_consumer_config {
	const char *topic;
	const int32_t *partitions;  /* indexes to read; NULL: all */
	size_t npartitions;
	int64_t start;              /* KLOG_CONSUMER_* or a byte offset */
	int64_t start_time_ms;      /* for KLOG_CONSUMER_TIME */
	int64_t last_n;             /* for KLOG_CONSUMER_LAST, >= 1 */
	const klog_consumer_pos_t *starts;  /* per-partition overrides */
	size_t nstarts;
	int exit_at_end;            /* stop at each partition's end at open */
	int reset;                  /* KLOG_CONSUMER_RESET_* */
	int32_t fetch_bytes;        /* per partition; default 1 MiB */
	int32_t fetch_max_bytes;    /* growth limit; default 64 MiB */
	int max_wait_ms;            /* long poll; default 1000 */
	int min_bytes;              /* default 1 */
	int check_crc;              /* default 1 */
	int skip_corrupt;           /* a message whose CRC does not match is
	                               passed over with a notice, not an
	                               error (klog-consume --skip-corrupt) */
	int connect_timeout_ms;     /* default 5000 */
	int64_t retry_for_ms;       /* reconnecting; default 30000 */
} klog_consumer_config_t;

/* One message handed out; views valid until the next klog_consumer_next. */
typedef struct klog_consumer_msg {
	int32_t partition;          /* index */
	int64_t offset;
	int64_t next_offset;
	const uint8_t *payload;     /* NULL: a null value (payload_len 0) */
	uint32_t payload_len;
	/* A magic-2 record's (format.h's klog_msg_t); a plain message has
	 * key NULL (key_len -1), timestamp KLOG_NO_TIMESTAMP, no headers. */
	const uint8_t *key;
	int32_t key_len;
	int64_t timestamp;
	const uint8_t *headers;     /* record.h's header bytes */
	size_t headers_len;
	uint32_t header_count;
	const uint8_t *batch;       /* a record's entry body, for
	                               klog_batch_read() (its producer id);
	                               NULL for a plain message */
	uint32_t batch_len;
} klog_consumer_msg_t;

enum klog_consumer_event {
	KLOG_CONSUMER_BATCH = 0,    /* a response is used up, or a signal */
	KLOG_CONSUMER_MSG = 1,      /* *m is a message */
	KLOG_CONSUMER_DONE = 2,     /* exit_at_end: every partition at end */
	KLOG_CONSUMER_NOTICE = 3,   /* err holds a line worth telling */
};

void klog_consumer_config_default(klog_consumer_config_t *cfg);

/*
 * Find the partitions through d (borrowed; it must outlive the consumer),
 * connect and resolve every start offset (and end offset, with
 * exit_at_end).  -KLOG_ENOTOPIC, -KLOG_ENOPARTITION, -KLOG_ECONN,
 * -KLOG_ETIMEDOUT, ...  *out is owned by the caller: klog_consumer_close().
 */
int klog_consumer_open(klog_discovery_t *d, const klog_consumer_config_t *cfg,
    klog_consumer_t **out, klog_err_t *err);

/*
 * The next event (see enum klog_consumer_event), waiting for the broker if
 * needed.  KLOG_CONSUMER_BATCH is where a caller flushes its output (and
 * looks at its signal flags: an interrupted wait returns it too).  Errors:
 * -KLOG_ECORRUPT, -KLOG_ENOTBOUNDARY, -KLOG_ERANGE (reset "fail"),
 * -KLOG_ETOOBIG (a message over fetch_max_bytes), -KLOG_ECONN /
 * -KLOG_ETIMEDOUT (gave up reconnecting), others from the broker; err says
 * which topic, partition and offset.
 */
int klog_consumer_next(klog_consumer_t *c, klog_consumer_msg_t *m,
    klog_err_t *err);

/*
 * Also watch fd (the caller's stdout) while waiting for the broker: once
 * it reports an error or a hang-up, as the write end of a pipe does when
 * its reader is gone, klog_consumer_next() returns -KLOG_ECLOSED.  That
 * lets a follower piped into `head` end although it has nothing to write.
 * -1 (the default) watches nothing.
 */
void klog_consumer_watch(klog_consumer_t *c, int fd);

/*
 * Also wait for fd (a ZooKeeper session's event fd) to become readable:
 * klog_consumer_next() then returns KLOG_CONSUMER_BATCH, and the caller
 * drains fd before calling it again (or it returns at once again).  -1
 * (the default) waits for nothing more.
 */
void klog_consumer_wake_on(klog_consumer_t *c, int fd);

/*
 * The discovery's answers may have changed (its owner took a ZooKeeper
 * event that said so: klog_zkdiscovery_drain()): the partitions waiting to
 * be located, for a new leader or a session of the owner's that expired,
 * are asked for again at the next klog_consumer_next(), without waiting
 * out the backoff.  The others are read on where they are: a leader that
 * is no longer one answers NOT_LEADER.
 */
void klog_consumer_refresh(klog_consumer_t *c);

/* The partitions read: count, and index i's partition number and
 * position. */
size_t klog_consumer_count(const klog_consumer_t *c);
int32_t klog_consumer_partition(const klog_consumer_t *c, size_t i);
int64_t klog_consumer_position(const klog_consumer_t *c, size_t i);
/* With exit_at_end: the end partition i had at open. */
int64_t klog_consumer_end(const klog_consumer_t *c, size_t i);

void klog_consumer_close(klog_consumer_t *c);

/* Called by klog_consumer_list() per partition; non-zero stops. */
typedef int (*klog_consumer_list_fn)(void *arg, const char *topic,
    int32_t index, int64_t earliest, int64_t latest);

/*
 * The earliest and the latest offset of every partition of every topic d
 * knows (of topic alone, if not NULL), in topic order, each asked of the
 * partition's broker with a connect and an OFFSETS call that take up to
 * timeout_ms each.  The first failed question ends it with its error;
 * -KLOG_ENOTOPIC if topic has no partition.
 */
int klog_consumer_list(klog_discovery_t *d, const char *topic, int timeout_ms,
    klog_consumer_list_fn fn, void *arg, klog_err_t *err);

#endif
