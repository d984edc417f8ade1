/* The core's counters read out for the metrics; see stats.h. */
#include <stdlib.h>

#include "core_impl.h"
#include "klog/core/stats.h"

static int
by_log(const void *a, const void *b)
{
	const klog_core_part_t *x = *(klog_core_part_t *const *)a;
	const klog_core_part_t *y = *(klog_core_part_t *const *)b;

	return x->log < y->log ? -1 : x->log > y->log;
}

int
klog_core_stats_parts(klog_core_t *c, klog_core_stats_fn *fn, void *arg)
{
	klog_core_part_t **idx = NULL, key, *kp = &key, **hit;
	klog_log_t *log;
	int rc = 0;

	/* The parts made so far, sorted by their log, so that each of the
	 * store's logs finds its counters in log(n) steps. */
	if (c->nparts > 0) {
		if ((idx = malloc(c->nparts * sizeof(*idx))) == NULL)
			return -KLOG_ENOMEM;
		for (size_t i = 0; i < c->nparts; i++)
			idx[i] = c->parts[i];
		qsort(idx, c->nparts, sizeof(*idx), by_log);
	}
	for (size_t i = 0; rc >= 0 &&
	    (log = klog_store_log(c->store, i)) != NULL; i++) {
		klog_core_stats_part_t sp = { .log = log };

		key.log = log;
		hit = idx == NULL ? NULL : bsearch(&kp, idx, c->nparts,
		    sizeof(*idx), by_log);
		if (hit != NULL) {
			sp.messages_in = (*hit)->messages_in;
			sp.bytes_in = (*hit)->bytes_in;
			sp.bytes_out = (*hit)->bytes_out;
			sp.rep = (*hit)->rep;
		}
		rc = fn(arg, &sp);
	}
	free(idx);
	return rc < 0 ? rc : 0;
}

uint64_t
klog_core_stats_parked(const klog_core_t *c)
{
	uint64_t n = 0;

	for (const klog_core_park_t *pk = c->parks; pk != NULL; pk = pk->next)
		n++;
	return n;
}

void
klog_core_stats_fsync(klog_core_t *c, klog_promtext_hist_t *out)
{
	klog_flusher_fsync_hist(c->fl, out);
}
