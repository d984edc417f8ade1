/*
 * A replicated partition's state: see replica.h for the rules.
 */
#include <stdlib.h>

#include "klog/core/replica.h"

int
klog_replica_new(const char *dir, int32_t me, int64_t lag_ms,
    klog_replica_t **out, klog_err_t *err)
{
	klog_replica_t *r;
	int rc;

	*out = NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if ((rc = klog_epochs_open(dir, &r->epochs, err)) < 0) {
		free(r);
		return rc;
	}
	r->me = me;
	r->leader = -1;
	r->epoch = klog_epochs_latest(r->epochs);
	r->lag_ms = lag_ms;
	r->min_insync = 1;
	*out = r;
	return 0;
}

void
klog_replica_free(klog_replica_t *r)
{
	if (r == NULL)
		return;
	klog_epochs_free(r->epochs);
	free(r);
}

static int
has(const int32_t *v, int n, int32_t id)
{
	for (int i = 0; i < n; i++)
		if (v[i] == id)
			return 1;
	return 0;
}

static klog_replica_peer_t *
peer(klog_replica_t *r, int32_t id)
{
	for (int i = 0; i < r->npeers; i++)
		if (r->peers[i].id == id)
			return &r->peers[i];
	return NULL;
}

int
klog_replica_lead(klog_replica_t *r, int32_t epoch, const int32_t *replicas,
    int nrep, const int32_t *isr, int nisr, int min_insync, int64_t leo,
    int64_t now, klog_err_t *err)
{
	int rc;

	if (epoch > klog_epochs_latest(r->epochs) &&
	    (rc = klog_epochs_append(r->epochs, epoch, leo, err)) < 0)
		return rc;
	r->role = KLOG_REPLICA_LEADER;
	r->epoch = epoch;
	r->leader = r->me;
	r->min_insync = min_insync;
	r->pending = 0;
	r->npeers = 0;
	for (int i = 0; i < nrep && r->npeers < KLOG_REPLICA_MAX; i++) {
		if (replicas[i] == r->me)
			continue;
		r->peers[r->npeers++] = (klog_replica_peer_t){
		    .id = replicas[i], .in_isr = has(isr, nisr, replicas[i]),
		    .leo = -1, .fw = -1, .caught_up_ms = now };
	}
	/* What it learnt as a follower is committed; nothing past leo is. */
	if (r->hw > leo)
		r->hw = leo;
	return 0;
}

void
klog_replica_follow(klog_replica_t *r, int32_t epoch, int32_t leader)
{
	r->role = KLOG_REPLICA_FOLLOWER;
	r->epoch = epoch;
	r->leader = leader;
	r->pending = 0;
	r->npeers = 0;
}

void
klog_replica_offline(klog_replica_t *r)
{
	r->role = KLOG_REPLICA_OFFLINE;
	r->leader = -1;
	r->pending = 0;
	r->npeers = 0;
}

int
klog_replica_isr(const klog_replica_t *r, int32_t *out)
{
	int n = 0;

	out[n++] = r->me;
	for (int i = 0; i < r->npeers; i++)
		if (r->peers[i].in_isr)
			out[n++] = r->peers[i].id;
	return n;
}

int
klog_replica_isr_size(const klog_replica_t *r)
{
	int32_t v[KLOG_REPLICA_MAX + 1];

	return klog_replica_isr(r, v);
}

int64_t
klog_replica_committed(const klog_replica_t *r, int64_t fw)
{
	return r->hw < fw ? r->hw : fw;
}

int
klog_replica_advance(klog_replica_t *r, int64_t fw)
{
	int64_t low = fw;

	if (r->role != KLOG_REPLICA_LEADER ||
	    klog_replica_isr_size(r) < r->min_insync)
		return 0;
	for (int i = 0; i < r->npeers; i++) {
		if (!r->peers[i].in_isr && !(r->pending &&
		    r->peers[i].in_pending))
			continue;
		if (r->peers[i].fw < low)
			low = r->peers[i].fw;
	}
	if (low <= r->hw)
		return 0;
	r->hw = low;
	return 1;
}

/* Where a follower's log stops agreeing with this one, if it does. */
static int
diverges(const klog_replica_t *r, const klog_rfetch_req_t *q, int64_t leo,
    klog_rfetch_resp_t *resp)
{
	int32_t found;
	int64_t end = klog_epochs_end_of(r->epochs, q->last_epoch, leo, &found);

	if (found == q->last_epoch && q->offset <= end)
		return 0;
	/* No epoch here at or below the follower's: its own newest, so that
	 * it keeps what it has up to where this log's epochs begin. */
	resp->diverging_epoch = found >= 0 ? found :
	    q->last_epoch >= 0 ? q->last_epoch : 0;
	resp->diverging_end = end < q->offset ? end : q->offset;
	return 1;
}

/* A follower's reported position: its log end and flushed end. */
static void
take_position(klog_replica_t *r, klog_replica_peer_t *p,
    const klog_rfetch_req_t *q, int64_t fw, int64_t now, int *shrink,
    int *expand)
{
	int64_t start = klog_epochs_count(r->epochs) ?
	    klog_epochs_get(r->epochs, klog_epochs_count(r->epochs) - 1).start :
	    0;

	if (p->in_isr && q->flushed < p->fw)
		*shrink = 1;
	p->leo = q->offset;
	p->fw = q->flushed < q->offset ? q->flushed : q->offset;
	if (q->offset >= fw)
		p->caught_up_ms = now;
	if (!p->in_isr && p->fw >= r->hw && p->fw >= start)
		*expand = 1;
}

int16_t
klog_replica_on_fetch(klog_replica_t *r, const klog_rfetch_req_t *q,
    int64_t leo, int64_t fw, int64_t now, klog_rfetch_resp_t *resp,
    int *shrink, int *expand)
{
	klog_replica_peer_t *p;

	*shrink = *expand = 0;
	resp->leader_epoch = r->epoch;
	resp->hw = r->hw;
	resp->diverging_epoch = -1;
	resp->diverging_end = -1;
	if (r->role != KLOG_REPLICA_LEADER)
		return KLOG_WIRE_NOT_LEADER;
	if (q->leader_epoch != r->epoch)
		return KLOG_WIRE_FENCED_LEADER_EPOCH;
	if ((p = peer(r, q->replica_id)) == NULL)
		return KLOG_WIRE_INVALID_REQUEST;
	if (diverges(r, q, leo, resp))
		return KLOG_WIRE_NONE;
	take_position(r, p, q, fw, now, shrink, expand);
	if (q->offset < fw && p->last_fetch_ms > 0 &&
	    q->offset >= p->last_fetch_fw)
		p->caught_up_ms = p->last_fetch_ms;
	p->last_fetch_ms = now;
	p->last_fetch_fw = fw;
	return KLOG_WIRE_NONE;
}

int16_t
klog_replica_on_pos(klog_replica_t *r, const klog_rfetch_req_t *q,
    int64_t leo, int64_t fw, int64_t now, int *shrink, int *expand)
{
	klog_replica_peer_t *p;

	*shrink = *expand = 0;
	if (r->role != KLOG_REPLICA_LEADER)
		return KLOG_WIRE_NOT_LEADER;
	if (q->leader_epoch != r->epoch)
		return KLOG_WIRE_FENCED_LEADER_EPOCH;
	/* Before any fetch (its position unknown) or past what was sent: not
	 * a position a fetch of this epoch could have led to. */
	if ((p = peer(r, q->replica_id)) == NULL || p->leo < 0 ||
	    q->offset > leo || q->offset < p->leo)
		return KLOG_WIRE_INVALID_REQUEST;
	take_position(r, p, q, fw, now, shrink, expand);
	return KLOG_WIRE_NONE;
}

int32_t
klog_replica_laggard(const klog_replica_t *r, int64_t now)
{
	for (int i = 0; i < r->npeers; i++)
		if (r->peers[i].in_isr &&
		    now - r->peers[i].caught_up_ms > r->lag_ms)
			return r->peers[i].id;
	return -1;
}

int
klog_replica_isr_with(const klog_replica_t *r, int32_t id, int add,
    int32_t *out)
{
	int n = 0;

	out[n++] = r->me;
	for (int i = 0; i < r->npeers; i++) {
		int in = r->peers[i].id == id ? add : r->peers[i].in_isr;

		if (in)
			out[n++] = r->peers[i].id;
	}
	return n;
}

void
klog_replica_set_isr(klog_replica_t *r, const int32_t *isr, int n,
    int64_t now)
{
	for (int i = 0; i < r->npeers; i++) {
		int in = has(isr, n, r->peers[i].id);

		if (in && !r->peers[i].in_isr)
			r->peers[i].caught_up_ms = now;
		r->peers[i].in_isr = in;
	}
	r->pending = 0;
}

void
klog_replica_set_pending(klog_replica_t *r, const int32_t *isr, int n)
{
	for (int i = 0; i < r->npeers; i++)
		r->peers[i].in_pending = has(isr, n, r->peers[i].id);
	r->pending = 1;
}

void
klog_replica_clear_pending(klog_replica_t *r)
{
	r->pending = 0;
}

void
klog_replica_follower_hw(klog_replica_t *r, int64_t hw, int64_t leo)
{
	int64_t v = hw < leo ? hw : leo;

	if (v > r->hw)
		r->hw = v;
}
