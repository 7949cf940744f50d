/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Build and parse metaroce packet headers (include/metaroce/wire.h).
 *
 * struct mrc_pkt is the host-endian view of every header of one packet.
 * Parsing checks every length and cross-field rule of protocol.rst and
 * never reads outside [buf, buf + len): a truncated, malformed or hostile
 * packet yields a negative enum mrc_err and must be dropped (and counted).
 * Building applies the same rules, so the core never emits a packet its
 * peer would reject.
 */
#ifndef MRC_HDR_H
#define MRC_HDR_H

#include "mrc_types.h"
#include <metaroce/wire.h>

/* Errors returned (negated) by the parse/build functions. */
enum mrc_err {
	MRC_E_OK = 0,
	MRC_E_TRUNC,	/* shorter than its headers say */
	MRC_E_VERSION,	/* unknown protocol version */
	MRC_E_OPCODE,	/* unknown opcode */
	MRC_E_FLAGS,	/* reserved or inconsistent flags */
	MRC_E_PATH,	/* path id out of range / duplicated */
	MRC_E_QPN,	/* QPN wider than 24 bits */
	MRC_E_LEN,	/* payload length inconsistent with packet length */
	MRC_E_FIELD,	/* field value out of range / inconsistent */
	MRC_E_ICRC,	/* integrity check failed */
	MRC_E_NOSPC,	/* build: output buffer too small */
	MRC_E_MAX
};

struct mrc_ack_path_info {
	u8 path_id;
	u16 ce_count;
	u32 max_ppsn;
};

/* Host-endian ACK contents; also the input of mrc_sb_apply_ack(). */
struct mrc_ack_info {
	u32 cum_psn;
	u32 nak_psn;
	u32 tsecr;
	u16 ack_delay;
	u16 fair_share;
	u16 rwnd;
	u8 syndrome;
	u8 ts_path;
	u8 npaths;
	u8 rnr_timer;
	u8 epoch;			/* BTH: the responder's receive epoch */
	u8 implicit;			/* a response's or CUMACK's: no epoch */
	u8 dsack;			/* dsack_psn is valid */
	u32 dsack_psn;			/* a PSN received twice (DSACK) */
	u8 sack[MRC_SACK_BYTES];	/* bit i: PSN cum_psn + i received */
	struct mrc_ack_path_info paths[MRC_MAX_PATHS];
};

struct mrc_pkt {
	/* BTH */
	u8 opcode;
	u8 flags;
	u8 path_id;
	u8 epoch;	/* requests: the request epoch (ACK: ack.epoch) */
	u16 payload_len;
	u32 dst_qpn;
	u32 psn;
	u32 ppsn;
	u32 tsval;
	u16 cum_lo;	/* MRC_F_CUMACK: low 16 bits of the sender's rx cum */
	/* set by parse (and returned by build): bytes before the payload */
	u32 hdr_len;
	union {
		struct {	/* SEND, SEND_IMM, SEND_INV */
			u32 rmsn, msg_len, offset, imm;
		} send;
		struct {	/* WRITE, WRITE_IMM */
			u64 va;
			u32 rkey, msg_len, offset, rmsn, imm;
		} write;
		struct {	/* READ_REQ */
			u64 va;
			u32 rkey, len;
		} read;
		struct {	/* READ_RESP */
			u32 req_psn, offset, msg_len;
		} rresp;
		struct {	/* CMP_SWAP, FETCH_ADD */
			u64 va, swap_add, compare;
			u32 rkey;
		} atomic;
		struct {	/* ATOMIC_RESP */
			u64 orig;
			u32 req_psn;
		} aresp;
		struct {	/* UD_SEND, UD_SEND_IMM */
			u32 src_qpn, qkey, imm;
		} ud;
		struct mrc_ack_info ack;	/* ACK */
	};
};

/*
 * How many epochs @to is after @from, modulo MRC_EPOCHS (protocol.rst "RNR
 * and the request epoch": 1 .. MRC_EPOCHS / 2 - 1 is newer).
 */
static inline u8 mrc_epoch_dist(u8 to, u8 from)
{
	return (u8)(to - from) & (MRC_EPOCHS - 1);
}

/* Length of the opcode's extension (ACK: without path records), or <0. */
int mrc_ext_len(u8 opcode);

/* Bytes of BTH + extension(s) for this packet, or -MRC_E_*. */
int mrc_hdr_len(const struct mrc_pkt *p);

/* True for opcodes that consume a PSN (all but ACK, PROBE, UD_SEND*). */
bool mrc_op_sequenced(u8 opcode);

/* True for opcodes that carry payload (SEND*, WRITE*, READ_RESP, UD*). */
bool mrc_op_has_payload(u8 opcode);

/* READ_REQ, CMP_SWAP, FETCH_ADD: requests answered by a response. */
static inline bool mrc_op_is_rd_atomic(u8 opcode)
{
	return opcode == MRC_OP_READ_REQ || opcode == MRC_OP_CMP_SWAP ||
	       opcode == MRC_OP_FETCH_ADD;
}

/* SEND*, WRITE_IMM: requests the responder's application sees. */
static inline bool mrc_op_notifies(u8 opcode)
{
	return opcode == MRC_OP_SEND || opcode == MRC_OP_SEND_IMM ||
	       opcode == MRC_OP_SEND_INV || opcode == MRC_OP_WRITE_IMM;
}

/* READ_RESP, ATOMIC_RESP: responses, in the responder's PSN space. */
static inline bool mrc_op_is_response(u8 opcode)
{
	return opcode == MRC_OP_READ_RESP || opcode == MRC_OP_ATOMIC_RESP;
}

/*
 * Write the headers of @p to @buf (at most @buflen bytes). Returns the
 * header length (payload goes right after it) or -MRC_E_*. Reserved
 * fields are written as zero.
 */
int mrc_hdr_build(const struct mrc_pkt *p, void *buf, u32 buflen);

/*
 * Append the ICRC: CRC32C over pkt[0, len) stored big-endian at pkt + len.
 * The buffer must have room for len + MRC_ICRC_LEN bytes. Returns the
 * total packet length.
 */
u32 mrc_icrc_put(void *pkt, u32 len);

/*
 * Parse the headers of a packet of @pkt_len bytes (ICRC included) of which
 * the first @avail bytes are in @buf (avail <= pkt_len; the whole header
 * must be there). Does not look at the payload or ICRC. Fills @p.
 * Returns 0 or -MRC_E_*.
 */
int mrc_hdr_parse(const void *buf, u32 avail, u32 pkt_len, struct mrc_pkt *p);

#define MRC_PARSE_NO_ICRC	0x1	/* ICRC already verified elsewhere */

/*
 * Parse a whole packet in one linear buffer and verify its ICRC (unless
 * MRC_PARSE_NO_ICRC). The payload is at buf + p->hdr_len.
 */
int mrc_pkt_parse(const void *buf, u32 len, struct mrc_pkt *p,
		  unsigned int flags);

/* Human-readable name of an error code (positive or negative). */
const char *mrc_err_str(int err);

#endif /* MRC_HDR_H */
