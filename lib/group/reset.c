/*
 * A consumer group's offsets reset; see reset.h.
 */
#include <stdlib.h>

#include "klog/group/reset.h"
#include "klog/proto/proto.h"
#include "klog/zk/layout.h"

/* Refuse to touch a group whose consumers are running. */
static int
check_idle(klog_zk_t *zk, const klog_reset_config_t *c, klog_err_t *err)
{
	klog_zk_list_t m;
	int rc;

	if ((rc = klog_layout_members(zk, c->group, 0, &m, err)) < 0)
		return rc;
	if (m.n > 0 && !c->force)
		rc = klog_err_set(err, -KLOG_EBUSY, "group \"%s\" has %zu live "
		    "member%s (%s%s)", c->group, m.n, m.n == 1 ? "" : "s",
		    m.names[0], m.n > 1 ? ", ..." : "");
	klog_zk_list_free(&m);
	return rc;
}

static int
new_offset(const klog_reset_config_t *c, klog_positions_brokers_t *brs,
    const klog_positions_part_t *p, int64_t *off, klog_err_t *err)
{
	int rc;

	switch (c->to) {
	case KLOG_RESET_OFFSET:
		*off = c->value;
		return 0;
	case KLOG_RESET_EARLIEST:
		return klog_positions_ask_offset(brs, c->topic, p,
		    KLOG_OFFSET_EARLIEST, c->timeout_ms, off, err);
	case KLOG_RESET_LATEST:
		return klog_positions_ask_offset(brs, c->topic, p,
		    KLOG_OFFSET_LATEST, c->timeout_ms, off, err);
	default:
		rc = klog_positions_ask_offset(brs, c->topic, p, c->value,
		    c->timeout_ms, off, err);
		/* Nothing that old: everything there is is newer. */
		if (rc == -KLOG_ENOENT)
			rc = klog_positions_ask_offset(brs, c->topic, p,
			    KLOG_OFFSET_EARLIEST, c->timeout_ms, off, err);
		return rc;
	}
}

/* Each row's committed offset and new one, from its part. */
static int
fill_rows(klog_zk_t *zk, const klog_reset_config_t *c, klog_reset_row_t *rows,
    size_t n, klog_err_t *err)
{
	klog_positions_brokers_t brs = { .sec = c->sec };
	int rc;

	if ((rc = klog_positions_brokers_load(zk, &brs, err)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		rc = klog_layout_offset_read(zk, c->group, c->topic,
		    rows[i].part.broker, rows[i].part.part, &rows[i].before,
		    err);
		if (rc == -KLOG_ENOENT || rc == -KLOG_ECORRUPT)
			rows[i].before = -1;
		else if (rc < 0)
			break;
		if ((rc = new_offset(c, &brs, &rows[i].part, &rows[i].after,
		    err)) < 0)
			break;
	}
	klog_positions_brokers_free(&brs);
	return rc;
}

int
klog_reset_plan(klog_zk_t *zk, const klog_reset_config_t *c,
    klog_reset_row_t **rows, size_t *n, klog_err_t *err)
{
	klog_positions_part_t *parts = NULL;
	klog_reset_row_t *v = NULL;
	size_t k = 0;
	int rc;

	*rows = NULL;
	*n = 0;
	if ((rc = check_idle(zk, c, err)) < 0)
		return rc;
	if ((rc = klog_positions_parts(zk, c->group, c->topic, &parts, &k,
	    err)) < 0)
		return rc;
	if (k == 0)
		rc = klog_err_set(err, -KLOG_ENOTOPIC, "topic \"%s\": no "
		    "partitions registered or committed", c->topic);
	else if ((v = calloc(k, sizeof(*v))) == NULL)
		rc = klog_err_set(err, -KLOG_ENOMEM, "%s",
		    klog_strerror(KLOG_ENOMEM));
	for (size_t i = 0; v != NULL && i < k; i++)
		v[i].part = parts[i];
	free(parts);
	if (rc == 0)
		rc = fill_rows(zk, c, v, k, err);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*rows = v;
	*n = k;
	return 0;
}

int
klog_reset_commit(klog_zk_t *zk, const klog_reset_config_t *c,
    const klog_reset_row_t *rows, size_t n, klog_err_t *err)
{
	int rc;

	for (size_t i = 0; i < n; i++)
		if ((rc = klog_layout_offset_commit(zk, c->group, c->topic,
		    rows[i].part.broker, rows[i].part.part, rows[i].after,
		    err)) < 0)
			return rc;
	return 0;
}
