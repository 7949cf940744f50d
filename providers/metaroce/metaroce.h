/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * metaroce user space provider: private types and the mmap'd ring helpers.
 *
 * Every fast-path queue (CQ, RQ, SRQ, SQ) is a struct metaroce_queue header
 * page followed by num_slots slots, shared with metaroce.ko. Indices are
 * free-running 32-bit counters (see include/uapi/rdma/metaroce-abi.h).
 */

#ifndef METAROCE_H
#define METAROCE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/metaroce-abi.h>
#include <kernel-abi/metaroce-abi.h>

DECLARE_DRV_CMD(umetaroce_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, metaroce_alloc_context_resp);
DECLARE_DRV_CMD(umetaroce_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		empty, metaroce_create_cq_resp);
DECLARE_DRV_CMD(umetaroce_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		empty, metaroce_create_cq_resp);
DECLARE_DRV_CMD(umetaroce_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		metaroce_resize_cq_cmd, empty);
DECLARE_DRV_CMD(umetaroce_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		empty, metaroce_create_qp_resp);
DECLARE_DRV_CMD(umetaroce_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		empty, metaroce_create_srq_resp);
DECLARE_DRV_CMD(umetaroce_modify_srq, IB_USER_VERBS_CMD_MODIFY_SRQ,
		metaroce_modify_srq_cmd, empty);
DECLARE_DRV_CMD(umetaroce_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, metaroce_create_ah_resp);

/*
 * One mapped queue. num_slots and slot_size are copied from the header
 * (where the kernel put them) and validated once, when the ring is mapped.
 */
struct metaroce_ring {
	struct metaroce_queue	*hdr;		/* start of the mapping */
	uint8_t			*slots;		/* hdr + METAROCE_QUEUE_HDR_SIZE */
	size_t			map_size;
	uint32_t		num_slots;	/* power of two */
	uint32_t		slot_size;
};

struct metaroce_device {
	struct verbs_device	ibv_dev;
	int			abi_version;
};

struct metaroce_context {
	struct verbs_context	ibv_ctx;
	uint32_t		caps;
	uint32_t		max_inline_data;
};

struct metaroce_cq {
	struct verbs_cq		vcq;
	struct metaroce_ring	ring;
	pthread_spinlock_t	lock;
	/* cq_ex polling: between start_poll and end_poll (lock held) */
	const struct metaroce_cqe *cur;	/* the entry read_* report */
	uint32_t		cur_idx;	/* its index */
	uint32_t		poll_end;	/* producer index seen */
};

/* A work queue the provider produces into: SQ, RQ or SRQ. */
struct metaroce_wq {
	struct metaroce_ring	ring;
	pthread_spinlock_t	lock;
	uint32_t		max_sge;
	uint32_t		max_inline;
};

struct metaroce_qp {
	struct verbs_qp		vqp;
	struct metaroce_wq	sq;
	struct metaroce_wq	rq;	/* ring.hdr NULL when on an SRQ */
	/* ibv_wr_* batch: between wr_start and wr_complete/abort (sq.lock) */
	struct metaroce_send_wqe *wr_cur;	/* the WQE set_* fill */
	uint32_t		wr_prod;	/* producer index at wr_start */
	uint32_t		wr_room;	/* free slots at wr_start */
	uint32_t		wr_n;		/* WQEs built */
	int			wr_err;		/* first error, fails complete */
};

struct metaroce_srq {
	struct verbs_srq	vsrq;
	struct metaroce_wq	rq;
	uint32_t		srq_num;
};

struct metaroce_ah {
	struct ibv_ah		ibv_ah;
	uint32_t		ah_num;
};

static inline struct metaroce_device *to_mdev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct metaroce_device, ibv_dev.device);
}

static inline struct metaroce_context *to_mctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct metaroce_context, ibv_ctx.context);
}

static inline struct metaroce_cq *to_mcq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct metaroce_cq, vcq.cq);
}

static inline struct metaroce_qp *to_mqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct metaroce_qp, vqp.qp);
}

static inline struct metaroce_srq *to_msrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct metaroce_srq, vsrq.srq);
}

static inline struct metaroce_ah *to_mah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct metaroce_ah, ibv_ah);
}

/*
 * Ring index helpers. Each side writes only its own index; the owner of
 * an index may read it relaxed, the other side's index is read with
 * acquire and an own index is published with release. Callers hold the
 * queue's spinlock, which orders user space threads among themselves.
 */
typedef _Atomic(uint32_t) metaroce_atomic_u32;

static inline metaroce_atomic_u32 *metaroce_prod_ptr(struct metaroce_ring *r)
{
	return (metaroce_atomic_u32 *)&r->hdr->producer;
}

static inline metaroce_atomic_u32 *metaroce_cons_ptr(struct metaroce_ring *r)
{
	return (metaroce_atomic_u32 *)&r->hdr->consumer;
}

static inline void *metaroce_ring_slot(struct metaroce_ring *r, uint32_t idx)
{
	return r->slots + (size_t)(idx & (r->num_slots - 1)) * r->slot_size;
}

/*
 * Producer side (SQ, RQ, SRQ): returns the current producer index and
 * stores in *room how many slots are free.
 */
static inline uint32_t metaroce_prod_begin(struct metaroce_ring *r,
					   uint32_t *room)
{
	uint32_t prod, cons, used;

	prod = atomic_load_explicit(metaroce_prod_ptr(r), memory_order_relaxed);
	cons = atomic_load_explicit(metaroce_cons_ptr(r), memory_order_acquire);
	used = prod - cons;
	*room = used >= r->num_slots ? 0 : r->num_slots - used;

	return prod;
}

/* Publish the slots written up to (not including) index prod. */
static inline void metaroce_prod_commit(struct metaroce_ring *r, uint32_t prod)
{
	atomic_store_explicit(metaroce_prod_ptr(r), prod, memory_order_release);
}

/*
 * Consumer side (CQ): returns the consumer index and stores in *avail how
 * many slots the kernel has filled and published.
 */
static inline uint32_t metaroce_cons_begin(struct metaroce_ring *r,
					   uint32_t *avail)
{
	uint32_t prod, cons;

	cons = atomic_load_explicit(metaroce_cons_ptr(r), memory_order_relaxed);
	prod = atomic_load_explicit(metaroce_prod_ptr(r), memory_order_acquire);
	*avail = prod - cons;
	if (*avail > r->num_slots)	/* never trust a count past the ring */
		*avail = r->num_slots;

	return cons;
}

/* Hand the slots consumed up to (not including) index cons back. */
static inline void metaroce_cons_commit(struct metaroce_ring *r, uint32_t cons)
{
	atomic_store_explicit(metaroce_cons_ptr(r), cons, memory_order_release);
}

/*
 * Check the geometry the kernel put in a freshly mapped header against
 * the mapping and the smallest slot this queue needs; fill in r.
 */
static inline int metaroce_ring_init(struct metaroce_ring *r, void *addr,
				     size_t map_size, size_t min_slot)
{
	struct metaroce_queue *hdr = addr;
	uint32_t num_slots, slot_size;

	if (map_size < METAROCE_QUEUE_HDR_SIZE)
		return EINVAL;

	num_slots = hdr->num_slots;
	slot_size = hdr->slot_size;

	if (!num_slots || (num_slots & (num_slots - 1)))
		return EINVAL;
	if (slot_size < min_slot || slot_size % 16)
		return EINVAL;
	if ((uint64_t)num_slots * slot_size >
	    map_size - METAROCE_QUEUE_HDR_SIZE)
		return EINVAL;

	r->hdr = hdr;
	r->slots = (uint8_t *)addr + METAROCE_QUEUE_HDR_SIZE;
	r->map_size = map_size;
	r->num_slots = num_slots;
	r->slot_size = slot_size;

	return 0;
}

#endif /* METAROCE_H */
