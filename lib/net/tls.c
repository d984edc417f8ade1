/*
 * TLS for the broker's listeners; see tls.h.  Every call here runs on the
 * loop's thread; OpenSSL's own locking covers a context shared by the
 * connections made with it, and its reference count keeps a replaced
 * context alive until the last of them closes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "klog/net/tls.h"

#define NFILES 3
#define READ_AHEAD (64 * 1024)     /* a server's read buffer: records read ahead */

struct file_id {
	struct timespec mtime;
	ino_t ino;
	off_t size;
};

struct klog_tls {
	char *files[NFILES];       /* cert, key, ca (NULL: none) */
	int client;                /* a client's context (tools, followers) */
	int client_auth;
	struct file_id ids[NFILES];
	SSL_CTX *ctx;
	BIO_METHOD *sock;          /* a client's: sockets without SIGPIPE */
};

/* OpenSSL's reason for the last failure, its queue emptied. */
static const char *
ossl_reason(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();

	if (e == 0)
		snprintf(buf, len, "unknown TLS error");
	else
		ERR_error_string_n(e, buf, len);
	ERR_clear_error();
	return buf;
}

int
klog_tls_client_auth_parse(const char *s, int *out, klog_err_t *err)
{
	static const char *const names[] = { "none", "requested", "required" };

	for (int i = 0; i < 3; i++)
		if (strcasecmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	return klog_err_set(err, -KLOG_EINVAL, "%s: want none, requested or "
	    "required", s);
}

int
klog_tls_scheme(const char *spec, int *proto, const char **addr,
    klog_err_t *err)
{
	static const struct { const char *name; int proto; } names[] = {
		{ "PLAINTEXT", 0 }, { "SSL", KLOG_SEC_TLS },
		{ "SASL_PLAINTEXT", KLOG_SEC_SASL },
		{ "SASL_SSL", KLOG_SEC_TLS | KLOG_SEC_SASL },
		{ "http", 0 }, { "https", KLOG_SEC_TLS },
	};
	const char *sep = strstr(spec, "://");
	size_t n;

	*proto = 0;
	*addr = spec;
	if (sep == NULL)
		return 0;
	n = (size_t)(sep - spec);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == n &&
		    strncasecmp(spec, names[i].name, n) == 0) {
			*proto = names[i].proto;
			*addr = sep + 3;
			return 0;
		}
	return klog_err_set(err, -KLOG_EINVAL, "%s: unknown security "
	    "protocol (want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)", spec);
}

static int
file_id(const char *path, struct file_id *id)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -1;
	id->mtime = st.st_mtim;
	id->ino = st.st_ino;
	id->size = st.st_size;
	return 0;
}

static int
same_id(const struct file_id *a, const struct file_id *b)
{
	return a->mtime.tv_sec == b->mtime.tv_sec &&
	    a->mtime.tv_nsec == b->mtime.tv_nsec && a->ino == b->ino &&
	    a->size == b->size;
}

/* The files of a context, its certificate and key (a client's are
 * optional) and its CAs, into ctx. */
static int
use_files(const klog_tls_t *t, SSL_CTX *ctx, klog_err_t *err)
{
	const char *cert = t->files[0], *key = t->files[1], *ca = t->files[2];
	char why[256];

	if (cert != NULL && SSL_CTX_use_certificate_chain_file(ctx, cert) != 1)
		return klog_err_set(err, -KLOG_EINVAL, "%s: not a PEM "
		    "certificate chain: %s", cert, ossl_reason(why,
		    sizeof(why)));
	if (key != NULL && (SSL_CTX_use_PrivateKey_file(ctx, key,
	    SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx) != 1))
		return klog_err_set(err, -KLOG_EINVAL, "%s: not the "
		    "certificate's PEM private key: %s", key, ossl_reason(why,
		    sizeof(why)));
	if (ca != NULL && SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
		return klog_err_set(err, -KLOG_EINVAL, "%s: not a PEM CA "
		    "bundle: %s", ca, ossl_reason(why, sizeof(why)));
	/* A client without a CA of its own trusts the system's, as
	 * librdkafka does. */
	if (ca == NULL && t->client && SSL_CTX_set_default_verify_paths(ctx) !=
	    1)
		return klog_err_set(err, -KLOG_EINVAL, "the system's CA "
		    "certificates: %s", ossl_reason(why, sizeof(why)));
	return 0;
}

/*
 * A client's note that the server asked for its certificate (OpenSSL
 * calls this on a CertificateRequest, nowhere else on a client): the
 * SSL's app data, which nothing else of klog's uses.
 */
static int
cert_asked(SSL *ssl, void *arg)
{
	(void)arg;
	SSL_set_app_data(ssl, ssl);
	return 1;
}

/* A server or client context from t's files into *out. */
static int
make_ctx(const klog_tls_t *t, SSL_CTX **out, klog_err_t *err)
{
	SSL_CTX *ctx = SSL_CTX_new(t->client ? TLS_client_method() :
	    TLS_server_method());
	char why[256];
	int mode = SSL_VERIFY_NONE, rc;

	*out = NULL;
	if (ctx == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "TLS: %s",
		    ossl_reason(why, sizeof(why)));
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* Write from a queue that moves, a record or more at a time, and
	 * give idle connections' buffers back. */
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
	/* A server reads ahead, several records a read(2) rather than two
	 * reads a record (header, then body); what it holds undecrypted
	 * SSL_has_pending() tells. */
	if (!t->client) {
		SSL_CTX_set_read_ahead(ctx, 1);
		SSL_CTX_set_default_read_buffer_len(ctx, READ_AHEAD);
	}
	if ((rc = use_files(t, ctx, err)) < 0)
		goto fail;
	if (t->client) {
		/* klog's frames carry their lengths: a close without
		 * close_notify is a lost connection, not an attack. */
		SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
		SSL_CTX_set_cert_cb(ctx, cert_asked, NULL);
		mode = SSL_VERIFY_PEER;
	} else if (t->client_auth == KLOG_TLS_AUTH_REQUESTED)
		mode = SSL_VERIFY_PEER;
	else if (t->client_auth == KLOG_TLS_AUTH_REQUIRED)
		mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
	SSL_CTX_set_verify(ctx, mode, NULL);
	*out = ctx;
	return 0;
fail:
	SSL_CTX_free(ctx);
	return rc;
}

/* Read the files' identities, then the context: identities first, so a
 * file replaced meanwhile is read again at the next reload. */
static int
load(klog_tls_t *t, klog_err_t *err)
{
	struct file_id ids[NFILES] = { 0 };
	SSL_CTX *ctx;
	int rc;

	for (int i = 0; i < NFILES; i++)
		if (t->files[i] != NULL && file_id(t->files[i], &ids[i]) < 0)
			return klog_err_sys(err, NULL, t->files[i]);
	if ((rc = make_ctx(t, &ctx, err)) < 0)
		return rc;
	SSL_CTX_free(t->ctx);
	t->ctx = ctx;
	memcpy(t->ids, ids, sizeof(ids));
	return 0;
}

/*
 * A socket BIO whose writes cannot raise SIGPIPE: OpenSSL's write(2) to a
 * broker that went away would kill a tool that leaves SIGPIPE at its
 * default so that "| head" ends it quietly (klog-consume).  The rest is
 * OpenSSL's own socket BIO.
 */
static int
sock_write(BIO *b, const char *buf, int len)
{
	int fd = -1, r;

	BIO_get_fd(b, &fd);
	errno = 0;
	r = (int)send(fd, buf, (size_t)len, MSG_NOSIGNAL);
	BIO_clear_retry_flags(b);
	if (r <= 0 && BIO_sock_should_retry(r))
		BIO_set_retry_write(b);
	return r;
}

static BIO_METHOD *
sock_method(void)
{
	const BIO_METHOD *s = BIO_s_socket();
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK |
	    BIO_TYPE_DESCRIPTOR, "klog socket");

	if (m == NULL)
		return NULL;
	if (BIO_meth_set_write(m, sock_write) != 1 ||
	    BIO_meth_set_read(m, BIO_meth_get_read(s)) != 1 ||
	    BIO_meth_set_puts(m, BIO_meth_get_puts(s)) != 1 ||
	    BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(s)) != 1 ||
	    BIO_meth_set_create(m, BIO_meth_get_create(s)) != 1 ||
	    BIO_meth_set_destroy(m, BIO_meth_get_destroy(s)) != 1) {
		BIO_meth_free(m);
		return NULL;
	}
	return m;
}

/* A context of files (cert, key, ca; NULL for none), taking copies. */
static int
tls_make(const char *const files[NFILES], int client, int client_auth,
    klog_tls_t **out, klog_err_t *err)
{
	klog_tls_t *t;
	int rc;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	t->client = client;
	t->client_auth = client_auth;
	if (client && (t->sock = sock_method()) == NULL) {
		klog_tls_free(t);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	for (int i = 0; i < NFILES; i++)
		if (files[i] != NULL && (t->files[i] = strdup(files[i])) ==
		    NULL) {
			klog_tls_free(t);
			return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		}
	if ((rc = load(t, err)) < 0) {
		klog_tls_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int
klog_tls_new(const klog_tls_config_t *cfg, klog_tls_t **out,
    klog_err_t *err)
{
	const char *const files[NFILES] = { cfg->cert, cfg->key, cfg->ca };

	*out = NULL;
	if (cfg->cert == NULL || cfg->key == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "TLS needs --ssl-cert "
		    "and --ssl-key");
	if (cfg->ca == NULL && cfg->client_auth != KLOG_TLS_AUTH_NONE)
		return klog_err_set(err, -KLOG_EINVAL, "client certificates "
		    "need --ssl-ca");
	return tls_make(files, 0, cfg->client_auth, out, err);
}

int
klog_tls_client_new(const klog_tls_client_config_t *cfg, klog_tls_t **out,
    klog_err_t *err)
{
	const char *const files[NFILES] = { cfg->cert, cfg->key, cfg->ca };

	*out = NULL;
	if ((cfg->cert == NULL) != (cfg->key == NULL))
		return klog_err_set(err, -KLOG_EINVAL, "a client certificate "
		    "needs its key, and a key its certificate");
	return tls_make(files, 1, KLOG_TLS_AUTH_NONE, out, err);
}

void
klog_tls_free(klog_tls_t *t)
{
	if (t == NULL)
		return;
	SSL_CTX_free(t->ctx);
	BIO_meth_free(t->sock);
	for (int i = 0; i < NFILES; i++)
		free(t->files[i]);
	free(t);
}

int
klog_tls_reload(klog_tls_t *t, klog_err_t *err)
{
	struct file_id id;
	int changed = 0, rc;

	for (int i = 0; i < NFILES; i++)
		if (t->files[i] != NULL && (file_id(t->files[i], &id) < 0 ||
		    !same_id(&id, &t->ids[i])))
			changed = 1;
	if (!changed)
		return 0;
	if ((rc = load(t, err)) < 0) {
		/* Not again until a file changes once more. */
		for (int i = 0; i < NFILES; i++)
			if (t->files[i] != NULL)
				(void)file_id(t->files[i], &t->ids[i]);
		return rc;
	}
	return 1;
}

SSL *
klog_tls_connect(klog_tls_t *t, int fd, const char *host, int verify_host)
{
	struct in6_addr ip;
	SSL *ssl = SSL_new(t->ctx);
	BIO *bio;

	if (ssl == NULL)
		return NULL;
	if ((bio = BIO_new(t->sock)) == NULL)
		goto fail;
	BIO_set_fd(bio, fd, BIO_NOCLOSE);
	SSL_set_bio(ssl, bio, bio);
	/* SNI takes names only; OpenSSL 3's SSL_set1_host() checks an IP
	 * address against the certificate's IP entries, a name against its
	 * DNS entries (the common name if it has none). */
	if (inet_pton(AF_INET, host, &ip) != 1 &&
	    inet_pton(AF_INET6, host, &ip) != 1 &&
	    SSL_set_tlsext_host_name(ssl, host) != 1)
		goto fail;
	if (verify_host && SSL_set1_host(ssl, host) != 1)
		goto fail;
	SSL_set_connect_state(ssl);
	return ssl;
fail:
	SSL_free(ssl);
	return NULL;
}

SSL *
klog_tls_accept(klog_tls_t *t, int fd)
{
	SSL *ssl = SSL_new(t->ctx);

	if (ssl == NULL)
		return NULL;
	if (SSL_set_fd(ssl, fd) != 1) {
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_accept_state(ssl);
	return ssl;
}

/*
 * Whether OpenSSL's error e says a certificate was refused, ours by the
 * peer (its alert) or the peer's by us: a failed authentication, not a
 * lost connection, so a client gives up rather than trying again.
 */
static int
cert_refused(unsigned long e)
{
	switch (ERR_GET_REASON(e)) {
	case SSL_R_CERTIFICATE_VERIFY_FAILED:
	case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
	case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
	case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
	case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
	case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
	case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
		return 1;
	default:
		return 0;
	}
}

/* After a call returned r <= 0: -1 with *want, or -2 with err. */
static ssize_t
failed(SSL *ssl, int r, int *want, klog_err_t *err)
{
	int e = SSL_get_error(ssl, r), refused;
	char why[256];

	*want = 0;
	switch (e) {
	case SSL_ERROR_WANT_READ:
		*want = KLOG_TLS_WANT_READ;
		return -1;
	case SSL_ERROR_WANT_WRITE:
		*want = KLOG_TLS_WANT_WRITE;
		return -1;
	case SSL_ERROR_ZERO_RETURN:
		klog_err_set(err, -KLOG_ECLOSED, "peer closed");
		return -2;
	case SSL_ERROR_SYSCALL:
		ERR_clear_error();
		if (errno == EAGAIN || errno == EINTR) {
			*want = KLOG_TLS_WANT_READ;
			return -1;
		}
		klog_err_set(err, -KLOG_ECLOSED, "TLS: %s", errno != 0 ?
		    strerror(errno) : "peer closed");
		return -2;
	default:
		if (SSL_get_verify_result(ssl) != X509_V_OK) {
			ERR_clear_error();
			klog_err_set(err, -KLOG_EAUTH, "TLS: certificate verify "
			    "failed: %s", X509_verify_cert_error_string(
			    SSL_get_verify_result(ssl)));
			return -2;
		}
		/* Before ossl_reason() empties the queue. */
		refused = cert_refused(ERR_peek_last_error());
		klog_err_set(err, refused ? -KLOG_EAUTH : -KLOG_EPROTO,
		    "TLS: %s", ossl_reason(why, sizeof(why)));
		return -2;
	}
}

ssize_t
klog_tls_read(SSL *ssl, void *buf, size_t len, int *want, klog_err_t *err)
{
	size_t n = 0;
	int r;

	*want = 0;
	errno = 0;
	if ((r = SSL_read_ex(ssl, buf, len, &n)) == 1)
		return (ssize_t)n;
	if (SSL_get_error(ssl, r) == SSL_ERROR_ZERO_RETURN)
		return 0;
	return failed(ssl, r, want, err);
}

ssize_t
klog_tls_write(SSL *ssl, const void *buf, size_t len, int *want,
    klog_err_t *err)
{
	size_t n = 0;
	int r;

	*want = 0;
	errno = 0;
	if ((r = SSL_write_ex(ssl, buf, len, &n)) == 1)
		return (ssize_t)n;
	return failed(ssl, r, want, err);
}

int
klog_tls_handshake(SSL *ssl, int *want, klog_err_t *err)
{
	int r;

	*want = 0;
	errno = 0;
	ERR_clear_error();
	if ((r = SSL_do_handshake(ssl)) == 1)
		return 1;
	if (failed(ssl, r, want, err) == -1)
		return 0;
	return err != NULL ? err->code : -KLOG_EPROTO;
}

int
klog_tls_settled(SSL *ssl)
{
	SSL_SESSION *sess = SSL_get_session(ssl);

	return SSL_version(ssl) != TLS1_3_VERSION ||
	    SSL_get_app_data(ssl) == NULL ||
	    (sess != NULL && SSL_SESSION_has_ticket(sess));
}

int
klog_tls_established(const SSL *ssl)
{
	return SSL_is_init_finished(ssl);
}

int
klog_tls_principal(SSL *ssl, char *buf, size_t len)
{
	X509 *peer = SSL_get0_peer_certificate(ssl);
	BIO *bio;
	char *dn;
	long n;
	int rc = 0;

	if (peer == NULL || SSL_get_verify_result(ssl) != X509_V_OK)
		return snprintf(buf, len, "User:ANONYMOUS") < (int)len ? 0 :
		    -KLOG_ETOOBIG;
	if ((bio = BIO_new(BIO_s_mem())) == NULL)
		return -KLOG_ENOMEM;
	/* RFC 2253, as Java's X500Principal.getName() gives Kafka. */
	if (X509_NAME_print_ex(bio, X509_get_subject_name(peer), 0,
	    XN_FLAG_RFC2253) < 0) {
		BIO_free(bio);
		return -KLOG_EINVAL;
	}
	n = BIO_get_mem_data(bio, &dn);
	if ((size_t)n + 6 > len)
		rc = -KLOG_ETOOBIG;
	else
		snprintf(buf, len, "User:%.*s", (int)n, dn);
	BIO_free(bio);
	return rc;
}

void
klog_tls_close(SSL *ssl)
{
	if (ssl == NULL)
		return;
	/* Only once established: a shutdown mid-handshake says nothing. */
	if (SSL_is_init_finished(ssl))
		(void)SSL_shutdown(ssl);
	ERR_clear_error();
	SSL_free(ssl);
}
