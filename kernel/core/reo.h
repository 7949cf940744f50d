/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Adaptive reordering window of the time-based loss rule (the RFC 8985
 * reo_wnd_mult / reo_wnd_persist scheme), one per path.
 *
 * The base window comes from the path's RTT estimator (mrc_rtt_reo_wnd():
 * max(SRTT/4, SRTT - min RTT)). Each retransmission that the ACK rule
 * caused and that turns out spurious (the original was delivered after
 * all: DSACK, or the ACK echoes the original's timestamp) adds one step
 * of SRTT/4, at most once per round trip, and never beyond SRTT. After
 * MRC_REO_PERSIST recovery rounds (rounds in which the ACK rule marked
 * something lost on the path) without a spurious retransmission, the
 * window gives one step back (RFC 8985 decays per loss recovery, too:
 * while nothing is lost, a wide window costs nothing, and a narrower one
 * would only be probed with spurious retransmissions). Real losses (the
 * retransmission is the only copy that arrives) never widen the window.
 *
 * A round ends when the cumulative point passes the first PSN sent after
 * the previous round ended, i.e. once per round trip of data. All PSN
 * comparisons are serial (wrap-safe).
 */
#ifndef MRC_REO_H
#define MRC_REO_H

#include "mrc_types.h"
#include "seq.h"

/* Steps of SRTT/4 over the base window; 4 always reaches the SRTT cap. */
#define MRC_REO_STEPS_MAX	4
/* Recovery rounds without a spurious retransmission per step undone. */
#define MRC_REO_PERSIST		16

struct mrc_reo {
	u32 round_end;	/* the round ends when una passes this PSN */
	u8 steps;	/* SRTT/4 steps added to the base window */
	u8 persist;	/* quiet rounds left before steps decreases */
	u8 grown;	/* steps already grew in this round */
	u8 spurious;	/* a spurious retransmission in this round */
	u8 recovery;	/* the ACK rule marked a loss in this round */
};

/* Base window, first round ending at PSN @una. */
void mrc_reo_init(struct mrc_reo *r, u32 una);

/*
 * A retransmission on this path's behalf was spurious. Grows the window
 * by one step unless it already grew in this round or is at the cap;
 * returns true if it grew.
 */
bool mrc_reo_on_spurious(struct mrc_reo *r);

/*
 * The cumulative point is @una, the next new PSN @nxt: ends the round if
 * una passed its end (the next one ends after @nxt), and decays the
 * window after MRC_REO_PERSIST recovery rounds without a spurious
 * retransmission.
 */
void mrc_reo_on_ack(struct mrc_reo *r, u32 una, u32 nxt);

/* The ACK rule marked packets of this path lost (a recovery round). */
static inline void mrc_reo_on_loss(struct mrc_reo *r)
{
	r->recovery = 1;
}

/*
 * Effective window (us): @base_us + steps * @srtt_us / 4, capped at
 * max(@base_us, @srtt_us). 0 if @base_us is 0 (no RTT sample yet).
 */
u32 mrc_reo_wnd(const struct mrc_reo *r, u32 base_us, u32 srtt_us);

#endif /* MRC_REO_H */
