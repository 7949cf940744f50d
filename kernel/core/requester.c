// SPDX-License-Identifier: GPL-2.0
/*
 * The requester engine (requester.h): what to send next -- retransmits,
 * READ/atomic responses, request segments -- and what a timer expiry
 * means. The environment builds and sends the packets the descriptors
 * (q->pkt[]) describe. Plain C: acts only through engine.h's callbacks.
 *
 * The packets of one request message always get consecutive PSNs:
 * responses are interleaved between messages only (the responder's
 * WRITE hold relies on it).
 */
#include "requester.h"
#include "responder.h"
#include "completer.h"
#include "rtt.h"
#include "seq.h"

static const char * const req_state_names[MRC_REQS_NSTATES] = {
	[MRC_REQS_PICK] = "pick",
	[MRC_REQS_RESPOND] = "respond",
	[MRC_REQS_FETCH] = "fetch",
	[MRC_REQS_ERR_WQE] = "err_wqe",
	[MRC_REQS_LOCAL] = "local",
	[MRC_REQS_UD] = "ud",
	[MRC_REQS_SEGMENT] = "segment",
	[MRC_REQS_UC] = "uc",
	[MRC_REQS_BLOCKED] = "blocked",
	[MRC_REQS_CUT] = "cut",
	[MRC_REQS_DONE] = "done",
};

const char *mrc_req_state_name(unsigned int s)
{
	return s < MRC_REQS_NSTATES ? req_state_names[s] : "?";
}

u32 mrc_seg_size(u32 path_mtu, bool fill, u32 ndev_mtu, u32 hdr)
{
	u32 seg = path_mtu ? path_mtu : 1024;

	if (fill && ndev_mtu > hdr && ndev_mtu - hdr > seg)
		seg = ndev_mtu - hdr;
	if (seg < 256)
		seg = 256;
	return seg < MRC_MAX_PAYLOAD ? seg : MRC_MAX_PAYLOAD;
}

bool mrc_seg_fits(u32 seg, u32 hdr, u32 ndev_mtu)
{
	return hdr <= ndev_mtu && seg <= ndev_mtu - hdr;
}

static void req_count(const struct mrc_env *e, u8 c, u32 n)
{
	if (e->ops->count && n)
		e->ops->count(e->ctx, c, n);
}

/* ----------------------------------------------------- retransmission */

/*
 * Is outstanding @psn a request packet of a WQE that failed (RNR retries
 * exceeded, a packet that could not be built, a fatal NAK, cut)? Such a
 * WQE completes with its error without an ACK: nothing of it is resent.
 */
static bool req_psn_failed(const struct mrc_req *q, u32 psn)
{
	const struct mrc_txd *d = &q->pkt[psn & (MRC_WND - 1)];

	/* a voided one is resent until acknowledged, whatever its WQE did */
	return d->kind == MRC_TXD_REQ && !d->voided &&
	       d->idx - q->sq_tail < q->sq_head - q->sq_tail &&
	       mrc_req_swqe(q, d->idx)->status != MRC_WC_SUCCESS;
}

/* Does outstanding @psn still await an ACK (not SACKed, not failed)? */
static bool req_psn_awaits(const struct mrc_req *q, u32 psn)
{
	u8 st = mrc_sb_state_of(&q->sb, psn);

	return (st == MRC_SB_INFLIGHT || st == MRC_SB_LOST) &&
	       !req_psn_failed(q, psn);
}

/* Is every outstanding PSN not SACKed one of a failed WQE? */
static bool req_only_failed_left(const struct mrc_req *q)
{
	u32 psn;

	for (psn = q->sb.una; mrc_seq_lt(psn, q->sb.nxt); psn++)
		if (req_psn_awaits(q, psn))
			return false;
	return true;
}

/*
 * Is lost @psn not to be resent now: a failed WQE's, or a request packet
 * during an RNR wait (which holds requests, not the responses owed to
 * the peer)?
 */
static bool req_psn_held(const struct mrc_req *q, u32 psn)
{
	return req_psn_failed(q, psn) ||
	       (q->rnr_wait && q->pkt[psn & (MRC_WND - 1)].kind == MRC_TXD_REQ);
}

int mrc_req_tlp_psn(const struct mrc_req *q, u32 *psn)
{
	u32 p;

	for (p = q->sb.nxt; mrc_seq_gt(p, q->sb.una); p--) {
		if (req_psn_awaits(q, p - 1)) {
			*psn = p - 1;
			return 0;
		}
	}
	return -1;
}

int mrc_req_retx(struct mrc_req *q, const struct mrc_env *e,
		 struct mrc_req_out *o)
{
	u32 psn, ppsn;
	int path;

	if (!q->sb.nlost)
		return -1;
	for (psn = q->sb.una; ; psn++) {
		if (!mrc_seq_lt(psn, q->sb.nxt))
			return -1;
		if (mrc_sb_state_of(&q->sb, psn) == MRC_SB_LOST &&
		    !req_psn_held(q, psn))
			break;
	}
	o->cause = mrc_sb_cause(&q->sb, psn);
	path = mrc_paths_pick(&q->paths, q->sb.inflight);
	if (path < 0)
		return -1;
	if (mrc_sb_on_retx(&q->sb, psn, path, e->ops->now_us(e->ctx), &ppsn))
		return -1;
	o->psn = psn;
	o->ppsn = ppsn;
	o->path = (u8)path;
	o->resp = 0;
	return 0;
}

/* ------------------------------------------------------ new packets */

/* Assign the next new PSN (0) or report that no window is open. */
static int req_new_psn(struct mrc_req *q, const struct mrc_env *e,
		       struct mrc_req_out *o)
{
	int p;

	if (!mrc_sb_can_send(&q->sb))
		return -1;
	p = mrc_paths_pick(&q->paths, q->sb.inflight);
	if (p < 0)
		return -1;
	/*
	 * The give-up bound (mrc_comp_give_up) counts the silence since the
	 * last progress; after idle time the first packet sent starts it,
	 * else a QP idle for minutes gives up its first request after
	 * retry_cnt + 1 RTOs of a few ms, not after its timeout.
	 */
	if (!mrc_sb_outstanding(&q->sb))
		q->progress_us = e->ops->now_us(e->ctx);
	if (mrc_sb_send_new(&q->sb, p, e->ops->now_us(e->ctx), 0, &o->psn,
			    &o->ppsn))
		return -1;
	o->path = (u8)p;
	return 0;
}

static struct mrc_txd *req_desc(struct mrc_req *q, u32 psn)
{
	struct mrc_txd *d = &q->pkt[psn & (MRC_WND - 1)];

	memset(d, 0, sizeof(*d));
	return d;
}

/* Describe the next packet of the oldest queued READ/atomic response. */
static int req_next_resp(struct mrc_req *q, struct mrc_resp *r,
			 const struct mrc_env *e, struct mrc_req_out *o)
{
	struct mrc_rsp *h = mrc_rspq_head(&r->rspq);
	struct mrc_txd *d;
	u32 plen;

	if (req_new_psn(q, e, o))
		return MRC_REQ_STOP;
	mrc_resp_fnak_progress(r);
	o->resp = 1;
	/* its first packet acknowledges the request: no ACK of its own */
	if (h->kind == MRC_RSP_ATOMIC || !h->off)
		mrc_resp_rsp_acks(r, e, h->req_psn);
	d = req_desc(q, o->psn);
	d->kind = h->kind;
	d->req_psn = h->req_psn;
	d->va = h->kind == MRC_RSP_ATOMIC ? h->orig : h->va;
	if (h->kind == MRC_RSP_ATOMIC) {
		/*
		 * No ACKREQ on responses: the requester acknowledges them
		 * with the delayed ACK, or its next request carries it
		 * (protocol.rst "ACK policy").
		 */
		d->opcode = MRC_OP_ATOMIC_RESP;
		d->flags = MRC_F_FIRST | MRC_F_LAST;
		mrc_rspq_pop(&r->rspq);
	} else {
		plen = min_t(u32, h->len - h->off, q->cfg.mtu);
		d->opcode = MRC_OP_READ_RESP;
		d->rkey = h->rkey;
		d->offset = h->off;
		d->msg_len = h->len;
		d->len = (u16)plen;
		if (!h->off)
			d->flags |= MRC_F_FIRST;
		h->off += plen;
		if (h->off == h->len) {
			d->flags |= MRC_F_LAST;
			mrc_rspq_pop(&r->rspq);
		}
	}
	return MRC_REQ_PKT;
}

/* May the WQE at sq_seg start now (fence, max_rd_atomic)? */
static bool req_may_start(const struct mrc_req *q, const struct mrc_swqe *w)
{
	if (w->seg_off || w->status != MRC_WC_SUCCESS)
		return true;
	if ((w->send_flags & MRC_SEND_FENCE) && q->rd_atomic_out)
		return false;
	if (w->rd_atomic &&
	    q->rd_atomic_out >= max_t(u32, q->cfg.max_rd_atomic, 1))
		return false;
	return true;
}

/* Describe the next packet of the WQE at sq_seg (a PSN is assigned). */
static void req_segment(struct mrc_req *q, struct mrc_swqe *w,
			const struct mrc_req_out *o)
{
	struct mrc_txd *d = req_desc(q, o->psn);
	u32 plen = 0;

	d->kind = MRC_TXD_REQ;
	d->opcode = w->mrc_op;
	d->epoch = q->epoch;
	d->idx = q->sq_seg;
	d->offset = w->seg_off;
	d->msg_len = w->len;
	if (mrc_op_has_payload(w->mrc_op))
		plen = min_t(u32, w->len - w->seg_off, q->cfg.mtu);
	d->len = (u16)plen;
	if (!w->seg_off) {
		d->flags |= MRC_F_FIRST;
		w->first_psn = o->psn;
	}
	w->seg_off += plen;
	if (!mrc_op_has_payload(w->mrc_op) || w->seg_off == w->len) {
		/*
		 * No ACKREQ (version 2): the responder delays its ACK, so
		 * that its application's reply carries it (protocol.rst
		 * "ACK policy").
		 */
		d->flags |= MRC_F_LAST;
		if ((w->send_flags & MRC_SEND_SOLICITED) &&
		    (w->mrc_op == MRC_OP_SEND || w->mrc_op == MRC_OP_SEND_IMM ||
		     w->mrc_op == MRC_OP_SEND_INV ||
		     w->mrc_op == MRC_OP_WRITE_IMM))
			d->flags |= MRC_F_SOLICIT;
		w->last_psn = o->psn;
		w->segmented = 1;
		w->rewound = 0;
		if (w->rd_atomic) {
			q->rd_atomic_out++;
			/* time its acknowledgement (mrc_comp_ack) */
			q->rdw = 1;
			q->rdw_psn = o->psn;
			q->rdw_sent = q->sb.ent[o->psn & (MRC_WND - 1)].sent_us;
		}
		q->sq_seg++;
	}
}

/*
 * UC: the next packet of the WQE at sq_seg, with the next PSN but nothing
 * outstanding (una follows nxt: no ACK will come), on the next path round
 * robin. Once its last packet is described the WQE is complete (last_psn
 * is before una). The MSN (w->msn) numbers every UC message.
 */
static void req_uc_segment(struct mrc_req *q, struct mrc_swqe *w,
			   struct mrc_req_out *o)
{
	struct mrc_txd *d;

	o->psn = q->sb.nxt++;
	q->sb.una = q->sb.nxt;
	o->ppsn = 0;
	o->path = (u8)(q->paths.n ? q->paths.rr++ % q->paths.n : 0);
	o->resp = 0;
	req_segment(q, w, o);
	d = &q->pkt[o->psn & (MRC_WND - 1)];
	d->flags |= MRC_F_UC;
}

/* The WQE at sq_seg is done without a packet of its own. */
static void req_wqe_done(struct mrc_req *q, struct mrc_swqe *w)
{
	/* completes once everything before it is acknowledged */
	w->last_psn = q->sb.nxt - 1;
	w->segmented = 1;
	q->sq_seg++;
}

static enum mrc_req_state req_go(const struct mrc_env *e,
				 enum mrc_req_state from,
				 enum mrc_req_state to)
{
	if (e->ops->transition)
		e->ops->transition(e->ctx, MRC_ENG_REQ, from, to);
	return to;
}

int mrc_req_next(struct mrc_req *q, struct mrc_resp *r,
		 const struct mrc_env *e, struct mrc_req_out *o)
{
	enum mrc_req_state st = MRC_REQS_PICK, next = MRC_REQS_DONE;
	struct mrc_swqe *w = NULL;
	int ret = MRC_REQ_STOP;
	bool mid;

	while (st != MRC_REQS_DONE) {
		switch (st) {
		case MRC_REQS_PICK:
			/*
			 * READ/atomic responses are the responder's duty: they
			 * go on while an error WQE is pending (stop_new), else
			 * two QPs each with one behind a READ to the other
			 * wait for each other, and during an RNR wait, which
			 * holds new requests only (protocol.rst "READ and
			 * atomics"). Never inside a request message: one
			 * partly sent under stop_new is cut first, one
			 * partly sent when an RNR wait begins is finished
			 * (else the responses wait out every RNR delay).
			 */
			mid = q->sq_seg != q->sq_head &&
			      mrc_req_swqe(q, q->sq_seg)->seg_off;
			if (mid && q->stop_new && !q->failed)
				next = MRC_REQS_CUT;
			else if (!mid && !q->failed && mrc_resp_rsp_ready(r))
				next = MRC_REQS_RESPOND;
			else if (q->stop_new || !q->cfg.running ||
				 (q->rnr_wait && !mid))
				next = MRC_REQS_DONE;
			else if (q->cfg.sqd && !mid &&
				 (q->sq_seg == q->sq_head ||
				  !mrc_req_swqe(q, q->sq_seg)->rewound))
				next = MRC_REQS_DONE;	/* SQD: no new message */
			else if (q->sq_seg == q->sq_head)
				next = MRC_REQS_FETCH;
			else
				next = MRC_REQS_SEGMENT;
			break;
		case MRC_REQS_RESPOND:
			/* an error marks r->rsp_abort, NAKed by the caller */
			if (!mrc_resp_rsp_exec(r, e, mrc_rspq_head(&r->rspq)))
				ret = req_next_resp(q, r, e, o);
			next = MRC_REQS_DONE;
			break;
		case MRC_REQS_FETCH:
			e->ops->sq_fetch(e->ctx);
			next = q->sq_seg == q->sq_head ? MRC_REQS_DONE :
			       MRC_REQS_SEGMENT;
			break;
		case MRC_REQS_SEGMENT:
			w = mrc_req_swqe(q, q->sq_seg);
			if (w->status != MRC_WC_SUCCESS)
				next = MRC_REQS_ERR_WQE;
			else if (!w->seg_off && mrc_req_epoch_behind(q))
				next = MRC_REQS_BLOCKED;	/* a new message */
			else if (!w->mrc_op && w->segmented)
				next = MRC_REQS_LOCAL;	/* ran before a rewind */
			else if (!w->mrc_op)
				next = req_may_start(q, w) ? MRC_REQS_LOCAL :
				       MRC_REQS_BLOCKED;
			else if (q->cfg.ud)
				next = MRC_REQS_UD;
			else if (q->cfg.uc)
				next = MRC_REQS_UC;
			else if (!req_may_start(q, w) ||
				 req_new_psn(q, e, o))
				next = MRC_REQS_BLOCKED;
			else {
				o->resp = 0;
				if (!w->seg_off && mrc_op_notifies(w->mrc_op))
					mrc_resp_flush_ack(r, e);
				req_segment(q, w, o);
				ret = MRC_REQ_PKT;
				next = MRC_REQS_DONE;
			}
			break;
		case MRC_REQS_ERR_WQE:
			w->segmented = 1;
			/* never sent: no response owed (rd_atomic_out) */
			w->resp_done = 1;
			q->sq_seg++;
			q->stop_new = 1;
			ret = MRC_REQ_AGAIN;
			next = MRC_REQS_DONE;
			break;
		case MRC_REQS_LOCAL:
			/* once: an RNR rewind passes it again (comp_epoch) */
			if (!w->segmented)
				e->ops->local_op(e->ctx, w);
			w->rewound = 0;
			req_wqe_done(q, w);
			/* a failed one is an error WQE: nothing after it starts */
			if (w->status != MRC_WC_SUCCESS)
				q->stop_new = 1;
			ret = MRC_REQ_AGAIN;
			next = MRC_REQS_DONE;
			break;
		case MRC_REQS_UC:
			req_uc_segment(q, w, o);
			ret = MRC_REQ_PKT;
			next = MRC_REQS_DONE;
			break;
		case MRC_REQS_UD:
			o->idx = q->sq_seg;
			req_wqe_done(q, w);
			ret = MRC_REQ_UD;
			next = MRC_REQS_DONE;
			break;
		case MRC_REQS_CUT:
			/*
			 * An error WQE is pending (at or before this one): the
			 * rest of this message is never sent. It ends at its
			 * last PSN sent, never as a success, so that it
			 * completes and the responses behind it go out
			 * (protocol.rst "READ and atomics").
			 */
			w = mrc_req_swqe(q, q->sq_seg);
			if (w->status == MRC_WC_SUCCESS)
				w->status = MRC_WC_WR_FLUSH_ERR;
			w->last_psn = q->sb.nxt - 1;
			w->segmented = 1;
			q->sq_seg++;
			ret = MRC_REQ_AGAIN;
			next = MRC_REQS_DONE;
			break;
		case MRC_REQS_BLOCKED:
		default:
			next = MRC_REQS_DONE;
			break;
		}
		st = req_go(e, st, next);
	}
	return ret;
}

void mrc_req_wqe_failed(struct mrc_req *q, struct mrc_swqe *w, u8 status)
{
	if (w->status == MRC_WC_SUCCESS)
		w->status = status;
	q->stop_new = 1;
}

bool mrc_req_epoch_behind(const struct mrc_req *q)
{
	const struct mrc_txd *d;
	u32 psn;

	/* epochs grow with PSNs: the oldest request awaiting its ACK */
	for (psn = q->sb.una; mrc_seq_lt(psn, q->sb.nxt); psn++) {
		d = &q->pkt[psn & (MRC_WND - 1)];
		if (d->kind == MRC_TXD_REQ && req_psn_awaits(q, psn))
			return mrc_epoch_dist(q->epoch, d->epoch) >=
			       MRC_EPOCHS / 2;
	}
	return false;
}

bool mrc_req_drained(const struct mrc_req *q)
{
	const struct mrc_swqe *w;

	if (q->sq_tail != q->sq_seg || q->sq_seg == q->sq_head)
		return q->sq_tail == q->sq_seg;
	/* one an RNR switch made unsent was started: it goes on in SQD */
	w = mrc_req_swqe(q, q->sq_seg);
	return !w->seg_off && !w->rewound;
}

/* ----------------------------------------------------------- timers */

void mrc_req_timer(struct mrc_req *q, const struct mrc_env *e)
{
	u16 lost[MRC_MAX_PATHS] = { 0 };
	u64 now = e->ops->now_us(e->ctx);
	u32 i, n, psn, age, busy = 0, stale = 0;
	bool blame;

	/*
	 * After a fatal NAK the timer ends the wait for the responses sent
	 * before it (mrc_comp_complete): what has not come flushes. Nothing
	 * is resent to a responder in ERR. An expiry taken after a part of
	 * such a response started the wait again (mrc_comp_resp) is stale.
	 */
	if (q->peer_err) {
		if (!q->failed && !mrc_req_rto_pending(q)) {
			q->nak_flush = 1;
			mrc_comp_complete(q, e);
		}
		return;
	}

	/*
	 * Nothing outstanding that an ACK can still be awaited for (the
	 * packets of a failed WQE are never resent): what the QP may still
	 * wait for are responses.
	 */
	if (!mrc_sb_outstanding(&q->sb) || req_only_failed_left(q)) {
		if (q->rd_atomic_out && q->cfg.running)
			mrc_comp_resp_timer(q, e);
		return;
	}
	if (e->ops->trace_timer)
		e->ops->trace_timer(e->ctx, q->tlp_armed, q->sb.una, q->sb.nxt,
				    q->retries);
	if (q->tlp_armed) {
		/* tail-loss probe: resend the newest unacknowledged PSN */
		q->tlp_armed = 0;
		q->tlp_done = 1;
		if (!mrc_req_tlp_psn(q, &psn))
			mrc_sb_mark_lost_cause(&q->sb, psn, MRC_LOSS_TLP);
		return;
	}
	age = q->rto_armed_us ? q->rto_armed_us : mrc_req_rto_interval(q);
	for (i = 0; i < q->paths.n; i++)
		busy += q->sb.inflight[i] ? 1 : 0;
	/*
	 * Probe each silent path with its oldest packet rather than resend
	 * the flight: a spurious timeout (a stalled host or link) then
	 * costs one packet per path, and when the losses are real the
	 * probe's ACK (its echoed timestamp) lets the ACK rule mark the rest
	 * of the path's flight. A blackholed path is emptied when replaced.
	 */
	n = mrc_sb_mark_stale_lost_n(&q->sb, now, age, lost, 1);
	if (n && !q->undo_armed) {
		/* keep what this timeout takes away, in case it is spurious */
		for (i = 0; i < q->paths.n; i++)
			mrc_cc_save(&q->paths.p[i].cc, &q->cc_saved[i]);
		q->undo_armed = 1;
		q->undo_ts = (u32)now;
	}
	for (i = 0; i < q->paths.n; i++)
		stale += lost[i] ? 1 : 0;
	/*
	 * A path is blamed (backoff, window collapse, towards replacement)
	 * only when it alone went silent: if every busy path timed out at
	 * once, the peer or the whole network stalled and new source ports
	 * would not help.
	 */
	blame = stale < busy || busy == 1;
	for (i = 0; i < q->paths.n; i++) {
		struct mrc_path *path = &q->paths.p[i];

		if (!lost[i])
			continue;
		if (!blame) {
			mrc_rtt_backoff(&path->rtt);
			mrc_cc_on_timeout(&path->cc);
			continue;
		}
		if (mrc_paths_on_timeout(&q->paths, i)) {
			u16 old = path->sport;

			mrc_paths_replace(&q->paths, i);
			if (e->ops->trace_path)
				e->ops->trace_path(e->ctx, i, old,
						   path->sport);
			mrc_sb_mark_inflight_lost(&q->sb, i);
			req_count(e, MRC_CNT_PATH_REPLACED, 1);
		}
	}
	if (!n)
		return;		/* everything was (re)sent recently */
	q->retries++;
	req_count(e, MRC_CNT_RTO, 1);
	if (mrc_comp_give_up(q, now)) {
		req_count(e, MRC_CNT_RETRY_EXC, 1);
		mrc_comp_fail_oldest(q, e, MRC_WC_RETRY_EXC_ERR);
	}
}

/* ------------------------------------------------ READ response gone */

bool mrc_req_resp_gone(struct mrc_req *q, u32 psn)
{
	struct mrc_txd *d = &q->pkt[psn & (MRC_WND - 1)];

	if (d->kind != MRC_RSP_READ ||
	    mrc_sb_state_of(&q->sb, psn) == MRC_SB_FREE ||
	    d->gone >= MRC_RESP_GONE_PROBES)
		return false;
	d->gone++;
	return true;
}
