#!/bin/bash
# Consumers: qperf (Debian's 0.4.11, unmodified) over mrc0 and then over
# the stock rxe (rxe0) instead, clean and under netem loss 1% on both eth0:
#
#   n1  qperf 192.0.2.2 -cm1 TEST  --->  n2  qperf (server)
#   TEST: rc_bw rc_lat rc_rdma_write_bw rc_rdma_read_bw
#
# qperf's own connection setup exchanges LIDs only (no GRH): on RoCE, rxe
# and mrc0 alike, RC needs -cm1 (rdma_cm, which picks the device by IP: one
# device at a time), and ud_bw/ud_lat cannot run at all ("failed to create
# address handle": an AH without GRH). They are still run and their error
# is printed as a note, for both devices. qperf carries no payload check;
# its figures go to RUN/figures.txt and are printed at the end.
# QPERF_TIME (default 3 s) per test.
# lab: long
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

QPERF_TIME=${QPERF_TIME:-3}
lab_start
FIG=$LAB_RUN/figures.txt

# qp_run DEV NET TEST: one qperf test; its result lines into the figures
qp_run() {
	local out rc
	out=$(LAB_CMD_TIMEOUT=120 n1 "timeout 90 qperf 192.0.2.2 -cm1 -t $QPERF_TIME $3")
	rc=$?
	echo "$out"
	printf '%-5s %-5s %-16s %s\n' "$1" "$2" "$3" \
		"$(grep -E '(bw|latency|msg_rate) +=' <<<"$out" | sed 's/^ *//' | tr -s ' ' | paste -sd ';')" >>"$FIG"
	[ $rc -eq 0 ] && lab_qperf_ok <<<"$out"
}

lab_bg n2 qperfd qperf
check "n2: qperf server listening" lab_wait_for n2 'ss -ltn | grep -q :19765' 30
for dev in mrc0 rxe0; do
	check "n1: $dev added" lab_add_dev n1 $dev
	check "n2: $dev added" lab_add_dev n2 $dev
	for net in clean loss1; do
		if [ $net = loss1 ]; then
			lab_netem n1 loss 1% >/dev/null
			lab_netem n2 loss 1% >/dev/null
		fi
		for t in rc_bw rc_lat rc_rdma_write_bw rc_rdma_read_bw; do
			lab_dcheck $dev "$dev $net: qperf -cm1 $t" qp_run $dev $net $t
		done
		for t in ud_bw ud_lat; do
			echo "# note: $dev $net qperf $t: $(n1 "timeout 30 qperf 192.0.2.2 -i $dev:1 -t 1 $t" 2>&1 | tr '\n' ' ')" |
				tee -a "$FIG"
		done
		lab_netem_clear
	done
	check "n1: $dev removed" n1 rdma link del $dev
	check "n2: $dev removed" n2 rdma link del $dev
done
n2 'pkill -x qperf; true' >/dev/null
lab_wait qperfd >/dev/null
echo "# qperf figures (dev net test results):"
sed 's/^/#   /' "$FIG"
lab_summary
