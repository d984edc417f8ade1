/*
 * SASL on klog's native listener (klog-protocol(7), AUTHENTICATE): the
 * same exchanges as the Kafka listener's (sasl.h), carried by requests of
 * klog's own.  On a SASL_SSL:// or SASL_PLAINTEXT:// native listener a
 * client sends AUTHENTICATE first (PLAIN in one round, a SCRAM in two);
 * any other request before it succeeds is answered
 * AUTHENTICATION_REQUIRED and the connection closed.  A failure is
 * AUTHENTICATION_FAILED, the close 100 ms later; a mechanism not offered
 * UNSUPPORTED_MECHANISM; AUTHENTICATE where none is expected (a listener
 * without SASL, a client logged in, another mechanism midway)
 * ILLEGAL_AUTH_STATE, then a close.
 */
#ifndef KLOG_NSASL_H
#define KLOG_NSASL_H

#include <stddef.h>
#include <stdint.h>

#include "klog/auth/sasl.h"
#include "klog/auth/saslpool.h"
#include "klog/net/conn.h"
#include "klog/proto/proto.h"

/* Frames before the login are capped at this (a login needs 4 KiB). */
#define KLOG_NSASL_FRAME_MAX (64 * 1024)

/* Whether c's request of api belongs to klog_nsasl_request(): an
 * AUTHENTICATE, or anything before the login on a SASL listener. */
int klog_nsasl_takes(klog_conn_t *c, int16_t api);

/*
 * Answer h's request (body, len bytes) onto c's output: the exchange's
 * next step, or a refusal.  sasl and pool as the Kafka listener's (NULL on
 * a listener without SASL).  0, or -KLOG_ECLOSED when c is closing.
 */
int klog_nsasl_request(const klog_sasl_config_t *sasl, klog_saslpool_t *pool,
    klog_conn_t *c, const klog_req_header_t *h, const uint8_t *body,
    size_t len);

#endif
