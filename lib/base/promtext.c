/* The Prometheus text exposition writer; see promtext.h. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "klog/base/promtext.h"

#define MS 1000000LL

const int64_t klog_promtext_latency_bounds[] = {
	MS / 10, MS / 4, MS / 2, MS, 2 * MS + MS / 2, 5 * MS, 10 * MS,
	25 * MS, 50 * MS, 100 * MS, 250 * MS, 500 * MS, 1000 * MS,
	2500 * MS, 10000 * MS,
};
const size_t klog_promtext_latency_nbounds =
    sizeof(klog_promtext_latency_bounds) / sizeof(klog_promtext_latency_bounds[0]);

void
klog_promtext_hist_init(klog_promtext_hist_t *h, const int64_t *bounds,
    size_t nbounds)
{
	memset(h, 0, sizeof(*h));
	h->bounds = bounds;
	h->nbounds = nbounds > KLOG_PROMTEXT_BUCKETS_MAX ?
	    KLOG_PROMTEXT_BUCKETS_MAX : nbounds;
}

void
klog_promtext_hist_add(klog_promtext_hist_t *dst, const klog_promtext_hist_t *src)
{
	for (size_t i = 0; i <= dst->nbounds; i++)
		dst->counts[i] += src->counts[i];
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
}

void
klog_promtext_reqs_init(klog_promtext_reqs_t *r)
{
	memset(r->count, 0, sizeof(r->count));
	for (int i = 0; i < KLOG_PROMTEXT_APIS; i++)
		klog_promtext_hist_init(&r->time[i], klog_promtext_latency_bounds,
		    klog_promtext_latency_nbounds);
}

/* ---- labels ---- */

size_t
klog_promtext_escape(const char *value, char *out, size_t cap)
{
	size_t n = 0;

	for (const char *p = value; *p != '\0'; p++) {
		const char *rep = NULL;
		char one[2] = { *p, '\0' };

		if (*p == '\\')
			rep = "\\\\";
		else if (*p == '"')
			rep = "\\\"";
		else if (*p == '\n')
			rep = "\\n";
		else
			rep = one;
		for (const char *r = rep; *r != '\0'; r++, n++)
			if (n + 1 < cap)
				out[n] = *r;
	}
	if (cap > 0)
		out[n < cap ? n : cap - 1] = '\0';
	return n;
}

void
klog_promtext_labels_init(klog_promtext_labels_t *l)
{
	l->len = 0;
	l->text[0] = '\0';
	l->truncated = 0;
}

void
klog_promtext_label(klog_promtext_labels_t *l, const char *name,
    const char *value)
{
	size_t room = sizeof(l->text) - l->len, need;
	char *p = l->text + l->len;
	int head;

	/* name=" and the closing quote, a comma before all but the first. */
	head = snprintf(p, room, "%s%s=\"", l->len > 0 ? "," : "", name);
	if (head < 0 || (size_t)head >= room)
		goto cut;
	need = klog_promtext_escape(value, p + head, room - (size_t)head);
	if ((size_t)head + need + 1 >= room)
		goto cut;
	p[head + need] = '"';
	p[head + need + 1] = '\0';
	l->len += (size_t)head + need + 1;
	return;
cut:
	l->text[l->len] = '\0';
	l->truncated = 1;
}

void
klog_promtext_label_int(klog_promtext_labels_t *l, const char *name,
    int64_t value)
{
	char v[24];

	snprintf(v, sizeof(v), "%" PRId64, value);
	klog_promtext_label(l, name, v);
}

/* ---- lines ---- */

static void
put_cstr(klog_buf_t *out, const char *s)
{
	klog_buf_put(out, s, strlen(s));
}

void
klog_promtext_family(klog_buf_t *out, const char *name, const char *type,
    const char *help)
{
	put_cstr(out, "# HELP ");
	put_cstr(out, name);
	klog_buf_put(out, " ", 1);
	/* HELP text escapes only backslash and newline. */
	for (const char *p = help; *p != '\0'; p++) {
		if (*p == '\\')
			put_cstr(out, "\\\\");
		else if (*p == '\n')
			put_cstr(out, "\\n");
		else
			klog_buf_put(out, p, 1);
	}
	put_cstr(out, "\n# TYPE ");
	put_cstr(out, name);
	klog_buf_put(out, " ", 1);
	put_cstr(out, type);
	klog_buf_put(out, "\n", 1);
}

/* name{labels[,extra]} and a space. */
static void
put_head(klog_buf_t *out, const char *name, const char *suffix,
    const klog_promtext_labels_t *labels, const char *extra)
{
	int any = labels != NULL && labels->len > 0;

	put_cstr(out, name);
	put_cstr(out, suffix);
	if (any || extra != NULL) {
		klog_buf_put(out, "{", 1);
		if (any)
			klog_buf_put(out, labels->text, labels->len);
		if (any && extra != NULL)
			klog_buf_put(out, ",", 1);
		if (extra != NULL)
			put_cstr(out, extra);
		klog_buf_put(out, "}", 1);
	}
	klog_buf_put(out, " ", 1);
}

static void
put_i64(klog_buf_t *out, int64_t v)
{
	char s[24];
	int n = snprintf(s, sizeof(s), "%" PRId64 "\n", v);

	klog_buf_put(out, s, (size_t)n);
}

static void
put_u64(klog_buf_t *out, uint64_t v)
{
	char s[24];
	int n = snprintf(s, sizeof(s), "%" PRIu64 "\n", v);

	klog_buf_put(out, s, (size_t)n);
}

static void
put_double(klog_buf_t *out, double v)
{
	char s[40];
	int n;

	if (isnan(v))
		n = snprintf(s, sizeof(s), "NaN\n");
	else if (isinf(v))
		n = snprintf(s, sizeof(s), "%sInf\n", v < 0 ? "-" : "+");
	else
		n = snprintf(s, sizeof(s), "%.15g\n", v);
	klog_buf_put(out, s, (size_t)n);
}

void
klog_promtext_int(klog_buf_t *out, const char *name,
    const klog_promtext_labels_t *labels, int64_t value)
{
	put_head(out, name, "", labels, NULL);
	put_i64(out, value);
}

void
klog_promtext_double(klog_buf_t *out, const char *name,
    const klog_promtext_labels_t *labels, double value)
{
	put_head(out, name, "", labels, NULL);
	put_double(out, value);
}

void
klog_promtext_hist(klog_buf_t *out, const char *name,
    const klog_promtext_labels_t *labels, const klog_promtext_hist_t *h)
{
	char le[48];
	uint64_t cum = 0;

	for (size_t i = 0; i <= h->nbounds; i++) {
		cum += h->counts[i];
		if (i < h->nbounds)
			snprintf(le, sizeof(le), "le=\"%.9g\"",
			    (double)h->bounds[i] / 1e9);
		else
			snprintf(le, sizeof(le), "le=\"+Inf\"");
		put_head(out, name, "_bucket", labels, le);
		put_u64(out, cum);
	}
	put_head(out, name, "_sum", labels, NULL);
	put_double(out, (double)h->sum_ns / 1e9);
	put_head(out, name, "_count", labels, NULL);
	put_u64(out, h->count);
}

/* prefix and name, lowercased: a label value. */
static void
lower_name(char *out, size_t cap, const char *prefix, const char *name)
{
	size_t n = (size_t)snprintf(out, cap, "%s%s", prefix, name);

	for (size_t i = 0; i < n && i < cap; i++)
		if (out[i] >= 'A' && out[i] <= 'Z')
			out[i] = (char)(out[i] - 'A' + 'a');
}

void
klog_promtext_reqs_counts(klog_buf_t *out, const char *name,
    const klog_promtext_reqs_t *r, const char *prefix,
    klog_promtext_name_fn *api_name, klog_promtext_name_fn *error_name)
{
	klog_promtext_labels_t l;
	const char *an;
	char api[64], err[64];

	for (int a = 0; a < KLOG_PROMTEXT_APIS; a++) {
		if ((an = api_name(a)) == NULL)
			continue;
		lower_name(api, sizeof(api), prefix, an);
		for (int e = 0; e < KLOG_PROMTEXT_ERRORS; e++) {
			/* Errors never seen are left out, "none" never is. */
			if (r->count[a][e] == 0 && e != 0)
				continue;
			lower_name(err, sizeof(err), "", error_name(
			    e == KLOG_PROMTEXT_ERRORS - 1 ? -1 : e));
			klog_promtext_labels_init(&l);
			klog_promtext_label(&l, "api", api);
			klog_promtext_label(&l, "error", err);
			klog_promtext_int(out, name, &l,
			    (int64_t)r->count[a][e]);
		}
	}
}

void
klog_promtext_reqs_times(klog_buf_t *out, const char *name,
    const klog_promtext_reqs_t *r, const char *prefix,
    klog_promtext_name_fn *api_name)
{
	klog_promtext_labels_t l;
	const char *an;
	char api[64];

	for (int a = 0; a < KLOG_PROMTEXT_APIS; a++) {
		if ((an = api_name(a)) == NULL)
			continue;
		lower_name(api, sizeof(api), prefix, an);
		klog_promtext_labels_init(&l);
		klog_promtext_label(&l, "api", api);
		klog_promtext_hist(out, name, &l, &r->time[a]);
	}
}
