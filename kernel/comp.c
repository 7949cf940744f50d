// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: the completer.
 *
 * Applies ACKs (cumulative + SACK + per-path reports) to the scoreboard,
 * feeds RTT samples, congestion and path-failure state, handles NAKs
 * (RNR wait and retry count, remote errors), places READ and atomic
 * responses into the requester's local buffers, and completes send WQEs
 * in posting order (tx.c: metaroce_tp_complete()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#define METAROCE_TP_INTERNAL
#include "obj.h"
#include "trace.h"

/* IB RNR timer encoding (IBTA table 45), microseconds. */
static const u32 tp_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* The send WQE that owns outgoing request @psn, or NULL. */
static struct metaroce_tp_swqe *tp_psn_wqe(struct metaroce_tps *s, u32 psn)
{
	struct metaroce_tp_pkt *d = &s->pkt[psn & (MRC_WND - 1)];

	if (mrc_sb_state_of(&s->sb, psn) == MRC_SB_FREE ||
	    d->kind != TP_PKT_REQ)
		return NULL;
	return tp_swqe(s, d->idx);
}

/* The outstanding READ/atomic WQE whose request had PSN @req_psn. */
static struct metaroce_tp_swqe *tp_find_rd(struct metaroce_tps *s,
					   u32 req_psn)
{
	u32 idx;

	for (idx = s->sq_tail; idx != s->sq_seg; idx++) {
		struct metaroce_tp_swqe *w = tp_swqe(s, idx);

		if (w->rd_atomic && w->segmented && w->first_psn == req_psn)
			return w;
	}
	return NULL;
}

/*
 * A NAK for @a->nak_psn, whose WQE (looked up before the ACK part was
 * applied: a fatal NAK's cumulative point may already cover the PSN) is
 * @w.
 */
static void tp_on_nak(struct metaroce_qp *qp, const struct mrc_ack_info *a,
		      struct metaroce_tp_swqe *w)
{
	struct metaroce_tp *tp = &qp->tp;
	struct metaroce_tps *s = tp->s;
	u8 status;

	metaroce_tp_stat_inc(qp->mdev, a->syndrome == MRC_SYN_RNR ?
			     TP_STAT_RNR_NAKS_RCVD : TP_STAT_NAKS_RCVD);
	switch (a->syndrome) {
	case MRC_SYN_RNR:
		w = tp_psn_wqe(s, a->nak_psn);
		if (mrc_sb_mark_lost(&s->sb, a->nak_psn) || s->rnr_wait)
			return;
		if (w && qp->rnr_retry != 7) {
			if (!w->rnr_left) {
				if (w->status == IB_WC_SUCCESS)
					w->status = IB_WC_RNR_RETRY_EXC_ERR;
				s->stop_new = true;
				return;
			}
			w->rnr_left--;
		}
		s->rnr_wait = true;
		hrtimer_start(&tp->rnr_timer,
			      tp_us_ktime(tp_rnr_us[a->rnr_timer & 31]),
			      HRTIMER_MODE_REL_SOFT);
		return;
	case MRC_SYN_INV_REQ:
		status = IB_WC_REM_INV_REQ_ERR;
		break;
	case MRC_SYN_REM_ACCESS:
		status = IB_WC_REM_ACCESS_ERR;
		break;
	default:
		status = IB_WC_REM_OP_ERR;
		break;
	}
	/*
	 * A READ/atomic request is acknowledged when it arrives and NAKed
	 * later if its memory is gone by the time it may run: the NAK names
	 * the acknowledged request's PSN.
	 */
	if (!w)
		w = tp_find_rd(s, a->nak_psn);
	if (!w)
		return;
	if (w->status == IB_WC_SUCCESS)
		w->status = status;
	s->stop_new = true;
}

/* An ACK for @qp arrived. Caller holds the QP lock. */
void metaroce_tp_comp_ack(struct metaroce_qp *qp, struct mrc_pkt *p,
			  struct sk_buff_head *out)
{
	struct metaroce_tps *s = qp->tp.s;
	struct mrc_ack_info *a = &p->ack;
	struct metaroce_tp_swqe *nak_w = NULL;
	struct mrc_sb_ack_res res;
	u64 now = tp_now_us();
	u32 bad, i, rtt, ce = 0;
	u16 old;

	if (!s->anchored) {
		/*
		 * Our PSN space starts where the peer expects it: taken from
		 * the ACK to our PROBE, which is only sent while responses
		 * wait (tx.c: tp_probe). Any other ACK answers nothing we
		 * sent: a stale or forged one must not place our PSN space.
		 */
		if (a->syndrome == MRC_SYN_ACK &&
		    mrc_rspq_len(&s->resp.rspq)) {
			mrc_sb_init(&s->sb, a->cum_psn, 0,
				    MRC_DUPTHRESH_DEFAULT);
			s->anchored = true;
			s->progress_us = now;
			s->want_tx = true;
		}
		return;
	}
	pr_debug("qp %u ack cum %u syn %u una %u nxt %u\n", qp->ibqp.qp_num,
		 a->cum_psn, a->syndrome, s->sb.una, s->sb.nxt);
	if (a->syndrome != MRC_SYN_ACK && a->syndrome != MRC_SYN_RNR)
		nak_w = tp_psn_wqe(s, a->nak_psn);
	for (i = 0; i < s->paths.n; i++)
		mrc_sb_set_reo_wnd(&s->sb, i,
				   mrc_rtt_reo_wnd(&s->paths.p[i].rtt),
				   mrc_rtt_srtt(&s->paths.p[i].rtt));
	if (mrc_sb_apply_ack(&s->sb, a, &res)) {
		pr_debug("qp %u bad ack\n", qp->ibqp.qp_num);
		s->drops++;
		return;
	}
	if (s->undo_armed && (res.newly_acked || res.cum_advance)) {
		/*
		 * The first ACK of new data after a timeout: if it echoes a
		 * transmission from before the timeout, nothing was lost (the
		 * peer or the network stalled): give back the windows.
		 */
		if ((s32)(a->tsecr - s->undo_ts) < 0) {
			for (i = 0; i < s->paths.n; i++)
				mrc_cc_undo(&s->paths.p[i].cc,
					    &s->cc_saved[i]);
			metaroce_tp_stat_inc(qp->mdev, TP_STAT_SPURIOUS_RTO);
		}
		s->undo_armed = false;
	}
	rtt = mrc_rtt_from_echo(now, a->tsecr, a->ack_delay);
	if (rtt && res.newly_acked)
		mrc_paths_rtt_sample(&s->paths, a->ts_path, rtt);
	bad = mrc_paths_on_ack(&s->paths, &res);
	for (i = 0; i < s->paths.n; i++) {
		ce += res.ce[i];
		if (!(bad & (1U << i)))
			continue;
		old = s->paths.p[i].sport;
		mrc_paths_replace(&s->paths, i);
		trace_metaroce_path_replace(qp->ibqp.qp_num, i, old,
					    s->paths.p[i].sport);
		mrc_sb_mark_inflight_lost(&s->sb, i);
		metaroce_tp_stat_inc(qp->mdev, TP_STAT_PATH_REPLACED);
	}
	trace_metaroce_ack(qp->ibqp.qp_num, a->syndrome, a->cum_psn, s->sb.una,
			   s->sb.nxt, res.newly_acked, res.newly_lost, ce);
	if (ce)
		metaroce_tp_stat_add(qp->mdev, TP_STAT_ECN_ECHOED, ce);
	if (res.spurious)
		metaroce_tp_stat_add(qp->mdev, TP_STAT_SPURIOUS_RETX,
				     res.spurious);
	if (res.cum_advance) {
		s->retries = 0;
		s->tlp_done = false;
		s->progress_us = now;
	}
	if (a->syndrome != MRC_SYN_ACK)
		tp_on_nak(qp, a, nak_w);

	metaroce_tp_complete(qp, out);
	if (res.cum_advance || res.newly_acked)
		metaroce_tp_arm_rto(qp, true);
	if (s->sb.nlost || res.newly_acked || s->stop_new)
		s->want_tx = true;
}

/*
 * A READ_RESP or ATOMIC_RESP (new in the incoming PSN space): place it
 * into the local SGEs of its WQE. Returns 0 to commit it.
 */
int metaroce_tp_comp_resp(struct metaroce_qp *qp, const struct mrc_pkt *p,
			  const struct mrc_src *src)
{
	struct metaroce_tps *s = qp->tp.s;
	struct metaroce_tp_swqe *w;
	u32 req_psn = p->opcode == MRC_OP_READ_RESP ? p->rresp.req_psn :
		      p->aresp.req_psn;
	int err = 0;

	w = tp_find_rd(s, req_psn);
	pr_debug("qp %u resp req_psn %u wqe %d\n", qp->ibqp.qp_num, req_psn,
		 !!w);
	if (!w || w->resp_done || w->status != IB_WC_SUCCESS)
		return 0;	/* stale: nothing to place */

	if (p->opcode == MRC_OP_ATOMIC_RESP) {
		if (w->mrc_op == MRC_OP_READ_REQ)
			return 0;
		err = metaroce_sgl_copy(qp->mdev, qp->ibqp.pd, w->sge, 1, 0,
					(void *)&p->aresp.orig, NULL, 0, 8,
					METAROCE_TO_MR);
		if (!err)
			w->resp_bytes = 8;
	} else {
		if (w->mrc_op != MRC_OP_READ_REQ ||
		    p->rresp.msg_len != w->len ||
		    p->rresp.offset + p->payload_len > w->len)
			return 0;
		if (p->payload_len)
			err = metaroce_sgl_copy(qp->mdev, qp->ibqp.pd, w->sge,
						w->num_sge, p->rresp.offset,
						NULL, src->pkt, src->off,
						p->payload_len,
						METAROCE_TO_MR);
		if (!err)
			w->resp_bytes += p->payload_len;
	}
	if (err) {
		w->status = IB_WC_LOC_PROT_ERR;
		w->resp_done = 1;
		s->stop_new = true;
		s->rd_atomic_out--;
		return 0;
	}
	if (w->resp_bytes >= w->len) {
		w->resp_done = 1;
		s->rd_atomic_out--;
	}
	return 0;
}
