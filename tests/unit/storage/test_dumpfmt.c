/*
 * klog-dump's output (lib/storage/dumpfmt.c): text lines, NDJSON records,
 * summaries and problem descriptions, magic-2 entries and their records'
 * keys, timestamps and headers among them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/storage/dump.h"
#include "klog/storage/format.h"
#include "klog/storage/record.h"

#define TS 1700000000000    /* 2023-11-14T22:13:20.000Z */

static void
test_render_text(void **state)
{
	klog_dump_event_t ev;
	klog_msg_t m;
	klog_buf_t b;
	const char *want =
	    "offset=110 pos=10 size=6 magic=0 codec=none crc=0x00000001 "
	    "computed=0x00000002 status=crc-mismatch payload=\"a\\\"\\\\\\n\\x00"
	    "\\xff\"\n"
	    "  offset=110 pos=10 size=6 magic=1 codec=gzip crc=0x00000001 "
	    "computed=0x00000002 status=crc-mismatch payload=\"a\\\"\"...\n"
	    "  offset=110 pos=10 size=6 magic=1 codec=gzip crc=0x00000001 "
	    "computed=0x00000002 status=crc-mismatch\n";

	(void)state;
	memset(&ev, 0, sizeof(ev));
	memset(&m, 0, sizeof(m));
	ev.kind = KLOG_DUMP_MESSAGE;
	ev.file = "f";
	ev.base = 100;
	ev.msg = &m;
	m.offset = 110;
	m.payload = (const uint8_t *)"a\"\\\n\0\xff";
	m.payload_len = 6;
	m.crc_stored = 1;
	m.crc_computed = 2;
	klog_buf_init(&b);
	klog_dump_render_text(&b, &ev, 40);
	m.depth = 1;
	m.magic = 1;
	m.codec = KLOG_CODEC_GZIP;
	klog_dump_render_text(&b, &ev, 2);
	klog_dump_render_text(&b, &ev, 0);
	klog_buf_put(&b, "", 1);
	assert_string_equal((char *)b.data, want);
	klog_buf_free(&b);
}

static void
test_render_json_path(void **state)
{
	klog_dump_event_t ev;
	klog_msg_t m;
	klog_buf_t b;

	(void)state;
	memset(&ev, 0, sizeof(ev));
	memset(&m, 0, sizeof(m));
	ev.kind = KLOG_DUMP_MESSAGE;
	ev.file = "dir/\xff\"x\xc3\xa9";
	ev.msg = &m;
	m.payload = (const uint8_t *)"";
	m.valid = 1;
	klog_buf_init(&b);
	klog_dump_render_json(&b, &ev);
	klog_buf_put(&b, "", 1);
	assert_string_equal((char *)b.data, "{\"file\":\"dir/\xef\xbf\xbd\\\"x"
	    "\xc3\xa9\",\"offset\":0,\"next_offset\":0,\"pos\":0,\"length\":0,"
	    "\"size\":0,\"magic\":0,\"attributes\":0,\"codec\":\"none\","
	    "\"depth\":0,\"crc\":0,\"crc_computed\":0,\"valid\":true,"
	    "\"payload\":\"\"}\n");
	klog_buf_free(&b);
}

static void
test_render_summary(void **state)
{
	klog_dump_summary_t s;
	klog_dump_event_t ev;
	klog_buf_t b;

	(void)state;
	memset(&ev, 0, sizeof(ev));
	memset(&s, 0, sizeof(s));
	ev.kind = KLOG_DUMP_END;
	ev.file = "seg";
	ev.base = 5;
	ev.summary = &s;
	s.first_offset = 5;
	s.next_offset = 33;
	s.entries = 2;
	s.messages = 4;
	s.entry_bytes = 28;
	s.payload_bytes = 9;
	s.codecs[0] = 1;
	s.codecs[1] = 1;
	s.codecs[4] = 1;
	s.batches = 1;
	s.records = 3;
	s.partial_bytes = 3;
	klog_buf_init(&b);
	klog_dump_render_summary(&b, &ev, 0);
	klog_dump_render_summary(&b, &ev, 1);
	klog_buf_put(&b, "", 1);
	assert_string_equal((char *)b.data,
	    "seg: base=5 first=5 next=33 entries=2 messages=4 batches=1 "
	    "records=3 payload_bytes=9 overhead_bytes=19 overhead_per_msg=9.50 "
	    "codecs=none:1,gzip:1,snappy:0,lz4:0,zstd:1 crc_errors=0 corrupt=0 "
	    "unchecked=0 partial_bytes=3 status=partial\n"
	    "{\"file\":\"seg\",\"base\":5,\"first_offset\":5,\"next_offset\":33,"
	    "\"entries\":2,\"messages\":4,\"batches\":1,\"records\":3,"
	    "\"payload_bytes\":9,\"overhead_bytes\":19,"
	    "\"overhead_per_message\":9.50,\"codecs\":{\"none\":1,\"gzip\":1,"
	    "\"snappy\":0,\"lz4\":0,\"zstd\":1},\"crc_errors\":0,"
	    "\"corrupt\":0,\"unchecked\":0,\"partial_bytes\":3,"
	    "\"status\":\"partial\"}\n");
	klog_buf_free(&b);
}

static void
test_is_problem(void **state)
{
	klog_dump_event_t ev;
	klog_msg_t m;

	(void)state;
	memset(&ev, 0, sizeof(ev));
	memset(&m, 0, sizeof(m));
	ev.msg = &m;
	ev.kind = KLOG_DUMP_MESSAGE;
	m.valid = 1;
	assert_false(klog_dump_is_problem(&ev, 0));
	m.valid = 0;
	assert_true(klog_dump_is_problem(&ev, 1));
	ev.kind = KLOG_DUMP_CORRUPT;
	assert_true(klog_dump_is_problem(&ev, 1));
	ev.kind = KLOG_DUMP_GAP;
	assert_true(klog_dump_is_problem(&ev, 1));
	ev.kind = KLOG_DUMP_UNCHECKED;
	assert_false(klog_dump_is_problem(&ev, 0));
	ev.kind = KLOG_DUMP_PARTIAL;
	ev.last = 0;
	assert_true(klog_dump_is_problem(&ev, 1));
	ev.last = 1;
	assert_true(klog_dump_is_problem(&ev, 0));
	assert_false(klog_dump_is_problem(&ev, 1));
	ev.kind = KLOG_DUMP_END;
	assert_false(klog_dump_is_problem(&ev, 0));
}

/* One magic-2 entry built with record.h's builder: 2 records, the first
 * keyed with headers, the second with a null key and a null value. */
static void
build_batch(klog_buf_t *e, int64_t producer)
{
	klog_header_t h[3] = {
		{ (const uint8_t *)"h", 1, (const uint8_t *)"x", 1 },
		{ (const uint8_t *)"a=b,c", 5, (const uint8_t *)"\xff,=", 3 },
		{ (const uint8_t *)"nul", 3, NULL, -1 },
	};
	klog_batch_builder_t bb;

	klog_buf_init(e);
	klog_batch_begin(&bb, e, TS, producer, 2, 5);
	klog_batch_add(&bb, e, &(klog_record_in_t){ "v1", 2, "k1", 2, TS, h,
	    3 });
	klog_batch_add(&bb, e, &(klog_record_in_t){ NULL, 0, NULL, 0, TS + 1234,
	    NULL, 0 });
	assert_int_equal(klog_batch_end(&bb, e), 0);
}

/*
 * The i-th message the iterator gives of the entry e at offset, with
 * flags: the entry itself (shallow), or its i-th record (deep).  The
 * iterator in *it keeps the pointers alive; the caller frees it.
 */
static void
iter_msg(klog_iter_t *it, const klog_buf_t *e, int64_t offset,
    unsigned flags, int i, klog_msg_t *m)
{
	klog_iter_init(it, e->data, e->len, offset, flags, 0);
	for (int j = 0; j <= i; j++)
		assert_int_equal(klog_iter_next(it, m), 1);
}

static void
entry_msg(klog_iter_t *it, const klog_buf_t *e, int64_t offset,
    klog_msg_t *m)
{
	iter_msg(it, e, offset, 0, 0, m);
}

static void
record_msg(klog_iter_t *it, const klog_buf_t *e, int64_t offset, int i,
    klog_msg_t *m)
{
	iter_msg(it, e, offset, KLOG_ITER_DEEP, i, m);
}

static void
message_event(klog_dump_event_t *ev, const klog_msg_t *m)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = KLOG_DUMP_MESSAGE;
	ev->file = "seg";
	ev->base = 100;
	ev->offset = m->offset;
	ev->msg = m;
}

static void
test_batch_text(void **state)
{
	klog_dump_event_t ev;
	klog_buf_t e, b;
	klog_iter_t it;
	klog_msg_t m;
	uint32_t crc;
	char want[512];

	(void)state;
	build_batch(&e, 1000);
	entry_msg(&it, &e, 110, &m);
	message_event(&ev, &m);
	klog_buf_init(&b);
	klog_dump_render_text(&b, &ev, 40);
	crc = m.crc_stored;
	/* No producer: no producer fields. */
	klog_iter_free(&it);
	klog_buf_free(&e);
	build_batch(&e, KLOG_NO_PRODUCER);
	entry_msg(&it, &e, 110, &m);
	klog_dump_render_text(&b, &ev, 40);
	klog_buf_put(&b, "", 1);
	snprintf(want, sizeof(want),
	    "offset=110 pos=10 size=%u magic=2 codec=none crc32c=0x%08x "
	    "computed=0x%08x status=ok records=2 timestamp_type=CreateTime "
	    "first_timestamp=1700000000000 max_timestamp=1700000001234 "
	    "producer_id=1000 producer_epoch=2 base_sequence=5\n"
	    "offset=110 pos=10 size=%u magic=2 codec=none crc32c=0x%08x "
	    "computed=0x%08x status=ok records=2 timestamp_type=CreateTime "
	    "first_timestamp=1700000000000 max_timestamp=1700000001234\n",
	    m.payload_len, crc, crc, m.payload_len, m.crc_stored,
	    m.crc_stored);
	assert_string_equal((char *)b.data, want);
	klog_iter_free(&it);
	klog_buf_free(&b);
	klog_buf_free(&e);
}

static void
test_record_text(void **state)
{
	klog_dump_event_t ev;
	klog_buf_t e, b;
	klog_iter_t it;
	klog_msg_t m;

	(void)state;
	build_batch(&e, KLOG_NO_PRODUCER);
	klog_buf_init(&b);
	record_msg(&it, &e, 110, 0, &m);
	message_event(&ev, &m);
	klog_dump_render_text(&b, &ev, 40);
	klog_dump_render_text(&b, &ev, 1);
	klog_dump_render_text(&b, &ev, 0);
	klog_iter_free(&it);
	record_msg(&it, &e, 110, 1, &m);
	klog_dump_render_text(&b, &ev, 40);
	klog_buf_put(&b, "", 1);
	assert_string_equal((char *)b.data,
	    "  offset=110 kafka_offset=110 pos=10 size=2 magic=2 "
	    "timestamp=1700000000000 time=2023-11-14T22:13:20.000Z key=\"k1\" "
	    "headers=\"h=x,a\\x3db\\x2cc=\\xff\\x2c\\x3d,nul\" payload=\"v1\"\n"
	    "  offset=110 kafka_offset=110 pos=10 size=2 magic=2 "
	    "timestamp=1700000000000 time=2023-11-14T22:13:20.000Z key=\"k\"... "
	    "headers=\"h=x,a\\x3db\\x2cc=\\xff\\x2c\\x3d,nul\" payload=\"v\"...\n"
	    "  offset=110 kafka_offset=110 pos=10 size=2 magic=2 "
	    "timestamp=1700000000000 time=2023-11-14T22:13:20.000Z\n"
	    "  offset=110 kafka_offset=111 pos=10 size=0 magic=2 "
	    "timestamp=1700000001234 time=2023-11-14T22:13:21.234Z "
	    "payload=null\n");
	klog_iter_free(&it);
	klog_buf_free(&b);
	klog_buf_free(&e);
}

static void
test_record_json(void **state)
{
	klog_dump_event_t ev;
	klog_buf_t e, b;
	klog_iter_t it;
	klog_msg_t m;

	(void)state;
	build_batch(&e, KLOG_NO_PRODUCER);
	klog_buf_init(&b);
	record_msg(&it, &e, 110, 0, &m);
	message_event(&ev, &m);
	klog_dump_render_json(&b, &ev);
	klog_iter_free(&it);
	record_msg(&it, &e, 110, 1, &m);
	m.timestamp = KLOG_NO_TIMESTAMP;
	klog_dump_render_json(&b, &ev);
	klog_buf_put(&b, "", 1);
	assert_string_equal((char *)b.data,
	    "{\"file\":\"seg\",\"offset\":110,\"next_offset\":110,\"pos\":10,"
	    "\"length\":30,\"size\":2,\"magic\":2,\"attributes\":0,"
	    "\"codec\":\"none\",\"depth\":1,\"valid\":true,"
	    "\"kafka_offset\":110,\"key\":\"k1\",\"timestamp\":1700000000000,"
	    "\"headers\":[{\"key\":\"h\",\"value\":\"x\"},{\"key\":\"a=b,c\","
	    "\"value_base64\":\"/yw9\"},{\"key\":\"nul\",\"value\":null}],"
	    "\"payload\":\"v1\"}\n"
	    "{\"file\":\"seg\",\"offset\":110,\"next_offset\":198,\"pos\":10,"
	    "\"length\":8,\"size\":0,\"magic\":2,\"attributes\":0,"
	    "\"codec\":\"none\",\"depth\":1,\"valid\":true,"
	    "\"kafka_offset\":111,\"payload\":null}\n");
	klog_iter_free(&it);
	klog_buf_free(&b);
	klog_buf_free(&e);
}

static void
test_batch_json(void **state)
{
	klog_dump_event_t ev;
	klog_buf_t e, b;
	klog_iter_t it;
	klog_msg_t m;
	char want[256];

	(void)state;
	build_batch(&e, 7);
	/* LogAppendTime: the bit in the attributes, both copies. */
	e.data[10 + 1] |= KLOG_BATCH_LOG_APPEND_TIME;
	e.data[5] |= KLOG_BATCH_LOG_APPEND_TIME;
	entry_msg(&it, &e, 0, &m);
	message_event(&ev, &m);
	ev.base = 0;
	klog_buf_init(&b);
	klog_dump_render_json(&b, &ev);
	klog_buf_put(&b, "", 1);
	snprintf(want, sizeof(want), "\"depth\":0,\"crc\":%u,"
	    "\"crc_computed\":%u,\"valid\":false,\"records\":2,"
	    "\"timestamp_type\":\"LogAppendTime\",\"first_timestamp\":"
	    "1700000000000,\"max_timestamp\":1700000001234,\"producer_id\":7,"
	    "\"producer_epoch\":2,\"base_sequence\":5,\"payload_base64\":\"",
	    m.crc_stored, m.crc_computed);
	assert_non_null(strstr((char *)b.data, want));
	assert_non_null(strstr((char *)b.data, "\"attributes\":8,"));
	klog_iter_free(&it);
	klog_buf_free(&b);
	klog_buf_free(&e);
}

static void
test_describe_batch(void **state)
{
	klog_dump_event_t ev;
	klog_buf_t e, b;
	klog_iter_t it;
	klog_msg_t m;

	(void)state;
	build_batch(&e, KLOG_NO_PRODUCER);
	entry_msg(&it, &e, 110, &m);
	m.crc_computed = 0x1234;
	m.valid = 0;
	message_event(&ev, &m);
	klog_buf_init(&b);
	klog_dump_describe(&b, &ev);
	klog_buf_put(&b, "\n", 1);
	ev.kind = KLOG_DUMP_CORRUPT;
	ev.what = "lastOffsetDelta is not the entry's length + 3";
	klog_dump_describe(&b, &ev);
	klog_buf_put(&b, "\n", 1);
	ev.kind = KLOG_DUMP_UNCHECKED;
	ev.what = "its codec cannot be read";
	klog_dump_describe(&b, &ev);
	klog_buf_put(&b, "", 1);
	assert_string_equal(strchr((char *)b.data, '\n') + 1,
	    "offset 110 (byte 0xa): magic-2 entry: lastOffsetDelta is not the "
	    "entry's length + 3\n"
	    "offset 110 (byte 0xa): its codec cannot be read; its records are "
	    "not checked");
	assert_memory_equal(b.data, "offset 110 (byte 0xa): crc32c mismatch "
	    "(stored 0x", 46);
	klog_iter_free(&it);
	klog_buf_free(&b);
	klog_buf_free(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render_text),
		cmocka_unit_test(test_render_json_path),
		cmocka_unit_test(test_render_summary),
		cmocka_unit_test(test_is_problem),
		cmocka_unit_test(test_batch_text),
		cmocka_unit_test(test_record_text),
		cmocka_unit_test(test_record_json),
		cmocka_unit_test(test_batch_json),
		cmocka_unit_test(test_describe_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
