// SPDX-License-Identifier: GPL-2.0
/*
 * The responder engine (core/responder.c) driven through a mock
 * environment: packet sequences in, callbacks observed -- memory bytes,
 * receive completions and their order, ACKs/NAKs, held packets, QP errors,
 * READ/atomic execution order, flush.
 */
#include "mrc_test.h"
#include "mock_env.h"
#include "seq.h"


/* A fresh environment and a READY responder at PSN @isn. */
static void rt_setup(struct mrc_resp *r, u32 isn)
{
	mock_reset(1000);
	mrc_resp_reset(r, &mk_e);
	mrc_resp_start(r, &mk_e, isn, 16, 8);
	r->cfg.dest_qpn = 7;
	r->cfg.max_dest_rd_atomic = 4;
	r->cfg.npaths = 4;
	r->cfg.qp_access = mk.mr_access;
	r->cfg.min_rnr_timer = 12;
}

static void rt_post_recv(u64 wr_id, u32 len)
{
	mk.rq_wr_id[mk.rq_posted % MK_RQ] = wr_id;
	mk.rq_len[mk.rq_posted % MK_RQ] = len;
	mk.rq_bad[mk.rq_posted % MK_RQ] = false;
	mk.rq_copy_err[mk.rq_posted % MK_RQ] = MRC_COPY_OK;
	mk.rq_posted++;
}

/*
 * A receive WQE whose scatter list refuses the payload: rq_copy answers
 * @err (MRC_COPY_PROT: a bad lkey, an MR without LOCAL_WRITE, a range
 * beyond its MR), a local error of the responder.
 */
static void rt_post_recv_err(u64 wr_id, u32 len, u8 err)
{
	rt_post_recv(wr_id, len);
	mk.rq_copy_err[(mk.rq_posted - 1) % MK_RQ] = err;
}

static void rt_send(struct mrc_pkt *p, u32 psn, u32 msn, u32 msg_len,
		    u32 off, u16 len, u8 flags)
{
	memset(p, 0, sizeof(*p));
	p->opcode = MRC_OP_SEND;
	p->flags = flags;
	p->psn = psn;
	p->payload_len = len;
	p->send.rmsn = msn;
	p->send.msg_len = msg_len;
	p->send.offset = off;
}

static void rt_write(struct mrc_pkt *p, u32 psn, u64 va, u32 msg_len,
		     u32 off, u16 len, u8 flags)
{
	memset(p, 0, sizeof(*p));
	p->opcode = MRC_OP_WRITE;
	p->flags = flags;
	p->psn = psn;
	p->payload_len = len;
	p->write.va = va;
	p->write.rkey = MK_RKEY;
	p->write.msg_len = msg_len;
	p->write.offset = off;
}

/* The last emitted packet (an ACK), or NULL. */
static const struct mrc_pkt *rt_last_ack(void)
{
	if (!mk.nemit || mk.nemit > MK_EMIT)
		return NULL;
	return &mk.emit[mk.nemit - 1];
}

static u8 rt_pay[8][MK_RBUF];

static void rt_fill(u8 *buf, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		buf[i] = (u8)(seed + i * 7);
}

MRC_TEST(resp_send_in_order)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	u8 want[200];
	unsigned int ret;

	MRC_ALLOC(r);
	rt_setup(r, 100);
	rt_post_recv(0xa, MK_RBUF);
	rt_fill(rt_pay[0], 100, 1);
	rt_fill(rt_pay[1], 100, 2);
	rt_send(&p, 100, 0, 200, 0, 100, MRC_F_FIRST);
	ret = mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(ret, 0);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	/* delayed ACK for the first packet */
	MRC_EXPECT_EQ(mk.nemit, 0);
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_ACK]);
	rt_send(&p, 101, 0, 200, 100, 100, MRC_F_LAST | MRC_F_SOLICIT);
	ret = mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_EQ(ret, 0);
	MRC_EXPECT_EQ(r->rx.cum, 102);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0xa);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(mk.rcqe[0].byte_len, 200);
	MRC_EXPECT_EQ(mk.rcqe[0].opcode, MRC_WC_RECV);
	MRC_EXPECT_EQ(mk.rcqe[0].solicited, 1);
	memcpy(want, rt_pay[0], 100);
	memcpy(want + 100, rt_pay[1], 100);
	MRC_EXPECT_MEMEQ(mk.slot_buf[0], want, 200);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/*
	 * The LAST packet (no ACKREQ) is acknowledged by the delayed ACK,
	 * which the application's reply may carry (version 2); the timer
	 * sends it.
	 */
	MRC_EXPECT_EQ(mk.nemit, 0);
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_ACK]);
	mrc_resp_ack_timer(r, &mk_e);
	MRC_EXPECT_EQ(mk.nemit, 1);
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->opcode, MRC_OP_ACK);
	MRC_EXPECT_EQ(rt_last_ack()->ack.cum_psn, 102);
	MRC_EXPECT_EQ(rt_last_ack()->dst_qpn, 7);
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_ACK]);
	/* nothing pending: the timer sends nothing */
	mrc_resp_ack_timer(r, &mk_e);
	MRC_EXPECT_EQ(mk.nemit, 1);
	/* with ACKREQ, a LAST packet is acknowledged at once */
	rt_post_recv(0xb, MK_RBUF);
	rt_send(&p, 102, 1, 10, 0, 10,
		MRC_F_FIRST | MRC_F_LAST | MRC_F_ACKREQ);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.nemit, 2);
	MRC_EXPECT_EQ(mk.emit[1].ack.cum_psn, 103);
}

/*
 * Version 3 (protocol.rst "RNR and the request epoch"): a SEND without a
 * receive WQE is refused: RNR NAK, the receive epoch ends and the PSN is
 * committed void (it never pins the window); the same packet again is a
 * duplicate. The requester sends the message again in the next epoch,
 * under a new PSN: placed and completed.
 */
MRC_TEST(resp_rnr_then_resend)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 5);
	rt_fill(rt_pay[0], 10, 3);
	rt_send(&p, 5, 0, 10, 0, 10, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_RNR);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 5);
	MRC_EXPECT_EQ(rt_last_ack()->ack.rnr_timer, 12);
	MRC_EXPECT_EQ(rt_last_ack()->ack.epoch, 1);
	MRC_EXPECT_EQ(rt_last_ack()->ack.cum_psn, 6);
	MRC_EXPECT_EQ(r->rx.cum, 6);
	MRC_EXPECT_EQ(r->epoch, 1);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_VOIDED], 1);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* the same packet again, a WQE posted meanwhile: a duplicate */
	rt_post_recv(0xb, 64);
	p.flags |= MRC_F_RETX;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_DUPLICATE], 1);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	/* an ACK now tells the epoch and the refused PSN too */
	mrc_resp_send_ack(r, &mk_e, MRC_SYN_ACK, 0);
	MRC_EXPECT_EQ(rt_last_ack()->ack.epoch, 1);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 5);
	/* the message in epoch 1 at PSN 6: placed and completed */
	rt_send(&p, 6, 0, 10, 0, 10, MRC_F_FIRST | MRC_F_LAST);
	p.epoch = 1;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(r->rx.cum, 7);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0xb);
	MRC_EXPECT_MEMEQ(mk.slot_buf[0], rt_pay[0], 10);
}

/*
 * What a refusal voids: every request of the ended epoch from the refused
 * PSN on, and every packet of the refused message or a later one, also
 * before it -- committed, never placed, run or completed; READs/atomics
 * queued after it are dropped, never run. A message whose receive WQE was
 * not taken when a later one was refused (WQEs are taken in message
 * order) is refused in turn, moving the void point back (a new epoch).
 */
static void rt_rd_atomic(struct mrc_pkt *p, u32 psn, u8 opcode);

MRC_TEST(resp_rnr_voids_the_rest_of_its_epoch)
{
	static u8 mem[MK_MEM];
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 10);
	rt_fill(mk.mem, 128, 3);
	memcpy(mem, mk.mem, MK_MEM);
	rt_fill(rt_pay[0], 16, 9);
	/* a FETCH_ADD at 13 arrives first: queued, waits for 10..12 */
	rt_rd_atomic(&p, 13, MRC_OP_FETCH_ADD);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 1);
	/* msn 1 (PSN 12) before msn 0 (10..11), no WQE: refused at 12 */
	rt_send(&p, 12, 1, 16, 0, 16, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_RNR);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 12);
	MRC_EXPECT_EQ(r->epoch, 1);
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 0);	/* the atomic: void */
	/* epoch 0's WRITE at 14: void, the memory untouched */
	rt_write(&p, 14, MK_VA, 16, 0, 16, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_VOIDED], 2);
	MRC_EXPECT_MEMEQ(mk.mem, mem, MK_MEM);
	/* msn 0 (10, before the void PSN), still no WQE: refused, epoch 2 */
	rt_send(&p, 10, 0, 32, 0, 16, MRC_F_FIRST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_RNR);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 10);
	MRC_EXPECT_EQ(rt_last_ack()->ack.epoch, 2);
	/* a WQE now; msn 0's second packet (11), epoch 0: void too */
	rt_post_recv(0xb, 64);
	rt_send(&p, 11, 0, 32, 16, 16, MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(r->rx.cum, 15);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	MRC_EXPECT_EQ(mk.atomics, 0);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* epoch 2: msn 0 at 15..16, then the atomic at 17 runs */
	rt_send(&p, 15, 0, 32, 0, 16, MRC_F_FIRST);
	p.epoch = 2;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	rt_send(&p, 16, 0, 32, 16, 16, MRC_F_LAST);
	p.epoch = 2;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0xb);
	MRC_EXPECT_EQ(mk.rcqe[0].byte_len, 32);
	rt_rd_atomic(&p, 17, MRC_OP_FETCH_ADD);
	p.epoch = 2;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 1);
	MRC_EXPECT_TRUE(mrc_resp_rsp_ready(r));
	MRC_EXPECT_EQ(mk.nerr, 0);
}

/*
 * A request of an ended epoch at or after its void point is void: it is
 * not checked, its resend is. Not even against the QP's access rights: a
 * FETCH_ADD the QP does not grant, arriving void behind an RNR refusal,
 * was NAKed (REM_ACCESS, once cum reached it) naming a PSN the requester
 * had voided and resent, so the QP failed before the earlier messages'
 * resends were delivered (sim seed 411269).
 */
MRC_TEST(resp_voided_request_not_access_checked)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 10);
	r->cfg.qp_access = MRC_ACC_REMOTE_WRITE | MRC_ACC_REMOTE_READ;
	rt_fill(rt_pay[0], 16, 9);
	/* msn 1 (PSN 11) before msn 0 (10), no WQE: refused at 11 */
	rt_send(&p, 11, 1, 16, 0, 16, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_RNR);
	MRC_EXPECT_EQ(r->epoch, 1);
	/* epoch 0's FETCH_ADD at 12: void, whatever the QP grants */
	rt_rd_atomic(&p, 12, MRC_OP_FETCH_ADD);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_VOIDED], 2);
	MRC_EXPECT_FALSE(r->fnak);
	/* msn 0 at 10, a WQE for it now: delivered, cum passes 12 */
	rt_post_recv(0xa, 64);
	rt_send(&p, 10, 0, 16, 0, 16, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(r->rx.cum, 13);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_TRUE(mrc_resp_ready(r));
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_ACK);
	/* epoch 1: msn 1 again at 13, then the FETCH_ADD at 14: NAKed */
	rt_post_recv(0xb, 64);
	rt_send(&p, 13, 1, 16, 0, 16, MRC_F_FIRST | MRC_F_LAST);
	p.epoch = 1;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(mk.nrcqe == 2);
	MRC_EXPECT_EQ(mk.rcqe[1].wr_id, 0xb);
	rt_rd_atomic(&p, 14, MRC_OP_FETCH_ADD);
	p.epoch = 1;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 14);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
	MRC_EXPECT_EQ(mk.atomics, 0);
}

MRC_TEST(resp_write_last_held)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	unsigned int ret;

	MRC_ALLOC(r);
	rt_setup(r, 0xfffffffe);	/* PSNs wrap through 0 */
	rt_fill(rt_pay[0], 100, 10);
	rt_fill(rt_pay[1], 100, 20);
	rt_fill(rt_pay[2], 50, 30);
	/* PSN 0 (the last packet) first: committed, held, not placed */
	rt_write(&p, 0, MK_VA, 250, 200, 50, MRC_F_LAST);
	ret = mrc_resp_rx(r, &mk_e, &p, rt_pay[2], false);
	MRC_EXPECT_EQ(ret, MRC_RESP_HELD);
	MRC_EXPECT_EQ(r->nheld, 1);
	MRC_EXPECT_EQ(mk.mem[200], 0);
	MRC_EXPECT_EQ(mrc_rx_check(&r->rx, 0), MRC_RX_DUP);
	MRC_EXPECT_TRUE(mk.seen[MRC_ENG_RESP][MRC_RESP_HOLD]);
	/* then the middle packet, then the first */
	rt_write(&p, 0xffffffff, MK_VA, 250, 100, 100, 0);
	ret = mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_EQ(ret, 0);
	MRC_EXPECT_EQ(r->nheld, 1);
	MRC_EXPECT_EQ(mk.released, 0);
	rt_write(&p, 0xfffffffe, MK_VA, 250, 0, 100, MRC_F_FIRST);
	ret = mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(r->nheld, 0);
	MRC_EXPECT_EQ(mk.released, 1);
	MRC_EXPECT_TRUE(mk.last_released == rt_pay[2]);
	MRC_EXPECT_EQ(r->rx.cum, 1);
	MRC_EXPECT_MEMEQ(mk.mem, rt_pay[0], 100);
	MRC_EXPECT_MEMEQ(mk.mem + 100, rt_pay[1], 100);
	MRC_EXPECT_MEMEQ(mk.mem + 200, rt_pay[2], 50);
	MRC_EXPECT_EQ(mk.mr_refs, 0);
	MRC_EXPECT_EQ(mk.nerr, 0);
}


/*
 * A fresh responder at PSN 0 and a WRITE of 250 bytes at MK_VA in PSNs 0,
 * 1, 2 (payloads rt_pay[0..2]), PSN 1 not sent: its LAST is held. The
 * verdict of PSN 2's mrc_resp_rx().
 */
static unsigned int rt_write_250_held(struct mrc_resp *r, struct mrc_pkt *p)
{
	rt_setup(r, 0);
	rt_fill(rt_pay[0], 100, 10);
	rt_fill(rt_pay[1], 100, 20);
	rt_fill(rt_pay[2], 50, 30);
	rt_write(p, 0, MK_VA, 250, 0, 100, MRC_F_FIRST);
	mrc_resp_rx(r, &mk_e, p, rt_pay[0], false);
	rt_write(p, 2, MK_VA, 250, 200, 50, MRC_F_LAST);
	return mrc_resp_rx(r, &mk_e, p, rt_pay[2], false);
}
/*
 * Issue 10, 1h. A WRITE's LAST packet that arrived before the rest of its
 * message was committed (acknowledged) and held. Its message's last
 * missing packet then arrives and passes the MR check, but the MR goes
 * away before the held packet is placed in the same call: in the kernel,
 * another context deregistered it (ibv_dereg_mr erases the key first,
 * then waits for references) or invalidated it (LOCAL_INV, SEND_WITH_INV
 * on another QP of the PD). The acknowledged packet cannot be dropped:
 * protocol.rst "Ordering" -- the responder NAKs its PSN REM_ACCESS and
 * the QP moves to ERR with an access error event; its bytes are not
 * written, the packet is released, no MR reference is left.
 */
MRC_TEST(resp_held_write_mr_gone_fails_visibly)
{
	const struct mrc_pkt *a;
	struct mrc_resp *r;
	struct mrc_pkt p;
	u8 zero[50] = { 0 };
	unsigned int ret;

	MRC_ALLOC(r);
	/* a WRITE of 250 bytes in PSNs 0, 1, 2; PSN 1 is late */
	ret = rt_write_250_held(r, &p);
	MRC_EXPECT_EQ(ret, MRC_RESP_HELD);
	MRC_EXPECT_EQ(mrc_rx_check(&r->rx, 2), MRC_RX_DUP);	/* committed */
	/* a SEND after the WRITE, placed, waiting for cum to complete */
	rt_post_recv(0x5e, 64);
	rt_send(&p, 3, 0, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[3], false);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* PSN 1's own MR check passes; then the MR is gone */
	mk.mr_gone_after = mk.mr_gets + 1;
	rt_write(&p, 1, MK_VA, 250, 100, 100, 0);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_FALSE(mk.mr_valid);
	MRC_EXPECT_MEMEQ(mk.mem + 100, rt_pay[1], 100);
	/* the held packet: not written, released, not kept */
	MRC_EXPECT_MEMEQ(mk.mem + 200, zero, 50);
	MRC_EXPECT_EQ(r->nheld, 0);
	MRC_EXPECT_EQ(mk.released, 1);
	MRC_EXPECT_TRUE(mk.last_released == rt_pay[2]);
	MRC_EXPECT_EQ(mk.mr_refs, 0);
	/* visibly: the QP fails with an access error ... */
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
	/*
	 * ... and the requester is told: a REM_ACCESS NAK of the held PSN.
	 * Its cumulative point covers that PSN (it was committed); the
	 * requester's completer looks the NAKed WQE up before it applies
	 * the ACK part (protocol.rst "Fatal NAK"), so the WRITE completes
	 * REM_ACCESS_ERR (test_completer.c comp_fatal_nak_of_acked_write).
	 */
	a = rt_last_ack();
	MRC_ASSERT_TRUE(a != NULL);
	MRC_EXPECT_EQ(a->opcode, MRC_OP_ACK);
	MRC_EXPECT_EQ(a->dst_qpn, 7);
	MRC_EXPECT_EQ(a->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(a->ack.nak_psn, 2);
	MRC_EXPECT_EQ(a->ack.cum_psn, 4);
	/*
	 * The SEND after the failed WRITE does not complete successfully
	 * (the requester flushes it: it is after the NAKed WQE); the flush
	 * completes it.
	 */
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	mrc_resp_stop(r);
	mrc_resp_flush(r, &mk_e, 0);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0x5e);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_WR_FLUSH_ERR);
	/* the NAK may be lost: a retry of the NAKed PSN is NAKed again */
	rt_write(&p, 2, MK_VA, 250, 200, 50, MRC_F_LAST | MRC_F_RETX);
	MRC_EXPECT_TRUE(mrc_resp_renak(r, &mk_e, &p));
	a = rt_last_ack();
	MRC_ASSERT_TRUE(a != NULL);
	MRC_EXPECT_EQ(a->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(a->ack.nak_psn, 2);
}

/* Are the @len bytes of the mock MR at byte @off all zero? */
static bool rt_mem_zero(u32 off, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (mk.mem[off + i])
			return false;
	return true;
}

/*
 * The WRITE of 650 bytes that rt_seg_change_rx() sends in PSNs 0..5 with
 * a segment size that changed within the message: 100-byte packets at
 * offsets 0, 100, 200, 300 (PSNs 0..3), a 200-byte one at 400 (PSN 4),
 * the LAST 50 bytes at 600 (PSN 5) -- a sender that resegmented when its
 * netdev's MTU changed (issue 10, 4). Delivers PSN @psn.
 */
static void rt_seg_change_rx(struct mrc_resp *r, u32 psn)
{
	static const u16 off[6] = { 0, 100, 200, 300, 400, 600 };
	static const u16 len[6] = { 100, 100, 100, 100, 200, 50 };
	struct mrc_pkt p;

	rt_write(&p, psn, MK_VA, 650, off[psn], len[psn],
		 (psn == 0 ? MRC_F_FIRST : 0) | (psn == 5 ? MRC_F_LAST : 0));
	mrc_resp_rx(r, &mk_e, &p, rt_pay[psn], false);
}

/*
 * Issue 10, 4: every non-LAST packet of a peer's WRITEs carries its one
 * segment size (protocol.rst "Segment rules"); the responder places a
 * WRITE's LAST packet once the offset / segment size packets before it
 * are placed. A segment size that changes within a message (or between
 * messages) makes that count wrong: here PSNs 3, 2 (100 bytes), 4 (200)
 * then the LAST (offset 600 = 3 * 200) arrive while PSNs 0 and 1 are
 * missing, and the LAST must not land before them. The responder refuses
 * the first packet that breaks the rule -- PSN 4, 200 bytes after PSNs 3
 * and 2 taught it 100 -- visibly: an INV_REQ NAK of its PSN and a request
 * error on the QP; nothing of the message lands after that. The NAK comes
 * in PSN order, once PSNs 0 and 1 are here (resp_fatal_nak_waits_for_
 * earlier_psns).
 */
MRC_TEST(resp_write_seg_size_change_refused)
{
	struct mrc_pkt nak = { 0 };
	struct mrc_resp *r;
	u32 i, nemit;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	for (i = 0; i < 6; i++)
		rt_fill(rt_pay[i], 200, (u8)(16 * i + 1));
	rt_seg_change_rx(r, 3);
	rt_seg_change_rx(r, 2);
	MRC_EXPECT_MEMEQ(mk.mem + 200, rt_pay[2], 100);
	MRC_EXPECT_MEMEQ(mk.mem + 300, rt_pay[3], 100);
	rt_seg_change_rx(r, 4);
	MRC_EXPECT_TRUE(rt_mem_zero(400, 200));
	MRC_EXPECT_TRUE(r->fnak && r->fnak_psn == 4);
	/* the rest of it: not taken behind the refused PSN */
	rt_seg_change_rx(r, 5);
	/* never the LAST before its prefix (PSNs 0 and 1 not here yet) */
	MRC_EXPECT_TRUE(rt_mem_zero(0, 200));
	MRC_EXPECT_TRUE(rt_mem_zero(600, 50));
	MRC_EXPECT_EQ(mk.nerr, 0);
	nemit = mk.nemit;
	rt_seg_change_rx(r, 0);
	rt_seg_change_rx(r, 1);
	if (mk.nemit > nemit && mk.nemit <= MK_EMIT)
		nak = mk.emit[mk.nemit - 1];
	MRC_EXPECT_MEMEQ(mk.mem, rt_pay[0], 100);
	MRC_EXPECT_MEMEQ(mk.mem + 100, rt_pay[1], 100);
	MRC_EXPECT_TRUE(rt_mem_zero(400, 200));
	MRC_EXPECT_TRUE(rt_mem_zero(600, 50));
	/* refused visibly, at PSN 4 */
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_REQ_ERR);
	MRC_EXPECT_EQ(nak.opcode, MRC_OP_ACK);
	MRC_EXPECT_EQ(nak.ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(nak.ack.nak_psn, 4);
	mrc_resp_stop(r);
	mrc_resp_flush(r, &mk_e, 0);
	MRC_EXPECT_TRUE(rt_mem_zero(600, 50));
	MRC_EXPECT_EQ(r->nheld, 0);
	MRC_EXPECT_EQ(mk.mr_refs, 0);
}

/*
 * The same rule when the LAST arrives first behind packets of one size:
 * PSN 4 (200 bytes) then the LAST (offset 600, 3 * 200) are held and
 * committed as usual; PSN 3 (100 bytes) then breaks the rule, is refused,
 * and the held LAST is never placed. PSNs 2, 1, 0 (100 bytes) break it
 * too: the NAK, once every PSN before the earliest refused one is here,
 * names PSN 0. A later message with another segment size is refused too:
 * the size is the same for all messages.
 */
MRC_TEST(resp_write_seg_size_change_held_last)
{
	const struct mrc_pkt *a;
	struct mrc_resp *r;
	struct mrc_pkt p;
	u32 i;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	for (i = 0; i < 6; i++)
		rt_fill(rt_pay[i], 200, (u8)(16 * i + 1));
	rt_seg_change_rx(r, 4);
	rt_seg_change_rx(r, 5);
	MRC_EXPECT_EQ(r->nheld, 1);
	MRC_EXPECT_TRUE(rt_mem_zero(600, 50));
	MRC_EXPECT_EQ(mk.nerr, 0);
	rt_seg_change_rx(r, 3);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_TRUE(r->fnak && r->fnak_psn == 3);
	rt_seg_change_rx(r, 2);
	rt_seg_change_rx(r, 1);
	MRC_EXPECT_EQ(mk.nerr, 0);
	rt_seg_change_rx(r, 0);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_REQ_ERR);
	a = rt_last_ack();
	MRC_ASSERT_TRUE(a != NULL);
	MRC_EXPECT_EQ(a->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(a->ack.nak_psn, 0);
	MRC_EXPECT_TRUE(rt_mem_zero(600, 50));
	mrc_resp_stop(r);
	mrc_resp_flush(r, &mk_e, 0);
	MRC_EXPECT_TRUE(rt_mem_zero(600, 50));
	MRC_EXPECT_EQ(r->nheld, 0);
	MRC_EXPECT_EQ(mk.released, 1);
	MRC_EXPECT_EQ(mk.mr_refs, 0);

	/* between messages: 100-byte segments, then 200-byte ones */
	rt_setup(r, 0);
	rt_write(&p, 0, MK_VA, 150, 0, 100, MRC_F_FIRST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	rt_write(&p, 1, MK_VA, 150, 100, 50, MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_EQ(r->rx.cum, 2);
	MRC_EXPECT_EQ(mk.nerr, 0);
	rt_write(&p, 2, MK_VA + 1024, 250, 0, 200, MRC_F_FIRST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[2], false);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_REQ_ERR);
	MRC_EXPECT_TRUE(rt_mem_zero(1024, 200));
	a = rt_last_ack();
	MRC_ASSERT_TRUE(a != NULL);
	MRC_EXPECT_EQ(a->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(a->ack.nak_psn, 2);
	/* and a reset forgets the size: a new life may choose another */
	rt_setup(r, 0);
	rt_write(&p, 0, MK_VA, 250, 0, 200, MRC_F_FIRST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[2], false);
	rt_write(&p, 1, MK_VA, 250, 200, 50, MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[3], false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(r->rx.cum, 2);
	MRC_EXPECT_MEMEQ(mk.mem, rt_pay[2], 200);
	MRC_EXPECT_MEMEQ(mk.mem + 200, rt_pay[3], 50);
}

MRC_TEST(resp_write_order_later_psn_wins)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 10);
	memset(rt_pay[0], 0xaa, 64);
	memset(rt_pay[1], 0xbb, 64);
	/* PSN 11 writes [32, 96) and overtakes PSN 10, which writes [0, 64) */
	rt_write(&p, 11, MK_VA + 32, 64, 0, 64, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	rt_write(&p, 10, MK_VA, 64, 0, 64, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(r->rx.cum, 12);
	MRC_EXPECT_EQ(mk.mem[0], 0xaa);
	MRC_EXPECT_EQ(mk.mem[31], 0xaa);
	MRC_EXPECT_EQ(mk.mem[32], 0xbb);
	MRC_EXPECT_EQ(mk.mem[63], 0xbb);
	MRC_EXPECT_EQ(mk.mem[95], 0xbb);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_OUT_OF_ORDER], 1);
}

/*
 * Write order holds across keys that reach the same bytes (a buffer
 * registered twice, here once zero-based; a window and its MR): the
 * record is of the memory, not of the key (worder.h, mr_canon).
 */
MRC_TEST(resp_write_order_aliased_keys)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 10);
	mk.alias = true;
	memset(rt_pay[0], 0xaa, 64);
	memset(rt_pay[1], 0xbb, 64);
	memset(rt_pay[2], 0xcc, 64);
	memset(rt_pay[3], 0xdd, 64);
	/* PSN 11 writes bytes [32, 96) through the second key, overtaking
	 * PSN 10, which writes [0, 64) through the first */
	rt_write(&p, 11, 32, 64, 0, 64, MRC_F_FIRST | MRC_F_LAST);
	p.write.rkey = MK_RKEY2;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	rt_write(&p, 10, MK_VA, 64, 0, 64, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	/* the other way round: PSN 13 through the first key wins */
	rt_write(&p, 13, MK_VA + 200, 64, 0, 64, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[3], false);
	rt_write(&p, 12, 180, 64, 0, 64, MRC_F_FIRST | MRC_F_LAST);
	p.write.rkey = MK_RKEY2;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[2], false);
	MRC_EXPECT_EQ(r->rx.cum, 14);
	MRC_EXPECT_EQ(mk.mr_refs, 0);
	MRC_EXPECT_EQ(mk.mem[0], 0xaa);
	MRC_EXPECT_EQ(mk.mem[31], 0xaa);
	MRC_EXPECT_EQ(mk.mem[32], 0xbb);
	MRC_EXPECT_EQ(mk.mem[63], 0xbb);
	MRC_EXPECT_EQ(mk.mem[95], 0xbb);
	MRC_EXPECT_EQ(mk.mem[180], 0xcc);
	MRC_EXPECT_EQ(mk.mem[199], 0xcc);
	MRC_EXPECT_EQ(mk.mem[200], 0xdd);
	MRC_EXPECT_EQ(mk.mem[243], 0xdd);
	MRC_EXPECT_EQ(mk.mem[263], 0xdd);
}

MRC_TEST(resp_read_waits_for_earlier_write)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	unsigned int ret;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	memset(rt_pay[0], 0x5a, 16);
	/* READ at PSN 1 arrives before the WRITE at PSN 0 */
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_READ_REQ;
	p.flags = MRC_F_FIRST | MRC_F_LAST;
	p.psn = 1;
	p.read.va = MK_VA;
	p.read.rkey = MK_RKEY;
	p.read.len = 16;
	ret = mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(ret, 0);
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 1);
	MRC_EXPECT_FALSE(mrc_resp_rsp_ready(r));
	/* the duplicate request is not queued twice */
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 1);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_DUPLICATE], 1);
	rt_write(&p, 0, MK_VA, 16, 0, 16, MRC_F_FIRST | MRC_F_LAST);
	ret = mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(ret, MRC_RESP_TX);
	MRC_EXPECT_TRUE(mrc_resp_rsp_ready(r));
	MRC_EXPECT_EQ(mrc_resp_rsp_exec(r, &mk_e, mrc_rspq_head(&r->rspq)),
		      0);
	MRC_EXPECT_EQ(mrc_rspq_head(&r->rspq)->kind, MRC_RSP_READ);
	/* the data the READ will send is the WRITE's */
	MRC_EXPECT_EQ(mk.mem[0], 0x5a);
}

MRC_TEST(resp_atomic_once)
{
	struct mrc_resp *r;
	struct mrc_rsp *q;
	struct mrc_pkt p;
	u64 v = 5;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	memcpy(mk.mem + 8, &v, 8);
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_FETCH_ADD;
	p.flags = MRC_F_FIRST | MRC_F_LAST;
	p.psn = 0;
	p.atomic.va = MK_VA + 8;
	p.atomic.rkey = MK_RKEY;
	p.atomic.swap_add = 3;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.atomics, 0);		/* queued, not executed */
	mrc_resp_rx(r, &mk_e, &p, NULL, false);	/* duplicate */
	MRC_ASSERT_TRUE(mrc_resp_rsp_ready(r));
	q = mrc_rspq_head(&r->rspq);
	MRC_EXPECT_EQ(mrc_resp_rsp_exec(r, &mk_e, q), 0);
	MRC_EXPECT_EQ(mrc_resp_rsp_exec(r, &mk_e, q), 0);
	MRC_EXPECT_EQ(mk.atomics, 1);
	MRC_EXPECT_EQ(q->orig, 5);
	memcpy(&v, mk.mem + 8, 8);
	MRC_EXPECT_EQ(v, 8);
	mrc_rspq_pop(&r->rspq);
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 0);
	/* misaligned: invalid request, the QP ends */
	p.psn = 1;
	p.atomic.va = MK_VA + 9;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_REQ_ERR);
}

MRC_TEST(resp_access_errors)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	u64 pkts;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	memset(rt_pay[0], 0x77, 32);
	/* a bad rkey: NAK REM_ACCESS, memory untouched, QP ends */
	rt_write(&p, 0, MK_VA, 32, 0, 32, MRC_F_FIRST | MRC_F_LAST);
	p.write.rkey = 99;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 0);
	MRC_EXPECT_EQ(mk.mem[0], 0);
	MRC_EXPECT_EQ(r->rx.cum, 0);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
	/* beyond the MR: same */
	rt_setup(r, 0);
	rt_write(&p, 0, MK_VA + MK_MEM - 16, 32, 0, 32,
		 MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
	MRC_EXPECT_EQ(mk.mem[MK_MEM - 1], 0);
	/* the QP does not grant remote write: NAKed before the window */
	rt_setup(r, 0);
	pkts = r->rx_pkts;
	r->cfg.qp_access = MRC_ACC_REMOTE_READ;
	rt_write(&p, 0, MK_VA, 32, 0, 32, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
	MRC_EXPECT_EQ(r->rx_pkts, pkts);	/* not even classified */
	MRC_EXPECT_EQ(mk.mem[0], 0);
	/* the QP is in ERR now: its retry is NAKed again */
	mrc_resp_stop(r);
	p.flags |= MRC_F_RETX;
	MRC_EXPECT_TRUE(mrc_resp_renak(r, &mk_e, &p));
	MRC_EXPECT_EQ(mk.nemit, 2);
	p.psn = 3;
	MRC_EXPECT_FALSE(mrc_resp_renak(r, &mk_e, &p));
}

/*
 * IBA C9-88: the R_Key and VA of a zero-length RDMA WRITE or READ are not
 * validated (rxe neither). rsocket sends its control messages (shutdown,
 * disconnect, credits) as zero-length WRITE_WITH_IMM without setting the
 * rkey or address: whatever the stack held. They must complete (the receive
 * WQE with its immediate), not end both QPs with REM_ACCESS.
 */
MRC_TEST(resp_zero_length_no_rkey_check)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(0x51, 0);
	/* zero-length WRITE_IMM, garbage rkey and va */
	rt_write(&p, 0, 0xdeadbeef000ULL, 0, 0, 0, MRC_F_FIRST | MRC_F_LAST);
	p.opcode = MRC_OP_WRITE_IMM;
	p.write.rkey = 0x5a5a5a5a;
	p.write.rmsn = 0;
	p.write.imm = 0x11223344;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(r->rx.cum, 1);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(mk.rcqe[0].opcode, MRC_WC_RECV_RDMA_WITH_IMM);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0x51);
	MRC_EXPECT_EQ(mk.rcqe[0].byte_len, 0);
	/* zero-length WRITE, garbage rkey */
	rt_write(&p, 1, 0, 0, 0, 0, MRC_F_FIRST | MRC_F_LAST);
	p.write.rkey = 0;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(r->rx.cum, 2);
	/* zero-length READ, garbage rkey: queued and executed */
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_READ_REQ;
	p.flags = MRC_F_FIRST | MRC_F_LAST;
	p.psn = 2;
	p.read.va = 0x77;
	p.read.rkey = 0xabcdef01;
	p.read.len = 0;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(r->rx.cum, 3);
	MRC_ASSERT_TRUE(mrc_resp_rsp_ready(r));
	MRC_EXPECT_EQ(mrc_resp_rsp_exec(r, &mk_e, mrc_rspq_head(&r->rspq)), 0);
	MRC_EXPECT_EQ(mk.mr_refs, 0);
	mrc_rspq_pop(&r->rspq);		/* its response was built */
	/* a zero-length WRITE still needs the QP's REMOTE_WRITE right */
	r->cfg.qp_access = MRC_ACC_REMOTE_READ;
	rt_write(&p, 3, 0, 0, 0, 0, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
}

/*
 * IB executes a QP's requests in PSN order: a request that fails after a
 * READ was accepted is NAKed -- and the QP fails -- only once the READ's
 * responses are built, so they leave before the NAK (conformance.c
 * fatal_order); meanwhile no request at or after the failed one is
 * taken. The earlier of two failures is the one NAKed.
 */
MRC_TEST(resp_fatal_nak_after_queued_read)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	u32 nemit;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_rd_atomic(&p, 0, MRC_OP_READ_REQ);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_ASSERT_TRUE(mrc_rspq_len(&r->rspq) == 1);
	/* PSN 2: a WRITE with a bad rkey, behind the READ */
	rt_write(&p, 2, MK_VA, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	p.write.rkey = MK_RKEY ^ 0x100;
	nemit = mk.nemit;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_TRUE(r->fnak && r->fnak_psn == 2);
	MRC_EXPECT_TRUE(mk.nemit == nemit ||
			rt_last_ack()->ack.syndrome == MRC_SYN_ACK);
	/* PSN 1: an INV_REQ (unknown opcode) before it: the one NAKed */
	memset(&p, 0, sizeof(p));
	p.opcode = 0x7e;
	p.flags = MRC_F_FIRST | MRC_F_LAST;
	p.psn = 1;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_TRUE(r->fnak && r->fnak_psn == 1);
	/* PSN 3, a good WRITE after it: not taken */
	rt_write(&p, 3, MK_VA, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(r->rx.cum, 1);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* a pass that builds no response: still waiting */
	mrc_resp_rsp_abort(r, &mk_e);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* the READ's responses built: the NAK, then the QP fails */
	MRC_ASSERT_TRUE(mrc_resp_rsp_ready(r));
	MRC_EXPECT_EQ(mrc_resp_rsp_exec(r, &mk_e, mrc_rspq_head(&r->rspq)), 0);
	mrc_rspq_pop(&r->rspq);
	mrc_resp_rsp_abort(r, &mk_e);
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 1);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_REQ_ERR);
	MRC_EXPECT_TRUE(!r->fnak);
}

/*
 * The wait of a fatal NAK is bounded. Its owed responses go in the QP's
 * own PSN space, under its congestion window; when that window is full of
 * the QP's requests that the peer never acknowledges -- the peer itself
 * waits to NAK one of them, behind responses of its own that cannot go
 * for the same reason -- both QPs waited forever (sim seed 604818,
 * faults access, loss, reorder: READs both ways, each QP with a refused
 * WRITE). Each expiry of the QP's retransmission timer is a tick; a
 * response built or a packet committed is progress. After @limit ticks
 * without progress the NAK goes (the requester flushes what did not
 * come), and the QP fails: no hang.
 */
MRC_TEST(resp_fatal_nak_wait_bounded_by_timeouts)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	u32 i;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_rd_atomic(&p, 0, MRC_OP_READ_REQ);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	rt_write(&p, 2, MK_VA, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	p.write.rkey = MK_RKEY ^ 0x100;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(r->fnak && r->fnak_psn == 2);
	/* no response can be built, PSN 1 is missing: the timer ticks */
	for (i = 0; i < 3; i++)
		mrc_resp_fnak_tick(r, &mk_e, 3);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_TRUE(r->fnak);
	/* a response packet built is progress: the count starts again */
	mrc_resp_fnak_progress(r);
	for (i = 0; i < 3; i++)
		mrc_resp_fnak_tick(r, &mk_e, 3);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* so is a packet committed (PSN 1, a WRITE before it) */
	rt_write(&p, 1, MK_VA + 16, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(r->rx.cum, 2);
	mrc_resp_fnak_tick(r, &mk_e, 3);
	MRC_EXPECT_EQ(mk.nerr, 0);
	mrc_resp_fnak_tick(r, &mk_e, 3);
	mrc_resp_fnak_tick(r, &mk_e, 3);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* one tick more: the NAK goes, the QP fails */
	mrc_resp_fnak_tick(r, &mk_e, 3);
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 2);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
	MRC_EXPECT_TRUE(!r->fnak);
	/* nothing waits: ticks do nothing */
	rt_setup(r, 0);
	for (i = 0; i < 10; i++)
		mrc_resp_fnak_tick(r, &mk_e, 3);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(mk.nemit, 0);
}

/*
 * Under spraying a request that is refused on arrival can overtake
 * earlier ones. IB executes in PSN order: the SEND before a WRITE with a
 * bad rkey is delivered, and only then the WRITE fails. So the NAK (and
 * the error state) also waits for every earlier PSN to arrive (fnak); the
 * ACKs meanwhile cover what is here (the requester repairs the hole).
 */
MRC_TEST(resp_fatal_nak_waits_for_earlier_psns)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	u32 i;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(0x77, 64);
	/* PSN 1: a WRITE with a bad rkey, before PSN 0 (a SEND) */
	rt_write(&p, 1, MK_VA, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	p.write.rkey = MK_RKEY ^ 0x100;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_TRUE(r->fnak && r->fnak_psn == 1);
	for (i = 0; i < mk.nemit; i++)
		MRC_EXPECT_EQ(mk.emit[i].ack.syndrome, MRC_SYN_ACK);
	/* a retransmission of it meanwhile: not taken, still no NAK */
	p.flags |= MRC_F_RETX;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	for (i = 0; i < mk.nemit; i++)
		MRC_EXPECT_EQ(mk.emit[i].ack.syndrome, MRC_SYN_ACK);
	/* PSN 0 arrives: the SEND is delivered, then the WRITE is NAKed */
	rt_fill(rt_pay[1], 50, 3);
	rt_send(&p, 0, 0, 50, 0, 50, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_ASSERT_TRUE(mk.nrcqe >= 1);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0x77);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(mk.rcqe[0].byte_len, 50);
	MRC_EXPECT_MEMEQ(mk.slot_buf[0], rt_pay[1], 50);
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 1);
	MRC_EXPECT_EQ(rt_last_ack()->ack.cum_psn, 1);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
	MRC_EXPECT_TRUE(!r->fnak);
}

/*
 * A request refused on arrival waits (fnak) for an earlier PSN; when that
 * PSN arrives an earlier failure shows (a held WRITE LAST whose MR went
 * away): that one is NAKed and the QP fails. The waiting NAK then never
 * goes: a second fatal NAK, whose cumulative point covers the held
 * packet, would tell the requester its WRITE arrived (simulator, seed
 * 302931).
 */
MRC_TEST(resp_fatal_nak_waiting_superseded)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	u32 i;

	MRC_ALLOC(r);
	/* a WRITE of 250 bytes in PSNs 0, 1, 2: the LAST is held */
	MRC_EXPECT_EQ(rt_write_250_held(r, &p), MRC_RESP_HELD);
	/* PSN 3: a WRITE with a bad rkey waits for PSN 1 */
	rt_write(&p, 3, MK_VA, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	p.write.rkey = MK_RKEY ^ 0x100;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[3], false);
	MRC_EXPECT_TRUE(r->fnak && r->fnak_psn == 3);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* PSN 1 passes its check, then the MR is gone for the held LAST */
	mk.mr_gone_after = mk.mr_gets + 1;
	rt_write(&p, 1, MK_VA, 250, 100, 100, 0);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 2);
	for (i = 0; i < mk.nemit && i < MK_EMIT; i++)
		MRC_EXPECT_TRUE(mk.emit[i].ack.syndrome == MRC_SYN_ACK ||
				mk.emit[i].ack.nak_psn == 2);
	MRC_EXPECT_FALSE(r->fnak);
	/* nor in the next pass */
	mrc_resp_rsp_abort(r, &mk_e);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 2);
	MRC_EXPECT_EQ(mk.nerr, 1);
}

/*
 * A SEND longer than its receive fails after its first packet was
 * committed: it is NAKed at once even behind a queued READ, never covered
 * by an ACK first -- an ACK sent while the NAK waited would tell the
 * requester the failed message arrived (the READ's responses are dropped:
 * protocol.rst "Fatal NAK").
 */
MRC_TEST(resp_fatal_nak_committed_not_deferred)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	u32 i;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(0x77, 64);
	rt_rd_atomic(&p, 0, MRC_OP_READ_REQ);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	rt_fill(rt_pay[0], 100, 1);
	rt_send(&p, 1, 0, 100, 0, 100, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_FALSE(r->fnak);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 1);
	for (i = 0; i < mk.nemit; i++)
		MRC_EXPECT_TRUE(mk.emit[i].ack.syndrome != MRC_SYN_ACK ||
				mrc_seq_leq(mk.emit[i].ack.cum_psn, 1));
}

MRC_TEST(resp_completion_order)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(1, 64);
	rt_post_recv(2, 64);
	rt_fill(rt_pay[0], 8, 1);
	rt_fill(rt_pay[1], 8, 2);
	/* message 1 (PSN 1) completes before message 0 (PSN 0) arrives */
	rt_send(&p, 1, 1, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	rt_send(&p, 0, 0, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(mk.nrcqe == 2);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 1);
	MRC_EXPECT_EQ(mk.rcqe[1].wr_id, 2);
	MRC_EXPECT_MEMEQ(mk.slot_buf[0], rt_pay[0], 8);
	MRC_EXPECT_MEMEQ(mk.slot_buf[1], rt_pay[1], 8);
	/* a message longer than its WQE: LOC_LEN_ERR, NAK INV_REQ */
	rt_post_recv(3, 4);
	rt_send(&p, 2, 2, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(mk.nrcqe == 3);
	MRC_EXPECT_EQ(mk.rcqe[2].status, MRC_WC_LOC_LEN_ERR);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_REQ_ERR);
}

MRC_TEST(resp_send_inv_and_imm)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(1, 64);
	rt_post_recv(2, 64);
	rt_send(&p, 0, 0, 0, 0, 0, MRC_F_FIRST | MRC_F_LAST);
	p.opcode = MRC_OP_SEND_INV;
	p.send.imm = MK_RKEY;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.inval, 1);
	MRC_EXPECT_FALSE(mk.mr_valid);
	MRC_EXPECT_EQ(mk.rcqe[0].wc_flags, MRC_WCF_WITH_INV);
	MRC_EXPECT_EQ(mk.rcqe[0].imm, MK_RKEY);
	/* the consumer registers the MR again (fast-reg of the same key) */
	mk.mr_valid = true;
	/* WRITE_IMM consumes a receive WQE; imm in network order */
	rt_write(&p, 1, MK_VA, 4, 0, 4, MRC_F_FIRST | MRC_F_LAST);
	p.opcode = MRC_OP_WRITE_IMM;
	p.write.rmsn = 1;
	p.write.imm = 0x01020304;
	rt_fill(rt_pay[0], 4, 9);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(mk.nrcqe == 2);
	MRC_EXPECT_EQ(mk.rcqe[1].opcode, MRC_WC_RECV_RDMA_WITH_IMM);
	MRC_EXPECT_EQ(mk.rcqe[1].wr_id, 2);
	MRC_EXPECT_EQ(((u8 *)&mk.rcqe[1].imm)[0], 1);
	MRC_EXPECT_EQ(((u8 *)&mk.rcqe[1].imm)[3], 4);
	MRC_EXPECT_MEMEQ(mk.mem, rt_pay[0], 4);
}

/*
 * A message whose completion fails ends the QP: the messages after it
 * must not complete successfully in the same pass (IB flushes them).
 */
MRC_TEST(resp_no_success_after_error_completion)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(1, 64);
	rt_post_recv(2, 64);
	/* message 1 first (PSN 1), complete but waiting for message 0 */
	rt_send(&p, 1, 1, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	/* message 0: SEND_WITH_INV whose invalidation fails at completion */
	mk.inval_fail = true;
	rt_send(&p, 0, 0, 0, 0, 0, MRC_F_FIRST | MRC_F_LAST);
	p.opcode = MRC_OP_SEND_INV;
	p.send.imm = MK_RKEY;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_ASSERT_TRUE(mk.nrcqe >= 1);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_REM_INV_REQ_ERR);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.nrcqe, 1);	/* message 1 is not completed OK */
	/* the flush completes it */
	mrc_resp_stop(r);
	mrc_resp_flush(r, &mk_e, 0);
	MRC_ASSERT_TRUE(mk.nrcqe == 2);
	MRC_EXPECT_EQ(mk.rcqe[1].wr_id, 2);
	MRC_EXPECT_EQ(mk.rcqe[1].status, MRC_WC_WR_FLUSH_ERR);
}

/* A single-packet SEND_WITH_INV of MK_RKEY at @psn, message @msn. */
static void rt_send_inv(struct mrc_pkt *p, u32 psn, u32 msn)
{
	rt_send(p, psn, msn, 0, 0, 0, MRC_F_FIRST | MRC_F_LAST);
	p->opcode = MRC_OP_SEND_INV;
	p->send.imm = MK_RKEY;
}

/* NAKs emitted so far. */
static u32 rt_naks(void)
{
	u32 i, n = 0;

	for (i = 0; i < mk.nemit && i < MK_EMIT; i++)
		if (mk.emit[i].opcode == MRC_OP_ACK &&
		    mk.emit[i].ack.syndrome != MRC_SYN_ACK)
			n++;
	return n;
}

static const u8 rt_zero[MK_RBUF];

/*
 * IB RC executes requests in PSN order, so a WRITE after a SEND_WITH_INV
 * of its rkey fails (protocol.rst "Ordering"). Here the WRITE arrives
 * after the SEND_WITH_INV completed (its invalidation executed): refused
 * at once, REM_ACCESS NAK of its PSN, the QP ends with an access error,
 * no byte placed.
 */
MRC_TEST(resp_write_after_send_inv_refused)
{
	const struct mrc_pkt *a;
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(1, 64);
	rt_send_inv(&p, 0, 0);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_SUCCESS);
	MRC_EXPECT_FALSE(mk.mr_valid);
	rt_fill(rt_pay[0], 64, 5);
	rt_write(&p, 1, MK_VA, 64, 0, 64, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_MEMEQ(mk.mem, rt_zero, 64);
	a = rt_last_ack();
	MRC_ASSERT_TRUE(a != NULL);
	MRC_EXPECT_EQ(a->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(a->ack.nak_psn, 1);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
	MRC_EXPECT_EQ(mk.mr_refs, 0);
}

/*
 * The reordered case: a packet of the SEND_WITH_INV (PSN 1) arrived, but
 * it cannot complete yet (PSN 0 is late), when a WRITE at PSN 2 to the
 * rkey it invalidates arrives. In PSN order that WRITE fails, so it is
 * not placed; nor is it committed (its retransmissions are not placed
 * either) or NAKed yet: the invalidation has not executed, and the
 * requester must see the SEND_WITH_INV succeed. The late WRITE at PSN 0
 * to the same MR lands; the SEND_WITH_INV completes and invalidates; then
 * PSN 2 is NAKed REM_ACCESS with the cumulative point at it, and the QP
 * ends with an access error -- the outcome of PSN order.
 */
MRC_TEST(resp_write_after_pending_send_inv_not_placed)
{
	const struct mrc_pkt *a;
	struct mrc_resp *r;
	struct mrc_pkt p;
	unsigned int ret;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(1, 64);
	rt_fill(rt_pay[0], 100, 1);
	rt_fill(rt_pay[1], 64, 2);
	rt_send_inv(&p, 1, 0);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	MRC_EXPECT_TRUE(mk.mr_valid);
	rt_write(&p, 2, MK_VA + 200, 64, 0, 64, MRC_F_FIRST | MRC_F_LAST);
	ret = mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_EQ(ret, 0);
	MRC_EXPECT_MEMEQ(mk.mem + 200, rt_zero, 64);
	MRC_EXPECT_EQ(mrc_rx_check(&r->rx, 2), MRC_RX_NEW);
	MRC_EXPECT_EQ(rt_naks(), 0);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(mk.mr_refs, 0);
	/* its retransmission: the same */
	p.flags |= MRC_F_RETX;
	ret = mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_EQ(ret, 0);
	MRC_EXPECT_MEMEQ(mk.mem + 200, rt_zero, 64);
	MRC_EXPECT_EQ(mrc_rx_check(&r->rx, 2), MRC_RX_NEW);
	MRC_EXPECT_EQ(rt_naks(), 0);
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* the WRITE before the SEND_WITH_INV lands, late as it is */
	rt_write(&p, 0, MK_VA, 100, 0, 100, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_MEMEQ(mk.mem, rt_pay[0], 100);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 1);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(mk.rcqe[0].wc_flags, MRC_WCF_WITH_INV);
	MRC_EXPECT_EQ(mk.inval, 1);
	MRC_EXPECT_FALSE(mk.mr_valid);
	/* then PSN 2 fails, PSNs 0 and 1 acknowledged */
	a = rt_last_ack();
	MRC_ASSERT_TRUE(a != NULL);
	MRC_EXPECT_EQ(a->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(a->ack.nak_psn, 2);
	MRC_EXPECT_EQ(a->ack.cum_psn, 2);
	MRC_EXPECT_EQ(rt_naks(), 1);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
	MRC_EXPECT_MEMEQ(mk.mem + 200, rt_zero, 64);
	MRC_EXPECT_EQ(mk.mr_refs, 0);
	/* the NAK may be lost: a retry of PSN 2 is NAKed again */
	mrc_resp_stop(r);
	rt_write(&p, 2, MK_VA + 200, 64, 0, 64,
		 MRC_F_FIRST | MRC_F_LAST | MRC_F_RETX);
	MRC_EXPECT_TRUE(mrc_resp_renak(r, &mk_e, &p));
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 2);
}

/*
 * What the responder cannot know (protocol.rst "Ordering"): every packet
 * of a WRITE after a SEND_WITH_INV of its rkey arrives before any packet
 * of the SEND_WITH_INV. It is placed, as in the other order it would be
 * refused -- before the invalidation executes, never after: a WRITE
 * packet arriving once the SEND_WITH_INV completed is refused.
 */
MRC_TEST(resp_write_before_send_inv_arrives_lands)
{
	const struct mrc_pkt *a;
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(1, 64);
	rt_fill(rt_pay[0], 100, 1);
	rt_fill(rt_pay[1], 64, 2);
	rt_write(&p, 2, MK_VA + 200, 64, 0, 64, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_MEMEQ(mk.mem + 200, rt_pay[1], 64);
	rt_send_inv(&p, 1, 0);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	rt_write(&p, 0, MK_VA, 100, 0, 100, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(r->rx.cum, 3);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_SUCCESS);
	MRC_EXPECT_FALSE(mk.mr_valid);
	MRC_EXPECT_EQ(rt_naks(), 0);
	MRC_EXPECT_EQ(mk.nerr, 0);
	rt_write(&p, 3, MK_VA + 300, 64, 0, 64, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_MEMEQ(mk.mem + 300, rt_zero, 64);
	a = rt_last_ack();
	MRC_ASSERT_TRUE(a != NULL);
	MRC_EXPECT_EQ(a->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(a->ack.nak_psn, 3);
	MRC_EXPECT_EQ(mk.nerr, 1);
}

/*
 * A READ after a SEND_WITH_INV of its rkey, arriving before the
 * SEND_WITH_INV can complete: queued, it runs only after the
 * invalidation executed, so it fails (REM_ACCESS NAK of its PSN, access
 * error), as in PSN order.
 */
MRC_TEST(resp_read_after_pending_send_inv_fails)
{
	const struct mrc_pkt *a;
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(1, 64);
	rt_post_recv(2, 64);
	rt_send_inv(&p, 1, 1);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_READ_REQ;
	p.flags = MRC_F_FIRST | MRC_F_LAST;
	p.psn = 2;
	p.read.va = MK_VA;
	p.read.rkey = MK_RKEY;
	p.read.len = 16;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 1);
	MRC_EXPECT_FALSE(mrc_resp_rsp_ready(r));
	rt_send(&p, 0, 0, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(mk.nrcqe == 2);
	MRC_EXPECT_EQ(mk.rcqe[1].wc_flags, MRC_WCF_WITH_INV);
	MRC_EXPECT_FALSE(mk.mr_valid);
	MRC_ASSERT_TRUE(mrc_resp_rsp_ready(r));
	MRC_EXPECT_NE(mrc_resp_rsp_exec(r, &mk_e, mrc_rspq_head(&r->rspq)),
		      0);
	mrc_resp_rsp_abort(r, &mk_e);
	a = rt_last_ack();
	MRC_ASSERT_TRUE(a != NULL);
	MRC_EXPECT_EQ(a->ack.syndrome, MRC_SYN_REM_ACCESS);
	MRC_EXPECT_EQ(a->ack.nak_psn, 2);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_ACCESS_ERR);
}

MRC_TEST(resp_flush_and_reset)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(1, 64);
	rt_post_recv(2, 64);
	rt_post_recv(3, 64);
	/* message 0 half received: its WQE is taken */
	rt_send(&p, 0, 0, 16, 0, 8, MRC_F_FIRST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	/* a WRITE last packet held */
	rt_write(&p, 3, MK_VA, 16, 8, 8, MRC_F_LAST);
	r->rx_seg = 8;
	MRC_EXPECT_EQ(mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false),
		      MRC_RESP_HELD);
	mrc_resp_stop(r);
	MRC_EXPECT_FALSE(mrc_resp_ready(r));
	mrc_resp_flush(r, &mk_e, 8);
	MRC_ASSERT_TRUE(mk.nrcqe == 3);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 1);
	MRC_EXPECT_EQ(mk.rcqe[1].wr_id, 2);
	MRC_EXPECT_EQ(mk.rcqe[2].wr_id, 3);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(mk.rcqe[2].status, MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(mk.released, 1);
	MRC_EXPECT_EQ(r->nheld, 0);
	MRC_EXPECT_EQ(mk.mem[8], 0);
	/* an SRQ keeps its WQEs: more = 0 */
	rt_post_recv(4, 64);
	mrc_resp_flush(r, &mk_e, 0);
	MRC_EXPECT_EQ(mk.nrcqe, 3);
	mrc_resp_reset(r, &mk_e);
	MRC_EXPECT_EQ(r->rmsn_done, 0);
	MRC_EXPECT_EQ(r->rmsn_pop, 0);
}

/*
 * What the kernel does around mrc_resp_rx() (kernel/rx.c, tx.c, resp.c):
 * a QP the call failed (qp_error) is stopped when the call returns and
 * flushed (every receive WQE it took, then the ones still posted); a
 * packet for a stopped QP is NAKed again if it is the retry of the
 * request it NAKed (mrc_resp_renak), else dropped.
 */
static void rt_env_rx(struct mrc_resp *r, const struct mrc_pkt *p,
		      const void *pay)
{
	if (!mrc_resp_ready(r)) {
		mrc_resp_renak(r, &mk_e, p);
		return;
	}
	mrc_resp_rx(r, &mk_e, p, pay, false);
	if (mk.nerr) {
		mrc_resp_stop(r);
		mrc_resp_flush(r, &mk_e, MK_RQ);
	}
}

/*
 * Does a positive ACK emitted so far acknowledge @psn cumulatively? The
 * requester would complete its message successfully.
 */
static bool rt_acked(u32 psn)
{
	u32 i;

	for (i = 0; i < mk.nemit && i < MK_EMIT; i++)
		if (mk.emit[i].opcode == MRC_OP_ACK &&
		    mk.emit[i].ack.syndrome == MRC_SYN_ACK &&
		    mrc_seq_gt(mk.emit[i].ack.cum_psn, psn))
			return true;
	return false;
}

/* Is receive completion @i the one of @wr_id in slot @slot, @status? */
static bool rt_rcqe_is(u32 i, u64 wr_id, u32 slot, u8 status)
{
	return i < mk.nrcqe && i < MK_CQE && mk.rcqe[i].wr_id == wr_id &&
	       mk.rcqe[i].slot == slot && mk.rcqe[i].status == status;
}

/*
 * A local error on a receive WQE (its scatter list refuses the payload:
 * a bad lkey) behind a message that is not complete: message 0 (PSNs 0
 * and 1, PSN 1 late) then message 1 (PSN 2), whose copy fails. As IB,
 * the responder NAKs REM_OP and its QP errors at once -- it does not wait
 * for message 0, which may never complete: the NAK ends the requester,
 * which then never resends PSN 1. The NAK acknowledges nothing of
 * message 1. Nothing completes before the flush, which keeps RQ order:
 * message 0's WQE flushed, message 1's with the real cause.
 */
MRC_TEST(resp_copy_error_behind_incomplete_fails_at_once)
{
	const struct mrc_pkt *a;
	struct mrc_resp *r;
	struct mrc_pkt p;
	u32 nemit;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(0xa0, 64);
	rt_post_recv_err(0xa1, 64, MRC_COPY_PROT);
	rt_fill(rt_pay[0], 8, 1);
	rt_fill(rt_pay[1], 8, 2);
	rt_send(&p, 0, 0, 16, 0, 8, MRC_F_FIRST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	nemit = mk.nemit;
	rt_send(&p, 2, 1, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	/* the QP errors now */
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_FATAL);
	MRC_ASSERT_TRUE(mk.nemit == nemit + 1);
	a = rt_last_ack();
	MRC_ASSERT_TRUE(a != NULL);
	MRC_EXPECT_EQ(a->opcode, MRC_OP_ACK);
	MRC_EXPECT_EQ(a->ack.syndrome, MRC_SYN_REM_OP);
	MRC_EXPECT_EQ(a->ack.nak_psn, 2);
	MRC_EXPECT_EQ(a->ack.cum_psn, 1);
	MRC_EXPECT_FALSE(rt_acked(2));
	MRC_EXPECT_MEMEQ(mk.slot_buf[1], rt_zero, 8);
	/* completions in RQ order: message 0 first, at the flush */
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	mrc_resp_stop(r);
	mrc_resp_flush(r, &mk_e, 0);
	MRC_EXPECT_EQ(mk.nrcqe, 2);
	MRC_EXPECT_TRUE(rt_rcqe_is(0, 0xa0, 0, MRC_WC_WR_FLUSH_ERR));
	MRC_EXPECT_TRUE(rt_rcqe_is(1, 0xa1, 1, MRC_WC_LOC_PROT_ERR));
}

/*
 * The same with the NAK lost: the requester resends message 1 (RETX),
 * then message 0's late packet. The QP that failed NAKs the retry again
 * and places nothing more; no positive ACK ever covers PSN 2 -- the
 * requester must not complete message 1 successfully, it was not
 * delivered.
 */
MRC_TEST(resp_copy_error_nak_lost_never_acked)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	u32 i;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(0xb0, 64);
	rt_post_recv_err(0xb1, 64, MRC_COPY_PROT);
	rt_fill(rt_pay[0], 8, 1);
	rt_fill(rt_pay[1], 8, 2);
	rt_fill(rt_pay[2], 8, 3);
	rt_send(&p, 0, 0, 16, 0, 8, MRC_F_FIRST);
	rt_env_rx(r, &p, rt_pay[0]);
	rt_send(&p, 2, 1, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	rt_env_rx(r, &p, rt_pay[2]);
	/* (that NAK is lost) the retry of message 1 ... */
	p.flags |= MRC_F_RETX;
	rt_env_rx(r, &p, rt_pay[2]);
	/* ... is NAKed again */
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_OP);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 2);
	/* message 0's late packet, resent */
	rt_send(&p, 1, 0, 16, 8, 8, MRC_F_LAST | MRC_F_RETX);
	rt_env_rx(r, &p, rt_pay[1]);
	MRC_EXPECT_FALSE(rt_acked(2));
	MRC_EXPECT_TRUE(rt_naks() >= 2);
	for (i = 0; i < mk.nemit && i < MK_EMIT; i++) {
		if (mk.emit[i].ack.syndrome == MRC_SYN_ACK)
			continue;
		MRC_EXPECT_EQ(mk.emit[i].ack.syndrome, MRC_SYN_REM_OP);
		MRC_EXPECT_EQ(mk.emit[i].ack.nak_psn, 2);
	}
	MRC_EXPECT_MEMEQ(mk.slot_buf[1], rt_zero, 8);
	MRC_EXPECT_EQ(mk.nrcqe, 2);
	MRC_EXPECT_TRUE(rt_rcqe_is(0, 0xb0, 0, MRC_WC_WR_FLUSH_ERR));
	MRC_EXPECT_TRUE(rt_rcqe_is(1, 0xb1, 1, MRC_WC_LOC_PROT_ERR));
}

/*
 * The flush keeps the cause: message 1 is longer than its WQE
 * (LOC_LEN_ERR, NAK INV_REQ, the QP errors) while message 0 is not
 * complete. In RQ order: message 0's WQE WR_FLUSH_ERR, message 1's
 * LOC_LEN_ERR, then the WQE still posted WR_FLUSH_ERR.
 */
MRC_TEST(resp_flush_keeps_wqe_error_status)
{
	const struct mrc_pkt *a;
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(0xc0, 64);
	rt_post_recv(0xc1, 4);
	rt_post_recv(0xc2, 64);
	rt_send(&p, 0, 0, 16, 0, 8, MRC_F_FIRST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	rt_send(&p, 2, 1, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	a = rt_last_ack();
	MRC_ASSERT_TRUE(a != NULL);
	MRC_EXPECT_EQ(a->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(a->ack.nak_psn, 2);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_REQ_ERR);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	mrc_resp_stop(r);
	mrc_resp_flush(r, &mk_e, MK_RQ);
	MRC_EXPECT_EQ(mk.nrcqe, 3);
	MRC_EXPECT_TRUE(rt_rcqe_is(0, 0xc0, 0, MRC_WC_WR_FLUSH_ERR));
	MRC_EXPECT_TRUE(rt_rcqe_is(1, 0xc1, 1, MRC_WC_LOC_LEN_ERR));
	MRC_EXPECT_TRUE(rt_rcqe_is(2, 0xc2, 2, MRC_WC_WR_FLUSH_ERR));
}

/* A receive WQE that rq_pop takes but refuses (MRC_RQ_BAD). */
static void rt_post_recv_bad(u64 wr_id, u32 len)
{
	rt_post_recv(wr_id, len);
	mk.rq_bad[(mk.rq_posted - 1) % MK_RQ] = true;
}

/*
 * A malformed receive WQE (more SGEs than the QP allows: rq_pop answers
 * MRC_RQ_BAD) is a local error too: the SEND that finds it is NAKed
 * REM_OP and the QP errors at once, its WQE completes LOC_QP_OP_ERR in RQ
 * order, and no positive ACK covers that SEND -- behind a message that
 * is not complete, at the head with ACKREQ (an ACK due at once), and for
 * a WRITE_IMM (nothing written). A malformed WQE taken ahead for a later
 * message, none of whose packets arrived, completes LOC_QP_OP_ERR when
 * its turn comes: NAK REM_OP of the first PSN missing.
 */
MRC_TEST(resp_bad_rq_wqe_fails_at_once)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	/* behind message 0, which is not complete */
	rt_setup(r, 0);
	rt_post_recv(0xd0, 64);
	rt_post_recv_bad(0xd1, 64);
	rt_send(&p, 0, 0, 16, 0, 8, MRC_F_FIRST);
	rt_env_rx(r, &p, rt_pay[0]);
	rt_send(&p, 2, 1, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	rt_env_rx(r, &p, rt_pay[2]);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_FATAL);
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_OP);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 2);
	rt_send(&p, 1, 0, 16, 8, 8, MRC_F_LAST | MRC_F_RETX);
	rt_env_rx(r, &p, rt_pay[1]);
	MRC_EXPECT_FALSE(rt_acked(2));
	MRC_EXPECT_EQ(mk.nrcqe, 2);
	MRC_EXPECT_TRUE(rt_rcqe_is(0, 0xd0, 0, MRC_WC_WR_FLUSH_ERR));
	MRC_EXPECT_TRUE(rt_rcqe_is(1, 0xd1, 1, MRC_WC_LOC_QP_OP_ERR));

	/* at the head, an ACK due at once */
	rt_setup(r, 0);
	rt_post_recv_bad(0xd2, 64);
	rt_send(&p, 0, 0, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST | MRC_F_ACKREQ);
	rt_env_rx(r, &p, rt_pay[0]);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_FALSE(rt_acked(0));
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_OP);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 0);
	MRC_EXPECT_EQ(mk.nrcqe, 1);
	MRC_EXPECT_TRUE(rt_rcqe_is(0, 0xd2, 0, MRC_WC_LOC_QP_OP_ERR));

	/* a WRITE_IMM: its bytes are not written either */
	rt_setup(r, 0);
	rt_post_recv_bad(0xd3, 64);
	rt_fill(rt_pay[0], 8, 4);
	rt_write(&p, 0, MK_VA, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST | MRC_F_ACKREQ);
	p.opcode = MRC_OP_WRITE_IMM;
	p.write.rmsn = 0;
	rt_env_rx(r, &p, rt_pay[0]);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_FALSE(rt_acked(0));
	MRC_EXPECT_TRUE(rt_mem_zero(0, 8));
	MRC_EXPECT_EQ(mk.mr_refs, 0);
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_OP);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 0);
	MRC_EXPECT_EQ(mk.nrcqe, 1);
	MRC_EXPECT_TRUE(rt_rcqe_is(0, 0xd3, 0, MRC_WC_LOC_QP_OP_ERR));

	/* taken ahead: message 2 (PSN 2) first takes WQEs 0, 1 and 2 */
	rt_setup(r, 0);
	rt_post_recv(0xd4, 64);
	rt_post_recv_bad(0xd5, 64);
	rt_post_recv(0xd6, 64);
	rt_send(&p, 2, 2, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	rt_env_rx(r, &p, rt_pay[2]);
	MRC_EXPECT_EQ(mk.nerr, 0);
	rt_send(&p, 0, 0, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	rt_env_rx(r, &p, rt_pay[0]);
	/* message 0 completes, then WQE 1 fails: PSN 1 never came */
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_FALSE(rt_acked(1));
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_OP);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 1);
	MRC_EXPECT_EQ(rt_last_ack()->ack.cum_psn, 1);
	MRC_EXPECT_EQ(mk.nrcqe, 3);
	MRC_EXPECT_TRUE(rt_rcqe_is(0, 0xd4, 0, MRC_WC_SUCCESS));
	MRC_EXPECT_TRUE(rt_rcqe_is(1, 0xd5, 1, MRC_WC_LOC_QP_OP_ERR));
	MRC_EXPECT_TRUE(rt_rcqe_is(2, 0xd6, 2, MRC_WC_WR_FLUSH_ERR));

	/*
	 * Taken ahead and at the head at once, by a packet with an error
	 * of its own (message 1 longer than its WQE): the earlier failure
	 * is the one NAKed, as in PSN order.
	 */
	rt_setup(r, 0);
	rt_post_recv_bad(0xd7, 64);
	rt_post_recv(0xd8, 4);
	rt_send(&p, 1, 1, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	rt_env_rx(r, &p, rt_pay[1]);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_FALSE(rt_acked(0));
	MRC_EXPECT_EQ(rt_naks(), 1);
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_REM_OP);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 0);
	MRC_EXPECT_EQ(mk.nrcqe, 2);
	MRC_EXPECT_TRUE(rt_rcqe_is(0, 0xd7, 0, MRC_WC_LOC_QP_OP_ERR));
	MRC_EXPECT_TRUE(rt_rcqe_is(1, 0xd8, 1, MRC_WC_LOC_LEN_ERR));
}

/*
 * A receive that completes in error when cum reaches it (SEND_WITH_INV
 * whose invalidation fails then) ends the QP; the message after it,
 * complete but waiting, is flushed. The pass must NAK the failed
 * message (INV_REQ: the requester's WQE completes REM_INV_REQ_ERR and
 * the later one is flushed), not send the ACK the arrival owed, whose
 * cum_psn would cover both: the requester would complete both
 * successfully, the second never delivered.
 */
MRC_TEST(resp_error_completion_never_acked)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	rt_post_recv(0xe0, 64);
	rt_post_recv(0xe1, 64);
	rt_send(&p, 1, 1, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	rt_env_rx(r, &p, rt_pay[1]);
	mk.inval_fail = true;
	rt_send_inv(&p, 0, 0);
	rt_env_rx(r, &p, NULL);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_REQ_ERR);
	MRC_EXPECT_FALSE(rt_acked(0));
	MRC_EXPECT_FALSE(rt_acked(1));
	MRC_ASSERT_TRUE(rt_last_ack() != NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 0);
	MRC_EXPECT_EQ(mk.nrcqe, 2);
	MRC_EXPECT_TRUE(rt_rcqe_is(0, 0xe0, 0, MRC_WC_REM_INV_REQ_ERR));
	MRC_EXPECT_TRUE(rt_rcqe_is(1, 0xe1, 1, MRC_WC_WR_FLUSH_ERR));
	/* that NAK lost: the retry is NAKed again */
	p.flags |= MRC_F_RETX;
	rt_env_rx(r, &p, NULL);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 0);
	MRC_EXPECT_FALSE(rt_acked(0));
}

MRC_TEST(resp_ack_policy_and_corrupt_rq)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	u32 i;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	/* 16 in-order WRITE packets: one ACK, at the 16th */
	for (i = 0; i < 16; i++) {
		rt_write(&p, i, MK_VA, 16 * 8, i * 8, 8,
			 (i ? 0 : MRC_F_FIRST) | (i == 15 ? MRC_F_LAST : 0));
		mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
		MRC_EXPECT_EQ(mk.nemit, i == 15 ? 1 : 0);
	}
	MRC_EXPECT_EQ(rt_last_ack()->ack.cum_psn, 16);
	/* beyond the window: not placed, counted */
	rt_write(&p, 16 + MRC_WND, MK_VA, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_OUT_OF_WINDOW], 1);
	MRC_EXPECT_EQ(r->rx.cum, 16);
	/* a corrupt receive ring: the QP ends, nothing placed */
	mk.rq_corrupt = true;
	rt_send(&p, 16, 0, 8, 0, 8, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(r->rx.cum, 16);
	/* a response to our own READ goes to the completer */
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_ATOMIC_RESP;
	p.flags = MRC_F_FIRST | MRC_F_LAST;
	p.psn = 16;
	MRC_EXPECT_EQ(mrc_resp_rx(r, &mk_e, &p, NULL, false), MRC_RESP_TX);
	MRC_EXPECT_EQ(mk.comp_resp, 1);
	MRC_EXPECT_EQ(mk.comp_progress, 1);
	MRC_EXPECT_EQ(r->rx.cum, 17);
}

/* Every state of the packet machine was reached by the cases above. */
/* ---------------------------------------------------------------- UC */

/* A UC responder at PSN @isn (protocol.rst "Unreliable connected"). */
static void rt_uc_setup(struct mrc_resp *r, u32 isn)
{
	rt_setup(r, isn);
	r->cfg.uc = 1;
}

static void rt_uc_send(struct mrc_pkt *p, u32 psn, u32 msn, u32 msg_len,
		       u32 off, u16 len, u8 flags)
{
	rt_send(p, psn, msn, msg_len, off, len, flags | MRC_F_UC);
}

/* No ACK, NAK, timer, held packet or QP error ever. */
#define RT_UC_QUIET() do {				\
	MRC_EXPECT_EQ(mk.nemit, 0);			\
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_ACK]);			\
	MRC_EXPECT_EQ(mk.nerr, 0);			\
	MRC_EXPECT_EQ(mk.released, 0);			\
} while (0)

static void rt_read(struct mrc_pkt *p, u32 psn, u8 flags)
{
	memset(p, 0, sizeof(*p));
	p->opcode = MRC_OP_READ_REQ;
	p->flags = MRC_F_FIRST | MRC_F_LAST | flags;
	p->psn = psn;
	p->read.va = MK_VA;
	p->read.rkey = MK_RKEY;
	p->read.len = 8;
}

/*
 * protocol.rst "ACK policy": a READ/atomic answered at once is not
 * acknowledged on its own -- its response's first packet carries the ACK
 * (mrc_resp_rsp_acks) -- but one queued behind another, one after a
 * hole, a retransmitted one, or one whose response comes too late (more
 * arrived since) is; a response's LAST packet waits for the delayed ACK
 * unless it asks (ACKREQ) or a hole is open.
 */
MRC_TEST(resp_read_ack_rides_on_response)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	u8 pay[8] = { 0 };

	MRC_ALLOC(r);
	rt_setup(r, 100);
	/*
	 * alone and ready: no ACK now, and no delayed-ACK timer while the
	 * pass that sends the response runs (mrc_resp_ack_settle())
	 */
	rt_read(&p, 100, MRC_F_ACKREQ);
	MRC_EXPECT_EQ(mrc_resp_rx(r, &mk_e, &p, pay, false) & MRC_RESP_TX,
		      MRC_RESP_TX);
	MRC_EXPECT_EQ(mk.nemit, 0);
	MRC_EXPECT_TRUE(mrc_rx_ack_pending(&r->rx));
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_ACK]);
	/* the response to another PSN carries nothing */
	mrc_resp_rsp_acks(r, &mk_e, 99);
	MRC_EXPECT_TRUE(mrc_rx_ack_pending(&r->rx));
	/* its own response's first packet does: nothing left to send */
	mrc_resp_rsp_acks(r, &mk_e, 100);
	MRC_EXPECT_FALSE(mrc_rx_ack_pending(&r->rx));
	mrc_resp_ack_settle(r, &mk_e);		/* the end of the pass */
	MRC_EXPECT_FALSE(mk.armed[MRC_TIMER_ACK]);
	mrc_resp_ack_timer(r, &mk_e);
	MRC_EXPECT_EQ(mk.nemit, 0);

	/* behind a queued READ: acknowledged at once */
	rt_read(&p, 101, MRC_F_ACKREQ);
	mrc_resp_rx(r, &mk_e, &p, pay, false);
	MRC_EXPECT_EQ(mk.nemit, 1);
	MRC_EXPECT_EQ(mk.emit[0].ack.cum_psn, 102);
	mrc_rspq_clear(&r->rspq);

	/* a retransmitted request: at once */
	rt_read(&p, 102, MRC_F_ACKREQ | MRC_F_RETX);
	mrc_resp_rx(r, &mk_e, &p, pay, false);
	MRC_EXPECT_EQ(mk.nemit, 2);
	mrc_rspq_clear(&r->rspq);

	/* after a hole (PSN 103 missing): at once, with the SACK */
	rt_read(&p, 104, MRC_F_ACKREQ);
	mrc_resp_rx(r, &mk_e, &p, pay, false);
	MRC_EXPECT_EQ(mk.nemit, 3);
	MRC_EXPECT_EQ(mk.emit[2].ack.cum_psn, 103);
	MRC_EXPECT_EQ(mk.emit[2].ack.sack[0], 0x02);
	mrc_rspq_clear(&r->rspq);
	rt_write(&p, 103, MK_VA, 0, 0, 0, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, pay, false);
	MRC_EXPECT_EQ(mk.nemit, 4);

	/* deferred, but a packet arrived before the response: the ACK stays */
	rt_read(&p, 105, MRC_F_ACKREQ);
	mrc_resp_rx(r, &mk_e, &p, pay, false);
	MRC_EXPECT_EQ(mk.nemit, 4);
	rt_write(&p, 107, MK_VA, 8, 0, 0, MRC_F_FIRST);
	p.write.msg_len = 16;
	p.payload_len = 8;
	mrc_resp_rx(r, &mk_e, &p, pay, false);
	mrc_resp_rsp_acks(r, &mk_e, 105);
	mrc_resp_ack_settle(r, &mk_e);		/* the end of the pass */
	MRC_EXPECT_TRUE(mrc_rx_ack_pending(&r->rx));
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_ACK]);
	mrc_resp_ack_timer(r, &mk_e);
	MRC_EXPECT_EQ(mk.nemit, 5);	/* the delayed ACK, with the SACK */
	MRC_EXPECT_EQ(mk.emit[4].ack.cum_psn, 106);
	mrc_rspq_clear(&r->rspq);
	rt_setup(r, 300);

	/* a response's LAST packet: delayed ACK ... */
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_READ_RESP;
	p.flags = MRC_F_FIRST | MRC_F_LAST;
	p.psn = 300;
	p.rresp.req_psn = 7;
	mrc_resp_rx(r, &mk_e, &p, pay, false);
	MRC_EXPECT_EQ(mk.comp_resp, 1);
	MRC_EXPECT_EQ(mk.nemit, 0);
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_ACK]);
	/* ... at once with ACKREQ (an earlier revision's responder) */
	p.psn = 301;
	p.flags |= MRC_F_ACKREQ;
	mrc_resp_rx(r, &mk_e, &p, pay, false);
	MRC_EXPECT_EQ(mk.nemit, 1);
	MRC_EXPECT_EQ(mk.emit[0].ack.cum_psn, 302);
	/* ... and at once while a hole is open */
	p.psn = 303;
	p.flags = MRC_F_FIRST | MRC_F_LAST;
	mrc_resp_rx(r, &mk_e, &p, pay, false);
	MRC_EXPECT_EQ(mk.nemit, 2);
	MRC_EXPECT_EQ(mk.nerr, 0);
}

/* A READ or atomic request at @psn, on path 1 (PPSN 100 + psn). */
static void rt_rd_atomic(struct mrc_pkt *p, u32 psn, u8 opcode)
{
	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->flags = MRC_F_FIRST | MRC_F_LAST;
	p->psn = psn;
	p->path_id = 1;
	p->ppsn = 100 + psn;
	p->tsval = 5000 + psn;
	if (opcode == MRC_OP_READ_REQ) {
		p->read.va = MK_VA;
		p->read.rkey = MK_RKEY;
		p->read.len = 8;
	} else {
		p->atomic.va = MK_VA + 8 * (psn % 16);
		p->atomic.rkey = MK_RKEY;
		p->atomic.swap_add = 1;
	}
}

/*
 * The requester passes that build the queued READ/atomic responses, in
 * order, then what follows them (mrc_resp_rsp_abort: a failed request
 * waiting for them is NAKed). Returns how many were answered.
 */
static u32 rt_answer_all(struct mrc_resp *r)
{
	u32 n = 0;

	while (mrc_resp_rsp_ready(r)) {
		if (mrc_resp_rsp_exec(r, &mk_e, mrc_rspq_head(&r->rspq)))
			break;
		mrc_rspq_pop(&r->rspq);
		n++;
	}
	mrc_resp_rsp_abort(r, &mk_e);
	return n;
}

/*
 * Issue 10, 1f. IB (and protocol.rst "Responder rules"): a responder
 * queues at most its QP's max_dest_rd_atomic READ/atomic requests; one
 * more -- not a duplicate -- is an invalid request: NAK INV_REQ for its
 * PSN, which is not committed, the request is not queued or executed,
 * and the QP moves to ERR with a request error event. A queue entry is
 * freed once its responses are built (mrc_rspq_pop), so the limit counts
 * the requests not yet answered. Checked at the advertised maximum, 16
 * (max_qp_rd_atom), with the 17th a READ and an atomic, and at 1.
 */
MRC_TEST(resp_rd_atomic_beyond_max_dest_rd_atomic)
{
	/* protocol.rst BTH, ACKH and path record, field by field */
	static const u8 want[24 + 56] = {
		/* BTH: version 3, ACK, flags 0, epoch 0, path 1 */
		3, MRC_OP_ACK, 0, 1,
		0, 0, 0, 7,		/* dst_qpn */
		0, 0, 0, 0,		/* psn */
		0, 0, 0, 0,		/* ppsn */
		0, 0, 0, 0,		/* tsval: set by the environment */
		0, 0,			/* payload_len */
		0, 0,			/* cum_lo: no CUMACK on an ACK */
		/* ACKH */
		0, 0, 0, 16,		/* cum_psn: the 17th is not received */
		0, 0, 0, 16,		/* nak_psn: the 17th */
		0, 0, 0x13, 0x98,	/* tsecr: its tsval, 5016 */
		0, 0,			/* ack_delay */
		0, 0,			/* fair_share */
		1, 0,			/* rwnd: 256, nothing beyond cum */
		MRC_SYN_INV_REQ, 1,	/* syndrome 2, ts_path */
		/*
		 * npaths 0: the path record went with the ACK sent when
		 * the 17th arrived; the NAK follows the 16 responses
		 */
		0, 12,			/* npaths, rnr_timer (v3: every ACK) */
		0, 0,			/* dsack_off */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,	/* sack */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	/* static: KUnit's 2048-byte frame limit */
	static u8 mem[MK_MEM];
	u8 buf[sizeof(want) + 16];
	const struct mrc_pkt *a;
	struct mrc_resp *r;
	struct mrc_pkt p;
	u32 i, n0;
	int len;

	MRC_ALLOC(r);
	rt_setup(r, 0);
	r->cfg.max_dest_rd_atomic = MRC_RSPQ_SLOTS;
	MRC_ASSERT_TRUE(MRC_RSPQ_SLOTS == 16);
	rt_fill(mk.mem, 128, 3);
	memcpy(mem, mk.mem, MK_MEM);
	/* 16 outstanding: READs and atomics alternately, all accepted */
	for (i = 0; i < 16; i++) {
		rt_rd_atomic(&p, i, i % 2 ? MRC_OP_FETCH_ADD : MRC_OP_READ_REQ);
		mrc_resp_rx(r, &mk_e, &p, NULL, false);
		MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), i + 1);
	}
	MRC_EXPECT_EQ(mk.nerr, 0);
	/* a retransmission of a queued one is a duplicate, not a 17th */
	rt_rd_atomic(&p, 5, MRC_OP_FETCH_ADD);
	p.flags |= MRC_F_RETX;
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 16);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_ACK);
	/*
	 * the 17th, a READ: refused, not queued; NAKed in PSN order, after
	 * the 16 accepted before it are answered (the 8 atomics run once)
	 */
	n0 = mk.nemit;
	rt_rd_atomic(&p, 16, MRC_OP_READ_REQ);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 16);
	MRC_EXPECT_EQ(mrc_rspq_head(&r->rspq)->req_psn, 0);
	MRC_EXPECT_EQ(r->rx.cum, 16);
	MRC_EXPECT_EQ(mrc_rx_check(&r->rx, 16), MRC_RX_NEW);
	MRC_EXPECT_EQ(mk.atomics, 0);
	MRC_EXPECT_MEMEQ(mk.mem, mem, MK_MEM);
	/* at most an ACK of what is here (cum 16), no NAK yet */
	MRC_EXPECT_TRUE(mk.nemit == n0 ||
			(mk.nemit == n0 + 1 &&
			 rt_last_ack()->ack.syndrome == MRC_SYN_ACK &&
			 rt_last_ack()->ack.cum_psn == 16));
	n0 = mk.nemit;
	MRC_EXPECT_EQ(rt_answer_all(r), 16);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_REQ_ERR);
	MRC_EXPECT_EQ(mk.atomics, 8);
	MRC_ASSERT_TRUE(mk.nemit == n0 + 1);
	a = rt_last_ack();
	MRC_ASSERT_TRUE(a != NULL);
	len = mrc_hdr_build(a, buf, sizeof(buf));
	MRC_EXPECT_EQ(len, (int)sizeof(want));
	MRC_EXPECT_MEMEQ(buf, want, sizeof(want));
	/* the QP is in ERR: a retry of the 17th is NAKed again */
	mrc_resp_stop(r);
	p.flags |= MRC_F_RETX;
	MRC_EXPECT_TRUE(mrc_resp_renak(r, &mk_e, &p));
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 16);
	/* the ERR transition's flush: nothing queued runs again */
	mrc_resp_flush(r, &mk_e, 0);
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 0);
	MRC_EXPECT_FALSE(mrc_resp_rsp_ready(r));
	MRC_EXPECT_TRUE(mrc_rspq_head(&r->rspq) == NULL);
	MRC_EXPECT_EQ(mk.atomics, 8);
	MRC_EXPECT_EQ(mk.nerr, 1);

	/* the 17th an atomic: not executed, memory untouched */
	rt_setup(r, 0);
	r->cfg.max_dest_rd_atomic = MRC_RSPQ_SLOTS;
	rt_fill(mk.mem, 128, 3);
	for (i = 0; i < 16; i++) {
		rt_rd_atomic(&p, i, MRC_OP_READ_REQ);
		mrc_resp_rx(r, &mk_e, &p, NULL, false);
	}
	MRC_EXPECT_EQ(mk.nerr, 0);
	rt_rd_atomic(&p, 16, MRC_OP_CMP_SWAP);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(rt_answer_all(r), 16);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 16);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_REQ_ERR);
	MRC_EXPECT_EQ(mk.atomics, 0);
	MRC_EXPECT_MEMEQ(mk.mem, mem, MK_MEM);

	/* the limit counts requests not answered: one answered, one more */
	rt_setup(r, 0);
	r->cfg.max_dest_rd_atomic = MRC_RSPQ_SLOTS;
	for (i = 0; i < 16; i++) {
		rt_rd_atomic(&p, i, MRC_OP_READ_REQ);
		mrc_resp_rx(r, &mk_e, &p, NULL, false);
	}
	MRC_ASSERT_TRUE(mrc_resp_rsp_ready(r));
	MRC_EXPECT_EQ(mrc_resp_rsp_exec(r, &mk_e, mrc_rspq_head(&r->rspq)),
		      0);
	mrc_rspq_pop(&r->rspq);		/* its responses are built */
	rt_rd_atomic(&p, 16, MRC_OP_FETCH_ADD);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(mrc_rspq_len(&r->rspq), 16);
	rt_rd_atomic(&p, 17, MRC_OP_READ_REQ);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(rt_answer_all(r), 16);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 17);

	/* a QP that accepts one: the second is refused */
	rt_setup(r, 0);
	r->cfg.max_dest_rd_atomic = 1;
	rt_rd_atomic(&p, 0, MRC_OP_READ_REQ);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	rt_rd_atomic(&p, 1, MRC_OP_FETCH_ADD);
	mrc_resp_rx(r, &mk_e, &p, NULL, false);
	MRC_EXPECT_EQ(mk.nerr, 0);
	MRC_EXPECT_EQ(rt_answer_all(r), 1);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.err_event, MRC_QPE_REQ_ERR);
	MRC_EXPECT_EQ(rt_last_ack()->ack.syndrome, MRC_SYN_INV_REQ);
	MRC_EXPECT_EQ(rt_last_ack()->ack.nak_psn, 1);
	MRC_EXPECT_EQ(mk.atomics, 0);
}

MRC_TEST(resp_uc_send_any_order_within_message)
{
	static const u8 order[3] = { 2, 0, 1 };
	struct mrc_resp *r;
	struct mrc_pkt p;
	u8 want[240];
	u32 i, k;

	MRC_ALLOC(r);
	rt_uc_setup(r, 0xfffffffe);		/* PSNs wrap */
	rt_post_recv(0xa, MK_RBUF);
	for (i = 0; i < 3; i++) {
		rt_fill(rt_pay[i], 80, (u8)(10 * i + 1));
		memcpy(want + 80 * i, rt_pay[i], 80);
	}
	for (i = 0; i < 3; i++) {
		k = order[i];
		rt_uc_send(&p, 0xfffffffe + k, 0, 240, 80 * k, 80,
			   (k == 0 ? MRC_F_FIRST : 0) |
			   (k == 2 ? MRC_F_LAST | MRC_F_SOLICIT : 0));
		MRC_EXPECT_EQ(mrc_resp_rx(r, &mk_e, &p, rt_pay[k], false), 0);
		MRC_EXPECT_EQ(mk.nrcqe, i == 2 ? 1 : 0);
	}
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0xa);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_SUCCESS);
	MRC_EXPECT_EQ(mk.rcqe[0].opcode, MRC_WC_RECV);
	MRC_EXPECT_EQ(mk.rcqe[0].byte_len, 240);
	MRC_EXPECT_EQ(mk.rcqe[0].solicited, 1);
	MRC_EXPECT_MEMEQ(mk.slot_buf[mk.rcqe[0].slot], want, 240);
	/* a duplicate of a completed message's packet changes nothing */
	MRC_EXPECT_EQ(mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false), 0);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_DUPLICATE], 1);
	MRC_EXPECT_EQ(mk.nrcqe, 1);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_UC_DROP], 0);
	RT_UC_QUIET();
}

/*
 * A packet of message 0 is lost: message 1's first packet gives it up
 * (counted); the receive WQE it had taken is not consumed and receives
 * message 1.
 */
MRC_TEST(resp_uc_lost_packet_wqe_reused)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_uc_setup(r, 100);
	rt_post_recv(0xa, MK_RBUF);
	rt_post_recv(0xb, MK_RBUF);
	rt_fill(rt_pay[0], 100, 1);
	rt_fill(rt_pay[1], 100, 2);
	rt_fill(rt_pay[2], 50, 3);
	rt_uc_send(&p, 100, 0, 200, 0, 100, MRC_F_FIRST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	/* PSN 101 (offset 100, LAST) is lost */
	rt_uc_send(&p, 102, 1, 50, 0, 50, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[2], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_UC_DROP], 1);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0xa);
	MRC_EXPECT_EQ(mk.rcqe[0].byte_len, 50);
	MRC_EXPECT_MEMEQ(mk.slot_buf[mk.rcqe[0].slot], rt_pay[2], 50);
	MRC_EXPECT_EQ(mk.rq_taken, 1);
	/* the lost packet arriving late belongs to a given-up message */
	rt_uc_send(&p, 101, 0, 200, 100, 100, MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_EQ(mk.nrcqe, 1);
	MRC_EXPECT_EQ(mk.rq_taken, 1);
	/* messages 2 and 3 lost whole: counted when 4 arrives */
	rt_uc_send(&p, 110, 4, 100, 0, 100, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_UC_DROP], 3);
	MRC_ASSERT_TRUE(mk.nrcqe == 2);
	MRC_EXPECT_EQ(mk.rcqe[1].wr_id, 0xb);
	MRC_EXPECT_MEMEQ(mk.slot_buf[mk.rcqe[1].slot], rt_pay[0], 100);
	RT_UC_QUIET();
}

/* No receive WQE, or one too small: dropped and counted, no RNR/NAK. */
MRC_TEST(resp_uc_no_wqe_too_long_dropped)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_uc_setup(r, 0);
	rt_fill(rt_pay[0], 100, 7);
	rt_uc_send(&p, 0, 0, 100, 0, 100, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_UC_DROP], 1);
	/* too long for the WQE: dropped, the WQE stays for the next */
	rt_post_recv(0xc, 60);
	rt_uc_send(&p, 1, 1, 100, 0, 100, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_UC_DROP], 2);
	rt_uc_send(&p, 2, 2, 60, 0, 60, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0xc);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_SUCCESS);
	MRC_EXPECT_MEMEQ(mk.slot_buf[mk.rcqe[0].slot], rt_pay[0], 60);
	/* a zero-length SEND with SEND_IMM */
	rt_post_recv(0xd, 8);
	rt_uc_send(&p, 3, 3, 0, 0, 0, MRC_F_FIRST | MRC_F_LAST);
	p.opcode = MRC_OP_SEND_IMM;
	p.send.imm = 0x01020304;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(mk.nrcqe == 2);
	MRC_EXPECT_EQ(mk.rcqe[1].byte_len, 0);
	MRC_EXPECT_EQ(mk.rcqe[1].wc_flags, MRC_WCF_WITH_IMM);
	MRC_EXPECT_EQ(get_unaligned_be32(&mk.rcqe[1].imm), 0x01020304);
	RT_UC_QUIET();
}

MRC_TEST(resp_uc_write_rules)
{
	struct mrc_resp *r;
	struct mrc_pkt p;
	u8 zero[100];

	MRC_ALLOC(r);
	rt_uc_setup(r, 50);
	memset(zero, 0, sizeof(zero));
	rt_fill(rt_pay[0], 100, 5);
	rt_fill(rt_pay[1], 100, 6);
	/* two packets, last first */
	rt_write(&p, 51, MK_VA + 8, 200, 100, 100, MRC_F_LAST | MRC_F_UC);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	rt_write(&p, 50, MK_VA + 8, 200, 0, 100, MRC_F_FIRST | MRC_F_UC);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_MEMEQ(mk.mem + 8, rt_pay[0], 100);
	MRC_EXPECT_MEMEQ(mk.mem + 108, rt_pay[1], 100);
	MRC_EXPECT_EQ(mk.nrcqe, 0);		/* WRITE completes nothing */
	/* WRITE_IMM: a receive completion with the immediate */
	rt_post_recv(0xe, 0);
	rt_write(&p, 52, MK_VA + 1000, 100, 0, 100,
		 MRC_F_FIRST | MRC_F_LAST | MRC_F_UC);
	p.opcode = MRC_OP_WRITE_IMM;
	p.write.rmsn = 1;
	p.write.imm = 0xdeadbeef;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(mk.nrcqe == 1);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0xe);
	MRC_EXPECT_EQ(mk.rcqe[0].opcode, MRC_WC_RECV_RDMA_WITH_IMM);
	MRC_EXPECT_EQ(mk.rcqe[0].byte_len, 100);
	MRC_EXPECT_EQ(get_unaligned_be32(&mk.rcqe[0].imm), 0xdeadbeef);
	MRC_EXPECT_MEMEQ(mk.mem + 1000, rt_pay[0], 100);
	/* bad rkey, out of range, no MR right: dropped, no NAK, QP lives */
	rt_write(&p, 53, MK_VA + 2000, 100, 0, 100,
		 MRC_F_FIRST | MRC_F_LAST | MRC_F_UC);
	p.write.rmsn = 2;
	p.write.rkey = MK_RKEY + 1;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	rt_write(&p, 54, MK_VA + MK_MEM - 50, 100, 0, 100,
		 MRC_F_FIRST | MRC_F_LAST | MRC_F_UC);
	p.write.rmsn = 3;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_UC_DROP], 2);
	MRC_EXPECT_MEMEQ(mk.mem + 2000, zero, 100);
	MRC_EXPECT_MEMEQ(mk.mem + MK_MEM - 50, zero, 50);
	/* the QP does not grant REMOTE_WRITE: dropped too */
	r->cfg.qp_access = MRC_ACC_REMOTE_READ;
	rt_write(&p, 55, MK_VA + 2000, 100, 0, 100,
		 MRC_F_FIRST | MRC_F_LAST | MRC_F_UC);
	p.write.rmsn = 4;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_UC_DROP], 3);
	MRC_EXPECT_MEMEQ(mk.mem + 2000, zero, 100);
	MRC_EXPECT_EQ(mk.mr_refs, 0);
	/* WRITE_IMM with no receive WQE: data placed, message counted */
	r->cfg.qp_access = MRC_ACC_REMOTE_WRITE;
	rt_write(&p, 56, MK_VA + 3000, 100, 0, 100,
		 MRC_F_FIRST | MRC_F_LAST | MRC_F_UC);
	p.opcode = MRC_OP_WRITE_IMM;
	p.write.rmsn = 5;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[1], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_UC_DROP], 4);
	MRC_EXPECT_EQ(mk.nrcqe, 1);
	RT_UC_QUIET();
}

/*
 * Duplicates never count twice, PSNs far behind are refused, PSNs far
 * ahead accepted; a packet without the UC flag or one that contradicts
 * its message's first packet is not placed; flush completes the WQE a
 * given-up SEND left taken.
 */
MRC_TEST(resp_uc_filter_and_flush)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_uc_setup(r, 1000);
	rt_post_recv(0xa, MK_RBUF);
	rt_post_recv(0xb, MK_RBUF);
	rt_fill(rt_pay[0], 100, 9);
	/* before rq_psn: counted as received */
	rt_uc_send(&p, 999, 0, 100, 0, 100, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_DUPLICATE], 1);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	/* the same first packet twice: 100 + 100 is not the message */
	rt_uc_send(&p, 1000, 0, 200, 0, 100, MRC_F_FIRST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_DUPLICATE], 2);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	/* RC packet on a UC QP: ignored */
	rt_send(&p, 1001, 0, 200, 100, 100, MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	/* contradicts the first packet (msg_len): the message is dropped */
	rt_uc_send(&p, 1001, 0, 300, 100, 100, MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_UC_DROP], 1);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	/* far ahead: accepted (the sender never waits) */
	rt_uc_send(&p, 1000 + 5 * MRC_WND, 1, 200, 0, 100, MRC_F_FIRST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	/* now 1001 + 1 is more than a window behind */
	rt_uc_send(&p, 1002, 1, 200, 100, 100, MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.cnt[MRC_CNT_OUT_OF_WINDOW], 1);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	MRC_EXPECT_EQ(mk.rq_taken, 1);
	RT_UC_QUIET();
	/* ERR: the WQE held for the given-up SEND is flushed, then the rest */
	mrc_resp_flush(r, &mk_e, 4);
	MRC_ASSERT_TRUE(mk.nrcqe == 2);
	MRC_EXPECT_EQ(mk.rcqe[0].wr_id, 0xa);
	MRC_EXPECT_EQ(mk.rcqe[0].status, MRC_WC_WR_FLUSH_ERR);
	MRC_EXPECT_EQ(mk.rcqe[1].wr_id, 0xb);
	MRC_EXPECT_EQ(mk.rcqe[1].status, MRC_WC_WR_FLUSH_ERR);
}

/* A corrupted receive queue is a local error: the QP fails. */
MRC_TEST(resp_uc_local_error)
{
	struct mrc_resp *r;
	struct mrc_pkt p;

	MRC_ALLOC(r);
	rt_uc_setup(r, 0);
	mk.rq_corrupt = true;
	rt_uc_send(&p, 0, 0, 10, 0, 10, MRC_F_FIRST | MRC_F_LAST);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.nerr, 1);
	MRC_EXPECT_EQ(mk.nrcqe, 0);
	MRC_EXPECT_EQ(mk.nemit, 0);
}

MRC_TEST(resp_states_covered)
{
	u32 i;

	/* a failure names the state: 100 * state + 1 expected */
	for (i = MRC_RESP_CLASSIFY; i < MRC_RESP_NSTATES; i++)
		MRC_EXPECT_EQ(100 * i + mk.seen[MRC_ENG_RESP][i], 100 * i + 1);
	MRC_EXPECT_TRUE(strcmp(mrc_resp_state_name(MRC_RESP_HOLD), "hold") ==
			0);
}

/*
 * Version 2: a new packet's cum_lo goes to the completer (before the
 * packet is placed); a duplicate's does not (it may be a leftover of an
 * earlier life of the QP). A sequenced packet sent replaces the pending
 * ACK at most MRC_CUMACK_MAX times in a row; then the ACK goes anyway
 * (echo and path records for the peer), and never with SACK news.
 */
MRC_TEST(resp_cumack_rx_and_carry_limit)
{
	struct mrc_resp *r;
	struct mrc_pkt p, d;
	u32 i;

	MRC_ALLOC(r);
	rt_setup(r, 100);
	rt_post_recv(0xa, MK_RBUF);
	rt_fill(rt_pay[0], 10, 1);
	rt_send(&p, 100, 0, 10, 0, 10, MRC_F_FIRST | MRC_F_LAST);
	p.flags |= MRC_F_CUMACK;
	p.cum_lo = 0x1234;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_EXPECT_EQ(mk.comp_cum, 1);
	MRC_EXPECT_EQ(mk.nrcqe, 1);
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);	/* duplicate */
	MRC_EXPECT_EQ(mk.comp_cum, 1);
	mrc_resp_ack_timer(r, &mk_e);
	MRC_EXPECT_FALSE(mrc_rx_ack_pending(&r->rx));

	/* an outgoing packet, as the environment builds it */
	memset(&d, 0, sizeof(d));
	d.opcode = MRC_OP_WRITE;
	for (i = 0; i <= MRC_CUMACK_MAX; i++) {
		memset(&p, 0, sizeof(p));
		p.opcode = MRC_OP_READ_RESP;	/* not awaited: committed */
		p.flags = MRC_F_FIRST;
		p.psn = 101 + i;
		mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
		MRC_ASSERT_TRUE(mrc_rx_ack_pending(&r->rx));
		d.flags = 0;
		mrc_resp_cum_fill(r, &d);
		MRC_EXPECT_EQ(d.flags, MRC_F_CUMACK);
		MRC_EXPECT_EQ(d.cum_lo, 102 + i);
		mrc_resp_cum_sent(r, &mk_e, &d);
		/* the 17th is not replaced */
		MRC_EXPECT_EQ(mrc_rx_ack_pending(&r->rx),
			      i == MRC_CUMACK_MAX);
	}
	MRC_EXPECT_TRUE(mk.armed[MRC_TIMER_ACK]);
	mrc_resp_ack_timer(r, &mk_e);
	MRC_EXPECT_EQ(mk.emit[mk.nemit - 1].ack.cum_psn, 118);
	/* a hole: the ACK has SACK news, the packet does not replace it */
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_READ_RESP;
	p.flags = MRC_F_FIRST;
	p.psn = 119;
	mrc_resp_rx(r, &mk_e, &p, rt_pay[0], false);
	MRC_ASSERT_TRUE(mrc_rx_ack_pending(&r->rx));
	d.flags = 0;
	mrc_resp_cum_fill(r, &d);
	mrc_resp_cum_sent(r, &mk_e, &d);
	MRC_EXPECT_EQ(d.cum_lo, 118);
	MRC_EXPECT_TRUE(mrc_rx_ack_pending(&r->rx));
	/* UC QPs carry nothing */
	r->cfg.uc = 1;
	d.flags = MRC_F_UC;
	mrc_resp_cum_fill(r, &d);
	MRC_EXPECT_EQ(d.flags, MRC_F_UC);
}

MRC_SUITE(responder,
	  MRC_CASE(resp_send_in_order),
	  MRC_CASE(resp_cumack_rx_and_carry_limit),
	  MRC_CASE(resp_rnr_then_resend),
	  MRC_CASE(resp_rnr_voids_the_rest_of_its_epoch),
	  MRC_CASE(resp_voided_request_not_access_checked),
	  MRC_CASE(resp_write_last_held),
	  MRC_CASE(resp_held_write_mr_gone_fails_visibly),
	  MRC_CASE(resp_write_seg_size_change_refused),
	  MRC_CASE(resp_write_seg_size_change_held_last),
	  MRC_CASE(resp_write_order_later_psn_wins),
	  MRC_CASE(resp_write_order_aliased_keys),
	  MRC_CASE(resp_read_waits_for_earlier_write),
	  MRC_CASE(resp_atomic_once),
	  MRC_CASE(resp_access_errors),
	  MRC_CASE(resp_zero_length_no_rkey_check),
	  MRC_CASE(resp_fatal_nak_after_queued_read),
	  MRC_CASE(resp_fatal_nak_wait_bounded_by_timeouts),
	  MRC_CASE(resp_fatal_nak_committed_not_deferred),
	  MRC_CASE(resp_fatal_nak_waits_for_earlier_psns),
	  MRC_CASE(resp_fatal_nak_waiting_superseded),
	  MRC_CASE(resp_completion_order),
	  MRC_CASE(resp_send_inv_and_imm),
	  MRC_CASE(resp_no_success_after_error_completion),
	  MRC_CASE(resp_write_after_send_inv_refused),
	  MRC_CASE(resp_write_after_pending_send_inv_not_placed),
	  MRC_CASE(resp_write_before_send_inv_arrives_lands),
	  MRC_CASE(resp_read_after_pending_send_inv_fails),
	  MRC_CASE(resp_flush_and_reset),
	  MRC_CASE(resp_copy_error_behind_incomplete_fails_at_once),
	  MRC_CASE(resp_copy_error_nak_lost_never_acked),
	  MRC_CASE(resp_flush_keeps_wqe_error_status),
	  MRC_CASE(resp_bad_rq_wqe_fails_at_once),
	  MRC_CASE(resp_error_completion_never_acked),
	  MRC_CASE(resp_ack_policy_and_corrupt_rq),
	  MRC_CASE(resp_read_ack_rides_on_response),
	  MRC_CASE(resp_rd_atomic_beyond_max_dest_rd_atomic),
	  MRC_CASE(resp_uc_send_any_order_within_message),
	  MRC_CASE(resp_uc_lost_packet_wqe_reused),
	  MRC_CASE(resp_uc_no_wqe_too_long_dropped),
	  MRC_CASE(resp_uc_write_rules),
	  MRC_CASE(resp_uc_filter_and_flush),
	  MRC_CASE(resp_uc_local_error),
	  MRC_CASE(resp_states_covered));
