/*
 * SASL on the Kafka listener (klog-kafka(7), "AUTHENTICATION"): the
 * frames a SASL_* listener takes before its client is authenticated, as
 * Kafka's SaslServerAuthenticator takes them.
 *
 *   ApiVersions (any version, up to 3 times: librdkafka asks at v3, then
 *   at v0), then SaslHandshake: v0 (kafka-python) has the tokens follow
 *   as bare frames (size:4 token) with no Kafka header, a failure being a
 *   plain close; v1 (librdkafka) has them in SaslAuthenticate requests,
 *   a failure answered SASL_AUTHENTICATION_FAILED (58) with a message.
 *   A mechanism not enabled is UNSUPPORTED_SASL_MECHANISM (33) with the
 *   list, then a close.  Anything else: closed.
 *
 * Frames are capped at 512 KiB before authentication (Kafka's
 * sasl.server.max.receive.size); a failed login closes 100 ms after its
 * answer (connection.failed.authentication.delay.ms).
 */
#include <stdlib.h>
#include <string.h>

#include "klog/auth/sasl.h"
#include "klog/auth/saslpool.h"
#include "klog/base/buf.h"
#include "kafka_impl.h"

#define PREAUTH_MAX (512 * 1024)
#define FAIL_DELAY_MS 100
#define MAX_VERSIONS 3

enum state {
	HANDSHAKE,                 /* ApiVersions or SaslHandshake next */
	AUTH_V1,                   /* SaslAuthenticate requests */
	AUTH_V0,                   /* bare frames */
	CHECKING,                  /* PLAIN on the pool's thread */
};

/* One connection's exchange (its connauth session). */
struct ksasl {
	enum state state;
	enum state after;          /* CHECKING: the state it came from */
	int versions;              /* ApiVersions asked */
	klog_sasl_t *sasl;
	klog_saslpool_t *pool;
	klog_saslpool_job_t *job;
	klog_conn_t *conn;
	int16_t version;           /* the SaslAuthenticate being answered */
	int32_t corr;
};

static void
ksasl_free(void *arg)
{
	struct ksasl *x = arg;

	klog_saslpool_release(x->pool, x->job, x->sasl);
	free(x);
}

static struct ksasl *
session(klog_kafka_t *k, klog_conn_t *c)
{
	klog_connauth_t *a = klog_conn_auth(c);
	struct ksasl *x = a->session;

	if (x != NULL)
		return x;
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return NULL;
	x->pool = k->cfg.saslpool;
	x->conn = c;
	klog_connauth_set_session(a, x, ksasl_free);
	return x;
}

/* ---- answers ---- */

static void
answer_handshake(klog_kafka_t *k, int32_t corr, int16_t error)
{
	klog_buf_t *b = klog_outq_buf(k->q);
	size_t start = klog_kwire_begin(b, corr), n = 0;
	const char *name;

	klog_buf_put_i16(b, error);
	for (int m = 0; m < KLOG_SASL_MECH_COUNT; m++)
		n += (k->cfg.sasl->mechs & KLOG_SASL_BIT(m)) != 0;
	klog_buf_put_i32(b, (int32_t)n);
	for (int m = 0; m < KLOG_SASL_MECH_COUNT; m++) {
		if (!(k->cfg.sasl->mechs & KLOG_SASL_BIT(m)))
			continue;
		name = klog_sasl_mech_name((klog_sasl_mech_t)m);
		klog_kwire_put_str(b, (klog_str_t){ name,
		    (uint16_t)strlen(name) });
	}
	klog_kwire_end(b, start);
}

static void
answer_authenticate(klog_buf_t *b, int32_t corr, int16_t version,
    int16_t error, const char *msg, const void *token, size_t len)
{
	size_t start = klog_kwire_begin(b, corr);

	klog_buf_put_i16(b, error);
	klog_kwire_put_str(b, (klog_str_t){ msg, (uint16_t)(msg != NULL ?
	    strlen(msg) : 0) });
	klog_kwire_put_bytes(b, token, (int32_t)len);
	if (version >= 1)
		klog_buf_put_i64(b, 0);  /* session lifetime: unbounded */
	klog_kwire_end(b, start);
}

/* A v0 token: a bare frame. */
static void
answer_bare(klog_buf_t *b, const void *token, size_t len)
{
	klog_buf_put_i32(b, (int32_t)len);
	klog_buf_put(b, token, len);
}

/* ---- the exchange ---- */

static void checked(void *tag, klog_sasl_t *s);

/*
 * What the step said: answer, and authenticate or refuse c.  rc as
 * klog_sasl_step()'s.
 */
static void
conclude(struct ksasl *x, klog_buf_t *b, int rc, const void *out,
    size_t outlen, const klog_err_t *err)
{
	klog_conn_t *c = x->conn;
	klog_connauth_t *a = klog_conn_auth(c);

	if (rc == KLOG_SASL_DONE &&
	    klog_connauth_succeed(a, klog_sasl_principal(x->sasl)) < 0)
		rc = -KLOG_ENOMEM;
	if (x->state == AUTH_V1)
		answer_authenticate(b, x->corr, x->version, rc < 0 ?
		    KLOG_KERR_SASL_AUTHENTICATION_FAILED : KLOG_KERR_NONE,
		    rc < 0 ? err->msg : NULL, out, rc < 0 ? 0 : outlen);
	else if (rc >= 0)
		answer_bare(b, out, outlen);
	klog_conn_want_write(c);
	if (rc < 0) {
		klog_conn_linger(c, FAIL_DELAY_MS);
		return;
	}
	if (rc == KLOG_SASL_DONE) {
		klog_sasl_free(x->sasl);
		x->sasl = NULL;
	}
}

static void
step(klog_kafka_t *k, struct ksasl *x, const void *token, size_t len)
{
	const void *out;
	size_t outlen;
	klog_err_t err;
	int rc = klog_sasl_step(x->sasl, token, len, &out, &outlen, &err);

	if (rc == KLOG_SASL_SLOW) {
		if (klog_saslpool_submit(x->pool, x->sasl, checked, x,
		    &x->job) == 0) {
			x->after = x->state;
			x->state = CHECKING;
			return;
		}
		rc = klog_err_set(&err, -KLOG_EAUTH, "Authentication failed: "
		    "too many logins in progress");
	}
	conclude(x, klog_outq_buf(k->q), rc, out, outlen, &err);
}

/* The pool checked a PLAIN password: answer on the loop. */
static void
checked(void *tag, klog_sasl_t *s)
{
	struct ksasl *x = tag;
	const void *out;
	size_t outlen;
	klog_err_t err;
	int rc;

	x->job = NULL;
	x->sasl = s;
	x->state = x->after;
	rc = klog_sasl_step(s, NULL, 0, &out, &outlen, &err);
	conclude(x, klog_outq_buf(klog_conn_out(x->conn)), rc, out, outlen,
	    &err);
}

static void
handshake(klog_kafka_t *k, struct ksasl *x, const klog_kreq_t *r)
{
	klog_sasl_mech_t m;
	klog_rd_t rd;
	const char *name;
	uint16_t n;

	klog_rd_init(&rd, r->body, r->body_len);
	name = klog_rd_str(&rd, &n);
	if (rd.failed || klog_sasl_mech_parse(name, n, &m) < 0 ||
	    klog_sasl_new(k->cfg.sasl, m, &x->sasl, NULL) < 0) {
		answer_handshake(k, r->correlation,
		    KLOG_KERR_UNSUPPORTED_SASL_MECHANISM);
		klog_conn_end(k->conn);
		return;
	}
	answer_handshake(k, r->correlation, KLOG_KERR_NONE);
	x->state = r->version == 0 ? AUTH_V0 : AUTH_V1;
}

static void
authenticate(klog_kafka_t *k, struct ksasl *x, const klog_kreq_t *r)
{
	klog_rd_t rd;
	int32_t len;
	const uint8_t *token;

	klog_rd_init(&rd, r->body, r->body_len);
	len = klog_rd_i32(&rd);
	token = len >= 0 ? klog_rd_bytes(&rd, (size_t)len) : NULL;
	x->version = r->version;
	x->corr = r->correlation;
	if (token == NULL) {
		k->bad = "a SaslAuthenticate without its bytes";
		return;
	}
	step(k, x, token, (size_t)len);
}

/* A request in its place before authentication (1: ApiVersions, for the
 * caller to answer); else k->bad. */
static int
preauth_request(klog_kafka_t *k, struct ksasl *x, const klog_kreq_t *r)
{
	if (r->api == KLOG_KAPI_API_VERSIONS && x->state == HANDSHAKE &&
	    ++x->versions <= MAX_VERSIONS)
		return 1;
	if (r->api == KLOG_KAPI_SASL_HANDSHAKE && x->state == HANDSHAKE &&
	    r->version <= 1)
		handshake(k, x, r);
	else if (r->api == KLOG_KAPI_SASL_AUTHENTICATE &&
	    x->state == AUTH_V1 && r->version <= 1)
		authenticate(k, x, r);
	else
		k->bad = "a request before authentication";
	return 0;
}

/* A bare v0 token: its size, or 0 while it is not whole. */
static size_t
bare_token(klog_kafka_t *k, struct ksasl *x, const uint8_t *data,
    size_t len)
{
	uint32_t n;

	if (len < 4)
		return 0;
	n = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 |
	    (uint32_t)data[2] << 8 | data[3];
	if (n > PREAUTH_MAX) {
		k->bad = "a SASL token over 512 KiB";
		return len;
	}
	if (len - 4 < n)
		return 0;
	step(k, x, data + 4, n);
	return 4 + (size_t)n;
}

size_t
kafka_sasl_frame(klog_kafka_t *k, klog_conn_t *c, const uint8_t *data,
    size_t len, klog_kreq_t *r, int *versions)
{
	struct ksasl *x = session(k, c);
	int rc;

	*versions = 0;
	if (x == NULL) {
		k->bad = "out of memory";
		return len;
	}
	if (x->state == CHECKING) {
		k->bad = "a request while its login is checked";
		return len;
	}
	if (x->state == AUTH_V0)
		return bare_token(k, x, data, len);
	rc = klog_kwire_frame(data, len, PREAUTH_MAX, r);
	if (rc == -KLOG_EPARTIAL)
		return 0;
	if (rc < 0) {
		k->bad = rc == -KLOG_ETOOBIG ? "a request over 512 KiB before "
		    "authentication" : "a bad request size";
		return len;
	}
	*versions = preauth_request(k, x, r);
	return 4 + (size_t)r->size;
}

void
kafka_sasl_misplaced(klog_kafka_t *k, const klog_kreq_t *r)
{
	klog_buf_t *b = klog_outq_buf(k->q);

	/* Authenticated already, or a listener without SASL. */
	if (r->api == KLOG_KAPI_SASL_HANDSHAKE) {
		size_t start = klog_kwire_begin(b, r->correlation);

		klog_buf_put_i16(b, KLOG_KERR_ILLEGAL_SASL_STATE);
		klog_buf_put_i32(b, 0);
		klog_kwire_end(b, start);
	} else {
		answer_authenticate(b, r->correlation, r->version,
		    KLOG_KERR_ILLEGAL_SASL_STATE, "SASL is not expected now",
		    NULL, 0);
	}
	k->err = KLOG_KERR_ILLEGAL_SASL_STATE;
}
