// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of fuzz_rx into DIR: one file per scenario, each
 * a sequence of [len_hi len_lo packet] records of valid packets (every
 * opcode, in-order/out-of-order/duplicate PSNs, ACKs with SACK and path
 * reports). Usage: gen_corpus DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include "hdr.h"

static u8 out[65536];
static u32 outlen;

static void emit(struct mrc_pkt *p)
{
	u8 *b = out + outlen + 2;
	int h = mrc_hdr_build(p, b, sizeof(out) - outlen - 2 - 4 -
			      p->payload_len);
	u32 len, i;

	if (h < 0) {
		fprintf(stderr, "gen_corpus: build failed: %s\n",
			mrc_err_str(h));
		exit(1);
	}
	for (i = 0; i < p->payload_len; i++)
		b[h + i] = (u8)i;
	len = mrc_icrc_put(b, h + p->payload_len);
	out[outlen] = len >> 8;
	out[outlen + 1] = (u8)len;
	outlen += 2 + len;
}

static void flush(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(out, 1, outlen, f) != outlen || fclose(f)) {
		perror(path);
		exit(1);
	}
	outlen = 0;
}

static void data(struct mrc_pkt *p, u8 op, u32 psn, u8 path, u32 ppsn,
		 u32 off, u32 msg, u16 plen)
{
	memset(p, 0, sizeof(*p));
	p->opcode = op;
	p->psn = psn;
	p->path_id = path;
	p->ppsn = ppsn;
	p->tsval = psn * 3;
	p->payload_len = plen;
	p->flags = (off == 0 ? MRC_F_FIRST : 0) |
		   (off + plen == msg ? MRC_F_LAST : 0);
	if (op == MRC_OP_WRITE || op == MRC_OP_WRITE_IMM) {
		p->write.va = 0x10000;
		p->write.rkey = 5;
		p->write.msg_len = msg;
		p->write.offset = off;
	} else if (op == MRC_OP_READ_RESP) {
		p->rresp.msg_len = msg;
		p->rresp.offset = off;
		p->rresp.req_psn = 9;
	} else {
		p->send.msg_len = msg;
		p->send.offset = off;
		p->send.rmsn = 1;
	}
}

int main(int argc, char **argv)
{
	static const u8 single[] = { MRC_OP_READ_REQ, MRC_OP_CMP_SWAP,
		MRC_OP_FETCH_ADD, MRC_OP_ATOMIC_RESP, MRC_OP_PROBE };
	static const u8 seg[] = { MRC_OP_SEND, MRC_OP_SEND_IMM,
		MRC_OP_SEND_INV, MRC_OP_WRITE, MRC_OP_WRITE_IMM,
		MRC_OP_READ_RESP };
	struct mrc_pkt p;
	u32 i, k;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	/* one file per segmented opcode: a 3-packet message, reordered */
	for (k = 0; k < sizeof(seg); k++) {
		char name[32];

		data(&p, seg[k], 0xfffffff1U, 1, 0, 64, 160, 64);
		emit(&p);
		data(&p, seg[k], 0xfffffff0U, 0, 0, 0, 160, 64);
		emit(&p);
		data(&p, seg[k], 0xfffffff2U, 1, 1, 128, 160, 32);
		emit(&p);
		data(&p, seg[k], 0xfffffff0U, 2, 0, 0, 160, 64);	/* dup */
		emit(&p);
		snprintf(name, sizeof(name), "seg-%02x", seg[k]);
		flush(argv[1], name);
	}
	/* single-packet opcodes */
	for (k = 0; k < sizeof(single); k++) {
		char name[32];

		memset(&p, 0, sizeof(p));
		p.opcode = single[k];
		p.psn = 0xfffffff0U + k;
		p.flags = single[k] == MRC_OP_PROBE ? MRC_F_ACKREQ :
			  MRC_F_FIRST | MRC_F_LAST;
		p.read.len = 4096;	/* union: harmless for others */
		emit(&p);
		snprintf(name, sizeof(name), "single-%02x", single[k]);
		flush(argv[1], name);
	}
	/* ACKs that the fuzzer's sender (isn 0xffffff80, 4 paths) accepts */
	for (k = 0; k < 4; k++) {
		char name[32];

		memset(&p, 0, sizeof(p));
		p.opcode = MRC_OP_ACK;
		p.ack.cum_psn = 0xffffff80U + k * 8;
		for (i = 2; i < 40; i += 1 + k)
			p.ack.sack[i / 8] |= 1U << (i % 8);
		p.ack.npaths = 4;
		for (i = 0; i < 4; i++) {
			p.ack.paths[i].path_id = i;
			p.ack.paths[i].max_ppsn = 0xfffffff0U + 10 + k;
			p.ack.paths[i].ce_count = k;
		}
		emit(&p);
		p.ack.cum_psn += 20;
		memset(p.ack.sack, 0, sizeof(p.ack.sack));
		emit(&p);
		snprintf(name, sizeof(name), "ack-%u", k);
		flush(argv[1], name);
	}
	/* a long in-order stream on 4 paths */
	for (i = 0; i < 64; i++) {
		data(&p, MRC_OP_WRITE, 0xfffffff0U + i, i % 4, i / 4,
		     i * 16, 64 * 16, 16);
		emit(&p);
	}
	flush(argv[1], "stream");
	return 0;
}
