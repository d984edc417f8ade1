/*
 * JSON for NDJSON records: UTF-8 validation, string escaping, base64; and
 * the one reader, for NDJSON's flat objects and ZooKeeper's schemas.  It
 * builds no tree: keys and values are views into the caller's text, so
 * reading a record allocates nothing.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/error.h"
#include "klog/base/json.h"
#include "klog/base/parse.h"

/*
 * Length of the UTF-8 sequence at p[0..n), or 0 if it is not a valid one.
 * Overlong forms, surrogates (U+D800..U+DFFF) and code points above U+10FFFF
 * are invalid (RFC 3629).
 */
static size_t
utf8_seq(const uint8_t *p, size_t n)
{
	uint8_t c = p[0];
	uint8_t lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0;       /* a continuation byte, or an overlong C0/C1 lead */
	if (c < 0xe0) {
		len = 2;
	} else if (c < 0xf0) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;      /* overlong */
		else if (c == 0xed)
			hi = 0x9f;      /* surrogates */
	} else if (c < 0xf5) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;      /* overlong */
		else if (c == 0xf4)
			hi = 0x8f;      /* above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

int
klog_utf8_valid(const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t i = 0, len;

	while (i < n) {
		/* Fast path over ASCII, the common case for log payloads. */
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((len = utf8_seq(s + i, n - i)) == 0)
			return 0;
		i += len;
	}
	return 1;
}

void
klog_json_put_string(klog_buf_t *b, const void *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *s = p;
	size_t run = 0;
	char esc[6];

	/* The worst case is six bytes out per byte in. */
	if (klog_buf_reserve(b, n + 2) < 0)
		return;
	klog_buf_put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];
		size_t elen = 2;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		klog_buf_put(b, s + run, i - run);
		run = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			elen = 6;
			break;
		}
		klog_buf_put(b, esc, elen);
	}
	if (n > run)  /* s may be NULL when n is 0 */
		klog_buf_put(b, s + run, n - run);
	klog_buf_put(b, "\"", 1);
}

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
klog_base64_put(klog_buf_t *b, const void *p, size_t n)
{
	const uint8_t *s = p;
	uint8_t *o;
	size_t i;

	if (n == 0)
		return;  /* b->data may still be NULL */
	if (n > (SIZE_MAX / 4 - 1) * 3 ||
	    klog_buf_reserve(b, (n + 2) / 3 * 4) < 0) {
		b->failed = 1;
		return;
	}
	o = b->data + b->len;
	for (i = 0; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 |
		    s[i + 2];

		*o++ = (uint8_t)b64[v >> 18];
		*o++ = (uint8_t)b64[v >> 12 & 0x3f];
		*o++ = (uint8_t)b64[v >> 6 & 0x3f];
		*o++ = (uint8_t)b64[v & 0x3f];
	}
	if (i < n) {
		uint32_t v = (uint32_t)s[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)s[i + 1] << 8;
		*o++ = (uint8_t)b64[v >> 18];
		*o++ = (uint8_t)b64[v >> 12 & 0x3f];
		*o++ = i + 1 < n ? (uint8_t)b64[v >> 6 & 0x3f] : '=';
		*o++ = '=';
	}
	b->len = (size_t)(o - b->data);
}

/* The 6-bit value of a base64 character, or -1. */
static int
b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Strict: padded to a multiple of 4, padding only at the end, and the unused
 * low bits before the padding zero, so that every byte string has exactly one
 * accepted encoding.
 */
int
klog_base64_decode(const char *s, size_t n, uint8_t *out, size_t *outlen)
{
	size_t o = 0, pad = 0;

	if (n % 4 != 0)
		return -KLOG_EINVAL;
	if (n > 0 && s[n - 1] == '=')
		pad = s[n - 2] == '=' ? 2 : 1;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		size_t use = i + 4 == n ? 4 - pad : 4;
		uint32_t w = 0;

		for (size_t k = 0; k < 4; k++) {
			v[k] = k < use ? b64_value(s[i + k]) : 0;
			if (v[k] < 0)
				return -KLOG_EINVAL;
			w = w << 6 | (uint32_t)v[k];
		}
		if ((use == 2 && (w & 0xffff) != 0) ||
		    (use == 3 && (w & 0xff) != 0))
			return -KLOG_EINVAL;
		out[o++] = (uint8_t)(w >> 16);
		if (use > 2)
			out[o++] = (uint8_t)(w >> 8);
		if (use > 3)
			out[o++] = (uint8_t)w;
	}
	*outlen = o;
	return 0;
}

/* ---- the reader ---- */

void
klog_json_rd_init(klog_json_rd_t *r, const char *s, size_t n,
    const char *what, klog_err_t *err)
{
	r->p = s;
	r->end = n > 0 ? s + n : s;  /* s may be NULL when n is 0 */
	r->what = what != NULL ? what : "JSON";
	r->err = err;
}

int
klog_json_rd_fail(klog_json_rd_t *r, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	/* klog-produce -J reads a line at a time with no err: no message. */
	if (r->err == NULL)
		return -KLOG_EINVAL;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return klog_err_set(r->err, -KLOG_EINVAL, "%s: %s", r->what, why);
}

int
klog_json_rd_peek(klog_json_rd_t *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' ||
	    *r->p == '\n' || *r->p == '\r'))
		r->p++;
	return r->p < r->end ? (uint8_t)*r->p : -1;
}

/* Consume c after white space; 1 if it was there. */
static int
eat(klog_json_rd_t *r, char c)
{
	if (klog_json_rd_peek(r) != (uint8_t)c)
		return 0;
	r->p++;
	return 1;
}

static int
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

/* The rest of an escape after its backslash, checked for shape only:
 * klog_json_unescape() checks what it means. */
static int
escape(klog_json_rd_t *r)
{
	if (r->p < r->end && *r->p == 'u') {
		if (r->end - r->p < 5 || !is_hex(r->p[1]) || !is_hex(r->p[2]) ||
		    !is_hex(r->p[3]) || !is_hex(r->p[4]))
			return klog_json_rd_fail(r, "bad \\u escape in a "
			    "string");
		r->p += 5;
		return 0;
	}
	if (r->p == r->end || memchr("\"\\/bfnrt", *r->p, 8) == NULL)
		return klog_json_rd_fail(r, "bad escape in a string");
	r->p++;
	return 0;
}

/* A string; *s and *n get the text between its quotes, escapes undecoded. */
static int
string(klog_json_rd_t *r, const char **s, size_t *n)
{
	const char *start;
	int rc;

	if (!eat(r, '"'))
		return klog_json_rd_fail(r, "expected a string");
	start = r->p;
	while (r->p < r->end && *r->p != '"') {
		uint8_t c = (uint8_t)*r->p++;

		if (c < 0x20)
			return klog_json_rd_fail(r, "control byte in a string");
		if (c == '\\' && (rc = escape(r)) < 0)
			return rc;
	}
	if (r->p == r->end)
		return klog_json_rd_fail(r, "unterminated string");
	if (!klog_utf8_valid(start, (size_t)(r->p - start)))
		return klog_json_rd_fail(r, "invalid UTF-8 in a string");
	*s = start;
	*n = (size_t)(r->p - start);
	r->p++;
	return 0;
}

static size_t
digits(klog_json_rd_t *r)
{
	const char *start = r->p;

	while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
		r->p++;
	return (size_t)(r->p - start);
}

/*
 * RFC 8259 number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; *s and
 * *n get its text, *integral 0 if it has a fraction or an exponent.
 */
static int
number(klog_json_rd_t *r, const char **s, size_t *n, int *integral)
{
	klog_json_rd_peek(r);
	*s = r->p;
	*integral = 1;
	if (r->p < r->end && *r->p == '-')
		r->p++;
	if (r->p < r->end && *r->p == '0')
		r->p++;
	else if (digits(r) == 0)
		return klog_json_rd_fail(r, "expected a number");
	if (r->p < r->end && *r->p == '.') {
		r->p++;
		*integral = 0;
		if (digits(r) == 0)
			return klog_json_rd_fail(r, "malformed number");
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		r->p++;
		*integral = 0;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (digits(r) == 0)
			return klog_json_rd_fail(r, "malformed number");
	}
	*n = (size_t)(r->p - *s);
	return 0;
}

static int
literal(klog_json_rd_t *r, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return klog_json_rd_fail(r, "unexpected value");
	r->p += n;
	return 0;
}

int
klog_json_rd_scalar(klog_json_rd_t *r, klog_json_member_t *m)
{
	int c = klog_json_rd_peek(r), integral, rc;
	const char *start = r->p, *s;
	size_t n;

	switch (c) {
	case -1:
		return klog_json_rd_fail(r, "truncated");
	case '{':
	case '[':
		return klog_json_rd_fail(r, "a nested value where a scalar "
		    "belongs");
	case '"':
		m->type = KLOG_JSON_STRING;
		rc = string(r, &s, &n);
		break;
	case 't':
	case 'f':
		m->type = KLOG_JSON_BOOL;
		rc = literal(r, c == 't' ? "true" : "false");
		break;
	case 'n':
		m->type = KLOG_JSON_NULL;
		rc = literal(r, "null");
		break;
	default:
		m->type = KLOG_JSON_NUMBER;
		rc = number(r, &s, &n, &integral);
		break;
	}
	if (rc < 0)
		return rc;
	m->raw = start;
	m->raw_len = (size_t)(r->p - start);
	return 0;
}

int
klog_json_rd_int(klog_json_rd_t *r, const char *field, int64_t min,
    int64_t max, int64_t *out)
{
	char num[24];
	const char *s, *why;
	size_t n, k;
	int integral, rc;

	if ((rc = number(r, &s, &n, &integral)) < 0)
		return rc;
	if (!integral)
		return klog_json_rd_fail(r, "%s: not an integer", field);
	/* No leading zeros: 23 characters are past any int64_t. */
	k = n < sizeof(num) ? n : sizeof(num) - 1;
	memcpy(num, s, k);
	num[k] = '\0';
	if (k < n || klog_parse_i64(num, min, max, out, &why) < 0)
		return klog_json_rd_fail(r, "%s: %s%s out of range [%" PRId64
		    ", %" PRId64 "]", field, num, k < n ? "..." : "", min, max);
	return 0;
}

/* An unwanted member's value: a scalar.  A nested one would hide structure
 * that a later writer means to be read. */
static int
skip(klog_json_rd_t *r)
{
	klog_json_member_t m;
	int c = klog_json_rd_peek(r);

	if (c == '{' || c == '[')
		return klog_json_rd_fail(r, "unknown key with a nested value");
	return klog_json_rd_scalar(r, &m);
}

/* An object being read: its schema's fields and those met so far. */
struct obj {
	const char *const *fields;
	int nfields;
	uint32_t seen;
	klog_json_member_fn fn;
	void *ctx;
};

/* The index of key among o's fields, or -1. */
static int
field_of(const struct obj *o, const char *key, size_t len)
{
	for (int f = 0; f < o->nfields; f++)
		if (strlen(o->fields[f]) == len &&
		    memcmp(o->fields[f], key, len) == 0)
			return f;
	return -1;
}

/* One "key": value. */
static int
member(klog_json_rd_t *r, struct obj *o)
{
	const char *k;
	size_t kn;
	int rc, f;

	if ((rc = string(r, &k, &kn)) < 0)
		return rc;
	if (!eat(r, ':'))
		return klog_json_rd_fail(r, "expected :");
	if ((f = field_of(o, k, kn)) >= 0) {
		if (o->seen & UINT32_C(1) << f)
			return klog_json_rd_fail(r, "%s twice", o->fields[f]);
		o->seen |= UINT32_C(1) << f;
	}
	if ((rc = o->fn(r, f, k, kn, o->ctx)) < 0)
		return rc;
	return rc == 0 ? skip(r) : 0;
}

int
klog_json_rd_object(klog_json_rd_t *r, const char *const *fields,
    int nfields, klog_json_member_fn fn, void *ctx)
{
	struct obj o = { fields, nfields, 0, fn, ctx };
	int rc, f;

	if (!eat(r, '{'))
		return klog_json_rd_fail(r, "expected an object");
	if (!eat(r, '}')) {
		do {
			if ((rc = member(r, &o)) < 0)
				return rc;
		} while (eat(r, ','));
		if (!eat(r, '}'))
			return klog_json_rd_fail(r, "expected , or } in an "
			    "object");
	}
	for (f = 0; f < nfields; f++)
		if (!(o.seen & UINT32_C(1) << f))
			return klog_json_rd_fail(r, "no %s", fields[f]);
	return 0;
}

int
klog_json_rd_array(klog_json_rd_t *r, klog_json_elem_fn fn, void *ctx)
{
	int rc;

	if (!eat(r, '['))
		return klog_json_rd_fail(r, "expected an array");
	if (eat(r, ']'))
		return 0;
	do {
		if ((rc = fn(r, ctx)) < 0)
			return rc;
	} while (eat(r, ','));
	if (!eat(r, ']'))
		return klog_json_rd_fail(r, "expected , or ] in an array");
	return 0;
}

int
klog_json_rd_end(klog_json_rd_t *r)
{
	return klog_json_rd_peek(r) < 0 ? 0 :
	    klog_json_rd_fail(r, "trailing bytes");
}

/* ---- flat objects ---- */

struct flat {
	klog_json_member_t *m;
	size_t max, n;
};

static int
flat_member(klog_json_rd_t *r, int field, const char *key, size_t key_len,
    void *ctx)
{
	struct flat *f = ctx;
	int rc;

	(void)field;
	if (f->n == f->max)
		return -KLOG_EINVAL;
	if ((rc = klog_json_rd_scalar(r, &f->m[f->n])) < 0)
		return rc;
	f->m[f->n].key = key;
	f->m[f->n++].key_len = key_len;
	return 1;
}

/* Duplicate keys are kept, in order: the caller decides what they mean. */
int
klog_json_parse_flat(const char *s, size_t n, klog_json_member_t *members,
    size_t max, size_t *count)
{
	struct flat f = { members, max, 0 };
	klog_json_rd_t r;
	int rc;

	*count = 0;
	klog_json_rd_init(&r, s, n, NULL, NULL);
	if ((rc = klog_json_rd_object(&r, NULL, 0, flat_member, &f)) < 0 ||
	    (rc = klog_json_rd_end(&r)) < 0)
		return rc;
	*count = f.n;
	return 0;
}

/* Four hex digits at s as a number. */
static unsigned
hex4(const char *s)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char ch = s[i];

		v <<= 4;
		if (ch >= '0' && ch <= '9')
			v |= (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			v |= (unsigned)(ch - 'a' + 10);
		else
			v |= (unsigned)(ch - 'A' + 10);
	}
	return v;
}

static void
put_utf8(klog_buf_t *b, uint32_t cp)
{
	uint8_t o[4];
	size_t n;

	if (cp < 0x80) {
		o[0] = (uint8_t)cp;
		n = 1;
	} else if (cp < 0x800) {
		o[0] = (uint8_t)(0xc0 | cp >> 6);
		o[1] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		o[0] = (uint8_t)(0xe0 | cp >> 12);
		o[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		o[0] = (uint8_t)(0xf0 | cp >> 18);
		o[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
		o[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		o[3] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 4;
	}
	klog_buf_put(b, o, n);
}

/*
 * A \u escape at s[0..n) (s points at the 'u'): one code point, or a
 * surrogate pair written as two escapes.  A lone surrogate has no UTF-8 form
 * and is refused.  *used gets the characters consumed after the backslash.
 */
static int
unescape_u(klog_buf_t *b, const char *s, size_t n, size_t *used)
{
	uint32_t cp, lo;

	if (n < 5 || !is_hex(s[1]) || !is_hex(s[2]) || !is_hex(s[3]) ||
	    !is_hex(s[4]))
		return -KLOG_EINVAL;
	cp = hex4(s + 1);
	*used = 5;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return -KLOG_EINVAL;
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (n < 11 || s[5] != '\\' || s[6] != 'u' || !is_hex(s[7]) ||
		    !is_hex(s[8]) || !is_hex(s[9]) || !is_hex(s[10]))
			return -KLOG_EINVAL;
		lo = hex4(s + 7);
		if (lo < 0xdc00 || lo > 0xdfff)
			return -KLOG_EINVAL;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		*used = 11;
	}
	put_utf8(b, cp);
	return 0;
}

int
klog_json_unescape(klog_buf_t *b, const char *raw, size_t raw_len)
{
	const char *s;
	size_t n, i = 0, run = 0;

	if (raw_len < 2 || raw[0] != '"' || raw[raw_len - 1] != '"')
		return -KLOG_EINVAL;
	s = raw + 1;
	n = raw_len - 2;
	while (i < n) {
		size_t used;
		char ch;
		int rc;

		if ((uint8_t)s[i] < 0x20 || s[i] == '"')
			return -KLOG_EINVAL;
		if (s[i] != '\\') {
			i++;
			continue;
		}
		klog_buf_put(b, s + run, i - run);
		if (++i >= n)
			return -KLOG_EINVAL;
		switch (s[i]) {
		case '"': ch = '"'; break;
		case '\\': ch = '\\'; break;
		case '/': ch = '/'; break;
		case 'b': ch = '\b'; break;
		case 'f': ch = '\f'; break;
		case 'n': ch = '\n'; break;
		case 'r': ch = '\r'; break;
		case 't': ch = '\t'; break;
		case 'u':
			if ((rc = unescape_u(b, s + i, n - i, &used)) < 0)
				return rc;
			i += used;
			run = i;
			continue;
		default:
			return -KLOG_EINVAL;
		}
		klog_buf_put(b, &ch, 1);
		i++;
		run = i;
	}
	if (n > run)  /* s may be NULL when n is 0 */
		klog_buf_put(b, s + run, n - run);
	return b->failed ? -KLOG_ENOMEM : 0;
}
