// SPDX-License-Identifier: GPL-2.0
/*
 * badinput: abuse metaroce's uverbs interface. Through libibverbs where it
 * passes things on, and through raw uverbs write() commands on the
 * context's cmd_fd where libibverbs or the provider would refuse first:
 * absurd CQ/QP/SRQ sizes, bad handles, bad modify_qp transitions and
 * attributes, bad MR registrations, double deregistration, destroying a
 * CQ in use, work requests through the write path, mmap with wrong
 * offsets and sizes, and garbage written straight into the mmap'd send
 * queue followed by a doorbell, and producer indices of the mmap'd SQ,
 * RQ and SRQ beyond the ring or chased by a second thread, and a UD
 * receive WQE rewritten with too many SGEs, and a full SQ flushed by a QP
 * in ERR without a key lookup per SGE ("ring cases"). Every case
 * must end in an error code, an error completion or the QP/SRQ in ERR
 * with its async event; the process must be able to go
 * on (a loopback RC transfer is done at the end to prove it).
 *
 *   cc -o badinput badinput.c -libverbs -lpthread
 *   RDMAV_DRIVERS=.../build/provider/libmetaroce ./badinput [DEV [WHAT]]
 *
 * WHAT: all (default), base (everything but the ring cases), ring (the
 * ring cases), or one ring case by name (see ring_cases[]).
 *
 * Prints "ok"/"FAIL" per check; exits non-zero if any check failed. The
 * kernel side (no WARN/Oops, nothing leaked in `rdma res`) is checked by
 * selftests/lab/badinput.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/metaroce-abi.h>

#include "common.h"

/* A verb returning an object must fail (NULL). */
#define CHECK_NULL(obj, ...) do {					\
	int __e = errno;						\
	CHECK(!(obj), __VA_ARGS__);					\
	if (obj)							\
		printf("      (unexpectedly succeeded)\n");		\
	else								\
		printf("      -> %s\n", strerror(__e));			\
} while (0)

static struct ibv_device_attr dattr;

/* ------------------------------------------------------ raw uverbs */

/*
 * One legacy write() command: header, @cmd (whose first u64 must be the
 * response pointer when @resp), @extra bytes of driver input after it.
 * Returns 0 or -errno.
 */
static int raw_cmd(uint32_t command, void *cmd, size_t len, void *resp,
		   size_t resp_len)
{
	uint8_t buf[4096];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	ssize_t n;

	if (sizeof(*h) + len > sizeof(buf))
		return -E2BIG;
	h->command = command;
	h->in_words = (sizeof(*h) + len) / 4;
	h->out_words = resp_len / 4;
	memcpy(buf + sizeof(*h), cmd, len);
	if (resp)
		memcpy(buf + sizeof(*h), &(uint64_t){ (uintptr_t)resp }, 8);
	n = write(ctx->cmd_fd, buf, sizeof(*h) + len);
	if (n < 0)
		return -errno;
	return n == (ssize_t)(sizeof(*h) + len) ? 0 : -EIO;
}

struct raw_qp {
	uint32_t handle, qpn;
	struct metaroce_create_qp_resp mi;
};

static int raw_create_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			 uint32_t swr, uint32_t rwr, uint32_t ssge,
			 uint32_t rsge, uint32_t inl, uint8_t type,
			 struct raw_qp *out)
{
	struct ib_uverbs_create_qp c = {
		.pd_handle = pd->handle, .send_cq_handle = cq->handle,
		.recv_cq_handle = cq->handle, .max_send_wr = swr,
		.max_recv_wr = rwr, .max_send_sge = ssge,
		.max_recv_sge = rsge, .max_inline_data = inl, .qp_type = type,
	};
	struct {
		struct ib_uverbs_create_qp_resp r;
		struct metaroce_create_qp_resp d;
	} resp = {};
	int err;

	err = raw_cmd(IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c), &resp,
		      sizeof(resp));
	if (!err && out) {
		out->handle = resp.r.qp_handle;
		out->qpn = resp.r.qpn;
		out->mi = resp.d;
	}
	return err;
}

static int raw_destroy(uint32_t command, uint32_t handle)
{
	/* destroy_{qp,cq,srq} share this layout; DEREG_MR/DEALLOC_PD too */
	struct {
		uint64_t response;
		uint32_t handle;
		uint32_t reserved;
	} c = { .handle = handle };
	uint8_t resp[16] = {};

	if (command == IB_USER_VERBS_CMD_DEREG_MR ||
	    command == IB_USER_VERBS_CMD_DEALLOC_PD) {
		struct { uint32_t handle; } d = { handle };

		return raw_cmd(command, &d, sizeof(d), NULL, 0);
	}
	return raw_cmd(command, &c, sizeof(c), resp, sizeof(resp));
}

/* POST_SEND with no WRs on @handle: the metaroce doorbell. */
static int raw_doorbell(uint32_t handle)
{
	struct ib_uverbs_post_send c = {
		.qp_handle = handle, .wqe_size = sizeof(struct ib_uverbs_send_wr),
	};
	struct ib_uverbs_post_send_resp r;

	return raw_cmd(IB_USER_VERBS_CMD_POST_SEND, &c, sizeof(c), &r,
		       sizeof(r));
}

/* ------------------------------------------------------ helpers */

/* QP access for every pair here (common.h takes RC QPs INIT -> RTR). */
#define RW_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* RTS with short retries: a test that loses its peer ends quickly. */
static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .timeout = 10, .retry_cnt = 2,
		.rnr_retry = 2, .sq_psn = 0, .max_rd_atomic = 4,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* A loopback RC pair qa <-> qb to RTS, PSNs 0, short retries. */
static int connect_pair(struct ibv_qp *qa, struct ibv_qp *qb)
{
	return to_init(qa, RW_ACCESS) || to_init(qb, RW_ACCESS) ||
	       rc_to_rtr(qa, qb->qp_num, 0) || rc_to_rtr(qb, qa->qp_num, 0) ||
	       to_rts(qa) || to_rts(qb);
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * The mapping of this process backed by cmd_fd whose queue header has
 * slot_size @slot and which was not in @skip: found through
 * /proc/self/maps (the provider keeps its ring addresses private).
 * *@pgoff is the mapping's file offset in bytes, as mmap(2) takes it.
 */
static struct metaroce_queue *find_ring(uint32_t slot, uintptr_t skip,
					unsigned long *pgoff, size_t *len)
{
	char path[64], target[256], line[512];
	struct metaroce_queue *found = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", ctx->cmd_fd);
	memset(target, 0, sizeof(target));
	if (readlink(path, target, sizeof(target) - 1) < 0)
		return NULL;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		char perm[8], name[256] = "";

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %255s", &lo, &hi, perm,
			   &off, name) < 4)
			continue;
		if (strcmp(name, target) || lo == skip)
			continue;
		if (((struct metaroce_queue *)lo)->slot_size == slot) {
			found = (void *)lo;
			*pgoff = off;
			*len = hi - lo;
		}
	}
	fclose(f);
	return found;
}

/* ------------------------------------------------------ tests */

static void test_sizes(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
	};
	struct ibv_srq_init_attr sa = {};
	struct ib_uverbs_create_cq ccq = {};
	struct ib_uverbs_create_srq csrq = { .pd_handle = pd->handle };
	uint8_t resp[256];
	struct ibv_qp *qp;
	struct ibv_cq *c;
	struct ibv_srq *s;
	static const struct { uint32_t swr, rwr, ssge, rsge, inl; } qcap[] = {
		{ 0xffffffff, 1, 1, 1, 0 }, { 1, 0xffffffff, 1, 1, 0 },
		{ 1, 1, 0xffffffff, 1, 0 }, { 1, 1, 1, 0xffffffff, 0 },
		{ 1, 1, 1, 1, 0xffffffff }, { 1 << 20, 1, 1, 1, 0 },
		{ 1, 1, 33, 1, 0 }, { 1, 1, 1, 33, 0 }, { 1, 1, 1, 1, 257 },
		{ 16384, 16384, 32, 32, 256 },	/* at the limits: may pass */
	};
	unsigned int i;
	int err;

	c = ibv_create_cq(ctx, 0x7fffffff, NULL, NULL, 0);
	CHECK_NULL(c, "create_cq 2^31-1 entries fails");
	c = ibv_create_cq(ctx, 1, NULL, NULL, 12345);
	CHECK_NULL(c, "create_cq comp_vector 12345 fails");

	ccq.cqe = 0xffffffff;
	err = raw_cmd(IB_USER_VERBS_CMD_CREATE_CQ, &ccq, sizeof(ccq), resp,
		      sizeof(struct ib_uverbs_create_cq_resp) +
		      sizeof(struct metaroce_create_cq_resp));
	CHECK(err < 0, "raw create_cq cqe 0xffffffff -> %s", strerror(-err));
	ccq.cqe = 16;
	err = raw_cmd(IB_USER_VERBS_CMD_CREATE_CQ, &ccq, sizeof(ccq), resp,
		      sizeof(struct ib_uverbs_create_cq_resp));
	CHECK(err < 0, "raw create_cq, no room for the driver response -> %s",
	      strerror(-err));
	if (!err) {	/* it was created after all: do not leak it */
		raw_destroy(IB_USER_VERBS_CMD_DESTROY_CQ,
			    ((struct ib_uverbs_create_cq_resp *)resp)->cq_handle);
	}

	for (i = 0; i < sizeof(qcap) / sizeof(qcap[0]); i++) {
		bool limit = i == sizeof(qcap) / sizeof(qcap[0]) - 1;
		struct raw_qp rq;

		ia.cap.max_send_wr = qcap[i].swr;
		ia.cap.max_recv_wr = qcap[i].rwr;
		ia.cap.max_send_sge = qcap[i].ssge;
		ia.cap.max_recv_sge = qcap[i].rsge;
		ia.cap.max_inline_data = qcap[i].inl;
		qp = ibv_create_qp(pd, &ia);
		if (limit) {
			CHECK(1, "create_qp at the limits: %s",
			      qp ? "created" : strerror(errno));
		} else {
			CHECK_NULL(qp, "create_qp wr %u/%u sge %u/%u inline %u fails",
				   qcap[i].swr, qcap[i].rwr, qcap[i].ssge,
				   qcap[i].rsge, qcap[i].inl);
		}
		put_qp(qp);
		err = raw_create_qp(pd, cq, qcap[i].swr, qcap[i].rwr,
				    qcap[i].ssge, qcap[i].rsge, qcap[i].inl,
				    IB_UVERBS_QPT_RC, &rq);
		if (limit) {
			CHECK(1, "raw create_qp at the limits: %s",
			      err ? strerror(-err) : "created");
		} else {
			CHECK(err < 0, "raw create_qp wr %u/%u sge %u/%u inline %u -> %s",
			      qcap[i].swr, qcap[i].rwr, qcap[i].ssge,
			      qcap[i].rsge, qcap[i].inl, strerror(-err));
		}
		if (!err)
			raw_destroy(IB_USER_VERBS_CMD_DESTROY_QP, rq.handle);
	}
	err = raw_create_qp(pd, cq, 4, 4, 1, 1, 0, 99, NULL);
	CHECK(err < 0, "raw create_qp type 99 -> %s", strerror(-err));
	{
		struct raw_qp uc;

		/* UC is a transport of ours: the raw command creates one */
		err = raw_create_qp(pd, cq, 4, 4, 1, 1, 0, IB_UVERBS_QPT_UC,
				    &uc);
		CHECK(!err, "raw create_qp UC: %s",
		      err ? strerror(-err) : "created");
		if (!err)
			CHECK(!raw_destroy(IB_USER_VERBS_CMD_DESTROY_QP,
					   uc.handle), "raw destroy_qp UC");
	}
	{
		struct ib_uverbs_create_qp c = {
			.pd_handle = pd->handle, .send_cq_handle = 0xdead,
			.recv_cq_handle = cq->handle, .max_send_wr = 4,
			.max_recv_wr = 4, .max_send_sge = 1,
			.max_recv_sge = 1, .qp_type = IB_UVERBS_QPT_RC,
		};

		err = raw_cmd(IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c), resp,
			      sizeof(resp));
		CHECK(err < 0, "raw create_qp with a bogus CQ handle -> %s",
		      strerror(-err));
		c.send_cq_handle = cq->handle;
		c.pd_handle = 0xbeef;
		err = raw_cmd(IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c), resp,
			      sizeof(resp));
		CHECK(err < 0, "raw create_qp with a bogus PD handle -> %s",
		      strerror(-err));
		c.pd_handle = pd->handle;
		c.is_srq = 1;
		c.srq_handle = 0x7777;
		err = raw_cmd(IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c), resp,
			      sizeof(resp));
		CHECK(err < 0, "raw create_qp with a bogus SRQ handle -> %s",
		      strerror(-err));
	}

	sa.attr.max_wr = 0x7fffffff;
	sa.attr.max_sge = 1;
	s = ibv_create_srq(pd, &sa);
	CHECK_NULL(s, "create_srq max_wr 2^31-1 fails");
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1000;
	s = ibv_create_srq(pd, &sa);
	CHECK_NULL(s, "create_srq max_sge 1000 fails");
	sa.attr.max_sge = 1;
	sa.attr.srq_limit = 100;
	s = ibv_create_srq(pd, &sa);
	CHECK(!s || s, "create_srq srq_limit > max_wr: %s",
	      s ? "created" : strerror(errno));
	if (s)
		ibv_destroy_srq(s);
	for (i = 0; i < 3; i++) {
		csrq.max_wr = i == 0 ? 0xffffffff : 16;
		csrq.max_sge = i == 1 ? 0xffffffff : 1;
		csrq.srq_limit = i == 2 ? 0xffffffff : 0;
		err = raw_cmd(IB_USER_VERBS_CMD_CREATE_SRQ, &csrq,
			      sizeof(csrq), resp,
			      sizeof(struct ib_uverbs_create_srq_resp) +
			      sizeof(struct metaroce_create_srq_resp));
		if (i < 2) {
			CHECK(err < 0, "raw create_srq max_wr 0x%x max_sge 0x%x -> %s",
			      csrq.max_wr, csrq.max_sge, strerror(-err));
		} else {
			CHECK(1, "raw create_srq srq_limit 0xffffffff: %s",
			      err ? strerror(-err) : "created");
		}
		if (!err)
			raw_destroy(IB_USER_VERBS_CMD_DESTROY_SRQ,
				    ((struct ib_uverbs_create_srq_resp *)resp)->srq_handle);
	}
}

static void test_handles(void)
{
	static const uint32_t h[] = { 0, 0xdead, 0x7fffffff, 0xffffffff };
	unsigned int i;
	int err;

	for (i = 0; i < sizeof(h) / sizeof(h[0]); i++) {
		err = raw_destroy(IB_USER_VERBS_CMD_DESTROY_CQ, h[i] + 1000);
		CHECK(err < 0, "raw destroy_cq handle 0x%x -> %s", h[i] + 1000,
		      strerror(-err));
		err = raw_destroy(IB_USER_VERBS_CMD_DESTROY_QP, h[i] + 1000);
		CHECK(err < 0, "raw destroy_qp handle 0x%x -> %s", h[i] + 1000,
		      strerror(-err));
		err = raw_destroy(IB_USER_VERBS_CMD_DESTROY_SRQ, h[i] + 1000);
		CHECK(err < 0, "raw destroy_srq handle 0x%x -> %s",
		      h[i] + 1000, strerror(-err));
		err = raw_destroy(IB_USER_VERBS_CMD_DEREG_MR, h[i] + 1000);
		CHECK(err < 0, "raw dereg_mr handle 0x%x -> %s", h[i] + 1000,
		      strerror(-err));
		err = raw_doorbell(h[i] + 1000);
		CHECK(err < 0, "raw doorbell on QP handle 0x%x -> %s",
		      h[i] + 1000, strerror(-err));
	}
}

static void test_mr(struct ibv_pd *pd)
{
	static char buf[1 << 16] __attribute__((aligned(4096)));
	struct ib_uverbs_reg_mr c = { .pd_handle = pd->handle };
	struct ib_uverbs_reg_mr_resp r;
	struct ibv_mr *mr;
	uint32_t handle;
	int err;

	mr = ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE);
	CHECK(1, "reg_mr length 0: %s", mr ? "registered" : strerror(errno));
	put_mr(mr);
	mr = ibv_reg_mr(pd, buf, 1ULL << 41, IBV_ACCESS_LOCAL_WRITE);
	CHECK_NULL(mr, "reg_mr 2 TiB (beyond max_mr_size, unmapped) fails");
	mr = ibv_reg_mr(pd, buf + 1, 4095, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "reg_mr unaligned start +1, 4095 bytes works");
	put_mr(mr);
	mr = ibv_reg_mr(pd, (void *)(uintptr_t)0xfffffffffffff000ULL, 8192,
			IBV_ACCESS_LOCAL_WRITE);
	CHECK_NULL(mr, "reg_mr at the top of the address space fails");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), 0x7fff0000);
	CHECK_NULL(mr, "reg_mr with unknown access bits 0x7fff0000 fails");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_MW_BIND |
			IBV_ACCESS_LOCAL_WRITE);
	CHECK(1, "reg_mr MW_BIND: %s", mr ? "registered" : strerror(errno));
	put_mr(mr);

	/* raw: hca_va wrapping, huge lengths, garbage access */
	c.start = (uintptr_t)buf;
	c.length = sizeof(buf);
	c.hca_va = 0xfffffffffffff000ULL;
	c.access_flags = IB_UVERBS_ACCESS_LOCAL_WRITE;
	err = raw_cmd(IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), &r, sizeof(r));
	CHECK(1, "raw reg_mr iova wrapping 2^64: %s",
	      err ? strerror(-err) : "registered");
	if (!err)
		raw_destroy(IB_USER_VERBS_CMD_DEREG_MR, r.mr_handle);
	c.hca_va = c.start;
	c.length = 0xffffffffffff0000ULL;
	err = raw_cmd(IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), &r, sizeof(r));
	CHECK(err < 0, "raw reg_mr length 2^64-64K -> %s", strerror(-err));
	if (!err)
		raw_destroy(IB_USER_VERBS_CMD_DEREG_MR, r.mr_handle);
	c.length = sizeof(buf);
	c.access_flags = 0xffffffff;
	err = raw_cmd(IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), &r, sizeof(r));
	CHECK(err < 0, "raw reg_mr access 0xffffffff -> %s", strerror(-err));
	if (!err)
		raw_destroy(IB_USER_VERBS_CMD_DEREG_MR, r.mr_handle);

	/* dereg twice: the second time by the stale handle */
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "reg_mr 64 KiB");
	if (!mr)
		return;
	handle = mr->handle;
	CHECK(!ibv_dereg_mr(mr), "dereg_mr");
	err = raw_destroy(IB_USER_VERBS_CMD_DEREG_MR, handle);
	CHECK(err < 0, "dereg_mr again (stale handle) -> %s", strerror(-err));
}

static void test_modify(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_attr a;
	struct ibv_qp *qp = rc_qp(pd, cq);
	int err;

	CHECK(qp, "create RC QP for modify tests");
	if (!qp)
		return;

#define BADMOD(desc, mask, ...) do {					\
	memset(&a, 0, sizeof(a));					\
	__VA_ARGS__;							\
	err = ibv_modify_qp(qp, &a, (mask));				\
	CHECK(err, "modify_qp %s -> %s", desc,				\
	      err ? strerror(err) : "accepted");			\
} while (0)

	BADMOD("RESET -> RTS", IBV_QP_STATE, a.qp_state = IBV_QPS_RTS);
	BADMOD("RESET -> RTR", IBV_QP_STATE, a.qp_state = IBV_QPS_RTR);
	BADMOD("RESET -> SQD", IBV_QP_STATE, a.qp_state = IBV_QPS_SQD);
	BADMOD("state 99", IBV_QP_STATE, a.qp_state = 99);
	BADMOD("INIT with port 7", IBV_QP_STATE | IBV_QP_PORT |
	       IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS,
	       a.qp_state = IBV_QPS_INIT; a.port_num = 7);
	BADMOD("INIT with pkey_index 1000", IBV_QP_STATE | IBV_QP_PORT |
	       IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS,
	       a.qp_state = IBV_QPS_INIT; a.port_num = 1;
	       a.pkey_index = 1000);
	BADMOD("INIT without required attributes", IBV_QP_STATE,
	       a.qp_state = IBV_QPS_INIT);
	BADMOD("cur_state lie (INIT claimed, QP in RESET)",
	       IBV_QP_STATE | IBV_QP_CUR_STATE, a.qp_state = IBV_QPS_RTR;
	       a.cur_qp_state = IBV_QPS_INIT);
	CHECK(qp_state(qp) == IBV_QPS_RESET, "QP still in RESET");
	CHECK(!to_init(qp, RW_ACCESS), "RESET -> INIT");
	BADMOD("INIT -> RTS", IBV_QP_STATE, a.qp_state = IBV_QPS_RTS);
	BADMOD("RTR without AV/dest_qpn", IBV_QP_STATE,
	       a.qp_state = IBV_QPS_RTR);
	BADMOD("RTR path_mtu 9", IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
	       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
	       IBV_QP_MIN_RNR_TIMER,
	       a.qp_state = IBV_QPS_RTR; a.path_mtu = 9; a.dest_qp_num = 5;
	       a.ah_attr.is_global = 1; a.ah_attr.port_num = 1;
	       a.ah_attr.grh.dgid = gid; a.ah_attr.grh.sgid_index = gid_index);
	BADMOD("RTR sgid_index 200", IBV_QP_STATE | IBV_QP_AV |
	       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	       a.qp_state = IBV_QPS_RTR; a.path_mtu = IBV_MTU_1024;
	       a.dest_qp_num = 5; a.ah_attr.is_global = 1;
	       a.ah_attr.port_num = 1; a.ah_attr.grh.dgid = gid;
	       a.ah_attr.grh.sgid_index = 200);
	BADMOD("RTR without GRH (RoCE needs one)", IBV_QP_STATE | IBV_QP_AV |
	       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	       a.qp_state = IBV_QPS_RTR; a.path_mtu = IBV_MTU_1024;
	       a.dest_qp_num = 5; a.ah_attr.port_num = 1);
	BADMOD("RTR max_dest_rd_atomic 255", IBV_QP_STATE | IBV_QP_AV |
	       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	       a.qp_state = IBV_QPS_RTR; a.path_mtu = IBV_MTU_1024;
	       a.dest_qp_num = 5; a.max_dest_rd_atomic = 255;
	       a.ah_attr.is_global = 1; a.ah_attr.port_num = 1;
	       a.ah_attr.grh.dgid = gid; a.ah_attr.grh.sgid_index = gid_index);
	CHECK(qp_state(qp) == IBV_QPS_INIT, "QP still in INIT");
	CHECK(!rc_to_rtr(qp, qp->qp_num, 0), "INIT -> RTR (to itself)");
	BADMOD("RTS max_rd_atomic 255", IBV_QP_STATE | IBV_QP_TIMEOUT |
	       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
	       IBV_QP_MAX_QP_RD_ATOMIC, a.qp_state = IBV_QPS_RTS;
	       a.max_rd_atomic = 255; a.retry_cnt = 7);
	BADMOD("RTS retry_cnt 8", IBV_QP_STATE | IBV_QP_TIMEOUT |
	       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
	       IBV_QP_MAX_QP_RD_ATOMIC, a.qp_state = IBV_QPS_RTS;
	       a.retry_cnt = 8);
	BADMOD("RTS timeout 40", IBV_QP_STATE | IBV_QP_TIMEOUT |
	       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
	       IBV_QP_MAX_QP_RD_ATOMIC, a.qp_state = IBV_QPS_RTS;
	       a.timeout = 40);
	CHECK(qp_state(qp) == IBV_QPS_RTR, "QP still in RTR");
	BADMOD("RTR -> INIT", IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX |
	       IBV_QP_ACCESS_FLAGS, a.qp_state = IBV_QPS_INIT;
	       a.port_num = 1);
	CHECK(!to_rts(qp), "RTR -> RTS");
	BADMOD("RTS: change dest_qpn (not modifiable)",
	       IBV_QP_STATE | IBV_QP_DEST_QPN, a.qp_state = IBV_QPS_RTS;
	       a.dest_qp_num = 0x123);
	BADMOD("RTS -> RTR", IBV_QP_STATE, a.qp_state = IBV_QPS_RTR);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "RTS -> ERR");
	BADMOD("ERR -> RTS", IBV_QP_STATE, a.qp_state = IBV_QPS_RTS);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "ERR -> RESET");
	CHECK(!ibv_destroy_qp(qp), "destroy QP");
#undef BADMOD
}

static void test_cq_in_use(struct ibv_pd *pd)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp;
	int err;

	CHECK(cq, "create CQ");
	if (!cq)
		return;
	qp = rc_qp(pd, cq);
	CHECK(qp, "create QP on it");
	err = ibv_destroy_cq(cq);
	CHECK(err, "destroy_cq of a CQ in use -> %s",
	      err ? strerror(err) : "destroyed!");
	if (!err)
		return;	/* cq is gone: leave the QP to close_device */
	if (qp)
		CHECK(!ibv_destroy_qp(qp), "destroy the QP");
	CHECK(!ibv_destroy_cq(cq), "then destroy_cq works");
}

static void test_post(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_mr *mr)
{
	struct ibv_qp *qp = rc_qp(pd, cq);
	struct ibv_sge sge[40];
	struct ibv_send_wr wr = { .sg_list = sge, .num_sge = 40,
				  .opcode = IBV_WR_SEND }, *bad;
	struct {
		struct ib_uverbs_post_send c;
		struct ib_uverbs_send_wr w;
		struct ib_uverbs_sge s[4];
	} ps = {};
	struct ib_uverbs_post_send_resp r;
	int i, err;

	CHECK(qp, "create QP for post tests");
	if (!qp)
		return;
	for (i = 0; i < 40; i++) {
		sge[i].addr = (uintptr_t)mr->addr;
		sge[i].length = 8;
		sge[i].lkey = mr->lkey;
	}
	err = ibv_post_send(qp, &wr, &bad);
	CHECK(err, "post_send in RESET -> %s", err ? strerror(err) : "posted");
	to_init(qp, RW_ACCESS);
	rc_to_rtr(qp, qp->qp_num, 0);
	to_rts(qp);
	err = ibv_post_send(qp, &wr, &bad);
	CHECK(err, "post_send num_sge 40 > max -> %s",
	      err ? strerror(err) : "posted");
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_INLINE;
	sge[0].length = 100000;
	err = ibv_post_send(qp, &wr, &bad);
	CHECK(err, "post_send inline 100000 bytes -> %s",
	      err ? strerror(err) : "posted");
	wr.opcode = 99;
	wr.send_flags = 0;
	sge[0].length = 8;
	err = ibv_post_send(qp, &wr, &bad);
	CHECK(err, "post_send opcode 99 -> %s", err ? strerror(err) : "posted");

	/* work requests through the write path: the kernel must refuse */
	ps.c.qp_handle = qp->handle;
	ps.c.wr_count = 1;
	ps.c.sge_count = 4;
	ps.c.wqe_size = sizeof(ps.w);
	ps.w.num_sge = 4;
	ps.w.opcode = IB_UVERBS_WR_SEND;
	for (i = 0; i < 4; i++) {
		ps.s[i].addr = (uintptr_t)mr->addr;
		ps.s[i].length = 8;
		ps.s[i].lkey = mr->lkey;
	}
	err = raw_cmd(IB_USER_VERBS_CMD_POST_SEND, &ps, sizeof(ps), &r,
		      sizeof(r));
	CHECK(err < 0, "raw post_send with a WR on a user QP -> %s",
	      strerror(-err));
	ps.c.sge_count = 0xffffffff;
	ps.w.num_sge = 0xffffffff;
	err = raw_cmd(IB_USER_VERBS_CMD_POST_SEND, &ps, sizeof(ps), &r,
		      sizeof(r));
	CHECK(err < 0, "raw post_send sge_count 0xffffffff -> %s",
	      strerror(-err));
	ps.c.sge_count = 0;
	ps.w.num_sge = 0;
	ps.c.wr_count = 0x10000000;
	err = raw_cmd(IB_USER_VERBS_CMD_POST_SEND, &ps, sizeof(ps), &r,
		      sizeof(r));
	CHECK(err < 0, "raw post_send wr_count 2^28 -> %s", strerror(-err));
	ps.c.wr_count = 1;
	ps.c.wqe_size = 3;
	err = raw_cmd(IB_USER_VERBS_CMD_POST_SEND, &ps, sizeof(ps), &r,
		      sizeof(r));
	CHECK(err < 0, "raw post_send wqe_size 3 -> %s", strerror(-err));
	CHECK(!ibv_destroy_qp(qp), "destroy QP");
}

/*
 * Garbage in the mmap'd send queue of an RTS QP (connected to a second
 * QP on this device), then a doorbell: every case must end in an error
 * completion or the QP in ERR, never a success and never a crash.
 */
enum garbage { G_NUM_SGE, G_INLINE, G_OPCODE, G_LKEY, G_RANDOM, G_PROD,
	       G_SGE_LEN, G_READ_INLINE, G_MAX };
static const char *const gname[G_MAX] = {
	"num_sge 0xffffffff", "inline_len 0xffffffff", "opcode 99",
	"lkey 0xdeadbeef", "random slot bytes", "producer index +2^31",
	"sge length 0xffffffff (x2: message > 2 GiB)", "inline READ",
};

static void test_sq_garbage(struct ibv_pd *pd, struct ibv_mr *mr, int g)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qa, *qb;
	struct metaroce_queue *q, *rq;
	struct metaroce_send_wqe *w;
	struct ibv_wc wc;
	unsigned long pgoff;
	size_t len, rlen;
	uint32_t prod, slot;
	int n_err = 0, n_ok = 0, t, err, i;
	void *m;

	if (!cq)
		return;
	qb = rc_qp(pd, cq);
	/* the SQ slot size of rc_qp(): header + 2 SGEs, 16-aligned */
	slot = (sizeof(struct metaroce_send_wqe) +
		2 * sizeof(struct metaroce_sge) + 15) & ~15U;
	rq = qb ? find_ring(slot, 0, &pgoff, &rlen) : NULL;
	qa = rc_qp(pd, cq);
	q = qa ? find_ring(slot, (uintptr_t)rq, &pgoff, &len) : NULL;
	if (!qa || !qb || !q || q == rq) {
		CHECK(0, "garbage %s: set-up (QPs %p %p, ring %p)", gname[g],
		      (void *)qa, (void *)qb, (void *)q);
		goto out;
	}
	if (g == 0) {
		/* mmap with wrong offsets / sizes on the QP's SQ entry */
		m = mmap(NULL, len + 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ctx->cmd_fd, pgoff);
		CHECK(m == MAP_FAILED, "mmap SQ with size + 4096 fails");
		if (m != MAP_FAILED)
			munmap(m, len + 4096);
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ctx->cmd_fd, pgoff);
		CHECK(m == MAP_FAILED, "mmap SQ header page only fails");
		if (m != MAP_FAILED)
			munmap(m, 4096);
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ctx->cmd_fd, pgoff + 4096);
		CHECK(m == MAP_FAILED, "mmap SQ at offset + 4096 fails");
		if (m != MAP_FAILED)
			munmap(m, len);
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ctx->cmd_fd, 0x7ff0000000ULL);
		CHECK(m == MAP_FAILED, "mmap at an offset never handed out fails");
		if (m != MAP_FAILED)
			munmap(m, len);
		m = mmap(NULL, len - 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ctx->cmd_fd, pgoff);
		CHECK(m == MAP_FAILED, "mmap SQ with size - 4096 fails");
		if (m != MAP_FAILED)
			munmap(m, len - 4096);
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ctx->cmd_fd, pgoff + 1);
		CHECK(m == MAP_FAILED, "mmap SQ at an unaligned offset fails");
		if (m != MAP_FAILED)
			munmap(m, len);
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			 ctx->cmd_fd, pgoff);
		CHECK(1, "mmap SQ MAP_PRIVATE: %s",
		      m == MAP_FAILED ? strerror(errno) : "mapped");
		if (m != MAP_FAILED)
			munmap(m, len);
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ctx->cmd_fd, pgoff);
		CHECK(m != MAP_FAILED, "mmap SQ again, exact offset and size");
		if (m != MAP_FAILED)
			munmap(m, len);
	}
	if (connect_pair(qa, qb)) {
		CHECK(0, "garbage %s: QPs to RTS", gname[g]);
		goto out;
	}

	prod = q->producer;
	w = (void *)((uint8_t *)q + METAROCE_QUEUE_HDR_SIZE +
		     (size_t)(prod & (q->num_slots - 1)) * q->slot_size);
	memset(w, 0, q->slot_size);
	w->wr_id = 0xbad0 + g;
	w->opcode = IBV_WR_SEND;
	w->send_flags = IBV_SEND_SIGNALED;
	w->num_sge = 1;
	w->sge[0].addr = (uintptr_t)mr->addr;
	w->sge[0].length = 8;
	w->sge[0].lkey = mr->lkey;
	switch (g) {
	case G_NUM_SGE:
		w->num_sge = 0xffffffff;
		break;
	case G_INLINE:
		w->send_flags |= IBV_SEND_INLINE;
		w->inline_len = 0xffffffff;
		break;
	case G_OPCODE:
		w->opcode = 99;
		break;
	case G_LKEY:
		w->sge[0].lkey = 0xdeadbeef;
		break;
	case G_RANDOM:
		srand(42);
		for (i = 0; i < (int)q->slot_size; i++)
			((uint8_t *)w)[i] = rand();
		w->send_flags |= IBV_SEND_SIGNALED;
		break;
	case G_SGE_LEN:
		w->num_sge = 2;
		w->sge[0].length = 0xffffffff;
		w->sge[1] = w->sge[0];
		break;
	case G_READ_INLINE:
		w->opcode = IBV_WR_RDMA_READ;
		w->send_flags |= IBV_SEND_INLINE;
		w->inline_len = 8;
		break;
	}
	__atomic_store_n(&q->producer,
			 g == G_PROD ? prod + 0x80000000U : prod + 1,
			 __ATOMIC_RELEASE);
	err = raw_doorbell(qa->handle);
	/* the doorbell itself may succeed: the error is asynchronous */
	for (t = 0; t < 300 && !n_err && !n_ok; t++) {
		while (ibv_poll_cq(cq, 1, &wc) > 0) {
			if (wc.qp_num != qa->qp_num)
				continue;
			if (wc.status == IBV_WC_SUCCESS)
				n_ok++;
			else
				n_err++;
			printf("      wc wr_id 0x%llx status %s opcode %d\n",
			       (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status), wc.opcode);
		}
		if (qp_state(qa) == IBV_QPS_ERR && t > 20)
			break;
		sleep_ms(10);
	}
	CHECK(!n_ok && (n_err || qp_state(qa) == IBV_QPS_ERR || err),
	      "SQ garbage %s + doorbell: %d error completions, QP %s, doorbell %s",
	      gname[g], n_err, qp_state(qa) == IBV_QPS_ERR ? "ERR" : "alive",
	      err ? strerror(-err) : "ok");
	/* a second doorbell on the broken ring must be harmless too */
	raw_doorbell(qa->handle);
out:
	if (qa)
		CHECK(!ibv_destroy_qp(qa), "garbage %s: destroy QP", gname[g]);
	put_qp(qb);
	ibv_destroy_cq(cq);
}

/* ------------------------------------------------------ ring abuse */

/*
 * Issue 10, item 3: a producer index written by user space into the
 * mmap'd SQ, RQ or SRQ beyond the ring's capacity (or behind what the
 * kernel consumed) must move the QP (SRQ) to ERR with IB_EVENT_QP_FATAL
 * (IB_EVENT_SRQ_ERR), and no kernel loop may spin on user-controlled
 * indices: the flush of a corrupt RQ, or of a ring whose producer a
 * second thread keeps pushing ahead, must end at once. Each case runs on
 * its own CQ and QPs (`badinput DEV CASE` runs one of them, so a lab can
 * bound each case by its own timeout).
 */

#define MAX_MAPS 256

struct maps {
	int n;
	uintptr_t lo[MAX_MAPS];
};

/* The mappings of cmd_fd in this process (the rings). */
static void cmd_maps(struct maps *m)
{
	char path[64], target[256], line[512];
	FILE *f;

	m->n = 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", ctx->cmd_fd);
	memset(target, 0, sizeof(target));
	if (readlink(path, target, sizeof(target) - 1) < 0)
		return;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && m->n < MAX_MAPS) {
		unsigned long lo, hi, off;
		char perm[8], name[256] = "";

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %255s", &lo, &hi,
			   perm, &off, name) < 5 || strcmp(name, target))
			continue;
		m->lo[m->n++] = lo;
	}
	fclose(f);
}

/* A ring mapped since @before was taken, with slot size @slot. */
static struct metaroce_queue *new_ring(const struct maps *before,
				       uint32_t slot)
{
	struct maps now;
	int i, j;

	cmd_maps(&now);
	for (i = 0; i < now.n; i++) {
		for (j = 0; j < before->n; j++)
			if (before->lo[j] == now.lo[i])
				break;
		if (j == before->n &&
		    ((struct metaroce_queue *)now.lo[i])->slot_size == slot)
			return (struct metaroce_queue *)now.lo[i];
	}
	return NULL;
}

static uint32_t ring_load(uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void ring_store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Async events read so far (per case), acked as soon as read. */
static struct {
	int n;
	enum ibv_event_type type[64];
	void *obj[64];
} evlog;

static void *ev_obj(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq;
	case IBV_EVENT_DEVICE_FATAL:
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		return NULL;
	default:
		return ev->element.qp;
	}
}

/* Read what is there (waiting up to @ms for the first one). */
static void ev_read(int ms)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	while (poll(&p, 1, ms) > 0) {
		ms = 0;
		if (ibv_get_async_event(ctx, &ev))
			break;
		printf("      async event %s (%p)\n",
		       ibv_event_type_str(ev.event_type), ev_obj(&ev));
		if (evlog.n < 64) {
			evlog.type[evlog.n] = ev.event_type;
			evlog.obj[evlog.n] = ev_obj(&ev);
			evlog.n++;
		}
		ibv_ack_async_event(&ev);
	}
}

static void ev_reset(void)
{
	ev_read(0);
	evlog.n = 0;
}

/* Was async event @type on @obj seen (waiting up to @ms)? */
static bool ev_wait(enum ibv_event_type type, void *obj, int ms)
{
	int i, t;

	for (t = 0; t <= ms; t += 10) {
		for (i = 0; i < evlog.n; i++)
			if (evlog.type[i] == type && evlog.obj[i] == obj)
				return true;
		ev_read(10);
	}
	return false;
}

/* A connected loopback RC pair on its own CQ, and the mmap'd rings. */
struct ring_pair {
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qa, *qb;		/* qa sends to qb */
	struct metaroce_queue *a_sq, *b_rq, *srq_q;
};

static uint32_t sq_slot(void)
{
	/* rc_qp(): header + 2 SGEs, 16-aligned */
	return (sizeof(struct metaroce_send_wqe) +
		2 * sizeof(struct metaroce_sge) + 15) & ~15U;
}

static uint32_t rq_slot(void)
{
	/* rc_qp() and the SRQ below: header + 1 SGE */
	return (sizeof(struct metaroce_recv_wqe) +
		sizeof(struct metaroce_sge) + 15) & ~15U;
}

static bool ring_pair_new(struct ibv_pd *pd, bool use_srq,
			  struct ring_pair *rp, const char *name)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct maps m;

	memset(rp, 0, sizeof(*rp));
	ev_reset();
	rp->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!rp->cq)
		goto fail;
	ia.send_cq = rp->cq;
	ia.recv_cq = rp->cq;
	if (use_srq) {
		cmd_maps(&m);
		rp->srq = ibv_create_srq(pd, &sa);
		rp->srq_q = rp->srq ? new_ring(&m, rq_slot()) : NULL;
		if (!rp->srq_q)
			goto fail;
	}
	cmd_maps(&m);
	rp->qa = ibv_create_qp(pd, &ia);
	rp->a_sq = rp->qa ? new_ring(&m, sq_slot()) : NULL;
	ia.srq = rp->srq;
	cmd_maps(&m);
	rp->qb = ibv_create_qp(pd, &ia);
	rp->b_rq = rp->qb && !use_srq ? new_ring(&m, rq_slot()) : NULL;
	if (!rp->a_sq || (!use_srq && !rp->b_rq))
		goto fail;
	if (connect_pair(rp->qa, rp->qb))
		goto fail;
	return true;
fail:
	CHECK(0, "%s: set-up (cq %p srq %p qa %p qb %p rings %p %p %p)",
	      name, (void *)rp->cq, (void *)rp->srq, (void *)rp->qa,
	      (void *)rp->qb, (void *)rp->a_sq, (void *)rp->b_rq,
	      (void *)rp->srq_q);
	return false;
}

/* Destroy everything, each step bounded in time and checked. */
static void ring_pair_free(struct ring_pair *rp, const char *name)
{
	double t0 = now_s();
	int err = 0;

	ev_read(0);
	if (rp->qa)
		err |= ibv_destroy_qp(rp->qa);
	if (rp->qb)
		err |= ibv_destroy_qp(rp->qb);
	if (rp->srq)
		err |= ibv_destroy_srq(rp->srq);
	if (rp->cq)
		err |= ibv_destroy_cq(rp->cq);
	CHECK(!err && now_s() - t0 < 5, "%s: QPs%s and CQ destroyed (%.2f s)",
	      name, rp->srq ? ", SRQ" : "", now_s() - t0);
}

/* Poll @cq for up to @ms; count completions of @qp by status. */
static void ring_poll(struct ibv_cq *cq, int ms, struct ibv_qp *qp,
		      int *ok, int *bad, uint64_t *bad_wr_id)
{
	struct ibv_wc wc;
	int t;

	for (t = 0; t <= ms; t += 10) {
		while (ibv_poll_cq(cq, 1, &wc) > 0) {
			if (wc.qp_num != qp->qp_num)
				continue;
			if (wc.status == IBV_WC_SUCCESS) {
				(*ok)++;
			} else {
				(*bad)++;
				if (bad_wr_id)
					*bad_wr_id = wc.wr_id;
			}
		}
		if (ms)
			sleep_ms(10);
	}
}

static int post_send_one(struct ibv_qp *qp, struct ibv_mr *mr, uint64_t id)
{
	struct ibv_sge s = { (uintptr_t)mr->addr, 64, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

enum sq_bad { SQ_OVER_ONE, SQ_OVER_HALF, SQ_BEHIND };

/*
 * The SQ producer beyond the ring (consumer + num_slots + 1, + 2^31) or
 * behind the consumer, then a doorbell: QP to ERR with QP_FATAL, and no
 * WQE completes successfully.
 */
static void ring_sq(struct ibv_pd *pd, struct ibv_mr *mr, enum sq_bad how)
{
	static const char *const nm[] = {
		"SQ producer = consumer + num_slots + 1",
		"SQ producer + 2^31", "SQ producer behind the consumer",
	};
	const char *name = nm[how];
	struct ring_pair rp;
	struct ibv_recv_wr rwr, *brw;
	struct ibv_sge rs;
	uint32_t cons;
	int ok = 0, bad = 0, ok0 = 0, bad0 = 0, err;

	if (!ring_pair_new(pd, false, &rp, name))
		goto out;
	if (how == SQ_BEHIND) {
		/* one good SEND first, so the consumer is past 0 */
		rs = (struct ibv_sge){ (uintptr_t)mr->addr + 4096, 64,
				       mr->lkey };
		rwr = (struct ibv_recv_wr){ .wr_id = 7, .sg_list = &rs,
					    .num_sge = 1 };
		if (ibv_post_recv(rp.qb, &rwr, &brw) ||
		    post_send_one(rp.qa, mr, 1))
			CHECK(0, "%s: first SEND posted", name);
		ring_poll(rp.cq, 2000, rp.qa, &ok0, &bad0, NULL);
		CHECK(ok0 == 1 && !bad0, "%s: a good SEND completes first",
		      name);
	}
	cons = ring_load(&rp.a_sq->consumer);
	switch (how) {
	case SQ_OVER_ONE:
		ring_store(&rp.a_sq->producer, cons + rp.a_sq->num_slots + 1);
		break;
	case SQ_OVER_HALF:
		ring_store(&rp.a_sq->producer, cons + 0x80000000U);
		break;
	case SQ_BEHIND:
		ring_store(&rp.a_sq->producer, cons - 1);
		break;
	}
	err = raw_doorbell(rp.qa->handle);
	CHECK(ev_wait(IBV_EVENT_QP_FATAL, rp.qa, 3000),
	      "%s + doorbell (%s): IBV_EVENT_QP_FATAL on the QP", name,
	      err ? strerror(-err) : "ok");
	ring_poll(rp.cq, 200, rp.qa, &ok, &bad, NULL);
	CHECK(qp_state(rp.qa) == IBV_QPS_ERR && !ok,
	      "%s: QP in ERR, no WQE completed successfully (%d ok, %d error)",
	      name, ok, bad);
	raw_doorbell(rp.qa->handle);	/* harmless on the broken ring */
out:
	ring_pair_free(&rp, name);
}

/*
 * The RQ producer beyond the ring, then a SEND from the peer: the
 * receiving QP goes to ERR with QP_FATAL, no completion names a WQE that
 * was never posted, and the flush of the corrupt RQ ends (today it spins
 * on -EINVAL under the transport lock: destroy then hangs).
 */
static void ring_rq_rx(struct ibv_pd *pd, struct ibv_mr *mr)
{
	const char *name = "RQ producer beyond the ring, then a SEND";
	struct ring_pair rp;
	uint64_t wr_id = 0;
	int ok = 0, bad = 0;

	if (!ring_pair_new(pd, false, &rp, name))
		goto out;
	ring_store(&rp.b_rq->producer, ring_load(&rp.b_rq->consumer) +
		   rp.b_rq->num_slots + 1);
	CHECK(!post_send_one(rp.qa, mr, 1), "%s: SEND posted", name);
	CHECK(ev_wait(IBV_EVENT_QP_FATAL, rp.qb, 3000),
	      "%s: IBV_EVENT_QP_FATAL on the receiver", name);
	ring_poll(rp.cq, 300, rp.qb, &ok, &bad, &wr_id);
	CHECK(qp_state(rp.qb) == IBV_QPS_ERR && !ok && !bad,
	      "%s: receiver in ERR, no receive completion (%d ok, %d error, last wr_id 0x%llx)",
	      name, ok, bad, (unsigned long long)wr_id);
out:
	ring_pair_free(&rp, name);
}

/*
 * A UD receive WQE whose num_sge exceeds the QP's max_recv_sge (rewritten
 * in the mmap'd RQ after a good post), then a loopback datagram to it: the
 * WQE completes with IBV_WC_LOC_QP_OP_ERR and its wr_id, as the same WQE
 * does on an RC QP -- never consumed without a completion.
 */
static void ring_ud_rq_sge(struct ibv_pd *pd, struct ibv_mr *mr)
{
	const char *name = "UD receive WQE with num_sge > max_recv_sge";
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	char *buf = mr->addr;
	struct ibv_sge rs = { (uintptr_t)buf + 8192, 4096, mr->lkey };
	struct ibv_sge ss = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 0x5d, .sg_list = &rs,
				   .num_sge = 1 }, *brw;
	struct ibv_send_wr swr = { .wr_id = 0x5e, .sg_list = &ss,
				   .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *bsw;
	struct metaroce_recv_wqe *w;
	struct metaroce_queue *rq = NULL;
	struct ibv_qp *qa = NULL, *qb = NULL, *q;
	struct ibv_ah *ah = NULL;
	struct ibv_cq *cq, *rcq = NULL;	/* rcq: qb's own */
	uint64_t wr_id = 0;
	uint32_t idx;
	struct maps m;
	int ok = 0, bad = 0, sok = 0, sbad = 0, i;

	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = cq ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qa = rcq ? ibv_create_qp(pd, &ia) : NULL;
	ia.send_cq = rcq;
	ia.recv_cq = rcq;
	cmd_maps(&m);
	qb = qa ? ibv_create_qp(pd, &ia) : NULL;
	rq = qb ? new_ring(&m, rq_slot()) : NULL;
	for (i = 0; rq && i < 2; i++) {
		q = i ? qb : qa;
		a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT,
					  .port_num = 1, .qkey = 0x11111111 };
		if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_QKEY))
			rq = NULL;
		a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
		if (rq && ibv_modify_qp(q, &a, IBV_QP_STATE))
			rq = NULL;
		a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
		if (rq && ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
			rq = NULL;
	}
	if (rq && gid_index >= 0 &&
	    !ibv_query_gid(ctx, 1, gid_index, &aa.grh.dgid)) {
		aa.grh.sgid_index = gid_index;
		aa.grh.hop_limit = 64;
		ah = ibv_create_ah(pd, &aa);
	}
	if (!ah) {
		CHECK(0, "%s: set-up (cq %p qa %p qb %p rq %p ah %p)", name,
		      (void *)cq, (void *)qa, (void *)qb, (void *)rq,
		      (void *)ah);
		goto out;
	}
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = qb->qp_num;
	swr.wr.ud.remote_qkey = 0x11111111;
	/* first a good WQE: the datagram arrives, payload after the GRH */
	for (i = 0; i < 64; i++)
		buf[i] = (char)(0xa0 + i);
	memset(buf + 8192, 0, 4096);
	rwr.wr_id = 0x5c;
	CHECK(!ibv_post_recv(qb, &rwr, &brw) &&
	      !ibv_post_send(qa, &swr, &bsw), "%s: good receive, datagram posted",
	      name);
	ring_poll(cq, 2000, qa, &sok, &sbad, NULL);
	ring_poll(rcq, 300, qb, &ok, &bad, &wr_id);
	CHECK(sok == 1 && !sbad && ok == 1 && !bad &&
	      !memcmp(buf + 8192 + 40, buf, 64),
	      "%s: a good WQE first: datagram received, payload placed (send %d ok %d error, receive %d ok %d error)",
	      name, sok, sbad, ok, bad);
	sok = sbad = ok = bad = 0;
	wr_id = 0;
	rwr.wr_id = 0x5d;
	CHECK(!ibv_post_recv(qb, &rwr, &brw), "%s: receive posted", name);
	/* the slot just published: num_sge beyond max_recv_sge */
	idx = (ring_load(&rq->producer) - 1) & (rq->num_slots - 1);
	w = (void *)((char *)rq + METAROCE_QUEUE_HDR_SIZE +
		     (size_t)idx * rq->slot_size);
	__atomic_store_n(&w->num_sge, 200, __ATOMIC_RELEASE);
	CHECK(!ibv_post_send(qa, &swr, &bsw), "%s: datagram posted", name);
	ring_poll(cq, 2000, qa, &sok, &sbad, NULL);
	CHECK(sok == 1 && !sbad, "%s: the datagram's send completes (%d ok, %d error)",
	      name, sok, sbad);
	ring_poll(rcq, 300, qb, &ok, &bad, &wr_id);
	CHECK(!ok && bad == 1 && wr_id == 0x5d,
	      "%s: its completion is an error naming it (%d ok, %d error, wr_id 0x%llx)",
	      name, ok, bad, (unsigned long long)wr_id);
out:
	if (ah)
		ibv_destroy_ah(ah);
	if (qb)
		ibv_destroy_qp(qb);
	if (qa)
		ibv_destroy_qp(qa);
	if (rcq)
		ibv_destroy_cq(rcq);
	if (cq)
		ibv_destroy_cq(cq);
}

/* Hits of the kprobe "mrget" on metaroce_mr_get (badinput.sh sets it up). */
static long mrget_hits(void)
{
	const char *path = getenv("MRC_KPROBE_PROFILE");
	char line[256], ev[128];
	long hits, val = -1;
	FILE *f;

	f = fopen(path ? path : "/sys/kernel/tracing/kprobe_profile", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %ld", ev, &hits) == 2 &&
		    !strcmp(ev, "mrget"))
			val = hits;
	fclose(f);
	return val;
}

/*
 * A QP in ERR and 4096 SENDs of 4 SGEs posted to it in one call: each
 * completes as flushed, in order, with its wr_id, and the flush looks up
 * no local key (counted by a kprobe on metaroce_mr_get: a full SQ of
 * 32-SGE WQEs would otherwise be 2^19 MR lookups under the QP's
 * transport lock per doorbell).
 */
#define FLUSH_WRS 4096
static void ring_sq_flush_keys(struct ibv_pd *pd, struct ibv_mr *mr)
{
	const char *name = "4096 4-SGE SENDs flushed by a QP in ERR";
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = FLUSH_WRS, .max_recv_wr = 1,
			 .max_send_sge = 4, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = RW_ACCESS };
	static struct ibv_send_wr wr[FLUSH_WRS];
	static struct ibv_sge sge[FLUSH_WRS][4];
	struct ibv_send_wr *bsw;
	struct ibv_wc wc[64];
	struct ibv_cq *cq;
	struct ibv_qp *qp = NULL;
	long h0, h1;
	int got = 0, flushed = 0, inorder = 1, i, j, n, t;

	cq = ibv_create_cq(ctx, 2 * FLUSH_WRS, NULL, NULL, 0);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &ia) : NULL;
	h0 = mrget_hits();
	if (!qp || h0 < 0 ||
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		CHECK(0, "%s: set-up (cq %p qp %p, kprobe mrget hits %ld)",
		      name, (void *)cq, (void *)qp, h0);
		goto out;
	}
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_ERR };
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "%s: QP to ERR", name);
	for (i = 0; i < FLUSH_WRS; i++) {
		for (j = 0; j < 4; j++)
			sge[i][j] = (struct ibv_sge){
				(uintptr_t)mr->addr + 64 * j, 64, mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = 0x10000 + i, .sg_list = sge[i], .num_sge = 4,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			.next = i + 1 < FLUSH_WRS ? &wr[i + 1] : NULL };
	}
	h0 = mrget_hits();
	CHECK(!ibv_post_send(qp, wr, &bsw), "%s: posted in one call", name);
	for (t = 0; t < 2000 && got < FLUSH_WRS; t++) {
		while ((n = ibv_poll_cq(cq, 64, wc)) > 0) {
			for (i = 0; i < n; i++, got++) {
				if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
					flushed++;
				if (wc[i].wr_id != 0x10000 + (uint64_t)got)
					inorder = 0;
			}
		}
		if (got < FLUSH_WRS)
			sleep_ms(10);
	}
	h1 = mrget_hits();
	CHECK(got == FLUSH_WRS && flushed == FLUSH_WRS && inorder,
	      "%s: each completes as flushed, in order, with its wr_id (%d completions, %d flushed, %s)",
	      name, got, flushed, inorder ? "in order" : "OUT OF ORDER");
	CHECK(h1 >= h0 && h1 - h0 < 64,
	      "%s: the flush looked up no local key (metaroce_mr_get hits %ld, %d SGEs flushed)",
	      name, h1 - h0, 4 * flushed);
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
}

/* The RQ producer beyond the ring, then modify_qp(ERR): returns at once. */
static void ring_rq_modify(struct ibv_pd *pd)
{
	const char *name = "RQ producer beyond the ring, then modify_qp(ERR)";
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ring_pair rp;
	double t0, dt;
	int err;

	if (!ring_pair_new(pd, false, &rp, name))
		goto out;
	ring_store(&rp.b_rq->producer, ring_load(&rp.b_rq->consumer) +
		   0x80000000U);
	t0 = now_s();
	err = ibv_modify_qp(rp.qb, &a, IBV_QP_STATE);
	dt = now_s() - t0;
	CHECK(!err && dt < 1 && qp_state(rp.qb) == IBV_QPS_ERR,
	      "%s: %s in %.3f s, QP in ERR", name,
	      err ? strerror(err) : "ok", dt);
out:
	ring_pair_free(&rp, name);
}

/* Keeps a ring's producer num_slots ahead of its consumer. */
struct hammer {
	struct metaroce_queue *q;
	volatile int stop;
	unsigned long writes;
};

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *hammer_fn(void *arg)
{
	struct hammer *h = arg;

	/* never on the CPU that flushes: it could not run there */
	pin_cpu(1);

	while (!h->stop) {
		ring_store(&h->q->producer,
			   ring_load(&h->q->consumer) + h->q->num_slots);
		h->writes++;
	}
	return NULL;
}

/*
 * A second thread keeps the producer index of the SQ (@sq) or the RQ
 * exactly num_slots ahead of the consumer -- always a legal value --
 * for HAMMER_S seconds while modify_qp(ERR) flushes the ring: the flush
 * must take one ring's worth at most and return, not chase the producer
 * under the transport lock for as long as user space pushes it.
 */
#define HAMMER_S 5

static void ring_hammer(struct ibv_pd *pd, bool sq)
{
	const char *name = sq ? "SQ producer chased by a thread" :
				"RQ producer chased by a thread";
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct hammer h = {};
	struct ring_pair rp;
	struct ibv_qp *qp;
	pthread_t th;
	double t0, dt;
	uint32_t c0, c1;
	int err;

	if (!ring_pair_new(pd, false, &rp, name))
		goto out;
	h.q = sq ? rp.a_sq : rp.b_rq;
	qp = sq ? rp.qa : rp.qb;
	pin_cpu(0);
	if (pthread_create(&th, NULL, hammer_fn, &h)) {
		CHECK(0, "%s: thread", name);
		goto out;
	}
	sleep_ms(200);
	c0 = ring_load(&h.q->consumer);
	t0 = now_s();
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	dt = now_s() - t0;
	c1 = ring_load(&h.q->consumer);
	sleep_ms(200);
	/* and a doorbell (the flush runs again) while it still pushes */
	raw_doorbell(qp->handle);
	while (now_s() - t0 < HAMMER_S)
		sleep_ms(50);
	h.stop = 1;
	pthread_join(th, NULL);
	CHECK(!err && dt < 1 && qp_state(qp) == IBV_QPS_ERR,
	      "%s (%lu index writes in %d s, %ld CPUs%s): modify_qp(ERR) %s in %.3f s, flushing %u WQEs of a %u-slot ring",
	      name, h.writes, HAMMER_S, sysconf(_SC_NPROCESSORS_ONLN),
	      sysconf(_SC_NPROCESSORS_ONLN) < 2 ? ": no race possible" : "",
	      err ? strerror(err) : "ok", dt, c1 - c0, h.q->num_slots);
out:
	ring_pair_free(&rp, name);
}

/*
 * The SRQ producer beyond the ring, then a SEND to a QP on the SRQ:
 * IBV_EVENT_SRQ_ERR on the SRQ, the QP to ERR with QP_FATAL, no
 * completion for a WQE never posted; resizing the broken SRQ fails
 * cleanly, and a second QP on it fails too when it needs a WQE.
 */
static void ring_srq(struct ibv_pd *pd, struct ibv_mr *mr)
{
	const char *name = "SRQ producer beyond the ring, then a SEND";
	struct ibv_srq_attr sa = { .max_wr = 64 };
	struct ring_pair rp;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_send_sge = 2 },
	};
	struct ibv_qp *qc = NULL, *qd = NULL;
	uint64_t wr_id = 0;
	int ok = 0, bad = 0, err;

	if (!ring_pair_new(pd, true, &rp, name))
		goto out;
	ring_store(&rp.srq_q->producer, ring_load(&rp.srq_q->consumer) +
		   rp.srq_q->num_slots + 1);
	CHECK(!post_send_one(rp.qa, mr, 1), "%s: SEND posted", name);
	CHECK(ev_wait(IBV_EVENT_SRQ_ERR, rp.srq, 3000),
	      "%s: IBV_EVENT_SRQ_ERR on the SRQ", name);
	CHECK(ev_wait(IBV_EVENT_QP_FATAL, rp.qb, 3000),
	      "%s: IBV_EVENT_QP_FATAL on the receiving QP", name);
	ring_poll(rp.cq, 300, rp.qb, &ok, &bad, &wr_id);
	CHECK(qp_state(rp.qb) == IBV_QPS_ERR && !ok && !bad,
	      "%s: receiver in ERR, no receive completion (%d ok, %d error, last wr_id 0x%llx)",
	      name, ok, bad, (unsigned long long)wr_id);
	err = ibv_modify_srq(rp.srq, &sa, IBV_SRQ_MAX_WR);
	CHECK(err, "%s: resizing the broken SRQ fails (%s)", name,
	      err ? strerror(err) : "resized");

	/* a second pair, its receiver on the same (broken) SRQ */
	ia.send_cq = rp.cq;
	ia.recv_cq = rp.cq;
	qc = ibv_create_qp(pd, &ia);
	ia.srq = rp.srq;
	qd = ibv_create_qp(pd, &ia);
	if (!qc || !qd || connect_pair(qc, qd)) {
		CHECK(0, "%s: second pair on the SRQ", name);
		goto out;
	}
	CHECK(!post_send_one(qc, mr, 2), "%s: SEND to the second QP", name);
	CHECK(ev_wait(IBV_EVENT_QP_FATAL, qd, 3000) &&
	      qp_state(qd) == IBV_QPS_ERR,
	      "%s: second QP on the SRQ in ERR with IBV_EVENT_QP_FATAL", name);
out:
	put_qp(qc);
	put_qp(qd);
	ring_pair_free(&rp, name);
}

static const char *const ring_cases[] = {
	"sq-over", "sq-wrap", "sq-behind", "srq-over", "sq-hammer",
	"rq-hammer", "rq-modify", "rq-rx", "ud-rq-sge", "sq-flush-keys",
};

#define N_RING_CASES (int)(sizeof(ring_cases) / sizeof(ring_cases[0]))

static void ring_case(struct ibv_pd *pd, struct ibv_mr *mr, int i)
{
	printf("# ring case %s\n", ring_cases[i]);
	switch (i) {
	case 0: ring_sq(pd, mr, SQ_OVER_ONE); break;
	case 1: ring_sq(pd, mr, SQ_OVER_HALF); break;
	case 2: ring_sq(pd, mr, SQ_BEHIND); break;
	case 3: ring_srq(pd, mr); break;
	case 4: ring_hammer(pd, true); break;
	case 5: ring_hammer(pd, false); break;
	case 6: ring_rq_modify(pd); break;
	case 7: ring_rq_rx(pd, mr); break;
	case 8: ring_ud_rq_sge(pd, mr); break;
	case 9: ring_sq_flush_keys(pd, mr); break;
	}
}

/* A loopback RC SEND + RDMA WRITE on fresh QPs: the process goes on. */
static void test_still_works(struct ibv_pd *pd)
{
	static char sbuf[8192], rbuf[8192], wbuf[8192];
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qa = cq ? rc_qp(pd, cq) : NULL;
	struct ibv_qp *qb = cq ? rc_qp(pd, cq) : NULL;
	struct ibv_mr *smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf),
					IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *rmr = ibv_reg_mr(pd, rbuf, sizeof(rbuf),
					IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *wmr = ibv_reg_mr(pd, wbuf, sizeof(wbuf),
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE);
	struct ibv_sge ss = { (uintptr_t)sbuf, 4096, 0 };
	struct ibv_sge rs = { (uintptr_t)rbuf, 8192, 0 };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &ss, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr wwr = { .wr_id = 3, .sg_list = &ss, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_WRITE,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr *brw;
	struct ibv_send_wr *bsw;
	struct ibv_wc wc;
	int got = 0, bad = 0, t;

	if (!cq || !qa || !qb || !smr || !rmr || !wmr) {
		CHECK(0, "after the abuse: create CQ/QPs/MRs");
		return;
	}
	ss.lkey = smr->lkey;
	rs.lkey = rmr->lkey;
	memset(sbuf, 0x5c, sizeof(sbuf));
	wwr.wr.rdma.remote_addr = (uintptr_t)wbuf;
	wwr.wr.rdma.rkey = wmr->rkey;
	CHECK(!connect_pair(qa, qb),
	      "after the abuse: loopback RC pair to RTS");
	CHECK(!ibv_post_recv(qb, &rwr, &brw) && !ibv_post_send(qa, &swr, &bsw) &&
	      !ibv_post_send(qa, &wwr, &bsw), "after the abuse: post SEND + WRITE");
	for (t = 0; t < 1000 && got < 3; t++) {
		while (ibv_poll_cq(cq, 1, &wc) > 0) {
			got++;
			if (wc.status != IBV_WC_SUCCESS)
				bad++;
		}
		sleep_ms(10);
	}
	CHECK(got == 3 && !bad && !memcmp(rbuf, sbuf, 4096) &&
	      !memcmp(wbuf, sbuf, 4096),
	      "after the abuse: SEND + WRITE completed, data correct (%d wc, %d bad)",
	      got, bad);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	ibv_dereg_mr(wmr);
	ibv_destroy_cq(cq);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "mrc0";
	const char *what = argc > 2 ? argv[2] : "all";
	bool base = !strcmp(what, "all") || !strcmp(what, "base");
	int one = -1;
	static char buf[65536] __attribute__((aligned(4096)));
	struct ibv_device **list;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	int n, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		printf("FAIL  open %s\n", name);
		return 1;
	}
	ibv_free_device_list(list);
	CHECK(!ibv_query_device(ctx, &dattr), "query_device");
	find_ipv4_gid();
	CHECK(gid_index >= 0, "IPv4 GID (index %d)", gid_index);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(pd && cq && mr, "PD, CQ, MR");
	if (!pd || !cq || !mr)
		return 1;

	for (i = 0; i < N_RING_CASES; i++)
		if (!strcmp(what, ring_cases[i]))
			one = i;
	if (!base && one < 0 && strcmp(what, "ring")) {
		printf("FAIL  unknown case %s\n", what);
		return 2;
	}
	fcntl(ctx->async_fd, F_SETFL,
	      fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);

	if (base) {
		test_sizes(pd, cq);
		test_handles();
		test_mr(pd);
		test_modify(pd, cq);
		test_cq_in_use(pd);
		test_post(pd, cq, mr);
		for (i = 0; i < G_MAX; i++)
			test_sq_garbage(pd, mr, i);
	}
	for (i = 0; i < N_RING_CASES; i++)
		if (one == i || (one < 0 && strcmp(what, "base")))
			ring_case(pd, mr, i);
	test_still_works(pd);

	CHECK(!ibv_dereg_mr(mr), "dereg MR");
	CHECK(!ibv_destroy_cq(cq), "destroy CQ");
	CHECK(!ibv_dealloc_pd(pd), "dealloc PD");
	CHECK(!ibv_close_device(ctx), "close device");
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
