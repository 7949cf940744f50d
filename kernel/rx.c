// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce transport: receive dispatch. Every packet is parsed by the
 * core with its ICRC checked; malformed packets are counted and dropped.
 * The destination QP is looked up by number; a packet for a connected QP
 * must come from its peer and the QP must grant the remote access a
 * request needs (protocol.rst, "Peer validation"; the responder checks
 * the latter). The packet is then handed, under the QP lock, to the
 * completer (ACKs) or the responder (everything sequenced, including the
 * responses to this QP's own requests).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/inetdevice.h>
#include <linux/sched/stat.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>

#define METAROCE_TP_INTERNAL
#include "obj.h"
#include "core/crc32c.h"
#include "trace.h"

static_assert(TP_STAT_MAX <= METAROCE_TP_NSTATS);

const struct rdma_stat_desc metaroce_tp_stat_descs[TP_STAT_MAX] = {
	[TP_STAT_TX_PACKETS].name = "tx_packets",
	[TP_STAT_TX_BYTES].name = "tx_bytes",
	[TP_STAT_RX_PACKETS].name = "rx_packets",
	[TP_STAT_RX_BYTES].name = "rx_bytes",
	[TP_STAT_TX_DATA].name = "tx_data_packets",
	[TP_STAT_RETX].name = "retx_packets",
	[TP_STAT_RETX_FAST].name = "retx_fast",
	[TP_STAT_RETX_TIMEOUT].name = "retx_timeout",
	[TP_STAT_TLP].name = "tlp",
	[TP_STAT_RETX_RNR].name = "retx_rnr",
	[TP_STAT_RTO].name = "rto_events",
	[TP_STAT_DUPLICATES].name = "duplicates",
	[TP_STAT_OUT_OF_ORDER].name = "out_of_order",
	[TP_STAT_OUT_OF_WINDOW].name = "out_of_window",
	[TP_STAT_ECN_MARKED].name = "ecn_marked",
	[TP_STAT_ECN_ECHOED].name = "ecn_echoed",
	[TP_STAT_PATH_REPLACED].name = "path_replaced",
	[TP_STAT_INTEGRITY_DROPS].name = "integrity_drops",
	[TP_STAT_MALFORMED_DROPS].name = "malformed_drops",
	[TP_STAT_NOQP_DROPS].name = "noqp_drops",
	[TP_STAT_ACKS_SENT].name = "acks_sent",
	[TP_STAT_ACKS_RCVD].name = "acks_received",
	[TP_STAT_RNR_NAKS_SENT].name = "rnr_naks_sent",
	[TP_STAT_RNR_NAKS_RCVD].name = "rnr_naks_received",
	[TP_STAT_NAKS_SENT].name = "naks_sent",
	[TP_STAT_NAKS_RCVD].name = "naks_received",
	[TP_STAT_RETRY_EXC].name = "retry_exceeded",
	[TP_STAT_SPURIOUS_RETX].name = "spurious_retx",
	[TP_STAT_SPURIOUS_RTO].name = "spurious_rto",
	[TP_STAT_PEER_DROPS].name = "peer_drops",
	[TP_STAT_UC_MSG_DROPS].name = "uc_msg_drops",
	[TP_STAT_TX_TOO_BIG].name = "tx_too_big",
	[TP_STAT_RX_DEFERRED].name = "rx_deferred",
	[TP_STAT_RNR_VOIDED].name = "rnr_voided",
};

/* Longest header: BTH + ACKH + 16 path records (208 bytes). */
#define TP_RX_PULL	256

/* ICRC check over the whole packet, linear part and fragments alike. */
static bool tp_icrc_ok(struct sk_buff *skb)
{
	u32 len = skb->len - MRC_ICRC_LEN, done = 0, n, crc = ~0U;
	struct skb_seq_state st;
	const u8 *data;
	__be32 icrc;

	if (skb_copy_bits(skb, len, &icrc, sizeof(icrc)))
		return false;
	skb_prepare_seq_read(skb, 0, len, &st);
	/* a block may run past @len (into the ICRC): clip it */
	while (done < len && (n = skb_seq_read(done, &data, &st)) != 0) {
		n = min(n, len - done);
		crc = mrc_crc32c_update(crc, data, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	return done == len && ~crc == be32_to_cpu(icrc);
}

/*
 * A datagram that came in on a loopback device never left this host: its
 * source must be one of the namespace's own addresses. IPv4 routing
 * refuses to send from any other, but an unprivileged IPV6_FREEBIND
 * socket can claim a remote IPv6 address, the peer's included.
 */
static bool tp_loopback_ok(const struct sk_buff *skb)
{
	struct net_device *dev = skb->dev;
	struct net *net;
	bool ok = false;

	if (!dev || !(dev->flags & IFF_LOOPBACK))
		return true;
	net = dev_net(dev);
	rcu_read_lock();
	if (skb->protocol == htons(ETH_P_IP))
		ok = !!__ip_dev_find(net, ip_hdr(skb)->saddr, false);
#if IS_ENABLED(CONFIG_IPV6)
	else if (skb->protocol == htons(ETH_P_IPV6) && ipv6_stub->ipv6_dev_find)
		ok = !!ipv6_stub->ipv6_dev_find(net, &ipv6_hdr(skb)->saddr,
						NULL);
#endif
	rcu_read_unlock();
	return ok;
}

/*
 * Does @skb come from the peer of connected @qp, to the QP's own address?
 * The address vector is set at RTR and may be replaced at SQD -> SQD while
 * the responder runs: modify_qp writes it under the QP's state lock, not
 * the transport lock held here, so the check is made against a whole copy
 * (metaroce_qp_av_read()), the old AV or the new one, never a mix. A QP
 * without one (RESET, INIT) has no peer yet: what comes for it is dropped
 * as not ready.
 */
static bool tp_from_peer(struct metaroce_qp *qp, const struct sk_buff *skb)
{
	struct metaroce_av av;

	metaroce_qp_av_read(qp, &av);
	if (!av.family)
		return true;
	switch (skb->protocol) {
	case htons(ETH_P_IP):
		return av.family == AF_INET &&
		       ip_hdr(skb)->saddr == av.daddr.v4.s_addr &&
		       ip_hdr(skb)->daddr == av.saddr.v4.s_addr;
#if IS_ENABLED(CONFIG_IPV6)
	case htons(ETH_P_IPV6):
		return av.family == AF_INET6 &&
		       ipv6_addr_equal(&ipv6_hdr(skb)->saddr, &av.daddr.v6) &&
		       ipv6_addr_equal(&ipv6_hdr(skb)->daddr, &av.saddr.v6);
#endif
	}
	return false;
}

static void tp_peer_drop(struct metaroce_dev *mdev, struct sk_buff *skb)
{
	metaroce_tp_stat_inc(mdev, TP_STAT_PEER_DROPS);
	trace_metaroce_rx_drop(METAROCE_DROP_PEER, skb->len);
	kfree_skb(skb);
}

static int tp_rx_defer = 2;
module_param_named(rx_defer, tp_rx_defer, int, 0644);
MODULE_PARM_DESC(rx_defer,
		 "hand received data to the QP's worker: 0 never, 1 READ responses while READs are pipelined, 2 also SEND/WRITE_IMM data the receive softirq meets in a thread that another task contends with (default 2)");

/* Packets a QP's worker may have waiting; beyond, inline. */
#define TP_RXQ_MAX	1024

/*
 * Is the receive softirq running in a thread of ordinary priority --
 * ksoftirqd, or a threaded NAPI poller -- rather than on an interrupt's
 * exit or a bottom-half enable, and does another task want its CPU (an
 * application busy-polling its CQ)? Then the two take turns, and the
 * data waits. Alone on its CPU, the thread is as good as the worker.
 */
static bool tp_rx_contended(void)
{
	return in_serving_softirq() && (current->flags & PF_KTHREAD) &&
	       !is_idle_task(current) && !(current->flags & PF_WQ_WORKER) &&
	       !single_task_running();
}

/*
 * Hand a data packet to the QP's worker instead of processing it in the
 * receive softirq. A receiver of a stream of data (READ responses at a
 * requester, SENDs at a responder) spends enough per packet (ICRC,
 * placement, ACKs) to push all softirq processing into ksoftirqd, an
 * ordinary thread that an application busy-polling its CQ on the same
 * CPU takes turns with, so the data waits for milliseconds
 * (benchmarks.md, "Who runs when"); the worker is high-priority. Mode 1
 * (rx_defer=1): READ responses while READs/atomics are pipelined (two or
 * more awaiting responses); the response to a lone READ (a latency test,
 * one large READ) is processed at once, as a wakeup would only add to
 * its latency. Mode 2 (the default) also: any packet of a message the
 * local application waits for by polling its CQ (SEND*, WRITE_IMM: a
 * receive completion; READ_RESP: the READ's) that the softirq meets in
 * a thread while another task is runnable on its CPU, i.e. once receive
 * has been pushed out of interrupt context and competes with the
 * application. Plain WRITE data stays inline: nobody polls for it, and
 * handing it over cost ib_write_bw ~10% in A/B sittings. In both modes,
 * once a QP has packets queued its later packets of those kinds queue
 * behind them (at most TP_RXQ_MAX), and so does every other packet of
 * the QP (ACKs, NAKs, requests) while any is queued: the host never
 * reorders a QP's packets itself. The transport takes any order, but an
 * in-order link should look in order to it -- a READ's last responses
 * overtaken by the NAK the responder sent after them would flush a READ
 * that was answered in full (selftests/verbs/qplife.c, dereg "queued").
 * The check for a non-empty queue is lockless for the kinds not
 * deferred: a packet that races the first one queued on another CPU may
 * still pass it, which the transport tolerates. The worker runs the same
 * checks (tp_rx()), but the loopback one, made here while skb->dev is
 * still known to be alive.
 */
static bool tp_rx_defer_try(struct metaroce_dev *mdev, struct metaroce_qp *qp,
			    struct sk_buff *skb, const struct mrc_pkt *p)
{
	int mode = READ_ONCE(tp_rx_defer);
	struct metaroce_tp *tp = &qp->tp;
	bool queued = false, kind, contended;

	if (mode <= 0 || qp->ibqp.qp_type != IB_QPT_RC ||
	    (p->flags & MRC_F_UC))
		return false;
	kind = p->opcode == MRC_OP_READ_RESP ||
	       (mode >= 2 && mrc_op_notifies(p->opcode));
	if ((!kind && skb_queue_empty_lockless(&tp->rxq)) ||
	    !tp_loopback_ok(skb))
		return false;
	contended = kind && mode >= 2 && tp_rx_contended();
	/* under the lock: destroy sets dead, then purges rxq */
	spin_lock_bh(&tp->lock);
	if (!tp->dead && tp->s && skb_queue_len(&tp->rxq) < TP_RXQ_MAX &&
	    (contended || !skb_queue_empty(&tp->rxq) ||
	     (p->opcode == MRC_OP_READ_RESP &&
	      tp->s->req.rd_atomic_out >= 2))) {
		skb_queue_tail(&tp->rxq, skb);
		queued = true;
	}
	spin_unlock_bh(&tp->lock);
	if (queued) {
		metaroce_tp_stat_inc(mdev, TP_STAT_RX_DEFERRED);
		metaroce_tp_schedule(qp);
	}
	return queued;
}

static void tp_rx(struct metaroce_dev *mdev, struct sk_buff *skb, bool worker);

/* The QP's worker: the packets tp_rx_defer_try() queued. */
void metaroce_tp_rx_drain(struct metaroce_qp *qp)
{
	struct sk_buff *skb;
	int budget = 256;

	while (budget-- && (skb = skb_dequeue(&qp->tp.rxq))) {
		local_bh_disable();
		tp_rx(qp->mdev, skb, true);
		local_bh_enable();
	}
	if (!skb_queue_empty_lockless(&qp->tp.rxq))
		metaroce_tp_schedule(qp);
}

void metaroce_tp_rxq_purge(struct metaroce_qp *qp)
{
	skb_queue_purge(&qp->tp.rxq);
}

void metaroce_tp_rx(struct metaroce_dev *mdev, struct sk_buff *skb)
{
	tp_rx(mdev, skb, false);
}

static void tp_rx(struct metaroce_dev *mdev, struct sk_buff *skb, bool worker)
{
	struct metaroce_qp *qp;
	struct metaroce_tp *tp;
	struct sk_buff_head q;
	struct mrc_pkt p;
	bool ce, ud, tx, inl;
	u32 hl;
	int err;

	if (!worker) {
		metaroce_tp_stat_inc(mdev, TP_STAT_RX_PACKETS);
		metaroce_tp_stat_add(mdev, TP_STAT_RX_BYTES, skb->len);
	}
	/*
	 * Only the headers need to be linear: the ICRC is computed over the
	 * fragments and payload is copied out of them (skb_copy_bits), so
	 * a paged skb from the NIC is never copied into a new head.
	 */
	hl = min_t(u32, skb->len, TP_RX_PULL);
	err = pskb_may_pull(skb, hl) ? 0 : -MRC_E_TRUNC;
	if (!err)
		err = mrc_hdr_parse(skb->data, hl, skb->len, &p);
	/* looked up once; a packet for no QP is counted after the ICRC */
	qp = err ? NULL : metaroce_qp_get(mdev, p.dst_qpn);
	if (qp && !worker && tp_rx_defer_try(mdev, qp, skb, &p)) {
		metaroce_qp_put(qp);
		return;
	}
	if (!err && !tp_icrc_ok(skb))
		err = -MRC_E_ICRC;
	if (err) {
		metaroce_tp_stat_inc(mdev, err == -MRC_E_ICRC ?
				     TP_STAT_INTEGRITY_DROPS :
				     TP_STAT_MALFORMED_DROPS);
		trace_metaroce_rx_drop(err == -MRC_E_ICRC ? METAROCE_DROP_ICRC :
				       METAROCE_DROP_MALFORMED, skb->len);
		kfree_skb(skb);
		if (qp)
			metaroce_qp_put(qp);
		return;
	}
	if (!worker && !tp_loopback_ok(skb)) {
		tp_peer_drop(mdev, skb);
		if (qp)
			metaroce_qp_put(qp);
		return;
	}
	if (!qp) {
		metaroce_tp_stat_inc(mdev, TP_STAT_NOQP_DROPS);
		trace_metaroce_rx_drop(METAROCE_DROP_NOQP, skb->len);
		kfree_skb(skb);
		return;
	}
	ud = p.opcode == MRC_OP_UD_SEND || p.opcode == MRC_OP_UD_SEND_IMM;
	/* UD to UD/GSI QPs, UC-flagged packets to UC QPs, the rest to RC */
	if (ud != (qp->ibqp.qp_type == IB_QPT_UD ||
		   qp->ibqp.qp_type == IB_QPT_GSI) ||
	    (!ud && qp->ibqp.qp_type != (p.flags & MRC_F_UC ? IB_QPT_UC :
					 IB_QPT_RC))) {
		metaroce_tp_stat_inc(mdev, TP_STAT_NOQP_DROPS);
		trace_metaroce_rx_drop(METAROCE_DROP_NOQP, skb->len);
		kfree_skb(skb);
		metaroce_qp_put(qp);
		return;
	}
	ce = metaroce_tp_skb_ce(skb);
	trace_metaroce_rx(p.dst_qpn, p.opcode, p.psn, p.ppsn, p.path_id,
			  p.payload_len, ce);
	tp = &qp->tp;
	__skb_queue_head_init(&q);

	spin_lock_bh(&tp->lock);
	if (!ud && !tp_from_peer(qp, skb)) {
		spin_unlock_bh(&tp->lock);
		tp_peer_drop(mdev, skb);
		metaroce_qp_put(qp);
		return;
	}
	if (!tp->dead && tp->s && !mrc_resp_ready(&tp->s->resp) && !ud &&
	    READ_ONCE(qp->state) == IB_QPS_ERR &&
	    metaroce_tp_renak(qp, &p, &q)) {
		/*
		 * We NAKed this request and went to ERR, as IB says; on a
		 * lossy fabric the NAK may be what got lost, and the
		 * requester retries: the responder told it again, so that
		 * it completes with the access/request error and not
		 * RETRY_EXC_ERR.
		 */
		spin_unlock_bh(&tp->lock);
		metaroce_tp_xmit_queue(qp, &q);
		kfree_skb(skb);
		metaroce_qp_put(qp);
		return;
	}
	if (tp->dead || !tp->s || !mrc_resp_ready(&tp->s->resp)) {
		spin_unlock_bh(&tp->lock);
		trace_metaroce_rx_drop(METAROCE_DROP_NOTREADY, skb->len);
		kfree_skb(skb);
		metaroce_qp_put(qp);
		return;
	}
	if (!ud)
		tp->s->req.heard_us = tp_now_us();
	if (ud) {
		metaroce_tp_ud_recv(qp, &p, skb);
		kfree_skb(skb);
	} else if (p.opcode == MRC_OP_ACK) {
		kfree_skb(skb);
		metaroce_tp_stat_inc(mdev, TP_STAT_ACKS_RCVD);
		metaroce_tp_comp_ack(qp, &p, &q);
	} else if (p.opcode == MRC_OP_PROBE) {
		kfree_skb(skb);
		metaroce_tp_send_ack(qp, &q, MRC_SYN_ACK, 0);
	} else {
		metaroce_tp_resp(qp, &p, skb, ce, &q);
	}
	tx = tp->s->req.want_tx;
	tp->s->req.want_tx = false;
	inl = tx && metaroce_tp_tx_inline(qp);
	/*
	 * A READ answered at once owes an ACK its response carries; if the
	 * worker sends it, that pass comes later: the delayed ACK now.
	 */
	if (tx && !inl)
		metaroce_tp_ack_settle(qp);
	metaroce_tp_unlock(qp, &q);
	if (tx)
		metaroce_tp_run_inline(qp, inl);
	metaroce_qp_put(qp);
}
