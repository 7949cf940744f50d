/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metaroce: soft-RDMA device with a loss-tolerant RoCE-like transport.
 *
 * Device structure and the limits the data path honours.
 */
#ifndef METAROCE_H
#define METAROCE_H

#include <linux/atomic.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <uapi/rdma/metaroce-abi.h>

#include "compat.h"

#define METAROCE_DRV_NAME	"metaroce"

/* Default UDP destination port (deliberately not RoCEv2's 4791). */
#define METAROCE_DEFAULT_UDP_PORT	19791

/*
 * Per-packet overhead between the netdev MTU and the RDMA payload:
 * IPv4 header + UDP header + metaroce header + ICRC. IPv6 headers are
 * 20 bytes longer.
 */
#define METAROCE_HDR_OVERHEAD		(20 + 8 + 64 + 4)
#define METAROCE_HDR_OVERHEAD_V6	(METAROCE_HDR_OVERHEAD + 40 - 20)

/* Identity. */
#define METAROCE_HW_VER			1
#define METAROCE_NODE_DESC		"metaroce"

/* Port. */
#define METAROCE_PORT			1
#define METAROCE_GID_TBL_LEN		1024
#define METAROCE_PKEY_TBL_LEN		1
#define METAROCE_DEFAULT_PKEY		0xffff
#define METAROCE_MAX_MSG_SZ		0x80000000U	/* 2 GiB */
#define METAROCE_MAX_MTU		IB_MTU_4096

/* Device limits, enforced by the verbs and the data path. */
#define METAROCE_MAX_MR_SIZE		(1ULL << 40)
#define METAROCE_PAGE_SIZE_CAP		0xfffff000U	/* 4 KiB .. 2 GiB */
#define METAROCE_MAX_QP			4096
#define METAROCE_MAX_QP_WR		16384
#define METAROCE_MAX_SGE		32
#define METAROCE_MAX_SGE_RD		32
#define METAROCE_MAX_INLINE_DATA	256
#define METAROCE_MAX_CQ			16384
#define METAROCE_MAX_CQE		65535
#define METAROCE_MAX_MR			65536
#define METAROCE_MAX_PD			65536
#define METAROCE_MAX_SRQ		4096
#define METAROCE_MAX_SRQ_WR		16384
#define METAROCE_MAX_SRQ_SGE		32
#define METAROCE_MAX_QP_RD_ATOM		16
#define METAROCE_MAX_QP_INIT_RD_ATOM	16
#define METAROCE_MAX_RES_RD_ATOM	(METAROCE_MAX_QP * METAROCE_MAX_QP_RD_ATOM)
#define METAROCE_MAX_AH			65536
#define METAROCE_MAX_FAST_REG_PAGES	512

#define METAROCE_DEVICE_CAP_FLAGS	(IB_DEVICE_SYS_IMAGE_GUID | \
					 IB_DEVICE_RC_RNR_NAK_GEN | \
					 IB_DEVICE_SRQ_RESIZE)

/* Advertised to the provider in metaroce_alloc_context_resp.caps. */
#define METAROCE_CONTEXT_CAPS		METAROCE_CAP_USER_QUEUES

struct metaroce_udp;

/* Room for the transport's counters (enum metaroce_tp_stat). */
#define METAROCE_TP_NSTATS		40

struct metaroce_dev {
	struct ib_device ibdev;
	/*
	 * Held (dev_hold) by ib_core through ib_device_set_netdev() for the
	 * whole life of the ib_device, so it stays valid until dealloc.
	 */
	struct net_device *ndev;
	/* UDP sockets of ndev's network namespace (refcounted). */
	struct metaroce_udp *udp;

	/* enum ib_port_state, updated by the netdev notifier. */
	int port_state;
	/* enum ib_mtu, follows the netdev MTU. */
	int active_mtu;

	atomic_t num_pd;
	atomic64_t rx_packets;
	/* transport counters, enum metaroce_tp_stat (transport.h) */
	atomic64_t tp_stats[METAROCE_TP_NSTATS];

	/*
	 * Object tables (XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ): lookups from
	 * the data path take the xa_lock and a reference on the object, so
	 * destroy (xa_erase + wait for the references) never races them.
	 */
	struct xarray qps;		/* qp_num -> metaroce_qp */
	struct xarray mrs;		/* key >> 8 -> metaroce_mr */
	struct xarray ahs;		/* ah_num -> metaroce_ah */
	struct xarray srqs;		/* srq_num -> metaroce_srq */
	u32 qp_next, mr_next, ah_next, srq_next;	/* cyclic cursors */
	atomic_t mr_key_seq;		/* 8-bit key part of new MRs */

	/* Object counts, against the METAROCE_MAX_* limits. */
	atomic_t num_qp;
	atomic_t num_cq;
	atomic_t num_mr;
	atomic_t num_srq;
	atomic_t num_ah;

	/* Serialises every atomic operation on the device's MRs. */
	spinlock_t atomic_lock;
};

struct metaroce_ucontext {
	struct ib_ucontext ibuc;
};

struct metaroce_pd {
	struct ib_pd ibpd;
};

static inline struct metaroce_dev *to_mdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct metaroce_dev, ibdev);
}

/* main.c */
struct metaroce_dev *metaroce_get_dev_by_netdev(struct net_device *ndev);
enum ib_mtu metaroce_mtu_from_netdev(struct net_device *ndev);
enum ib_port_state metaroce_netdev_port_state(struct net_device *ndev);

/* net.c */
extern unsigned short metaroce_udp_port;
int metaroce_net_init(void);
void metaroce_net_exit(void);
struct metaroce_udp *metaroce_udp_get(struct net *net);
void metaroce_udp_put(struct metaroce_udp *udp);
int metaroce_udp_recv(struct sk_buff *skb);

/* verbs.c */
struct metaroce_dev *metaroce_dev_alloc(struct net_device *ndev);
int metaroce_dev_register(struct metaroce_dev *mdev, const char *name);

#endif /* METAROCE_H */
