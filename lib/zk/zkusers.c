/* SCRAM users in ZooKeeper, as Kafka keeps them; see zkusers.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/json.h"
#include "klog/zk/zkusers.h"

/* A node path: the root, "/", and a name of up to 3 bytes per byte. */
#define PATH_SIZE (sizeof(KLOG_ZKUSERS_ROOT) + 1 + \
    3 * KLOG_ZKUSERS_NAME_MAX + 1)

void
klog_zkuser_init(klog_zkuser_t *u)
{
	memset(u, 0, sizeof(*u));
	u->version = -1;
}

static void
free_value(char *v)
{
	if (v == NULL)
		return;
	explicit_bzero(v, strlen(v));
	free(v);
}

void
klog_zkuser_clear(klog_zkuser_t *u)
{
	for (int i = 0; i < u->n; i++)
		free_value(u->e[i].value);
	klog_zkuser_init(u);
}

static int
find(const klog_zkuser_t *u, const char *key)
{
	for (int i = 0; i < u->n; i++)
		if (strcmp(u->e[i].key, key) == 0)
			return i;
	return -1;
}

const char *
klog_zkuser_get(const klog_zkuser_t *u, const char *key)
{
	int i = find(u, key);

	return i < 0 ? NULL : u->e[i].value;
}

int
klog_zkuser_set(klog_zkuser_t *u, const char *key, const char *value)
{
	size_t klen = strlen(key);
	int i = find(u, key);
	char *v;

	if (klen == 0 || klen > KLOG_ZKUSERS_KEY_MAX)
		return -KLOG_EINVAL;
	if (i < 0 && u->n == KLOG_ZKUSERS_ENTRIES_MAX)
		return -KLOG_ETOOBIG;
	if ((v = strdup(value)) == NULL)
		return -KLOG_ENOMEM;
	if (i < 0) {
		i = u->n++;
		memcpy(u->e[i].key, key, klen + 1);
	} else {
		free_value(u->e[i].value);
	}
	u->e[i].value = v;
	return 0;
}

int
klog_zkuser_remove(klog_zkuser_t *u, const char *key)
{
	int i = find(u, key);

	if (i < 0)
		return 0;
	free_value(u->e[i].value);
	memmove(&u->e[i], &u->e[i + 1], (size_t)(u->n - i - 1) *
	    sizeof(u->e[0]));
	u->n--;
	return 1;
}

/* ---- the JSON ---- */

int
klog_zkuser_encode(klog_buf_t *b, const klog_zkuser_t *u)
{
	static const char head[] = "{\"version\":1,\"config\":{";

	klog_buf_put(b, head, sizeof(head) - 1);
	for (int i = 0; i < u->n; i++) {
		if (i > 0)
			klog_buf_put(b, ",", 1);
		klog_json_put_string(b, u->e[i].key, strlen(u->e[i].key));
		klog_buf_put(b, ":", 1);
		klog_json_put_string(b, u->e[i].value, strlen(u->e[i].value));
	}
	klog_buf_put(b, "}}", 2);
	return b->failed ? -KLOG_ENOMEM : 0;
}

/* One member of "config": a string, kept whatever its key. */
static int
config_member(klog_json_rd_t *r, int field, const char *key, size_t key_len,
    void *ctx)
{
	klog_zkuser_t *u = ctx;
	klog_json_member_t m;
	char k[KLOG_ZKUSERS_KEY_MAX + 1];
	klog_buf_t v;
	int rc;

	(void)field;
	if (key_len == 0 || key_len > KLOG_ZKUSERS_KEY_MAX ||
	    memchr(key, '\\', key_len) != NULL)
		return klog_json_rd_fail(r, "config: a key empty, over %d "
		    "bytes or escaped", KLOG_ZKUSERS_KEY_MAX);
	memcpy(k, key, key_len);
	k[key_len] = '\0';
	if (find(u, k) >= 0)
		return klog_json_rd_fail(r, "config: %s twice", k);
	if ((rc = klog_json_rd_scalar(r, &m)) < 0)
		return rc;
	if (m.type != KLOG_JSON_STRING)
		return klog_json_rd_fail(r, "config: %s: not a string", k);
	klog_buf_init(&v);
	if ((rc = klog_json_unescape(&v, m.raw, m.raw_len)) == 0) {
		klog_buf_put(&v, "", 1);
		if (v.failed)
			rc = -KLOG_ENOMEM;
		else if (strlen((char *)v.data) + 1 != v.len)
			rc = klog_json_rd_fail(r, "config: %s: a NUL byte", k);
		else
			rc = klog_zkuser_set(u, k, (char *)v.data);
		if (rc == -KLOG_ETOOBIG)
			rc = klog_json_rd_fail(r, "config: over %d keys",
			    KLOG_ZKUSERS_ENTRIES_MAX);
	}
	if (v.data != NULL)
		explicit_bzero(v.data, v.cap);
	klog_buf_free(&v);
	return rc < 0 ? rc : 1;
}

enum { U_VERSION, U_CONFIG, U_NFIELDS };
static const char *const u_fields[U_NFIELDS] = { "version", "config" };

static int
user_member(klog_json_rd_t *r, int field, const char *key, size_t key_len,
    void *ctx)
{
	int64_t version;
	int rc;

	(void)key;
	(void)key_len;
	switch (field) {
	case U_VERSION:
		if ((rc = klog_json_rd_int(r, "version", 1, 1, &version)) < 0)
			return rc;
		return 1;
	case U_CONFIG:
		if (klog_json_rd_peek(r) != '{')
			return klog_json_rd_fail(r, "config: not an object");
		rc = klog_json_rd_object(r, NULL, 0, config_member, ctx);
		return rc < 0 ? rc : 1;
	default:
		return 0;  /* a later writer's key */
	}
}

int
klog_zkuser_parse(const char *s, size_t n, klog_zkuser_t *u,
    klog_err_t *err)
{
	klog_json_rd_t r;
	int32_t version = u->version;
	int rc;

	klog_zkuser_clear(u);
	u->version = version;
	klog_json_rd_init(&r, s, n, "user JSON", err);
	if ((rc = klog_json_rd_object(&r, u_fields, U_NFIELDS, user_member,
	    u)) < 0 || (rc = klog_json_rd_end(&r)) < 0) {
		klog_zkuser_clear(u);
		u->version = version;
	}
	return rc;
}

/* ---- names ---- */

int
klog_zkusers_sanitize(const char *name, char *buf, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (o + 4 > size)
			return -KLOG_ETOOBIG;
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' ||
		    *p == '_') {
			buf[o++] = (char)*p;
		} else {
			buf[o++] = '%';
			buf[o++] = hex[*p >> 4];
			buf[o++] = hex[*p & 15];
		}
	}
	if (o + 1 > size)
		return -KLOG_ETOOBIG;
	buf[o] = '\0';
	return 0;
}

static int
unhex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int
klog_zkusers_unsanitize(const char *s, char *buf, size_t size)
{
	size_t o = 0;
	int hi, lo;

	for (; *s != '\0'; s++) {
		if (o + 1 >= size)
			return -KLOG_ETOOBIG;
		if (*s != '%') {
			buf[o++] = *s;
			continue;
		}
		if ((hi = unhex(s[1])) < 0 || (lo = unhex(s[2])) < 0 ||
		    (hi == 0 && lo == 0))
			return -KLOG_EINVAL;
		buf[o++] = (char)(hi << 4 | lo);
		s += 2;
	}
	buf[o] = '\0';
	return 0;
}

/* ---- the nodes ---- */

static int
user_path(const char *name, char *path, size_t size, klog_err_t *err)
{
	char node[3 * KLOG_ZKUSERS_NAME_MAX + 1];

	if (*name == '\0' || strlen(name) > KLOG_ZKUSERS_NAME_MAX ||
	    klog_zkusers_sanitize(name, node, sizeof(node)) < 0)
		return klog_err_set(err, -KLOG_EINVAL, "a user name empty or "
		    "over %d bytes", KLOG_ZKUSERS_NAME_MAX);
	snprintf(path, size, "%s/%s", KLOG_ZKUSERS_ROOT, node);
	return 0;
}

int
klog_zkusers_read(klog_zk_t *zk, const char *name, klog_zkuser_t *u,
    klog_err_t *err)
{
	char path[PATH_SIZE], *data = NULL;
	klog_zk_stat_t st;
	size_t len = 0;
	int rc;

	klog_zkuser_init(u);
	if ((rc = user_path(name, path, sizeof(path), err)) < 0)
		return rc;
	if ((rc = klog_zk_get(zk, path, 0, &data, &len, &st, err)) < 0)
		return rc;
	u->version = st.version;
	rc = klog_zkuser_parse(data, len, u, err);
	explicit_bzero(data, len);
	free(data);
	return rc;
}

int
klog_zkusers_write(klog_zk_t *zk, const char *name, const klog_zkuser_t *u,
    klog_err_t *err)
{
	char path[PATH_SIZE];
	klog_buf_t b;
	int rc;

	if ((rc = user_path(name, path, sizeof(path), err)) < 0)
		return rc;
	if (u->n == 0)
		return u->version < 0 ? 0 : klog_zk_delete(zk, path,
		    u->version, err);
	klog_buf_init(&b);
	if ((rc = klog_zkuser_encode(&b, u)) < 0)
		rc = klog_err_set(err, rc, "%s: %s", path, klog_strerror(rc));
	else if (u->version < 0)
		rc = klog_zk_create(zk, path, b.data, b.len, 0, err);
	else
		rc = klog_zk_set(zk, path, b.data, b.len, u->version, err);
	if (b.data != NULL)
		explicit_bzero(b.data, b.cap);
	klog_buf_free(&b);
	return rc;
}

int
klog_zkusers_list(klog_zk_t *zk, klog_zk_list_t *out, klog_err_t *err)
{
	char name[KLOG_ZKUSERS_NAME_MAX + 1];
	size_t i, kept = 0;
	int rc = klog_zk_children(zk, KLOG_ZKUSERS_ROOT, 0, out, err);

	if (rc == -KLOG_ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	/* A node whose name is no sanitized name is not one of ours. */
	for (i = 0; i < out->n; i++) {
		if (klog_zkusers_unsanitize(out->names[i], name,
		    sizeof(name)) < 0) {
			free(out->names[i]);
			continue;
		}
		strcpy(out->names[i], name);  /* never longer than before */
		out->names[kept++] = out->names[i];
	}
	out->n = kept;
	/* Decoded names may sort otherwise than encoded ones. */
	for (i = 1; i < out->n; i++)
		for (size_t j = i; j > 0 && strcmp(out->names[j - 1],
		    out->names[j]) > 0; j--) {
			char *t = out->names[j];

			out->names[j] = out->names[j - 1];
			out->names[j - 1] = t;
		}
	return 0;
}
