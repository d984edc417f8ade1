/*
 * Unit tests for lib/auth/scram*.c: RFC 7677's example exchanged byte for
 * byte, SCRAM-SHA-512 both ways, a wrong password and an unknown user
 * failing alike, credentials in Kafka's text form, names escaped, and
 * every kind of malformed message on both sides.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/auth/scram.h"

/* RFC 7677 section 3 (and Kafka's ScramFormatterTest.rfc7677Example). */
#define RFC_SALT "W22ZaJ0SNY7soEsUEjb6gQ=="
#define RFC_CNONCE "rOprNGfwEbeRWgbNEkqO"
#define RFC_SNONCE "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
#define RFC_FIRST "n,,n=user,r=" RFC_CNONCE
#define RFC_SFIRST "r=" RFC_CNONCE RFC_SNONCE ",s=" RFC_SALT ",i=4096"
#define RFC_PROOF "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
#define RFC_FINAL "c=biws,r=" RFC_CNONCE RFC_SNONCE ",p=" RFC_PROOF
#define RFC_SFINAL "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

/* The users a test server knows: at most a few, by name and mechanism. */
struct users {
	const char *names[4];
	klog_scram_cred_t creds[4];
	int n;
};

static int
lookup(void *arg, const char *user, klog_scram_mech_t m,
    klog_scram_cred_t *out)
{
	struct users *u = arg;

	for (int i = 0; i < u->n; i++)
		if (strcmp(u->names[i], user) == 0 && u->creds[i].mech == m) {
			*out = u->creds[i];
			return 0;
		}
	return -KLOG_ENOENT;
}

static klog_scram_secret_t secret;

static void
add_user(struct users *u, const char *name, klog_scram_mech_t m,
    const char *pw, int iter)
{
	klog_err_t err;

	u->names[u->n] = name;
	assert_int_equal(klog_scram_cred_new(m, pw, strlen(pw), iter,
	    &u->creds[u->n], &err), 0);
	u->n++;
}

/* user/pencil with the RFC's salt, as the RFC's server keeps it. */
static void
rfc_users(struct users *u)
{
	static const unsigned char salt[16] = { 0x5b, 0x6d, 0x99, 0x68, 0x9d,
	    0x12, 0x35, 0x8e, 0xec, 0xa0, 0x4b, 0x14, 0x12, 0x36, 0xfa,
	    0x81 };
	klog_err_t err;

	memset(u, 0, sizeof(*u));
	u->names[0] = "user";
	assert_int_equal(klog_scram_cred_derive(KLOG_SCRAM_SHA256, "pencil",
	    6, salt, sizeof(salt), 4096, &u->creds[0], &err), 0);
	u->n = 1;
}

static klog_scram_server_t *
server(klog_scram_mech_t m, struct users *u, const char *nonce)
{
	klog_scram_server_config_t cfg = {
		.mech = m, .lookup = lookup, .lookup_arg = u,
		.secret = &secret, .nonce = nonce,
	};
	klog_scram_server_t *s;
	klog_err_t err;

	assert_int_equal(klog_scram_server_new(&cfg, &s, &err), 0);
	return s;
}

static int
server_first(klog_scram_server_t *s, const char *msg, const char **out,
    klog_err_t *err)
{
	size_t n;

	return klog_scram_server_first(s, msg, strlen(msg), out, &n, err);
}

static int
server_final(klog_scram_server_t *s, const char *msg, const char **out,
    klog_err_t *err)
{
	size_t n;

	return klog_scram_server_final(s, msg, strlen(msg), out, &n, err);
}

static void
test_rfc7677(void **state)
{
	klog_scram_client_t *c;
	klog_scram_server_t *s;
	struct users u;
	klog_err_t err;
	const char *out;
	char text[KLOG_SCRAM_CRED_TEXT_MAX];
	size_t n;

	(void)state;
	rfc_users(&u);
	assert_int_equal(klog_scram_client_new(KLOG_SCRAM_SHA256, "user",
	    "pencil", 6, RFC_CNONCE, &c, &err), 0);
	s = server(KLOG_SCRAM_SHA256, &u, RFC_SNONCE);
	assert_null(klog_scram_server_user(s));

	assert_int_equal(klog_scram_client_first(c, &out, &n, &err), 0);
	assert_string_equal(out, RFC_FIRST);
	assert_int_equal(n, strlen(RFC_FIRST));
	assert_int_equal(server_first(s, out, &out, &err), 0);
	assert_string_equal(out, RFC_SFIRST);
	assert_string_equal(klog_scram_server_user(s), "user");
	assert_int_equal(klog_scram_client_final(c, out, strlen(out), &out,
	    &n, &err), 0);
	assert_string_equal(out, RFC_FINAL);
	assert_int_equal(server_final(s, out, &out, &err), 0);
	assert_string_equal(out, RFC_SFINAL);
	assert_int_equal(klog_scram_client_verify(c, out, strlen(out), &err),
	    0);
	assert_string_equal(klog_scram_server_user(s), "user");
	/* Done: nothing more is taken. */
	assert_int_equal(server_final(s, RFC_FINAL, &out, &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_scram_client_verify(c, RFC_SFINAL,
	    strlen(RFC_SFINAL), &err), -KLOG_EINVAL);
	klog_scram_client_free(c);
	klog_scram_server_free(s);

	/* The credential as Kafka would store it: its salt is the RFC's. */
	assert_int_equal(klog_scram_cred_format(&u.creds[0], text,
	    sizeof(text)), 0);
	assert_int_equal(strncmp(text, "salt=" RFC_SALT ",stored_key=",
	    strlen("salt=" RFC_SALT ",stored_key=")), 0);
	assert_non_null(strstr(text, ",iterations=4096"));
}

/* A whole exchange of mechanism m: the server's rc at client-final. */
static int
exchange(klog_scram_mech_t m, struct users *u, const char *user,
    const char *pw, klog_err_t *err)
{
	klog_scram_client_t *c;
	klog_scram_server_t *s = server(m, u, NULL);
	const char *out;
	size_t n;
	int rc;

	assert_int_equal(klog_scram_client_new(m, user, pw, strlen(pw), NULL,
	    &c, err), 0);
	assert_int_equal(klog_scram_client_first(c, &out, &n, err), 0);
	assert_int_equal(klog_scram_server_first(s, out, n, &out, &n, err),
	    0);
	assert_int_equal(klog_scram_client_final(c, out, n, &out, &n, err),
	    0);
	rc = klog_scram_server_final(s, out, n, &out, &n, err);
	if (rc == 0) {
		assert_int_equal(klog_scram_client_verify(c, out, n, err), 0);
		assert_string_equal(klog_scram_server_user(s), user);
	}
	klog_scram_client_free(c);
	klog_scram_server_free(s);
	return rc;
}

static void
test_sha512_roundtrip(void **state)
{
	struct users u = { .n = 0 };
	klog_err_t err;

	(void)state;
	add_user(&u, "alice", KLOG_SCRAM_SHA512, "alice-secret", 4096);
	add_user(&u, "bob", KLOG_SCRAM_SHA512, "b0b", 8192);
	add_user(&u, "carol", KLOG_SCRAM_SHA256, "c", 16384);
	assert_int_equal(exchange(KLOG_SCRAM_SHA512, &u, "alice",
	    "alice-secret", &err), 0);
	assert_int_equal(exchange(KLOG_SCRAM_SHA512, &u, "bob", "b0b", &err),
	    0);
	assert_int_equal(exchange(KLOG_SCRAM_SHA256, &u, "carol", "c", &err),
	    0);
}

static void
test_wrong_password_and_unknown_user(void **state)
{
	struct users u = { .n = 0 };
	klog_err_t wrong, unknown, other;
	char msg[sizeof(wrong.msg)];

	(void)state;
	add_user(&u, "alice", KLOG_SCRAM_SHA512, "alice-secret", 4096);
	add_user(&u, "carol", KLOG_SCRAM_SHA256, "carol-secret", 4096);
	/* Both get past client-first (exchange() asserts it) and fail at
	 * client-final, with one code and one message. */
	assert_int_equal(exchange(KLOG_SCRAM_SHA512, &u, "alice", "wrong",
	    &wrong), -KLOG_EAUTH);
	snprintf(msg, sizeof(msg), "%s", wrong.msg);
	assert_int_equal(exchange(KLOG_SCRAM_SHA512, &u, "mallory",
	    "alice-secret", &unknown), -KLOG_EAUTH);
	assert_string_equal(unknown.msg, msg);
	assert_string_equal(msg, "SCRAM-SHA-512: invalid credentials");
	/* A user without a credential of this mechanism is unknown to it. */
	assert_int_equal(exchange(KLOG_SCRAM_SHA512, &u, "carol",
	    "carol-secret", &other), -KLOG_EAUTH);
	assert_string_equal(other.msg, msg);
	assert_null(strstr(msg, "secret"));
}

/* The salt and iterations of server-first. */
static void
salt_of(klog_scram_mech_t m, struct users *u, const char *user, char *salt,
    size_t cap)
{
	klog_scram_server_t *s = server(m, u, "snonce");
	char first[64];
	const char *out, *p;
	klog_err_t err;

	snprintf(first, sizeof(first), "n,,n=%s,r=abc", user);
	assert_int_equal(server_first(s, first, &out, &err), 0);
	p = strstr(out, ",s=");
	assert_non_null(p);
	snprintf(salt, cap, "%s", p + 3);
	klog_scram_server_free(s);
}

static void
test_unknown_user_looks_real(void **state)
{
	struct users u = { .n = 0 };
	char real[128], a[128], b[128], c[128];
	klog_scram_cred_t f1, f2;
	klog_scram_secret_t other;
	klog_err_t err;

	(void)state;
	add_user(&u, "alice", KLOG_SCRAM_SHA256, "pw", 4096);
	salt_of(KLOG_SCRAM_SHA256, &u, "alice", real, sizeof(real));
	salt_of(KLOG_SCRAM_SHA256, &u, "mallory", a, sizeof(a));
	salt_of(KLOG_SCRAM_SHA256, &u, "mallory", b, sizeof(b));
	salt_of(KLOG_SCRAM_SHA256, &u, "trudy", c, sizeof(c));
	/* Same shape ("<24 base64>,i=4096"), the same each time it is
	 * asked, different from name to name. */
	assert_int_equal(strlen(a), strlen(real));
	assert_string_equal(a + 24, ",i=4096");
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	/* Under another process's secret, another salt. */
	assert_int_equal(klog_scram_secret_init(&other, &err), 0);
	assert_int_equal(klog_scram_cred_fake(&secret, KLOG_SCRAM_SHA512,
	    "mallory", &f1), 0);
	assert_int_equal(klog_scram_cred_fake(&other, KLOG_SCRAM_SHA512,
	    "mallory", &f2), 0);
	assert_int_equal(f1.salt_len, KLOG_SCRAM_SALT_LEN);
	assert_int_equal(f1.iterations, KLOG_SCRAM_ITER_DEFAULT);
	assert_memory_not_equal(f1.salt, f2.salt, KLOG_SCRAM_SALT_LEN);
}

static void
test_cred_text(void **state)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "", "a field without '='" },
		{ "salt=" RFC_SALT, "no stored_key" },
		{ "salt=" RFC_SALT ",salt=" RFC_SALT, "salt given twice" },
		{ "pepper=x", "an unknown field (salt, stored_key, server_key, "
		    "iterations only)" },
		{ "salt=W22ZaJ0SNY7soEsUEjb6gQ", "salt: not base64 of 1 to 64 "
		    "bytes" },                         /* no padding */
		{ "salt=W22ZaJ0SNY7soEsUEjb6gR==", "salt: not base64 of 1 to "
		    "64 bytes" },                      /* bits past the end */
		{ "salt=W22ZaJ0S NY7soEsUEjb6g==", "salt: not base64 of 1 to "
		    "64 bytes" },
		{ "salt=", "salt: not base64 of 1 to 64 bytes" },
		{ "stored_key=" RFC_SALT, "stored_key: not base64 of 32 "
		    "bytes" },
		{ "iterations=4095", "iterations: not a number within "
		    "4096..16384" },
		{ "iterations=16385", "iterations: not a number within "
		    "4096..16384" },
		{ "iterations=04096", "iterations: not a number within "
		    "4096..16384" },
		{ "iterations=+4096", "iterations: not a number within "
		    "4096..16384" },
	};
	klog_scram_cred_t c, back;
	char text[KLOG_SCRAM_CRED_TEXT_MAX], edited[KLOG_SCRAM_CRED_TEXT_MAX + 32];
	klog_err_t err;
	char *p;

	(void)state;
	assert_int_equal(klog_scram_cred_new(KLOG_SCRAM_SHA512, "pw", 2, 8192,
	    &c, &err), 0);
	assert_int_equal(c.salt_len, KLOG_SCRAM_SALT_LEN);
	assert_int_equal(klog_scram_cred_format(&c, text, sizeof(text)), 0);
	assert_int_equal(klog_scram_cred_parse(KLOG_SCRAM_SHA512, text, &back,
	    &err), 0);
	assert_memory_equal(&c, &back, sizeof(c));
	assert_int_equal(klog_scram_cred_format(&c, text, 100),
	    -KLOG_ETOOBIG);
	/* Any order, as Kafka reads it; a trailing comma is a field. */
	assert_int_equal(klog_scram_cred_format(&c, text, sizeof(text)), 0);
	p = strstr(text, ",iterations=");
	snprintf(edited, sizeof(edited), "iterations=8192,%.*s",
	    (int)(p - text), text);
	assert_int_equal(klog_scram_cred_parse(KLOG_SCRAM_SHA512, edited,
	    &back, &err), 0);
	assert_memory_equal(&c, &back, sizeof(c));
	snprintf(edited, sizeof(edited), "%s,", text);
	assert_int_equal(klog_scram_cred_parse(KLOG_SCRAM_SHA512, edited,
	    &back, &err), -KLOG_EINVAL);
	/* A SHA-512 key is not a SHA-256 one. */
	assert_int_equal(klog_scram_cred_parse(KLOG_SCRAM_SHA256, text, &back,
	    &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, "stored_key: not base64 of 32 bytes");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.msg[0] = '\0';
		assert_int_equal(klog_scram_cred_parse(KLOG_SCRAM_SHA256,
		    bad[i].text, &back, &err), -KLOG_EINVAL);
		assert_string_equal(err.msg, bad[i].why);
	}
	/* Bounds of a new credential; the password is never in a message. */
	assert_int_equal(klog_scram_cred_new(KLOG_SCRAM_SHA256, "sesame", 6,
	    4095, &c, &err), -KLOG_EINVAL);
	assert_null(strstr(err.msg, "sesame"));
	assert_int_equal(klog_scram_cred_new(KLOG_SCRAM_SHA256, "sesame", 6,
	    16385, &c, &err), -KLOG_EINVAL);
	assert_int_equal(klog_scram_cred_new(KLOG_SCRAM_SHA256, "", 0, 4096,
	    &c, &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, "an empty password");
	assert_int_equal(klog_scram_cred_new(KLOG_SCRAM_SHA256, text,
	    KLOG_SCRAM_PASSWORD_MAX + 1, 4096, &c, &err), -KLOG_EINVAL);
	/* A fresh salt each time. */
	assert_int_equal(klog_scram_cred_new(KLOG_SCRAM_SHA256, "pw", 2, 4096,
	    &c, &err), 0);
	assert_int_equal(klog_scram_cred_new(KLOG_SCRAM_SHA256, "pw", 2, 4096,
	    &back, &err), 0);
	assert_memory_not_equal(c.salt, back.salt, KLOG_SCRAM_SALT_LEN);
}

static void
test_mechs(void **state)
{
	klog_scram_mech_t m;

	(void)state;
	assert_int_equal(klog_scram_mech_parse("SCRAM-SHA-256", &m), 0);
	assert_int_equal(m, KLOG_SCRAM_SHA256);
	assert_int_equal(klog_scram_mech_parse("SCRAM-SHA-512", &m), 0);
	assert_int_equal(m, KLOG_SCRAM_SHA512);
	assert_string_equal(klog_scram_mech_name(m), "SCRAM-SHA-512");
	assert_int_equal(klog_scram_key_len(KLOG_SCRAM_SHA512), 64);
	assert_int_equal(klog_scram_mech_parse("scram-sha-256", &m),
	    -KLOG_EUNSUPPORTED);
	assert_int_equal(klog_scram_mech_parse("PLAIN", &m),
	    -KLOG_EUNSUPPORTED);
}

static void
test_names(void **state)
{
	static const char *const good[] = { "alice", "a,b=c", "élodie",
	    "CN=writer,O=klog", "user@example.com", "日本" };
	static const struct {
		const char *name, *why;
	} bad[] = {
		{ "", "empty" },
		{ "a b", "a control character or white space" },
		{ "a\tb", "a control character or white space" },
		{ "a\x7f", "a control character or white space" },
		{ "a\xc2\x85", "a control character or white space" },
		{ "a\xc2\xa0", "a control character or white space" },
		{ "a\xe3\x80\x80", "a control character or white space" },
		{ "a\xff", "not UTF-8" },
		{ "a\xc0\xaf", "not UTF-8" },          /* overlong "/" */
		{ "a\xed\xa0\x80", "not UTF-8" },      /* a surrogate */
		{ "a\xe3\x80", "not UTF-8" },          /* cut */
	};
	char longname[KLOG_SCRAM_NAME_MAX + 2];
	klog_scram_client_t *c;
	klog_scram_server_t *s;
	struct users u = { .n = 0 };
	const char *out;
	klog_err_t err;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(klog_scram_name_check(good[i],
		    strlen(good[i]), &err), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(klog_scram_name_check(bad[i].name,
		    strlen(bad[i].name), &err), -KLOG_EINVAL);
		assert_string_equal(err.msg, bad[i].why);
	}
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(klog_scram_name_check(longname, strlen(longname),
	    &err), -KLOG_EINVAL);
	assert_int_equal(klog_scram_name_check(longname, strlen(longname) - 1,
	    &err), 0);

	/* "," and "=" escaped on the wire, given back unescaped. */
	add_user(&u, "a,b=c", KLOG_SCRAM_SHA256, "pw", 4096);
	assert_int_equal(klog_scram_client_new(KLOG_SCRAM_SHA256, "a,b=c",
	    "pw", 2, "xyz", &c, &err), 0);
	assert_int_equal(klog_scram_client_first(c, &out, &n, &err), 0);
	assert_string_equal(out, "n,,n=a=2Cb=3Dc,r=xyz");
	klog_scram_client_free(c);
	assert_int_equal(exchange(KLOG_SCRAM_SHA256, &u, "a,b=c", "pw", &err),
	    0);
	s = server(KLOG_SCRAM_SHA256, &u, NULL);
	assert_int_equal(server_first(s, "n,a=a=2Cb=3Dc,n=a=2Cb=3Dc,r=x",
	    &out, &err), 0);
	assert_string_equal(klog_scram_server_user(s), "a,b=c");
	klog_scram_server_free(s);
	/* No client for a name that could not be a user's. */
	assert_int_equal(klog_scram_client_new(KLOG_SCRAM_SHA256, "a b", "pw",
	    2, NULL, &c, &err), -KLOG_EINVAL);
	assert_null(c);
}

/* Each client-first and what the server says to it. */
static void
test_bad_client_first(void **state)
{
	static const struct {
		const char *msg;
		int rc;
	} cases[] = {
		{ "x", -KLOG_EPROTO },
		{ "n", -KLOG_EPROTO },
		{ "n,", -KLOG_EPROTO },
		{ "n,,", -KLOG_EPROTO },
		{ "q,,n=user,r=abc", -KLOG_EPROTO },
		{ "nn,,n=user,r=abc", -KLOG_EPROTO },
		{ "p=tls-unique,,n=user,r=abc", -KLOG_EUNSUPPORTED },
		{ "n,x=user,n=user,r=abc", -KLOG_EPROTO },
		{ "n,a=,n=user,r=abc", -KLOG_EPROTO },
		{ "n,a=us=er,n=user,r=abc", -KLOG_EPROTO },
		{ "n,a=other,n=user,r=abc", -KLOG_EAUTH },
		{ "n,,m=ext,n=user,r=abc", -KLOG_EUNSUPPORTED },
		{ "n,,n=,r=abc", -KLOG_EPROTO },
		{ "n,,n=us=er,r=abc", -KLOG_EPROTO },
		{ "n,,n=us=2c,r=abc", -KLOG_EPROTO },
		{ "n,,n=user=2,r=abc", -KLOG_EPROTO },
		{ "n,,n=user=", -KLOG_EPROTO },
		{ "n,,n=a b,r=abc", -KLOG_EPROTO },
		{ "n,,n=a\x01,r=abc", -KLOG_EPROTO },
		{ "n,,n=a\xff,r=abc", -KLOG_EPROTO },
		{ "n,,r=abc,n=user", -KLOG_EPROTO },
		{ "n,,n=user", -KLOG_EPROTO },
		{ "n,,n=user,", -KLOG_EPROTO },
		{ "n,,n=user,r=", -KLOG_EPROTO },
		{ "n,,n=user,r=a c", -KLOG_EPROTO },
		{ "n,,n=user,r=a\x80", -KLOG_EPROTO },
		{ "n,,n=user,x=abc", -KLOG_EPROTO },
		{ "n,,n=user,r=abc,", -KLOG_EPROTO },
		{ "n,,n=user,r=abc,=x", -KLOG_EPROTO },
		{ "n,,n=user,r=abc,1x=y", -KLOG_EPROTO },
		{ "n,,n=user,r=abc,ext", -KLOG_EPROTO },
		{ "n,,n=user,r=abc,ext=", -KLOG_EPROTO },
		/* Taken: */
		{ "n,,n=user,r=abc,tokenauth=true", 0 },
		{ "n,,n=user,r=abc,ext=1,other=a=b", 0 },
		{ "n,a=user,n=user,r=abc", 0 },
		{ "y,,n=user,r=abc", 0 },
		{ "n,,n=nobody,r=abc", 0 },
	};
	char big[KLOG_SCRAM_MSG_MAX + 2], nonce[300];
	klog_scram_server_t *s;
	struct users u;
	const char *out;
	klog_err_t err;
	size_t n;

	(void)state;
	rfc_users(&u);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = server(KLOG_SCRAM_SHA256, &u, NULL);
		err.msg[0] = '\0';
		if (server_first(s, cases[i].msg, &out, &err) != cases[i].rc)
			fail_msg("\"%s\": %s", cases[i].msg, err.msg);
		if (cases[i].rc < 0) {
			assert_null(klog_scram_server_user(s));
			/* A failure ends the exchange. */
			assert_int_equal(server_first(s, RFC_FIRST, &out,
			    &err), -KLOG_EINVAL);
			assert_int_equal(server_final(s, RFC_FINAL, &out,
			    &err), -KLOG_EINVAL);
		}
		klog_scram_server_free(s);
	}
	/* Empty, too long, a NUL, a nonce over 255. */
	s = server(KLOG_SCRAM_SHA256, &u, NULL);
	assert_int_equal(klog_scram_server_first(s, "", 0, &out, &n, &err),
	    -KLOG_EPROTO);
	klog_scram_server_free(s);
	memset(big, 'x', sizeof(big));
	memcpy(big, "n,,n=user,r=", 12);
	s = server(KLOG_SCRAM_SHA256, &u, NULL);
	assert_int_equal(klog_scram_server_first(s, big, sizeof(big) - 1,
	    &out, &n, &err), -KLOG_EPROTO);
	klog_scram_server_free(s);
	s = server(KLOG_SCRAM_SHA256, &u, NULL);
	assert_int_equal(klog_scram_server_first(s, "n,,n=user\0,r=abc", 16,
	    &out, &n, &err), -KLOG_EPROTO);
	assert_string_equal(err.msg, "client-first: a NUL byte");
	klog_scram_server_free(s);
	memset(nonce, 'z', sizeof(nonce));
	snprintf(big, sizeof(big), "n,,n=user,r=%.*s", 256, nonce);
	s = server(KLOG_SCRAM_SHA256, &u, NULL);
	assert_int_equal(server_first(s, big, &out, &err), -KLOG_EPROTO);
	klog_scram_server_free(s);
	snprintf(big, sizeof(big), "n,,n=user,r=%.*s", 255, nonce);
	s = server(KLOG_SCRAM_SHA256, &u, NULL);
	assert_int_equal(server_first(s, big, &out, &err), 0);
	klog_scram_server_free(s);
	/* Out of turn, and a nonce of the server's that is no nonce. */
	s = server(KLOG_SCRAM_SHA256, &u, NULL);
	assert_int_equal(server_final(s, RFC_FINAL, &out, &err),
	    -KLOG_EINVAL);
	klog_scram_server_free(s);
	{
		klog_scram_server_config_t cfg = {
			.mech = KLOG_SCRAM_SHA256, .secret = &secret,
			.nonce = "a,b",
		};

		assert_int_equal(klog_scram_server_new(&cfg, &s, &err),
		    -KLOG_EINVAL);
		assert_null(s);
	}
}

/* Each client-final after the RFC's client-first, and the answer. */
static void
test_bad_client_final(void **state)
{
	static const struct {
		const char *msg;
		int rc;
	} cases[] = {
		{ "c=biws,r=" RFC_CNONCE RFC_SNONCE, -KLOG_EPROTO },
		{ RFC_FINAL ",x=y", -KLOG_EPROTO },
		{ RFC_FINAL ",", -KLOG_EPROTO },
		{ "p=" RFC_PROOF, -KLOG_EPROTO },
		{ "c=eSws,r=" RFC_CNONCE RFC_SNONCE ",p=" RFC_PROOF,
		    -KLOG_EPROTO },
		{ "c=biws,r=" RFC_CNONCE ",p=" RFC_PROOF, -KLOG_EPROTO },
		{ "c=biws,r=" RFC_CNONCE RFC_SNONCE "x,p=" RFC_PROOF,
		    -KLOG_EPROTO },
		{ "r=" RFC_CNONCE RFC_SNONCE ",c=biws,p=" RFC_PROOF,
		    -KLOG_EPROTO },
		{ "c=biws,r=" RFC_CNONCE RFC_SNONCE ",=,p=" RFC_PROOF,
		    -KLOG_EPROTO },
		{ "c=biws,r=" RFC_CNONCE RFC_SNONCE ",p=", -KLOG_EPROTO },
		{ "c=biws,r=" RFC_CNONCE RFC_SNONCE ",p=dHzbZapWIk4jUhN",
		    -KLOG_EPROTO },
		{ "c=biws,r=" RFC_CNONCE RFC_SNONCE ",p=" RFC_SALT,
		    -KLOG_EPROTO },
		/* Well formed, but the proof is not for this AuthMessage, or
		 * not a proof at all. */
		{ "c=biws,r=" RFC_CNONCE RFC_SNONCE ",ext=1,p=" RFC_PROOF,
		    -KLOG_EAUTH },
		{ "c=biws,r=" RFC_CNONCE RFC_SNONCE ",p=" "AAAAAAAAAAAAAAAAAAAA"
		    "AAAAAAAAAAAAAAAAAAAAAAA=", -KLOG_EAUTH },
		{ RFC_FINAL, 0 },
	};
	klog_scram_server_t *s;
	struct users u;
	const char *out;
	klog_err_t err;

	(void)state;
	rfc_users(&u);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = server(KLOG_SCRAM_SHA256, &u, RFC_SNONCE);
		assert_int_equal(server_first(s, RFC_FIRST, &out, &err), 0);
		err.msg[0] = '\0';
		if (server_final(s, cases[i].msg, &out, &err) != cases[i].rc)
			fail_msg("\"%s\": %s", cases[i].msg, err.msg);
		if (cases[i].rc < 0)
			assert_int_equal(server_final(s, RFC_FINAL, &out,
			    &err), -KLOG_EINVAL);
		klog_scram_server_free(s);
	}
	/* With an authorization id the channel binding is its header. */
	s = server(KLOG_SCRAM_SHA256, &u, RFC_SNONCE);
	assert_int_equal(server_first(s, "n,a=user,n=user,r=" RFC_CNONCE,
	    &out, &err), 0);
	assert_int_equal(server_final(s, RFC_FINAL, &out, &err),
	    -KLOG_EPROTO);
	assert_string_equal(err.msg, "client-final: the channel binding is "
	    "not client-first's gs2 header");
	klog_scram_server_free(s);
}

/* What the client says to each server-first and server-final. */
static void
test_bad_server_messages(void **state)
{
	static const char *const firsts[] = {
		"r=" RFC_CNONCE ",s=" RFC_SALT ",i=4096",       /* not longer */
		"r=xOprNGfwEbeRWgbNEkqOabc,s=" RFC_SALT ",i=4096",
		"r=" RFC_CNONCE "a b,s=" RFC_SALT ",i=4096",
		"m=x,r=" RFC_CNONCE "abc,s=" RFC_SALT ",i=4096",
		"r=" RFC_CNONCE "abc,i=4096",
		"r=" RFC_CNONCE "abc,s=,i=4096",
		"r=" RFC_CNONCE "abc,s=W22ZaJ0SNY7soEsUEjb6gQ,i=4096",
		"r=" RFC_CNONCE "abc,s=" RFC_SALT ",i=4095",
		"r=" RFC_CNONCE "abc,s=" RFC_SALT ",i=16385",
		"r=" RFC_CNONCE "abc,s=" RFC_SALT ",i=1e4",
		"r=" RFC_CNONCE "abc,s=" RFC_SALT,
		"r=" RFC_CNONCE "abc,s=" RFC_SALT ",i=4096,x",
	};
	static const struct {
		const char *msg, *why;
		int rc;
	} finals[] = {
		{ "e=invalid-proof", "the server refused: invalid-proof",
		    -KLOG_EAUTH },
		{ "e=\x01", "the server refused", -KLOG_EAUTH },
		{ "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G5=", NULL,
		    -KLOG_EPROTO },
		{ "v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		    "server-final: the server's signature is wrong: it does "
		    "not hold our credential", -KLOG_EAUTH },
		{ "v=abc", NULL, -KLOG_EPROTO },
		{ "x=" "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", NULL,
		    -KLOG_EPROTO },
		{ RFC_SFINAL ",ext=1", NULL, 0 },
	};
	klog_scram_client_t *c;
	const char *out;
	klog_err_t err;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(firsts) / sizeof(firsts[0]); i++) {
		assert_int_equal(klog_scram_client_new(KLOG_SCRAM_SHA256,
		    "user", "pencil", 6, RFC_CNONCE, &c, &err), 0);
		assert_int_equal(klog_scram_client_first(c, &out, &n, &err),
		    0);
		if (klog_scram_client_final(c, firsts[i], strlen(firsts[i]),
		    &out, &n, &err) != -KLOG_EPROTO)
			fail_msg("\"%s\" taken", firsts[i]);
		assert_int_equal(klog_scram_client_final(c, RFC_SFIRST,
		    strlen(RFC_SFIRST), &out, &n, &err), -KLOG_EINVAL);
		klog_scram_client_free(c);
	}
	for (size_t i = 0; i < sizeof(finals) / sizeof(finals[0]); i++) {
		assert_int_equal(klog_scram_client_new(KLOG_SCRAM_SHA256,
		    "user", "pencil", 6, RFC_CNONCE, &c, &err), 0);
		/* Out of turn before client-first. */
		assert_int_equal(klog_scram_client_final(c, RFC_SFIRST,
		    strlen(RFC_SFIRST), &out, &n, &err), -KLOG_EINVAL);
		assert_int_equal(klog_scram_client_first(c, &out, &n, &err),
		    0);
		assert_int_equal(klog_scram_client_first(c, &out, &n, &err),
		    -KLOG_EINVAL);
		assert_int_equal(klog_scram_client_final(c, RFC_SFIRST,
		    strlen(RFC_SFIRST), &out, &n, &err), 0);
		assert_string_equal(out, RFC_FINAL);
		assert_int_equal(klog_scram_client_verify(c, finals[i].msg,
		    strlen(finals[i].msg), &err), finals[i].rc);
		if (finals[i].why != NULL)
			assert_string_equal(err.msg, finals[i].why);
		klog_scram_client_free(c);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc7677),
		cmocka_unit_test(test_sha512_roundtrip),
		cmocka_unit_test(test_wrong_password_and_unknown_user),
		cmocka_unit_test(test_unknown_user_looks_real),
		cmocka_unit_test(test_cred_text),
		cmocka_unit_test(test_mechs),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_bad_client_first),
		cmocka_unit_test(test_bad_client_final),
		cmocka_unit_test(test_bad_server_messages),
	};
	klog_err_t err;

	if (klog_scram_secret_init(&secret, &err) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
