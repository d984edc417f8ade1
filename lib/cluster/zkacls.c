/* Kafka's ACLs in ZooKeeper, as its AclAuthorizer keeps them; see
 * zkacls.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "klog/base/json.h"
#include "klog/cluster/zkacls.h"

/* Bounds of an entry's strings as read: a principal as acl.h bounds it,
 * the others well over the longest word Kafka writes (a host may be a
 * name, which Kafka allows and never matches). */
#define HOST_MAX 255
#define WORD_MAX 63

static const char *const res_names[KLOG_ACL_RES_COUNT] = {
	"Topic", "Group", "Cluster",
};
static const char *const op_names[KLOG_ACL_OP_COUNT] = {
	"Read", "Write", "Create", "Delete", "Alter", "Describe",
	"ClusterAction", "DescribeConfigs", "All",
};
static const char *const perm_names[KLOG_ACL_PERM_COUNT] = {
	"Allow", "Deny",
};

/* Kafka's operations that no request of klog's needs: an entry of one is
 * kept but never decides (zkacls.h). */
static const char *const foreign_ops[] = {
	"AlterConfigs", "IdempotentWrite", "CreateTokens",
	"DescribeTokens",
};

/* The patterns and types a klog broker reads: a cluster is never
 * prefixed (acl.h). */
static const struct {
	klog_acl_res_t res;
	klog_acl_pattern_t pattern;
} kinds[] = {
	{ KLOG_ACL_TOPIC, KLOG_ACL_LITERAL },
	{ KLOG_ACL_GROUP, KLOG_ACL_LITERAL },
	{ KLOG_ACL_CLUSTER, KLOG_ACL_LITERAL },
	{ KLOG_ACL_TOPIC, KLOG_ACL_PREFIXED },
	{ KLOG_ACL_GROUP, KLOG_ACL_PREFIXED },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

const char *
klog_zkacls_res_name(klog_acl_res_t res)
{
	return (unsigned)res < KLOG_ACL_RES_COUNT ? res_names[res] : NULL;
}

const char *
klog_zkacls_op_name(klog_acl_op_t op)
{
	return (unsigned)op < KLOG_ACL_OP_COUNT ? op_names[op] : NULL;
}

const char *
klog_zkacls_perm_name(klog_acl_perm_t perm)
{
	return (unsigned)perm < KLOG_ACL_PERM_COUNT ? perm_names[perm] : NULL;
}

/* ---- paths ---- */

int
klog_zkacls_type_path(klog_acl_res_t res, klog_acl_pattern_t pattern,
    char *buf, size_t size)
{
	const char *type = klog_zkacls_res_name(res);
	int w;

	if (type == NULL || (unsigned)pattern >= KLOG_ACL_PATTERN_COUNT)
		return -KLOG_EINVAL;
	w = snprintf(buf, size, "%s/%s", pattern == KLOG_ACL_LITERAL ?
	    KLOG_ZKACLS_LITERAL : KLOG_ZKACLS_PREFIXED, type);
	return w < 0 || (size_t)w >= size ? -KLOG_ETOOBIG : 0;
}

int
klog_zkacls_path(klog_acl_res_t res, klog_acl_pattern_t pattern,
    const char *name, char *buf, size_t size, klog_err_t *err)
{
	size_t n;
	int rc;

	if (*name == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return klog_err_set(err, -KLOG_EINVAL, "%s: a name that "
		    "cannot be a ZooKeeper node's (empty, '.', '..' or "
		    "holding '/')", name);
	if ((rc = klog_zkacls_type_path(res, pattern, buf, size)) < 0)
		return klog_err_set(err, rc, "%s: no ACL node for that "
		    "resource", name);
	n = strlen(buf);
	if (n + 1 + strlen(name) + 1 > size)
		return klog_err_set(err, -KLOG_EINVAL, "%s: a name too long",
		    name);
	buf[n] = '/';
	strcpy(buf + n + 1, name);
	return 0;
}

int
klog_zkacls_owns(const char *path)
{
	char type[KLOG_ZK_PATH_MAX];
	size_t n;

	for (size_t i = 0; i < NKINDS; i++) {
		if (klog_zkacls_type_path(kinds[i].res, kinds[i].pattern, type,
		    sizeof(type)) < 0)
			continue;
		n = strlen(type);
		/* The type node itself, or one node right under it. */
		if (strncmp(path, type, n) == 0 && (path[n] == '\0' ||
		    (path[n] == '/' && path[n + 1] != '\0' &&
		    strchr(path + n + 1, '/') == NULL)))
			return 1;
	}
	return 0;
}

/* ---- a node's entries ---- */

void
klog_zkacls_node_init(klog_zkacls_node_t *n, klog_acl_res_t res,
    klog_acl_pattern_t pattern, const char *name)
{
	memset(n, 0, sizeof(*n));
	n->res = res;
	n->pattern = pattern;
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->version = -1;
}

static void
entry_free(klog_zkacls_entry_t *e)
{
	free(e->principal);
	free(e->perm);
	free(e->op);
	free(e->host);
}

void
klog_zkacls_node_clear(klog_zkacls_node_t *n)
{
	for (size_t i = 0; i < n->n; i++)
		entry_free(&n->e[i]);
	free(n->e);
	n->e = NULL;
	n->n = n->cap = 0;
	n->version = -1;
}

/* Room for one more entry, zeroed, at n->e[n->n]. */
static klog_zkacls_entry_t *
entry_new(klog_zkacls_node_t *n)
{
	klog_zkacls_entry_t *e;

	if (n->n == n->cap) {
		size_t cap = n->cap == 0 ? 4 : 2 * n->cap;

		if ((e = realloc(n->e, cap * sizeof(*e))) == NULL)
			return NULL;
		n->e = e;
		n->cap = cap;
	}
	e = &n->e[n->n];
	memset(e, 0, sizeof(*e));
	return e;
}

static int
same_acl(const klog_acl_t *a, const klog_acl_t *b)
{
	return a->perm == b->perm && a->op == b->op && a->res == b->res &&
	    a->pattern == b->pattern && strcmp(a->name, b->name) == 0 &&
	    strcmp(a->host, b->host) == 0 &&
	    strcmp(a->principal, b->principal) == 0;
}

int
klog_zkacls_node_add(klog_zkacls_node_t *n, const klog_acl_t *a,
    klog_err_t *err)
{
	klog_zkacls_entry_t *e;
	klog_acl_t acl = *a;
	int rc;

	if ((rc = klog_acl_validate(&acl, err)) < 0)
		return rc;
	if (acl.res != n->res || acl.pattern != n->pattern ||
	    strcmp(acl.name, n->name) != 0)
		return klog_err_set(err, -KLOG_EINVAL, "an ACL of another "
		    "resource than the node's");
	/* The JSON is text: a principal from a command line may not be. */
	if (!klog_utf8_valid(acl.principal, strlen(acl.principal)))
		return klog_err_set(err, -KLOG_EINVAL, "a principal that is "
		    "not UTF-8");
	for (size_t i = 0; i < n->n; i++)
		if (n->e[i].known && same_acl(&n->e[i].acl, &acl))
			return 0;
	if ((e = entry_new(n)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	e->principal = strdup(acl.principal);
	e->perm = strdup(perm_names[acl.perm]);
	e->op = strdup(op_names[acl.op]);
	e->host = strdup(acl.host);
	if (e->principal == NULL || e->perm == NULL || e->op == NULL ||
	    e->host == NULL) {
		entry_free(e);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	e->known = 1;
	e->acl = acl;
	n->n++;
	return 1;
}

size_t
klog_zkacls_node_remove(klog_zkacls_node_t *n, const klog_acl_filter_t *f)
{
	size_t kept = 0, removed = 0;

	for (size_t i = 0; i < n->n; i++) {
		if (n->e[i].known && klog_acl_filter_match(f, &n->e[i].acl)) {
			entry_free(&n->e[i]);
			removed++;
			continue;
		}
		n->e[kept++] = n->e[i];
	}
	n->n = kept;
	return removed;
}

/* ---- the JSON ---- */

static void
put_member(klog_buf_t *b, const char *key, const char *value, int comma)
{
	if (comma)
		klog_buf_put(b, ",", 1);
	klog_json_put_string(b, key, strlen(key));
	klog_buf_put(b, ":", 1);
	klog_json_put_string(b, value, strlen(value));
}

int
klog_zkacls_encode(klog_buf_t *b, const klog_zkacls_node_t *n)
{
	static const char head[] = "{\"version\":1,\"acls\":[";

	klog_buf_put(b, head, sizeof(head) - 1);
	for (size_t i = 0; i < n->n; i++) {
		klog_buf_put(b, i > 0 ? ",{" : "{", i > 0 ? 2 : 1);
		put_member(b, "principal", n->e[i].principal, 0);
		put_member(b, "permissionType", n->e[i].perm, 1);
		put_member(b, "operation", n->e[i].op, 1);
		put_member(b, "host", n->e[i].host, 1);
		klog_buf_put(b, "}", 1);
	}
	klog_buf_put(b, "]}", 2);
	return b->failed ? -KLOG_ENOMEM : 0;
}

enum { E_PRINCIPAL, E_PERM, E_OP, E_HOST, E_NFIELDS };
static const char *const e_fields[E_NFIELDS] = {
	"principal", "permissionType", "operation", "host",
};
static const size_t e_max[E_NFIELDS] = {
	KLOG_ACL_PRINCIPAL_MAX, WORD_MAX, WORD_MAX, HOST_MAX,
};

/* One string member of an entry, unescaped, into a new string. */
static int
entry_member(klog_json_rd_t *r, int field, const char *key, size_t key_len,
    void *ctx)
{
	klog_zkacls_entry_t *e = ctx;
	char **slot[E_NFIELDS] = { &e->principal, &e->perm, &e->op, &e->host };
	klog_json_member_t m;
	klog_buf_t v;
	int rc;

	(void)key;
	(void)key_len;
	if (field < 0)
		return 0;  /* a later writer's key */
	if ((rc = klog_json_rd_scalar(r, &m)) < 0)
		return rc;
	if (m.type != KLOG_JSON_STRING)
		return klog_json_rd_fail(r, "%s: not a string",
		    e_fields[field]);
	klog_buf_init(&v);
	if ((rc = klog_json_unescape(&v, m.raw, m.raw_len)) < 0)
		goto out;
	if (v.len == 0 || v.len > e_max[field] ||
	    memchr(v.data, '\0', v.len) != NULL) {
		rc = klog_json_rd_fail(r, "%s: empty, over %zu bytes or "
		    "holding a NUL", e_fields[field], e_max[field]);
		goto out;
	}
	klog_buf_put(&v, "", 1);
	if (v.failed) {
		rc = -KLOG_ENOMEM;
		goto out;
	}
	*slot[field] = (char *)v.data;
	return 1;
out:
	klog_buf_free(&v);
	return rc;
}

static int
is_foreign_op(const char *op)
{
	for (size_t i = 0; i < sizeof(foreign_ops) / sizeof(foreign_ops[0]);
	    i++)
		if (strcasecmp(op, foreign_ops[i]) == 0)
			return 1;
	return 0;
}

/*
 * What an entry read means to klog: known (e->acl), foreign (kept, never
 * deciding), or refused (-KLOG_EINVAL through r).
 */
static int
classify(klog_json_rd_t *r, const klog_zkacls_node_t *n,
    klog_zkacls_entry_t *e)
{
	klog_acl_t *a = &e->acl;
	klog_err_t why = { 0 };
	const char *colon = strchr(e->principal, ':');

	memset(a, 0, sizeof(*a));
	if (klog_acl_perm_parse(e->perm, &a->perm, NULL) < 0)
		return klog_json_rd_fail(r, "permissionType %s: want Allow or "
		    "Deny", e->perm);
	if (colon == NULL || colon == e->principal || colon[1] == '\0')
		return klog_json_rd_fail(r, "principal %s: want TYPE:NAME",
		    e->principal);
	if (klog_acl_op_parse(e->op, &a->op, NULL) < 0) {
		if (is_foreign_op(e->op))
			return 0;
		return klog_json_rd_fail(r, "operation %s: not one of Kafka's",
		    e->op);
	}
	if (strncmp(e->principal, "User:", 5) != 0 ||
	    klog_acl_host_parse(e->host, a->host, NULL) < 0)
		return 0;
	a->res = n->res;
	a->pattern = n->pattern;
	snprintf(a->name, sizeof(a->name), "%s", n->name);
	snprintf(a->principal, sizeof(a->principal), "%s", e->principal);
	if (klog_acl_validate(a, &why) < 0)
		return klog_json_rd_fail(r, "%s", why.msg);
	e->known = 1;
	return 0;
}

static int
acl_elem(klog_json_rd_t *r, void *ctx)
{
	klog_zkacls_node_t *n = ctx;
	klog_zkacls_entry_t *e;
	int rc;

	if (klog_json_rd_peek(r) != '{')
		return klog_json_rd_fail(r, "acls: an element not an object");
	if ((e = entry_new(n)) == NULL)
		return -KLOG_ENOMEM;
	if ((rc = klog_json_rd_object(r, e_fields, E_NFIELDS, entry_member,
	    e)) < 0 || (rc = classify(r, n, e)) < 0) {
		entry_free(e);
		return rc;
	}
	n->n++;
	return 0;
}

enum { N_VERSION, N_ACLS, N_NFIELDS };
static const char *const n_fields[N_NFIELDS] = { "version", "acls" };

static int
node_member(klog_json_rd_t *r, int field, const char *key, size_t key_len,
    void *ctx)
{
	int64_t version;
	int rc;

	(void)key;
	(void)key_len;
	switch (field) {
	case N_VERSION:
		rc = klog_json_rd_int(r, "version", 1, 1, &version);
		break;
	case N_ACLS:
		if (klog_json_rd_peek(r) != '[')
			return klog_json_rd_fail(r, "acls: not an array");
		rc = klog_json_rd_array(r, acl_elem, ctx);
		break;
	default:
		return 0;  /* a later writer's key */
	}
	return rc < 0 ? rc : 1;
}

int
klog_zkacls_parse(const char *s, size_t len, klog_zkacls_node_t *n,
    klog_err_t *err)
{
	klog_json_rd_t r;
	int32_t version = n->version;
	int rc;

	klog_zkacls_node_clear(n);
	n->version = version;
	klog_json_rd_init(&r, s, len, "ACL JSON", err);
	if ((rc = klog_json_rd_object(&r, n_fields, N_NFIELDS, node_member,
	    n)) < 0 || (rc = klog_json_rd_end(&r)) < 0) {
		if (rc == -KLOG_ENOMEM)
			klog_err_set(err, rc, "out of memory");
		klog_zkacls_node_clear(n);
		n->version = version;
	}
	return rc;
}

/* ---- the nodes ---- */

int
klog_zkacls_read(klog_zk_t *zk, klog_zkacls_node_t *n, int watch,
    klog_err_t *err)
{
	char path[KLOG_ZK_PATH_MAX], *data = NULL;
	klog_err_t why = { 0 };
	klog_zk_stat_t st;
	size_t len = 0;
	int rc;

	klog_zkacls_node_clear(n);
	if ((rc = klog_zkacls_path(n->res, n->pattern, n->name, path,
	    sizeof(path), err)) < 0 ||
	    (rc = klog_zk_get(zk, path, watch, &data, &len, &st, err)) < 0)
		return rc;
	n->version = st.version;
	/* A bad node is corrupt data, as a bad line of an ACL file. */
	if ((rc = klog_zkacls_parse(data, len, n, &why)) < 0)
		rc = klog_err_set(err, rc == -KLOG_EINVAL ? -KLOG_ECORRUPT :
		    rc, "%s: %s", path, why.msg);
	free(data);
	return rc;
}

int
klog_zkacls_write(klog_zk_t *zk, const klog_zkacls_node_t *n,
    klog_err_t *err)
{
	char path[KLOG_ZK_PATH_MAX];
	klog_buf_t b;
	int rc;

	if ((rc = klog_zkacls_path(n->res, n->pattern, n->name, path,
	    sizeof(path), err)) < 0)
		return rc;
	/* As Kafka's AclAuthorizer: a pattern without ACLs has no node. */
	if (n->n == 0)
		return n->version < 0 ? 0 : klog_zk_delete(zk, path,
		    n->version, err);
	klog_buf_init(&b);
	if ((rc = klog_zkacls_encode(&b, n)) < 0)
		rc = klog_err_set(err, rc, "%s: out of memory", path);
	else if (n->version < 0)
		rc = klog_zk_create(zk, path, b.data, b.len, 0, err);
	else
		rc = klog_zk_set(zk, path, b.data, b.len, n->version, err);
	klog_buf_free(&b);
	return rc;
}

int
klog_zkacls_edit(klog_zk_t *zk, klog_acl_res_t res,
    klog_acl_pattern_t pattern, const char *name, klog_zkacls_edit_fn fn,
    void *arg, klog_err_t *err)
{
	klog_zkacls_node_t n;
	int rc = -KLOG_EBUSY;

	klog_zkacls_node_init(&n, res, pattern, name);
	for (int tries = 0; tries < KLOG_ZKACLS_TRIES && (rc == -KLOG_EBUSY ||
	    rc == -KLOG_EEXIST || rc == -KLOG_ENOENT); tries++) {
		rc = klog_zkacls_read(zk, &n, 0, err);
		if (rc == 0 || rc == -KLOG_ENOENT)
			rc = fn(&n, arg, err);
		if (rc > 0)
			rc = klog_zkacls_write(zk, &n, err);
		klog_zkacls_node_clear(&n);
	}
	return rc;
}

int
klog_zkacls_mkdirs(klog_zk_t *zk, klog_err_t *err)
{
	char path[KLOG_ZK_PATH_MAX];
	int rc;

	for (size_t i = 0; i < NKINDS; i++)
		if ((rc = klog_zkacls_type_path(kinds[i].res, kinds[i].pattern,
		    path, sizeof(path))) < 0 ||
		    (rc = klog_zk_mkdirs(zk, path, err)) < 0)
			return rc;
	return 0;
}

/* The known entries of one node into s. */
static int
load_node(klog_zk_t *zk, klog_zkacls_node_t *n, int watch,
    klog_acl_set_t *s, size_t *foreign, klog_err_t *err)
{
	int rc = klog_zkacls_read(zk, n, watch, err);

	if (rc == -KLOG_ENOENT)
		return 0;  /* gone since the listing */
	for (size_t i = 0; rc == 0 && i < n->n; i++) {
		if (!n->e[i].known) {
			(*foreign)++;
			continue;
		}
		if ((rc = klog_acl_add(s, &n->e[i].acl, err)) == -KLOG_EEXIST)
			rc = 0;
	}
	klog_zkacls_node_clear(n);
	return rc;
}

int
klog_zkacls_load(klog_zk_t *zk, int watch, klog_acl_set_t *s,
    size_t *foreign, klog_err_t *err)
{
	char type[KLOG_ZK_PATH_MAX];
	klog_zk_list_t names = { 0 };
	klog_zkacls_node_t n;
	size_t skipped = 0;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < NKINDS; i++) {
		if ((rc = klog_zkacls_type_path(kinds[i].res, kinds[i].pattern,
		    type, sizeof(type))) < 0)
			break;
		rc = klog_zk_children(zk, type, watch, &names, err);
		if (rc == -KLOG_ENOENT) {
			rc = 0;
			continue;
		}
		for (size_t j = 0; rc == 0 && j < names.n; j++) {
			/* Cut to fit, it would be another pattern's. */
			if (strlen(names.names[j]) > KLOG_ACL_NAME_MAX) {
				rc = klog_err_set(err, -KLOG_EINVAL, "%s: a "
				    "node whose name is over %d bytes", type,
				    KLOG_ACL_NAME_MAX);
				break;
			}
			klog_zkacls_node_init(&n, kinds[i].res,
			    kinds[i].pattern, names.names[j]);
			rc = load_node(zk, &n, watch, s, &skipped, err);
		}
		klog_zk_list_free(&names);
	}
	if (foreign != NULL)
		*foreign = skipped;
	return rc;
}
