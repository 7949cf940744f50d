// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: the requester's adapter, the send loop.
 *
 * What to send next -- retransmissions, READ/atomic responses, request
 * segments -- and what a timer expiry means is core/requester.c's
 * decision; this file runs it. One work item per QP (or the doorbell /
 * receive context, for a little) takes the timer events, retransmits,
 * sends new packets and completes. Around it: wqe.c (fetch and
 * validation of send WQEs, local operations, the SQ flush), build.c (the
 * packets), timers.c (the hrtimers), hooks.c (the QP hooks and restrack).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#define METAROCE_TP_INTERNAL
#include "obj.h"
#include "trace.h"

static struct workqueue_struct *tp_wq;

int metaroce_tp_init(void)
{
	tp_wq = alloc_workqueue("metaroce_tp", WQ_HIGHPRI, 0);
	return tp_wq ? 0 : -ENOMEM;
}

void metaroce_tp_exit(void)
{
	metaroce_tp_txlim_wait();	/* packets still in a qdisc */
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
		skb = metaroce_tp_build_psn(qp, e, o.psn, o.ppsn, o.path,
					    true);
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
			skb = metaroce_tp_ud_send(qp, tp_swqe(s, o.idx));
			if (!skb)
				continue;
		} else {
			skb = metaroce_tp_build_psn(qp, e, o.psn, o.ppsn,
						    o.path, false);
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

/* ----------------------------------------------------------- work */

/*
 * A responder still in RTR has READ/atomic responses to send but does not
 * know where its PSN space starts (sq_psn comes with RTS): ask the peer,
 * whose ACK carries the PSN it expects from us in cum_psn.
 */
static void tp_probe(struct metaroce_qp *qp, const struct mrc_env *e,
		     struct sk_buff_head *q, u32 psn)
{
	struct metaroce_tps *s = qp->tp.s;
	struct sk_buff *skb;

	skb = metaroce_tp_probe_skb(qp, psn, s->req.paths.n ?
				    s->req.paths.p[0].sport : MRC_SPORT_MIN);
	if (!skb)
		return;
	__skb_queue_tail(q, skb);
	if (!s->req.anchored)
		mrc_req_rto_set(&s->req, e, mrc_req_rto_us(&s->req));
}

/*
 * Drop the QP lock taken by the caller, transmit @q and report a fatal
 * error (which moves the QP to ERR and back into the flush here), or the
 * send queue drained in SQD (every path that completes send WQEs ends
 * here).
 */
void metaroce_tp_unlock(struct metaroce_qp *qp, struct sk_buff_head *q)
{
	struct metaroce_tps *s = qp->tp.s;
	enum ib_event_type ev = IB_EVENT_QP_FATAL;
	bool fail = false, drained = false;
	u32 gen = 0;

	if (s->req.failed && (s->running || mrc_resp_ready(&s->resp))) {
		s->running = false;
		mrc_resp_stop(&s->resp);
		fail = true;
		if (s->fail_event)
			ev = s->fail_event;
	}
	if (s->sqd_wait && !s->req.failed && mrc_req_drained(&s->req)) {
		s->sqd_wait = false;
		drained = true;
		gen = s->sqd_gen;
	}
	spin_unlock_bh(&qp->tp.lock);
	metaroce_tp_xmit_queue(qp, q);
	if (drained)
		metaroce_qp_sq_drained(qp, gen);
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
	int n, room, rounds = 0;

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
		metaroce_tp_flush(qp);
		spin_unlock_bh(&tp->lock);
		hrtimer_cancel(&tp->rto_timer);
		hrtimer_cancel(&tp->rnr_timer);
		metaroce_tp_last_wqe(qp);
		return;
	}
	metaroce_tp_env(&e, &c, qp, &q);
	if (test_and_clear_bit(TP_EV_RNR, &tp->events))
		s->req.rnr_wait = false;
	/*
	 * A timeout during an RNR wait is taken when the wait ends, never
	 * dropped: a response lost at the tail is resent by it even while
	 * the peer keeps NAKing RNR.
	 */
	if (!s->req.rnr_wait && test_and_clear_bit(TP_EV_RTO, &tp->events) &&
	    s->req.anchored) {
		mrc_req_timer(&s->req, &e);
		/* a fatal NAK waiting without progress: bounded */
		mrc_resp_fnak_tick(&s->resp, &e, s->req.cfg.retry_cnt + 1);
	}
	if (s->req.probe_due) {
		s->req.probe_due = false;
		tp_probe(qp, &e, &q, s->req.probe_psn);
	}

	n = 0;
	if (!s->req.anchored) {
		/* responses to send before our PSN space is known */
		if (mrc_resp_ready(&s->resp) && mrc_rspq_len(&s->resp.rspq))
			tp_probe(qp, &e, &q, 0);
	} else if (s->running || mrc_resp_ready(&s->resp)) {
		/* an RNR wait holds requests, not responses (the core's) */
		/* the local queue limit (xmit.c) */
		room = metaroce_tp_tx_room(qp);
		n = tp_retransmit(qp, &e, &q, room);
		n += tp_send_new(qp, &e, &q, room - n);
		/*
		 * after sending: a fresh timer covers what was just sent (in
		 * an RNR wait the RNR timer ends the wait first)
		 */
		if (!s->req.rnr_wait)
			metaroce_tp_arm_rto(qp, false);
		metaroce_tp_rsp_abort(qp, &q);
	}
	/* an ACK a READ response was to carry and did not: delayed ACK */
	mrc_resp_ack_settle(&s->resp, &e);
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

void metaroce_tp_work(struct work_struct *work)
{
	struct metaroce_qp *qp = container_of(work, struct metaroce_qp, tp.work);

	metaroce_tp_rx_drain(qp);
	tp_run(qp, false);
}

/*
 * May receive processing transmit inline? A QP with little in flight (a
 * ping-pong, a READ or two to answer) sends at once: waking a worker
 * would cost more than the send. A busy QP hands the transmission to its
 * high-priority worker: building and sending a window's worth of packets
 * inside the receive softirq pushes softirq processing into ksoftirqd,
 * an ordinary thread that a busy-polling application (perftest, any
 * verbs program polling its CQ) starves, and the ACKs that would open
 * the window wait behind it (design.rst). Caller holds the QP lock.
 */
bool metaroce_tp_tx_inline(struct metaroce_qp *qp)
{
	return mrc_sb_outstanding(&qp->tp.s->req.sb) < TP_TX_INLINE_MAX;
}

/*
 * Transmit from receive processing (softirq, after the QP lock), inline
 * if metaroce_tp_tx_inline() said so under the lock, else in the worker.
 */
void metaroce_tp_run_inline(struct metaroce_qp *qp, bool inline_ok)
{
	if (inline_ok)
		tp_run(qp, true);
	else
		metaroce_tp_schedule(qp);
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
