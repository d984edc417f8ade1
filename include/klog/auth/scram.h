/*
 * SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka speaks
 * them: the credential a server keeps, in Kafka's text form, and both
 * sides of the exchange.
 *
 *   client                                     server
 *   n,,n=USER,r=CNONCE                 ->      looks USER's credential up
 *                                      <-      r=CNONCE SNONCE,s=SALT,i=ITER
 *   c=biws,r=CNONCE SNONCE,p=PROOF     ->      checks PROOF against StoredKey
 *                                      <-      v=SIGNATURE
 *
 *   SaltedPassword  = PBKDF2-HMAC-H(password, SALT, ITER)
 *   ClientKey       = HMAC(SaltedPassword, "Client Key")
 *   StoredKey       = H(ClientKey)
 *   ServerKey       = HMAC(SaltedPassword, "Server Key")
 *   AuthMessage     = client-first-bare "," server-first ","
 *                     client-final-without-proof
 *   PROOF           = ClientKey XOR HMAC(StoredKey, AuthMessage)
 *   SIGNATURE       = HMAC(ServerKey, AuthMessage)
 *
 * A server keeps SALT, ITER, StoredKey and ServerKey, never the password:
 * its side of the exchange is two HMACs and a hash (microseconds), fit for
 * the event loop.  PBKDF2 is ITER HMACs (1.4 ms for SHA-256 at 4096, 12 ms
 * for SHA-512 at 15000, on the project's machines): klog_scram_cred_new(),
 * klog_scram_cred_derive() and klog_scram_client_final() run it, so they
 * belong off the loop (klog-group users add, the client tools, a helper
 * thread).  A StoredKey and one recorded exchange give the ClientKey (PROOF
 * XOR the client's HMAC), so credentials are secrets too.
 *
 * A failure never tells whether the user exists: an unknown user is
 * answered with a credential made up from the name and a key of the
 * process's (klog_scram_cred_fake()), and fails at client-final with the
 * error of a wrong password.
 *
 * User names travel escaped ("," as "=2C", "=" as "=3D"); the functions
 * here take and give them unescaped.  Passwords are bytes, used as given
 * (no SASLprep, as Kafka and librdkafka).  Nothing here logs or keeps a
 * password beyond the client's exchange, and no error message holds one.
 */
#ifndef KLOG_SCRAM_H
#define KLOG_SCRAM_H

#include <stddef.h>

#include "klog/base/error.h"

typedef enum klog_scram_mech {
	KLOG_SCRAM_SHA256,
	KLOG_SCRAM_SHA512,
} klog_scram_mech_t;

#define KLOG_SCRAM_MECHS 2

/* Kafka's bounds and default for the iteration count (ScramMechanism). */
#define KLOG_SCRAM_ITER_MIN 4096
#define KLOG_SCRAM_ITER_MAX 16384
#define KLOG_SCRAM_ITER_DEFAULT 4096

#define KLOG_SCRAM_KEY_MAX 64      /* SHA-512's digest */
#define KLOG_SCRAM_SALT_LEN 16     /* the salt klog_scram_cred_new() draws */
#define KLOG_SCRAM_SALT_MAX 64     /* the longest a credential may carry */
#define KLOG_SCRAM_NAME_MAX 255    /* a user name, unescaped, in bytes */
#define KLOG_SCRAM_PASSWORD_MAX 1024
/* The longest message either side takes (Kafka has no limit of its own but
 * the 512 KiB of a frame before authentication). */
#define KLOG_SCRAM_MSG_MAX 2048
/* Kafka's text form of a credential, with its NUL. */
#define KLOG_SCRAM_CRED_TEXT_MAX 384

/* "SCRAM-SHA-256" or "SCRAM-SHA-512". */
const char *klog_scram_mech_name(klog_scram_mech_t m);
/* The mechanism of that exact name (SASL names are upper case): 0, or
 * -KLOG_EUNSUPPORTED. */
int klog_scram_mech_parse(const char *name, klog_scram_mech_t *out);
/* The digest's length: 32 or 64 bytes. */
size_t klog_scram_key_len(klog_scram_mech_t m);

/*
 * Whether name may be a user's: 1 to KLOG_SCRAM_NAME_MAX bytes of UTF-8
 * without control characters or white space (so that it is one word in
 * the users file, and prints as itself).  0, or -KLOG_EINVAL with the
 * reason in err.
 */
int klog_scram_name_check(const char *name, size_t len, klog_err_t *err);

/* What a server keeps of a user for one mechanism. */
typedef struct klog_scram_cred {
	klog_scram_mech_t mech;
	int iterations;
	size_t salt_len;
	unsigned char salt[KLOG_SCRAM_SALT_MAX];
	unsigned char stored_key[KLOG_SCRAM_KEY_MAX];  /* key_len(mech) used */
	unsigned char server_key[KLOG_SCRAM_KEY_MAX];
} klog_scram_cred_t;

/*
 * A new credential for password (pwlen bytes, 1 to KLOG_SCRAM_PASSWORD_MAX)
 * with a fresh random salt of KLOG_SCRAM_SALT_LEN bytes: PBKDF2, so off
 * the loop.  0, or -KLOG_EINVAL (an empty or long password, iterations
 * outside Kafka's bounds), -KLOG_EUNSUPPORTED (OpenSSL refused).
 */
int klog_scram_cred_new(klog_scram_mech_t m, const char *password,
    size_t pwlen, int iterations, klog_scram_cred_t *out, klog_err_t *err);
/* The same with the salt given (salt_len 1 to KLOG_SCRAM_SALT_MAX): what a
 * PLAIN login is checked with (plain.h), and the RFC's vectors. */
int klog_scram_cred_derive(klog_scram_mech_t m, const char *password,
    size_t pwlen, const unsigned char *salt, size_t salt_len, int iterations,
    klog_scram_cred_t *out, klog_err_t *err);

/*
 * Kafka's text form (ScramCredentialUtils), in its order:
 * "salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>", into buf
 * (KLOG_SCRAM_CRED_TEXT_MAX bytes always suffice).  0, or -KLOG_ETOOBIG.
 */
int klog_scram_cred_format(const klog_scram_cred_t *c, char *buf,
    size_t size);
/*
 * Read that form for mechanism m, strictly: the four fields once each, in
 * any order (as Kafka reads them), nothing else; canonical padded base64;
 * a salt of 1 to KLOG_SCRAM_SALT_MAX bytes, keys of the digest's length;
 * iterations in decimal within Kafka's bounds.  0, or -KLOG_EINVAL with
 * the field at fault in err (never its value).
 */
int klog_scram_cred_parse(klog_scram_mech_t m, const char *text,
    klog_scram_cred_t *out, klog_err_t *err);

/*
 * The key a server makes up unknown users' credentials with: drawn once a
 * process (klog_scram_secret_init()), so that a name asked twice gets the
 * same salt, as a real user would.  A restart draws another, which a
 * patient prober can notice; a broker that minds can keep it in a file.
 */
typedef struct klog_scram_secret {
	unsigned char key[32];
} klog_scram_secret_t;

/* 0, or -KLOG_EUNSUPPORTED when OpenSSL has no randomness to give. */
int klog_scram_secret_init(klog_scram_secret_t *s, klog_err_t *err);
/*
 * The credential an unknown user gets: its salt (KLOG_SCRAM_SALT_LEN
 * bytes, like a real one) and keys are HMACs of the name under the
 * secret, its iterations the default.  No password matches it.  0, or
 * -KLOG_EUNSUPPORTED.
 */
int klog_scram_cred_fake(const klog_scram_secret_t *s, klog_scram_mech_t m,
    const char *user, klog_scram_cred_t *out);

/*
 * Where a server finds a user's credential for a mechanism: 0 and *out,
 * or -KLOG_ENOENT when the user has none of that mechanism (any other
 * error is taken as that too: the client learns nothing either way).
 * klog_users_lookup() (users.h) is one.
 */
typedef int (*klog_scram_lookup_fn)(void *arg, const char *user,
    klog_scram_mech_t m, klog_scram_cred_t *out);

/* ---- the server's side ---- */

typedef struct klog_scram_server klog_scram_server_t;

typedef struct klog_scram_server_config {
	klog_scram_mech_t mech;
	klog_scram_lookup_fn lookup;   /* called in klog_scram_server_first() */
	void *lookup_arg;
	const klog_scram_secret_t *secret; /* for unknown users; outlives
	                                      klog_scram_server_first() */
	const char *nonce;  /* the server's nonce: NULL draws 24 random bytes
	                       (base64); tests give the RFC's */
} klog_scram_server_config_t;

/* A new exchange, waiting for client-first; the caller owns *out.  0, or
 * -KLOG_ENOMEM, -KLOG_EINVAL (a nonce that is not printable), or
 * -KLOG_EUNSUPPORTED (no randomness). */
int klog_scram_server_new(const klog_scram_server_config_t *cfg,
    klog_scram_server_t **out, klog_err_t *err);

/*
 * Take client-first (len bytes, not NUL-terminated) and answer server-first
 * in *out (*outlen bytes, NUL-terminated, valid until the next call or the
 * free).  Kafka's rules: a gs2 header "n" or "y" (no channel binding: "p="
 * is -KLOG_EUNSUPPORTED); an authorization id, if any, equal to the user
 * (else -KLOG_EAUTH, whatever the user); no "m=" extension; other
 * extensions ignored.  -KLOG_EPROTO for a malformed message, -KLOG_EINVAL
 * out of turn.  Looks the user up; an unknown one goes on with a fake
 * credential, answered alike.
 */
int klog_scram_server_first(klog_scram_server_t *s, const void *msg,
    size_t len, const char **out, size_t *outlen, klog_err_t *err);

/*
 * Take client-final and, when its proof is right, answer server-final
 * ("v=...") in *out as above and return 0: the user is authenticated.
 * -KLOG_EAUTH for a wrong proof, from a wrong password or an unknown user
 * alike (one message for both); -KLOG_EPROTO for a malformed message, a
 * nonce or channel binding other than agreed.  Any failure ends the
 * exchange.
 */
int klog_scram_server_final(klog_scram_server_t *s, const void *msg,
    size_t len, const char **out, size_t *outlen, klog_err_t *err);

/* The user client-first named (unescaped), once klog_scram_server_first()
 * has taken it, else NULL; authenticated only once final returned 0. */
const char *klog_scram_server_user(const klog_scram_server_t *s);

/* Wipe the keys and free; NULL is fine. */
void klog_scram_server_free(klog_scram_server_t *s);

/* ---- the client's side ---- */

typedef struct klog_scram_client klog_scram_client_t;

/*
 * A new exchange for user with password (pwlen bytes, kept until the
 * free); nonce as the server's.  0, or -KLOG_EINVAL (a bad name, an empty
 * or long password, a bad nonce), -KLOG_ENOMEM, -KLOG_EUNSUPPORTED.
 */
int klog_scram_client_new(klog_scram_mech_t m, const char *user,
    const char *password, size_t pwlen, const char *nonce,
    klog_scram_client_t **out, klog_err_t *err);

/* client-first, "n,,n=USER,r=CNONCE", in *out as above.  0, or
 * -KLOG_EINVAL out of turn. */
int klog_scram_client_first(klog_scram_client_t *c, const char **out,
    size_t *outlen, klog_err_t *err);

/*
 * Take server-first and answer client-final with the proof: PBKDF2, so off
 * the loop.  The server's nonce must extend ours, its salt be 1 to
 * KLOG_SCRAM_SALT_MAX bytes and its iterations within Kafka's bounds (a
 * server asking fewer would weaken what it keeps; more would cost us).
 * 0, or -KLOG_EPROTO (malformed or out of bounds), -KLOG_EINVAL out of
 * turn.
 */
int klog_scram_client_final(klog_scram_client_t *c, const void *msg,
    size_t len, const char **out, size_t *outlen, klog_err_t *err);

/* Check server-final: 0 when its signature proves the server holds our
 * credential; -KLOG_EAUTH for a wrong one or an "e=" error (its text in
 * err when printable), -KLOG_EPROTO when malformed. */
int klog_scram_client_verify(klog_scram_client_t *c, const void *msg,
    size_t len, klog_err_t *err);

/* Wipe the password and keys and free; NULL is fine. */
void klog_scram_client_free(klog_scram_client_t *c);

#endif
