/*
 * SCRAM's client side (scram.h), for klog's own tools: client-first, then
 * client-final with the proof from the password (PBKDF2: off the loop),
 * then the server's signature checked, so that a server which does not
 * hold our credential is not taken for the real one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "klog/auth/scram.h"
#include "scram_impl.h"

struct klog_scram_client {
	klog_scram_mech_t mech;
	int state;
	char password[KLOG_SCRAM_PASSWORD_MAX];
	size_t pwlen;
	/* client-first: "n,," then client-first-bare. */
	char first[3 + 2 + 3 * KLOG_SCRAM_NAME_MAX + 3 + 64 + 1];
	size_t first_len;
	size_t cnonce_len;       /* at the end of first */
	unsigned char server_sig[KLOG_SCRAM_KEY_MAX];
	/* client-final: "c=biws,r=" the nonces ",p=" the proof. */
	char final[KLOG_SCRAM_MSG_MAX + 16 + SCRAM_B64_LEN(KLOG_SCRAM_KEY_MAX)];
	size_t final_len;
};

int
klog_scram_client_new(klog_scram_mech_t m, const char *user,
    const char *password, size_t pwlen, const char *nonce,
    klog_scram_client_t **out, klog_err_t *err)
{
	char cnonce[64], esc[3 * KLOG_SCRAM_NAME_MAX + 1];
	klog_scram_client_t *c;
	klog_err_t why;
	int rc;

	*out = NULL;
	if (klog_scram_name_check(user, strlen(user), &why) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "user name: %s",
		    why.msg);
	if ((rc = scram_check_password(pwlen, err)) < 0 ||
	    (rc = scram_make_nonce(nonce, cnonce, sizeof(cnonce), err)) < 0)
		return rc;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	c->mech = m;
	memcpy(c->password, password, pwlen);
	c->pwlen = pwlen;
	scram_escape(user, esc, sizeof(esc));
	c->first_len = (size_t)snprintf(c->first, sizeof(c->first),
	    "n,,n=%s,r=%s", esc, cnonce);
	c->cnonce_len = strlen(cnonce);
	*out = c;
	return 0;
}

int
klog_scram_client_first(klog_scram_client_t *c, const char **out,
    size_t *outlen, klog_err_t *err)
{
	if (c->state != SCRAM_ST_FIRST)
		return scram_out_of_turn("client-first", err);
	c->state = SCRAM_ST_FINAL;
	*out = c->first;
	*outlen = c->first_len;
	return 0;
}

/* server-first: no "m=", our nonce extended, the salt, the iterations,
 * extensions. */
static int
client_first_parse(klog_scram_client_t *c, const char *m, size_t len,
    const char **nonce, size_t *nlen, unsigned char *salt, size_t *slen,
    int *iter, klog_err_t *err)
{
	const char *cn = c->first + c->first_len - c->cnonce_len, *v;
	scram_fields_t fs = { m, m + len, 0 };
	size_t n;

	if (len >= 2 && m[0] == 'm' && m[1] == '=')
		return klog_err_set(err, -KLOG_EPROTO, "server-first: a "
		    "mandatory extension (m=) is not supported");
	if (scram_next_attr(&fs, 'r', nonce, nlen) < 0 ||
	    *nlen <= c->cnonce_len || memcmp(*nonce, cn, c->cnonce_len) != 0 ||
	    !scram_nonce_ok(*nonce + c->cnonce_len, *nlen - c->cnonce_len))
		return klog_err_set(err, -KLOG_EPROTO, "server-first: the "
		    "nonce does not extend ours");
	if (scram_next_attr(&fs, 's', &v, &n) < 0 ||
	    scram_b64_decode(v, n, salt, KLOG_SCRAM_SALT_MAX, slen) < 0)
		return klog_err_set(err, -KLOG_EPROTO, "server-first: the salt "
		    "is not base64 of 1 to %d bytes", KLOG_SCRAM_SALT_MAX);
	if (scram_next_attr(&fs, 'i', &v, &n) < 0 ||
	    scram_parse_iterations(v, n, iter) < 0)
		return klog_err_set(err, -KLOG_EPROTO, "server-first: "
		    "iterations not within %d..%d", KLOG_SCRAM_ITER_MIN,
		    KLOG_SCRAM_ITER_MAX);
	if (scram_extensions_ok(&fs) < 0)
		return klog_err_set(err, -KLOG_EPROTO, "server-first: a "
		    "malformed extension");
	return 0;
}

/* The proof into c->final, and the signature to expect into
 * c->server_sig, from the keys of the password. */
static int
client_prove(klog_scram_client_t *c, const char *am, size_t amlen,
    const unsigned char *ck, const unsigned char *stored,
    const unsigned char *server, klog_err_t *err)
{
	unsigned char sig[KLOG_SCRAM_KEY_MAX];
	size_t n = klog_scram_key_len(c->mech);

	if (scram_hmac(c->mech, stored, n, am, amlen, sig) < 0 ||
	    scram_hmac(c->mech, server, n, am, amlen, c->server_sig) < 0)
		return scram_ossl_fail(err, "client-final: HMAC");
	for (size_t i = 0; i < n; i++)
		sig[i] ^= ck[i];
	memcpy(c->final + c->final_len, ",p=", 3);
	c->final_len += 3;
	c->final_len += scram_b64_encode(sig, n, c->final + c->final_len);
	OPENSSL_cleanse(sig, sizeof(sig));
	return 0;
}

int
klog_scram_client_final(klog_scram_client_t *c, const void *msg, size_t len,
    const char **out, size_t *outlen, klog_err_t *err)
{
	unsigned char salt[KLOG_SCRAM_SALT_MAX], ck[KLOG_SCRAM_KEY_MAX];
	unsigned char stored[KLOG_SCRAM_KEY_MAX], server[KLOG_SCRAM_KEY_MAX];
	char am[SCRAM_AUTH_MAX];
	const char *nonce;
	size_t nlen, slen, amlen;
	int iter, rc;

	if (c->state != SCRAM_ST_FINAL)
		return scram_out_of_turn("server-first", err);
	c->state = SCRAM_ST_FAILED;
	if ((rc = scram_check_msg("server-first", msg, len, err)) < 0 ||
	    (rc = client_first_parse(c, msg, len, &nonce, &nlen, salt, &slen,
	    &iter, err)) < 0 ||
	    (rc = scram_salted_keys(c->mech, c->password, c->pwlen, salt, slen,
	    iter, ck, stored, server, err)) < 0)
		return rc;
	c->final_len = (size_t)snprintf(c->final, sizeof(c->final),
	    "c=biws,r=%.*s", (int)nlen, nonce);
	amlen = scram_auth_message(am, c->first + 3, msg, len, c->final,
	    c->final_len);
	rc = client_prove(c, am, amlen, ck, stored, server, err);
	OPENSSL_cleanse(ck, sizeof(ck));
	OPENSSL_cleanse(stored, sizeof(stored));
	OPENSSL_cleanse(server, sizeof(server));
	if (rc < 0)
		return rc;
	c->state = SCRAM_ST_VERIFY;
	*out = c->final;
	*outlen = c->final_len;
	return 0;
}

/* A server's "e=" text in err if it is printable, else a plain refusal. */
static int
server_error(const char *v, size_t n, klog_err_t *err)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] > 0x7e)
			return klog_err_set(err, -KLOG_EAUTH, "the server "
			    "refused");
	return klog_err_set(err, -KLOG_EAUTH, "the server refused: %.*s",
	    (int)(n > 200 ? 200 : n), v);
}

int
klog_scram_client_verify(klog_scram_client_t *c, const void *msg, size_t len,
    klog_err_t *err)
{
	unsigned char sig[KLOG_SCRAM_KEY_MAX];
	const char *m = msg, *v;
	size_t n, got, klen = klog_scram_key_len(c->mech);
	scram_fields_t fs = { m, m + len, 0 };
	int rc;

	if (c->state != SCRAM_ST_VERIFY)
		return scram_out_of_turn("server-final", err);
	c->state = SCRAM_ST_FAILED;
	OPENSSL_cleanse(c->password, sizeof(c->password));
	if ((rc = scram_check_msg("server-final", msg, len, err)) < 0)
		return rc;
	if (len >= 2 && m[0] == 'e' && m[1] == '=') {
		fs.p += 2;
		scram_next_field(&fs, &v, &n);
		return server_error(v, n, err);
	}
	if (scram_next_attr(&fs, 'v', &v, &n) < 0 ||
	    scram_b64_decode(v, n, sig, klen, &got) < 0 || got != klen ||
	    scram_extensions_ok(&fs) < 0)
		return klog_err_set(err, -KLOG_EPROTO, "server-final: not "
		    "\"v=\" and base64 of %zu bytes", klen);
	if (CRYPTO_memcmp(sig, c->server_sig, klen) != 0)
		return klog_err_set(err, -KLOG_EAUTH, "server-final: the "
		    "server's signature is wrong: it does not hold our "
		    "credential");
	c->state = SCRAM_ST_DONE;
	return 0;
}

void
klog_scram_client_free(klog_scram_client_t *c)
{
	if (c == NULL)
		return;
	OPENSSL_cleanse(c, sizeof(*c));
	free(c);
}
