/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Serial-number arithmetic (RFC 1982 style) for every metaroce sequence
 * space: PSN, PPSN, RMSN and timestamps are 32-bit, the per-path CE
 * counter is 16-bit. Two values compare correctly as long as they are
 * less than half the space apart; all windows are far smaller.
 */
#ifndef MRC_SEQ_H
#define MRC_SEQ_H

#include "mrc_types.h"

/* a - b as a signed distance (wrap-safe). */
static inline s32 mrc_seq_diff(u32 a, u32 b)
{
	return (s32)(a - b);
}

static inline bool mrc_seq_lt(u32 a, u32 b)
{
	return mrc_seq_diff(a, b) < 0;
}

static inline bool mrc_seq_leq(u32 a, u32 b)
{
	return mrc_seq_diff(a, b) <= 0;
}

static inline bool mrc_seq_gt(u32 a, u32 b)
{
	return mrc_seq_diff(a, b) > 0;
}

static inline bool mrc_seq_geq(u32 a, u32 b)
{
	return mrc_seq_diff(a, b) >= 0;
}

/* The later of two sequence numbers. */
static inline u32 mrc_seq_max(u32 a, u32 b)
{
	return mrc_seq_gt(a, b) ? a : b;
}

/* lo <= x < hi in serial order. */
static inline bool mrc_seq_in(u32 x, u32 lo, u32 hi)
{
	return mrc_seq_geq(x, lo) && mrc_seq_lt(x, hi);
}

/* 16-bit space (CE counters): a - b, wrap-safe. */
static inline s16 mrc_seq16_diff(u16 a, u16 b)
{
	return (s16)(u16)(a - b);
}

#endif /* MRC_SEQ_H */
