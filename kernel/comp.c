// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: the completer's adapter.
 *
 * The completer itself -- ACK/SACK/NAK processing, RTT, congestion and
 * path-failure feedback, READ and atomic response placement, send WQE
 * completion in posting order, the response-wait timer -- is
 * core/completer.c, working on the send side's state (s->req). This file
 * hands it ACKs and responses under the QP lock, and posts send
 * completions (the environment is resp.c's).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#define METAROCE_TP_INTERNAL
#include "obj.h"

/* An ACK for @qp arrived. Caller holds the QP lock. */
void metaroce_tp_comp_ack(struct metaroce_qp *qp, struct mrc_pkt *p,
			  struct sk_buff_head *out)
{
	struct metaroce_tps *s = qp->tp.s;
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, out);
	if (mrc_comp_ack(&s->req, &e, &p->ack, mrc_rspq_len(&s->resp.rspq)))
		s->drops++;
}

/*
 * A READ_RESP or ATOMIC_RESP (new in the incoming PSN space): place it
 * into the local SGEs of its WQE. Returns 0 to commit it.
 */
int metaroce_tp_comp_resp(struct metaroce_qp *qp, const struct mrc_pkt *p,
			  const struct mrc_src *src)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, NULL);
	return mrc_comp_resp(&qp->tp.s->req, &e, p, src);
}

/*
 * A new packet from the peer carried its cumulative ACK of our PSN space
 * (version 2, core/completer.h mrc_comp_cum()). True if the QP failed.
 */
bool metaroce_tp_comp_cum(struct metaroce_qp *qp, u16 cum_lo,
			  struct sk_buff_head *out)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, out);
	mrc_comp_cum(&qp->tp.s->req, &e, cum_lo);
	return qp->tp.s->req.failed;
}

/* Complete send WQEs in posting order (core/completer.h). */
void metaroce_tp_complete(struct metaroce_qp *qp, struct sk_buff_head *out)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, out);
	mrc_comp_complete(&qp->tp.s->req, &e);
}

static u32 tp_wc_opcode(u32 wr_op)
{
	switch (wr_op) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case METAROCE_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	}
	return IB_WC_SEND;
}

/* Post the send completion of @w; non-zero: the CQ overflowed. */
int metaroce_tp_post_scqe(struct metaroce_qp *qp, const struct mrc_swqe *w,
			  u8 status)
{
	struct metaroce_cqe cqe = {};

	cqe.wr_id = w->wr_id;
	cqe.status = status;
	cqe.opcode = tp_wc_opcode(w->opcode);
	cqe.byte_len = w->len;
	cqe.qp_num = qp->ibqp.qp_num;
	cqe.port_num = METAROCE_PORT;
	return metaroce_cq_post(to_mcq(qp->ibqp.send_cq), &cqe, false);
}

/* The SQ ring slots before @tail may be reused by the producer. */
void metaroce_tp_sq_consumed(struct metaroce_qp *qp, u32 tail)
{
	if (qp->sq.q)	/* slot reads done before the producer may reuse it */
		smp_store_release(&qp->sq.q->consumer, tail);
}
