// SPDX-License-Identifier: GPL-2.0
/*
 * mrc_target: RC QPs with a guarded memory region, driven through files in
 * a directory shared by both lab nodes, for the hostile-input scenario
 * (selftests/lab/hostile.sh). The packet forger (mrc_forge.py) aims at the
 * QPs and the MR this program publishes; this program tells whether
 * anything was placed where it must not be.
 *
 *   mrc_target serve  DIR [-d DEV] [-g GIDX] [-q NQP] [-H MASK]    (n2)
 *   mrc_target client DIR [-d DEV] [-g GIDX] [-q NQP] [-H MASK]    (n1)
 *
 * Each side creates NQP RC QPs (default 6) on one CQ and writes
 * DIR/ROLE.info ("key value" lines: gid, qpn.I, psn.I, and for the
 * server rkey, va, mrlen), waits for the other side's info and connects
 * QP I to the peer's QP I. The server's MR (MRLEN = 1 MiB, REMOTE_WRITE |
 * REMOTE_READ | REMOTE_ATOMIC) sits between two unregistered 64 KiB
 * guard areas; every QP has 16 receive WQEs posted (4 KiB each, in their
 * own guarded MR). QP I is left in RTR (not moved to RTS) when bit I of
 * -H MASK is set, until the command "rts I". Then ROLE.ready is written
 * and commands are taken
 * from DIR/ROLE.cmd.1, .2, ... in order, each answered in DIR/ROLE.res.N
 * (last line "rc=0" on success). While idle, the CQ is polled and every
 * completion counted per QP.
 *
 * Commands (both): state  -> one line per QP: "qp I qpn N state S
 *                            recv_ok N recv_err N send_ok N send_err N",
 *                            then "guards ok" or "guards CORRUPT"
 *                  quit
 * Server:  fill BYTE                 set the whole MR to BYTE
 *          check OFF LEN BYTE        MR[OFF, OFF+LEN) all == BYTE?
 *          expect_state I STATE      QP I is in STATE (RESET INIT RTR RTS
 *                                    SQD SQE ERR)?
 *          expect_recv I N           QP I has exactly N successful recvs?
 *          access I FLAGS            modify QP I (RTS -> RTS) to the QP
 *                                    access flags FLAGS: letters w (REMOTE_
 *                                    WRITE), r (REMOTE_READ), a (REMOTE_
 *                                    ATOMIC), or "-" for none
 * Both:    rts I                     move QP I (held in RTR by -H) to RTS
 * Client:  xfer I BYTE LEN           on QP I: RDMA WRITE LEN bytes of BYTE
 *                                    to the server MR at offset 0, then
 *                                    SEND 1 KiB of BYTE; wait for both
 *                                    completions (success required)
 *          expect_op I OP OFF LEN BYTE STATUS
 *                                    on QP I, one signaled OP at the server
 *                                    MR offset OFF: write (LEN bytes of
 *                                    BYTE), read (LEN bytes, which must all
 *                                    be BYTE on success), fadd (add 1 to
 *                                    the 8 bytes at OFF) or cas (compare 0,
 *                                    swap 8 bytes of BYTE); the completion
 *                                    status must be STATUS (SUCCESS,
 *                                    REM_ACCESS, REM_INV_REQ, REM_OP,
 *                                    RETRY_EXC, FLUSH or a number)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#define MAXQP	16
#define MRLEN	(1U << 20)
#define GUARD	(64U << 10)
#define NRECV	16
#define RSZ	4096
#define GBYTE	0xa5

static const char *dir, *role;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp[MAXQP];
static struct ibv_mr *mr, *rmr, *smr;
static uint8_t *area, *rarea, *sbuf;
static int nqp = 6, gidx = 1;
static unsigned long hold_rtr;	/* -H: QPs left in RTR */
static union ibv_gid gid;
static struct {
	unsigned long recv_ok, recv_err, send_ok, send_err;
} cnt[MAXQP];
static uint32_t peer_qpn[MAXQP], peer_psn[MAXQP], my_psn[MAXQP];
static struct ibv_wc last_swc[MAXQP];	/* last send completion per QP */
static union ibv_gid peer_gid;
static uint64_t peer_va;
static uint32_t peer_rkey;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "mrc_target %s: ", role);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void path(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(buf, n, "%s/", dir);

	va_start(ap, fmt);
	vsnprintf(buf + k, n - k, fmt, ap);
	va_end(ap);
}

/* Write @text to DIR/@name atomically. */
static void put_file(const char *name, const char *text)
{
	char p[512], t[520];
	FILE *f;

	path(p, sizeof(p), "%s", name);
	snprintf(t, sizeof(t), "%s.tmp", p);
	f = fopen(t, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		die("cannot write %s", t);
	if (rename(t, p))
		die("rename %s: %s", p, strerror(errno));
}

static const char *state_name(enum ibv_qp_state s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD",
					 "SQE", "ERR" };

	return s <= IBV_QPS_ERR ? n[s] : "UNKNOWN";
}

static void post_recv(int i, int n)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	while (n-- > 0) {
		sge.addr = (uintptr_t)rarea + GUARD +
			   (size_t)(i * NRECV + n % NRECV) * RSZ;
		sge.length = RSZ;
		sge.lkey = rmr->lkey;
		wr.wr_id = (uint64_t)i << 32 | n;
		if (ibv_post_recv(qp[i], &wr, &bad))
			die("post_recv qp %d", i);
	}
}

static int qp_index(uint32_t qpn)
{
	int i;

	for (i = 0; i < nqp; i++)
		if (qp[i]->qp_num == qpn)
			return i;
	return -1;
}

/* Poll everything; returns the number of completions seen. */
static int poll_all(struct ibv_wc *last)
{
	struct ibv_wc wc[16];
	int n, k, i, total = 0;

	while ((n = ibv_poll_cq(cq, 16, wc)) > 0) {
		for (k = 0; k < n; k++) {
			i = qp_index(wc[k].qp_num);
			if (i < 0)
				continue;
			if (wc[k].opcode & IBV_WC_RECV) {
				if (wc[k].status == IBV_WC_SUCCESS)
					cnt[i].recv_ok++;
				else
					cnt[i].recv_err++;
			} else if (wc[k].status == IBV_WC_SUCCESS) {
				cnt[i].send_ok++;
				last_swc[i] = wc[k];
			} else {
				cnt[i].send_err++;
				last_swc[i] = wc[k];
			}
			if (last)
				*last = wc[k];
		}
		total += n;
	}
	if (n < 0)
		die("poll_cq failed");
	return total;
}

static int qp_state(int i)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp[i], &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

static int guards_ok(void)
{
	uint8_t *g[4] = { area, area + GUARD + MRLEN, rarea,
			  rarea + GUARD + (size_t)MAXQP * NRECV * RSZ };
	size_t k;
	int j;

	for (j = 0; j < 4; j++)
		for (k = 0; k < GUARD; k++)
			if (g[j][k] != GBYTE)
				return 0;
	return 1;
}

static void setup(void)
{
	struct ibv_device **list;
	size_t rlen = (size_t)MAXQP * NRECV * RSZ;
	int n, i;

	list = ibv_get_device_list(&n);
	if (!list || !n)
		die("no RDMA device");
	ctx = ibv_open_device(list[0]);
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]),
			    getenv("MRC_DEV") ? getenv("MRC_DEV") : "mrc0")) {
			ibv_close_device(ctx);
			ctx = ibv_open_device(list[i]);
		}
	if (!ctx)
		die("open device");
	if (ibv_query_gid(ctx, 1, gidx, &gid))
		die("query_gid %d", gidx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4096, NULL, NULL, 0);
	if (!pd || !cq)
		die("pd/cq");

	area = mmap(NULL, MRLEN + 2 * GUARD, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rarea = mmap(NULL, rlen + 2 * GUARD, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sbuf = mmap(NULL, MRLEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || rarea == MAP_FAILED || sbuf == MAP_FAILED)
		die("mmap");
	memset(area, GBYTE, MRLEN + 2 * GUARD);
	memset(area + GUARD, 0, MRLEN);
	memset(rarea, GBYTE, rlen + 2 * GUARD);
	memset(rarea + GUARD, 0, rlen);
	mr = ibv_reg_mr(pd, area + GUARD, MRLEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	rmr = ibv_reg_mr(pd, rarea + GUARD, rlen, IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(pd, sbuf, MRLEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !rmr || !smr)
		die("reg_mr: %s", strerror(errno));

	srand(getpid() ^ time(NULL));
	for (i = 0; i < nqp; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 64, .max_recv_wr = 64,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .port_num = 1,
			.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ |
					   IBV_ACCESS_REMOTE_ATOMIC,
		};

		qp[i] = ibv_create_qp(pd, &ia);
		if (!qp[i])
			die("create_qp %d: %s", i, strerror(errno));
		if (ibv_modify_qp(qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
			die("INIT %d", i);
		my_psn[i] = rand() & 0xffffff;
		post_recv(i, NRECV);
	}
}

static void write_info(void)
{
	char buf[4096], name[64];
	int k = 0, i;

	k += snprintf(buf + k, sizeof(buf) - k, "gid ");
	for (i = 0; i < 16; i++)
		k += snprintf(buf + k, sizeof(buf) - k, "%02x", gid.raw[i]);
	k += snprintf(buf + k, sizeof(buf) - k, "\nnqp %d\n", nqp);
	for (i = 0; i < nqp; i++)
		k += snprintf(buf + k, sizeof(buf) - k,
			      "qpn.%d %u\npsn.%d %u\n", i, qp[i]->qp_num, i,
			      my_psn[i]);
	k += snprintf(buf + k, sizeof(buf) - k,
		      "rkey %u\nva %llu\nmrlen %u\n", mr->rkey,
		      (unsigned long long)(uintptr_t)(area + GUARD), MRLEN);
	snprintf(name, sizeof(name), "%s.info", role);
	put_file(name, buf);
}

static void read_info(const char *peer)
{
	char p[512], key[64];
	unsigned long long v;
	char sval[64];
	FILE *f = NULL;
	int i, t;

	path(p, sizeof(p), "%s.info", peer);
	for (t = 0; t < 6000 && !(f = fopen(p, "r")); t++)
		sleep_ms(50);
	if (!f)
		die("no %s", p);
	while (fscanf(f, "%63s %63s", key, sval) == 2) {
		if (!strcmp(key, "gid")) {
			for (i = 0; i < 16; i++) {
				unsigned int b;

				sscanf(sval + 2 * i, "%2x", &b);
				peer_gid.raw[i] = b;
			}
			continue;
		}
		v = strtoull(sval, NULL, 0);
		if (sscanf(key, "qpn.%d", &i) == 1 && i >= 0 && i < MAXQP)
			peer_qpn[i] = v;
		else if (sscanf(key, "psn.%d", &i) == 1 && i >= 0 &&
			 i < MAXQP)
			peer_psn[i] = v;
		else if (!strcmp(key, "rkey"))
			peer_rkey = v;
		else if (!strcmp(key, "va"))
			peer_va = v;
	}
	fclose(f);
}

static int to_rts(int i)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = 16,
	};

	a.sq_psn = my_psn[i];
	return ibv_modify_qp(qp[i], &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void connect_qps(void)
{
	int i;

	for (i = 0; i < nqp; i++) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
			.dest_qp_num = peer_qpn[i], .rq_psn = peer_psn[i],
			.max_dest_rd_atomic = 16, .min_rnr_timer = 12,
			.ah_attr = {
				.is_global = 1, .port_num = 1,
				.grh = { .dgid = peer_gid, .sgid_index = gidx,
					 .hop_limit = 64 },
			},
		};

		if (ibv_modify_qp(qp[i], &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
			die("RTR %d: %s", i, strerror(errno));
		if (hold_rtr & (1UL << i))
			continue;
		if (to_rts(i))
			die("RTS %d: %s", i, strerror(errno));
	}
}

static int parse_state(const char *s)
{
	int i;

	for (i = 0; i <= IBV_QPS_ERR; i++)
		if (!strcmp(s, state_name(i)))
			return i;
	return -1;
}

static int xfer(int i, int byte, unsigned int len, char *out, size_t n)
{
	struct ibv_sge sge = { .lkey = smr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	unsigned long ok0 = cnt[i].send_ok, err0 = cnt[i].send_err;
	int t;

	if (len > MRLEN)
		return snprintf(out, n, "len too big\n"), 1;
	memset(sbuf, byte, MRLEN);
	sge.addr = (uintptr_t)sbuf;
	sge.length = len;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = peer_va;
	wr.wr.rdma.rkey = peer_rkey;
	wr.wr_id = 1;
	if (ibv_post_send(qp[i], &wr, &bad))
		return snprintf(out, n, "post WRITE failed\n"), 1;
	sge.length = 1024;
	wr.opcode = IBV_WR_SEND;
	wr.wr_id = 2;
	if (ibv_post_send(qp[i], &wr, &bad))
		return snprintf(out, n, "post SEND failed\n"), 1;
	for (t = 0; t < 6000; t++) {
		poll_all(NULL);
		if (cnt[i].send_ok + cnt[i].send_err - ok0 - err0 >= 2)
			break;
		sleep_ms(10);
	}
	if (cnt[i].send_ok - ok0 != 2)
		return snprintf(out, n, "completions: %lu ok, %lu errors\n",
				cnt[i].send_ok - ok0, cnt[i].send_err - err0), 1;
	return snprintf(out, n, "WRITE %u B + SEND 1 KiB of 0x%02x on qp %d\n",
			len, byte, i), 0;
}

static const struct {
	const char *name;
	int status;
} status_names[] = {
	{ "SUCCESS", IBV_WC_SUCCESS }, { "REM_ACCESS", IBV_WC_REM_ACCESS_ERR },
	{ "REM_INV_REQ", IBV_WC_REM_INV_REQ_ERR },
	{ "REM_OP", IBV_WC_REM_OP_ERR }, { "RETRY_EXC", IBV_WC_RETRY_EXC_ERR },
	{ "FLUSH", IBV_WC_WR_FLUSH_ERR },
};

static int parse_status(const char *s)
{
	size_t k;

	for (k = 0; k < sizeof(status_names) / sizeof(status_names[0]); k++)
		if (!strcmp(s, status_names[k].name))
			return status_names[k].status;
	return atoi(s);
}

/* "w", "r", "a" letters (or "-") -> IBV_ACCESS_REMOTE_* */
static int parse_access(const char *s)
{
	int f = 0;

	for (; *s; s++)
		f |= *s == 'w' ? IBV_ACCESS_REMOTE_WRITE :
		     *s == 'r' ? IBV_ACCESS_REMOTE_READ :
		     *s == 'a' ? IBV_ACCESS_REMOTE_ATOMIC : 0;
	return f;
}

/*
 * One signaled operation on QP @i at the server MR offset @off; wait for
 * its completion and compare the status with @want.
 */
static int expect_op(int i, const char *op, unsigned long off,
		     unsigned long len, int byte, int want, char *out, size_t n)
{
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .lkey = smr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .wr_id = 7,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	unsigned long ok0 = cnt[i].send_ok, err0 = cnt[i].send_err;
	struct ibv_wc wc;
	unsigned long k;
	int t;

	if (len > MRLEN || off > MRLEN - len)
		return snprintf(out, n, "bad range\n"), 1;
	memset(sbuf, 0, len > 8 ? len : 8);
	sge.length = len;
	if (!strcmp(op, "write")) {
		memset(sbuf, byte, len);
		wr.opcode = IBV_WR_RDMA_WRITE;
	} else if (!strcmp(op, "read")) {
		wr.opcode = IBV_WR_RDMA_READ;
	} else if (!strcmp(op, "fadd") || !strcmp(op, "cas")) {
		sge.length = 8;
		wr.opcode = op[0] == 'f' ? IBV_WR_ATOMIC_FETCH_AND_ADD :
			    IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.remote_addr = peer_va + off;
		wr.wr.atomic.rkey = peer_rkey;
		wr.wr.atomic.compare_add = op[0] == 'f' ? 1 : 0;
		wr.wr.atomic.swap = 0x0101010101010101ULL * (uint8_t)byte;
	} else {
		return snprintf(out, n, "bad op %s\n", op), 1;
	}
	if (wr.opcode == IBV_WR_RDMA_WRITE || wr.opcode == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = peer_va + off;
		wr.wr.rdma.rkey = peer_rkey;
	}
	if (ibv_post_send(qp[i], &wr, &bad))
		return snprintf(out, n, "post %s failed\n", op), 1;
	for (t = 0; t < 6000; t++) {
		poll_all(NULL);
		if (cnt[i].send_ok + cnt[i].send_err > ok0 + err0)
			break;
		sleep_ms(10);
	}
	if (cnt[i].send_ok + cnt[i].send_err == ok0 + err0)
		return snprintf(out, n, "%s on qp %d: no completion\n", op, i), 1;
	wc = last_swc[i];
	if ((int)wc.status != want)
		return snprintf(out, n, "%s on qp %d: status %d (%s), expected %d\n",
				op, i, wc.status, ibv_wc_status_str(wc.status),
				want), 1;
	if (want == IBV_WC_SUCCESS && wr.opcode == IBV_WR_RDMA_READ)
		for (k = 0; k < len; k++)
			if (sbuf[k] != (uint8_t)byte)
				return snprintf(out, n, "read on qp %d: byte %lu is 0x%02x, expected 0x%02x\n",
						i, k, sbuf[k], byte & 0xff), 1;
	return snprintf(out, n, "%s on qp %d at %lu: status %d (%s)\n", op, i,
			off, wc.status, ibv_wc_status_str(wc.status)), 0;
}

/* Run one command line; fill @out; return 0 on success. */
static int run_cmd(char *line, char *out, size_t n, int *quit)
{
	char op[32];
	unsigned long a = 0, b = 0, c = 0;
	char s[32] = "", s2[32] = "";
	unsigned long d = 0;
	int k = 0, i, rc = 0;

	if (sscanf(line, "%31s", op) != 1)
		return snprintf(out, n, "empty command\n"), 1;
	poll_all(NULL);
	if (!strcmp(op, "quit")) {
		*quit = 1;
		snprintf(out, n, "bye\n");
	} else if (!strcmp(op, "state")) {
		for (i = 0; i < nqp; i++)
			k += snprintf(out + k, n - k,
				      "qp %d qpn %u state %s recv_ok %lu recv_err %lu send_ok %lu send_err %lu\n",
				      i, qp[i]->qp_num,
				      state_name(qp_state(i)), cnt[i].recv_ok,
				      cnt[i].recv_err, cnt[i].send_ok,
				      cnt[i].send_err);
		rc = !guards_ok();
		snprintf(out + k, n - k, "guards %s\n", rc ? "CORRUPT" : "ok");
	} else if (!strcmp(op, "fill") && sscanf(line, "%*s %li", &a) == 1) {
		memset(area + GUARD, (int)a, MRLEN);
		snprintf(out, n, "filled with 0x%02lx\n", a);
	} else if (!strcmp(op, "check") &&
		   sscanf(line, "%*s %li %li %li", &a, &b, &c) == 3) {
		for (i = 0; a + i < MRLEN && (unsigned long)i < b; i++)
			if (area[GUARD + a + i] != (uint8_t)c)
				break;
		rc = (unsigned long)i != b;
		if (rc)
			snprintf(out, n, "MR[%lu] = 0x%02x, expected 0x%02lx\n",
				 a + i, a + i < MRLEN ? area[GUARD + a + i] : 0,
				 c);
		else
			snprintf(out, n, "MR[%lu, +%lu) all 0x%02lx\n", a, b,
				 c);
		if (!guards_ok()) {
			rc = 1;
			strncat(out, "guards CORRUPT\n", n - strlen(out) - 1);
		}
	} else if (!strcmp(op, "expect_state") &&
		   sscanf(line, "%*s %lu %31s", &a, s) == 2 && a < (unsigned)nqp) {
		i = qp_state(a);
		rc = i != parse_state(s);
		snprintf(out, n, "qp %lu state %s (expected %s)\n", a,
			 state_name(i), s);
	} else if (!strcmp(op, "expect_recv") &&
		   sscanf(line, "%*s %lu %lu", &a, &b) == 2 && a < (unsigned)nqp) {
		rc = cnt[a].recv_ok != b;
		snprintf(out, n, "qp %lu recv_ok %lu (expected %lu)\n", a,
			 cnt[a].recv_ok, b);
	} else if (!strcmp(op, "xfer") &&
		   sscanf(line, "%*s %lu %li %li", &a, &b, &c) == 3 &&
		   a < (unsigned)nqp) {
		rc = xfer(a, b, c, out, n);
	} else if (!strcmp(op, "expect_op") &&
		   sscanf(line, "%*s %lu %31s %li %li %li %31s", &a, s, &b, &c,
			  &d, s2) == 6 && a < (unsigned)nqp) {
		rc = expect_op(a, s, b, c, d, parse_status(s2), out, n);
	} else if (!strcmp(op, "access") &&
		   sscanf(line, "%*s %lu %31s", &a, s) == 2 && a < (unsigned)nqp) {
		struct ibv_qp_attr qa = { .qp_access_flags = parse_access(s) };

		rc = ibv_modify_qp(qp[a], &qa, IBV_QP_ACCESS_FLAGS);
		snprintf(out, n, "qp %lu access flags 0x%x: %s\n", a,
			 qa.qp_access_flags, rc ? strerror(rc) : "ok");
	} else if (!strcmp(op, "rts") && sscanf(line, "%*s %lu", &a) == 1 &&
		   a < (unsigned)nqp) {
		rc = to_rts(a);
		snprintf(out, n, "qp %lu to RTS: %s\n", a,
			 rc ? strerror(rc) : "ok");
	} else {
		rc = 1;
		snprintf(out, n, "bad command: %s\n", line);
	}
	return rc;
}

int main(int argc, char **argv)
{
	char p[512], line[256], out[8192], name[64];
	int seq = 1, quit = 0, rc, opt;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: %s serve|client DIR [-d DEV] [-g GIDX] [-q NQP] [-H MASK]\n",
			argv[0]);
		return 2;
	}
	role = !strcmp(argv[1], "serve") ? "srv" : "cli";
	dir = argv[2];
	optind = 3;
	while ((opt = getopt(argc, argv, "g:q:d:H:")) != -1) {
		if (opt == 'H')
			hold_rtr = strtoul(optarg, NULL, 0);
		else if (opt == 'g')
			gidx = atoi(optarg);
		else if (opt == 'q')
			nqp = atoi(optarg);
		else if (opt == 'd')
			setenv("MRC_DEV", optarg, 1);
	}
	if (nqp < 1 || nqp > MAXQP)
		die("bad -q");
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup();
	write_info();
	read_info(!strcmp(role, "srv") ? "cli" : "srv");
	connect_qps();
	snprintf(name, sizeof(name), "%s.ready", role);
	put_file(name, "ready\n");
	printf("%s: %d QPs connected, MR va 0x%llx rkey 0x%x\n", role, nqp,
	       (unsigned long long)(uintptr_t)(area + GUARD), mr->rkey);

	while (!quit) {
		path(p, sizeof(p), "%s.cmd.%d", role, seq);
		f = fopen(p, "r");
		if (!f) {
			poll_all(NULL);
			sleep_ms(20);
			continue;
		}
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
		line[strcspn(line, "\n")] = 0;
		out[0] = 0;
		rc = run_cmd(line, out, sizeof(out) - 16, &quit);
		snprintf(out + strlen(out), 16, "rc=%d\n", rc);
		printf("%s: cmd %d '%s' -> %s", role, seq, line, out);
		snprintf(name, sizeof(name), "%s.res.%d", role, seq);
		put_file(name, out);
		seq++;
	}
	return 0;
}
