// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce: completion queues.
 *
 * The ring's producer is the kernel (metaroce_cq_post); its consumer is
 * user space (mmap'd CQs) or poll_cq (kernel CQs). The kernel's producer
 * index lives in ring.prod; the consumer index is read from the ring and
 * only trusted as far as "is there room".
 */
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/if_vlan.h>

#include "verbs.h"

/* Number of CQEs posted and not yet consumed; > num_slots if corrupt. */
static u32 metaroce_cq_count(struct metaroce_cq *cq)
{
	/* Pairs with the other side's release of its index. */
	return cq->ring.prod - smp_load_acquire(&cq->ring.q->consumer);
}

static int metaroce_cq_ring_new(struct metaroce_cq *cq, struct ib_udata *udata,
				u32 cqe, struct metaroce_ring *r,
				struct metaroce_mmap_info *mi)
{
	struct metaroce_dev *mdev = to_mdev(cq->ibcq.device);
	struct metaroce_ucontext *uc;
	int err;

	BUILD_BUG_ON(sizeof(struct metaroce_cqe) > 64);
	err = metaroce_ring_alloc(r, cqe, 64);
	if (err)
		return err;
	if (!udata)
		return 0;

	uc = rdma_udata_to_drv_context(udata, struct metaroce_ucontext, ibuc);
	err = metaroce_ring_export(mdev, &uc->ibuc, r, mi);
	if (err)
		metaroce_ring_free(r);
	return err;
}

int metaroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		       struct ib_udata *udata)
{
	struct metaroce_dev *mdev = to_mdev(ibcq->device);
	struct metaroce_cq *cq = to_mcq(ibcq);
	struct metaroce_create_cq_resp resp = {};
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > METAROCE_MAX_CQE)
		return -EINVAL;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	if (atomic_inc_return(&mdev->num_cq) > METAROCE_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&cq->lock);
	cq->is_user = !!udata;
	cq->notify = 0;
	cq->overflow = false;

	err = metaroce_cq_ring_new(cq, udata, attr->cqe, &cq->ring, &resp.mi);
	if (err)
		goto err_count;

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	ibcq->cqe = cq->ring.num_slots;
	return 0;

err_ring:
	metaroce_ring_free(&cq->ring);
err_count:
	atomic_dec(&mdev->num_cq);
	return err;
}

int metaroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct metaroce_cq *cq = to_mcq(ibcq);

	/* ib_core refuses while QPs or SRQs use it: nobody posts now. */
	metaroce_ring_free(&cq->ring);
	atomic_dec(&to_mdev(ibcq->device)->num_cq);
	return 0;
}

int metaroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct metaroce_cq *cq = to_mcq(ibcq);
	struct metaroce_resize_cq_cmd cmd = {};
	struct metaroce_mmap_info mi = {};
	struct metaroce_ring r;
	unsigned long flags;
	u32 count, i, cons;
	int err;

	if (cqe < 1 || cqe > METAROCE_MAX_CQE)
		return -EINVAL;
	if (udata) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
	}

	err = metaroce_cq_ring_new(cq, udata, cqe, &r, &mi);
	if (err)
		return err;
	if (udata &&
	    copy_to_user(u64_to_user_ptr(cmd.mmap_info_addr), &mi,
			 sizeof(mi))) {
		err = -EFAULT;
		goto out_free;
	}

	spin_lock_irqsave(&cq->lock, flags);
	count = metaroce_cq_count(cq);
	if (count > cq->ring.num_slots || count > r.num_slots) {
		spin_unlock_irqrestore(&cq->lock, flags);
		err = -EINVAL;
		goto out_free;
	}
	cons = cq->ring.prod - count;
	for (i = 0; i < count; i++)
		memcpy(metaroce_ring_slot(&r, i),
		       metaroce_ring_slot(&cq->ring, cons + i),
		       sizeof(struct metaroce_cqe));
	r.prod = count;
	r.q->flags = cq->ring.q->flags;
	/* Slot contents before the index (acquire on the other side). */
	smp_store_release(&r.q->producer, count);
	metaroce_ring_swap(&cq->ring, &r);
	ibcq->cqe = cq->ring.num_slots;
	spin_unlock_irqrestore(&cq->lock, flags);

out_free:
	metaroce_ring_free(&r);
	return err;
}

int metaroce_cq_post(struct metaroce_cq *cq, const struct metaroce_cqe *cqe,
		     bool solicited)
{
	struct ib_event ev;
	unsigned long flags;
	bool fire = false;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflow || metaroce_cq_count(cq) >= cq->ring.num_slots) {
		bool first = !cq->overflow;

		cq->overflow = true;
		cq->ring.q->flags |= METAROCE_QUEUE_F_OVERFLOW;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (first && cq->ibcq.event_handler) {
			ev.device = cq->ibcq.device;
			ev.element.cq = &cq->ibcq;
			ev.event = IB_EVENT_CQ_ERR;
			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		}
		return -ENOSPC;
	}

	memcpy(metaroce_ring_slot(&cq->ring, cq->ring.prod), cqe,
	       sizeof(*cqe));
	cq->ring.prod++;
	/* Slot contents before the index (acquire on the other side). */
	smp_store_release(&cq->ring.q->producer, cq->ring.prod);

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || cqe->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		fire = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	/* Unlocked: the handler may re-arm (req_notify_cq takes the lock). */
	if (fire && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}

/*
 * Drop QP @qpn's completions from a kernel CQ (destroy_qp, once the
 * transport posts no more for it): a kernel consumer's wr_cqe may go with
 * its QP, and wc->qp could no longer be found (mlx5 cleans its CQs the
 * same way). The survivors keep their order; a user CQ is polled in user
 * space, where a completion names its QP by number only, and is left as
 * it is.
 */
void metaroce_cq_clean(struct metaroce_cq *cq, u32 qpn)
{
	struct metaroce_cqe *c;
	unsigned long flags;
	u32 cons, i, keep;

	if (cq->is_user)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	cons = cq->ring.q->consumer;	/* kernel CQ: written under the lock */
	keep = cq->ring.prod;
	for (i = cq->ring.prod; i != cons; ) {
		c = metaroce_ring_slot(&cq->ring, --i);
		if (c->qp_num == qpn)
			continue;
		if (--keep != i)
			memcpy(metaroce_ring_slot(&cq->ring, keep), c,
			       sizeof(*c));
	}
	/* as poll_cq: the slots moved before the index that shows them */
	smp_store_release(&cq->ring.q->consumer, keep);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/* ibv_wc_flags (the CQE's numbering) to ib_wc_flags. */
static int metaroce_wc_flags(u32 f)
{
	int flags = 0;

	if (f & METAROCE_WC_GRH)
		flags |= IB_WC_GRH;
	if (f & METAROCE_WC_WITH_IMM)
		flags |= IB_WC_WITH_IMM;
	if (f & METAROCE_WC_WITH_INV)
		flags |= IB_WC_WITH_INVALIDATE;
	if (f & METAROCE_WC_IP_CSUM_OK)
		flags |= IB_WC_IP_CSUM_OK;
	return flags;
}

static void metaroce_cqe_to_wc(struct metaroce_dev *mdev,
			       const struct metaroce_cqe *cqe,
			       struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	/* destroy_qp cleans a kernel CQ of its QP's completions */
	wc->qp = xa_load(&mdev->qps, cqe->qp_num);
	wc->wc_flags = metaroce_wc_flags(cqe->wc_flags);
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		wc->ex.invalidate_rkey = cqe->ex_imm_data;
	else
		wc->ex.imm_data = (__force __be32)cqe->ex_imm_data;
	if (cqe->wc_flags & (METAROCE_WC_NET_IPV4 | METAROCE_WC_NET_IPV6)) {
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = cqe->wc_flags & METAROCE_WC_NET_IPV4 ?
				       RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
	}
	/*
	 * What ib_init_ah_attr_from_wc() matches the reply's GID with: the
	 * VLAN the datagram came in on (one stacked on the device's netdev),
	 * or the device's own if it is bound to a VLAN.
	 */
	if ((wc->wc_flags & IB_WC_GRH) &&
	    (cqe->wc_flags & METAROCE_WC_VLAN)) {
		wc->wc_flags |= IB_WC_WITH_VLAN;
		wc->vlan_id = cqe->slid;
	} else if ((wc->wc_flags & IB_WC_GRH) && is_vlan_dev(mdev->ndev)) {
		wc->wc_flags |= IB_WC_WITH_VLAN;
		wc->vlan_id = vlan_dev_vlan_id(mdev->ndev);
	}
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->wc_flags & METAROCE_WC_VLAN ? 0 : cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->port_num = cqe->port_num;
}

int metaroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct metaroce_dev *mdev = to_mdev(ibcq->device);
	struct metaroce_cq *cq = to_mcq(ibcq);
	struct metaroce_queue *q;
	unsigned long flags;
	u32 cons, avail;
	int n = 0;

	/* User CQs are polled in user space only. */
	if (cq->is_user)
		return -EINVAL;

	spin_lock_irqsave(&cq->lock, flags);
	q = cq->ring.q;
	cons = q->consumer;
	avail = cq->ring.prod - cons;
	rcu_read_lock();	/* for the xa_load of wc->qp */
	for (; n < num_entries && n < avail; n++)
		metaroce_cqe_to_wc(mdev, metaroce_ring_slot(&cq->ring,
							    cons + n),
				   &wc[n]);
	rcu_read_unlock();
	/* Slot contents before the index (acquire on the other side). */
	smp_store_release(&q->consumer, cons + n);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int metaroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct metaroce_cq *cq = to_mcq(ibcq);
	u8 mode = flags & IB_CQ_SOLICITED_MASK;
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* NEXT_COMP is the stronger request: never downgrade it. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = mode;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && metaroce_cq_count(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
