// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce verbs objects through libibverbs (and the metaroce provider):
 * create/destroy PD, MR, CQ, QP, SRQ and AH, the error codes of absurd
 * inputs, the READ/atomic depth (max_qp_rd_atom and max_qp_init_rd_atom
 * 16; modify_qp refuses 17, keeps 16), a loopback RC pair taken
 * RESET -> INIT -> RTR -> RTS, a UD QP
 * taken to RTS, and receive WQEs posted to an RQ and an SRQ; UC QPs
 * created and destroyed leaving nothing behind (their data path is
 * uc.c's); and two affiliated async events driven by
 * loopback traffic, read from the async fd with a timeout:
 *  - IBV_EVENT_CQ_ERR on a CQ that overflows, the QP completing into it
 *    moved to ERR with IBV_EVENT_QP_FATAL, the CQEs it did hold intact;
 *  - IBV_EVENT_SRQ_LIMIT_REACHED once SENDs consume the SRQ below its
 *    armed limit (not before, and once only), every payload byte checked;
 * and a loopback RC pair's segment size (rdma res -dd seg_size) fixed at
 * RTR while its netdev's MTU changes (test_seg_size_fixed: run as root,
 * it sets the netdev's MTU and restores it), and kept when modify_qp
 * SQD -> SQD gives it a new address: an IPv6 AV that its IPv4-sized
 * segments do not fit is refused, an IPv4 one accepted
 * (test_seg_size_new_av; needs an IPv6 GID).
 *
 *   cc -o objects objects.c -libverbs
 *   RDMAV_DRIVERS=.../build/provider/libmetaroce ./objects [mrc0]
 *
 * Prints "ok"/"FAIL" per check and exits non-zero if any check failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "common.h"

/* A verb returning an object: expect NULL with errno == want. */
#define CHECK_ERRNO(obj, want, what) do {				\
	int __e = errno;						\
	CHECK(!(obj) && __e == (want), "%s -> %s (got %s)", what,	\
	      strerror(want), (obj) ? "success" : strerror(__e));	\
} while (0)

static struct ibv_device_attr dattr;

static void test_mr(struct ibv_pd *pd)
{
	static char buf[65536] __attribute__((aligned(4096)));
	struct ibv_mr *mr, *mr2, *bad;
	uint32_t old_key;

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(mr, "reg_mr 64 KiB rw/atomic");
	if (!mr)
		return;
	CHECK(mr->lkey == mr->rkey && mr->lkey, "lkey == rkey (0x%x)",
	      mr->lkey);

	mr2 = ibv_reg_mr(pd, buf + 100, 1000, 0);
	CHECK(mr2 && mr2->lkey != mr->lkey, "second MR, unaligned, own key");

	bad = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE);
	CHECK_ERRNO(bad, EINVAL, "reg_mr REMOTE_WRITE without LOCAL_WRITE");
	bad = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC);
	CHECK_ERRNO(bad, EINVAL, "reg_mr REMOTE_ATOMIC without LOCAL_WRITE");
	bad = ibv_reg_mr(pd, (void *)0x1000, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!bad, "reg_mr of unmapped memory fails (%s)", strerror(errno));
	bad = ibv_reg_mr(pd, buf, (size_t)-4096, 0);
	CHECK(!bad, "reg_mr of a wrapping length fails (%s)",
	      strerror(errno));

	if (mr2)
		CHECK(!ibv_dereg_mr(mr2), "dereg_mr second");
	old_key = mr->lkey;
	CHECK(!ibv_dereg_mr(mr), "dereg_mr");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr && mr->lkey != old_key, "re-registered MR has a new key");
	put_mr(mr);
}

static void test_cq(void)
{
	struct ibv_cq *cq, *bad;
	struct ibv_wc wc;

	bad = ibv_create_cq(ctx, dattr.max_cqe + 1, NULL, NULL, 0);
	CHECK_ERRNO(bad, EINVAL, "create_cq cqe > max_cqe");
	bad = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	CHECK_ERRNO(bad, EINVAL, "create_cq cqe 0");
	bad = ibv_create_cq(ctx, -1, NULL, NULL, 0);
	CHECK(!bad, "create_cq cqe -1 fails (%s)", strerror(errno));

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq && cq->cqe >= 16, "create_cq 16 (cqe %d)", cq ? cq->cqe : 0);
	if (!cq)
		return;
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0, "poll empty CQ");
	CHECK(!ibv_req_notify_cq(cq, 0), "req_notify_cq");
	CHECK(!ibv_resize_cq(cq, 300) && cq->cqe >= 300,
	      "resize_cq 300 (cqe %d)", cq->cqe);
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0, "poll resized CQ");
	CHECK(ibv_resize_cq(cq, dattr.max_cqe + 1) == EINVAL,
	      "resize_cq > max_cqe -> EINVAL");
	CHECK(!ibv_destroy_cq(cq), "destroy_cq");
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      struct ibv_srq *srq, enum ibv_qp_type type,
			      struct ibv_qp_cap cap)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .cap = cap,
		.qp_type = type,
	};

	return ibv_create_qp(pd, &ia);
}

static int post_recvs(struct ibv_qp *qp, struct ibv_srq *srq, int n,
		      int nsge, struct ibv_mr *mr, struct ibv_recv_wr **bad)
{
	struct ibv_recv_wr wr[64];
	struct ibv_sge sge[64];
	int i;

	for (i = 0; i < nsge && i < 64; i++) {
		sge[i].addr = (uintptr_t)mr->addr;
		sge[i].length = 64;
		sge[i].lkey = mr->lkey;
	}
	for (i = 0; i < n && i < 64; i++) {
		wr[i].wr_id = i;
		wr[i].sg_list = sge;
		wr[i].num_sge = nsge;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return srq ? ibv_post_srq_recv(srq, wr, bad) :
		     ibv_post_recv(qp, wr, bad);
}

static void test_qp(struct ibv_pd *pd)
{
	static char buf[4096] __attribute__((aligned(4096)));
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 4,
				  .max_send_sge = 2, .max_recv_sge = 2,
				  .max_inline_data = 64 };
	struct ibv_qp_cap c;
	struct ibv_qp *qp1, *qp2, *bad;
	struct ibv_qp_init_attr ia;
	struct ibv_recv_wr *bad_wr;
	struct ibv_qp_attr qa;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	int ret;

	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(cq && mr, "QP test: CQ and MR");
	if (!cq || !mr)
		return;

	c = cap; c.max_send_wr = dattr.max_qp_wr + 1;
	bad = make_qp(pd, cq, NULL, IBV_QPT_RC, c);
	CHECK_ERRNO(bad, EINVAL, "create_qp max_send_wr > max_qp_wr");
	c = cap; c.max_recv_wr = dattr.max_qp_wr + 1;
	bad = make_qp(pd, cq, NULL, IBV_QPT_RC, c);
	CHECK_ERRNO(bad, EINVAL, "create_qp max_recv_wr > max_qp_wr");
	c = cap; c.max_send_sge = dattr.max_sge + 1;
	bad = make_qp(pd, cq, NULL, IBV_QPT_RC, c);
	CHECK_ERRNO(bad, EINVAL, "create_qp max_send_sge > max_sge");
	c = cap; c.max_recv_sge = dattr.max_sge + 1;
	bad = make_qp(pd, cq, NULL, IBV_QPT_RC, c);
	CHECK_ERRNO(bad, EINVAL, "create_qp max_recv_sge > max_sge");
	c = cap; c.max_inline_data = 1U << 20;
	bad = make_qp(pd, cq, NULL, IBV_QPT_RC, c);
	CHECK_ERRNO(bad, EINVAL, "create_qp max_inline_data 1 MiB");
	c = cap; c.max_send_wr = 0xffffffff;
	bad = make_qp(pd, cq, NULL, IBV_QPT_RC, c);
	CHECK_ERRNO(bad, EINVAL, "create_qp max_send_wr 2^32-1");

	qp1 = make_qp(pd, cq, NULL, IBV_QPT_RC, cap);
	qp2 = make_qp(pd, cq, NULL, IBV_QPT_RC, cap);
	CHECK(qp1 && qp2, "create two RC QPs");
	if (!qp1 || !qp2)
		goto out;
	CHECK(qp1->qp_num != qp2->qp_num && qp1->qp_num > 1,
	      "distinct QPNs %u %u", qp1->qp_num, qp2->qp_num);

	memset(&qa, 0, sizeof(qa));
	ret = ibv_query_qp(qp1, &qa, IBV_QP_STATE | IBV_QP_CAP, &ia);
	CHECK(!ret && qa.qp_state == IBV_QPS_RESET &&
	      ia.cap.max_send_wr >= 8 && ia.cap.max_recv_wr >= 4 &&
	      ia.cap.max_send_sge >= 2 && ia.cap.max_inline_data >= 64,
	      "query_qp RESET, caps >= asked (%u %u %u %u)",
	      ia.cap.max_send_wr, ia.cap.max_recv_wr, ia.cap.max_send_sge,
	      ia.cap.max_inline_data);

	ret = rc_to_rts(qp1, 1);
	CHECK(ret == EINVAL, "RESET -> RTS refused (%d)", ret);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 2;
	ret = ibv_modify_qp(qp1, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	CHECK(ret == EINVAL, "INIT with port 2 refused (%d)", ret);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 1;
	ret = ibv_modify_qp(qp1, &qa, IBV_QP_STATE | IBV_QP_PORT);
	CHECK(ret == EINVAL, "INIT without required attrs refused (%d)", ret);

	/* Receive WQEs may be posted from INIT on. */
	CHECK(!to_init(qp1, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
	      "qp1 RESET -> INIT");
	CHECK(!to_init(qp2, IBV_ACCESS_REMOTE_WRITE), "qp2 RESET -> INIT");
	CHECK(!post_recvs(qp1, NULL, 3, 2, mr, &bad_wr), "post 3 recvs");
	ret = post_recvs(qp1, NULL, 1, 3, mr, &bad_wr);
	CHECK(ret == EINVAL, "post recv num_sge > max_recv_sge refused (%d)",
	      ret);

	/*
	 * READ/atomic depth (protocol.rst, "READ and atomics"): the device
	 * advertises 16 both ways, and modify_qp refuses more than that
	 * (EINVAL, as rdma_rxe); 16 itself is accepted and kept.
	 */
	CHECK(dattr.max_qp_rd_atom == 16 && dattr.max_qp_init_rd_atom == 16,
	      "query_device: max_qp_rd_atom %d, max_qp_init_rd_atom %d (want 16, 16)",
	      dattr.max_qp_rd_atom, dattr.max_qp_init_rd_atom);
	ret = rc_to_rtr_rd(qp1, qp2->qp_num, 100, 17);
	CHECK(ret == EINVAL, "RTR with max_dest_rd_atomic 17 refused (%d)",
	      ret);
	ret = rc_to_rtr(qp1, qp2->qp_num, 100);
	CHECK(!ret, "qp1 INIT -> RTR (loopback AV, gid %d) (%d)",
	      gid_index, ret);
	ret = rc_to_rtr_rd(qp2, qp1->qp_num, 200, 16);
	CHECK(!ret, "qp2 INIT -> RTR with max_dest_rd_atomic 16 (%d)", ret);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	qa.retry_cnt = 8;
	ret = ibv_modify_qp(qp1, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	CHECK(ret == EINVAL, "RTS with retry_cnt 8 refused (%d)", ret);
	qa.retry_cnt = 7;
	qa.max_rd_atomic = 255;
	ret = ibv_modify_qp(qp1, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	CHECK(ret == EINVAL, "RTS with max_rd_atomic 255 refused (%d)", ret);
	qa.max_rd_atomic = 17;
	ret = ibv_modify_qp(qp1, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	CHECK(ret == EINVAL, "RTS with max_rd_atomic 17 refused (%d)", ret);
	CHECK(!rc_to_rts(qp1, 200), "qp1 RTR -> RTS");
	qa.max_rd_atomic = 16;
	qa.timeout = 14;
	qa.rnr_retry = 7;
	qa.sq_psn = 100;
	ret = ibv_modify_qp(qp2, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	CHECK(!ret, "qp2 RTR -> RTS with max_rd_atomic 16 (%d)", ret);
	memset(&qa, 0, sizeof(qa));
	ret = ibv_query_qp(qp2, &qa, IBV_QP_MAX_QP_RD_ATOMIC |
			   IBV_QP_MAX_DEST_RD_ATOMIC, &ia);
	CHECK(!ret && qa.max_rd_atomic == 16 && qa.max_dest_rd_atomic == 16,
	      "query_qp: max_rd_atomic %u, max_dest_rd_atomic %u (want 16, 16)",
	      qa.max_rd_atomic, qa.max_dest_rd_atomic);

	memset(&qa, 0, sizeof(qa));
	ret = ibv_query_qp(qp1, &qa, IBV_QP_STATE | IBV_QP_DEST_QPN |
			   IBV_QP_PATH_MTU | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN |
			   IBV_QP_AV | IBV_QP_ACCESS_FLAGS, &ia);
	CHECK(!ret && qa.qp_state == IBV_QPS_RTS &&
	      qa.dest_qp_num == qp2->qp_num && qa.path_mtu == IBV_MTU_1024 &&
	      qa.sq_psn == 200 && qa.rq_psn == 100 &&
	      qa.qp_access_flags == (IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ) &&
	      qa.ah_attr.is_global &&
	      !memcmp(&qa.ah_attr.grh.dgid, &gid, sizeof(gid)),
	      "query_qp truthful in RTS (state %d dest %u mtu %d psn %u/%u)",
	      qa.qp_state, qa.dest_qp_num, qa.path_mtu, qa.sq_psn,
	      qa.rq_psn);

	/* Capacity 4 (asked) .. granted; 3 are posted already. */
	ret = post_recvs(qp1, NULL, 64, 1, mr, &bad_wr);
	CHECK(ret == ENOMEM && bad_wr, "overfilled RQ -> ENOMEM (%d)", ret);

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_ERR;
	CHECK(!ibv_modify_qp(qp2, &qa, IBV_QP_STATE), "qp2 RTS -> ERR");
	qa.qp_state = IBV_QPS_RESET;
	CHECK(!ibv_modify_qp(qp2, &qa, IBV_QP_STATE), "qp2 ERR -> RESET");
	CHECK(!to_init(qp2, 0), "qp2 RESET -> INIT again");

	CHECK(ibv_destroy_cq(cq) == EBUSY, "destroy_cq in use -> EBUSY");
	CHECK(!ibv_destroy_qp(qp1), "destroy qp1");
	CHECK(!ibv_destroy_qp(qp2), "destroy qp2");
	qp1 = qp2 = NULL;
out:
	put_qp(qp1);
	put_qp(qp2);
	CHECK(!ibv_destroy_cq(cq), "QP test: destroy_cq");
	ibv_dereg_mr(mr);
}

static void test_srq(struct ibv_pd *pd)
{
	static char buf[4096] __attribute__((aligned(4096)));
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 2 } };
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 1 };
	struct ibv_srq_init_attr bsa;
	struct ibv_recv_wr *bad_wr;
	struct ibv_srq *srq, *bad;
	struct ibv_srq_attr at;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int ret;

	bsa = sa; bsa.attr.max_wr = dattr.max_srq_wr + 1;
	bad = ibv_create_srq(pd, &bsa);
	CHECK_ERRNO(bad, EINVAL, "create_srq max_wr > max_srq_wr");
	bsa = sa; bsa.attr.max_sge = dattr.max_srq_sge + 1;
	bad = ibv_create_srq(pd, &bsa);
	CHECK_ERRNO(bad, EINVAL, "create_srq max_sge > max_srq_sge");
	bsa = sa; bsa.attr.srq_limit = 65;
	bad = ibv_create_srq(pd, &bsa);
	CHECK_ERRNO(bad, EINVAL, "create_srq srq_limit > max_wr");

	srq = ibv_create_srq(pd, &sa);
	CHECK(srq && sa.attr.max_wr >= 64 && sa.attr.max_sge >= 2,
	      "create_srq 64 x 2 (granted %u x %u)", sa.attr.max_wr,
	      sa.attr.max_sge);
	if (!srq)
		return;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr && !post_recvs(NULL, srq, 5, 2, mr, &bad_wr),
	      "post 5 SRQ recvs");

	at.srq_limit = 10;
	CHECK(!ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT), "arm srq_limit 10");
	memset(&at, 0, sizeof(at));
	CHECK(!ibv_query_srq(srq, &at) && at.srq_limit == 10 &&
	      at.max_wr >= 64 && at.max_sge == 2,
	      "query_srq (max_wr %u max_sge %u limit %u)", at.max_wr,
	      at.max_sge, at.srq_limit);
	at.srq_limit = 100000;
	CHECK(ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT) == EINVAL,
	      "srq_limit > max_wr refused");
	at.max_wr = 200;
	CHECK(!ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR), "resize SRQ to 200");
	memset(&at, 0, sizeof(at));
	CHECK(!ibv_query_srq(srq, &at) && at.max_wr >= 200 &&
	      at.srq_limit == 10, "query_srq after resize (max_wr %u)",
	      at.max_wr);
	CHECK(mr && !post_recvs(NULL, srq, 60, 1, mr, &bad_wr),
	      "post 60 more SRQ recvs into the resized ring");
	at.max_wr = dattr.max_srq_wr + 1;
	CHECK(ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR) == EINVAL,
	      "resize SRQ > max_srq_wr refused");
	ret = post_recvs(NULL, srq, 1, 3, mr, &bad_wr);
	CHECK(ret == EINVAL, "SRQ recv num_sge > max_sge refused (%d)", ret);

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	qp = cq ? make_qp(pd, cq, srq, IBV_QPT_RC, cap) : NULL;
	CHECK(qp, "create RC QP on the SRQ");
	if (qp) {
		ret = post_recvs(qp, NULL, 1, 1, mr, &bad_wr);
		CHECK(ret, "post_recv on an SRQ QP refused (%d)", ret);
		CHECK(ibv_destroy_srq(srq) == EBUSY,
		      "destroy_srq in use -> EBUSY");
		CHECK(!ibv_destroy_qp(qp), "destroy SRQ QP");
	}
	if (cq)
		ibv_destroy_cq(cq);
	CHECK(!ibv_destroy_srq(srq), "destroy_srq");
	put_mr(mr);
}

static void test_ah_ud(struct ibv_pd *pd)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .sgid_index = gid_index,
			 .hop_limit = 64 },
	};
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 4,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_ah *ah, *ah2, *bad;
	struct ibv_qp_attr qa;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	ah = ibv_create_ah(pd, &aa);
	CHECK(ah, "create_ah to own IPv4 GID (%s)", ah ? "" : strerror(errno));
	ah2 = ibv_create_ah(pd, &aa);
	CHECK(ah2, "second AH");
	aa.grh.sgid_index = 250;
	bad = ibv_create_ah(pd, &aa);
	CHECK(!bad, "create_ah with sgid_index 250 fails (%s)",
	      strerror(errno));
	aa.grh.sgid_index = gid_index;
	aa.is_global = 0;
	bad = ibv_create_ah(pd, &aa);
	CHECK(!bad, "create_ah without GRH fails (%s)", strerror(errno));
	if (ah2)
		CHECK(!ibv_destroy_ah(ah2), "destroy second AH");

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	qp = cq ? make_qp(pd, cq, NULL, IBV_QPT_UD, cap) : NULL;
	CHECK(qp, "create UD QP");
	if (qp) {
		CHECK(!to_init(qp, 0), "UD RESET -> INIT");
		memset(&qa, 0, sizeof(qa));
		qa.qp_state = IBV_QPS_RTR;
		CHECK(!ibv_modify_qp(qp, &qa, IBV_QP_STATE), "UD INIT -> RTR");
		qa.qp_state = IBV_QPS_RTS;
		qa.sq_psn = 7;
		CHECK(!ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN),
		      "UD RTR -> RTS");
		qa.qp_state = IBV_QPS_RTS;
		qa.path_mtu = IBV_MTU_1024;
		CHECK(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PATH_MTU)
		      == EINVAL, "UD RTS -> RTS with PATH_MTU refused");
		CHECK(!ibv_destroy_qp(qp), "destroy UD QP");
	}
	if (cq)
		ibv_destroy_cq(cq);
	if (ah)
		CHECK(!ibv_destroy_ah(ah), "destroy_ah");
}

/* ------------------------------------------------------ UC objects */

/* QPs of mrc0 the kernel knows about (rdma res), -1 if unknown. */
static int count_qps(void)
{
	char cmd[128], line[512];
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma res show qp link %s/1 2>/dev/null",
		 ibv_get_device_name(ctx->device));
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "lqpn"))
			n++;
	return pclose(f) ? -1 : n;
}

static void test_uc(struct ibv_pd *pd)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 4,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_device_attr_ex ax;
	struct ibv_qp *qps[16];
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int before, after, i, made = 0, e = 0, gone = 0;

	memset(&ax, 0, sizeof(ax));
	CHECK(!ibv_query_device_ex(ctx, NULL, &ax) &&
	      !ax.odp_caps.per_transport_caps.uc_odp_caps,
	      "query_device_ex advertises no ODP for UC (uc_odp_caps 0x%x)",
	      ax.odp_caps.per_transport_caps.uc_odp_caps);

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq, "UC test: CQ");
	if (!cq)
		return;
	before = count_qps();
	for (i = 0; i < 16; i++) {
		qps[i] = make_qp(pd, cq, NULL, IBV_QPT_UC, cap);
		e = errno;
		if (!qps[i])
			break;
		made++;
	}
	CHECK(made == 16, "create_qp UC, 16 times (%d made%s%s)", made,
	      made < 16 ? ", then " : "", made < 16 ? strerror(e) : "");
	for (i = 0; i < made; i++)
		gone += !ibv_destroy_qp(qps[i]);
	CHECK(gone == made, "destroy_qp UC (%d of %d)", gone, made);
	after = count_qps();
	CHECK(before >= 0 && after == before,
	      "no QP left behind by the UC QPs (rdma res: %d -> %d)",
	      before, after);
	/* The device still makes QPs. */
	qp = make_qp(pd, cq, NULL, IBV_QPT_RC, cap);
	CHECK(qp, "create RC QP after the UC ones");
	put_qp(qp);
	CHECK(!ibv_destroy_cq(cq), "UC test: destroy_cq");
}

/* --------------------------------------------------- async events */

struct ev_seen {
	enum ibv_event_type type;
	void *elem;		/* cq, qp or srq; NULL for port/device */
};

static void *ev_elem(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_DEVICE_FATAL:
		return NULL;
	default:
		return ev->element.qp;
	}
}

/*
 * Read async events (the fd is non-blocking; poll() bounds the wait)
 * for up to ms milliseconds or until one of each wanted (type, element)
 * was seen. Every event is acked at once and logged into seen[].
 * Returns the number of events read.
 */
static int read_events(const struct ev_seen *want, int nwant,
		       struct ev_seen *seen, int max, int ms)
{
	double end = now_s() + ms / 1000.0;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int n = 0, i, j, left;

	for (;;) {
		for (left = 0, i = 0; i < nwant; i++) {
			for (j = 0; j < n; j++)
				if (seen[j].type == want[i].type &&
				    seen[j].elem == want[i].elem)
					break;
			left += j == n;
		}
		if (nwant && !left)
			return n;
		if (!ibv_get_async_event(ctx, &ev)) {
			if (n < max) {
				seen[n].type = ev.event_type;
				seen[n].elem = ev_elem(&ev);
				n++;
			}
			ibv_ack_async_event(&ev);
			continue;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return n;
		left = (int)((end - now_s()) * 1000);
		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			return n;
	}
}

static bool saw(const struct ev_seen *seen, int n, enum ibv_event_type t,
		void *elem)
{
	int i;

	for (i = 0; i < n; i++)
		if (seen[i].type == t && seen[i].elem == elem)
			return true;
	return false;
}

static const char *ev_list(const struct ev_seen *seen, int n)
{
	static char out[512];
	size_t k = 0;
	int i;

	out[0] = 0;
	for (i = 0; i < n && k < sizeof(out) - 64; i++)
		k += snprintf(out + k, sizeof(out) - k, "%s%s", i ? ", " : "",
			      ibv_event_type_str(seen[i].type));
	return n ? out : "none";
}

/* Take a loopback pair qa <-> qb to RTS. */
static int connect_pair(struct ibv_qp *qa, struct ibv_qp *qb)
{
	return connect_loopback(qa, qb, IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
}

/*
 * The drain idiom (ib_drain_rq, rdma-core users): after the QP is moved to
 * ERR, a receive posted then completes with IBV_WC_WR_FLUSH_ERR, and so do
 * receives and sends posted before. Nothing is lost or completed twice.
 */
static void test_flush_in_err(struct ibv_pd *pd)
{
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 8,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr ia;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_send_wr swr = {}, *sbad;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	int seen[8] = {}, i, n, bad = 0;

	cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(cq && mr, "flush: cq and mr");
	if (!cq || !mr)
		goto out;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap = cap;
	qa = ibv_create_qp(pd, &ia);
	qb = ibv_create_qp(pd, &ia);
	CHECK(qa && qb && !connect_pair(qa, qb), "flush: loopback RC pair in RTS");
	if (!qa || !qb)
		goto out;
	sge.addr = (uintptr_t)buf;
	sge.length = 64;
	sge.lkey = mr->lkey;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	for (i = 0; i < 2; i++) {	/* wr_id 0, 1: posted in RTS */
		rwr.wr_id = i;
		CHECK(!ibv_post_recv(qa, &rwr, &rbad), "flush: post_recv %d in RTS", i);
	}
	CHECK(!ibv_modify_qp(qa, &attr, IBV_QP_STATE), "flush: modify_qp to ERR");
	for (i = 2; i < 5; i++) {	/* wr_id 2..4: posted in ERR */
		rwr.wr_id = i;
		CHECK(!ibv_post_recv(qa, &rwr, &rbad), "flush: post_recv %d in ERR", i);
	}
	/* the receives alone (no send to kick the kernel) */
	for (n = 0; n < 5 && poll_one(cq, &wc, 5.0); n++) {
		if (wc.qp_num != qa->qp_num || wc.wr_id > 4 ||
		    wc.status != IBV_WC_WR_FLUSH_ERR || seen[wc.wr_id]++)
			bad++;
	}
	CHECK(n == 5 && !bad,
	      "flush: 5 receives (2 before, 3 after ERR) complete once each as WR_FLUSH_ERR (%d completions, %d wrong)",
	      n, bad);
	swr.wr_id = 5;			/* a send posted in ERR, too */
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	CHECK(!ibv_post_send(qa, &swr, &sbad), "flush: post_send in ERR");
	n = poll_one(cq, &wc, 5.0);
	CHECK(n == 1 && wc.wr_id == 5 && wc.status == IBV_WC_WR_FLUSH_ERR &&
	      !seen[5]++, "flush: the send completes as WR_FLUSH_ERR");
	CHECK(!poll_one(cq, &wc, 0.5), "flush: nothing completes twice");
out:
	if (qa)
		CHECK(!ibv_destroy_qp(qa), "flush: destroy qp a");
	if (qb)
		CHECK(!ibv_destroy_qp(qb), "flush: destroy qp b");
	put_mr(mr);
	if (cq)
		CHECK(!ibv_destroy_cq(cq), "flush: destroy cq");
}

#define OVF_LEN	200

/*
 * A CQ of N slots takes the send completions of N + 4 signaled RDMA
 * WRITEs: IB_EVENT_CQ_ERR on the CQ, the QP goes to ERR
 * (IBV_EVENT_QP_FATAL), the N CQEs the CQ holds are those of the first
 * N WRITEs, whose bytes arrived.
 */
static void test_cq_overflow(struct ibv_pd *pd)
{
	static uint8_t mem[2][64 * OVF_LEN] __attribute__((aligned(4096)));
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_recv_wr = 1,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_send_wr wr[64], *bad;
	struct ibv_sge sge[64];
	struct ev_seen seen[16], want[2];
	struct ibv_qp_init_attr ia;
	struct ibv_cq *cq, *cq2;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_qp_attr qa_attr;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int n, total, i, j, got, nseen, bad_bytes = 0, bad_wc = 0;

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	cq2 = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	CHECK(cq && cq2 && mr && cq->cqe >= 4 && cq->cqe <= 60,
	      "CQ overflow: CQ of %d CQEs, MR", cq ? cq->cqe : 0);
	if (!cq || !cq2 || !mr || cq->cqe < 4 || cq->cqe > 60)
		goto out;
	n = cq->cqe;
	total = n + 4;
	qa = make_qp(pd, cq, NULL, IBV_QPT_RC, cap);
	qb = make_qp(pd, cq2, NULL, IBV_QPT_RC, cap);
	CHECK(qa && qb && !connect_pair(qa, qb),
	      "CQ overflow: loopback RC pair in RTS");
	if (!qa || !qb)
		goto out;
	/* Nothing pending from before. */
	read_events(NULL, 0, seen, 16, 0);

	memset(mem[1], 0xee, sizeof(mem[1]));
	for (i = 0; i < total; i++) {
		for (j = 0; j < OVF_LEN; j++)
			mem[0][i * OVF_LEN + j] = pat(i, j);
		sge[i].addr = (uintptr_t)mem[0] + i * OVF_LEN;
		sge[i].length = OVF_LEN;
		sge[i].lkey = mr->lkey;
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = 1000 + i;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)mem[1] + i * OVF_LEN;
		wr[i].wr.rdma.rkey = mr->rkey;
		wr[i].next = i + 1 < total ? &wr[i + 1] : NULL;
	}
	CHECK(!ibv_post_send(qa, wr, &bad), "CQ overflow: post %d WRITEs",
	      total);

	want[0].type = IBV_EVENT_CQ_ERR;
	want[0].elem = cq;
	want[1].type = IBV_EVENT_QP_FATAL;
	want[1].elem = qa;
	nseen = read_events(want, 2, seen, 16, 20000);
	CHECK(saw(seen, nseen, IBV_EVENT_CQ_ERR, cq),
	      "CQ overflow: IBV_EVENT_CQ_ERR on the CQ (events: %s)",
	      ev_list(seen, nseen));
	CHECK(saw(seen, nseen, IBV_EVENT_QP_FATAL, qa),
	      "CQ overflow: IBV_EVENT_QP_FATAL on its QP (events: %s)",
	      ev_list(seen, nseen));
	memset(&qa_attr, 0, sizeof(qa_attr));
	CHECK(!ibv_query_qp(qa, &qa_attr, IBV_QP_STATE, &ia) &&
	      qa_attr.qp_state == IBV_QPS_ERR,
	      "CQ overflow: the QP is in ERR (state %d)", qa_attr.qp_state);

	/* The CQ holds what it took before it overflowed, in order. */
	for (got = 0; got <= total && ibv_poll_cq(cq, 1, &wc) == 1; got++) {
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 1000u + got ||
		    wc.opcode != IBV_WC_RDMA_WRITE || wc.qp_num != qa->qp_num)
			bad_wc++;
		else
			for (j = 0; j < OVF_LEN; j++)
				bad_bytes += mem[1][got * OVF_LEN + j] !=
					     pat(got, j);
	}
	CHECK(got == n && !bad_wc && !bad_bytes,
	      "CQ overflow: %d CQEs kept (want %d), %d bad, their WRITEs landed (%d bad bytes)",
	      got, n, bad_wc, bad_bytes);
	for (j = total * OVF_LEN; j < (int)sizeof(mem[1]); j++)
		bad_bytes += mem[1][j] != 0xee;
	CHECK(!bad_bytes, "CQ overflow: nothing written past the WRITEs");

	/* Posting to the ERR QP and polling the dead CQ stay harmless. */
	wr[0].next = NULL;
	ibv_post_send(qa, wr, &bad);
	CHECK(ibv_poll_cq(cq, 1, &wc) >= 0, "CQ overflow: poll after it");
	nseen = read_events(NULL, 0, seen, 16, 300);
	CHECK(!saw(seen, nseen, IBV_EVENT_CQ_ERR, cq),
	      "CQ overflow: one CQ_ERR only (later events: %s)",
	      ev_list(seen, nseen));
	CHECK(poll_one(cq2, &wc, 0.2) == 0,
	      "CQ overflow: no CQE on the peer for WRITEs");
out:
	if (qa)
		CHECK(!ibv_destroy_qp(qa), "CQ overflow: destroy its QP");
	put_qp(qb);
	if (cq)
		CHECK(!ibv_destroy_cq(cq), "CQ overflow: destroy the CQ");
	if (cq2)
		ibv_destroy_cq(cq2);
	put_mr(mr);
}

#define SRQ_N		8
#define SRQ_LIMIT	4
#define SRQ_SLOT	256
#define SRQ_LEN		(SRQ_SLOT - 37)

/*
 * An SRQ with SRQ_N receives posted and srq_limit SRQ_LIMIT armed:
 * SENDs from the loopback peer consume them one by one; the event
 * comes when fewer than SRQ_LIMIT are left (after SEND number
 * SRQ_N - SRQ_LIMIT + 1), not before, and only once (the limit is
 * disarmed: query_srq reads 0). Every received byte is checked.
 */
static void test_srq_limit(struct ibv_pd *pd)
{
	static uint8_t mem[2][SRQ_N * SRQ_SLOT] __attribute__((aligned(4096)));
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16,
						  .max_sge = 1 } };
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 1,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_recv_wr rwr[SRQ_N], *rbad;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge rsge[SRQ_N], sge;
	struct ev_seen seen[16], want;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_cq *cq = NULL, *cq2 = NULL;
	struct ibv_srq_attr at;
	struct ibv_srq *srq;
	struct ibv_mr *mr = NULL;
	struct ibv_wc wc;
	int i, j, nseen, early = -1, bad_msgs = 0, bad_bytes = 0;
	bool fired = false, waited = false;
	char why[160] = "";

	srq = ibv_create_srq(pd, &sa);
	cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	cq2 = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE);
	CHECK(srq && cq && cq2 && mr, "SRQ limit: SRQ, CQs, MR");
	if (!srq || !cq || !cq2 || !mr)
		goto out;
	qa = make_qp(pd, cq, NULL, IBV_QPT_RC, cap);
	cap.max_recv_wr = 0;
	qb = make_qp(pd, cq2, srq, IBV_QPT_RC, cap);
	CHECK(qa && qb && !connect_pair(qa, qb),
	      "SRQ limit: loopback RC pair in RTS, receiver on the SRQ");
	if (!qa || !qb)
		goto out;
	read_events(NULL, 0, seen, 16, 0);

	memset(mem[1], 0xee, sizeof(mem[1]));
	for (i = 0; i < SRQ_N; i++) {
		rsge[i].addr = (uintptr_t)mem[1] + i * SRQ_SLOT;
		rsge[i].length = SRQ_SLOT;
		rsge[i].lkey = mr->lkey;
		memset(&rwr[i], 0, sizeof(rwr[i]));
		rwr[i].wr_id = 500 + i;
		rwr[i].sg_list = &rsge[i];
		rwr[i].num_sge = 1;
		rwr[i].next = i + 1 < SRQ_N ? &rwr[i + 1] : NULL;
	}
	CHECK(!ibv_post_srq_recv(srq, rwr, &rbad), "SRQ limit: post %d recvs",
	      SRQ_N);
	at.srq_limit = SRQ_LIMIT;
	CHECK(!ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT),
	      "SRQ limit: arm srq_limit %d", SRQ_LIMIT);
	nseen = read_events(NULL, 0, seen, 16, 200);
	CHECK(!nseen, "SRQ limit: no event while %d >= %d are posted (%s)",
	      SRQ_N, SRQ_LIMIT, ev_list(seen, nseen));

	want.type = IBV_EVENT_SRQ_LIMIT_REACHED;
	want.elem = srq;
	for (i = 0; i < SRQ_N; i++) {
		/* SEND i: SRQ_LEN bytes of its own pattern */
		for (j = 0; j < SRQ_LEN; j++)
			mem[0][i * SRQ_SLOT + j] = pat(i + 77, j);
		sge.addr = (uintptr_t)mem[0] + i * SRQ_SLOT;
		sge.length = SRQ_LEN;
		sge.lkey = mr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		if (ibv_post_send(qa, &wr, &bad)) {
			snprintf(why, sizeof(why), "post SEND %d failed", i);
			break;
		}
		if (!poll_one(cq, &wc, 10) || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != (uint64_t)i) {
			snprintf(why, sizeof(why), "SEND %d: no good send CQE",
				 i);
			break;
		}
		if (!poll_one(cq2, &wc, 10)) {
			snprintf(why, sizeof(why), "SEND %d: no receive CQE",
				 i);
			break;
		}
		/* receives are taken in posting order */
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 500u + i ||
		    wc.opcode != IBV_WC_RECV || wc.byte_len != SRQ_LEN ||
		    wc.qp_num != qb->qp_num)
			bad_msgs++;
		for (j = 0; j < SRQ_SLOT; j++)
			bad_bytes += mem[1][i * SRQ_SLOT + j] !=
				     (j < SRQ_LEN ? pat(i + 77, j) : 0xee);
		/* SRQ_N - i - 1 receives are left now */
		if (SRQ_N - i - 1 >= SRQ_LIMIT) {
			nseen = read_events(NULL, 0, seen, 16, 100);
			if (nseen && early < 0)
				early = i;
		} else if (!waited) {
			waited = true;
			nseen = read_events(&want, 1, seen, 16, 10000);
			fired = saw(seen, nseen, want.type, srq);
			CHECK(fired && i == SRQ_N - SRQ_LIMIT,
			      "SRQ limit: IBV_EVENT_SRQ_LIMIT_REACHED when %d < %d are left (events: %s)",
			      SRQ_N - i - 1, SRQ_LIMIT, ev_list(seen, nseen));
			memset(&at, 0xff, sizeof(at));
			CHECK(!ibv_query_srq(srq, &at) && at.srq_limit == 0,
			      "SRQ limit: disarmed after the event (srq_limit %u)",
			      at.srq_limit);
		} else {
			nseen = read_events(NULL, 0, seen, 16, 100);
			if (nseen && early < 0)
				early = i;
		}
	}
	CHECK(!why[0], "SRQ limit: %d SENDs into the SRQ completed%s%s",
	      SRQ_N, why[0] ? ": " : "", why);
	CHECK(fired, "SRQ limit: the event came at all");
	CHECK(early < 0, "SRQ limit: no other event (first after SEND %d)",
	      early);
	CHECK(!bad_msgs && !bad_bytes,
	      "SRQ limit: receive CQEs (%d bad) and payload bytes (%d bad)",
	      bad_msgs, bad_bytes);
out:
	put_qp(qa);
	if (qb)
		CHECK(!ibv_destroy_qp(qb), "SRQ limit: destroy the SRQ's QP");
	if (srq)
		CHECK(!ibv_destroy_srq(srq), "SRQ limit: destroy_srq");
	if (cq)
		ibv_destroy_cq(cq);
	if (cq2)
		ibv_destroy_cq(cq2);
	put_mr(mr);
}

/* ------------------------------------------- the segment size, fixed */

#define SEG_LEN		(256 * 1024)
#define SEG_NWR		4

/* The whole output of a shell command (at most n - 1 bytes), or -1. */
static int cmd_out(const char *cmd, char *out, size_t n)
{
	size_t got = 0, r;
	FILE *f;

	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (got + 1 < n && (r = fread(out + got, 1, n - 1 - got, f)) > 0)
		got += r;
	out[got] = 0;
	return pclose(f) ? -1 : 0;
}

/* seg_size of @qp in `rdma -dd res show qp`, or -1. */
static int seg_size(struct ibv_qp *qp)
{
	char cmd[160], out[4096], *p;

	snprintf(cmd, sizeof(cmd),
		 "rdma -dd res show qp link %s/1 lqpn %u 2>/dev/null",
		 ibv_get_device_name(ctx->device), qp->qp_num);
	if (cmd_out(cmd, out, sizeof(out)))
		return -1;
	p = strstr(out, "seg_size ");
	return p ? atoi(p + 9) : -1;
}

static int set_mtu(const char *nd, int mtu)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip link set dev %s mtu %d", nd, mtu);
	return system(cmd);
}

/* Post n signaled WRITEs (wr_id 70..) of mem[0] to mem[1] over qa. */
static bool seg_writes(struct ibv_qp *qa, struct ibv_mr *mr,
		       uint8_t (*mem)[SEG_LEN], int n)
{
	struct ibv_send_wr wr[SEG_NWR], *bad;
	struct ibv_sge sge[SEG_NWR];
	uint32_t len = SEG_LEN / n;
	int i;

	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)mem[0] + i * len;
		sge[i].length = len;
		sge[i].lkey = mr->lkey;
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = 70 + i;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)mem[1] + i * len;
		wr[i].wr.rdma.rkey = mr->rkey;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return !ibv_post_send(qa, wr, &bad);
}

/* n completions of seg_writes(), each a success, in order? */
static bool seg_wait(struct ibv_cq *cq, int n)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < n; i++)
		if (poll_one(cq, &wc, 10.0) != 1 ||
		    wc.status != IBV_WC_SUCCESS || wc.wr_id != 70u + i)
			return false;
	return true;
}

/*
 * Issue 10, 4: a QP's segment size is chosen when it enters RTR (from its
 * path MTU and the netdev's MTU at that moment) and stays fixed until
 * RESET (protocol.rst "Segment size"), whatever the netdev's MTU does
 * later and whatever modify_qp follows -- one message never goes out
 * with two segment sizes, and the peer's responder refuses a packet that
 * would. Over a loopback RC pair on the netdev of the device (eth0):
 *  - the MTU grows by 500 between RTR and RTS: seg_size (rdma res -dd)
 *    stays the RTR one;
 *  - WRITEs in flight while the MTU goes back and an RTS -> RTS
 *    modify_qp (min_rnr_timer) runs: seg_size unchanged, every WRITE
 *    completes, every byte in place;
 *  - a pair taken to RTR at the larger MTU, the MTU then dropped below
 *    its segment size: seg_size unchanged, and its packets, too big for
 *    the netdev now, are counted (tx_too_big). Loopback packets go
 *    through lo, so they still arrive and the WRITE completes.
 * The netdev's MTU is restored at the end.
 */
static void test_seg_size_fixed(struct ibv_pd *pd)
{
	static uint8_t mem[2][SEG_LEN] __attribute__((aligned(4096)));
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 1,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_qp_attr a;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	char cmd[128], out[1024], nd[64] = "", *p;
	int m0 = 0, s_rtr, s, s2, i;
	long t0, t1;

	snprintf(cmd, sizeof(cmd), "rdma link show %s/1 2>/dev/null",
		 ibv_get_device_name(ctx->device));
	if (!cmd_out(cmd, out, sizeof(out)) && (p = strstr(out, "netdev ")))
		sscanf(p + 7, "%63s", nd);
	snprintf(cmd, sizeof(cmd), "cat /sys/class/net/%s/mtu", nd);
	if (nd[0] && !cmd_out(cmd, out, sizeof(out)))
		m0 = atoi(out);
	CHECK(m0 >= 1280 && m0 <= 8500, "seg: netdev %s, mtu %d",
	      nd[0] ? nd : "?", m0);
	if (m0 < 1280 || m0 > 8500)
		return;
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	qa = cq ? make_qp(pd, cq, NULL, IBV_QPT_RC, cap) : NULL;
	qb = cq ? make_qp(pd, cq, NULL, IBV_QPT_RC, cap) : NULL;
	CHECK(cq && mr && qa && qb &&
	      !to_init(qa, IBV_ACCESS_REMOTE_WRITE) &&
	      !to_init(qb, IBV_ACCESS_REMOTE_WRITE) &&
	      !rc_to_rtr(qa, qb->qp_num, 300) &&
	      !rc_to_rtr(qb, qa->qp_num, 400),
	      "seg: loopback RC pair in RTR");
	if (!cq || !mr || !qa || !qb)
		goto out;
	s_rtr = seg_size(qa);
	CHECK(s_rtr >= 256 && s_rtr <= 4096 && seg_size(qb) == s_rtr,
	      "seg: seg_size %d at RTR (mtu %d)", s_rtr, m0);
	CHECK(!set_mtu(nd, m0 + 500), "seg: %s mtu %d -> %d", nd, m0,
	      m0 + 500);
	CHECK(!rc_to_rts(qa, 400) && !rc_to_rts(qb, 300),
	      "seg: RTR -> RTS at mtu %d", m0 + 500);
	s = seg_size(qa);
	s2 = seg_size(qb);
	CHECK(s == s_rtr && s2 == s_rtr,
	      "seg: seg_size stays %d after RTS (got %d, %d)", s_rtr, s, s2);

	for (i = 0; i < SEG_LEN; i++)
		mem[0][i] = pat(9, i);
	memset(mem[1], 0, SEG_LEN);
	CHECK(seg_writes(qa, mr, mem, SEG_NWR), "seg: post %d WRITEs",
	      SEG_NWR);
	CHECK(!set_mtu(nd, m0), "seg: %s mtu back to %d, WRITEs in flight",
	      nd, m0);
	memset(&a, 0, sizeof(a));
	a.min_rnr_timer = 14;
	CHECK(!ibv_modify_qp(qa, &a, IBV_QP_MIN_RNR_TIMER),
	      "seg: RTS -> RTS (min_rnr_timer), WRITEs in flight");
	s = seg_size(qa);
	CHECK(s == s_rtr, "seg: seg_size stays %d (got %d)", s_rtr, s);
	CHECK(seg_wait(cq, SEG_NWR), "seg: %d WRITEs complete, in order",
	      SEG_NWR);
	CHECK(bad_byte(mem[1], SEG_LEN, 9) < 0,
	      "seg: every byte in place (first bad at %ld)",
	      bad_byte(mem[1], SEG_LEN, 9));
	CHECK(!ibv_destroy_qp(qa) && !ibv_destroy_qp(qb),
	      "seg: destroy the pair");
	qa = qb = NULL;

	/* RTR at the larger MTU, then the MTU drops below seg_size */
	qa = make_qp(pd, cq, NULL, IBV_QPT_RC, cap);
	qb = make_qp(pd, cq, NULL, IBV_QPT_RC, cap);
	CHECK(qa && qb && !set_mtu(nd, m0 + 500) &&
	      !connect_loopback(qa, qb, IBV_ACCESS_REMOTE_WRITE),
	      "seg: a pair in RTS at mtu %d", m0 + 500);
	if (!qa || !qb)
		goto out;
	s = seg_size(qa);
	CHECK(s > s_rtr, "seg: its seg_size %d is larger than %d", s, s_rtr);
	CHECK(!set_mtu(nd, m0), "seg: %s mtu back to %d", nd, m0);
	t0 = hw_counter(ibv_get_device_name(ctx->device), "tx_too_big");
	memset(mem[1], 0, SEG_LEN);
	CHECK(seg_writes(qa, mr, mem, 1) && seg_wait(cq, 1) &&
	      bad_byte(mem[1], SEG_LEN, 9) < 0,
	      "seg: a WRITE over lo completes, every byte in place");
	t1 = hw_counter(ibv_get_device_name(ctx->device), "tx_too_big");
	s2 = seg_size(qa);
	CHECK(s2 == s, "seg: seg_size stays %d (got %d)", s, s2);
	CHECK(t0 >= 0 && t1 - t0 >= SEG_LEN / s,
	      "seg: its %d-byte packets counted tx_too_big at mtu %d (+%ld)",
	      s, m0, t0 >= 0 ? t1 - t0 : -1);
out:
	if (m0)
		CHECK(!set_mtu(nd, m0), "seg: %s mtu %d restored", nd, m0);
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	put_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
}

/* ------------------------------- a new address for a fixed segment size */

/* @g/@gi: port 1's first IPv6 GID (not IPv4-mapped, link-local last). */
static bool find_ipv6_gid(union ibv_gid *g, int *gi)
{
	struct ibv_port_attr pattr;
	union ibv_gid x;
	int i;

	*gi = -1;
	if (ibv_query_port(ctx, 1, &pattr))
		return false;
	for (i = 0; i < pattr.gid_tbl_len && i < 64; i++) {
		if (ibv_query_gid(ctx, 1, i, &x) ||
		    !memcmp(x.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) ||
		    !memcmp(x.raw, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16))
			continue;
		if (*gi < 0 || (g->raw[0] == 0xfe && g->raw[1] == 0x80)) {
			*g = x;
			*gi = i;
		}
	}
	return *gi >= 0;
}

/* @qp's state to @st (RTS -> SQD, SQD -> RTS); 0 or an errno. */
static int to_state(struct ibv_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = st };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* SQD -> SQD with a new AV towards this device's @g/@gi; 0 or an errno. */
static int sqd_av(struct ibv_qp *qp, const union ibv_gid *g, int gi)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_SQD,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = *g, .sgid_index = gi,
				 .hop_limit = 64 },
		},
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV);
}

/* INIT -> RTR towards QP @dest at @g/@gi (this device), MTU 1024. */
static int rtr_at(struct ibv_qp *qp, uint32_t dest, uint32_t psn,
		  const union ibv_gid *g, int gi)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest, .rq_psn = psn, .max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = *g, .sgid_index = gi,
				 .hop_limit = 64 },
		},
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

/* Is @qp in @st with its AV's dgid @g? */
static bool qp_at(struct ibv_qp *qp, enum ibv_qp_state st,
		  const union ibv_gid *g)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	return !ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV, &ia) &&
	       a.qp_state == st && a.ah_attr.is_global &&
	       !memcmp(&a.ah_attr.grh.dgid, g, sizeof(*g));
}

/*
 * Issue 10, 4 (protocol.rst "Segment size"): ib_core lets an RC QP take a
 * new address vector at SQD -> SQD, which may switch IPv4 <-> IPv6, while
 * its segment size stays the RTR one. An RC QP whose path MTU is the
 * active MTU fills the netdev's IP MTU: 1500 - 96 = 1404 over IPv4, but
 * IPv6 headers are 20 bytes longer, so over IPv6 every full segment would
 * be 1520 bytes for a 1500-byte netdev (tx_too_big, dropped off the
 * loopback). metaroce refuses that modify_qp with EINVAL: the QP stays
 * in SQD with its address, returns to RTS and its WRITEs complete, none
 * too big. The other way (RTR over IPv6, 1384, then IPv4) fits and is
 * accepted, the segment size unchanged. Loopback pairs on the device's
 * netdev at its MTU (the lab's 1500); needs an IPv6 GID (the lab's
 * fd00:6d72::/64).
 */
static void test_seg_size_new_av(struct ibv_pd *pd)
{
	static uint8_t mem[2][SEG_LEN] __attribute__((aligned(4096)));
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 1,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	const char *dev = ibv_get_device_name(ctx->device);
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	char cmd[128], out[1024], nd[64] = "", *p;
	int m0 = 0, gi6, s, s2, ra, rb;
	union ibv_gid g6;
	long t0, t1;

	snprintf(cmd, sizeof(cmd), "rdma link show %s/1 2>/dev/null", dev);
	if (!cmd_out(cmd, out, sizeof(out)) && (p = strstr(out, "netdev ")))
		sscanf(p + 7, "%63s", nd);
	snprintf(cmd, sizeof(cmd), "cat /sys/class/net/%s/mtu", nd);
	if (nd[0] && !cmd_out(cmd, out, sizeof(out)))
		m0 = atoi(out);
	CHECK(find_ipv6_gid(&g6, &gi6) && m0 >= 1280,
	      "seg-av: an IPv6 GID (index %d), netdev %s mtu %d", gi6,
	      nd[0] ? nd : "?", m0);
	if (gi6 < 0 || m0 < 1280)
		return;
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	for (s = 0; s < SEG_LEN; s++)
		mem[0][s] = pat(11, s);

	/* IPv4 at RTR, IPv6 at SQD -> SQD: refused */
	qa = cq ? make_qp(pd, cq, NULL, IBV_QPT_RC, cap) : NULL;
	qb = cq ? make_qp(pd, cq, NULL, IBV_QPT_RC, cap) : NULL;
	CHECK(cq && mr && qa && qb &&
	      !connect_loopback(qa, qb, IBV_ACCESS_REMOTE_WRITE),
	      "seg-av: loopback RC pair in RTS over IPv4");
	if (!cq || !mr || !qa || !qb)
		goto out;
	s = seg_size(qa);
	CHECK(s > m0 - 116 && s <= m0 - 96,
	      "seg-av: seg_size %d fills mtu %d over IPv4 (96 B of headers), not over IPv6 (116)",
	      s, m0);
	CHECK(!to_state(qa, IBV_QPS_SQD) && !to_state(qb, IBV_QPS_SQD),
	      "seg-av: RTS -> SQD");
	ra = sqd_av(qa, &g6, gi6);
	rb = sqd_av(qb, &g6, gi6);
	CHECK(ra == EINVAL && rb == EINVAL,
	      "seg-av: SQD -> SQD to an IPv6 AV refused: %d + 116 > %d (%s, %s)",
	      s, m0, strerror(ra), strerror(rb));
	CHECK(qp_at(qa, IBV_QPS_SQD, &gid) && qp_at(qb, IBV_QPS_SQD, &gid),
	      "seg-av: both still in SQD with their IPv4 AV");
	CHECK(!to_state(qa, IBV_QPS_RTS) && !to_state(qb, IBV_QPS_RTS),
	      "seg-av: SQD -> RTS");
	t0 = hw_counter(dev, "tx_too_big");
	memset(mem[1], 0, SEG_LEN);
	CHECK(seg_writes(qa, mr, mem, SEG_NWR) && seg_wait(cq, SEG_NWR) &&
	      bad_byte(mem[1], SEG_LEN, 11) < 0,
	      "seg-av: %d WRITEs complete, every byte in place", SEG_NWR);
	t1 = hw_counter(dev, "tx_too_big");
	CHECK(t0 >= 0 && t1 == t0,
	      "seg-av: no packet too big for mtu %d (tx_too_big +%ld)", m0,
	      t0 >= 0 ? t1 - t0 : -1);
	CHECK(!ibv_destroy_qp(qa) && !ibv_destroy_qp(qb),
	      "seg-av: destroy the pair");
	qa = qb = NULL;

	/* IPv6 at RTR, IPv4 at SQD -> SQD: fits, accepted */
	qa = make_qp(pd, cq, NULL, IBV_QPT_RC, cap);
	qb = make_qp(pd, cq, NULL, IBV_QPT_RC, cap);
	CHECK(qa && qb && !to_init(qa, IBV_ACCESS_REMOTE_WRITE) &&
	      !to_init(qb, IBV_ACCESS_REMOTE_WRITE) &&
	      !rtr_at(qa, qb->qp_num, 300, &g6, gi6) &&
	      !rtr_at(qb, qa->qp_num, 400, &g6, gi6) &&
	      !rc_to_rts(qa, 400) && !rc_to_rts(qb, 300),
	      "seg-av: loopback RC pair in RTS over IPv6");
	if (!qa || !qb)
		goto out;
	s = seg_size(qa);
	CHECK(s >= 256 && s <= m0 - 116,
	      "seg-av: seg_size %d fits mtu %d over IPv6", s, m0);
	CHECK(!to_state(qa, IBV_QPS_SQD) && !to_state(qb, IBV_QPS_SQD),
	      "seg-av: RTS -> SQD");
	ra = sqd_av(qa, &gid, gid_index);
	rb = sqd_av(qb, &gid, gid_index);
	CHECK(!ra && !rb, "seg-av: SQD -> SQD to an IPv4 AV accepted (%s, %s)",
	      strerror(ra), strerror(rb));
	CHECK(qp_at(qa, IBV_QPS_SQD, &gid) && qp_at(qb, IBV_QPS_SQD, &gid),
	      "seg-av: both in SQD with the IPv4 AV");
	CHECK(!to_state(qa, IBV_QPS_RTS) && !to_state(qb, IBV_QPS_RTS),
	      "seg-av: SQD -> RTS");
	t0 = hw_counter(dev, "tx_too_big");
	memset(mem[1], 0, SEG_LEN);
	CHECK(seg_writes(qa, mr, mem, SEG_NWR) && seg_wait(cq, SEG_NWR) &&
	      bad_byte(mem[1], SEG_LEN, 11) < 0,
	      "seg-av: %d WRITEs over IPv4 complete, every byte in place",
	      SEG_NWR);
	t1 = hw_counter(dev, "tx_too_big");
	s2 = seg_size(qa);
	CHECK(s2 == s && t0 >= 0 && t1 == t0,
	      "seg-av: seg_size stays %d (got %d), tx_too_big +%ld", s, s2,
	      t0 >= 0 ? t1 - t0 : -1);
out:
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	put_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "mrc0";
	struct ibv_device **list;
	struct ibv_pd *pd;
	int i, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	CHECK(ctx, "open %s", name);
	if (!ctx)
		return 1;
	CHECK(!ibv_query_device(ctx, &dattr), "query_device");
	/* Async events are read with a timeout (poll()). */
	CHECK(fcntl(ctx->async_fd, F_SETFL,
		    fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK) == 0,
	      "async fd non-blocking");
	find_ipv4_gid();
	CHECK(gid_index >= 0, "IPv4 GID at index %d", gid_index);

	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	if (!pd)
		return 1;

	test_mr(pd);
	test_cq();
	if (gid_index >= 0) {
		test_qp(pd);
		test_ah_ud(pd);
	}
	test_srq(pd);
	test_uc(pd);
	if (gid_index >= 0) {
		test_flush_in_err(pd);
		test_cq_overflow(pd);
		test_srq_limit(pd);
		test_seg_size_fixed(pd);
		test_seg_size_new_av(pd);
	}

	CHECK(!ibv_dealloc_pd(pd), "dealloc_pd");
	ibv_close_device(ctx);
	ibv_free_device_list(list);

	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
