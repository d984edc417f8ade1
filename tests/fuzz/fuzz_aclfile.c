/*
 * libFuzzer target for the ACL file (lib/auth/aclfile.c) and what it feeds
 * (lib/auth/acl.c): arbitrary bytes as an ACL file, and as a super.users
 * list.
 *
 * Besides not crashing or leaking, it checks what aclfile.h and acl.h
 * promise: a file either loads whole or fails with "NAME:LINE: why" free
 * of control bytes; every ACL loaded is valid; the set written back reads
 * back to the same ACLs and writes the same text again; and each ACL
 * decides a request it matches exactly (a request on its own principal,
 * host, operation and name is decided by an ACL, denied if it is a DENY).
 * A broken invariant aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/auth/acl.h"
#include "klog/auth/aclfile.h"
#include "klog/base/buf.h"
#include "klog/base/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void
check_message(const char *msg)
{
	CHECK(strncmp(msg, "fuzz:", 5) == 0);
	for (const char *p = msg; *p != '\0'; p++)
		CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
}

/* The set written out, read back: the same ACLs, the same text. */
static void
roundtrip(const klog_acl_set_t *s)
{
	klog_acl_set_t *again;
	klog_buf_t text, text2;
	klog_err_t err = { 0, "" };

	klog_buf_init(&text);
	klog_buf_init(&text2);
	klog_aclfile_format(s, &text);
	CHECK(!text.failed);
	CHECK(klog_acl_set_new(&again) == 0);
	CHECK(klog_aclfile_parse("again", (const char *)text.data, text.len,
	    again, &err) == 0);
	CHECK(klog_acl_count(again) == klog_acl_count(s));
	for (size_t i = 0; i < klog_acl_count(s); i++)
		CHECK(memcmp(klog_acl_get(s, i), klog_acl_get(again, i),
		    sizeof(klog_acl_t)) == 0);
	klog_aclfile_format(again, &text2);
	CHECK(text2.len == text.len &&
	    memcmp(text2.data, text.data, text.len) == 0);
	klog_acl_set_free(again);
	klog_buf_free(&text);
	klog_buf_free(&text2);
}

/* Each ACL against the request it describes. */
static void
decisions(const klog_acl_set_t *s)
{
	for (size_t i = 0; i < klog_acl_count(s); i++) {
		const klog_acl_t *a = klog_acl_get(s, i), *why;
		klog_acl_t copy = *a;
		klog_acl_op_t op = a->op == KLOG_ACL_ALL ? KLOG_ACL_DESCRIBE :
		    a->op;
		klog_acl_verdict_t v;

		CHECK(klog_acl_validate(&copy, NULL) == 0);
		CHECK(memcmp(&copy, a, sizeof(copy)) == 0);
		v = klog_acl_decide(s, a->principal,
		    strcmp(a->host, "*") == 0 ? NULL : a->host, op, a->res,
		    a->name, &why);
		CHECK(v == KLOG_ACL_DENIED_BY_ACL ||
		    v == KLOG_ACL_ALLOWED_BY_ACL);
		CHECK(why != NULL);
		if (a->perm == KLOG_ACL_DENY)
			CHECK(v == KLOG_ACL_DENIED_BY_ACL);
	}
}

static void
file(const uint8_t *data, size_t size)
{
	klog_acl_set_t *s;
	klog_err_t err = { 0, "" };
	int rc;

	CHECK(klog_acl_set_new(&s) == 0);
	rc = klog_aclfile_parse("fuzz", (const char *)data, size, s, &err);
	CHECK(rc == 0 || rc == -KLOG_ECORRUPT);
	if (rc < 0) {
		check_message(err.msg);
	} else {
		roundtrip(s);
		decisions(s);
	}
	klog_acl_set_free(s);
}

static void
super_users(const uint8_t *data, size_t size)
{
	klog_acl_set_t *s;
	char *list;
	int rc;

	if ((list = malloc(size + 1)) == NULL)
		return;
	memcpy(list, data, size);
	list[size] = '\0';
	CHECK(klog_acl_set_new(&s) == 0);
	rc = klog_acl_super_users(s, list, NULL);
	CHECK(rc == 0 || rc == -KLOG_EINVAL);
	/* Nobody is a super user by the wildcard. */
	CHECK(klog_acl_decide(s, KLOG_ACL_ANYONE, NULL, KLOG_ACL_READ,
	    KLOG_ACL_TOPIC, "t", NULL) != KLOG_ACL_ALLOWED_SUPER_USER);
	klog_acl_set_free(s);
	free(list);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	file(data, size);
	super_users(data, size);
	return 0;
}
