// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce: per network namespace UDP sockets.
 *
 * Every namespace that has at least one metaroce device owns one IPv4 and
 * (when IPv6 is available) one IPv6 UDP tunnel socket bound to udp_port.
 * The sockets are created when the first device of the namespace is added
 * and released when the last one goes, or when the namespace exits.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>
#include <net/ipv6_stubs.h>
#include <linux/inetdevice.h>
#include <linux/if_vlan.h>

#include "obj.h"

unsigned short metaroce_udp_port = METAROCE_DEFAULT_UDP_PORT;
module_param_named(udp_port, metaroce_udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port,
		 "UDP destination port of the metaroce transport (default 19791; deliberately not RoCEv2's 4791, so metaroce and rxe/RoCE NICs can share a host)");

/*
 * Shared by the devices of one namespace. Devices hold a reference; the
 * namespace points at it while alive. All fields are protected by
 * metaroce_net_mutex; transmit reads sk4/sk6 under RCU
 * (metaroce_udp_sk()), and a socket is unpublished and a grace period
 * waited for before it is released: the namespace may exit while devices
 * whose unregistration is still queued transmit.
 */
struct metaroce_udp {
	unsigned int users;
	struct socket __rcu *sk4;
	struct socket __rcu *sk6;
	struct metaroce_net *mn;	/* NULL once the namespace exited */
};

struct metaroce_net {
	struct metaroce_udp *udp;
};

static unsigned int metaroce_net_id __read_mostly;
static DEFINE_MUTEX(metaroce_net_mutex);

static int metaroce_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	return metaroce_udp_recv(skb);
}

/*
 * The metaroce device of @ndev: the one bound to it, or else to the real
 * device under a VLAN stacked on it. ib_core puts the addresses of the
 * VLANs on top of the bound netdev into the GID table, so their packets
 * arrive on the VLAN device (rdma_rxe takes them as its own too). Called
 * under rcu_read_lock(); ib_device_get_by_netdev() needs no reference on
 * the netdevs.
 */
static struct metaroce_dev *metaroce_dev_of(struct net_device *ndev)
{
	struct metaroce_dev *mdev;

	if (!ndev)
		return NULL;
	mdev = metaroce_get_dev_by_netdev(ndev);
	/* never true without CONFIG_VLAN_8021Q (the helper is a stub then) */
	if (!mdev && is_vlan_dev(ndev))
		mdev = metaroce_get_dev_by_netdev(vlan_dev_real_dev(ndev));
	return mdev;
}

/*
 * The device a packet is for. Packets between two QPs of one host come in
 * on the loopback device: find the netdev that owns the destination.
 */
static struct metaroce_dev *metaroce_rx_dev(struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct metaroce_dev *mdev;

	if (!ndev)
		return NULL;
	rcu_read_lock();
	if (ndev->flags & IFF_LOOPBACK) {
		ndev = NULL;
		if (skb->protocol == htons(ETH_P_IP))
			ndev = __ip_dev_find(dev_net(skb->dev),
					     ip_hdr(skb)->daddr, false);
#if IS_ENABLED(CONFIG_IPV6)
		else if (skb->protocol == htons(ETH_P_IPV6) &&
			 ipv6_stub->ipv6_dev_find)
			ndev = ipv6_stub->ipv6_dev_find(dev_net(skb->dev),
							&ipv6_hdr(skb)->daddr,
							NULL);
#endif
	}
	mdev = metaroce_dev_of(ndev);
	rcu_read_unlock();
	return mdev;
}

/*
 * Called from the UDP receive path (softirq, RCU read side) for every
 * datagram to udp_port (skb->data at the UDP header): hand the payload to
 * the transport of the receiving device.
 */
int metaroce_udp_recv(struct sk_buff *skb)
{
	struct metaroce_dev *mdev;

	mdev = metaroce_rx_dev(skb);
	if (!mdev || !pskb_may_pull(skb, sizeof(struct udphdr))) {
		if (mdev)
			ib_device_put(&mdev->ibdev);
		kfree_skb(skb);
		return 0;
	}
	atomic64_inc(&mdev->rx_packets);
	__skb_pull(skb, sizeof(struct udphdr));
	metaroce_tp_rx(mdev, skb);
	ib_device_put(&mdev->ibdev);
	return 0;
}

/**
 * metaroce_udp_sk - the UDP socket to transmit from
 * @udp: the device's namespace sockets
 * @family: AF_INET or AF_INET6
 *
 * The caller holds rcu_read_lock() for as long as it uses the socket.
 * Return: the socket, or NULL if that family has none (or no more: the
 * namespace exited).
 */
struct sock *metaroce_udp_sk(struct metaroce_udp *udp, int family)
{
	struct socket *sock;

	if (!udp)
		return NULL;
	sock = family == AF_INET6 ? rcu_dereference(udp->sk6) :
				    rcu_dereference(udp->sk4);
	return sock ? sock->sk : NULL;
}

static struct socket *metaroce_sock_create(struct net *net, bool ipv6)
{
	struct udp_tunnel_sock_cfg tnl_cfg = {};
	struct udp_port_cfg udp_cfg = {};
	struct socket *sock;
	int err;

	if (ipv6) {
		udp_cfg.family = AF_INET6;
		udp_cfg.ipv6_v6only = 1;
	} else {
		udp_cfg.family = AF_INET;
	}
	udp_cfg.local_udp_port = htons(metaroce_udp_port);

	err = udp_sock_create(net, &udp_cfg, &sock);
	if (err)
		return ERR_PTR(err);

	tnl_cfg.encap_type = 1;
	tnl_cfg.encap_rcv = metaroce_encap_recv;
	setup_udp_tunnel_sock(net, sock, &tnl_cfg);

	return sock;
}

/* Unpublish the sockets, wait for transmitters using them, release. */
static void metaroce_udp_release_socks(struct metaroce_udp *udp)
{
	struct socket *sk4, *sk6;

	sk4 = rcu_dereference_protected(udp->sk4,
					lockdep_is_held(&metaroce_net_mutex));
	sk6 = rcu_dereference_protected(udp->sk6,
					lockdep_is_held(&metaroce_net_mutex));
	RCU_INIT_POINTER(udp->sk4, NULL);
	RCU_INIT_POINTER(udp->sk6, NULL);
	if (!sk4 && !sk6)
		return;
	synchronize_rcu();
	if (sk6)
		udp_tunnel_sock_release(sk6);
	if (sk4)
		udp_tunnel_sock_release(sk4);
}

/**
 * metaroce_udp_get - take a reference on the UDP sockets of @net
 * @net: network namespace of the device's netdev
 *
 * Creates the sockets if this is the namespace's first device.
 * Return: the shared socket state or an ERR_PTR.
 */
struct metaroce_udp *metaroce_udp_get(struct net *net)
{
	struct metaroce_net *mn = net_generic(net, metaroce_net_id);
	struct metaroce_udp *udp;
	struct socket *sock;

	mutex_lock(&metaroce_net_mutex);
	udp = mn->udp;
	if (udp) {
		udp->users++;
		goto out;
	}

	udp = kzalloc(sizeof(*udp), GFP_KERNEL);
	if (!udp) {
		udp = ERR_PTR(-ENOMEM);
		goto out;
	}

	sock = metaroce_sock_create(net, false);
	if (IS_ERR(sock)) {
		pr_err("cannot create IPv4 UDP socket on port %u: %ld\n",
		       metaroce_udp_port, PTR_ERR(sock));
		kfree(udp);
		udp = ERR_CAST(sock);
		goto out;
	}
	rcu_assign_pointer(udp->sk4, sock);

#if IS_ENABLED(CONFIG_IPV6)
	sock = metaroce_sock_create(net, true);
	if (IS_ERR(sock) && PTR_ERR(sock) != -EAFNOSUPPORT) {
		pr_err("cannot create IPv6 UDP socket on port %u: %ld\n",
		       metaroce_udp_port, PTR_ERR(sock));
		metaroce_udp_release_socks(udp);
		kfree(udp);
		udp = ERR_CAST(sock);
		goto out;
	}
	if (IS_ERR(sock))
		pr_info("IPv6 unavailable, IPv4 only\n");
	else
		rcu_assign_pointer(udp->sk6, sock);
#endif

	udp->users = 1;
	udp->mn = mn;
	mn->udp = udp;
out:
	mutex_unlock(&metaroce_net_mutex);
	return udp;
}

/**
 * metaroce_udp_put - drop a reference taken by metaroce_udp_get()
 * @udp: may be NULL
 *
 * The last reference closes the sockets (unless the namespace exit did
 * already) and frees the state.
 */
void metaroce_udp_put(struct metaroce_udp *udp)
{
	if (!udp)
		return;

	mutex_lock(&metaroce_net_mutex);
	if (--udp->users == 0) {
		if (udp->mn)
			udp->mn->udp = NULL;
		metaroce_udp_release_socks(udp);
		kfree(udp);
	}
	mutex_unlock(&metaroce_net_mutex);
}

static void __net_exit metaroce_net_exit_net(struct net *net)
{
	struct metaroce_net *mn = net_generic(net, metaroce_net_id);
	struct metaroce_udp *udp;

	mutex_lock(&metaroce_net_mutex);
	udp = mn->udp;
	if (udp) {
		/*
		 * Devices whose (queued) unregistration has not finished yet
		 * still hold a reference: detach, close the sockets now while
		 * the namespace's UDP tables exist, free on the last put.
		 */
		metaroce_udp_release_socks(udp);
		udp->mn = NULL;
		mn->udp = NULL;
	}
	mutex_unlock(&metaroce_net_mutex);
}

static struct pernet_operations metaroce_net_ops = {
	.exit = metaroce_net_exit_net,
	.id = &metaroce_net_id,
	.size = sizeof(struct metaroce_net),
};

int metaroce_net_init(void)
{
	if (!metaroce_udp_port) {
		pr_err("udp_port must not be 0\n");
		return -EINVAL;
	}
	return register_pernet_subsys(&metaroce_net_ops);
}

void metaroce_net_exit(void)
{
	unregister_pernet_subsys(&metaroce_net_ops);
	/* encap_rcv callers run under RCU: let them leave our code. */
	synchronize_net();
}
