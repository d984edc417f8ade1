/* Kafka's ACLs and its authorizer; see acl.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "klog/auth/acl.h"

/* One ACL of a set, with what the decision reads often worked out once;
 * first, so that a probe of a binary search reads one cache line (the
 * length, the type, the pattern and the name's start). */
struct rule {
	size_t namelen;
	unsigned ops;       /* the operations it matches, a bit each */
	klog_acl_t acl;
};

struct klog_acl_set {
	struct rule **v;    /* sorted by cmp_acl(); each owned */
	size_t n, cap;
	char **supers;      /* owned */
	size_t nsupers;
	int everyone;       /* allow.everyone.if.no.acl.found */
};

#define OP(o) (1u << (o))
#define ALL_OPS (OP(KLOG_ACL_OP_COUNT) - 1)

static const char *const op_names[KLOG_ACL_OP_COUNT] = {
	"READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
	"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALL",
};
static const char *const perm_names[KLOG_ACL_PERM_COUNT] = {
	"ALLOW", "DENY",
};
static const char *const res_names[KLOG_ACL_RES_COUNT] = {
	"TOPIC", "GROUP", "CLUSTER",
};
static const char *const pattern_names[KLOG_ACL_PATTERN_COUNT] = {
	"LITERAL", "PREFIXED",
};

/* The operations of each resource type, as kafka-acls allows them. */
static const unsigned res_ops[KLOG_ACL_RES_COUNT] = {
	[KLOG_ACL_TOPIC] = OP(KLOG_ACL_READ) | OP(KLOG_ACL_WRITE) |
	    OP(KLOG_ACL_CREATE) | OP(KLOG_ACL_DELETE) | OP(KLOG_ACL_ALTER) |
	    OP(KLOG_ACL_DESCRIBE) | OP(KLOG_ACL_DESCRIBE_CONFIGS) |
	    OP(KLOG_ACL_ALL),
	[KLOG_ACL_GROUP] = OP(KLOG_ACL_READ) | OP(KLOG_ACL_DELETE) |
	    OP(KLOG_ACL_DESCRIBE) | OP(KLOG_ACL_ALL),
	[KLOG_ACL_CLUSTER] = OP(KLOG_ACL_CREATE) | OP(KLOG_ACL_ALTER) |
	    OP(KLOG_ACL_DESCRIBE) | OP(KLOG_ACL_CLUSTER_ACTION) |
	    OP(KLOG_ACL_DESCRIBE_CONFIGS) | OP(KLOG_ACL_ALL),
};

/* ---- names ---- */

static const char *
name_of(const char *const *names, int n, int i)
{
	return i >= 0 && i < n ? names[i] : "UNKNOWN";
}

const char *
klog_acl_op_name(klog_acl_op_t op)
{
	return name_of(op_names, KLOG_ACL_OP_COUNT, (int)op);
}

const char *
klog_acl_perm_name(klog_acl_perm_t perm)
{
	return name_of(perm_names, KLOG_ACL_PERM_COUNT, (int)perm);
}

const char *
klog_acl_res_name(klog_acl_res_t res)
{
	return name_of(res_names, KLOG_ACL_RES_COUNT, (int)res);
}

const char *
klog_acl_pattern_name(klog_acl_pattern_t pattern)
{
	return name_of(pattern_names, KLOG_ACL_PATTERN_COUNT, (int)pattern);
}

/* s, for a message: at most 64 bytes, anything but printable ASCII as
 * '?', so that no message carries control bytes. */
static const char *
shown(const char *s, char *buf, size_t cap)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 1 < cap; i++)
		buf[i] = s[i] > ' ' && s[i] < 0x7f ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

/* Whether s is name in any case, or name without its underscores
 * ("ClusterAction"). */
static int
word_is(const char *s, const char *name)
{
	if (strcasecmp(s, name) == 0)
		return 1;
	for (; *name != '\0'; name++) {
		if (*name == '_')
			continue;
		if (tolower((unsigned char)*s) != tolower((unsigned char)*name))
			return 0;
		s++;
	}
	return *s == '\0';
}

static int
word_parse(const char *what, const char *s, const char *const *names,
    int n, int *out, klog_err_t *err)
{
	char buf[65], list[128] = "";

	for (int i = 0; i < n; i++)
		if (word_is(s, names[i])) {
			*out = i;
			return 0;
		}
	for (int i = 0; i < n; i++) {
		strcat(list, names[i]);
		strcat(list, i + 1 < n ? ", " : "");
	}
	return klog_err_set(err, -KLOG_EINVAL, "%s \"%s\": not one of %s",
	    what, shown(s, buf, sizeof(buf)), list);
}

int
klog_acl_op_parse(const char *s, klog_acl_op_t *op, klog_err_t *err)
{
	int i, rc = word_parse("operation", s, op_names, KLOG_ACL_OP_COUNT,
	    &i, err);

	if (rc == 0)
		*op = (klog_acl_op_t)i;
	return rc;
}

int
klog_acl_perm_parse(const char *s, klog_acl_perm_t *perm, klog_err_t *err)
{
	int i, rc = word_parse("permission", s, perm_names,
	    KLOG_ACL_PERM_COUNT, &i, err);

	if (rc == 0)
		*perm = (klog_acl_perm_t)i;
	return rc;
}

int
klog_acl_res_parse(const char *s, klog_acl_res_t *res, klog_err_t *err)
{
	int i, rc = word_parse("resource type", s, res_names,
	    KLOG_ACL_RES_COUNT, &i, err);

	if (rc == 0)
		*res = (klog_acl_res_t)i;
	return rc;
}

int
klog_acl_pattern_parse(const char *s, klog_acl_pattern_t *pattern,
    klog_err_t *err)
{
	int i, rc = word_parse("pattern type", s, pattern_names,
	    KLOG_ACL_PATTERN_COUNT, &i, err);

	if (rc == 0)
		*pattern = (klog_acl_pattern_t)i;
	return rc;
}

/* ---- one ACL ---- */

int
klog_acl_principal_validate(const char *p, klog_err_t *err)
{
	char buf[65];
	size_t len;

	if (p == NULL || p[0] == '\0')
		return klog_err_set(err, -KLOG_EINVAL, "empty principal");
	len = strlen(p);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			return klog_err_set(err, -KLOG_EINVAL, "principal: "
			    "byte 0x%02x not allowed", (unsigned char)p[i]);
	if (strncmp(p, "User:", 5) != 0)
		return klog_err_set(err, -KLOG_EINVAL, "principal \"%s\": "
		    "want User:NAME (Kafka's principal type, as written)",
		    shown(p, buf, sizeof(buf)));
	if (len == 5)
		return klog_err_set(err, -KLOG_EINVAL, "principal \"User:\": "
		    "no name");
	if (len > KLOG_ACL_PRINCIPAL_MAX)
		return klog_err_set(err, -KLOG_EINVAL, "principal longer "
		    "than %d bytes", KLOG_ACL_PRINCIPAL_MAX);
	if (p[len - 1] == ' ')
		return klog_err_set(err, -KLOG_EINVAL, "principal \"%s\": "
		    "ends in a blank", shown(p, buf, sizeof(buf)));
	return 0;
}

int
klog_acl_host_parse(const char *s, char *out, klog_err_t *err)
{
	unsigned char addr[sizeof(struct in6_addr)];
	char buf[65];
	int af;

	if (strcmp(s, KLOG_ACL_WILDCARD) == 0) {
		strcpy(out, KLOG_ACL_WILDCARD);
		return 0;
	}
	af = strchr(s, ':') != NULL ? AF_INET6 : AF_INET;
	if (strlen(s) > KLOG_ACL_HOST_MAX || inet_pton(af, s, addr) != 1 ||
	    inet_ntop(af, addr, out, KLOG_ACL_HOST_MAX + 1) == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "host \"%s\": neither "
		    "* nor an IP address (names are not resolved)",
		    shown(s, buf, sizeof(buf)));
	return 0;
}

/* The name of a, as its resource type and pattern allow. */
static int
name_validate(const klog_acl_t *a, klog_err_t *err)
{
	size_t len = strnlen(a->name, sizeof(a->name));
	char buf[65];

	if (a->res == KLOG_ACL_CLUSTER) {
		if (strcmp(a->name, KLOG_ACL_CLUSTER_NAME) != 0)
			return klog_err_set(err, -KLOG_EINVAL, "cluster "
			    "\"%s\": the cluster is \"" KLOG_ACL_CLUSTER_NAME
			    "\"", shown(a->name, buf, sizeof(buf)));
		if (a->pattern != KLOG_ACL_LITERAL)
			return klog_err_set(err, -KLOG_EINVAL, "the cluster "
			    "is LITERAL, never PREFIXED");
		return 0;
	}
	if (len == 0 || len > KLOG_ACL_NAME_MAX)
		return klog_err_set(err, -KLOG_EINVAL, "%s name: 1 to %d "
		    "bytes", klog_acl_res_name(a->res), KLOG_ACL_NAME_MAX);
	for (size_t i = 0; i < len; i++)
		if (a->name[i] <= ' ' || a->name[i] >= 0x7f)
			return klog_err_set(err, -KLOG_EINVAL, "%s name: byte "
			    "0x%02x not allowed (printable ASCII, no blanks)",
			    klog_acl_res_name(a->res),
			    (unsigned char)a->name[i]);
	if (a->pattern == KLOG_ACL_PREFIXED &&
	    strcmp(a->name, KLOG_ACL_WILDCARD) == 0)
		return klog_err_set(err, -KLOG_EINVAL, "a PREFIXED name "
		    "cannot be \"*\" (every name is the LITERAL \"*\")");
	return 0;
}

/* "READ, DESCRIBE, ..." for the operations in mask. */
static void
ops_list(unsigned mask, char *buf, size_t cap)
{
	buf[0] = '\0';
	for (int op = 0; op < KLOG_ACL_OP_COUNT; op++)
		if (mask & OP(op)) {
			if (buf[0] != '\0')
				strncat(buf, ", ", cap - strlen(buf) - 1);
			strncat(buf, op_names[op], cap - strlen(buf) - 1);
		}
}

int
klog_acl_validate(klog_acl_t *a, klog_err_t *err)
{
	char ops[128];
	int rc;

	if ((unsigned)a->perm >= KLOG_ACL_PERM_COUNT ||
	    (unsigned)a->op >= KLOG_ACL_OP_COUNT ||
	    (unsigned)a->res >= KLOG_ACL_RES_COUNT ||
	    (unsigned)a->pattern >= KLOG_ACL_PATTERN_COUNT)
		return klog_err_set(err, -KLOG_EINVAL, "an ACL field out of "
		    "range");
	if (memchr(a->principal, '\0', sizeof(a->principal)) == NULL ||
	    memchr(a->name, '\0', sizeof(a->name)) == NULL ||
	    memchr(a->host, '\0', sizeof(a->host)) == NULL)
		return klog_err_set(err, -KLOG_EINVAL, "an ACL string "
		    "without its end");
	if ((rc = klog_acl_principal_validate(a->principal, err)) < 0 ||
	    (rc = klog_acl_host_parse(a->host, a->host, err)) < 0 ||
	    (rc = name_validate(a, err)) < 0)
		return rc;
	if (!(res_ops[a->res] & OP(a->op))) {
		ops_list(res_ops[a->res], ops, sizeof(ops));
		return klog_err_set(err, -KLOG_EINVAL, "operation %s does not "
		    "apply to a %s (its operations: %s)", op_names[a->op],
		    res_names[a->res], ops);
	}
	return 0;
}

void
klog_acl_filter_any(klog_acl_filter_t *f)
{
	f->perm = f->op = f->res = f->pattern = -1;
	f->name = f->host = f->principal = NULL;
}

int
klog_acl_filter_match(const klog_acl_filter_t *f, const klog_acl_t *a)
{
	return (f->perm < 0 || f->perm == (int)a->perm) &&
	    (f->op < 0 || f->op == (int)a->op) &&
	    (f->res < 0 || f->res == (int)a->res) &&
	    (f->pattern < 0 || f->pattern == (int)a->pattern) &&
	    (f->name == NULL || strcmp(f->name, a->name) == 0) &&
	    (f->host == NULL || strcmp(f->host, a->host) == 0) &&
	    (f->principal == NULL || strcmp(f->principal, a->principal) == 0);
}

/* ---- the set ---- */

static int
cmp_int(int x, int y)
{
	return (x > y) - (x < y);
}

/* Bytes a[0..alen) against b[0..blen), as strcmp() orders them; a loop
 * of its own: names are short and differ early, where a call to memcmp()
 * cost a fifth of a decision. */
static int
cmp_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;

	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return (unsigned char)a[i] < (unsigned char)b[i] ?
			    -1 : 1;
	return cmp_int(alen > blen, alen < blen);
}

/* r's resource against (res, pattern, name[0..len)). */
static int
cmp_resource(const struct rule *r, int res, int pattern, const char *name,
    size_t len)
{
	int c;

	if ((c = cmp_int((int)r->acl.res, res)) != 0 ||
	    (c = cmp_int((int)r->acl.pattern, pattern)) != 0)
		return c;
	return cmp_bytes(r->acl.name, r->namelen, name, len);
}

/* The set's order (acl.h): the resource, then the principal, so that
 * every lookup of the decision is a binary search. */
static int
cmp_acl(const struct rule *r, const klog_acl_t *a)
{
	int c;

	if ((c = cmp_resource(r, (int)a->res, (int)a->pattern, a->name,
	    strlen(a->name))) != 0 ||
	    (c = strcmp(r->acl.principal, a->principal)) != 0 ||
	    (c = strcmp(r->acl.host, a->host)) != 0 ||
	    (c = cmp_int((int)r->acl.op, (int)a->op)) != 0)
		return c;
	return cmp_int((int)r->acl.perm, (int)a->perm);
}

int
klog_acl_set_new(klog_acl_set_t **s)
{
	if ((*s = calloc(1, sizeof(**s))) == NULL)
		return -KLOG_ENOMEM;
	return 0;
}

static void
supers_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
klog_acl_set_free(klog_acl_set_t *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	supers_free(s->supers, s->nsupers);
	free(s);
}

/* What r matches: ALL everything; an ALLOW of READ, WRITE, DELETE or
 * ALTER DESCRIBE as well (Kafka's implied DESCRIBE); a DENY only its own
 * operation, so that denying READ still lets a client see the topic. */
static unsigned
rule_ops(const klog_acl_t *a)
{
	unsigned m = OP(a->op);

	if (a->op == KLOG_ACL_ALL)
		return ALL_OPS;
	if (a->perm == KLOG_ACL_ALLOW && (m & (OP(KLOG_ACL_READ) |
	    OP(KLOG_ACL_WRITE) | OP(KLOG_ACL_DELETE) | OP(KLOG_ACL_ALTER))))
		m |= OP(KLOG_ACL_DESCRIBE);
	return m;
}

int
klog_acl_add(klog_acl_set_t *s, const klog_acl_t *a, klog_err_t *err)
{
	struct rule *r, **v;
	size_t lo = 0, hi = s->n, mid;
	int c, rc;

	if ((r = malloc(sizeof(*r))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	r->acl = *a;
	if ((rc = klog_acl_validate(&r->acl, err)) < 0) {
		free(r);
		return rc;
	}
	r->namelen = strlen(r->acl.name);
	r->ops = rule_ops(&r->acl);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = cmp_acl(s->v[mid], &r->acl)) == 0) {
			free(r);
			return -KLOG_EEXIST;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;

		if ((v = realloc(s->v, cap * sizeof(*v))) == NULL) {
			free(r);
			return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		}
		s->v = v;
		s->cap = cap;
	}
	memmove(s->v + lo + 1, s->v + lo, (s->n - lo) * sizeof(*s->v));
	s->v[lo] = r;
	s->n++;
	return 0;
}

void
klog_acl_remove(klog_acl_set_t *s, const klog_acl_filter_t *f,
    size_t *removed)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (klog_acl_filter_match(f, &s->v[i]->acl))
			free(s->v[i]);
		else
			s->v[kept++] = s->v[i];
	}
	if (removed != NULL)
		*removed = s->n - kept;
	s->n = kept;
}

size_t
klog_acl_count(const klog_acl_set_t *s)
{
	return s->n;
}

const klog_acl_t *
klog_acl_get(const klog_acl_set_t *s, size_t i)
{
	return i < s->n ? &s->v[i]->acl : NULL;
}

/* One entry of a super.users list, trimmed, into a new string. */
static int
super_take(const char *p, size_t len, char **out, klog_err_t *err)
{
	int rc;

	while (len > 0 && (*p == ' ' || *p == '\t'))
		p++, len--;
	while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
		len--;
	*out = NULL;
	if (len == 0)
		return 0;
	if ((*out = strndup(p, len)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if ((rc = klog_acl_principal_validate(*out, err)) == 0 &&
	    strcmp(*out, KLOG_ACL_ANYONE) == 0)
		rc = klog_err_set(err, -KLOG_EINVAL, "super user "
		    KLOG_ACL_ANYONE ": that would be everyone");
	if (rc < 0) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

int
klog_acl_super_users(klog_acl_set_t *s, const char *list, klog_err_t *err)
{
	size_t n = 0, cap = 1;
	const char *p, *semi;
	char **v, *one;
	int rc = 0;

	for (p = list; *p != '\0'; p++)
		cap += *p == ';';
	if ((v = calloc(cap, sizeof(*v))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	for (p = list; rc == 0; p = semi + 1) {
		if ((semi = strchr(p, ';')) == NULL)
			semi = p + strlen(p);
		if ((rc = super_take(p, (size_t)(semi - p), &one, err)) == 0 &&
		    one != NULL)
			v[n++] = one;
		if (*semi == '\0')
			break;
	}
	if (rc < 0) {
		supers_free(v, n);
		return rc;
	}
	supers_free(s->supers, s->nsupers);
	s->supers = v;
	s->nsupers = n;
	return 0;
}

void
klog_acl_allow_everyone_if_no_acl(klog_acl_set_t *s, int on)
{
	s->everyone = on != 0;
}

/* ---- the decision ---- */

/* A request, and what its lookups found so far. */
struct ask {
	const char *principal;
	const char *host;
	unsigned op;            /* OP(op) */
	int res;
	int named;              /* some ACL names the resource */
	const struct rule *allow, *deny;
};

/* The first index of [lo, hi) whose resource is not below (res, pattern,
 * name[0..len)) and, when principal is not NULL, whose principal is not
 * below it either. */
static size_t
lower(const klog_acl_set_t *s, size_t lo, size_t hi, int res, int pattern,
    const char *name, size_t len, const char *principal)
{
	size_t mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = cmp_resource(s->v[mid], res, pattern, name, len);
		if (c == 0 && principal != NULL)
			c = strcmp(s->v[mid]->acl.principal, principal);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first index whose resource is above (res, pattern, name[0..len)). */
static size_t
upper(const klog_acl_set_t *s, int res, int pattern, const char *name,
    size_t len)
{
	size_t lo = 0, hi = s->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cmp_resource(s->v[mid], res, pattern, name, len) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether r matches the request's host and operation (the principal and
 * the resource were looked up). */
static int
rule_fits(const struct rule *r, const struct ask *q)
{
	return (r->ops & q->op) &&
	    (r->acl.host[0] == '*' ||
	    (q->host != NULL && strcmp(r->acl.host, q->host) == 0));
}

/* The ACLs of principal in the run [a, b) of one resource; 1 once a DENY
 * matched, which decides. */
static int
match_principal(const klog_acl_set_t *s, size_t a, size_t b,
    const char *principal, struct ask *q)
{
	const struct rule *r = s->v[a];
	size_t i = lower(s, a, b, (int)r->acl.res, (int)r->acl.pattern,
	    r->acl.name, r->namelen, principal);

	for (; i < b && strcmp(s->v[i]->acl.principal, principal) == 0; i++) {
		r = s->v[i];
		if (!rule_fits(r, q))
			continue;
		if (r->acl.perm == KLOG_ACL_DENY) {
			q->deny = r;
			return 1;
		}
		if (q->allow == NULL)
			q->allow = r;
	}
	return 0;
}

/* The run [a, b) of one resource name: the request's principal's ACLs,
 * then everyone's. */
static int
match_run(const klog_acl_set_t *s, size_t a, size_t b, struct ask *q)
{
	if (a == b)
		return 0;
	q->named = 1;
	if (match_principal(s, a, b, q->principal, q))
		return 1;
	return strcmp(q->principal, KLOG_ACL_ANYONE) != 0 &&
	    match_principal(s, a, b, KLOG_ACL_ANYONE, q);
}

/* The LITERAL name, equal, or "*". */
static int
match_literal(const klog_acl_set_t *s, const char *name, size_t len,
    struct ask *q)
{
	size_t a = lower(s, 0, s->n, q->res, KLOG_ACL_LITERAL, name, len,
	    NULL);

	/* Most names have no ACL of their own: one search finds that. */
	if (a == s->n || cmp_resource(s->v[a], q->res, KLOG_ACL_LITERAL,
	    name, len) != 0)
		return 0;
	return match_run(s, a, upper(s, q->res, KLOG_ACL_LITERAL, name, len),
	    q);
}

/*
 * Every PREFIXED name that name starts with, longest first.  In the sorted
 * set each such prefix sits at or below name; the walk starts at the
 * last entry not above name[0..len) and goes down.  An entry that is a
 * prefix is matched and passed.  One that is not shares c bytes with the
 * key, and differs below the key after them: every prefix of the key
 * longer than c would sort between it and the key, where nothing is, so
 * the walk goes on from the last entry not above key[0..c).  Each step
 * passes an entry or shortens the key.
 */
static int
match_prefixed(const klog_acl_set_t *s, const char *name, size_t len,
    struct ask *q)
{
	const struct rule *r;
	size_t i = upper(s, q->res, KLOG_ACL_PREFIXED, name, len), a, c;

	while (i > 0 && len > 0) {
		r = s->v[i - 1];
		if ((int)r->acl.res != q->res ||
		    r->acl.pattern != KLOG_ACL_PREFIXED)
			break;
		for (c = 0; c < r->namelen && c < len && r->acl.name[c] ==
		    name[c]; c++)
			;
		if (c < r->namelen) {
			len = c;
			i = upper(s, q->res, KLOG_ACL_PREFIXED, name, len);
			continue;
		}
		a = lower(s, 0, i, q->res, KLOG_ACL_PREFIXED, r->acl.name,
		    r->namelen, NULL);
		if (match_run(s, a, i, q))
			return 1;
		i = a;
	}
	return 0;
}

klog_acl_verdict_t
klog_acl_decide(const klog_acl_set_t *s, const char *principal,
    const char *host, klog_acl_op_t op, klog_acl_res_t res,
    const char *name, const klog_acl_t **acl)
{
	struct ask q = {
		.principal = principal, .host = host, .res = (int)res,
		/* An operation out of range matches nothing. */
		.op = (unsigned)op < KLOG_ACL_OP_COUNT ? OP(op) : 0,
	};
	size_t len;

	if (acl != NULL)
		*acl = NULL;
	for (size_t i = 0; i < s->nsupers; i++)
		if (strcmp(s->supers[i], principal) == 0)
			return KLOG_ACL_ALLOWED_SUPER_USER;
	if (name == NULL)
		name = KLOG_ACL_CLUSTER_NAME;
	len = strlen(name);
	/* A DENY anywhere wins: each lookup stops at the first. */
	if (!match_literal(s, name, len, &q) &&
	    !match_literal(s, KLOG_ACL_WILDCARD, 1, &q))
		match_prefixed(s, name, len, &q);
	if (q.deny != NULL || q.allow != NULL) {
		if (acl != NULL)
			*acl = q.deny != NULL ? &q.deny->acl : &q.allow->acl;
		return q.deny != NULL ? KLOG_ACL_DENIED_BY_ACL :
		    KLOG_ACL_ALLOWED_BY_ACL;
	}
	if (q.named)
		return KLOG_ACL_DENIED_NO_MATCH;
	return s->everyone ? KLOG_ACL_ALLOWED_NO_ACL : KLOG_ACL_DENIED_NO_ACL;
}

int
klog_acl_authorize(const klog_acl_set_t *s, const char *principal,
    const char *host, klog_acl_op_t op, klog_acl_res_t res,
    const char *name)
{
	return klog_acl_decide(s, principal, host, op, res, name, NULL) >=
	    KLOG_ACL_ALLOWED_BY_ACL;
}

/* ---- the decision on a resource type (Kafka's authorizeByResourceType,
 * KIP-679) ---- */

/* Whether the request's principal and the rule's match (one's own ACLs,
 * or everyone's). */
static int
principal_fits(const struct rule *r, const char *principal)
{
	return strcmp(r->acl.principal, principal) == 0 ||
	    strcmp(r->acl.principal, KLOG_ACL_ANYONE) == 0;
}

/* Whether a DENY of the request covers the allowed pattern a. */
static int
denied_pattern(const klog_acl_set_t *s, size_t from, size_t to,
    const struct rule *a, const struct ask *q)
{
	for (size_t i = from; i < to; i++) {
		const struct rule *d = s->v[i];

		if (d->acl.perm != KLOG_ACL_DENY ||
		    !principal_fits(d, q->principal) || !rule_fits(d, q))
			continue;
		if (d->acl.pattern == KLOG_ACL_PREFIXED ?
		    strncmp(a->acl.name, d->acl.name, d->namelen) == 0 :
		    a->acl.pattern == KLOG_ACL_LITERAL &&
		    strcmp(a->acl.name, d->acl.name) == 0)
			return 1;
	}
	return 0;
}

int
klog_acl_authorize_any(const klog_acl_set_t *s, const char *principal,
    const char *host, klog_acl_op_t op, klog_acl_res_t res)
{
	struct ask q = { .principal = principal, .host = host,
	    .res = (int)res,
	    .op = (unsigned)op < KLOG_ACL_OP_COUNT ? OP(op) : 0 };
	size_t from = lower(s, 0, s->n, (int)res, 0, "", 0, NULL), to = from;
	const struct rule *wildcard_allow = NULL;

	for (size_t i = 0; i < s->nsupers; i++)
		if (strcmp(s->supers[i], principal) == 0)
			return 1;
	while (to < s->n && (int)s->v[to]->acl.res == (int)res)
		to++;
	if (from == to)
		return s->everyone;
	for (size_t i = from; i < to; i++) {
		const struct rule *r = s->v[i];

		if (!principal_fits(r, principal) || !rule_fits(r, &q) ||
		    r->acl.pattern != KLOG_ACL_LITERAL ||
		    strcmp(r->acl.name, KLOG_ACL_WILDCARD) != 0)
			continue;
		if (r->acl.perm == KLOG_ACL_DENY)
			return 0;
		wildcard_allow = r;
	}
	if (wildcard_allow != NULL)
		return 1;
	for (size_t i = from; i < to; i++) {
		const struct rule *r = s->v[i];

		if (r->acl.perm == KLOG_ACL_ALLOW &&
		    principal_fits(r, principal) && rule_fits(r, &q) &&
		    !denied_pattern(s, from, to, r, &q))
			return 1;
	}
	return 0;
}
