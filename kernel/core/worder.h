/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Write order across reordering: overlapping RDMA WRITEs of one QP end
 * as IB RC says (the later PSN's bytes win), although packets are placed
 * as they arrive.
 *
 * The responder records, for every sequenced PSN of its receive window
 * that it placed (or committed and holds), which bytes a WRITE packet
 * wrote: where in memory (a space and an address, as the environment's
 * mr_canon names them, so that two keys reaching the same bytes -- a
 * buffer registered twice, a window and its MR -- agree; else the rkey
 * and address) and length (length 0 for anything else, and for a held
 * WRITE last packet until it is placed). Before placing a WRITE
 * packet at PSN p it asks mrc_wo_pieces() for the parts of its range
 * that no WRITE packet of a later PSN, already placed, has written, and
 * copies only those. A late (retransmitted, overtaken) packet thus never
 * overwrites a later WRITE's bytes. When nothing beyond p was received
 * (in-order arrival) there is nothing to look at.
 *
 * A record is keyed by PSN % MRC_WND and valid only for its own PSN:
 * every PSN in (p, top) of the window that was received has a record
 * made then, and one that was not still holds an older PSN's.
 */
#ifndef MRC_WORDER_H
#define MRC_WORDER_H

#include "mrc_types.h"
#include "sack.h"

struct mrc_wo_rec {
	u64 va;
	u32 len;		/* 0: not a placed WRITE packet */
	u32 key;		/* the space (mr_canon), else the rkey */
	u32 psn;
};

/* A byte range [va, va + len). */
struct mrc_wo_piece {
	u64 va;
	u32 len;
};

struct mrc_worder {
	struct mrc_wo_rec rec[MRC_WND];
	struct mrc_wo_piece tmp[MRC_WND];	/* scratch: covered ranges */
	struct mrc_wo_piece out[MRC_WND];	/* for mrc_wo_pieces() */
};

void mrc_wo_init(struct mrc_worder *w);

/* PSN @psn was placed (or held): a WRITE's bytes, or @len 0. */
void mrc_wo_record(struct mrc_worder *w, u32 psn, u32 key, u64 va, u32 len);

/*
 * The parts of [@va, @va + @len) (space @key, the packet of PSN @psn) not
 * written by a WRITE packet recorded for a PSN in (@psn, @top): at most
 * MRC_WND pieces into @out (e.g. @w->out), in address order. Returns their number (0:
 * everything was overwritten by later WRITEs already).
 */
u32 mrc_wo_pieces(struct mrc_worder *w, u32 psn, u32 top, u32 key, u64 va,
		  u32 len, struct mrc_wo_piece *out);

#endif /* MRC_WORDER_H */
