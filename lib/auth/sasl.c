#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "klog/auth/plain.h"
#include "klog/auth/sasl.h"
#include "klog/auth/scram.h"

#define PRINCIPAL_MAX (5 + KLOG_SCRAM_NAME_MAX + 1)

enum step { FIRST, FINAL, CHECKING, CHECKED, OVER };

struct klog_sasl {
	klog_sasl_mech_t mech;
	klog_sasl_config_t cfg;
	enum step step;
	klog_scram_server_t *scram;
	/* PLAIN: the message (owned), taken apart, the credential looked up
	 * on the loop and the thread's verdict. */
	uint8_t *msg;
	size_t msglen;
	klog_plain_t plain;
	klog_scram_cred_t cred;
	int cred_found;
	int verdict;
	char principal[PRINCIPAL_MAX];
};

static const char *const names[KLOG_SASL_MECH_COUNT] = {
	"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512",
};

const char *
klog_sasl_mech_name(klog_sasl_mech_t m)
{
	return (unsigned)m < KLOG_SASL_MECH_COUNT ? names[m] : "UNKNOWN";
}

int
klog_sasl_mech_parse(const char *name, size_t len, klog_sasl_mech_t *m)
{
	for (int i = 0; i < KLOG_SASL_MECH_COUNT; i++)
		if (strlen(names[i]) == len && memcmp(name, names[i], len) == 0) {
			*m = (klog_sasl_mech_t)i;
			return 0;
		}
	return -KLOG_EUNSUPPORTED;
}

int
klog_sasl_mechs_parse(const char *list, unsigned *mechs, klog_err_t *err)
{
	const char *p = list, *end;
	klog_sasl_mech_t m;
	size_t n;

	*mechs = 0;
	for (;;) {
		end = strchr(p, ',');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (klog_sasl_mech_parse(p, n, &m) < 0)
			return klog_err_set(err, -KLOG_EINVAL, "%.*s: not a "
			    "SASL mechanism (want PLAIN, SCRAM-SHA-256 or "
			    "SCRAM-SHA-512)", (int)(n > 64 ? 64 : n), p);
		*mechs |= KLOG_SASL_BIT(m);
		if (end == NULL)
			return 0;
		p = end + 1;
	}
}

/* Kafka's one message a mechanism, whatever went wrong. */
static int
fail(klog_sasl_t *s, klog_err_t *err)
{
	s->step = OVER;
	if (s->mech == KLOG_SASL_PLAIN)
		return klog_err_set(err, -KLOG_EAUTH, "Authentication failed: "
		    "Invalid username or password");
	return klog_err_set(err, -KLOG_EAUTH, "Authentication failed during "
	    "authentication due to invalid credentials with SASL mechanism "
	    "%s", names[s->mech]);
}

int
klog_sasl_new(const klog_sasl_config_t *cfg, klog_sasl_mech_t m,
    klog_sasl_t **out, klog_err_t *err)
{
	klog_scram_server_config_t sc = { 0 };
	klog_sasl_t *s;
	int rc;

	*out = NULL;
	if ((unsigned)m >= KLOG_SASL_MECH_COUNT ||
	    !(cfg->mechs & KLOG_SASL_BIT(m)))
		return klog_err_set(err, -KLOG_EUNSUPPORTED, "%s: not an "
		    "enabled mechanism", klog_sasl_mech_name(m));
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	s->mech = m;
	s->cfg = *cfg;
	if (m != KLOG_SASL_PLAIN) {
		sc.mech = m == KLOG_SASL_SCRAM_SHA_256 ? KLOG_SCRAM_SHA256 :
		    KLOG_SCRAM_SHA512;
		sc.lookup = cfg->lookup;
		sc.lookup_arg = cfg->lookup_arg;
		sc.secret = cfg->secret;
		if ((rc = klog_scram_server_new(&sc, &s->scram, err)) < 0) {
			free(s);
			return rc;
		}
	}
	*out = s;
	return 0;
}

static int
name(klog_sasl_t *s, const char *user)
{
	snprintf(s->principal, sizeof(s->principal), "User:%s", user);
	s->step = OVER;
	return KLOG_SASL_DONE;
}

static int
scram_step(klog_sasl_t *s, const void *in, size_t len, const void **out,
    size_t *outlen, klog_err_t *err)
{
	const char *o;
	int rc;

	if (s->step == FIRST) {
		rc = klog_scram_server_first(s->scram, in, len, &o, outlen,
		    NULL);
		if (rc < 0)
			return fail(s, err);
		s->step = FINAL;
		*out = o;
		return KLOG_SASL_MORE;
	}
	if (klog_scram_server_final(s->scram, in, len, &o, outlen, NULL) < 0)
		return fail(s, err);
	*out = o;
	return name(s, klog_scram_server_user(s->scram));
}

/* The loop's part of PLAIN: take the message apart and find the keys, so
 * that the thread touches nothing the loop may change. */
static int
plain_first(klog_sasl_t *s, const void *in, size_t len, klog_err_t *err)
{
	if ((s->msg = malloc(len > 0 ? len : 1)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	memcpy(s->msg, in, len);
	s->msglen = len;
	if (klog_plain_parse(s->msg, len, &s->plain, NULL) < 0)
		return fail(s, err);
	s->cred_found = s->cfg.lookup(s->cfg.lookup_arg, s->plain.user,
	    KLOG_SCRAM_SHA256, &s->cred) == 0 ||
	    s->cfg.lookup(s->cfg.lookup_arg, s->plain.user, KLOG_SCRAM_SHA512,
	    &s->cred) == 0;
	s->step = CHECKING;
	return KLOG_SASL_SLOW;
}

int
klog_sasl_step(klog_sasl_t *s, const void *in, size_t len,
    const void **out, size_t *outlen, klog_err_t *err)
{
	*out = "";
	*outlen = 0;
	if (s->step == OVER || s->step == CHECKING || (in == NULL) !=
	    (s->step == CHECKED))
		return fail(s, err);
	if (s->mech != KLOG_SASL_PLAIN)
		return scram_step(s, in, len, out, outlen, err);
	if (s->step == FIRST)
		return plain_first(s, in, len, err);
	if (s->verdict < 0)
		return fail(s, err);
	return name(s, s->plain.user);
}

/* klog_plain_verify()'s lookup: the credential found on the loop. */
static int
found(void *arg, const char *user, klog_scram_mech_t m,
    klog_scram_cred_t *out)
{
	klog_sasl_t *s = arg;

	(void)user;
	if (!s->cred_found || s->cred.mech != m)
		return -KLOG_ENOENT;
	*out = s->cred;
	return 0;
}

void
klog_sasl_check(klog_sasl_t *s)
{
	if (s->step != CHECKING)
		return;
	s->verdict = klog_plain_verify(&s->plain, found, s, s->cfg.secret,
	    NULL);
	s->step = CHECKED;
}

const char *
klog_sasl_principal(const klog_sasl_t *s)
{
	return s->principal[0] != '\0' ? s->principal : NULL;
}

klog_sasl_mech_t
klog_sasl_mech(const klog_sasl_t *s)
{
	return s->mech;
}

void
klog_sasl_free(klog_sasl_t *s)
{
	if (s == NULL)
		return;
	klog_scram_server_free(s->scram);
	if (s->msg != NULL)
		OPENSSL_cleanse(s->msg, s->msglen);
	free(s->msg);
	OPENSSL_cleanse(s, sizeof(*s));
	free(s);
}
