/*
 * SASL PLAIN (RFC 4616) checked against SCRAM credentials.  One message,
 *
 *   authzid NUL authcid NUL passwd
 *
 * and Kafka's rules (PlainSaslServer): three parts exactly, a user and a
 * password that are not empty, an authorization id that is empty or the
 * user's (kafka-python sends the user twice).
 *
 * klog keeps no password (scram.h): a PLAIN login is checked by deriving
 * the user's keys from the password given, with the salt and iterations
 * stored, and comparing StoredKey in constant time.  That is one PBKDF2 a
 * login, 1.4 ms for SCRAM-SHA-256 at 4096 iterations and 12 ms for
 * SCRAM-SHA-512 at 15000 (on the project's machines), against
 * microseconds for a SCRAM login: klog_plain_verify() must run off the
 * event loop (a helper thread with a small queue), and PLAIN belongs on
 * TLS listeners only, since the password crosses the wire.
 */
#ifndef KLOG_PLAIN_H
#define KLOG_PLAIN_H

#include <stddef.h>

#include "klog/auth/scram.h"
#include "klog/base/error.h"

/* A PLAIN message taken apart: views into the caller's message, but the
 * user, copied to be a C string. */
typedef struct klog_plain {
	const char *authzid;
	size_t authzid_len;
	char user[KLOG_SCRAM_NAME_MAX + 1];
	const char *password;
	size_t password_len;
} klog_plain_t;

/*
 * Take msg (len bytes) apart into *out, which points into msg.  0, or
 * -KLOG_EPROTO (not three parts, an empty user or password, a user that
 * could not be one: scram.h's rules, a password over
 * KLOG_SCRAM_PASSWORD_MAX bytes) or -KLOG_EAUTH (an authorization id that
 * is not the user), with the reason in err, never the password.
 */
int klog_plain_parse(const void *msg, size_t len, klog_plain_t *out,
    klog_err_t *err);

/*
 * Check p's password against the user's SCRAM-SHA-256 credential, else
 * its SCRAM-SHA-512 one (lookup as in scram.h).  A user with neither is
 * checked against a fake one (klog_scram_cred_fake() under secret), so
 * that the answer costs the same and reads the same: 0 when the password
 * is right, else -KLOG_EAUTH "PLAIN: invalid credentials";
 * -KLOG_EUNSUPPORTED if OpenSSL fails.  PBKDF2: off the loop.
 */
int klog_plain_verify(const klog_plain_t *p, klog_scram_lookup_fn lookup,
    void *arg, const klog_scram_secret_t *secret, klog_err_t *err);

#endif
