#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# failslab: metaroce under slab allocation failures, on the debug kernel
# (scripts/debug-kernel.sh; skipped on a kernel without failslab's stack
# trace filter). Only allocations made with metaroce.ko on the stack fail:
# /sys/kernel/debug/failslab's require-start/require-end span the module
# (its base and size from /proc/modules), ignore-gfp-wait=N so GFP_KERNEL
# allocations fail too, task-filter=N so softirq and worker allocations
# (the data path) fail too. Every failure must be a clean error: no
# WARN/BUG/KASAN/lockdep/ODEBUG report and no leak (lab_stop's kmemleak
# scan); the allocation-failure reports of vmalloc (warn_alloc, a stack
# dump) are expected here, so this scenario does not fail on "Call Trace"
# alone.
#
#   n1: probability 100%: nothing of metaroce can be created, everything
#       else (ip, ping) still works (the filter holds);
#       probability 10%: FAILSLAB_ITERS (200) rounds of open device, PD,
#       MR, CQ, SRQ, a loopback RC pair to RTS, SEND + RDMA WRITE between
#       them (payload checked), AH, UD QP, all destroyed in reverse
#       (build/verbs/failslab_loop, written by this script);
#   n1 <-> n2: ibv_rc_pingpong -c with injection at FAILSLAB_TRAFFIC_P
#       (2%) on both nodes once the pair is connected: the transfer ends
#       (payload intact, or a clean error), never hangs;
#   then, injection off: the loop and a pingpong pass cleanly, mrc0 is
#       deleted and metaroce.ko unloads on both nodes.
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ITERS=${FAILSLAB_ITERS:-200}
TRAFFIC_P=${FAILSLAB_TRAFFIC_P:-2}
cfg=$LAB_KDIR/boot/config-$LAB_KVER
if ! grep -qx 'CONFIG_FAILSLAB=y' "$cfg" 2>/dev/null ||
	! grep -qx 'CONFIG_FAULT_INJECTION_STACKTRACE_FILTER=y' "$cfg"; then
	echo "# failslab: $LAB_KVER has no failslab with a stack trace filter:" \
		"skipped (run it on scripts/debug-kernel.sh's kernel)"
	echo "0 passed, 0 failed"
	exit 0
fi
# vmalloc's allocation-failure reports dump the stack; every other report
# still fails the run.
LAB_DMESG_BAD=${LAB_DMESG_BAD/|Call Trace/}

BIN=$ROOT/build/verbs/failslab_loop
mkdir -p "$ROOT/build/verbs"
cat >"$BIN.c" <<'C'
// SPDX-License-Identifier: GPL-2.0
/*
 * failslab_loop DEV N: N rounds of verbs object create/destroy plus a
 * loopback SEND and RDMA WRITE, each step allowed to fail (allocation
 * failures are injected) but only cleanly: a NULL/error return with an
 * errno, a completion with an error status, never wrong payload on a
 * successful completion, never a failing destroy. Prints a tally; exits 1
 * on an unclean result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

enum { S_OPEN, S_GID, S_PD, S_MR, S_CQ, S_SRQ, S_SRQ_RECV, S_QP, S_CONNECT,
	S_POST, S_WC, S_WC_TIMEOUT, S_AH, S_UDQP, S_NSTEPS };
static const char *step_name[] = { "open", "gid", "pd", "mr", "cq", "srq",
	"srq_recv", "qp", "connect", "post", "wc_error", "wc_timeout", "ah",
	"ud_qp" };
static int failed_at[S_NSTEPS], errnos[200], unclean, complete;

static void fail(int step, int err)
{
	failed_at[step]++;
	if (err <= 0 || err >= 200) {
		printf("UNCLEAN: %s failed with errno %d\n", step_name[step], err);
		unclean++;
		return;
	}
	errnos[err]++;
}

static void must(int ret, const char *what)
{
	if (ret) {
		printf("UNCLEAN: %s failed: %s\n", what, strerror(ret > 0 ? ret : errno));
		unclean++;
	}
}

static int find_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	for (i = 0; i < pa.gid_tbl_len && i < 64; i++)
		if (!ibv_query_gid(ctx, 1, i, gid) &&
		    !memcmp(gid->raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))
			return i;
	errno = ENOENT;
	return -1;
}

static int qp_connect(struct ibv_qp *qp, uint32_t dest, union ibv_gid *gid, int gidx)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE };
	int r;

	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS);
	if (r)
		return r;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gidx;
	a.ah_attr.grh.hop_limit = 64;
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (r)
		return r;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 12;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 100;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			     IBV_QP_MAX_QP_RD_ATOMIC);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One round; returns 1 if every step succeeded. */
static int round_trip(struct ibv_device *dev, unsigned char *buf, int it)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *qa = NULL, *qb = NULL, *ud = NULL;
	struct ibv_ah *ah = NULL;
	union ibv_gid gid;
	int gidx, ok = 0, r, n, i, got;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1 }, *sbad;
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_wc wc[4];
	double end;

	ctx = ibv_open_device(dev);
	if (!ctx) {
		fail(S_OPEN, errno);
		return 0;
	}
	gidx = find_gid(ctx, &gid);
	if (gidx < 0) {
		fail(S_GID, errno);
		goto out;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fail(S_PD, errno);
		goto out;
	}
	mr = ibv_reg_mr(pd, buf, 65536, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		fail(S_MR, errno);
		goto out;
	}
	cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!cq) {
		fail(S_CQ, errno);
		goto out;
	}
	srq = ibv_create_srq(pd, &sa);
	if (!srq) {
		fail(S_SRQ, errno);
		goto out;
	}
	sge.addr = (uintptr_t)buf + 32768;
	sge.length = 64;
	sge.lkey = mr->lkey;
	r = ibv_post_srq_recv(srq, &rwr, &rbad);
	if (r) {
		fail(S_SRQ_RECV, r);
		goto out;
	}
	ia.send_cq = ia.recv_cq = cq;
	qa = ibv_create_qp(pd, &ia);
	qb = qa ? ibv_create_qp(pd, &ia) : NULL;
	if (!qb) {
		fail(S_QP, errno);
		goto out;
	}
	r = qp_connect(qa, qb->qp_num, &gid, gidx);
	if (!r)
		r = qp_connect(qb, qa->qp_num, &gid, gidx);
	if (r) {
		fail(S_CONNECT, r);
		goto out;
	}
	/* SEND qa -> qb (4 KiB), RDMA WRITE qa -> buf+16K (4 KiB) */
	for (i = 0; i < 4096; i++) {
		buf[i] = (unsigned char)(i * 7 + it);
		buf[8192 + i] = 0;
		buf[16384 + i] = 0;
	}
	sge.addr = (uintptr_t)buf + 8192;
	sge.length = 4096;
	rwr.wr_id = 1;
	r = ibv_post_recv(qb, &rwr, &rbad);
	sge.addr = (uintptr_t)buf;
	swr.wr_id = 2;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	if (!r)
		r = ibv_post_send(qa, &swr, &sbad);
	swr.wr_id = 3;
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.wr.rdma.remote_addr = (uintptr_t)buf + 16384;
	swr.wr.rdma.rkey = mr->rkey;
	if (!r)
		r = ibv_post_send(qa, &swr, &sbad);
	if (r) {
		fail(S_POST, r);
		goto out;
	}
	end = now() + 20;
	for (got = 0; got < 3 && now() < end; ) {
		n = ibv_poll_cq(cq, 4, wc);
		if (n < 0) {
			printf("UNCLEAN: poll_cq returned %d\n", n);
			unclean++;
			goto out;
		}
		for (i = 0; i < n; i++, got++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fail(S_WC, wc[i].status + 100);
				goto out;
			}
		}
	}
	if (got < 3) {
		fail(S_WC_TIMEOUT, ETIMEDOUT);
		goto out;
	}
	if (memcmp(buf, buf + 8192, 4096) || memcmp(buf, buf + 16384, 4096)) {
		printf("UNCLEAN: round %d: payload differs after successful completions\n", it);
		unclean++;
		goto out;
	}
	aa.grh.dgid = gid;
	aa.grh.sgid_index = gidx;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(pd, &aa);
	if (!ah) {
		fail(S_AH, errno);
		goto out;
	}
	ia.qp_type = IBV_QPT_UD;
	ud = ibv_create_qp(pd, &ia);
	if (!ud) {
		fail(S_UDQP, errno);
		goto out;
	}
	ok = 1;
out:
	if (ud)
		must(ibv_destroy_qp(ud), "destroy ud qp");
	if (ah)
		must(ibv_destroy_ah(ah), "destroy ah");
	if (qb)
		must(ibv_destroy_qp(qb), "destroy qp b");
	if (qa)
		must(ibv_destroy_qp(qa), "destroy qp a");
	if (srq)
		must(ibv_destroy_srq(srq), "destroy srq");
	if (cq)
		must(ibv_destroy_cq(cq), "destroy cq");
	if (mr)
		must(ibv_dereg_mr(mr), "dereg mr");
	if (pd)
		must(ibv_dealloc_pd(pd), "dealloc pd");
	must(ibv_close_device(ctx), "close device");
	return ok;
}

int main(int argc, char **argv)
{
	static unsigned char buf[65536] __attribute__((aligned(4096)));
	struct ibv_device **list, *dev = NULL;
	int n, i, iters;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV ROUNDS\n", argv[0]);
		return 2;
	}
	iters = atoi(argv[2]);
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			dev = list[i];
	if (!dev) {
		fprintf(stderr, "no device %s\n", argv[1]);
		return 2;
	}
	for (i = 0; i < iters; i++)
		complete += round_trip(dev, buf, i);
	printf("rounds %d, complete %d, unclean %d; failed at:", iters, complete, unclean);
	for (i = 0; i < S_NSTEPS; i++)
		if (failed_at[i])
			printf(" %s=%d", step_name[i], failed_at[i]);
	printf("; errno/status:");
	for (i = 1; i < 200; i++)
		if (errnos[i])
			printf(" %s=%d", i > 100 ? ibv_wc_status_str(i - 100) :
			       strerror(i), errnos[i]);
	printf("\n");
	ibv_free_device_list(list);
	return unclean ? 1 : 0;
}
C
gcc -Wall -Wextra -O2 -o "$BIN" "$BIN.c" -libverbs || lab_fatal "cannot build $BIN.c"

# fs_on NODE PERCENT: fail that share of the slab allocations made with
# metaroce.ko on the stack (counted down from a large "times": fs_count).
fs_on() {
	lab_run "$1" "set -e
F=/sys/kernel/debug/failslab
base=\$(awk '\$1 == \"metaroce\" { print \$6 }' /proc/modules)
size=\$(cat /sys/module/metaroce/coresize)
[ -n \"\$base\" ] && [ \$((base)) != 0 ]
start=\$(printf 0x%x \$((base)))
end=\$(printf 0x%x \$((base + size)))
echo \$start >\$F/require-start
echo \$end >\$F/require-end
echo 32 >\$F/stacktrace-depth
echo N >\$F/ignore-gfp-wait
echo N >\$F/task-filter
echo 1 >\$F/verbose
echo 1 >\$F/interval
echo 0 >\$F/space
echo 1000000 >\$F/times
echo $2 >\$F/probability
echo \"failslab $2% on metaroce \$start..\$end\""
}
fs_off() {
	lab_run "$1" 'echo 0 >/sys/kernel/debug/failslab/probability'
}
# fs_count NODE: allocations failed since fs_on
fs_count() {
	lab_run "$1" 'echo $((1000000 - $(cat /sys/kernel/debug/failslab/times)))'
}

lab_start
check "n1: metaroce loaded, mrc0 on eth0" lab_load_metaroce n1
check "n2: metaroce loaded, mrc0 on eth0" lab_load_metaroce n2
check "n1: failslab_loop passes without injection" n1 "$BIN" mrc0 3

# The filter: at 100% nothing of metaroce's can be made, the rest works.
check "n1: failslab 100% on metaroce.ko" fs_on n1 100
check "n1: 100%: ip, ping, ls unaffected" n1 \
	'ip -br link show eth0 && busybox ping -c 2 -W 5 192.0.2.2 && ls / >/dev/null'
check "n1: 100%: failslab_loop fails every round, cleanly" n1 \
	"out=\$($BIN mrc0 5); rc=\$?; echo \"\$out\"; [ \$rc = 0 ] && echo \"\$out\" | grep -q 'complete 0,'"
check "n1: 100%: allocations were failed" n1 \
	'n=$((1000000 - $(cat /sys/kernel/debug/failslab/times))); echo "$n failed"; [ $n -gt 0 ]'
fs_off n1 >/dev/null

# Create/destroy rounds with one allocation in ten failing.
check "n1: failslab 10% on metaroce.ko" fs_on n1 10
LAB_CMD_TIMEOUT=900 check "n1: 10%: $ITERS rounds, every failure clean" \
	n1 "$BIN" mrc0 "$ITERS"
check "n1: 10%: allocations were failed" eval 'c=$(fs_count n1); echo "$c"; [ "$c" -gt 0 ]'
fs_off n1 >/dev/null
check "n1: injection off: failslab_loop passes" n1 "$BIN" mrc0 5

# Traffic between the nodes, injection switched on once the pair is up.
# ibv_rc_pingpong -c checks every byte; under TCG 2000 x 4 KiB take long
# enough for the injection to land mid-transfer.
pingpong_under_injection() {
	local rc out b
	lab_bg n2 pps timeout 240 ibv_rc_pingpong -d mrc0 -g 1 -n 2000 -s 4096 -c
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	lab_bg n1 ppc timeout 240 ibv_rc_pingpong -d mrc0 -g 1 -n 2000 -s 4096 -c 192.0.2.2
	# the client's output file, read on the host: inject once connected
	read -r _ b _ <"$LAB_RUN/bg/ppc"
	for _ in $(seq 600); do
		grep -q 'remote address' "$b.out" 2>/dev/null && break
		sleep 0.1
	done
	grep -q 'remote address' "$b.out" 2>/dev/null ||
		echo "(no 'remote address' from the client: injecting anyway)"
	fs_on n1 "$TRAFFIC_P" && fs_on n2 "$TRAFFIC_P"
	out=$(lab_wait ppc); rc=$?
	echo "client rc=$rc: $(tail -n 3 <<<"$out")"
	out=$(lab_wait pps); echo "server rc=$?: $(tail -n 3 <<<"$out")"
	fs_off n1 >/dev/null; fs_off n2 >/dev/null
	echo "failed allocations: n1 $(fs_count n1), n2 $(fs_count n2)"
	# a clean error is fine, a hang (timeout's 124) is not
	[ "$rc" != 124 ] && [ "$rc" != 255 ]
}
check "n1 <-> n2: pingpong -c with ${TRAFFIC_P}% injection ends (no hang)" \
	pingpong_under_injection
check "n1 <-> n2: injection off: pingpong -c passes" lab_pingpong ibv_rc_pingpong 200 4096

for n in n1 n2; do
	check "$n: metaroce.ko unloads" $n 'rdma link del mrc0 && rmmod metaroce'
done
lab_summary
