#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab: part of short.sh
# verbs: every RC opcode (SEND[_WITH_IMM], RDMA_WRITE[_WITH_IMM],
# RDMA_READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD) and UD SEND between
# the two nodes, every payload byte and completion field checked, plus the
# access/bounds/PD/alignment error cases (build/verbs/mrc_verbs_test).
#
#        n1 (client)                               n2 (server)
#   +----------------------+                  +----------------------+
#   | mrc0 -> eth0         |  MetaRoCE/UDP    | mrc0 -> eth0         |
#   | 192.0.2.1/24         |<---------------->| 192.0.2.2/24         |
#   | mrc_verbs_test       |  RC pair + UD    | mrc_verbs_test       |
#   |   -d mrc0 -g 1       |  TCP 18517 (OOB: |   -d mrc0 -g 1       |
#   |   192.0.2.2          |  QPN/PSN/GID/key)|   (listens, verifies)|
#   +----------------------+                  +----------------------+
#
# VERBS_DEV=rxe0 runs the same program over the stock rdma_rxe instead
# (reference run: no metaroce code involved). VERBS_TIMEOUT (s, default 30)
# bounds every completion wait. VERBS_BIN runs a prebuilt binary (under the
# repo: the guests see the host's / but not its /tmp) instead of building
# build/verbs/mrc_verbs_test. LAB_MODULE may point at another metaroce.ko.
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

DEV=${VERBS_DEV:-mrc0}
TMO=${VERBS_TIMEOUT:-30}
# rxe (6.1) deviates from IB in two error statuses: -R accepts those.
OPTS=(-d "$DEV" -g 1 -t "$TMO")
[ "$DEV" = mrc0 ] || OPTS+=(-R)
BIN=$(lab_verbs_bin) || lab_fatal "cannot build mrc_verbs_test.c"

lab_start
check "n1: $DEV on eth0" lab_add_dev n1 "$DEV"
check "n2: $DEV on eth0" lab_add_dev n2 "$DEV"
check "n1 reaches n2 (IPv4)" n1 busybox ping -c 1 -W 5 192.0.2.2
LAB_CMD_TIMEOUT=900 lab_bg n2 server "$BIN" "${OPTS[@]}"
check "n2: server listening on tcp 18517" lab_wait_for n2 'ss -ltn | grep -q :18517' 60
LAB_CMD_TIMEOUT=900 check "n1: client: all cases pass" n1 "$BIN" "${OPTS[@]}" 192.0.2.2
check "n2: server: all verifications pass" lab_wait server
check "n1: rdma link delete $DEV" n1 rdma link delete "$DEV"
check "n2: rdma link delete $DEV" n2 rdma link delete "$DEV"
lab_summary
