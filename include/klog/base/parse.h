/*
 * Strict parsing of command-line and configuration values.
 *
 * Each parser rejects empty strings, trailing junk and overflow and, on
 * failure, returns -KLOG_EINVAL with *why set to a short reason in the style
 * of OpenBSD's strtonum(3): "invalid", "too small" or "too large".  Callers
 * print `-p foo: invalid`.
 */
#ifndef KLOG_PARSE_H
#define KLOG_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* A decimal integer (optional sign) in [min, max]. */
int klog_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out,
    const char **why);

/* A byte size: an integer with an optional K, M, G or T suffix (powers of
 * 1024, case-insensitive, an optional trailing B or iB), in [min, max]. */
int klog_parse_size(const char *s, int64_t min, int64_t max, int64_t *out,
    const char **why);

/* A duration in milliseconds: an integer with a unit ms, s, m, h or d; a
 * bare integer is taken in default_unit_ms (1 for ms, 1000 for seconds...). */
int klog_parse_duration_ms(const char *s, int64_t default_unit_ms, int64_t min,
    int64_t max, int64_t *out, const char **why);

/* "HOST:PORT", "[V6]:PORT", "HOST" or ":PORT"; a missing part takes the
 * default.  host and port are NUL-terminated copies. */
int klog_parse_hostport(const char *s, const char *default_host,
    const char *default_port, char *host, size_t hostlen, char *port,
    size_t portlen, const char **why);

/* A time, in ms since the epoch: "2026-11-29T10:00:00Z" (UTC; the Z may
 * be left out) or a bare number of milliseconds. */
int klog_parse_time_ms(const char *s, int64_t *out, const char **why);

/* "true/false/yes/no/on/off/1/0" */
int klog_parse_bool(const char *s, int *out, const char **why);

#endif
