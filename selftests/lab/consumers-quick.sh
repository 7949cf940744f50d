#!/bin/bash
# Consumers, the CI cut (the full set with rxe beside it and every test is
# lab-long: selftests/lab/consumers-*.sh): on mrc0 only, clean and under
# netem loss 1% on both nodes' eth0,
#   qperf -cm1 rc_bw, rc_lat, rc_rdma_read_bw  (figures printed)
#   rsocket: librspreload.so under a socket file copy n1 -> n2, sha256 checked
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

BIN=$LAB_ROOT/build/consumers/sockcopy
# the copy program: built by consumers-rsocket.sh's source, shared here
if [ ! -x "$BIN" ] || [ "$BIN" -ot "$(dirname "$0")/consumers-rsocket.sh" ]; then
	mkdir -p "${BIN%/*}"
	sed -n '/^gcc .*<<.EOF/,/^EOF$/p' "$(dirname "$0")/consumers-rsocket.sh" | sed '1d;$d' |
		gcc -O2 -Wall -Werror -x c -o "$BIN" - || { echo "0 passed, 1 failed"; exit 1; }
fi
PRE=/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so

lab_start
check "n1: mrc0 added" lab_load_metaroce n1
check "n2: mrc0 added" lab_load_metaroce n2
check "n1: 4 MiB test file" n1 "head -c 4M /dev/urandom >/tmp/rs.in && sha256sum </tmp/rs.in >/tmp/lab/rs.sum"
lab_bg n2 qperfd qperf
check "n2: qperf server listening" lab_wait_for n2 'ss -ltn | grep -q :19765' 30

port=7480
rs_copy() {
	local out rc
	port=$((port + 1))
	lab_bg n2 rsrecv "LD_PRELOAD=$PRE $BIN recv $port /tmp/rs.out"
	lab_wait_for n2 "rdma res show cm_id | grep -q 'LISTEN.*:$port ' && sleep 1" 30 || {
		n2 'pkill -x sockcopy; true' >/dev/null; lab_wait rsrecv; return 1; }
	out=$(LAB_CMD_TIMEOUT=200 n1 "timeout 150 env LD_PRELOAD=$PRE $BIN send 192.0.2.2 $port /tmp/rs.in & p=\$!
		sleep 0.5; ss -tn | grep -q ':$port ' && echo 'TCP connection on :$port'; wait \$p")
	rc=$?
	echo "$out"
	[ $rc -eq 0 ] || n2 'pkill -x sockcopy; true' >/dev/null
	lab_wait rsrecv || rc=1
	grep -q 'TCP connection' <<<"$out" && rc=1
	[ $rc -eq 0 ] && n2 "sha256sum </tmp/rs.out | cmp - /tmp/lab/rs.sum && rm -f /tmp/rs.out"
}

for net in clean loss1; do
	if [ $net = loss1 ]; then
		lab_netem n1 loss 1% >/dev/null
		lab_netem n2 loss 1% >/dev/null
	fi
	for t in rc_bw rc_lat rc_rdma_read_bw; do
		check "mrc0 $net: qperf -cm1 $t" eval "n1 'timeout 60 qperf 192.0.2.2 -cm1 -t 2 $t' | tee /dev/stderr | grep -qE '(bw|latency) += [0-9.]+'"
	done
	check "mrc0 $net: rsocket file copy n1 -> n2, sha256 matches" rs_copy
	lab_netem_clear
done
n2 'pkill -x qperf; true' >/dev/null
lab_wait qperfd >/dev/null
lab_summary
