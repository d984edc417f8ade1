/* Two counts of the same records; see renumber.h. */
#include <stdlib.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/client/renumber.h"

struct klog_renumber_gap {
	uint64_t seq, delta;
};

int
klog_renumber_from(klog_renumber_t *r, uint64_t seq, uint64_t delta)
{
	if ((r->n > 0 ? r->gaps[r->n - 1].delta : 0) == delta)
		return 0;
	if (klog_buf_grow((void **)&r->gaps, &r->cap,
	    (r->n + 1) * sizeof(*r->gaps)) < 0)
		return -KLOG_ENOMEM;
	r->gaps[r->n++] = (struct klog_renumber_gap){ seq, delta };
	return 0;
}

/* How many gaps start at or before seq. */
static size_t
gaps_upto(const klog_renumber_t *r, uint64_t seq)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->gaps[mid].seq <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t
klog_renumber_map(const klog_renumber_t *r, uint64_t seq)
{
	size_t k = gaps_upto(r, seq);

	return seq + (k > 0 ? r->gaps[k - 1].delta : 0);
}

uint64_t
klog_renumber_run_end(const klog_renumber_t *r, uint64_t seq, uint64_t end)
{
	size_t k = gaps_upto(r, seq);

	return k < r->n && r->gaps[k].seq < end ? r->gaps[k].seq : end;
}

void
klog_renumber_free(klog_renumber_t *r)
{
	free(r->gaps);
	*r = (klog_renumber_t){ 0 };
}
