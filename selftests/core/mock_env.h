/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One mock environment (struct mrc_env_ops, core/engine.h) for the engine
 * tests: test_responder.c, test_completer.c and test_requester.c drive
 * their engine through it and observe what it was asked to do.
 *
 * The world it simulates: a virtual clock (mk.now); one MR of MK_MEM bytes
 * at MK_VA with rkey MK_RKEY (mk.mr_valid, mk.mr_access; its handles
 * counted in mk.mr_refs; mk.mr_gone_after: another context deregisters it
 * during a call; a SEND_WITH_INV's invalidation makes it invalid); a receive queue of MK_RQ posted WQEs and the
 * responder's slots (mk.rq_bad: a WQE rq_pop refuses; mk.rq_copy_err: one
 * whose scatter list refuses the payload); a send WQE ring (mk.swq, MK_NSWQ slots of MK_SWQE
 * bytes) whose WQEs sq_fetch makes visible up to mk.posted; a local buffer
 * (mk.local) every READ/atomic response lands in; the three timers. It
 * records emitted packets, send and receive completions, QP errors,
 * counters and the (engine, state) pairs the engines reported.
 *
 * All test bodies are included into one translation unit
 * (mrc_core_all.h), so this header is too, once.
 */
#ifndef MRC_MOCK_ENV_H
#define MRC_MOCK_ENV_H

#include "mrc_test.h"
#include "responder.h"
#include "completer.h"
#include "requester.h"

#define MK_MEM		4096
#define MK_VA		0x10000ULL
#define MK_RKEY		0x1234
/* mk.alias: the same memory registered again, zero-based (VA = offset) */
#define MK_RKEY2	0x5678
#define MK_ALIAS_H	((void *)&mk.alias)
#define MK_RQ		8
#define MK_RBUF		256
#define MK_EMIT		32
#define MK_CQE		32
#define MK_NSWQ		16
#define MK_SWQE		(sizeof(struct mrc_swqe) + 4 * sizeof(struct mrc_sge))
#define MK_NSTATES	16	/* >= every engine's NSTATES */

struct mock_env {
	u64 now;
	/* one MR, MK_MEM bytes at MK_VA */
	u8 mem[MK_MEM];
	u32 mr_access;
	bool mr_valid;
	int mr_refs;
	u32 mr_gets;
	/*
	 * Non-zero: the MR goes away right after mr_get number
	 * mr_gone_after succeeds -- deregistered or invalidated by another
	 * context (ibv_dereg_mr, a LOCAL_INV or SEND_WITH_INV on another QP
	 * of the PD) while this QP's call runs. The handle just returned
	 * stays usable until its mr_put, as the kernel's reference keeps it;
	 * the key no longer resolves.
	 */
	u32 mr_gone_after;
	/*
	 * alias: MK_RKEY2 resolves too, to the same MK_MEM bytes registered
	 * a second time, zero-based (its VA is the offset): two keys, two
	 * handles (MK_ALIAS_H), one memory.
	 */
	bool alias;
	u64 atomics;		/* mr_atomic calls */
	u32 inval, inval_rkey;
	bool inval_fail;	/* the invalidation itself fails */
	/* receive queue: posted WQEs, and the responder's slots */
	u32 rq_posted, rq_taken;
	u64 rq_wr_id[MK_RQ];
	u32 rq_len[MK_RQ];
	/*
	 * Per posted WQE: rq_bad, rq_pop takes it but it is invalid
	 * (MRC_RQ_BAD: more SGEs than max_recv_sge); rq_copy_err, non-zero:
	 * what rq_copy answers for it (MRC_COPY_PROT: a bad lkey, an MR
	 * without LOCAL_WRITE, a range beyond its MR), nothing copied.
	 */
	bool rq_bad[MK_RQ];
	u8 rq_copy_err[MK_RQ];
	u8 slot_copy_err[MRC_RSLOTS];
	u64 slot_wr_id[MRC_RSLOTS];
	u32 slot_len[MRC_RSLOTS];
	u8 slot_buf[MRC_RSLOTS][MK_RBUF];
	bool rq_corrupt;
	/* send queue: the WQE ring of mk.q, the READ/atomic target */
	struct mrc_req *q;
	u8 swq[MK_NSWQ * MK_SWQE];
	u32 posted;		/* sq_fetch makes WQEs up to here visible */
	u32 fetches, local_ops, consumed;
	u8 local[256];
	/* outputs */
	struct mrc_pkt emit[MK_EMIT];
	u32 nemit;
	struct mrc_rcqe rcqe[MK_CQE];
	u32 nrcqe;
	u64 scqe_wr_id[MK_CQE];
	u8 scqe_status[MK_CQE];
	u32 nscqe;
	u32 nerr;
	u8 err_event;
	u32 released;
	const void *last_released;
	bool armed[MRC_TIMER_MAX];
	u32 timer_us[MRC_TIMER_MAX];
	/* arms, and cancels of an armed timer: what costs a kernel hrtimer op */
	u32 timer_ops[MRC_TIMER_MAX];
	/*
	 * Two-QP tests that set q_b: while mk.q is q_b, the timers are B's
	 * own (armed_b, timer_us_b, timer_ops_b), as each QP has its own.
	 */
	struct mrc_req *q_b;
	bool armed_b[MRC_TIMER_MAX];
	u32 timer_us_b[MRC_TIMER_MAX];
	u32 timer_ops_b[MRC_TIMER_MAX];
	/* when each armed timer expires (mk.now + us), the mock's and B's */
	u64 timer_at[MRC_TIMER_MAX], timer_at_b[MRC_TIMER_MAX];
	/* the retransmission timer as the requester set it (trace_rto) */
	u32 rto_us;
	bool rto_tlp;
	u32 cnt[MRC_CNT_MAX];
	u32 comp_resp, comp_progress, comp_cum;
	/* set: responses go to this requester's completer (two-QP tests) */
	struct mrc_req *comp_q;
	/* coverage across the cases of a suite: kept by mock_reset() */
	u8 seen[MRC_ENG_REQ + 1][MK_NSTATES];
};

static struct mock_env mk;
static const struct mrc_env mk_e;

/* The mock callbacks ignore most of their arguments. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

static u64 mk_now(void *ctx)
{
	return mk.now;
}

static const u8 *mk_src(const struct mrc_src *src)
{
	return (const u8 *)(src->buf ? src->buf : src->pkt) + src->off;
}

static void mk_emit(void *ctx, const struct mrc_pkt *p,
		    const struct mrc_src *src, unsigned int flags)
{
	if (mk.nemit < MK_EMIT)
		mk.emit[mk.nemit] = *p;
	mk.nemit++;
}

static void mk_release(void *ctx, const void *pkt)
{
	mk.released++;
	mk.last_released = pkt;
}

/* The offset in mk.mem of @va through handle @mr. */
static u64 mk_off(const void *mr, u64 va)
{
	return mr == MK_ALIAS_H ? va : va - MK_VA;
}

static void *mk_mr_get(void *ctx, u32 key, bool remote, u32 access, u64 va,
		       u64 len)
{
	mk.mr_gets++;
	if (mk.alias && mk.mr_valid && key == MK_RKEY2 &&
	    !(access & ~mk.mr_access) && va + len <= MK_MEM) {
		mk.mr_refs++;
		return MK_ALIAS_H;
	}
	if (!mk.mr_valid || key != MK_RKEY || (access & ~mk.mr_access) ||
	    va < MK_VA || va + len > MK_VA + MK_MEM)
		return NULL;
	mk.mr_refs++;
	if (mk.mr_gone_after && mk.mr_gets == mk.mr_gone_after)
		mk.mr_valid = false;
	return mk.mem;
}

static void mk_mr_put(void *ctx, void *mr)
{
	mk.mr_refs--;
}

static int mk_mr_write(void *ctx, void *mr, u64 va, const struct mrc_src *src,
		       u32 len)
{
	memcpy(mk.mem + mk_off(mr, va), mk_src(src), len);
	return MRC_COPY_OK;
}

static void mk_mr_atomic(void *ctx, void *mr, u64 va, bool cmp_swap,
			 u64 compare, u64 swap_add, u64 *orig)
{
	u64 v;

	memcpy(&v, mk.mem + mk_off(mr, va), 8);
	*orig = v;
	if (cmp_swap)
		v = v == compare ? swap_add : v;
	else
		v += swap_add;
	memcpy(mk.mem + mk_off(mr, va), &v, 8);
	mk.atomics++;
}

/* Both keys reach mk.mem: one space, the offset in it. */
static void mk_mr_canon(void *ctx, void *mr, u64 va, u32 *space, u64 *cva)
{
	*space = 0;
	*cva = mk_off(mr, va);
}

static int mk_mr_invalidate(void *ctx, u32 rkey, bool check_only)
{
	if (rkey != MK_RKEY)
		return -1;
	if (!check_only && mk.inval_fail)
		return -1;
	if (!check_only) {
		mk.inval++;
		mk.inval_rkey = rkey;
		mk.mr_valid = false;	/* the key no longer resolves */
	}
	return 0;
}

static int mk_rq_pop(void *ctx, u32 slot, u64 *wr_id, u64 *length)
{
	if (mk.rq_corrupt)
		return MRC_RQ_CORRUPT;
	if (mk.rq_taken == mk.rq_posted)
		return MRC_RQ_EMPTY;
	mk.slot_wr_id[slot] = mk.rq_wr_id[mk.rq_taken % MK_RQ];
	mk.slot_len[slot] = mk.rq_len[mk.rq_taken % MK_RQ];
	mk.slot_copy_err[slot] = mk.rq_copy_err[mk.rq_taken % MK_RQ];
	memset(mk.slot_buf[slot], 0, MK_RBUF);
	mk.rq_taken++;
	*wr_id = mk.slot_wr_id[slot];
	*length = mk.slot_len[slot];
	return mk.rq_bad[(mk.rq_taken - 1) % MK_RQ] ? MRC_RQ_BAD : MRC_RQ_OK;
}

static int mk_rq_copy(void *ctx, u32 slot, u64 offset,
		      const struct mrc_src *src, u32 len)
{
	if (mk.slot_copy_err[slot])
		return mk.slot_copy_err[slot];
	if (offset + len > mk.slot_len[slot])
		return MRC_COPY_LEN;
	memcpy(mk.slot_buf[slot] + offset, mk_src(src), len);
	return MRC_COPY_OK;
}

static int mk_post_rcqe(void *ctx, const struct mrc_rcqe *c)
{
	if (mk.nrcqe < MK_CQE)
		mk.rcqe[mk.nrcqe] = *c;
	mk.nrcqe++;
	return 0;
}

static int mk_post_scqe(void *ctx, const struct mrc_swqe *w, u8 status)
{
	if (mk.nscqe < MK_CQE) {
		mk.scqe_wr_id[mk.nscqe] = w->wr_id;
		mk.scqe_status[mk.nscqe] = status;
	}
	mk.nscqe++;
	return 0;
}

static void mk_sq_consumed(void *ctx, u32 tail)
{
	mk.consumed = tail;
}

static int mk_sq_copy(void *ctx, const struct mrc_swqe *w, u64 offset,
		      const struct mrc_src *src, u32 len)
{
	if (offset + len > sizeof(mk.local))
		return MRC_COPY_PROT;
	memcpy(mk.local + offset, mk_src(src), len);
	return MRC_COPY_OK;
}

static void mk_sq_fetch(void *ctx)
{
	mk.fetches++;
	if (mk.q)
		mk.q->sq_head = mk.posted;
}

static void mk_local_op(void *ctx, struct mrc_swqe *w)
{
	mk.local_ops++;
	w->len = 0;
}

static void mk_qp_error(void *ctx, u8 event)
{
	mk.nerr++;
	if (event)
		mk.err_event = event;
}

/* The timers of the QP the call is for: B's (mk.q_b) or the mock's. */
static bool *mk_tm(u8 timer, u32 **us, u32 **ops)
{
	bool b = mk.q_b && mk.q == mk.q_b;

	*us = b ? &mk.timer_us_b[timer] : &mk.timer_us[timer];
	*ops = b ? &mk.timer_ops_b[timer] : &mk.timer_ops[timer];
	return b ? &mk.armed_b[timer] : &mk.armed[timer];
}

static void mk_timer_arm(void *ctx, u8 timer, u32 us)
{
	bool *armed;
	u32 *t, *ops;

	if (timer < MRC_TIMER_MAX) {
		armed = mk_tm(timer, &t, &ops);
		*armed = true;
		*t = us;
		(*ops)++;
		if (armed == &mk.armed_b[timer])
			mk.timer_at_b[timer] = mk.now + us;
		else
			mk.timer_at[timer] = mk.now + us;
	}
}

static void mk_timer_cancel(void *ctx, u8 timer)
{
	bool *armed;
	u32 *t, *ops;

	if (timer >= MRC_TIMER_MAX)
		return;
	armed = mk_tm(timer, &t, &ops);
	if (*armed)
		(*ops)++;
	*armed = false;
}

static bool mk_timer_pending(void *ctx, u8 timer)
{
	u32 *t, *ops;

	return timer < MRC_TIMER_MAX && *mk_tm(timer, &t, &ops);
}

static void mk_trace_rto(void *ctx, bool tlp, u32 us)
{
	mk.rto_us = us;
	mk.rto_tlp = tlp;
}

static void mk_count(void *ctx, u8 counter, u32 n)
{
	mk.cnt[counter] += n;
}

static void mk_transition(void *ctx, u8 engine, u8 from, u8 to)
{
	if (engine <= MRC_ENG_REQ && from < MK_NSTATES && to < MK_NSTATES)
		mk.seen[engine][from] = mk.seen[engine][to] = 1;
}

static int mk_comp_resp(void *ctx, const struct mrc_pkt *p,
			const struct mrc_src *src)
{
	mk.comp_resp++;
	if (mk.comp_q)
		return mrc_comp_resp(mk.comp_q, &mk_e, p, src);
	return 0;
}

static void mk_comp_progress(void *ctx)
{
	mk.comp_progress++;
	if (mk.comp_q)
		mrc_comp_complete(mk.comp_q, &mk_e);
}

static bool mk_comp_cum(void *ctx, u16 cum_lo)
{
	mk.comp_cum++;
	if (!mk.comp_q)
		return false;
	mrc_comp_cum(mk.comp_q, &mk_e, cum_lo);
	return mk.comp_q->failed;
}

#pragma GCC diagnostic pop

static const struct mrc_env_ops mk_ops = {
	.now_us = mk_now,
	.emit = mk_emit,
	.release = mk_release,
	.mr_get = mk_mr_get,
	.mr_put = mk_mr_put,
	.mr_write = mk_mr_write,
	.mr_atomic = mk_mr_atomic,
	.mr_invalidate = mk_mr_invalidate,
	.mr_canon = mk_mr_canon,
	.rq_pop = mk_rq_pop,
	.rq_copy = mk_rq_copy,
	.post_rcqe = mk_post_rcqe,
	.post_scqe = mk_post_scqe,
	.sq_consumed = mk_sq_consumed,
	.sq_copy = mk_sq_copy,
	.sq_fetch = mk_sq_fetch,
	.local_op = mk_local_op,
	.qp_error = mk_qp_error,
	.timer_arm = mk_timer_arm,
	.timer_cancel = mk_timer_cancel,
	.timer_pending = mk_timer_pending,
	.count = mk_count,
	.transition = mk_transition,
	.trace_rto = mk_trace_rto,
	.comp_resp = mk_comp_resp,
	.comp_progress = mk_comp_progress,
	.comp_cum = mk_comp_cum,
};

static const struct mrc_env mk_e = { .ops = &mk_ops, .ctx = NULL };

/*
 * The whole READ response (@len <= MK_RBUF bytes of @fill, one packet)
 * to the request at @req_psn, handed to @q's completer.
 */
static void mk_read_resp(struct mrc_req *q, u32 req_psn, u32 len, u8 fill)
{
	static u8 data[MK_RBUF];
	struct mrc_src src = { .pkt = data, .buf = NULL, .off = 0 };
	struct mrc_pkt p;

	memset(data, fill, len);
	memset(&p, 0, sizeof(p));
	p.opcode = MRC_OP_READ_RESP;
	p.rresp.req_psn = req_psn;
	p.rresp.msg_len = len;
	p.payload_len = len;
	mrc_comp_resp(q, &mk_e, &p, &src);
}

/*
 * A fresh world at @now: the MR valid with every remote right, nothing
 * posted, nothing recorded -- but the coverage of earlier cases.
 */
static void mock_reset(u64 now)
{
	u8 seen[MRC_ENG_REQ + 1][MK_NSTATES];

	BUILD_BUG_ON(MRC_RESP_NSTATES > MK_NSTATES ||
		     MRC_COMP_NSTATES > MK_NSTATES ||
		     MRC_REQS_NSTATES > MK_NSTATES);
	memcpy(seen, mk.seen, sizeof(seen));
	memset(&mk, 0, sizeof(mk));
	memcpy(mk.seen, seen, sizeof(seen));
	mk.now = now;
	mk.mr_valid = true;
	mk.mr_access = MRC_ACC_REMOTE_WRITE | MRC_ACC_REMOTE_READ |
		       MRC_ACC_REMOTE_ATOMIC;
}

/* Give @q the mock's send WQE ring (and sq_fetch). */
static void mock_sq(struct mrc_req *q)
{
	mk.q = q;
	q->swq = mk.swq;
	q->nswq = MK_NSWQ;
	q->swqe_size = MK_SWQE;
}

#endif /* MRC_MOCK_ENV_H */
