#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: part of short.sh
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

# detour FAMILY GID1 GID2 DST: pingpong n1 -> n2 on GID indexes GID1/GID2;
# once it carries traffic, route DST through dummy0 until dummy0 sent a
# packet (at most 2 s); check it did and the pingpong passes.
#
# On a busy single-vCPU guest every fork/exec costs seconds (debug kernel:
# `ip route add` alone 7.5-8.3 s, a detour past the give-up bound, stop
# 14), so the detour is one script, started with its ip process before
# the pingpong, that uses bash builtins only from the first data packet to
# the route's removal: ip reads its commands from a FIFO (-batch), the
# counters are read with `read`, and a read with a timeout on a second
# FIFO is the sleep.
detour() {
	local fam=$1 g1=$2 g2=$3 dst=$4 out rc n ms first
	n1 'rm -f /tmp/detour.*; ip link set dev dummy0 alias none' >/dev/null
	LAB_CMD_TIMEOUT=240 lab_bg n1 dt "c=/sys/class/net/dummy0/statistics/tx_packets
e=/sys/class/net/eth0/statistics/tx_packets
mkfifo /tmp/detour.ip /tmp/detour.tick || exit 1
exec 4<>/tmp/detour.tick
ip -force -$fam -batch /tmp/detour.ip >/tmp/detour.out 2>&1 &
exec 3>/tmp/detour.ip
# ip is up once it has carried out a first command
echo 'link set dev dummy0 alias detour' >&3
end=\$((SECONDS + 120))
until read -r x </sys/class/net/dummy0/ifalias && [ \"\$x\" = detour ]; do
	[ \$SECONDS -lt \$end ] || { echo 'ip -batch did not start'; exit 1; }
	read -t 0.01 -u 4 x
done
: >/tmp/detour.ready
# wait until the pingpong carries traffic: 300 packets on eth0
read -r b <\$e
while read -r x <\$e && [ \$x -lt \$((b + 300)) ]; do
	[ \$SECONDS -lt \$end ] || { echo 'no traffic'; exit 1; }
	read -t 0.01 -u 4 x
done
read -r a <\$c
t0=\${EPOCHREALTIME/./}
echo 'route add $dst dev dummy0' >&3
end=\$((t0 + 2000000))
while read -r x <\$c && [ \$x -le \$a ] && [ \${EPOCHREALTIME/./} -lt \$end ]; do
	read -t 0.001 -u 4 x
done
ta=\${EPOCHREALTIME/./}
echo 'route del $dst dev dummy0' >&3
exec 3>&-
wait
t1=\${EPOCHREALTIME/./}
read -r x <\$c
cat /tmp/detour.out
echo \$((x - a)) \$(((t1 - t0) / 1000)) \$(((ta - t0) / 1000))"
	lab_wait_for n1 '[ -e /tmp/detour.ready ]' 150 || { lab_wait dt; return 1; }
	LAB_CMD_TIMEOUT=240 lab_bg n2 pp ibv_rc_pingpong -d mrc0 -g "$g2" -n 1000 -s 4096 -c -e
	lab_wait_for n2 'ss -ltn | grep -q :18515' 30 || return 1
	LAB_CMD_TIMEOUT=240 lab_bg n1 pc ibv_rc_pingpong -d mrc0 -g "$g1" -n 1000 -s 4096 -c -e 192.0.2.2
	out=$(lab_wait dt)
	rc=$?
	echo "$out" | head -n -1
	read -r n ms first <<<"$(echo "$out" | tail -1)"
	echo "detour: rc $rc, dummy0 transmitted ${n:-?} packets in ${ms:-?} ms (first after ${first:-?} ms)"
	out=$(lab_wait pc)
	rc=$?
	echo "$out" | tail -6
	lab_wait pp >/dev/null || { echo "server failed"; return 1; }
	[ "$rc" = 0 ] && [ "${n:-0}" -gt 0 ] 2>/dev/null
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
