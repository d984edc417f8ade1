/*
 * Unit tests for lib/client/props.c: librdkafka's security properties
 * from -X key=value and from a file as kcat -F reads it, the checks that
 * they hold together, and what connections get from them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fx/tmpdir.h"

#include "klog/client/props.h"

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void
test_set(void **state)
{
	klog_props_t p;
	klog_err_t err = { 0 };

	(void)state;
	klog_props_init(&p);
	assert_int_equal(p.protocol, KLOG_PROPS_PLAINTEXT);
	assert_int_equal(p.verify_host, 1);
	assert_int_equal(klog_props_set(&p, "security.protocol=SASL_SSL",
	    &err), 0);
	assert_int_equal(p.protocol, KLOG_PROPS_SASL_SSL);
	assert_int_equal(klog_props_set(&p, "security.protocol=Ssl", &err), 0);
	assert_int_equal(p.protocol, KLOG_PROPS_SSL);
	/* The older plural is librdkafka's alias; names in any case. */
	assert_int_equal(klog_props_set(&p, "sasl.mechanisms=scram-sha-512",
	    &err), 0);
	assert_string_equal(p.mechanism, "SCRAM-SHA-512");
	assert_int_equal(klog_props_set(&p, "sasl.mechanism=PLAIN", &err), 0);
	assert_string_equal(p.mechanism, "PLAIN");
	assert_int_equal(klog_props_set(&p,
	    "ssl.endpoint.identification.algorithm=none", &err), 0);
	assert_int_equal(p.verify_host, 0);
	assert_int_equal(klog_props_set(&p,
	    "ssl.endpoint.identification.algorithm=HTTPS", &err), 0);
	assert_int_equal(p.verify_host, 1);
	/* A value may hold '=' and spaces: only the first '=' splits. */
	assert_int_equal(klog_props_set(&p, "sasl.password=a=b c", &err), 0);
	assert_string_equal(p.password, "a=b c");
	assert_int_equal(klog_props_set(&p, "sasl.username=alice", &err), 0);
	assert_int_equal(klog_props_set(&p, "ssl.ca.location=/x/ca.pem", &err),
	    0);
	assert_string_equal(p.ca, "/x/ca.pem");
	klog_props_free(&p);
	assert_null(p.ca);
}

static void
test_refused(void **state)
{
	klog_props_t p;
	klog_err_t err = { 0 };

	(void)state;
	klog_props_init(&p);
	assert_int_equal(klog_props_set(&p, "bootstrap.servers=h:1", &err),
	    -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "bootstrap.servers: unknown property"));
	assert_int_equal(klog_props_set(&p, "security.protocol=gss", &err),
	    -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "want plaintext, ssl"));
	assert_int_equal(klog_props_set(&p, "sasl.mechanism=GSSAPI", &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_props_set(&p,
	    "ssl.endpoint.identification.algorithm=yes", &err), -KLOG_EINVAL);
	assert_int_equal(klog_props_set(&p, "ssl.ca.location=", &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_props_set(&p, "security.protocol", &err),
	    -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "want key=value"));
	assert_int_equal(klog_props_set(&p, "=ssl", &err), -KLOG_EINVAL);
	/* A misspelt password key never shows its value. */
	assert_int_equal(klog_props_set(&p, "sasl.passwd=hunter2", &err),
	    -KLOG_EINVAL);
	assert_null(strstr(err.msg, "hunter2"));
	assert_int_equal(klog_props_set(&p, "sasl.passwordhunter2", &err),
	    -KLOG_EINVAL);
	assert_null(strstr(err.msg, "hunter2"));
	/* Nothing was taken. */
	assert_int_equal(p.protocol, KLOG_PROPS_PLAINTEXT);
	assert_null(p.mechanism);
	assert_null(p.ca);
	klog_props_free(&p);
}

static void
test_file(void **state)
{
	char dir[64], path[128];
	klog_props_t p;
	klog_err_t err = { 0 };

	(void)state;
	assert_non_null(tmpdir_make(dir, sizeof(dir), "props"));
	snprintf(path, sizeof(path), "%s/client.properties", dir);
	write_file(path, "# kcat -F and klog -F alike\n"
	    "\n"
	    "  security.protocol = sasl_ssl\n"
	    "sasl.mechanisms=SCRAM-SHA-256\n"
	    "   # indented comment\n"
	    "sasl.username=alice\n"
	    "sasl.password=s3cret word \n"
	    "ssl.ca.location=/etc/ca.pem\r\n");
	klog_props_init(&p);
	assert_int_equal(klog_props_load(&p, path, &err), 0);
	assert_int_equal(p.protocol, KLOG_PROPS_SASL_SSL);
	assert_string_equal(p.mechanism, "SCRAM-SHA-256");
	assert_string_equal(p.username, "alice");
	assert_string_equal(p.password, "s3cret word");
	assert_string_equal(p.ca, "/etc/ca.pem");
	/* Later settings win, in order. */
	assert_int_equal(klog_props_set(&p, "sasl.username=bob", &err), 0);
	assert_string_equal(p.username, "bob");
	klog_props_free(&p);

	write_file(path, "security.protocol=ssl\nno equals here\n");
	klog_props_init(&p);
	assert_int_equal(klog_props_load(&p, path, &err), -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "client.properties:2: want key=value"));
	write_file(path, "# ok\nfetch.wait.max.ms=10\n");
	assert_int_equal(klog_props_load(&p, path, &err), -KLOG_EINVAL);
	assert_non_null(strstr(err.msg,
	    "client.properties:2: fetch.wait.max.ms: unknown property"));
	klog_props_free(&p);
	snprintf(path, sizeof(path), "%s/missing", dir);
	klog_props_init(&p);
	assert_int_equal(klog_props_load(&p, path, &err), -KLOG_ENOENT);
	assert_non_null(strstr(err.msg, "missing"));
	klog_props_free(&p);
	tmpdir_remove(dir);
}

static void
test_security(void **state)
{
	const klog_client_sec_t *sec = (const void *)1;
	klog_props_t p;
	klog_err_t err = { 0 };

	(void)state;
	klog_props_init(&p);
	/* Plaintext: nothing for the connections. */
	assert_int_equal(klog_props_security(&p, &sec, &err), 0);
	assert_null(sec);
	/* SASL needs its mechanism, user and password, in that order. */
	assert_int_equal(klog_props_set(&p, "security.protocol=sasl_plaintext",
	    &err), 0);
	assert_int_equal(klog_props_security(&p, &sec, &err), -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "needs sasl.mechanism"));
	assert_int_equal(klog_props_set(&p, "sasl.mechanism=SCRAM-SHA-512",
	    &err), 0);
	assert_int_equal(klog_props_security(&p, &sec, &err), -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "needs sasl.username"));
	assert_int_equal(klog_props_set(&p, "sasl.username=alice", &err), 0);
	assert_int_equal(klog_props_security(&p, &sec, &err), -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "needs sasl.password"));
	assert_int_equal(klog_props_set(&p, "sasl.password=pw", &err), 0);
	assert_int_equal(klog_props_security(&p, &sec, &err), 0);
	assert_non_null(sec);
	assert_null(sec->tls);
	assert_string_equal(sec->mechanism, "SCRAM-SHA-512");
	assert_string_equal(sec->username, "alice");
	assert_string_equal(sec->password, "pw");
	/* SSL reads its files now: a CA that is not there is named. */
	assert_int_equal(klog_props_set(&p, "security.protocol=ssl", &err), 0);
	assert_int_equal(klog_props_set(&p, "ssl.ca.location=/nonexistent/ca",
	    &err), 0);
	assert_int_equal(klog_props_security(&p, &sec, &err), -KLOG_ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/ca"));
	/* A certificate without its key. */
	klog_props_free(&p);
	assert_int_equal(klog_props_set(&p, "security.protocol=ssl", &err), 0);
	assert_int_equal(klog_props_set(&p, "ssl.certificate.location=/c.pem",
	    &err), 0);
	assert_int_equal(klog_props_security(&p, &sec, &err), -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "needs its key"));
	/* The system's CAs when none is named; SSL without SASL. */
	klog_props_free(&p);
	assert_int_equal(klog_props_set(&p, "security.protocol=ssl", &err), 0);
	assert_int_equal(klog_props_set(&p, "sasl.mechanism=PLAIN", &err), 0);
	assert_int_equal(klog_props_security(&p, &sec, &err), 0);
	assert_non_null(sec->tls);
	assert_null(sec->mechanism);
	assert_int_equal(sec->verify_host, 1);
	klog_props_free(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_security),
	};

	return cmocka_run_group_tests_name("props", tests, NULL, NULL);
}
