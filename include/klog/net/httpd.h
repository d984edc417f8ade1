/*
 * A front end (conn.h) that answers HTTP/1.x GET of one path with a body
 * rendered at each request, and nothing else: the broker's Prometheus
 * scrape endpoint (--metrics-listen).
 *
 * Hand-written rather than libmicrohttpd: the broker's loop already does
 * non-blocking accepts, reads into bounded buffers and writes output
 * queues, so what is left is finding the end of a request head and one
 * request line, which is less code than binding a library's own thread
 * or poll loop to this one, and adds no dependency.
 *
 * One request per connection: the answer says "Connection: close", and the
 * connection closes once it is written.  A head longer than
 * KLOG_HTTPD_HEAD_MAX gets 431, a connection still open
 * KLOG_HTTPD_DEADLINE_MS after it was accepted (a client that sent half a
 * request and stopped) is closed; a malformed request line gets 400, a
 * method other than GET or HEAD 405, any other path 404.  Everything runs
 * on the loop thread, between other clients' requests.
 */
#ifndef KLOG_HTTPD_H
#define KLOG_HTTPD_H

#include <stddef.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/net/conn.h"

#define KLOG_HTTPD_HEAD_MAX 8192
#define KLOG_HTTPD_DEADLINE_MS 5000

/* Append the body to out (its errors are sticky); 0 or a -KLOG_E* code
 * (answered 500). */
typedef int klog_httpd_render_fn(void *arg, klog_buf_t *out);

typedef struct klog_httpd_config {
	const char *path;              /* "/metrics" */
	const char *content_type;
	klog_httpd_render_fn *render;
	void *arg;
} klog_httpd_config_t;

typedef struct klog_httpd klog_httpd_t;

/* cfg's strings are copied.  *out is the caller's: klog_httpd_free(). */
int klog_httpd_new(const klog_httpd_config_t *cfg, klog_httpd_t **out);
void klog_httpd_free(klog_httpd_t *h);

/* The front end, for klog_conns_listen() with h as its arg. */
const klog_conn_front_t *klog_httpd_front(void);

#endif
