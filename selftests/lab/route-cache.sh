#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# route-cache: a QP's cached per-path routes (xmit.c) follow route changes.
#
#        n1 (client)                               n2 (server)
#   +---------------------+                    +---------------------+
#   | mrc0 -> eth0        |<------------------>| mrc0 -> eth0        |
#   | dummy0 (no peer)    |                    |                     |
#   +---------------------+                    +---------------------+
#
# While an RC pingpong runs (every payload byte verified), n1 adds a host
# route to n2 through dummy0 and deletes it as soon as dummy0 has sent a
# packet (at most 2 s). A transport that kept using a stale route would go
# on sending on eth0: dummy0 must count packets while the route exists,
# and the pingpong must finish (the few lost packets are retransmitted
# over eth0 once the route is gone; a detour of a fixed 0.3 s could
# exhaust the IB retry count, 7 RTOs from 1 ms, and fail the QP).
# IPv4 routes are cached (dst_cache=1, the default); the same over IPv6
# (looked up per packet) and with dst_cache=0 (control).
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

# gid6 NODE: GID index of NODE's fd00:6d72::/64 address
gid6() {
	lab_run "$1" 'cd /sys/class/infiniband/mrc0/ports/1/gids &&
		grep -l ^fd00 * 2>/dev/null | head -1'
}

TXDATA_AWK="awk '{ for (i = 1; i < NF; i++) if (\$i == \"tx_data_packets\") print \$(i + 1) }'"
# txdata: n1's metaroce tx_data_packets counter
txdata() {
	n1 "rdma statistic show link mrc0/1 | $TXDATA_AWK"
}

# detour FAMILY GID1 GID2 DST: pingpong n1 -> n2 on GID indexes GID1/GID2;
# mid-run, route DST through dummy0 until dummy0 sent a packet; check it
# did and the pingpong passes
detour() {
	local fam=$1 g1=$2 g2=$3 dst=$4 out rc n base
	base=$(txdata)
	LAB_CMD_TIMEOUT=120 lab_bg n2 pp ibv_rc_pingpong -d mrc0 -g "$g2" -n 1000 -s 4096 -c
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	LAB_CMD_TIMEOUT=120 lab_bg n1 pc ibv_rc_pingpong -d mrc0 -g "$g1" -n 1000 -s 4096 -c 192.0.2.2
	# wait until the QP carries traffic, then detour
	lab_wait_for n1 "[ \$(rdma statistic show link mrc0/1 | $TXDATA_AWK) -gt $((base + 500)) ]" 60 || return 1
	n=$(n1 "c=/sys/class/net/dummy0/statistics/tx_packets
a=\$(cat \$c)
ip -$fam route add $dst dev dummy0 || exit 1
end=\$((SECONDS + 2))
while [ \$(cat \$c) -le \$a ] && [ \$SECONDS -lt \$end ]; do sleep 0.001; done
ip -$fam route del $dst dev dummy0
echo \$((\$(cat \$c) - a))")
	echo "dummy0 transmitted $n packets during the detour"
	out=$(lab_wait pc)
	rc=$?
	echo "$out" | tail -6
	lab_wait pp >/dev/null || { echo "server failed"; return 1; }
	[ "$rc" = 0 ] && [ "${n:-0}" -gt 0 ]
}

lab_start
check "n1: metaroce" lab_load_metaroce n1
check "n2: metaroce" lab_load_metaroce n2
check "n1: dummy0 up" n1 'ip link add dummy0 type dummy && ip link set dummy0 up'
n1 'echo 1 >/sys/module/metaroce/parameters/dst_cache' >/dev/null
check "IPv4: route change followed by the cached path routes" detour 4 1 1 192.0.2.2/32
check "IPv6: route change followed" \
	eval 'a=$(gid6 n1) && b=$(gid6 n2) && detour 6 "$a" "$b" fd00:6d72::2/128'
n1 'echo 0 >/sys/module/metaroce/parameters/dst_cache' >/dev/null
check "IPv4, dst_cache=0: route change followed" detour 4 1 1 192.0.2.2/32
n1 'echo 1 >/sys/module/metaroce/parameters/dst_cache' >/dev/null
lab_summary
