/*
 * The Prometheus text exposition format, version 0.0.4: what a scrape of
 * klog-serve's --metrics-listen reads.  A family is announced once (HELP
 * and TYPE lines), then its samples follow, each a name, optional labels
 * and a value:
 *
 *   # HELP klog_bytes_in_total Message-set bytes appended by producers.
 *   # TYPE klog_bytes_in_total counter
 *   klog_bytes_in_total{topic="app",partition="0"} 1234
 *
 * Label values are escaped as the format says: backslash, double quote
 * and newline become \\, \" and \n.  Everything is appended to a klog_buf_t
 * whose errors are sticky (buf.h), so a writer checks once at the end.
 *
 * Histograms have fixed buckets chosen by their owner; observing is a
 * scan of a dozen integers, no floating point and no allocation, so it
 * can sit on a request's path.  A histogram belongs to one thread: one
 * written by another thread is copied out under that thread's lock.
 */
#ifndef KLOG_PROMTEXT_H
#define KLOG_PROMTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"

#define KLOG_PROMTEXT_BUCKETS_MAX 16
#define KLOG_PROMTEXT_LABELS_MAX 512  /* rendered labels of one sample */

/* Bucket upper bounds in nanoseconds, ascending; +Inf is implied. */
typedef struct klog_promtext_hist {
	const int64_t *bounds;
	size_t nbounds;                          /* at most BUCKETS_MAX */
	uint64_t counts[KLOG_PROMTEXT_BUCKETS_MAX + 1];  /* per bucket, the
	                                                   last +Inf's */
	uint64_t count;
	uint64_t sum_ns;
} klog_promtext_hist_t;

/* Latency buckets from 100 microseconds to 10 seconds, for requests and
 * fsyncs alike, so that dashboards compare them. */
extern const int64_t klog_promtext_latency_bounds[];
extern const size_t klog_promtext_latency_nbounds;

/* Empty, over bounds (the caller's, static). */
void klog_promtext_hist_init(klog_promtext_hist_t *h, const int64_t *bounds,
    size_t nbounds);

/* One observation of ns nanoseconds (negative counts as 0). */
static inline void
klog_promtext_hist_observe(klog_promtext_hist_t *h, int64_t ns)
{
	size_t i = 0;

	if (ns < 0)
		ns = 0;
	while (i < h->nbounds && ns > h->bounds[i])
		i++;
	h->counts[i]++;
	h->count++;
	h->sum_ns += (uint64_t)ns;
}

/* Add src's observations to dst (same bounds). */
void klog_promtext_hist_add(klog_promtext_hist_t *dst,
    const klog_promtext_hist_t *src);

/*
 * A sample's labels, rendered as name="value" pairs with the value
 * escaped.  A label set that would pass KLOG_PROMTEXT_LABELS_MAX is cut at
 * the last whole label and marked truncated (the writer never emits a
 * half-escaped value).
 */
typedef struct klog_promtext_labels {
	char text[KLOG_PROMTEXT_LABELS_MAX];
	size_t len;
	int truncated;
} klog_promtext_labels_t;

void klog_promtext_labels_init(klog_promtext_labels_t *l);
void klog_promtext_label(klog_promtext_labels_t *l, const char *name,
    const char *value);
void klog_promtext_label_int(klog_promtext_labels_t *l, const char *name,
    int64_t value);

/* value escaped for a label value into out (cap bytes, NUL-terminated):
 * the length it needs without the NUL, as snprintf counts. */
size_t klog_promtext_escape(const char *value, char *out, size_t cap);

/* The HELP and TYPE lines of family name; type is "counter", "gauge" or
 * "histogram".  help is one line of plain text (\ and newline escaped). */
void klog_promtext_family(klog_buf_t *out, const char *name, const char *type,
    const char *help);

/* One sample: name, labels (NULL: none), an integer or a number. */
void klog_promtext_int(klog_buf_t *out, const char *name,
    const klog_promtext_labels_t *labels, int64_t value);
void klog_promtext_double(klog_buf_t *out, const char *name,
    const klog_promtext_labels_t *labels, double value);

/* A histogram's samples: name_bucket (cumulative, with le), name_sum in
 * seconds and name_count. */
void klog_promtext_hist(klog_buf_t *out, const char *name,
    const klog_promtext_labels_t *labels, const klog_promtext_hist_t *h);

/*
 * A front end's requests: how many, by API and by the first error its
 * answer carried, and how long from arrival to answer, by API.  APIs and
 * errors are small codes; an error outside the table counts as its last
 * slot (named by the error namer's answer for -1).
 */
#define KLOG_PROMTEXT_APIS 20
#define KLOG_PROMTEXT_ERRORS 64

typedef struct klog_promtext_reqs {
	uint64_t count[KLOG_PROMTEXT_APIS][KLOG_PROMTEXT_ERRORS];
	klog_promtext_hist_t time[KLOG_PROMTEXT_APIS];
} klog_promtext_reqs_t;

void klog_promtext_reqs_init(klog_promtext_reqs_t *r);

static inline void
klog_promtext_reqs_note(klog_promtext_reqs_t *r, int api, int error, int64_t ns)
{
	if (api < 0 || api >= KLOG_PROMTEXT_APIS)
		return;
	if (error < 0 || error >= KLOG_PROMTEXT_ERRORS - 1)
		error = KLOG_PROMTEXT_ERRORS - 1;
	r->count[api][error]++;
	klog_promtext_hist_observe(&r->time[api], ns);
}

/* A code's name for a label value (lowercased when written); NULL for
 * an API to leave out. */
typedef const char *klog_promtext_name_fn(int code);

/* The samples of name (requests_total: api, error) and of name (the
 * request_seconds histogram: api) for r, api label values prefixed. */
void klog_promtext_reqs_counts(klog_buf_t *out, const char *name,
    const klog_promtext_reqs_t *r, const char *prefix,
    klog_promtext_name_fn *api_name, klog_promtext_name_fn *error_name);
void klog_promtext_reqs_times(klog_buf_t *out, const char *name,
    const klog_promtext_reqs_t *r, const char *prefix,
    klog_promtext_name_fn *api_name);

#endif
