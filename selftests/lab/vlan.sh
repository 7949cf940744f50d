#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: part of short.sh
# vlan: RDMA over a VLAN interface stacked on mrc0's netdev. ib_core puts
# the addresses of eth0's upper (VLAN) devices into mrc0's GID table, so
# a GID of eth0.100 is a valid source; its packets leave through eth0.100
# and come back on it (skb->dev is the VLAN device, not eth0), and
# metaroce must take them as mrc0's, as rdma_rxe does.
#
#        n1                                         n2
#   +------------------------+                 +------------------------+
#   | mrc0 -> eth0           |   qemu socket   | mrc0 -> eth0           |
#   | eth0.100 (VLAN id 100) |<--------------->| eth0.100 (VLAN id 100) |
#   | 198.51.100.1/24        |  802.1Q tagged  | 198.51.100.2/24        |
#   +------------------------+                 +------------------------+
#
# ibv_rc_pingpong between the two VLAN GIDs (every byte checked, -c), and
# rping over rdma_cm to the VLAN address (the CM's MADs on QP1 tagged too,
# data validated, -V); each must carry its traffic over eth0.100 (its
# packet counters move by at least the messages exchanged). Then n1 to
# itself over its VLAN GID (loopback: the datagrams come in on lo).
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

# vlan_up NODE N: eth0.100 with 198.51.100.N/24
vlan_up() {
	lab_run "$1" "modprobe 8021q && ip link add link eth0 name eth0.100 type vlan id 100 &&
		ip addr add 198.51.100.$2/24 dev eth0.100 && ip link set eth0.100 up"
}

# gidv NODE: GID index of NODE's 198.51.100.0/24 address (::ffff:c633:64xx)
gidv() {
	lab_run "$1" 'cd /sys/class/infiniband/mrc0/ports/1/gids &&
		grep -l "ffff:c633:64" * 2>/dev/null | head -1'
}

# gids_up: both nodes' VLAN GIDs appeared (ib_core adds them from a
# netdev notifier, asynchronously)
gids_up() {
	local g='cd /sys/class/infiniband/mrc0/ports/1/gids && grep -lq ffff:c633:64 * 2>/dev/null'

	lab_wait_for n1 "$g" 20 && lab_wait_for n2 "$g" 20
}

vlan_rx() {
	lab_run "$1" 'cat /sys/class/net/eth0.100/statistics/rx_packets'
}

# over NODE MIN CMD...: CMD on n1, then NODE's eth0.100 received >= MIN
# packets more than before it
over() {
	local min=$1 a b rc
	shift
	a=$(vlan_rx n1)
	"$@"
	rc=$?
	b=$(vlan_rx n1)
	echo "n1 eth0.100 received $((b - a)) packets (at least $min wanted)"
	[ "$rc" = 0 ] && [ $((b - a)) -ge "$min" ]
}

# pingpong NODE N: ibv_rc_pingpong x200 4 KiB (-c: bytes checked), its
# server on NODE, n1 the client to 198.51.100.N, each on its VLAN GID
# (to itself when NODE is n1: loopback, the datagrams come in on lo, and
# the device is the one of the netdev under the VLAN owning the address)
pingpong() {
	local node=$1 g1 g2 port=$((18500 + $2))
	g1=$(gidv n1) && g2=$(gidv "$node") || return 1
	echo "GID indexes: n1 $g1, $node $g2"
	LAB_CMD_TIMEOUT=120 lab_bg "$node" pp ibv_rc_pingpong -d mrc0 -g "$g2" -n 200 -s 4096 -c -p $port
	lab_wait_for "$node" "ss -ltn | grep -q :$port" 30 || { lab_wait pp; return 1; }
	LAB_CMD_TIMEOUT=120 n1 "ibv_rc_pingpong -d mrc0 -g $g1 -n 200 -s 4096 -c -p $port 198.51.100.$2" |
		tail -3
	[ "${PIPESTATUS[0]}" = 0 ] || { lab_run "$node" 'pkill ibv_rc_pingpong'; lab_wait pp; return 1; }
	lab_wait pp | tail -3
	[ "${PIPESTATUS[0]}" = 0 ]
}

rping_vlan() {
	LAB_CMD_TIMEOUT=120 lab_bg n2 rs "rping -s -V -C 50 -a 198.51.100.2"
	lab_wait_for n2 "rdma res show cm_id | grep -q 'LISTEN.*:7174 '" 30 ||
		{ lab_wait rs; return 1; }
	sleep 1
	LAB_CMD_TIMEOUT=120 n1 'rping -c -V -C 50 -a 198.51.100.2' | tail -3
	[ "${PIPESTATUS[0]}" = 0 ] || { n2 'pkill rping'; lab_wait rs; return 1; }
	lab_wait rs | tail -3
	[ "${PIPESTATUS[0]}" = 0 ]
}

lab_start
check "n1: metaroce" lab_load_metaroce n1
check "n2: metaroce" lab_load_metaroce n2
check "n1: eth0.100 198.51.100.1/24" vlan_up n1 1
check "n2: eth0.100 198.51.100.2/24" vlan_up n2 2
check "n1, n2: the VLAN addresses are GIDs of mrc0" gids_up
check "ibv_rc_pingpong x200 4 KiB between the VLAN GIDs, bytes checked, over eth0.100" \
	over 400 pingpong n2 2
check "rping x50 over rdma_cm to the VLAN address, data validated, over eth0.100" \
	over 100 rping_vlan
check "ibv_rc_pingpong x200 4 KiB, n1 to itself over its VLAN GID (loopback), bytes checked" \
	pingpong n1 1
check "n1, n2: eth0.100 removed (its GIDs go)" \
	eval 'n1 "ip link del eth0.100" && n2 "ip link del eth0.100"'
lab_summary
