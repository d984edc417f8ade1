#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/base/json.h"

#define S(lit) (lit), (sizeof(lit) - 1)

/* klog_json_put_string(p, n) must give exactly want. */
static void
check_put_string(const void *p, size_t n, const char *want)
{
	klog_buf_t b;

	klog_buf_init(&b);
	klog_json_put_string(&b, p, n);
	assert_false(b.failed);
	assert_int_equal(b.len, strlen(want));
	assert_memory_equal(b.data, want, b.len);
	klog_buf_free(&b);
}

static void
test_utf8_valid(void **state)
{
	(void)state;
	assert_true(klog_utf8_valid("", 0));
	assert_true(klog_utf8_valid(S("plain ascii")));
	assert_true(klog_utf8_valid(S("\0nul inside")));
	assert_true(klog_utf8_valid(S("\xc2\x80")));             /* U+0080 */
	assert_true(klog_utf8_valid(S("\xdf\xbf")));             /* U+07FF */
	assert_true(klog_utf8_valid(S("\xe0\xa0\x80")));         /* U+0800 */
	assert_true(klog_utf8_valid(S("\xed\x9f\xbf")));         /* U+D7FF */
	assert_true(klog_utf8_valid(S("\xee\x80\x80")));         /* U+E000 */
	assert_true(klog_utf8_valid(S("\xef\xbf\xbf")));         /* U+FFFF */
	assert_true(klog_utf8_valid(S("\xf0\x90\x80\x80")));     /* U+10000 */
	assert_true(klog_utf8_valid(S("\xf4\x8f\xbf\xbf")));     /* U+10FFFF */
	assert_true(klog_utf8_valid(S("h\xc3\xa9llo \xe2\x82\xac")));
}

static void
test_utf8_invalid(void **state)
{
	(void)state;
	/* Stray continuation bytes and impossible leads. */
	assert_false(klog_utf8_valid(S("\x80")));
	assert_false(klog_utf8_valid(S("a\xbf")));
	assert_false(klog_utf8_valid(S("\xfe")));
	assert_false(klog_utf8_valid(S("\xff")));
	assert_false(klog_utf8_valid(S("\xf5\x80\x80\x80")));
	/* Overlong forms. */
	assert_false(klog_utf8_valid(S("\xc0\xaf")));             /* '/' */
	assert_false(klog_utf8_valid(S("\xc1\xbf")));
	assert_false(klog_utf8_valid(S("\xc0\x80")));             /* NUL */
	assert_false(klog_utf8_valid(S("\xe0\x80\xaf")));
	assert_false(klog_utf8_valid(S("\xe0\x9f\xbf")));
	assert_false(klog_utf8_valid(S("\xf0\x80\x80\xaf")));
	assert_false(klog_utf8_valid(S("\xf0\x8f\xbf\xbf")));
	/* Surrogates, alone and as a CESU-8 pair. */
	assert_false(klog_utf8_valid(S("\xed\xa0\x80")));         /* U+D800 */
	assert_false(klog_utf8_valid(S("\xed\xbf\xbf")));         /* U+DFFF */
	assert_false(klog_utf8_valid(S("\xed\xa0\xbd\xed\xb8\x80")));
	/* Above U+10FFFF. */
	assert_false(klog_utf8_valid(S("\xf4\x90\x80\x80")));
	/* Truncated sequences, at the end and followed by ASCII. */
	assert_false(klog_utf8_valid(S("\xc3")));
	assert_false(klog_utf8_valid(S("\xe2\x82")));
	assert_false(klog_utf8_valid(S("\xf0\x9f\x98")));
	assert_false(klog_utf8_valid(S("\xe2\x82z")));
	assert_false(klog_utf8_valid(S("\xf0\x9f\x98z")));
	/* The length given counts, not a NUL. */
	assert_false(klog_utf8_valid("\xc3\xa9", 1));
}

static void
test_put_string_escapes(void **state)
{
	(void)state;
	check_put_string("", 0, "\"\"");
	/* No bytes at all, not even a buffer (fuzz_envelope found the
	 * NULL + 0 this used to compute). */
	check_put_string(NULL, 0, "\"\"");
	check_put_string(S("hello"), "\"hello\"");
	check_put_string(S("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
	check_put_string(S("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
	check_put_string(S("\x7f"), "\"\x7f\"");
	check_put_string(S("h\xc3\xa9llo"), "\"h\xc3\xa9llo\"");
	check_put_string(S("\0"), "\"\\u0000\"");
	check_put_string(S("x\x1fy"), "\"x\\u001fy\"");
}

/* Every control character, in one string and each on its own. */
static void
test_put_string_every_control(void **state)
{
	static const char *named[32] = {
		['\b'] = "\\b", ['\f'] = "\\f", ['\n'] = "\\n",
		['\r'] = "\\r", ['\t'] = "\\t",
	};
	klog_buf_t all, want;
	char in[32], one[8];

	(void)state;
	klog_buf_init(&all);
	klog_buf_init(&want);
	klog_buf_put(&want, "\"", 1);
	for (int c = 0; c < 32; c++) {
		in[c] = (char)c;
		if (named[c] != NULL)
			snprintf(one, sizeof(one), "%s", named[c]);
		else
			snprintf(one, sizeof(one), "\\u%04x", c);
		klog_buf_put(&want, one, strlen(one));
		{
			char w[10];

			snprintf(w, sizeof(w), "\"%s\"", one);
			check_put_string(in + c, 1, w);
		}
	}
	klog_buf_put(&want, "\"", 1);
	klog_json_put_string(&all, in, sizeof(in));
	assert_int_equal(all.len, want.len);
	assert_memory_equal(all.data, want.data, all.len);
	klog_buf_free(&all);
	klog_buf_free(&want);
}

/* A string written by put_string parses and unescapes back to its bytes. */
static void
test_put_string_round_trip(void **state)
{
	klog_buf_t obj, back;
	klog_json_member_t m[2];
	size_t count;
	uint8_t in[128];

	(void)state;
	/* Every ASCII byte, control characters included. */
	for (int i = 0; i < 128; i++)
		in[i] = (uint8_t)i;
	klog_buf_init(&obj);
	klog_buf_init(&back);
	klog_buf_put(&obj, "{\"p\":", 5);
	klog_json_put_string(&obj, in, sizeof(in));
	klog_buf_put(&obj, "}", 1);
	assert_int_equal(klog_json_parse_flat((char *)obj.data, obj.len, m, 2,
	    &count), 0);
	assert_int_equal(count, 1);
	assert_int_equal(m[0].type, KLOG_JSON_STRING);
	assert_int_equal(klog_json_unescape(&back, m[0].raw, m[0].raw_len), 0);
	assert_int_equal(back.len, sizeof(in));
	assert_memory_equal(back.data, in, sizeof(in));
	klog_buf_free(&obj);
	klog_buf_free(&back);
}

static void
test_base64_known(void **state)
{
	static const struct {
		const char *in, *out;
	} v[] = {   /* RFC 4648, section 10 */
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" },
		{ "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		klog_buf_reset(&b);
		klog_base64_put(&b, v[i].in, strlen(v[i].in));
		assert_int_equal(b.len, strlen(v[i].out));
		assert_memory_equal(b.data, v[i].out, b.len);
	}
	klog_buf_reset(&b);
	klog_base64_put(&b, S("\xfb\xff\xbf"));
	assert_memory_equal(b.data, "+/+/", 4);
	klog_buf_free(&b);
	/* Nothing into a buffer that has none yet (its data is NULL). */
	klog_buf_init(&b);
	klog_base64_put(&b, NULL, 0);
	assert_int_equal(b.len, 0);
	assert_false(b.failed);
}

/* Every length 0..64 (so every length mod 3) and every byte value. */
static void
test_base64_round_trip(void **state)
{
	uint8_t in[256], out[256];
	klog_buf_t b;
	size_t outlen;

	(void)state;
	for (int i = 0; i < 256; i++)
		in[i] = (uint8_t)(i * 7 + 3);
	klog_buf_init(&b);
	for (size_t n = 0; n <= 64; n++) {
		klog_buf_reset(&b);
		klog_base64_put(&b, in, n);
		assert_int_equal(b.len, (n + 2) / 3 * 4);
		assert_int_equal(klog_base64_decode((char *)b.data, b.len, out,
		    &outlen), 0);
		assert_int_equal(outlen, n);
		assert_memory_equal(out, in, n);
	}
	for (int i = 0; i < 256; i++)
		in[i] = (uint8_t)i;
	klog_buf_reset(&b);
	klog_base64_put(&b, in, 256);
	assert_int_equal(klog_base64_decode((char *)b.data, b.len, out,
	    &outlen), 0);
	assert_int_equal(outlen, 256);
	assert_memory_equal(out, in, 256);
	klog_buf_free(&b);
}

static void
test_base64_reject(void **state)
{
	static const char *bad[] = {
		"Zg=", "Zg", "Z", "Zm9vY", /* not a multiple of 4 */
		"Zg=a", "Z===", "====", "=Zm8", "Zm=8", "Zg==Zg==",
		"Zm9v!A==", "Zm9 v", "Zm9\n",
		"Zh==", "Zm9=", /* padding bits not zero */
	};
	uint8_t out[16];
	size_t outlen;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(klog_base64_decode(bad[i], strlen(bad[i]), out,
		    &outlen), -KLOG_EINVAL);
	assert_int_equal(klog_base64_decode("", 0, out, &outlen), 0);
	assert_int_equal(outlen, 0);
}

static int
parse(const char *s, klog_json_member_t *m, size_t max, size_t *count)
{
	return klog_json_parse_flat(s, strlen(s), m, max, count);
}

static void
test_parse_flat_accept(void **state)
{
	klog_json_member_t m[8];
	size_t n;
	const char *s = " \t\r\n{ \"topic\" : \"a\\\"b\" , \"partition\":-3,"
	    "\"x\":1.5e+10,\"ok\":true,\"no\":false,\"n\":null,"
	    "\"k\\u0041\":\"\"}\n";

	(void)state;
	assert_int_equal(parse(s, m, 8, &n), 0);
	assert_int_equal(n, 7);
	assert_int_equal(m[0].key_len, 5);
	assert_memory_equal(m[0].key, "topic", 5);
	assert_int_equal(m[0].type, KLOG_JSON_STRING);
	assert_int_equal(m[0].raw_len, 6);
	assert_memory_equal(m[0].raw, "\"a\\\"b\"", 6);
	assert_int_equal(m[1].type, KLOG_JSON_NUMBER);
	assert_memory_equal(m[1].raw, "-3", m[1].raw_len);
	assert_int_equal(m[2].type, KLOG_JSON_NUMBER);
	assert_int_equal(m[2].raw_len, 7);
	assert_int_equal(m[3].type, KLOG_JSON_BOOL);
	assert_memory_equal(m[3].raw, "true", 4);
	assert_int_equal(m[4].type, KLOG_JSON_BOOL);
	assert_int_equal(m[4].raw_len, 5);
	assert_int_equal(m[5].type, KLOG_JSON_NULL);
	/* Keys come back undecoded. */
	assert_int_equal(m[6].key_len, 7);
	assert_memory_equal(m[6].key, "k\\u0041", 7);

	assert_int_equal(parse("{}", m, 0, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(parse(" { } ", NULL, 0, &n), 0);
	assert_int_equal(parse("{\"a\":0,\"a\":-0.0}", m, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(parse("{\"\":\"h\xc3\xa9\"}", m, 1, &n), 0);
	assert_int_equal(m[0].key_len, 0);
}

static void
test_parse_flat_reject(void **state)
{
	static const char *bad[] = {
		"", " ", "[]", "\"a\"", "{", "}", "{\"a\"}", "{\"a\":}",
		"{\"a\" 1}", "{a:1}", "{'a':1}", "{\"a\":1,}", "{,}",
		"{\"a\":1 \"b\":2}", "{\"a\":1}x", "{\"a\":1}{}",
		"{\"a\":{}}", "{\"a\":{\"b\":1}}", "{\"a\":[]}", "{\"a\":[1]}",
		"{\"a\":01}", "{\"a\":+1}", "{\"a\":1.}", "{\"a\":.5}",
		"{\"a\":1e}", "{\"a\":-}", "{\"a\":0x10}", "{\"a\":NaN}",
		"{\"a\":tru}", "{\"a\":nul}", "{\"a\":True}", "{\"a\":falsey}",
		"{\"a\":\"x}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}",
		"{\"a\":\"\\u12g4\"}", "{\"a\":\"tab\there\"}",
		"{\"a\":\"nl\nhere\"}", "{\"a\":\"\xff\"}",
		"{\"a\":\"\xc0\xaf\"}", "{\"\xed\xa0\x80\":1}",
		"{\"a\":\"\\\"}",
	};
	klog_json_member_t m[4];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i], m, 4, &n);

		if (rc != -KLOG_EINVAL)
			fail_msg("accepted: %s", bad[i]);
	}
	/* A NUL is not white space, nor the end. */
	assert_int_equal(klog_json_parse_flat("{}\0", 3, m, 4, &n),
	    -KLOG_EINVAL);
	/* More members than room. */
	assert_int_equal(parse("{\"a\":1,\"b\":2,\"c\":3}", m, 2, &n),
	    -KLOG_EINVAL);
	assert_int_equal(parse("{\"a\":1}", m, 0, &n), -KLOG_EINVAL);
}

/* Unescape raw (a JSON string with its quotes); compare with want. */
static void
check_unescape(const char *raw, const void *want, size_t want_len)
{
	klog_buf_t b;

	klog_buf_init(&b);
	assert_int_equal(klog_json_unescape(&b, raw, strlen(raw)), 0);
	assert_int_equal(b.len, want_len);
	if (want_len > 0)
		assert_memory_equal(b.data, want, want_len);
	klog_buf_free(&b);
}

static void
test_unescape(void **state)
{
	(void)state;
	check_unescape("\"\"", "", 0);
	check_unescape("\"plain\"", S("plain"));
	check_unescape("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", S("\"\\/\b\f\n\r\t"));
	check_unescape("\"\\u0000\"", "\0", 1);
	check_unescape("\"\\u0041\\u00e9\"", S("A\xc3\xa9"));
	check_unescape("\"\\u07FF\\u0800\\uFFFF\"",
	    S("\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf"));
	check_unescape("\"\\u20ac\"", S("\xe2\x82\xac"));
	/* Surrogate pairs: U+1F600 and the extremes U+10000, U+10FFFF. */
	check_unescape("\"\\ud83d\\ude00\"", S("\xf0\x9f\x98\x80"));
	check_unescape("\"\\uD800\\uDC00\"", S("\xf0\x90\x80\x80"));
	check_unescape("\"\\udbff\\udfff\"", S("\xf4\x8f\xbf\xbf"));
	check_unescape("\"a\\u0062c\"", S("abc"));
	check_unescape("\"h\xc3\xa9\"", S("h\xc3\xa9"));
}

static void
test_unescape_reject(void **state)
{
	static const char *bad[] = {
		"", "\"", "x\"\"", "\"abc", "abc\"", "\"\\\"",
		"\"\\x\"", "\"\\u\"", "\"\\u12\"", "\"\\uzzzz\"",
		"\"\\ud800\"",              /* lone high surrogate */
		"\"\\udc00\"",              /* lone low surrogate */
		"\"\\ud800x\"", "\"\\ud800\\u0041\"", "\"\\ud800\\ud800\"",
		"\"\\ud800\\n\"", "\"\\ud83d\\ude0\"",
		"\"a\"b\"", "\"tab\there\"",
	};
	klog_buf_t b;

	(void)state;
	klog_buf_init(&b);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		klog_buf_reset(&b);
		if (klog_json_unescape(&b, bad[i], strlen(bad[i])) !=
		    -KLOG_EINVAL)
			fail_msg("accepted: %s", bad[i]);
	}
	klog_buf_free(&b);
}

/* ---- the reader, by a schema {"a": int in [0, 9], "b": [ints]} ---- */

struct ab {
	int64_t a;
	int64_t b[4];
	size_t nb;
};

static int
ab_elem(klog_json_rd_t *r, void *ctx)
{
	struct ab *v = ctx;

	if (v->nb == 4)
		return klog_json_rd_fail(r, "b: too long");
	return klog_json_rd_int(r, "b", INT64_MIN, INT64_MAX, &v->b[v->nb++]);
}

static int
ab_member(klog_json_rd_t *r, int field, const char *key, size_t key_len,
    void *ctx)
{
	struct ab *v = ctx;
	int rc;

	(void)key;
	(void)key_len;
	if (field < 0)
		return 0;
	if (field == 0)
		rc = klog_json_rd_int(r, "a", 0, 9, &v->a);
	else
		rc = klog_json_rd_array(r, ab_elem, v);
	return rc < 0 ? rc : 1;
}

/* Read s with the schema; the return code, the message in err. */
static int
read_ab(const char *s, struct ab *v, klog_err_t *err)
{
	static const char *const fields[] = { "a", "b" };
	klog_json_rd_t r;
	int rc;

	memset(v, 0, sizeof(*v));
	KLOG_ERR_EMPTY(err);
	klog_json_rd_init(&r, s, strlen(s), "ab JSON", err);
	if ((rc = klog_json_rd_object(&r, fields, 2, ab_member, v)) < 0)
		return rc;
	return klog_json_rd_end(&r);
}

static void
test_reader_accept(void **state)
{
	struct ab v;
	klog_err_t err;

	(void)state;
	assert_int_equal(read_ab(" {\"b\" : [ 1 , -0,9223372036854775807,"
	    "-9223372036854775808 ], \"a\":7}\n", &v, &err), 0);
	assert_int_equal(v.a, 7);
	assert_int_equal(v.nb, 4);
	assert_int_equal(v.b[1], 0);
	assert_true(v.b[2] == INT64_MAX);
	assert_true(v.b[3] == INT64_MIN);
	/* Other keys: any scalar, repeated, with escapes in the key. */
	assert_int_equal(read_ab("{\"x\":1.5e3,\"x\":\"\\u00e9\\n\","
	    "\"a\\u0041\":null,\"y\":true,\"z\":false,\"a\":0,\"b\":[]}",
	    &v, &err), 0);
	assert_int_equal(v.nb, 0);
}

/* read_ab() refuses s with a message holding why. */
static void
refuse_ab(const char *s, const char *why)
{
	struct ab v;
	klog_err_t err;

	assert_int_equal(read_ab(s, &v, &err), -KLOG_EINVAL);
	assert_int_equal(err.code, -KLOG_EINVAL);
	if (strncmp(err.msg, "ab JSON: ", 9) != 0 ||
	    strstr(err.msg, why) == NULL)
		fail_msg("%s: got \"%s\", wanted \"%s\"", s, err.msg, why);
}

static void
test_reader_refuse(void **state)
{
	(void)state;
	refuse_ab("", "expected an object");
	refuse_ab("[]", "expected an object");
	refuse_ab("{\"b\":[]}", "no a");
	refuse_ab("{\"a\":1}", "no b");
	refuse_ab("{\"a\":1,\"b\":[],\"a\":1}", "a twice");
	refuse_ab("{\"a\":1,\"b\":[],\"x\":{}}", "unknown key with a nested");
	refuse_ab("{\"a\":1,\"b\":[],\"x\":[1]}", "unknown key with a nested");
	refuse_ab("{\"a\":1,\"b\":[],\"x\":}", "expected a number");
	refuse_ab("{\"a\":1,\"b\":[],\"x\":", "truncated");
	refuse_ab("{\"a\":1,\"b\":[]} {}", "trailing bytes");
	refuse_ab("{\"a\":1,\"b\":[],}", "expected a string");
	refuse_ab("{\"a\" 1}", "expected :");
	refuse_ab("{\"a\":1 \"b\":[]}", "expected , or }");
	refuse_ab("{\"a\":1,\"b\":[1 2]}", "expected , or ]");
	refuse_ab("{\"a\":1,\"b\":[1,]}", "expected a number");
	refuse_ab("{\"a\":1,\"b\":{}}", "expected an array");
	refuse_ab("{\"a\":1,\"b\":[1,2,3,4,5]}", "b: too long");
	/* Integers: range, shape, and past int64_t. */
	refuse_ab("{\"a\":10,\"b\":[]}", "a: 10 out of range [0, 9]");
	refuse_ab("{\"a\":-1,\"b\":[]}", "out of range");
	refuse_ab("{\"a\":1.0,\"b\":[]}", "a: not an integer");
	refuse_ab("{\"a\":1e0,\"b\":[]}", "a: not an integer");
	refuse_ab("{\"a\":\"1\",\"b\":[]}", "expected a number");
	refuse_ab("{\"a\":01,\"b\":[]}", "expected , or }");
	refuse_ab("{\"a\":1.,\"b\":[]}", "malformed number");
	refuse_ab("{\"a\":1,\"b\":[9223372036854775808]}", "out of range");
	refuse_ab("{\"a\":1,\"b\":[-9223372036854775809]}", "out of range");
	refuse_ab("{\"a\":1,\"b\":[123456789012345678901234567890]}",
	    "b: 12345678901234567890123... out of range");
	/* Strings, keys as much as values. */
	refuse_ab("{\"a\":1,\"b\":[],\"x\":\"\\q\"}", "bad escape");
	refuse_ab("{\"a\":1,\"b\":[],\"x\":\"\\u12\"}", "bad \\u escape");
	refuse_ab("{\"a\":1,\"b\":[],\"\xff\":1}", "invalid UTF-8");
	refuse_ab("{\"a\":1,\"b\":[],\"x\":\"\t\"}", "control byte");
	refuse_ab("{\"a\":1,\"b\":[],\"x\":\"\\\"}", "unterminated");
	refuse_ab("{\"a\":1,\"b\":[],\"x\":tru}", "unexpected value");
}

/* A scalar's type and text; a nested value is not one.  err may be NULL. */
static void
test_reader_scalar(void **state)
{
	klog_json_member_t m;
	klog_json_rd_t r;
	klog_err_t err;

	(void)state;
	klog_json_rd_init(&r, S(" \"a\\\"\" -1.5 null ["), "x", &err);
	assert_int_equal(klog_json_rd_scalar(&r, &m), 0);
	assert_int_equal(m.type, KLOG_JSON_STRING);
	assert_int_equal(m.raw_len, 5);
	assert_int_equal(klog_json_rd_scalar(&r, &m), 0);
	assert_int_equal(m.type, KLOG_JSON_NUMBER);
	assert_memory_equal(m.raw, "-1.5", 4);
	assert_int_equal(klog_json_rd_scalar(&r, &m), 0);
	assert_int_equal(m.type, KLOG_JSON_NULL);
	assert_int_equal(klog_json_rd_peek(&r), '[');
	assert_int_equal(klog_json_rd_scalar(&r, &m), -KLOG_EINVAL);
	assert_string_equal(err.msg,
	    "x: a nested value where a scalar belongs");
	klog_json_rd_init(&r, NULL, 0, NULL, NULL);
	assert_int_equal(klog_json_rd_peek(&r), -1);
	assert_int_equal(klog_json_rd_end(&r), 0);
	assert_int_equal(klog_json_rd_scalar(&r, &m), -KLOG_EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_invalid),
		cmocka_unit_test(test_put_string_escapes),
		cmocka_unit_test(test_put_string_every_control),
		cmocka_unit_test(test_put_string_round_trip),
		cmocka_unit_test(test_base64_known),
		cmocka_unit_test(test_base64_round_trip),
		cmocka_unit_test(test_base64_reject),
		cmocka_unit_test(test_parse_flat_accept),
		cmocka_unit_test(test_parse_flat_reject),
		cmocka_unit_test(test_unescape),
		cmocka_unit_test(test_unescape_reject),
		cmocka_unit_test(test_reader_accept),
		cmocka_unit_test(test_reader_refuse),
		cmocka_unit_test(test_reader_scalar),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
