/*
 * The producer's state, shared by its three files, bottom up:
 * lib/client/sendq.c (batches and the links' queues), lib/client/partmap.c
 * (where the partitions go: topic creation, mapping, relocation to new
 * leaders) and lib/client/producer.c (the links' I/O, acknowledgements,
 * the public calls).  Private to those files.
 */
#ifndef KLOG_PRODUCER_IMPL_H
#define KLOG_PRODUCER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/client/client.h"
#include "klog/client/producer.h"
#include "klog/storage/names.h"
#include "klog/storage/record.h"

/* Frames kept for reuse: enough for every request of a full queue of
 * one-record batches, and at most POOL_BYTES of buffers (a 1 MiB batch
 * would otherwise keep thousands of them). */
#define POOL_MAX 4096
#define POOL_BYTES (16u << 20)


/* What a batch's set holds: plain messages (magic 0, gzip-wrapped when
 * asked), or one magic-2 entry whose records have no timestamp, or one
 * whose records all have one (a batch's records share its first
 * timestamp, or none). */
enum producer_kind {
	PRODUCER_PLAIN,
	PRODUCER_RECORDS,
	PRODUCER_STAMPED,
};

/* One batch: a whole PRODUCE frame for one partition. */
struct req {
	klog_buf_t buf;
	size_t hdr_len;          /* bytes before the message set */
	int kind;                /* enum producer_kind */
	klog_batch_builder_t bb; /* a magic-2 entry's, while open */
	int index;               /* partition index */
	uint32_t records;
	uint64_t first_seq;      /* klog_producer_send() number of its first */
	uint64_t payload_bytes;
	int32_t id;
	int64_t born_ms;         /* for linger */
	int64_t sent_ms;         /* last time it was completely written */
	int sent;                /* written at least once */
};

/* The connection to one broker and the requests queued for it. */
struct link {
	klog_client_addr_t addr;
	klog_client_t *c;        /* NULL while not connected */
	struct req **q;          /* q[head..tail): oldest first */
	size_t head, tail, cap;
	size_t wi;               /* next request to write */
	size_t woff;             /* bytes of q[wi] already written */
	int64_t down_since;      /* first failure of this outage, or 0 */
	int64_t retry_at;
	int backoff_ms;
	int connected_once;
	char why[512];           /* the last connection error */
};

struct klog_producer {
	klog_producer_config_t cfg;
	klog_discovery_t *d;     /* borrowed */
	char topic[KLOG_TOPIC_MAX + 1];
	int npart;
	int32_t *part_num;       /* broker-side partition of each index */
	int *part_link;          /* link of each index */
	struct req **open;       /* open batch of each index, or NULL */
	size_t nopen;
	int sticky;              /* round robin: the current partition */
	struct link *links;
	int nlinks, links_cap;
	int wake_fd;             /* -1, or also waited for by poll */
	size_t set_cap;          /* message-set bytes per batch */
	size_t batch_hint;       /* the biggest batch sealed, bytes: a new
	                            one's buffer starts that big */
	size_t records_cap;      /* the same for a magic-2 entry */
	int32_t next_id;
	size_t queued;           /* sealed requests not yet done */
	size_t queued_bytes;
	struct req *pool[POOL_MAX];
	size_t npool;
	size_t pool_bytes;         /* capacity of the pooled buffers */
	klog_buf_t head;           /* a frame's head, partition 0 */
	klog_producer_stats_t st;
	char error[512];
	/*
	 * Following leaders (replicated topics; discovery.h): a retryable
	 * answer or a lost leader asks for a relocation, done by poll when
	 * due, with backoff; fail_since[i] is when index i was first refused
	 * with a retryable error since its last acknowledgement.
	 */
	int replicated;          /* the topic's partitions have leaders */
	int limbo;               /* the link of partitions without a leader
	                            (no address, never connected), or -1 */
	int64_t *fail_since;     /* per index; 0: not failing */
	int reloc_pending;
	int64_t reloc_at;        /* not before */
	int reloc_backoff_ms;
	int64_t reloc_fail_since;/* relocations failing since, or 0 */
	int reloc_code;          /* the last cause, for giving up */
	char reloc_why[512];
	/* Idempotence (the broker's INIT_PRODUCER): the id and epoch every
	 * entry carries, KLOG_NO_PRODUCER without; each index's next
	 * sequence (seq_cap entries, grown as sealed batches need). */
	int64_t pid;
	int16_t epoch;
	int32_t *seq;
	int seq_cap;
};

/* sendq.c */
struct req *producer_req_new(klog_producer_t *p, int index, int64_t now);
void producer_req_free(struct req *r);
/* Keep r's frame for reuse, or free it. */
void producer_req_recycle(klog_producer_t *p, struct req *r);
int producer_link_push(struct link *l, struct req *r);
/* Number a finished frame and queue it on its partition's link. */
int producer_enqueue(klog_producer_t *p, struct req *r);
/* Close index's open batch and queue it. */
int producer_seal(klog_producer_t *p, int index);
void producer_tell_done(klog_producer_t *p, const struct req *r,
    int16_t error, int ok, int64_t offset);
void producer_want_relocate(klog_producer_t *p, int code, const char *why);
void producer_skip_limbo(klog_producer_t *p);

/* partmap.c */
int producer_create_topic(klog_producer_t *p, klog_err_t *err);
int producer_map_leaders(klog_producer_t *p, int n, klog_err_t *err);
int producer_relocate(klog_producer_t *p, int64_t now, klog_err_t *err);
/* Ask for the producer's id (idempotence); see partmap.c. */
int producer_init_id(klog_producer_t *p, klog_err_t *err);

#endif
