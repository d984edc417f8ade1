/*
 * libFuzzer target for the pure half of lib/zk/layout.c: ZooKeeper node data
 * as other brokers and consumers (or anyone with write access to the
 * ensemble) leave it, and the names that become znode paths.
 *
 * Arbitrary bytes go through every data parser (broker registration,
 * partition count, committed offset, member subscriptions, "<b>-<p>"
 * partition names); what parses must encode back to data that parses to
 * the same values, numbers must be strict (the text is exactly what klog
 * would write), and a parsed host must be a plain C string.  The same bytes
 * as a topic, group or consumer id must be accepted exactly by the rules
 * of layout.h, and every path built from accepted names must have no
 * empty, "." or ".." component.  A broken invariant aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/storage/log.h"
#include "klog/zk/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAXSUBS 8

static void
broker(const char *s, size_t n)
{
	char host[KLOG_LAYOUT_HOST_MAX + 1], host2[KLOG_LAYOUT_HOST_MAX + 1];
	char enc[2 * KLOG_LAYOUT_HOST_MAX + 64];
	const char *c1;
	size_t hl;
	int port, port2;

	if (klog_layout_broker_parse(s, n, host, sizeof(host), &port) < 0)
		return;
	CHECK(port >= 1 && port <= 65535);
	CHECK(host[0] != '\0' && strchr(host, ':') == NULL);
	/* All that was between the first two colons, no byte lost to a NUL. */
	hl = strlen(host);
	c1 = memchr(s, ':', n);
	CHECK(c1 != NULL && (size_t)(s + n - c1) > 1 + hl);
	CHECK(memcmp(c1 + 1, host, hl) == 0 && c1[1 + hl] == ':');
	CHECK(klog_layout_broker_encode(enc, sizeof(enc), host, port,
	    1234) == 0);
	CHECK(klog_layout_broker_parse(enc, strlen(enc), host2,
	    sizeof(host2), &port2) == 0);
	CHECK(strcmp(host, host2) == 0 && port == port2);
}

static void
numbers(const char *s, size_t n)
{
	char buf[32];
	int64_t off;
	int32_t count;

	if (klog_layout_count_parse(s, n, &count) == 0) {
		CHECK(count >= 1);
		snprintf(buf, sizeof(buf), "%d", (int)count);
		CHECK(strlen(buf) == n && memcmp(buf, s, n) == 0);
	}
	if (klog_layout_offset_parse(s, n, &off) == 0) {
		CHECK(off >= 0);
		snprintf(buf, sizeof(buf), "%lld", (long long)off);
		CHECK(strlen(buf) == n && memcmp(buf, s, n) == 0);
	}
}

static void
members(const char *s, size_t n)
{
	klog_layout_sub_t subs[MAXSUBS], again[MAXSUBS];
	klog_buf_t b;
	size_t k, k2;
	int rc = klog_layout_member_parse(s, n, subs, MAXSUBS, &k);

	CHECK(rc == 0 || rc == -KLOG_EINVAL || rc == -KLOG_EUNSUPPORTED ||
	    rc == -KLOG_ETOOBIG);
	if (rc < 0)
		return;
	CHECK(k <= MAXSUBS);
	for (size_t i = 0; i < k; i++)
		CHECK(klog_topic_validate(subs[i].topic, NULL) == 0 &&
		    subs[i].streams >= 1);
	klog_buf_init(&b);
	CHECK(klog_layout_member_encode(&b, subs, k) == 0);
	CHECK(klog_layout_member_parse((const char *)b.data, b.len, again,
	    MAXSUBS, &k2) == 0 && k2 == k);
	for (size_t i = 0; i < k; i++)
		CHECK(strcmp(subs[i].topic, again[i].topic) == 0 &&
		    subs[i].streams == again[i].streams);
	klog_buf_free(&b);
}

/* The topic and group rules of log.h and layout.h, written out. */
static int
ref_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > KLOG_TOPIC_MAX || strcmp(s, ".") == 0 ||
	    strcmp(s, "..") == 0)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* No empty, "." or ".." component, starting with '/'. */
static void
check_path(const char *p)
{
	const char *c = p, *slash;
	size_t len;

	CHECK(p[0] == '/');
	while (*c == '/') {
		c++;
		slash = strchr(c, '/');
		len = slash ? (size_t)(slash - c) : strlen(c);
		CHECK(len > 0);
		CHECK(!(len == 1 && c[0] == '.'));
		CHECK(!(len == 2 && c[0] == '.' && c[1] == '.'));
		c += len;
	}
	CHECK(*c == '\0');
}

static void
names(const char *s)
{
	char path[1024], id[512];
	int32_t b, p;
	int valid = ref_name(s);

	CHECK((klog_topic_validate(s, NULL) == 0) == valid);
	CHECK((klog_layout_group_validate(s, NULL) == 0) == valid);
	if (klog_layout_topic_path(path, sizeof(path), s) == 0)
		check_path(path);
	else
		CHECK(!valid);
	if (klog_layout_offset_path(path, sizeof(path), s, s, 7, 3) == 0)
		check_path(path);
	else
		CHECK(!valid);
	/* Ids: anything printable without '/', not . or ..  */
	if (klog_layout_member_path(path, sizeof(path), "g", s) == 0)
		check_path(path);
	if (klog_layout_thread_id(id, sizeof(id), s, 2) == 0)
		CHECK(strchr(id, '/') == NULL);
	/* A host name of any bytes makes an id of a valid group's bytes. */
	if (klog_layout_consumer_id(id, sizeof(id), "grp", s, 5, 6) == 0) {
		CHECK(strchr(id, '/') == NULL && strchr(id, ' ') == NULL);
		CHECK(klog_layout_member_path(path, sizeof(path), "grp",
		    id) == 0);
		check_path(path);
	}
	/* "<broker>-<part>", or "<part>" alone for a numbered partition. */
	if (klog_layout_part_parse(s, &b, &p) == 0) {
		CHECK(p >= 0 && (b >= 0 || b == KLOG_LAYOUT_NUMBERED));
		CHECK((b == KLOG_LAYOUT_NUMBERED) == (strchr(s, '-') == NULL));
		CHECK(klog_layout_part_name(id, sizeof(id), b, p) == 0);
		CHECK(strcmp(id, s) == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A heap copy of exactly size bytes, so that ASan catches a parser
	 * reading past the node's data (which is not NUL-terminated). */
	char *s = malloc(size > 0 ? size : 1), *z;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	broker(s, size);
	numbers(s, size);
	members(s, size);
	if ((z = realloc(s, size + 1)) != NULL) {
		s = z;
		s[size] = '\0';
		names(s);
	}
	free(s);
	return 0;
}
