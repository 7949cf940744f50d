/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The send side of a QP: the state the requester (kernel/tx.c today;
 * segmentation, window and cc gating, retransmission, TLP/RTO, RNR
 * back-off, PROBE) and the completer (completer.h: ACKs, NAKs, READ and
 * atomic responses, WQE completion, the response-wait timer) share.
 *
 * One outgoing PSN space (struct mrc_sb) carries this QP's requests *and*
 * its READ/atomic responses; struct mrc_txd says how to (re)build the
 * packet of each outstanding PSN. Send WQEs live in a ring of kernel
 * copies (struct mrc_swqe, allocated by the environment): [sq_tail,
 * sq_seg) are segmented (or being segmented at sq_seg) and not completed,
 * [sq_seg, sq_head) fetched and not started.
 */
#ifndef MRC_REQUESTER_H
#define MRC_REQUESTER_H

#include "engine.h"
#include "sack.h"
#include "path.h"
#include "cc.h"

/* struct mrc_txd.kind (the response kinds are MRC_RSP_*, responder.h) */
#define MRC_TXD_REQ	1

/* How to (re)build the packet that carries one outgoing PSN. */
struct mrc_txd {
	u8 kind;
	u8 opcode;		/* enum mrc_opcode */
	u8 flags;		/* MRC_F_FIRST | LAST | SOLICIT */
	u8 gone;		/* READ response: mrc_req_resp_gone() count */
	u16 len;		/* payload bytes */
	u8 epoch;		/* REQ: the request epoch it was sent in */
	/*
	 * REQ: the responder voided it (an RNR refusal at or before it,
	 * protocol.rst "RNR and the request epoch"): still resent until
	 * acknowledged, but it completes nothing; its WQE is segmented
	 * again under new PSNs.
	 */
	u8 voided;
	u32 idx;		/* REQ: SQ index of the WQE */
	u32 offset;		/* byte offset within the message */
	u32 msg_len;
	u32 req_psn;		/* responses: PSN of the request */
	u32 rkey;		/* READ response */
	u64 va;			/* READ response: start; atomic: original value */
};

/* A scatter/gather element (== struct metaroce_sge). */
struct mrc_sge {
	u64 addr;
	u32 length;
	u32 lkey;
};

/* Kernel copy of a send WQE and its progress. */
struct mrc_swqe {
	u64 wr_id;
	u32 opcode;		/* the verbs opcode (IB_UVERBS_WR_*) */
	u32 send_flags;
	u32 num_sge;
	u32 inline_len;
	u32 imm;		/* network order, as in the WQE */
	u32 len;		/* message length */
	u64 remote_addr;
	u64 compare_add;
	u64 swap;
	u32 rkey;
	u32 ah_num, remote_qpn, remote_qkey;	/* UD */
	u32 msn;		/* receive message seq (SEND*, WRITE_IMM) */
	u32 first_psn;
	u32 last_psn;		/* valid once segmented */
	u32 seg_off;		/* next byte to segment */
	u32 resp_bytes;		/* READ: bytes received */
	u8 mrc_op;
	u8 segmented;		/* every packet has a PSN */
	u8 resp_done;		/* READ/atomic: response complete */
	u8 rd_atomic;		/* counts against max_rd_atomic */
	u8 signaled;
	u8 status;		/* enum mrc_wc_status; error completions */
	u8 rnr_left;
	u8 rewound;		/* an RNR switch made it unsent again */
	/* then num_sge struct mrc_sge, or inline_len bytes */
	union {
		struct mrc_sge sge[0];
		u8 inline_data[0];
	};
};

/* struct mrc_swqe.send_flags the engines look at (== IB_SEND_*) */
#define MRC_SEND_FENCE		(1U << 0)
#define MRC_SEND_SOLICITED	(1U << 2)

/* Configuration, refreshed by the environment before each call. */
struct mrc_req_cfg {
	u64 ib_timeout_us;	/* IB local ACK timeout, 0 = infinite */
	u32 rto_floor_us;	/* minimum RTO */
	/*
	 * Payload bytes per packet, the segment size: fixed from RTR to
	 * reset (protocol.rst "Segment size"; the peer's responder refuses
	 * a non-LAST WRITE packet of another size).
	 */
	u32 mtu;
	u32 max_rd_atomic;	/* READ/atomic WQEs in flight, 0 = 1 */
	u8 retry_cnt;
	u8 rnr_retry;		/* 7 = infinite */
	u8 ud;			/* UD/GSI: one datagram per WQE, no PSNs */
	/*
	 * UC: packets get PSNs but nothing is outstanding (no window, cc or
	 * timer; una follows nxt); a WQE completes once its last packet is
	 * built (protocol.rst "Unreliable connected (UC)").
	 */
	u8 uc;
	u8 running;		/* RTS/SQD: may start new requests */
	/*
	 * SQD: the send queue drains. The message being segmented goes on
	 * to its last packet; no new one starts (nor is a WQE fetched or a
	 * local operation run) until RTS clears it -- but one an RNR switch
	 * made unsent again (rewound) was started and goes. READ/atomic responses,
	 * retransmissions and completions go on (design.rst "Verbs
	 * coverage", SQD).
	 */
	u8 sqd;
};

/* Silence before RETRY_EXC_ERR is at least this long. */
#define MRC_GIVEUP_MIN_US	2000000

/*
 * The send side. The flags are documented fields of one state: each is
 * set and cleared by the rules given here, and the environment reads
 * only want_tx (and failed, through qp_error).
 */
struct mrc_req {
	struct mrc_req_cfg cfg;
	struct mrc_sb sb;
	struct mrc_paths paths;
	struct mrc_txd pkt[MRC_WND];	/* by psn % MRC_WND */

	/* send WQE ring (environment-allocated, nswq a power of two) */
	u8 *swq;
	u32 nswq, swqe_size;
	u32 sq_tail;		/* oldest WQE not completed */
	u32 sq_seg;		/* next WQE to segment */
	u32 sq_head;		/* next WQE to fetch from the ring */
	u32 smsn;		/* next receive message seq to assign */
	u8 epoch;		/* request epoch of new request packets */
	u32 rd_atomic_out;	/* READ/atomic WQEs awaiting responses */
	/*
	 * The highest cumulative point of an ACK packet applied (ack_cum_ok:
	 * one was), not of the implicit ACKs of responses and CUMACKs: one
	 * behind it is older and tells no epoch switch (comp_epoch()).
	 */
	u32 ack_cum_max;
	u8 ack_cum_ok;

	/*
	 * anchored: sb's initial PSN is known (RTS, or the ACK of a PROBE
	 * sent while responses wait in RTR). rnr_wait: an RNR NAK stopped
	 * requests (new and resent; responses go on) until MRC_TIMER_RNR
	 * fires. tlp_armed: MRC_TIMER_RTO
	 * is a tail-loss probe; tlp_done: one was sent since the last
	 * cumulative progress. stop_new: an error WQE is pending, no new
	 * request is sent (READ/atomic responses still are; a partly sent
	 * message is cut, MRC_REQS_CUT). failed: the QP is going to ERR
	 * (any engine, through qp_error); nothing more completes. want_tx: an ACK or response
	 * opened the window, the requester should run. probe_due: send a
	 * PROBE for probe_psn. undo_armed: a timeout reduced cc at undo_ts
	 * (tsval clock) and may prove spurious (cc_saved).
	 */
	u8 anchored, rnr_wait, tlp_armed, tlp_done;
	u8 stop_new, failed, want_tx, probe_due;
	u8 undo_armed;
	/*
	 * peer_err: a fatal NAK (REM_ACCESS, INV_REQ, REM_OP) said the
	 * responder went to ERR; nothing outstanding can complete any more:
	 * mrc_comp_complete() ends the QP (protocol.rst "Fatal NAK") once
	 * the responses of the READs/atomics before the NAKed WQE that the
	 * responder accepted are in, or one RTO passed (nak_flush).
	 * nak_idx: the NAKed WQE (nak_found), which keeps the NAK's status.
	 */
	u8 peer_err, nak_found, nak_flush;
	u32 nak_idx;
	u32 probe_psn;		/* oldest request awaiting its response */
	u32 retries;		/* timeouts without progress */
	u64 progress_us;	/* last cumulative progress */
	u64 heard_us;		/* last packet from the peer, any kind */
	u32 rto_armed_us;	/* interval of the pending RTO */
	/*
	 * The retransmission timer, kept lazily (rxe, TCP: "kick it down
	 * the road"): rto_on, it is due at rto_due (now_us clock); the
	 * environment's MRC_TIMER_RTO is armed (rto_hw_on) for rto_hw, never
	 * later than rto_due. Setting it later or stopping it leaves the
	 * environment's timer alone; when that fires early,
	 * mrc_req_rto_fired() arms it again for rto_due, or lets it go.
	 * Every hrtimer start or cancel of the CPU's earliest timer
	 * reprograms its clock event device: a packet no longer costs one.
	 */
	u8 rto_on, rto_hw_on;
	u64 rto_due, rto_hw;
	u32 undo_ts;
	struct mrc_cc_saved cc_saved[MRC_MAX_PATHS];
	/*
	 * Response time of READ/atomic requests (protocol.rst "Probe
	 * timeout of a READ/atomic request"): rsp_rtt estimates the time
	 * from a request's transmission to its first acknowledgement of
	 * any kind; it times the probe of a READ/atomic tail. rdw: the
	 * newest READ/atomic request (rdw_psn, sent at rdw_sent, tsval
	 * clock) is watched; rdw_retx: its retransmissions when the last
	 * ACK was applied. rdd: one that was retransmitted once and then
	 * acknowledged by a response's first transmission (rd_resp: the
	 * ACK being applied is such a response's) waits for a DSACK naming
	 * rdd_psn, which proves the original arrived: then rdd_us (its
	 * time to that response) is a sample.
	 */
	struct mrc_rtt rsp_rtt;
	u8 rdw, rdw_retx, rdd, rd_resp;
	u32 rdw_psn, rdw_sent;
	u32 rdd_psn, rdd_us;
};

static inline struct mrc_swqe *mrc_req_swqe(const struct mrc_req *q, u32 idx)
{
	return (struct mrc_swqe *)(q->swq +
		(size_t)(idx & (q->nswq - 1)) * q->swqe_size);
}

/* ------------------------------------------------ the requester engine */

struct mrc_resp;

/* What the requester decided to send (mrc_req_retx(), mrc_req_next()). */
struct mrc_req_out {
	u32 psn, ppsn;		/* MRC_REQ_PKT: build pkt[psn] with these */
	u8 path;
	u8 cause;		/* retransmission: enum mrc_sb_cause */
	u8 resp;		/* MRC_REQ_PKT: a READ/atomic response */
	u32 idx;		/* MRC_REQ_UD: the WQE to send */
};

/* Requester steps (mrc_req_next()). */
enum mrc_req_step {
	MRC_REQ_STOP = 0,	/* nothing (more) to send now */
	MRC_REQ_PKT,		/* build and send the packet of out->psn */
	MRC_REQ_UD,		/* send WQE out->idx as a datagram */
	MRC_REQ_AGAIN,		/* a WQE advanced without a packet: go on */
};

/* Per-step states of mrc_req_next() (coverage, MRC_ENG_REQ). */
enum mrc_req_state {
	MRC_REQS_PICK = 0,	/* response or request? */
	MRC_REQS_RESPOND,	/* run the READ/atomic head, describe a packet */
	MRC_REQS_FETCH,		/* take posted WQEs (env sq_fetch) */
	MRC_REQS_ERR_WQE,	/* an invalid WQE: stop new sends, complete it */
	MRC_REQS_LOCAL,		/* a local operation (env local_op) */
	MRC_REQS_UD,		/* a datagram */
	MRC_REQS_SEGMENT,	/* the next packet of the WQE at sq_seg */
	MRC_REQS_UC,		/* the next packet of a UC WQE: no window */
	MRC_REQS_BLOCKED,	/* fence, rd_atomic, window, paths, epoch */
	MRC_REQS_CUT,		/* stop_new: end a partly sent message */
	MRC_REQS_DONE,
	MRC_REQS_NSTATES
};

/*
 * The next lost PSN to resend, accounted on a path: 0 and @o (psn, ppsn,
 * path, cause), or -1 when nothing is lost or no path has room. Never
 * one of a failed WQE; during an RNR wait only response PSNs.
 */
int mrc_req_retx(struct mrc_req *q, const struct mrc_env *e,
		 struct mrc_req_out *o);

/*
 * The PSN a tail-loss probe resends: the newest outstanding one (not
 * SACKed) that is not a failed WQE's. 0, or -1 when there is none.
 */
int mrc_req_tlp_psn(const struct mrc_req *q, u32 *psn);

/*
 * One step of sending new packets: the READ/atomic responses of @r
 * between messages, then the segments of the send WQEs in order (none
 * during an RNR wait or with an error WQE pending). Returns
 * enum mrc_req_step. A MRC_REQ_PKT response whose packet cannot be built
 * (its MR went away: @r->rsp_abort) ends the round.
 */
int mrc_req_next(struct mrc_req *q, struct mrc_resp *r,
		 const struct mrc_env *e, struct mrc_req_out *o);

/*
 * WQE @w, already handed on (MRC_REQ_UD: a datagram), failed in the
 * environment with @status (its packet could not be built: too long, a
 * bad AH, an unreadable payload). It is an error WQE like any other: it
 * keeps its first error status and completes with it once every WQE
 * before it has; nothing after it starts (stop_new). The environment
 * calls this before it takes the next step (protocol.rst "Error
 * completions").
 */
void mrc_req_wqe_failed(struct mrc_req *q, struct mrc_swqe *w, u8 status);

/*
 * Is the oldest request awaiting its ACK of an epoch MRC_EPOCHS / 2 or
 * more behind the QP's? Then no new message starts until it is
 * acknowledged: a responder tells epochs apart modulo MRC_EPOCHS, and a
 * new epoch begins only with the refusal of a new request (protocol.rst
 * "RNR and the request epoch").
 */
bool mrc_req_epoch_behind(const struct mrc_req *q);

/*
 * SQD's drained state: every message started has completed (none is
 * partly segmented, none awaits its ACK or response, none waits to be
 * sent again after an RNR switch). WQEs fetched but not started do not
 * count.
 */
bool mrc_req_drained(const struct mrc_req *q);

/*
 * MRC_TIMER_RTO fired (not during an RNR wait). A tail-loss probe marks
 * the newest outstanding PSN lost; an RTO marks lost the oldest packet of
 * each path silent for an interval, blames (backoff, cc, replacement) a
 * path only when it alone went silent, and gives up per
 * mrc_comp_give_up(); with nothing outstanding but responses awaited the
 * completer's response-wait timer runs.
 */
void mrc_req_timer(struct mrc_req *q, const struct mrc_env *e);

/* PROBEs a retransmitted READ response whose MR is gone may become. */
#define MRC_RESP_GONE_PROBES	4

/*
 * The retransmission of READ response @psn cannot be built: its MR is gone
 * (deregistered or invalidated since the first transmission). The peer may
 * hold the PSN already (only its ACK was lost; its READ may have completed
 * and legitimately invalidated the MR with SEND_WITH_INV). True: send a
 * PROBE (ACKREQ) instead, whose ACK retires the PSN if the peer has it;
 * false (MRC_RESP_GONE_PROBES were sent): the READ failed, abort it
 * (REM_ACCESS NAK of its request, the QP to ERR), as for a first
 * transmission. protocol.rst "READ and atomics".
 */
bool mrc_req_resp_gone(struct mrc_req *q, u32 psn);

/*
 * The segment size of a QP's life, chosen when it enters RTR (protocol.rst
 * "Segment size"): the path MTU @path_mtu in bytes (0: 1024) or, with
 * @fill (an RC QP whose path MTU is the device's active MTU), the larger
 * of it and what a netdev of MTU @ndev_mtu carries after @hdr header
 * bytes (IP, UDP, metaroce header, ICRC); 256 .. MRC_MAX_PAYLOAD.
 */
u32 mrc_seg_size(u32 path_mtu, bool fill, u32 ndev_mtu, u32 hdr);

/*
 * Does a packet of @seg payload bytes behind @hdr header bytes fit a
 * netdev of MTU @ndev_mtu? A QP whose segment size is fixed may take a
 * new address (modify_qp SQD -> SQD with an AV) only if it does.
 */
bool mrc_seg_fits(u32 seg, u32 hdr, u32 ndev_mtu);

const char *mrc_req_state_name(unsigned int s);

#endif /* MRC_REQUESTER_H */
