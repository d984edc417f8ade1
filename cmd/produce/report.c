/* klog-produce --report; see report.h. */
#include <inttypes.h>
#include <stdlib.h>

#include "produce/report.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"

/* From send number seq on, record numbers are seq + delta. */
struct produce_gap {
	uint64_t seq;
	uint64_t delta;
};

int
produce_report_sent(produce_report_t *rp, uint64_t recno, uint64_t sent)
{
	uint64_t delta = recno - sent;
	struct produce_gap *g;

	if (rp->f == NULL ||
	    (rp->ngaps > 0 && rp->gaps[rp->ngaps - 1].delta == delta) ||
	    (rp->ngaps == 0 && delta == 0))
		return 0;
	if (rp->ngaps == rp->gaps_cap) {
		size_t cap = rp->gaps_cap ? 2 * rp->gaps_cap : 16;

		if ((g = realloc(rp->gaps, cap * sizeof(*g))) == NULL)
			return -1;
		rp->gaps = g;
		rp->gaps_cap = cap;
	}
	rp->gaps[rp->ngaps++] = (struct produce_gap){ sent, delta };
	return 0;
}

static uint64_t
record_of(const produce_report_t *rp, uint64_t seq)
{
	size_t lo = 0, hi = rp->ngaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rp->gaps[mid].seq <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return seq + (lo > 0 ? rp->gaps[lo - 1].delta : 0);
}

void
produce_report_done(const produce_report_t *rp, const klog_producer_done_t *d)
{
	klog_iter_t it;
	klog_msg_t m;
	uint32_t k = 0;

	if (!d->ok) {
		for (uint32_t i = 0; i < d->records; i++)
			fprintf(rp->f, "{\"record\":%" PRIu64 ",\"partition"
			    "\":%d,\"error\":\"%s\"}\n", record_of(rp,
			    d->first + i), (int)d->partition, d->error ?
			    klog_wire_error_name(d->error) : "not sent");
		return;
	}
	klog_iter_init(&it, d->set, d->set_len, d->offset < 0 ? 0 : d->offset,
	    KLOG_ITER_DEEP | KLOG_ITER_NOCRC, 0);
	while (k < d->records && klog_iter_next(&it, &m) == 1) {
		if (d->offset < 0)
			fprintf(rp->f, "{\"record\":%" PRIu64 ",\"partition"
			    "\":%d,\"offset\":null}\n", record_of(rp,
			    d->first + k), (int)d->partition);
		else
			fprintf(rp->f, "{\"record\":%" PRIu64 ",\"partition"
			    "\":%d,\"offset\":%" PRId64 "}\n", record_of(rp,
			    d->first + k), (int)d->partition, m.offset);
		k++;
	}
	klog_iter_free(&it);
}

void
produce_report_free(produce_report_t *rp)
{
	free(rp->gaps);
	rp->gaps = NULL;
	rp->ngaps = rp->gaps_cap = 0;
}
