/*
 * librdkafka's security properties; see props.h.  Names and values are
 * librdkafka 2.0's (rdkafka_conf.c): security.protocol in any case,
 * sasl.mechanisms its older name for sasl.mechanism.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "klog/client/props.h"

#define LINE_MAX_LEN 4096

void
klog_props_init(klog_props_t *p)
{
	memset(p, 0, sizeof(*p));
	p->verify_host = 1;
}

/* Replace *dst with a copy of value (wiping a password replaced). */
static int
set_str(char **dst, const char *value, klog_err_t *err)
{
	char *v = strdup(value);

	if (v == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if (*dst != NULL)
		OPENSSL_cleanse(*dst, strlen(*dst));
	free(*dst);
	*dst = v;
	return 0;
}

/* value as one of names (any case): its index, or -1. */
static int
pick(const char *value, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcasecmp(value, names[i]) == 0)
			return i;
	return -1;
}

static int
set_protocol(klog_props_t *p, const char *key, const char *value,
    klog_err_t *err)
{
	static const char *const names[] = { "plaintext", "ssl",
	    "sasl_plaintext", "sasl_ssl" };
	int i = pick(value, names, 4);

	if (i < 0)
		return klog_err_set(err, -KLOG_EINVAL, "%s: %s: want plaintext, "
		    "ssl, sasl_plaintext or sasl_ssl", key, value);
	p->protocol = i;
	return 0;
}

static int
set_mechanism(klog_props_t *p, const char *key, const char *value,
    klog_err_t *err)
{
	static const char *const names[] = { "PLAIN", "SCRAM-SHA-256",
	    "SCRAM-SHA-512" };
	int i = pick(value, names, 3);

	if (i < 0)
		return klog_err_set(err, -KLOG_EINVAL, "%s: %s: want PLAIN, "
		    "SCRAM-SHA-256 or SCRAM-SHA-512", key, value);
	return set_str(&p->mechanism, names[i], err);
}

static int
set_identification(klog_props_t *p, const char *key, const char *value,
    klog_err_t *err)
{
	static const char *const names[] = { "none", "https" };
	int i = pick(value, names, 2);

	if (i < 0)
		return klog_err_set(err, -KLOG_EINVAL, "%s: %s: want https or "
		    "none", key, value);
	p->verify_host = i;
	return 0;
}

int
klog_props_set_kv(klog_props_t *p, const char *key, const char *value,
    klog_err_t *err)
{
	if (strcmp(key, "security.protocol") == 0)
		return set_protocol(p, key, value, err);
	if (strcmp(key, "sasl.mechanism") == 0 ||
	    strcmp(key, "sasl.mechanisms") == 0)
		return set_mechanism(p, key, value, err);
	if (strcmp(key, "ssl.endpoint.identification.algorithm") == 0)
		return set_identification(p, key, value, err);
	if (strcmp(key, "sasl.password") == 0)
		return set_str(&p->password, value, err);
	/* Paths and names: an empty one is no setting at all. */
	if (*value == '\0' && (strcmp(key, "ssl.ca.location") == 0 ||
	    strcmp(key, "ssl.certificate.location") == 0 ||
	    strcmp(key, "ssl.key.location") == 0 ||
	    strcmp(key, "sasl.username") == 0))
		return klog_err_set(err, -KLOG_EINVAL, "%s: empty", key);
	if (strcmp(key, "ssl.ca.location") == 0)
		return set_str(&p->ca, value, err);
	if (strcmp(key, "ssl.certificate.location") == 0)
		return set_str(&p->cert, value, err);
	if (strcmp(key, "ssl.key.location") == 0)
		return set_str(&p->key, value, err);
	if (strcmp(key, "sasl.username") == 0)
		return set_str(&p->username, value, err);
	return klog_err_set(err, -KLOG_EINVAL, "%s: unknown property (klog "
	    "takes security.protocol, ssl.ca.location, "
	    "ssl.certificate.location, ssl.key.location, "
	    "ssl.endpoint.identification.algorithm, sasl.mechanism, "
	    "sasl.username, sasl.password)", key);
}

int
klog_props_set(klog_props_t *p, const char *kv, klog_err_t *err)
{
	const char *eq = strchr(kv, '=');
	char key[128];
	size_t n;

	if (eq == NULL || eq == kv)
		return klog_err_set(err, -KLOG_EINVAL, "%s: want key=value",
		    strncmp(kv, "sasl.password", 13) == 0 ? "sasl.password" :
		    kv);
	n = (size_t)(eq - kv);
	if (n >= sizeof(key))
		return klog_err_set(err, -KLOG_EINVAL, "%.40s...: unknown "
		    "property", kv);
	memcpy(key, kv, n);
	key[n] = '\0';
	return klog_props_set_kv(p, key, eq + 1, err);
}

/* Cut white space off both ends of s, in place. */
static char *
trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* One line of a file: a comment, blank, or key=value. */
static int
load_line(klog_props_t *p, char *line, klog_err_t *err)
{
	char *s = trim(line), *eq;

	if (*s == '\0' || *s == '#')
		return 0;
	if ((eq = strchr(s, '=')) == NULL || eq == s)
		return klog_err_set(err, -KLOG_EINVAL, "want key=value");
	*eq = '\0';
	return klog_props_set_kv(p, trim(s), trim(eq + 1), err);
}

int
klog_props_load(klog_props_t *p, const char *path, klog_err_t *err)
{
	char line[LINE_MAX_LEN + 2], why[sizeof(err->msg)];
	FILE *f = fopen(path, "r");
	int rc = 0, lineno = 0;

	if (f == NULL)
		return klog_err_sys(err, NULL, path);
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (strlen(line) > LINE_MAX_LEN && strchr(line, '\n') == NULL) {
			rc = klog_err_set(err, -KLOG_EINVAL, "%s:%d: line too "
			    "long", path, lineno);
			break;
		}
		if ((rc = load_line(p, line, err)) < 0) {
			snprintf(why, sizeof(why), "%s", err->msg);
			rc = klog_err_set(err, rc, "%s:%d: %s", path, lineno,
			    why);
			break;
		}
	}
	/* The password may have been on a line. */
	OPENSSL_cleanse(line, sizeof(line));
	if (rc == 0 && ferror(f))
		rc = klog_err_set(err, -KLOG_EIO, "%s: %s", path,
		    strerror(errno));
	fclose(f);
	return rc;
}

int
klog_props_security(klog_props_t *p, const klog_client_sec_t **sec,
    klog_err_t *err)
{
	klog_tls_client_config_t tc = { p->ca, p->cert, p->key };
	int sasl = p->protocol == KLOG_PROPS_SASL_PLAINTEXT ||
	    p->protocol == KLOG_PROPS_SASL_SSL;
	int tls = p->protocol == KLOG_PROPS_SSL ||
	    p->protocol == KLOG_PROPS_SASL_SSL;
	int rc;

	*sec = NULL;
	if (sasl && p->mechanism == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "security.protocol "
		    "%s needs sasl.mechanism (PLAIN, SCRAM-SHA-256 or "
		    "SCRAM-SHA-512)", tls ? "sasl_ssl" : "sasl_plaintext");
	if (sasl && p->username == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "sasl.mechanism %s "
		    "needs sasl.username", p->mechanism);
	if (sasl && p->password == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "sasl.mechanism %s "
		    "needs sasl.password", p->mechanism);
	if (!sasl && !tls)
		return 0;
	if (tls && p->tls == NULL && (rc = klog_tls_client_new(&tc, &p->tls,
	    err)) < 0)
		return rc;
	p->sec = (klog_client_sec_t){ .tls = tls ? p->tls : NULL,
	    .verify_host = p->verify_host,
	    .mechanism = sasl ? p->mechanism : NULL,
	    .username = p->username, .password = p->password };
	*sec = &p->sec;
	return 0;
}

void
klog_props_free(klog_props_t *p)
{
	if (p->password != NULL)
		OPENSSL_cleanse(p->password, strlen(p->password));
	free(p->password);
	free(p->ca);
	free(p->cert);
	free(p->key);
	free(p->mechanism);
	free(p->username);
	klog_tls_free(p->tls);
	klog_props_init(p);
}
