// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce adaptive reordering window. See reo.h.
 */
#include "reo.h"

void mrc_reo_init(struct mrc_reo *r, u32 una)
{
	memset(r, 0, sizeof(*r));
	r->round_end = una;
}

bool mrc_reo_on_spurious(struct mrc_reo *r)
{
	r->spurious = 1;
	r->persist = MRC_REO_PERSIST;
	if (r->grown || r->steps >= MRC_REO_STEPS_MAX)
		return false;
	r->steps++;
	r->grown = 1;
	return true;
}

void mrc_reo_on_ack(struct mrc_reo *r, u32 una, u32 nxt)
{
	if (!mrc_seq_gt(una, r->round_end))
		return;
	if (r->recovery && !r->spurious && r->steps && !--r->persist) {
		r->steps--;
		r->persist = MRC_REO_PERSIST;
	}
	r->spurious = 0;
	r->recovery = 0;
	r->grown = 0;
	r->round_end = nxt;
}

u32 mrc_reo_wnd(const struct mrc_reo *r, u32 base_us, u32 srtt_us)
{
	u64 w = base_us + (u64)r->steps * (srtt_us / 4);

	if (!base_us)
		return 0;
	return min_t(u64, w, max_t(u32, base_us, srtt_us));
}
