// SPDX-License-Identifier: GPL-2.0
/* Atomic replay cache: results survive until their response is acked. */
#include "mrc_test.h"
#include "replay.h"
#include "hdr.h"

MRC_TEST(replay_put_get_release)
{
	struct mrc_replay *c;
	u64 v = 0;
	u32 i;

	MRC_ALLOC(c);
	mrc_replay_init(c);
	MRC_EXPECT_EQ(mrc_replay_get(c, 5, &v), -1);
	for (i = 0; i < MRC_REPLAY_SLOTS; i++)
		MRC_EXPECT_EQ(mrc_replay_put(c, 0xfffffff8U + i, 100 + i,
					     1000 + i), 0);
	MRC_EXPECT_FALSE(mrc_replay_has_room(c));
	MRC_EXPECT_EQ(mrc_replay_put(c, 77, 200, 1), -MRC_E_NOSPC);
	MRC_EXPECT_EQ(mrc_replay_get(c, 0xfffffff8U + 9, &v), 0);
	MRC_EXPECT_EQ(v, 1009);
	/* response PSNs 100..103 acked */
	MRC_EXPECT_EQ(mrc_replay_release(c, 104), 4);
	MRC_EXPECT_EQ(mrc_replay_get(c, 0xfffffff8U, &v), -1);
	MRC_EXPECT_TRUE(mrc_replay_has_room(c));
	MRC_EXPECT_EQ(mrc_replay_put(c, 77, 200, 1), 0);
	MRC_EXPECT_EQ(mrc_replay_get(c, 77, &v), 0);
	MRC_EXPECT_EQ(v, 1);
	/* release across the PSN wrap */
	mrc_replay_init(c);
	mrc_replay_put(c, 1, 0xffffffffU, 9);
	MRC_EXPECT_EQ(mrc_replay_release(c, 0xfffffff0U), 0);
	MRC_EXPECT_EQ(mrc_replay_release(c, 0), 1);
}

MRC_SUITE(replay,
	  MRC_CASE(replay_put_get_release));
