/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The responder engine: everything a QP does with the sequenced packets
 * of its incoming PSN space (the peer's requests, and the responses to
 * this QP's own READs/atomics, which it hands to the completer).
 *
 * A packet is placed directly at its final address (WRITE: va + offset;
 * SEND: byte offset of the receive WQE its rmsn selects) in any order,
 * then committed to the receive window (sack.h); a packet that cannot be
 * placed now (no receive WQE: RNR; too much held) is left uncommitted so
 * the requester sends it again, and duplicates are never placed. A
 * WRITE's last packet that arrives before the rest of its message is
 * committed but held (the environment keeps the packet), and placed
 * once the rest is. Receive completions are posted in message order once
 * every byte of the message is placed. A WRITE packet never overwrites
 * the bytes of a WRITE of a later PSN that overtook it (worder.h). A
 * WRITE packet naming the rkey of an earlier SEND_WITH_INV that arrived
 * but has not completed is not placed (nor committed): it is NAKed once
 * the invalidation executed.
 * READ and atomic requests are checked, committed and queued in PSN
 * order (rspq.h); the requester executes each (mrc_resp_rsp_exec()) only
 * once every earlier PSN is placed (mrc_resp_rsp_ready()). Access and
 * request errors and the responder's own (REM_OP: a receive WQE that
 * cannot take its SEND) are NAKed and end the QP at once; RNR is NAKed
 * and the packet dropped. See protocol.rst, "Ordering", and design.rst,
 * "Engines".
 *
 * One packet runs through the states of enum mrc_resp_state (reported
 * to env->ops->transition); the QP-level state is enum mrc_resp_qstate.
 */
#ifndef MRC_RESPONDER_H
#define MRC_RESPONDER_H

#include "engine.h"
#include "sack.h"
#include "rspq.h"
#include "worder.h"

#define MRC_RSLOTS	32	/* receive WQEs being filled (pow2) */
#define MRC_HELD_MAX	16	/* WRITE last packets held back */
#define MRC_ACK_DELAY_US	100	/* delayed ACK */

/* struct mrc_rsp.kind */
#define MRC_RSP_READ	2
#define MRC_RSP_ATOMIC	3

/* Per-packet states (rxe style: the loop of mrc_resp_rx()). */
enum mrc_resp_state {
	MRC_RESP_CHECK_ACCESS = 0,	/* new request: the QP's access flags */
	MRC_RESP_CLASSIFY,	/* window verdict: new, duplicate, beyond */
	MRC_RESP_DISPATCH,	/* by opcode */
	MRC_RESP_PLACE_SEND,	/* SEND*: into its receive WQE */
	MRC_RESP_PLACE_WRITE,	/* WRITE*: into the MR, later PSNs' bytes kept */
	MRC_RESP_HOLD,		/* WRITE last packet before its prefix */
	MRC_RESP_QUEUE_RSP,	/* READ / atomic: checked, queued */
	MRC_RESP_PLACE_RESP,	/* response to our request: completer */
	MRC_RESP_COMMIT,	/* mark the PSN received */
	MRC_RESP_RUN_HELD,	/* place held packets whose prefix is done */
	MRC_RESP_COMPLETE,	/* post receive completions in order */
	MRC_RESP_NAK,		/* send / rate-limit a NAK; errors end the QP */
	MRC_RESP_ACK,		/* ACK policy: now, delayed, nothing */
	MRC_RESP_DONE,
	MRC_RESP_NSTATES
};

/* QP-level state of the responder. */
enum mrc_resp_qstate {
	MRC_RQS_OFF = 0,	/* RESET / INIT, or stopped (ERR) */
	MRC_RQS_READY,		/* RTR or later: packets are processed */
};

/* A receive WQE being filled by the packets of one message. */
struct mrc_rslot {
	u64 wr_id;
	u64 length;		/* of the WQE's scatter list */
	u32 msn;
	u32 msg_len;
	u32 placed;		/* payload bytes placed */
	u32 imm;		/* network order */
	u32 last_psn;		/* PSN of the LAST packet, once placed */
	u32 first_psn;		/* PSN of the first packet seen */
	u8 has_last;
	u8 used;
	u8 seen;		/* msg_len is known */
	u8 opcode;		/* MRC_WC_RECV* */
	u8 wc_flags;
	u8 status;		/* enum mrc_wc_status */
	u8 solicited;
};

/* A held WRITE last packet. */
struct mrc_held {
	struct mrc_pkt p;
	const void *pkt;	/* the environment's packet */
};

/* Configuration, set by the environment (RTR, modify, per packet). */
struct mrc_resp_cfg {
	u32 dest_qpn;		/* the peer QP, for ACKs */
	u32 max_dest_rd_atomic;
	u32 npaths;		/* ACKs go out on ts_path % npaths */
	u32 qp_access;		/* MRC_ACC_REMOTE_* the QP grants */
	u8 min_rnr_timer;	/* IB encoding, sent in RNR NAKs */
	u8 uc;			/* a UC QP (protocol.rst "Unreliable connected") */
};

/*
 * UC receive state: a duplicate filter over the PSNs and the one message
 * being received (protocol.rst "Unreliable connected (UC)").
 */
struct mrc_uc_rx {
	u32 top;		/* one past the highest PSN received */
	u64 seen[MRC_WND / 64];	/* PSNs in [top - MRC_WND, top) received */
	u32 msn;		/* the current message, else the next expected */
	u32 msg_len;		/* of the current message */
	u32 placed;		/* its payload bytes placed */
	u32 imm;		/* its immediate (host order) */
	u8 active;		/* a message is current */
	u8 bad;			/* it was dropped (and counted): ignore it */
	u8 opcode;		/* its wire opcode */
	u8 solicited;		/* its LAST packet asked for an event */
};

struct mrc_resp {
	u8 qstate;		/* enum mrc_resp_qstate */
	struct mrc_resp_cfg cfg;
	struct mrc_rx rx;	/* incoming PSN space */
	u32 rmsn_done;		/* next message to complete */
	u32 rmsn_pop;		/* next message to take a WQE for */
	u32 rx_seg;		/* peer's segment size (first WRITE non-LAST) */
	u32 nak_psn;		/* last NAKed PSN, to rate-limit */
	u8 nak_syn;
	/* a READ/atomic accepted earlier cannot be served: NAK it */
	u8 rsp_abort;
	u32 rsp_abort_psn;
	/*
	 * A WRITE packet was refused for a SEND_WITH_INV before it that has
	 * not completed (protocol.rst "Ordering"): NAK the earliest such
	 * PSN, inv_nak_psn, once cum reaches it.
	 */
	u8 inv_nak;
	u32 inv_nak_psn;
	/*
	 * A request failed on arrival (REM_ACCESS, INV_REQ, REM_OP) while a
	 * PSN before it was still missing or a READ/atomic accepted before
	 * it still had responses to send: IB executes in PSN order, so
	 * those go first. The earliest such PSN, fnak_psn, and its syndrome
	 * are NAKed -- and the QP fails -- once every PSN before it is here
	 * (end of mrc_resp_rx()) and no READ/atomic before it is queued
	 * (mrc_resp_rsp_abort(), after a requester pass); until then no
	 * request at or after it is taken.
	 */
	u8 fnak;
	u8 fnak_syn;
	u32 fnak_psn;
	/*
	 * Expiries of the QP's retransmission timer since the waiting NAK
	 * last saw progress (mrc_resp_fnak_tick()).
	 */
	u32 fnak_ticks;
	/*
	 * An ACK is owed that the response to the READ/atomic just queued
	 * will carry, in the requester pass that follows (MRC_RESP_TX): no
	 * delayed-ACK timer yet, mrc_resp_ack_settle() arms it if the pass
	 * ended without that response.
	 */
	u8 ack_by_rsp;
	/*
	 * The receive epoch (protocol.rst "RNR and the request epoch"): an
	 * RNR refusal of a request of the current epoch ends it. A request
	 * of an earlier epoch e at or after void_psn[e], or of a message at
	 * or after void_msn[e], is void: committed, never placed or run;
	 * the requester sends it again in a later epoch. epoch_seen: a
	 * request of the current epoch arrived (the requester switched);
	 * until then no packet carries CUMACK, which says nothing of the
	 * epoch and would let the requester retire voided PSNs.
	 */
	u8 epoch, epoch_seen;
	u32 void_psn[MRC_EPOCHS];
	u32 void_msn[MRC_EPOCHS];
	u32 nheld;
	struct mrc_rspq rspq;	/* READ/atomic requests, PSN order */
	struct mrc_rslot rslot[MRC_RSLOTS];
	struct mrc_held held[MRC_HELD_MAX];	/* arrival order */
	struct mrc_worder wo;	/* what later WRITE packets wrote */
	struct mrc_uc_rx uc;	/* cfg.uc: the UC responder */
	u64 rx_pkts;
};

/* mrc_resp_rx() result bits */
#define MRC_RESP_HELD	0x1	/* keep the packet until ops->release */
#define MRC_RESP_TX	0x2	/* the requester has something to send */

/* Clear everything (create, RESET, destroy); releases held packets. */
void mrc_resp_reset(struct mrc_resp *r, const struct mrc_env *e);

/*
 * RTR: the incoming PSN space starts at @rq_psn; ACK policy
 * (mrc_rx.ack_every, ack_hole). Clears the per-life state and makes the
 * responder READY.
 */
void mrc_resp_start(struct mrc_resp *r, const struct mrc_env *e, u32 rq_psn,
		    u16 ack_every, u16 ack_hole);

/* Stop processing (QP to ERR or RESET): state OFF. */
static inline void mrc_resp_stop(struct mrc_resp *r)
{
	r->qstate = MRC_RQS_OFF;
}

static inline bool mrc_resp_ready(const struct mrc_resp *r)
{
	return r->qstate == MRC_RQS_READY;
}

/*
 * The QP leaves the states that receive (RTR, RTS, SQD) because its owner
 * moves it to ERR or RESET or destroys it: send the pending ACK now, then
 * stop (state OFF). The messages that ACK covers were delivered -- the
 * application may have seen their completions and be closing because of
 * them -- and no timer of this QP fires again; version 2 leaves a
 * request's LAST packet to the delayed ACK (protocol.rst "ACK policy").
 */
void mrc_resp_leave(struct mrc_resp *r, const struct mrc_env *e);

/*
 * A sequenced packet arrived for a READY responder (not ACK, PROBE or
 * UD): headers parsed, from the peer; its payload is byte p->hdr_len of
 * @pkt. @ce: the IP header carried CE. Returns MRC_RESP_* bits. With
 * cfg.uc the packet is a UC one (MRC_F_UC, anything else is dropped):
 * placed or dropped at once, never acknowledged, NAKed or held, and the
 * QP fails only on a local error (its receive WQE).
 */
unsigned int mrc_resp_rx(struct mrc_resp *r, const struct mrc_env *e,
			 const struct mrc_pkt *p, const void *pkt, bool ce);

/*
 * Send an ACK (@syn MRC_SYN_ACK) or a NAK of @syn for @nak_psn now, with
 * the current cumulative point and SACK.
 */
void mrc_resp_send_ack(struct mrc_resp *r, const struct mrc_env *e, u8 syn,
		       u32 nak_psn);

/* The delayed-ACK timer fired. */
void mrc_resp_ack_timer(struct mrc_resp *r, const struct mrc_env *e);

/*
 * A packet for a responder that is not READY (the QP went to ERR): if it
 * is the retry (RETX or PROBE) of the request this responder NAKed for an
 * access, request or operation error, NAK it again -- the NAK may be what
 * the lossy fabric dropped -- and return true.
 */
bool mrc_resp_renak(struct mrc_resp *r, const struct mrc_env *e,
		    const struct mrc_pkt *p);

/*
 * READ/atomic execution, for the requester (it sends the responses in
 * this QP's own PSN space). ready: may the head of rspq run (every
 * earlier PSN placed, no earlier WRITE last packet held)? exec: run it --
 * an atomic operates once, a READ's range is checked again; non-zero: it
 * cannot be served (its MR went away), which marks rsp_abort. abort:
 * NAK such a request REM_ACCESS and end the QP.
 */
bool mrc_resp_rsp_ready(const struct mrc_resp *r);
int mrc_resp_rsp_exec(struct mrc_resp *r, const struct mrc_env *e,
		      struct mrc_rsp *q);
void mrc_resp_rsp_abort(struct mrc_resp *r, const struct mrc_env *e);

/*
 * The wait of a fatal NAK (fnak) is bounded. tick: the QP's
 * retransmission timer expired (after mrc_req_timer()); after @limit
 * ticks without progress the NAK goes and the QP fails, the responses
 * not built and the PSNs not here notwithstanding (protocol.rst "Fatal
 * NAK"). progress: a response packet was built (the requester); a
 * committed packet is progress too (mrc_resp_rx()).
 */
void mrc_resp_fnak_tick(struct mrc_resp *r, const struct mrc_env *e,
			u32 limit);
static inline void mrc_resp_fnak_progress(struct mrc_resp *r)
{
	r->fnak_ticks = 0;
}

/*
 * The end of a requester pass (the environment runs one after
 * mrc_resp_rx() returned MRC_RESP_TX, and calls this at the end of every
 * pass): an ACK owed that a READ/atomic response was to carry, and no
 * response carried, is left to the delayed-ACK timer. A pass that cannot
 * follow at once (the transmission goes to a worker) calls it before.
 */
void mrc_resp_ack_settle(struct mrc_resp *r, const struct mrc_env *e);

/*
 * The first packet of the response to the request at @req_psn is being
 * sent: it acknowledges every PSN up to @req_psn (protocol.rst "Implicit
 * acknowledgement"). If that is all the pending ACK would say, the ACK
 * is not sent (the delayed-ACK timer is cancelled).
 */
void mrc_resp_rsp_acks(struct mrc_resp *r, const struct mrc_env *e,
		       u32 req_psn);

/*
 * Version 2, protocol.rst "Cumulative ACK on reverse data". The
 * environment builds a sequenced packet @p of this QP (request or
 * response, first transmission or not): cum_fill sets MRC_F_CUMACK and
 * cum_lo (not for UC, nor while the responder is not READY). Once the
 * packet is built and handed down, cum_sent: if it said all the pending
 * ACK would, that ACK is not sent (the delayed-ACK timer is cancelled).
 */
void mrc_resp_cum_fill(const struct mrc_resp *r, struct mrc_pkt *p);
void mrc_resp_cum_sent(struct mrc_resp *r, const struct mrc_env *e,
		       const struct mrc_pkt *p);

/*
 * A request the peer's application will see (SEND*, WRITE_IMM) is about
 * to start: send the pending ACK first, unless the request itself can
 * carry it (mrc_rx_cum_carries(): it then arrives with the request). The application may react by
 * invalidating or deregistering memory whose READ responses that ACK
 * retires (protocol.rst "ACK policy").
 */
void mrc_resp_flush_ack(struct mrc_resp *r, const struct mrc_env *e);

/*
 * QP entered ERR: complete every receive WQE taken, in order -- with its
 * own error status if its message failed (LOC_LEN_ERR, LOC_PROT_ERR,
 * LOC_QP_OP_ERR, REM_INV_REQ_ERR), else FLUSH_ERR -- then up to @more
 * still posted ones (0 for an SRQ: its WQEs stay) with FLUSH_ERR; release
 * held packets and drop queued READ/atomics.
 */
void mrc_resp_flush(struct mrc_resp *r, const struct mrc_env *e, u32 more);

/* Names of the states, for coverage reports. */
const char *mrc_resp_state_name(unsigned int s);

#endif /* MRC_RESPONDER_H */
