/*
 * Unit tests for lib/client/client.c's TLS and SASL: a server thread in
 * the test (OpenSSL's blocking calls, lib/auth's SCRAM server) and the
 * client as the tools drive it.  Certificates are made here: a CA, a
 * server certificate for 127.0.0.1, and a CA the server is not from.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
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
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "fx/tmpdir.h"

#include "klog/auth/scram.h"
#include "klog/base/clock.h"
#include "klog/client/client.h"
#include "klog/net/tls.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"

#define USER "alice"
#define PASSWORD "alice-secret"
#define RECORDS 5          /* responses the drain test sends at once */

struct fx {
	char dir[64];
	char ca[128], cert[128], key[128], other[128];
	klog_tls_t *server;        /* the test server's context */
	int lfd, port;
	/* The server thread's script and what it saw. */
	pthread_t thread;
	int tls;                   /* the server speaks TLS */
	int mode;                  /* enum mode */
	klog_scram_cred_t cred;
	int16_t sasl_error;        /* answer the first AUTHENTICATE so */
	char mech_seen[32];
	uint8_t plain_seen[64];
	size_t plain_len;
};

enum mode { DRAIN, SASL, HANGUP };

static EVP_PKEY *
new_key(void)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");

	assert_non_null(k);
	return k;
}

/* A certificate for cn (with IP:127.0.0.1 when leaf) signed by (ca,
 * cakey), or a self-signed CA when ca is NULL. */
static X509 *
new_cert(const char *cn, EVP_PKEY *k, X509 *ca, EVP_PKEY *cakey)
{
	X509 *x = X509_new();
	X509V3_CTX v;
	X509_EXTENSION *e;
	X509_NAME *n;

	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), (long)random());
	X509_gmtime_adj(X509_getm_notBefore(x), -60);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, k);
	n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	    (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, ca != NULL ? X509_get_subject_name(ca) : n);
	X509V3_set_ctx(&v, ca != NULL ? ca : x, x, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &v, ca != NULL ?
	    NID_subject_alt_name : NID_basic_constraints, ca != NULL ?
	    "IP:127.0.0.1" : "critical,CA:TRUE");
	assert_non_null(e);
	X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
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
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	klog_tls_config_t sc;
	EVP_PKEY *cak, *sk, *ok;
	X509 *ca, *s, *o;
	klog_err_t err;

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), "clienttls"));
	snprintf(f->ca, sizeof(f->ca), "%s/ca.pem", f->dir);
	snprintf(f->cert, sizeof(f->cert), "%s/server.pem", f->dir);
	snprintf(f->key, sizeof(f->key), "%s/server.key", f->dir);
	snprintf(f->other, sizeof(f->other), "%s/other.pem", f->dir);
	cak = new_key();
	ca = new_cert("test CA", cak, NULL, NULL);
	sk = new_key();
	s = new_cert("broker", sk, ca, cak);
	ok = new_key();
	o = new_cert("other CA", ok, NULL, NULL);
	write_pem(f->ca, ca, NULL);
	write_pem(f->cert, s, NULL);
	write_pem(f->key, NULL, sk);
	write_pem(f->other, o, NULL);
	X509_free(ca);
	X509_free(s);
	X509_free(o);
	EVP_PKEY_free(cak);
	EVP_PKEY_free(sk);
	EVP_PKEY_free(ok);
	sc = (klog_tls_config_t){ f->cert, f->key, NULL, 0 };
	assert_int_equal(klog_tls_new(&sc, &f->server, &err), 0);
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sl), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
	assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&sa, &sl), 0);
	f->port = ntohs(sa.sin_port);
	assert_int_equal(klog_scram_cred_new(KLOG_SCRAM_SHA256, PASSWORD,
	    strlen(PASSWORD), KLOG_SCRAM_ITER_MIN, &f->cred, &err), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	close(f->lfd);
	klog_tls_free(f->server);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* ---- the server thread: blocking I/O, TLS or not ---- */

struct peer {
	int fd;
	SSL *ssl;
};

static int
peer_read(struct peer *p, void *buf, size_t len)
{
	size_t got = 0, n;

	while (got < len) {
		if (p->ssl != NULL) {
			if (SSL_read_ex(p->ssl, (char *)buf + got, len - got,
			    &n) != 1)
				return -1;
		} else {
			ssize_t r = read(p->fd, (char *)buf + got, len - got);

			if (r <= 0)
				return -1;
			n = (size_t)r;
		}
		got += n;
	}
	return 0;
}

static void
peer_write(struct peer *p, const void *buf, size_t len)
{
	size_t done = 0, n;

	while (done < len) {
		if (p->ssl != NULL)
			assert_int_equal(SSL_write_ex(p->ssl, (const char *)buf +
			    done, len - done, &n), 1);
		else {
			ssize_t r = write(p->fd, (const char *)buf + done,
			    len - done);

			assert_true(r > 0);
			n = (size_t)r;
		}
		done += n;
	}
}

/* One request frame into b (size field first); -1 at EOF. */
static int
peer_frame(struct peer *p, klog_buf_t *b, klog_req_header_t *h)
{
	uint8_t size[4];
	uint32_t n;

	if (peer_read(p, size, 4) < 0)
		return -1;
	n = klog_be32(size);
	klog_buf_reset(b);
	assert_int_equal(klog_buf_reserve(b, n + 4), 0);
	memcpy(b->data, size, 4);
	if (peer_read(p, b->data + 4, n) < 0)
		return -1;
	b->len = n + 4;
	assert_int_equal(klog_proto_req_header(b->data, b->len, 1 << 20, h),
	    0);
	return 0;
}

/* RECORDS responses to the first request, each in a TLS record of its
 * own, all sent before the client reads any. */
static void
serve_drain(struct peer *p)
{
	klog_req_header_t h;
	klog_buf_t in, out;

	klog_buf_init(&in);
	klog_buf_init(&out);
	/* A client that only connects closes first. */
	if (peer_frame(p, &in, &h) == 0) {
		for (int i = 0; i < RECORDS; i++) {
			klog_buf_reset(&out);
			klog_proto_end(&out, klog_proto_resp_begin(&out,
			    h.correlation + i, KLOG_WIRE_NONE));
			klog_buf_put(&out, "body", 4);
			klog_proto_end(&out, 0);
			peer_write(p, out.data, out.len);
		}
		/* Hold the connection until the client is done. */
		(void)peer_frame(p, &in, &h);
	}
	klog_buf_free(&in);
	klog_buf_free(&out);
}

static int
lookup(void *arg, const char *user, klog_scram_mech_t m,
    klog_scram_cred_t *out)
{
	struct fx *f = arg;

	if (strcmp(user, USER) != 0 || m != f->cred.mech)
		return -KLOG_ENOENT;
	*out = f->cred;
	return 0;
}

/* AUTHENTICATE as a broker would answer it: PLAIN checked against
 * PASSWORD, SCRAM with lib/auth's server; anything after success is
 * answered NONE with no body. */
static void
serve_sasl(struct fx *f, struct peer *p)
{
	klog_scram_secret_t secret;
	klog_scram_server_config_t sc = { .lookup = lookup, .lookup_arg = f,
	    .secret = &secret };
	klog_scram_server_t *s = NULL;
	klog_req_header_t h;
	klog_auth_req_t q;
	klog_buf_t in, out;
	klog_err_t err;
	const char *ans = "";
	size_t alen = 0;
	int16_t error;
	int rc;

	assert_int_equal(klog_scram_secret_init(&secret, &err), 0);
	klog_buf_init(&in);
	klog_buf_init(&out);
	while (peer_frame(p, &in, &h) == 0) {
		error = KLOG_WIRE_NONE;
		alen = 0;
		assert_int_equal(h.api, KLOG_API_AUTHENTICATE);
		assert_int_equal(klog_proto_decode_auth(in.data +
		    KLOG_REQ_HEADER_SIZE, in.len - KLOG_REQ_HEADER_SIZE, &q), 0);
		snprintf(f->mech_seen, sizeof(f->mech_seen), "%.*s",
		    (int)q.mechanism.len, q.mechanism.p);
		if (f->sasl_error != KLOG_WIRE_NONE) {
			error = f->sasl_error;
		} else if (strcmp(f->mech_seen, "PLAIN") == 0) {
			memcpy(f->plain_seen, q.bytes, q.len < 64 ? q.len : 64);
			f->plain_len = q.len;
			if (q.len != 2 + strlen(USER) + strlen(PASSWORD) ||
			    memcmp(q.bytes, "\0" USER "\0" PASSWORD, q.len) != 0)
				error = KLOG_WIRE_AUTHENTICATION_FAILED;
		} else if (s == NULL) {
			assert_int_equal(klog_scram_mech_parse(f->mech_seen,
			    &sc.mech), 0);
			assert_int_equal(klog_scram_server_new(&sc, &s, &err), 0);
			rc = klog_scram_server_first(s, q.bytes, q.len, &ans,
			    &alen, &err);
			if (rc < 0)
				error = KLOG_WIRE_AUTHENTICATION_FAILED;
		} else if (klog_scram_server_final(s, q.bytes, q.len, &ans,
		    &alen, &err) < 0)
			error = KLOG_WIRE_AUTHENTICATION_FAILED;
		klog_buf_reset(&out);
		assert_int_equal(klog_proto_encode_auth_resp(&out,
		    h.correlation, error, (const uint8_t *)ans,
		    (uint32_t)alen), 0);
		peer_write(p, out.data, out.len);
		if (error != KLOG_WIRE_NONE)
			break;
	}
	klog_scram_server_free(s);
	klog_buf_free(&in);
	klog_buf_free(&out);
}

static void *
server(void *arg)
{
	struct fx *f = arg;
	struct peer p = { .fd = accept(f->lfd, NULL, NULL) };

	if (p.fd < 0)
		return NULL;
	if (f->tls) {
		p.ssl = klog_tls_accept(f->server, p.fd);
		if (p.ssl == NULL || SSL_accept(p.ssl) != 1)
			goto out;
	}
	if (f->mode == DRAIN)
		serve_drain(&p);
	else if (f->mode == SASL)
		serve_sasl(f, &p);
out:
	klog_tls_close(p.ssl);
	close(p.fd);
	return NULL;
}

static void
start_server(struct fx *f, int tls, int mode)
{
	f->tls = tls;
	f->mode = mode;
	assert_int_equal(pthread_create(&f->thread, NULL, server, f), 0);
}

static void
client_addr(struct fx *f, const klog_client_sec_t *sec,
    klog_client_addr_t *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->host, sizeof(a->host), "127.0.0.1");
	snprintf(a->port, sizeof(a->port), "%d", f->port);
	a->sec = sec;
}

static klog_tls_t *
client_ctx(const char *ca)
{
	klog_tls_client_config_t cc = { ca, NULL, NULL };
	klog_err_t err;
	klog_tls_t *t;

	assert_int_equal(klog_tls_client_new(&cc, &t, &err), 0);
	return t;
}

/* ---- the tests ---- */

/*
 * Records decrypted are invisible to poll: one readable event must bring
 * in every record the socket holds, or the responses after the first wait
 * for bytes that will never come.
 */
static void
test_read_drains_records(void **state)
{
	struct fx *f = *state;
	klog_tls_t *t = client_ctx(f->ca);
	klog_client_sec_t sec = { .tls = t, .verify_host = 1 };
	struct pollfd pfd;
	klog_client_addr_t a;
	klog_resp_header_t h;
	klog_client_t *c;
	const uint8_t *body;
	klog_err_t err;
	size_t len;
	int32_t id;
	int n = 0;

	start_server(f, 1, DRAIN);
	client_addr(f, &sec, &a);
	assert_int_equal(klog_client_open(&a, 5000, &c, &err), 0);
	id = klog_client_next_id(c);
	klog_proto_end(klog_client_out(c), klog_proto_req_begin(
	    klog_client_out(c), KLOG_API_METADATA, id));
	klog_buf_put_i32(klog_client_out(c), 0);
	klog_proto_end(klog_client_out(c), 0);
	assert_int_equal(klog_client_write(c, &err), 0);
	assert_false(klog_client_pending(c));
	/* Wait until every record is in the socket, then read once. */
	pfd = (struct pollfd){ .fd = klog_client_fd(c), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	usleep(200 * 1000);
	assert_int_equal(klog_client_read(c, &err), 0);
	while (klog_client_response(c, &h, &body, &len, &err) == 1) {
		assert_int_equal(h.correlation, id + n);
		assert_int_equal(len, 4);
		assert_memory_equal(body, "body", 4);
		n++;
	}
	assert_int_equal(n, RECORDS);
	klog_client_close(c);
	pthread_join(f->thread, NULL);
	klog_tls_free(t);
}

/*
 * A broker that went away: writes to its socket fail with an error, never
 * SIGPIPE (klog-consume leaves SIGPIPE at its default, for | head), also
 * over TLS, where OpenSSL's own socket writes would raise it.
 */
static void
test_write_after_hangup(void **state)
{
	struct fx *f = *state;
	klog_tls_t *t = client_ctx(f->ca);
	klog_client_sec_t sec = { .tls = t, .verify_host = 1 };
	klog_client_addr_t a;
	klog_client_t *c;
	klog_err_t err;
	int rc = 0;

	signal(SIGPIPE, SIG_DFL);
	start_server(f, 1, HANGUP);
	client_addr(f, &sec, &a);
	assert_int_equal(klog_client_open(&a, 5000, &c, &err), 0);
	pthread_join(f->thread, NULL);
	for (int i = 0; i < 50 && rc == 0; i++) {
		klog_buf_put(klog_client_out(c), "0123456789", 10);
		rc = klog_client_write(c, &err);
		usleep(20 * 1000);
	}
	assert_true(rc < 0);
	klog_client_close(c);
	klog_tls_free(t);
	signal(SIGPIPE, SIG_IGN);
}

/* A server certificate from a CA not trusted, or not naming the host
 * dialled, is an authentication failure, said as TLS says it. */
static void
test_untrusted(void **state)
{
	struct fx *f = *state;
	klog_tls_t *t = client_ctx(f->other);
	klog_client_sec_t sec = { .tls = t, .verify_host = 1 };
	klog_client_addr_t a;
	klog_client_t *c;
	klog_err_t err;

	start_server(f, 1, DRAIN);
	client_addr(f, &sec, &a);
	assert_int_equal(klog_client_open(&a, 5000, &c, &err), -KLOG_EAUTH);
	assert_non_null(strstr(err.msg, "certificate verify failed"));
	assert_non_null(strstr(err.msg, "127.0.0.1:"));
	pthread_join(f->thread, NULL);
	klog_tls_free(t);

	/* Trusted, but dialled as a name the certificate does not have. */
	t = client_ctx(f->ca);
	sec.tls = t;
	start_server(f, 1, DRAIN);
	client_addr(f, &sec, &a);
	snprintf(a.host, sizeof(a.host), "localhost");
	assert_int_equal(klog_client_open(&a, 5000, &c, &err), -KLOG_EAUTH);
	assert_non_null(strstr(err.msg, "hostname mismatch"));
	pthread_join(f->thread, NULL);
	/* ssl.endpoint.identification.algorithm=none lets it in. */
	sec.verify_host = 0;
	start_server(f, 1, DRAIN);
	assert_int_equal(klog_client_open(&a, 5000, &c, &err), 0);
	klog_client_close(c);
	pthread_join(f->thread, NULL);
	klog_tls_free(t);
}

/* The non-blocking connect takes the handshake step by step, saying what
 * it waits for, as the fetcher drives it on the broker's loop. */
static void
test_start_steps(void **state)
{
	struct fx *f = *state;
	klog_tls_t *t = client_ctx(f->ca);
	klog_client_sec_t sec = { .tls = t, .verify_host = 1 };
	int64_t deadline = klog_clock_mono_ms() + 5000;
	klog_client_addr_t a;
	struct pollfd pfd;
	klog_client_t *c;
	klog_err_t err;
	int rc;

	start_server(f, 1, DRAIN);
	client_addr(f, &sec, &a);
	assert_int_equal(klog_client_start(&a, &c, &err), 0);
	while ((rc = klog_client_connected(c, &err)) == 0) {
		assert_true(klog_clock_mono_ms() < deadline);
		pfd = (struct pollfd){ .fd = klog_client_fd(c),
		    .events = klog_client_wants(c) };
		assert_true(pfd.events == POLLIN || pfd.events == POLLOUT);
		assert_true(poll(&pfd, 1, 1000) >= 0);
	}
	/* How many steps it took depends on how fast the server thread
	 * answers: a loaded machine has seen none. */
	assert_int_equal(rc, 1);
	assert_int_equal(klog_client_connected(c, &err), 1);
	assert_int_equal(klog_client_wants(c), POLLIN);
	klog_client_close(c);
	pthread_join(f->thread, NULL);
	klog_tls_free(t);
}

static void
test_sasl_scram(void **state)
{
	struct fx *f = *state;
	klog_tls_t *t = client_ctx(f->ca);
	klog_client_sec_t sec = { .tls = t, .verify_host = 1,
	    .mechanism = "SCRAM-SHA-256", .username = USER,
	    .password = PASSWORD };
	klog_client_addr_t a;
	klog_client_t *c;
	klog_err_t err;

	/* sasl_ssl: TLS, then two rounds. */
	start_server(f, 1, SASL);
	client_addr(f, &sec, &a);
	assert_int_equal(klog_client_open(&a, 10000, &c, &err), 0);
	assert_string_equal(f->mech_seen, "SCRAM-SHA-256");
	klog_client_close(c);
	pthread_join(f->thread, NULL);
	/* A wrong password: one line, nothing of the password in it. */
	sec.password = "wrong-secret";
	start_server(f, 1, SASL);
	assert_int_equal(klog_client_open(&a, 10000, &c, &err), -KLOG_EAUTH);
	assert_non_null(strstr(err.msg, "authentication failed"));
	assert_null(strstr(err.msg, "wrong-secret"));
	pthread_join(f->thread, NULL);
	/* An unknown user fails alike (sasl_plaintext this time). */
	sec.tls = NULL;
	sec.username = "mallory";
	sec.password = PASSWORD;
	start_server(f, 0, SASL);
	client_addr(f, &sec, &a);
	assert_int_equal(klog_client_open(&a, 10000, &c, &err), -KLOG_EAUTH);
	assert_non_null(strstr(err.msg, "authentication failed"));
	pthread_join(f->thread, NULL);
	klog_tls_free(t);
}

static void
test_sasl_plain_and_refusals(void **state)
{
	struct fx *f = *state;
	klog_client_sec_t sec = { .mechanism = "PLAIN", .username = USER,
	    .password = PASSWORD };
	klog_client_addr_t a;
	klog_client_t *c;
	klog_err_t err;

	start_server(f, 0, SASL);
	client_addr(f, &sec, &a);
	assert_int_equal(klog_client_open(&a, 5000, &c, &err), 0);
	assert_string_equal(f->mech_seen, "PLAIN");
	assert_int_equal(f->plain_len, 2 + strlen(USER) + strlen(PASSWORD));
	klog_client_close(c);
	pthread_join(f->thread, NULL);
	/* A broker without the mechanism, or without SASL at all. */
	f->sasl_error = KLOG_WIRE_UNSUPPORTED_MECHANISM;
	start_server(f, 0, SASL);
	assert_int_equal(klog_client_open(&a, 5000, &c, &err), -KLOG_EAUTH);
	assert_non_null(strstr(err.msg, "does not offer PLAIN"));
	pthread_join(f->thread, NULL);
	f->sasl_error = KLOG_WIRE_UNKNOWN_API;
	start_server(f, 0, SASL);
	assert_int_equal(klog_client_open(&a, 5000, &c, &err), -KLOG_EAUTH);
	assert_non_null(strstr(err.msg, "UNKNOWN_API"));
	pthread_join(f->thread, NULL);
	f->sasl_error = KLOG_WIRE_NONE;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_drains_records),
		cmocka_unit_test(test_write_after_hangup),
		cmocka_unit_test(test_untrusted),
		cmocka_unit_test(test_start_steps),
		cmocka_unit_test(test_sasl_scram),
		cmocka_unit_test(test_sasl_plain_and_refusals),
	};

	/* The server thread's writes go to clients that gave up (OpenSSL's
	 * socket BIO uses write(2)); the client's own never raise it. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("clienttls", tests, setup,
	    teardown);
}
