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
 *  write-alias   as write-write, but the two overlapping WRITEs reach the
 *                same bytes through different keys: the server registers
 *                its write area a second time, zero-based (rkey2); which
 *                key writes first alternates. The later one's bytes win
 *                whichever key named them.
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
 *  write-inv     the server binds a type 2 memory window over a fresh
 *                range (4 .. 64 KiB, every byte preset to the complement
 *                of this iteration's pattern) and sends its rkey over TCP
 *                (8 windows per exchange); the client RDMA_WRITEs the
 *                pattern through each window and, right behind it,
 *                SEND_WITH_INV of its rkey (the 8 pairs posted at once). The
 *                server's receive completes WITH_INV naming the rkey,
 *                carries (iteration, seed), and at that point every byte
 *                of the WRITE is in the window: SEND_WITH_INV invalidates
 *                when its message completes, so WRITE packets that arrive
 *                after the SEND's still land. Then a WRITE through the
 *                rkey from a loopback QP pair on the server (same PD)
 *                completes REMOTE_ACCESS_ERR and changes no byte.
 *  rnr-mix      message j is RDMA_WRITE (1 B .. 32 KiB, fresh pattern),
 *                SEND j (1 B .. 8 KiB), FETCH_ADD +1 on one word, READ of
 *                the WRITE's range, 4 messages posted at once, against a
 *                server that keeps at most 2 receives posted and pauses
 *                (RNR on most SENDs: each refusal voids the WRITEs,
 *                atomics and READs behind it, which go again in the
 *                requester's next RNR epoch) and that, every 4th
 *                message, first RDMA_READs up to 256 KiB of the client's
 *                memory (responses the client owes while it waits out
 *                an RNR NAK). Each READ returns its WRITE's pattern, the
 *                FETCH_ADDs return base+0, base+1, ... (each executed
 *                exactly once, however often it was voided and resent),
 *                the word ends at base+n, the SENDs arrive in order with
 *                every byte right and the server's READs see the
 *                client's bytes.
 *  rnr-stall    (server given -D/-U) a READ whose responses the server
 *                drops for 300 ms, then a SEND the server refuses with
 *                RNR NAKs of 163.84 ms until the READ completed: the READ
 *                completes (bytes right), then the SEND.
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

#include "common.h"

#define BUF_SZ		(4u << 20)
#define WR_AREA		0			/* write-read regions */
#define WR_AREA_SZ	(1u << 20)
#define AT_AREA		(1u << 20)		/* atomic words */
#define RO_AREA		(2u << 20)		/* recv-order WRITE_IMM targets */
#define RO_SLOT		(16u << 10)
#define RO_SLOTS	64
#define RECV_AREA	(3u << 20)		/* server: receive buffers */
#define RECV_LEN	(8u << 10)
#define WI_AREA		(RECV_AREA + 64 * RECV_LEN)	/* server: windows */
#define WI_AREA_SZ	(512u << 10)
#define WI_MIN		(4u << 10)
#define WI_BATCH	8	/* windows per TCP exchange, 64 KiB slot each */
#define SQ_DEPTH	128
#define CHAIN		8
#define MAX_MSG		(64u << 10)

struct conn_info {
	uint32_t qpn, psn, mtu, pad;
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey;
	uint32_t iters;
	uint32_t rkey2;		/* the write area again, zero-based */
	uint32_t stall;		/* server: rnr-stall runs (-D given) */
};

struct verdict {
	uint32_t pass, fail;
	char text[512];
};

/* write-inv, server -> client: the next n windows, or none (stop) */
struct wi_go {
	uint32_t n, pad;
	struct {
		uint32_t rkey, len, seed, pad;
		uint64_t addr;
	} w[WI_BATCH];
};

/* write-inv, client -> server: how its WRITEs + SEND_WITH_INVs ended */
struct wi_done {
	uint32_t failed, pad;
	char text[160];
};

static int sock = -1, timeout_s = 30, gid_idx = 1;
static const char *drop_cmd, *undrop_cmd;	/* rnr-stall (server) */
static uint32_t iters = 500;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr, *mr2;
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

/*
 * This program's byte pattern, a hash of seed and offset (common.h's
 * pat() is linear in both: two seeds' patterns can coincide over shifted
 * ranges, which would hide which of two overlapping WRITEs won).
 */
static uint8_t opat(uint32_t seed, uint32_t i)
{
	uint32_t x = seed * 2654435761u + i * 40503u;

	return (uint8_t)(x ^ (x >> 13) ^ (x >> 21));
}

static void ofill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = opat(seed, i);
}

/* Index of the first byte of @p that is not the pattern, or -1. */
static long mismatch(const uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != opat(seed, i))
			return i;
	return -1;
}

/*
 * A received SEND of @len bytes: @seq in its first 4 bytes (if it has 4),
 * pattern @seed after them. -1 if so, -3 if the sequence number is wrong,
 * else the index of the first wrong byte.
 */
static long send_mismatch(const uint8_t *p, uint32_t len, uint32_t seq,
			  uint32_t seed)
{
	uint32_t k;

	if (len >= 4 && memcmp(p, &seq, 4))
		return -3;
	for (k = len < 4 ? 0 : 4; k < len; k++)
		if (p[k] != opat(seed, k))
			return k;
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
			IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	/* write-alias: the write area registered again, zero-based */
	mr2 = ibv_reg_mr_iova(pd, buf + WR_AREA, WR_AREA_SZ, 0,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ);
	cq = ibv_create_cq(ctx, 4 * SQ_DEPTH, NULL, NULL, 0);
	if (!mr || !mr2 || !cq)
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
	gid = me.gid;		/* common.h's, for the loopback pair */
	gid_index = gid_idx;
	me.qpn = qp->qp_num;
	me.psn = (0xffff00u | (rand() & 0xff)) - (rand() & 0x3ff);
	me.mtu = pa.active_mtu;
	me.addr = (uintptr_t)buf;
	me.rkey = mr->rkey;
	me.rkey2 = mr2->rkey;
	me.iters = iters;
	me.stall = !!drop_cmd;
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

static double t_check;	/* when the check being reported began */

/* Client: one check's line (and its first mismatches), counted. */
static void report(struct tally *t)
{
	double secs = now() - t_check;
	uint32_t i;

	t_check = now();
	if (!t->bad) {
		printf("ok %s: %u/%u (%.1f s)\n", t->name, t->ok, t->ok, secs);
		n_pass++;
		return;
	}
	printf("FAIL %s: %u of %u wrong (%.1f s)\n", t->name, t->bad,
	       t->ok + t->bad, secs);
	for (i = 0; i < t->bad && i < 3; i++)
		printf("     %s\n", t->first[i]);
	n_fail++;
}

/*
 * Client: the server's verdict of a check it judged (struct verdict, its
 * text one mismatch a line), reported as the client's own.
 */
static void report_server(struct tally *t)
{
	char *line, *save;
	struct verdict v;
	int i;

	xfer(&v, sizeof(v), false);
	v.text[sizeof(v.text) - 1] = 0;
	t->ok = v.pass;
	t->bad = v.fail;
	for (i = 0, line = strtok_r(v.text, "\n", &save); line && i < 3;
	     i++, line = strtok_r(NULL, "\n", &save))
		snprintf(t->first[i], sizeof(t->first[0]), "server: %s", line);
	report(t);
}

/* Server: send a check's verdict to the client, print it, count it. */
static void verdict_send(const char *name, struct verdict *v,
			 const char *sep)
{
	xfer(v, sizeof(*v), true);
	printf("%s: %u ok, %u wrong%s%s\n", name, v->pass, v->fail,
	       v->fail ? sep : "", v->text);
	if (v->fail)
		n_fail++;
	else
		n_pass++;
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
		ofill(buf + L_SRC, len, seed);
		memset(buf + L_DST, 0, len);
		add_wr(IBV_WR_RDMA_WRITE, L_SRC, len, WR_AREA + off, false);
		add_wr(IBV_WR_RDMA_READ, L_DST, len, WR_AREA + off, true);
		run_chain("write-read", it);
		m = mismatch(buf + L_DST, len, seed);
		if (m < 0)
			t.ok++;
		else
			bad(&t, "iter %u: READ of %u B at +%u after WRITE: byte %ld is %02x, written %02x",
			    it, len, off, m, buf[L_DST + m], opat(seed, m));
	}
	report(&t);
}

/*
 * Two WRITEs of different patterns to overlapping ranges (the second
 * shifted by a few hundred bytes), then four 8-byte WRITEs of a rising
 * counter to one word inside, then one READ of the whole span: the
 * bytes are what in-order execution leaves (later WRITEs win).
 */
/* The first byte of @got that differs from @ref, or -1. */
static long ref_diff(const uint8_t *got, const uint8_t *ref, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (got[i] != ref[i])
			return i;
	return -1;
}

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
		ofill(buf + L_SRC, len, sa);
		ofill(buf + L_SRC + (64u << 10), len, sb);
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
		m = ref_diff(buf + L_DST, ref, span);
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

/*
 * Two overlapping WRITEs through two keys of the same bytes (the area
 * and its zero-based second registration), then a READ of the span: B
 * over A, whichever key each used.
 */
static void write_alias(void)
{
	struct tally t = { .name = "write-alias" };
	uint32_t it, len, off, shift, sa, sb, span, i, roff[2];
	uint8_t *ref = buf + L_DST + (512u << 10);
	struct ibv_send_wr *w;
	bool b2;
	long m;

	for (it = 0; it < iters; it++) {
		len = 2048 + rnd() % 30000;
		shift = rnd() % 1024;
		span = len + shift;
		off = rnd() % (WR_AREA_SZ - span);
		sa = (uint32_t)rnd();
		sb = (uint32_t)rnd();
		b2 = it & 1;		/* B through the second key */
		ofill(buf + L_SRC, len, sa);
		ofill(buf + L_SRC + (64u << 10), len, sb);
		roff[0] = off;
		roff[1] = off + shift;
		for (i = 0; i < 2; i++) {
			w = add_wr(IBV_WR_RDMA_WRITE, L_SRC + i * (64u << 10),
				   len, WR_AREA + roff[i], false);
			if (b2 == (i == 1)) {
				w->wr.rdma.remote_addr = roff[i];
				w->wr.rdma.rkey = peer.rkey2;
			}
		}
		memcpy(ref, buf + L_SRC, len);
		memcpy(ref + shift, buf + L_SRC + (64u << 10), len);
		memset(buf + L_DST, 0, span);
		add_wr(IBV_WR_RDMA_READ, L_DST, span, WR_AREA + off, true);
		run_chain("write-alias", it);
		m = ref_diff(buf + L_DST, ref, span);
		if (m < 0)
			t.ok++;
		else
			bad(&t, "iter %u: WRITE A %u (key %d) B at +%u (key %d): byte %ld is %02x, want %02x (%s)",
			    it, len, b2 ? 1 : 2, shift, b2 ? 2 : 1, m,
			    buf[L_DST + m], ref[m],
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
		ofill(buf + L_SRC, len - 8, it);
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
				ofill(buf + loff, len, j);
				if (len >= 4)
					memcpy(buf + loff, &j, 4);
				add_wr(IBV_WR_SEND, loff, len, 0, true);
			} else {
				ofill(buf + loff, RO_SLOT, j);
				w = add_wr(IBV_WR_RDMA_WRITE_WITH_IMM, loff,
					   RO_SLOT,
					   RO_AREA + (j % RO_SLOTS) * RO_SLOT,
					   true);
				w->imm_data = htonl(j);
			}
		}
		run_chain("recv-order", i);
	}
	report_server(&t);
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
			m = wc.opcode != IBV_WC_RECV || wc.byte_len != len ? -2 :
			    send_mismatch(p, len, j, j);
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
	verdict_send("recv-order", &v, ": ");
}

/* ------------------------------------------------------------ write-inv */

/*
 * write-inv, client side: per batch the server's windows (struct wi_go),
 * then for each an RDMA_WRITE of its pattern over all of it and a
 * SEND_WITH_INV of its rkey carrying (iteration, seed), the whole batch
 * posted at once; how they ended goes back to the server, which judges
 * every window.
 */
static void write_inv_client(void)
{
	struct tally t = { .name = "write-inv" };
	struct ibv_send_wr *w, *bad_wr;
	uint32_t it, j, sends, msg[2];
	struct wi_done d;
	struct ibv_wc wc;
	struct wi_go g;
	double end;
	int r;

	for (it = 0; ; it += g.n) {
		xfer(&g, sizeof(g), false);
		if (!g.n || g.n > WI_BATCH)
			break;
		for (j = 0; j < g.n; j++) {
			ofill(buf + L_SRC + j * MAX_MSG, g.w[j].len, g.w[j].seed);
			msg[0] = it + j;
			msg[1] = g.w[j].seed;
			memcpy(buf + L_RES + 8 * j, msg, sizeof(msg));
			w = add_wr(IBV_WR_RDMA_WRITE, L_SRC + j * MAX_MSG,
				   g.w[j].len, 0, false);
			w->wr.rdma.remote_addr = g.w[j].addr;
			w->wr.rdma.rkey = g.w[j].rkey;
			w = add_wr(IBV_WR_SEND_WITH_INV, L_RES + 8 * j,
				   sizeof(msg), 0, true);
			w->invalidate_rkey = g.w[j].rkey;
		}
		nwr = 0;
		if (ibv_post_send(qp, wrs, &bad_wr))
			die("write-inv %u: post_send: %s", it, strerror(errno));
		/*
		 * Until every SEND's completion: an error completes its WR
		 * (signaled or not) and flushes the rest. wr_id = WR index.
		 */
		memset(&d, 0, sizeof(d));
		end = now() + timeout_s;
		for (sends = 0; sends < g.n; ) {
			r = ibv_poll_cq(cq, 1, &wc);
			if (r < 0)
				die("poll_cq");
			if (!r) {
				if (now() < end)
					continue;
				d.failed = 1;
				snprintf(d.text, sizeof(d.text),
					 "client: %u of %u SEND_WITH_INVs completed in %d s",
					 sends, g.n, timeout_s);
				break;
			}
			if (wc.status != IBV_WC_SUCCESS && !d.failed) {
				j = wc.wr_id / 2;
				d.failed = 1;
				snprintf(d.text, sizeof(d.text),
					 "client: iter %u: %s of %u B, rkey %#x: %s",
					 it + j, wc.wr_id % 2 ? "SEND_WITH_INV" :
					 "WRITE", wc.wr_id % 2 ? 8 : g.w[j].len,
					 g.w[j].rkey, ibv_wc_status_str(wc.status));
			}
			sends += wc.wr_id % 2;
		}
		xfer(&d, sizeof(d), true);
	}
	report_server(&t);
}

/* write-inv, server side: the windows and a loopback pair to probe them */
static struct ibv_cq *pcq;
static struct ibv_qp *pqa, *pqb;

static int post_recv_one(uint8_t *p, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge s = { (uintptr_t)p, len, mr->lkey };
	struct ibv_recv_wr rw = { .wr_id = wr_id, .sg_list = &s,
				  .num_sge = 1 }, *bad_wr;

	return ibv_post_recv(qp, &rw, &bad_wr);
}

/* One completion from @c within the timeout: 1, or 0. */
static int poll1(struct ibv_cq *c, struct ibv_wc *wc)
{
	double end = now() + timeout_s;
	int r;

	while (!(r = ibv_poll_cq(c, 1, wc)))
		if (now() > end)
			return 0;
	if (r < 0)
		die("poll_cq");
	return 1;
}

/*
 * pqa <-> pqb (this node's GID) from any state to RTS, fresh PSNs:
 * common.h's INIT, RTR (max_dest_rd_atomic 1) and RTS. The pair only
 * WRITEs.
 */
static void probe_pair_up(void)
{
	struct ibv_qp *q[2] = { pqa, pqb };
	uint32_t psn[2] = { rand() & 0xffffff, rand() & 0xffffff };
	struct ibv_qp_attr a;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 2; i++) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RESET;
		if (ibv_modify_qp(q[i], &a, IBV_QP_STATE))
			die("write-inv: probe QP to RESET");
		if (to_init(q[i], IBV_ACCESS_REMOTE_WRITE))
			die("write-inv: probe QP to INIT");
	}
	while (ibv_poll_cq(pcq, 1, &wc) > 0)
		;	/* the last probe's flushes */
	for (i = 0; i < 2; i++)
		if (rc_to_rtr_rd(q[i], q[1 - i]->qp_num, psn[1 - i], 1))
			die("write-inv: probe QP to RTR");
	for (i = 0; i < 2; i++)
		if (rc_to_rts(q[i], psn[i]))
			die("write-inv: probe QP to RTS");
}

/* A WRITE of @len B at @loff through @rkey from pqa: its status, or -1. */
static int probe_write(uint32_t rkey, uint64_t addr, uint32_t loff,
		       uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)buf + loff, len, mr->lkey };
	struct ibv_send_wr w = {}, *bad_wr;
	struct ibv_wc wc;

	w.sg_list = &s;
	w.num_sge = 1;
	w.opcode = IBV_WR_RDMA_WRITE;
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.rdma.remote_addr = addr;
	w.wr.rdma.rkey = rkey;
	if (ibv_post_send(pqa, &w, &bad_wr) || !poll1(pcq, &wc))
		return -1;
	return wc.status;
}

/*
 * Window j of a batch: 4 .. 64 KiB at a random offset of its 64 KiB slot,
 * every byte preset unlike the pattern the client will write, bound to
 * mws[j] under a fresh key (the bind WR is added to @bw).
 */
static void wi_window(struct wi_go *g, uint32_t j, struct ibv_mw *mw,
		      struct ibv_send_wr *bw)
{
	uint32_t len = WI_MIN + rnd() % (MAX_MSG - WI_MIN + 1), i;
	uint32_t off = j * MAX_MSG + rnd() % (MAX_MSG - len + 1);
	uint32_t seed = (uint32_t)rnd();
	uint8_t *p = buf + WI_AREA + off;

	for (i = 0; i < len; i++)
		p[i] = ~opat(seed, i);
	g->w[j].rkey = ibv_inc_rkey(mw->rkey);
	g->w[j].len = len;
	g->w[j].seed = seed;
	g->w[j].addr = (uintptr_t)p;
	memset(bw, 0, sizeof(*bw));
	bw->wr_id = j;
	bw->opcode = IBV_WR_BIND_MW;
	bw->send_flags = IBV_SEND_SIGNALED;
	bw->bind_mw.mw = mw;
	bw->bind_mw.rkey = g->w[j].rkey;
	bw->bind_mw.bind_info.mr = mr;
	bw->bind_mw.bind_info.addr = (uintptr_t)p;
	bw->bind_mw.bind_info.length = len;
	bw->bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (j)
		bw[-1].next = bw;
}

/* Window j's receive, bytes and rkey afterwards: true if all is right. */
static bool wi_judge(struct tally *t, struct wi_go *g, uint32_t it,
		     uint32_t j, struct ibv_wc *wc)
{
	uint8_t *p = (uint8_t *)(uintptr_t)g->w[j].addr;
	uint8_t *rbuf = buf + RECV_AREA + 64 * j;
	uint32_t len = g->w[j].len, seed = g->w[j].seed;
	uint32_t rkey = g->w[j].rkey, i, nbad, msg[2];
	uint32_t ploff = RECV_AREA + 4096, plen = 64;
	long m;
	int st;

	memcpy(msg, rbuf, sizeof(msg));
	if (wc->opcode != IBV_WC_RECV || wc->byte_len != sizeof(msg) ||
	    !(wc->wc_flags & IBV_WC_WITH_INV) ||
	    wc->invalidated_rkey != rkey || wc->wr_id != it + j ||
	    msg[0] != it + j || msg[1] != seed) {
		bad(t, "iter %u: receive %llu: opcode %d len %u flags %#x invalidated %#x (rkey %#x), carries iter %u seed %#x (want %#x)",
		    it + j, (unsigned long long)wc->wr_id, wc->opcode,
		    wc->byte_len, wc->wc_flags, wc->invalidated_rkey, rkey,
		    msg[0], msg[1], seed);
		return false;
	}
	/* every byte of the WRITE is in place at the completion */
	m = mismatch(p, len, seed);
	if (m >= 0) {
		for (i = nbad = 0; i < len; i++)
			nbad += p[i] != opat(seed, i);
		bad(t, "iter %u: at the SEND_WITH_INV's completion %u of the WRITE's %u B are not in the window, first +%ld: %02x, want %02x",
		    it + j, nbad, len, m, p[m], opat(seed, m));
		return false;
	}
	/* the rkey is dead: a WRITE through it fails and changes nothing */
	for (i = 0; i < plen; i++)
		buf[ploff + i] = ~opat(seed, i);
	probe_pair_up();
	st = probe_write(rkey, (uintptr_t)p, ploff, plen);
	m = mismatch(p, plen, seed);
	if (st != IBV_WC_REM_ACCESS_ERR || m >= 0) {
		bad(t, "iter %u: WRITE through the invalidated rkey %#x: %s (want %s), first byte changed %ld",
		    it + j, rkey, st < 0 ? "no completion" :
		    ibv_wc_status_str(st),
		    ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), m);
		return false;
	}
	return true;
}

static void write_inv_server(uint32_t n)
{
	struct tally t = { .name = "write-inv" };
	struct ibv_send_wr bw[WI_BATCH], *bad_wr;
	struct ibv_mw *mws[WI_BATCH];
	struct ibv_qp_init_attr ia = {};
	struct verdict v = {};
	uint32_t it, j, nb;
	struct ibv_wc wc;
	struct wi_done d;
	struct wi_go g;
	bool stop = false;
	size_t k;

	for (j = 0; j < WI_BATCH; j++) {
		mws[j] = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		if (!mws[j])
			die("write-inv: alloc_mw: %s", strerror(errno));
	}
	pcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pcq)
		die("write-inv: create_cq: %s", strerror(errno));
	ia.send_cq = pcq;
	ia.recv_cq = pcq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	pqa = ibv_create_qp(pd, &ia);
	pqb = ibv_create_qp(pd, &ia);
	if (!pqa || !pqb)
		die("write-inv: probe QPs: %s", strerror(errno));
	for (it = 0; it < n && !stop; it += nb) {
		nb = n - it < WI_BATCH ? n - it : WI_BATCH;
		memset(&g, 0, sizeof(g));
		g.n = nb;
		for (j = 0; j < nb; j++)
			wi_window(&g, j, mws[j], &bw[j]);
		if (ibv_post_send(qp, bw, &bad_wr))
			die("write-inv %u: post BIND_MW: %s", it, strerror(errno));
		for (j = 0; j < nb; j++) {
			if (poll1(cq, &wc) && wc.status == IBV_WC_SUCCESS &&
			    wc.opcode == IBV_WC_BIND_MW && wc.wr_id == j)
				continue;
			bad(&t, "iter %u: bind of window %u: %s", it + j,
			    (unsigned)wc.wr_id, ibv_wc_status_str(wc.status));
			stop = true;
			break;
		}
		if (stop)
			break;
		for (j = 0; j < nb; j++) {
			mws[j]->rkey = g.w[j].rkey;
			memset(buf + RECV_AREA + 64 * j, 0xee, 64);
			if (post_recv_one(buf + RECV_AREA + 64 * j, 64, it + j))
				die("write-inv %u: post_recv", it + j);
		}
		xfer(&g, sizeof(g), true);
		xfer(&d, sizeof(d), false);
		d.text[sizeof(d.text) - 1] = 0;
		for (j = 0; j < nb; j++) {
			if (!poll1(cq, &wc)) {
				bad(&t, "iter %u: no receive completion in %d s%s%s",
				    it + j, timeout_s, d.failed ? "; " : "",
				    d.text);
				stop = true;
				break;
			}
			if (wc.status != IBV_WC_SUCCESS) {
				bad(&t, "iter %u: receive: %s%s%s", it + j,
				    ibv_wc_status_str(wc.status),
				    d.failed ? "; " : "", d.text);
				stop = true;
				break;
			}
			if (wi_judge(&t, &g, it, j, &wc))
				t.ok++;
		}
		if (d.failed && !stop)
			bad(&t, "iter %u..%u: every receive right, yet %s",
			    it, it + nb - 1, d.text);
		stop |= d.failed;
	}
	memset(&g, 0, sizeof(g));
	xfer(&g, sizeof(g), true);
	v.pass = t.ok;
	v.fail = t.bad;
	for (j = 0, k = 0; j < t.bad && j < 3; j++)
		k += snprintf(v.text + k, sizeof(v.text) - k, "%.160s\n",
			      t.first[j]);
	verdict_send("write-inv", &v, ":\n");
}

/* ------------------------------------------------------------- rnr-mix */

#define RM_BATCH	4
#define RM_WLEN		(32u << 10)	/* WRITE/READ: at most, per message */
#define RM_SLOT		(64u << 10)
#define RM_WORD		(AT_AREA + (256u << 10))	/* the FETCH_ADD word */
#define RM_PUB		(3u << 20)	/* client: what the server READs */
#define RM_PUB_SZ	(512u << 10)
#define RM_PUB_SEED	0x5eedu
#define RM_SDST		RO_AREA		/* server: where its READs land */
#define RM_READ_ID	(1ull << 40)	/* the server's READ's wr_id */

static uint32_t rm_send_len(uint32_t j)
{
	return 1 + (j * 2246822519u) % RECV_LEN;
}

static uint32_t rm_send_seed(uint32_t j)
{
	return j * 3266489917u + 17;
}

/*
 * rnr-mix, client side: batches of RM_BATCH messages (WRITE, SEND,
 * FETCH_ADD, READ each), every result checked after its batch; then a
 * READ of the word; then the server's verdict.
 */
static void rnr_mix_client(void)
{
	struct tally t = { .name = "rnr-mix" }, ts = { .name = "rnr-mix-server" };
	uint64_t *res = (uint64_t *)(buf + L_RES), base, fin;
	uint32_t i, j, k, n = iters, batch, len[RM_BATCH], seed[RM_BATCH];
	uint32_t off, slen;
	int go = 1;
	long m;

	ofill(buf + RM_PUB, RM_PUB_SZ, RM_PUB_SEED);
	base = rnd() >> 16;
	memcpy(buf + L_RES + 512, &base, 8);
	add_wr(IBV_WR_RDMA_WRITE, L_RES + 512, 8, RM_WORD, true);
	run_chain("rnr-mix", 0);
	/* the server's waits start now */
	xfer(&go, sizeof(go), true);

	for (i = 0; i < n; i += batch) {
		batch = n - i < RM_BATCH ? n - i : RM_BATCH;
		memset(res, 0xee, 8 * RM_BATCH);
		for (k = 0; k < batch; k++) {
			j = i + k;
			len[k] = 1 + rnd() % RM_WLEN;
			seed[k] = (uint32_t)rnd();
			off = rnd() % (RM_SLOT - len[k]);
			ofill(buf + L_SRC + k * RM_SLOT, len[k], seed[k]);
			memset(buf + L_DST + k * RM_SLOT, 0, len[k]);
			add_wr(IBV_WR_RDMA_WRITE, L_SRC + k * RM_SLOT, len[k],
			       WR_AREA + k * RM_SLOT + off, false);
			slen = rm_send_len(j);
			ofill(buf + L_SRC + (512u << 10) + k * RECV_LEN, slen,
			      rm_send_seed(j));
			if (slen >= 4)
				memcpy(buf + L_SRC + (512u << 10) + k * RECV_LEN,
				       &j, 4);
			add_wr(IBV_WR_SEND, L_SRC + (512u << 10) + k * RECV_LEN,
			       slen, 0, true);
			add_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, L_RES + 8 * k, 8,
			       RM_WORD, true)->wr.atomic.compare_add = 1;
			add_wr(IBV_WR_RDMA_READ, L_DST + k * RM_SLOT, len[k],
			       WR_AREA + k * RM_SLOT + off, true);
		}
		run_chain("rnr-mix", i);
		for (k = 0; k < batch; k++) {
			j = i + k;
			m = mismatch(buf + L_DST + k * RM_SLOT, len[k], seed[k]);
			if (m < 0 && res[k] == base + j) {
				t.ok++;
				continue;
			}
			if (m >= 0)
				bad(&t, "message %u: READ of %u B after its WRITE: byte %ld is %02x, written %02x",
				    j, len[k], m, buf[L_DST + k * RM_SLOT + m],
				    opat(seed[k], m));
			else
				bad(&t, "message %u: FETCH_ADD saw base%+lld, want base+%u",
				    j, (long long)(res[k] - base), j);
		}
	}
	add_wr(IBV_WR_RDMA_READ, L_RES + 512, 8, RM_WORD, true);
	run_chain("rnr-mix", n);
	memcpy(&fin, buf + L_RES + 512, 8);
	if (fin != base + n)
		bad(&t, "the FETCH_ADD word ends at base%+lld, want base+%u (each executed once)",
		    (long long)(fin - base), n);
	report(&t);
	report_server(&ts);
}

/* rnr-mix, server: completions of the other kind wait here */
static struct ibv_wc rm_stash[8];
static int rm_nstash;

/*
 * The next completion of the server's READ (@read) or of a receive, in
 * the order they came; others are kept for later. 1, or 0 on timeout.
 */
static int rm_wait(bool read, struct ibv_wc *wc)
{
	double end = now() + timeout_s;
	int i, r;

	for (i = 0; i < rm_nstash; i++)
		if ((rm_stash[i].wr_id == RM_READ_ID) == read) {
			*wc = rm_stash[i];
			memmove(rm_stash + i, rm_stash + i + 1,
				(rm_nstash - i - 1) * sizeof(*wc));
			rm_nstash--;
			return 1;
		}
	for (;;) {
		r = ibv_poll_cq(cq, 1, wc);
		if (r < 0)
			die("poll_cq");
		if (!r) {
			if (now() > end)
				return 0;
			continue;
		}
		if ((wc->wr_id == RM_READ_ID) == read)
			return 1;
		if (rm_nstash == 8)
			die("rnr-mix: more completions than WRs posted");
		rm_stash[rm_nstash++] = *wc;
	}
}

/* rnr-mix, server: one READ of the client's bytes; true if all right */
static bool rm_read(struct verdict *v, uint32_t j)
{
	uint32_t len = 1 + rnd() % (256u << 10);
	uint32_t off = rnd() % (RM_PUB_SZ - len + 1), i;
	struct ibv_sge s = { (uintptr_t)buf + RM_SDST, len, mr->lkey };
	struct ibv_send_wr w = {}, *bad_wr;
	struct ibv_wc wc;

	memset(buf + RM_SDST, 0, len);
	w.wr_id = RM_READ_ID;
	w.sg_list = &s;
	w.num_sge = 1;
	w.opcode = IBV_WR_RDMA_READ;
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.rdma.remote_addr = peer.addr + RM_PUB + off;
	w.wr.rdma.rkey = peer.rkey;
	if (ibv_post_send(qp, &w, &bad_wr))
		die("rnr-mix: post READ: %s", strerror(errno));
	if (!rm_wait(true, &wc))
		die("rnr-mix: before message %u: READ of %u B not done in %d s",
		    j, len, timeout_s);
	if (wc.status != IBV_WC_SUCCESS)
		die("rnr-mix: before message %u: READ: %s", j,
		    ibv_wc_status_str(wc.status));
	for (i = 0; i < len; i++)
		if (buf[RM_SDST + i] != opat(RM_PUB_SEED, off + i))
			break;
	if (i == len)
		return true;
	if (!v->fail)
		snprintf(v->text, sizeof(v->text),
			 "READ of the client's %u B at +%u before message %u: byte %u is %02x, want %02x",
			 len, off, j, i, buf[RM_SDST + i],
			 opat(RM_PUB_SEED, off + i));
	v->fail++;
	return false;
}

/*
 * rnr-mix, server side: at most 2 receives posted, a pause after every
 * third message (the client's SENDs meet RNR), and every 4th message
 * waits for a READ of the client's memory first.
 */
static void rnr_mix_server(uint32_t n)
{
	uint32_t expect = 0, posted = 0, len, seed;
	struct verdict v = {};
	struct ibv_wc wc;
	uint8_t *p;
	long m;
	int go;

	xfer(&go, sizeof(go), false);
	while (expect < n) {
		while (posted < n && posted - expect < 2) {
			if (post_recv_one(buf + RECV_AREA +
					  (posted % 64) * RECV_LEN, RECV_LEN,
					  posted))
				die("rnr-mix: post_recv");
			posted++;
		}
		if (expect % 4 == 2 && rm_read(&v, expect))
			v.pass++;
		if (!rm_wait(false, &wc))
			die("rnr-mix: no completion for message %u in %d s",
			    expect, timeout_s);
		if (wc.status != IBV_WC_SUCCESS)
			die("rnr-mix: message %u: %s", expect,
			    ibv_wc_status_str(wc.status));
		len = rm_send_len(expect);
		seed = rm_send_seed(expect);
		p = buf + RECV_AREA + (expect % 64) * RECV_LEN;
		m = wc.wr_id != expect || wc.opcode != IBV_WC_RECV ||
		    wc.byte_len != len ? -2 :
		    send_mismatch(p, len, expect, seed);
		if (m == -1) {
			v.pass++;
		} else {
			if (!v.fail)
				snprintf(v.text, sizeof(v.text),
					 "receive %llu (want %u): opcode %d len %u (want %u) seq %u byte %ld",
					 (unsigned long long)wc.wr_id, expect,
					 wc.opcode, wc.byte_len, len,
					 len >= 4 ? *(uint32_t *)p : 0, m);
			v.fail++;
		}
		expect++;
		if (expect % 3 == 0)
			usleep(3000);	/* the client outruns us: RNR */
	}
	verdict_send("rnr-mix-server", &v, ": ");
}

/* ----------------------------------------------------------- rnr-stall */

/*
 * rnr-stall: a READ whose responses are all lost, followed by a SEND the
 * server refuses (RNR, min_rnr_timer 163.84 ms: the client spends almost
 * all its time waiting out RNR NAKs). The server drops its READ
 * responses (-D, e.g. an iptables rule) for RS_DROP_MS, then lets them
 * through (-U), and posts its receive only once the client says its READ
 * completed: the lost responses must be repaired (the responder's probe
 * resends them; the client's timeout, should it expire during an RNR
 * wait, is taken when the wait ends) while the SEND behind the READ keeps
 * meeting RNR. A QP that repairs nothing during RNR waits fails here.
 */
#define RS_ITERS	3
#define RS_LEN		(64u << 10)
#define RS_AREA		(WR_AREA + (512u << 10))	/* server: READ source */
#define RS_DROP_MS	300
#define RS_RNR_TIMER	28		/* 163.84 ms */

struct rs_msg {
	uint32_t seed, ok;
	char text[160];
};

static void rnr_stall_client(void)
{
	struct tally t = { .name = "rnr-stall" }, ts = { .name = "rnr-stall-server" };
	struct ibv_wc wc;
	struct rs_msg m;
	uint32_t it, slen = 100;
	double t0, end;
	long bad_at;
	int r;

	for (it = 0; it < RS_ITERS; it++) {
		xfer(&m, sizeof(m), false);	/* the server drops responses */
		memset(buf + L_DST, 0, RS_LEN);
		ofill(buf + L_SRC, slen, m.seed + 1);
		add_wr(IBV_WR_RDMA_READ, L_DST, RS_LEN, RS_AREA, true);
		add_wr(IBV_WR_SEND, L_SRC, slen, 0, true);
		nwr = 0;
		t0 = now();
		if (ibv_post_send(qp, wrs, &(struct ibv_send_wr *){ NULL }))
			die("rnr-stall %u: post_send: %s", it, strerror(errno));
		end = t0 + 8;
		while (!(r = ibv_poll_cq(cq, 1, &wc)) && now() < end)
			;
		if (r < 0)
			die("poll_cq");
		memset(&m, 0, sizeof(m));
		if (!r) {
			snprintf(m.text, sizeof(m.text),
				 "iter %u: READ (its responses dropped %u ms) not done in 8 s while the SEND behind it met RNR",
				 it, RS_DROP_MS);
		} else if (wc.wr_id != 0 || wc.status != IBV_WC_SUCCESS) {
			snprintf(m.text, sizeof(m.text),
				 "iter %u: first completion: WR %llu %s (want the READ, success)",
				 it, (unsigned long long)wc.wr_id,
				 ibv_wc_status_str(wc.status));
		} else if ((bad_at = mismatch(buf + L_DST, RS_LEN, it)) >= 0) {
			snprintf(m.text, sizeof(m.text),
				 "iter %u: READ byte %ld is %02x, want %02x", it,
				 bad_at, buf[L_DST + bad_at], opat(it, bad_at));
		} else {
			m.ok = 1;
			printf("#    rnr-stall %u: READ done after %.0f ms\n", it,
			       (now() - t0) * 1000);
		}
		xfer(&m, sizeof(m), true);	/* the server takes the SEND */
		if (!m.ok) {
			bad(&t, "%s", m.text);
			break;
		}
		if (!poll1(cq, &wc) || wc.status != IBV_WC_SUCCESS) {
			bad(&t, "iter %u: the SEND after the READ: %s", it,
			    ibv_wc_status_str(wc.status));
			break;
		}
		t.ok++;
	}
	report(&t);
	report_server(&ts);
}

static void rs_min_rnr_timer(uint8_t v)
{
	struct ibv_qp_attr a = { .min_rnr_timer = v };

	if (ibv_modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER))
		die("rnr-stall: min_rnr_timer %u: %s", v, strerror(errno));
}

static void rs_sh(const char *cmd)
{
	if (system(cmd))
		die("rnr-stall: '%s' failed", cmd);
}

static void rnr_stall_server(void)
{
	struct verdict v = {};
	struct ibv_wc wc;
	struct rs_msg m;
	uint32_t it, slen = 100;
	long bad_at;

	rs_min_rnr_timer(RS_RNR_TIMER);
	for (it = 0; it < RS_ITERS; it++) {
		ofill(buf + RS_AREA, RS_LEN, it);
		rs_sh(drop_cmd);
		memset(&m, 0, sizeof(m));
		m.seed = it;
		xfer(&m, sizeof(m), true);
		usleep(RS_DROP_MS * 1000);
		rs_sh(undrop_cmd ? undrop_cmd : "true");
		xfer(&m, sizeof(m), false);	/* the client's READ ended */
		if (!m.ok)
			break;		/* the client counts it */
		memset(buf + RECV_AREA, 0, slen);
		if (post_recv_one(buf + RECV_AREA, RECV_LEN, it))
			die("rnr-stall: post_recv");
		if (!poll1(cq, &wc) || wc.status != IBV_WC_SUCCESS ||
		    wc.byte_len != slen ||
		    (bad_at = mismatch(buf + RECV_AREA, slen, it + 1)) >= 0) {
			snprintf(v.text, sizeof(v.text),
				 "iter %u: the SEND: %s, %u B", it,
				 ibv_wc_status_str(wc.status), wc.byte_len);
			v.fail++;
			break;
		}
		v.pass++;
	}
	rs_min_rnr_timer(1);
	verdict_send("rnr-stall-server", &v, ": ");
}

static void usage(void)
{
	fprintf(stderr, "usage: mrc_order_test -d DEV [-g GIDX] [-p PORT] [-t SECS] [-n ITERS] [-D DROP -U UNDROP] [SERVER_IP]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = "mrc0", *port = "18519";
	struct addrinfo hints = {}, *ai;
	int c, one = 1, ls;

	while ((c = getopt(argc, argv, "d:g:p:t:n:D:U:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid_idx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 't': timeout_s = atoi(optarg); break;
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 'D': drop_cmd = optarg; break;
		case 'U': undrop_cmd = optarg; break;
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
		t_check = now();
		write_read();
		write_write();
		write_alias();
		write_atomic();
		chains();
		recv_order_client();
		write_inv_client();
		rnr_mix_client();
		if (peer.stall)
			rnr_stall_client();
	} else {
		recv_order_server(peer.iters);
		write_inv_server(peer.iters);
		rnr_mix_server(peer.iters);
		if (me.stall)
			rnr_stall_server();
	}
	/* the client is done with our memory only when it says so */
	xfer(&one, sizeof(one), true);
	xfer(&c, sizeof(c), false);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
