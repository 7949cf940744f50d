// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: the QP hooks (transport.h) -- init, modify (RTR
 * starts the responder and the paths, RTS anchors the PSN space and
 * starts the requester, ERR flushes, RESET quiesces and clears), destroy
 * -- and the transport state shown by `rdma res show qp -dd`.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/log2.h>

#include <rdma/restrack.h>

#define METAROCE_TP_INTERNAL
#include "obj.h"

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

void metaroce_tp_flush(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;

	s->running = false;
	s->req.rnr_wait = false;
	mrc_req_rto_forget(&s->req);	/* its hrtimer is cancelled after */
	metaroce_tp_flush_sq(qp);
	metaroce_tp_resp_flush(qp);	/* stops the responder */
	mrc_sb_init(&s->req.sb, s->req.sb.nxt, 0, MRC_DUPTHRESH_DEFAULT);
	/* no WQE of the SRQ is taken any more: IBA 11.6.3 */
	if (qp->ibqp.srq && !s->last_wqe_done) {
		s->last_wqe_done = true;
		s->last_wqe_due = true;
	}
}

/*
 * After metaroce_tp_flush(), with the transport lock dropped: raise the
 * last WQE reached event it owes, once. Takes the lock.
 */
void metaroce_tp_last_wqe(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;
	bool due;

	spin_lock_bh(&qp->tp.lock);
	due = s->last_wqe_due;
	s->last_wqe_due = false;
	spin_unlock_bh(&qp->tp.lock);
	if (due)
		metaroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
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
	skb_queue_head_init(&tp->rxq);
	INIT_WORK(&tp->work, metaroce_tp_work);
	metaroce_tp_timers_init(tp);
	tp->events = 0;
	tp->dead = false;

	s = kvzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	if (qp->sq.q) {
		s->req.nswq = min_t(u32, qp->sq.num_slots, TP_MAX_SWQ);
		s->req.nswq = rounddown_pow_of_two(max_t(u32, s->req.nswq, 1));
		s->req.swqe_size = metaroce_tp_swqe_size(qp);
		s->req.swq = kvcalloc(s->req.nswq, s->req.swqe_size, GFP_KERNEL);
		if (!s->req.swq) {
			kvfree(s);
			return -ENOMEM;
		}
	}
	if (metaroce_tp_txlim_init(qp)) {
		kvfree(s->req.swq);
		kvfree(s);
		return -ENOMEM;
	}
	tp->s = s;
	return 0;
}

static void tp_reset(struct metaroce_qp *qp)
{
	struct metaroce_tps *s = qp->tp.s;

	s->running = false;
	s->sqd = false;
	s->sqd_wait = false;
	s->req.anchored = false;
	s->req.failed = false;
	s->fail_event = 0;
	s->last_wqe_due = false;
	s->last_wqe_done = false;
	s->req.stop_new = false;
	s->req.peer_err = false;
	s->req.nak_found = false;
	s->req.nak_flush = false;
	s->req.ack_cum_ok = false;
	s->req.rnr_wait = false;
	s->req.undo_armed = false;
	s->req.probe_due = false;
	mrc_req_rto_forget(&s->req);	/* tp_quiesce cancelled the hrtimer */
	/* the next life may have another peer: time its responses anew */
	memset(&s->req.rsp_rtt, 0, sizeof(s->req.rsp_rtt));
	s->req.rdw = 0;
	s->req.rdd = 0;
	metaroce_tp_resp_reset(qp);	/* stops the responder */
	s->req.sq_tail = 0;
	s->req.sq_seg = 0;
	s->req.sq_head = 0;
	s->local_end = 0;
	s->req.smsn = 0;
	s->req.epoch = 0;
	s->req.rd_atomic_out = 0;
	s->mtu = 0;		/* the next life's is chosen at its RTR */
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
 * Payload bytes per packet, chosen when the QP enters RTR and fixed until
 * RESET (protocol.rst "Segment size"): every non-LAST packet of every
 * message of one life carries it, retransmissions included, and the
 * peer's responder refuses a packet that does not. UD: the QP's path MTU
 * (it bounds the datagram). RC: the path MTU, which both ends agreed on
 * (each end's active MTU is the largest IB MTU its netdev carries); only
 * when the path MTU is this device's own active MTU -- the peer's port is
 * no smaller -- do RC segments fill the local IP MTU of that moment,
 * which the IB MTU values (256..4096) undershoot (1500 -> 1404, not
 * 1024; 9000 -> 4096). A later change of the netdev's MTU does not
 * change it: a smaller MTU makes its packets too big (counted at
 * transmission, tx_too_big), a larger one is used by the next life.
 */
static u32 tp_hdr_overhead(const struct metaroce_av *av)
{
	return av->family == AF_INET6 ? METAROCE_HDR_OVERHEAD_V6 :
	       METAROCE_HDR_OVERHEAD;
}

/* qp->av in place: modify_qp is its only writer and holds modify_mutex. */
static u32 tp_seg_size(struct metaroce_qp *qp)
{
	lockdep_assert_held(&qp->modify_mutex);
	return mrc_seg_size(qp->mtu, qp->ibqp.qp_type == IB_QPT_RC &&
			    qp->path_mtu >= READ_ONCE(qp->mdev->active_mtu),
			    READ_ONCE(qp->mdev->ndev->mtu),
			    tp_hdr_overhead(&qp->av));
}

/*
 * May @qp take the address vector @av now? Once the QP is past RTR its
 * segment size is fixed (tp_seg_size), but ib_core allows a new AV at
 * SQD -> SQD (RC, UC), which may switch IPv4 <-> IPv6: IPv6 headers are
 * 20 bytes longer, so an RC QP whose segments fill the IP MTU over IPv4
 * would send every full segment 20 bytes too big for the netdev (dropped
 * on the way out, the WRs ending RETRY_EXC_ERR). Refused instead
 * (-EINVAL): the QP keeps its state and address, nothing is lost. The
 * same when the netdev's MTU dropped below the segment size since RTR.
 * protocol.rst "Segment size". Called under modify_mutex, which orders
 * it after the RTR that set s->mtu.
 */
int metaroce_tp_av_check(struct metaroce_qp *qp,
			 const struct metaroce_av *av)
{
	u32 seg = READ_ONCE(qp->tp.s->mtu);

	if (!seg || mrc_seg_fits(seg, tp_hdr_overhead(av),
				 READ_ONCE(qp->mdev->ndev->mtu)))
		return 0;
	return -EINVAL;
}

void metaroce_tp_qp_modify(struct metaroce_qp *qp, enum ib_qp_state old,
			   int attr_mask)
{
	struct metaroce_tp *tp = &qp->tp;
	struct metaroce_tps *s = tp->s;
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct sk_buff_head q;
	bool kick = false;

	if (state == IB_QPS_ERR || state == IB_QPS_RESET) {
		/*
		 * Before the timers stop: the delayed ACK of what the
		 * application already received (core/responder.h).
		 */
		__skb_queue_head_init(&q);
		spin_lock_bh(&tp->lock);
		metaroce_tp_resp_leave(qp, &q);
		spin_unlock_bh(&tp->lock);
		metaroce_tp_xmit_queue(qp, &q);
	}
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
			s->mtu = tp_seg_size(qp);
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
			s->req.ack_cum_ok = false;
		}
		if (old == IB_QPS_RTR) {
			s->req.retries = 0;
			s->req.tlp_done = false;
			s->req.progress_us = tp_now_us();
			s->req.heard_us = s->req.progress_us;
		}
		s->running = true;
		s->sqd = false;		/* SQD -> RTS: the queued WQEs go */
		s->sqd_wait = false;
		kick = true;
		break;
	case IB_QPS_SQD:
		/*
		 * RTS -> SQD: the message being sent ends, no new one starts;
		 * the run the kick makes reports the drained state if
		 * nothing is outstanding (metaroce_tp_unlock).
		 */
		if (old != IB_QPS_SQD) {
			s->sqd = true;
			s->sqd_wait = true;
			s->sqd_gen = qp->sqd_gen;
			kick = true;
		}
		break;
	case IB_QPS_ERR:
		metaroce_tp_flush(qp);
		break;
	default:
		break;
	}
	spin_unlock_bh(&tp->lock);
	if (state == IB_QPS_ERR)
		metaroce_tp_last_wqe(qp);
	if (state == IB_QPS_RESET)
		metaroce_tp_txq_purge(qp);	/* packets of the last life */
	if (kick)
		metaroce_tp_schedule(qp);
}

void metaroce_tp_qp_destroy(struct metaroce_qp *qp)
{
	struct metaroce_tp *tp = &qp->tp;
	struct metaroce_tps *s = tp->s;
	struct sk_buff_head q;

	__skb_queue_head_init(&q);
	spin_lock_bh(&tp->lock);
	if (s && !tp->dead)
		metaroce_tp_resp_leave(qp, &q);	/* the pending ACK */
	tp->dead = true;
	spin_unlock_bh(&tp->lock);
	metaroce_tp_txlim_detach(qp);	/* before the work is cancelled */
	metaroce_tp_xmit_queue(qp, &q);
	hrtimer_cancel(&tp->rto_timer);
	hrtimer_cancel(&tp->rnr_timer);
	hrtimer_cancel(&tp->ack_timer);
	cancel_work_sync(&tp->work);
	hrtimer_cancel(&tp->rto_timer);
	hrtimer_cancel(&tp->rnr_timer);
	hrtimer_cancel(&tp->ack_timer);
	metaroce_tp_txq_purge(qp);
	metaroce_tp_txlim_put(qp);
	if (!s)
		return;
	spin_lock_bh(&tp->lock);
	metaroce_tp_resp_reset(qp);
	spin_unlock_bh(&tp->lock);
	kvfree(s->req.swq);
	kvfree(s);
	tp->s = NULL;
}
