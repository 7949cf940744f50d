/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Responder atomic replay cache. An atomic executes exactly once (its
 * request PSN is deduplicated by the receive window); its result is kept
 * here, keyed by the request PSN, until the ATOMIC_RESP carrying it has
 * been acknowledged, so retransmitting the response never re-executes the
 * operation. The responder must not execute a new atomic while the cache
 * is full (leave it uncommitted; the requester retransmits).
 */
#ifndef MRC_REPLAY_H
#define MRC_REPLAY_H

#include "mrc_types.h"

#define MRC_REPLAY_SLOTS	16	/* = max_dest_rd_atomic advertised */

struct mrc_replay {
	struct {
		u64 orig;	/* value returned by the atomic */
		u32 req_psn;	/* requester's PSN of the atomic */
		u32 resp_psn;	/* our PSN of the ATOMIC_RESP */
		u8 valid;
	} e[MRC_REPLAY_SLOTS];
};

void mrc_replay_init(struct mrc_replay *c);

/* True if a result can be stored (check before executing). */
bool mrc_replay_has_room(const struct mrc_replay *c);

/* Store a result: 0, or -MRC_E_NOSPC when full. */
int mrc_replay_put(struct mrc_replay *c, u32 req_psn, u32 resp_psn,
		   u64 orig);

/* Look up by request PSN: 0 and *orig, or -1. */
int mrc_replay_get(const struct mrc_replay *c, u32 req_psn, u64 *orig);

/* Free entries whose response PSN is before @una (acked). Returns count. */
u32 mrc_replay_release(struct mrc_replay *c, u32 una);

#endif /* MRC_REPLAY_H */
