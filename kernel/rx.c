// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: receive dispatch. Every packet is parsed by the
 * core with its ICRC checked; malformed packets are counted and dropped.
 * The destination QP is looked up by number and the packet handed, under
 * the QP lock, to the completer (ACKs) or the responder (everything
 * sequenced, including the responses to this QP's own requests).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#define METAROCE_TP_INTERNAL
#include "obj.h"

static atomic64_t tp_rx_bad = ATOMIC64_INIT(0);
static atomic64_t tp_rx_noqp = ATOMIC64_INIT(0);

void metaroce_tp_rx(struct metaroce_dev *mdev, struct sk_buff *skb)
{
	struct metaroce_qp *qp;
	struct metaroce_tp *tp;
	struct sk_buff_head q;
	struct mrc_pkt p;
	bool ce, ud, tx;

	if (skb_linearize(skb) ||
	    mrc_pkt_parse(skb->data, skb->len, &p, 0)) {
		atomic64_inc(&tp_rx_bad);
		kfree_skb(skb);
		return;
	}
	qp = metaroce_qp_get(mdev, p.dst_qpn);
	if (!qp) {
		atomic64_inc(&tp_rx_noqp);
		kfree_skb(skb);
		return;
	}
	ud = p.opcode == MRC_OP_UD_SEND || p.opcode == MRC_OP_UD_SEND_IMM;
	if (ud != (qp->ibqp.qp_type == IB_QPT_UD ||
		   qp->ibqp.qp_type == IB_QPT_GSI) ||
	    (!ud && qp->ibqp.qp_type != IB_QPT_RC)) {
		atomic64_inc(&tp_rx_noqp);
		kfree_skb(skb);
		metaroce_qp_put(qp);
		return;
	}
	ce = metaroce_tp_skb_ce(skb);
	tp = &qp->tp;
	__skb_queue_head_init(&q);

	spin_lock_bh(&tp->lock);
	if (tp->dead || !tp->s || !tp->s->rx_ready) {
		spin_unlock_bh(&tp->lock);
		kfree_skb(skb);
		metaroce_qp_put(qp);
		return;
	}
	if (ud) {
		metaroce_tp_ud_recv(qp, &p, skb);
		kfree_skb(skb);
	} else if (p.opcode == MRC_OP_ACK) {
		kfree_skb(skb);
		metaroce_tp_comp_ack(qp, &p, &q);
	} else if (p.opcode == MRC_OP_PROBE) {
		kfree_skb(skb);
		metaroce_tp_send_ack(qp, &q, MRC_SYN_ACK, 0);
	} else {
		metaroce_tp_resp(qp, &p, skb, ce, &q);
	}
	tx = tp->s->want_tx;
	tp->s->want_tx = false;
	metaroce_tp_unlock(qp, &q);
	if (tx)
		metaroce_tp_run_inline(qp);
	metaroce_qp_put(qp);
}
