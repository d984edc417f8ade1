#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/dump.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"
#include "klog/storage/record.h"

/* Each test gets a fresh directory. */
typedef struct fixture {
	char dir[64];
	klog_buf_t set;     /* the message set being built */
	klog_buf_t trace;   /* what the callback saw */
	int stop_at;        /* make the callback fail at this event (1-based) */
	int events;
	uint64_t batches, records;  /* the last END's */
} fixture_t;

static int
setup(void **state)
{
	fixture_t *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/klog-test-dump.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	fixture_t *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	klog_buf_free(&f->set);
	klog_buf_free(&f->trace);
	free(f);
	return 0;
}

static void
m0(klog_buf_t *b, const char *payload)
{
	size_t n = strlen(payload);

	klog_buf_reserve(b, klog_entry_size(n));
	b->len += klog_entry_encode(b->data + b->len, payload, n);
}

static void
m1(klog_buf_t *b, const void *payload, size_t n, uint8_t attrs)
{
	uint8_t h[10];

	klog_put_be32(h, (uint32_t)(n + KLOG_MAGIC1_HEADER));
	h[4] = 1;
	h[5] = attrs;
	klog_put_be32(h + 6, (uint32_t)crc32(0, payload, (uInt)n));
	klog_buf_put(b, h, sizeof(h));
	klog_buf_put(b, payload, n);
}

/* A gzip wrapper around magic-1 messages "one", "two", "three". */
static void
wrapper(klog_buf_t *b)
{
	klog_buf_t inner;
	uint8_t *w;
	size_t wlen;

	klog_buf_init(&inner);
	m1(&inner, "one", 3, 0);
	m1(&inner, "two", 3, 0);
	m1(&inner, "three", 5, 0);
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_put(b, w, wlen);
	free(w);
	klog_buf_free(&inner);
}

static void
write_file(const char *path, const void *p, size_t n)
{
	FILE *fp = fopen(path, "wb");

	assert_non_null(fp);
	if (n > 0)
		assert_int_equal(fwrite(p, 1, n, fp), n);
	assert_int_equal(fclose(fp), 0);
}

/* Write f->set as dir/name; the path goes into path. */
static void
write_set(fixture_t *f, const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", f->dir, name);
	write_file(path, f->set.data, f->set.len);
}

static void
tracef(klog_buf_t *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	klog_buf_put(b, tmp, (size_t)n);
}

/* Record every event as a line: the kind, the fields that matter, and for
 * messages the JSON record (so payloads and offsets are compared too). */
static int
record(void *arg, const klog_dump_event_t *ev)
{
	fixture_t *f = arg;
	klog_buf_t *t = &f->trace;
	const klog_dump_summary_t *s = ev->summary;

	if (++f->events == f->stop_at)
		return -KLOG_EIO;
	switch (ev->kind) {
	case KLOG_DUMP_FILE:
		tracef(t, "FILE base=%lld named=%d last=%d size=%lld\n",
		    (long long)ev->base, ev->named, ev->last,
		    (long long)ev->size);
		break;
	case KLOG_DUMP_MESSAGE:
		klog_dump_render_json(t, ev);
		break;
	case KLOG_DUMP_END:
		f->batches = s->batches;
		f->records = s->records;
		tracef(t, "END first=%lld next=%lld entries=%llu messages=%llu"
		    " entry_bytes=%llu payload=%llu codecs=%llu/%llu/%llu"
		    " crc=%llu corrupt=%llu unchecked=%llu partial=%lld\n",
		    (long long)s->first_offset, (long long)s->next_offset,
		    (unsigned long long)s->entries,
		    (unsigned long long)s->messages,
		    (unsigned long long)s->entry_bytes,
		    (unsigned long long)s->payload_bytes,
		    (unsigned long long)s->codecs[0],
		    (unsigned long long)s->codecs[1],
		    (unsigned long long)s->codecs[2],
		    (unsigned long long)s->crc_errors,
		    (unsigned long long)s->corrupt,
		    (unsigned long long)s->unchecked,
		    (long long)s->partial_bytes);
		break;
	default:
		tracef(t, "%s ", ev->kind == KLOG_DUMP_CORRUPT ? "CORRUPT" :
		    ev->kind == KLOG_DUMP_PARTIAL ? "PARTIAL" :
		    ev->kind == KLOG_DUMP_GAP ? "GAP" : "UNCHECKED");
		klog_dump_describe(t, ev);
		tracef(t, "\n");
		break;
	}
	return 0;
}

static int
run(fixture_t *f, const char *path, const klog_dump_opts_t *o)
{
	klog_err_t err = { 0, "" };

	klog_buf_reset(&f->trace);
	f->events = 0;
	return klog_dump_path(path, o, record, f, &err);
}

/* The trace as a NUL-terminated string (valid until the next run). */
static const char *
trace(fixture_t *f)
{
	klog_buf_put(&f->trace, "", 1);
	f->trace.len--;
	return (const char *)f->trace.data;
}

static int
count_lines(const char *s, const char *prefix)
{
	int n = 0;
	size_t len = strlen(prefix);

	for (const char *p = s; p != NULL && *p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, prefix, len) == 0)
			n++;
	}
	return n;
}

/* The mixed set most tests use: 14 + 9 + 19 + wrapper + 13 bytes. */
static size_t
mixed_set(fixture_t *f)
{
	size_t wpos;

	m0(&f->set, "hello");
	m0(&f->set, "");
	m1(&f->set, "\xff\x00\x01", 3, 0);
	m1(&f->set, "magic", 5, 0);
	wpos = f->set.len;
	wrapper(&f->set);
	m0(&f->set, "end");
	return wpos;
}

static void
test_valid_file(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128], want[256];
	const char *t;
	size_t wpos;

	wpos = mixed_set(f);
	write_set(f, "00000000000000001000.klog", path, sizeof(path));
	klog_dump_opts_default(&o);
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	snprintf(want, sizeof(want), "FILE base=1000 named=1 last=1 size=%zu\n",
	    f->set.len);
	assert_memory_equal(t, want, strlen(want));
	assert_non_null(strstr(t, "{\"file\":\"/tmp/klog-test-dump."));
	assert_non_null(strstr(t, "\"offset\":1000,\"next_offset\":1014,"
	    "\"pos\":0,\"length\":10,\"size\":5,\"magic\":0,\"attributes\":0,"
	    "\"codec\":\"none\",\"depth\":0,\"crc\":907060870,"
	    "\"crc_computed\":907060870,\"valid\":true,\"payload\":\"hello\"}"));
	assert_non_null(strstr(t, "\"offset\":1014,\"next_offset\":1023,"));
	assert_non_null(strstr(t, "\"payload_base64\":\"/wAB\"}"));
	assert_non_null(strstr(t, "\"codec\":\"gzip\",\"depth\":0"));
	assert_int_equal(count_lines(t, "{"), 6);
	snprintf(want, sizeof(want), "END first=1000 next=%zu entries=6 "
	    "messages=6 entry_bytes=%zu payload=%zu codecs=5/1/0 crc=0 "
	    "corrupt=0 unchecked=0 partial=0\n", 1000 + f->set.len, f->set.len,
	    f->set.len - 3 * 9 - 3 * 10);
	assert_string_equal(strstr(t, "END"), want);
	(void)wpos;
}

/* The events do not depend on where chunks end: every chunk size from the
 * smallest to larger than the file gives the same trace. */
static void
test_chunk_sizes(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128];
	char *want;

	mixed_set(f);
	/* An entry much larger than the small chunks. */
	{
		char big[3000];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		m0(&f->set, big);
	}
	m0(&f->set, "tail");
	f->set.len -= 2;   /* and a partial tail */
	write_set(f, "seg.bin", path, sizeof(path));
	klog_dump_opts_default(&o);
	o.flags = KLOG_DUMP_DEEP;
	assert_int_equal(run(f, path, &o), 0);
	want = strdup(trace(f));
	assert_non_null(strstr(want, "PARTIAL offset "));
	assert_non_null(strstr(want, "\"payload\":\"three\""));
	for (size_t chunk = 1; chunk <= f->set.len + 1; chunk +=
	    chunk < 64 ? 1 : 97) {
		o.chunk = chunk;
		assert_int_equal(run(f, path, &o), 0);
		if (strcmp(trace(f), want) != 0)
			fail_msg("chunk %zu differs", chunk);
	}
	free(want);
}

static void
test_crc_mismatch_goes_on(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128];
	const char *t;

	m0(&f->set, "alpha");
	m0(&f->set, "bravo");
	f->set.data[14 + 9] ^= 1;   /* 'b' -> 'c' */
	m0(&f->set, "charlie");
	write_set(f, "x", path, sizeof(path));
	klog_dump_opts_default(&o);
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	assert_non_null(strstr(t, "FILE base=0 named=0 last=1 size=44\n"));
	assert_non_null(strstr(t, "\"offset\":14,\"next_offset\":28,"));
	assert_non_null(strstr(t, "\"crc\":161200265,\"crc_computed\":"
	    "888901945,\"valid\":false,\"payload\":\"cravo\"}"));
	assert_non_null(strstr(t, "\"payload\":\"charlie\""));
	assert_non_null(strstr(t, "END first=0 next=44 entries=3 messages=3 "
	    "entry_bytes=44 payload=17 codecs=3/0/0 crc=1 corrupt=0"));
}

static void
test_corrupt_stops_file(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128];
	const char *t;

	m0(&f->set, "alpha");
	klog_buf_put(&f->set, "\x00\x00\x00\x03", 4);   /* length 3 < 5 */
	m0(&f->set, "never seen");
	write_set(f, "x", path, sizeof(path));
	klog_dump_opts_default(&o);
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	assert_non_null(strstr(t, "CORRUPT offset 14 (byte 0xe): entry length "
	    "too small (length field 0x00000003)\n"));
	assert_null(strstr(t, "never"));
	assert_non_null(strstr(t, "END first=0 next=14 entries=1 messages=1 "
	    "entry_bytes=14 payload=5 codecs=1/0/0 crc=0 corrupt=1"));

	/* A bad magic byte, with a sane length. */
	klog_buf_reset(&f->set);
	m0(&f->set, "alpha");
	m0(&f->set, "bravo");
	f->set.data[14 + 4] = 7;
	m0(&f->set, "charlie");
	write_set(f, "y", path, sizeof(path));
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	assert_non_null(strstr(t, "CORRUPT offset 14 (byte 0xe): unknown magic "
	    "byte (length field 0x0000000a)\n"));
	assert_null(strstr(t, "charlie"));
}

static void
test_partial_tail(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128];
	const char *t;

	klog_dump_opts_default(&o);
	m0(&f->set, "alpha");
	m0(&f->set, "charlie");
	f->set.len -= 6;
	write_set(f, "a", path, sizeof(path));
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	assert_non_null(strstr(t, "PARTIAL offset 14 (byte 0xe): partial entry "
	    "at the end of the file (10 of 16 bytes)\n"));
	assert_non_null(strstr(t, "END first=0 next=14 entries=1 messages=1 "
	    "entry_bytes=14 payload=5 codecs=1/0/0 crc=0 corrupt=0 "
	    "unchecked=0 partial=10\n"));

	/* Even the length field is cut. */
	f->set.len = 14 + 3;
	write_set(f, "b", path, sizeof(path));
	assert_int_equal(run(f, path, &o), 0);
	assert_non_null(strstr(trace(f), "PARTIAL offset 14 (byte 0xe): partial"
	    " entry at the end of the file (3 bytes, length cut)\n"));

	/* A cut entry whose magic is already wrong is corruption. */
	f->set.len = 14 + 6;
	f->set.data[14 + 4] = 3;
	write_set(f, "c", path, sizeof(path));
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	assert_non_null(strstr(t, "CORRUPT offset 14 (byte 0xe): unknown magic "
	    "byte (length field 0x0000000c)\n"));
	assert_null(strstr(t, "PARTIAL"));

	/* Magic 2, too short for its batch header, or an unknown codec. */
	f->set.data[14 + 4] = 2;
	write_set(f, "d", path, sizeof(path));
	assert_int_equal(run(f, path, &o), 0);
	assert_non_null(strstr(trace(f), "CORRUPT offset 14 (byte 0xe): entry "
	    "length too small (length field 0x0000000c)\n"));
	klog_put_be32(f->set.data + 14, 100);
	f->set.data[14 + 5] = 5;
	write_set(f, "e", path, sizeof(path));
	assert_int_equal(run(f, path, &o), 0);
	assert_non_null(strstr(trace(f), "CORRUPT offset 14 (byte 0xe): unknown "
	    "compression codec (length field 0x00000064)\n"));
	f->set.data[14 + 5] = 4;
	write_set(f, "f", path, sizeof(path));
	assert_int_equal(run(f, path, &o), 0);
	assert_non_null(strstr(trace(f), "PARTIAL offset 14 (byte 0xe): partial "
	    "entry at the end of the file (6 of 104 bytes)\n"));
}

static void
test_empty_file(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128];

	write_set(f, "00000000000000000042.kafka", path, sizeof(path));
	klog_dump_opts_default(&o);
	assert_int_equal(run(f, path, &o), 0);
	assert_string_equal(trace(f), "FILE base=42 named=1 last=1 size=0\n"
	    "END first=42 next=42 entries=0 messages=0 entry_bytes=0 payload=0 "
	    "codecs=0/0/0 crc=0 corrupt=0 unchecked=0 partial=0\n");
}

static void
test_deep(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128], want[160];
	const char *t;
	size_t wpos, wend;

	wpos = mixed_set(f);
	wend = f->set.len - 12;
	write_set(f, "d", path, sizeof(path));
	klog_dump_opts_default(&o);
	o.flags = KLOG_DUMP_DEEP;
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	/* Inner messages carry the wrapper's offset; only the last one's
	 * next offset moves past it. */
	snprintf(want, sizeof(want), "\"offset\":%zu,\"next_offset\":%zu,"
	    "\"pos\":%zu,\"length\":9,\"size\":3,\"magic\":1,\"attributes\":0,"
	    "\"codec\":\"none\",\"depth\":1", wpos, wpos, wpos);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "\"offset\":%zu,\"next_offset\":%zu,"
	    "\"pos\":%zu,\"length\":11,\"size\":5", wpos, wend, wpos);
	assert_non_null(strstr(t, want));
	assert_int_equal(count_lines(t, "{"), 9);
	assert_non_null(strstr(t, "entries=6 messages=8 "));
}

static void
test_deep_bad_wrappers(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	klog_buf_t inner;
	char path[128];
	const char *t;
	uint8_t *w;
	size_t wlen;

	klog_buf_init(&inner);
	m1(&inner, "ok", 2, 0);
	m1(&inner, "bad", 3, 0);
	inner.data[12 + 10] ^= 1;
	assert_int_equal(klog_gzip_wrap(inner.data, inner.len, 6, &w, &wlen),
	    0);
	klog_buf_put(&f->set, w, wlen);                       /* 0 */
	free(w);
	m1(&f->set, "not gzip", 8, KLOG_CODEC_GZIP);          /* wlen */
	m1(&f->set, "snappy?", 7, KLOG_CODEC_SNAPPY);         /* + 18 */
	m0(&f->set, "after");                                 /* + 17 */
	klog_buf_free(&inner);
	write_set(f, "w", path, sizeof(path));
	klog_dump_opts_default(&o);

	/* Shallow: four fine entries. */
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	assert_int_equal(count_lines(t, "{"), 4);
	assert_non_null(strstr(t, "crc=0 corrupt=0 unchecked=0"));

	o.flags = KLOG_DUMP_DEEP;
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	assert_non_null(strstr(t, "\"valid\":false,\"payload\":\"cad\"}"));
	assert_non_null(strstr(t, "CORRUPT offset "));
	assert_non_null(strstr(t, "gzip wrapper: wrapper does not inflate\n"));
	assert_non_null(strstr(t, "UNCHECKED offset "));
	assert_non_null(strstr(t, "snappy wrapper not supported; its messages "
	    "are not checked\n"));
	/* The walk goes on after both. */
	assert_non_null(strstr(t, "\"payload\":\"after\""));
	assert_non_null(strstr(t, "entries=4 messages=5 "));
	assert_non_null(strstr(t, "crc=1 corrupt=1 unchecked=1 partial=0"));
}

static void
test_count(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128];
	const char *t;

	mixed_set(f);
	write_set(f, "n", path, sizeof(path));
	klog_dump_opts_default(&o);
	o.count = 2;
	o.flags = KLOG_DUMP_DEEP;
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	assert_int_equal(count_lines(t, "{"), 2);
	assert_non_null(strstr(t, "END first=0 next=23 entries=2 "));
}

static void
test_start(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128];
	const char *t;

	mixed_set(f);
	write_set(f, "00000000000000000100.klog", path, sizeof(path));
	klog_dump_opts_default(&o);
	o.start = 123;
	o.chunk = 16;
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	assert_null(strstr(t, "\"offset\":100,"));
	assert_null(strstr(t, "\"offset\":114,"));
	assert_non_null(strstr(t, "\"offset\":123,\"next_offset\":136,"));
	assert_non_null(strstr(t, "END first=123 "));

	o.start = 124;
	assert_int_equal(run(f, path, &o), -KLOG_ENOTBOUNDARY);
	o.start = 99;
	assert_int_equal(run(f, path, &o), -KLOG_ERANGE);
	o.start = 100 + (int64_t)f->set.len + 1;
	assert_int_equal(run(f, path, &o), -KLOG_ERANGE);
	o.start = 100 + (int64_t)f->set.len;
	assert_int_equal(run(f, path, &o), 0);
	assert_int_equal(count_lines(trace(f), "{"), 0);
	/* Inside the last entry. */
	o.start = 100 + (int64_t)f->set.len - 3;
	assert_int_equal(run(f, path, &o), -KLOG_ENOTBOUNDARY);
}

static void
test_base_option(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128];

	m0(&f->set, "a");
	write_set(f, "00000000000000000100.klog", path, sizeof(path));
	klog_dump_opts_default(&o);
	o.base = 7;
	assert_int_equal(run(f, path, &o), 0);
	assert_non_null(strstr(trace(f), "FILE base=7 named=0 last=1"));
	assert_non_null(strstr(trace(f), "\"offset\":7,\"next_offset\":17,"
	    "\"pos\":0,"));
}

static void
test_missing(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	klog_err_t err = { 0, "" };
	char path[128];

	snprintf(path, sizeof(path), "%s/nope", f->dir);
	klog_dump_opts_default(&o);
	assert_int_equal(klog_dump_path(path, &o, record, f, &err),
	    -KLOG_ENOENT);
	assert_non_null(strstr(err.msg, "/nope: No such file or directory"));
	/* A directory without segments. */
	assert_int_equal(klog_dump_path(f->dir, &o, record, f, &err),
	    -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, ": no segment files"));
}

static void
test_callback_stops(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128];

	mixed_set(f);
	write_set(f, "s", path, sizeof(path));
	klog_dump_opts_default(&o);
	f->stop_at = 3;
	assert_int_equal(run(f, path, &o), -KLOG_EIO);
	assert_int_equal(f->events, 3);
	assert_int_equal(count_lines(trace(f), "{"), 1);
}

/* Write segment name with entries of payloads "s<i>" for i < n. */
static size_t
segment(fixture_t *f, const char *name, int n)
{
	char path[128], p[48];

	klog_buf_reset(&f->set);
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s%d", name, i);
		m0(&f->set, p);
	}
	snprintf(path, sizeof(path), "%s/t-0", f->dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/t-0/%s", f->dir, name);
	write_file(path, f->set.data, f->set.len);
	return f->set.len;
}

static void
test_directory(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char dir[128];
	const char *t, *a, *b, *c;

	/* An entry whose payload is a .klog name and a digit is 35 bytes,
	 * with a .kafka name 36. */
	segment(f, "00000000000000000070.klog", 1);
	segment(f, "00000000000000000000.klog", 2);
	segment(f, "00000000000000000105.kafka", 2);
	segment(f, "notes.txt", 1);
	snprintf(dir, sizeof(dir), "%s/t-0/", f->dir);
	klog_dump_opts_default(&o);
	assert_int_equal(run(f, dir, &o), 0);
	t = trace(f);
	a = strstr(t, "FILE base=0 named=1 last=0 size=70\n");
	b = strstr(t, "FILE base=70 named=1 last=0 size=35\n");
	c = strstr(t, "FILE base=105 named=1 last=1 size=72\n");
	assert_true(a != NULL && b != NULL && c != NULL && a < b && b < c);
	assert_null(strstr(t, "GAP"));
	assert_null(strstr(t, "notes"));
	assert_null(strstr(t, "t-0//"));
	assert_int_equal(count_lines(t, "{"), 5);

	/* Start in the middle segment: the first is not read. */
	o.start = 70;
	assert_int_equal(run(f, dir, &o), 0);
	t = trace(f);
	assert_null(strstr(t, "FILE base=0 "));
	assert_int_equal(count_lines(t, "{"), 3);
	o.start = 141;
	assert_int_equal(run(f, dir, &o), 0);
	assert_int_equal(count_lines(trace(f), "{"), 1);
	o.start = 177;
	assert_int_equal(run(f, dir, &o), 0);
	assert_int_equal(count_lines(trace(f), "{"), 0);
	o.start = 178;
	assert_int_equal(run(f, dir, &o), -KLOG_ERANGE);
	o.start = 71;
	assert_int_equal(run(f, dir, &o), -KLOG_ENOTBOUNDARY);

	/* A missing segment is a gap; a shorter name an overlap. */
	snprintf(dir, sizeof(dir), "%s/t-0/00000000000000000070.klog", f->dir);
	assert_int_equal(unlink(dir), 0);
	snprintf(dir, sizeof(dir), "%s/t-0", f->dir);
	o.start = -1;
	assert_int_equal(run(f, dir, &o), 0);
	assert_non_null(strstr(trace(f), "GAP offset 105: gap of 35 bytes after "
	    "the previous segment, which ends at 70\n"));
	segment(f, "00000000000000000100.klog", 1);
	assert_int_equal(run(f, dir, &o), 0);
	t = trace(f);
	assert_non_null(strstr(t, "GAP offset 100: gap of 30 bytes after "
	    "the previous segment, which ends at 70\n"));
	assert_non_null(strstr(t, "GAP offset 105: overlaps the previous "
	    "segment, which ends at 135\n"));
}

/*
 * A magic-2 entry of n records "r0", "r1", ... keyed "k"; with
 * bad_delta, its lastOffsetDelta off by one and its CRC-32C made to match
 * (only the batch's fields are wrong).  Returns its offset in the set.
 */
static size_t
batch(klog_buf_t *b, int n, int bad_delta)
{
	klog_batch_builder_t bb;
	size_t at = b->len;
	uint8_t *body;
	char v[8];

	klog_batch_begin(&bb, b, 1700000000000, KLOG_NO_PRODUCER, -1, -1);
	for (int i = 0; i < n; i++) {
		snprintf(v, sizeof(v), "r%d", i);
		klog_batch_add(&bb, b, &(klog_record_in_t){ v, strlen(v), "k",
		    1, 1700000000000 + i, NULL, 0 });
	}
	assert_int_equal(klog_batch_end(&bb, b), 0);
	if (!bad_delta)
		return at;
	body = b->data + at + KLOG_LENGTH_SIZE + KLOG_MAGIC2_HEADER;
	body[KLOG_BATCH_LAST_DELTA_AT + 3] ^= 1;
	klog_put_be32(b->data + at + 6, klog_crc32c(0, body, b->len - at -
	    KLOG_LENGTH_SIZE - KLOG_MAGIC2_HEADER));
	return at;
}

static void
test_magic2(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128], want[200];
	size_t b1, b2, b3;
	const char *t;

	m0(&f->set, "plain");
	b1 = batch(&f->set, 3, 0);
	b2 = batch(&f->set, 2, 1);
	b3 = batch(&f->set, 1, 0);
	m0(&f->set, "end");
	write_set(f, "m2", path, sizeof(path));
	klog_dump_opts_default(&o);
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	/* A batch refused for its fields is shown, reported, stepped over. */
	assert_int_equal(count_lines(t, "{"), 5);
	snprintf(want, sizeof(want), "CORRUPT offset %zu (byte 0x%zx): "
	    "magic-2 entry: batch's last offset delta is not its length + 3\n",
	    b2, b2);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "\"offset\":%zu,", b3);
	assert_non_null(strstr(t, want));
	assert_non_null(strstr(t, "\"payload\":\"end\"}"));
		assert_non_null(strstr(t, " entries=5 messages=5 "));
	assert_non_null(strstr(t, "codecs=5/0/0 crc=0 corrupt=1 "));

	/* Deep: the good batches' records, each at its entry's offset, the
	 * last one's next offset past it. */
	o.flags = KLOG_DUMP_DEEP;
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	assert_int_equal(count_lines(t, "{"), 9);
	snprintf(want, sizeof(want), "\"offset\":%zu,\"next_offset\":%zu,"
	    "\"pos\":%zu,", b1, b2, b1);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "\"kafka_offset\":%zu,\"key\":\"k\","
	    "\"timestamp\":1700000000002,\"payload\":\"r2\"}", b1 + 2);
	assert_non_null(strstr(t, want));
	assert_non_null(strstr(t, " entries=5 messages=7 "));

	/* -o past it: its length frames it. */
	klog_dump_opts_default(&o);
	o.start = (int64_t)b3;
	assert_int_equal(run(f, path, &o), 0);
	snprintf(want, sizeof(want), "END first=%zu next=%zu entries=2 ", b3,
	    f->set.len);
	assert_non_null(strstr(trace(f), want));
	o.start = (int64_t)b3 - 1;
	assert_int_equal(run(f, path, &o), -KLOG_ENOTBOUNDARY);

	/* -n counts the refused batch as an entry too. */
	klog_dump_opts_default(&o);
	o.count = 3;
	assert_int_equal(run(f, path, &o), 0);
	t = trace(f);
	snprintf(want, sizeof(want), "END first=0 next=%zu entries=3 ", b3);
	assert_non_null(strstr(t, want));
}

static void
test_magic2_summary(void **state)
{
	fixture_t *f = *state;
	klog_dump_opts_t o;
	char path[128];

	m0(&f->set, "plain");
	batch(&f->set, 3, 0);
	batch(&f->set, 2, 0);
	write_set(f, "sum", path, sizeof(path));
	klog_dump_opts_default(&o);
	assert_int_equal(run(f, path, &o), 0);
	assert_non_null(strstr(trace(f), "END first=0 "));
	assert_int_equal(f->batches, 2);
	assert_int_equal(f->records, 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_valid_file, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_chunk_sizes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_crc_mismatch_goes_on,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_stops_file, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_partial_tail, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_empty_file, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_deep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep_bad_wrappers, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_base_option, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_stops, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_directory, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_magic2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_magic2_summary, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
