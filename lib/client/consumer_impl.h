/*
 * What lib/client/consumer.c (fetching, following leaders),
 * lib/client/handout.c (handing the fetched messages out, --skip-corrupt)
 * and lib/client/startpos.c (where each partition starts: -o, offset
 * files, -N, times, --reset) share: the consumer's state.  Private to
 * those three files.
 */
#ifndef KLOG_CONSUMER_IMPL_H
#define KLOG_CONSUMER_IMPL_H

#include <stdint.h>

#include "klog/client/client.h"
#include "klog/client/consumer.h"
#include "klog/storage/names.h"

#define LAST_SEGMENTS 1024        /* bases -o -N asks for: OFFSETS' most */

struct cpart {
	int32_t index;
	int32_t partition;      /* the broker's number for it */
	int link;
	int64_t fetch_offset;   /* where the next fetch starts */
	int64_t position;       /* next offset of the last message out */
	int64_t end;            /* exit_at_end: the end at open */
	int32_t fetch_bytes;
	int64_t asked;          /* offset asked by the fetch in flight */
	int done;               /* exit_at_end and fetched up to end */
	int lost;               /* replicated: its leader is to be found
	                           again; not fetched meanwhile */
	int64_t lost_since;     /* lost and no answer of a leader since, or
	                           0: --retry-for runs from here */
	int64_t skip_to;        /* --skip-corrupt found its footing here:
	                           bytes before it fetched again are passed
	                           over */
};

struct clink {
	klog_client_addr_t addr;
	klog_client_t *c;
	int32_t id;             /* the fetch in flight, or 0 */
	int64_t sent_ms;
	int broken;             /* a write failed: close once idle */
	int64_t down_since;
	int64_t retry_at;
	int backoff_ms;
	char why[512];
};

struct klog_consumer {
	klog_consumer_config_t cfg;
	char topic[KLOG_TOPIC_MAX + 1];
	struct cpart *parts;
	size_t nparts;
	struct clink *links;
	int nlinks, links_cap;
	/*
	 * Following leaders (replicated topics; discovery.h): NOT_LEADER or a
	 * lost connection marks partitions lost; klog_consumer_next() locates
	 * them again when due, with backoff, and they go on from their fetch
	 * offset (the same bytes at the same offsets on every replica).
	 */
	klog_discovery_t *d;          /* borrowed */
	int replicated;
	int reloc_pending;
	int64_t reloc_at;
	int reloc_backoff_ms;
	int reloc_code;
	char reloc_why[512];
	klog_fetch_part_t *req;       /* scratch for encoding fetches */
	/* The response being handed out: views into its link's buffer. */
	klog_fetch_result_t *res;
	struct cpart **res_part;
	int64_t *res_base;
	uint32_t nres, ri;
	int have_batch;
	int iterating;
	klog_iter_t it;
	struct cpart *itp;
	int watch_fd;                 /* -1, or reported when it errs */
	int wake_fd;                  /* -1, or ends a wait when readable */
	/* Lines worth telling, '\n'-ended, handed out one per NOTICE: each
	 * partition reset at open has one. */
	char notice[4096];
};

/* consumer.c, for handout.c: a notice line queued; the bytes of complete
 * entries at the start of set (*first: the length field after them);
 * every partition at its end; the lost partitions located again when due;
 * the next fetch response waited for (1 taken, 0 interrupted or none). */
void consumer_add_notice(klog_consumer_t *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
size_t consumer_complete_bytes(const uint8_t *set, size_t len,
    uint32_t *first);
int consumer_all_done(const klog_consumer_t *c);
int consumer_relocate(klog_consumer_t *c, klog_err_t *err);
int consumer_wait_response(klog_consumer_t *c, klog_err_t *err);

/* startpos.c: p's first fetch offset in *out, from the configuration;
 * a reset it made (--reset) told in notice (cap bytes; "" if none). */
int consumer_resolve_start(klog_consumer_t *c, struct cpart *p, int64_t *out,
    char *notice, size_t cap, klog_err_t *err);

#endif
