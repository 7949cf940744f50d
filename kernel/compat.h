/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metaroce: every kernel-version specific detail lives here.
 *
 * Supported: 6.1 (Debian 12) and 6.12 (Debian 12's bookworm-security and
 * bookworm-backports, Debian 13). Later kernels are added here, not by
 * sprinkling version checks through the driver.
 */
#ifndef METAROCE_COMPAT_H
#define METAROCE_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/uverbs_ioctl.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "metaroce needs Linux 6.1 or later"
#endif

/*
 * 6.0 moved IB_DEVICE_ALLOW_USER_UNREG and friends from
 * device_cap_flags to kernel_cap_flags (IBK_*).
 */
static inline void metaroce_set_kernel_caps(struct ib_device_attr *attr)
{
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
}

/*
 * ib_device_ops.create_cq: 6.11 passes the uverbs attribute bundle (NULL
 * for kernel CQs) where 6.1 passes the udata. METAROCE_CREATE_CQ_OP(fn)
 * defines fn##_op, the op, around fn, which takes the udata.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define METAROCE_CREATE_CQ_OP(fn)					\
static int fn##_op(struct ib_cq *ibcq,					\
		   const struct ib_cq_init_attr *attr,			\
		   struct uverbs_attr_bundle *attrs)			\
{									\
	return fn(ibcq, attr, attrs ? &attrs->driver_udata : NULL);	\
}
#else
#define METAROCE_CREATE_CQ_OP(fn)					\
static int fn##_op(struct ib_cq *ibcq,					\
		   const struct ib_cq_init_attr *attr,			\
		   struct ib_udata *udata)				\
{									\
	return fn(ibcq, attr, udata);					\
}
#endif

/*
 * port_cap_flags bit 26: IP-based GIDs. Only the uverbs name exists
 * (ib_verbs.h has no IB_PORT_ alias for it).
 */
#define METAROCE_PORT_IP_BASED_GIDS	IB_UVERBS_PCF_IP_BASED_GIDS

/* Values of ib_port_attr.phys_state (IBTA 14.2.5.6). */
#define METAROCE_PHYS_STATE_LINK_UP	IB_PORT_PHYS_STATE_LINK_UP
#define METAROCE_PHYS_STATE_DISABLED	IB_PORT_PHYS_STATE_DISABLED

/*
 * The driver id is outside enum rdma_driver_id's named range on every
 * kernel; the enum is open-ended so the cast is well defined.
 */
#define METAROCE_RDMA_DRIVER_ID	((enum rdma_driver_id)METAROCE_DRIVER_ID)

#endif /* METAROCE_COMPAT_H */
