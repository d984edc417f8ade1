#include <stdlib.h>
#include <string.h>

#include "klog/base/error.h"
#include "klog/net/connauth.h"

const char *
klog_connauth_principal(const klog_connauth_t *a)
{
	return a->principal != NULL ? a->principal : KLOG_PRINCIPAL_ANONYMOUS;
}

const char *
klog_connauth_host(const klog_connauth_t *a)
{
	return a->host[0] != '\0' ? a->host : NULL;
}

int
klog_connauth_pending(const klog_connauth_t *a)
{
	return a->sasl && !a->authenticated;
}

int
klog_connauth_set_principal(klog_connauth_t *a, const char *principal)
{
	char *p = strdup(principal);

	if (p == NULL)
		return -KLOG_ENOMEM;
	free(a->principal);
	a->principal = p;
	return 0;
}

int
klog_connauth_succeed(klog_connauth_t *a, const char *principal)
{
	int rc = klog_connauth_set_principal(a, principal);

	if (rc == 0) {
		a->authenticated = 1;
		a->by_certificate = 0;
	}
	return rc;
}

int
klog_connauth_may_login(const klog_connauth_t *a)
{
	return a->sasl && (!a->authenticated || a->by_certificate);
}

int
klog_connauth_certificate(klog_connauth_t *a, const char *principal)
{
	int rc = klog_connauth_set_principal(a, principal);

	if (rc == 0 && a->sasl == KLOG_CONN_SASL_OR_CERT) {
		a->authenticated = 1;
		a->by_certificate = 1;
	}
	return rc;
}

void
klog_connauth_set_session(klog_connauth_t *a, void *session,
    void (*session_free)(void *))
{
	if (a->session != NULL && a->session_free != NULL)
		a->session_free(a->session);
	a->session = session;
	a->session_free = session_free;
}

/* p[0..n) onto out at *pos (cap bytes in all), unprintable bytes as '?'. */
static void
put_printable(char *out, size_t cap, size_t *pos, const char *p, size_t n)
{
	for (size_t i = 0; i < n && *pos + 1 < cap; i++)
		out[(*pos)++] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
	out[*pos] = '\0';
}

void
klog_connauth_set_software(klog_connauth_t *a, const char *n, size_t nlen,
    const char *v, size_t vlen)
{
	size_t pos = 0;

	put_printable(a->software, sizeof(a->software), &pos, n, nlen);
	put_printable(a->software, sizeof(a->software), &pos, " ", 1);
	put_printable(a->software, sizeof(a->software), &pos, v, vlen);
}

void
klog_connauth_clear(klog_connauth_t *a)
{
	klog_connauth_set_session(a, NULL, NULL);
	free(a->principal);
	a->principal = NULL;
}
