#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# datapath: RC SEND/WRITE/READ/atomics between two nodes with unmodified
# libibverbs examples and perftest, clean and under netem loss/reordering.
#
#        n1 (client)                               n2 (server)
#   +---------------------+   metaroce/UDP     +---------------------+
#   | mrc0 -> eth0        |   port 19791,      | mrc0 -> eth0        |
#   | 192.0.2.1/24        |<------------------>| 192.0.2.2/24        |
#   | ibv_rc_pingpong,    |   qemu socket      | servers (listen on  |
#   | ib_*_bw/lat clients |                    | tcp 18515)          |
#   +---------------------+                    +---------------------+
#
# Also: UD (ibv_ud_pingpong), loopback (both QPs on n1), IPv6 GIDs, SRQ,
# RNR (receiver with 2 receive WQEs), and a peer that dies mid-transfer
# (the requester must fail with an error, not hang).
# Knobs: DP_QUICK=1 runs only the clean checks.
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

SRV=192.0.2.2
# perftest: IPv4 GID, small iteration counts (TCG guests are slow)
PT="-d mrc0 -x 1 -F --report_gbits"

# pingpong / udpingpong N SIZE: ibv_rc_pingpong / ibv_ud_pingpong, server
# n2, every payload byte verified (-c)
pingpong() { lab_pingpong ibv_rc_pingpong "$@"; }
udpingpong() { lab_pingpong ibv_ud_pingpong "$@"; }

# perf TOOL ARGS...: run a perftest pair (server n2, client n1), print the
# client's result line, fail if either side fails
perf() {
	local tool=$1
	shift
	# shellcheck disable=SC2086
	lab_perftest $tool $PT "$@" -- $tool $PT "$@" $SRV
}


# loopback: both ends of an RC pingpong on n1
loopback() {
	lab_bg n1 lo ibv_rc_pingpong -d mrc0 -g 1 -n 20 -s 8192 -c
	lab_wait_for n1 'ss -ltn | grep -q :18515' 30 || return 1
	n1 ibv_rc_pingpong -d mrc0 -g 1 -n 20 -s 8192 -c 192.0.2.1
	local rc=$?
	lab_wait lo || return 1
	return $rc
}

# GID index of NODE's fd00:6d72::/64 address
gid6() {
	lab_run "$1" 'cd /sys/class/infiniband/mrc0/ports/1/gids &&
		grep -l ^fd00 * 2>/dev/null | head -1'
}

v6pingpong() {
	local g1 g2
	g1=$(gid6 n1) && g2=$(gid6 n2) || return 1
	lab_bg n2 pp6 ibv_rc_pingpong -d mrc0 -g "$g2" -n 20 -s 4096 -c
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	n1 ibv_rc_pingpong -d mrc0 -g "$g1" -n 20 -s 4096 -c $SRV
	local rc=$?
	lab_wait pp6 || return 1
	return $rc
}

# the server is killed mid-run: the client must end by itself with an
# error (retry exhaustion), well within the command timeout
peer_dies() {
	# shellcheck disable=SC2086
	lab_bg n2 pd ib_write_bw $PT -D 30 -s 4096
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	# shellcheck disable=SC2086
	lab_bg n1 pdc ib_write_bw $PT -D 30 -s 4096 $SRV
	sleep 8
	# shellcheck disable=SC2016
	n2 'kill -9 $(pidof ib_write_bw)'
	lab_wait pd >/dev/null
	LAB_CMD_TIMEOUT=20 lab_wait pdc
	local rc=$?
	echo "client rc=$rc (124 = still running)"
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
}

lab_start

for n in n1 n2; do
	check "$n: metaroce.ko loads, mrc0 on eth0" lab_load_metaroce $n
done

check "pingpong 4 KiB x100 (SEND, data verified)" pingpong 100 4096
check "pingpong 64 KiB x20 (multi-packet SEND)" pingpong 20 65536
check "ib_send_bw 64 KiB" perf ib_send_bw -s 65536 -n 200
check "ib_write_bw 64 KiB" perf ib_write_bw -s 65536 -n 200
check "ib_read_bw 64 KiB" perf ib_read_bw -s 65536 -n 200
check "ib_atomic_bw FETCH_ADD" perf ib_atomic_bw -A FETCH_AND_ADD -n 500
check "ib_atomic_bw CMP_AND_SWAP" perf ib_atomic_bw -A CMP_AND_SWAP -n 500
check "ib_write_lat 4 KiB" perf ib_write_lat -s 4096 -n 200
check "ib_send_lat 2 B" perf ib_send_lat -s 2 -n 200
check "ib_read_lat 2 B" perf ib_read_lat -s 2 -n 200
check "UD: ibv_ud_pingpong 1 KiB x50 (data verified)" udpingpong 50 1024
check "UD: ib_send_bw 1 KiB" perf ib_send_bw -c UD -s 1024 -n 300
check "loopback: pingpong n1 <-> n1 (data verified)" loopback
check "IPv6 GIDs: pingpong (data verified)" v6pingpong
check "SRQ: ib_send_bw 64 KiB" perf ib_send_bw --use-srq -s 65536 -n 200
check "RNR: ib_send_bw, receiver has 2 WQEs" perf ib_send_bw -r 2 -s 4096 -n 300
check "peer dies: requester fails with an error, no hang" peer_dies
check "counters: rdma statistic shows traffic, no integrity drops" \
	n1 'rdma statistic show link mrc0/1 | grep -Eq "tx_packets [1-9]" &&
	    rdma statistic show link mrc0/1 | grep -q "integrity_drops 0 "'

if [ -z "$DP_QUICK" ]; then
	check "netem loss 1% on both nodes" \
		eval 'lab_netem n1 loss 1% && lab_netem n2 loss 1%'
	check "loss 1%: pingpong 64 KiB x20 (data verified)" pingpong 20 65536
	check "loss 1%: ib_write_bw 64 KiB" perf ib_write_bw -s 65536 -n 200
	check "loss 1%: ib_read_bw 64 KiB" perf ib_read_bw -s 65536 -n 200
	check "loss 1%: ib_send_bw 64 KiB" perf ib_send_bw -s 65536 -n 200
	check "loss 1%: ib_atomic_bw FETCH_ADD" \
		perf ib_atomic_bw -A FETCH_AND_ADD -n 500
	check "loss 1%: retransmissions counted (retx_packets > 0)" \
		n1 'rdma statistic show link mrc0/1 | grep -Eq "retx_packets [1-9]"'
	check "netem delay 2ms reorder 10% on both nodes" \
		eval 'lab_netem n1 delay 2ms reorder 10% && lab_netem n2 delay 2ms reorder 10%'
	check "reorder: pingpong 64 KiB x20 (data verified)" pingpong 20 65536
	check "reorder: ib_write_bw 64 KiB" perf ib_write_bw -s 65536 -n 200
	check "reorder: ib_read_bw 64 KiB" perf ib_read_bw -s 65536 -n 200
	check "netem cleared" lab_netem_clear
fi

check "n1: metaroce.ko unloads" n1 'rdma link del mrc0 && rmmod metaroce'
check "n2: metaroce.ko unloads" n2 'rdma link del mrc0 && rmmod metaroce'

lab_summary
