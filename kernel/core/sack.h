/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reliability state of one QP direction.
 *
 * Receiver (struct mrc_rx): a MRC_WND-packet bitmap window starting at the
 * cumulative point (oldest PSN not yet received) for dedup and SACK, plus
 * per-path reports (highest PPSN, CE count) and the ACK policy. A PSN is
 * placed at most once: mrc_rx_on_packet() classifies, the data path places
 * only MRC_RX_NEW packets and then calls mrc_rx_commit().
 *
 * Sender (struct mrc_sb): scoreboard of the outstanding PSNs [una, nxt),
 * each with the path and PPSN it was last sent with. ACKs (cumulative +
 * SACK + per-path highest PPSN) mark packets delivered; a packet is lost
 * when a packet sent dupthresh or more PPSNs later on the *same* path was
 * received, so reordering between paths never triggers a retransmit.
 * Retransmissions that turn out spurious (DSACK, or an ACK echoing the
 * previous transmission's timestamp) widen that path's reordering window
 * (reo.h).
 *
 * Both structs are fixed-size, caller-allocated and never allocate.
 */
#ifndef MRC_SACK_H
#define MRC_SACK_H

#include "mrc_types.h"
#include "seq.h"
#include "hdr.h"
#include "reo.h"

/* ------------------------------------------------------------------ rx */

enum mrc_rx_verdict {
	MRC_RX_NEW = 0,	/* in window, not seen: place, then commit */
	MRC_RX_DUP,	/* already received: do not place, ACK */
	MRC_RX_OOW,	/* beyond the window: drop, ACK */
};

struct mrc_rx_path {
	u32 max_ppsn;	/* highest PPSN received on this path */
	u16 ce_count;	/* CE-marked packets received, mod 2^16 */
	u8 seen;	/* max_ppsn is valid */
	u8 dirty;	/* changed since the last ACK */
};

struct mrc_rx {
	u32 cum;			/* every PSN before it was received */
	u32 top;			/* 1 + highest PSN received (>= cum) */
	u64 bits[MRC_WND / 64];		/* bit psn % MRC_WND, psn in window */
	struct mrc_rx_path path[MRC_MAX_PATHS];
	u32 tsval;			/* to echo in tsecr */
	u64 ts_rx_us;			/* when that packet arrived */
	u8 ts_path;
	u8 dsack;			/* dsack_psn is valid */
	u32 dsack_psn;			/* latest duplicate since the last ACK */
	u8 ack_now;			/* an immediate ACK is due */
	/*
	 * The packet just received is a READ/atomic request whose LAST or
	 * ACKREQ asks for an ACK that its response may carry: the
	 * responder decides (ack_now, or the delayed ACK; protocol.rst
	 * "ACK policy").
	 */
	u8 ack_rsp;
	u8 carried;			/* pending ACKs reverse data replaced */
	u16 unacked;			/* packets since the last ACK */
	u16 ack_every;			/* ACK at least every N packets */
	u16 ack_hole;			/* ... every N while a hole is open */
};

/*
 * While a hole is open (a loss being repaired, or packets reordered by
 * the paths), packets are acknowledged every this many: the SACK bitmap
 * carries them all. Repairs (MRC_F_RETX) and the packet that closes the
 * last hole are acknowledged at once. ab.sh, one sitting, ib_write_bw
 * MiB/s with netem reorder 25% / loss 1%: an ACK for every gap opened or
 * filled (0.9 ACKs per data packet under reordering) 14.2 / 16.4; every
 * 4 past a hole 18.6 / 18.4; every 8 20.3 / 20.8.
 */
#define MRC_ACK_EVERY_HOLE	8

/* Default mrc_rx.ack_every. */
#define MRC_ACK_EVERY_DEFAULT	32

void mrc_rx_init(struct mrc_rx *rx, u32 isn);

/* Classify a PSN against the window; no state change. */
enum mrc_rx_verdict mrc_rx_check(const struct mrc_rx *rx, u32 psn);

/*
 * A sequenced packet arrived (headers parsed and valid for this QP). @ce:
 * the IP header carried ECN CE. Updates path reports and ACK policy and
 * returns the verdict. Does not mark the PSN received.
 */
enum mrc_rx_verdict mrc_rx_on_packet(struct mrc_rx *rx,
				     const struct mrc_pkt *p, bool ce,
				     u64 now_us);

/*
 * Mark @psn received after it was placed. Returns how far the cumulative
 * point advanced (0 if @psn was not MRC_RX_NEW or left a hole before it).
 */
u32 mrc_rx_commit(struct mrc_rx *rx, u32 psn);

/*
 * True if an ACK should be sent now; otherwise, while
 * mrc_rx_ack_pending(), keep a delayed-ACK timer armed.
 */
bool mrc_rx_ack_due(const struct mrc_rx *rx);
bool mrc_rx_ack_pending(const struct mrc_rx *rx);

/*
 * A sequenced packet just sent acknowledges everything the pending ACK
 * would (a READ/atomic response, protocol.rst "Implicit
 * acknowledgement"): nothing is pending any more.
 */
void mrc_rx_ack_carried(struct mrc_rx *rx);

/*
 * Version 2, protocol.rst "Cumulative ACK on reverse data": a sequenced
 * packet carries cum in cum_lo, and replaces the pending ACK if that says
 * nothing more (no SACK bit, no DSACK, no immediate ACK due) -- at most
 * MRC_CUMACK_MAX times in a row, then a real ACK (echo, path records)
 * goes anyway.
 */
#define MRC_CUMACK_MAX	16
bool mrc_rx_cum_carries(const struct mrc_rx *rx);
/* A packet carrying cum was sent and replaced the pending ACK. */
void mrc_rx_cum_carried(struct mrc_rx *rx);

/* Free receive-window slots beyond the highest PSN received. */
u16 mrc_rx_rwnd(const struct mrc_rx *rx);

/* Write the SACK bitmap relative to rx->cum (bit i = cum + i). */
void mrc_rx_sack(const struct mrc_rx *rx, u8 sack[MRC_SACK_BYTES]);

/*
 * Fill a positive ACK (cum, SACK, tsecr/ack_delay, rwnd, dirty path
 * reports, the latest duplicate as DSACK if it is within +-32767 of cum)
 * and reset the ACK policy. fair_share is left 0 for the caller.
 */
void mrc_rx_build_ack(struct mrc_rx *rx, struct mrc_ack_info *a, u64 now_us);

/* ------------------------------------------------------------------ tx */

enum mrc_sb_state {
	MRC_SB_FREE = 0,	/* outside [una, nxt) */
	MRC_SB_INFLIGHT,	/* sent, not known delivered or lost */
	MRC_SB_SACKED,		/* selectively acknowledged */
	MRC_SB_LOST,		/* to be retransmitted */
};

/* Why an entry is in MRC_SB_LOST (struct mrc_sb_ent.cause). */
enum mrc_sb_cause {
	MRC_LOSS_NONE = 0,
	MRC_LOSS_ACK,		/* per-path loss rule on an ACK */
	MRC_LOSS_RTO,		/* retransmission timeout */
	MRC_LOSS_PATH,		/* its path was declared blackholed */
	MRC_LOSS_TLP,		/* tail-loss probe */
	MRC_LOSS_NAK,		/* RNR NAK */
};

struct mrc_sb_ent {
	u32 ppsn;	/* PPSN of the latest transmission */
	u32 sent_us;	/* time of the latest transmission, mod 2^32 */
	u32 prev_us;	/* time of the transmission before it (retx > 0) */
	u32 cookie;	/* caller's handle (e.g. WQE index) */
	u8 path;	/* path of the latest transmission */
	u8 state;	/* enum mrc_sb_state */
	u8 retx;	/* retransmissions so far (saturating) */
	u8 cause;	/* enum mrc_sb_cause of the latest loss mark */
	u8 lost_path;	/* path it was on when last marked lost */
	u8 spurious;	/* its retransmission was found spurious */
};

struct mrc_sb {
	u32 una;			/* oldest PSN not cumulatively acked */
	u32 nxt;			/* next new PSN */
	u32 nlost;			/* entries in MRC_SB_LOST */
	u32 dupthresh;			/* per-path reorder tolerance (PPSNs) */
	u32 path_nxt[MRC_MAX_PATHS];	/* next PPSN per path */
	u32 path_hi[MRC_MAX_PATHS];	/* highest PPSN known received */
	u16 path_ce[MRC_MAX_PATHS];	/* last CE count reported per path */
	u16 inflight[MRC_MAX_PATHS];	/* INFLIGHT entries per path */
	u32 path_hi_valid;		/* bitmask of valid path_hi */
	/*
	 * Time-based loss rule (RACK-like): send time of the latest
	 * original transmission known delivered, per path, and the
	 * reordering window the caller sets per path (0: count rule only).
	 */
	u32 path_del_us[MRC_MAX_PATHS];
	u32 path_del_valid;		/* bitmask of valid path_del_us */
	u32 path_sent_us[MRC_MAX_PATHS];	/* latest send per path */
	u32 path_sent_valid;		/* bitmask of valid path_sent_us */
	u32 reo_wnd_us[MRC_MAX_PATHS];
	/* adaptive part of reo_wnd_us (mrc_sb_set_reo_wnd()) */
	struct mrc_reo reo[MRC_MAX_PATHS];
	struct mrc_sb_ent ent[MRC_WND];	/* indexed by psn % MRC_WND */
};

#define MRC_DUPTHRESH_DEFAULT	3

/* Result of mrc_sb_apply_ack(), per path. */
struct mrc_sb_ack_res {
	u32 newly_acked;		/* delivered for the first time */
	u32 newly_lost;			/* marked lost by this ACK */
	u32 cum_advance;		/* PSNs una moved forward */
	u32 spurious;			/* retransmissions found spurious */
	u16 acked[MRC_MAX_PATHS];	/* newly delivered, by path */
	u16 lost[MRC_MAX_PATHS];	/* newly lost, by path */
	u16 ce[MRC_MAX_PATHS];		/* new CE marks reported, by path */
};

/* Initial PSN @isn; PPSNs of every path start at @ippsn. */
void mrc_sb_init(struct mrc_sb *sb, u32 isn, u32 ippsn, u32 dupthresh);

/*
 * Set @path's reordering window from its RTT estimator: @base_us
 * (mrc_rtt_reo_wnd(), 0 = count rule only) widened by the adaptive
 * part (mrc_reo_wnd(): steps of SRTT/4, at most SRTT).
 */
void mrc_sb_set_reo_wnd(struct mrc_sb *sb, u32 path, u32 base_us,
			u32 srtt_us);

/* PSNs outstanding (sent, not cumulatively acked). */
static inline u32 mrc_sb_outstanding(const struct mrc_sb *sb)
{
	return sb->nxt - sb->una;
}

/* Room for a new PSN in the MRC_WND window. */
static inline bool mrc_sb_can_send(const struct mrc_sb *sb)
{
	return mrc_sb_outstanding(sb) < MRC_WND;
}

/*
 * Account a new packet sent on @path: returns 0 and its PSN/PPSN, or
 * -MRC_E_NOSPC when the window is full, -MRC_E_PATH for a bad path.
 */
int mrc_sb_send_new(struct mrc_sb *sb, u8 path, u64 now_us, u32 cookie,
		    u32 *psn, u32 *ppsn);

/*
 * Account a retransmission of outstanding, not SACKed @psn on @path (any
 * path: retransmits may move). Returns 0 and the new PPSN, or -MRC_E_*.
 */
int mrc_sb_on_retx(struct mrc_sb *sb, u32 psn, u8 path, u64 now_us,
		   u32 *ppsn);

/*
 * Apply an ACK: cumulative point, SACK bits, per-path reports, then mark
 * losses: an in-flight packet is lost when its path's highest received
 * PPSN is at least dupthresh beyond its own AND (if the path's
 * reo_wnd_us is set) an original transmission sent on the same path more
 * than reo_wnd_us after it was delivered (an original's delivery, or the
 * ACK's tsecr on ts_path: the send time of the packet that just arrived,
 * retransmissions included). Reordering within a path by less than
 * reo_wnd_us thus never causes a retransmission. An ACK that refers to PSNs or PPSNs
 * never sent is rejected whole (-MRC_E_FIELD) without changing state;
 * an old (reordered) ACK is harmless. @res may be NULL.
 *
 * Spurious retransmissions: a retransmission of a packet the ACK rule
 * had marked lost is spurious when the ACK's DSACK names it, or when the
 * ACK that first delivers it echoes (tsecr, ts_path) its previous
 * transmission. Each one counts in res->spurious once and widens the
 * reordering window of the path it was declared lost on (mrc_reo_*);
 * a DSACK for a PSN the scoreboard no longer remembers is ignored.
 */
int mrc_sb_apply_ack(struct mrc_sb *sb, const struct mrc_ack_info *a,
		     struct mrc_sb_ack_res *res);

/*
 * A READ/atomic response for our request @req_psn arrived: it
 * acknowledges every PSN up to @req_psn (protocol.rst "Implicit
 * acknowledgement"). Fill @a with that ACK -- cum_psn = req_psn + 1, no
 * SACK, path records or DSACK; as echo the request's own send time and
 * path if it was sent once (an RTT sample), else none (ts_path =
 * MRC_MAX_PATHS). False when @req_psn is not outstanding (nothing new).
 */
bool mrc_sb_resp_ack(const struct mrc_sb *sb, u32 req_psn, u64 now_us,
		     struct mrc_ack_info *a);

/* Lowest PSN marked lost: 0 and *psn, or -1 if none. */
int mrc_sb_next_lost(const struct mrc_sb *sb, u32 *psn);

/* Highest outstanding not-SACKed PSN (tail-loss probe): 0 or -1. */
int mrc_sb_tlp_psn(const struct mrc_sb *sb, u32 *psn);

/*
 * Mark one outstanding, not SACKed PSN lost with @cause (RNR NAK, tail
 * loss probe). 0 or -MRC_E_*.
 */
int mrc_sb_mark_lost_cause(struct mrc_sb *sb, u32 psn, u8 cause);

/* mrc_sb_mark_lost_cause(.., MRC_LOSS_NAK). */
int mrc_sb_mark_lost(struct mrc_sb *sb, u32 psn);

/* Cause of the loss mark of @psn (MRC_LOSS_NONE if not lost). */
u8 mrc_sb_cause(const struct mrc_sb *sb, u32 psn);

/*
 * Mark every in-flight packet (of @path, or of all paths if @path is
 * MRC_MAX_PATHS or more) lost: RTO / blackholed path. Returns the count.
 */
u32 mrc_sb_mark_inflight_lost(struct mrc_sb *sb, u32 path);

/*
 * Time-based loss (RTO / TLP expiry): mark in-flight packets sent at
 * least @age_us before @now_us lost, counting them per path in @lost
 * (may be NULL). Returns the count. Packets on healthy paths sent more
 * recently stay in flight, so one blackholed path does not drag the
 * others into retransmission.
 */
u32 mrc_sb_mark_stale_lost(struct mrc_sb *sb, u64 now_us, u32 age_us,
			   u16 *lost);

/*
 * Same, but at most @per_path packets per path, oldest first: the first
 * RTO of an episode probes each silent path with its oldest packet
 * instead of resending everything (a spurious timeout then costs one
 * packet per path, not a window).
 */
u32 mrc_sb_mark_stale_lost_n(struct mrc_sb *sb, u64 now_us, u32 age_us,
			     u16 *lost, u32 per_path);

/* Caller's cookie of an outstanding PSN (0 if not outstanding). */
u32 mrc_sb_cookie(const struct mrc_sb *sb, u32 psn);

/* State of @psn (MRC_SB_FREE if not outstanding). */
enum mrc_sb_state mrc_sb_state_of(const struct mrc_sb *sb, u32 psn);

/* Self-check of counters vs entries (tests, fuzzers): 0 if consistent. */
int mrc_sb_check(const struct mrc_sb *sb);

#endif /* MRC_SACK_H */
