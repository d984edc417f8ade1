/*
 * Shared by fuzz_kmsg and fuzz_kbatch: what a Kafka ingest wrote,
 * set[0..len), must be plain valid magic-0 entries of at most max_payload
 * bytes, as many as *in says, the first of the size it says.  Aborts
 * otherwise.
 */
#ifndef KLOG_FUZZ_INGESTED_H
#define KLOG_FUZZ_INGESTED_H

#include <stdint.h>
#include <stdlib.h>

#include "klog/kafka/kmsg.h"
#include "klog/storage/format.h"

static void
check_ingested(const uint8_t *set, size_t len, const klog_kmsg_in_info_t *in,
    uint32_t max_payload)
{
	klog_iter_t it;
	klog_msg_t m;
	uint32_t n = 0;
	int r;

	klog_iter_init(&it, set, len, 0, 0, 0);
	while ((r = klog_iter_next(&it, &m)) == 1) {
		if (!m.valid || m.magic != 0 || m.codec != 0 || m.depth != 0 ||
		    m.payload_len > max_payload ||
		    (n == 0 && in->first_entry != 4 + m.length))
			abort();
		n++;
	}
	klog_iter_free(&it);
	if (r != 0 || n != in->messages || in->codec < 0 || in->codec > 4)
		abort();
}

#endif
