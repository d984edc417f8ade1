/* A cluster broker's ACLs from ZooKeeper, watched; see zkauthz.h. */
#include <stdlib.h>

#include "klog/cluster/zkacls.h"
#include "klog/cluster/zkauthz.h"

struct klog_zkauthz {
	klog_zk_t *zk;
	klog_authz_t *authz;
	klog_logger_t log;
};

/* Every ACL node, watched, into a new set put in force whole. */
static int
load(klog_zkauthz_t *z, size_t *foreign, klog_err_t *err)
{
	klog_acl_set_t *s;
	int rc;

	if ((rc = klog_acl_set_new(&s)) < 0)
		return klog_err_set(err, rc, "out of memory");
	if ((rc = klog_zkacls_mkdirs(z->zk, err)) < 0 ||
	    (rc = klog_zkacls_load(z->zk, 1, s, foreign, err)) < 0) {
		klog_acl_set_free(s);
		return rc;
	}
	return klog_authz_replace(z->authz, s, err);
}

static void
said(klog_zkauthz_t *z, size_t foreign)
{
	klog_logger_say(&z->log, KLOG_LEVEL_INFO, "ACLs: %zu from ZooKeeper "
	    "in force (%zu entries klog has no word for left out)",
	    klog_acl_count(klog_authz_set(z->authz)), foreign);
}

int
klog_zkauthz_new(klog_zk_t *zk, klog_authz_t *a, klog_logger_t log,
    klog_zkauthz_t **out, klog_err_t *err)
{
	klog_zkauthz_t *z = calloc(1, sizeof(*z));
	size_t foreign = 0;
	int rc;

	*out = NULL;
	if (z == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	z->zk = zk;
	z->authz = a;
	z->log = log;
	if ((rc = load(z, &foreign, err)) < 0) {
		free(z);
		return rc;
	}
	said(z, foreign);
	*out = z;
	return 0;
}

static void
reload(klog_zkauthz_t *z)
{
	klog_err_t err = { 0 };
	size_t foreign = 0;
	int rc;

	if ((rc = load(z, &foreign, &err)) < 0)
		klog_logger_say(&z->log, KLOG_LEVEL_WARN, "ACLs: reading "
		    "ZooKeeper's: %s (keeping the %zu ACLs in force)",
		    klog_err_text(&err, rc),
		    klog_acl_count(klog_authz_set(z->authz)));
	else
		said(z, foreign);
}

int
klog_zkauthz_event(klog_zkauthz_t *z, const klog_zk_event_t *ev)
{
	if (z == NULL)
		return 0;
	if (ev->type == KLOG_ZK_EVENT_SESSION) {
		reload(z);
		return 0;
	}
	if ((ev->type != KLOG_ZK_EVENT_CHILD &&
	    ev->type != KLOG_ZK_EVENT_DATA) || !klog_zkacls_owns(ev->path))
		return 0;
	reload(z);
	return 1;
}

void
klog_zkauthz_free(klog_zkauthz_t *z)
{
	free(z);
}
