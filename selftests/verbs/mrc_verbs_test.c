// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce two-node verbs test: every RC opcode (SEND, SEND_WITH_IMM,
 * RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ, ATOMIC_CMP_AND_SWP,
 * ATOMIC_FETCH_AND_ADD) and UD SEND between two hosts, over any
 * libibverbs device (mrc0, or rxe0 for reference).
 *
 *   mrc_verbs_test -d mrc0 -g 1 [-p port] [-t secs] [-B size]             (server)
 *   mrc_verbs_test -d mrc0 -g 1 [-p port] [-t secs] [-B size] SERVER_IP   (client)
 *
 * -t bounds every completion wait (default 30 s); -R (for rxe0 reference
 * runs) also accepts rdma_rxe's known deviations from IB, see lenient.
 * -B SIZE (bytes, K/M/G suffix, both ends alike) is the big message size
 * (default 8M) and runs only the big cases: one RDMA_WRITE, one RDMA_READ
 * and one SEND of SIZE bytes, every byte verified (selftests/lab/bigmsg.sh
 * moves 1G each).
 *
 * The client drives every case; the server prepares its memory (guard
 * pattern around each target region, posted receives, MRs with the
 * access asked for) and verifies what it received on request. Both talk
 * over one TCP connection (out of band: QPN, PSN, GID, addr, rkey,
 * expectations and verdicts as fixed-size binary messages; both ends run
 * this same binary, so the host layout is shared).
 *
 * Every payload byte is checked (pattern seeded by case id and message
 * offset; guard bytes are the complement of the pattern, so an overrun
 * continuing the pattern is always caught), as are the completion fields.
 * After any failure or expected transport error, both ends destroy their
 * QPs (RC and UD) and CQs and reconnect with fresh PSNs.
 *
 * The client prints one line per case (`ok NAME` / `FAIL NAME: reason`),
 * both print `N passed, N failed` last; the exit code is non-zero if
 * anything failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define GUARD		4096			/* guard bytes each side */
#define BIG_DEFAULT	(8u << 20)		/* 8 MiB */
static uint32_t big = BIG_DEFAULT;		/* -B */
static bool big_only;				/* -B given */
#define BUF_SZ		(((size_t)big + 4095) / 4096 * 4096 + (512u << 10))
#define R_OFF		(64u << 10)		/* regions start here */
#define SCRATCH_OFF	(BUF_SZ - (64u << 10))	/* GRH, atomic results */
#define SMALL_MR	4096			/* bounds-test MR length */
#define GRH_LEN		40
#define QKEY		0x11111111
#define MAX_SGE_TRY	64
#define SQ_DEPTH	64

/* ----------------------------------------------------------- OOB */

enum { C_CONNECT = 1, C_PREP, C_CHECK, C_QUIT };
/* What the server does with a case. */
enum { RL_NONE, RL_RECV, RL_UDRECV, RL_TARGET, RL_SOURCE, RL_ATOMIC };
/* Which MR the server hands out. */
enum { MK_MAIN, MK_NOWRITE, MK_NOREAD, MK_NOATOMIC, MK_SMALL, MK_PD2 };
/* How the server's region is checked afterwards. */
enum {
	CK_DATA,	/* pieces hold the pattern, guards intact */
	CK_UNTOUCHED,	/* everything still the guard pattern */
	CK_GUARD_ONLY,	/* pieces undefined, guards intact */
	CK_ATOMIC,	/* 8-byte value == a_expect, guards intact */
};

struct conn_info {
	uint32_t qpn, psn, ud_qpn, mtu;
	union ibv_gid gid;
	uint64_t addr;		/* main MR: region base (buf + R_OFF) */
	uint32_t rkey;
	uint32_t pad;
};

struct msg {
	uint32_t cmd, id;
	struct conn_info ci;
	/* C_PREP */
	uint32_t role, mrk, check, len, npieces, off, recv0;
	uint32_t cqe;		/* 0: none, 1: success, 2: error status */
	uint32_t cqe_opcode, cqe_flags, cqe_imm, cqe_status, cqe_src_qp;
	uint32_t cqe_byte_len;
	uint32_t cqe_status_alt;	/* also accepted (-R), 0: none */
	uint64_t a_init, a_expect;
	/* C_CHECK */
	uint32_t quick;		/* client failed: don't wait for a CQE */
	/* replies */
	int32_t ok;
	uint32_t rkey;
	uint64_t addr;
	char text[512];
};

static int sock = -1;
static int timeout_s = 30;
static bool is_server;
/*
 * -R: also accept the statuses rdma_rxe of Linux 6.1 reports where it
 * deviates from IB (reference runs over rxe0 only):
 *  - bad local lkey: IBV_WC_LOC_QP_OP_ERR instead of IBV_WC_LOC_PROT_ERR
 *  - SEND longer than the receive: requester IBV_WC_REM_OP_ERR instead of
 *    IBV_WC_REM_INV_REQ_ERR, responder IBV_WC_LOC_QP_OP_ERR instead of
 *    IBV_WC_LOC_LEN_ERR (copy_data's -EINVAL taken as a malformed WQE)
 */
static bool lenient;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stdout, "FAIL fatal: ");
	vfprintf(stdout, fmt, ap);
	fprintf(stdout, "\n");
	va_end(ap);
	exit(2);
}

/* The peer never takes longer than a completion wait plus slack. */
static void oob_setup(void)
{
	struct timeval tv = { .tv_sec = 2 * timeout_s + 60 };
	int one = 1;

	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void send_msg(struct msg *m)
{
	size_t done = 0;
	ssize_t n;

	while (done < sizeof(*m)) {
		n = send(sock, (char *)m + done, sizeof(*m) - done,
			 MSG_NOSIGNAL);
		if (n <= 0)
			die("OOB send: %s", n ? strerror(errno) : "closed");
		done += n;
	}
}

static void recv_msg(struct msg *m)
{
	size_t done = 0;
	ssize_t n;

	while (done < sizeof(*m)) {
		n = recv(sock, (char *)m + done, sizeof(*m) - done, 0);
		if (n <= 0)
			die("OOB recv: %s", n ? strerror(errno) : "closed");
		done += n;
	}
}

/* ------------------------------------------------------- patterns */

static uint8_t pat(uint32_t seed, uint32_t m)
{
	uint32_t x = m * 0x9e3779b1u + seed * 0x85ebca77u + 0x1234567u;

	return (uint8_t)((x >> 24) ^ (m >> 13) ^ seed);
}

/* Guard at buffer position pos of a layout starting at base. */
static uint8_t guard(uint32_t seed, uint64_t pos, uint64_t base)
{
	return (uint8_t)~pat(seed, (uint32_t)(pos - base));
}

struct piece {
	uint64_t off;
	uint32_t len;
};

/*
 * A message of len bytes in n (1 or 3) pieces starting at base. Both
 * sides use different splits (side) so SGE boundaries never line up.
 */
static int layout(uint32_t len, int n, int side, uint64_t base,
		  struct piece *p)
{
	uint32_t l1, l2;

	if (n == 1 || len < 3) {
		p[0].off = base;
		p[0].len = len;
		return 1;
	}
	l1 = (len / 3) | 1;
	l2 = (len / (side ? 4 : 5)) | 1;
	p[0].off = base;
	p[0].len = l1;
	p[1].off = p[0].off + l1 + (side ? 53 : 37);
	p[1].len = l2;
	p[2].off = p[1].off + l2 + (side ? 61 : 45);
	p[2].len = len - l1 - l2;
	return 3;
}

static void fill(uint8_t *buf, const struct piece *p, int n, uint32_t seed,
		 bool data)
{
	uint64_t base = p[0].off, pos, hi = p[n - 1].off + p[n - 1].len;
	uint32_t m = 0;
	int k;

	for (pos = base - GUARD; pos < hi + GUARD; pos++)
		buf[pos] = guard(seed, pos, base);
	if (!data)
		return;
	for (k = 0; k < n; k++)
		for (pos = p[k].off; pos < p[k].off + p[k].len; pos++)
			buf[pos] = pat(seed, m++);
}

/* 0 if fine, else an explanation in err. */
static int verify(const uint8_t *buf, const struct piece *p, int n,
		  uint32_t seed, int mode, char *err, size_t errlen)
{
	uint64_t base = p[0].off, lo = base - GUARD;
	uint64_t hi = p[n - 1].off + p[n - 1].len + GUARD, pos = lo;
	uint64_t bad = 0, first = 0;
	uint8_t got = 0, want = 0;
	bool first_guard = false;
	uint32_t m = 0, j;
	int k;

	for (k = 0; k <= n; k++) {
		uint64_t end = k < n ? p[k].off : hi;

		for (; pos < end; pos++) {
			if (buf[pos] == guard(seed, pos, base))
				continue;
			if (!bad++) {
				first = pos;
				got = buf[pos];
				want = guard(seed, pos, base);
				first_guard = true;
			}
		}
		if (k == n)
			break;
		for (j = 0; j < p[k].len; j++, pos++, m++) {
			uint8_t w;

			if (mode == CK_GUARD_ONLY || mode == CK_ATOMIC)
				continue;
			w = mode == CK_DATA ? pat(seed, m) :
					      guard(seed, pos, base);
			if (buf[pos] == w)
				continue;
			if (!bad++) {
				first = pos;
				got = buf[pos];
				want = w;
				first_guard = false;
			}
		}
	}
	if (!bad)
		return 0;
	snprintf(err, errlen,
		 "%llu bad bytes, first at %+lld from region start (%s): 0x%02x, want 0x%02x",
		 (unsigned long long)bad, (long long)(first - base),
		 first_guard ? "guard" : "payload", got, want);
	return -1;
}

/* ---------------------------------------------------------- verbs */

static struct ibv_context *ctx;
static struct ibv_device_attr dattr;
static struct ibv_pd *pd, *pd2;
static uint8_t *buf;
static struct ibv_mr *mr;		/* whole buf, all access */
static struct ibv_cq *cq, *ud_cq;
static struct ibv_qp *qp, *ud_qp;
static struct ibv_ah *ah;
static int gid_idx = 1;
static union ibv_gid my_gid;
static enum ibv_mtu my_mtu, path_mtu;
static uint32_t mtu_bytes;
static uint32_t max_inline, ud_max_inline;
static bool no_ud;		/* -U: skip the UD cases (lossy network) */
static struct ibv_qp_cap rc_cap, ud_cap;
static struct conn_info peer;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1 on a completion, 0 on timeout, -1 on a poll error. */
static int poll_one(struct ibv_cq *c, struct ibv_wc *wc, double secs)
{
	double end = now() + secs;
	int spins = 0, n;

	for (;;) {
		n = ibv_poll_cq(c, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		if (now() > end)
			return 0;
		if (++spins > 100)
			usleep(200);
	}
}

static struct ibv_qp *create_qp(struct ibv_cq *c, enum ibv_qp_type type,
				struct ibv_qp_cap *out)
{
	static const uint32_t inl[] = { 256, 128, 64, 0 };
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_qp *q = NULL;
	unsigned int i;

	for (i = 0; i < sizeof(inl) / sizeof(inl[0]) && !q; i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = c;
		ia.recv_cq = c;
		ia.qp_type = type;
		ia.cap.max_send_wr = SQ_DEPTH;
		ia.cap.max_recv_wr = SQ_DEPTH;
		ia.cap.max_send_sge = 3;
		ia.cap.max_recv_sge = 4;
		ia.cap.max_inline_data = inl[i];
		q = ibv_create_qp(pd, &ia);
	}
	if (!q)
		die("create_qp: %s", strerror(errno));
	if (ibv_query_qp(q, &qa, IBV_QP_CAP, &ia))
		die("query_qp");
	*out = ia.cap;
	return q;
}

static void ud_setup(void);

/* The RC pair and the UD QP, recreated together on every (re)connect. */
static void rc_create(void)
{
	cq = ibv_create_cq(ctx, 1024, NULL, NULL, 0);
	if (!cq)
		die("create_cq: %s", strerror(errno));
	qp = create_qp(cq, IBV_QPT_RC, &rc_cap);
	max_inline = rc_cap.max_inline_data;
	ud_setup();
}

static void rc_destroy(void)
{
	if (qp && ibv_destroy_qp(qp))
		die("destroy_qp");
	if (cq && ibv_destroy_cq(cq))
		die("destroy_cq");
	if (ud_qp && ibv_destroy_qp(ud_qp))
		die("destroy_qp (UD)");
	if (ud_cq && ibv_destroy_cq(ud_cq))
		die("destroy_cq (UD)");
	qp = ud_qp = NULL;
	cq = ud_cq = NULL;
}

static void rc_connect(uint32_t my_psn)
{
	uint8_t rd = dattr.max_qp_rd_atom < 16 ? dattr.max_qp_rd_atom : 16;
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("RC -> INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = path_mtu;
	a.dest_qp_num = peer.qpn;
	a.rq_psn = peer.psn;
	a.max_dest_rd_atomic = rd;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer.gid;
	a.ah_attr.grh.sgid_index = gid_idx;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RC -> RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 16;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = my_psn;
	a.max_rd_atomic = rd;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RC -> RTS");
}

static void ud_setup(void)
{
	struct ibv_qp_attr a;

	ud_cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!ud_cq)
		die("create_cq (UD)");
	ud_qp = create_qp(ud_cq, IBV_QPT_UD, &ud_cap);
	ud_max_inline = ud_cap.max_inline_data;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = QKEY;
	if (ibv_modify_qp(ud_qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		die("UD -> INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(ud_qp, &a, IBV_QP_STATE))
		die("UD -> RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(ud_qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD -> RTS");
}

static void my_info(struct conn_info *ci, uint32_t psn)
{
	memset(ci, 0, sizeof(*ci));
	ci->qpn = qp->qp_num;
	ci->psn = psn;
	ci->ud_qpn = ud_qp->qp_num;
	ci->mtu = my_mtu;
	ci->gid = my_gid;
	ci->addr = (uintptr_t)buf + R_OFF;
	ci->rkey = mr->rkey;
}

static void set_path_mtu(void)
{
	path_mtu = peer.mtu < (uint32_t)my_mtu ? (enum ibv_mtu)peer.mtu :
						 my_mtu;
	mtu_bytes = 128u << path_mtu;
}

/* PSNs close to the 24-bit wrap, so long messages cross it. */
static uint32_t new_psn(void)
{
	return (0xffff00u | (rand() & 0xff)) - (rand() & 0x3ff);
}

static const char *wc_str(enum ibv_wc_status s)
{
	return ibv_wc_status_str(s);
}

/* -------------------------------------------------------- server */

static struct ibv_mr *tmp_mr;
static struct msg cur;			/* the prepared case */
static struct piece srv_p[3];
static int srv_n;
static int srv_pass, srv_fail;

static void tmp_mr_free(void)
{
	if (tmp_mr && ibv_dereg_mr(tmp_mr))
		die("dereg_mr");
	tmp_mr = NULL;
}

static void srv_prep(struct msg *m, struct msg *r)
{
	struct ibv_recv_wr rwr, *bad;
	struct ibv_sge sge[4];
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mr *use = mr;
	uint64_t base = R_OFF + m->off;
	int i, ns = 0;

	cur = *m;
	tmp_mr_free();
	r->ok = 1;
	switch (m->role) {
	case RL_RECV:
	case RL_UDRECV:
		srv_n = layout(m->len, m->npieces, 1, base, srv_p);
		break;
	case RL_NONE:
		srv_n = 0;
		return;
	default:
		srv_n = layout(m->len, 1, 1, base, srv_p);
	}
	fill(buf, srv_p, srv_n, m->id, m->role == RL_SOURCE);
	if (m->role == RL_ATOMIC)
		memcpy(buf + base, &m->a_init, 8);

	switch (m->mrk) {
	case MK_NOWRITE:
		access &= ~IBV_ACCESS_REMOTE_WRITE;
		break;
	case MK_NOREAD:
		access &= ~IBV_ACCESS_REMOTE_READ;
		break;
	case MK_NOATOMIC:
		access &= ~IBV_ACCESS_REMOTE_ATOMIC;
		break;
	}
	if (m->mrk == MK_SMALL)
		tmp_mr = ibv_reg_mr(pd, buf + base, m->len, access);
	else if (m->mrk == MK_PD2)
		tmp_mr = ibv_reg_mr(pd2, buf, BUF_SZ, access);
	else if (m->mrk != MK_MAIN)
		tmp_mr = ibv_reg_mr(pd, buf, BUF_SZ, access);
	if (m->mrk != MK_MAIN) {
		if (!tmp_mr) {
			r->ok = 0;
			snprintf(r->text, sizeof(r->text),
				 "server reg_mr: %s", strerror(errno));
			return;
		}
		use = tmp_mr;
	}
	r->addr = (uintptr_t)buf + base;
	r->rkey = use->rkey;

	if (m->role == RL_UDRECV) {
		sge[ns].addr = (uintptr_t)buf + SCRATCH_OFF;
		sge[ns].length = GRH_LEN;
		sge[ns++].lkey = mr->lkey;
	}
	if (m->role == RL_RECV || m->role == RL_UDRECV) {
		for (i = 0; i < srv_n && m->len; i++) {
			sge[ns].addr = (uintptr_t)buf + srv_p[i].off;
			sge[ns].length = srv_p[i].len;
			sge[ns++].lkey = mr->lkey;
		}
	}
	if (m->role == RL_RECV || m->role == RL_UDRECV || m->recv0) {
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = m->id;
		rwr.sg_list = sge;
		rwr.num_sge = ns;
		if (ibv_post_recv(m->role == RL_UDRECV ? ud_qp : qp, &rwr,
				  &bad)) {
			r->ok = 0;
			snprintf(r->text, sizeof(r->text),
				 "server post_recv failed");
		}
	}
}

/*
 * A UD receive over RoCE v2: the GRH area holds the IP header (IPv4 in its
 * last 20 bytes), whose destination is our GID, and sl bits 2:0 tell which
 * (2 IPv4, 1 IPv6), as mlx5 reports it: UCX's ud_verbs finds the
 * destination address with it and drops the datagram otherwise. rxe
 * leaves sl 0 (-R skips this).
 */
static void ud_l3_check(const struct ibv_wc *wc, char *err, size_t n)
{
	const unsigned char *g = buf + SCRATCH_OFF;
	bool v4 = IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)my_gid.raw);
	unsigned int want = v4 ? 2 : 1;

	if ((wc->sl & 7) != want)
		snprintf(err, n, "receive CQE sl %u: L3 type %u, want %u (%s)",
			 wc->sl, wc->sl & 7, want, v4 ? "IPv4" : "IPv6");
	else if (v4 && (g[20] >> 4 != 4 || memcmp(g + 36, my_gid.raw + 12, 4)))
		snprintf(err, n, "GRH area: no IPv4 header to our address at 20");
	else if (!v4 && (g[0] >> 4 != 6 || memcmp(g + 24, my_gid.raw, 16)))
		snprintf(err, n, "GRH area: no IPv6 header to our GID");
}

static void srv_check(struct msg *m, struct msg *r)
{
	struct ibv_cq *c = cur.role == RL_UDRECV ? ud_cq : cq;
	struct ibv_qp *q = cur.role == RL_UDRECV ? ud_qp : qp;
	char err[400] = "";
	/*
	 * IBV_WC_GRH only means "a GRH is in the buffer" on UD; RoCE
	 * devices (rxe, mlx5) also set it on RC, so it is ignored there.
	 */
	unsigned int ign = IBV_WC_IP_CSUM_OK |
			   (cur.role == RL_UDRECV ? 0 : IBV_WC_GRH);
	struct ibv_wc wc;
	int n;

	r->ok = 1;
	if (cur.cqe) {
		n = poll_one(c, &wc, m->quick ? 1 : timeout_s);
		if (n <= 0) {
			snprintf(err, sizeof(err),
				 "no receive completion after %d s",
				 m->quick ? 1 : timeout_s);
		} else if (wc.wr_id != cur.id) {
			snprintf(err, sizeof(err),
				 "receive CQE wr_id %llu, want %u",
				 (unsigned long long)wc.wr_id, cur.id);
		} else if (cur.cqe == 2) {
			if (wc.status != (enum ibv_wc_status)cur.cqe_status &&
			    !(cur.cqe_status_alt &&
			      wc.status == cur.cqe_status_alt))
				snprintf(err, sizeof(err),
					 "receive CQE status %s, want %s",
					 wc_str(wc.status),
					 wc_str(cur.cqe_status));
		} else if (wc.status != IBV_WC_SUCCESS) {
			snprintf(err, sizeof(err), "receive CQE status %s",
				 wc_str(wc.status));
		} else if (wc.opcode != cur.cqe_opcode) {
			snprintf(err, sizeof(err),
				 "receive CQE opcode %d, want %u", wc.opcode,
				 cur.cqe_opcode);
		} else if (wc.byte_len != cur.cqe_byte_len) {
			snprintf(err, sizeof(err),
				 "receive CQE byte_len %u, want %u",
				 wc.byte_len, cur.cqe_byte_len);
		} else if ((wc.wc_flags & ~ign) != cur.cqe_flags) {
			snprintf(err, sizeof(err),
				 "receive CQE wc_flags 0x%x, want 0x%x",
				 wc.wc_flags, cur.cqe_flags);
		} else if ((cur.cqe_flags & IBV_WC_WITH_IMM) &&
			   wc.imm_data != cur.cqe_imm) {
			snprintf(err, sizeof(err),
				 "receive CQE imm 0x%08x, want 0x%08x",
				 be32toh(wc.imm_data), be32toh(cur.cqe_imm));
		} else if (wc.qp_num != q->qp_num) {
			snprintf(err, sizeof(err),
				 "receive CQE qp_num %u, want %u", wc.qp_num,
				 q->qp_num);
		} else if (cur.role == RL_UDRECV &&
			   wc.src_qp != cur.cqe_src_qp) {
			snprintf(err, sizeof(err),
				 "receive CQE src_qp %u, want %u", wc.src_qp,
				 cur.cqe_src_qp);
		} else if (cur.role == RL_UDRECV && !lenient) {
			ud_l3_check(&wc, err, sizeof(err));
		}
	} else if (cur.check == CK_DATA && cur.role != RL_NONE) {
		/* Nothing may have completed on our side. */
		n = ibv_poll_cq(cq, 1, &wc);
		if (n > 0)
			snprintf(err, sizeof(err),
				 "unexpected CQE (status %s opcode %d)",
				 wc_str(wc.status), wc.opcode);
	}
	if (!err[0] && srv_n) {
		if (!verify(buf, srv_p, srv_n, cur.id, cur.check, err,
			    sizeof(err)) && cur.role == RL_ATOMIC) {
			uint64_t v;

			memcpy(&v, buf + srv_p[0].off, 8);
			if (v != cur.a_expect)
				snprintf(err, sizeof(err),
					 "remote value 0x%016llx, want 0x%016llx",
					 (unsigned long long)v,
					 (unsigned long long)cur.a_expect);
		}
	}
	if (err[0]) {
		r->ok = 0;
		snprintf(r->text, sizeof(r->text), "server: %s", err);
		printf("FAIL case %u: %s\n", cur.id, r->text);
		srv_fail++;
	} else {
		srv_pass++;
	}
	tmp_mr_free();
}

static int server(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int one = 1, ls;
	struct msg m, r;
	uint32_t psn;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_port = htons(port);
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1))
		die("listen on %d: %s", port, strerror(errno));
	printf("# server listening on tcp %d\n", port);
	sock = accept(ls, NULL, NULL);
	if (sock < 0)
		die("accept: %s", strerror(errno));
	close(ls);
	oob_setup();

	for (;;) {
		recv_msg(&m);
		memset(&r, 0, sizeof(r));
		r.cmd = m.cmd;
		r.id = m.id;
		switch (m.cmd) {
		case C_CONNECT:
			tmp_mr_free();
			rc_destroy();
			rc_create();
			peer = m.ci;
			set_path_mtu();
			psn = new_psn();
			rc_connect(psn);
			my_info(&r.ci, psn);
			r.ok = 1;
			break;
		case C_PREP:
			srv_prep(&m, &r);
			break;
		case C_CHECK:
			srv_check(&m, &r);
			break;
		case C_QUIT:
			r.ok = 1;
			send_msg(&r);
			printf("%d passed, %d failed\n", srv_pass, srv_fail);
			return srv_fail ? 1 : 0;
		default:
			die("bad command %u", m.cmd);
		}
		send_msg(&r);
	}
}

/* -------------------------------------------------------- client */

static int n_pass, n_fail, n_timeouts;
static uint32_t case_id;
static bool aborted;

struct res {
	char err[600];
	bool reconnect;
};

static void failf(struct res *rs, const char *fmt, ...)
{
	va_list ap;

	if (rs->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(rs->err, sizeof(rs->err), fmt, ap);
	va_end(ap);
}

static void client_connect(void)
{
	struct msg m, r;
	uint32_t psn = new_psn();

	tmp_mr_free();
	rc_destroy();
	rc_create();
	memset(&m, 0, sizeof(m));
	m.cmd = C_CONNECT;
	my_info(&m.ci, psn);
	send_msg(&m);
	recv_msg(&r);
	if (!r.ok)
		die("server could not connect");
	peer = r.ci;
	set_path_mtu();
	rc_connect(psn);
}

static void prep(struct msg *spec, struct msg *rep, struct res *rs)
{
	spec->cmd = C_PREP;
	spec->id = case_id;
	send_msg(spec);
	recv_msg(rep);
	if (!rep->ok)
		failf(rs, "%s", rep->text);
}

static void remote_check(struct res *rs)
{
	struct msg m, r;

	memset(&m, 0, sizeof(m));
	m.cmd = C_CHECK;
	m.id = case_id;
	m.quick = rs->err[0] != 0;
	send_msg(&m);
	recv_msg(&r);
	if (!r.ok) {
		failf(rs, "%s", r.text);
		rs->reconnect = true;
	}
}

static void finish(const char *name, struct res *rs)
{
	if (rs->err[0]) {
		printf("FAIL %s: %s\n", name, rs->err);
		n_fail++;
		rs->reconnect = true;
	} else {
		printf("ok %s\n", name);
		n_pass++;
	}
	if (rs->reconnect)
		client_connect();
}

static bool not_run(const char *name)
{
	case_id++;
	if (!aborted)
		return false;
	printf("FAIL %s: not run (transport timed out 3 times)\n", name);
	n_fail++;
	return true;
}

/*
 * Post wr on q and wait for its completion; checks status, wr_id and
 * qp_num. 0 if the status was the wanted one.
 */
static int post_wait(struct ibv_qp *q, struct ibv_cq *c, struct ibv_send_wr *wr,
		     struct ibv_wc *wc, enum ibv_wc_status want,
		     struct res *rs)
{
	struct ibv_send_wr *bad = NULL;
	int ret, n;

	wr->wr_id = case_id;
	wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(q, wr, &bad);
	if (ret) {
		failf(rs, "post_send: %s", strerror(ret));
		return -1;
	}
	n = poll_one(c, wc, timeout_s);
	if (n <= 0) {
		failf(rs, n ? "poll_cq error" :
		      "no send completion after %d s", timeout_s);
		if (!n && ++n_timeouts >= 3)
			aborted = true;
		return -1;
	}
	if (wc->wr_id != case_id) {
		failf(rs, "send CQE wr_id %llu, want %u",
		      (unsigned long long)wc->wr_id, case_id);
		return -1;
	}
	if (wc->status != want) {
		failf(rs, "send CQE status %s, want %s", wc_str(wc->status),
		      wc_str(want));
		return -1;
	}
	if (wc->qp_num != q->qp_num) {
		failf(rs, "send CQE qp_num %u, want %u", wc->qp_num,
		      q->qp_num);
		return -1;
	}
	return 0;
}

static const char *op_name(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: return "SEND";
	case IBV_WR_SEND_WITH_IMM: return "SEND_WITH_IMM";
	case IBV_WR_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM: return "RDMA_WRITE_WITH_IMM";
	case IBV_WR_RDMA_READ: return "RDMA_READ";
	case IBV_WR_ATOMIC_CMP_AND_SWP: return "ATOMIC_CMP_AND_SWP";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "ATOMIC_FETCH_AND_ADD";
	default: return "?";
	}
}

static enum ibv_wc_opcode wc_op(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM: return IBV_WC_SEND;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM: return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP: return IBV_WC_COMP_SWAP;
	default: return IBV_WC_FETCH_ADD;
	}
}

static uint32_t imm_of(uint32_t id)
{
	return htobe32(id * 0x01000193u ^ 0xa5c3e1f7u);
}

/* Client-side SGEs over pieces of buf (lkey of m). */
static int to_sges(const struct piece *p, int n, uint32_t len,
		   struct ibv_mr *m, struct ibv_sge *sge)
{
	int i;

	if (!len)
		return 0;
	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)buf + p[i].off;
		sge[i].length = p[i].len;
		sge[i].lkey = m->lkey;
	}
	return n;
}

static void check_wc_fields(struct ibv_wc *wc, enum ibv_wr_opcode op,
			    uint32_t len, struct res *rs)
{
	/*
	 * wc_flags of a requester completion carry nothing in IB; rxe sets
	 * IBV_WC_WITH_IMM on those of *_WITH_IMM, which is harmless.
	 */
	unsigned int imm_ok = op == IBV_WR_SEND_WITH_IMM ||
			      op == IBV_WR_RDMA_WRITE_WITH_IMM ?
			      IBV_WC_WITH_IMM : 0;

	if (wc->opcode != wc_op(op))
		failf(rs, "send CQE opcode %d, want %d", wc->opcode,
		      wc_op(op));
	else if (op == IBV_WR_RDMA_READ && wc->byte_len != len)
		failf(rs, "RDMA_READ CQE byte_len %u, want %u", wc->byte_len,
		      len);
	else if ((op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		  op == IBV_WR_ATOMIC_FETCH_AND_ADD) && wc->byte_len != 8)
		failf(rs, "atomic CQE byte_len %u, want 8", wc->byte_len);
	else if (wc->wc_flags & ~(IBV_WC_IP_CSUM_OK | imm_ok))
		failf(rs, "send CQE wc_flags 0x%x, want 0", wc->wc_flags);
}

/* One RC data case: op of len bytes in nsge SGEs, inline or not. */
static void rc_case(enum ibv_wr_opcode op, uint32_t len, int nsge, bool inl)
{
	bool is_send = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	bool imm = op == IBV_WR_SEND_WITH_IMM ||
		   op == IBV_WR_RDMA_WRITE_WITH_IMM;
	struct ibv_send_wr wr;
	struct ibv_sge sge[3];
	struct res rs = { "" };
	struct piece p[3];
	struct msg spec, rep;
	struct ibv_wc wc;
	char name[128];
	int n;

	snprintf(name, sizeof(name), "rc %s len=%u sge=%d%s", op_name(op),
		 len, nsge, inl ? " inline" : "");
	if (not_run(name))
		return;
	memset(&spec, 0, sizeof(spec));
	spec.len = len;
	spec.npieces = nsge;
	spec.check = CK_DATA;
	spec.off = case_id & 7;		/* odd target addresses too */
	if (is_send) {
		spec.role = RL_RECV;
		spec.cqe = 1;
		spec.cqe_opcode = IBV_WC_RECV;
	} else if (op == IBV_WR_RDMA_READ) {
		spec.role = RL_SOURCE;
	} else {
		spec.role = RL_TARGET;
		if (imm) {
			spec.recv0 = 1;
			spec.cqe = 1;
			spec.cqe_opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		}
	}
	spec.cqe_byte_len = len;
	spec.cqe_flags = imm ? IBV_WC_WITH_IMM : 0;
	spec.cqe_imm = imm_of(case_id);
	prep(&spec, &rep, &rs);

	if (!rs.err[0]) {
		n = layout(len, nsge, 0, R_OFF + (case_id % 5), p);
		fill(buf, p, n, case_id, op != IBV_WR_RDMA_READ);
		memset(&wr, 0, sizeof(wr));
		wr.opcode = op;
		wr.sg_list = sge;
		wr.num_sge = to_sges(p, n, len, mr, sge);
		wr.send_flags = inl ? IBV_SEND_INLINE : 0;
		wr.imm_data = imm_of(case_id);
		wr.wr.rdma.remote_addr = rep.addr;
		wr.wr.rdma.rkey = rep.rkey;
		if (!post_wait(qp, cq, &wr, &wc, IBV_WC_SUCCESS, &rs))
			check_wc_fields(&wc, op, len, &rs);
		if (!rs.err[0]) {
			char e[400];

			/* READ lands here; the others must not touch it. */
			if (verify(buf, p, n, case_id, CK_DATA, e, sizeof(e)))
				failf(&rs, "local: %s", e);
		}
	}
	remote_check(&rs);
	finish(name, &rs);
}

static void ud_case(uint32_t len, int nsge, bool inl, bool imm)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge[3];
	struct res rs = { "" };
	struct piece p[3];
	struct msg spec, rep;
	struct ibv_wc wc;
	char name[128];
	int n;

	snprintf(name, sizeof(name), "ud %s len=%u sge=%d%s",
		 imm ? "SEND_WITH_IMM" : "SEND", len, nsge,
		 inl ? " inline" : "");
	if (not_run(name))
		return;
	memset(&spec, 0, sizeof(spec));
	spec.role = RL_UDRECV;
	spec.len = len;
	spec.npieces = nsge;
	spec.check = CK_DATA;
	spec.cqe = 1;
	spec.cqe_opcode = IBV_WC_RECV;
	spec.cqe_byte_len = len + GRH_LEN;
	spec.cqe_flags = IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0);
	spec.cqe_imm = imm_of(case_id);
	spec.cqe_src_qp = ud_qp->qp_num;
	prep(&spec, &rep, &rs);
	if (!rs.err[0]) {
		n = layout(len, nsge, 0, R_OFF + 3, p);
		fill(buf, p, n, case_id, true);
		memset(&wr, 0, sizeof(wr));
		wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		wr.sg_list = sge;
		wr.num_sge = to_sges(p, n, len, mr, sge);
		wr.send_flags = inl ? IBV_SEND_INLINE : 0;
		wr.imm_data = imm_of(case_id);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = peer.ud_qpn;
		wr.wr.ud.remote_qkey = QKEY;
		if (!post_wait(ud_qp, ud_cq, &wr, &wc, IBV_WC_SUCCESS, &rs))
			check_wc_fields(&wc, wr.opcode, len, &rs);
	}
	remote_check(&rs);
	finish(name, &rs);
}

static void atomic_case(const char *what, enum ibv_wr_opcode op,
			uint64_t init, uint64_t cmp_add, uint64_t swap,
			uint64_t want_mem)
{
	struct piece lp = { SCRATCH_OFF + 4096, 8 };
	struct ibv_send_wr wr;
	struct res rs = { "" };
	struct msg spec, rep;
	struct ibv_sge sge;
	struct ibv_wc wc;
	char name[128], e[400];
	uint64_t got;

	snprintf(name, sizeof(name), "rc %s %s", op_name(op), what);
	if (not_run(name))
		return;
	memset(&spec, 0, sizeof(spec));
	spec.role = RL_ATOMIC;
	spec.len = 8;
	spec.check = CK_ATOMIC;
	spec.off = (case_id & 3) * 8;
	spec.a_init = init;
	spec.a_expect = want_mem;
	prep(&spec, &rep, &rs);
	if (!rs.err[0]) {
		fill(buf, &lp, 1, case_id, false);
		sge.addr = (uintptr_t)buf + lp.off;
		sge.length = 8;
		sge.lkey = mr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.opcode = op;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.atomic.remote_addr = rep.addr;
		wr.wr.atomic.rkey = rep.rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
		if (!post_wait(qp, cq, &wr, &wc, IBV_WC_SUCCESS, &rs))
			check_wc_fields(&wc, op, 8, &rs);
		memcpy(&got, buf + lp.off, 8);
		if (!rs.err[0] && got != init)
			failf(&rs, "returned original 0x%016llx, want 0x%016llx",
			      (unsigned long long)got,
			      (unsigned long long)init);
		if (!rs.err[0] &&
		    verify(buf, &lp, 1, case_id, CK_ATOMIC, e, sizeof(e)))
			failf(&rs, "local result: %s", e);
	}
	remote_check(&rs);
	finish(name, &rs);
}

/* What an error case breaks, and how. */
enum {
	E_RKEY,		/* wrong rkey (same index, other key bits) */
	E_MR,		/* MR kind from spec.mrk */
	E_OOB_START,	/* small MR, addr = start - 1 */
	E_OOB_END,	/* small MR, last 8 bytes + 8 beyond */
	E_OOB_LONG,	/* small MR, from start, one byte too long */
	E_UNALIGNED,	/* atomic at +4 */
	E_LKEY,		/* local lkey wrong */
	E_LOCAL_OOB,	/* local SGE beyond its MR */
	E_LOCAL_RO,	/* READ into an MR without LOCAL_WRITE */
	E_RECV_SHORT,	/* SEND longer than the posted receive */
};

/*
 * A transport error case. want is the requester's status (want_any:
 * any error will do). The server checks its memory is untouched.
 */
static void err_case(const char *what, enum ibv_wr_opcode op, int kind,
		     int mrk, enum ibv_wc_status want, bool want_any)
{
	bool is_atomic = op == IBV_WR_ATOMIC_CMP_AND_SWP ||
			 op == IBV_WR_ATOMIC_FETCH_AND_ADD;
	bool is_read = op == IBV_WR_RDMA_READ;
	uint32_t len = is_atomic ? 8 : 64;
	struct ibv_mr *lmr = mr, *extra = NULL;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct res rs = { "" };
	struct msg spec, rep;
	struct piece lp;
	struct ibv_wc wc;
	char name[160], e[400];
	int ret, n;

	snprintf(name, sizeof(name), "err %s %s", op_name(op), what);
	if (not_run(name))
		return;
	memset(&spec, 0, sizeof(spec));
	spec.mrk = mrk;
	spec.len = len;
	spec.role = is_atomic ? RL_ATOMIC : is_read ? RL_SOURCE : RL_TARGET;
	spec.check = is_atomic ? CK_ATOMIC : is_read ? CK_DATA : CK_UNTOUCHED;
	spec.a_init = spec.a_expect = 0x0123456789abcdefull;
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
		spec.recv0 = 1;		/* else it is an RNR, not this */
	if (op == IBV_WR_SEND) {	/* a receive waits, must stay empty */
		spec.role = RL_RECV;
		spec.npieces = 1;
	}
	if (kind == E_OOB_START || kind == E_OOB_END || kind == E_OOB_LONG) {
		spec.mrk = MK_SMALL;
		spec.len = SMALL_MR;
		spec.role = is_read ? RL_SOURCE : RL_TARGET;
		spec.check = is_read ? CK_DATA : CK_UNTOUCHED;
		len = kind == E_OOB_LONG ? SMALL_MR + 1 : 16;
		if (is_atomic)
			len = 8;
	}
	if (kind == E_RECV_SHORT) {
		spec.role = RL_RECV;
		spec.npieces = 1;
		spec.len = 50;
		spec.check = CK_GUARD_ONLY;
		spec.cqe = 2;
		spec.cqe_status = IBV_WC_LOC_LEN_ERR;
		if (lenient)
			spec.cqe_status_alt = IBV_WC_LOC_QP_OP_ERR;
		len = 100;
	}
	prep(&spec, &rep, &rs);
	if (rs.err[0])
		goto out;

	lp.off = R_OFF + 1;
	lp.len = len;
	fill(buf, &lp, 1, case_id, !is_read);
	if (kind == E_LOCAL_OOB || kind == E_LOCAL_RO) {
		extra = ibv_reg_mr(pd, buf + lp.off,
				   kind == E_LOCAL_OOB ? len - 1 : len,
				   kind == E_LOCAL_OOB ?
				   IBV_ACCESS_LOCAL_WRITE : 0);
		if (!extra) {
			failf(&rs, "local reg_mr: %s", strerror(errno));
			goto check;
		}
		lmr = extra;
	}
	sge.addr = (uintptr_t)buf + lp.off;
	sge.length = len;
	sge.lkey = kind == E_LKEY ? lmr->lkey ^ 0x5a : lmr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = rep.addr;
	wr.wr.rdma.rkey = rep.rkey;
	if (kind == E_RKEY)
		wr.wr.rdma.rkey ^= 0x5a;
	if (kind == E_OOB_START)
		wr.wr.rdma.remote_addr -= 1;
	if (kind == E_OOB_END)
		wr.wr.rdma.remote_addr += SMALL_MR - (is_atomic ? 0 : 8);
	if (kind == E_UNALIGNED)
		wr.wr.rdma.remote_addr += 4;
	if (is_atomic) {
		uint64_t a = wr.wr.rdma.remote_addr;
		uint32_t k = wr.wr.rdma.rkey;

		wr.wr.atomic.remote_addr = a;
		wr.wr.atomic.rkey = k;
		wr.wr.atomic.compare_add = spec.a_init;
		wr.wr.atomic.swap = 42;
	}
	wr.wr_id = case_id;
	wr.send_flags = IBV_SEND_SIGNALED;
	ret = ibv_post_send(qp, &wr, &bad);
	if (ret == EINVAL && want_any) {
		/* Refusing to post it is a local error too (rxe does). */
		printf("# %s: post_send refuses it (EINVAL)\n", name);
		goto check;
	}
	if (ret) {
		failf(&rs, "post_send: %s", strerror(ret));
		goto check;
	}
	n = poll_one(cq, &wc, timeout_s);
	if (n <= 0) {
		failf(&rs, "no send completion after %d s", timeout_s);
		if (!n && ++n_timeouts >= 3)
			aborted = true;
	} else if (wc.wr_id != case_id) {
		failf(&rs, "CQE wr_id %llu, want %u",
		      (unsigned long long)wc.wr_id, case_id);
	} else if (lenient && wc.status != want && !want_any &&
		   ((kind == E_LKEY && wc.status == IBV_WC_LOC_QP_OP_ERR) ||
		    (kind == E_RECV_SHORT && wc.status == IBV_WC_REM_OP_ERR))) {
		printf("# %s: accepting rxe's %s (-R)\n", name,
		       wc_str(wc.status));
	} else if (want_any ? wc.status == IBV_WC_SUCCESS :
		   wc.status != want) {
		failf(&rs, "CQE status %s, want %s", wc_str(wc.status),
		      want_any ? "an error" : wc_str(want));
	} else if (want_any) {
		printf("# %s: device reports %s\n", name, wc_str(wc.status));
	}
	/* A failed READ or atomic must not land locally either. */
	if (is_read && !is_atomic &&
	    verify(buf, &lp, 1, case_id, CK_UNTOUCHED, e, sizeof(e)))
		failf(&rs, "local target: %s", e);
check:
	rs.reconnect = true;
out:
	remote_check(&rs);
	if (extra)
		ibv_dereg_mr(extra);
	rs.reconnect = true;
	finish(name, &rs);
}

/* Verbs that must fail at post time, without touching the wire. */
static void post_errors(void)
{
	struct ibv_sge sge[MAX_SGE_TRY + 1];
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct res rs;
	int i, ret;

	for (i = 0; i <= MAX_SGE_TRY; i++) {
		sge[i].addr = (uintptr_t)buf + R_OFF;
		sge[i].length = 1;
		sge[i].lkey = mr->lkey;
	}

	memset(&rs, 0, sizeof(rs));
	if (!not_run("post_send num_sge > max_send_sge -> EINVAL")) {
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.sg_list = sge;
		wr.num_sge = rc_cap.max_send_sge + 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = peer.addr;
		wr.wr.rdma.rkey = peer.rkey;
		bad = NULL;
		ret = wr.num_sge > MAX_SGE_TRY ? EINVAL :
		      ibv_post_send(qp, &wr, &bad);
		if (ret != EINVAL || bad != &wr)
			failf(&rs, "ret %d (%s), bad_wr %s", ret,
			      strerror(ret), bad == &wr ? "ok" : "not set");
		finish("post_send num_sge > max_send_sge -> EINVAL", &rs);
	}

	memset(&rs, 0, sizeof(rs));
	if (!not_run("post_recv num_sge > max_recv_sge -> EINVAL")) {
		memset(&rwr, 0, sizeof(rwr));
		rwr.sg_list = sge;
		rwr.num_sge = rc_cap.max_recv_sge + 1;
		rbad = NULL;
		ret = rwr.num_sge > MAX_SGE_TRY ? EINVAL :
		      ibv_post_recv(qp, &rwr, &rbad);
		if (ret != EINVAL || rbad != &rwr)
			failf(&rs, "ret %d (%s), bad_wr %s", ret,
			      strerror(ret), rbad == &rwr ? "ok" : "not set");
		finish("post_recv num_sge > max_recv_sge -> EINVAL", &rs);
	}

	memset(&rs, 0, sizeof(rs));
	if (!not_run("post_send inline > max_inline_data -> EINVAL")) {
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.sg_list = sge;
		sge[0].length = max_inline + 1;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
		wr.wr.rdma.remote_addr = peer.addr;
		wr.wr.rdma.rkey = peer.rkey;
		bad = NULL;
		ret = ibv_post_send(qp, &wr, &bad);
		sge[0].length = 1;
		if (ret != EINVAL || bad != &wr)
			failf(&rs, "ret %d (%s), bad_wr %s", ret,
			      strerror(ret), bad == &wr ? "ok" : "not set");
		finish("post_send inline > max_inline_data -> EINVAL", &rs);
	}
}

/* Fill the send queue in one post: the first WR that does not fit. */
static void full_sq(void)
{
	const char *name = "post_send to a full send queue -> ENOMEM";
	uint32_t cap = rc_cap.max_send_wr, n = cap + 8, i, done = 0;
	struct ibv_send_wr *wrs, *bad = NULL;
	struct res rs = { "" };
	struct ibv_wc wc;
	long idx = -1;
	int ret, k;

	if (not_run(name))
		return;
	wrs = calloc(n, sizeof(*wrs));
	if (!wrs)
		die("calloc");
	for (i = 0; i < n; i++) {
		wrs[i].wr_id = i;
		wrs[i].opcode = IBV_WR_RDMA_WRITE;
		wrs[i].send_flags = IBV_SEND_SIGNALED;
		wrs[i].wr.rdma.remote_addr = peer.addr;
		wrs[i].wr.rdma.rkey = peer.rkey;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
	}
	ret = ibv_post_send(qp, wrs, &bad);
	if (bad)
		idx = bad - wrs;
	if (ret != ENOMEM)
		failf(&rs, "post of %u WRs (max_send_wr %u) returned %d (%s)",
		      n, cap, ret, strerror(ret));
	else if (idx < SQ_DEPTH || idx > cap)
		failf(&rs, "bad_wr is WR %ld, want one in [%u, %u]", idx,
		      SQ_DEPTH, cap);
	/* The accepted ones must all complete, in order. */
	if (idx < 0)
		idx = ret ? 0 : n;
	while (done < idx) {
		k = poll_one(cq, &wc, timeout_s);
		if (k <= 0) {
			failf(&rs, "completion %u of %ld missing", done, idx);
			break;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != done) {
			failf(&rs, "completion %u: status %s wr_id %llu", done,
			      wc_str(wc.status),
			      (unsigned long long)wc.wr_id);
			break;
		}
		done++;
	}
	free(wrs);
	finish(name, &rs);
}

static int client(const char *host, int port)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	};
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM }, *ai;
	struct ibv_ah_attr aa;
	char portstr[16];
	uint32_t sizes[7];
	double end = now() + 60;
	unsigned int o, s;
	struct msg m;

	snprintf(portstr, sizeof(portstr), "%d", port);
	if (getaddrinfo(host, portstr, &hints, &ai))
		die("cannot resolve %s", host);
	for (;;) {
		sock = socket(AF_INET, SOCK_STREAM, 0);
		if (!connect(sock, ai->ai_addr, ai->ai_addrlen))
			break;
		close(sock);
		if (now() > end)
			die("connect %s:%d: %s", host, port, strerror(errno));
		usleep(200000);
	}
	freeaddrinfo(ai);
	oob_setup();

	client_connect();
	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.dgid = peer.gid;
	aa.grh.sgid_index = gid_idx;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(pd, &aa);
	if (!ah)
		die("create_ah: %s", strerror(errno));
	printf("# path MTU %u, max_inline_data %u (UD %u), max_send_wr %u, max_send_sge %u\n",
	       mtu_bytes, max_inline, ud_max_inline, rc_cap.max_send_wr,
	       rc_cap.max_send_sge);

	sizes[0] = 0;
	sizes[1] = 1;
	sizes[2] = mtu_bytes - 1;
	sizes[3] = mtu_bytes;
	sizes[4] = mtu_bytes + 1;
	sizes[5] = 64 << 10;
	sizes[6] = big;

	if (big_only) {
		rc_case(IBV_WR_RDMA_WRITE, big, 1, false);
		rc_case(IBV_WR_RDMA_READ, big, 1, false);
		rc_case(IBV_WR_SEND, big, 1, false);
		goto quit;
	}

	post_errors();
	for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		for (s = 0; s < 7; s++)
			rc_case(ops[o], sizes[s], 1, false);
		rc_case(ops[o], mtu_bytes - 1, 3, false);
		rc_case(ops[o], mtu_bytes + 1, 3, false);
		rc_case(ops[o], 64 << 10, 3, false);
		if (ops[o] == IBV_WR_RDMA_READ || !max_inline)
			continue;
		rc_case(ops[o], 1, 1, true);
		rc_case(ops[o], max_inline, 1, true);
		if (max_inline >= 3)
			rc_case(ops[o], max_inline, 3, true);
	}

	atomic_case("swaps on match", IBV_WR_ATOMIC_CMP_AND_SWP,
		    0x1122334455667788ull, 0x1122334455667788ull,
		    0x8877665544332211ull, 0x8877665544332211ull);
	atomic_case("keeps on mismatch", IBV_WR_ATOMIC_CMP_AND_SWP,
		    0x1122334455667788ull, 0x1122334455667789ull,
		    0x8877665544332211ull, 0x1122334455667788ull);
	atomic_case("adds", IBV_WR_ATOMIC_FETCH_AND_ADD,
		    0x00000000ffffffffull, 0x0000000100000001ull, 0,
		    0x0000000200000000ull);
	atomic_case("wraps", IBV_WR_ATOMIC_FETCH_AND_ADD,
		    0xfffffffffffffffeull, 5, 0, 3);

	/* UD is unreliable by definition: -U skips it on lossy links */
	if (!no_ud) {
		ud_case(0, 1, false, false);
		ud_case(1, 1, false, false);
		ud_case(mtu_bytes - 1, 1, false, false);
		ud_case(mtu_bytes, 1, false, false);
		ud_case(mtu_bytes, 3, false, false);
		ud_case(1, 1, false, true);
		ud_case(mtu_bytes, 1, false, true);
		if (ud_max_inline)
			ud_case(ud_max_inline, 1, true, false);
	}

	full_sq();

	err_case("wrong rkey", IBV_WR_RDMA_WRITE, E_RKEY, MK_MAIN,
		 IBV_WC_REM_ACCESS_ERR, false);
	err_case("wrong rkey", IBV_WR_RDMA_READ, E_RKEY, MK_MAIN,
		 IBV_WC_REM_ACCESS_ERR, false);
	err_case("wrong rkey", IBV_WR_ATOMIC_FETCH_AND_ADD, E_RKEY, MK_MAIN,
		 IBV_WC_REM_ACCESS_ERR, false);
	err_case("MR without REMOTE_WRITE", IBV_WR_RDMA_WRITE, E_MR,
		 MK_NOWRITE, IBV_WC_REM_ACCESS_ERR, false);
	err_case("MR without REMOTE_WRITE", IBV_WR_RDMA_WRITE_WITH_IMM, E_MR,
		 MK_NOWRITE, IBV_WC_REM_ACCESS_ERR, false);
	err_case("MR without REMOTE_READ", IBV_WR_RDMA_READ, E_MR, MK_NOREAD,
		 IBV_WC_REM_ACCESS_ERR, false);
	err_case("MR without REMOTE_ATOMIC", IBV_WR_ATOMIC_CMP_AND_SWP, E_MR,
		 MK_NOATOMIC, IBV_WC_REM_ACCESS_ERR, false);
	err_case("MR without REMOTE_ATOMIC", IBV_WR_ATOMIC_FETCH_AND_ADD,
		 E_MR, MK_NOATOMIC, IBV_WC_REM_ACCESS_ERR, false);
	err_case("out of bounds (start)", IBV_WR_RDMA_WRITE, E_OOB_START,
		 MK_SMALL, IBV_WC_REM_ACCESS_ERR, false);
	err_case("out of bounds (end)", IBV_WR_RDMA_WRITE, E_OOB_END,
		 MK_SMALL, IBV_WC_REM_ACCESS_ERR, false);
	err_case("out of bounds (one byte too long, multi-packet)",
		 IBV_WR_RDMA_WRITE, E_OOB_LONG, MK_SMALL,
		 IBV_WC_REM_ACCESS_ERR, false);
	err_case("out of bounds (start)", IBV_WR_RDMA_READ, E_OOB_START,
		 MK_SMALL, IBV_WC_REM_ACCESS_ERR, false);
	err_case("out of bounds (end)", IBV_WR_RDMA_READ, E_OOB_END,
		 MK_SMALL, IBV_WC_REM_ACCESS_ERR, false);
	err_case("out of bounds (end)", IBV_WR_ATOMIC_CMP_AND_SWP, E_OOB_END,
		 MK_SMALL, IBV_WC_REM_ACCESS_ERR, false);
	err_case("MR of another PD", IBV_WR_RDMA_WRITE, E_MR, MK_PD2,
		 IBV_WC_REM_ACCESS_ERR, false);
	err_case("MR of another PD", IBV_WR_RDMA_READ, E_MR, MK_PD2,
		 IBV_WC_REM_ACCESS_ERR, false);
	err_case("MR of another PD", IBV_WR_ATOMIC_FETCH_AND_ADD, E_MR,
		 MK_PD2, IBV_WC_REM_ACCESS_ERR, false);
	err_case("unaligned", IBV_WR_ATOMIC_FETCH_AND_ADD, E_UNALIGNED,
		 MK_MAIN, IBV_WC_SUCCESS, true);
	err_case("unaligned", IBV_WR_ATOMIC_CMP_AND_SWP, E_UNALIGNED,
		 MK_MAIN, IBV_WC_SUCCESS, true);
	err_case("bad local lkey", IBV_WR_RDMA_WRITE, E_LKEY, MK_MAIN,
		 IBV_WC_LOC_PROT_ERR, false);
	err_case("bad local lkey", IBV_WR_SEND, E_LKEY, MK_MAIN,
		 IBV_WC_LOC_PROT_ERR, false);
	err_case("local SGE beyond its MR", IBV_WR_RDMA_WRITE, E_LOCAL_OOB,
		 MK_MAIN, IBV_WC_LOC_PROT_ERR, false);
	err_case("into a local MR without LOCAL_WRITE", IBV_WR_RDMA_READ,
		 E_LOCAL_RO, MK_MAIN, IBV_WC_LOC_PROT_ERR, false);
	err_case("longer than the posted receive", IBV_WR_SEND, E_RECV_SHORT,
		 MK_MAIN, IBV_WC_REM_INV_REQ_ERR, false);

	/* The pair works again after all that. */
	rc_case(IBV_WR_RDMA_WRITE, 64 << 10, 3, false);

quit:
	memset(&m, 0, sizeof(m));
	m.cmd = C_QUIT;
	send_msg(&m);
	recv_msg(&m);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}

static void on_alarm(int sig)
{
	(void)sig;
	printf("FAIL fatal: overall time limit hit\n");
	fflush(stdout);
	_exit(3);
}

int main(int argc, char **argv)
{
	const char *dev = "mrc0";
	struct ibv_device **list;
	struct ibv_port_attr pa;
	int port = 18517, c, i, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "B:d:g:p:t:RU")) != -1) {
		switch (c) {
		case 'U':
			no_ud = true;
			break;
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gid_idx = atoi(optarg);
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 't':
			timeout_s = atoi(optarg);
			break;
		case 'R':
			lenient = true;
			break;
		case 'B': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 0);

			if (*end == 'K' || *end == 'k')
				v <<= 10;
			else if (*end == 'M' || *end == 'm')
				v <<= 20;
			else if (*end == 'G' || *end == 'g')
				v <<= 30;
			/* lengths and pattern offsets are 32 bits */
			if (!v || v > (1ull << 31))
				die("-B %s: 1 .. 2G", optarg);
			big = v;
			big_only = true;
			break;
		}
		default:
			fprintf(stderr,
				"usage: %s -d DEV -g GIDIDX [-p PORT] [-t SECS] [-B SIZE] [-R] [-U] [SERVER]\n",
				argv[0]);
			return 2;
		}
	}
	is_server = optind >= argc;
	srand(time(NULL) ^ getpid());
	signal(SIGALRM, on_alarm);
	/* the big cases: 3 completion waits and the verifications */
	alarm(big_only ? 900 + 4 * timeout_s : 900);

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("no device %s", dev);
	if (ibv_query_device(ctx, &dattr) || ibv_query_port(ctx, 1, &pa))
		die("query_device/port");
	my_mtu = pa.active_mtu;
	if (ibv_query_gid(ctx, 1, gid_idx, &my_gid))
		die("query_gid %d", gid_idx);
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	if (!pd || !pd2)
		die("alloc_pd");
	buf = aligned_alloc(4096, BUF_SZ);
	if (!buf)
		die("alloc");
	memset(buf, 0, BUF_SZ);
	mr = ibv_reg_mr(pd, buf, BUF_SZ, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		die("reg_mr: %s", strerror(errno));
	return is_server ? server(port) : client(argv[optind], port);
}
