/* A standalone broker's SCRAM users file; see users.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "klog/auth/users.h"

/* The longest line taken: a name, a mechanism, a credential and blanks
 * fit in well under half of it. */
#define LINE_MAX_BYTES 1024

struct entry {
	char name[KLOG_SCRAM_NAME_MAX + 1];
	klog_scram_cred_t cred;
	size_t line;             /* where it was read, for a duplicate */
};

struct klog_users {
	struct entry *v;
	size_t n, cap;
};

int
klog_users_new(klog_users_t **out, klog_err_t *err)
{
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	return 0;
}

void
klog_users_free(klog_users_t *u)
{
	if (u == NULL)
		return;
	if (u->v != NULL)
		OPENSSL_cleanse(u->v, u->cap * sizeof(*u->v));
	free(u->v);
	free(u);
}

int
klog_users_name_check(const char *name, klog_err_t *err)
{
	int rc = klog_scram_name_check(name, strlen(name), err);

	if (rc == 0 && name[0] == '#')
		rc = klog_err_set(err, -KLOG_EINVAL, "a '#' first");
	return rc;
}

static int
cmp_key(const char *name, klog_scram_mech_t m, const struct entry *e)
{
	int c = strcmp(name, e->name);

	return c != 0 ? c : (m > e->cred.mech) - (m < e->cred.mech);
}

static int
cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a;

	return cmp_key(x->name, x->cred.mech, b);
}

/* Where (name, m) is, or would go: its index; *found says which. */
static size_t
find(const klog_users_t *u, const char *name, klog_scram_mech_t m,
    int *found)
{
	size_t lo = 0, hi = u->n;
	int c;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((c = cmp_key(name, m, &u->v[mid])) == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Room for one more entry at the end. */
static int
grow(klog_users_t *u, klog_err_t *err)
{
	struct entry *v;
	size_t cap;

	if (u->n < u->cap)
		return 0;
	cap = u->cap ? u->cap * 2 : 16;
	/* Not realloc: the old array holds keys, and is wiped first. */
	if ((v = calloc(cap, sizeof(*v))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if (u->n > 0)
		memcpy(v, u->v, u->n * sizeof(*v));
	if (u->v != NULL)
		OPENSSL_cleanse(u->v, u->cap * sizeof(*u->v));
	free(u->v);
	u->v = v;
	u->cap = cap;
	return 0;
}

int
klog_users_set(klog_users_t *u, const char *name,
    const klog_scram_cred_t *cred, klog_err_t *err)
{
	size_t i;
	int found, rc;

	if ((rc = klog_users_name_check(name, err)) < 0)
		return rc;
	i = find(u, name, cred->mech, &found);
	if (!found) {
		if ((rc = grow(u, err)) < 0)
			return rc;
		memmove(&u->v[i + 1], &u->v[i], (u->n - i) * sizeof(*u->v));
		u->n++;
		memset(&u->v[i], 0, sizeof(u->v[i]));
		strcpy(u->v[i].name, name);
	}
	u->v[i].cred = *cred;
	u->v[i].line = 0;
	return 0;
}

int
klog_users_remove(klog_users_t *u, const char *name, unsigned mechs,
    klog_err_t *err)
{
	size_t i;
	int found, gone = 0;

	for (int m = KLOG_SCRAM_MECHS - 1; m >= 0; m--) {
		if (!(mechs & 1u << m))
			continue;
		i = find(u, name, (klog_scram_mech_t)m, &found);
		if (!found)
			continue;
		OPENSSL_cleanse(&u->v[i], sizeof(u->v[i]));
		memmove(&u->v[i], &u->v[i + 1], (u->n - i - 1) *
		    sizeof(*u->v));
		u->n--;
		gone++;
	}
	if (gone == 0)
		return klog_err_set(err, -KLOG_ENOENT, mechs == KLOG_USERS_ALL ?
		    "user \"%s\": no such user" : "user \"%s\": no such "
		    "credential", name);
	return gone;
}

size_t
klog_users_count(const klog_users_t *u)
{
	return u->n;
}

void
klog_users_get(const klog_users_t *u, size_t i, klog_users_entry_t *e)
{
	e->name = u->v[i].name;
	e->mech = u->v[i].cred.mech;
	e->iterations = u->v[i].cred.iterations;
}

int
klog_users_lookup(void *users, const char *name, klog_scram_mech_t m,
    klog_scram_cred_t *out)
{
	const klog_users_t *u = users;
	int found;
	size_t i = find(u, name, m, &found);

	if (!found)
		return -KLOG_ENOENT;
	*out = u->v[i].cred;
	return 0;
}

/* ---- the file ---- */

/* One line (NUL-terminated, without its newline) into u, or why not in
 * err; a blank or '#' line adds nothing. */
static int
parse_line(klog_users_t *u, char *line, size_t lineno, klog_err_t *err)
{
	static const char blanks[] = " \t";
	char *save = NULL, *name, *mech, *cred;
	klog_scram_mech_t m;
	struct entry *e;
	klog_err_t why;
	int rc;

	if (strchr(line, '\r') != NULL)
		return klog_err_set(err, -KLOG_EINVAL, "a carriage return (a "
		    "DOS line end?)");
	name = line + strspn(line, blanks);
	if (*name == '\0' || *name == '#')
		return 0;
	name = strtok_r(line, blanks, &save);
	mech = strtok_r(NULL, blanks, &save);
	cred = strtok_r(NULL, blanks, &save);
	if (cred == NULL || strtok_r(NULL, blanks, &save) != NULL)
		return klog_err_set(err, -KLOG_EINVAL, "want NAME MECHANISM "
		    "CREDENTIAL");
	if (klog_users_name_check(name, &why) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "user name: %s",
		    why.msg);
	if (klog_scram_mech_parse(mech, &m) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "a mechanism other than "
		    "SCRAM-SHA-256 and SCRAM-SHA-512");
	if ((rc = grow(u, err)) < 0)
		return rc;
	e = &u->v[u->n];
	if (klog_scram_cred_parse(m, cred, &e->cred, &why) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "%s credential: %s",
		    mech, why.msg);
	strcpy(e->name, name);
	e->line = lineno;
	u->n++;
	return 0;
}

/* Sorted, a user's mechanism once. */
static int
check_twice(klog_users_t *u, const char *path, klog_err_t *err)
{
	if (u->n > 1)
		qsort(u->v, u->n, sizeof(*u->v), cmp_entry);
	for (size_t i = 1; i < u->n; i++) {
		const struct entry *a = &u->v[i - 1], *b = &u->v[i];

		if (cmp_entry(a, b) == 0)
			return klog_err_set(err, -KLOG_ECORRUPT, "%s:%zu: "
			    "%s %s again (first on line %zu)", path,
			    a->line > b->line ? a->line : b->line, a->name,
			    klog_scram_mech_name(a->cred.mech),
			    a->line < b->line ? a->line : b->line);
	}
	return 0;
}

/* The lines of fp into u. */
static int
read_lines(klog_users_t *u, FILE *fp, const char *path, klog_err_t *err)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	klog_err_t why;
	int rc = 0;

	while (rc == 0 && (n = getline(&line, &cap, fp)) >= 0) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n > LINE_MAX_BYTES)
			rc = klog_err_set(err, -KLOG_ECORRUPT, "%s:%zu: over "
			    "%d bytes", path, lineno, LINE_MAX_BYTES);
		else if (strlen(line) != (size_t)n)
			rc = klog_err_set(err, -KLOG_ECORRUPT, "%s:%zu: a NUL "
			    "byte", path, lineno);
		else if (parse_line(u, line, lineno, &why) < 0)
			rc = klog_err_set(err, why.code == -KLOG_ENOMEM ?
			    -KLOG_ENOMEM : -KLOG_ECORRUPT, "%s:%zu: %s", path,
			    lineno, why.msg);
	}
	if (line != NULL)
		OPENSSL_cleanse(line, cap);
	free(line);
	if (rc == 0 && ferror(fp))
		rc = klog_err_set(err, -KLOG_EIO, "%s: read error", path);
	return rc < 0 ? rc : check_twice(u, path, err);
}

int
klog_users_load(const char *path, klog_users_t **out, klog_err_t *err)
{
	klog_users_t *u = NULL;
	struct stat st;
	FILE *fp;
	int fd, rc;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return klog_err_sys(err, NULL, path);
	if (fstat(fd, &st) < 0) {
		rc = klog_err_sys(err, "fstat", path);
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & S_IRWXO)) {
		close(fd);
		if (!S_ISREG(st.st_mode))
			return klog_err_set(err, -KLOG_EINVAL, "%s: not a "
			    "regular file", path);
		return klog_err_set(err, -KLOG_EINVAL, "%s: others may read "
		    "or write it (mode %04o): it holds secrets; chmod o-rwx "
		    "it", path, (unsigned)(st.st_mode & 07777));
	}
	if ((fp = fdopen(fd, "r")) == NULL) {
		rc = klog_err_sys(err, "fdopen", path);
		close(fd);
		return rc;
	}
	if ((rc = klog_users_new(&u, err)) == 0)
		rc = read_lines(u, fp, path, err);
	fclose(fp);
	if (rc < 0) {
		klog_users_free(u);
		return rc;
	}
	*out = u;
	return 0;
}

/* "DIR/.BASE.XXXXXX" beside path, for mkostemp(). */
static int
tmp_name(const char *path, char *tmp, size_t size)
{
	char d[PATH_MAX], b[PATH_MAX];
	int n;

	if (strlen(path) >= sizeof(d))
		return -1;
	strcpy(d, path);
	strcpy(b, path);
	n = snprintf(tmp, size, "%s/.%s.XXXXXX", dirname(d), basename(b));
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* The old file's mode (but others') and owner for the new one, so that a
 * broker running as another user still reads what root wrote. */
static int
keep_owner(int fd, const char *path, klog_err_t *err)
{
	struct stat old, now;

	if (stat(path, &old) < 0)
		return errno == ENOENT ? 0 : klog_err_sys(err, "stat", path);
	if (fchmod(fd, old.st_mode & 0660) < 0 || fstat(fd, &now) < 0)
		return klog_err_sys(err, "fchmod", path);
	if ((now.st_uid != old.st_uid || now.st_gid != old.st_gid) &&
	    fchown(fd, old.st_uid, old.st_gid) < 0)
		return klog_err_set(err, klog_errno_code(errno), "%s: cannot "
		    "keep its owner (%u:%u): %s", path, (unsigned)old.st_uid,
		    (unsigned)old.st_gid, strerror(errno));
	return 0;
}

static int
write_lines(const klog_users_t *u, FILE *fp)
{
	char cred[KLOG_SCRAM_CRED_TEXT_MAX];
	int ok = fprintf(fp, "# klog users: NAME MECHANISM CREDENTIAL "
	    "(klog-group users); a secret\n") > 0;

	for (size_t i = 0; ok && i < u->n; i++)
		ok = klog_scram_cred_format(&u->v[i].cred, cred,
		    sizeof(cred)) == 0 && fprintf(fp, "%s %s %s\n",
		    u->v[i].name, klog_scram_mech_name(u->v[i].cred.mech),
		    cred) > 0;
	OPENSSL_cleanse(cred, sizeof(cred));
	return ok && fflush(fp) == 0 && !ferror(fp) &&
	    fsync(fileno(fp)) == 0 ? 0 : -1;
}

static int
sync_dir(const char *path)
{
	char d[PATH_MAX];
	int fd, rc;

	strcpy(d, path);
	if ((fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int
klog_users_save(const klog_users_t *u, const char *path, klog_err_t *err)
{
	char tmp[PATH_MAX + 16];
	FILE *fp = NULL;
	int fd, rc = 0;

	if (tmp_name(path, tmp, sizeof(tmp)) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "%s: path too long",
		    path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		return klog_err_sys(err, "create", tmp);
	if ((rc = keep_owner(fd, path, err)) == 0 &&
	    (fp = fdopen(fd, "w")) == NULL)
		rc = klog_err_sys(err, "fdopen", tmp);
	if (rc == 0 && write_lines(u, fp) < 0)
		rc = klog_err_sys(err, "write", tmp);
	if (fp == NULL)
		close(fd);
	else if (fclose(fp) != 0 && rc == 0)
		rc = klog_err_sys(err, "close", tmp);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = klog_err_sys(err, "rename", tmp);
	if (rc < 0) {
		unlink(tmp);
		return rc;
	}
	if (sync_dir(path) < 0)
		return klog_err_sys(err, "fsync the directory of", path);
	return 0;
}

int
klog_users_lock(const char *path, int *fd, klog_err_t *err)
{
	char d[PATH_MAX];
	int rc;

	if (strlen(path) >= sizeof(d))
		return klog_err_set(err, -KLOG_EINVAL, "%s: path too long",
		    path);
	strcpy(d, path);
	if ((*fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return klog_err_sys(err, "open the directory of", path);
	while (flock(*fd, LOCK_EX) < 0) {
		if (errno == EINTR)
			continue;
		rc = klog_err_sys(err, "lock the directory of", path);
		close(*fd);
		*fd = -1;
		return rc;
	}
	return 0;
}

void
klog_users_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}
