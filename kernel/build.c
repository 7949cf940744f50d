// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: packet build. The skb of a packet of the QP's
 * outgoing PSN space from its descriptor (struct mrc_txd: a request
 * segment with its payload from the WQE's SGEs or inline data, a READ
 * response with its payload from the MR, an atomic response), a PROBE,
 * and UD datagrams (unsequenced, to the AH of the WQE). The headers are
 * core/hdr.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#define METAROCE_TP_INTERNAL
#include "obj.h"
#include "trace.h"

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

/* A PROBE (ACKREQ): the peer answers with an ACK. */
struct sk_buff *metaroce_tp_probe_skb(struct metaroce_qp *qp, u32 psn,
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
 * retransmission), with the cumulative ACK of the incoming PSN space
 * (version 2: it may replace the pending ACK, core/responder.h). Returns
 * NULL when it cannot be built (memory gone).
 */
struct sk_buff *metaroce_tp_build_psn(struct metaroce_qp *qp,
				      const struct mrc_env *e, u32 psn,
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
	p.epoch = d->epoch;
	mrc_resp_cum_fill(&s->resp, &p);

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
			} else if (d->flags & MRC_F_UC) {
				p.write.rmsn = w->msn;	/* UC: every MSN */
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
			return metaroce_tp_probe_skb(qp, s->req.sb.nxt,
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
		if (w)
			mrc_req_wqe_failed(&s->req, w, IB_WC_LOC_PROT_ERR);
		return NULL;
	}
	metaroce_tp_build_end(skb);
	mrc_resp_cum_sent(&s->resp, e, &p);
	metaroce_tp_stat_inc(qp->mdev, TP_STAT_TX_DATA);
	trace_metaroce_tx(qp->ibqp.qp_num, p.opcode, psn, ppsn, path,
			  s->req.paths.p[path].sport, d->len, retx);
	tp_cb(skb)->sport = s->req.paths.p[path].sport;
	tp_cb(skb)->ect = 1;
	return skb;
}

/*
 * UD (and GSI) send: one unsequenced packet to the AH of the WQE. The WQE
 * is done once the packet has left, whether or not it arrives (the
 * requester accounted it as done already). One that cannot be built fails
 * before the requester's next step: nothing after it is sent.
 */
struct sk_buff *metaroce_tp_ud_send(struct metaroce_qp *qp,
				    struct mrc_swqe *w)
{
	struct metaroce_tps *s = qp->tp.s;
	struct metaroce_ah_av *av;
	struct sk_buff *skb;
	struct mrc_pkt p;
	void *pl;
	int err = 0;

	if (w->len > s->mtu) {
		mrc_req_wqe_failed(&s->req, w, IB_WC_LOC_LEN_ERR);
		return NULL;
	}
	av = metaroce_ah_av_get(qp->mdev, qp->ibqp.pd, w->ah_num);
	if (!av) {
		mrc_req_wqe_failed(&s->req, w, IB_WC_LOC_QP_OP_ERR);
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
		metaroce_ah_av_put(av);
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
		metaroce_ah_av_put(av);
		mrc_req_wqe_failed(&s->req, w, IB_WC_LOC_PROT_ERR);
		return NULL;
	}
	metaroce_tp_build_end(skb);
	tp_cb(skb)->sport = s->req.paths.n ? s->req.paths.p[p.path_id].sport :
			    MRC_SPORT_MIN;
	tp_cb(skb)->ect = 1;
	tp_cb(skb)->av = av;
	s->tx_pkts++;
	return skb;
}
