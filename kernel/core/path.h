/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Path table of one QP: N paths, each a distinct UDP source port (so ECMP
 * hashes them onto different routes), with its own RTT, congestion window
 * and failure streaks. Packets are sprayed round-robin over the paths that
 * have window room. A path whose packets keep getting lost with nothing
 * delivered (or that keeps timing out) is declared blackholed and gets a
 * fresh source port, i.e. a new route, keeping its path id.
 *
 * Source ports come from a deterministic generator seeded per QP, inside
 * [MRC_SPORT_MIN, MRC_SPORT_MAX], never equal to a port in use.
 */
#ifndef MRC_PATH_H
#define MRC_PATH_H

#include "mrc_types.h"
#include <metaroce/wire.h>
#include "rtt.h"
#include "cc.h"
#include "sack.h"

#define MRC_PATHS_DEFAULT		4
#define MRC_PATH_LOSS_THRESH		8	/* losses with no delivery */
#define MRC_PATH_RTO_THRESH		2	/* timeouts with no delivery */

struct mrc_path_cfg {
	u32 npaths;		/* 1..MRC_MAX_PATHS */
	u32 seed;		/* per-QP, e.g. hash of QPNs and GIDs */
	u32 init_cwnd, min_cwnd, max_cwnd;	/* packets, 0 = default */
	u32 init_rto, min_rto, max_rto;		/* us, 0 = default */
	u32 loss_thresh;	/* 0 = MRC_PATH_LOSS_THRESH */
	u32 rto_thresh;		/* 0 = MRC_PATH_RTO_THRESH */
};

struct mrc_path {
	u16 sport;		/* UDP source port */
	u16 reserved;
	u32 loss_streak;	/* packets lost since the last delivery */
	u32 rto_streak;		/* timeouts since the last delivery */
	u32 replaced;		/* times this path got a new port */
	struct mrc_rtt rtt;
	struct mrc_cc cc;
};

struct mrc_paths {
	u32 n;
	u32 seed;
	u32 gen;		/* source port generator counter */
	u32 rr;			/* spraying cursor */
	u32 loss_thresh;
	u32 rto_thresh;
	struct mrc_path_cfg cfg;
	struct mrc_path p[MRC_MAX_PATHS];
};

/* Fill @cfg with defaults (MRC_PATHS_DEFAULT paths, seed 0). */
void mrc_path_cfg_default(struct mrc_path_cfg *cfg);

void mrc_paths_init(struct mrc_paths *ps, const struct mrc_path_cfg *cfg);

/* A source port in range, not used by any path. Advances the generator. */
u16 mrc_paths_fresh_port(struct mrc_paths *ps);

/*
 * Choose the path for the next packet: round-robin over paths whose
 * in-flight count (@inflight, e.g. mrc_sb.inflight) is below their
 * window. Returns the path id, or -1 if every path is full.
 */
int mrc_paths_pick(struct mrc_paths *ps, const u16 *inflight);

/*
 * Feed the result of mrc_sb_apply_ack() to every path's congestion and
 * failure state. Returns a bitmask of paths that just crossed the
 * blackhole threshold (call mrc_paths_replace() and
 * mrc_sb_mark_inflight_lost() for each).
 */
u32 mrc_paths_on_ack(struct mrc_paths *ps, const struct mrc_sb_ack_res *res);

/* RTT sample (us) for path @id (ACK ts_path / tsecr). */
void mrc_paths_rtt_sample(struct mrc_paths *ps, u32 id, u32 rtt_us);

/*
 * Retransmission timeout on path @id (it had packets older than its RTO):
 * backs off its RTO and collapses its window. Returns true when the path
 * must be replaced.
 */
bool mrc_paths_on_timeout(struct mrc_paths *ps, u32 id);

/*
 * Give path @id a fresh source port and initial cc/streak state; keeps
 * the RTT estimate (same endpoints). Returns the new port.
 */
u16 mrc_paths_replace(struct mrc_paths *ps, u32 id);

#endif /* MRC_PATH_H */
