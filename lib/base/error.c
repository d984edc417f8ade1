#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "klog/base/error.h"

static const char *const messages[KLOG_E_MAX] = {
	[KLOG_OK] = "success",
	[KLOG_EINVAL] = "invalid argument",
	[KLOG_ENOMEM] = "out of memory",
	[KLOG_EIO] = "I/O error",
	[KLOG_ENOSPC] = "no space left on device",
	[KLOG_ECORRUPT] = "corrupt data",
	[KLOG_EPARTIAL] = "partial trailing entry",
	[KLOG_ERANGE] = "offset out of range",
	[KLOG_ENOTBOUNDARY] = "offset is not a message boundary",
	[KLOG_ETOPIC] = "invalid topic name",
	[KLOG_ENOTOPIC] = "unknown topic",
	[KLOG_ENOPARTITION] = "unknown partition",
	[KLOG_EUNSUPPORTED] = "unsupported",
	[KLOG_ETOOBIG] = "too large",
	[KLOG_ENOENT] = "no such file or directory",
	[KLOG_EEXIST] = "already exists",
	[KLOG_EPROTO] = "protocol error",
	[KLOG_ECONN] = "connection failed",
	[KLOG_ETIMEDOUT] = "timed out",
	[KLOG_EZK] = "ZooKeeper error",
	[KLOG_EBUSY] = "busy",
	[KLOG_EBROKER] = "broker error",
	[KLOG_ECLOSED] = "closed",
	[KLOG_ENOTLEADER] = "not the leader of that partition",
	[KLOG_ENOREPLICAS] = "not enough in-sync replicas",
	[KLOG_EFENCED] = "stale or unknown leader epoch",
	[KLOG_ESTORAGE] = "storage failed: a sync did not reach the disk",
	[KLOG_EAUTH] = "authentication failed",
	[KLOG_EDENIED] = "not authorized",
};

const char *
klog_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= KLOG_E_MAX || messages[err] == NULL)
		return "unknown error";
	return messages[err];
}

int
klog_err_set(klog_err_t *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return code;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

int
klog_errno_code(int errnum)
{
	switch (errnum) {
	case ENOMEM:
		return -KLOG_ENOMEM;
	case ENOSPC:
	case EFBIG:
	case EDQUOT:
		return -KLOG_ENOSPC;
	case ENOENT:
		return -KLOG_ENOENT;
	case EEXIST:
		return -KLOG_EEXIST;
	case EINVAL:
		return -KLOG_EINVAL;
	case ECONNREFUSED:
	case ECONNRESET:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case EPIPE:
		return -KLOG_ECONN;
	case ETIMEDOUT:
		return -KLOG_ETIMEDOUT;
	default:
		return -KLOG_EIO;
	}
}

int
klog_err_sys(klog_err_t *e, const char *what, const char *path)
{
	int errnum = errno, code = klog_errno_code(errnum);

	if (what != NULL && path != NULL)
		return klog_err_set(e, code, "%s %s: %s", what, path,
		    strerror(errnum));
	if (what != NULL || path != NULL)
		return klog_err_set(e, code, "%s: %s",
		    what != NULL ? what : path, strerror(errnum));
	return klog_err_set(e, code, "%s", strerror(errnum));
}

const char *
klog_err_text(const klog_err_t *e, int code)
{
	if (e != NULL && e->msg[0] != '\0')
		return e->msg;
	return klog_strerror(code);
}
