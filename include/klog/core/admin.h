/*
 * A standalone broker's topics administered at run time (lib/core/admin.c,
 * sharing lib/core/core_impl.h with core.c): CREATE_TOPIC, ALTER_TOPIC and
 * DELETE_TOPIC of the klog protocol, decoded requests in, wire errors
 * out, as the rest of the core.
 *
 * A deleted topic's parked requests are answered first (UNKNOWN_TOPIC),
 * then its directories go (klog_store_delete_topic()); each partition the
 * flusher is still syncing is kept, answered and unreachable, until the
 * flusher reports it, and only then closed and freed.  A partition whose
 * directory was removed behind the broker's back is found by its next
 * flush (klog_log_flush() says -KLOG_ENOENT): its acks=all writes fail,
 * and it is dropped the same way, to start afresh at its next use (or
 * with its topic gone, if it was the topic's last).
 *
 * Replicated topics are ZooKeeper's to administer: TOPIC_REPLICATED.  The
 * cluster layer deletes a broker's copy of one with klog_core_drop_topic()
 * (rtadmin.h's protocol).
 */
#ifndef KLOG_ADMIN_H
#define KLOG_ADMIN_H

#include <stdint.h>

#include "klog/base/buf.h"
#include "klog/core/core.h"

/*
 * Answer req, a request of api (KLOG_API_CREATE_TOPIC, _ALTER_TOPIC or
 * _DELETE_TOPIC): its wire error, and in *partitions the topic's count
 * after it (DELETE_TOPIC: the count it had; 0 when there is none).
 * CREATE_TOPIC of a topic that exists is TOPIC_EXISTS; ALTER_TOPIC to
 * fewer partitions INVALID_PARTITIONS (to as many: nothing to do, no
 * error).  Storage failures are logged.
 */
int16_t klog_core_topic_admin(klog_core_t *c, int16_t api,
    const klog_topic_admin_t *req, int32_t *partitions);

/*
 * The same, with err saying why it was refused; dry: every check made,
 * nothing changed (the error it would answer now: a Kafka validate-only
 * request).
 */
int16_t klog_core_topic_try(klog_core_t *c, int16_t api,
    const klog_topic_admin_t *req, int dry, int32_t *partitions,
    klog_err_t *err);

/*
 * Delete this broker's copy of topic, replicated or not, as DELETE_TOPIC
 * does: parked requests answered UNKNOWN_TOPIC, descriptors closed (once
 * the flusher lets go), directories removed.  The caller stops the
 * partitions' fetchers first.  -KLOG_ENOTOPIC if the store has no such
 * topic; a storage failure is an error with err, the topic gone from the
 * store all the same (klog_store_delete_topic()).
 */
int klog_core_drop_topic(klog_core_t *c, const char *topic, klog_err_t *err);

#endif
