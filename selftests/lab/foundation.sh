#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# foundation: metaroce.ko loads, registers mrc0 on eth0, follows the netdev
# (state, MTU), refuses bad input, survives add/delete cycles and netns
# teardown, and unloads with a clean kernel log on both nodes.
#
#              n1                                         n2
#   +-----------------------------+            +-----------------------+
#   | mrc0 -> eth0 192.0.2.1      |   qemu     | mrc0 -> eth0 192.0.2.2|
#   |         fd00:6d72::1        |<---------->|         fd00:6d72::2  |
#   | dummy0 (bad-input checks)   |   socket   +-----------------------+
#   | vc1 ==veth== vc1p [netns c1]|
#   |              mrcns -> vc1p  |
#   |              198.51.100.2   |
#   +-----------------------------+
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

PROVIDER=$LAB_ROOT/build/provider/libmetaroce-rdmav34.so
SYSPORT=/sys/class/infiniband/mrc0/ports/1

if [ ! -f "$LAB_MODULE" ]; then
	echo "FAIL  metaroce.ko built ($LAB_MODULE missing: make KVER=$LAB_KVER)"
	echo "0 passed, 1 failed"
	exit 1
fi

# ::ffff:A.B.C.D as the sysfs gid file prints it
v4gid() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$1" "$2" "$3" "$4"
}
# port_state NODE STATE: sysfs port state becomes STATE (ACTIVE/DOWN) within 10 s
port_state() {
	lab_wait_for "$1" "grep -qw $2 $SYSPORT/state" 10
}
# active_mtu NODE BYTES: ibv_devinfo reports active_mtu BYTES within 10 s
active_mtu() {
	lab_wait_for "$1" "ibv_devinfo -d mrc0 | grep -Eq 'active_mtu:[[:space:]]+$2 '" 10
}
links() {	# NODE: number of metaroce/rdma links
	lab_run "$1" 'rdma link show | grep -c "^link "'
}

lab_start

for n in n1 n2; do
	check "$n: metaroce.ko loads, rdma link add mrc0 netdev eth0" lab_load_metaroce $n
done
for n in n1 n2; do
	check "$n: rdma link show lists mrc0 on eth0" \
		lab_run $n 'rdma link show | grep -E "^link mrc0/1 .*netdev eth0"'
done
check "provider built (${PROVIDER#"$LAB_ROOT"/})" test -f "$PROVIDER"
for n in n1 n2; do
	ip=192.0.2.${n#n}
	check "$n: ibv_devices lists mrc0" lab_run $n 'ibv_devices | grep -w mrc0'
	lab_run $n ibv_devinfo -v -d mrc0 >"$LAB_RUN/$n-devinfo.txt" 2>&1
	check "$n: ibv_devinfo: state PORT_ACTIVE" \
		grep -Eq 'state:[[:space:]]+PORT_ACTIVE' "$LAB_RUN/$n-devinfo.txt"
	check "$n: ibv_devinfo: link_layer Ethernet" \
		grep -Eq 'link_layer:[[:space:]]+Ethernet' "$LAB_RUN/$n-devinfo.txt"
	check "$n: ibv_devinfo: vendor_id 0x4d5243" \
		grep -Eq 'vendor_id:[[:space:]]+0x4d5243' "$LAB_RUN/$n-devinfo.txt"
	check "$n: gids/1 is ::ffff:$ip" \
		lab_run $n "grep -x $(v4gid $ip) $SYSPORT/gids/1"
done

# The port follows the netdev.
check "n1: eth0 down -> port DOWN" \
	eval 'n1 ip link set eth0 down && port_state n1 DOWN'
check "n1: eth0 up -> port ACTIVE" \
	eval 'n1 ip link set eth0 up && port_state n1 ACTIVE'
check "n1: eth0 mtu 9000 -> active_mtu 4096" \
	eval 'n1 ip link set eth0 mtu 9000 && active_mtu n1 4096'
check "n1: eth0 mtu 2200 -> active_mtu 2048" \
	eval 'n1 ip link set eth0 mtu 2200 && active_mtu n1 2048'
check "n1: eth0 mtu 1500 -> active_mtu 1024" \
	eval 'n1 ip link set eth0 mtu 1500 && active_mtu n1 1024'
check "n1: ping n2 after the link changes" n1 busybox ping -c 1 -W 10 192.0.2.2

# Bad input is refused and leaves nothing behind.
check "n1: dummy0 created" n1 ip link add dummy0 type dummy
check "n1: netdev nosuchdev refused" ! \
	n1 rdma link add bad0 type metaroce netdev nosuchdev
check "n1: netdev lo refused" ! n1 rdma link add bad0 type metaroce netdev lo
check "n1: duplicate name mrc0 refused" ! \
	n1 rdma link add mrc0 type metaroce netdev dummy0
check "n1: second device on eth0 refused" ! \
	n1 rdma link add mrc1 type metaroce netdev eth0
check "n1: only mrc0 left after refusals" eval '[ "$(links n1)" = 1 ]'
check "n1: a device on dummy0 works" \
	eval 'n1 rdma link add mrcd type metaroce netdev dummy0 && n1 rdma link delete mrcd'
check "n1: dummy0 deleted" n1 ip link del dummy0

# Add/delete cycles, on both nodes at once.
cycles='set -e
rdma link delete mrc0
for i in $(seq 20); do
	rdma link add mrc0 type metaroce netdev eth0
	rdma link delete mrc0
done
rdma link add mrc0 type metaroce netdev eth0'
lab_bg n2 cycles "$cycles"
check "n1: 20 cycles of rdma link add/delete" n1 "$cycles"
check "n2: 20 cycles of rdma link add/delete" lab_wait cycles
for n in n1 n2; do
	check "$n: mrc0 ACTIVE after the cycles" port_state $n ACTIVE
done

# A device on a veth inside a fresh network namespace.
check "n1: netns c1 with veth vc1/vc1p" n1 'set -e
ip netns add c1
ip link add vc1 type veth peer name vc1p
ip link set vc1p netns c1
ip link set vc1 up
ip addr add 198.51.100.1/24 dev vc1
ip -n c1 link set lo up
ip -n c1 link set vc1p up
ip -n c1 addr add 198.51.100.2/24 dev vc1p'
check "n1: rdma link add mrcns in netns c1" \
	n1 ip netns exec c1 rdma link add mrcns type metaroce netdev vc1p
check "n1: c1 sees mrcns on vc1p" \
	n1 'ip netns exec c1 rdma link show | grep -E "^link mrcns/1 .*netdev vc1p"'
check "n1: mrcns gid is ::ffff:198.51.100.2" lab_wait_for n1 \
	"grep -rqx $(v4gid 198.51.100.2) /sys/class/infiniband/mrcns/ports/1/gids" 10
check "n1: mrcns port ACTIVE" n1 \
	'grep -qw ACTIVE /sys/class/infiniband/mrcns/ports/1/state'
n1 rdma system show | sed 's/^/# n1: /'
check "n1: rdma link delete mrcns in c1" n1 ip netns exec c1 rdma link delete mrcns
check "n1: mrcns re-added in c1" \
	n1 ip netns exec c1 rdma link add mrcns type metaroce netdev vc1p
check "n1: ip netns del c1 removes mrcns" eval 'n1 ip netns del c1 &&
	lab_wait_for n1 "! rdma link show | grep -q mrcns" 20'
check "n1: mrc0 still ACTIVE after netns teardown" port_state n1 ACTIVE
check "n1: vc1 gone with the netns" lab_wait_for n1 '! ip link show vc1' 20

# Teardown.
for n in n1 n2; do
	check "$n: rdma link delete mrc0" lab_run $n rdma link delete mrc0
	check "$n: rmmod metaroce" lab_run $n rmmod metaroce
	check "$n: metaroce gone" ! lab_run $n 'grep -w metaroce /proc/modules'
done

lab_summary
