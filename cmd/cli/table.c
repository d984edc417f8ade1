/* Rows on stdout, TSV or NDJSON; see table.h. */
#include <stdio.h>
#include <string.h>

#include "cli/table.h"
#include "klog/base/json.h"

void
cli_table_init(cli_table_t *t, int header, int json)
{
	t->header = header;
	t->json = json;
	klog_buf_init(&t->line);
}

void
cli_table_free(cli_table_t *t)
{
	klog_buf_free(&t->line);
}

void
cli_table_header(const cli_table_t *t, const cli_col_t *c, size_t n)
{
	if (!t->header || t->json)
		return;
	for (size_t i = 0; i < n; i++)
		printf("%s%c", c[i].name, i + 1 < n ? '\t' : '\n');
}

static void
put_ids(cli_table_t *t, const int32_t *ids, int n)
{
	char num[16];

	if (t->json)
		klog_buf_put(&t->line, "[", 1);
	for (int i = 0; i < n; i++) {
		snprintf(num, sizeof(num), "%s%d", i > 0 ? "," : "",
		    (int)ids[i]);
		klog_buf_put(&t->line, num, strlen(num));
	}
	if (t->json)
		klog_buf_put(&t->line, "]", 1);
}

static void
put_value(cli_table_t *t, const cli_col_t *c)
{
	klog_buf_t *b = &t->line;
	char num[24];

	if (!c->known) {
		klog_buf_put(b, t->json ? "null" : "-", t->json ? 4 : 1);
	} else if (c->ids != NULL) {
		put_ids(t, c->ids, c->nids);
	} else if (c->str != NULL) {
		if (t->json)
			klog_json_put_string(b, c->str, strlen(c->str));
		else
			klog_buf_put(b, c->str, strlen(c->str));
	} else {
		snprintf(num, sizeof(num), "%lld", (long long)c->num);
		klog_buf_put(b, num, strlen(num));
	}
}

void
cli_table_row(cli_table_t *t, const cli_col_t *c, size_t n)
{
	klog_buf_t *b = &t->line;

	klog_buf_reset(b);
	if (t->json)
		klog_buf_put(b, "{", 1);
	for (size_t i = 0; i < n; i++) {
		if (t->json) {
			if (i > 0)
				klog_buf_put(b, ",", 1);
			klog_json_put_string(b, c[i].key, strlen(c[i].key));
			klog_buf_put(b, ":", 1);
		} else if (i > 0) {
			klog_buf_put(b, "\t", 1);
		}
		put_value(t, &c[i]);
	}
	klog_buf_put(b, t->json ? "}\n" : "\n", t->json ? 2 : 1);
	if (!b->failed)
		fwrite(b->data, 1, b->len, stdout);
}

cli_col_t
cli_col_str(const char *name, const char *key, const char *s)
{
	cli_col_t c = { .name = name, .key = key, .str = s,
	    .known = s != NULL };

	return c;
}

cli_col_t
cli_col_num(const char *name, const char *key, int64_t v, int known)
{
	cli_col_t c = { .name = name, .key = key, .num = v, .known = known };

	return c;
}

cli_col_t
cli_col_ids(const char *name, const char *key, const int32_t *ids, int n)
{
	cli_col_t c = { .name = name, .key = key, .known = 1, .ids = ids,
	    .nids = n };

	return c;
}
