/*
 * ZooKeeper session wrapper.  libzookeeper_mt runs every watcher on its own
 * completion thread; here those callbacks only queue a copy of the event and
 * bump an eventfd, so that all real work happens on the owner's thread.
 * ZOO_*_STATE and ZOO_*_EVENT are extern consts, not integer constants, so
 * they are compared with if/else, never in a switch.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <zookeeper/zookeeper.h>

#include "klog/base/clock.h"
#include "klog/zk/zk.h"
#include "klog/zk/zkacl.h"
#include "zk_impl.h"

#define ZOMBIE_POLL_MS 100
#define GET_INITIAL 512
#define GET_TRIES 4

/* The library logs through this; klog tools keep stderr for their own
 * one-line errors. */
static void
quiet_log(const char *message)
{
	(void)message;
}

/* Under zk->mu; takes e->data.  A lost REPLY is an overflow too: its
 * caller re-reads everything then, in-flight calls included. */
void
zk_push_ev_locked(klog_zk_t *zk, const struct qev *in, const char *path)
{
	struct qev *e;
	uint64_t one = 1;
	ssize_t n;

	if (zk->count == QUEUE_CAP) {
		zk->overflow = 1;
		free(in->data);
	} else {
		e = &zk->q[(zk->head + zk->count) % QUEUE_CAP];
		*e = *in;
		e->gen = zk->gen;
		e->path = NULL;
		if (path != NULL && path[0] != '\0' &&
		    (e->path = strdup(path)) == NULL) {
			zk->overflow = 1;
			free(e->data);
		} else {
			zk->count++;
		}
	}
	n = write(zk->efd, &one, sizeof(one));
	(void)n;  /* EAGAIN only at 2^64-1: the fd is readable anyway */
}

static void
push_locked(klog_zk_t *zk, int type, int zk_type, const char *path)
{
	struct qev e = { .type = type, .zk_type = zk_type, .version = -1 };

	zk_push_ev_locked(zk, &e, path);
}

/* Global watcher: session state changes only. */
static void
session_watcher(zhandle_t *zh, int type, int state, const char *path,
    void *ctx)
{
	klog_zk_t *zk = ctx;
	int was;

	(void)zh;
	(void)path;
	if (type != ZOO_SESSION_EVENT)
		return;
	pthread_mutex_lock(&zk->mu);
	was = zk->state;
	zk->state = state;
	if (state == ZOO_CONNECTED_STATE) {
		zk->heard_ms = klog_clock_mono_ms();
		/* The first connect of the opening handle is klog_zk_open()'s
		 * business; the first of a renewed one is news. */
		if (zk->connects++ > 0)
			push_locked(zk, KLOG_ZK_EVENT_CONNECTED, type, NULL);
		else if (zk->renewed)
			push_locked(zk, KLOG_ZK_EVENT_SESSION, type, NULL);
	} else if (state == ZOO_EXPIRED_SESSION_STATE ||
	    state == ZOO_AUTH_FAILED_STATE) {
		push_locked(zk, KLOG_ZK_EVENT_EXPIRED, type, NULL);
	} else if (was == ZOO_CONNECTED_STATE) {
		push_locked(zk, KLOG_ZK_EVENT_DISCONNECTED, type, NULL);
	}
	pthread_cond_broadcast(&zk->cv);
	pthread_mutex_unlock(&zk->mu);
}

/* Path watchers also receive session events (path ""); the global watcher
 * reports those, so they are ignored here. */
static void
queue_path_event(klog_zk_t *zk, int kind, int type, const char *path)
{
	if (type == ZOO_SESSION_EVENT || type == ZOO_NOTWATCHING_EVENT)
		return;
	pthread_mutex_lock(&zk->mu);
	push_locked(zk, kind, type, path);
	pthread_mutex_unlock(&zk->mu);
}

static void
child_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh;
	(void)state;
	queue_path_event(ctx, KLOG_ZK_EVENT_CHILD, type, path);
}

static void
data_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh;
	(void)state;
	queue_path_event(ctx, KLOG_ZK_EVENT_DATA, type, path);
}

int
zk_map_rc(int rc)
{
	switch (rc) {
	case ZOK:
		return 0;
	case ZNONODE:
		return -KLOG_ENOENT;
	case ZNODEEXISTS:
		return -KLOG_EEXIST;
	case ZNOTEMPTY:
	case ZBADVERSION:
		return -KLOG_EBUSY;
	case ZCONNECTIONLOSS:
		return -KLOG_ECONN;
	case ZOPERATIONTIMEOUT:
		return -KLOG_ETIMEDOUT;
	case ZBADARGUMENTS:
	case ZNOCHILDRENFOREPHEMERALS:
	case ZINVALIDACL:
		return -KLOG_EINVAL;
	case ZMARSHALLINGERROR:
		return -KLOG_ENOMEM;
	case ZNOAUTH:
		return -KLOG_EDENIED;
	case ZAUTHFAILED:
		return -KLOG_EAUTH;
	default:
		return -KLOG_EZK;
	}
}

int
zk_fail(klog_err_t *err, int rc, const char *path)
{
	/* ZooKeeper's "not authenticated" says nothing of why. */
	if (rc == ZNOAUTH)
		return klog_err_set(err, -KLOG_EDENIED, "%s: not authorized: "
		    "the node's ACL wants another ZooKeeper identity (klog's "
		    "digest, --zk-auth-file)", path);
	return klog_err_set(err, zk_map_rc(rc), "%s: %s", path, zerror(rc));
}

/* The answer to a handle's digest: on the library's completion thread. */
static void
auth_done(int rc, const void *data)
{
	klog_zk_t *zk = (klog_zk_t *)data;

	pthread_mutex_lock(&zk->mu);
	zk->auth_done = 1;
	zk->auth_rc = rc;
	pthread_cond_broadcast(&zk->cv);
	pthread_mutex_unlock(&zk->mu);
}

/* Under no lock: zh is only touched by the owner's thread. */
static int
open_handle(klog_zk_t *zk, int renewed, klog_err_t *err)
{
	pthread_mutex_lock(&zk->mu);
	zk->gen++;
	zk->state = 0;
	zk->connects = 0;
	zk->renewed = renewed;
	zk->auth_done = 0;
	zk->auth_rc = ZOK;
	pthread_mutex_unlock(&zk->mu);
	zk->zh = zookeeper_init2(zk->hosts, session_watcher, zk->session_ms,
	    NULL, zk, ZOO_NO_LOG_CLIENTENV, quiet_log);
	if (zk->zh == NULL)
		return klog_err_set(err, -KLOG_ECONN,
		    "zookeeper %s: %s", zk->hosts,
		    errno == EINVAL ? "invalid connect string" :
		    "no server address resolves");
	/* The library keeps the digest and sends it again at every
	 * reconnect of this handle, ahead of any call made after the
	 * connect: a renewed session is a new handle, so it is given here. */
	if (zk->auth != NULL && zoo_add_auth(zk->zh, "digest", zk->auth,
	    (int)strlen(zk->auth), auth_done, zk) != ZOK) {
		zookeeper_close(zk->zh);
		zk->zh = NULL;
		return klog_err_set(err, -KLOG_ECONN, "zookeeper %s: the "
		    "digest identity could not be queued", zk->hosts);
	}
	return 0;
}

static int
wait_connected(klog_zk_t *zk, int64_t deadline_ms, klog_err_t *err)
{
	struct timespec ts;
	int rc = 0, timedout = 0;

	/* With a digest, its answer too: a refused one then says so here,
	 * not as a NOAUTH at the first write. */
	pthread_mutex_lock(&zk->mu);
	while ((zk->state != ZOO_CONNECTED_STATE ||
	    (zk->auth != NULL && !zk->auth_done)) && !timedout) {
		if (zk->state == ZOO_EXPIRED_SESSION_STATE ||
		    zk->state == ZOO_AUTH_FAILED_STATE ||
		    (zk->auth_done && zk->auth_rc != ZOK))
			break;
		ts.tv_sec = deadline_ms / 1000;
		ts.tv_nsec = (long)(deadline_ms % 1000) * 1000000;
		timedout = pthread_cond_timedwait(&zk->cv, &zk->mu, &ts) ==
		    ETIMEDOUT;
	}
	if (zk->state == ZOO_AUTH_FAILED_STATE ||
	    (zk->auth_done && zk->auth_rc != ZOK))
		rc = -KLOG_EAUTH;
	else if (zk->state != ZOO_CONNECTED_STATE ||
	    (zk->auth != NULL && !zk->auth_done))
		rc = timedout ? -KLOG_ETIMEDOUT : -KLOG_ECONN;
	pthread_mutex_unlock(&zk->mu);
	if (rc == -KLOG_EAUTH)
		return klog_err_set(err, rc, "zookeeper %s: digest "
		    "authentication failed (the server refused the identity)",
		    zk->hosts);
	if (rc == -KLOG_ETIMEDOUT)
		return klog_err_set(err, rc, "zookeeper %s: not connected "
		    "in time", zk->hosts);
	if (rc < 0)
		return klog_err_set(err, rc, "zookeeper %s: session refused",
		    zk->hosts);
	return 0;
}

/* "h:p[,h:p...]" with a numeric port on every host, then an optional
 * chroot "/a/b" (no trailing slash, no empty component). */
static int
check_connect(const char *s, size_t *hosts_len, klog_err_t *err)
{
	const char *slash = strchr(s, '/'), *p, *end, *colon;
	size_t n = slash != NULL ? (size_t)(slash - s) : strlen(s);

	for (p = s; p < s + n; p = end + 1) {
		end = memchr(p, ',', (size_t)(s + n - p));
		if (end == NULL)
			end = s + n;
		colon = memrchr(p, ':', (size_t)(end - p));
		if (colon == NULL || colon == p || colon + 1 == end ||
		    strspn(colon + 1, "0123456789") < (size_t)(end - colon - 1))
			goto bad;
	}
	if (n == 0 || s[n - 1] == ',')
		goto bad;
	if (slash != NULL && (slash[1] == '\0' || strstr(slash, "//") ||
	    slash[strlen(slash) - 1] == '/'))
		goto bad;
	*hosts_len = n;
	return 0;
bad:
	return klog_err_set(err, -KLOG_EINVAL, "%s: want "
	    "host:port[,host:port...][/chroot]", s);
}

static void
free_auth(klog_zk_t *zk)
{
	if (zk->auth == NULL)
		return;
	explicit_bzero(zk->auth, strlen(zk->auth));
	free(zk->auth);
	zk->auth = NULL;
}

static klog_zk_t *
zk_alloc(const char *hosts, size_t n, const char *auth, int session_ms)
{
	klog_zk_t *zk = calloc(1, sizeof(*zk));
	pthread_condattr_t ca;

	if (zk == NULL)
		return NULL;
	zk->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	zk->hosts = strndup(hosts, n);
	if (auth != NULL)
		zk->auth = strdup(auth);
	if (zk->efd < 0 || zk->hosts == NULL ||
	    (auth != NULL && zk->auth == NULL)) {
		if (zk->efd >= 0)
			close(zk->efd);
		free(zk->hosts);
		free_auth(zk);
		free(zk);
		return NULL;
	}
	/* Kafka's zookeeper.set.acl: ZOO_CREATOR_ALL_ACL plus a world
	 * read; the library's Ids are variables, so built at run time. */
	zk->creator_read[0] = (struct ACL){ ZOO_PERM_ALL, ZOO_AUTH_IDS };
	zk->creator_read[1] = (struct ACL){ ZOO_PERM_READ,
	    ZOO_ANYONE_ID_UNSAFE };
	zk->creator_read_v = (struct ACL_vector){ 2, zk->creator_read };
	zk->session_ms = session_ms > 0 ? session_ms :
	    KLOG_ZK_DEFAULT_SESSION_MS;
	pthread_mutex_init(&zk->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&zk->cv, &ca);
	pthread_condattr_destroy(&ca);
	return zk;
}

static int
connect_one(const char *hosts, size_t n, const char *auth, int session_ms,
    int64_t deadline, klog_zk_t **out, klog_err_t *err)
{
	klog_zk_t *zk = zk_alloc(hosts, n, auth, session_ms);
	int rc;

	if (zk == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "zookeeper: %s",
		    klog_strerror(KLOG_ENOMEM));
	rc = open_handle(zk, 0, err);
	if (rc == 0)
		rc = wait_connected(zk, deadline, err);
	if (rc < 0) {
		klog_zk_close(zk);
		return rc;
	}
	*out = zk;
	return 0;
}

int
klog_zk_open(const char *connect, int session_ms, int connect_ms,
    klog_zk_t **out, klog_err_t *err)
{
	return klog_zk_open_auth(connect, NULL, session_ms, connect_ms, out,
	    err);
}

int
klog_zk_open_auth(const char *connect, const char *auth, int session_ms,
    int connect_ms, klog_zk_t **out, klog_err_t *err)
{
	int64_t deadline = klog_clock_mono_ms() + (connect_ms > 0 ? connect_ms : 0);
	klog_zk_t *root;
	size_t n = 0;
	int rc;

	*out = NULL;
	if ((rc = check_connect(connect, &n, err)) < 0)
		return rc;
	if (connect[n] == '/') {
		/* The chroot's nodes get the identity's ACLs too. */
		rc = connect_one(connect, n, auth, session_ms, deadline, &root,
		    err);
		if (rc < 0)
			return rc;
		rc = klog_zk_mkdirs(root, connect + n, err);
		klog_zk_close(root);
		if (rc < 0)
			return rc;
	}
	return connect_one(connect, strlen(connect), auth, session_ms,
	    deadline, out, err);
}

void
klog_zk_close(klog_zk_t *zk)
{
	size_t i;

	if (zk == NULL)
		return;
	/* Joins the library's threads: no callback runs after this. */
	if (zk->zh != NULL)
		zookeeper_close(zk->zh);
	for (i = 0; i < zk->count; i++) {
		free(zk->q[(zk->head + i) % QUEUE_CAP].path);
		free(zk->q[(zk->head + i) % QUEUE_CAP].data);
	}
	close(zk->efd);
	pthread_cond_destroy(&zk->cv);
	pthread_mutex_destroy(&zk->mu);
	free(zk->hosts);
	free_auth(zk);
	free(zk);
}

/* The live handle, re-opening one that a failed renewal left missing. */
zhandle_t *
zk_handle(klog_zk_t *zk)
{
	if (zk->zh == NULL)
		(void)open_handle(zk, 1, NULL);
	return zk->zh;
}

/* Whether a synchronous call may be made: it would wait for the next
 * connect attempt otherwise (zk.h). */
int
zk_usable(klog_zk_t *zk)
{
	int64_t quiet_max = zoo_recv_timeout(zk->zh) / 2;
	int ok;

	pthread_mutex_lock(&zk->mu);
	ok = zk->state == ZOO_CONNECTED_STATE && (!zk->pinging ||
	    klog_clock_mono_ms() - zk->heard_ms < quiet_max);
	pthread_mutex_unlock(&zk->mu);
	return ok;
}


int
klog_zk_session_ms(klog_zk_t *zk)
{
	return zk_handle(zk) != NULL ? zoo_recv_timeout(zk->zh) : 0;
}

int64_t
klog_zk_session_id(klog_zk_t *zk)
{
	const clientid_t *id;

	if (zk_handle(zk) == NULL || (id = zoo_client_id(zk->zh)) == NULL)
		return 0;
	return id->client_id;
}

int
klog_zk_event_fd(const klog_zk_t *zk)
{
	return zk->efd;
}

int
klog_zk_next_event(klog_zk_t *zk, klog_zk_event_t *ev)
{
	struct qev e;
	uint64_t v;
	ssize_t n;

	memset(ev, 0, sizeof(*ev));
	pthread_mutex_lock(&zk->mu);
	if (zk->overflow) {
		zk->overflow = 0;
		pthread_mutex_unlock(&zk->mu);
		ev->type = KLOG_ZK_EVENT_OVERFLOW;
		return 1;
	}
	if (zk->count == 0) {
		/* Writers write under the lock, so nothing is lost here. */
		n = read(zk->efd, &v, sizeof(v));
		(void)n;
		pthread_mutex_unlock(&zk->mu);
		return 0;
	}
	e = zk->q[zk->head];
	zk->head = (zk->head + 1) % QUEUE_CAP;
	zk->count--;
	pthread_mutex_unlock(&zk->mu);

	ev->type = e.type;
	ev->zk_type = e.zk_type;
	ev->tag = e.tag;
	ev->rc = e.rc;
	ev->version = e.version;
	ev->data = e.data;
	ev->len = e.len;
	if (e.path != NULL)
		snprintf(ev->path, sizeof(ev->path), "%s", e.path);
	free(e.path);
	if (e.type == KLOG_ZK_EVENT_EXPIRED && e.gen == zk->gen &&
	    zk->zh != NULL) {
		/* The handle is dead for good: every call on it would fail. */
		zookeeper_close(zk->zh);
		zk->zh = NULL;
		if (open_handle(zk, 1, NULL) < 0)
			return -KLOG_ECONN;
	}
	return 1;
}

void
klog_zk_list_free(klog_zk_list_t *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	l->names = NULL;
	l->n = 0;
}

static void
fill_stat(klog_zk_stat_t *st, const struct Stat *s)
{
	if (st == NULL)
		return;
	st->ephemeral_owner = s->ephemeralOwner;
	st->mtime_ms = s->mtime;
	st->version = s->version;
	st->data_length = s->dataLength;
	st->num_children = s->numChildren;
}

static int
parent_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (slash == NULL || slash == path)
		return 0;  /* the root's children have a parent that exists */
	n = (size_t)(slash - path);
	if (n >= len)
		return -KLOG_EINVAL;
	memcpy(buf, path, n);
	buf[n] = '\0';
	return 1;
}

/* The one place a created node's ACL is chosen (zkacl.h). */
static struct ACL_vector *
acl_of(klog_zk_t *zk, const char *path)
{
	switch (klog_zkacl_for(path, zk->auth != NULL)) {
	case KLOG_ZKACL_CREATOR_READ:
		return &zk->creator_read_v;
	case KLOG_ZKACL_CREATOR_ONLY:
		return &ZOO_CREATOR_ALL_ACL;
	default:
		return &ZOO_OPEN_ACL_UNSAFE;
	}
}

static int
create_raw(klog_zk_t *zk, const char *path, const void *data, size_t len,
    int mode)
{
	return zoo_create(zk->zh, path, data, data != NULL ? (int)len : -1,
	    acl_of(zk, path), mode, NULL, 0);
}

int
klog_zk_mkdirs(klog_zk_t *zk, const char *path, klog_err_t *err)
{
	char parent[KLOG_ZK_PATH_MAX];
	int rc;

	NEED_HANDLE(zk, path, err);
	rc = create_raw(zk, path, NULL, 0, ZOO_PERSISTENT);
	if (rc == ZNONODE) {
		rc = parent_of(path, parent, sizeof(parent));
		if (rc < 0)
			return klog_err_set(err, rc, "%s: path too long", path);
		if (rc > 0 && (rc = klog_zk_mkdirs(zk, parent, err)) < 0)
			return rc;
		rc = create_raw(zk, path, NULL, 0, ZOO_PERSISTENT);
	}
	/* ZooKeeper checks the parent's ACL before the node's existence: a
	 * session without the identity gets NOAUTH for a node that is there,
	 * which is all mkdirs wants. */
	if (rc == ZNOAUTH && zoo_exists(zk->zh, path, 0, NULL) == ZOK)
		return 0;
	if (rc == ZOK || rc == ZNODEEXISTS)
		return 0;
	return zk_fail(err, rc, path);
}

int
klog_zk_create(klog_zk_t *zk, const char *path, const void *data,
    size_t len, int flags, klog_err_t *err)
{
	char parent[KLOG_ZK_PATH_MAX];
	int mode = flags & KLOG_ZK_EPHEMERAL ? ZOO_EPHEMERAL : ZOO_PERSISTENT;
	int rc;

	NEED_HANDLE(zk, path, err);
	if (len > INT32_MAX)
		return klog_err_set(err, -KLOG_ETOOBIG, "%s: data too large",
		    path);
	rc = create_raw(zk, path, data, len, mode);
	if (rc == ZNONODE && parent_of(path, parent, sizeof(parent)) > 0) {
		if ((rc = klog_zk_mkdirs(zk, parent, err)) < 0)
			return rc;
		rc = create_raw(zk, path, data, len, mode);
	}
	return rc == ZOK ? 0 : zk_fail(err, rc, path);
}

int
klog_zk_create_ephemeral(klog_zk_t *zk, const char *path,
    const void *data, size_t len, int wait_ms, klog_err_t *err)
{
	int64_t deadline = klog_clock_mono_ms() + (wait_ms > 0 ? wait_ms : 0), left;
	klog_zk_stat_t st;
	char *cur = NULL;
	size_t curlen;
	int rc;

	for (;;) {
		rc = klog_zk_create(zk, path, data, len, KLOG_ZK_EPHEMERAL,
		    err);
		if (rc != -KLOG_EEXIST)
			return rc;
		rc = klog_zk_exists(zk, path, 0, &st, err);
		if (rc == -KLOG_ENOENT)
			continue;  /* went meanwhile */
		if (rc < 0)
			return rc;
		if (st.ephemeral_owner == klog_zk_session_id(zk))
			return klog_zk_set(zk, path, data, len, -1, err);
		left = deadline - klog_clock_mono_ms();
		if (st.ephemeral_owner == 0 || left <= 0)
			break;
		klog_clock_sleep_ms(left < ZOMBIE_POLL_MS ? left : ZOMBIE_POLL_MS);
	}
	rc = klog_zk_get(zk, path, 0, &cur, &curlen, NULL, NULL);
	klog_err_set(err, -KLOG_EEXIST, "%s: held by %s (\"%s\")", path,
	    st.ephemeral_owner == 0 ? "a persistent node" :
	    "another session", rc == 0 ? cur : "?");
	free(cur);
	return -KLOG_EEXIST;
}

int
klog_zk_get(klog_zk_t *zk, const char *path, int watch, char **data,
    size_t *len, klog_zk_stat_t *st, klog_err_t *err)
{
	struct Stat s;
	char *buf = NULL, *nb;
	int cap = GET_INITIAL, n, rc, tries;

	*data = NULL;
	*len = 0;
	NEED_HANDLE(zk, path, err);
	for (tries = 0; tries < GET_TRIES; tries++) {
		if ((nb = realloc(buf, (size_t)cap + 1)) == NULL) {
			free(buf);
			return klog_err_set(err, -KLOG_ENOMEM, "%s: %s", path,
			    klog_strerror(KLOG_ENOMEM));
		}
		buf = nb;
		n = cap;
		rc = watch ? zoo_wget(zk->zh, path, data_watcher, zk, buf, &n,
		    &s) : zoo_get(zk->zh, path, 0, buf, &n, &s);
		if (rc != ZOK) {
			free(buf);
			return zk_fail(err, rc, path);
		}
		/* Larger data comes back silently truncated, still ZOK. */
		if (s.dataLength <= cap)
			break;
		cap = s.dataLength;
	}
	if (tries == GET_TRIES) {
		free(buf);
		return klog_err_set(err, -KLOG_EBUSY, "%s: data keeps growing",
		    path);
	}
	if (n < 0)
		n = 0;  /* a node without data */
	buf[n] = '\0';
	*data = buf;
	*len = (size_t)n;
	fill_stat(st, &s);
	return 0;
}

int
klog_zk_exists(klog_zk_t *zk, const char *path, int watch,
    klog_zk_stat_t *st, klog_err_t *err)
{
	struct Stat s;
	int rc;

	NEED_HANDLE(zk, path, err);
	rc = watch ? zoo_wexists(zk->zh, path, data_watcher, zk, &s) :
	    zoo_exists(zk->zh, path, 0, &s);
	if (rc != ZOK)
		return zk_fail(err, rc, path);
	fill_stat(st, &s);
	return 0;
}

int
klog_zk_world_writable(klog_zk_t *zk, const char *path, klog_err_t *err)
{
	struct ACL_vector acl = { 0, NULL };
	struct Stat s;
	int rc, open = 0;

	NEED_HANDLE(zk, path, err);
	if ((rc = zoo_get_acl(zk->zh, path, &acl, &s)) != ZOK)
		return zk_fail(err, rc, path);
	for (int32_t i = 0; i < acl.count; i++)
		if (strcmp(acl.data[i].id.scheme, "world") == 0 &&
		    strcmp(acl.data[i].id.id, "anyone") == 0 &&
		    (acl.data[i].perms & ~ZOO_PERM_READ) != 0)
			open = 1;
	deallocate_ACL_vector(&acl);
	return open;
}

int
klog_zk_set(klog_zk_t *zk, const char *path, const void *data,
    size_t len, int version, klog_err_t *err)
{
	int rc;

	NEED_HANDLE(zk, path, err);
	if (len > INT32_MAX)
		return klog_err_set(err, -KLOG_ETOOBIG, "%s: data too large",
		    path);
	rc = zoo_set(zk->zh, path, data, data != NULL ? (int)len : -1,
	    version);
	return rc == ZOK ? 0 : zk_fail(err, rc, path);
}

int
klog_zk_put(klog_zk_t *zk, const char *path, const void *data,
    size_t len, klog_err_t *err)
{
	int rc = klog_zk_set(zk, path, data, len, -1, err);

	if (rc != -KLOG_ENOENT)
		return rc;
	rc = klog_zk_create(zk, path, data, len, 0, err);
	if (rc == -KLOG_EEXIST)  /* created meanwhile by someone else */
		rc = klog_zk_set(zk, path, data, len, -1, err);
	return rc;
}

int
klog_zk_delete(klog_zk_t *zk, const char *path, int version,
    klog_err_t *err)
{
	int rc;

	NEED_HANDLE(zk, path, err);
	rc = zoo_delete(zk->zh, path, version);
	return rc == ZOK ? 0 : zk_fail(err, rc, path);
}

int
klog_zk_delete_tree(klog_zk_t *zk, const char *path, klog_err_t *err)
{
	klog_zk_list_t kids = { 0 };
	char child[KLOG_ZK_PATH_MAX];
	size_t i;
	int rc;

	rc = klog_zk_children(zk, path, 0, &kids, err);
	if (rc == -KLOG_ENOENT)
		return 0;
	for (i = 0; rc == 0 && i < kids.n; i++) {
		if ((size_t)snprintf(child, sizeof(child), "%s/%s",
		    strcmp(path, "/") == 0 ? "" : path, kids.names[i]) >=
		    sizeof(child))
			rc = klog_err_set(err, -KLOG_EINVAL,
			    "%s: path too long", path);
		else
			rc = klog_zk_delete_tree(zk, child, err);
	}
	klog_zk_list_free(&kids);
	if (rc < 0)
		return rc;
	rc = klog_zk_delete(zk, path, -1, err);
	return rc == -KLOG_ENOENT ? 0 : rc;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
klog_zk_children(klog_zk_t *zk, const char *path, int watch,
    klog_zk_list_t *out, klog_err_t *err)
{
	struct String_vector sv = { 0, NULL };
	size_t i;
	int rc;

	out->names = NULL;
	out->n = 0;
	NEED_HANDLE(zk, path, err);
	rc = watch ? zoo_wget_children(zk->zh, path, child_watcher, zk, &sv) :
	    zoo_get_children(zk->zh, path, 0, &sv);
	if (rc != ZOK)
		return zk_fail(err, rc, path);
	rc = 0;
	if (sv.count > 0 &&
	    (out->names = calloc((size_t)sv.count, sizeof(char *))) == NULL)
		rc = -KLOG_ENOMEM;
	for (i = 0; rc == 0 && i < (size_t)sv.count; i++) {
		if ((out->names[i] = strdup(sv.data[i])) == NULL)
			rc = -KLOG_ENOMEM;
		else
			out->n++;
	}
	deallocate_String_vector(&sv);
	if (rc < 0) {
		klog_zk_list_free(out);
		return klog_err_set(err, rc, "%s: %s", path,
		    klog_strerror(rc));
	}
	if (out->n > 1)
		qsort(out->names, out->n, sizeof(char *), cmp_name);
	return 0;
}

/* The op a failed multi blames: ZooKeeper reports the real error on the op
 * that failed and ZRUNTIMEINCONSISTENCY on the others. */
static int
multi_culprit(const zoo_op_result_t *res, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (res[i].err != ZOK && res[i].err != ZRUNTIMEINCONSISTENCY)
			return i;
	return -1;
}

int
klog_zk_multi(klog_zk_t *zk, const klog_zk_op_t *ops, int n,
    klog_err_t *err)
{
	zoo_op_t *zops = NULL;
	zoo_op_result_t *res = NULL;
	char *names = NULL, *name;
	size_t room = 0;
	int i, rc, bad;

	NEED_HANDLE(zk, n > 0 ? ops[0].path : "multi", err);
	if (n <= 0)
		return 0;
	/* A create hands back the name it made; for a non-sequential node
	 * that is the path itself, so each gets exactly its path's room. */
	for (i = 0; i < n; i++) {
		if (ops[i].path == NULL || ops[i].len > INT32_MAX)
			return klog_err_set(err, -KLOG_EINVAL,
			    "multi: op %d: bad path or data", i);
		if (ops[i].type == KLOG_ZK_OP_CREATE)
			room += strlen(ops[i].path) + 1;
	}
	zops = calloc((size_t)n, sizeof(*zops));
	res = calloc((size_t)n, sizeof(*res));
	names = malloc(room + 1);
	if (zops == NULL || res == NULL || names == NULL) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "multi: %s",
		    klog_strerror(KLOG_ENOMEM));
		goto out;
	}
	name = names;
	for (i = 0; i < n; i++) {
		const klog_zk_op_t *o = &ops[i];
		int dlen = o->data != NULL ? (int)o->len : -1;

		if (o->type == KLOG_ZK_OP_CREATE) {
			size_t plen = strlen(o->path) + 1;

			zoo_create_op_init(&zops[i], o->path, o->data, dlen,
			    acl_of(zk, o->path), o->flags & KLOG_ZK_EPHEMERAL ?
			    ZOO_EPHEMERAL : ZOO_PERSISTENT, name, (int)plen);
			name += plen;
		} else if (o->type == KLOG_ZK_OP_SET) {
			zoo_set_op_init(&zops[i], o->path, o->data, dlen,
			    o->version, NULL);
		} else if (o->type == KLOG_ZK_OP_CHECK) {
			zoo_check_op_init(&zops[i], o->path, o->version);
		} else if (o->type == KLOG_ZK_OP_DELETE) {
			zoo_delete_op_init(&zops[i], o->path, o->version);
		} else {
			rc = klog_err_set(err, -KLOG_EINVAL,
			    "multi: op %d: unknown type %d", i, o->type);
			goto out;
		}
	}
	rc = zoo_multi(zk->zh, n, zops, res);
	if (rc == ZOK) {
		rc = 0;
		goto out;
	}
	bad = multi_culprit(res, n);
	rc = zk_fail(err, bad >= 0 ? res[bad].err : rc,
	    bad >= 0 ? ops[bad].path : ops[0].path);
out:
	free(names);
	free(res);
	free(zops);
	return rc;
}
