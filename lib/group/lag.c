/*
 * A consumer group's lag, partition by partition; see lag.h.
 */
#include <stdlib.h>
#include <string.h>

#include "klog/group/lag.h"
#include "klog/proto/proto.h"
#include "klog/storage/names.h"
#include "klog/zk/layout.h"

struct klog_lag {
	klog_zk_t *zk;
	const char *group;
	const char *one;           /* the topic asked for, or NULL */
	int one_done;
	klog_zk_list_t topics;     /* without one: the group's */
	size_t ti;                 /* the next of them */
	const char *topic;         /* the topic being walked */
	klog_positions_part_t *parts;
	size_t nparts, pi;
	klog_positions_brokers_t brs;
	int timeout_ms;
	char *owner;               /* the last row's */
};

static int
group_exists(klog_zk_t *zk, const char *group, klog_err_t *err)
{
	char path[KLOG_ZK_PATH_MAX];
	int rc;

	klog_layout_group_path(path, sizeof(path), group);
	rc = klog_zk_exists(zk, path, 0, NULL, err);
	if (rc == -KLOG_ENOENT)
		return klog_err_set(err, rc, "group \"%s\": no such group",
		    group);
	return rc;
}

int
klog_lag_open(klog_zk_t *zk, const char *group, const char *topic,
    int timeout_ms, const klog_client_sec_t *sec, klog_lag_t **out,
    klog_err_t *err)
{
	klog_lag_t *l;
	int rc;

	*out = NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "%s",
		    klog_strerror(KLOG_ENOMEM));
	l->zk = zk;
	l->group = group;
	l->one = topic;
	l->timeout_ms = timeout_ms;
	l->brs.sec = sec;
	if ((rc = group_exists(zk, group, err)) < 0 ||
	    (topic == NULL && (rc = klog_layout_group_topics(zk, group,
	    &l->topics, err)) < 0) ||
	    (rc = klog_positions_brokers_load(zk, &l->brs, err)) < 0) {
		klog_lag_close(l);
		return rc;
	}
	*out = l;
	return 0;
}

/* The next topic's partitions: 1, 0 when there is none left. */
static int
next_topic(klog_lag_t *l, klog_err_t *err)
{
	int rc;

	free(l->parts);
	l->parts = NULL;
	l->nparts = l->pi = 0;
	if (l->one != NULL && l->one_done)
		return 0;
	if (l->one != NULL) {
		l->topic = l->one;
		l->one_done = 1;
	} else {
		while (l->ti < l->topics.n &&
		    klog_topic_validate(l->topics.names[l->ti], NULL) < 0)
			l->ti++;
		if (l->ti == l->topics.n)
			return 0;
		l->topic = l->topics.names[l->ti++];
	}
	if ((rc = klog_positions_parts(l->zk, l->group, l->topic, &l->parts,
	    &l->nparts, err)) < 0)
		return rc;
	return 1;
}

static int
read_row(klog_lag_t *l, const klog_positions_part_t *p, klog_lag_row_t *row,
    klog_err_t *err)
{
	int rc;

	memset(row, 0, sizeof(*row));
	row->topic = l->topic;
	row->part = *p;
	rc = klog_layout_offset_read(l->zk, l->group, l->topic, p->broker,
	    p->part, &row->current, err);
	if (rc < 0 && rc != -KLOG_ENOENT && rc != -KLOG_ECORRUPT)
		return rc;
	row->has_current = rc == 0;
	rc = klog_layout_owner_read(l->zk, l->group, l->topic, p->broker,
	    p->part, &l->owner, err);
	if (rc < 0 && rc != -KLOG_ENOENT)
		return rc;
	row->owner = l->owner;
	row->has_end = klog_positions_ask_offset(&l->brs, l->topic, p,
	    KLOG_OFFSET_LATEST, l->timeout_ms, &row->end, NULL) == 0;
	row->has_lag = row->has_current && row->has_end;
	if (row->has_lag)
		row->lag = row->end - row->current;
	return 1;
}

int
klog_lag_next(klog_lag_t *l, klog_lag_row_t *row, klog_err_t *err)
{
	int rc;

	free(l->owner);
	l->owner = NULL;
	while (l->pi == l->nparts)
		if ((rc = next_topic(l, err)) <= 0)
			return rc;
	return read_row(l, &l->parts[l->pi++], row, err);
}

void
klog_lag_close(klog_lag_t *l)
{
	if (l == NULL)
		return;
	klog_positions_brokers_free(&l->brs);
	klog_zk_list_free(&l->topics);
	free(l->parts);
	free(l->owner);
	free(l);
}
