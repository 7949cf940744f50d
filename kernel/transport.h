/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metaroce transport: the requester (tx), responder and completer (rx)
 * engines on top of the pure-C core (kernel/core/). See obj.h for the
 * contract with the verbs objects and Documentation/protocol.rst for the
 * wire protocol.
 *
 * Every QP has one outgoing PSN space (struct mrc_sb: its requests *and*
 * its READ/atomic responses) and one incoming PSN space (struct mrc_rx:
 * the peer's requests and responses). ACKs cover the incoming space.
 * Everything of a QP is serialised by tp.lock (taken with _bh): receive
 * processing runs inline in softirq, transmission in one work item per
 * QP (tp.work, kicked by doorbells, ACKs and timers), timers are soft
 * hrtimers. Packets are built under the lock and sent after dropping it.
 */
#ifndef METAROCE_TRANSPORT_H
#define METAROCE_TRANSPORT_H

#include <linux/hrtimer.h>
#include <linux/workqueue.h>
#include <linux/skbuff.h>

#include "core/sack.h"
#include "core/rtt.h"
#include "core/cc.h"
#include "core/path.h"

#include "metaroce.h"

struct metaroce_qp;
struct metaroce_ah_av;
struct metaroce_tps;

/*
 * Device counters, exported as the rdma_hw_stats of port 1 (`rdma
 * statistic show link DEV/1`) under the names below. Stored as atomic64_t
 * in struct metaroce_dev, indexed by enum metaroce_tp_stat.
 */
/* Why a received packet was dropped (tracepoint metaroce_rx_drop). */
enum metaroce_drop_reason {
	METAROCE_DROP_MALFORMED,
	METAROCE_DROP_ICRC,
	METAROCE_DROP_NOQP,
	METAROCE_DROP_NOTREADY,
	METAROCE_DROP_PEER,	/* not from the QP's peer (rx.c) */
};

enum metaroce_tp_stat {
	TP_STAT_TX_PACKETS,	/* every packet sent */
	TP_STAT_TX_BYTES,	/* their bytes, ICRC included */
	TP_STAT_RX_PACKETS,	/* every datagram received */
	TP_STAT_RX_BYTES,
	TP_STAT_TX_DATA,	/* sequenced, retx included */
	TP_STAT_RETX,		/* retransmissions, any cause */
	TP_STAT_RETX_FAST,	/* SACK / per-path loss rule */
	TP_STAT_RETX_TIMEOUT,	/* RTO or path replacement */
	TP_STAT_TLP,		/* tail-loss probes */
	TP_STAT_RETX_RNR,	/* resent after an RNR NAK */
	TP_STAT_RTO,		/* timeouts that marked loss */
	TP_STAT_DUPLICATES,	/* sequenced, already received */
	TP_STAT_OUT_OF_ORDER,	/* new, psn != cumulative */
	TP_STAT_OUT_OF_WINDOW,
	TP_STAT_ECN_MARKED,	/* CE received */
	TP_STAT_ECN_ECHOED,	/* CE reported back by the peer */
	TP_STAT_PATH_REPLACED,	/* blackholed path re-ported */
	TP_STAT_INTEGRITY_DROPS,	/* ICRC mismatch */
	TP_STAT_MALFORMED_DROPS,	/* header rules */
	TP_STAT_NOQP_DROPS,	/* no such QP / wrong type */
	TP_STAT_ACKS_SENT,
	TP_STAT_ACKS_RCVD,
	TP_STAT_RNR_NAKS_SENT,
	TP_STAT_RNR_NAKS_RCVD,
	TP_STAT_NAKS_SENT,	/* INV_REQ, REM_ACCESS, REM_OP */
	TP_STAT_NAKS_RCVD,
	TP_STAT_RETRY_EXC,	/* WQEs failed RETRY_EXC_ERR */
	TP_STAT_SPURIOUS_RETX,	/* retransmissions found unnecessary */
	TP_STAT_SPURIOUS_RTO,	/* timeouts undone: the peer/network stalled */
	TP_STAT_PEER_DROPS,	/* not from the QP's peer / spoofed loopback */
	TP_STAT_UC_MSG_DROPS,	/* UC messages lost or refused by a responder */
	TP_STAT_TX_TOO_BIG,	/* sent larger than the netdev MTU (seg_size) */
	TP_STAT_RX_DEFERRED,	/* packets queued for the QP's worker (rx_defer) */
	TP_STAT_RNR_VOIDED,	/* request packets voided by an RNR refusal */
	TP_STAT_MAX
};

/* Their names, as rdma_hw_stats descriptors (rx.c). */
extern const struct rdma_stat_desc metaroce_tp_stat_descs[TP_STAT_MAX];

static inline void metaroce_tp_stat_add(struct metaroce_dev *mdev,
					enum metaroce_tp_stat i, u64 v)
{
	atomic64_add(v, &mdev->tp_stats[i]);
}

static inline void metaroce_tp_stat_inc(struct metaroce_dev *mdev,
					enum metaroce_tp_stat i)
{
	atomic64_inc(&mdev->tp_stats[i]);
}

/*
 * A path's cached route (xmit.c): the IPv4 route of the QP's AV from one
 * UDP source port, so a packet needs no route lookup. Txq owner only.
 */
struct metaroce_tp_dst {
	struct dst_entry *dst;		/* referenced, or NULL */
	u16 sport;
	u8 tos;
	u8 family;
	struct in6_addr saddr, daddr;	/* as in the av (its unions) */
};

/*
 * A QP's packets in the local stack (xmit.c): handed to the IP layer and
 * not yet freed by the qdisc or the NIC driver. Apart from the QP, which
 * may be destroyed while its last packets still wait in a qdisc.
 */
struct metaroce_tp_txlim {
	atomic_t count;			/* packets not yet freed, +1: the QP */
	unsigned long waiting;		/* bit 0: the QP waits for room */
	spinlock_t lock;
	struct metaroce_qp *qp;		/* under @lock; NULL once destroyed */
	struct rcu_head rcu;
};

/* Per-QP transport state, embedded in struct metaroce_qp. */
struct metaroce_tp {
	spinlock_t lock;
	struct metaroce_tps *s;		/* the bulk, kvzalloc'd */
	/*
	 * Packets are built under @lock but sent after it is dropped; txq
	 * (its own lock) keeps them in build order: whoever finds tx_busy
	 * clear sends until txq is empty, everyone else only appends. So a
	 * softirq that opens the window while a doorbell is still sending
	 * cannot overtake the doorbell's packets on a path.
	 */
	struct sk_buff_head txq;
	bool tx_busy;			/* under txq.lock */
	/*
	 * READ responses received while the QP is busy receiving them,
	 * processed by the worker (rx.c tp_rx_defer): ICRC check, placement
	 * and the ACKs, at the worker's priority instead of ksoftirqd's.
	 */
	struct sk_buff_head rxq;
	u8 dst_next;			/* next dst slot to replace */
	struct metaroce_tp_dst dst[MRC_MAX_PATHS];	/* txq owner only */
	unsigned int dst_gen;		/* qp->av_seq of their AV; ditto */
	struct metaroce_tp_txlim *txlim;	/* local queue limit */
	struct work_struct work;	/* requester / completer work */
	struct hrtimer rto_timer;	/* RTO and tail-loss probe */
	struct hrtimer ack_timer;	/* delayed ACK */
	struct hrtimer rnr_timer;	/* RNR back-off */
	unsigned long events;		/* TP_EV_* */
	bool dead;			/* destroy started */
};

/* Called by create_qp once the QP is set up (state RESET). */
int metaroce_tp_qp_init(struct metaroce_qp *qp);
/*
 * Called by modify_qp after the new attributes and state are applied,
 * with the previous state. Entering RTS starts the requester; entering
 * ERR flushes (every outstanding and posted WQE completes with
 * IB_WC_WR_FLUSH_ERR, in order); RESET clears all transport state.
 */
void metaroce_tp_qp_modify(struct metaroce_qp *qp, enum ib_qp_state old,
			   int attr_mask);
/* Called by destroy_qp: stop timers and work; nothing runs afterwards. */
void metaroce_tp_qp_destroy(struct metaroce_qp *qp);
/*
 * Called by modify_qp before an AV is applied: -EINVAL if the QP's fixed
 * segment size does not fit the netdev behind @av's headers.
 */
int metaroce_tp_av_check(struct metaroce_qp *qp,
			 const struct metaroce_av *av);
/* New WQEs were made visible in qp->sq (doorbell or kernel post_send). */
void metaroce_tp_kick(struct metaroce_qp *qp);
/* `rdma res show qp -dd`: transport state (window, RTT, per path). */
int metaroce_tp_fill_res_qp(struct sk_buff *msg, struct metaroce_qp *qp);
/*
 * A metaroce packet arrived on @mdev (UDP payload at skb->data). Consumes
 * the skb.
 */
void metaroce_tp_rx(struct metaroce_dev *mdev, struct sk_buff *skb);

int metaroce_tp_init(void);	/* module init: workqueue etc. */
void metaroce_tp_exit(void);

/* net.c: the namespace's UDP socket of @family (AF_INET/AF_INET6). */
struct metaroce_udp;
struct sock *metaroce_udp_sk(struct metaroce_udp *udp, int family);

/* ------------------------------------------------------------------
 * Internal to the transport files (tx.c, timers.c, build.c, wqe.c, hooks.c,
 * rx.c, env.c, resp.c, comp.c, xmit.c).
 */
#ifdef METAROCE_TP_INTERNAL

#include "core/hdr.h"
#include "core/responder.h"
#include "core/completer.h"

#define TP_EV_RTO	0	/* retransmission timer fired */
#define TP_EV_RNR	1	/* RNR wait is over */
#define TP_EV_FLUSH	2	/* QP entered ERR: flush */

#define TP_MAX_SWQ	512	/* kernel copies of send WQEs in flight */
#define TP_TX_BATCH	32	/* packets built per lock hold */
/* receive processing transmits inline below this many PSNs in flight */
#define TP_TX_INLINE_MAX	16

/* Kind of an outgoing PSN (struct mrc_txd.kind). */
enum {
	TP_PKT_REQ = MRC_TXD_REQ,
	TP_PKT_RRESP = MRC_RSP_READ,	/* == struct mrc_rsp.kind */
	TP_PKT_ARESP = MRC_RSP_ATOMIC,
};

/* A UD receive being completed. */
struct metaroce_tp_rslot {
	struct metaroce_rwqe wqe;
	u32 msg_len;
	u32 imm;		/* network order */
	u32 src_qp;		/* the sender */
	u8 wc_flags;
	u8 solicited;
};

struct metaroce_tps {
	/*
	 * the send side (core/requester.h): outgoing PSN space, send WQEs,
	 * shared by the requester (tx.c) and the completer
	 */
	struct mrc_req req;
	u32 local_end;		/* SQ index after the last local WQE fetched */
	bool running;		/* RTS/SQD: may send requests */
	/*
	 * sqd: in SQD, no new message starts (req.cfg.sqd). sqd_wait: its
	 * drained state (mrc_req_drained) is not reported yet; sqd_gen: the
	 * qp->sqd_gen of that SQD (metaroce_qp_sq_drained).
	 */
	bool sqd, sqd_wait;
	u32 sqd_gen;
	u8 fail_event;		/* enum ib_event_type for ERR, 0 = fatal */
	/*
	 * A QP of an SRQ: the flush of this entry into ERR owes
	 * IB_EVENT_QP_LAST_WQE_REACHED (last_wqe_due, raised after the
	 * lock: metaroce_tp_last_wqe) and owed it already (last_wqe_done:
	 * once per entry into ERR, cleared at RESET).
	 */
	bool last_wqe_due, last_wqe_done;
	u32 mtu;		/* segment size: set at RTR, 0 from RESET */

	/*
	 * responder (core/responder.h): incoming PSN space, the responses
	 * to send (the peer's READs/atomics), receive completions
	 */
	struct mrc_resp resp;
	/* the receive WQEs resp is filling, by its slot (rq_pop) */
	struct metaroce_rwqe rwqe[MRC_RSLOTS];
	struct metaroce_tp_rslot ud_slot;	/* UD receive scratch */

	/* statistics */
	u64 tx_pkts, retx_pkts, drops, rtos;
};

/* skb->cb of an outgoing packet, between build and xmit. */
struct metaroce_tp_cb {
	u16 sport;
	u8 ect;			/* send ECT(0) */
	struct metaroce_ah_av *av; /* UD: referenced AH's AV, else NULL */
};

static inline struct metaroce_tp_cb *tp_cb(struct sk_buff *skb)
{
	return (struct metaroce_tp_cb *)skb->cb;
}

static inline struct mrc_swqe *tp_swqe(struct metaroce_tps *s, u32 idx)
{
	return mrc_req_swqe(&s->req, idx);
}

/* The scatter list of a send WQE, as the MR code takes it. */
static inline struct metaroce_sge *tp_sge(const struct mrc_swqe *w)
{
	BUILD_BUG_ON(sizeof(struct mrc_sge) != sizeof(struct metaroce_sge));
	BUILD_BUG_ON(offsetof(struct mrc_sge, lkey) !=
		     offsetof(struct metaroce_sge, lkey));
	return (struct metaroce_sge *)w->sge;
}

static inline u64 tp_now_us(void)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

static inline ktime_t tp_us_ktime(u64 us)
{
	return ns_to_ktime(us * NSEC_PER_USEC);
}

/*
 * The environment of the core engines (core/engine.h) for one call: the
 * QP (its lock held) and where packets to send go.
 */
struct metaroce_tp_ctx {
	struct metaroce_qp *qp;
	struct sk_buff_head *out;	/* may be NULL when nothing is sent */
};

extern const struct mrc_env_ops metaroce_tp_env_ops;

/* Set up @e for a call into the engines of @qp (env.c). */
void metaroce_tp_env(struct mrc_env *e, struct metaroce_tp_ctx *c,
		     struct metaroce_qp *qp, struct sk_buff_head *out);
int metaroce_tp_post_rcqe(struct metaroce_qp *qp, u64 wr_id, u8 status,
			  u8 opcode, u32 byte_len, u32 imm, u32 src_qp,
			  u8 wc_flags, u16 vlan_id, bool solicited);

/* xmit.c */
struct sk_buff *metaroce_tp_alloc_skb(u32 len);
void metaroce_tp_xmit(struct metaroce_qp *qp, struct sk_buff *skb);
void metaroce_tp_xmit_queue(struct metaroce_qp *qp, struct sk_buff_head *q);
void metaroce_tp_txq_purge(struct metaroce_qp *qp);
int metaroce_tp_txlim_init(struct metaroce_qp *qp);
void metaroce_tp_txlim_detach(struct metaroce_qp *qp);
void metaroce_tp_txlim_put(struct metaroce_qp *qp);
void metaroce_tp_txlim_wait(void);
int metaroce_tp_tx_room(struct metaroce_qp *qp);
bool metaroce_tp_skb_ce(const struct sk_buff *skb);

/* tx.c: the send loop */
void metaroce_tp_schedule(struct metaroce_qp *qp);
bool metaroce_tp_tx_inline(struct metaroce_qp *qp);
void metaroce_tp_run_inline(struct metaroce_qp *qp, bool inline_ok);
void metaroce_tp_work(struct work_struct *work);
void metaroce_tp_rx_drain(struct metaroce_qp *qp);
void metaroce_tp_rxq_purge(struct metaroce_qp *qp);
void metaroce_tp_unlock(struct metaroce_qp *qp, struct sk_buff_head *q);

/* timers.c */
extern unsigned int metaroce_tp_rto_floor_us;
u64 metaroce_tp_ib_timeout_us(u8 timeout);
void metaroce_tp_arm_rto(struct metaroce_qp *qp, bool restart);
void metaroce_tp_timers_init(struct metaroce_tp *tp);

/* build.c: packets */
struct sk_buff *metaroce_tp_build(struct metaroce_qp *qp,
				  struct mrc_pkt *p, const void *payload);
struct sk_buff *metaroce_tp_build_begin(const struct mrc_pkt *p,
					void **payload);
void metaroce_tp_build_end(struct sk_buff *skb);
struct sk_buff *metaroce_tp_probe_skb(struct metaroce_qp *qp, u32 psn,
				      u16 sport);
struct sk_buff *metaroce_tp_build_psn(struct metaroce_qp *qp,
				      const struct mrc_env *e, u32 psn,
				      u32 ppsn, u8 path, bool retx);
struct sk_buff *metaroce_tp_ud_send(struct metaroce_qp *qp,
				    struct mrc_swqe *w);

/* wqe.c: send WQEs */
u32 metaroce_tp_swqe_size(struct metaroce_qp *qp);
void metaroce_tp_fetch(struct metaroce_qp *qp);
void metaroce_tp_local_op(struct metaroce_qp *qp, struct mrc_swqe *w);
void metaroce_tp_flush_sq(struct metaroce_qp *qp);

/* hooks.c: QP hooks */
void metaroce_tp_flush(struct metaroce_qp *qp);
void metaroce_tp_last_wqe(struct metaroce_qp *qp);

/* resp.c */
void metaroce_tp_resp(struct metaroce_qp *qp, struct mrc_pkt *p,
		      struct sk_buff *skb, bool ce, struct sk_buff_head *out);
void metaroce_tp_send_ack(struct metaroce_qp *qp, struct sk_buff_head *out,
			  u8 syndrome, u32 nak_psn);
void metaroce_tp_resp_flush(struct metaroce_qp *qp);
void metaroce_tp_resp_leave(struct metaroce_qp *qp, struct sk_buff_head *out);
void metaroce_tp_ud_recv(struct metaroce_qp *qp, struct mrc_pkt *p,
			 struct sk_buff *skb);
void metaroce_tp_resp_reset(struct metaroce_qp *qp);
void metaroce_tp_resp_start(struct metaroce_qp *qp, u16 ack_every,
			    u16 ack_hole);
void metaroce_tp_ack_settle(struct metaroce_qp *qp);
void metaroce_tp_ack_timer(struct metaroce_qp *qp, struct sk_buff_head *out);
bool metaroce_tp_renak(struct metaroce_qp *qp, const struct mrc_pkt *p,
		       struct sk_buff_head *out);
void metaroce_tp_rsp_abort(struct metaroce_qp *qp, struct sk_buff_head *out);

/* comp.c */
void metaroce_tp_complete(struct metaroce_qp *qp, struct sk_buff_head *out);
void metaroce_tp_comp_ack(struct metaroce_qp *qp, struct mrc_pkt *p,
			  struct sk_buff_head *out);
int metaroce_tp_comp_resp(struct metaroce_qp *qp, const struct mrc_pkt *p,
			  const struct mrc_src *src);
bool metaroce_tp_comp_cum(struct metaroce_qp *qp, u16 cum_lo,
			  struct sk_buff_head *out);
int metaroce_tp_post_scqe(struct metaroce_qp *qp, const struct mrc_swqe *w,
			  u8 status);
void metaroce_tp_sq_consumed(struct metaroce_qp *qp, u32 tail);

#endif /* METAROCE_TP_INTERNAL */

#endif /* METAROCE_TRANSPORT_H */
