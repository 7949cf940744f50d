/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * metaroce wire format (protocol version 3).
 *
 * The normative description is Documentation/protocol.rst; this file and
 * that document must agree. Every multi-byte field is big-endian. Headers
 * start at arbitrary alignment inside a UDP payload, so the structs below
 * are packed and the core reads/writes them with byte-level accessors
 * (kernel/core/hdr.c); they are the layout reference, not something to
 * cast a receive buffer to.
 *
 * A packet (UDP payload, destination port MRC_UDP_PORT) is:
 *
 *   struct mrc_bth | opcode extension | payload | ICRC (4 bytes)
 *
 * The extension is fixed-size per opcode, except MRC_OP_ACK whose
 * extension (struct mrc_ackh) is followed by npaths struct mrc_ack_path.
 * The ICRC is CRC32C (Castagnoli) over every byte from the first byte of
 * the BTH to the last payload byte, stored big-endian.
 *
 * Usable from the kernel and from userspace (only <linux/types.h>).
 */
#ifndef METAROCE_WIRE_H
#define METAROCE_WIRE_H

#include <linux/types.h>

#if !defined(__KERNEL__) && !defined(__packed)
#define __packed __attribute__((packed))
#endif

/*
 * 2: BTH flag CUMACK and cum_lo (protocol.rst, "Cumulative ACK ...").
 * 3: the request epoch (BTH path_id's high nibble; the ACK's nak_psn and
 *    rnr_timer on every ACK): protocol.rst "RNR and the request epoch".
 */
#define MRC_WIRE_VERSION	3

/* Default UDP destination port (module parameter "udp_port"). */
#define MRC_UDP_PORT		19791
/* Source ports of paths are drawn from this range (RFC 6335 dynamic). */
#define MRC_SPORT_MIN		49152
#define MRC_SPORT_MAX		65535

/* Paths per QP (path_id is 0..MRC_MAX_PATHS-1). */
#define MRC_MAX_PATHS		16
/* Receive window / SACK bitmap, in packets (PSNs). Power of two. */
#define MRC_WND			256
#define MRC_SACK_BYTES		(MRC_WND / 8)
/* Largest payload of one packet and largest message. */
#define MRC_MAX_PAYLOAD		4096
#define MRC_MAX_MSG		0x80000000U	/* 2 GiB, as IB */
#define MRC_ICRC_LEN		4

/* ---------------------------------------------------------------------
 * Opcodes (struct mrc_bth.opcode)
 */
enum mrc_opcode {
	MRC_OP_SEND		= 0x01,	/* ext mrc_sendh, payload */
	MRC_OP_SEND_IMM		= 0x02,	/* ext mrc_sendh, payload */
	MRC_OP_SEND_INV		= 0x03,	/* ext mrc_sendh (imm = rkey) */
	MRC_OP_WRITE		= 0x04,	/* ext mrc_writeh, payload */
	MRC_OP_WRITE_IMM	= 0x05,	/* ext mrc_writeh, payload */
	MRC_OP_READ_REQ		= 0x06,	/* ext mrc_readh, no payload */
	MRC_OP_READ_RESP	= 0x07,	/* ext mrc_rresph, payload */
	MRC_OP_CMP_SWAP		= 0x08,	/* ext mrc_atomich, no payload */
	MRC_OP_FETCH_ADD	= 0x09,	/* ext mrc_atomich, no payload */
	MRC_OP_ATOMIC_RESP	= 0x0a,	/* ext mrc_aresph, no payload */
	MRC_OP_UD_SEND		= 0x0b,	/* ext mrc_udh, payload, unsequenced */
	MRC_OP_UD_SEND_IMM	= 0x0c,	/* ext mrc_udh, payload, unsequenced */
	MRC_OP_ACK		= 0x10,	/* ext mrc_ackh + paths, unsequenced */
	MRC_OP_PROBE		= 0x11,	/* no ext, unsequenced */
};

/* ---------------------------------------------------------------------
 * Base transport header: 24 bytes, first in every packet.
 */
struct mrc_bth {
	__u8	version;	/* MRC_WIRE_VERSION */
	__u8	opcode;		/* enum mrc_opcode */
	__u8	flags;		/* MRC_F_* */
	__u8	path_id;	/* bits 0-3: sender's path; 4-7: epoch */
	__be32	dst_qpn;	/* destination QP, 24 bits, top byte 0 */
	__be32	psn;		/* per-QP packet sequence number */
	__be32	ppsn;		/* per-path packet sequence number */
	__be32	tsval;		/* sender clock, microseconds mod 2^32 */
	__be16	payload_len;	/* bytes of payload after the extension */
	__be16	cum_lo;		/* CUMACK: low 16 bits of sender's rx cum */
} __packed;

/*
 * BTH path_id: the low nibble is the path (< MRC_MAX_PATHS), the high one
 * the epoch (version 3): on a request (SEND*, WRITE*, READ_REQ, CMP_SWAP,
 * FETCH_ADD) the requester's request epoch, on an ACK the responder's
 * receive epoch, on every other packet 0 (ignored).
 */
#define MRC_PATH_MASK		0x0f
#define MRC_EPOCH_SHIFT		4
#define MRC_EPOCHS		16	/* epochs are compared mod 16 */

/* BTH flags */
#define MRC_F_FIRST	0x01	/* first packet of a message */
#define MRC_F_LAST	0x02	/* last packet of a message */
#define MRC_F_ACKREQ	0x04	/* receiver should ACK immediately */
#define MRC_F_SOLICIT	0x08	/* solicited event (SEND*, WRITE_IMM) */
#define MRC_F_RETX	0x10	/* retransmission (informational) */
#define MRC_F_UC	0x20	/* UC message: SEND*, WRITE* only, no ACKREQ/RETX */
#define MRC_F_CUMACK	0x40	/* cum_lo is valid: sequenced RC packets only */
#define MRC_F_ALL	0x7f	/* other bits: packet is rejected */

/* ---------------------------------------------------------------------
 * Opcode extensions
 */

/* SEND, SEND_IMM, SEND_INV: 16 bytes. */
struct mrc_sendh {
	__be32	rmsn;		/* receive message seq: selects the RQ WQE */
	__be32	msg_len;	/* total message length in bytes */
	__be32	offset;		/* byte offset of this payload in message */
	__be32	imm;		/* imm data (SEND_IMM), rkey (SEND_INV), 0 */
} __packed;

/* WRITE, WRITE_IMM: 32 bytes. Payload goes to va + offset. */
struct mrc_writeh {
	__be64	va;		/* remote virtual address of message start */
	__be32	rkey;
	__be32	msg_len;	/* total message length in bytes */
	__be32	offset;		/* byte offset of this payload in message */
	__be32	rmsn;		/* WRITE_IMM: receive message seq; else 0 */
	__be32	imm;		/* WRITE_IMM: immediate data; else 0 */
	__be32	reserved;
} __packed;

/* READ_REQ: 16 bytes. */
struct mrc_readh {
	__be64	va;		/* remote (responder) address */
	__be32	rkey;
	__be32	len;		/* bytes to read, <= MRC_MAX_MSG */
} __packed;

/*
 * READ_RESP: 16 bytes. Sequenced in the responder's own PSN space;
 * placed at (local buffer of READ req_psn) + offset.
 */
struct mrc_rresph {
	__be32	req_psn;	/* PSN of the READ_REQ being answered */
	__be32	offset;		/* byte offset of this payload in the read */
	__be32	msg_len;	/* total read length */
	__be32	reserved;
} __packed;

/* CMP_SWAP, FETCH_ADD: 32 bytes. */
struct mrc_atomich {
	__be64	va;		/* 8-byte aligned remote address */
	__be64	swap_add;	/* swap value (CMP_SWAP) or addend */
	__be64	compare;	/* CMP_SWAP compare value, else 0 */
	__be32	rkey;
	__be32	reserved;
} __packed;

/* ATOMIC_RESP: 16 bytes. Sequenced in the responder's PSN space. */
struct mrc_aresph {
	__be64	orig;		/* value at va before the operation */
	__be32	req_psn;	/* PSN of the atomic request */
	__be32	reserved;
} __packed;

/*
 * UD_SEND, UD_SEND_IMM: 16 bytes. Unreliable datagram (UD and GSI QPs):
 * one packet per message (FIRST | LAST), unsequenced (BTH psn and ppsn
 * are 0), never acknowledged.
 */
struct mrc_udh {
	__be32	src_qpn;	/* sending QP, 24 bits, top byte 0 */
	__be32	qkey;		/* checked against the destination QP's */
	__be32	imm;		/* UD_SEND_IMM: immediate data; else 0 */
	__be32	reserved;
} __attribute__((packed));

/*
 * ACK: 56 bytes, then npaths struct mrc_ack_path. Unsequenced (BTH psn and
 * ppsn are 0); BTH path_id is the path the ACK itself travels on.
 *
 * SACK bitmap: bit i (byte i / 8, mask 1 << (i % 8)) set means PSN
 * cum_psn + i has been received. Bit 0 is always 0 (cum_psn is, by
 * definition, the oldest PSN not yet received).
 *
 * DSACK: a non-zero dsack_off reports that PSN cum_psn + (s16)dsack_off
 * arrived again after it had been received (a duplicate) since the
 * previous ACK; 0 reports nothing (it was "reserved", sent as 0, in
 * earlier revisions: receivers that do not report duplicates stay valid).
 */
struct mrc_ackh {
	__be32	cum_psn;	/* every PSN before this one was received */
	__be32	nak_psn;	/* NAK: its PSN; ACK: the void PSN (v3) */
	__be32	tsecr;		/* tsval echoed from a recent data packet */
	__be16	ack_delay;	/* us between that packet and this ACK */
	__be16	fair_share;	/* receiver's cap on inflight pkts, 0 = none */
	__be16	rwnd;		/* free receive-window slots (packets) */
	__u8	syndrome;	/* enum mrc_syndrome */
	__u8	ts_path;	/* path the echoed packet arrived on */
	__u8	npaths;		/* struct mrc_ack_path records that follow */
	__u8	rnr_timer;	/* IB-encoded RNR delay (v3: every ACK) */
	__be16	dsack_off;	/* DSACK: PSN received twice - cum_psn (s16) */
	__u8	sack[MRC_SACK_BYTES];
} __packed;

/* Per-path receive report: 8 bytes. */
struct mrc_ack_path {
	__u8	path_id;	/* < MRC_MAX_PATHS, unique within an ACK */
	__u8	flags;		/* 0 (reserved) */
	__be16	ce_count;	/* CE-marked packets received, mod 2^16 */
	__be32	max_ppsn;	/* highest PPSN received on this path */
} __packed;

/* ACK syndromes (struct mrc_ackh.syndrome) */
enum mrc_syndrome {
	MRC_SYN_ACK		= 0,	/* positive ACK */
	MRC_SYN_RNR		= 1,	/* no receive WQE for nak_psn; retry */
	MRC_SYN_INV_REQ		= 2,	/* malformed/unsupported request */
	MRC_SYN_REM_ACCESS	= 3,	/* rkey/bounds/permission failure */
	MRC_SYN_REM_OP		= 4,	/* responder failed (e.g. WQE too small) */
	MRC_SYN_MAX		= MRC_SYN_REM_OP,
};

/* Sizes */
#define MRC_BTH_LEN		24
#define MRC_SENDH_LEN		16
#define MRC_WRITEH_LEN		32
#define MRC_READH_LEN		16
#define MRC_RRESPH_LEN		16
#define MRC_ATOMICH_LEN		32
#define MRC_ARESPH_LEN		16
#define MRC_UDH_LEN		16
#define MRC_ACKH_LEN		56
#define MRC_ACK_PATH_LEN	8
/* Largest header (BTH + ACK with every path) */
#define MRC_MAX_HDR_LEN	(MRC_BTH_LEN + MRC_ACKH_LEN + \
				 MRC_MAX_PATHS * MRC_ACK_PATH_LEN)

_Static_assert(sizeof(struct mrc_bth) == MRC_BTH_LEN, "bth size");
_Static_assert(sizeof(struct mrc_sendh) == MRC_SENDH_LEN, "sendh size");
_Static_assert(sizeof(struct mrc_writeh) == MRC_WRITEH_LEN, "writeh size");
_Static_assert(sizeof(struct mrc_readh) == MRC_READH_LEN, "readh size");
_Static_assert(sizeof(struct mrc_rresph) == MRC_RRESPH_LEN, "rresph size");
_Static_assert(sizeof(struct mrc_atomich) == MRC_ATOMICH_LEN, "atomich");
_Static_assert(sizeof(struct mrc_aresph) == MRC_ARESPH_LEN, "aresph size");
_Static_assert(sizeof(struct mrc_udh) == MRC_UDH_LEN, "udh size");
_Static_assert(sizeof(struct mrc_ackh) == MRC_ACKH_LEN, "ackh size");
_Static_assert(sizeof(struct mrc_ack_path) == MRC_ACK_PATH_LEN, "ack_path");
_Static_assert(__builtin_offsetof(struct mrc_ackh, sack) == 24, "sack off");
_Static_assert(__builtin_offsetof(struct mrc_bth, tsval) == 16, "tsval");
_Static_assert(__builtin_offsetof(struct mrc_bth, cum_lo) == 22, "cum_lo");
_Static_assert((MRC_WND & (MRC_WND - 1)) == 0, "window power of two");
_Static_assert(MRC_MAX_PATHS <= 256, "path_id is 8 bits");

#endif /* METAROCE_WIRE_H */
