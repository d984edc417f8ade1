/*
 * libFuzzer target for lib/storage/timeindex.c: arbitrary bytes as a
 * segment file, indexed from the file and from memory, then searched by
 * time.
 *
 * Besides not crashing or leaking, it checks that both ways of building
 * index the same bytes to the same running max and entries, and that a
 * lookup from where the index says to start finds the entry a walk of
 * every entry from the segment's start finds: the first magic-2 entry
 * whose maxTimestamp is at or after the time.  A broken invariant aborts,
 * which libFuzzer reports as a crash.
 */
#include <sys/mman.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/error.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"
#include "klog/storage/timeindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define SPACING 64
#define TS_AT (KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER + KLOG_BATCH_MAX_TS_AT)

static int64_t
max_ts_of(const uint8_t *p)
{
	return (int64_t)((uint64_t)klog_be32(p + TS_AT) << 32 |
	    klog_be32(p + TS_AT + 4));
}

/* The first magic-2 entry of data[0..end) with a maxTimestamp at or after
 * ts, by walking every entry; -1 if none. */
static int64_t
walk(const uint8_t *data, int64_t end, int64_t ts)
{
	int64_t pos = 0;
	uint32_t n;

	while (pos < end) {
		n = klog_be32(data + pos);
		if (data[pos + KLOG_LENGTH_SIZE] == KLOG_MAGIC2 &&
		    n >= KLOG_MAGIC2_HEADER + KLOG_BATCH_BODY_HEADER &&
		    max_ts_of(data + pos) >= ts)
			return pos;
		pos += KLOG_LENGTH_SIZE + (int64_t)n;
	}
	return -1;
}

static void
lookup(int fd, const uint8_t *data, const klog_timeindex_t *ti, int64_t ts)
{
	klog_timeindex_hit_t hit;
	int64_t want = walk(data, ti->built, ts);
	int r = klog_timeindex_find(fd, klog_timeindex_seek(ti, ts),
	    ti->built, ts, 1 << 20, &hit);

	CHECK(r == (want >= 0) || r == -KLOG_ENOMEM);
	if (r == 1) {
		CHECK(hit.pos == want);
		CHECK(hit.delta >= 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	klog_timeindex_t file, mem, tail;
	int64_t probes[4];
	size_t used;
	int fd, rf, rm;

	if ((fd = memfd_create("segment", 0)) < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	klog_timeindex_init(&file, SPACING);
	klog_timeindex_tail(&file, &tail);
	rf = klog_timeindex_build(&tail, fd, (int64_t)size);
	CHECK(klog_timeindex_join(&file, &tail, 0));
	klog_timeindex_init(&mem, SPACING);
	rm = klog_timeindex_note(&mem, data, size, 0, &used);
	CHECK((size_t)mem.built == used);
	/* The file's reader notes an entry whose header it has; memory
	 * wants it whole, and both stop at an impossible length. */
	CHECK(file.built >= mem.built);
	if (rf == 0 && rm == 0 && file.built == mem.built) {
		CHECK(file.max_ts == mem.max_ts);
		CHECK(file.n == mem.n);
		CHECK(file.n == 0 || memcmp(file.v, mem.v, file.n *
		    sizeof(*file.v)) == 0);
	}
	for (size_t i = 1; i < mem.n; i++)
		CHECK(mem.v[i].ts > mem.v[i - 1].ts &&
		    mem.v[i].pos - mem.v[i - 1].pos >= SPACING);
	probes[0] = 0;
	probes[1] = mem.max_ts;
	probes[2] = mem.n > 0 ? mem.v[mem.n / 2].ts + 1 : 1;
	probes[3] = size >= TS_AT + 8 ? max_ts_of(data + size - TS_AT - 8) : -1;
	for (int i = 0; i < 4; i++)
		lookup(fd, data, &mem, probes[i]);
	klog_timeindex_free(&file);
	klog_timeindex_free(&mem);
	close(fd);
	return 0;
}
