/*
 * Tests for lib/zk/zkacl.c: the --zk-auth-file rules (one line
 * user:password, no secret in a message, refused when others may read it)
 * and which ACL each path of klog's layout gets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/zk/layout.h"
#include "klog/zk/rtopics.h"
#include "klog/zk/zkacl.h"
#include "fx/tmpdir.h"

static char dir[64];

/* A file in dir with len bytes of body at mode; its path in path. */
static void
put(char *path, size_t size, const char *body, size_t len, mode_t mode)
{
	FILE *f;

	snprintf(path, size, "%s/auth", dir);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(body, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static int
setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "zkacl") == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	tmpdir_remove(dir);
	return 0;
}

static void
test_auth_file_good(void **state)
{
	char path[128], buf[KLOG_ZKACL_AUTH_SIZE];
	klog_err_t err;

	(void)state;
	put(path, sizeof(path), "klog:s3cret\n", 12, 0600);
	assert_int_equal(klog_zkacl_auth_load(path, buf, sizeof(buf), &err),
	    0);
	assert_string_equal(buf, "klog:s3cret");
	/* No newline at the end; a ':' in the password is the password's;
	 * the group may read it (others may not). */
	put(path, sizeof(path), "klog:a:b c", 10, 0640);
	assert_int_equal(klog_zkacl_auth_load(path, buf, sizeof(buf), &err),
	    0);
	assert_string_equal(buf, "klog:a:b c");
}

static void
test_auth_file_refused(void **state)
{
	static const struct {
		const char *body;
		size_t len;
		const char *why;
	} bad[] = {
		{ "", 0, "no ':'" },
		{ "\n", 1, "no ':'" },
		{ "klogs3cret\n", 11, "no ':'" },
		{ ":s3cret\n", 8, "an empty user" },
		{ "klog:\n", 6, "an empty password" },
		{ "klog:s3cret\n\n", 13, "a control byte" },
		{ "klog:s3cret\nmore:lines\n", 23, "a control byte" },
		{ "klog:s3cret\r\n", 13, "a control byte" },
		{ "klog:s3\tcret", 12, "a control byte" },
		{ "klog:s3\0cret", 12, "a NUL byte" },
	};
	char path[128], buf[KLOG_ZKACL_AUTH_SIZE], big[KLOG_ZKACL_AUTH_MAX + 8];
	klog_err_t err;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(path, sizeof(path), bad[i].body, bad[i].len, 0600);
		memset(buf, 'x', sizeof(buf));
		assert_int_equal(klog_zkacl_auth_load(path, buf, sizeof(buf),
		    &err), -KLOG_EINVAL);
		assert_non_null(strstr(err.msg, path));
		assert_non_null(strstr(err.msg, bad[i].why));
		/* The secret is never quoted, and wiped from buf. */
		assert_null(strstr(err.msg, "3cret"));
		assert_int_equal(buf[0], '\0');
	}
	/* Too long by one byte, and exactly the longest taken. */
	memset(big, 'p', sizeof(big));
	memcpy(big, "klog:", 5);
	put(path, sizeof(path), big, KLOG_ZKACL_AUTH_MAX + 1, 0600);
	assert_int_equal(klog_zkacl_auth_load(path, buf, sizeof(buf), &err),
	    -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "longer than"));
	put(path, sizeof(path), big, KLOG_ZKACL_AUTH_MAX, 0600);
	assert_int_equal(klog_zkacl_auth_load(path, buf, sizeof(buf), &err),
	    0);
	assert_int_equal(strlen(buf), KLOG_ZKACL_AUTH_MAX);
	/* A buffer too small for it. */
	put(path, sizeof(path), "klog:s3cret", 11, 0600);
	assert_int_equal(klog_zkacl_auth_load(path, buf, 8, &err),
	    -KLOG_EINVAL);
}

/* As the users file: others may neither read nor write it. */
static void
test_auth_file_mode(void **state)
{
	char path[128], buf[KLOG_ZKACL_AUTH_SIZE];
	klog_err_t err;

	(void)state;
	put(path, sizeof(path), "klog:s3cret\n", 12, 0604);
	assert_int_equal(klog_zkacl_auth_load(path, buf, sizeof(buf), &err),
	    -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "others may read or write it "
	    "(mode 0604)"));
	assert_int_equal(chmod(path, 0602), 0);
	assert_int_equal(klog_zkacl_auth_load(path, buf, sizeof(buf), &err),
	    -KLOG_EINVAL);
	assert_int_equal(klog_zkacl_auth_load(dir, buf, sizeof(buf), &err),
	    -KLOG_EINVAL);
	assert_non_null(strstr(err.msg, "not a regular file"));
	snprintf(path, sizeof(path), "%s/none", dir);
	assert_int_equal(klog_zkacl_auth_load(path, buf, sizeof(buf), &err),
	    -KLOG_ENOENT);
}

static void
test_acl_by_path(void **state)
{
	static const struct {
		const char *path;
		int kind;
	} want[] = {
		{ "/", KLOG_ZKACL_CREATOR_READ },
		{ "/chroot", KLOG_ZKACL_CREATOR_READ },
		{ KLOG_LAYOUT_BROKER_IDS "/1", KLOG_ZKACL_CREATOR_READ },
		{ KLOG_LAYOUT_BROKER_TOPICS "/t/1", KLOG_ZKACL_CREATOR_READ },
		{ KLOG_RTOPICS_ROOT "/t/partitions/0/state",
		    KLOG_ZKACL_CREATOR_READ },
		{ KLOG_RTOPICS_DELETE_ROOT "/t", KLOG_ZKACL_CREATOR_READ },
		{ "/consumers", KLOG_ZKACL_OPEN },
		{ "/consumers/g/offsets/t/0-0", KLOG_ZKACL_OPEN },
		{ "/consumersX", KLOG_ZKACL_CREATOR_READ },
		{ "/config", KLOG_ZKACL_CREATOR_READ },
		{ "/config/users", KLOG_ZKACL_CREATOR_ONLY },
		{ "/config/users/alice", KLOG_ZKACL_CREATOR_ONLY },
		{ "/config/usersX", KLOG_ZKACL_CREATOR_READ },
	};

	(void)state;
	/* The copy of layout.h's name that zkacl.h keeps is the same. */
	assert_string_equal(KLOG_ZKACL_CONSUMERS, KLOG_LAYOUT_CONSUMERS);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(klog_zkacl_for(want[i].path, 1), want[i].kind);
		/* Without an identity, everything open, as before. */
		assert_int_equal(klog_zkacl_for(want[i].path, 0),
		    KLOG_ZKACL_OPEN);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_file_good),
		cmocka_unit_test(test_auth_file_refused),
		cmocka_unit_test(test_auth_file_mode),
		cmocka_unit_test(test_acl_by_path),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
