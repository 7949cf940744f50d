// SPDX-License-Identifier: GPL-2.0
/*
 * The responder's READ/atomic queue: PSN order whatever the arrival
 * order, the max_dest_rd_atomic limit, the ready rule (cumulative point,
 * held WRITE last packets), PSN wrap, and random arrival orders in which
 * every request runs once, in PSN order, after every earlier PSN arrived.
 */
#include "mrc_test.h"
#include "rspq.h"
#include "seq.h"

static struct mrc_rspq rq_q;

MRC_TEST(rspq_order_and_limit)
{
	struct mrc_rspq *q = &rq_q;
	static const u32 psn[] = { 7, 3, 5, 4, 9 };
	u32 i, want[] = { 3, 4, 5, 7, 9 };

	mrc_rspq_init(q);
	MRC_EXPECT_TRUE(mrc_rspq_head(q) == NULL);
	for (i = 0; i < 5; i++)
		MRC_EXPECT_TRUE(mrc_rspq_insert(q, psn[i], 5) != NULL);
	MRC_EXPECT_TRUE(mrc_rspq_insert(q, 11, 5) == NULL);	/* limit */
	MRC_EXPECT_EQ(mrc_rspq_len(q), 5);
	for (i = 0; i < 5; i++) {
		MRC_EXPECT_EQ(mrc_rspq_head(q)->req_psn, want[i]);
		mrc_rspq_pop(q);
	}
	MRC_EXPECT_TRUE(mrc_rspq_head(q) == NULL);
	mrc_rspq_pop(q);			/* empty: nothing happens */
	MRC_EXPECT_EQ(mrc_rspq_len(q), 0);
	/* a limit above the slots is the slots; 0 takes nothing */
	for (i = 0; i < MRC_RSPQ_SLOTS; i++)
		MRC_EXPECT_TRUE(mrc_rspq_insert(q, 100 + i, 1000) != NULL);
	MRC_EXPECT_TRUE(mrc_rspq_insert(q, 200, 1000) == NULL);
	mrc_rspq_clear(q);
	MRC_EXPECT_TRUE(mrc_rspq_insert(q, 300, 0) == NULL);
	/* the entry comes back zeroed but for its PSN */
	MRC_EXPECT_EQ(mrc_rspq_insert(q, 301, 1)->executed, 0);
}

MRC_TEST(rspq_ready_rule)
{
	struct mrc_rspq *q = &rq_q;
	u32 base = 0xfffffffcu;		/* PSNs wrap through 0 */

	mrc_rspq_init(q);
	MRC_EXPECT_FALSE(mrc_rspq_ready(q, base + 100, false, 0));
	mrc_rspq_insert(q, base + 5, 16);
	/* cum at the request: something before it (or itself) is missing */
	MRC_EXPECT_FALSE(mrc_rspq_ready(q, base + 5, false, 0));
	MRC_EXPECT_FALSE(mrc_rspq_ready(q, base + 2, false, 0));
	MRC_EXPECT_TRUE(mrc_rspq_ready(q, base + 6, false, 0));
	/* a WRITE last packet before it still held back */
	MRC_EXPECT_FALSE(mrc_rspq_ready(q, base + 6, true, base + 3));
	/* one after it does not matter */
	MRC_EXPECT_TRUE(mrc_rspq_ready(q, base + 9, true, base + 7));
}

static u64 rq_rnd_state;

static u32 rq_rnd(void)
{
	return mrc_test_rnd(&rq_rnd_state);
}

#define RQ_N	48

/*
 * PSNs base..base+RQ_N-1, every third one a READ/atomic request, arrive
 * in a random order (each once); after each arrival the heads that are
 * ready run. Every request must run exactly once, in PSN order, and only
 * when every earlier PSN has arrived.
 */
MRC_TEST(rspq_random_arrivals)
{
	struct mrc_rspq *q = &rq_q;
	u32 seed, i, k, t, base, cum, ran, last = 0, bad = 0;
	u32 order[RQ_N];
	u8 got[RQ_N];
	struct mrc_rsp *r;

	for (seed = 1; seed <= 3000; seed++) {
		rq_rnd_state = seed;
		base = rq_rnd() | 0xffffff00u;
		mrc_rspq_init(q);
		memset(got, 0, sizeof(got));
		for (i = 0; i < RQ_N; i++)
			order[i] = i;
		for (i = RQ_N - 1; i > 0; i--) {
			k = rq_rnd() % (i + 1);
			t = order[i];
			order[i] = order[k];
			order[k] = t;
		}
		cum = 0;
		ran = 0;
		for (i = 0; i < RQ_N; i++) {
			k = order[i];
			got[k] = 1;
			if (k % 3 == 2 &&
			    !mrc_rspq_insert(q, base + k, MRC_RSPQ_SLOTS))
				bad++;
			while (cum < RQ_N && got[cum])
				cum++;
			while (mrc_rspq_ready(q, base + cum, false, 0)) {
				r = mrc_rspq_head(q);
				t = r->req_psn - base;
				/* in order, once, everything before arrived */
				if ((ran && t <= last) || t >= cum)
					bad++;
				for (k = 0; k < t; k++)
					if (!got[k])
						bad++;
				last = t;
				ran++;
				mrc_rspq_pop(q);
			}
		}
		if (ran != RQ_N / 3 || mrc_rspq_len(q))
			bad++;
	}
	MRC_EXPECT_EQ(bad, 0);
}

MRC_SUITE(rspq,
	  MRC_CASE(rspq_order_and_limit),
	  MRC_CASE(rspq_ready_rule),
	  MRC_CASE(rspq_random_arrivals));
