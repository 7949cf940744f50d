// SPDX-License-Identifier: GPL-2.0
/*
 * The requester engine (core/requester.c) driven through a mock
 * environment: WQEs posted, steps taken; descriptors (PSNs, flags,
 * offsets), responses between messages only, fence and rd_atomic
 * gating, error and local WQEs, retransmission and the timer observed.
 */
#include "mrc_test.h"
#include "mock_env.h"
#include "seq.h"


static void qt_setup(struct mrc_req *q, struct mrc_resp *r, u32 isn)
{
	struct mrc_path_cfg cfg;

	mock_reset(1000000);
	memset(q, 0, sizeof(*q));
	mock_sq(q);
	mrc_sb_init(&q->sb, isn, 0, MRC_DUPTHRESH_DEFAULT);
	mrc_path_cfg_default(&cfg);
	cfg.npaths = 2;
	mrc_paths_init(&q->paths, &cfg);
	q->anchored = 1;
	q->cfg.mtu = 1000;
	q->cfg.max_rd_atomic = 1;
	q->cfg.running = 1;
	q->cfg.retry_cnt = 1;
	q->cfg.ib_timeout_us = 4096ULL * 16384 / 1000;
	q->cfg.rto_floor_us = 10000;
	q->progress_us = mk.now;
	q->heard_us = mk.now;
	mrc_resp_reset(r, &mk_e);
	mrc_resp_start(r, &mk_e, 5000, 16, 8);
	r->cfg.max_dest_rd_atomic = 4;
}

/* The peer's READ of len bytes at its PSN psn arrived and is ready. */
static struct mrc_rsp *qt_peer_read(struct mrc_resp *r, u32 psn, u32 len)
{
	struct mrc_rsp *h = mrc_rspq_insert(&r->rspq, psn, 4);

	h->kind = MRC_RSP_READ;
	h->rkey = MK_RKEY;
	h->va = MK_VA;
	h->len = len;
	mrc_rx_commit(&r->rx, psn);
	return h;
}

/* Post a WQE (visible at the next sq_fetch). */
static struct mrc_swqe *qt_post(u8 op, u32 len, u32 flags)
{
	struct mrc_swqe *w = mrc_req_swqe(mk.q, mk.posted++);

	memset(w, 0, MK_SWQE);
	w->wr_id = mk.posted;
	w->mrc_op = op;
	w->len = len;
	w->send_flags = flags;
	w->rd_atomic = op == MRC_OP_READ_REQ || op == MRC_OP_FETCH_ADD ||
		       op == MRC_OP_CMP_SWAP;
	return w;
}

static const struct mrc_txd *qt_txd(u32 psn)
{
	return &mk.q->pkt[psn & (MRC_WND - 1)];
}

MRC_TEST(req_segments_in_order)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	u32 i;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0xfffffffe);		/* PSNs wrap through 0 */
	/* nothing posted: a fetch, then stop */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(mk.fetches, 1);
	qt_post(MRC_OP_SEND, 2500, MRC_SEND_SOLICITED);
	qt_post(MRC_OP_WRITE, 0, 0);
	for (i = 0; i < 3; i++) {
		MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
		MRC_EXPECT_EQ(o.psn, 0xfffffffe + i);
		MRC_EXPECT_EQ(o.resp, 0);
		MRC_EXPECT_EQ(qt_txd(o.psn)->kind, MRC_TXD_REQ);
		MRC_EXPECT_EQ(qt_txd(o.psn)->opcode, MRC_OP_SEND);
		MRC_EXPECT_EQ(qt_txd(o.psn)->offset, 1000 * i);
		MRC_EXPECT_EQ(qt_txd(o.psn)->len, i < 2 ? 1000 : 500);
		MRC_EXPECT_EQ(qt_txd(o.psn)->idx, 0);
	}
	MRC_EXPECT_EQ(qt_txd(0xfffffffe)->flags, MRC_F_FIRST);
	MRC_EXPECT_EQ(qt_txd(0xffffffff)->flags, 0);
	/* no ACKREQ: the reply may carry the ACK (version 2) */
	MRC_EXPECT_EQ(qt_txd(0)->flags, MRC_F_LAST | MRC_F_SOLICIT);
	MRC_EXPECT_EQ(mrc_req_swqe(q, 0)->first_psn, 0xfffffffe);
	MRC_EXPECT_EQ(mrc_req_swqe(q, 0)->last_psn, 0);
	MRC_EXPECT_EQ(mrc_req_swqe(q, 0)->segmented, 1);
	MRC_EXPECT_EQ(q->sq_seg, 1);
	/* a zero-length WRITE: one packet, FIRST and LAST */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.psn, 1);
	MRC_EXPECT_EQ(qt_txd(1)->flags, MRC_F_FIRST | MRC_F_LAST);
	MRC_EXPECT_EQ(qt_txd(1)->len, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(mrc_sb_outstanding(&q->sb), 4);
	/* not running (RTR): no requests */
	qt_post(MRC_OP_SEND, 10, 0);
	q->cfg.running = 0;
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(mrc_sb_outstanding(&q->sb), 4);
}

MRC_TEST(req_responses_between_messages)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	struct mrc_rsp *h;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	qt_post(MRC_OP_SEND, 2000, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);  /* PSN 0 */
	/* the peer's READ at its PSN 5000 arrived and is ready */
	h = qt_peer_read(r, 5000, 1500);
	MRC_ASSERT_TRUE(mrc_resp_rsp_ready(r));
	/* mid-message: the request's last packet first */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.psn, 1);
	MRC_EXPECT_EQ(o.resp, 0);
	MRC_EXPECT_EQ(qt_txd(1)->flags & MRC_F_LAST, MRC_F_LAST);
	/* then the response, in two packets */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.psn, 2);
	MRC_EXPECT_EQ(o.resp, 1);
	MRC_EXPECT_EQ(qt_txd(2)->opcode, MRC_OP_READ_RESP);
	MRC_EXPECT_EQ(qt_txd(2)->req_psn, 5000);
	MRC_EXPECT_EQ(qt_txd(2)->len, 1000);
	MRC_EXPECT_EQ(qt_txd(2)->flags, MRC_F_FIRST);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(qt_txd(3)->offset, 1000);
	MRC_EXPECT_EQ(qt_txd(3)->len, 500);
	MRC_EXPECT_EQ(qt_txd(3)->flags, MRC_F_LAST);	/* its ACK is delayed */
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 0);
	/* an atomic whose MR went away: nothing sent, rsp_abort marked */
	h = mrc_rspq_insert(&r->rspq, 5001, 4);
	h->kind = MRC_RSP_ATOMIC;
	h->op = MRC_OP_FETCH_ADD;
	h->rkey = 2;
	mrc_rx_commit(&r->rx, 5001);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(r->rsp_abort, 1);
	MRC_EXPECT_EQ(r->rsp_abort_psn, 5001);
	/* a good one: executed once, its result in the descriptor */
	h->rkey = MK_RKEY;
	h->va = MK_VA + 8;
	h->swap_add = 1;
	mk.mem[8] = 42;
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(qt_txd(o.psn)->opcode, MRC_OP_ATOMIC_RESP);
	MRC_EXPECT_EQ(qt_txd(o.psn)->va, 42);
	MRC_EXPECT_EQ(mk.atomics, 1);
	MRC_EXPECT_EQ(mk.mem[8], 43);
}

/*
 * Sim finding 8: an error WQE pending (stop_new) stops new requests but
 * not the READ/atomic responses owed to the peer.
 */
MRC_TEST(req_responds_while_error_pending)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	qt_post(MRC_OP_SEND, 100, 0);
	q->stop_new = 1;
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	qt_peer_read(r, 5000, 500);
	MRC_ASSERT_TRUE(mrc_resp_rsp_ready(r));
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 1);
	MRC_EXPECT_EQ(qt_txd(o.psn)->opcode, MRC_OP_READ_RESP);
	MRC_EXPECT_EQ(qt_txd(o.psn)->req_psn, 5000);
	/* and still no new request */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(q->sq_seg, 0);
}

/*
 * An RNR NAK stops the QP's requests, not the responses it owes the peer
 * (protocol.rst "READ and atomics"): during the RNR wait a READ response
 * is sent and a lost response PSN is resent, while no new request starts
 * and no lost request PSN is resent until the wait ends. Else a peer that
 * posts its receive once its READ from this QP completes never does
 * before this QP's RNR retries run out (IB: the wait is the requester's,
 * the responder answers all the while).
 */
MRC_TEST(req_responds_during_rnr_wait)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	qt_post(MRC_OP_SEND, 100, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);  /* PSN 0 */
	qt_post(MRC_OP_SEND, 100, 0);
	/* PSN 0 was RNR NAKed (comp_nak_rnr): lost, the wait begins */
	mrc_sb_mark_lost(&q->sb, 0);
	q->rnr_wait = 1;
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(q->sq_seg, 1);		/* the second SEND waits */
	MRC_EXPECT_EQ(mrc_req_retx(q, &mk_e, &o), -1);
	/* the peer's READ arrives: answered during the wait */
	qt_peer_read(r, 5000, 500);
	MRC_ASSERT_TRUE(mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 1);
	MRC_EXPECT_EQ(o.psn, 1);
	MRC_EXPECT_EQ(qt_txd(1)->opcode, MRC_OP_READ_RESP);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	/* its packet is lost: resent during the wait, the request is not */
	mrc_sb_mark_lost(&q->sb, 1);
	MRC_ASSERT_TRUE(mrc_req_retx(q, &mk_e, &o) == 0);
	MRC_EXPECT_EQ(o.psn, 1);
	MRC_EXPECT_EQ(mrc_req_retx(q, &mk_e, &o), -1);
	MRC_EXPECT_EQ(mrc_sb_state_of(&q->sb, 0), MRC_SB_LOST);
	/* the wait ends: the NAKed PSN is resent, the next SEND starts */
	q->rnr_wait = 0;
	MRC_ASSERT_TRUE(mrc_req_retx(q, &mk_e, &o) == 0);
	MRC_EXPECT_EQ(o.psn, 0);
	MRC_ASSERT_TRUE(mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 0);
	MRC_EXPECT_EQ(o.psn, 2);
	MRC_EXPECT_EQ(q->sq_seg, 2);
}

/*
 * An RNR NAK that comes while a request message is partly sent: the rest
 * of that message still goes during the wait, so that the responses --
 * never sent inside a request message -- are not held behind it. Else
 * the peer's READ waits for the end of the wait, and if the peer posts
 * its receive only once that READ has completed, the SEND's retries
 * (each NAKed again before the message is finished) never end
 * (simulator fault "rnrhold", seed 8100000).
 */
MRC_TEST(req_rnr_wait_finishes_started_message)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	u32 i;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	qt_post(MRC_OP_SEND, 2500, 0);		/* 3 packets: 0..2 */
	qt_post(MRC_OP_SEND, 100, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);  /* PSN 0 */
	/* PSN 0 was RNR NAKed: lost, the wait begins mid-message */
	mrc_sb_mark_lost(&q->sb, 0);
	q->rnr_wait = 1;
	qt_peer_read(r, 5000, 500);
	for (i = 1; i < 3; i++) {
		MRC_ASSERT_TRUE(mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT);
		MRC_EXPECT_EQ(o.resp, 0);
		MRC_EXPECT_EQ(o.psn, i);
		MRC_EXPECT_EQ(qt_txd(i)->idx, 0);
	}
	MRC_EXPECT_EQ(qt_txd(2)->flags, MRC_F_LAST);
	/* then the response, and no new request until the wait ends */
	MRC_ASSERT_TRUE(mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 1);
	MRC_EXPECT_EQ(o.psn, 3);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(q->sq_seg, 1);
	MRC_EXPECT_EQ(mrc_req_retx(q, &mk_e, &o), -1);
}

/*
 * Sim finding 6: the retransmission of a READ response whose MR is gone
 * becomes a PROBE (the peer may have the PSN; its READ may have
 * completed and invalidated the MR) MRC_RESP_GONE_PROBES times, then the
 * READ fails; never for an atomic response or a first transmission.
 */
MRC_TEST(req_resp_gone_probes_then_fails)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	u32 i;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	qt_peer_read(r, 5000, 500);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 1);
	for (i = 0; i < MRC_RESP_GONE_PROBES; i++)
		MRC_EXPECT_TRUE(mrc_req_resp_gone(q, o.psn));
	MRC_EXPECT_FALSE(mrc_req_resp_gone(q, o.psn));
	/* retired (the PROBE's ACK): nothing to ask any more */
	q->pkt[o.psn & (MRC_WND - 1)].gone = 0;
	mrc_sb_init(&q->sb, o.psn + 1, 0, MRC_DUPTHRESH_DEFAULT);
	MRC_EXPECT_FALSE(mrc_req_resp_gone(q, o.psn));
	/* an atomic response never needs its MR */
	q->pkt[o.psn & (MRC_WND - 1)].kind = MRC_RSP_ATOMIC;
	MRC_EXPECT_FALSE(mrc_req_resp_gone(q, o.psn));
}

MRC_TEST(req_gating_error_local_ud)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	struct mrc_swqe *w;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	qt_post(MRC_OP_READ_REQ, 64, 0);
	qt_post(MRC_OP_READ_REQ, 64, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(q->rd_atomic_out, 1);
	/* max_rd_atomic 1: the second READ waits */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_TRUE(mk.seen[MRC_ENG_REQ][MRC_REQS_BLOCKED]);
	q->cfg.max_rd_atomic = 2;
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	/* a fenced SEND waits for the READs' responses */
	qt_post(MRC_OP_SEND, 8, MRC_SEND_FENCE);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	q->rd_atomic_out = 0;
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	/* a local operation: executed, no packet, done after what precedes */
	qt_post(0, 0, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_AGAIN);
	MRC_EXPECT_EQ(mk.local_ops, 1);
	MRC_EXPECT_EQ(mrc_req_swqe(q, 3)->last_psn, q->sb.nxt - 1);
	/* an invalid WQE: no packet, nothing new after it */
	w = qt_post(MRC_OP_SEND, 8, 0);
	w->status = MRC_WC_LOC_QP_OP_ERR;
	qt_post(MRC_OP_SEND, 8, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_AGAIN);
	MRC_EXPECT_EQ(q->stop_new, 1);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(q->sq_seg, 5);
	/* UD: one datagram per WQE, no PSN */
	qt_setup(q, r, 0);
	q->cfg.ud = 1;
	qt_post(MRC_OP_SEND, 8, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_UD);
	MRC_EXPECT_EQ(o.idx, 0);
	MRC_EXPECT_EQ(q->sq_seg, 1);
	MRC_EXPECT_EQ(mrc_sb_outstanding(&q->sb), 0);
}

/*
 * A READ WQE that fails before it is sent (a bad lkey at fetch) is never
 * counted in rd_atomic_out, so its completion must not take one off: the
 * count wrapped to 2^32 - 1 while the flush and the response timer still
 * consult it (RESET zeroes it).
 */
MRC_TEST(req_failed_read_not_counted)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	struct mrc_swqe *w;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	q->cfg.max_rd_atomic = 4;
	w = qt_post(MRC_OP_READ_REQ, 64, 0);
	w->signaled = 1;
	w->num_sge = 1;
	w = qt_post(MRC_OP_READ_REQ, 64, 0);
	w->status = MRC_WC_LOC_PROT_ERR;	/* as a bad lkey at fetch */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(q->rd_atomic_out, 1);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_AGAIN);
	MRC_EXPECT_EQ(q->stop_new, 1);
	MRC_EXPECT_EQ(q->rd_atomic_out, 1);
	/* the first READ is answered: both complete, nothing is owed */
	mk_read_resp(q, 0, 64, 5);
	mrc_comp_complete(q, &mk_e);
	MRC_ASSERT_TRUE(mk.nscqe == 2);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(mk.scqe_status[1], MRC_WC_LOC_PROT_ERR);
	MRC_EXPECT_EQ(q->rd_atomic_out, 0);
}

/* A local operation that fails (as a bad MW bind does). */
static void qt_local_op_fails(void *ctx, struct mrc_swqe *w)
{
	(void)ctx;
	mk.local_ops++;
	w->status = MRC_WC_MW_BIND_ERR;
}

/*
 * protocol.rst "Error completions": a failed local operation is an error
 * WQE like any other: nothing after it starts (a WRITE behind it would
 * land in the peer's memory, a SEND use up a receive WQE, and both
 * complete WR_FLUSH_ERR). READ/atomic responses still go out.
 */
MRC_TEST(req_failed_local_op_stops_new)
{
	static struct mrc_env_ops ops;
	struct mrc_env fe = { .ops = &ops, .ctx = NULL };
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	struct mrc_swqe *w;

	ops = mk_ops;
	ops.local_op = qt_local_op_fails;
	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	w = qt_post(0, 0, 0);
	qt_post(MRC_OP_SEND, 8, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &fe, &o), MRC_REQ_AGAIN);
	MRC_EXPECT_EQ(mk.local_ops, 1);
	MRC_EXPECT_EQ(w->status, MRC_WC_MW_BIND_ERR);
	MRC_EXPECT_EQ(q->stop_new, 1);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &fe, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(q->sq_seg, 1);
	MRC_EXPECT_EQ(mrc_sb_outstanding(&q->sb), 0);
	/* a response still goes out */
	qt_peer_read(r, 5000, 100);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &fe, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 1);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &fe, &o), MRC_REQ_STOP);
	/* it completes with its error, the QP fails */
	mrc_comp_complete(q, &fe);
	MRC_ASSERT_TRUE(mk.nscqe == 1);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_MW_BIND_ERR);
	MRC_EXPECT_EQ(q->failed, 1);
}

/*
 * UD: a datagram the environment cannot build (too long, a bad AH) fails
 * its WQE after the requester handed it on; the next datagrams of the
 * batch are not sent.
 */
MRC_TEST(req_ud_failed_datagram_stops_new)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	struct mrc_swqe *w;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	q->cfg.ud = 1;
	qt_post(MRC_OP_SEND, 8, 0);
	w = qt_post(MRC_OP_SEND, 5000, 0);
	qt_post(MRC_OP_SEND, 8, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_UD);
	MRC_EXPECT_EQ(o.idx, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_UD);
	MRC_EXPECT_EQ(o.idx, 1);
	/* the environment cannot build it */
	mrc_req_wqe_failed(q, w, MRC_WC_LOC_LEN_ERR);
	MRC_EXPECT_EQ(w->status, MRC_WC_LOC_LEN_ERR);
	MRC_EXPECT_EQ(q->stop_new, 1);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(q->sq_seg, 2);
	/* a second error keeps the first */
	mrc_req_wqe_failed(q, w, MRC_WC_LOC_QP_OP_ERR);
	MRC_EXPECT_EQ(w->status, MRC_WC_LOC_LEN_ERR);
	mrc_comp_complete(q, &mk_e);
	MRC_ASSERT_TRUE(mk.nscqe == 1);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_LOC_LEN_ERR);
	MRC_EXPECT_EQ(q->sq_tail, 2);
	MRC_EXPECT_EQ(q->failed, 1);
}

MRC_TEST(req_retx_and_timer)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	u32 i, ppsn0;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 10);
	qt_post(MRC_OP_SEND, 3000, 0);
	for (i = 0; i < 3; i++)
		mrc_req_next(q, r, &mk_e, &o);
	ppsn0 = q->sb.ent[10 & (MRC_WND - 1)].ppsn;
	MRC_EXPECT_EQ(mrc_req_retx(q, &mk_e, &o), -1);	/* nothing lost */
	/* the tail-loss probe marks the newest PSN */
	mrc_req_arm_rto(q, &mk_e, true);
	MRC_EXPECT_EQ(q->tlp_armed, 1);
	mrc_req_timer(q, &mk_e);
	MRC_EXPECT_EQ(q->tlp_done, 1);
	MRC_ASSERT_TRUE(mrc_req_retx(q, &mk_e, &o) == 0);
	MRC_EXPECT_EQ(o.psn, 12);
	MRC_EXPECT_EQ(o.cause, MRC_LOSS_TLP);
	MRC_EXPECT_EQ(mrc_req_retx(q, &mk_e, &o), -1);
	/* an RTO an interval later marks each path's oldest packet */
	mrc_req_arm_rto(q, &mk_e, true);
	MRC_EXPECT_EQ(q->tlp_armed, 0);
	mk.now += 1000000;
	mrc_req_timer(q, &mk_e);
	MRC_EXPECT_EQ(q->retries, 1);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_RTO], 1);
	MRC_EXPECT_EQ(q->undo_armed, 1);
	MRC_ASSERT_TRUE(mrc_req_retx(q, &mk_e, &o) == 0);
	MRC_EXPECT_EQ(o.psn, 10);
	MRC_EXPECT_EQ(o.cause, MRC_LOSS_RTO);
	MRC_EXPECT_NE(q->sb.ent[10 & (MRC_WND - 1)].ppsn, ppsn0);
	/* silence beyond the retry rules: the oldest WQE fails */
	for (i = 0; i < 4; i++) {
		mk.now += 30000000;
		mrc_req_timer(q, &mk_e);
	}
	MRC_EXPECT_TRUE(mk.cnt[MRC_CNT_RETRY_EXC] >= 1);
	MRC_EXPECT_EQ(mrc_req_swqe(q, 0)->status, MRC_WC_RETRY_EXC_ERR);
	MRC_EXPECT_EQ(q->stop_new, 1);
}

/*
 * The tail-loss probe resends the newest outstanding PSN that may be
 * resent: not one of a failed WQE (RNR retries exceeded, never resent),
 * which would leave the probe unsent and the tail to the full RTO.
 */
MRC_TEST(req_tlp_skips_failed_wqe)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	qt_post(MRC_OP_WRITE, 100, 0);
	qt_post(MRC_OP_SEND, 100, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);	/* 0 */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);	/* 1 */
	/* the SEND ran out of RNR retries: failed, never resent */
	mrc_req_wqe_failed(q, mrc_req_swqe(q, 1), MRC_WC_RNR_RETRY_EXC_ERR);
	mrc_req_arm_rto(q, &mk_e, true);
	MRC_ASSERT_TRUE(q->tlp_armed);
	mrc_req_timer(q, &mk_e);
	MRC_ASSERT_TRUE(mrc_req_retx(q, &mk_e, &o) == 0);
	MRC_EXPECT_EQ(o.psn, 0);
	MRC_EXPECT_EQ(o.cause, MRC_LOSS_TLP);
	MRC_EXPECT_EQ(mrc_sb_state_of(&q->sb, 1), MRC_SB_INFLIGHT);
}

/*
 * Issue 10, 4: a retransmitted packet is the original's bytes: the
 * descriptor (offset, length) of its PSN, whatever cfg.mtu says by then.
 * (The kernel never changes cfg.mtu between RTR and RESET -- hooks.c
 * tp_seg_size, protocol.rst "Segment size" -- this guards the retransmit
 * path should it.)
 */
MRC_TEST(req_retx_keeps_segment_bounds)
{
	static const u16 len[3] = { 1000, 1000, 500 };
	static const u8 flags[3] = { MRC_F_FIRST, 0, MRC_F_LAST };
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	u32 i, n = 0, k, first;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 10);
	qt_post(MRC_OP_WRITE, 2500, 0);
	for (i = 0; i < 3; i++)
		MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	q->cfg.mtu = 400;
	/* the tail-loss probe (PSN 12), then an RTO (the oldest: 10) */
	for (k = 0; k < 2; k++) {
		mrc_req_arm_rto(q, &mk_e, true);
		mk.now += 1000000;
		mrc_req_timer(q, &mk_e);
		first = 0;
		while (mrc_req_retx(q, &mk_e, &o) == 0 && n < 8) {
			if (!first)
				first = o.psn;
			i = o.psn - 10;
			MRC_ASSERT_TRUE(i < 3);
			MRC_EXPECT_EQ(qt_txd(o.psn)->offset, 1000 * i);
			MRC_EXPECT_EQ(qt_txd(o.psn)->len, len[i]);
			MRC_EXPECT_EQ(qt_txd(o.psn)->flags, flags[i]);
			n++;
		}
		MRC_EXPECT_EQ(first, k ? 10 : 12);
	}
	MRC_EXPECT_TRUE(n >= 2);
}


/*
 * Issue 10, 4 (protocol.rst "Segment size"): the segment size of a life,
 * chosen at RTR, and which address may carry it later. IPv4 headers cost
 * 96 bytes, IPv6 116 (kernel/metaroce.h). An RC QP whose path MTU is the
 * device's active MTU fills the netdev's IP MTU: 1500 -> 1404 over IPv4,
 * 1384 over IPv6. Any other QP uses its path MTU. ib_core lets an RC or
 * UC QP take a new address vector at SQD -> SQD while its segment size
 * stays: a 1404-byte segment does not fit a 1500-byte netdev behind IPv6
 * headers (1520), so that modify_qp is refused (mrc_seg_fits false); the
 * other way round, 1384 + 96 fits.
 */
MRC_TEST(req_seg_size_and_address_change)
{
	/* RTR: IPv4 fills 1500 - 96, IPv6 1500 - 116 */
	MRC_EXPECT_EQ(mrc_seg_size(1024, true, 1500, 96), 1404);
	MRC_EXPECT_EQ(mrc_seg_size(1024, true, 1500, 116), 1384);
	/* not filling: the path MTU, 0 meaning 1024 */
	MRC_EXPECT_EQ(mrc_seg_size(1024, false, 1500, 96), 1024);
	MRC_EXPECT_EQ(mrc_seg_size(0, false, 9000, 96), 1024);
	MRC_EXPECT_EQ(mrc_seg_size(2048, false, 1500, 96), 2048);
	/* a path MTU above what the netdev carries is not shrunk */
	MRC_EXPECT_EQ(mrc_seg_size(2048, true, 1500, 96), 2048);
	/* bounded by 256 .. MRC_MAX_PAYLOAD */
	MRC_EXPECT_EQ(mrc_seg_size(1024, true, 9000, 96), MRC_MAX_PAYLOAD);
	MRC_EXPECT_EQ(mrc_seg_size(4096, true, 4192, 96), 4096);
	MRC_EXPECT_EQ(mrc_seg_size(256, true, 300, 96), 256);
	MRC_EXPECT_EQ(mrc_seg_size(256, true, 80, 96), 256);

	/* the address at RTR carries its own choice */
	MRC_EXPECT_TRUE(mrc_seg_fits(1404, 96, 1500));
	MRC_EXPECT_TRUE(mrc_seg_fits(1384, 116, 1500));
	/* IPv4 at RTR, IPv6 at SQD -> SQD: 20 bytes too big, refused */
	MRC_EXPECT_FALSE(mrc_seg_fits(1404, 116, 1500));
	MRC_EXPECT_FALSE(mrc_seg_fits(1385, 116, 1500));
	/* IPv6 at RTR, IPv4 later: fits */
	MRC_EXPECT_TRUE(mrc_seg_fits(1384, 96, 1500));
	/* an IB MTU value chosen below the worst-case headers fits both */
	MRC_EXPECT_TRUE(mrc_seg_fits(1024, 116, 1500));
	/* the netdev's MTU dropped since RTR: no address carries it */
	MRC_EXPECT_FALSE(mrc_seg_fits(1404, 96, 1400));
	MRC_EXPECT_TRUE(mrc_seg_fits(4096, 116, 9000));
	/* no overflow on absurd inputs */
	MRC_EXPECT_FALSE(mrc_seg_fits(0xffffffffU, 116, 1500));
	MRC_EXPECT_FALSE(mrc_seg_fits(1404, 0xffffffffU, 1500));
}

/*
 * Debug-kernel peer.sh: a FETCH_ADD on a QP idle since RTS (minutes)
 * ended RETRY_EXC_ERR 0.48 s after it was posted, with the QP's bound
 * (timeout 14, retry_cnt 7: 8 x 67 ms, floor MRC_GIVEUP_MIN_US) not
 * reached: the give-up clock ran from the last progress before the idle
 * time. Silence counts from the first packet sent from idle.
 */
MRC_TEST(req_idle_qp_first_request_gets_full_retry_time)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	u64 t0, limit;
	u32 i;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 10);
	limit = q->cfg.ib_timeout_us * (q->cfg.retry_cnt + 1);
	if (limit < MRC_GIVEUP_MIN_US)
		limit = MRC_GIVEUP_MIN_US;
	mk.now += 60000000;		/* a minute idle after RTS */
	qt_post(MRC_OP_FETCH_ADD, 8, 0);
	MRC_ASSERT_TRUE(mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT);
	t0 = mk.now;
	/* no answer: the RTO fires at its interval, again and again */
	for (i = 0; i < 1000 && !mk.cnt[MRC_CNT_RETRY_EXC]; i++) {
		mrc_req_arm_rto(q, &mk_e, true);
		mk.now += q->rto_armed_us ? q->rto_armed_us :
			  mrc_req_rto_interval(q);
		mrc_req_timer(q, &mk_e);
		while (mrc_req_retx(q, &mk_e, &o) == 0)
			;
	}
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_RETRY_EXC], 1);
	/* ... but not before the QP's bound since the request went out */
	MRC_EXPECT_TRUE(mk.now - t0 > limit);
}

/*
 * Sim "rnrx": stop_new while a message is partly segmented (its RNR NAK
 * came back with no retry left, or its payload could not be read). The
 * message is cut where it is -- never continued, never completed as a
 * success -- so that it completes (with its error, or WR_FLUSH_ERR) and
 * the READ/atomic responses behind it go out.
 */
MRC_TEST(req_cuts_partial_message_on_stop_new)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	struct mrc_swqe *w, *w2;
	u32 first;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 100);
	w = qt_post(MRC_OP_SEND, 3500, 0);	/* 4 packets */
	w2 = qt_post(MRC_OP_WRITE, 2500, 0);	/* 3 packets */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	first = o.psn;
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(w->seg_off, 2000);
	/* the RNR NAK of its first PSN, no retry left */
	w->status = MRC_WC_RNR_RETRY_EXC_ERR;
	q->stop_new = 1;
	qt_peer_read(r, 5000, 500);
	MRC_ASSERT_TRUE(mrc_resp_rsp_ready(r));
	/* cut: no packet, the WQE ends at its last PSN sent */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_AGAIN);
	MRC_EXPECT_EQ(w->segmented, 1);
	MRC_EXPECT_EQ(w->first_psn, first);
	MRC_EXPECT_EQ(w->last_psn, q->sb.nxt - 1);
	MRC_EXPECT_EQ(w->status, MRC_WC_RNR_RETRY_EXC_ERR);
	MRC_EXPECT_EQ(q->sq_seg, 1);
	/* the response goes out (between messages again) */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 1);
	MRC_EXPECT_EQ(qt_txd(o.psn)->req_psn, 5000);
	/* nothing new after it */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(w2->seg_off, 0);
	/* it completes, with its error, without waiting for ACKs */
	mrc_comp_complete(q, &mk_e);
	MRC_EXPECT_EQ(q->sq_tail, 1);
	MRC_EXPECT_EQ(q->failed, 1);

	/* a message cut behind another's error is never a success */
	qt_setup(q, r, 100);
	qt_post(MRC_OP_SEND, 10, 0);
	w = qt_post(MRC_OP_WRITE, 2500, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	mrc_req_swqe(q, 0)->status = MRC_WC_RNR_RETRY_EXC_ERR;
	q->stop_new = 1;
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_AGAIN);
	MRC_EXPECT_EQ(w->status, MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(q->sq_seg, 2);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
}

/*
 * SQD (cfg.sqd): the message being segmented goes on to its last packet,
 * responses still go out between messages, no new message starts (no
 * fetch either); drained once everything started completed; RTS resumes
 * the queued WQEs in order. design.rst "Verbs coverage".
 */
/*
 * Version 3 (protocol.rst "RNR and the request epoch"): an RNR switch
 * voids the refused WQE's PSNs and every later one's; the requester sends
 * nothing new during the wait but the peer's READ responses, then those
 * WQEs again from their first byte under new PSNs of the new epoch -- a
 * local operation among them is not run again -- and in SQD too (they
 * were started: not drained until they complete).
 */
MRC_TEST(req_rnr_switch_resends_in_new_epoch)
{
	struct mrc_ack_info a;
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	u32 i, psn;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	q->cfg.rnr_retry = 7;
	qt_post(MRC_OP_WRITE, 100, 0);			/* 0: PSN 0 */
	qt_post(MRC_OP_SEND, 2500, 0);			/* 1: PSNs 1..3 */
	qt_post(0, 0, 0);				/* 2: local op */
	qt_post(MRC_OP_READ_REQ, 64, 0);		/* 3: PSN 4 */
	for (i = 0; i < 5; i++)
		MRC_ASSERT_TRUE(mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT ||
				mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT);
	MRC_EXPECT_EQ(q->sb.nxt, 5);
	MRC_EXPECT_EQ(q->sq_seg, 4);
	MRC_EXPECT_EQ(mk.local_ops, 1);
	MRC_EXPECT_EQ(q->rd_atomic_out, 1);
	MRC_EXPECT_EQ(qt_txd(4)->epoch, 0);
	/* the SEND's second packet refused: 2..4 void, 1 void by its msn */
	memset(&a, 0, sizeof(a));
	a.cum_psn = 5;
	a.syndrome = MRC_SYN_RNR;
	a.nak_psn = 2;
	a.epoch = 1;
	a.rnr_timer = 1;
	a.rwnd = MRC_WND;
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(q->epoch, 1);
	MRC_EXPECT_EQ(q->rnr_wait, 1);
	MRC_EXPECT_EQ(q->sq_seg, 1);
	MRC_EXPECT_EQ(q->rd_atomic_out, 0);
	MRC_EXPECT_EQ(q->sq_tail, 1);			/* the WRITE only */
	for (psn = 1; psn < 5; psn++)
		MRC_EXPECT_EQ(qt_txd(psn)->voided, 1);
	MRC_EXPECT_EQ(qt_txd(0)->voided, 0);
	/* the wait: a response goes, no request */
	qt_peer_read(r, 5000, 500);
	MRC_ASSERT_TRUE(mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 1);
	MRC_EXPECT_EQ(o.psn, 5);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	/* the wait ends in SQD: the rewound WQEs still go, new ones not */
	q->rnr_wait = 0;
	q->cfg.sqd = 1;
	qt_post(MRC_OP_WRITE, 10, 0);			/* 4: waits for RTS */
	MRC_EXPECT_FALSE(mrc_req_drained(q));
	for (i = 0; i < 3; i++) {
		MRC_ASSERT_TRUE(mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT);
		MRC_EXPECT_EQ(o.psn, 6 + i);
		MRC_EXPECT_EQ(qt_txd(o.psn)->idx, 1);
		MRC_EXPECT_EQ(qt_txd(o.psn)->epoch, 1);
		MRC_EXPECT_EQ(qt_txd(o.psn)->offset, i * 1000);
	}
	MRC_EXPECT_EQ(qt_txd(6)->flags, MRC_F_FIRST);
	MRC_EXPECT_EQ(qt_txd(8)->flags, MRC_F_LAST);
	/* the local operation passes without running again, then the READ */
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_AGAIN);
	MRC_EXPECT_EQ(mk.local_ops, 1);
	MRC_ASSERT_TRUE(mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.psn, 9);
	MRC_EXPECT_EQ(qt_txd(9)->opcode, MRC_OP_READ_REQ);
	MRC_EXPECT_EQ(qt_txd(9)->epoch, 1);
	MRC_EXPECT_EQ(q->rd_atomic_out, 1);
	MRC_EXPECT_EQ(q->sq_seg, 4);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(q->sq_seg, 4);
	MRC_EXPECT_EQ(mrc_req_swqe(q, 4)->seg_off, 0);
}

MRC_TEST(req_sqd_finishes_started_message_only)
{
	struct mrc_ack_info a;
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	struct mrc_swqe *w, *w2, *w3;
	u32 i, f;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 100);
	MRC_EXPECT_TRUE(mrc_req_drained(q));
	w = qt_post(MRC_OP_SEND, 2500, 0);	/* 3 packets: 100..102 */
	w2 = qt_post(MRC_OP_WRITE, 10, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.psn, 100);
	/* RTS -> SQD with the SEND started */
	q->cfg.sqd = 1;
	MRC_EXPECT_FALSE(mrc_req_drained(q));
	for (i = 1; i < 3; i++) {
		MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
		MRC_EXPECT_EQ(o.psn, 100 + i);
		MRC_EXPECT_EQ(qt_txd(o.psn)->idx, 0);
	}
	MRC_EXPECT_EQ(qt_txd(102)->flags, MRC_F_LAST);
	MRC_EXPECT_EQ(w->segmented, 1);
	/* the peer's READ is answered in SQD */
	qt_peer_read(r, 5000, 500);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 1);
	/* the WRITE fetched before SQD and one posted in SQD wait */
	w3 = qt_post(MRC_OP_SEND, 10, 0);
	f = mk.fetches;
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	MRC_EXPECT_EQ(mk.fetches, f);
	MRC_EXPECT_EQ(w2->seg_off, 0);
	MRC_EXPECT_EQ(q->sq_seg, 1);
	MRC_EXPECT_EQ(q->sq_head, 2);
	/* the SEND is ACKed: drained, with the WRITE still queued */
	MRC_EXPECT_FALSE(mrc_req_drained(q));
	memset(&a, 0, sizeof(a));
	a.cum_psn = 104;
	a.syndrome = MRC_SYN_ACK;
	a.rwnd = MRC_WND;
	mrc_comp_ack(q, &mk_e, &a, false);
	MRC_EXPECT_EQ(q->sq_tail, 1);
	MRC_EXPECT_TRUE(mrc_req_drained(q));
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	/* SQD -> RTS: the WRITE, then the SEND posted in SQD */
	q->cfg.sqd = 0;
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(qt_txd(o.psn)->idx, 1);
	MRC_EXPECT_EQ(qt_txd(o.psn)->opcode, MRC_OP_WRITE);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(qt_txd(o.psn)->idx, 2);
	MRC_EXPECT_EQ(w3->segmented, 1);
	MRC_EXPECT_FALSE(mrc_req_drained(q));
}

/*
 * UC: PSNs in order but nothing outstanding (no window: more than MRC_WND
 * packets go out without an ACK), UC flag, no ACKREQ, paths round robin,
 * and the WQE completes once its last packet is described.
 */
MRC_TEST(req_uc_no_window_completes_when_sent)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	u32 i, n;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0xfffffffe);
	q->cfg.uc = 1;
	qt_post(MRC_OP_SEND, 2500, MRC_SEND_SOLICITED);
	qt_post(MRC_OP_WRITE, 0, 0);
	for (i = 0; i < 3; i++) {
		MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
		MRC_EXPECT_EQ(o.psn, 0xfffffffe + i);
		MRC_EXPECT_EQ(o.ppsn, 0);
		MRC_EXPECT_EQ(o.path, i % 2);
		MRC_EXPECT_EQ(o.resp, 0);
		MRC_EXPECT_EQ(qt_txd(o.psn)->opcode, MRC_OP_SEND);
		MRC_EXPECT_EQ(qt_txd(o.psn)->offset, 1000 * i);
		MRC_EXPECT_EQ(mrc_sb_outstanding(&q->sb), 0);
	}
	MRC_EXPECT_EQ(qt_txd(0xfffffffe)->flags, MRC_F_FIRST | MRC_F_UC);
	MRC_EXPECT_EQ(qt_txd(0xffffffff)->flags, MRC_F_UC);
	MRC_EXPECT_EQ(qt_txd(0)->flags,
		      MRC_F_LAST | MRC_F_SOLICIT | MRC_F_UC);
	MRC_EXPECT_EQ(mrc_req_swqe(q, 0)->segmented, 1);
	MRC_EXPECT_TRUE(mrc_seq_lt(mrc_req_swqe(q, 0)->last_psn, q->sb.una));
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(qt_txd(1)->flags, MRC_F_FIRST | MRC_F_LAST | MRC_F_UC);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
	/* both complete without any ACK */
	mrc_comp_complete(q, &mk_e);
	MRC_EXPECT_EQ(q->sq_tail, 2);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* a message of 3 windows: never blocked, no timer */
	qt_post(MRC_OP_WRITE, 3 * MRC_WND * 1000, 0);
	for (n = 0; mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT; n++)
		;
	MRC_EXPECT_EQ(n, 3 * MRC_WND);
	MRC_EXPECT_EQ(mrc_sb_outstanding(&q->sb), 0);
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_RTO]);
	mrc_comp_complete(q, &mk_e);
	MRC_EXPECT_EQ(q->sq_tail, 3);
	/* not running: nothing */
	qt_post(MRC_OP_SEND, 10, 0);
	q->cfg.running = 0;
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_STOP);
}

/* Every state of the step machine was reached by the cases above. */
/* The packet the environment builds for outgoing @psn of @q (two QPs). */
static void qt_wire(const struct mrc_req *q, const struct mrc_req_out *o,
		    struct mrc_pkt *p)
{
	const struct mrc_txd *d = &q->pkt[o->psn & (MRC_WND - 1)];
	const struct mrc_swqe *w;

	memset(p, 0, sizeof(*p));
	p->opcode = d->opcode;
	p->flags = d->flags;
	p->psn = o->psn;
	p->ppsn = o->ppsn;
	p->path_id = o->path;
	p->tsval = (u32)mk.now;
	p->payload_len = d->len;
	if (d->opcode == MRC_OP_READ_REQ) {
		w = mrc_req_swqe(q, d->idx);
		p->read.va = w->remote_addr;
		p->read.rkey = w->rkey;
		p->read.len = w->len;
	} else if (d->opcode == MRC_OP_WRITE) {
		w = mrc_req_swqe(q, d->idx);
		p->write.va = w->remote_addr;
		p->write.rkey = w->rkey;
		p->write.msg_len = w->len;
		p->write.offset = d->offset;
	} else if (d->opcode == MRC_OP_SEND) {
		w = mrc_req_swqe(q, d->idx);
		p->send.rmsn = w->msn;
		p->send.msg_len = w->len;
		p->send.offset = d->offset;
	} else if (d->opcode == MRC_OP_READ_RESP) {
		p->rresp.req_psn = d->req_psn;
		p->rresp.offset = d->offset;
		p->rresp.msg_len = d->msg_len;
	}
}

/*
 * Deliver the ACKs emitted since @from (by the responder engine of one
 * QP) to the completer of the other QP, @to.
 */
static void qt_deliver_acks(u32 from, struct mrc_req *to)
{
	u32 i;

	for (i = from; i < mk.nemit && i < MK_EMIT; i++)
		if (mk.emit[i].opcode == MRC_OP_ACK)
			mrc_comp_ack(to, &mk_e, &mk.emit[i].ack, false);
}

/*
 * ib_read_lat's clean path, A reads 2 bytes from B, every packet
 * delivered: the request and the response are the only packets until the
 * READ completes (IB's count). The response acknowledges the request (B
 * sends no ACK of its own), and A's ACK of the response is delayed, not
 * sent at once: it is the third packet, off the critical path.
 * protocol.rst "READ and atomics", "Implicit acknowledgement".
 */
MRC_TEST(req_read_costs_two_packets)
{
	struct mrc_req *qa, *qb;
	struct mrc_resp *ra, *rb;
	struct mrc_req_out o;
	struct mrc_swqe *w;
	struct mrc_pkt p;
	unsigned int ret;
	u32 pkts = 0, n0;
	u8 dummy = 0;

	MRC_ALLOC(qa);
	MRC_ALLOC(ra);
	MRC_ALLOC(qb);
	MRC_ALLOC(rb);
	/* A sends from PSN 100 and receives B's from 5000, and vice versa */
	qt_setup(qa, ra, 100);
	memset(qb, 0, sizeof(*qb));
	qb->swq = mk.swq;
	qb->nswq = MK_NSWQ;
	qb->swqe_size = MK_SWQE;
	qb->paths = qa->paths;
	qb->cfg = qa->cfg;
	qb->anchored = 1;
	qb->progress_us = mk.now;
	qb->heard_us = mk.now;
	mrc_sb_init(&qb->sb, 5000, 0, MRC_DUPTHRESH_DEFAULT);
	mrc_resp_reset(rb, &mk_e);
	mrc_resp_start(rb, &mk_e, 100, 16, 8);
	rb->cfg.max_dest_rd_atomic = 4;
	rb->cfg.qp_access = MRC_ACC_REMOTE_READ;
	rb->cfg.npaths = 2;
	ra->cfg.npaths = 2;
	mk.comp_q = qa;
	memcpy(mk.mem, "hi", 2);

	w = qt_post(MRC_OP_READ_REQ, 2, 0);
	w->remote_addr = MK_VA;
	w->rkey = MK_RKEY;
	w->signaled = 1;
	MRC_ASSERT_TRUE(mrc_req_next(qa, ra, &mk_e, &o) == MRC_REQ_PKT);
	qt_wire(qa, &o, &p);
	pkts++;					/* 1: the READ request */

	mk.now += 50;
	n0 = mk.nemit;
	ret = mrc_resp_rx(rb, &mk_e, &p, &dummy, false);
	MRC_EXPECT_TRUE(ret & MRC_RESP_TX);
	pkts += mk.nemit - n0;			/* B's ACK of it, if any */
	qt_deliver_acks(n0, qa);
	MRC_ASSERT_TRUE(mrc_req_next(qb, rb, &mk_e, &o) == MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 1);
	qt_wire(qb, &o, &p);
	pkts++;					/* the response */
	/* the response carries B's ACK: no ACK left to send */
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_ACK]);
	MRC_EXPECT_FALSE(mrc_rx_ack_pending(&rb->rx));
	MRC_EXPECT_EQ(p.flags & MRC_F_ACKREQ, 0);

	mk.now += 50;
	n0 = mk.nemit;
	ret = mrc_resp_rx(ra, &mk_e, &p, mk.mem, false);
	/* the READ completed, with the data, after two packets */
	MRC_EXPECT_EQ(mk.nscqe, 1);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(memcmp(mk.local, "hi", 2), 0);
	MRC_EXPECT_EQ(pkts, 2);
	/* the request is acknowledged (implicitly), with an RTT sample */
	MRC_EXPECT_EQ(mrc_sb_outstanding(&qa->sb), 0);
	MRC_EXPECT_EQ(mrc_rtt_srtt(&qa->paths.p[0].rtt) +
		      mrc_rtt_srtt(&qa->paths.p[1].rtt), 100);
	/*
	 * A's ACK of the response is the delayed one (version 2): A's next
	 * request carries it (req_read_pingpong_two_packets), else the
	 * timer sends it. Version 1 sent it at once: 3 packets in all.
	 */
	pkts += mk.nemit - n0;
	MRC_EXPECT_EQ(pkts, 2);
	MRC_EXPECT_TRUE(mrc_rx_ack_pending(&ra->rx));
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_ACK]);
	mrc_resp_ack_timer(ra, &mk_e);
	qt_deliver_acks(n0, qb);
	MRC_EXPECT_EQ(mrc_sb_outstanding(&qb->sb), 0);
	mk.comp_q = NULL;
}

/*
 * protocol.rst "ACK policy": before the first packet of a request the
 * peer's application sees (SEND*, WRITE_IMM) the pending ACK goes out --
 * the application may invalidate memory of the READ responses it
 * retires; not before a READ or a plain WRITE.
 */
MRC_TEST(req_ack_before_send)
{
	struct mrc_req_out o;
	struct mrc_resp *r;
	struct mrc_req *q;
	struct mrc_pkt p;
	u8 pay[4] = { 0 };

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 0);
	/* a response of the peer (for our READ, not awaited: mock) pending */
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_READ_RESP;
	p.flags = MRC_F_FIRST;
	p.psn = 5000;
	mrc_resp_rx(r, &mk_e, &p, pay, false);
	MRC_ASSERT_TRUE(mrc_rx_ack_pending(&r->rx));
	MRC_EXPECT_EQ(mk.nemit, 0);
	qt_post(MRC_OP_WRITE, 10, 0);
	qt_post(MRC_OP_READ_REQ, 10, 0);
	qt_post(MRC_OP_SEND_INV, 10, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(mk.nemit, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(qt_txd(o.psn)->opcode, MRC_OP_SEND_INV);
	/*
	 * Version 2: the SEND itself carries that ACK (cum_lo), applied
	 * before the SEND at the peer; no ACK of its own.
	 */
	MRC_EXPECT_EQ(mk.nemit, 0);
	qt_wire(q, &o, &p);
	mrc_resp_cum_fill(r, &p);
	MRC_EXPECT_EQ(p.flags & MRC_F_CUMACK, MRC_F_CUMACK);
	MRC_EXPECT_EQ(p.cum_lo, 5001);
	mrc_resp_cum_sent(r, &mk_e, &p);
	MRC_EXPECT_FALSE(mrc_rx_ack_pending(&r->rx));
	/* one it cannot carry (a hole: SACK news) goes out first */
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_READ_RESP;
	p.flags = MRC_F_FIRST;
	p.psn = 5002;
	mrc_resp_rx(r, &mk_e, &p, pay, false);
	MRC_ASSERT_TRUE(mrc_rx_ack_pending(&r->rx));
	MRC_EXPECT_EQ(mk.nemit, 0);
	qt_post(MRC_OP_SEND, 10, 0);
	MRC_EXPECT_EQ(mrc_req_next(q, r, &mk_e, &o), MRC_REQ_PKT);
	MRC_EXPECT_EQ(mk.nemit, 1);
	MRC_EXPECT_EQ(mk.emit[0].opcode, MRC_OP_ACK);
	MRC_EXPECT_EQ(mk.emit[0].ack.cum_psn, 5001);
	MRC_EXPECT_EQ(mk.emit[0].ack.sack[0], 2);	/* 5002 */
	MRC_EXPECT_FALSE(mrc_rx_ack_pending(&r->rx));
}

/* xorshift32: the deterministic schedule of the ping-pong below */
static u32 qt_rand(u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* What one READ of qt_read_once() saw. */
struct qt_read {
	u32 pto;		/* probe timeout armed with the request */
	u32 probes;		/* tail-loss probes sent (0, 1) */
	u32 probe_at;		/* after the request, us */
	u32 done_at;		/* READ complete, after the request, us */
	bool probe_ok;		/* the probe resent the request (TLP) */
	bool ok;		/* completed once, with the right bytes */
};

/*
 * One READ of 2 bytes by requester @q (the peer simulated): the request
 * crosses the network in @net/2, the responder answers it after @svc
 * (its service time: the response is the first thing that acknowledges
 * the request), the response takes @net/2 back. The request is lost if
 * @lose_req, the response if @lose_rsp. If the probe timer fires before
 * the response, the probe resends the request; the responder, which
 * holds the request already (unless it was lost), acknowledges the
 * duplicate at once with a DSACK; a probe that is the first copy to
 * arrive is answered like the original. A lost response is resent by the
 * responder's own probe, @rsp_pto after it.
 */
static void qt_read_once(struct mrc_req *q, struct mrc_resp *r, u32 net,
			 u32 svc, u32 i, bool lose_req, bool lose_rsp,
			 u32 rsp_pto, struct qt_read *res)
{
	u64 t0 = mk.now, tp = 0, tr, td = ~0ULL, t;
	u8 data[2] = { (u8)(i * 7 + 1), (u8)(i >> 3) };
	u32 nscqe = mk.nscqe, req_psn;
	struct mrc_ack_info a;
	struct mrc_req_out o;
	struct mrc_swqe *w;
	struct mrc_src src;
	struct mrc_pkt p;
	int k;

	memset(res, 0, sizeof(*res));
	memcpy(mk.mem, data, 2);
	w = qt_post(MRC_OP_READ_REQ, 2, 0);
	w->remote_addr = MK_VA;
	w->rkey = MK_RKEY;
	w->signaled = 1;
	if (mrc_req_next(q, r, &mk_e, &o) != MRC_REQ_PKT)
		return;
	req_psn = o.psn;
	mrc_req_arm_rto(q, &mk_e, false);
	res->pto = mk.rto_us;
	/* the response (first transmission), unless lost: then its probe */
	tr = t0 + net + svc + (lose_rsp ? rsp_pto : 0);
	if (lose_req || t0 + res->pto < tr) {
		mk.now = t0 + res->pto;
		mk.armed[MRC_TIMER_RTO] = false;	/* it fired: due */
		if (!mrc_req_rto_fired(q, &mk_e))
			return;
		mrc_req_timer(q, &mk_e);
		res->probe_ok = !mrc_req_retx(q, &mk_e, &o) &&
				o.psn == req_psn && o.cause == MRC_LOSS_TLP;
		mrc_req_arm_rto(q, &mk_e, false);
		res->probes = 1;
		res->probe_at = res->pto;
		tp = mk.now;
		if (lose_req)	/* the probe is the request the peer runs */
			tr = tp + net + svc;
		else		/* a duplicate: acknowledged at once */
			td = tp + net;
	}
	/* the two arrivals in time order */
	for (k = 0; k < 2; k++) {
		bool rsp = (k == 0) == (tr <= td);

		if (rsp) {
			mk.now = tr;
			memset(&p, 0, sizeof(p));
			p.opcode = MRC_OP_READ_RESP;
			p.flags = MRC_F_FIRST | MRC_F_LAST |
				  (lose_rsp ? MRC_F_RETX : 0);
			p.psn = 5000 + i;
			p.payload_len = 2;
			p.rresp.req_psn = req_psn;
			p.rresp.msg_len = 2;
			memset(&src, 0, sizeof(src));
			src.buf = mk.mem;
			mrc_comp_resp(q, &mk_e, &p, &src);
		} else if (td != ~0ULL) {
			mk.now = td;
			memset(&a, 0, sizeof(a));
			a.cum_psn = mrc_seq_gt(q->sb.una, req_psn + 1) ?
				    q->sb.una : req_psn + 1;
			a.syndrome = MRC_SYN_ACK;
			a.rwnd = MRC_WND;
			a.tsecr = (u32)tp;
			a.ts_path = o.path;
			a.dsack = 1;
			a.dsack_psn = req_psn;
			mrc_comp_ack(q, &mk_e, &a, false);
		}
	}
	res->done_at = (u32)(tr - t0);
	res->ok = mk.nscqe == nscqe + 1 &&
		  !mk.nerr && !q->failed &&
		  !memcmp(mk.local, data, 2) &&
		  !mrc_sb_outstanding(&q->sb) && !q->rd_atomic_out;
	t = td != ~0ULL && td > tr ? td : tr;
	mk.now = t + 20;	/* the application posts the next READ */
}

/*
 * ib_read_lat on a clean path whose responder takes a service time
 * comparable to the round trip, with jitter and a tail (a busy or
 * descheduled responder CPU): network RTT 300-400 us, service 150-300 us
 * and, for 15 % of the READs, up to 600 us more. Nothing is lost, so
 * every tail-loss probe is spurious: a probe costs a retransmitted
 * request and a duplicate ACK on both hosts. The probe timeout of a READ
 * request must cover its response time (protocol.rst "Probe timeout of a
 * READ/atomic request"): at most 1 % of the READs may be probed.
 */
MRC_TEST(req_read_pto_covers_response_time)
{
	u32 i, n = 2000, probes = 0, bad = 0, seed = 12345, net, svc;
	struct qt_read res;
	struct mrc_resp *r;
	struct mrc_req *q;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 100);
	q->cfg.max_rd_atomic = 16;
	mk.mr_valid = true;
	for (i = 0; i < n; i++) {
		net = 300 + qt_rand(&seed) % 101;
		svc = 150 + qt_rand(&seed) % 151;
		if (qt_rand(&seed) % 100 < 15)
			svc += qt_rand(&seed) % 601;
		qt_read_once(q, r, net, svc, i, false, false, 0, &res);
		probes += res.probes;
		bad += !res.ok + (res.probes && !res.probe_ok);
	}
	MRC_EXPECT_EQ(bad, 0);
	MRC_EXPECT_EQ(mk.nscqe, n);
	/* spurious probes: at most 1 % of the READs (prints the count) */
	MRC_EXPECT_EQ(probes > n / 100 ? probes : 0, 0);
}

/*
 * Loss recovery does not get slower than the bound of protocol.rst
 * "Probe timeout of a READ/atomic request": after a warm-up like the
 * case above, a lost READ request is resent by the probe at PTO_R =
 * max(PTO, min(max(2 SRTT_R, SRTT_R + 4 RTTVAR_R), RTO interval)) --
 * well before the RTO -- and the READ completes a response time later; a
 * lost response costs the requester one probe (its duplicate ACK gives
 * no response-time sample) and is resent by the responder's own probe.
 */
MRC_TEST(req_read_probe_repairs_loss_in_bound)
{
	u32 i, seed = 777, net, svc, pto_r, maxrt = 0, srtt8;
	struct mrc_req_out o;
	struct qt_read res;
	struct mrc_resp *r;
	struct mrc_req *q;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 100);
	mk.mr_valid = true;
	for (i = 0; i < 300; i++) {
		net = 300 + qt_rand(&seed) % 101;
		svc = 150 + qt_rand(&seed) % 151;
		if (qt_rand(&seed) % 100 < 15)
			svc += qt_rand(&seed) % 601;
		maxrt = max_t(u32, maxrt, net + svc);
		qt_read_once(q, r, net, svc, i, false, false, 0, &res);
		MRC_EXPECT_TRUE(res.ok);
	}
	pto_r = mrc_rtt_pto_resp(&q->rsp_rtt);
	MRC_EXPECT_TRUE(pto_r > 0);
	MRC_EXPECT_TRUE(pto_r < mrc_req_rto_interval(q));
	/* a lost request: probed at PTO_R, complete a response time later */
	qt_read_once(q, r, 350, 200, i++, true, false, 0, &res);
	MRC_EXPECT_TRUE(res.ok);
	MRC_EXPECT_TRUE(res.probe_ok);
	MRC_EXPECT_EQ(res.probe_at, res.pto);
	MRC_EXPECT_EQ(res.pto, max_t(u32, pto_r, MRC_TLP_MIN_US));
	MRC_EXPECT_TRUE(res.pto <= 2 * maxrt);
	MRC_EXPECT_EQ(res.done_at, res.pto + 350 + 200);
	/* a lost response: one probe, no sample from its duplicate's ACK */
	srtt8 = q->rsp_rtt.srtt8;
	qt_read_once(q, r, 350, 200, i++, false, true, 700, &res);
	MRC_EXPECT_TRUE(res.ok);
	MRC_EXPECT_TRUE(res.probe_ok);
	MRC_EXPECT_EQ(res.probe_at, res.pto);
	MRC_EXPECT_EQ(q->rsp_rtt.srtt8, srtt8);
	/* the next READ is timed as before */
	qt_read_once(q, r, 350, 200, i++, false, false, 0, &res);
	MRC_EXPECT_TRUE(res.ok);
	MRC_EXPECT_EQ(res.probes, 0);
	MRC_EXPECT_TRUE(q->rsp_rtt.srtt8 != srtt8);
	/*
	 * The responder side of the same QP: a READ response as the tail
	 * keeps the plain PTO (its repair is not slowed by PTO_R).
	 */
	qt_peer_read(r, 5000, 2);
	MRC_ASSERT_TRUE(mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 1);
	mrc_req_rto_stop(q);
	mrc_req_arm_rto(q, &mk_e, false);
	MRC_EXPECT_TRUE(q->tlp_armed);
	MRC_EXPECT_TRUE(mk.rto_tlp);
	MRC_EXPECT_EQ(mk.rto_us,
		      max_t(u32, mrc_rtt_tlp(&q->paths.p[0].rtt, true),
			    mrc_rtt_tlp(&q->paths.p[1].rtt, true)));
	MRC_EXPECT_TRUE(mk.rto_us < pto_r);
}

/*
 * Stop 14 (observe.sh's lossy ibv_rc_pingpong, whose server ended
 * RETRY_EXC on its last SEND): the READ response-time state of a QP does
 * not reach the probe of a SEND. After slow READs (PTO_R far above the
 * plain PTO, the watched-request state left as READs leave it), a SEND
 * tail -- several packets, then one -- is probed at the plain PTO, and its
 * loss recovery is the one of a QP that never ran a READ: one probe, then
 * RTOs, each charging one retry.
 */
MRC_TEST(req_send_tail_after_reads_keeps_plain_pto)
{
	u32 i, seed = 99, pto_r, plain;
	struct mrc_req_out o;
	struct qt_read res;
	struct mrc_resp *r;
	struct mrc_req *q;

	MRC_ALLOC(q);
	MRC_ALLOC(r);
	qt_setup(q, r, 100);
	mk.mr_valid = true;
	for (i = 0; i < 50; i++) {
		qt_read_once(q, r, 300, 2000 + qt_rand(&seed) % 1000, i,
			     false, false, 0, &res);
		MRC_EXPECT_TRUE(res.ok);
	}
	pto_r = min_t(u32, mrc_rtt_pto_resp(&q->rsp_rtt),
		      mrc_req_rto_interval(q));
	/* a multi-packet SEND as the tail */
	qt_post(MRC_OP_SEND, 3000, 0);
	for (i = 0; i < 3; i++)
		MRC_ASSERT_TRUE(mrc_req_next(q, r, &mk_e, &o) == MRC_REQ_PKT);
	plain = max_t(u32, mrc_rtt_tlp(&q->paths.p[0].rtt, false),
		      mrc_rtt_tlp(&q->paths.p[1].rtt, false));
	MRC_EXPECT_TRUE(plain < pto_r);
	mrc_req_arm_rto(q, &mk_e, true);
	MRC_EXPECT_TRUE(q->tlp_armed);
	MRC_EXPECT_EQ(mk.rto_us, plain);
	/* probe, then RTOs: one retry each */
	mk.now += plain;
	MRC_EXPECT_TRUE(mrc_req_rto_fired(q, &mk_e));
	mrc_req_timer(q, &mk_e);
	MRC_ASSERT_TRUE(mrc_req_retx(q, &mk_e, &o) == 0);
	MRC_EXPECT_EQ(o.cause, MRC_LOSS_TLP);
	MRC_EXPECT_EQ(q->retries, 0);
	mrc_req_arm_rto(q, &mk_e, true);
	MRC_EXPECT_FALSE(q->tlp_armed);
	MRC_EXPECT_EQ(mk.rto_us, mrc_req_rto_interval(q));
	mk.now += mk.rto_us;
	MRC_EXPECT_TRUE(mrc_req_rto_fired(q, &mk_e));
	mrc_req_timer(q, &mk_e);
	MRC_EXPECT_EQ(q->retries, 1);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_RTO], 1);
}

/* ------------------------------------------- two QPs, ping-pong (v2) */

/* B's send WQE ring (A's is the mock's). */
static u8 qt_swq_b[MK_NSWQ * MK_SWQE];

struct qt_side {
	struct mrc_req *q;
	struct mrc_resp *r;
	u32 posted;
};

/*
 * A (PSNs from 100, receives from 5000) and B (the other way round),
 * two paths each, every remote right; A's completer gets responses.
 */
static void qt_pair(struct qt_side *a, struct qt_side *b)
{
	qt_setup(a->q, a->r, 100);
	a->r->cfg.qp_access = MRC_ACC_REMOTE_WRITE | MRC_ACC_REMOTE_READ;
	a->r->cfg.npaths = 2;
	a->posted = 0;
	memset(b->q, 0, sizeof(*b->q));
	b->q->swq = qt_swq_b;
	b->q->nswq = MK_NSWQ;
	b->q->swqe_size = MK_SWQE;
	b->q->paths = a->q->paths;
	b->q->cfg = a->q->cfg;
	b->q->anchored = 1;
	b->q->progress_us = mk.now;
	b->q->heard_us = mk.now;
	mrc_sb_init(&b->q->sb, 5000, 0, MRC_DUPTHRESH_DEFAULT);
	mrc_resp_reset(b->r, &mk_e);
	mrc_resp_start(b->r, &mk_e, 100, 16, 8);
	b->r->cfg.max_dest_rd_atomic = 4;
	b->r->cfg.qp_access = MRC_ACC_REMOTE_WRITE | MRC_ACC_REMOTE_READ;
	b->r->cfg.npaths = 2;
	b->posted = 0;
}

/* qt_wire() with the cumulative ACK, as tp_build_psn() (version 2). */
static void qt_wire_cum(struct qt_side *s, const struct mrc_req_out *o,
			struct mrc_pkt *p)
{
	qt_wire(s->q, o, p);
	mrc_resp_cum_fill(s->r, p);
	mrc_resp_cum_sent(s->r, &mk_e, p);
}

/*
 * @s posts one signaled WQE (@op, 2 bytes at MK_VA + @off of the peer)
 * and its requester describes the packet, wired into @p as the
 * environment builds it (tp_build_psn). Returns the packets put on the
 * wire: the request and any ACK sent before it.
 */
static u32 qt_send(struct qt_side *s, u8 op, u32 off, struct mrc_pkt *p)
{
	struct mrc_req_out o;
	struct mrc_swqe *w;
	u32 n0 = mk.nemit;

	mk.q = s->q;
	mk.posted = s->posted;
	w = qt_post(op, 2, 0);
	s->posted = mk.posted;
	w->remote_addr = MK_VA + off;
	w->rkey = MK_RKEY;
	w->signaled = 1;
	if (mrc_req_next(s->q, s->r, &mk_e, &o) != MRC_REQ_PKT)
		return 1000;	/* nothing to send: fails the count */
	qt_wire_cum(s, &o, p);
	return 1 + mk.nemit - n0;
}

/* @s receives @p (payload @pay): packets it sends in answer, at once. */
static u32 qt_recv(struct qt_side *s, struct mrc_pkt *p, const void *pay)
{
	u32 n0 = mk.nemit;

	mk.now += 50;
	mk.q = s->q;
	mk.posted = s->posted;
	mk.comp_q = s->q;
	mrc_resp_rx(s->r, &mk_e, p, pay, false);
	return mk.nemit - n0;
}

/*
 * ib_write_lat's clean path: A WRITEs 2 bytes to B, B's application sees
 * them and WRITEs 2 bytes back, and so on. Each WRITE is acknowledged by
 * the reply: two packets per exchange, no ACK (protocol.rst "Cumulative
 * ACK on reverse data"). Version 1 sent B's ACK before B's reply (and
 * A's before A's next WRITE): four.
 */
MRC_TEST(req_write_pingpong_two_packets)
{
	struct qt_side a, b;
	struct mrc_pkt p;
	u32 pkts = 0, i;

	MRC_ALLOC(a.q);
	MRC_ALLOC(a.r);
	MRC_ALLOC(b.q);
	MRC_ALLOC(b.r);
	qt_pair(&a, &b);
	for (i = 0; i < 4; i++) {
		pkts += qt_send(&a, MRC_OP_WRITE, 0, &p);	/* A's WRITE */
		pkts += qt_recv(&b, &p, "ab");
		MRC_EXPECT_EQ(memcmp(mk.mem, "ab", 2), 0);
		/* B's reply; its application saw A's bytes */
		pkts += qt_send(&b, MRC_OP_WRITE, 8, &p);
		/* A's WRITE is acknowledged by the reply: complete */
		pkts += qt_recv(&a, &p, "cd");
		MRC_EXPECT_EQ(memcmp(mk.mem + 8, "cd", 2), 0);
		MRC_EXPECT_EQ(mrc_sb_outstanding(&a.q->sb), 0);
		/* A's completion and B's previous one, in order */
		MRC_EXPECT_EQ(mk.nscqe, 2 * i + 1);
	}
	MRC_EXPECT_EQ(pkts, 4 * 2);	/* two WRITEs per exchange */
	/* the ACKs are pending, not sent; their timers would send them */
	MRC_EXPECT_EQ(mk.nemit, 0);
	MRC_EXPECT_EQ(mrc_sb_outstanding(&b.q->sb), 1);
	MRC_EXPECT_TRUE(mrc_rx_ack_pending(&a.r->rx));
	mk.comp_q = NULL;
}

/*
 * ib_read_lat's clean path: READ after READ. The response acknowledges
 * its request, and the requester's ACK of the response rides on the
 * next request: two packets per READ (IB's count). Version 1 sent that
 * ACK at once: three.
 */
MRC_TEST(req_read_pingpong_two_packets)
{
	struct qt_side a, b;
	struct mrc_req_out o;
	struct mrc_pkt p;
	u32 pkts = 0, i;

	MRC_ALLOC(a.q);
	MRC_ALLOC(a.r);
	MRC_ALLOC(b.q);
	MRC_ALLOC(b.r);
	qt_pair(&a, &b);
	memcpy(mk.mem, "hi", 2);
	for (i = 0; i < 4; i++) {
		pkts += qt_send(&a, MRC_OP_READ_REQ, 0, &p);
		/* the request retired B's previous response */
		MRC_EXPECT_EQ(qt_recv(&b, &p, ""), 0);
		MRC_EXPECT_EQ(mrc_sb_outstanding(&b.q->sb), 0);
		mk.q = b.q;
		MRC_ASSERT_TRUE(mrc_req_next(b.q, b.r, &mk_e, &o) ==
				MRC_REQ_PKT);
		MRC_EXPECT_EQ(o.resp, 1);
		qt_wire_cum(&b, &o, &p);
		pkts++;
		memset(mk.local, 0, 2);
		pkts += qt_recv(&a, &p, mk.mem);
		MRC_EXPECT_EQ(mk.nscqe, i + 1);
		MRC_EXPECT_EQ(memcmp(mk.local, "hi", 2), 0);
		MRC_EXPECT_EQ(mrc_sb_outstanding(&a.q->sb), 0);
	}
	MRC_EXPECT_EQ(pkts, 2 * 4);
	MRC_EXPECT_EQ(mk.nemit, 0);
	mk.comp_q = NULL;
}

/*
 * A READ the responder answers at once, in the pass that follows its
 * arrival: the response carries the ACK, so the delayed-ACK timer is not
 * armed just to be cancelled microseconds later (each arm or cancel of
 * the earliest timer reprograms the CPU's clock event device: a
 * TSC-deadline write, a VM exit in a guest; readlat, s16).
 */
MRC_TEST(req_read_answered_at_once_no_ack_timer)
{
	struct qt_side a, b;
	struct mrc_req_out o;
	struct mrc_pkt p;
	u32 ops0, i;

	MRC_ALLOC(a.q);
	MRC_ALLOC(a.r);
	MRC_ALLOC(b.q);
	MRC_ALLOC(b.r);
	qt_pair(&a, &b);
	memcpy(mk.mem, "hi", 2);
	for (i = 0; i < 3; i++) {
		MRC_EXPECT_EQ(qt_send(&a, MRC_OP_READ_REQ, 0, &p), 1);
		ops0 = mk.timer_ops[MRC_TIMER_ACK];
		MRC_EXPECT_EQ(qt_recv(&b, &p, ""), 0);
		mk.q = b.q;
		MRC_ASSERT_TRUE(mrc_req_next(b.q, b.r, &mk_e, &o) ==
				MRC_REQ_PKT);
		MRC_EXPECT_EQ(o.resp, 1);
		qt_wire_cum(&b, &o, &p);
		MRC_EXPECT_EQ(mrc_req_next(b.q, b.r, &mk_e, &o), MRC_REQ_STOP);
		mrc_resp_ack_settle(b.r, &mk_e);	/* the end of B's pass */
		MRC_EXPECT_EQ(mk.timer_ops[MRC_TIMER_ACK] - ops0, 0);
		MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_ACK]);
		MRC_EXPECT_FALSE(mrc_rx_ack_pending(&b.r->rx));
		qt_recv(&a, &p, mk.mem);
		MRC_EXPECT_EQ(mk.nscqe, i + 1);
	}
	MRC_EXPECT_EQ(mk.nemit, 0);
	mk.comp_q = NULL;
}

/*
 * The same READ when the pass that follows it ends before the response
 * (B is in the middle of a WRITE of its own: responses go between
 * messages only): the ACK it owes is not lost, the end of the pass arms
 * the delayed-ACK timer, which sends it.
 */
MRC_TEST(req_read_response_later_acked_by_timer)
{
	struct qt_side a, b;
	struct mrc_req_out o;
	struct mrc_swqe *w;
	struct mrc_pkt p;
	u32 n0;

	MRC_ALLOC(a.q);
	MRC_ALLOC(a.r);
	MRC_ALLOC(b.q);
	MRC_ALLOC(b.r);
	qt_pair(&a, &b);
	/* B's WRITE of three segments, the first one sent */
	mk.q = b.q;
	mk.posted = b.posted;
	w = qt_post(MRC_OP_WRITE, 3 * b.q->cfg.mtu, 0);
	b.posted = mk.posted;
	w->remote_addr = MK_VA;
	w->rkey = MK_RKEY;
	MRC_ASSERT_TRUE(mrc_req_next(b.q, b.r, &mk_e, &o) == MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 0);
	MRC_EXPECT_EQ(qt_send(&a, MRC_OP_READ_REQ, 0, &p), 1);
	MRC_EXPECT_EQ(qt_recv(&b, &p, ""), 0);
	/* B's pass: the WRITE's next segment, then the pass ends */
	mk.q = b.q;
	MRC_ASSERT_TRUE(mrc_req_next(b.q, b.r, &mk_e, &o) == MRC_REQ_PKT);
	MRC_EXPECT_EQ(o.resp, 0);
	mrc_resp_ack_settle(b.r, &mk_e);
	MRC_EXPECT_TRUE(mrc_rx_ack_pending(&b.r->rx));
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_ACK]);
	MRC_EXPECT_EQ(mk.timer_us[MRC_TIMER_ACK], MRC_ACK_DELAY_US);
	n0 = mk.nemit;
	mrc_resp_ack_timer(b.r, &mk_e);
	MRC_ASSERT_TRUE(mk.nemit - n0 == 1);
	MRC_EXPECT_EQ(mk.emit[n0].opcode, MRC_OP_ACK);
	MRC_EXPECT_EQ(mk.emit[n0].ack.cum_psn, p.psn + 1);
	mk.comp_q = NULL;
}

/*
 * Clock-event touches of a ping-pong (readlat, s17). Each hrtimer start,
 * and each cancel of an armed one, takes the hrtimer base lock and
 * reprograms the CPU's clock event device when the timer is or becomes
 * the earliest one -- a TSC-deadline MSR write on bare metal, a VM exit
 * in a guest; rxe's READ costs none (its retransmission timer is "kicked
 * down the road": never cancelled per packet). The mock counts the arms
 * and the cancels of an armed timer of both QPs (mk.q_b).
 */
static u32 qt_fires, qt_rearms;
/* the first due expiry of qt_due_q's retransmission timer */
static const struct mrc_req *qt_due_q;
static u64 qt_due_at;

static u32 qt_touches(void)
{
	u32 i, n = qt_fires - qt_rearms;

	for (i = 0; i < MRC_TIMER_MAX; i++)
		n += mk.timer_ops[i] + mk.timer_ops_b[i];
	return n;
}

/*
 * An expiry that arms its timer again costs one programming of the clock
 * event device, not two: the kernel programs it once, after the expiry's
 * callbacks (a soft hrtimer started from its own callback does not);
 * qt_touches() counts the expiry only.
 */

/* @s's timer @t fired (the mock's own state: mk.q chooses the bank). */
static void qt_fire(struct qt_side *s, u8 t)
{
	u32 *us, *ops, ops0;

	mk.q = s->q;
	mk.posted = s->posted;
	mk.comp_q = s->q;
	mk_tm(t, &us, &ops);
	ops0 = *ops;
	qt_fires++;
	if (t == MRC_TIMER_ACK)
		mrc_resp_ack_timer(s->r, &mk_e);
	else if (t == MRC_TIMER_RTO && mrc_req_rto_fired(s->q, &mk_e)) {
		if (s->q == qt_due_q && !qt_due_at)
			qt_due_at = mk.now;
		mrc_req_timer(s->q, &mk_e);
	}
	if (*ops != ops0)
		qt_rearms++;
}

/*
 * The clock moves on by @us; the timers of A (the mock's) and B (mk.q_b)
 * that expire on the way fire, in time order. A firing counts as a
 * clock-event touch too (qt_fires): the expiry's interrupt, after which
 * the device is programmed for the next timer.
 */
static void qt_advance(struct qt_side *a, struct qt_side *b, u32 us)
{
	u64 end = mk.now + us, when;
	struct qt_side *s;
	int side, t, k;

	for (;;) {
		side = -1;
		t = 0;
		when = end + 1;
		for (k = 0; k < 2 * MRC_TIMER_MAX; k++) {
			bool armed = k < MRC_TIMER_MAX ? mk.armed[k] :
				     mk.armed_b[k - MRC_TIMER_MAX];
			u64 at = k < MRC_TIMER_MAX ? mk.timer_at[k] :
				 mk.timer_at_b[k - MRC_TIMER_MAX];

			if (armed && at < when) {
				when = at;
				side = k >= MRC_TIMER_MAX;
				t = k % MRC_TIMER_MAX;
			}
		}
		if (side < 0)
			break;
		if (when > mk.now)
			mk.now = when;
		s = side ? b : a;
		if (side)
			mk.armed_b[t] = false;
		else
			mk.armed[t] = false;
		qt_fire(s, (u8)t);
	}
	mk.now = end;
}

/*
 * A clean ping-pong of @n exchanges: no error (bit 0), no timeout or probe
 * (bit 1); the only packets besides the two per exchange are the ACKs
 * that end a run of MRC_CUMACK_MAX carried ones (delayed ACKs, bit 2).
 */
static u32 qt_clean(struct qt_side *a, struct qt_side *b, u32 n)
{
	u32 i, bad = 0;

	if (mk.nerr)
		bad |= 1;
	if (mk.cnt[MRC_CNT_RTO] || a->q->tlp_done || b->q->tlp_done ||
	    a->q->retries || b->q->retries)
		bad |= 2;
	if (mk.nemit > 2 * (n / MRC_CUMACK_MAX + 1))
		bad |= 4;
	for (i = 0; i < mk.nemit && i < MK_EMIT; i++)
		if (mk.emit[i].opcode != MRC_OP_ACK)
			bad |= 4;
	return bad;
}

/*
 * Two QPs timed as the kernel's timestamps time them: round trips of
 * @rtt us on every path (the probe timeouts then follow protocol.rst's
 * formulas, not the initial RTO), B's timers its own.
 */
static void qt_pair_rtt(struct qt_side *a, struct qt_side *b, u32 rtt)
{
	u32 i, k;

	for (i = 0; i < a->q->paths.n; i++)
		for (k = 0; k < 8; k++) {
			mrc_rtt_sample(&a->q->paths.p[i].rtt, rtt);
			mrc_rtt_sample(&b->q->paths.p[i].rtt, rtt);
		}
	mk.q_b = b->q;
	qt_fires = 0;
	qt_rearms = 0;
}

/* @s's application posts one signaled WQE, 2 bytes at MK_VA + @off. */
static void qt_post_side(struct qt_side *s, u8 op, u32 off)
{
	struct mrc_swqe *w;

	mk.q = s->q;
	mk.posted = s->posted;
	w = qt_post(op, 2, 0);
	s->posted = mk.posted;
	w->remote_addr = MK_VA + off;
	w->rkey = MK_RKEY;
	w->signaled = 1;
}

/*
 * A requester pass of @s, as tp_run() runs it after a doorbell or a
 * receive: new packets (the last one wired into @p), the RTO for what is
 * outstanding, the ACK a response was to carry. Returns the packets.
 */
static u32 qt_pass(struct qt_side *s, struct mrc_pkt *p)
{
	struct mrc_req_out o;
	u32 n = 0;
	int step;

	mk.q = s->q;
	mk.posted = s->posted;
	s->q->want_tx = 0;
	while ((step = mrc_req_next(s->q, s->r, &mk_e, &o)) != MRC_REQ_STOP) {
		if (step != MRC_REQ_PKT)
			continue;
		qt_wire_cum(s, &o, p);
		n++;
	}
	mrc_req_arm_rto(s->q, &mk_e, false);
	mrc_resp_ack_settle(s->r, &mk_e);
	return n;
}

/* @s receives @p, as rx.c: the pass that follows if it wants one. */
static u32 qt_rx(struct qt_side *s, struct mrc_pkt *p, const void *pay)
{
	bool rsp;

	mk.q = s->q;
	mk.posted = s->posted;
	mk.comp_q = s->q;
	rsp = mrc_resp_rx(s->r, &mk_e, p, pay, false) == MRC_RESP_TX;
	return rsp || s->q->want_tx ? qt_pass(s, p) : 0;
}

/*
 * ib_read_lat's clean path, as the kernel runs it (the passes of tp_run,
 * 50 us a hop): at most 3 clock-event touches per READ, both ends. Main
 * made 9 (A: the ACK timer cancelled and the probe timer armed at the
 * post, the response-wait RTO armed by the response and cancelled by the
 * pass after it, the delayed ACK armed; B: its response's probe timer
 * cancelled by the request, the delayed ACK armed and cancelled around
 * the response, the probe timer armed again).
 */
MRC_TEST(req_read_pingpong_timer_touches)
{
	u32 i, n = 200, warm = 8, t0 = 0, touches;
	struct qt_side a, b;
	struct mrc_pkt p;

	MRC_ALLOC(a.q);
	MRC_ALLOC(a.r);
	MRC_ALLOC(b.q);
	MRC_ALLOC(b.r);
	qt_pair(&a, &b);
	qt_pair_rtt(&a, &b, 100);
	memcpy(mk.mem, "hi", 2);
	for (i = 0; i < warm + n; i++) {
		if (i == warm)
			t0 = qt_touches();
		qt_post_side(&a, MRC_OP_READ_REQ, 0);
		MRC_ASSERT_TRUE(qt_pass(&a, &p) == 1);
		qt_advance(&a, &b, 50);
		MRC_ASSERT_TRUE(qt_rx(&b, &p, "") == 1);	/* the response */
		qt_advance(&a, &b, 50);
		memset(mk.local, 0, 2);
		MRC_EXPECT_EQ(qt_rx(&a, &p, mk.mem), 0);
		MRC_ASSERT_TRUE(mk.nscqe == i + 1);
		MRC_EXPECT_EQ(memcmp(mk.local, "hi", 2), 0);
		qt_advance(&a, &b, 2);	/* the application's turnaround */
	}
	touches = qt_touches() - t0;
	MRC_EXPECT_EQ(qt_clean(&a, &b, warm + n), 0);
	MRC_EXPECT_EQ(touches > 3 * n ? touches : 0, 0);
	mk.comp_q = NULL;
	mk.q_b = NULL;
}

/*
 * The lazy timer on the READ ping-pong when a response is lost: the
 * hrtimer A left armed for the previous READ's probe fires early and is
 * armed again; A's probe fires exactly when it is due (the deadline its
 * pass set), not later, and once.
 */
MRC_TEST(req_read_pingpong_lost_response_probe_due)
{
	u32 i, warm = 8, fires0;
	struct qt_side a, b;
	struct mrc_pkt p;
	u64 due = 0;

	MRC_ALLOC(a.q);
	MRC_ALLOC(a.r);
	MRC_ALLOC(b.q);
	MRC_ALLOC(b.r);
	qt_pair(&a, &b);
	qt_pair_rtt(&a, &b, 100);
	memcpy(mk.mem, "hi", 2);
	for (i = 0; i < warm + 20; i++) {
		qt_post_side(&a, MRC_OP_READ_REQ, 0);
		MRC_ASSERT_TRUE(qt_pass(&a, &p) == 1);
		MRC_ASSERT_TRUE(mrc_req_rto_pending(a.q));
		/*
		 * the READ whose response is lost: the first one after the
		 * warm-up whose probe is due later than the hrtimer left
		 * armed for an earlier READ
		 */
		if (i >= warm && mk.armed[MRC_TIMER_RTO] &&
		    mk.timer_at[MRC_TIMER_RTO] < a.q->rto_due) {
			due = a.q->rto_due;
			break;
		}
		qt_advance(&a, &b, 50);
		MRC_ASSERT_TRUE(qt_rx(&b, &p, "") == 1);
		qt_advance(&a, &b, 50);
		MRC_EXPECT_EQ(qt_rx(&a, &p, mk.mem), 0);
		MRC_ASSERT_TRUE(mk.nscqe == i + 1);
		qt_advance(&a, &b, 2);
	}
	MRC_ASSERT_TRUE(due != 0);
	MRC_EXPECT_EQ(qt_clean(&a, &b, i), 0);
	qt_due_q = a.q;
	qt_due_at = 0;
	fires0 = qt_fires;
	qt_advance(&a, &b, 50);
	MRC_ASSERT_TRUE(qt_rx(&b, &p, "") == 1);	/* lost */
	qt_advance(&a, &b, (u32)(due - mk.now) + 1000);
	/* fired early and armed again, then due exactly on time */
	MRC_EXPECT_TRUE(qt_fires - fires0 >= 2);
	MRC_EXPECT_EQ(qt_due_at, due);
	MRC_EXPECT_TRUE(a.q->tlp_done || a.q->retries || a.q->probe_due);
	qt_due_q = NULL;
	mk.comp_q = NULL;
	mk.q_b = NULL;
}

/*
 * ib_write_lat's clean path the same way: at most 5 clock-event touches
 * per round trip (two WRITEs), both ends. Main made 8: on each side the
 * ACK timer cancelled and the probe timer armed at the post, the probe
 * timer cancelled and the delayed ACK armed by the peer's WRITE.
 */
MRC_TEST(req_write_pingpong_timer_touches)
{
	u32 i, n = 200, warm = 8, t0 = 0, touches;
	struct qt_side a, b;
	struct mrc_pkt p;

	MRC_ALLOC(a.q);
	MRC_ALLOC(a.r);
	MRC_ALLOC(b.q);
	MRC_ALLOC(b.r);
	qt_pair(&a, &b);
	qt_pair_rtt(&a, &b, 100);
	for (i = 0; i < warm + n; i++) {
		if (i == warm)
			t0 = qt_touches();
		qt_post_side(&a, MRC_OP_WRITE, 0);
		MRC_ASSERT_TRUE(qt_pass(&a, &p) == 1);
		qt_advance(&a, &b, 50);
		MRC_EXPECT_EQ(qt_rx(&b, &p, "ab"), 0);
		qt_advance(&a, &b, 2);
		qt_post_side(&b, MRC_OP_WRITE, 8);
		MRC_ASSERT_TRUE(qt_pass(&b, &p) == 1);
		qt_advance(&a, &b, 50);
		MRC_EXPECT_EQ(qt_rx(&a, &p, "cd"), 0);
		MRC_EXPECT_EQ(mrc_sb_outstanding(&a.q->sb), 0);
		MRC_ASSERT_TRUE(mk.nscqe == 2 * i + 1);
		qt_advance(&a, &b, 2);
	}
	touches = qt_touches() - t0;
	MRC_EXPECT_EQ(qt_clean(&a, &b, warm + n), 0);
	MRC_EXPECT_EQ(touches > 5 * n ? touches : 0, 0);
	mk.comp_q = NULL;
	mk.q_b = NULL;
}

/*
 * The cumulative ACK on a packet completes a WQE that failed locally:
 * the QP goes to ERR, and the packet that carried it is not placed
 * (nothing is placed after the QP errored).
 */
MRC_TEST(req_cum_lo_failing_qp_drops_packet)
{
	struct qt_side a, b;
	struct mrc_pkt p;

	MRC_ALLOC(a.q);
	MRC_ALLOC(a.r);
	MRC_ALLOC(b.q);
	MRC_ALLOC(b.r);
	qt_pair(&a, &b);
	MRC_EXPECT_EQ(qt_send(&a, MRC_OP_WRITE, 0, &p), 1);
	MRC_EXPECT_EQ(qt_recv(&b, &p, "ab"), 0);
	/* A's WQE turns out bad (e.g. its MR went away before completion) */
	mrc_req_swqe(a.q, 0)->status = MRC_WC_LOC_PROT_ERR;
	MRC_EXPECT_EQ(qt_send(&b, MRC_OP_WRITE, 8, &p), 1);
	MRC_EXPECT_EQ(p.flags & MRC_F_CUMACK, MRC_F_CUMACK);
	qt_recv(&a, &p, "cd");
	MRC_EXPECT_TRUE(a.q->failed);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.nscqe, 1);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_LOC_PROT_ERR);
	/* B's WRITE was not placed nor received */
	MRC_EXPECT_EQ(memcmp(mk.mem + 8, "cd", 2) != 0, 1);
	MRC_EXPECT_EQ(mrc_rx_check(&a.r->rx, p.psn), MRC_RX_NEW);
	mk.comp_q = NULL;
}

/*
 * fio's rdma engine, verb=send: A SENDs, B's application counts the
 * messages and, after the last one, moves its QP to ERR (rdma_disconnect)
 * or destroys it -- sooner than the delayed-ACK timer fires. The ACK of a
 * message whose receive completion B's application has seen must still
 * reach A: the QP sends its pending ACK when it leaves RTS (protocol.rst
 * "ACK policy"). Without it A resends to a QP that no longer answers
 * until RETRY_EXC_ERR (consumers-quick, stop 13), where version 1 had
 * acknowledged the LAST packet at once.
 */
MRC_TEST(req_send_acked_when_receiver_leaves)
{
	struct qt_side a, b;
	struct mrc_pkt p;
	u32 n0;

	MRC_ALLOC(a.q);
	MRC_ALLOC(a.r);
	MRC_ALLOC(b.q);
	MRC_ALLOC(b.r);
	qt_pair(&a, &b);
	mk.rq_wr_id[0] = 0x77;
	mk.rq_len[0] = 64;
	mk.rq_posted = 1;
	MRC_EXPECT_EQ(qt_send(&a, MRC_OP_SEND, 0, &p), 1);
	MRC_EXPECT_EQ(qt_recv(&b, &p, "ab"), 0);	/* the ACK is delayed */
	MRC_ASSERT_TRUE(mk.nrcqe == 1);			/* B's app has it */
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0x77);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_SUCCESS);
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_ACK]);
	/* B's application: QP to ERR, as the kernel does it */
	n0 = mk.nemit;
	mrc_resp_leave(b.r, &mk_e);
	mrc_resp_flush(b.r, &mk_e, 0);
	MRC_EXPECT_FALSE(mrc_resp_ready(b.r));
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_ACK]);
	MRC_EXPECT_EQ(mk.nemit - n0, 1);
	MRC_EXPECT_EQ(mk.emit[n0].opcode, MRC_OP_ACK);
	MRC_EXPECT_EQ(mk.emit[n0].ack.cum_psn, 101);
	/* A: acknowledged, its SEND completes successfully */
	mk.q = a.q;
	mk.comp_q = NULL;
	qt_deliver_acks(n0, a.q);
	mrc_comp_complete(a.q, &mk_e);
	MRC_EXPECT_EQ(mrc_sb_outstanding(&a.q->sb), 0);
	MRC_ASSERT_TRUE(mk.nscqe == 1);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_SUCCESS);
	/* leaving again (RESET, destroy) sends nothing more */
	mrc_resp_leave(b.r, &mk_e);
	MRC_EXPECT_EQ(mk.nemit - n0, 1);
	/* nothing pending: leaving sends nothing */
	qt_pair(&a, &b);
	mrc_resp_leave(b.r, &mk_e);
	MRC_EXPECT_EQ(mk.nemit, 0);
	/* a UC QP never acknowledges */
	qt_pair(&a, &b);
	b.r->cfg.uc = 1;
	b.r->rx.unacked = 1;
	mrc_resp_leave(b.r, &mk_e);
	MRC_EXPECT_EQ(mk.nemit, 0);
}

/*
 * A packet that carries the cumulative ACK (and so cancelled its sender's
 * pending ACK) but that the receiver RNR-NAKs -- a SEND with no receive
 * posted, fio's ping-pong pattern -- still delivers that ACK: cum_lo is
 * applied when the packet is dispatched, before the receive WQE is
 * taken. (Stop 13 suspected the opposite for the fio send failure.)
 */
MRC_TEST(req_cum_lo_applied_on_rnr_naked_send)
{
	struct qt_side a, b;
	struct mrc_pkt p;
	u32 n0;

	MRC_ALLOC(a.q);
	MRC_ALLOC(a.r);
	MRC_ALLOC(b.q);
	MRC_ALLOC(b.r);
	qt_pair(&a, &b);
	MRC_EXPECT_EQ(qt_send(&a, MRC_OP_WRITE, 0, &p), 1);
	MRC_EXPECT_EQ(qt_recv(&b, &p, "ab"), 0);
	MRC_ASSERT_TRUE(mrc_rx_ack_pending(&b.r->rx));
	/* B's SEND carries the ACK of A's WRITE: B's pending ACK is gone */
	MRC_EXPECT_EQ(qt_send(&b, MRC_OP_SEND, 0, &p), 1);
	MRC_EXPECT_EQ(p.flags & MRC_F_CUMACK, MRC_F_CUMACK);
	MRC_EXPECT_FALSE(mrc_rx_ack_pending(&b.r->rx));
	/* A has no receive posted: RNR NAK, and A's WRITE is acknowledged */
	n0 = mk.nemit;
	qt_recv(&a, &p, "cd");
	MRC_ASSERT_TRUE(mk.nemit - n0 == 1);
	MRC_EXPECT_EQ(mk.emit[n0].ack.syndrome, MRC_SYN_RNR);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	MRC_EXPECT_EQ(mrc_sb_outstanding(&a.q->sb), 0);
	MRC_EXPECT_EQ(mk.nscqe, 1);
	MRC_EXPECT_EQ(mk.scqe_status[0], MRC_WC_SUCCESS);
	mk.comp_q = NULL;
}

MRC_TEST(req_states_covered)
{
	u32 i;

	for (i = 0; i < MRC_REQS_NSTATES; i++)
		MRC_EXPECT_EQ(100 * i + mk.seen[MRC_ENG_REQ][i], 100 * i + 1);
	MRC_EXPECT_TRUE(strcmp(mrc_req_state_name(MRC_REQS_UD), "ud") == 0);
}

MRC_SUITE(requester,
	  MRC_CASE(req_segments_in_order),
	  MRC_CASE(req_responses_between_messages),
	  MRC_CASE(req_responds_while_error_pending),
	  MRC_CASE(req_responds_during_rnr_wait),
	  MRC_CASE(req_rnr_wait_finishes_started_message),
	  MRC_CASE(req_cuts_partial_message_on_stop_new),
	  MRC_CASE(req_rnr_switch_resends_in_new_epoch),
	  MRC_CASE(req_sqd_finishes_started_message_only),
	  MRC_CASE(req_resp_gone_probes_then_fails),
	  MRC_CASE(req_gating_error_local_ud),
	  MRC_CASE(req_failed_local_op_stops_new),
	  MRC_CASE(req_failed_read_not_counted),
	  MRC_CASE(req_tlp_skips_failed_wqe),
	  MRC_CASE(req_ud_failed_datagram_stops_new),
	  MRC_CASE(req_retx_and_timer),
	  MRC_CASE(req_retx_keeps_segment_bounds),
	  MRC_CASE(req_seg_size_and_address_change),
	  MRC_CASE(req_idle_qp_first_request_gets_full_retry_time),
	  MRC_CASE(req_uc_no_window_completes_when_sent),
	  MRC_CASE(req_read_costs_two_packets),
	  MRC_CASE(req_ack_before_send),
	  MRC_CASE(req_read_pto_covers_response_time),
	  MRC_CASE(req_read_probe_repairs_loss_in_bound),
	  MRC_CASE(req_send_tail_after_reads_keeps_plain_pto),
	  MRC_CASE(req_write_pingpong_two_packets),
	  MRC_CASE(req_read_pingpong_two_packets),
	  MRC_CASE(req_read_answered_at_once_no_ack_timer),
	  MRC_CASE(req_read_response_later_acked_by_timer),
	  MRC_CASE(req_read_pingpong_timer_touches),
	  MRC_CASE(req_read_pingpong_lost_response_probe_due),
	  MRC_CASE(req_write_pingpong_timer_touches),
	  MRC_CASE(req_cum_lo_failing_qp_drops_packet),
	  MRC_CASE(req_send_acked_when_receiver_leaves),
	  MRC_CASE(req_cum_lo_applied_on_rnr_naked_send),
	  MRC_CASE(req_states_covered));
