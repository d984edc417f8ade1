#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/auth/users.h"
#include "klog/cluster/zklogins.h"
#include "klog/zk/zkusers.h"

struct klog_zklogins {
	klog_zk_t *zk;
	klog_logins_t *logins;
	klog_logger_t log;
};

/* name's credentials from its node (watched) into u; a bad one is left
 * out, said once. */
static int
add_user(klog_zklogins_t *z, klog_users_t *u, const char *name,
    klog_err_t *err)
{
	char path[KLOG_ZK_PATH_MAX], san[3 * KLOG_ZKUSERS_NAME_MAX + 1];
	klog_scram_cred_t cred;
	klog_zkuser_t zu;
	klog_err_t why = { 0 };
	char *data = NULL;
	size_t len;
	int rc;

	if (klog_zkusers_sanitize(name, san, sizeof(san)) < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", KLOG_ZKUSERS_ROOT, san);
	if ((rc = klog_zk_get(z->zk, path, 1, &data, &len, NULL, err)) < 0)
		return rc == -KLOG_ENOENT ? 0 : rc;
	klog_zkuser_init(&zu);
	rc = klog_zkuser_parse(data, len, &zu, &why);
	free(data);
	for (int m = 0; rc == 0 && m < KLOG_SCRAM_MECHS; m++) {
		const char *v = klog_zkuser_get(&zu,
		    klog_scram_mech_name((klog_scram_mech_t)m));

		if (v != NULL && ((rc = klog_scram_cred_parse(
		    (klog_scram_mech_t)m, v, &cred, &why)) < 0 ||
		    (rc = klog_users_set(u, name, &cred, &why)) < 0))
			break;
	}
	klog_zkuser_clear(&zu);
	if (rc < 0)
		klog_logger_say(&z->log, KLOG_LEVEL_WARN, "users: %s in "
		    "ZooKeeper left out: %s", name, klog_err_text(&why, rc));
	return rc == -KLOG_ENOMEM ? rc : 0;
}

/* Every user, watched; the set replaces the logins'. */
static int
load(klog_zklogins_t *z, klog_err_t *err)
{
	klog_zk_list_t names = { 0 };
	klog_users_t *u = NULL;
	int rc;

	if ((rc = klog_zk_mkdirs(z->zk, KLOG_ZKUSERS_ROOT, err)) < 0 ||
	    (rc = klog_zk_children(z->zk, KLOG_ZKUSERS_ROOT, 1, &names,
	    err)) < 0 || (rc = klog_users_new(&u, err)) < 0)
		goto out;
	for (size_t i = 0; i < names.n; i++) {
		char name[KLOG_ZKUSERS_NAME_MAX + 1];

		if (klog_zkusers_unsanitize(names.names[i], name,
		    sizeof(name)) == 0 &&
		    (rc = add_user(z, u, name, err)) < 0)
			goto out;
	}
	klog_logins_set_users(z->logins, u);
	u = NULL;
out:
	klog_users_free(u);
	klog_zk_list_free(&names);
	return rc;
}

int
klog_zklogins_new(klog_zk_t *zk, klog_logins_t *l, klog_logger_t log,
    klog_zklogins_t **out, klog_err_t *err)
{
	klog_zklogins_t *z = calloc(1, sizeof(*z));
	int rc;

	*out = NULL;
	if (z == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	z->zk = zk;
	z->logins = l;
	z->log = log;
	if ((rc = load(z, err)) < 0) {
		free(z);
		return rc;
	}
	*out = z;
	return 0;
}

static void
reload(klog_zklogins_t *z)
{
	klog_err_t err = { 0 };
	int rc;

	if ((rc = load(z, &err)) < 0)
		klog_logger_say(&z->log, KLOG_LEVEL_WARN, "users: reading "
		    "ZooKeeper's: %s (keeping the users read before)",
		    klog_err_text(&err, rc));
	else
		klog_logger_say(&z->log, KLOG_LEVEL_INFO, "users: %zu "
		    "credentials from ZooKeeper",
		    klog_logins_count(z->logins));
}

int
klog_zklogins_event(klog_zklogins_t *z, const klog_zk_event_t *ev)
{
	size_t n = strlen(KLOG_ZKUSERS_ROOT);

	if (z == NULL)
		return 0;
	if (ev->type == KLOG_ZK_EVENT_SESSION) {
		reload(z);
		return 0;
	}
	if ((ev->type != KLOG_ZK_EVENT_CHILD &&
	    ev->type != KLOG_ZK_EVENT_DATA) ||
	    strncmp(ev->path, KLOG_ZKUSERS_ROOT, n) != 0 ||
	    (ev->path[n] != '\0' && ev->path[n] != '/'))
		return 0;
	reload(z);
	return 1;
}

void
klog_zklogins_free(klog_zklogins_t *z)
{
	free(z);
}
