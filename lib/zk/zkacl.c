/* klog's ZooKeeper digest identity and its nodes' ACLs; see zkacl.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "klog/zk/zkacl.h"

int
klog_zkacl_auth_check(const char *cred, klog_err_t *err)
{
	const char *colon = strchr(cred, ':');
	size_t n = strlen(cred);

	if (n > KLOG_ZKACL_AUTH_MAX)
		return klog_err_set(err, -KLOG_EINVAL, "longer than %d bytes",
		    KLOG_ZKACL_AUTH_MAX);
	for (const char *p = cred; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return klog_err_set(err, -KLOG_EINVAL, "a control byte "
			    "(want one line user:password)");
	if (colon == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "no ':' (want "
		    "user:password)");
	if (colon == cred)
		return klog_err_set(err, -KLOG_EINVAL, "an empty user (want "
		    "user:password)");
	if (colon[1] == '\0')
		return klog_err_set(err, -KLOG_EINVAL, "an empty password "
		    "(want user:password)");
	return 0;
}

/* Up to size - 1 bytes of fd into buf, NUL-terminated; *n the count. */
static int
read_all(int fd, char *buf, size_t size, size_t *n, const char *path,
    klog_err_t *err)
{
	ssize_t r;

	*n = 0;
	while (*n < size - 1) {
		r = read(fd, buf + *n, size - 1 - *n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return klog_err_sys(err, "read", path);
		if (r == 0)
			break;
		*n += (size_t)r;
	}
	buf[*n] = '\0';
	return 0;
}

static int
load_fd(int fd, const char *path, char *buf, size_t size, klog_err_t *err)
{
	/* One byte more than the longest credential and its newline tells
	 * a file too long from one that fits. */
	char raw[KLOG_ZKACL_AUTH_MAX + 3];
	klog_err_t why = { 0 };
	struct stat st;
	size_t n;
	int rc;

	if (fstat(fd, &st) < 0)
		return klog_err_sys(err, "fstat", path);
	if (!S_ISREG(st.st_mode))
		return klog_err_set(err, -KLOG_EINVAL, "%s: not a regular file",
		    path);
	if (st.st_mode & S_IRWXO)
		return klog_err_set(err, -KLOG_EINVAL, "%s: others may read "
		    "or write it (mode %04o): it holds a secret; chmod o-rwx "
		    "it", path, (unsigned)(st.st_mode & 07777));
	if ((rc = read_all(fd, raw, sizeof(raw), &n, path, err)) < 0)
		goto out;
	if (memchr(raw, '\0', n) != NULL) {
		rc = klog_err_set(err, -KLOG_EINVAL, "%s: a NUL byte", path);
		goto out;
	}
	if (n > 0 && raw[n - 1] == '\n')
		raw[--n] = '\0';
	if ((rc = klog_zkacl_auth_check(raw, &why)) < 0) {
		rc = klog_err_set(err, rc, "%s: %s", path, why.msg);
		goto out;
	}
	if (n + 1 > size) {
		rc = klog_err_set(err, -KLOG_EINVAL, "%s: no room for it",
		    path);
		goto out;
	}
	memcpy(buf, raw, n + 1);
out:
	explicit_bzero(raw, sizeof(raw));
	return rc;
}

int
klog_zkacl_auth_load(const char *path, char *buf, size_t size,
    klog_err_t *err)
{
	int fd, rc;

	if (size > 0)
		buf[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return klog_err_sys(err, NULL, path);
	rc = load_fd(fd, path, buf, size, err);
	close(fd);
	if (rc < 0)
		explicit_bzero(buf, size);
	return rc;
}

/* Whether path is root or under it, by whole components. */
static int
under(const char *path, const char *root)
{
	size_t n = strlen(root);

	return strncmp(path, root, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/');
}

int
klog_zkacl_for(const char *path, int secure)
{
	if (!secure || under(path, KLOG_ZKACL_CONSUMERS))
		return KLOG_ZKACL_OPEN;
	if (under(path, KLOG_ZKACL_USERS))
		return KLOG_ZKACL_CREATOR_ONLY;
	return KLOG_ZKACL_CREATOR_READ;
}
