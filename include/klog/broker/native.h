/*
 * The klog protocol's front end (klog-protocol(7)): frames a connection's
 * bytes into requests, decodes them (proto.h), calls the broker core
 * (core.h) and encodes its answers, sending fetched bytes from the segment
 * files by sendfile.  Hand klog_native_front() and the klog_native_t to
 * klog_conns_listen().
 *
 * The CRCs of the produce sets of one read are checked together, on the
 * verifier's threads as well as the loop's, when the read brings enough
 * of them: one request's sets are too small to share, a read's worth is
 * not.  The core trusts a set's top-level CRCs only when this decoder
 * hands over the very set it checked.
 */
#ifndef KLOG_NATIVE_H
#define KLOG_NATIVE_H

#include <stdint.h>

#include "klog/auth/authz.h"
#include "klog/auth/sasl.h"
#include "klog/auth/saslpool.h"
#include "klog/base/error.h"
#include "klog/base/promtext.h"
#include "klog/core/core.h"
#include "klog/net/conn.h"

typedef struct klog_native klog_native_t;

typedef struct klog_native_config {
	int64_t max_request_bytes;     /* a frame over this closes the link */
	int32_t broker_id;             /* reported by METADATA */
	const char *advertised_host;   /* reported by METADATA (copied) */
	int advertised_port;
	int crc_threads;               /* verifier threads; 0: the loop alone */
	/* A SASL_* listener's logins (nsasl.h); NULL without. */
	const klog_sasl_config_t *sasl;
	klog_saslpool_t *saslpool;
	klog_authz_t *authz;           /* the broker's ACLs (authz.h), which
	                                  outlive the front; NULL: none */
	klog_logger_t log;
} klog_native_config_t;

/* A front end over core (the caller's, outliving it).  *out is the
 * caller's: klog_native_free(). */
int klog_native_new(klog_core_t *core, const klog_native_config_t *cfg,
    klog_native_t **out);

void klog_native_free(klog_native_t *n);

/* The requests n answered, by API and error, and their latencies
 * (arrival to answer), for the broker's metrics. */
const klog_promtext_reqs_t *klog_native_reqs(const klog_native_t *n);

/* The connection callbacks; their arg is the klog_native_t. */
const klog_conn_front_t *klog_native_front(void);

#endif
