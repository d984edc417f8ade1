/*
 * The producer: records in, acknowledged PRODUCE requests out.
 *
 * Records are encoded straight into the request frame of an open batch (one
 * batch = one request = one partition), so a record costs one copy and one
 * CRC.  A batch is sealed when it holds batch_records records or
 * batch_bytes bytes, when it is linger_ms old, or on klog_producer_flush().
 * Sealed requests go out on the broker's connection with up to max_inflight
 * of them awaiting acknowledgement at once (pipelining); they are kept until
 * acknowledged, and after a lost connection the producer reconnects with
 * backoff and sends every unacknowledged request again, in order
 * (at-least-once: a request the broker appended but could not acknowledge
 * is appended twice).  No progress for retry_for_ms ends it with
 * -KLOG_ECONN or -KLOG_ETIMEDOUT.
 *
 * Partitions: a fixed one; a key's (FNV-1a 32-bit of the key bytes modulo
 * the partition count: klog_producer_hash()); or, without either,
 * batch-sticky round robin: a whole batch goes to one partition and the next
 * batch to the next one, which keeps each partition's records in order.  A
 * topic that does not exist yet is created by the broker on the first
 * produce with its default partition count: klog_producer_open() sends an
 * empty request to every place the discovery locates for it (partition 0
 * of one broker standalone, of every live broker in a cluster) and asks
 * for the count again.
 *
 * In a cluster the partitions can change under the producer: after the
 * discovery says so, klog_producer_refresh() maps the partitions again and
 * moves what was queued for a broker that is gone (acknowledged or not) to
 * the partitions that remain, re-encoded: at-least-once again.
 *
 * Replicated topics (discovery.h: partitions with a leader): an answer of
 * NOT_LEADER, NOT_ENOUGH_REPLICAS or NOT_ENOUGH_REPLICAS_AFTER_APPEND (from
 * any broker) is not a refusal but a retry: the connection is dropped, the
 * discovery invalidated and asked again at the next poll (with backoff
 * from 50 ms doubling to 2 s, reset by an acknowledgement), and every
 * request of the partition not yet acknowledged is sent again to where the
 * partition is now, after the ones before it.  A lost connection to a
 * replicated partition's broker asks the discovery again the same way.
 * A partition without a leader (-KLOG_ENOTLEADER from the discovery: an
 * election), at open too, keeps its requests waiting (in a link that never
 * connects) while the others are written to; round robin skips it.
 * At-least-once: a request appended before it could be acknowledged, or
 * pipelined behind a refused one and appended, is appended twice; each
 * partition's records are in order counting each record's last copy.  A
 * partition refused for retry_for_ms since its last acknowledgement, or
 * relocations failing that long, ends it with the last cause:
 * -KLOG_ENOTLEADER, -KLOG_ENOREPLICAS, -KLOG_ECONN, ...
 *
 * acks 0: the broker does not answer; a record counts as done once its
 * request was written to the socket.
 *
 * Single-threaded and non-blocking apart from connecting: the caller feeds
 * klog_producer_send() and drives I/O with klog_producer_poll(), which can
 * also wait for the caller's own input descriptor.
 */
#ifndef KLOG_PRODUCER_H
#define KLOG_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/client/discovery.h"
#include "klog/storage/record.h"

typedef struct klog_producer klog_producer_t;
typedef struct klog_producer_done klog_producer_done_t;

typedef struct klog_producer_config {
	const char *topic;          /* borrowed for the producer's life */
	int partition;              /* >= 0 fixed; -1 keys or round robin */
	int acks;                   /* KLOG_ACKS_NONE, _LEADER or _ALL */
	int timeout_ms;             /* broker-side wait for acks all */
	int codec;                  /* KLOG_CODEC_* (codec.h) */
	int unkeyed_partitions;     /* klog_producer_send_record()'s keys
	                               are stored but do not choose the
	                               partition: requests keep their records
	                               consecutive (a mirror's bookmark) */
	uint32_t batch_records;     /* default 1000 */
	size_t batch_bytes;         /* message-set bytes; default 1 MiB */
	int linger_ms;              /* default 5 */
	int max_inflight;           /* unacknowledged requests; default 1024 */
	size_t max_message;         /* largest payload; default 1000000 */
	int connect_timeout_ms;     /* default 5000 */
	int64_t retry_for_ms;       /* default 30000 */
	/*
	 * Idempotence: at open, ask a broker for a producer id and epoch
	 * (INIT_PRODUCER), and send every record in a magic-2 entry carrying
	 * them with its partition's sequence (plain records too, and
	 * klog_producer_send()'s keys are stored).  A batch's sequence is
	 * taken when it is sealed and its retries are the same bytes, so a
	 * broker that appended a batch whose acknowledgement was lost answers
	 * its retry with the first copy's offset instead of appending it
	 * again.  At most 5 requests a link are then in flight (a broker
	 * remembers a producer's last five batches of a partition).  A
	 * refused sequence (OUT_OF_ORDER_SEQUENCE_NUMBER,
	 * UNKNOWN_PRODUCER_ID, INVALID_PRODUCER_EPOCH) fails its batch as
	 * any refusal does.  A broker without INIT_PRODUCER fails the open
	 * (-KLOG_EUNSUPPORTED, its UNKNOWN_API).  Default off.
	 */
	int idempotent;
	/* Called once for each request done (see klog_producer_done_t);
	 * NULL: not called. */
	void (*done)(void *arg, const klog_producer_done_t *d);
	void *arg;                  /* done's */
} klog_producer_config_t;

/*
 * A request done: acknowledged (ok 1; acks 0: written), or refused or
 * dropped (ok 0: never to be).  Its records have send numbers (1, 2, ...
 * in klog_producer_send() order) from first; records of them,
 * consecutive unless keys spread records over several open batches at
 * once.  Views valid during the call.
 */
struct klog_producer_done {
	uint64_t first;
	uint32_t records;
	int ok;
	int16_t error;              /* the broker's refusal (KLOG_WIRE_*), or
	                               KLOG_WIRE_NONE */
	int32_t partition;          /* its partition index */
	int64_t offset;             /* acknowledged: the set's first offset
	                               (-1 with acks 0, or if not) */
	const uint8_t *set;         /* the message set sent */
	size_t set_len;
};

typedef struct klog_producer_stats {
	uint64_t records;       /* accepted by klog_producer_send() */
	uint64_t acked;         /* acknowledged (acks 0: written) */
	uint64_t failed;        /* refused by the broker */
	uint64_t too_large;     /* of those, in requests refused for a
	                           record over the broker's limit */
	uint64_t denied;        /* of those, refused by the broker's ACLs
	                           (TOPIC_AUTHORIZATION_FAILED) */
	uint64_t bytes;         /* payload bytes acknowledged */
	uint64_t requests;      /* requests acknowledged (acks 0: written) */
	uint64_t resent;        /* requests sent again after a reconnect */
	uint64_t reconnects;
} klog_producer_stats_t;

void klog_producer_config_default(klog_producer_config_t *cfg);

/* FNV-1a, 32-bit: h = 2166136261; for each byte: h ^= b, h *= 16777619. */
uint32_t klog_producer_hash(const void *key, size_t len);

/*
 * Look the topic up through d (borrowed; it must outlive the producer),
 * creating it if needed (see above).  Errors: -KLOG_ECONN/-KLOG_ETIMEDOUT
 * (no broker), -KLOG_ETOPIC, -KLOG_ENOTOPIC (not created),
 * -KLOG_ENOPARTITION (a fixed partition the topic lacks).  *out is owned
 * by the caller: klog_producer_close().
 */
int klog_producer_open(klog_discovery_t *d, const klog_producer_config_t *cfg,
    klog_producer_t **out, klog_err_t *err);

/* 1 with the producer's id and epoch (idempotent), or 0. */
int klog_producer_id(const klog_producer_t *p, int64_t *pid, int16_t *epoch);

/* Partition count of the topic. */
int klog_producer_partitions(const klog_producer_t *p);

/*
 * Queue one record (copied).  key may be NULL (no key).  Never blocks:
 * callers check klog_producer_busy() and poll.  -KLOG_ETOOBIG if len is
 * over max_message (nothing queued); -KLOG_ENOMEM.
 */
int klog_producer_send(klog_producer_t *p, const void *payload, size_t len,
    const void *key, size_t keylen);

/* A record with what a magic-2 entry carries (record.h): the builder's
 * own type, so that it goes to the batch as it came. */
typedef klog_record_in_t klog_producer_rec_t;

/*
 * Queue one record (copied) with its key (stored, and hashed for the
 * partition as klog_producer_send() does), timestamp and headers.  A
 * batch of such records is one magic-2 entry (compressed whole with the
 * codec), up to max_message bytes; a record with none of them and a value
 * is sent as klog_producer_send() sends it (a plain message, 9 bytes of
 * overhead), unless the codec is snappy, lz4 or zstd, which only a
 * magic-2 entry carries, or the batch open where it goes holds records
 * (it joins them, without a key).  A batch holds plain messages or
 * records, and records with timestamps or without: a record of another
 * kind than the open batch's seals it.  -KLOG_ETOOBIG if the value is
 * over max_message or the record cannot fit an entry under it;
 * -KLOG_ENOMEM.
 */
int klog_producer_send_record(klog_producer_t *p,
    const klog_producer_rec_t *rec);

/* Seal every open batch, so it goes out at the next poll. */
void klog_producer_flush(klog_producer_t *p);

/* Enough is queued that the caller should poll before sending more. */
int klog_producer_busy(const klog_producer_t *p);

/* Nothing open, queued or awaiting acknowledgement. */
int klog_producer_done(const klog_producer_t *p);

enum klog_producer_ready {
	KLOG_PRODUCER_INPUT = 1,    /* poll's fd is readable (or at EOF) */
	KLOG_PRODUCER_WOKEN = 2,    /* the klog_producer_wake_on() fd is */
};

/*
 * Do the I/O that can be done and wait up to timeout_ms (-1: no limit) for
 * more: acknowledgements, writable sockets, reconnect and linger deadlines,
 * or, if fd >= 0, fd becoming readable.  Returns KLOG_PRODUCER_INPUT if fd
 * is readable (or at EOF), with KLOG_PRODUCER_WOKEN or'ed in if the wake
 * fd is, 0 otherwise (a signal also returns 0); on giving up, -KLOG_ECONN
 * or -KLOG_ETIMEDOUT, and -KLOG_EPROTO for a broker that answers nonsense.
 */
int klog_producer_poll(klog_producer_t *p, int fd, int timeout_ms,
    klog_err_t *err);

/* Flush and poll until done, or until giving up; 0 or as poll.  The wake
 * fd is not waited for meanwhile. */
int klog_producer_drain(klog_producer_t *p, klog_err_t *err);

/*
 * Also wait for fd (a ZooKeeper session's event fd) in klog_producer_poll(),
 * which returns KLOG_PRODUCER_WOKEN while it is readable: the caller drains
 * it.  -1 (the default) waits for nothing more.
 */
void klog_producer_wake_on(klog_producer_t *p, int fd);

/*
 * Ask the discovery (borrowed at open) for the partitions again and use
 * its answer: open batches are sealed, the partition map replaced, and the
 * requests queued for a broker no partition maps to any more are moved to
 * index (old index mod count), or to the fixed partition.  Keys hash over
 * the new count from then on.  If the topic has no partition now
 * (-KLOG_ENOTOPIC), the fixed partition is gone (-KLOG_ENOPARTITION) or
 * the discovery fails, nothing changes: queued requests wait, within
 * retry_for, for brokers to come back.  For a replicated topic the
 * requests of a partition whose leader moved go to the new leader; those
 * of a partition without a leader wait, and -KLOG_ENOTLEADER is returned
 * once the others moved (ask again at the next event).
 */
int klog_producer_refresh(klog_producer_t *p, klog_err_t *err);

void klog_producer_stats(const klog_producer_t *p, klog_producer_stats_t *st);

/* The first error the broker answered, e.g. "topic "x" partition 0:
 * MESSAGE_TOO_LARGE", or NULL. */
const char *klog_producer_error(const klog_producer_t *p);

void klog_producer_close(klog_producer_t *p);

#endif
