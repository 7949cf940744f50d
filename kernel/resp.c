// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: the responder's adapter.
 *
 * The responder itself -- placement, the hold of WRITE last packets,
 * write order, the READ/atomic queue and its execution order, RNR and
 * NAKs, receive completion order, flush -- is core/responder.c. This
 * file calls it with the QP's environment (env.c) and receives UD
 * datagrams. Everything runs under the QP lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/if_vlan.h>

#define METAROCE_TP_INTERNAL
#include "obj.h"
#include "trace.h"

/* ------------------------------------------------------- responder */

/*
 * A sequenced packet for @qp (requests and the responses to our own
 * requests). Consumes @skb (or the responder holds it). Caller holds the
 * QP lock.
 */
void metaroce_tp_resp(struct metaroce_qp *qp, struct mrc_pkt *p,
		      struct sk_buff *skb, bool ce, struct sk_buff_head *out)
{
	struct metaroce_tps *s = qp->tp.s;
	struct metaroce_tp_ctx c;
	struct mrc_env e;
	unsigned int ret;

	metaroce_tp_env(&e, &c, qp, out);
	ret = mrc_resp_rx(&s->resp, &e, p, skb, ce);
	if (!(ret & MRC_RESP_HELD))
		kfree_skb(skb);
	if (ret & MRC_RESP_TX)
		s->req.want_tx = true;
}

void metaroce_tp_send_ack(struct metaroce_qp *qp, struct sk_buff_head *out,
			  u8 syndrome, u32 nak_psn)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, out);
	mrc_resp_send_ack(&qp->tp.s->resp, &e, syndrome, nak_psn);
}

/* An ACK a READ response was to carry: leave it to the delayed ACK. */
void metaroce_tp_ack_settle(struct metaroce_qp *qp)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, NULL);
	mrc_resp_ack_settle(&qp->tp.s->resp, &e);
}

void metaroce_tp_ack_timer(struct metaroce_qp *qp, struct sk_buff_head *out)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, out);
	mrc_resp_ack_timer(&qp->tp.s->resp, &e);
}

bool metaroce_tp_renak(struct metaroce_qp *qp, const struct mrc_pkt *p,
		       struct sk_buff_head *out)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, out);
	return mrc_resp_renak(&qp->tp.s->resp, &e, p);
}

void metaroce_tp_rsp_abort(struct metaroce_qp *qp, struct sk_buff_head *out)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, out);
	mrc_resp_rsp_abort(&qp->tp.s->resp, &e);
}

/*
 * QP entered ERR: every receive WQE taken completes, in order (with its
 * own error if its message failed, else flushed), then the posted ones
 * are flushed.
 */
void metaroce_tp_resp_flush(struct metaroce_qp *qp)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, NULL);
	mrc_resp_stop(&qp->tp.s->resp);
	/*
	 * An SRQ is shared: its WQEs stay for the other QPs. User space
	 * moves the RQ's producer: one ring's worth at most.
	 */
	mrc_resp_flush(&qp->tp.s->resp, &e,
		       qp->ibqp.srq ? 0 : qp->rq.num_slots);
}

/*
 * The owner moves the QP to ERR or RESET or destroys it: the pending ACK
 * goes into @out, and the responder stops (core/responder.h).
 */
void metaroce_tp_resp_leave(struct metaroce_qp *qp, struct sk_buff_head *out)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, out);
	mrc_resp_leave(&qp->tp.s->resp, &e);
}

/* RESET, destroy: forget everything (held packets are freed). */
void metaroce_tp_resp_reset(struct metaroce_qp *qp)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, NULL);
	mrc_resp_reset(&qp->tp.s->resp, &e);
}

/* RTR: the incoming PSN space starts at rq_psn. */
void metaroce_tp_resp_start(struct metaroce_qp *qp, u16 ack_every,
			    u16 ack_hole)
{
	struct metaroce_tp_ctx c;
	struct mrc_env e;

	metaroce_tp_env(&e, &c, qp, NULL);
	mrc_resp_start(&qp->tp.s->resp, &e, qp->rq_psn, ack_every, ack_hole);
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
	u16 vlan_id = 0;
	u8 net = 0;
	int err;

	if (p->ud.qkey != qp->qkey) {
		s->drops++;
		return;
	}
	memset(r, 0, sizeof(*r));
	err = metaroce_rq_pop(qp, &r->wqe);
	if (err == -EAGAIN || err == -EIO) {
		if (err == -EIO)	/* corrupt ring: QP to ERR, QP_FATAL */
			s->req.failed = true;
		s->drops++;
		return;
	}
	r->msg_len = p->payload_len + sizeof(grh);
	r->wc_flags = METAROCE_WC_GRH;
	if (p->opcode == MRC_OP_UD_SEND_IMM) {
		r->imm = (__force u32)cpu_to_be32(p->ud.imm);
		r->wc_flags |= METAROCE_WC_WITH_IMM;
	}
	r->solicited = !!(p->flags & MRC_F_SOLICIT);
	r->src_qp = p->ud.src_qpn;
	if (err) {	/* a malformed WQE (num_sge): consumed, in error */
		status = IB_WC_LOC_QP_OP_ERR;
		goto out;
	}
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
	/*
	 * the header type: kernel consumers (the CM on QP1) read it from
	 * network_hdr_type, user ones from sl (metaroce_tp_post_rcqe())
	 */
	r->wc_flags |= net;
	/*
	 * received on a VLAN stacked on the device's netdev (skb->dev is
	 * alive: UD receive is never deferred)
	 */
	if (skb->dev && is_vlan_dev(skb->dev)) {
		r->wc_flags |= METAROCE_WC_VLAN;
		vlan_id = vlan_dev_vlan_id(skb->dev);
	}
	err = metaroce_sgl_copy(qp->mdev, metaroce_rq_pd(qp), r->wqe.sge,
				r->wqe.num_sge, 0, grh, NULL, 0, sizeof(grh),
				METAROCE_TO_MR);
	if (!err && p->payload_len)
		err = metaroce_sgl_copy(qp->mdev, metaroce_rq_pd(qp), r->wqe.sge,
					r->wqe.num_sge, sizeof(grh), NULL, skb,
					p->hdr_len, p->payload_len,
					METAROCE_TO_MR);
	if (err)
		status = IB_WC_LOC_PROT_ERR;
out:
	if (metaroce_tp_post_rcqe(qp, r->wqe.wr_id, status, IB_WC_RECV,
				  r->msg_len, r->imm,
				  r->src_qp ? r->src_qp : qp->dest_qpn,
				  r->wc_flags, vlan_id, r->solicited))
		s->req.failed = true;	/* CQ overflow: QP to ERR */
}
