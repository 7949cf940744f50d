// SPDX-License-Identifier: GPL-2.0
/*
 * metaroce IB RC ordering test: what each operation observed, under a
 * network that reorders, drops and duplicates (selftests/lab/ordering.sh
 * runs it under netem on both directions).
 *
 *   mrc_order_test -d mrc0 -g 1 [-p port] [-t secs] [-n iters]            (server)
 *   mrc_order_test -d mrc0 -g 1 [-p port] [-t secs] [-n iters] SERVER_IP  (client)
 *
 * IB RC says the responder executes the requests of a QP in PSN order,
 * whatever order their packets arrive in. The client checks, for -n
 * iterations each (every value checked, every byte compared):
 *
 *  write-read    RDMA_WRITE of a fresh pattern (1 B .. 64 KiB, multi
 *                packet) then, posted right behind it, RDMA_READ of the
 *                same range: the READ returns the new pattern.
 *  write-write   two RDMA_WRITEs to overlapping ranges, then four 8-byte
 *                WRITEs of a rising counter to one word inside, then a
 *                READ of the span: later WRITEs win, as in PSN order.
 *  write-atomic  RDMA_WRITE of 16 KiB whose last word holds a fresh value
 *                v, then FETCH_ADD 0 and CMP_SWAP(v -> v+1) on that word:
 *                both return v, a READ afterwards returns v+1.
 *  cas-chain     an RDMA_WRITE zeroes a word, then 8 CMP_SWAP(k -> k+1),
 *                k = 0..7, posted at once: each returns k (in order,
 *                each executed exactly once); the word ends at 8.
 *  fadd-chain    8 FETCH_ADD(+1) posted at once on a word of value b:
 *                they return b..b+7 in posting order; the word ends b+8.
 *  recv-order    SENDs and RDMA_WRITE_WITH_IMMs (sequence number in the
 *                payload / immediate), with the server posting its
 *                receives late and few at a time (RNR): the server's
 *                receive completions come in send order, each SEND's
 *                bytes are right, and at each WRITE_WITH_IMM completion
 *                every byte of that WRITE is already in memory
 *                (last-byte-last).
 *
 * The client prints one line per check (`ok NAME: n/n` or
 * `FAIL NAME: ...`, the first few mismatches in detail) and both print
 * `N passed, N failed` last; the exit code is non-zero on any failure.
 * Both talk over one TCP connection (QPN, PSN, GID, addr, rkey; then the
 * recv-order verdict).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define BUF_SZ		(4u << 20)
#define WR_AREA		0			/* write-read regions */
#define WR_AREA_SZ	(1u << 20)
#define AT_AREA		(1u << 20)		/* atomic words */
#define RO_AREA		(2u << 20)		/* recv-order WRITE_IMM targets */
#define RO_SLOT		(16u << 10)
#define RO_SLOTS	64
#define RECV_AREA	(3u << 20)		/* server: receive buffers */
#define RECV_LEN	(8u << 10)
#define SQ_DEPTH	128
#define CHAIN		8
#define MAX_MSG		(64u << 10)

struct conn_info {
	uint32_t qpn, psn, mtu, pad;
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey;
	uint32_t iters;
};

struct verdict {
	uint32_t pass, fail;
	char text[512];
};

static int sock = -1, timeout_s = 30, gid_idx = 1;
static uint32_t iters = 500;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *buf;
static struct conn_info me, peer;
static int n_pass, n_fail;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL fatal: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	printf("%d passed, %d failed\n", n_pass, n_fail + 1);
	exit(2);
}

static void xfer(void *p, size_t len, bool out)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = out ? send(sock, (char *)p + done, len - done, MSG_NOSIGNAL) :
			  recv(sock, (char *)p + done, len - done, 0);
		if (n <= 0)
			die("OOB %s: %s", out ? "send" : "recv",
			    n ? strerror(errno) : "closed");
		done += n;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift: both ends derive the same patterns from a seed */
static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static uint8_t pat(uint32_t seed, uint32_t i)
{
	uint32_t x = seed * 2654435761u + i * 40503u;

	return (uint8_t)(x ^ (x >> 13) ^ (x >> 21));
}

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

/* Index of the first byte of @p that is not the pattern, or -1. */
static long mismatch(const uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(seed, i))
			return i;
	return -1;
}

/* Wait for @n completions into @wc (success or not). */
static void poll_n(struct ibv_wc *wc, int n)
{
	double end = now() + timeout_s;
	int got = 0, r;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			die("poll_cq");
		got += r;
		if (!r && now() > end)
			die("timeout: %d of %d completions in %d s", got, n,
			    timeout_s);
	}
}

/* ------------------------------------------------------------ setup */

static void setup(const char *dev)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr ia = {};
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			break;
	if (!list || !list[i])
		die("no device %s", dev);
	ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("open %s", dev);
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUF_SZ);
	if (!pd || !buf)
		die("alloc");
	memset(buf, 0, BUF_SZ);
	mr = ibv_reg_mr(pd, buf, BUF_SZ, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	cq = ibv_create_cq(ctx, 4 * SQ_DEPTH, NULL, NULL, 0);
	if (!mr || !cq)
		die("reg_mr/create_cq: %s", strerror(errno));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = SQ_DEPTH;
	ia.cap.max_recv_wr = SQ_DEPTH;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &ia);
	if (!qp)
		die("create_qp: %s", strerror(errno));
	if (ibv_query_port(ctx, 1, &pa) || ibv_query_gid(ctx, 1, gid_idx, &me.gid))
		die("query port/gid");
	me.qpn = qp->qp_num;
	me.psn = (0xffff00u | (rand() & 0xff)) - (rand() & 0x3ff);
	me.mtu = pa.active_mtu;
	me.addr = (uintptr_t)buf;
	me.rkey = mr->rkey;
	me.iters = iters;
}

static void connect_qp(void)
{
	struct ibv_qp_attr a = {};
	struct ibv_device_attr da;
	uint8_t rd;

	if (ibv_query_device(ctx, &da))
		die("query_device");
	rd = da.max_qp_rd_atom < 16 ? da.max_qp_rd_atom : 16;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = peer.mtu < me.mtu ? peer.mtu : me.mtu;
	a.dest_qp_num = peer.qpn;
	a.rq_psn = peer.psn;
	a.max_dest_rd_atomic = rd;
	a.min_rnr_timer = 1;		/* 0.01 ms: retry RNR quickly */
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer.gid;
	a.ah_attr.grh.sgid_index = gid_idx;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;		/* RNR: retry forever */
	a.sq_psn = me.psn;
	a.max_rd_atomic = rd;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

/* ------------------------------------------------------------ client */

static struct ibv_send_wr wrs[SQ_DEPTH];
static struct ibv_sge sges[SQ_DEPTH];
static int nwr;

static struct ibv_send_wr *add_wr(enum ibv_wr_opcode op, uint32_t loff,
				  uint32_t len, uint32_t roff, bool signaled)
{
	struct ibv_send_wr *w = &wrs[nwr];
	struct ibv_sge *s = &sges[nwr];

	memset(w, 0, sizeof(*w));
	s->addr = (uintptr_t)buf + loff;
	s->length = len;
	s->lkey = mr->lkey;
	w->wr_id = nwr;
	w->sg_list = s;
	w->num_sge = len ? 1 : 0;
	w->opcode = op;
	w->send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		w->wr.atomic.remote_addr = peer.addr + roff;
		w->wr.atomic.rkey = peer.rkey;
	} else {
		w->wr.rdma.remote_addr = peer.addr + roff;
		w->wr.rdma.rkey = peer.rkey;
	}
	if (nwr)
		wrs[nwr - 1].next = w;
	nwr++;
	return w;
}

/* Post the chain; wait for every signaled WR; all must succeed. */
static void run_chain(const char *what, uint32_t it)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc[SQ_DEPTH];
	int i, sig = 0;

	for (i = 0; i < nwr; i++)
		sig += !!(wrs[i].send_flags & IBV_SEND_SIGNALED);
	if (ibv_post_send(qp, wrs, &bad))
		die("%s %u: post_send: %s", what, it, strerror(errno));
	poll_n(wc, sig);
	for (i = 0; i < sig; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			die("%s %u: completion %d: %s", what, it, i,
			    ibv_wc_status_str(wc[i].status));
	nwr = 0;
}

struct tally {
	const char *name;
	uint32_t ok, bad;
	char first[3][200];
};

static void bad(struct tally *t, const char *fmt, ...)
{
	va_list ap;

	if (t->bad < 3) {
		va_start(ap, fmt);
		vsnprintf(t->first[t->bad], sizeof(t->first[0]), fmt, ap);
		va_end(ap);
	}
	t->bad++;
}

static void report(struct tally *t)
{
	uint32_t i;

	if (!t->bad) {
		printf("ok %s: %u/%u\n", t->name, t->ok, t->ok);
		n_pass++;
		return;
	}
	printf("FAIL %s: %u of %u wrong\n", t->name, t->bad, t->ok + t->bad);
	for (i = 0; i < t->bad && i < 3; i++)
		printf("     %s\n", t->first[i]);
	n_fail++;
}

/* Local layout (client): sources at 0, READ/atomic results above. */
#define L_SRC		0
#define L_DST		(1u << 20)
#define L_RES		(2u << 20)

static void write_read(void)
{
	struct tally t = { .name = "write-read" };
	uint32_t it, len, off, seed;
	long m;

	for (it = 0; it < iters; it++) {
		len = 1 + rnd() % (rnd() % 4 ? 16384 : MAX_MSG);
		off = rnd() % (WR_AREA_SZ - len);
		seed = (uint32_t)rnd();
		fill(buf + L_SRC, len, seed);
		memset(buf + L_DST, 0, len);
		add_wr(IBV_WR_RDMA_WRITE, L_SRC, len, WR_AREA + off, false);
		add_wr(IBV_WR_RDMA_READ, L_DST, len, WR_AREA + off, true);
		run_chain("write-read", it);
		m = mismatch(buf + L_DST, len, seed);
		if (m < 0)
			t.ok++;
		else
			bad(&t, "iter %u: READ of %u B at +%u after WRITE: byte %ld is %02x, written %02x",
			    it, len, off, m, buf[L_DST + m], pat(seed, m));
	}
	report(&t);
}

/*
 * Two WRITEs of different patterns to overlapping ranges (the second
 * shifted by a few hundred bytes), then four 8-byte WRITEs of a rising
 * counter to one word inside, then one READ of the whole span: the
 * bytes are what in-order execution leaves (later WRITEs win).
 */
static void write_write(void)
{
	struct tally t = { .name = "write-write" };
	uint32_t it, len, off, shift, sa, sb, span, i, w;
	uint8_t *ref = buf + L_DST + (512u << 10);
	uint64_t c;
	long m;

	for (it = 0; it < iters; it++) {
		len = 2048 + rnd() % 30000;
		shift = rnd() % 1024;
		span = len + shift;
		off = rnd() % (WR_AREA_SZ - span);
		sa = (uint32_t)rnd();
		sb = (uint32_t)rnd();
		fill(buf + L_SRC, len, sa);
		fill(buf + L_SRC + (64u << 10), len, sb);
		add_wr(IBV_WR_RDMA_WRITE, L_SRC, len, WR_AREA + off, false);
		add_wr(IBV_WR_RDMA_WRITE, L_SRC + (64u << 10), len,
		       WR_AREA + off + shift, false);
		/* the reference: A, then B over it */
		memcpy(ref, buf + L_SRC, len);
		memcpy(ref + shift, buf + L_SRC + (64u << 10), len);
		w = (shift + rnd() % (len - 8)) & ~7u;
		for (i = 0; i < 4; i++) {
			c = ((uint64_t)it << 8) | i;
			memcpy(buf + L_SRC + (128u << 10) + 8 * i, &c, 8);
			add_wr(IBV_WR_RDMA_WRITE, L_SRC + (128u << 10) + 8 * i,
			       8, WR_AREA + off + w, false);
		}
		memcpy(ref + w, &c, 8);
		memset(buf + L_DST, 0, span);
		add_wr(IBV_WR_RDMA_READ, L_DST, span, WR_AREA + off, true);
		run_chain("write-write", it);
		m = -1;
		for (i = 0; i < span && m < 0; i++)
			if (buf[L_DST + i] != ref[i])
				m = i;
		if (m < 0)
			t.ok++;
		else
			bad(&t, "iter %u: WRITE A %u B at +%u, counter at +%u: byte %ld is %02x, want %02x (%s)",
			    it, len, shift, w, m, buf[L_DST + m], ref[m],
			    m >= w && m < w + 8 ? "counter" :
			    m >= shift ? "B's byte" : "A's byte");
	}
	report(&t);
}

static void write_atomic(void)
{
	struct tally t = { .name = "write-atomic" };
	uint32_t it, w, len = 16384;
	uint64_t v, *res = (uint64_t *)(buf + L_RES);

	for (it = 0; it < iters; it++) {
		/* the WRITE ends with the word; the word is 8-aligned */
		w = (uint32_t)(rnd() % ((WR_AREA_SZ - len) / 8)) * 8 + len - 8;
		v = rnd();
		fill(buf + L_SRC, len - 8, it);
		memcpy(buf + L_SRC + len - 8, &v, 8);
		memset(res, 0xee, 24);
		add_wr(IBV_WR_RDMA_WRITE, L_SRC, len, w - (len - 8), false);
		add_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, L_RES, 8, w, true)
			->wr.atomic.compare_add = 0;
		add_wr(IBV_WR_ATOMIC_CMP_AND_SWP, L_RES + 8, 8, w, true);
		wrs[2].wr.atomic.compare_add = v;
		wrs[2].wr.atomic.swap = v + 1;
		add_wr(IBV_WR_RDMA_READ, L_RES + 16, 8, w, true);
		run_chain("write-atomic", it);
		if (res[0] == v && res[1] == v && res[2] == v + 1)
			t.ok++;
		else
			bad(&t, "iter %u: wrote %#llx; FETCH_ADD saw %#llx, CMP_SWAP saw %#llx, READ after %#llx (want %#llx)",
			    it, (unsigned long long)v,
			    (unsigned long long)res[0],
			    (unsigned long long)res[1],
			    (unsigned long long)res[2],
			    (unsigned long long)v + 1);
	}
	report(&t);
}

static void chains(void)
{
	struct tally tc = { .name = "cas-chain" }, tf = { .name = "fadd-chain" };
	uint64_t *res = (uint64_t *)(buf + L_RES), zero = 0, b;
	uint32_t it, w, k;
	bool good;

	for (it = 0; it < iters; it++) {
		w = AT_AREA + (uint32_t)(rnd() % 4096) * 8;
		memcpy(buf + L_SRC, &zero, 8);
		memset(res, 0xee, 8 * (CHAIN + 1));
		/* a multi-packet WRITE ahead of it, then the zeroing WRITE */
		add_wr(IBV_WR_RDMA_WRITE, L_SRC + 64, 8192, WR_AREA, false);
		add_wr(IBV_WR_RDMA_WRITE, L_SRC, 8, w, false);
		for (k = 0; k < CHAIN; k++) {
			add_wr(IBV_WR_ATOMIC_CMP_AND_SWP, L_RES + 8 * k, 8, w,
			       true);
			wrs[nwr - 1].wr.atomic.compare_add = k;
			wrs[nwr - 1].wr.atomic.swap = k + 1;
		}
		add_wr(IBV_WR_RDMA_READ, L_RES + 8 * CHAIN, 8, w, true);
		run_chain("cas-chain", it);
		good = res[CHAIN] == CHAIN;
		for (k = 0; k < CHAIN; k++)
			good &= res[k] == k;
		if (good)
			tc.ok++;
		else
			bad(&tc, "iter %u: CMP_SWAP k->k+1 saw %llu %llu %llu %llu %llu %llu %llu %llu, final %llu (want 0..7, 8)",
			    it, (unsigned long long)res[0],
			    (unsigned long long)res[1],
			    (unsigned long long)res[2],
			    (unsigned long long)res[3],
			    (unsigned long long)res[4],
			    (unsigned long long)res[5],
			    (unsigned long long)res[6],
			    (unsigned long long)res[7],
			    (unsigned long long)res[8]);

		/* FETCH_ADD chain on a word whose value only we change */
		w = AT_AREA + (64u << 10) + (uint32_t)(rnd() % 4096) * 8;
		b = rnd() >> 8;
		memcpy(buf + L_SRC, &b, 8);
		memset(res, 0xee, 8 * (CHAIN + 1));
		add_wr(IBV_WR_RDMA_WRITE, L_SRC + 64, 8192, WR_AREA, false);
		add_wr(IBV_WR_RDMA_WRITE, L_SRC, 8, w, false);
		for (k = 0; k < CHAIN; k++) {
			add_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, L_RES + 8 * k, 8,
			       w, true);
			wrs[nwr - 1].wr.atomic.compare_add = 1;
		}
		add_wr(IBV_WR_RDMA_READ, L_RES + 8 * CHAIN, 8, w, true);
		run_chain("fadd-chain", it);
		good = res[CHAIN] == b + CHAIN;
		for (k = 0; k < CHAIN; k++)
			good &= res[k] == b + k;
		if (good)
			tf.ok++;
		else
			bad(&tf, "iter %u: base %llu: FETCH_ADD saw +%lld +%lld +%lld +%lld +%lld +%lld +%lld +%lld, final +%lld (want +0..+7, +8)",
			    it, (unsigned long long)b,
			    (long long)(res[0] - b), (long long)(res[1] - b),
			    (long long)(res[2] - b), (long long)(res[3] - b),
			    (long long)(res[4] - b), (long long)(res[5] - b),
			    (long long)(res[6] - b), (long long)(res[7] - b),
			    (long long)(res[8] - b));
	}
	report(&tc);
	report(&tf);
}

/*
 * recv-order, client side: message i is a SEND (even i) of RECV_LEN
 * bytes pattern seed i with i in its first 4 bytes, or a
 * WRITE_WITH_IMM (odd i, imm i) of RO_SLOT bytes pattern seed i into
 * slot i % RO_SLOTS (several packets, which the network reorders).
 */
static uint32_t ro_len(uint32_t i)
{
	return 1 + (i * 2654435761u) % RECV_LEN;
}

static void recv_order_client(void)
{
	struct tally t = { .name = "recv-order" };
	struct verdict v;
	struct ibv_send_wr *w;
	uint32_t i, n = iters, len, batch;
	int go = 1;

	/* the server's completion waits start now, not at connect time */
	xfer(&go, sizeof(go), true);

	for (i = 0; i < n; i += batch) {
		batch = n - i < 16 ? n - i : 16;
		for (uint32_t j = i; j < i + batch; j++) {
			uint32_t loff = (j % 32) * RO_SLOT;

			if (j % 2 == 0) {
				len = ro_len(j);
				fill(buf + loff, len, j);
				if (len >= 4)
					memcpy(buf + loff, &j, 4);
				add_wr(IBV_WR_SEND, loff, len, 0, true);
			} else {
				fill(buf + loff, RO_SLOT, j);
				w = add_wr(IBV_WR_RDMA_WRITE_WITH_IMM, loff,
					   RO_SLOT,
					   RO_AREA + (j % RO_SLOTS) * RO_SLOT,
					   true);
				w->imm_data = htonl(j);
			}
		}
		run_chain("recv-order", i);
	}
	xfer(&v, sizeof(v), false);
	t.ok = v.pass;
	t.bad = v.fail;
	if (v.fail)
		snprintf(t.first[0], sizeof(t.first[0]), "server: %.180s", v.text);
	report(&t);
}

/* Server: receives posted late and few at a time, every message checked. */
static void recv_order_server(uint32_t n)
{
	struct verdict v = {};
	struct ibv_recv_wr rw, *bad;
	struct ibv_sge s;
	struct ibv_wc wc;
	uint32_t expect = 0, posted = 0, len, j;
	uint8_t *p;
	double end;
	long m;
	int r, go;

	/* the client's other checks come first, however long they take */
	xfer(&go, sizeof(go), false);

	while (expect < n) {
		/* keep at most 4 receives posted, and let RNR happen */
		while (posted < n && posted - expect < 4) {
			s.addr = (uintptr_t)buf + RECV_AREA +
				 (posted % 64) * RECV_LEN;
			s.length = RECV_LEN;
			s.lkey = mr->lkey;
			memset(&rw, 0, sizeof(rw));
			rw.wr_id = posted;
			rw.sg_list = &s;
			rw.num_sge = 1;
			if (ibv_post_recv(qp, &rw, &bad))
				die("post_recv");
			posted++;
		}
		end = now() + timeout_s;
		while (!(r = ibv_poll_cq(cq, 1, &wc)))
			if (now() > end)
				die("recv-order: no completion for message %u",
				    expect);
		if (r < 0)
			die("poll_cq");
		if (wc.status != IBV_WC_SUCCESS)
			die("recv-order: message %u: %s", expect,
			    ibv_wc_status_str(wc.status));
		if (wc.wr_id != expect) {
			snprintf(v.text, sizeof(v.text),
				 "completion for receive %llu, expected %u",
				 (unsigned long long)wc.wr_id, expect);
			v.fail++;
			expect++;
			continue;
		}
		j = expect;
		if (j % 2 == 0) {
			len = ro_len(j);
			p = buf + RECV_AREA + (j % 64) * RECV_LEN;
			m = -1;
			if (wc.opcode != IBV_WC_RECV || wc.byte_len != len)
				m = -2;
			else if (len >= 4 && memcmp(p, &j, 4))
				m = -3;
			else
				for (uint32_t k = len < 4 ? 0 : 4; k < len; k++)
					if (p[k] != pat(j, k)) {
						m = k;
						break;
					}
			if (m != -1) {
				if (!v.fail)
					snprintf(v.text, sizeof(v.text),
						 "SEND %u (%u B): opcode %d len %u seq %u byte %ld",
						 j, len, wc.opcode, wc.byte_len,
						 len >= 4 ? *(uint32_t *)p : 0, m);
				v.fail++;
			} else {
				v.pass++;
			}
		} else {
			p = buf + RO_AREA + (j % RO_SLOTS) * RO_SLOT;
			m = mismatch(p, RO_SLOT, j);
			if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
			    !(wc.wc_flags & IBV_WC_WITH_IMM) ||
			    ntohl(wc.imm_data) != j || m >= 0) {
				if (!v.fail)
					snprintf(v.text, sizeof(v.text),
						 "WRITE_IMM %u: opcode %d imm %u, byte %ld of %u not yet written at completion",
						 j, wc.opcode, ntohl(wc.imm_data),
						 m, RO_SLOT);
				v.fail++;
			} else {
				v.pass++;
			}
		}
		expect++;
		if (expect % 7 == 0)
			usleep(2000);	/* the sender outruns us: RNR */
	}
	xfer(&v, sizeof(v), true);
	printf("recv-order: %u ok, %u wrong%s%s\n", v.pass, v.fail,
	       v.fail ? ": " : "", v.text);
	if (v.fail)
		n_fail++;
	else
		n_pass++;
}

static void usage(void)
{
	fprintf(stderr, "usage: mrc_order_test -d DEV [-g GIDX] [-p PORT] [-t SECS] [-n ITERS] [SERVER_IP]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = "mrc0", *port = "18519";
	struct addrinfo hints = {}, *ai;
	int c, one = 1, ls;

	while ((c = getopt(argc, argv, "d:g:p:t:n:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid_idx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 't': timeout_s = atoi(optarg); break;
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand(getpid() ^ time(NULL));
	rnd_state ^= (uint64_t)rand() << 20 | rand();
	setup(dev);
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (optind < argc) {
		if (getaddrinfo(argv[optind], port, &hints, &ai))
			die("resolve %s", argv[optind]);
		sock = socket(AF_INET, SOCK_STREAM, 0);
		for (c = 0; connect(sock, ai->ai_addr, ai->ai_addrlen); c++) {
			if (c > 100)
				die("connect: %s", strerror(errno));
			usleep(100000);
		}
	} else {
		hints.ai_flags = AI_PASSIVE;
		if (getaddrinfo(NULL, port, &hints, &ai))
			die("getaddrinfo");
		ls = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(ls, ai->ai_addr, ai->ai_addrlen) || listen(ls, 1))
			die("listen: %s", strerror(errno));
		sock = accept(ls, NULL, NULL);
		if (sock < 0)
			die("accept");
	}
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	xfer(&me, sizeof(me), true);
	xfer(&peer, sizeof(peer), false);
	connect_qp();
	/* both QPs in RTS before any traffic */
	xfer(&one, sizeof(one), true);
	xfer(&c, sizeof(c), false);

	if (optind < argc) {
		write_read();
		write_write();
		write_atomic();
		chains();
		recv_order_client();
	} else {
		recv_order_server(peer.iters);
	}
	/* the client is done with our memory only when it says so */
	xfer(&one, sizeof(one), true);
	xfer(&c, sizeof(c), false);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
