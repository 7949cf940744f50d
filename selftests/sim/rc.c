// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario "rc": IB RC between two QPs through the fabric, checked
 * against a reference model.
 *
 * The responder QP is always the core responder engine (responder.c,
 * struct mrc_resp) driven through struct mrc_env, whose callbacks are
 * the simulated memory regions, receive queue and timers. The requester
 * QP's send side is, per connection, one of three (--requester):
 *   sim      this file's own adversarial requester over ep.c (it turns a
 *            random WR stream -- WRITE, WRITE_IMM, SEND, SEND_IMM,
 *            SEND_WITH_INV, READ, CMP_SWAP, FETCH_ADD, overlapping ranges
 *            on purpose -- into request packets, resends on its own and
 *            completes WRs in SQ order); the responder QP's READ/atomic
 *            responses go out as tx.c sent them, through ep.c;
 *   core     struct mrc_req with the core completer (completer.c) under a
 *            port of tx.c's send loop and timer rules;
 *   engines  the full loop: both QPs are core engines (requester.c,
 *            completer.c, responder.c), the environment doing what the
 *            kernel adapters do (tp_run, tp_build_psn, rx dispatch, flush).
 *
 * The reference model executes the WR stream in order: what memory must
 * hold, what each READ and atomic must return, which receive completions
 * in which order. Invariants (besides ep.h's): every WR completes exactly
 * once, in SQ order, or the QP errors; no hang; receive completions in
 * SEND order with the right bytes; memory equals the reference; an atomic
 * executes once and only when the responder runs its queue; nothing is
 * placed after the responder's QP errored; no placement outside an MR;
 * MR handles balanced; held packets released; an acknowledged held
 * packet that cannot be placed any more fails the QP visibly (a
 * REM_ACCESS NAK naming it, its WR never successful, no message after it
 * completed at the receiver); no byte lands in an MR once it is gone and
 * its last handle was put ("vanish").
 */
#include "ep.h"

#ifdef SIM_HAVE_RESP
#include "responder.h"
#ifdef SIM_HAVE_COMP
#include "completer.h"
#endif

#define RC_MAX_CONN	2
#define RC_NMR		3
#define RC_MAX_WR	4096
#define RC_RQ_MAX	4096

enum { WR_WRITE, WR_WRITE_IMM, WR_SEND, WR_SEND_IMM, WR_SEND_INV, WR_READ,
       WR_CAS, WR_FAA, WR_NKIND };

struct rc_wr {
	u8 kind;
	u8 mr;			/* target MR index (WRITE, READ, atomic, INV) */
	u64 va;
	u32 len;
	u8 *data;		/* WRITE/SEND payload, READ expected bytes */
	u8 *got;		/* READ: bytes received */
	u32 imm;
	u64 compare, swap_add;
	u64 orig_expect, orig_got;
	u32 rmsn;		/* SEND-like: receive message number */
	/* requester state */
	u32 first_psn, last_psn;
	u32 sent;		/* bytes (or 1 packet) handed to the ep */
	u32 rcvd;		/* READ bytes / atomic responses received */
	bool posted, done;
	bool fence;		/* IB_SEND_FENCE: after earlier READ/atomics */
	u8 status;
	u32 junk_rkey;		/* zero-length WRITE or READ: rkey unset */
};

struct rc_mr {
	u64 va;
	u32 len;
	u32 rkey;
	u32 access;
	bool valid;
	bool gone;		/* "vanish": lookups fail; handles taken
				 * before stay usable until put (the
				 * kernel's dereg drains its references) */
	int refs;		/* handles out (mr_get not yet put) */
	u8 *mem;		/* the responder's memory */
	u8 *model;		/* the reference */
	u8 *touched;		/* last WR index + 1 that writes the byte */
};

struct rc_rwqe {		/* a posted receive WQE of the responder */
	u64 wr_id;
	u32 length;
	u8 *buf;
};

struct rc_held {
	u32 psn;
	u32 len;
	u8 buf[SIM_PKT_MAX];
};

struct fq;
struct rc_conn;

/*
 * How late an owed ACK is (protocol.rst "ACK policy"): from the first
 * step at which the responder owes an ACK (mrc_rx_ack_pending()) to the
 * ACK, or the packet that carries it, at most MRC_TLP_ACK_DELAY_US.
 */
struct rc_ackw {
	u64 since;		/* owed since then + 1 (0: nothing owed) */
	u64 sent;		/* ACKs emitted and cum_lo carried so far */
	u64 seen;		/* ... at since */
	u32 run;		/* ACKs a cum_lo replaced since a real one */
};

static void rc_ack_out(struct rc_ackw *a, u32 qpn, bool carried);
static void rc_ack_now_check(const struct rc_ackw *a, u64 sent0,
			     const struct mrc_pkt *p,
			     enum mrc_rx_verdict v0, bool ce, bool repeat,
			     bool live, u32 qpn);
static void req_pto_check(const struct mrc_req *q, u32 qpn, u32 us);

/* The packet would repeat the last NAK (its PSN, no RETX): none is sent. */
static bool rc_nak_repeat(const struct mrc_resp *r, const struct mrc_pkt *p)
{
	return r->nak_syn != MRC_SYN_ACK && p->psn == r->nak_psn &&
	       !(p->flags & MRC_F_RETX);
}

/* Faults after which an error completion / QP error is legitimate. */
static bool rc_err_faults(void)
{
	/*
	 * "close" with loss: the ACK the closing receiver sends last may be
	 * lost, and nobody answers the requester's retries (IB alike).
	 */
	return W.f.dereg || W.f.qp_err || W.f.access || W.f.badwqe ||
	       W.f.rnrx || W.f.vanish ||
	       (W.f.close && (W.f.loss_ppm || W.f.burst_ppm ||
			      W.f.corrupt_ppm || W.f.blackhole_ppm ||
			      W.f.flap_ppm));
}
#ifdef SIM_HAVE_REQ
static const struct mrc_rsp *fq_b_head(struct rc_conn *c);
#endif

/*
 * Longest SEND: with "rnrx" long enough that an RNR NAK may come back
 * while the message is still being segmented.
 */
static u32 rc_send_max(void)
{
	return (W.f.rnrx ? 16 : 4) * ep_mtu;
}

/* The requester QPs' rnr_retry: 7 (infinite) unless "rnrx". */
static u8 rc_rnr_retry(void)
{
	if (!W.f.rnrx)
		return 7;
	COV(f_rnrx);
	return (u8)(W.f.rnrx - 1);
}

struct rc_conn {
	struct ep req, rsp;	/* requester QP, responder QP */
	struct mrc_resp *r;
	struct mrc_env env;
	struct rc_mr mr[RC_NMR];
	struct rc_wr *wr;
	u32 nwr;
	u32 next_wr;		/* next WR to start sending */
	u32 cur_wr;		/* WR being sent (next_wr - 1 if partial) */
	bool cur_busy;
	u32 done_wr;		/* completed, in SQ order */
	u32 ok_wr;		/* successful completions */
	u32 cmpl_limit;		/* the sim's requester completes WRs < it */
	u32 sq_depth, rd_atomic;
	bool req_err, rsp_err;
	bool sq_bad;		/* a send completion in error was seen */
	u32 sq_bad_wr;		/* the first one */
	bool flush_pending;
	bool strict;		/* no avoidance of later-WR overlap */
	/* responder receive queue */
	struct rc_rwqe rq[RC_RQ_MAX];
	u32 rq_posted, rq_popped, rq_done;
	struct rc_rwqe slot[MRC_RSLOTS];
	u32 slot_msn[MRC_RSLOTS];
	u64 rq_hold_until;	/* RNR window */
	u32 rnrhold_mark;	/* "rnrhold": rc_rdat_done(rc[1]) at the last
				 * pop */
	/* expected receive completions: WR index of each message */
	u32 rmsg[RC_MAX_WR];
	u32 nrmsg;
	/* engine bookkeeping */
	struct sim_timer etimer[MRC_TIMER_MAX];
	int mr_refs;
	u32 nheld;
	struct rc_ackw ackw;	/* the responder's owed ACK (non-engines) */
	bool in_exec;
	bool fq_tx_b;		/* in the responder QP's transmit round */
	u32 badwqe_at;		/* fault: this WR's WQE is invalid */
	bool in_rx;
	u32 wr_bytes;		/* mr_write bytes during one packet */
	u32 exec_psn;
	u8 *atomic_execs;	/* per WR */
	u32 life;
	u32 old_nxt_q, old_nxt_s;	/* the previous life's send nxt */
	bool dereg_done;
	u32 dereg_mr;
	u64 dereg_at;
	/* fault "vanish" (rc_vanish()) */
	bool vanish_done;
	u32 vanish_at;		/* at this successful mr_get of the life */
	u32 ngets;
	bool get_failed;	/* the last mr_get found no MR */
	/* acknowledged held packets that could not be placed (one call) */
	bool held_fail, held_naked;
	u32 held_fail_psn;	/* the earliest */
	u32 held_fail_wr;	/* its WR + 1 (0: none this life) */
	u32 rcqe_ok;		/* WR + 1 of the last successful receive */
	/* requester QP on the core completer (else this file's own) */
	bool use_comp;
	bool cq_fail_pending;
	struct mrc_req *q;
	struct mrc_env qenv;
	struct sim_timer qtimer[MRC_TIMER_MAX];
	/* the core completer's wait after a fatal NAK: its latest deadline */
	bool fw_on;
	u64 fw_due;
	/* the full loop: both QPs of real engines (else NULL) */
	struct fq *fq[2];
	bool fq_borrowed;	/* the reverse direction of rc[0]'s QPs */
};

static struct rc_conn *rc;
static u32 rc_n;
static struct rc_held *rc_cur_h;	/* freed by cleanup if a run fails in it */
/* the packet mrc_resp_rx() is processing was committed void (epoch) */
static bool rc_voided_now;

/* responder state coverage: transitions seen, and the possible ones */
static u64 rc_trans[MRC_RESP_NSTATES][MRC_RESP_NSTATES];

static struct rc_conn *conn_of_ep(struct ep *e)
{
	return e->up;
}

/* ============================================================ MRs */

static struct rc_mr *rc_mr_find(struct rc_conn *c, u32 key)
{
	u32 i;

	for (i = 0; i < RC_NMR; i++)
		if (c->mr[i].rkey == key && c->mr[i].valid)
			return &c->mr[i];
	return NULL;
}

/*
 * The rkey a WR carries: its MR's, or for a zero-length WRITE, WRITE_IMM
 * or READ possibly whatever was on the stack (rsocket's control messages
 * leave it unset; IBA C9-88: not checked).
 */
static u32 rc_wr_rkey(const struct rc_conn *c, const struct rc_wr *w)
{
	return w->junk_rkey ? w->junk_rkey : c->mr[w->mr].rkey;
}

/*
 * Fault "vanish": the MR @m, just looked up for [@va, +@len), vanishes --
 * another context deregisters it (the kernel erases the key, then drains
 * the references: metaroce_dereg_mr) or invalidates it (LOCAL_INV,
 * SEND_WITH_INV on another QP of the PD) -- while the handle is out.
 * Lookups fail from now on; the handle stays usable until it is put.
 * Once per life: with probability 1/2 when a held packet of the same
 * message waits (the lookup is most likely the one of the packet that
 * completes the message, whose held LAST is placed next in the same
 * call), else at the life's vanish_at-th successful lookup. Draws only
 * from W.frng.
 */
static void rc_vanish(struct rc_conn *c, struct rc_mr *m, u64 va, u64 len)
{
	bool held = false;
	u32 i;

	if (!W.f.vanish || c->vanish_done || c->rsp_err)
		return;
	c->ngets++;
	for (i = 0; c->in_rx && i < c->r->nheld; i++) {
		const struct mrc_pkt *h = &c->r->held[i].p;

		if (h->write.rkey == m->rkey && h->write.va == va &&
		    h->write.msg_len == len)
			held = true;
	}
	if (held ? !rng_below(&W.frng, 2) : c->ngets != c->vanish_at)
		return;
	if (W.o->verbose > 1)
		printf("t=%llu qp %u: MR %u vanishes (%s)\n",
		       (unsigned long long)W.now, c->rsp.qpn,
		       (u32)(m - c->mr), held ? "held" : "lookup");
	m->valid = false;
	m->gone = true;
	c->vanish_done = true;
	COV(f_vanish);
	if (held)
		COV(f_vanish_held);
}

static void *env_mr_get(void *ctx, u32 key, bool remote, u32 access, u64 va,
			u64 len)
{
	struct rc_conn *c = ctx;
	struct rc_mr *m = rc_mr_find(c, key);

	SIM_CHECK(remote, "responder asked for a local key");
	c->get_failed = true;
	if (!m || (m->access & access) != access || va < m->va ||
	    va + len > m->va + m->len || va + len < va)
		return NULL;
	c->get_failed = false;
	c->mr_refs++;
	m->refs++;
	rc_vanish(c, m, va, len);
	return m;
}

static void env_mr_put(void *ctx, void *mr)
{
	struct rc_conn *c = ctx;
	struct rc_mr *m = mr;

	SIM_CHECK(c->mr_refs > 0 && m->refs > 0, "mr_put without mr_get");
	c->mr_refs--;
	m->refs--;
}

/*
 * A held packet is released: in the responder's rx call (resp_run_held),
 * right after its placement, whose first step is the MR lookup. If that
 * failed, the acknowledged packet is not in memory: the same call must
 * NAK it and fail the QP (rc_held_check()).
 */
static void rc_held_released(struct rc_conn *c, const struct rc_held *h)
{
	if (c->in_rx && c->get_failed) {
		if (!c->held_fail || mrc_seq_lt(h->psn, c->held_fail_psn))
			c->held_fail_psn = h->psn;
		c->held_fail = true;
		COV(resp_held_fail);
	}
	c->get_failed = false;
}

/* The WR whose request packets include @psn (this life), or -1. */
static int rc_wr_of_psn(const struct rc_conn *c, u32 psn)
{
	int i;

	for (i = (int)c->next_wr - 1; i >= 0; i--)
		if (c->wr[i].posted && mrc_seq_geq(psn, c->wr[i].first_psn))
			return i;
	return -1;
}

/*
 * The responder NAKs @psn with @syn. A fatal NAK of a WRITE packet: no
 * message after that WRITE may have completed at the receiver
 * (protocol.rst "Ordering": a SEND after a WRITE completes only once the
 * WRITE is entirely in memory). READ/atomics are not included: they run
 * later than a SEND behind them may complete (protocol.rst "Ordering").
 */
static void rc_nak_out(struct rc_conn *c, u8 syn, u32 psn)
{
	int i;

	if (!c || syn == MRC_SYN_ACK || syn == MRC_SYN_RNR || !c->wr)
		return;
	if (c->held_fail && psn == c->held_fail_psn &&
	    syn == MRC_SYN_REM_ACCESS)
		c->held_naked = true;
	i = rc_wr_of_psn(c, psn);
	if (i < 0 || (c->wr[i].kind != WR_WRITE &&
		      c->wr[i].kind != WR_WRITE_IMM))
		return;
	SIM_CHECK(c->rcqe_ok <= (u32)i, "qp %u: NAK %u of WRITE WR %u (psn "
		  "%u), but the receive of a later message (WR %u) completed "
		  "successfully", c->rsp.qpn, syn, i, psn, c->rcqe_ok - 1);
}

/*
 * After the responder's rx call: an acknowledged held packet that could
 * not be placed (its MR gone) was NAKed REM_ACCESS by its PSN and the QP
 * failed (protocol.rst "Ordering": never dropped silently).
 */
static void rc_held_check(struct rc_conn *c)
{
	int i;

	if (!c || !c->held_fail)
		return;
	SIM_CHECK(c->held_naked && c->rsp_err, "qp %u: held WRITE LAST psn "
		  "%u, acknowledged, could not be placed (MR gone) and was "
		  "dropped silently: %s", c->rsp.qpn, c->held_fail_psn,
		  c->rsp_err ? "the QP errored, no REM_ACCESS NAK of its PSN" :
		  "the QP is up");
	i = rc_wr_of_psn(c, c->held_fail_psn);
	if (i >= 0 && !c->held_fail_wr)
		c->held_fail_wr = (u32)i + 1;
	c->held_fail = c->held_naked = false;
}

static const u8 *src_bytes(struct rc_conn *c, const struct mrc_src *src)
{
	const struct rc_held *h = src->pkt;

	(void)c;
	if (src->buf)
		return (const u8 *)src->buf + src->off;
	SIM_CHECK(h, "payload source without packet");
	return h->buf + src->off;
}

/* A placement into responder memory: the invariants of every write. */
static void rc_placing(struct rc_conn *c, struct rc_mr *m, u64 va, u32 len,
		       const char *what)
{
	SIM_CHECK(!c->rsp_err, "%s placed after the responder QP errored",
		  what);
	SIM_CHECK(m >= c->mr && m < c->mr + RC_NMR, "%s: bad MR handle", what);
	SIM_CHECK(m->valid || (m->gone && m->refs > 0),
		  "%s into MR rkey %x after it was %s", what, m->rkey,
		  m->gone ? "gone (no handle left)" : "invalidated");
	SIM_CHECK(va >= m->va && va + len <= m->va + m->len,
		  "%s outside its MR: [%llx, +%u) not in [%llx, +%u)", what,
		  (unsigned long long)va, len, (unsigned long long)m->va,
		  m->len);
}

static int env_mr_write(void *ctx, void *mr, u64 va,
			const struct mrc_src *src, u32 len)
{
	struct rc_conn *c = ctx;
	struct rc_mr *m = mr;

	rc_placing(c, m, va, len, "WRITE");
	c->wr_bytes += len;
	memcpy(m->mem + (va - m->va), src_bytes(c, src), len);
	return MRC_COPY_OK;
}

static void env_mr_atomic(void *ctx, void *mr, u64 va, bool cmp_swap,
			  u64 compare, u64 swap_add, u64 *orig)
{
	struct rc_conn *c = ctx;
	struct rc_mr *m = mr;
	u64 v;
	u32 i;

	rc_placing(c, m, va, 8, "atomic");
	SIM_CHECK(!(va & 7), "atomic at unaligned %llx", (unsigned long long)va);
#ifdef SIM_HAVE_REQ
	if (c->fq[1]) {
		const struct mrc_rsp *h = fq_b_head(c);

		c->in_exec = c->fq_tx_b && h;
		c->exec_psn = h ? h->req_psn : 0;
	}
#endif
	SIM_CHECK(c->in_exec, "atomic executed outside the ordered execution "
		  "of the READ/atomic queue (on arrival or a duplicate)");
	for (i = 0; i < c->nwr; i++)
		if (c->wr[i].posted && c->wr[i].first_psn == c->exec_psn &&
		    (c->wr[i].kind == WR_CAS || c->wr[i].kind == WR_FAA))
			break;
	SIM_CHECK(i < c->nwr, "atomic for psn %u that is no atomic WR",
		  c->exec_psn);
	SIM_CHECK(!c->atomic_execs[i]++, "atomic WR %u (psn %u) executed twice",
		  i, c->exec_psn);
	memcpy(&v, m->mem + (va - m->va), 8);
	*orig = v;
	if (cmp_swap) {
		if (v == compare)
			v = swap_add;
	} else {
		v += swap_add;
	}
	memcpy(m->mem + (va - m->va), &v, 8);
}

static int env_mr_invalidate(void *ctx, u32 rkey, bool check_only)
{
	struct rc_conn *c = ctx;
	struct rc_mr *m = rc_mr_find(c, rkey);

	if (!m)
		return -1;
	if (!check_only) {
		SIM_CHECK(!c->rsp_err, "MR invalidated after the QP errored");
		m->valid = false;
		COV(resp_send_inv);
	}
	return 0;
}

/* ===================================================== receive queue */

static bool wr_is_rdat(const struct rc_wr *w);

/* READs/atomics of @d completed (in SQ order) */
static u32 rc_rdat_done(const struct rc_conn *d)
{
	u32 i, n = 0;

	for (i = 0; i < d->done_wr; i++)
		n += wr_is_rdat(&d->wr[i]);
	return n;
}

/*
 * Fault "rnrdep": rc[0]'s receiver (B, the requester of rc[1] in a QP
 * pair) takes a receive only once every READ/atomic it posted to its
 * peer completed, as an application that posts its next receive when
 * its READ is done. A's SENDs are RNR NAKed for as long as A owes B a
 * response: A must keep sending (and resending) responses through its
 * RNR waits, however long (stop 34's conformance rnr_resp, in the
 * simulator).
 */
static bool rc_rnrdep_holds(const struct rc_conn *c)
{
	const struct rc_conn *d = rc_n > 1 ? &rc[1] : NULL;
	u32 i;

	if (!W.f.rnrdep || c != &rc[0] || !d || !d->fq_borrowed)
		return false;
	/*
	 * "rnrhold": one receive each time one of B's READs/atomics
	 * completes -- the hold lasts a round trip, not the run
	 */
	if (W.f.rnrhold && rc_rdat_done(d) != c->rnrhold_mark)
		return false;
	for (i = d->done_wr; i < d->next_wr; i++)
		if (wr_is_rdat(&d->wr[i]))
			return true;
	return false;
}

static void rc_post_recv(struct rc_conn *c)
{
	struct rc_rwqe *w;

	if (c->rq_posted >= RC_RQ_MAX)
		return;
	w = &c->rq[c->rq_posted];
	w->wr_id = 0x1000 + c->rq_posted;
	w->length = rc_send_max() + 64;
	w->buf = calloc(1, w->length);
	if (!w->buf)
		abort();
	c->rq_posted++;
}

static void rc_repost_ev(void *arg, u64 x)
{
	struct rc_conn *c = arg;

	if (x != c->life)
		return;
	rc_post_recv(c);
}

static int env_rq_pop(void *ctx, u32 slot, u64 *wr_id, u64 *length)
{
	struct rc_conn *c = ctx;
	struct rc_rwqe *w;

	SIM_CHECK(slot < MRC_RSLOTS, "rq_pop slot %u", slot);
	if (rc_rnrdep_holds(c)) {
		COV(f_rnrdep);
		return MRC_RQ_EMPTY;
	}
	if (W.now < c->rq_hold_until || c->rq_popped == c->rq_posted) {
		COV(resp_rnr);
		return MRC_RQ_EMPTY;
	}
	w = &c->rq[c->rq_popped++];
	if (W.f.rnrhold && rc_n > 1)
		c->rnrhold_mark = rc_rdat_done(&rc[1]);	/* permit used */
	SIM_CHECK(!c->slot[slot].buf, "rq_pop into slot %u still in use", slot);
	c->slot[slot] = *w;
	w->buf = NULL;		/* the slot owns it now */
	c->slot_msn[slot] = c->rq_popped - 1;
	*wr_id = w->wr_id;
	*length = w->length;
	/* the application posts another one, soon or (RNR) late */
	if (rng_ppm(&W.rng, W.f.rnr_ppm)) {
		c->rq_hold_until = W.now + rng_range(&W.rng, 100, 5000);
		COV(f_rnr);
		sim_at(c->rq_hold_until - W.now + 1, rc_repost_ev, c, c->life);
	} else {
		sim_at(rng_range(&W.rng, 0, 50), rc_repost_ev, c, c->life);
	}
	return MRC_RQ_OK;
}

static int env_rq_copy(void *ctx, u32 slot, u64 offset,
		       const struct mrc_src *src, u32 len)
{
	struct rc_conn *c = ctx;
	struct rc_rwqe *w = &c->slot[slot];

	SIM_CHECK(!c->rsp_err, "SEND placed after the responder QP errored");
	SIM_CHECK(slot < MRC_RSLOTS && w->buf, "rq_copy into empty slot %u",
		  slot);
	if (offset + len > w->length)
		return MRC_COPY_LEN;
	memcpy(w->buf + offset, src_bytes(c, src), len);
	return MRC_COPY_OK;
}

static void rc_close_arm(struct rc_conn *c);

static int env_post_rcqe(void *ctx, const struct mrc_rcqe *cq)
{
	struct rc_conn *c = ctx;
	struct rc_rwqe *w = &c->slot[cq->slot];
	u32 k = c->rq_done, wi;
	struct rc_wr *wr;

	SIM_CHECK(cq->wr_id == 0x1000 + k,
		  "receive completion wr_id %llx, expected %x (RQ order)",
		  (unsigned long long)cq->wr_id, 0x1000 + k);
	c->rq_done++;
	COV(resp_rcqe);
	if (cq->status != MRC_WC_SUCCESS) {
		SIM_CHECK(c->rsp_err || cq->status != MRC_WC_WR_FLUSH_ERR,
			  "flush completion while the QP is up");
		if (cq->status != MRC_WC_WR_FLUSH_ERR)
			SIM_CHECK(c->req_err || W.f.dereg || W.f.qp_err ||
				  W.f.access || W.f.vanish,
				  "receive completion %u status %u in a run "
				  "without errors", k, cq->status);
		goto out;
	}
	/* after an error completion, the rest are flushed (IB) */
	SIM_CHECK(!c->rsp_err,
		  "successful receive completion after the QP errored");
	SIM_CHECK(k < c->nrmsg, "receive completion %u, only %u messages", k,
		  c->nrmsg);
	wi = c->rmsg[k];
	wr = &c->wr[wi];
	c->rcqe_ok = wi + 1;
	SIM_CHECK(cq->byte_len == wr->len, "recv %u (WR %u): byte_len %u, "
		  "sent %u", k, wi, cq->byte_len, wr->len);
	if (wr->kind == WR_WRITE_IMM) {
		SIM_CHECK(cq->opcode == MRC_WC_RECV_RDMA_WITH_IMM &&
			  (cq->wc_flags & MRC_WCF_WITH_IMM) &&
			  cq->imm == cpu_to_be32(wr->imm),
			  "recv %u (WR %u, WRITE_IMM): opcode %u flags %x imm "
			  "%x", k, wi, cq->opcode, cq->wc_flags, cq->imm);
		goto out;
	}
	SIM_CHECK(cq->opcode == MRC_WC_RECV, "recv %u: opcode %u", k,
		  cq->opcode);
	if (wr->kind == WR_SEND_IMM)
		SIM_CHECK((cq->wc_flags & MRC_WCF_WITH_IMM) &&
			  cq->imm == cpu_to_be32(wr->imm),
			  "recv %u (WR %u): imm %x flags %x", k, wi, cq->imm,
			  cq->wc_flags);
	if (wr->kind == WR_SEND_INV)
		SIM_CHECK((cq->wc_flags & MRC_WCF_WITH_INV) &&
			  cq->imm == c->mr[wr->mr].rkey &&
			  !c->mr[wr->mr].valid,
			  "recv %u (WR %u): SEND_WITH_INV flags %x imm %x, MR "
			  "valid %d", k, wi, cq->wc_flags, cq->imm,
			  c->mr[wr->mr].valid);
	SIM_CHECK(!memcmp(w->buf, wr->data, wr->len),
		  "recv %u (WR %u): payload differs", k, wi);
	rc_close_arm(c);
out:
	free(w->buf);
	w->buf = NULL;
	return 0;
}

/* ============================================================ misc */

static u64 env_now(void *ctx)
{
	(void)ctx;
	return W.now;
}

static void env_emit(void *ctx, const struct mrc_pkt *p,
		     const struct mrc_src *src, unsigned int flags)
{
	struct rc_conn *c = ctx;
	struct ep *e = &c->rsp;

	(void)flags;
	SIM_CHECK(p->opcode == MRC_OP_ACK, "responder emitted opcode %u",
		  p->opcode);
	rc_ack_out(&c->ackw, e->qpn, false);
	rc_nak_out(c, p->ack.syndrome, p->ack.nak_psn);
	SIM_CHECK(p->path_id < e->pathsp->n, "ACK on path %u of %u",
		  p->path_id, e->pathsp->n);
	if (p->ack.syndrome == MRC_SYN_REM_ACCESS)
		COV(resp_nak_access);
	else if (p->ack.syndrome == MRC_SYN_INV_REQ)
		COV(resp_nak_inv);
	if (W.o->verbose > 1 && p->ack.syndrome > MRC_SYN_RNR)
		printf("t=%llu qp %u: NAK %u psn %u (cum %u)\n",
		       (unsigned long long)W.now, e->qpn, p->ack.syndrome,
		       p->ack.nak_psn, p->ack.cum_psn);
	fab_send(e->node, e->peer_node, e->pathsp->p[p->path_id].sport, p,
		 src ? src_bytes(c, src) : NULL);
}

static void env_release(void *ctx, const void *pkt)
{
	struct rc_conn *c = ctx;

	SIM_CHECK(c->nheld > 0, "release of a packet never held");
	c->nheld--;
	if (c->in_rx && !c->rsp_err)
		COV(resp_deferred_run);
	rc_held_released(c, pkt);
	free((void *)pkt);
}

static void env_qp_error(void *ctx, u8 event)
{
	struct rc_conn *c = ctx;

	if (W.o->verbose > 1)
		printf("t=%llu qp %u: responder error event %u\n",
		       (unsigned long long)W.now, c->rsp.qpn, event);
	if (!c->rsp_err)
		COV(resp_err);
	c->rsp_err = true;
	c->flush_pending = true;
}

static void rc_etimer_fn(void *arg);

static void env_timer_arm(void *ctx, u8 t, u32 us)
{
	struct rc_conn *c = ctx;

	SIM_CHECK(t < MRC_TIMER_MAX, "timer %u", t);
	timer_arm(&c->etimer[t], us);
}

static void env_timer_cancel(void *ctx, u8 t)
{
	struct rc_conn *c = ctx;

	SIM_CHECK(t < MRC_TIMER_MAX, "timer %u", t);
	timer_cancel(&c->etimer[t]);
}

static bool env_timer_pending(void *ctx, u8 t)
{
	struct rc_conn *c = ctx;

	SIM_CHECK(t < MRC_TIMER_MAX, "timer %u", t);
	return c->etimer[t].armed;
}

static void env_count(void *ctx, u8 counter, u32 n)
{
	(void)ctx;
	(void)n;
	if (counter == MRC_CNT_DUPLICATE)
		COV(rx_dup);
	else if (counter == MRC_CNT_OUT_OF_ORDER)
		COV(rx_ooo);
	else if (counter == MRC_CNT_OUT_OF_WINDOW)
		COV(rx_oow);
	else if (counter == MRC_CNT_VOIDED) {
		COV(rx_voided);
		rc_voided_now = true;
	}
}

static void env_transition(void *ctx, u8 engine, u8 from, u8 to)
{
	(void)ctx;
	if (engine == MRC_ENG_RESP && from < MRC_RESP_NSTATES &&
	    to < MRC_RESP_NSTATES)
		rc_trans[from][to]++;
}

static int env_comp_resp(void *ctx, const struct mrc_pkt *p,
			 const struct mrc_src *src)
{
	(void)ctx;
	(void)src;
	sim_fail("responder QP got a response (op %u psn %u)", p->opcode,
		 p->psn);
}

static void env_comp_progress(void *ctx)
{
	(void)ctx;
	sim_fail("comp_progress on the responder QP");
}

static const struct mrc_env_ops rc_env_ops = {
	.now_us = env_now,
	.emit = env_emit,
	.release = env_release,
	.mr_get = env_mr_get,
	.mr_put = env_mr_put,
	.mr_write = env_mr_write,
	.mr_atomic = env_mr_atomic,
	.mr_invalidate = env_mr_invalidate,
	.rq_pop = env_rq_pop,
	.rq_copy = env_rq_copy,
	.post_rcqe = env_post_rcqe,
	.qp_error = env_qp_error,
	.timer_arm = env_timer_arm,
	.timer_cancel = env_timer_cancel,
	.timer_pending = env_timer_pending,
	.count = env_count,
	.transition = env_transition,
	.comp_resp = env_comp_resp,
	.comp_progress = env_comp_progress,
};

/* After every call into the engine: the environment's half of errors. */
static void rc_after_engine(struct rc_conn *c)
{
	SIM_CHECK(c->mr_refs == 0, "MR handles leaked by the engine (%d)",
		  c->mr_refs);
	if (c->flush_pending) {
		c->flush_pending = false;
		mrc_resp_stop(c->r);
		ep_error(&c->rsp, 0, 0);
		mrc_resp_flush(c->r, &c->env, c->rq_posted - c->rq_popped);
		SIM_CHECK(c->nheld == 0, "held packets not released by flush");
	}
}

static void rc_etimer_fn(void *arg)
{
	struct sim_timer *t = arg;
	struct rc_conn *c = NULL;
	u32 i;

	for (i = 0; i < rc_n && !c; i++)
		if (t >= rc[i].etimer && t < rc[i].etimer + MRC_TIMER_MAX)
			c = &rc[i];
	if (!c || t != &c->etimer[MRC_TIMER_ACK])
		return;
	if (mrc_resp_ready(c->r)) {
		COV(rx_ack_delayed);
		mrc_resp_ack_timer(c->r, &c->env);
	}
	rc_after_engine(c);
}

/* ====================================================== responder QP */

/* A sequenced packet for the responder QP: into the engine. */
static void rsp_rx_seq(struct ep *e, const struct mrc_pkt *p,
		       const u8 *payload, bool ce)
{
	struct rc_conn *c = conn_of_ep(e);
	struct rc_held *h;
	enum mrc_rx_verdict v0, v1;
	unsigned int ret;
	bool repeat;
	u64 sent0;

	if (!mrc_resp_ready(c->r)) {
		mrc_resp_renak(c->r, &c->env, p);
		rc_after_engine(c);
		return;
	}
	/* the engine may keep the packet: give it a copy it owns */
	h = malloc(sizeof(*h));
	if (!h)
		abort();
	h->len = p->hdr_len + p->payload_len;
	h->psn = p->psn;
	memcpy(h->buf + p->hdr_len, payload, p->payload_len);
	v0 = mrc_rx_check(&c->r->rx, p->psn);
	rc_cur_h = h;
	c->in_rx = true;
	c->get_failed = false;	/* an MR lookup of this call's, not before */
	c->wr_bytes = 0;
	sent0 = c->ackw.sent;
	repeat = rc_nak_repeat(c->r, p);
	rc_voided_now = false;
	ret = mrc_resp_rx(c->r, &c->env, p, h, ce);
	/*
	 * This QP's responses leave when its ep sends, not in a pass right
	 * after the request (as tx.c's worker path): the delayed ACK now.
	 */
	mrc_resp_ack_settle(c->r, &c->env);
	c->in_rx = false;
	rc_held_check(c);
	rc_ack_now_check(&c->ackw, sent0, p, v0, ce, repeat,
			 !c->rsp_err && mrc_resp_ready(c->r), e->qpn);
	rc_cur_h = NULL;
	v1 = mrc_rx_check(&c->r->rx, p->psn);
	if (v0 == MRC_RX_NEW && v1 == MRC_RX_DUP)
		ep_mark_seen(e, p->psn, rc_voided_now);
	if (v0 == MRC_RX_NEW) {
		COV(rx_new);
		if (v1 == MRC_RX_NEW)
			COV(resp_drop);
		else if (ret & MRC_RESP_HELD)
			COV(resp_held);
		else
			COV(resp_placed);
		/* a WRITE clipped by later WRITEs that overtook it */
		if (v1 == MRC_RX_DUP && !(ret & MRC_RESP_HELD) &&
		    (p->opcode == MRC_OP_WRITE ||
		     p->opcode == MRC_OP_WRITE_IMM) && p->payload_len &&
		    c->wr_bytes < p->payload_len) {
			if (c->wr_bytes)
				COV(resp_wo_split);
			else
				COV(resp_wo_skip);
		}
	}
	if (ret & MRC_RESP_HELD)
		c->nheld++;
	else
		free(h);
	rc_after_engine(c);
}

/* The responder QP's sender: READ/atomic responses, as tx.c sends them. */
static int rsp_next(struct ep *e, struct mrc_pkt *p, u8 *payload)
{
	struct rc_conn *c = conn_of_ep(e);
	struct mrc_rsp *q;
	struct rc_mr *m;
	u32 chunk;
	int err;

	if (!mrc_resp_ready(c->r))
		return 0;
	/*
	 * As tx.c after a pass: a failed request waiting for the responses
	 * before it, all built by the calls before this one, is NAKed now.
	 */
	if (c->r->fnak) {
		mrc_resp_rsp_abort(c->r, &c->env);
		rc_after_engine(c);
		if (!mrc_resp_ready(c->r))
			return 0;
	}
	q = mrc_rspq_head(&c->r->rspq);
	if (!q)
		return 0;
	if (!mrc_resp_rsp_ready(c->r)) {
		COV(resp_rspq_wait);
		return 0;
	}
	c->in_exec = true;
	c->exec_psn = q->req_psn;
	err = mrc_resp_rsp_exec(c->r, &c->env, q);
	c->in_exec = false;
	if (err) {
		mrc_resp_rsp_abort(c->r, &c->env);
		rc_after_engine(c);
		return 0;
	}
	rc_after_engine(c);
	/* its first packet acknowledges the request, as tx.c's */
	if (q->kind == MRC_RSP_ATOMIC || !q->off)
		mrc_resp_rsp_acks(c->r, &c->env, q->req_psn);
	if (q->kind == MRC_RSP_ATOMIC) {
		COV(resp_rspq_run);
		p->opcode = MRC_OP_ATOMIC_RESP;
		p->flags = MRC_F_FIRST | MRC_F_LAST;
		p->aresp.orig = q->orig;
		p->aresp.req_psn = q->req_psn;
		mrc_rspq_pop(&c->r->rspq);
		return 1;
	}
	/* READ: the data is read as each response packet is built (tx.c) */
	m = q->len ? rc_mr_find(c, q->rkey) : NULL;
	if (q->len && (!m || q->va < m->va ||
		       q->va + q->len > m->va + m->len)) {
		c->r->rsp_abort = 1;
		c->r->rsp_abort_psn = q->req_psn;
		mrc_resp_rsp_abort(c->r, &c->env);
		rc_after_engine(c);
		return 0;
	}
	if (!q->off)
		COV(resp_rspq_run);
	chunk = min_t(u32, ep_mtu, q->len - q->off);
	p->opcode = MRC_OP_READ_RESP;
	p->flags = (q->off ? 0 : MRC_F_FIRST) |
		   (q->off + chunk == q->len ? MRC_F_LAST : 0);
	p->rresp.req_psn = q->req_psn;
	p->rresp.offset = q->off;
	p->rresp.msg_len = q->len;
	p->payload_len = chunk;
	if (chunk)
		memcpy(payload, m->mem + (q->va + q->off - m->va), chunk);
	q->off += chunk;
	if (q->off == q->len)
		mrc_rspq_pop(&c->r->rspq);
	return 1;
}

static int rsp_recv(struct ep *e, const struct mrc_pkt *p, const u8 *payload,
		    u8 *syn)
{
	(void)e; (void)p; (void)payload; (void)syn;
	sim_fail("responder ep recv");
}

static void rsp_committed(struct ep *e, int r)
{
	(void)e; (void)r;
}

static void rsp_acked(struct ep *e)
{
	(void)e;
}

static void rsp_nak(struct ep *e, u8 syn, u32 psn)
{
	sim_fail("qp %u: NAK %u for response psn %u", e->qpn, syn, psn);
}

static void rsp_error(struct ep *e)
{
	struct rc_conn *c = conn_of_ep(e);

	/* the responder QP gave up sending responses: to ERR */
	if (!c->rsp_err) {
		c->rsp_err = true;
		c->flush_pending = true;
		rc_after_engine(c);
	}
}

static bool rc_ep_voided(struct ep *e, u32 psn);

static const struct ep_ops rsp_ops = {
	.voided = rc_ep_voided,
	.next = rsp_next,
	.recv = rsp_recv,
	.committed = rsp_committed,
	.acked = rsp_acked,
	.nak = rsp_nak,
	.error = rsp_error,
	.rx_seq = rsp_rx_seq,
};

/* ====================================================== requester QP */

static bool wr_is_rdat(const struct rc_wr *w)
{
	return w->kind == WR_READ || w->kind == WR_CAS || w->kind == WR_FAA;
}

static bool wr_is_recv(const struct rc_wr *w)
{
	return w->kind == WR_WRITE_IMM || w->kind == WR_SEND ||
	       w->kind == WR_SEND_IMM || w->kind == WR_SEND_INV;
}

static u32 rc_outstanding_rdat(struct rc_conn *c)
{
	u32 i, n = 0;

	for (i = c->done_wr; i < c->next_wr; i++)
		if (wr_is_rdat(&c->wr[i]))
			n++;
	return n;
}

static int req_next(struct ep *e, struct mrc_pkt *p, u8 *payload)
{
	struct rc_conn *c = conn_of_ep(e);
	struct rc_wr *w;
	u32 chunk;

	if (c->req_err)
		return 0;
	if (!c->cur_busy) {
		if (c->next_wr == c->nwr ||
		    c->next_wr - c->done_wr >= c->sq_depth)
			return 0;
		w = &c->wr[c->next_wr];
		if (wr_is_rdat(w) && rc_outstanding_rdat(c) >= c->rd_atomic)
			return 0;
		if (w->fence && rc_outstanding_rdat(c))
			return 0;
		c->cur_wr = c->next_wr++;
		c->cur_busy = true;
		w->posted = true;
		w->first_psn = e->sb.nxt;
		w->sent = 0;
	}
	w = &c->wr[c->cur_wr];
	w->last_psn = e->sb.nxt;
	switch (w->kind) {
	case WR_READ:
		p->opcode = MRC_OP_READ_REQ;
		p->flags = MRC_F_FIRST | MRC_F_LAST;
		p->read.va = w->va;
		p->read.rkey = rc_wr_rkey(c, w);
		p->read.len = w->len;
		c->cur_busy = false;
		return 1;
	case WR_CAS:
	case WR_FAA:
		p->opcode = w->kind == WR_CAS ? MRC_OP_CMP_SWAP :
			    MRC_OP_FETCH_ADD;
		p->flags = MRC_F_FIRST | MRC_F_LAST;
		p->atomic.va = w->va;
		p->atomic.rkey = c->mr[w->mr].rkey;
		p->atomic.compare = w->compare;
		p->atomic.swap_add = w->swap_add;
		c->cur_busy = false;
		return 1;
	}
	/* as requester.c: the pending ACK before what the peer app sees */
	if (!w->sent && w->kind != WR_WRITE)
		ep_flush_ack(e);
	chunk = min_t(u32, ep_mtu, w->len - w->sent);
	p->flags = (w->sent ? 0 : MRC_F_FIRST) |
		   (w->sent + chunk == w->len ? MRC_F_LAST : 0);
	p->payload_len = chunk;
	memcpy(payload, w->data + w->sent, chunk);
	switch (w->kind) {
	case WR_WRITE:
	case WR_WRITE_IMM:
		p->opcode = w->kind == WR_WRITE ? MRC_OP_WRITE :
			    MRC_OP_WRITE_IMM;
		p->write.va = w->va;
		p->write.rkey = rc_wr_rkey(c, w);
		p->write.msg_len = w->len;
		p->write.offset = w->sent;
		if (w->kind == WR_WRITE_IMM) {
			p->write.rmsn = w->rmsn;
			p->write.imm = w->imm;
		}
		break;
	default:
		p->opcode = w->kind == WR_SEND ? MRC_OP_SEND :
			    w->kind == WR_SEND_IMM ? MRC_OP_SEND_IMM :
			    MRC_OP_SEND_INV;
		p->send.rmsn = w->rmsn;
		p->send.msg_len = w->len;
		p->send.offset = w->sent;
		p->send.imm = w->kind == WR_SEND_INV ? c->mr[w->mr].rkey :
			      w->kind == WR_SEND_IMM ? w->imm : 0;
		if ((p->flags & MRC_F_LAST) && (w->imm & 1))
			p->flags |= MRC_F_SOLICIT;
		break;
	}
	w->sent += chunk;
	if (w->sent == w->len)
		c->cur_busy = false;
	return 1;
}

static struct rc_wr *rc_wr_by_psn(struct rc_conn *c, u32 psn)
{
	u32 i;

	for (i = c->done_wr; i < c->next_wr; i++)
		if (c->wr[i].first_psn == psn && wr_is_rdat(&c->wr[i]))
			return &c->wr[i];
	return NULL;
}

/*
 * As completer.c (MRC_COMP_ACK_NOW): the response that completed the last
 * READ/atomic awaited is acknowledged at once.
 */
static void req_resp_ack_now(struct rc_conn *c, struct ep *e)
{
	u32 i;

	for (i = c->done_wr; i < c->next_wr; i++) {
		const struct rc_wr *w = &c->wr[i];

		if (wr_is_rdat(w) && w->rcvd < (w->kind == WR_READ && w->len ?
						  w->len : 1))
			return;
	}
	e->rx.ack_now = 1;
}

/* A response to one of our READs/atomics, in the responder's PSN space. */
static int req_recv(struct ep *e, const struct mrc_pkt *p, const u8 *payload,
		    u8 *syn)
{
	struct rc_conn *c = conn_of_ep(e);
	struct rc_wr *w;

	(void)syn;
	if (p->opcode == MRC_OP_ATOMIC_RESP) {
		w = rc_wr_by_psn(c, p->aresp.req_psn);
		SIM_CHECK(w && w->kind != WR_READ && !w->rcvd,
			  "ATOMIC_RESP for psn %u: no such atomic pending",
			  p->aresp.req_psn);
		w->orig_got = p->aresp.orig;
		w->rcvd = 1;
		ep_resp_ack(e, p->aresp.req_psn);
		req_resp_ack_now(c, e);
		return EP_PLACED;
	}
	SIM_CHECK(p->opcode == MRC_OP_READ_RESP, "requester got opcode %u",
		  p->opcode);
	w = rc_wr_by_psn(c, p->rresp.req_psn);
	SIM_CHECK(w && w->kind == WR_READ, "READ_RESP for psn %u: no READ",
		  p->rresp.req_psn);
	SIM_CHECK(p->rresp.msg_len == w->len &&
		  p->rresp.offset + p->payload_len <= w->len,
		  "READ_RESP psn %u: offset %u len %u of %u", p->psn,
		  p->rresp.offset, p->payload_len, w->len);
	memcpy(w->got + p->rresp.offset, payload, p->payload_len);
	w->rcvd += p->payload_len;
	SIM_CHECK(w->rcvd <= w->len, "READ of %u bytes got %u", w->len,
		  w->rcvd);
	if (!w->len)
		w->rcvd = 1;
	ep_resp_ack(e, p->rresp.req_psn);
	if (w->rcvd >= (w->len ? w->len : 1))
		req_resp_ack_now(c, e);
	return EP_PLACED;
}

static void req_complete(struct rc_conn *c)
{
	struct ep *e = &c->req;

	while (c->done_wr < c->next_wr && c->done_wr < c->cmpl_limit &&
	       !c->req_err) {
		struct rc_wr *w = &c->wr[c->done_wr];
		u32 i = c->done_wr;

		if (w->done)
			sim_fail("WR %u completed twice", i);
		if (c->cur_busy && c->cur_wr == i)
			break;
		if (!mrc_seq_gt(e->sb.una, w->last_psn))
			break;
		if (w->kind == WR_READ && w->rcvd < (w->len ? w->len : 1))
			break;
		if ((w->kind == WR_CAS || w->kind == WR_FAA) && !w->rcvd)
			break;
		if (w->kind == WR_READ)
			SIM_CHECK(!memcmp(w->got, w->data, w->len),
				  "READ WR %u (psn %u, %u bytes at %llx) returned "
				  "data that differs from the reference (stale: "
				  "an earlier WRITE not seen?)", i, w->first_psn,
				  w->len, (unsigned long long)w->va);
		if (w->kind == WR_CAS || w->kind == WR_FAA)
			SIM_CHECK(w->orig_got == w->orig_expect,
				  "atomic WR %u (psn %u) returned %llx, the "
				  "reference says %llx", i, w->first_psn,
				  (unsigned long long)w->orig_got,
				  (unsigned long long)w->orig_expect);
		w->done = true;
		w->status = MRC_WC_SUCCESS;
		c->done_wr++;
		c->ok_wr++;
		W.ops_done++;
		COV(req_cqe_ok);
	}
}

static bool req_waiting(struct ep *e)
{
	struct rc_conn *c = conn_of_ep(e);

	return !c->req_err && c->done_wr != c->next_wr;
}

static void req_committed(struct ep *e, int r)
{
	(void)r;
	req_complete(conn_of_ep(e));
}

static void req_acked(struct ep *e)
{
	req_complete(conn_of_ep(e));
}

/*
 * The QP fails: WR @bad (or, if -1, the first not completed) with
 * @status, every other one not completed with WR_FLUSH_ERR.
 */
static void req_fail_wr(struct rc_conn *c, u8 status, int bad)
{
	u32 i;

	if (c->req_err)
		return;
	c->req_err = true;
	if (bad < 0)
		bad = (int)c->done_wr;
	for (i = c->done_wr; i < c->nwr; i++) {
		c->wr[i].done = true;
		c->wr[i].status = i == (u32)bad ? status :
				  MRC_WC_WR_FLUSH_ERR;
		if (i == (u32)bad)
			COV(req_cqe_err);
		else
			COV(req_flush);
	}
	c->done_wr = c->nwr;
}

static void req_fail(struct rc_conn *c, u8 status)
{
	req_fail_wr(c, status, -1);
}

static void req_nak(struct ep *e, u8 syn, u32 psn)
{
	struct rc_conn *c = conn_of_ep(e);
	int bad;

	if (!(rc_err_faults() || c->strict)) {
		u32 i, n = 0;
		char why[160] = "";

		for (i = c->done_wr; i < c->next_wr; i++)
			if (mrc_seq_geq(psn, c->wr[i].first_psn) &&
			    mrc_seq_leq(psn, c->wr[i].last_psn))
				break;
		if (i < c->next_wr) {
			struct rc_wr *w = &c->wr[i];

			n = snprintf(why, sizeof(why),
				     "WR %u kind %u MR %u (valid %d) va %llx len %u",
				     i, w->kind, w->mr, c->mr[w->mr].valid,
				     (unsigned long long)w->va, w->len);
			for (i = i + 1; i < c->next_wr && n < 150; i++)
				if (c->wr[i].kind == WR_SEND_INV &&
				    c->wr[i].mr == w->mr)
					n += snprintf(why + n, sizeof(why) - n,
						      "; WR %u SEND_INV of it", i);
		}
		sim_fail("qp %u: NAK %u for psn %u in a run that should have "
			 "no errors: %s", e->qpn, syn, psn, why);
	}
	/*
	 * protocol.rst "Fatal NAK": the WRs before the NAKed one that are
	 * complete succeed, the NAKed one fails with the NAK's status even
	 * if the NAK's cum covers it (an acknowledged held WRITE LAST that
	 * could not be placed), the others are flushed.
	 */
	bad = rc_wr_of_psn(c, psn);
	if (bad >= 0 && (u32)bad < c->done_wr)
		bad = -1;	/* names no outstanding WR: flush the rest */
	c->cmpl_limit = bad >= 0 ? (u32)bad : ~0u;
	req_complete(c);
	c->cmpl_limit = ~0u;
	req_fail_wr(c, syn == MRC_SYN_REM_ACCESS ? MRC_WC_REM_ACCESS_ERR :
		    syn == MRC_SYN_INV_REQ ? MRC_WC_REM_INV_REQ_ERR :
		    MRC_WC_REM_OP_ERR, bad >= 0 ? bad : (int)c->nwr);
	ep_error(e, 0, 0);
}

/*
 * Version 3's RNR switch: the responder voided our request at @psn and
 * every later one of our epoch (protocol.rst "RNR and the request
 * epoch"). The WRs from the one of @psn on are sent again from their
 * first byte, under new PSNs; nothing of them ran at the responder.
 */
static bool req_rewind(struct ep *e, u32 psn, u32 *first)
{
	struct rc_conn *c = conn_of_ep(e);
	int i = rc_wr_of_psn(c, psn);
	u32 j;

	if (i < 0 || (u32)i < c->done_wr)
		return false;
	*first = c->wr[i].first_psn;
	for (j = (u32)i; j < c->next_wr; j++) {
		struct rc_wr *w = &c->wr[j];

		SIM_CHECK(!w->done && !w->rcvd,
			  "qp %u: WR %u voided at psn %u was done or answered",
			  e->qpn, j, psn);
		w->posted = false;
		w->sent = 0;
		w->first_psn = 0;
		w->last_psn = 0;
	}
	c->next_wr = (u32)i;
	c->cur_busy = false;
	return true;
}

static void req_error(struct ep *e)
{
	req_fail(conn_of_ep(e), MRC_WC_RETRY_EXC_ERR);
}

static const struct ep_ops req_ops = {
	.next = req_next,
	.recv = req_recv,
	.committed = req_committed,
	.acked = req_acked,
	.nak = req_nak,
	.rewind = req_rewind,
	.voided = rc_ep_voided,
	.error = req_error,
	.waiting = req_waiting,
};

/* ================================= requester QP on the core completer */

#ifdef SIM_HAVE_COMP
/*
 * The lazy retransmission timer (struct mrc_req.rto_due): the
 * environment's timer is armed exactly when the requester believes it
 * is, for the time it believes, and never later than the timer is due.
 * With rto_fired()'s check (due exactly then), the RTO and the probe
 * fire when an eager timer would.
 */
static void rto_lazy_check(const struct mrc_req *q, const struct sim_timer *t,
			   u32 qpn)
{
	SIM_CHECK(q->rto_hw_on == t->armed &&
		  (!t->armed || t->when == q->rto_hw),
		  "qp %u: RTO timer %s t=%llu, the requester thinks %s t=%llu",
		  qpn, t->armed ? "armed for" : "off, at",
		  (unsigned long long)t->when,
		  q->rto_hw_on ? "armed for" : "off, at",
		  (unsigned long long)q->rto_hw);
	SIM_CHECK(!q->rto_on || (t->armed && t->when <= q->rto_due),
		  "qp %u: RTO due at t=%llu, its timer %s t=%llu", qpn,
		  (unsigned long long)q->rto_due,
		  t->armed ? "fires at" : "is off, at",
		  (unsigned long long)t->when);
}

/*
 * The environment's RTO timer of @q fired: is the RTO (or probe) due? It
 * must be exactly when it was set for.
 */
static bool rto_fired(struct mrc_req *q, const struct mrc_env *e, u32 qpn)
{
	u64 due = q->rto_due;
	bool on = q->rto_on;

	if (mrc_req_rto_fired(q, e)) {
		SIM_CHECK(on && W.now == due, "qp %u: RTO fired at t=%llu, "
			  "due at t=%llu", qpn, (unsigned long long)W.now,
			  (unsigned long long)due);
		return true;
	}
	if (q->rto_hw_on)
		COV(rto_early);
	else
		COV(rto_stopped);
	return false;
}

/*
 * The requester QP's send side as the module has it: struct mrc_req, its
 * ACKs, NAKs, responses and completions run by the core completer
 * (completer.c); segmentation, spraying, retransmission and the timer
 * rules are this file's port of kernel/tx.c (the requester engine is not
 * in the core yet).
 */
static u64 comp_trans[MRC_COMP_NSTATES][MRC_COMP_NSTATES];

#define CQ_NSWQ		128	/* >= the largest sq_depth, power of two */
#define CQ_SWQE_SIZE	(sizeof(struct mrc_swqe) + sizeof(struct mrc_sge))

static void creq_flush(struct rc_conn *c);

static u64 cq_now(void *ctx)
{
	(void)ctx;
	return W.now;
}

static void cq_emit(void *ctx, const struct mrc_pkt *p,
		    const struct mrc_src *src, unsigned int flags)
{
	(void)ctx; (void)src; (void)flags;
	sim_fail("completer emitted opcode %u", p->opcode);
}

static void cq_qp_error(void *ctx, u8 event)
{
	struct rc_conn *c = ctx;

	(void)event;
	c->q->failed = 1;
	c->cq_fail_pending = true;
}

static void cq_timer_arm(void *ctx, u8 t, u32 us)
{
	struct rc_conn *c = ctx;

	SIM_CHECK(t < MRC_TIMER_MAX, "timer %u", t);
	timer_arm(&c->qtimer[t], us);
}

/* The requester set its retransmission timer: a probe's timeout is right. */
/*
 * The core completer's timer is set while @q is after a fatal NAK: it is
 * the wait for the responses sent before the NAK (protocol.rst "Fatal
 * NAK"); remember its deadline for rc_fnak_flush_check().
 */
static void rc_fnak_wait_seen(struct rc_conn *c, const struct mrc_req *q,
			      u32 us)
{
	if (c && q->peer_err && !q->failed) {
		c->fw_on = true;
		c->fw_due = W.now + us;
	}
}

/*
 * A READ/atomic before the NAKed WQE whose request the responder
 * acknowledged is flushed after a fatal NAK only once the wait for its
 * response is over: one RTO from the NAK, or from the last part of the
 * response that came, whichever is later (not at the NAK, not when a
 * timer armed before the NAK runs out). The first flushed one only: the
 * later ones flush because it did. A WQE voided by an RNR refusal is
 * flushed without a wait (resp_done: it never ran).
 */
static void rc_fnak_flush_check(struct rc_conn *c, const struct mrc_req *q,
				const struct mrc_swqe *sw, u8 status)
{
	if (status != MRC_WC_WR_FLUSH_ERR || c->sq_bad || !q->peer_err ||
	    q->failed || !q->nak_found || !sw->rd_atomic || !sw->segmented ||
	    sw->resp_done || !mrc_seq_lt(q->sq_tail, q->nak_idx) ||
	    !mrc_seq_lt(sw->last_psn, q->sb.una))
		return;
	COV(comp_fnak_flush);
	SIM_CHECK(c->fw_on, "WR %u (READ/atomic, request psn %u "
		  "acknowledged) flushed after a fatal NAK, no wait for its "
		  "response started since the NAK", (u32)sw->wr_id,
		  sw->first_psn);
	SIM_CHECK(W.now >= c->fw_due, "WR %u (READ/atomic, request psn %u "
		  "acknowledged) flushed after a fatal NAK %llu us before the "
		  "wait for its response ended", (u32)sw->wr_id, sw->first_psn,
		  (unsigned long long)(c->fw_due - W.now));
}

static void cq_trace_rto(void *ctx, bool tlp, u32 us)
{
	struct rc_conn *c = ctx;

	if (tlp)
		req_pto_check(c->q, c->req.qpn, us);
	rc_fnak_wait_seen(c, c->q, us);
}

static void cq_timer_cancel(void *ctx, u8 t)
{
	struct rc_conn *c = ctx;

	SIM_CHECK(t < MRC_TIMER_MAX, "timer %u", t);
	timer_cancel(&c->qtimer[t]);
}

static bool cq_timer_pending(void *ctx, u8 t)
{
	struct rc_conn *c = ctx;

	SIM_CHECK(t < MRC_TIMER_MAX, "timer %u", t);
	return c->qtimer[t].armed;
}

static void cq_count(void *ctx, u8 counter, u32 n)
{
	(void)ctx;
	(void)n;
	if (counter == MRC_CNT_SPURIOUS_RTO)
		COV(cc_undo);
}

static void cq_transition(void *ctx, u8 engine, u8 from, u8 to)
{
	(void)ctx;
	if (engine == MRC_ENG_COMP && from < MRC_COMP_NSTATES &&
	    to < MRC_COMP_NSTATES)
		comp_trans[from][to]++;
}

/* A send completion: SQ order, exactly once, results against the model. */
static int cq_post_scqe(void *ctx, const struct mrc_swqe *sw, u8 status)
{
	struct rc_conn *c = ctx;
	u32 i = (u32)sw->wr_id;
	struct rc_wr *w = &c->wr[i];

	SIM_CHECK(i == c->done_wr, "send completion of WR %u, expected %u "
		  "(SQ order)", i, c->done_wr);
	SIM_CHECK(!w->done, "WR %u completed twice", i);
	w->done = true;
	w->status = status;
	c->done_wr++;
	/* IB: after a completion in error, every later WR is flushed */
	SIM_CHECK(status != MRC_WC_SUCCESS || !c->sq_bad,
		  "WR %u completed successfully after WR %u completed in "
		  "error (status %u): no SUCCESS after an error on one SQ",
		  i, c->sq_bad_wr, c->wr[c->sq_bad_wr].status);
	if (status != MRC_WC_SUCCESS) {
		if (!c->sq_bad) {
			c->sq_bad = true;
			c->sq_bad_wr = i;
		}
		COV(req_cqe_err);
		SIM_CHECK(rc_err_faults() || c->strict ||
			  c->rsp_err,
			  "WR %u (kind %u, psn %u) completed with status %u in "
			  "a run without error faults", i, w->kind,
			  sw->first_psn, status);
		return 0;
	}
	if (w->kind == WR_READ)
		SIM_CHECK(!memcmp(w->got, w->data, w->len),
			  "READ WR %u (psn %u, %u bytes at %llx) returned data "
			  "that differs from the reference (stale: an earlier "
			  "WRITE not seen?)", i, sw->first_psn, w->len,
			  (unsigned long long)w->va);
	if (w->kind == WR_CAS || w->kind == WR_FAA)
		SIM_CHECK(w->orig_got == w->orig_expect,
			  "atomic WR %u (psn %u) returned %llx, the reference "
			  "says %llx", i, sw->first_psn,
			  (unsigned long long)w->orig_got,
			  (unsigned long long)w->orig_expect);
	c->ok_wr++;
	W.ops_done++;
	COV(req_cqe_ok);
	return 0;
}

static void cq_sq_consumed(void *ctx, u32 tail)
{
	(void)ctx;
	(void)tail;
}

static int cq_sq_copy(void *ctx, const struct mrc_swqe *sw, u64 offset,
		      const struct mrc_src *src, u32 len)
{
	struct rc_conn *c = ctx;
	struct rc_wr *w = &c->wr[sw->wr_id];

	SIM_CHECK(src->buf, "response without a linear source");
	if (w->kind == WR_READ) {
		SIM_CHECK(offset + len <= w->len, "READ response beyond %u",
			  w->len);
		memcpy(w->got + offset, (const u8 *)src->buf + src->off, len);
		w->rcvd += len;
	} else {
		SIM_CHECK(offset == 0 && len == 8, "atomic response %llu+%u",
			  (unsigned long long)offset, len);
		memcpy(&w->orig_got, (const u8 *)src->buf + src->off, 8);
		SIM_CHECK(!w->rcvd++, "atomic WR response placed twice");
	}
	return MRC_COPY_OK;
}

static int cq_post_scqe_q(void *ctx, const struct mrc_swqe *sw, u8 status)
{
	struct rc_conn *c = ctx;

	rc_fnak_flush_check(c, c->q, sw, status);
	return cq_post_scqe(ctx, sw, status);
}

static const struct mrc_env_ops cq_env_ops = {
	.now_us = cq_now,
	.emit = cq_emit,
	.qp_error = cq_qp_error,
	.timer_arm = cq_timer_arm,
	.timer_cancel = cq_timer_cancel,
	.timer_pending = cq_timer_pending,
	.trace_rto = cq_trace_rto,
	.count = cq_count,
	.transition = cq_transition,
	.post_scqe = cq_post_scqe_q,
	.sq_consumed = cq_sq_consumed,
	.sq_copy = cq_sq_copy,
};

/* After every call into the completer: the environment's flush. */
static void cq_after(struct rc_conn *c)
{
	if (!c->req_err)
		rto_lazy_check(c->q, &c->qtimer[MRC_TIMER_RTO], c->req.qpn);
	if (c->cq_fail_pending) {
		c->cq_fail_pending = false;
		creq_flush(c);
	}
}

/* Build the packet of outgoing @psn from its descriptor. */
static void creq_build(struct rc_conn *c, u32 psn, struct mrc_pkt *p,
		       u8 *payload)
{
	const struct mrc_txd *d = &c->q->pkt[psn & (MRC_WND - 1)];
	const struct mrc_swqe *sw = mrc_req_swqe(c->q, d->idx);
	const struct rc_wr *w = &c->wr[sw->wr_id];

	memset(p, 0, sizeof(*p));
	SIM_CHECK(d->kind == MRC_TXD_REQ, "txd of psn %u kind %u", psn,
		  d->kind);
	p->opcode = d->opcode;
	p->flags = d->flags;
	p->psn = psn;
	p->epoch = d->epoch;
	p->payload_len = d->len;
	if (d->len)
		memcpy(payload, w->data + d->offset, d->len);
	switch (d->opcode) {
	case MRC_OP_WRITE:
	case MRC_OP_WRITE_IMM:
		p->write.va = w->va;
		p->write.rkey = rc_wr_rkey(c, w);
		p->write.msg_len = w->len;
		p->write.offset = d->offset;
		if (d->opcode == MRC_OP_WRITE_IMM) {
			p->write.rmsn = w->rmsn;
			p->write.imm = w->imm;
		}
		break;
	case MRC_OP_SEND:
	case MRC_OP_SEND_IMM:
	case MRC_OP_SEND_INV:
		p->send.rmsn = w->rmsn;
		p->send.msg_len = w->len;
		p->send.offset = d->offset;
		p->send.imm = w->kind == WR_SEND_INV ? c->mr[w->mr].rkey :
			      w->kind == WR_SEND_IMM ? w->imm : 0;
		break;
	case MRC_OP_READ_REQ:
		p->read.va = w->va;
		p->read.rkey = rc_wr_rkey(c, w);
		p->read.len = w->len;
		break;
	default:
		p->atomic.va = w->va;
		p->atomic.rkey = c->mr[w->mr].rkey;
		p->atomic.compare = w->compare;
		p->atomic.swap_add = w->swap_add;
		break;
	}
}

static u8 creq_opcode(const struct rc_wr *w)
{
	static const u8 op[WR_NKIND] = {
		[WR_WRITE] = MRC_OP_WRITE, [WR_WRITE_IMM] = MRC_OP_WRITE_IMM,
		[WR_SEND] = MRC_OP_SEND, [WR_SEND_IMM] = MRC_OP_SEND_IMM,
		[WR_SEND_INV] = MRC_OP_SEND_INV, [WR_READ] = MRC_OP_READ_REQ,
		[WR_CAS] = MRC_OP_CMP_SWAP, [WR_FAA] = MRC_OP_FETCH_ADD,
	};

	return op[w->kind];
}

/* Take the next WR of the stream into the send WQE ring. */
static bool creq_fetch(struct rc_conn *c)
{
	struct mrc_req *q = c->q;
	struct mrc_swqe *sw;
	struct rc_wr *w;

	if (c->next_wr == c->nwr || q->sq_head - q->sq_tail >= c->sq_depth)
		return false;
	w = &c->wr[c->next_wr];
	sw = mrc_req_swqe(q, q->sq_head);
	memset(sw, 0, CQ_SWQE_SIZE);
	sw->wr_id = c->next_wr;
	sw->mrc_op = creq_opcode(w);
	sw->len = wr_is_rdat(w) && w->kind != WR_READ ? 8 : w->len;
	sw->remote_addr = w->va;
	sw->rkey = rc_wr_rkey(c, w);
	sw->msn = w->rmsn;
	sw->rd_atomic = wr_is_rdat(w);
	sw->signaled = 1;
	sw->status = MRC_WC_SUCCESS;
	sw->rnr_left = rc_rnr_retry();
	sw->num_sge = 1;
	w->posted = true;
	c->next_wr++;
	q->sq_head++;
	return true;
}

static void creq_xmit(struct rc_conn *c, struct mrc_pkt *p, const u8 *pl,
		      u8 path)
{
	struct ep *e = &c->req;

	p->path_id = path;
	p->dst_qpn = e->peer_qpn;
	p->tsval = (u32)W.now;
	fab_send(e->node, e->peer_node, c->q->paths.p[path].sport, p, pl);
}

/* tx.c's send loop: PROBE, retransmissions, then new packets. */
static void creq_pump(struct ep *e)
{
	struct rc_conn *c = conn_of_ep(e);
	struct mrc_req *q = c->q;
	u8 payload[EP_MTU_MAX];
	struct mrc_swqe *sw;
	struct mrc_pkt p;
	u32 psn, ppsn, chunk;
	struct rc_wr *w;
	int path;

	while (!q->failed && !c->req_err) {
		if (q->probe_due) {
			memset(&p, 0, sizeof(p));
			p.opcode = MRC_OP_PROBE;
			p.flags = MRC_F_ACKREQ;
			p.psn = q->probe_psn;
			q->probe_due = 0;
			COV(req_probe);
			creq_xmit(c, &p, NULL, 0);
			continue;
		}
		if (q->rnr_wait)
			break;
		if (q->sb.nlost) {
			if (mrc_sb_next_lost(&q->sb, &psn))
				sim_fail("nlost %u but no lost psn",
					 q->sb.nlost);
			path = mrc_paths_pick(&q->paths, q->sb.inflight);
			if (path < 0) {
				COV(path_full);
				break;
			}
			SIM_CHECK(!mrc_sb_on_retx(&q->sb, psn, path, W.now,
						  &ppsn), "retx of %u", psn);
			creq_build(c, psn, &p, payload);
			p.ppsn = ppsn;
			p.flags |= MRC_F_RETX;
			COV(sb_retx);
			creq_xmit(c, &p, payload, path);
			mrc_req_arm_rto(q, &c->qenv, false);
			continue;
		}
		if (q->stop_new && q->sq_seg != q->sq_head &&
		    mrc_req_swqe(q, q->sq_seg)->seg_off) {
			/* requester.c's MRC_REQS_CUT: end a partial message */
			sw = mrc_req_swqe(q, q->sq_seg);
			if (sw->status == MRC_WC_SUCCESS)
				sw->status = MRC_WC_WR_FLUSH_ERR;
			sw->last_psn = q->sb.nxt - 1;
			sw->segmented = 1;
			q->sq_seg++;
			/* as tp_run: what that ended completes now */
			mrc_comp_complete(q, &c->qenv);
			cq_after(c);
			continue;
		}
		if (q->stop_new || !mrc_sb_can_send(&q->sb))
			break;
		if (q->sq_seg == q->sq_head && !creq_fetch(c))
			break;
		sw = mrc_req_swqe(q, q->sq_seg);
		/* as requester.c: epochs are told apart modulo 16 */
		if (!sw->seg_off && mrc_req_epoch_behind(q))
			break;
		w = &c->wr[sw->wr_id];
		if (!sw->seg_off && !sw->first_psn && sw->rd_atomic &&
		    q->rd_atomic_out >= c->rd_atomic)
			break;
		if (sw->seg_off == 0 && w->fence && q->rd_atomic_out &&
		    q->sq_seg != q->sq_tail)
			break;
		path = mrc_paths_pick(&q->paths, q->sb.inflight);
		if (path < 0) {
			COV(path_full);
			break;
		}
		chunk = wr_is_rdat(w) ? 0 : min_t(u32, ep_mtu,
						   w->len - sw->seg_off);
		/* as requester.c: the pending ACK before what the app sees */
		if (!sw->seg_off && mrc_op_notifies(sw->mrc_op))
			ep_flush_ack(e);
		SIM_CHECK(!mrc_sb_send_new(&q->sb, path, W.now, q->sq_seg,
					   &psn, &ppsn), "send_new");
		q->pkt[psn & (MRC_WND - 1)] = (struct mrc_txd){
			.kind = MRC_TXD_REQ,
			.opcode = sw->mrc_op,
			.epoch = q->epoch,
			.flags = (sw->seg_off ? 0 : MRC_F_FIRST) |
				 (sw->seg_off + chunk == w->len ||
				  wr_is_rdat(w) ? MRC_F_LAST : 0),
			.len = chunk,
			.idx = q->sq_seg,
			.offset = sw->seg_off,
			.msg_len = w->len,
		};
		if (!sw->seg_off)
			sw->first_psn = w->first_psn = psn;
		sw->seg_off += chunk;
		if (sw->seg_off == w->len || wr_is_rdat(w)) {
			sw->last_psn = w->last_psn = psn;
			sw->segmented = 1;
			if (sw->rd_atomic)
				q->rd_atomic_out++;
			q->sq_seg++;
		}
		creq_build(c, psn, &p, payload);
		p.ppsn = ppsn;
		COV(sb_new);
		creq_xmit(c, &p, payload, path);
		mrc_req_arm_rto(q, &c->qenv, false);
	}
}

/* tx.c's tp_on_timer: TLP, then RTOs that probe each silent path. */
static void creq_rto(struct rc_conn *c)
{
	struct mrc_req *q = c->q;
	u16 lost[MRC_MAX_PATHS] = { 0 };
	u32 i, n, psn, age, busy = 0, stale = 0;
	bool blame;

	if (q->failed || c->req_err)
		return;
	if (!mrc_sb_outstanding(&q->sb)) {
		if (q->rd_atomic_out)
			mrc_comp_resp_timer(q, &c->qenv);
		goto out;
	}
	if (q->tlp_armed) {
		q->tlp_armed = 0;
		q->tlp_done = 1;
		if (!mrc_sb_tlp_psn(&q->sb, &psn) &&
		    mrc_sb_state_of(&q->sb, psn) == MRC_SB_INFLIGHT) {
			mrc_sb_mark_lost_cause(&q->sb, psn, MRC_LOSS_TLP);
			COV(tlp_fired);
			COV(sb_lost_tlp);
		}
		goto out;
	}
	COV(rto_fired);
	age = q->rto_armed_us ? q->rto_armed_us : mrc_req_rto_interval(q);
	for (i = 0; i < q->paths.n; i++)
		busy += q->sb.inflight[i] ? 1 : 0;
	n = mrc_sb_mark_stale_lost_n(&q->sb, W.now, age, lost, 1);
	if (n && !q->undo_armed) {
		for (i = 0; i < q->paths.n; i++)
			mrc_cc_save(&q->paths.p[i].cc, &q->cc_saved[i]);
		q->undo_armed = 1;
		q->undo_ts = (u32)W.now;
	}
	if (n)
		COV(sb_lost_rto);
	for (i = 0; i < q->paths.n; i++)
		stale += lost[i] ? 1 : 0;
	blame = stale < busy || busy == 1;
	for (i = 0; i < q->paths.n; i++) {
		if (!lost[i])
			continue;
		COV(path_timeout);
		if (!blame) {
			mrc_rtt_backoff(&q->paths.p[i].rtt);
			mrc_cc_on_timeout(&q->paths.p[i].cc);
			continue;
		}
		if (mrc_paths_on_timeout(&q->paths, i)) {
			mrc_paths_replace(&q->paths, i);
			mrc_sb_mark_inflight_lost(&q->sb, i);
			COV(path_replaced);
		}
	}
	if (n) {
		q->retries++;
		if (mrc_comp_give_up(q, W.now)) {
			COV(giveup);
			SIM_CHECK(c->rsp_err || c->req.stale_ok,
				  "qp %u: gives up although its peer is alive",
				  c->req.qpn);
			mrc_comp_fail_oldest(q, &c->qenv,
					     MRC_WC_RETRY_EXC_ERR);
		}
	}
out:
	mrc_comp_complete(q, &c->qenv);
	cq_after(c);
	creq_pump(&c->req);
	if (!q->failed)
		mrc_req_arm_rto(q, &c->qenv, false);
}

static void cq_timer_fn(void *arg)
{
	struct sim_timer *t = arg;
	struct rc_conn *c = NULL;
	u32 i;

	for (i = 0; i < rc_n && !c; i++)
		if (t >= rc[i].qtimer && t < rc[i].qtimer + MRC_TIMER_MAX)
			c = &rc[i];
	if (!c || c->req_err)
		return;
	if (t == &c->qtimer[MRC_TIMER_RTO]) {
		if (!rto_fired(c->q, &c->qenv, c->req.qpn)) {
			rto_lazy_check(c->q, t, c->req.qpn);
			return;
		}
		creq_rto(c);
	} else if (t == &c->qtimer[MRC_TIMER_RNR]) {
		c->q->rnr_wait = 0;
		creq_pump(&c->req);
	}
}

static void creq_on_ack(struct ep *e, const struct mrc_pkt *p)
{
	struct rc_conn *c = conn_of_ep(e);
	struct mrc_req *q = c->q;
	u32 old = q->sb.una;

	if (q->failed || c->req_err)
		return;
	q->heard_us = W.now;
	if (p->ack.syndrome == MRC_SYN_RNR)
		COV(req_rnr_retry);
	if (W.o->verbose > 2 && p->ack.syndrome)
		printf("t=%llu qp %u: NAK %u psn %u (cum %u una %u nxt %u "
		       "tail %u seg %u)\n", (unsigned long long)W.now, e->qpn,
		       p->ack.syndrome, p->ack.nak_psn - e->isn_tx,
		       p->ack.cum_psn - e->isn_tx, q->sb.una - e->isn_tx,
		       q->sb.nxt - e->isn_tx, q->sq_tail, q->sq_seg);
	if (mrc_comp_ack(q, &c->qenv, &p->ack, false)) {
		COV(sb_ack_rejected);
		SIM_CHECK(e->stale_ok ||
			  mrc_seq_diff(q->sb.una, p->ack.cum_psn) > 4 * MRC_WND,
			  "qp %u: ACK cum %u rejected by the completer, una %u "
			  "nxt %u", e->qpn, p->ack.cum_psn, q->sb.una,
			  q->sb.nxt);
	} else {
		ep_saw_ack(e, &p->ack);
		ep_check_retired(e, old);
	}
	cq_after(c);
	if (q->want_tx) {
		q->want_tx = 0;
		creq_pump(e);
	}
}

static int creq_next(struct ep *e, struct mrc_pkt *p, u8 *payload)
{
	(void)e; (void)p; (void)payload;
	return 0;
}

/* A READ/atomic response in the responder's PSN space: the completer. */
static int creq_recv(struct ep *e, const struct mrc_pkt *p, const u8 *payload,
		     u8 *syn)
{
	struct rc_conn *c = conn_of_ep(e);
	struct mrc_src src = { .pkt = NULL, .buf = payload, .off = 0 };
	u32 old = c->q->sb.una;
	int r;

	(void)syn;
	SIM_CHECK(p->opcode == MRC_OP_READ_RESP ||
		  p->opcode == MRC_OP_ATOMIC_RESP, "requester got opcode %u",
		  p->opcode);
	/* as responder.c: the last response awaited is acknowledged now */
	if (mrc_comp_resp(c->q, &c->qenv, p, &src) & MRC_COMP_ACK_NOW)
		e->rx.ack_now = 1;
	r = EP_PLACED;
	/* the response's implicit ACK retires only what the peer has */
	if (c->q->sb.una != old)
		COV(sb_resp_ack);
	ep_check_retired(e, old);
	cq_after(c);
	return r;
}

static void creq_committed(struct ep *e, int r)
{
	struct rc_conn *c = conn_of_ep(e);

	(void)r;
	c->q->retries = 0;
	mrc_comp_complete(c->q, &c->qenv);
	cq_after(c);
	mrc_req_arm_rto(c->q, &c->qenv, false);
}

static void creq_acked(struct ep *e)
{
	(void)e;
}

static void creq_nak(struct ep *e, u8 syn, u32 psn)
{
	sim_fail("qp %u: ep NAK %u psn %u with the completer", e->qpn, syn,
		 psn);
}

/* The QP goes to ERR: flush what the completer did not complete. */
static void creq_flush(struct rc_conn *c)
{
	u32 i;

	if (c->req_err)
		return;
	c->req_err = true;
	c->q->failed = 1;
	for (i = c->done_wr; i < c->nwr; i++) {
		c->wr[i].done = true;
		c->wr[i].status = MRC_WC_WR_FLUSH_ERR;
		COV(req_flush);
	}
	c->done_wr = c->nwr;
	for (i = 0; i < MRC_TIMER_MAX; i++)
		timer_cancel(&c->qtimer[i]);
	ep_error(&c->req, 0, 0);
}

static void creq_error(struct ep *e)
{
	creq_flush(conn_of_ep(e));
}

static const struct ep_ops creq_ops = {
	.next = creq_next,
	.recv = creq_recv,
	.committed = creq_committed,
	.acked = creq_acked,
	.nak = creq_nak,
	.error = creq_error,
	.pump = creq_pump,
	.on_ack = creq_on_ack,
	.voided = rc_ep_voided,
};

/* A new life of the requester QP on the core completer. */
static void creq_start(struct rc_conn *c, u32 isn, u32 npaths)
{
	struct mrc_req *q = c->q;
	struct mrc_path_cfg cfg;
	u8 *swq = q->swq;
	u32 i;

	memset(q, 0, sizeof(*q));
	q->swq = swq;
	q->nswq = CQ_NSWQ;
	q->swqe_size = CQ_SWQE_SIZE;
	q->cfg.ib_timeout_us = 67108;	/* IB timeout 14 */
	q->cfg.rto_floor_us = 2000;
	q->cfg.retry_cnt = 7;
	q->cfg.rnr_retry = rc_rnr_retry();
	mrc_sb_init(&q->sb, isn, 0, MRC_DUPTHRESH_DEFAULT);
	mrc_path_cfg_default(&cfg);
	cfg.npaths = npaths;
	cfg.seed = (u32)rng_next(&W.rng);
	mrc_paths_init(&q->paths, &cfg);
	q->anchored = 1;
	q->progress_us = q->heard_us = W.now;
	for (i = 0; i < MRC_TIMER_MAX; i++)
		timer_cancel(&c->qtimer[i]);
	c->cq_fail_pending = false;
	c->req.sbp = &q->sb;
	c->req.pathsp = &q->paths;
}

static void creq_coverage(void)
{
	static const u8 edges[][2] = {
		{ MRC_COMP_ANCHOR, MRC_COMP_DONE },
		{ MRC_COMP_APPLY, MRC_COMP_DONE },
		{ MRC_COMP_APPLY, MRC_COMP_UNDO },
		{ MRC_COMP_APPLY, MRC_COMP_PATHS },
		{ MRC_COMP_UNDO, MRC_COMP_PATHS },
		{ MRC_COMP_PATHS, MRC_COMP_PROGRESS },
		{ MRC_COMP_PATHS, MRC_COMP_COMPLETE },
		{ MRC_COMP_PATHS, MRC_COMP_NAK_RNR },
		{ MRC_COMP_PATHS, MRC_COMP_NAK_ERR },
		{ MRC_COMP_PROGRESS, MRC_COMP_COMPLETE },
		{ MRC_COMP_PROGRESS, MRC_COMP_NAK_RNR },
		{ MRC_COMP_PROGRESS, MRC_COMP_NAK_ERR },
		{ MRC_COMP_NAK_RNR, MRC_COMP_COMPLETE },
		{ MRC_COMP_NAK_ERR, MRC_COMP_COMPLETE },
		{ MRC_COMP_COMPLETE, MRC_COMP_REARM },
		{ MRC_COMP_REARM, MRC_COMP_DONE },
	};
	u32 i, j, n;
	bool known;

	printf("completer engine transitions (from -> to: count):\n");
	for (i = 0; i < ARRAY_SIZE(edges); i++)
		printf("  %-13s -> %-13s %12llu\n",
		       mrc_comp_state_name(edges[i][0]),
		       mrc_comp_state_name(edges[i][1]),
		       (unsigned long long)comp_trans[edges[i][0]][edges[i][1]]);
	for (i = 0; i < MRC_COMP_NSTATES; i++)
		for (j = 0; j < MRC_COMP_NSTATES; j++) {
			if (!comp_trans[i][j])
				continue;
			known = false;
			for (n = 0; n < ARRAY_SIZE(edges); n++)
				if (edges[n][0] == i && edges[n][1] == j)
					known = true;
			if (!known)
				printf("  %-13s -> %-13s %12llu (not in the "
				       "table)\n", mrc_comp_state_name(i),
				       mrc_comp_state_name(j),
				       (unsigned long long)comp_trans[i][j]);
		}
	printf("completer transitions unreached:");
	for (n = 0, i = 0; i < ARRAY_SIZE(edges); i++)
		if (!comp_trans[edges[i][0]][edges[i][1]]) {
			printf(" %s->%s", mrc_comp_state_name(edges[i][0]),
			       mrc_comp_state_name(edges[i][1]));
			n++;
		}
	printf("%s\n", n ? "" : " none");
}
/* ============================ the full loop: two QPs of real engines */

#ifdef SIM_HAVE_REQ
/*
 * Both QPs as the module runs them: each a responder (struct mrc_resp)
 * and a send side (struct mrc_req) driven by the core requester
 * (mrc_req_retx/next/timer) and completer, the environment doing what the
 * kernel adapters do (tx.c tp_run: the transmit round; tp_build_psn:
 * packets from their descriptors; rx.c: dispatch; flush). QP A posts the
 * WR stream; QP B answers (its send side carries READ/atomic responses).
 */
struct fq {			/* one QP's engines and environment */
	struct rc_conn *c;	/* the connection that owns it */
	int side;		/* 0: c's requester QP, 1: c's responder QP */
	struct rc_conn *creq;	/* whose WR stream it sends, or NULL */
	struct rc_conn *crsp;	/* whose requests it answers, or NULL */
	bool borrowed;		/* a second connection's view of a QP */
	struct ep *ep;		/* shadow state and invariants */
	struct mrc_req *q;
	struct mrc_resp *r;
	struct mrc_env env;
	struct sim_timer *t;	/* [MRC_TIMER_MAX] */
	bool rto_fired, rnr_fired, fail_pending, dead;
	u32 nheld;
	struct rc_ackw ackw;
	int rx_v;		/* verdict of the packet in mrc_resp_rx(), or -1 */
};

static u64 req_trans[MRC_REQS_NSTATES][MRC_REQS_NSTATES];

static void fq_tx(struct fq *f);

static const struct mrc_rsp *fq_b_head(struct rc_conn *c)
{
	return mrc_rspq_head(&c->fq[1]->r->rspq);
}

static struct fq *fq_of(void *ctx)
{
	return ctx;
}

static void fq_emit(void *ctx, const struct mrc_pkt *p,
		    const struct mrc_src *src, unsigned int flags)
{
	struct fq *f = fq_of(ctx);

	(void)flags;
	SIM_CHECK(p->opcode == MRC_OP_ACK, "engine emitted opcode %u",
		  p->opcode);
	rc_ack_out(&f->ackw, f->ep->qpn, false);
	rc_nak_out(f->crsp, p->ack.syndrome, p->ack.nak_psn);
	SIM_CHECK(p->path_id < f->q->paths.n, "ACK on path %u of %u",
		  p->path_id, f->q->paths.n);
	if (p->ack.syndrome == MRC_SYN_REM_ACCESS)
		COV(resp_nak_access);
	else if (p->ack.syndrome == MRC_SYN_INV_REQ)
		COV(resp_nak_inv);
	if (W.o->verbose > 1 && p->ack.syndrome > MRC_SYN_RNR) {
		u32 i;

		printf("t=%llu qp %u: NAK %u psn %u (cum %u)\n",
		       (unsigned long long)W.now, f->ep->qpn, p->ack.syndrome,
		       p->ack.nak_psn, p->ack.cum_psn);
		struct rc_conn *c = f->crsp;

		for (i = 0; c && i < c->nwr; i++)
			if (c->wr[i].posted &&
			    mrc_seq_geq(p->ack.nak_psn, c->wr[i].first_psn) &&
			    mrc_seq_leq(p->ack.nak_psn, c->wr[i].last_psn))
				printf("  WR %u kind %u mr %u (valid %d) fence %d\n",
				       i, c->wr[i].kind, c->wr[i].mr,
				       c->mr[c->wr[i].mr].valid, c->wr[i].fence);
	}
	fab_send(f->ep->node, f->ep->peer_node,
		 f->q->paths.p[p->path_id].sport, p,
		 src ? src_bytes(f->c, src) : NULL);
}

static void fq_release(void *ctx, const void *pkt)
{
	struct fq *f = fq_of(ctx);

	SIM_CHECK(f->nheld > 0, "release of a packet never held");
	f->nheld--;
	if (f->crsp) {
		f->crsp->nheld--;
		rc_held_released(f->crsp, pkt);
	}
	free((void *)pkt);
}

/* B's memory, receive queue and completions: the rc environment's. */
static void *fq_mr_get(void *ctx, u32 key, bool remote, u32 access, u64 va,
		       u64 len)
{
	struct fq *f = fq_of(ctx);

	SIM_CHECK(f->crsp, "a QP without MRs asked for one");
	return env_mr_get(f->crsp, key, remote, access, va, len);
}

static void fq_mr_put(void *ctx, void *mr)
{
	env_mr_put(fq_of(ctx)->crsp, mr);
}

static int fq_mr_write(void *ctx, void *mr, u64 va, const struct mrc_src *src,
		       u32 len)
{
	return env_mr_write(fq_of(ctx)->crsp, mr, va, src, len);
}

static void fq_mr_atomic(void *ctx, void *mr, u64 va, bool cmp_swap,
			 u64 compare, u64 swap_add, u64 *orig)
{
	env_mr_atomic(fq_of(ctx)->crsp, mr, va, cmp_swap, compare, swap_add,
		      orig);
}

static int fq_mr_invalidate(void *ctx, u32 rkey, bool check_only)
{
	struct fq *f = fq_of(ctx);

	return f->crsp ? env_mr_invalidate(f->crsp, rkey, check_only) : -1;
}

static int fq_rq_pop(void *ctx, u32 slot, u64 *wr_id, u64 *length)
{
	struct fq *f = fq_of(ctx);

	if (!f->crsp)
		return MRC_RQ_EMPTY;	/* it posts no receives */
	return env_rq_pop(f->crsp, slot, wr_id, length);
}

static int fq_rq_copy(void *ctx, u32 slot, u64 offset,
		      const struct mrc_src *src, u32 len)
{
	return env_rq_copy(fq_of(ctx)->crsp, slot, offset, src, len);
}

static int fq_post_rcqe(void *ctx, const struct mrc_rcqe *cq)
{
	struct fq *f = fq_of(ctx);

	SIM_CHECK(f->crsp, "receive completion on a QP without receives");
	return env_post_rcqe(f->crsp, cq);
}

static void fq_qp_error(void *ctx, u8 event)
{
	struct fq *f = fq_of(ctx);

	(void)event;
	if (W.o->verbose > 1)
		printf("t=%llu qp %u: error event %u\n",
		       (unsigned long long)W.now, f->ep->qpn, event);
	f->q->failed = 1;
	f->fail_pending = true;
	if (f->crsp) {
		if (!f->crsp->rsp_err)
			COV(resp_err);
		f->crsp->rsp_err = true;
	}
}

/*
 * The tail-loss probe's timeout (protocol.rst "Timers"), by the spec's
 * formulas from the estimators' state -- not by the engine's helpers,
 * which a check made of them would only repeat: per path PTO = max(2 SRTT
 * (+ MRC_TLP_ACK_DELAY_US if one packet is outstanding), MRC_TLP_MIN_US),
 * never more than the path's RTO (its RTO before a sample); the largest
 * of the paths, never more than the RTO interval (the timer that would
 * fire instead: a path without a sample has its backed-off RTO, up to
 * RTO_max, as its PTO). When the PSN the probe would resend (the highest
 * outstanding, not SACKed) is a READ/atomic request and the response
 * time has a sample: PTO_R = max(PTO, min(max(2 SRTT_R, SRTT_R + 4
 * RTTVAR_R), the RTO interval)). The RTOs are the RTO rules' (elsewhere).
 */
static void req_pto_check(const struct mrc_req *q, u32 qpn, u32 us)
{
	u32 out = q->sb.nxt - q->sb.una, i, psn, pto = 0, want;
	const struct mrc_rtt *r;
	const struct mrc_txd *d;
	bool rd = false;
	u64 t, srtt;
	u8 st;

	for (i = 0; i < q->paths.n; i++) {
		r = &q->paths.p[i].rtt;
		srtt = r->srtt8 >> 3;
		t = mrc_rtt_rto(r);
		if (r->srtt8)
			t = min_t(u64, t, max_t(u64, 2 * srtt +
				  (out == 1 ? MRC_TLP_ACK_DELAY_US : 0),
				  MRC_TLP_MIN_US));
		pto = max_t(u32, pto, (u32)t);
	}
	if (!pto)
		pto = MRC_RTO_INIT_US;
	pto = min_t(u32, pto, mrc_req_rto_interval(q));
	for (psn = q->sb.nxt; psn != q->sb.una; psn--) {
		st = mrc_sb_state_of(&q->sb, psn - 1);
		if (st != MRC_SB_INFLIGHT && st != MRC_SB_LOST)
			continue;
		d = &q->pkt[(psn - 1) & (MRC_WND - 1)];
		rd = d->kind == MRC_TXD_REQ && mrc_op_is_rd_atomic(d->opcode);
		break;
	}
	r = &q->rsp_rtt;
	want = pto;
	if (rd && r->srtt8) {
		srtt = r->srtt8 >> 3;
		/* rttvar4: 4 RTTVAR */
		t = max_t(u64, 2 * srtt, srtt + r->rttvar4);
		t = min_t(u64, t, mrc_req_rto_interval(q));
		want = max_t(u32, pto, (u32)t);
	}
	if (rd && want > pto)
		COV(req_pto_r);
	SIM_CHECK(us == want, "qp %u: probe timeout %u us, %u expected "
		  "(PTO %u, %s tail, %u outstanding)", qpn, us, want, pto,
		  rd ? "READ/atomic request" : "other", out);
}

static void fq_timer_arm(void *ctx, u8 t, u32 us)
{
	SIM_CHECK(t < MRC_TIMER_MAX, "timer %u", t);
	timer_arm(&fq_of(ctx)->t[t], us);
}

static void fq_trace_rto(void *ctx, bool tlp, u32 us)
{
	if (tlp)
		req_pto_check(fq_of(ctx)->q, fq_of(ctx)->ep->qpn, us);
	rc_fnak_wait_seen(fq_of(ctx)->creq, fq_of(ctx)->q, us);
}

static void fq_timer_cancel(void *ctx, u8 t)
{
	SIM_CHECK(t < MRC_TIMER_MAX, "timer %u", t);
	timer_cancel(&fq_of(ctx)->t[t]);
}

static bool fq_timer_pending(void *ctx, u8 t)
{
	SIM_CHECK(t < MRC_TIMER_MAX, "timer %u", t);
	return fq_of(ctx)->t[t].armed;
}

static void fq_count(void *ctx, u8 counter, u32 n)
{
	(void)ctx;
	env_count(NULL, counter, n);
	cq_count(NULL, counter, n);
}

static void fq_transition(void *ctx, u8 engine, u8 from, u8 to)
{
	(void)ctx;
	if (engine == MRC_ENG_RESP)
		env_transition(NULL, engine, from, to);
	else if (engine == MRC_ENG_COMP)
		cq_transition(NULL, engine, from, to);
	else if (engine == MRC_ENG_REQ && from < MRC_REQS_NSTATES &&
		 to < MRC_REQS_NSTATES)
		req_trans[from][to]++;
}

static int fq_post_scqe(void *ctx, const struct mrc_swqe *w, u8 status)
{
	struct fq *f = fq_of(ctx);

	SIM_CHECK(f->creq, "send completion on a QP without a WR stream");
	rc_fnak_flush_check(f->creq, f->q, w, status);
	return cq_post_scqe(f->creq, w, status);
}

static void fq_sq_consumed(void *ctx, u32 tail)
{
	(void)ctx;
	(void)tail;
}

static int fq_sq_copy(void *ctx, const struct mrc_swqe *w, u64 offset,
		      const struct mrc_src *src, u32 len)
{
	struct fq *f = fq_of(ctx);
	struct mrc_src s = *src;
	const struct rc_held *h = src->pkt;

	SIM_CHECK(f->creq, "sq_copy on a QP without a WR stream");
	if (!s.buf) {		/* a READ response's payload in its packet */
		s.buf = h->buf;
	}
	return cq_sq_copy(f->creq, w, offset, &s, len);
}

/* "WQE posted": the next WR of the stream, while the SQ has room. */
static void fq_sq_fetch(void *ctx)
{
	struct fq *f = fq_of(ctx);
	struct rc_conn *c = f->creq;
	struct mrc_swqe *sw;
	struct rc_wr *w;

	if (!c || c->next_wr == c->nwr ||
	    f->q->sq_head - f->q->sq_tail >= c->sq_depth)
		return;
	w = &c->wr[c->next_wr];
	sw = mrc_req_swqe(f->q, f->q->sq_head);
	memset(sw, 0, CQ_SWQE_SIZE);
	sw->wr_id = c->next_wr;
	sw->mrc_op = creq_opcode(w);
	sw->len = wr_is_rdat(w) && w->kind != WR_READ ? 8 : w->len;
	sw->remote_addr = w->va;
	sw->rkey = rc_wr_rkey(c, w);
	sw->msn = w->rmsn;
	f->q->smsn = w->rmsn + wr_is_recv(w);
	sw->rd_atomic = wr_is_rdat(w);
	sw->signaled = 1;
	sw->status = MRC_WC_SUCCESS;
	sw->rnr_left = rc_rnr_retry();
	sw->num_sge = 1;
	sw->send_flags = (w->fence ? MRC_SEND_FENCE : 0) |
			 ((w->imm & 1) ? MRC_SEND_SOLICITED : 0);
	/* fault: a WQE the adapter found invalid */
	if (W.f.badwqe && c->next_wr == c->badwqe_at) {
		sw->status = MRC_WC_LOC_QP_OP_ERR;
		COV(f_badwqe);
	}
	w->posted = true;
	c->next_wr++;
	f->q->sq_head++;
}

static void fq_local_op(void *ctx, struct mrc_swqe *w)
{
	(void)ctx;
	(void)w;
	sim_fail("local operation WQE");
}

static int fq_comp_resp(void *ctx, const struct mrc_pkt *p,
			const struct mrc_src *src)
{
	struct fq *f = fq_of(ctx);

	SIM_CHECK(f->creq, "responses on a QP without requests");
	return mrc_comp_resp(f->q, &f->env, p, src);
}

/* Version 2: the peer's cumulative ACK on a new packet (cum_lo). */
static bool fq_comp_cum(void *ctx, u16 cum_lo)
{
	struct fq *f = fq_of(ctx);
	u32 old = f->q->sb.una;

	/* protocol.rst: a duplicate may be a leftover of another life */
	/* the PSN it names: una + ((cum_lo - una) mod 2^16) */
	u32 want = old + (u16)(cum_lo - (u16)old);
	bool in = f->q->anchored && !f->q->failed &&
		  want - old <= f->q->sb.nxt - old;

	SIM_CHECK(f->rx_v == MRC_RX_NEW,
		  "qp %u: cum_lo %u of a packet that is not new (verdict %d) "
		  "applied", f->ep->qpn, cum_lo, f->rx_v);
	mrc_comp_cum(f->q, &f->env, cum_lo);
	/* ... within [una, nxt]: applied as an ACK of cum_psn = that PSN */
	SIM_CHECK(!in || f->q->failed || mrc_seq_geq(f->q->sb.una, want),
		  "qp %u: cum_lo %u names psn %u in [una %u, nxt %u], "
		  "una is %u after it", f->ep->qpn, cum_lo, want, old,
		  f->q->sb.nxt, f->q->sb.una);
	if (f->q->sb.una != old)
		COV(sb_cum_lo);
	return f->q->failed;
}

static void fq_comp_progress(void *ctx)
{
	struct fq *f = fq_of(ctx);

	f->q->retries = 0;
	mrc_comp_complete(f->q, &f->env);
}

static const struct mrc_env_ops fq_env_ops = {
	.now_us = cq_now,
	.emit = fq_emit,
	.release = fq_release,
	.mr_get = fq_mr_get,
	.mr_put = fq_mr_put,
	.mr_write = fq_mr_write,
	.mr_atomic = fq_mr_atomic,
	.mr_invalidate = fq_mr_invalidate,
	.rq_pop = fq_rq_pop,
	.rq_copy = fq_rq_copy,
	.post_rcqe = fq_post_rcqe,
	.qp_error = fq_qp_error,
	.timer_arm = fq_timer_arm,
	.timer_cancel = fq_timer_cancel,
	.timer_pending = fq_timer_pending,
	.trace_rto = fq_trace_rto,
	.count = fq_count,
	.transition = fq_transition,
	.post_scqe = fq_post_scqe,
	.sq_consumed = fq_sq_consumed,
	.sq_copy = fq_sq_copy,
	.sq_fetch = fq_sq_fetch,
	.local_op = fq_local_op,
	.comp_resp = fq_comp_resp,
	.comp_progress = fq_comp_progress,
	.comp_cum = fq_comp_cum,
};

/* The QP goes to ERR (after the engine call that said so): flush. */
static void fq_after(struct fq *f)
{
	struct rc_conn *c;
	u32 i;

	SIM_CHECK(!f->crsp || f->crsp->mr_refs == 0,
		  "MR handles leaked by the engine (%d)", f->crsp->mr_refs);
	if (!f->dead)
		rto_lazy_check(f->q, &f->t[MRC_TIMER_RTO], f->ep->qpn);
	if (!f->fail_pending || f->dead)
		return;
	f->fail_pending = false;
	f->dead = true;
	f->q->failed = 1;
	mrc_resp_stop(f->r);
	for (i = 0; i < MRC_TIMER_MAX; i++)
		timer_cancel(&f->t[i]);
	f->ep->errored = true;
	c = f->creq;
	if (c) {
		/* the SQ: everything not completed is flushed */
		c->req_err = true;
		for (i = c->done_wr; i < c->nwr; i++) {
			c->wr[i].done = true;
			c->wr[i].status = MRC_WC_WR_FLUSH_ERR;
			COV(req_flush);
		}
		c->done_wr = c->nwr;
	}
	c = f->crsp;
	if (c)
		c->rsp_err = true;
	mrc_resp_flush(f->r, &f->env, c ? c->rq_posted - c->rq_popped : 0);
	SIM_CHECK(f->nheld == 0, "held packets not released by the flush");
}

/* Build the packet of outgoing @psn from its descriptor (tp_build_psn). */
static int fq_build(struct fq *f, u32 psn, struct mrc_pkt *p, u8 *payload)
{
	const struct mrc_txd *d = &f->q->pkt[psn & (MRC_WND - 1)];
	struct rc_conn *c = f->creq;
	struct rc_mr *m;

	if (d->kind == MRC_TXD_REQ) {
		struct mrc_req *save = c->q;

		c->q = f->q;
		creq_build(c, psn, p, payload);
		c->q = save;
		p->flags = d->flags;
		return 0;
	}
	memset(p, 0, sizeof(*p));
	p->opcode = d->opcode;
	p->flags = d->flags;
	p->psn = psn;
	if (d->kind == MRC_RSP_ATOMIC) {
		p->aresp.orig = d->va;
		p->aresp.req_psn = d->req_psn;
		return 0;
	}
	SIM_CHECK(d->kind == MRC_RSP_READ, "txd of psn %u kind %u", psn,
		  d->kind);
	c = f->crsp;
	p->rresp.req_psn = d->req_psn;
	p->rresp.offset = d->offset;
	p->rresp.msg_len = d->msg_len;
	p->payload_len = d->len;
	if (!d->len)
		return 0;
	/* the READ's data is read as each response is built */
	m = rc_mr_find(c, d->rkey);
	if (!m || !(m->access & MRC_ACC_REMOTE_READ) ||
	    d->va + d->offset < m->va ||
	    d->va + d->offset + d->len > m->va + m->len) {
		f->r->rsp_abort = 1;
		f->r->rsp_abort_psn = d->req_psn;
		return -1;
	}
	memcpy(payload, m->mem + (d->va + d->offset - m->va), d->len);
	return 0;
}

static void fq_send(struct fq *f, struct mrc_pkt *p, const u8 *payload,
		    u8 path)
{
	p->path_id = path;
	p->dst_qpn = f->ep->peer_qpn;
	p->tsval = (u32)W.now;
	fab_send(f->ep->node, f->ep->peer_node, f->q->paths.p[path].sport, p,
		 payload);
}

static void fq_cfg(struct fq *f)
{
	struct mrc_req_cfg *g = &f->q->cfg;

	g->ib_timeout_us = 67108;	/* IB timeout 14 */
	g->rto_floor_us = 2000;
	g->mtu = ep_mtu;
	g->max_rd_atomic = f->creq ? f->creq->rd_atomic : 1;
	g->retry_cnt = 7;
	g->rnr_retry = rc_rnr_retry();
	g->ud = 0;
	g->running = 1;
}

/* The WR of a request packet learns its PSNs (for the atomic checks). */
static void fq_note_psn(struct fq *f, u32 psn)
{
	const struct mrc_txd *d = &f->q->pkt[psn & (MRC_WND - 1)];
	struct rc_wr *w;

	if (d->kind != MRC_TXD_REQ)
		return;
	w = &f->creq->wr[mrc_req_swqe(f->q, d->idx)->wr_id];
	if (d->flags & MRC_F_FIRST)
		w->first_psn = psn;
	if (d->flags & MRC_F_LAST)
		w->last_psn = psn;
}

/* One transmit round, as tx.c's tp_run. */
/*
 * As tp_build_psn: a sequenced packet carries the cumulative ACK (version
 * 2); one that carried the ACK owed counts as sent for rc_ack_late().
 */
static void fq_send_cum(struct fq *f, struct mrc_pkt *p, const u8 *payload,
			u8 path)
{
	const struct mrc_rx *rx = &f->r->rx;
	bool owed, all, sack, dup, due;

	mrc_resp_cum_fill(f->r, p);
	/*
	 * protocol.rst: in RTR or later, every sequenced RC packet: cum --
	 * but none from an RNR refusal until the peer's requester switched
	 * epochs (version 3)
	 */
	SIM_CHECK(!mrc_resp_ready(f->r) || !f->r->epoch_seen ||
		  ((p->flags & MRC_F_CUMACK) && p->cum_lo == (u16)rx->cum),
		  "qp %u: psn %u sent %s cum_lo %u (cum %u)", f->ep->qpn,
		  p->psn, p->flags & MRC_F_CUMACK ? "with" : "without",
		  p->cum_lo, rx->cum);
	fq_send(f, p, payload, path);
	owed = mrc_rx_ack_pending(rx);
	/*
	 * It replaces the pending ACK if that says no more than cum: cum =
	 * top (no SACK bit), no duplicate to report, no immediate ACK due;
	 * at most MRC_CUMACK_MAX in a row, then a real ACK.
	 */
	sack = rx->cum != rx->top;
	dup = rx->dsack;
	due = rx->ack_now;
	all = owed && (p->flags & MRC_F_CUMACK) &&
	      p->cum_lo == (u16)rx->cum && !sack && !dup && !due &&
	      f->ackw.run < MRC_CUMACK_MAX;
	mrc_resp_cum_sent(f->r, &f->env, p);
	if (!owed)
		return;
	SIM_CHECK(all == !mrc_rx_ack_pending(rx),
		  "qp %u: psn %u with cum_lo %u %s the pending ACK (%s%s%s%u "
		  "replaced in a row)", f->ep->qpn, p->psn, p->cum_lo,
		  all ? "did not replace" : "replaced",
		  sack ? "SACK bits, " : "", dup ? "a duplicate to report, " :
		  "", due ? "an immediate ACK due, " : "", f->ackw.run);
	if (all)
		rc_ack_out(&f->ackw, f->ep->qpn, true);
}

static void fq_tx(struct fq *f)
{
	u8 payload[EP_MTU_MAX];
	struct mrc_req *q = f->q;
	struct mrc_req_out o;
	struct mrc_pkt p;
	int s;

	if (f->dead)
		return;
	if (f->crsp)
		f->crsp->fq_tx_b = true;
	fq_cfg(f);
	if (f->rnr_fired) {
		f->rnr_fired = false;
		q->rnr_wait = 0;
	}
	/* as tx.c: a timeout during an RNR wait is taken when it ends */
	if (f->rto_fired && !q->rnr_wait) {
		f->rto_fired = false;
		if (q->anchored) {
			if (q->tlp_armed)
				COV(tlp_fired);
			else if (mrc_sb_outstanding(&q->sb))
				COV(rto_fired);
			mrc_req_timer(q, &f->env);
			/* as tx.c: a waiting fatal NAK is bounded */
			mrc_resp_fnak_tick(f->r, &f->env,
					   q->cfg.retry_cnt + 1);
		}
	}
	if (q->probe_due) {
		q->probe_due = 0;
		memset(&p, 0, sizeof(p));
		p.opcode = MRC_OP_PROBE;
		p.flags = MRC_F_ACKREQ;
		p.psn = q->probe_psn;
		COV(req_probe);
		fq_send(f, &p, NULL, 0);
	}
	/* an RNR wait holds requests, not responses: the core decides */
	if (q->anchored && !q->failed) {
		while (!mrc_req_retx(q, &f->env, &o)) {
			if (fq_build(f, o.psn, &p, payload)) {
				/* as tx.c: a READ response whose MR is gone */
				if (!f->r->rsp_abort ||
				    !mrc_req_resp_gone(q, o.psn))
					break;
				f->r->rsp_abort = 0;
				memset(&p, 0, sizeof(p));
				p.opcode = MRC_OP_PROBE;
				p.flags = MRC_F_ACKREQ;
				p.psn = q->sb.nxt;
				COV(resp_gone_probe);
				fq_send(f, &p, NULL, o.path);
				continue;
			}
			p.ppsn = o.ppsn;
			p.flags |= MRC_F_RETX;
			COV(sb_retx);
			fq_send_cum(f, &p, payload, o.path);
			if (q->stop_new)
				break;
		}
		/* with stop_new, mrc_req_next() still runs responses */
		while (!q->failed) {
			s = mrc_req_next(q, f->r, &f->env, &o);
			if (s == MRC_REQ_STOP)
				break;
			if (s == MRC_REQ_AGAIN)
				continue;
			SIM_CHECK(s == MRC_REQ_PKT, "requester step %d", s);
			if (o.resp)
				COV(resp_rspq_run);
			else
				fq_note_psn(f, o.psn);
			if (fq_build(f, o.psn, &p, payload))
				break;
			p.ppsn = o.ppsn;
			COV(sb_new);
			fq_send_cum(f, &p, payload, o.path);
		}
		if (!q->failed) {
			if (!q->rnr_wait)
				mrc_req_arm_rto(q, &f->env, false);
			mrc_resp_rsp_abort(f->r, &f->env);
		}
	}
	/* as tp_run: an ACK a READ response was to carry, delayed */
	mrc_resp_ack_settle(f->r, &f->env);
	if (!q->failed)
		mrc_comp_complete(q, &f->env);
	if (f->crsp)
		f->crsp->fq_tx_b = false;
	fq_after(f);
}

static void fq_timer_fn(void *arg);

/* A packet for QP @f, as rx.c dispatches it. */
static void fq_rx(struct fq *f, const struct mrc_pkt *p, const u8 *payload,
		  bool ce)
{
	struct mrc_req *q = f->q;
	enum mrc_rx_verdict v0, v1;
	struct rc_held *h;
	unsigned int ret;
	bool repeat;
	u64 sent0;
	u32 old;

	if (f->dead || !mrc_resp_ready(f->r)) {
		if (mrc_op_sequenced(p->opcode) || p->opcode == MRC_OP_PROBE)
			mrc_resp_renak(f->r, &f->env, p);
		return;
	}
	q->heard_us = W.now;
	if (p->opcode == MRC_OP_ACK) {
		old = q->sb.una;
		if (p->ack.syndrome == MRC_SYN_RNR)
			COV(req_rnr_retry);
		if (W.o->verbose > 2 && p->ack.syndrome > MRC_SYN_RNR)
			printf("t=%llu qp %u: got NAK %u psn %u (una %u nxt %u "
			       "tail %u seg %u head %u stop %u failed %u)\n",
			       (unsigned long long)W.now, f->ep->qpn,
			       p->ack.syndrome, p->ack.nak_psn, q->sb.una,
			       q->sb.nxt, q->sq_tail, q->sq_seg, q->sq_head,
			       q->stop_new, q->failed);
		fq_cfg(f);
		if (mrc_comp_ack(q, &f->env, &p->ack,
				 mrc_rspq_len(&f->r->rspq) != 0)) {
			COV(sb_ack_rejected);
			SIM_CHECK(f->ep->stale_ok ||
				  mrc_seq_diff(q->sb.una, p->ack.cum_psn) >
				  4 * MRC_WND,
				  "qp %u: ACK cum %u rejected, una %u nxt %u",
				  f->ep->qpn, p->ack.cum_psn, q->sb.una,
				  q->sb.nxt);
		} else {
			ep_saw_ack(f->ep, &p->ack);
			ep_check_retired(f->ep, old);
		}
	} else if (p->opcode == MRC_OP_PROBE) {
		mrc_resp_send_ack(f->r, &f->env, MRC_SYN_ACK, 0);
	} else if (mrc_op_sequenced(p->opcode)) {
		h = malloc(sizeof(*h));
		if (!h)
			abort();
		h->len = p->hdr_len + p->payload_len;
		h->psn = p->psn;
		memcpy(h->buf + p->hdr_len, payload, p->payload_len);
		v0 = mrc_rx_check(&f->r->rx, p->psn);
		rc_cur_h = h;
		if (f->crsp) {
			f->crsp->in_rx = true;
			f->crsp->get_failed = false;
			f->crsp->wr_bytes = 0;
		}
		fq_cfg(f);
		old = q->sb.una;
		f->rx_v = v0;
		sent0 = f->ackw.sent;
		repeat = rc_nak_repeat(f->r, p);
		rc_voided_now = false;
		ret = mrc_resp_rx(f->r, &f->env, p, h, ce);
		f->rx_v = -1;
		if (f->crsp) {
			f->crsp->in_rx = false;
			rc_held_check(f->crsp);
		}
		rc_ack_now_check(&f->ackw, sent0, p, v0, ce, repeat,
				 !f->dead && !q->failed &&
				 mrc_resp_ready(f->r), f->ep->qpn);
		/* a response's implicit ACK: what it retired, the peer has */
		if (!f->dead) {
			if (q->sb.una != old)
				COV(sb_resp_ack);
			ep_check_retired(f->ep, old);
		}
		rc_cur_h = NULL;
		v1 = mrc_rx_check(&f->r->rx, p->psn);
		if (v0 == MRC_RX_NEW && v1 == MRC_RX_DUP)
			ep_mark_seen(f->ep, p->psn, rc_voided_now);
		if (v0 == MRC_RX_NEW) {
			COV(rx_new);
			if (v1 == MRC_RX_NEW)
				COV(resp_drop);
			else if (ret & MRC_RESP_HELD)
				COV(resp_held);
			else
				COV(resp_placed);
		}
		if (ret & MRC_RESP_HELD) {
			f->nheld++;
			if (f->crsp)
				f->crsp->nheld++;
		} else {
			free(h);
		}
		if (ret & MRC_RESP_TX)
			q->want_tx = 1;
	}
	fq_after(f);
	if (q->want_tx && !f->dead) {
		q->want_tx = 0;
		fq_tx(f);
	}
}

static void fq_timer_fn(void *arg)
{
	struct sim_timer *t = arg;
	struct fq *f = NULL;
	u32 i, k;

	for (i = 0; i < rc_n && !f; i++)
		for (k = 0; k < 2; k++)
			if (rc[i].fq[k] && t >= rc[i].fq[k]->t &&
			    t < rc[i].fq[k]->t + MRC_TIMER_MAX)
				f = rc[i].fq[k];
	if (!f || f->dead)
		return;
	if (t == &f->t[MRC_TIMER_ACK]) {
		if (mrc_resp_ready(f->r)) {
			COV(rx_ack_delayed);
			mrc_resp_ack_timer(f->r, &f->env);
		}
		fq_after(f);
		return;
	}
	if (t == &f->t[MRC_TIMER_RTO]) {
		if (!rto_fired(f->q, &f->env, f->ep->qpn)) {
			rto_lazy_check(f->q, t, f->ep->qpn);
			return;
		}
		f->rto_fired = true;
	} else {
		f->rnr_fired = true;
	}
	fq_tx(f);
}

/* A new life of both QPs of @c (RTR + RTS). */
static void fq_start(struct rc_conn *c, u32 isn_q, u32 isn_s, u32 np)
{
	u32 k, i;

	for (k = 0; k < 2; k++) {
		struct fq *f = c->fq[k];
		struct mrc_path_cfg cfg;
		u8 *swq = f->q->swq;

		for (i = 0; i < MRC_TIMER_MAX; i++)
			timer_cancel(&f->t[i]);
		mrc_resp_reset(f->r, &f->env);
		f->ackw.run = 0;	/* a new receive side (rx.carried) */
		memset(f->q, 0, sizeof(*f->q));
		f->q->swq = swq;
		f->q->nswq = CQ_NSWQ;
		f->q->swqe_size = CQ_SWQE_SIZE;
		fq_cfg(f);
		mrc_sb_init(&f->q->sb, k ? isn_s : isn_q, 0,
			    MRC_DUPTHRESH_DEFAULT);
		mrc_path_cfg_default(&cfg);
		cfg.npaths = np;
		cfg.seed = (u32)rng_next(&W.rng);
		if (!rng_below(&W.rng, 4)) {
			cfg.max_cwnd = rng_range(&W.rng, 2, 64);
			cfg.init_cwnd = rng_range(&W.rng, 1, cfg.max_cwnd);
		}
		mrc_paths_init(&f->q->paths, &cfg);
		f->q->anchored = 1;
		f->q->progress_us = f->q->heard_us = W.now;
		mrc_resp_start(f->r, &f->env, k ? isn_q : isn_s,
			       MRC_ACK_EVERY_DEFAULT, MRC_ACK_EVERY_HOLE);
		f->r->cfg.dest_qpn = f->ep->peer_qpn;
		f->r->cfg.max_dest_rd_atomic = f->crsp ? f->crsp->rd_atomic :
					       c->rd_atomic;
		f->r->cfg.npaths = np;
		f->r->cfg.qp_access = MRC_ACC_REMOTE_WRITE |
				      MRC_ACC_REMOTE_READ |
				      MRC_ACC_REMOTE_ATOMIC;
		/* "rnrdep": RNR waits of milliseconds, longer than an RTO */
		f->r->cfg.min_rnr_timer = W.f.rnrdep ? 14 + W.f.rnrdep : 1;
		/* fault: the QP lacks a right its peer will use */
		if (W.f.access && f->crsp) {
			f->r->cfg.qp_access &= ~(MRC_ACC_REMOTE_WRITE <<
						 rng_below(&W.rng, 3));
			COV(f_access);
		}
		f->ep->sbp = &f->q->sb;
		f->ep->pathsp = &f->q->paths;
		f->ep->rxp = &f->r->rx;
		f->ep->checked_cum = f->r->rx.cum;
		f->rto_fired = f->rnr_fired = f->fail_pending = false;
		f->dead = false;
		f->nheld = 0;
	}
	c->r = c->fq[1]->r;	/* the checks look at B's responder */
}

static struct fq *fq_new(struct rc_conn *c, int side)
{
	struct fq *f = calloc(1, sizeof(*f));
	u32 i;

	if (!f)
		abort();
	f->c = c;
	f->side = side;
	f->ep = side ? &c->rsp : &c->req;
	f->creq = side ? NULL : c;
	f->crsp = side ? c : NULL;
	f->q = calloc(1, sizeof(*f->q));
	f->r = calloc(1, sizeof(*f->r));
	f->t = calloc(MRC_TIMER_MAX, sizeof(*f->t));
	f->rx_v = -1;
	if (!f->q || !f->r || !f->t)
		abort();
	f->q->swq = calloc(CQ_NSWQ, CQ_SWQE_SIZE);
	if (!f->q->swq)
		abort();
	f->env.ops = &fq_env_ops;
	f->env.ctx = f;
	for (i = 0; i < MRC_TIMER_MAX; i++)
		timer_init(&f->t[i], fq_timer_fn, &f->t[i]);
	return f;
}

static void fq_free(struct fq *f)
{
	u32 i;

	if (!f)
		return;
	for (i = 0; i < MRC_TIMER_MAX; i++)
		timer_cancel(&f->t[i]);
	mrc_resp_reset(f->r, &f->env);	/* releases held packets */
	free(f->q->swq);
	free(f->q);
	free(f->r);
	free(f->t);
	free(f);
}

/* State of both QPs of @c (a hang). */
static void fq_dump(struct rc_conn *c)
{
	u32 k;

	for (k = 0; k < 2; k++) {
		struct fq *f = c->fq[k];
		struct mrc_req *q = f->q;
		const struct mrc_rsp *h = mrc_rspq_head(&f->r->rspq);

		printf("qp %u: sb una %u nxt %u nlost %u; sq tail %u seg %u "
		       "head %u (seg_off %u); rd_atomic_out %u stop %u "
		       "failed %u rnr %u want %u probe %u retries %u; rx cum %u "
		       "top %u; rspq %u head psn %d ready %d; held %u; "
		       "rto %d rnr %d ack %d\n", f->ep->qpn, q->sb.una, q->sb.nxt,
		       q->sb.nlost, q->sq_tail, q->sq_seg, q->sq_head,
		       q->sq_seg != q->sq_head ?
		       mrc_req_swqe(q, q->sq_seg)->seg_off : 0,
		       q->rd_atomic_out, q->stop_new, q->failed, q->rnr_wait,
		       q->want_tx, q->probe_due, q->retries, f->r->rx.cum,
		       f->r->rx.top, mrc_rspq_len(&f->r->rspq),
		       h ? (int)h->req_psn : -1, mrc_resp_rsp_ready(f->r),
		       f->r->nheld, f->t[MRC_TIMER_RTO].armed,
		       f->t[MRC_TIMER_RNR].armed, f->t[MRC_TIMER_ACK].armed);
		if (mrc_sb_outstanding(&q->sb))
			printf("qp %u: psn una state %u retx %u tlp %u/%u\n",
			       f->ep->qpn, mrc_sb_state_of(&q->sb, q->sb.una),
			       q->sb.ent[q->sb.una % MRC_WND].retx,
			       q->tlp_armed, q->tlp_done);
	}
}

static void fq_coverage(void)
{
	u32 i, j, n = 0;

	printf("requester engine transitions (from -> to: count):\n");
	for (i = 0; i < MRC_REQS_NSTATES; i++)
		for (j = 0; j < MRC_REQS_NSTATES; j++)
			if (req_trans[i][j])
				printf("  %-13s -> %-13s %12llu\n",
				       mrc_req_state_name(i),
				       mrc_req_state_name(j),
				       (unsigned long long)req_trans[i][j]);
	printf("requester states unreached:");
	for (i = 0; i < MRC_REQS_NSTATES; i++) {
		bool seen = i == MRC_REQS_PICK;

		for (j = 0; j < MRC_REQS_NSTATES; j++)
			seen |= req_trans[j][i] != 0;
		if (!seen) {
			printf(" %s", mrc_req_state_name(i));
			n++;
		}
	}
	printf("%s\n", n ? "" : " none");
}
#endif /* SIM_HAVE_REQ */

/*
 * Did the QP of @e void its request @psn (an RNR switch)? Whichever
 * requester it runs: the core's descriptors, or the sim's own tx slots.
 */
static bool rc_ep_voided(struct ep *e, u32 psn)
{
	struct rc_conn *c = conn_of_ep(e);
	const struct mrc_req *q = NULL;
	const struct mrc_txd *d;

#ifdef SIM_HAVE_REQ
	if (c->fq[0] && e == &c->req)
		q = c->fq[0]->q;
	else if (c->fq[1] && e == &c->rsp)
		q = c->fq[1]->q;
#endif
#ifdef SIM_HAVE_COMP
	if (!q && c->use_comp && e == &c->req)
		q = c->q;
#endif
	if (!q)
		return e->tx[psn % MRC_WND].p.psn == psn &&
		       e->tx[psn % MRC_WND].voided;
	d = &q->pkt[psn & (MRC_WND - 1)];
	return d->kind == MRC_TXD_REQ && d->voided;
}

#endif /* SIM_HAVE_COMP */

/* ====================================================== the stream */

static void rc_fill(u8 *b, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		b[i] = (u8)rng_next(&W.rng);
}

/* Does WR j write bytes that an outstanding-able READ/atomic reads? */
static bool rc_conflicts(struct rc_conn *c, u32 j, u8 mr, u64 va, u32 len)
{
	u32 i, lo = j > c->sq_depth ? j - c->sq_depth : 0;

	if (c->strict)
		return false;
	for (i = lo; i < j; i++) {
		struct rc_wr *w = &c->wr[i];
		u32 wl = w->kind == WR_READ ? w->len : 8;

		if (!wr_is_rdat(w) || w->mr != mr)
			continue;
		if (va < w->va + wl && w->va < va + len)
			return true;
	}
	return false;
}

/* A READ of MR @mr before WR @j? */
static bool rc_read_before(struct rc_conn *c, u32 j, u8 mr)
{
	u32 i;

	for (i = 0; i < j; i++)
		if (c->wr[i].kind == WR_READ && c->wr[i].mr == mr)
			return true;
	return false;
}

/* A READ/atomic of MR @mr among the sq_depth WRs before @j? */
static bool rc_rdat_pending(struct rc_conn *c, u32 j, u8 mr)
{
	u32 i, lo = j > c->sq_depth ? j - c->sq_depth : 0;

	if (c->strict)
		return false;
	for (i = lo; i < j; i++)
		if (wr_is_rdat(&c->wr[i]) && c->wr[i].mr == mr)
			return true;
	return false;
}

static void rc_gen(struct rc_conn *c, u32 nwr)
{
	static const u8 weight[WR_NKIND] = { 30, 5, 14, 5, 3, 20, 9, 12 };
	u32 i, k, tot = 0, nalive = RC_NMR, maxlen = 4 * ep_mtu;
	u8 alive[RC_NMR];

	for (k = 0; k < WR_NKIND; k++)
		tot += weight[k];
	for (k = 0; k < RC_NMR; k++)
		alive[k] = c->mr[k].valid;
	c->wr = calloc(nwr, sizeof(*c->wr));
	c->atomic_execs = calloc(nwr, 1);
	if (!c->wr || !c->atomic_execs)
		abort();
	c->nwr = nwr;
	c->nrmsg = 0;
	for (i = 0; i < nwr; i++) {
		struct rc_wr *w = &c->wr[i];
		u32 r = rng_below(&W.rng, tot), tries, shift;
		struct rc_mr *m;

		for (k = 0; r >= weight[k]; k++)
			r -= weight[k];
		w->kind = k;
		/*
		 * "close": the receiver closes after the last message, a
		 * SEND; no READ/atomic (it would owe their responses).
		 */
		if (W.f.close && (k == WR_READ || k == WR_CAS || k == WR_FAA ||
				  i == nwr - 1))
			w->kind = k = WR_SEND;
		/* SEND_WITH_INV: keep two MRs alive; a WRITE to it just before */
		if (k == WR_SEND_INV && nalive <= 2)
			w->kind = WR_SEND;
		do {
			w->mr = rng_below(&W.rng, RC_NMR);
		} while (!alive[w->mr]);
		m = &c->mr[w->mr];
		for (tries = 0; tries < 20; tries++) {
			/* overlap on purpose: a small hot zone half the time */
			u32 span = rng_below(&W.rng, 2) ? 256 : m->len;

			switch (w->kind) {
			case WR_WRITE:
			case WR_WRITE_IMM:
			case WR_READ:
				w->len = rng_below(&W.rng, 4) ?
					 rng_range(&W.rng, 0, maxlen) :
					 rng_range(&W.rng, 0, 16);
				if (w->len > m->len)
					w->len = m->len;
				w->va = m->va + rng_below(&W.rng,
					min_t(u32, span, m->len - w->len) + 1);
				break;
			case WR_CAS:
			case WR_FAA:
				w->len = 8;
				w->va = m->va + 8 * rng_below(&W.rng,
						min_t(u32, span, m->len) / 8);
				break;
			default:
				w->len = rng_range(&W.rng, 0, rc_send_max());
				break;
			}
			if (w->kind == WR_READ || w->kind == WR_SEND ||
			    w->kind == WR_SEND_IMM || w->kind == WR_SEND_INV ||
			    !rc_conflicts(c, i, w->mr, w->va, w->len))
				break;
			/* IB: a later write may pass an unfenced READ/atomic */
			if (rng_below(&W.rng, 2)) {
				w->fence = true;
				COV(req_fence);
				break;
			}
		}
		if (tries == 20) {
			w->kind = WR_SEND;
			w->len = rng_range(&W.rng, 0, rc_send_max());
		}
		if (w->kind == WR_SEND_INV) {
			/* the WRITE just before targets the MR to invalidate */
			if (i && c->wr[i - 1].kind == WR_WRITE &&
			    alive[c->wr[i - 1].mr])
				w->mr = c->wr[i - 1].mr;
			/*
			 * A READ/atomic of that MR may still be queued at the
			 * responder: fence (IB lets the SEND pass it, and
			 * invalidate under it, otherwise). --strict: no fence.
			 */
			if (rc_rdat_pending(c, i, w->mr)) {
				w->fence = true;
				COV(req_fence);
			}
			/*
			 * "invread": a READ of that MR may come earlier in
			 * this life (a READ response retransmitted after the
			 * invalidation: finding 6, fixed; in half the runs).
			 */
			if (!W.f.invread && rc_read_before(c, i, w->mr))
				w->kind = WR_SEND;
			else {
				alive[w->mr] = 0;
				nalive--;
			}
		}
		w->imm = (u32)rng_next(&W.rng);
		w->data = malloc(w->len + 8);
		w->got = calloc(1, w->len + 8);
		if (!w->data || !w->got)
			abort();
		if (w->kind != WR_READ)
			rc_fill(w->data, w->len);
		/*
		 * One draw per statement, in the order of CI's build (gcc
		 * -O1, ASan/UBSan) before they were split: the shift first
		 * (selftests/sim/determinism.sh)
		 */
		shift = rng_below(&W.rng, 64);
		w->swap_add = rng_next(&W.rng) >> shift;
		/*
		 * rsocket's control messages: a zero-length WRITE_IMM (or
		 * WRITE, READ) whose rkey was never set, in about half of
		 * them (no rng draw: the seeds' streams stay as they were).
		 */
		if (!w->len && (w->kind == WR_WRITE ||
				w->kind == WR_WRITE_IMM ||
				w->kind == WR_READ) && (i ^ (u32)w->swap_add) & 1) {
			w->junk_rkey = (u32)(w->swap_add >> 8) * 2654435761u | 1;
			COV(req_junk_rkey);
		}
		if (wr_is_recv(w)) {
			w->rmsn = c->nrmsg;
			c->rmsg[c->nrmsg++] = i;
		}
		switch (w->kind) {
		case WR_WRITE:
			COV(op_write);
			break;
		case WR_WRITE_IMM:
			COV(op_write_imm);
			break;
		case WR_SEND:
			COV(op_send);
			break;
		case WR_SEND_IMM:
			COV(op_send_imm);
			break;
		case WR_SEND_INV:
			COV(op_send_inv);
			break;
		case WR_READ:
			COV(op_read);
			break;
		case WR_CAS:
			COV(op_cas);
			break;
		case WR_FAA:
			COV(op_faa);
			break;
		}
	}
}

/* Execute the stream on the model, in order: the reference. */
static void rc_reference(struct rc_conn *c)
{
	u32 i;

	if (W.o->verbose > 2)
		for (i = 0; i < c->nwr; i++)
			printf("qp %u WR %u kind %u mr %u va %llx len %u fence %d\n",
			       c->req.qpn, i, c->wr[i].kind, c->wr[i].mr,
			       (unsigned long long)c->wr[i].va, c->wr[i].len,
			       c->wr[i].fence);

	for (i = 0; i < c->nwr; i++) {
		struct rc_wr *w = &c->wr[i];
		struct rc_mr *m = &c->mr[w->mr];
		u8 *at = m->model + (w->va - m->va);
		u64 v;
		u32 b;

		switch (w->kind) {
		case WR_WRITE:
		case WR_WRITE_IMM:
			memcpy(at, w->data, w->len);
			for (b = 0; b < w->len; b++)
				m->touched[w->va - m->va + b] = 1;
			break;
		case WR_READ:
			memcpy(w->data, at, w->len);
			break;
		case WR_CAS:
		case WR_FAA:
			memcpy(&v, at, 8);
			w->orig_expect = v;
			if (w->kind == WR_FAA)
				v += w->swap_add;
			else if (rng_below(&W.rng, 2))
				w->compare = v, v = w->swap_add;
			else
				w->compare = rng_next(&W.rng) | 1,
				v = v == w->compare ? w->swap_add : v;
			memcpy(at, &v, 8);
			for (b = 0; b < 8; b++)
				m->touched[w->va - m->va + b] = 1;
			break;
		}
	}
}

/* ====================================================== the run */

static void rc_rx(u32 node, const struct mrc_pkt *p, const u8 *payload,
		  bool ce)
{
	u32 i;

	for (i = 0; i < rc_n; i++) {
#ifdef SIM_HAVE_REQ
		if (rc[i].fq[0]) {
			if (rc[i].req.node == node &&
			    rc[i].req.qpn == p->dst_qpn) {
				fq_rx(rc[i].fq[0], p, payload, ce);
				return;
			}
			if (rc[i].rsp.node == node &&
			    rc[i].rsp.qpn == p->dst_qpn) {
				fq_rx(rc[i].fq[1], p, payload, ce);
				return;
			}
			continue;
		}
#endif
		if (rc[i].req.node == node && rc[i].req.qpn == p->dst_qpn) {
			ep_on_pkt(&rc[i].req, p, payload, ce);
			return;
		}
		if (rc[i].rsp.node == node && rc[i].rsp.qpn == p->dst_qpn) {
			if (p->opcode == MRC_OP_PROBE) {
				/* as the kernel adapter: answer, or re-NAK */
				if (mrc_resp_ready(rc[i].r))
					mrc_resp_send_ack(rc[i].r, &rc[i].env,
							  MRC_SYN_ACK, 0);
				else
					mrc_resp_renak(rc[i].r, &rc[i].env, p);
				rc_after_engine(&rc[i]);
				return;
			}
			ep_on_pkt(&rc[i].rsp, p, payload, ce);
			return;
		}
	}
	sim_fail("packet for unknown qp %u on node %u", p->dst_qpn, node);
}

/*
 * An ACK goes out, or a packet's cum_lo replaces it (@carried): an ACK
 * owed goes out within MRC_TLP_ACK_DELAY_US, checked here too -- at the
 * step checks alone, an ACK 1-50 us late went unnoticed unless some other
 * event fell between the bound and the ACK. A real ACK starts the count
 * of those replaced in a row again (protocol.rst "Cumulative ACK on
 * reverse data").
 */
static void rc_ack_out(struct rc_ackw *a, u32 qpn, bool carried)
{
	SIM_CHECK(!a->since || a->seen != a->sent ||
		  W.now + 1 - a->since <= MRC_TLP_ACK_DELAY_US,
		  "qp %u: ACK owed since t=%llu %s %llu us later (at most %u: "
		  "the delayed ACK)", qpn, (unsigned long long)(a->since - 1),
		  carried ? "carried by a packet" : "sent",
		  (unsigned long long)(W.now + 1 - a->since),
		  MRC_TLP_ACK_DELAY_US);
	a->sent++;
	a->run = carried ? a->run + 1 : 0;
}

/*
 * protocol.rst "ACK policy": a duplicate or out-of-window packet, and one
 * with RETX, ACKREQ or a CE mark, is acknowledged at once: an ACK (or NAK)
 * goes out while it is processed (@sent0: a->sent before). Not when it
 * would repeat the last NAK sent (@repeat: its PSN, no RETX; "A NAK is sent
 * once per PSN and syndrome"), nor when the QP failed on it (@live).
 */
static void rc_ack_now_check(const struct rc_ackw *a, u64 sent0,
			     const struct mrc_pkt *p,
			     enum mrc_rx_verdict v0, bool ce, bool repeat,
			     bool live, u32 qpn)
{
	bool now = v0 != MRC_RX_NEW || (p->flags & MRC_F_RETX) ||
		   (!repeat && ((p->flags & MRC_F_ACKREQ) || ce));

	if (!live || !now)
		return;
	SIM_CHECK(a->sent != sent0, "qp %u: psn %u (%s%s%s%s) not "
		  "acknowledged at once", qpn, p->psn,
		  v0 == MRC_RX_NEW ? "new" : v0 == MRC_RX_DUP ? "duplicate" :
		  "out of window", p->flags & MRC_F_RETX ? ", RETX" : "",
		  p->flags & MRC_F_ACKREQ ? ", ACKREQ" : "", ce ? ", CE" : "");
}

/* An owed ACK goes out within MRC_TLP_ACK_DELAY_US (struct rc_ackw). */
static void rc_ack_late(struct rc_ackw *a, const struct mrc_resp *r,
			bool live, u32 qpn)
{
	if (!live || !mrc_resp_ready(r) || r->cfg.uc ||
	    !mrc_rx_ack_pending(&r->rx)) {
		a->since = 0;
		return;
	}
	if (!a->since || a->seen != a->sent) {
		a->since = W.now + 1;
		a->seen = a->sent;
		return;
	}
	SIM_CHECK(W.now + 1 - a->since <= MRC_TLP_ACK_DELAY_US,
		  "qp %u: ACK owed since t=%llu not sent %llu us later "
		  "(at most %u: the delayed ACK)", qpn,
		  (unsigned long long)(a->since - 1),
		  (unsigned long long)(W.now + 1 - a->since),
		  MRC_TLP_ACK_DELAY_US);
}

static void rc_check(void)
{
	u32 i;

	for (i = 0; i < rc_n; i++) {
		if (!rc[i].fq_borrowed) {
			ep_check(&rc[i].req);
			ep_check(&rc[i].rsp);
		}
#ifdef SIM_HAVE_REQ
		if (rc[i].fq[0] && !rc[i].fq_borrowed) {
			struct fq *f;

			for (u32 k = 0; k < 2; k++) {
				f = rc[i].fq[k];
				rc_ack_late(&f->ackw, f->r, !f->dead,
					    f->ep->qpn);
			}
		} else if (!rc[i].fq[0])
#endif
			rc_ack_late(&rc[i].ackw, rc[i].r, !rc[i].rsp_err,
				    rc[i].rsp.qpn);
		SIM_CHECK(rc[i].r->nheld <= MRC_HELD_MAX &&
			  rc[i].r->nheld == rc[i].nheld,
			  "held packets: engine %u, environment %u",
			  rc[i].r->nheld, rc[i].nheld);
		SIM_CHECK(mrc_rspq_len(&rc[i].r->rspq) <= rc[i].rd_atomic,
			  "READ/atomic queue %u > max_dest_rd_atomic %u",
			  mrc_rspq_len(&rc[i].r->rspq), rc[i].rd_atomic);
	}
}

/* The responder QP's send side (its responses). */
static const struct mrc_sb *rc_rsp_sb(const struct rc_conn *c)
{
#ifdef SIM_HAVE_REQ
	if (c->fq[1])
		return &c->fq[1]->q->sb;
#endif
	return c->rsp.sbp;
}

static bool rc_quiet(void)
{
	u32 i;

	for (i = 0; i < rc_n; i++) {
		struct rc_conn *c = &rc[i];

		if (c->done_wr != c->nwr)
			return false;
		/* the responder's responses are all acknowledged */
		if (!c->req_err && !c->rsp_err &&
		    mrc_sb_outstanding(rc_rsp_sb(c)))
			return false;
	}
	return true;
}

static void rc_free_life(struct rc_conn *c)
{
	u32 i;

	if (c->wr)
		for (i = 0; i < c->nwr; i++) {
			free(c->wr[i].data);
			free(c->wr[i].got);
		}
	free(c->wr);
	c->wr = NULL;
	free(c->atomic_execs);
	c->atomic_execs = NULL;
	for (i = 0; i < RC_RQ_MAX; i++) {
		free(c->rq[i].buf);
		c->rq[i].buf = NULL;
	}
	for (i = 0; i < MRC_RSLOTS; i++) {
		free(c->slot[i].buf);
		c->slot[i].buf = NULL;
	}
}

static void rc_cleanup(void)
{
	u32 i, k;

	for (i = 0; i < rc_n; i++) {
		struct rc_conn *c = &rc[i];

#ifdef SIM_HAVE_REQ
		if (c->fq[0]) {
			if (!c->fq_borrowed) {
				fq_free(c->fq[0]);
				fq_free(c->fq[1]);
			}
			c->r = NULL;
		}
#endif
		if (c->r) {
			/* held packets belong to us: the reset releases them */
			mrc_resp_reset(c->r, &c->env);
			free(c->r);
		}
		ep_free(&c->req);
		ep_free(&c->rsp);
#ifdef SIM_HAVE_COMP
		for (k = 0; k < MRC_TIMER_MAX; k++)
			timer_cancel(&c->qtimer[k]);
		if (c->q)
			free(c->q->swq);
		free(c->q);
#endif
		rc_free_life(c);
		for (k = 0; k < RC_NMR; k++) {
			free(c->mr[k].mem);
			free(c->mr[k].model);
			free(c->mr[k].touched);
		}
		for (k = 0; k < MRC_TIMER_MAX; k++)
			timer_cancel(&c->etimer[k]);
	}
	free(rc);
	rc = NULL;
	rc_n = 0;
	free(rc_cur_h);
	rc_cur_h = NULL;
}

static void rc_kick(void *arg, u64 x)
{
	struct rc_conn *c = arg;

	if (x != c->life)
		return;
#ifdef SIM_HAVE_REQ
	if (c->fq[0]) {
		fq_tx(c->fq[0]);
		return;
	}
#endif
	ep_pump(&c->req);
}

/* Fault: the responder's application deregisters an MR mid-run. */
static void rc_dereg_ev(void *arg, u64 x)
{
	struct rc_conn *c = arg;

	if (x != c->life || c->rsp_err)
		return;
	c->mr[c->dereg_mr].valid = false;
	c->dereg_done = true;
	COV(f_dereg);
}

#ifdef SIM_HAVE_REQ
static void rc_close_ev(void *arg, u64 x);
#endif

/*
 * Fault "close" (engines): the receiving application closes its QP at
 * once after its last message, as fio's rdma server (rdma_disconnect
 * after the last receive completion): some microseconds later, sooner
 * than the delayed-ACK timer. The requester must still complete every
 * WR: the QP sends its pending ACK when it leaves (protocol.rst "ACK
 * policy"; stop 14's consumers-quick failure).
 */
static void rc_close_arm(struct rc_conn *c)
{
#ifdef SIM_HAVE_REQ
	if (W.f.close && c->fq[1] && !c->fq[1]->creq &&
	    c->rq_done == c->nrmsg && !c->rsp_err)
		sim_at(rng_below(&W.rng, MRC_ACK_DELAY_US / 2), rc_close_ev, c,
		       c->life);
#else
	(void)c;
#endif
}

#ifdef SIM_HAVE_REQ
/*
 * Fault "close": the receiving application destroys its QP (after its
 * last message, rc_close_arm()): as the kernel's destroy, the responder
 * leaves (mrc_resp_leave(): its pending ACK goes out) and forgets
 * everything; nothing of the QP runs or answers any more.
 */
static void rc_close_ev(void *arg, u64 x)
{
	struct rc_conn *c = arg;
	struct fq *f = c->fq[1];
	u32 i;

	if (x != c->life || f->dead)
		return;
	COV(f_close);
	fq_cfg(f);
	mrc_resp_leave(f->r, &f->env);
	mrc_resp_reset(f->r, &f->env);
	f->dead = true;
	for (i = 0; i < MRC_TIMER_MAX; i++)
		timer_cancel(&f->t[i]);
	f->ep->errored = true;
	fq_after(f);
}
#endif

/* Fault: an application moves its QP to error mid-run. */
static void rc_qperr_ev(void *arg, u64 x)
{
	struct rc_conn *c = arg;

	if ((x >> 1) != c->life)
		return;
	COV(f_qp_err);
#ifdef SIM_HAVE_REQ
	if (c->fq[0]) {
		struct fq *f = c->fq[x & 1];

		if (!f->dead) {
			f->q->failed = 1;
			f->fail_pending = true;
			fq_after(f);
		}
		return;
	}
#endif
	if (x & 1) {
		if (!c->rsp_err) {
			c->rsp_err = true;
			c->flush_pending = true;
			rc_after_engine(c);
		}
	} else if (!c->req_err) {
		if (!c->use_comp)
			req_complete(c);
		ep_error(&c->req, 0, 0);
	}
}

/* One life of every connection: set up, run, check. */
static void rc_life(u32 nwr)
{
	u32 i, k, b;

	for (i = 0; i < rc_n; i++) {
		struct rc_conn *c = &rc[i];
		u32 isn_q = (u32)rng_next(&W.rng), isn_s = (u32)rng_next(&W.rng);
		u32 np = rng_range(&W.rng, 1, 8);
		u32 life = c->life;

		/*
		 * Near the wrap in a quarter of the runs; not twice with the
		 * old life's packets in flight ("stale"): two lives in one PSN
		 * window are indistinguishable (IB alike; the application
		 * draws a random initial PSN, protocol.rst "Sequence spaces").
		 */
		if (!rng_below(&W.rng, 4) && !(W.f.stale && life))
			isn_q = 0u - (u32)rng_below(&W.rng, 300);
		/*
		 * "stale", in half the runs: the new PSN spaces begin a
		 * multiple of 2^16 after where the old ones ended (a little
		 * before), so that the cum_lo of the old life's packets still
		 * in flight names PSNs of the new life (version 2: only a new
		 * packet's cum_lo is applied; these are out of the window).
		 */
		if (W.f.stale && life && rng_below(&W.rng, 2)) {
			/* one draw per statement, CI's build's order */
			u32 hi = (u32)rng_range(&W.rng, 1, 0xff);
			u32 lo = (u32)rng_below(&W.rng, 32);

			isn_q = c->old_nxt_q + 0x10000 * hi - lo;
			hi = (u32)rng_range(&W.rng, 1, 0xff);
			lo = (u32)rng_below(&W.rng, 32);
			isn_s = c->old_nxt_s + 0x10000 * hi - lo;
			COV(f_stale_alias);
		}
		c->req.life = c->rsp.life = life;
		ep_init(&c->req, c->req.node, c->rsp.node, c->req.qpn,
			c->rsp.qpn, isn_q, isn_s, np, &req_ops, c);
#ifdef SIM_HAVE_COMP
		if (c->use_comp) {
			c->req.ops = &creq_ops;
			creq_start(c, isn_q, np);
		}
#endif
		ep_init(&c->rsp, c->rsp.node, c->req.node, c->rsp.qpn,
			c->req.qpn, isn_s, isn_q, np, &rsp_ops, c);
		c->req.peer = &c->rsp;
		c->rsp.peer = &c->req;
		c->req.stale_ok = c->rsp.stale_ok = life > 0;
#ifdef SIM_HAVE_REQ
		if (c->fq[0]) {
			if (!c->fq_borrowed)
				fq_start(c, isn_q, isn_s, np);
			goto started;
		}
#endif
		mrc_resp_reset(c->r, &c->env);
		mrc_resp_start(c->r, &c->env, isn_q, MRC_ACK_EVERY_DEFAULT,
			       MRC_ACK_EVERY_HOLE);
		c->r->cfg.dest_qpn = c->req.qpn;
		c->r->cfg.max_dest_rd_atomic = c->rd_atomic;
		c->r->cfg.npaths = np;
		c->r->cfg.qp_access = MRC_ACC_REMOTE_WRITE |
				      MRC_ACC_REMOTE_READ |
				      MRC_ACC_REMOTE_ATOMIC;
		/* fault: the QP lacks a right its peer will use */
		if (W.f.access) {
			c->r->cfg.qp_access &= ~(MRC_ACC_REMOTE_WRITE <<
						 rng_below(&W.rng, 3));
			COV(f_access);
		}
		c->r->cfg.min_rnr_timer = 1;
		c->rsp.rxp = &c->r->rx;
		c->rsp.checked_cum = isn_q;
#ifdef SIM_HAVE_REQ
started:
#endif
		c->req_err = c->rsp_err = c->flush_pending = false;
		c->sq_bad = false;
		c->fw_on = false;
		c->next_wr = c->cur_wr = c->done_wr = c->ok_wr = 0;
		c->cmpl_limit = ~0u;
		c->cur_busy = false;
		c->rq_posted = c->rq_popped = c->rq_done = 0;
		c->rnrhold_mark = 0;
		c->rq_hold_until = 0;
		c->dereg_done = false;
		c->vanish_done = false;
		c->vanish_at = 1 + (u32)rng_below(&W.frng, 1500);
		c->ngets = 0;
		c->held_fail = c->held_naked = false;
		c->held_fail_wr = 0;
		c->rcqe_ok = 0;
		for (k = 0; k < MRC_RSLOTS; k++)
			c->slot[k].buf = NULL;
		/* the model starts from what memory holds now */
		for (k = 0; k < RC_NMR; k++) {
			memcpy(c->mr[k].model, c->mr[k].mem, c->mr[k].len);
			memset(c->mr[k].touched, 0, c->mr[k].len);
		}
		rc_gen(c, nwr);
		rc_reference(c);
		c->badwqe_at = rng_below(&W.rng, nwr);
		/*
		 * "badwqe2": both directions of a QP pair (two QPs each with
		 * an error WQE behind a READ to the other: finding 8, fixed).
		 */
		if (c->fq_borrowed && W.f.badwqe < 2)
			c->badwqe_at = nwr;
		for (k = 0; k < 8 + rng_below(&W.rng, 40); k++)
			rc_post_recv(c);
		if (W.f.rnr_ppm && rng_below(&W.rng, 2))
			c->rq_hold_until = W.now + rng_range(&W.rng, 100, 3000);
		sim_at(rng_below(&W.rng, 100), rc_kick, c, life);
		if (W.f.dereg) {
			c->dereg_mr = rng_below(&W.rng, RC_NMR);
			sim_at(rng_range(&W.rng, 10, 5000), rc_dereg_ev, c, life);
		}
		if (W.f.qp_err) {
			/*
			 * One draw per statement, in the order CI's build
			 * (gcc -O1, ASan/UBSan) drew sim_at()'s arguments:
			 * which side errs, then when
			 */
			u64 side = rng_below(&W.rng, 2);

			sim_at(rng_range(&W.rng, 10, 5000), rc_qperr_ev, c,
			       (u64)life << 1 | side);
		}
	}
	if (!sim_run_until(rc_quiet, W.end_by) || !rc_quiet()) {
		for (i = 0; i < rc_n; i++) {
			struct rc_conn *c = &rc[i];

#ifdef SIM_HAVE_REQ
			if (c->done_wr != c->nwr && c->fq[0] && W.o->verbose)
				fq_dump(c);
#endif
			if (c->done_wr != c->nwr)
				sim_fail("hang: qp %u completed %u of %u WRs "
					 "(posted %u; una %u nxt %u nlost %u; "
					 "responder cum %u rspq %u held %u; "
					 "errors %d/%d)", c->req.qpn, c->done_wr,
					 c->nwr, c->next_wr,
					 c->req.sbp->una - c->req.isn_tx,
					 c->req.sbp->nxt - c->req.isn_tx,
					 c->req.sbp->nlost,
					 c->r->rx.cum - c->req.isn_tx,
					 mrc_rspq_len(&c->r->rspq), c->nheld,
					 c->req_err, c->rsp_err);
		}
		sim_fail("hang: responses never acknowledged");
	}
	/* the end: memory against the reference */
	for (i = 0; i < rc_n; i++) {
		struct rc_conn *c = &rc[i];
		bool err = c->req_err || c->rsp_err;

		if (err)
			SIM_CHECK(rc_err_faults() || c->strict,
				  "qp %u: error in a run without error faults",
				  c->req.qpn);
		/* the WRITE whose acknowledged held packet was not placed */
		if (c->held_fail_wr)
			SIM_CHECK(c->wr[c->held_fail_wr - 1].status !=
				  MRC_WC_SUCCESS, "qp %u: WR %u completed "
				  "successfully, but its held packet was never "
				  "placed", c->req.qpn, c->held_fail_wr - 1);
		/*
		 * Bytes written by a WR that did not complete successfully:
		 * unknown (IB: an error or flush completion does not say
		 * whether the remote memory was written). Not only those
		 * after the successful ones: after a fatal NAK a WR before
		 * the NAKed one that is not known complete -- a READ/atomic
		 * acknowledged but never answered -- is flushed while later
		 * complete WRs succeed (protocol.rst "Fatal NAK", step 2).
		 */
		for (k = 0; k < RC_NMR; k++)
			memset(c->mr[k].touched, 0, c->mr[k].len);
		for (k = 0; err && k < c->nwr; k++) {
			struct rc_wr *w = &c->wr[k];

			if (w->done && w->status == MRC_WC_SUCCESS)
				continue;
			if (w->kind == WR_WRITE || w->kind == WR_WRITE_IMM ||
			    w->kind == WR_CAS || w->kind == WR_FAA)
				memset(c->mr[w->mr].touched +
				       (w->va - c->mr[w->mr].va), 1, w->len);
		}
		for (k = 0; k < RC_NMR; k++) {
			struct rc_mr *m = &c->mr[k];

			for (b = 0; b < m->len; b++)
				if (!m->touched[b] && m->mem[b] != m->model[b])
					sim_fail("qp %u: MR %u byte %u (va %llx) is "
						 "%02x, the reference says %02x%s",
						 c->rsp.qpn, k, b,
						 (unsigned long long)(m->va + b),
						 m->mem[b], m->model[b],
						 err ? " (QP errored)" : "");
		}
		if (!err) {
			SIM_CHECK(c->rq_done == c->nrmsg,
				  "qp %u: %u receive completions, %u messages",
				  c->rsp.qpn, c->rq_done, c->nrmsg);
			SIM_CHECK(c->ok_wr == c->nwr, "qp %u: %u of %u WRs ok",
				  c->req.qpn, c->ok_wr, c->nwr);
		}
		/* the next life continues from what memory holds */
		for (k = 0; k < RC_NMR; k++)
			memcpy(c->mr[k].model, c->mr[k].mem, c->mr[k].len);
	}
}

void scn_rc(void)
{
	u32 nconn = rng_range(&W.rng, 1, RC_MAX_CONN), i, k, lives;
	u32 nwr = W.o->ops ? W.o->ops : rng_range(&W.rng, 20, 400);

	if (nwr > RC_MAX_WR)
		nwr = RC_MAX_WR;
	if (W.f.rnrdep && nconn < 2)
		nconn = 2;	/* a QP pair */
	rc_n = nconn;
	rc = calloc(rc_n, sizeof(*rc));
	if (!rc)
		abort();
	W.cleanup = rc_cleanup;
	W.rx = rc_rx;
	for (i = 0; i < rc_n; i++) {
		struct rc_conn *c = &rc[i];
		u32 a = rng_below(&W.rng, W.fab.nodes), b;

		do {
			b = rng_below(&W.rng, W.fab.nodes);
		} while (b == a);
		c->req.node = a;
		c->rsp.node = b;
		c->req.qpn = 200 + 2 * i;
		c->rsp.qpn = 201 + 2 * i;
		c->r = calloc(1, sizeof(*c->r));
		if (!c->r)
			abort();
		c->env.ops = &rc_env_ops;
		c->env.ctx = c;
		c->sq_depth = rng_range(&W.rng, 1, 64);
		/*
		 * "rnrhold": A's requests behind its RNR'd SEND stay few
		 * (8 WQEs of at most 4 packets) and B takes a receive each
		 * time one of its READs/atomics completes, so the window
		 * always has room for the responses B waits for
		 * (protocol.rst's known limitation is "rnrdep" without
		 * it): what is left to get right is sending them -- and
		 * resending the lost ones -- through RNR waits longer than
		 * a timeout, and finishing a message the wait cut into.
		 */
		if (W.f.rnrhold && i == 0 && c->sq_depth > 8)
			c->sq_depth = 8;
		c->rd_atomic = rng_range(&W.rng, 1, MRC_RSPQ_SLOTS);
		c->strict = W.o->strict;
		for (k = 0; k < MRC_TIMER_MAX; k++)
			timer_init(&c->etimer[k], rc_etimer_fn, &c->etimer[k]);
#ifdef SIM_HAVE_COMP
		/*
		 * The requester QP: the simulator's own, the core completer
		 * or the full engines, a third of the runs each (an invalid
		 * WQE needs the engines: it is the requester's sq_fetch).
		 */
		k = W.o->requester ? W.o->requester :
		    W.f.badwqe ? 3 : 1 + rng_below(&W.rng, 3);
		c->use_comp = k == 2;
#ifdef SIM_HAVE_REQ
		if (k == 3 && i == 1 && rc[0].fq[0] &&
		    (W.o->pair || W.f.rnrdep ||
		     (!W.o->requester && rng_below(&W.rng, 2)))) {
			/*
			 * The reverse direction over the same two QPs: both
			 * send requests and responses in one PSN space each.
			 */
			struct rc_conn *c0 = &rc[0];

			free(c->r);
			c->fq_borrowed = true;
			c->fq[0] = c0->fq[1];
			c->fq[1] = c0->fq[0];
			c0->fq[1]->creq = c;
			c0->fq[0]->crsp = c;
			c->r = c->fq[1]->r;
			c->req.node = c0->rsp.node;
			c->req.qpn = c0->rsp.qpn;
			c->rsp.node = c0->req.node;
			c->rsp.qpn = c0->req.qpn;
			COV(qp_bidir);
		} else if (k == 3) {
			free(c->r);
			c->fq[0] = fq_new(c, 0);
			c->fq[1] = fq_new(c, 1);
			c->r = c->fq[1]->r;
		}
#endif
		if (c->use_comp) {
			c->q = calloc(1, sizeof(*c->q));
			if (!c->q)
				abort();
			c->q->swq = calloc(CQ_NSWQ, CQ_SWQE_SIZE);
			if (!c->q->swq)
				abort();
			c->qenv.ops = &cq_env_ops;
			c->qenv.ctx = c;
			for (k = 0; k < MRC_TIMER_MAX; k++)
				timer_init(&c->qtimer[k], cq_timer_fn,
					   &c->qtimer[k]);
		}
#endif
		for (k = 0; k < RC_NMR; k++) {
			struct rc_mr *m = &c->mr[k];

			m->len = 8 * rng_range(&W.rng, 64, 1024);
			m->va = ((u64)(k + 1) << 32) + 8 * rng_below(&W.rng, 1024);
			m->rkey = (u32)rng_next(&W.rng) | 1;
			m->access = MRC_ACC_REMOTE_WRITE | MRC_ACC_REMOTE_READ |
				    MRC_ACC_REMOTE_ATOMIC;
			m->valid = true;
			m->mem = malloc(m->len);
			m->model = malloc(m->len);
			m->touched = malloc(m->len);
			if (!m->mem || !m->model || !m->touched)
				abort();
			rc_fill(m->mem, m->len);
		}
	}
	lives = W.f.reset ? 2 : 1;
	snprintf(W.what, sizeof(W.what),
		 "rc: %u qps x %u WRs x %u lives, mtu %u, %s%s requester, "
		 "faults %s%s%s%s%s%s%s%s%s%s", nconn, nwr, lives, ep_mtu,
		 rc[0].fq[0] ? "engines" : rc[0].use_comp ? "completer" :
		 "sim", rc_n < 2 ? "" : rc[1].fq[0] ? "+engines" :
		 rc[1].use_comp ? "+completer" : "+sim",
		 W.f.loss_ppm || W.f.burst_ppm ? "loss " : "",
		 W.f.reorder_ppm ? "reorder " : "", W.f.dup_ppm ? "dup " : "",
		 W.f.dereg ? "dereg " : "", W.f.vanish ? "vanish " : "",
		 W.f.qp_err ? "qperr " : "",
		 W.f.access ? "access " : "", W.f.badwqe ? "badwqe " : "",
		 W.f.rnrx ? "rnrx " : "",
		 W.f.rnrhold ? "rnrhold" : W.f.rnrdep ? "rnrdep" : "");
	W.step_check = rc_check;
	for (i = 0; i < lives; i++) {
		if (i) {
			COV(f_reset);
			W.reset_done = true;
			/*
			 * Unless "stale": the application resets once the old
			 * life's packets are gone. ("stale" keeps them in
			 * flight: finding 4, fixed.)
			 */
			if (!W.f.stale)
				fab_drop_inflight();
			for (k = 0; k < rc_n; k++) {
				rc[k].old_nxt_q = rc[k].req.sbp->nxt;
				rc[k].old_nxt_s = rc_rsp_sb(&rc[k])->nxt;
				rc_free_life(&rc[k]);
				rc[k].life++;
				for (u32 m = 0; m < RC_NMR; m++) {
					rc[k].mr[m].valid = true;
					rc[k].mr[m].gone = false;
				}
			}
		}
		rc_life(nwr);
	}
}

/* Coverage of the responder engine's states and transitions. */
void rc_coverage(void)
{
	/* every transition the engine's loop can take (responder.c) */
	static const u8 edges[][2] = {
		{ MRC_RESP_CHECK_ACCESS, MRC_RESP_NAK },
		{ MRC_RESP_CHECK_ACCESS, MRC_RESP_CLASSIFY },
		{ MRC_RESP_CLASSIFY, MRC_RESP_DISPATCH },
		{ MRC_RESP_CLASSIFY, MRC_RESP_ACK },
		{ MRC_RESP_DISPATCH, MRC_RESP_PLACE_SEND },
		{ MRC_RESP_DISPATCH, MRC_RESP_PLACE_WRITE },
		{ MRC_RESP_DISPATCH, MRC_RESP_QUEUE_RSP },
		{ MRC_RESP_DISPATCH, MRC_RESP_PLACE_RESP },
		{ MRC_RESP_DISPATCH, MRC_RESP_NAK },
		{ MRC_RESP_DISPATCH, MRC_RESP_COMMIT },	/* void (epoch) */
		{ MRC_RESP_DISPATCH, MRC_RESP_DONE },	/* cum_lo failed the QP */
		{ MRC_RESP_PLACE_SEND, MRC_RESP_COMMIT },
		{ MRC_RESP_PLACE_SEND, MRC_RESP_NAK },
		{ MRC_RESP_PLACE_SEND, MRC_RESP_ACK },
		{ MRC_RESP_PLACE_WRITE, MRC_RESP_COMMIT },
		{ MRC_RESP_PLACE_WRITE, MRC_RESP_HOLD },
		{ MRC_RESP_PLACE_WRITE, MRC_RESP_NAK },
		{ MRC_RESP_PLACE_WRITE, MRC_RESP_ACK },
		{ MRC_RESP_HOLD, MRC_RESP_COMMIT },
		{ MRC_RESP_HOLD, MRC_RESP_ACK },
		{ MRC_RESP_QUEUE_RSP, MRC_RESP_COMMIT },
		{ MRC_RESP_QUEUE_RSP, MRC_RESP_NAK },
		{ MRC_RESP_PLACE_RESP, MRC_RESP_COMMIT },
		{ MRC_RESP_PLACE_RESP, MRC_RESP_ACK },
		{ MRC_RESP_COMMIT, MRC_RESP_ACK },
		{ MRC_RESP_COMMIT, MRC_RESP_RUN_HELD },
		{ MRC_RESP_COMMIT, MRC_RESP_COMPLETE },
		{ MRC_RESP_RUN_HELD, MRC_RESP_COMPLETE },
		{ MRC_RESP_COMPLETE, MRC_RESP_NAK },
		{ MRC_RESP_COMPLETE, MRC_RESP_ACK },
		{ MRC_RESP_COMPLETE, MRC_RESP_DONE },	/* a late failure NAKed */
		{ MRC_RESP_NAK, MRC_RESP_COMMIT },	/* RNR refusal: void */
		{ MRC_RESP_NAK, MRC_RESP_DONE },
		{ MRC_RESP_ACK, MRC_RESP_DONE },
	};
	u32 i, j, n = 0;
	bool known;

	printf("responder engine transitions (from -> to: count):\n");
	for (i = 0; i < ARRAY_SIZE(edges); i++)
		printf("  %-13s -> %-13s %12llu\n",
		       mrc_resp_state_name(edges[i][0]),
		       mrc_resp_state_name(edges[i][1]),
		       (unsigned long long)rc_trans[edges[i][0]][edges[i][1]]);
	for (i = 0; i < MRC_RESP_NSTATES; i++)
		for (j = 0; j < MRC_RESP_NSTATES; j++) {
			if (!rc_trans[i][j])
				continue;
			known = false;
			for (n = 0; n < ARRAY_SIZE(edges); n++)
				if (edges[n][0] == i && edges[n][1] == j)
					known = true;
			if (!known)
				printf("  %-13s -> %-13s %12llu (not in the "
				       "table)\n", mrc_resp_state_name(i),
				       mrc_resp_state_name(j),
				       (unsigned long long)rc_trans[i][j]);
		}
	printf("responder transitions unreached:");
	for (n = 0, i = 0; i < ARRAY_SIZE(edges); i++)
		if (!rc_trans[edges[i][0]][edges[i][1]]) {
			printf(" %s->%s", mrc_resp_state_name(edges[i][0]),
			       mrc_resp_state_name(edges[i][1]));
			n++;
		}
	printf("%s\n", n ? "" : " none");
#ifdef SIM_HAVE_COMP
	creq_coverage();
#endif
#ifdef SIM_HAVE_REQ
	fq_coverage();
#endif
}

#else /* !SIM_HAVE_RESP */

void scn_rc(void)
{
	/* the responder engine is not in kernel/core yet */
	snprintf(W.what, sizeof(W.what), "rc: skipped (no core responder)");
	scn_stream();
}

void rc_coverage(void)
{
}

#endif
