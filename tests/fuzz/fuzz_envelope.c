/*
 * libFuzzer target for klog-produce's input (lib/client/input.c) and the JSON it
 * reads (lib/base/json.c): arbitrary bytes as a -J envelope line, as a flat JSON
 * object, as base64, as UTF-8, and as a stream cut into records at a
 * delimiter.
 *
 * Checks, besides not crashing or leaking: an envelope that decodes
 * re-encodes (klog-consume -J) to one that decodes to the same record
 * (payload, key, timestamp, headers);
 * every member view lies inside the input; a JSON string that unescapes
 * gives valid UTF-8 that escapes and unescapes back to itself; base64
 * decoding accepts exactly the canonical encodings; klog_utf8_valid()
 * agrees with a plain RFC 3629 decoder; and the splitter, fed in uneven
 * pieces, cuts exactly where a reference split does, multi-byte delimiters
 * straddling pieces included, and reports a record over the limit once and
 * goes on after it.  A broken invariant aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/base/json.h"
#include "klog/client/input.h"
#include "envrec.h"
#include "klog/client/outfmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAXM 16

static int
same(const klog_buf_t *b, const void *p, size_t n)
{
	return b->len == n && (n == 0 || memcmp(b->data, p, n) == 0);
}

static void
envelope(const uint8_t *data, size_t size)
{
	klog_outfmt_rec_t r = { "t", 1, 0, 0, 0, NULL, 0, NULL, -1,
	    KLOG_NO_TIMESTAMP, NULL, 0, 0 };
	klog_input_record_t rec, again;
	klog_buf_t line, hb;
	klog_outfmt_t *f;
	klog_err_t err = { 0 };
	int rc;

	klog_input_record_init(&rec);
	klog_input_record_init(&again);
	klog_buf_init(&line);
	klog_buf_init(&hb);
	rc = klog_input_envelope(data, size, &rec, NULL, &err);
	CHECK(rc == 0 || rc == 1 || rc == -KLOG_EINVAL);
	CHECK(rc != -KLOG_EINVAL || err.msg[0] != '\0');
	CHECK(rc != 0 || (rec.payload.len == 0 && !rec.has_key &&
	    rec.header_count == 0));
	if (rc == 1) {
		r.payload = rec.null_payload ? NULL : rec.payload.len ?
		    rec.payload.data : (const uint8_t *)"";
		r.payload_len = rec.payload.len;
		r.key = !rec.has_key ? NULL : rec.key.len ? rec.key.data :
		    (const uint8_t *)"";
		r.key_len = rec.has_key ? (int32_t)rec.key.len : -1;
		r.timestamp = rec.timestamp;
		envrec_headers(&hb, rec.hdrs, rec.header_count, &r);
		CHECK(klog_outfmt_json(&f) == 0);
		klog_outfmt_render(f, &r, &line);
		klog_outfmt_free(f);
		CHECK(klog_input_envelope(line.data, line.len, &again, NULL,
		    &err) == 1);
		CHECK(envrec_same(&again, &r));
	}
	klog_input_record_free(&rec);
	klog_input_record_free(&again);
	klog_buf_free(&line);
	klog_buf_free(&hb);
}

static void
check_view(const uint8_t *data, size_t size, const char *p, size_t n)
{
	CHECK((const uint8_t *)p >= data && n <= size &&
	    (const uint8_t *)p + n <= data + size);
}

/* A string value: unescaped, escaped again, unescaped again. */
static void
string_roundtrip(const klog_json_member_t *m)
{
	klog_buf_t bytes, quoted, back;

	klog_buf_init(&bytes);
	klog_buf_init(&quoted);
	klog_buf_init(&back);
	if (klog_json_unescape(&bytes, m->raw, m->raw_len) == 0) {
		CHECK(klog_utf8_valid(bytes.data, bytes.len));
		klog_json_put_string(&quoted, bytes.data, bytes.len);
		CHECK(klog_json_unescape(&back, (const char *)quoted.data,
		    quoted.len) == 0);
		CHECK(same(&back, bytes.data, bytes.len));
	}
	klog_buf_free(&bytes);
	klog_buf_free(&quoted);
	klog_buf_free(&back);
}

static void
flat(const uint8_t *data, size_t size)
{
	klog_json_member_t m[MAXM];
	size_t n;

	if (klog_json_parse_flat((const char *)data, size, m, MAXM, &n) < 0)
		return;
	CHECK(n <= MAXM);
	for (size_t i = 0; i < n; i++) {
		check_view(data, size, m[i].key, m[i].key_len);
		check_view(data, size, m[i].raw, m[i].raw_len);
		CHECK(m[i].raw_len > 0);
		CHECK(m[i].type >= KLOG_JSON_STRING &&
		    m[i].type <= KLOG_JSON_NULL);
		if (m[i].type == KLOG_JSON_STRING) {
			CHECK(m[i].raw[0] == '"' &&
			    m[i].raw[m[i].raw_len - 1] == '"');
			string_roundtrip(&m[i]);
		}
	}
}

static void
base64(const uint8_t *data, size_t size)
{
	klog_buf_t enc, dec;
	uint8_t *out = malloc(size / 4 * 3 + 1);
	size_t n;

	CHECK(out != NULL);
	klog_buf_init(&enc);
	klog_buf_init(&dec);
	/* Strict decoding: what decodes is the one encoding of its bytes. */
	if (klog_base64_decode((const char *)data, size, out, &n) == 0) {
		klog_base64_put(&enc, out, n);
		CHECK(same(&enc, data, size));
	}
	klog_buf_reset(&enc);
	klog_base64_put(&enc, data, size);
	CHECK(!enc.failed && enc.len == (size + 2) / 3 * 4);
	CHECK(klog_buf_reserve(&dec, enc.len) == 0);
	CHECK(klog_base64_decode((const char *)enc.data, enc.len, dec.data,
	    &n) == 0);
	dec.len = n;
	CHECK(same(&dec, data, size));
	klog_buf_free(&enc);
	klog_buf_free(&dec);
	free(out);
}

/* RFC 3629 the plain way: decode each code point, then judge it. */
static int
ref_utf8(const uint8_t *p, size_t n)
{
	size_t i = 0, len;
	uint32_t cp, min;

	while (i < n) {
		uint8_t c = p[i];

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			len = 2, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4, cp = c & 0x07, min = 0x10000;
		} else {
			return 0;
		}
		if (n - i < len)
			return 0;
		for (size_t k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += len;
	}
	return 1;
}

/*
 * One splitter for every run, re-armed by hand (its fields are public):
 * klog_input_init() takes a 4 MiB buffer, which would make runs slow.
 */
static klog_input_t *
splitter_for(const uint8_t *delim, size_t dlen, size_t max)
{
	static klog_input_t in;
	static int ready;

	if (!ready) {
		CHECK(klog_input_init(&in, "\n", 1, (size_t)1 << 20) == 0);
		ready = 1;
	}
	memcpy(in.delim, delim, dlen);
	in.dlen = dlen;
	in.max_record = max;
	in.start = in.end = in.scan = 0;
	in.eof = in.skipping = 0;
	return &in;
}

/* The records of data cut at delim, as klog-produce(1) describes. */
static void
splitter(const uint8_t *data, size_t size)
{
	klog_input_t *in;
	const uint8_t *rec, *p, *hit, *d, *end, *want;
	size_t dlen, max, len, fed = 0, chunk;
	int rc;

	if (size < 3)
		return;
	dlen = data[0] % 4 + 1;
	max = data[1] < 200 ? data[1] : (size_t)1 << 20;
	if (size < 2 + dlen)
		return;
	d = data + 2;
	p = data + 2 + dlen;
	size -= 2 + dlen;
	end = p + size;
	in = splitter_for(d, dlen, max);
	/* want is where the reference's next record starts: records end at
	 * leftmost matches, and there is no empty record at the end. */
	want = p;
	for (;;) {
		/* Feed an uneven piece whenever the splitter wants more. */
		while ((rc = klog_input_next(in, &rec, &len)) == 0 &&
		    fed < size) {
			chunk = 1 + (p[fed] % 7) * (p[fed] % 7);
			if (chunk > size - fed)
				chunk = size - fed;
			CHECK(klog_input_feed(in, p + fed, chunk) == 0);
			fed += chunk;
			if (fed == size)
				klog_input_set_eof(in);
		}
		if (rc == 0 && size == 0) {
			klog_input_set_eof(in);
			rc = klog_input_next(in, &rec, &len);
		}
		hit = want < end ? memmem(want, (size_t)(end - want), d, dlen)
		    : NULL;
		if (rc == 0) {
			/* Done: nothing may be left but nothing at all. */
			CHECK(want == end);
			break;
		}
		/* A record too long is reported once and dropped; the
		 * splitter goes on with the next. */
		if (rc == -KLOG_ETOOBIG) {
			CHECK((size_t)((hit ? hit : end) - want) > max);
			want = hit ? hit + dlen : end;
			continue;
		}
		CHECK(rc == 1);
		CHECK(len == (size_t)((hit ? hit : end) - want));
		CHECK(len <= max && (len == 0 || memcmp(rec, want, len) == 0));
		want = hit ? hit + dlen : end;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	envelope(data, size);
	flat(data, size);
	base64(data, size);
	CHECK(klog_utf8_valid(data, size) == ref_utf8(data, size));
	splitter(data, size);
	return 0;
}
