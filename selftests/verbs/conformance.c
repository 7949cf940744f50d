// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce verbs conformance (issue 14), over one device with loopback QP
 * pairs, the same binary against mrc0 and (reference) rxe0:
 *  - mw_bind_mr: ibv_reg_mr with IBV_ACCESS_MW_BIND is accepted;
 *  - query_device_ex answers;
 *  - cq_ex: ibv_create_cq_ex with every wc flag the device can fill and a
 *    completion channel; start_poll/next_poll/end_poll and every read_*
 *    op checked on SEND_WITH_IMM, RDMA_WRITE_WITH_IMM and their send
 *    completions; timestamps refused (EOPNOTSUPP) unless they work;
 *  - qp_ex: ibv_create_qp_ex with send_ops_flags and the ibv_wr_* API for
 *    SEND, SEND_WITH_IMM, RDMA_WRITE(_WITH_IMM), RDMA_READ, both atomics,
 *    set_sge, set_sge_list, set_inline_data(_list), wr_abort, UD
 *    set_ud_addr, every payload byte checked;
 *  - mw: memory windows type 1 (ibv_bind_mw) and type 2 (wr_bind_mw,
 *    IBV_WR_BIND_MW, LOCAL_INV, SEND_WITH_INV), remote WRITE/READ/atomic
 *    through the window's rkey inside its bounds and rights and
 *    IBV_WC_REM_ACCESS_ERR outside them;
 *  - errors: posting per QP state (send before RTS and receive in RESET
 *    are immediate errors), LOC_PROT_ERR for a bad lkey or an SGE past
 *    its MR, LOC_LEN_ERR / REM_INV_REQ_ERR for a too-small receive, RNR
 *    with rnr_retry 7 (waits, then completes), zero-based MRs;
 *  - sqd: RTS -> SQD drains the send queue (IBA 10.3.1, 11.2.4): idle,
 *    IBV_EVENT_SQ_DRAINED once and sq_draining 0; a SEND posted in SQD
 *    is held until RTS; SQD entered under 1 MiB WRITEs: the started ones
 *    complete before the event, the others wait for RTS;
 *  - rnr_resp: a QP waiting out an RNR NAK still answers its peer's
 *    READ (the peer posts its receive only after that READ completed);
 *    rnr_resp_mid, the same with a 64 KiB SEND, whose NAK comes while
 *    the message is partly sent; rnr_resp_big, with a 1 MiB READ, more
 *    response packets than the PSN window holds, and rnr_retry 7 (also a
 *    section of its own);
 *  - srq_last_wqe: a QP of an SRQ raises IBV_EVENT_QP_LAST_WQE_REACHED
 *    once when it enters ERR (modified, or by a fatal error); the SRQ's
 *    other WQEs stay for the other QPs;
 *  - srq_pd: an SRQ's receive WQEs are checked against the SRQ's PD, not
 *    the PD of the QP that consumes them;
 *  - fatal_order: a READ or atomic accepted before a request the
 *    responder fails completes successfully (IB executes in PSN order).
 *
 *   cc -o conformance conformance.c -libverbs
 *   conformance [-R] [-s SECTIONS] DEV
 *
 * -s runs only the comma-separated sections named (default: all).
 * Prints "ok"/"FAIL" per check, "N checks, N failed" last; exit code 1 if
 * any check failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "common.h"

static struct ibv_device_attr_ex dattr;
static const char *sections;
static bool lenient;		/* -R */

#define BUF_SZ	65536

static bool want(const char *name)
{
	const char *p = sections;
	size_t n = strlen(name);

	if (!p)
		return true;
	while (*p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return false;
}

static int ud_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };

	if (to_init(qp, 0) || ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int connect_pair(struct ibv_qp *qa, struct ibv_qp *qb)
{
	return connect_loopback(qa, qb, IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_ATOMIC);
}

/* ------------------------------------------------------- MR access */

static void test_mw_bind_mr(struct ibv_pd *pd)
{
	static uint8_t buf[8192] __attribute__((aligned(4096)));
	struct ibv_mr *mr;

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	CHECK(mr, "reg_mr rw/atomic | MW_BIND (%s)",
	      mr ? "ok" : strerror(errno));
	put_mr(mr);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_MW_BIND);
	CHECK(mr, "reg_mr MW_BIND only (%s)", mr ? "ok" : strerror(errno));
	put_mr(mr);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED);
	CHECK(mr || errno == EINVAL || errno == EOPNOTSUPP,
	      "reg_mr MW_BIND | ZERO_BASED: a clear answer (%s)",
	      mr ? "ok" : strerror(errno));
	put_mr(mr);
}

/* ----------------------------------------------------------- cq_ex */

struct exwc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err, byte_len, qp_num, src_qp, slid;
	unsigned int wc_flags;
	uint32_t imm;		/* host order */
	uint8_t sl, dlid_path_bits;
};

static void exwc_read(struct ibv_cq_ex *cq, struct exwc *w)
{
	w->wr_id = cq->wr_id;
	w->status = cq->status;
	w->opcode = ibv_wc_read_opcode(cq);
	w->vendor_err = ibv_wc_read_vendor_err(cq);
	w->byte_len = ibv_wc_read_byte_len(cq);
	w->wc_flags = ibv_wc_read_wc_flags(cq);
	w->imm = (w->wc_flags & IBV_WC_WITH_IMM) ?
		 ntohl(ibv_wc_read_imm_data(cq)) :
		 (w->wc_flags & IBV_WC_WITH_INV) ?
		 ibv_wc_read_invalidated_rkey(cq) : 0;
	w->qp_num = ibv_wc_read_qp_num(cq);
	w->src_qp = ibv_wc_read_src_qp(cq);
	w->slid = ibv_wc_read_slid(cq);
	w->sl = ibv_wc_read_sl(cq);
	w->dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
}

/* Poll up to max completions through start/next/end_poll, within secs. */
static int poll_ex(struct ibv_cq_ex *cq, struct exwc *w, int max,
		   double secs)
{
	struct ibv_poll_cq_attr pa = {};
	double end = now_s() + secs;
	int n = 0, ret;

	while (n < max && now_s() < end) {
		ret = ibv_start_poll(cq, &pa);
		if (ret == ENOENT)
			continue;
		if (ret)
			return n;
		do {
			exwc_read(cq, &w[n++]);
		} while (n < max && !ibv_next_poll(cq));
		/* next_poll returned ENOENT or we stopped: end the poll */
		ibv_end_poll(cq);
	}
	return n;
}

static const uint64_t exflags = IBV_WC_EX_WITH_BYTE_LEN |
	IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
	IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
	IBV_WC_EX_WITH_DLID_PATH_BITS;

static void test_cq_ex(struct ibv_pd *pd)
{
	static uint8_t src[BUF_SZ] __attribute__((aligned(4096)));
	static uint8_t dst[BUF_SZ] __attribute__((aligned(4096)));
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64, .wc_flags = exflags,
	};
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_comp_channel *ch;
	struct ibv_mr *smr = NULL, *dmr = NULL;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_poll_cq_attr pa = {};
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_cq_ex *cq, *bcq;
	struct ibv_cq *evcq;
	struct pollfd pfd;
	struct exwc w[8];
	struct ibv_sge sge;
	void *evctx;
	int n, i, ret;
	bool ok;

	/* An honest device refuses what it cannot fill. */
	ca.wc_flags = exflags | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	bcq = ibv_create_cq_ex(ctx, &ca);
	if (bcq) {
		CHECK(1, "create_cq_ex with COMPLETION_TIMESTAMP accepted");
		ibv_destroy_cq(ibv_cq_ex_to_cq(bcq));
	} else {
		CHECK(errno == EOPNOTSUPP,
		      "create_cq_ex with COMPLETION_TIMESTAMP -> EOPNOTSUPP (%s)",
		      strerror(errno));
	}
	ca.wc_flags = exflags;
	ca.cqe = dattr.orig_attr.max_cqe + 1;
	bcq = ibv_create_cq_ex(ctx, &ca);
	CHECK(!bcq, "create_cq_ex cqe > max_cqe fails (%s)",
	      bcq ? "success" : strerror(errno));
	if (bcq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(bcq));
	ca.cqe = 64;

	ch = ibv_create_comp_channel(ctx);
	CHECK(ch, "create_comp_channel");
	if (!ch)
		return;
	ca.channel = ch;
	cq = ibv_create_cq_ex(ctx, &ca);
	CHECK(cq, "create_cq_ex 64, every wc flag but timestamps, channel (%s)",
	      cq ? "ok" : strerror(errno));
	if (!cq)
		goto out_ch;
	CHECK(ibv_start_poll(cq, &pa) == ENOENT, "start_poll on empty -> ENOENT");

	ia.send_cq = ibv_cq_ex_to_cq(cq);
	ia.recv_cq = ibv_cq_ex_to_cq(cq);
	qa = ibv_create_qp(pd, &ia);
	qb = ibv_create_qp(pd, &ia);
	smr = ibv_reg_mr(pd, src, BUF_SZ, IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, BUF_SZ, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	CHECK(qa && qb && smr && dmr, "cq_ex: RC pair and MRs");
	if (!qa || !qb || !smr || !dmr)
		goto out;
	CHECK(!connect_pair(qa, qb), "cq_ex: loopback pair to RTS");

	/* SEND_WITH_IMM 3000 bytes, qa -> qb, with a notification. */
	fill(src, 3000, 11);
	memset(dst, 0, BUF_SZ);
	CHECK(!ibv_req_notify_cq(ibv_cq_ex_to_cq(cq), 0), "req_notify_cq");
	CHECK(!post_recv(qb, 0xb0, dst, 4096, dmr->lkey), "post_recv");
	sge = (struct ibv_sge){ (uintptr_t)src, 3000, smr->lkey };
	wr.wr_id = 0xa0;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(0x12345678);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	CHECK(!ibv_post_send(qa, &wr, &bad), "post SEND_WITH_IMM");

	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	ret = poll(&pfd, 1, 10000);
	CHECK(ret == 1, "completion channel fd readable");
	ret = ibv_get_cq_event(ch, &evcq, &evctx);
	CHECK(!ret && evcq == ibv_cq_ex_to_cq(cq), "get_cq_event: our cq_ex");
	if (!ret)
		ibv_ack_cq_events(evcq, 1);

	n = poll_ex(cq, w, 2, 10);
	CHECK(n == 2, "start/next/end_poll: 2 completions (%d)", n);
	for (i = 0; i < n; i++) {
		if (w[i].wr_id == 0xa0) {
			CHECK(w[i].status == IBV_WC_SUCCESS &&
			      w[i].opcode == IBV_WC_SEND &&
			      w[i].qp_num == qa->qp_num,
			      "send: status %s opcode %d qp_num %u",
			      ibv_wc_status_str(w[i].status), w[i].opcode,
			      w[i].qp_num);
		} else {
			CHECK(w[i].wr_id == 0xb0 &&
			      w[i].status == IBV_WC_SUCCESS &&
			      w[i].opcode == IBV_WC_RECV &&
			      w[i].byte_len == 3000 &&
			      (w[i].wc_flags & IBV_WC_WITH_IMM) &&
			      w[i].imm == 0x12345678 &&
			      w[i].qp_num == qb->qp_num &&
			      w[i].vendor_err == 0,
			      "recv: wr_id %#lx %s opcode %d len %u flags %#x imm %#x qp %u src %u verr %u slid %u sl %u dlid_pb %u",
			      (unsigned long)w[i].wr_id,
			      ibv_wc_status_str(w[i].status), w[i].opcode,
			      w[i].byte_len, w[i].wc_flags, w[i].imm,
			      w[i].qp_num, w[i].src_qp, w[i].vendor_err,
			      w[i].slid, w[i].sl, w[i].dlid_path_bits);
		}
	}
	CHECK(bad_byte(dst, 3000, 11) < 0, "SEND_WITH_IMM payload");

	/* Three RDMA_WRITE_WITH_IMM: next_poll walks all of them. */
	for (i = 0; i < 3; i++)
		CHECK(!post_recv(qb, 0xc0 + i, NULL, 0, dmr->lkey),
		      "post_recv %d (no SGE)", i);
	fill(src, 1000, 12);
	sge.length = 1000;
	for (i = 0; i < 3; i++) {
		wr.wr_id = 0xd0 + i;
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl(0xabc0 + i);
		wr.wr.rdma.remote_addr = (uintptr_t)dst + 1000 * i;
		wr.wr.rdma.rkey = dmr->rkey;
		CHECK(!ibv_post_send(qa, &wr, &bad), "post WRITE_WITH_IMM %d",
		      i);
	}
	n = poll_ex(cq, w, 6, 10);
	CHECK(n == 6, "6 completions (%d)", n);
	ok = true;
	for (i = 0; i < n; i++) {
		if (w[i].wr_id >= 0xd0) {
			ok &= w[i].status == IBV_WC_SUCCESS &&
			      w[i].opcode == IBV_WC_RDMA_WRITE;
		} else {
			ok &= w[i].status == IBV_WC_SUCCESS &&
			      w[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
			      w[i].byte_len == 1000 &&
			      (w[i].wc_flags & IBV_WC_WITH_IMM) &&
			      w[i].imm == 0xabc0 + (w[i].wr_id - 0xc0) &&
			      w[i].qp_num == qb->qp_num;
		}
	}
	CHECK(ok, "WRITE_WITH_IMM completions: opcodes, imm, byte_len");
	ok = true;
	for (i = 0; i < 3; i++)
		ok &= bad_byte(dst + 1000 * i, 1000, 12) < 0;
	CHECK(ok, "WRITE_WITH_IMM payloads");
	CHECK(ibv_start_poll(cq, &pa) == ENOENT, "drained: start_poll -> ENOENT");

out:
	put_qp(qa);
	put_qp(qb);
	put_mr(smr);
	put_mr(dmr);
	CHECK(!ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), "destroy cq_ex");
out_ch:
	CHECK(!ibv_destroy_comp_channel(ch), "destroy_comp_channel");
}

/* ----------------------------------------------------------- qp_ex */

static const uint64_t rc_ops = IBV_QP_EX_WITH_RDMA_WRITE |
	IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
	IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
	IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
	IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

static struct ibv_qp *make_qp_ex(struct ibv_pd *pd, struct ibv_cq *cq,
				 enum ibv_qp_type type, uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 128 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd, .send_ops_flags = ops,
	};

	return ibv_create_qp_ex(ctx, &ia);
}

/* Wait for n completions on cq; all must succeed; wr_ids into ids. */
static int wait_ok(struct ibv_cq *cq, int n, uint64_t *ids,
		   enum ibv_wc_opcode *ops, uint32_t *lens)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < n; i++) {
		if (!poll_one(cq, &wc, 10))
			return i;
		if (wc.status != IBV_WC_SUCCESS) {
			printf("#     wr_id %#lx: %s\n", (unsigned long)wc.wr_id,
			       ibv_wc_status_str(wc.status));
			return i;
		}
		if (ids)
			ids[i] = wc.wr_id;
		if (ops)
			ops[i] = wc.opcode;
		if (lens)
			lens[i] = wc.byte_len;
	}
	return n;
}

static void test_qp_ex(struct ibv_pd *pd)
{
	static uint8_t src[BUF_SZ] __attribute__((aligned(4096)));
	static uint8_t dst[BUF_SZ] __attribute__((aligned(4096)));
	static uint64_t atom[2] __attribute__((aligned(64)));
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_mr *smr = NULL, *dmr = NULL, *amr = NULL;
	struct ibv_qp_ex *x;
	struct ibv_sge sl[3];
	struct ibv_data_buf db[3];
	enum ibv_wc_opcode ops[8];
	uint64_t ids[8];
	uint32_t lens[8];
	struct ibv_cq *cq;
	int n, i;
	bool ok;

	cq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	CHECK(cq, "qp_ex: create_cq");
	if (!cq)
		return;
	qa = make_qp_ex(pd, cq, IBV_QPT_RC, rc_ops);
	CHECK(qa, "create_qp_ex RC with send_ops_flags (%s)",
	      qa ? "ok" : strerror(errno));
	qb = make_qp_ex(pd, cq, IBV_QPT_RC, rc_ops);
	if (!qa || !qb)
		goto out;
	x = ibv_qp_to_qp_ex(qa);
	CHECK(x, "ibv_qp_to_qp_ex");
	if (!x)
		goto out;
	smr = ibv_reg_mr(pd, src, BUF_SZ, IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, BUF_SZ, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	amr = ibv_reg_mr(pd, atom, sizeof(atom), IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(smr && dmr && amr, "qp_ex: MRs");
	if (!smr || !dmr || !amr)
		goto out;
	CHECK(!connect_pair(qa, qb), "qp_ex: loopback pair to RTS");

	/* SEND (set_sge), SEND_WITH_IMM (set_sge_list): one batch. */
	memset(dst, 0, BUF_SZ);
	fill(src, 4096, 21);
	CHECK(!post_recv(qb, 1, dst, 4096, dmr->lkey) &&
	      !post_recv(qb, 2, dst + 4096, 4096, dmr->lkey),
	      "qp_ex: 2 receives");
	ibv_wr_start(x);
	x->wr_id = 0x100;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, smr->lkey, (uintptr_t)src, 2000);
	x->wr_id = 0x101;
	ibv_wr_send_imm(x, htonl(0x5151));
	sl[0] = (struct ibv_sge){ (uintptr_t)src, 100, smr->lkey };
	sl[1] = (struct ibv_sge){ (uintptr_t)src + 100, 1000, smr->lkey };
	sl[2] = (struct ibv_sge){ (uintptr_t)src + 1100, 2996, smr->lkey };
	ibv_wr_set_sge_list(x, 3, sl);
	CHECK(!ibv_wr_complete(x), "wr_complete SEND + SEND_WITH_IMM");
	n = wait_ok(cq, 4, ids, ops, lens);
	CHECK(n == 4, "4 good completions (%d)", n);
	CHECK(bad_byte(dst, 2000, 21) < 0 && dst[2000] == 0,
	      "wr_send/set_sge payload");
	CHECK(bad_byte(dst + 4096, 4096, 21) < 0,
	      "wr_send_imm/set_sge_list payload");

	/* RDMA_WRITE with inline data (two buffers), WRITE_WITH_IMM. */
	CHECK(!post_recv(qb, 3, NULL, 0, 0), "qp_ex: receive for the imm");
	memset(dst, 0, BUF_SZ);
	fill(src, 128, 22);
	ibv_wr_start(x);
	x->wr_id = 0x200;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_rdma_write(x, dmr->rkey, (uintptr_t)dst + 8);
	db[0] = (struct ibv_data_buf){ src, 50 };
	db[1] = (struct ibv_data_buf){ src + 50, 78 };
	ibv_wr_set_inline_data_list(x, 2, db);
	x->wr_id = 0x201;
	ibv_wr_rdma_write(x, dmr->rkey, (uintptr_t)dst + 1000);
	ibv_wr_set_inline_data(x, src, 100);
	x->wr_id = 0x202;
	x->wr_flags = IBV_SEND_SIGNALED;
	fill(src + 4096, 3000, 23);
	ibv_wr_rdma_write_imm(x, dmr->rkey, (uintptr_t)dst + 8192,
			      htonl(0x7777));
	ibv_wr_set_sge(x, smr->lkey, (uintptr_t)src + 4096, 3000);
	CHECK(!ibv_wr_complete(x), "wr_complete WRITE inline x2 + WRITE_IMM");
	n = wait_ok(cq, 4, ids, ops, lens);
	CHECK(n == 4, "4 good completions (%d)", n);
	ok = false;
	for (i = 0; i < n; i++)
		if (ids[i] == 3)
			ok = ops[i] == IBV_WC_RECV_RDMA_WITH_IMM &&
			     lens[i] == 3000;
	CHECK(ok, "receive completion of WRITE_WITH_IMM (len 3000)");
	CHECK(bad_byte(dst + 8, 128, 22) < 0 && !dst[7] && !dst[136],
	      "set_inline_data_list payload");
	CHECK(bad_byte(dst + 1000, 100, 22) < 0 && !dst[1100],
	      "set_inline_data payload");
	CHECK(bad_byte(dst + 8192, 3000, 23) < 0, "wr_rdma_write_imm payload");

	/* RDMA_READ back into src. */
	fill(dst + 16384, 5000, 24);
	memset(src, 0, BUF_SZ);
	ibv_wr_start(x);
	x->wr_id = 0x300;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(x, dmr->rkey, (uintptr_t)dst + 16384);
	ibv_wr_set_sge(x, smr->lkey, (uintptr_t)src + 1, 5000);
	CHECK(!ibv_wr_complete(x), "wr_complete RDMA_READ");
	n = wait_ok(cq, 1, ids, ops, lens);
	CHECK(n == 1 && ops[0] == IBV_WC_RDMA_READ && ids[0] == 0x300,
	      "RDMA_READ completion");
	CHECK(bad_byte(src + 1, 5000, 24) < 0 && !src[0] && !src[5001],
	      "wr_rdma_read payload");

	/* Atomics. */
	atom[0] = 100;
	atom[1] = 7;
	ibv_wr_start(x);
	x->wr_id = 0x400;
	ibv_wr_atomic_cmp_swp(x, amr->rkey, (uintptr_t)&atom[0], 100, 555);
	ibv_wr_set_sge(x, smr->lkey, (uintptr_t)src, 8);
	x->wr_id = 0x401;
	ibv_wr_atomic_fetch_add(x, amr->rkey, (uintptr_t)&atom[1], 5);
	ibv_wr_set_sge(x, smr->lkey, (uintptr_t)src + 8, 8);
	CHECK(!ibv_wr_complete(x), "wr_complete CMP_SWP + FETCH_ADD");
	n = wait_ok(cq, 2, ids, ops, NULL);
	CHECK(n == 2, "2 atomic completions");
	CHECK(atom[0] == 555 && atom[1] == 12, "atomic targets (%lu, %lu)",
	      (unsigned long)atom[0], (unsigned long)atom[1]);
	CHECK(((uint64_t *)src)[0] == 100 && ((uint64_t *)src)[1] == 7,
	      "atomic originals returned");

	/* wr_abort: nothing is posted. */
	ibv_wr_start(x);
	x->wr_id = 0x500;
	ibv_wr_rdma_write(x, dmr->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(x, smr->lkey, (uintptr_t)src, 10);
	ibv_wr_abort(x);
	{
		struct ibv_wc wc;

		CHECK(!poll_one(cq, &wc, 0.5), "wr_abort: no completion");
	}
	/* and the QP still works. */
	ibv_wr_start(x);
	x->wr_id = 0x501;
	ibv_wr_rdma_write(x, dmr->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(x, smr->lkey, (uintptr_t)src, 10);
	CHECK(!ibv_wr_complete(x), "wr_complete after abort");
	n = wait_ok(cq, 1, ids, NULL, NULL);
	CHECK(n == 1 && ids[0] == 0x501, "completion after abort is the new WR");

out:
	put_qp(qa);
	put_qp(qb);
	put_mr(smr);
	put_mr(dmr);
	put_mr(amr);
	ibv_destroy_cq(cq);
}

static void test_qp_ex_ud(struct ibv_pd *pd)
{
	static uint8_t src[BUF_SZ] __attribute__((aligned(4096)));
	static uint8_t dst[BUF_SZ] __attribute__((aligned(4096)));
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .sgid_index = gid_index,
			 .hop_limit = 64 },
	};
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_mr *smr = NULL, *dmr = NULL;
	struct ibv_ah *ah = NULL;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	int got = 0;
	bool rok = false;

	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!cq)
		return;
	qa = make_qp_ex(pd, cq, IBV_QPT_UD, IBV_QP_EX_WITH_SEND |
			IBV_QP_EX_WITH_SEND_WITH_IMM);
	qb = make_qp_ex(pd, cq, IBV_QPT_UD, IBV_QP_EX_WITH_SEND);
	CHECK(qa && qb, "create_qp_ex UD x2 (%s)",
	      qa && qb ? "ok" : strerror(errno));
	smr = ibv_reg_mr(pd, src, BUF_SZ, IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, BUF_SZ, IBV_ACCESS_LOCAL_WRITE);
	ah = ibv_create_ah(pd, &aa);
	if (!qa || !qb || !smr || !dmr || !ah)
		goto out;
	CHECK(!ud_to_rts(qa) && !ud_to_rts(qb), "UD QPs to RTS");
	memset(dst, 0, BUF_SZ);
	fill(src, 700, 31);
	CHECK(!post_recv(qb, 9, dst, 40 + 1024, dmr->lkey), "UD receive");
	x = ibv_qp_to_qp_ex(qa);
	CHECK(x, "UD ibv_qp_to_qp_ex");
	if (!x)
		goto out;
	ibv_wr_start(x);
	x->wr_id = 0x600;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htonl(0xcafe));
	ibv_wr_set_ud_addr(x, ah, qb->qp_num, 0x11111111);
	ibv_wr_set_sge(x, smr->lkey, (uintptr_t)src, 700);
	CHECK(!ibv_wr_complete(x), "wr_complete UD SEND_WITH_IMM");
	while (got < 2 && poll_one(cq, &wc, 10)) {
		got++;
		if (wc.wr_id == 9)
			rok = wc.status == IBV_WC_SUCCESS &&
			      wc.byte_len == 740 &&
			      (wc.wc_flags & IBV_WC_GRH) &&
			      (wc.wc_flags & IBV_WC_WITH_IMM) &&
			      ntohl(wc.imm_data) == 0xcafe &&
			      wc.src_qp == qa->qp_num;
		else if (wc.status != IBV_WC_SUCCESS)
			printf("#     send: %s\n", ibv_wc_status_str(wc.status));
	}
	CHECK(got == 2 && rok, "UD: send and receive (GRH, imm, src_qp)");
	CHECK(bad_byte(dst + 40, 700, 31) < 0, "UD set_ud_addr payload");
out:
	if (ah)
		ibv_destroy_ah(ah);
	put_qp(qa);
	put_qp(qb);
	put_mr(smr);
	put_mr(dmr);
	ibv_destroy_cq(cq);
}

/* --------------------------------------------------------------- MW */

/* Post one WRITE/READ/atomic with rkey at addr; return its status. */
static int remote_op(struct ibv_qp *qp, struct ibv_cq *cq,
		     enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
		     void *local, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)local, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x77, .sg_list = &sge, .num_sge = 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = addr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = addr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	if (!poll_one(cq, &wc, 10))
		return -2;
	return wc.status;
}

/* A fresh connected pair (after an error moved one to ERR). */
static bool mw_pair(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_qp **qa,
		    struct ibv_qp **qb)
{
	if (*qa)
		ibv_destroy_qp(*qa);
	if (*qb)
		ibv_destroy_qp(*qb);
	*qa = make_qp_ex(pd, cq, IBV_QPT_RC, rc_ops | IBV_QP_EX_WITH_BIND_MW |
			 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV);
	*qb = make_qp_ex(pd, cq, IBV_QPT_RC, rc_ops | IBV_QP_EX_WITH_BIND_MW |
			 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV);
	return *qa && *qb && !connect_pair(*qa, *qb);
}

static void drain(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	while (poll_one(cq, &wc, 0.2))
		;
}

static const char *st(int s)
{
	static char b[32];

	if (s >= 0)
		return ibv_wc_status_str(s);
	snprintf(b, sizeof(b), "%s", s == -1 ? "post failed" : "no completion");
	return b;
}

static void test_mw(struct ibv_pd *pd)
{
	static uint8_t buf[BUF_SZ] __attribute__((aligned(4096)));
	static uint8_t loc[BUF_SZ] __attribute__((aligned(4096)));
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_mr *mr = NULL, *lmr = NULL, *nobind = NULL;
	struct ibv_mw *mw1 = NULL, *mw2 = NULL;
	struct ibv_mw_bind bind = {};
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	uint32_t rkey2;
	int s;

	CHECK(dattr.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW &&
	      dattr.device_cap_flags_ex & (IBV_DEVICE_MEM_WINDOW_TYPE_2B |
					   IBV_DEVICE_MEM_WINDOW_TYPE_2A),
	      "device caps: MEM_WINDOW, type 2");
	cq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	if (!cq)
		return;
	mr = ibv_reg_mr(pd, buf, BUF_SZ, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	lmr = ibv_reg_mr(pd, loc, BUF_SZ, IBV_ACCESS_LOCAL_WRITE);
	nobind = ibv_reg_mr(pd, loc, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr && lmr && nobind, "mw: MRs (%s)", mr ? "ok" : strerror(errno));
	if (!mr || !lmr || !nobind)
		goto out;
	CHECK(mw_pair(pd, cq, &qa, &qb), "mw: loopback pair");
	if (!qa || !qb)
		goto out;

	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	CHECK(mw1, "alloc_mw type 1 (%s)", mw1 ? "ok" : strerror(errno));
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	CHECK(mw2, "alloc_mw type 2 (%s)", mw2 ? "ok" : strerror(errno));
	if (!mw1 || !mw2)
		goto out;

	/* Type 1: ibv_bind_mw on qa (the window is used by qa's peer qb). */
	bind.wr_id = 0x800;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)buf + 4096;
	bind.bind_info.length = 8192;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					 IBV_ACCESS_REMOTE_READ;
	s = ibv_bind_mw(qb, mw1, &bind);
	CHECK(!s, "bind_mw type 1 (%s)", strerror(s));
	CHECK(poll_one(cq, &wc, 10) && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 0x800,
	      "bind_mw completion (%s, opcode %d)", st(wc.status), wc.opcode);
	CHECK(mw1->rkey != mr->rkey, "type 1 rkey %#x (mr %#x)", mw1->rkey,
	      mr->rkey);
	memset(buf, 0, BUF_SZ);
	fill(loc, 8192, 41);
	s = remote_op(qa, cq, IBV_WR_RDMA_WRITE, mw1->rkey,
		      (uintptr_t)buf + 4096, loc, 8192, lmr->lkey);
	CHECK(s == IBV_WC_SUCCESS, "WRITE through type-1 window (%s)", st(s));
	CHECK(bad_byte(buf + 4096, 8192, 41) < 0 && !buf[4095] &&
	      !buf[4096 + 8192], "window WRITE payload");
	memset(loc, 0, 100);
	s = remote_op(qa, cq, IBV_WR_RDMA_READ, mw1->rkey,
		      (uintptr_t)buf + 4096 + 8000, loc, 192, lmr->lkey);
	CHECK(s == IBV_WC_SUCCESS && !memcmp(loc, buf + 4096 + 8000, 192),
	      "READ through type-1 window at its end (%s)", st(s));
	s = remote_op(qa, cq, IBV_WR_RDMA_WRITE, mw1->rkey,
		      (uintptr_t)buf + 4096 + 8000, loc, 193, lmr->lkey);
	CHECK(s == IBV_WC_REM_ACCESS_ERR, "WRITE one byte past the window -> REM_ACCESS_ERR (%s)",
	      st(s));
	CHECK(!buf[4096 + 8192], "nothing written past the window");
	drain(cq);
	CHECK(mw_pair(pd, cq, &qa, &qb), "mw: fresh pair");
	s = remote_op(qa, cq, IBV_WR_RDMA_WRITE, mw1->rkey,
		      (uintptr_t)buf + 4095, loc, 2, lmr->lkey);
	CHECK(s == IBV_WC_REM_ACCESS_ERR, "WRITE one byte before -> REM_ACCESS_ERR (%s)", st(s));
	drain(cq);
	CHECK(mw_pair(pd, cq, &qa, &qb), "mw: fresh pair");
	s = remote_op(qa, cq, IBV_WR_ATOMIC_FETCH_AND_ADD, mw1->rkey,
		      (uintptr_t)buf + 4096, loc, 8, lmr->lkey);
	CHECK(s == IBV_WC_REM_ACCESS_ERR, "atomic without window ATOMIC right -> REM_ACCESS_ERR (%s)",
	      st(s));
	drain(cq);
	CHECK(mw_pair(pd, cq, &qa, &qb), "mw: fresh pair");

	/* Binding a window to an MR without MW_BIND fails. */
	bind.bind_info.mr = nobind;
	bind.bind_info.addr = (uintptr_t)loc;
	bind.bind_info.length = 4096;
	s = ibv_bind_mw(qb, mw1, &bind);
	if (!s) {
		CHECK(poll_one(cq, &wc, 10) && wc.status != IBV_WC_SUCCESS,
		      "bind to an MR without MW_BIND fails (%s)",
		      st(wc.status));
		drain(cq);
		CHECK(mw_pair(pd, cq, &qa, &qb), "mw: fresh pair");
	} else {
		CHECK(1, "bind to an MR without MW_BIND refused (%s)",
		      strerror(s));
	}

	/* Unbind (length 0): the old rkey no longer works. */
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)buf;
	bind.bind_info.length = 0;
	bind.wr_id = 0x801;
	s = ibv_bind_mw(qb, mw1, &bind);
	CHECK(!s && poll_one(cq, &wc, 10) && wc.status == IBV_WC_SUCCESS,
	      "unbind type 1 (length 0)");
	s = remote_op(qa, cq, IBV_WR_RDMA_WRITE, mw1->rkey,
		      (uintptr_t)buf + 4096, loc, 8, lmr->lkey);
	CHECK(s == IBV_WC_REM_ACCESS_ERR, "WRITE through unbound window -> REM_ACCESS_ERR (%s)", st(s));
	drain(cq);
	CHECK(mw_pair(pd, cq, &qa, &qb), "mw: fresh pair");

	/* Type 2: IBV_WR_BIND_MW via post_send, new key from inc_rkey. */
	rkey2 = ibv_inc_rkey(mw2->rkey);
	wr.wr_id = 0x900;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = rkey2;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)buf + 16384;
	wr.bind_mw.bind_info.length = 64;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_ATOMIC |
					       IBV_ACCESS_REMOTE_READ;
	s = ibv_post_send(qb, &wr, &bad);
	CHECK(!s, "post IBV_WR_BIND_MW type 2 (%s)", strerror(s));
	CHECK(!s && poll_one(cq, &wc, 10) && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_BIND_MW, "type-2 bind completion (%s)",
	      st(wc.status));
	mw2->rkey = rkey2;
	*(uint64_t *)(buf + 16384 + 8) = 40;
	s = remote_op(qa, cq, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey2,
		      (uintptr_t)buf + 16384 + 8, loc, 8, lmr->lkey);
	CHECK(s == IBV_WC_SUCCESS && *(uint64_t *)(buf + 16384 + 8) == 41 &&
	      *(uint64_t *)loc == 40, "FETCH_ADD through type-2 window (%s)",
	      st(s));
	s = remote_op(qa, cq, IBV_WR_RDMA_READ, rkey2,
		      (uintptr_t)buf + 16384 + 56, loc, 8, lmr->lkey);
	CHECK(s == IBV_WC_SUCCESS && !memcmp(loc, buf + 16384 + 56, 8),
	      "READ of the last 8 bytes of the type-2 window (%s)", st(s));
	CHECK(ibv_dereg_mr(mr) != 0,
	      "dereg_mr of an MR with a bound window refused");
	s = remote_op(qa, cq, IBV_WR_RDMA_WRITE, rkey2,
		      (uintptr_t)buf + 16384, loc, 8, lmr->lkey);
	CHECK(s == IBV_WC_REM_ACCESS_ERR, "WRITE without window WRITE right -> REM_ACCESS_ERR (%s)", st(s));
	drain(cq);
	CHECK(mw_pair(pd, cq, &qa, &qb), "mw: fresh pair");

	/* LOCAL_INV of the type-2 window (wr_local_inv). */
	x = ibv_qp_to_qp_ex(qb);
	ibv_wr_start(x);
	x->wr_id = 0x901;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(x, rkey2);
	CHECK(!ibv_wr_complete(x), "wr_local_inv");
	CHECK(poll_one(cq, &wc, 10) && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_LOCAL_INV, "LOCAL_INV completion (%s)",
	      st(wc.status));
	s = remote_op(qa, cq, IBV_WR_RDMA_READ, rkey2,
		      (uintptr_t)buf + 16384, loc, 8, lmr->lkey);
	CHECK(s == IBV_WC_REM_ACCESS_ERR, "READ through invalidated window -> REM_ACCESS_ERR (%s)", st(s));
	drain(cq);
	CHECK(mw_pair(pd, cq, &qa, &qb), "mw: fresh pair");

	/* Re-bind with wr_bind_mw, then SEND_WITH_INV from the peer. */
	rkey2 = ibv_inc_rkey(rkey2);
	x = ibv_qp_to_qp_ex(qb);
	ibv_wr_start(x);
	x->wr_id = 0x902;
	x->wr_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)buf;
	bind.bind_info.length = 4096;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ibv_wr_bind_mw(x, mw2, rkey2, &bind.bind_info);
	CHECK(!ibv_wr_complete(x), "wr_bind_mw");
	CHECK(poll_one(cq, &wc, 10) && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_BIND_MW, "wr_bind_mw completion (%s)",
	      st(wc.status));
	fill(loc, 16, 42);
	s = remote_op(qa, cq, IBV_WR_RDMA_WRITE, rkey2, (uintptr_t)buf + 100,
		      loc, 16, lmr->lkey);
	CHECK(s == IBV_WC_SUCCESS && bad_byte(buf + 100, 16, 42) < 0,
	      "WRITE through re-bound window (%s)", st(s));
	CHECK(!post_recv(qb, 0x903, loc + 8192, 64, lmr->lkey), "receive");
	x = ibv_qp_to_qp_ex(qa);
	ibv_wr_start(x);
	x->wr_id = 0x904;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(x, rkey2);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)loc, 16);
	CHECK(!ibv_wr_complete(x), "wr_send_inv");
	{
		bool rok = false;
		int got = 0;

		while (got < 2 && poll_one(cq, &wc, 10)) {
			got++;
			if (wc.wr_id == 0x903)
				rok = wc.status == IBV_WC_SUCCESS &&
				      (wc.wc_flags & IBV_WC_WITH_INV) &&
				      wc.invalidated_rkey == rkey2;
		}
		CHECK(got == 2 && rok, "SEND_WITH_INV: receive has WITH_INV and the rkey");
	}
	s = remote_op(qa, cq, IBV_WR_RDMA_WRITE, rkey2, (uintptr_t)buf + 100,
		      loc, 16, lmr->lkey);
	CHECK(s == IBV_WC_REM_ACCESS_ERR, "WRITE after SEND_WITH_INV -> REM_ACCESS_ERR (%s)", st(s));
	drain(cq);

	CHECK(!ibv_dealloc_mw(mw1), "dealloc_mw type 1");
	mw1 = NULL;
	CHECK(!ibv_dealloc_mw(mw2), "dealloc_mw type 2");
	mw2 = NULL;
out:
	if (mw1)
		ibv_dealloc_mw(mw1);
	if (mw2)
		ibv_dealloc_mw(mw2);
	put_qp(qa);
	put_qp(qb);
	if (mr)
		CHECK(!ibv_dereg_mr(mr), "dereg_mr once its windows are gone");
	put_mr(lmr);
	put_mr(nobind);
	ibv_destroy_cq(cq);
}

/* ----------------------------------------------------- IB error semantics */

static struct ibv_qp *plain_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};

	return ibv_create_qp(pd, &ia);
}

static int post_send1(struct ibv_qp *qp, enum ibv_wr_opcode op, void *addr,
		      uint32_t len, uint32_t lkey, uint64_t raddr,
		      uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x1234, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static void test_errors(struct ibv_pd *pd)
{
	static uint8_t buf[BUF_SZ] __attribute__((aligned(4096)));
	static uint8_t dst[BUF_SZ] __attribute__((aligned(4096)));
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_mr *mr = NULL, *dmr = NULL, *zmr;
	struct ibv_qp_attr qattr;
	struct ibv_qp_init_attr qinit;
	struct ibv_wc wc, wc2;
	struct ibv_cq *cq;
	int ret, i, got;
	bool okr, oks;

	cq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, BUF_SZ, IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, BUF_SZ, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!cq || !mr || !dmr)
		goto out;

	/* Posting rules per state (IBA 11.4.1.1: SQ immediate error before
	 * RTS; RQ immediate error in RESET). */
	qa = plain_qp(pd, cq);
	qb = plain_qp(pd, cq);
	if (!qa || !qb)
		goto out;
	ret = post_send1(qa, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0);
	CHECK(ret, "post_send in RESET -> immediate error (%s)", strerror(ret));
	ret = post_recv(qa, 1, buf, 8, mr->lkey);
	CHECK(ret, "post_recv in RESET -> immediate error (%s)", strerror(ret));
	to_init(qa, IBV_ACCESS_REMOTE_WRITE);
	ret = post_send1(qa, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0);
	CHECK(ret, "post_send in INIT -> immediate error (%s)", strerror(ret));
	ret = post_recv(qa, 2, buf, 8, mr->lkey);
	CHECK(!ret, "post_recv in INIT accepted (%s)", strerror(ret));
	to_init(qb, IBV_ACCESS_REMOTE_WRITE);
	rc_to_rtr(qa, qb->qp_num, 300);
	ret = post_send1(qa, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0);
	CHECK(ret, "post_send in RTR -> immediate error (%s)", strerror(ret));
	rc_to_rtr(qb, qa->qp_num, 400);
	rc_to_rts(qa, 400);
	rc_to_rts(qb, 300);
	CHECK(!poll_one(cq, &wc, 0.5), "nothing posted before RTS was executed");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	qa = qb = NULL;
	drain(cq);

	/* Bad lkey: LOC_PROT_ERR, the QP goes to ERR. */
	qa = plain_qp(pd, cq);
	qb = plain_qp(pd, cq);
	if (!qa || !qb || connect_pair(qa, qb))
		goto out;
	ret = post_send1(qa, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey ^ 0x80,
			 (uintptr_t)dst, dmr->rkey);
	CHECK(!ret && poll_one(cq, &wc, 10) &&
	      wc.status == IBV_WC_LOC_PROT_ERR,
	      "WRITE with a bad lkey -> LOC_PROT_ERR (%s)",
	      ret ? "post failed" : ibv_wc_status_str(wc.status));
	CHECK(!ibv_query_qp(qa, &qattr, IBV_QP_STATE, &qinit) &&
	      qattr.qp_state == IBV_QPS_ERR, "QP in ERR after it (%d)",
	      qattr.qp_state);
	/* Local SGE outside its MR: also a protection error. */
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	drain(cq);
	qa = plain_qp(pd, cq);
	qb = plain_qp(pd, cq);
	if (!qa || !qb || connect_pair(qa, qb))
		goto out;
	ret = post_send1(qa, IBV_WR_RDMA_WRITE, buf + BUF_SZ - 4, 8, mr->lkey,
			 (uintptr_t)dst, dmr->rkey);
	CHECK(!ret && poll_one(cq, &wc, 10) &&
	      wc.status == IBV_WC_LOC_PROT_ERR,
	      "WRITE with an SGE past its MR -> LOC_PROT_ERR (%s)",
	      ret ? "post failed" : ibv_wc_status_str(wc.status));
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	drain(cq);

	/* Too-small receive: LOC_LEN_ERR there, REM_INV_REQ_ERR here. */
	qa = plain_qp(pd, cq);
	qb = plain_qp(pd, cq);
	if (!qa || !qb || connect_pair(qa, qb))
		goto out;
	post_recv(qb, 0x51, dst, 100, dmr->lkey);
	ret = post_send1(qa, IBV_WR_SEND, buf, 101, mr->lkey, 0, 0);
	okr = oks = false;
	for (got = 0; got < 2 && poll_one(cq, &wc, 10); got++) {
		if (wc.wr_id == 0x51)
			okr = wc.status == IBV_WC_LOC_LEN_ERR;
		else
			oks = wc.status == IBV_WC_REM_INV_REQ_ERR;
		printf("#     %s: %s\n", wc.wr_id == 0x51 ? "recv" : "send",
		       ibv_wc_status_str(wc.status));
	}
	CHECK(!ret && okr, "101 bytes into a 100-byte receive -> LOC_LEN_ERR");
	CHECK(!ret && oks, "its SEND -> REM_INV_REQ_ERR");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	drain(cq);

	/* RNR with rnr_retry 7 (infinite): waits, then completes. */
	qa = plain_qp(pd, cq);
	qb = plain_qp(pd, cq);
	if (!qa || !qb || connect_pair(qa, qb))
		goto out;
	fill(buf, 3000, 61);
	memset(dst, 0, 4096);
	ret = post_send1(qa, IBV_WR_SEND, buf, 3000, mr->lkey, 0, 0);
	CHECK(!ret && !poll_one(cq, &wc, 3),
	      "SEND without a receive, rnr_retry 7: no completion in 3 s");
	post_recv(qb, 0x61, dst, 4096, dmr->lkey);
	okr = oks = false;
	for (got = 0; got < 2 && poll_one(cq, &wc, 20); got++) {
		if (wc.wr_id == 0x61)
			okr = wc.status == IBV_WC_SUCCESS && wc.byte_len == 3000;
		else
			oks = wc.status == IBV_WC_SUCCESS;
	}
	CHECK(okr && oks && bad_byte(dst, 3000, 61) < 0,
	      "after the receive is posted both complete, payload intact");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	qa = qb = NULL;
	drain(cq);

	/* Zero-based MR: remote addresses are offsets. */
	zmr = ibv_reg_mr_iova(pd, dst, BUF_SZ, 0, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_ZERO_BASED);
	CHECK(zmr, "reg_mr_iova 0 ZERO_BASED (%s)",
	      zmr ? "ok" : strerror(errno));
	qa = plain_qp(pd, cq);
	qb = plain_qp(pd, cq);
	if (zmr && qa && qb && !connect_pair(qa, qb)) {
		memset(dst, 0, 8192);
		fill(buf, 500, 62);
		ret = post_send1(qa, IBV_WR_RDMA_WRITE, buf, 500, mr->lkey, 4000,
				 zmr->rkey);
		CHECK(!ret && poll_one(cq, &wc, 10) &&
		      wc.status == IBV_WC_SUCCESS &&
		      bad_byte(dst + 4000, 500, 62) < 0 && !dst[3999] &&
		      !dst[4500], "WRITE at offset 4000 of a zero-based MR (%s)",
		      ret ? "post failed" : ibv_wc_status_str(wc.status));
		memset(buf, 0, 600);
		ret = post_send1(qa, IBV_WR_RDMA_READ, buf, 500, mr->lkey, 4000,
				 zmr->rkey);
		CHECK(!ret && poll_one(cq, &wc2, 10) &&
		      wc2.status == IBV_WC_SUCCESS &&
		      bad_byte(buf, 500, 62) < 0, "READ it back");
		ret = post_send1(qa, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey,
				 BUF_SZ - 4, zmr->rkey);
		CHECK(!ret && poll_one(cq, &wc, 10) &&
		      wc.status == IBV_WC_REM_ACCESS_ERR,
		      "WRITE past its end -> REM_ACCESS_ERR (%s)",
		      ret ? "post failed" : ibv_wc_status_str(wc.status));
	}
	put_mr(zmr);
	for (i = 0; i < 1; i++)
		drain(cq);
out:
	put_qp(qa);
	put_qp(qb);
	put_mr(mr);
	put_mr(dmr);
	if (cq)
		ibv_destroy_cq(cq);
}

/* ------------------------------------------- zero-length WRITE/READ */

/* One WR without SGEs (rsocket's rs_post_msg); rkey, addr as given. */
static int post_nosge(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id,
		      uint32_t imm, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = id, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(imm),
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/*
 * IBA C9-88: a zero-length RDMA WRITE or READ has its R_Key and VA left
 * unchecked. rsocket (librdmacm) sends its control messages -- shutdown,
 * disconnect -- as WRITE_WITH_IMM without SGEs and without setting rkey or
 * remote_addr (stack garbage), into receive WQEs without SGEs. They must
 * complete successfully on both sides, data around them intact.
 */
static void test_zerolen(struct ibv_pd *pd)
{
	static uint8_t src[BUF_SZ] __attribute__((aligned(4096)));
	static uint8_t dst[BUF_SZ] __attribute__((aligned(4096)));
	struct ibv_cq *scq, *rcq;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	struct ibv_recv_wr rwr = { .num_sge = 0 }, *rbad;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_mr *smr = NULL, *dmr = NULL;
	struct ibv_wc wc;
	int i, ok;

	scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	smr = ibv_reg_mr(pd, src, BUF_SZ, IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, BUF_SZ, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ia.send_cq = scq;
	ia.recv_cq = scq;
	if (scq && rcq)
		qa = ibv_create_qp(pd, &ia);
	ia.send_cq = rcq;
	ia.recv_cq = rcq;
	if (qa)
		qb = ibv_create_qp(pd, &ia);
	CHECK(smr && dmr && qa && qb && !connect_pair(qa, qb),
	      "zerolen: RC pair, receives without SGEs");
	if (!smr || !dmr || !qa || !qb)
		goto out;
	for (i = 0; i < 4; i++)
		CHECK(!ibv_post_recv(qb, &rwr, &rbad), "zerolen: post_recv %d", i);

	for (i = 0; i < 2; i++) {
		/* data by WRITE_WITH_IMM (rsocket's RS_OP_DATA) */
		struct ibv_sge sge = { (uintptr_t)src, BUF_SZ, smr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 10 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
			.imm_data = htobe32(0x1000 + i),
		}, *bad;

		fill(src, BUF_SZ, 70 + i);
		memset(dst, 0, BUF_SZ);
		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = dmr->rkey;
		ok = !ibv_post_send(qa, &wr, &bad) && poll_one(scq, &wc, 10) &&
		     wc.status == IBV_WC_SUCCESS;
		CHECK(ok, "zerolen: WRITE_WITH_IMM %u bytes %s", BUF_SZ,
		      i ? "after the zero-length ones" : "first");
		ok = poll_one(rcq, &wc, 10) && wc.status == IBV_WC_SUCCESS &&
		     wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		     be32toh(wc.imm_data) == 0x1000u + i &&
		     wc.byte_len == BUF_SZ;
		CHECK(ok && bad_byte(dst, BUF_SZ, 70 + i) < 0,
		      "zerolen: its receive completion, every byte placed");
		if (i)
			break;

		/* rsocket's control message: no SGE, garbage rkey/addr */
		ok = !post_nosge(qa, IBV_WR_RDMA_WRITE_WITH_IMM, 20,
				 0x40000001, 0xdead0000beefULL, 0x5a5a5a5a) &&
		     poll_one(scq, &wc, 10);
		CHECK(ok && wc.status == IBV_WC_SUCCESS,
		      "zerolen: WRITE_WITH_IMM 0 bytes, unset rkey -> %s",
		      ok ? ibv_wc_status_str(wc.status) : "no completion");
		ok = poll_one(rcq, &wc, 10);
		CHECK(ok && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		      be32toh(wc.imm_data) == 0x40000001 && wc.byte_len == 0,
		      "zerolen: its receive completion with the immediate (%s)",
		      ok ? ibv_wc_status_str(wc.status) : "none");
		ok = !post_nosge(qa, IBV_WR_RDMA_WRITE, 21, 0, 0, 0) &&
		     poll_one(scq, &wc, 10);
		CHECK(ok && wc.status == IBV_WC_SUCCESS,
		      "zerolen: RDMA_WRITE 0 bytes, rkey 0 -> %s",
		      ok ? ibv_wc_status_str(wc.status) : "no completion");
		ok = !post_nosge(qa, IBV_WR_RDMA_READ, 22, 0, 0x77, 0xabcdef01) &&
		     poll_one(scq, &wc, 10);
		CHECK(ok && wc.status == IBV_WC_SUCCESS,
		      "zerolen: RDMA_READ 0 bytes, unset rkey -> %s",
		      ok ? ibv_wc_status_str(wc.status) : "no completion");
	}
out:
	put_qp(qa);
	put_qp(qb);
	put_mr(smr);
	put_mr(dmr);
	if (rcq)
		ibv_destroy_cq(rcq);
	if (scq)
		ibv_destroy_cq(scq);
}

/* ------------------------------------------------------------- sqd */

#define SQD_NWR		8
#define SQD_WLEN	(1u << 20)
#define SQD_SLEN	1000

/*
 * Async events for up to @ms, or (@stop) until one of type @type for
 * @qp: returns how many of those were read; other events are counted in
 * *other. The async fd is non-blocking.
 */
static int qp_events(struct ibv_qp *qp, enum ibv_event_type type, int ms,
		     bool stop, int *other)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	double end = now_s() + ms / 1000.0;
	struct ibv_async_event ev;
	int n = 0, left;

	for (;;) {
		if (!ibv_get_async_event(ctx, &ev)) {
			if (ev.event_type == type && ev.element.qp == qp)
				n++;
			else
				(*other)++;
			ibv_ack_async_event(&ev);
			if (n && stop)
				return n;
			continue;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return n;
		left = (int)((end - now_s()) * 1000);
		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			return n;
	}
}

static int sqd_events(struct ibv_qp *qp, int ms, bool stop, int *other)
{
	return qp_events(qp, IBV_EVENT_SQ_DRAINED, ms, stop, other);
}

/* RTS -> SQD (@notify: IBV_QP_EN_SQD_ASYNC_NOTIFY) or SQD -> RTS. */
static int sqd_to(struct ibv_qp *qp, enum ibv_qp_state st, bool notify)
{
	struct ibv_qp_attr a = { .qp_state = st, .en_sqd_async_notify = 1 };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE |
			     (notify ? IBV_QP_EN_SQD_ASYNC_NOTIFY : 0));
}

/* @qp's state and sq_draining (-1 if query_qp failed). */
static int sqd_query(struct ibv_qp *qp, enum ibv_qp_state *st)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	if (ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE, &ia))
		return -1;
	*st = a.qp_state;
	return a.sq_draining;
}

/* Completions of @cq within @secs into @wc (up to @max). */
static int sqd_poll(struct ibv_cq *cq, struct ibv_wc *wc, int max, double secs)
{
	double end = now_s() + secs;
	int n = 0, r;

	do {
		r = ibv_poll_cq(cq, max - n, wc + n);
		if (r > 0)
			n += r;
	} while (n < max && now_s() < end);
	return n;
}

static bool sqd_all(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* bad_byte() of bytes [off, off + len) of a buffer filled with @seed. */
static long sqd_bad(const uint8_t *p, size_t off, size_t len, uint32_t seed)
{
	size_t i;

	for (i = off; i < off + len; i++)
		if (p[i] != pat(seed, i))
			return i;
	return -1;
}

/*
 * IBA 10.3.1, 11.2.4: in SQD the send queue starts no new message;
 * messages already started complete; WRs posted in SQD are queued until
 * RTS; once nothing started is outstanding sq_draining reads 0 and, if
 * the transition asked for it, IBV_EVENT_SQ_DRAINED comes once. A loopback
 * RC pair: A sends, B receives.
 */
static void test_sqd(struct ibv_pd *pd)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	size_t blen = (size_t)SQD_NWR * SQD_WLEN;
	struct ibv_send_wr wr[SQD_NWR], *bad;
	struct ibv_sge sge[SQD_NWR];
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_mr *smr = NULL, *dmr = NULL;
	struct ibv_cq *scq = NULL, *rcq = NULL;
	uint8_t *src = NULL, *dst = NULL;
	struct ibv_wc wc[SQD_NWR + 2];
	enum ibv_qp_state st = 0;
	int i, n, m, k, dr, other = 0, fl;
	bool ok;

	fl = fcntl(ctx->async_fd, F_GETFL);
	fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	if (posix_memalign((void **)&src, 4096, blen) ||
	    posix_memalign((void **)&dst, 4096, blen)) {
		CHECK(0, "sqd: %zu-byte buffers", blen);
		goto out;
	}
	scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	smr = ibv_reg_mr(pd, src, blen, IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, blen, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	ia.send_cq = ia.recv_cq = scq;
	if (scq && rcq)
		qa = ibv_create_qp(pd, &ia);
	ia.send_cq = ia.recv_cq = rcq;
	if (qa)
		qb = ibv_create_qp(pd, &ia);
	CHECK(smr && dmr && qa && qb && !connect_pair(qa, qb),
	      "sqd: RC pair A -> B");
	if (!smr || !dmr || !qa || !qb)
		goto out;
	sqd_events(qa, 0, false, &other);	/* nothing of earlier tests */
	other = 0;

	/* 1: idle. SQD with notify: drained at once; a SEND waits for RTS */
	memset(dst, 0xee, blen);
	CHECK(!post_recv(qb, 1, dst, SQD_SLEN, dmr->lkey),
	      "sqd idle: B posts a receive");
	CHECK(!sqd_to(qa, IBV_QPS_SQD, true),
	      "sqd idle: A RTS -> SQD with EN_SQD_ASYNC_NOTIFY");
	n = sqd_events(qa, 2000, true, &other);
	CHECK(n == 1, "sqd idle: IBV_EVENT_SQ_DRAINED on A (%d within 2 s)", n);
	dr = sqd_query(qa, &st);
	CHECK(dr == 0 && st == IBV_QPS_SQD,
	      "sqd idle: query_qp: state SQD (%d), sq_draining 0 (%d)", st, dr);
	fill(src, SQD_SLEN, 41);
	sge[0] = (struct ibv_sge){ (uintptr_t)src, SQD_SLEN, smr->lkey };
	wr[0] = (struct ibv_send_wr){ .wr_id = 100, .sg_list = sge,
				      .num_sge = 1, .opcode = IBV_WR_SEND,
				      .send_flags = IBV_SEND_SIGNALED };
	CHECK(!ibv_post_send(qa, wr, &bad), "sqd idle: SEND posted in SQD");
	usleep(300000);
	n = ibv_poll_cq(scq, 1, wc);
	m = ibv_poll_cq(rcq, 1, wc + 1);
	CHECK(n == 0 && m == 0 && sqd_all(dst, SQD_SLEN, 0xee),
	      "sqd idle: 300 ms in SQD: no completion (A %d, B %d), B's buffer untouched",
	      n, m);
	CHECK(!sqd_to(qa, IBV_QPS_RTS, false), "sqd idle: A SQD -> RTS");
	n = n ? 1 : poll_one(scq, wc, 5);
	CHECK(n && wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 100,
	      "sqd idle: the SEND completes on A after RTS (%s)",
	      n ? ibv_wc_status_str(wc[0].status) : "no completion");
	m = m ? 1 : poll_one(rcq, wc + 1, 5);
	CHECK(m && wc[1].status == IBV_WC_SUCCESS &&
	      wc[1].opcode == IBV_WC_RECV && wc[1].byte_len == SQD_SLEN &&
	      bad_byte(dst, SQD_SLEN, 41) < 0 &&
	      sqd_all(dst + SQD_SLEN, 4096 - SQD_SLEN, 0xee),
	      "sqd idle: B receives it, %u bytes exact (%s)", SQD_SLEN,
	      m ? ibv_wc_status_str(wc[1].status) : "no completion");
	dr = sqd_query(qa, &st);
	CHECK(dr == 0 && st == IBV_QPS_RTS,
	      "sqd idle: query_qp: state RTS (%d), sq_draining 0 (%d)", st, dr);
	n = sqd_events(qa, 100, false, &other);
	CHECK(n == 0, "sqd idle: the drained event came once (%d more)", n);

	/* 2: SQD entered under SQD_NWR WRITEs of 1 MiB */
	fill(src, blen, 43);
	memset(dst, 0, blen);
	for (i = 0; i < SQD_NWR; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)src + (size_t)i * SQD_WLEN,
					   SQD_WLEN, smr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = 200 + i, .sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.next = i + 1 < SQD_NWR ? &wr[i + 1] : NULL,
		};
		wr[i].wr.rdma.remote_addr = (uintptr_t)dst + (size_t)i * SQD_WLEN;
		wr[i].wr.rdma.rkey = dmr->rkey;
	}
	ok = !ibv_post_send(qa, wr, &bad);
	ok = ok && !sqd_to(qa, IBV_QPS_SQD, true);
	CHECK(ok, "sqd busy: %d WRITEs of %u bytes posted, A RTS -> SQD at once",
	      SQD_NWR, SQD_WLEN);
	n = sqd_events(qa, 20000, true, &other);
	CHECK(n == 1, "sqd busy: IBV_EVENT_SQ_DRAINED on A (%d within 20 s)", n);
	/* every started WRITE completed before the event */
	k = ibv_poll_cq(scq, SQD_NWR + 2, wc);
	k = k < 0 ? 0 : k;
	ok = true;
	for (i = 0; i < k; i++)
		ok = ok && wc[i].status == IBV_WC_SUCCESS &&
		     wc[i].wr_id == 200u + i;
	CHECK(k >= 1 && ok, "sqd busy: %d WRITEs completed by the event, in order, successful",
	      k);
	dr = sqd_query(qa, &st);
	CHECK(dr == 0 && st == IBV_QPS_SQD,
	      "sqd busy: query_qp: state SQD (%d), sq_draining 0 (%d)", st, dr);
	usleep(300000);
	n = ibv_poll_cq(scq, SQD_NWR + 2, wc);
	CHECK(n == 0, "sqd busy: no completion 300 ms after the event (%d)", n);
	n = n < 0 ? 0 : n;
	ok = true;
	for (i = 0; i < k && i < SQD_NWR; i++)
		ok = ok && sqd_bad(dst, (size_t)i * SQD_WLEN, SQD_WLEN, 43) < 0;
	CHECK(ok, "sqd busy: the %d completed WRITEs' bytes are in place", k);
	CHECK(k >= SQD_NWR ||
	      sqd_all(dst + (size_t)k * SQD_WLEN, blen - (size_t)k * SQD_WLEN, 0),
	      "sqd busy: the %d unstarted WRITEs wrote nothing in SQD",
	      SQD_NWR - k);
	CHECK(!sqd_to(qa, IBV_QPS_RTS, false), "sqd busy: A SQD -> RTS");
	m = k + n < SQD_NWR ? sqd_poll(scq, wc, SQD_NWR - k - n, 30) : 0;
	ok = m == SQD_NWR - k - n;
	for (i = 0; ok && i < m; i++)
		ok = wc[i].status == IBV_WC_SUCCESS &&
		     wc[i].wr_id == 200u + k + n + i;
	CHECK(ok && bad_byte(dst, blen, 43) < 0,
	      "sqd busy: after RTS the other %d complete, in order, all %zu bytes exact",
	      SQD_NWR - k - n, blen);
	n = sqd_events(qa, 200, false, &other);
	CHECK(n == 0 && other == 0, "sqd: no other async event (%d drained, %d other)",
	      n, other);
out:
	fcntl(ctx->async_fd, F_SETFL, fl);
	put_qp(qa);
	put_qp(qb);
	put_mr(smr);
	put_mr(dmr);
	if (rcq)
		ibv_destroy_cq(rcq);
	if (scq)
		ibv_destroy_cq(scq);
	free(src);
	free(dst);
}

/* ------------------------------------- SRQ: last WQE reached */

static struct ibv_qp *srq_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			     struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.srq = srq,
		.cap = { .max_send_wr = 16, .max_send_sge = 2 },
	};

	return ibv_create_qp(pd, &ia);
}

/*
 * IBA 10.3.1, 11.6.3: a QP attached to an SRQ that enters the error
 * state -- moved there, or by a fatal error -- raises
 * IBV_EVENT_QP_LAST_WQE_REACHED once no WQE of the SRQ will be consumed
 * by it any more: the consumer waits for it before destroying or
 * resetting the QP (as ib_drain_qp() does for an SRQ QP since Linux
 * 6.11). Once per entry into ERR; the SRQ's other WQEs stay for the
 * other QPs.
 */
static void test_srq_last_wqe(struct ibv_pd *pd)
{
	static uint8_t buf[BUF_SZ] __attribute__((aligned(4096)));
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_qp *qa = NULL, *qb = NULL, *qc = NULL, *qd = NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_srq *srq = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_recv_wr rw, *bad;
	struct ibv_sge sge;
	struct ibv_cq *cq;
	struct ibv_wc wc[4];
	int i, n, got, other = 0, fl;
	bool ok;

	fl = fcntl(ctx->async_fd, F_GETFL);
	fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, BUF_SZ, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	srq = cq && mr ? ibv_create_srq(pd, &sa) : NULL;
	CHECK(cq && mr && srq, "srq_last_wqe: CQ, MR, SRQ (%s)",
	      srq ? "ok" : strerror(errno));
	if (!srq)
		goto out;
	for (i = 0; i < 4; i++) {
		sge = (struct ibv_sge){ (uintptr_t)buf + 4096 * (i + 1), 4096,
					mr->lkey };
		rw = (struct ibv_recv_wr){ .wr_id = 0x90 + i, .sg_list = &sge,
					   .num_sge = 1 };
		if (ibv_post_srq_recv(srq, &rw, &bad))
			goto setup;
	}
	qa = plain_qp(pd, cq);
	qb = srq_qp(pd, cq, srq);
	if (!qa || !qb || connect_pair(qa, qb))
		goto setup;
	qp_events(qb, IBV_EVENT_QP_LAST_WQE_REACHED, 0, false, &other);
	fill(buf, 100, 91);
	ok = !post_send1(qa, IBV_WR_SEND, buf, 100, mr->lkey, 0, 0) &&
	     sqd_poll(cq, wc, 2, 10) == 2 && wc[0].status == IBV_WC_SUCCESS &&
	     wc[1].status == IBV_WC_SUCCESS;
	CHECK(ok, "srq_last_wqe: A's SEND lands in an SRQ WQE of B");
	n = qp_events(qb, IBV_EVENT_QP_LAST_WQE_REACHED, 200, true, &other);
	CHECK(n == 0, "srq_last_wqe: no event while B works (%d)", n);
	CHECK(!ibv_modify_qp(qb, &a, IBV_QP_STATE), "srq_last_wqe: B to ERR");
	n = qp_events(qb, IBV_EVENT_QP_LAST_WQE_REACHED, 2000, true, &other);
	CHECK(n == 1, "srq_last_wqe: IBV_EVENT_QP_LAST_WQE_REACHED on B "
	      "after modify to ERR (%d within 2 s)", n);
	ibv_modify_qp(qb, &a, IBV_QP_STATE);
	n = qp_events(qb, IBV_EVENT_QP_LAST_WQE_REACHED, 300, false, &other);
	CHECK(n == 0, "srq_last_wqe: once per entry into ERR (%d more)", n);

	/* the SRQ's other WQEs stay: a second pair takes one */
	qc = srq_qp(pd, cq, srq);
	qd = plain_qp(pd, cq);
	if (!qc || !qd || connect_pair(qd, qc))
		goto setup;
	fill(buf, 200, 92);
	got = 0;
	ok = !post_send1(qd, IBV_WR_SEND, buf, 200, mr->lkey, 0, 0);
	for (i = 0; ok && i < 2 && sqd_poll(cq, wc, 1, 10) == 1; i++) {
		if (wc[0].opcode == IBV_WC_RECV)
			got = wc[0].status == IBV_WC_SUCCESS &&
			      wc[0].byte_len == 200 && wc[0].wr_id >= 0x91 &&
			      bad_byte(buf + 4096 * (wc[0].wr_id - 0x90 + 1),
				       200, 92) < 0;
		else
			ok = wc[0].status == IBV_WC_SUCCESS;
	}
	CHECK(ok && got, "srq_last_wqe: the SRQ's other WQEs stay for other QPs");

	/* a fatal error (REM_ACCESS: a WRITE with a bad rkey) */
	ok = !post_send1(qd, IBV_WR_RDMA_WRITE, buf, 64, mr->lkey,
			 (uintptr_t)buf, mr->rkey ^ 0x5a) &&
	     sqd_poll(cq, wc, 1, 10) == 1 &&
	     wc[0].status == IBV_WC_REM_ACCESS_ERR;
	CHECK(ok, "srq_last_wqe: a WRITE with a bad rkey -> REM_ACCESS_ERR");
	n = qp_events(qc, IBV_EVENT_QP_LAST_WQE_REACHED, 2000, true, &other);
	CHECK(n == 1, "srq_last_wqe: IBV_EVENT_QP_LAST_WQE_REACHED on the "
	      "responder after its fatal error (%d within 2 s)", n);
	goto out;
setup:
	CHECK(0, "srq_last_wqe: setup (%s)", strerror(errno));
out:
	printf("#     other async events: %d\n", other);
	put_qp(qa);
	put_qp(qb);
	put_qp(qc);
	put_qp(qd);
	if (srq)
		ibv_destroy_srq(srq);
	put_mr(mr);
	if (cq) {
		drain(cq);
		ibv_destroy_cq(cq);
	}
	fcntl(ctx->async_fd, F_SETFL, fl);
}

/* ------------------------------------- SRQ: the SRQ's PD */

/*
 * One SRQ receive (@sge, @wr_id) and one SEND of @len bytes of seed @seed
 * from @qa into it; @rs, @ss: the receive's and the SEND's status (-2:
 * no completion). 0, or -1 if posting failed.
 */
static int srq_pd_send(struct ibv_srq *srq, struct ibv_qp *qa,
		       struct ibv_cq *cq, struct ibv_sge *sge, uint64_t wr_id,
		       uint8_t *sbuf, uint32_t slkey, uint32_t len,
		       uint32_t seed, int *rs, int *ss)
{
	struct ibv_recv_wr rw = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = 1 }, *bad;
	struct ibv_wc wc[2];
	int i, n;

	*rs = *ss = -2;
	fill(sbuf, len, seed);
	if (ibv_post_srq_recv(srq, &rw, &bad) ||
	    post_send1(qa, IBV_WR_SEND, sbuf, len, slkey, 0, 0))
		return -1;
	n = sqd_poll(cq, wc, 2, 10);
	for (i = 0; i < n; i++)
		if (wc[i].opcode == IBV_WC_RECV)
			*rs = wc[i].status;
		else
			*ss = wc[i].status;
	return 0;
}

/*
 * A receive WQE of an SRQ names memory of the SRQ's protection domain
 * (ibv_create_srq(pd)), whichever PD the QP that consumes it belongs to:
 * an SRQ can serve QPs of several PDs, and its WQEs are checked against
 * the one PD they were posted under. B (PD 1) takes its receives from an
 * SRQ of PD 2: a SEND lands in an MR of PD 2; a WQE naming an MR of PD 1
 * (B's, not the SRQ's) ends LOC_PROT_ERR with no byte of it written.
 */
static void test_srq_pd(struct ibv_pd *pd)
{
	static uint8_t buf[BUF_SZ] __attribute__((aligned(4096)));
	static uint8_t sbuf[8192] __attribute__((aligned(4096)));
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_qp *qa = NULL, *qb = NULL, *qc = NULL, *qd = NULL;
	struct ibv_mr *mr1 = NULL, *mr2 = NULL, *smr = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_pd *pd2;
	struct ibv_sge sge;
	struct ibv_cq *cq;
	int i, rs = -2, ss = -2;

	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	pd2 = ibv_alloc_pd(ctx);
	if (!cq || !pd2)
		goto setup;
	mr1 = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	mr2 = ibv_reg_mr(pd2, buf + 4096, 4096, IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE);
	srq = mr1 && mr2 && smr ? ibv_create_srq(pd2, &sa) : NULL;
	qa = srq ? plain_qp(pd, cq) : NULL;
	qb = srq ? srq_qp(pd, cq, srq) : NULL;
	if (!qa || !qb || connect_pair(qa, qb))
		goto setup;

	memset(buf, 0xee, 8192);
	sge = (struct ibv_sge){ (uintptr_t)buf + 4096, 4096, mr2->lkey };
	if (srq_pd_send(srq, qa, cq, &sge, 0xa2, sbuf, smr->lkey, 3000, 93,
			&rs, &ss))
		goto setup;
	CHECK(rs == IBV_WC_SUCCESS && ss == IBV_WC_SUCCESS &&
	      bad_byte(buf + 4096, 3000, 93) < 0,
	      "srq_pd: a SEND lands in an SRQ WQE naming an MR of the SRQ's PD, "
	      "not the QP's (recv %s, send %s)", st(rs), st(ss));

	/* a second pair: the first one's outcome does not carry over */
	qc = plain_qp(pd, cq);
	qd = srq_qp(pd, cq, srq);
	if (!qc || !qd || connect_pair(qc, qd))
		goto setup;
	sge = (struct ibv_sge){ (uintptr_t)buf, 4096, mr1->lkey };
	if (srq_pd_send(srq, qc, cq, &sge, 0xa1, sbuf, smr->lkey, 2000, 94,
			&rs, &ss))
		goto setup;
	for (i = 0; i < 4096 && buf[i] == 0xee; i++)
		;
	CHECK(rs == IBV_WC_LOC_PROT_ERR && ss != IBV_WC_SUCCESS && i == 4096,
	      "srq_pd: an SRQ WQE naming an MR of the QP's PD but not the "
	      "SRQ's -> LOC_PROT_ERR, nothing written (recv %s, send %s, "
	      "first byte written %d)", st(rs), st(ss), i < 4096 ? i : -1);
	goto out;
setup:
	CHECK(0, "srq_pd: setup (%s)", strerror(errno));
out:
	put_qp(qa);
	put_qp(qb);
	put_qp(qc);
	put_qp(qd);
	if (srq)
		ibv_destroy_srq(srq);
	put_mr(mr1);
	put_mr(mr2);
	put_mr(smr);
	if (pd2)
		ibv_dealloc_pd(pd2);
	if (cq) {
		drain(cq);
		ibv_destroy_cq(cq);
	}
}

/* ------------------------- a fatal error after an accepted READ/atomic */

/*
 * IB RC executes a QP's requests in PSN order (IBA 9.5, 9.7.5.1): a READ
 * or atomic that the responder accepted before a later request fails is
 * answered, and completes successfully at the requester; only the failed
 * request completes in error, and the WRs after it flush. A posts, in one
 * list, a READ (or FETCH_ADD) of B's memory and then a WRITE with a bad
 * rkey (REM_ACCESS_ERR). The READ's bytes and the atomic's original value
 * are checked, and the atomic ran once. (Not checked: a SEND longer than
 * B's receive, which fails after its packet was committed; the READ
 * before it then flushes -- protocol.rst "Fatal NAK".)
 */
static void fatal_order_one(struct ibv_pd *pd, const char *what,
			    enum ibv_wr_opcode first, uint32_t rlen)
{
	const size_t bsz = 2u << 20;
	uint8_t *abuf = NULL, *bbuf = NULL;
	struct ibv_cq *cqa = NULL, *cqb = NULL;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_mr *ma = NULL, *mb = NULL;
	struct ibv_sge sg[2];
	struct ibv_send_wr wr[2], *bad;
	struct ibv_wc wc[2];
	uint64_t want_orig = 0x1122334455667788ull, got_b;
	int n, i, s0 = -2, s1 = -2;
	long bb = 0;

	if (posix_memalign((void **)&abuf, 4096, bsz) ||
	    posix_memalign((void **)&bbuf, 4096, bsz))
		goto setup;
	memset(abuf, 0xee, bsz);
	fill(bbuf, rlen, 95);
	memcpy(bbuf + (1u << 20), &want_orig, 8);
	cqa = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cqb = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ma = ibv_reg_mr(pd, abuf, bsz, IBV_ACCESS_LOCAL_WRITE);
	mb = ibv_reg_mr(pd, bbuf, bsz, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_ATOMIC);
	if (!cqa || !cqb || !ma || !mb)
		goto setup;
	qa = plain_qp(pd, cqa);
	qb = plain_qp(pd, cqb);
	if (!qa || !qb || connect_pair(qa, qb))
		goto setup;

	memset(wr, 0, sizeof(wr));
	if (first == IBV_WR_RDMA_READ) {
		sg[0] = (struct ibv_sge){ (uintptr_t)abuf, rlen, ma->lkey };
		wr[0].wr.rdma.remote_addr = (uintptr_t)bbuf;
		wr[0].wr.rdma.rkey = mb->rkey;
	} else {
		sg[0] = (struct ibv_sge){ (uintptr_t)abuf, 8, ma->lkey };
		wr[0].wr.atomic.remote_addr = (uintptr_t)bbuf + (1u << 20);
		wr[0].wr.atomic.rkey = mb->rkey;
		wr[0].wr.atomic.compare_add = 5;
	}
	wr[0].wr_id = 1;
	wr[0].opcode = first;
	wr[0].sg_list = &sg[0];
	wr[0].num_sge = 1;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].next = &wr[1];
	wr[1].wr_id = 2;
	wr[1].sg_list = &sg[1];
	wr[1].num_sge = 1;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	sg[1] = (struct ibv_sge){ (uintptr_t)abuf + (1u << 20), 8, ma->lkey };
	wr[1].opcode = IBV_WR_RDMA_WRITE;
	wr[1].wr.rdma.remote_addr = (uintptr_t)bbuf;
	wr[1].wr.rdma.rkey = mb->rkey ^ 0x5a5a00;
	if (ibv_post_send(qa, wr, &bad))
		goto setup;
	n = sqd_poll(cqa, wc, 2, 20);
	for (i = 0; i < n; i++)
		if (wc[i].wr_id == 1)
			s0 = wc[i].status;
		else
			s1 = wc[i].status;
	memcpy(&got_b, bbuf + (1u << 20), 8);
	if (first == IBV_WR_RDMA_READ) {
		bb = bad_byte(abuf, rlen, 95);
		CHECK(s0 == IBV_WC_SUCCESS && bb < 0,
		      "fatal_order %s: the READ before it completes, every byte "
		      "(%s, first bad byte %ld)", what, st(s0), bb);
	} else {
		CHECK(s0 == IBV_WC_SUCCESS &&
		      !memcmp(abuf, &want_orig, 8) && got_b == want_orig + 5,
		      "fatal_order %s: the FETCH_ADD before it completes with the "
		      "original value, run once (%s, target +%lld)", what,
		      st(s0), (long long)(got_b - want_orig));
	}
	CHECK(s1 == IBV_WC_REM_ACCESS_ERR,
	      "fatal_order %s: the WRITE fails REM_ACCESS_ERR (%s)", what,
	      st(s1));
	goto out;
setup:
	CHECK(0, "fatal_order %s: setup (%s)", what, strerror(errno));
out:
	put_qp(qa);
	put_qp(qb);
	put_mr(ma);
	put_mr(mb);
	if (cqa) {
		drain(cqa);
		ibv_destroy_cq(cqa);
	}
	if (cqb) {
		drain(cqb);
		ibv_destroy_cq(cqb);
	}
	free(abuf);
	free(bbuf);
}

static void test_fatal_order(struct ibv_pd *pd)
{
	fatal_order_one(pd, "READ 1 MiB, WRITE bad rkey", IBV_WR_RDMA_READ,
			1u << 20);
	fatal_order_one(pd, "FETCH_ADD, WRITE bad rkey",
			IBV_WR_ATOMIC_FETCH_AND_ADD, 0);
	fatal_order_one(pd, "READ 256 KiB, WRITE bad rkey", IBV_WR_RDMA_READ,
			256u << 10);
}

/* --------------------------------- responses during an RNR wait */

/*
 * An RNR NAK makes the requester wait; the responder of the same QP
 * answers all the while (IBA 9.7.5.2.8: the wait is the requester's).
 * A SENDs to B, which has no receive; with A in its RNR wait (B's
 * min_rnr_timer 245.76 ms, A's rnr_retry 1), B READs from A and posts
 * its receive only once that READ has completed -- what a ULP that
 * fetches a descriptor before it can take the next message does. The
 * READ must complete during the wait, so A's one retry finds the receive:
 * A's SEND succeeds and every byte of both arrives. A responder that
 * answers only between RNR waits completes the READ after the retry's
 * RNR NAK and A's SEND fails RNR_RETRY_EXC_ERR.
 */
static void test_rnr_resp(struct ibv_pd *pd, const char *name, uint32_t slen,
			  uint32_t rlen, uint8_t rnr_retry)
{
	/* the READ's bytes after the SEND's, 4 KiB aligned */
	const size_t roff = slen < 16384 ? 16384 : (slen + 4095) & ~4095u;
	const size_t bsz = roff + rlen;
	uint8_t *abuf = NULL, *bbuf = NULL;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.rq_psn = 300, .max_dest_rd_atomic = 4, .min_rnr_timer = 29,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = gid, .sgid_index = gid_index,
				 .hop_limit = 64 },
		},
	};
	int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	int rts = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *amr = NULL, *bmr = NULL;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_cq *cqa, *cqb;
	struct ibv_wc wc;
	double t0, tread = -1;
	bool rd_ok = false, send_ok = false, recv_ok = false;
	int ret;

	cqa = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cqb = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (posix_memalign((void **)&abuf, 4096, bsz) ||
	    posix_memalign((void **)&bbuf, 4096, bsz))
		abuf = bbuf = NULL;	/* (one may leak: the test ends) */
	if (abuf && bbuf) {
		amr = ibv_reg_mr(pd, abuf, bsz, acc);
		bmr = ibv_reg_mr(pd, bbuf, bsz, acc);
	}
	CHECK(cqa && cqb && amr && bmr, "%s: CQs and MRs", name);
	if (!cqa || !cqb || !amr || !bmr)
		goto out;
	qa = plain_qp(pd, cqa);
	qb = plain_qp(pd, cqb);
	if (!qa || !qb || to_init(qa, acc) || to_init(qb, acc))
		goto setup;
	a.dest_qp_num = qb->qp_num;
	a.rq_psn = 300;
	if (ibv_modify_qp(qa, &a, rtr))
		goto setup;
	a.dest_qp_num = qa->qp_num;
	a.rq_psn = 400;
	if (ibv_modify_qp(qb, &a, rtr))
		goto setup;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.max_rd_atomic = 4;
	a.rnr_retry = rnr_retry;
	a.sq_psn = 400;
	if (ibv_modify_qp(qa, &a, rts))
		goto setup;
	a.rnr_retry = 7;
	a.sq_psn = 300;
	if (ibv_modify_qp(qb, &a, rts))
		goto setup;

	fill(abuf, slen, 81);
	fill(abuf + roff, rlen, 82);
	memset(bbuf, 0, bsz);
	ret = post_send1(qa, IBV_WR_SEND, abuf, slen, amr->lkey, 0, 0);
	CHECK(!ret, "%s: A posts a SEND to B, which has no receive", name);
	/* A's SEND is RNR NAKed at once: A waits 245.76 ms */
	usleep(20000);
	t0 = now_s();
	ret = post_send1(qb, IBV_WR_RDMA_READ, bbuf + roff, rlen, bmr->lkey,
			 (uintptr_t)(abuf + roff), amr->rkey);
	if (!ret && poll_one(cqb, &wc, 20)) {
		tread = (now_s() - t0) * 1000;
		rd_ok = wc.status == IBV_WC_SUCCESS &&
			bad_byte(bbuf + roff, rlen, 82) < 0;
		printf("#     B's READ: %s after %.1f ms\n",
		       ibv_wc_status_str(wc.status), tread);
	}
	CHECK(rd_ok, "%s: B's READ from A completes, %u bytes exact", name,
	      rlen);
	/* only now does B take A's message */
	ret = post_recv(qb, 0x71, bbuf, roff, bmr->lkey);
	if (!ret && poll_one(cqa, &wc, 10)) {
		send_ok = wc.status == IBV_WC_SUCCESS;
		printf("#     A's SEND: %s\n", ibv_wc_status_str(wc.status));
	}
	CHECK(send_ok, "%s: A's SEND succeeds on an RNR retry (of %u; B's "
	      "READ was answered during A's RNR waits: %.1f ms)", name,
	      rnr_retry, tread);
	if (send_ok && poll_one(cqb, &wc, 10))
		recv_ok = wc.wr_id == 0x71 && wc.status == IBV_WC_SUCCESS &&
			  wc.byte_len == slen && bad_byte(bbuf, slen, 81) < 0;
	CHECK(recv_ok, "%s: B receives the %u bytes exact", name, slen);
	goto out;
setup:
	CHECK(0, "%s: QP setup (%s)", name, strerror(errno));
out:
	put_qp(qa);
	put_qp(qb);
	put_mr(amr);
	put_mr(bmr);
	if (cqa)
		ibv_destroy_cq(cqa);
	if (cqb)
		ibv_destroy_cq(cqb);
	free(abuf);
	free(bbuf);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	const char *name = NULL;
	struct ibv_pd *pd;
	int i, n, opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "Rs:")) != -1) {
		if (opt == 'R')
			lenient = true;
		else if (opt == 's')
			sections = optarg;
		else
			return 2;
	}
	name = optind < argc ? argv[optind] : "mrc0";
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	CHECK(ctx, "open %s", name);
	if (!ctx)
		return 1;
	CHECK(!ibv_query_device_ex(ctx, NULL, &dattr), "query_device_ex");
	find_ipv4_gid();
	CHECK(gid_index >= 0, "IPv4 GID at index %d", gid_index);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	if (!pd || gid_index < 0)
		return 1;

	if (want("mw_bind_mr"))
		test_mw_bind_mr(pd);
	if (want("cq_ex"))
		test_cq_ex(pd);
	if (want("qp_ex")) {
		test_qp_ex(pd);
		test_qp_ex_ud(pd);
	}
	if (want("mw"))
		test_mw(pd);
	if (want("errors"))
		test_errors(pd);
	if (want("zerolen"))
		test_zerolen(pd);
	if (want("sqd"))
		test_sqd(pd);
	if (want("rnr_resp")) {
		test_rnr_resp(pd, "rnr_resp", 3000, 8192, 1);
		test_rnr_resp(pd, "rnr_resp_mid", 65536, 8192, 1);
	}
	/* version 2 deadlocked here (protocol.rst "RNR and the request epoch") */
	if (want("rnr_resp") || want("rnr_resp_big"))
		test_rnr_resp(pd, "rnr_resp_big", 3000, 1 << 20, 7);
	if (want("srq_last_wqe"))
		test_srq_last_wqe(pd);
	if (want("srq_pd"))
		test_srq_pd(pd);
	if (want("fatal_order"))
		test_fatal_order(pd);

	CHECK(!ibv_dealloc_pd(pd), "dealloc_pd");
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
