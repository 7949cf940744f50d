#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# qplife: the end of a QP's peer and a QP reused through RESET
# (selftests/verbs/qplife.c), between the two nodes:
#
#        n1 (client)                               n2 (server)
#   +----------------------+                  +----------------------+
#   | mrc0 -> eth0         |  metaroce/UDP    | mrc0 -> eth0         |
#   | 192.0.2.1/24         |<---------------->| 192.0.2.2/24         |
#   | qplife -m vanish     |  TCP 18519 (OOB) | qplife (server)      |
#   | qplife -m reuse      |                  |                      |
#   +----------------------+                  +----------------------+
#
# vanish: a window of WRITEs and SENDs in flight when n1's egress is
# blackholed (netem loss 100%), for three (timeout, retry_cnt) pairs;
# then when n2's device and module are removed under it. Every WR
# completes exactly once, the first error is RETRY_EXC_ERR, and it comes
# within the bound the QP's timeout and retry_cnt define (printed as
# "# vanish ...: bound B s, measured M s").
# reuse: one QP pair through QPLIFE_CYCLES (200) lives of connect from
# RESET with fresh PSNs, traffic with every byte checked, and an end:
# ERR with a window in flight then RESET, RESET right after WRs posted in
# ERR, RESET straight from RTS, RESET racing a NAK that fails the QP.
# dereg: n2 deregisters an MR while n1's READ of it is served (2 MiB of
# 16 landed), while a READ of it waits behind another READ, and before
# the READ is posted; QPLIFE_DEREG_ROUNDS (3) rounds of the three. The
# READ completes REM_ACCESS_ERR within 2 s (+ QL_SLACK) of the request
# to deregister, later WRs are flushed, no byte of the MR lands after its
# deregistration (n2 overwrites it then), n2's QP reports
# IBV_EVENT_QP_ACCESS_ERR and is in ERR (protocol.rst, "READ and atomics"
# and "Fatal NAK").
# Two vCPUs per node, so receive processing and the work run alongside
# the thread that resets.
# QL_SLACK: seconds a give-up may come after its bound (timers firing late
# on a busy emulated host): 0.25 on the stock kernel; 3 on the debug
# kernel, where KASAN under TCG (beside another lab) made the RETRY_EXC of
# the module-removal case come 4.4 s after the peer went, against 2.75:
# there the RTT, hence the first RTO, is several times longer, so the
# retry_cnt + 1 backed-off RTOs alone outlast 2 s + RTO_max.
: "${LAB_SMP:=2}"
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

CYCLES=${QPLIFE_CYCLES:-200}
DEREG_ROUNDS=${QPLIFE_DEREG_ROUNDS:-3}
case $LAB_KVER in
*-debug) QL_SLACK=${QL_SLACK:-3} ;;
*) QL_SLACK=${QL_SLACK:-0.25} ;;
esac
BIN=$LAB_ROOT/build/verbs/qplife
mkdir -p "$LAB_ROOT/build/verbs"
gcc -O2 -Wall -Werror -o "$BIN" "$LAB_ROOT/selftests/verbs/qplife.c" -libverbs ||
	lab_fatal "cannot build qplife.c"

# server NAME: the qplife server on n2, listening
server() {
	LAB_CMD_TIMEOUT=900 lab_bg n2 "$1" "$BIN" -d mrc0 -g 1
	lab_wait_for n2 'ss -ltn | grep -q :18519' 30
}

lab_start
for n in n1 n2; do
	check "$n: metaroce.ko loads, mrc0 on eth0" lab_load_metaroce $n
done

check "vanish: server on n2" server vs
LAB_CMD_TIMEOUT=600 check "vanish: n1 egress blackholed (netem loss 100%) under a window of WRITEs/SENDs" \
	n1 "$BIN" -d mrc0 -g 1 -m vanish -c 14:7,16:3,18:2 -S "$QL_SLACK" \
	-X 'tc qdisc replace dev eth0 root netem loss 100%' \
	-Y 'tc qdisc del dev eth0 root' 192.0.2.2
check "vanish: server ends" lab_wait vs

check "dereg: server on n2" server ds
LAB_CMD_TIMEOUT=600 check "dereg: n2 deregisters the MR a READ of n1 reads, mid-transfer, queued and before (${DEREG_ROUNDS} rounds)" \
	n1 "$BIN" -d mrc0 -g 1 -m dereg -n "$DEREG_ROUNDS" -S "$QL_SLACK" 192.0.2.2
check "dereg: server ends" lab_wait ds

check "reuse: server on n2" server rs
LAB_CMD_TIMEOUT=900 check "reuse: $CYCLES lives of one QP pair through ERR and RESET" \
	n1 "$BIN" -d mrc0 -g 1 -m reuse -n "$CYCLES" 192.0.2.2
check "reuse: server ends" lab_wait rs

# The peer's device and module go away under the window: n2 removes
# them when n1's blackhole command says so.
check "vanish (peer module removed): server on n2" server vm
LAB_CMD_TIMEOUT=120 lab_bg n2 rm 'until [ -e /tmp/lab/qplife-go ]; do sleep 0.05; done
timeout 30 rdma link delete mrc0 && timeout 30 rmmod metaroce; echo "rc=$?"
touch /tmp/lab/qplife-gone'
LAB_CMD_TIMEOUT=300 check "vanish: n2 removes mrc0 and metaroce.ko under a window of WRITEs/SENDs" \
	n1 "$BIN" -d mrc0 -g 1 -m vanish -c 14:7 -S "$QL_SLACK" \
	-X 'touch /tmp/lab/qplife-go; until [ -e /tmp/lab/qplife-gone ]; do sleep 0.05; done' \
	-Y true 192.0.2.2
check "vanish: n2 removed its device and module (within 30 s each)" \
	eval 'lab_wait rm | tee /dev/stderr | grep -qx "rc=0"'
LAB_CMD_TIMEOUT=60 lab_wait vm >/dev/null
check "n2: metaroce.ko loads again" lab_load_metaroce n2

for n in n1 n2; do
	check "$n: rdma link delete mrc0, rmmod metaroce" \
		lab_run $n 'rdma link delete mrc0 && rmmod metaroce'
done
lab_summary
