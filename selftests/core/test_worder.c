// SPDX-License-Identifier: GPL-2.0
/*
 * Write order across reordering: the pieces of a late WRITE packet that
 * later PSNs have not overwritten, and, over random arrival orders of
 * overlapping WRITE messages, memory ending as in-order execution leaves
 * it.
 */
#include "mrc_test.h"
#include "worder.h"

static struct mrc_worder wo_w;

MRC_TEST(wo_in_order_whole)
{
	struct mrc_worder *w = &wo_w;

	mrc_wo_init(w);
	mrc_wo_record(w, 9, 7, 1000, 100);	/* earlier PSN: irrelevant */
	MRC_EXPECT_EQ(mrc_wo_pieces(w, 10, 11, 7, 1000, 100, w->out), 1);
	MRC_EXPECT_EQ(w->out[0].va, 1000);
	MRC_EXPECT_EQ(w->out[0].len, 100);
	MRC_EXPECT_EQ(mrc_wo_pieces(w, 10, 11, 7, 1000, 0, w->out), 0);
}

MRC_TEST(wo_later_covers)
{
	struct mrc_worder *w = &wo_w;

	mrc_wo_init(w);
	/* PSN 12 wrote [1040, 1060); PSN 13 another key; 14 not a WRITE */
	mrc_wo_record(w, 12, 7, 1040, 20);
	mrc_wo_record(w, 13, 8, 1000, 100);
	mrc_wo_record(w, 14, 7, 0, 0);
	MRC_EXPECT_EQ(mrc_wo_pieces(w, 10, 15, 7, 1000, 100, w->out), 2);
	MRC_EXPECT_EQ(w->out[0].va, 1000);
	MRC_EXPECT_EQ(w->out[0].len, 40);
	MRC_EXPECT_EQ(w->out[1].va, 1060);
	MRC_EXPECT_EQ(w->out[1].len, 40);
	/* beyond top: not received in this window */
	MRC_EXPECT_EQ(mrc_wo_pieces(w, 10, 12, 7, 1000, 100, w->out), 1);
	/* everything overwritten, by pieces out of order and overlapping */
	mrc_wo_record(w, 15, 7, 1050, 60);
	mrc_wo_record(w, 16, 7, 990, 55);
	MRC_EXPECT_EQ(mrc_wo_pieces(w, 10, 17, 7, 1000, 100, w->out), 0);
	/* ... but not past 1110 */
	MRC_EXPECT_EQ(mrc_wo_pieces(w, 10, 17, 7, 1000, 120, w->out), 1);
	MRC_EXPECT_EQ(w->out[0].va, 1110);
	MRC_EXPECT_EQ(w->out[0].len, 10);
}

/* A record left from PSN - MRC_WND (same slot) is not PSN's own. */
MRC_TEST(wo_stale_slot_and_wrap)
{
	struct mrc_worder *w = &wo_w;
	u32 base = 0xfffffff0u;

	mrc_wo_init(w);
	mrc_wo_record(w, base + 5 - MRC_WND, 7, 0, 4096);
	MRC_EXPECT_EQ(mrc_wo_pieces(w, base, base + 20, 7, 0, 4096, w->out),
		      1);
	mrc_wo_record(w, base + 20, 7, 100, 100);	/* wraps past 0 */
	MRC_EXPECT_EQ(mrc_wo_pieces(w, base, base + 21, 7, 0, 4096, w->out),
		      2);
	MRC_EXPECT_EQ(w->out[1].va, 200);
}

static u64 wo_rnd_state;

static u32 wo_rnd(void)
{
	return mrc_test_rnd(&wo_rnd_state);
}

#define WO_MEM		512
#define WO_MSGS		6
#define WO_SEG		32

/*
 * Random WRITE messages of one QP to overlapping ranges of a small
 * memory, their packets (WO_SEG bytes each, consecutive PSNs) placed in
 * a random order, each through mrc_wo_pieces() as the responder does:
 * memory must end as in-order execution leaves it, whatever the order.
 */
MRC_TEST(wo_random_orders)
{
	static u8 mem[WO_MEM], ref[WO_MEM];
	static u32 order[WO_MSGS * (WO_MEM / WO_SEG)];
	static struct { u32 msg, at, len, psn; } pkt[WO_MSGS * (WO_MEM / WO_SEG)];
	struct mrc_worder *w = &wo_w;
	u32 seed, m, i, k, n, npkt;
	u32 off[WO_MSGS], len[WO_MSGS], psn0, bad = 0;

	for (seed = 1; seed <= 2000; seed++) {
		wo_rnd_state = seed;
		mrc_wo_init(w);
		memset(mem, 0, sizeof(mem));
		memset(ref, 0, sizeof(ref));
		psn0 = wo_rnd() | 0xffffff00u;	/* cross the wrap */
		npkt = 0;
		for (m = 0; m < WO_MSGS; m++) {
			len[m] = 1 + wo_rnd() % (WO_MEM / 2);
			off[m] = wo_rnd() % (WO_MEM - len[m]);
			for (k = 0; k < len[m]; k += WO_SEG) {
				pkt[npkt].msg = m;
				pkt[npkt].at = off[m] + k;
				pkt[npkt].len = len[m] - k < WO_SEG ?
						len[m] - k : WO_SEG;
				pkt[npkt].psn = psn0 + npkt;
				npkt++;
			}
			memset(ref + off[m], 1 + m, len[m]);
		}
		for (i = 0; i < npkt; i++)
			order[i] = i;
		for (i = npkt - 1; i > 0; i--) {
			k = wo_rnd() % (i + 1);
			m = order[i];
			order[i] = order[k];
			order[k] = m;
		}
		/* place in that order; top = 1 + highest PSN placed so far */
		{
			u32 top = psn0;

			for (i = 0; i < npkt; i++) {
				u32 p = order[i];

				if (mrc_seq_geq(pkt[p].psn, top))
					top = pkt[p].psn + 1;
				n = mrc_wo_pieces(w, pkt[p].psn, top, 42,
						  pkt[p].at, pkt[p].len,
						  w->out);
				for (k = 0; k < n; k++)
					memset(mem + w->out[k].va,
					       1 + pkt[p].msg, w->out[k].len);
				mrc_wo_record(w, pkt[p].psn, 42, pkt[p].at,
					      pkt[p].len);
			}
		}
		if (memcmp(mem, ref, sizeof(mem)))
			bad++;
	}
	MRC_EXPECT_EQ(bad, 0);
}

MRC_SUITE(worder,
	  MRC_CASE(wo_in_order_whole),
	  MRC_CASE(wo_later_covers),
	  MRC_CASE(wo_stale_slot_and_wrap),
	  MRC_CASE(wo_random_orders));
