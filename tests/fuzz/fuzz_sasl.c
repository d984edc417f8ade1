/*
 * libFuzzer target for the server's side of a SASL exchange
 * (lib/auth/sasl.c), the tokens a client sends before it is logged in,
 * whatever carries them.
 *
 * The first byte picks the mechanism (PLAIN or either SCRAM); the rest is
 * split at each "\n--\n" into the tokens a client sends in turn.  PLAIN's
 * check runs here instead of on the pool's thread.  Besides not crashing
 * or leaking, it checks what sasl.h promises: a failure is -KLOG_EAUTH
 * with the mechanism's one message, whatever went wrong (so nothing tells
 * an unknown user from a wrong password); a login succeeds only as the
 * user with the right password ("user"/"pencil", the RFC 7677 example),
 * named "User:user"; after a failure or a success every further token
 * fails.  A broken invariant aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/auth/sasl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define SEP "\n--\n"

static klog_scram_cred_t creds[KLOG_SCRAM_MECHS];
static klog_scram_secret_t secret;
static int ready;

static int
lookup(void *arg, const char *user, klog_scram_mech_t m,
    klog_scram_cred_t *out)
{
	(void)arg;
	if (strcmp(user, "user") != 0)
		return -KLOG_ENOENT;
	*out = creds[m];
	return 0;
}

static void
setup(void)
{
	if (ready)
		return;
	CHECK(klog_scram_secret_init(&secret, NULL) == 0);
	for (int m = 0; m < KLOG_SCRAM_MECHS; m++)
		CHECK(klog_scram_cred_new((klog_scram_mech_t)m, "pencil", 6,
		    4096, &creds[m], NULL) == 0);
	ready = 1;
}

static void
check_failure(klog_sasl_mech_t m, int rc, const klog_err_t *err)
{
	char want[200];

	CHECK(rc == -KLOG_EAUTH);
	if (m == KLOG_SASL_PLAIN)
		snprintf(want, sizeof(want), "Authentication failed: Invalid "
		    "username or password");
	else
		snprintf(want, sizeof(want), "Authentication failed during "
		    "authentication due to invalid credentials with SASL "
		    "mechanism %s", klog_sasl_mech_name(m));
	CHECK(strcmp(err->msg, want) == 0);
}

/* One token: the step's verdict, PLAIN's check run in between. */
static int
step(klog_sasl_t *s, const uint8_t *tok, size_t len, klog_err_t *err)
{
	const void *out;
	size_t outlen;
	int rc = klog_sasl_step(s, tok, len, &out, &outlen, err);

	if (rc >= 0)
		CHECK(out != NULL);
	if (rc != KLOG_SASL_SLOW)
		return rc;
	klog_sasl_check(s);
	return klog_sasl_step(s, NULL, 0, &out, &outlen, err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	klog_sasl_config_t cfg = { (1u << KLOG_SASL_MECH_COUNT) - 1, lookup,
	    NULL, &secret };
	const uint8_t *p, *end, *sep;
	klog_sasl_mech_t m;
	klog_sasl_t *s;
	klog_err_t err;
	int rc = KLOG_SASL_MORE, over = 0;

	if (size < 1)
		return 0;
	setup();
	m = (klog_sasl_mech_t)(data[0] % KLOG_SASL_MECH_COUNT);
	CHECK(klog_sasl_new(&cfg, m, &s, NULL) == 0);
	p = data + 1;
	end = data + size;
	while (p <= end) {
		sep = memmem(p, (size_t)(end - p), SEP, strlen(SEP));
		if (sep == NULL)
			sep = end;
		rc = step(s, p, (size_t)(sep - p), &err);
		if (over || rc < 0)
			check_failure(m, rc, &err);
		if (rc == KLOG_SASL_DONE && !over)
			CHECK(strcmp(klog_sasl_principal(s), "User:user") == 0);
		over |= rc != KLOG_SASL_MORE;
		p = sep + strlen(SEP);
	}
	klog_sasl_free(s);
	return 0;
}
