// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce: queue pairs: creation, the IB state machine, attributes,
 * QP numbers and the kernel post_send / post_recv verbs.
 *
 * QP numbers live in mdev->qps: 1 is the GSI QP, the others are random
 * in [2, 2^24) (metaroce_qpn_alloc). A QP is published there only once
 * fully set up and unpublished first thing on destroy; data-path
 * lookups (metaroce_qp_get) take the xa_lock and a reference, and
 * destroy waits for the references before tearing anything down.
 */
#include <linux/capability.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "verbs.h"

#define METAROCE_QPN_MAX	((1U << 24) - 1)
#define METAROCE_GSI_QPN	1
#define METAROCE_PSN_MASK	0xffffff

#define METAROCE_QP_ACCESS	(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)

static u32 metaroce_send_slot_size(u32 max_sge, u32 max_inline)
{
	return ALIGN(sizeof(struct metaroce_send_wqe) +
		     max_t(u32, max_sge * sizeof(struct metaroce_sge),
			   max_inline), 16);
}

static u32 metaroce_recv_slot(u32 max_sge)
{
	return ALIGN(sizeof(struct metaroce_recv_wqe) +
		     max_sge * sizeof(struct metaroce_sge), 16);
}

static int metaroce_qp_check_init(struct metaroce_dev *mdev,
				  struct ib_qp_init_attr *init,
				  struct ib_udata *udata)
{
	struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata || init->port_num != METAROCE_PORT)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (init->sq_sig_type != IB_SIGNAL_ALL_WR &&
	    init->sq_sig_type != IB_SIGNAL_REQ_WR)
		return -EINVAL;
	if (cap->max_send_wr > METAROCE_MAX_QP_WR ||
	    cap->max_send_sge > METAROCE_MAX_SGE ||
	    cap->max_inline_data > METAROCE_MAX_INLINE_DATA)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > METAROCE_MAX_QP_WR ||
			   cap->max_recv_sge > METAROCE_MAX_SGE))
		return -EINVAL;
	if (udata && udata->outlen < sizeof(struct metaroce_create_qp_resp))
		return -EINVAL;
	return 0;
}

static int metaroce_qp_alloc_rings(struct metaroce_qp *qp,
				   struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 room;
	int err;

	err = metaroce_ring_alloc(&qp->sq, cap->max_send_wr,
				  metaroce_send_slot_size(cap->max_send_sge,
							  cap->max_inline_data));
	if (err)
		return err;
	/* Grant what the slot holds: the caps are truthful. */
	room = qp->sq.slot_size - sizeof(struct metaroce_send_wqe);
	qp->max_send_wr = qp->sq.num_slots;
	qp->max_send_sge = min_t(u32, room / sizeof(struct metaroce_sge),
				 METAROCE_MAX_SGE);
	qp->max_inline = min_t(u32, room, METAROCE_MAX_INLINE_DATA);

	if (init->srq) {
		qp->max_recv_wr = 0;
		qp->max_recv_sge = 0;
		return 0;
	}

	err = metaroce_ring_alloc(&qp->rq, cap->max_recv_wr,
				  metaroce_recv_slot(cap->max_recv_sge));
	if (err) {
		metaroce_ring_free(&qp->sq);
		return err;
	}
	qp->max_recv_wr = qp->rq.num_slots;
	qp->max_recv_sge = cap->max_recv_sge;
	return 0;
}

static void metaroce_qp_free_rings(struct metaroce_qp *qp)
{
	metaroce_ring_free(&qp->rq);
	metaroce_ring_free(&qp->sq);
}

static int metaroce_qp_export(struct metaroce_qp *qp, struct ib_udata *udata)
{
	struct metaroce_create_qp_resp resp = {};
	struct metaroce_ucontext *uc;
	int err;

	uc = rdma_udata_to_drv_context(udata, struct metaroce_ucontext, ibuc);
	err = metaroce_ring_export(qp->mdev, &uc->ibuc, &qp->sq, &resp.sq_mi);
	if (err)
		return err;
	if (qp->rq.q) {
		err = metaroce_ring_export(qp->mdev, &uc->ibuc, &qp->rq,
					   &resp.rq_mi);
		if (err)
			return err;
	}
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

/*
 * Reserve a QP number: the first free one at or after a random point, so
 * that one QPN tells nothing about the others and a third party cannot
 * guess live ones (protocol.rst, "Peer validation"). The table gets
 * sparse: about one xarray node (576 bytes) per QP, next to the rings.
 */
static int metaroce_qpn_alloc(struct metaroce_dev *mdev, u32 *qpn)
{
	u32 next = get_random_u32_inclusive(METAROCE_GSI_QPN + 1,
					    METAROCE_QPN_MAX);
	int err;

	err = xa_alloc_cyclic_irq(&mdev->qps, qpn, NULL,
				  XA_LIMIT(METAROCE_GSI_QPN + 1,
					   METAROCE_QPN_MAX),
				  &next, GFP_KERNEL);
	return err == -EBUSY ? -ENOMEM : err;
}

int metaroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		       struct ib_udata *udata)
{
	struct metaroce_dev *mdev = to_mdev(ibqp->device);
	struct metaroce_qp *qp = to_mqp(ibqp);
	u32 qpn;
	int err;

	err = metaroce_qp_check_init(mdev, init, udata);
	if (err)
		return err;

	if (atomic_inc_return(&mdev->num_qp) > METAROCE_MAX_QP) {
		err = -ENOMEM;
		goto err_count;
	}

	qp->mdev = mdev;
	qp->is_user = !!udata;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->done);
	mutex_init(&qp->modify_mutex);
	spin_lock_init(&qp->state_lock);
	seqcount_spinlock_init(&qp->av_seq, &qp->state_lock);
	spin_lock_init(&qp->rq_lock);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->port_num = METAROCE_PORT;
	qp->path_mtu = (enum ib_mtu)READ_ONCE(mdev->active_mtu);
	qp->mtu = ib_mtu_enum_to_int(qp->path_mtu);

	err = metaroce_qp_alloc_rings(qp, init);
	if (err)
		goto err_count;

	/* Reserve the number; the QP is published once complete. */
	if (init->qp_type == IB_QPT_GSI) {
		qpn = METAROCE_GSI_QPN;
		err = xa_insert_irq(&mdev->qps, qpn, NULL, GFP_KERNEL);
	} else {
		err = metaroce_qpn_alloc(mdev, &qpn);
	}
	if (err < 0)
		goto err_rings;
	ibqp->qp_num = qpn;

	if (udata) {
		err = metaroce_qp_export(qp, udata);
		if (err)
			goto err_qpn;
	}

	err = metaroce_tp_qp_init(qp);
	if (err)
		goto err_qpn;

	/* What was granted. */
	init->cap.max_send_wr = qp->max_send_wr;
	init->cap.max_send_sge = qp->max_send_sge;
	init->cap.max_inline_data = qp->max_inline;
	init->cap.max_recv_wr = qp->max_recv_wr;
	init->cap.max_recv_sge = qp->max_recv_sge;

	xa_store_irq(&mdev->qps, qpn, qp, GFP_KERNEL);
	return 0;

err_qpn:
	xa_erase_irq(&mdev->qps, qpn);
err_rings:
	metaroce_qp_free_rings(qp);
err_count:
	atomic_dec(&mdev->num_qp);
	return err;
}

int metaroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct metaroce_dev *mdev = to_mdev(ibqp->device);
	struct metaroce_qp *qp = to_mqp(ibqp);

	/* No new lookups, then wait for those in flight. */
	xa_erase_irq(&mdev->qps, ibqp->qp_num);
	metaroce_obj_drain(&qp->ref, &qp->done);
	metaroce_tp_qp_destroy(qp);
	metaroce_cq_clean(to_mcq(ibqp->send_cq), ibqp->qp_num);
	if (ibqp->recv_cq != ibqp->send_cq)	/* both: create_qp */
		metaroce_cq_clean(to_mcq(ibqp->recv_cq), ibqp->qp_num);
	metaroce_qp_free_rings(qp);
	mutex_destroy(&qp->modify_mutex);
	atomic_dec(&mdev->num_qp);
	return 0;
}

struct metaroce_qp *metaroce_qp_get(struct metaroce_dev *mdev, u32 qpn)
{
	struct metaroce_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&mdev->qps, flags);
	qp = xa_load(&mdev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&mdev->qps, flags);
	return qp;
}

void metaroce_qp_put(struct metaroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->done);
}

/* ------------------------------------------------------- modify */

/* Validate everything before applying anything: modify is atomic. */
static int metaroce_qp_check_attr(struct metaroce_qp *qp,
				  struct ib_qp_attr *attr, int mask,
				  struct metaroce_av *av)
{
	enum ib_qp_state cur = qp->state, next;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_STATE) && attr->qp_state > IB_QPS_ERR)
		return -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state > IB_QPS_ERR)
		return -EINVAL;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, qp->ibqp.qp_type, mask))
		return -EINVAL;

	if (mask & (IB_QP_ALT_PATH | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) &&
	    attr->pkey_index >= METAROCE_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != METAROCE_PORT)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~METAROCE_QP_ACCESS))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > METAROCE_MAX_MTU))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > METAROCE_MAX_QP_INIT_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > METAROCE_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > METAROCE_QPN_MAX)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		err = metaroce_av_from_attr(qp->mdev, av, &attr->ah_attr);
		if (err)
			return err;
		/* SQD -> SQD: the fixed segment size must fit the new AV */
		err = metaroce_tp_av_check(qp, av);
		if (err)
			return err;
	}
	return 0;
}

/* Empty both queues (RESET); the transport is quiet now (tp_quiesce). */
static void metaroce_qp_reset_rings(struct metaroce_qp *qp)
{
	struct metaroce_ring *rings[] = { &qp->sq, &qp->rq };
	unsigned long flags;
	int i;

	spin_lock_irqsave(&qp->rq_lock, flags);
	for (i = 0; i < ARRAY_SIZE(rings); i++) {
		struct metaroce_ring *r = rings[i];

		if (!r->q)
			continue;
		spin_lock(&r->lock);
		r->prod = 0;
		r->cons = 0;
		WRITE_ONCE(r->q->producer, 0);
		WRITE_ONCE(r->q->consumer, 0);
		spin_unlock(&r->lock);
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}

static void metaroce_qp_apply(struct metaroce_qp *qp, struct ib_qp_attr *attr,
			      int mask, const struct metaroce_av *av)
{
	int active = ib_mtu_enum_to_int(READ_ONCE(qp->mdev->active_mtu));

	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		qp->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PATH_MTU) {
		qp->path_mtu = attr->path_mtu;
		qp->mtu = min(ib_mtu_enum_to_int(attr->path_mtu), active);
	}
	if (mask & IB_QP_AV) {
		/* read by the data path without state_lock (obj.h) */
		write_seqcount_begin(&qp->av_seq);
		qp->av = *av;
		write_seqcount_end(&qp->av_seq);
		qp->ah_attr = attr->ah_attr;
		/* Only the index is kept: no reference is held. */
		qp->ah_attr.grh.sgid_attr = NULL;
	}
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn & METAROCE_PSN_MASK;
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & METAROCE_PSN_MASK;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_STATE) {
		/* SQD -> SQD (a new AV, say) does not start another drain */
		if (attr->qp_state == IB_QPS_SQD && qp->state != IB_QPS_SQD) {
			qp->sq_draining = true;
			qp->sqd_notify = (mask & IB_QP_EN_SQD_ASYNC_NOTIFY) &&
					 attr->en_sqd_async_notify;
			qp->sqd_gen++;
		} else if (attr->qp_state != IB_QPS_SQD) {
			qp->sq_draining = false;
		}
		qp->state = attr->qp_state;
	}
}

int metaroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		       int mask, struct ib_udata *udata)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	enum ib_qp_state old;
	struct metaroce_av av;
	unsigned long flags;
	int err;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	/*
	 * Controlled Q_Keys (high bit set, e.g. IB_QP1_QKEY of the GSI QP)
	 * are for privileged consumers: a user UD QP could otherwise send
	 * datagrams QP1 accepts as CM MADs.
	 */
	if (udata && (mask & IB_QP_QKEY) && (attr->qkey & 0x80000000U) &&
	    !capable(CAP_NET_RAW))
		return -EPERM;

	mutex_lock(&qp->modify_mutex);
	spin_lock_irqsave(&qp->state_lock, flags);
	err = metaroce_qp_check_attr(qp, attr, mask, &av);
	if (err) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		goto out;
	}
	old = qp->state;
	metaroce_qp_apply(qp, attr, mask, &av);
	spin_unlock_irqrestore(&qp->state_lock, flags);

	metaroce_tp_qp_modify(qp, old, mask);
	/*
	 * After the transport ended the previous life: until then it may
	 * still publish a consumer index (a flush of that life), which would
	 * land in the emptied ring and leave the next life's producer behind.
	 */
	if ((mask & IB_QP_STATE) && attr->qp_state == IB_QPS_RESET)
		metaroce_qp_reset_rings(qp);
out:
	mutex_unlock(&qp->modify_mutex);
	return err;
}

int metaroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int mask, struct ib_qp_init_attr *init)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	spin_lock_irqsave(&qp->state_lock, flags);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = qp->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->rq_psn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->qp_access_flags;
	attr->ah_attr = qp->ah_attr;
	attr->pkey_index = qp->pkey_index;
	attr->en_sqd_async_notify = qp->sqd_notify;
	attr->sq_draining = qp->sq_draining;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->port_num = qp->port_num;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	attr->cap.max_send_wr = qp->max_send_wr;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	attr->cap.max_recv_wr = qp->max_recv_wr;
	attr->cap.max_recv_sge = qp->max_recv_sge;

	init->qp_context = ibqp->qp_context;
	init->event_handler = ibqp->event_handler;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	init->qp_type = ibqp->qp_type;
	init->port_num = qp->port_num;
	return 0;
}

/* Raise QP event @type to the QP's consumer, if it has a handler. */
void metaroce_qp_event(struct metaroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev;

	if (!qp->ibqp.event_handler)
		return;
	ev.device = qp->ibqp.device;
	ev.element.qp = &qp->ibqp;
	ev.event = type;
	qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

void metaroce_qp_error(struct metaroce_qp *qp, enum ib_event_type event)
{
	unsigned long flags;
	bool changed;

	spin_lock_irqsave(&qp->state_lock, flags);
	/*
	 * RESET and INIT have no transport activity: an error reported now
	 * belongs to the QP's previous life (a doorbell still running when
	 * another thread moved the QP to RESET).
	 */
	if (qp->state == IB_QPS_RESET || qp->state == IB_QPS_INIT) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return;
	}
	changed = qp->state != IB_QPS_ERR;
	qp->state = IB_QPS_ERR;
	qp->sq_draining = false;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (changed && event)
		metaroce_qp_event(qp, event);
}

/*
 * The transport saw the send queue drained in the SQD numbered @gen:
 * every message started before it completed. sq_draining reads 0 from
 * now on and IB_EVENT_SQ_DRAINED is raised if the transition asked for it,
 * once. A report of an earlier SQD (the QP went back to RTS since) is
 * stale and dropped. Any context, no transport lock held.
 */
void metaroce_qp_sq_drained(struct metaroce_qp *qp, u32 gen)
{
	unsigned long flags;
	bool notify;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state != IB_QPS_SQD || !qp->sq_draining ||
	    qp->sqd_gen != gen) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return;
	}
	qp->sq_draining = false;
	notify = qp->sqd_notify;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (notify)
		metaroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

/* ---------------------------------------------------- receive side */

int metaroce_rq_pop(struct metaroce_qp *qp, struct metaroce_rwqe *out)
{
	struct metaroce_srq *srq = qp->ibqp.srq ? to_msrq(qp->ibqp.srq) : NULL;
	const struct metaroce_recv_wqe *wqe;
	enum ib_event_type srq_event = 0;
	struct metaroce_ring *r;
	spinlock_t *lock;
	unsigned long flags;
	u32 prod, max_sge, n, i;
	int err = 0;

	if (srq) {
		lock = &srq->lock;
		r = &srq->ring;
		max_sge = srq->max_sge;
	} else {
		lock = &qp->rq_lock;
		r = &qp->rq;
		max_sge = qp->max_recv_sge;
	}

	spin_lock_irqsave(lock, flags);
	if (!r->q) {
		err = -EAGAIN;
		goto out;
	}
	if (srq && srq->error) {
		err = -EIO;
		goto out;
	}
	/* Pairs with the other side's release of its index. */
	prod = smp_load_acquire(&r->q->producer);
	if (prod == r->cons) {
		err = -EAGAIN;
		goto out;
	}
	if (prod - r->cons > r->num_slots) {
		/*
		 * A user producer index beyond the ring (or behind what was
		 * consumed): which slots hold WQEs is unknown, so the queue
		 * is lost. An SRQ goes to error for every QP using it.
		 */
		if (srq) {
			srq->error = true;
			srq_event = IB_EVENT_SRQ_ERR;
		}
		err = -EIO;
		goto out;
	}

	wqe = metaroce_ring_slot(r, r->cons);
	out->wr_id = READ_ONCE(wqe->wr_id);
	n = READ_ONCE(wqe->num_sge);
	if (n > max_sge) {
		out->num_sge = 0;
		out->length = 0;
		err = -EINVAL;
	} else {
		out->num_sge = n;
		memcpy(out->sge, wqe->sge, n * sizeof(out->sge[0]));
		out->length = 0;
		for (i = 0; i < n; i++)
			out->length += out->sge[i].length;
	}
	r->cons++;
	/* Slot contents before the index (acquire on the other side). */
	smp_store_release(&r->q->consumer, r->cons);

	if (srq && srq->limit && prod - r->cons < srq->limit) {
		srq->limit = 0;
		srq_event = IB_EVENT_SRQ_LIMIT_REACHED;
	}
out:
	spin_unlock_irqrestore(lock, flags);

	if (srq_event && srq->ibsrq.event_handler) {
		struct ib_event ev = {
			.device = srq->ibsrq.device,
			.element.srq = &srq->ibsrq,
			.event = srq_event,
		};

		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	return err;
}

int metaroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	int err;

	/* User RQs are posted in user space; SRQ users via post_srq_recv. */
	if (qp->is_user || ibqp->srq || !qp->rq.q ||
	    READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = metaroce_ring_post_recv(&qp->rq, qp->max_recv_sge, wr, bad_wr);
	/*
	 * In ERR a posted WQE completes as flushed: the flush of the state
	 * change has already run, so run it again (ib_drain_rq() waits for
	 * the flush completion of the WQE it posts after moving to ERR).
	 * Ring index published before the state is read; modify_qp orders
	 * the other way round.
	 */
	smp_mb();
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		metaroce_tp_kick(qp);
	return err;
}

/* ------------------------------------------------------- send side */

static bool metaroce_opcode_ok(enum ib_qp_type type, enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
		return type == IB_QPT_RC || type == IB_QPT_UC;
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_SEND_WITH_INV:
		return type == IB_QPT_RC;
	default:
		return false;
	}
}

static bool metaroce_opcode_is_atomic(enum ib_wr_opcode op)
{
	return op == IB_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_WR_ATOMIC_FETCH_AND_ADD;
}

static int metaroce_check_send_wr(struct metaroce_qp *qp,
				  const struct ib_send_wr *wr)
{
	enum ib_qp_type type = qp->ibqp.qp_type;
	u64 len = 0;
	int i;

	if (!metaroce_opcode_ok(type, wr->opcode) || wr->num_sge < 0)
		return -EINVAL;
	if ((type == IB_QPT_UD || type == IB_QPT_GSI) && !ud_wr(wr)->ah)
		return -EINVAL;
	if (metaroce_opcode_is_atomic(wr->opcode) && wr->num_sge != 1)
		return -EINVAL;
	if (wr->opcode == IB_WR_REG_MR && !reg_wr(wr)->mr)
		return -EINVAL;

	if (!(wr->send_flags & IB_SEND_INLINE))
		return (u32)wr->num_sge > qp->max_send_sge ? -EINVAL : 0;

	if (wr->opcode == IB_WR_RDMA_READ || wr->opcode == IB_WR_LOCAL_INV ||
	    wr->opcode == IB_WR_REG_MR || metaroce_opcode_is_atomic(wr->opcode))
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		len += wr->sg_list[i].length;
		if (len > qp->max_inline)
			return -EINVAL;
	}
	return 0;
}

static void metaroce_build_send_wqe(struct metaroce_qp *qp,
				    const struct ib_send_wr *wr,
				    struct metaroce_send_wqe *wqe)
{
	struct metaroce_wqe_reg_mr *reg;
	u8 *p;
	int i;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		wqe->ex_imm_data = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		wqe->ex_imm_data = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->wr.atomic.swap = atomic_wr(wr)->swap;
		wqe->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		BUILD_BUG_ON(sizeof(*reg) > sizeof(wqe->wr.raw));
		reg = (struct metaroce_wqe_reg_mr *)wqe->wr.raw;
		reg->mr = (uintptr_t)reg_wr(wr)->mr;
		reg->key = reg_wr(wr)->key;
		reg->access = reg_wr(wr)->access;
		return;
	case IB_WR_LOCAL_INV:
		return;
	default:
		if (qp->ibqp.qp_type == IB_QPT_UD ||
		    qp->ibqp.qp_type == IB_QPT_GSI) {
			wqe->wr.ud.ah_num = to_mah(ud_wr(wr)->ah)->ah_num;
			wqe->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
			wqe->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
		}
		break;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		p = wqe->inline_data;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		wqe->inline_len = p - wqe->inline_data;
		return;
	}

	wqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->sge[i].addr = wr->sg_list[i].addr;
		wqe->sge[i].length = wr->sg_list[i].length;
		wqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
}

int metaroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	struct metaroce_ring *r = &qp->sq;
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;
	bool posted;
	u32 prod, cons;
	int err = 0;

	/*
	 * In SQD, WRs are queued: the requester starts them at RTS
	 * (core/requester.h cfg.sqd).
	 */
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}

	/* User QPs: a doorbell, the WQEs are in the mmap'd ring. */
	if (qp->is_user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		metaroce_tp_kick(qp);
		return 0;
	}

	spin_lock_irqsave(&r->lock, flags);
	prod = r->prod;
	/* Pairs with the other side's release of its index. */
	cons = smp_load_acquire(&r->q->consumer);
	for (; wr; wr = wr->next) {
		err = metaroce_check_send_wr(qp, wr);
		if (err)
			break;
		if (prod - cons >= r->num_slots) {
			err = -ENOMEM;
			break;
		}
		metaroce_build_send_wqe(qp, wr, metaroce_ring_slot(r, prod));
		prod++;
	}
	posted = prod != r->prod;
	if (posted) {
		r->prod = prod;
		/* Slot contents before the index (acquire on the other side). */
		smp_store_release(&r->q->producer, prod);
	}
	spin_unlock_irqrestore(&r->lock, flags);

	if (err)
		*bad_wr = wr;
	if (posted)
		metaroce_tp_kick(qp);
	return err;
}
