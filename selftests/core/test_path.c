// SPDX-License-Identifier: GPL-2.0
/* Path table: ports, spraying, blackhole replacement. */
#include "mrc_test.h"
#include "path.h"

static void path_setup(struct mrc_paths *ps, u32 n, u32 seed)
{
	struct mrc_path_cfg cfg;

	mrc_path_cfg_default(&cfg);
	cfg.npaths = n;
	cfg.seed = seed;
	cfg.init_cwnd = 2;
	mrc_paths_init(ps, &cfg);
}

MRC_TEST(path_ports)
{
	struct mrc_paths *a, *b;
	u32 i, j;

	MRC_ALLOC(a);
	MRC_ALLOC(b);
	path_setup(a, MRC_MAX_PATHS, 1234);
	path_setup(b, MRC_MAX_PATHS, 1234);
	MRC_EXPECT_EQ(a->n, MRC_MAX_PATHS);
	for (i = 0; i < a->n; i++) {
		MRC_EXPECT_TRUE(a->p[i].sport >= MRC_SPORT_MIN);
		MRC_EXPECT_EQ(a->p[i].sport, b->p[i].sport);	/* seeded */
		for (j = 0; j < i; j++)
			MRC_EXPECT_NE(a->p[i].sport, a->p[j].sport);
	}
	path_setup(b, MRC_MAX_PATHS, 4321);
	MRC_EXPECT_NE(a->p[0].sport, b->p[0].sport);
	path_setup(b, 0, 1);
	MRC_EXPECT_EQ(b->n, 1);
	path_setup(b, 1000, 1);
	MRC_EXPECT_EQ(b->n, MRC_MAX_PATHS);
}

MRC_TEST(path_spray)
{
	struct mrc_paths *ps;
	u16 inflight[MRC_MAX_PATHS] = { 0 };
	int id, i;

	MRC_ALLOC(ps);
	path_setup(ps, 3, 1);
	/* round-robin while every path has room (cwnd 2 each) */
	for (i = 0; i < 6; i++) {
		id = mrc_paths_pick(ps, inflight);
		MRC_EXPECT_EQ(id, i % 3);
		if (id >= 0)
			inflight[id]++;
	}
	MRC_EXPECT_EQ(mrc_paths_pick(ps, inflight), -1);
	inflight[1]--;
	MRC_EXPECT_EQ(mrc_paths_pick(ps, inflight), 1);
}

MRC_TEST(path_blackhole_by_losses)
{
	struct mrc_paths *ps;
	struct mrc_sb_ack_res r;
	u16 old;
	u32 i, bad = 0;

	MRC_ALLOC(ps);
	path_setup(ps, 4, 9);
	memset(&r, 0, sizeof(r));
	/* path 2 loses packets while path 0 delivers */
	for (i = 0; i < MRC_PATH_LOSS_THRESH; i++) {
		r.acked[0] = 1;
		r.lost[2] = 1;
		bad = mrc_paths_on_ack(ps, &r);
		if (i + 1 < MRC_PATH_LOSS_THRESH)
			MRC_EXPECT_EQ(bad, 0);
	}
	MRC_EXPECT_EQ(bad, 1U << 2);
	old = ps->p[2].sport;
	MRC_EXPECT_NE(mrc_paths_replace(ps, 2), old);
	MRC_EXPECT_EQ(ps->p[2].replaced, 1);
	MRC_EXPECT_EQ(ps->p[2].loss_streak, 0);
	for (i = 0; i < 4; i++)
		if (i != 2)
			MRC_EXPECT_NE(ps->p[i].sport, ps->p[2].sport);
	/* a delivery resets the streak: isolated losses never replace */
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 100; i++) {
		r.lost[1] = 1;
		r.acked[1] = 0;
		MRC_EXPECT_EQ(mrc_paths_on_ack(ps, &r), 0);
		r.lost[1] = 0;
		r.acked[1] = 1;
		mrc_paths_on_ack(ps, &r);
	}
	MRC_EXPECT_EQ(mrc_paths_replace(ps, MRC_MAX_PATHS), 0);
}

MRC_TEST(path_blackhole_by_timeouts)
{
	struct mrc_paths *ps;
	struct mrc_sb_ack_res r;

	MRC_ALLOC(ps);
	path_setup(ps, 2, 3);
	mrc_paths_rtt_sample(ps, 1, 1000);
	MRC_EXPECT_EQ(mrc_rtt_rto(&ps->p[1].rtt), 3000);
	MRC_EXPECT_FALSE(mrc_paths_on_timeout(ps, 1));
	MRC_EXPECT_EQ(mrc_rtt_rto(&ps->p[1].rtt), 6000);	/* backed off */
	MRC_EXPECT_TRUE(mrc_paths_on_timeout(ps, 1));
	mrc_paths_replace(ps, 1);
	MRC_EXPECT_EQ(mrc_rtt_rto(&ps->p[1].rtt), 3000);	/* kept RTT */
	MRC_EXPECT_EQ(ps->p[1].rto_streak, 0);
	/* delivery in between keeps the path */
	MRC_EXPECT_FALSE(mrc_paths_on_timeout(ps, 0));
	memset(&r, 0, sizeof(r));
	r.acked[0] = 3;
	mrc_paths_on_ack(ps, &r);
	MRC_EXPECT_FALSE(mrc_paths_on_timeout(ps, 0));
	MRC_EXPECT_FALSE(mrc_paths_on_timeout(ps, 5));	/* no such path */
}

MRC_SUITE(path,
	  MRC_CASE(path_ports),
	  MRC_CASE(path_spray),
	  MRC_CASE(path_blackhole_by_losses),
	  MRC_CASE(path_blackhole_by_timeouts));
