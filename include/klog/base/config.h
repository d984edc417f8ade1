/*
 * Configuration files: one "key = value" setting per line, as klog-serve -c
 * reads them (klog-serve(1), CONFIGURATION FILE).
 *
 *   # klog.conf
 *   data-dir = /var/lib/klog
 *   topic = events:8
 *
 * Lines end at '\n' (a '\r' before it is dropped).  Blank lines and lines
 * whose first non-blank byte is '#' are skipped.  A setting splits at its
 * first '='; the blanks (spaces, tabs, carriage returns) around the key and
 * the value are not part of them.  Only the syntax is checked here: which keys exist and
 * what their values mean is the caller's, through a callback.
 */
#ifndef KLOG_CONFIG_H
#define KLOG_CONFIG_H

#include <stddef.h>

#include "klog/base/error.h"

#define KLOG_CONFIG_LINE_MAX 4096        /* bytes, without the newline */
#define KLOG_CONFIG_FILE_MAX (1 << 20)   /* bytes klog_config_read() takes */

/*
 * One setting: line is 1-based; key and value are non-empty, NUL-terminated
 * and valid during the call only.  Return 0 to go on, or a negative code
 * (with err set, e.g. "FILE:3: unknown key \"x\"") to stop the parse, which
 * then returns it.
 */
typedef int klog_config_fn(void *arg, int line, const char *key,
    const char *value, klog_err_t *err);

/*
 * Call fn for every setting of text[0..len).  name (the file's path) starts
 * each error message.  -KLOG_EINVAL with err, at the first bad line:
 *   "NAME:LINE: expected \"key = value\""   (no '=', or an empty key)
 *   "NAME:LINE: KEY: no value"
 *   "NAME:LINE: NUL byte"
 *   "NAME:LINE: longer than 4096 bytes"
 * or what fn returned.
 */
int klog_config_parse(const char *name, const char *text, size_t len,
    klog_config_fn *fn, void *arg, klog_err_t *err);

/*
 * Read the file at path and parse it as above.  A file that cannot be read
 * is the errno's code with err "PATH: strerror"; one over
 * KLOG_CONFIG_FILE_MAX bytes is -KLOG_ETOOBIG.
 */
int klog_config_read(const char *path, klog_config_fn *fn, void *arg,
    klog_err_t *err);

#endif
