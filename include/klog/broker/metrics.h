/*
 * The broker's metrics, assembled at each scrape of --metrics-listen by
 * walking what its parts counted: the core (partitions, parked requests,
 * fsyncs, replicas: stats.h), the connections (conn.h), the front
 * ends' requests (native.h, kafka.h) and the upkeep (retention.h).  Nothing
 * here runs on a request's path.  The names, types and labels are
 * klog-serve(1)'s METRICS section; dashboards rely on them.
 */
#ifndef KLOG_METRICS_H
#define KLOG_METRICS_H

#include "klog/base/buf.h"
#include "klog/broker/native.h"
#include "klog/broker/retention.h"
#include "klog/core/core.h"
#include "klog/kafka/kafka.h"
#include "klog/net/conn.h"

/* More families from a layer above (the cluster's ZooKeeper session),
 * appended to out: 0 or a -KLOG_E* code. */
typedef int klog_metrics_more_fn(void *arg, klog_buf_t *out);

typedef struct klog_metrics_src {
	klog_core_t *core;
	const klog_conns_t *conns;
	const klog_native_t *native;
	const klog_kafka_t *kafka;     /* NULL: no Kafka listener */
	const klog_retention_t *upkeep;
	klog_metrics_more_fn *more;     /* NULL: none */
	void *more_arg;
} klog_metrics_src_t;

/* The exposition (text format 0.0.4) appended to out: 0, or -KLOG_ENOMEM
 * (out's own failures are sticky: buf.h). */
int klog_metrics_render(const klog_metrics_src_t *src, klog_buf_t *out);

#endif
