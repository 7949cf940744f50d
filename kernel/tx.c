// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: the requester's adapter.
 *
 * What to send next -- retransmissions, READ/atomic responses, request
 * segments -- and what a timer expiry means is core/requester.c's
 * decision; this file gives it the world. One work item per QP (or the
 * doorbell / receive context, for a little) runs it: fetches send WQEs
 * from the SQ ring into a validated kernel copy (a user slot is read
 * exactly once), builds the packet each descriptor describes (payload
 * from the WQE's SGEs or inline data, or from the MR of a READ), sends
 * datagrams for UD, executes local operations, owns the hrtimers, the
 * workqueue, the QP state hooks (init, modify, flush, reset, destroy)
 * and restrack.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/log2.h>

#include <rdma/restrack.h>

#define METAROCE_TP_INTERNAL
#include "obj.h"
#include "trace.h"

unsigned int metaroce_tp_rto_floor_us = 10000;
module_param_named(rto_floor_us, metaroce_tp_rto_floor_us, uint, 0644);
MODULE_PARM_DESC(rto_floor_us,
		 "minimum retransmission timeout in us (default 10000)");

static unsigned int tp_npaths = MRC_PATHS_DEFAULT;
module_param_named(paths, tp_npaths, uint, 0644);
MODULE_PARM_DESC(paths, "paths (UDP source ports) per QP, 1..16 (default 4)");

static unsigned int tp_ack_every = MRC_ACK_EVERY_DEFAULT;
module_param_named(ack_every, tp_ack_every, uint, 0644);
MODULE_PARM_DESC(ack_every,
		 "receiver ACKs at least every N in-order packets, 1..64 (default "
		 __stringify(MRC_ACK_EVERY_DEFAULT) ")");

static unsigned int tp_ack_every_hole = MRC_ACK_EVERY_HOLE;
module_param_named(ack_every_hole, tp_ack_every_hole, uint, 0644);
MODULE_PARM_DESC(ack_every_hole,
		 "while a hole is open, ACK every N packets, 1..64 (default "
		 __stringify(MRC_ACK_EVERY_HOLE) ")");

static struct workqueue_struct *tp_wq;

int metaroce_tp_init(void)
{
	tp_wq = alloc_workqueue("metaroce_tp", WQ_HIGHPRI, 0);
	return tp_wq ? 0 : -ENOMEM;
}

void metaroce_tp_exit(void)
{
	if (tp_wq)
		destroy_workqueue(tp_wq);
	tp_wq = NULL;
}

void metaroce_tp_schedule(struct metaroce_qp *qp)
{
	if (READ_ONCE(qp->tp.dead))
		return;
	queue_work(tp_wq ? tp_wq : system_highpri_wq, &qp->tp.work);
}

/* ------------------------------------------------------------ timers */

/* IB local ACK timeout (4.096 us << timeout), 0 = infinite. */
u64 metaroce_tp_ib_timeout_us(u8 timeout)
{
	if (!timeout)
		return 0;	/* infinite */
	return (4096ULL << min_t(u8, timeout, 31)) / 1000;
}

/* (Re)arm the retransmission timer (core/completer.h). */
void metaroce_tp_arm_rto(struct metaroce_qp *qp, bool restart)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, NULL);
	mrc_req_arm_rto(&qp->tp.s->req, &e, restart);
}

static enum hrtimer_restart tp_rto_fn(struct hrtimer *t)
{
	struct metaroce_qp *qp = container_of(t, struct metaroce_qp,
					      tp.rto_timer);

	set_bit(TP_EV_RTO, &qp->tp.events);
	metaroce_tp_schedule(qp);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart tp_rnr_fn(struct hrtimer *t)
{
	struct metaroce_qp *qp = container_of(t, struct metaroce_qp,
					      tp.rnr_timer);

	set_bit(TP_EV_RNR, &qp->tp.events);
	metaroce_tp_schedule(qp);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart tp_ack_fn(struct hrtimer *t)
{
	struct metaroce_qp *qp = container_of(t, struct metaroce_qp,
					      tp.ack_timer);
	struct sk_buff_head q;

	__skb_queue_head_init(&q);
	spin_lock_bh(&qp->tp.lock);
	if (!qp->tp.dead)
		metaroce_tp_ack_timer(qp, &q);
	spin_unlock_bh(&qp->tp.lock);
	metaroce_tp_xmit_queue(qp, &q);
	return HRTIMER_NORESTART;
}

/* ------------------------------------------------------ packet build */

/*
 * Allocate an skb for packet @p (payload_len set), write its headers and
 * return it with the payload area (p->payload_len bytes) at *payload.
 * Finish with metaroce_tp_build_end().
 */
struct sk_buff *metaroce_tp_build_begin(const struct mrc_pkt *p,
					void **payload)
{
	struct sk_buff *skb;
	int hlen = mrc_hdr_len(p);

	if (hlen < 0)
		return NULL;
	skb = metaroce_tp_alloc_skb(hlen + p->payload_len + MRC_ICRC_LEN);
	if (!skb)
		return NULL;
	if (mrc_hdr_build(p, skb->data, hlen) != hlen) {
		kfree_skb(skb);
		return NULL;
	}
	*payload = skb->data + hlen;
	skb_put(skb, hlen + p->payload_len + MRC_ICRC_LEN);
	return skb;
}

void metaroce_tp_build_end(struct sk_buff *skb)
{
	mrc_icrc_put(skb->data, skb->len - MRC_ICRC_LEN);
}

/* Build a whole packet with @payload (may be NULL when empty). */
struct sk_buff *metaroce_tp_build(struct metaroce_qp *qp, struct mrc_pkt *p,
				  const void *payload)
{
	struct sk_buff *skb;
	void *pl;

	skb = metaroce_tp_build_begin(p, &pl);
	if (!skb)
		return NULL;
	if (p->payload_len)
		memcpy(pl, payload, p->payload_len);
	metaroce_tp_build_end(skb);
	return skb;
}

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

/* A PROBE (ACKREQ): the peer answers with an ACK. */
static struct sk_buff *tp_probe_skb(struct metaroce_qp *qp, u32 psn,
				    u16 sport)
{
	struct sk_buff *skb;
	struct mrc_pkt p;

	memset(&p, 0, offsetof(struct mrc_pkt, ack));
	p.opcode = MRC_OP_PROBE;
	p.flags = MRC_F_ACKREQ;
	p.dst_qpn = qp->dest_qpn & 0xffffff;
	p.psn = psn;
	p.tsval = (u32)tp_now_us();
	skb = metaroce_tp_build(qp, &p, NULL);
	if (skb)
		tp_cb(skb)->sport = sport;
	return skb;
}

/*
 * Build the packet of outgoing @psn from its descriptor (first send or
 * retransmission). Returns NULL when it cannot be built (memory gone).
 */
static struct sk_buff *tp_build_psn(struct metaroce_qp *qp, u32 psn,
				    u32 ppsn, u8 path, bool retx)
{
	struct metaroce_tps *s = qp->tp.s;
	struct mrc_txd *d = &s->req.pkt[psn & (MRC_WND - 1)];
	struct mrc_swqe *w = NULL;
	struct metaroce_mr *mr;
	struct sk_buff *skb;
	struct mrc_pkt p;
	void *pl;
	int err = 0;

	memset(&p, 0, offsetof(struct mrc_pkt, ack));
	p.opcode = d->opcode;
	p.flags = d->flags | (retx ? MRC_F_RETX : 0);
	p.path_id = path;
	p.dst_qpn = qp->dest_qpn & 0xffffff;
	p.psn = psn;
	p.ppsn = ppsn;
	p.tsval = (u32)tp_now_us();
	p.payload_len = d->len;

	switch (d->kind) {
	case TP_PKT_REQ:
		w = tp_swqe(s, d->idx);
		switch (d->opcode) {
		case MRC_OP_SEND:
		case MRC_OP_SEND_IMM:
		case MRC_OP_SEND_INV:
			p.send.rmsn = w->msn;
			p.send.msg_len = w->len;
			p.send.offset = d->offset;
			p.send.imm = d->opcode == MRC_OP_SEND ? 0 :
				     d->opcode == MRC_OP_SEND_IMM ?
				     be32_to_cpu((__force __be32)w->imm) :
				     w->imm;
			break;
		case MRC_OP_WRITE:
		case MRC_OP_WRITE_IMM:
			p.write.va = w->remote_addr;
			p.write.rkey = w->rkey;
			p.write.msg_len = w->len;
			p.write.offset = d->offset;
			if (d->opcode == MRC_OP_WRITE_IMM) {
				p.write.rmsn = w->msn;
				p.write.imm =
					be32_to_cpu((__force __be32)w->imm);
			}
			break;
		case MRC_OP_READ_REQ:
			p.read.va = w->remote_addr;
			p.read.rkey = w->rkey;
			p.read.len = w->len;
			break;
		case MRC_OP_CMP_SWAP:
		case MRC_OP_FETCH_ADD:
			p.atomic.va = w->remote_addr;
			p.atomic.rkey = w->rkey;
			p.atomic.swap_add = d->opcode == MRC_OP_CMP_SWAP ?
					    w->swap : w->compare_add;
			p.atomic.compare = d->opcode == MRC_OP_CMP_SWAP ?
					   w->compare_add : 0;
			break;
		}
		skb = metaroce_tp_build_begin(&p, &pl);
		if (!skb)
			return NULL;
		if (!d->len)
			break;
		if (w->send_flags & IB_SEND_INLINE)
			memcpy(pl, w->inline_data + d->offset, d->len);
		else
			err = metaroce_sgl_copy(qp->mdev, qp->ibqp.pd, tp_sge(w),
						w->num_sge, d->offset, pl, NULL,
						0, d->len, METAROCE_FROM_MR);
		break;
	case TP_PKT_RRESP:
		p.rresp.req_psn = d->req_psn;
		p.rresp.offset = d->offset;
		p.rresp.msg_len = d->msg_len;
		skb = metaroce_tp_build_begin(&p, &pl);
		if (!skb || !d->len)
			break;
		mr = metaroce_mr_get(qp->mdev, qp->ibqp.pd, d->rkey, true,
				     IB_ACCESS_REMOTE_READ, d->va + d->offset,
				     d->len);
		if (IS_ERR(mr) && retx && mrc_req_resp_gone(&s->req, psn)) {
			/*
			 * Gone since the first transmission: the peer may
			 * have the PSN (its READ done, the MR invalidated by
			 * its SEND_WITH_INV); its ACK to a PROBE tells.
			 */
			kfree_skb(skb);
			return tp_probe_skb(qp, s->req.sb.nxt,
					    s->req.paths.p[path].sport);
		}
		if (IS_ERR(mr)) {
			/* the MR went away while its READ was served */
			err = PTR_ERR(mr);
			s->resp.rsp_abort = 1;
			s->resp.rsp_abort_psn = d->req_psn;
			break;
		}
		metaroce_mr_copy(mr, d->va + d->offset, pl, d->len,
				 METAROCE_FROM_MR);
		metaroce_mr_put(mr);
		break;
	case TP_PKT_ARESP:
		p.aresp.orig = d->va;
		p.aresp.req_psn = d->req_psn;
		skb = metaroce_tp_build_begin(&p, &pl);
		break;
	default:
		return NULL;
	}
	if (!skb)
		return NULL;
	if (err) {
		kfree_skb(skb);
		if (w && w->status == IB_WC_SUCCESS) {
			w->status = IB_WC_LOC_PROT_ERR;
			s->req.stop_new = true;
		}
		return NULL;
	}
	metaroce_tp_build_end(skb);
	metaroce_tp_stat_inc(qp->mdev, TP_STAT_TX_DATA);
	trace_metaroce_tx(qp->ibqp.qp_num, p.opcode, psn, ppsn, path,
			  s->req.paths.p[path].sport, d->len, retx);
	tp_cb(skb)->sport = s->req.paths.p[path].sport;
	tp_cb(skb)->ect = 1;
	return skb;
}

/* ------------------------------------------------------- WQE fetch */

static u32 tp_swqe_size(struct metaroce_qp *qp)
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
	return false;
}

/* Copy ring slot @idx into the kernel copy and validate it. */
static void tp_fetch_one(struct metaroce_qp *qp, u32 idx)
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
	if (metaroce_wr_is_local(h.opcode))
		return;		/* local: no data */
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

	/* local keys: checked now, so errors complete this WQE only */
	for (i = 0; i < w->num_sge; i++) {
		struct metaroce_mr *mr;

		if (!w->sge[i].length)
			continue;
		mr = metaroce_mr_get(qp->mdev, qp->ibqp.pd, w->sge[i].lkey,
				     false,
				     w->rd_atomic ? IB_ACCESS_LOCAL_WRITE : 0,
				     w->sge[i].addr, w->sge[i].length);
		if (IS_ERR(mr)) {
			w->status = IB_WC_LOC_PROT_ERR;
			return;
		}
		metaroce_mr_put(mr);
	}

	if (w->mrc_op == MRC_OP_SEND || w->mrc_op == MRC_OP_SEND_IMM ||
	    w->mrc_op == MRC_OP_SEND_INV || w->mrc_op == MRC_OP_WRITE_IMM)
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
		tp_fetch_one(qp, s->req.sq_head++);
}

/* ------------------------------------------------------ completions */

static void tp_sq_advance(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;

	s->req.sq_tail++;
	metaroce_tp_sq_consumed(qp, s->req.sq_tail);
}

/* -------------------------------------------------------- transmit */

static enum metaroce_tp_stat tp_retx_stat(u8 cause)
{
	switch (cause) {
	case MRC_LOSS_ACK:
		return TP_STAT_RETX_FAST;
	case MRC_LOSS_TLP:
		return TP_STAT_TLP;
	case MRC_LOSS_NAK:
		return TP_STAT_RETX_RNR;
	}
	return TP_STAT_RETX_TIMEOUT;
}

/* Retransmit lost PSNs while a path has room (core/requester.c). */
static int tp_retransmit(struct metaroce_qp *qp, const struct mrc_env *e,
			 struct sk_buff_head *q, int budget)
{
	struct metaroce_tps *s = qp->tp.s;
	struct mrc_req_out o;
	struct sk_buff *skb;
	int n = 0;

	while (n < budget && !mrc_req_retx(&s->req, e, &o)) {
		trace_metaroce_retransmit(qp->ibqp.qp_num, o.psn, o.path,
					  o.cause);
		skb = tp_build_psn(qp, o.psn, o.ppsn, o.path, true);
		s->retx_pkts++;
		metaroce_tp_stat_inc(qp->mdev, TP_STAT_RETX);
		metaroce_tp_stat_inc(qp->mdev, tp_retx_stat(o.cause));
		if (skb) {
			__skb_queue_tail(q, skb);
			n++;
		}
		if (s->req.stop_new)
			break;
	}
	return n;
}

/*
 * UD (and GSI) send: one unsequenced packet to the AH of the WQE. The WQE
 * is done once the packet has left, whether or not it arrives (the
 * requester accounted it as done already).
 */
static struct sk_buff *tp_ud_send(struct metaroce_qp *qp,
				  struct mrc_swqe *w)
{
	struct metaroce_tps *s = qp->tp.s;
	struct metaroce_ah *ah;
	struct sk_buff *skb;
	struct mrc_pkt p;
	void *pl;
	int err = 0;

	if (w->len > s->mtu) {
		w->status = IB_WC_LOC_LEN_ERR;
		return NULL;
	}
	ah = metaroce_ah_get(qp->mdev, qp->ibqp.pd, w->ah_num);
	if (!ah) {
		w->status = IB_WC_LOC_QP_OP_ERR;
		return NULL;
	}
	memset(&p, 0, offsetof(struct mrc_pkt, ack));
	p.flags = MRC_F_FIRST | MRC_F_LAST;
	if (w->send_flags & IB_SEND_SOLICITED)
		p.flags |= MRC_F_SOLICIT;
	p.path_id = s->req.paths.rr++ % max_t(u32, s->req.paths.n, 1);
	p.dst_qpn = w->remote_qpn & 0xffffff;
	p.tsval = (u32)tp_now_us();
	p.payload_len = w->len;
	p.ud.src_qpn = qp->ibqp.qp_num;
	/* IB: a qkey with the high bit set means "the QP's own" */
	p.ud.qkey = (w->remote_qkey & 0x80000000U) ? qp->qkey :
		    w->remote_qkey;
	if (w->mrc_op == MRC_OP_SEND_IMM) {
		p.opcode = MRC_OP_UD_SEND_IMM;
		p.ud.imm = be32_to_cpu((__force __be32)w->imm);
	} else {
		p.opcode = MRC_OP_UD_SEND;
	}
	skb = metaroce_tp_build_begin(&p, &pl);
	if (!skb) {
		metaroce_ah_put(ah);
		return NULL;	/* dropped, as a datagram may be */
	}
	if (w->len && (w->send_flags & IB_SEND_INLINE))
		memcpy(pl, w->inline_data, w->len);
	else if (w->len)
		err = metaroce_sgl_copy(qp->mdev, qp->ibqp.pd, tp_sge(w),
					w->num_sge, 0, pl, NULL, 0, w->len,
					METAROCE_FROM_MR);
	if (err) {
		kfree_skb(skb);
		metaroce_ah_put(ah);
		w->status = IB_WC_LOC_PROT_ERR;
		return NULL;
	}
	metaroce_tp_build_end(skb);
	tp_cb(skb)->sport = s->req.paths.n ? s->req.paths.p[p.path_id].sport :
			    MRC_SPORT_MIN;
	tp_cb(skb)->ect = 1;
	tp_cb(skb)->ah = ah;
	s->tx_pkts++;
	return skb;
}

/* Execute a fast-register, local-invalidate or bind-window WQE. */
void metaroce_tp_local_op(struct metaroce_qp *qp, struct mrc_swqe *w)
{
	w->status = metaroce_mem_local_wqe(qp, w->opcode, w->imm, w->rkey,
					   w->remote_addr, w->compare_add,
					   w->swap);
	w->len = 0;
}

/*
 * Build up to @budget new packets: responses between messages, then
 * request segments, as the requester decides (core/requester.c).
 */
static int tp_send_new(struct metaroce_qp *qp, const struct mrc_env *e,
		       struct sk_buff_head *q, int budget)
{
	struct metaroce_tps *s = qp->tp.s;
	struct mrc_req_out o;
	struct sk_buff *skb;
	int n = 0, step;

	/* with stop_new, mrc_req_next() still runs responses */
	while (n < budget) {
		step = mrc_req_next(&s->req, &s->resp, e, &o);
		if (step == MRC_REQ_STOP)
			break;
		if (step == MRC_REQ_AGAIN)
			continue;
		if (step == MRC_REQ_UD) {
			skb = tp_ud_send(qp, tp_swqe(s, o.idx));
			if (!skb)
				continue;
		} else {
			skb = tp_build_psn(qp, o.psn, o.ppsn, o.path, false);
			if (!skb && o.resp)
				break;
			if (!skb)
				continue;
		}
		__skb_queue_tail(q, skb);
		n++;
	}
	return n;
}

/* ---------------------------------------------------------- flush */

static void tp_flush_sq(struct metaroce_qp *qp)
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
			tp_fetch_one(qp, s->req.sq_head++);
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

static void tp_flush(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;

	s->running = false;
	s->req.rnr_wait = false;
	tp_flush_sq(qp);
	metaroce_tp_resp_flush(qp);	/* stops the responder */
	mrc_sb_init(&s->req.sb, s->req.sb.nxt, 0, MRC_DUPTHRESH_DEFAULT);
}

/* ----------------------------------------------------------- work */

/*
 * A responder still in RTR has READ/atomic responses to send but does not
 * know where its PSN space starts (sq_psn comes with RTS): ask the peer,
 * whose ACK carries the PSN it expects from us in cum_psn.
 */
static void tp_probe(struct metaroce_qp *qp, struct sk_buff_head *q, u32 psn)
{
	struct metaroce_tps *s = qp->tp.s;
	struct sk_buff *skb;

	skb = tp_probe_skb(qp, psn, s->req.paths.n ? s->req.paths.p[0].sport :
			   MRC_SPORT_MIN);
	if (!skb)
		return;
	__skb_queue_tail(q, skb);
	if (!s->req.anchored)
		hrtimer_start(&qp->tp.rto_timer, tp_us_ktime(mrc_req_rto_us(&s->req)),
			      HRTIMER_MODE_REL_SOFT);
}

/*
 * Drop the QP lock taken by the caller, transmit @q and report a fatal
 * error (which moves the QP to ERR and back into the flush here).
 */
void metaroce_tp_unlock(struct metaroce_qp *qp, struct sk_buff_head *q)
{
	struct metaroce_tps *s = qp->tp.s;
	enum ib_event_type ev = IB_EVENT_QP_FATAL;
	bool fail = false;

	if (s->req.failed && (s->running || mrc_resp_ready(&s->resp))) {
		s->running = false;
		mrc_resp_stop(&s->resp);
		fail = true;
		if (s->fail_event)
			ev = s->fail_event;
	}
	spin_unlock_bh(&qp->tp.lock);
	metaroce_tp_xmit_queue(qp, q);
	if (fail) {
		metaroce_qp_error(qp, ev);
		set_bit(TP_EV_FLUSH, &qp->tp.events);
		metaroce_tp_schedule(qp);
	}
}

/*
 * Run the requester: handle timer events, retransmit, send new packets,
 * complete. @inline_ctx: called from a doorbell or from receive
 * processing rather than from the work item; it does a bounded amount and
 * leaves flushing and anything left over to the work.
 */
static void tp_run(struct metaroce_qp *qp, bool inline_ctx)
{
	struct metaroce_tp *tp = &qp->tp;
	struct metaroce_tps *s = tp->s;
	struct metaroce_tp_ctx c;
	struct sk_buff_head q;
	struct mrc_env e;
	int n, rounds = 0;

	__skb_queue_head_init(&q);
again:
	spin_lock_bh(&tp->lock);
	if (tp->dead) {
		spin_unlock_bh(&tp->lock);
		return;
	}
	/* a flush asked for before a RESET is stale: state decides */
	if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		if (inline_ctx) {
			spin_unlock_bh(&tp->lock);
			metaroce_tp_schedule(qp);
			return;
		}
		clear_bit(TP_EV_FLUSH, &tp->events);
		tp_flush(qp);
		spin_unlock_bh(&tp->lock);
		hrtimer_cancel(&tp->rto_timer);
		hrtimer_cancel(&tp->rnr_timer);
		return;
	}
	metaroce_tp_env(&e, &c, qp, &q);
	if (test_and_clear_bit(TP_EV_RNR, &tp->events))
		s->req.rnr_wait = false;
	if (test_and_clear_bit(TP_EV_RTO, &tp->events) && s->req.anchored &&
	    !s->req.rnr_wait)
		mrc_req_timer(&s->req, &e);
	if (s->req.probe_due) {
		s->req.probe_due = false;
		tp_probe(qp, &q, s->req.probe_psn);
	}

	n = 0;
	if (!s->req.anchored) {
		/* responses to send before our PSN space is known */
		if (mrc_resp_ready(&s->resp) && mrc_rspq_len(&s->resp.rspq))
			tp_probe(qp, &q, 0);
	} else if ((s->running || mrc_resp_ready(&s->resp)) && !s->req.rnr_wait) {
		n = tp_retransmit(qp, &e, &q, TP_TX_BATCH);
		n += tp_send_new(qp, &e, &q, TP_TX_BATCH - n);
		/* after sending: a fresh timer covers what was just sent */
		metaroce_tp_arm_rto(qp, false);
		metaroce_tp_rsp_abort(qp, &q);
	}
	metaroce_tp_complete(qp, &q);
	metaroce_tp_unlock(qp, &q);
	if (n >= TP_TX_BATCH) {
		if (!inline_ctx && ++rounds < 8) {
			cond_resched();
			goto again;
		}
		metaroce_tp_schedule(qp);
	}
}

static void tp_work(struct work_struct *work)
{
	tp_run(container_of(work, struct metaroce_qp, tp.work), false);
}

/*
 * Transmit from receive processing (softirq, after the QP lock). A QP
 * with little in flight (a ping-pong, a READ or two to answer) sends at
 * once: waking a worker would cost more than the send. A busy QP hands
 * the transmission to its high-priority worker: building and sending a
 * window's worth of packets inside the receive softirq pushes softirq
 * processing into ksoftirqd, an ordinary thread that a busy-polling
 * application (perftest, any verbs program polling its CQ) starves, and
 * the ACKs that would open the window wait behind it (design.rst).
 */
void metaroce_tp_run_inline(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;

	if (s && data_race(mrc_sb_outstanding(&s->req.sb)) < TP_TX_INLINE_MAX)
		tp_run(qp, true);
	else
		metaroce_tp_schedule(qp);
}

/* ------------------------------------------------------ restrack */

/* Per-path fields of `rdma res show qp -dd`, in this order. */
static const char * const tp_res_path_fmt[] = {
	"p%u_sport", "p%u_cwnd", "p%u_inflight", "p%u_srtt_us", "p%u_rto_us",
	"p%u_replaced",
};

static int tp_res_path(struct sk_buff *msg, struct metaroce_tps *s, u32 i)
{
	const struct mrc_path *p = &s->req.paths.p[i];
	u32 v[ARRAY_SIZE(tp_res_path_fmt)] = {
		p->sport, mrc_cc_window(&p->cc), s->req.sb.inflight[i],
		p->rtt.srtt8 >> 3, p->rtt.rto, p->replaced,
	};
	char name[16];
	u32 j;

	for (j = 0; j < ARRAY_SIZE(v); j++) {
		snprintf(name, sizeof(name), tp_res_path_fmt[j], i);
		if (rdma_nl_put_driver_u32(msg, name, v[j]))
			return -EMSGSIZE;
	}
	return 0;
}

static int tp_res_qp(struct sk_buff *msg, struct metaroce_tps *s)
{
	u32 n = min_t(u32, s->req.paths.n, MRC_MAX_PATHS), i;

	if (rdma_nl_put_driver_u32(msg, "sq_psn_una", s->req.sb.una) ||
	    rdma_nl_put_driver_u32(msg, "sq_outstanding",
				   mrc_sb_outstanding(&s->req.sb)) ||
	    rdma_nl_put_driver_u32(msg, "rq_psn_cum", s->resp.rx.cum) ||
	    rdma_nl_put_driver_u32(msg, "seg_size", s->mtu) ||
	    rdma_nl_put_driver_u32(msg, "retx_pkts", (u32)s->retx_pkts) ||
	    rdma_nl_put_driver_u32(msg, "rtos", (u32)s->rtos) ||
	    rdma_nl_put_driver_u32(msg, "paths", n))
		return -EMSGSIZE;
	for (i = 0; i < n; i++)
		if (tp_res_path(msg, s, i))
			return -EMSGSIZE;
	return 0;
}

int metaroce_tp_fill_res_qp(struct sk_buff *msg, struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;
	struct nlattr *nest;
	int ret;

	if (!s)
		return 0;
	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	spin_lock_bh(&qp->tp.lock);
	ret = tp_res_qp(msg, s);
	spin_unlock_bh(&qp->tp.lock);
	if (ret)
		nla_nest_cancel(msg, nest);
	else
		nla_nest_end(msg, nest);
	return ret;
}

/* ----------------------------------------------------------- hooks */

int metaroce_tp_qp_init(struct metaroce_qp *qp)
{
	struct metaroce_tp *tp = &qp->tp;
	struct metaroce_tps *s;

	spin_lock_init(&tp->lock);
	skb_queue_head_init(&tp->txq);
	INIT_WORK(&tp->work, tp_work);
	hrtimer_init(&tp->rto_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	tp->rto_timer.function = tp_rto_fn;
	hrtimer_init(&tp->ack_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	tp->ack_timer.function = tp_ack_fn;
	hrtimer_init(&tp->rnr_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	tp->rnr_timer.function = tp_rnr_fn;
	tp->events = 0;
	tp->dead = false;

	s = kvzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	if (qp->sq.q) {
		s->req.nswq = min_t(u32, qp->sq.num_slots, TP_MAX_SWQ);
		s->req.nswq = rounddown_pow_of_two(max_t(u32, s->req.nswq, 1));
		s->req.swqe_size = tp_swqe_size(qp);
		s->req.swq = kvcalloc(s->req.nswq, s->req.swqe_size, GFP_KERNEL);
		if (!s->req.swq) {
			kvfree(s);
			return -ENOMEM;
		}
	}
	tp->s = s;
	return 0;
}

static void tp_reset(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;

	s->running = false;
	s->req.anchored = false;
	s->req.failed = false;
	s->fail_event = 0;
	s->req.stop_new = false;
	s->req.peer_err = false;
	s->req.nak_found = false;
	s->req.rnr_wait = false;
	s->req.undo_armed = false;
	s->req.probe_due = false;
	metaroce_tp_resp_reset(qp);	/* stops the responder */
	s->req.sq_tail = 0;
	s->req.sq_seg = 0;
	s->req.sq_head = 0;
	s->req.smsn = 0;
	s->req.rd_atomic_out = 0;
}

/*
 * RESET: end the QP's previous life before its state is cleared. Under the
 * lock, nothing more is received (the responder stops), sent or failed
 * (running); then wait for what already passed the lock: receive processing (softirq,
 * under RCU), the timers (which queue the work) and the work. A reused QP
 * then behaves like a new one: no completion, event, flush or timer of
 * its previous life reaches the next.
 */
static void tp_quiesce(struct metaroce_qp *qp)
{
	struct metaroce_tp *tp = &qp->tp;

	spin_lock_bh(&tp->lock);
	tp->s->running = false;
	mrc_resp_stop(&tp->s->resp);
	spin_unlock_bh(&tp->lock);
	synchronize_rcu();
	hrtimer_cancel(&tp->rto_timer);
	hrtimer_cancel(&tp->rnr_timer);
	hrtimer_cancel(&tp->ack_timer);
	cancel_work_sync(&tp->work);
}

static void tp_paths_init(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;
	struct mrc_path_cfg cfg;

	mrc_path_cfg_default(&cfg);
	cfg.npaths = clamp_t(u32, READ_ONCE(tp_npaths), 1, MRC_MAX_PATHS);
	cfg.seed = qp->ibqp.qp_num * 0x9e3779b1U ^ qp->dest_qpn ^
		   (u32)get_random_u32();
	mrc_paths_init(&s->req.paths, &cfg);
}

/*
 * Payload bytes per packet. UD: the IB path MTU (it bounds the message).
 * RC: segmentation is the transport's own business; packets are sized to
 * the IP MTU of the netdev (minus IP, UDP, metaroce headers and ICRC) so
 * a 1500-byte Ethernet carries 1404 payload bytes instead of the IB MTU's
 * 1024 -- a third fewer packets for the same data.
 */
/*
 * Payload bytes per packet: the QP's path MTU, which both ends agreed on
 * (each end's active MTU is the largest IB MTU its netdev carries). Only
 * when the path MTU is this device's own active MTU -- the peer's port is
 * no smaller -- do RC segments fill the local IP MTU, which the IB MTU
 * values (256..4096) undershoot (1500 -> 1024; 9000 -> 4096).
 */
static u32 tp_seg_size(struct metaroce_qp *qp)
{
	u32 ov = qp->av.family == AF_INET6 ? METAROCE_HDR_OVERHEAD_V6 :
		 METAROCE_HDR_OVERHEAD;
	u32 seg = qp->mtu ? qp->mtu : 1024;
	u32 nmtu = READ_ONCE(qp->mdev->ndev->mtu);

	if (qp->ibqp.qp_type == IB_QPT_RC && nmtu > ov &&
	    qp->path_mtu >= READ_ONCE(qp->mdev->active_mtu))
		seg = max(seg, nmtu - ov);
	return clamp_t(u32, seg, 256, MRC_MAX_PAYLOAD);
}

void metaroce_tp_qp_modify(struct metaroce_qp *qp, enum ib_qp_state old,
			   int attr_mask)
{
	struct metaroce_tp *tp = &qp->tp;
	struct metaroce_tps *s = tp->s;
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool kick = false;

	if (state == IB_QPS_RESET && in_task()) {
		tp_quiesce(qp);
	} else if (state == IB_QPS_ERR && in_task()) {
		hrtimer_cancel(&tp->rto_timer);
		hrtimer_cancel(&tp->rnr_timer);
		hrtimer_cancel(&tp->ack_timer);
	}
	spin_lock_bh(&tp->lock);
	switch (state) {
	case IB_QPS_RESET:
		tp_reset(qp);
		tp->events = 0;
		break;
	case IB_QPS_RTR:
		if (old != IB_QPS_RTR) {
			tp_paths_init(qp);
			metaroce_tp_resp_start(qp,
					       clamp_t(u32, READ_ONCE(tp_ack_every),
						       1, 64),
					       clamp_t(u32,
						       READ_ONCE(tp_ack_every_hole),
						       1, 64));
			s->req.anchored = false;
		}
		break;
	case IB_QPS_RTS:
		if (old == IB_QPS_RTR && !s->req.anchored) {
			mrc_sb_init(&s->req.sb, qp->sq_psn, 0,
				    MRC_DUPTHRESH_DEFAULT);
			s->req.anchored = true;
		}
		if (old == IB_QPS_RTR) {
			s->req.retries = 0;
			s->req.tlp_done = false;
			s->req.progress_us = tp_now_us();
			s->req.heard_us = s->req.progress_us;
		}
		s->running = true;
		kick = true;
		break;
	case IB_QPS_SQD:
		break;
	case IB_QPS_ERR:
		tp_flush(qp);
		break;
	default:
		break;
	}
	s->mtu = tp_seg_size(qp);
	spin_unlock_bh(&tp->lock);
	if (state == IB_QPS_RESET)
		metaroce_tp_txq_purge(qp);	/* packets of the last life */
	if (kick)
		metaroce_tp_schedule(qp);
}

void metaroce_tp_qp_destroy(struct metaroce_qp *qp)
{
	struct metaroce_tp *tp = &qp->tp;
	struct metaroce_tps *s = tp->s;

	spin_lock_bh(&tp->lock);
	tp->dead = true;
	spin_unlock_bh(&tp->lock);
	hrtimer_cancel(&tp->rto_timer);
	hrtimer_cancel(&tp->rnr_timer);
	hrtimer_cancel(&tp->ack_timer);
	cancel_work_sync(&tp->work);
	hrtimer_cancel(&tp->rto_timer);
	hrtimer_cancel(&tp->rnr_timer);
	hrtimer_cancel(&tp->ack_timer);
	metaroce_tp_txq_purge(qp);
	if (!s)
		return;
	spin_lock_bh(&tp->lock);
	metaroce_tp_resp_reset(qp);
	spin_unlock_bh(&tp->lock);
	kvfree(s->req.swq);
	kvfree(s);
	tp->s = NULL;
}

void metaroce_tp_kick(struct metaroce_qp *qp)
{
	if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		set_bit(TP_EV_FLUSH, &qp->tp.events);
		metaroce_tp_schedule(qp);
		return;
	}
	/* the doorbell's context sends the first batch: no wakeup */
	if (!in_hardirq() && !irqs_disabled())
		tp_run(qp, true);
	else
		metaroce_tp_schedule(qp);
}
