// SPDX-License-Identifier: GPL-2.0
/* Header build/parse: roundtrip of every opcode, hostile inputs. */
#include "mrc_test.h"
#include "hdr.h"
#include "crc32c.h"

static const u8 hdr_ops[] = {
	MRC_OP_SEND, MRC_OP_SEND_IMM, MRC_OP_SEND_INV, MRC_OP_WRITE,
	MRC_OP_WRITE_IMM, MRC_OP_READ_REQ, MRC_OP_READ_RESP,
	MRC_OP_CMP_SWAP, MRC_OP_FETCH_ADD, MRC_OP_ATOMIC_RESP,
	MRC_OP_ACK, MRC_OP_PROBE, MRC_OP_UD_SEND, MRC_OP_UD_SEND_IMM,
};

#define HDR_PAYLOAD	100

/* A valid packet of @op: a middle segment where segments exist. */
static void hdr_fill(struct mrc_pkt *p, u8 op)
{
	u32 i;

	memset(p, 0, sizeof(*p));
	p->opcode = op;
	p->path_id = 5;
	p->dst_qpn = 0xabcdef;
	p->psn = 0xfffffffeU;
	p->ppsn = 0x12345678;
	p->tsval = 0xdeadbeef;
	switch (op) {
	case MRC_OP_SEND:
	case MRC_OP_SEND_IMM:
	case MRC_OP_SEND_INV:
		p->payload_len = HDR_PAYLOAD;
		p->send.rmsn = 77;
		p->send.msg_len = 1000;
		p->send.offset = 300;
		p->send.imm = 0x01020304;
		break;
	case MRC_OP_WRITE:
	case MRC_OP_WRITE_IMM:
		p->payload_len = HDR_PAYLOAD;
		p->flags = MRC_F_LAST | MRC_F_SOLICIT;
		p->write.va = 0x1122334455667788ULL;
		p->write.rkey = 0x99;
		p->write.msg_len = 400;
		p->write.offset = 300;
		p->write.rmsn = 3;
		p->write.imm = 0xcafe;
		break;
	case MRC_OP_READ_REQ:
		p->flags = MRC_F_FIRST | MRC_F_LAST | MRC_F_ACKREQ;
		p->read.va = 0x8000000000000000ULL;
		p->read.rkey = 7;
		p->read.len = MRC_MAX_MSG;
		break;
	case MRC_OP_READ_RESP:
		p->payload_len = HDR_PAYLOAD;
		p->flags = MRC_F_FIRST;
		p->rresp.req_psn = 41;
		p->rresp.offset = 0;
		p->rresp.msg_len = 5000;
		break;
	case MRC_OP_CMP_SWAP:
	case MRC_OP_FETCH_ADD:
		p->flags = MRC_F_FIRST | MRC_F_LAST;
		p->atomic.va = 0x1000;
		p->atomic.swap_add = ~0ULL;
		p->atomic.compare = 0x0102030405060708ULL;
		p->atomic.rkey = 0xffffffffU;
		break;
	case MRC_OP_ATOMIC_RESP:
		p->flags = MRC_F_FIRST | MRC_F_LAST;
		p->aresp.orig = 0xfedcba9876543210ULL;
		p->aresp.req_psn = 12;
		break;
	case MRC_OP_ACK:
		p->psn = 0;
		p->ppsn = 0;
		p->ack.cum_psn = 0xfffffff0U;
		p->ack.nak_psn = 0;
		p->ack.tsecr = 0x55aa55aa;
		p->ack.ack_delay = 12;
		p->ack.fair_share = 32;
		p->ack.rwnd = 200;
		p->ack.ts_path = 3;
		p->ack.npaths = 3;
		for (i = 1; i < MRC_WND; i += 7)
			p->ack.sack[i / 8] |= 1U << (i % 8);
		for (i = 0; i < 3; i++) {
			p->ack.paths[i].path_id = i * 5;
			p->ack.paths[i].ce_count = 0xfff0 + i;
			p->ack.paths[i].max_ppsn = 0xfffffff0U + i;
		}
		break;
	case MRC_OP_PROBE:
		p->flags = MRC_F_ACKREQ;
		break;
	case MRC_OP_UD_SEND:
	case MRC_OP_UD_SEND_IMM:
		p->psn = 0;
		p->ppsn = 0;
		p->flags = MRC_F_FIRST | MRC_F_LAST | MRC_F_SOLICIT;
		p->payload_len = HDR_PAYLOAD;
		p->ud.src_qpn = 0x123456;
		p->ud.qkey = 0x80010000U;
		p->ud.imm = 0xa1b2c3d4U;
		break;
	}
}

/* Build headers + payload + ICRC into buf; returns total length. */
static u32 hdr_make(struct mrc_pkt *p, u8 *buf, u32 size)
{
	int h = mrc_hdr_build(p, buf, size);
	u32 i;

	if (h < 0 || (u32)h + p->payload_len + MRC_ICRC_LEN > size)
		return 0;
	for (i = 0; i < p->payload_len; i++)
		buf[h + i] = (u8)(i * 7 + 1);
	return mrc_icrc_put(buf, h + p->payload_len);
}

static bool hdr_pkt_eq(const struct mrc_pkt *a, const struct mrc_pkt *b)
{
	return !memcmp(a, b, sizeof(*a));
}

MRC_TEST(hdr_roundtrip_every_opcode)
{
	struct mrc_pkt *in, *out;
	u8 buf[512];
	u32 i, len;

	MRC_ALLOC(in);
	MRC_ALLOC(out);
	for (i = 0; i < ARRAY_SIZE(hdr_ops); i++) {
		hdr_fill(in, hdr_ops[i]);
		len = hdr_make(in, buf, sizeof(buf));
		MRC_ASSERT_TRUE(len > 0);
		MRC_EXPECT_EQ(len, mrc_hdr_len(in) + in->payload_len +
			      MRC_ICRC_LEN);
		MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, out, 0), 0);
		in->hdr_len = mrc_hdr_len(in);
		MRC_EXPECT_TRUE(hdr_pkt_eq(in, out));
		if (in->payload_len)	/* payload position */
			MRC_EXPECT_EQ(buf[out->hdr_len], 1);
	}
}

MRC_TEST(hdr_wire_layout)
{
	struct mrc_pkt *p;
	u8 buf[512];

	MRC_ALLOC(p);
	hdr_fill(p, MRC_OP_WRITE);
	MRC_ASSERT_TRUE(hdr_make(p, buf, sizeof(buf)) > 0);
	/* spot-check big-endian placement against protocol.rst */
	MRC_EXPECT_EQ(buf[0], MRC_WIRE_VERSION);
	MRC_EXPECT_EQ(buf[1], MRC_OP_WRITE);
	MRC_EXPECT_EQ(buf[3], 5);
	MRC_EXPECT_EQ(buf[4], 0);
	MRC_EXPECT_EQ(buf[5], 0xab);
	MRC_EXPECT_EQ(buf[7], 0xef);
	MRC_EXPECT_EQ(buf[8], 0xff);
	MRC_EXPECT_EQ(buf[11], 0xfe);
	MRC_EXPECT_EQ(buf[20], 0);
	MRC_EXPECT_EQ(buf[21], HDR_PAYLOAD);
	MRC_EXPECT_EQ(buf[24], 0x11);		/* va msb */
	MRC_EXPECT_EQ(buf[31], 0x88);
	MRC_EXPECT_EQ(buf[35], 0x99);		/* rkey lsb */
}

MRC_TEST(hdr_truncation_rejected)
{
	struct mrc_pkt *in, *out;
	u8 buf[512];
	u32 i, len, cut;

	MRC_ALLOC(in);
	MRC_ALLOC(out);
	for (i = 0; i < ARRAY_SIZE(hdr_ops); i++) {
		hdr_fill(in, hdr_ops[i]);
		len = hdr_make(in, buf, sizeof(buf));
		MRC_ASSERT_TRUE(len > 0);
		for (cut = 0; cut < len; cut++) {
			/* with and without the ICRC check */
			MRC_EXPECT_NE(mrc_pkt_parse(buf, cut, out, 0), 0);
			MRC_EXPECT_NE(mrc_pkt_parse(buf, cut, out,
						    MRC_PARSE_NO_ICRC), 0);
		}
		/* header-only parse needs the whole header */
		for (cut = 0; cut < (u32)mrc_hdr_len(in); cut++)
			MRC_EXPECT_EQ(mrc_hdr_parse(buf, cut, len, out),
				      -MRC_E_TRUNC);
		MRC_EXPECT_EQ(mrc_hdr_parse(buf, mrc_hdr_len(in), len, out),
			      0);
		/* one extra byte is a length error */
		buf[len] = 0;
		MRC_EXPECT_NE(mrc_pkt_parse(buf, len + 1, out,
					    MRC_PARSE_NO_ICRC), 0);
	}
}

MRC_TEST(hdr_icrc_detects_corruption)
{
	struct mrc_pkt *in, *out;
	u8 buf[512];
	u32 len, i;

	MRC_ALLOC(in);
	MRC_ALLOC(out);
	hdr_fill(in, MRC_OP_SEND);
	len = hdr_make(in, buf, sizeof(buf));
	MRC_ASSERT_TRUE(len > 0);
	for (i = 0; i < len; i++) {
		buf[i] ^= 0x20;
		MRC_EXPECT_NE(mrc_pkt_parse(buf, len, out, 0), 0);
		buf[i] ^= 0x20;
	}
	MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, out, 0), 0);
	buf[len - 1] ^= 1;
	MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, out, 0), -MRC_E_ICRC);
	MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, out, MRC_PARSE_NO_ICRC), 0);
}

/* Re-seal after editing one header byte, expect @err. */
static int hdr_edit(u8 *buf, u32 len, u32 off, u8 val, struct mrc_pkt *out)
{
	buf[off] = val;
	mrc_icrc_put(buf, len - MRC_ICRC_LEN);
	return mrc_pkt_parse(buf, len, out, 0);
}

MRC_TEST(hdr_hostile_fields)
{
	struct mrc_pkt *in, *out;
	u8 buf[512], orig[512];
	u32 len, ack_paths;

	MRC_ALLOC(in);
	MRC_ALLOC(out);
	hdr_fill(in, MRC_OP_SEND);
	len = hdr_make(in, buf, sizeof(buf));
	memcpy(orig, buf, len);
	/* version 1 (no CUMACK) is not spoken any more */
	MRC_EXPECT_EQ(hdr_edit(buf, len, 0, 1, out), -MRC_E_VERSION);
	memcpy(buf, orig, len);
	MRC_EXPECT_EQ(hdr_edit(buf, len, 0, 2, out), -MRC_E_VERSION);
	memcpy(buf, orig, len);
	MRC_EXPECT_EQ(hdr_edit(buf, len, 0, 4, out), -MRC_E_VERSION);
	memcpy(buf, orig, len);
	MRC_EXPECT_EQ(hdr_edit(buf, len, 1, 0x7f, out), -MRC_E_OPCODE);
	memcpy(buf, orig, len);
	MRC_EXPECT_EQ(hdr_edit(buf, len, 2, 0x80, out), -MRC_E_FLAGS);
	memcpy(buf, orig, len);
	/* version 3: path_id's high nibble is the epoch, any is valid */
	MRC_EXPECT_EQ(hdr_edit(buf, len, 3, 0xf7, out), 0);
	MRC_EXPECT_EQ(out->path_id, 7);
	MRC_EXPECT_EQ(out->epoch, 15);
	memcpy(buf, orig, len);
	MRC_EXPECT_EQ(hdr_edit(buf, len, 4, 1, out), -MRC_E_QPN);
	memcpy(buf, orig, len);
	/* payload_len says 1 byte more than there is */
	MRC_EXPECT_EQ(hdr_edit(buf, len, 21, HDR_PAYLOAD + 1, out),
		      -MRC_E_LEN);
	memcpy(buf, orig, len);
	/* FIRST flag with a non-zero offset */
	MRC_EXPECT_EQ(hdr_edit(buf, len, 2, MRC_F_FIRST, out), -MRC_E_FLAGS);
	memcpy(buf, orig, len);
	/* segment beyond msg_len: msg_len = 0x000000ff */
	buf[MRC_BTH_LEN + 4 + 2] = 0;
	MRC_EXPECT_EQ(hdr_edit(buf, len, MRC_BTH_LEN + 4 + 3, 0xff, out),
		      -MRC_E_FIELD);
	memcpy(buf, orig, len);
	/* offset near 2^32: offset + len must not wrap */
	buf[MRC_BTH_LEN + 8] = 0xff;
	buf[MRC_BTH_LEN + 9] = 0xff;
	MRC_EXPECT_EQ(hdr_edit(buf, len, MRC_BTH_LEN + 10, 0xff, out),
		      -MRC_E_FIELD);

	/* ACK: npaths beyond the packet, beyond the limit, duplicates */
	hdr_fill(in, MRC_OP_ACK);
	len = hdr_make(in, buf, sizeof(buf));
	memcpy(orig, buf, len);
	ack_paths = MRC_BTH_LEN + MRC_ACKH_LEN;
	MRC_EXPECT_EQ(hdr_edit(buf, len, MRC_BTH_LEN + 20, 4, out),
		      -MRC_E_TRUNC);
	memcpy(buf, orig, len);
	MRC_EXPECT_EQ(hdr_edit(buf, len, MRC_BTH_LEN + 20, 200, out),
		      -MRC_E_PATH);
	memcpy(buf, orig, len);
	MRC_EXPECT_EQ(hdr_edit(buf, len, ack_paths + 8, 0, out), -MRC_E_PATH);
	memcpy(buf, orig, len);
	MRC_EXPECT_EQ(hdr_edit(buf, len, ack_paths + 1, 1, out), -MRC_E_FLAGS);
	memcpy(buf, orig, len);
	MRC_EXPECT_EQ(hdr_edit(buf, len, MRC_BTH_LEN + 18, MRC_SYN_MAX + 1,
			       out), -MRC_E_FIELD);
	memcpy(buf, orig, len);
	/* SACK bit 0 (cum_psn itself) can never be set */
	MRC_EXPECT_EQ(hdr_edit(buf, len, MRC_BTH_LEN + 24, 1, out),
		      -MRC_E_FIELD);
	memcpy(buf, orig, len);
	MRC_EXPECT_EQ(hdr_edit(buf, len, 2, MRC_F_ACKREQ, out), -MRC_E_FLAGS);
}

MRC_TEST(hdr_build_rejects_invalid)
{
	struct mrc_pkt *p;
	u8 buf[512];

	MRC_ALLOC(p);
	hdr_fill(p, MRC_OP_READ_REQ);
	p->payload_len = 1;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_LEN);
	hdr_fill(p, MRC_OP_SEND);
	p->payload_len = MRC_MAX_PAYLOAD + 1;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_LEN);
	hdr_fill(p, MRC_OP_SEND);
	p->payload_len = 0;	/* empty middle segment */
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_LEN);
	hdr_fill(p, MRC_OP_SEND);
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, MRC_BTH_LEN + MRC_SENDH_LEN - 1),
		      -MRC_E_NOSPC);
	hdr_fill(p, MRC_OP_ACK);
	p->ack.npaths = MRC_MAX_PATHS + 1;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_PATH);
	/* zero-length message: one FIRST|LAST packet */
	hdr_fill(p, MRC_OP_SEND);
	p->payload_len = 0;
	p->send.msg_len = 0;
	p->send.offset = 0;
	p->flags = MRC_F_FIRST | MRC_F_LAST;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)),
		      MRC_BTH_LEN + MRC_SENDH_LEN);
	MRC_EXPECT_EQ(mrc_ext_len(0xee), -MRC_E_OPCODE);
	MRC_EXPECT_TRUE(mrc_op_sequenced(MRC_OP_READ_RESP));
	MRC_EXPECT_FALSE(mrc_op_sequenced(MRC_OP_ACK));
	MRC_EXPECT_FALSE(mrc_op_sequenced(MRC_OP_PROBE));
	MRC_EXPECT_FALSE(mrc_op_sequenced(0xee));
	MRC_EXPECT_TRUE(strcmp(mrc_err_str(-MRC_E_ICRC), "icrc mismatch") == 0);
}

/* UD datagrams: one unsequenced packet, 24-bit source QPN. */
MRC_TEST(hdr_ud_rules)
{
	struct mrc_pkt *p, *out;
	u8 buf[512];
	u32 len;

	MRC_ALLOC(p);
	MRC_ALLOC(out);
	MRC_EXPECT_FALSE(mrc_op_sequenced(MRC_OP_UD_SEND));
	MRC_EXPECT_FALSE(mrc_op_sequenced(MRC_OP_UD_SEND_IMM));
	MRC_EXPECT_TRUE(mrc_op_has_payload(MRC_OP_UD_SEND));
	MRC_EXPECT_EQ(mrc_ext_len(MRC_OP_UD_SEND), MRC_UDH_LEN);
	hdr_fill(p, MRC_OP_UD_SEND);
	p->psn = 1;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_FIELD);
	hdr_fill(p, MRC_OP_UD_SEND);
	p->ppsn = 1;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_FIELD);
	hdr_fill(p, MRC_OP_UD_SEND);
	p->flags = MRC_F_FIRST;		/* a datagram is one packet */
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_FLAGS);
	hdr_fill(p, MRC_OP_UD_SEND);
	p->flags |= MRC_F_ACKREQ;	/* never acknowledged */
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_FLAGS);
	hdr_fill(p, MRC_OP_UD_SEND_IMM);
	p->ud.src_qpn = 0x1000000;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_QPN);
	/* on the wire: src_qpn, qkey, imm big-endian after the BTH */
	hdr_fill(p, MRC_OP_UD_SEND_IMM);
	len = hdr_make(p, buf, sizeof(buf));
	MRC_ASSERT_TRUE(len > 0);
	MRC_EXPECT_EQ(len, MRC_BTH_LEN + MRC_UDH_LEN + HDR_PAYLOAD +
		      MRC_ICRC_LEN);
	MRC_EXPECT_EQ(buf[MRC_BTH_LEN + 1], 0x12);
	MRC_EXPECT_EQ(buf[MRC_BTH_LEN + 4], 0x80);
	MRC_EXPECT_EQ(buf[MRC_BTH_LEN + 8], 0xa1);
	MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, out, 0), 0);
	MRC_EXPECT_EQ(out->ud.src_qpn, 0x123456);
	MRC_EXPECT_EQ(out->ud.qkey, 0x80010000U);
	/* a received datagram with a PSN is rejected */
	buf[11] = 1;
	mrc_icrc_put(buf, len - MRC_ICRC_LEN);
	MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, out, 0), -MRC_E_FIELD);
}

/* UC (protocol.rst "Unreliable connected"): BTH flag 0x20 on SEND*, WRITE* */
MRC_TEST(hdr_uc_rules)
{
	static const u8 ok[] = { MRC_OP_SEND, MRC_OP_SEND_IMM, MRC_OP_WRITE,
				 MRC_OP_WRITE_IMM };
	static const u8 bad[] = { MRC_OP_SEND_INV, MRC_OP_READ_REQ,
				  MRC_OP_READ_RESP, MRC_OP_CMP_SWAP,
				  MRC_OP_FETCH_ADD, MRC_OP_ATOMIC_RESP,
				  MRC_OP_UD_SEND, MRC_OP_PROBE };
	struct mrc_pkt *p, *out;
	u8 buf[512];
	u32 len, i;

	MRC_ALLOC(p);
	MRC_ALLOC(out);
	MRC_EXPECT_EQ(MRC_F_UC, 0x20);
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		hdr_fill(p, ok[i]);
		p->flags = (p->flags & ~MRC_F_ACKREQ) | MRC_F_UC;
		len = hdr_make(p, buf, sizeof(buf));
		MRC_ASSERT_TRUE(len > 0);
		MRC_EXPECT_EQ(buf[2] & MRC_F_UC, MRC_F_UC);
		MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, out, 0), 0);
		MRC_EXPECT_EQ(out->flags, p->flags);
		/* never acknowledged, never retransmitted */
		p->flags |= MRC_F_ACKREQ;
		MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)),
			      -MRC_E_FLAGS);
		p->flags = (p->flags & ~MRC_F_ACKREQ) | MRC_F_RETX;
		MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)),
			      -MRC_E_FLAGS);
		/* on receipt too */
		p->flags &= ~MRC_F_RETX;
		len = hdr_make(p, buf, sizeof(buf));
		buf[2] |= MRC_F_ACKREQ;
		mrc_icrc_put(buf, len - MRC_ICRC_LEN);
		MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, out, 0), -MRC_E_FLAGS);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		hdr_fill(p, bad[i]);
		p->flags |= MRC_F_UC;
		MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)),
			      -MRC_E_FLAGS);
	}
	/* the next bit is still undefined */
	hdr_fill(p, MRC_OP_SEND);
	p->flags |= 0x80;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_FLAGS);
}

/*
 * Version 2: CUMACK (0x40) and cum_lo in BTH bytes 22-23, on every
 * sequenced opcode; malformed (dropped) with UC, UD, ACK and PROBE.
 * protocol.rst "Cumulative ACK on reverse data".
 */
/*
 * cumack_refused: P with the CUMACK flag is refused by the builder, and the
 * same packet built without it and flagged on the wire is refused by the
 * parser. Returns 0 when both hold, else the step that did not (1-3).
 */
static int cumack_refused(struct mrc_pkt *p, struct mrc_pkt *out, u8 *buf,
			  u32 size)
{
	u32 len;

	p->flags |= MRC_F_CUMACK;
	if (mrc_hdr_build(p, buf, size) != -MRC_E_FLAGS)
		return 1;
	p->flags &= ~MRC_F_CUMACK;
	len = hdr_make(p, buf, size);
	if (!len)
		return 2;
	buf[2] |= MRC_F_CUMACK;
	mrc_icrc_put(buf, len - MRC_ICRC_LEN);
	if (mrc_pkt_parse(buf, len, out, 0) != -MRC_E_FLAGS)
		return 3;
	return 0;
}

MRC_TEST(hdr_cumack_rules)
{
	static const u8 seq[] = {
		MRC_OP_SEND, MRC_OP_SEND_IMM, MRC_OP_SEND_INV, MRC_OP_WRITE,
		MRC_OP_WRITE_IMM, MRC_OP_READ_REQ, MRC_OP_READ_RESP,
		MRC_OP_CMP_SWAP, MRC_OP_FETCH_ADD, MRC_OP_ATOMIC_RESP,
	};
	static const u8 bad[] = {
		MRC_OP_ACK, MRC_OP_PROBE, MRC_OP_UD_SEND, MRC_OP_UD_SEND_IMM,
	};
	struct mrc_pkt *p, *out;
	u8 buf[512];
	u32 i, len;

	MRC_ALLOC(p);
	MRC_ALLOC(out);
	MRC_EXPECT_EQ(MRC_WIRE_VERSION, 3);
	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		hdr_fill(p, seq[i]);
		p->flags |= MRC_F_CUMACK;
		p->cum_lo = 0xbeef;
		len = hdr_make(p, buf, sizeof(buf));
		MRC_ASSERT_TRUE(len > 0);
		MRC_EXPECT_EQ(buf[0], 3);
		MRC_EXPECT_EQ(buf[2] & MRC_F_CUMACK, MRC_F_CUMACK);
		MRC_EXPECT_EQ(buf[22], 0xbe);
		MRC_EXPECT_EQ(buf[23], 0xef);
		MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, out, 0), 0);
		MRC_EXPECT_EQ(out->flags, p->flags);
		MRC_EXPECT_EQ(out->cum_lo, 0xbeef);
		/* without the flag the bytes are reserved: ignored */
		buf[2] &= ~MRC_F_CUMACK;
		mrc_icrc_put(buf, len - MRC_ICRC_LEN);
		MRC_EXPECT_EQ(mrc_pkt_parse(buf, len, out, 0), 0);
		MRC_EXPECT_EQ(out->cum_lo, 0);
		/* not with UC */
		if (seq[i] == MRC_OP_SEND || seq[i] == MRC_OP_WRITE) {
			p->flags |= MRC_F_UC;
			MRC_EXPECT_EQ(cumack_refused(p, out, buf, sizeof(buf)),
				      0);
		}
	}
	/* not on unsequenced packets, sent or received */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		hdr_fill(p, bad[i]);
		MRC_EXPECT_EQ(cumack_refused(p, out, buf, sizeof(buf)), 0);
	}
}

/*
 * Version 3: BTH byte 3 is path | epoch << 4 -- a request's request
 * epoch, an ACK's receive epoch (ack.epoch) -- and an epoch beyond 15
 * cannot be built.
 */
MRC_TEST(hdr_epoch_nibble)
{
	struct mrc_pkt *p, *out;
	u8 buf[512];
	u32 len;

	MRC_ALLOC(p);
	MRC_ALLOC(out);
	hdr_fill(p, MRC_OP_SEND);
	p->path_id = 3;
	p->epoch = 9;
	len = hdr_make(p, buf, sizeof(buf));
	MRC_ASSERT_TRUE(len > 0);
	MRC_EXPECT_EQ(buf[3], 0x93);
	MRC_ASSERT_TRUE(mrc_pkt_parse(buf, len, out, 0) == 0);
	MRC_EXPECT_EQ(out->path_id, 3);
	MRC_EXPECT_EQ(out->epoch, 9);
	/* an ACK: ack.epoch goes to the nibble, and comes back in both */
	hdr_fill(p, MRC_OP_ACK);
	p->path_id = 2;
	p->epoch = 0;
	p->ack.epoch = 5;
	p->ack.nak_psn = 695;
	p->ack.rnr_timer = 14;
	len = hdr_make(p, buf, sizeof(buf));
	MRC_ASSERT_TRUE(len > 0);
	MRC_EXPECT_EQ(buf[3], 0x52);
	MRC_ASSERT_TRUE(mrc_pkt_parse(buf, len, out, 0) == 0);
	MRC_EXPECT_EQ(out->path_id, 2);
	MRC_EXPECT_EQ(out->ack.epoch, 5);
	MRC_EXPECT_EQ(out->epoch, 5);
	MRC_EXPECT_EQ(out->ack.nak_psn, 695);
	MRC_EXPECT_EQ(out->ack.rnr_timer, 14);
	/* 16 epochs only */
	hdr_fill(p, MRC_OP_WRITE);
	p->epoch = 16;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_FIELD);
	hdr_fill(p, MRC_OP_ACK);
	p->ack.epoch = 16;
	MRC_EXPECT_EQ(mrc_hdr_build(p, buf, sizeof(buf)), -MRC_E_FIELD);
}

MRC_SUITE(hdr,
	  MRC_CASE(hdr_uc_rules),
	  MRC_CASE(hdr_cumack_rules),
	  MRC_CASE(hdr_epoch_nibble),
	  MRC_CASE(hdr_ud_rules),
	  MRC_CASE(hdr_roundtrip_every_opcode),
	  MRC_CASE(hdr_wire_layout),
	  MRC_CASE(hdr_truncation_rejected),
	  MRC_CASE(hdr_icrc_detects_corruption),
	  MRC_CASE(hdr_hostile_fields),
	  MRC_CASE(hdr_build_rejects_invalid));
