#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fairness: two RC flows share an ECN-marking bottleneck; their bandwidths
# must be fair (Jain's index >= 0.9) and the receiver must see CE marks.
#
#        n1 (2 x ib_write_bw client)                  n2 (2 servers)
#   +-----------------------------------+         +-------------------+
#   | mrc0 -> eth0 egress:              |         | mrc0 -> eth0      |
#   |   htb 1: rate $FAIR_RATE          |-------->| ib_write_bw -p    |
#   |    `- 1:1 $FAIR_QDISC ecn         | qemu    |   18515 and 18516 |
#   | flow A: -p 18515, flow B: -p 18516|         |                   |
#   +-----------------------------------+         +-------------------+
#
# TCG guests move ~10-20 MB/s on an idle host, much less on a busy one, so
# the shaper rate defaults to half of what one unshaped flow gets (measured
# first), which makes the shaper the bottleneck; its queue marks CE (ECN)
# instead of dropping, metaroce data packets must be sent ECT(0) for that
# (checked with tcpdump first).
# Fairness is a measurement, not a unit test: on failure the numbers are
# printed. Knobs: FAIR_RATE (auto; e.g. 40mbit), FAIR_SECS (25), FAIR_QDISC
# ("fq_codel ecn"; "codel ecn" gives a single FIFO queue where only the
# senders' congestion control can share the link), FAIR_JAIN (0.9).
# lab: long (see scripts/test.sh)
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RATE=${FAIR_RATE:-auto}
SECS=${FAIR_SECS:-25}
QDISC=${FAIR_QDISC:-fq_codel ecn}
JMIN=${FAIR_JAIN:-0.9}
SRV=192.0.2.2
PT="-d mrc0 -x 1 -F -s 65536"

mkdir -p "$ROOT/build/fairness"
if [ -z "${LAB_MODULE_FIXED:-}" ]; then
	cp "$LAB_MODULE" "$ROOT/build/fairness/metaroce.ko" ||
		lab_fatal "no $LAB_MODULE"
	LAB_MODULE=$ROOT/build/fairness/metaroce.ko
fi

# ECN field of metaroce's data packets n1 -> n2 (tcpdump -v shows the TOS)
ect0() {
	lab_bg n1 tdv 'timeout 40 tcpdump -c 40 -n -v -i eth0 udp dst port 19791 and dst host '$SRV' >/tmp/lab/tos.txt 2>/dev/null'
	sleep 2
	lab_bg n2 ppe ibv_rc_pingpong -d mrc0 -g 1 -n 30 -s 4096
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	n1 ibv_rc_pingpong -d mrc0 -g 1 -n 30 -s 4096 $SRV >/dev/null
	lab_wait ppe >/dev/null
	lab_wait tdv
	# data packets carry a payload: their UDP length is large
	echo "TOS of the data packets (UDP length > 1000):"
	grep -B1 -E 'UDP, length [0-9]{4}' "$LAB_RUN/tos.txt" | grep -o 'tos 0x[0-9a-f]*[^,]*,[^,]*' | sort | uniq -c
	grep -B1 -E 'UDP, length [0-9]{4}' "$LAB_RUN/tos.txt" | grep -q 'ECT(0)'
}

shaper() {
	# shellcheck disable=SC2086
	n1 "tc qdisc del dev eth0 root 2>/dev/null
tc qdisc add dev eth0 root handle 1: htb default 1 &&
tc class add dev eth0 parent 1: classid 1:1 htb rate $RATE ceil $RATE &&
tc qdisc add dev eth0 parent 1:1 handle 10: $QDISC && tc -s qdisc show dev eth0"
}

stats() {	# NODE's counters as "name value" lines
	lab_run "$1" 'rdma statistic show link mrc0/1' |
		tr ' ' '\n' | awk 'NR > 2 && prev != "" && $0 ~ /^[0-9]+$/ { print prev, $0 } { prev = $0 }'
}

# one flow, no shaper: is the shaper really the bottleneck?
baseline() {
	local a
	# shellcheck disable=SC2086
	lab_bg n2 s0 ib_write_bw $PT -D 10
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	# shellcheck disable=SC2086
	LAB_CMD_TIMEOUT=120 n1 ib_write_bw $PT -D 10 $SRV >"$LAB_RUN/flow-0.txt" 2>&1
	lab_wait s0 >/dev/null
	a=$(bw 0)
	[ -n "$a" ] || return 1
	if [ "$RATE" = auto ]; then
		# half of what one flow gets alone (MB/s -> mbit/s), >= 2mbit,
		# so that the shaper, not the CPU, is the bottleneck
		RATE=$(awk -v a="$a" 'BEGIN { r = int(a * 8 / 2); if (r < 2) r = 2; print r "mbit" }')
	fi
	echo "one unshaped flow: $a MB/s; shaper rate $RATE" |
		tee "$LAB_RUN/baseline.txt"
}

flows() {
	local p rc=0
	for p in 18515 18516; do
		# shellcheck disable=SC2086
		lab_bg n2 "s$p" ib_write_bw $PT -p $p -D "$SECS"
	done
	lab_wait_for n2 'ss -ltn | grep -q :18515 && ss -ltn | grep -q :18516' 30 || return 1
	for p in 18515 18516; do
		# shellcheck disable=SC2086
		lab_bg n1 "c$p" ib_write_bw $PT -p $p -D "$SECS" $SRV
	done
	for p in 18515 18516; do
		LAB_CMD_TIMEOUT=$((SECS + 120)) lab_wait "c$p" >"$LAB_RUN/flow-$p.txt" 2>&1 || rc=1
		cat "$LAB_RUN/flow-$p.txt"
		lab_wait "s$p" >/dev/null || rc=1
	done
	return $rc
}

bw() {	# FLOW: average MB/s of a perftest client output
	awk '/^ *65536 /{ print $4 }' "$LAB_RUN/flow-$1.txt" | tail -1
}

jain() {
	local a b j
	a=$(bw 18515)
	b=$(bw 18516)
	[ -n "$a" ] && [ -n "$b" ] || { echo "no bandwidth figures"; return 1; }
	j=$(awk -v a="$a" -v b="$b" 'BEGIN { s = a + b; q = a * a + b * b;
		printf("%.3f", (q > 0) ? s * s / (2 * q) : 0) }')
	echo "flow A $a MB/s, flow B $b MB/s, sum $(awk -v a="$a" -v b="$b" 'BEGIN{print a+b}') MB/s, Jain $j (min $JMIN)" |
		tee "$LAB_RUN/fairness.txt"
	awk -v j="$j" -v m="$JMIN" 'BEGIN { exit !(j >= m) }'
}

lab_start
for n in n1 n2; do
	check "$n: metaroce.ko loads, mrc0 on eth0" lab_load_metaroce $n
done
check "n1: metaroce data packets are sent ECT(0)" ect0
check "one unshaped flow (reference)" baseline
[ "$RATE" = auto ] && RATE=40mbit	# no reference figure
check "n1: bottleneck: htb $RATE + $QDISC on eth0" shaper
stats n2 >"$LAB_RUN/stats.before"
stats n1 >"$LAB_RUN/n1-stats.before"
check "2 ib_write_bw flows n1 -> n2 for ${SECS}s" flows
stats n2 >"$LAB_RUN/stats.after"
stats n1 >"$LAB_RUN/n1-stats.after"
check "Jain's fairness index >= $JMIN" jain
check "n1: the qdisc marked CE (tc -s: ecn_mark > 0)" \
	n1 'tc -s qdisc show dev eth0 | tee /dev/stderr | grep -Eo "ecn_mark [0-9]+" | grep -vq "ecn_mark 0$"'
b=$(awk '$1 == "ecn_marked" { print $2 }' "$LAB_RUN/stats.before")
a=$(awk '$1 == "ecn_marked" { print $2 }' "$LAB_RUN/stats.after")
if [ -n "$a" ] && [ -n "$b" ]; then
	check "n2: counter ecn_marked rose ($b -> $a)" test "$a" -gt "$b"
else
	echo "skip  n2: counter ecn_marked rose (no such counter in this build)"
fi
# the sender's view (informational): marks echoed back, retransmissions
for f in ecn_echoed retx_packets tx_data_packets; do
	b=$(awk -v n=$f '$1 == n { print $2 }' "$LAB_RUN/n1-stats.before")
	a=$(awk -v n=$f '$1 == n { print $2 }' "$LAB_RUN/n1-stats.after")
	[ -n "$a" ] && echo "# n1 $f: $b -> $a"
done
check "n1: shaper removed" n1 'tc qdisc del dev eth0 root'
check "n1: metaroce.ko unloads" n1 'rdma link del mrc0 && rmmod metaroce'
check "n2: metaroce.ko unloads" n2 'rdma link del mrc0 && rmmod metaroce'
[ -f "$LAB_RUN/baseline.txt" ] && echo "# $(cat "$LAB_RUN/baseline.txt")"
[ -f "$LAB_RUN/fairness.txt" ] && echo "# $(cat "$LAB_RUN/fairness.txt")"
lab_summary
