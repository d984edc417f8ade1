/*
 * Unit tests for lib/auth/users.c: the users file written and read back
 * (sorted, mode 0600, the old mode kept), every kind of bad line refused
 * with its line number and without the credential, files others may read
 * refused, and the set serving a SCRAM exchange.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fx/tmpdir.h"
#include "klog/auth/users.h"
#include "fx/textfile.h"

static char dir[128], path[256];
static char good_cred[KLOG_SCRAM_CRED_TEXT_MAX];

static int
setup(void **state)
{
	klog_scram_cred_t c;
	klog_err_t err;

	(void)state;
	if (tmpdir_make(dir, sizeof(dir), "users") == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/users", dir);
	if (klog_scram_cred_new(KLOG_SCRAM_SHA256, "pw", 2, 4096, &c,
	    &err) < 0)
		return -1;
	return klog_scram_cred_format(&c, good_cred, sizeof(good_cred));
}

static int
teardown(void **state)
{
	(void)state;
	tmpdir_remove(dir);
	return 0;
}

static void
write_file(const char *text, mode_t mode)
{
	textfile_write(path, text);
	assert_int_equal(chmod(path, mode), 0);
}

static void
cred(klog_scram_mech_t m, const char *pw, int iter, klog_scram_cred_t *c)
{
	klog_err_t err;

	assert_int_equal(klog_scram_cred_new(m, pw, strlen(pw), iter, c,
	    &err), 0);
}

static void
test_save_and_load(void **state)
{
	klog_scram_cred_t a256, a512, b256, got;
	klog_users_entry_t e;
	klog_users_t *u, *back;
	klog_err_t err;
	struct stat st;
	char line[600], *text;

	(void)state;
	cred(KLOG_SCRAM_SHA256, "alice-pw", 4096, &a256);
	cred(KLOG_SCRAM_SHA512, "alice-pw", 8192, &a512);
	cred(KLOG_SCRAM_SHA256, "bob-pw", 4096, &b256);
	assert_int_equal(klog_users_new(&u, &err), 0);
	assert_int_equal(klog_users_set(u, "bob", &b256, &err), 0);
	assert_int_equal(klog_users_set(u, "alice", &a512, &err), 0);
	assert_int_equal(klog_users_set(u, "alice", &a256, &err), 0);
	assert_int_equal(klog_users_count(u), 3);
	klog_users_get(u, 0, &e);
	assert_string_equal(e.name, "alice");
	assert_int_equal(e.mech, KLOG_SCRAM_SHA256);
	klog_users_get(u, 1, &e);
	assert_int_equal(e.mech, KLOG_SCRAM_SHA512);
	assert_int_equal(e.iterations, 8192);
	klog_users_get(u, 2, &e);
	assert_string_equal(e.name, "bob");
	assert_int_equal(klog_users_save(u, path, &err), 0);

	/* Mode 0600; the header, then one line per user and mechanism,
	 * in Kafka's form. */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	text = textfile_read(path);
#define HEAD "# klog users: NAME MECHANISM CREDENTIAL (klog-group users); " \
	"a secret\nalice SCRAM-SHA-256 salt="
	assert_int_equal(strncmp(text, HEAD, strlen(HEAD)), 0);
#undef HEAD
	assert_int_equal(klog_scram_cred_format(&a512, line, sizeof(line)), 0);
	assert_non_null(strstr(text, line));
	assert_non_null(strstr(text, "\nbob SCRAM-SHA-256 salt="));

	assert_int_equal(klog_users_load(path, &back, &err), 0);
	assert_int_equal(klog_users_count(back), 3);
	assert_int_equal(klog_users_lookup(back, "alice", KLOG_SCRAM_SHA512,
	    &got), 0);
	assert_memory_equal(&got, &a512, sizeof(got));
	assert_int_equal(klog_users_lookup(back, "bob", KLOG_SCRAM_SHA512,
	    &got), -KLOG_ENOENT);
	assert_int_equal(klog_users_lookup(back, "carol", KLOG_SCRAM_SHA256,
	    &got), -KLOG_ENOENT);

	/* Replaced in place; removed by mechanism, then whole. */
	assert_int_equal(klog_users_set(back, "bob", &a256, &err), 0);
	assert_int_equal(klog_users_count(back), 3);
	assert_int_equal(klog_users_remove(back, "alice",
	    1u << KLOG_SCRAM_SHA512, &err), 1);
	assert_int_equal(klog_users_remove(back, "alice",
	    1u << KLOG_SCRAM_SHA512, &err), -KLOG_ENOENT);
	assert_string_equal(err.msg, "user \"alice\": no such credential");
	assert_int_equal(klog_users_remove(back, "bob", KLOG_USERS_ALL, &err),
	    1);
	assert_int_equal(klog_users_remove(back, "bob", KLOG_USERS_ALL, &err),
	    -KLOG_ENOENT);
	assert_string_equal(err.msg, "user \"bob\": no such user");
	assert_int_equal(klog_users_count(back), 1);

	/* A save keeps the mode an operator gave (never others'). */
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(klog_users_save(back, path, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	klog_users_free(back);
	assert_int_equal(klog_users_load(path, &back, &err), 0);
	assert_int_equal(klog_users_count(back), 1);
	klog_users_free(back);
	klog_users_free(u);
	/* Names refused by set. */
	assert_int_equal(klog_users_new(&u, &err), 0);
	assert_int_equal(klog_users_set(u, "#alice", &a256, &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "a '#' first");
	assert_int_equal(klog_users_set(u, "a b", &a256, &err), -KLOG_EINVAL);
	assert_int_equal(klog_users_set(u, "", &a256, &err), -KLOG_EINVAL);
	assert_int_equal(klog_users_name_check("al#ice", &err), 0);
	klog_users_free(u);
}

static void
test_hand_edited(void **state)
{
	char text[2048];
	klog_users_t *u;
	klog_users_entry_t e;
	klog_err_t err;

	(void)state;
	/* Comments, blank lines, blanks of any kind between fields, no
	 * newline at the end. */
	snprintf(text, sizeof(text), "# users\n\n  \t\nbob\tSCRAM-SHA-256  "
	    "%s\n  # alice, later\nalice SCRAM-SHA-256 %s", good_cred,
	    good_cred);
	write_file(text, 0600);
	assert_int_equal(klog_users_load(path, &u, &err), 0);
	assert_int_equal(klog_users_count(u), 2);
	klog_users_get(u, 0, &e);
	assert_string_equal(e.name, "alice");
	klog_users_free(u);
}

static void
test_bad_lines(void **state)
{
	static const struct {
		const char *line, *why;
	} cases[] = {
		{ "alice SCRAM-SHA-256", "want NAME MECHANISM CREDENTIAL" },
		{ "alice SCRAM-SHA-256 %s extra",
		    "want NAME MECHANISM CREDENTIAL" },
		{ "alice SCRAM-SHA-1 %s", "a mechanism other than "
		    "SCRAM-SHA-256 and SCRAM-SHA-512" },
		{ "alice scram-sha-256 %s", "a mechanism other than "
		    "SCRAM-SHA-256 and SCRAM-SHA-512" },
		{ "alice SCRAM-SHA-512 %s", "SCRAM-SHA-512 credential: "
		    "stored_key: not base64 of 64 bytes" },
		{ "al\x7fice SCRAM-SHA-256 %s", "user name: a control "
		    "character or white space" },
		{ "al\xffice SCRAM-SHA-256 %s", "user name: not UTF-8" },
		{ "alice SCRAM-SHA-256 %s\r", "a carriage return (a DOS line "
		    "end?)" },
		{ "alice SCRAM-SHA-256 salt=x,%s", "SCRAM-SHA-256 credential: "
		    "salt: not base64 of 1 to 64 bytes" },
	};
	char text[4096], want[512], big[1100];
	klog_users_t *u;
	klog_err_t err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = snprintf(text, sizeof(text), "# ok\nbob SCRAM-SHA-256 "
		    "%s\n", good_cred);

		snprintf(text + n, sizeof(text) - (size_t)n, cases[i].line,
		    good_cred);
		strcat(text, "\n");
		write_file(text, 0600);
		u = NULL;
		assert_int_equal(klog_users_load(path, &u, &err),
		    -KLOG_ECORRUPT);
		assert_null(u);
		snprintf(want, sizeof(want), "%s:3: %s", path, cases[i].why);
		assert_string_equal(err.msg, want);
		/* Never the credential. */
		assert_null(strstr(err.msg, "stored_key="));
	}
	/* A user and mechanism twice; a NUL; a line too long. */
	snprintf(text, sizeof(text), "bob SCRAM-SHA-256 %s\nalice "
	    "SCRAM-SHA-256 %s\n\nbob SCRAM-SHA-256 %s\n", good_cred,
	    good_cred, good_cred);
	write_file(text, 0600);
	assert_int_equal(klog_users_load(path, &u, &err), -KLOG_ECORRUPT);
	snprintf(want, sizeof(want), "%s:4: bob SCRAM-SHA-256 again (first "
	    "on line 1)", path);
	assert_string_equal(err.msg, want);
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fwrite("# a\nbob\0 SCRAM-SHA-256 x\n", 1, 25, f);
		fclose(f);
	}
	assert_int_equal(klog_users_load(path, &u, &err), -KLOG_ECORRUPT);
	snprintf(want, sizeof(want), "%s:2: a NUL byte", path);
	assert_string_equal(err.msg, want);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	write_file(big, 0600);
	assert_int_equal(klog_users_load(path, &u, &err), -KLOG_ECORRUPT);
	snprintf(want, sizeof(want), "%s:1: over 1024 bytes", path);
	assert_string_equal(err.msg, want);
}

static void
test_refused_files(void **state)
{
	char want[512];
	klog_users_t *u;
	klog_err_t err;

	(void)state;
	unlink(path);
	assert_int_equal(klog_users_load(path, &u, &err), -KLOG_ENOENT);
	write_file("", 0644);
	assert_int_equal(klog_users_load(path, &u, &err), -KLOG_EINVAL);
	snprintf(want, sizeof(want), "%s: others may read or write it (mode "
	    "0644): it holds secrets; chmod o-rwx it", path);
	assert_string_equal(err.msg, want);
	assert_int_equal(chmod(path, 0602), 0);
	assert_int_equal(klog_users_load(path, &u, &err), -KLOG_EINVAL);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(klog_users_load(path, &u, &err), 0);
	assert_int_equal(klog_users_count(u), 0);
	klog_users_free(u);
	assert_int_equal(klog_users_load(dir, &u, &err), -KLOG_EINVAL);
	/* A save where there is no directory leaves nothing. */
	assert_int_equal(klog_users_new(&u, &err), 0);
	snprintf(want, sizeof(want), "%s/no/users", dir);
	assert_int_equal(klog_users_save(u, want, &err), -KLOG_ENOENT);
	klog_users_free(u);
}

/* The set as a SCRAM server's lookup: alice logs in, bob's removal
 * makes him unknown. */
static void
test_serves_scram(void **state)
{
	klog_scram_secret_t secret;
	klog_scram_cred_t c;
	klog_users_t *u;
	klog_err_t err;
	int rc;

	(void)state;
	assert_int_equal(klog_scram_secret_init(&secret, &err), 0);
	assert_int_equal(klog_users_new(&u, &err), 0);
	cred(KLOG_SCRAM_SHA512, "alice-pw", 4096, &c);
	assert_int_equal(klog_users_set(u, "alice", &c, &err), 0);
	for (int i = 0; i < 2; i++) {
		klog_scram_server_config_t cfg = {
			.mech = KLOG_SCRAM_SHA512, .lookup = klog_users_lookup,
			.lookup_arg = u, .secret = &secret,
		};
		klog_scram_server_t *s;
		klog_scram_client_t *cl;
		const char *out;
		size_t n;

		assert_int_equal(klog_scram_server_new(&cfg, &s, &err), 0);
		assert_int_equal(klog_scram_client_new(KLOG_SCRAM_SHA512,
		    "alice", "alice-pw", 8, NULL, &cl, &err), 0);
		assert_int_equal(klog_scram_client_first(cl, &out, &n, &err),
		    0);
		assert_int_equal(klog_scram_server_first(s, out, n, &out, &n,
		    &err), 0);
		assert_int_equal(klog_scram_client_final(cl, out, n, &out, &n,
		    &err), 0);
		rc = klog_scram_server_final(s, out, n, &out, &n, &err);
		assert_int_equal(rc, i == 0 ? 0 : -KLOG_EAUTH);
		klog_scram_client_free(cl);
		klog_scram_server_free(s);
		klog_users_remove(u, "alice", KLOG_USERS_ALL, &err);
	}
	klog_users_free(u);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_save_and_load),
		cmocka_unit_test(test_hand_edited),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_refused_files),
		cmocka_unit_test(test_serves_scram),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
