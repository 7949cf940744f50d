#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rxe-smoke: proves the lab harness with the stock rdma_rxe (no metaroce code).
# Long only: in CI, bench-smoke.sh runs perftest over rxe0 beside mrc0
# (rxe's numbers are checked there), which proves the same harness.
# lab: long
#
#        n1 (client)                              n2 (server)
#   +--------------------+                  +--------------------+
#   | rxe0 -> eth0       |  RoCEv2/UDP 4791 | rxe0 -> eth0       |
#   | 192.0.2.1/24       |<---------------->| 192.0.2.2/24       |
#   | ibv_rc_pingpong    |   qemu socket    | ibv_rc_pingpong    |
#   |   -g 1 192.0.2.2   |                  |   -g 1 (listens    |
#   +--------------------+                  |   on tcp 18515)    |
#                                           +--------------------+
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

lab_start

check "n1 and n2 ping each other (IPv4)" n1 busybox ping -c 2 -W 5 192.0.2.2
check "n2 reaches n1 over IPv6 ULA" n2 busybox ping6 -c 2 -W 5 fd00:6d72::1
for n in n1 n2; do
	check "$n: rdma link add rxe0 type rxe netdev eth0" \
		lab_run $n rdma link add rxe0 type rxe netdev eth0
	check "$n: rxe0 listed by ibv_devices" lab_run $n 'ibv_devices | grep -w rxe0'
	check "$n: rxe0 port ACTIVE" \
		lab_run $n 'ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE'
	check "$n: GID 1 is ::ffff:192.0.2.${n#n}" lab_run $n \
		"grep -qx '0000:0000:0000:0000:0000:ffff:c000:020${n#n}' /sys/class/infiniband/rxe0/ports/1/gids/1"
done

lab_bg n2 server ibv_rc_pingpong -d rxe0 -g 1 -n 20
check "n2: pingpong server listening" lab_wait_for n2 'ss -ltn | grep -q :18515' 60
check "n1: ibv_rc_pingpong -g 1 -n 20 client" \
	n1 ibv_rc_pingpong -d rxe0 -g 1 -n 20 192.0.2.2
check "n2: ibv_rc_pingpong server finished" lab_wait server
check "n1: rxe0 deleted" n1 rdma link delete rxe0
check "n2: rxe0 deleted" n2 rdma link delete rxe0
check "n1: rdma_rxe unloads" n1 modprobe -r rdma_rxe

lab_summary
