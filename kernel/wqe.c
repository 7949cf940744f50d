// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: send WQEs. Fetches them from the SQ ring into a
 * validated kernel copy (a user slot is read exactly once: opcode, sizes
 * and local keys are checked here, so a bad WQE completes with an error
 * and nothing else), executes local operations (fast-register,
 * local-invalidate, bind), and flushes the SQ when the QP errors.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#define METAROCE_TP_INTERNAL
#include "obj.h"

static u8 tp_mrc_op(u32 wr_op)
{
	switch (wr_op) {
	case IB_UVERBS_WR_SEND:
		return MRC_OP_SEND;
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return MRC_OP_SEND_IMM;
	case IB_UVERBS_WR_SEND_WITH_INV:
		return MRC_OP_SEND_INV;
	case IB_UVERBS_WR_RDMA_WRITE:
		return MRC_OP_WRITE;
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return MRC_OP_WRITE_IMM;
	case IB_UVERBS_WR_RDMA_READ:
		return MRC_OP_READ_REQ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return MRC_OP_CMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return MRC_OP_FETCH_ADD;
	}
	return 0;
}

/* ------------------------------------------------------- WQE fetch */

u32 metaroce_tp_swqe_size(struct metaroce_qp *qp)
{
	u32 sges = max_t(u32, qp->max_send_sge, 1);
	u32 extra = max_t(u32, sges * sizeof(struct metaroce_sge),
			  qp->max_inline);

	extra = min_t(u32, extra, qp->sq.slot_size);
	return ALIGN(sizeof(struct mrc_swqe) + extra, 16);
}

static bool tp_op_ok(struct metaroce_qp *qp, u32 op)
{
	if (qp->ibqp.qp_type == IB_QPT_RC)
		return tp_mrc_op(op) != 0 || (metaroce_wr_is_local(op) &&
		       (op != METAROCE_WR_REG_MR || !qp->is_user));
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI)
		return op == IB_UVERBS_WR_SEND ||
		       op == IB_UVERBS_WR_SEND_WITH_IMM;
	if (qp->ibqp.qp_type == IB_QPT_UC)	/* no READ, atomics, SEND_INV */
		return op == IB_UVERBS_WR_SEND ||
		       op == IB_UVERBS_WR_SEND_WITH_IMM ||
		       op == IB_UVERBS_WR_RDMA_WRITE ||
		       op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM ||
		       (metaroce_wr_is_local(op) &&
			(op != METAROCE_WR_REG_MR || !qp->is_user));
	return false;
}

/* Every SGE's lkey names an MR of the QP's PD covering it, with the right. */
static bool tp_lkeys_ok(struct metaroce_qp *qp, const struct mrc_swqe *w)
{
	struct metaroce_mr *mr;
	u32 i;

	for (i = 0; i < w->num_sge; i++) {
		if (!w->sge[i].length)
			continue;
		mr = metaroce_mr_get(qp->mdev, qp->ibqp.pd, w->sge[i].lkey,
				     false,
				     w->rd_atomic ? IB_ACCESS_LOCAL_WRITE : 0,
				     w->sge[i].addr, w->sge[i].length);
		if (IS_ERR(mr))
			return false;
		metaroce_mr_put(mr);
	}
	return true;
}

/*
 * Copy ring slot @idx into the kernel copy and validate it. A WQE fetched
 * to be flushed (@flush) only needs its wr_id and flags: its local keys
 * are not looked up (a full SQ of WQEs with many SGEs would cost one MR
 * lookup per SGE, all under the transport lock, for a status the flush
 * overwrites).
 */
static void tp_fetch_one(struct metaroce_qp *qp, u32 idx, bool flush)
{
	struct metaroce_tps *s = qp->tp.s;
	struct mrc_swqe *w = tp_swqe(s, idx);
	const struct metaroce_send_wqe *u = metaroce_ring_slot(&qp->sq, idx);
	u32 room = qp->sq.slot_size - sizeof(*u);
	u32 cap = s->req.swqe_size - sizeof(*w);
	struct metaroce_send_wqe h;
	u64 len = 0;
	u32 i;

	memcpy(&h, u, sizeof(h));
	memset(w, 0, sizeof(*w));
	w->wr_id = h.wr_id;
	w->opcode = h.opcode;
	w->send_flags = h.send_flags;
	w->imm = h.ex_imm_data;
	w->mrc_op = tp_mrc_op(h.opcode);
	w->signaled = qp->sq_sig_all || (h.send_flags & IB_SEND_SIGNALED);
	w->rnr_left = qp->rnr_retry;
	w->status = IB_WC_SUCCESS;

	switch (h.opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
	case IB_UVERBS_WR_RDMA_READ:
		w->remote_addr = h.wr.rdma.remote_addr;
		w->rkey = h.wr.rdma.rkey;
		break;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
	case IB_UVERBS_WR_BIND_MW:	/* same layout (metaroce-abi.h) */
		w->remote_addr = h.wr.atomic.remote_addr;
		w->compare_add = h.wr.atomic.compare_add;
		w->swap = h.wr.atomic.swap;
		w->rkey = h.wr.atomic.rkey;
		break;
	case METAROCE_WR_REG_MR: {
		struct metaroce_wqe_reg_mr reg;

		memcpy(&reg, h.wr.raw, sizeof(reg));
		w->remote_addr = reg.mr;
		w->rkey = reg.key;
		w->compare_add = reg.access;
		break;
	}
	default:
		w->ah_num = h.wr.ud.ah_num;
		w->remote_qpn = h.wr.ud.remote_qpn;
		w->remote_qkey = h.wr.ud.remote_qkey;
		break;
	}

	if (!tp_op_ok(qp, h.opcode))
		goto bad;
	if (metaroce_wr_is_local(h.opcode)) {
		s->local_end = idx + 1;
		return;		/* local: no data */
	}
	if (h.send_flags & IB_SEND_INLINE) {
		if (h.inline_len > qp->max_inline || h.inline_len > room ||
		    h.inline_len > cap)
			goto bad;
		if (w->mrc_op == MRC_OP_READ_REQ ||
		    w->mrc_op == MRC_OP_CMP_SWAP ||
		    w->mrc_op == MRC_OP_FETCH_ADD)
			goto bad;
		w->inline_len = h.inline_len;
		memcpy(w->inline_data, u->inline_data, h.inline_len);
		len = h.inline_len;
	} else {
		if (h.num_sge > qp->max_send_sge ||
		    h.num_sge > METAROCE_MAX_SGE ||
		    h.num_sge * sizeof(struct metaroce_sge) > room ||
		    h.num_sge * sizeof(struct metaroce_sge) > cap)
			goto bad;
		w->num_sge = h.num_sge;
		memcpy(w->sge, u->sge, h.num_sge * sizeof(struct metaroce_sge));
		for (i = 0; i < w->num_sge; i++)
			len += w->sge[i].length;
	}
	if (len > MRC_MAX_MSG)
		goto bad;
	w->len = len;

	switch (w->mrc_op) {
	case MRC_OP_CMP_SWAP:
	case MRC_OP_FETCH_ADD:
		if (w->num_sge != 1 || w->len < 8 || (w->remote_addr & 7))
			goto bad;
		w->len = 8;
		fallthrough;
	case MRC_OP_READ_REQ:
		w->rd_atomic = 1;
		break;
	}

	/*
	 * local keys: checked now, so errors complete this WQE only; unless a
	 * local WQE ahead of this one has not run yet: a fast register (or an
	 * invalidation) changes what the keys mean, and a consumer may post
	 * it together with the WQE that uses it (iSER: REG_MR, then the SEND
	 * carrying the registered buffer's first bytes). Then the packet
	 * build checks them (IB_WC_LOC_PROT_ERR as well).
	 */
	if (!flush && !mrc_seq_lt(s->req.sq_seg, s->local_end) &&
	    !tp_lkeys_ok(qp, w)) {
		w->status = IB_WC_LOC_PROT_ERR;
		return;
	}

	/* UC numbers every message (its MSN), RC those that use a WQE */
	if (mrc_op_notifies(w->mrc_op) ||
	    (w->mrc_op == MRC_OP_WRITE && qp->ibqp.qp_type == IB_QPT_UC))
		w->msn = s->req.smsn++;
	return;
bad:
	w->status = IB_WC_LOC_QP_OP_ERR;
}

/* Producer index of the SQ ring, or -1 when user space corrupted it. */
static int tp_sq_producer(struct metaroce_qp *qp, u32 *prod)
{
	struct metaroce_tps *s = qp->tp.s;
	/* slot contents after the index (pairs with the producer's release) */
	u32 p = smp_load_acquire(&qp->sq.q->producer);

	if (p - s->req.sq_tail > qp->sq.num_slots ||
	    mrc_seq_lt(p, s->req.sq_head))
		return -1;
	*prod = p;
	return 0;
}

/* Fetch WQEs from the ring while the kernel copy has room. */
void metaroce_tp_fetch(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;
	u32 prod;

	if (!qp->sq.q || s->req.failed)
		return;
	if (tp_sq_producer(qp, &prod)) {
		s->req.failed = true;
		return;
	}
	while (s->req.sq_head != prod && s->req.sq_head - s->req.sq_tail < s->req.nswq)
		tp_fetch_one(qp, s->req.sq_head++, false);
}

/* ------------------------------------------------------ completions */

static void tp_sq_advance(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;

	s->req.sq_tail++;
	metaroce_tp_sq_consumed(qp, s->req.sq_tail);
}

/* Execute a fast-register, local-invalidate or bind-window WQE. */
void metaroce_tp_local_op(struct metaroce_qp *qp, struct mrc_swqe *w)
{
	w->status = metaroce_mem_local_wqe(qp, w->opcode, w->imm, w->rkey,
					   w->remote_addr, w->compare_add,
					   w->swap);
	w->len = 0;
}

/* ---------------------------------------------------------- flush */

void metaroce_tp_flush_sq(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;
	u32 prod, left = qp->sq.num_slots;	/* user space moves prod */

	/* posted and not yet fetched: fetch them to learn wr_id */
	s->req.failed = false;
	while (left) {
		if (tp_sq_producer(qp, &prod) || s->req.sq_head == prod)
			break;
		for (; left && s->req.sq_head != prod &&
		       s->req.sq_head - s->req.sq_tail < s->req.nswq; left--)
			tp_fetch_one(qp, s->req.sq_head++, true);
		while (s->req.sq_tail != s->req.sq_head) {
			metaroce_tp_post_scqe(qp, tp_swqe(s, s->req.sq_tail),
					      IB_WC_WR_FLUSH_ERR);
			tp_sq_advance(qp);
		}
	}
	while (s->req.sq_tail != s->req.sq_head) {
		metaroce_tp_post_scqe(qp, tp_swqe(s, s->req.sq_tail),
				      IB_WC_WR_FLUSH_ERR);
		tp_sq_advance(qp);
	}
	s->req.sq_seg = s->req.sq_head;
	s->req.rd_atomic_out = 0;
	s->req.failed = true;
}
