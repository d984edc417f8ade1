/* The ACL file of a standalone broker; see aclfile.h. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "klog/auth/aclfile.h"

#define HEADER "# klog ACLs: permission operation resource pattern name " \
	"[host=IP] principal\n"
#define WANT "want: allow|deny OPERATION RESOURCE literal|prefixed NAME " \
	"[host=IP] PRINCIPAL"
/* Larger is surely not an ACL file: refused before it is read whole. */
#define FILE_MAX (64 << 20)

struct klog_aclfile {
	char *path;             /* owned */
	int lock_fd;
	klog_acl_set_t *set;    /* owned */
};

static int
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The next blank-separated word of *p, cut off with a NUL; NULL at the
 * end of the line. */
static char *
word(char **p)
{
	char *w = *p;

	while (blank(*w))
		w++;
	if (*w == '\0')
		return NULL;
	*p = w;
	while (**p != '\0' && !blank(**p))
		(*p)++;
	if (**p != '\0')
		*(*p)++ = '\0';
	return w;
}

/* The five words before the host and the principal. */
static int
words(char **p, klog_acl_t *a, klog_err_t *err)
{
	char *w[5];
	int rc;

	for (int i = 0; i < 5; i++)
		if ((w[i] = word(p)) == NULL)
			return klog_err_set(err, -KLOG_EINVAL, WANT);
	if ((rc = klog_acl_perm_parse(w[0], &a->perm, err)) < 0 ||
	    (rc = klog_acl_op_parse(w[1], &a->op, err)) < 0 ||
	    (rc = klog_acl_res_parse(w[2], &a->res, err)) < 0 ||
	    (rc = klog_acl_pattern_parse(w[3], &a->pattern, err)) < 0)
		return rc;
	if (strlen(w[4]) > KLOG_ACL_NAME_MAX)
		return klog_err_set(err, -KLOG_EINVAL, "%s name: 1 to %d bytes",
		    klog_acl_res_name(a->res), KLOG_ACL_NAME_MAX);
	strcpy(a->name, w[4]);
	return 0;
}

/* One line, NUL-terminated and without its newline, into *a; 1 for a
 * comment or a blank line. */
static int
parse_line(char *line, klog_acl_t *a, klog_err_t *err)
{
	char *p = line, *end, *host;
	int rc;

	while (blank(*p))
		p++;
	if (*p == '\0' || *p == '#')
		return 1;
	memset(a, 0, sizeof(*a));
	if ((rc = words(&p, a, err)) < 0)
		return rc;
	while (blank(*p))
		p++;
	strcpy(a->host, KLOG_ACL_WILDCARD);
	if (strncasecmp(p, "host=", 5) == 0) {
		p += 5;
		if (*p == '\0' || blank(*p))
			return klog_err_set(err, -KLOG_EINVAL, "host= without "
			    "an address");
		host = word(&p);
		if ((rc = klog_acl_host_parse(host, a->host, err)) < 0)
			return rc;
		while (blank(*p))
			p++;
	}
	/* The principal: the rest, but for the blanks at the end. */
	for (end = p + strlen(p); end > p && blank(end[-1]); end--)
		;
	*end = '\0';
	if (*p == '\0')
		return klog_err_set(err, -KLOG_EINVAL, "no principal; " WANT);
	if (end - p > KLOG_ACL_PRINCIPAL_MAX)
		return klog_err_set(err, -KLOG_EINVAL, "principal longer than "
		    "%d bytes", KLOG_ACL_PRINCIPAL_MAX);
	strcpy(a->principal, p);
	return 0;
}

/* Line lineno of text, len bytes at line, added to s. */
static int
take_line(const char *name, size_t lineno, const char *line, size_t len,
    klog_acl_set_t *s, klog_err_t *err)
{
	char buf[KLOG_ACLFILE_LINE_MAX + 1];
	klog_acl_t a;
	klog_err_t e = { 0, "" };
	int rc;

	if (len > KLOG_ACLFILE_LINE_MAX)
		rc = klog_err_set(&e, -KLOG_EINVAL, "longer than %d bytes",
		    KLOG_ACLFILE_LINE_MAX);
	else if (memchr(line, '\0', len) != NULL)
		rc = klog_err_set(&e, -KLOG_EINVAL, "a NUL byte");
	else {
		memcpy(buf, line, len);
		buf[len] = '\0';
		if ((rc = parse_line(buf, &a, &e)) == 0 &&
		    (rc = klog_acl_add(s, &a, &e)) == -KLOG_EEXIST)
			rc = 0;   /* a line repeated: the same ACL */
	}
	if (rc == -KLOG_ENOMEM)
		return klog_err_set(err, rc, "out of memory");
	if (rc < 0)
		return klog_err_set(err, -KLOG_ECORRUPT, "%s:%zu: %s", name,
		    lineno, e.msg);
	return 0;
}

int
klog_aclfile_parse(const char *name, const char *text, size_t len,
    klog_acl_set_t *s, klog_err_t *err)
{
	const char *p = text, *end = text + len, *nl;
	size_t lineno = 0;
	int rc;

	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if ((rc = take_line(name, ++lineno, p, (size_t)(nl - p), s,
		    err)) < 0)
			return rc;
		p = nl + 1;
	}
	return 0;
}

/* Kafka's upper-case name in lower case, as the file writes it. */
static void
put_lower(klog_buf_t *out, const char *s)
{
	for (; *s != '\0'; s++) {
		char c = (char)tolower((unsigned char)*s);

		klog_buf_put(out, &c, 1);
	}
	klog_buf_put(out, " ", 1);
}

void
klog_aclfile_line(const klog_acl_t *a, klog_buf_t *out)
{
	put_lower(out, klog_acl_perm_name(a->perm));
	put_lower(out, klog_acl_op_name(a->op));
	put_lower(out, klog_acl_res_name(a->res));
	put_lower(out, klog_acl_pattern_name(a->pattern));
	klog_buf_put(out, a->name, strlen(a->name));
	klog_buf_put(out, " ", 1);
	if (strcmp(a->host, KLOG_ACL_WILDCARD) != 0) {
		klog_buf_put(out, "host=", 5);
		klog_buf_put(out, a->host, strlen(a->host));
		klog_buf_put(out, " ", 1);
	}
	klog_buf_put(out, a->principal, strlen(a->principal));
}

void
klog_aclfile_format(const klog_acl_set_t *s, klog_buf_t *out)
{
	klog_buf_put(out, HEADER, strlen(HEADER));
	for (size_t i = 0; i < klog_acl_count(s); i++) {
		klog_aclfile_line(klog_acl_get(s, i), out);
		klog_buf_put(out, "\n", 1);
	}
}

/* All of fd into *text (owned by the caller, freed in every case). */
static int
read_all(int fd, const char *path, klog_buf_t *text, klog_err_t *err)
{
	ssize_t n;

	for (;;) {
		if (klog_buf_reserve(text, 65536) < 0)
			return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		n = read(fd, text->data + text->len, text->cap - text->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return klog_err_sys(err, "read", path);
		if (n == 0)
			return 0;
		text->len += (size_t)n;
		if (text->len > FILE_MAX)
			return klog_err_set(err, -KLOG_ETOOBIG, "%s: larger "
			    "than %d MiB: not an ACL file", path,
			    FILE_MAX >> 20);
	}
}

int
klog_aclfile_load(const char *path, klog_acl_set_t *s, klog_err_t *err)
{
	klog_buf_t text;
	struct stat st;
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return klog_err_sys(err, NULL, path);
	klog_buf_init(&text);
	if (fstat(fd, &st) < 0)
		rc = klog_err_sys(err, "fstat", path);
	else if (!S_ISREG(st.st_mode))
		rc = klog_err_set(err, -KLOG_EINVAL, "%s: not a regular file",
		    path);
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		rc = klog_err_set(err, -KLOG_EINVAL, "%s: writable by group "
		    "or others (mode %04o): chmod go-w it", path,
		    (unsigned)(st.st_mode & 07777));
	else if ((rc = read_all(fd, path, &text, err)) == 0)
		rc = klog_aclfile_parse(path, (const char *)text.data,
		    text.len, s, err);
	klog_buf_free(&text);
	close(fd);
	return rc;
}

/* ---- an edit ---- */

/* path + suffix, in a new string. */
static char *
beside(const char *path, const char *suffix)
{
	size_t n = strlen(path) + strlen(suffix) + 1;
	char *s = malloc(n);

	if (s != NULL)
		snprintf(s, n, "%s%s", path, suffix);
	return s;
}

static int
lock(klog_aclfile_t *f, klog_err_t *err)
{
	char *name = beside(f->path, ".lock");
	int rc = 0;

	if (name == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	f->lock_fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (f->lock_fd < 0)
		rc = klog_err_sys(err, NULL, name);
	while (rc == 0 && flock(f->lock_fd, LOCK_EX) < 0)
		if (errno != EINTR)
			rc = klog_err_sys(err, "flock", name);
	free(name);
	return rc;
}

int
klog_aclfile_open(const char *path, int create, klog_aclfile_t **fp,
    klog_acl_set_t **set, klog_err_t *err)
{
	klog_aclfile_t *f;
	struct stat st;
	int rc;

	*fp = NULL;
	*set = NULL;
	/* Not even the lock file for an edit that cannot start. */
	if (!create && stat(path, &st) < 0)
		return klog_err_sys(err, NULL, path);
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	f->lock_fd = -1;
	if ((f->path = strdup(path)) == NULL ||
	    klog_acl_set_new(&f->set) < 0) {
		klog_aclfile_close(f);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	*fp = f;
	*set = f->set;
	if ((rc = lock(f, err)) < 0)
		return rc;
	rc = klog_aclfile_load(path, f->set, err);
	if (rc == -KLOG_ENOENT && create)
		rc = 0;
	return rc;
}

static int
fsync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd = -1, rc = -1;

	if (copy != NULL &&
	    (fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
		rc = fsync(fd);
	if (fd >= 0)
		close(fd);
	free(copy);
	return rc;
}

static int
write_all(int fd, const uint8_t *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
klog_aclfile_save(klog_aclfile_t *f, klog_err_t *err)
{
	char *tmp = beside(f->path, ".tmp");
	klog_buf_t text;
	int fd = -1, rc = 0;

	klog_buf_init(&text);
	klog_aclfile_format(f->set, &text);
	if (tmp == NULL || text.failed) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto out;
	}
	/* Made 0600 whatever the umask, and whatever a stale FILE.tmp was. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0 || fchmod(fd, 0600) < 0 ||
	    write_all(fd, text.data, text.len) < 0 || fsync(fd) < 0) {
		rc = klog_err_sys(err, NULL, tmp);
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		rc = klog_err_sys(err, NULL, tmp);
		goto out;
	}
	fd = -1;
	if (rename(tmp, f->path) < 0 || fsync_dir(f->path) < 0)
		rc = klog_err_sys(err, NULL, f->path);
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0 && tmp != NULL)
		unlink(tmp);
	free(tmp);
	klog_buf_free(&text);
	return rc;
}

void
klog_aclfile_close(klog_aclfile_t *f)
{
	if (f == NULL)
		return;
	if (f->lock_fd >= 0)
		close(f->lock_fd);   /* lets the flock go */
	klog_acl_set_free(f->set);
	free(f->path);
	free(f);
}
