// SPDX-License-Identifier: GPL-2.0
/*
 * Simulated QP transport endpoint: the core's scoreboard, receive window,
 * paths, congestion control and RTT driven with the rules of kernel/tx.c
 * (spraying, loss marking on ACKs, TLP then RTO, blackholed paths, RNR)
 * and resp.c (place, commit, delayed ACKs, NAKs). See ep.h.
 */
#include "ep.h"

u32 ep_mtu = 256;

#define EP_ACK_DELAY_US		50
#define EP_RTO_FLOOR_US		2000
#define EP_GIVEUP_US		2000000	/* 2 s without progress */
#define EP_RNR_US		300

static void ep_rto_fn(void *arg);
static void ep_ackt_fn(void *arg);
static void ep_rnrt_fn(void *arg);

void ep_init(struct ep *e, u32 node, u32 peer_node, u32 qpn, u32 peer_qpn,
	     u32 isn_tx, u32 isn_rx, u32 npaths, const struct ep_ops *ops,
	     void *up)
{
	struct mrc_path_cfg cfg;
	u32 life = e->life;

	free(e->seen);
	memset(e, 0, sizeof(*e));
	e->life = life;
	e->node = node;
	e->peer_node = peer_node;
	e->qpn = qpn;
	e->peer_qpn = peer_qpn;
	e->ops = ops;
	e->up = up;
	e->isn_tx = isn_tx;
	e->isn_rx = isn_rx;
	e->sbp = &e->sb;
	e->pathsp = &e->paths;
	mrc_sb_init(e->sbp, isn_tx, 0, MRC_DUPTHRESH_DEFAULT);
	mrc_rx_init(&e->rx, isn_rx);
	e->rxp = &e->rx;
	mrc_path_cfg_default(&cfg);
	cfg.npaths = npaths;
	cfg.seed = (u32)rng_next(&W.rng);
	/* window bounds: the defaults, or small ones now and then */
	if (!rng_below(&W.rng, 4)) {
		cfg.max_cwnd = rng_range(&W.rng, 2, 64);
		cfg.init_cwnd = rng_range(&W.rng, 1, cfg.max_cwnd);
	}
	mrc_paths_init(e->pathsp, &cfg);
	timer_init(&e->rto, ep_rto_fn, e);
	timer_init(&e->ackt, ep_ackt_fn, e);
	timer_init(&e->rnrt, ep_rnrt_fn, e);
	e->last_progress = W.now;
	e->checked_cum = isn_rx;
	e->seen_n = 4096;
	e->seen = calloc(e->seen_n, 1);
	if (!e->seen)
		abort();
}

void ep_free(struct ep *e)
{
	timer_cancel(&e->rto);
	timer_cancel(&e->ackt);
	timer_cancel(&e->rnrt);
	free(e->seen);
	e->seen = NULL;
}

bool ep_seen(const struct ep *e, u32 psn)
{
	u32 i = psn - e->isn_rx;

	return i < e->seen_n && e->seen[i];
}

void ep_mark_seen(struct ep *e, u32 psn, bool voided)
{
	u32 i = psn - e->isn_rx;

	SIM_CHECK(i < (1U << 30), "qp %u: commit of psn %u before isn %u",
		  e->qpn, psn, e->isn_rx);
	if (i >= e->seen_n) {
		u32 n = e->seen_n;

		while (n <= i)
			n *= 2;
		e->seen = realloc(e->seen, n);
		if (!e->seen)
			abort();
		memset(e->seen + e->seen_n, 0, n - e->seen_n);
		e->seen_n = n;
	}
	SIM_CHECK(!e->seen[i], "qp %u: psn %u committed twice", e->qpn, psn);
	e->seen[i] = voided ? 2 : 1;
}

/* ------------------------------------------------------------ send */

static u32 ep_rto_us(struct ep *e)
{
	u32 i, rto = 0, srtt = 0;

	for (i = 0; i < e->pathsp->n; i++) {
		rto = max_t(u32, rto, mrc_rtt_rto(&e->pathsp->p[i].rtt));
		srtt = max_t(u32, srtt, mrc_rtt_srtt(&e->pathsp->p[i].rtt));
	}
	return max_t(u32, max_t(u32, rto, 2 * srtt), EP_RTO_FLOOR_US);
}

static bool ep_waiting(struct ep *e)
{
	return e->ops->waiting && e->ops->waiting(e);
}

static void ep_arm_rto(struct ep *e, bool restart)
{
	if (!mrc_sb_outstanding(e->sbp) && !ep_waiting(e)) {
		timer_cancel(&e->rto);
		return;
	}
	if (restart || !e->rto.armed)
		timer_arm(&e->rto, ep_rto_us(e));
}

static void ep_xmit(struct ep *e, struct mrc_pkt *p, const u8 *payload,
		    u8 path)
{
	p->path_id = path;
	p->dst_qpn = e->peer_qpn;
	p->tsval = (u32)W.now;
	fab_send(e->node, e->peer_node, e->pathsp->p[path].sport, p, payload);
}

/*
 * As requester.c's mrc_req_epoch_behind(): the oldest PSN awaiting its
 * ACK is of an epoch 8 or more behind ours (epochs are told apart modulo
 * 16): no new packet until it is acknowledged.
 */
static bool ep_epoch_behind(const struct ep *e)
{
	u32 psn;
	u8 st;

	for (psn = e->sbp->una; mrc_seq_lt(psn, e->sbp->nxt); psn++) {
		st = mrc_sb_state_of(e->sbp, psn);
		if (st == MRC_SB_INFLIGHT || st == MRC_SB_LOST)
			return mrc_epoch_dist(e->epoch,
					      e->tx[psn % MRC_WND].p.epoch) >=
			       MRC_EPOCHS / 2;
	}
	return false;
}

void ep_pump(struct ep *e)
{
	struct ep_txslot *s;
	struct mrc_pkt p;
	u32 psn, ppsn;
	int path, err;

	if (e->ops->pump) {
		e->ops->pump(e);
		return;
	}
	while (!e->errored) {
		if (W.now < e->rnr_until)
			break;
		if (e->sbp->nlost) {
			if (mrc_sb_next_lost(e->sbp, &psn))
				sim_fail("qp %u: nlost %u but no lost psn",
					 e->qpn, e->sbp->nlost);
			path = mrc_paths_pick(e->pathsp, e->sbp->inflight);
			if (path < 0) {
				COV(path_full);
				break;
			}
			err = mrc_sb_on_retx(e->sbp, psn, path, W.now, &ppsn);
			SIM_CHECK(!err, "qp %u: retx of %u: %d", e->qpn, psn,
				  err);
			s = &e->tx[psn % MRC_WND];
			SIM_CHECK(s->p.psn == psn, "qp %u: tx slot of %u holds %u",
				  e->qpn, psn, s->p.psn);
			p = s->p;
			p.ppsn = ppsn;
			p.flags |= MRC_F_RETX;
			COV(sb_retx);
			ep_xmit(e, &p, s->payload, path);
			ep_arm_rto(e, false);
			continue;
		}
		if (!mrc_sb_can_send(e->sbp)) {
			COV(sb_window_full);
			break;
		}
		if (ep_epoch_behind(e))
			break;
		path = mrc_paths_pick(e->pathsp, e->sbp->inflight);
		if (path < 0) {
			COV(path_full);
			break;
		}
		s = &e->tx[e->sbp->nxt % MRC_WND];
		memset(&s->p, 0, sizeof(s->p));
		if (!e->ops->next(e, &s->p, s->payload))
			break;
		err = mrc_sb_send_new(e->sbp, path, W.now, 0, &psn, &ppsn);
		SIM_CHECK(!err, "qp %u: send_new: %d", e->qpn, err);
		s->p.psn = psn;
		s->voided = false;
		if (!mrc_op_is_response(s->p.opcode))
			s->p.epoch = e->epoch;
		p = s->p;
		p.ppsn = ppsn;
		COV(sb_new);
		ep_xmit(e, &p, s->payload, path);
		ep_arm_rto(e, false);
	}
	/* adversary: resend a PSN that may have been acked already */
	if (!e->errored && e->sbp->nxt != e->isn_tx &&
	    rng_ppm(&W.rng, W.f.spurious_ppm)) {
		psn = e->sbp->nxt - 1 - rng_below(&W.rng, 16);
		s = &e->tx[psn % MRC_WND];
		if (s->p.psn == psn && s->p.opcode &&
		    mrc_seq_geq(psn, e->isn_tx)) {
			/* as last sent: its entry keeps path and PPSN */
			const struct mrc_sb_ent *se = &e->sbp->ent[psn % MRC_WND];

			p = s->p;
			p.ppsn = se->ppsn;
			p.flags |= MRC_F_RETX;
			/*
			 * now and then as if from far beyond the window (no
			 * receiver's cum gets there within a run)
			 */
			if (!rng_below(&W.rng, 4))
				p.psn = e->sbp->nxt + (1U << 24) +
					(u32)rng_below(&W.rng, 64);
			COV(f_spurious_retx);
			ep_xmit(e, &p, s->payload, se->path);
		}
	}
}

/* ------------------------------------------------------------- ACKs */

static void ep_send_ack(struct ep *e, u8 syn, u32 nak_psn)
{
	struct mrc_pkt p;
	u8 path;

	memset(&p, 0, sizeof(p));
	mrc_rx_build_ack(&e->rx, &p.ack, W.now);
	if (p.ack.dsack)
		COV(rx_dsack);
	p.opcode = MRC_OP_ACK;
	path = e->rx.ts_path % e->pathsp->n;
	p.ack.syndrome = syn;
	if (syn != MRC_SYN_ACK)
		p.ack.nak_psn = nak_psn;
	if (syn == MRC_SYN_RNR)
		p.ack.rnr_timer = 1;
	timer_cancel(&e->ackt);
	p.path_id = path;
	p.dst_qpn = e->peer_qpn;
	fab_send(e->node, e->peer_node, e->pathsp->p[path].sport, &p, NULL);
}

void ep_flush_ack(struct ep *e)
{
	if (!e->errored && mrc_rx_ack_pending(&e->rx))
		ep_send_ack(e, MRC_SYN_ACK, 0);
}

static void ep_ackt_fn(void *arg)
{
	struct ep *e = arg;

	if (mrc_rx_ack_pending(&e->rx)) {
		COV(rx_ack_delayed);
		ep_send_ack(e, MRC_SYN_ACK, 0);
	}
}

static void ep_rnrt_fn(void *arg)
{
	ep_pump(arg);
}

static void ep_giveup(struct ep *e)
{
	COV(giveup);
	if (W.o->verbose > 1)
		printf("t=%llu qp %u gives up: una %u nxt %u nlost %u rnr %llu "
		       "peer errored %d\n", (unsigned long long)W.now, e->qpn,
		       e->sbp->una - e->isn_tx, e->sbp->nxt - e->isn_tx, e->sbp->nlost,
		       (unsigned long long)e->rnr_until, e->peer->errored);
	SIM_CHECK(e->peer->errored || e->stale_ok,
		  "qp %u: no progress for %u us although its peer is alive "
		  "(una %u nxt %u nlost %u)", e->qpn, EP_GIVEUP_US, e->sbp->una,
		  e->sbp->nxt, e->sbp->nlost);
	ep_error(e, 0, 0);
}

static void ep_rto_fn(void *arg)
{
	struct ep *e = arg;
	u16 lost[MRC_MAX_PATHS] = { 0 };
	u32 psn, n, i;

	if (e->errored)
		return;
	if (W.now - e->last_progress > EP_GIVEUP_US) {
		ep_giveup(e);
		return;
	}
	if (!mrc_sb_outstanding(e->sbp)) {
		/* response wait: nothing to resend, the peer must answer */
		if (ep_waiting(e))
			timer_arm(&e->rto, ep_rto_us(e));
		return;
	}
	if (!e->tlp_done) {
		e->tlp_done = true;
		if (!mrc_sb_tlp_psn(e->sbp, &psn) &&
		    mrc_sb_state_of(e->sbp, psn) == MRC_SB_INFLIGHT) {
			mrc_sb_mark_lost_cause(e->sbp, psn, MRC_LOSS_TLP);
			COV(tlp_fired);
			COV(sb_lost_tlp);
		}
	} else {
		COV(rto_fired);
		n = mrc_sb_mark_stale_lost(e->sbp, W.now, ep_rto_us(e) / 2,
					   lost);
		if (!n)
			n = mrc_sb_mark_inflight_lost(e->sbp, MRC_MAX_PATHS);
		if (n)
			COV(sb_lost_rto);
		for (i = 0; i < e->pathsp->n; i++) {
			if (!lost[i])
				continue;
			COV(path_timeout);
			if (mrc_paths_on_timeout(e->pathsp, i)) {
				mrc_paths_replace(e->pathsp, i);
				COV(path_replaced);
			}
		}
	}
	ep_pump(e);
	timer_arm(&e->rto, ep_rto_us(e));
}

/* Sender invariant: nothing retired that the peer has not committed. */
/*
 * Version 3: a PSN the receiver committed void (an RNR refusal) and that
 * this sender now counts as delivered must be one it voided too -- the
 * two ends' void sets agree (protocol.rst "RNR and the request epoch"),
 * else a WQE completes whose request never ran, or one runs twice.
 */
static void ep_check_void(struct ep *e, u32 psn)
{
	u32 i = psn - e->peer->isn_rx;

	if (i >= e->peer->seen_n || e->peer->seen[i] != 2 ||
	    !e->ops->voided)
		return;
	/*
	 * At or after a fatal NAK's PSN: its WQE fails and every later one
	 * is flushed, nothing there completes. The NAK's SACK may cover a
	 * PSN refused (RNR) after the failed one whose epoch switch this
	 * sender never heard of (seeds 300645, 300841, 301377).
	 */
	if (e->fnak_seen && mrc_seq_geq(psn, e->fnak_psn))
		return;
	SIM_CHECK(e->ops->voided(e, psn),
		  "qp %u: psn %u delivered void (RNR), not voided here (una %u)",
		  e->qpn, psn, e->sbp->una);
}

/* An ACK accepted, before its check: a fatal NAK (ep_check_void()). */
void ep_saw_ack(struct ep *e, const struct mrc_ack_info *a)
{
	if (a->syndrome == MRC_SYN_ACK || a->syndrome == MRC_SYN_RNR)
		return;
	if (!e->fnak_seen || mrc_seq_lt(a->nak_psn, e->fnak_psn))
		e->fnak_psn = a->nak_psn;
	e->fnak_seen = true;
}

void ep_check_retired(struct ep *e, u32 old_una)
{
	u32 psn;

	if (!e->peer || e->peer->life != e->life)
		return;
	for (psn = old_una; mrc_seq_lt(psn, e->sbp->una); psn++) {
		SIM_CHECK(ep_seen(e->peer, psn),
			  "qp %u: psn %u cumulatively acked but never committed "
			  "by the receiver (una %u)", e->qpn, psn, e->sbp->una);
		ep_check_void(e, psn);
	}
	for (psn = e->sbp->una; mrc_seq_lt(psn, e->sbp->nxt); psn++)
		if (mrc_sb_state_of(e->sbp, psn) == MRC_SB_SACKED) {
			SIM_CHECK(ep_seen(e->peer, psn),
				  "qp %u: psn %u SACKed but never committed by "
				  "the receiver (una %u)", e->qpn, psn,
				  e->sbp->una);
			ep_check_void(e, psn);
		}
}

static void ep_on_ack(struct ep *e, const struct mrc_pkt *p)
{
	const struct mrc_ack_info *a = &p->ack;
	struct mrc_sb_ack_res res;
	u32 old_una = e->sbp->una, bad, i, rtt, first, psn;
	bool fatal;
	int err;

	if (e->errored)
		return;
	if (mrc_seq_lt(a->cum_psn, e->sbp->una))
		COV(sb_ack_old);
	/*
	 * Version 3: the responder's epoch is one ahead: it refused (RNR)
	 * our request at nak_psn and voided it and every later one of our
	 * epoch. Before the ACK retires them: the WRs from that one on go
	 * again, in the next epoch, after the RNR delay.
	 */
	i = mrc_epoch_dist(a->epoch, e->epoch);
	if (e->ops->rewind && i && i < MRC_EPOCHS / 2 &&
	    (a->syndrome == MRC_SYN_ACK || a->syndrome == MRC_SYN_RNR) &&
	    mrc_seq_in(a->nak_psn, e->sbp->una, e->sbp->nxt) &&
	    e->tx[a->nak_psn % MRC_WND].p.psn == a->nak_psn &&
	    !e->tx[a->nak_psn % MRC_WND].voided &&
	    e->ops->rewind(e, a->nak_psn, &first)) {
		for (psn = first; mrc_seq_lt(psn, e->sbp->nxt); psn++)
			if (mrc_seq_geq(psn, e->sbp->una))
				e->tx[psn % MRC_WND].voided = true;
		e->epoch = a->epoch;
		COV(req_rnr_retry);
		e->rnr_until = W.now + EP_RNR_US;
		timer_arm(&e->rnrt, EP_RNR_US);
	}
	err = mrc_sb_apply_ack(e->sbp, a, &res);
	if (err) {
		COV(sb_ack_rejected);
		/* an ACK overtaken by 4 windows of progress is refused */
		SIM_CHECK(e->stale_ok ||
			  mrc_seq_diff(e->sbp->una, a->cum_psn) > 4 * MRC_WND, "qp %u: ACK cum %u rejected (%s), una %u "
			  "nxt %u", e->qpn, a->cum_psn, mrc_err_str(err),
			  e->sbp->una, e->sbp->nxt);
		return;
	}
	ep_saw_ack(e, a);
	ep_check_retired(e, old_una);
	if (res.newly_lost)
		COV(sb_lost_ack);
	if (res.spurious)
		COV(sb_spurious);
	if (res.cum_advance)
		COV(sb_cum);
	if (res.newly_acked > res.cum_advance)
		COV(sb_sacked);
	for (i = 0; i < e->pathsp->n; i++)
		if (res.ce[i])
			COV(cc_ce);
	if (a->ts_path < e->pathsp->n) {
		rtt = mrc_rtt_from_echo(W.now, a->tsecr, a->ack_delay);
		if (rtt)
			mrc_paths_rtt_sample(e->pathsp, a->ts_path, rtt);
	}
	for (i = 0; i < e->pathsp->n; i++) {
		struct mrc_rtt *r = &e->pathsp->p[i].rtt;

		mrc_sb_set_reo_wnd(e->sbp, i, mrc_rtt_reo_wnd(r),
				   mrc_rtt_srtt(r));
		if (res.lost[i])
			COV(cc_loss);
	}
	bad = mrc_paths_on_ack(e->pathsp, &res);
	for (i = 0; i < e->pathsp->n; i++) {
		if (!(bad & (1U << i)))
			continue;
		mrc_paths_replace(e->pathsp, i);
		if (mrc_sb_mark_inflight_lost(e->sbp, i))
			COV(sb_lost_path);
		COV(path_replaced);
	}
	if (res.newly_acked) {
		e->last_progress = W.now;
		e->tlp_done = false;
	}
	/*
	 * A fatal NAK: its hook completes what precedes the NAKed WR, not
	 * this cumulative point, which may cover it (protocol.rst "Fatal
	 * NAK": an acknowledged held WRITE LAST that could not be placed).
	 */
	fatal = a->syndrome != MRC_SYN_ACK && a->syndrome != MRC_SYN_RNR &&
		(mrc_seq_in(a->nak_psn, e->sbp->una, e->sbp->nxt) ||
		 mrc_seq_lt(a->nak_psn, e->sbp->una));
	if (res.cum_advance) {
		ep_arm_rto(e, true);
		if (!fatal)
			e->ops->acked(e);
	}
	switch (a->syndrome) {
	case MRC_SYN_ACK:
		break;
	case MRC_SYN_RNR:
		/* acted on above, by its epoch; a stale one says nothing */
		e->last_progress = W.now;	/* the peer is alive */
		break;
	default:
		if (W.o->verbose > 1)
			printf("t=%llu qp %u: got NAK %u psn %u (una %u nxt %u)\n",
			       (unsigned long long)W.now, e->qpn, a->syndrome,
			       a->nak_psn, e->sbp->una, e->sbp->nxt);
		if (fatal)
			e->ops->nak(e, a->syndrome, a->nak_psn);
		return;
	}
	ep_pump(e);
}

/*
 * A READ/atomic response for our request @req_psn arrived: it
 * acknowledges every PSN up to it (protocol.rst "Implicit
 * acknowledgement"), as an ACK would.
 */
void ep_resp_ack(struct ep *e, u32 req_psn)
{
	struct mrc_pkt p;

	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_ACK;
	if (e->errored || !mrc_sb_resp_ack(e->sbp, req_psn, W.now, &p.ack))
		return;
	p.ack.epoch = e->epoch;	/* implicit: says nothing of epochs */
	COV(sb_resp_ack);
	ep_on_ack(e, &p);
}

/* ---------------------------------------------------------- receive */

void ep_on_pkt(struct ep *e, const struct mrc_pkt *p, const u8 *payload,
	       bool ce)
{
	enum mrc_rx_verdict v;
	u8 syn = MRC_SYN_ACK;
	int r = EP_DROP;

	if (p->opcode == MRC_OP_ACK) {
		if (e->ops->on_ack)
			e->ops->on_ack(e, p);
		else
			ep_on_ack(e, p);
		return;
	}
	if (!mrc_op_sequenced(p->opcode))
		return;
	if (e->ops->rx_seq) {
		e->ops->rx_seq(e, p, payload, ce);
		ep_pump(e);
		return;
	}
	if (e->errored) {
		/* an errored responder answers every request with its NAK */
		if (e->err_syn)
			ep_send_ack(e, e->err_syn, e->err_psn);
		return;
	}
	v = mrc_rx_on_packet(&e->rx, p, ce, W.now);
	if (v == MRC_RX_DUP)
		COV(rx_dup);
	else if (v == MRC_RX_OOW)
		COV(rx_oow);
	else if (p->psn != e->rx.cum)
		COV(rx_ooo);
	if (v == MRC_RX_NEW) {
		COV(rx_new);
		r = e->ops->recv(e, p, payload, &syn);
		if (e->errored)
			return;
		if (r == EP_PLACED || r == EP_HELD) {
			e->last_progress = W.now;
			ep_mark_seen(e, p->psn, false);
			if (mrc_rx_commit(&e->rx, p->psn) > 1)
				COV(rx_cum_jump);
			e->ops->committed(e, r);
			if (e->errored)
				return;
		}
	}
	if (syn != MRC_SYN_ACK) {
		if (e->nak_psn != p->psn || e->nak_syn != syn ||
		    (p->flags & MRC_F_RETX)) {
			e->nak_psn = p->psn;
			e->nak_syn = syn;
			ep_send_ack(e, syn, p->psn);
		}
		if (syn == MRC_SYN_REM_ACCESS || syn == MRC_SYN_INV_REQ ||
		    syn == MRC_SYN_REM_OP)
			ep_error(e, syn, p->psn);
	} else if (mrc_rx_ack_due(&e->rx)) {
		COV(rx_ack_due);
		ep_send_ack(e, MRC_SYN_ACK, 0);
	} else if (mrc_rx_ack_pending(&e->rx) && !e->ackt.armed) {
		timer_arm(&e->ackt, EP_ACK_DELAY_US);
	}
	/* responses may have been queued */
	ep_pump(e);
}

void ep_error(struct ep *e, u8 syn, u32 psn)
{
	if (e->errored)
		return;
	e->errored = true;
	e->err_syn = syn;
	e->err_psn = psn;
	timer_cancel(&e->rto);
	timer_cancel(&e->ackt);
	timer_cancel(&e->rnrt);
	e->ops->error(e);
}

/* ------------------------------------------------------- invariants */

void ep_check(struct ep *e)
{
	u32 i, psn;
	int err;

	err = mrc_sb_check(e->sbp);
	SIM_CHECK(!err, "qp %u: scoreboard inconsistent (%d)", e->qpn, err);
	SIM_CHECK(mrc_seq_geq(e->rxp->top, e->rxp->cum) &&
		  e->rxp->top - e->rxp->cum <= MRC_WND,
		  "qp %u: rx window cum %u top %u", e->qpn, e->rxp->cum,
		  e->rxp->top);
	/* cum never passes a PSN that was not committed */
	for (psn = e->checked_cum; mrc_seq_lt(psn, e->rxp->cum); psn++)
		SIM_CHECK(ep_seen(e, psn),
			  "qp %u: rx cum %u passed psn %u, never committed",
			  e->qpn, e->rxp->cum, psn);
	e->checked_cum = e->rxp->cum;
	for (i = 0; i < e->pathsp->n; i++) {
		const struct mrc_cc *c = &e->pathsp->p[i].cc;

		SIM_CHECK(c->cwnd >= c->min_cwnd && c->cwnd <= c->max_cwnd,
			  "qp %u path %u: cwnd %u outside [%u, %u]", e->qpn, i,
			  c->cwnd, c->min_cwnd, c->max_cwnd);
		SIM_CHECK(c->alpha <= MRC_CC_ALPHA_ONE,
			  "qp %u path %u: alpha %u", e->qpn, i, c->alpha);
		SIM_CHECK(e->pathsp->p[i].sport >= MRC_SPORT_MIN,
			  "qp %u path %u: sport %u", e->qpn, i,
			  e->pathsp->p[i].sport);
		if (c->cwnd == c->min_cwnd)
			COV(cc_at_min);
		if (c->cwnd == c->max_cwnd)
			COV(cc_at_max);
	}
}
