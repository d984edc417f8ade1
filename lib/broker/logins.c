#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "klog/auth/users.h"
#include "klog/broker/logins.h"

#define RELOAD_MS 1000

struct klog_logins {
	klog_loop_t *loop;
	char *path;
	klog_users_t *users;
	struct stat seen;          /* the file as last read */
	klog_scram_secret_t secret;
	klog_sasl_config_t sasl;
	klog_saslpool_t *pool;
	klog_timer_t reload;
	klog_logger_t log;
};

static int
lookup(void *arg, const char *user, klog_scram_mech_t m,
    klog_scram_cred_t *out)
{
	klog_logins_t *l = arg;

	return klog_users_lookup(l->users, user, m, out);
}

static int
changed(const struct stat *a, const struct stat *b)
{
	return a->st_ino != b->st_ino || a->st_size != b->st_size ||
	    a->st_mtim.tv_sec != b->st_mtim.tv_sec ||
	    a->st_mtim.tv_nsec != b->st_mtim.tv_nsec;
}

static void
on_reload(klog_loop_t *loop, klog_timer_t *t, void *arg)
{
	klog_logins_t *l = arg;
	klog_users_t *u;
	klog_err_t err = { 0 };
	struct stat st;
	int rc;

	(void)loop;
	(void)t;
	if (stat(l->path, &st) < 0 || !changed(&st, &l->seen))
		return;
	l->seen = st;
	if ((rc = klog_users_load(l->path, &u, &err)) < 0) {
		klog_logger_say(&l->log, KLOG_LEVEL_WARN, "users: %s (keeping "
		    "the users read before)", klog_err_text(&err, rc));
		return;
	}
	klog_logins_set_users(l, u);
	klog_logger_say(&l->log, KLOG_LEVEL_INFO, "users: %s changed: %zu "
	    "credentials", l->path, klog_users_count(u));
}

static void
wake(void *arg)
{
	klog_loop_wake(arg);
}

/* The file's users, or none (a cluster's come from ZooKeeper). */
static int
users_open(klog_logins_t *l, const char *users_file, klog_err_t *err)
{
	if (users_file == NULL)
		return klog_users_new(&l->users, err);
	if ((l->path = strdup(users_file)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if (stat(l->path, &l->seen) < 0)
		return klog_err_sys(err, "users file", users_file);
	return klog_users_load(l->path, &l->users, err);
}

void
klog_logins_set_users(klog_logins_t *l, klog_users_t *u)
{
	/* PLAIN copies its credential before its check leaves the loop: no
	 * thread holds the old set. */
	klog_users_free(l->users);
	l->users = u;
}

int
klog_logins_open(klog_loop_t *loop, const char *users_file, unsigned mechs,
    klog_logger_t log, klog_logins_t **out, klog_err_t *err)
{
	klog_logins_t *l = calloc(1, sizeof(*l));
	int rc;

	*out = NULL;
	if (l == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	l->loop = loop;
	l->log = log;
	klog_timer_init(&l->reload, on_reload, l);
	if ((rc = users_open(l, users_file, err)) < 0 ||
	    (rc = klog_scram_secret_init(&l->secret, err)) < 0)
		goto fail;
	l->sasl = (klog_sasl_config_t){ mechs, lookup, l, &l->secret };
	if ((rc = klog_saslpool_new(wake, loop, &l->pool)) < 0 ||
	    (l->path != NULL && (rc = klog_loop_timer_start(loop, &l->reload,
	    RELOAD_MS, RELOAD_MS)) < 0)) {
		klog_err_set(err, rc, "users: %s", klog_strerror(rc));
		goto fail;
	}
	*out = l;
	return 0;
fail:
	klog_logins_free(l);
	return rc;
}

const klog_sasl_config_t *
klog_logins_sasl(klog_logins_t *l)
{
	return &l->sasl;
}

klog_saslpool_t *
klog_logins_pool(klog_logins_t *l)
{
	return l->pool;
}

void
klog_logins_drain(klog_logins_t *l)
{
	if (l != NULL)
		klog_saslpool_drain(l->pool);
}

int
klog_logins_from_file(const klog_logins_t *l)
{
	return l->path != NULL;
}

size_t
klog_logins_count(const klog_logins_t *l)
{
	return klog_users_count(l->users);
}

void
klog_logins_free(klog_logins_t *l)
{
	if (l == NULL)
		return;
	if (l->path != NULL)
		klog_loop_timer_stop(l->loop, &l->reload);
	klog_saslpool_free(l->pool);
	klog_users_free(l->users);
	OPENSSL_cleanse(&l->secret, sizeof(l->secret));
	free(l->path);
	free(l);
}
