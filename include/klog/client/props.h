/*
 * librdkafka's security properties, as kcat takes them (-X key=value, -F
 * FILE), so that one file serves kcat and klog's tools:
 *
 *   security.protocol                      plaintext | ssl | sasl_plaintext
 *                                          | sasl_ssl (any case)
 *   ssl.ca.location                        PEM CAs the brokers' certificates
 *                                          must chain to (default: the
 *                                          system's)
 *   ssl.certificate.location, ssl.key.location
 *                                          a client certificate and its key
 *   ssl.endpoint.identification.algorithm  https (the default: the
 *                                          certificate must name the host
 *                                          dialled) | none
 *   sasl.mechanism (or sasl.mechanisms)    PLAIN | SCRAM-SHA-256 |
 *                                          SCRAM-SHA-512
 *   sasl.username, sasl.password
 *
 * A file has a key=value a line; '#' starts a comment line; blank lines
 * and white space around the line and the '=' are ignored.  The last
 * setting of a key wins, in the order given.  Any other key is refused:
 * klog does not silently ignore what it does not do.  The library reads
 * no environment: a tool that takes a password from one sets it here.
 */
#ifndef KLOG_PROPS_H
#define KLOG_PROPS_H

#include "klog/base/error.h"
#include "klog/client/client.h"
#include "klog/net/tls.h"

enum klog_props_protocol {
	KLOG_PROPS_PLAINTEXT,
	KLOG_PROPS_SSL,
	KLOG_PROPS_SASL_PLAINTEXT,
	KLOG_PROPS_SASL_SSL,
};

typedef struct klog_props {
	int protocol;              /* enum klog_props_protocol */
	char *ca, *cert, *key;     /* NULL: not set */
	int verify_host;           /* 1 unless ...algorithm=none */
	char *mechanism;           /* its canonical (upper case) name */
	char *username;
	char *password;            /* wiped when replaced or freed */
	/* What klog_props_security() made. */
	klog_tls_t *tls;
	klog_client_sec_t sec;
} klog_props_t;

void klog_props_init(klog_props_t *p);

/* One property, "key=value": 0, or -KLOG_EINVAL with err saying why
 * ("foo: unknown property", "security.protocol: gss: want ...");
 * -KLOG_ENOMEM. */
int klog_props_set(klog_props_t *p, const char *kv, klog_err_t *err);
/* The same with key and value apart. */
int klog_props_set_kv(klog_props_t *p, const char *key, const char *value,
    klog_err_t *err);

/* Every property of the file at path: 0, or an error as
 * klog_props_set()'s with "PATH:LINE: " first, or the file's own
 * (-KLOG_ENOENT, -KLOG_EIO) naming it. */
int klog_props_load(klog_props_t *p, const char *path, klog_err_t *err);

/*
 * Check that the properties hold together and make what connections need:
 * *sec is NULL for plaintext without SASL, else points into p (valid until
 * klog_props_free()).  SASL needs a mechanism, a user name and a password;
 * TLS reads its files now (a missing one is -KLOG_ENOENT, a bad one
 * -KLOG_EINVAL, err naming it).  -KLOG_EINVAL with err saying what is
 * missing or wrong.
 */
int klog_props_security(klog_props_t *p, const klog_client_sec_t **sec,
    klog_err_t *err);

/* Free what p holds, the password wiped first.  p may be init'ed again. */
void klog_props_free(klog_props_t *p);

#endif
