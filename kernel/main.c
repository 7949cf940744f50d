// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce: module init/exit, "rdma link" type and netdev notifier.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>

#include "metaroce.h"
#include "obj.h"

/* Serialises newlink so two racing adds cannot both pass the checks. */
static DEFINE_MUTEX(metaroce_link_mutex);

/**
 * metaroce_get_dev_by_netdev - find the registered device bound to @ndev
 * @ndev: net device
 *
 * Safe from any context. Return: the device with a reference held
 * (release with ib_device_put()), or NULL.
 */
struct metaroce_dev *metaroce_get_dev_by_netdev(struct net_device *ndev)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_netdev(ndev, METAROCE_RDMA_DRIVER_ID);
	return ibdev ? to_mdev(ibdev) : NULL;
}

static bool metaroce_netdev_has_ipv6(struct net_device *ndev)
{
	bool ret = false;
#if IS_ENABLED(CONFIG_IPV6)
	struct inet6_dev *idev;

	rcu_read_lock();
	idev = __in6_dev_get(ndev);
	ret = idev && !READ_ONCE(idev->cnf.disable_ipv6);
	rcu_read_unlock();
#endif
	return ret;
}

/**
 * metaroce_mtu_from_netdev - largest IB MTU whose packets fit @ndev
 * @ndev: net device
 *
 * Accounts for IP (IPv6 when enabled on @ndev, since its GIDs are then
 * usable), UDP, the metaroce header and the ICRC.
 */
enum ib_mtu metaroce_mtu_from_netdev(struct net_device *ndev)
{
	int overhead = metaroce_netdev_has_ipv6(ndev) ?
		       METAROCE_HDR_OVERHEAD_V6 : METAROCE_HDR_OVERHEAD;
	int payload = (int)READ_ONCE(ndev->mtu) - overhead;
	enum ib_mtu mtu;

	for (mtu = METAROCE_MAX_MTU; mtu > IB_MTU_256; mtu--)
		if (ib_mtu_enum_to_int(mtu) <= payload)
			break;
	return mtu;
}

enum ib_port_state metaroce_netdev_port_state(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev) ?
	       IB_PORT_ACTIVE : IB_PORT_DOWN;
}

static void metaroce_port_event(struct metaroce_dev *mdev,
				enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &mdev->ibdev,
		.element.port_num = METAROCE_PORT,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/* Re-read the netdev state; raise a port event on a transition. */
static void metaroce_port_update(struct metaroce_dev *mdev)
{
	int state = metaroce_netdev_port_state(mdev->ndev);

	if (xchg(&mdev->port_state, state) == state)
		return;

	if (state == IB_PORT_ACTIVE) {
		metaroce_port_event(mdev, IB_EVENT_PORT_ACTIVE);
		ibdev_info(&mdev->ibdev, "port active\n");
	} else {
		metaroce_port_event(mdev, IB_EVENT_PORT_ERR);
		ibdev_info(&mdev->ibdev, "port down\n");
	}
}

static void metaroce_mtu_update(struct metaroce_dev *mdev)
{
	enum ib_mtu mtu = metaroce_mtu_from_netdev(mdev->ndev);

	if (xchg(&mdev->active_mtu, mtu) != mtu)
		ibdev_info(&mdev->ibdev, "netdev mtu %u -> active mtu %d\n",
			   mdev->ndev->mtu, ib_mtu_enum_to_int(mtu));
}

static int metaroce_netdev_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct metaroce_dev *mdev;

	mdev = metaroce_get_dev_by_netdev(ndev);
	if (!mdev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* Also sent when ndev moves to another namespace. */
		ibdev_info(&mdev->ibdev, "netdev %s unregistering\n",
			   ndev->name);
		ib_unregister_device_queued(&mdev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		metaroce_mtu_update(mdev);
		metaroce_port_update(mdev);
		break;
	case NETDEV_CHANGEMTU:
		metaroce_mtu_update(mdev);
		break;
	default:
		break;
	}

	ib_device_put(&mdev->ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block metaroce_netdev_notifier = {
	.notifier_call = metaroce_netdev_event,
};

static int metaroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct metaroce_dev *mdev;
	struct ib_device *ibdev;
	int err;

	/* rdma_link_ops has no extack on this kernel: say why in dmesg. */
	if (ndev->flags & IFF_LOOPBACK) {
		pr_info("%s: %s is a loopback device, not supported\n",
			ibdev_name, ndev->name);
		return -EOPNOTSUPP;
	}
	if (ndev->type != ARPHRD_ETHER) {
		pr_info("%s: %s is not an Ethernet device (type %u), not supported\n",
			ibdev_name, ndev->name, ndev->type);
		return -EOPNOTSUPP;
	}

	mutex_lock(&metaroce_link_mutex);

	/* ib_core would refuse it too, but with -ENFILE. */
	ibdev = ib_device_get_by_name(ibdev_name, RDMA_DRIVER_UNKNOWN);
	if (ibdev) {
		pr_info("%s: an RDMA device of that name exists\n", ibdev_name);
		ib_device_put(ibdev);
		err = -EEXIST;
		goto out;
	}

	mdev = metaroce_get_dev_by_netdev(ndev);
	if (mdev) {
		pr_info("%s: %s already has metaroce device %s\n",
			ibdev_name, ndev->name, dev_name(&mdev->ibdev.dev));
		ib_device_put(&mdev->ibdev);
		err = -EEXIST;
		goto out;
	}

	mdev = metaroce_dev_alloc(ndev);
	if (IS_ERR(mdev)) {
		err = PTR_ERR(mdev);
		goto out;
	}

	/* On failure the device was freed (with its socket reference). */
	err = metaroce_dev_register(mdev, ibdev_name);
	if (err) {
		pr_info("%s: cannot register on %s: %d\n",
			ibdev_name, ndev->name, err);
		goto out;
	}

	/*
	 * ndev may have started unregistering, or changed state, after the
	 * device took its snapshot and before the notifier could find the
	 * device. Under RTNL the notifier cannot run: catch up here.
	 */
	rtnl_lock();
	mdev = metaroce_get_dev_by_netdev(ndev);
	if (mdev) {
		if (ndev->reg_state != NETREG_REGISTERED) {
			ib_unregister_device_queued(&mdev->ibdev);
			err = -ENODEV;
		} else {
			metaroce_mtu_update(mdev);
			metaroce_port_update(mdev);
			ibdev_info(&mdev->ibdev,
				   "added on %s (udp port %u, mtu %d)\n",
				   ndev->name, metaroce_udp_port,
				   ib_mtu_enum_to_int(mdev->active_mtu));
		}
		ib_device_put(&mdev->ibdev);
	}
	rtnl_unlock();
out:
	mutex_unlock(&metaroce_link_mutex);
	return err;
}

static struct rdma_link_ops metaroce_link_ops = {
	.type = METAROCE_DRV_NAME,
	.newlink = metaroce_newlink,
};

static int __init metaroce_init(void)
{
	int err;

	err = metaroce_tp_init();
	if (err)
		return err;

	err = metaroce_net_init();
	if (err)
		goto err_tp;

	err = register_netdevice_notifier(&metaroce_netdev_notifier);
	if (err)
		goto err_net;

	rdma_link_register(&metaroce_link_ops);
	pr_info("loaded (udp port %u)\n", metaroce_udp_port);
	return 0;

err_net:
	metaroce_net_exit();
err_tp:
	metaroce_tp_exit();
	return err;
}

static void __exit metaroce_exit(void)
{
	/* No new devices past this point (waits for running newlinks). */
	rdma_link_unregister(&metaroce_link_ops);
	/* Unregisters every device, queued unregistrations included. */
	ib_unregister_driver(METAROCE_RDMA_DRIVER_ID);
	unregister_netdevice_notifier(&metaroce_netdev_notifier);
	metaroce_net_exit();
	metaroce_tp_exit();
	pr_info("unloaded\n");
}

/* After ib_core and the IP stack, like rxe. */
late_initcall(metaroce_init);
module_exit(metaroce_exit);

MODULE_AUTHOR("metaroce authors");
MODULE_DESCRIPTION("metaroce: loss-tolerant soft-RDMA over UDP");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK("metaroce");
MODULE_SOFTDEP("pre: ib_uverbs");
