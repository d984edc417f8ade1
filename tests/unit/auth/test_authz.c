/*
 * The broker's authorizer (authz.h): the file loaded at start (a bad
 * line named), decisions with super users, deny wins and the default;
 * the file taken up again when it changes, a bad new one keeping the old
 * set and reported once; a request's partitions split in order; a
 * replica bound to its principal; refusals logged a line a second; an
 * authorizer without a file (a cluster's ACLs from ZooKeeper) denying all
 * but super users until its caller puts a set in force.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fx/tmpdir.h"
#include "klog/auth/authz.h"

#define ALICE "User:CN=alice,O=klog"
#define BOB "User:bob"
#define HOST "127.0.0.1"

static char dir[64];
static char path[128];

/* The log lines the authorizer wrote, the last one kept. */
static int nlines;
static char last[2048];

static void
log_fn(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	nlines++;
	snprintf(last, sizeof(last), "%s", msg);
}

static int
setup(void **state)
{
	(void)state;
	nlines = 0;
	last[0] = '\0';
	if (tmpdir_make(dir, sizeof(dir), "authz") == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/acls", dir);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	tmpdir_remove(dir);
	return 0;
}

/* The file replaced by a rename, as klog-group saves it (a new inode,
 * whatever the clock's granularity). */
static void
write_acls(const char *text)
{
	char tmp[160];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(tmp, 0600), 0);
	assert_int_equal(rename(tmp, path), 0);
}

static klog_authz_t *
open_authz(const char *super, int everyone, const char *replica)
{
	klog_authz_config_t cfg = { path, super, everyone, replica,
	    { log_fn, NULL, KLOG_LEVEL_DEBUG } };
	klog_authz_t *a = NULL;
	klog_err_t err = { 0 };

	assert_int_equal(klog_authz_new(&cfg, &a, &err), 0);
	return a;
}

static int
check(klog_authz_t *a, const char *who, klog_acl_op_t op, const char *topic)
{
	return klog_authz_check(a, who, HOST, op, KLOG_ACL_TOPIC, topic,
	    strlen(topic));
}

static void
test_start(void **state)
{
	klog_authz_config_t cfg = { path, NULL, 0, NULL, { NULL, NULL, 0 } };
	klog_authz_t *a = NULL;
	klog_err_t err = { 0 };

	(void)state;
	/* Missing, then a bad second line: the start fails, naming it. */
	assert_int_equal(klog_authz_new(&cfg, &a, &err), -KLOG_ENOENT);
	assert_null(a);
	write_acls("allow read topic literal t " ALICE "\nallow read\n");
	assert_int_equal(klog_authz_new(&cfg, &a, &err), -KLOG_ECORRUPT);
	assert_null(a);
	assert_non_null(strstr(err.msg, "/acls:2: "));
	/* Bad super users and replica patterns are refused too. */
	write_acls("allow read topic literal t " ALICE "\n");
	cfg.super_users = "User:*";
	assert_int_equal(klog_authz_new(&cfg, &a, &err), -KLOG_EINVAL);
	cfg.super_users = NULL;
	cfg.replica_principal = "User:broker";
	assert_int_equal(klog_authz_new(&cfg, &a, &err), -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "no {id}"));
	cfg.replica_principal = "Group:{id}";
	assert_int_equal(klog_authz_new(&cfg, &a, &err), -KLOG_EINVAL);
	cfg.replica_principal = NULL;
	assert_int_equal(klog_authz_new(&cfg, &a, &err), 0);
	assert_int_equal(klog_acl_count(klog_authz_set(a)), 1);
	klog_authz_free(a);
}

static void
test_decide(void **state)
{
	klog_authz_t *a;

	(void)state;
	write_acls("allow all topic prefixed app- User:*\n"
	    "deny write topic literal app-audit " BOB "\n"
	    "allow read topic literal t " ALICE "\n");
	a = open_authz("User:root; User:CN=admin,O=klog", 0, NULL);
	/* No authorizer: everything. */
	assert_int_equal(check(NULL, BOB, KLOG_ACL_DELETE, "t"), 1);
	assert_int_equal(check(a, ALICE, KLOG_ACL_READ, "t"), 1);
	/* READ implies DESCRIBE; not WRITE. */
	assert_int_equal(check(a, ALICE, KLOG_ACL_DESCRIBE, "t"), 1);
	assert_int_equal(check(a, ALICE, KLOG_ACL_WRITE, "t"), 0);
	assert_int_equal(check(a, BOB, KLOG_ACL_READ, "t"), 0);
	/* Deny wins over User:*'s ALL. */
	assert_int_equal(check(a, BOB, KLOG_ACL_WRITE, "app-x"), 1);
	assert_int_equal(check(a, BOB, KLOG_ACL_WRITE, "app-audit"), 0);
	assert_int_equal(check(a, ALICE, KLOG_ACL_WRITE, "app-audit"), 1);
	/* Super users, whatever the ACLs. */
	assert_int_equal(check(a, "User:root", KLOG_ACL_WRITE, "nothing"), 1);
	assert_int_equal(check(a, "User:CN=admin,O=klog", KLOG_ACL_DELETE,
	    "app-audit"), 1);
	/* The cluster: CREATE on it, else on the topic. */
	assert_int_equal(klog_authz_create_topic(a, BOB, HOST, "app-new", 7),
	    1);
	assert_int_equal(klog_authz_create_topic(a, BOB, HOST, "x", 1), 0);
	/* A name longer than any ACL's: refused, but not to a super
	 * user. */
	{
		char longname[300];

		memset(longname, 'a', sizeof(longname));
		assert_int_equal(klog_authz_check(a, ALICE, HOST,
		    KLOG_ACL_READ, KLOG_ACL_TOPIC, longname,
		    sizeof(longname)), 0);
		assert_int_equal(klog_authz_check(a, "User:root", HOST,
		    KLOG_ACL_READ, KLOG_ACL_TOPIC, longname,
		    sizeof(longname)), 1);
	}
	klog_authz_free(a);
	/* allow.everyone.if.no.acl.found: only where no ACL names it. */
	a = open_authz(NULL, 1, NULL);
	assert_int_equal(check(a, BOB, KLOG_ACL_WRITE, "free"), 1);
	assert_int_equal(check(a, BOB, KLOG_ACL_READ, "t"), 0);
	klog_authz_free(a);
}

static void
test_reload(void **state)
{
	klog_authz_t *a;
	int before;

	(void)state;
	write_acls("allow read topic literal t " ALICE "\n");
	a = open_authz(NULL, 0, NULL);
	assert_int_equal(klog_authz_reload(a), 0);
	assert_int_equal(check(a, BOB, KLOG_ACL_READ, "t"), 0);
	write_acls("allow read topic literal t " ALICE "\n"
	    "allow read topic literal t " BOB "\n");
	assert_int_equal(klog_authz_reload(a), 1);
	assert_non_null(strstr(last, "2 ACLs in force"));
	assert_int_equal(check(a, BOB, KLOG_ACL_READ, "t"), 1);
	assert_int_equal(klog_authz_reload(a), 0);
	/* A bad file: the old set stays; said once, not every second. */
	write_acls("allow read topic literal t " ALICE "\nnonsense\n");
	before = nlines;
	assert_int_equal(klog_authz_reload(a), -KLOG_ECORRUPT);
	assert_int_equal(nlines, before + 1);
	assert_non_null(strstr(last, "/acls:2: "));
	assert_non_null(strstr(last, "keeping the 2 ACLs in force"));
	assert_int_equal(klog_authz_reload(a), 0);
	assert_int_equal(nlines, before + 1);
	assert_int_equal(check(a, BOB, KLOG_ACL_READ, "t"), 1);
	/* Gone: the same. */
	assert_int_equal(unlink(path), 0);
	assert_true(klog_authz_reload(a) < 0);
	assert_int_equal(klog_authz_reload(a), 0);
	assert_int_equal(check(a, BOB, KLOG_ACL_READ, "t"), 1);
	/* Back and good: taken up. */
	write_acls("allow read topic literal t " ALICE "\n");
	assert_int_equal(klog_authz_reload(a), 1);
	assert_int_equal(check(a, BOB, KLOG_ACL_READ, "t"), 0);
	klog_authz_free(a);
}

struct part {
	klog_str_t topic;
	int32_t partition;
};

static void
test_split(void **state)
{
	struct part p[] = {
		{ { "a", 1 }, 0 }, { { "a", 1 }, 1 }, { { "no", 2 }, 0 },
		{ { "no", 2 }, 1 }, { { "b", 1 }, 0 }, { { "deny", 4 }, 7 },
	};
	klog_authz_t *a;
	int before;

	(void)state;
	write_acls("allow read topic literal a " ALICE "\n"
	    "allow read topic literal b " ALICE "\n");
	a = open_authz(NULL, 0, NULL);
	before = nlines;
	assert_int_equal(klog_authz_split(a, ALICE, HOST, KLOG_ACL_READ, p,
	    sizeof(p[0]), offsetof(struct part, topic), 6), 3);
	/* The allowed in front, the refused after, each in order. */
	assert_memory_equal(p[0].topic.p, "a", 1);
	assert_int_equal(p[1].partition, 1);
	assert_memory_equal(p[2].topic.p, "b", 1);
	assert_memory_equal(p[3].topic.p, "no", 2);
	assert_int_equal(p[3].partition, 0);
	assert_int_equal(p[4].partition, 1);
	assert_memory_equal(p[5].topic.p, "deny", 4);
	/* Two refused topics, in one second: one line. */
	assert_int_equal(nlines, before + 1);
	assert_non_null(strstr(last, ALICE " from " HOST " denied READ on "
	    "TOPIC no: no ACL names it"));
	assert_int_equal(klog_authz_split(NULL, ALICE, HOST, KLOG_ACL_READ,
	    p, sizeof(p[0]), 0, 6), 6);
	klog_authz_free(a);
}

static void
test_replica(void **state)
{
	klog_authz_t *a;

	(void)state;
	write_acls("allow cluster_action cluster literal kafka-cluster "
	    "User:CN=broker-2,O=klog\n"
	    "allow cluster_action cluster literal kafka-cluster "
	    "User:CN=broker-22\n"
	    "allow cluster_action cluster literal kafka-cluster "
	    "User:CN=broker-2x\n");
	a = open_authz("User:CN=broker-5", 0, NULL);
	assert_int_equal(klog_authz_replica(NULL, BOB, HOST, 1), 1);
	assert_int_equal(klog_authz_replica(a, "User:CN=broker-2,O=klog", HOST,
	    2), 1);
	/* Another broker's id, a prefix that is not a whole RDN. */
	assert_int_equal(klog_authz_replica(a, "User:CN=broker-2,O=klog", HOST,
	    3), 0);
	assert_non_null(strstr(last, "not that broker's principal"));
	assert_int_equal(klog_authz_replica(a, "User:CN=broker-22", HOST, 2),
	    0);
	assert_int_equal(klog_authz_replica(a, "User:CN=broker-2x", HOST, 2),
	    0);
	assert_int_equal(klog_authz_replica(a, "User:CN=broker-22", HOST, 22),
	    1);
	/* No CLUSTER_ACTION: refused whatever the name. */
	assert_int_equal(klog_authz_replica(a, "User:CN=broker-3", HOST, 3),
	    0);
	/* A super user is still bound to its own id. */
	assert_int_equal(klog_authz_replica(a, "User:CN=broker-5", HOST, 5),
	    1);
	assert_int_equal(klog_authz_replica(a, "User:CN=broker-5", HOST, 2),
	    0);
	klog_authz_free(a);
	/* Another pattern. */
	a = open_authz("User:node-7.example;User:node-8.example", 0,
	    "User:node-{id}.example");
	assert_int_equal(klog_authz_replica(a, "User:node-7.example", HOST, 7),
	    1);
	assert_int_equal(klog_authz_replica(a, "User:node-7.example", HOST, 8),
	    0);
	klog_authz_free(a);
}

static void
test_quiet_listing(void **state)
{
	klog_authz_t *a;
	int before;

	(void)state;
	write_acls("allow describe topic literal seen " ALICE "\n");
	a = open_authz(NULL, 0, NULL);
	before = nlines;
	assert_int_equal(klog_authz_visible(a, ALICE, HOST, "seen", 4), 1);
	assert_int_equal(klog_authz_visible(a, ALICE, HOST, "hidden", 6), 0);
	assert_int_equal(klog_authz_visible(NULL, ALICE, HOST, "hidden", 6),
	    1);
	assert_int_equal(nlines, before);
	klog_authz_free(a);
}

/* A group's operations for ListGroups and DescribeGroups: decided as a
 * check (READ implies DESCRIBE), never logged; a check is. */
static void
test_quiet_groups(void **state)
{
	klog_authz_t *a;
	int before;

	(void)state;
	write_acls("allow read group literal g1 " ALICE "\n");
	a = open_authz(NULL, 0, NULL);
	before = nlines;
	assert_int_equal(klog_authz_allowed(a, ALICE, HOST, KLOG_ACL_DESCRIBE,
	    KLOG_ACL_GROUP, "g1", 2), 1);
	assert_int_equal(klog_authz_allowed(a, ALICE, HOST, KLOG_ACL_READ,
	    KLOG_ACL_GROUP, "g1", 2), 1);
	assert_int_equal(klog_authz_allowed(a, ALICE, HOST, KLOG_ACL_DELETE,
	    KLOG_ACL_GROUP, "g1", 2), 0);
	assert_int_equal(klog_authz_allowed(a, ALICE, HOST, KLOG_ACL_DESCRIBE,
	    KLOG_ACL_GROUP, "g2", 2), 0);
	assert_int_equal(klog_authz_allowed(a, ALICE, HOST, KLOG_ACL_DESCRIBE,
	    KLOG_ACL_CLUSTER, NULL, 0), 0);
	assert_int_equal(klog_authz_allowed(NULL, ALICE, HOST, KLOG_ACL_DELETE,
	    KLOG_ACL_GROUP, "g2", 2), 1);
	assert_int_equal(nlines, before);
	assert_int_equal(klog_authz_check(a, ALICE, HOST, KLOG_ACL_DESCRIBE,
	    KLOG_ACL_GROUP, "g2", 2), 0);
	assert_int_equal(nlines, before + 1);
	klog_authz_free(a);
}

/* No file (--zk-acls): nothing but super users until a set is put in
 * force, which keeps the broker's super users and default. */
static void
test_replace(void **state)
{
	klog_authz_config_t cfg = { NULL, "User:admin", 0, NULL,
	    { NULL, NULL, 0 } };
	klog_acl_t acl = { .perm = KLOG_ACL_ALLOW, .op = KLOG_ACL_READ,
	    .res = KLOG_ACL_TOPIC, .pattern = KLOG_ACL_LITERAL, .name = "t",
	    .host = "*", .principal = BOB };
	klog_acl_set_t *s;
	klog_authz_t *a = NULL;
	klog_err_t err = { 0 };

	(void)state;
	assert_int_equal(klog_authz_new(&cfg, &a, &err), 0);
	assert_false(klog_authz_has_file(a));
	assert_int_equal(klog_acl_count(klog_authz_set(a)), 0);
	assert_false(check(a, BOB, KLOG_ACL_READ, "t"));
	assert_true(check(a, "User:admin", KLOG_ACL_DELETE, "t"));
	assert_int_equal(klog_authz_reload(a), 0);
	assert_int_equal(klog_acl_set_new(&s), 0);
	assert_int_equal(klog_acl_add(s, &acl, &err), 0);
	assert_int_equal(klog_authz_replace(a, s, &err), 0);
	assert_int_equal(klog_acl_count(klog_authz_set(a)), 1);
	assert_true(check(a, BOB, KLOG_ACL_READ, "t"));
	assert_false(check(a, BOB, KLOG_ACL_WRITE, "t"));
	assert_true(check(a, "User:admin", KLOG_ACL_WRITE, "t"));
	/* Whole: an empty set takes every ACL away. */
	assert_int_equal(klog_acl_set_new(&s), 0);
	assert_int_equal(klog_authz_replace(a, s, &err), 0);
	assert_false(check(a, BOB, KLOG_ACL_READ, "t"));
	assert_true(check(a, "User:admin", KLOG_ACL_READ, "t"));
	klog_authz_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decide, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replica, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quiet_listing, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_quiet_groups, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
