/*
 * Producer id blocks from ZooKeeper (pidblock.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/base/json.h"
#include "klog/base/parse.h"
#include "klog/storage/pids.h"
#include "klog/zk/pidblock.h"

#define TRIES 20                /* writers racing us before we give up */

/* A member's value as a number, quoted or not. */
static int
member_i64(const klog_json_member_t *m, int64_t min, int64_t max,
    int64_t *v)
{
	const char *raw = m->raw;
	size_t len = m->raw_len;
	char buf[32];

	if (m->type == KLOG_JSON_STRING && len >= 2 && raw[0] == '"') {
		raw++;
		len -= 2;
	} else if (m->type != KLOG_JSON_NUMBER) {
		return -KLOG_EINVAL;
	}
	if (len == 0 || len >= sizeof(buf))
		return -KLOG_EINVAL;
	memcpy(buf, raw, len);
	buf[len] = '\0';
	return klog_parse_i64(buf, min, max, v, NULL);
}

static int
key_is(const klog_json_member_t *m, const char *k)
{
	return m->key_len == strlen(k) && memcmp(m->key, k, m->key_len) == 0;
}

int
klog_pidblock_parse(const char *json, size_t len, int32_t *broker,
    int64_t *start, int64_t *end, klog_err_t *err)
{
	klog_json_member_t m[8];
	int64_t v[4] = { -1, -1, -1, -1 };
	static const char *const keys[4] = { "version", "broker",
	    "block_start", "block_end" };
	size_t n;

	if (klog_json_parse_flat(json, len, m, 8, &n) < 0)
		return klog_err_set(err, -KLOG_EINVAL, KLOG_PIDBLOCK_PATH
		    ": not a flat JSON object");
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 4; k++)
			if (key_is(&m[i], keys[k]) && member_i64(&m[i], k == 1 ?
			    INT32_MIN : 0, k == 1 ? INT32_MAX : INT64_MAX,
			    &v[k]) < 0)
				return klog_err_set(err, -KLOG_EINVAL,
				    KLOG_PIDBLOCK_PATH ": a bad \"%s\"", keys[k]);
	if (v[0] != 1 || v[2] < 0 || v[3] < v[2])
		return klog_err_set(err, -KLOG_EINVAL, KLOG_PIDBLOCK_PATH
		    ": not version 1 with block_start <= block_end");
	*broker = (int32_t)v[1];
	*start = v[2];
	*end = v[3];
	return 0;
}

int
klog_pidblock_next(const char *data, size_t len, int32_t broker,
    int64_t *start, int64_t *end, char json[KLOG_PIDBLOCK_JSON],
    klog_err_t *err)
{
	int64_t s = 0, e;
	int32_t was;
	int rc;

	if (data != NULL) {
		if ((rc = klog_pidblock_parse(data, len, &was, &s, &e,
		    err)) < 0)
			return rc;
		if (e > INT64_MAX - KLOG_PIDS_BLOCK - 1)
			return klog_err_set(err, -KLOG_ERANGE, "producer ids "
			    "are used up");
		s = e + 1;
	}
	e = s + KLOG_PIDS_BLOCK - 1;
	snprintf(json, KLOG_PIDBLOCK_JSON, "{\"version\":1,\"broker\":%d,"
	    "\"block_start\":\"%lld\",\"block_end\":\"%lld\"}", (int)broker,
	    (long long)s, (long long)e);
	*start = s;
	*end = e + 1;
	return 0;
}

int
klog_pidblock_take(klog_zk_t *zk, int32_t broker, int64_t *start,
    int64_t *end, klog_err_t *err)
{
	for (int i = 0; i < TRIES; i++) {
		klog_zk_stat_t st;
		char *data = NULL, json[KLOG_PIDBLOCK_JSON];
		size_t len;
		int rc, exists;

		rc = klog_zk_get(zk, KLOG_PIDBLOCK_PATH, 0, &data, &len, &st,
		    err);
		if (rc < 0 && rc != -KLOG_ENOENT)
			return rc;
		exists = rc == 0;
		rc = klog_pidblock_next(data, len, broker, start, end, json,
		    err);
		free(data);
		if (rc < 0)
			return rc;
		rc = !exists ? klog_zk_create(zk, KLOG_PIDBLOCK_PATH,
		    json, strlen(json), 0, err) : klog_zk_set(zk,
		    KLOG_PIDBLOCK_PATH, json, strlen(json), st.version, err);
		if (rc == 0)
			return 0;
		if (rc != -KLOG_EEXIST && rc != -KLOG_EBUSY && rc != -KLOG_ENOENT)
			return rc;
	}
	return klog_err_set(err, -KLOG_EBUSY, KLOG_PIDBLOCK_PATH ": other "
	    "writers won %d times", TRIES);
}
