#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: long
# bigmsg: messages of 1 GiB (issue 3): one RDMA_WRITE, one RDMA_READ and
# one SEND of BIGMSG_SIZE (default 1G) bytes each between the two nodes,
# every byte and the guards around it verified on both ends
# (build/verbs/mrc_verbs_test -B SIZE, the verbs.sh program in its
# big-message mode).
#
#        n1 (client)                               n2 (server)
#   +----------------------+                  +----------------------+
#   | mrc0 -> eth0         |  MetaRoCE/UDP    | mrc0 -> eth0         |
#   | 192.0.2.1/24         |<---------------->| 192.0.2.2/24         |
#   | mrc_verbs_test -B 1G |  RC pair         | mrc_verbs_test -B 1G |
#   |   192.0.2.2          |  TCP 18517 (OOB) |   (listens, verifies)|
#   +----------------------+                  +----------------------+
#
# Each node holds one registered buffer of SIZE + 512 KiB, so the guests
# get LAB_MEM=3G. At the TCG lab's ~15 MB/s one 1 GiB message takes over
# a minute (more under a concurrent load): BIGMSG_TIMEOUT (s, default
# 1200) bounds each completion wait. VERBS_DEV=rxe0 runs it over the
# stock rdma_rxe for reference.
LAB_MEM=${LAB_MEM:-3G}
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

DEV=${VERBS_DEV:-mrc0}
SIZE=${BIGMSG_SIZE:-1G}
TMO=${BIGMSG_TIMEOUT:-1200}
OPTS=(-d "$DEV" -g 1 -t "$TMO" -B "$SIZE")
[ "$DEV" = mrc0 ] || OPTS+=(-R)
BIN=$(lab_verbs_bin) || lab_fatal "cannot build mrc_verbs_test.c"

lab_start
check "n1: $DEV on eth0" lab_add_dev n1 "$DEV"
check "n2: $DEV on eth0" lab_add_dev n2 "$DEV"
# room for the SIZE buffer, pinned, plus the kernel's share
# shellcheck disable=SC2016 # expanded in the guest
mem_ok() {
	lab_run "$1" 'grep MemTotal /proc/meminfo &&
		[ "$(awk "/MemTotal/ {print \$2}" /proc/meminfo)" -gt 2400000 ]'
}
check "n1: guest has > 2.4 GB (LAB_MEM=$LAB_MEM)" mem_ok n1
check "n2: guest has > 2.4 GB (LAB_MEM=$LAB_MEM)" mem_ok n2
check "n1 reaches n2 (IPv4)" n1 busybox ping -c 1 -W 5 192.0.2.2
LAB_CMD_TIMEOUT=$((4 * TMO + 900)) lab_bg n2 server "$BIN" "${OPTS[@]}"
check "n2: server listening on tcp 18517" lab_wait_for n2 'ss -ltn | grep -q :18517' 60
LAB_CMD_TIMEOUT=$((4 * TMO + 900)) check \
	"n1: client: RDMA_WRITE, RDMA_READ, SEND of $SIZE, every byte verified" \
	n1 "$BIN" "${OPTS[@]}" 192.0.2.2
check "n2: server: all verifications pass" lab_wait server
check "n1: rdma link delete $DEV" n1 rdma link delete "$DEV"
check "n2: rdma link delete $DEV" n2 rdma link delete "$DEV"
lab_summary
