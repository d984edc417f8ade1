/*
 * libFuzzer target for lib/client/outfmt.c: klog-consume's -f format strings,
 * -D delimiters and the -J envelope.
 *
 * The input is split into a format string (up to the first NUL) and a
 * record (offsets, partition, topic, key, timestamp, headers and payload
 * bytes).  The compiled
 * format must render exactly what a plain reference interpreter here
 * renders, and refuse exactly what it refuses; unescaping must agree the
 * same way; and the -J envelope of any record must be one line that
 * klog-produce's reader (klog_input_envelope()) turns back into the same
 * record.  A broken invariant aborts.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/base/json.h"
#include "klog/client/input.h"
#include "klog/client/outfmt.h"
#include "klog/storage/format.h"
#include "envrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static const char topic_chars[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

static int
hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The escape at s[*i] (a backslash) into *byte; -1 if it is not one. */
static int
ref_escape(const char *s, size_t *i, uint8_t *byte)
{
	static const char from[] = "nrt\\0", to[] = "\n\r\t\\";
	const char *p;

	if (s[*i + 1] == 'x') {
		if (hex((unsigned char)s[*i + 2]) < 0 ||
		    hex((unsigned char)s[*i + 3]) < 0)
			return -1;
		*byte = (uint8_t)(hex((unsigned char)s[*i + 2]) * 16 +
		    hex((unsigned char)s[*i + 3]));
		*i += 4;
		return 0;
	}
	if (s[*i + 1] == '\0' || (p = strchr(from, s[*i + 1])) == NULL)
		return -1;
	*byte = (uint8_t)to[p - from];   /* "\0" maps to the NUL after to */
	*i += 2;
	return 0;
}

static void
put_dec(klog_buf_t *b, long long v)
{
	char num[32];

	klog_buf_put(b, num, (size_t)snprintf(num, sizeof(num), "%lld", v));
}

/* %h: name=value pairs, comma-separated, a null value as nothing. */
static void
ref_headers(const klog_outfmt_rec_t *r, klog_buf_t *out)
{
	klog_header_t h;
	size_t pos = 0;

	for (uint32_t i = 0; klog_record_header_next(r->headers,
	    r->headers_len, &pos, &h); i++) {
		if (i > 0)
			klog_buf_put(out, ",", 1);
		klog_buf_put(out, h.key, h.key_len);
		klog_buf_put(out, "=", 1);
		if (h.value != NULL)
			klog_buf_put(out, h.value, (size_t)h.value_len);
	}
}

/* What klog-consume(1) says -f does, the slow and obvious way. */
static int
ref_render(const char *fmt, const klog_outfmt_rec_t *r, klog_buf_t *out)
{
	uint8_t byte, be[4];
	size_t i = 0;

	while (fmt[i] != '\0') {
		if (fmt[i] == '\\') {
			if (ref_escape(fmt, &i, &byte) < 0)
				return -1;
			klog_buf_put(out, &byte, 1);
			continue;
		}
		if (fmt[i] != '%') {
			klog_buf_put(out, &fmt[i++], 1);
			continue;
		}
		switch (fmt[i + 1]) {
		case '%': klog_buf_put(out, "%", 1); break;
		case 's': klog_buf_put(out, r->payload, r->payload_len); break;
		case 'S':
			put_dec(out, r->payload ? (long long)r->payload_len :
			    -1);
			break;
		case 'R':
			klog_put_be32(be, r->payload ? (uint32_t)r->payload_len :
			    UINT32_MAX);
			klog_buf_put(out, be, 4);
			break;
		case 'k':
			if (r->key != NULL)
				klog_buf_put(out, r->key, (size_t)r->key_len);
			break;
		case 'K': put_dec(out, r->key ? r->key_len : -1); break;
		case 'T': put_dec(out, r->timestamp); break;
		case 'h': ref_headers(r, out); break;
		case 'o': put_dec(out, r->offset); break;
		case 'O': put_dec(out, r->next_offset); break;
		case 'p': put_dec(out, r->partition); break;
		case 't': klog_buf_put(out, r->topic, r->topic_len); break;
		default: return -1;
		}
		i += 2;
	}
	return 0;
}

static int
ref_unescape(const char *s, klog_buf_t *out)
{
	uint8_t byte;
	size_t i = 0;

	while (s[i] != '\0') {
		if (s[i] != '\\') {
			klog_buf_put(out, &s[i++], 1);
			continue;
		}
		if (ref_escape(s, &i, &byte) < 0)
			return -1;
		klog_buf_put(out, &byte, 1);
	}
	return 0;
}

static int64_t
take64(const uint8_t **p, size_t *n)
{
	uint64_t v = 0;

	for (int k = 0; k < 8 && *n > 0; k++, (*p)++, (*n)--)
		v = v << 8 | **p;
	return (int64_t)v;
}

static void
formats(const char *fmt, const klog_outfmt_rec_t *r)
{
	klog_outfmt_t *f = NULL;
	klog_buf_t got, want;
	klog_err_t err = { 0 };
	int rc, ref;

	klog_buf_init(&got);
	klog_buf_init(&want);
	rc = klog_outfmt_compile(fmt, &f, &err);
	ref = ref_render(fmt, r, &want);
	CHECK((rc == 0) == (ref == 0));
	if (rc == 0) {
		/* Twice: rendering must not change the compiled format. */
		klog_outfmt_render(f, r, &got);
		klog_outfmt_render(f, r, &got);
		CHECK(!got.failed && !want.failed);
		CHECK(got.len == 2 * want.len);
		CHECK(want.len == 0 ||
		    (memcmp(got.data, want.data, want.len) == 0 &&
		    memcmp(got.data + want.len, want.data, want.len) == 0));
		klog_outfmt_free(f);
	} else {
		CHECK(rc == -KLOG_EINVAL && err.msg[0] != '\0');
	}
	klog_buf_reset(&got);
	klog_buf_reset(&want);
	rc = klog_outfmt_unescape(fmt, &got, &err);
	ref = ref_unescape(fmt, &want);
	CHECK((rc == 0) == (ref == 0));
	CHECK(rc != 0 || (got.len == want.len && (got.len == 0 ||
	    memcmp(got.data, want.data, got.len) == 0)));
	klog_buf_free(&got);
	klog_buf_free(&want);
}

/* -J out, klog-produce -J in: the same record, one valid line. */
static void
envelope(const klog_outfmt_rec_t *r)
{
	klog_input_record_t back;
	klog_outfmt_t *f;
	klog_buf_t line;
	klog_err_t err;

	CHECK(klog_outfmt_json(&f) == 0);
	klog_buf_init(&line);
	klog_input_record_init(&back);
	klog_outfmt_render(f, r, &line);
	CHECK(!line.failed && line.len > 0 && line.data[line.len - 1] == '\n');
	CHECK(memchr(line.data, '\n', line.len) == line.data + line.len - 1);
	CHECK(klog_input_envelope(line.data, line.len, &back, NULL, &err) ==
	    1);
	CHECK(envrec_same(&back, r));
	klog_buf_free(&line);
	klog_input_record_free(&back);
	klog_outfmt_free(f);
}

/*
 * Of the record's bytes at *p: a key (its length the first byte, none
 * when that is odd), a timestamp (8 bytes; -1 half the time) and up to
 * three headers (name and value lengths from a byte each, a null value
 * when the value's is 255), taken from the front.
 */
static void
take_record(const uint8_t **p, size_t *n, klog_header_t *h,
    uint32_t *nh, klog_outfmt_rec_t *r)
{
	size_t k = *n > 0 ? **p : 1;

	if (*n > 0) {
		(*p)++;
		(*n)--;
	}
	r->key = k % 2 || k / 2 > *n ? NULL : *p;
	r->key_len = r->key ? (int32_t)(k / 2) : -1;
	*p += r->key ? k / 2 : 0;
	*n -= r->key ? k / 2 : 0;
	r->timestamp = take64(p, n);
	if (r->timestamp % 2)
		r->timestamp = KLOG_NO_TIMESTAMP;
	for (*nh = 0; *nh < 3 && *n >= 2; (*nh)++) {
		size_t kl = (*p)[0] % 8, vl = (*p)[1];

		if (kl + (vl == 255 ? 0 : vl % 16) + 2 > *n)
			break;
		h[*nh].key = *p + 2;
		h[*nh].key_len = kl;
		h[*nh].value = vl == 255 ? NULL : *p + 2 + kl;
		h[*nh].value_len = vl == 255 ? -1 : (int32_t)(vl % 16);
		*p += 2 + kl + (vl == 255 ? 0 : vl % 16);
		*n -= 2 + kl + (vl == 255 ? 0 : vl % 16);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size), *p;
	klog_outfmt_rec_t r;
	klog_header_t h[3];
	uint32_t nh;
	klog_buf_t hb;
	char topic[32], *fmt;
	size_t flen = nul != NULL ? (size_t)(nul - data) : size, n, tlen;

	if ((fmt = malloc(flen + 1)) == NULL)
		return 0;
	memcpy(fmt, data, flen);
	fmt[flen] = '\0';
	p = data + flen + (nul != NULL);
	n = size - flen - (nul != NULL);
	memset(&r, 0, sizeof(r));
	klog_buf_init(&hb);
	r.offset = take64(&p, &n);
	r.next_offset = take64(&p, &n);
	r.partition = (int32_t)take64(&p, &n);
	tlen = n > 0 ? *p % sizeof(topic) : 0;
	for (size_t i = 0; i < tlen && i + 1 < n; i++)
		topic[i] = topic_chars[p[i + 1] % (sizeof(topic_chars) - 1)];
	tlen = n > 0 && tlen + 1 <= n ? tlen : 0;
	p += n > 0 ? 1 + tlen : 0;
	n -= n > 0 ? 1 + tlen : 0;
	r.topic = topic;
	r.topic_len = tlen;
	take_record(&p, &n, h, &nh, &r);
	envrec_headers(&hb, h, nh, &r);
	/* A null value when the payload is one 0xff byte. */
	r.payload = n == 1 && p[0] == 0xff ? NULL : p;
	r.payload_len = r.payload ? n : 0;
	formats(fmt, &r);
	envelope(&r);
	klog_buf_free(&hb);
	free(fmt);
	return 0;
}
