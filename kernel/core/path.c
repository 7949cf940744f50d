// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce path table. See path.h.
 */
#include "path.h"

/* 32-bit mixer (murmur3 finalizer). */
static u32 mrc_mix32(u32 x)
{
	x ^= x >> 16;
	x *= 0x85ebca6bU;
	x ^= x >> 13;
	x *= 0xc2b2ae35U;
	x ^= x >> 16;
	return x;
}

void mrc_path_cfg_default(struct mrc_path_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->npaths = MRC_PATHS_DEFAULT;
}

static bool port_in_use(const struct mrc_paths *ps, u16 port)
{
	u32 i;

	for (i = 0; i < ps->n; i++)
		if (ps->p[i].sport == port)
			return true;
	return false;
}

u16 mrc_paths_fresh_port(struct mrc_paths *ps)
{
	const u32 span = MRC_SPORT_MAX - MRC_SPORT_MIN + 1;
	u16 port;

	/* n <= 16 ports in use out of 16384: terminates quickly */
	do {
		port = MRC_SPORT_MIN +
		       mrc_mix32(ps->seed ^ mrc_mix32(ps->gen++)) % span;
	} while (port_in_use(ps, port));
	return port;
}

static void path_reset(struct mrc_paths *ps, struct mrc_path *p)
{
	const struct mrc_path_cfg *c = &ps->cfg;

	mrc_cc_init(&p->cc, c->init_cwnd, c->min_cwnd, c->max_cwnd);
	p->loss_streak = 0;
	p->rto_streak = 0;
}

void mrc_paths_init(struct mrc_paths *ps, const struct mrc_path_cfg *cfg)
{
	u32 i;

	memset(ps, 0, sizeof(*ps));
	ps->cfg = *cfg;
	ps->n = clamp_t(u32, cfg->npaths, 1, MRC_MAX_PATHS);
	ps->seed = cfg->seed;
	ps->loss_thresh = cfg->loss_thresh ? cfg->loss_thresh :
			  MRC_PATH_LOSS_THRESH;
	ps->rto_thresh = cfg->rto_thresh ? cfg->rto_thresh :
			 MRC_PATH_RTO_THRESH;
	for (i = 0; i < ps->n; i++) {
		struct mrc_path *p = &ps->p[i];

		mrc_rtt_init(&p->rtt, cfg->init_rto, cfg->min_rto,
			     cfg->max_rto);
		path_reset(ps, p);
	}
	/* assign after all sports are 0 so none collides */
	for (i = 0; i < ps->n; i++)
		ps->p[i].sport = mrc_paths_fresh_port(ps);
}

int mrc_paths_pick(struct mrc_paths *ps, const u16 *inflight)
{
	u32 k;

	for (k = 0; k < ps->n; k++) {
		u32 id = (ps->rr + k) % ps->n;

		if (inflight[id] < mrc_cc_window(&ps->p[id].cc)) {
			ps->rr = id + 1;
			return id;
		}
	}
	return -1;
}

u32 mrc_paths_on_ack(struct mrc_paths *ps, const struct mrc_sb_ack_res *res)
{
	u32 i, bad = 0;

	for (i = 0; i < ps->n; i++) {
		struct mrc_path *p = &ps->p[i];

		if (res->acked[i] || res->ce[i])
			mrc_cc_on_ack(&p->cc, res->acked[i], res->ce[i]);
		if (res->acked[i]) {
			p->loss_streak = 0;
			p->rto_streak = 0;
		}
		if (res->lost[i]) {
			mrc_cc_on_loss(&p->cc);
			/* delivery in the same ACK does not excuse losses */
			p->loss_streak += res->lost[i];
			if (p->loss_streak >= ps->loss_thresh)
				bad |= 1U << i;
		}
	}
	return bad;
}

void mrc_paths_rtt_sample(struct mrc_paths *ps, u32 id, u32 rtt_us)
{
	if (id < ps->n && rtt_us)
		mrc_rtt_sample(&ps->p[id].rtt, rtt_us);
}

bool mrc_paths_on_timeout(struct mrc_paths *ps, u32 id)
{
	struct mrc_path *p;

	if (id >= ps->n)
		return false;
	p = &ps->p[id];
	mrc_rtt_backoff(&p->rtt);
	mrc_cc_on_timeout(&p->cc);
	p->rto_streak++;
	return p->rto_streak >= ps->rto_thresh;
}

u16 mrc_paths_replace(struct mrc_paths *ps, u32 id)
{
	struct mrc_path *p;

	if (id >= ps->n)
		return 0;
	p = &ps->p[id];
	p->sport = mrc_paths_fresh_port(ps);
	p->replaced++;
	p->rtt.backoff = 0;
	path_reset(ps, p);
	return p->sport;
}
