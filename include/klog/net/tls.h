/*
 * TLS for the broker's listeners, over OpenSSL 3: one server context
 * (certificate chain, key, and the CA that client certificates must chain
 * to), TLS 1.2 and later, taken up again from its files when they change,
 * without a restart and without touching connections already made (each
 * keeps the context it was accepted with).
 *
 * A listener address may name its security protocol, as Kafka's
 * listeners do: "SSL://host:port" (or "https://" for the metrics
 * listener) is TLS, "PLAINTEXT://" (or "http://") or no scheme is not.
 * SASL_PLAINTEXT and SASL_SSL add authentication (SASL) on top, which is
 * the front end's business (conn.h): here they are parsed only.
 *
 * Reads and writes never block: they say what the socket must become
 * (readable or writable) before they are tried again.  There is no kTLS
 * on the kernels klog runs on, so file bytes are read and encrypted
 * (outq.h), a few pages at a time.
 */
#ifndef KLOG_TLS_H
#define KLOG_TLS_H

#include <stddef.h>
#include <sys/types.h>

#include <openssl/ssl.h>

#include "klog/base/error.h"

typedef struct klog_tls klog_tls_t;

enum klog_tls_client_auth {
	KLOG_TLS_AUTH_NONE,        /* no client certificate asked for */
	KLOG_TLS_AUTH_REQUESTED,   /* asked for; one given must verify */
	KLOG_TLS_AUTH_REQUIRED,    /* a verified one or no connection */
};

typedef struct klog_tls_config {
	const char *cert;          /* PEM chain, the server's first */
	const char *key;           /* PEM private key */
	const char *ca;            /* PEM CAs for client certificates, or
	                              NULL (then client_auth must be NONE) */
	int client_auth;           /* enum klog_tls_client_auth */
} klog_tls_config_t;

/* "none", "requested" or "required" (Kafka's ssl.client.auth). */
int klog_tls_client_auth_parse(const char *s, int *out, klog_err_t *err);

/* A listener's security protocol, as bits: Kafka's PLAINTEXT is 0, SSL
 * KLOG_SEC_TLS, SASL_PLAINTEXT KLOG_SEC_SASL, SASL_SSL both. */
#define KLOG_SEC_TLS 1
#define KLOG_SEC_SASL 2

/*
 * The security protocol spec names, in any case: *proto (the bits above)
 * for PLAINTEXT://, SSL://, SASL_PLAINTEXT://, SASL_SSL://, http:// and
 * https://, 0 with no scheme; *addr points past the scheme.  -KLOG_EINVAL
 * for another scheme, err saying which.
 */
int klog_tls_scheme(const char *spec, int *proto, const char **addr,
    klog_err_t *err);

/* A context from cfg's files (read now: a missing or bad file, or a key
 * that is not the certificate's, is an error naming it). */
int klog_tls_new(const klog_tls_config_t *cfg, klog_tls_t **out,
    klog_err_t *err);
void klog_tls_free(klog_tls_t *t);

/*
 * A client's context (klog's tools, a follower broker's fetches): the
 * server's certificate must chain to ca (NULL: the system's CAs); cert
 * and key, both or neither, are the client certificate presented when a
 * server asks.  TLS 1.2 and later, as the listeners.
 */
typedef struct klog_tls_client_config {
	const char *ca;
	const char *cert;
	const char *key;
} klog_tls_client_config_t;
int klog_tls_client_new(const klog_tls_client_config_t *cfg,
    klog_tls_t **out, klog_err_t *err);

/*
 * Take the files up again if one changed since they were read: 1 if the
 * context was replaced, 0 if nothing changed, or an error (the old
 * context stays in use).
 */
int klog_tls_reload(klog_tls_t *t, klog_err_t *err);

/* A server-side TLS object for the accepted socket fd, or NULL. */
SSL *klog_tls_accept(klog_tls_t *t, int fd);

/*
 * A client-side TLS object for the connected socket fd to host (a name or
 * an IP address, as dialled), or NULL; t is a client's context.  Its
 * writes never raise SIGPIPE.  With verify_host the server's
 * certificate must name host (librdkafka's
 * ssl.endpoint.identification.algorithm=https); its chain is checked
 * either way.  The handshake is klog_tls_handshake()'s.
 */
SSL *klog_tls_connect(klog_tls_t *t, int fd, const char *host,
    int verify_host);

/* What a read or write that could not go on waits for. */
enum klog_tls_want {
	KLOG_TLS_WANT_READ = 1,
	KLOG_TLS_WANT_WRITE = 2,
};

/*
 * Read up to len plaintext bytes (the handshake first, if it is not
 * done): the count; 0 once the peer closed; -1 with *want set when the
 * socket must become readable or writable first; -2 on an error, said in
 * err (a failed handshake: why, in OpenSSL's words).
 */
ssize_t klog_tls_read(SSL *ssl, void *buf, size_t len, int *want,
    klog_err_t *err);

/*
 * Write up to len bytes (partial writes: the count, at least one record's
 * worth); -1 with *want set, or -2 on an error (-KLOG_ECLOSED in err when
 * the peer went away).  After -1, the next call must pass the same bytes,
 * at the same or a larger len (they may have moved).
 */
ssize_t klog_tls_write(SSL *ssl, const void *buf, size_t len, int *want,
    klog_err_t *err);

/*
 * Take the handshake as far as the socket allows: 1 done; 0 with *want
 * set (call again when the socket is ready); or an error, said in err:
 * -KLOG_EAUTH when a certificate was refused (the peer's by us, "TLS:
 * certificate verify failed: ...", or ours by the peer's alert),
 * -KLOG_EPROTO or -KLOG_ECLOSED otherwise.  Reads and writes give
 * -KLOG_EAUTH alike for a refusal that TLS 1.3 delivers after the
 * handshake (the server's alert about our certificate).
 */
int klog_tls_handshake(SSL *ssl, int *want, klog_err_t *err);

/*
 * A client's: whether a server that may still refuse its certificate has
 * had its say.  TLS 1.3 ends the client's handshake before the server
 * has checked the certificate; its refusal is an alert after it, and a
 * request sent meanwhile turns the server's close into a reset that may
 * lose the alert.  1 when that cannot happen (TLS 1.2, no certificate
 * asked for) or the server's session ticket came (a klog broker sends
 * its tickets once the certificate passed); 0 while a read should wait.
 */
int klog_tls_settled(SSL *ssl);

/* Whether the handshake is done. */
int klog_tls_established(const SSL *ssl);

/*
 * The principal of a verified client certificate, as Kafka's default
 * mapping makes it: "User:" and the subject in RFC 2253 form
 * ("User:CN=writer,O=Example"); "User:ANONYMOUS" without one.  0, or
 * -KLOG_ETOOBIG if it does not fit len.
 */
int klog_tls_principal(SSL *ssl, char *buf, size_t len);

/* Send a close_notify if it can go now, and free ssl.  NULL is fine. */
void klog_tls_close(SSL *ssl);

#endif
