/*
 * Kafka's ACL rules as acl.h states them: names, one ACL's checks, the
 * set's order, and every rule of the decision (super users, deny wins,
 * the implied DESCRIBE, ALL, User:*, "*", prefixed against literal, hosts,
 * the cluster, no match), then the decision against a brute-force
 * reference over random sets, and its cost.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "klog/auth/acl.h"

#define ALICE "User:alice"
#define BOB "User:bob"

static klog_acl_t
mk(klog_acl_perm_t perm, klog_acl_op_t op, klog_acl_res_t res,
    klog_acl_pattern_t pattern, const char *name, const char *principal)
{
	klog_acl_t a;

	memset(&a, 0, sizeof(a));
	a.perm = perm;
	a.op = op;
	a.res = res;
	a.pattern = pattern;
	snprintf(a.name, sizeof(a.name), "%s", name);
	snprintf(a.host, sizeof(a.host), "*");
	snprintf(a.principal, sizeof(a.principal), "%s", principal);
	return a;
}

static void
add(klog_acl_set_t *s, klog_acl_perm_t perm, klog_acl_op_t op,
    klog_acl_res_t res, klog_acl_pattern_t pattern, const char *name,
    const char *principal)
{
	klog_acl_t a = mk(perm, op, res, pattern, name, principal);
	klog_err_t err = { 0, "" };

	if (klog_acl_add(s, &a, &err) != 0)
		fail_msg("add: %s", err.msg);
}

static klog_acl_set_t *
set_new(void)
{
	klog_acl_set_t *s;

	assert_int_equal(klog_acl_set_new(&s), 0);
	return s;
}

/* Whether principal (from any host) may do op on topic t. */
static int
topic_ok(const klog_acl_set_t *s, const char *principal, klog_acl_op_t op,
    const char *t)
{
	return klog_acl_authorize(s, principal, "10.0.0.9", op, KLOG_ACL_TOPIC,
	    t);
}

/* ---- names and one ACL ---- */

static void
test_names(void **state)
{
	klog_acl_op_t op;
	klog_acl_perm_t perm;
	klog_acl_res_t res;
	klog_acl_pattern_t pat;
	klog_err_t err = { 0, "" };

	(void)state;
	assert_int_equal(klog_acl_op_parse("Read", &op, NULL), 0);
	assert_int_equal(op, KLOG_ACL_READ);
	assert_int_equal(klog_acl_op_parse("ClusterAction", &op, NULL), 0);
	assert_int_equal(op, KLOG_ACL_CLUSTER_ACTION);
	assert_int_equal(klog_acl_op_parse("cluster_action", &op, NULL), 0);
	assert_int_equal(klog_acl_op_parse("CLUSTERACTION", &op, NULL), 0);
	assert_int_equal(klog_acl_op_parse("DescribeConfigs", &op, NULL), 0);
	assert_int_equal(op, KLOG_ACL_DESCRIBE_CONFIGS);
	assert_int_equal(klog_acl_op_parse("all", &op, NULL), 0);
	assert_int_equal(op, KLOG_ACL_ALL);
	assert_int_equal(klog_acl_op_parse("Describe_", &op, NULL),
	    -KLOG_EINVAL);
	assert_int_equal(klog_acl_op_parse("Clu_sterAction", &op, NULL),
	    -KLOG_EINVAL);
	assert_int_equal(klog_acl_op_parse("", &op, NULL), -KLOG_EINVAL);
	assert_int_equal(klog_acl_op_parse("reed\x01", &op, &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "operation \"reed?\": not one of READ, "
	    "WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, "
	    "DESCRIBE_CONFIGS, ALL");
	assert_int_equal(klog_acl_perm_parse("Deny", &perm, NULL), 0);
	assert_int_equal(perm, KLOG_ACL_DENY);
	assert_int_equal(klog_acl_res_parse("cluster", &res, NULL), 0);
	assert_int_equal(res, KLOG_ACL_CLUSTER);
	assert_int_equal(klog_acl_res_parse("TransactionalId", &res, &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "resource type \"TransactionalId\": not "
	    "one of TOPIC, GROUP, CLUSTER");
	assert_int_equal(klog_acl_pattern_parse("Prefixed", &pat, NULL), 0);
	assert_int_equal(pat, KLOG_ACL_PREFIXED);
	assert_int_equal(klog_acl_pattern_parse("match", &pat, NULL),
	    -KLOG_EINVAL);
	assert_string_equal(klog_acl_op_name(KLOG_ACL_CLUSTER_ACTION),
	    "CLUSTER_ACTION");
	assert_string_equal(klog_acl_op_name((klog_acl_op_t)99), "UNKNOWN");
	assert_string_equal(klog_acl_perm_name(KLOG_ACL_ALLOW), "ALLOW");
	assert_string_equal(klog_acl_res_name(KLOG_ACL_GROUP), "GROUP");
	assert_string_equal(klog_acl_pattern_name(KLOG_ACL_LITERAL),
	    "LITERAL");
}

static void
test_principals_and_hosts(void **state)
{
	char host[KLOG_ACL_HOST_MAX + 1], big[KLOG_ACL_PRINCIPAL_MAX + 2];
	klog_err_t err = { 0, "" };

	(void)state;
	assert_int_equal(klog_acl_principal_validate(ALICE, NULL), 0);
	assert_int_equal(klog_acl_principal_validate("User:*", NULL), 0);
	assert_int_equal(klog_acl_principal_validate(
	    "User:CN=writer, OU=Ops Team,O=Acme\\, Inc.,C=DE", NULL), 0);
	assert_int_equal(klog_acl_principal_validate("user:alice", &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "principal \"user:alice\": want "
	    "User:NAME (Kafka's principal type, as written)");
	assert_int_equal(klog_acl_principal_validate("alice", NULL),
	    -KLOG_EINVAL);
	assert_int_equal(klog_acl_principal_validate("User:", NULL),
	    -KLOG_EINVAL);
	assert_int_equal(klog_acl_principal_validate("", NULL), -KLOG_EINVAL);
	assert_int_equal(klog_acl_principal_validate(NULL, NULL),
	    -KLOG_EINVAL);
	assert_int_equal(klog_acl_principal_validate("User:a\tb", &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "principal: byte 0x09 not allowed");
	assert_int_equal(klog_acl_principal_validate("User:a ", NULL),
	    -KLOG_EINVAL);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "User:", 5);
	assert_int_equal(klog_acl_principal_validate(big, NULL), -KLOG_EINVAL);
	big[KLOG_ACL_PRINCIPAL_MAX] = '\0';
	assert_int_equal(klog_acl_principal_validate(big, NULL), 0);

	assert_int_equal(klog_acl_host_parse("*", host, NULL), 0);
	assert_string_equal(host, "*");
	assert_int_equal(klog_acl_host_parse("10.0.0.1", host, NULL), 0);
	assert_string_equal(host, "10.0.0.1");
	assert_int_equal(klog_acl_host_parse("0:0:0:0:0:0:0:1", host, NULL),
	    0);
	assert_string_equal(host, "::1");
	assert_int_equal(klog_acl_host_parse("FE80:0::A", host, NULL), 0);
	assert_string_equal(host, "fe80::a");
	assert_int_equal(klog_acl_host_parse("localhost", host, &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "host \"localhost\": neither * nor an "
	    "IP address (names are not resolved)");
	assert_int_equal(klog_acl_host_parse("10.0.0.256", host, NULL),
	    -KLOG_EINVAL);
	assert_int_equal(klog_acl_host_parse("", host, NULL), -KLOG_EINVAL);
	assert_int_equal(klog_acl_host_parse("**", host, NULL), -KLOG_EINVAL);
}

static void
test_validate(void **state)
{
	klog_acl_t a;
	klog_err_t err = { 0, "" };

	(void)state;
	a = mk(KLOG_ACL_ALLOW, KLOG_ACL_WRITE, KLOG_ACL_GROUP,
	    KLOG_ACL_LITERAL, "g", ALICE);
	assert_int_equal(klog_acl_validate(&a, &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, "operation WRITE does not apply to a "
	    "GROUP (its operations: READ, DELETE, DESCRIBE, ALL)");
	a = mk(KLOG_ACL_ALLOW, KLOG_ACL_CLUSTER_ACTION, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "t", ALICE);
	assert_int_equal(klog_acl_validate(&a, NULL), -KLOG_EINVAL);
	a = mk(KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_CLUSTER,
	    KLOG_ACL_LITERAL, KLOG_ACL_CLUSTER_NAME, ALICE);
	assert_int_equal(klog_acl_validate(&a, &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, "operation READ does not apply to a "
	    "CLUSTER (its operations: CREATE, ALTER, DESCRIBE, "
	    "CLUSTER_ACTION, DESCRIBE_CONFIGS, ALL)");
	a.op = KLOG_ACL_CLUSTER_ACTION;
	assert_int_equal(klog_acl_validate(&a, NULL), 0);
	snprintf(a.name, sizeof(a.name), "*");
	assert_int_equal(klog_acl_validate(&a, &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, "cluster \"*\": the cluster is "
	    "\"kafka-cluster\"");
	snprintf(a.name, sizeof(a.name), KLOG_ACL_CLUSTER_NAME);
	a.pattern = KLOG_ACL_PREFIXED;
	assert_int_equal(klog_acl_validate(&a, NULL), -KLOG_EINVAL);
	a = mk(KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "*", ALICE);
	assert_int_equal(klog_acl_validate(&a, NULL), -KLOG_EINVAL);
	a.pattern = KLOG_ACL_LITERAL;
	assert_int_equal(klog_acl_validate(&a, NULL), 0);
	snprintf(a.name, sizeof(a.name), "a b");
	assert_int_equal(klog_acl_validate(&a, &err), -KLOG_EINVAL);
	assert_string_equal(err.msg, "TOPIC name: byte 0x20 not allowed "
	    "(printable ASCII, no blanks)");
	a.name[0] = '\0';
	assert_int_equal(klog_acl_validate(&a, NULL), -KLOG_EINVAL);
	a = mk(KLOG_ACL_DENY, KLOG_ACL_ALL, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "t", ALICE);
	snprintf(a.host, sizeof(a.host), "0::1");
	assert_int_equal(klog_acl_validate(&a, NULL), 0);
	assert_string_equal(a.host, "::1");   /* made canonical */
	a.op = (klog_acl_op_t)KLOG_ACL_OP_COUNT;
	assert_int_equal(klog_acl_validate(&a, NULL), -KLOG_EINVAL);
}

/* ---- the set ---- */

static void
test_set_order_add_remove(void **state)
{
	klog_acl_set_t *s = set_new();
	klog_acl_filter_t f;
	klog_acl_t a;
	size_t n;

	(void)state;
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_CLUSTER_ACTION, KLOG_ACL_CLUSTER,
	    KLOG_ACL_LITERAL, KLOG_ACL_CLUSTER_NAME, "User:broker");
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_GROUP,
	    KLOG_ACL_LITERAL, "g", BOB);
	add(s, KLOG_ACL_DENY, KLOG_ACL_WRITE, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "app", ALICE);
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_WRITE, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "t", BOB);
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "t", BOB);
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "t", ALICE);
	/* The same again: refused, nothing changes; a host written another
	 * way is the same host. */
	a = mk(KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "t", ALICE);
	assert_int_equal(klog_acl_add(s, &a, NULL), -KLOG_EEXIST);
	snprintf(a.host, sizeof(a.host), "::1");
	assert_int_equal(klog_acl_add(s, &a, NULL), 0);
	snprintf(a.host, sizeof(a.host), "0:0::1");
	assert_int_equal(klog_acl_add(s, &a, NULL), -KLOG_EEXIST);
	a.op = KLOG_ACL_CLUSTER_ACTION;
	assert_int_equal(klog_acl_add(s, &a, NULL), -KLOG_EINVAL);
	assert_int_equal(klog_acl_count(s), 7);
	/* Topics, literal first, by name, principal, host, op; then the
	 * group, then the cluster. */
	assert_string_equal(klog_acl_get(s, 0)->principal, ALICE);
	assert_string_equal(klog_acl_get(s, 0)->host, "*");
	assert_string_equal(klog_acl_get(s, 1)->host, "::1");
	assert_int_equal(klog_acl_get(s, 2)->op, KLOG_ACL_READ);
	assert_int_equal(klog_acl_get(s, 3)->op, KLOG_ACL_WRITE);
	assert_int_equal(klog_acl_get(s, 4)->pattern, KLOG_ACL_PREFIXED);
	assert_int_equal(klog_acl_get(s, 5)->res, KLOG_ACL_GROUP);
	assert_int_equal(klog_acl_get(s, 6)->res, KLOG_ACL_CLUSTER);
	assert_null(klog_acl_get(s, 7));

	/* Remove: bob's ACLs on topic t, whatever the operation. */
	klog_acl_filter_any(&f);
	f.res = KLOG_ACL_TOPIC;
	f.pattern = KLOG_ACL_LITERAL;
	f.name = "t";
	f.principal = BOB;
	klog_acl_remove(s, &f, &n);
	assert_int_equal(n, 2);
	assert_int_equal(klog_acl_count(s), 5);
	klog_acl_remove(s, &f, &n);
	assert_int_equal(n, 0);
	f.principal = NULL;
	f.host = "::1";
	klog_acl_remove(s, &f, NULL);
	assert_int_equal(klog_acl_count(s), 4);
	klog_acl_filter_any(&f);
	f.perm = KLOG_ACL_DENY;
	assert_true(klog_acl_filter_match(&f, klog_acl_get(s, 1)));
	assert_false(klog_acl_filter_match(&f, klog_acl_get(s, 0)));
	klog_acl_filter_any(&f);
	klog_acl_remove(s, &f, &n);
	assert_int_equal(n, 4);
	assert_int_equal(klog_acl_count(s), 0);
	klog_acl_set_free(s);
	klog_acl_set_free(NULL);
}

/* ---- the decision ---- */

static void
test_no_acl_denies(void **state)
{
	klog_acl_set_t *s = set_new();
	const klog_acl_t *why = (const klog_acl_t *)s;

	(void)state;
	assert_int_equal(klog_acl_decide(s, ALICE, "10.0.0.9", KLOG_ACL_READ,
	    KLOG_ACL_TOPIC, "t", &why), KLOG_ACL_DENIED_NO_ACL);
	assert_null(why);
	assert_false(topic_ok(s, ALICE, KLOG_ACL_DESCRIBE, "t"));
	/* allow.everyone.if.no.acl.found: only where no ACL names the
	 * resource, whoever the ACL is for. */
	klog_acl_allow_everyone_if_no_acl(s, 1);
	assert_int_equal(klog_acl_decide(s, ALICE, NULL, KLOG_ACL_READ,
	    KLOG_ACL_TOPIC, "t", NULL), KLOG_ACL_ALLOWED_NO_ACL);
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "t", BOB);
	assert_int_equal(klog_acl_decide(s, ALICE, NULL, KLOG_ACL_READ,
	    KLOG_ACL_TOPIC, "t", NULL), KLOG_ACL_DENIED_NO_MATCH);
	assert_true(topic_ok(s, ALICE, KLOG_ACL_READ, "u"));
	/* A prefixed ACL names the resource as well. */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "u", BOB);
	assert_false(topic_ok(s, ALICE, KLOG_ACL_READ, "u1"));
	klog_acl_allow_everyone_if_no_acl(s, 0);
	assert_int_equal(klog_acl_decide(s, ALICE, NULL, KLOG_ACL_READ,
	    KLOG_ACL_TOPIC, "v", NULL), KLOG_ACL_DENIED_NO_ACL);
	klog_acl_set_free(s);
}

static void
test_allow_and_implied_describe(void **state)
{
	static const klog_acl_op_t implies[] = { KLOG_ACL_READ, KLOG_ACL_WRITE,
	    KLOG_ACL_DELETE, KLOG_ACL_ALTER };
	klog_acl_set_t *s;
	const klog_acl_t *why;

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		s = set_new();
		add(s, KLOG_ACL_ALLOW, implies[i], KLOG_ACL_TOPIC,
		    KLOG_ACL_LITERAL, "t", ALICE);
		assert_true(topic_ok(s, ALICE, implies[i], "t"));
		assert_int_equal(klog_acl_decide(s, ALICE, NULL,
		    KLOG_ACL_DESCRIBE, KLOG_ACL_TOPIC, "t", &why),
		    KLOG_ACL_ALLOWED_BY_ACL);
		assert_int_equal(why->op, implies[i]);
		assert_false(topic_ok(s, ALICE, KLOG_ACL_CREATE, "t"));
		assert_false(topic_ok(s, BOB, KLOG_ACL_DESCRIBE, "t"));
		assert_false(topic_ok(s, ALICE, KLOG_ACL_DESCRIBE, "t2"));
		klog_acl_set_free(s);
	}
	/* CREATE and DESCRIBE imply nothing. */
	s = set_new();
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_CREATE, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "t", ALICE);
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_DESCRIBE, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "u", ALICE);
	assert_true(topic_ok(s, ALICE, KLOG_ACL_CREATE, "t"));
	assert_false(topic_ok(s, ALICE, KLOG_ACL_DESCRIBE, "t"));
	assert_true(topic_ok(s, ALICE, KLOG_ACL_DESCRIBE, "u"));
	assert_false(topic_ok(s, ALICE, KLOG_ACL_READ, "u"));
	klog_acl_set_free(s);
}

static void
test_deny_wins(void **state)
{
	klog_acl_set_t *s = set_new();
	const klog_acl_t *why;

	(void)state;
	/* ALL allows every operation... */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_ALL, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "t", ALICE);
	assert_true(topic_ok(s, ALICE, KLOG_ACL_READ, "t"));
	assert_true(topic_ok(s, ALICE, KLOG_ACL_ALTER, "t"));
	assert_true(topic_ok(s, ALICE, KLOG_ACL_CLUSTER_ACTION, "t"));
	/* ...but a DENY of READ takes READ away, and only READ: not the
	 * DESCRIBE an ALLOW of READ would give. */
	add(s, KLOG_ACL_DENY, KLOG_ACL_READ, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "t", ALICE);
	assert_int_equal(klog_acl_decide(s, ALICE, NULL, KLOG_ACL_READ,
	    KLOG_ACL_TOPIC, "t", &why), KLOG_ACL_DENIED_BY_ACL);
	assert_int_equal(why->perm, KLOG_ACL_DENY);
	assert_true(topic_ok(s, ALICE, KLOG_ACL_DESCRIBE, "t"));
	assert_true(topic_ok(s, ALICE, KLOG_ACL_WRITE, "t"));
	/* A DENY for everyone, on every topic, of WRITE. */
	add(s, KLOG_ACL_DENY, KLOG_ACL_WRITE, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "*", KLOG_ACL_ANYONE);
	assert_false(topic_ok(s, ALICE, KLOG_ACL_WRITE, "t"));
	assert_true(topic_ok(s, ALICE, KLOG_ACL_DELETE, "t"));
	/* A prefixed DENY ALL beats the literal ALLOW ALL. */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_ALL, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "secret-1", ALICE);
	assert_true(topic_ok(s, ALICE, KLOG_ACL_DELETE, "secret-1"));
	add(s, KLOG_ACL_DENY, KLOG_ACL_ALL, KLOG_ACL_TOPIC, KLOG_ACL_PREFIXED,
	    "secret", ALICE);
	assert_false(topic_ok(s, ALICE, KLOG_ACL_DELETE, "secret-1"));
	assert_false(topic_ok(s, ALICE, KLOG_ACL_DESCRIBE, "secret-1"));
	assert_true(topic_ok(s, ALICE, KLOG_ACL_DELETE, "t"));
	klog_acl_set_free(s);
}

static void
test_wildcards(void **state)
{
	klog_acl_set_t *s = set_new();

	(void)state;
	/* User:* is everyone; "*" every topic, but not every group. */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "public", KLOG_ACL_ANYONE);
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_WRITE, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "*", ALICE);
	assert_true(topic_ok(s, ALICE, KLOG_ACL_READ, "public"));
	assert_true(topic_ok(s, "User:CN=x,O=y", KLOG_ACL_READ, "public"));
	assert_false(topic_ok(s, ALICE, KLOG_ACL_READ, "private"));
	assert_true(topic_ok(s, ALICE, KLOG_ACL_WRITE, "private"));
	assert_true(topic_ok(s, ALICE, KLOG_ACL_WRITE, "*"));
	assert_false(topic_ok(s, BOB, KLOG_ACL_WRITE, "private"));
	assert_false(klog_acl_authorize(s, ALICE, NULL, KLOG_ACL_READ,
	    KLOG_ACL_GROUP, "public"));
	/* A literal name is not a pattern, nor is "*" inside one. */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "logs*", BOB);
	assert_false(topic_ok(s, BOB, KLOG_ACL_READ, "logs-1"));
	assert_true(topic_ok(s, BOB, KLOG_ACL_READ, "logs*"));
	klog_acl_set_free(s);
}

static void
test_prefixed(void **state)
{
	klog_acl_set_t *s = set_new();

	(void)state;
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "app-", ALICE);
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_WRITE, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "app-", ALICE);
	assert_true(topic_ok(s, ALICE, KLOG_ACL_READ, "app-"));
	assert_true(topic_ok(s, ALICE, KLOG_ACL_READ, "app-orders"));
	assert_false(topic_ok(s, ALICE, KLOG_ACL_READ, "app"));
	assert_false(topic_ok(s, ALICE, KLOG_ACL_READ, "xapp-orders"));
	assert_true(topic_ok(s, ALICE, KLOG_ACL_WRITE, "app-"));
	assert_false(topic_ok(s, ALICE, KLOG_ACL_WRITE, "app-orders"));
	/* Prefixes around it that do not match, and shorter ones that do:
	 * the walk passes the first and finds the second. */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_DELETE, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "a", BOB);
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_ALTER, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "app-b", BOB);
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_ALTER, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "app-orders-x", BOB);
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_ALTER, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "apq", BOB);
	add(s, KLOG_ACL_DENY, KLOG_ACL_DELETE, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "ap", BOB);
	assert_false(topic_ok(s, BOB, KLOG_ACL_DELETE, "app-orders"));
	assert_true(topic_ok(s, BOB, KLOG_ACL_DELETE, "abc"));
	assert_false(topic_ok(s, BOB, KLOG_ACL_ALTER, "app-orders"));
	assert_true(topic_ok(s, BOB, KLOG_ACL_ALTER, "app-orders-x1"));
	assert_true(topic_ok(s, BOB, KLOG_ACL_ALTER, "app-b"));
	assert_true(topic_ok(s, BOB, KLOG_ACL_DESCRIBE, "abc"));
	/* Groups by prefix, beside topics of the same names. */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_GROUP,
	    KLOG_ACL_PREFIXED, "app-", BOB);
	assert_true(klog_acl_authorize(s, BOB, NULL, KLOG_ACL_READ,
	    KLOG_ACL_GROUP, "app-consumers"));
	assert_false(klog_acl_authorize(s, ALICE, NULL, KLOG_ACL_READ,
	    KLOG_ACL_GROUP, "app-consumers"));
	klog_acl_set_free(s);
}

static void
test_hosts(void **state)
{
	klog_acl_set_t *s = set_new();
	klog_acl_t a = mk(KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "t", ALICE);

	(void)state;
	snprintf(a.host, sizeof(a.host), "10.0.0.7");
	assert_int_equal(klog_acl_add(s, &a, NULL), 0);
	a.perm = KLOG_ACL_DENY;
	snprintf(a.host, sizeof(a.host), "0::0:1");
	assert_int_equal(klog_acl_add(s, &a, NULL), 0);
	assert_true(klog_acl_authorize(s, ALICE, "10.0.0.7", KLOG_ACL_READ,
	    KLOG_ACL_TOPIC, "t"));
	assert_int_equal(klog_acl_decide(s, ALICE, "10.0.0.8", KLOG_ACL_READ,
	    KLOG_ACL_TOPIC, "t", NULL), KLOG_ACL_DENIED_NO_MATCH);
	assert_false(klog_acl_authorize(s, ALICE, NULL, KLOG_ACL_READ,
	    KLOG_ACL_TOPIC, "t"));
	assert_int_equal(klog_acl_decide(s, ALICE, "::1", KLOG_ACL_READ,
	    KLOG_ACL_TOPIC, "t", NULL), KLOG_ACL_DENIED_BY_ACL);
	klog_acl_set_free(s);
}

static void
test_super_users(void **state)
{
	klog_acl_set_t *s = set_new();
	klog_err_t err = { 0, "" };

	(void)state;
	add(s, KLOG_ACL_DENY, KLOG_ACL_ALL, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "*", KLOG_ACL_ANYONE);
	assert_int_equal(klog_acl_super_users(s,
	    " User:Bob ;User:CN=broker-1,O=klog;;  User:Alice Smith;", &err),
	    0);
	assert_int_equal(klog_acl_decide(s, "User:Bob", NULL, KLOG_ACL_WRITE,
	    KLOG_ACL_TOPIC, "t", NULL), KLOG_ACL_ALLOWED_SUPER_USER);
	assert_true(klog_acl_authorize(s, "User:CN=broker-1,O=klog", NULL,
	    KLOG_ACL_CLUSTER_ACTION, KLOG_ACL_CLUSTER, NULL));
	assert_true(topic_ok(s, "User:Alice Smith", KLOG_ACL_READ, "t"));
	assert_false(topic_ok(s, "User:bob", KLOG_ACL_READ, "t"));
	assert_false(topic_ok(s, "User:CN=broker-1", KLOG_ACL_READ, "t"));
	/* A bad list changes nothing. */
	assert_int_equal(klog_acl_super_users(s, "User:Carol;bob", &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "principal \"bob\": want User:NAME "
	    "(Kafka's principal type, as written)");
	assert_int_equal(klog_acl_super_users(s, "User:*", &err),
	    -KLOG_EINVAL);
	assert_string_equal(err.msg, "super user User:*: that would be "
	    "everyone");
	assert_true(topic_ok(s, "User:Bob", KLOG_ACL_READ, "t"));
	assert_false(topic_ok(s, "User:Carol", KLOG_ACL_READ, "t"));
	assert_int_equal(klog_acl_super_users(s, "", &err), 0);
	assert_false(topic_ok(s, "User:Bob", KLOG_ACL_READ, "t"));
	assert_int_equal(klog_acl_super_users(s, "User:Bob", &err), 0);
	assert_true(topic_ok(s, "User:Bob", KLOG_ACL_READ, "t"));
	klog_acl_set_free(s);
}

static void
test_cluster(void **state)
{
	klog_acl_set_t *s = set_new();

	(void)state;
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_CLUSTER_ACTION, KLOG_ACL_CLUSTER,
	    KLOG_ACL_LITERAL, KLOG_ACL_CLUSTER_NAME, "User:CN=broker-2,O=klog");
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_CREATE, KLOG_ACL_CLUSTER,
	    KLOG_ACL_LITERAL, KLOG_ACL_CLUSTER_NAME, ALICE);
	assert_true(klog_acl_authorize(s, "User:CN=broker-2,O=klog", NULL,
	    KLOG_ACL_CLUSTER_ACTION, KLOG_ACL_CLUSTER, NULL));
	assert_true(klog_acl_authorize(s, "User:CN=broker-2,O=klog", NULL,
	    KLOG_ACL_CLUSTER_ACTION, KLOG_ACL_CLUSTER, KLOG_ACL_CLUSTER_NAME));
	assert_false(klog_acl_authorize(s, ALICE, NULL,
	    KLOG_ACL_CLUSTER_ACTION, KLOG_ACL_CLUSTER, NULL));
	/* CREATE on the cluster (any topic's auto-create), not a topic's. */
	assert_true(klog_acl_authorize(s, ALICE, NULL, KLOG_ACL_CREATE,
	    KLOG_ACL_CLUSTER, NULL));
	assert_false(topic_ok(s, ALICE, KLOG_ACL_CREATE, "t"));
	assert_false(topic_ok(s, "User:CN=broker-2,O=klog", KLOG_ACL_READ,
	    KLOG_ACL_CLUSTER_NAME));
	/* An operation out of range matches nothing. */
	assert_false(klog_acl_authorize(s, ALICE, NULL, (klog_acl_op_t)40,
	    KLOG_ACL_CLUSTER, NULL));
	klog_acl_set_free(s);
}

/* ---- against a reference ---- */

/* The rules of acl.h written the slow way: every ACL looked at. */
static klog_acl_verdict_t
reference(const klog_acl_set_t *s, const char *principal, const char *host,
    klog_acl_op_t op, klog_acl_res_t res, const char *name)
{
	int named = 0, allow = 0;

	for (size_t i = 0; i < klog_acl_count(s); i++) {
		const klog_acl_t *a = klog_acl_get(s, i);
		size_t len = strlen(a->name);
		int opok;

		if (a->res != res || !(a->pattern == KLOG_ACL_PREFIXED ?
		    strncmp(a->name, name, len) == 0 :
		    strcmp(a->name, name) == 0 || strcmp(a->name, "*") == 0))
			continue;
		named = 1;
		if (strcmp(a->principal, principal) != 0 &&
		    strcmp(a->principal, KLOG_ACL_ANYONE) != 0)
			continue;
		if (strcmp(a->host, "*") != 0 &&
		    (host == NULL || strcmp(a->host, host) != 0))
			continue;
		opok = a->op == KLOG_ACL_ALL || a->op == op ||
		    (a->perm == KLOG_ACL_ALLOW && op == KLOG_ACL_DESCRIBE &&
		    (a->op == KLOG_ACL_READ || a->op == KLOG_ACL_WRITE ||
		    a->op == KLOG_ACL_DELETE || a->op == KLOG_ACL_ALTER));
		if (!opok)
			continue;
		if (a->perm == KLOG_ACL_DENY)
			return KLOG_ACL_DENIED_BY_ACL;
		allow = 1;
	}
	return allow ? KLOG_ACL_ALLOWED_BY_ACL : named ?
	    KLOG_ACL_DENIED_NO_MATCH : KLOG_ACL_DENIED_NO_ACL;
}

/* A name of 1 to 4 bytes of "abc", or "*" now and then. */
static void
random_name(char *buf, int star)
{
	int len = 1 + rand() % 4;

	if (star && rand() % 8 == 0) {
		strcpy(buf, "*");
		return;
	}
	for (int i = 0; i < len; i++)
		buf[i] = "abc"[rand() % 3];
	buf[len] = '\0';
}

static void
test_against_reference(void **state)
{
	static const char *const who[] = { "User:a", "User:b", "User:*" };
	static const char *const hosts[] = { "*", "10.0.0.1", "10.0.0.2" };
	char name[8];

	(void)state;
	srand(28);
	for (int round = 0; round < 200; round++) {
		klog_acl_set_t *s = set_new();
		int n = rand() % 40;

		for (int i = 0; i < n; i++) {
			klog_acl_t a = mk((klog_acl_perm_t)(rand() % 4 == 0),
			    (klog_acl_op_t)(rand() % KLOG_ACL_OP_COUNT),
			    (klog_acl_res_t)(rand() % 2),
			    (klog_acl_pattern_t)(rand() % 2), "x",
			    who[rand() % 3]);

			random_name(a.name, a.pattern == KLOG_ACL_LITERAL);
			snprintf(a.host, sizeof(a.host), "%s",
			    hosts[rand() % 3]);
			(void)klog_acl_add(s, &a, NULL); /* some do not apply */
		}
		for (int q = 0; q < 200; q++) {
			klog_acl_op_t op = (klog_acl_op_t)(rand() %
			    KLOG_ACL_OP_COUNT);
			klog_acl_res_t res = (klog_acl_res_t)(rand() % 2);
			const char *p = who[rand() % 2];
			const char *h = rand() % 4 == 0 ? NULL :
			    hosts[1 + rand() % 2];

			random_name(name, 0);
			if (klog_acl_decide(s, p, h, op, res, name, NULL) !=
			    reference(s, p, h, op, res, name))
				fail_msg("round %d: %s %s %s %s %s", round, p,
				    h != NULL ? h : "(null)",
				    klog_acl_op_name(op),
				    klog_acl_res_name(res), name);
		}
		klog_acl_set_free(s);
	}
}

/*
 * The cost of a check: 300 ACLs (literal, prefixed and "*" ones, over
 * 50 principals), checks that walk prefixes and miss.  Printed, not
 * asserted: the machine's load is not the code's.
 */
static void
test_cost(void **state)
{
	static char names[400][32], principals[60][32];
	klog_acl_set_t *s = set_new();
	char name[32], principal[32];
	struct timespec t0, t1;
	int allowed = 0, n = 200000;
	double ns;

	(void)state;
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "%s%d", i % 3 ? "svc-" : "app.",
		    i);
		snprintf(principal, sizeof(principal), "User:CN=svc-%d,O=Acme",
		    i % 50);
		add(s, i % 7 ? KLOG_ACL_ALLOW : KLOG_ACL_DENY,
		    (klog_acl_op_t)(i % 6), KLOG_ACL_TOPIC,
		    (klog_acl_pattern_t)(i % 4 == 0), name, principal);
	}
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_DESCRIBE, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "*", KLOG_ACL_ANYONE);
	assert_int_equal(klog_acl_super_users(s, "User:admin;User:broker",
	    NULL), 0);
	for (int i = 0; i < 400; i++)
		snprintf(names[i], sizeof(names[i]), "svc-%d-events", i);
	for (int i = 0; i < 60; i++)
		snprintf(principals[i], sizeof(principals[i]),
		    "User:CN=svc-%d,O=Acme", i);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++)
		allowed += klog_acl_authorize(s, principals[i % 60],
		    "10.1.2.3", (klog_acl_op_t)(i % 6), KLOG_ACL_TOPIC,
		    names[i % 400]);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
	    (double)(t1.tv_nsec - t0.tv_nsec)) / n;
	print_message("acl: %d checks over %zu ACLs: %.0f ns a check, "
	    "%d allowed\n", n, klog_acl_count(s), ns, allowed);
	assert_true(allowed > 0 && allowed < n);
	klog_acl_set_free(s);
}

/* ---- on any resource of a type (Kafka's authorizeByResourceType) ---- */

static int
any_write(const klog_acl_set_t *s, const char *principal)
{
	return klog_acl_authorize_any(s, principal, "10.0.0.9",
	    KLOG_ACL_WRITE, KLOG_ACL_TOPIC);
}

static void
test_authorize_any(void **state)
{
	klog_acl_set_t *s = set_new();
	klog_err_t err = { 0, "" };

	(void)state;
	/* Nothing: refused, unless allow.everyone.if.no.acl.found. */
	assert_false(any_write(s, ALICE));
	klog_acl_allow_everyone_if_no_acl(s, 1);
	assert_true(any_write(s, ALICE));
	/* An ACL on a group names no topic: still "no ACL" for topics. */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_GROUP,
	    KLOG_ACL_LITERAL, "g", ALICE);
	assert_true(any_write(s, ALICE));
	/* An ACL of the type that allows something else: refused. */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "logs", ALICE);
	assert_false(any_write(s, ALICE));
	/* A literal WRITE; another principal's is not alice's. */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_WRITE, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "bobs", BOB);
	assert_false(any_write(s, ALICE));
	assert_true(any_write(s, BOB));
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_ALL, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "orders", ALICE);
	assert_true(any_write(s, ALICE));
	/* ...denied by name, or by a prefix of it: none left. */
	add(s, KLOG_ACL_DENY, KLOG_ACL_WRITE, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "ord", ALICE);
	assert_false(any_write(s, ALICE));
	/* A prefixed ALLOW a longer DENY prefix does not cover. */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_WRITE, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "app-", ALICE);
	assert_true(any_write(s, ALICE));
	add(s, KLOG_ACL_DENY, KLOG_ACL_WRITE, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "app-1", ALICE);
	assert_true(any_write(s, ALICE));
	/* Everyone's DENY on the literal "*": refused whatever else. */
	add(s, KLOG_ACL_ALLOW, KLOG_ACL_WRITE, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "*", BOB);
	assert_true(any_write(s, BOB));
	add(s, KLOG_ACL_DENY, KLOG_ACL_WRITE, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "*", "User:*");
	assert_false(any_write(s, ALICE));
	assert_false(any_write(s, BOB));
	/* A super user may. */
	assert_int_equal(klog_acl_super_users(s, BOB, &err), 0);
	assert_true(any_write(s, BOB));
	klog_acl_set_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_principals_and_hosts),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_set_order_add_remove),
		cmocka_unit_test(test_no_acl_denies),
		cmocka_unit_test(test_allow_and_implied_describe),
		cmocka_unit_test(test_deny_wins),
		cmocka_unit_test(test_wildcards),
		cmocka_unit_test(test_prefixed),
		cmocka_unit_test(test_hosts),
		cmocka_unit_test(test_super_users),
		cmocka_unit_test(test_cluster),
		cmocka_unit_test(test_against_reference),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_authorize_any),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
