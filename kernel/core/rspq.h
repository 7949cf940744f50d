/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The responder's READ/atomic queue and its ordering rule.
 *
 * IB RC responders execute the requests of a QP in PSN order. Packets are
 * placed as they arrive, so a READ or atomic request may arrive before
 * earlier WRITEs have been placed. The responder queues READ/atomic
 * requests (checked and committed on arrival, so a duplicate is never
 * queued twice) in request PSN order, and runs the head -- reads the
 * data, executes the atomic -- only when every earlier PSN is placed:
 * the receive window's cumulative point has passed the request, and no
 * WRITE last packet before it is still held back (see resp.c).
 *
 * At most MRC_RSPQ_SLOTS (= the max_qp_rd_atom the device advertises)
 * entries; the caller's limit is the QP's max_dest_rd_atomic. PSN
 * comparisons are serial (wrap-safe).
 */
#ifndef MRC_RSPQ_H
#define MRC_RSPQ_H

#include "mrc_types.h"

#define MRC_RSPQ_SLOTS	16	/* power of two */

/* A READ or atomic request waiting for its responses to be sent. */
struct mrc_rsp {
	u8 kind;		/* caller's: READ or atomic response */
	u8 op;			/* atomic: its opcode */
	u8 executed;		/* atomic: done, @orig holds the result */
	u32 req_psn;
	u32 rkey;
	u32 len;		/* READ: bytes */
	u32 off;		/* READ: next byte to send */
	u64 va;			/* target address */
	u64 compare, swap_add;	/* atomic operands */
	u64 orig;		/* atomic: the value before the operation */
};

struct mrc_rspq {
	struct mrc_rsp e[MRC_RSPQ_SLOTS];
	u32 head, tail;		/* free-running; entries [tail, head) */
};

void mrc_rspq_init(struct mrc_rspq *q);

static inline u32 mrc_rspq_len(const struct mrc_rspq *q)
{
	return q->head - q->tail;
}

/*
 * A new request at @req_psn: a zeroed entry (but req_psn) placed in PSN
 * order, or NULL when @limit entries (at most MRC_RSPQ_SLOTS) are queued
 * -- for IB, an invalid request. @req_psn must be after every entry that
 * has started (every one does: they started once every earlier PSN had
 * arrived).
 */
struct mrc_rsp *mrc_rspq_insert(struct mrc_rspq *q, u32 req_psn, u32 limit);

/* The oldest entry, or NULL. */
struct mrc_rsp *mrc_rspq_head(struct mrc_rspq *q);

/*
 * May the head run? Every PSN before it was received (@cum, the receive
 * window's cumulative point, is past it) and, if @held, the oldest held
 * WRITE last packet @held_min is not before it.
 */
bool mrc_rspq_ready(const struct mrc_rspq *q, u32 cum, bool held,
		    u32 held_min);

/* The head's responses are all built: drop it. */
void mrc_rspq_pop(struct mrc_rspq *q);

/*
 * Drop the entries at or after @psn (voided by an RNR refusal, none of
 * them started: they wait for the refused PSN). Returns how many.
 */
u32 mrc_rspq_drop_from(struct mrc_rspq *q, u32 psn);

/* Drop everything (QP error, reset). */
void mrc_rspq_clear(struct mrc_rspq *q);

#endif /* MRC_RSPQ_H */
