/*
 * Tests for lib/zk/zkusers.c: Kafka's user node JSON both ways, its
 * Sanitizer's names, and the nodes against a real ZooKeeper (made with
 * the identity alone, written at the version read).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "klog/zk/zkusers.h"
#include "fx/zkserver.h"

static const char kafka_node[] =
    "{\"version\":1,\"config\":{\"SCRAM-SHA-256\":\"salt=c2FsdA==,"
    "stored_key=a2V5,server_key=a2V5,iterations=4096\","
    "\"producer_byte_rate\":\"1024\"}}";

static void
test_json(void **state)
{
	klog_zkuser_t u;
	klog_buf_t b;
	klog_err_t err;

	(void)state;
	klog_zkuser_init(&u);
	assert_int_equal(klog_zkuser_parse(kafka_node, strlen(kafka_node), &u,
	    &err), 0);
	assert_int_equal(u.n, 2);
	assert_string_equal(klog_zkuser_get(&u, "SCRAM-SHA-256"),
	    "salt=c2FsdA==,stored_key=a2V5,server_key=a2V5,iterations=4096");
	/* A key that is no credential (a Kafka quota) is kept. */
	assert_string_equal(klog_zkuser_get(&u, "producer_byte_rate"), "1024");
	assert_null(klog_zkuser_get(&u, "SCRAM-SHA-512"));
	klog_buf_init(&b);
	assert_int_equal(klog_zkuser_encode(&b, &u), 0);
	assert_int_equal(b.len, strlen(kafka_node));
	assert_memory_equal(b.data, kafka_node, b.len);
	klog_buf_free(&b);

	/* Set replaces or adds, remove takes one out. */
	assert_int_equal(klog_zkuser_set(&u, "SCRAM-SHA-512", "x"), 0);
	assert_int_equal(klog_zkuser_set(&u, "SCRAM-SHA-256", "y"), 0);
	assert_int_equal(u.n, 3);
	assert_string_equal(klog_zkuser_get(&u, "SCRAM-SHA-256"), "y");
	assert_int_equal(klog_zkuser_remove(&u, "producer_byte_rate"), 1);
	assert_int_equal(klog_zkuser_remove(&u, "producer_byte_rate"), 0);
	assert_int_equal(u.n, 2);
	assert_int_equal(klog_zkuser_set(&u, "", "v"), -KLOG_EINVAL);
	klog_zkuser_clear(&u);
	assert_int_equal(u.n, 0);
	assert_int_equal(u.version, -1);
}

static void
test_json_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"{\"config\":{}}",
		"{\"version\":2,\"config\":{}}",
		"{\"version\":1}",
		"{\"version\":1,\"config\":[]}",
		"{\"version\":1,\"config\":{\"a\":1}}",
		"{\"version\":1,\"config\":{\"a\":\"x\",\"a\":\"y\"}}",
		"{\"version\":1,\"config\":{\"a\":\"x\\u0000\"}}",
		"{\"version\":1,\"config\":{}} x",
	};
	klog_zkuser_t u;
	klog_err_t err;

	(void)state;
	klog_zkuser_init(&u);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(klog_zkuser_parse(bad[i], strlen(bad[i]), &u,
		    &err), -KLOG_EINVAL);
		assert_int_equal(u.n, 0);
	}
}

/* Kafka's Sanitizer: URLEncoder, then "*" and "+" (a space) as %2A and
 * %20; "~" is encoded too. */
static void
test_names(void **state)
{
	static const struct {
		const char *name, *node;
	} v[] = {
		{ "alice", "alice" },
		{ "A.b-c_9", "A.b-c_9" },
		{ "bob@example.com", "bob%40example.com" },
		{ "a b*c~", "a%20b%2Ac%7E" },
		{ "CN=x,O=y/z", "CN%3Dx%2CO%3Dy%2Fz" },
		{ "\xc3\xa9", "%C3%A9" },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(klog_zkusers_sanitize(v[i].name, buf,
		    sizeof(buf)), 0);
		assert_string_equal(buf, v[i].node);
		assert_int_equal(klog_zkusers_unsanitize(v[i].node, buf,
		    sizeof(buf)), 0);
		assert_string_equal(buf, v[i].name);
	}
	assert_int_equal(klog_zkusers_unsanitize("a%2", buf, sizeof(buf)),
	    -KLOG_EINVAL);
	assert_int_equal(klog_zkusers_unsanitize("a%zz", buf, sizeof(buf)),
	    -KLOG_EINVAL);
	assert_int_equal(klog_zkusers_unsanitize("a%00", buf, sizeof(buf)),
	    -KLOG_EINVAL);
	assert_int_equal(klog_zkusers_sanitize("@@@", buf, 9), -KLOG_ETOOBIG);
	assert_int_equal(klog_zkusers_sanitize("@@@", buf, 10), 0);
}

static void
test_nodes(void **state)
{
	klog_zk_t *zk, *other, *anon;
	klog_zkuser_t u, v;
	klog_zk_list_t l;
	klog_err_t err;

	(void)state;
	NEED_SERVER();
	assert_int_equal(klog_zk_open_auth(server.connect, "klog:pw", 4000,
	    10000, &zk, &err), 0);
	assert_int_equal(klog_zk_open_auth(server.connect, "klog:pw", 4000,
	    10000, &other, &err), 0);
	assert_int_equal(klog_zk_open(server.connect, 4000, 10000, &anon,
	    &err), 0);
	assert_int_equal(klog_zkusers_list(zk, &l, &err), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(klog_zkusers_read(zk, "a b", &u, &err),
	    -KLOG_ENOENT);
	assert_int_equal(u.version, -1);
	assert_int_equal(klog_zkuser_set(&u, "SCRAM-SHA-256", "cred"), 0);
	assert_int_equal(klog_zkusers_write(zk, "a b", &u, &err), 0);
	/* A second writer that read before the first wrote must redo. */
	assert_int_equal(klog_zkusers_write(other, "a b", &u, &err),
	    -KLOG_EEXIST);
	klog_zkuser_clear(&u);
	assert_int_equal(klog_zkusers_read(other, "a b", &v, &err), 0);
	assert_int_equal(klog_zkusers_read(zk, "a b", &u, &err), 0);
	assert_string_equal(klog_zkuser_get(&u, "SCRAM-SHA-256"), "cred");
	assert_int_equal(klog_zkuser_set(&u, "SCRAM-SHA-512", "c2"), 0);
	assert_int_equal(klog_zkusers_write(zk, "a b", &u, &err), 0);
	assert_int_equal(klog_zkusers_write(other, "a b", &v, &err),
	    -KLOG_EBUSY);
	klog_zkuser_clear(&v);
	/* The identity's alone. */
	assert_int_equal(klog_zkusers_read(anon, "a b", &v, &err),
	    -KLOG_EDENIED);
	assert_int_equal(klog_zkusers_list(anon, &l, &err), -KLOG_EDENIED);
	assert_int_equal(klog_zkusers_list(zk, &l, &err), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.names[0], "a b");
	klog_zk_list_free(&l);
	klog_zkuser_clear(&u);
	/* No entries left: the node goes. */
	assert_int_equal(klog_zkusers_read(zk, "a b", &u, &err), 0);
	klog_zkuser_remove(&u, "SCRAM-SHA-256");
	klog_zkuser_remove(&u, "SCRAM-SHA-512");
	assert_int_equal(klog_zkusers_write(zk, "a b", &u, &err), 0);
	assert_int_equal(klog_zkusers_read(zk, "a b", &u, &err),
	    -KLOG_ENOENT);
	assert_int_equal(klog_zk_delete_tree(zk, "/config", &err), 0);
	klog_zk_close(anon);
	klog_zk_close(other);
	klog_zk_close(zk);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_refused),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_nodes),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
