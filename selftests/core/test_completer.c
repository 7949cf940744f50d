// SPDX-License-Identifier: GPL-2.0
/*
 * The completer engine (core/completer.c) driven through a mock
 * environment: ACKs, NAKs and responses in; send completions (order,
 * status), the SQ consumer, timers, PROBEs and QP errors observed.
 */
#include "mrc_test.h"
#include "mock_env.h"
#include "seq.h"


static void ct_setup(struct mrc_req *q, u32 isn)
{
	struct mrc_path_cfg cfg;

	mock_reset(1000000);
	memset(q, 0, sizeof(*q));
	mock_sq(q);
	mrc_sb_init(&q->sb, isn, 0, MRC_DUPTHRESH_DEFAULT);
	mrc_path_cfg_default(&cfg);
	cfg.npaths = 1;
	mrc_paths_init(&q->paths, &cfg);
	q->anchored = 1;
	q->cfg.ib_timeout_us = 4096ULL * 16384 / 1000;	/* timeout 14 */
	q->cfg.rto_floor_us = 10000;
	q->cfg.retry_cnt = 2;
	q->cfg.rnr_retry = 1;
	q->progress_us = mk.now;
	q->heard_us = mk.now;
}

/*
 * Segment WQE @idx (again, after an RNR switch) under @npkts new PSNs of
 * the QP's epoch, as mrc_req_next() would.
 */
static void ct_segment(struct mrc_req *q, u32 idx, u32 npkts)
{
	struct mrc_swqe *w = mrc_req_swqe(q, idx);
	u32 i, psn, ppsn;

	for (i = 0; i < npkts; i++) {
		mrc_sb_send_new(&q->sb, 0, mk.now, 0, &psn, &ppsn);
		memset(&q->pkt[psn & (MRC_WND - 1)], 0, sizeof(q->pkt[0]));
		q->pkt[psn & (MRC_WND - 1)].kind = MRC_TXD_REQ;
		q->pkt[psn & (MRC_WND - 1)].idx = idx;
		q->pkt[psn & (MRC_WND - 1)].epoch = q->epoch;
		if (!i)
			w->first_psn = psn;
	}
	w->last_psn = psn;
	w->segmented = 1;
	if (w->rd_atomic)
		q->rd_atomic_out++;
	q->sq_seg = idx + 1;
}

/* Post and fully segment a WQE of @npkts packets; its index. */
static u32 ct_wqe(struct mrc_req *q, u8 op, u32 len, u32 npkts, bool sig)
{
	u32 idx = q->sq_head++;
	struct mrc_swqe *w = mrc_req_swqe(q, idx);

	memset(w, 0, MK_SWQE);
	w->wr_id = 100 + idx;
	w->mrc_op = op;
	w->len = len;
	w->num_sge = 1;
	w->signaled = sig;
	w->rnr_left = q->cfg.rnr_retry;
	w->rd_atomic = op == MRC_OP_READ_REQ || op == MRC_OP_FETCH_ADD;
	ct_segment(q, idx, npkts);
	return idx;
}

static void ct_ack(struct mrc_ack_info *a, u32 cum, u8 syn, u32 nak_psn)
{
	memset(a, 0, sizeof(*a));
	a->cum_psn = cum;
	a->syndrome = syn;
	a->nak_psn = nak_psn;
}

/* A READ response for the request at @req_psn: @len bytes at @off. */
static void ct_read_resp(struct mrc_pkt *p, u32 req_psn, u32 msg_len,
			 u32 off, u16 len)
{
	memset(p, 0, sizeof(*p));
	p->opcode = MRC_OP_READ_RESP;
	p->rresp.req_psn = req_psn;
	p->rresp.msg_len = msg_len;
	p->rresp.offset = off;
	p->payload_len = len;
}

MRC_TEST(comp_ack_completes_in_order)
{
	struct mrc_ack_info a;
	struct mrc_req *q;

	MRC_ALLOC(q);
	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_SEND, 3000, 3, true);	/* PSNs 10..12 */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, false);	/* 13, unsignaled */
	ct_wqe(q, MRC_OP_SEND, 100, 1, true);	/* 14 */
	mrc_req_arm_rto(q, &mk_e, true);
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_RTO]);
	MRC_EXPECT_TRUE(mrc_req_rto_pending(q));
	MRC_EXPECT_EQ(q->tlp_armed, 1);		/* a tail-loss probe first */
	/* cum 12: nothing complete (WQE 0 ends at 12) */
	ct_ack(&a, 12, MRC_SYN_ACK, 0);
	MRC_EXPECT_EQ(mrc_comp_ack(q, &mk_e, &a, false), 0);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	MRC_EXPECT_EQ(q->sq_tail, 0);
	/* cum 14: WQEs 0 and 1 (unsignaled: no CQE) */
	ct_ack(&a, 14, MRC_SYN_ACK, 0);
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_ASSERT_TRUE(mk.nscqe == 1);
	MRC_EXPECT_EQ(mk.scqe_wr_id[0], 100);
	MRC_EXPECT_EQ(q->sq_tail, 2);
	MRC_EXPECT_EQ(mk.consumed, 2);
	MRC_EXPECT_EQ(q->want_tx, 1);
	ct_ack(&a, 15, MRC_SYN_ACK, 0);
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_ASSERT_TRUE(mk.nscqe == 2);
	MRC_EXPECT_EQ(mk.scqe_wr_id[1], 102);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_SUCCESS);
	/*
	 * nothing outstanding: the timer is off. The environment's timer,
	 * left armed (not cancelled per ACK), fires for nothing: it is not
	 * armed again.
	 */
	MRC_EXPECT_FALSE(mrc_req_rto_pending(q));
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_RTO]);
	mk.armed[MRC_TIMER_RTO] = false;
	mk.now = mk.timer_at[MRC_TIMER_RTO];
	MRC_EXPECT_FALSE(mrc_req_rto_fired(q, &mk_e));
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_RTO]);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* an ACK for PSNs never sent is dropped whole */
	ct_ack(&a, 40, MRC_SYN_ACK, 0);
	MRC_EXPECT_EQ(mrc_comp_ack(q, &mk_e, &a, false), -1);
	MRC_EXPECT_EQ(q->sb.una, 15);
}

MRC_TEST(comp_read_waits_for_response)
{
	struct mrc_ack_info a;
	struct mrc_req *q;
	struct mrc_pkt p;
	u8 data[64];
	u32 i;

	MRC_ALLOC(q);
	ct_setup(q, 0);
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* PSN 0 */
	ct_wqe(q, MRC_OP_SEND, 8, 1, true);		/* PSN 1 */
	ct_ack(&a, 2, MRC_SYN_ACK, 0);
	mrc_comp_ack(q, &mk_e, &a, false);
	/* the READ's request is acknowledged, its data is not in */
	MRC_EXPECT_EQ(mk.nscqe, 0);
	MRC_EXPECT_EQ(q->rd_atomic_out, 1);
	/* the response-wait timer is kept while responses are awaited */
	MRC_EXPECT_TRUE(mrc_req_rto_pending(q));
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_RTO]);
	for (i = 0; i < 64; i++)
		data[i] = (u8)(i * 3 + 1);
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_READ_RESP;
	p.rresp.req_psn = 0;
	p.rresp.msg_len = 64;
	p.rresp.offset = 32;
	p.payload_len = 32;
	{
		struct mrc_src src = { .pkt = data + 32, .buf = NULL,
				       .off = 0 };

		MRC_EXPECT_EQ(mrc_comp_resp(q, &mk_e, &p, &src), 0);
		mrc_comp_complete(q, &mk_e);
		MRC_EXPECT_EQ(mk.nscqe, 0);
		p.rresp.offset = 0;
		src.pkt = data;
		mrc_comp_resp(q, &mk_e, &p, &src);
		/* a response for a request we never sent: ignored */
		p.rresp.req_psn = 77;
		MRC_EXPECT_EQ(mrc_comp_resp(q, &mk_e, &p, &src), 0);
	}
	MRC_EXPECT_EQ(q->rd_atomic_out, 0);
	mrc_comp_complete(q, &mk_e);
	MRC_ASSERT_TRUE(mk.nscqe == 2);
	MRC_EXPECT_EQ(mk.scqe_wr_id[0], 100);
	MRC_EXPECT_EQ(mk.scqe_wr_id[1], 101);
	MRC_EXPECT_MEMEQ(mk.local, data, 64);
}

/*
 * protocol.rst "Implicit acknowledgement": a response acknowledges its
 * request and every earlier PSN; only one that names an outstanding
 * READ/atomic WQE counts; the RTT sample comes from the request's send
 * time, and only if it was sent once.
 */
MRC_TEST(comp_response_acks_request)
{
	struct mrc_src src = { .pkt = NULL, .buf = "abcd", .off = 0 };
	struct mrc_pkt p;
	struct mrc_req *q;
	u32 ppsn;

	MRC_ALLOC(q);
	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);		/* PSN 10 */
	ct_wqe(q, MRC_OP_READ_REQ, 4, 1, true);	/* 11 */
	ct_wqe(q, MRC_OP_SEND, 100, 1, true);		/* 12 */
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_READ_RESP;
	p.flags = MRC_F_FIRST | MRC_F_LAST;
	p.payload_len = 4;
	p.rresp.msg_len = 4;
	/* a response that names no READ of ours acknowledges nothing */
	p.rresp.req_psn = 10;
	mk.now += 300;
	mrc_comp_resp(q, &mk_e, &p, &src);
	MRC_EXPECT_EQ(q->sb.una, 10);
	MRC_EXPECT_EQ(mrc_rtt_srtt(&q->paths.p[0].rtt), 0);
	/* the READ's: PSNs 10 and 11, both completed; 12 stays */
	p.rresp.req_psn = 11;
	mrc_comp_resp(q, &mk_e, &p, &src);
	MRC_EXPECT_EQ(q->sb.una, 12);
	MRC_EXPECT_EQ(mk.nscqe, 2);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_SUCCESS);
	MRC_EXPECT_MEMEQ(mk.local, "abcd", 4);
	MRC_EXPECT_EQ(mrc_rtt_srtt(&q->paths.p[0].rtt), 300);
	/* again (a duplicate): nothing new */
	mrc_comp_resp(q, &mk_e, &p, &src);
	MRC_EXPECT_EQ(q->sb.una, 12);

	/* a retransmitted request: acknowledged, but no RTT sample */
	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_READ_REQ, 4, 1, true);	/* 10 */
	mrc_sb_mark_lost(&q->sb, 10);
	mk.now += 1000;
	MRC_EXPECT_EQ(mrc_sb_on_retx(&q->sb, 10, 0, mk.now, &ppsn), 0);
	mk.now += 50;
	p.rresp.req_psn = 10;
	mrc_comp_resp(q, &mk_e, &p, &src);
	MRC_EXPECT_EQ(q->sb.una, 11);
	MRC_EXPECT_EQ(mk.nscqe, 1);
	MRC_EXPECT_EQ(mrc_rtt_srtt(&q->paths.p[0].rtt), 0);
	/* not anchored (RTR): a response anchors nothing */
	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_READ_REQ, 4, 1, true);
	q->anchored = 0;
	mrc_comp_resp(q, &mk_e, &p, &src);
	MRC_EXPECT_EQ(q->sb.una, 10);
	MRC_EXPECT_EQ(q->anchored, 0);
}

/*
 * Version 3 (protocol.rst "RNR and the request epoch"): an RNR NAK whose
 * epoch is one ahead voids the refused request and every one after it:
 * their PSNs count as received (the NAK's cum passes them) but complete
 * nothing; their WQEs are segmented again, from their first byte, once
 * the RNR delay passed. Out of RNR retries, the refused WQE fails.
 */
MRC_TEST(comp_rnr_nak)
{
	struct mrc_ack_info a;
	struct mrc_req *q;
	u32 i;

	MRC_ALLOC(q);
	ct_setup(q, 0);
	ct_wqe(q, MRC_OP_WRITE, 8, 1, true);	/* PSN 0 */
	ct_wqe(q, MRC_OP_SEND, 3000, 3, true);	/* 1..3, rnr_left 1 */
	ct_wqe(q, MRC_OP_WRITE, 8, 1, true);	/* 4 */
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* 5 */
	MRC_EXPECT_EQ(q->rd_atomic_out, 1);
	/* the SEND's second packet was refused: 1..5 void, cum 6 */
	ct_ack(&a, 6, MRC_SYN_RNR, 2);
	a.epoch = 1;
	a.rnr_timer = 14;			/* 1.28 ms (IBTA table 45) */
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(q->epoch, 1);
	MRC_EXPECT_EQ(q->rnr_wait, 1);
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_RNR]);
	MRC_EXPECT_EQ(mk.timer_us[MRC_TIMER_RNR], 1280);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_RNR_NAK_RCVD], 1);
	MRC_EXPECT_EQ(q->sb.una, 6);
	/* only the WRITE before the SEND completed */
	MRC_ASSERT_TRUE(mk.nscqe == 1);
	MRC_EXPECT_EQ(mk.scqe_wr_id[0], 100);
	MRC_EXPECT_EQ(q->pkt[0].voided, 0);
	for (i = 1; i <= 5; i++)
		MRC_EXPECT_EQ(q->pkt[i].voided, 1);
	MRC_EXPECT_EQ(q->sq_seg, 1);
	for (i = 1; i <= 3; i++) {
		MRC_EXPECT_EQ(mrc_req_swqe(q, i)->segmented, 0);
		MRC_EXPECT_EQ(mrc_req_swqe(q, i)->seg_off, 0);
	}
	MRC_EXPECT_EQ(q->rd_atomic_out, 0);
	MRC_EXPECT_EQ(mrc_req_swqe(q, 1)->rnr_left, 0);
	/* the same NAK again (duplicated): nothing more */
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(q->epoch, 1);
	MRC_EXPECT_EQ(q->sq_seg, 1);
	MRC_EXPECT_EQ(mk.nscqe, 1);
	/* the wait ends; the SEND goes again under PSN 6, and is refused */
	q->rnr_wait = 0;
	ct_segment(q, 1, 1);
	ct_ack(&a, 7, MRC_SYN_RNR, 6);
	a.epoch = 2;
	mrc_comp_ack(q, &mk_e, &a, false);
	/* out of RNR retries: the WQE fails, the QP goes to ERR */
	MRC_EXPECT_EQ(q->epoch, 2);
	MRC_EXPECT_EQ(q->stop_new, 1);
	MRC_ASSERT_TRUE(mk.nscqe == 2);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_RNR_RETRY_EXC_ERR);
	MRC_EXPECT_EQ(q->failed, 1);
	MRC_EXPECT_EQ(mk.nerr, 1);
}

/*
 * RNR retries exhausted while the WQE cannot complete yet (a READ before
 * it awaits its response): the SEND is never sent again under new PSNs,
 * and completes RNR_RETRY_EXC_ERR once the READ completed (protocol.rst
 * "ACK processing", "Error completions"). Its voided PSN is still resent
 * if lost, as any PSN the responder has not acknowledged.
 */
MRC_TEST(comp_rnr_exhausted_never_resent)
{
	struct mrc_ack_info a;
	struct mrc_req_out o;
	struct mrc_req *q;

	MRC_ALLOC(q);
	ct_setup(q, 0);
	q->cfg.rnr_retry = 0;
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* PSN 0 */
	ct_wqe(q, MRC_OP_SEND, 8, 1, true);		/* PSN 1, rnr_left 0 */
	ct_ack(&a, 0, MRC_SYN_RNR, 1);
	a.epoch = 1;
	a.sack[0] = 2;					/* PSN 1 (void) */
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(mrc_req_swqe(q, 1)->status, MRC_WC_RNR_RETRY_EXC_ERR);
	MRC_EXPECT_EQ(q->stop_new, 1);
	MRC_EXPECT_EQ(q->rnr_wait, 0);
	MRC_EXPECT_EQ(q->pkt[1].voided, 1);
	MRC_EXPECT_EQ(q->sq_seg, 2);		/* not to be segmented again */
	MRC_EXPECT_EQ(mk.nscqe, 0);		/* the READ is not answered */
	MRC_EXPECT_EQ(mrc_req_retx(q, &mk_e, &o), -1);
	/* the same NAK again: nothing more */
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(mrc_req_retx(q, &mk_e, &o), -1);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	/* the READ's response: both complete, the SEND with its error */
	mk_read_resp(q, 0, 64, 7);
	mrc_comp_complete(q, &mk_e);
	MRC_ASSERT_TRUE(mk.nscqe == 2);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_RNR_RETRY_EXC_ERR);
	MRC_EXPECT_EQ(q->failed, 1);
}

/*
 * The epoch decides (protocol.rst "RNR and the request epoch"): a plain
 * ACK one epoch ahead switches as the NAK would (the NAK was lost); an
 * ACK or NAK of our epoch or an older one is stale and rewinds nothing,
 * nor does one that names a voided PSN (a stale ACK whose epoch, modulo
 * 16, looks ahead), nor one too far ahead; implicit acknowledgements
 * (a response, CUMACK) say nothing of epochs.
 */
/*
 * Epochs are compared modulo 16: an ACK from 14 epochs ago, duplicated and
 * delayed by the fabric, reads as 2 ahead. Its nak_psn (0: nothing refused
 * in epoch 0) was taken for a live PSN once the PSNs had wrapped, and the
 * requester switched epochs and resent WQEs the responder never refused
 * (sim seed 601009, faults dereg, rnr, reorder, dup). An ACK packet whose
 * cumulative point is behind that of one already applied is older, and
 * that one told at least its epoch: it switches nothing. (Not una: the
 * implicit ACKs of responses and CUMACKs move it without epochs.)
 */
MRC_TEST(comp_stale_ack_epoch_wrap_ignored)
{
	struct mrc_ack_info a;
	struct mrc_req *q;

	MRC_ALLOC(q);
	ct_setup(q, 0xfffffff0U);
	q->cfg.rnr_retry = 7;
	q->epoch = 14;
	ct_wqe(q, MRC_OP_SEND, 8, 1, true);	/* fff0 */
	ct_wqe(q, MRC_OP_WRITE, 8000, 16, true);	/* fff1..0000 */
	ct_wqe(q, MRC_OP_SEND, 8, 1, true);	/* 0001 */
	ct_ack(&a, 0xfffffff8U, MRC_SYN_ACK, 0xfffffff0U);
	a.epoch = 14;
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_ASSERT_TRUE(q->sb.una == 0xfffffff8U);
	MRC_EXPECT_EQ(q->epoch, 14);
	/* epoch 0's ACK, cum fff2 (behind una), nak_psn 0 (a live PSN) */
	ct_ack(&a, 0xfffffff2U, MRC_SYN_ACK, 0);
	a.epoch = 0;
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(q->epoch, 14);
	MRC_EXPECT_EQ(q->rnr_wait, 0);
	MRC_EXPECT_EQ(q->sq_seg, 3);
	MRC_EXPECT_EQ(q->pkt[0].voided, 0);
	MRC_EXPECT_EQ(q->pkt[1].voided, 0);
	/*
	 * The peer's next request carries a cumulative ACK (CUMACK) to fffa:
	 * una moves, no epoch told. The refusal of fffc, sent before it and
	 * arriving after it, has its cum behind una: still a switch.
	 */
	MRC_EXPECT_EQ(mrc_comp_cum(q, &mk_e, 0xfffa), 0);
	MRC_ASSERT_TRUE(q->sb.una == 0xfffffffaU);
	ct_ack(&a, 0xfffffff8U, MRC_SYN_RNR, 0xfffffffcU);
	a.epoch = 15;
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(q->epoch, 15);
	MRC_EXPECT_EQ(q->sq_seg, 1);
}

MRC_TEST(comp_rnr_nak_stale_ignored)
{
	struct mrc_ack_info a;
	struct mrc_req *q;

	MRC_ALLOC(q);
	ct_setup(q, 0);
	q->cfg.rnr_retry = 7;
	ct_wqe(q, MRC_OP_SEND, 8, 1, true);	/* PSN 0 */
	ct_wqe(q, MRC_OP_SEND, 8, 1, true);	/* PSN 1 */
	/* a plain ACK of epoch 1: PSN 1 was refused, its NAK lost */
	ct_ack(&a, 2, MRC_SYN_ACK, 1);
	a.epoch = 1;
	a.rnr_timer = 14;
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(q->epoch, 1);
	MRC_EXPECT_EQ(q->rnr_wait, 1);
	MRC_EXPECT_EQ(mk.timer_us[MRC_TIMER_RNR], 1280);
	MRC_ASSERT_TRUE(mk.nscqe == 1);		/* WQE 0 only */
	MRC_EXPECT_EQ(q->sq_seg, 1);
	q->rnr_wait = 0;
	ct_segment(q, 1, 1);			/* PSN 2, epoch 1 */
	/* the NAK arrives late (epoch 1: ours), and an older ACK */
	ct_ack(&a, 1, MRC_SYN_RNR, 1);
	a.epoch = 1;
	mrc_comp_ack(q, &mk_e, &a, false);
	ct_ack(&a, 1, MRC_SYN_ACK, 0);
	a.epoch = 0;
	mrc_comp_ack(q, &mk_e, &a, false);
	/* epoch 2 naming the voided PSN 1: stale, whatever its epoch */
	ct_ack(&a, 2, MRC_SYN_RNR, 1);
	a.epoch = 2;
	mrc_comp_ack(q, &mk_e, &a, false);
	/* 9 ahead: too far, an old one */
	ct_ack(&a, 2, MRC_SYN_RNR, 2);
	a.epoch = 10;
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(q->epoch, 1);
	MRC_EXPECT_EQ(q->rnr_wait, 0);
	MRC_EXPECT_EQ(q->sq_seg, 2);
	MRC_EXPECT_EQ(q->pkt[2].voided, 0);
	MRC_EXPECT_EQ(mrc_req_swqe(q, 1)->segmented, 1);
	MRC_EXPECT_EQ(mk.nscqe, 1);
	/* CUMACK of the new PSN: an ordinary ACK, WQE 1 completes */
	MRC_EXPECT_EQ(mrc_comp_cum(q, &mk_e, 3), 0);
	MRC_EXPECT_EQ(q->epoch, 1);
	MRC_ASSERT_TRUE(mk.nscqe == 2);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_SUCCESS);
}

MRC_TEST(comp_error_nak_of_acked_read)
{
	struct mrc_ack_info a;
	struct mrc_req *q;

	MRC_ALLOC(q);
	ct_setup(q, 0);
	ct_wqe(q, MRC_OP_SEND, 8, 1, false);		/* PSN 0 */
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* PSN 1 */
	ct_wqe(q, MRC_OP_SEND, 8, 1, true);		/* PSN 2 */
	ct_ack(&a, 3, MRC_SYN_ACK, 0);
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(q->sq_tail, 1);
	/* the responder could not serve the READ it acknowledged */
	ct_ack(&a, 3, MRC_SYN_REM_ACCESS, 1);
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_ASSERT_TRUE(mk.nscqe == 1);
	MRC_EXPECT_EQ(mk.scqe_wr_id[0], 101);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_REM_ACCESS_ERR);
	MRC_EXPECT_EQ(q->failed, 1);
	/* failed: nothing completes any more (the flush does) */
	mrc_comp_complete(q, &mk_e);
	MRC_EXPECT_EQ(mk.nscqe, 1);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_NAK_RCVD], 1);
}

/*
 * Issue 10, 1h, the requester's half (test_responder.c
 * resp_held_write_mr_gone_fails_visibly): the responder acknowledged a
 * WRITE's LAST packet (SACK), then could not place it and NAKs its PSN
 * REM_ACCESS, with a cumulative point past the whole WRITE. The WRITE
 * completes REM_ACCESS_ERR -- never successfully, its last bytes are not
 * in memory -- and the QP fails (protocol.rst "Fatal NAK").
 */
MRC_TEST(comp_fatal_nak_of_acked_write)
{
	struct mrc_ack_info a;
	struct mrc_req *q;

	MRC_ALLOC(q);
	ct_setup(q, 0);
	ct_wqe(q, MRC_OP_WRITE, 250, 3, false);		/* PSNs 0-2 */
	ct_wqe(q, MRC_OP_SEND, 8, 1, true);		/* PSN 3 */
	ct_ack(&a, 1, MRC_SYN_ACK, 0);
	a.sack[0] = 1U << 1;				/* PSN 2 */
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	ct_ack(&a, 3, MRC_SYN_REM_ACCESS, 2);
	MRC_EXPECT_EQ(mrc_comp_ack(q, &mk_e, &a, false), 0);
	MRC_ASSERT_TRUE(mk.nscqe == 1);
	MRC_EXPECT_EQ(mk.scqe_wr_id[0], 100);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_REM_ACCESS_ERR);
	MRC_EXPECT_EQ(q->sq_tail, 1);	/* the environment flushes 101 */
	MRC_EXPECT_TRUE(q->failed);
	MRC_EXPECT_TRUE(mk.nerr >= 1);
}

MRC_TEST(comp_anchor_and_resp_timer)
{
	struct mrc_ack_info a;
	struct mrc_req *q;
	u32 i;

	MRC_ALLOC(q);
	ct_setup(q, 0);
	q->anchored = 0;
	/* an ACK that answers no PROBE of ours does not anchor */
	ct_ack(&a, 500, MRC_SYN_ACK, 0);
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(q->anchored, 0);
	mrc_comp_ack(q, &mk_e, &a, true);
	MRC_EXPECT_EQ(q->anchored, 1);
	MRC_EXPECT_EQ(q->sb.una, 500);
	MRC_EXPECT_EQ(q->want_tx, 1);
	MRC_EXPECT_TRUE(mk.seen[MRC_ENG_COMP][MRC_COMP_ANCHOR]);
	/* a READ acknowledged, the responder silent */
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* PSN 500 */
	ct_ack(&a, 501, MRC_SYN_ACK, 0);
	mrc_comp_ack(q, &mk_e, &a, false);
	mrc_comp_resp_timer(q, &mk_e);
	MRC_EXPECT_EQ(q->probe_due, 1);
	MRC_EXPECT_EQ(q->probe_psn, 500);
	MRC_EXPECT_EQ(q->retries, 1);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	/* retry_cnt + 1 timeouts and silence beyond the limit: give up */
	for (i = 0; i < 3; i++) {
		mk.now += 20000000;
		mrc_comp_resp_timer(q, &mk_e);
	}
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_RETRY_EXC], 1);
	mrc_comp_complete(q, &mk_e);
	MRC_ASSERT_TRUE(mk.nscqe == 1);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_RETRY_EXC_ERR);
	/* with nothing to fail, the QP itself fails */
	mrc_comp_fail_oldest(q, &mk_e, MRC_WC_RETRY_EXC_ERR);
	MRC_EXPECT_EQ(q->failed, 1);
}

MRC_TEST(comp_timer_intervals)
{
	struct mrc_req *q;

	MRC_ALLOC(q);
	ct_setup(q, 0);
	/* no RTT sample: the initial RTO, at least the floor */
	MRC_EXPECT_EQ(mrc_req_rto_us(q), MRC_RTO_INIT_US);
	MRC_EXPECT_TRUE(mrc_req_rto_interval(q) >= 10000);
	q->cfg.rto_floor_us = 50000;
	MRC_EXPECT_EQ(mrc_req_rto_interval(q), 50000);
	ct_wqe(q, MRC_OP_SEND, 8, 1, true);
	q->tlp_done = 1;
	mrc_req_arm_rto(q, &mk_e, true);
	MRC_EXPECT_EQ(q->tlp_armed, 0);
	MRC_EXPECT_EQ(q->rto_armed_us, 50000);
	MRC_EXPECT_EQ(mk.timer_us[MRC_TIMER_RTO], 50000);
	/* no restart while armed */
	mk.timer_us[MRC_TIMER_RTO] = 0;
	mrc_req_arm_rto(q, &mk_e, false);
	MRC_EXPECT_EQ(mk.timer_us[MRC_TIMER_RTO], 0);
}

/*
 * The lazy retransmission timer (mrc_req_rto_set/_fired/_stop/_forget):
 * the environment's timer is armed exactly when the requester believes
 * it is, and never for later than the RTO or probe is due.
 */
static bool ct_lazy_ok(const struct mrc_req *q)
{
	bool hw = mk.armed[MRC_TIMER_RTO];

	return q->rto_hw_on == hw && (!hw || mk.timer_at[MRC_TIMER_RTO] ==
				      q->rto_hw) &&
	       (!q->rto_on || (hw && mk.timer_at[MRC_TIMER_RTO] <= q->rto_due));
}

/* The environment's RTO timer expires (the clock moves to it). */
static bool ct_rto_expire(struct mrc_req *q)
{
	if (mk.timer_at[MRC_TIMER_RTO] > mk.now)
		mk.now = mk.timer_at[MRC_TIMER_RTO];
	mk.armed[MRC_TIMER_RTO] = false;
	return mrc_req_rto_fired(q, &mk_e);
}

/*
 * Every way the deadline moves: earlier than the armed timer (armed
 * again, fires then), later (kept, fires early, armed again for the
 * deadline, fires then), the same time (kept, fires due), stopped (the
 * expiry does nothing, no re-arm), stopped and set again later or
 * earlier, and forgotten after the environment cancelled its timer (a
 * QP flush or RESET: the next set arms it, whatever its time).
 */
MRC_TEST(comp_lazy_rto_deadlines)
{
	struct mrc_req *q;
	u64 t0;
	u32 ops;

	MRC_ALLOC(q);
	ct_setup(q, 0);
	t0 = mk.now;
	mrc_req_rto_set(q, &mk_e, 10000);
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	MRC_EXPECT_EQ(mk.timer_at[MRC_TIMER_RTO], t0 + 10000);
	/* moved earlier: armed again for the earlier time, fires then */
	mk.now = t0 + 1000;
	ops = mk.timer_ops[MRC_TIMER_RTO];
	mrc_req_rto_set(q, &mk_e, 500);
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	MRC_EXPECT_EQ(mk.timer_ops[MRC_TIMER_RTO], ops + 1);
	MRC_EXPECT_EQ(mk.timer_at[MRC_TIMER_RTO], t0 + 1500);
	MRC_EXPECT_TRUE(ct_rto_expire(q));
	MRC_EXPECT_EQ(mk.now, t0 + 1500);
	MRC_EXPECT_FALSE(mrc_req_rto_pending(q));
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_RTO]);
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	/* moved later: kept, fires early, armed again, fires when due */
	mrc_req_rto_set(q, &mk_e, 1000);		/* due t0 + 2500 */
	mk.now = t0 + 1700;
	ops = mk.timer_ops[MRC_TIMER_RTO];
	mrc_req_rto_set(q, &mk_e, 1000);		/* due t0 + 2700 */
	MRC_EXPECT_EQ(mk.timer_ops[MRC_TIMER_RTO], ops);
	MRC_EXPECT_EQ(mk.timer_at[MRC_TIMER_RTO], t0 + 2500);
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	MRC_EXPECT_FALSE(ct_rto_expire(q));
	MRC_EXPECT_EQ(mk.now, t0 + 2500);
	MRC_EXPECT_TRUE(mrc_req_rto_pending(q));
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_RTO]);
	MRC_EXPECT_EQ(mk.timer_at[MRC_TIMER_RTO], t0 + 2700);
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	MRC_EXPECT_TRUE(ct_rto_expire(q));
	MRC_EXPECT_EQ(mk.now, t0 + 2700);
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_RTO]);
	/* the same time: kept, fires due */
	mrc_req_rto_set(q, &mk_e, 1000);		/* due t0 + 3700 */
	ops = mk.timer_ops[MRC_TIMER_RTO];
	mrc_req_rto_set(q, &mk_e, 1000);
	MRC_EXPECT_EQ(mk.timer_ops[MRC_TIMER_RTO], ops);
	MRC_EXPECT_TRUE(ct_rto_expire(q));
	MRC_EXPECT_EQ(mk.now, t0 + 3700);
	/* stopped: the expiry does nothing and arms nothing */
	mrc_req_rto_set(q, &mk_e, 1000);		/* t0 + 4700 */
	mrc_req_rto_stop(q);
	MRC_EXPECT_FALSE(mrc_req_rto_pending(q));
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	ops = mk.timer_ops[MRC_TIMER_RTO];
	MRC_EXPECT_FALSE(ct_rto_expire(q));
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_RTO]);
	MRC_EXPECT_EQ(mk.timer_ops[MRC_TIMER_RTO], ops);
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	/* stopped, then set again later than the timer left armed */
	mrc_req_rto_set(q, &mk_e, 1000);		/* t0 + 5700 */
	mk.now += 100;
	mrc_req_rto_stop(q);
	mk.now += 100;
	mrc_req_rto_set(q, &mk_e, 2000);		/* t0 + 6900 */
	MRC_EXPECT_EQ(mk.timer_at[MRC_TIMER_RTO], t0 + 5700);
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	MRC_EXPECT_FALSE(ct_rto_expire(q));
	MRC_EXPECT_EQ(mk.timer_at[MRC_TIMER_RTO], t0 + 6900);
	MRC_EXPECT_TRUE(ct_rto_expire(q));
	MRC_EXPECT_EQ(mk.now, t0 + 6900);
	/* stopped, then set again earlier than the timer left armed */
	mrc_req_rto_set(q, &mk_e, 5000);		/* t0 + 11900 */
	mrc_req_rto_stop(q);
	mrc_req_rto_set(q, &mk_e, 100);			/* t0 + 7000 */
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	MRC_EXPECT_EQ(mk.timer_at[MRC_TIMER_RTO], t0 + 7000);
	MRC_EXPECT_TRUE(ct_rto_expire(q));
	MRC_EXPECT_EQ(mk.now, t0 + 7000);
	/*
	 * forgotten: the environment cancelled its timer (flush, RESET);
	 * the next set arms it even for a later time than the cancelled
	 * one, or nothing would ever fire.
	 */
	mrc_req_rto_set(q, &mk_e, 1000);		/* t0 + 8000 */
	mk.armed[MRC_TIMER_RTO] = false;		/* hrtimer_cancel() */
	mrc_req_rto_forget(q);
	MRC_EXPECT_FALSE(mrc_req_rto_pending(q));
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	mrc_req_rto_set(q, &mk_e, 5000);		/* t0 + 12000 */
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_RTO]);
	MRC_EXPECT_EQ(mk.timer_at[MRC_TIMER_RTO], t0 + 12000);
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	MRC_EXPECT_TRUE(ct_rto_expire(q));
	MRC_EXPECT_EQ(mk.now, t0 + 12000);
	/* an expiry of a forgotten timer (an old life's) arms nothing */
	mrc_req_rto_set(q, &mk_e, 1000);
	mrc_req_rto_forget(q);
	ops = mk.timer_ops[MRC_TIMER_RTO];
	MRC_EXPECT_FALSE(ct_rto_expire(q));
	MRC_EXPECT_EQ(mk.timer_ops[MRC_TIMER_RTO], ops);
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_RTO]);
}

/*
 * Through mrc_req_arm_rto(): the initial RTO armed before any RTT sample,
 * then samples and a restart with the (much shorter) probe timeout: the
 * timer is armed again for the probe's time, which fires when due.
 */
MRC_TEST(comp_lazy_rto_pto_shortens)
{
	struct mrc_req *q;
	u32 k, pto;
	u64 t1;

	MRC_ALLOC(q);
	ct_setup(q, 0);
	ct_wqe(q, MRC_OP_SEND, 8, 1, true);
	q->tlp_done = 1;
	mrc_req_arm_rto(q, &mk_e, true);		/* the RTO, >= 10 ms */
	MRC_EXPECT_FALSE(q->tlp_armed);
	MRC_EXPECT_TRUE(mk.timer_us[MRC_TIMER_RTO] >= 10000);
	for (k = 0; k < 8; k++)
		mrc_rtt_sample(&q->paths.p[0].rtt, 100);
	q->tlp_done = 0;
	mk.now += 50;
	t1 = mk.now;
	mrc_req_arm_rto(q, &mk_e, true);		/* a probe now */
	MRC_ASSERT_TRUE(q->tlp_armed);
	pto = mk.rto_us;
	MRC_EXPECT_TRUE(pto < 10000);
	MRC_EXPECT_TRUE(ct_lazy_ok(q));
	MRC_EXPECT_EQ(mk.timer_at[MRC_TIMER_RTO], t1 + pto);
	MRC_EXPECT_TRUE(ct_rto_expire(q));
	MRC_EXPECT_EQ(mk.now, t1 + pto);
}

/*
 * sim seed 60000276 (--faults loss,burst,reorder,dup,corrupt,blackhole,
 * flap,spike,rnr --scenario rc --requester engines --pair): a path whose
 * packets were all lost has no RTT sample, and its RTO backs off with
 * every timeout up to RTO_max. Its PTO was that backed-off RTO, and the
 * QP's probe the largest path PTO: 500 ms, while the RTO that would fire
 * instead is capped at a quarter of the IB local ACK timeout (16.8 ms).
 * Every episode then began with a 500 ms wait, and a burst of 30 lost
 * packets took 2.3 s to repair. The probe never waits longer than the
 * RTO interval (protocol.rst "Timers").
 */
MRC_TEST(comp_tlp_within_rto_interval)
{
	struct mrc_path_cfg cfg;
	struct mrc_req *q;

	MRC_ALLOC(q);
	ct_setup(q, 0);
	mrc_path_cfg_default(&cfg);
	cfg.npaths = 2;
	mrc_paths_init(&q->paths, &cfg);
	q->cfg.rto_floor_us = 2000;
	mrc_rtt_sample(&q->paths.p[0].rtt, 100);
	/* path 1: no sample, six timeouts */
	q->paths.p[1].rtt.backoff = 6;
	MRC_EXPECT_EQ(mrc_rtt_rto(&q->paths.p[1].rtt), MRC_RTO_MAX_US);
	MRC_EXPECT_EQ(mrc_req_rto_interval(q), 4096U * 16384 / 1000 / 4);
	ct_wqe(q, MRC_OP_SEND, 3000, 3, true);
	mrc_req_arm_rto(q, &mk_e, true);
	MRC_EXPECT_EQ(q->tlp_armed, 1);
	MRC_EXPECT_EQ(mk.timer_us[MRC_TIMER_RTO], mrc_req_rto_interval(q));
	/* a READ tail: PTO_R is bounded by the same interval */
	q->tlp_done = 0;
	ct_wqe(q, MRC_OP_READ_REQ, 8, 1, true);
	mrc_rtt_sample(&q->rsp_rtt, 400000);
	mrc_req_arm_rto(q, &mk_e, true);
	MRC_EXPECT_EQ(q->tlp_armed, 1);
	MRC_EXPECT_EQ(mk.timer_us[MRC_TIMER_RTO], mrc_req_rto_interval(q));
	/* healthy paths: the plain PTO, far below the interval */
	q->paths.p[1].rtt.backoff = 0;
	mrc_rtt_sample(&q->paths.p[1].rtt, 100);
	q->rsp_rtt.srtt8 = 0;
	mrc_req_arm_rto(q, &mk_e, true);
	MRC_EXPECT_EQ(mk.timer_us[MRC_TIMER_RTO], MRC_TLP_MIN_US);
}

/* Every state of the ACK machine was reached by the cases above. */
MRC_TEST(comp_states_covered)
{
	struct mrc_ack_info a;
	struct mrc_req *q;
	u32 i;

	/* UNDO needs a spurious timeout: reach it here */
	MRC_ALLOC(q);
	ct_setup(q, 0);
	ct_wqe(q, MRC_OP_SEND, 8, 1, true);
	q->undo_armed = 1;
	q->undo_ts = 5;
	ct_ack(&a, 1, MRC_SYN_ACK, 0);
	a.tsecr = 1;		/* echoes a send from before the timeout */
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(q->undo_armed, 0);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_SPURIOUS_RTO], 1);
	for (i = 0; i < MRC_COMP_NSTATES; i++)
		MRC_EXPECT_EQ(100 * i + mk.seen[MRC_ENG_COMP][i], 100 * i + 1);
	MRC_EXPECT_TRUE(strcmp(mrc_comp_state_name(MRC_COMP_UNDO), "undo") ==
			0);
}

/*
 * Sim finding 7: a fatal NAK of the first packet of a WQE that is still
 * being segmented completes that WQE with the NAK's status and fails the
 * QP (it used to wait forever: completion walked only up to sq_seg).
 */
MRC_TEST(comp_fatal_nak_mid_segment)
{
	struct mrc_ack_info a;
	struct mrc_swqe *w;
	struct mrc_req *q;
	u32 psn, ppsn;

	MRC_ALLOC(q);
	ct_setup(q, 10);
	w = mrc_req_swqe(q, q->sq_head++);
	memset(w, 0, MK_SWQE);
	w->wr_id = 100;
	w->mrc_op = MRC_OP_WRITE;
	w->len = 3000;
	w->num_sge = 1;
	mrc_sb_send_new(&q->sb, 0, mk.now, 0, &psn, &ppsn);	/* PSN 10 */
	q->pkt[psn & (MRC_WND - 1)].kind = MRC_TXD_REQ;
	q->pkt[psn & (MRC_WND - 1)].idx = 0;
	w->first_psn = psn;
	w->seg_off = 1024;		/* 2 more packets to go: sq_seg 0 */
	ct_ack(&a, 10, MRC_SYN_REM_ACCESS, 10);
	MRC_EXPECT_EQ(mrc_comp_ack(q, &mk_e, &a, false), 0);
	MRC_EXPECT_EQ(mk.nscqe, 1);
	MRC_EXPECT_EQ(mk.scqe_wr_id[0], 100);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_REM_ACCESS_ERR);
	MRC_EXPECT_EQ(q->sq_tail, 1);
	MRC_EXPECT_EQ(q->sq_seg, 1);
	MRC_EXPECT_TRUE(q->failed);
	MRC_EXPECT_TRUE(mk.nerr >= 1);
}

/*
 * Sim finding 5: a fatal NAK beyond a hole (an older SEND lost) and an
 * older READ acknowledged but unanswered: the responder is in ERR, so
 * the older WQEs flush, the NAKed one gets the NAK's status, the QP
 * fails; the peer's re-NAKs do not keep it "heard".
 */
MRC_TEST(comp_fatal_nak_behind_hole)
{
	struct mrc_ack_info a;
	struct mrc_req *q;

	MRC_ALLOC(q);
	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_SEND, 100, 1, false);		/* 10, lost */
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* 11, acked */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, false);		/* 12, NAKed */
	ct_wqe(q, MRC_OP_SEND, 100, 1, true);		/* 13 */
	ct_ack(&a, 10, MRC_SYN_REM_ACCESS, 12);
	a.sack[0] = 1U << 1 | 1U << 2;
	MRC_EXPECT_EQ(mrc_comp_ack(q, &mk_e, &a, false), 0);
	MRC_EXPECT_EQ(mk.nscqe, 3);
	MRC_EXPECT_EQ(mk.scqe_wr_id[0], 100);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(mk.scqe_wr_id[1], 101);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(mk.scqe_wr_id[2], 102);
	MRC_EXPECT_EQ(mk.scqe_status[2], MRC_WC_REM_ACCESS_ERR);
	MRC_EXPECT_EQ(q->sq_tail, 3);	/* the environment flushes 103 */
	MRC_EXPECT_EQ(q->rd_atomic_out, 0);
	MRC_EXPECT_TRUE(q->failed);
	/* give-up: a re-NAK refreshes heard_us, progress is old */
	q->retries = 10;
	q->heard_us = mk.now + 100000000;
	MRC_EXPECT_TRUE(mrc_comp_give_up(q, mk.now + 100000000));
}

/*
 * A fatal NAK while an older WQE is incomplete (a lost SEND) and a WQE
 * between them is SACKed (a signaled WRITE): on one SQ nothing after the
 * first completion in error may complete successfully (IB: later WRs
 * flush). The SACKed WRITE is not complete (its PSN is beyond the
 * cumulative point), so it flushes on main too; the WQE before the hole
 * completes successfully. protocol.rst "Fatal NAK".
 */
MRC_TEST(comp_fatal_nak_no_success_after_flush)
{
	struct mrc_ack_info a;
	struct mrc_req *q;
	u32 i;

	MRC_ALLOC(q);
	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);		/* 10, acked */
	ct_wqe(q, MRC_OP_SEND, 100, 1, false);		/* 11, lost */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);		/* 12, SACKed */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, false);		/* 13, NAKed */
	ct_wqe(q, MRC_OP_SEND, 100, 1, true);		/* 14 */
	ct_ack(&a, 11, MRC_SYN_REM_ACCESS, 13);
	a.sack[0] = 1U << 1 | 1U << 2;			/* 12, 13 */
	MRC_EXPECT_EQ(mrc_comp_ack(q, &mk_e, &a, false), 0);
	MRC_ASSERT_TRUE(mk.nscqe == 4);
	MRC_EXPECT_EQ(mk.scqe_wr_id[0], 100);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(mk.scqe_wr_id[1], 101);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(mk.scqe_wr_id[2], 102);
	MRC_EXPECT_EQ(mk.scqe_status[2], MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(mk.scqe_wr_id[3], 103);
	MRC_EXPECT_EQ(mk.scqe_status[3], MRC_WC_REM_ACCESS_ERR);
	/* the rule itself: no SUCCESS after the first non-SUCCESS */
	for (i = 1; i < mk.nscqe; i++)
		MRC_EXPECT_TRUE(mk.scqe_status[i - 1] == MRC_WC_SUCCESS ||
				mk.scqe_status[i] != MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(q->sq_tail, 4);	/* the environment flushes 104 */
	MRC_EXPECT_TRUE(q->failed);
}

/*
 * A complete WQE behind an incomplete one: only a READ/atomic whose
 * request is acknowledged but whose response is missing can be
 * incomplete below the cumulative point. A fatal NAK then waits one RTO
 * for the response, which does not come, and flushes the READ; the WQEs
 * after it and before the NAKed one are complete (every
 * PSN acknowledged) but must flush too, signaled or not: a SUCCESS after
 * the READ's WR_FLUSH_ERR would break IB's rule that every WR after one
 * completed in error completes flushed. protocol.rst "Fatal NAK".
 */
MRC_TEST(comp_fatal_nak_complete_after_missing_response)
{
	struct mrc_ack_info a;
	struct mrc_req *q;
	u32 i;

	MRC_ALLOC(q);
	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);		/* 10, acked */
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* 11, no response */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, false);		/* 12, acked */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);		/* 13, acked */
	ct_wqe(q, MRC_OP_SEND, 100, 1, true);		/* 14, lost */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);		/* 15, SACKed */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, false);		/* 16, NAKed */
	ct_wqe(q, MRC_OP_SEND, 100, 1, true);		/* 17 */
	ct_ack(&a, 14, MRC_SYN_REM_ACCESS, 16);
	a.sack[0] = 1U << 1 | 1U << 2;			/* 15, 16 */
	MRC_EXPECT_EQ(mrc_comp_ack(q, &mk_e, &a, false), 0);
	/* the READ's response may still come (sent before the NAK) */
	MRC_EXPECT_EQ(mk.nscqe, 1);
	MRC_EXPECT_FALSE(q->failed);
	/* it does not within one RTO */
	MRC_EXPECT_TRUE(ct_rto_expire(q));
	mrc_req_timer(q, &mk_e);
	MRC_ASSERT_TRUE(mk.nscqe == 7);
	MRC_EXPECT_EQ(mk.scqe_wr_id[0], 100);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_SUCCESS);
	for (i = 1; i < 6; i++) {
		MRC_EXPECT_EQ(mk.scqe_wr_id[i], 100 + i);
		MRC_EXPECT_EQ(mk.scqe_status[i], MRC_WC_WR_FLUSH_ERR);
	}
	MRC_EXPECT_EQ(mk.scqe_wr_id[6], 106);
	MRC_EXPECT_EQ(mk.scqe_status[6], MRC_WC_REM_ACCESS_ERR);
	for (i = 1; i < mk.nscqe; i++)
		MRC_EXPECT_TRUE(mk.scqe_status[i - 1] == MRC_WC_SUCCESS ||
				mk.scqe_status[i] != MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(q->sq_tail, 7);	/* the environment flushes 107 */
	MRC_EXPECT_EQ(q->rd_atomic_out, 0);
	MRC_EXPECT_TRUE(q->failed);
}

/*
 * The same with an atomic whose response is missing and a NAKed READ:
 * the READ was acknowledged on arrival and NAKed later (its memory was
 * gone when it could run), so the NAK's cumulative point covers it and
 * it is found by its request PSN. The atomic's response does not come
 * within the RTO the NAK waits: the SEND between them is complete and
 * must flush, the READ gets the NAK's status.
 */
MRC_TEST(comp_fatal_nak_rd_complete_after_missing_atomic)
{
	struct mrc_ack_info a;
	struct mrc_req *q;

	MRC_ALLOC(q);
	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_FETCH_ADD, 8, 1, true);	/* 10, no response */
	ct_wqe(q, MRC_OP_SEND, 100, 1, true);		/* 11, acked */
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* 12, acked, NAKed */
	ct_wqe(q, MRC_OP_SEND, 100, 1, true);		/* 13 */
	ct_ack(&a, 13, MRC_SYN_REM_ACCESS, 12);
	MRC_EXPECT_EQ(mrc_comp_ack(q, &mk_e, &a, false), 0);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	MRC_EXPECT_TRUE(ct_rto_expire(q));
	mrc_req_timer(q, &mk_e);
	MRC_ASSERT_TRUE(mk.nscqe == 3);
	MRC_EXPECT_EQ(mk.scqe_wr_id[0], 100);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(mk.scqe_wr_id[1], 101);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(mk.scqe_wr_id[2], 102);
	MRC_EXPECT_EQ(mk.scqe_status[2], MRC_WC_REM_ACCESS_ERR);
	MRC_EXPECT_EQ(q->sq_tail, 3);	/* the environment flushes 103 */
	MRC_EXPECT_EQ(q->rd_atomic_out, 0);
	MRC_EXPECT_TRUE(q->failed);
}

/*
 * Spraying: the responder sends the responses of the READs/atomics it
 * accepted before a request that failed, then the fatal NAK
 * (test_responder.c resp_fatal_nak_after_queued_read), but on another
 * path the NAK can overtake them. The requester waits for them, one RTO
 * from the NAK or from the last of them that came: the READ completes
 * with its data, then the NAKed WRITE with the NAK's status, the SEND
 * behind it is left to the flush (protocol.rst "Fatal NAK").
 */
MRC_TEST(comp_fatal_nak_waits_for_earlier_response)
{
	struct mrc_ack_info a;
	struct mrc_src src;
	struct mrc_req *q;
	struct mrc_pkt p;
	u8 data[64];
	u64 due;
	u32 i;

	MRC_ALLOC(q);
	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* 10, accepted */
	ct_wqe(q, MRC_OP_FETCH_ADD, 8, 1, true);	/* 11, accepted */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);		/* 12, NAKed */
	ct_wqe(q, MRC_OP_SEND, 100, 1, true);		/* 13 */
	ct_ack(&a, 12, MRC_SYN_REM_ACCESS, 12);
	MRC_EXPECT_EQ(mrc_comp_ack(q, &mk_e, &a, false), 0);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	MRC_EXPECT_FALSE(q->failed);
	/* bounded: a timer runs while the responses are awaited */
	MRC_EXPECT_TRUE(mrc_req_rto_pending(q));
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_RTO]);
	MRC_EXPECT_FALSE(q->tlp_armed);
	for (i = 0; i < 64; i++)
		data[i] = (u8)(i * 5 + 3);
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_READ_RESP;
	p.rresp.req_psn = 10;
	p.rresp.msg_len = 64;
	p.payload_len = 32;
	/*
	 * Its first half, just before the wait would end: the rest is on
	 * its way, the wait starts again (a long READ's responses take
	 * longer than an RTO to come in when the NAK overtook them all).
	 */
	due = q->rto_due;
	mk.now = due - 1;
	src = (struct mrc_src){ .pkt = data, .buf = NULL, .off = 0 };
	mrc_comp_resp(q, &mk_e, &p, &src);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	MRC_EXPECT_TRUE(q->rto_due > due);
	MRC_EXPECT_FALSE(q->tlp_armed);
	/*
	 * The kernel's timer expired before that part came, its event not
	 * yet taken (the work runs later): it is stale, the wait goes on.
	 */
	for (i = 0; i < 3 && !ct_rto_expire(q); i++)
		;	/* an early expiry arms it again for the deadline */
	MRC_EXPECT_TRUE(i < 3);
	p.rresp.offset = 16;
	p.payload_len = 8;
	src = (struct mrc_src){ .pkt = data + 16, .buf = NULL, .off = 0 };
	mrc_comp_resp(q, &mk_e, &p, &src);
	mrc_req_timer(q, &mk_e);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	MRC_EXPECT_FALSE(q->failed);
	p.payload_len = 32;
	p.rresp.offset = 32;
	src = (struct mrc_src){ .pkt = data + 32, .buf = NULL, .off = 0 };
	mrc_comp_resp(q, &mk_e, &p, &src);
	MRC_ASSERT_TRUE(mk.nscqe == 1);
	MRC_EXPECT_EQ(mk.scqe_wr_id[0], 100);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_SUCCESS);
	MRC_EXPECT_MEMEQ(mk.local, data, 64);
	MRC_EXPECT_FALSE(q->failed);
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_ATOMIC_RESP;
	p.aresp.req_psn = 11;
	p.aresp.orig = 0x1122334455667788ULL;
	src = (struct mrc_src){ .pkt = NULL, .buf = NULL, .off = 0 };
	mrc_comp_resp(q, &mk_e, &p, &src);
	MRC_ASSERT_TRUE(mk.nscqe == 3);
	MRC_EXPECT_EQ(mk.scqe_wr_id[1], 101);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(mk.scqe_wr_id[2], 102);
	MRC_EXPECT_EQ(mk.scqe_status[2], MRC_WC_REM_ACCESS_ERR);
	MRC_EXPECT_EQ(q->sq_tail, 3);	/* the environment flushes 103 */
	MRC_EXPECT_EQ(q->rd_atomic_out, 0);
	MRC_EXPECT_TRUE(q->failed);
}

/*
 * The wait is one RTO, whatever else arrives: the NAK again (the peer
 * answers a retransmission with it) neither completes nor restarts it;
 * a READ whose request the responder never acknowledged is not waited
 * for at all (it was never accepted, so no response can come).
 */
MRC_TEST(comp_fatal_nak_wait_bounded)
{
	struct mrc_ack_info a;
	struct mrc_req *q;
	u64 due;

	MRC_ALLOC(q);
	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* 10, accepted */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);		/* 11, NAKed */
	ct_ack(&a, 11, MRC_SYN_REM_ACCESS, 11);
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	MRC_ASSERT_TRUE(mrc_req_rto_pending(q));
	due = q->rto_due;
	mk.now += 1000;
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	MRC_EXPECT_EQ(q->rto_due, due);
	MRC_EXPECT_TRUE(ct_rto_expire(q));
	MRC_EXPECT_EQ(mk.now, due);
	mrc_req_timer(q, &mk_e);
	MRC_ASSERT_TRUE(mk.nscqe == 2);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_REM_ACCESS_ERR);
	MRC_EXPECT_TRUE(q->failed);

	/* never accepted: the NAK's cumulative point is before the READ */
	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* 10, lost */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);		/* 11, NAKed */
	ct_ack(&a, 10, MRC_SYN_REM_ACCESS, 11);
	a.sack[0] = 1U << 1;				/* 11 */
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_ASSERT_TRUE(mk.nscqe == 2);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_REM_ACCESS_ERR);
	MRC_EXPECT_TRUE(q->failed);
}

/*
 * The wait starts at the NAK: a timer armed before it, for the requests
 * still outstanding then (here the WRITE the NAK names, after its
 * tail-loss probe), does not end it early. Seen in the lab: the RTO of
 * the retried WRITE expired 0.6 ms after the NAK came, and the 1 MiB
 * READ's last responses, on their way behind it, found the QP in ERR.
 */
/*
 * A READ (10, accepted) and a WRITE (11) whose tail-loss probe went, its
 * RTO running; the WRITE's fatal NAK comes 1 us before that RTO is due.
 * Returns the time of the NAK.
 */
static u64 ct_nak_before_rto(struct mrc_req *q)
{
	struct mrc_ack_info a;

	ct_setup(q, 10);
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* 10, accepted */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);		/* 11, NAKed later */
	ct_ack(&a, 11, MRC_SYN_ACK, 0);
	mrc_comp_ack(q, &mk_e, &a, false);
	if (!q->tlp_armed || !ct_rto_expire(q))
		return 0;
	mrc_req_timer(q, &mk_e);
	mrc_req_arm_rto(q, &mk_e, false);
	if (!mrc_req_rto_pending(q) || q->tlp_armed)
		return 0;
	mk.now = q->rto_due - 1;
	ct_ack(&a, 11, MRC_SYN_REM_ACCESS, 11);
	mrc_comp_ack(q, &mk_e, &a, false);
	return mk.now;
}

MRC_TEST(comp_fatal_nak_wait_starts_at_nak)
{
	struct mrc_src src;
	struct mrc_req *q;
	struct mrc_pkt p;
	u8 data[64];
	u64 t_nak;
	u32 i;

	MRC_ALLOC(q);
	t_nak = ct_nak_before_rto(q);
	MRC_ASSERT_TRUE(t_nak != 0);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	MRC_ASSERT_TRUE(mrc_req_rto_pending(q));
	MRC_EXPECT_TRUE(q->rto_due >= t_nak + mrc_req_rto_interval(q));
	/* the old timer goes off: not due, the wait goes on */
	for (i = 0; i < 3 && !ct_rto_expire(q); i++)
		;
	MRC_EXPECT_TRUE(mk.now >= t_nak + mrc_req_rto_interval(q));
	/* the response, had it come before that, completes the READ */
	t_nak = ct_nak_before_rto(q);
	MRC_ASSERT_TRUE(t_nak != 0);
	mk.now = t_nak + 2;		/* past the WRITE's old deadline */
	if (mk.armed[MRC_TIMER_RTO] && mk.timer_at[MRC_TIMER_RTO] <= mk.now &&
	    ct_rto_expire(q))
		mrc_req_timer(q, &mk_e);
	MRC_EXPECT_EQ(mk.nscqe, 0);
	MRC_EXPECT_FALSE(q->failed);
	for (i = 0; i < 64; i++)
		data[i] = (u8)(i * 7 + 1);
	ct_read_resp(&p, 10, 64, 0, 64);
	src = (struct mrc_src){ .pkt = data, .buf = NULL, .off = 0 };
	mrc_comp_resp(q, &mk_e, &p, &src);
	MRC_ASSERT_TRUE(mk.nscqe == 2);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_SUCCESS);
	MRC_EXPECT_MEMEQ(mk.local, data, 64);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_REM_ACCESS_ERR);
	MRC_EXPECT_TRUE(q->failed);
}

/*
 * A QP that fails at a response -- here the READ response that ends a
 * fatal NAK's wait: the READ completes, the NAKed WRITE fails, the QP
 * with it -- completes nothing of its peer's after that response's PSN:
 * a WRITE_IMM the peer sent behind the response, received first (its
 * packet waited for the response's PSN), is flushed with the QP, never
 * delivered successfully after the error (sim seed 418189).
 */
MRC_TEST(comp_fail_at_response_completes_nothing_after)
{
	struct mrc_ack_info a;
	struct mrc_resp *r;
	struct mrc_req *q;
	struct mrc_pkt p;
	u8 data[64];
	u32 i;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	ct_setup(q, 10);
	mrc_resp_reset(r, &mk_e);
	mrc_resp_start(r, &mk_e, 100, 16, 8);
	r->cfg.dest_qpn = 7;
	r->cfg.max_dest_rd_atomic = 4;
	r->cfg.npaths = 1;
	r->cfg.qp_access = mk.mr_access;
	mk.comp_q = q;
	ct_wqe(q, MRC_OP_READ_REQ, 64, 1, true);	/* 10, accepted */
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);		/* 11, NAKed */
	ct_ack(&a, 11, MRC_SYN_REM_ACCESS, 11);
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(mk.nscqe, 0);	/* waits for the READ's response */
	/* the peer's WRITE_IMM at 101, sent behind its response at 100 */
	rt_post_recv(0xa, 64);
	rt_write(&p, 101, MK_VA, 16, 0, 16, MRC_F_FIRST | MRC_F_LAST);
	p.opcode = MRC_OP_WRITE_IMM;
	p.write.rmsn = 0;
	p.write.imm = 5;
	rt_fill(rt_pay[0], 16, 1);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* the response: the READ completes, the WRITE fails, the QP too */
	for (i = 0; i < 64; i++)
		data[i] = (u8)(i * 3 + 1);
	ct_read_resp(&p, 10, 64, 0, 64);
	p.flags = MRC_F_FIRST | MRC_F_LAST;
	p.psn = 100;
	mrc_resp_rx(r, &mk_e, &p, data, false);
	MRC_ASSERT_TRUE(mk.nscqe == 2);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_SUCCESS);
	MRC_EXPECT_MEMEQ(mk.local, data, 64);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_REM_ACCESS_ERR);
	MRC_EXPECT_TRUE(q->failed);
	/* nothing after the response's PSN completes successfully */
	for (i = 0; i < mk.nrcqe; i++)
		MRC_EXPECT_TRUE(mk.rcqe[i].status != MRC_WC_SUCCESS);
	mk.comp_q = NULL;
}

/*
 * Version 2: the cumulative ACK a peer's packet carries (cum_lo, 16 bits)
 * is applied as cum_psn = una + (u16)(cum_lo - una), through the 16- and
 * 32-bit wraps, completing WQEs; without an RTT sample. One outside
 * [una, nxt] is ignored. protocol.rst "Cumulative ACK on reverse data".
 */
MRC_TEST(comp_cum_lo_applied_wrap)
{
	struct mrc_req *q;

	MRC_ALLOC(q);
	ct_setup(q, 0xfffffff0U);
	ct_wqe(q, MRC_OP_WRITE, 10000, 10, true);	/* fff0..fff9 */
	ct_wqe(q, MRC_OP_WRITE, 10000, 10, true);	/* fffa..0003 */
	ct_wqe(q, MRC_OP_WRITE, 10000, 10, true);	/* 0004..000d */
	mk.now += 100;
	MRC_EXPECT_EQ(mrc_comp_cum(q, &mk_e, 0x0005), 0);
	MRC_EXPECT_EQ(q->sb.una, 5);
	MRC_EXPECT_EQ(mk.nscqe, 2);
	MRC_EXPECT_EQ(mk.scqe_wr_id[1], 101);
	/* an echo-less ACK: no RTT sample */
	MRC_EXPECT_EQ(mrc_rtt_srtt(&q->paths.p[0].rtt), 0);
	/* behind una (an old packet), beyond nxt (never sent): ignored */
	MRC_EXPECT_EQ(mrc_comp_cum(q, &mk_e, 0x0004), -1);
	MRC_EXPECT_EQ(mrc_comp_cum(q, &mk_e, 0xfff0), -1);
	MRC_EXPECT_EQ(mrc_comp_cum(q, &mk_e, 0x000f), -1);
	MRC_EXPECT_EQ(q->sb.una, 5);
	MRC_EXPECT_EQ(mk.nscqe, 2);
	MRC_EXPECT_EQ(mrc_sb_check(&q->sb), 0);
	/* the same again: nothing new, nothing wrong */
	MRC_EXPECT_EQ(mrc_comp_cum(q, &mk_e, 0x0005), 0);
	/* up to nxt */
	MRC_EXPECT_EQ(mrc_comp_cum(q, &mk_e, 0x000e), 0);
	MRC_EXPECT_EQ(q->sb.una, 0xe);
	MRC_EXPECT_EQ(mk.nscqe, 3);
	/* a QP whose PSN space is not anchored takes none */
	q->anchored = 0;
	ct_wqe(q, MRC_OP_WRITE, 100, 1, true);
	MRC_EXPECT_EQ(mrc_comp_cum(q, &mk_e, 0x000f), -1);
	MRC_EXPECT_EQ(q->sb.una, 0xe);
}

MRC_SUITE(completer,
	  MRC_CASE(comp_ack_completes_in_order),
	  MRC_CASE(comp_read_waits_for_response),
	  MRC_CASE(comp_response_acks_request),
	  MRC_CASE(comp_cum_lo_applied_wrap),
	  MRC_CASE(comp_rnr_nak),
	  MRC_CASE(comp_rnr_exhausted_never_resent),
	  MRC_CASE(comp_rnr_nak_stale_ignored),
	  MRC_CASE(comp_stale_ack_epoch_wrap_ignored),
	  MRC_CASE(comp_error_nak_of_acked_read),
	  MRC_CASE(comp_fatal_nak_of_acked_write),
	  MRC_CASE(comp_anchor_and_resp_timer),
	  MRC_CASE(comp_timer_intervals),
	  MRC_CASE(comp_lazy_rto_deadlines),
	  MRC_CASE(comp_lazy_rto_pto_shortens),
	  MRC_CASE(comp_tlp_within_rto_interval),
	  MRC_CASE(comp_fatal_nak_mid_segment),
	  MRC_CASE(comp_fatal_nak_behind_hole),
	  MRC_CASE(comp_fatal_nak_no_success_after_flush),
	  MRC_CASE(comp_fatal_nak_complete_after_missing_response),
	  MRC_CASE(comp_fatal_nak_rd_complete_after_missing_atomic),
	  MRC_CASE(comp_fatal_nak_waits_for_earlier_response),
	  MRC_CASE(comp_fatal_nak_wait_bounded),
	  MRC_CASE(comp_fatal_nak_wait_starts_at_nak),
	  MRC_CASE(comp_fail_at_response_completes_nothing_after),
	  MRC_CASE(comp_states_covered));
