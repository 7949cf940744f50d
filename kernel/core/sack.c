// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce receiver window / SACK and sender scoreboard. See sack.h.
 */
#include "sack.h"

#define MRC_WMASK	(MRC_WND - 1)

/* ------------------------------------------------------------------ rx */

static bool rx_bit(const struct mrc_rx *rx, u32 psn)
{
	u32 i = psn & MRC_WMASK;

	return rx->bits[i / 64] & (1ULL << (i % 64));
}

static void rx_set(struct mrc_rx *rx, u32 psn)
{
	u32 i = psn & MRC_WMASK;

	rx->bits[i / 64] |= 1ULL << (i % 64);
}

static void rx_clear(struct mrc_rx *rx, u32 psn)
{
	u32 i = psn & MRC_WMASK;

	rx->bits[i / 64] &= ~(1ULL << (i % 64));
}

void mrc_rx_init(struct mrc_rx *rx, u32 isn)
{
	memset(rx, 0, sizeof(*rx));
	rx->cum = isn;
	rx->top = isn;
	rx->ack_every = MRC_ACK_EVERY_DEFAULT;
	rx->ack_hole = MRC_ACK_EVERY_HOLE;
}

enum mrc_rx_verdict mrc_rx_check(const struct mrc_rx *rx, u32 psn)
{
	s32 d = mrc_seq_diff(psn, rx->cum);

	if (d < 0)
		return MRC_RX_DUP;
	if (d >= MRC_WND)
		return MRC_RX_OOW;
	return rx_bit(rx, psn) ? MRC_RX_DUP : MRC_RX_NEW;
}

enum mrc_rx_verdict mrc_rx_on_packet(struct mrc_rx *rx,
				     const struct mrc_pkt *p, bool ce,
				     u64 now_us)
{
	enum mrc_rx_verdict v = mrc_rx_check(rx, p->psn);
	struct mrc_rx_path *pp;
	bool hole;

	/*
	 * Only a NEW packet updates its path's report: a duplicate or an
	 * out-of-window packet may be a leftover of the QP's previous life
	 * (RESET and reuse), whose PPSN the current sender never sent; an
	 * ACK naming it would be refused whole (protocol.rst).
	 */
	if (v == MRC_RX_NEW && p->path_id < MRC_MAX_PATHS) {
		pp = &rx->path[p->path_id];
		if (!pp->seen || mrc_seq_gt(p->ppsn, pp->max_ppsn))
			pp->max_ppsn = p->ppsn;
		pp->seen = 1;
		pp->dirty = 1;
		if (ce) {
			pp->ce_count++;
			rx->ack_now = 1;	/* echo congestion promptly */
		}
		rx->ts_path = p->path_id;
	}
	if (v == MRC_RX_DUP) {
		rx->dsack = 1;
		rx->dsack_psn = p->psn;
	}
	rx->tsval = p->tsval;
	rx->ts_rx_us = now_us;
	rx->unacked++;

	hole = p->psn != rx->cum || mrc_seq_gt(rx->top, rx->cum);
	rx->ack_rsp = 0;
	if (v != MRC_RX_NEW || (p->flags & MRC_F_RETX) ||
	    rx->unacked >= rx->ack_every)
		rx->ack_now = 1;
	else if (p->flags & (MRC_F_ACKREQ | MRC_F_LAST)) {
		/*
		 * protocol.rst "ACK policy": a READ/atomic request's response
		 * may carry its ACK (the responder decides); any other LAST
		 * packet is acknowledged by the delayed ACK -- or by the
		 * reverse data sent before it fires (version 2) -- unless a
		 * hole is open or it asks with ACKREQ.
		 */
		if (mrc_op_is_rd_atomic(p->opcode))
			rx->ack_rsp = 1;
		else if ((p->flags & MRC_F_ACKREQ) || hole)
			rx->ack_now = 1;
	}
	if (!rx->ack_now && hole && rx->unacked >= rx->ack_hole)
		rx->ack_now = 1;	/* a hole is open: SACK news every few */
	return v;
}

u32 mrc_rx_commit(struct mrc_rx *rx, u32 psn)
{
	u32 old = rx->cum;

	if (mrc_rx_check(rx, psn) != MRC_RX_NEW)
		return 0;
	rx_set(rx, psn);
	if (mrc_seq_geq(psn, rx->top))
		rx->top = psn + 1;
	while (rx_bit(rx, rx->cum)) {
		rx_clear(rx, rx->cum);
		rx->cum++;
	}
	/* closed the last hole: the sender's window is whole again */
	if (rx->cum - old > 1 && rx->cum == rx->top)
		rx->ack_now = 1;
	return rx->cum - old;
}

bool mrc_rx_ack_due(const struct mrc_rx *rx)
{
	return rx->ack_now;
}

bool mrc_rx_ack_pending(const struct mrc_rx *rx)
{
	return rx->unacked || rx->ack_now;
}

void mrc_rx_ack_carried(struct mrc_rx *rx)
{
	u32 i;

	for (i = 0; i < MRC_MAX_PATHS; i++)
		rx->path[i].dirty = 0;
	rx->unacked = 0;
	rx->ack_now = 0;
	rx->ack_rsp = 0;
}

bool mrc_rx_cum_carries(const struct mrc_rx *rx)
{
	return mrc_rx_ack_pending(rx) && !rx->ack_now && !rx->dsack &&
	       rx->cum == rx->top && rx->carried < MRC_CUMACK_MAX;
}

void mrc_rx_cum_carried(struct mrc_rx *rx)
{
	mrc_rx_ack_carried(rx);
	rx->carried++;
}

u16 mrc_rx_rwnd(const struct mrc_rx *rx)
{
	return MRC_WND - (rx->top - rx->cum);
}

void mrc_rx_sack(const struct mrc_rx *rx, u8 sack[MRC_SACK_BYTES])
{
	u32 i, n = rx->top - rx->cum;

	memset(sack, 0, MRC_SACK_BYTES);
	for (i = 1; i < n; i++)
		if (rx_bit(rx, rx->cum + i))
			sack[i / 8] |= 1U << (i % 8);
}

void mrc_rx_build_ack(struct mrc_rx *rx, struct mrc_ack_info *a, u64 now_us)
{
	u64 delay = now_us - rx->ts_rx_us;
	u32 i, d = rx->dsack_psn - rx->cum;

	memset(a, 0, sizeof(*a));
	a->cum_psn = rx->cum;
	a->syndrome = MRC_SYN_ACK;
	a->tsecr = rx->tsval;
	a->ts_path = rx->ts_path;
	a->ack_delay = now_us < rx->ts_rx_us ? 0 : min_t(u64, delay, 0xffff);
	a->rwnd = mrc_rx_rwnd(rx);
	mrc_rx_sack(rx, a->sack);
	/* DSACK: a non-zero offset from cum_psn that fits 16 bits */
	if (rx->dsack && d && (s32)d == (s16)d) {
		a->dsack = 1;
		a->dsack_psn = rx->dsack_psn;
	}
	rx->dsack = 0;
	for (i = 0; i < MRC_MAX_PATHS; i++) {
		struct mrc_rx_path *pp = &rx->path[i];

		if (!pp->dirty)
			continue;
		a->paths[a->npaths].path_id = i;
		a->paths[a->npaths].ce_count = pp->ce_count;
		a->paths[a->npaths].max_ppsn = pp->max_ppsn;
		a->npaths++;
		pp->dirty = 0;
	}
	rx->unacked = 0;
	rx->ack_now = 0;
	rx->ack_rsp = 0;
	rx->carried = 0;
}

/* ------------------------------------------------------------------ tx */

static struct mrc_sb_ent *sb_ent(struct mrc_sb *sb, u32 psn)
{
	return &sb->ent[psn & MRC_WMASK];
}

static bool sb_outstanding(const struct mrc_sb *sb, u32 psn)
{
	return mrc_seq_in(psn, sb->una, sb->nxt);
}

void mrc_sb_init(struct mrc_sb *sb, u32 isn, u32 ippsn, u32 dupthresh)
{
	u32 i;

	memset(sb, 0, sizeof(*sb));
	sb->una = isn;
	sb->nxt = isn;
	sb->dupthresh = dupthresh ? dupthresh : 1;
	for (i = 0; i < MRC_MAX_PATHS; i++) {
		sb->path_nxt[i] = ippsn;
		mrc_reo_init(&sb->reo[i], isn);
	}
}

void mrc_sb_set_reo_wnd(struct mrc_sb *sb, u32 path, u32 base_us,
			u32 srtt_us)
{
	if (path < MRC_MAX_PATHS)
		sb->reo_wnd_us[path] = mrc_reo_wnd(&sb->reo[path], base_us,
						   srtt_us);
}

static void sb_sent(struct mrc_sb *sb, u8 path, u64 now_us)
{
	sb->path_sent_us[path] = (u32)now_us;
	sb->path_sent_valid |= 1U << path;
}

/* Send time @us on @path is known delivered. */
static void sb_path_del(struct mrc_sb *sb, u32 path, u32 us)
{
	u32 bit = 1U << path;

	if (!(sb->path_del_valid & bit) ||
	    (s32)(us - sb->path_del_us[path]) > 0)
		sb->path_del_us[path] = us;
	sb->path_del_valid |= bit;
}

bool mrc_sb_resp_ack(const struct mrc_sb *sb, u32 req_psn, u64 now_us,
		     struct mrc_ack_info *a)
{
	const struct mrc_sb_ent *e;

	if (!mrc_seq_in(req_psn, sb->una, sb->nxt))
		return false;
	e = &sb->ent[req_psn & MRC_WMASK];
	memset(a, 0, sizeof(*a));
	a->implicit = 1;
	a->cum_psn = req_psn + 1;

	a->syndrome = MRC_SYN_ACK;
	a->rwnd = MRC_WND;
	if (e->state != MRC_SB_SACKED && !e->retx) {
		/* the request's only transmission: an exact echo */
		a->tsecr = e->sent_us;
		a->ts_path = e->path;
	} else {
		/* no echo: rtt_from_echo() gives no sample of the future */
		a->tsecr = (u32)now_us + 1;
		a->ts_path = MRC_MAX_PATHS;
	}
	return true;
}

int mrc_sb_send_new(struct mrc_sb *sb, u8 path, u64 now_us, u32 cookie,
		    u32 *psn, u32 *ppsn)
{
	struct mrc_sb_ent *e;

	if (path >= MRC_MAX_PATHS)
		return -MRC_E_PATH;
	if (!mrc_sb_can_send(sb))
		return -MRC_E_NOSPC;
	e = sb_ent(sb, sb->nxt);
	sb_sent(sb, path, now_us);
	e->ppsn = sb->path_nxt[path]++;
	e->sent_us = (u32)now_us;
	e->cookie = cookie;
	e->path = path;
	e->state = MRC_SB_INFLIGHT;
	e->retx = 0;
	e->cause = MRC_LOSS_NONE;
	e->spurious = 0;
	sb->inflight[path]++;
	*psn = sb->nxt++;
	*ppsn = e->ppsn;
	return 0;
}

int mrc_sb_on_retx(struct mrc_sb *sb, u32 psn, u8 path, u64 now_us,
		   u32 *ppsn)
{
	struct mrc_sb_ent *e;

	if (path >= MRC_MAX_PATHS)
		return -MRC_E_PATH;
	if (!sb_outstanding(sb, psn))
		return -MRC_E_FIELD;
	e = sb_ent(sb, psn);
	if (e->state == MRC_SB_SACKED)
		return -MRC_E_FIELD;
	if (e->state == MRC_SB_LOST)
		sb->nlost--;
	else
		sb->inflight[e->path]--;
	e->state = MRC_SB_INFLIGHT;
	e->path = path;
	sb_sent(sb, path, now_us);
	e->ppsn = sb->path_nxt[path]++;
	e->prev_us = e->sent_us;
	e->sent_us = (u32)now_us;
	if (e->retx < 0xff)
		e->retx++;
	sb->inflight[path]++;
	*ppsn = e->ppsn;
	return 0;
}

static void sb_path_hi(struct mrc_sb *sb, u32 path, u32 ppsn)
{
	u32 bit = 1U << path;

	if (!(sb->path_hi_valid & bit) || mrc_seq_gt(ppsn, sb->path_hi[path]))
		sb->path_hi[path] = ppsn;
	sb->path_hi_valid |= bit;
}

/*
 * A retransmission of @e is known unnecessary. Only those the ACK rule
 * caused tell about reordering (not RTO, TLP, RNR or path failure);
 * @paths collects the paths whose window is to widen.
 */
static void sb_spurious(struct mrc_sb_ent *e, struct mrc_sb_ack_res *res,
			u32 *paths)
{
	if (!e->retx || e->spurious || e->cause != MRC_LOSS_ACK ||
	    e->lost_path >= MRC_MAX_PATHS)
		return;
	e->spurious = 1;
	res->spurious++;
	*paths |= 1U << e->lost_path;
}

/*
 * Entry leaves INFLIGHT/LOST because it was delivered. If the ACK echoes
 * the transmission before the latest one, that one arrived: the
 * retransmission was spurious.
 */
static void sb_delivered(struct mrc_sb *sb, struct mrc_sb_ent *e,
			 const struct mrc_ack_info *a,
			 struct mrc_sb_ack_res *res, u32 *spur)
{
	if (e->state == MRC_SB_INFLIGHT)
		sb->inflight[e->path]--;
	else if (e->state == MRC_SB_LOST)
		sb->nlost--;
	else
		return;
	res->newly_acked++;
	if (res->acked[e->path] < 0xffff)
		res->acked[e->path]++;
	/* An original transmission's PPSN proves its path progressed. */
	if (!e->retx) {
		sb_path_hi(sb, e->path, e->ppsn);
		sb_path_del(sb, e->path, e->sent_us);
	} else if (a->ts_path == e->lost_path && a->tsecr == e->prev_us) {
		sb_spurious(e, res, spur);
	}
}

/*
 * Time rule: was something sent on @e's path well after it delivered?
 * A path without a window of its own (no RTT sample yet) uses the widest
 * window of the others, @wmax: the paths join the same two hosts.
 */
static bool sb_time_lost(const struct mrc_sb *sb, const struct mrc_sb_ent *e,
			 u32 wmax)
{
	u32 w = sb->reo_wnd_us[e->path] ? sb->reo_wnd_us[e->path] : wmax;

	if (!w)
		return true;
	if (!(sb->path_del_valid & (1U << e->path)))
		return false;
	return (s32)(sb->path_del_us[e->path] - e->sent_us) > (s32)w;
}

static void sb_set_lost(struct mrc_sb *sb, struct mrc_sb_ent *e, u8 cause)
{
	sb->inflight[e->path]--;
	sb->nlost++;
	e->state = MRC_SB_LOST;
	e->cause = cause;
	e->lost_path = e->path;
}

/* Is an ACK consistent with what was sent? (no state change) */
static int sb_ack_valid(const struct mrc_sb *sb, const struct mrc_ack_info *a)
{
	u32 i;

	/* cum may lag una (old ACK) but never pass nxt. */
	if (mrc_seq_gt(a->cum_psn, sb->nxt) ||
	    mrc_seq_diff(sb->una, a->cum_psn) > (s32)MRC_WND * 4)
		return -MRC_E_FIELD;
	if (a->npaths > MRC_MAX_PATHS)
		return -MRC_E_PATH;
	for (i = 0; i < a->npaths; i++) {
		const struct mrc_ack_path_info *r = &a->paths[i];

		if (r->path_id >= MRC_MAX_PATHS)
			return -MRC_E_PATH;
		/* never sent on that path yet, or a PPSN not yet sent */
		if (!mrc_seq_lt(r->max_ppsn, sb->path_nxt[r->path_id]))
			return -MRC_E_FIELD;
	}
	/* SACK bits may only cover PSNs that were sent. */
	for (i = 1; i < MRC_WND; i++) {
		if (!(a->sack[i / 8] & (1U << (i % 8))))
			continue;
		if (!mrc_seq_lt(a->cum_psn + i, sb->nxt))
			return -MRC_E_FIELD;
	}
	return 0;
}

int mrc_sb_apply_ack(struct mrc_sb *sb, const struct mrc_ack_info *a,
		     struct mrc_sb_ack_res *res)
{
	struct mrc_sb_ack_res dummy;
	u32 i, psn, spur = 0, wmax = 0;
	int err;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	err = sb_ack_valid(sb, a);
	if (err)
		return err;

	/* 1. cumulative point */
	while (mrc_seq_lt(sb->una, a->cum_psn)) {
		struct mrc_sb_ent *e = sb_ent(sb, sb->una);

		sb_delivered(sb, e, a, res, &spur);
		e->state = MRC_SB_FREE;
		sb->una++;
		res->cum_advance++;
	}

	/* 2. selective acks */
	for (i = 1; i < MRC_WND; i++) {
		struct mrc_sb_ent *e;

		if (!(a->sack[i / 8] & (1U << (i % 8))))
			continue;
		psn = a->cum_psn + i;
		if (!sb_outstanding(sb, psn))
			continue;
		e = sb_ent(sb, psn);
		sb_delivered(sb, e, a, res, &spur);
		e->state = MRC_SB_SACKED;
	}

	/*
	 * A receiver never takes a SACK back: SACKed PSNs at una are in.
	 * Only an implicit acknowledgement (a response's, which names its
	 * request, not the peer's cum) or an old ACK reordered after it can
	 * leave una on one; were the ACK that would move it lost, nothing
	 * would be left to retransmit and no ACK would come.
	 */
	while (mrc_seq_lt(sb->una, sb->nxt) &&
	       sb_ent(sb, sb->una)->state == MRC_SB_SACKED) {
		sb_ent(sb, sb->una)->state = MRC_SB_FREE;
		sb->una++;
		res->cum_advance++;
	}

	/* 3. per-path reports: highest PPSN and ECN echo */
	for (i = 0; i < a->npaths; i++) {
		const struct mrc_ack_path_info *r = &a->paths[i];
		s16 dce = mrc_seq16_diff(r->ce_count, sb->path_ce[r->path_id]);

		sb_path_hi(sb, r->path_id, r->max_ppsn);
		if (dce > 0) {
			res->ce[r->path_id] = dce;
			sb->path_ce[r->path_id] = r->ce_count;
		}
	}

	/*
	 * The echoed timestamp is the send time of the packet that just
	 * arrived on ts_path (a retransmission too); a value after the
	 * path's latest send is not ours and is ignored.
	 */
	if (a->ts_path < MRC_MAX_PATHS &&
	    (sb->path_sent_valid & (1U << a->ts_path)) &&
	    (s32)(a->tsecr - sb->path_sent_us[a->ts_path]) <= 0)
		sb_path_del(sb, a->ts_path, a->tsecr);

	/*
	 * DSACK: a PSN arrived twice. Its entry is still that PSN's while
	 * the slot was not reused (PSN >= nxt - MRC_WND).
	 */
	if (a->dsack && mrc_seq_in(a->dsack_psn, sb->nxt - MRC_WND, sb->nxt))
		sb_spurious(sb_ent(sb, a->dsack_psn), res, &spur);

	/* adaptive reordering window: rounds, then growth */
	for (i = 0; i < MRC_MAX_PATHS; i++) {
		mrc_reo_on_ack(&sb->reo[i], sb->una, sb->nxt);
		if (spur & (1U << i))
			mrc_reo_on_spurious(&sb->reo[i]);
		wmax = max_t(u32, wmax, sb->reo_wnd_us[i]);
	}

	/* 4. loss: a later PPSN on the same path arrived dupthresh ahead */
	for (psn = sb->una; mrc_seq_lt(psn, sb->nxt); psn++) {
		struct mrc_sb_ent *e = sb_ent(sb, psn);

		if (e->state != MRC_SB_INFLIGHT ||
		    !(sb->path_hi_valid & (1U << e->path)))
			continue;
		if (mrc_seq_geq(sb->path_hi[e->path], e->ppsn + sb->dupthresh) &&
		    sb_time_lost(sb, e, wmax)) {
			sb_set_lost(sb, e, MRC_LOSS_ACK);
			mrc_reo_on_loss(&sb->reo[e->path]);
			res->newly_lost++;
			res->lost[e->path]++;
		}
	}
	return 0;
}

int mrc_sb_next_lost(const struct mrc_sb *sb, u32 *psn)
{
	u32 p;

	if (!sb->nlost)
		return -1;
	for (p = sb->una; mrc_seq_lt(p, sb->nxt); p++) {
		if (sb->ent[p & MRC_WMASK].state == MRC_SB_LOST) {
			*psn = p;
			return 0;
		}
	}
	return -1;
}

int mrc_sb_tlp_psn(const struct mrc_sb *sb, u32 *psn)
{
	u32 p;

	for (p = sb->nxt; mrc_seq_gt(p, sb->una); p--) {
		u8 st = sb->ent[(p - 1) & MRC_WMASK].state;

		if (st == MRC_SB_INFLIGHT || st == MRC_SB_LOST) {
			*psn = p - 1;
			return 0;
		}
	}
	return -1;
}

int mrc_sb_mark_lost_cause(struct mrc_sb *sb, u32 psn, u8 cause)
{
	struct mrc_sb_ent *e;

	if (!sb_outstanding(sb, psn))
		return -MRC_E_FIELD;
	e = sb_ent(sb, psn);
	if (e->state == MRC_SB_SACKED)
		return -MRC_E_FIELD;
	if (e->state == MRC_SB_INFLIGHT)
		sb_set_lost(sb, e, cause);
	return 0;
}

int mrc_sb_mark_lost(struct mrc_sb *sb, u32 psn)
{
	return mrc_sb_mark_lost_cause(sb, psn, MRC_LOSS_NAK);
}

u8 mrc_sb_cause(const struct mrc_sb *sb, u32 psn)
{
	const struct mrc_sb_ent *e = &sb->ent[psn & MRC_WMASK];

	if (!sb_outstanding(sb, psn) || e->state != MRC_SB_LOST)
		return MRC_LOSS_NONE;
	return e->cause;
}

u32 mrc_sb_mark_inflight_lost(struct mrc_sb *sb, u32 path)
{
	u32 p, n = 0;

	for (p = sb->una; mrc_seq_lt(p, sb->nxt); p++) {
		struct mrc_sb_ent *e = sb_ent(sb, p);

		if (e->state != MRC_SB_INFLIGHT)
			continue;
		if (path < MRC_MAX_PATHS && e->path != path)
			continue;
		sb_set_lost(sb, e, MRC_LOSS_PATH);
		n++;
	}
	return n;
}

u32 mrc_sb_mark_stale_lost_n(struct mrc_sb *sb, u64 now_us, u32 age_us,
			     u16 *lost, u32 per_path)
{
	u32 count[MRC_MAX_PATHS] = { 0 };
	u32 p, n = 0;

	for (p = sb->una; mrc_seq_lt(p, sb->nxt); p++) {
		struct mrc_sb_ent *e = sb_ent(sb, p);

		if (e->state != MRC_SB_INFLIGHT ||
		    (u32)now_us - e->sent_us < age_us ||
		    count[e->path] >= per_path)
			continue;
		count[e->path]++;
		sb_set_lost(sb, e, MRC_LOSS_RTO);
		if (lost)
			lost[e->path]++;
		n++;
	}
	return n;
}

u32 mrc_sb_mark_stale_lost(struct mrc_sb *sb, u64 now_us, u32 age_us,
			   u16 *lost)
{
	return mrc_sb_mark_stale_lost_n(sb, now_us, age_us, lost, ~0U);
}

u32 mrc_sb_cookie(const struct mrc_sb *sb, u32 psn)
{
	if (!sb_outstanding(sb, psn))
		return 0;
	return sb->ent[psn & MRC_WMASK].cookie;
}

enum mrc_sb_state mrc_sb_state_of(const struct mrc_sb *sb, u32 psn)
{
	if (!sb_outstanding(sb, psn))
		return MRC_SB_FREE;
	return sb->ent[psn & MRC_WMASK].state;
}

int mrc_sb_check(const struct mrc_sb *sb)
{
	u16 inflight[MRC_MAX_PATHS] = { 0 };
	u32 p, nlost = 0, i;

	if (mrc_sb_outstanding(sb) > MRC_WND)
		return -1;
	for (p = sb->una; mrc_seq_lt(p, sb->nxt); p++) {
		const struct mrc_sb_ent *e = &sb->ent[p & MRC_WMASK];

		if (e->path >= MRC_MAX_PATHS)
			return -2;
		if (e->state == MRC_SB_INFLIGHT)
			inflight[e->path]++;
		else if (e->state == MRC_SB_LOST)
			nlost++;
		else if (e->state != MRC_SB_SACKED)
			return -3;
	}
	if (nlost != sb->nlost)
		return -4;
	for (i = 0; i < MRC_MAX_PATHS; i++)
		if (inflight[i] != sb->inflight[i])
			return -5;
	return 0;
}
