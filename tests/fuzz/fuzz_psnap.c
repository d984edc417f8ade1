/*
 * libFuzzer target for producer state snapshots (lib/storage/psnap.c), a
 * file a crash or a hand may leave in any state.
 *
 * The first byte says whether to fix the CRC of the rest before reading
 * it (so that the checks behind the CRC are reached); the rest is read
 * as a snapshot.  What reads must hold what psnap.h promises (ids unique,
 * one to five batches each, of one epoch, offsets increasing and below
 * the snapshot's) and must write back to exactly the same bytes.  A
 * broken invariant aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/storage/format.h"
#include "klog/storage/psnap.h"
#include "klog/storage/pstate.h"
#include "klog/storage/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void
check_state(const klog_pstate_t *ps, int64_t offset)
{
	const klog_pstate_producer_t *p;
	size_t pos = 0;

	while ((p = klog_pstate_next(ps, &pos)) != NULL) {
		CHECK(klog_pstate_get(ps, p->id) == p);
		CHECK(p->n >= 1 && p->n <= KLOG_PSTATE_BATCHES);
		for (int j = 0; j < p->n; j++) {
			CHECK(p->b[j].epoch == p->b[0].epoch);
			CHECK(p->b[j].offset <= p->b[j].last_offset);
			CHECK(p->b[j].last_offset < offset);
			CHECK(j == 0 || p->b[j].offset > p->b[j - 1].last_offset);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	klog_pstate_t *ps;
	klog_buf_t out;
	uint8_t *c;
	int64_t offset;

	if (size < 1 || (c = malloc(size)) == NULL)
		return 0;
	memcpy(c, data + 1, size - 1);
	if ((data[0] & 1) && size - 1 >= 10)
		klog_put_be32(c + 6, klog_crc32c(0, c + 10, size - 11));
	if (klog_pstate_new(&ps) < 0) {
		free(c);
		return 0;
	}
	if (klog_psnap_decode(c, size - 1, ps, &offset) == 0) {
		check_state(ps, offset);
		klog_buf_init(&out);
		klog_psnap_encode(ps, offset, &out);
		CHECK(!out.failed);
		CHECK(out.len == size - 1 && memcmp(out.data, c, out.len) == 0);
		klog_buf_free(&out);
	}
	klog_pstate_free(ps);
	free(c);
	return 0;
}
