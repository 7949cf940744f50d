/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metaroce verbs objects and the contract between them and the transport.
 *
 * Objects (mem.c, queue.c, cq.c, qp.c, srq.c, ah.c) own creation,
 * attributes, the mmap'd rings and memory translation. The transport
 * (transport.h: tx.c, rx.c, ...) owns everything on the wire and every
 * work completion. The split is:
 *
 *   verbs/objects                           transport
 *   -------------                           ---------
 *   create_qp          -> metaroce_tp_qp_init()
 *   modify_qp          -> metaroce_tp_qp_modify()   (after attrs applied)
 *   destroy_qp         -> metaroce_tp_qp_destroy()  (before rings freed)
 *   post_send (doorbell, kernel WRs) -> metaroce_tp_kick()
 *   UDP encap_rcv (net.c)            -> metaroce_tp_rx()
 *                      <- metaroce_mr_get/put/copy, metaroce_sgl_copy
 *                      <- metaroce_rq_pop (RQ or SRQ)
 *                      <- metaroce_cq_post
 *                      <- metaroce_ah_av_get/put
 *
 * Locking: the rings' consumer side is single-threaded per queue (the
 * transport serialises a QP's requester and responder work); producers
 * are user space or, for kernel QPs, the post_* verbs under the ring lock.
 * metaroce_cq_post() and metaroce_rq_pop() may be called from softirq.
 */
#ifndef METAROCE_OBJ_H
#define METAROCE_OBJ_H

#include <linux/spinlock.h>
#include <linux/refcount.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/seqlock.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>

#include "metaroce.h"

/* ------------------------------------------------------------- rings */

/*
 * A struct metaroce_queue ring (see include/uapi/rdma/metaroce-abi.h) in
 * vmalloc_user() memory, mmap'd into the owning process for user objects.
 */
struct metaroce_ring {
	struct metaroce_queue *q;	/* header; slots at +HDR_SIZE */
	size_t size;			/* whole allocation */
	u32 num_slots;			/* power of two */
	u32 slot_size;
	struct rdma_user_mmap_entry *mmap_entry;	/* NULL: kernel */
	spinlock_t lock;		/* kernel-side producer */
	/*
	 * Authoritative copies of the indices the kernel owns; q->producer
	 * or q->consumer is only ever written from these (user memory is
	 * never re-read for them). CQ: prod (metaroce_cq_post). RQ/SRQ:
	 * cons (metaroce_rq_pop); prod too for kernel queues. SQ: prod
	 * for kernel QPs (post_send); cons is free for the transport.
	 * A QP's rings (and their headers) are reset to 0 when it goes to
	 * RESET, after metaroce_tp_qp_modify() (which ends the transport's
	 * use of them) returns.
	 */
	u32 prod, cons;
};

int metaroce_ring_alloc(struct metaroce_ring *r, u32 min_slots,
			u32 slot_size);
void metaroce_ring_free(struct metaroce_ring *r);
/*
 * Move the memory, geometry and indices of @src into @dst and the old
 * ones of @dst into @src (locks stay in place); for resize. Caller holds
 * the locks of @dst.
 */
void metaroce_ring_swap(struct metaroce_ring *dst, struct metaroce_ring *src);
/* Create the mmap entry and fill @mi; user objects only. */
int metaroce_ring_export(struct metaroce_dev *mdev,
			 struct ib_ucontext *uctx, struct metaroce_ring *r,
			 struct metaroce_mmap_info *mi);

static inline void *metaroce_ring_slot(struct metaroce_ring *r, u32 idx)
{
	return (u8 *)r->q + METAROCE_QUEUE_HDR_SIZE +
	       (size_t)(idx & (r->num_slots - 1)) * r->slot_size;
}

/* --------------------------------------------------------------- MRs */

enum metaroce_mr_type {
	METAROCE_MR_DMA,	/* kernel virtual addresses, any length */
	METAROCE_MR_USER,	/* ib_umem */
	METAROCE_MR_FAST,	/* fast-register: page list set by REG_MR */
};

struct metaroce_mr {
	struct ib_mr ibmr;		/* lkey, rkey, iova, length, pd */
	/*
	 * The key lookups and invalidations match (lkey == rkey). Not
	 * ibmr.lkey: a consumer rewrites that itself, with
	 * ib_update_fast_reg_key(), before it posts the REG_MR that makes
	 * the new key valid -- often behind a LOCAL_INV of the old one. A
	 * FAST MR's key changes only when its REG_MR executes.
	 */
	u32 key;
	enum metaroce_mr_type type;
	int access;			/* IB_ACCESS_* */
	bool valid;			/* FAST: registered and not invalidated */
	refcount_t ref;			/* lookups in flight + 1 */
	struct completion done;		/* ref reached zero */
	struct ib_umem *umem;
	struct page **pages;		/* USER: one per PAGE_SIZE of umem */
	u64 *page_list;			/* FAST: kernel virtual page addrs */
	u32 npages, max_pages;
	u32 page_shift;			/* FAST: ib_mr page size shift */
	u64 umem_offset;		/* USER: iova -> offset in pages[] */
	u32 num_mw;			/* windows bound (mdev->mrs xa_lock) */
};

/*
 * Memory windows (ibv_alloc_mw): type 1 bound by ibv_bind_mw, type 2 by
 * IBV_WR_BIND_MW, both as a BIND_MW WQE the transport executes in SQ
 * order (metaroce_mem_local_wqe). A window shares the key space of the
 * MRs: its slot in mdev->mrs holds the pointer tagged METAROCE_XA_MW, and
 * a remote key lookup (metaroce_mr_get) that finds a window checks the
 * window's bounds and rights and returns the MR it is bound to. Binding
 * state is guarded by the mdev->mrs xa_lock. Documentation/protocol.rst,
 * "Memory windows".
 */
#define METAROCE_XA_MW		1

struct metaroce_mw {
	struct ib_mw ibmw;		/* rkey, pd, type */
	struct metaroce_mr *mr;		/* bound to; NULL: not bound */
	u64 addr, length;		/* the window (VA-based) */
	int access;			/* IB_ACCESS_REMOTE_* */
};

static inline struct metaroce_mw *to_mmw(struct ib_mw *m)
{
	return container_of(m, struct metaroce_mw, ibmw);
}


/*
 * Look up @key (an lkey, or an rkey when @remote) for an access of
 * [va, va + len) needing @access (IB_ACCESS_REMOTE_WRITE, _READ, _ATOMIC,
 * IB_ACCESS_LOCAL_WRITE, or 0 for a local read), checking that the MR
 * belongs to @pd and is valid. An rkey may also name a bound memory
 * window of @pd: its rights and bounds are checked instead of the MR's
 * and the MR it is bound to is returned. len 0 always matches. Returns a
 * referenced MR or an ERR_PTR: -ENOENT (no such key / wrong PD / invalid
 * or unbound), -EACCES (access flag missing), -ERANGE (out of bounds).
 */
struct metaroce_mr *metaroce_mr_get(struct metaroce_dev *mdev,
				    struct ib_pd *pd, u32 key, bool remote,
				    int access, u64 va, u64 len);
void metaroce_mr_put(struct metaroce_mr *mr);

enum metaroce_copy_dir {
	METAROCE_TO_MR,		/* buf -> MR */
	METAROCE_FROM_MR,	/* MR -> buf */
};

/* Copy between a range of @mr (already checked by _get) and @buf. */
void metaroce_mr_copy(struct metaroce_mr *mr, u64 va, void *buf, u32 len,
		      enum metaroce_copy_dir dir);
/* Copy @len bytes of @skb at @offset into @mr at @va. 0 or -EFAULT. */
int metaroce_mr_copy_from_skb(struct metaroce_mr *mr, u64 va,
			      const struct sk_buff *skb, u32 offset, u32 len);
/*
 * 8-byte atomic at @va (8-aligned, checked by caller): compare-and-swap
 * when @cmp_swap, else fetch-and-add. Returns the original value in
 * *orig. Serialised device-wide so all atomics are atomic to each other.
 */
void metaroce_mr_atomic(struct metaroce_mr *mr, u64 va, bool cmp_swap,
			u64 compare, u64 swap_add, u64 *orig);

/*
 * Fast-register work requests of kernel QPs. post_send stores, for
 * IB_WR_REG_MR (opcode METAROCE_WR_REG_MR, outside the uverbs range), a
 * struct metaroce_wqe_reg_mr in the WQE's wr.raw; for IB_WR_LOCAL_INV
 * (IB_UVERBS_WR_LOCAL_INV) the rkey to invalidate in ex_imm_data, as
 * user WQEs do. The transport executes them in SQ order (honouring
 * IB_SEND_FENCE like any WQE) with the two helpers below and completes
 * them with IB_WC_REG_MR / IB_WC_LOCAL_INV. User QPs can post neither
 * REG_MR (not in the uverbs opcode set) nor, unless the key belongs to a
 * fast-register MR of the QP's PD, LOCAL_INV.
 */
#define METAROCE_WR_REG_MR	IB_WR_REG_MR

struct metaroce_wqe_reg_mr {
	u64 mr;			/* struct ib_mr * of an alloc_mr() MR */
	u32 key;		/* new lkey == rkey (same index, new 8 bits) */
	u32 access;		/* IB_ACCESS_* */
};

/*
 * Make fast-register MR @ibmr valid with @key and @access. -EINVAL if
 * @ibmr is not a fast-register MR of @pd, the index of @key differs or
 * @access is invalid (REMOTE_WRITE/ATOMIC without LOCAL_WRITE).
 */
int metaroce_mr_fast_reg(struct metaroce_dev *mdev, struct ib_pd *pd,
			 struct ib_mr *ibmr, u32 key, int access);
/*
 * Invalidate the fast-register MR or the bound type-2 memory window with
 * key @key in @pd (LOCAL_INV and SEND_WITH_INV). 0, or -EINVAL if there
 * is no such fast-register MR or window.
 */
int metaroce_mr_invalidate(struct metaroce_dev *mdev, struct ib_pd *pd,
			   u32 key);
/* Would metaroce_mr_invalidate() succeed? (SEND_WITH_INV at its first packet) */
int metaroce_mr_check_invalidate(struct metaroce_dev *mdev, struct ib_pd *pd,
				 u32 key);

/* Work requests executed locally, without a packet of their own. */
static inline bool metaroce_wr_is_local(u32 opcode)
{
	return opcode == METAROCE_WR_REG_MR ||
	       opcode == IB_UVERBS_WR_LOCAL_INV ||
	       opcode == IB_UVERBS_WR_BIND_MW;
}

struct metaroce_qp;
/*
 * Execute a local WQE of @qp in SQ order: REG_MR (@remote_addr the
 * struct ib_mr *, @rkey the new key, @compare_add the access), LOCAL_INV
 * (@imm the key: a fast-register MR or a type-2 window) or BIND_MW (the
 * user WQE layout of include/uapi/rdma/metaroce-abi.h: @imm the window's
 * new rkey, @rkey the MR's lkey, @remote_addr the address, @compare_add
 * the length, @swap the access). Returns the completion status.
 */
enum ib_wc_status metaroce_mem_local_wqe(struct metaroce_qp *qp, u32 opcode,
					 u32 imm, u32 rkey, u64 remote_addr,
					 u64 compare_add, u64 swap);

/*
 * Copy @len bytes at byte @offset of the message described by a local
 * SGE list (lkeys of @pd) to/from @buf (or from @skb at @skb_off when
 * @skb is non-NULL, direction METAROCE_TO_MR). TO_MR needs
 * IB_ACCESS_LOCAL_WRITE. Returns 0, -EINVAL (offset + len beyond the
 * SGEs' total), or the metaroce_mr_get() error of a bad lkey.
 */
int metaroce_sgl_copy(struct metaroce_dev *mdev, struct ib_pd *pd,
		      const struct metaroce_sge *sge, u32 num_sge,
		      u64 offset, void *buf, const struct sk_buff *skb,
		      u32 skb_off, u32 len, enum metaroce_copy_dir dir);

/* --------------------------------------------------------------- CQs */

/*
 * struct metaroce_cqe fields as the transport fills them, for user and
 * kernel CQs alike: status is enum ib_wc_status (== ibv_wc_status),
 * opcode enum ib_wc_opcode (== ibv_wc_opcode; IB_WC_REG_MR only on
 * kernel QPs), ex_imm_data the immediate (network order) or the
 * invalidated rkey, and wc_flags uses the ibv_wc_flags numbering below
 * (poll_cq converts it to ib_wc_flags for kernel consumers).
 */
#define METAROCE_WC_GRH		(1U << 0)
#define METAROCE_WC_WITH_IMM	(1U << 1)
#define METAROCE_WC_IP_CSUM_OK	(1U << 2)
#define METAROCE_WC_WITH_INV	(1U << 3)
/*
 * Kernel CQs only (never in a user CQE): the network header of a UD/GSI
 * receive, for wc->network_hdr_type (ib_core's CM builds the reply AH
 * from it).
 */
#define METAROCE_WC_NET_IPV4	(1U << 6)
#define METAROCE_WC_NET_IPV6	(1U << 7)
/* Kernel CQs only: a UD/GSI receive came in on a VLAN, its id in slid */
#define METAROCE_WC_VLAN	(1U << 4)
/* ... which a user CQE carries in sl instead (mlx5's numbering) */
#define METAROCE_SL_NET_IPV6	1
#define METAROCE_SL_NET_IPV4	2

struct metaroce_cq {
	struct ib_cq ibcq;
	struct metaroce_ring ring;	/* slots are struct metaroce_cqe */
	spinlock_t lock;		/* producer side */
	u8 notify;			/* IB_CQ_SOLICITED / NEXT_COMP / 0 */
	bool overflow;
	bool is_user;
};

/*
 * Append a completion. On a full CQ, sets overflow, raises
 * IB_EVENT_CQ_ERR once and returns -ENOSPC. Fires comp_handler per the
 * armed notify mode (@solicited for IB_CQ_SOLICITED).
 */
int metaroce_cq_post(struct metaroce_cq *cq, const struct metaroce_cqe *cqe,
		     bool solicited);
/* Drop QP @qpn's completions from a kernel CQ (destroy_qp). */
void metaroce_cq_clean(struct metaroce_cq *cq, u32 qpn);

/* -------------------------------------------------------- SRQs, RQs */

struct metaroce_srq {
	struct ib_srq ibsrq;
	struct metaroce_ring ring;	/* slots are struct metaroce_recv_wqe */
	spinlock_t lock;		/* consumer side */
	u32 max_wr, max_sge;
	u32 limit;			/* armed srq_limit, 0 = disarmed */
	u32 srq_num;
	bool is_user;
	bool error;			/* ring corrupt: SRQ_ERR raised, no WQEs */
};

/* A validated kernel copy of a receive WQE. */
struct metaroce_rwqe {
	u64 wr_id;
	u32 num_sge;
	u64 length;			/* sum of sge lengths */
	struct metaroce_sge sge[METAROCE_MAX_SGE];
};

/* ---------------------------------------------------------- AH, AV */

/* Where packets of a QP or AH go: IP endpoints from the GIDs. */
struct metaroce_av {
	int family;			/* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} saddr, daddr;
	u8 tos;				/* traffic_class (DSCP|ECN bits) */
	u8 ttl;				/* hop_limit, 0 = default */
	u32 flow_label;
	u8 sgid_index;
	union ib_gid dgid;		/* as given, for query and GRH */
};

/*
 * An AH's AV as its packets see it, apart from the AH: each UD packet
 * holds a reference from its build to its transmission, the AH one until
 * destroy_ah. destroy_ah therefore never waits for a packet: it may be
 * called where it cannot sleep, even from a softirq that interrupted the
 * very context that is sending them (a ULP's completion handler).
 */
struct metaroce_ah_av {
	refcount_t ref;
	struct metaroce_av av;		/* never changes */
};

struct metaroce_ah {
	struct ib_ah ibah;
	struct metaroce_ah_av *av;	/* referenced until destroy_ah */
	u32 ah_num;			/* index in mdev->ahs, never 0 */
};

/* Fill @av from an rdma_ah_attr (GRH required). 0 or -EINVAL. */
int metaroce_av_from_attr(struct metaroce_dev *mdev, struct metaroce_av *av,
			  const struct rdma_ah_attr *attr);
void metaroce_av_to_attr(const struct metaroce_av *av,
			 struct rdma_ah_attr *attr);

/*
 * The referenced AV of AH @ah_num (UD WQEs) if that AH exists and belongs
 * to @pd, else NULL. The reference outlives the AH if need be.
 */
struct metaroce_ah_av *metaroce_ah_av_get(struct metaroce_dev *mdev,
					  struct ib_pd *pd, u32 ah_num);
void metaroce_ah_av_put(struct metaroce_ah_av *av);

/* --------------------------------------------------------------- QPs */

#include "transport.h"

struct metaroce_qp {
	struct ib_qp ibqp;		/* qp_num, qp_type, pd, cqs, srq */
	struct metaroce_dev *mdev;
	refcount_t ref;			/* lookups in flight + 1 */
	struct completion done;
	bool is_user;

	/* Serialises modify_qp calls (and their metaroce_tp_qp_modify). */
	struct mutex modify_mutex;
	/* Guards state and the attributes below against modify_qp. */
	spinlock_t state_lock;
	/* Around every write of av (under state_lock): metaroce_qp_av_read() */
	seqcount_spinlock_t av_seq;
	enum ib_qp_state state;
	/*
	 * SQD: sq_draining until every message started before it completed
	 * (metaroce_qp_sq_drained); sqd_notify: the transition asked for
	 * IB_EVENT_SQ_DRAINED; sqd_gen counts the entries into SQD, so that
	 * a report of an earlier one is told apart.
	 */
	bool sq_draining;
	bool sqd_notify;
	u32 sqd_gen;

	/* Attributes (valid from the state that sets them). */
	u32 qkey;
	u32 dest_qpn;
	u32 rq_psn, sq_psn;
	enum ib_mtu path_mtu;
	u32 mtu;			/* path MTU in bytes */
	u8 timeout;			/* IB local ack timeout exponent */
	u8 retry_cnt, rnr_retry, min_rnr_timer;
	u8 max_rd_atomic, max_dest_rd_atomic;
	int qp_access_flags;
	u16 pkey_index;
	u8 port_num;
	bool sq_sig_all;
	/*
	 * RC/UC: the peer. Written only by modify_qp (metaroce_qp_apply:
	 * under modify_mutex and state_lock, inside av_seq), while the data
	 * path runs without state_lock: receive (the peer check, under the
	 * transport lock) and transmit (the txq owner, under no lock) take a
	 * whole copy with metaroce_qp_av_read(). Only the modify path,
	 * serialised with the writer by modify_mutex, reads it in place.
	 * design.rst "Execution model".
	 */
	struct metaroce_av av;
	struct rdma_ah_attr ah_attr;	/* as given, for query_qp */

	/* Queues. */
	struct metaroce_ring sq;	/* slots: struct metaroce_send_wqe */
	struct metaroce_ring rq;	/* absent (q NULL) with an SRQ */
	spinlock_t rq_lock;		/* consumer side of rq */
	u32 max_send_wr, max_send_sge, max_inline;
	u32 max_recv_wr, max_recv_sge;

	/* Transport state, owned by the transport. */
	struct metaroce_tp tp;
};

static inline struct metaroce_qp *to_mqp(struct ib_qp *q)
{
	return container_of(q, struct metaroce_qp, ibqp);
}

static inline struct metaroce_cq *to_mcq(struct ib_cq *c)
{
	return container_of(c, struct metaroce_cq, ibcq);
}

static inline struct metaroce_srq *to_msrq(struct ib_srq *s)
{
	return container_of(s, struct metaroce_srq, ibsrq);
}

/*
 * The PD a receive WQE of @qp names memory of: its SRQ's when it takes
 * its receives from one (the WQE was posted under that PD, whichever QP
 * consumes it), else its own.
 */
static inline struct ib_pd *metaroce_rq_pd(struct metaroce_qp *qp)
{
	return qp->ibqp.srq ? qp->ibqp.srq->pd : qp->ibqp.pd;
}

static inline struct metaroce_mr *to_mmr(struct ib_mr *m)
{
	return container_of(m, struct metaroce_mr, ibmr);
}

static inline struct metaroce_ah *to_mah(struct ib_ah *a)
{
	return container_of(a, struct metaroce_ah, ibah);
}

/*
 * A whole copy of @qp's address vector into @av, never half of an old and
 * half of a new one: modify_qp may replace it at any time (INIT -> RTR,
 * SQD -> SQD). Any context, no lock needed; retries while a write is in
 * progress (the writer holds state_lock with interrupts off, so it is
 * never preempted by a reader on its own CPU). Returns the sequence of
 * the copy, which changes with every AV applied (the route cache's
 * generation, xmit.c).
 */
static inline unsigned int metaroce_qp_av_read(struct metaroce_qp *qp,
					       struct metaroce_av *av)
{
	unsigned int seq;

	do {
		seq = read_seqcount_begin(&qp->av_seq);
		*av = qp->av;
	} while (read_seqcount_retry(&qp->av_seq, seq));
	return seq;
}

/*
 * Referenced QP by number, or NULL (also NULL while being destroyed).
 *
 * destroy_qp: unpublishes the QPN (metaroce_qp_get() fails from then
 * on), drops its own reference and waits until every reference is put,
 * then calls metaroce_tp_qp_destroy() and only then frees the rings.
 * The transport's own timers and work must not hold metaroce_qp_get()
 * references across metaroce_tp_qp_destroy() (it stops them).
 */
struct metaroce_qp *metaroce_qp_get(struct metaroce_dev *mdev, u32 qpn);
void metaroce_qp_put(struct metaroce_qp *qp);

/*
 * Take the next receive WQE of @qp (its SRQ if it has one) into @out.
 * Returns 0, -EAGAIN when empty (RNR), -EINVAL for a corrupt user WQE
 * (num_sge beyond max_sge; the slot is consumed, @out holds its wr_id and
 * no SGE), -EIO when user space put the producer index beyond the ring
 * (or behind the consumer): nothing is taken, ever again from an SRQ
 * (which then raises IB_EVENT_SRQ_ERR, once), and the caller moves the
 * QP to ERR with IB_EVENT_QP_FATAL. Raises IB_EVENT_SRQ_LIMIT_REACHED
 * when an armed SRQ drops below its limit. A caller that loops over it
 * bounds the loop itself (user space may keep refilling the ring).
 */
int metaroce_rq_pop(struct metaroce_qp *qp, struct metaroce_rwqe *out);

/* Raise affiliated event @type to @qp's consumer (no lock held). */
void metaroce_qp_event(struct metaroce_qp *qp, enum ib_event_type type);

/*
 * Move @qp to ERR on a fatal transport error, raising @event (an
 * affiliated QP event; 0 for none) if the QP was not in ERR already.
 * Ignored in RESET and INIT (the error is of an earlier life). Any
 * context. It does NOT call metaroce_tp_qp_modify(): the transport (the
 * only caller) flushes on its own.
 */
void metaroce_qp_error(struct metaroce_qp *qp, enum ib_event_type event);
void metaroce_qp_sq_drained(struct metaroce_qp *qp, u32 gen);

#endif /* METAROCE_OBJ_H */
