// SPDX-License-Identifier: GPL-2.0
/*
 * Adaptive reordering window: spurious-retransmission detection (DSACK,
 * echoed timestamp of the previous transmission), growth, cap, decay,
 * wrap-around, and the DSACK field on the wire.
 */
#include "mrc_test.h"
#include "reo.h"
#include "sack.h"
#include "rtt.h"

/* Window arithmetic: steps of SRTT/4 over the base, capped at SRTT. */
MRC_TEST(reo_growth_cap_decay)
{
	struct mrc_reo r;
	u32 una = 0, i;

	mrc_reo_init(&r, 0);
	MRC_EXPECT_EQ(mrc_reo_wnd(&r, 1600, 4000), 1600);
	MRC_EXPECT_EQ(mrc_reo_wnd(&r, 0, 4000), 0);	/* no sample yet */
	/* one step per round, however many spurious retransmits */
	MRC_EXPECT_TRUE(mrc_reo_on_spurious(&r));
	MRC_EXPECT_FALSE(mrc_reo_on_spurious(&r));
	MRC_EXPECT_EQ(r.steps, 1);
	MRC_EXPECT_EQ(mrc_reo_wnd(&r, 1600, 4000), 2600);
	/* una == round end: the round is not over yet */
	mrc_reo_on_ack(&r, 0, 10);
	MRC_EXPECT_FALSE(mrc_reo_on_spurious(&r));
	/* una passes PSN 0: next round (ends after PSN 10) */
	mrc_reo_on_ack(&r, 1, 10);
	MRC_EXPECT_TRUE(mrc_reo_on_spurious(&r));
	MRC_EXPECT_EQ(mrc_reo_wnd(&r, 1600, 4000), 3600);
	/* cap: SRTT */
	for (i = 0; i < 10; i++) {
		una += 20;
		mrc_reo_on_ack(&r, una, una + 10);
		mrc_reo_on_spurious(&r);
	}
	MRC_EXPECT_EQ(r.steps, MRC_REO_STEPS_MAX);
	MRC_EXPECT_EQ(mrc_reo_wnd(&r, 1600, 4000), 4000);
	/* a base above SRTT is kept */
	MRC_EXPECT_EQ(mrc_reo_wnd(&r, 5000, 4000), 5000);
	una += 20;
	mrc_reo_on_ack(&r, una, una + 10);	/* ends the spurious round */
	/* rounds without loss: nothing to learn, no decay */
	for (i = 0; i < 4 * MRC_REO_PERSIST; i++) {
		una += 20;
		mrc_reo_on_ack(&r, una, una + 10);
	}
	MRC_EXPECT_EQ(r.steps, MRC_REO_STEPS_MAX);
	/* decay: one step back per MRC_REO_PERSIST genuine recoveries */
	for (i = 0; i < MRC_REO_PERSIST - 1; i++) {
		mrc_reo_on_loss(&r);
		una += 20;
		mrc_reo_on_ack(&r, una, una + 10);
	}
	MRC_EXPECT_EQ(r.steps, MRC_REO_STEPS_MAX);
	mrc_reo_on_loss(&r);
	una += 20;
	mrc_reo_on_ack(&r, una, una + 10);
	MRC_EXPECT_EQ(r.steps, MRC_REO_STEPS_MAX - 1);
	/* ACKs within one round do not count as rounds */
	for (i = 0; i < 3 * MRC_REO_PERSIST; i++) {
		mrc_reo_on_loss(&r);
		mrc_reo_on_ack(&r, una, una + 10);
	}
	MRC_EXPECT_EQ(r.steps, MRC_REO_STEPS_MAX - 1);
	for (i = 0; i < MRC_REO_STEPS_MAX * MRC_REO_PERSIST; i++) {
		mrc_reo_on_loss(&r);
		una += 20;
		mrc_reo_on_ack(&r, una, una + 10);
	}
	MRC_EXPECT_EQ(r.steps, 0);
	MRC_EXPECT_EQ(mrc_reo_wnd(&r, 1600, 4000), 1600);
	/* a spurious retransmit in a round restarts the countdown */
	mrc_reo_on_spurious(&r);
	for (i = 0; i < MRC_REO_PERSIST - 1; i++) {
		mrc_reo_on_loss(&r);
		una += 20;
		mrc_reo_on_ack(&r, una, una + 10);
	}
	mrc_reo_on_spurious(&r);	/* grows again: a new round */
	MRC_EXPECT_EQ(r.steps, 2);
	/* its round does not count, the next MRC_REO_PERSIST do */
	for (i = 0; i < MRC_REO_PERSIST; i++) {
		mrc_reo_on_loss(&r);
		una += 20;
		mrc_reo_on_ack(&r, una, una + 10);
	}
	MRC_EXPECT_EQ(r.steps, 2);
	mrc_reo_on_loss(&r);
	una += 20;
	mrc_reo_on_ack(&r, una, una + 10);
	MRC_EXPECT_EQ(r.steps, 1);
	/* a recovery round that also had a spurious one does not count */
	for (i = 0; i < 2 * MRC_REO_PERSIST; i++) {
		mrc_reo_on_loss(&r);
		mrc_reo_on_spurious(&r);
		una += 20;
		mrc_reo_on_ack(&r, una, una + 10);
	}
	MRC_EXPECT_EQ(r.steps, MRC_REO_STEPS_MAX);
}

/* Rounds across the 2^32 PSN wrap. */
MRC_TEST(reo_round_wrap)
{
	struct mrc_reo r;

	mrc_reo_init(&r, 0xfffffff0U);
	MRC_EXPECT_TRUE(mrc_reo_on_spurious(&r));
	mrc_reo_on_ack(&r, 0xfffffff0U, 0x10);
	MRC_EXPECT_FALSE(mrc_reo_on_spurious(&r));	/* same round */
	mrc_reo_on_ack(&r, 0xfffffff8U, 0x10);		/* passed: new round */
	MRC_EXPECT_EQ(r.round_end, 0x10);
	MRC_EXPECT_TRUE(mrc_reo_on_spurious(&r));
	mrc_reo_on_ack(&r, 0x8, 0x20);			/* before 0x10 */
	MRC_EXPECT_FALSE(mrc_reo_on_spurious(&r));
	mrc_reo_on_ack(&r, 0x11, 0x20);
	MRC_EXPECT_TRUE(mrc_reo_on_spurious(&r));
	MRC_EXPECT_EQ(r.steps, 3);
}

static void reo_ack(struct mrc_ack_info *a, u32 cum, u32 lo, u32 hi)
{
	u32 i;

	memset(a, 0, sizeof(*a));
	a->cum_psn = cum;
	for (i = lo; i != hi; i++)
		a->sack[(i - cum) / 8] |= 1U << ((i - cum) % 8);
}

/*
 * Sender scoreboard at @isn: 8 packets on path 0 at t = 0..70 us, PSN
 * isn overtaken by isn + 1..7 (t = 70 is more than the 50 us window
 * after it): the ACK rule marks isn lost, and it is retransmitted at
 * t = 1000 on path 1. Returns the retransmission's PPSN.
 */
static u32 reo_setup(struct mrc_sb *sb, struct mrc_ack_info *a, u32 isn)
{
	struct mrc_sb_ack_res r;
	u32 psn, ppsn, i;

	mrc_sb_init(sb, isn, 0, 3);
	for (i = 0; i < 8; i++)
		mrc_sb_send_new(sb, 0, i * 10, 0, &psn, &ppsn);
	mrc_sb_set_reo_wnd(sb, 0, 50, 200);
	reo_ack(a, isn, isn + 1, isn + 8);
	a->paths[0].path_id = 0;
	a->paths[0].max_ppsn = 7;
	a->npaths = 1;
	a->ts_path = 0;
	a->tsecr = 70;
	mrc_sb_apply_ack(sb, a, &r);
	if (r.newly_lost != 1 || mrc_sb_cause(sb, isn) != MRC_LOSS_ACK)
		return ~0U;
	mrc_sb_on_retx(sb, isn, 1, 1000, &ppsn);
	return ppsn;
}

/* DSACK of a retransmission the ACK rule caused: spurious, widens. */
MRC_TEST(reo_dsack_spurious)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	MRC_EXPECT_EQ(reo_setup(sb, a, 100), 0);
	/* the retransmission arrives first (tsecr = its time): not spurious */
	reo_ack(a, 108, 0, 0);
	a->ts_path = 1;
	a->tsecr = 1000;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_acked, 1);
	MRC_EXPECT_EQ(r.spurious, 0);
	MRC_EXPECT_EQ(sb->reo[0].steps, 0);
	/* then the original, a duplicate: DSACK 100 (below cum) */
	a->dsack = 1;
	a->dsack_psn = 100;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.spurious, 1);
	MRC_EXPECT_EQ(sb->reo[0].steps, 1);	/* the path it was lost on */
	MRC_EXPECT_EQ(sb->reo[1].steps, 0);
	mrc_sb_set_reo_wnd(sb, 0, 50, 200);
	MRC_EXPECT_EQ(sb->reo_wnd_us[0], 100);
	/* the same DSACK again counts once */
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.spurious, 0);
	/* DSACK of a PSN never retransmitted (network duplicate): nothing */
	a->dsack_psn = 103;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.spurious, 0);
	/* DSACK of a PSN not sent: ignored, the ACK still applies */
	a->dsack_psn = 108;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.spurious, 0);
	MRC_EXPECT_EQ(sb->reo[0].steps, 1);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

/* The ACK that delivers it echoes the original: spurious, no DSACK. */
MRC_TEST(reo_echo_spurious)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	MRC_EXPECT_EQ(reo_setup(sb, a, 100), 0);
	reo_ack(a, 108, 0, 0);
	a->ts_path = 0;
	a->tsecr = 0;		/* PSN 100's first transmission */
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.spurious, 1);
	MRC_EXPECT_EQ(sb->reo[0].steps, 1);
	/* a later DSACK of the same retransmission does not count twice */
	a->dsack = 1;
	a->dsack_psn = 100;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.spurious, 0);
	/* the same timestamp on another path is not the original */
	MRC_EXPECT_EQ(reo_setup(sb, a, 100), 0);
	reo_ack(a, 108, 0, 0);
	a->ts_path = 1;
	a->tsecr = 0;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.spurious, 0);
	MRC_EXPECT_EQ(sb->reo[0].steps, 0);
}

/* Real loss, and retransmissions of other causes, never widen. */
MRC_TEST(reo_no_growth_on_loss)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;
	u32 psn, ppsn, i;

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	/* only the retransmission arrives */
	MRC_EXPECT_EQ(reo_setup(sb, a, 100), 0);
	reo_ack(a, 108, 0, 0);
	a->ts_path = 1;
	a->tsecr = 1000;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.spurious, 0);
	for (i = 0; i < 4 * MRC_REO_PERSIST; i++) {
		mrc_sb_send_new(sb, 0, 2000 + i, 0, &psn, &ppsn);
		reo_ack(a, psn + 1, 0, 0);
		mrc_sb_apply_ack(sb, a, &r);
		MRC_EXPECT_EQ(r.spurious, 0);
	}
	MRC_EXPECT_EQ(sb->reo[0].steps, 0);
	/* a tail-loss probe that was not needed (DSACK): not reordering */
	mrc_sb_init(sb, 0, 0, 3);
	for (i = 0; i < 4; i++)
		mrc_sb_send_new(sb, 0, i, 0, &psn, &ppsn);
	MRC_EXPECT_EQ(mrc_sb_mark_lost_cause(sb, 3, MRC_LOSS_TLP), 0);
	MRC_EXPECT_EQ(mrc_sb_on_retx(sb, 3, 0, 500, &ppsn), 0);
	reo_ack(a, 4, 0, 0);
	a->dsack = 1;
	a->dsack_psn = 3;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.spurious, 0);
	/* nor is an RTO */
	mrc_sb_init(sb, 0, 0, 3);
	for (i = 0; i < 4; i++)
		mrc_sb_send_new(sb, 0, i, 0, &psn, &ppsn);
	MRC_EXPECT_EQ(mrc_sb_mark_stale_lost(sb, 20000, 10000, NULL), 4);
	MRC_EXPECT_EQ(mrc_sb_on_retx(sb, 0, 0, 20000, &ppsn), 0);
	reo_ack(a, 4, 0, 0);
	a->ts_path = 0;
	a->tsecr = 0;
	a->dsack = 1;
	a->dsack_psn = 0;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.spurious, 0);
	MRC_EXPECT_EQ(sb->reo[0].steps, 0);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

/* The same across the PSN and timestamp wrap. */
MRC_TEST(reo_sb_wrap)
{
	struct mrc_sb *sb;
	struct mrc_ack_info *a;
	struct mrc_sb_ack_res r;

	MRC_ALLOC(sb);
	MRC_ALLOC(a);
	MRC_EXPECT_EQ(reo_setup(sb, a, 0xfffffffcU), 0);
	reo_ack(a, 4, 0, 0);	/* cum passes the wrap */
	a->ts_path = 1;
	a->tsecr = 1000;
	a->dsack = 1;
	a->dsack_psn = 0xfffffffcU;
	MRC_EXPECT_EQ(mrc_sb_apply_ack(sb, a, &r), 0);
	MRC_EXPECT_EQ(r.newly_acked, 1);
	MRC_EXPECT_EQ(r.spurious, 1);
	MRC_EXPECT_EQ(sb->reo[0].steps, 1);
	MRC_EXPECT_EQ(mrc_sb_check(sb), 0);
}

/* Receiver: a duplicate is reported once, as an offset on the wire. */
MRC_TEST(reo_rx_dsack_wire)
{
	struct mrc_rx *rx;
	struct mrc_pkt *p, *q;
	u8 buf[MRC_MAX_HDR_LEN + MRC_ICRC_LEN];
	int len;

	MRC_ALLOC(rx);
	MRC_ALLOC(p);
	MRC_ALLOC(q);
	mrc_rx_init(rx, 0xfffffffeU);
	p->opcode = MRC_OP_WRITE;
	p->flags = MRC_F_FIRST | MRC_F_LAST;
	p->psn = 0xfffffffeU;
	MRC_EXPECT_EQ(mrc_rx_on_packet(rx, p, false, 0), MRC_RX_NEW);
	mrc_rx_commit(rx, p->psn);
	mrc_rx_build_ack(rx, &q->ack, 0);
	MRC_EXPECT_FALSE(q->ack.dsack);
	p->psn = 0xffffffffU;
	mrc_rx_on_packet(rx, p, false, 0);
	mrc_rx_commit(rx, p->psn);
	p->psn = 0x3;
	mrc_rx_on_packet(rx, p, false, 0);
	mrc_rx_commit(rx, p->psn);
	p->psn = 0xfffffffeU;	/* again */
	MRC_EXPECT_EQ(mrc_rx_on_packet(rx, p, false, 0), MRC_RX_DUP);
	MRC_EXPECT_TRUE(mrc_rx_ack_due(rx));

	memset(p, 0, sizeof(*p));
	mrc_rx_build_ack(rx, &p->ack, 0);
	MRC_EXPECT_TRUE(p->ack.dsack);
	MRC_EXPECT_EQ(p->ack.dsack_psn, 0xfffffffeU);
	MRC_EXPECT_EQ(p->ack.cum_psn, 0);
	p->opcode = MRC_OP_ACK;
	len = mrc_hdr_build(p, buf, sizeof(buf));
	MRC_ASSERT_TRUE(len > 0);
	/* offset -2, big-endian, where "reserved" used to be */
	MRC_EXPECT_EQ(buf[MRC_BTH_LEN + 22], 0xff);
	MRC_EXPECT_EQ(buf[MRC_BTH_LEN + 23], 0xfe);
	len = mrc_icrc_put(buf, len);
	MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, q, 0), 0);
	MRC_EXPECT_TRUE(q->ack.dsack);
	MRC_EXPECT_EQ(q->ack.dsack_psn, 0xfffffffeU);
	/* reported once */
	mrc_rx_build_ack(rx, &p->ack, 0);
	MRC_EXPECT_FALSE(p->ack.dsack);
	/* a positive offset (above cum) parses back too */
	p->opcode = MRC_OP_ACK;
	p->ack.dsack = 1;
	p->ack.dsack_psn = 3;
	len = mrc_hdr_build(p, buf, sizeof(buf));
	MRC_ASSERT_TRUE(len > 0);
	len = mrc_icrc_put(buf, len);
	MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, q, 0), 0);
	MRC_EXPECT_EQ(q->ack.dsack_psn, 3);
	/* not encodable: cum_psn itself, or more than 32767 away */
	p->ack.dsack_psn = 0;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_FIELD);
	p->ack.dsack_psn = 0x8000;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_FIELD);
	p->ack.dsack_psn = 0xffff8000U;	/* -32768 fits */
	MRC_EXPECT_TRUE(mrc_hdr_build(p, buf, sizeof(buf)) > 0);
	/* zero on the wire: no DSACK (earlier peers) */
	p->ack.dsack = 0;
	len = mrc_hdr_build(p, buf, sizeof(buf));
	MRC_EXPECT_EQ(buf[MRC_BTH_LEN + 22] | buf[MRC_BTH_LEN + 23], 0);
	len = mrc_icrc_put(buf, len);
	MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, q, 0), 0);
	MRC_EXPECT_FALSE(q->ack.dsack);
}

/*
 * End to end, one path: 1 packet per 50 us; every tenth one skips the
 * 2 ms hold the others get (netem "delay 2ms reorder 10%"), ACKs take
 * 2.1 ms. Nothing is lost. Returns the retransmissions (in *@late those
 * after the first 10 ms); the window adapts if @adapt, else stays at the
 * RTT estimator's base.
 */
#define REO_SIM_PKTS	4000
#define REO_SIM_Q	512

struct reo_sim {
	struct mrc_sb sb;
	struct mrc_rx rx;
	struct mrc_rtt rtt;
	struct mrc_pkt pkt[REO_SIM_Q];	/* data in flight, by slot */
	u64 pkt_at[REO_SIM_Q];		/* arrival time, 0 = free slot */
	struct mrc_ack_info ack[REO_SIM_Q];
	u64 ack_at[REO_SIM_Q];
};

static u32 reo_sim_run(struct reo_sim *s, bool adapt, u32 *delivered,
		       u32 *late)
{
	u32 sent = 0, retx = 0, k = 0, psn, ppsn, i, j;
	u64 t;

	mrc_sb_init(&s->sb, 0xffffff00U, 0, 3);
	mrc_rx_init(&s->rx, 0xffffff00U);
	s->rx.ack_every = 1;
	mrc_rtt_init(&s->rtt, 0, 0, 0);
	memset(s->pkt_at, 0, sizeof(s->pkt_at));
	memset(s->ack_at, 0, sizeof(s->ack_at));
	*late = 0;
	for (t = 1; t < 400000; t++) {
		for (i = 0; i < REO_SIM_Q; i++) {	/* data arrivals */
			struct mrc_pkt *p = &s->pkt[i];

			if (s->pkt_at[i] != t)
				continue;
			s->pkt_at[i] = 0;
			if (mrc_rx_on_packet(&s->rx, p, false, t) ==
			    MRC_RX_NEW)
				mrc_rx_commit(&s->rx, p->psn);
			if (!mrc_rx_ack_due(&s->rx))
				continue;
			for (j = 0; j < REO_SIM_Q && s->ack_at[j]; j++)
				;
			if (j == REO_SIM_Q)
				return ~0U;	/* simulator overflow */
			mrc_rx_build_ack(&s->rx, &s->ack[j], t);
			s->ack_at[j] = t + 2100;
		}
		for (i = 0; i < REO_SIM_Q; i++) {	/* ACK arrivals */
			struct mrc_ack_info *a = &s->ack[i];
			u32 rtt, base, srtt;

			if (s->ack_at[i] != t)
				continue;
			s->ack_at[i] = 0;
			base = mrc_rtt_reo_wnd(&s->rtt);
			srtt = mrc_rtt_srtt(&s->rtt);
			if (adapt)
				mrc_sb_set_reo_wnd(&s->sb, 0, base, srtt);
			else
				s->sb.reo_wnd_us[0] = base;
			mrc_sb_apply_ack(&s->sb, a, NULL);
			rtt = mrc_rtt_from_echo(t, a->tsecr, a->ack_delay);
			if (rtt)
				mrc_rtt_sample(&s->rtt, rtt);
		}
		if (t % 50)
			continue;
		if (!mrc_sb_next_lost(&s->sb, &psn)) {
			mrc_sb_on_retx(&s->sb, psn, 0, t, &ppsn);
			retx++;
			*late += t > 10000;
		} else if (sent < REO_SIM_PKTS && mrc_sb_can_send(&s->sb)) {
			mrc_sb_send_new(&s->sb, 0, t, 0, &psn, &ppsn);
			sent++;
		} else {
			continue;
		}
		for (i = 0; i < REO_SIM_Q && s->pkt_at[i]; i++)
			;
		if (i == REO_SIM_Q)
			return ~0U;	/* simulator overflow */
		memset(&s->pkt[i], 0, sizeof(s->pkt[i]));
		s->pkt[i].opcode = MRC_OP_WRITE;
		s->pkt[i].psn = psn;
		s->pkt[i].ppsn = ppsn;
		s->pkt[i].tsval = (u32)t;
		s->pkt_at[i] = t + 100 + (++k % 10 ? 2000 : 0);
	}
	*delivered = s->rx.cum - 0xffffff00U;
	return retx;
}

MRC_TEST(reo_sim_reorder_only)
{
	struct reo_sim *s;
	u32 fixed, adaptive, got, late;

	MRC_ALLOC(s);
	fixed = reo_sim_run(s, false, &got, &late);
	MRC_EXPECT_EQ(got, REO_SIM_PKTS);
	MRC_EXPECT_TRUE(late * 10 > REO_SIM_PKTS);
	adaptive = reo_sim_run(s, true, &got, &late);
	MRC_EXPECT_EQ(got, REO_SIM_PKTS);
	/*
	 * The base window alone keeps retransmitting; the adaptive one only
	 * in the first round trips, before a spurious retransmission could
	 * be seen (what was sent then was held back too).
	 */
	MRC_EXPECT_TRUE(adaptive < 50);
	MRC_EXPECT_TRUE(adaptive * 10 < fixed);
	MRC_EXPECT_EQ(late, 0);
	MRC_EXPECT_EQ(mrc_sb_check(&s->sb), 0);
}

MRC_SUITE(reo,
	  MRC_CASE(reo_growth_cap_decay),
	  MRC_CASE(reo_round_wrap),
	  MRC_CASE(reo_dsack_spurious),
	  MRC_CASE(reo_echo_spurious),
	  MRC_CASE(reo_no_growth_on_loss),
	  MRC_CASE(reo_sb_wrap),
	  MRC_CASE(reo_rx_dsack_wire),
	  MRC_CASE(reo_sim_reorder_only));
