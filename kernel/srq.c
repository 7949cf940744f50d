// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce: shared receive queues, and kernel posting of receive WQEs
 * (RQs and SRQs share the format and the code).
 *
 * Producer: user space (mmap'd) or metaroce_ring_post_recv() under
 * ring.lock. Consumer: metaroce_rq_pop() under srq->lock.
 */
#include <linux/uaccess.h>

#include "verbs.h"

#define METAROCE_SRQ_NUM_MAX	((1U << 24) - 1)

static u32 metaroce_recv_slot_size(u32 max_sge)
{
	return ALIGN(sizeof(struct metaroce_recv_wqe) +
		     max_sge * sizeof(struct metaroce_sge), 16);
}

int metaroce_ring_post_recv(struct metaroce_ring *r, u32 max_sge,
			    const struct ib_recv_wr *wr,
			    const struct ib_recv_wr **bad_wr)
{
	struct metaroce_recv_wqe *wqe;
	unsigned long flags;
	u32 prod, cons;
	int err = 0, i;

	spin_lock_irqsave(&r->lock, flags);
	prod = r->prod;
	/* Pairs with the other side's release of its index. */
	cons = smp_load_acquire(&r->q->consumer);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (u32)wr->num_sge > max_sge) {
			err = -EINVAL;
			break;
		}
		if (prod - cons >= r->num_slots) {
			err = -ENOMEM;
			break;
		}
		wqe = metaroce_ring_slot(r, prod);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		wqe->reserved = 0;
		for (i = 0; i < wr->num_sge; i++) {
			wqe->sge[i].addr = wr->sg_list[i].addr;
			wqe->sge[i].length = wr->sg_list[i].length;
			wqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		prod++;
	}
	r->prod = prod;
	/* Slot contents before the index (acquire on the other side). */
	smp_store_release(&r->q->producer, prod);
	spin_unlock_irqrestore(&r->lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}

static int metaroce_srq_ring_new(struct metaroce_srq *srq,
				 struct ib_udata *udata, u32 max_wr,
				 struct metaroce_ring *r,
				 struct metaroce_mmap_info *mi)
{
	struct metaroce_dev *mdev = to_mdev(srq->ibsrq.device);
	struct metaroce_ucontext *uc;
	int err;

	err = metaroce_ring_alloc(r, max_wr,
				  metaroce_recv_slot_size(srq->max_sge));
	if (err || !udata)
		return err;

	uc = rdma_udata_to_drv_context(udata, struct metaroce_ucontext, ibuc);
	err = metaroce_ring_export(mdev, &uc->ibuc, r, mi);
	if (err)
		metaroce_ring_free(r);
	return err;
}

int metaroce_create_srq(struct ib_srq *ibsrq,
			struct ib_srq_init_attr *init_attr,
			struct ib_udata *udata)
{
	struct metaroce_dev *mdev = to_mdev(ibsrq->device);
	struct metaroce_srq *srq = to_msrq(ibsrq);
	struct ib_srq_attr *attr = &init_attr->attr;
	struct metaroce_create_srq_resp resp = {};
	u32 num;
	int err;

	if (init_attr->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (attr->max_wr < 1 || attr->max_wr > METAROCE_MAX_SRQ_WR ||
	    attr->max_sge > METAROCE_MAX_SRQ_SGE ||
	    attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	if (atomic_inc_return(&mdev->num_srq) > METAROCE_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&srq->lock);
	srq->is_user = !!udata;
	srq->max_sge = attr->max_sge;

	err = metaroce_srq_ring_new(srq, udata, attr->max_wr, &srq->ring,
				    &resp.mi);
	if (err)
		goto err_count;
	srq->max_wr = srq->ring.num_slots;
	srq->limit = attr->srq_limit;

	err = xa_alloc_cyclic_irq(&mdev->srqs, &num, srq,
				  XA_LIMIT(1, METAROCE_SRQ_NUM_MAX),
				  &mdev->srq_next, GFP_KERNEL);
	if (err < 0)
		goto err_ring;
	srq->srq_num = num;

	if (udata) {
		resp.srq_num = num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_xa;
	}

	/* What was granted. */
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	return 0;

err_xa:
	xa_erase_irq(&mdev->srqs, num);
err_ring:
	metaroce_ring_free(&srq->ring);
err_count:
	atomic_dec(&mdev->num_srq);
	return err;
}

/* Replace the ring by one of at least @max_wr slots, keeping the WQEs. */
static int metaroce_srq_resize(struct metaroce_srq *srq, u32 max_wr,
			       struct ib_udata *udata)
{
	struct metaroce_modify_srq_cmd cmd = {};
	struct metaroce_mmap_info mi = {};
	struct metaroce_ring r;
	unsigned long flags;
	u32 count, i, prod;
	int err;

	if (udata) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
	}

	err = metaroce_srq_ring_new(srq, udata, max_wr, &r, &mi);
	if (err)
		return err;
	if (udata &&
	    copy_to_user(u64_to_user_ptr(cmd.mmap_info_addr), &mi,
			 sizeof(mi))) {
		err = -EFAULT;
		goto out_free;
	}

	/* Consumer, then (kernel) producer lock: keep both sides out. */
	spin_lock_irqsave(&srq->lock, flags);
	spin_lock(&srq->ring.lock);
	/* Pairs with the other side's release of its index. */
	prod = srq->is_user ? smp_load_acquire(&srq->ring.q->producer) :
			      srq->ring.prod;
	count = prod - srq->ring.cons;
	if (srq->error) {
		err = -EIO;
	} else if (count > srq->ring.num_slots || count > r.num_slots) {
		err = -EINVAL;
	} else {
		for (i = 0; i < count; i++)
			memcpy(metaroce_ring_slot(&r, i),
			       metaroce_ring_slot(&srq->ring,
						  srq->ring.cons + i),
			       r.slot_size);
		r.prod = count;
		r.cons = 0;
		r.q->producer = count;
		r.q->consumer = 0;
		metaroce_ring_swap(&srq->ring, &r);
		srq->max_wr = srq->ring.num_slots;
	}
	spin_unlock(&srq->ring.lock);
	spin_unlock_irqrestore(&srq->lock, flags);

out_free:
	metaroce_ring_free(&r);
	return err;
}

int metaroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);
	unsigned long flags;
	u32 max_wr;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;

	max_wr = (mask & IB_SRQ_MAX_WR) ? attr->max_wr : srq->max_wr;
	if (mask & IB_SRQ_MAX_WR) {
		if (attr->max_wr < 1 || attr->max_wr > METAROCE_MAX_SRQ_WR)
			return -EINVAL;
		/* Not below the limit being (or staying) armed. */
		if (!(mask & IB_SRQ_LIMIT) && attr->max_wr < srq->limit)
			return -EINVAL;
	}
	if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > max_wr)
		return -EINVAL;

	if (mask & IB_SRQ_MAX_WR) {
		err = metaroce_srq_resize(srq, attr->max_wr, udata);
		if (err)
			return err;
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
	}
	return 0;
}

int metaroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);

	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int metaroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct metaroce_dev *mdev = to_mdev(ibsrq->device);
	struct metaroce_srq *srq = to_msrq(ibsrq);

	/*
	 * ib_core refuses while QPs use it, and QP destroy waits for the
	 * transport's references: nobody pops from it any more.
	 */
	xa_erase_irq(&mdev->srqs, srq->srq_num);
	metaroce_ring_free(&srq->ring);
	atomic_dec(&mdev->num_srq);
	return 0;
}

int metaroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);

	if (srq->is_user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	return metaroce_ring_post_recv(&srq->ring, srq->max_sge, wr, bad_wr);
}
