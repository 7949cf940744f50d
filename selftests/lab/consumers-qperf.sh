#!/bin/bash
# Consumers: qperf (Debian's, unmodified) over mrc0 and, beside it, the
# stock rxe (rxe0), clean and under netem loss 1% on both nodes' eth0:
#
#   n1  qperf 192.0.2.2 -i DEV:1 TEST  --->  n2  qperf (server)
#   TEST: rc_bw rc_lat rc_rdma_write_bw rc_rdma_read_bw ud_bw ud_lat
#
# qperf carries no payload check; its figures go to RUN/figures.txt and are
# printed at the end. QPERF_TIME (default 3 s) per test.
# lab: long
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

QPERF_TIME=${QPERF_TIME:-3}
TESTS="rc_bw rc_lat rc_rdma_write_bw rc_rdma_read_bw ud_bw ud_lat"
lab_start
FIG=$LAB_RUN/figures.txt

# qp_run DEV NET TEST: one qperf test; its result lines into the figures
qp_run() {
	local out rc
	out=$(LAB_CMD_TIMEOUT=120 n1 "timeout 90 qperf 192.0.2.2 -i $1:1 -t $QPERF_TIME $3")
	rc=$?
	echo "$out"
	printf '%-5s %-5s %-16s %s\n' "$1" "$2" "$3" \
		"$(grep -E '(bw|latency|msg_rate) +=' <<<"$out" | sed 's/^ *//' | tr -s ' ' | paste -sd ';')" >>"$FIG"
	[ $rc -eq 0 ] && grep -qE '(bw|latency) += [0-9.]+' <<<"$out"
}

for dev in mrc0 rxe0; do
	check "n1: $dev added" lab_add_dev n1 $dev
	check "n2: $dev added" lab_add_dev n2 $dev
done
lab_bg n2 qperfd qperf
check "n2: qperf server listening" lab_wait_for n2 'ss -ltn | grep -q :19765' 30
for net in clean loss1; do
	if [ $net = loss1 ]; then
		lab_netem n1 loss 1% >/dev/null
		lab_netem n2 loss 1% >/dev/null
	fi
	for dev in mrc0 rxe0; do
		for t in $TESTS; do
			check "$dev $net: qperf $t" qp_run $dev $net $t
		done
	done
	lab_netem_clear
done
n2 'pkill -x qperf; true' >/dev/null
lab_wait qperfd >/dev/null
echo "# qperf figures (dev net test results):"
sed 's/^/#   /' "$FIG"
lab_summary
