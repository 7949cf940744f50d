/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metaroce transport: the requester (tx), responder and completer (rx)
 * engines on top of the pure-C core (kernel/core/). See obj.h for the
 * contract with the verbs objects and Documentation/protocol.rst for the
 * wire protocol.
 */
#ifndef METAROCE_TRANSPORT_H
#define METAROCE_TRANSPORT_H

#include <linux/hrtimer.h>
#include <linux/workqueue.h>
#include <linux/skbuff.h>

#include "core/sack.h"
#include "core/rtt.h"
#include "core/cc.h"

struct metaroce_qp;
struct metaroce_dev;

/* Per-QP transport state, embedded in struct metaroce_qp. */
struct metaroce_tp {
	/* Filled in by the transport (tx.c, rx.c, comp.c). */
	spinlock_t lock;
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
/* New WQEs were made visible in qp->sq (doorbell or kernel post_send). */
void metaroce_tp_kick(struct metaroce_qp *qp);
/* A metaroce packet arrived on @mdev (UDP payload at skb->data). Consumes
 * the skb. */
void metaroce_tp_rx(struct metaroce_dev *mdev, struct sk_buff *skb);

int metaroce_tp_init(void);	/* module init: workqueue etc. */
void metaroce_tp_exit(void);

#endif /* METAROCE_TRANSPORT_H */
