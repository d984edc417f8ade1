/* The broker's metrics at a scrape; see metrics.h. */
#include <stdlib.h>

#include "klog/base/promtext.h"
#include "klog/broker/metrics.h"
#include "klog/core/offline.h"
#include "klog/core/stats.h"
#include "klog/kafka/kwire.h"
#include "klog/proto/proto.h"
#include "klog/storage/log.h"

/* The partitions, gathered once so each family walks them in turn (a
 * family's samples must be together). */
struct parts {
	klog_core_stats_part_t *v;
	size_t n, cap;
};

static int
gather(void *arg, const klog_core_stats_part_t *sp)
{
	struct parts *ps = arg;

	if (klog_buf_grow((void **)&ps->v, &ps->cap, (ps->n + 1) *
	    sizeof(*ps->v)) < 0)
		return -KLOG_ENOMEM;
	ps->v[ps->n++] = *sp;
	return 0;
}

static void
part_labels(klog_promtext_labels_t *l, klog_log_t *log)
{
	klog_promtext_labels_init(l);
	klog_promtext_label(l, "topic", klog_log_topic(log));
	klog_promtext_label_int(l, "partition", klog_log_partition(log));
}

enum part_field {
	F_MSGS_IN, F_BYTES_IN, F_BYTES_OUT, F_START, F_END, F_FLUSHED,
	F_SEGMENTS, F_SIZE, F_UNINDEXED,
};

static const struct {
	const char *name, *type, *help;
} part_families[] = {
	[F_MSGS_IN] = { "klog_messages_in_total", "counter",
	    "Messages appended by producers since the broker started." },
	[F_BYTES_IN] = { "klog_bytes_in_total", "counter",
	    "Message-set bytes appended by producers since the broker "
	    "started." },
	[F_BYTES_OUT] = { "klog_bytes_out_total", "counter",
	    "Log bytes read for consumers and followers since the broker "
	    "started." },
	[F_START] = { "klog_log_start_offset", "gauge",
	    "The first retained offset of the partition's log." },
	[F_END] = { "klog_log_end_offset", "gauge",
	    "The written end of the partition's log (a byte offset)." },
	[F_FLUSHED] = { "klog_log_flushed_offset", "gauge",
	    "The flushed end of the partition's log: what consumers may "
	    "see." },
	[F_SEGMENTS] = { "klog_log_segments", "gauge",
	    "Segment files of the partition's log." },
	[F_SIZE] = { "klog_log_size_bytes", "gauge",
	    "Bytes in the partition's segment files." },
	[F_UNINDEXED] = { "klog_time_index_unindexed_bytes", "gauge",
	    "Bytes of the partition's segments its time indexes have not "
	    "seen yet: what the first lookup by time would read, until the "
	    "indexer thread reads them at start." },
};

static int64_t
part_value(const klog_core_stats_part_t *sp, int f)
{
	switch (f) {
	case F_MSGS_IN:
		return (int64_t)sp->messages_in;
	case F_BYTES_IN:
		return (int64_t)sp->bytes_in;
	case F_BYTES_OUT:
		return (int64_t)sp->bytes_out;
	case F_START:
		return klog_log_start(sp->log);
	case F_END:
		return klog_log_end(sp->log);
	case F_FLUSHED:
		return klog_log_flushed_end(sp->log);
	case F_SEGMENTS:
		return (int64_t)klog_log_segment_count(sp->log);
	case F_UNINDEXED:
		return klog_log_time_unindexed(sp->log);
	default:
		return klog_log_size_bytes(sp->log);
	}
}

static void
render_parts(klog_buf_t *out, const struct parts *ps)
{
	klog_promtext_labels_t l;

	for (int f = F_MSGS_IN; f <= F_UNINDEXED; f++) {
		klog_promtext_family(out, part_families[f].name,
		    part_families[f].type, part_families[f].help);
		for (size_t i = 0; i < ps->n; i++) {
			part_labels(&l, ps->v[i].log);
			klog_promtext_int(out, part_families[f].name, &l,
			    part_value(&ps->v[i], f));
		}
	}
}

/* Replicated partitions led here: ISR size, each follower's lag behind
 * the leader's log end, and how many have an ISR short of the replicas. */
static void
render_replicas(klog_buf_t *out, const struct parts *ps)
{
	klog_promtext_labels_t l;
	int64_t under = 0, leo;

	klog_promtext_family(out, "klog_replica_isr_size", "gauge",
	    "In-sync replicas of a replicated partition this broker leads, "
	    "itself included.");
	for (size_t i = 0; i < ps->n; i++) {
		const klog_replica_t *r = ps->v[i].rep;

		if (r == NULL || r->role != KLOG_REPLICA_LEADER)
			continue;
		part_labels(&l, ps->v[i].log);
		klog_promtext_int(out, "klog_replica_isr_size", &l,
		    klog_replica_isr_size(r));
		under += klog_replica_isr_size(r) < r->npeers + 1;
	}
	klog_promtext_family(out, "klog_replica_follower_lag_bytes", "gauge",
	    "Bytes a follower's last fetch was behind this leader's log "
	    "end.");
	for (size_t i = 0; i < ps->n; i++) {
		const klog_replica_t *r = ps->v[i].rep;

		if (r == NULL || r->role != KLOG_REPLICA_LEADER)
			continue;
		leo = klog_log_end(ps->v[i].log);
		for (int j = 0; j < r->npeers; j++) {
			if (r->peers[j].leo < 0)
				continue;
			part_labels(&l, ps->v[i].log);
			klog_promtext_label_int(&l, "replica", r->peers[j].id);
			klog_promtext_int(out, "klog_replica_follower_lag_bytes",
			    &l, leo - r->peers[j].leo);
		}
	}
	klog_promtext_family(out, "klog_under_replicated_partitions", "gauge",
	    "Partitions led here whose ISR is smaller than their replicas.");
	klog_promtext_int(out, "klog_under_replicated_partitions", NULL, under);
}

/* Names for the api label: NULL leaves a code out. */
static const char *
native_api(int api)
{
	switch (api) {
	case KLOG_API_PRODUCE:
	case KLOG_API_FETCH:
	case KLOG_API_OFFSETS:
	case KLOG_API_METADATA:
	case KLOG_API_REPLICA_FETCH:
	case KLOG_API_REPLICA_POS:
		return klog_proto_api_name(api);
	default:
		return NULL;
	}
}

static void
render_requests(klog_buf_t *out, const klog_metrics_src_t *src)
{
	const klog_promtext_reqs_t *k = src->kafka != NULL ?
	    klog_kafka_reqs(src->kafka) : NULL;

	klog_promtext_family(out, "klog_requests_total", "counter",
	    "Requests answered, by API (kafka_ for the Kafka listener's) and "
	    "by the first error of the answer.");
	klog_promtext_reqs_counts(out, "klog_requests_total",
	    klog_native_reqs(src->native), "", native_api,
	    klog_wire_error_name);
	if (k != NULL)
		klog_promtext_reqs_counts(out, "klog_requests_total", k,
		    "kafka_", klog_kwire_api_name, klog_kwire_error_name);
	klog_promtext_family(out, "klog_request_seconds", "histogram",
	    "Time from a request's arrival to its answer, by API.");
	klog_promtext_reqs_times(out, "klog_request_seconds",
	    klog_native_reqs(src->native), "", native_api);
	if (k != NULL)
		klog_promtext_reqs_times(out, "klog_request_seconds", k,
		    "kafka_", klog_kwire_api_name);
}

/* The Kafka listener's fetched record bytes, by where they came from. */
static void
render_kafka_fetch(klog_buf_t *out, const klog_metrics_src_t *src)
{
	static const char *const from[2] = { "file", "memory" };
	klog_promtext_labels_t l;
	uint64_t v[2];

	if (src->kafka == NULL)
		return;
	klog_kafka_fetch_bytes(src->kafka, &v[0], &v[1]);
	klog_promtext_family(out, "klog_kafka_fetch_bytes_total", "counter",
	    "Record bytes of the Kafka listener's fetch answers: sent from "
	    "the segment files (batches kept as Kafka clients sent them), or "
	    "read and written in memory (transcoded, or small).");
	for (int i = 0; i < 2; i++) {
		klog_promtext_labels_init(&l);
		klog_promtext_label(&l, "from", from[i]);
		klog_promtext_int(out, "klog_kafka_fetch_bytes_total", &l,
		    (int64_t)v[i]);
	}
}

static void
one(klog_buf_t *out, const char *name, const char *type, const char *help,
    int64_t v)
{
	klog_promtext_family(out, name, type, help);
	klog_promtext_int(out, name, NULL, v);
}

static void
render_broker(klog_buf_t *out, const klog_metrics_src_t *src)
{
	klog_conns_stats_t cs;
	klog_promtext_hist_t fs;

	klog_conns_stats(src->conns, &cs);
	one(out, "klog_connections", "gauge", "Client connections open, on "
	    "the klog and Kafka listeners.", (int64_t)cs.open);
	one(out, "klog_connections_refused_total", "counter", "Connections "
	    "closed at accept: --max-connections were open.",
	    (int64_t)cs.refused);
	one(out, "klog_parked_requests", "gauge", "Requests waiting: "
	    "acks=all produces, long polls, offsets waiting for a flush.",
	    (int64_t)klog_core_stats_parked(src->core));
	klog_core_stats_fsync(src->core, &fs);
	klog_promtext_family(out, "klog_fsync_seconds", "histogram",
	    "Time of each flush of a partition's log by the flusher thread.");
	klog_promtext_hist(out, "klog_fsync_seconds", NULL, &fs);
	one(out, "klog_flush_failures_total", "counter", "Flushes that failed "
	    "a sync, or were refused after one (a failed sync is final).",
	    (int64_t)klog_core_flush_failures(src->core));
	one(out, "klog_offline_log_directories", "gauge", "1 once a sync of "
	    "the data directory failed: no partition takes writes until a "
	    "restart.", (int64_t)klog_core_storage_failed(src->core));
	one(out, "klog_cold_read_bytes_total", "counter", "Log bytes not in "
	    "the page cache, read in by the prefetch thread before sending.",
	    (int64_t)cs.cold_read_bytes);
	one(out, "klog_retention_deleted_segments_total", "counter",
	    "Segments deleted by the broker's retention.",
	    (int64_t)src->upkeep->deleted_segments);
}

int
klog_metrics_render(const klog_metrics_src_t *src, klog_buf_t *out)
{
	struct parts ps = { 0 };
	int rc;

	if ((rc = klog_core_stats_parts(src->core, gather, &ps)) < 0)
		goto out;
	render_parts(out, &ps);
	render_requests(out, src);
	render_kafka_fetch(out, src);
	render_broker(out, src);
	render_replicas(out, &ps);
	if (src->more != NULL)
		rc = src->more(src->more_arg, out);
out:
	free(ps.v);
	return rc;
}
