#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: part of short.sh
# localq: a QP keeps at most tx_queue_pkts packets in the local stack, the
# qdisc and the NIC's ring (xmit.c; design.rst, "Local queue limit"); the
# rest of its window waits in the QP.
#
#        n1 (8 QPs sending)                          n2 (receiving)
#   +--------------------------------+           +---------------------+
#   | mrc0 -> eth0                   |---------->| mrc0 -> eth0        |
#   |   qdisc pfifo_fast (1000 pkts) |           |                     |
#   |   (later tbf 100kbit, 60 s)    |           |                     |
#   +--------------------------------+           +---------------------+
#
# The 8 QPs of `ib_write_bw -q 8` may have 8 x MRC_WND = 2048 packets in
# flight. Without the limit they overflowed n1's own 1000-packet FIFO
# (stop 43, metaroce of 3a310d7: 887-2745 retransmissions a run, up to
# 2556 drops counted by the qdisc; in one run of six a QP failed with
# IBV_WC_RETRY_EXC_ERR, "Failed status 12") and, under the default fq_codel, were marked CE by it
# (5400-7600 ECN echoes a run); with it at most 8 x 64 wait there: no drop.
# Then 8 verbs programs at once (8 RC QPs: a big WRITE, READ and SEND
# each, every byte verified). Last, a teardown while a slow qdisc still
# holds packets of the QPs: the sender is killed, its QPs destroyed and
# the link deleted with packets queued; the module unload waits until the
# qdisc has freed the last one (their destructor is module code): until
# the tbf is replaced. On the debug kernel (LAB_KVER *-debug) the waits
# grow by LAB_SCALE and the verbs programs move 4 MiB each.
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

SRV=192.0.2.2
PT="-d mrc0 -x 1 -F -s 65536"
BIN=$(lab_verbs_bin) || lab_fatal "cannot build mrc_verbs_test.c"

# qstat NODE KEY: a counter of eth0's root qdisc (dropped, backlog bytes)
qstat() {
	lab_run "$1" "tc -s qdisc show dev eth0" |
		awk -v k="$2" '{ for (i = 1; i < NF; i++)
			if ($i == k) { v = $(i + 1); gsub(/[^0-9]/, "", v); print v; exit } }'
}

# q8 SECS [MAXRETX]: ib_write_bw -q 8 n1 -> n2; prints the counters of
# the run and fails if n1's qdisc dropped a packet, the QPs retransmitted
# more than MAXRETX packets or sent fewer than 1000 (perftest's own
# figure is printed, not checked: its clock calibration fails on a
# starved vCPU and it prints 0.00)
q8() {
	local d0 d1 e0 e1 r0 r1 t0 t1 out
	d0=$(qstat n1 dropped) e0=$(lab_counter n1 ecn_echoed) r0=$(lab_counter n1 retx_packets)
	t0=$(lab_counter n1 tx_data_packets)
	# shellcheck disable=SC2086
	out=$(lab_perftest ib_write_bw $PT -D "$1" -q 8 -- \
		ib_write_bw $PT -D "$1" -q 8 "$SRV") || return 1
	out=$(awk '$1 == 65536 { print $4 }' <<<"$out")
	d1=$(qstat n1 dropped) e1=$(lab_counter n1 ecn_echoed) r1=$(lab_counter n1 retx_packets)
	t1=$(lab_counter n1 tx_data_packets)
	case "$d0$d1$e0$e1$r0$r1$t0$t1" in
	"" | *[!0-9]*) echo "counters unreadable: '$d0' '$d1' '$e0' '$e1' '$r0' '$r1' '$t0' '$t1'"; return 1 ;;
	esac
	echo "MiB/s $out (perftest), data packets $((t1 - t0)), qdisc drops $((d1 - d0)), ECN echoes $((e1 - e0)), retransmissions $((r1 - r0))"
	[ "$((d1 - d0))" = 0 ] && [ "$((r1 - r0))" -le "${2:-1000000}" ] &&
		[ "$((t1 - t0))" -ge 1000 ]
}

# verbs8 SIZE: 8 pairs of mrc_verbs_test -B SIZE at once (ports 18520-7);
# completion waits of 30 s x LAB_SCALE
verbs8() {
	local i rc=0 o=(-d mrc0 -g 1 -B "$1" -t $((30 * LAB_SCALE)))
	for i in 0 1 2 3 4 5 6 7; do
		LAB_CMD_TIMEOUT=$((600 * LAB_SCALE)) lab_bg n2 "vs$i" "$BIN" "${o[@]}" -p $((18520 + i))
	done
	lab_wait_for n2 '[ $(ss -ltn | grep -c ":1852[0-7] ") = 8 ]' $((60 * LAB_SCALE)) || rc=1
	for i in 0 1 2 3 4 5 6 7; do
		LAB_CMD_TIMEOUT=$((600 * LAB_SCALE)) lab_bg n1 "vc$i" "$BIN" "${o[@]}" -p $((18520 + i)) "$SRV"
	done
	for i in 0 1 2 3 4 5 6 7; do
		lab_wait "vc$i" | tail -1 | sed "s/^/client $i: /"
		[ "${PIPESTATUS[0]}" = 0 ] || rc=1
		lab_wait "vs$i" >/dev/null || rc=1
	done
	return $rc
}

# held: the 8 QPs' packets wait in n1's tbf (backlog > 0)
held() {
	local b
	b=$(qstat n1 backlog)
	echo "backlog ${b}b"
	[ -n "$b" ] && [ "$b" -gt 0 ]
}

lab_start
check "n1: metaroce" lab_load_metaroce n1
check "n2: metaroce" lab_load_metaroce n2
check "n1: eth0 qdisc pfifo_fast" n1 tc qdisc replace dev eth0 root pfifo_fast
check "8 QPs (ib_write_bw -q 8, 6 s) never overflow n1's 1000-packet FIFO (no drop, <= 64 retransmissions)" q8 6 64
check "n1: eth0 qdisc fq_codel (the default)" n1 tc qdisc replace dev eth0 root fq_codel
check "8 QPs under fq_codel: moved, no drop" q8 6
# 16 MiB each, 4 MiB on the debug kernel (KASAN + lockdep: ~2 MiB/s)
check "8 RC QPs at once (mrc_verbs_test -B $((16 / LAB_SCALE))M x 8), every byte verified" \
	verbs8 $((16 / LAB_SCALE))M

# teardown with packets of the QPs still in a qdisc: a tbf at 100 kbit
# with a minute of queue holds all of them (8 x 64 packets); replacing it
# frees them
check "n1: sch_tbf" n1 modprobe sch_tbf
# shellcheck disable=SC2086
LAB_CMD_TIMEOUT=$((120 * LAB_SCALE)) lab_bg n2 tsrv ib_write_bw $PT -D 60 -q 8
check "n2: ib_write_bw server" lab_wait_for n2 'ss -ltn | grep -q :18515' $((30 * LAB_SCALE))
# shellcheck disable=SC2086
LAB_CMD_TIMEOUT=$((120 * LAB_SCALE)) lab_bg n1 tcli ib_write_bw $PT -D 60 -q 8 "$SRV"
check "n1: the 8 QPs send" lab_wait_for n1 \
	'[ $(rdma statistic show link mrc0/1 | grep -o "tx_data_packets [0-9]*" | cut -d" " -f2) -gt 2000 ]' $((60 * LAB_SCALE))
check "n1: eth0 qdisc tbf 100kbit, 60 s of queue" \
	n1 tc qdisc replace dev eth0 root tbf rate 100kbit burst 16kb latency 60s
sleep 1
check "n1: packets of the QPs wait in the tbf" held
check "n1: sender killed, its QPs destroyed, mrc0 deleted" \
	n1 'pkill -9 ib_write_bw; while pgrep ib_write_bw; do sleep 0.2; done; rdma link delete mrc0'
check "n1: packets of the destroyed QPs still queued" held
LAB_CMD_TIMEOUT=$((120 * LAB_SCALE)) lab_bg n1 rmm rmmod metaroce
sleep 2
check "n1: rmmod metaroce waits while the tbf holds their packets" lab_bg_running rmm
check "n1: the tbf replaced by fq_codel (its packets freed)" \
	n1 tc qdisc replace dev eth0 root fq_codel
check "n1: rmmod metaroce then returns" lab_wait rmm
check "n1: metaroce unloaded" n1 '! grep -q "^metaroce " /proc/modules'
lab_wait tcli >/dev/null
n2 'pkill -9 ib_write_bw' >/dev/null
lab_wait tsrv >/dev/null
lab_summary
