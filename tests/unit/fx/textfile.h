/*
 * Small text files for unit tests: written whole, read back whole.
 * Header-only, like tmpdir.h.
 */
#ifndef KLOG_TEST_TEXTFILE_H
#define KLOG_TEST_TEXTFILE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

/* path made to hold text and nothing else. */
static inline void
textfile_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* path's text (its first 8 KiB), in a buffer that the next call
 * overwrites. */
static inline char *
textfile_read(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

#endif
