/*
 * libFuzzer target for what lib/auth/ reads from strangers and from files:
 * SCRAM's four messages (scramserver.c, scramclient.c), Kafka's
 * credential text (scram.c), PLAIN messages (plain.c) and the users file
 * (users.c).
 *
 * The bytes are offered to each as the message it reads: client-first to
 * a fresh server, client-final to a server that took RFC 7677's
 * client-first, server-first to a client that sent RFC 7677's, and (when
 * they start as one) server-final to a client that got through RFC
 * 7677's exchange; and the RFC's client-final after the bytes as
 * client-first, which only the RFC's client-first makes right.  Besides not crashing or leaking, it checks what they
 * promise: an answer is a C string of its length; the RFC's own messages
 * are answered with the RFC's; a user a server names passes the name
 * rules; a credential parsed formats to text that parses to the same; a
 * name a client may have reaches the server unchanged through its
 * escaping; PLAIN's parts follow Kafka's rules; the users a file yields
 * have valid names.  A broken invariant aborts.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/auth/plain.h"
#include "klog/auth/scram.h"
#include "klog/auth/users.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

#define RFC_CNONCE "rOprNGfwEbeRWgbNEkqO"
#define RFC_SNONCE "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
#define RFC_FIRST "n,,n=user,r=" RFC_CNONCE
#define RFC_SFIRST "r=" RFC_CNONCE RFC_SNONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==," \
	"i=4096"
#define RFC_FINAL "c=biws,r=" RFC_CNONCE RFC_SNONCE ",p=dHzbZapWIk4jUhN+" \
	"Ute9ytag9zjfMHgsqmmiz7AndVQ="
#define RFC_SFINAL "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

/* user/pencil as RFC 7677's server keeps it, made once. */
static klog_scram_cred_t rfc_cred;
static klog_scram_secret_t secret;

static int
lookup(void *arg, const char *user, klog_scram_mech_t m,
    klog_scram_cred_t *out)
{
	(void)arg;
	if (strcmp(user, "user") != 0 || m != KLOG_SCRAM_SHA256)
		return -KLOG_ENOENT;
	*out = rfc_cred;
	return 0;
}

static void
init_once(void)
{
	static const unsigned char salt[16] = { 0x5b, 0x6d, 0x99, 0x68, 0x9d,
	    0x12, 0x35, 0x8e, 0xec, 0xa0, 0x4b, 0x14, 0x12, 0x36, 0xfa,
	    0x81 };
	static int done;
	klog_err_t err;

	if (done)
		return;
	CHECK(klog_scram_cred_derive(KLOG_SCRAM_SHA256, "pencil", 6, salt,
	    sizeof(salt), 4096, &rfc_cred, &err) == 0);
	CHECK(klog_scram_secret_init(&secret, &err) == 0);
	done = 1;
}

static klog_scram_server_t *
server(void)
{
	klog_scram_server_config_t cfg = {
		.mech = KLOG_SCRAM_SHA256, .lookup = lookup,
		.secret = &secret, .nonce = RFC_SNONCE,
	};
	klog_scram_server_t *s;
	klog_err_t err;

	CHECK(klog_scram_server_new(&cfg, &s, &err) == 0);
	return s;
}

static int
same(const uint8_t *data, size_t size, const char *s)
{
	return size == strlen(s) && memcmp(data, s, size) == 0;
}

static void
answer_ok(const char *out, size_t n)
{
	CHECK(out != NULL && strlen(out) == n && n > 0);
}

/* data as client-first, then as client-final after the RFC's. */
static void
server_side(const uint8_t *data, size_t size)
{
	klog_scram_server_t *s = server();
	const char *out, *user;
	klog_err_t err;
	size_t n;
	int rc;

	if (klog_scram_server_first(s, data, size, &out, &n, &err) == 0) {
		answer_ok(out, n);
		CHECK(strncmp(out, "r=", 2) == 0 && strstr(out, ",s=") != NULL);
		user = klog_scram_server_user(s);
		CHECK(user != NULL &&
		    klog_scram_name_check(user, strlen(user), NULL) == 0);
		/* The RFC's proof holds for the RFC's client-first only. */
		CHECK((klog_scram_server_final(s, RFC_FINAL, strlen(RFC_FINAL),
		    &out, &n, &err) == 0) == same(data, size, RFC_FIRST));
	} else {
		CHECK(klog_scram_server_user(s) == NULL);
	}
	klog_scram_server_free(s);

	s = server();
	CHECK(klog_scram_server_first(s, RFC_FIRST, strlen(RFC_FIRST), &out,
	    &n, &err) == 0);
	rc = klog_scram_server_final(s, data, size, &out, &n, &err);
	if (same(data, size, RFC_FINAL))
		CHECK(rc == 0 && strcmp(out, RFC_SFINAL) == 0);
	if (rc == 0)
		answer_ok(out, n);
	else
		CHECK(rc == -KLOG_EPROTO || rc == -KLOG_EAUTH);
	klog_scram_server_free(s);
}

/* data as server-first; as server-final when it starts as one. */
static void
client_side(const uint8_t *data, size_t size)
{
	klog_scram_client_t *c;
	const char *out;
	klog_err_t err;
	size_t n;
	int rc;

	CHECK(klog_scram_client_new(KLOG_SCRAM_SHA256, "user", "pencil", 6,
	    RFC_CNONCE, &c, &err) == 0);
	CHECK(klog_scram_client_first(c, &out, &n, &err) == 0);
	rc = klog_scram_client_final(c, data, size, &out, &n, &err);
	if (same(data, size, RFC_SFIRST))
		CHECK(rc == 0 && strcmp(out, RFC_FINAL) == 0);
	if (rc == 0)
		answer_ok(out, n);
	klog_scram_client_free(c);
	/* The PBKDF2 behind a server-final is paid only for bytes that
	 * could be one. */
	if (size < 2 || (data[0] != 'v' && data[0] != 'e') || data[1] != '=')
		return;
	CHECK(klog_scram_client_new(KLOG_SCRAM_SHA256, "user", "pencil", 6,
	    RFC_CNONCE, &c, &err) == 0);
	CHECK(klog_scram_client_first(c, &out, &n, &err) == 0);
	CHECK(klog_scram_client_final(c, RFC_SFIRST, strlen(RFC_SFIRST), &out,
	    &n, &err) == 0);
	rc = klog_scram_client_verify(c, data, size, &err);
	CHECK(rc == 0 || rc == -KLOG_EPROTO || rc == -KLOG_EAUTH);
	if (rc == 0)
		CHECK(strncmp((const char *)data, RFC_SFINAL,
		    strlen(RFC_SFINAL)) == 0);
	klog_scram_client_free(c);
}

/* data as a user's name: one a client may have reaches a server as is. */
static void
name(const char *s)
{
	klog_scram_client_t *c;
	klog_scram_server_t *sv;
	const char *out;
	klog_err_t err;
	size_t n;

	if (klog_scram_name_check(s, strlen(s), NULL) < 0)
		return;
	CHECK(klog_scram_client_new(KLOG_SCRAM_SHA512, s, "pw", 2, NULL, &c,
	    &err) == 0);
	CHECK(klog_scram_client_first(c, &out, &n, &err) == 0);
	sv = server();
	CHECK(klog_scram_server_first(sv, out, n, &out, &n, &err) == 0);
	CHECK(strcmp(klog_scram_server_user(sv), s) == 0);
	klog_scram_server_free(sv);
	klog_scram_client_free(c);
}

/* data as Kafka's credential text of either mechanism. */
static void
cred(const char *s)
{
	char text[KLOG_SCRAM_CRED_TEXT_MAX];
	klog_scram_cred_t c, back;
	klog_err_t err;

	for (int m = 0; m < KLOG_SCRAM_MECHS; m++) {
		if (klog_scram_cred_parse((klog_scram_mech_t)m, s, &c,
		    &err) < 0)
			continue;
		CHECK(klog_scram_cred_format(&c, text, sizeof(text)) == 0);
		CHECK(klog_scram_cred_parse((klog_scram_mech_t)m, text, &back,
		    &err) == 0);
		CHECK(memcmp(&c, &back, sizeof(c)) == 0);
	}
}

static void
plain(const uint8_t *data, size_t size)
{
	klog_plain_t p;
	klog_err_t err;
	int rc = klog_plain_parse(data, size, &p, &err);

	CHECK(rc == 0 || rc == -KLOG_EPROTO || rc == -KLOG_EAUTH);
	if (rc < 0)
		return;
	CHECK(klog_scram_name_check(p.user, strlen(p.user), NULL) == 0);
	CHECK(p.password_len > 0 && p.password >= (const char *)data &&
	    p.password + p.password_len == (const char *)data + size);
	CHECK(p.authzid_len == 0 || (p.authzid_len == strlen(p.user) &&
	    memcmp(p.authzid, p.user, p.authzid_len) == 0));
}

static void
users_file(const uint8_t *data, size_t size)
{
	klog_users_entry_t e;
	klog_users_t *u;
	klog_err_t err;
	char path[64];
	int fd, rc;

	if ((fd = memfd_create("users", MFD_CLOEXEC)) < 0)
		return;
	if (fchmod(fd, 0600) < 0 ||
	    (size > 0 && write(fd, data, size) != (ssize_t)size)) {
		close(fd);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rc = klog_users_load(path, &u, &err);
	CHECK(rc == 0 || rc == -KLOG_ECORRUPT);
	for (size_t i = 0; rc == 0 && i < klog_users_count(u); i++) {
		klog_users_get(u, i, &e);
		CHECK(klog_users_name_check(e.name, NULL) == 0);
		CHECK(e.iterations >= KLOG_SCRAM_ITER_MIN &&
		    e.iterations <= KLOG_SCRAM_ITER_MAX);
	}
	if (rc == 0)
		klog_users_free(u);
	close(fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	init_once();
	server_side(data, size);
	client_side(data, size);
	plain(data, size);
	users_file(data, size);
	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	name(s);
	cred(s);
	free(s);
	return 0;
}
