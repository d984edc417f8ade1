/* SASL PLAIN checked against SCRAM credentials; see plain.h. */
#include <string.h>

#include <openssl/crypto.h>

#include "klog/auth/plain.h"

int
klog_plain_parse(const void *msg, size_t len, klog_plain_t *out,
    klog_err_t *err)
{
	const char *m = msg, *a, *b;
	klog_err_t why;
	size_t ulen;

	memset(out, 0, sizeof(*out));
	if (len == 0 || (a = memchr(m, '\0', len)) == NULL ||
	    (b = memchr(a + 1, '\0', len - (size_t)(a + 1 - m))) == NULL ||
	    memchr(b + 1, '\0', len - (size_t)(b + 1 - m)) != NULL)
		return klog_err_set(err, -KLOG_EPROTO, "PLAIN: not three parts "
		    "split by NUL");
	out->authzid = m;
	out->authzid_len = (size_t)(a - m);
	ulen = (size_t)(b - (a + 1));
	out->password = b + 1;
	out->password_len = len - (size_t)(b + 1 - m);
	if (klog_scram_name_check(a + 1, ulen, &why) < 0)
		return klog_err_set(err, -KLOG_EPROTO, "PLAIN: user name: %s",
		    why.msg);
	memcpy(out->user, a + 1, ulen);
	out->user[ulen] = '\0';
	if (out->password_len == 0)
		return klog_err_set(err, -KLOG_EPROTO, "PLAIN: no password");
	if (out->password_len > KLOG_SCRAM_PASSWORD_MAX)
		return klog_err_set(err, -KLOG_EPROTO, "PLAIN: a password over "
		    "%d bytes", KLOG_SCRAM_PASSWORD_MAX);
	/* Kafka's rule, as SCRAM's: one may act only as oneself. */
	if (out->authzid_len > 0 && (out->authzid_len != ulen ||
	    memcmp(out->authzid, out->user, ulen) != 0))
		return klog_err_set(err, -KLOG_EAUTH, "PLAIN: the "
		    "authorization id is not the user");
	return 0;
}

/* The user's credential of mechanism m into *c, if it has one fit to
 * derive with: 0, or -1. */
static int
find(const klog_plain_t *p, klog_scram_lookup_fn lookup, void *arg,
    klog_scram_mech_t m, klog_scram_cred_t *c)
{
	if (lookup(arg, p->user, m, c) < 0 || c->mech != m)
		return -1;
	return c->iterations >= KLOG_SCRAM_ITER_MIN &&
	    c->iterations <= KLOG_SCRAM_ITER_MAX && c->salt_len > 0 &&
	    c->salt_len <= KLOG_SCRAM_SALT_MAX ? 0 : -1;
}

int
klog_plain_verify(const klog_plain_t *p, klog_scram_lookup_fn lookup,
    void *arg, const klog_scram_secret_t *secret, klog_err_t *err)
{
	klog_scram_cred_t cred, mine;
	int rc, ok;

	/* The fake one first, so that an unknown user costs what a known
	 * one does. */
	if (klog_scram_cred_fake(secret, KLOG_SCRAM_SHA256, p->user,
	    &cred) < 0)
		return klog_err_set(err, -KLOG_EUNSUPPORTED, "PLAIN: HMAC "
		    "failed");
	if (find(p, lookup, arg, KLOG_SCRAM_SHA256, &mine) == 0 ||
	    find(p, lookup, arg, KLOG_SCRAM_SHA512, &mine) == 0)
		cred = mine;
	rc = klog_scram_cred_derive(cred.mech, p->password, p->password_len,
	    cred.salt, cred.salt_len, cred.iterations, &mine, err);
	ok = rc == 0 && CRYPTO_memcmp(mine.stored_key, cred.stored_key,
	    klog_scram_key_len(cred.mech)) == 0;
	OPENSSL_cleanse(&mine, sizeof(mine));
	OPENSSL_cleanse(&cred, sizeof(cred));
	if (rc == -KLOG_EUNSUPPORTED)
		return rc;
	return ok ? 0 : klog_err_set(err, -KLOG_EAUTH, "PLAIN: invalid "
	    "credentials");
}
