// SPDX-License-Identifier: GPL-2.0
/*
 * The completer engine (completer.h). Plain C: acts only through the
 * environment's callbacks (engine.h).
 */
#include "completer.h"
#include "rtt.h"
#include "seq.h"

static const char * const comp_state_names[MRC_COMP_NSTATES] = {
	[MRC_COMP_ANCHOR] = "anchor",
	[MRC_COMP_APPLY] = "apply",
	[MRC_COMP_UNDO] = "undo",
	[MRC_COMP_PATHS] = "paths",
	[MRC_COMP_PROGRESS] = "progress",
	[MRC_COMP_NAK_RNR] = "nak_rnr",
	[MRC_COMP_NAK_ERR] = "nak_err",
	[MRC_COMP_COMPLETE] = "complete",
	[MRC_COMP_REARM] = "rearm",
	[MRC_COMP_DONE] = "done",
};

const char *mrc_comp_state_name(unsigned int s)
{
	return s < MRC_COMP_NSTATES ? comp_state_names[s] : "?";
}

/* IB RNR timer encoding (IBTA table 45), microseconds. */
static const u32 comp_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

static void comp_count(const struct mrc_env *e, u8 c, u32 n)
{
	if (e->ops->count && n)
		e->ops->count(e->ctx, c, n);
}

static void comp_fail(struct mrc_req *q, const struct mrc_env *e, u8 ev)
{
	q->failed = 1;
	e->ops->qp_error(e->ctx, ev);
}

/* ------------------------------------------------------------ timers */

u32 mrc_req_rto_us(const struct mrc_req *q)
{
	u32 i, rto = 0;

	for (i = 0; i < q->paths.n; i++)
		rto = max_t(u32, rto, mrc_rtt_rto(&q->paths.p[i].rtt));
	return rto ? rto : MRC_RTO_INIT_US;
}

/*
 * Probe timeout: the largest path PTO; when the probe would resend a
 * READ/atomic request, whose acknowledgement waits for the responder's
 * service too, at least the response-time PTO, bounded by the RTO that
 * would fire instead (protocol.rst "Probe timeout of a READ/atomic
 * request").
 */
static u32 comp_pto_us(const struct mrc_req *q)
{
	bool one = mrc_sb_outstanding(&q->sb) == 1;
	const struct mrc_txd *d;
	u32 i, psn, r, t = 0;

	for (i = 0; i < q->paths.n; i++)
		t = max_t(u32, t, mrc_rtt_tlp(&q->paths.p[i].rtt, one));
	if (!t)
		t = MRC_RTO_INIT_US;
	if (mrc_req_tlp_psn(q, &psn))
		return t;
	d = &q->pkt[psn & (MRC_WND - 1)];
	if (d->kind != MRC_TXD_REQ || !mrc_op_is_rd_atomic(d->opcode))
		return t;
	r = min_t(u32, mrc_rtt_pto_resp(&q->rsp_rtt),
		  mrc_req_rto_interval(q));
	return max_t(u32, t, r);
}

/*
 * The probe never waits longer than the RTO interval, the timer that
 * would fire instead: a path without an RTT sample has its backed-off RTO
 * as its PTO, up to RTO_max, far above the interval's cap of a quarter of
 * the IB local ACK timeout (protocol.rst "Timers"; sim seed 60000276).
 */
static u32 comp_tlp_us(const struct mrc_req *q)
{
	return min_t(u32, comp_pto_us(q), mrc_req_rto_interval(q));
}

/*
 * Before an ACK is applied: the watched request's retransmissions so far
 * (Karn), or forget it if it is no longer outstanding (a new life).
 */
static void comp_rd_before(struct mrc_req *q)
{
	u8 st;

	if (!q->rdw)
		return;
	st = mrc_sb_state_of(&q->sb, q->rdw_psn);
	if (st == MRC_SB_INFLIGHT || st == MRC_SB_LOST)
		q->rdw_retx = q->sb.ent[q->rdw_psn & (MRC_WND - 1)].retx;
	else
		q->rdw = 0;
}

/*
 * Time the acknowledgement of the watched READ/atomic request (struct
 * mrc_req.rdw), after an ACK (or an implicit one) was applied: a sample
 * of the response time if the request was sent once. If it was resent
 * once and a response's first transmission acknowledged it (q->rd_resp),
 * the sample waits for a DSACK naming it: the original arrived, and the
 * responder runs a request once, at its first arrival, so the response
 * answered the original. Karn otherwise (an ACK of the duplicate came
 * first: the response may have been lost).
 */
static void comp_rd_time(struct mrc_req *q, const struct mrc_ack_info *a,
			 u64 now)
{
	u8 st;
	u32 t;

	if (q->rdw) {
		st = mrc_sb_state_of(&q->sb, q->rdw_psn);
		if (st == MRC_SB_FREE || st == MRC_SB_SACKED) {
			/* (a time from the future gives no sample) */
			t = (u32)now - q->rdw_sent;
			q->rdw = 0;
			if (t < 0x80000000U && !q->rdw_retx) {
				mrc_rtt_sample(&q->rsp_rtt, t);
			} else if (t < 0x80000000U && q->rdw_retx == 1 &&
				   q->rd_resp) {
				q->rdd = 1;
				q->rdd_psn = q->rdw_psn;
				q->rdd_us = t;
			}
		}
	}
	if (q->rdd && a->dsack && a->dsack_psn == q->rdd_psn &&
	    (u32)(q->sb.nxt - q->rdd_psn) <= MRC_WND) {
		q->rdd = 0;
		mrc_rtt_sample(&q->rsp_rtt, q->rdd_us);
	}
}

/*
 * Interval of the next RTO: the largest path RTO (with backoff), but
 * never longer than a quarter of the QP's IB local ACK timeout (unless
 * the measured RTO itself is): backoff must not stretch the attempts so
 * far apart that a loss burst outlasts retry_cnt of them.
 */
u32 mrc_req_rto_interval(const struct mrc_req *q)
{
	u64 cap = q->cfg.ib_timeout_us / 4;
	u32 i, base = 0, srtt = 0, rto = mrc_req_rto_us(q);

	for (i = 0; i < q->paths.n; i++) {
		base = max_t(u32, base, q->paths.p[i].rtt.rto);
		srtt = max_t(u32, srtt, mrc_rtt_srtt(&q->paths.p[i].rtt));
	}
	/*
	 * Leave the ACK-driven loss rule (which waits up to a reordering
	 * window, <= SRTT, plus a round trip) time to act first.
	 */
	rto = max_t(u32, rto, max_t(u32, 2 * srtt, q->cfg.rto_floor_us));
	if (!cap)
		return rto;
	cap = max_t(u64, cap, max_t(u32, base,
				    max_t(u32, 2 * srtt, q->cfg.rto_floor_us)));
	return (u32)min_t(u64, rto, cap);
}

void mrc_req_rto_set(struct mrc_req *q, const struct mrc_env *e, u32 us)
{
	u64 due = e->ops->now_us(e->ctx) + us;

	q->rto_on = 1;
	q->rto_due = due;
	if (e->ops->trace_rto)
		e->ops->trace_rto(e->ctx, q->tlp_armed, us);
	if (q->rto_hw_on && q->rto_hw <= due)
		return;		/* fires first; mrc_req_rto_fired() goes on */
	e->ops->timer_arm(e->ctx, MRC_TIMER_RTO, us);
	q->rto_hw_on = 1;
	q->rto_hw = due;
}

bool mrc_req_rto_fired(struct mrc_req *q, const struct mrc_env *e)
{
	u64 now;

	q->rto_hw_on = 0;
	if (!q->rto_on)
		return false;
	now = e->ops->now_us(e->ctx);
	if (now < q->rto_due) {
		/* set later since it was armed: kicked down the road */
		e->ops->timer_arm(e->ctx, MRC_TIMER_RTO,
				  (u32)(q->rto_due - now));
		q->rto_hw_on = 1;
		q->rto_hw = q->rto_due;
		return false;
	}
	q->rto_on = 0;
	return true;
}

/*
 * (Re)start a fatal NAK's wait for the responses sent before it
 * (mrc_comp_complete): one RTO, no tail-loss probe.
 */
static void comp_peer_err_wait_start(struct mrc_req *q,
				     const struct mrc_env *e)
{
	q->tlp_armed = 0;
	q->rto_armed_us = mrc_req_rto_interval(q);
	mrc_req_rto_set(q, e, q->rto_armed_us);
}

void mrc_req_arm_rto(struct mrc_req *q, const struct mrc_env *e,
		     bool restart)
{
	u32 us;

	/*
	 * After a fatal NAK only its wait runs: started at the NAK, started
	 * again only by a part of an awaited response (mrc_comp_resp()),
	 * never by anything else that arrives.
	 */
	if (q->peer_err) {
		if (q->tlp_armed || !mrc_req_rto_pending(q))
			comp_peer_err_wait_start(q, e);
		return;
	}
	if (!mrc_sb_outstanding(&q->sb)) {
		q->tlp_armed = 0;
		/*
		 * Every request is acknowledged but READ/atomic responses are
		 * still awaited: keep a timer, so that a responder that went
		 * away (or errored, its NAK lost) fails them
		 * (mrc_comp_resp_timer).
		 */
		if (q->rd_atomic_out && q->anchored) {
			if (restart || !mrc_req_rto_pending(q))
				mrc_req_rto_set(q, e, mrc_req_rto_interval(q));
			return;
		}
		mrc_req_rto_stop(q);
		return;
	}
	if (!restart && mrc_req_rto_pending(q))
		return;
	q->tlp_armed = !q->tlp_done && !q->retries;
	if (q->tlp_armed) {
		us = comp_tlp_us(q);
	} else {
		us = mrc_req_rto_interval(q);
		q->rto_armed_us = us;
	}
	mrc_req_rto_set(q, e, us);
}

/* ------------------------------------------------------- completion */

/*
 * After a fatal NAK (q->peer_err) the responder is in ERR: a WQE that has
 * not completed yet never will. Those before the NAKed WQE complete with
 * WR_FLUSH_ERR (never executed, or not known to be), the NAKed one with
 * the NAK's status -- even if it is still being segmented -- and the QP
 * fails (the environment flushes the rest). As in IB, nothing on the SQ
 * completes successfully after a completion in error: once one WQE
 * flushed, every later one before the NAKed WQE flushes too, complete or
 * not (a flush says nothing about remote memory). A complete WQE can
 * follow an incomplete one only behind a READ/atomic acknowledged but
 * unanswered (protocol.rst "Fatal NAK", "Error completions").
 *
 * The responder sent the responses of the READs/atomics it accepted
 * before the failed request ahead of its NAK, but a NAK on another path
 * can overtake them: such a WQE (its request cumulatively acknowledged,
 * before the NAKed one) is waited for until its response is in, or one
 * RTO passed since the NAK or the last part of such a response that came
 * (mrc_comp_resp()): then (nak_flush, mrc_req_timer()) it flushes.
 */
static bool comp_peer_err_wait(const struct mrc_req *q,
			       const struct mrc_swqe *w)
{
	return !q->nak_flush && q->nak_found &&
	       mrc_seq_lt(q->sq_tail, q->nak_idx) && w->rd_atomic &&
	       w->segmented && !w->resp_done &&
	       mrc_seq_lt(w->last_psn, q->sb.una);
}

static u8 comp_peer_err_status(struct mrc_req *q, struct mrc_swqe *w)
{
	if (!q->nak_found || q->sq_tail != q->nak_idx)
		return MRC_WC_WR_FLUSH_ERR;
	if (!w->segmented) {
		/* the NAKed WQE is still at sq_seg: it is done */
		w->segmented = 1;
		q->sq_seg++;
	}
	return w->status;
}

void mrc_comp_complete(struct mrc_req *q, const struct mrc_env *e)
{
	bool flushing = false;

	while (!q->failed) {
		struct mrc_swqe *w;
		u8 status;

		if (q->sq_tail == q->sq_seg) {
			/* only a partially segmented NAKed WQE goes on */
			if (!q->peer_err || q->sq_seg == q->sq_head ||
			    !q->nak_found || q->nak_idx != q->sq_seg)
				break;
		}
		w = mrc_req_swqe(q, q->sq_tail);
		status = w->status;
		if (status == MRC_WC_SUCCESS &&
		    (!w->segmented || mrc_seq_geq(w->last_psn, q->sb.una) ||
		     (w->rd_atomic && !w->resp_done))) {
			if (!q->peer_err)
				break;
			if (comp_peer_err_wait(q, w)) {
				mrc_req_arm_rto(q, e, false);
				break;
			}
			status = comp_peer_err_status(q, w);
		} else if (q->peer_err && q->nak_found &&
			   q->sq_tail == q->nak_idx) {
			status = comp_peer_err_status(q, w);
		}
		/* no SUCCESS after a flush: the SQ completes in order */
		if (flushing && status == MRC_WC_SUCCESS)
			status = MRC_WC_WR_FLUSH_ERR;
		if ((status != MRC_WC_SUCCESS || w->signaled) &&
		    e->ops->post_scqe(e->ctx, w, status))
			comp_fail(q, e, MRC_QPE_KEEP);	/* CQ overflow */
		if (w->rd_atomic && !w->resp_done && w->segmented)
			q->rd_atomic_out--;
		q->sq_tail++;
		e->ops->sq_consumed(e->ctx, q->sq_tail);
		/* a flushed WQE before the NAKed one does not end the walk */
		if (status == MRC_WC_WR_FLUSH_ERR && q->peer_err &&
		    q->nak_found && mrc_seq_lt(q->sq_tail - 1, q->nak_idx))
			flushing = true;
		else if (status != MRC_WC_SUCCESS)
			comp_fail(q, e, MRC_QPE_KEEP);
	}
	/* a fatal NAK that named no outstanding WQE: flush them all */
	if (q->peer_err && !q->failed &&
	    (!q->nak_found || mrc_seq_gt(q->sq_tail, q->nak_idx)))
		comp_fail(q, e, MRC_QPE_KEEP);
}

/* ------------------------------------------------------------- ACKs */

/* The send WQE that owns outgoing request @psn, or NULL. */
static struct mrc_swqe *comp_psn_wqe(const struct mrc_req *q, u32 psn)
{
	const struct mrc_txd *d = &q->pkt[psn & (MRC_WND - 1)];

	if (mrc_sb_state_of(&q->sb, psn) == MRC_SB_FREE ||
	    d->kind != MRC_TXD_REQ || d->voided)
		return NULL;
	return mrc_req_swqe(q, d->idx);
}

/* The outstanding READ/atomic WQE whose request had PSN @req_psn. */
static struct mrc_swqe *comp_find_rd_idx(const struct mrc_req *q,
					 u32 req_psn, u32 *pidx)
{
	u32 idx;

	for (idx = q->sq_tail; idx != q->sq_seg; idx++) {
		struct mrc_swqe *w = mrc_req_swqe(q, idx);

		if (w->rd_atomic && w->segmented && w->first_psn == req_psn) {
			*pidx = idx;
			return w;
		}
	}
	return NULL;
}

static struct mrc_swqe *comp_find_rd(const struct mrc_req *q, u32 req_psn)
{
	u32 idx;

	return comp_find_rd_idx(q, req_psn, &idx);
}

/*
 * The WQEs from @idx to the one being segmented (inclusive if it started)
 * lose their packets: make them unsent again, or (@flush) end them with
 * their error, else WR_FLUSH_ERR -- a partly sent one is left to the
 * requester, which cuts it (MRC_REQS_CUT).
 */
static void comp_rewind(struct mrc_req *q, u32 idx, bool flush)
{
	u32 i, end = q->sq_seg;

	if (!flush && q->sq_seg != q->sq_head &&
	    mrc_req_swqe(q, q->sq_seg)->seg_off)
		end++;
	for (i = idx; i != end; i++) {
		struct mrc_swqe *w = mrc_req_swqe(q, i);

		/* a local operation ran once; an error WQE keeps its error */
		if (!w->mrc_op && !flush)
			w->rewound = 1;		/* passed again, not run */
		if (!w->mrc_op || (!flush && w->status != MRC_WC_SUCCESS))
			continue;
		if (w->rd_atomic && w->segmented && !w->resp_done)
			q->rd_atomic_out--;
		if (flush) {
			if (w->status == MRC_WC_SUCCESS)
				w->status = MRC_WC_WR_FLUSH_ERR;
			w->resp_done = 1;
			if (!w->segmented)
				w->last_psn = q->sb.nxt - 1;
			w->segmented = 1;
			continue;
		}
		w->rewound = 1;
		w->seg_off = 0;
		w->segmented = 0;
		w->resp_done = 0;
		w->resp_bytes = 0;
		w->first_psn = 0;
		w->last_psn = 0;
	}
	if (flush)
		q->sq_seg = end;
	else
		q->sq_seg = idx;
}

/*
 * Version 3 (protocol.rst "RNR and the request epoch"): every ACK tells
 * the responder's receive epoch. One ahead of ours, the responder refused
 * our request at @a->nak_psn (RNR; the NAK itself, or a later ACK if that
 * was lost) and voided it and every request after it that we sent in our
 * epoch, or of its message: they count as received and did nothing. The
 * next epoch begins: those PSNs are voided here too (resent if lost,
 * completing nothing), and their WQEs, from the refused one on, are sent
 * again under new PSNs once the RNR delay has passed -- up to the QP's
 * rnr_retry times (7: forever); then the refused WQE fails with
 * RNR_RETRY_EXC_ERR and those after it are flushed, as with an error WQE
 * pending (stop_new). Anything else (the same epoch, an older one: a
 * stale ACK) is an ordinary ACK.
 */
static void comp_epoch(struct mrc_req *q, const struct mrc_env *e,
		       const struct mrc_ack_info *a)
{
	struct mrc_txd *d = &q->pkt[a->nak_psn & (MRC_WND - 1)];
	struct mrc_swqe *w;
	bool flush;
	u32 idx, x;

	x = mrc_epoch_dist(a->epoch, q->epoch);
	if (!x || x >= MRC_EPOCHS / 2 || a->implicit ||
	    (a->syndrome != MRC_SYN_ACK && a->syndrome != MRC_SYN_RNR))
		return;
	/*
	 * Older than an ACK packet already applied (the responder's ACKs
	 * carry a cumulative point and an epoch that only grow), which told
	 * at least this epoch. An ACK of 14 epochs ago, duplicated and
	 * delayed, reads as 2 ahead, and its nak_psn may name a live PSN
	 * after the wrap (sim seed 601009). Not compared with una, which
	 * the implicit ACKs of responses move without telling epochs.
	 */
	if (q->ack_cum_ok && mrc_seq_lt(a->cum_psn, q->ack_cum_max))
		return;
	/* it names a request not voided that awaits its ACK */
	if (!mrc_seq_in(a->nak_psn, q->sb.una, q->sb.nxt) ||
	    d->kind != MRC_TXD_REQ || d->voided ||
	    !mrc_seq_in(d->idx, q->sq_tail, q->sq_head) ||
	    mrc_seq_gt(d->idx, q->sq_seg))
		return;
	idx = d->idx;
	q->epoch = a->epoch;
	for (x = q->sb.una; mrc_seq_lt(x, q->sb.nxt); x++) {
		d = &q->pkt[x & (MRC_WND - 1)];
		if (d->kind == MRC_TXD_REQ && !d->voided &&
		    d->idx - idx < q->sq_head - idx)
			d->voided = 1;
	}
	if (q->rdw && q->pkt[q->rdw_psn & (MRC_WND - 1)].voided)
		q->rdw = 0;
	if (q->rdd && q->pkt[q->rdd_psn & (MRC_WND - 1)].voided)
		q->rdd = 0;
	w = mrc_req_swqe(q, idx);
	flush = q->stop_new || q->failed;
	if (!flush && q->cfg.rnr_retry != 7 && !w->rnr_left) {
		if (w->status == MRC_WC_SUCCESS)
			w->status = MRC_WC_RNR_RETRY_EXC_ERR;
		q->stop_new = 1;
		flush = true;
	}
	comp_rewind(q, idx, flush);
	if (flush)
		return;
	if (q->cfg.rnr_retry != 7)
		w->rnr_left--;
	q->rnr_wait = 1;
	e->ops->timer_arm(e->ctx, MRC_TIMER_RNR,
			  comp_rnr_us[a->rnr_timer & 31]);
}

/*
 * A remote error NAK for @a->nak_psn, whose WQE (looked up before the ACK
 * part was applied: a fatal NAK's cumulative point may already cover the
 * PSN) is @w.
 */
static void comp_nak_err(struct mrc_req *q, const struct mrc_ack_info *a,
			 struct mrc_swqe *w)
{
	u32 idx = 0;
	u8 status;

	switch (a->syndrome) {
	case MRC_SYN_INV_REQ:
		status = MRC_WC_REM_INV_REQ_ERR;
		break;
	case MRC_SYN_REM_ACCESS:
		status = MRC_WC_REM_ACCESS_ERR;
		break;
	default:
		status = MRC_WC_REM_OP_ERR;
		break;
	}
	/*
	 * A READ/atomic request is acknowledged when it arrives and NAKed
	 * later if its memory is gone by the time it may run: the NAK names
	 * the acknowledged request's PSN.
	 */
	/*
	 * The responder is in ERR (protocol.rst "Fatal NAK"): whatever is
	 * outstanding ends now (mrc_comp_complete), the NAKed WQE with the
	 * NAK's status. A NAK that names no outstanding WQE (its WQE
	 * already completed) still ends the QP: nothing can complete.
	 */
	q->stop_new = 1;
	/*
	 * The timer of the requests outstanding until now ends with them:
	 * a wait for the responses sent before the NAK starts at the NAK
	 * (mrc_comp_complete), not with what an RTO armed earlier has left.
	 */
	if (!q->peer_err)
		mrc_req_rto_stop(q);
	q->peer_err = 1;
	if (!w)
		w = comp_find_rd_idx(q, a->nak_psn, &idx);
	else
		idx = q->pkt[a->nak_psn & (MRC_WND - 1)].idx;
	if (!w || q->nak_found)
		return;
	q->nak_found = 1;
	q->nak_idx = idx;
	if (w->status == MRC_WC_SUCCESS)
		w->status = status;
}

static enum mrc_comp_state comp_go(const struct mrc_env *e,
				   enum mrc_comp_state from,
				   enum mrc_comp_state to)
{
	if (e->ops->transition)
		e->ops->transition(e->ctx, MRC_ENG_COMP, from, to);
	return to;
}

int mrc_comp_ack(struct mrc_req *q, const struct mrc_env *e,
		 const struct mrc_ack_info *a, bool rsp_waiting)
{
	enum mrc_comp_state st, next = MRC_COMP_DONE;
	struct mrc_swqe *nak_w = NULL;
	struct mrc_sb_ack_res res;
	u64 now = e->ops->now_us(e->ctx);
	u32 bad, i, rtt, ce = 0;
	int ret = 0;
	u16 old;

	memset(&res, 0, sizeof(res));
	st = q->anchored ? MRC_COMP_APPLY : MRC_COMP_ANCHOR;
	while (st != MRC_COMP_DONE) {
		switch (st) {
		case MRC_COMP_ANCHOR:
			/*
			 * Our PSN space starts where the peer expects it:
			 * taken from the ACK to our PROBE, which is only sent
			 * while responses wait. Any other ACK answers nothing
			 * we sent: a stale or forged one must not place our
			 * PSN space.
			 */
			if (a->syndrome == MRC_SYN_ACK && rsp_waiting) {
				mrc_sb_init(&q->sb, a->cum_psn, 0,
					    MRC_DUPTHRESH_DEFAULT);
				q->anchored = 1;
				q->ack_cum_ok = 0;
				q->progress_us = now;
				q->want_tx = 1;
			}
			next = MRC_COMP_DONE;
			break;
		case MRC_COMP_APPLY:
			if (a->syndrome != MRC_SYN_ACK &&
			    a->syndrome != MRC_SYN_RNR)
				nak_w = comp_psn_wqe(q, a->nak_psn);
			/* before the ACK retires what the refusal voided */
			comp_epoch(q, e, a);
			for (i = 0; i < q->paths.n; i++)
				mrc_sb_set_reo_wnd(&q->sb, i,
					mrc_rtt_reo_wnd(&q->paths.p[i].rtt),
					mrc_rtt_srtt(&q->paths.p[i].rtt));
			comp_rd_before(q);
			if (mrc_sb_apply_ack(&q->sb, a, &res)) {
				ret = -1;
				next = MRC_COMP_DONE;
				break;
			}
			if (!a->implicit &&
			    (!q->ack_cum_ok ||
			     mrc_seq_gt(a->cum_psn, q->ack_cum_max))) {
				q->ack_cum_max = a->cum_psn;
				q->ack_cum_ok = 1;
			}
			comp_rd_time(q, a, now);
			next = q->undo_armed &&
			       (res.newly_acked || res.cum_advance) ?
			       MRC_COMP_UNDO : MRC_COMP_PATHS;
			break;
		case MRC_COMP_UNDO:
			/*
			 * The first ACK of new data after a timeout: if it
			 * echoes a transmission from before the timeout,
			 * nothing was lost (the peer or the network stalled):
			 * give back the windows.
			 */
			if ((s32)(a->tsecr - q->undo_ts) < 0) {
				for (i = 0; i < q->paths.n; i++)
					mrc_cc_undo(&q->paths.p[i].cc,
						    &q->cc_saved[i]);
				comp_count(e, MRC_CNT_SPURIOUS_RTO, 1);
			}
			q->undo_armed = 0;
			next = MRC_COMP_PATHS;
			break;
		case MRC_COMP_PATHS:
			rtt = mrc_rtt_from_echo(now, a->tsecr, a->ack_delay);
			if (rtt && res.newly_acked)
				mrc_paths_rtt_sample(&q->paths, a->ts_path, rtt);
			bad = mrc_paths_on_ack(&q->paths, &res);
			for (i = 0; i < q->paths.n; i++) {
				ce += res.ce[i];
				if (!(bad & (1U << i)))
					continue;
				old = q->paths.p[i].sport;
				mrc_paths_replace(&q->paths, i);
				if (e->ops->trace_path)
					e->ops->trace_path(e->ctx, i, old,
							   q->paths.p[i].sport);
				mrc_sb_mark_inflight_lost(&q->sb, i);
				comp_count(e, MRC_CNT_PATH_REPLACED, 1);
			}
			if (e->ops->trace_ack)
				e->ops->trace_ack(e->ctx, a, &res, q->sb.una,
						  q->sb.nxt, ce);
			comp_count(e, MRC_CNT_ECN_ECHOED, ce);
			comp_count(e, MRC_CNT_SPURIOUS_RETX, res.spurious);
			next = res.cum_advance ? MRC_COMP_PROGRESS :
			       a->syndrome == MRC_SYN_ACK ? MRC_COMP_COMPLETE :
			       a->syndrome == MRC_SYN_RNR ? MRC_COMP_NAK_RNR :
			       MRC_COMP_NAK_ERR;
			break;
		case MRC_COMP_PROGRESS:
			q->retries = 0;
			q->tlp_done = 0;
			q->progress_us = now;
			next = a->syndrome == MRC_SYN_ACK ? MRC_COMP_COMPLETE :
			       a->syndrome == MRC_SYN_RNR ? MRC_COMP_NAK_RNR :
			       MRC_COMP_NAK_ERR;
			break;
		case MRC_COMP_NAK_RNR:
			/* comp_epoch() acted on it; a stale one says nothing */
			comp_count(e, MRC_CNT_RNR_NAK_RCVD, 1);
			next = MRC_COMP_COMPLETE;
			break;
		case MRC_COMP_NAK_ERR:
			comp_count(e, MRC_CNT_NAK_RCVD, 1);
			comp_nak_err(q, a, nak_w);
			next = MRC_COMP_COMPLETE;
			break;
		case MRC_COMP_COMPLETE:
			mrc_comp_complete(q, e);
			next = MRC_COMP_REARM;
			break;
		case MRC_COMP_REARM:
			if (res.cum_advance || res.newly_acked)
				mrc_req_arm_rto(q, e, true);
			if (q->sb.nlost || res.newly_acked || q->stop_new)
				q->want_tx = 1;
			next = MRC_COMP_DONE;
			break;
		default:
			next = MRC_COMP_DONE;
			break;
		}
		st = comp_go(e, st, next);
	}
	return ret;
}

/* -------------------------------------------------------- responses */

static void comp_resp_place(struct mrc_req *q, const struct mrc_env *e,
			    const struct mrc_pkt *p, const struct mrc_src *src,
			    struct mrc_swqe *w)
{
	struct mrc_src orig;
	int err = 0;

	if (!w || w->resp_done || w->status != MRC_WC_SUCCESS)
		return;		/* stale: nothing to place */

	if (p->opcode == MRC_OP_ATOMIC_RESP) {
		if (w->mrc_op == MRC_OP_READ_REQ)
			return;
		orig.pkt = NULL;
		orig.buf = &p->aresp.orig;
		orig.off = 0;
		err = e->ops->sq_copy(e->ctx, w, 0, &orig, 8);
		if (!err)
			w->resp_bytes = 8;
	} else {
		if (w->mrc_op != MRC_OP_READ_REQ ||
		    p->rresp.msg_len != w->len ||
		    p->rresp.offset + p->payload_len > w->len)
			return;
		if (p->payload_len)
			err = e->ops->sq_copy(e->ctx, w, p->rresp.offset, src,
					      p->payload_len);
		if (!err)
			w->resp_bytes += p->payload_len;
	}
	if (err) {
		w->status = MRC_WC_LOC_PROT_ERR;
		w->resp_done = 1;
		q->stop_new = 1;
		q->rd_atomic_out--;
		return;
	}
	if (w->resp_bytes >= w->len) {
		w->resp_done = 1;
		q->rd_atomic_out--;
	}
}

int mrc_comp_resp(struct mrc_req *q, const struct mrc_env *e,
		  const struct mrc_pkt *p, const struct mrc_src *src)
{
	u32 req_psn = p->opcode == MRC_OP_READ_RESP ? p->rresp.req_psn :
		      p->aresp.req_psn;
	bool done, was_failed = q->failed;
	struct mrc_ack_info a;
	struct mrc_swqe *w;
	u32 got;

	w = comp_find_rd(q, req_psn);
	done = w && !w->resp_done;
	got = w ? w->resp_bytes : 0;
	comp_resp_place(q, e, p, src, w);
	done = done && w->resp_done;
	/*
	 * The response acknowledges its request and every PSN before it:
	 * the responder ran it only once all of them were placed
	 * (protocol.rst "Implicit acknowledgement"). Only a response that
	 * names one of our READ/atomic WQEs counts.
	 */
	if (w && q->anchored && !q->failed &&
	    mrc_sb_resp_ack(&q->sb, req_psn, e->ops->now_us(e->ctx), &a)) {
		a.epoch = q->epoch;	/* implicit: says nothing of epochs */
		q->rd_resp = !(p->flags & MRC_F_RETX);
		mrc_comp_ack(q, e, &a, false);
		q->rd_resp = 0;
	}
	/*
	 * A fatal NAK waits for this response (mrc_comp_complete): complete
	 * once it is all in; until then each part that comes starts the
	 * wait again, the rest being on its way (a long READ's responses
	 * can take longer than an RTO to come in behind the NAK).
	 */
	if (w && q->peer_err && !q->failed) {
		if (done)
			mrc_comp_complete(q, e);
		else if (w->resp_bytes != got)
			comp_peer_err_wait_start(q, e);
	}
	/*
	 * The last response awaited: nothing will come to coalesce its ACK
	 * with, and a delayed one would only land in the peer's next
	 * exchange (a ping-pong's next request).
	 */
	return (done && !q->rd_atomic_out ? MRC_COMP_ACK_NOW : 0) |
	       (q->failed && !was_failed ? MRC_COMP_FAILED : 0);
}

int mrc_comp_cum(struct mrc_req *q, const struct mrc_env *e, u16 cum_lo)
{
	u32 cum = q->sb.una + (u16)(cum_lo - (u16)q->sb.una);
	u64 now = e->ops->now_us(e->ctx);
	struct mrc_ack_info a;

	if (!q->anchored || q->failed ||
	    cum - q->sb.una > q->sb.nxt - q->sb.una)
		return -1;
	if (cum == q->sb.una)
		return 0;		/* nothing new */
	memset(&a, 0, sizeof(a));
	a.cum_psn = cum;
	a.syndrome = MRC_SYN_ACK;
	a.epoch = q->epoch;	/* CUMACK says nothing of epochs */
	a.implicit = 1;
	a.rwnd = MRC_WND;
	/* no echo: rtt_from_echo() gives no sample of the future */
	a.tsecr = (u32)now + 1;
	a.ts_path = MRC_MAX_PATHS;
	return mrc_comp_ack(q, e, &a, false) ? -1 : 0;
}

/* ------------------------------------------------- timeouts, errors */

void mrc_comp_fail_oldest(struct mrc_req *q, const struct mrc_env *e,
			  u8 status)
{
	struct mrc_swqe *w;

	if (q->sq_tail == q->sq_seg) {
		comp_fail(q, e, MRC_QPE_KEEP);
		return;
	}
	w = mrc_req_swqe(q, q->sq_tail);
	if (w->status == MRC_WC_SUCCESS)
		w->status = status;
	q->stop_new = 1;
}

/*
 * retries counts consecutive timeouts without progress; the oldest WQE
 * fails with RETRY_EXC_ERR only once it exceeds retry_cnt AND nothing at
 * all was heard from the peer for retry_cnt + 1 IB local ACK timeouts (at
 * least MRC_GIVEUP_MIN_US): a live peer behind a lossy or stalling path
 * is retried for as long as it answers anything.
 */
bool mrc_comp_give_up(const struct mrc_req *q, u64 now)
{
	u64 limit, last;

	limit = q->cfg.ib_timeout_us * (q->cfg.retry_cnt + 1);
	if (limit)
		limit = max_t(u64, limit, MRC_GIVEUP_MIN_US);
	last = q->progress_us;
	/* a peer in ERR only re-NAKs: that is not being heard */
	if (!q->peer_err && q->heard_us > last)
		last = q->heard_us;
	return limit && q->retries > q->cfg.retry_cnt && now - last > limit;
}

/*
 * A live responder is sending the responses (or waits for its turn); ask
 * it with a PROBE naming the oldest such request: it answers with an ACK,
 * or, if it NAKed that request and went to ERR, with the NAK again.
 */
void mrc_comp_resp_timer(struct mrc_req *q, const struct mrc_env *e)
{
	struct mrc_swqe *w = NULL;
	u32 idx;

	for (idx = q->sq_tail; idx != q->sq_seg; idx++) {
		w = mrc_req_swqe(q, idx);
		if (w->rd_atomic && w->segmented && !w->resp_done &&
		    w->status == MRC_WC_SUCCESS)
			break;
	}
	if (idx == q->sq_seg)
		return;
	q->probe_psn = w->first_psn;
	q->probe_due = 1;
	q->retries++;
	if (mrc_comp_give_up(q, e->ops->now_us(e->ctx))) {
		comp_count(e, MRC_CNT_RETRY_EXC, 1);
		mrc_comp_fail_oldest(q, e, MRC_WC_RETRY_EXC_ERR);
	}
}
