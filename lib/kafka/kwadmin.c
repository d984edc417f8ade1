/*
 * The Kafka admin APIs on the wire; see kwadmin.h.  The layouts are Kafka's
 * message schemas (clients/src/main/resources/common/message/ in
 * apache/kafka); a structure's tagged fields are read wherever the
 * flexible encoding puts them, so one decoder serves every version.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "klog/base/buf.h"
#include "klog/base/error.h"
#include "klog/kafka/kprim.h"
#include "klog/kafka/kwadmin.h"
#include "klog/kafka/kwire.h"

/* ---- CreateTopics ---- */

/* A topic's manual assignment, skipped but counted: partition index and
 * broker ids, per partition. */
static uint32_t
skip_assignments(klog_kprim_rd_t *rd)
{
	int32_t n = klog_kprim_count(rd, 5, 0);

	for (int32_t i = 0; i < n && !rd->rd.failed; i++) {
		int32_t nb;

		(void)klog_rd_i32(&rd->rd);   /* partition index */
		nb = klog_kprim_count(rd, 4, 0);
		for (int32_t j = 0; j < nb && !rd->rd.failed; j++)
			(void)klog_rd_i32(&rd->rd);
		klog_kprim_tags(rd);
	}
	return rd->rd.failed ? 0 : (uint32_t)n;
}

/* A topic's configs appended to cfgs from *k on; their count. */
static int
read_configs(klog_kprim_rd_t *rd, klog_proto_array_t *cfgs, uint32_t *k,
    uint32_t *n)
{
	int32_t count = klog_kprim_count(rd, 2, 0);

	for (int32_t i = 0; i < count && !rd->rd.failed; i++) {
		klog_kconfig_t *c = klog_kprim_slot(cfgs, *k, sizeof(*c));

		if (c == NULL)
			return -KLOG_ENOMEM;
		c->name = klog_kprim_str(rd);
		c->value = klog_kprim_nstr(rd);
		klog_kprim_tags(rd);
		(*k)++;
	}
	*n = rd->rd.failed ? 0 : (uint32_t)count;
	return 0;
}

int
klog_kwadmin_create_topics(const klog_kreq_t *r, klog_kcreate_t *c,
    klog_proto_array_t *a, klog_proto_array_t *cfgs)
{
	klog_kprim_rd_t rd;
	klog_kcreate_topic_t *t;
	uint32_t k = 0, at = 0;
	int32_t n;

	klog_kwire_reader(r, &rd);
	memset(c, 0, sizeof(*c));
	n = klog_kprim_count(&rd, 10, 0);
	for (int32_t i = 0; i < n && !rd.rd.failed; i++) {
		if ((t = klog_kprim_slot(a, (size_t)i, sizeof(*t))) == NULL)
			return -KLOG_ENOMEM;
		memset(t, 0, sizeof(*t));
		t->name = klog_kprim_str(&rd);
		t->partitions = klog_rd_i32(&rd.rd);
		t->rf = klog_rd_i16(&rd.rd);
		t->nassign = skip_assignments(&rd);
		if (read_configs(&rd, cfgs, &k, &t->nconfigs) < 0)
			return -KLOG_ENOMEM;
		klog_kprim_tags(&rd);
	}
	c->timeout_ms = klog_rd_i32(&rd.rd);
	if (r->version >= 1)
		c->validate_only = klog_rd_i8(&rd.rd) != 0;
	klog_kprim_tags(&rd);
	if (rd.rd.failed)
		return -KLOG_EPROTO;
	/* The configs' array is whole only now: point each topic at its
	 * share. */
	t = a->p;
	for (int32_t i = 0; i < n; i++) {
		t[i].configs = t[i].nconfigs == 0 ? NULL :
		    (const klog_kconfig_t *)cfgs->p + at;
		at += t[i].nconfigs;
	}
	c->ntopics = (uint32_t)n;
	c->topics = t;
	return 0;
}

/* ---- DeleteTopics ---- */

int
klog_kwadmin_delete_topics(const klog_kreq_t *r, klog_proto_array_t *a,
    uint32_t *n, int32_t *timeout_ms)
{
	klog_kprim_rd_t rd;
	int32_t count;

	klog_kwire_reader(r, &rd);
	*n = 0;
	count = klog_kprim_count(&rd, 1, 0);
	for (int32_t i = 0; i < count && !rd.rd.failed; i++) {
		klog_str_t *s = klog_kprim_slot(a, (size_t)i, sizeof(*s));

		if (s == NULL)
			return -KLOG_ENOMEM;
		*s = klog_kprim_str(&rd);
	}
	*timeout_ms = klog_rd_i32(&rd.rd);
	klog_kprim_tags(&rd);
	if (rd.rd.failed)
		return -KLOG_EPROTO;
	*n = (uint32_t)count;
	return 0;
}

/* ---- CreatePartitions ---- */

int
klog_kwadmin_create_partitions(const klog_kreq_t *r, klog_kgrow_t *g,
    klog_proto_array_t *a)
{
	klog_kprim_rd_t rd;
	int32_t n;

	klog_kwire_reader(r, &rd);
	memset(g, 0, sizeof(*g));
	n = klog_kprim_count(&rd, 7, 0);
	for (int32_t i = 0; i < n && !rd.rd.failed; i++) {
		klog_kgrow_topic_t *t = klog_kprim_slot(a, (size_t)i,
		    sizeof(*t));

		if (t == NULL)
			return -KLOG_ENOMEM;
		t->name = klog_kprim_str(&rd);
		t->count = klog_rd_i32(&rd.rd);
		t->nassign = klog_kprim_count(&rd, 1, 1);
		for (int32_t j = 0; j < t->nassign && !rd.rd.failed; j++) {
			int32_t nb = klog_kprim_count(&rd, 4, 0);

			for (int32_t b = 0; b < nb && !rd.rd.failed; b++)
				(void)klog_rd_i32(&rd.rd);
			klog_kprim_tags(&rd);
		}
		klog_kprim_tags(&rd);
	}
	g->timeout_ms = klog_rd_i32(&rd.rd);
	g->validate_only = klog_rd_i8(&rd.rd) != 0;
	klog_kprim_tags(&rd);
	if (rd.rd.failed)
		return -KLOG_EPROTO;
	g->ntopics = (uint32_t)n;
	g->topics = a->p;
	return 0;
}

/* ---- results per topic ---- */

void
klog_kwadmin_topic_results(klog_buf_t *b, const klog_kreq_t *r,
    const klog_ktopic_result_t *res, uint32_t n)
{
	size_t start = klog_kwire_begin_resp(b, r);
	int flex = r->flexible, throttle, message;

	switch (r->api) {
	case KLOG_KAPI_CREATE_TOPICS:
		throttle = r->version >= 2;
		message = r->version >= 1;
		break;
	case KLOG_KAPI_DELETE_TOPICS:
		throttle = r->version >= 1;
		message = r->version >= 5;
		break;
	default:   /* CreatePartitions */
		throttle = message = 1;
		break;
	}
	if (throttle)
		klog_buf_put_i32(b, 0);
	klog_kprim_put_count(b, (int32_t)n, flex);
	for (uint32_t i = 0; i < n; i++) {
		klog_kprim_put_str(b, res[i].name, flex);
		klog_buf_put_i16(b, res[i].error);
		if (message)
			klog_kprim_put_cstr(b, res[i].message, flex);
		klog_kprim_put_tags(b, flex);
	}
	klog_kprim_put_tags(b, flex);
	klog_kwire_end(b, start);
}

/* ---- DescribeConfigs ---- */

/* A resource's keys appended to keys from *k on; their count, -1 for
 * null. */
static int
read_keys(klog_kprim_rd_t *rd, klog_proto_array_t *keys, uint32_t *k,
    int32_t *n)
{
	*n = klog_kprim_count(rd, 1, 1);
	for (int32_t i = 0; i < *n && !rd->rd.failed; i++) {
		klog_str_t *s = klog_kprim_slot(keys, *k, sizeof(*s));

		if (s == NULL)
			return -KLOG_ENOMEM;
		*s = klog_kprim_str(rd);
		(*k)++;
	}
	return 0;
}

int
klog_kwadmin_describe_configs(const klog_kreq_t *r, klog_kdescribe_t *d,
    klog_proto_array_t *a, klog_proto_array_t *keys)
{
	klog_kprim_rd_t rd;
	klog_kdescribe_res_t *res;
	uint32_t k = 0, at = 0;
	int32_t n;

	klog_kwire_reader(r, &rd);
	memset(d, 0, sizeof(*d));
	n = klog_kprim_count(&rd, 4, 0);
	for (int32_t i = 0; i < n && !rd.rd.failed; i++) {
		if ((res = klog_kprim_slot(a, (size_t)i, sizeof(*res))) == NULL)
			return -KLOG_ENOMEM;
		res->type = klog_rd_i8(&rd.rd);
		res->name = klog_kprim_str(&rd);
		if (read_keys(&rd, keys, &k, &res->nkeys) < 0)
			return -KLOG_ENOMEM;
		klog_kprim_tags(&rd);
	}
	if (r->version >= 1)
		d->synonyms = klog_rd_i8(&rd.rd) != 0;
	if (r->version >= 3)
		(void)klog_rd_i8(&rd.rd);   /* include documentation: none */
	klog_kprim_tags(&rd);
	if (rd.rd.failed)
		return -KLOG_EPROTO;
	res = a->p;
	for (int32_t i = 0; i < n; i++) {
		if (res[i].nkeys <= 0) {
			res[i].keys = NULL;
			continue;
		}
		res[i].keys = (const klog_str_t *)keys->p + at;
		at += (uint32_t)res[i].nkeys;
	}
	d->nres = (uint32_t)n;
	d->res = res;
	return 0;
}

static void
put_entry(klog_buf_t *b, const klog_kreq_t *r, int synonyms,
    const klog_kconfig_entry_t *e)
{
	int flex = r->flexible;

	klog_kprim_put_cstr(b, e->v.name, flex);
	klog_kprim_put_cstr(b, e->v.value, flex);
	klog_buf_put_i8(b, (int8_t)(e->read_only != 0));
	if (r->version == 0)
		klog_buf_put_i8(b, (int8_t)(e->v.source ==
		    KLOG_KSOURCE_DEFAULT));
	else
		klog_buf_put_i8(b, e->v.source);
	klog_buf_put_i8(b, 0);   /* is_sensitive: nothing klog has is */
	if (r->version >= 1) {
		uint32_t nsyn = synonyms ? e->nsyn : 0;

		klog_kprim_put_count(b, (int32_t)nsyn, flex);
		for (uint32_t i = 0; i < nsyn; i++) {
			klog_kprim_put_cstr(b, e->syn[i].name, flex);
			klog_kprim_put_cstr(b, e->syn[i].value, flex);
			klog_buf_put_i8(b, e->syn[i].source);
			klog_kprim_put_tags(b, flex);
		}
	}
	klog_kprim_put_tags(b, flex);
}

void
klog_kwadmin_describe_configs_resp(klog_buf_t *b, const klog_kreq_t *r,
    int synonyms, const klog_kconfig_result_t *res, uint32_t n)
{
	size_t start = klog_kwire_begin_resp(b, r);
	int flex = r->flexible;

	klog_buf_put_i32(b, 0);   /* throttle time */
	klog_kprim_put_count(b, (int32_t)n, flex);
	for (uint32_t i = 0; i < n; i++) {
		klog_buf_put_i16(b, res[i].error);
		klog_kprim_put_cstr(b, res[i].message, flex);
		klog_buf_put_i8(b, res[i].type);
		klog_kprim_put_str(b, res[i].name, flex);
		klog_kprim_put_count(b, (int32_t)res[i].nentries, flex);
		for (uint32_t j = 0; j < res[i].nentries; j++)
			put_entry(b, r, synonyms, &res[i].entries[j]);
		klog_kprim_put_tags(b, flex);
	}
	klog_kprim_put_tags(b, flex);
	klog_kwire_end(b, start);
}

/* ---- InitProducerId ---- */

int
klog_kwadmin_init_producer_id(const klog_kreq_t *r, klog_str_t *txn_id,
    int32_t *timeout_ms, int64_t *producer_id, int16_t *epoch)
{
	klog_kprim_rd_t rd;

	klog_kwire_reader(r, &rd);
	*txn_id = klog_kprim_nstr(&rd);
	*timeout_ms = klog_rd_i32(&rd.rd);
	*producer_id = -1;
	*epoch = -1;
	if (r->version >= 3) {
		*producer_id = klog_rd_i64(&rd.rd);
		*epoch = klog_rd_i16(&rd.rd);
	}
	return klog_kprim_end(&rd);
}

void
klog_kwadmin_init_producer_id_resp(klog_buf_t *b, const klog_kreq_t *r,
    int16_t error, int64_t producer_id, int16_t epoch)
{
	size_t start = klog_kwire_begin_resp(b, r);

	klog_buf_put_i32(b, 0);    /* throttle time */
	klog_buf_put_i16(b, error);
	klog_buf_put_i64(b, producer_id);
	klog_buf_put_i16(b, epoch);
	klog_kprim_put_tags(b, r->flexible);
	klog_kwire_end(b, start);
}
