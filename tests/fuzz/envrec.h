/*
 * What fuzz_envelope and fuzz_outfmt share: a record's headers in the
 * bytes a magic-2 record stores them in (record.h), which klog-consume's
 * renderer reads, and the check that a record read back from its -J
 * envelope (klog_input_envelope()) is the record rendered.
 */
#ifndef FUZZ_ENVREC_H
#define FUZZ_ENVREC_H

#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/client/input.h"
#include "klog/client/outfmt.h"
#include "klog/storage/record.h"

/* r's headers: h[0..n) as a record stores them, in scratch. */
static inline void
envrec_headers(klog_buf_t *scratch, const klog_header_t *h, uint32_t n,
    klog_outfmt_rec_t *r)
{
	klog_record_t rd;

	klog_buf_reset(scratch);
	klog_record_write(scratch, 0, 0, &(klog_record_in_t){ "", 0, NULL, 0, 0,
	    h, n });
	if (scratch->failed || klog_record_read(scratch->data, scratch->len,
	    &rd) != 0)
		abort();
	r->headers = rd.headers;
	r->headers_len = rd.headers_len;
	r->header_count = rd.header_count;
}

static inline int
envrec_same_bytes(const void *a, size_t an, const void *b, size_t bn)
{
	return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

/* in, decoded from r's envelope, is r. */
static inline int
envrec_same(const klog_input_record_t *in, const klog_outfmt_rec_t *r)
{
	klog_header_t h;
	size_t pos = 0;
	uint32_t i = 0;

	if (in->null_payload != (r->payload == NULL) ||
	    !envrec_same_bytes(in->payload.data, in->payload.len, r->payload,
	    r->payload_len) || in->has_key != (r->key != NULL) ||
	    (r->key != NULL && !envrec_same_bytes(in->key.data, in->key.len,
	    r->key, (size_t)r->key_len)) || in->timestamp != r->timestamp ||
	    in->header_count != r->header_count)
		return 0;
	while (klog_record_header_next(r->headers, r->headers_len, &pos, &h)) {
		const klog_header_t *g = &in->hdrs[i++];

		if (!envrec_same_bytes(g->key, g->key_len, h.key, h.key_len) ||
		    g->value_len != h.value_len || (h.value != NULL &&
		    !envrec_same_bytes(g->value, (size_t)g->value_len, h.value,
		    (size_t)h.value_len)))
			return 0;
	}
	return i == r->header_count;
}

#endif
