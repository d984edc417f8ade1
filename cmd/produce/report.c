/* klog-produce --report; see report.h. */
#include <inttypes.h>

#include "produce/report.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"

int
produce_report_sent(produce_report_t *rp, uint64_t recno, uint64_t sent)
{
	if (rp->f == NULL)
		return 0;
	return klog_renumber_from(&rp->inputs, sent, recno - sent) < 0 ? -1 : 0;
}

static uint64_t
record_of(const produce_report_t *rp, uint64_t seq)
{
	return klog_renumber_map(&rp->inputs, seq);
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
	klog_renumber_free(&rp->inputs);
}
