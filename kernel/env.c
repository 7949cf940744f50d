// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: the environment of the core engines (struct
 * mrc_env_ops, core/engine.h) for all three of them -- requester,
 * responder, completer. It gives them the world: skbs (the packet handle
 * of struct mrc_src is the skb), MR lookups and copies, the receive queue
 * ring, CQs, hrtimers, the counters, tracepoints and the QP error path.
 * Everything runs under the QP lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#define METAROCE_TP_INTERNAL
#include "obj.h"
#include "trace.h"

/*
 * The device advertises max_qp_rd_atom (verbs.c) and modify_qp accepts a
 * max_dest_rd_atomic up to it (qp.c), handed to the responder below: its
 * READ/atomic queue must hold that many, else a requester keeping to the
 * advertised depth gets INV_REQ NAKs (core/rspq.c stops at MRC_RSPQ_SLOTS).
 */
static_assert(METAROCE_MAX_QP_RD_ATOM == MRC_RSPQ_SLOTS);

/* The core speaks ib_core's numbers. */
#define TP_SAME(a, b)	static_assert((int)(a) == (int)(b))
TP_SAME(MRC_WC_SUCCESS, IB_WC_SUCCESS);
TP_SAME(MRC_WC_LOC_LEN_ERR, IB_WC_LOC_LEN_ERR);
TP_SAME(MRC_WC_LOC_QP_OP_ERR, IB_WC_LOC_QP_OP_ERR);
TP_SAME(MRC_WC_LOC_PROT_ERR, IB_WC_LOC_PROT_ERR);
TP_SAME(MRC_WC_WR_FLUSH_ERR, IB_WC_WR_FLUSH_ERR);
TP_SAME(MRC_WC_MW_BIND_ERR, IB_WC_MW_BIND_ERR);
TP_SAME(MRC_WC_REM_INV_REQ_ERR, IB_WC_REM_INV_REQ_ERR);
TP_SAME(MRC_WC_REM_ACCESS_ERR, IB_WC_REM_ACCESS_ERR);
TP_SAME(MRC_WC_REM_OP_ERR, IB_WC_REM_OP_ERR);
TP_SAME(MRC_WC_RETRY_EXC_ERR, IB_WC_RETRY_EXC_ERR);
TP_SAME(MRC_WC_RNR_RETRY_EXC_ERR, IB_WC_RNR_RETRY_EXC_ERR);
TP_SAME(MRC_WC_RECV, IB_WC_RECV);
TP_SAME(MRC_WC_RECV_RDMA_WITH_IMM, IB_WC_RECV_RDMA_WITH_IMM);
TP_SAME(MRC_WCF_WITH_IMM, METAROCE_WC_WITH_IMM);
TP_SAME(MRC_WCF_WITH_INV, METAROCE_WC_WITH_INV);
TP_SAME(MRC_ACC_LOCAL_WRITE, IB_ACCESS_LOCAL_WRITE);
TP_SAME(MRC_ACC_REMOTE_WRITE, IB_ACCESS_REMOTE_WRITE);
TP_SAME(MRC_ACC_REMOTE_READ, IB_ACCESS_REMOTE_READ);
TP_SAME(MRC_ACC_REMOTE_ATOMIC, IB_ACCESS_REMOTE_ATOMIC);
TP_SAME(MRC_SEND_FENCE, IB_SEND_FENCE);
TP_SAME(MRC_SEND_SOLICITED, IB_SEND_SOLICITED);

/* ------------------------------------------------------ environment */

static struct metaroce_qp *tp_ctx_qp(void *ctx)
{
	return ((struct metaroce_tp_ctx *)ctx)->qp;
}

static u64 tp_env_now(void *ctx)
{
	return tp_now_us();
}

/* Copy @len bytes of @src to @dst. */
static int tp_src_copy(void *dst, const struct mrc_src *src, u32 len)
{
	if (src->buf) {
		memcpy(dst, (const u8 *)src->buf + src->off, len);
		return 0;
	}
	return skb_copy_bits(src->pkt, src->off, dst, len);
}

static void tp_env_emit(void *ctx, const struct mrc_pkt *p,
			const struct mrc_src *src, unsigned int flags)
{
	struct metaroce_tp_ctx *c = ctx;
	struct metaroce_qp *qp = c->qp;
	struct metaroce_tps *s = qp->tp.s;
	struct sk_buff *skb;
	void *pl;

	skb = metaroce_tp_build_begin(p, &pl);
	if (!skb)
		return;
	if (p->payload_len && (!src || tp_src_copy(pl, src, p->payload_len))) {
		kfree_skb(skb);
		return;
	}
	metaroce_tp_build_end(skb);
	tp_cb(skb)->sport = p->path_id < s->req.paths.n ?
			    s->req.paths.p[p->path_id].sport : MRC_SPORT_MIN;
	tp_cb(skb)->ect = !!(flags & MRC_EMIT_ECT);
	__skb_queue_tail(c->out, skb);
	if (p->opcode != MRC_OP_ACK)
		return;
	metaroce_tp_stat_inc(qp->mdev, TP_STAT_ACKS_SENT);
	if (p->ack.syndrome == MRC_SYN_RNR)
		metaroce_tp_stat_inc(qp->mdev, TP_STAT_RNR_NAKS_SENT);
	else if (p->ack.syndrome != MRC_SYN_ACK)
		metaroce_tp_stat_inc(qp->mdev, TP_STAT_NAKS_SENT);
}

static void tp_env_release(void *ctx, const void *pkt)
{
	kfree_skb((struct sk_buff *)pkt);
}

static void *tp_env_mr_get(void *ctx, u32 key, bool remote, u32 access,
			   u64 va, u64 len)
{
	struct metaroce_qp *qp = tp_ctx_qp(ctx);
	struct metaroce_mr *mr;

	mr = metaroce_mr_get(qp->mdev, qp->ibqp.pd, key, remote, access, va,
			     len);
	return IS_ERR(mr) ? NULL : mr;
}

static void tp_env_mr_put(void *ctx, void *mr)
{
	metaroce_mr_put(mr);
}

static int tp_env_mr_write(void *ctx, void *mr, u64 va,
			   const struct mrc_src *src, u32 len)
{
	if (src->buf) {
		metaroce_mr_copy(mr, va, (u8 *)src->buf + src->off, len,
				 METAROCE_TO_MR);
		return MRC_COPY_OK;
	}
	return metaroce_mr_copy_from_skb(mr, va, src->pkt, src->off, len) ?
	       MRC_COPY_PROT : MRC_COPY_OK;
}

/*
 * Write order is kept per byte of memory (core/worder.h): a user MR's
 * bytes are named by their user address -- every MR of a user PD maps
 * the one process, so a buffer registered twice, zero-based or not, and
 * a window (which resolves to its MR) name the same bytes the same way.
 * A kernel MR's by the MR and its iova (its pages need not be virtually
 * contiguous).
 */
static void tp_env_mr_canon(void *ctx, void *mr, u64 va, u32 *space,
			    u64 *cva)
{
	struct metaroce_mr *m = mr;

	if (m->type == METAROCE_MR_USER && m->umem) {
		*space = 0;
		*cva = m->umem->address + (va - m->ibmr.iova);
	} else {
		*space = (m->key >> 8) + 1;
		*cva = va;
	}
}

static void tp_env_mr_atomic(void *ctx, void *mr, u64 va, bool cmp_swap,
			     u64 compare, u64 swap_add, u64 *orig)
{
	metaroce_mr_atomic(mr, va, cmp_swap, compare, swap_add, orig);
}

static int tp_env_mr_invalidate(void *ctx, u32 rkey, bool check_only)
{
	struct metaroce_qp *qp = tp_ctx_qp(ctx);

	if (check_only)
		return metaroce_mr_check_invalidate(qp->mdev, qp->ibqp.pd,
						    rkey);
	return metaroce_mr_invalidate(qp->mdev, qp->ibqp.pd, rkey);
}

static int tp_env_rq_pop(void *ctx, u32 slot, u64 *wr_id, u64 *length)
{
	struct metaroce_qp *qp = tp_ctx_qp(ctx);
	struct metaroce_rwqe *w = &qp->tp.s->rwqe[slot];
	int err;

	memset(w, 0, sizeof(*w));
	err = metaroce_rq_pop(qp, w);
	if (err == -EAGAIN)
		return MRC_RQ_EMPTY;
	if (err == -EIO)
		return MRC_RQ_CORRUPT;
	*wr_id = w->wr_id;
	*length = w->length;
	return err ? MRC_RQ_BAD : MRC_RQ_OK;
}

static int tp_env_rq_copy(void *ctx, u32 slot, u64 offset,
			  const struct mrc_src *src, u32 len)
{
	struct metaroce_qp *qp = tp_ctx_qp(ctx);
	struct metaroce_rwqe *w = &qp->tp.s->rwqe[slot];
	int err;

	err = metaroce_sgl_copy(qp->mdev, metaroce_rq_pd(qp), w->sge, w->num_sge,
				offset, src->buf ? (u8 *)src->buf + src->off :
				NULL, src->buf ? NULL : src->pkt,
				src->buf ? 0 : src->off, len, METAROCE_TO_MR);
	if (!err)
		return MRC_COPY_OK;
	return err == -EINVAL ? MRC_COPY_LEN : MRC_COPY_PROT;
}

/* A receive completion of @qp. */
int metaroce_tp_post_rcqe(struct metaroce_qp *qp, u64 wr_id, u8 status,
			  u8 opcode, u32 byte_len, u32 imm, u32 src_qp,
			  u8 wc_flags, u16 vlan_id, bool solicited)
{
	struct metaroce_cqe cqe = {};

	cqe.wr_id = wr_id;
	cqe.status = status;
	cqe.opcode = opcode;
	cqe.byte_len = byte_len;
	cqe.ex_imm_data = imm;
	cqe.qp_num = qp->ibqp.qp_num;
	cqe.src_qp = src_qp;
	cqe.wc_flags = status == IB_WC_SUCCESS ? wc_flags : 0;
	/*
	 * A user CQE has no network_hdr_type: a UD receive reports the RoCE v2
	 * L3 header type in sl bits 2:0 (1 IPv6, 2 IPv4), as mlx5 does (Annex
	 * A17.4.5.1: the CQE tells IPv4 from IPv6). UCX's ud_verbs reads it
	 * to find the destination address in the 40-byte GRH area and drops
	 * the datagram if that is not one of our GIDs.
	 */
	if (to_mcq(qp->ibqp.recv_cq)->is_user &&
	    (cqe.wc_flags & (METAROCE_WC_NET_IPV4 | METAROCE_WC_NET_IPV6))) {
		cqe.sl = cqe.wc_flags & METAROCE_WC_NET_IPV4 ?
			 METAROCE_SL_NET_IPV4 : METAROCE_SL_NET_IPV6;
		cqe.wc_flags &= ~(METAROCE_WC_NET_IPV4 | METAROCE_WC_NET_IPV6);
	}
	/* the VLAN a UD receive came in on: kernel CQs only, in slid */
	if (to_mcq(qp->ibqp.recv_cq)->is_user)
		cqe.wc_flags &= ~METAROCE_WC_VLAN;
	else if (cqe.wc_flags & METAROCE_WC_VLAN)
		cqe.slid = vlan_id;
	cqe.pkey_index = qp->pkey_index;
	cqe.port_num = METAROCE_PORT;
	return metaroce_cq_post(to_mcq(qp->ibqp.recv_cq), &cqe,
				status == IB_WC_SUCCESS && solicited);
}

static int tp_env_post_rcqe(void *ctx, const struct mrc_rcqe *c)
{
	struct metaroce_qp *qp = tp_ctx_qp(ctx);

	return metaroce_tp_post_rcqe(qp, c->wr_id, c->status, c->opcode,
				     c->byte_len, c->imm, qp->dest_qpn,
				     c->wc_flags, 0, c->solicited);
}

static void tp_env_qp_error(void *ctx, u8 event)
{
	struct metaroce_tps *s = tp_ctx_qp(ctx)->tp.s;

	s->req.failed = true;
	switch (event) {
	case MRC_QPE_FATAL:
		s->fail_event = IB_EVENT_QP_FATAL;
		break;
	case MRC_QPE_REQ_ERR:
		s->fail_event = IB_EVENT_QP_REQ_ERR;
		break;
	case MRC_QPE_ACCESS_ERR:
		s->fail_event = IB_EVENT_QP_ACCESS_ERR;
		break;
	}
}

static struct hrtimer *tp_env_timer(void *ctx, u8 timer)
{
	struct metaroce_tp *tp = &tp_ctx_qp(ctx)->tp;

	switch (timer) {
	case MRC_TIMER_RTO:
		return &tp->rto_timer;
	case MRC_TIMER_RNR:
		return &tp->rnr_timer;
	}
	return &tp->ack_timer;
}

static void tp_env_timer_arm(void *ctx, u8 timer, u32 us)
{
	hrtimer_start(tp_env_timer(ctx, timer), tp_us_ktime(us),
		      HRTIMER_MODE_REL_SOFT);
}

static void tp_env_timer_cancel(void *ctx, u8 timer)
{
	hrtimer_try_to_cancel(tp_env_timer(ctx, timer));
}

static bool tp_env_timer_pending(void *ctx, u8 timer)
{
	return hrtimer_active(tp_env_timer(ctx, timer));
}

static void tp_env_count(void *ctx, u8 counter, u32 n)
{
	static const u8 stat[MRC_CNT_MAX] = {
		[MRC_CNT_DUPLICATE] = TP_STAT_DUPLICATES,
		[MRC_CNT_OUT_OF_ORDER] = TP_STAT_OUT_OF_ORDER,
		[MRC_CNT_OUT_OF_WINDOW] = TP_STAT_OUT_OF_WINDOW,
		[MRC_CNT_ECN_MARKED] = TP_STAT_ECN_MARKED,
		[MRC_CNT_ECN_ECHOED] = TP_STAT_ECN_ECHOED,
		[MRC_CNT_PATH_REPLACED] = TP_STAT_PATH_REPLACED,
		[MRC_CNT_RNR_NAK_RCVD] = TP_STAT_RNR_NAKS_RCVD,
		[MRC_CNT_NAK_RCVD] = TP_STAT_NAKS_RCVD,
		[MRC_CNT_RETRY_EXC] = TP_STAT_RETRY_EXC,
		[MRC_CNT_SPURIOUS_RETX] = TP_STAT_SPURIOUS_RETX,
		[MRC_CNT_SPURIOUS_RTO] = TP_STAT_SPURIOUS_RTO,
		[MRC_CNT_RTO] = TP_STAT_RTO,
		[MRC_CNT_UC_DROP] = TP_STAT_UC_MSG_DROPS,
		[MRC_CNT_VOIDED] = TP_STAT_RNR_VOIDED,
	};

	if (counter == MRC_CNT_RTO)
		tp_ctx_qp(ctx)->tp.s->rtos += n;
	if (counter < MRC_CNT_MAX)
		metaroce_tp_stat_add(tp_ctx_qp(ctx)->mdev, stat[counter], n);
}

static int tp_env_post_scqe(void *ctx, const struct mrc_swqe *w, u8 status)
{
	return metaroce_tp_post_scqe(tp_ctx_qp(ctx), w, status);
}

static void tp_env_sq_consumed(void *ctx, u32 tail)
{
	metaroce_tp_sq_consumed(tp_ctx_qp(ctx), tail);
}

static int tp_env_sq_copy(void *ctx, const struct mrc_swqe *w, u64 offset,
			  const struct mrc_src *src, u32 len)
{
	struct metaroce_qp *qp = tp_ctx_qp(ctx);

	return metaroce_sgl_copy(qp->mdev, qp->ibqp.pd, tp_sge(w), w->num_sge,
				 offset, src->buf ? (u8 *)src->buf + src->off :
				 NULL, src->buf ? NULL : src->pkt,
				 src->buf ? 0 : src->off, len, METAROCE_TO_MR) ?
	       MRC_COPY_PROT : MRC_COPY_OK;
}

static void tp_env_trace_ack(void *ctx, const struct mrc_ack_info *a,
			     const struct mrc_sb_ack_res *res, u32 una,
			     u32 nxt, u32 ce)
{
	trace_metaroce_ack(tp_ctx_qp(ctx)->ibqp.qp_num, a->syndrome,
			   a->cum_psn, una, nxt, res->newly_acked,
			   res->newly_lost, ce);
}

static void tp_env_trace_path(void *ctx, u32 path, u16 old_sport, u16 sport)
{
	trace_metaroce_path_replace(tp_ctx_qp(ctx)->ibqp.qp_num, path,
				    old_sport, sport);
}

static void tp_env_trace_timer(void *ctx, bool tlp, u32 una, u32 nxt,
			       u32 retries)
{
	trace_metaroce_timer(tp_ctx_qp(ctx)->ibqp.qp_num, tlp, una, nxt,
			     retries);
}

static void tp_env_sq_fetch(void *ctx)
{
	metaroce_tp_fetch(tp_ctx_qp(ctx));
}

static void tp_env_local_op(void *ctx, struct mrc_swqe *w)
{
	metaroce_tp_local_op(tp_ctx_qp(ctx), w);
}

static int tp_env_comp_resp(void *ctx, const struct mrc_pkt *p,
			    const struct mrc_src *src)
{
	return metaroce_tp_comp_resp(tp_ctx_qp(ctx), p, src);
}

static bool tp_env_comp_cum(void *ctx, u16 cum_lo)
{
	struct metaroce_tp_ctx *c = ctx;

	return metaroce_tp_comp_cum(c->qp, cum_lo, c->out);
}

static void tp_env_comp_progress(void *ctx)
{
	struct metaroce_tp_ctx *c = ctx;

	c->qp->tp.s->req.retries = 0;	/* the responder progresses */
	metaroce_tp_complete(c->qp, c->out);
}

const struct mrc_env_ops metaroce_tp_env_ops = {
	.now_us = tp_env_now,
	.emit = tp_env_emit,
	.release = tp_env_release,
	.mr_get = tp_env_mr_get,
	.mr_put = tp_env_mr_put,
	.mr_write = tp_env_mr_write,
	.mr_canon = tp_env_mr_canon,
	.mr_atomic = tp_env_mr_atomic,
	.mr_invalidate = tp_env_mr_invalidate,
	.rq_pop = tp_env_rq_pop,
	.rq_copy = tp_env_rq_copy,
	.post_rcqe = tp_env_post_rcqe,
	.qp_error = tp_env_qp_error,
	.timer_arm = tp_env_timer_arm,
	.timer_cancel = tp_env_timer_cancel,
	.timer_pending = tp_env_timer_pending,
	.post_scqe = tp_env_post_scqe,
	.sq_consumed = tp_env_sq_consumed,
	.sq_copy = tp_env_sq_copy,
	.sq_fetch = tp_env_sq_fetch,
	.local_op = tp_env_local_op,
	.count = tp_env_count,
	.trace_ack = tp_env_trace_ack,
	.trace_path = tp_env_trace_path,
	.trace_timer = tp_env_trace_timer,
	.comp_resp = tp_env_comp_resp,
	.comp_progress = tp_env_comp_progress,
	.comp_cum = tp_env_comp_cum,
};

void metaroce_tp_env(struct mrc_env *e, struct metaroce_tp_ctx *c,
		     struct metaroce_qp *qp, struct sk_buff_head *out)
{
	struct mrc_resp_cfg *cfg = &qp->tp.s->resp.cfg;
	struct mrc_req_cfg *rcfg = &qp->tp.s->req.cfg;

	c->qp = qp;
	c->out = out;
	e->ops = &metaroce_tp_env_ops;
	e->ctx = c;
	/* the QP's attributes as they are now (modify_qp may change them) */
	cfg->dest_qpn = qp->dest_qpn;
	cfg->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	cfg->npaths = qp->tp.s->req.paths.n;
	cfg->qp_access = READ_ONCE(qp->qp_access_flags);
	cfg->min_rnr_timer = qp->min_rnr_timer;
	cfg->uc = qp->ibqp.qp_type == IB_QPT_UC;
	rcfg->ib_timeout_us = metaroce_tp_ib_timeout_us(qp->timeout);
	rcfg->rto_floor_us = READ_ONCE(metaroce_tp_rto_floor_us);
	rcfg->retry_cnt = qp->retry_cnt;
	rcfg->rnr_retry = qp->rnr_retry;
	rcfg->mtu = qp->tp.s->mtu;
	rcfg->max_rd_atomic = qp->max_rd_atomic;
	rcfg->ud = qp->ibqp.qp_type == IB_QPT_UD ||
		   qp->ibqp.qp_type == IB_QPT_GSI;
	rcfg->uc = qp->ibqp.qp_type == IB_QPT_UC;
	rcfg->running = qp->tp.s->running;
	rcfg->sqd = qp->tp.s->sqd;
}

