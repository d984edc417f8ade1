#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/json.h"
#include "klog/base/parse.h"
#include "klog/client/input.h"
#include "klog/storage/format.h"

#define MIN_BUFFER (4u << 20)
#define MAX_MEMBERS 32

int
klog_input_init(klog_input_t *in, const void *delim, size_t dlen,
    size_t max_record)
{
	memset(in, 0, sizeof(*in));
	if (dlen == 0 || dlen > KLOG_INPUT_DELIM_MAX ||
	    max_record > SIZE_MAX / 2 - (1u << 20))
		return -KLOG_EINVAL;
	memcpy(in->delim, delim, dlen);
	in->dlen = dlen;
	in->max_record = max_record;
	/* A longest record and its delimiter must fit with room to read. */
	in->cap = max_record + dlen + (1u << 20);
	if (in->cap < MIN_BUFFER)
		in->cap = MIN_BUFFER;
	if ((in->buf = malloc(in->cap)) == NULL)
		return -KLOG_ENOMEM;
	return 0;
}

void
klog_input_free(klog_input_t *in)
{
	free(in->buf);
	in->buf = NULL;
}

/* Move the unconsumed bytes to the front once the tail runs short. */
static void
compact(klog_input_t *in)
{
	size_t n = in->end - in->start;

	if (in->start == 0 || in->cap - in->end >= in->cap / 4)
		return;
	memmove(in->buf, in->buf + in->start, n);
	in->scan -= in->start;
	in->start = 0;
	in->end = n;
}

int
klog_input_fill(klog_input_t *in, int fd, klog_err_t *err)
{
	ssize_t n;

	compact(in);
	if (in->end == in->cap)
		return klog_err_set(err, -KLOG_ETOOBIG, "record too long");
	do
		n = read(fd, in->buf + in->end, in->cap - in->end);
	while (n < 0 && errno == EINTR);
	/* A non-blocking stdin with nothing after all: try again later. */
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 1;
	if (n < 0)
		return klog_err_sys(err, "read", NULL);
	if (n == 0) {
		in->eof = 1;
		return 0;
	}
	in->end += (size_t)n;
	return 1;
}

int
klog_input_feed(klog_input_t *in, const void *p, size_t n)
{
	compact(in);
	if (n > in->cap - in->end)
		return -KLOG_ETOOBIG;
	memcpy(in->buf + in->end, p, n);
	in->end += n;
	return 0;
}

void
klog_input_set_eof(klog_input_t *in)
{
	in->eof = 1;
}

static int
take(klog_input_t *in, size_t len, size_t skip, const uint8_t **rec,
    size_t *outlen)
{
	if (len > in->max_record)
		return -KLOG_ETOOBIG;
	*rec = in->buf + in->start;
	*outlen = len;
	in->unterminated = skip == 0;
	in->start += len + skip;
	in->scan = in->start;
	return 1;
}

/* The next delimiter at or after the resume point, or NULL. */
static const uint8_t *
find_delim(const klog_input_t *in)
{
	size_t from = in->scan > in->start ? in->scan : in->start;

	if (in->dlen == 1)
		return memchr(in->buf + from, in->delim[0], in->end - from);
	return memmem(in->buf + from, in->end - from, in->delim, in->dlen);
}

/*
 * Drop what is buffered of a record too long to keep, except the last
 * dlen-1 bytes, which may be the start of its delimiter.
 */
static void
discard(klog_input_t *in)
{
	size_t pending = in->end - in->start;
	size_t keep = pending < in->dlen - 1 ? pending : in->dlen - 1;

	in->start = in->scan = in->end - keep;
}

int
klog_input_next(klog_input_t *in, const uint8_t **rec, size_t *len)
{
	const uint8_t *hit;
	size_t pending, keep;
	int rc;

	/* The rest of a record already reported too long: drop up to its
	 * delimiter, then go on with the record after it. */
	while (in->skipping) {
		if ((hit = find_delim(in)) != NULL) {
			in->start = in->scan = (size_t)(hit - in->buf) +
			    in->dlen;
			in->skipping = 0;
		} else if (in->eof) {
			in->start = in->scan = in->end;
			in->skipping = 0;
		} else {
			discard(in);
			return 0;
		}
	}
	pending = in->end - in->start;
	if ((hit = find_delim(in)) != NULL) {
		if ((rc = take(in, (size_t)(hit - (in->buf + in->start)),
		    in->dlen, rec, len)) < 0)
			in->start = in->scan = (size_t)(hit - in->buf) +
			    in->dlen;
		return rc;
	}
	if (in->eof) {
		if (pending == 0)
			return 0;
		if ((rc = take(in, pending, 0, rec, len)) < 0)
			in->start = in->scan = in->end;
		return rc;
	}
	/* Even a delimiter arriving next would end a record too long. */
	if (pending >= in->max_record + in->dlen) {
		in->skipping = 1;
		discard(in);
		return -KLOG_ETOOBIG;
	}
	/* The last dlen-1 bytes may be the start of a delimiter. */
	keep = pending < in->dlen - 1 ? pending : in->dlen - 1;
	in->scan = in->end - keep;
	return 0;
}

/* ---- the -J envelope ---- */

static const klog_json_member_t *
member(const klog_json_member_t *m, size_t n, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < n; i++)
		if (m[i].key_len == klen && memcmp(m[i].key, key, klen) == 0)
			return &m[i];
	return NULL;
}

static int
blank(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
			return 0;
	return 1;
}

/*
 * Of a member name and its twin name_base64 of m[0..n): the one there, a
 * JSON string, appended to out as bytes.  1 if one was, 0 if neither is
 * there or (null_ok) name is null.
 */
static int
take_bytes(const klog_json_member_t *m, size_t n, const char *name,
    int null_ok, klog_buf_t *out, klog_err_t *err)
{
	const klog_json_member_t *text, *b64, *v;
	char b64name[32];
	size_t got, len;
	const char *s;

	snprintf(b64name, sizeof(b64name), "%s_base64", name);
	text = member(m, n, name);
	b64 = member(m, n, b64name);
	if (text != NULL && b64 != NULL)
		return klog_err_set(err, -KLOG_EINVAL, "both %s and %s", name,
		    b64name);
	if ((v = text ? text : b64) == NULL ||
	    (null_ok && v == text && v->type == KLOG_JSON_NULL))
		return 0;
	if (v->type != KLOG_JSON_STRING)
		return klog_err_set(err, -KLOG_EINVAL, "%s: not a string",
		    v == text ? name : b64name);
	if (v == text) {
		if (klog_json_unescape(out, v->raw, v->raw_len) < 0)
			return klog_err_set(err, -KLOG_EINVAL, "%s: bad string",
			    name);
		return 1;
	}
	s = v->raw + 1;
	len = v->raw_len - 2;
	if (memchr(s, '\\', len) != NULL || klog_buf_reserve(out, len / 4 * 3 +
	    3) < 0 || klog_base64_decode(s, len, out->data + out->len, &got) <
	    0)
		return klog_err_set(err, -KLOG_EINVAL, "%s: invalid base64",
		    b64name);
	out->len += got;
	return 1;
}

/* Member v as an integer in [min, max]. */
static int
int_value(const klog_json_member_t *v, const char *key, int64_t min,
    int64_t max, int64_t *out, klog_err_t *err)
{
	const char *why;
	char num[24];

	if (v->type != KLOG_JSON_NUMBER || v->raw_len >= sizeof(num))
		return klog_err_set(err, -KLOG_EINVAL, "%s: not a number", key);
	memcpy(num, v->raw, v->raw_len);
	num[v->raw_len] = '\0';
	if (klog_parse_i64(num, min, max, out, &why) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "%s %s: %s", key, num,
		    why);
	return 0;
}

/* Member key of m as an integer in [min, max]. */
static int
int_member(const klog_json_member_t *m, size_t n, const char *key,
    int64_t min, int64_t max, int64_t *out, klog_err_t *err)
{
	const klog_json_member_t *v = member(m, n, key);

	if (v == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "no %s", key);
	return int_value(v, key, min, max, out, err);
}

static int
check_size(const klog_json_member_t *m, size_t have, klog_err_t *err)
{
	int64_t size;
	int rc;

	if ((rc = int_value(m, "size", 0, INT64_MAX, &size, err)) < 0)
		return rc;
	if ((uint64_t)size != have)
		return klog_err_set(err, -KLOG_EINVAL,
		    "size %.*s does not match the payload's %zu bytes",
		    (int)m->raw_len, m->raw, have);
	return 0;
}

/* The source position of an envelope (see klog_input_envelope). */
static int
source(const klog_json_member_t *m, size_t n, klog_input_source_t *src,
    klog_err_t *err)
{
	const klog_json_member_t *t = member(m, n, "topic");
	klog_buf_t name;
	int64_t v;
	int rc;

	if (t == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "no topic");
	klog_buf_init(&name);
	rc = t->type == KLOG_JSON_STRING && klog_json_unescape(&name, t->raw,
	    t->raw_len) == 0 ? 0 : -1;
	if (rc == 0)
		klog_buf_put(&name, "", 1);
	if (rc == 0 && (name.failed || klog_topic_validate((const char *)
	    name.data, NULL) < 0))
		rc = -1;
	if (rc == 0)
		snprintf(src->topic, sizeof(src->topic), "%s", name.data);
	klog_buf_free(&name);
	if (rc < 0)
		return klog_err_set(err, -KLOG_EINVAL, "topic: not a topic name");
	if ((rc = int_member(m, n, "partition", 0, INT32_MAX, &v, err)) < 0)
		return rc;
	src->partition = (int32_t)v;
	src->offset = -1;
	/* A record inside a batch or wrapper has its own offset as its next
	 * one: a mirror tells it by that (mirror.h). */
	if (member(m, n, "offset") != NULL && (rc = int_member(m, n, "offset",
	    0, INT64_MAX, &src->offset, err)) < 0)
		return rc;
	return int_member(m, n, "next_offset", 0, INT64_MAX,
	    &src->next_offset, err);
}

void
klog_input_record_init(klog_input_record_t *rec)
{
	memset(rec, 0, sizeof(*rec));
	klog_buf_init(&rec->payload);
	klog_buf_init(&rec->key);
	klog_buf_init(&rec->hbytes);
	rec->timestamp = KLOG_NO_TIMESTAMP;
}

void
klog_input_record_free(klog_input_record_t *rec)
{
	klog_buf_free(&rec->payload);
	klog_buf_free(&rec->key);
	klog_buf_free(&rec->hbytes);
	free(rec->hdrs);
	klog_input_record_init(rec);
}

/*
 * What one envelope's parse collects: the scalar members, and the headers
 * decoded into rec->hbytes as they are met, each a name (a 4-byte length,
 * the bytes) and a value (a 4-byte length, -1 for null, the bytes), made
 * into rec->hdrs once hbytes stops moving.
 */
struct env {
	klog_json_member_t m[MAX_MEMBERS];
	size_t n;
	int headers;                /* the member was met */
	klog_input_record_t *rec;
	klog_err_t *err;
	int failed;                 /* err says why */
};

static void
put_len(klog_buf_t *b, int32_t n)
{
	uint8_t be[4];

	klog_put_be32(be, (uint32_t)n);
	klog_buf_put(b, be, sizeof(be));
}

/* A header's name or value appended to hbytes with its length (-1: a
 * null value). */
static int
header_part(struct env *e, const klog_json_member_t *m, size_t n,
    const char *name, int null_ok)
{
	klog_buf_t *b = &e->rec->hbytes;
	size_t at = b->len;
	int rc;

	put_len(b, -1);
	if ((rc = take_bytes(m, n, name, null_ok, b, e->err)) < 0)
		return rc;
	if (rc == 0 && member(m, n, name) == NULL)
		return klog_err_set(e->err, -KLOG_EINVAL, "no %s or %s_base64",
		    name, name);
	if (rc == 1 && b->len - at - 4 > INT32_MAX)
		return klog_err_set(e->err, -KLOG_EINVAL, "%s: too long", name);
	if (rc == 1 && !b->failed)
		klog_put_be32(b->data + at, (uint32_t)(b->len - at - 4));
	return b->failed ? klog_err_set(e->err, -KLOG_ENOMEM,
	    "out of memory") : 0;
}

/* A scalar member, kept in e's next slot: 1, or -KLOG_EINVAL. */
static int
add_member(klog_json_rd_t *r, struct env *e, const char *key, size_t key_len)
{
	klog_json_member_t *m;

	if (e->n == MAX_MEMBERS)
		return -KLOG_EINVAL;
	m = &e->m[e->n];
	m->key = key;
	m->key_len = key_len;
	if (klog_json_rd_scalar(r, m) < 0)
		return -KLOG_EINVAL;
	e->n++;
	return 1;
}

static int
header_member(klog_json_rd_t *r, int field, const char *key, size_t key_len,
    void *ctx)
{
	(void)field;
	/* A header has four members at most; the rest is the scratch's. */
	return add_member(r, ctx, key, key_len);
}

/* One element of "headers": an object, decoded into hbytes. */
static int
header_elem(klog_json_rd_t *r, void *ctx)
{
	struct env *e = ctx;
	size_t top = e->n;
	int rc;

	if (klog_json_rd_object(r, NULL, 0, header_member, e) < 0)
		return -KLOG_EINVAL;
	e->failed = 1;
	if (e->rec->header_count == INT32_MAX)
		return klog_err_set(e->err, -KLOG_EINVAL, "too many headers");
	if ((rc = header_part(e, e->m + top, e->n - top, "key", 0)) < 0 ||
	    (rc = header_part(e, e->m + top, e->n - top, "value", 1)) < 0)
		return rc;
	e->failed = 0;
	e->rec->header_count++;
	e->n = top;
	return 0;
}

/* A header's fault told as the headers'. */
static void
headers_said(klog_err_t *err)
{
	char why[sizeof(err->msg)];

	snprintf(why, sizeof(why), "%s", err->msg);
	snprintf(err->msg, sizeof(err->msg), "headers: %.*s",
	    (int)sizeof(err->msg) - 16, why);
}

static int
env_member(klog_json_rd_t *r, int field, const char *key, size_t key_len,
    void *ctx)
{
	struct env *e = ctx;
	int rc;

	(void)field;
	if (key_len == 7 && memcmp(key, "headers", 7) == 0 &&
	    klog_json_rd_peek(r) == '[') {
		if (e->headers++) {
			e->failed = 1;
			return klog_err_set(e->err, -KLOG_EINVAL,
			    "headers twice");
		}
		if ((rc = klog_json_rd_array(r, header_elem, e)) < 0 &&
		    e->failed)
			headers_said(e->err);
		return rc < 0 ? rc : 1;
	}
	return add_member(r, e, key, key_len);
}

/* hbytes's headers as rec->hdrs, pointing into it. */
static int
point_headers(klog_input_record_t *rec)
{
	const uint8_t *p = rec->hbytes.data;
	klog_header_t *h;
	int32_t vlen;

	if (rec->header_count > rec->hdrs_cap) {
		if ((h = realloc(rec->hdrs, rec->header_count * sizeof(*h))) ==
		    NULL)
			return -KLOG_ENOMEM;
		rec->hdrs = h;
		rec->hdrs_cap = rec->header_count;
	}
	for (uint32_t i = 0; i < rec->header_count; i++) {
		h = &rec->hdrs[i];
		h->key_len = klog_be32(p);
		h->key = p + 4;
		p += 4 + h->key_len;
		vlen = (int32_t)klog_be32(p);
		h->value = vlen < 0 ? NULL : p + 4;
		h->value_len = vlen;
		p += 4 + (vlen < 0 ? 0 : (size_t)vlen);
	}
	return 0;
}

static void
record_reset(klog_input_record_t *rec)
{
	klog_buf_reset(&rec->payload);
	klog_buf_reset(&rec->key);
	klog_buf_reset(&rec->hbytes);
	rec->null_payload = 0;
	rec->has_key = 0;
	rec->timestamp = KLOG_NO_TIMESTAMP;
	rec->header_count = 0;
}

/* The members but the headers and the source, into rec. */
static int
envelope_fields(const struct env *e, klog_input_record_t *rec,
    klog_err_t *err)
{
	const klog_json_member_t *m = e->m, *v;
	size_t n = e->n;
	int rc;

	if ((rc = take_bytes(m, n, "payload", 1, &rec->payload, err)) < 0)
		return rc;
	if (rc == 0 && (v = member(m, n, "payload")) == NULL)
		return klog_err_set(err, -KLOG_EINVAL,
		    "no payload or payload_base64");
	rec->null_payload = rc == 0;
	if ((rc = take_bytes(m, n, "key", 1, &rec->key, err)) < 0)
		return rc;
	rec->has_key = rc;
	if ((v = member(m, n, "timestamp")) != NULL &&
	    v->type != KLOG_JSON_NULL &&
	    (rc = int_value(v, "timestamp", INT64_MIN, INT64_MAX,
	    &rec->timestamp, err)) < 0)
		return rc;
	if (rec->payload.failed || rec->key.failed)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if ((v = member(m, n, "size")) != NULL &&
	    (rc = check_size(v, rec->payload.len, err)) < 0)
		return rc;
	return 0;
}

int
klog_input_envelope(const uint8_t *line, size_t len,
    klog_input_record_t *rec, klog_input_source_t *src, klog_err_t *err)
{
	struct env e = { .rec = rec, .err = err };
	klog_json_rd_t r;
	int rc;

	record_reset(rec);
	if (blank(line, len))
		return 0;
	klog_json_rd_init(&r, (const char *)line, len, "envelope", NULL);
	if (klog_json_rd_object(&r, NULL, 0, env_member, &e) < 0 ||
	    klog_json_rd_end(&r) < 0)
		return e.failed ? -KLOG_EINVAL : klog_err_set(err,
		    -KLOG_EINVAL, "not a JSON object of scalars and headers");
	if ((rc = envelope_fields(&e, rec, err)) < 0)
		return rc;
	if (point_headers(rec) < 0)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if (src != NULL && (rc = source(e.m, e.n, src, err)) < 0)
		return rc;
	return 1;
}
