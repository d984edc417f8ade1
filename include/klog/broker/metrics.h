/*
 * The broker's metrics, assembled at each scrape of --metrics-listen by
 * walking what its parts counted: the core (partitions, parked requests,
 * fsyncs, replicas: corestat.h), the connections (conn.h), the front
 * ends' requests (native.h, kafka.h) and the upkeep (upkeep.h).  Nothing
 * here runs on a request's path.  The names, types and labels are
 * klog-serve(1)'s METRICS section; dashboards rely on them.
 */
#ifndef KLOG_SCRAPE_H
#define KLOG_SCRAPE_H

#include "klog/buf.h"
#include "klog/conn.h"
#include "klog/core.h"
#include "klog/kafka.h"
#include "klog/native.h"
#include "klog/upkeep.h"

/* More families from a layer above (the cluster's ZooKeeper session),
 * appended to out: 0 or a -KLOG_E* code. */
typedef int klog_scrape_more_fn(void *arg, klog_buf_t *out);

typedef struct klog_scrape_src {
	klog_core_t *core;
	const klog_conns_t *conns;
	const klog_native_t *native;
	const klog_kafka_t *kafka;     /* NULL: no Kafka listener */
	const klog_upkeep_t *upkeep;
	klog_scrape_more_fn *more;     /* NULL: none */
	void *more_arg;
} klog_scrape_src_t;

/* The exposition (text format 0.0.4) appended to out: 0, or -KLOG_ENOMEM
 * (out's own failures are sticky: buf.h). */
int klog_scrape_render(const klog_scrape_src_t *src, klog_buf_t *out);

#endif
