// SPDX-License-Identifier: GPL-2.0
/* Serial-number arithmetic in every sequence space (wrap-around). */
#include "mrc_test.h"
#include "seq.h"
#include "rtt.h"

MRC_TEST(seq_basic)
{
	MRC_EXPECT_TRUE(mrc_seq_lt(1, 2));
	MRC_EXPECT_FALSE(mrc_seq_lt(2, 2));
	MRC_EXPECT_TRUE(mrc_seq_leq(2, 2));
	MRC_EXPECT_TRUE(mrc_seq_gt(3, 2));
	MRC_EXPECT_TRUE(mrc_seq_geq(3, 3));
	MRC_EXPECT_EQ(mrc_seq_diff(10, 4), 6);
	MRC_EXPECT_EQ(mrc_seq_diff(4, 10), -6);
}

/* PSN / PPSN / RMSN: 32-bit spaces across 2^32. */
MRC_TEST(seq_wrap32)
{
	u32 a = 0xfffffff0U, b = 0x10;

	MRC_EXPECT_TRUE(mrc_seq_lt(a, b));
	MRC_EXPECT_TRUE(mrc_seq_gt(b, a));
	MRC_EXPECT_EQ(mrc_seq_diff(b, a), 0x20);
	MRC_EXPECT_EQ(mrc_seq_diff(a, b), -0x20);
	MRC_EXPECT_EQ(mrc_seq_max(a, b), b);
	MRC_EXPECT_EQ(mrc_seq_max(b, a), b);
	MRC_EXPECT_TRUE(mrc_seq_in(0xffffffffU, a, b));
	MRC_EXPECT_TRUE(mrc_seq_in(0, a, b));
	MRC_EXPECT_FALSE(mrc_seq_in(b, a, b));
	MRC_EXPECT_FALSE(mrc_seq_in(a - 1, a, b));
	/* exactly half the space apart is "before" (s32 min) */
	MRC_EXPECT_TRUE(mrc_seq_lt(0x80000000U, 0));
	MRC_EXPECT_TRUE(mrc_seq_lt(0, 0x7fffffffU));
}

/* Per-path CE counters: 16-bit space. */
MRC_TEST(seq_wrap16)
{
	MRC_EXPECT_EQ(mrc_seq16_diff(3, 0xfffe), 5);
	MRC_EXPECT_EQ(mrc_seq16_diff(0xfffe, 3), -5);
	MRC_EXPECT_EQ(mrc_seq16_diff(7, 7), 0);
}

/* Timestamps: 32-bit microseconds, echo across the wrap. */
MRC_TEST(seq_wrap_timestamp)
{
	u64 now = 0x100000005ULL;	/* (u32)now == 5 */

	MRC_EXPECT_EQ(mrc_rtt_from_echo(now, 0xffffffffU, 2), 4);
	MRC_EXPECT_EQ(mrc_rtt_from_echo(now, 0xffffffffU, 0), 6);
	/* ack_delay larger than the raw sample: keep raw */
	MRC_EXPECT_EQ(mrc_rtt_from_echo(now, 0xffffffffU, 100), 6);
	/* echo from the future is rejected */
	MRC_EXPECT_EQ(mrc_rtt_from_echo(now, 6, 0), 0);
	MRC_EXPECT_EQ(mrc_rtt_from_echo(1000, 1000, 0), 1);
}

MRC_SUITE(seq,
	  MRC_CASE(seq_basic),
	  MRC_CASE(seq_wrap32),
	  MRC_CASE(seq_wrap16),
	  MRC_CASE(seq_wrap_timestamp));
