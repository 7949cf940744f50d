// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce atomic replay cache. See replay.h.
 */
#include "replay.h"
#include "seq.h"
#include "hdr.h"

void mrc_replay_init(struct mrc_replay *c)
{
	memset(c, 0, sizeof(*c));
}

bool mrc_replay_has_room(const struct mrc_replay *c)
{
	u32 i;

	for (i = 0; i < MRC_REPLAY_SLOTS; i++)
		if (!c->e[i].valid)
			return true;
	return false;
}

int mrc_replay_put(struct mrc_replay *c, u32 req_psn, u32 resp_psn,
		   u64 orig)
{
	u32 i;

	for (i = 0; i < MRC_REPLAY_SLOTS; i++) {
		if (c->e[i].valid)
			continue;
		c->e[i].orig = orig;
		c->e[i].req_psn = req_psn;
		c->e[i].resp_psn = resp_psn;
		c->e[i].valid = 1;
		return 0;
	}
	return -MRC_E_NOSPC;
}

int mrc_replay_get(const struct mrc_replay *c, u32 req_psn, u64 *orig)
{
	u32 i;

	for (i = 0; i < MRC_REPLAY_SLOTS; i++) {
		if (c->e[i].valid && c->e[i].req_psn == req_psn) {
			*orig = c->e[i].orig;
			return 0;
		}
	}
	return -1;
}

u32 mrc_replay_release(struct mrc_replay *c, u32 una)
{
	u32 i, n = 0;

	for (i = 0; i < MRC_REPLAY_SLOTS; i++) {
		if (c->e[i].valid && mrc_seq_lt(c->e[i].resp_psn, una)) {
			c->e[i].valid = 0;
			n++;
		}
	}
	return n;
}
