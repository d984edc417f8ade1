/*
 * SCRAM's server side (scram.h): client-first taken, the user's credential
 * looked up (a fake one for an unknown user), server-first answered,
 * client-final's proof checked against StoredKey, server-final signed with
 * ServerKey.  No password, no PBKDF2: two HMACs and a hash, fit for the
 * event loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "klog/auth/scram.h"
#include "scram_impl.h"

/* server-first: "r=" both nonces ",s=" salt ",i=" iterations. */
#define REPLY_MAX (2 + SCRAM_NONCE_MAX + 64 + 3 + \
	SCRAM_B64_LEN(KLOG_SCRAM_SALT_MAX) + 3 + 5 + 1)

struct klog_scram_server {
	klog_scram_mech_t mech;
	int state;
	klog_scram_lookup_fn lookup;
	void *lookup_arg;
	const klog_scram_secret_t *secret;
	char snonce[64];
	char user[KLOG_SCRAM_NAME_MAX + 1];
	klog_scram_cred_t cred;  /* the user's, or a fake one */
	/* client-first whole: its gs2 header is the channel binding that
	 * client-final must repeat, the rest is client-first-bare. */
	char first[KLOG_SCRAM_MSG_MAX + 1];
	size_t gs2_len;
	/* server-first, then server-final. */
	char reply[REPLY_MAX];
	size_t reply_len;
	size_t nonce_len;        /* of both nonces, at reply + 2 */
};

int
klog_scram_server_new(const klog_scram_server_config_t *cfg,
    klog_scram_server_t **out, klog_err_t *err)
{
	klog_scram_server_t *s;
	int rc;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	s->mech = cfg->mech;
	s->lookup = cfg->lookup;
	s->lookup_arg = cfg->lookup_arg;
	s->secret = cfg->secret;
	if ((rc = scram_make_nonce(cfg->nonce, s->snonce, sizeof(s->snonce),
	    err)) < 0) {
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* The exchange has failed: nothing more is taken, the keys are wiped; a
 * client-first refused named no one. */
static int
server_fail(klog_scram_server_t *s, int rc)
{
	if (s->state == SCRAM_ST_FIRST)
		s->user[0] = '\0';
	s->state = SCRAM_ST_FAILED;
	OPENSSL_cleanse(&s->cred, sizeof(s->cred));
	return rc;
}

/* The gs2 header: "n" or "y" (no channel binding) and an optional
 * authorization id, unescaped into authz.  Leaves fs at the bare part. */
static int
server_gs2(klog_scram_server_t *s, scram_fields_t *fs, char *authz,
    size_t cap, klog_err_t *err)
{
	const char *f;
	size_t n;

	if (scram_next_field(fs, &f, &n) < 0 || fs->done)
		return klog_err_set(err, -KLOG_EPROTO, "client-first: no gs2 "
		    "header");
	if (n >= 2 && f[0] == 'p' && f[1] == '=')
		return klog_err_set(err, -KLOG_EUNSUPPORTED, "client-first: "
		    "channel binding is not supported");
	if (n != 1 || (f[0] != 'n' && f[0] != 'y'))
		return klog_err_set(err, -KLOG_EPROTO, "client-first: the gs2 "
		    "header is not \"n\", \"y\" or \"p=\"");
	authz[0] = '\0';
	if (scram_next_field(fs, &f, &n) < 0 || fs->done)
		return klog_err_set(err, -KLOG_EPROTO, "client-first: no gs2 "
		    "header");
	if (n > 0 && (n < 3 || f[0] != 'a' || f[1] != '=' ||
	    scram_unescape(f + 2, n - 2, authz, cap) < 0))
		return klog_err_set(err, -KLOG_EPROTO, "client-first: a bad "
		    "authorization id");
	s->gs2_len = (size_t)(fs->p - s->first);
	return 0;
}

/* client-first-bare: no "m=", the user, the nonce, extensions. */
static int
server_bare(klog_scram_server_t *s, scram_fields_t *fs, const char **cnonce,
    size_t *cnlen, klog_err_t *err)
{
	klog_err_t why;
	const char *v;
	size_t n;

	if (fs->end - fs->p >= 2 && fs->p[0] == 'm' && fs->p[1] == '=')
		return klog_err_set(err, -KLOG_EUNSUPPORTED, "client-first: "
		    "a mandatory extension (m=) is not supported");
	if (scram_next_attr(fs, 'n', &v, &n) < 0 ||
	    scram_unescape(v, n, s->user, sizeof(s->user)) < 0)
		return klog_err_set(err, -KLOG_EPROTO, "client-first: no user "
		    "name, or one badly escaped");
	if (klog_scram_name_check(s->user, strlen(s->user), &why) < 0)
		return klog_err_set(err, -KLOG_EPROTO, "client-first: user "
		    "name: %s", why.msg);
	if (scram_next_attr(fs, 'r', cnonce, cnlen) < 0 ||
	    !scram_nonce_ok(*cnonce, *cnlen))
		return klog_err_set(err, -KLOG_EPROTO, "client-first: no "
		    "nonce, or not 1 to %d printable characters",
		    SCRAM_NONCE_MAX);
	if (scram_extensions_ok(fs) < 0)
		return klog_err_set(err, -KLOG_EPROTO, "client-first: a "
		    "malformed extension");
	return 0;
}

/* The user's credential, or a fake one when there is none: both made, so
 * that the answer takes as long either way. */
static int
server_cred(klog_scram_server_t *s, klog_err_t *err)
{
	klog_scram_cred_t real;

	if (klog_scram_cred_fake(s->secret, s->mech, s->user, &s->cred) < 0)
		return scram_ossl_fail(err, "client-first: HMAC");
	if (s->lookup != NULL &&
	    s->lookup(s->lookup_arg, s->user, s->mech, &real) == 0 &&
	    real.mech == s->mech && scram_check_iterations(real.iterations,
	    NULL) == 0 && real.salt_len > 0 &&
	    real.salt_len <= KLOG_SCRAM_SALT_MAX)
		s->cred = real;
	OPENSSL_cleanse(&real, sizeof(real));
	return 0;
}

int
klog_scram_server_first(klog_scram_server_t *s, const void *msg, size_t len,
    const char **out, size_t *outlen, klog_err_t *err)
{
	char authz[KLOG_SCRAM_NAME_MAX + 1];
	char salt[SCRAM_B64_LEN(KLOG_SCRAM_SALT_MAX) + 1];
	const char *cnonce;
	size_t cnlen;
	scram_fields_t fs;
	int rc, n;

	if (s->state != SCRAM_ST_FIRST)
		return scram_out_of_turn("client-first", err);
	if ((rc = scram_check_msg("client-first", msg, len, err)) < 0)
		return server_fail(s, rc);
	memcpy(s->first, msg, len);
	s->first[len] = '\0';
	fs = (scram_fields_t){ s->first, s->first + len, 0 };
	if ((rc = server_gs2(s, &fs, authz, sizeof(authz), err)) < 0 ||
	    (rc = server_bare(s, &fs, &cnonce, &cnlen, err)) < 0)
		return server_fail(s, rc);
	/* Kafka's rule: one may act only as oneself. */
	if (authz[0] != '\0' && strcmp(authz, s->user) != 0)
		return server_fail(s, klog_err_set(err, -KLOG_EAUTH,
		    "client-first: the authorization id is not the user"));
	if ((rc = server_cred(s, err)) < 0)
		return server_fail(s, rc);
	scram_b64_encode(s->cred.salt, s->cred.salt_len, salt);
	n = snprintf(s->reply, sizeof(s->reply), "r=%.*s%s,s=%s,i=%d",
	    (int)cnlen, cnonce, s->snonce, salt, s->cred.iterations);
	if (n < 0 || (size_t)n >= sizeof(s->reply))
		return server_fail(s, klog_err_set(err, -KLOG_EPROTO,
		    "client-first: a nonce too long"));
	s->reply_len = (size_t)n;
	s->nonce_len = cnlen + strlen(s->snonce);
	s->state = SCRAM_ST_FINAL;
	*out = s->reply;
	*outlen = s->reply_len;
	return 0;
}

/* client-final: the channel binding and nonce agreed, extensions, the
 * proof last; the part before ",p=" is cfwp, clen bytes. */
static int
server_final_parse(klog_scram_server_t *s, const char *m, size_t len,
    unsigned char *proof, size_t *clen, klog_err_t *err)
{
	char cb[SCRAM_B64_LEN(KLOG_SCRAM_MSG_MAX) + 1];
	size_t cblen = scram_b64_encode(s->first, s->gs2_len, cb), n, got;
	size_t klen = klog_scram_key_len(s->mech);
	const char *v, *p = NULL;
	scram_fields_t fs;

	for (size_t i = len; i > 0 && p == NULL; i--)
		if (m[i - 1] == ',')
			p = m + i;
	if (p == NULL || m + len - p < 2 || p[0] != 'p' || p[1] != '=')
		return klog_err_set(err, -KLOG_EPROTO, "client-final: no proof "
		    "last");
	*clen = (size_t)(p - 1 - m);
	fs = (scram_fields_t){ m, m + *clen, 0 };
	if (scram_next_attr(&fs, 'c', &v, &n) < 0 || n != cblen ||
	    memcmp(v, cb, n) != 0)
		return klog_err_set(err, -KLOG_EPROTO, "client-final: the "
		    "channel binding is not client-first's gs2 header");
	/* Kafka's rule (ScramSaslServer): the nonce ends with the
	 * exchange's; librdkafka 2.0 sends the client's nonce before it
	 * once more. */
	if (scram_next_attr(&fs, 'r', &v, &n) < 0 || n < s->nonce_len ||
	    memcmp(v + n - s->nonce_len, s->reply + 2, s->nonce_len) != 0)
		return klog_err_set(err, -KLOG_EPROTO, "client-final: the "
		    "nonce is not the exchange's");
	if (scram_extensions_ok(&fs) < 0)
		return klog_err_set(err, -KLOG_EPROTO, "client-final: a "
		    "malformed extension");
	if (scram_b64_decode(p + 2, (size_t)(m + len - p - 2), proof, klen,
	    &got) < 0 || got != klen)
		return klog_err_set(err, -KLOG_EPROTO, "client-final: the "
		    "proof is not base64 of %zu bytes", klen);
	return 0;
}

/* H(proof XOR HMAC(StoredKey, am)) == StoredKey, in constant time. */
static int
proof_ok(const klog_scram_cred_t *c, const char *am, size_t amlen,
    unsigned char *proof)
{
	unsigned char sig[KLOG_SCRAM_KEY_MAX], stored[KLOG_SCRAM_KEY_MAX];
	size_t n = klog_scram_key_len(c->mech);
	int ok;

	ok = scram_hmac(c->mech, c->stored_key, n, am, amlen, sig) == 0;
	for (size_t i = 0; ok && i < n; i++)
		proof[i] ^= sig[i];
	ok = ok && scram_digest(c->mech, proof, n, stored) == 0 &&
	    CRYPTO_memcmp(stored, c->stored_key, n) == 0;
	OPENSSL_cleanse(sig, sizeof(sig));
	OPENSSL_cleanse(stored, sizeof(stored));
	return ok;
}

int
klog_scram_server_final(klog_scram_server_t *s, const void *msg, size_t len,
    const char **out, size_t *outlen, klog_err_t *err)
{
	unsigned char proof[KLOG_SCRAM_KEY_MAX], sig[KLOG_SCRAM_KEY_MAX];
	char am[SCRAM_AUTH_MAX];
	size_t clen = 0, amlen, n = klog_scram_key_len(s->mech);
	int rc;

	if (s->state != SCRAM_ST_FINAL)
		return scram_out_of_turn("client-final", err);
	if ((rc = scram_check_msg("client-final", msg, len, err)) < 0 ||
	    (rc = server_final_parse(s, msg, len, proof, &clen, err)) < 0)
		return server_fail(s, rc);
	amlen = scram_auth_message(am, s->first + s->gs2_len, s->reply,
	    s->reply_len, msg, clen);
	/* A fake credential fails here too, with the same words. */
	if (!proof_ok(&s->cred, am, amlen, proof)) {
		OPENSSL_cleanse(proof, sizeof(proof));
		return server_fail(s, klog_err_set(err, -KLOG_EAUTH, "%s: "
		    "invalid credentials", klog_scram_mech_name(s->mech)));
	}
	OPENSSL_cleanse(proof, sizeof(proof));
	if (scram_hmac(s->mech, s->cred.server_key, n, am, amlen, sig) < 0)
		return server_fail(s, scram_ossl_fail(err,
		    "client-final: HMAC"));
	memcpy(s->reply, "v=", 2);
	s->reply_len = 2 + scram_b64_encode(sig, n, s->reply + 2);
	OPENSSL_cleanse(&s->cred, sizeof(s->cred));
	s->state = SCRAM_ST_DONE;
	*out = s->reply;
	*outlen = s->reply_len;
	return 0;
}

const char *
klog_scram_server_user(const klog_scram_server_t *s)
{
	return s->user[0] != '\0' ? s->user : NULL;
}

void
klog_scram_server_free(klog_scram_server_t *s)
{
	if (s == NULL)
		return;
	OPENSSL_cleanse(s, sizeof(*s));
	free(s);
}
