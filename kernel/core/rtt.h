/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-path RTT estimation and retransmission timers, in microseconds
 * (RFC 6298 with fixed-point SRTT/RTTVAR, exponential backoff, and a
 * RFC 8985 style tail-loss-probe timeout). Time is always passed in.
 */
#ifndef MRC_RTT_H
#define MRC_RTT_H

#include "mrc_types.h"

#define MRC_RTO_INIT_US		10000	/* before the first sample */
#define MRC_RTO_MIN_US		1000
#define MRC_RTO_MAX_US		500000
#define MRC_RTT_G_US		50	/* clock granularity term */
#define MRC_TLP_MIN_US		500
#define MRC_TLP_ACK_DELAY_US	200	/* worst-case delayed ACK */
#define MRC_BACKOFF_MAX		10

struct mrc_rtt {
	u32 srtt8;	/* smoothed RTT << 3, 0 = no sample yet */
	u32 rttvar4;	/* RTT variance << 2 */
	u32 rto;	/* base RTO (no backoff), us */
	u32 init_rto;
	u32 min_rto;
	u32 max_rto;
	u32 backoff;	/* consecutive timeouts */
	u32 min_rtt;	/* smallest sample (us), 0 = none yet */
};

/* Zero arguments select the MRC_RTO_* defaults. */
void mrc_rtt_init(struct mrc_rtt *r, u32 init_rto, u32 min_rto, u32 max_rto);

/* Feed one RTT sample (us); clears the backoff. Samples of 0 count as 1. */
void mrc_rtt_sample(struct mrc_rtt *r, u32 rtt_us);

/*
 * RTT sample from an ACK: now - tsecr - ack_delay, mod 2^32. Returns 0
 * when the echo is implausible (in the future / older than 2^31 us).
 */
u32 mrc_rtt_from_echo(u64 now_us, u32 tsecr, u16 ack_delay);

/* Smoothed RTT (us), 0 before the first sample. */
static inline u32 mrc_rtt_srtt(const struct mrc_rtt *r)
{
	return r->srtt8 >> 3;
}

/* Current RTO including backoff, clamped to [min_rto, max_rto]. */
u32 mrc_rtt_rto(const struct mrc_rtt *r);

/*
 * Reordering window of the time-based loss rule (us): how much later
 * than a packet another packet of the same path may have been sent and
 * still arrive first. max(SRTT/4, SRTT - min RTT), at most SRTT: the
 * spread of one-way delays is bounded by the spread of round trips. 0
 * before the first sample (count rule only).
 */
u32 mrc_rtt_reo_wnd(const struct mrc_rtt *r);

/* A retransmission timeout fired: double the RTO (bounded). */
void mrc_rtt_backoff(struct mrc_rtt *r);

/*
 * Tail-loss-probe timeout: 2*SRTT (+ worst delayed ACK when one packet is
 * outstanding), at least MRC_TLP_MIN_US, never above the current RTO.
 */
u32 mrc_rtt_tlp(const struct mrc_rtt *r, bool one_outstanding);

/*
 * Probe timeout from a response-time estimator (struct mrc_req.rsp_rtt):
 * max(2 SRTT, SRTT + 4 RTTVAR), 0 before the first sample. No floor or
 * cap: the caller bounds it (protocol.rst "Probe timeout of a READ/atomic
 * request").
 */
u32 mrc_rtt_pto_resp(const struct mrc_rtt *r);

#endif /* MRC_RTT_H */
