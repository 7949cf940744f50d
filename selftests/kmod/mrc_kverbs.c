// SPDX-License-Identifier: GPL-2.0
/*
 * mrc_kverbs: kernel-verbs checks of an RDMA device, as a kernel ULP sees
 * it: fast-register MRs (IB_WR_REG_MR, IB_WR_LOCAL_INV) and RDMA
 * WRITE/READ through their rkeys, between two RC QPs of the device
 * connected to each other (loopback through its IPv4-mapped GID).
 * User space cannot post REG_MR, so only a module can check it. Then a UD
 * AH destroyed in atomic context while sends posted with it are still
 * leaving (user space destroys AHs only where it may sleep).
 *
 *   insmod mrc_kverbs.ko [dev=mrc0] [timeout_ms=5000]
 *
 * The checks run in module init, one kernel log line each
 * ("mrc_kverbs: ok ..." / "mrc_kverbs: FAIL ..."), then a line
 * "mrc_kverbs: N passed, M failed"; init returns 0 whatever the result
 * (rmmod it afterwards) and frees everything it allocated. Every wait for
 * a completion ends after timeout_ms, so a device that loses one fails a
 * check instead of hanging the caller.
 *
 * The device is expected to map DMA with virtual addresses (a software
 * device: ib_uses_virt_dma()), so no dma sync is needed around CPU
 * accesses of the buffers.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#define KV "mrc_kverbs: "
#define KV_LEN		(2 * PAGE_SIZE)	/* crosses a page boundary */
#define KV_MR_PAGES	4
#define KV_QP_WR	16
#define KV_CQE		64
#define KV_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)

static char *dev = "mrc0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to test (default mrc0)");

static unsigned int timeout_ms = 5000;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "limit of every wait for a completion (ms)");

/* QP 0 (A) owns the fast-register MR; QP 1 (B) writes and reads it. */
enum { QA, QB };

struct kv {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;		/* both QPs, send and receive */
	struct ib_qp *qp[2];
	int outstanding[2];		/* signaled WRs not yet polled */
	u32 gen;			/* connections made (PSN base) */
	union ib_gid gid;
	int gid_index;
	bool dirty;			/* an error completion: reset first */
	bool broken;			/* reset failed: post nothing more */

	struct ib_mr *mr;		/* fast-register MR over tbuf */
	void *tbuf;			/* target of WRITE, source of READ */
	struct scatterlist sg;
	bool sg_mapped;
	void *sbuf;			/* WRITE source (B) */
	void *rbuf;			/* READ destination (B) */
	u64 sdma, rdma;
	void *snap;			/* tbuf as it was (no DMA) */

	u64 seq;			/* wr_id = seq << 1 | QP index */
	unsigned int polled;		/* completions polled */
	unsigned int wrong_qp;		/* ... whose wc->qp was not theirs */
	unsigned int passed, failed;
};

static void kv_check(struct kv *kv, bool ok, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	if (ok) {
		kv->passed++;
		pr_info(KV "ok %pV\n", &vaf);
	} else {
		kv->failed++;
		pr_err(KV "FAIL %pV\n", &vaf);
	}
	va_end(args);
}

static u8 kv_pat(u32 seed, u32 i)
{
	return (u8)(seed * 73 + i * 7 + (i >> 8) + 1);
}

static void kv_fill(void *buf, u32 seed)
{
	u8 *p = buf;
	u32 i;

	for (i = 0; i < KV_LEN; i++)
		p[i] = kv_pat(seed, i);
}

/* Index of the first byte of buf that is not pattern seed; KV_LEN if none. */
static u32 kv_cmp(const void *buf, u32 seed)
{
	const u8 *p = buf;
	u32 i;

	for (i = 0; i < KV_LEN; i++)
		if (p[i] != kv_pat(seed, i))
			break;
	return i;
}

/* ------------------------------------------------------ completions */

/*
 * Poll one completion within the deadline: 1 polled, 0 none by then.
 * Accounts it to the QP its wr_id names and checks wc->qp against it.
 */
static int kv_poll_one(struct kv *kv, struct ib_wc *wc, unsigned long deadline)
{
	int q;

	for (;;) {
		if (ib_poll_cq(kv->cq, 1, wc) > 0)
			break;
		if (time_after(jiffies, deadline))
			return 0;
		usleep_range(1000, 2000);
	}
	q = wc->wr_id & 1;
	kv->polled++;
	kv->outstanding[q]--;
	if (wc->qp != kv->qp[q]) {
		kv->wrong_qp++;
		pr_err(KV "wr_id %llu posted on QP %u: wc->qp %p (QP %u), not %p\n",
		       wc->wr_id, kv->qp[q]->qp_num, wc->qp,
		       wc->qp ? wc->qp->qp_num : 0, kv->qp[q]);
	}
	if (wc->status != IB_WC_SUCCESS)
		kv->dirty = true;
	return 1;
}

/*
 * Wait for the completion of wr_id (others polled meanwhile are
 * accounted and dropped). 0, or -ETIMEDOUT (the WR stays outstanding).
 */
static int kv_wait(struct kv *kv, u64 wr_id, struct ib_wc *wc)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);

	while (kv_poll_one(kv, wc, deadline))
		if (wc->wr_id == wr_id)
			return 0;
	kv->dirty = true;
	return -ETIMEDOUT;
}

/* Poll until no WR of either QP is outstanding; false on timeout. */
static bool kv_drain(struct kv *kv)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	struct ib_wc wc;

	while (kv->outstanding[QA] > 0 || kv->outstanding[QB] > 0)
		if (!kv_poll_one(kv, &wc, deadline))
			return false;
	return true;
}

/* --------------------------------------------------------------- QPs */

static int kv_to_init(struct ib_qp *qp)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = KV_ACCESS,
	};

	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}

static int kv_to_rtr(struct kv *kv, struct ib_qp *qp, u32 dest, u32 psn)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_RTR,
		.path_mtu = IB_MTU_1024,
		.dest_qp_num = dest,
		.rq_psn = psn,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
	};

	a.ah_attr.type = rdma_ah_find_type(kv->ibdev, 1);
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &kv->gid, 0, kv->gid_index, 64, 0);
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			    IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			    IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
}

static int kv_to_rts(struct ib_qp *qp, u32 psn)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = psn,
		.max_rd_atomic = 4,
	};

	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static int kv_to_state(struct ib_qp *qp, enum ib_qp_state state)
{
	struct ib_qp_attr a = { .qp_state = state };

	return ib_modify_qp(qp, &a, IB_QP_STATE);
}

/* Both QPs from RESET to RTS, A <-> B, with PSNs of a new generation. */
static int kv_connect(struct kv *kv)
{
	u32 pa = (++kv->gen * 0x10000 + 0x100) & 0xffffff;
	u32 pb = pa + 0x8000;

	return kv_to_init(kv->qp[QA]) ?:
	       kv_to_init(kv->qp[QB]) ?:
	       kv_to_rtr(kv, kv->qp[QA], kv->qp[QB]->qp_num, pb) ?:
	       kv_to_rtr(kv, kv->qp[QB], kv->qp[QA]->qp_num, pa) ?:
	       kv_to_rts(kv->qp[QA], pa) ?:
	       kv_to_rts(kv->qp[QB], pb);
}

/*
 * After an error completion (the QP that saw it is in ERR, its peer may
 * be too): both to ERR, every outstanding WR flushed and polled, RESET,
 * connected again. On failure nothing more is posted (kv->broken).
 */
static int kv_reset(struct kv *kv, const char *why)
{
	int err;

	err = kv_to_state(kv->qp[QA], IB_QPS_ERR) ?:
	      kv_to_state(kv->qp[QB], IB_QPS_ERR);
	if (!err && !kv_drain(kv))
		err = -ETIMEDOUT;
	if (!err)
		err = kv_to_state(kv->qp[QA], IB_QPS_RESET) ?:
		      kv_to_state(kv->qp[QB], IB_QPS_RESET) ?:
		      kv_connect(kv);
	if (err) {
		kv->broken = true;
		kv_check(kv, false, "QPs reset and reconnected after %s (%d): the rest cannot run",
			 why, err);
		return err;
	}
	kv->dirty = false;
	pr_info(KV "QPs reset and reconnected after %s\n", why);
	return 0;
}

/* Post wr on QP q; resets both QPs first if an error completion came. */
static int kv_post(struct kv *kv, int q, struct ib_send_wr *wr)
{
	int err;

	if (kv->broken)
		return -EIO;
	if (kv->dirty && kv_reset(kv, "an error completion"))
		return -EIO;
	wr->wr_id = ++kv->seq << 1 | q;
	wr->send_flags |= IB_SEND_SIGNALED;
	err = ib_post_send(kv->qp[q], wr, NULL);
	if (err)
		return err;
	kv->outstanding[q]++;
	return 0;
}

/*
 * Post wr on QP q and wait for its completion: its status, or -errno if
 * it was not posted or did not complete in time. *opcode: the wc's.
 */
static int kv_run(struct kv *kv, int q, struct ib_send_wr *wr,
		  enum ib_wc_opcode *opcode)
{
	struct ib_wc wc;
	int err;

	err = kv_post(kv, q, wr);
	if (err)
		return err;
	err = kv_wait(kv, wr->wr_id, &wc);
	if (err)
		return err;
	if (opcode)
		*opcode = wc.opcode;
	return wc.status;
}

static const char *kv_status(int st)
{
	if (st == -ETIMEDOUT)
		return "no completion in time";
	if (st < 0)
		return "not posted";
	return ib_wc_status_msg(st);
}

/* ---------------------------------------------------------- the WRs */

/*
 * REG_MR of kv->mr with the 8-bit key part keybyte (the consumer's
 * ib_update_fast_reg_key() first), over tbuf mapped again as a ULP does
 * before each registration. The completion status, or -errno.
 */
static int kv_reg(struct kv *kv, u8 keybyte)
{
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.mr = kv->mr,
		.access = KV_ACCESS,
	};
	enum ib_wc_opcode op = IB_WC_REG_MR;
	int n, st;

	n = ib_map_mr_sg(kv->mr, &kv->sg, 1, NULL, PAGE_SIZE);
	if (n != 1) {
		pr_err(KV "ib_map_mr_sg: %d\n", n);
		return n < 0 ? n : -EINVAL;
	}
	ib_update_fast_reg_key(kv->mr, keybyte);
	wr.key = kv->mr->rkey;
	st = kv_run(kv, QA, &wr.wr, &op);
	if (st == IB_WC_SUCCESS && op != IB_WC_REG_MR) {
		pr_err(KV "REG_MR completed with opcode %d\n", op);
		return -EPROTO;
	}
	return st;
}

static int kv_inv(struct kv *kv, u32 key)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = key,
	};
	enum ib_wc_opcode op = IB_WC_LOCAL_INV;
	int st;

	st = kv_run(kv, QA, &wr, &op);
	if (st == IB_WC_SUCCESS && op != IB_WC_LOCAL_INV) {
		pr_err(KV "LOCAL_INV completed with opcode %d\n", op);
		return -EPROTO;
	}
	return st;
}

/* RDMA WRITE (sbuf) or READ (into rbuf) of KV_LEN bytes by B at rkey. */
static int kv_rdma(struct kv *kv, bool write, u32 rkey)
{
	struct ib_sge sge = {
		.addr = write ? kv->sdma : kv->rdma,
		.length = KV_LEN,
		.lkey = kv->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = kv->mr->iova,
		.rkey = rkey,
	};
	enum ib_wc_opcode op = write ? IB_WC_RDMA_WRITE : IB_WC_RDMA_READ;
	int st;

	st = kv_run(kv, QB, &wr.wr, &op);
	if (st == IB_WC_SUCCESS &&
	    op != (write ? IB_WC_RDMA_WRITE : IB_WC_RDMA_READ)) {
		pr_err(KV "%s completed with opcode %d\n",
		       write ? "WRITE" : "READ", op);
		return -EPROTO;
	}
	return st;
}

/* WRITE pattern seed through rkey; check it landed, byte for byte. */
static void kv_write_lands(struct kv *kv, u32 rkey, u32 seed, const char *what)
{
	u32 bad;
	int st;

	kv_fill(kv->sbuf, seed);
	memset(kv->tbuf, 0, KV_LEN);
	st = kv_rdma(kv, true, rkey);
	bad = kv_cmp(kv->tbuf, seed);
	kv_check(kv, st == IB_WC_SUCCESS && bad == KV_LEN,
		 "WRITE of %lu bytes through %s lands (%s, first differing byte %u of %lu)",
		 KV_LEN, what, kv_status(st), bad, KV_LEN);
}

/* READ through rkey returns tbuf's pattern seed, byte for byte. */
static void kv_read_returns(struct kv *kv, u32 rkey, u32 seed,
			    const char *what)
{
	u32 bad;
	int st;

	memset(kv->rbuf, 0, KV_LEN);
	st = kv_rdma(kv, false, rkey);
	bad = kv_cmp(kv->rbuf, seed);
	kv_check(kv, st == IB_WC_SUCCESS && bad == KV_LEN,
		 "READ of %lu bytes through %s returns them (%s, first differing byte %u of %lu)",
		 KV_LEN, what, kv_status(st), bad, KV_LEN);
}

/* WRITE pattern seed through rkey fails REM_ACCESS_ERR, no byte changed. */
static void kv_write_refused(struct kv *kv, u32 rkey, u32 seed,
			     const char *what)
{
	bool same;
	int st;

	kv_fill(kv->sbuf, seed);
	memcpy(kv->snap, kv->tbuf, KV_LEN);
	st = kv_rdma(kv, true, rkey);
	same = !memcmp(kv->snap, kv->tbuf, KV_LEN);
	kv_check(kv, st == IB_WC_REM_ACCESS_ERR && same,
		 "WRITE through %s fails IB_WC_REM_ACCESS_ERR (%s) and changes no byte (%s)",
		 what, kv_status(st), same ? "none changed" : "CHANGED");
}

static struct ib_qp *kv_create_qp_on(struct kv *kv, struct ib_cq *cq)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.send_cq = cq,
		.recv_cq = cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = KV_QP_WR,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	return ib_create_qp(kv->pd, &init);
}

/*
 * Post KV_DQ_WRITES signaled WRITEs of pattern seed..seed+n-1 through rkey
 * on QP c (of cq2, connected to d) and wait, without polling, until the
 * last one's bytes are in tbuf and then KV_DQ_SETTLE_MS more for the
 * ACKs: the completions are then in cq2, unpolled. 0 or -errno.
 */
#define KV_DQ_WRITES	3
#define KV_DQ_SETTLE_MS	300

static int kv_dq_writes(struct kv *kv, struct ib_qp *c, u32 rkey, u32 seed)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	struct ib_sge sge = {
		.addr = kv->sdma,
		.length = KV_LEN,
		.lkey = kv->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.wr.send_flags = IB_SEND_SIGNALED,
		.remote_addr = kv->mr->iova,
		.rkey = rkey,
	};
	int i, err;

	for (i = 0; i < KV_DQ_WRITES; i++) {
		/* one WRITE at a time: sbuf is its source */
		kv_fill(kv->sbuf, seed + i);
		wr.wr.wr_id = 0x100 + i;
		err = ib_post_send(c, &wr.wr, NULL);
		if (err)
			return err;
		while (kv_cmp(kv->tbuf, seed + i) != KV_LEN) {
			if (time_after(jiffies, deadline))
				return -ETIMEDOUT;
			usleep_range(1000, 2000);
		}
	}
	msleep(KV_DQ_SETTLE_MS * (timeout_ms / 5000 ? timeout_ms / 5000 : 1));
	return 0;
}

/* Poll cq2 for up to KV_DQ_SETTLE_MS: how many, and how many name qp. */
static int kv_dq_poll(struct ib_cq *cq2, struct ib_qp *qp, int *theirs)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(KV_DQ_SETTLE_MS);
	struct ib_wc wc;
	int n = 0;

	*theirs = 0;
	while (!time_after(jiffies, deadline)) {
		if (ib_poll_cq(cq2, 1, &wc) <= 0) {
			usleep_range(1000, 2000);
			continue;
		}
		n++;
		*theirs += wc.qp == qp && wc.status == IB_WC_SUCCESS &&
			   wc.wr_id >= 0x100 && wc.wr_id < 0x100 + KV_DQ_WRITES;
		if (!qp)
			pr_info(KV "after destroy: wr_id %#llx status %d, wc->qp %p\n",
				wc.wr_id, wc.status, wc.qp);
	}
	return n;
}

/*
 * A kernel ULP that destroys a QP (without draining it) while its
 * completions are still in its CQ must never poll them afterwards: its
 * wr_cqe may be gone, and wc->qp could name no QP. QPs c and d on a CQ
 * of their own: first the control (the WRITEs' completions are there,
 * wc->qp c), then the same with c destroyed before polling: nothing of
 * c's is polled (mlx5 cleans its CQ at destroy; the completions vanish).
 */
static void kv_destroy_unpolled(struct kv *kv, u32 rkey)
{
	struct ib_qp *c = NULL, *d = NULL;
	struct ib_cq *cq2;
	int err, n, theirs;

	cq2 = ib_alloc_cq(kv->ibdev, NULL, KV_CQE, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq2)) {
		kv_check(kv, false, "a second CQ (%ld)", PTR_ERR(cq2));
		return;
	}
	c = kv_create_qp_on(kv, cq2);
	d = IS_ERR(c) ? c : kv_create_qp_on(kv, cq2);
	err = IS_ERR(d) ? PTR_ERR(d) :
	      kv_to_init(c) ?: kv_to_init(d) ?:
	      kv_to_rtr(kv, c, d->qp_num, 0x4000) ?:
	      kv_to_rtr(kv, d, c->qp_num, 0x2000) ?:
	      kv_to_rts(c, 0x2000) ?: kv_to_rts(d, 0x4000);
	if (IS_ERR(c))
		c = NULL;
	if (IS_ERR(d))
		d = NULL;
	if (!err)
		err = kv_dq_writes(kv, c, rkey, 20);
	n = err ? 0 : kv_dq_poll(cq2, c, &theirs);
	kv_check(kv, !err && n == KV_DQ_WRITES && theirs == n,
		 "control: %d WRITEs of a live QP complete, wc->qp that QP (%d, %d polled, %d its; %d)",
		 KV_DQ_WRITES, err, n, err ? 0 : theirs, err);
	if (!err)
		err = kv_dq_writes(kv, c, rkey, 30);
	if (!err) {
		ib_destroy_qp(c);
		c = NULL;
		n = kv_dq_poll(cq2, NULL, &theirs);
	}
	kv_check(kv, !err && n == 0,
		 "QP destroyed with %d completions unpolled: none is polled afterwards (%d polled; %d)",
		 KV_DQ_WRITES, err ? -1 : n, err);
	if (c)
		ib_destroy_qp(c);
	if (d)
		ib_destroy_qp(d);
	ib_free_cq(cq2);
}

/* ------------------------------------------- UD: AH destroyed atomically */

#define KV_UD_N		8	/* datagrams of one post (one transmit batch) */
#define KV_UD_LEN	512
#define KV_UD_QKEY	0x11220033
#define KV_UD_TRIES	8	/* posts until the handler ran inside one */
#define KV_GRH		40

struct kv_ud {
	struct ib_ah *ah;		/* the comp handler destroys it */
	bool posting;			/* ib_post_send() has not returned */
	bool in_post;			/* ... when the handler destroyed it */
	bool in_softirq;		/* the handler ran in a softirq */
	struct ib_recv_wr rwr[KV_UD_N];
	struct ib_ud_wr swr[KV_UD_N];
	struct ib_sge rsge[KV_UD_N], ssge[KV_UD_N];
};

/*
 * Receive completion handler: the first datagram's destroys the AH its
 * sends were posted with, as the CM does, without sleeping
 * (rdma_destroy_ah(ah, 0)). Loopback delivery runs in the softirq that
 * the sender's own transmit raised, on its stack, while the rest of the
 * post is still on its way out.
 */
static void kv_ud_comp(struct ib_cq *cq, void *ctx)
{
	struct kv_ud *u = ctx;

	if (!u->ah)
		return;
	u->in_post = READ_ONCE(u->posting);
	u->in_softirq = in_serving_softirq();
	rdma_destroy_ah(u->ah, 0);
	u->ah = NULL;
}

static int kv_ud_modify(struct ib_qp *qp)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qkey = KV_UD_QKEY,
	};
	int err;

	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (err)
		return err;
	a.qp_state = IB_QPS_RTR;
	err = ib_modify_qp(qp, &a, IB_QP_STATE);
	if (err)
		return err;
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0x123;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN);
}

/*
 * 6. An AH destroyed in atomic context while datagrams sent with it are
 * still on their way out. A UD QP sends KV_UD_N datagrams to itself in
 * one post; the receive completion handler destroys the AH at the first
 * one, in the softirq that interrupted the sender. destroy_ah can neither
 * sleep nor wait there for the packets still queued (the context that
 * would send them is the one it interrupted); they must still leave, each
 * arrives (payload and GRH checked) and each send completes.
 *
 * Whether the handler runs inside the post is up to the scheduler: the
 * softirq runs in the sender's context only while ksoftirqd is not
 * already taking softirqs on that CPU (a slow debug guest: once in a
 * debug-kernel run of stop 41). One call is try number @try; it returns
 * false when its handler ran after the post returned and every datagram
 * arrived (the caller tries again), true once judged. The last try
 * (@last) is judged as it is.
 */
static bool kv_ud_ah_destroy_try(struct kv *kv, int try, bool last)
{
	struct ib_cq *scq = NULL, *rcq = NULL;
	struct ib_qp *qp = NULL;
	struct ib_cq_init_attr cqa = { .cqe = 2 * KV_UD_N };
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_UD,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = KV_UD_N,
			.max_recv_wr = KV_UD_N,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct rdma_ah_attr aa = {};
	unsigned long deadline, seen = 0;
	int i, err, sent = 0, rcvd = 0, bad = 0, other = 0;
	bool hit, done = true;
	struct kv_ud *u;
	u8 *rb, *sb;
	struct ib_wc wc;

	/* sbuf: KV_UD_N sources; rbuf: KV_UD_N receive buffers (GRH + data) */
	BUILD_BUG_ON(KV_UD_N * (KV_GRH + KV_UD_LEN) > KV_LEN);
	BUILD_BUG_ON(KV_UD_N > BITS_PER_LONG);
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u) {
		kv_check(kv, false, "UD: memory for the test");
		return true;
	}
	sb = kv->sbuf;
	rb = kv->rbuf;
	kv_fill(kv->sbuf, 40);
	memset(kv->rbuf, 0, KV_LEN);

	scq = ib_alloc_cq(kv->ibdev, NULL, 2 * KV_UD_N, 0, IB_POLL_DIRECT);
	if (IS_ERR(scq)) {
		err = PTR_ERR(scq);
		scq = NULL;
		goto out;
	}
	rcq = ib_create_cq(kv->ibdev, kv_ud_comp, NULL, u, &cqa);
	if (IS_ERR(rcq)) {
		err = PTR_ERR(rcq);
		rcq = NULL;
		goto out;
	}
	init.send_cq = scq;
	init.recv_cq = rcq;
	qp = ib_create_qp(kv->pd, &init);
	if (IS_ERR(qp)) {
		err = PTR_ERR(qp);
		qp = NULL;
		goto out;
	}
	err = kv_ud_modify(qp);
	if (err)
		goto out;

	aa.type = rdma_ah_find_type(kv->ibdev, 1);
	rdma_ah_set_port_num(&aa, 1);
	rdma_ah_set_grh(&aa, &kv->gid, 0, kv->gid_index, 64, 0);
	u->ah = rdma_create_ah(kv->pd, &aa, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(u->ah)) {
		err = PTR_ERR(u->ah);
		u->ah = NULL;
		goto out;
	}

	for (i = 0; i < KV_UD_N; i++) {
		u->rsge[i] = (struct ib_sge){
			.addr = kv->rdma + i * (KV_GRH + KV_UD_LEN),
			.length = KV_GRH + KV_UD_LEN,
			.lkey = kv->pd->local_dma_lkey,
		};
		u->rwr[i] = (struct ib_recv_wr){
			.wr_id = 0x200 + i,
			.sg_list = &u->rsge[i],
			.num_sge = 1,
			.next = i + 1 < KV_UD_N ? &u->rwr[i + 1] : NULL,
		};
		u->ssge[i] = (struct ib_sge){
			.addr = kv->sdma + i * KV_UD_LEN,
			.length = KV_UD_LEN,
			.lkey = kv->pd->local_dma_lkey,
		};
		u->swr[i] = (struct ib_ud_wr){
			.wr.wr_id = 0x300 + i,
			.wr.opcode = IB_WR_SEND,
			.wr.sg_list = &u->ssge[i],
			.wr.num_sge = 1,
			.wr.send_flags = IB_SEND_SIGNALED,
			.wr.next = i + 1 < KV_UD_N ? &u->swr[i + 1].wr : NULL,
			.ah = u->ah,
			.remote_qpn = qp->qp_num,
			.remote_qkey = KV_UD_QKEY,
		};
	}
	err = ib_post_recv(qp, u->rwr, NULL) ?:
	      ib_req_notify_cq(rcq, IB_CQ_NEXT_COMP);
	if (err)
		goto out;
	WRITE_ONCE(u->posting, true);
	err = ib_post_send(qp, &u->swr[0].wr, NULL);
	WRITE_ONCE(u->posting, false);
	if (err)
		goto out;

	deadline = jiffies + msecs_to_jiffies(timeout_ms);
	while ((sent < KV_UD_N || rcvd < KV_UD_N) &&
	       !time_after(jiffies, deadline)) {
		if (ib_poll_cq(scq, 1, &wc) > 0) {
			if (wc.status == IB_WC_SUCCESS && wc.qp == qp &&
			    wc.wr_id == 0x300 + sent)
				sent++;
			else
				other++;
			continue;
		}
		if (ib_poll_cq(rcq, 1, &wc) > 0) {
			i = wc.wr_id - 0x200;
			if (wc.status == IB_WC_SUCCESS && wc.qp == qp &&
			    i >= 0 && i < KV_UD_N && !(seen & BIT(i)) &&
			    wc.byte_len == KV_GRH + KV_UD_LEN &&
			    wc.src_qp == qp->qp_num &&
			    !memcmp(rb + i * (KV_GRH + KV_UD_LEN) + KV_GRH,
				    sb + i * KV_UD_LEN, KV_UD_LEN)) {
				seen |= BIT(i);
				rcvd++;
			} else {
				bad++;
			}
			continue;
		}
		usleep_range(1000, 2000);
	}
out:
	hit = !err && !u->ah && u->in_post && u->in_softirq;
	if (!hit && !last && !err && !u->ah && sent == KV_UD_N &&
	    rcvd == KV_UD_N && !bad && !other) {
		pr_info(KV "UD try %d of %d: the handler ran after the post (in a softirq %s), all %d arrived: again\n",
			try, KV_UD_TRIES, u->in_softirq ? "yes" : "no",
			KV_UD_N);
		done = false;
	} else {
		kv_check(kv, hit,
			 "UD: the receive handler destroyed the AH (rdma_destroy_ah(ah, 0)) in a softirq while the post of %d sends with it was still sending (%d; destroyed %s, in the post %s, in a softirq %s; try %d of %d)",
			 KV_UD_N, err, u->ah ? "no" : "yes",
			 u->in_post ? "yes" : "no",
			 u->in_softirq ? "yes" : "no", try, KV_UD_TRIES);
		kv_check(kv, !err && sent == KV_UD_N && rcvd == KV_UD_N &&
			 !bad && !other,
			 "UD: every datagram sent with the AH destroyed mid-post arrives, bytes checked, and every send completes (%d of %d sent, %d of %d received whole, %d bad, %d other)",
			 sent, KV_UD_N, rcvd, KV_UD_N, bad, other);
	}
	if (qp)
		ib_destroy_qp(qp);
	if (u->ah)
		rdma_destroy_ah(u->ah, RDMA_DESTROY_AH_SLEEPABLE);
	if (rcq)
		ib_destroy_cq(rcq);
	if (scq)
		ib_free_cq(scq);
	kfree(u);
	return done;
}

static void kv_ud_ah_destroy(struct kv *kv)
{
	int try;

	for (try = 1; try <= KV_UD_TRIES; try++)
		if (kv_ud_ah_destroy_try(kv, try, try == KV_UD_TRIES))
			break;
}

/* ------------------------------------------------------------ checks */

static void kv_checks(struct kv *kv)
{
	u32 k1, k2, k3;
	int st;

	/* 1. REG_MR of a fresh MR; WRITE and READ through its rkey. */
	k1 = ib_inc_rkey(kv->mr->rkey);
	k2 = ib_inc_rkey(k1);
	k3 = ib_inc_rkey(k2);
	pr_info(KV "keys: first 0x%08x, refused 0x%08x, after LOCAL_INV 0x%08x\n",
		k1, k2, k3);
	st = kv_reg(kv, k1 & 0xff);
	kv_check(kv, st == IB_WC_SUCCESS,
		 "REG_MR of a fresh MR completes IB_WC_REG_MR successfully (%s)",
		 kv_status(st));
	kv_write_lands(kv, k1, 1, "its rkey");
	kv_read_returns(kv, k1, 1, "its rkey");

	/*
	 * 2. REG_MR again while the MR is valid (no LOCAL_INV): refused
	 * with LOC_QP_OP_ERR as rdma_rxe does ("user can only register MR
	 * in free state"); the QP goes to ERR. The MR is left as it was:
	 * the old key still works, the refused one does not.
	 */
	st = kv_reg(kv, k2 & 0xff);
	kv_check(kv, st == IB_WC_LOC_QP_OP_ERR,
		 "REG_MR of the still valid MR (a new key byte) completes IB_WC_LOC_QP_OP_ERR (%s)",
		 kv_status(st));
	/* the consumer's copy of the key back to the MR's */
	ib_update_fast_reg_key(kv->mr, k1 & 0xff);
	kv_write_lands(kv, k1, 2, "the old rkey after the refused REG_MR");
	kv_write_refused(kv, k2, 3, "the refused REG_MR's key");

	/*
	 * 3. LOCAL_INV, then REG_MR with a new key: the old key is dead
	 * (REM_ACCESS_ERR, nothing placed), the new one works.
	 */
	st = kv_inv(kv, k1);
	kv_check(kv, st == IB_WC_SUCCESS,
		 "LOCAL_INV of the first key completes IB_WC_LOCAL_INV successfully (%s)",
		 kv_status(st));
	st = kv_reg(kv, k3 & 0xff);
	kv_check(kv, st == IB_WC_SUCCESS,
		 "REG_MR after LOCAL_INV with a new key completes successfully (%s)",
		 kv_status(st));
	kv_write_refused(kv, k1, 4, "the invalidated key");
	kv_write_lands(kv, k3, 5, "the new rkey");
	kv_read_returns(kv, k3, 5, "the new rkey");

	/* 4. wc->qp of every completion polled (resets' flushes too). */
	kv_drain(kv);
	kv_check(kv, kv->polled && !kv->wrong_qp,
		 "wc->qp of every completion polled is the QP its WR was posted on (%u polled, %u wrong)",
		 kv->polled, kv->wrong_qp);

	/* 5. A QP destroyed before its completions were polled. */
	if (!kv->broken)
		kv_destroy_unpolled(kv, k3);

	/* 6. A UD AH destroyed in atomic context mid-send. */
	kv_ud_ah_destroy(kv);
}

/* ---------------------------------------------------- setup/teardown */

/* The first IPv4-mapped GID of port 1 (index 1 in the lab); 0 or -ENOENT. */
static int kv_find_gid(struct kv *kv)
{
	static const u8 v4map[12] = { [10] = 0xff, [11] = 0xff };
	int i;

	for (i = 0; i < 16; i++) {
		if (rdma_query_gid(kv->ibdev, 1, i, &kv->gid))
			continue;
		if (!memcmp(kv->gid.raw, v4map, sizeof(v4map))) {
			kv->gid_index = i;
			return 0;
		}
	}
	return -ENOENT;
}

static struct ib_qp *kv_create_qp(struct kv *kv)
{
	return kv_create_qp_on(kv, kv->cq);
}

static int kv_setup(struct kv *kv)
{
	int err;

	kv->ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!kv->ibdev) {
		pr_err(KV "no RDMA device '%s'\n", dev);
		return -ENODEV;
	}
	err = kv_find_gid(kv);
	if (err) {
		pr_err(KV "%s: no IPv4-mapped GID on port 1\n", dev);
		return err;
	}
	kv->tbuf = kmalloc(KV_LEN, GFP_KERNEL);
	kv->sbuf = kmalloc(KV_LEN, GFP_KERNEL);
	kv->rbuf = kmalloc(KV_LEN, GFP_KERNEL);
	kv->snap = kmalloc(KV_LEN, GFP_KERNEL);
	if (!kv->tbuf || !kv->sbuf || !kv->rbuf || !kv->snap)
		return -ENOMEM;
	memset(kv->tbuf, 0, KV_LEN);

	kv->pd = ib_alloc_pd(kv->ibdev, 0);
	if (IS_ERR(kv->pd)) {
		err = PTR_ERR(kv->pd);
		kv->pd = NULL;
		pr_err(KV "ib_alloc_pd: %d\n", err);
		return err;
	}
	kv->cq = ib_alloc_cq(kv->ibdev, NULL, KV_CQE, 0, IB_POLL_DIRECT);
	if (IS_ERR(kv->cq)) {
		err = PTR_ERR(kv->cq);
		kv->cq = NULL;
		pr_err(KV "ib_alloc_cq: %d\n", err);
		return err;
	}
	kv->qp[QA] = kv_create_qp(kv);
	if (IS_ERR(kv->qp[QA])) {
		err = PTR_ERR(kv->qp[QA]);
		kv->qp[QA] = NULL;
		pr_err(KV "ib_create_qp: %d\n", err);
		return err;
	}
	kv->qp[QB] = kv_create_qp(kv);
	if (IS_ERR(kv->qp[QB])) {
		err = PTR_ERR(kv->qp[QB]);
		kv->qp[QB] = NULL;
		pr_err(KV "ib_create_qp: %d\n", err);
		return err;
	}
	kv->mr = ib_alloc_mr(kv->pd, IB_MR_TYPE_MEM_REG, KV_MR_PAGES);
	if (IS_ERR(kv->mr)) {
		err = PTR_ERR(kv->mr);
		kv->mr = NULL;
		pr_err(KV "ib_alloc_mr: %d\n", err);
		return err;
	}

	sg_init_one(&kv->sg, kv->tbuf, KV_LEN);
	if (ib_dma_map_sg(kv->ibdev, &kv->sg, 1, DMA_BIDIRECTIONAL) != 1) {
		pr_err(KV "ib_dma_map_sg failed\n");
		return -EIO;
	}
	kv->sg_mapped = true;
	kv->sdma = ib_dma_map_single(kv->ibdev, kv->sbuf, KV_LEN,
				     DMA_TO_DEVICE);
	if (ib_dma_mapping_error(kv->ibdev, kv->sdma)) {
		kv->sdma = 0;
		pr_err(KV "ib_dma_map_single failed\n");
		return -EIO;
	}
	kv->rdma = ib_dma_map_single(kv->ibdev, kv->rbuf, KV_LEN,
				     DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(kv->ibdev, kv->rdma)) {
		kv->rdma = 0;
		pr_err(KV "ib_dma_map_single failed\n");
		return -EIO;
	}

	err = kv_connect(kv);
	if (err)
		pr_err(KV "connecting the QPs: %d\n", err);
	return err;
}

/* Free what kv_setup() got, in reverse; any prefix of it. */
static void kv_teardown(struct kv *kv)
{
	int q;

	/* flush what is still posted: no completion may name a freed QP */
	for (q = QA; q <= QB; q++)
		if (kv->qp[q])
			kv_to_state(kv->qp[q], IB_QPS_ERR);
	if (kv->qp[QA] && kv->qp[QB] && !kv_drain(kv))
		pr_err(KV "teardown: %d + %d WRs never completed\n",
		       kv->outstanding[QA], kv->outstanding[QB]);
	for (q = QA; q <= QB; q++)
		if (kv->qp[q])
			ib_destroy_qp(kv->qp[q]);
	if (kv->mr)
		ib_dereg_mr(kv->mr);
	if (kv->rdma)
		ib_dma_unmap_single(kv->ibdev, kv->rdma, KV_LEN,
				    DMA_FROM_DEVICE);
	if (kv->sdma)
		ib_dma_unmap_single(kv->ibdev, kv->sdma, KV_LEN,
				    DMA_TO_DEVICE);
	if (kv->sg_mapped)
		ib_dma_unmap_sg(kv->ibdev, &kv->sg, 1, DMA_BIDIRECTIONAL);
	if (kv->cq)
		ib_free_cq(kv->cq);
	if (kv->pd)
		ib_dealloc_pd(kv->pd);
	kfree(kv->snap);
	kfree(kv->rbuf);
	kfree(kv->sbuf);
	kfree(kv->tbuf);
	if (kv->ibdev)
		ib_device_put(kv->ibdev);
}

static int __init mrc_kverbs_init(void)
{
	struct kv *kv;
	int err;

	kv = kzalloc(sizeof(*kv), GFP_KERNEL);
	if (!kv)
		return -ENOMEM;
	pr_info(KV "device %s, timeout %u ms\n", dev, timeout_ms);
	err = kv_setup(kv);
	kv_check(kv, !err,
		 "setup on %s: PD, CQ, two RC QPs connected through GID index %d, MR of %d pages (%d)",
		 dev, kv->gid_index, KV_MR_PAGES, err);
	if (!err)
		kv_checks(kv);
	kv_teardown(kv);
	pr_info(KV "%u passed, %u failed\n", kv->passed, kv->failed);
	kfree(kv);
	return 0;
}

static void __exit mrc_kverbs_exit(void)
{
}

module_init(mrc_kverbs_init);
module_exit(mrc_kverbs_exit);

MODULE_DESCRIPTION("metaroce selftest: fast-register MRs through kernel verbs");
MODULE_LICENSE("GPL");
