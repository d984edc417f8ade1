/*
 * Blocks of producer ids from ZooKeeper, as Kafka's brokers take them
 * (its ZkProducerIdManager), so that klog's and Kafka's ids never meet:
 *
 *   /latest_producer_id_block  {"version":1,"broker":ID,
 *                               "block_start":"S","block_end":"E"}
 *
 * the last block handed to a broker, S to E inclusive (Kafka writes the
 * two as strings; numbers are read too).  A broker takes the next block,
 * E + 1 to E + 1000, by a set at the version it read, or creates the node
 * with 0 to 999; another broker's write in between makes it read again.
 */
#ifndef KLOG_PIDBLOCK_H
#define KLOG_PIDBLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/error.h"
#include "klog/zk/zk.h"

#define KLOG_PIDBLOCK_PATH "/latest_producer_id_block"

/* The node's JSON read: 0 and the block [*start, *end] (inclusive), or
 * -KLOG_EINVAL with err saying why. */
int klog_pidblock_parse(const char *json, size_t len, int32_t *broker,
    int64_t *start, int64_t *end, klog_err_t *err);

/* The JSON of a block, with room to spare. */
#define KLOG_PIDBLOCK_JSON 160

/* The block that follows the node's data[0..len) (data NULL: there is no
 * node yet) for broker: 0, [*start, *end) (end exclusive, as pids.h's)
 * and the JSON to write; or an error (data that does not parse, ids used
 * up). */
int klog_pidblock_next(const char *data, size_t len, int32_t broker,
    int64_t *start, int64_t *end, char json[KLOG_PIDBLOCK_JSON],
    klog_err_t *err);

/* Take the next block for broker: 0 and [*start, *end) (end exclusive,
 * as pids.h's), or an error (ZooKeeper's, or a node that does not parse,
 * which is never overwritten). */
int klog_pidblock_take(klog_zk_t *zk, int32_t broker, int64_t *start,
    int64_t *end, klog_err_t *err);

#endif
