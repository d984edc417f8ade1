/*
 * "key = value" configuration files (config.h).  Each line is copied into a
 * bounded buffer so that key and value can be handed out NUL-terminated;
 * nothing is allocated but the file's bytes in klog_config_read().
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/config.h"
#include "klog/base/error.h"

static int
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* s[0..*n) without blanks at either end; returns the new start. */
static char *
trim(char *s, size_t *n)
{
	while (*n > 0 && blank(*s)) {
		s++;
		(*n)--;
	}
	while (*n > 0 && blank(s[*n - 1]))
		(*n)--;
	s[*n] = '\0';
	return s;
}

/* One line, without its newline, copied into buf (KLOG_CONFIG_LINE_MAX + 1
 * bytes). */
static int
parse_line(const char *name, int lineno, const char *p, size_t n, char *buf,
    klog_config_fn *fn, void *arg, klog_err_t *err)
{
	char *eq, *key, *value;
	size_t klen, vlen;

	if (n > 0 && p[n - 1] == '\r')
		n--;
	if (n > KLOG_CONFIG_LINE_MAX)
		return klog_err_set(err, -KLOG_EINVAL,
		    "%s:%d: longer than %d bytes", name, lineno,
		    KLOG_CONFIG_LINE_MAX);
	if (memchr(p, '\0', n) != NULL)
		return klog_err_set(err, -KLOG_EINVAL, "%s:%d: NUL byte", name,
		    lineno);
	memcpy(buf, p, n);
	buf[n] = '\0';
	key = trim(buf, &n);
	if (n == 0 || key[0] == '#')
		return 0;
	if ((eq = memchr(key, '=', n)) == NULL || eq == key)
		return klog_err_set(err, -KLOG_EINVAL,
		    "%s:%d: expected \"key = value\"", name, lineno);
	vlen = n - (size_t)(eq - key) - 1;
	value = trim(eq + 1, &vlen);
	klen = (size_t)(eq - key);
	key = trim(key, &klen);
	if (klen == 0)
		return klog_err_set(err, -KLOG_EINVAL,
		    "%s:%d: expected \"key = value\"", name, lineno);
	if (vlen == 0)
		return klog_err_set(err, -KLOG_EINVAL, "%s:%d: %s: no value",
		    name, lineno, key);
	return fn(arg, lineno, key, value, err);
}

int
klog_config_parse(const char *name, const char *text, size_t len,
    klog_config_fn *fn, void *arg, klog_err_t *err)
{
	char buf[KLOG_CONFIG_LINE_MAX + 1];
	const char *p = text, *end, *nl;
	int lineno = 0, rc;

	if (len == 0)
		return 0;  /* text may be NULL */
	end = text + len;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		lineno++;
		rc = parse_line(name, lineno, p, (size_t)(nl - p), buf, fn, arg,
		    err);
		if (rc < 0)
			return rc;
		p = nl + 1;
	}
	return 0;
}

int
klog_config_read(const char *path, klog_config_fn *fn, void *arg,
    klog_err_t *err)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	ssize_t n;
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return klog_err_sys(err, NULL, path);
	if (fstat(fd, &st) < 0) {
		rc = klog_err_sys(err, NULL, path);
		goto out;
	}
	if (st.st_size > KLOG_CONFIG_FILE_MAX) {
		rc = klog_err_set(err, -KLOG_ETOOBIG, "%s: larger than %d bytes",
		    path, KLOG_CONFIG_FILE_MAX);
		goto out;
	}
	/* One byte more than the limit tells a file that grew meanwhile, or
	 * one whose size stat cannot give (a pipe). */
	if ((text = malloc(KLOG_CONFIG_FILE_MAX + 1)) == NULL) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	while (len <= KLOG_CONFIG_FILE_MAX) {
		n = read(fd, text + len, KLOG_CONFIG_FILE_MAX + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = klog_err_sys(err, NULL, path);
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > KLOG_CONFIG_FILE_MAX)
		rc = klog_err_set(err, -KLOG_ETOOBIG, "%s: larger than %d bytes",
		    path, KLOG_CONFIG_FILE_MAX);
	else
		rc = klog_config_parse(path, text, len, fn, arg, err);
out:
	free(text);
	close(fd);
	return rc;
}
