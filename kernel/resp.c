// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: the responder.
 *
 * Runs inline in softirq under the QP lock for every sequenced packet of
 * the incoming PSN space. A packet is placed directly at its final address
 * (WRITE: va + offset; SEND: byte offset of the receive WQE its rmsn
 * selects) in any order, then committed to the receive window; a packet
 * that cannot be placed now (no receive WQE: RNR; queue full) is left
 * uncommitted so the requester sends it again, and duplicates are never
 * placed. A WRITE's last packet that arrives before the rest of its
 * message is committed but held back, and placed once the rest is. Receive
 * completions are posted in message order once every byte of the message
 * is placed. A WRITE packet never overwrites the bytes of a WRITE of a
 * later PSN that overtook it (core/worder.h). READ and atomic requests are
 * checked, committed and queued in PSN order for tx.c, which runs each
 * only once every earlier PSN is placed (IB RC ordering: a READ or atomic
 * sees every earlier WRITE) and sends the responses in this QP's own PSN
 * space, so they are reliable and an atomic executes exactly once (its
 * request PSN is deduplicated by the window). See protocol.rst,
 * "Ordering".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ip.h>
#include <linux/ipv6.h>

#define METAROCE_TP_INTERNAL
#include "obj.h"


enum {
	TP_PLACED = 0,	/* commit */
	TP_DROP,	/* leave uncommitted, the requester resends */
	TP_HELD,	/* skb kept on the defer list */
};

/* ------------------------------------------------------------- ACKs */

void metaroce_tp_send_ack(struct metaroce_qp *qp, struct sk_buff_head *out,
			  u8 syndrome, u32 nak_psn)
{
	struct metaroce_tps *s = qp->tp.s;
	struct sk_buff *skb;
	struct mrc_pkt p;
	u8 path;

	memset(&p, 0, sizeof(p));
	mrc_rx_build_ack(&s->rx, &p.ack, tp_now_us());
	p.opcode = MRC_OP_ACK;
	path = s->paths.n ? s->rx.ts_path % s->paths.n : 0;
	p.path_id = path;
	p.dst_qpn = qp->dest_qpn & 0xffffff;
	p.ack.syndrome = syndrome;
	if (syndrome != MRC_SYN_ACK)
		p.ack.nak_psn = nak_psn;
	if (syndrome == MRC_SYN_RNR)
		p.ack.rnr_timer = qp->min_rnr_timer & 0x1f;
	hrtimer_try_to_cancel(&qp->tp.ack_timer);
	skb = metaroce_tp_build(qp, &p, NULL);
	if (!skb)
		return;
	tp_cb(skb)->sport = s->paths.n ? s->paths.p[path].sport :
			    MRC_SPORT_MIN;
	__skb_queue_tail(out, skb);
	metaroce_tp_stat_inc(qp->mdev, TP_STAT_ACKS_SENT);
	if (syndrome == MRC_SYN_RNR)
		metaroce_tp_stat_inc(qp->mdev, TP_STAT_RNR_NAKS_SENT);
	else if (syndrome != MRC_SYN_ACK)
		metaroce_tp_stat_inc(qp->mdev, TP_STAT_NAKS_SENT);
}

/* ------------------------------------------------ receive WQE table */

static struct metaroce_tp_rslot *tp_rslot(struct metaroce_tps *s, u32 msn)
{
	return &s->rslot[msn & (TP_RSLOTS - 1)];
}

/*
 * The receive WQE of message @msn, popping WQEs in message order up to
 * it. Returns NULL and *syn for RNR, or NULL without it to drop.
 */
static struct metaroce_tp_rslot *tp_rslot_get(struct metaroce_qp *qp,
					      u32 msn, u8 *syn)
{
	struct metaroce_tps *s = qp->tp.s;
	struct metaroce_tp_rslot *r;
	int err;

	if (mrc_seq_lt(msn, s->rmsn_done) ||
	    msn - s->rmsn_done >= TP_RSLOTS)
		return NULL;
	while (mrc_seq_leq(s->rmsn_pop, msn)) {
		r = tp_rslot(s, s->rmsn_pop);
		memset(r, 0, offsetof(struct metaroce_tp_rslot, msn));
		err = metaroce_rq_pop(qp, &r->wqe);
		if (err == -EAGAIN) {
			*syn = MRC_SYN_RNR;
			return NULL;
		}
		if (err == -EIO) {	/* corrupt ring: QP to ERR, QP_FATAL */
			s->failed = true;
			return NULL;
		}
		r->msn = s->rmsn_pop++;
		r->used = 1;
		r->seen = 0;
		r->placed = 0;
		r->imm = 0;
		r->src_qp = 0;
		r->has_last = 0;
		r->wc_flags = 0;
		r->solicited = 0;
		r->status = err ? IB_WC_LOC_QP_OP_ERR : IB_WC_SUCCESS;
	}
	r = tp_rslot(s, msn);
	return r->used && r->msn == msn ? r : NULL;
}

static void tp_post_rcqe(struct metaroce_qp *qp, struct metaroce_tp_rslot *r,
			 u8 status)
{
	u32 src_qp = r->src_qp ? r->src_qp : qp->dest_qpn;

	struct metaroce_cqe cqe = {};

	cqe.wr_id = r->wqe.wr_id;
	cqe.status = status;
	cqe.opcode = r->opcode ? r->opcode : IB_WC_RECV;
	cqe.byte_len = r->msg_len;
	cqe.ex_imm_data = r->imm;
	cqe.qp_num = qp->ibqp.qp_num;
	cqe.src_qp = src_qp;
	cqe.wc_flags = status == IB_WC_SUCCESS ? r->wc_flags : 0;
	cqe.pkey_index = qp->pkey_index;
	cqe.port_num = METAROCE_PORT;
	if (metaroce_cq_post(to_mcq(qp->ibqp.recv_cq), &cqe,
			     status == IB_WC_SUCCESS && r->solicited))
		qp->tp.s->failed = true;	/* CQ overflow: QP to ERR */
}

/* Post the receive completions that are now due, in message order. */
static void tp_rcomplete(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;

	while (s->rmsn_done != s->rmsn_pop) {
		struct metaroce_tp_rslot *r = tp_rslot(s, s->rmsn_done);

		/*
		 * Done when cum passes its LAST packet: everything sent
		 * before it (WRITEs included) is placed too.
		 */
		if (r->status == IB_WC_SUCCESS &&
		    (!r->seen || r->placed != r->msg_len || !r->has_last ||
		     !mrc_seq_lt(r->last_psn, s->rx.cum)))
			break;
		/* SEND_WITH_INV: every earlier request is placed now */
		if (r->status == IB_WC_SUCCESS &&
		    (r->wc_flags & METAROCE_WC_WITH_INV) &&
		    metaroce_mr_invalidate(qp->mdev, qp->ibqp.pd, r->imm))
			r->status = IB_WC_REM_INV_REQ_ERR;
		tp_post_rcqe(qp, r, r->status);
		if (r->status != IB_WC_SUCCESS)
			s->failed = true;
		r->used = 0;
		s->rmsn_done++;
	}
}

/* First packet seen of a message: record what its completion says. */
static u8 tp_rslot_start(struct metaroce_qp *qp, struct metaroce_tp_rslot *r,
			 const struct mrc_pkt *p)
{
	if (r->seen)
		return MRC_SYN_ACK;
	r->seen = 1;
	if (p->opcode == MRC_OP_WRITE_IMM) {
		r->msg_len = p->write.msg_len;
		r->opcode = IB_WC_RECV_RDMA_WITH_IMM;
		r->imm = (__force u32)cpu_to_be32(p->write.imm);
		r->wc_flags = METAROCE_WC_WITH_IMM;
		return MRC_SYN_ACK;
	}
	r->msg_len = p->send.msg_len;
	r->opcode = IB_WC_RECV;
	if (p->opcode == MRC_OP_SEND_IMM) {
		r->imm = (__force u32)cpu_to_be32(p->send.imm);
		r->wc_flags = METAROCE_WC_WITH_IMM;
	} else if (p->opcode == MRC_OP_SEND_INV) {
		r->imm = p->send.imm;
		r->wc_flags = METAROCE_WC_WITH_INV;
		/*
		 * Checked now, invalidated when the message completes
		 * (tp_rcomplete): earlier WRITEs to that MR may still be on
		 * their way, and must land.
		 */
		if (r->status == IB_WC_SUCCESS &&
		    metaroce_mr_check_invalidate(qp->mdev, qp->ibqp.pd,
						 p->send.imm)) {
			r->status = IB_WC_REM_INV_REQ_ERR;
			return MRC_SYN_INV_REQ;
		}
	}
	/* as IB: a message longer than the receive WQE is an invalid request */
	if (r->status == IB_WC_SUCCESS && r->msg_len > r->wqe.length) {
		r->status = IB_WC_LOC_LEN_ERR;
		return MRC_SYN_INV_REQ;
	}
	return MRC_SYN_ACK;
}

/* --------------------------------------------------------- placing */

static void tp_rslot_last(struct metaroce_tp_rslot *r, const struct mrc_pkt *p)
{
	if (!(p->flags & MRC_F_LAST))
		return;
	r->has_last = 1;
	r->last_psn = p->psn;
	if (p->flags & MRC_F_SOLICIT)
		r->solicited = 1;
}

/*
 * Is every earlier packet of the WRITE message whose last packet is @p
 * placed? The packets of a message have consecutive PSNs and all but the
 * last carry the sender's segment size, learnt from its non-LAST packets
 * (rx_seg); until one was seen only in-order placement counts.
 */
static bool tp_write_prefix_done(struct metaroce_tps *s,
				 const struct mrc_pkt *p)
{
	u32 k, i;

	if (p->flags & MRC_F_FIRST)
		return true;
	/*
	 * Without the bitmap to look at: done when every earlier PSN is
	 * committed, i.e. cum reached @p -- or passed it, once @p itself was
	 * committed on arrival and held (a message of more than MRC_WND
	 * packets whose last packet overtook a lost one).
	 */
	if (!s->rx_seg || p->write.offset % s->rx_seg)
		return mrc_seq_geq(s->rx.cum, p->psn);
	k = p->write.offset / s->rx_seg;
	if (k >= MRC_WND)
		return mrc_seq_geq(s->rx.cum, p->psn);
	for (i = 1; i <= k; i++)
		if (mrc_rx_check(&s->rx, p->psn - i) != MRC_RX_DUP)
			return false;
	return true;
}

static int tp_defer(struct metaroce_tps *s, struct sk_buff *skb, u32 psn)
{
	struct sk_buff *d;

	if (skb_queue_len(&s->defer) >= TP_DEFER_MAX)
		return TP_DROP;
	skb_queue_walk(&s->defer, d)
		if (*(u32 *)d->cb == psn)
			return TP_DROP;
	*(u32 *)skb->cb = psn;
	__skb_queue_tail(&s->defer, skb);
	return TP_HELD;
}

static int tp_place_send(struct metaroce_qp *qp, const struct mrc_pkt *p,
			 struct sk_buff *skb, u8 *syn)
{
	struct metaroce_tp_rslot *r;
	int err;

	r = tp_rslot_get(qp, p->send.rmsn, syn);
	if (!r)
		return TP_DROP;
	*syn = tp_rslot_start(qp, r, p);
	if (r->status != IB_WC_SUCCESS)
		return TP_PLACED;
	if (p->payload_len) {
		err = metaroce_sgl_copy(qp->mdev, qp->ibqp.pd, r->wqe.sge,
					r->wqe.num_sge, p->send.offset, NULL,
					skb, p->hdr_len, p->payload_len,
					METAROCE_TO_MR);
		if (err) {
			r->status = err == -EINVAL ? IB_WC_LOC_LEN_ERR :
				    IB_WC_LOC_PROT_ERR;
			*syn = err == -EINVAL ? MRC_SYN_INV_REQ :
			       MRC_SYN_REM_OP;
			return TP_PLACED;
		}
	}
	r->placed += p->payload_len;
	tp_rslot_last(r, p);
	return TP_PLACED;
}

/*
 * Copy a WRITE packet's payload, except the bytes that a WRITE packet of
 * a later PSN, which overtook this one, has already written: overlapping
 * WRITEs end as in PSN order (core/worder.h).
 */
static int tp_write_copy(struct metaroce_tps *s, struct metaroce_mr *mr,
			 const struct mrc_pkt *p, struct sk_buff *skb)
{
	u64 va = p->write.va + p->write.offset;
	u32 i, n;
	int err;

	if (!mrc_seq_lt(p->psn + 1, s->rx.top))	/* nothing later seen */
		return metaroce_mr_copy_from_skb(mr, va, skb, p->hdr_len,
						 p->payload_len);
	n = mrc_wo_pieces(&s->wo, p->psn, s->rx.top, p->write.rkey, va,
			  p->payload_len, s->wo.out);
	for (i = 0; i < n; i++) {
		err = metaroce_mr_copy_from_skb(mr, s->wo.out[i].va, skb,
						p->hdr_len +
						(u32)(s->wo.out[i].va - va),
						s->wo.out[i].len);
		if (err)
			return err;
	}
	return 0;
}

static int tp_place_write(struct metaroce_qp *qp, const struct mrc_pkt *p,
			  struct sk_buff *skb, u8 *syn, bool deferred)
{
	struct metaroce_tps *s = qp->tp.s;
	struct metaroce_tp_rslot *r = NULL;
	struct metaroce_mr *mr;
	int err = 0;

	/* the whole message's range, so a bad one leaves memory untouched */
	mr = metaroce_mr_get(qp->mdev, qp->ibqp.pd, p->write.rkey, true,
			     IB_ACCESS_REMOTE_WRITE, p->write.va,
			     p->write.msg_len);
	if (IS_ERR(mr)) {
		*syn = MRC_SYN_REM_ACCESS;
		return TP_DROP;
	}
	if (p->opcode == MRC_OP_WRITE_IMM) {
		r = tp_rslot_get(qp, p->write.rmsn, syn);
		if (!r) {
			metaroce_mr_put(mr);
			return TP_DROP;
		}
		tp_rslot_start(qp, r, p);
	}
	if (!(p->flags & MRC_F_LAST)) {
		s->rx_seg = p->payload_len;
	} else if (!tp_write_prefix_done(s, p)) {
		metaroce_mr_put(mr);
		return deferred ? TP_DROP : tp_defer(s, skb, p->psn);
	}
	if (p->payload_len)
		err = tp_write_copy(s, mr, p, skb);
	metaroce_mr_put(mr);
	if (err) {
		*syn = MRC_SYN_REM_OP;
		return TP_DROP;
	}
	mrc_wo_record(&s->wo, p->psn, p->write.rkey,
		      p->write.va + p->write.offset, p->payload_len);
	if (r) {
		r->placed += p->payload_len;
		tp_rslot_last(r, p);
	}
	return TP_PLACED;
}

/*
 * A READ or atomic request: check it now (a bad one is NAKed and leaves
 * memory untouched) and queue it in request PSN order. It executes --
 * the atomic operates, the READ's data is read -- only once every
 * earlier request of the QP is placed (metaroce_tp_rsp_ready()): IB RC
 * responders execute in PSN order, whatever order packets arrive in. The
 * request PSN is committed now, so a duplicate is never queued twice.
 */
static int tp_queue_rsp(struct metaroce_qp *qp, const struct mrc_pkt *p,
			u8 *syn)
{
	struct metaroce_tps *s = qp->tp.s;
	struct metaroce_mr *mr;
	struct mrc_rsp *q;

	if (p->opcode != MRC_OP_READ_REQ && (p->atomic.va & 7)) {
		*syn = MRC_SYN_INV_REQ;
		return TP_DROP;
	}
	if (p->opcode == MRC_OP_READ_REQ)
		mr = metaroce_mr_get(qp->mdev, qp->ibqp.pd, p->read.rkey, true,
				     IB_ACCESS_REMOTE_READ, p->read.va,
				     p->read.len);
	else
		mr = metaroce_mr_get(qp->mdev, qp->ibqp.pd, p->atomic.rkey,
				     true, IB_ACCESS_REMOTE_ATOMIC,
				     p->atomic.va, 8);
	if (IS_ERR(mr)) {
		*syn = MRC_SYN_REM_ACCESS;
		return TP_DROP;
	}
	metaroce_mr_put(mr);

	/* IB: more outstanding than max_dest_rd_atomic is an invalid request */
	q = mrc_rspq_insert(&s->rspq, p->psn, qp->max_dest_rd_atomic);
	if (!q) {
		*syn = MRC_SYN_INV_REQ;
		return TP_DROP;
	}
	if (p->opcode == MRC_OP_READ_REQ) {
		q->kind = TP_PKT_RRESP;
		q->va = p->read.va;
		q->rkey = p->read.rkey;
		q->len = p->read.len;
	} else {
		q->kind = TP_PKT_ARESP;
		q->op = p->opcode;
		q->va = p->atomic.va;
		q->rkey = p->atomic.rkey;
		q->compare = p->atomic.compare;
		q->swap_add = p->atomic.swap_add;
	}
	return TP_PLACED;
}

/*
 * May the oldest queued READ/atomic run? Only once every PSN before its
 * request is placed: the cumulative point passed it and no WRITE last
 * packet before it is still held back (core/rspq.h).
 */
bool metaroce_tp_rsp_ready(struct metaroce_tps *s)
{
	struct sk_buff *d;
	u32 held_min = 0;
	bool held = false;

	skb_queue_walk(&s->defer, d) {
		if (!held || mrc_seq_lt(*(u32 *)d->cb, held_min))
			held_min = *(u32 *)d->cb;
		held = true;
	}
	return mrc_rspq_ready(&s->rspq, s->rx.cum, held, held_min);
}

/*
 * Execute the head response now that it is ready: an atomic operates
 * (once: @r->executed), a READ's range is checked again (its MR may
 * have gone since the request arrived). Non-zero: it cannot be served.
 */
int metaroce_tp_rsp_exec(struct metaroce_qp *qp, struct mrc_rsp *r)
{
	struct metaroce_mr *mr;

	if (r->kind == TP_PKT_RRESP) {
		if (r->off)
			return 0;
		mr = metaroce_mr_get(qp->mdev, qp->ibqp.pd, r->rkey, true,
				     IB_ACCESS_REMOTE_READ, r->va, r->len);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		metaroce_mr_put(mr);
		return 0;
	}
	if (r->executed)
		return 0;
	mr = metaroce_mr_get(qp->mdev, qp->ibqp.pd, r->rkey, true,
			     IB_ACCESS_REMOTE_ATOMIC, r->va, 8);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	metaroce_mr_atomic(mr, r->va, r->op == MRC_OP_CMP_SWAP, r->compare,
			   r->swap_add, &r->orig);
	metaroce_mr_put(mr);
	r->executed = 1;
	return 0;
}

/*
 * A READ/atomic that was accepted (and acknowledged) cannot be served:
 * its memory went away before it ran. Tell the requester (a REM_ACCESS
 * NAK for the request's PSN, which fails that WQE) and move the QP to
 * ERR with an access error event, as IB does for a bad request.
 */
void metaroce_tp_rsp_abort(struct metaroce_qp *qp, struct sk_buff_head *out)
{
	struct metaroce_tps *s = qp->tp.s;

	if (!s->rsp_abort)
		return;
	s->rsp_abort = false;
	s->nak_psn = s->rsp_abort_psn;
	s->nak_syn = MRC_SYN_REM_ACCESS;
	metaroce_tp_send_ack(qp, out, MRC_SYN_REM_ACCESS, s->rsp_abort_psn);
	mrc_rspq_clear(&s->rspq);
	s->failed = true;
	s->fail_event = IB_EVENT_QP_ACCESS_ERR;
}

static int tp_place(struct metaroce_qp *qp, struct mrc_pkt *p,
		    struct sk_buff *skb, u8 *syn, bool deferred)
{
	switch (p->opcode) {
	case MRC_OP_SEND:
	case MRC_OP_SEND_IMM:
	case MRC_OP_SEND_INV:
		return tp_place_send(qp, p, skb, syn);
	case MRC_OP_WRITE:
	case MRC_OP_WRITE_IMM:
		return tp_place_write(qp, p, skb, syn, deferred);
	case MRC_OP_READ_REQ:
	case MRC_OP_CMP_SWAP:
	case MRC_OP_FETCH_ADD:
		return tp_queue_rsp(qp, p, syn);
	case MRC_OP_READ_RESP:
	case MRC_OP_ATOMIC_RESP:
		return metaroce_tp_comp_resp(qp, p, skb) ? TP_DROP : TP_PLACED;
	}
	*syn = MRC_SYN_INV_REQ;
	return TP_DROP;
}

/*
 * Place held-back WRITE last packets whose message is now complete. They
 * were committed (acknowledged) on arrival -- the requester must not
 * resend what is already here -- and the cumulative point cannot pass
 * them before their prefix is placed, which is when they are placed.
 */
static void tp_run_deferred(struct metaroce_qp *qp, struct sk_buff_head *out)
{
	struct metaroce_tps *s = qp->tp.s;
	struct sk_buff *skb, *tmp;
	struct mrc_pkt p;
	u8 syn;
	int r;

	skb_queue_walk_safe(&s->defer, skb, tmp) {
		if (mrc_hdr_parse(skb->data, skb_headlen(skb), skb->len, &p)) {
			__skb_unlink(skb, &s->defer);
			kfree_skb(skb);
			continue;
		}
		if (!tp_write_prefix_done(s, &p))
			continue;
		__skb_unlink(skb, &s->defer);
		syn = MRC_SYN_ACK;
		r = tp_place(qp, &p, skb, &syn, true);
		kfree_skb(skb);
		if (r == TP_PLACED && syn == MRC_SYN_ACK)
			continue;
		/*
		 * It was acknowledged, so it cannot be dropped now: its MR
		 * went away meanwhile. Fail the QP visibly, and tell the
		 * requester in case it still waits for the message.
		 */
		if (syn == MRC_SYN_ACK)
			syn = MRC_SYN_REM_OP;
		metaroce_tp_send_ack(qp, out, syn, p.psn);
		s->failed = true;
		s->fail_event = syn == MRC_SYN_REM_ACCESS ?
				IB_EVENT_QP_ACCESS_ERR : IB_EVENT_QP_FATAL;
	}
}

/*
 * A sequenced packet for @qp (requests and the responses to our own
 * requests). Consumes @skb. Caller holds the QP lock.
 */
void metaroce_tp_resp(struct metaroce_qp *qp, struct mrc_pkt *p,
		      struct sk_buff *skb, bool ce, struct sk_buff_head *out)
{
	struct metaroce_tp *tp = &qp->tp;
	struct metaroce_tps *s = tp->s;
	enum mrc_rx_verdict v;
	u8 syn = MRC_SYN_ACK;
	bool kick = false;
	int r = TP_DROP;

	v = mrc_rx_on_packet(&s->rx, p, ce, tp_now_us());
	if (ce)
		metaroce_tp_stat_inc(qp->mdev, TP_STAT_ECN_MARKED);
	if (v == MRC_RX_DUP)
		metaroce_tp_stat_inc(qp->mdev, TP_STAT_DUPLICATES);
	else if (v == MRC_RX_OOW)
		metaroce_tp_stat_inc(qp->mdev, TP_STAT_OUT_OF_WINDOW);
	else if (p->psn != s->rx.cum)
		metaroce_tp_stat_inc(qp->mdev, TP_STAT_OUT_OF_ORDER);
	if (v == MRC_RX_NEW) {
		/* not a WRITE's bytes (yet); tp_place_write() says otherwise */
		mrc_wo_record(&s->wo, p->psn, 0, 0, 0);
		r = tp_place(qp, p, skb, &syn, false);
		if (r == TP_HELD) {
			mrc_rx_commit(&s->rx, p->psn);
		} else if (r == TP_PLACED) {
			mrc_rx_commit(&s->rx, p->psn);
			if (!skb_queue_empty(&s->defer))
				tp_run_deferred(qp, out);
			tp_rcomplete(qp);
			/* a queued READ/atomic may have become ready */
			kick = metaroce_tp_rsp_ready(s);
			if (p->opcode == MRC_OP_READ_RESP ||
			    p->opcode == MRC_OP_ATOMIC_RESP) {
				s->retries = 0;	/* the responder progresses */
				metaroce_tp_complete(qp, out);
				/* rd_atomic room may have opened */
				kick = true;
			}
		}
	}
	if (r != TP_HELD)
		kfree_skb(skb);
	s->rx_pkts++;
	pr_debug("qp %u rx op %u psn %u flags %x verdict %d place %d syn %u cum %u\n",
		 qp->ibqp.qp_num, p->opcode, p->psn, p->flags, v, r, syn,
		 s->rx.cum);

	if (syn != MRC_SYN_ACK) {
		/* one NAK per PSN and syndrome until something changes */
		if (s->nak_psn != p->psn || s->nak_syn != syn ||
		    (p->flags & MRC_F_RETX)) {
			s->nak_psn = p->psn;
			s->nak_syn = syn;
			metaroce_tp_send_ack(qp, out, syn, p->psn);
		}
		/* as IB RC: access and request errors end the QP */
		if (syn == MRC_SYN_REM_ACCESS || syn == MRC_SYN_INV_REQ) {
			s->failed = true;
			s->fail_event = syn == MRC_SYN_REM_ACCESS ?
					IB_EVENT_QP_ACCESS_ERR :
					IB_EVENT_QP_REQ_ERR;
		}
	} else if (mrc_rx_ack_due(&s->rx)) {
		metaroce_tp_send_ack(qp, out, MRC_SYN_ACK, 0);
	} else if (mrc_rx_ack_pending(&s->rx) &&
		   !hrtimer_active(&tp->ack_timer)) {
		hrtimer_start(&tp->ack_timer, tp_us_ktime(TP_ACK_DELAY_US),
			      HRTIMER_MODE_REL_SOFT);
	}
	if (kick)
		s->want_tx = true;
}

/* ----------------------------------------------------- flush, reset */

/* QP entered ERR: every receive WQE taken or still posted is flushed. */
void metaroce_tp_resp_flush(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;
	struct metaroce_tp_rslot r;
	u32 n;
	int err;

	while (s->rmsn_done != s->rmsn_pop) {
		struct metaroce_tp_rslot *t = tp_rslot(s, s->rmsn_done);

		tp_post_rcqe(qp, t, IB_WC_WR_FLUSH_ERR);
		t->used = 0;
		s->rmsn_done++;
	}
	/*
	 * An SRQ is shared: its WQEs stay for the other QPs. User space
	 * moves the RQ's producer: one ring's worth at most, none if corrupt.
	 */
	if (!qp->ibqp.srq) {
		memset(&r, 0, sizeof(r));
		for (n = qp->rq.num_slots; n; n--) {
			err = metaroce_rq_pop(qp, &r.wqe);
			if (err == -EAGAIN || err == -EIO)
				break;
			tp_post_rcqe(qp, &r, IB_WC_WR_FLUSH_ERR);
		}
	}
	__skb_queue_purge(&s->defer);
}

void metaroce_tp_resp_reset(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;

	__skb_queue_purge(&s->defer);
	mrc_wo_init(&s->wo);
	memset(s->rslot, 0, sizeof(s->rslot));
	s->rmsn_done = 0;
	s->rmsn_pop = 0;
	s->rx_seg = 0;
	s->nak_psn = 0;
	s->nak_syn = 0;
}

/* ------------------------------------------------------------------ UD */

/*
 * A datagram for a UD or GSI QP: qkey check, one receive WQE, a 40-byte
 * GRH area first (the IPv4 header in its last 20 bytes, or the IPv6
 * header), then the payload. Anything that does not fit is dropped, as
 * IB does. Caller holds the QP lock.
 */
void metaroce_tp_ud_recv(struct metaroce_qp *qp, struct mrc_pkt *p,
			 struct sk_buff *skb)
{
	struct metaroce_tps *s = qp->tp.s;
	struct metaroce_tp_rslot *r = &s->ud_slot;
	u8 grh[40] = {};
	u8 status = IB_WC_SUCCESS;
	u8 net = 0;
	int err;

	if (p->ud.qkey != qp->qkey) {
		s->drops++;
		return;
	}
	memset(r, 0, sizeof(*r));
	err = metaroce_rq_pop(qp, &r->wqe);
	if (err) {
		if (err == -EIO)	/* corrupt ring: QP to ERR, QP_FATAL */
			s->failed = true;
		s->drops++;
		return;
	}
	r->msg_len = p->payload_len + sizeof(grh);
	r->opcode = IB_WC_RECV;
	r->wc_flags = METAROCE_WC_GRH;
	if (p->opcode == MRC_OP_UD_SEND_IMM) {
		r->imm = (__force u32)cpu_to_be32(p->ud.imm);
		r->wc_flags |= METAROCE_WC_WITH_IMM;
	}
	r->solicited = !!(p->flags & MRC_F_SOLICIT);
	r->src_qp = p->ud.src_qpn;
	if (r->msg_len > r->wqe.length) {
		status = IB_WC_LOC_LEN_ERR;
		goto out;
	}
	if (skb->protocol == htons(ETH_P_IP)) {
		memcpy(grh + 20, ip_hdr(skb), 20);
		net = METAROCE_WC_NET_IPV4;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		memcpy(grh, ipv6_hdr(skb), 40);
		net = METAROCE_WC_NET_IPV6;
	}
	/* kernel consumers (the CM on QP1) get the header type too */
	if (!to_mcq(qp->ibqp.recv_cq)->is_user)
		r->wc_flags |= net;
	err = metaroce_sgl_copy(qp->mdev, qp->ibqp.pd, r->wqe.sge,
				r->wqe.num_sge, 0, grh, NULL, 0, sizeof(grh),
				METAROCE_TO_MR);
	if (!err && p->payload_len)
		err = metaroce_sgl_copy(qp->mdev, qp->ibqp.pd, r->wqe.sge,
					r->wqe.num_sge, sizeof(grh), NULL, skb,
					p->hdr_len, p->payload_len,
					METAROCE_TO_MR);
	if (err)
		status = IB_WC_LOC_PROT_ERR;
out:
	tp_post_rcqe(qp, r, status);
}
