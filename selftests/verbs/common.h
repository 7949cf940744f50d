/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the one-file verbs test programs (badinput.c, conformance.c,
 * objects.c, ordering.c, uc.c) share: the ok/FAIL check and its
 * counters, the device context and its IPv4-mapped GID, a monotonic
 * clock, a seeded byte pattern, and taking an RC QP (or a loopback pair)
 * to RTS.
 *
 * Header only, everything static: each program is still built by one
 * gcc command (see selftests/lab/<name>.sh), and a program must not define
 * these names again.
 */
#ifndef MRC_VERBS_COMMON_H
#define MRC_VERBS_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define VT_UNUSED __attribute__((unused))

static int failures VT_UNUSED, checks VT_UNUSED;

/* One check: "ok    what" or "FAIL  what", counted; stdout flushed. */
#define CHECK(cond, ...) do {						\
	checks++;							\
	if (cond) {							\
		printf("ok    ");					\
	} else {							\
		printf("FAIL  ");					\
		failures++;						\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	fflush(stdout);							\
} while (0)

static struct ibv_context *ctx VT_UNUSED;
static int gid_index VT_UNUSED = -1;	/* of gid, port 1; -1: none */
static union ibv_gid gid VT_UNUSED;

/* The counter @name of device @dev (hw_counters), or -1 if there is none. */
static inline long hw_counter(const char *dev, const char *name)
{
	char path[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Set gid/gid_index to ctx's first IPv4-mapped GID (::ffff:a.b.c.d). */
static inline void find_ipv4_gid(void)
{
	struct ibv_port_attr pattr;
	union ibv_gid g;
	int i;

	if (ibv_query_port(ctx, 1, &pattr))
		return;
	for (i = 0; i < pattr.gid_tbl_len && i < 64; i++) {
		if (ibv_query_gid(ctx, 1, i, &g))
			continue;
		if (!memcmp(g.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12)) {
			gid_index = i;
			gid = g;
			return;
		}
	}
}

/* Byte i of the pattern for seed. */
static inline uint8_t pat(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 73 + i * 7 + (i >> 8) + 1);
}

static inline void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

/* Index of the first byte not matching the pattern, or -1. */
static inline long bad_byte(const uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(seed, i))
			return i;
	return -1;
}

/* One completion from a plain CQ within secs (1), or 0. */
static inline int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	double end = now_s() + secs;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? 0 : 1;
	} while (now_s() < end);
	return 0;
}

/* One receive WQE of one SGE. */
static inline int post_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr,
			    uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* Teardown of what a test may or may not have created. */
static inline void put_qp(struct ibv_qp *qp)
{
	if (qp)
		ibv_destroy_qp(qp);
}

static inline void put_mr(struct ibv_mr *mr)
{
	if (mr)
		ibv_dereg_mr(mr);
}

/* RESET -> INIT; a UD QP gets a qkey, any other its access flags. */
static inline int to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = access, .qkey = 0x11111111,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

/* INIT -> RTR towards QP dest at gid (this device), MTU 1024. */
/* RTR with max_dest_rd_atomic = rd (objects.c checks the limit). */
static inline int rc_to_rtr_rd(struct ibv_qp *qp, uint32_t dest,
			       uint32_t psn, uint8_t rd)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest, .rq_psn = psn, .max_dest_rd_atomic = rd,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = gid, .sgid_index = gid_index,
				 .hop_limit = 64 },
		},
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

static inline int rc_to_rtr(struct ibv_qp *qp, uint32_t dest, uint32_t psn)
{
	return rc_to_rtr_rd(qp, dest, psn, 4);
}

/* RTR -> RTS: timeout 14, retry 7, RNR retry 7 (forever). */
static inline int rc_to_rts(struct ibv_qp *qp, uint32_t psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .sq_psn = psn, .max_rd_atomic = 4,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* A loopback RC pair qa <-> qb (same device) to RTS; 0 or failure. */
static inline int connect_loopback(struct ibv_qp *qa, struct ibv_qp *qb,
				   int access)
{
	return to_init(qa, access) || to_init(qb, access) ||
	       rc_to_rtr(qa, qb->qp_num, 300) ||
	       rc_to_rtr(qb, qa->qp_num, 400) ||
	       rc_to_rts(qa, 400) || rc_to_rts(qb, 300);
}

#endif
