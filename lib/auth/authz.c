/*
 * The broker's authorizer; see authz.h.  The set in force is replaced
 * whole by a reload, so that a check never sees a file half read.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/auth/aclfile.h"
#include "klog/auth/authz.h"
#include "klog/base/clock.h"

#define LOG_EVERY_MS 1000          /* refusals: a line a second at most */
#define ID_MAX 11                  /* digits of an int32, and a sign */

/* What a file was when it was last looked at: a change of any is a new
 * file (a rename changes the inode, an edit in place the times). */
struct filestamp {
	int known;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

struct klog_authz {
	char *file;
	char *super_users;
	int allow_everyone;
	char *replica;             /* the pattern, "{id}" in it */
	klog_logger_t log;
	klog_acl_set_t *set;       /* in force */
	struct filestamp loaded;   /* the file the set came from */
	struct filestamp failed;   /* a file that did not load, reported */
	int failed_valid;          /* failed holds one (known 0: missing) */
	void *moved;               /* klog_authz_split()'s refused parts */
	size_t moved_cap;
	int64_t logged_ms;         /* the last refusal logged */
	uint64_t suppressed;       /* refusals not logged since */
};

static int
stamp_of(const char *path, struct filestamp *fs)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		*fs = (struct filestamp){ 0 };
		return -1;
	}
	*fs = (struct filestamp){ 1, st.st_dev, st.st_ino, st.st_size,
	    st.st_mtim, st.st_ctim };
	return 0;
}

static int
stamp_eq(const struct filestamp *a, const struct filestamp *b)
{
	return a->known == b->known && a->dev == b->dev && a->ino == b->ino &&
	    a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	    a->mtime.tv_nsec == b->mtime.tv_nsec &&
	    a->ctime.tv_sec == b->ctime.tv_sec &&
	    a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* The broker's super users and default, on a set. */
static int
broker_rules(const klog_authz_t *a, klog_acl_set_t *s, klog_err_t *err)
{
	int rc;

	if (a->super_users != NULL &&
	    (rc = klog_acl_super_users(s, a->super_users, err)) < 0)
		return rc;
	klog_acl_allow_everyone_if_no_acl(s, a->allow_everyone);
	return 0;
}

/* A set from the file (none: empty) with the broker's super users and
 * default. */
static int
load_set(const klog_authz_t *a, klog_acl_set_t **out, klog_err_t *err)
{
	klog_acl_set_t *s;
	int rc;

	*out = NULL;
	if ((rc = klog_acl_set_new(&s)) < 0)
		return klog_err_set(err, rc, "out of memory");
	if ((rc = broker_rules(a, s, err)) < 0 || (a->file != NULL &&
	    (rc = klog_aclfile_load(a->file, s, err)) < 0)) {
		klog_acl_set_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* The pattern with "{id}" replaced by id into out (cap bytes): 0, or -1
 * when it does not fit. */
static int
expand(const char *pattern, int32_t id, char *out, size_t cap)
{
	char num[ID_MAX + 1];
	size_t n = 0, nl;
	const char *p;

	nl = (size_t)snprintf(num, sizeof(num), "%ld", (long)id);
	for (p = pattern; *p != '\0'; ) {
		if (strncmp(p, "{id}", 4) == 0) {
			if (n + nl >= cap)
				return -1;
			memcpy(out + n, num, nl);
			n += nl;
			p += 4;
			continue;
		}
		if (n + 1 >= cap)
			return -1;
		out[n++] = *p++;
	}
	out[n] = '\0';
	return 0;
}

int
klog_authz_replica_pattern_check(const char *pattern, klog_err_t *err)
{
	char p[KLOG_ACL_PRINCIPAL_MAX + 1];

	if (strstr(pattern, "{id}") == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "replica principal "
		    "\"%s\": no {id} in it", pattern);
	if (expand(pattern, INT32_MAX, p, sizeof(p)) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "replica principal: "
		    "longer than %d bytes", KLOG_ACL_PRINCIPAL_MAX);
	return klog_acl_principal_validate(p, err);
}

int
klog_authz_new(const klog_authz_config_t *cfg, klog_authz_t **out,
    klog_err_t *err)
{
	klog_authz_t *a;
	const char *rp = cfg->replica_principal != NULL ?
	    cfg->replica_principal : KLOG_AUTHZ_REPLICA_PRINCIPAL;
	int rc;

	*out = NULL;
	if ((rc = klog_authz_replica_pattern_check(rp, err)) < 0)
		return rc;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	a->allow_everyone = cfg->allow_everyone_if_no_acl;
	a->log = cfg->log;
	if ((cfg->acl_file != NULL &&
	    (a->file = strdup(cfg->acl_file)) == NULL) ||
	    (a->replica = strdup(rp)) == NULL ||
	    (cfg->super_users != NULL &&
	    (a->super_users = strdup(cfg->super_users)) == NULL)) {
		klog_authz_free(a);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	if (a->file != NULL)
		stamp_of(a->file, &a->loaded);
	if ((rc = load_set(a, &a->set, err)) < 0) {
		klog_authz_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

void
klog_authz_free(klog_authz_t *a)
{
	if (a == NULL)
		return;
	klog_acl_set_free(a->set);
	free(a->moved);
	free(a->file);
	free(a->super_users);
	free(a->replica);
	free(a);
}

int
klog_authz_reload(klog_authz_t *a)
{
	struct filestamp now;
	klog_acl_set_t *s;
	klog_err_t err = { 0 };
	int rc;

	if (a->file == NULL)
		return 0;   /* the caller's ACLs: klog_authz_replace() */
	stamp_of(a->file, &now);
	if (stamp_eq(&now, &a->loaded) ||
	    (a->failed_valid && stamp_eq(&now, &a->failed)))
		return 0;
	if (!now.known)
		rc = klog_err_sys(&err, "stat", a->file);
	else
		rc = load_set(a, &s, &err);
	if (rc < 0) {
		/* Reported once for this file (or for its absence). */
		a->failed = now;
		a->failed_valid = 1;
		klog_logger_say(&a->log, KLOG_LEVEL_WARN, "ACLs: %s (keeping "
		    "the %zu ACLs in force)", klog_err_text(&err, rc),
		    klog_acl_count(a->set));
		return rc;
	}
	klog_acl_set_free(a->set);
	a->set = s;
	a->loaded = now;
	a->failed_valid = 0;
	klog_logger_say(&a->log, KLOG_LEVEL_INFO, "ACLs: %s: %zu ACLs in force",
	    a->file, klog_acl_count(s));
	return 1;
}

int
klog_authz_has_file(const klog_authz_t *a)
{
	return a != NULL && a->file != NULL;
}

int
klog_authz_replace(klog_authz_t *a, klog_acl_set_t *s, klog_err_t *err)
{
	int rc;

	if ((rc = broker_rules(a, s, err)) < 0) {
		klog_acl_set_free(s);
		return rc;
	}
	klog_acl_set_free(a->set);
	a->set = s;
	return 0;
}

const klog_acl_set_t *
klog_authz_set(const klog_authz_t *a)
{
	return a != NULL ? a->set : NULL;
}

/* One refusal line, a second at most. */
static void
refused(klog_authz_t *a, const char *principal, const char *host,
    const char *what, const char *res, const char *name, size_t len,
    const char *why)
{
	int64_t now = klog_clock_mono_ms();
	char more[64] = "";

	if (a->logged_ms != 0 && now - a->logged_ms < LOG_EVERY_MS) {
		a->suppressed++;
		return;
	}
	a->logged_ms = now;
	if (a->suppressed > 0)
		snprintf(more, sizeof(more), " (and %llu more refusals not "
		    "logged)", (unsigned long long)a->suppressed);
	klog_logger_say(&a->log, KLOG_LEVEL_WARN, "ACLs: %s from %s denied %s "
	    "on %s %.*s: %s%s", principal, host != NULL ? host :
	    "an unknown host", what, res, (int)(len > KLOG_ACL_NAME_MAX ?
	    KLOG_ACL_NAME_MAX : len), name != NULL ? name : "", why, more);
	a->suppressed = 0;
}

static const char *
why_denied(klog_acl_verdict_t v)
{
	switch (v) {
	case KLOG_ACL_DENIED_NO_ACL:
		return "no ACL names it";
	case KLOG_ACL_DENIED_BY_ACL:
		return "a DENY ACL matched";
	default:
		return "no ACL allows it";
	}
}

/* The decision, not logged: 1 allowed, else 0 with *v why. */
static int
decide(const klog_authz_t *a, const char *principal, const char *host,
    klog_acl_op_t op, klog_acl_res_t res, const char *name, size_t len,
    klog_acl_verdict_t *v)
{
	char buf[KLOG_ACL_NAME_MAX + 1];

	if (res == KLOG_ACL_CLUSTER) {
		name = NULL;
	} else if (len > KLOG_ACL_NAME_MAX) {
		/* No ACL names it, nor could: a super user still passes. */
		*v = klog_acl_decide(a->set, principal, host, op, res, "", NULL);
		return *v == KLOG_ACL_ALLOWED_SUPER_USER;
	} else {
		memcpy(buf, name, len);
		buf[len] = '\0';
		name = buf;
	}
	*v = klog_acl_decide(a->set, principal, host, op, res, name, NULL);
	return *v >= KLOG_ACL_ALLOWED_BY_ACL;
}

int
klog_authz_check(klog_authz_t *a, const char *principal, const char *host,
    klog_acl_op_t op, klog_acl_res_t res, const char *name, size_t len)
{
	klog_acl_verdict_t v;

	if (a == NULL || decide(a, principal, host, op, res, name, len, &v))
		return 1;
	if (res == KLOG_ACL_CLUSTER) {
		name = KLOG_ACL_CLUSTER_NAME;
		len = strlen(name);
	}
	refused(a, principal, host, klog_acl_op_name(op),
	    klog_acl_res_name(res), name, len, why_denied(v));
	return 0;
}

int
klog_authz_allowed(klog_authz_t *a, const char *principal, const char *host,
    klog_acl_op_t op, klog_acl_res_t res, const char *name, size_t len)
{
	klog_acl_verdict_t v;

	return a == NULL || decide(a, principal, host, op, res, name, len, &v);
}

int
klog_authz_visible(klog_authz_t *a, const char *principal, const char *host,
    const char *topic, size_t len)
{
	klog_acl_verdict_t v;

	return a == NULL || decide(a, principal, host, KLOG_ACL_DESCRIBE,
	    KLOG_ACL_TOPIC, topic, len, &v);
}

int
klog_authz_split(klog_authz_t *a, const char *principal, const char *host,
    klog_acl_op_t op, void *parts, size_t size, size_t topic_off, uint32_t n)
{
	uint8_t *p = parts, *moved;
	klog_str_t t, last = { NULL, 0 };
	uint32_t kept = 0, out = 0;
	int ok = 1;

	if (a == NULL || n == 0)
		return (int)n;
	if (klog_buf_grow(&a->moved, &a->moved_cap, (size_t)n * size) < 0)
		return -KLOG_ENOMEM;
	moved = a->moved;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&t, p + (size_t)i * size + topic_off, sizeof(t));
		if (i == 0 || t.len != last.len ||
		    memcmp(t.p, last.p, t.len) != 0)
			ok = klog_authz_check(a, principal, host, op,
			    KLOG_ACL_TOPIC, t.p, t.len);
		last = t;
		if (ok)
			memmove(p + (size_t)kept++ * size, p + (size_t)i * size,
			    size);
		else
			memcpy(moved + (size_t)out++ * size,
			    p + (size_t)i * size, size);
	}
	memcpy(p + (size_t)kept * size, moved, (size_t)out * size);
	return (int)kept;
}

int
klog_authz_create_topic(klog_authz_t *a, const char *principal,
    const char *host, const char *topic, size_t len)
{
	klog_acl_verdict_t v;

	if (a == NULL || decide(a, principal, host, KLOG_ACL_CREATE,
	    KLOG_ACL_CLUSTER, NULL, 0, &v) || decide(a, principal, host,
	    KLOG_ACL_CREATE, KLOG_ACL_TOPIC, topic, len, &v))
		return 1;
	refused(a, principal, host, "CREATE", "CLUSTER kafka-cluster or TOPIC",
	    topic, len, why_denied(v));
	return 0;
}

int
klog_authz_replica(klog_authz_t *a, const char *principal, const char *host,
    int32_t replica_id)
{
	char want[KLOG_ACL_PRINCIPAL_MAX + 1], what[64];
	size_t n;

	if (a == NULL)
		return 1;
	if (!klog_authz_check(a, principal, host, KLOG_ACL_CLUSTER_ACTION,
	    KLOG_ACL_CLUSTER, NULL, 0))
		return 0;
	if (expand(a->replica, replica_id, want, sizeof(want)) == 0 &&
	    strncmp(principal, want, (n = strlen(want))) == 0 &&
	    (principal[n] == '\0' || principal[n] == ','))
		return 1;
	snprintf(what, sizeof(what), "replica fetches as broker %ld",
	    (long)replica_id);
	refused(a, principal, host, what, "CLUSTER", KLOG_ACL_CLUSTER_NAME,
	    strlen(KLOG_ACL_CLUSTER_NAME), "not that broker's principal");
	return 0;
}
