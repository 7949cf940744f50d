// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * metaroce user space provider (libmetaroce-rdmav34.so).
 *
 * Control path verbs go through the ibv_cmd_* helpers. The fast path uses
 * rings the kernel allocates and the provider mmaps from cmd_fd:
 *  - poll_cq consumes struct metaroce_cqe from the CQ ring,
 *  - post_recv / post_srq_recv produce struct metaroce_recv_wqe,
 *  - post_send produces struct metaroce_send_wqe and then rings one
 *    doorbell: a POST_SEND command carrying no work requests.
 * None of them but the doorbell makes a system call.
 */

#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <ccan/minmax.h>
#include <infiniband/driver.h>
#include <infiniband/verbs.h>

#include "metaroce.h"

static void metaroce_free_context(struct ibv_context *ibctx);

static const struct verbs_match_ent hca_table[] = {
	VERBS_DRIVER_ID(METAROCE_DRIVER_ID),
	{},
};

/* Size of a send WQE header, i.e. without SGEs or inline data. */
#define METAROCE_SEND_WQE_HDR	sizeof(struct metaroce_send_wqe)
#define METAROCE_RECV_WQE_HDR	sizeof(struct metaroce_recv_wqe)

static int metaroce_map_ring(struct ibv_context *ctx,
			     const struct metaroce_mmap_info *mi,
			     size_t min_slot, struct metaroce_ring *r)
{
	void *addr;
	int ret;

	if (!mi->size)
		return EINVAL;

	addr = mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    ctx->cmd_fd, mi->offset);
	if (addr == MAP_FAILED)
		return errno;

	ret = metaroce_ring_init(r, addr, mi->size, min_slot);
	if (ret) {
		verbs_err(verbs_get_ctx(ctx),
			  "metaroce: bad queue geometry (size %u, min slot %zu)\n",
			  mi->size, min_slot);
		munmap(addr, mi->size);
	}

	return ret;
}

static void metaroce_unmap_ring(struct metaroce_ring *r)
{
	if (r->hdr)
		munmap(r->hdr, r->map_size);
	r->hdr = NULL;
}

static int metaroce_query_device(struct ibv_context *context,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);

	return 0;
}

static int metaroce_query_port(struct ibv_context *context, uint8_t port,
			       struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *metaroce_alloc_pd(struct ibv_context *context)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct ibv_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(context, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}

	return pd;
}

static int metaroce_dealloc_pd(struct ibv_pd *pd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(pd);
	if (ret)
		return ret;

	free(pd);
	return 0;
}

static struct ibv_mr *metaroce_reg_mr(struct ibv_pd *pd, void *addr,
				      size_t length, uint64_t hca_va,
				      int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}

	return &vmr->ibv_mr;
}

static int metaroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	free(vmr);
	return 0;
}

/* ------------------------------------------------------------------ MW */

static struct ibv_mw *metaroce_alloc_mw(struct ibv_pd *pd,
					enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;

	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}

	return mw;
}

static int metaroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;

	free(mw);
	return 0;
}

static int metaroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			      struct ibv_send_wr **bad_wr);

/*
 * ibv_bind_mw (type 1): a BIND_MW work request with the next rkey; the
 * window has it from now on (an error completion means the consumer
 * keeps the old one, as rdma-core's providers do).
 */
static int metaroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
			    struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {}, *bad;
	int ret;

	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;

	ret = metaroce_post_send(qp, &wr, &bad);
	if (ret)
		return ret;

	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

/* ------------------------------------------------------------------ CQ */

static struct ibv_cq *metaroce_create_cq(struct ibv_context *context, int cqe,
					 struct ibv_comp_channel *channel,
					 int comp_vector)
{
	struct umetaroce_create_cq_resp resp = {};
	struct metaroce_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector,
				&cq->vcq.cq, NULL, 0, &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto err_free;

	ret = metaroce_map_ring(context, &resp.mi, sizeof(struct metaroce_cqe),
				&cq->ring);
	if (ret)
		goto err_destroy;

	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);

	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

static int metaroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct metaroce_cq *cq = to_mcq(ibcq);
	struct umetaroce_resize_cq_resp resp = {};
	struct umetaroce_resize_cq cmd = {};
	struct metaroce_mmap_info mi = {};
	struct metaroce_ring ring;
	int ret;

	cmd.mmap_info_addr = (uintptr_t)&mi;

	pthread_spin_lock(&cq->lock);

	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto out;

	/* Map the new ring before dropping the old one. */
	ret = metaroce_map_ring(ibcq->context, &mi,
				sizeof(struct metaroce_cqe), &ring);
	if (ret)
		goto out;

	metaroce_unmap_ring(&cq->ring);
	cq->ring = ring;

out:
	pthread_spin_unlock(&cq->lock);
	return ret;
}

static int metaroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct metaroce_cq *cq = to_mcq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	metaroce_unmap_ring(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	free(cq);

	return 0;
}

static void metaroce_cqe_to_wc(const struct metaroce_cqe *cqe,
			       struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->ex_imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

static int metaroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct metaroce_cq *cq = to_mcq(ibcq);
	struct metaroce_ring *r = &cq->ring;
	uint32_t cons, avail;
	int n;

	pthread_spin_lock(&cq->lock);

	if (!r->hdr) {
		pthread_spin_unlock(&cq->lock);
		return -1;
	}

	cons = metaroce_cons_begin(r, &avail);
	for (n = 0; n < ne && (uint32_t)n < avail; n++)
		metaroce_cqe_to_wc(metaroce_ring_slot(r, cons + n), &wc[n]);
	if (n)
		metaroce_cons_commit(r, cons + n);

	pthread_spin_unlock(&cq->lock);

	return n;
}

/* ------------------------------------------------------------- cq_ex */

/*
 * Extended CQ polling: start_poll takes the CQ lock and reports the oldest
 * entry, next_poll the following one, end_poll hands every entry reported
 * back to the kernel and drops the lock (libibverbs: end_poll follows a
 * successful start_poll whatever next_poll returned).
 */
static inline struct metaroce_cq *ex_to_mcq(struct ibv_cq_ex *ex)
{
	return container_of(ex, struct metaroce_cq, vcq.cq_ex);
}

static void metaroce_cq_ex_load(struct metaroce_cq *cq)
{
	cq->cur = metaroce_ring_slot(&cq->ring, cq->cur_idx);
	cq->vcq.cq_ex.wr_id = cq->cur->wr_id;
	cq->vcq.cq_ex.status = cq->cur->status;
}

static int metaroce_start_poll(struct ibv_cq_ex *ex,
			       struct ibv_poll_cq_attr *attr)
{
	struct metaroce_cq *cq = ex_to_mcq(ex);
	uint32_t cons, avail;

	if (attr->comp_mask)
		return EINVAL;

	pthread_spin_lock(&cq->lock);
	if (!cq->ring.hdr) {
		pthread_spin_unlock(&cq->lock);
		return EINVAL;
	}
	cons = metaroce_cons_begin(&cq->ring, &avail);
	if (!avail) {
		pthread_spin_unlock(&cq->lock);
		return ENOENT;
	}
	cq->cur_idx = cons;
	cq->poll_end = cons + avail;
	metaroce_cq_ex_load(cq);
	return 0;
}

static int metaroce_next_poll(struct ibv_cq_ex *ex)
{
	struct metaroce_cq *cq = ex_to_mcq(ex);
	uint32_t cons, avail;

	if (cq->cur_idx + 1 == cq->poll_end) {
		/*
		 * Look again: the kernel may have posted meanwhile. The
		 * consumer index is still where start_poll found it.
		 */
		cons = metaroce_cons_begin(&cq->ring, &avail);
		cq->poll_end = cons + avail;
		if (cq->cur_idx + 1 == cq->poll_end)
			return ENOENT;
	}
	cq->cur_idx++;
	metaroce_cq_ex_load(cq);
	return 0;
}

static void metaroce_end_poll(struct ibv_cq_ex *ex)
{
	struct metaroce_cq *cq = ex_to_mcq(ex);

	metaroce_cons_commit(&cq->ring, cq->cur_idx + 1);
	cq->cur = NULL;
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode metaroce_read_opcode(struct ibv_cq_ex *ex)
{
	return ex_to_mcq(ex)->cur->opcode;
}

static uint32_t metaroce_read_vendor_err(struct ibv_cq_ex *ex)
{
	return ex_to_mcq(ex)->cur->vendor_err;
}

static uint32_t metaroce_read_byte_len(struct ibv_cq_ex *ex)
{
	return ex_to_mcq(ex)->cur->byte_len;
}

/* The immediate (network order) or, with IBV_WC_WITH_INV, the rkey. */
static __be32 metaroce_read_imm_data(struct ibv_cq_ex *ex)
{
	return ex_to_mcq(ex)->cur->ex_imm_data;
}

static uint32_t metaroce_read_qp_num(struct ibv_cq_ex *ex)
{
	return ex_to_mcq(ex)->cur->qp_num;
}

static uint32_t metaroce_read_src_qp(struct ibv_cq_ex *ex)
{
	return ex_to_mcq(ex)->cur->src_qp;
}

static unsigned int metaroce_read_wc_flags(struct ibv_cq_ex *ex)
{
	return ex_to_mcq(ex)->cur->wc_flags;
}

static uint32_t metaroce_read_slid(struct ibv_cq_ex *ex)
{
	return ex_to_mcq(ex)->cur->slid;
}

static uint8_t metaroce_read_sl(struct ibv_cq_ex *ex)
{
	return ex_to_mcq(ex)->cur->sl;
}

static uint8_t metaroce_read_dlid_path_bits(struct ibv_cq_ex *ex)
{
	return ex_to_mcq(ex)->cur->dlid_path_bits;
}

/*
 * What a CQE holds. No completion timestamps: the kernel does not stamp
 * completions, and a clock read at poll time would not be honest.
 */
#define METAROCE_WC_EX_FLAGS	(IBV_WC_EX_WITH_BYTE_LEN |		\
				 IBV_WC_EX_WITH_IMM |			\
				 IBV_WC_EX_WITH_QP_NUM |		\
				 IBV_WC_EX_WITH_SRC_QP |		\
				 IBV_WC_EX_WITH_SLID |			\
				 IBV_WC_EX_WITH_SL |			\
				 IBV_WC_EX_WITH_DLID_PATH_BITS)

static struct ibv_cq_ex *metaroce_create_cq_ex(struct ibv_context *context,
					       struct ibv_cq_init_attr_ex *attr)
{
	struct umetaroce_create_cq_ex_resp resp = {};
	struct ibv_cq_ex *ex;
	struct metaroce_cq *cq;
	int ret;

	if (attr->wc_flags & ~(uint64_t)METAROCE_WC_EX_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq_ex(context, attr, &cq->vcq, NULL, 0,
				   &resp.ibv_resp, sizeof(resp), 0);
	if (ret)
		goto err_free;

	ret = metaroce_map_ring(context, &resp.mi, sizeof(struct metaroce_cqe),
				&cq->ring);
	if (ret)
		goto err_destroy;

	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);

	ex = &cq->vcq.cq_ex;
	ex->start_poll = metaroce_start_poll;
	ex->next_poll = metaroce_next_poll;
	ex->end_poll = metaroce_end_poll;
	ex->read_opcode = metaroce_read_opcode;
	ex->read_vendor_err = metaroce_read_vendor_err;
	ex->read_wc_flags = metaroce_read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = metaroce_read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = metaroce_read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = metaroce_read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = metaroce_read_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = metaroce_read_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = metaroce_read_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = metaroce_read_dlid_path_bits;

	return ex;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

/* ----------------------------------------------------- receive queues */

/* Caller holds wq->lock. */
static int metaroce_post_recv_ring(struct metaroce_wq *wq,
				   struct ibv_recv_wr *wr,
				   struct ibv_recv_wr **bad_wr)
{
	struct metaroce_recv_wqe *wqe;
	uint32_t prod, room, posted = 0;
	int i, ret = 0;

	prod = metaroce_prod_begin(&wq->ring, &room);

	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			ret = EINVAL;
			break;
		}
		if (posted == room) {
			ret = ENOMEM;
			break;
		}

		wqe = metaroce_ring_slot(&wq->ring, prod + posted);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		wqe->reserved = 0;
		for (i = 0; i < wr->num_sge; i++) {
			wqe->sge[i].addr = wr->sg_list[i].addr;
			wqe->sge[i].length = wr->sg_list[i].length;
			wqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		posted++;
	}

	if (ret)
		*bad_wr = wr;
	if (posted)
		metaroce_prod_commit(&wq->ring, prod + posted);

	return ret;
}

static int metaroce_ring_doorbell(struct ibv_qp *ibqp);

/*
 * IBA 11.4.1.1: posting to a send queue in RESET, INIT or RTR is an
 * immediate error (libibverbs tracks the state this process set).
 */
static bool metaroce_sq_open(struct ibv_qp *ibqp)
{
	switch (ibqp->state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		return false;
	default:
		return true;
	}
}

static int metaroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad_wr)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	int ret;

	*bad_wr = NULL;

	if (!qp->rq.ring.hdr || ibqp->state == IBV_QPS_RESET) {
		/*
		 * Attached to an SRQ, or created without receive queue; or
		 * in RESET, where IBA 11.4.1.2 makes posting an immediate
		 * error (INIT and RTR accept receives).
		 */
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->rq.lock);
	ret = metaroce_post_recv_ring(&qp->rq, wr, bad_wr);
	pthread_spin_unlock(&qp->rq.lock);

	/*
	 * In ERR a posted receive completes as flushed, which only the
	 * kernel can do: a doorbell runs its flush again (the drain idiom:
	 * move to ERR, post one receive, wait for its flush completion).
	 * libibverbs tracks the state this process set; an error the kernel
	 * hit on its own is reported by the async event and by the flushed
	 * completions of everything already posted.
	 */
	if (ibqp->state == IBV_QPS_ERR && *bad_wr != wr)
		metaroce_ring_doorbell(ibqp);

	return ret;
}

static int metaroce_post_srq_recv(struct ibv_srq *ibsrq,
				  struct ibv_recv_wr *wr,
				  struct ibv_recv_wr **bad_wr)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);
	int ret;

	*bad_wr = NULL;

	pthread_spin_lock(&srq->rq.lock);
	if (!srq->rq.ring.hdr) {
		*bad_wr = wr;
		ret = EINVAL;
	} else {
		ret = metaroce_post_recv_ring(&srq->rq, wr, bad_wr);
	}
	pthread_spin_unlock(&srq->rq.lock);

	return ret;
}

/* ----------------------------------------------------------------- SRQ */

static struct ibv_srq *metaroce_create_srq(struct ibv_pd *pd,
					   struct ibv_srq_init_attr *attr)
{
	struct umetaroce_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	struct metaroce_srq *srq;
	size_t min_slot;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	/* attr->attr now holds what the kernel granted */
	srq->rq.max_sge = attr->attr.max_sge;
	min_slot = METAROCE_RECV_WQE_HDR +
		   (size_t)srq->rq.max_sge * sizeof(struct metaroce_sge);
	ret = metaroce_map_ring(pd->context, &resp.mi, min_slot, &srq->rq.ring);
	if (ret)
		goto err_destroy;

	srq->srq_num = resp.srq_num;
	pthread_spin_init(&srq->rq.lock, PTHREAD_PROCESS_PRIVATE);

	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

static int metaroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			       int attr_mask)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);
	struct umetaroce_modify_srq cmd = {};
	struct metaroce_mmap_info mi = {};
	struct metaroce_ring ring;
	size_t min_slot;
	int ret;

	cmd.mmap_info_addr = (uintptr_t)&mi;

	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
					  sizeof(cmd));

	/* A resize replaces the ring: keep posters out meanwhile. */
	pthread_spin_lock(&srq->rq.lock);

	ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (ret)
		goto out;

	min_slot = METAROCE_RECV_WQE_HDR +
		   (size_t)srq->rq.max_sge * sizeof(struct metaroce_sge);
	ret = metaroce_map_ring(ibsrq->context, &mi, min_slot, &ring);
	if (ret)
		goto out;

	metaroce_unmap_ring(&srq->rq.ring);
	srq->rq.ring = ring;

out:
	pthread_spin_unlock(&srq->rq.lock);
	return ret;
}

static int metaroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

static int metaroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;

	metaroce_unmap_ring(&srq->rq.ring);
	pthread_spin_destroy(&srq->rq.lock);
	free(srq);

	return 0;
}

/* ------------------------------------------------------------------ QP */

static int metaroce_map_qp(struct ibv_context *ctx, struct metaroce_qp *qp,
			   const struct ibv_qp_cap *cap, bool has_srq,
			   struct metaroce_create_qp_resp *resp)
{
	size_t min_slot, sge_bytes;
	int ret;

	/*
	 * attr->cap now holds what the kernel granted. A queue of depth 0
	 * may come without a ring; posting to it then fails with EINVAL.
	 */
	qp->sq.max_sge = cap->max_send_sge;
	qp->sq.max_inline = cap->max_inline_data;
	sge_bytes = (size_t)qp->sq.max_sge * sizeof(struct metaroce_sge);
	min_slot = METAROCE_SEND_WQE_HDR + max_t(size_t, sge_bytes,
						 qp->sq.max_inline);
	if (resp->sq_mi.size || cap->max_send_wr) {
		ret = metaroce_map_ring(ctx, &resp->sq_mi, min_slot,
					&qp->sq.ring);
		if (ret)
			return ret;
	}

	if (has_srq || (!resp->rq_mi.size && !cap->max_recv_wr))
		return 0;

	qp->rq.max_sge = cap->max_recv_sge;
	min_slot = METAROCE_RECV_WQE_HDR +
		   (size_t)qp->rq.max_sge * sizeof(struct metaroce_sge);
	ret = metaroce_map_ring(ctx, &resp->rq_mi, min_slot, &qp->rq.ring);
	if (ret) {
		metaroce_unmap_ring(&qp->sq.ring);
		return ret;
	}

	return 0;
}

static struct ibv_qp *metaroce_create_qp(struct ibv_pd *pd,
					 struct ibv_qp_init_attr *attr)
{
	struct umetaroce_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	struct metaroce_qp *qp;
	int ret;

	/* The transport has no XRC nor raw packet QPs: refuse them here. */
	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		break;
	default:
		errno = EOPNOTSUPP;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = metaroce_map_qp(pd->context, qp, &attr->cap, attr->srq,
			      &resp.drv_payload);
	if (ret)
		goto err_destroy;

	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);

	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

static int metaroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			     int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int metaroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			      int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
}

static int metaroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	metaroce_unmap_ring(&qp->rq.ring);
	metaroce_unmap_ring(&qp->sq.ring);
	pthread_spin_destroy(&qp->rq.lock);
	pthread_spin_destroy(&qp->sq.lock);
	free(qp);

	return 0;
}

/* Which opcodes a QP type may post; the kernel checks again. */
static bool metaroce_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC;	/* not UC operations */
	default:
		return false;
	}
}

static bool metaroce_opcode_is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* Check wr against the QP; returns 0 or an errno for *bad_wr. */
static int metaroce_check_send_wr(struct metaroce_qp *qp,
				  struct ibv_send_wr *wr)
{
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	uint64_t len = 0;
	int i;

	if (!metaroce_opcode_ok(type, wr->opcode))
		return EINVAL;
	if (wr->num_sge < 0)
		return EINVAL;
	if (type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	if (metaroce_opcode_is_atomic(wr->opcode) && wr->num_sge != 1)
		return EINVAL;
	/*
	 * The new rkey keeps the window's index (ibv_inc_rkey): the kernel
	 * finds the window by it, so another index would bind another one.
	 */
	if (wr->opcode == IBV_WR_BIND_MW)
		return wr->bind_mw.mw && wr->bind_mw.mw->pd == qp->vqp.qp.pd &&
		       (wr->bind_mw.rkey >> 8) == (wr->bind_mw.mw->rkey >> 8) &&
		       !(wr->send_flags & IBV_SEND_INLINE) ? 0 : EINVAL;

	if (!(wr->send_flags & IBV_SEND_INLINE)) {
		if ((uint32_t)wr->num_sge > qp->sq.max_sge)
			return EINVAL;
		return 0;
	}

	if (wr->opcode == IBV_WR_RDMA_READ || wr->opcode == IBV_WR_LOCAL_INV ||
	    metaroce_opcode_is_atomic(wr->opcode))
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		len += wr->sg_list[i].length;
		if (len > qp->sq.max_inline)
			return EINVAL;
	}

	return 0;
}

/* The BIND_MW part of a WQE (layout: metaroce-abi.h). */
static void metaroce_build_bind(struct metaroce_send_wqe *wqe, uint32_t rkey,
				const struct ibv_mw_bind_info *bi)
{
	wqe->ex_imm_data = rkey;
	wqe->num_sge = 0;
	wqe->inline_len = 0;
	wqe->send_flags &= ~IBV_SEND_INLINE;
	wqe->wr.atomic.remote_addr = bi->addr;
	wqe->wr.atomic.compare_add = bi->length;
	wqe->wr.atomic.swap = bi->mw_access_flags;
	wqe->wr.atomic.rkey = bi->mr && bi->length ? bi->mr->lkey : 0;
}

static void metaroce_build_send_wqe(struct metaroce_qp *qp,
				    struct ibv_send_wr *wr,
				    struct metaroce_send_wqe *wqe)
{
	uint8_t *p;
	int i;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	/* imm_data and invalidate_rkey share storage in ibv_send_wr */
	wqe->ex_imm_data = wr->imm_data;

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->wr.atomic.swap = wr->wr.atomic.swap;
		wqe->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	default:
		if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
			wqe->wr.ud.ah_num = to_mah(wr->wr.ud.ah)->ah_num;
			wqe->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
			wqe->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		}
		break;
	}

	if (wr->opcode == IBV_WR_BIND_MW) {
		metaroce_build_bind(wqe, wr->bind_mw.rkey,
				    &wr->bind_mw.bind_info);
		return;
	}

	if (wr->send_flags & IBV_SEND_INLINE) {
		p = wqe->inline_data;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		wqe->inline_len = p - wqe->inline_data;
		return;
	}

	wqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->sge[i].addr = wr->sg_list[i].addr;
		wqe->sge[i].length = wr->sg_list[i].length;
		wqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/*
 * Tell the kernel the SQ has new WQEs: a POST_SEND command that carries no
 * work requests. The kernel reads the WQEs from the ring.
 */
static int metaroce_ring_doorbell(struct ibv_qp *ibqp)
{
	struct ib_uverbs_post_send_resp resp = {};
	struct ibv_post_send cmd = {};
	ssize_t n;

	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.response = (uintptr_t)&resp;
	cmd.qp_handle = ibqp->handle;
	cmd.wr_count = 0;
	cmd.sge_count = 0;
	/* the kernel insists on a sane WR size even for zero WRs */
	cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);

	n = write(ibqp->context->cmd_fd, &cmd, sizeof(cmd));
	if (n != sizeof(cmd))
		return n < 0 ? errno : EIO;

	return 0;
}

static int metaroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			      struct ibv_send_wr **bad_wr)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	struct metaroce_wq *sq = &qp->sq;
	uint32_t prod, room, posted = 0;
	int ret = 0, db;

	*bad_wr = NULL;

	if (!sq->ring.hdr || !metaroce_sq_open(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&sq->lock);

	prod = metaroce_prod_begin(&sq->ring, &room);

	for (; wr; wr = wr->next) {
		ret = metaroce_check_send_wr(qp, wr);
		if (ret)
			break;
		if (posted == room) {
			ret = ENOMEM;
			break;
		}

		metaroce_build_send_wqe(qp, wr,
					metaroce_ring_slot(&sq->ring,
							   prod + posted));
		posted++;
	}

	if (ret)
		*bad_wr = wr;
	if (posted)
		metaroce_prod_commit(&sq->ring, prod + posted);

	pthread_spin_unlock(&sq->lock);

	if (!posted)
		return ret;

	db = metaroce_ring_doorbell(ibqp);
	return ret ? ret : db;
}

/* ------------------------------------------------------- ibv_wr_* API */

/*
 * ibv_create_qp_ex QPs post with ibv_wr_start, one ibv_wr_<opcode> per WQE
 * followed by its ibv_wr_set_* calls, and ibv_wr_complete (publish all and
 * ring one doorbell) or ibv_wr_abort (publish nothing). The WQEs are the
 * ones post_send builds; the first error is kept and fails wr_complete,
 * which then publishes nothing either.
 */
static inline struct metaroce_qp *ex_to_mqp(struct ibv_qp_ex *ex)
{
	return container_of(ex, struct metaroce_qp, vqp.qp_ex);
}

static void metaroce_wr_start(struct ibv_qp_ex *ex)
{
	struct metaroce_qp *qp = ex_to_mqp(ex);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr_err = 0;
	qp->wr_n = 0;
	qp->wr_cur = NULL;
	if (!qp->sq.ring.hdr || !metaroce_sq_open(&qp->vqp.qp)) {
		qp->wr_err = EINVAL;
		return;
	}
	qp->wr_prod = metaroce_prod_begin(&qp->sq.ring, &qp->wr_room);
}

/* A new WQE for @opcode, or NULL (error recorded). */
static struct metaroce_send_wqe *metaroce_wr_new(struct ibv_qp_ex *ex,
						 enum ibv_wr_opcode opcode)
{
	struct metaroce_qp *qp = ex_to_mqp(ex);
	struct metaroce_send_wqe *wqe;

	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	if (!metaroce_opcode_ok(qp->vqp.qp.qp_type, opcode)) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	if (qp->wr_n == qp->wr_room) {
		qp->wr_err = ENOMEM;
		return NULL;
	}
	wqe = metaroce_ring_slot(&qp->sq.ring, qp->wr_prod + qp->wr_n);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = ex->wr_id;
	wqe->opcode = opcode;
	/* INLINE is set by set_inline_data, never taken from wr_flags */
	wqe->send_flags = ex->wr_flags & ~IBV_SEND_INLINE;
	qp->wr_n++;
	qp->wr_cur = wqe;
	return wqe;
}

static void metaroce_wr_send(struct ibv_qp_ex *ex)
{
	metaroce_wr_new(ex, IBV_WR_SEND);
}

static void metaroce_wr_send_imm(struct ibv_qp_ex *ex, __be32 imm_data)
{
	struct metaroce_send_wqe *wqe = metaroce_wr_new(ex,
							IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->ex_imm_data = imm_data;
}

static void metaroce_wr_send_inv(struct ibv_qp_ex *ex, uint32_t rkey)
{
	struct metaroce_send_wqe *wqe = metaroce_wr_new(ex,
							IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->ex_imm_data = rkey;
}

static void metaroce_wr_rdma(struct ibv_qp_ex *ex, enum ibv_wr_opcode op,
			     uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct metaroce_send_wqe *wqe = metaroce_wr_new(ex, op);

	if (!wqe)
		return;
	wqe->wr.rdma.remote_addr = addr;
	wqe->wr.rdma.rkey = rkey;
	wqe->ex_imm_data = imm;
}

static void metaroce_wr_rdma_write(struct ibv_qp_ex *ex, uint32_t rkey,
				   uint64_t addr)
{
	metaroce_wr_rdma(ex, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void metaroce_wr_rdma_write_imm(struct ibv_qp_ex *ex, uint32_t rkey,
				       uint64_t addr, __be32 imm)
{
	metaroce_wr_rdma(ex, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void metaroce_wr_rdma_read(struct ibv_qp_ex *ex, uint32_t rkey,
				  uint64_t addr)
{
	metaroce_wr_rdma(ex, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void metaroce_wr_atomic(struct ibv_qp_ex *ex, enum ibv_wr_opcode op,
			       uint32_t rkey, uint64_t addr,
			       uint64_t compare_add, uint64_t swap)
{
	struct metaroce_send_wqe *wqe = metaroce_wr_new(ex, op);

	if (!wqe)
		return;
	wqe->wr.atomic.remote_addr = addr;
	wqe->wr.atomic.compare_add = compare_add;
	wqe->wr.atomic.swap = swap;
	wqe->wr.atomic.rkey = rkey;
}

static void metaroce_wr_atomic_cmp_swp(struct ibv_qp_ex *ex, uint32_t rkey,
				       uint64_t addr, uint64_t compare,
				       uint64_t swap)
{
	metaroce_wr_atomic(ex, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare,
			   swap);
}

static void metaroce_wr_atomic_fetch_add(struct ibv_qp_ex *ex, uint32_t rkey,
					 uint64_t addr, uint64_t add)
{
	metaroce_wr_atomic(ex, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void metaroce_wr_local_inv(struct ibv_qp_ex *ex, uint32_t rkey)
{
	struct metaroce_send_wqe *wqe = metaroce_wr_new(ex, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->ex_imm_data = rkey;
}

static void metaroce_wr_bind_mw(struct ibv_qp_ex *ex, struct ibv_mw *mw,
				uint32_t rkey,
				const struct ibv_mw_bind_info *bind_info)
{
	struct metaroce_qp *qp = ex_to_mqp(ex);
	struct metaroce_send_wqe *wqe;

	if (!qp->wr_err && (!mw || mw->pd != qp->vqp.qp.pd ||
			    mw->type != IBV_MW_TYPE_2 ||
			    (rkey >> 8) != (mw->rkey >> 8))) {
		qp->wr_err = EINVAL;
		return;
	}
	wqe = metaroce_wr_new(ex, IBV_WR_BIND_MW);
	if (wqe)
		metaroce_build_bind(wqe, rkey, bind_info);
}

/* The WQE set_* applies to: one that carries data. */
static struct metaroce_send_wqe *metaroce_wr_data(struct ibv_qp_ex *ex)
{
	struct metaroce_qp *qp = ex_to_mqp(ex);

	if (qp->wr_err)
		return NULL;
	if (!qp->wr_cur || qp->wr_cur->opcode == IBV_WR_LOCAL_INV ||
	    qp->wr_cur->opcode == IBV_WR_BIND_MW) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	return qp->wr_cur;
}

static void metaroce_wr_set_sge_list(struct ibv_qp_ex *ex, size_t num_sge,
				     const struct ibv_sge *sg_list)
{
	struct metaroce_send_wqe *wqe = metaroce_wr_data(ex);
	struct metaroce_qp *qp = ex_to_mqp(ex);
	size_t i;

	if (!wqe)
		return;
	if (num_sge > qp->sq.max_sge ||
	    ((wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	      wqe->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) && num_sge != 1)) {
		qp->wr_err = EINVAL;
		return;
	}
	wqe->send_flags &= ~IBV_SEND_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = num_sge;
	for (i = 0; i < num_sge; i++) {
		wqe->sge[i].addr = sg_list[i].addr;
		wqe->sge[i].length = sg_list[i].length;
		wqe->sge[i].lkey = sg_list[i].lkey;
	}
}

static void metaroce_wr_set_sge(struct ibv_qp_ex *ex, uint32_t lkey,
				uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	metaroce_wr_set_sge_list(ex, 1, &sge);
}

static void metaroce_wr_set_inline_data_list(struct ibv_qp_ex *ex,
					     size_t num_buf,
					     const struct ibv_data_buf *buf)
{
	struct metaroce_send_wqe *wqe = metaroce_wr_data(ex);
	struct metaroce_qp *qp = ex_to_mqp(ex);
	size_t i, len = 0;

	if (!wqe)
		return;
	switch (wqe->opcode) {
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		qp->wr_err = EINVAL;
		return;
	default:
		break;
	}
	for (i = 0; i < num_buf; i++) {
		if (buf[i].length > qp->sq.max_inline - len) {
			qp->wr_err = ENOMEM;
			return;
		}
		memcpy(wqe->inline_data + len, buf[i].addr, buf[i].length);
		len += buf[i].length;
	}
	wqe->num_sge = 0;
	wqe->inline_len = len;
	wqe->send_flags |= IBV_SEND_INLINE;
}

static void metaroce_wr_set_inline_data(struct ibv_qp_ex *ex, void *addr,
					size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	metaroce_wr_set_inline_data_list(ex, 1, &buf);
}

static void metaroce_wr_set_ud_addr(struct ibv_qp_ex *ex, struct ibv_ah *ah,
				    uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct metaroce_qp *qp = ex_to_mqp(ex);
	struct metaroce_send_wqe *wqe = qp->wr_cur;

	if (qp->wr_err)
		return;
	if (!wqe || qp->vqp.qp.qp_type != IBV_QPT_UD || !ah) {
		qp->wr_err = EINVAL;
		return;
	}
	wqe->wr.ud.ah_num = to_mah(ah)->ah_num;
	wqe->wr.ud.remote_qpn = remote_qpn;
	wqe->wr.ud.remote_qkey = remote_qkey;
}

static int metaroce_wr_complete(struct ibv_qp_ex *ex)
{
	struct metaroce_qp *qp = ex_to_mqp(ex);
	int ret = qp->wr_err;
	uint32_t n = qp->wr_n;

	if (!ret && n)
		metaroce_prod_commit(&qp->sq.ring, qp->wr_prod + n);
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);

	if (ret || !n)
		return ret;
	return metaroce_ring_doorbell(&qp->vqp.qp);
}

static void metaroce_wr_abort(struct ibv_qp_ex *ex)
{
	struct metaroce_qp *qp = ex_to_mqp(ex);

	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

#define METAROCE_UD_SEND_OPS	(IBV_QP_EX_WITH_SEND |			\
				 IBV_QP_EX_WITH_SEND_WITH_IMM)
#define METAROCE_RC_SEND_OPS	(METAROCE_UD_SEND_OPS |			\
				 IBV_QP_EX_WITH_RDMA_WRITE |		\
				 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
				 IBV_QP_EX_WITH_RDMA_READ |		\
				 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |	\
				 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |	\
				 IBV_QP_EX_WITH_LOCAL_INV |		\
				 IBV_QP_EX_WITH_SEND_WITH_INV |		\
				 IBV_QP_EX_WITH_BIND_MW)
/* UC: no READ, atomics or SEND_WITH_INV (as rdma_rxe) */
#define METAROCE_UC_SEND_OPS	(METAROCE_UD_SEND_OPS |			\
				 IBV_QP_EX_WITH_RDMA_WRITE |		\
				 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
				 IBV_QP_EX_WITH_LOCAL_INV |		\
				 IBV_QP_EX_WITH_BIND_MW)

static void metaroce_set_send_ops(struct metaroce_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *ex = &qp->vqp.qp_ex;

	ex->wr_start = metaroce_wr_start;
	ex->wr_complete = metaroce_wr_complete;
	ex->wr_abort = metaroce_wr_abort;
	ex->wr_set_sge = metaroce_wr_set_sge;
	ex->wr_set_sge_list = metaroce_wr_set_sge_list;
	ex->wr_set_inline_data = metaroce_wr_set_inline_data;
	ex->wr_set_inline_data_list = metaroce_wr_set_inline_data_list;
	ex->wr_set_ud_addr = metaroce_wr_set_ud_addr;
	if (ops & IBV_QP_EX_WITH_SEND)
		ex->wr_send = metaroce_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		ex->wr_send_imm = metaroce_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		ex->wr_send_inv = metaroce_wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		ex->wr_rdma_write = metaroce_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		ex->wr_rdma_write_imm = metaroce_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		ex->wr_rdma_read = metaroce_wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		ex->wr_atomic_cmp_swp = metaroce_wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		ex->wr_atomic_fetch_add = metaroce_wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		ex->wr_local_inv = metaroce_wr_local_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		ex->wr_bind_mw = metaroce_wr_bind_mw;
}

/*
 * Say the QP has a struct ibv_qp_ex (ibv_qp_to_qp_ex() checks
 * verbs_qp.comp_mask). The provider is built against rdma-core 56.1
 * headers but runs under the distribution's libibverbs: before 45 (Debian
 * 12 has 44) struct ibv_qp_ex ended before wr_flush, so that library
 * reads comp_mask where these headers put wr_flush. Set both; wr_flush is
 * not offered (IBV_QP_EX_WITH_FLUSH is refused) and not called.
 */
static void metaroce_mark_qp_ex(struct metaroce_qp *qp)
{
	uint32_t *old_mask = (uint32_t *)((char *)&qp->vqp.qp_ex +
					  offsetof(struct ibv_qp_ex, wr_flush));

	qp->vqp.comp_mask |= VERBS_QP_EX;
	*old_mask |= VERBS_QP_EX;
}

static struct ibv_qp *metaroce_create_qp_ex(struct ibv_context *context,
					    struct ibv_qp_init_attr_ex *attr)
{
	struct umetaroce_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	struct metaroce_qp *qp;
	uint32_t comp_mask;
	uint64_t ops = 0;
	int ret;

	/* No create flags are supported; an empty set is fine. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS &&
	    attr->create_flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	comp_mask = attr->comp_mask;
	if (comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
				    IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
				    IBV_QP_INIT_ATTR_CREATE_FLAGS) ||
	    !(comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		ops = attr->send_ops_flags;
	switch (attr->qp_type) {
	case IBV_QPT_RC:
		ret = ops & ~(uint64_t)METAROCE_RC_SEND_OPS;
		break;
	case IBV_QPT_UC:
		ret = ops & ~(uint64_t)METAROCE_UC_SEND_OPS;
		break;
	case IBV_QPT_UD:
		ret = ops & ~(uint64_t)METAROCE_UD_SEND_OPS;
		break;
	default:
		ret = 1;
		break;
	}
	if (ret) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	attr->comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ret = ibv_cmd_create_qp_ex(context, &qp->vqp, attr, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp));
	attr->comp_mask = comp_mask;
	if (ret)
		goto err_free;

	ret = metaroce_map_qp(context, qp, &attr->cap, attr->srq,
			      &resp.drv_payload);
	if (ret)
		goto err_destroy;

	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);

	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		metaroce_set_send_ops(qp, ops);
		metaroce_mark_qp_ex(qp);
	}

	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

/* ------------------------------------------------------------------ AH */

static struct ibv_ah *metaroce_create_ah(struct ibv_pd *pd,
					 struct ibv_ah_attr *attr)
{
	struct umetaroce_create_ah_resp resp = {};
	struct metaroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}

	ah->ah_num = resp.ah_num;

	return &ah->ibv_ah;
}

static int metaroce_destroy_ah(struct ibv_ah *ibah)
{
	struct metaroce_ah *ah = to_mah(ibah);
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;

	free(ah);
	return 0;
}

/* ------------------------------------------------------ context/device */

static const struct verbs_context_ops metaroce_ctx_ops = {
	.query_device_ex = metaroce_query_device,
	.query_port = metaroce_query_port,
	.alloc_pd = metaroce_alloc_pd,
	.dealloc_pd = metaroce_dealloc_pd,
	.reg_mr = metaroce_reg_mr,
	.alloc_mw = metaroce_alloc_mw,
	.dealloc_mw = metaroce_dealloc_mw,
	.bind_mw = metaroce_bind_mw,
	.dereg_mr = metaroce_dereg_mr,
	.create_cq = metaroce_create_cq,
	.create_cq_ex = metaroce_create_cq_ex,
	.poll_cq = metaroce_poll_cq,
	.req_notify_cq = ibv_cmd_req_notify_cq,
	.resize_cq = metaroce_resize_cq,
	.destroy_cq = metaroce_destroy_cq,
	.create_srq = metaroce_create_srq,
	.modify_srq = metaroce_modify_srq,
	.query_srq = metaroce_query_srq,
	.destroy_srq = metaroce_destroy_srq,
	.post_srq_recv = metaroce_post_srq_recv,
	.create_qp = metaroce_create_qp,
	.create_qp_ex = metaroce_create_qp_ex,
	.query_qp = metaroce_query_qp,
	.modify_qp = metaroce_modify_qp,
	.destroy_qp = metaroce_destroy_qp,
	.post_send = metaroce_post_send,
	.post_recv = metaroce_post_recv,
	.create_ah = metaroce_create_ah,
	.destroy_ah = metaroce_destroy_ah,
	.attach_mcast = ibv_cmd_attach_mcast,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = metaroce_free_context,
};

static struct verbs_context *metaroce_alloc_context(struct ibv_device *ibdev,
						    int cmd_fd,
						    void *private_data)
{
	struct umetaroce_alloc_context_resp resp = {};
	struct metaroce_context *ctx;
	struct ibv_get_context cmd;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   METAROCE_DRIVER_ID);
	if (!ctx)
		return NULL;

	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err;

	if (resp.abi_version != METAROCE_UVERBS_ABI_VERSION ||
	    !(resp.caps & METAROCE_CAP_USER_QUEUES)) {
		verbs_err(&ctx->ibv_ctx,
			  "metaroce: kernel ABI %u caps 0x%x, need ABI %u with user queues\n",
			  resp.abi_version, resp.caps,
			  METAROCE_UVERBS_ABI_VERSION);
		ret = EPROTONOSUPPORT;
		goto err;
	}

	ctx->caps = resp.caps;
	ctx->max_inline_data = resp.max_inline_data;

	verbs_set_ops(&ctx->ibv_ctx, &metaroce_ctx_ops);

	return &ctx->ibv_ctx;

err:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static void metaroce_free_context(struct ibv_context *ibctx)
{
	struct metaroce_context *ctx = to_mctx(ibctx);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *metaroce_device_alloc(struct verbs_sysfs_dev *sdev)
{
	struct metaroce_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	dev->abi_version = sdev->abi_ver;

	return &dev->ibv_dev;
}

static void metaroce_uninit_device(struct verbs_device *verbs_device)
{
	free(to_mdev(&verbs_device->device));
}

static const struct verbs_device_ops metaroce_dev_ops = {
	.name = "metaroce",
	.match_min_abi_version = METAROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = METAROCE_UVERBS_ABI_VERSION,
	.match_table = hca_table,
	.alloc_device = metaroce_device_alloc,
	.uninit_device = metaroce_uninit_device,
	.alloc_context = metaroce_alloc_context,
};
PROVIDER_DRIVER(metaroce, metaroce_dev_ops);
