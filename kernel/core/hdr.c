// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce header build/parse. See hdr.h and Documentation/protocol.rst.
 */
#include "hdr.h"
#include "crc32c.h"

#define OFF(type, field)	offsetof(struct type, field)
#define G8(b, t, f)	(((const u8 *)(b))[OFF(t, f)])
#define G16(b, t, f)	get_unaligned_be16((const u8 *)(b) + OFF(t, f))
#define G32(b, t, f)	get_unaligned_be32((const u8 *)(b) + OFF(t, f))
#define G64(b, t, f)	get_unaligned_be64((const u8 *)(b) + OFF(t, f))
#define P8(b, t, f, v)	(((u8 *)(b))[OFF(t, f)] = (v))
#define P16(b, t, f, v)	put_unaligned_be16((v), (u8 *)(b) + OFF(t, f))
#define P32(b, t, f, v)	put_unaligned_be32((v), (u8 *)(b) + OFF(t, f))
#define P64(b, t, f, v)	put_unaligned_be64((v), (u8 *)(b) + OFF(t, f))

int mrc_ext_len(u8 opcode)
{
	switch (opcode) {
	case MRC_OP_SEND:
	case MRC_OP_SEND_IMM:
	case MRC_OP_SEND_INV:
		return MRC_SENDH_LEN;
	case MRC_OP_WRITE:
	case MRC_OP_WRITE_IMM:
		return MRC_WRITEH_LEN;
	case MRC_OP_READ_REQ:
		return MRC_READH_LEN;
	case MRC_OP_READ_RESP:
		return MRC_RRESPH_LEN;
	case MRC_OP_CMP_SWAP:
	case MRC_OP_FETCH_ADD:
		return MRC_ATOMICH_LEN;
	case MRC_OP_ATOMIC_RESP:
		return MRC_ARESPH_LEN;
	case MRC_OP_UD_SEND:
	case MRC_OP_UD_SEND_IMM:
		return MRC_UDH_LEN;
	case MRC_OP_ACK:
		return MRC_ACKH_LEN;
	case MRC_OP_PROBE:
		return 0;
	}
	return -MRC_E_OPCODE;
}

bool mrc_op_sequenced(u8 opcode)
{
	return mrc_ext_len(opcode) >= 0 && opcode != MRC_OP_ACK &&
	       opcode != MRC_OP_PROBE && opcode != MRC_OP_UD_SEND &&
	       opcode != MRC_OP_UD_SEND_IMM;
}

bool mrc_op_has_payload(u8 opcode)
{
	switch (opcode) {
	case MRC_OP_SEND:
	case MRC_OP_SEND_IMM:
	case MRC_OP_SEND_INV:
	case MRC_OP_WRITE:
	case MRC_OP_WRITE_IMM:
	case MRC_OP_READ_RESP:
	case MRC_OP_UD_SEND:
	case MRC_OP_UD_SEND_IMM:
		return true;
	}
	return false;
}

int mrc_hdr_len(const struct mrc_pkt *p)
{
	int ext = mrc_ext_len(p->opcode);

	if (ext < 0)
		return ext;
	if (p->opcode == MRC_OP_ACK) {
		if (p->ack.npaths > MRC_MAX_PATHS)
			return -MRC_E_PATH;
		ext += p->ack.npaths * MRC_ACK_PATH_LEN;
	}
	return MRC_BTH_LEN + ext;
}

/* Payload position rules shared by all multi-packet messages. */
static int mrc_check_segment(u8 flags, u32 msg_len, u32 offset, u16 plen)
{
	u64 end = (u64)offset + plen;

	if (msg_len > MRC_MAX_MSG || end > msg_len)
		return -MRC_E_FIELD;
	/* FIRST <=> offset 0 (non-last packets carry payload). */
	if (!!(flags & MRC_F_FIRST) != (offset == 0))
		return -MRC_E_FLAGS;
	if (!!(flags & MRC_F_LAST) != (end == msg_len))
		return -MRC_E_FLAGS;
	if (!(flags & MRC_F_LAST) && plen == 0)
		return -MRC_E_LEN;
	return 0;
}

/* Every cross-field rule of a (host-endian) packet; used both ways. */
static int mrc_pkt_check(const struct mrc_pkt *p)
{
	const u8 single = MRC_F_FIRST | MRC_F_LAST;
	u32 seen = 0, d;
	int i;

	if (mrc_ext_len(p->opcode) < 0)
		return -MRC_E_OPCODE;
	if (p->flags & ~MRC_F_ALL)
		return -MRC_E_FLAGS;
	if (p->path_id >= MRC_MAX_PATHS)
		return -MRC_E_PATH;
	if (p->epoch >= MRC_EPOCHS ||
	    (p->opcode == MRC_OP_ACK && p->ack.epoch >= MRC_EPOCHS))
		return -MRC_E_FIELD;
	if (p->dst_qpn > 0xffffff)
		return -MRC_E_QPN;
	if (p->payload_len > MRC_MAX_PAYLOAD)
		return -MRC_E_LEN;
	/* CUMACK: sequenced RC packets only (not UC, UD, ACK or PROBE) */
	if ((p->flags & MRC_F_CUMACK) &&
	    (!mrc_op_sequenced(p->opcode) || (p->flags & MRC_F_UC)))
		return -MRC_E_FLAGS;
	if (!mrc_op_has_payload(p->opcode) && p->payload_len)
		return -MRC_E_LEN;
	/* UC: the four UC operations only, never acknowledged or resent */
	if ((p->flags & MRC_F_UC) &&
	    ((p->opcode != MRC_OP_SEND && p->opcode != MRC_OP_SEND_IMM &&
	      p->opcode != MRC_OP_WRITE && p->opcode != MRC_OP_WRITE_IMM) ||
	     (p->flags & (MRC_F_ACKREQ | MRC_F_RETX))))
		return -MRC_E_FLAGS;

	switch (p->opcode) {
	case MRC_OP_SEND:
	case MRC_OP_SEND_IMM:
	case MRC_OP_SEND_INV:
		return mrc_check_segment(p->flags, p->send.msg_len,
					 p->send.offset, p->payload_len);
	case MRC_OP_WRITE:
	case MRC_OP_WRITE_IMM:
		return mrc_check_segment(p->flags, p->write.msg_len,
					 p->write.offset, p->payload_len);
	case MRC_OP_READ_RESP:
		return mrc_check_segment(p->flags, p->rresp.msg_len,
					 p->rresp.offset, p->payload_len);
	case MRC_OP_READ_REQ:
		if ((p->flags & single) != single)
			return -MRC_E_FLAGS;
		if (p->read.len > MRC_MAX_MSG)
			return -MRC_E_FIELD;
		return 0;
	case MRC_OP_CMP_SWAP:
	case MRC_OP_FETCH_ADD:
	case MRC_OP_ATOMIC_RESP:
		if ((p->flags & single) != single)
			return -MRC_E_FLAGS;
		return 0;
	case MRC_OP_PROBE:
		if (p->flags & ~MRC_F_ACKREQ)
			return -MRC_E_FLAGS;
		return 0;
	case MRC_OP_UD_SEND:
	case MRC_OP_UD_SEND_IMM:
		if ((p->flags & ~MRC_F_SOLICIT) != single)
			return -MRC_E_FLAGS;
		if (p->psn || p->ppsn)
			return -MRC_E_FIELD;
		if (p->ud.src_qpn > 0xffffff)
			return -MRC_E_QPN;
		return 0;
	case MRC_OP_ACK:
		if (p->flags)
			return -MRC_E_FLAGS;
		if (p->ack.syndrome > MRC_SYN_MAX)
			return -MRC_E_FIELD;
		if (p->ack.ts_path >= MRC_MAX_PATHS)
			return -MRC_E_PATH;
		if (p->ack.npaths > MRC_MAX_PATHS)
			return -MRC_E_PATH;
		if (p->ack.sack[0] & 1)	/* cum_psn itself is never received */
			return -MRC_E_FIELD;
		/* DSACK: a non-zero signed 16-bit offset from cum_psn */
		d = p->ack.dsack_psn - p->ack.cum_psn;
		if (p->ack.dsack && (!d || (s32)d != (s16)d))
			return -MRC_E_FIELD;
		for (i = 0; i < p->ack.npaths; i++) {
			u8 id = p->ack.paths[i].path_id;

			if (id >= MRC_MAX_PATHS || (seen & (1U << id)))
				return -MRC_E_PATH;
			seen |= 1U << id;
		}
		return 0;
	}
	return -MRC_E_OPCODE;
}

int mrc_hdr_build(const struct mrc_pkt *p, void *buf, u32 buflen)
{
	u8 *b = buf, *e;
	int len, err, i;

	err = mrc_pkt_check(p);
	if (err)
		return err;
	len = mrc_hdr_len(p);
	if (len < 0)
		return len;
	if ((u32)len > buflen)
		return -MRC_E_NOSPC;

	memset(b, 0, len);
	P8(b, mrc_bth, version, MRC_WIRE_VERSION);
	P8(b, mrc_bth, opcode, p->opcode);
	P8(b, mrc_bth, flags, p->flags);
	P8(b, mrc_bth, path_id, p->path_id |
	   (p->opcode == MRC_OP_ACK ? p->ack.epoch : p->epoch) <<
	   MRC_EPOCH_SHIFT);
	P32(b, mrc_bth, dst_qpn, p->dst_qpn);
	P32(b, mrc_bth, psn, p->psn);
	P32(b, mrc_bth, ppsn, p->ppsn);
	P32(b, mrc_bth, tsval, p->tsval);
	P16(b, mrc_bth, payload_len, p->payload_len);
	if (p->flags & MRC_F_CUMACK)
		P16(b, mrc_bth, cum_lo, p->cum_lo);
	e = b + MRC_BTH_LEN;

	switch (p->opcode) {
	case MRC_OP_SEND:
	case MRC_OP_SEND_IMM:
	case MRC_OP_SEND_INV:
		P32(e, mrc_sendh, rmsn, p->send.rmsn);
		P32(e, mrc_sendh, msg_len, p->send.msg_len);
		P32(e, mrc_sendh, offset, p->send.offset);
		P32(e, mrc_sendh, imm, p->send.imm);
		break;
	case MRC_OP_WRITE:
	case MRC_OP_WRITE_IMM:
		P64(e, mrc_writeh, va, p->write.va);
		P32(e, mrc_writeh, rkey, p->write.rkey);
		P32(e, mrc_writeh, msg_len, p->write.msg_len);
		P32(e, mrc_writeh, offset, p->write.offset);
		P32(e, mrc_writeh, rmsn, p->write.rmsn);
		P32(e, mrc_writeh, imm, p->write.imm);
		break;
	case MRC_OP_READ_REQ:
		P64(e, mrc_readh, va, p->read.va);
		P32(e, mrc_readh, rkey, p->read.rkey);
		P32(e, mrc_readh, len, p->read.len);
		break;
	case MRC_OP_READ_RESP:
		P32(e, mrc_rresph, req_psn, p->rresp.req_psn);
		P32(e, mrc_rresph, offset, p->rresp.offset);
		P32(e, mrc_rresph, msg_len, p->rresp.msg_len);
		break;
	case MRC_OP_CMP_SWAP:
	case MRC_OP_FETCH_ADD:
		P64(e, mrc_atomich, va, p->atomic.va);
		P64(e, mrc_atomich, swap_add, p->atomic.swap_add);
		P64(e, mrc_atomich, compare, p->atomic.compare);
		P32(e, mrc_atomich, rkey, p->atomic.rkey);
		break;
	case MRC_OP_ATOMIC_RESP:
		P64(e, mrc_aresph, orig, p->aresp.orig);
		P32(e, mrc_aresph, req_psn, p->aresp.req_psn);
		break;
	case MRC_OP_UD_SEND:
	case MRC_OP_UD_SEND_IMM:
		P32(e, mrc_udh, src_qpn, p->ud.src_qpn);
		P32(e, mrc_udh, qkey, p->ud.qkey);
		P32(e, mrc_udh, imm, p->ud.imm);
		break;
	case MRC_OP_ACK:
		P32(e, mrc_ackh, cum_psn, p->ack.cum_psn);
		P32(e, mrc_ackh, nak_psn, p->ack.nak_psn);
		P32(e, mrc_ackh, tsecr, p->ack.tsecr);
		P16(e, mrc_ackh, ack_delay, p->ack.ack_delay);
		P16(e, mrc_ackh, fair_share, p->ack.fair_share);
		P16(e, mrc_ackh, rwnd, p->ack.rwnd);
		P8(e, mrc_ackh, syndrome, p->ack.syndrome);
		P8(e, mrc_ackh, ts_path, p->ack.ts_path);
		P8(e, mrc_ackh, npaths, p->ack.npaths);
		P8(e, mrc_ackh, rnr_timer, p->ack.rnr_timer);
		if (p->ack.dsack)
			P16(e, mrc_ackh, dsack_off,
			    (u16)(p->ack.dsack_psn - p->ack.cum_psn));
		memcpy(e + OFF(mrc_ackh, sack), p->ack.sack, MRC_SACK_BYTES);
		e += MRC_ACKH_LEN;
		for (i = 0; i < p->ack.npaths; i++, e += MRC_ACK_PATH_LEN) {
			const struct mrc_ack_path_info *r = &p->ack.paths[i];

			P8(e, mrc_ack_path, path_id, r->path_id);
			P16(e, mrc_ack_path, ce_count, r->ce_count);
			P32(e, mrc_ack_path, max_ppsn, r->max_ppsn);
		}
		break;
	}
	return len;
}

u32 mrc_icrc_put(void *pkt, u32 len)
{
	put_unaligned_be32(mrc_crc32c(pkt, len), (u8 *)pkt + len);
	return len + MRC_ICRC_LEN;
}

int mrc_hdr_parse(const void *buf, u32 avail, u32 pkt_len, struct mrc_pkt *p)
{
	const u8 *b = buf, *e;
	u16 dsack_off;
	int ext, i;

	memset(p, 0, sizeof(*p));
	if (avail > pkt_len)
		return -MRC_E_LEN;
	if (avail < MRC_BTH_LEN || pkt_len < MRC_BTH_LEN + MRC_ICRC_LEN)
		return -MRC_E_TRUNC;
	if (G8(b, mrc_bth, version) != MRC_WIRE_VERSION)
		return -MRC_E_VERSION;
	p->opcode = G8(b, mrc_bth, opcode);
	ext = mrc_ext_len(p->opcode);
	if (ext < 0)
		return ext;
	p->flags = G8(b, mrc_bth, flags);
	p->path_id = G8(b, mrc_bth, path_id) & MRC_PATH_MASK;
	p->epoch = G8(b, mrc_bth, path_id) >> MRC_EPOCH_SHIFT;
	p->dst_qpn = G32(b, mrc_bth, dst_qpn);
	p->psn = G32(b, mrc_bth, psn);
	p->ppsn = G32(b, mrc_bth, ppsn);
	p->tsval = G32(b, mrc_bth, tsval);
	p->payload_len = G16(b, mrc_bth, payload_len);
	if (p->flags & MRC_F_CUMACK)
		p->cum_lo = G16(b, mrc_bth, cum_lo);

	if ((u32)MRC_BTH_LEN + ext > avail)
		return -MRC_E_TRUNC;
	e = b + MRC_BTH_LEN;
	p->hdr_len = MRC_BTH_LEN + ext;

	switch (p->opcode) {
	case MRC_OP_SEND:
	case MRC_OP_SEND_IMM:
	case MRC_OP_SEND_INV:
		p->send.rmsn = G32(e, mrc_sendh, rmsn);
		p->send.msg_len = G32(e, mrc_sendh, msg_len);
		p->send.offset = G32(e, mrc_sendh, offset);
		p->send.imm = G32(e, mrc_sendh, imm);
		break;
	case MRC_OP_WRITE:
	case MRC_OP_WRITE_IMM:
		p->write.va = G64(e, mrc_writeh, va);
		p->write.rkey = G32(e, mrc_writeh, rkey);
		p->write.msg_len = G32(e, mrc_writeh, msg_len);
		p->write.offset = G32(e, mrc_writeh, offset);
		p->write.rmsn = G32(e, mrc_writeh, rmsn);
		p->write.imm = G32(e, mrc_writeh, imm);
		break;
	case MRC_OP_READ_REQ:
		p->read.va = G64(e, mrc_readh, va);
		p->read.rkey = G32(e, mrc_readh, rkey);
		p->read.len = G32(e, mrc_readh, len);
		break;
	case MRC_OP_READ_RESP:
		p->rresp.req_psn = G32(e, mrc_rresph, req_psn);
		p->rresp.offset = G32(e, mrc_rresph, offset);
		p->rresp.msg_len = G32(e, mrc_rresph, msg_len);
		break;
	case MRC_OP_CMP_SWAP:
	case MRC_OP_FETCH_ADD:
		p->atomic.va = G64(e, mrc_atomich, va);
		p->atomic.swap_add = G64(e, mrc_atomich, swap_add);
		p->atomic.compare = G64(e, mrc_atomich, compare);
		p->atomic.rkey = G32(e, mrc_atomich, rkey);
		break;
	case MRC_OP_ATOMIC_RESP:
		p->aresp.orig = G64(e, mrc_aresph, orig);
		p->aresp.req_psn = G32(e, mrc_aresph, req_psn);
		break;
	case MRC_OP_UD_SEND:
	case MRC_OP_UD_SEND_IMM:
		p->ud.src_qpn = G32(e, mrc_udh, src_qpn);
		p->ud.qkey = G32(e, mrc_udh, qkey);
		p->ud.imm = G32(e, mrc_udh, imm);
		break;
	case MRC_OP_ACK:
		p->ack.cum_psn = G32(e, mrc_ackh, cum_psn);
		p->ack.nak_psn = G32(e, mrc_ackh, nak_psn);
		p->ack.tsecr = G32(e, mrc_ackh, tsecr);
		p->ack.ack_delay = G16(e, mrc_ackh, ack_delay);
		p->ack.fair_share = G16(e, mrc_ackh, fair_share);
		p->ack.rwnd = G16(e, mrc_ackh, rwnd);
		p->ack.syndrome = G8(e, mrc_ackh, syndrome);
		p->ack.ts_path = G8(e, mrc_ackh, ts_path);
		p->ack.npaths = G8(e, mrc_ackh, npaths);
		p->ack.rnr_timer = G8(e, mrc_ackh, rnr_timer);
		p->ack.epoch = p->epoch;
		dsack_off = G16(e, mrc_ackh, dsack_off);
		if (dsack_off) {
			p->ack.dsack = 1;
			p->ack.dsack_psn = p->ack.cum_psn + (s16)dsack_off;
		}
		memcpy(p->ack.sack, e + OFF(mrc_ackh, sack), MRC_SACK_BYTES);
		if (p->ack.npaths > MRC_MAX_PATHS)
			return -MRC_E_PATH;
		if (p->hdr_len + (u32)p->ack.npaths * MRC_ACK_PATH_LEN > avail)
			return -MRC_E_TRUNC;
		e += MRC_ACKH_LEN;
		for (i = 0; i < p->ack.npaths; i++, e += MRC_ACK_PATH_LEN) {
			struct mrc_ack_path_info *r = &p->ack.paths[i];

			r->path_id = G8(e, mrc_ack_path, path_id);
			if (G8(e, mrc_ack_path, flags))
				return -MRC_E_FLAGS;
			r->ce_count = G16(e, mrc_ack_path, ce_count);
			r->max_ppsn = G32(e, mrc_ack_path, max_ppsn);
		}
		p->hdr_len += p->ack.npaths * MRC_ACK_PATH_LEN;
		break;
	}

	/* The packet is exactly headers + payload + ICRC. */
	if ((u64)p->hdr_len + p->payload_len + MRC_ICRC_LEN != pkt_len)
		return (u64)p->hdr_len + MRC_ICRC_LEN > pkt_len ?
		       -MRC_E_TRUNC : -MRC_E_LEN;
	return mrc_pkt_check(p);
}

int mrc_pkt_parse(const void *buf, u32 len, struct mrc_pkt *p,
		  unsigned int flags)
{
	int err = mrc_hdr_parse(buf, len, len, p);

	if (err)
		return err;
	if (!(flags & MRC_PARSE_NO_ICRC) &&
	    mrc_crc32c(buf, len - MRC_ICRC_LEN) !=
	    get_unaligned_be32((const u8 *)buf + len - MRC_ICRC_LEN))
		return -MRC_E_ICRC;
	return 0;
}

const char *mrc_err_str(int err)
{
	static const char * const names[MRC_E_MAX] = {
		[MRC_E_OK] = "ok",
		[MRC_E_TRUNC] = "truncated",
		[MRC_E_VERSION] = "bad version",
		[MRC_E_OPCODE] = "bad opcode",
		[MRC_E_FLAGS] = "bad flags",
		[MRC_E_PATH] = "bad path id",
		[MRC_E_QPN] = "bad qpn",
		[MRC_E_LEN] = "bad length",
		[MRC_E_FIELD] = "bad field",
		[MRC_E_ICRC] = "icrc mismatch",
		[MRC_E_NOSPC] = "no space",
	};

	if (err < 0)
		err = -err;
	if (err >= MRC_E_MAX)
		return "unknown";
	return names[err];
}
