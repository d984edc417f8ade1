/*
 * libFuzzer target for lib/storage/crcpool.c: klog_crcpool_sets() with worker
 * threads against the same sets checked one at a time on the caller's
 * thread alone.
 *
 * The input is cut into message sets at points its first bytes choose,
 * and repeated until the sets come to more than KLOG_CRCPOOL_MIN_SPLIT, so
 * that the pieces are cut and shared (inputs are far smaller than that).
 * A broker trusts the top-level CRCs of a read's produce sets on the
 * shared answer alone, so it must be exactly the one-set-at-a-time answer:
 * a mismatch aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "klog/storage/crcpool.h"
#include "klog/storage/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAX_SETS 64

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static klog_crcpool_t *v;
	struct iovec sets[MAX_SETS];
	size_t ncut, body, copies, total, n = 0, pos = 0, cut;
	uint8_t *buf;
	int one = 0;

	if (v == NULL && klog_crcpool_new(2, &v) < 0)
		abort();
	if (size < 2)
		return 0;
	ncut = data[0] % 8;
	if (size <= 1 + ncut)
		return 0;
	body = size - 1 - ncut;
	copies = KLOG_CRCPOOL_MIN_SPLIT / body + 1;
	total = body * copies;
	if ((buf = malloc(total)) == NULL)
		return 0;
	for (size_t i = 0; i < copies; i++)
		memcpy(buf + i * body, data + 1 + ncut, body);
	/* Cut points spread over the buffer, from the chosen bytes; the
	 * rest of each set is the next set. */
	for (size_t i = 0; i < ncut && n < MAX_SETS - 1; i++) {
		cut = pos + (size_t)data[1 + i] * (total - pos) / 256;
		sets[n++] = (struct iovec){ buf + pos, cut - pos };
		pos = cut;
	}
	sets[n++] = (struct iovec){ buf + pos, total - pos };
	for (size_t i = 0; i < n; i++)
		one |= klog_crcpool_crcs(NULL, sets[i].iov_base,
		    sets[i].iov_len);
	CHECK(klog_crcpool_sets(v, sets, n) == one);
	CHECK(klog_crcpool_sets(NULL, sets, n) == one);
	free(buf);
	return 0;
}
