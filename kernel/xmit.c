// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: putting packets on the wire (UDP tunnel transmit
 * over IPv4/IPv6 with a per-path source port and ECN ECT(0) on data) and
 * reading ECN CE on receive.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/wait_bit.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/inet_ecn.h>
#include <net/udp_tunnel.h>
#include <net/ipv6_stubs.h>
#include <net/ip6_route.h>

#define METAROCE_TP_INTERNAL
#include "obj.h"

static bool tp_dst_cache = true;
module_param_named(dst_cache, tp_dst_cache, bool, 0644);
MODULE_PARM_DESC(dst_cache,
		 "cache each path's route in the QP instead of looking it up per packet (default on)");

static unsigned int tp_tx_queue_pkts = 64;
module_param_named(tx_queue_pkts, tp_tx_queue_pkts, uint, 0644);
MODULE_PARM_DESC(tx_queue_pkts,
		 "packets a QP may have in the local stack (qdisc and NIC ring) at once, 0 = no limit (default 64)");

#define TP_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
			 sizeof(struct udphdr) + 16)

/*
 * An skb with room for @len bytes of metaroce packet (ICRC included).
 * Up to a page, its data comes from the per-CPU page-fragment cache, as a
 * NIC's receive buffers do: those pages are recycled once their packets
 * are freed, where kmalloc()ed heads would be zeroed on every allocation
 * (init_on_alloc, on in distribution kernels) only to be overwritten.
 */
struct sk_buff *metaroce_tp_alloc_skb(u32 len)
{
	struct sk_buff *skb;

	skb = __netdev_alloc_skb(NULL, TP_HEADROOM + len, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, TP_HEADROOM);
	memset(skb->cb, 0, sizeof(struct metaroce_tp_cb));
	return skb;
}

/*
 * Route cache (design.rst, Execution model). A QP's packets go to one
 * address pair from a handful of source ports (its paths), so the IPv4
 * route of each (addresses, tos, sport) is kept in the QP with a
 * reference and revalidated with dst_check() per packet, as UDP tunnels
 * do with dst_cache: a route or address change (a new FIB generation) or
 * a device going down makes it obsolete and the next packet looks up
 * again. IPv4 only: its dst_ops are global, so a route may outlive its
 * namespace in the cache (dst_dev_put() moved it to blackhole_netdev);
 * IPv6 routes point at their namespace's dst_ops. Only the txq owner
 * (metaroce_tp_xmit_queue()) sends, so the slots need no lock. UD (an AH
 * per packet) is not cached. Each packet is routed and keyed with one
 * whole copy of the QP's AV, and a new AV (modify_qp, a new av_seq)
 * drops every route of the old one before its first packet.
 */
static struct metaroce_tp_dst *tp_dst_find(struct metaroce_tp *tp,
					   const struct metaroce_av *av,
					   u16 sport, u8 tos)
{
	struct metaroce_tp_dst *c;
	int i;

	BUILD_BUG_ON(sizeof(av->saddr) != sizeof(c->saddr));
	for (i = 0; i < ARRAY_SIZE(tp->dst); i++) {
		c = &tp->dst[i];
		if (c->dst && c->sport == sport && c->tos == tos &&
		    c->family == av->family &&
		    !memcmp(&c->daddr, &av->daddr, sizeof(c->daddr)) &&
		    !memcmp(&c->saddr, &av->saddr, sizeof(c->saddr)))
			return c;
	}
	return NULL;
}

/* A referenced valid cached route, or NULL (then dropped from the cache). */
static struct dst_entry *tp_dst_get(struct metaroce_tp *tp,
				    const struct metaroce_av *av,
				    u16 sport, u8 tos)
{
	struct metaroce_tp_dst *c = tp_dst_find(tp, av, sport, tos);
	struct dst_entry *dst;

	if (!c)
		return NULL;
	dst = c->dst;
	if (unlikely(!(dst->dev->flags & IFF_UP) || !dst_check(dst, 0))) {
		c->dst = NULL;
		dst_release(dst);
		return NULL;
	}
	dst_hold(dst);
	return dst;
}

static void tp_dst_set(struct metaroce_tp *tp, const struct metaroce_av *av,
		       u16 sport, u8 tos, struct dst_entry *dst)
{
	struct metaroce_tp_dst *c;

	c = &tp->dst[tp->dst_next++ % ARRAY_SIZE(tp->dst)];
	if (c->dst)
		dst_release(c->dst);
	dst_hold(dst);
	c->dst = dst;
	c->sport = sport;
	c->tos = tos;
	c->family = av->family;
	memcpy(&c->saddr, &av->saddr, sizeof(c->saddr));
	memcpy(&c->daddr, &av->daddr, sizeof(c->daddr));
}

/* Drop every cached route (the txq owner, or nobody sending). */
static void tp_dst_drop(struct metaroce_tp *tp)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(tp->dst); i++) {
		if (tp->dst[i].dst)
			dst_release(tp->dst[i].dst);
		tp->dst[i].dst = NULL;
	}
}

/* Drop every cached route of @qp, unless a sender is using them now. */
static void tp_dst_flush(struct metaroce_qp *qp)
{
	struct metaroce_tp *tp = &qp->tp;

	spin_lock_bh(&tp->txq.lock);
	if (!tp->tx_busy)
		tp_dst_drop(tp);
	spin_unlock_bh(&tp->txq.lock);
}

static int tp_xmit4(struct metaroce_dev *mdev, struct sock *sk,
		    const struct metaroce_av *av, struct sk_buff *skb,
		    u16 sport, u8 tos, struct metaroce_tp *tp)
{
	struct net *net = dev_net(mdev->ndev);
	struct flowi4 fl4 = {};
	struct dst_entry *dst;
	struct rtable *rt;
	u8 ttl;

	fl4.daddr = av->daddr.v4.s_addr;
	fl4.saddr = av->saddr.v4.s_addr;
	dst = tp ? tp_dst_get(tp, av, sport, RT_TOS(tos)) : NULL;
	if (dst) {
		rt = container_of(dst, struct rtable, dst);
	} else {
		fl4.flowi4_proto = IPPROTO_UDP;
		fl4.flowi4_tos = RT_TOS(tos);
		fl4.fl4_sport = htons(sport);
		fl4.fl4_dport = htons(metaroce_udp_port);
		rt = ip_route_output_key(net, &fl4);
		if (IS_ERR(rt))
			return PTR_ERR(rt);
		/*
		 * Only an exact source (a wildcard one is chosen per lookup)
		 * and no IPsec bundle (its dst_ops are the namespace's).
		 */
		if (tp && av->saddr.v4.s_addr && !dst_xfrm(&rt->dst))
			tp_dst_set(tp, av, sport, RT_TOS(tos), &rt->dst);
	}
	ttl = av->ttl ? av->ttl : ip4_dst_hoplimit(&rt->dst);
	skb->protocol = htons(ETH_P_IP);
	/*
	 * No UDP checksum over IPv4: the ICRC covers the whole transport
	 * packet end to end, and a second pass over every payload byte on
	 * both ends costs more than the ICRC itself (protocol.rst).
	 */
	udp_tunnel_xmit_skb(rt, sk, skb, fl4.saddr, fl4.daddr, tos, ttl,
			    htons(IP_DF), htons(sport),
			    htons(metaroce_udp_port), false, true);
	return 0;
}

#if IS_ENABLED(CONFIG_IPV6)
static int tp_xmit6(struct metaroce_dev *mdev, struct sock *sk,
		    const struct metaroce_av *av, struct sk_buff *skb,
		    u16 sport, u8 tos)
{
	struct net *net = dev_net(mdev->ndev);
	struct in6_addr saddr = av->saddr.v6, daddr = av->daddr.v6;
	struct dst_entry *dst;
	struct flowi6 fl6 = {};
	u8 ttl;

	fl6.daddr = daddr;
	fl6.saddr = saddr;
	fl6.flowi6_proto = IPPROTO_UDP;
	fl6.fl6_sport = htons(sport);
	fl6.fl6_dport = htons(metaroce_udp_port);
	if (ipv6_addr_type(&daddr) & IPV6_ADDR_LINKLOCAL)
		fl6.flowi6_oif = mdev->ndev->ifindex;
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, sk, &fl6, NULL);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	ttl = av->ttl ? av->ttl : ip6_dst_hoplimit(dst);
	skb->protocol = htons(ETH_P_IPV6);
	/*
	 * No tunnel netdev: NULL, as udp_tunnel_xmit_skb() sees for IPv4.
	 * The stats behind a dev here are a tunnel's tstats, which a real
	 * NIC has not (6.1 writes through its NULL pointer, 6.12 WARNs).
	 */
	udp_tunnel6_xmit_skb(dst, sk, skb, NULL, &saddr, &daddr, tos,
			     ttl, htonl(av->flow_label & 0xfffff),
			     htons(sport), htons(metaroce_udp_port), false);
	return 0;
}
#endif

/*
 * The local queue limit (design.rst, "Local queue limit"), as TCP's small
 * queues: a QP keeps at most tx_queue_pkts packets in the local stack,
 * the qdisc and the NIC's ring, and the rest of its window waits in the
 * QP until the driver frees some. Without it, the windows of a few busy
 * QPs (MRC_WND packets each) stand in the qdisc in front of every other
 * flow of the host: an AQM qdisc marks them CE (the QPs slow down for a
 * queue they built themselves), a FIFO one overflows (they retransmit),
 * and an ACK or a latency-bound QP waits behind them.
 *
 * Each packet counts in the QP's struct metaroce_tp_txlim, which
 * outlives the QP: the skb destructor counts it out and, once at most
 * half the limit is left in the stack, wakes a QP waiting for room. The
 * count is also the object's reference count (the QP holds one more):
 * whoever brings it to zero frees it with kfree_rcu(), and the
 * destructor, which may still look at it after its own decrement, runs
 * under rcu_read_lock(). The destructor runs in softirq or process
 * context (never hardirq), possibly inside the qdisc that held the
 * packet: it only queues the QP's work. Module unload waits for the last
 * packet of every QP (the destructor is module code), then for an RCU
 * grace period.
 */
static atomic_t tp_txlim_live = ATOMIC_INIT(0);

int metaroce_tp_txlim_init(struct metaroce_qp *qp)
{
	struct metaroce_tp_txlim *l;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	atomic_set(&l->count, 1);
	spin_lock_init(&l->lock);
	l->qp = qp;
	atomic_inc(&tp_txlim_live);
	qp->tp.txlim = l;
	return 0;
}

/* The count reached zero: nobody but RCU readers see @l any more. */
static void tp_txlim_free(struct metaroce_tp_txlim *l)
{
	kfree_rcu(l, rcu);
	if (atomic_dec_and_test(&tp_txlim_live))
		wake_up_var(&tp_txlim_live);
}

/*
 * Destroy, once tp.dead is set and before the work is cancelled: no
 * destructor queues the QP's work after this.
 */
void metaroce_tp_txlim_detach(struct metaroce_qp *qp)
{
	struct metaroce_tp_txlim *l = qp->tp.txlim;
	unsigned long flags;

	if (!l)
		return;
	spin_lock_irqsave(&l->lock, flags);
	l->qp = NULL;
	spin_unlock_irqrestore(&l->lock, flags);
}

/* Destroy, after the last packet was sent: the QP's count. */
void metaroce_tp_txlim_put(struct metaroce_qp *qp)
{
	struct metaroce_tp_txlim *l = qp->tp.txlim;

	qp->tp.txlim = NULL;
	if (l && atomic_dec_and_test(&l->count))
		tp_txlim_free(l);
}

/* Module unload: every packet of every QP freed. */
void metaroce_tp_txlim_wait(void)
{
	wait_var_event(&tp_txlim_live, !atomic_read(&tp_txlim_live));
	synchronize_rcu();
}

static void tp_txlim_wfree(struct sk_buff *skb)
{
	struct metaroce_tp_txlim *l = skb_shinfo(skb)->destructor_arg;
	unsigned long flags;
	int left;

	rcu_read_lock();
	left = atomic_dec_return(&l->count);
	if (!left) {
		tp_txlim_free(l);	/* the QP is gone */
	} else if (test_bit(0, &l->waiting) &&
		   left - 1 <= (int)(READ_ONCE(tp_tx_queue_pkts) / 2) &&
		   test_and_clear_bit(0, &l->waiting)) {
		spin_lock_irqsave(&l->lock, flags);
		if (l->qp)
			metaroce_tp_schedule(l->qp);
		spin_unlock_irqrestore(&l->lock, flags);
	}
	rcu_read_unlock();
}

/*
 * How many packets @qp may hand to the stack now (at most TP_TX_BATCH).
 * Short of a full batch, it asks to be woken when the stack has drained
 * to half the limit; the bit is set before the count is read again and
 * the destructor reads the bit after its decrement, so one of the two
 * sees the other.
 */
int metaroce_tp_tx_room(struct metaroce_qp *qp)
{
	struct metaroce_tp_txlim *l = qp->tp.txlim;
	int limit = READ_ONCE(tp_tx_queue_pkts);
	int room;

	if (!limit || !l)
		return TP_TX_BATCH;
	/* the QP's own count is not a packet */
	room = limit - (atomic_read(&l->count) - 1);
	if (room >= TP_TX_BATCH)
		return TP_TX_BATCH;
	set_bit(0, &l->waiting);
	smp_mb__after_atomic();	/* pairs with atomic_dec_return() in wfree */
	room = limit - (atomic_read(&l->count) - 1);
	return clamp(room, 0, TP_TX_BATCH);
}

/* Count @skb into its QP's packets in the local stack. */
static void tp_txlim_charge(struct metaroce_qp *qp, struct sk_buff *skb)
{
	struct metaroce_tp_txlim *l = qp->tp.txlim;

	if (!l || skb->destructor)
		return;
	atomic_inc(&l->count);
	skb_shinfo(skb)->destructor_arg = l;
	skb->destructor = tp_txlim_wfree;
}

/*
 * Send one built packet of @qp (consumes @skb). The namespace's socket is
 * used under RCU: net.c unpublishes it and waits before releasing it.
 * The txq owner only (metaroce_tp_xmit_queue()).
 */
void metaroce_tp_xmit(struct metaroce_qp *qp, struct sk_buff *skb)
{
	struct metaroce_dev *mdev = qp->mdev;
	struct metaroce_tp_cb *cb = tp_cb(skb);
	struct metaroce_ah_av *ahav = cb->av;
	struct metaroce_tp *tp = &qp->tp;
	const struct metaroce_av *av;
	struct metaroce_av qav;
	unsigned int gen = 0;
	struct sock *sk;
	u16 sport = cb->sport;
	u32 len = skb->len;
	int err = -EAFNOSUPPORT;
	u8 tos;

	/*
	 * An AH's AV never changes; the QP's may (modify_qp, under no lock
	 * held here): one whole copy for the whole packet, route included.
	 */
	if (ahav) {
		av = &ahav->av;
	} else {
		gen = metaroce_qp_av_read(qp, &qav);
		av = &qav;
	}
	tos = av->tos & ~INET_ECN_MASK;
	if (cb->ect)
		tos |= INET_ECN_ECT_0;
	/*
	 * A QP's segment size is fixed at RTR (hooks.c tp_seg_size): if
	 * the netdev's MTU dropped below it since, its packets no longer
	 * fit. They go out with DF, and the IP layer drops them on their
	 * way out of that netdev (the WR ends RETRY_EXC_ERR): count them,
	 * so that the cause shows (protocol.rst "Segment size").
	 */
	if (len + sizeof(struct udphdr) + (av->family == AF_INET6 ?
	    sizeof(struct ipv6hdr) : sizeof(struct iphdr)) >
	    READ_ONCE(mdev->ndev->mtu))
		metaroce_tp_stat_inc(mdev, TP_STAT_TX_TOO_BIG);
	cb->av = NULL;
	memset(skb->cb, 0, sizeof(skb->cb));
	tp_txlim_charge(qp, skb);
	rcu_read_lock();
	sk = metaroce_udp_sk(mdev->udp, av->family);
	if (ahav || !READ_ONCE(tp_dst_cache))
		tp = NULL;
	if (tp && unlikely(tp->dst_gen != gen)) {
		tp_dst_drop(tp);	/* routes of an older AV */
		tp->dst_gen = gen;
	}
	if (sk && av->family == AF_INET) {
		err = tp_xmit4(mdev, sk, av, skb, sport, tos, tp);
#if IS_ENABLED(CONFIG_IPV6)
	} else if (sk && av->family == AF_INET6) {
		err = tp_xmit6(mdev, sk, av, skb, sport, tos);
#endif
	}
	rcu_read_unlock();
	if (err)
		goto drop;
	metaroce_tp_stat_inc(mdev, TP_STAT_TX_PACKETS);
	metaroce_tp_stat_add(mdev, TP_STAT_TX_BYTES, len);
	if (ahav)
		metaroce_ah_av_put(ahav);
	return;
drop:
	if (ahav)
		metaroce_ah_av_put(ahav);
	kfree_skb(skb);
}

void metaroce_tp_xmit_queue(struct metaroce_qp *qp, struct sk_buff_head *q)
{
	struct metaroce_tp *tp = &qp->tp;
	struct sk_buff *skb;

	if (skb_queue_empty(q))
		return;
	spin_lock_bh(&tp->txq.lock);
	skb_queue_splice_tail_init(q, &tp->txq);
	if (tp->tx_busy) {
		spin_unlock_bh(&tp->txq.lock);
		return;
	}
	tp->tx_busy = true;
	while ((skb = __skb_dequeue(&tp->txq))) {
		spin_unlock_bh(&tp->txq.lock);
		metaroce_tp_xmit(qp, skb);
		spin_lock_bh(&tp->txq.lock);
	}
	tp->tx_busy = false;
	spin_unlock_bh(&tp->txq.lock);
}

/* QP teardown: packets still queued (none once every sender returned). */
void metaroce_tp_txq_purge(struct metaroce_qp *qp)
{
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&qp->tp.txq))) {
		if (tp_cb(skb)->av)
			metaroce_ah_av_put(tp_cb(skb)->av);
		kfree_skb(skb);
	}
	metaroce_tp_rxq_purge(qp);
	tp_dst_flush(qp);
}

/* Did the IP header of a received packet carry ECN CE? */
bool metaroce_tp_skb_ce(const struct sk_buff *skb)
{
	switch (skb->protocol) {
	case htons(ETH_P_IP):
		return INET_ECN_is_ce(ip_hdr(skb)->tos);
	case htons(ETH_P_IPV6):
		return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
	}
	return false;
}
