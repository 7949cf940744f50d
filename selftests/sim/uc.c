// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario "uc": an unreliable-connected QP pair (protocol.rst
 * "Unreliable connected (UC)") through the fabric's faults. The sender is
 * the core requester in UC mode (requester.c, cfg.uc) with the core
 * completer; the receiver the core responder in UC mode (responder.c,
 * cfg.uc). A random stream of SEND, SEND_IMM, WRITE and WRITE_IMM
 * messages (1 .. 4 packets, some empty), each WRITE to a region of its
 * own; the receive queue always has WQEs, now and then too small ones.
 *
 * Invariants: every send WQE completes successfully, in order, within
 * the time bound (no hang; nothing is acknowledged); the responder never
 * emits a packet (no ACK, NAK) nor errors; every receive completion is a
 * message that was sent, after the previous one, with exactly its bytes
 * (a too-small WQE never completes, the message is dropped); a WRITE_IMM
 * completion finds its region exact; nothing is written outside the MR
 * or outside the region of a WRITE that was sent; completions plus
 * counted drops never exceed the messages, and without loss or
 * corruption every message arrives.
 */
#include "ep.h"

#if defined(SIM_HAVE_RESP) && defined(SIM_HAVE_COMP) && defined(SIM_HAVE_REQ)
#include "responder.h"
#include "requester.h"
#include "completer.h"

#define UC_MAX_WR	400
#define UC_NSWQ		512
#define UC_SWQE		(sizeof(struct mrc_swqe) + 64)
#define UC_RQ		1024
#define UC_REGION	4096		/* bytes of the MR per WRITE */
#define UC_QPN_A	200
#define UC_QPN_B	201

struct uc_wr {
	u8 op;			/* MRC_OP_SEND .. WRITE_IMM */
	u32 len;
	u32 imm;
	u8 data[4 * EP_MTU_MAX];
};

struct uc_world {
	struct mrc_req req;
	struct mrc_resp resp;
	struct mrc_resp resp_a;	/* the sender QP's own (UC) receive side */
	u8 swq[UC_NSWQ * UC_SWQE];
	struct uc_wr wr[UC_MAX_WR];
	u32 nwr, posted, completed;
	u8 *mem;		/* the receiver's MR: nwr regions */
	u32 mem_len;
	/* receive queue: WQEs of random sizes */
	u32 rq_posted, rq_taken;
	u32 rq_len[UC_RQ];
	u32 slot_wqe[MRC_RSLOTS];
	u8 slot_buf[MRC_RSLOTS][4 * EP_MTU_MAX];
	u32 rcqe, last_k, drops;
	bool any_rcqe;
	u64 next_tx;
};

static struct uc_world *U;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

static u64 uc_now(void *ctx)
{
	return W.now;
}

static void uc_emit(void *ctx, const struct mrc_pkt *p,
		    const struct mrc_src *src, unsigned int flags)
{
	sim_fail("uc: the responder sent opcode %u (UC never answers)",
		 p->opcode);
}

static void uc_release(void *ctx, const void *pkt)
{
	sim_fail("uc: a held packet was released (UC holds nothing)");
}

static void *uc_mr_get(void *ctx, u32 key, bool remote, u32 access, u64 va,
		       u64 len)
{
	if (key != 1 || va + len > U->mem_len)
		return NULL;
	return U->mem;
}

static void uc_mr_put(void *ctx, void *mr)
{
}

static const u8 *uc_src(const struct mrc_src *src)
{
	return (const u8 *)(src->buf ? src->buf : src->pkt) + src->off;
}

static int uc_mr_write(void *ctx, void *mr, u64 va, const struct mrc_src *s,
		       u32 len)
{
	u32 k = (u32)(va / UC_REGION);

	SIM_CHECK(va + len <= U->mem_len, "uc: write beyond the MR");
	SIM_CHECK(k < U->posted && (U->wr[k].op == MRC_OP_WRITE ||
				    U->wr[k].op == MRC_OP_WRITE_IMM) &&
		  va + len <= (u64)k * UC_REGION + U->wr[k].len,
		  "uc: bytes written outside WRITE %u's region", k);
	memcpy(U->mem + va, uc_src(s), len);
	return MRC_COPY_OK;
}

static int uc_rq_pop(void *ctx, u32 slot, u64 *wr_id, u64 *length)
{
	if (U->rq_taken == U->rq_posted)
		return MRC_RQ_EMPTY;
	U->slot_wqe[slot] = U->rq_taken;
	*wr_id = U->rq_taken;
	*length = U->rq_len[U->rq_taken % UC_RQ];
	U->rq_taken++;
	memset(U->slot_buf[slot], 0, sizeof(U->slot_buf[slot]));
	return MRC_RQ_OK;
}

static int uc_rq_copy(void *ctx, u32 slot, u64 offset,
		      const struct mrc_src *src, u32 len)
{
	SIM_CHECK(offset + len <= U->rq_len[U->slot_wqe[slot] % UC_RQ],
		  "uc: copy beyond the receive WQE");
	memcpy(U->slot_buf[slot] + offset, uc_src(src), len);
	return MRC_COPY_OK;
}

/* A receive completion: a sent message, after the last, exact. */
static int uc_post_rcqe(void *ctx, const struct mrc_rcqe *c)
{
	const struct uc_wr *w;
	u32 k, imm = get_unaligned_be32(&c->imm);

	SIM_CHECK(c->status == MRC_WC_SUCCESS, "uc: receive status %u",
		  c->status);
	SIM_CHECK(c->byte_len <= U->rq_len[c->wr_id % UC_RQ] ||
		  c->opcode == MRC_WC_RECV_RDMA_WITH_IMM,
		  "uc: message longer than its WQE completed");
	if (c->wc_flags & MRC_WCF_WITH_IMM) {
		k = imm;
		SIM_CHECK(k < U->posted, "uc: completion of unsent %u", k);
	} else {
		/* plain SEND: the first later SEND of that length and data */
		for (k = U->any_rcqe ? U->last_k + 1 : 0; k < U->posted; k++)
			if (U->wr[k].op == MRC_OP_SEND &&
			    U->wr[k].len == c->byte_len &&
			    !memcmp(U->slot_buf[c->slot], U->wr[k].data,
				    c->byte_len))
				break;
		SIM_CHECK(k < U->posted, "uc: SEND completion (%u B) matches "
			  "no message sent", c->byte_len);
	}
	w = &U->wr[k];
	SIM_CHECK(!U->any_rcqe || k > U->last_k,
		  "uc: message %u completed after %u", k, U->last_k);
	SIM_CHECK(c->byte_len == w->len, "uc: message %u: %u B, sent %u",
		  k, c->byte_len, w->len);
	if (w->op == MRC_OP_WRITE_IMM) {
		SIM_CHECK(c->opcode == MRC_WC_RECV_RDMA_WITH_IMM,
			  "uc: WRITE_IMM %u completed as %u", k, c->opcode);
		SIM_CHECK(!memcmp(U->mem + (size_t)k * UC_REGION, w->data,
				  w->len), "uc: WRITE_IMM %u: bytes differ", k);
	} else {
		SIM_CHECK(c->opcode == MRC_WC_RECV &&
			  (w->op == MRC_OP_SEND || w->op == MRC_OP_SEND_IMM),
			  "uc: message %u (op %u) completed as %u", k, w->op,
			  c->opcode);
		SIM_CHECK(!memcmp(U->slot_buf[c->slot], w->data, w->len),
			  "uc: SEND %u: bytes differ", k);
	}
	U->last_k = k;
	U->any_rcqe = true;
	U->rcqe++;
	return 0;
}

static void uc_qp_error(void *ctx, u8 event)
{
	sim_fail("uc: QP error %u (nothing local went wrong)", event);
}

static void uc_timer_arm(void *ctx, u8 timer, u32 us)
{
	sim_fail("uc: timer %u armed (UC has no timers)", timer);
}

static void uc_timer_cancel(void *ctx, u8 timer)
{
}

static bool uc_timer_pending(void *ctx, u8 timer)
{
	return false;
}

static int uc_post_scqe(void *ctx, const struct mrc_swqe *w, u8 status)
{
	SIM_CHECK(status == MRC_WC_SUCCESS, "uc: send WQE %llu status %u",
		  (unsigned long long)w->wr_id, status);
	SIM_CHECK(w->wr_id == U->completed, "uc: send WQE %llu completed, "
		  "%u expected", (unsigned long long)w->wr_id, U->completed);
	U->completed++;
	return 0;
}

static void uc_sq_consumed(void *ctx, u32 tail)
{
}

static void uc_sq_fetch(void *ctx)
{
	U->req.sq_head = U->posted;
}

static void uc_local_op(void *ctx, struct mrc_swqe *w)
{
	sim_fail("uc: no local operations here");
}

static void uc_count(void *ctx, u8 counter, u32 n)
{
	if (counter == MRC_CNT_UC_DROP)
		U->drops += n;
}

#pragma GCC diagnostic pop

static const struct mrc_env_ops uc_ops = {
	.now_us = uc_now,
	.emit = uc_emit,
	.release = uc_release,
	.mr_get = uc_mr_get,
	.mr_put = uc_mr_put,
	.mr_write = uc_mr_write,
	.rq_pop = uc_rq_pop,
	.rq_copy = uc_rq_copy,
	.post_rcqe = uc_post_rcqe,
	.qp_error = uc_qp_error,
	.timer_arm = uc_timer_arm,
	.timer_cancel = uc_timer_cancel,
	.timer_pending = uc_timer_pending,
	.post_scqe = uc_post_scqe,
	.sq_consumed = uc_sq_consumed,
	.sq_fetch = uc_sq_fetch,
	.local_op = uc_local_op,
	.count = uc_count,
};

static const struct mrc_env uc_e = { .ops = &uc_ops, .ctx = NULL };

/* Build the packet of @psn as tx.c's tp_build_psn does and send it. */
static void uc_send_pkt(const struct mrc_req_out *o)
{
	const struct mrc_txd *d = &U->req.pkt[o->psn & (MRC_WND - 1)];
	const struct mrc_swqe *w = mrc_req_swqe(&U->req, d->idx);
	const struct uc_wr *u = &U->wr[w->wr_id];
	struct mrc_pkt p;

	memset(&p, 0, sizeof(p));
	p.opcode = d->opcode;
	p.flags = d->flags;
	p.path_id = o->path;
	p.dst_qpn = UC_QPN_B;
	p.psn = o->psn;
	p.ppsn = o->ppsn;
	p.tsval = (u32)W.now;
	p.payload_len = d->len;
	if (d->opcode == MRC_OP_SEND || d->opcode == MRC_OP_SEND_IMM) {
		p.send.rmsn = w->msn;
		p.send.msg_len = w->len;
		p.send.offset = d->offset;
		p.send.imm = d->opcode == MRC_OP_SEND_IMM ? u->imm : 0;
	} else {
		p.write.va = w->remote_addr;
		p.write.rkey = w->rkey;
		p.write.msg_len = w->len;
		p.write.offset = d->offset;
		p.write.rmsn = w->msn;
		p.write.imm = d->opcode == MRC_OP_WRITE_IMM ? u->imm : 0;
	}
	/* as tp_build_psn: the cumulative ACK (version 2; never on UC) */
	mrc_resp_cum_fill(&U->resp_a, &p);
	fab_send(0, 1, (u16)(MRC_SPORT_MIN + o->path), &p,
		 u->data + d->offset);
}

/* The sender: one packet at a time, paced to the fabric's rate. */
static void uc_tx(void *arg, u64 x)
{
	struct mrc_req_out o;
	int step;

	(void)arg;
	(void)x;
	for (;;) {
		step = mrc_req_next(&U->req, &U->resp, &uc_e, &o);
		if (step == MRC_REQ_AGAIN)
			continue;
		break;
	}
	if (step == MRC_REQ_PKT)
		uc_send_pkt(&o);
	mrc_comp_complete(&U->req, &uc_e);
	SIM_CHECK(!mrc_sb_outstanding(&U->req.sb),
		  "uc: PSNs outstanding at the sender");
	if (step != MRC_REQ_STOP || U->posted < U->nwr) {
		/* post a few more now and then */
		if (U->posted < U->nwr && rng_below(&W.rng, 4) == 0)
			U->posted++;
		sim_at(1 + (u64)(ep_mtu + 100) * W.fab.ns_per_byte * 2 / 1000,
		       uc_tx, NULL, 0);
	}
}

static void uc_rx(u32 node, const struct mrc_pkt *p, const u8 *payload,
		  bool ce)
{
	SIM_CHECK(node == 1 && p->dst_qpn == UC_QPN_B,
		  "uc: packet for qp %u on node %u", p->dst_qpn, node);
	SIM_CHECK(p->flags & MRC_F_UC, "uc: packet without the UC flag");
	/* the payload follows the headers in the wire buffer */
	SIM_CHECK(mrc_resp_rx(&U->resp, &uc_e, p, payload - p->hdr_len, ce) == 0,
		  "uc: the responder held or asked to send");
}

static bool uc_done(void)
{
	return U->completed == U->nwr;
}

static void uc_cleanup(void)
{
	free(U->mem);
	free(U);
	U = NULL;
}

static void uc_make_wrs(void)
{
	static const u8 ops[4] = { MRC_OP_SEND, MRC_OP_SEND_IMM, MRC_OP_WRITE,
				   MRC_OP_WRITE_IMM };
	u32 k, i;

	for (k = 0; k < U->nwr; k++) {
		struct uc_wr *u = &U->wr[k];
		struct mrc_swqe *w = mrc_req_swqe(&U->req, k);

		u->op = ops[rng_below(&W.rng, 4)];
		u->len = rng_below(&W.rng, 8) ? (u32)rng_range(&W.rng, 1,
							     4 * ep_mtu) : 0;
		u->imm = k;
		for (i = 0; i < u->len; i++)
			u->data[i] = (u8)(k * 73 + i * 7 + (i >> 8) + 1);
		memset(w, 0, UC_SWQE);
		w->wr_id = k;
		w->mrc_op = u->op;
		w->len = u->len;
		w->signaled = 1;
		w->remote_addr = (u64)k * UC_REGION;
		w->rkey = 1;
		w->inline_len = 0;
		/* the kernel's fetch: every UC message gets an MSN */
		w->msn = U->req.smsn++;
	}
}

void scn_uc(void)
{
	struct mrc_path_cfg pc;
	u32 isn = (u32)rng_next(&W.rng), k;
	bool lossy = W.f.loss_ppm || W.f.burst_ppm || W.f.corrupt_ppm ||
		     W.f.blackhole_ppm || W.f.flap_ppm;

	U = calloc(1, sizeof(*U));
	if (!U)
		abort();
	W.cleanup = uc_cleanup;
	W.rx = uc_rx;
	W.fab.nodes = 2;
	if (ep_mtu > EP_MTU_MAX)
		ep_mtu = EP_MTU_MAX;
	U->nwr = W.o->ops ? W.o->ops : (u32)rng_range(&W.rng, 20, UC_MAX_WR);
	if (U->nwr > UC_MAX_WR)
		U->nwr = UC_MAX_WR;
	U->mem_len = U->nwr * UC_REGION;
	U->mem = calloc(1, U->mem_len);
	if (!U->mem)
		abort();
	if (!rng_below(&W.rng, 4))
		isn = 0u - (u32)rng_below(&W.rng, 300);	/* PSNs wrap */
	/* the sender */
	U->req.swq = U->swq;
	U->req.nswq = UC_NSWQ;
	U->req.swqe_size = UC_SWQE;
	mrc_sb_init(&U->req.sb, isn, 0, MRC_DUPTHRESH_DEFAULT);
	mrc_path_cfg_default(&pc);
	pc.npaths = (u32)rng_range(&W.rng, 1, 8);
	mrc_paths_init(&U->req.paths, &pc);
	U->req.anchored = 1;
	U->req.cfg.mtu = ep_mtu;
	U->req.cfg.uc = 1;
	U->req.cfg.running = 1;
	U->req.cfg.max_rd_atomic = 1;
	uc_make_wrs();
	/* the receiver: WQEs of 4 packets, now and then a too small one */
	mrc_resp_reset(&U->resp, &uc_e);
	mrc_resp_start(&U->resp, &uc_e, isn, 16, 8);
	U->resp.cfg.uc = 1;
	mrc_resp_reset(&U->resp_a, &uc_e);
	mrc_resp_start(&U->resp_a, &uc_e, (u32)rng_next(&W.rng), 16, 8);
	U->resp_a.cfg.uc = 1;
	U->resp.cfg.qp_access = MRC_ACC_REMOTE_WRITE;
	U->resp.cfg.npaths = pc.npaths;
	for (k = 0; k < UC_RQ; k++)
		U->rq_len[k] = rng_below(&W.rng, 20) ? 4 * ep_mtu :
			       (u32)rng_below(&W.rng, ep_mtu);
	U->rq_posted = UC_RQ;
	snprintf(W.what, sizeof(W.what), "uc: %u msgs, mtu %u, %u paths%s",
		 U->nwr, ep_mtu, pc.npaths, lossy ? ", lossy" : "");
	U->posted = 1;
	sim_at(rng_below(&W.rng, 100), uc_tx, NULL, 0);
	if (!sim_run_until(uc_done, W.end_by) || !uc_done())
		sim_fail("uc: hang: %u of %u send WQEs completed (posted %u)",
			 U->completed, U->nwr, U->posted);
	/* drain the fabric: stragglers still place or get dropped */
	sim_run_until(NULL, W.now + 1000000);
	SIM_CHECK(U->rcqe + U->drops <= U->nwr,
		  "uc: %u completions + %u drops > %u messages", U->rcqe,
		  U->drops, U->nwr);
	if (!lossy && !W.f.reorder_ppm && !W.f.spike_ppm) {
		/* nothing lost or reordered: exactly the model's outcome */
		u32 j = 0, want = 0, refused = 0;

		for (k = 0; k < U->nwr; k++) {
			const struct uc_wr *u = &U->wr[k];

			if (u->op == MRC_OP_WRITE)
				continue;
			if (u->op != MRC_OP_WRITE_IMM &&
			    u->len > U->rq_len[j % UC_RQ]) {
				refused++;	/* the WQE stays */
				continue;
			}
			want++;
			j++;
		}
		SIM_CHECK(U->rcqe == want && U->drops == refused,
			  "uc: clean fabric: %u completions, %u drops; model "
			  "%u, %u", U->rcqe, U->drops, want, refused);
	}
	W.ops_done += U->nwr;
}

#else
void scn_uc(void)
{
	snprintf(W.what, sizeof(W.what), "uc: needs the core engines");
}
#endif
