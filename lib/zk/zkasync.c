/*
 * Liveness and asynchronous calls of a ZooKeeper session (zkasync.h): their
 * completions run on the library's thread and only queue a REPLY event or
 * note when the server last answered, as zk.c's watchers do.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "klog/base/clock.h"
#include "klog/zk/zkasync.h"
#include "zk_impl.h"

static struct acall *
acall_new(klog_zk_t *zk, const char *path, uint64_t tag)
{
	size_t n = strlen(path) + 1;
	struct acall *a = malloc(sizeof(*a) + n);

	if (a == NULL)
		return NULL;
	a->zk = zk;
	a->tag = tag;
	a->sent_ms = klog_clock_mono_ms();
	memcpy(a->path, path, n);
	return a;
}

static void
ping_done(int rc, const struct Stat *st, const void *data)
{
	struct acall *a = (struct acall *)data;
	klog_zk_t *zk = a->zk;

	(void)st;
	pthread_mutex_lock(&zk->mu);
	zk->ping_out = 0;
	if (rc == ZOK && a->sent_ms > zk->heard_ms)
		zk->heard_ms = a->sent_ms;
	pthread_mutex_unlock(&zk->mu);
	free(a);
}

void
klog_zk_ping(klog_zk_t *zk)
{
	struct acall *a;

	if (zk_handle(zk) == NULL || (a = acall_new(zk, "/", 0)) == NULL)
		return;
	pthread_mutex_lock(&zk->mu);
	zk->pinging = 1;
	if (zk->ping_out) {
		pthread_mutex_unlock(&zk->mu);
		free(a);
		return;
	}
	zk->ping_out = 1;
	pthread_mutex_unlock(&zk->mu);
	if (zoo_aexists(zk->zh, "/", 0, ping_done, a) != ZOK) {
		pthread_mutex_lock(&zk->mu);
		zk->ping_out = 0;
		pthread_mutex_unlock(&zk->mu);
		free(a);
	}
}

int64_t
klog_zk_quiet_ms(klog_zk_t *zk)
{
	int64_t heard;

	pthread_mutex_lock(&zk->mu);
	heard = zk->heard_ms;
	pthread_mutex_unlock(&zk->mu);
	return klog_clock_mono_ms() - heard;
}

/* A completion: its answer queued as a REPLY; a frees. */
static void
reply(struct acall *a, int rc, const struct Stat *st, const char *value,
    int vlen)
{
	klog_zk_t *zk = a->zk;
	struct qev e = { .type = KLOG_ZK_EVENT_REPLY, .tag = a->tag,
	    .rc = zk_map_rc(rc), .version = rc == ZOK && st != NULL ?
	    st->version : -1 };

	if (rc == ZOK && value != NULL) {
		e.len = vlen > 0 ? (size_t)vlen : 0;
		if ((e.data = malloc(e.len + 1)) == NULL) {
			e.rc = -KLOG_ENOMEM;
		} else {
			memcpy(e.data, value, e.len);
			e.data[e.len] = '\0';
		}
	}
	pthread_mutex_lock(&zk->mu);
	zk_push_ev_locked(zk, &e, a->path);
	pthread_mutex_unlock(&zk->mu);
	free(a);
}

static void
aset_done(int rc, const struct Stat *st, const void *data)
{
	reply((struct acall *)data, rc, st, NULL, 0);
}

static void
aget_done(int rc, const char *value, int vlen, const struct Stat *st,
    const void *data)
{
	reply((struct acall *)data, rc, st, value != NULL ? value : "", vlen);
}

int
klog_zk_aget(klog_zk_t *zk, const char *path, uint64_t tag,
    klog_err_t *err)
{
	struct acall *a;
	int rc;

	NEED_HANDLE(zk, path, err);
	if ((a = acall_new(zk, path, tag)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "%s: %s", path,
		    klog_strerror(KLOG_ENOMEM));
	if ((rc = zoo_aget(zk->zh, path, 0, aget_done, a)) != ZOK) {
		free(a);
		return zk_fail(err, rc, path);
	}
	return 0;
}

int
klog_zk_aset(klog_zk_t *zk, const char *path, const void *data,
    size_t len, int version, uint64_t tag, klog_err_t *err)
{
	struct acall *a;
	int rc;

	NEED_HANDLE(zk, path, err);
	if (len > INT32_MAX)
		return klog_err_set(err, -KLOG_ETOOBIG, "%s: data too large",
		    path);
	if ((a = acall_new(zk, path, tag)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "%s: %s", path,
		    klog_strerror(KLOG_ENOMEM));
	rc = zoo_aset(zk->zh, path, data, data != NULL ? (int)len : -1,
	    version, aset_done, a);
	if (rc != ZOK) {
		free(a);
		return zk_fail(err, rc, path);
	}
	return 0;
}
