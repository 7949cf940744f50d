// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: packet parser + receiver SACK state machine + sender
 * scoreboard ACK processing.
 *
 * Input: a sequence of records [len_hi len_lo bytes...], each one UDP
 * payload. Every record is parsed (with and without the ICRC check);
 * parsed packets must rebuild to the same struct; sequenced packets drive
 * a receiver window whose generated ACKs must always build, parse and be
 * accepted by a matching sender; ACK packets drive a sender scoreboard
 * whose invariants are checked after every step.
 */
#include <stdlib.h>
#include "hdr.h"
#include "sack.h"
#include "crc32c.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

struct fz_state {
	struct mrc_rx rx;
	struct mrc_sb sb;	/* hostile ACKs land here */
	struct mrc_pkt p, q;
	struct mrc_ack_info ack;
	u8 buf[MRC_MAX_HDR_LEN + MRC_MAX_PAYLOAD + MRC_ICRC_LEN];
};

static void fz_sender_init(struct mrc_sb *sb)
{
	u32 i, psn, ppsn;

	mrc_sb_init(sb, 0xffffff80U, 0xfffffff0U, 3);
	for (i = 0; i < 200; i++)
		CHECK(!mrc_sb_send_new(sb, i % 4, i, i, &psn, &ppsn));
}

static void fz_roundtrip(struct fz_state *s, const u8 *data, u32 len)
{
	int h = mrc_hdr_build(&s->p, s->buf, sizeof(s->buf));

	CHECK(h == (int)s->p.hdr_len);
	memcpy(s->buf + h, data + h, s->p.payload_len);
	mrc_icrc_put(s->buf, h + s->p.payload_len);
	CHECK(mrc_pkt_parse(s->buf, len, &s->q, 0) == 0);
	CHECK(!memcmp(&s->p, &s->q, sizeof(s->p)));
}

static void fz_rx(struct fz_state *s, u64 now)
{
	enum mrc_rx_verdict v;
	u32 cum = s->rx.cum;
	int h;

	v = mrc_rx_on_packet(&s->rx, &s->p, s->p.tsval & 1, now);
	CHECK(v == mrc_rx_check(&s->rx, s->p.psn));
	if (v == MRC_RX_NEW) {
		mrc_rx_commit(&s->rx, s->p.psn);
		CHECK(mrc_rx_check(&s->rx, s->p.psn) == MRC_RX_DUP);
	}
	CHECK(mrc_seq_geq(s->rx.cum, cum));
	CHECK(mrc_seq_leq(s->rx.cum, s->rx.top));
	CHECK(s->rx.top - s->rx.cum <= MRC_WND);
	CHECK(mrc_rx_check(&s->rx, s->rx.cum) != MRC_RX_DUP);

	if (!mrc_rx_ack_due(&s->rx))
		return;
	mrc_rx_build_ack(&s->rx, &s->ack, now);
	memset(&s->q, 0, sizeof(s->q));
	s->q.opcode = MRC_OP_ACK;
	s->q.ack = s->ack;
	h = mrc_hdr_build(&s->q, s->buf, sizeof(s->buf));
	CHECK(h > 0);
	h = mrc_icrc_put(s->buf, h);
	CHECK(mrc_pkt_parse(s->buf, h, &s->q, 0) == 0);
	CHECK(!memcmp(&s->q.ack, &s->ack, sizeof(s->ack)));
}

static void fz_ack(struct fz_state *s, u64 now)
{
	struct mrc_sb_ack_res res;
	u32 psn, ppsn, una = s->sb.una;
	int err;

	err = mrc_sb_apply_ack(&s->sb, &s->p.ack, &res);
	CHECK(mrc_sb_check(&s->sb) == 0);
	if (err) {
		CHECK(s->sb.una == una && res.newly_acked == 0);
		return;
	}
	CHECK(mrc_seq_geq(s->sb.una, una));
	CHECK(res.cum_advance == s->sb.una - una);
	if (!mrc_sb_next_lost(&s->sb, &psn)) {
		CHECK(mrc_sb_state_of(&s->sb, psn) == MRC_SB_LOST);
		CHECK(!mrc_sb_on_retx(&s->sb, psn, s->p.path_id % 4, now,
				      &ppsn));
	}
	if (s->p.ack.rnr_timer & 1)
		mrc_sb_mark_stale_lost(&s->sb, now, s->p.ack.ack_delay, NULL);
	if (!mrc_sb_tlp_psn(&s->sb, &psn))
		CHECK(mrc_sb_state_of(&s->sb, psn) != MRC_SB_SACKED);
	CHECK(mrc_sb_check(&s->sb) == 0);
	/* keep something outstanding */
	while (mrc_sb_can_send(&s->sb) && mrc_sb_outstanding(&s->sb) < 64)
		CHECK(!mrc_sb_send_new(&s->sb, s->sb.nxt % 4, now, 0, &psn,
				       &ppsn));
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static struct fz_state *s;
	u64 now = 1000;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			abort();
	}
	mrc_rx_init(&s->rx, 0xfffffff0U);
	fz_sender_init(&s->sb);

	while (size >= 2) {
		u32 len = (u32)data[0] << 8 | data[1];
		int err;

		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		now += 7;
		/* full parse (ICRC) and structural parse must agree */
		err = mrc_pkt_parse(data, len, &s->p, 0);
		if (mrc_pkt_parse(data, len, &s->p, MRC_PARSE_NO_ICRC) == 0) {
			CHECK(err == 0 || err == -MRC_E_ICRC);
			CHECK(s->p.hdr_len + s->p.payload_len +
			      MRC_ICRC_LEN == len);
			fz_roundtrip(s, data, len);
			if (mrc_op_sequenced(s->p.opcode))
				fz_rx(s, now);
			else if (s->p.opcode == MRC_OP_ACK)
				fz_ack(s, now);
		} else {
			CHECK(err != 0);
		}
		data += len;
		size -= len;
	}
	return 0;
}
