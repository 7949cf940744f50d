// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce: ib_device and its verbs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/module.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>

#include "verbs.h"

static int metaroce_query_device(struct ib_device *ibdev,
				 struct ib_device_attr *attr,
				 struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 0;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = METAROCE_MAX_MR_SIZE;
	attr->page_size_cap = METAROCE_PAGE_SIZE_CAP;
	attr->vendor_id = METAROCE_VENDOR_ID;
	attr->vendor_part_id = METAROCE_VENDOR_PART_ID;
	attr->hw_ver = METAROCE_HW_VER;
	attr->max_qp = METAROCE_MAX_QP;
	attr->max_qp_wr = METAROCE_MAX_QP_WR;
	/*
	 * Fast-register MRs, local invalidate and send with invalidate are
	 * served to kernel ULPs (nvme-rdma refuses devices without them).
	 */
	attr->device_cap_flags = METAROCE_DEVICE_CAP_FLAGS |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	metaroce_set_kernel_caps(attr);
	attr->max_send_sge = METAROCE_MAX_SGE;
	attr->max_recv_sge = METAROCE_MAX_SGE;
	attr->max_sge_rd = METAROCE_MAX_SGE_RD;
	attr->max_cq = METAROCE_MAX_CQ;
	attr->max_cqe = METAROCE_MAX_CQE;
	attr->max_mr = METAROCE_MAX_MR;
	attr->max_mw = METAROCE_MAX_MR;		/* shared with the MRs */
	attr->max_pd = METAROCE_MAX_PD;
	attr->max_qp_rd_atom = METAROCE_MAX_QP_RD_ATOM;
	attr->max_qp_init_rd_atom = METAROCE_MAX_QP_INIT_RD_ATOM;
	attr->max_res_rd_atom = METAROCE_MAX_RES_RD_ATOM;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = METAROCE_MAX_AH;
	attr->max_srq = METAROCE_MAX_SRQ;
	attr->max_srq_wr = METAROCE_MAX_SRQ_WR;
	attr->max_srq_sge = METAROCE_MAX_SRQ_SGE;
	attr->max_fast_reg_page_list_len = METAROCE_MAX_FAST_REG_PAGES;
	attr->max_pkeys = METAROCE_PKEY_TBL_LEN;
	attr->local_ca_ack_delay = 15;
	return 0;
}

static int metaroce_query_port(struct ib_device *ibdev, u32 port_num,
			       struct ib_port_attr *attr)
{
	struct metaroce_dev *mdev = to_mdev(ibdev);
	int err;

	/* *attr is zeroed by ib_core. */
	attr->state = READ_ONCE(mdev->port_state);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   METAROCE_PHYS_STATE_LINK_UP :
			   METAROCE_PHYS_STATE_DISABLED;
	attr->max_mtu = METAROCE_MAX_MTU;
	attr->active_mtu = READ_ONCE(mdev->active_mtu);
	attr->gid_tbl_len = METAROCE_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP |
			       METAROCE_PORT_IP_BASED_GIDS;
	attr->ip_gids = true;
	attr->max_msg_sz = METAROCE_MAX_MSG_SZ;
	attr->pkey_tbl_len = METAROCE_PKEY_TBL_LEN;
	attr->max_vl_num = 1;

	err = ib_get_eth_speed(ibdev, port_num, &attr->active_speed,
			       &attr->active_width);
	/* The netdev is going away; the device follows shortly. */
	if (err == -ENODEV) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
		err = 0;
	}
	return err;
}

static int metaroce_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				       struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int err;

	err = ib_query_port(ibdev, port_num, &attr);
	if (err)
		return err;

	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer metaroce_get_link_layer(struct ib_device *ibdev,
						    u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int metaroce_query_pkey(struct ib_device *ibdev, u32 port_num,
			       u16 index, u16 *pkey)
{
	if (index >= METAROCE_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = METAROCE_DEFAULT_PKEY;
	return 0;
}

static int metaroce_alloc_ucontext(struct ib_ucontext *ibuc,
				   struct ib_udata *udata)
{
	struct metaroce_alloc_context_resp resp = {
		.abi_version = METAROCE_UVERBS_ABI_VERSION,
		.caps = METAROCE_CONTEXT_CAPS,
		.max_inline_data = METAROCE_MAX_INLINE_DATA,
	};

	/* The provider must ask for (at least) the whole response. */
	if (udata->outlen < sizeof(resp))
		return -EINVAL;

	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

static void metaroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * The device goes away (rdma link delete, netdev unregistered, netns
 * exit, rmmod) while processes have it open: ib_core destroys their
 * objects now instead of waiting for them to exit, and their commands
 * fail with EIO from then on. Nothing more to do here: a ring a process
 * still has mapped keeps its pages (the mapping holds a reference on
 * each) until it is unmapped, and no code of ours runs for it.
 */
static void metaroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int metaroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct metaroce_dev *mdev = to_mdev(ibpd->device);

	if (atomic_inc_return(&mdev->num_pd) > METAROCE_MAX_PD) {
		atomic_dec(&mdev->num_pd);
		return -ENOMEM;
	}
	return 0;
}

static int metaroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_mdev(ibpd->device)->num_pd);
	return 0;
}

static struct rdma_hw_stats *metaroce_alloc_hw_port_stats(struct ib_device *ibdev,
							  u32 port_num)
{
	return rdma_alloc_hw_stats_struct(metaroce_tp_stat_descs, TP_STAT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int metaroce_get_hw_stats(struct ib_device *ibdev,
				 struct rdma_hw_stats *stats,
				 u32 port_num, int index)
{
	struct metaroce_dev *mdev = to_mdev(ibdev);
	int i;

	for (i = 0; i < TP_STAT_MAX; i++)
		stats->value[i] = atomic64_read(&mdev->tp_stats[i]);
	return TP_STAT_MAX;
}

/*
 * Count and name what is left in a table at unregistration: live entries
 * and reserved ones (a reference or error-path leak). Not xa_empty():
 * when a node allocation fails inside xa_alloc_cyclic(), the nodes already
 * linked above it stay, empty, until xa_destroy() (lib/xarray.c
 * xas_create()), so a table can be non-empty with nothing in it.
 */
static unsigned int metaroce_report_left(struct xarray *xa, const char *what)
{
	XA_STATE(xas, xa, 0);
	unsigned int n = 0;
	void *p;

	xa_lock_irq(xa);
	xas_for_each(&xas, p, ULONG_MAX) {
		pr_err("%s %lu %sleft at unregistration\n", what, xas.xa_index,
		       xa_is_zero(p) ? "(reserved) " : "");
		n++;
	}
	xa_unlock_irq(xa);
	return n;
}

/* Last op called on the device, from its unregistration or failed add. */
static void metaroce_dealloc_driver(struct ib_device *ibdev)
{
	struct metaroce_dev *mdev = to_mdev(ibdev);

	metaroce_udp_put(mdev->udp);
	mdev->udp = NULL;
	/* Every object is gone by now (ib_core destroyed them first). */
	WARN_ON(metaroce_report_left(&mdev->qps, "QP") +
		metaroce_report_left(&mdev->mrs, "MR") +
		metaroce_report_left(&mdev->ahs, "AH") +
		metaroce_report_left(&mdev->srqs, "SRQ"));
	xa_destroy(&mdev->qps);
	xa_destroy(&mdev->mrs);
	xa_destroy(&mdev->ahs);
	xa_destroy(&mdev->srqs);
}

METAROCE_CREATE_CQ_OP(metaroce_create_cq)

static int metaroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	return metaroce_tp_fill_res_qp(msg, to_mqp(ibqp));
}

static const struct ib_device_ops metaroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = METAROCE_RDMA_DRIVER_ID,
	.uverbs_abi_ver = METAROCE_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = metaroce_alloc_hw_port_stats,
	.alloc_mr = metaroce_alloc_mr,
	.alloc_mw = metaroce_alloc_mw,
	.alloc_pd = metaroce_alloc_pd,
	.alloc_ucontext = metaroce_alloc_ucontext,
	.create_ah = metaroce_create_ah,
	.create_cq = metaroce_create_cq_op,
	.create_qp = metaroce_create_qp,
	.create_srq = metaroce_create_srq,
	.create_user_ah = metaroce_create_ah,
	.dealloc_driver = metaroce_dealloc_driver,
	.dealloc_mw = metaroce_dealloc_mw,
	.dealloc_pd = metaroce_dealloc_pd,
	.dealloc_ucontext = metaroce_dealloc_ucontext,
	.dereg_mr = metaroce_dereg_mr,
	.disassociate_ucontext = metaroce_disassociate_ucontext,
	.destroy_ah = metaroce_destroy_ah,
	.destroy_cq = metaroce_destroy_cq,
	.destroy_qp = metaroce_destroy_qp,
	.destroy_srq = metaroce_destroy_srq,
	.fill_res_qp_entry = metaroce_fill_res_qp_entry,
	.get_dma_mr = metaroce_get_dma_mr,
	.get_hw_stats = metaroce_get_hw_stats,
	.get_link_layer = metaroce_get_link_layer,
	.get_port_immutable = metaroce_get_port_immutable,
	.map_mr_sg = metaroce_map_mr_sg,
	.mmap = metaroce_mmap,
	.mmap_free = metaroce_mmap_free,
	.modify_qp = metaroce_modify_qp,
	.modify_srq = metaroce_modify_srq,
	.poll_cq = metaroce_poll_cq,
	.post_recv = metaroce_post_recv,
	.post_send = metaroce_post_send,
	.post_srq_recv = metaroce_post_srq_recv,
	.query_ah = metaroce_query_ah,
	.query_device = metaroce_query_device,
	.query_pkey = metaroce_query_pkey,
	.query_port = metaroce_query_port,
	.query_qp = metaroce_query_qp,
	.query_srq = metaroce_query_srq,
	.reg_user_mr = metaroce_reg_user_mr,
	.req_notify_cq = metaroce_req_notify_cq,
	.resize_cq = metaroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, metaroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, metaroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, metaroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, metaroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, metaroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, metaroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, metaroce_ucontext, ibuc),
};

/**
 * metaroce_dev_alloc - allocate a device bound to @ndev
 * @ndev: Ethernet net device, held by the caller
 *
 * Takes a reference on the UDP sockets of @ndev's namespace.
 * Return: the device (free with ib_dealloc_device()) or an ERR_PTR.
 */
struct metaroce_dev *metaroce_dev_alloc(struct net_device *ndev)
{
	struct metaroce_dev *mdev;
	struct metaroce_udp *udp;

	udp = metaroce_udp_get(dev_net(ndev));
	if (IS_ERR(udp))
		return ERR_CAST(udp);

	mdev = ib_alloc_device(metaroce_dev, ibdev);
	if (!mdev) {
		metaroce_udp_put(udp);
		return ERR_PTR(-ENOMEM);
	}

	mdev->ndev = ndev;
	mdev->udp = udp;
	mdev->port_state = metaroce_netdev_port_state(ndev);
	mdev->active_mtu = metaroce_mtu_from_netdev(ndev);
	atomic_set(&mdev->num_pd, 0);
	atomic64_set(&mdev->rx_packets, 0);
	xa_init_flags(&mdev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&mdev->mrs, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&mdev->ahs, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&mdev->srqs, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	atomic_set(&mdev->mr_key_seq, get_random_u32());
	atomic_set(&mdev->num_qp, 0);
	atomic_set(&mdev->num_cq, 0);
	atomic_set(&mdev->num_mr, 0);
	atomic_set(&mdev->num_srq, 0);
	atomic_set(&mdev->num_ah, 0);
	spin_lock_init(&mdev->atomic_lock);
	return mdev;
}

/**
 * metaroce_dev_register - register @mdev with ib_core as @name
 * @mdev: from metaroce_dev_alloc()
 * @name: ib device name
 *
 * On failure @mdev is freed. On success it belongs to ib_core and may be
 * freed at any time by a concurrent unregistration.
 */
int metaroce_dev_register(struct metaroce_dev *mdev, const char *name)
{
	struct ib_device *ibdev = &mdev->ibdev;
	int err;

	strscpy(ibdev->node_desc, METAROCE_NODE_DESC,
		sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    mdev->ndev->dev_addr);

	/*
	 * ib_core enables the common commands by default; add the data-path
	 * ones so the provider can fall back to them.
	 */
	ibdev->uverbs_cmd_mask |=
		BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
		BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
		BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV) |
		BIT_ULL(IB_USER_VERBS_CMD_POLL_CQ) |
		BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
		BIT_ULL(IB_USER_VERBS_CMD_CREATE_QP) |
		BIT_ULL(IB_USER_VERBS_CMD_MODIFY_QP) |
		BIT_ULL(IB_USER_VERBS_CMD_QUERY_QP) |
		BIT_ULL(IB_USER_VERBS_CMD_DESTROY_QP) |
		BIT_ULL(IB_USER_VERBS_CMD_CREATE_CQ) |
		BIT_ULL(IB_USER_VERBS_CMD_RESIZE_CQ) |
		BIT_ULL(IB_USER_VERBS_CMD_DESTROY_CQ) |
		BIT_ULL(IB_USER_VERBS_CMD_CREATE_SRQ) |
		BIT_ULL(IB_USER_VERBS_CMD_MODIFY_SRQ) |
		BIT_ULL(IB_USER_VERBS_CMD_QUERY_SRQ) |
		BIT_ULL(IB_USER_VERBS_CMD_DESTROY_SRQ) |
		BIT_ULL(IB_USER_VERBS_CMD_REG_MR) |
		BIT_ULL(IB_USER_VERBS_CMD_DEREG_MR) |
		BIT_ULL(IB_USER_VERBS_CMD_CREATE_AH) |
		BIT_ULL(IB_USER_VERBS_CMD_DESTROY_AH);

	ib_set_device_ops(ibdev, &metaroce_dev_ops);

	err = ib_device_set_netdev(ibdev, mdev->ndev, METAROCE_PORT);
	if (err)
		goto err_free;

	/* No DMA device: ib_core uses virtual addresses, like rxe/siw. */
	err = ib_register_device(ibdev, name, NULL);
	if (err)
		goto err_free;
	return 0;

err_free:
	/* Calls metaroce_dealloc_driver() and drops the netdev ref. */
	ib_dealloc_device(ibdev);
	return err;
}
