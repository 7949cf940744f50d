// SPDX-License-Identifier: GPL-2.0
/* Per-path ECN AIMD. */
#include "mrc_test.h"
#include "cc.h"

MRC_TEST(cc_additive_increase)
{
	struct mrc_cc cc;
	u32 i;

	mrc_cc_init(&cc, 10, 2, 64);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 10);
	/* one window of ACKs without CE: about +1 packet */
	for (i = 0; i < 10; i++)
		mrc_cc_on_ack(&cc, 1, 0);
	MRC_EXPECT_TRUE(cc.cwnd > (10U << MRC_CC_SHIFT) * 109 / 100);
	MRC_EXPECT_TRUE(cc.cwnd <= 11U << MRC_CC_SHIFT);
	mrc_cc_on_ack(&cc, 1, 0);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 11);
	/* bounded by max */
	for (i = 0; i < 10000; i++)
		mrc_cc_on_ack(&cc, 1, 0);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 64);
	MRC_EXPECT_EQ(cc.cwnd, 64U << MRC_CC_SHIFT);
}

MRC_TEST(cc_ecn_decrease)
{
	struct mrc_cc cc;
	u32 i, w;

	mrc_cc_init(&cc, 40, 2, 64);
	/* alpha starts at 1: the first CE halves */
	mrc_cc_on_ack(&cc, 1, 1);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 20);
	/* at most once per round */
	mrc_cc_on_ack(&cc, 1, 1);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 20);
	/* rounds without CE decay alpha: later cuts are gentler */
	for (i = 0; i < 2000; i++)
		mrc_cc_on_ack(&cc, 1, 0);
	MRC_EXPECT_TRUE(cc.alpha < MRC_CC_ALPHA_ONE / 4);
	w = cc.cwnd;
	mrc_cc_on_ack(&cc, 1, 1);
	MRC_EXPECT_TRUE(cc.cwnd < w);
	MRC_EXPECT_TRUE(cc.cwnd > w - (w >> 2));
	/* persistent CE drives the window to the minimum, not below */
	for (i = 0; i < 5000; i++)
		mrc_cc_on_ack(&cc, 1, 1);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 2);
	MRC_EXPECT_TRUE(cc.alpha > MRC_CC_ALPHA_ONE * 9 / 10);
}

MRC_TEST(cc_loss_and_timeout)
{
	struct mrc_cc cc;

	mrc_cc_init(&cc, 32, 4, 64);
	mrc_cc_on_loss(&cc);			/* -1/8 */
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 28);
	mrc_cc_on_loss(&cc);			/* same round */
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 28);
	mrc_cc_on_timeout(&cc);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 4);
	mrc_cc_on_loss(&cc);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 4);	/* never below min */
	mrc_cc_set_max(&cc, 2);			/* max below min: min */
	MRC_EXPECT_EQ(cc.max_cwnd, 4U << MRC_CC_SHIFT);
	mrc_cc_init(&cc, 32, 4, 64);
	mrc_cc_set_max(&cc, 8);			/* e.g. fair share */
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 8);
	mrc_cc_init(&cc, 0, 0, 0);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), MRC_CWND_INIT_PKTS);
}

/* After a timeout the window slow-starts back to half its old size. */
MRC_TEST(cc_slow_start_after_timeout)
{
	struct mrc_cc cc;
	u32 i;

	mrc_cc_init(&cc, 32, 1, 64);
	mrc_cc_on_timeout(&cc);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 1);
	mrc_cc_on_ack(&cc, 1, 0);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 2);
	mrc_cc_on_ack(&cc, 2, 0);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 4);
	for (i = 0; i < 12; i++)
		mrc_cc_on_ack(&cc, 1, 0);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 16);	/* stops at ssthresh */
	mrc_cc_on_ack(&cc, 4, 0);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 16);	/* then +1 per window */
	/* a loss during slow start ends it */
	mrc_cc_on_timeout(&cc);
	mrc_cc_on_ack(&cc, 5, 0);
	mrc_cc_on_loss(&cc);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 5);	/* 6 - 6/8 */
	mrc_cc_on_ack(&cc, 1, 0);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 5);	/* no more slow start */
}

MRC_TEST(cc_undo_spurious_timeout)
{
	struct mrc_cc cc;
	struct mrc_cc_saved sv;
	u32 i;

	mrc_cc_init(&cc, 32, 1, 64);
	mrc_cc_save(&cc, &sv);
	mrc_cc_on_timeout(&cc);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 1);
	mrc_cc_on_ack(&cc, 3, 0);			/* slow start: 4 */
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 4);
	mrc_cc_undo(&cc, &sv);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 32);	/* back where it was */
	MRC_EXPECT_EQ(cc.ssthresh, 32U << MRC_CC_SHIFT);
	/* additive increase again afterwards, not slow start */
	mrc_cc_on_ack(&cc, 32, 0);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 33);
	/* a window that grew past the saved one is kept */
	mrc_cc_save(&cc, &sv);
	for (i = 0; i < 40; i++)
		mrc_cc_on_ack(&cc, 40, 0);
	MRC_EXPECT_TRUE(mrc_cc_window(&cc) > 33);
	i = mrc_cc_window(&cc);
	mrc_cc_undo(&cc, &sv);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), i);
	/* never past max */
	mrc_cc_init(&cc, 32, 1, 64);
	mrc_cc_save(&cc, &sv);
	mrc_cc_set_max(&cc, 8);
	mrc_cc_undo(&cc, &sv);
	MRC_EXPECT_EQ(mrc_cc_window(&cc), 8);
}

MRC_TEST(cc_bdp)
{
	/* 100 Gb/s, 10 us, 4 KiB: 125000 B = 30 pkts, +25% = 37 */
	MRC_EXPECT_EQ(mrc_cc_bdp_pkts(100000, 10, 4096), 37);
	/* 1 Gb/s, 2 ms, 1 KiB: 250000 B = 244 pkts, +25% = 305 */
	MRC_EXPECT_EQ(mrc_cc_bdp_pkts(1000, 2000, 1024), 305);
	MRC_EXPECT_EQ(mrc_cc_bdp_pkts(1, 1, 4096), 1);
	MRC_EXPECT_EQ(mrc_cc_bdp_pkts(1000, 1000, 0), 156250);	/* mtu 0 as 1 */
	MRC_EXPECT_EQ(mrc_cc_bdp_pkts(~0U, ~0U, 1), 1U << 20);	/* bounded */
}

MRC_SUITE(cc,
	  MRC_CASE(cc_additive_increase),
	  MRC_CASE(cc_ecn_decrease),
	  MRC_CASE(cc_loss_and_timeout),
	  MRC_CASE(cc_slow_start_after_timeout),
	  MRC_CASE(cc_undo_spurious_timeout),
	  MRC_CASE(cc_bdp));
