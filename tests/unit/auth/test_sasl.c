/*
 * Unit tests for lib/auth/sasl.c and lib/auth/saslpool.c: both SCRAMs
 * against klog's own client, PLAIN through the worker thread, and a
 * failure that reads the same for a wrong password and an unknown user.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "klog/auth/sasl.h"
#include "klog/auth/saslpool.h"

static klog_scram_cred_t alice[KLOG_SCRAM_MECHS];

static int
lookup(void *arg, const char *user, klog_scram_mech_t m,
    klog_scram_cred_t *out)
{
	(void)arg;
	if (strcmp(user, "alice") != 0)
		return -KLOG_ENOENT;
	*out = alice[m];
	return 0;
}

static klog_scram_secret_t secret;

static klog_sasl_config_t
config(unsigned mechs)
{
	klog_sasl_config_t c = { mechs, lookup, NULL, &secret };

	return c;
}

static int
setup(void **state)
{
	(void)state;
	assert_int_equal(klog_scram_secret_init(&secret, NULL), 0);
	for (int m = 0; m < KLOG_SCRAM_MECHS; m++)
		assert_int_equal(klog_scram_cred_new((klog_scram_mech_t)m,
		    "sesame", 6, 4096, &alice[m], NULL), 0);
	return 0;
}

/* A whole SCRAM exchange with klog's client: the server's verdict. */
static int
scram(klog_sasl_mech_t m, const char *user, const char *pw, char *why)
{
	klog_sasl_config_t cfg = config(KLOG_SASL_DEFAULT_MECHS);
	klog_scram_client_t *cl;
	klog_sasl_t *s;
	klog_err_t err;
	const void *o;
	const char *co;
	size_t olen, colen;
	int rc;

	assert_int_equal(klog_sasl_new(&cfg, m, &s, &err), 0);
	assert_int_equal(klog_scram_client_new(m == KLOG_SASL_SCRAM_SHA_256 ?
	    KLOG_SCRAM_SHA256 : KLOG_SCRAM_SHA512, user, pw, strlen(pw), NULL,
	    &cl, &err), 0);
	assert_int_equal(klog_scram_client_first(cl, &co, &colen, &err), 0);
	assert_int_equal(klog_sasl_step(s, co, colen, &o, &olen, &err),
	    KLOG_SASL_MORE);
	assert_int_equal(klog_scram_client_final(cl, o, olen, &co, &colen,
	    &err), 0);
	rc = klog_sasl_step(s, co, colen, &o, &olen, &err);
	if (rc == KLOG_SASL_DONE) {
		assert_int_equal(klog_scram_client_verify(cl, o, olen, &err),
		    0);
		assert_string_equal(klog_sasl_principal(s), "User:alice");
	} else {
		snprintf(why, 200, "%.199s", err.msg);
		assert_null(klog_sasl_principal(s));
	}
	klog_scram_client_free(cl);
	klog_sasl_free(s);
	return rc;
}

static void
test_scram(void **state)
{
	char wrong[200], unknown[200];

	(void)state;
	for (int m = KLOG_SASL_SCRAM_SHA_256; m <= KLOG_SASL_SCRAM_SHA_512;
	    m++) {
		assert_int_equal(scram((klog_sasl_mech_t)m, "alice", "sesame",
		    wrong), KLOG_SASL_DONE);
		assert_int_equal(scram((klog_sasl_mech_t)m, "alice", "wrong",
		    wrong), -KLOG_EAUTH);
		assert_int_equal(scram((klog_sasl_mech_t)m, "mallory",
		    "sesame", unknown), -KLOG_EAUTH);
		assert_string_equal(wrong, unknown);
		assert_non_null(strstr(wrong, klog_sasl_mech_name(
		    (klog_sasl_mech_t)m)));
	}
}

struct wait {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int woken;
	klog_sasl_t *back;
};

static void
notify(void *arg)
{
	struct wait *w = arg;

	pthread_mutex_lock(&w->mu);
	w->woken = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static void
done(void *tag, klog_sasl_t *s)
{
	struct wait *w = tag;

	w->back = s;
}

/* PLAIN through the pool, as the broker runs it: the verdict. */
static int
plain(klog_saslpool_t *p, struct wait *w, const void *msg, size_t len,
    char *why)
{
	klog_sasl_config_t cfg = config(KLOG_SASL_BIT(KLOG_SASL_PLAIN));
	klog_saslpool_job_t *job;
	klog_sasl_t *s;
	klog_err_t err;
	const void *o;
	size_t olen;
	int rc;

	assert_int_equal(klog_sasl_new(&cfg, KLOG_SASL_PLAIN, &s, &err), 0);
	rc = klog_sasl_step(s, msg, len, &o, &olen, &err);
	if (rc != KLOG_SASL_SLOW)
		goto out;
	assert_int_equal(klog_saslpool_submit(p, s, done, w, &job), 0);
	pthread_mutex_lock(&w->mu);
	while (!w->woken)
		pthread_cond_wait(&w->cv, &w->mu);
	w->woken = 0;
	pthread_mutex_unlock(&w->mu);
	w->back = NULL;
	klog_saslpool_drain(p);
	assert_ptr_equal(w->back, s);
	rc = klog_sasl_step(s, NULL, 0, &o, &olen, &err);
out:
	if (rc < 0)
		snprintf(why, 200, "%.199s", err.msg);
	else
		assert_string_equal(klog_sasl_principal(s), "User:alice");
	klog_sasl_free(s);
	return rc;
}

#define MSG(s) s, sizeof(s) - 1

static void
test_plain(void **state)
{
	struct wait w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
	    0, NULL };
	klog_saslpool_t *p;
	char a[200], b[200], c[200];

	(void)state;
	assert_int_equal(klog_saslpool_new(notify, &w, &p), 0);
	assert_int_equal(plain(p, &w, MSG("\0alice\0sesame"), a),
	    KLOG_SASL_DONE);
	assert_int_equal(plain(p, &w, MSG("alice\0alice\0sesame"), a),
	    KLOG_SASL_DONE);
	assert_int_equal(plain(p, &w, MSG("\0alice\0wrong"), a), -KLOG_EAUTH);
	assert_int_equal(plain(p, &w, MSG("\0mallory\0sesame"), b),
	    -KLOG_EAUTH);
	assert_int_equal(plain(p, &w, MSG("\0alice"), c), -KLOG_EAUTH);
	assert_string_equal(a, "Authentication failed: Invalid username or "
	    "password");
	assert_string_equal(a, b);
	assert_string_equal(a, c);
	klog_saslpool_free(p);
}

/* A connection gone while its check runs: the pool frees the exchange. */
static void
test_cancel(void **state)
{
	struct wait w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
	    0, NULL };
	klog_sasl_config_t cfg = config(KLOG_SASL_BIT(KLOG_SASL_PLAIN));
	klog_saslpool_job_t *job;
	klog_saslpool_t *p;
	klog_sasl_t *s;
	const void *o;
	size_t olen;

	(void)state;
	assert_int_equal(klog_saslpool_new(notify, &w, &p), 0);
	assert_int_equal(klog_sasl_new(&cfg, KLOG_SASL_PLAIN, &s, NULL), 0);
	assert_int_equal(klog_sasl_step(s, MSG("\0alice\0sesame"), &o, &olen,
	    NULL), KLOG_SASL_SLOW);
	assert_int_equal(klog_saslpool_submit(p, s, done, &w, &job), 0);
	klog_saslpool_cancel(p, job);
	pthread_mutex_lock(&w.mu);
	while (!w.woken)
		pthread_cond_wait(&w.cv, &w.mu);
	pthread_mutex_unlock(&w.mu);
	w.back = NULL;
	klog_saslpool_drain(p);
	assert_null(w.back);
	klog_saslpool_free(p);
}

static void
test_mechs(void **state)
{
	klog_sasl_config_t cfg = config(KLOG_SASL_DEFAULT_MECHS);
	klog_sasl_mech_t m;
	klog_sasl_t *s;
	klog_err_t err;
	unsigned bits;

	(void)state;
	assert_int_equal(klog_sasl_mech_parse(MSG("SCRAM-SHA-512"), &m), 0);
	assert_int_equal(m, KLOG_SASL_SCRAM_SHA_512);
	assert_int_equal(klog_sasl_mech_parse(MSG("scram-sha-512"), &m),
	    -KLOG_EUNSUPPORTED);
	assert_int_equal(klog_sasl_mech_parse(MSG("GSSAPI"), &m),
	    -KLOG_EUNSUPPORTED);
	assert_int_equal(klog_sasl_mechs_parse("PLAIN,SCRAM-SHA-256", &bits,
	    &err), 0);
	assert_int_equal(bits, KLOG_SASL_BIT(KLOG_SASL_PLAIN) |
	    KLOG_SASL_BIT(KLOG_SASL_SCRAM_SHA_256));
	assert_int_equal(klog_sasl_mechs_parse("PLAIN,,", &bits, &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_sasl_mechs_parse("", &bits, &err), -KLOG_EINVAL);
	/* Not enabled: refused as unknown. */
	assert_int_equal(klog_sasl_new(&cfg, KLOG_SASL_PLAIN, &s, &err),
	    -KLOG_EUNSUPPORTED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scram),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_mechs),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
