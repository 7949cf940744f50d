// SPDX-License-Identifier: GPL-2.0
/*
 * The responder's READ/atomic queue (see rspq.h).
 */
#include "rspq.h"
#include "seq.h"

static struct mrc_rsp *rspq_at(struct mrc_rspq *q, u32 i)
{
	return &q->e[i & (MRC_RSPQ_SLOTS - 1)];
}

void mrc_rspq_init(struct mrc_rspq *q)
{
	q->head = 0;
	q->tail = 0;
}

struct mrc_rsp *mrc_rspq_insert(struct mrc_rspq *q, u32 req_psn, u32 limit)
{
	struct mrc_rsp *r;
	u32 i;

	if (limit > MRC_RSPQ_SLOTS)
		limit = MRC_RSPQ_SLOTS;
	if (mrc_rspq_len(q) >= limit)
		return NULL;
	for (i = q->head; i != q->tail; i--) {
		if (mrc_seq_lt(rspq_at(q, i - 1)->req_psn, req_psn))
			break;
		*rspq_at(q, i) = *rspq_at(q, i - 1);
	}
	r = rspq_at(q, i);
	*r = (struct mrc_rsp){ .req_psn = req_psn };
	q->head++;
	return r;
}

struct mrc_rsp *mrc_rspq_head(struct mrc_rspq *q)
{
	return q->head == q->tail ? NULL : rspq_at(q, q->tail);
}

bool mrc_rspq_ready(const struct mrc_rspq *q, u32 cum, bool held,
		    u32 held_min)
{
	const struct mrc_rsp *r = &q->e[q->tail & (MRC_RSPQ_SLOTS - 1)];

	if (q->head == q->tail || !mrc_seq_lt(r->req_psn, cum))
		return false;
	return !held || !mrc_seq_lt(held_min, r->req_psn);
}

void mrc_rspq_pop(struct mrc_rspq *q)
{
	if (q->head != q->tail)
		q->tail++;
}

u32 mrc_rspq_drop_from(struct mrc_rspq *q, u32 psn)
{
	u32 n = 0;

	while (q->head != q->tail &&
	       mrc_seq_geq(rspq_at(q, q->head - 1)->req_psn, psn)) {
		q->head--;
		n++;
	}
	return n;
}

void mrc_rspq_clear(struct mrc_rspq *q)
{
	q->tail = q->head;
}
