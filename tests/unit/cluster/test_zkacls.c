/*
 * Tests for lib/cluster/zkacls.c: Kafka's ACL node JSON both ways (its own
 * examples parsed, entries klog has no word for kept, bad nodes refused
 * with a reason), the paths, and the nodes against a real ZooKeeper
 * (versioned edits, a node deleted with its last ACL, read by anyone,
 * written by the identity alone).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/cluster/zkacls.h"
#include "fx/zkserver.h"

/* AclEntry.fromBytes's example (Kafka's AclEntry.scala), a host name and
 * a Deny; and ZkData's, of a cluster, with blanks as Kafka's comments have
 * them. */
static const char kafka_entry[] =
    "{\n  \"version\": 1,\n  \"acls\": [\n    {\n      \"host\":\"host1\",\n"
    "      \"permissionType\": \"Deny\",\n      \"operation\": \"Read\",\n"
    "      \"principal\": \"User:alice\"\n    }\n  ]\n}";
static const char kafka_cluster[] =
    "{\"version\": 1, \"acls\": [ { \"host\":\"*\", \"permissionType\": "
    "\"Allow\",\"operation\": \"ClusterAction\",\"principal\": "
    "\"User:CN=broker-1,O=klog\"}]}";

static klog_acl_t
acl_of(klog_acl_perm_t perm, klog_acl_op_t op, klog_acl_res_t res,
    klog_acl_pattern_t pat, const char *name, const char *principal)
{
	klog_acl_t a;

	memset(&a, 0, sizeof(a));
	a.perm = perm;
	a.op = op;
	a.res = res;
	a.pattern = pat;
	snprintf(a.name, sizeof(a.name), "%s", name);
	snprintf(a.host, sizeof(a.host), "*");
	snprintf(a.principal, sizeof(a.principal), "%s", principal);
	return a;
}

static void
test_kafka_json(void **state)
{
	klog_zkacls_node_t n;
	klog_err_t err;

	(void)state;
	klog_zkacls_node_init(&n, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL, "t");
	assert_int_equal(klog_zkacls_parse(kafka_entry, strlen(kafka_entry),
	    &n, &err), 0);
	assert_int_equal(n.n, 1);
	/* A host name never matches a client's address: kept, not used. */
	assert_string_equal(n.e[0].host, "host1");
	assert_string_equal(n.e[0].perm, "Deny");
	assert_false(n.e[0].known);
	klog_zkacls_node_clear(&n);

	klog_zkacls_node_init(&n, KLOG_ACL_CLUSTER, KLOG_ACL_LITERAL,
	    KLOG_ACL_CLUSTER_NAME);
	assert_int_equal(klog_zkacls_parse(kafka_cluster,
	    strlen(kafka_cluster), &n, &err), 0);
	assert_int_equal(n.n, 1);
	assert_true(n.e[0].known);
	assert_int_equal(n.e[0].acl.op, KLOG_ACL_CLUSTER_ACTION);
	assert_int_equal(n.e[0].acl.perm, KLOG_ACL_ALLOW);
	assert_int_equal(n.e[0].acl.res, KLOG_ACL_CLUSTER);
	assert_string_equal(n.e[0].acl.name, "kafka-cluster");
	assert_string_equal(n.e[0].acl.principal, "User:CN=broker-1,O=klog");
	klog_zkacls_node_clear(&n);
}

/* Add, encode, parse back: the same entries, Kafka's words in the text;
 * an entry of an operation klog never checks survives an edit. */
static void
test_round_trip(void **state)
{
	static const char with_foreign[] = "{\"version\":1,\"acls\":["
	    "{\"principal\":\"User:bob\",\"permissionType\":\"Allow\","
	    "\"operation\":\"AlterConfigs\",\"host\":\"*\"},"
	    "{\"principal\":\"Group:ops\",\"permissionType\":\"Allow\","
	    "\"operation\":\"Read\",\"host\":\"*\"}]}";
	klog_zkacls_node_t n, m;
	klog_acl_filter_t f;
	klog_acl_t a;
	klog_buf_t b;
	klog_err_t err;

	(void)state;
	klog_zkacls_node_init(&n, KLOG_ACL_TOPIC, KLOG_ACL_PREFIXED, "app-");
	assert_int_equal(klog_zkacls_parse(with_foreign, strlen(with_foreign),
	    &n, &err), 0);
	assert_int_equal(n.n, 2);
	assert_false(n.e[0].known);
	assert_false(n.e[1].known);
	a = acl_of(KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_PREFIXED, "app-", "User:alice");
	assert_int_equal(klog_zkacls_node_add(&n, &a, &err), 1);
	assert_int_equal(klog_zkacls_node_add(&n, &a, &err), 0);
	a.perm = KLOG_ACL_DENY;
	a.op = KLOG_ACL_WRITE;
	assert_string_equal(a.host, "*");
	snprintf(a.host, sizeof(a.host), "10.0.0.1");
	assert_int_equal(klog_zkacls_node_add(&n, &a, &err), 1);
	/* Not this node's resource. */
	snprintf(a.name, sizeof(a.name), "other-");
	assert_int_equal(klog_zkacls_node_add(&n, &a, &err), -KLOG_EINVAL);

	klog_buf_init(&b);
	assert_int_equal(klog_zkacls_encode(&b, &n), 0);
	klog_buf_put(&b, "", 1);
	assert_non_null(strstr((char *)b.data, "{\"principal\":\"User:alice\","
	    "\"permissionType\":\"Allow\",\"operation\":\"Read\","
	    "\"host\":\"*\"}"));
	assert_non_null(strstr((char *)b.data, "\"permissionType\":\"Deny\","
	    "\"operation\":\"Write\",\"host\":\"10.0.0.1\""));
	assert_non_null(strstr((char *)b.data, "\"AlterConfigs\""));
	assert_memory_equal(b.data, "{\"version\":1,\"acls\":[", 21);
	klog_zkacls_node_init(&m, KLOG_ACL_TOPIC, KLOG_ACL_PREFIXED, "app-");
	assert_int_equal(klog_zkacls_parse((char *)b.data, b.len - 1, &m,
	    &err), 0);
	assert_int_equal(m.n, 4);
	assert_true(m.e[2].known);
	assert_int_equal(m.e[2].acl.op, KLOG_ACL_READ);
	assert_int_equal(m.e[3].acl.perm, KLOG_ACL_DENY);
	assert_string_equal(m.e[3].acl.host, "10.0.0.1");
	klog_buf_free(&b);

	/* Removing every known ACL keeps the foreign ones. */
	klog_acl_filter_any(&f);
	assert_int_equal(klog_zkacls_node_remove(&m, &f), 2);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.e[0].op, "AlterConfigs");
	assert_string_equal(m.e[1].principal, "Group:ops");
	klog_zkacls_node_clear(&m);
	klog_zkacls_node_clear(&n);
}

static void
test_refused(void **state)
{
	static const struct {
		const char *json, *why;
	} bad[] = {
		{ "{\"version\":2,\"acls\":[]}", "version" },
		{ "{\"version\":1}", "no acls" },
		{ "{\"acls\":[]}", "no version" },
		{ "{\"version\":1,\"acls\":{}}", "acls: not an array" },
		{ "{\"version\":1,\"acls\":[1]}", "not an object" },
		{ "{\"version\":1,\"acls\":[{\"principal\":\"User:a\","
		  "\"permissionType\":\"Allow\",\"operation\":\"Read\"}]}",
		  "no host" },
		{ "{\"version\":1,\"acls\":[{\"principal\":\"User:a\","
		  "\"permissionType\":\"Maybe\",\"operation\":\"Read\","
		  "\"host\":\"*\"}]}", "permissionType Maybe" },
		{ "{\"version\":1,\"acls\":[{\"principal\":\"User:a\","
		  "\"permissionType\":\"Allow\",\"operation\":\"Reed\","
		  "\"host\":\"*\"}]}", "operation Reed" },
		{ "{\"version\":1,\"acls\":[{\"principal\":\"alice\","
		  "\"permissionType\":\"Allow\",\"operation\":\"Read\","
		  "\"host\":\"*\"}]}", "want TYPE:NAME" },
		{ "{\"version\":1,\"acls\":[{\"principal\":\"User:a\","
		  "\"permissionType\":\"Allow\",\"operation\":1,"
		  "\"host\":\"*\"}]}", "operation: not a string" },
		/* Kafka's names, but not an operation of a topic. */
		{ "{\"version\":1,\"acls\":[{\"principal\":\"User:a\","
		  "\"permissionType\":\"Allow\",\"operation\":\"ClusterAction\","
		  "\"host\":\"*\"}]}", "CLUSTER_ACTION" },
		{ "{\"version\":1,\"acls\":[]} x", "" },
	};
	klog_zkacls_node_t n;
	klog_err_t err;

	(void)state;
	klog_zkacls_node_init(&n, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL, "t");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(klog_zkacls_parse(bad[i].json,
		    strlen(bad[i].json), &n, &err), -KLOG_EINVAL);
		if (strstr(err.msg, bad[i].why) == NULL)
			fail_msg("%s: '%s' does not say '%s'", bad[i].json,
			    err.msg, bad[i].why);
		assert_int_equal(n.n, 0);
	}
	klog_zkacls_node_clear(&n);
}

static void
test_paths(void **state)
{
	char p[KLOG_ZK_PATH_MAX];
	klog_err_t err;

	(void)state;
	assert_int_equal(klog_zkacls_path(KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "t-1", p, sizeof(p), &err), 0);
	assert_string_equal(p, "/kafka-acl/Topic/t-1");
	assert_int_equal(klog_zkacls_path(KLOG_ACL_GROUP, KLOG_ACL_PREFIXED,
	    "g", p, sizeof(p), &err), 0);
	assert_string_equal(p, "/kafka-acl-extended/prefixed/Group/g");
	assert_int_equal(klog_zkacls_path(KLOG_ACL_CLUSTER, KLOG_ACL_LITERAL,
	    "kafka-cluster", p, sizeof(p), &err), 0);
	assert_string_equal(p, "/kafka-acl/Cluster/kafka-cluster");
	assert_int_equal(klog_zkacls_path(KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "a/b", p, sizeof(p), &err), -KLOG_EINVAL);
	assert_int_equal(klog_zkacls_path(KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "..", p, sizeof(p), &err), -KLOG_EINVAL);
	assert_true(klog_zkacls_owns("/kafka-acl/Topic"));
	assert_true(klog_zkacls_owns("/kafka-acl/Topic/t"));
	assert_true(klog_zkacls_owns("/kafka-acl-extended/prefixed/Group/g"));
	assert_false(klog_zkacls_owns("/kafka-acl/TopicX"));
	assert_false(klog_zkacls_owns("/kafka-acl/TransactionalId/x"));
	assert_false(klog_zkacls_owns("/kafka-acl-changes/acl_changes_1"));
	assert_string_equal(klog_zkacls_op_name(KLOG_ACL_CLUSTER_ACTION),
	    "ClusterAction");
	assert_string_equal(klog_zkacls_perm_name(KLOG_ACL_DENY), "Deny");
}

struct edit {
	klog_acl_t acl;
	int add;
	klog_zk_t *meddler;   /* writes the node once, between read and write */
};

static int
edit_fn(klog_zkacls_node_t *n, void *arg, klog_err_t *err)
{
	struct edit *e = arg;
	klog_acl_filter_t f;

	if (e->meddler != NULL) {
		klog_zkacls_node_t m;
		klog_acl_t other = e->acl;

		snprintf(other.principal, sizeof(other.principal),
		    "User:meddler");
		klog_zkacls_node_init(&m, n->res, n->pattern, n->name);
		assert_int_equal(klog_zkacls_read(e->meddler, &m, 0, err), 0);
		assert_int_equal(klog_zkacls_node_add(&m, &other, err), 1);
		assert_int_equal(klog_zkacls_write(e->meddler, &m, err), 0);
		klog_zkacls_node_clear(&m);
		e->meddler = NULL;
	}
	if (e->add)
		return klog_zkacls_node_add(n, &e->acl, err);
	klog_acl_filter_any(&f);
	f.principal = e->acl.principal;
	return klog_zkacls_node_remove(n, &f) > 0;
}

static void
test_nodes(void **state)
{
	klog_zk_t *zk, *other, *anon;
	klog_acl_set_t *s;
	klog_zkacls_node_t n;
	struct edit e = { 0 };
	size_t foreign;
	klog_err_t err;

	(void)state;
	NEED_SERVER();
	assert_int_equal(klog_zk_open_auth(server.connect, "klog:pw", 4000,
	    10000, &zk, &err), 0);
	assert_int_equal(klog_zk_open_auth(server.connect, "klog:pw", 4000,
	    10000, &other, &err), 0);
	assert_int_equal(klog_zk_open(server.connect, 4000, 10000, &anon,
	    &err), 0);
	assert_int_equal(klog_acl_set_new(&s), 0);
	/* Nothing there: no ACLs, not an error. */
	assert_int_equal(klog_zkacls_load(anon, 0, s, &foreign, &err), 0);
	assert_int_equal(klog_acl_count(s), 0);

	e.acl = acl_of(KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "t", "User:alice");
	e.add = 1;
	assert_int_equal(klog_zkacls_edit(zk, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "t", edit_fn, &e, &err), 0);
	/* Another writer between the read and the write: redone, both
	 * kept. */
	e.acl = acl_of(KLOG_ACL_ALLOW, KLOG_ACL_WRITE, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "t", "User:bob");
	e.meddler = other;
	assert_int_equal(klog_zkacls_edit(zk, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "t", edit_fn, &e, &err), 0);
	assert_null(e.meddler);
	klog_zkacls_node_init(&n, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL, "t");
	/* Anyone reads, as Kafka's ACL nodes; only the identity writes. */
	assert_int_equal(klog_zkacls_read(anon, &n, 0, &err), 0);
	assert_int_equal(n.n, 3);
	assert_string_equal(n.e[0].principal, "User:alice");
	assert_string_equal(n.e[1].principal, "User:meddler");
	assert_string_equal(n.e[2].principal, "User:bob");
	assert_int_equal(klog_zkacls_write(anon, &n, &err), -KLOG_EDENIED);
	/* A stale version is refused. */
	assert_int_equal(klog_zkacls_read(other, &n, 0, &err), 0);
	e.meddler = NULL;
	e.add = 0;
	e.acl = acl_of(KLOG_ACL_ALLOW, KLOG_ACL_READ, KLOG_ACL_TOPIC,
	    KLOG_ACL_LITERAL, "t", "User:meddler");
	assert_int_equal(klog_zkacls_edit(zk, KLOG_ACL_TOPIC, KLOG_ACL_LITERAL,
	    "t", edit_fn, &e, &err), 0);
	assert_int_equal(klog_zkacls_write(other, &n, &err), -KLOG_EBUSY);
	klog_zkacls_node_clear(&n);

	e.add = 1;
	e.acl = acl_of(KLOG_ACL_DENY, KLOG_ACL_READ, KLOG_ACL_GROUP,
	    KLOG_ACL_PREFIXED, "g-", "User:*");
	assert_int_equal(klog_zkacls_edit(zk, KLOG_ACL_GROUP,
	    KLOG_ACL_PREFIXED, "g-", edit_fn, &e, &err), 0);
	assert_int_equal(klog_zk_put(zk, "/kafka-acl/Cluster/kafka-cluster",
	    kafka_cluster, strlen(kafka_cluster), &err), 0);
	assert_int_equal(klog_zkacls_load(anon, 0, s, &foreign, &err), 0);
	assert_int_equal(klog_acl_count(s), 4);
	assert_int_equal(foreign, 0);
	assert_true(klog_acl_authorize(s, "User:bob", NULL, KLOG_ACL_WRITE,
	    KLOG_ACL_TOPIC, "t"));
	assert_false(klog_acl_authorize(s, "User:alice", NULL, KLOG_ACL_WRITE,
	    KLOG_ACL_TOPIC, "t"));
	assert_int_equal(klog_acl_decide(s, "User:x", NULL, KLOG_ACL_READ,
	    KLOG_ACL_GROUP, "g-1", NULL), KLOG_ACL_DENIED_BY_ACL);
	klog_acl_set_free(s);

	/* A node that is not Kafka's fails the load, naming it. */
	assert_int_equal(klog_zk_put(zk, "/kafka-acl/Topic/bad", "{}", 2,
	    &err), 0);
	assert_int_equal(klog_acl_set_new(&s), 0);
	assert_int_equal(klog_zkacls_load(anon, 0, s, &foreign, &err),
	    -KLOG_ECORRUPT);
	assert_non_null(strstr(err.msg, "/kafka-acl/Topic/bad"));
	klog_acl_set_free(s);

	/* The last ACL removed: the node goes. */
	e.add = 0;
	strcpy(e.acl.principal, "User:*");
	assert_int_equal(klog_zkacls_edit(zk, KLOG_ACL_GROUP,
	    KLOG_ACL_PREFIXED, "g-", edit_fn, &e, &err), 0);
	assert_int_equal(klog_zk_exists(anon,
	    "/kafka-acl-extended/prefixed/Group/g-", 0, NULL, &err),
	    -KLOG_ENOENT);
	assert_int_equal(klog_zk_delete_tree(zk, "/kafka-acl", &err), 0);
	assert_int_equal(klog_zk_delete_tree(zk, "/kafka-acl-extended", &err),
	    0);
	klog_zk_close(anon);
	klog_zk_close(other);
	klog_zk_close(zk);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kafka_json),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_nodes),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
