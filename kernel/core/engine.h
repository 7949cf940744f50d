/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The environment of the transport engines (responder.h, completer.h,
 * requester.h): what an engine needs from the world around it.
 *
 * An engine is plain C: no ib_core, netdev, skb, allocation, locking or
 * clock of its own. It is driven by a few inputs -- "WQE posted",
 * "packet received" (a parsed struct mrc_pkt plus an opaque handle of the
 * packet the payload lives in), "timer fired" -- and acts only through
 * the callbacks of struct mrc_env_ops, supplied by the environment: the
 * kernel adapter (kernel/resp.c, comp.c, tx.c: skbs, MRs, CQs, hrtimers)
 * or the deterministic simulator (selftests/sim/). Every entry point takes
 * a struct mrc_env, which carries the ops table and the caller's context
 * for this call; the environment serialises all calls of one QP (the
 * kernel holds the QP lock) and callbacks never re-enter the engine.
 *
 * The values of the status, opcode, flag and access constants below are
 * those of ib_core / ibverbs (the kernel adapter checks it at build time),
 * so they pass through unchanged.
 */
#ifndef MRC_ENGINE_H
#define MRC_ENGINE_H

#include "mrc_types.h"
#include "hdr.h"

struct mrc_swqe;
struct mrc_sb_ack_res;

/* Work completion status (== enum ib_wc_status). */
enum mrc_wc_status {
	MRC_WC_SUCCESS = 0,
	MRC_WC_LOC_LEN_ERR = 1,
	MRC_WC_LOC_QP_OP_ERR = 2,
	MRC_WC_LOC_PROT_ERR = 4,
	MRC_WC_WR_FLUSH_ERR = 5,
	MRC_WC_MW_BIND_ERR = 6,
	MRC_WC_REM_INV_REQ_ERR = 9,
	MRC_WC_REM_ACCESS_ERR = 10,
	MRC_WC_REM_OP_ERR = 11,
	MRC_WC_RETRY_EXC_ERR = 12,
	MRC_WC_RNR_RETRY_EXC_ERR = 13,
};

/* Receive completion opcodes (== IB_WC_RECV, IB_WC_RECV_RDMA_WITH_IMM). */
#define MRC_WC_RECV			128
#define MRC_WC_RECV_RDMA_WITH_IMM	129

/* Completion flags (== METAROCE_WC_*, the ibv_wc_flags numbering). */
#define MRC_WCF_WITH_IMM	(1U << 1)
#define MRC_WCF_WITH_INV	(1U << 3)

/* Access rights of an MR / the QP (== IB_ACCESS_*). */
#define MRC_ACC_LOCAL_WRITE	(1U << 0)
#define MRC_ACC_REMOTE_WRITE	(1U << 1)
#define MRC_ACC_REMOTE_READ	(1U << 2)
#define MRC_ACC_REMOTE_ATOMIC	(1U << 3)

/* Asynchronous event of a QP that goes to ERR (struct mrc_env_ops.qp_error). */
enum mrc_qp_event {
	MRC_QPE_KEEP = 0,	/* the event given before, else QP_FATAL */
	MRC_QPE_FATAL,		/* IB_EVENT_QP_FATAL */
	MRC_QPE_REQ_ERR,	/* IB_EVENT_QP_REQ_ERR */
	MRC_QPE_ACCESS_ERR,	/* IB_EVENT_QP_ACCESS_ERR */
};

/* Timers an engine arms through the environment. */
enum mrc_timer {
	MRC_TIMER_ACK = 0,	/* delayed ACK (responder) */
	MRC_TIMER_RTO,		/* retransmission / tail-loss probe / response wait */
	MRC_TIMER_RNR,		/* RNR back-off */
	MRC_TIMER_MAX
};

/* Results of struct mrc_env_ops.rq_pop. */
enum mrc_rq_res {
	MRC_RQ_OK = 0,		/* a WQE was taken */
	MRC_RQ_EMPTY,		/* none posted: RNR */
	MRC_RQ_CORRUPT,		/* ring corrupted by user space: QP fatal */
	MRC_RQ_BAD,		/* a WQE was taken but is invalid */
};

/* Results of the copy callbacks. */
enum mrc_copy_res {
	MRC_COPY_OK = 0,
	MRC_COPY_LEN,		/* beyond the WQE's scatter list */
	MRC_COPY_PROT,		/* bad lkey / MR went away */
};

/* Counters an engine reports (struct mrc_env_ops.count). */
enum mrc_counter {
	MRC_CNT_DUPLICATE = 0,	/* sequenced, already received */
	MRC_CNT_OUT_OF_ORDER,	/* new, psn != cumulative */
	MRC_CNT_OUT_OF_WINDOW,
	MRC_CNT_ECN_MARKED,	/* CE received */
	MRC_CNT_ECN_ECHOED,	/* CE reported back by the peer */
	MRC_CNT_PATH_REPLACED,	/* blackholed path re-ported */
	MRC_CNT_RNR_NAK_RCVD,
	MRC_CNT_NAK_RCVD,
	MRC_CNT_RETRY_EXC,	/* WQEs failed RETRY_EXC_ERR */
	MRC_CNT_SPURIOUS_RETX,	/* retransmissions found unnecessary */
	MRC_CNT_SPURIOUS_RTO,	/* timeouts undone */
	MRC_CNT_RTO,		/* timeouts that marked loss */
	MRC_CNT_UC_DROP,	/* UC messages dropped (lost, refused) */
	MRC_CNT_VOIDED,		/* requests voided by an RNR refusal */
	MRC_CNT_MAX
};

/* Engines, for struct mrc_env_ops.transition. */
enum mrc_engine_id {
	MRC_ENG_RESP = 0,
	MRC_ENG_COMP,
	MRC_ENG_REQ,
};

/*
 * Where payload bytes come from: @buf + @off when @buf is set (linear
 * memory), else byte @off of the environment's packet @pkt (the handle
 * the environment passed with the received packet; the kernel's skb).
 */
struct mrc_src {
	const void *pkt;
	const void *buf;
	u32 off;
};

/* A receive completion (struct mrc_env_ops.post_rcqe). */
struct mrc_rcqe {
	u64 wr_id;
	u32 slot;		/* the receive WQE's slot (rq_pop) */
	u32 byte_len;
	u32 imm;		/* network order, or the invalidated rkey */
	u8 status;		/* enum mrc_wc_status */
	u8 opcode;		/* MRC_WC_RECV* */
	u8 wc_flags;		/* MRC_WCF_* (0 unless SUCCESS) */
	u8 solicited;		/* SUCCESS and solicited: notify */
};

/* emit() flags */
#define MRC_EMIT_ECT	0x1	/* send ECT(0): sequenced data packets */

struct mrc_env_ops {
	/* the clock, microseconds, monotonic */
	u64 (*now_us)(void *ctx);

	/*
	 * Send packet @p (headers; p->path_id says which path, the
	 * environment maps it to a UDP source port) with p->payload_len
	 * bytes from @payload (NULL when empty).
	 */
	void (*emit)(void *ctx, const struct mrc_pkt *p,
		     const struct mrc_src *payload, unsigned int flags);
	/* A packet the engine held (MRC_RESP_HELD) is no longer needed. */
	void (*release)(void *ctx, const void *pkt);

	/*
	 * Memory regions. mr_get: look up key @key (an rkey if @remote,
	 * else an lkey) of the QP's PD and check @access over
	 * [va, va + len): a handle, or NULL when the key, range or access is
	 * bad. The handle is valid until mr_put (within the same call).
	 */
	void *(*mr_get)(void *ctx, u32 key, bool remote, u32 access, u64 va,
			u64 len);
	void (*mr_put)(void *ctx, void *mr);
	/* Copy @len bytes from @src to [va, va + len) of @mr: MRC_COPY_*. */
	int (*mr_write)(void *ctx, void *mr, u64 va, const struct mrc_src *src,
			u32 len);
	/* Execute an 8-byte atomic at @va of @mr; *orig: the old value. */
	void (*mr_atomic)(void *ctx, void *mr, u64 va, bool cmp_swap,
			  u64 compare, u64 swap_add, u64 *orig);
	/*
	 * SEND_WITH_INV: invalidate rkey @rkey (@check_only: would it
	 * succeed?). 0 or non-zero.
	 */
	int (*mr_invalidate)(void *ctx, u32 rkey, bool check_only);
	/*
	 * Optional. Where @va of @mr lies in memory, for write order
	 * (worder.h): a space and an address in it, the same for every key
	 * that reaches the byte (a buffer registered twice, a window and its
	 * MR), linear within one packet's range. Without it, the key and
	 * @va stand for the memory.
	 */
	void (*mr_canon)(void *ctx, void *mr, u64 va, u32 *space, u64 *cva);

	/*
	 * Receive queue. rq_pop: take the next posted receive WQE into the
	 * environment's slot @slot (< MRC_RSLOTS; the engine reuses a slot
	 * only after posting its completion): enum mrc_rq_res, and its wr_id
	 * and total length. rq_copy: copy @len bytes from @src to byte
	 * @offset of the WQE in @slot (its scatter list, lkeys checked):
	 * MRC_COPY_*.
	 */
	int (*rq_pop)(void *ctx, u32 slot, u64 *wr_id, u64 *length);
	int (*rq_copy)(void *ctx, u32 slot, u64 offset,
		       const struct mrc_src *src, u32 len);
	/* Post a receive completion; non-zero: the CQ overflowed. */
	int (*post_rcqe)(void *ctx, const struct mrc_rcqe *c);

	/*
	 * The QP must go to ERR with @event (enum mrc_qp_event; MRC_QPE_KEEP
	 * keeps an event given earlier). The environment also sets the
	 * send side's mrc_req.failed (the completer stops completing). The environment moves the QP when
	 * the call returns and then calls the engines' flush.
	 */
	void (*qp_error)(void *ctx, u8 event);

	/*
	 * Timers (enum mrc_timer): arm (re-arm) in @us, cancel, pending?
	 * MRC_TIMER_RTO is the requester's (mrc_req_rto_set()): it is
	 * never cancelled, and when it fires the environment asks
	 * mrc_req_rto_fired() whether it is due.
	 */
	void (*timer_arm)(void *ctx, u8 timer, u32 us);
	void (*timer_cancel)(void *ctx, u8 timer);
	bool (*timer_pending)(void *ctx, u8 timer);

	/*
	 * Send queue. post_scqe: post the send completion of @w with
	 * @status (the environment knows its verbs opcode); non-zero: the
	 * CQ overflowed. sq_consumed: WQEs before @tail are done (the ring
	 * slot may be reused). sq_copy: copy @len bytes from @src to byte
	 * @offset of @w's local scatter list (READ/atomic response):
	 * MRC_COPY_*.
	 */
	int (*post_scqe)(void *ctx, const struct mrc_swqe *w, u8 status);
	void (*sq_consumed)(void *ctx, u32 tail);
	int (*sq_copy)(void *ctx, const struct mrc_swqe *w, u64 offset,
		       const struct mrc_src *src, u32 len);
	/*
	 * sq_fetch: "WQE posted" -- take newly posted WQEs into the ring of
	 * struct mrc_swqe (mrc_req.sq_head advances; a bad one gets an error
	 * status). local_op: execute a local operation WQE (fast register,
	 * local invalidate), setting w->status on failure.
	 */
	void (*sq_fetch)(void *ctx);
	void (*local_op)(void *ctx, struct mrc_swqe *w);

	/* Optional (may be NULL): statistics and state coverage. */
	void (*count)(void *ctx, u8 counter, u32 n);
	void (*transition)(void *ctx, u8 engine, u8 from, u8 to);
	/* Optional: tracing an ACK applied, a path given a new port. */
	void (*trace_ack)(void *ctx, const struct mrc_ack_info *a,
			  const struct mrc_sb_ack_res *res, u32 una, u32 nxt,
			  u32 ce);
	void (*trace_path)(void *ctx, u32 path, u16 old_sport, u16 sport);
	void (*trace_timer)(void *ctx, bool tlp, u32 una, u32 nxt,
			    u32 retries);
	/*
	 * Optional: the retransmission timer was set to expire in @us, a
	 * tail-loss probe if @tlp (mrc_req_rto_set(); the environment's
	 * MRC_TIMER_RTO may stay armed for an earlier time).
	 */
	void (*trace_rto)(void *ctx, bool tlp, u32 us);

	/*
	 * The responses to this QP's own READs/atomics arrive in the
	 * incoming PSN space, and the responder hands them on. comp_resp:
	 * place response @p (payload at @src) and commit its PSN; 0, or
	 * MRC_COMP_ACK_NOW: it completed the last READ/atomic awaited
	 * (version 1 acknowledged it at once; version 2 leaves that ACK to
	 * the next request, protocol.rst "ACK policy"), | MRC_COMP_FAILED:
	 * it failed the QP (nothing after its PSN completes).
	 * comp_progress: a response was committed (complete WQEs, and the
	 * requester may go on).
	 */
	int (*comp_resp)(void *ctx, const struct mrc_pkt *p,
			 const struct mrc_src *src);
	void (*comp_progress)(void *ctx);
	/*
	 * A new sequenced packet carried the peer's cumulative ACK of our
	 * PSN space (MRC_F_CUMACK, @cum_lo its low 16 bits): apply it
	 * (mrc_comp_cum()). True if that failed the QP (a WQE it completed
	 * had a local error): the packet is then dropped. May be NULL (the
	 * field is ignored).
	 */
	bool (*comp_cum)(void *ctx, u16 cum_lo);
};

struct mrc_env {
	const struct mrc_env_ops *ops;
	void *ctx;
};

#endif /* MRC_ENGINE_H */
