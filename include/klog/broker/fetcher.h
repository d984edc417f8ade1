/*
 * A follower's side of replication: for each partition this broker
 * follows, one connection to its leader over the klog protocol, driven
 * from the broker's loop (klog_client_t is non-blocking), asking
 * REPLICA_FETCH from the local log's end.
 *
 *   send fetch (offset = local end, flushed = local flushed end, the
 *   newest local epoch) -> the leader answers at once or when it has
 *   flushed more (a long poll) -> append the whole, CRC-checked entries
 *   verbatim (a new epoch recorded first) -> fetch again at once
 *   ... the flush of what was appended completes -> REPLICA_POS
 *
 * The next fetch travels while the last one's bytes are synced, and the
 * flushed end, which the leader's high watermark and acks=all wait for,
 * reaches the leader as soon as the sync is done, in a REPLICA_POS that
 * has no response (so it does not queue behind the fetch the leader may
 * be holding).  When the leader
 * says the logs diverge, the local log is cut where it says (as KIP-279
 * says, to the end of the largest local epoch at or below the one named)
 * and the fetch starts again; when the leader no longer has the local end
 * (its retention passed it) the local log starts over at the leader's
 * start.  A lost connection or a NOT_LEADER answer is retried every
 * quarter second with whatever leader the cluster layer set last.
 *
 * A leader cut off by the network looks like one that went quiet: no
 * error comes, only TCP's retransmissions, further and further apart.  So
 * a fetch without its answer 1.5 s after it left (the leader's long poll
 * is half a second), or a connect not done in a second, is given up and
 * started again at once: a follower finds its leader within a second or
 * so of a heal, and the connects never wait on the broker's loop.
 */
#ifndef KLOG_FETCHER_H
#define KLOG_FETCHER_H

#include <stdint.h>

#include "klog/base/error.h"
#include "klog/base/logger.h"
#include "klog/client/client.h"
#include "klog/core/core.h"
#include "klog/net/loop.h"

typedef struct klog_fetcher klog_fetcher_t;

/* sec: how to reach the leaders' native listeners (TLS with this
 * broker's own certificate), or NULL for plaintext; it outlives f. */
int klog_fetcher_new(klog_loop_t *loop, klog_core_t *core, int32_t me,
    const klog_client_sec_t *sec, const klog_logger_t *log,
    klog_fetcher_t **out, klog_err_t *err);
/* Stop every fetch and free f.  NULL is fine. */
void klog_fetcher_free(klog_fetcher_t *f);

/* Follow p (whose role the core has as follower) from broker leader at
 * addr in epoch; a change of any of them restarts the fetch. */
int klog_fetcher_follow(klog_fetcher_t *f, klog_core_part_t *p,
    int32_t leader, int32_t epoch, const klog_client_addr_t *addr);
/* Stop following p (it leads now, or has no role). */
void klog_fetcher_stop(klog_fetcher_t *f, klog_core_part_t *p);

/* What the fetches counted since f was made (the metrics). */
typedef struct klog_fetcher_stats {
	uint64_t connect_timeouts;   /* connects given up at their deadline */
	uint64_t fetch_timeouts;     /* fetches given up unanswered */
} klog_fetcher_stats_t;

void klog_fetcher_stats(const klog_fetcher_t *f, klog_fetcher_stats_t *out);

/* The core's follower_flushed hook (arg: the fetcher). */
void klog_fetcher_flushed(void *arg, klog_core_part_t *p);

#endif
