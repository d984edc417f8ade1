/*
 * Shared by the klog protocol's front end (native.h): native.c frames,
 * dispatches and serves the data requests (PRODUCE, FETCH, OFFSETS, the
 * replicas'); nadmin.c the connection's authorization and the requests
 * about the broker rather than a partition's data (METADATA, the topic
 * administration, INIT_PRODUCER).
 */
#ifndef KLOG_NATIVE_IMPL_H
#define KLOG_NATIVE_IMPL_H

#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

#include "klog/broker/native.h"
#include "klog/proto/proto.h"
#include "klog/storage/crcpool.h"

/* Arrays reused by every request (the loop is single-threaded); caps are
 * in bytes. */
struct scratch {
	klog_proto_array_t parts;  /* decoder output of any API */
	klog_core_item_t *items;
	size_t items_cap;
	klog_produce_result_t *results;
	size_t results_cap;
	size_t *errpos;
	size_t errpos_cap;
	klog_offsets_part_t *oparts;
	size_t oparts_cap;
	int16_t *errors;
	size_t errors_cap;
	int32_t *counts;
	size_t counts_cap;
	const int64_t **offp;
	size_t offp_cap;
	int64_t *offsets;
	size_t offsets_cap;
	klog_meta_topic_t *mtopics;
	size_t mtopics_cap;
};

struct klog_native {
	klog_native_config_t cfg;
	char *adv_host;
	klog_core_t *core;
	struct scratch s;
	klog_crcpool_t *verify;     /* CRCs of a read on more cores, or NULL */
	klog_proto_array_t vparts; /* the precheck's decoder output */
	struct iovec *vsets;       /* the produce sets of one read, in order */
	size_t vsets_cap;
	size_t nchecked;           /* vsets whose CRCs all matched */
	size_t vnext;              /* the next set the decoder hands over */
	/* The connection process() works for, and its output queue. */
	klog_conn_t *conn;
	klog_outq_t *q;
	/* The request being handled: when it came in, the first error its
	 * answer carries, whether it was parked (then counted when it is
	 * answered). */
	int64_t arrived_ns;
	int16_t err;
	int parked;
	klog_promtext_reqs_t reqs;
};

/* The first error of an answer, for the requests' error label. */
static inline void
note_error(klog_native_t *n, int16_t error)
{
	if (n->err == KLOG_WIRE_NONE)
		n->err = error;
}

/* ---- nadmin.c ---- */

/* An answer carrying nothing but error. */
void native_encode_error(klog_native_t *n, klog_buf_t *out, int32_t corr,
    int16_t error);

/* Whether the connection's principal may do op on the resource named name
 * (authz.h; everything is allowed without ACLs). */
int native_may(klog_native_t *n, klog_acl_op_t op, klog_acl_res_t res,
    klog_str_t name);
int native_may_create(klog_native_t *n, klog_str_t topic);

/* The parts (count of size bytes, a topic first in each) of topics the
 * principal may do op on, moved in front; their count, or -1. */
int native_split_allowed(klog_native_t *n, klog_acl_op_t op, void *parts,
    size_t size, uint32_t count);

/* The handlers (native.c's handlers[]). */
void native_metadata(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len);
void native_topic_admin(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len);
void native_init_producer(klog_native_t *n, const klog_req_header_t *h,
    const uint8_t *body, size_t len);

#endif
