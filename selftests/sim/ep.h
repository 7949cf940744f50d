/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One QP's transport endpoint in the simulator, built from the core
 * pieces the module uses (mrc_sb + mrc_paths + cc + rtt for the PSN space
 * it sends, mrc_rx for the one it receives) with the retransmission,
 * ACK and RNR rules of kernel/tx.c and resp.c in simplified form. The
 * upper layer (a stream, the requester, the responder) plugs in through
 * struct ep_ops.
 *
 * Shadow state kept by the simulator for the invariants: every PSN this
 * endpoint committed (exactly once; cum never passes a PSN not
 * committed), and, at the peer's sender, no PSN retired (acked or SACKed)
 * that this endpoint has not committed.
 */
#ifndef SIM_EP_H
#define SIM_EP_H

#include "sim.h"

#define EP_MTU_MAX	1024

enum { EP_PLACED = 0, EP_DROP, EP_HELD };

struct ep;

struct ep_ops {
	/* Next new packet to send: fill opcode/flags/ext/payload, 1 = got */
	int (*next)(struct ep *e, struct mrc_pkt *p, u8 *payload);
	/* A NEW sequenced packet: EP_PLACED / EP_DROP / EP_HELD, *syn */
	int (*recv)(struct ep *e, const struct mrc_pkt *p, const u8 *payload,
		    u8 *syn);
	/* After a PLACED/HELD packet was committed (cum may have moved) */
	void (*committed)(struct ep *e, int r);
	/* Our sender's cumulative point advanced */
	void (*acked)(struct ep *e);
	/* A fatal NAK for one of our PSNs */
	void (*nak)(struct ep *e, u8 syn, u32 psn);
	/*
	 * Optional: version 3's RNR switch (protocol.rst "RNR and the
	 * request epoch"): the responder voided our request at @psn and
	 * every later one; make the WRs from the one of @psn on unsent
	 * again and return true with *@first the first PSN of that WR, or
	 * false if @psn names none.
	 */
	bool (*rewind)(struct ep *e, u32 psn, u32 *first);
	/* Optional: did we void our request @psn (rewind)? */
	bool (*voided)(struct ep *e, u32 psn);
	/* The QP went to error (give up, local error): flush */
	void (*error)(struct ep *e);
	/* Optional: the send side is the upper layer's (core completer) */
	void (*pump)(struct ep *e);
	void (*on_ack)(struct ep *e, const struct mrc_pkt *p);
	/* Optional: nothing outstanding, but responses awaited */
	bool (*waiting)(struct ep *e);
	/*
	 * Optional: the sequenced packets go to a receive engine of the
	 * upper layer's own (the core responder) instead of ep's mrc_rx.
	 */
	void (*rx_seq)(struct ep *e, const struct mrc_pkt *p,
		       const u8 *payload, bool ce);
};

struct ep_txslot {
	struct mrc_pkt p;
	bool voided;			/* by an RNR switch (rewind) */
	u8 payload[EP_MTU_MAX];
};

struct ep {
	u32 node, peer_node;
	u32 qpn, peer_qpn;
	struct ep *peer;
	const struct ep_ops *ops;
	void *up;			/* upper layer state */
	u32 life;			/* RESET generation */

	struct mrc_sb sb;
	struct mrc_rx rx;
	struct mrc_rx *rxp;		/* the receive window in use */
	struct mrc_paths paths;
	struct mrc_sb *sbp;		/* the scoreboard in use */
	struct mrc_paths *pathsp;	/* the paths in use */
	struct ep_txslot tx[MRC_WND];
	u32 isn_tx, isn_rx;
	struct sim_timer rto, ackt, rnrt;
	u64 rnr_until;
	u8 epoch;			/* request epoch of new requests */
	u64 last_progress;
	bool tlp_done;
	u32 nak_psn;
	u8 nak_syn;
	bool errored;
	u8 err_syn;			/* responder error: NAK everything */
	u32 err_psn;
	bool stale_ok;			/* a previous life's ACKs may arrive */
	bool fnak_seen;			/* a fatal NAK came, at fnak_psn */
	u32 fnak_psn;

	/* shadow: PSNs committed by rx, relative to isn_rx */
	u8 *seen;
	u32 seen_n;
	u32 checked_cum;		/* every PSN below it verified */
};

void ep_init(struct ep *e, u32 node, u32 peer_node, u32 qpn, u32 peer_qpn,
	     u32 isn_tx, u32 isn_rx, u32 npaths, const struct ep_ops *ops,
	     void *up);
void ep_free(struct ep *e);
/* Send what the window and the paths allow. */
void ep_pump(struct ep *e);
/* A parsed packet for this QP. */
void ep_on_pkt(struct ep *e, const struct mrc_pkt *p, const u8 *payload,
	       bool ce);
/* The QP goes to error; a responder error NAKs with @syn (0: silent). */
void ep_error(struct ep *e, u8 syn, u32 psn);
/* Invariants of the endpoint (after every event). */
void ep_check(struct ep *e);
/* Was @psn of our receive space committed? */
bool ep_seen(const struct ep *e, u32 psn);
/* Sender invariant after an ACK moved una from @old_una. */
void ep_saw_ack(struct ep *e, const struct mrc_ack_info *a);
void ep_check_retired(struct ep *e, u32 old_una);
/* A response to our request @req_psn acknowledges it (and before) */
void ep_resp_ack(struct ep *e, u32 req_psn);
/* A request the peer's application sees starts: the pending ACK first */
void ep_flush_ack(struct ep *e);
/* Shadow: @psn was committed now (fails if it was before). */
void ep_mark_seen(struct ep *e, u32 psn, bool voided);

extern u32 ep_mtu;		/* payload bytes per packet, this run */

#endif /* SIM_EP_H */
