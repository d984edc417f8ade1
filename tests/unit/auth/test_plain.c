/*
 * Unit tests for lib/auth/plain.c: PLAIN messages taken apart by Kafka's
 * rules, and checked against SCRAM credentials: the right password, a
 * wrong one and an unknown user, the last two alike.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "klog/auth/plain.h"

#define MSG(s) s, sizeof(s) - 1

static void
test_parse(void **state)
{
	static const struct {
		const char *msg;
		size_t len;
		int rc;
		const char *why;
	} bad[] = {
		{ MSG(""), -KLOG_EPROTO, "PLAIN: not three parts split by NUL" },
		{ MSG("alice"), -KLOG_EPROTO, "PLAIN: not three parts split "
		    "by NUL" },
		{ MSG("\0alice"), -KLOG_EPROTO, "PLAIN: not three parts split "
		    "by NUL" },
		{ MSG("\0alice\0pw\0"), -KLOG_EPROTO, "PLAIN: not three parts "
		    "split by NUL" },
		{ MSG("\0\0pw"), -KLOG_EPROTO, "PLAIN: user name: empty" },
		{ MSG("\0a b\0pw"), -KLOG_EPROTO, "PLAIN: user name: a control "
		    "character or white space" },
		{ MSG("\0alice\0"), -KLOG_EPROTO, "PLAIN: no password" },
		{ MSG("bob\0alice\0sesame"), -KLOG_EAUTH, "PLAIN: the "
		    "authorization id is not the user" },
		{ MSG("alic\0alice\0sesame"), -KLOG_EAUTH, "PLAIN: the "
		    "authorization id is not the user" },
	};
	klog_plain_t p;
	klog_err_t err;

	(void)state;
	assert_int_equal(klog_plain_parse(MSG("\0alice\0sesame"), &p, &err),
	    0);
	assert_string_equal(p.user, "alice");
	assert_int_equal(p.authzid_len, 0);
	assert_int_equal(p.password_len, 6);
	assert_memory_equal(p.password, "sesame", 6);
	/* kafka-python's: the user as authorization id too. */
	assert_int_equal(klog_plain_parse(MSG("alice\0alice\0sesame"), &p,
	    &err), 0);
	assert_int_equal(p.authzid_len, 5);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(klog_plain_parse(bad[i].msg, bad[i].len, &p,
		    &err), bad[i].rc);
		assert_string_equal(err.msg, bad[i].why);
		assert_null(strstr(err.msg, "sesame"));
	}
}

struct one {
	const char *name;
	klog_scram_cred_t cred;
};

static int
lookup(void *arg, const char *user, klog_scram_mech_t m,
    klog_scram_cred_t *out)
{
	const struct one *u = arg;

	for (int i = 0; i < 2; i++)
		if (strcmp(u[i].name, user) == 0 && u[i].cred.mech == m) {
			*out = u[i].cred;
			return 0;
		}
	return -KLOG_ENOENT;
}

static int
verify(const struct one *users, const klog_scram_secret_t *secret,
    const char *msg, size_t len, klog_err_t *err)
{
	klog_plain_t p;

	assert_int_equal(klog_plain_parse(msg, len, &p, err), 0);
	return klog_plain_verify(&p, lookup, (void *)users, secret, err);
}

static void
test_verify(void **state)
{
	struct one users[2] = { { .name = "alice" }, { .name = "bob" } };
	klog_scram_secret_t secret;
	klog_err_t err, wrong;

	(void)state;
	assert_int_equal(klog_scram_secret_init(&secret, &err), 0);
	assert_int_equal(klog_scram_cred_new(KLOG_SCRAM_SHA256, "sesame", 6,
	    4096, &users[0].cred, &err), 0);
	assert_int_equal(klog_scram_cred_new(KLOG_SCRAM_SHA512, "open", 4,
	    8192, &users[1].cred, &err), 0);
	assert_int_equal(verify(users, &secret, MSG("\0alice\0sesame"), &err),
	    0);
	/* A user with a SCRAM-SHA-512 credential only. */
	assert_int_equal(verify(users, &secret, MSG("bob\0bob\0open"), &err),
	    0);
	assert_int_equal(verify(users, &secret, MSG("\0alice\0sesamE"),
	    &wrong), -KLOG_EAUTH);
	assert_string_equal(wrong.msg, "PLAIN: invalid credentials");
	assert_int_equal(verify(users, &secret, MSG("\0mallory\0sesame"),
	    &err), -KLOG_EAUTH);
	assert_string_equal(err.msg, wrong.msg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_verify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
