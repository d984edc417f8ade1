/*
 * The server's side of one SASL exchange, whatever carries its tokens:
 * Kafka's SaslHandshake with bare frames (v0) or SaslAuthenticate (v1),
 * or klog's AUTHENTICATE (klog-protocol(7)).  One implementation of PLAIN
 * and SCRAM serves every listener.
 *
 * SCRAM costs the server microseconds (the client runs PBKDF2).  PLAIN
 * checked against a salted credential costs a PBKDF2 (plain.h), which
 * must not run on the event loop: klog_sasl_step() answers
 * KLOG_SASL_SLOW, the caller runs klog_sasl_check() on another thread
 * (saslpool.h), then klog_sasl_step() again with no token for the verdict.
 *
 * A failure never says whether the user exists: one message per
 * mechanism, Kafka's ("Authentication failed during authentication due to
 * invalid credentials with SASL mechanism SCRAM-SHA-256"; PLAIN's
 * "Authentication failed: Invalid username or password").
 */
#ifndef KLOG_SASL_H
#define KLOG_SASL_H

#include <stddef.h>

#include "klog/auth/scram.h"
#include "klog/base/error.h"

typedef enum klog_sasl_mech {
	KLOG_SASL_PLAIN,
	KLOG_SASL_SCRAM_SHA_256,
	KLOG_SASL_SCRAM_SHA_512,
	KLOG_SASL_MECH_COUNT
} klog_sasl_mech_t;

/* A set of mechanisms, one bit each; the default, as Redpanda's: the two
 * SCRAMs (PLAIN sends the password: TLS listeners only). */
#define KLOG_SASL_BIT(m) (1u << (m))
#define KLOG_SASL_DEFAULT_MECHS \
	(KLOG_SASL_BIT(KLOG_SASL_SCRAM_SHA_256) | \
	 KLOG_SASL_BIT(KLOG_SASL_SCRAM_SHA_512))

/* "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512". */
const char *klog_sasl_mech_name(klog_sasl_mech_t m);

/* The mechanism named by len bytes at name (exactly: Kafka's names are
 * case-sensitive).  0, or -KLOG_EUNSUPPORTED. */
int klog_sasl_mech_parse(const char *name, size_t len, klog_sasl_mech_t *m);

/* "SCRAM-SHA-256,PLAIN" into bits.  0, or -KLOG_EINVAL naming the bad
 * one (an empty list too). */
int klog_sasl_mechs_parse(const char *list, unsigned *mechs,
    klog_err_t *err);

typedef struct klog_sasl_config {
	unsigned mechs;                /* enabled */
	klog_scram_lookup_fn lookup;   /* the users; called on the loop */
	void *lookup_arg;
	const klog_scram_secret_t *secret;  /* unknown users' fake keys */
} klog_sasl_config_t;

typedef struct klog_sasl klog_sasl_t;

/* A new exchange of mechanism m; the caller owns *out.  -KLOG_EUNSUPPORTED
 * when m is not enabled, -KLOG_ENOMEM. */
int klog_sasl_new(const klog_sasl_config_t *cfg, klog_sasl_mech_t m,
    klog_sasl_t **out, klog_err_t *err);

enum {
	KLOG_SASL_DONE = 0,        /* authenticated: klog_sasl_principal() */
	KLOG_SASL_MORE = 1,        /* send *out, wait for the next token */
	KLOG_SASL_SLOW = 2,        /* run klog_sasl_check() off the loop,
	                              then step again with no token */
};

/*
 * Take the client's next token (len bytes; NULL after KLOG_SASL_SLOW) and
 * say what follows; *out (*outlen bytes, possibly 0) is what to send
 * back, valid until the next call or the free.  -KLOG_EAUTH with the
 * mechanism's one message for any failure of credentials or form; the
 * exchange is over after any error.
 */
int klog_sasl_step(klog_sasl_t *s, const void *in, size_t len,
    const void **out, size_t *outlen, klog_err_t *err);

/* PLAIN's PBKDF2 and comparison, after KLOG_SASL_SLOW: any thread, once,
 * while nothing else touches s. */
void klog_sasl_check(klog_sasl_t *s);

/* "User:NAME" once DONE, else NULL. */
const char *klog_sasl_principal(const klog_sasl_t *s);

klog_sasl_mech_t klog_sasl_mech(const klog_sasl_t *s);

/* Wipe and free; NULL is fine. */
void klog_sasl_free(klog_sasl_t *s);

#endif
