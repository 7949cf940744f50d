/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metaroce: the verbs implemented by the object files (queue.c, mem.c,
 * cq.c, srq.c, qp.c, ah.c), for the ops table in verbs.c.
 */
#ifndef METAROCE_VERBS_H
#define METAROCE_VERBS_H

#include <rdma/uverbs_ioctl.h>

#include "obj.h"

/* queue.c */
int metaroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void metaroce_mmap_free(struct rdma_user_mmap_entry *entry);

/* mem.c */
struct ib_mr *metaroce_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *metaroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				   u64 iova, int access,
				   struct ib_udata *udata);
struct ib_mr *metaroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type mr_type,
				u32 max_num_sg);
int metaroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		       int sg_nents, unsigned int *sg_offset);
int metaroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int metaroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int metaroce_dealloc_mw(struct ib_mw *ibmw);

/* cq.c */
int metaroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		       struct ib_udata *udata);
int metaroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int metaroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int metaroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int metaroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/* srq.c */
int metaroce_create_srq(struct ib_srq *ibsrq,
			struct ib_srq_init_attr *init_attr,
			struct ib_udata *udata);
int metaroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			enum ib_srq_attr_mask mask, struct ib_udata *udata);
int metaroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int metaroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int metaroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr);
/* Post kernel receive WQEs to @r (RQ or SRQ) with @max_sge. */
int metaroce_ring_post_recv(struct metaroce_ring *r, u32 max_sge,
			    const struct ib_recv_wr *wr,
			    const struct ib_recv_wr **bad_wr);

/* qp.c */
int metaroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		       struct ib_udata *udata);
int metaroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		       int mask, struct ib_udata *udata);
int metaroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int mask, struct ib_qp_init_attr *init);
int metaroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int metaroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr);
int metaroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);

/* ah.c */
int metaroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		       struct ib_udata *udata);
int metaroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int metaroce_destroy_ah(struct ib_ah *ibah, u32 flags);

/* Wait for the last reference of an object whose table entry is gone. */
static inline void metaroce_obj_drain(refcount_t *ref, struct completion *done)
{
	if (!refcount_dec_and_test(ref))
		wait_for_completion(done);
}

#endif /* METAROCE_VERBS_H */
