// SPDX-License-Identifier: GPL-2.0
/*
 * The responder engine (responder.h). Plain C: acts only through the
 * environment's callbacks (engine.h).
 */
#include "responder.h"
#include "completer.h"
#include "seq.h"

/* Outcome of placing one packet. */
enum {
	RESP_PLACED = 0,	/* commit */
	RESP_DROP,		/* leave uncommitted, the requester resends */
	RESP_HELD,		/* kept in r->held (the environment keeps it) */
	RESP_HOLD,		/* a WRITE last packet before its prefix: hold */
};

static const char * const resp_state_names[MRC_RESP_NSTATES] = {
	[MRC_RESP_CHECK_ACCESS] = "check_access",
	[MRC_RESP_CLASSIFY] = "classify",
	[MRC_RESP_DISPATCH] = "dispatch",
	[MRC_RESP_PLACE_SEND] = "place_send",
	[MRC_RESP_PLACE_WRITE] = "place_write",
	[MRC_RESP_HOLD] = "hold",
	[MRC_RESP_QUEUE_RSP] = "queue_rsp",
	[MRC_RESP_PLACE_RESP] = "place_resp",
	[MRC_RESP_COMMIT] = "commit",
	[MRC_RESP_RUN_HELD] = "run_held",
	[MRC_RESP_COMPLETE] = "complete",
	[MRC_RESP_NAK] = "nak",
	[MRC_RESP_ACK] = "ack",
	[MRC_RESP_DONE] = "done",
};

const char *mrc_resp_state_name(unsigned int s)
{
	return s < MRC_RESP_NSTATES ? resp_state_names[s] : "?";
}

static u64 resp_now(const struct mrc_env *e)
{
	return e->ops->now_us(e->ctx);
}

static void resp_count(const struct mrc_env *e, u8 c)
{
	if (e->ops->count)
		e->ops->count(e->ctx, c, 1);
}

static void resp_fail(struct mrc_resp *r, const struct mrc_env *e, u8 event)
{
	/* a NAK waiting behind this failure never goes (fnak) */
	r->fnak = 0;
	e->ops->qp_error(e->ctx, event);
}

/* The QP's asynchronous event for a fatal NAK of syndrome @syn. */
static u8 resp_syn_event(u8 syn)
{
	switch (syn) {
	case MRC_SYN_REM_ACCESS:
		return MRC_QPE_ACCESS_ERR;
	case MRC_SYN_INV_REQ:
		return MRC_QPE_REQ_ERR;
	}
	return MRC_QPE_FATAL;		/* REM_OP: a local error */
}

/* ------------------------------------------------------------- ACKs */

void mrc_resp_send_ack(struct mrc_resp *r, const struct mrc_env *e, u8 syn,
		       u32 nak_psn)
{
	struct mrc_pkt p;

	memset(&p, 0, sizeof(p));
	mrc_rx_build_ack(&r->rx, &p.ack, resp_now(e));
	p.opcode = MRC_OP_ACK;
	p.path_id = r->cfg.npaths ? r->rx.ts_path % r->cfg.npaths : 0;
	p.dst_qpn = r->cfg.dest_qpn & 0xffffff;
	p.ack.syndrome = syn;
	/*
	 * Version 3: every ACK tells the receive epoch, the PSN whose
	 * refusal began it and the RNR delay, so that a requester whose RNR
	 * NAK was lost switches on the next ACK (protocol.rst "RNR and the
	 * request epoch").
	 */
	p.ack.epoch = r->epoch;
	p.ack.nak_psn = syn != MRC_SYN_ACK ? nak_psn :
			r->void_psn[(r->epoch - 1) & (MRC_EPOCHS - 1)];
	p.ack.rnr_timer = r->cfg.min_rnr_timer & 0x1f;
	e->ops->timer_cancel(e->ctx, MRC_TIMER_ACK);
	e->ops->emit(e->ctx, &p, NULL, 0);
}

void mrc_resp_ack_timer(struct mrc_resp *r, const struct mrc_env *e)
{
	if (mrc_resp_ready(r) && mrc_rx_ack_pending(&r->rx))
		mrc_resp_send_ack(r, e, MRC_SYN_ACK, 0);
}

void mrc_resp_flush_ack(struct mrc_resp *r, const struct mrc_env *e)
{
	if (mrc_resp_ready(r) && !r->cfg.uc && mrc_rx_ack_pending(&r->rx) &&
	    !mrc_rx_cum_carries(&r->rx))
		mrc_resp_send_ack(r, e, MRC_SYN_ACK, 0);
}

void mrc_resp_leave(struct mrc_resp *r, const struct mrc_env *e)
{
	if (mrc_resp_ready(r) && !r->cfg.uc && mrc_rx_ack_pending(&r->rx))
		mrc_resp_send_ack(r, e, MRC_SYN_ACK, 0);
	mrc_resp_stop(r);
}

void mrc_resp_cum_fill(const struct mrc_resp *r, struct mrc_pkt *p)
{
	if (!mrc_resp_ready(r) || r->cfg.uc || (p->flags & MRC_F_UC) ||
	    !mrc_op_sequenced(p->opcode))
		return;
	/* none after an RNR refusal until the peer switched epochs */
	if (!r->epoch_seen)
		return;
	p->flags |= MRC_F_CUMACK;
	p->cum_lo = (u16)r->rx.cum;
}

void mrc_resp_cum_sent(struct mrc_resp *r, const struct mrc_env *e,
		       const struct mrc_pkt *p)
{
	if (!(p->flags & MRC_F_CUMACK) || !mrc_resp_ready(r) ||
	    p->cum_lo != (u16)r->rx.cum || !mrc_rx_cum_carries(&r->rx))
		return;
	mrc_rx_cum_carried(&r->rx);
	e->ops->timer_cancel(e->ctx, MRC_TIMER_ACK);
}

/* An ACK owed and not sent now goes out with the delayed-ACK timer. */
static void resp_ack_later(struct mrc_resp *r, const struct mrc_env *e)
{
	if (mrc_rx_ack_pending(&r->rx) &&
	    !e->ops->timer_pending(e->ctx, MRC_TIMER_ACK))
		e->ops->timer_arm(e->ctx, MRC_TIMER_ACK, MRC_ACK_DELAY_US);
}

/*
 * One NAK per PSN and syndrome until something changes (or a retry). A
 * repeat is not sent; an ACK owed meanwhile still goes out within the
 * delayed-ACK bound (its timer is armed as for any packet).
 */
static void resp_nak(struct mrc_resp *r, const struct mrc_env *e,
		     const struct mrc_pkt *p, u8 syn)
{
	if (r->nak_psn != p->psn || r->nak_syn != syn ||
	    (p->flags & MRC_F_RETX)) {
		r->nak_psn = p->psn;
		r->nak_syn = syn;
		mrc_resp_send_ack(r, e, syn, p->psn);
	} else {
		resp_ack_later(r, e);
	}
}

bool mrc_resp_renak(struct mrc_resp *r, const struct mrc_env *e,
		    const struct mrc_pkt *p)
{
	if (mrc_resp_ready(r) ||
	    !((p->flags & MRC_F_RETX) || p->opcode == MRC_OP_PROBE) ||
	    p->psn != r->nak_psn ||
	    (r->nak_syn != MRC_SYN_REM_ACCESS &&
	     r->nak_syn != MRC_SYN_INV_REQ && r->nak_syn != MRC_SYN_REM_OP))
		return false;
	mrc_resp_send_ack(r, e, r->nak_syn, p->psn);
	return true;
}

/* ------------------------------------------------ receive WQE table */

static struct mrc_rslot *resp_rslot(struct mrc_resp *r, u32 msn)
{
	return &r->rslot[msn & (MRC_RSLOTS - 1)];
}

/*
 * The receive WQE of message @msn, taking WQEs in message order up to
 * it. Returns NULL and *syn for RNR, or NULL without it to drop.
 */
static struct mrc_rslot *resp_rslot_get(struct mrc_resp *r,
					const struct mrc_env *e, u32 msn,
					u8 *syn)
{
	struct mrc_rslot *s;
	int res;

	if (mrc_seq_lt(msn, r->rmsn_done) ||
	    msn - r->rmsn_done >= MRC_RSLOTS)
		return NULL;
	while (mrc_seq_leq(r->rmsn_pop, msn)) {
		s = resp_rslot(r, r->rmsn_pop);
		memset(s, 0, sizeof(*s));
		res = e->ops->rq_pop(e->ctx, r->rmsn_pop & (MRC_RSLOTS - 1),
				     &s->wr_id, &s->length);
		if (res == MRC_RQ_EMPTY) {
			*syn = MRC_SYN_RNR;
			return NULL;
		}
		if (res == MRC_RQ_CORRUPT) {	/* QP to ERR, QP_FATAL */
			resp_fail(r, e, MRC_QPE_KEEP);
			return NULL;
		}
		s->msn = r->rmsn_pop++;
		s->used = 1;
		s->status = res == MRC_RQ_OK ? MRC_WC_SUCCESS :
			    MRC_WC_LOC_QP_OP_ERR;
	}
	s = resp_rslot(r, msn);
	return s->used && s->msn == msn ? s : NULL;
}

static void resp_post_rcqe(struct mrc_resp *r, const struct mrc_env *e,
			   const struct mrc_rslot *s, u32 slot, u8 status)
{
	struct mrc_rcqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = s->wr_id;
	c.slot = slot;
	c.status = status;
	c.opcode = s->opcode ? s->opcode : MRC_WC_RECV;
	c.byte_len = s->msg_len;
	c.imm = s->imm;
	c.wc_flags = status == MRC_WC_SUCCESS ? s->wc_flags : 0;
	c.solicited = status == MRC_WC_SUCCESS && s->solicited;
	if (e->ops->post_rcqe(e->ctx, &c))
		resp_fail(r, e, MRC_QPE_KEEP);	/* CQ overflow */
}

/*
 * The NAK syndrome that reports a receive WQE's error @status to the
 * requester: INV_REQ for a message longer than the WQE or an rkey it
 * could not invalidate (its WQE completes REM_INV_REQ_ERR), REM_OP for a
 * local error (REM_OP_ERR).
 */
static u8 resp_status_syn(u8 status)
{
	switch (status) {
	case MRC_WC_LOC_LEN_ERR:
	case MRC_WC_REM_INV_REQ_ERR:
		return MRC_SYN_INV_REQ;
	}
	return MRC_SYN_REM_OP;		/* LOC_PROT_ERR, LOC_QP_OP_ERR */
}

/*
 * The PSN a NAK names for the receive WQE @s that completed in error:
 * its message's LAST packet's (else the first one seen), or cum if none
 * of its packets came (a malformed WQE taken for a later message): the
 * first PSN not received, at or before that message.
 */
static u32 resp_rslot_nak_psn(const struct mrc_resp *r,
			      const struct mrc_rslot *s)
{
	if (!s->seen)
		return r->rx.cum;
	return s->has_last ? s->last_psn : s->first_psn;
}

/* Is @p a packet of the message of receive WQE @s? */
static bool resp_rslot_of(const struct mrc_pkt *p, const struct mrc_rslot *s)
{
	switch (p->opcode) {
	case MRC_OP_SEND:
	case MRC_OP_SEND_IMM:
	case MRC_OP_SEND_INV:
		return p->send.rmsn == s->msn;
	case MRC_OP_WRITE_IMM:
		return p->write.rmsn == s->msn;
	}
	return false;
}

/*
 * Post the receive completions that are now due, in message order, up to
 * and including the first error completion: messages whose LAST packet
 * is before @end (the receive window's cum, or an earlier PSN that
 * failed). Returns the receive WQE it completed in error, else NULL: the
 * caller ends the QP with a NAK naming it (resp_rslot_nak_psn()), never
 * with a positive ACK, whose cum_psn may cover that message and the
 * complete ones after it, which the flush completes.
 */
static const struct mrc_rslot *resp_rcomplete(struct mrc_resp *r,
					      const struct mrc_env *e,
					      u32 end)
{
	while (r->rmsn_done != r->rmsn_pop) {
		struct mrc_rslot *s = resp_rslot(r, r->rmsn_done);

		/*
		 * Done when cum passes its LAST packet: everything sent
		 * before it (WRITEs included) is placed too.
		 */
		if (s->status == MRC_WC_SUCCESS &&
		    (!s->seen || s->placed != s->msg_len || !s->has_last ||
		     !mrc_seq_lt(s->last_psn, end)))
			break;
		/* SEND_WITH_INV: every earlier request is placed now */
		if (s->status == MRC_WC_SUCCESS &&
		    (s->wc_flags & MRC_WCF_WITH_INV) &&
		    e->ops->mr_invalidate(e->ctx, s->imm, false))
			s->status = MRC_WC_REM_INV_REQ_ERR;
		resp_post_rcqe(r, e, s, r->rmsn_done & (MRC_RSLOTS - 1),
			       s->status);
		s->used = 0;
		r->rmsn_done++;
		/*
		 * An error completion ends the QP: the messages after it are
		 * flushed (mrc_resp_flush), not completed successfully.
		 */
		if (s->status != MRC_WC_SUCCESS)
			return s;
	}
	return NULL;
}

/* An immediate as the completion carries it: network byte order. */
static u32 resp_imm_net(u32 imm)
{
	u32 v;

	put_unaligned_be32(imm, &v);
	return v;
}

/* First packet seen of a message: record what its completion says. */
static u8 resp_rslot_start(const struct mrc_env *e, struct mrc_rslot *s,
			   const struct mrc_pkt *p)
{
	if (s->seen)
		return MRC_SYN_ACK;
	s->seen = 1;
	s->first_psn = p->psn;
	if (p->opcode == MRC_OP_WRITE_IMM) {
		s->msg_len = p->write.msg_len;
		s->opcode = MRC_WC_RECV_RDMA_WITH_IMM;
		s->imm = resp_imm_net(p->write.imm);
		s->wc_flags = MRC_WCF_WITH_IMM;
		return MRC_SYN_ACK;
	}
	s->msg_len = p->send.msg_len;
	s->opcode = MRC_WC_RECV;
	if (p->opcode == MRC_OP_SEND_IMM) {
		s->imm = resp_imm_net(p->send.imm);
		s->wc_flags = MRC_WCF_WITH_IMM;
	} else if (p->opcode == MRC_OP_SEND_INV) {
		s->imm = p->send.imm;
		s->wc_flags = MRC_WCF_WITH_INV;
		/*
		 * Checked now, invalidated when the message completes
		 * (resp_rcomplete): earlier WRITEs to that MR may still be
		 * on their way, and must land.
		 */
		if (s->status == MRC_WC_SUCCESS &&
		    e->ops->mr_invalidate(e->ctx, p->send.imm, true)) {
			s->status = MRC_WC_REM_INV_REQ_ERR;
			return MRC_SYN_INV_REQ;
		}
	}
	/* as IB: a message longer than the receive WQE is an invalid request */
	if (s->status == MRC_WC_SUCCESS && s->msg_len > s->length) {
		s->status = MRC_WC_LOC_LEN_ERR;
		return MRC_SYN_INV_REQ;
	}
	return MRC_SYN_ACK;
}

static void resp_rslot_last(struct mrc_rslot *s, const struct mrc_pkt *p)
{
	if (!(p->flags & MRC_F_LAST))
		return;
	s->has_last = 1;
	s->last_psn = p->psn;
	if (p->flags & MRC_F_SOLICIT)
		s->solicited = 1;
}

/* --------------------------------------------------------- placing */

/*
 * Is every earlier packet of the WRITE message whose last packet is @p
 * placed? The packets of a message have consecutive PSNs and all but the
 * last carry the sender's segment size, learnt from its first non-LAST
 * packet (rx_seg; a later one of another size is refused, so the k
 * packets before @p that are found here are all of that size and cover
 * [0, offset): they are the whole prefix); until one was seen only
 * in-order placement counts.
 */
static bool resp_write_prefix_done(const struct mrc_resp *r,
				   const struct mrc_pkt *p)
{
	u32 k, i;

	if (p->flags & MRC_F_FIRST)
		return true;
	/*
	 * Without the bitmap to look at: done when every earlier PSN is
	 * committed, i.e. cum reached @p -- or passed it, once @p itself was
	 * committed on arrival and held (a message of more than MRC_WND
	 * packets whose last packet overtook a lost one).
	 */
	if (!r->rx_seg || p->write.offset % r->rx_seg)
		return mrc_seq_geq(r->rx.cum, p->psn);
	k = p->write.offset / r->rx_seg;
	if (k >= MRC_WND)
		return mrc_seq_geq(r->rx.cum, p->psn);
	for (i = 1; i <= k; i++)
		if (mrc_rx_check(&r->rx, p->psn - i) != MRC_RX_DUP)
			return false;
	return true;
}

/* Forget held packet @i (the environment frees it); order is kept. */
static void resp_held_remove(struct mrc_resp *r, const struct mrc_env *e,
			     u32 i)
{
	e->ops->release(e->ctx, r->held[i].pkt);
	r->nheld--;
	memmove(&r->held[i], &r->held[i + 1],
		(r->nheld - i) * sizeof(r->held[0]));
}

static int resp_hold(struct mrc_resp *r, const struct mrc_pkt *p,
		     const void *pkt)
{
	u32 i;

	if (r->nheld >= MRC_HELD_MAX)
		return RESP_DROP;
	for (i = 0; i < r->nheld; i++)
		if (r->held[i].p.psn == p->psn)
			return RESP_DROP;
	r->held[r->nheld].p = *p;
	r->held[r->nheld].pkt = pkt;
	r->nheld++;
	return RESP_HELD;
}

static int resp_place_send(struct mrc_resp *r, const struct mrc_env *e,
			   const struct mrc_pkt *p, const struct mrc_src *src,
			   u8 *syn)
{
	struct mrc_rslot *s;
	int err;

	s = resp_rslot_get(r, e, p->send.rmsn, syn);
	if (!s)
		return RESP_DROP;
	*syn = resp_rslot_start(e, s, p);
	if (s->status != MRC_WC_SUCCESS) {
		/* a malformed WQE (LOC_QP_OP_ERR): a local error too */
		if (*syn == MRC_SYN_ACK)
			*syn = resp_status_syn(s->status);
		return RESP_PLACED;
	}
	if (p->payload_len) {
		err = e->ops->rq_copy(e->ctx, p->send.rmsn & (MRC_RSLOTS - 1),
				      p->send.offset, src, p->payload_len);
		if (err) {
			s->status = err == MRC_COPY_LEN ? MRC_WC_LOC_LEN_ERR :
				    MRC_WC_LOC_PROT_ERR;
			*syn = err == MRC_COPY_LEN ? MRC_SYN_INV_REQ :
			       MRC_SYN_REM_OP;
			return RESP_PLACED;
		}
	}
	s->placed += p->payload_len;
	resp_rslot_last(s, p);
	return RESP_PLACED;
}

/*
 * Copy a WRITE packet's payload, except the bytes that a WRITE packet of
 * a later PSN, which overtook this one, has already written: overlapping
 * WRITEs end as in PSN order (worder.h).
 */
static int resp_write_copy(struct mrc_resp *r, const struct mrc_env *e,
			   void *mr, const struct mrc_pkt *p,
			   const struct mrc_src *src, u32 space, u64 cva)
{
	u64 va = p->write.va + p->write.offset;
	struct mrc_src piece = *src;
	u32 i, n, off;
	int err;

	if (!mrc_seq_lt(p->psn + 1, r->rx.top))	/* nothing later seen */
		return e->ops->mr_write(e->ctx, mr, va, src, p->payload_len);
	n = mrc_wo_pieces(&r->wo, p->psn, r->rx.top, space, cva,
			  p->payload_len, r->wo.out);
	for (i = 0; i < n; i++) {
		off = (u32)(r->wo.out[i].va - cva);
		piece.off = src->off + off;
		err = e->ops->mr_write(e->ctx, mr, va + off, &piece,
				       r->wo.out[i].len);
		if (err)
			return err;
	}
	return 0;
}

static void resp_mr_put(const struct mrc_env *e, void *mr)
{
	if (mr)
		e->ops->mr_put(e->ctx, mr);
}

/*
 * Does a SEND_WITH_INV of @rkey before @psn have a packet here, its
 * message not completed yet? In PSN order its invalidation executes
 * before a request at @psn, so a WRITE at @psn naming @rkey fails
 * (protocol.rst "Ordering"). The messages not completed are those of the
 * receive WQEs taken, rmsn_done to rmsn_pop (at most MRC_RSLOTS).
 */
static bool resp_inv_pending(const struct mrc_resp *r, u32 rkey, u32 psn)
{
	const struct mrc_rslot *s;
	u32 msn;

	for (msn = r->rmsn_done; msn != r->rmsn_pop; msn++) {
		s = &r->rslot[msn & (MRC_RSLOTS - 1)];
		if (s->seen && (s->wc_flags & MRC_WCF_WITH_INV) &&
		    s->status == MRC_WC_SUCCESS && s->imm == rkey &&
		    mrc_seq_lt(s->first_psn, psn))
			return true;
	}
	return false;
}

/*
 * Where the bytes at @va of @mr are, for the write-order record: the
 * environment's answer (mr_canon), else the key and @va.
 */
static void resp_wo_where(const struct mrc_env *e, void *mr, u32 key,
			  u64 va, u32 *space, u64 *cva)
{
	*space = key;
	*cva = va;
	if (mr && e->ops->mr_canon)
		e->ops->mr_canon(e->ctx, mr, va, space, cva);
}

static int resp_place_write(struct mrc_resp *r, const struct mrc_env *e,
			    const struct mrc_pkt *p, const struct mrc_src *src,
			    u8 *syn, bool held)
{
	u64 va = p->write.va + p->write.offset, cva;
	struct mrc_rslot *s = NULL;
	void *mr = NULL;
	u32 space;
	int err = 0;

	/*
	 * Every non-LAST packet carries the peer's one segment size, at a
	 * multiple of it (protocol.rst "Segment rules"): the first one
	 * teaches it (rx_seg, until reset), and a packet that breaks the
	 * rule is an invalid request -- placing the LAST packets of WRITEs
	 * relies on it (resp_write_prefix_done).
	 */
	if (!(p->flags & MRC_F_LAST) &&
	    (!p->payload_len || p->write.offset % p->payload_len ||
	     (r->rx_seg && p->payload_len != r->rx_seg))) {
		*syn = MRC_SYN_INV_REQ;
		return RESP_DROP;
	}
	/*
	 * The whole message's range, so a bad one leaves memory untouched.
	 * A zero-length WRITE's rkey and va are not checked (IBA C9-88):
	 * rsocket's control messages leave them unset.
	 */
	if (p->write.msg_len) {
		/*
		 * After a SEND_WITH_INV of its rkey that has not completed:
		 * not placed, not committed (a retransmission meets the
		 * same); NAKed REM_ACCESS once cum reaches it, i.e. after
		 * the invalidation executed (mrc_resp_rx, COMPLETE). A held
		 * packet arrived before, and is placed only if the rest of
		 * its message was.
		 */
		if (!held && resp_inv_pending(r, p->write.rkey, p->psn)) {
			if (!r->inv_nak || mrc_seq_lt(p->psn, r->inv_nak_psn))
				r->inv_nak_psn = p->psn;
			r->inv_nak = 1;
			return RESP_DROP;
		}
		mr = e->ops->mr_get(e->ctx, p->write.rkey, true,
				    MRC_ACC_REMOTE_WRITE, p->write.va,
				    p->write.msg_len);
		if (!mr) {
			*syn = MRC_SYN_REM_ACCESS;
			return RESP_DROP;
		}
	}
	if (p->opcode == MRC_OP_WRITE_IMM) {
		s = resp_rslot_get(r, e, p->write.rmsn, syn);
		if (!s || s->status != MRC_WC_SUCCESS) {
			/* a malformed WQE: nothing written, NAK, QP to ERR */
			if (s)
				*syn = resp_status_syn(s->status);
			resp_mr_put(e, mr);
			return RESP_DROP;
		}
		resp_rslot_start(e, s, p);
	}
	if (!(p->flags & MRC_F_LAST)) {
		r->rx_seg = p->payload_len;	/* the same, once known */
	} else if (!resp_write_prefix_done(r, p)) {
		resp_mr_put(e, mr);
		return held ? RESP_DROP : RESP_HOLD;
	}
	resp_wo_where(e, mr, p->write.rkey, va, &space, &cva);
	if (p->payload_len)
		err = resp_write_copy(r, e, mr, p, src, space, cva);
	resp_mr_put(e, mr);
	if (err) {
		*syn = MRC_SYN_REM_OP;
		return RESP_DROP;
	}
	mrc_wo_record(&r->wo, p->psn, space, cva, p->payload_len);
	if (s) {
		s->placed += p->payload_len;
		resp_rslot_last(s, p);
	}
	return RESP_PLACED;
}

/*
 * A READ or atomic request: check it now (a bad one is NAKed and leaves
 * memory untouched) and queue it in request PSN order. It executes --
 * the atomic operates, the READ's data is read -- only once every
 * earlier request of the QP is placed (mrc_resp_rsp_ready()): IB RC
 * responders execute in PSN order, whatever order packets arrive in. The
 * request PSN is committed now, so a duplicate is never queued twice.
 */
static int resp_queue_rsp(struct mrc_resp *r, const struct mrc_env *e,
			  const struct mrc_pkt *p, u8 *syn)
{
	struct mrc_rsp *q;
	void *mr;

	if (p->opcode != MRC_OP_READ_REQ && (p->atomic.va & 7)) {
		*syn = MRC_SYN_INV_REQ;
		return RESP_DROP;
	}
	/* a zero-length READ's rkey and va are not checked (IBA C9-88) */
	if (p->opcode != MRC_OP_READ_REQ || p->read.len) {
		if (p->opcode == MRC_OP_READ_REQ)
			mr = e->ops->mr_get(e->ctx, p->read.rkey, true,
					    MRC_ACC_REMOTE_READ, p->read.va,
					    p->read.len);
		else
			mr = e->ops->mr_get(e->ctx, p->atomic.rkey, true,
					    MRC_ACC_REMOTE_ATOMIC,
					    p->atomic.va, 8);
		if (!mr) {
			*syn = MRC_SYN_REM_ACCESS;
			return RESP_DROP;
		}
		e->ops->mr_put(e->ctx, mr);
	}

	/* IB: more outstanding than max_dest_rd_atomic is an invalid request */
	q = mrc_rspq_insert(&r->rspq, p->psn, r->cfg.max_dest_rd_atomic);
	if (!q) {
		*syn = MRC_SYN_INV_REQ;
		return RESP_DROP;
	}
	if (p->opcode == MRC_OP_READ_REQ) {
		q->kind = MRC_RSP_READ;
		q->va = p->read.va;
		q->rkey = p->read.rkey;
		q->len = p->read.len;
	} else {
		q->kind = MRC_RSP_ATOMIC;
		q->op = p->opcode;
		q->va = p->atomic.va;
		q->rkey = p->atomic.rkey;
		q->compare = p->atomic.compare;
		q->swap_add = p->atomic.swap_add;
	}
	return RESP_PLACED;
}

/* --------------------------------------------- READ/atomic execution */

/*
 * Will the READ/atomic request @p, just queued, be answered at once, its
 * response acknowledging everything received? It is the only queued
 * request, may run, and nothing after it was received (protocol.rst "ACK
 * policy").
 */
static bool resp_answers_now(struct mrc_resp *r, const struct mrc_pkt *p)
{
	return mrc_op_is_rd_atomic(p->opcode) &&
	       mrc_rspq_len(&r->rspq) == 1 && r->rx.cum == p->psn + 1 &&
	       r->rx.top == r->rx.cum && mrc_resp_rsp_ready(r) &&
	       mrc_rspq_head(&r->rspq)->req_psn == p->psn;
}

void mrc_resp_rsp_acks(struct mrc_resp *r, const struct mrc_env *e,
		       u32 req_psn)
{
	struct mrc_rx *rx = &r->rx;

	if (!mrc_rx_ack_pending(rx) || rx->ack_now || rx->dsack ||
	    rx->cum != req_psn + 1 || rx->top != rx->cum)
		return;
	mrc_rx_ack_carried(rx);
	r->ack_by_rsp = 0;
	e->ops->timer_cancel(e->ctx, MRC_TIMER_ACK);
}

void mrc_resp_ack_settle(struct mrc_resp *r, const struct mrc_env *e)
{
	if (!r->ack_by_rsp)
		return;
	r->ack_by_rsp = 0;
	if (mrc_resp_ready(r))
		resp_ack_later(r, e);
}

bool mrc_resp_rsp_ready(const struct mrc_resp *r)
{
	u32 i, held_min = 0;

	for (i = 0; i < r->nheld; i++)
		if (!i || mrc_seq_lt(r->held[i].p.psn, held_min))
			held_min = r->held[i].p.psn;
	return mrc_rspq_ready(&r->rspq, r->rx.cum, r->nheld != 0, held_min);
}

int mrc_resp_rsp_exec(struct mrc_resp *r, const struct mrc_env *e,
		      struct mrc_rsp *q)
{
	void *mr;

	if (q->kind == MRC_RSP_READ) {
		if (q->off || !q->len)	/* zero-length: nothing to check */
			return 0;
		mr = e->ops->mr_get(e->ctx, q->rkey, true, MRC_ACC_REMOTE_READ,
				    q->va, q->len);
	} else {
		if (q->executed)
			return 0;
		mr = e->ops->mr_get(e->ctx, q->rkey, true,
				    MRC_ACC_REMOTE_ATOMIC, q->va, 8);
	}
	if (!mr) {
		r->rsp_abort = 1;
		r->rsp_abort_psn = q->req_psn;
		return -1;
	}
	if (q->kind != MRC_RSP_READ) {
		e->ops->mr_atomic(e->ctx, mr, q->va, q->op == MRC_OP_CMP_SWAP,
				  q->compare, q->swap_add, &q->orig);
		q->executed = 1;
	}
	e->ops->mr_put(e->ctx, mr);
	return 0;
}

/* Is a READ/atomic before @psn queued (some response not yet built)? */
static bool resp_rsp_before(struct mrc_resp *r, u32 psn)
{
	struct mrc_rsp *h = mrc_rspq_head(&r->rspq);

	return h && mrc_seq_lt(h->req_psn, psn);
}

static void resp_late_fail(struct mrc_resp *r, const struct mrc_env *e,
			   u8 syn, u32 psn);

/*
 * What IB RC executes before a request at @psn that is refused on
 * arrival, and its NAK therefore waits for (fnak): a PSN before it not
 * received yet (a reordered or lost packet the requester repairs), or a
 * READ/atomic before it whose responses are not all built.
 */
static bool resp_fnak_waits(struct mrc_resp *r, u32 psn)
{
	return mrc_seq_lt(r->rx.cum, psn) || resp_rsp_before(r, psn);
}

/* The waiting NAK, once nothing before it is owed: NAK, the QP fails. */
static void resp_fnak_fire(struct mrc_resp *r, const struct mrc_env *e)
{
	if (r->fnak && !resp_fnak_waits(r, r->fnak_psn)) {
		r->fnak = 0;
		resp_late_fail(r, e, r->fnak_syn, r->fnak_psn);
	}
}

/*
 * A READ/atomic that was accepted (and acknowledged) cannot be served:
 * its memory went away before it ran. Tell the requester (a REM_ACCESS
 * NAK for the request's PSN, which fails that WQE) and move the QP to
 * ERR with an access error event, as IB does for a bad request.
 *
 * Otherwise, a failed request waiting for the responses of the READs/
 * atomics before it (fnak): once they are all built -- in this pass, so
 * the NAK leaves after them -- NAK it and fail the QP.
 */
void mrc_resp_rsp_abort(struct mrc_resp *r, const struct mrc_env *e)
{
	if (!r->rsp_abort) {
		resp_fnak_fire(r, e);
		return;
	}
	r->rsp_abort = 0;
	r->fnak = 0;
	r->nak_psn = r->rsp_abort_psn;
	r->nak_syn = MRC_SYN_REM_ACCESS;
	mrc_resp_send_ack(r, e, MRC_SYN_REM_ACCESS, r->rsp_abort_psn);
	mrc_rspq_clear(&r->rspq);
	resp_fail(r, e, MRC_QPE_ACCESS_ERR);
}

/*
 * The owed responses of a waiting fatal NAK go in the QP's own PSN space,
 * under its congestion window. Two QPs each waiting to NAK a request of
 * the other, behind responses to the other's READs, never acknowledge the
 * requests that fill each other's window, so neither response can go:
 * without a bound both would wait forever (sim seed 604818). No progress
 * over @limit expiries of the QP's retransmission timer (retry_cnt + 1 of
 * them): the NAK goes now. The requester flushes the READs/atomics whose
 * responses did not come (protocol.rst "Fatal NAK").
 */
void mrc_resp_fnak_tick(struct mrc_resp *r, const struct mrc_env *e,
			u32 limit)
{
	if (!r->fnak || !mrc_resp_ready(r) || ++r->fnak_ticks <= limit)
		return;
	r->fnak = 0;
	mrc_rspq_clear(&r->rspq);
	resp_late_fail(r, e, r->fnak_syn, r->fnak_psn);
}

/* ---------------------------------------------- RNR and the epoch */

/* The receive message sequence of a request that has one, else -1. */
static s64 resp_pkt_msn(const struct mrc_pkt *p)
{
	switch (p->opcode) {
	case MRC_OP_SEND:
	case MRC_OP_SEND_IMM:
	case MRC_OP_SEND_INV:
		return p->send.rmsn;
	case MRC_OP_WRITE_IMM:
		return p->write.rmsn;
	}
	return -1;
}

/*
 * Is request @p void: of an earlier epoch, at or after the PSN whose
 * refusal ended that epoch, or of the refused message or a later one
 * (protocol.rst "RNR and the request epoch")?
 */
static bool resp_voided(const struct mrc_resp *r, const struct mrc_pkt *p)
{
	u32 i = p->epoch & (MRC_EPOCHS - 1);
	s64 msn = resp_pkt_msn(p);

	if (p->epoch == r->epoch)
		return false;
	if (mrc_seq_geq(p->psn, r->void_psn[i]))
		return true;
	return msn >= 0 && mrc_seq_geq((u32)msn, r->void_msn[i]);
}

/*
 * Request @p, not void, found no receive WQE: refuse it (RNR). The current
 * epoch ends: @p and every request after it, or of @p's message or a
 * later one, of @p's epoch or a later one, is void. @p may be of an
 * earlier epoch, before the PSN whose refusal ended it: a message whose
 * receive WQE was not taken when a later one was refused (WQEs are taken
 * in message order); the void point of its epoch and the later ones moves
 * back to it. Those already here are undone: the READs and atomics queued
 * after it (none ran: they wait for @p, never received) and the WRITE last
 * packets held after it. WRITE packets after it that were placed are
 * written again when the requester resends them, in order.
 */
static void resp_refuse(struct mrc_resp *r, const struct mrc_env *e,
			const struct mrc_pkt *p)
{
	u32 m = (u32)resp_pkt_msn(p), n = 0, i;
	u8 t = p->epoch & (MRC_EPOCHS - 1);

	for (;; t = (t + 1) & (MRC_EPOCHS - 1)) {
		i = t;
		if (t == r->epoch || mrc_seq_lt(p->psn, r->void_psn[i]))
			r->void_psn[i] = p->psn;
		if (t == r->epoch || mrc_seq_lt(m, r->void_msn[i]))
			r->void_msn[i] = m;
		if (t == r->epoch)
			break;
	}
	r->epoch = (r->epoch + 1) & (MRC_EPOCHS - 1);
	r->epoch_seen = 0;
	mrc_rspq_drop_from(&r->rspq, p->psn);
	while (n < r->nheld) {
		if (resp_voided(r, &r->held[n].p))
			resp_held_remove(r, e, n);
		else
			n++;
	}
	if (r->inv_nak && mrc_seq_geq(r->inv_nak_psn, p->psn))
		r->inv_nak = 0;
	/* a failed request voided with its epoch: its resend is checked */
	if (r->fnak && mrc_seq_geq(r->fnak_psn, p->psn))
		r->fnak = 0;
}

/* ------------------------------------------------ the packet machine */

/* The QP access right a request needs, or 0. */
static u32 resp_req_access(u8 opcode)
{
	switch (opcode) {
	case MRC_OP_WRITE:
	case MRC_OP_WRITE_IMM:
		return MRC_ACC_REMOTE_WRITE;
	case MRC_OP_READ_REQ:
		return MRC_ACC_REMOTE_READ;
	case MRC_OP_CMP_SWAP:
	case MRC_OP_FETCH_ADD:
		return MRC_ACC_REMOTE_ATOMIC;
	}
	return 0;
}

static int resp_place(struct mrc_resp *r, const struct mrc_env *e,
		      const struct mrc_pkt *p, const struct mrc_src *src,
		      u8 *syn, bool held)
{
	switch (p->opcode) {
	case MRC_OP_SEND:
	case MRC_OP_SEND_IMM:
	case MRC_OP_SEND_INV:
		return resp_place_send(r, e, p, src, syn);
	case MRC_OP_WRITE:
	case MRC_OP_WRITE_IMM:
		return resp_place_write(r, e, p, src, syn, held);
	}
	*syn = MRC_SYN_INV_REQ;
	return RESP_DROP;
}

/*
 * Place held-back WRITE last packets whose message is now complete. They
 * were committed (acknowledged) on arrival -- the requester must not
 * resend what is already here -- and the cumulative point cannot pass
 * them before their prefix is placed, which is when they are placed.
 * Returns 0, or the NAK syndrome of one that could not be placed:
 * *fail_psn is the earliest such PSN (resp_late_fail()).
 */
static u8 resp_run_held(struct mrc_resp *r, const struct mrc_env *e,
			u32 *fail_psn)
{
	struct mrc_src src;
	struct mrc_held *h;
	u32 i = 0, psn;
	u8 syn, fail_syn = 0;
	int res;

	while (i < r->nheld) {
		h = &r->held[i];
		if (!resp_write_prefix_done(r, &h->p)) {
			i++;
			continue;
		}
		syn = MRC_SYN_ACK;
		src.pkt = h->pkt;
		src.buf = NULL;
		src.off = h->p.hdr_len;
		psn = h->p.psn;
		/* held: placing never holds again, r->held stays put */
		res = resp_place(r, e, &h->p, &src, &syn, true);
		resp_held_remove(r, e, i);
		if (res == RESP_PLACED && syn == MRC_SYN_ACK)
			continue;
		/*
		 * It was acknowledged, so it cannot be dropped now: its MR
		 * went away meanwhile. The packet that completed its
		 * message passed the same check (resp_place_write checks
		 * the whole message's range) earlier in this call (unless
		 * the sender's segment size changed within the message),
		 * so another context took the MR away in between:
		 * deregistered it, or invalidated it from another QP of the
		 * PD. Remember the earliest such PSN; the others are placed.
		 */
		if (syn == MRC_SYN_ACK)
			syn = MRC_SYN_REM_OP;
		if (!fail_syn || mrc_seq_lt(psn, *fail_psn)) {
			*fail_psn = psn;
			fail_syn = syn;
		}
	}
	return fail_syn;
}

/*
 * A packet at @psn that arrived earlier fails now (@syn): an
 * acknowledged held packet that could not be placed, or a WRITE refused
 * for an earlier SEND_WITH_INV. Fail the QP visibly, and tell the
 * requester. The NAK names that PSN, so its WRITE completes in error
 * even when the NAK's cumulative point covers it (a held packet), and a
 * retry of that PSN is NAKed again (protocol.rst "Ordering";
 * test_responder.c resp_held_write_mr_gone_fails_visibly,
 * resp_write_after_pending_send_inv_not_placed).
 */
static void resp_late_fail(struct mrc_resp *r, const struct mrc_env *e,
			   u8 syn, u32 psn)
{
	r->nak_psn = psn;
	r->nak_syn = syn;
	mrc_resp_send_ack(r, e, syn, psn);
	resp_fail(r, e, resp_syn_event(syn));
}

/*
 * Has cum reached the WRITE packet refused for an earlier SEND_WITH_INV
 * (resp_place_write)? Every request before it is placed and every
 * message before it completed, the SEND_WITH_INV's invalidation
 * included: NAK it now. If cum passed it instead (it was placed after
 * all: the consumer made the rkey valid again before its retransmission
 * arrived, which IB's order allows too), forget it.
 */
static bool resp_inv_nak_due(struct mrc_resp *r)
{
	if (!r->inv_nak || mrc_seq_lt(r->rx.cum, r->inv_nak_psn))
		return false;
	r->inv_nak = 0;
	return r->rx.cum == r->inv_nak_psn;
}

static enum mrc_resp_state resp_go(const struct mrc_env *e,
				   enum mrc_resp_state from,
				   enum mrc_resp_state to)
{
	if (e->ops->transition)
		e->ops->transition(e->ctx, MRC_ENG_RESP, from, to);
	return to;
}

/* -------------------------------------------------------------- UC */

/*
 * protocol.rst "Unreliable connected (UC)". Nothing is acknowledged: a
 * packet is placed or dropped at once; a message completes when all its
 * bytes are placed, and is abandoned (counted) when a later message
 * shows up first.
 */

static void resp_uc_count_drops(const struct mrc_env *e, u32 n)
{
	if (n && e->ops->count)
		e->ops->count(e->ctx, MRC_CNT_UC_DROP, n);
}

static bool uc_bit(const struct mrc_uc_rx *u, u32 psn)
{
	return u->seen[(psn % MRC_WND) / 64] & (1ULL << (psn % 64));
}

static void uc_set(struct mrc_uc_rx *u, u32 psn, bool on)
{
	u64 *w = &u->seen[(psn % MRC_WND) / 64];

	if (on)
		*w |= 1ULL << (psn % 64);
	else
		*w &= ~(1ULL << (psn % 64));
}

/* Duplicate filter: MRC_RX_NEW (now marked), MRC_RX_DUP or MRC_RX_OOW. */
static enum mrc_rx_verdict resp_uc_filter(struct mrc_uc_rx *u, u32 psn)
{
	u32 i;

	if (mrc_seq_geq(psn, u->top)) {
		/* forward, however far: the sender never waits */
		if (psn - u->top >= MRC_WND)
			memset(u->seen, 0, sizeof(u->seen));
		else
			for (i = u->top; i != psn; i++)
				uc_set(u, i, false);
		u->top = psn + 1;
		uc_set(u, psn, true);
		return MRC_RX_NEW;
	}
	if (u->top - psn > MRC_WND)
		return MRC_RX_OOW;
	if (uc_bit(u, psn))
		return MRC_RX_DUP;
	uc_set(u, psn, true);
	return MRC_RX_NEW;
}

/* The message the current one's receive WQE is held for, or NULL. */
static struct mrc_rslot *resp_uc_wqe(struct mrc_resp *r)
{
	return r->rmsn_pop != r->rmsn_done ? resp_rslot(r, r->rmsn_done) :
	       NULL;
}

/*
 * The receive WQE at the head of the queue, taken (once) for the current
 * message and kept until a message completes it: NULL when none is
 * posted, or on a local error (the QP fails).
 */
static struct mrc_rslot *resp_uc_take(struct mrc_resp *r,
				      const struct mrc_env *e)
{
	struct mrc_rslot *s = resp_uc_wqe(r);
	int res;

	if (s)
		return s;
	s = resp_rslot(r, r->rmsn_pop);
	memset(s, 0, sizeof(*s));
	res = e->ops->rq_pop(e->ctx, r->rmsn_pop & (MRC_RSLOTS - 1),
			     &s->wr_id, &s->length);
	if (res == MRC_RQ_EMPTY)
		return NULL;
	if (res == MRC_RQ_CORRUPT) {
		resp_fail(r, e, MRC_QPE_KEEP);
		return NULL;
	}
	s->msn = r->rmsn_pop++;
	s->used = 1;
	if (res != MRC_RQ_OK) {
		/* a bad WQE: a local error, it completes in error */
		resp_post_rcqe(r, e, s, s->msn & (MRC_RSLOTS - 1),
			       MRC_WC_LOC_QP_OP_ERR);
		s->used = 0;
		r->rmsn_done++;
		resp_fail(r, e, MRC_QPE_KEEP);
		return NULL;
	}
	return s;
}

/* Complete the held receive WQE with @status; errors end the QP. */
static void resp_uc_post(struct mrc_resp *r, const struct mrc_env *e,
			 struct mrc_rslot *s, u8 status)
{
	resp_post_rcqe(r, e, s, r->rmsn_done & (MRC_RSLOTS - 1), status);
	s->used = 0;
	r->rmsn_done++;
	if (status != MRC_WC_SUCCESS)
		resp_fail(r, e, MRC_QPE_KEEP);
}

static void resp_uc_drop_msg(struct mrc_resp *r, const struct mrc_env *e)
{
	r->uc.bad = 1;
	resp_uc_count_drops(e, 1);
}

/* Start message @p->msn (every earlier one is done or given up). */
static void resp_uc_start(struct mrc_resp *r, const struct mrc_env *e,
			  const struct mrc_pkt *p, u32 msn)
{
	struct mrc_uc_rx *u = &r->uc;
	bool send = p->opcode == MRC_OP_SEND || p->opcode == MRC_OP_SEND_IMM;
	struct mrc_rslot *s;

	u->active = 1;
	u->bad = 0;
	u->msn = msn;
	u->opcode = p->opcode;
	u->msg_len = send ? p->send.msg_len : p->write.msg_len;
	u->imm = send ? p->send.imm : p->write.imm;
	u->placed = 0;
	u->solicited = 0;
	if (!send)
		return;
	s = resp_uc_take(r, e);
	/* no WQE (no RNR on UC), or too small: the message is dropped */
	if (!s || u->msg_len > s->length)
		resp_uc_drop_msg(r, e);
}

/* The current message has all its bytes: complete it. */
static void resp_uc_done(struct mrc_resp *r, const struct mrc_env *e)
{
	struct mrc_uc_rx *u = &r->uc;
	struct mrc_rslot *s;

	u->active = 0;
	u->msn++;
	if (u->opcode == MRC_OP_WRITE)
		return;
	s = resp_uc_take(r, e);		/* SEND*: held since the start */
	if (!s) {
		resp_uc_count_drops(e, 1);	/* WRITE_IMM without a WQE */
		return;
	}
	s->msg_len = u->msg_len;
	s->opcode = u->opcode == MRC_OP_WRITE_IMM ?
		    MRC_WC_RECV_RDMA_WITH_IMM : MRC_WC_RECV;
	s->wc_flags = u->opcode == MRC_OP_SEND ? 0 : MRC_WCF_WITH_IMM;
	s->imm = s->wc_flags ? resp_imm_net(u->imm) : 0;
	s->solicited = u->solicited;
	resp_uc_post(r, e, s, MRC_WC_SUCCESS);
}

static void resp_uc_place(struct mrc_resp *r, const struct mrc_env *e,
			  const struct mrc_pkt *p, const struct mrc_src *src)
{
	struct mrc_uc_rx *u = &r->uc;
	bool send = p->opcode == MRC_OP_SEND || p->opcode == MRC_OP_SEND_IMM;
	u32 off = send ? p->send.offset : p->write.offset;
	struct mrc_rslot *s;
	void *mr;
	int err;

	if (u->placed + p->payload_len > u->msg_len) {
		resp_uc_drop_msg(r, e);
		return;
	}
	if (send) {
		s = resp_uc_wqe(r);
		if (!s) {
			resp_uc_drop_msg(r, e);
			return;
		}
		err = p->payload_len ?
		      e->ops->rq_copy(e->ctx, r->rmsn_done & (MRC_RSLOTS - 1),
				      off, src, p->payload_len) : 0;
		if (err == MRC_COPY_PROT) {
			/* the WQE's own scatter list: a local error */
			resp_uc_post(r, e, s, MRC_WC_LOC_PROT_ERR);
			u->active = 0;
			return;
		}
		if (err) {
			resp_uc_drop_msg(r, e);
			return;
		}
	} else {
		/* as RC: the QP's right, then the whole message's range */
		mr = (r->cfg.qp_access & MRC_ACC_REMOTE_WRITE) ?
		     e->ops->mr_get(e->ctx, p->write.rkey, true,
				    MRC_ACC_REMOTE_WRITE, p->write.va,
				    p->write.msg_len) : NULL;
		if (!mr) {
			resp_uc_drop_msg(r, e);
			return;
		}
		err = p->payload_len ?
		      e->ops->mr_write(e->ctx, mr, p->write.va + off, src,
				       p->payload_len) : 0;
		e->ops->mr_put(e->ctx, mr);
		if (err) {
			resp_uc_drop_msg(r, e);
			return;
		}
	}
	u->placed += p->payload_len;
	if ((p->flags & MRC_F_LAST) && (p->flags & MRC_F_SOLICIT))
		u->solicited = 1;
	if (u->placed == u->msg_len)
		resp_uc_done(r, e);
}

static unsigned int resp_uc_rx(struct mrc_resp *r, const struct mrc_env *e,
			       const struct mrc_pkt *p, const void *pkt)
{
	struct mrc_src src = { .pkt = pkt, .buf = NULL, .off = p->hdr_len };
	struct mrc_uc_rx *u = &r->uc;
	enum mrc_rx_verdict v;
	bool send;
	u32 msn;

	r->rx_pkts++;
	if (!(p->flags & MRC_F_UC))
		return 0;		/* RC on a UC QP: the kernel drops it */
	v = resp_uc_filter(u, p->psn);
	if (v != MRC_RX_NEW) {
		resp_count(e, v == MRC_RX_DUP ? MRC_CNT_DUPLICATE :
			   MRC_CNT_OUT_OF_WINDOW);
		return 0;
	}
	send = p->opcode == MRC_OP_SEND || p->opcode == MRC_OP_SEND_IMM;
	msn = send ? p->send.rmsn : p->write.rmsn;
	if (mrc_seq_lt(msn, u->msn))
		return 0;		/* its message is done or given up */
	if (!u->active || msn != u->msn) {
		/* a later message: the current one is lost, and the skipped */
		resp_uc_count_drops(e, (u->active && !u->bad ? 1 : 0) +
				    (msn - u->msn - (u->active ? 1 : 0)));
		resp_uc_start(r, e, p, msn);
	} else if (!u->bad &&
		   (p->opcode != u->opcode ||
		    (send ? p->send.msg_len : p->write.msg_len) != u->msg_len ||
		    (send ? p->send.imm : p->write.imm) != u->imm)) {
		resp_uc_drop_msg(r, e);
	}
	if (u->active && !u->bad && mrc_resp_ready(r))
		resp_uc_place(r, e, p, &src);
	return 0;
}

unsigned int mrc_resp_rx(struct mrc_resp *r, const struct mrc_env *e,
			 const struct mrc_pkt *p, const void *pkt, bool ce)
{
	enum mrc_resp_state st = MRC_RESP_CHECK_ACCESS, next = MRC_RESP_DONE;
	struct mrc_src src = { .pkt = pkt, .buf = NULL, .off = p->hdr_len };
	enum mrc_rx_verdict v;
	unsigned int ret = 0;
	const struct mrc_rslot *f;
	u8 syn = MRC_SYN_ACK, held_syn = 0;
	int res = RESP_DROP;
	u32 need, fail_psn = 0;
	bool refused = false, failed = false;

	if (r->cfg.uc)
		return resp_uc_rx(r, e, p, pkt);
	while (st != MRC_RESP_DONE) {
		switch (st) {
		case MRC_RESP_CHECK_ACCESS:
			/*
			 * Not a void request (an ended epoch's, at or after
			 * its void point): it is not checked, its resend is.
			 */
			need = resp_req_access(p->opcode);
			if (need && !(r->cfg.qp_access & need) &&
			    mrc_rx_check(&r->rx, p->psn) == MRC_RX_NEW &&
			    !resp_voided(r, p)) {
				syn = MRC_SYN_REM_ACCESS;
				next = MRC_RESP_NAK;
			} else {
				next = MRC_RESP_CLASSIFY;
			}
			break;
		case MRC_RESP_CLASSIFY:
			v = mrc_rx_on_packet(&r->rx, p, ce, resp_now(e));
			r->rx_pkts++;
			if (ce)
				resp_count(e, MRC_CNT_ECN_MARKED);
			if (v == MRC_RX_DUP)
				resp_count(e, MRC_CNT_DUPLICATE);
			else if (v == MRC_RX_OOW)
				resp_count(e, MRC_CNT_OUT_OF_WINDOW);
			else if (p->psn != r->rx.cum)
				resp_count(e, MRC_CNT_OUT_OF_ORDER);
			next = v == MRC_RX_NEW ? MRC_RESP_DISPATCH :
			       MRC_RESP_ACK;
			break;
		case MRC_RESP_DISPATCH:
			/*
			 * Version 2: the peer's cumulative ACK of our PSN
			 * space, applied before the packet is placed (the
			 * application sees what it retired first). Only a
			 * new packet's: a duplicate may be a leftover of the
			 * QP's previous life. If completing our WQEs failed
			 * the QP (a local error), the packet is not placed.
			 */
			if ((p->flags & MRC_F_CUMACK) && e->ops->comp_cum &&
			    e->ops->comp_cum(e->ctx, p->cum_lo)) {
				next = MRC_RESP_DONE;
				break;
			}
			/* a request at or after a failed one waiting (fnak) */
			if (r->fnak && !mrc_op_is_response(p->opcode) &&
			    mrc_seq_geq(p->psn, r->fnak_psn)) {
				next = MRC_RESP_ACK;	/* what is here */
				break;
			}
			/* not a WRITE's bytes (yet); placing says otherwise */
			mrc_wo_record(&r->wo, p->psn, 0, 0, 0);
			if (!mrc_op_is_response(p->opcode)) {
				if (p->epoch == r->epoch) {
					r->epoch_seen = 1;
				} else if (resp_voided(r, p)) {
					/* a refused epoch's: received, void */
					resp_count(e, MRC_CNT_VOIDED);
					res = RESP_PLACED;
					next = MRC_RESP_COMMIT;
					break;
				}
			}
			switch (p->opcode) {
			case MRC_OP_SEND:
			case MRC_OP_SEND_IMM:
			case MRC_OP_SEND_INV:
				next = MRC_RESP_PLACE_SEND;
				break;
			case MRC_OP_WRITE:
			case MRC_OP_WRITE_IMM:
				next = MRC_RESP_PLACE_WRITE;
				break;
			case MRC_OP_READ_REQ:
			case MRC_OP_CMP_SWAP:
			case MRC_OP_FETCH_ADD:
				next = MRC_RESP_QUEUE_RSP;
				break;
			case MRC_OP_READ_RESP:
			case MRC_OP_ATOMIC_RESP:
				next = MRC_RESP_PLACE_RESP;
				break;
			default:
				syn = MRC_SYN_INV_REQ;
				next = MRC_RESP_NAK;
				break;
			}
			break;
		case MRC_RESP_PLACE_SEND:
			res = resp_place_send(r, e, p, &src, &syn);
			next = res == RESP_PLACED ? MRC_RESP_COMMIT :
			       syn != MRC_SYN_ACK ? MRC_RESP_NAK : MRC_RESP_ACK;
			break;
		case MRC_RESP_PLACE_WRITE:
			res = resp_place_write(r, e, p, &src, &syn, false);
			next = res == RESP_PLACED ? MRC_RESP_COMMIT :
			       res == RESP_HOLD ? MRC_RESP_HOLD :
			       syn != MRC_SYN_ACK ? MRC_RESP_NAK : MRC_RESP_ACK;
			break;
		case MRC_RESP_HOLD:
			res = resp_hold(r, p, pkt);
			if (res == RESP_HELD) {
				ret |= MRC_RESP_HELD;
				next = MRC_RESP_COMMIT;
			} else {
				next = MRC_RESP_ACK;
			}
			break;
		case MRC_RESP_QUEUE_RSP:
			res = resp_queue_rsp(r, e, p, &syn);
			next = res == RESP_PLACED ? MRC_RESP_COMMIT :
			       MRC_RESP_NAK;
			break;
		case MRC_RESP_PLACE_RESP:
			/*
			 * Always committed. Its ACK is the delayed one, which
			 * the next request carries (version 2; version 1 sent
			 * it at once after the last response awaited).
			 */
			failed = e->ops->comp_resp(e->ctx, p, &src) &
				 MRC_COMP_FAILED;
			res = RESP_PLACED;
			next = MRC_RESP_COMMIT;
			break;
		case MRC_RESP_COMMIT:
			mrc_rx_commit(&r->rx, p->psn);
			mrc_resp_fnak_progress(r);
			/*
			 * The response failed the QP: it is in ERR from this
			 * PSN on, nothing after it completes (the QP's flush
			 * ends the receive WQEs).
			 */
			if (failed)
				next = MRC_RESP_DONE;
			else if (res == RESP_HELD)
				next = MRC_RESP_ACK;
			else if (r->nheld)
				next = MRC_RESP_RUN_HELD;
			else
				next = MRC_RESP_COMPLETE;
			break;
		case MRC_RESP_RUN_HELD:
			held_syn = resp_run_held(r, e, &fail_psn);
			next = MRC_RESP_COMPLETE;
			break;
		case MRC_RESP_COMPLETE:
			if (held_syn) {
				/*
				 * Only the messages before the held packet
				 * that failed complete; the requester flushes
				 * those after it, and so will the QP. One of
				 * them that completes in error before it is
				 * NAKed instead: the earlier failure.
				 */
				f = resp_rcomplete(r, e, fail_psn);
				if (f && mrc_seq_lt(resp_rslot_nak_psn(r, f),
						    fail_psn)) {
					held_syn = resp_status_syn(f->status);
					fail_psn = resp_rslot_nak_psn(r, f);
				}
				resp_late_fail(r, e, held_syn, fail_psn);
				next = MRC_RESP_DONE;
				break;
			}
			f = resp_rcomplete(r, e, r->rx.cum);
			if (f && (syn == MRC_SYN_ACK || !resp_rslot_of(p, f))) {
				/*
				 * A receive completed in error (its rkey could
				 * not be invalidated; a malformed WQE taken
				 * for a later message): NAK it, not the ACK
				 * owed nor a later error of this packet's. An
				 * error of this packet's own message is NAKed
				 * below, by its PSN.
				 */
				resp_late_fail(r, e, resp_status_syn(f->status),
					       resp_rslot_nak_psn(r, f));
				next = MRC_RESP_DONE;
				break;
			}
			if (!f && syn == MRC_SYN_ACK && resp_inv_nak_due(r)) {
				/* the invalidation before it executed */
				resp_late_fail(r, e, MRC_SYN_REM_ACCESS,
					       r->inv_nak_psn);
				next = MRC_RESP_DONE;
				break;
			}
			/* a queued READ/atomic may have become ready */
			if (mrc_resp_rsp_ready(r))
				ret |= MRC_RESP_TX;
			if (p->opcode == MRC_OP_READ_RESP ||
			    p->opcode == MRC_OP_ATOMIC_RESP) {
				e->ops->comp_progress(e->ctx);
				/* rd_atomic room may have opened */
				ret |= MRC_RESP_TX;
			}
			next = syn != MRC_SYN_ACK ? MRC_RESP_NAK :
			       MRC_RESP_ACK;
			break;
		case MRC_RESP_NAK:
			if (syn == MRC_SYN_RNR && !refused) {
				/*
				 * Version 3: the refused PSN is received, void
				 * (its epoch ends), so that it never pins the
				 * window; the NAK goes once it is committed.
				 */
				resp_refuse(r, e, p);
				refused = true;
				resp_count(e, MRC_CNT_VOIDED);
				res = RESP_PLACED;
				next = MRC_RESP_COMMIT;
				break;
			}
			/*
			 * As IB RC, in PSN order: every request before this
			 * one arrives and runs first, a READ/atomic accepted
			 * before it is answered first. The NAK waits until
			 * every earlier PSN is here and those responses are
			 * built (fnak); nothing after this PSN runs or is
			 * taken meanwhile. Not for a packet committed before
			 * it failed (a SEND longer than its receive): an ACK
			 * sent while waiting would cover it, and the
			 * requester complete it.
			 */
			if (syn != MRC_SYN_RNR && res != RESP_PLACED &&
			    resp_fnak_waits(r, p->psn)) {
				if (!r->fnak || mrc_seq_lt(p->psn, r->fnak_psn)) {
					r->fnak_psn = p->psn;
					r->fnak_syn = syn;
					r->fnak_ticks = 0;
				}
				r->fnak = 1;
				mrc_rspq_drop_from(&r->rspq, r->fnak_psn);
				ret |= MRC_RESP_TX;
				/* in place of the NAK, at once: what is here */
				mrc_resp_send_ack(r, e, MRC_SYN_ACK, 0);
				next = MRC_RESP_DONE;
				break;
			}
			resp_nak(r, e, p, syn);
			/*
			 * As IB RC: every error but RNR ends the QP, at once --
			 * access and request errors, and the responder's own
			 * (REM_OP: the receive WQE could not take the payload,
			 * a WRITE's copy failed). Nothing waits for earlier
			 * messages that are not complete: the requester the
			 * NAK ends resends none of their packets. The receive
			 * WQEs complete at the flush, in RQ order, the failed
			 * one with its own status (mrc_resp_flush).
			 */
			if (syn != MRC_SYN_RNR)
				resp_fail(r, e, resp_syn_event(syn));
			next = MRC_RESP_DONE;
			break;
		case MRC_RESP_ACK:
			if (r->rx.ack_rsp) {
				r->rx.ack_rsp = 0;
				if (res != RESP_PLACED ||
				    !resp_answers_now(r, p))
					r->rx.ack_now = 1;
				else
					r->ack_by_rsp = 1;
			}
			if (mrc_rx_ack_due(&r->rx))
				mrc_resp_send_ack(r, e, MRC_SYN_ACK, 0);
			else if (!r->ack_by_rsp)
				resp_ack_later(r, e);
			next = MRC_RESP_DONE;
			break;
		default:
			next = MRC_RESP_DONE;
			break;
		}
		st = resp_go(e, st, next);
	}
	/*
	 * A failed request whose earlier PSNs are all here now, and whose
	 * READs/atomics before it have no response to build (answered, or
	 * voided by an RNR refusal): nothing to wait for any more.
	 */
	if (mrc_resp_ready(r))
		resp_fnak_fire(r, e);
	return ret;
}

/* ----------------------------------------------- start, flush, reset */

/* Forget the held packets (the environment frees them). */
static void resp_release_held(struct mrc_resp *r, const struct mrc_env *e)
{
	u32 i;

	for (i = 0; i < r->nheld; i++)
		e->ops->release(e->ctx, r->held[i].pkt);
	r->nheld = 0;
}

/* Per-life state: receive WQEs, held packets, write order, NAK memory. */
static void resp_clear(struct mrc_resp *r, const struct mrc_env *e)
{
	resp_release_held(r, e);
	mrc_wo_init(&r->wo);
	memset(r->rslot, 0, sizeof(r->rslot));
	r->rmsn_done = 0;
	r->rmsn_pop = 0;
	r->rx_seg = 0;
	r->nak_psn = 0;
	r->nak_syn = 0;
	r->inv_nak = 0;
	r->inv_nak_psn = 0;
	r->fnak = 0;
	r->ack_by_rsp = 0;
	r->epoch = 0;
	r->epoch_seen = 1;
	memset(r->void_psn, 0, sizeof(r->void_psn));
	memset(r->void_msn, 0, sizeof(r->void_msn));
}

void mrc_resp_reset(struct mrc_resp *r, const struct mrc_env *e)
{
	r->qstate = MRC_RQS_OFF;
	resp_clear(r, e);
	mrc_rspq_init(&r->rspq);
	r->rsp_abort = 0;
}

void mrc_resp_start(struct mrc_resp *r, const struct mrc_env *e, u32 rq_psn,
		    u16 ack_every, u16 ack_hole)
{
	mrc_rx_init(&r->rx, rq_psn);
	r->rx.ack_every = ack_every;
	r->rx.ack_hole = ack_hole;
	resp_clear(r, e);
	/* UC: every PSN before rq_psn counts as received */
	memset(&r->uc, 0, sizeof(r->uc));
	memset(r->uc.seen, 0xff, sizeof(r->uc.seen));
	r->uc.top = rq_psn;
	r->qstate = MRC_RQS_READY;
}

void mrc_resp_flush(struct mrc_resp *r, const struct mrc_env *e, u32 more)
{
	struct mrc_rslot s;
	u32 slot;
	int res;

	/*
	 * The WQEs taken, in RQ order: one whose message failed (the error
	 * that ended the QP, waiting behind an earlier incomplete message)
	 * completes with that error, the others with WR_FLUSH_ERR.
	 */
	while (r->rmsn_done != r->rmsn_pop) {
		struct mrc_rslot *t = resp_rslot(r, r->rmsn_done);

		resp_post_rcqe(r, e, t, r->rmsn_done & (MRC_RSLOTS - 1),
			       t->status != MRC_WC_SUCCESS ? t->status :
			       MRC_WC_WR_FLUSH_ERR);
		t->used = 0;
		r->rmsn_done++;
	}
	/* still posted: one ring's worth at most, none if corrupt */
	slot = r->rmsn_pop & (MRC_RSLOTS - 1);
	for (; more; more--) {
		memset(&s, 0, sizeof(s));
		res = e->ops->rq_pop(e->ctx, slot, &s.wr_id, &s.length);
		if (res == MRC_RQ_EMPTY || res == MRC_RQ_CORRUPT)
			break;
		resp_post_rcqe(r, e, &s, slot, MRC_WC_WR_FLUSH_ERR);
	}
	resp_release_held(r, e);
	mrc_rspq_clear(&r->rspq);
}
