// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce RTT/RTO/TLP. See rtt.h.
 */
#include "rtt.h"

static void rtt_update_rto(struct mrc_rtt *r)
{
	u64 rto = (u64)(r->srtt8 >> 3) + max_t(u32, MRC_RTT_G_US, r->rttvar4);

	r->rto = clamp_t(u64, rto, r->min_rto, r->max_rto);
}

void mrc_rtt_init(struct mrc_rtt *r, u32 init_rto, u32 min_rto, u32 max_rto)
{
	memset(r, 0, sizeof(*r));
	r->min_rto = min_rto ? min_rto : MRC_RTO_MIN_US;
	r->max_rto = max_rto ? max_rto : MRC_RTO_MAX_US;
	if (r->max_rto < r->min_rto)
		r->max_rto = r->min_rto;
	r->init_rto = init_rto ? init_rto : MRC_RTO_INIT_US;
	r->rto = clamp_t(u32, r->init_rto, r->min_rto, r->max_rto);
}

void mrc_rtt_sample(struct mrc_rtt *r, u32 rtt_us)
{
	u32 m = rtt_us ? rtt_us : 1;

	/* keep the fixed-point state far from overflow */
	m = min_t(u32, m, 1U << 26);
	if (!r->min_rtt || m < r->min_rtt)
		r->min_rtt = m;
	if (!r->srtt8) {
		r->srtt8 = m << 3;		/* SRTT = R */
		r->rttvar4 = m << 1;		/* RTTVAR = R/2 */
	} else {
		u32 srtt = r->srtt8 >> 3;
		u32 err = m > srtt ? m - srtt : srtt - m;

		/* RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R| */
		r->rttvar4 = r->rttvar4 - (r->rttvar4 >> 2) + err;
		/* SRTT = 7/8 SRTT + 1/8 R */
		r->srtt8 = r->srtt8 - (r->srtt8 >> 3) + m;
	}
	r->backoff = 0;
	rtt_update_rto(r);
}

u32 mrc_rtt_from_echo(u64 now_us, u32 tsecr, u16 ack_delay)
{
	u32 raw = (u32)now_us - tsecr;

	if (raw >= 0x80000000U)
		return 0;
	if (raw > ack_delay)
		raw -= ack_delay;
	return raw ? raw : 1;
}

u32 mrc_rtt_rto(const struct mrc_rtt *r)
{
	u64 rto = (u64)r->rto << min_t(u32, r->backoff, MRC_BACKOFF_MAX);

	return clamp_t(u64, rto, r->min_rto, r->max_rto);
}

u32 mrc_rtt_reo_wnd(const struct mrc_rtt *r)
{
	u32 srtt = r->srtt8 >> 3;
	u32 w;

	if (!r->srtt8)
		return 0;
	w = srtt > r->min_rtt ? srtt - r->min_rtt : 0;
	w = max_t(u32, w, srtt / 4);
	return max_t(u32, w, 1);
}

void mrc_rtt_backoff(struct mrc_rtt *r)
{
	if (r->backoff < MRC_BACKOFF_MAX)
		r->backoff++;
}

u32 mrc_rtt_tlp(const struct mrc_rtt *r, bool one_outstanding)
{
	u32 rto = mrc_rtt_rto(r);
	u64 pto;

	if (!r->srtt8)
		return rto;
	pto = 2ULL * (r->srtt8 >> 3);
	if (one_outstanding)
		pto += MRC_TLP_ACK_DELAY_US;
	pto = max_t(u64, pto, MRC_TLP_MIN_US);
	return min_t(u64, pto, rto);
}

u32 mrc_rtt_pto_resp(const struct mrc_rtt *r)
{
	u64 srtt = r->srtt8 >> 3;

	if (!r->srtt8)
		return 0;
	/* rttvar4 is 4 RTTVAR; srtt8 < 2^30, so this cannot overflow u32 */
	return (u32)max_t(u64, 2 * srtt, srtt + r->rttvar4);
}
