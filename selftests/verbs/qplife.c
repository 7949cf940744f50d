// SPDX-License-Identifier: GPL-2.0
/*
 * qplife: the end of an RC QP's peer, and a QP reused through RESET, between
 * two hosts over any libibverbs device (mrc0, or rxe0 for reference).
 *
 *   qplife -d mrc0 -g 1 [-p port]                               (server)
 *   qplife -d mrc0 -g 1 [-p port] -m vanish [-c T:R,...] [-w N] [-s BYTES]
 *          -X 'blackhole command' -Y 'restore command' SERVER_IP   (client)
 *   qplife -d mrc0 -g 1 [-p port] -m reuse [-n CYCLES] SERVER_IP    (client)
 *   qplife -d mrc0 -g 1 [-p port] -m dereg [-n ROUNDS] [-S SLACK] SERVER_IP
 *
 * vanish: for each local ACK timeout T and retry_cnt R given with -c
 * (default 14:7,16:3,18:2), connect a fresh RC pair, check the data path
 * (a WRITE read back), post half a window of N (-w, 32) WRITEs and SENDs
 * of -s bytes (64 KiB) each, run the blackhole command (-X, e.g. netem
 * loss 100% on this node's egress), post the other half, and measure when
 * they complete. Every WR must complete exactly once; the first error
 * must be IBV_WC_RETRY_EXC_ERR (the rest flushed), none succeeds after it,
 * and it must come within the bound T and R define. IB's is (R + 1)
 * local ACK timeouts of 4.096 us * 2^T; metaroce gives up once R + 1
 * timeouts AND at least 2 s passed without a word from the peer
 * (protocol.rst, "Giving up"), and checks that at its retransmission
 * timer, which backs off to at most 500 ms. The peer falls silent while
 * the blackhole command runs (from t0 to t1), so the error must come
 * after t0 + max((R + 1) * T, 2 s) and before t1 + that + 0.5 s (+ -S
 * seconds of slack for an emulated host, default 0.25); times are printed
 * from t0. The -X command may also make the peer's device go away
 * (qplife.sh); it returns once the peer is gone. Then the restore command
 * (-Y) runs.
 *
 * reuse: one RC QP on each side lives through -n (50) cycles of: connect
 * from RESET with fresh random PSNs, traffic with every byte checked
 * (WRITEs, READs, SENDs both ways), a window of WRs still in flight when
 * both sides move to ERR, every WR completing exactly once (success or
 * flushed), then RESET. A reused QP must behave like a new one: no
 * completion, event or packet of an earlier life may leak into the next.
 *
 * dereg: the responder deregisters an MR while a READ from it is served,
 * or before it arrives (protocol.rst, "READ and atomics": the responder
 * NAKs REM_ACCESS for the request's PSN and moves to ERR; `Fatal NAK`_:
 * the READ completes REM_ACCESS_ERR, every later WR WR_FLUSH_ERR). The
 * server registers MR A (16 MiB) and MR B (1 MiB), each holding a seeded
 * pattern; after a deregistration it overwrites the memory with another
 * pattern (poison), so a byte served from a deregistered MR shows. Per
 * round (-n, default 3), one fresh QP pair for each case:
 *   before: A deregistered, then READ A (1 MiB), READ B, SEND posted;
 *   mid:    READ A (16 MiB), READ B, SEND posted; once 2 MiB of A landed
 *           (the READ not complete), A is deregistered;
 *   queued: the same WRs; once 2 MiB of A landed, B is deregistered while
 *           READ B waits behind READ A at the responder.
 * The READ of the deregistered MR must complete REM_ACCESS_ERR within
 * 2 s (+ -S) of the client's request to deregister -- in "queued", of
 * READ A's completion, since READ B runs only once READ A was served.
 * (The NAK goes out at the next response packet; 2 s is metaroce's least
 * give-up time, so an error that waited for RETRY_EXC would miss it.)
 * Every later WR completes WR_FLUSH_ERR, each WR once, in order; READ A
 * in "queued" completes before READ B, successfully with every byte
 * right: the link is in order (no netem) and the responder answers READ A
 * in full before it NAKs READ B, so nothing is outstanding before the
 * NAKed WR (`Fatal NAK`_ step 1) unless the receiving host reordered the
 * QP's packets itself (the NAK processed before the READ responses it
 * follows, as kernel/rx.c's deferral to the QP's worker once did). Under
 * loss or reordering a flush would be allowed (step 2); this lab has none.
 * No byte of a deregistered MR lands after its deregistration: every
 * destination byte is the client's own fill or the MR's pattern, never
 * the poison, and nothing changes in the second after the last
 * completion. The server checks that ibv_dereg_mr returned within 1 s
 * (+ -S), its QP reported IBV_EVENT_QP_ACCESS_ERR and is in ERR, and
 * each of its posted receives completed WR_FLUSH_ERR, but for the SEND,
 * which (not fenced) may have been received first with its bytes right
 * (not in "before", whose READ is NAKed on arrival).
 *
 * Prints "ok ..." / "FAIL ..." lines and "N passed, N failed"; exits
 * non-zero on any failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define MAX_WIN		256
#define RQ_DEPTH	(2 * MAX_WIN)

static int passed, failed;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		passed++;						\
		printf("ok    ");					\
	} else {							\
		failed++;						\
		printf("FAIL  ");					\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	fflush(stdout);							\
} while (0)

static void die(const char *what)
{
	printf("FAIL  fatal: %s (%s)\n", what, strerror(errno));
	printf("%d passed, %d failed\n", passed, failed + 1);
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ----------------------------------------------------------- OOB */

enum { M_HELLO = 1, M_CHECK, M_ERR, M_RESET, M_BYE, M_DEREG, M_DCHECK };

struct side {
	uint32_t qpn, psn;
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
};

struct msg {
	uint32_t cmd;
	uint32_t timeout, retry;	/* M_HELLO */
	uint32_t seed, len, n;		/* M_CHECK: what to expect */
	int32_t ok;			/* replies */
	struct side s;
	/* dereg mode: MR B (A is s.addr/s.rkey); M_DEREG/M_DCHECK results */
	uint64_t addr_b;
	uint32_t rkey_b;
	uint32_t usec;			/* M_DEREG: ibv_dereg_mr took */
	uint32_t nflush, nother;	/* M_DCHECK: receives completed */
	uint32_t nrecv;			/* M_DCHECK: the SEND received */
	int32_t event, state;		/* M_DCHECK: QP event seen, state */
	int32_t ostatus, oopcode;	/* M_DCHECK: the first other wc */
	uint64_t owr_id;
};

static int sock = -1;

static int xfer(struct msg *m, bool out)
{
	size_t done = 0;
	ssize_t n;

	while (done < sizeof(*m)) {
		n = out ? send(sock, (char *)m + done, sizeof(*m) - done,
			       MSG_NOSIGNAL) :
			  recv(sock, (char *)m + done, sizeof(*m) - done, 0);
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

static void oob_opts(void)
{
	struct timeval tv = { .tv_sec = 120 };
	int one = 1;

	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int oob_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM }, *res, *r;
	int tries;

	for (tries = 0; tries < 100; tries++) {
		if (getaddrinfo(host, port, &hints, &res))
			return -1;
		for (r = res; r; r = r->ai_next) {
			sock = socket(r->ai_family, r->ai_socktype, 0);
			if (sock < 0)
				continue;
			if (!connect(sock, r->ai_addr, r->ai_addrlen))
				break;
			close(sock);
			sock = -1;
		}
		freeaddrinfo(res);
		if (sock >= 0) {
			oob_opts();
			return 0;
		}
		usleep(200000);
	}
	return -1;
}

/* --------------------------------------------------------- verbs */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int gid_index = 1;
static union ibv_gid my_gid;
/*
 * buf: [0, half) WRITE target (and READ source), [half, 2 half) what we
 * send from, [2 half, 3 half) where receives land.
 */
static uint8_t *buf;
static size_t half;
static struct ibv_mr *mr;

struct qpx {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static uint8_t pat(uint32_t seed, size_t i)
{
	uint32_t x = (uint32_t)i * 0x9e3779b1u + seed * 0x85ebca77u;

	return (uint8_t)(x >> 24 ^ seed);
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

static long verify(const uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(seed, i))
			return (long)i;
	return -1;
}

static void open_dev(const char *name, size_t bytes)
{
	struct ibv_device **list;
	int n, i;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		die("open device");
	if (ibv_query_gid(ctx, 1, gid_index, &my_gid))
		die("query gid");
	pd = ibv_alloc_pd(ctx);
	half = bytes;
	buf = aligned_alloc(4096, 3 * half);
	if (!pd || !buf)
		die("pd/buffer");
	memset(buf, 0, 3 * half);
	mr = ibv_reg_mr(pd, buf, 3 * half, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		die("reg_mr");
}

static void qpx_new(struct qpx *q)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = MAX_WIN, .max_recv_wr = RQ_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	q->cq = ibv_create_cq(ctx, 4 * MAX_WIN, NULL, NULL, 0);
	if (!q->cq)
		die("create_cq");
	ia.send_cq = q->cq;
	ia.recv_cq = q->cq;
	q->qp = ibv_create_qp(pd, &ia);
	if (!q->qp)
		die("create_qp");
}

static void qpx_free(struct qpx *q)
{
	if (q->qp)
		ibv_destroy_qp(q->qp);
	if (q->cq)
		ibv_destroy_cq(q->cq);
	q->qp = NULL;
	q->cq = NULL;
}

static int modify_state(struct ibv_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = st };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int post_recvs(struct ibv_qp *qp, int n);

/*
 * RESET -> INIT (then @nrecv receives posted) -> RTR -> RTS towards @peer,
 * with our PSN @psn.
 */
static int connect_qp(struct ibv_qp *qp, const struct side *peer, uint32_t psn,
		      uint8_t timeout, uint8_t retry, int nrecv)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ||
	    post_recvs(qp, nrecv))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = 7;
	a.sq_psn = psn;
	a.max_rd_atomic = 16;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void my_side(struct side *s, struct ibv_qp *qp, uint32_t psn)
{
	memset(s, 0, sizeof(*s));
	s->qpn = qp->qp_num;
	s->psn = psn;
	s->gid = my_gid;
	s->addr = (uintptr_t)buf;
	s->rkey = mr->rkey;
}

static int post_recvs(struct ibv_qp *qp, int n)
{
	struct ibv_sge sge = { (uintptr_t)buf + 2 * half, (uint32_t)half,
			       mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int i;

	for (i = 0; i < n; i++) {
		wr.wr_id = 0x1000000 + i;
		if (ibv_post_recv(qp, &wr, &bad))
			return -1;
	}
	return 0;
}

/* One signaled WR from the source half to the peer's target half. */
static int post_one(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id,
		    size_t off, size_t len, const struct side *peer)
{
	struct ibv_sge sge = { (uintptr_t)buf + half + off, (uint32_t)len,
			       mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	/* a READ fetches the peer's WRITE target into ours */
	if (op == IBV_WR_RDMA_READ)
		sge.addr = (uintptr_t)buf + off;
	wr.wr.rdma.remote_addr = peer->addr + off;
	wr.wr.rdma.rkey = peer->rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/* Poll until @n completions or @secs pass; returns how many came. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, double secs)
{
	double end = now_s() + secs;
	int got = 0, k;

	while (got < n && now_s() < end) {
		k = ibv_poll_cq(cq, n - got, wc + got);
		if (k < 0)
			return got;
		got += k;
		if (!k)
			usleep(200);
	}
	return got;
}

/* Drain @cq now (completions before a RESET); count them. */
static int drain_cq(struct ibv_cq *cq)
{
	struct ibv_wc wc[64];
	int n = 0, k;

	while ((k = poll_n(cq, wc, 64, 0.05)) > 0)
		n += k;
	return n;
}

/* ------------------------------------------------ dereg (server) */

#define DR_A_LEN	(16u << 20)
#define DR_B_LEN	(1u << 20)
#define DR_LANDED	(2u << 20)	/* of READ A, before a mid-READ dereg */
#define DR_POISON	0x3c	/* XORed into an MR's pattern after dereg */
#define DR_PRE		0xa5	/* XORed: the client's fill before a READ */
#define DR_EVENT_SECS	2.0	/* the server waits this long for its event */

static uint8_t *dr_buf[2];
static struct ibv_mr *dr_mr[2];
static const uint32_t dr_len[2] = { DR_A_LEN, DR_B_LEN };

static void dr_free(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (dr_mr[i])
			ibv_dereg_mr(dr_mr[i]);
		dr_mr[i] = NULL;
		free(dr_buf[i]);
		dr_buf[i] = NULL;
	}
}

/* MR A (pattern @seed) and MR B (@seed + 1), remote READ only. */
static int dr_setup(uint32_t seed)
{
	int i;

	for (i = 0; i < 2; i++) {
		dr_buf[i] = aligned_alloc(4096, dr_len[i]);
		if (!dr_buf[i])
			return -1;
		fill(dr_buf[i], dr_len[i], seed + i);
		dr_mr[i] = ibv_reg_mr(pd, dr_buf[i], dr_len[i],
				      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_READ);
		if (!dr_mr[i])
			return -1;
	}
	return 0;
}

/* Acknowledge and drop every queued async event (the fd is non-blocking). */
static void async_drain(void)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(ctx, &ev))
		ibv_ack_async_event(&ev);
}

/* Whether event @type for @qp comes within @secs (others are dropped). */
static bool async_wait(struct ibv_qp *qp, enum ibv_event_type type,
		       double secs)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	double end = now_s() + secs;
	struct ibv_async_event ev;
	bool seen = false;

	while (!seen && now_s() < end) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		while (!ibv_get_async_event(ctx, &ev)) {
			if (ev.event_type == type && ev.element.qp == qp)
				seen = true;
			ibv_ack_async_event(&ev);
		}
	}
	return seen;
}

/* ------------------------------------------------------- server */

/*
 * Serve one connection: M_HELLO creates the QP (vanish) or connects the
 * long-lived one (reuse), M_CHECK verifies what the client wrote and sent,
 * M_ERR/M_RESET move the QP, M_BYE ends.
 */
static void serve(const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET6,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *res;
	struct qpx q = {};
	struct ibv_wc wc[RQ_DEPTH];
	struct msg m;
	bool reuse_qp = false;
	int ls, one = 1, k, i, poison = -1;

	if (fcntl(ctx->async_fd, F_SETFL,
		  fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK))
		die("async fd");
	if (getaddrinfo(NULL, port, &hints, &res))
		die("getaddrinfo");
	ls = socket(res->ai_family, res->ai_socktype, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, res->ai_addr, res->ai_addrlen) || listen(ls, 4))
		die("listen");
	freeaddrinfo(res);
	for (;;) {
		sock = accept(ls, NULL, NULL);
		if (sock < 0)
			die("accept");
		oob_opts();
		while (!xfer(&m, false)) {
			switch (m.cmd) {
			case M_HELLO: {
				struct side peer = m.s;
				uint32_t psn = random() & 0xffffff;

				/* retry 0x80: reuse the QP of the last life */
				reuse_qp = m.retry & 0x80;
				if (!reuse_qp || !q.qp) {
					qpx_free(&q);
					qpx_new(&q);
				}
				m.ok = connect_qp(q.qp, &peer, psn,
						  (uint8_t)m.timeout,
						  (uint8_t)(m.retry & 7),
						  RQ_DEPTH / 2) ? -1 : 0;
				my_side(&m.s, q.qp, psn);
				/* retry 0x40: the dereg mode's MRs A and B */
				if (m.retry & 0x40) {
					dr_free();
					async_drain();
					if (dr_setup(m.seed)) {
						m.ok = -1;
						break;
					}
					m.s.addr = (uintptr_t)dr_buf[0];
					m.s.rkey = dr_mr[0]->rkey;
					m.addr_b = (uintptr_t)dr_buf[1];
					m.rkey_b = dr_mr[1]->rkey;
				}
				break;
			}
			case M_DEREG: {
				/* m.n: which MR; then its memory is poisoned */
				int w = m.n & 1;
				double t = now_s();

				m.ok = dr_mr[w] && !ibv_dereg_mr(dr_mr[w]) ?
				       0 : -1;
				m.usec = (uint32_t)((now_s() - t) * 1e6);
				dr_mr[w] = NULL;
				poison = w;	/* after the reply */
				break;
			}
			case M_DCHECK: {
				/*
				 * The access error event, ERR, and every
				 * receive posted at connect flushed.
				 */
				struct ibv_qp_attr a;
				struct ibv_qp_init_attr ia;

				m.event = async_wait(q.qp,
						     IBV_EVENT_QP_ACCESS_ERR,
						     DR_EVENT_SECS);
				m.state = ibv_query_qp(q.qp, &a, IBV_QP_STATE,
						       &ia) ? -1 :
					  (int32_t)a.qp_state;
				k = poll_n(q.cq, wc, RQ_DEPTH / 2,
					   DR_EVENT_SECS);
				k += poll_n(q.cq, wc + k, RQ_DEPTH - k, 0.2);
				m.nflush = 0;
				m.nother = 0;
				m.nrecv = 0;
				for (i = 0; i < k; i++) {
					/* a flushed wc's opcode is undefined */
					if (wc[i].status == IBV_WC_WR_FLUSH_ERR &&
					    wc[i].wr_id >= 0x1000000) {
						m.nflush++;
						continue;
					}
					/*
					 * The SEND, 64 B of pattern seed + 2:
					 * not fenced, it may be executed before
					 * the READs' responses end.
					 */
					if (wc[i].status == IBV_WC_SUCCESS &&
					    wc[i].opcode == IBV_WC_RECV &&
					    wc[i].byte_len == 64 && !m.nrecv &&
					    verify(buf + 2 * half, 64,
						   m.seed + 2) < 0) {
						m.nrecv++;
						continue;
					}
					if (!m.nother++) {
						m.ostatus = wc[i].status;
						m.oopcode = wc[i].opcode;
						m.owr_id = wc[i].wr_id;
					}
				}
				break;
			}
			case M_CHECK:
				/* WRITE target: the first m.len bytes */
				m.ok = verify(buf, m.len, m.seed) < 0;
				/* m.n SENDs, each of m.len bytes, received */
				k = poll_n(q.cq, wc, (int)m.n, 30);
				for (i = 0; i < k; i++)
					if (wc[i].status != IBV_WC_SUCCESS ||
					    wc[i].opcode != IBV_WC_RECV ||
					    wc[i].byte_len != m.len)
						m.ok = 0;
				if (k != (int)m.n)
					m.ok = 0;
				/* the last SEND (seed + 1) where receives land */
				if (m.n && verify(buf + 2 * half, m.len,
						  m.seed + 1) >= 0)
					m.ok = 0;
				break;
			case M_ERR:
				/*
				 * The receives not used by M_CHECK (m.n of
				 * them) each complete once: a SEND of the
				 * window, or flushed.
				 */
				m.ok = modify_state(q.qp, IBV_QPS_ERR) ? -1 : 0;
				k = poll_n(q.cq, wc, (int)m.n, 10);
				if (k != (int)m.n ||
				    poll_n(q.cq, wc, 1, 0.05))
					m.ok = -1;
				m.n = k;
				break;
			case M_RESET:
				m.ok = modify_state(q.qp, IBV_QPS_RESET) ? -1 : 0;
				drain_cq(q.cq);
				break;
			case M_BYE:
				qpx_free(&q);
				dr_free();
				close(sock);
				close(ls);
				return;
			}
			if (xfer(&m, true))
				break;
			for (i = 0; poison >= 0 && i < (int)dr_len[poison]; i++)
				dr_buf[poison][i] = pat(m.seed + poison, i) ^
						    DR_POISON;
			poison = -1;
		}
		close(sock);
		sock = -1;
		if (!reuse_qp)
			qpx_free(&q);
		dr_free();
	}
}

/* ------------------------------------------------------- vanish */

static const char *xcmd, *ycmd;
static int window = 32;
static double slack = 0.25;	/* -S: seconds late a timer may fire */
static size_t msg_len = 65536;

static void vanish_one(const char *host, const char *port, int t, int r)
{
	double tib = 4.096e-6 * (double)(1ULL << t), t0, t1, first = -1,
	       last = -1;
	double limit = (r + 1) * tib > 2.0 ? (r + 1) * tib : 2.0, lo, hi;
	struct ibv_wc wc[MAX_WIN];
	int seen[MAX_WIN] = {}, n_ok = 0, n_exc = 0, n_flush = 0,
	    n_other = 0, dup = 0, late_ok = 0, k, i, got = 0;
	enum ibv_wc_status first_st = IBV_WC_SUCCESS;
	struct qpx q = {};
	struct msg m = {};
	char name[64];
	uint32_t psn = random() & 0xffffff;
	long bad;

	snprintf(name, sizeof(name), "vanish timeout %d retry_cnt %d", t, r);
	if (oob_connect(host, port))
		die("connect to the server");
	qpx_new(&q);
	m.cmd = M_HELLO;
	m.timeout = t;
	m.retry = r;
	my_side(&m.s, q.qp, psn);
	if (xfer(&m, true) || xfer(&m, false) || m.ok)
		die("hello");
	if (connect_qp(q.qp, &m.s, psn, t, r, 0))
		die("connect QP");

	/* the data path works: WRITE, then READ it back */
	fill(buf + half, msg_len, 7);
	if (post_one(q.qp, IBV_WR_RDMA_WRITE, 1, 0, msg_len, &m.s) ||
	    post_one(q.qp, IBV_WR_RDMA_READ, 2, 0, msg_len, &m.s))
		die("post");
	k = poll_n(q.cq, wc, 2, 30);
	bad = verify(buf, msg_len, 7);
	CHECK(k == 2 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[1].status == IBV_WC_SUCCESS && bad < 0,
	      "%s: WRITE + READ back before the blackhole (%d wc, byte %ld)",
	      name, k, bad);

	/* half a window in flight, blackhole, the other half */
	for (i = 0; i < window / 2; i++)
		post_one(q.qp, i & 1 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, i,
			 0, msg_len, &m.s);
	t0 = now_s();
	if (system(xcmd))
		printf("      blackhole command failed: %s\n", xcmd);
	t1 = now_s();
	/*
	 * The peer falls silent somewhere in [t0, t1]: the error may not come
	 * before t0 + limit (less a timer tick), and must come by t1 + limit
	 * + RTO_max (the check runs when the timer fires) + the slack (-S).
	 */
	lo = limit - 0.05;
	hi = limit + (t1 - t0) + 0.5 + slack;
	for (; i < window; i++)
		post_one(q.qp, i & 1 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, i,
			 0, msg_len, &m.s);

	/* everything completes, once; then 1 s more for duplicates */
	while (got < window && now_s() - t0 < hi + 20) {
		k = poll_n(q.cq, wc, MAX_WIN, 0.05);
		for (i = 0; i < k; i++) {
			uint64_t id = wc[i].wr_id;

			if (id >= (uint64_t)window || seen[id]++) {
				dup++;
				continue;
			}
			got++;
			last = now_s() - t0;
			if (wc[i].status == IBV_WC_SUCCESS) {
				n_ok++;
				if (first >= 0)
					late_ok++;
				continue;
			}
			if (first < 0) {
				first = now_s() - t0;
				first_st = wc[i].status;
			}
			if (wc[i].status == IBV_WC_RETRY_EXC_ERR)
				n_exc++;
			else if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				n_flush++;
			else
				n_other++;
		}
	}
	k = poll_n(q.cq, wc, MAX_WIN, 1);
	dup += k;
	printf("      blackhole command took %.3f s; %d of %d WRs completed: %d ok, %d RETRY_EXC_ERR, %d FLUSH_ERR, %d other, %d duplicates/unknown\n",
	       t1 - t0, got, window, n_ok, n_exc, n_flush, n_other, dup);
	CHECK(got == window && !dup,
	      "%s: every WR completed exactly once (%d of %d, %d extra)",
	      name, got, window, dup);
	CHECK(first_st == IBV_WC_RETRY_EXC_ERR && !late_ok && !n_other &&
	      n_ok + n_exc + n_flush == window && n_ok < window,
	      "%s: first error %s, then flushed (%d ok before it, %d ok after)",
	      name, ibv_wc_status_str(first_st), n_ok, late_ok);
	CHECK(first >= lo && first <= hi,
	      "%s: RETRY_EXC_ERR %.3f s after the blackhole began; bound [%.2f, %.2f] s (IB: (retry_cnt + 1) x %.3f s = %.3f s; metaroce: at least 2 s)",
	      name, first, lo, hi, tib, (r + 1) * tib);
	CHECK(last >= 0 && last <= hi + 0.5,
	      "%s: last completion after %.3f s", name, last);
	printf("# vanish timeout %d retry_cnt %d: bound %.3f s, measured %.3f s (all done at %.3f s)\n",
	       t, r, limit, first, last);
	if (system(ycmd))
		printf("      restore command failed: %s\n", ycmd);
	close(sock);
	sock = -1;
	qpx_free(&q);
}

/* ------------------------------------------------ dereg (client) */

enum { DR_BEFORE, DR_MID, DR_QUEUED, DR_MAX };
static const char *const dr_case[DR_MAX] = { "before", "mid", "queued" };
static uint8_t *dbuf, *dsnap;	/* READ A's then READ B's destination */
static struct ibv_mr *dmr;

static void pre_fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed, i) ^ DR_PRE;
}

/*
 * A READ destination: bytes holding the MR's pattern (landed), the
 * client's fill (not landed), the poison (served from the deregistered
 * MR), and anything else; *first_bad: the first poison/other byte or -1.
 */
struct dr_count {
	size_t src, pre, poison, junk;
	long first_bad;
};

static struct dr_count classify(const uint8_t *p, size_t len, uint32_t seed)
{
	struct dr_count c = { .first_bad = -1 };
	size_t i;

	for (i = 0; i < len; i++) {
		uint8_t want = pat(seed, i);

		if (p[i] == want) {
			c.src++;
			continue;
		}
		if (p[i] == (want ^ DR_PRE)) {
			c.pre++;
			continue;
		}
		if (p[i] == (want ^ DR_POISON))
			c.poison++;
		else
			c.junk++;
		if (c.first_bad < 0)
			c.first_bad = (long)i;
	}
	return c;
}

static int post_wr(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id,
		   void *addr, uint32_t len, uint32_t lkey, uint64_t raddr,
		   uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/*
 * One case of one round on a fresh QP pair: WR 0 READ A, WR 1 READ B,
 * WR 2 SEND; the server deregisters A (before, mid) or B (queued).
 */
static void dereg_one(const char *host, const char *port, int round, int c)
{
	uint32_t seed = 5000 + 16 * round + 2 * c, psn = random() & 0xffffff;
	uint32_t a_len = c == DR_BEFORE ? 1u << 20 : DR_A_LEN;
	int victim = c == DR_QUEUED ? 1 : 0, got = 0, extra = 0, k, i;
	double bound = 2.0 + slack, t_req = 0, t_err = -1, t_a = 0, last_move;
	const volatile uint8_t *va = dbuf;
	size_t prefix;
	enum ibv_wc_status st[3] = { IBV_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR,
				     IBV_WC_GENERAL_ERR };
	uint8_t *da = dbuf, *db = dbuf + DR_A_LEN;
	int seen[3] = {}, order[3] = { -1, -1, -1 };
	struct ibv_wc wc[8];
	struct dr_count ca, cb;
	struct qpx q = {};
	struct msg m = {};
	uint64_t addr_b;
	uint32_t rkey_b;
	size_t landed = 0;
	bool early = false, reached = false, stat_ok = true;
	char name[64];

	snprintf(name, sizeof(name), "dereg %s, round %d", dr_case[c], round);
	if (oob_connect(host, port))
		die("connect to the server");
	qpx_new(&q);
	m.cmd = M_HELLO;
	m.timeout = 14;
	m.retry = 7 | 0x40;
	m.seed = seed;
	my_side(&m.s, q.qp, psn);
	if (xfer(&m, true) || xfer(&m, false) || m.ok)
		die("hello");
	if (connect_qp(q.qp, &m.s, psn, 14, 7, 0))
		die("connect QP");
	addr_b = m.addr_b;
	rkey_b = m.rkey_b;
	pre_fill(da, DR_A_LEN, seed);
	pre_fill(db, DR_B_LEN, seed + 1);

	fill(buf + half, 64, seed + 2);	/* the SEND's bytes */
	if (c == DR_BEFORE) {
		m.cmd = M_DEREG;
		m.n = 0;
		t_req = now_s();
		if (xfer(&m, true) || xfer(&m, false))
			die("dereg");
	}
	if (post_wr(q.qp, IBV_WR_RDMA_READ, 0, da, a_len, dmr->lkey, m.s.addr,
		    m.s.rkey) ||
	    post_wr(q.qp, IBV_WR_RDMA_READ, 1, db, DR_B_LEN, dmr->lkey,
		    addr_b, rkey_b) ||
	    post_wr(q.qp, IBV_WR_SEND, 2, buf + half, 64, mr->lkey, 0, 0))
		die("post");
	if (c != DR_BEFORE) {
		/* READ A under way: its first DR_LANDED bytes are here */
		double end = now_s() + 30;
		const volatile uint8_t *v = da;

		while (now_s() < end &&
		       v[DR_LANDED - 1] != pat(seed, DR_LANDED - 1)) {
			k = ibv_poll_cq(q.cq, 1, wc);
			if (k > 0) {
				early = true;
				break;
			}
			usleep(100);
		}
		reached = v[DR_LANDED - 1] == pat(seed, DR_LANDED - 1);
		for (landed = 0; landed < DR_A_LEN &&
		     v[landed] == pat(seed, landed); landed++)
			;
		CHECK(!early && reached,
		      "%s: READ A under way when the dereg is asked (byte %u landed, the first %zu B of %u in order, %s)",
		      name, DR_LANDED - 1, landed, DR_A_LEN,
		      early ? "a WR already completed" : "no WR completed");
		if (early) {
			st[wc[0].wr_id < 3 ? wc[0].wr_id : 0] = wc[0].status;
			printf("      wr %llu completed %s before the dereg\n",
			       (unsigned long long)wc[0].wr_id,
			       ibv_wc_status_str(wc[0].status));
		}
		m.cmd = M_DEREG;
		m.n = c == DR_QUEUED ? 1 : 0;
		t_req = now_s();
		if (xfer(&m, true) || xfer(&m, false))
			die("dereg");
	}
	CHECK(!m.ok && m.usec <= (1.0 + slack) * 1e6,
	      "%s: server: ibv_dereg_mr of MR %c succeeded in %.3f s (bound %.2f s)",
	      name, m.n ? 'B' : 'A', m.usec / 1e6, 1.0 + slack);

	/*
	 * every WR completes once, in order; the victim with the error.
	 * The wait is bound + 10 s from the request or from the last time
	 * READ A's in-order prefix grew: "queued" has READ A (16 MiB) served
	 * first, which on the debug kernel (KASAN under TCG, ~1 MB/s) takes
	 * longer than that bound; a READ that stops moving still fails.
	 */
	last_move = t_req;
	prefix = landed;
	while (got < 3 && now_s() - last_move < bound + 10 &&
	       now_s() - t_req < 600) {
		size_t p0 = prefix;

		while (prefix < a_len && va[prefix] == pat(seed, prefix))
			prefix++;
		if (prefix > p0)
			last_move = now_s();
		k = poll_n(q.cq, wc, 8, 0.01);
		for (i = 0; i < k; i++) {
			uint64_t id = wc[i].wr_id;

			if (id >= 3 || seen[id]++) {
				extra++;
				continue;
			}
			order[got++] = (int)id;
			st[id] = wc[i].status;
			if (id == 0 && wc[i].status == IBV_WC_SUCCESS)
				t_a = now_s() - t_req;
			if (wc[i].status != IBV_WC_SUCCESS && t_err < 0)
				t_err = now_s() - t_req;
		}
	}
	memcpy(dsnap, dbuf, DR_A_LEN + DR_B_LEN);
	extra += poll_n(q.cq, wc, 8, 1.0);
	CHECK(got == 3 && !extra && order[0] == 0 && order[1] == 1 &&
	      order[2] == 2,
	      "%s: every WR completed exactly once, in order (%d of 3, %d extra)",
	      name, got, extra);
	for (i = 0; i < 3; i++) {
		if (i == victim)
			stat_ok &= st[i] == IBV_WC_REM_ACCESS_ERR;
		else if (i > victim)
			stat_ok &= st[i] == IBV_WC_WR_FLUSH_ERR;
		else if (c == DR_QUEUED)	/* Fatal NAK step 1 */
			stat_ok &= st[i] == IBV_WC_SUCCESS;
		else	/* Fatal NAK step 1 or 2 */
			stat_ok &= st[i] == IBV_WC_SUCCESS ||
				   st[i] == IBV_WC_WR_FLUSH_ERR;
	}
	CHECK(stat_ok,
	      "%s: READ %c (deregistered) REM_ACCESS_ERR, later WRs flushed%s: READ A %s, READ B %s, SEND %s",
	      name, victim ? 'B' : 'A',
	      c == DR_QUEUED ? ", READ A (served in full first) success" : "",
	      ibv_wc_status_str(st[0]),
	      ibv_wc_status_str(st[1]), ibv_wc_status_str(st[2]));
	/*
	 * READ B's error comes once READ A is served: "queued" counts from
	 * READ A's completion (if it succeeded), the others from the request.
	 */
	CHECK(t_err >= 0 && t_err - t_a <= bound,
	      "%s: the error completion came %.3f s after %s (bound %.2f s)",
	      name, t_err - t_a, t_a > 0 ? "READ A completed" :
	      "the dereg was asked", bound);

	/* bytes: never the poison; what a READ may hold */
	ca = classify(da, a_len, seed);
	cb = classify(db, DR_B_LEN, seed + 1);
	if (c == DR_QUEUED && st[0] == IBV_WC_SUCCESS)
		CHECK(ca.src == a_len,
		      "%s: READ A (completed) holds A's bytes (%zu of %u, first wrong byte %ld)",
		      name, ca.src, a_len, ca.first_bad);
	else if (c == DR_BEFORE)
		CHECK(ca.pre == a_len,
		      "%s: nothing of A landed (%zu B of A's pattern, %zu poison, %zu other)",
		      name, ca.src, ca.poison, ca.junk);
	else
		CHECK(!ca.poison && !ca.junk,
		      "%s: READ A's destination holds %zu B of A and %zu untouched, nothing from after the dereg (%zu poison, %zu other, first at %ld)",
		      name, ca.src, ca.pre, ca.poison, ca.junk, ca.first_bad);
	CHECK(cb.pre == DR_B_LEN,
	      "%s: nothing of B landed (%zu B of B's pattern, %zu poison, %zu other)",
	      name, cb.src, cb.poison, cb.junk);
	CHECK(!memcmp(dsnap, dbuf, DR_A_LEN + DR_B_LEN),
	      "%s: no byte changed in the second after the last completion",
	      name);

	/* the server's QP: access error event, ERR, receives flushed */
	m.cmd = M_DCHECK;
	m.seed = seed;
	if (xfer(&m, true) || xfer(&m, false))
		die("dcheck");
	/*
	 * The SEND may have been executed (IB does not order an unfenced
	 * SEND after a READ's responses; flushed at the requester, since it
	 * completes after the failed READ), "before" never: its READ is
	 * NAKed on arrival.
	 */
	CHECK(m.event && m.state == IBV_QPS_ERR &&
	      m.nflush + m.nrecv == RQ_DEPTH / 2 && !m.nother &&
	      (c != DR_BEFORE || !m.nrecv),
	      "%s: server: IBV_EVENT_QP_ACCESS_ERR %s, QP state %d (ERR %d), %u of %d receives flushed, %u the SEND (bytes right), %u other",
	      name, m.event ? "seen" : "NOT seen", m.state, IBV_QPS_ERR,
	      m.nflush, RQ_DEPTH / 2, m.nrecv, m.nother);
	if (m.nother)
		printf("      the first other: wr_id 0x%llx, %s, opcode %d\n",
		       (unsigned long long)m.owr_id,
		       ibv_wc_status_str((enum ibv_wc_status)m.ostatus),
		       m.oopcode);
	printf("# dereg %s round %d: %zu B of A landed at the request, dereg %.3f s, READ A done %.3f s and the error completion %.3f s after the request\n",
	       dr_case[c], round, landed, m.usec / 1e6, t_a, t_err);
	close(sock);
	sock = -1;
	qpx_free(&q);
}

static void dereg(const char *host, const char *port, int rounds)
{
	struct msg m = { .cmd = M_BYE };
	int r, c;

	dbuf = aligned_alloc(4096, DR_A_LEN + DR_B_LEN);
	dsnap = malloc(DR_A_LEN + DR_B_LEN);
	if (!dbuf || !dsnap)
		die("dereg buffers");
	dmr = ibv_reg_mr(pd, dbuf, DR_A_LEN + DR_B_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!dmr)
		die("dereg reg_mr");
	for (r = 0; r < rounds; r++)
		for (c = 0; c < DR_MAX; c++)
			dereg_one(host, port, r, c);
	if (!oob_connect(host, port)) {
		xfer(&m, true);
		close(sock);
	}
}

/* -------------------------------------------------------- reuse */

/*
 * How a life ends. ERR_DRAIN: both sides to ERR with a window in flight,
 * every WR completes once (success or flushed), then RESET. ERR_MARK: to
 * ERR, a SEND and a receive posted in ERR (the drain idiom's markers;
 * their doorbell asks the kernel for a flush), and RESET at once without
 * waiting for them. DIRECT: RTS -> RESET with the window in flight.
 * NAK: a WRITE with a bad rkey at the end of the window, whose NAK fails
 * the QP from receive processing (QP_FATAL/ACCESS_ERR, flush), and RESET
 * 0-3 ms later: racing the transport's own move to ERR.
 */
enum { END_ERR_DRAIN, END_ERR_MARK, END_DIRECT, END_NAK, END_MAX };
static const char *const end_name[END_MAX] = {
	"ERR, drained, RESET", "ERR, markers posted, RESET at once",
	"RTS -> RESET with WRs in flight",
	"a NAKed WRITE fails the QP, RESET 0-3 ms later",
};

/*
 * One life of the reused QP pair: connect with fresh PSNs, traffic with
 * every byte checked, then a window in flight and an end of kind @end.
 */
static int dumped;

static bool reuse_life(struct qpx *q, int life, int win, int end)
{
	uint32_t psn = random() & 0xffffff, seed = 1000 + 2 * life;
	struct ibv_wc wc[MAX_WIN];
	int seen[MAX_WIN] = {}, k, i, got = 0, dup = 0, ok = 0, flushed = 0,
	    other = 0;
	size_t len = 16384;
	struct msg m = {};
	double t0;
	long bad;
	bool good = true;

	m.cmd = M_HELLO;
	m.timeout = 14;
	m.retry = 7 | 0x80;
	my_side(&m.s, q->qp, psn);
	if (xfer(&m, true) || xfer(&m, false) || m.ok)
		die("hello");
	if (connect_qp(q->qp, &m.s, psn, 14, 7, RQ_DEPTH / 2)) {
		CHECK(0, "life %d: connect from RESET", life);
		return false;
	}

	/* WRITE (seed), READ back, 4 SENDs (seed + 1): bytes checked */
	fill(buf + half, len, seed);
	k = post_one(q->qp, IBV_WR_RDMA_WRITE, 0, 0, len, &m.s);
	k |= post_one(q->qp, IBV_WR_RDMA_READ, 1, 0, len, &m.s);
	k = k || poll_n(q->cq, wc, 2, 30) != 2;
	for (i = 0; !k && i < 2; i++)
		if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id != (uint64_t)i)
			k = 1;
	bad = verify(buf, len, seed);
	fill(buf + half, len, seed + 1);
	for (i = 0; !k && i < 4; i++)
		k = post_one(q->qp, IBV_WR_SEND, 2 + i, 0, len, &m.s);
	k = k || poll_n(q->cq, wc, 4, 30) != 4;
	for (i = 0; !k && i < 4; i++)
		if (wc[i].status != IBV_WC_SUCCESS ||
		    wc[i].wr_id != (uint64_t)(2 + i))
			k = 1;
	if (k || bad >= 0) {
		printf("      life %d: client: a WR failed, was lost or completed out of order (wr_id 0x%llx status %s), or the READ back differs at byte %ld\n",
		       life, (unsigned long long)wc[0].wr_id,
		       ibv_wc_status_str(wc[0].status), bad);
		good = false;
	}
	if (!good && !dumped++) {
		/* where the transport thinks it is, against what was set */
		printf("      life %d: our sq_psn 0x%06x, the peer's 0x%06x (rdma -dd res show qp):\n",
		       life, psn, m.s.psn);
		fflush(stdout);
		if (system("rdma -dd res show qp | grep -v GSI | sed 's/^/      /'"))
			printf("      (rdma res show failed)\n");
	}
	m.cmd = M_CHECK;
	m.seed = seed;
	m.len = len;
	m.n = 4;
	if (xfer(&m, true) || xfer(&m, false))
		die("check");
	if (!m.ok) {
		printf("      life %d: server saw wrong WRITE/SEND bytes or completions\n",
		       life);
		good = false;
	}

	/* a window in flight, then the end */
	for (i = 0; i < win; i++)
		post_one(q->qp, i % 3 == 0 ? IBV_WR_SEND :
			 i % 3 == 1 ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
			 100 + i, 0, len, &m.s);
	if (end == END_NAK) {
		struct side bad_key = m.s;

		bad_key.rkey ^= 0x5a5a5a00;
		post_one(q->qp, IBV_WR_RDMA_WRITE, 100 + win, 0, 64, &bad_key);
		usleep(random() % 3000);
	} else if (end != END_DIRECT) {
		if (modify_state(q->qp, IBV_QPS_ERR))
			good = false;
		m.cmd = M_ERR;
		m.n = RQ_DEPTH / 2 - 4;
		if (xfer(&m, true) || xfer(&m, false) || m.ok) {
			printf("      life %d: server: %u of %d receives completed after ERR\n",
			       life, m.n, RQ_DEPTH / 2 - 4);
			good = false;
		}
	}
	if (end == END_ERR_MARK) {
		struct ibv_sge sge = { (uintptr_t)buf + 2 * half, 64,
				       mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 0x2000000, .sg_list = &sge,
					   .num_sge = 1 }, *brw;

		post_one(q->qp, IBV_WR_SEND, 99, 0, 64, &m.s);
		ibv_post_recv(q->qp, &rwr, &brw);
	}
	if (end == END_ERR_DRAIN) {
		t0 = now_s();
		while (got < win + RQ_DEPTH / 2 && now_s() - t0 < 10) {
			k = poll_n(q->cq, wc, MAX_WIN, 0.01);
			for (i = 0; i < k; i++) {
				uint64_t id = wc[i].wr_id;

				if (id >= 0x1000000) {	/* our receives */
					if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
						got++;
					else
						other++;
					continue;
				}
				if (id < 100 || id >= 100 + (uint64_t)win ||
				    seen[id - 100]++) {
					dup++;
					continue;
				}
				got++;
				if (wc[i].status == IBV_WC_SUCCESS)
					ok++;
				else if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
					flushed++;
				else
					other++;
			}
		}
		if (got != win + RQ_DEPTH / 2 || dup || other) {
			printf("      life %d: %d of %d completions after ERR (%d ok, %d flushed, %d other status, %d unknown/duplicate)\n",
			       life, got, win + RQ_DEPTH / 2, ok, flushed,
			       other, dup);
			good = false;
		}
	}
	if (modify_state(q->qp, IBV_QPS_RESET))
		good = false;
	m.cmd = M_RESET;
	if (xfer(&m, true) || xfer(&m, false) || m.ok)
		good = false;
	/*
	 * What completed before the RESET is in the CQ now; nothing of this
	 * life may come after (the next life's checks would see it).
	 */
	drain_cq(q->cq);
	return good;
}

static void reuse(const char *host, const char *port, int cycles)
{
	int life, bad[END_MAX] = {}, first_bad = -1, n, e;
	struct qpx q = {};
	struct msg m = {};
	double t0 = now_s();

	if (oob_connect(host, port))
		die("connect to the server");
	qpx_new(&q);
	for (life = 0; life < cycles; life++) {
		if (!reuse_life(&q, life, 48, life % END_MAX)) {
			if (first_bad < 0)
				first_bad = life;
			bad[life % END_MAX]++;
		}
	}
	/* a last life checks what the last end left behind */
	if (!reuse_life(&q, life, 48, END_ERR_DRAIN) && first_bad < 0)
		first_bad = life;
	for (e = 0; e < END_MAX; e++) {
		n = (cycles + END_MAX - 1 - e) / END_MAX;
		CHECK(!bad[e],
		      "reuse: %d lives of one QP pair ending \"%s\", then reconnected with fresh PSNs, traffic bytes checked: %d bad",
		      n, end_name[e], bad[e]);
	}
	printf("# reuse: %d lives in %.1f s, first bad life: %d\n", cycles + 1,
	       now_s() - t0, first_bad);
	m.cmd = M_BYE;
	xfer(&m, true);
	qpx_free(&q);
}

int main(int argc, char **argv)
{
	const char *dev = "mrc0", *port = "18519", *mode = "vanish",
		   *cfg = "14:7,16:3,18:2";
	int c, cycles = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	srandom(time(NULL) ^ getpid());
	while ((c = getopt(argc, argv, "d:g:p:m:c:w:s:S:X:Y:n:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 'm': mode = optarg; break;
		case 'c': cfg = optarg; break;
		case 'w': window = atoi(optarg); break;
		case 's': msg_len = strtoul(optarg, NULL, 0); break;
		case 'S': slack = atof(optarg); break;
		case 'X': xcmd = optarg; break;
		case 'Y': ycmd = optarg; break;
		case 'n': cycles = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: see the comment in qplife.c\n");
			return 2;
		}
	}
	if (window < 2 || window > MAX_WIN || msg_len < 64 ||
	    msg_len > (16u << 20)) {
		fprintf(stderr, "bad -w or -s\n");
		return 2;
	}
	open_dev(dev, msg_len > 65536 ? msg_len : 65536);
	if (optind >= argc) {
		serve(port);
		return 0;
	}
	if (!strcmp(mode, "vanish")) {
		char *s = strdup(cfg), *tok, *save = NULL;

		if (!xcmd || !ycmd) {
			fprintf(stderr, "vanish needs -X and -Y\n");
			return 2;
		}
		for (tok = strtok_r(s, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			int t, r;

			if (sscanf(tok, "%d:%d", &t, &r) != 2 || t < 1 ||
			    t > 31 || r < 0 || r > 7) {
				fprintf(stderr, "bad -c %s\n", tok);
				return 2;
			}
			vanish_one(argv[optind], port, t, r);
		}
		free(s);
		/* tell the server we are done */
		if (!oob_connect(argv[optind], port)) {
			struct msg m = { .cmd = M_BYE };

			xfer(&m, true);
			close(sock);
		}
	} else if (!strcmp(mode, "reuse")) {
		reuse(argv[optind], port, cycles < 0 ? 50 : cycles);
	} else if (!strcmp(mode, "dereg")) {
		dereg(argv[optind], port, cycles < 0 ? 3 : cycles);
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
