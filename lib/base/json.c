/*
 * JSON for NDJSON records: UTF-8 validation, string escaping, base64, and a
 * parser for flat objects.  The parser does not build a tree: members are
 * views into the caller's text, so reading a record allocates nothing.
 */
#include <string.h>

#include "klog/base/error.h"
#include "klog/base/json.h"

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

/* A cursor over the text being parsed. */
typedef struct cur {
	const char *s;
	size_t n, i;
} cur_t;

static void
skip_ws(cur_t *c)
{
	while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' ||
	    c->s[c->i] == '\n' || c->s[c->i] == '\r'))
		c->i++;
}

static int
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

/* Skip a string starting at its opening quote; escapes are checked for
 * shape only (klog_json_unescape() checks what they mean). */
static int
scan_string(cur_t *c)
{
	size_t start;

	c->i++;
	start = c->i;
	while (c->i < c->n) {
		uint8_t ch = (uint8_t)c->s[c->i];

		if (ch == '"') {
			if (!klog_utf8_valid(c->s + start, c->i - start))
				return -KLOG_EINVAL;
			c->i++;
			return 0;
		}
		if (ch < 0x20)
			return -KLOG_EINVAL;
		if (ch != '\\') {
			c->i++;
			continue;
		}
		if (++c->i >= c->n)
			return -KLOG_EINVAL;
		if (c->s[c->i] == 'u') {
			if (c->n - c->i < 5)
				return -KLOG_EINVAL;
			for (size_t k = 1; k <= 4; k++)
				if (!is_hex(c->s[c->i + k]))
					return -KLOG_EINVAL;
			c->i += 5;
		} else if (strchr("\"\\/bfnrt", c->s[c->i]) != NULL &&
		    c->s[c->i] != '\0') {
			c->i++;
		} else {
			return -KLOG_EINVAL;
		}
	}
	return -KLOG_EINVAL;
}

static size_t
skip_digits(cur_t *c)
{
	size_t start = c->i;

	while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9')
		c->i++;
	return c->i - start;
}

/* RFC 8259 number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int
scan_number(cur_t *c)
{
	if (c->s[c->i] == '-')
		c->i++;
	if (c->i < c->n && c->s[c->i] == '0')
		c->i++;
	else if (skip_digits(c) == 0)
		return -KLOG_EINVAL;
	if (c->i < c->n && c->s[c->i] == '.') {
		c->i++;
		if (skip_digits(c) == 0)
			return -KLOG_EINVAL;
	}
	if (c->i < c->n && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
		c->i++;
		if (c->i < c->n && (c->s[c->i] == '+' || c->s[c->i] == '-'))
			c->i++;
		if (skip_digits(c) == 0)
			return -KLOG_EINVAL;
	}
	return 0;
}

static int
scan_word(cur_t *c, const char *w)
{
	size_t len = strlen(w);

	if (c->n - c->i < len || memcmp(c->s + c->i, w, len) != 0)
		return -KLOG_EINVAL;
	c->i += len;
	return 0;
}

/* One value at the cursor: its type and raw text into m. */
static int
scan_value(cur_t *c, klog_json_member_t *m)
{
	size_t start = c->i;
	int rc;

	if (c->i >= c->n)
		return -KLOG_EINVAL;
	switch (c->s[c->i]) {
	case '"':
		m->type = KLOG_JSON_STRING;
		rc = scan_string(c);
		break;
	case 't':
		m->type = KLOG_JSON_BOOL;
		rc = scan_word(c, "true");
		break;
	case 'f':
		m->type = KLOG_JSON_BOOL;
		rc = scan_word(c, "false");
		break;
	case 'n':
		m->type = KLOG_JSON_NULL;
		rc = scan_word(c, "null");
		break;
	default:
		/* Objects and arrays land here too, and are refused. */
		m->type = KLOG_JSON_NUMBER;
		rc = scan_number(c);
		break;
	}
	if (rc < 0)
		return rc;
	m->raw = c->s + start;
	m->raw_len = c->i - start;
	return 0;
}

/* "key": value, at the cursor. */
static int
scan_member(cur_t *c, klog_json_member_t *m)
{
	size_t start;
	int rc;

	if (c->i >= c->n || c->s[c->i] != '"')
		return -KLOG_EINVAL;
	start = c->i;
	if ((rc = scan_string(c)) < 0)
		return rc;
	m->key = c->s + start + 1;
	m->key_len = c->i - start - 2;
	skip_ws(c);
	if (c->i >= c->n || c->s[c->i] != ':')
		return -KLOG_EINVAL;
	c->i++;
	skip_ws(c);
	return scan_value(c, m);
}

/*
 * Keys are returned as the text between their quotes, escapes undecoded:
 * envelope keys are plain ASCII, and a key spelled with escapes simply does
 * not match one.  Duplicate keys are kept, in order.
 */
int
klog_json_parse_flat(const char *s, size_t n, klog_json_member_t *members,
    size_t max, size_t *count)
{
	cur_t c = { s, n, 0 };
	size_t k = 0;
	int rc;

	*count = 0;
	skip_ws(&c);
	if (c.i >= c.n || c.s[c.i] != '{')
		return -KLOG_EINVAL;
	c.i++;
	skip_ws(&c);
	if (c.i < c.n && c.s[c.i] == '}') {
		c.i++;
		goto end;
	}
	for (;;) {
		klog_json_member_t m;

		if ((rc = scan_member(&c, &m)) < 0)
			return rc;
		if (k >= max)
			return -KLOG_EINVAL;
		members[k++] = m;
		skip_ws(&c);
		if (c.i >= c.n)
			return -KLOG_EINVAL;
		if (c.s[c.i] == '}') {
			c.i++;
			break;
		}
		if (c.s[c.i] != ',')
			return -KLOG_EINVAL;
		c.i++;
		skip_ws(&c);
	}
end:
	skip_ws(&c);
	if (c.i != c.n)
		return -KLOG_EINVAL;
	*count = k;
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
