#include <stdlib.h>
#include <string.h>

#include "klog/broker/nsasl.h"

#define FAIL_DELAY_MS 100

/* One connection's exchange (its connauth session). */
struct nsasl {
	klog_sasl_t *sasl;
	klog_saslpool_t *pool;
	klog_saslpool_job_t *job;
	klog_conn_t *conn;
	int32_t corr;              /* the AUTHENTICATE being checked */
};

static void
nsasl_free(void *arg)
{
	struct nsasl *x = arg;

	klog_saslpool_release(x->pool, x->job, x->sasl);
	free(x);
}

int
klog_nsasl_takes(klog_conn_t *c, int16_t api)
{
	return api == KLOG_API_AUTHENTICATE ||
	    klog_connauth_pending(klog_conn_auth(c));
}

/* An error in the header, then a close (later, after a failed login). */
static int
refuse(klog_conn_t *c, int32_t corr, int16_t error)
{
	klog_proto_encode_auth_resp(klog_outq_buf(klog_conn_out(c)), corr,
	    error, NULL, 0);
	if (error == KLOG_WIRE_AUTHENTICATION_FAILED)
		klog_conn_linger(c, FAIL_DELAY_MS);
	else
		klog_conn_end(c);
	return -KLOG_ECLOSED;
}

/* What a step said, answered. */
static int
conclude(struct nsasl *x, int rc, const void *out, size_t outlen)
{
	klog_conn_t *c = x->conn;

	klog_conn_want_write(c);
	if (rc == KLOG_SASL_DONE && klog_connauth_succeed(klog_conn_auth(c),
	    klog_sasl_principal(x->sasl)) < 0)
		rc = -KLOG_ENOMEM;
	if (rc < 0)
		return refuse(c, x->corr, KLOG_WIRE_AUTHENTICATION_FAILED);
	klog_proto_encode_auth_resp(klog_outq_buf(klog_conn_out(c)), x->corr,
	    KLOG_WIRE_NONE, out, (uint32_t)outlen);
	if (rc == KLOG_SASL_DONE) {
		klog_sasl_free(x->sasl);
		x->sasl = NULL;
	}
	return 0;
}

static void
checked(void *tag, klog_sasl_t *s)
{
	struct nsasl *x = tag;
	const void *out;
	size_t outlen;
	int rc;

	x->job = NULL;
	x->sasl = s;
	rc = klog_sasl_step(s, NULL, 0, &out, &outlen, NULL);
	conclude(x, rc, out, outlen);
}

/* The exchange of c, begun with mech on its first AUTHENTICATE. */
static struct nsasl *
session(const klog_sasl_config_t *sasl, klog_saslpool_t *pool,
    klog_conn_t *c, klog_str_t mech, int16_t *error)
{
	klog_connauth_t *a = klog_conn_auth(c);
	struct nsasl *x = a->session;
	klog_sasl_mech_t m;

	*error = KLOG_WIRE_UNSUPPORTED_MECHANISM;
	if (klog_sasl_mech_parse(mech.p, mech.len, &m) < 0)
		return NULL;
	if (x != NULL) {
		*error = KLOG_WIRE_ILLEGAL_AUTH_STATE;
		return x->sasl != NULL && x->job == NULL &&
		    klog_sasl_mech(x->sasl) == m ? x : NULL;
	}
	if ((x = calloc(1, sizeof(*x))) == NULL) {
		*error = KLOG_WIRE_AUTHENTICATION_FAILED;
		return NULL;
	}
	if (klog_sasl_new(sasl, m, &x->sasl, NULL) < 0) {
		free(x);
		return NULL;
	}
	x->pool = pool;
	x->conn = c;
	klog_connauth_set_session(a, x, nsasl_free);
	return x;
}

int
klog_nsasl_request(const klog_sasl_config_t *sasl, klog_saslpool_t *pool,
    klog_conn_t *c, const klog_req_header_t *h, const uint8_t *body,
    size_t len)
{
	klog_auth_req_t req;
	struct nsasl *x;
	const void *out;
	size_t outlen;
	int16_t error;
	int rc;

	if (h->api != KLOG_API_AUTHENTICATE)
		return refuse(c, h->correlation,
		    KLOG_WIRE_AUTHENTICATION_REQUIRED);
	if (sasl == NULL || !klog_connauth_may_login(klog_conn_auth(c)))
		return refuse(c, h->correlation, KLOG_WIRE_ILLEGAL_AUTH_STATE);
	if (h->version != KLOG_PROTO_VERSION ||
	    klog_proto_decode_auth(body, len, &req) < 0)
		return refuse(c, h->correlation, KLOG_WIRE_INVALID_REQUEST);
	if ((x = session(sasl, pool, c, req.mechanism, &error)) == NULL)
		return refuse(c, h->correlation, error);
	x->corr = h->correlation;
	rc = klog_sasl_step(x->sasl, req.bytes, req.len, &out, &outlen, NULL);
	if (rc == KLOG_SASL_SLOW) {
		if (klog_saslpool_submit(pool, x->sasl, checked, x,
		    &x->job) == 0)
			return 0;
		rc = -KLOG_EBUSY;
	}
	return conclude(x, rc, out, outlen);
}
