// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: the hrtimers of a QP (retransmission / tail-loss
 * probe, RNR back-off, delayed ACK) and the timeouts they use. A timer
 * fires in softirq; the RTO and RNR timers only post an event for the
 * QP's work (tx.c), the delayed ACK is sent at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#define METAROCE_TP_INTERNAL
#include "obj.h"

unsigned int metaroce_tp_rto_floor_us = 10000;
module_param_named(rto_floor_us, metaroce_tp_rto_floor_us, uint, 0644);
MODULE_PARM_DESC(rto_floor_us,
		 "minimum retransmission timeout in us (default 10000)");

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

/*
 * The retransmission timer is kept lazily (core/requester.h rto_due): a
 * packet that moves the deadline later, or an ACK that stops it, does not
 * touch the hrtimer, which may then fire early. Only a due timer reaches
 * the work; an early one is armed again here for the deadline (in the
 * expiry, where the clock event device is programmed anyway).
 */
static enum hrtimer_restart tp_rto_fn(struct hrtimer *t)
{
	struct metaroce_qp *qp = container_of(t, struct metaroce_qp,
					      tp.rto_timer);
	struct metaroce_tp_ctx c;
	struct mrc_env e;
	bool due = false;

	spin_lock_bh(&qp->tp.lock);
	if (!qp->tp.dead && qp->tp.s) {
		metaroce_tp_env(&e, &c, qp, NULL);
		due = mrc_req_rto_fired(&qp->tp.s->req, &e);
	}
	spin_unlock_bh(&qp->tp.lock);
	if (due) {
		set_bit(TP_EV_RTO, &qp->tp.events);
		metaroce_tp_schedule(qp);
	}
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

/* Set up the QP's timers (metaroce_tp_qp_init). */
void metaroce_tp_timers_init(struct metaroce_tp *tp)
{
	hrtimer_init(&tp->rto_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	tp->rto_timer.function = tp_rto_fn;
	hrtimer_init(&tp->ack_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	tp->ack_timer.function = tp_ack_fn;
	hrtimer_init(&tp->rnr_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	tp->rnr_timer.function = tp_rnr_fn;
}
