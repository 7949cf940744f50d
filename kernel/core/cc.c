// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce per-path ECN AIMD. See cc.h.
 */
#include "cc.h"

static void cc_clamp(struct mrc_cc *cc)
{
	cc->cwnd = clamp_t(u32, cc->cwnd, cc->min_cwnd, cc->max_cwnd);
}

static void cc_new_round(struct mrc_cc *cc)
{
	cc->round_acked = 0;
	cc->round_ce = 0;
	cc->reduced = 0;
	cc->round_len = mrc_cc_window(cc);
}

void mrc_cc_init(struct mrc_cc *cc, u32 init_pkts, u32 min_pkts,
		 u32 max_pkts)
{
	memset(cc, 0, sizeof(*cc));
	min_pkts = min_pkts ? min_pkts : MRC_CWND_MIN_PKTS;
	max_pkts = max_pkts ? max_pkts : MRC_CWND_MAX_PKTS;
	max_pkts = clamp_t(u32, max_pkts, min_pkts, 1U << 20);
	init_pkts = init_pkts ? init_pkts : MRC_CWND_INIT_PKTS;
	cc->min_cwnd = min_pkts << MRC_CC_SHIFT;
	cc->max_cwnd = max_pkts << MRC_CC_SHIFT;
	cc->init_cwnd = clamp_t(u32, init_pkts << MRC_CC_SHIFT,
				cc->min_cwnd, cc->max_cwnd);
	cc->cwnd = cc->init_cwnd;
	cc->ssthresh = cc->init_cwnd;
	cc->alpha = MRC_CC_ALPHA_ONE;	/* first CE halves, as DCTCP */
	cc_new_round(cc);
}

u32 mrc_cc_window(const struct mrc_cc *cc)
{
	u32 w = cc->cwnd >> MRC_CC_SHIFT;

	return w ? w : 1;
}

void mrc_cc_on_ack(struct mrc_cc *cc, u32 acked, u32 ce)
{
	if (!acked && !ce)
		return;
	acked = min_t(u32, acked, 1U << 16);
	ce = min_t(u32, ce, acked ? acked : 1);
	cc->round_acked += acked;
	cc->round_ce += ce;

	if (ce) {
		if (!cc->reduced) {
			u64 cut = (u64)cc->cwnd * cc->alpha >> 11; /* alpha/2 */

			cc->cwnd -= (u32)cut;
			cc->ssthresh = cc->cwnd;
			cc->reduced = 1;
		}
	} else if (cc->cwnd < cc->ssthresh) {
		/* slow start after a timeout: +1 packet per packet */
		u64 w = (u64)cc->cwnd + ((u64)acked << MRC_CC_SHIFT);

		cc->cwnd = (u32)min_t(u64, w, cc->ssthresh);
	} else {
		/* +1 packet per window: acked / cwnd_pkts packets */
		u64 inc = mrc_div_u64((u64)acked << (2 * MRC_CC_SHIFT),
				      cc->cwnd);

		cc->cwnd = (u32)min_t(u64, (u64)cc->cwnd + inc, cc->max_cwnd);
	}

	if (cc->round_acked >= cc->round_len) {
		u64 f64 = mrc_div_u64((u64)cc->round_ce << 10,
				      cc->round_acked);
		u32 f = (u32)min_t(u64, f64, MRC_CC_ALPHA_ONE);

		cc->alpha = cc->alpha - (cc->alpha >> MRC_CC_G_SHIFT) +
			    (f >> MRC_CC_G_SHIFT);
		cc_clamp(cc);
		cc_new_round(cc);
	}
	cc_clamp(cc);
}

void mrc_cc_on_loss(struct mrc_cc *cc)
{
	if (cc->reduced)
		return;
	cc->cwnd -= cc->cwnd >> MRC_CC_LOSS_SHIFT;
	cc->reduced = 1;
	cc_clamp(cc);
	cc->ssthresh = cc->cwnd;
}

void mrc_cc_on_timeout(struct mrc_cc *cc)
{
	cc->ssthresh = max_t(u32, cc->cwnd >> 1, cc->min_cwnd);
	cc->cwnd = cc->min_cwnd;
	cc_new_round(cc);
	cc->reduced = 1;
}

void mrc_cc_save(const struct mrc_cc *cc, struct mrc_cc_saved *sv)
{
	sv->cwnd = cc->cwnd;
	sv->ssthresh = cc->ssthresh;
	sv->alpha = cc->alpha;
}

void mrc_cc_undo(struct mrc_cc *cc, const struct mrc_cc_saved *sv)
{
	cc->cwnd = max_t(u32, cc->cwnd, sv->cwnd);
	cc->ssthresh = max_t(u32, cc->ssthresh, sv->ssthresh);
	cc->alpha = min_t(u32, cc->alpha, sv->alpha);
	cc_clamp(cc);
	cc_new_round(cc);
}

void mrc_cc_set_max(struct mrc_cc *cc, u32 max_pkts)
{
	max_pkts = clamp_t(u32, max_pkts, cc->min_cwnd >> MRC_CC_SHIFT,
			   1U << 20);
	cc->max_cwnd = max_pkts << MRC_CC_SHIFT;
	cc_clamp(cc);
}

u32 mrc_cc_bdp_pkts(u32 mbps, u32 rtt_us, u32 mtu)
{
	/* bytes = mbps * rtt_us / 8; packets = bytes / mtu; +25% */
	u64 bits = (u64)mbps * rtt_us;
	u32 div = mtu ? mtu : 1;
	u64 pkts;

	pkts = mrc_div_u64(bits >> 3, div);
	pkts += pkts >> 2;
	return (u32)clamp_t(u64, pkts, 1, 1U << 20);
}
