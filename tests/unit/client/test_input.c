#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/client/input.h"
#include "klog/client/outfmt.h"

#define MAXREC 64

/* Records cut from a whole input, joined as "rec|rec|..." for comparing. */
typedef struct cut {
	char joined[4096];
	size_t njoined;
	int records;
	int rc;            /* the last klog_input_next() result */
} cut_t;

static void
take_all(klog_input_t *in, cut_t *c)
{
	const uint8_t *rec;
	size_t len;

	while ((c->rc = klog_input_next(in, &rec, &len)) == 1) {
		assert_true(c->njoined + len + 1 < sizeof(c->joined));
		memcpy(c->joined + c->njoined, rec, len);
		c->njoined += len;
		c->joined[c->njoined++] = '|';
		c->records++;
	}
}

/* Feed data in chunks of `chunk` bytes, taking records after each. */
static cut_t
split(const char *delim, size_t dlen, const void *data, size_t n,
    size_t chunk)
{
	klog_input_t in;
	cut_t c;

	memset(&c, 0, sizeof(c));
	assert_int_equal(klog_input_init(&in, delim, dlen, MAXREC), 0);
	for (size_t off = 0; off < n && c.rc >= 0; off += chunk) {
		size_t k = n - off < chunk ? n - off : chunk;

		assert_int_equal(klog_input_feed(&in, (const char *)data + off,
		    k), 0);
		take_all(&in, &c);
	}
	if (c.rc >= 0) {
		klog_input_set_eof(&in);
		take_all(&in, &c);
	}
	c.joined[c.njoined] = '\0';
	klog_input_free(&in);
	return c;
}

static void
check_split(const char *delim, const char *data, const char *want,
    int records)
{
	size_t n = strlen(data);

	for (size_t chunk = 1; chunk <= n + 1; chunk++) {
		cut_t c = split(delim, strlen(delim), data, n, chunk);

		assert_int_equal(c.rc, 0);
		assert_string_equal(c.joined, want);
		assert_int_equal(c.records, records);
	}
}

static void
test_lines(void **state)
{
	(void)state;
	check_split("\n", "a\nbb\nccc\n", "a|bb|ccc|", 3);
	/* No delimiter at the end: still a record. */
	check_split("\n", "a\nbb", "a|bb|", 2);
	/* Empty lines are records; a final delimiter adds none. */
	check_split("\n", "\n\na\n\n", "||a||", 4);
	check_split("\n", "", "", 0);
	check_split("\n", "\n", "|", 1);
}

static void
test_multibyte(void **state)
{
	(void)state;
	check_split("||", "ab||cd||", "ab|cd|", 2);
	check_split("||", "a|b||c|||d", "a|b|c||d|", 3);
	check_split("<>", "<<>>><>", "<|>>|", 2);
	check_split("abc", "ababcabcab", "ab||ab|", 3);
	check_split("\r\n", "GET /\r\nHost: x\r\n\r\n", "GET /|Host: x||", 3);
}

static void
test_nul(void **state)
{
	static const char data[] = "one\0\0two\0three";
	cut_t c;

	(void)state;
	for (size_t chunk = 1; chunk < sizeof(data); chunk++) {
		c = split("", 1, data, sizeof(data) - 1, chunk);
		assert_int_equal(c.rc, 0);
		assert_int_equal(c.records, 4);
		assert_memory_equal(c.joined, "one||two|three|", 15);
	}
}

static void
test_too_long(void **state)
{
	char big[MAXREC + 2];
	cut_t c;

	(void)state;
	memset(big, 'x', sizeof(big));
	/* Exactly the limit is fine, with or without a delimiter. */
	c = split("\n", 1, big, MAXREC, 7);
	assert_int_equal(c.rc, 0);
	assert_int_equal(c.records, 1);
	big[MAXREC] = '\n';
	c = split("\n", 1, big, MAXREC + 1, 5);
	assert_int_equal(c.records, 1);
	/* One more byte is refused, found at a delimiter or before it. */
	big[MAXREC] = 'x';
	big[MAXREC + 1] = '\n';
	c = split("\n", 1, big, MAXREC + 2, MAXREC + 2);
	assert_int_equal(c.rc, -KLOG_ETOOBIG);
	c = split("\n", 1, big, MAXREC + 1, 1);
	assert_int_equal(c.rc, -KLOG_ETOOBIG);
	c = split("\n", 1, big, MAXREC + 1, MAXREC + 1);
	assert_int_equal(c.rc, -KLOG_ETOOBIG);
	assert_int_equal(c.records, 0);
}

/*
 * Feed data in chunks, taking records and counting the ones too long,
 * which are dropped while the records around them still come.
 */
static cut_t
split_skipping(const char *delim, size_t dlen, const void *data, size_t n,
    size_t chunk, int *skipped)
{
	klog_input_t in;
	cut_t c;

	memset(&c, 0, sizeof(c));
	*skipped = 0;
	assert_int_equal(klog_input_init(&in, delim, dlen, MAXREC), 0);
	for (size_t off = 0; off < n + chunk; off += chunk) {
		size_t k = n - off < chunk ? n - off : chunk;

		if (off >= n)
			klog_input_set_eof(&in);
		else
			assert_int_equal(klog_input_feed(&in,
			    (const char *)data + off, k), 0);
		for (take_all(&in, &c); c.rc == -KLOG_ETOOBIG;
		    take_all(&in, &c))
			(*skipped)++;
		assert_int_equal(c.rc, 0);
	}
	c.joined[c.njoined] = '\0';
	klog_input_free(&in);
	return c;
}

/*
 * unterminated marks only the last record of an input that ends without
 * its delimiter, as a writer killed mid-record leaves it; fed in any
 * chunks, a record cut at a delimiter is never marked.
 */
static void
test_unterminated(void **state)
{
	static const struct {
		const char *delim, *data, *marks;
	} cases[] = {
		{ "\n", "a\nb\n", "00" },
		{ "\n", "a\nb", "01" },
		{ "\n", "a\n\nb", "001" },
		{ "::", "a::b:", "01" },
		{ "::", "a::b::", "00" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].data);

		for (size_t chunk = 1; chunk <= n; chunk++) {
			klog_input_t in;
			const uint8_t *rec;
			size_t len;
			char marks[8] = "";
			size_t k = 0;

			assert_int_equal(klog_input_init(&in, cases[i].delim,
			    strlen(cases[i].delim), MAXREC), 0);
			for (size_t off = 0; off < n; off += chunk) {
				size_t m = n - off < chunk ? n - off : chunk;

				assert_int_equal(klog_input_feed(&in,
				    cases[i].data + off, m), 0);
				if (off + m == n)
					klog_input_set_eof(&in);
				while (klog_input_next(&in, &rec, &len) == 1) {
					assert_true(k + 1 < sizeof(marks));
					marks[k++] = in.unterminated ? '1' : '0';
				}
			}
			marks[k] = '\0';
			assert_string_equal(marks, cases[i].marks);
			klog_input_free(&in);
		}
	}
}

/* A record too long is reported once and skipped, whole or streaming. */
static void
test_too_long_skipped(void **state)
{
	/* Far longer than the 4 MiB buffer: it is never held whole. */
	size_t huge = (9u << 20), n;
	char *data = malloc(huge + 64);
	static const size_t chunks[] = { 1, 7, MAXREC + 3, 1u << 20 };
	cut_t c;
	int skipped;

	(void)state;
	assert_non_null(data);
	/* "a", MAXREC+1 x's, "b", then a record too long at EOF. */
	n = 0;
	data[n++] = 'a';
	data[n++] = '\n';
	memset(data + n, 'x', MAXREC + 1);
	n += MAXREC + 1;
	memcpy(data + n, "\nb\n", 3);
	n += 3;
	memset(data + n, 'y', MAXREC + 5);
	n += MAXREC + 5;
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		c = split_skipping("\n", 1, data, n, chunks[i], &skipped);
		assert_string_equal(c.joined, "a|b|");
		assert_int_equal(skipped, 2);
	}
	/* A multi-byte delimiter split around the end of the long record. */
	n = 0;
	memset(data + n, 'x', MAXREC + 10);
	n += MAXREC + 10;
	memcpy(data + n, "::ok::", 6);
	n += 6;
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		c = split_skipping("::", 2, data, n, chunks[i], &skipped);
		assert_string_equal(c.joined, "ok|");
		assert_int_equal(skipped, 1);
	}
	/* One line of 9 MiB between two short ones. */
	memcpy(data, "first\n", 6);
	memset(data + 6, 'z', huge);
	memcpy(data + 6 + huge, "\nlast", 5);
	c = split_skipping("\n", 1, data, huge + 11, 1u << 20, &skipped);
	assert_string_equal(c.joined, "first|last|");
	assert_int_equal(skipped, 1);
	free(data);
}

/* Many records through a real descriptor, across buffer refills. */
static void
test_fill_from_pipe(void **state)
{
	klog_input_t in;
	klog_err_t err = { 0 };
	const uint8_t *rec;
	size_t len;
	int fds[2], rc, n = 0;
	char line[32];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		for (int i = 0; i < 300000; i++) {
			int k = snprintf(line, sizeof(line), "line %d::", i);

			if (write(fds[1], line, (size_t)k) != k)
				_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(klog_input_init(&in, "::", 2, 1000), 0);
	do {
		rc = klog_input_fill(&in, fds[0], &err);
		assert_true(rc >= 0);
		while (klog_input_next(&in, &rec, &len) == 1) {
			int k = snprintf(line, sizeof(line), "line %d", n++);

			assert_int_equal(len, (size_t)k);
			assert_memory_equal(rec, line, len);
		}
	} while (rc > 0);
	assert_int_equal(n, 300000);
	close(fds[0]);
	klog_input_free(&in);
}

static int
envelope(const char *line, klog_input_record_t *rec, klog_err_t *err)
{
	return klog_input_envelope((const uint8_t *)line, strlen(line), rec,
	    NULL, err);
}

static int
envelope_at(const char *line, klog_input_record_t *rec,
    klog_input_source_t *src)
{
	klog_err_t err = { 0 };

	return klog_input_envelope((const uint8_t *)line, strlen(line), rec,
	    src, &err);
}

/* The source position --source-offset-file takes from an envelope. */
static void
test_envelope_source(void **state)
{
	klog_input_source_t src;
	klog_err_t err = { 0 };
	klog_input_record_t rec;
	const char *ok = "{\"topic\":\"ng\\u0069nx\",\"partition\":3,"
	    "\"offset\":10,\"next_offset\":21,\"size\":1,\"payload\":\"x\"}";
	const char *bad[] = {
		"{\"partition\":3,\"next_offset\":21,\"payload\":\"x\"}",
		"{\"topic\":\"a b\",\"partition\":3,\"next_offset\":21,"
		    "\"payload\":\"x\"}",
		"{\"topic\":\"t\",\"next_offset\":21,\"payload\":\"x\"}",
		"{\"topic\":\"t\",\"partition\":-1,\"next_offset\":21,"
		    "\"payload\":\"x\"}",
		"{\"topic\":\"t\",\"partition\":0,\"payload\":\"x\"}",
		"{\"topic\":\"t\",\"partition\":0,\"next_offset\":\"21\","
		    "\"payload\":\"x\"}",
	};

	(void)state;
	klog_input_record_init(&rec);
	assert_int_equal(klog_input_envelope((const uint8_t *)ok,
	    strlen(ok), &rec, &src, &err), 1);
	assert_string_equal(src.topic, "nginx");
	assert_int_equal(src.partition, 3);
	assert_int_equal(src.next_offset, 21);
	assert_int_equal(src.offset, 10);
	assert_int_equal(rec.payload.len, 1);
	assert_int_equal(envelope_at("{\"topic\":\"t\",\"partition\":0,"
	    "\"next_offset\":21,\"payload\":\"x\"}", &rec, &src), 1);
	assert_int_equal(src.offset, -1);
	assert_int_equal(envelope_at("{\"topic\":\"t\",\"partition\":0,"
	    "\"offset\":-1,\"next_offset\":21,\"payload\":\"x\"}", &rec,
	    &src), -KLOG_EINVAL);
	/* Without src, the position is not asked for. */
	assert_int_equal(envelope(bad[0], &rec, &err), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(klog_input_envelope((const uint8_t *)bad[i],
		    strlen(bad[i]), &rec, &src, &err), -KLOG_EINVAL);
	assert_int_equal(klog_input_envelope((const uint8_t *)"  ", 2, &rec,
	    &src, &err), 0);
	klog_input_record_free(&rec);
}

static void
test_envelope(void **state)
{
	klog_err_t err = { 0 };
	klog_input_record_t r;

	(void)state;
	klog_input_record_init(&r);
	assert_int_equal(envelope("{\"topic\":\"t\",\"partition\":0,"
	    "\"offset\":0,\"next_offset\":18,\"size\":9,"
	    "\"payload\":\"tab\\there\\n\"}", &r, &err), 1);
	assert_int_equal(r.payload.len, 9);
	assert_memory_equal(r.payload.data, "tab\there\n", 9);
	/* A plain message's envelope: no key, timestamp or headers. */
	assert_false(r.has_key);
	assert_false(r.null_payload);
	assert_int_equal(r.timestamp, KLOG_NO_TIMESTAMP);
	assert_int_equal(r.header_count, 0);
	assert_int_equal(envelope("{\"payload_base64\":\"YQD/CmI=\"}", &r,
	    &err), 1);
	assert_int_equal(r.payload.len, 5);
	assert_memory_equal(r.payload.data, "a\0\xff\nb", 5);
	assert_int_equal(envelope("{\"payload\":\"\"}", &r, &err), 1);
	assert_int_equal(r.payload.len, 0);
	assert_false(r.null_payload);
	assert_int_equal(envelope("  \t\r", &r, &err), 0);
	assert_int_equal(envelope("", &r, &err), 0);
	klog_input_record_free(&r);
}

/* What klog-consume -J writes of a magic-2 record comes back whole. */
static void
test_envelope_record(void **state)
{
	klog_err_t err = { 0 };
	klog_input_record_t r;

	(void)state;
	klog_input_record_init(&r);
	assert_int_equal(envelope("{\"topic\":\"t\",\"partition\":0,"
	    "\"offset\":0,\"next_offset\":90,\"size\":3,\"key\":\"k\\u00e9\","
	    "\"timestamp\":1700000000123,\"headers\":[{\"key\":\"a\","
	    "\"value\":\"1\"},{\"key_base64\":\"/w==\",\"value_base64\":"
	    "\"AAE=\"},{\"key\":\"n\",\"value\":null}],\"payload\":\"abc\"}",
	    &r, &err), 1);
	assert_true(r.has_key);
	assert_int_equal(r.key.len, 3);
	assert_memory_equal(r.key.data, "k\xc3\xa9", 3);
	assert_int_equal(r.timestamp, 1700000000123);
	assert_int_equal(r.header_count, 3);
	assert_int_equal(r.hdrs[0].key_len, 1);
	assert_memory_equal(r.hdrs[0].key, "a", 1);
	assert_int_equal(r.hdrs[0].value_len, 1);
	assert_memory_equal(r.hdrs[0].value, "1", 1);
	assert_int_equal(r.hdrs[1].key_len, 1);
	assert_memory_equal(r.hdrs[1].key, "\xff", 1);
	assert_int_equal(r.hdrs[1].value_len, 2);
	assert_memory_equal(r.hdrs[1].value, "\0\1", 2);
	assert_null(r.hdrs[2].value);
	assert_int_equal(r.hdrs[2].value_len, -1);
	assert_int_equal(r.payload.len, 3);
	/* The next line starts afresh; null key, null payload, no time. */
	assert_int_equal(envelope("{\"key\":null,\"timestamp\":null,"
	    "\"headers\":[],\"payload\":null}", &r, &err), 1);
	assert_false(r.has_key);
	assert_true(r.null_payload);
	assert_int_equal(r.payload.len, 0);
	assert_int_equal(r.timestamp, KLOG_NO_TIMESTAMP);
	assert_int_equal(r.header_count, 0);
	assert_int_equal(envelope("{\"key_base64\":\"\",\"timestamp\":-1,"
	    "\"payload\":\"x\"}", &r, &err), 1);
	assert_true(r.has_key);
	assert_int_equal(r.key.len, 0);
	assert_int_equal(r.timestamp, KLOG_NO_TIMESTAMP);
	klog_input_record_free(&r);
}

static void
check_bad(const char *line, const char *why)
{
	klog_err_t err = { 0 };
	klog_input_record_t r;

	klog_input_record_init(&r);
	assert_int_equal(envelope(line, &r, &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, why);
	klog_input_record_free(&r);
}

static void
test_envelope_errors(void **state)
{
	(void)state;
	check_bad("hello", "not a JSON object of scalars and headers");
	check_bad("{\"payload\":\"x\"",
	    "not a JSON object of scalars and headers");
	check_bad("{\"topic\":\"t\"}", "no payload or payload_base64");
	check_bad("{\"payload\":\"x\",\"payload_base64\":\"eA==\"}",
	    "both payload and payload_base64");
	check_bad("{\"payload\":5}", "payload: not a string");
	check_bad("{\"payload_base64\":\"e\"}",
	    "payload_base64: invalid base64");
	check_bad("{\"payload\":\"abc\",\"size\":4}",
	    "size 4 does not match the payload's 3 bytes");
	check_bad("{\"payload\":\"abc\",\"size\":\"3\"}", "size: not a number");
	check_bad("{\"payload\":\"x\",\"key\":\"k\",\"key_base64\":\"aw==\"}",
	    "both key and key_base64");
	check_bad("{\"payload\":\"x\",\"key\":7}", "key: not a string");
	check_bad("{\"payload\":\"x\",\"timestamp\":\"1\"}",
	    "timestamp: not a number");
	check_bad("{\"payload\":\"x\",\"timestamp\":1.5}",
	    "timestamp 1.5: invalid");
	check_bad("{\"payload\":\"x\",\"headers\":[{\"value\":\"v\"}]}",
	    "headers: no key or key_base64");
	check_bad("{\"payload\":\"x\",\"headers\":[{\"key\":\"k\"}]}",
	    "headers: no value or value_base64");
	check_bad("{\"payload\":\"x\",\"headers\":[{\"key\":null,"
	    "\"value\":\"v\"}]}", "headers: key: not a string");
	check_bad("{\"payload\":\"x\",\"headers\":[{\"key\":\"k\","
	    "\"value_base64\":\"!\"}]}", "headers: value_base64: invalid "
	    "base64");
	check_bad("{\"payload\":\"x\",\"headers\":[],\"headers\":[]}",
	    "headers twice");
	check_bad("{\"payload\":\"x\",\"headers\":[[]]}",
	    "not a JSON object of scalars and headers");
	check_bad("{\"payload\":\"x\",\"headers\":{\"a\":\"b\"}}",
	    "not a JSON object of scalars and headers");
	check_bad("{\"payload\":\"x\",\"other\":[1]}",
	    "not a JSON object of scalars and headers");
}

/* Random bytes, mostly text, some control bytes, some not UTF-8. */
static void
fill(uint8_t *p, size_t n, int round)
{
	for (size_t i = 0; i < n; i++)
		p[i] = round % 3 == 0 ? (uint8_t)rand() :
		    (uint8_t)(rand() % 0x80);
}

/* What klog-consume -J writes, klog-produce -J reads back exactly: the
 * payload, and a record's key, timestamp and headers. */
static void
test_envelope_round_trip(void **state)
{
	klog_outfmt_t *f = NULL;
	klog_err_t err = { 0 };
	klog_buf_t line, rbytes;
	klog_input_record_t back;
	klog_record_t rd;
	klog_header_t h[3];
	uint8_t payload[300], key[40], hk[3][8], hv[3][20];
	klog_outfmt_rec_t r = { .topic = "t", .topic_len = 1 };

	(void)state;
	klog_buf_init(&line);
	klog_buf_init(&rbytes);
	klog_input_record_init(&back);
	assert_int_equal(klog_outfmt_json(&f), 0);
	srand(7);
	for (int round = 0; round < 300; round++) {
		size_t n = (size_t)rand() % sizeof(payload);
		size_t kn = (size_t)rand() % sizeof(key);
		uint32_t nh = (uint32_t)(round % 4);

		fill(payload, n, round);
		fill(key, kn, round);
		for (uint32_t i = 0; i < nh; i++) {
			h[i].key_len = (size_t)rand() % sizeof(hk[i]);
			fill(hk[i], h[i].key_len, round + (int)i);
			h[i].key = hk[i];
			h[i].value_len = rand() % 5 == 0 ? -1 :
			    rand() % (int)sizeof(hv[i]);
			h[i].value = h[i].value_len < 0 ? NULL : hv[i];
			fill(hv[i], h[i].value_len < 0 ? 0 :
			    (size_t)h[i].value_len, round);
		}
		/* The headers as a record stores them (record.h). */
		klog_buf_reset(&rbytes);
		klog_record_write(&rbytes, 0, 0, &(klog_record_in_t){ "", 0,
		    NULL, 0, 0, h, nh });
		assert_int_equal(klog_record_read(rbytes.data, rbytes.len, &rd),
		    0);
		r.payload = round % 7 == 6 ? NULL : payload;
		r.payload_len = r.payload ? n : 0;
		r.key = round % 2 ? key : NULL;
		r.key_len = r.key ? (int32_t)kn : -1;
		r.timestamp = round % 5 == 0 ? KLOG_NO_TIMESTAMP :
		    (int64_t)rand() * 1000;
		r.headers = rd.headers;
		r.headers_len = rd.headers_len;
		r.header_count = rd.header_count;
		klog_buf_reset(&line);
		klog_outfmt_render(f, &r, &line);
		assert_int_equal(klog_input_envelope(line.data, line.len - 1,
		    &back, NULL, &err), 1);
		assert_int_equal(back.null_payload, r.payload == NULL);
		assert_int_equal(back.payload.len, r.payload_len);
		if (r.payload_len > 0)
			assert_memory_equal(back.payload.data, payload, n);
		assert_int_equal(back.has_key, r.key != NULL);
		if (r.key != NULL) {
			assert_int_equal(back.key.len, kn);
			if (kn > 0)
				assert_memory_equal(back.key.data, key, kn);
		}
		assert_int_equal(back.timestamp, r.timestamp);
		assert_int_equal(back.header_count, nh);
		for (uint32_t i = 0; i < nh; i++) {
			assert_int_equal(back.hdrs[i].key_len, h[i].key_len);
			assert_memory_equal(back.hdrs[i].key, h[i].key,
			    h[i].key_len);
			assert_int_equal(back.hdrs[i].value_len,
			    h[i].value_len);
			if (h[i].value_len > 0)
				assert_memory_equal(back.hdrs[i].value,
				    h[i].value, (size_t)h[i].value_len);
		}
	}
	klog_outfmt_free(f);
	klog_buf_free(&line);
	klog_buf_free(&rbytes);
	klog_input_record_free(&back);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_multibyte),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_too_long_skipped),
		cmocka_unit_test(test_unterminated),
		cmocka_unit_test(test_fill_from_pipe),
		cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_envelope_source),
		cmocka_unit_test(test_envelope_record),
		cmocka_unit_test(test_envelope_errors),
		cmocka_unit_test(test_envelope_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
