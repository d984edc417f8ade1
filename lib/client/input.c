#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/json.h"
#include "klog/base/parse.h"
#include "klog/client/input.h"

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

static int
decode_base64(const klog_json_member_t *m, klog_buf_t *out, klog_err_t *err)
{
	const char *s = m->raw + 1;
	size_t n = m->raw_len - 2, got;

	if (memchr(s, '\\', n) != NULL || klog_buf_reserve(out, n / 4 * 3 + 3)
	    < 0 || klog_base64_decode(s, n, out->data, &got) < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "payload_base64: invalid base64");
	out->len = got;
	return 0;
}

static int
check_size(const klog_json_member_t *m, size_t have, klog_err_t *err)
{
	char num[24];
	const char *why;
	int64_t size;

	if (m->type != KLOG_JSON_NUMBER || m->raw_len >= sizeof(num))
		return klog_err_set(err, -KLOG_EINVAL, "size: not a number");
	memcpy(num, m->raw, m->raw_len);
	num[m->raw_len] = '\0';
	if (klog_parse_i64(num, 0, INT64_MAX, &size, &why) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "size %s: %s", num, why);
	if ((uint64_t)size != have)
		return klog_err_set(err, -KLOG_EINVAL,
		    "size %s does not match the payload's %zu bytes", num,
		    have);
	return 0;
}

/* Member key of m as an integer in [min, max]. */
static int
int_member(const klog_json_member_t *m, size_t n, const char *key,
    int64_t min, int64_t max, int64_t *out, klog_err_t *err)
{
	const klog_json_member_t *v = member(m, n, key);
	const char *why;
	char num[24];

	if (v == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "no %s", key);
	if (v->type != KLOG_JSON_NUMBER || v->raw_len >= sizeof(num))
		return klog_err_set(err, -KLOG_EINVAL, "%s: not a number", key);
	memcpy(num, v->raw, v->raw_len);
	num[v->raw_len] = '\0';
	if (klog_parse_i64(num, min, max, out, &why) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "%s %s: %s", key, num,
		    why);
	return 0;
}

/* The source position of an envelope (see klog_input_envelope_source). */
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
	return int_member(m, n, "next_offset", 0, INT64_MAX,
	    &src->next_offset, err);
}

int
klog_input_envelope(const uint8_t *line, size_t len, klog_buf_t *payload,
    klog_err_t *err)
{
	return klog_input_envelope_source(line, len, payload, NULL, err);
}

int
klog_input_envelope_source(const uint8_t *line, size_t len,
    klog_buf_t *payload, klog_input_source_t *src, klog_err_t *err)
{
	klog_json_member_t m[MAX_MEMBERS];
	const klog_json_member_t *text, *b64, *size;
	size_t n;
	int rc;

	klog_buf_reset(payload);
	if (blank(line, len))
		return 0;
	if (klog_json_parse_flat((const char *)line, len, m, MAX_MEMBERS, &n)
	    < 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "not a flat JSON object");
	text = member(m, n, "payload");
	b64 = member(m, n, "payload_base64");
	if ((text == NULL) == (b64 == NULL))
		return klog_err_set(err, -KLOG_EINVAL, text ?
		    "both payload and payload_base64" :
		    "no payload or payload_base64");
	if ((text ? text : b64)->type != KLOG_JSON_STRING)
		return klog_err_set(err, -KLOG_EINVAL, "%s: not a string",
		    text ? "payload" : "payload_base64");
	if (text != NULL && klog_json_unescape(payload, text->raw,
	    text->raw_len) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "payload: bad string");
	if (b64 != NULL && (rc = decode_base64(b64, payload, err)) < 0)
		return rc;
	if (payload->failed)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if ((size = member(m, n, "size")) != NULL &&
	    (rc = check_size(size, payload->len, err)) < 0)
		return rc;
	if (src != NULL && (rc = source(m, n, src, err)) < 0)
		return rc;
	return 1;
}
