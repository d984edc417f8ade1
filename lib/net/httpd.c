/* The HTTP/1.x responder of one path; see httpd.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/net/httpd.h"

struct klog_httpd {
	char *path;
	char *content_type;
	klog_httpd_render_fn *render;
	void *arg;
	klog_buf_t body;           /* reused by every answer */
};

int
klog_httpd_new(const klog_httpd_config_t *cfg, klog_httpd_t **out)
{
	klog_httpd_t *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (h == NULL)
		return -KLOG_ENOMEM;
	h->path = strdup(cfg->path);
	h->content_type = strdup(cfg->content_type);
	if (h->path == NULL || h->content_type == NULL) {
		klog_httpd_free(h);
		return -KLOG_ENOMEM;
	}
	h->render = cfg->render;
	h->arg = cfg->arg;
	klog_buf_init(&h->body);
	*out = h;
	return 0;
}

void
klog_httpd_free(klog_httpd_t *h)
{
	if (h == NULL)
		return;
	klog_buf_free(&h->body);
	free(h->path);
	free(h->content_type);
	free(h);
}

/* Where the head that starts data ends (past its blank line), or 0. */
static size_t
head_end(const uint8_t *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (data[i] != '\n')
			continue;
		if (i + 1 < len && data[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && data[i + 1] == '\r' && data[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static void
answer(klog_conn_t *c, const char *status,
    const char *type, const char *extra, const void *body, size_t len,
    int with_body)
{
	klog_buf_t *out = klog_outq_buf(klog_conn_out(c));
	char head[512];
	int n;

	n = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\n%sConnection: close\r\n\r\n", status,
	    type, len, extra);
	klog_buf_put(out, head, (size_t)n);
	if (with_body)
		klog_buf_put(out, body, len);
	klog_conn_end(c);
}

static void
answer_text(klog_conn_t *c, const char *status, const char *extra,
    int with_body)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%s\n", status);

	answer(c, status, "text/plain; charset=utf-8", extra, body,
	    (size_t)n, with_body);
}

/*
 * The request line: METHOD SP TARGET SP HTTP/1.x, at the head's start.
 * A target's query string is ignored (Prometheus may add one).
 */
static void
serve(klog_httpd_t *h, klog_conn_t *c, const char *line, size_t len)
{
	const char *sp1, *sp2, *q;
	size_t mlen, tlen, plen = strlen(h->path);
	int get, rc;

	if ((sp1 = memchr(line, ' ', len)) == NULL ||
	    (sp2 = memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - line))) ==
	    NULL || (size_t)(line + len - (sp2 + 1)) < 8 ||
	    memcmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		answer_text(c, "400 Bad Request", "", 1);
		return;
	}
	mlen = (size_t)(sp1 - line);
	get = mlen == 3 && memcmp(line, "GET", 3) == 0;
	if (!get && !(mlen == 4 && memcmp(line, "HEAD", 4) == 0)) {
		answer_text(c, "405 Method Not Allowed",
		    "Allow: GET, HEAD\r\n", 1);
		return;
	}
	tlen = (size_t)(sp2 - (sp1 + 1));
	if ((q = memchr(sp1 + 1, '?', tlen)) != NULL)
		tlen = (size_t)(q - (sp1 + 1));
	if (tlen != plen || memcmp(sp1 + 1, h->path, plen) != 0) {
		answer_text(c, "404 Not Found", "", get);
		return;
	}
	klog_buf_reset(&h->body);
	rc = h->render(h->arg, &h->body);
	if (rc < 0 || h->body.failed) {
		h->body.failed = 0;
		answer_text(c, "500 Internal Server Error", "", get);
		return;
	}
	answer(c, "200 OK", h->content_type, "", h->body.data, h->body.len,
	    get);
}

static size_t
process(void *arg, klog_conn_t *c, const uint8_t *data, size_t len)
{
	klog_httpd_t *h = arg;
	size_t end = head_end(data, len < KLOG_HTTPD_HEAD_MAX ? len :
	    KLOG_HTTPD_HEAD_MAX);
	const uint8_t *nl;

	if (klog_conn_stalled(c))
		return len;
	if (end == 0) {
		if (len < KLOG_HTTPD_HEAD_MAX)
			return 0;      /* not all there yet: the deadline runs */
		answer_text(c, "431 Request Header Fields Too Large", "", 1);
		return len;
	}
	nl = memchr(data, '\n', end);
	serve(h, c, (const char *)data, (size_t)(nl - data) -
	    (nl > data && nl[-1] == '\r'));
	/* Whatever follows (a body, a pipelined request) is not read. */
	return len;
}

/* Never asked: process() takes or refuses every head before a
 * connection's leftovers grow past what conn.c keeps in its shared
 * buffer. */
static size_t
frame_size(void *arg, const uint8_t *data, size_t len)
{
	(void)arg;
	(void)data;
	return len;
}

const klog_conn_front_t *
klog_httpd_front(void)
{
	static const klog_conn_front_t front = { process, frame_size,
	    KLOG_HTTPD_DEADLINE_MS };

	return &front;
}
