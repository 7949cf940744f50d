// SPDX-License-Identifier: GPL-2.0
/* Receiver window / SACK and sender scoreboard. */
#include "mrc_test.h"
#include "sack.h"

static void sack_pkt(struct mrc_pkt *p, u32 psn, u8 path, u32 ppsn, u8 fl)
{
	memset(p, 0, sizeof(*p));
	p->opcode = MRC_OP_WRITE;
	p->psn = psn;
	p->path_id = path;
	p->ppsn = ppsn;
	p->flags = fl;
	p->tsval = psn * 10;
}

static bool sack_bit(const u8 *sack, u32 i)
{
	return sack[i / 8] & (1U << (i % 8));
}

MRC_TEST(rx_new_dup_oow)
{
	struct mrc_rx *rx;

	MRC_ALLOC(rx);
	mrc_rx_init(rx, 100);
	MRC_EXPECT_EQ(mrc_rx_check(rx, 100), MRC_RX_NEW);
	MRC_EXPECT_EQ(mrc_rx_check(rx, 99), MRC_RX_DUP);
	MRC_EXPECT_EQ(mrc_rx_check(rx, 100 + MRC_WND - 1), MRC_RX_NEW);
	MRC_EXPECT_EQ(mrc_rx_check(rx, 100 + MRC_WND), MRC_RX_OOW);
	MRC_EXPECT_EQ(mrc_rx_commit(rx, 100), 1);
	MRC_EXPECT_EQ(mrc_rx_check(rx, 100), MRC_RX_DUP);
	MRC_EXPECT_EQ(mrc_rx_commit(rx, 100), 0);	/* never twice */
	MRC_EXPECT_EQ(mrc_rx_commit(rx, 105), 0);
	MRC_EXPECT_EQ(mrc_rx_check(rx, 105), MRC_RX_DUP);
	MRC_EXPECT_EQ(mrc_rx_commit(rx, 101 + MRC_WND), 0);	/* OOW */
	MRC_EXPECT_EQ(mrc_rx_check(rx, 101 + MRC_WND - 1), MRC_RX_NEW);
	MRC_EXPECT_EQ(rx->cum, 101);
	MRC_EXPECT_EQ(mrc_rx_rwnd(rx), MRC_WND - 5);
}

MRC_TEST(rx_cumulative_advance)
{
	struct mrc_rx *rx;
	u32 i;

	MRC_ALLOC(rx);
	mrc_rx_init(rx, 0);
	MRC_EXPECT_EQ(mrc_rx_commit(rx, 2), 0);
	MRC_EXPECT_EQ(mrc_rx_commit(rx, 3), 0);
	MRC_EXPECT_EQ(mrc_rx_commit(rx, 1), 0);
	MRC_EXPECT_EQ(rx->cum, 0);
	MRC_EXPECT_EQ(mrc_rx_commit(rx, 0), 4);
	MRC_EXPECT_EQ(rx->cum, 4);
	/* fill the whole window backwards; one commit advances all */
	for (i = MRC_WND - 1 + 4; i > 4; i--)
		MRC_EXPECT_EQ(mrc_rx_commit(rx, i), 0);
	MRC_EXPECT_EQ(mrc_rx_commit(rx, 4), MRC_WND);
	MRC_EXPECT_EQ(rx->cum, MRC_WND + 4);
	MRC_EXPECT_EQ(mrc_rx_rwnd(rx), MRC_WND);
}

MRC_TEST(rx_wrap)
{
	struct mrc_rx *rx;
	u8 sack[MRC_SACK_BYTES];
	u32 base = 0xfffffff0U, i;

	MRC_ALLOC(rx);
	mrc_rx_init(rx, base);
	for (i = 1; i < 32; i += 2)
		mrc_rx_commit(rx, base + i);
	mrc_rx_sack(rx, sack);
	for (i = 0; i < 40; i++)
		MRC_EXPECT_EQ(sack_bit(sack, i), i < 32 && (i & 1));
	for (i = 0; i < 32; i += 2)
		mrc_rx_commit(rx, base + i);
	MRC_EXPECT_EQ(rx->cum, 0x10);
	MRC_EXPECT_EQ(mrc_rx_check(rx, 0xfffffff5U), MRC_RX_DUP);
	MRC_EXPECT_EQ(mrc_rx_check(rx, 0x10), MRC_RX_NEW);
	MRC_EXPECT_EQ(mrc_rx_check(rx, 0x10 + MRC_WND), MRC_RX_OOW);
}

MRC_TEST(rx_ack_policy_and_build)
{
	struct mrc_rx *rx;
	struct mrc_ack_info *a;
	struct mrc_pkt p;
	u32 i;

	MRC_ALLOC(rx);
	MRC_ALLOC(a);
	mrc_rx_init(rx, 0);
	MRC_EXPECT_EQ(rx->ack_every, MRC_ACK_EVERY_DEFAULT);
	rx->ack_every = 4;
	/* in order: an ACK every ack_every packets */
	for (i = 0; i < 3; i++) {
		sack_pkt(&p, i, 0, i, 0);
		MRC_EXPECT_EQ(mrc_rx_on_packet(rx, &p, false, 1000 + i),
			      MRC_RX_NEW);
		mrc_rx_commit(rx, i);
		MRC_EXPECT_FALSE(mrc_rx_ack_due(rx));
	}
	MRC_EXPECT_TRUE(mrc_rx_ack_pending(rx));
	sack_pkt(&p, 3, 1, 0, 0);
	mrc_rx_on_packet(rx, &p, false, 1003);
	mrc_rx_commit(rx, 3);
	MRC_EXPECT_TRUE(mrc_rx_ack_due(rx));
	mrc_rx_build_ack(rx, a, 1010);
	MRC_EXPECT_FALSE(mrc_rx_ack_pending(rx));
	MRC_EXPECT_EQ(a->cum_psn, 4);
	MRC_EXPECT_EQ(a->tsecr, 30);
	MRC_EXPECT_EQ(a->ts_path, 1);
	MRC_EXPECT_EQ(a->ack_delay, 7);
	MRC_EXPECT_EQ(a->npaths, 2);
	MRC_EXPECT_EQ(a->paths[0].path_id, 0);
	MRC_EXPECT_EQ(a->paths[0].max_ppsn, 2);
	MRC_EXPECT_EQ(a->paths[1].path_id, 1);
	MRC_EXPECT_EQ(a->paths[1].max_ppsn, 0);

	/* out of order: counted (reordering is normal), SACK shows the hole */
	sack_pkt(&p, 6, 0, 3, 0);
	MRC_EXPECT_EQ(mrc_rx_on_packet(rx, &p, false, 2000), MRC_RX_NEW);
	mrc_rx_commit(rx, 6);
	MRC_EXPECT_FALSE(mrc_rx_ack_due(rx));
	MRC_EXPECT_TRUE(mrc_rx_ack_pending(rx));
	mrc_rx_build_ack(rx, a, 2000);
	MRC_EXPECT_EQ(a->cum_psn, 4);
	MRC_EXPECT_EQ(a->sack[0], 1U << 2);
	MRC_EXPECT_EQ(a->npaths, 1);	/* only the path that changed */

	/* CE and LAST trigger immediately, CE counted per path */
	sack_pkt(&p, 4, 2, 0, 0);
	mrc_rx_on_packet(rx, &p, true, 3000);
	MRC_EXPECT_TRUE(mrc_rx_ack_due(rx));
	mrc_rx_build_ack(rx, a, 3000);
	MRC_EXPECT_EQ(a->paths[0].path_id, 2);
	MRC_EXPECT_EQ(a->paths[0].ce_count, 1);
	/* a duplicate is reported but ACKed at once */
	sack_pkt(&p, 1, 0, 4, 0);
	MRC_EXPECT_EQ(mrc_rx_on_packet(rx, &p, false, 3001), MRC_RX_DUP);
	MRC_EXPECT_TRUE(mrc_rx_ack_due(rx));
}

/* Send @n packets alternating over @npaths paths. */
static void sb_send(struct mrc_sb *sb, u32 n, u32 npaths, u64 now)
{
	u32 i, psn, ppsn;

	for (i = 0; i < n; i++)
		mrc_sb_send_new(sb, (u8)(mrc_sb_outstanding(sb) % npaths),
				now, i, &psn, &ppsn);
}

static void sb_ack_bits(struct mrc_ack_info *a, u32 cum, const u32 *psns,
			u32 n)
{
	u32 i;

	memset(a, 0, sizeof(*a));
	a->cum_psn = cum;
	for (i = 0; i < n; i++) {
		u32 d = psns[i] - cum;

		a->sack[d / 8] |= 1U << (d % 8);
	}
}

static void sb_ack_path(struct mrc_ack_info *a, u8 path, u32 max_ppsn)
{
	a->paths[a->npaths].path_id = path;
	a->paths[a->npaths].max_ppsn = max_ppsn;
	a->npaths++;
}

/* rx (one packet): on_packet + commit, then whether an ACK is due now */
static bool rx_one(struct mrc_rx *rx, struct mrc_ack_info *a, u32 psn)
{
	struct mrc_pkt p;
	bool due;

	sack_pkt(&p, psn, 0, psn, 0);
	mrc_rx_on_packet(rx, &p, false, 1000 + psn);
	mrc_rx_commit(rx, psn);
	due = mrc_rx_ack_due(rx);
	if (due)
		mrc_rx_build_ack(rx, a, 2000 + psn);
	return due;
}

MRC_TEST(rx_ack_policy_holes)
{
	struct mrc_rx *rx;
	struct mrc_ack_info *a;
	struct mrc_pkt p;
	u32 i, n = 0;

	MRC_ALLOC(rx);
	MRC_ALLOC(a);
	mrc_rx_init(rx, 100);
	MRC_EXPECT_EQ(rx->ack_hole, MRC_ACK_EVERY_HOLE);
	for (i = 100; i < 103; i++)	/* in order, below ack_every */
		MRC_EXPECT_FALSE(rx_one(rx, a, i));
	/* 103 missing: a gap alone is no reason (paths reorder) */
	MRC_EXPECT_FALSE(rx_one(rx, a, 104));
	for (i = 105; i < 105 + 4 * MRC_ACK_EVERY_HOLE; i++)
		n += rx_one(rx, a, i);		/* past the hole */
	MRC_EXPECT_EQ(n, 4);			/* every ack_hole-th */
	MRC_EXPECT_EQ(a->cum_psn, 103);
	MRC_EXPECT_TRUE(sack_bit(a->sack, 1));	/* 104 */
	MRC_EXPECT_FALSE(rx_one(rx, a, 140));	/* another gap: counted */
	MRC_EXPECT_FALSE(rx_one(rx, a, 103));	/* late; a hole remains */
	MRC_EXPECT_FALSE(rx_one(rx, a, 137));
	/* a repair is acknowledged at once */
	sack_pkt(&p, 138, 0, 138, MRC_F_RETX);
	mrc_rx_on_packet(rx, &p, false, 5000);
	mrc_rx_commit(rx, 138);
	MRC_EXPECT_TRUE(mrc_rx_ack_due(rx));
	mrc_rx_build_ack(rx, a, 5001);
	MRC_EXPECT_EQ(a->cum_psn, 139);
	/* so is the packet that closes the last hole */
	MRC_EXPECT_TRUE(rx_one(rx, a, 139));
	MRC_EXPECT_EQ(a->cum_psn, 141);
	MRC_EXPECT_FALSE(rx_one(rx, a, 141));	/* in order again */
	/* a smaller ack_hole acknowledges more often */
	mrc_rx_init(rx, 0);
	rx->ack_hole = 2;
	MRC_EXPECT_FALSE(rx_one(rx, a, 1));
	MRC_EXPECT_TRUE(rx_one(rx, a, 2));
}

MRC_TEST(sb_cumulative)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;
	u32 psn, ppsn;

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	mrc_sb_init(sb, 1000, 0, 3);
	MRC_EXPECT_EQ(mrc_sb_send_new(sb, 0, 5, 42, &psn, &ppsn), 0);
	MRC_EXPECT_EQ(psn, 1000);
	MRC_EXPECT_EQ(ppsn, 0);
	MRC_EXPECT_EQ(mrc_sb_cookie(sb, 1000), 42);
	sb_send(sb, 9, 1, 5);
	MRC_EXPECT_EQ(sb->inflight[0], 10);
	sb_ack_bits(a, 1005, NULL, 0);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_acked, 5);
	MRC_EXPECT_EQ(r.acked[0], 5);
	MRC_EXPECT_EQ(r.cum_advance, 5);
	MRC_EXPECT_EQ(sb->una, 1005);
	MRC_EXPECT_EQ(sb->inflight[0], 5);
	/* an old ACK changes nothing */
	sb_ack_bits(a, 1002, NULL, 0);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_acked, 0);
	MRC_EXPECT_EQ(sb->una, 1005);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

/*
 * protocol.rst "ACK processing", step 1: una passes SACKed PSNs (a
 * receiver never takes a SACK back). A response's implicit ACK names its
 * request, not the peer's cum: it may stop on a PSN SACKed before, and
 * nothing would be left to retransmit (sim finding: a hang).
 */
MRC_TEST(sb_una_passes_sacked)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;
	u32 sacked[1] = { 1002 };

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	mrc_sb_init(sb, 1000, 0, 3);
	sb_send(sb, 3, 1, 5);			/* 1000 READ, 1001, 1002 */
	/* 1002 arrived first: SACKed */
	sb_ack_bits(a, 1000, sacked, 1);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(mrc_sb_state_of(sb, 1002), MRC_SB_SACKED);
	/* the response of 1000, then an ACK of 1001: una passes 1002 */
	MRC_ASSERT_TRUE(mrc_sb_resp_ack(sb, 1000, 10, a));
	MRC_EXPECT_EQ(a->cum_psn, 1001);
	MRC_EXPECT_EQ(a->ts_path, 0);
	MRC_EXPECT_EQ(a->tsecr, 5);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(sb->una, 1001);
	sb_ack_bits(a, 1002, NULL, 0);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(sb->una, 1003);
	MRC_EXPECT_EQ(r.cum_advance, 2);
	MRC_EXPECT_EQ(mrc_sb_outstanding(sb), 0);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
	/* nothing outstanding: no implicit ACK */
	MRC_EXPECT_FALSE(mrc_sb_resp_ack(sb, 1002, 10, a));
}

/* Only the packet that is really missing is marked lost. */
MRC_TEST(sb_marks_only_missing)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;
	u32 got[] = { 3, 4, 5, 6, 7, 8, 9 };
	u32 psn;

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	mrc_sb_init(sb, 0, 0, 3);
	sb_send(sb, 10, 2, 0);	/* even PSNs path 0, odd path 1 */
	/* PSN 2 (path 0, PPSN 1) lost; everything else arrived */
	sb_ack_bits(a, 2, got, ARRAY_SIZE(got));
	sb_ack_path(a, 0, 4);
	sb_ack_path(a, 1, 4);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_acked, 9);
	MRC_EXPECT_EQ(r.newly_lost, 1);
	MRC_EXPECT_EQ(r.lost[0], 1);
	MRC_EXPECT_EQ(mrc_sb_state_of(sb, 2), MRC_SB_LOST);
	MRC_EXPECT_EQ(mrc_sb_next_lost(sb, &psn), 0);
	MRC_EXPECT_EQ(psn, 2);
	for (psn = 3; psn < 10; psn++)
		MRC_EXPECT_EQ(mrc_sb_state_of(sb, psn), MRC_SB_SACKED);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

/* Reordering between paths: a whole path lagging is not loss. */
MRC_TEST(sb_reorder_between_paths)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;
	u32 got[] = { 1, 3, 5, 7, 9, 11, 13, 15 };
	u32 psn;

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	mrc_sb_init(sb, 0, 0, 3);
	sb_send(sb, 16, 2, 0);
	/* path 1 (odd PSNs) all arrived, path 0 still in flight */
	sb_ack_bits(a, 0, got, ARRAY_SIZE(got));
	sb_ack_path(a, 1, 7);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_acked, 8);
	MRC_EXPECT_EQ(r.newly_lost, 0);
	MRC_EXPECT_EQ(mrc_sb_next_lost(sb, &psn), -1);
	MRC_EXPECT_EQ(sb->inflight[0], 8);
	MRC_EXPECT_EQ(sb->inflight[1], 0);
	/* then path 0 arrives late: all delivered, no retransmission */
	sb_ack_bits(a, 16, NULL, 0);
	sb_ack_path(a, 0, 7);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_acked, 8);
	MRC_EXPECT_EQ(r.newly_lost, 0);
	MRC_EXPECT_EQ(mrc_sb_outstanding(sb), 0);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

/* A gap on one path is loss only dupthresh PPSNs later. */
MRC_TEST(sb_dupthresh)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;
	u32 got[3] = { 1, 2, 3 }, k;

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	mrc_sb_init(sb, 0, 0, 3);
	sb_send(sb, 6, 1, 0);
	for (k = 1; k <= 3; k++) {
		sb_ack_bits(a, 0, got, k);
		sb_ack_path(a, 0, k);
		MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
		MRC_EXPECT_EQ(r.newly_lost, k == 3 ? 1 : 0);
		MRC_EXPECT_EQ(mrc_sb_state_of(sb, 0),
			      k == 3 ? MRC_SB_LOST : MRC_SB_INFLIGHT);
	}
	MRC_EXPECT_EQ(mrc_sb_state_of(sb, 4), MRC_SB_INFLIGHT);
	/* the SACKed PPSNs alone (no path record) also prove progress */
	mrc_sb_init(sb, 0, 0, 3);
	sb_send(sb, 6, 1, 0);
	sb_ack_bits(a, 0, got, 3);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_lost, 1);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

/* Retransmission moves the packet to another path and is tracked. */
MRC_TEST(sb_retransmit)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;
	u32 got[] = { 1, 2, 3 }, psn, ppsn;

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	mrc_sb_init(sb, 0, 0, 3);
	sb_send(sb, 4, 1, 0);
	sb_ack_bits(a, 0, got, 3);
	sb_ack_path(a, 0, 3);
	mrc_sb_apply_ack(sb, a, &r);
	MRC_EXPECT_EQ(mrc_sb_next_lost(sb, &psn), 0);
	MRC_EXPECT_EQ(mrc_sb_on_retx(sb, psn, 1, 50, &ppsn), 0);
	MRC_EXPECT_EQ(ppsn, 0);	/* first packet on path 1 */
	MRC_EXPECT_EQ(sb->inflight[1], 1);
	MRC_EXPECT_EQ(mrc_sb_next_lost(sb, &psn), -1);
	MRC_EXPECT_EQ(mrc_sb_on_retx(sb, 2, 1, 50, &ppsn), -MRC_E_FIELD);
	MRC_EXPECT_EQ(mrc_sb_on_retx(sb, 9, 1, 50, &ppsn), -MRC_E_FIELD);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
	/* the old path's later progress does not re-mark it */
	sb_ack_bits(a, 0, got, 3);
	sb_ack_path(a, 0, 3);
	mrc_sb_apply_ack(sb, a, &r);
	MRC_EXPECT_EQ(r.newly_lost, 0);
	sb_ack_bits(a, 4, NULL, 0);
	sb_ack_path(a, 1, 0);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.acked[1], 1);
	MRC_EXPECT_EQ(mrc_sb_outstanding(sb), 0);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

MRC_TEST(sb_rejects_bogus_ack)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	u32 got[] = { 7 };

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	mrc_sb_init(sb, 0, 0, 3);
	sb_send(sb, 5, 1, 0);
	sb_ack_bits(a, 6, NULL, 0);		/* cum beyond nxt */
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, NULL), -MRC_E_FIELD);
	sb_ack_bits(a, 2, got, 1);		/* SACK of unsent PSN */
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, NULL), -MRC_E_FIELD);
	sb_ack_bits(a, 2, NULL, 0);
	sb_ack_path(a, 0, 5);			/* PPSN never sent */
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, NULL), -MRC_E_FIELD);
	sb_ack_bits(a, 2, NULL, 0);
	sb_ack_path(a, 1, 0);			/* path never used */
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, NULL), -MRC_E_FIELD);
	MRC_EXPECT_EQ(sb->una, 0);		/* nothing applied */
	MRC_EXPECT_EQ(sb->inflight[0], 5);
	sb_ack_bits(a, 5, NULL, 0);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, NULL), 0);
	MRC_EXPECT_EQ(sb->una, 5);
}

MRC_TEST(sb_wrap)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;
	u32 got[4], i, psn;

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	mrc_sb_init(sb, 0xfffffffeU, 0xfffffffdU, 3);
	sb_send(sb, 8, 1, 0);
	MRC_EXPECT_EQ(sb->nxt, 6);
	MRC_EXPECT_EQ(sb->path_nxt[0], 5);
	/* PSN 0xffffffff (PPSN 0xfffffffe) lost across both wraps */
	for (i = 0; i < 4; i++)
		got[i] = i;
	sb_ack_bits(a, 0xffffffffU, got, 4);
	sb_ack_path(a, 0, 2);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.cum_advance, 1);
	MRC_EXPECT_EQ(r.newly_lost, 1);
	MRC_EXPECT_EQ(mrc_sb_next_lost(sb, &psn), 0);
	MRC_EXPECT_EQ(psn, 0xffffffffU);
	MRC_EXPECT_EQ(mrc_sb_tlp_psn(sb, &psn), 0);
	MRC_EXPECT_EQ(psn, 5);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

MRC_TEST(sb_window_and_timers)
{
	struct mrc_sb *sb;
	u16 lost[MRC_MAX_PATHS] = { 0 };
	u32 psn, ppsn, i;

	MRC_ALLOC(sb);
	mrc_sb_init(sb, 7, 0, 3);
	for (i = 0; i < MRC_WND; i++)
		MRC_EXPECT_EQ(mrc_sb_send_new(sb, i % 2, i < 10 ? 100 : 900,
					      0, &psn, &ppsn), 0);
	MRC_EXPECT_EQ(mrc_sb_send_new(sb, 0, 0, 0, &psn, &ppsn),
		      -MRC_E_NOSPC);
	MRC_EXPECT_EQ(mrc_sb_send_new(sb, MRC_MAX_PATHS, 0, 0, &psn, &ppsn),
		      -MRC_E_PATH);
	/* stale: only the 10 sent at t=100 are older than 500 us at 1000 */
	MRC_EXPECT_EQ(mrc_sb_mark_stale_lost(sb, 1000, 500, lost), 10);
	MRC_EXPECT_EQ(lost[0], 5);
	MRC_EXPECT_EQ(lost[1], 5);
	MRC_EXPECT_EQ(mrc_sb_mark_inflight_lost(sb, 1), MRC_WND / 2 - 5);
	MRC_EXPECT_EQ(sb->inflight[1], 0);
	MRC_EXPECT_EQ(mrc_sb_mark_inflight_lost(sb, MRC_MAX_PATHS),
		      MRC_WND / 2 - 5);
	MRC_EXPECT_EQ(sb->nlost, MRC_WND);
	MRC_EXPECT_EQ(mrc_sb_mark_lost(sb, 7), 0);
	MRC_EXPECT_EQ(mrc_sb_mark_lost(sb, 6), -MRC_E_FIELD);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

/*
 * End to end over a lossy, reordering 3-path channel: every PSN is placed
 * exactly once and everything is eventually delivered.
 */
struct sack_sim {
	struct mrc_rx rx;
	struct mrc_sb sb;
	struct mrc_ack_info ack;
	struct mrc_pkt q[64];
	u8 placed[1024];
	u32 nq;
	u32 rng;
};

static u32 sim_rand(struct sack_sim *s)
{
	s->rng = s->rng * 1103515245U + 12345U;
	return s->rng >> 16;
}

MRC_TEST(sack_end_to_end_lossy)
{
	struct sack_sim *s;
	const u32 total = 1000, isn = 0xffffff00U;
	u32 sent = 0, rounds = 0, i, psn, ppsn, dups = 0;
	u64 now = 0;

	MRC_ALLOC(s);
	s->rng = 1;
	mrc_rx_init(&s->rx, isn);
	mrc_sb_init(&s->sb, isn, 0, 3);
	while (s->rx.cum != isn + total && rounds++ < 100000) {
		now += 10;
		/* send: retransmits first, then new data, on random paths */
		while (s->nq < ARRAY_SIZE(s->q)) {
			u8 path = sim_rand(s) % 3;
			struct mrc_pkt *p = &s->q[s->nq];

			if (!mrc_sb_next_lost(&s->sb, &psn)) {
				mrc_sb_on_retx(&s->sb, psn, path, now, &ppsn);
			} else if (sent < total && mrc_sb_can_send(&s->sb) &&
				   mrc_sb_outstanding(&s->sb) < 48) {
				mrc_sb_send_new(&s->sb, path, now, 0, &psn,
						&ppsn);
				sent++;
			} else {
				break;
			}
			memset(p, 0, sizeof(*p));
			p->psn = psn;
			p->ppsn = ppsn;
			p->path_id = path;
			s->nq++;
		}
		/* deliver: 10% loss, FIFO per path, paths interleave */
		for (i = 0; i < s->nq; i++) {
			struct mrc_pkt *p = &s->q[i];

			if (sim_rand(s) % 10 == 0)
				continue;
			if (mrc_rx_on_packet(&s->rx, p, false, now) ==
			    MRC_RX_NEW) {
				s->placed[(p->psn - isn) % 1024]++;
				mrc_rx_commit(&s->rx, p->psn);
			} else {
				dups++;
			}
		}
		s->nq = 0;
		/* ACK (lost 10% of the time); RTO every 50 rounds */
		mrc_rx_build_ack(&s->rx, &s->ack, now);
		if (sim_rand(s) % 10)
			MRC_EXPECT_EQ(mrc_sb_apply_ack(&s->sb, &s->ack, NULL),
				      0);
		if (rounds % 50 == 0)
			mrc_sb_mark_stale_lost(&s->sb, now, 200, NULL);
		MRC_ASSERT_TRUE(mrc_sb_check(&s->sb) == 0);
	}
	MRC_EXPECT_EQ(s->rx.cum, isn + total);
	for (i = 0; i < total; i++)
		MRC_EXPECT_EQ(s->placed[i], 1);
	/* losses were recovered by retransmission, never re-placed */
	MRC_EXPECT_TRUE(s->sb.una == isn + total);
	(void)dups;
}

/*
 * Time-based loss rule: with a reordering window set, a packet is lost
 * only when something sent on its path more than reo_wnd later arrived;
 * a packet overtaken by one sent right after it (reordering) is not.
 */
MRC_TEST(sb_reorder_window)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;
	u32 got[8], psn, ppsn, i;

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	mrc_sb_init(sb, 0, 0, 3);
	sb->reo_wnd_us[0] = 1000;
	/* a burst of 6 within 50 us: PSN 0 overtaken by 1..5 */
	for (i = 0; i < 6; i++)
		MRC_EXPECT_EQ(mrc_sb_send_new(sb, 0, 100 + i * 10, 0, &psn,
					      &ppsn), 0);
	for (i = 0; i < 5; i++)
		got[i] = i + 1;
	sb_ack_bits(a, 0, got, 5);
	sb_ack_path(a, 0, 5);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_lost, 0);
	MRC_EXPECT_EQ(mrc_sb_state_of(sb, 0), MRC_SB_INFLIGHT);
	/* one sent 1.5 ms later arrives: now PSN 0 is lost, by an ACK */
	MRC_EXPECT_EQ(mrc_sb_send_new(sb, 0, 1600, 0, &psn, &ppsn), 0);
	got[5] = 6;
	sb_ack_bits(a, 0, got, 6);
	sb_ack_path(a, 0, 6);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_lost, 1);
	MRC_EXPECT_EQ(mrc_sb_state_of(sb, 0), MRC_SB_LOST);
	MRC_EXPECT_EQ(mrc_sb_cause(sb, 0), MRC_LOSS_ACK);
	/* a retransmission's delivery counts through the echoed timestamp */
	mrc_sb_init(sb, 0, 0, 3);
	sb->reo_wnd_us[0] = 1000;
	for (i = 0; i < 6; i++)
		MRC_EXPECT_EQ(mrc_sb_send_new(sb, 0, 100 + i * 10, 0, &psn,
					      &ppsn), 0);
	sb_ack_bits(a, 0, got, 4);		/* 1..4 */
	a->ts_path = 0;
	a->tsecr = 5000;			/* never sent: ignored */
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_lost, 0);
	MRC_EXPECT_EQ(mrc_sb_mark_lost_cause(sb, 5, MRC_LOSS_TLP), 0);
	MRC_EXPECT_EQ(mrc_sb_on_retx(sb, 5, 0, 3000, &ppsn), 0);
	a->tsecr = 3000;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_lost, 1);
	MRC_EXPECT_EQ(mrc_sb_state_of(sb, 0), MRC_SB_LOST);
	/*
	 * The window is per path; path 1 without one (no RTT sample yet)
	 * uses the widest of the others; without any, the count rule.
	 */
	mrc_sb_init(sb, 0, 0, 3);
	sb->reo_wnd_us[0] = 1000;
	for (i = 0; i < 5; i++)
		MRC_EXPECT_EQ(mrc_sb_send_new(sb, 1, 100 + i, 0, &psn, &ppsn),
			      0);
	sb_ack_bits(a, 0, got, 4);
	sb_ack_path(a, 1, 4);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_lost, 0);
	sb->reo_wnd_us[0] = 0;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_lost, 1);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

/* Every way into MRC_SB_LOST records why. */
MRC_TEST(sb_loss_cause)
{
	struct mrc_sb *sb;
	u16 lost[MRC_MAX_PATHS] = { 0 };
	u32 psn, ppsn;

	MRC_ALLOC(sb);
	mrc_sb_init(sb, 0, 0, 3);
	sb_send(sb, 4, 1, 0);
	MRC_EXPECT_EQ(mrc_sb_send_new(sb, 2, 2500, 0, &psn, &ppsn), 0);
	MRC_EXPECT_EQ(mrc_sb_send_new(sb, 2, 2500, 0, &psn, &ppsn), 0);
	MRC_EXPECT_EQ(mrc_sb_cause(sb, 0), MRC_LOSS_NONE);
	MRC_EXPECT_EQ(mrc_sb_mark_lost(sb, 0), 0);
	MRC_EXPECT_EQ(mrc_sb_cause(sb, 0), MRC_LOSS_NAK);
	MRC_EXPECT_EQ(mrc_sb_mark_lost_cause(sb, 1, MRC_LOSS_TLP), 0);
	MRC_EXPECT_EQ(mrc_sb_cause(sb, 1), MRC_LOSS_TLP);
	MRC_EXPECT_EQ(mrc_sb_mark_stale_lost(sb, 3000, 2000, lost), 2);
	MRC_EXPECT_EQ(mrc_sb_cause(sb, 2), MRC_LOSS_RTO);
	MRC_EXPECT_EQ(mrc_sb_mark_inflight_lost(sb, 2), 2);
	MRC_EXPECT_EQ(mrc_sb_cause(sb, 5), MRC_LOSS_PATH);
	MRC_EXPECT_EQ(mrc_sb_cause(sb, 6), MRC_LOSS_NONE);	/* not sent */
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
	/* first RTO: only the oldest stale packet of each path */
	mrc_sb_init(sb, 0, 0, 3);
	sb_send(sb, 8, 2, 0);
	MRC_EXPECT_EQ(mrc_sb_mark_stale_lost_n(sb, 3000, 2000, NULL, 1), 2);
	MRC_EXPECT_EQ(mrc_sb_state_of(sb, 0), MRC_SB_LOST);
	MRC_EXPECT_EQ(mrc_sb_state_of(sb, 1), MRC_SB_LOST);
	MRC_EXPECT_EQ(mrc_sb_state_of(sb, 2), MRC_SB_INFLIGHT);
	MRC_EXPECT_EQ(mrc_sb_mark_stale_lost(sb, 3000, 2000, NULL), 6);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

/*
 * A stale packet of the QP's previous life (RESET and reuse with packets
 * in flight) arrives as a duplicate or out of window: it must not update
 * the per-path report, else the report names a PPSN the new sender never
 * sent and the sender refuses every ACK (simulator finding 4).
 */
MRC_TEST(rx_stale_packet_keeps_path_report)
{
	struct mrc_ack_info *a;
	struct mrc_sb *sb;
	struct mrc_rx *rx;
	struct mrc_pkt p;
	u32 i, psn, ppsn;

	MRC_ALLOC(rx);
	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	mrc_rx_init(rx, 1000);
	mrc_sb_init(sb, 1000, 0, 3);
	for (i = 0; i < 3; i++) {
		MRC_EXPECT_EQ(mrc_sb_send_new(sb, 0, 10, 0, &psn, &ppsn), 0);
		sack_pkt(&p, psn, 0, ppsn, 0);
		MRC_EXPECT_EQ(mrc_rx_on_packet(rx, &p, false, 20), MRC_RX_NEW);
		mrc_rx_commit(rx, psn);
	}
	/* old life: PSN before cum (DUP) and far ahead (OOW), high PPSNs */
	sack_pkt(&p, 5, 0, 500, 0);
	MRC_EXPECT_EQ(mrc_rx_on_packet(rx, &p, false, 30), MRC_RX_DUP);
	sack_pkt(&p, 1000 + 4 * MRC_WND, 1, 700, 0);
	MRC_EXPECT_EQ(mrc_rx_on_packet(rx, &p, true, 30), MRC_RX_OOW);
	mrc_rx_build_ack(rx, a, 40);
	MRC_EXPECT_EQ(a->cum_psn, 1003);
	for (i = 0; i < a->npaths; i++)
		MRC_EXPECT_TRUE(a->paths[i].path_id == 0 &&
				a->paths[i].max_ppsn == 2);
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, NULL), 0);
	MRC_EXPECT_EQ(sb->una, 1003);
}

MRC_SUITE(sack,
	  MRC_CASE(rx_new_dup_oow),
	  MRC_CASE(rx_cumulative_advance),
	  MRC_CASE(rx_wrap),
	  MRC_CASE(rx_ack_policy_and_build),
	  MRC_CASE(rx_ack_policy_holes),
	  MRC_CASE(sb_cumulative),
	  MRC_CASE(sb_una_passes_sacked),
	  MRC_CASE(sb_marks_only_missing),
	  MRC_CASE(sb_reorder_between_paths),
	  MRC_CASE(sb_dupthresh),
	  MRC_CASE(sb_reorder_window),
	  MRC_CASE(sb_loss_cause),
	  MRC_CASE(sb_retransmit),
	  MRC_CASE(sb_rejects_bogus_ack),
	  MRC_CASE(sb_wrap),
	  MRC_CASE(sb_window_and_timers),
	  MRC_CASE(sack_end_to_end_lossy),
	  MRC_CASE(rx_stale_packet_keeps_path_report));
