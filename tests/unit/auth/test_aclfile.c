/*
 * The ACL file (aclfile.h): its syntax read and written back, each kind of
 * bad line named with its number, the load's refusals (missing, writable
 * by others), and an edit: the lock, the atomic save at mode 0600 whatever
 * the umask, nothing left behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fx/tmpdir.h"
#include "klog/auth/aclfile.h"
#include "fx/textfile.h"

static char dir[64];
static char path[128];

static int
setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof(dir), "aclfile") == NULL)
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

static void
write_file(const char *text, mode_t mode)
{
	unlink(path);
	textfile_write(path, text);
	assert_int_equal(chmod(path, mode), 0);
}

/* text parsed into a new set; 0 or the error, with err. */
static int
parse(const char *text, klog_acl_set_t **s, klog_err_t *err)
{
	assert_int_equal(klog_acl_set_new(s), 0);
	return klog_aclfile_parse("acls", text, strlen(text), *s, err);
}

/* The set as the file writes it. */
static char *
format(const klog_acl_set_t *s)
{
	static char out[8192];
	klog_buf_t b;

	klog_buf_init(&b);
	klog_aclfile_format(s, &b);
	assert_false(b.failed);
	assert_true(b.len < sizeof(out));
	memcpy(out, b.data, b.len);
	out[b.len] = '\0';
	klog_buf_free(&b);
	return out;
}

static void
test_syntax(void **state)
{
	static const char text[] =
	    "# a comment\n"
	    "\n"
	    "   \t\n"
	    "  # an indented comment\n"
	    "Allow Read Topic Literal clicks User:alice\n"
	    "allow\tdescribe\tgroup\tprefixed\tapp-\thost=10.0.0.7\t"
	    "User:CN=app, OU=Ops Team,O=Acme\\, Inc.  \r\n"
	    "DENY write TOPIC literal audit   User:*\n"
	    "allow ClusterAction cluster literal kafka-cluster "
	    "HOST=0:0::1 User:CN=broker-2,O=klog\n"
	    "allow read topic literal clicks User:alice\n"
	    "allow all topic prefixed logs. User:host=x";
	klog_acl_set_t *s, *again;
	const klog_acl_t *a;
	klog_err_t err = { 0, "" };
	char *out;

	(void)state;
	assert_int_equal(parse(text, &s, &err), 0);
	/* The repeated line is one ACL. */
	assert_int_equal(klog_acl_count(s), 5);
	a = klog_acl_get(s, 0);
	assert_int_equal(a->perm, KLOG_ACL_DENY);
	assert_string_equal(a->name, "audit");
	assert_string_equal(a->principal, "User:*");
	a = klog_acl_get(s, 1);
	assert_string_equal(a->principal, "User:alice");
	assert_int_equal(a->op, KLOG_ACL_READ);
	a = klog_acl_get(s, 2);
	assert_int_equal(a->pattern, KLOG_ACL_PREFIXED);
	assert_string_equal(a->principal, "User:host=x");
	a = klog_acl_get(s, 3);
	assert_int_equal(a->res, KLOG_ACL_GROUP);
	assert_string_equal(a->host, "10.0.0.7");
	/* The DN keeps its commas and spaces, not the blanks at the end. */
	assert_string_equal(a->principal,
	    "User:CN=app, OU=Ops Team,O=Acme\\, Inc.");
	a = klog_acl_get(s, 4);
	assert_int_equal(a->op, KLOG_ACL_CLUSTER_ACTION);
	assert_string_equal(a->host, "::1");

	out = format(s);
	assert_string_equal(out,
	    "# klog ACLs: permission operation resource pattern name "
	    "[host=IP] principal\n"
	    "deny write topic literal audit User:*\n"
	    "allow read topic literal clicks User:alice\n"
	    "allow all topic prefixed logs. User:host=x\n"
	    "allow describe group prefixed app- host=10.0.0.7 "
	    "User:CN=app, OU=Ops Team,O=Acme\\, Inc.\n"
	    "allow cluster_action cluster literal kafka-cluster host=::1 "
	    "User:CN=broker-2,O=klog\n");
	/* What is written reads back the same, and writes the same. */
	assert_int_equal(parse(out, &again, &err), 0);
	assert_int_equal(klog_acl_count(again), 5);
	for (size_t i = 0; i < 5; i++)
		assert_memory_equal(klog_acl_get(s, i), klog_acl_get(again, i),
		    sizeof(klog_acl_t));
	assert_string_equal(format(again), out);
	klog_acl_set_free(again);
	klog_acl_set_free(s);

	/* Nothing but comments: no ACL; nothing at all: none either. */
	assert_int_equal(parse("# only\n\n", &s, &err), 0);
	assert_int_equal(klog_acl_count(s), 0);
	assert_int_equal(klog_aclfile_parse("acls", "", 0, s, &err), 0);
	klog_acl_set_free(s);
}

/* text must fail with exactly msg. */
static void
bad(const char *text, const char *msg)
{
	klog_acl_set_t *s;
	klog_err_t err = { 0, "" };
	int rc = parse(text, &s, &err);

	klog_acl_set_free(s);
	if (rc != -KLOG_ECORRUPT || strcmp(err.msg, msg) != 0)
		fail_msg("%s: rc %d, \"%s\", wanted \"%s\"", text, rc, err.msg,
		    msg);
}

static void
test_bad_lines(void **state)
{
	char *line;
	size_t n;

	(void)state;
	bad("allow read topic literal t\n", "acls:1: no principal; want: "
	    "allow|deny OPERATION RESOURCE literal|prefixed NAME [host=IP] "
	    "PRINCIPAL");
	bad("# ok\nallow read topic\n", "acls:2: want: allow|deny OPERATION "
	    "RESOURCE literal|prefixed NAME [host=IP] PRINCIPAL");
	bad("permit read topic literal t User:a\n", "acls:1: permission "
	    "\"permit\": not one of ALLOW, DENY");
	bad("allow reed topic literal t User:a\n", "acls:1: operation "
	    "\"reed\": not one of READ, WRITE, CREATE, DELETE, ALTER, "
	    "DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALL");
	bad("allow read queue literal t User:a\n", "acls:1: resource type "
	    "\"queue\": not one of TOPIC, GROUP, CLUSTER");
	bad("allow read topic match t User:a\n", "acls:1: pattern type "
	    "\"match\": not one of LITERAL, PREFIXED");
	bad("allow read topic literal t user:a\n", "acls:1: principal "
	    "\"user:a\": want User:NAME (Kafka's principal type, as "
	    "written)");
	bad("allow read topic literal t host=example.com User:a\n",
	    "acls:1: host \"example.com\": neither * nor an IP address "
	    "(names are not resolved)");
	bad("allow read topic literal t host= User:a\n", "acls:1: host= "
	    "without an address");
	bad("allow read topic literal t host=10.0.0.1\n", "acls:1: no "
	    "principal; want: allow|deny OPERATION RESOURCE "
	    "literal|prefixed NAME [host=IP] PRINCIPAL");
	bad("allow write group literal g User:a\n", "acls:1: operation WRITE "
	    "does not apply to a GROUP (its operations: READ, DELETE, "
	    "DESCRIBE, ALL)");
	bad("allow create cluster literal my-cluster User:a\n", "acls:1: "
	    "cluster \"my-cluster\": the cluster is \"kafka-cluster\"");
	bad("allow read topic prefixed * User:a\n", "acls:1: a PREFIXED name "
	    "cannot be \"*\" (every name is the LITERAL \"*\")");
	bad("allow read topic literal t User:a\x01" "b\n", "acls:1: principal: "
	    "byte 0x01 not allowed");
	bad("allow read topic literal t User:a\n\nx\n", "acls:3: want: "
	    "allow|deny OPERATION RESOURCE literal|prefixed NAME [host=IP] "
	    "PRINCIPAL");

	/* Too long: a name, a principal, a line. */
	n = KLOG_ACLFILE_LINE_MAX + 64;
	line = malloc(n);
	assert_non_null(line);
	snprintf(line, n, "allow read topic literal %0256d User:a\n", 0);
	bad(line, "acls:1: TOPIC name: 1 to 255 bytes");
	snprintf(line, n, "allow read topic literal t User:%01020d\n", 0);
	bad(line, "acls:1: principal longer than 1024 bytes");
	snprintf(line, n, "allow read topic literal t User:%01019d\n", 0);
	{
		klog_acl_set_t *s;

		assert_int_equal(parse(line, &s, NULL), 0);
		assert_int_equal(klog_acl_count(s), 1);
		klog_acl_set_free(s);
	}
	memset(line, ' ', n - 2);
	line[n - 2] = '\n';
	line[n - 1] = '\0';
	bad(line, "acls:1: longer than 2048 bytes");
	free(line);
}

static void
test_nul_byte(void **state)
{
	static const char text[] = "allow read topic literal t User:a\0b\n";
	klog_acl_set_t *s;
	klog_err_t err = { 0, "" };

	(void)state;
	assert_int_equal(klog_acl_set_new(&s), 0);
	assert_int_equal(klog_aclfile_parse("acls", text, sizeof(text) - 1, s,
	    &err), -KLOG_ECORRUPT);
	assert_string_equal(err.msg, "acls:1: a NUL byte");
	klog_acl_set_free(s);
}

static void
test_load(void **state)
{
	klog_acl_set_t *s;
	klog_err_t err = { 0, "" };
	char want[256];

	(void)state;
	assert_int_equal(klog_acl_set_new(&s), 0);
	unlink(path);
	assert_int_equal(klog_aclfile_load(path, s, &err), -KLOG_ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(err.msg, want);
	write_file("allow read topic literal t User:a\n", 0644);
	assert_int_equal(klog_aclfile_load(path, s, &err), 0);
	assert_int_equal(klog_acl_count(s), 1);
	write_file("allow read topic literal t User:a\n", 0660);
	assert_int_equal(klog_aclfile_load(path, s, &err), -KLOG_EINVAL);
	snprintf(want, sizeof(want), "%s: writable by group or others (mode "
	    "0660): chmod go-w it", path);
	assert_string_equal(err.msg, want);
	write_file("allow read topic literal t User:a\nbogus\n", 0600);
	assert_int_equal(klog_aclfile_load(path, s, &err), -KLOG_ECORRUPT);
	snprintf(want, sizeof(want), "%s:2: want: allow|deny OPERATION "
	    "RESOURCE literal|prefixed NAME [host=IP] PRINCIPAL", path);
	assert_string_equal(err.msg, want);
	assert_int_equal(klog_aclfile_load(dir, s, &err), -KLOG_EINVAL);
	klog_acl_set_free(s);
}

static void
test_edit(void **state)
{
	char lock[160], tmp[160];
	klog_aclfile_t *f;
	klog_acl_set_t *s;
	klog_acl_t a;
	klog_err_t err = { 0, "" };
	struct stat st;
	mode_t old;
	int fd;

	(void)state;
	unlink(path);
	snprintf(lock, sizeof(lock), "%s.lock", path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(lock);
	/* Without create, a missing file is an error, and leaves nothing. */
	assert_int_equal(klog_aclfile_open(path, 0, &f, &s, &err),
	    -KLOG_ENOENT);
	assert_null(f);
	klog_aclfile_close(f);
	assert_int_equal(access(lock, F_OK), -1);

	/* With it, an empty set; saved 0600 whatever the umask. */
	old = umask(0);
	assert_int_equal(klog_aclfile_open(path, 1, &f, &s, &err), 0);
	assert_int_equal(klog_acl_count(s), 0);
	/* The lock is held: another taker would wait. */
	fd = open(lock, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	memset(&a, 0, sizeof(a));
	a.op = KLOG_ACL_WRITE;
	snprintf(a.name, sizeof(a.name), "orders");
	snprintf(a.host, sizeof(a.host), "*");
	snprintf(a.principal, sizeof(a.principal), "User:CN=svc, O=Acme");
	assert_int_equal(klog_acl_add(s, &a, &err), 0);
	assert_int_equal(klog_aclfile_save(f, &err), 0);
	klog_aclfile_close(f);
	umask(old);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	close(fd);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(lock, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_string_equal(textfile_read(path),
	    "# klog ACLs: permission operation resource pattern name "
	    "[host=IP] principal\n"
	    "allow write topic literal orders User:CN=svc, O=Acme\n");

	/* Again: the file read back, one more added, a stale FILE.tmp of
	 * another mode replaced. */
	fd = open(tmp, O_WRONLY | O_CREAT, 0666);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0666), 0);
	close(fd);
	assert_int_equal(klog_aclfile_open(path, 0, &f, &s, &err), 0);
	assert_int_equal(klog_acl_count(s), 1);
	a.op = KLOG_ACL_READ;
	assert_int_equal(klog_acl_add(s, &a, &err), 0);
	assert_int_equal(klog_aclfile_save(f, &err), 0);
	klog_aclfile_close(f);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(klog_acl_set_new(&s), 0);
	assert_int_equal(klog_aclfile_load(path, s, &err), 0);
	assert_int_equal(klog_acl_count(s), 2);
	klog_acl_set_free(s);

	/* A file that does not parse cannot be edited. */
	write_file("allow read topic literal t\n", 0600);
	assert_int_equal(klog_aclfile_open(path, 1, &f, &s, &err),
	    -KLOG_ECORRUPT);
	klog_aclfile_close(f);
	/* A save that cannot write says where. */
	snprintf(tmp, sizeof(tmp), "%s/no/such/dir/acls", dir);
	assert_int_equal(klog_aclfile_open(tmp, 1, &f, &s, &err),
	    -KLOG_ENOENT);
	klog_aclfile_close(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_edit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
