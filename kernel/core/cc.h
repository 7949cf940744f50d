/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-path congestion window: DCTCP-style ECN AIMD.
 *
 * Additive increase of one packet per window of ACKed packets without CE;
 * on CE, at most once per round, cwnd *= (1 - alpha/2) with alpha the
 * EWMA (g = 1/16) of the fraction of CE-marked packets per round; on loss
 * decrease by 1/8 (once per round: ECN is the congestion signal, a lone
 * loss may be corruption or a dead path); on timeout fall to the minimum
 * and slow-start
 * (+1 packet per ACKed packet) back to half the window the timeout
 * interrupted, then additive increase again. The window is
 * kept in [min, max] where max is set near the path BDP (and can be
 * capped further by the receiver's fair-share hint).
 */
#ifndef MRC_CC_H
#define MRC_CC_H

#include "mrc_types.h"
#include <metaroce/wire.h>

#define MRC_CC_SHIFT		10	/* cwnd fixed point: packets << 10 */
#define MRC_CC_ONE		(1U << MRC_CC_SHIFT)
#define MRC_CC_ALPHA_ONE	1024	/* alpha == 1.0 */
#define MRC_CC_G_SHIFT		4	/* g = 1/16 */
#define MRC_CC_LOSS_SHIFT	3	/* loss: cwnd -= cwnd / 8 */

#define MRC_CWND_INIT_PKTS	16
#define MRC_CWND_MIN_PKTS	1
#define MRC_CWND_MAX_PKTS	MRC_WND

struct mrc_cc {
	u32 cwnd;		/* packets << MRC_CC_SHIFT */
	u32 min_cwnd;		/* same unit */
	u32 max_cwnd;		/* same unit */
	u32 init_cwnd;		/* same unit */
	u32 ssthresh;		/* same unit: slow start below it */
	u32 alpha;		/* 0..MRC_CC_ALPHA_ONE */
	u32 round_acked;	/* packets ACKed this round */
	u32 round_ce;		/* of which CE-marked */
	u32 round_len;		/* round ends after this many ACKed pkts */
	u8 reduced;		/* already decreased this round */
};

/*
 * Window state saved when a timeout collapses it, so that the reduction
 * can be undone if the timeout proves spurious (Eifel/F-RTO: an ACK
 * echoes a transmission from before the timeout, i.e. nothing was lost,
 * the network or the peer only stalled).
 */
struct mrc_cc_saved {
	u32 cwnd;
	u32 ssthresh;
	u32 alpha;
};

/* Window bounds in packets; 0 selects the MRC_CWND_* defaults. */
void mrc_cc_init(struct mrc_cc *cc, u32 init_pkts, u32 min_pkts,
		 u32 max_pkts);

/* @acked packets newly delivered on the path, @ce of them CE-marked. */
void mrc_cc_on_ack(struct mrc_cc *cc, u32 acked, u32 ce);

/* Loss detected on the path (multiplicative decrease, once per round). */
void mrc_cc_on_loss(struct mrc_cc *cc);

/* Retransmission timeout attributed to the path: back to minimum. */
void mrc_cc_on_timeout(struct mrc_cc *cc);

/* Save the window before a reduction that may have to be undone. */
void mrc_cc_save(const struct mrc_cc *cc, struct mrc_cc_saved *sv);

/*
 * The reduction since mrc_cc_save() was spurious: return to the saved
 * window (or keep the current one if it has grown past it since).
 */
void mrc_cc_undo(struct mrc_cc *cc, const struct mrc_cc_saved *sv);

/* New upper bound (packets, e.g. from mrc_cc_bdp_pkts() or fair share). */
void mrc_cc_set_max(struct mrc_cc *cc, u32 max_pkts);

/* Whole packets the path may have in flight (>= 1). */
u32 mrc_cc_window(const struct mrc_cc *cc);

/*
 * Bandwidth-delay product in packets for a link of @mbps and RTT @rtt_us
 * with @mtu-byte packets, plus 25% headroom; at least 1.
 */
u32 mrc_cc_bdp_pkts(u32 mbps, u32 rtt_us, u32 mtu);

#endif /* MRC_CC_H */
