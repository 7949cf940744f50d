#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# impair: the transport under netem impairments, judged by its counters.
#
#        n1 (client, sender)                        n2 (server)
#   +--------------------------+   metaroce/UDP  +----------------------+
#   | mrc0 -> eth0 [netem]     |<--------------->| mrc0 -> eth0 [netem] |
#   | ibv_rc_pingpong -c,      |  qemu stream    | servers              |
#   | ib_{write,read,send}_bw, |                 |                      |
#   | mrc_verbs_test           |                 |                      |
#   +--------------------------+                 +----------------------+
#
# netem runs on the eth0 egress of both nodes. Under each condition -- loss
# 1%, loss 5%, bursty loss (gemodel), delay 2ms reorder 10%, duplicate 1%,
# corrupt 0.5% -- a data-verifying RC pingpong (64 KiB messages, -c),
# ib_write_bw / ib_read_bw / ib_send_bw with a fixed -n and the project's
# verbs program (every RC opcode and size with every byte checked, the
# remote access errors; not UD, which may lose datagrams) must complete.
# Then the device counters (rdma statistic show link mrc0/1, before/after)
# must show:
#   loss 1%:    retransmissions <= 1.2 x packets netem dropped on the
#               sender (n1 qdisc drops; an ib_write_bw-only window, where
#               n1 sends data and n2 the ACKs)
#   reorder:    retransmissions < 1% of data packets sent (reordering is
#               not loss)
#   corrupt:    integrity_drops > 0 (ICRC), and the data still verified
#   duplicate:  duplicates > 0 and nothing placed twice (data verified)
# and a blackholed path (iptables DROP of one source port on n1,
# mid-transfer, scripts/bench/blackhole.py) completes without an error
# completion with path_replaced > 0. IMPAIR_QUICK=1: loss 1%, reorder and
# corrupt only.
# lab: long (see scripts/test.sh)
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

SRV=192.0.2.2
PT="-d mrc0 -x 1 -F"
BH=$LAB_ROOT/scripts/bench/blackhole.py

# ctr NODE: "name value" lines of mrc0's counters
ctr() {
	lab_run "$1" 'rdma statistic show link mrc0/1' |
		tr ' ' '\n' | awk 'NF { if (k) { print k, $0; k = "" } else if ($0 ~ /^[a-z_]+$/) k = $0 }'
}

# snap TAG: save both nodes' counters and n1's netem drops
snap() {
	ctr n1 >"$LAB_RUN/ctr-$1-n1"
	ctr n2 >"$LAB_RUN/ctr-$1-n2"
	lab_run n1 'tc -s qdisc show dev eth0' |
		awk '/dropped/ { sub(",", "", $7); print $7; exit }' \
		>"$LAB_RUN/drops-$1-n1"
	[ -s "$LAB_RUN/drops-$1-n1" ] || echo 0 >"$LAB_RUN/drops-$1-n1"
}

# d TAG1 TAG2 NODE NAME: counter NAME increase on NODE between snapshots
d() {
	local a b
	a=$(awk -v k="$4" '$1 == k { print $2 }' "$LAB_RUN/ctr-$1-$3")
	b=$(awk -v k="$4" '$1 == k { print $2 }' "$LAB_RUN/ctr-$2-$3")
	echo $((${b:-0} - ${a:-0}))
}

drops() {	# TAG1 TAG2: netem drops on n1 between snapshots
	echo $(($(cat "$LAB_RUN/drops-$2-n1") - $(cat "$LAB_RUN/drops-$1-n1")))
}

netem() {	# ARGS: on both nodes (the counters restart at 0)
	lab_netem n1 "$@" && lab_netem n2 "$@"
}

pingpong() { lab_pingpong ibv_rc_pingpong "$@"; }	# N SIZE, payload verified

perf() {	# TOOL ARGS: perftest pair, server n2, client n1
	local tool=$1
	shift
	# shellcheck disable=SC2086
	lab_perftest $tool $PT "$@" -- $tool $PT "$@" $SRV
}

# the project's verbs program (selftests/lab/verbs.sh): every RC opcode and
# size, every byte and immediate, the remote access errors (UD is left to
# datapath.sh: its datagrams may be lost by definition)
verbs_prog() {
	local rc
	# -U: no UD cases, UD datagrams are allowed to be lost
	LAB_CMD_TIMEOUT=900 lab_bg n2 vsrv "$VBIN" -d mrc0 -g 1 -t 60 -U
	lab_wait_for n2 'ss -ltn | grep -q :18517' 60 || return 1
	LAB_CMD_TIMEOUT=900 n1 "$VBIN" -d mrc0 -g 1 -t 60 -U $SRV >"$LAB_RUN/verbs.out" 2>&1
	rc=$?
	grep -E '^FAIL' "$LAB_RUN/verbs.out"
	tail -n 1 "$LAB_RUN/verbs.out"
	lab_wait vsrv | tail -n 1 || return 1
	return $rc
}

workload() {	# NAME [send]: the data-verifying set under the current netem
	check "$1: pingpong 64 KiB x10 (data verified)" pingpong 10 65536
	check "$1: ib_write_bw 64 KiB -n 100" perf ib_write_bw -s 65536 -n 100
	check "$1: ib_read_bw 64 KiB -n 50" perf ib_read_bw -s 65536 -n 50
	[ -z "$2" ] ||
		check "$1: ib_send_bw 64 KiB -n 50" perf ib_send_bw -s 65536 -n 50
	check "$1: mrc_verbs_test, all cases (every byte, access errors)" verbs_prog
}

le() {	# A B: A <= B, printed
	echo "$1 <= $2"
	[ "$1" -le "$2" ]
}

lt() {
	echo "$1 < $2"
	[ "$1" -lt "$2" ]
}

# blackhole: drop n1's busiest source port mid ib_write_bw; the run must
# finish cleanly and the transport must re-path
blackhole() {
	local rc drop end
	# shellcheck disable=SC2086
	lab_bg n2 bh ib_write_bw $PT -s 65536 -D 15
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	lab_bg n1 bhp python3 "$BH" /tmp/bh.ready --delay 2
	lab_wait_for n1 '[ -e /tmp/bh.ready ]' 30 || return 1
	# shellcheck disable=SC2086
	n1 ib_write_bw $PT -s 65536 -D 15 $SRV
	rc=$?
	end=$(n1 date +%s.%N)
	drop=$(lab_wait bhp | awk '/^@drop_at/ { print $2 }')
	n1 'iptables -F OUTPUT; tc qdisc del dev eth0 clsact 2>/dev/null; true'
	lab_wait bh >/dev/null || return 1
	echo "rule installed at $drop, run ended at $end"
	if [ -z "$drop" ] ||
	   ! awk -v d="$drop" -v e="$end" 'BEGIN { exit !(d < e) }'; then
		echo "the drop rule came too late"
		return 1
	fi
	return $rc
}

VBIN=$(lab_verbs_bin) || lab_fatal "cannot build mrc_verbs_test.c"

lab_start
for n in n1 n2; do
	check "$n: metaroce.ko loads, mrc0 on eth0" lab_load_metaroce $n
done
# the first iptables call loads nf_tables: seconds under TCG, not mid-run
n1 'iptables -I OUTPUT -p udp --dport 9 -j DROP && iptables -D OUTPUT 1' >/dev/null
check "counters exported (rdma statistic)" \
	eval 'ctr n1 | grep -q "^retx_fast " && ctr n1 | grep -q "^integrity_drops "'

# --- loss 1%: the retransmission budget, on an ib_write_bw window
check "netem loss 1%" netem loss 1%
snap l1a
check "loss 1%: ib_write_bw 64 KiB -n 300" perf ib_write_bw -s 65536 -n 300
snap l1b
check "loss 1%: retransmitted <= 1.2 x dropped by netem (n1)" \
	le "$(d l1a l1b n1 retx_packets)" $(($(drops l1a l1b) * 12 / 10))
check "loss 1%: netem dropped something (the check means something)" \
	lt 0 "$(drops l1a l1b)"
workload "loss 1%" send

# --- reordering is not loss
check "netem delay 2ms reorder 10%" netem delay 2ms reorder 10%
snap r1
workload "reorder"
snap r2
check "reorder: out_of_order > 0 (reordering happened)" \
	lt 0 "$(d r1 r2 n2 out_of_order)"
check "reorder: retransmitted (n1) < 1% of data packets sent (n1)" \
	lt $(($(d r1 r2 n1 retx_packets) * 100)) "$(d r1 r2 n1 tx_data_packets)"
check "reorder: retransmitted (n2) < 1% of data packets sent (n2)" \
	lt $(($(d r1 r2 n2 retx_packets) * 100)) "$(d r1 r2 n2 tx_data_packets)"

# --- corruption is caught by the ICRC
check "netem corrupt 0.5%" netem corrupt 0.5%
snap c1
workload "corrupt" send
snap c2
check "corrupt: integrity_drops > 0" \
	lt 0 $(($(d c1 c2 n1 integrity_drops) + $(d c1 c2 n2 integrity_drops)))

if [ -z "$IMPAIR_QUICK" ]; then
	check "netem loss 5%" netem loss 5%
	workload "loss 5%"
	check "netem loss gemodel 1% 10% 70% 0.1%" \
		netem loss gemodel 1% 10% 70% 0.1%
	workload "gemodel"
	check "netem duplicate 1%" netem duplicate 1%
	snap u1
	workload "duplicate"
	snap u2
	check "duplicate: duplicates > 0" \
		lt 0 $(($(d u1 u2 n1 duplicates) + $(d u1 u2 n2 duplicates)))
fi

check "netem cleared" lab_netem_clear
snap b1
check "blackhole: ib_write_bw completes, no error completion" blackhole
snap b2
check "blackhole: path_replaced > 0 (n1)" lt 0 "$(d b1 b2 n1 path_replaced)"
# shellcheck disable=SC2016
check "no retry-exceeded anywhere" \
	eval '[ "$(d l1a b2 n1 retry_exceeded)" = 0 ] && [ "$(d l1a b2 n2 retry_exceeded)" = 0 ]'
lab_log "counters n1: $(tr '\n' ' ' <"$LAB_RUN/ctr-b2-n1")"
lab_log "counters n2: $(tr '\n' ' ' <"$LAB_RUN/ctr-b2-n2")"

check "n1: metaroce.ko unloads" n1 'rdma link del mrc0 && rmmod metaroce'
check "n2: metaroce.ko unloads" n2 'rdma link del mrc0 && rmmod metaroce'
lab_summary
