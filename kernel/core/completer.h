/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The completer engine: applies ACKs (cumulative + SACK + per-path
 * reports) to the scoreboard, feeds RTT samples, congestion and path
 * failure state, handles NAKs (RNR wait and retry count, remote errors),
 * places READ and atomic responses into the requester's local buffers,
 * completes send WQEs in posting order, and runs the response-wait timer
 * (a READ/atomic acknowledged but its response not yet in). It works on
 * the send side's state (struct mrc_req, requester.h) and acts through
 * the environment (engine.h).
 *
 * One ACK runs through the states of enum mrc_comp_state (reported to
 * env->ops->transition as engine MRC_ENG_COMP).
 */
#ifndef MRC_COMPLETER_H
#define MRC_COMPLETER_H

#include "requester.h"

enum mrc_comp_state {
	MRC_COMP_ANCHOR = 0,	/* PSN space not known yet: a PROBE's ACK */
	MRC_COMP_APPLY,		/* reordering windows, scoreboard */
	MRC_COMP_UNDO,		/* a timeout proved spurious: give cc back */
	MRC_COMP_PATHS,		/* RTT sample, per-path loss, replacement */
	MRC_COMP_PROGRESS,	/* cumulative progress: retries, TLP reset */
	MRC_COMP_NAK_RNR,	/* RNR NAK: retry count, back-off */
	MRC_COMP_NAK_ERR,	/* remote error NAK: fail the WQE */
	MRC_COMP_COMPLETE,	/* complete WQEs in order */
	MRC_COMP_REARM,		/* retransmission timer, want_tx */
	MRC_COMP_DONE,
	MRC_COMP_NSTATES
};

/*
 * An ACK arrived. @rsp_waiting: the responder has READ/atomic responses
 * queued (only then may an ACK anchor an unanchored PSN space: it answers
 * our PROBE). Returns 0, or -1 for an ACK that refers to PSNs never sent
 * (dropped whole).
 */
int mrc_comp_ack(struct mrc_req *q, const struct mrc_env *e,
		 const struct mrc_ack_info *a, bool rsp_waiting);

/*
 * A READ_RESP or ATOMIC_RESP, new in the incoming PSN space: place it
 * into the local SGEs of its WQE (payload at @src); it acknowledges its
 * request and every PSN before (protocol.rst "Implicit
 * acknowledgement"). It is committed whatever happens (a stale or
 * mismatched response is committed and ignored). Returns 0, or
 * MRC_COMP_ACK_NOW when it completed the last READ/atomic awaited: its
 * ACK should go at once, not delayed (protocol.rst "ACK policy"), and
 * MRC_COMP_FAILED when it failed the QP (the fatal NAK whose wait it
 * ended, an error WQE it let complete): nothing of the peer's after its
 * PSN may complete.
 */
#define MRC_COMP_ACK_NOW	1
#define MRC_COMP_FAILED		2
int mrc_comp_resp(struct mrc_req *q, const struct mrc_env *e,
		  const struct mrc_pkt *p, const struct mrc_src *src);

/*
 * A new packet of the peer carried its cumulative ACK of our PSN space
 * (MRC_F_CUMACK; protocol.rst "Cumulative ACK on reverse data"): the full
 * PSN is una + (u16)(cum_lo - una). One outside [una, nxt] is ignored;
 * else it is applied as an ACK with only cum_psn (no SACK, path records,
 * DSACK or echo: no RTT sample). Returns 0 if applied, -1 if ignored.
 */
int mrc_comp_cum(struct mrc_req *q, const struct mrc_env *e, u16 cum_lo);

/*
 * Complete send WQEs in posting order: a WQE is done when all its PSNs
 * are cumulatively acknowledged and, for READ/atomic, its response has
 * been placed. An error WQE completes (with its status) once it is the
 * oldest; the QP then goes to ERR.
 */
void mrc_comp_complete(struct mrc_req *q, const struct mrc_env *e);

/*
 * The retransmission timer fired with every request acknowledged but
 * READ/atomic responses still awaited: PROBE the oldest (probe_due), or
 * fail it RETRY_EXC_ERR after the retry rules' silence.
 */
void mrc_comp_resp_timer(struct mrc_req *q, const struct mrc_env *e);

/* Give up on a silent peer? (retry_cnt timeouts and that much silence) */
bool mrc_comp_give_up(const struct mrc_req *q, u64 now);

/* Fail the oldest WQE with @status; the QP goes to ERR. */
void mrc_comp_fail_oldest(struct mrc_req *q, const struct mrc_env *e,
			  u8 status);

/*
 * Retransmission timer, shared with the requester. rto_us: the largest
 * path RTO; rto_interval: the next RTO (floors, IB timeout cap); arm:
 * (re)arm MRC_TIMER_RTO while PSNs are outstanding -- a tail-loss probe
 * first, then RTOs -- or while responses are awaited. @restart:
 * something new was delivered.
 */
u32 mrc_req_rto_us(const struct mrc_req *q);
u32 mrc_req_rto_interval(const struct mrc_req *q);
void mrc_req_arm_rto(struct mrc_req *q, const struct mrc_env *e,
		     bool restart);

/*
 * The retransmission timer itself (struct mrc_req.rto_due). set: due in
 * @us from now; the environment's timer is armed only if it is not
 * armed already for that time or earlier. stop: not due any more (the
 * environment's timer is left to fire). pending: due at some time.
 * fired: the environment's MRC_TIMER_RTO fired; true if the timer is
 * due (it then runs as before: mrc_req_timer(), or the send loop),
 * false if it fired early (armed again for rto_due) or was stopped.
 * forget: the environment cancelled its timer (QP reset, flush).
 */
void mrc_req_rto_set(struct mrc_req *q, const struct mrc_env *e, u32 us);
bool mrc_req_rto_fired(struct mrc_req *q, const struct mrc_env *e);

static inline void mrc_req_rto_stop(struct mrc_req *q)
{
	q->rto_on = 0;
}

static inline bool mrc_req_rto_pending(const struct mrc_req *q)
{
	return q->rto_on;
}

static inline void mrc_req_rto_forget(struct mrc_req *q)
{
	q->rto_on = 0;
	q->rto_hw_on = 0;
}

const char *mrc_comp_state_name(unsigned int s);

#endif /* MRC_COMPLETER_H */
