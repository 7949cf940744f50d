#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ordering: IB RC ordering between the operations of one QP, under a
# network that reorders, drops and duplicates (build/verbs/mrc_order_test,
# selftests/verbs/ordering.c: what every operation observed).
#
#        n1 (client)                                n2 (server)
#   +--------------------------+   metaroce/UDP  +--------------------------+
#   | mrc0 -> eth0 [netem]     |<--------------->| mrc0 -> eth0 [netem]     |
#   | mrc_order_test 192.0.2.2 |  TCP 18519 OOB  | mrc_order_test (listens) |
#   +--------------------------+                 +--------------------------+
#
# Under each netem condition (both directions) the client runs, ORDER_ITERS
# times each: WRITE then READ of the same range (READ sees the WRITE),
# overlapping WRITEs, also through two keys of the same bytes (the later
# one's bytes win), WRITE then FETCH_ADD 0 / CMP_SWAP on the written word (both see the
# written value), CMP_SWAP and FETCH_ADD chains (each sees its
# predecessor's result: in order, exactly once), and SENDs /
# WRITE_WITH_IMMs against a server that posts its receives late (RNR):
# receive completions in send order, every byte in place at completion;
# and a WRITE through a type 2 memory window of the server followed by
# SEND_WITH_INV of its rkey: the receive completes WITH_INV, every byte of
# the WRITE in the window (invalidated when the SEND completes, not at its
# first packet), and a WRITE through the rkey afterwards fails REM_ACCESS.
# Last, RNR under the same netem: WRITE, SEND, FETCH_ADD, READ per message
# against a server that keeps 2 receives posted, pauses, and READs the
# client's memory every 4th message: every READ sees its WRITE, every
# FETCH_ADD runs exactly once in order, SENDs arrive in order and whole.
# And a READ whose responses n2 drops for 300 ms (an iptables rule) while
# the SEND behind it meets RNR NAKs of 163.84 ms: the client's timeout,
# expiring during those waits, must still resend the READ (rnr-stall).
# ORDER_CONDS overrides the conditions (';'-separated netem arguments).
# On a failed condition the run prints mrc0's counter deltas (rdma
# statistic) of both nodes, the server QP's transport state (rdma res show
# qp -dd) and the last metaroce tracepoint events of both nodes (traced
# throughout; all in the run directory, order-K-*).
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

# 500 iterations of each test per condition in CI (6000 operations, each
# checked); ordering-long.sh (lab-long) runs 5000 under three conditions.
ITERS=${ORDER_ITERS:-500}
# Each side's time limit (900 s per 1000 iterations, never less: a
# condition's 1000 iterations of every test took up to 700 s on the debug
# kernel and 260 s on the stock one) scales on the debug kernel, whose
# KASAN/lockdep build is several times slower under TCG (LAB_SCALE, lab.sh).
ORDER_SCALE=${ORDER_SCALE:-$LAB_SCALE}
ORDER_LIMIT=$(((ITERS > 1000 ? 900 * ITERS / 1000 : 900) * ORDER_SCALE))
IFS=';' read -r -a CONDS <<<"${ORDER_CONDS:-delay 2ms reorder 25%;delay 1ms reorder 10% loss 1% duplicate 1%}"
BIN=$LAB_ROOT/build/verbs/mrc_order_test
mkdir -p "$LAB_ROOT/build/verbs"
gcc -O2 -Wall -Werror -o "$BIN" "$LAB_ROOT/selftests/verbs/ordering.c" -libverbs ||
	lab_fatal "cannot build ordering.c"

T=/sys/kernel/tracing
# rnr-stall: n2 drops its READ responses (BTH opcode 0x07, byte 1 of the
# UDP payload) to metaroce's port while the rule is in
RS_RULE="OUTPUT -p udp --dport 19791 -m u32 --u32 '0>>22&0x3C@8>>16&0xFF=0x07' -j DROP"

# ctr NODE: "name value" lines of mrc0's counters
ctr() {
	lab_run "$1" 'rdma statistic show link mrc0/1' |
		tr ' ' '\n' | awk 'NF { if (k) { print k, $0; k = "" } else if ($0 ~ /^[a-z_]+$/) k = $0 }' | sort
}

# capture_start K: counters now, and every metaroce tracepoint into a
# fresh ring buffer (it keeps the last seconds before a failure)
capture_start() {
	local n
	for n in n1 n2; do
		ctr $n >"$LAB_RUN/order-$1-ctr-before-$n"
		lab_run $n "mountpoint -q $T || mount -t tracefs tracefs $T
echo 0 >$T/tracing_on; echo >$T/trace; echo 8192 >$T/buffer_size_kb
echo 1 >$T/events/metaroce/enable && echo 1 >$T/tracing_on" >/dev/null
	done
}

# capture_freeze K: stop tracing; the server QP's state (rdma res -dd)
capture_freeze() {
	local n
	for n in n1 n2; do
		lab_run $n "echo 0 >$T/tracing_on" >/dev/null
	done
	lab_run n2 "rdma -dd res show qp link mrc0/1 | grep -v 'type GSI'" \
		>"$LAB_RUN/order-$1-qp-n2.txt" 2>&1
}

# capture_stop K FAILED: counters now; if FAILED, the deltas, the server
# QP and the last trace events of both nodes (order-K-* in the run dir)
capture_stop() {
	local n keep=
	[ "$2" = 1 ] && keep="tail -n 3000 $T/trace >/tmp/lab/order-$1-trace-\$MRC_NODE.txt"
	for n in n1 n2; do
		lab_run $n "echo 0 >$T/tracing_on; echo 0 >$T/events/metaroce/enable
${keep:-true}; echo >$T/trace" >/dev/null
		ctr $n >"$LAB_RUN/order-$1-ctr-after-$n"
	done
	[ "$2" = 1 ] || return 0
	echo "# --- n2 (server) RC QP after the failure:"
	sed 's/^/#   /' "$LAB_RUN/order-$1-qp-n2.txt"
	for n in n1 n2; do
		echo "# --- $n mrc0 counters, deltas over [$cond] (non-zero):"
		join "$LAB_RUN/order-$1-ctr-before-$n" "$LAB_RUN/order-$1-ctr-after-$n" |
			awk '$3 != $2 { print "#   " $1, $3 - $2 }'
		echo "# --- $n last trace events (order-$1-trace-$n.txt):"
		tail -n 40 "$LAB_RUN/order-$1-trace-$n.txt" | sed 's/^/#   /'
	done
}

lab_start
# the first iptables call loads nf_tables and xt_u32: seconds under TCG
check "n2: iptables u32 rule for rnr-stall" n2 "iptables -I $RS_RULE && iptables -D $RS_RULE"
check "n1: mrc0 on eth0" lab_add_dev n1 mrc0
check "n2: mrc0 on eth0" lab_add_dev n2 mrc0
k=0
for cond in "${CONDS[@]}"; do
	k=$((k + 1))
	failed=0
	# shellcheck disable=SC2086
	check "netem $cond on both nodes" \
		eval 'lab_netem n1 '"$cond"' && lab_netem n2 '"$cond"
	capture_start $k
	LAB_CMD_TIMEOUT=$ORDER_LIMIT lab_bg n2 server "$BIN" -d mrc0 -g 1 -t 60 -n "$ITERS" \
		-D "iptables -I $RS_RULE" -U "iptables -D $RS_RULE"
	check "n2: server listening on tcp 18519" lab_wait_for n2 'ss -ltn | grep -q :18519' 60
	LAB_CMD_TIMEOUT=$ORDER_LIMIT check "[$cond] client: every operation saw every earlier one ($ITERS each)" \
		n1 "$BIN" -d mrc0 -g 1 -t 60 -n "$ITERS" 192.0.2.2 || failed=1
	[ $failed = 1 ] && capture_freeze $k
	check "[$cond] server: receives in order, bytes in place" lab_wait server || failed=1
	capture_stop $k $failed
	lab_netem_clear
done
# Mixed MTUs: n1's eth0 carries 9000 (IB MTU 4096), n2's 1500 (1024); the
# QP's path MTU is 1024, and n1 must segment to it, not to its own IP MTU.
check "n1: eth0 mtu 9000, n2: eth0 mtu 1500" \
	eval 'n1 ip link set eth0 mtu 9000 && n2 ip link set eth0 mtu 1500'
LAB_CMD_TIMEOUT=$ORDER_LIMIT lab_bg n2 server "$BIN" -d mrc0 -g 1 -t 60 -n 100
check "n2: server listening on tcp 18519" lab_wait_for n2 'ss -ltn | grep -q :18519' 60
LAB_CMD_TIMEOUT=$ORDER_LIMIT lab_bg n1 client "$BIN" -d mrc0 -g 1 -t 60 -n 100 192.0.2.2
check "n1: its RC QP segments to the path MTU (seg_size 1024)" \
	lab_wait_for n1 "rdma -dd res show qp link mrc0/1 | tr -s ' \n' ' ' | grep -Eq 'type RC .*seg_size 1024 '" 60
check "[mixed MTU] client: every operation saw every earlier one" lab_wait client
check "[mixed MTU] server: receives in order, bytes in place" lab_wait server
check "both: eth0 mtu 1500" eval 'n1 ip link set eth0 mtu 1500 && n2 ip link set eth0 mtu 1500'
check "n1: rdma link delete mrc0" n1 rdma link delete mrc0
check "n2: rdma link delete mrc0" n2 rdma link delete mrc0
lab_summary
