// SPDX-License-Identifier: GPL-2.0
/* RFC 6298 RTO math, clamps, backoff, TLP. */
#include "mrc_test.h"
#include "rtt.h"

MRC_TEST(rtt_first_and_next_sample)
{
	struct mrc_rtt r;

	mrc_rtt_init(&r, 0, 0, 0);
	MRC_EXPECT_EQ(mrc_rtt_rto(&r), MRC_RTO_INIT_US);
	MRC_EXPECT_EQ(mrc_rtt_srtt(&r), 0);
	mrc_rtt_sample(&r, 10000);
	/* SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR = 3R */
	MRC_EXPECT_EQ(mrc_rtt_srtt(&r), 10000);
	MRC_EXPECT_EQ(r.rttvar4 >> 2, 5000);
	MRC_EXPECT_EQ(mrc_rtt_rto(&r), 30000);
	/*
	 * R' = 2000: RTTVAR = 3/4*5000 + 1/4*8000 = 5750,
	 * SRTT = 7/8*10000 + 1/8*2000 = 9000, RTO = 9000 + 23000
	 */
	mrc_rtt_sample(&r, 2000);
	MRC_EXPECT_EQ(mrc_rtt_srtt(&r), 9000);
	MRC_EXPECT_EQ(r.rttvar4 >> 2, 5750);
	MRC_EXPECT_EQ(mrc_rtt_rto(&r), 32000);
	/* converges on a steady RTT */
	{
		int i;

		for (i = 0; i < 200; i++)
			mrc_rtt_sample(&r, 3000);
	}
	MRC_EXPECT_EQ(mrc_rtt_srtt(&r), 3000);
	MRC_EXPECT_EQ(mrc_rtt_rto(&r), 3000 + MRC_RTT_G_US);
}

MRC_TEST(rtt_clamp)
{
	struct mrc_rtt r;

	mrc_rtt_init(&r, 0, 0, 0);
	mrc_rtt_sample(&r, 10);
	MRC_EXPECT_EQ(mrc_rtt_rto(&r), MRC_RTO_MIN_US);
	mrc_rtt_sample(&r, 0xffffffffU);	/* absurd: bounded */
	MRC_EXPECT_EQ(mrc_rtt_rto(&r), MRC_RTO_MAX_US);
	mrc_rtt_init(&r, 5, 200, 100);		/* max < min: max = min */
	MRC_EXPECT_EQ(mrc_rtt_rto(&r), 200);
}

MRC_TEST(rtt_backoff)
{
	struct mrc_rtt r;
	u32 i;

	mrc_rtt_init(&r, 0, 0, 0);
	mrc_rtt_sample(&r, 1000);		/* RTO 3000 */
	MRC_EXPECT_EQ(mrc_rtt_rto(&r), 3000);
	mrc_rtt_backoff(&r);
	MRC_EXPECT_EQ(mrc_rtt_rto(&r), 6000);
	mrc_rtt_backoff(&r);
	MRC_EXPECT_EQ(mrc_rtt_rto(&r), 12000);
	for (i = 0; i < 40; i++)
		mrc_rtt_backoff(&r);
	MRC_EXPECT_EQ(mrc_rtt_rto(&r), MRC_RTO_MAX_US);
	mrc_rtt_sample(&r, 1000);		/* new sample: backoff reset */
	MRC_EXPECT_EQ(r.backoff, 0);
	MRC_EXPECT_TRUE(mrc_rtt_rto(&r) < 6000);
}

MRC_TEST(rtt_tlp)
{
	struct mrc_rtt r;

	mrc_rtt_init(&r, 0, 0, 0);
	MRC_EXPECT_EQ(mrc_rtt_tlp(&r, false), MRC_RTO_INIT_US);
	mrc_rtt_sample(&r, 1000);
	MRC_EXPECT_EQ(mrc_rtt_tlp(&r, false), 2000);
	MRC_EXPECT_EQ(mrc_rtt_tlp(&r, true), 2000 + MRC_TLP_ACK_DELAY_US);
	MRC_EXPECT_TRUE(mrc_rtt_tlp(&r, true) <= mrc_rtt_rto(&r));
	mrc_rtt_init(&r, 0, 0, 0);
	mrc_rtt_sample(&r, 20);
	MRC_EXPECT_EQ(mrc_rtt_tlp(&r, false), MRC_TLP_MIN_US);
}

MRC_TEST(rtt_reo_wnd)
{
	struct mrc_rtt r;

	mrc_rtt_init(&r, 0, 0, 0);
	MRC_EXPECT_EQ(mrc_rtt_reo_wnd(&r), 0);	/* no sample: count rule */
	mrc_rtt_sample(&r, 1000);
	MRC_EXPECT_EQ(r.min_rtt, 1000);
	MRC_EXPECT_EQ(mrc_rtt_reo_wnd(&r), 250);	/* SRTT / 4 */
	mrc_rtt_sample(&r, 9000);			/* SRTT 2000 */
	MRC_EXPECT_EQ(r.min_rtt, 1000);
	MRC_EXPECT_EQ(mrc_rtt_reo_wnd(&r), 1000);	/* SRTT - min */
	MRC_EXPECT_TRUE(mrc_rtt_reo_wnd(&r) <= mrc_rtt_srtt(&r));
}

MRC_SUITE(rtt,
	  MRC_CASE(rtt_first_and_next_sample),
	  MRC_CASE(rtt_clamp),
	  MRC_CASE(rtt_backoff),
	  MRC_CASE(rtt_tlp),
	  MRC_CASE(rtt_reo_wnd));
