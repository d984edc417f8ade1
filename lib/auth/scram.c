/*
 * SCRAM's credentials and what both sides of the exchange share (scram.h):
 * the mechanisms, OpenSSL's primitives, strict base64, user names and
 * their escaping, the fields of a message.  The server's side is
 * lib/auth/scramserver.c, the client's lib/auth/scramclient.c; the three
 * share lib/auth/scram_impl.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "klog/auth/scram.h"
#include "scram_impl.h"

static const struct mech {
	const char *name;
	const EVP_MD *(*md)(void);
	size_t len;
} mechs[KLOG_SCRAM_MECHS] = {
	[KLOG_SCRAM_SHA256] = { "SCRAM-SHA-256", EVP_sha256, 32 },
	[KLOG_SCRAM_SHA512] = { "SCRAM-SHA-512", EVP_sha512, 64 },
};

/* The most either side decodes: a salt or a key. */
#define B64_RAW_MAX (KLOG_SCRAM_SALT_MAX > KLOG_SCRAM_KEY_MAX ? \
	KLOG_SCRAM_SALT_MAX : KLOG_SCRAM_KEY_MAX)
/* Our nonces: 24 random bytes in base64 (32 characters). */
#define NONCE_RAW 24

const char *
klog_scram_mech_name(klog_scram_mech_t m)
{
	return (unsigned)m < KLOG_SCRAM_MECHS ? mechs[m].name : "?";
}

int
klog_scram_mech_parse(const char *name, klog_scram_mech_t *out)
{
	for (int m = 0; m < KLOG_SCRAM_MECHS; m++)
		if (strcmp(name, mechs[m].name) == 0) {
			*out = (klog_scram_mech_t)m;
			return 0;
		}
	return -KLOG_EUNSUPPORTED;
}

size_t
klog_scram_key_len(klog_scram_mech_t m)
{
	return mechs[m].len;
}

/* ---- OpenSSL ---- */

int
scram_ossl_fail(klog_err_t *err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[160];

	ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return klog_err_set(err, -KLOG_EUNSUPPORTED, "%s: %s", what,
	    e != 0 ? buf : "OpenSSL failed");
}

int
scram_hmac(klog_scram_mech_t m, const void *key, size_t klen,
    const void *data, size_t n, unsigned char *out)
{
	unsigned int len = 0;

	return HMAC(mechs[m].md(), key, (int)klen, data, n, out, &len) !=
	    NULL && len == mechs[m].len ? 0 : -1;
}

int
scram_digest(klog_scram_mech_t m, const void *data, size_t n,
    unsigned char *out)
{
	unsigned int len = 0;

	return EVP_Digest(data, n, out, &len, mechs[m].md(), NULL) == 1 &&
	    len == mechs[m].len ? 0 : -1;
}

static int
random_bytes(unsigned char *p, size_t n, klog_err_t *err)
{
	return RAND_bytes(p, (int)n) == 1 ? 0 :
	    scram_ossl_fail(err, "RAND_bytes");
}

int
scram_salted_keys(klog_scram_mech_t m, const char *pw, size_t pwlen,
    const unsigned char *salt, size_t slen, int iter, unsigned char *ck,
    unsigned char *stored, unsigned char *server, klog_err_t *err)
{
	unsigned char salted[KLOG_SCRAM_KEY_MAX], client[KLOG_SCRAM_KEY_MAX];
	size_t n = mechs[m].len;
	int ok;

	ok = PKCS5_PBKDF2_HMAC(pw, (int)pwlen, salt, (int)slen, iter,
	    mechs[m].md(), (int)n, salted) == 1 &&
	    scram_hmac(m, salted, n, "Client Key", 10, client) == 0 &&
	    scram_digest(m, client, n, stored) == 0 &&
	    scram_hmac(m, salted, n, "Server Key", 10, server) == 0;
	if (ok && ck != NULL)
		memcpy(ck, client, n);
	OPENSSL_cleanse(salted, sizeof(salted));
	OPENSSL_cleanse(client, sizeof(client));
	return ok ? 0 : scram_ossl_fail(err, "PBKDF2");
}

/* ---- base64, strictly ---- */

size_t
scram_b64_encode(const void *in, size_t n, char *out)
{
	return (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

static int
b64_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '+' || c == '/';
}

/* EVP_DecodeBlock() counts the padding as bytes and takes what is not
 * base64 quietly, so the text is checked first and encoded back after
 * (which also refuses bits set past the last byte). */
int
scram_b64_decode(const char *s, size_t len, unsigned char *out, size_t max,
    size_t *n)
{
	unsigned char raw[SCRAM_B64_LEN(B64_RAW_MAX) / 4 * 3];
	char again[SCRAM_B64_LEN(B64_RAW_MAX) + 1];
	size_t pad = 0, i;
	int ok;

	if (len == 0 || len % 4 != 0 || len > SCRAM_B64_LEN(max))
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] == '=' && i + 2 >= len)
			pad++;
		else if (pad > 0 || !b64_char(s[i]))
			return -1;
	}
	*n = len / 4 * 3 - pad;
	if (*n > max || EVP_DecodeBlock(raw, (const unsigned char *)s,
	    (int)len) < 0)
		return -1;
	ok = scram_b64_encode(raw, *n, again) == len &&
	    memcmp(again, s, len) == 0;
	if (ok)
		memcpy(out, raw, *n);
	OPENSSL_cleanse(raw, sizeof(raw));
	return ok ? 0 : -1;
}

/* ---- names ---- */

/* The code point at p (n bytes left) and its length, or 0 when it is not
 * well-formed UTF-8 (overlong, a surrogate, past U+10FFFF, cut). */
static size_t
utf8_next(const unsigned char *p, size_t n, uint32_t *c)
{
	size_t len, i;
	uint32_t min;

	if (p[0] < 0x80) {
		*c = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0) {
		len = 2, min = 0x80, *c = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3, min = 0x800, *c = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4, min = 0x10000, *c = p[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		*c = *c << 6 | (p[i] & 0x3f);
	}
	if (*c < min || *c > 0x10ffff || (*c >= 0xd800 && *c <= 0xdfff))
		return 0;
	return len;
}

/* Unicode's White_Space above Latin-1 (which the caller has refused). */
static int
wide_space(uint32_t c)
{
	return c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
	    c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

int
klog_scram_name_check(const char *name, size_t len, klog_err_t *err)
{
	const unsigned char *p = (const unsigned char *)name;
	uint32_t c;
	size_t i, n;

	if (len == 0)
		return klog_err_set(err, -KLOG_EINVAL, "empty");
	if (len > KLOG_SCRAM_NAME_MAX)
		return klog_err_set(err, -KLOG_EINVAL, "over %d bytes",
		    KLOG_SCRAM_NAME_MAX);
	for (i = 0; i < len; i += n) {
		if ((n = utf8_next(p + i, len - i, &c)) == 0)
			return klog_err_set(err, -KLOG_EINVAL, "not UTF-8");
		/* C0, space, DEL, C1 and no-break space, then the rest. */
		if (c <= 0x20 || (c >= 0x7f && c <= 0xa0) || wide_space(c))
			return klog_err_set(err, -KLOG_EINVAL, "a control "
			    "character or white space");
	}
	return 0;
}

int
scram_escape(const char *name, char *out, size_t cap)
{
	size_t o = 0;

	for (; *name != '\0'; name++) {
		const char *e = *name == ',' ? "=2C" : *name == '=' ? "=3D" :
		    NULL;
		size_t n = e != NULL ? 3 : 1;

		if (o + n >= cap)
			return -1;
		memcpy(out + o, e != NULL ? e : name, n);
		o += n;
	}
	out[o] = '\0';
	return (int)o;
}

int
scram_unescape(const char *s, size_t len, char *out, size_t cap)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == '=') {
			if (i + 2 >= len)
				return -1;
			if (s[i + 1] == '2' && s[i + 2] == 'C')
				c = ',';
			else if (s[i + 1] == '3' && s[i + 2] == 'D')
				c = '=';
			else
				return -1;
			i += 2;
		}
		if (o + 1 >= cap)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return (int)o;
}

/* ---- credentials ---- */

int
scram_check_password(size_t pwlen, klog_err_t *err)
{
	if (pwlen == 0)
		return klog_err_set(err, -KLOG_EINVAL, "an empty password");
	if (pwlen > KLOG_SCRAM_PASSWORD_MAX)
		return klog_err_set(err, -KLOG_EINVAL, "a password over %d "
		    "bytes", KLOG_SCRAM_PASSWORD_MAX);
	return 0;
}

int
scram_check_iterations(int iterations, klog_err_t *err)
{
	if (iterations < KLOG_SCRAM_ITER_MIN ||
	    iterations > KLOG_SCRAM_ITER_MAX)
		return klog_err_set(err, -KLOG_EINVAL, "iterations %d: not "
		    "within %d..%d", iterations, KLOG_SCRAM_ITER_MIN,
		    KLOG_SCRAM_ITER_MAX);
	return 0;
}

int
klog_scram_cred_derive(klog_scram_mech_t m, const char *password,
    size_t pwlen, const unsigned char *salt, size_t salt_len, int iterations,
    klog_scram_cred_t *out, klog_err_t *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = scram_check_password(pwlen, err)) < 0 ||
	    (rc = scram_check_iterations(iterations, err)) < 0)
		return rc;
	if (salt_len == 0 || salt_len > KLOG_SCRAM_SALT_MAX)
		return klog_err_set(err, -KLOG_EINVAL, "a salt of %zu bytes",
		    salt_len);
	out->mech = m;
	out->iterations = iterations;
	out->salt_len = salt_len;
	memcpy(out->salt, salt, salt_len);
	return scram_salted_keys(m, password, pwlen, salt, salt_len, iterations,
	    NULL, out->stored_key, out->server_key, err);
}

int
klog_scram_cred_new(klog_scram_mech_t m, const char *password, size_t pwlen,
    int iterations, klog_scram_cred_t *out, klog_err_t *err)
{
	unsigned char salt[KLOG_SCRAM_SALT_LEN];
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = scram_check_password(pwlen, err)) < 0 ||
	    (rc = scram_check_iterations(iterations, err)) < 0 ||
	    (rc = random_bytes(salt, sizeof(salt), err)) < 0)
		return rc;
	return klog_scram_cred_derive(m, password, pwlen, salt, sizeof(salt),
	    iterations, out, err);
}

int
klog_scram_cred_format(const klog_scram_cred_t *c, char *buf, size_t size)
{
	char salt[SCRAM_B64_LEN(KLOG_SCRAM_SALT_MAX) + 1];
	char stored[SCRAM_B64_LEN(KLOG_SCRAM_KEY_MAX) + 1];
	char server[SCRAM_B64_LEN(KLOG_SCRAM_KEY_MAX) + 1];
	size_t n = mechs[c->mech].len;
	int len;

	scram_b64_encode(c->salt, c->salt_len, salt);
	scram_b64_encode(c->stored_key, n, stored);
	scram_b64_encode(c->server_key, n, server);
	len = snprintf(buf, size, "salt=%s,stored_key=%s,server_key=%s,"
	    "iterations=%d", salt, stored, server, c->iterations);
	OPENSSL_cleanse(stored, sizeof(stored));
	OPENSSL_cleanse(server, sizeof(server));
	return len < 0 || (size_t)len >= size ? -KLOG_ETOOBIG : 0;
}

int
scram_parse_iterations(const char *s, size_t n, int *out)
{
	int v = 0;

	if (n == 0 || n > 5 || s[0] == '0')
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return v >= KLOG_SCRAM_ITER_MIN && v <= KLOG_SCRAM_ITER_MAX ? 0 : -1;
}

/* Field k of a credential was not as it must be: say which and how,
 * never what it held. */
static int
bad_field(int k, size_t klen, klog_err_t *err)
{
	if (k == 0)
		return klog_err_set(err, -KLOG_EINVAL, "salt: not base64 of 1 "
		    "to %d bytes", KLOG_SCRAM_SALT_MAX);
	if (k == 3)
		return klog_err_set(err, -KLOG_EINVAL, "iterations: not a "
		    "number within %d..%d", KLOG_SCRAM_ITER_MIN,
		    KLOG_SCRAM_ITER_MAX);
	return klog_err_set(err, -KLOG_EINVAL, "%s: not base64 of %zu bytes",
	    k == 1 ? "stored_key" : "server_key", klen);
}

static const char *const cred_keys[4] = { "salt", "stored_key",
    "server_key", "iterations" };

/* The field from p to f ("key=value") into c; seen marks those taken. */
static int
cred_field(const char *p, const char *f, unsigned *seen,
    klog_scram_cred_t *c, klog_err_t *err)
{
	size_t klen = mechs[c->mech].len, got;
	const char *eq = memchr(p, '=', (size_t)(f - p)), *v;
	int k, ok;

	if (eq == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "a field without '='");
	for (k = 0; k < 4; k++)
		if ((size_t)(eq - p) == strlen(cred_keys[k]) &&
		    memcmp(p, cred_keys[k], (size_t)(eq - p)) == 0)
			break;
	if (k == 4)
		return klog_err_set(err, -KLOG_EINVAL, "an unknown field "
		    "(salt, stored_key, server_key, iterations only)");
	if (*seen & 1u << k)
		return klog_err_set(err, -KLOG_EINVAL, "%s given twice",
		    cred_keys[k]);
	*seen |= 1u << k;
	v = eq + 1;
	if (k == 0)
		ok = scram_b64_decode(v, (size_t)(f - v), c->salt,
		    KLOG_SCRAM_SALT_MAX, &c->salt_len) == 0;
	else if (k == 3)
		ok = scram_parse_iterations(v, (size_t)(f - v),
		    &c->iterations) == 0;
	else
		ok = scram_b64_decode(v, (size_t)(f - v), k == 1 ?
		    c->stored_key : c->server_key, klen, &got) == 0 &&
		    got == klen;
	return ok ? 0 : bad_field(k, klen, err);
}

int
klog_scram_cred_parse(klog_scram_mech_t m, const char *text,
    klog_scram_cred_t *out, klog_err_t *err)
{
	const char *p = text, *end = text + strlen(text), *f;
	unsigned seen = 0;
	int k, rc = 0;

	memset(out, 0, sizeof(*out));
	out->mech = m;
	for (; rc == 0 && p <= end; p = f + 1) {
		if ((f = memchr(p, ',', (size_t)(end - p))) == NULL)
			f = end;
		rc = cred_field(p, f, &seen, out, err);
	}
	for (k = 0; rc == 0 && k < 4; k++)
		if (!(seen & 1u << k))
			rc = klog_err_set(err, -KLOG_EINVAL, "no %s",
			    cred_keys[k]);
	if (rc < 0)
		OPENSSL_cleanse(out, sizeof(*out));
	return rc;
}

int
klog_scram_secret_init(klog_scram_secret_t *s, klog_err_t *err)
{
	return random_bytes(s->key, sizeof(s->key), err);
}

/* HMAC of label, a NUL, then name, under the secret. */
static int
fake_part(const klog_scram_secret_t *s, klog_scram_mech_t m,
    const char *label, const char *name, size_t n, unsigned char *out)
{
	char data[16 + KLOG_SCRAM_NAME_MAX];
	size_t l = strlen(label) + 1;

	memcpy(data, label, l);
	memcpy(data + l, name, n);
	return scram_hmac(m, s->key, sizeof(s->key), data, l + n, out);
}

int
klog_scram_cred_fake(const klog_scram_secret_t *s, klog_scram_mech_t m,
    const char *user, klog_scram_cred_t *out)
{
	unsigned char salt[KLOG_SCRAM_KEY_MAX];
	size_t n = strnlen(user, KLOG_SCRAM_NAME_MAX + 1);

	memset(out, 0, sizeof(*out));
	if (n > KLOG_SCRAM_NAME_MAX)
		return -KLOG_EINVAL;
	out->mech = m;
	out->iterations = KLOG_SCRAM_ITER_DEFAULT;
	out->salt_len = KLOG_SCRAM_SALT_LEN;
	if (fake_part(s, m, "salt", user, n, salt) < 0 ||
	    fake_part(s, m, "stored_key", user, n, out->stored_key) < 0 ||
	    fake_part(s, m, "server_key", user, n, out->server_key) < 0)
		return -KLOG_EUNSUPPORTED;
	memcpy(out->salt, salt, KLOG_SCRAM_SALT_LEN);
	return 0;
}

/* ---- the messages ---- */

int
scram_check_msg(const char *what, const void *msg, size_t len,
    klog_err_t *err)
{
	if (len == 0 || len > KLOG_SCRAM_MSG_MAX)
		return klog_err_set(err, -KLOG_EPROTO, "%s: %zu bytes (1 to %d "
		    "taken)", what, len, KLOG_SCRAM_MSG_MAX);
	if (memchr(msg, '\0', len) != NULL)
		return klog_err_set(err, -KLOG_EPROTO, "%s: a NUL byte", what);
	return 0;
}

int
scram_next_field(scram_fields_t *fs, const char **f, size_t *n)
{
	const char *c;

	if (fs->done)
		return -1;
	if ((c = memchr(fs->p, ',', (size_t)(fs->end - fs->p))) == NULL) {
		c = fs->end;
		fs->done = 1;
	}
	*f = fs->p;
	*n = (size_t)(c - fs->p);
	fs->p = c + (c < fs->end);
	return 0;
}

int
scram_next_attr(scram_fields_t *fs, char a, const char **v, size_t *n)
{
	const char *f;
	size_t len;

	if (scram_next_field(fs, &f, &len) < 0 || len < 2 || f[0] != a ||
	    f[1] != '=')
		return -1;
	*v = f + 2;
	*n = len - 2;
	return 0;
}

int
scram_extensions_ok(scram_fields_t *fs)
{
	const char *f;
	size_t n, i;

	while (scram_next_field(fs, &f, &n) == 0) {
		for (i = 0; i < n && ((f[i] >= 'A' && f[i] <= 'Z') ||
		    (f[i] >= 'a' && f[i] <= 'z')); i++)
			;
		if (i == 0 || i + 1 >= n || f[i] != '=')
			return -1;
	}
	return 0;
}

int
scram_nonce_ok(const char *s, size_t n)
{
	if (n == 0 || n > SCRAM_NONCE_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e || s[i] == ',')
			return 0;
	return 1;
}

int
scram_make_nonce(const char *given, char *out, size_t cap, klog_err_t *err)
{
	unsigned char raw[NONCE_RAW];
	int rc;

	if (given != NULL) {
		if (!scram_nonce_ok(given, strlen(given)) ||
		    strlen(given) >= cap)
			return klog_err_set(err, -KLOG_EINVAL, "a nonce of "
			    "printable characters but ',' is wanted");
		strcpy(out, given);
		return 0;
	}
	if ((rc = random_bytes(raw, sizeof(raw), err)) < 0)
		return rc;
	scram_b64_encode(raw, sizeof(raw), out);
	return 0;
}

size_t
scram_auth_message(char *am, const char *bare, const char *first,
    size_t flen, const char *cfwp, size_t clen)
{
	size_t n = strlen(bare);

	memcpy(am, bare, n);
	am[n++] = ',';
	memcpy(am + n, first, flen);
	n += flen;
	am[n++] = ',';
	memcpy(am + n, cfwp, clen);
	return n + clen;
}

int
scram_out_of_turn(const char *what, klog_err_t *err)
{
	return klog_err_set(err, -KLOG_EINVAL, "%s out of turn", what);
}
