#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/json.h"
#include "klog/client/outfmt.h"
#include "klog/storage/format.h"

enum op_type {
	OP_LIT,
	OP_PAYLOAD,
	OP_SIZE,
	OP_RSIZE,
	OP_OFFSET,
	OP_NEXT,
	OP_PARTITION,
	OP_TOPIC,
	OP_KEY,
	OP_KEYLEN,
	OP_TIMESTAMP,
	OP_HEADERS,
};

struct op {
	enum op_type type;
	size_t lit_off;   /* OP_LIT: a run of lit[] */
	size_t lit_len;
};

struct klog_outfmt {
	int json;
	struct op *ops;
	size_t nops;
	uint8_t *lit;     /* every literal run, back to back */
	/* The most a record renders to is lit_total + npayload payloads +
	 * ntopic topics + nkey keys + nheaders headers' bytes (their
	 * rendering is never longer: each header's two length varints take
	 * at least its '=' and ',') + nnum numbers (20 bytes at most each):
	 * reserved once per record, then written in place. */
	size_t lit_total, npayload, ntopic, nkey, nheaders, nnum;
	int delim;        /* the format is a payload and this byte (the
	                     default '%s\n', -D), else -1 */
};

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A character as it may be quoted in a message: itself or \xNN. */
static const char *
show(int c, char buf[8])
{
	if (isprint(c))
		snprintf(buf, 8, "%c", c);
	else
		snprintf(buf, 8, "\\x%02x", (unsigned)(unsigned char)c);
	return buf;
}

/* Decode the escape at s[*i] (a backslash) into *byte, moving *i past it. */
static int
unescape_one(const char *s, size_t *i, uint8_t *byte, klog_err_t *err)
{
	char c = s[*i + 1], shown[8];
	int hi, lo;

	switch (c) {
	case 'n': *byte = '\n'; break;
	case 'r': *byte = '\r'; break;
	case 't': *byte = '\t'; break;
	case '\\': *byte = '\\'; break;
	case '0': *byte = '\0'; break;
	case 'x':
		if ((hi = hexval((unsigned char)s[*i + 2])) < 0 ||
		    (lo = hexval((unsigned char)s[*i + 3])) < 0)
			return klog_err_set(err, -KLOG_EINVAL,
			    "\\x: needs two hex digits");
		*byte = (uint8_t)(hi << 4 | lo);
		*i += 4;
		return 0;
	case '\0':
		return klog_err_set(err, -KLOG_EINVAL,
		    "ends with a lone '\\'");
	default:
		return klog_err_set(err, -KLOG_EINVAL, "\\%s: unknown escape",
		    show((unsigned char)c, shown));
	}
	*i += 2;
	return 0;
}

int
klog_outfmt_unescape(const char *s, klog_buf_t *out, klog_err_t *err)
{
	size_t i = 0;
	uint8_t byte;
	int rc;

	while (s[i] != '\0') {
		if (s[i] != '\\') {
			klog_buf_put(out, &s[i++], 1);
			continue;
		}
		if ((rc = unescape_one(s, &i, &byte, err)) < 0)
			return rc;
		klog_buf_put(out, &byte, 1);
	}
	return out->failed ? -KLOG_ENOMEM : 0;
}

static int
token_type(char c, enum op_type *type, klog_err_t *err)
{
	char shown[8];

	switch (c) {
	case 's': *type = OP_PAYLOAD; return 0;
	case 'S': *type = OP_SIZE; return 0;
	case 'R': *type = OP_RSIZE; return 0;
	case 'o': *type = OP_OFFSET; return 0;
	case 'O': *type = OP_NEXT; return 0;
	case 'p': *type = OP_PARTITION; return 0;
	case 't': *type = OP_TOPIC; return 0;
	case 'k': *type = OP_KEY; return 0;
	case 'K': *type = OP_KEYLEN; return 0;
	case 'T': *type = OP_TIMESTAMP; return 0;
	case 'h': *type = OP_HEADERS; return 0;
	case '\0':
		return klog_err_set(err, -KLOG_EINVAL,
		    "ends with a lone '%%'");
	default:
		return klog_err_set(err, -KLOG_EINVAL,
		    "%%%s: unknown format token", show((unsigned char)c, shown));
	}
}

/* Append an op; a literal run extends the previous literal op. */
static int
add_op(klog_buf_t *ops, enum op_type type, size_t lit_off)
{
	struct op *last = ops->len ? (struct op *)(ops->data + ops->len -
	    sizeof(struct op)) : NULL;
	struct op op = { type, lit_off, 1 };

	if (type == OP_LIT && last != NULL && last->type == OP_LIT) {
		last->lit_len++;
		return 0;
	}
	if (type != OP_LIT)
		op.lit_len = 0;
	klog_buf_put(ops, &op, sizeof(op));
	return ops->failed ? -KLOG_ENOMEM : 0;
}

int
klog_outfmt_compile(const char *fmt, klog_outfmt_t **out, klog_err_t *err)
{
	klog_buf_t ops, lit;
	klog_outfmt_t *f = NULL;
	enum op_type type = OP_LIT;  /* set by token_type(); gcc -O2 cannot tell */
	uint8_t byte;
	size_t i = 0;
	int rc = 0;

	klog_buf_init(&ops);
	klog_buf_init(&lit);
	while (rc == 0 && fmt[i] != '\0') {
		if (fmt[i] == '%' && fmt[i + 1] == '%') {
			byte = '%';
			i += 2;
		} else if (fmt[i] == '%') {
			if ((rc = token_type(fmt[i + 1], &type, err)) == 0)
				rc = add_op(&ops, type, 0);
			i += 2;
			continue;
		} else if (fmt[i] == '\\') {
			if ((rc = unescape_one(fmt, &i, &byte, err)) < 0)
				break;
		} else {
			byte = (uint8_t)fmt[i++];
		}
		if ((rc = add_op(&ops, OP_LIT, lit.len)) == 0)
			klog_buf_put(&lit, &byte, 1);
	}
	if (rc == 0 && (lit.failed || (f = calloc(1, sizeof(*f))) == NULL))
		rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if (rc < 0)
		goto out;
	f->ops = (struct op *)ops.data;
	f->nops = ops.len / sizeof(struct op);
	f->lit = lit.data;
	f->lit_total = lit.len;
	f->delim = f->nops == 2 && f->ops[0].type == OP_PAYLOAD &&
	    f->ops[1].type == OP_LIT && f->ops[1].lit_len == 1 ?
	    f->lit[f->ops[1].lit_off] : -1;
	for (size_t k = 0; k < f->nops; k++) {
		if (f->ops[k].type == OP_PAYLOAD)
			f->npayload++;
		else if (f->ops[k].type == OP_TOPIC)
			f->ntopic++;
		else if (f->ops[k].type == OP_KEY)
			f->nkey++;
		else if (f->ops[k].type == OP_HEADERS)
			f->nheaders++;
		else if (f->ops[k].type != OP_LIT)
			f->nnum++;
	}
	*out = f;
	return 0;
out:
	klog_buf_free(&ops);
	klog_buf_free(&lit);
	return rc;
}

int
klog_outfmt_delimited(const char *delim, klog_outfmt_t **out,
    klog_err_t *err)
{
	klog_buf_t fmt;
	int rc;

	klog_buf_init(&fmt);
	klog_buf_put(&fmt, "%s", 2);
	for (const char *p = delim; *p != '\0'; p++)
		klog_buf_put(&fmt, *p == '%' ? "%%" : p, *p == '%' ? 2 : 1);
	klog_buf_put(&fmt, "", 1);
	if (fmt.failed)
		rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	else
		rc = klog_outfmt_compile((const char *)fmt.data, out, err);
	klog_buf_free(&fmt);
	return rc;
}

int
klog_outfmt_json(klog_outfmt_t **out)
{
	klog_outfmt_t *f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -KLOG_ENOMEM;
	f->json = 1;
	*out = f;
	return 0;
}

void
klog_outfmt_free(klog_outfmt_t *f)
{
	if (f == NULL)
		return;
	free(f->ops);
	free(f->lit);
	free(f);
}

/* Decimal digits of v, written backwards from end; returns the start. */
static char *
fmt_i64(int64_t v, char *end)
{
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	char *p = end;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	return p;
}

static void
put_i64(klog_buf_t *out, int64_t v)
{
	char buf[24], *end = buf + sizeof(buf);
	char *p = fmt_i64(v, end);

	klog_buf_put(out, p, (size_t)(end - p));
}

static void
put_lit(klog_buf_t *out, const char *s)
{
	klog_buf_put(out, s, strlen(s));
}

/* Bytes as a JSON member: "name":"text" when valid UTF-8, else
 * "name_base64":"...". */
static void
put_bytes(klog_buf_t *out, const char *name, const void *p, size_t n)
{
	put_lit(out, "\"");
	put_lit(out, name);
	if (klog_utf8_valid(p, n)) {
		put_lit(out, "\":");
		klog_json_put_string(out, p, n);
		return;
	}
	put_lit(out, "_base64\":\"");
	klog_base64_put(out, p, n);
	put_lit(out, "\"");
}

static void
put_headers(klog_buf_t *out, const klog_outfmt_rec_t *r)
{
	klog_header_t h;
	size_t pos = 0;
	int first = 1;

	put_lit(out, ",\"headers\":[");
	while (klog_record_header_next(r->headers, r->headers_len, &pos, &h)) {
		put_lit(out, first ? "{" : ",{");
		first = 0;
		put_bytes(out, "key", h.key, h.key_len);
		put_lit(out, ",");
		if (h.value == NULL)
			put_lit(out, "\"value\":null");
		else
			put_bytes(out, "value", h.value, (size_t)h.value_len);
		put_lit(out, "}");
	}
	put_lit(out, "]");
}

static void
render_json(const klog_outfmt_rec_t *r, klog_buf_t *out)
{
	put_lit(out, "{\"topic\":");
	klog_json_put_string(out, r->topic, r->topic_len);
	put_lit(out, ",\"partition\":");
	put_i64(out, r->partition);
	put_lit(out, ",\"offset\":");
	put_i64(out, r->offset);
	put_lit(out, ",\"next_offset\":");
	put_i64(out, r->next_offset);
	put_lit(out, ",\"size\":");
	put_i64(out, (int64_t)r->payload_len);
	if (r->key != NULL) {
		put_lit(out, ",");
		put_bytes(out, "key", r->key, (size_t)r->key_len);
	}
	if (r->timestamp != KLOG_NO_TIMESTAMP) {
		put_lit(out, ",\"timestamp\":");
		put_i64(out, r->timestamp);
	}
	if (r->header_count > 0)
		put_headers(out, r);
	put_lit(out, ",");
	if (r->payload == NULL)
		put_lit(out, "\"payload\":null");
	else
		put_bytes(out, "payload", r->payload, r->payload_len);
	put_lit(out, "}\n");
}

/* n may be 0 with p NULL (a null key or value). */
static uint8_t *
copy(uint8_t *w, const void *p, size_t n)
{
	if (n > 0)
		memcpy(w, p, n);
	return w + n;
}

static uint8_t *
copy_i64(uint8_t *w, int64_t v)
{
	char buf[24], *end = buf + sizeof(buf);
	char *p = fmt_i64(v, end);

	return copy(w, p, (size_t)(end - p));
}

/* %h: name=value,... as kcat prints headers. */
static uint8_t *
copy_headers(uint8_t *w, const klog_outfmt_rec_t *r)
{
	klog_header_t h;
	size_t pos = 0;
	int first = 1;

	if (r->header_count == 0)
		return w;
	while (klog_record_header_next(r->headers, r->headers_len, &pos, &h)) {
		if (!first)
			*w++ = ',';
		first = 0;
		w = copy(w, h.key, h.key_len);
		*w++ = '=';
		if (h.value != NULL)
			w = copy(w, h.value, (size_t)h.value_len);
	}
	return w;
}

/* Per record, so one reservation and no bounds checked per piece: the
 * pieces through klog_buf_put() were a third of klog-consume's
 * instructions. */
void
klog_outfmt_render(const klog_outfmt_t *f, const klog_outfmt_rec_t *r,
    klog_buf_t *out)
{
	const struct op *op;
	size_t need;
	uint8_t *w;

	if (f->json) {
		render_json(r, out);
		return;
	}
	/* The default format without the walk over its pieces: a sixth of
	 * klog-consume's instructions a record (callgrind). */
	if (f->delim >= 0) {
		if (r->payload_len + 1 > out->cap - out->len &&
		    klog_buf_reserve(out, r->payload_len + 1) < 0)
			return;
		w = copy(out->data + out->len, r->payload, r->payload_len);
		*w = (uint8_t)f->delim;
		out->len += r->payload_len + 1;
		return;
	}
	need = f->lit_total + f->npayload * r->payload_len +
	    f->ntopic * r->topic_len + f->nnum * 20 +
	    (r->key != NULL ? f->nkey * (size_t)r->key_len : 0) +
	    f->nheaders * r->headers_len;
	/* Nothing to write (an empty payload alone): out may have no
	 * memory yet. */
	if (need == 0 || (need > out->cap - out->len &&
	    klog_buf_reserve(out, need) < 0))
		return;
	w = out->data + out->len;
	for (size_t i = 0; i < f->nops; i++) {
		op = &f->ops[i];
		switch (op->type) {
		case OP_LIT:
			/* Mostly a lone delimiter: no call for it. */
			if (op->lit_len == 1)
				*w++ = f->lit[op->lit_off];
			else
				w = copy(w, f->lit + op->lit_off, op->lit_len);
			break;
		case OP_PAYLOAD:
			w = copy(w, r->payload, r->payload_len);
			break;
		case OP_SIZE:
			w = copy_i64(w, r->payload == NULL ? -1 :
			    (int64_t)r->payload_len);
			break;
		case OP_RSIZE:
			klog_put_be32(w, r->payload == NULL ? UINT32_MAX :
			    (uint32_t)r->payload_len);
			w += 4;
			break;
		case OP_OFFSET:
			w = copy_i64(w, r->offset);
			break;
		case OP_NEXT:
			w = copy_i64(w, r->next_offset);
			break;
		case OP_PARTITION:
			w = copy_i64(w, r->partition);
			break;
		case OP_TOPIC:
			w = copy(w, r->topic, r->topic_len);
			break;
		case OP_KEY:
			if (r->key != NULL)
				w = copy(w, r->key, (size_t)r->key_len);
			break;
		case OP_KEYLEN:
			w = copy_i64(w, r->key != NULL ? r->key_len : -1);
			break;
		case OP_TIMESTAMP:
			w = copy_i64(w, r->timestamp);
			break;
		case OP_HEADERS:
			w = copy_headers(w, r);
			break;
		}
	}
	out->len = (size_t)(w - out->data);
}
