/*
 * Rows of a tool's report on stdout: tab-separated with a header line (for
 * awk; -H leaves the header out), or one JSON object per line (-J).  Each
 * cell is a column's name (the TSV header, upper case), its JSON key and a
 * value: a string, a number, a list of broker ids (1,2,3 / [1,2,3]), or
 * unknown (- / null).  A row is built whole in t->line and written with
 * one fwrite; a failed allocation sticks in t->line.failed, for the main to
 * check once at the end (the row is then not written).
 */
#ifndef KLOG_CLI_TABLE_H
#define KLOG_CLI_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "klog/base/buf.h"

typedef struct cli_col {
	const char *name;   /* header (TSV, upper case) */
	const char *key;    /* JSON key */
	const char *str;    /* a string value, or NULL */
	int64_t num;        /* a number, if str is NULL and known */
	int known;          /* 0: shown as - / null */
	const int32_t *ids; /* a list of broker ids, if not NULL and known:
	                       1,2,3 / [1,2,3] */
	int nids;
} cli_col_t;

typedef struct cli_table {
	int header;         /* TSV: a header line before the rows */
	int json;           /* NDJSON instead of TSV */
	klog_buf_t line;    /* the row being written */
} cli_table_t;

void cli_table_init(cli_table_t *t, int header, int json);
void cli_table_free(cli_table_t *t);

/* The header line of columns c[0..n) (their names), if TSV wants one. */
void cli_table_header(const cli_table_t *t, const cli_col_t *c, size_t n);
/* One row of n cells. */
void cli_table_row(cli_table_t *t, const cli_col_t *c, size_t n);

/* A cell: a string (NULL: unknown), a number (known or not), broker ids. */
cli_col_t cli_col_str(const char *name, const char *key, const char *s);
cli_col_t cli_col_num(const char *name, const char *key, int64_t v,
    int known);
cli_col_t cli_col_ids(const char *name, const char *key, const int32_t *ids,
    int n);

#endif
