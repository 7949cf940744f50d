// SPDX-License-Identifier: GPL-2.0
/*
 * Write order across reordering (see worder.h).
 */
#include "worder.h"
#include "seq.h"

void mrc_wo_init(struct mrc_worder *w)
{
	u32 i;

	for (i = 0; i < MRC_WND; i++)
		w->rec[i].len = 0;
}

void mrc_wo_record(struct mrc_worder *w, u32 psn, u32 key, u64 va, u32 len)
{
	struct mrc_wo_rec *r = &w->rec[psn % MRC_WND];

	r->psn = psn;
	r->key = key;
	r->va = va;
	r->len = len;
}

u32 mrc_wo_pieces(struct mrc_worder *w, u32 psn, u32 top, u32 key, u64 va,
		  u32 len, struct mrc_wo_piece *out)
{
	u64 end = va + len, lo, hi, at;
	u32 n = 0, i, j, q, k = 0;

	if (!len)
		return 0;
	/* covered ranges, clipped to ours, kept sorted by start */
	for (q = psn + 1; mrc_seq_lt(q, top) && q - psn < MRC_WND; q++) {
		const struct mrc_wo_rec *r = &w->rec[q % MRC_WND];

		if (r->psn != q || !r->len || r->key != key)
			continue;
		lo = r->va > va ? r->va : va;
		hi = r->va + r->len < end ? r->va + r->len : end;
		if (lo >= hi)
			continue;
		for (j = k; j > 0 && w->tmp[j - 1].va > lo; j--)
			w->tmp[j] = w->tmp[j - 1];
		w->tmp[j].va = lo;
		w->tmp[j].len = (u32)(hi - lo);
		k++;
	}
	/* the complement, in address order */
	at = va;
	for (i = 0; i < k; i++) {
		lo = w->tmp[i].va;
		hi = lo + w->tmp[i].len;
		if (lo > at) {
			out[n].va = at;
			out[n].len = (u32)(lo - at);
			n++;
		}
		if (hi > at)
			at = hi;
	}
	if (at < end) {
		out[n].va = at;
		out[n].len = (u32)(end - at);
		n++;
	}
	return n;
}
