/*
 * Tests for lib/net/tls.c: listener schemes, the context from files (made
 * here with OpenSSL: a CA, a server and a client certificate), its reload
 * when a file changes, and a handshake, reads and writes over a socket
 * pair against OpenSSL's own client, with and without a client
 * certificate.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "fx/tmpdir.h"

#include "klog/net/tls.h"

struct fx {
	char dir[64];
	char ca[128], cert[128], key[128], ccert[128], ckey[128], other[128];
};

static EVP_PKEY *
new_key(void)
{
	EVP_PKEY *k = EVP_RSA_gen(2048);

	assert_non_null(k);
	return k;
}

/* A certificate for cn with key k, signed by (ca, cakey), or self-signed
 * when ca is NULL. */
static X509 *
new_cert(const char *cn, EVP_PKEY *k, X509 *ca, EVP_PKEY *cakey)
{
	X509 *x = X509_new();
	X509_NAME *n;

	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), (long)random());
	X509_gmtime_adj(X509_getm_notBefore(x), -60);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, k);
	n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "O", MBSTRING_ASC,
	    (const unsigned char *)"klog tests", -1, -1, 0);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	    (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, ca != NULL ? X509_get_subject_name(ca) : n);
	if (ca == NULL) {
		X509V3_CTX v;
		X509_EXTENSION *e;

		X509V3_set_ctx(&v, x, x, NULL, NULL, 0);
		e = X509V3_EXT_conf_nid(NULL, &v, NID_basic_constraints,
		    "critical,CA:TRUE");
		X509_add_ext(x, e, -1);
		X509_EXTENSION_free(e);
	}
	assert_true(X509_sign(x, ca != NULL ? cakey : k, EVP_sha256()) > 0);
	return x;
}

static void
write_pem(const char *path, X509 *x, EVP_PKEY *k)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	if (x != NULL)
		assert_true(PEM_write_X509(f, x));
	if (k != NULL)
		assert_true(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL,
		    NULL));
	assert_int_equal(fclose(f), 0);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	EVP_PKEY *cak, *sk, *ck, *ok;
	X509 *ca, *s, *c, *o;

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "tls"));
#define P(field, name) snprintf(f->field, sizeof(f->field), "%s/%s", \
	f->dir, name)
	P(ca, "ca.pem");
	P(cert, "server.pem");
	P(key, "server.key");
	P(ccert, "client.pem");
	P(ckey, "client.key");
	P(other, "other.pem");
#undef P
	cak = new_key();
	ca = new_cert("test CA", cak, NULL, NULL);
	sk = new_key();
	s = new_cert("localhost", sk, ca, cak);
	ck = new_key();
	c = new_cert("writer", ck, ca, cak);
	ok = new_key();
	o = new_cert("other CA", ok, NULL, NULL);
	write_pem(f->ca, ca, NULL);
	write_pem(f->cert, s, NULL);
	write_pem(f->key, NULL, sk);
	write_pem(f->ccert, c, NULL);
	write_pem(f->ckey, NULL, ck);
	write_pem(f->other, o, NULL);
	X509_free(ca);
	X509_free(s);
	X509_free(c);
	X509_free(o);
	EVP_PKEY_free(cak);
	EVP_PKEY_free(sk);
	EVP_PKEY_free(ck);
	EVP_PKEY_free(ok);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

static void
test_schemes(void **state)
{
	klog_err_t err;
	const char *addr;
	int tls;

	(void)state;
	assert_int_equal(klog_tls_scheme("127.0.0.1:9092", &tls, &addr, &err),
	    0);
	assert_int_equal(tls, 0);
	assert_string_equal(addr, "127.0.0.1:9092");
	assert_int_equal(klog_tls_scheme("ssl://h:1", &tls, &addr, &err), 0);
	assert_int_equal(tls, KLOG_SEC_TLS);
	assert_string_equal(addr, "h:1");
	assert_int_equal(klog_tls_scheme("PLAINTEXT://h:1", &tls, &addr,
	    &err), 0);
	assert_int_equal(tls, 0);
	assert_int_equal(klog_tls_scheme("HTTPS://h", &tls, &addr, &err), 0);
	assert_int_equal(tls, KLOG_SEC_TLS);
	assert_int_equal(klog_tls_scheme("SASL_SSL://h:1", &tls, &addr, &err),
	    0);
	assert_int_equal(tls, KLOG_SEC_TLS | KLOG_SEC_SASL);
	assert_int_equal(klog_tls_scheme("sasl_plaintext://h:1", &tls, &addr,
	    &err), 0);
	assert_int_equal(tls, KLOG_SEC_SASL);
	assert_int_equal(klog_tls_scheme("SSLX://h:1", &tls, &addr, &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_tls_client_auth_parse("Required", &tls, &err),
	    0);
	assert_int_equal(tls, KLOG_TLS_AUTH_REQUIRED);
	assert_int_equal(klog_tls_client_auth_parse("maybe", &tls, &err),
	    -KLOG_EINVAL);
}

static void
test_bad_files(void **state)
{
	struct fx *f = *state;
	klog_tls_config_t c = { f->cert, f->ckey, NULL, 0 };
	klog_tls_t *t;
	klog_err_t err;

	assert_int_equal(klog_tls_new(&c, &t, &err), -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "client.key: not the certificate's"));
	c.key = f->key;
	c.cert = "/nonexistent/cert.pem";
	assert_int_equal(klog_tls_new(&c, &t, &err), -KLOG_ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/cert.pem"));
	c.cert = f->cert;
	c.client_auth = KLOG_TLS_AUTH_REQUIRED;
	assert_int_equal(klog_tls_new(&c, &t, &err), -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "--ssl-ca"));
	c.ca = f->key;   /* not certificates */
	assert_int_equal(klog_tls_new(&c, &t, &err), -KLOG_EINVAL);
	assert_null(t);
}

/* Drive both ends of a handshake on a socket pair until both are done. */
static void
handshake(SSL *srv, SSL *cli, int expect_ok)
{
	uint8_t b[1];
	klog_err_t err;
	int want, cdone = 0, sdone = 0, r;

	for (int i = 0; i < 1000 && !(cdone && sdone); i++) {
		if (!cdone) {
			r = SSL_connect(cli);
			if (r == 1)
				cdone = 1;
			else if (SSL_get_error(cli, r) != SSL_ERROR_WANT_READ &&
			    SSL_get_error(cli, r) != SSL_ERROR_WANT_WRITE)
				cdone = -1;
		}
		if (!sdone) {
			ssize_t n = klog_tls_read(srv, b, 0, &want, &err);

			if (klog_tls_established(srv))
				sdone = 1;
			else if (n == -2)
				sdone = -1;
		}
		if (cdone < 0 || sdone < 0)
			break;
	}
	if (expect_ok) {
		assert_int_equal(cdone, 1);
		assert_int_equal(sdone, 1);
	} else {
		assert_true(cdone < 0 || sdone < 0);
	}
}

static SSL *
client(SSL_CTX **ctx, const char *ca, const char *cert, const char *key,
    int fd)
{
	SSL *s;

	*ctx = SSL_CTX_new(TLS_client_method());
	assert_non_null(*ctx);
	assert_int_equal(SSL_CTX_load_verify_locations(*ctx, ca, NULL), 1);
	SSL_CTX_set_verify(*ctx, SSL_VERIFY_PEER, NULL);
	if (cert != NULL) {
		assert_int_equal(SSL_CTX_use_certificate_file(*ctx, cert,
		    SSL_FILETYPE_PEM), 1);
		assert_int_equal(SSL_CTX_use_PrivateKey_file(*ctx, key,
		    SSL_FILETYPE_PEM), 1);
	}
	s = SSL_new(*ctx);
	SSL_set_fd(s, fd);
	SSL_set_tlsext_host_name(s, "localhost");
	return s;
}

static void
pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
}

static void
test_round_trip_and_principal(void **state)
{
	struct fx *f = *state;
	klog_tls_config_t c = { f->cert, f->key, f->ca,
	    KLOG_TLS_AUTH_REQUESTED };
	char who[256], buf[64];
	klog_tls_t *t;
	klog_err_t err;
	SSL_CTX *cctx;
	SSL *srv, *cli;
	ssize_t n;
	int sv[2], want;

	assert_int_equal(klog_tls_new(&c, &t, &err), 0);
	/* Without a client certificate: anonymous. */
	pair(sv);
	srv = klog_tls_accept(t, sv[0]);
	cli = client(&cctx, f->ca, NULL, NULL, sv[1]);
	handshake(srv, cli, 1);
	assert_int_equal(klog_tls_principal(srv, who, sizeof(who)), 0);
	assert_string_equal(who, "User:ANONYMOUS");
	n = klog_tls_read(srv, buf, sizeof(buf), &want, &err);
	assert_int_equal(n, -1);
	assert_int_equal(want, KLOG_TLS_WANT_READ);
	assert_int_equal(SSL_write(cli, "ping", 4), 4);
	assert_int_equal(klog_tls_read(srv, buf, sizeof(buf), &want, &err), 4);
	assert_memory_equal(buf, "ping", 4);
	assert_int_equal(klog_tls_write(srv, "pong", 4, &want, &err), 4);
	assert_int_equal(SSL_read(cli, buf, sizeof(buf)), 4);
	SSL_shutdown(cli);
	assert_int_equal(klog_tls_read(srv, buf, sizeof(buf), &want, &err), 0);
	klog_tls_close(srv);
	SSL_free(cli);
	SSL_CTX_free(cctx);
	close(sv[0]);
	close(sv[1]);

	/* With one: Kafka's principal, the subject in RFC 2253 order. */
	pair(sv);
	srv = klog_tls_accept(t, sv[0]);
	cli = client(&cctx, f->ca, f->ccert, f->ckey, sv[1]);
	handshake(srv, cli, 1);
	assert_int_equal(klog_tls_principal(srv, who, sizeof(who)), 0);
	assert_string_equal(who, "User:CN=writer,O=klog tests");
	assert_int_equal(klog_tls_principal(srv, who, 8), -KLOG_ETOOBIG);
	klog_tls_close(srv);
	SSL_free(cli);
	SSL_CTX_free(cctx);
	close(sv[0]);
	close(sv[1]);
	klog_tls_free(t);
}

static void
test_required_and_untrusted(void **state)
{
	struct fx *f = *state;
	klog_tls_config_t c = { f->cert, f->key, f->ca,
	    KLOG_TLS_AUTH_REQUIRED };
	klog_tls_t *t;
	klog_err_t err;
	SSL_CTX *cctx;
	SSL *srv, *cli;
	int sv[2];

	assert_int_equal(klog_tls_new(&c, &t, &err), 0);
	/* No client certificate: refused. */
	pair(sv);
	srv = klog_tls_accept(t, sv[0]);
	cli = client(&cctx, f->ca, NULL, NULL, sv[1]);
	handshake(srv, cli, 0);
	klog_tls_close(srv);
	SSL_free(cli);
	SSL_CTX_free(cctx);
	close(sv[0]);
	close(sv[1]);
	/* A client that trusts another CA refuses the server. */
	pair(sv);
	srv = klog_tls_accept(t, sv[0]);
	cli = client(&cctx, f->other, f->ccert, f->ckey, sv[1]);
	handshake(srv, cli, 0);
	klog_tls_close(srv);
	SSL_free(cli);
	SSL_CTX_free(cctx);
	close(sv[0]);
	close(sv[1]);
	klog_tls_free(t);
}

static void
test_reload(void **state)
{
	struct fx *f = *state;
	klog_tls_config_t c = { f->cert, f->key, NULL, 0 };
	char moved[160];
	klog_tls_t *t;
	klog_err_t err;

	assert_int_equal(klog_tls_new(&c, &t, &err), 0);
	assert_int_equal(klog_tls_reload(t, &err), 0);
	/* A key that does not match: said, the old context kept, and not
	 * said again until a file changes once more. */
	snprintf(moved, sizeof(moved), "%s.keep", f->key);
	assert_int_equal(rename(f->key, moved), 0);
	assert_int_equal(link(f->ckey, f->key), 0);
	assert_int_equal(klog_tls_reload(t, &err), -KLOG_EINVAL);
	assert_int_equal(klog_tls_reload(t, &err), 0);
	assert_int_equal(unlink(f->key), 0);
	assert_int_equal(rename(moved, f->key), 0);
	assert_int_equal(klog_tls_reload(t, &err), 1);
	assert_int_equal(klog_tls_reload(t, &err), 0);
	klog_tls_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schemes),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_round_trip_and_principal),
		cmocka_unit_test(test_required_and_untrusted),
		cmocka_unit_test(test_reload),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
