/*
 * Who is on a connection, kept with it (conn.h's klog_conn_auth()): the
 * principal that authorization asks about, and the state of a SASL
 * exchange its front end runs.
 *
 * A client certificate verified on a TLS listener names the principal
 * when the handshake ends ("User:CN=alice,O=klog", tls.h); a SASL
 * exchange that succeeds names it too ("User:alice"); a connection that
 * did neither is Kafka's "User:ANONYMOUS".  On a SASL_* listener nothing
 * but the exchange is served until it succeeds (klog_connauth_pending()).
 */
#ifndef KLOG_CONNAUTH_H
#define KLOG_CONNAUTH_H

#define KLOG_PRINCIPAL_ANONYMOUS "User:ANONYMOUS"

/* What a listener asks of its clients before their requests. */
enum klog_conn_sasl {
	KLOG_CONN_NO_SASL,
	KLOG_CONN_SASL,            /* a SASL login, which the front end runs */
	KLOG_CONN_SASL_OR_CERT,    /* that, or a verified client certificate,
	                              which logs in by itself */
};
#define KLOG_CONNAUTH_HOST_MAX 46   /* INET6_ADDRSTRLEN */
#define KLOG_CONNAUTH_SOFTWARE_MAX 80

typedef struct klog_connauth {
	char *principal;           /* NULL: User:ANONYMOUS */
	int sasl;                  /* the listener's enum klog_conn_sasl */
	int authenticated;         /* its exchange succeeded, or ... */
	int by_certificate;        /* ... its certificate logged it in (a
	                              SASL login may still follow) */
	void *session;             /* the front end's exchange state */
	void (*session_free)(void *session);
	char host[KLOG_CONNAUTH_HOST_MAX]; /* the peer's address, as
	                              inet_ntop(3) writes it ("" unknown) */
	char software[KLOG_CONNAUTH_SOFTWARE_MAX]; /* "name version" as the
	                              client named itself (Kafka's ApiVersions
	                              v3), for the logs; "" unknown */
} klog_connauth_t;

/* The principal: never NULL. */
const char *klog_connauth_principal(const klog_connauth_t *a);

/* The peer's address, or NULL when unknown (for ACL hosts: acl.h). */
const char *klog_connauth_host(const klog_connauth_t *a);

/* Whether requests must wait for a SASL exchange to succeed. */
int klog_connauth_pending(const klog_connauth_t *a);

/* Name the principal (copied).  0, or -KLOG_ENOMEM (it stays). */
int klog_connauth_set_principal(klog_connauth_t *a, const char *principal);

/* The SASL exchange succeeded for principal: requests may come.  0, or
 * -KLOG_ENOMEM. */
int klog_connauth_succeed(klog_connauth_t *a, const char *principal);

/* Whether a SASL exchange may run now: before any login, or after a
 * certificate's. */
int klog_connauth_may_login(const klog_connauth_t *a);

/* A verified client certificate logs in principal (the listener takes
 * one for a login).  0, or -KLOG_ENOMEM. */
int klog_connauth_certificate(klog_connauth_t *a, const char *principal);

/* Keep session (freed with session_free when replaced or at the end);
 * NULL frees the one kept. */
void klog_connauth_set_session(klog_connauth_t *a, void *session,
    void (*session_free)(void *));

/* Free what a holds. */
/* The client's software name and version (n, v of nlen, vlen bytes, not
 * NUL-terminated), kept printable and cut to fit. */
void klog_connauth_set_software(klog_connauth_t *a, const char *n,
    size_t nlen, const char *v, size_t vlen);

void klog_connauth_clear(klog_connauth_t *a);

#endif
