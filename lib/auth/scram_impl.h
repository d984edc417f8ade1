/*
 * What SCRAM's three files share, bottom up: lib/auth/scram.c (the
 * mechanisms, OpenSSL's primitives, base64, names, credentials, the
 * fields of a message), lib/auth/scramserver.c and lib/auth/scramclient.c
 * (the two sides of the exchange).  Private to those files.
 */
#ifndef KLOG_SCRAM_IMPL_H
#define KLOG_SCRAM_IMPL_H

#include <stddef.h>

#include "klog/auth/scram.h"

/* Base64 of n bytes, without its NUL. */
#define SCRAM_B64_LEN(n) (4 * (((n) + 2) / 3))
/* The longest nonce taken, a side's or both together. */
#define SCRAM_NONCE_MAX 255
/* An AuthMessage: client-first-bare, server-first, client-final-without-
 * proof, each within KLOG_SCRAM_MSG_MAX, and two commas. */
#define SCRAM_AUTH_MAX (3 * KLOG_SCRAM_MSG_MAX + 2)

/* Where an exchange is, on either side. */
enum {
	SCRAM_ST_FIRST,    /* before client-first */
	SCRAM_ST_FINAL,    /* before client-final (the client: server-first) */
	SCRAM_ST_VERIFY,   /* the client, before server-final */
	SCRAM_ST_DONE,
	SCRAM_ST_FAILED,   /* nothing more is taken */
};

/* -KLOG_EUNSUPPORTED with OpenSSL's first reason, for a call that should
 * not fail: a provider that refuses (FIPS), or no memory. */
int scram_ossl_fail(klog_err_t *err, const char *what);
/* HMAC-H and H of the mechanism into out (its digest's length): 0, or -1. */
int scram_hmac(klog_scram_mech_t m, const void *key, size_t klen,
    const void *data, size_t n, unsigned char *out);
int scram_digest(klog_scram_mech_t m, const void *data, size_t n,
    unsigned char *out);
/* ClientKey (if ck), StoredKey and ServerKey of a password: PBKDF2, the
 * cost, then the HMACs.  The salted password is wiped. */
int scram_salted_keys(klog_scram_mech_t m, const char *pw, size_t pwlen,
    const unsigned char *salt, size_t slen, int iter, unsigned char *ck,
    unsigned char *stored, unsigned char *server, klog_err_t *err);

/* in as base64 into out (SCRAM_B64_LEN(n) + 1 bytes); its length. */
size_t scram_b64_encode(const void *in, size_t n, char *out);
/* Canonical padded base64 of 1 to max bytes (max at most 64), as Kafka's
 * pattern wants and Java writes it: 0 and *n, or -1. */
int scram_b64_decode(const char *s, size_t len, unsigned char *out,
    size_t max, size_t *n);

/* name with "," as "=2C" and "=" as "=3D" into out (cap bytes, with its
 * NUL): its length, or -1 when it does not fit. */
int scram_escape(const char *name, char *out, size_t cap);
/* A saslname of the wire (len bytes) unescaped into out (cap bytes, with
 * its NUL): its length, or -1 for an "=" other than "=2C" or "=3D" (RFC
 * 5802 5.1: the server must fail), or a name that does not fit. */
int scram_unescape(const char *s, size_t len, char *out, size_t cap);

/* 0, or -KLOG_EINVAL saying why (never the password). */
int scram_check_password(size_t pwlen, klog_err_t *err);
int scram_check_iterations(int iterations, klog_err_t *err);
/* Decimal digits without a sign or a leading zero, within Kafka's
 * bounds: 0, or -1. */
int scram_parse_iterations(const char *s, size_t n, int *out);

/* A message of the exchange: 1 to KLOG_SCRAM_MSG_MAX bytes without a NUL
 * (each side keeps a copy as a C string); 0, or -KLOG_EPROTO. */
int scram_check_msg(const char *what, const void *msg, size_t len,
    klog_err_t *err);

/* The fields of a message, between commas: no value of SCRAM's holds one
 * (names are escaped, nonces and base64 have none). */
typedef struct scram_fields {
	const char *p, *end;
	int done;
} scram_fields_t;

/* The next field as f, n: 0, or -1 past the last one. */
int scram_next_field(scram_fields_t *fs, const char **f, size_t *n);
/* The next field if it is "a=VALUE", its value as v, n: 0, or -1. */
int scram_next_attr(scram_fields_t *fs, char a, const char **v, size_t *n);
/* The fields left are extensions, "name=value", which both sides ignore
 * as Kafka does (its one, tokenauth, is for delegation tokens, which klog
 * has not): 0, or -1 for one malformed. */
int scram_extensions_ok(scram_fields_t *fs);
/* A nonce of 1 to SCRAM_NONCE_MAX printable characters but ",": 1 or 0. */
int scram_nonce_ok(const char *s, size_t n);
/* The nonce given into out (cap bytes), or a fresh one: 24 random bytes
 * in base64.  0, -KLOG_EINVAL, -KLOG_EUNSUPPORTED. */
int scram_make_nonce(const char *given, char *out, size_t cap,
    klog_err_t *err);
/* AuthMessage: bare "," first (flen bytes) "," cfwp (clen bytes), into am
 * (SCRAM_AUTH_MAX bytes); its length. */
size_t scram_auth_message(char *am, const char *bare, const char *first,
    size_t flen, const char *cfwp, size_t clen);
/* -KLOG_EINVAL: "what out of turn". */
int scram_out_of_turn(const char *what, klog_err_t *err);

#endif
